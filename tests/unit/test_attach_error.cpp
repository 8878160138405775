// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// xdp_attach_error(): the one translation of an XDP attach failure that the
// loader (offload-tool attach) and the xdp_xsk owner (recv) share, as a
// table of errno, mode and driver (with MTU) to the line the user reads.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "../../user/src/bpf/xdp_attach.hpp"

using namespace xoffload;

namespace {

constexpr const char *kLoaderBusy = "in a way that cannot be shared (detach it first)";
constexpr const char *kRecvBusy = "and cannot share it (another recv, or offload-tool attach; see offload-tool status)";

struct Row {
	const char *name;
	int err;
	XdpMode mode;
	DevKind drv;
	unsigned mtu;
	bool frags, last_entry, refused_for_frags, loaded;
	const char *busy;	// kLoaderBusy or kRecvBusy
	const char *holders;
	const char *want;	// the whole message after "attach P to eth9 (mode): "
	int want_err;		// Error::err (positive)
	bool want_final;
};

const Row kRows[] = {
	{"veth_mtu_over_the_limit", -ERANGE, XdpMode::native, DevKind::veth, 9000, false, true, false, true, kLoaderBusy,
	 "", "veth runs XDP up to MTU 3506 (the peer's MTU; MTU 9000 here): lower the MTU, load a frags-aware "
	 "program or use --mode skb", ERANGE, true},
	{"vmxnet3_61_no_native", -EOPNOTSUPP, XdpMode::native, DevKind::vmxnet3, 1500, true, true, false, true,
	 kLoaderBusy, "", "vmxnet3 has no native XDP on Linux 6.1 (try --mode skb)", EOPNOTSUPP, true},
	{"unknown_driver_eopnotsupp", -EOPNOTSUPP, XdpMode::native, DevKind::unknown, 1500, true, true, false, true,
	 kLoaderBusy, "", "driver has no native XDP (try --mode skb)", EOPNOTSUPP, false},
	{"facts_wait_for_the_last_entry", -EOPNOTSUPP, XdpMode::native, DevKind::vmxnet3, 1500, false, false, false,
	 true, kLoaderBusy, "", "driver has no native XDP (try --mode skb)", EOPNOTSUPP, false},
	{"skb_mode_ignores_facts", -EOPNOTSUPP, XdpMode::skb, DevKind::vmxnet3, 1500, true, true, false, true,
	 kLoaderBusy, "", "Operation not supported", EOPNOTSUPP, false},
	{"busy_named_holder_loader", -EBUSY, XdpMode::native, DevKind::veth, 1500, true, true, false, true, kLoaderBusy,
	 "xdp_xsk (prog id 7) as a single program",
	 "xdp_xsk (prog id 7) as a single program holds the XDP hook in a way that cannot be shared (detach it first)",
	 EBUSY, false},
	{"exists_unnamed_holder_recv", -EEXIST, XdpMode::skb, DevKind::veth, 1500, true, true, false, true, kRecvBusy,
	 "", "another XDP program holds the XDP hook and cannot share it (another recv, or offload-tool attach; see "
	 "offload-tool status)", EEXIST, false},
	{"refused_for_frags", -EINVAL, XdpMode::native, DevKind::unknown, 9000, true, true, true, true, kLoaderBusy, "",
	 "refused (Invalid argument); frames may arrive in several buffers here (a large MTU; on veth the peer's "
	 "counts too) (lower the MTU or use --mode skb)", EINVAL, false},
	{"erange_without_multibuffer", -ERANGE, XdpMode::native, DevKind::unknown, 9000, false, true, false, true,
	 kRecvBusy, "", "the MTU is too large for XDP on this device (kernel without XDP multi-buffer)", ERANGE, false},
	{"erange_frags_aware", -ERANGE, XdpMode::native, DevKind::unknown, 9000, true, true, false, true, kRecvBusy, "",
	 "the MTU is too large for XDP on this device", ERANGE, false},
	{"not_loaded_points_at_the_log", -EACCES, XdpMode::native, DevKind::veth, 1500, true, true, false, false,
	 kLoaderBusy, "", "Permission denied (-vv shows the log)", EACCES, false},
	{"loaded_plain_errno", -EACCES, XdpMode::native, DevKind::veth, 1500, true, true, false, true, kLoaderBusy, "",
	 "Permission denied", EACCES, false},
};

TEST(XdpAttachError, ErrnoModeDriverTable)
{
	for (const Row &r : kRows) {
		SCOPED_TRACE(r.name);
		const std::string what = std::string("attach xdp_vlan to eth9 (") + to_string(r.mode) + ")";
		XdpAttachFailure f{what, r.err, r.mode, r.frags};
		f.last_entry = r.last_entry;
		f.refused_for_frags = r.refused_for_frags;
		f.loaded = r.loaded;
		f.load_note = " (-vv shows the log)";
		f.skb_flag = "--mode skb";
		f.busy = r.busy;
		XdpAttachVerdict v = xdp_attach_error(f, features::nic_facts(r.drv, KernelVersion::v6_1), r.mtu, r.holders);
		EXPECT_EQ(v.error.msg, what + ": " + r.want);
		EXPECT_EQ(v.error.err, r.want_err);
		EXPECT_EQ(v.error.kind, ErrorKind::runtime);
		EXPECT_EQ(v.final, r.want_final);
	}
}

} // namespace
