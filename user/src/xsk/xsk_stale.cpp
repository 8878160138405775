// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Crash recovery of recv: an xdp_xsk left attached by a receiver that died
// without detaching it (SIGKILL, the OOM killer) is recognised by its name
// and by no process holding it, and detached.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <xdp/libxdp.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "xoffload/xsk/prog.hpp"
#include "xoffload/core/owned.hpp"
#include "xoffload/vlan/rx_vlan.hpp"
#include "xoffload/core/notice.hpp"

namespace xoffload::xsk {

namespace {

bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

// The prog_id line of /proc/PID/fdinfo/FD, 0 if none (not a BPF program).
uint32_t fdinfo_prog_id(const std::string &path)
{
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[1024];
	ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
	::close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *p = std::strstr(buf, "prog_id:");
	return p ? static_cast<uint32_t>(std::strtoul(p + 8, nullptr, 10)) : 0;
}

} // namespace

int bpf_prog_holder(uint32_t prog_id)
{
	const int self = static_cast<int>(::getpid());
	DIR *proc = ::opendir("/proc");
	if (!proc)
		return 0;
	int holder = 0;
	while (!holder) {
		dirent *pe = ::readdir(proc);
		if (!pe)
			break;
		if (!all_digits(pe->d_name) || std::atoi(pe->d_name) == self)
			continue;
		const std::string base = std::string("/proc/") + pe->d_name;
		DIR *fds = ::opendir((base + "/fd").c_str());
		if (!fds)
			continue;	// gone meanwhile
		while (dirent *fe = ::readdir(fds)) {
			if (!all_digits(fe->d_name))
				continue;
			char link[64];
			ssize_t n = ::readlinkat(::dirfd(fds), fe->d_name, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = 0;
			if (std::strcmp(link, "anon_inode:bpf-prog"))
				continue;
			if (fdinfo_prog_id(base + "/fdinfo/" + fe->d_name) == prog_id) {
				holder = std::atoi(pe->d_name);
				break;
			}
		}
		::closedir(fds);
	}
	::closedir(proc);
	return holder;
}

Result<std::vector<uint32_t>> reap_stale_xsk(const Netdev &dev)
{
	std::vector<uint32_t> gone;
	const std::string &name = XskProgram::name();
	for (;;) {
		xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(dev.ifindex);
		long err = libxdp_get_error(mp);
		if (err == -ENOENT || !mp)
			return gone;
		if (err)
			return errno_error("query xdp on " + dev.name, static_cast<int>(err));
		Owned<xdp_multiprog, xdp_multiprog__close> owner(mp);
		xdp_program *stale = nullptr;
		auto judge = [&](xdp_program *p) {
			if (!stale && XskProgram::is_xsk_name(xdp_program__name(p)) && !bpf_prog_holder(xdp_program__id(p)))
				stale = p;
		};
		if (xdp_multiprog__is_legacy(mp)) {
			if (xdp_program *p = xdp_multiprog__main_prog(mp))
				judge(p);
		} else {
			for (xdp_program *p = xdp_multiprog__next_prog(nullptr, mp); p && !stale;
			     p = xdp_multiprog__next_prog(p, mp))
				judge(p);
		}
		if (!stale)
			return gone;
		uint32_t id = xdp_program__id(stale);
		int e = xdp_program__detach(stale, dev.ifindex, xdp_multiprog__attach_mode(mp), 0);
		owner.reset();
		if (e && e != -ENOENT)
			return errno_error("detach the stale " + name + " (prog id " + std::to_string(id) + ") from " +
						   dev.name,
					   e);
		notice("removed " + name + " (prog id " + std::to_string(id) + ") from " + dev.name +
		       ": its recv is gone (killed) and left it attached");
		gone.push_back(id);
		// and the RX VLAN stripping its --filter-vlan turned off
		if (auto s = rx_vlan_release(dev, "xsk-" + std::to_string(id)); !s)
			return s.error();
		if (gone.size() > 16)
			return gone;	// bounded: a hook never holds more
	}
}

} // namespace xoffload::xsk
