// Run-time probes of the kernel features our decisions depend on, and the
// running release; each probe runs once per process (function-local statics).
#include "xoffload/kernel.hpp"

#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>

#include "xoffload/fd.hpp"
#include "xoffload/xsk.hpp"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif
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

namespace {

std::string err_name(int e)
{
	return std::string(strerrorname_np(e) ? strerrorname_np(e) : "?");
}

ProbeResult from_release(const KernelFeature &f, const std::string &why)
{
	ProbeResult p;
	p.ok = running_kernel().at_least(f.major, f.minor);
	p.probed = false;
	p.how = why + ": assumed from the release (" + running_kernel().text + (p.ok ? " >= " : " < ") +
		std::to_string(f.major) + "." + std::to_string(f.minor) + ")";
	return p;
}

} // namespace

const ProbeResult &probe_xdp_use_sg()
{
	static const ProbeResult r = [] {
		UniqueFd fd(::socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0));
		if (!fd.valid())
			return from_release(kFeatXdpUseSg, "no AF_XDP socket (" + err_name(errno) + ")");
		sockaddr_xdp sxdp{};
		sxdp.sxdp_family = AF_XDP;
		sxdp.sxdp_ifindex = 0;
		sxdp.sxdp_flags = xsk::kXdpUseSg;
		ProbeResult p;
		p.probed = true;
		if (!::bind(fd.get(), reinterpret_cast<const sockaddr *>(&sxdp), sizeof(sxdp))) {
			p.ok = true;	// cannot happen (no device 0); the flag was taken
			p.how = "bind(XDP_USE_SG) accepted";
			return p;
		}
		int e = errno;
		p.ok = e != EINVAL;
		p.how = "bind(XDP_USE_SG, ifindex 0) answered " + err_name(e) +
			(p.ok ? " (flag known)" : " (flag unknown)");
		return p;
	}();
	return r;
}

const ProbeResult &probe_xsk_tx_metadata()
{
	static const ProbeResult r = [] {
		UniqueFd fd(::socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0));
		if (!fd.valid())
			return from_release(kFeatXskTxMetadata, "no AF_XDP socket (" + err_name(errno) + ")");
		const size_t len = 4096;
		void *area = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (area == MAP_FAILED)
			return from_release(kFeatXskTxMetadata, "mmap failed");
		xsk::UmemReg reg{};
		reg.addr = reinterpret_cast<uintptr_t>(area);
		reg.len = len;
		reg.chunk_size = 2048;
		reg.tx_metadata_len = sizeof(xsk::TxMetadata);
		// as Umem::create tries them: 6.11+ wants XDP_UMEM_TX_METADATA_LEN
		// (without it the length is ignored), 6.8-6.10 knows only SW_CSUM;
		// before 6.8 both flags are unknown (EINVAL)
		ProbeResult p;
		p.probed = true;
		int e = 0;
		for (uint32_t flags : {xsk::kXdpUmemTxMetadataLen | xsk::kXdpUmemTxSwCsum, xsk::kXdpUmemTxSwCsum}) {
			reg.flags = flags;
			if (!::setsockopt(fd.get(), SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg))) {
				p.ok = true;
				p.how = std::string("XDP_UMEM_REG with tx_metadata_len accepted") +
					(flags & xsk::kXdpUmemTxMetadataLen ? " (XDP_UMEM_TX_METADATA_LEN)" : "");
				break;
			}
			e = errno;
			if (e != EINVAL)
				break;
		}
		::munmap(area, len);
		if (!p.ok && e != EINVAL)
			return from_release(kFeatXskTxMetadata, "XDP_UMEM_REG failed with " + err_name(e));
		if (!p.ok)
			p.how = "XDP_UMEM_REG with tx_metadata_len refused (EINVAL)";
		return p;
	}();
	return r;
}

const ProbeResult &probe_udp_l4_gso()
{
	static const ProbeResult r = [] {
		UniqueFd fd(::open("/dev/net/tun", O_RDWR | O_CLOEXEC));
		if (!fd.valid())
			return from_release(kFeatUdpL4Gso, "/dev/net/tun: " + err_name(errno));
		ifreq ifr{};
		std::snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "xoprobe%%d");
		ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
		// a non-persistent tap: it goes with the fd
		if (::ioctl(fd.get(), TUNSETIFF, &ifr))
			return from_release(kFeatUdpL4Gso, "TUNSETIFF: " + err_name(errno));
		ProbeResult p;
		p.probed = true;
		if (!::ioctl(fd.get(), TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_USO4 | TUN_F_USO6)) {
			p.ok = true;
			p.how = "TUNSETOFFLOAD TUN_F_USO4|TUN_F_USO6 accepted";
			return p;
		}
		int e = errno;
		if (e != EINVAL)
			return from_release(kFeatUdpL4Gso, "TUNSETOFFLOAD: " + err_name(e));
		p.how = "TUNSETOFFLOAD TUN_F_USO4|TUN_F_USO6 refused (EINVAL)";
		return p;
	}();
	return r;
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
