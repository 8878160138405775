// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Run-time probes of the kernel features our decisions depend on (the AF_XDP
// ones live in the xsk module, xsk_probe.cpp), and the running release; each
// probe runs once per process (function-local statics).
#include "xoffload/core/kernel.hpp"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>

#include "internal.hpp"
#include "xoffload/core/fd.hpp"
#include "xoffload/core/result.hpp"

#ifndef TUN_F_USO4
#define TUN_F_USO4 0x20	/* include/uapi/linux/if_tun.h, 6.2 */
#define TUN_F_USO6 0x40
#endif

namespace xoffload {

KernelRelease parse_kernel_release(const std::string &text)
{
	KernelRelease r;
	r.text = text;
	unsigned a = 0, b = 0, c = 0;
	int n = std::sscanf(text.c_str(), "%u.%u.%u", &a, &b, &c);
	if (n >= 2) {
		r.major = a;
		r.minor = b;
		r.patch = n == 3 ? c : 0;
	}
	return r;
}

const KernelRelease &running_kernel()
{
	static const KernelRelease r = [] {
		utsname u{};
		return parse_kernel_release(::uname(&u) ? std::string("unknown") : std::string(u.release));
	}();
	return r;
}

std::string kernel_lacks(const KernelFeature &f)
{
	return std::string(f.name) + " needs Linux " + std::to_string(f.major) + "." + std::to_string(f.minor) +
	       " or later (running " + running_kernel().text + ")";
}

ProbeResult probe_assumed(const KernelFeature &f, const std::string &why)
{
	ProbeResult p;
	p.ok = running_kernel().at_least(f.major, f.minor);
	p.probed = false;
	p.how = why + ": assumed from the release (" + running_kernel().text + (p.ok ? " >= " : " < ") +
		std::to_string(f.major) + "." + std::to_string(f.minor) + ")";
	return p;
}

const ProbeResult &probe_udp_l4_gso()
{
	static const ProbeResult r = [] {
		UniqueFd fd(::open("/dev/net/tun", O_RDWR | O_CLOEXEC));
		if (!fd.valid())
			return probe_assumed(kFeatUdpL4Gso, "/dev/net/tun: " + errno_name(errno));
		ifreq ifr{};
		std::snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "xoprobe%%d");
		ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
		// a non-persistent tap: it goes with the fd
		if (::ioctl(fd.get(), TUNSETIFF, &ifr))
			return probe_assumed(kFeatUdpL4Gso, "TUNSETIFF: " + errno_name(errno));
		ProbeResult p;
		p.probed = true;
		if (!::ioctl(fd.get(), TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_USO4 | TUN_F_USO6)) {
			p.ok = true;
			p.how = "TUNSETOFFLOAD TUN_F_USO4|TUN_F_USO6 accepted";
			return p;
		}
		int e = errno;
		if (e != EINVAL)
			return probe_assumed(kFeatUdpL4Gso, "TUNSETOFFLOAD: " + errno_name(e));
		p.how = "TUNSETOFFLOAD TUN_F_USO4|TUN_F_USO6 refused (EINVAL)";
		return p;
	}();
	return r;
}

const ProbeResult &probe_tcx()
{
	static const ProbeResult r = [] {
		constexpr int kBpfTcxIngress = 46;	// enum bpf_attach_type; Debian 12's UAPI predates it
		LIBBPF_OPTS(bpf_prog_query_opts, q);
		const int err = bpf_prog_query_opts(1, static_cast<bpf_attach_type>(kBpfTcxIngress), &q);
		if (err && err != -EINVAL)
			return probe_assumed(kFeatTcx, "BPF_PROG_QUERY(BPF_TCX_INGRESS, lo): " + errno_name(err));
		ProbeResult p;
		p.probed = true;
		p.ok = !err;
		p.how = p.ok ? "BPF_PROG_QUERY(BPF_TCX_INGRESS, lo) answered"
			     : "BPF_PROG_QUERY(BPF_TCX_INGRESS, lo) answered EINVAL (type unknown)";
		return p;
	}();
	return r;
}

bool kernel_has_xdp_frags()
{
	// the smallest such program, loaded and closed, once per process
	static const bool has = [] {
		static const bpf_insn prog[] = {
			{BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_PASS},
			{BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
		};
		LIBBPF_OPTS(bpf_prog_load_opts, o, .prog_flags = BPF_F_XDP_HAS_FRAGS);
		int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xo_frags_probe", "Dual BSD/GPL", prog, 2, &o);
		if (fd < 0)
			return false;
		::close(fd);
		return true;
	}();
	return has;
}

namespace {
std::mutex g_md_mu;
std::set<int> g_md_refused;
} // namespace

void note_tx_metadata_refused(int ifindex)
{
	std::lock_guard<std::mutex> l(g_md_mu);
	g_md_refused.insert(ifindex);
}

bool tx_metadata_refused(int ifindex)
{
	std::lock_guard<std::mutex> l(g_md_mu);
	return g_md_refused.count(ifindex) != 0;
}

} // namespace xoffload
