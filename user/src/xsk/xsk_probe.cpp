// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The kernel probes that need the AF_XDP UAPI of kernels newer than the
// build host's headers (xsk.hpp mirrors it); declared in kernel.hpp.
#include "xoffload/core/kernel.hpp"

#include <linux/if_xdp.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "xoffload/core/fd.hpp"
#include "xoffload/core/result.hpp"
#include "xoffload/xsk/xsk.hpp"
#include "sock_defs.hpp"

namespace xoffload {

const ProbeResult &probe_xdp_use_sg()
{
	static const ProbeResult r = [] {
		UniqueFd fd(::socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0));
		if (!fd.valid())
			return probe_assumed(kFeatXdpUseSg, "no AF_XDP socket (" + errno_name(errno) + ")");
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
		p.how = "bind(XDP_USE_SG, ifindex 0) answered " + errno_name(e) +
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
			return probe_assumed(kFeatXskTxMetadata, "no AF_XDP socket (" + errno_name(errno) + ")");
		const size_t len = 4096;
		void *area = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (area == MAP_FAILED)
			return probe_assumed(kFeatXskTxMetadata, "mmap failed");
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
			return probe_assumed(kFeatXskTxMetadata, "XDP_UMEM_REG failed with " + errno_name(e));
		if (!p.ok)
			p.how = "XDP_UMEM_REG with tx_metadata_len refused (EINVAL)";
		return p;
	}();
	return r;
}

} // namespace xoffload
