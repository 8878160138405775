# Shared by tools/kpatch-check and tools/kpatch-boot (sourced, not run):
# Debian packages, the cached kernel trees, and applying kpatches/series.
#
# Cache layout (XO_KPATCH_CACHE, default /var/cache/xoffload/kpatch as root,
# else ${XDG_CACHE_HOME:-~/.cache}/xoffload/kpatch; never inside the repo):
#   src/<name>/          an extracted linux-source tarball, built in place
#   src/<name>.pristine/ pristine copies of every file the series touches
#   src/<name>.stamp     the package version the tree was extracted from
#   src/<name>.lock      flock: one user of a tree at a time

KP_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KP_PATCHES="$KP_REPO/kpatches"
if [[ -z ${XO_KPATCH_CACHE:-} ]]; then
	if [[ $(id -u) == 0 ]]; then
		XO_KPATCH_CACHE=/var/cache/xoffload/kpatch
	else
		XO_KPATCH_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/xoffload/kpatch
	fi
fi
KP_CACHE=$XO_KPATCH_CACHE
KP_JOBS=${XO_KPATCH_JOBS:-2}
KP_NICE=(nice -n "${XO_KPATCH_NICE:-10}")

kp_log() { printf '%s: %s\n' "${KP_TOOL:-kpatch}" "$*" >&2; }
kp_die() { kp_log "error: $*"; exit 1; }

