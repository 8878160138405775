// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The running kernel's release and the features our decisions depend on,
// probed once per process by asking the kernel (a version number says
// nothing about a backport or a config), each with the release it needs.
//
// Every probe is side-effect free for the system: nothing is left behind,
// no frame is sent. A probe that cannot ask (no /dev/net/tun, no privilege)
// falls back to the release number and says so in ProbeResult::how.
#pragma once

#include <string>

namespace xoffload {

struct KernelRelease {
	unsigned major = 0, minor = 0, patch = 0;
	std::string text;	// uname -r, "6.1.0-57-amd64"
	bool at_least(unsigned maj, unsigned min) const noexcept
	{
		return major > maj || (major == maj && minor >= min);
	}
};

// uname(2) of this process, parsed once.
const KernelRelease &running_kernel();
// "6.1.0-57-amd64" -> 6.1.0; major 0 when the text has no version.
KernelRelease parse_kernel_release(const std::string &text);

// A kernel feature some decision depends on.
struct KernelFeature {
	const char *name;	// "XDP_USE_SG (AF_XDP multi-buffer)"
	unsigned major, minor;	// first release that has it
};
inline constexpr KernelFeature kFeatXdpUseSg{"XDP_USE_SG (AF_XDP multi-buffer)", 6, 6};
inline constexpr KernelFeature kFeatXskTxMetadata{"AF_XDP TX metadata (XDP_UMEM_REG tx_metadata_len)", 6, 8};
inline constexpr KernelFeature kFeatUdpL4Gso{"UDP_L4 GSO through virtio_net_hdr / tun USO (TUN_F_USO4|6)", 6, 2};
inline constexpr KernelFeature kFeatTcx{"TCX (BPF links at tc ingress/egress)", 6, 6};

struct ProbeResult {
	bool ok = false;	// the kernel has the feature
	bool probed = false;	// asked the kernel (false: inferred from the release)
	std::string how;	// what answered, for -v and --json
};

// @f taken as present or not from the running release alone, @why saying
// why it was not asked (ProbeResult::probed false).
ProbeResult probe_assumed(const KernelFeature &f, const std::string &why);

// The two AF_XDP probes are defined by the xsk module (xsk_probe.cpp,
// beside the UAPI mirror of xsk.hpp): callers link xo_xsk.
// bind(2) of a fresh AF_XDP socket with XDP_USE_SG to ifindex 0: kernels
// that know the flag answer ENODEV, older ones EINVAL (net/xdp/xsk.c
// xsk_bind() checks the flags before looking up the device).
const ProbeResult &probe_xdp_use_sg();
// XDP_UMEM_REG of a one-page UMEM with tx_metadata_len on a fresh socket
// (EINVAL before 6.8: the field was padding, the flags unknown).
const ProbeResult &probe_xsk_tx_metadata();
// TUNSETOFFLOAD with TUN_F_USO4|TUN_F_USO6 on a fresh tap (drivers/net/tun.c
// set_offload() refuses unknown bits with EINVAL "so userspace can test for
// new features"); USO and VIRTIO_NET_HDR_GSO_UDP_L4 came in the same release.
const ProbeResult &probe_udp_l4_gso();
// BPF_PROG_QUERY of attach type BPF_TCX_INGRESS on the loopback device;
// kernels without TCX refuse the type with EINVAL (kernel/bpf/syscall.c
// bpf_prog_query()). Any other answer (EPERM unprivileged): from the release.
const ProbeResult &probe_tcx();

// Whether the kernel loads XDP programs with BPF_F_XDP_HAS_FRAGS (5.18+,
// XDP multi-buffer): the smallest such program loaded and closed, once.
bool kernel_has_xdp_frags();

// "XDP_USE_SG (AF_XDP multi-buffer) needs Linux 6.6 or later (running 6.1.0-57-amd64)"
std::string kernel_lacks(const KernelFeature &f);

// Devices that refused a TX-metadata UMEM at bind (virtio_net on 7.x:
// EOPNOTSUPP), remembered for this process so later sockets skip the try.
void note_tx_metadata_refused(int ifindex);
bool tx_metadata_refused(int ifindex);

} // namespace xoffload
