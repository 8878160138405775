# Shared by tools/vm-test (sourced, not run): Debian packages of other
# suites through a private apt configuration, Debian's prebuilt kernels
# unpacked with dpkg -x, and the guest userspace variants.
#
# Cache layout (XO_VM_CACHE, default /var/cache/xoffload/vm as root, else
# ${XDG_CACHE_HOME:-~/.cache}/xoffload/vm; never inside the repo):
#   apt/<suite>/            sources.list, lists, state and downloaded .debs of
#                           one suite (bookworm, trixie, sid); the machine's own
#                           apt configuration is never read or changed
#   kernel/<kver>/          a linux-image package unpacked (boot/, lib/modules/)
#                           with depmod run on it; .pkg names the package version
#   userspace/<suite>-<id>/ libc6, libbpf1, libxdp1, xdp-tools, libelf and
#                           compressors of a suite, unpacked into /usr paths:
#                           a lower layer of the guest's root over the host's
#   initrd/<kver>.cpio      the boot initramfs of one kernel
#   runs/<stamp>-<label>/   console log and results of one boot

VM_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [[ -z ${XO_VM_CACHE:-} ]]; then
	if [[ $(id -u) == 0 ]]; then
		XO_VM_CACHE=/var/cache/xoffload/vm
	else
		XO_VM_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/xoffload/vm
	fi