# kp_need_pkgs PKG...: install whichever Debian packages are missing; exits
# 77 (ctest SKIP_RETURN_CODE) when some are missing and we are not root.
kp_need_pkgs() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing+=("$p")
	done
	((${#missing[@]})) || return 0
	if [[ $(id -u) != 0 ]]; then
		kp_log "SKIP: missing packages and not root to install them: ${missing[*]}"
		exit 77
	fi
	kp_log "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
		{ apt-get -o DPkg::Lock::Timeout=600 update -q >&2 &&
		  apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >&2; } ||
		kp_die "apt-get install ${missing[*]} failed"
}

# The series, in order, without comments or blank lines.
kp_series() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$KP_PATCHES/series"
}

# kp_adds_covered_files_only TREE PATCH: 0 when every file PATCH creates is
# under a directory that an F: line of TREE's MAINTAINERS names exactly
# (e.g. tools/testing/selftests/net/), 1 otherwise or when it creates none.
kp_adds_covered_files_only() {
	local tree=$1 patch=$2 f n=0
	while read -r f; do
		n=$((n + 1))
		grep -qxF "F:	$(dirname "$f")/" "$tree/MAINTAINERS" || return 1
	done < <(awk '/^diff --git / { f = $4; sub(/^b\//, "", f) } /^new file mode / { print f }' "$patch")
	((n > 0))
}

# The files checkpatch.pl must pass: the cover letter (when there is one)
# and every patch of the series, in order.
kp_checkpatch_files() {
	[[ ! -f $KP_PATCHES/0000-cover-letter.patch ]] || echo 0000-cover-letter.patch
	kp_series
}

# kp_checkpatch TREE PATCH [LOG]: TREE's scripts/checkpatch.pl --strict on
# kpatches/PATCH, with no --ignore and nothing filtered out; its whole
# output is appended to LOG. Prints every ERROR, WARNING and CHECK as
# "PATCH:LINE: LEVEL:TYPE: message" (LINE: in the patch file) and returns 0
# only when there is none but these two, printed too, marked "(waived: why)":
#   FILE_PATH_CHANGES ("does MAINTAINERS need updating?") in a patch whose
#     new files all lie in directories an F: line of TREE's MAINTAINERS
#     names (kp_adds_covered_files_only): the answer there is no;
#   UNKNOWN_COMMIT_ID when TREE is not a git repository (the Debian
#     tarballs): checkpatch can look no commit up there. The form of a
#     reference, 'commit <12+ hex> ("subject")' (GIT_COMMIT_ID), is still
#     checked.
# checkpatch's totals line must be there and count exactly the findings
# read, and its exit status must agree, so output that was cut short or
# not understood never passes.
kp_checkpatch() {
	local tree=$1 p=$2 log=${3:-/dev/null} f=$KP_PATCHES/$2 out line why res=
	local rc=0 cprc=0 n=0 total=
	local re_find='^([0-9]+): (ERROR|WARNING|CHECK):([A-Za-z0-9_]+): (.*)$'
	local re_total='^total: ([0-9]+) errors, ([0-9]+) warnings, ([0-9]+) checks, '
	out=$(cd "$tree" && "${KP_NICE[@]}" perl scripts/checkpatch.pl --strict --emacs \
		--show-types --color=never "$f" 2>&1) || cprc=$?
	printf '== %s: scripts/checkpatch.pl --strict %s (exit %d)\n%s\n' \
		"$(basename "$tree")" "$p" "$cprc" "$out" >>"$log"
	while IFS= read -r line; do
		if [[ $line =~ $re_total ]]; then
			total=$((BASH_REMATCH[1] + BASH_REMATCH[2] + BASH_REMATCH[3]))
			continue
		fi
		[[ $line == "$f:"* ]] || continue
		line=${line#"$f:"}
		n=$((n + 1))
		why=
		if ! [[ $line =~ $re_find ]]; then
			line+=" (not understood)"
		elif [[ ${BASH_REMATCH[3]} == FILE_PATH_CHANGES ]] &&
			kp_adds_covered_files_only "$tree" "$f"; then
			why="new files only under directories MAINTAINERS covers"
		elif [[ ${BASH_REMATCH[3]} == UNKNOWN_COMMIT_ID && ! -e $tree/.git ]]; then
			why="no git history in $(basename "$tree") to look the commit up in"
		fi
		if [[ -n $why ]]; then
			line+=" (waived: $why)"
		else
			rc=1
		fi
		res+="$p:$line"$'\n'
	done <<<"$out"
	if [[ -z $total ]] || ((total != n || (cprc == 0) != (n == 0))); then
		res+="$p: checkpatch.pl output not understood (exit $cprc, totals ${total:-missing}, $n findings read)"$'\n'
		rc=1
	fi
	printf '%s' "$res"
	return "$rc"
}

# Files a patch modifies (the b/ side).
kp_patch_files() {
	sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$1"
}

# kp_lock NAME: hold src/NAME.lock until the calling shell exits.
kp_lock() {
	mkdir -p "$KP_CACHE/src"
	exec {KP_LOCK_FD}>"$KP_CACHE/src/$1.lock"
	flock -n "$KP_LOCK_FD" || {
		kp_log "waiting for another user of $KP_CACHE/src/$1"
		flock "$KP_LOCK_FD"
	}
}

# kp_tree_current DIR PKGVER: 0 when DIR already holds the source of PKGVER.
kp_tree_current() {
	[[ -f $1/Makefile && $(cat "$1.stamp" 2>/dev/null) == "$2" ]]
}

# kp_tree_unpack DIR PKGVER TOP: extract the xz kernel tarball on stdin,
# whose top directory is TOP, into DIR, replacing what was there with its
# pristine copies; stamped PKGVER.
kp_tree_unpack() {
	local dir=$1 pkgver=$2 top=$3
	rm -rf "${dir:?}" "${dir:?}.pristine" "${dir:?}.stamp" "${dir:?}.tmp"
	mkdir -p "$dir.tmp"
	"${KP_NICE[@]}" tar -C "$dir.tmp" -xJ
	mv "$dir.tmp/$top" "$dir"
	rmdir "$dir.tmp"
	mkdir -p "$dir.pristine"
	echo "$pkgver" >"$dir.stamp"
}

# kp_tree VER NAME: make sure src/NAME holds linux-source-VER as packaged now
# (re-extracted when the package version changes); prints the tree path.
kp_tree() {
	local ver=$1 name=$2 tarball=/usr/src/linux-source-$1.tar.xz
	local dir="$KP_CACHE/src/$name" pkgver
	pkgver=$(dpkg-query -W -f='${Version}' "linux-source-$ver")
	[[ -f $tarball ]] || kp_die "$tarball missing although linux-source-$ver is installed"
	if ! kp_tree_current "$dir" "$pkgver"; then
		kp_log "extracting linux-source-$ver $pkgver into $dir"
		kp_tree_unpack "$dir" "$pkgver" "linux-source-$ver" <"$tarball"
	fi
	echo "$dir"
}

# kp_restore TREE: put back the pristine copy of every file a series ever
# touched. Untouched files keep their timestamps, so builds stay incremental.
kp_restore() {
	local tree=$1 f
	(cd "$tree.pristine" && find . -path ./.created -prune -o -type f -printf '%P\n') | while read -r f; do
		cmp -s "$tree.pristine/$f" "$tree/$f" ||
			cp --remove-destination "$tree.pristine/$f" "$tree/$f"
	done
	# Files created by a patch have an empty marker in .pristine/.created/.
	if [[ -d $tree.pristine/.created ]]; then
		(cd "$tree.pristine/.created" && find . -type f -printf '%P\n') | while read -r f; do
			rm -f "$tree/$f"
		done
	fi
}

# kp_apply_one TREE PATCH LOG: apply one patch of kpatches/ with patch -p1
# -F0 (no fuzz; line offsets are reported, not refused), stashing pristine
# copies first. 0 if it applied, 1 otherwise; patch(1) output is appended to
# LOG.
kp_apply_one() {
	local tree=$1 p=$2 log=$3 f out
	for f in $(kp_patch_files "$KP_PATCHES/$p"); do
		if [[ -f $tree/$f ]]; then
			[[ -f $tree.pristine/$f ]] || install -D -m 644 "$tree/$f" "$tree.pristine/$f"
		else
			install -D /dev/null "$tree.pristine/.created/$f"
		fi
	done
	if ! out=$(cd "$tree" && patch -p1 -F0 -N --dry-run <"$KP_PATCHES/$p" 2>&1); then
		printf '%s: DOES NOT APPLY\n%s\n' "$p" "$out" >>"$log"
		return 1
	fi
	out=$(cd "$tree" && patch -p1 -F0 -N <"$KP_PATCHES/$p" 2>&1) ||
		{ printf '%s: FAILED\n%s\n' "$p" "$out" >>"$log"; return 1; }
	printf '%s\n%s\n' "$p" "$out" >>"$log"
	! grep -qi fuzz <<<"$out"
}

# kp_apply TREE LOG: apply the whole series to a restored tree, in order;
# stops at the first patch that does not apply cleanly (returns 1).
kp_apply() {
	local tree=$1 log=$2 p
	: >"$log"
	for p in $(kp_series); do
		kp_apply_one "$tree" "$p" "$log" || return 1
	done
}