fi
VM_CACHE=$XO_VM_CACHE
VM_MIRROR=${XO_VM_MIRROR:-http://deb.debian.org/debian}
VM_SECURITY=${XO_VM_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

vm_log() { printf 'vm-test: %s\n' "$*" >&2; }

# vm_lock: hold the cache's lock until the calling shell exits (downloads,
# unpacking and initramfs builds of concurrent runs take turns).
vm_lock() {
	mkdir -p "$VM_CACHE"
	exec {VM_LOCK_FD}>"$VM_CACHE/.lock"
	flock -n "$VM_LOCK_FD" || {
		vm_log "waiting for another tools/vm-test to finish preparing $VM_CACHE"
		flock "$VM_LOCK_FD"
	}
}
vm_unlock() { [[ -z ${VM_LOCK_FD:-} ]] || { exec {VM_LOCK_FD}>&-; VM_LOCK_FD=; }; }
vm_die() { vm_log "error: $*"; exit 1; }

# vm_apt SUITE ARGS...: apt-get with this suite's private configuration.
# vm_apt_cache SUITE ARGS...: apt-cache likewise.
vm_apt_opts() {
	local d="$VM_CACHE/apt/$1"
	VM_APT_OPTS=(-o "Dir::Etc::SourceList=$d/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
		-o "Dir::State=$d" -o "Dir::State::Lists=$d/lists" -o "Dir::State::status=$d/status"
		-o "Dir::Cache=$d/cache" -o "Dir::Cache::archives=$d/archives"
		-o APT::Architecture=amd64 -o APT::Architectures=amd64
		-o Acquire::Languages=none -o APT::Sandbox::User=root)
}
vm_apt() { local s=$1; shift; vm_apt_opts "$s"; apt-get -q "${VM_APT_OPTS[@]}" "$@"; }
vm_apt_cache() { local s=$1; shift; vm_apt_opts "$s"; apt-cache "${VM_APT_OPTS[@]}" "$@"; }

# vm_apt_init SUITE: the private configuration, its package lists refreshed
# once a day (XO_VM_OFFLINE=1: use the lists as they are).
vm_apt_init() {
	local s=$1 d="$VM_CACHE/apt/$1"
	mkdir -p "$d/lists/partial" "$d/archives/partial" "$d/cache"
	[[ -f $d/status ]] || : >"$d/status"
	{
		echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $VM_MIRROR $s main"
		if [[ $s != sid ]]; then	# a release's kernels come through -updates and -security
			echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $VM_MIRROR $s-updates main"
			echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $VM_SECURITY $s-security main"
		fi
	} >"$d/sources.list.new"
	cmp -s "$d/sources.list.new" "$d/sources.list" || rm -f "$d/updated"
	mv "$d/sources.list.new" "$d/sources.list"
	if [[ ${XO_VM_OFFLINE:-0} == 1 && -f $d/updated ]]; then
		return 0
	fi
	if [[ ! -f $d/updated || -n $(find "$d/updated" -mmin +1440) ]]; then
		vm_log "apt update ($s, private lists under $d)"
		if ! vm_apt "$s" update -qq >/dev/null 2>"$d/update.log"; then
			# A mirror or proxy that serves a snapshot can hold a Release
			# past its Valid-Until (seen: sid, 28 days): its signature is
			# still checked, only the freshness is waived, and said so.
			grep -q "is expired" "$d/update.log" ||
				{ cat "$d/update.log" >&2; vm_die "apt update of $s failed"; }
			vm_log "note: the mirror's $s Release is past its Valid-Until; using it (signature checked)"
			vm_apt "$s" -o Acquire::Check-Valid-Until=false update -qq >/dev/null 2>"$d/update.log" ||
				{ cat "$d/update.log" >&2; vm_die "apt update of $s failed"; }
		fi
		touch "$d/updated"
	fi
}

# vm_pkg_version SUITE PKG: the candidate version, empty if none.
vm_pkg_version() {
	vm_apt_cache "$1" policy "$2" 2>/dev/null | awk '/Candidate:/ { if ($2 != "(none)") print $2 }'
}

# vm_fetch SUITE PKG...: the .deb of each package (candidate version) into
# the suite's archive directory, once; prints their paths.
vm_fetch() {
	local s=$1 p v f d="$VM_CACHE/apt/$1/archives"
	shift
	for p in "$@"; do
		v=$(vm_pkg_version "$s" "$p")
		[[ -n $v ]] || vm_die "no package $p in $s"
		# apt names a file with an epoch N:V as N%3aV (download) or V (archives)
		f=$(ls "$d/${p}_${v#*:}_"*.deb "$d/${p}_${v/:/%3a}_"*.deb 2>/dev/null | head -1)
		if [[ -z $f ]]; then
			vm_log "downloading $p $v ($s)"
			rm -f "$d/partial/${p}_"*.deb
			(cd "$d/partial" && vm_apt "$s" download -qq "$p=$v" >/dev/null 2>&1) ||
				vm_die "apt-get download $p=$v ($s) failed"
			f=$(ls "$d/partial/${p}_"*.deb | head -1)
			[[ -n $f ]] || vm_die "apt-get download $p=$v ($s) left no file"
			mv "$f" "$d/"
			f="$d/$(basename "$f")"
		fi
		echo "$f"
	done
}

# vm_kernel_pkg SUITE: the linux-image package linux-image-amd64 points at.
vm_kernel_pkg() {
	vm_apt_cache "$1" depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}

# vm_kernel SUITE: unpack the suite's current amd64 kernel (once) and print
# its release string (uname -r), e.g. 6.1.0-47-amd64.
vm_kernel() {
	local s=$1 pkg debs d kver dir stamp
	pkg=$(vm_kernel_pkg "$s")
	[[ -n $pkg ]] || vm_die "no linux-image-amd64 in $s"
	kver=${pkg#linux-image-}
	kver=${kver%-unsigned}
	# Newer suites split the image: linux-image-KVER depends on
	# linux-binary-KVER (vmlinuz), linux-modules-KVER and so on.
	mapfile -t debs < <(vm_fetch "$s" "$pkg" $(vm_apt_cache "$s" depends "$pkg" 2>/dev/null |
		awk -v k="-$kver" '$1 ~ /Depends:$/ && $2 ~ /^linux-/ &&
			substr($2, length($2) - length(k) + 1) == k { print $2 }' | sort -u))
	stamp=$(for d in "${debs[@]}"; do basename "$d"; done)
	dir="$VM_CACHE/kernel/$kver"
	if [[ ! -f $dir/.pkg || $(cat "$dir/.pkg") != "$stamp" ]]; then
		vm_log "unpacking ${debs[*]##*/}"
		rm -rf "${dir:?}"
		mkdir -p "$dir"
		for d in "${debs[@]}"; do dpkg-deb -x "$d" "$dir"; done
		# merged /usr or not, the modules end up under lib/modules
		if [[ -d $dir/usr/lib/modules && ! -d $dir/lib/modules ]]; then
			mkdir -p "$dir/lib"
			mv "$dir/usr/lib/modules" "$dir/lib/modules"
		fi
		# ... and keep vmlinuz and config there too (7.x): one place for both
		mkdir -p "$dir/boot"
		for d in vmlinuz config System.map; do
			[[ -e $dir/boot/$d-$kver || ! -f $dir/lib/modules/$kver/$d ]] ||
				ln -s "../lib/modules/$kver/$d" "$dir/boot/$d-$kver"
		done
		[[ -f $dir/boot/vmlinuz-$kver ]] || vm_die "${debs[*]##*/}: no boot/vmlinuz-$kver"
		depmod -b "$dir" "$kver" || vm_die "depmod of $kver failed"
		echo "$stamp" >"$dir/.pkg"
	fi
	echo "$kver"
}

# vm_userspace SUITE: unpack the suite's BPF userspace (libbpf, libxdp,
# xdp-tools and what they need of a newer libc) into /usr paths, once per
# set of package versions; prints the directory.
VM_USERSPACE_PKGS=(libc6 libbpf1 libxdp1 xdp-tools libelf1t64 libzstd1 zlib1g)
vm_userspace() {
	local s=$1 dir debs stamp d tmp
	mapfile -t debs < <(vm_fetch "$s" "${VM_USERSPACE_PKGS[@]}")
	stamp=$(for d in "${debs[@]}"; do basename "$d"; done)
	# one directory per package set: a guest of another run may be using
	# an older one, which is never changed under it
	dir="$VM_CACHE/userspace/$s-$(sha1sum <<<"$stamp" | cut -c1-12)"
	if [[ ! -f $dir/.pkgs ]]; then
		vm_log "unpacking the $s userspace (${VM_USERSPACE_PKGS[*]})"
		# Every path below is under $tmp: an empty $tmp (mktemp failing, as
		# it did when userspace/ did not exist yet on a fresh cache) made
		# the rm -rf below remove the host's /usr/share, /etc and /var.
		mkdir -p "$VM_CACHE/userspace" || vm_die "cannot create $VM_CACHE/userspace"
		tmp=$(mktemp -d "$dir.tmp.XXXXXX") && [[ -d $tmp && $tmp == "$VM_CACHE"/userspace/* ]] ||
			vm_die "cannot create a scratch directory beside $dir"
		for d in "${debs[@]}"; do dpkg-deb -x "$d" "$tmp" || vm_die "dpkg-deb -x $d failed"; done
		# The host has merged /usr (/lib -> usr/lib, /lib64 -> usr/lib64):
		# the layer must use the same paths or it would hide the host's.
		for d in lib lib64 bin sbin; do
			if [[ -d $tmp/$d && ! -L $tmp/$d ]]; then
				mkdir -p "$tmp/usr/$d"
				cp -a "$tmp/$d/." "$tmp/usr/$d/"
				rm -rf "${tmp:?}/$d"
			fi
		done
		# Only libraries, the dispatcher objects and xdp-tools' programs:
		# documentation, locales and the like stay the host's.
		rm -rf "${tmp:?}/usr/share" "${tmp:?}/etc" "${tmp:?}/var"
		echo "$stamp" >"$tmp/.pkgs"
		chmod 755 "$tmp"
		mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "${tmp:?}"	# another run was first
	fi
	echo "$dir"
}

# The modules the initramfs loads to reach the host: virtio PCI, 9p over
# virtio, overlayfs (whichever of them the kernel has built in is skipped).
VM_INITRD_MODULES=(virtio_pci 9pnet_virtio 9p overlay)

# vm_initrd KVER: build initrd/KVER.cpio (busybox, the modules above with
# their dependencies, decompressed, in load order, and tools/vm/init);
# rebuilt when init or the kernel changes. Prints the path.
vm_initrd() {
	local kver=$1 kdir="$VM_CACHE/kernel/$1" out="$VM_CACHE/initrd/$1.cpio"
	local root m dep f list=() seen=" "
	local mdir="$kdir/lib/modules/$kver"
	if [[ -f $out && $out -nt $VM_REPO/tools/vm/init && $out -nt $kdir/.pkg && $out -nt $VM_REPO/tools/vm/lib.sh ]]; then
		echo "$out"
		return
	fi
	root=$(mktemp -d "$VM_CACHE/initrd/.root.XXXXXX")
	mkdir -p "$root"/{bin,sbin,dev,proc,sys,modules}
	mknod -m 600 "$root/dev/console" c 5 1
	mknod -m 666 "$root/dev/null" c 1 3
	cp /bin/busybox "$root/bin/busybox"
	ln -s busybox "$root/bin/sh"
	# The kernel's request_module runs /sbin/modprobe in the initramfs root,
	# not in the chroot: hand it over, with the guest's kmod and modules.
	printf '#!/bin/sh\nexec /bin/chroot /newroot /sbin/modprobe "$@"\n' >"$root/sbin/modprobe"
	chmod +x "$root/sbin/modprobe"
	cp "$VM_REPO/tools/vm/init" "$root/init"
	# modules.dep lists a module's dependencies, deepest last
	add_mod() {
		local path deps d
		path=$(modinfo -b "$kdir" -k "$kver" -F filename "$1" 2>/dev/null) || return 0
		[[ $path == /* ]] || return 0	# (builtin)
		path=${path#$mdir/}
		[[ $seen == *" $path "* ]] && return 0
		deps=$(awk -v m="$path:" '$1 == m { $1 = ""; print }' "$mdir/modules.dep")
		for d in $deps; do add_mod "$(basename "${d%%.ko*}")"; done
		seen+="$path "
		list+=("$path")
	}
	for m in "${VM_INITRD_MODULES[@]}"; do add_mod "$m"; done
	: >"$root/modules.list"
	for m in "${list[@]}"; do
		f=$(basename "${m%%.ko*}").ko
		case $m in
		*.xz) xz -dc "$mdir/$m" >"$root/modules/$f" ;;
		*.zst) zstd -qdc "$mdir/$m" >"$root/modules/$f" ;;
		*) cp "$mdir/$m" "$root/modules/$f" ;;
		esac
		echo "$f" >>"$root/modules.list"
	done
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "${root:?}"
	echo "$out"
}

# vm_qemu SUITE: the suite's qemu-system-x86 with every library it needs,
# unpacked (once per package set) to run through its own ld.so on this
# machine (Debian 13's qemu 10 emulates igb; Debian 12's 7.2 does not).
# Prints the directory; run it with vm_qemu_cmd.
vm_qemu() {
	local s=$1 dir="$VM_CACHE/qemu/$1" d debs stamp
	vm_apt_opts "$s"
	# the whole closure, as on an empty system (the private status is empty)
	apt-get -q "${VM_APT_OPTS[@]}" -o Debug::NoLocking=1 --no-install-recommends \
		--download-only -y install qemu-system-x86 >"$VM_CACHE/apt/$s/qemu-download.log" 2>&1 ||
		{ tail -5 "$VM_CACHE/apt/$s/qemu-download.log" >&2; return 1; }
	mapfile -t debs < <(apt-get "${VM_APT_OPTS[@]}" -o Debug::NoLocking=1 --no-install-recommends \
		--print-uris -qq -y install qemu-system-x86 2>/dev/null | awk '{ print $2 }' | sort)
	[[ ${#debs[@]} -eq 0 ]] && debs=($(cd "$VM_CACHE/apt/$s/archives" && ls *.deb))
	stamp=$(printf '%s\n' "${debs[@]}")
	if [[ ! -f $dir/.pkgs || $(cat "$dir/.pkgs") != "$stamp" ]]; then
		vm_log "unpacking qemu-system-x86 of $s with ${#debs[@]} packages"
		rm -rf "${dir:?}"
		mkdir -p "$dir"
		for d in "${debs[@]}"; do dpkg-deb -x "$VM_CACHE/apt/$s/archives/$d" "$dir"; done
		echo "$stamp" >"$dir/.pkgs"
	fi
	[[ -x $dir/usr/bin/qemu-system-x86_64 ]] || return 1
	echo "$dir"
}

# vm_qemu_cmd DIR: the argv prefix that runs DIR's qemu through its own
# dynamic loader and libraries, with its own firmware.
vm_qemu_cmd() {
	local d=$1 ld
	ld=$(ls "$d"/usr/lib64/ld-linux-x86-64.so.2 "$d"/lib64/ld-linux-x86-64.so.2 2>/dev/null | head -1)
	echo "env QEMU_MODULE_DIR=$d/usr/lib/x86_64-linux-gnu/qemu $ld --library-path $d/usr/lib/x86_64-linux-gnu:$d/lib/x86_64-linux-gnu $d/usr/bin/qemu-system-x86_64 -L $d/usr/share/qemu -L $d/usr/share/seabios"
}
