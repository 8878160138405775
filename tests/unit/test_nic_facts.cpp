// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Unit tests of the RX/AF_XDP facts per driver and kernel (features::nic_facts):
// a table of facts with the kernel file each one cites, send's TX checksum
// decision by driver x bind mode x kernel, virtio_net's zero-copy per
// release, and the XDP attach error lines the facts translate (mlx4 at
// jumbo MTU, igb at MTU 9000).
#include <gtest/gtest.h>

#include <cerrno>
#include <ostream>

#include "xoffload/features/features.hpp"
#include "xoffload/core/kernel.hpp"

using namespace xoffload;
using namespace xoffload::features;

namespace {

constexpr auto K61 = KernelVersion::v6_1, K612 = KernelVersion::v6_12, K72 = KernelVersion::v7_2;

bool has(const std::string &s, const char *needle)
{
	return s.find(needle) != std::string::npos;
}

// ---- facts ----------------------------------------------------------------

struct FactRow {
	const char *name;
	DevKind drv;
	KernelVersion k;
	bool strip_ctag, strip_stag, kfunc, zero_copy, zc_needs_xdp, md_zc, mb;
	VlanFilter filter;
	bool filter_fixed;
	unsigned tunnels, max_mtu;
	Ntuple ntuple;
	const char *file;	// every source of the row names this driver file (or net/xdp)
};

const FactRow kFacts[] = {
	{"igb_612", DevKind::igb, K612, true, false, false, false, true, false, false, VlanFilter::drops_unregistered,
	 true, 0, 3046, Ntuple::ether_only, "igb"},
	{"igb_72_zero_copy", DevKind::igb, K72, true, false, false, true, true, false, false,
	 VlanFilter::drops_unregistered, true, 0, 3046, Ntuple::ether_only, "igb"},
	{"i40e_61", DevKind::i40e, K61, true, false, false, true, true, false, false, VlanFilter::after_first_vid, true,
	 kTunnelVxlan | kTunnelGeneve, 3050, Ntuple::full, "i40e"},
	{"i40e_612", DevKind::i40e, K612, true, false, false, true, true, false, true, VlanFilter::after_first_vid, true,
	 kTunnelVxlan | kTunnelGeneve, 3046, Ntuple::full, "i40e"},
	{"mlx4_612", DevKind::mlx4_en, K612, true, true, false, false, false, false, false,
	 VlanFilter::drops_unregistered, true, kTunnelVxlan, 3498, Ntuple::dmfs_only, "mlx4"},
	{"mlx5_61", DevKind::mlx5_core, K61, true, false, false, true, true, false, true, VlanFilter::drops_unregistered,
	 false, kTunnelVxlan, 0, Ntuple::full, "mlx5"},
	{"mlx5_612", DevKind::mlx5_core, K612, true, false, true, true, true, true, true, VlanFilter::drops_unregistered,
	 false, kTunnelVxlan, 0, Ntuple::full, "mlx5"},
	{"ice_612", DevKind::ice, K612, true, false, true, true, true, false, true, VlanFilter::drops_unregistered, false,
	 kTunnelVxlan | kTunnelGeneve, 3046, Ntuple::full, "ice"},
	{"virtio_61", DevKind::virtio_net, K61, false, false, false, false, false, false, false, VlanFilter::host, true, 0,
	 4064, Ntuple::none, "virtio_net.c"},
	{"virtio_612", DevKind::virtio_net, K612, false, false, false, false, false, false, true, VlanFilter::host, true, 0,
	 3506, Ntuple::none, "virtio_net.c"},
	{"veth_61", DevKind::veth, K61, false, false, false, false, false, false, true, VlanFilter::none, false, 0, 3506,
	 Ntuple::none, "veth.c"},
	{"veth_612", DevKind::veth, K612, false, false, true, false, false, false, true, VlanFilter::none, false, 0, 3506,
	 Ntuple::none, "veth.c"},
	{"vmxnet3_612", DevKind::vmxnet3, K612, true, false, false, false, false, false, false, VlanFilter::host, true, 0,
	 3494, Ntuple::none, "vmxnet3"},
};

void PrintTo(const FactRow &r, std::ostream *os)
{
	*os << r.name;
}

class NicFactsTable : public ::testing::TestWithParam<FactRow> {};

TEST_P(NicFactsTable, FactsAndSources)
{
	const FactRow &r = GetParam();
	const NicFacts f = nic_facts(r.drv, r.k);
	EXPECT_TRUE(f.modelled);
	EXPECT_EQ(f.strip_ctag.value, r.strip_ctag);
	EXPECT_EQ(f.strip_stag.value, r.strip_stag);
	EXPECT_EQ(f.rx_vlan_tag_kfunc.value, r.kfunc);
	EXPECT_EQ(f.zero_copy.value, r.zero_copy);
	EXPECT_EQ(f.zc_tx_needs_xdp.value, r.zc_needs_xdp);
	EXPECT_EQ(f.tx_md_csum_zc.value, r.md_zc);
	EXPECT_EQ(f.xdp_multi_buffer.value, r.mb);
	EXPECT_EQ(f.vlan_filter.value, r.filter);
	EXPECT_EQ(f.vlan_filter_fixed.value, r.filter_fixed);
	EXPECT_EQ(f.udp_tunnel_table.value, r.tunnels);
	EXPECT_EQ(f.xdp_max_mtu.value, r.max_mtu);
	EXPECT_EQ(f.ntuple.value, r.ntuple);
	EXPECT_EQ(f.vlan_filter_remedy.empty(), r.filter == VlanFilter::none);
	// every fact cites the driver's file and a function
	for (const auto *s : {&f.native_xdp.source, &f.strip_ctag.source, &f.vlan_filter.source, &f.zero_copy.source,
			      &f.xdp_multi_buffer.source, &f.xdp_max_mtu.source, &f.ntuple.source}) {
		EXPECT_TRUE(has(*s, r.file)) << *s;
		EXPECT_TRUE(has(*s, "()") || has(*s, "_ops") || has(*s, "FEATURES") || has(*s, "no ")) << *s;
	}
	EXPECT_FALSE(f.tx_md_csum_copy.source.empty());
	if (f.zc_tx_needs_xdp.value) {
		EXPECT_NE(f.zc_tx_no_xdp_errno, 0);
	}
	if (f.xdp_max_mtu.value) {
		EXPECT_NE(f.xdp_mtu_errno, 0);
	}
}

INSTANTIATE_TEST_SUITE_P(Drivers, NicFactsTable, ::testing::ValuesIn(kFacts),
			 [](const auto &i) { return std::string(i.param.name); });

TEST(NicFacts, ZeroCopyTxNeedsAnXdpProgramWithItsErrno)
{
	EXPECT_EQ(nic_facts(DevKind::i40e, K612).zc_tx_no_xdp_errno, EINVAL);
	EXPECT_TRUE(has(nic_facts(DevKind::i40e, K612).zc_tx_needs_xdp.source, "i40e_xsk_wakeup()"));
	EXPECT_EQ(nic_facts(DevKind::ice, K612).zc_tx_no_xdp_errno, EINVAL);
	EXPECT_EQ(nic_facts(DevKind::mlx5_core, K612).zc_tx_no_xdp_errno, ENETDOWN);
	EXPECT_EQ(nic_facts(DevKind::igc, K612).zc_tx_no_xdp_errno, ENXIO);
	EXPECT_FALSE(nic_facts(DevKind::virtio_net, K72).zc_tx_needs_xdp.value);
	// igb: zero-copy from 6.14 (igb_xsk.c), so the release decides, not the model
	EXPECT_FALSE(nic_facts(DevKind::igb, 6, 13).zero_copy.value);
	EXPECT_TRUE(nic_facts(DevKind::igb, 6, 14).zero_copy.value);
	EXPECT_TRUE(nic_facts(DevKind::igb, 6, 18).zc_tx_needs_xdp.value);
}

// virtio_net's AF_XDP zero-copy per release: none before 6.11; in 6.11 and
// 6.12 the driver has the RX half but the core refuses the bind (no
// NETDEV_XDP_ACT_XSK_ZEROCOPY); RX and TX from 6.13. No XDP program needed.
TEST(NicFacts, VirtioZeroCopyRxAndTxPerKernel)
{
	struct {
		unsigned major, minor;
		bool zc;
		const char *zc_src, *tx_src;
	} const rows[] = {
		{6, 1, false, "no ndo_xsk_wakeup before 6.11", "no ndo_xsk_wakeup"},
		{6, 10, false, "no ndo_xsk_wakeup before 6.11", "no ndo_xsk_wakeup"},
		{6, 11, false, "xp_assign_dev(): -EOPNOTSUPP", "xsk_tx_peek_desc()"},
		{6, 12, false, "NETDEV_XDP_ACT_XSK_ZEROCOPY", "virtnet_poll_tx() runs free_old_xmit() only"},
		{6, 13, true, "virtnet_xsk_pool_enable()", "virtnet_xsk_xmit()"},
		{7, 2, true, "iommu_platform=on", "virtnet_poll_tx() -> virtnet_xsk_xmit()"},
	};
	for (const auto &r : rows) {
		SCOPED_TRACE(std::to_string(r.major) + "." + std::to_string(r.minor));
		const NicFacts f = nic_facts(DevKind::virtio_net, r.major, r.minor);
		EXPECT_EQ(f.zero_copy.value, r.zc);
		EXPECT_EQ(f.zc_tx.value, r.zc) << "virtio_net's zero-copy TX came with its bind";
		EXPECT_FALSE(f.zc_tx_needs_xdp.value);
		EXPECT_TRUE(has(f.zero_copy.source, r.zc_src)) << f.zero_copy.source;
		EXPECT_TRUE(has(f.zc_tx.source, r.tx_src)) << f.zc_tx.source;
	}
	// the TX model follows: a zero-copy TX queue only where the bind works
	EXPECT_FALSE(tx_queue_facts(DevKind::virtio_net, K612, true).zero_copy);
	EXPECT_TRUE(tx_queue_facts(DevKind::virtio_net, K72, true).zero_copy);
}

TEST(NicFacts, UnknownDriverAssumesNothing)
{
	const NicFacts f = nic_facts(DevKind::unknown, K612);
	EXPECT_FALSE(f.modelled);
	EXPECT_FALSE(f.zero_copy.value);
	EXPECT_FALSE(f.tx_md_csum_zc.value);
	EXPECT_FALSE(f.strip_ctag.value);
	EXPECT_EQ(f.vlan_filter.value, VlanFilter::none);
	EXPECT_TRUE(f.tx_md_csum_copy.value) << "copy mode's CHECKSUM_PARTIAL is the core's, any driver";
	EXPECT_TRUE(has(f.zero_copy.source, "not modelled"));
	EXPECT_EQ(xdp_attach_hint(f, -EOPNOTSUPP, 9000, true, "--mode skb"), "");
}

TEST(NicFacts, KernelArg)
{
	auto r = parse_kernel_arg("running");
	ASSERT_TRUE(r.ok());
	EXPECT_TRUE(r->running);
	EXPECT_EQ(r->major, running_kernel().major);
	EXPECT_EQ(r->minor, running_kernel().minor);
	auto k = parse_kernel_arg("6.12");
	ASSERT_TRUE(k.ok());
	EXPECT_FALSE(k->running);
	EXPECT_EQ(k->major, 6u);
	EXPECT_EQ(k->minor, 12u);
	auto n = parse_kernel_arg("newest");
	ASSERT_TRUE(n.ok());
	EXPECT_EQ(n->major, 7u);
	EXPECT_EQ(n->minor, 2u);
	auto bad = parse_kernel_arg("5.10");
	ASSERT_FALSE(bad.ok());
	EXPECT_EQ(bad.error().kind, ErrorKind::usage);
}

// The TX-queue facts of the TX model come from the same facts.
TEST(NicFacts, TxQueueFactsFollowNicFacts)
{
	for (DevKind d : {DevKind::igb, DevKind::i40e, DevKind::mlx4_en, DevKind::mlx5_core, DevKind::virtio_net,
			  DevKind::veth, DevKind::ice, DevKind::vmxnet3})
		for (KernelVersion k : {K61, K612, K72})
			for (bool zc : {false, true}) {
				SCOPED_TRACE(std::string(dev_kind_name(d)) + " " + kernel_version_name(k) +
					     (zc ? " zero-copy" : " copy"));
				const NicFacts f = nic_facts(d, k);
				const TxQueueFacts q = tx_queue_facts(d, k, zc);
				// a pool that transmits nothing (virtio_net 6.12) is no zero-copy TX queue
				const bool bound_zc = zc && f.zero_copy.value && f.zc_tx.value;
				EXPECT_EQ(q.zero_copy, bound_zc);
				EXPECT_EQ(q.tx_md_csum, bound_zc ? f.tx_md_csum_zc.value : f.tx_md_csum_copy.value);
			}
}

// ---- send's TX checksum: driver x bind mode x kernel -> decision -----------

struct CsumRow {
	DevKind drv;
	bool zero_copy;
	KernelVersion k;
	bool by_metadata;
	const char *why;	// substring of the reason when not by metadata
};

const CsumRow kCsum[] = {
	// zero-copy: only a driver whose xsk_tx_metadata_ops has tmo_request_checksum
	{DevKind::mlx5_core, true, K612, true, ""},
	{DevKind::mlx5_core, true, K72, true, ""},
	{DevKind::mlx5_core, true, K61, false, "before Linux 6.8"},
	{DevKind::i40e, true, K612, false, "ignores it in zero-copy"},
	{DevKind::i40e, true, K72, false, "ignores it in zero-copy"},
	{DevKind::ice, true, K612, false, "ignores it in zero-copy"},
	{DevKind::igc, true, K612, false, "tmo_request_checksum"},
	{DevKind::stmmac, true, K612, false, "tmo_request_checksum"},
	{DevKind::igb, true, K72, false, "ignores it in zero-copy"},
	{DevKind::virtio_net, true, K612, false, "ignores it in zero-copy"},
	{DevKind::unknown, true, K612, false, "not modelled"},
	// copy mode: the core's CHECKSUM_PARTIAL from 6.8, whatever the driver
	{DevKind::i40e, false, K612, true, ""},
	{DevKind::i40e, false, K61, false, "before Linux 6.8"},
	{DevKind::igb, false, K612, true, ""},
	{DevKind::mlx4_en, false, K612, true, ""},
	{DevKind::mlx4_en, false, K61, false, "before Linux 6.8"},
	{DevKind::veth, false, K612, true, ""},
	{DevKind::veth, false, K61, false, "before Linux 6.8"},
	{DevKind::veth, false, K72, true, ""},
	{DevKind::virtio_net, false, K612, false, "IFF_TX_SKB_NO_LINEAR"},
	{DevKind::virtio_net, false, K72, false, "refuses a UMEM with TX metadata"},
	{DevKind::vmxnet3, false, K612, true, ""},
	{DevKind::unknown, false, K612, true, ""},
};

TEST(TxCsumDecision, DriverModeKernelTable)
{
	for (const CsumRow &r : kCsum) {
		SCOPED_TRACE(std::string(dev_kind_name(r.drv)) + (r.zero_copy ? " zero-copy " : " copy ") +
			     kernel_version_name(r.k));
		const TxCsumDecision d = tx_csum_decision(nic_facts(r.drv, r.k), r.zero_copy, true);
		EXPECT_EQ(d.by_metadata, r.by_metadata) << d.why;
		EXPECT_FALSE(d.why.empty());
		EXPECT_FALSE(d.source.empty());
		if (!r.by_metadata) {
			EXPECT_TRUE(has(d.why, r.why)) << d.why;
		}
		// without TX metadata on the UMEM nothing can be asked
		EXPECT_FALSE(tx_csum_decision(nic_facts(r.drv, r.k), r.zero_copy, false).by_metadata);
	}
}

// ---- XDP attach errors ------------------------------------------------------

struct HintRow {
	const char *name;
	DevKind drv;
	KernelVersion k;
	int err;
	unsigned mtu;
	bool frags;
	const char *want;	// substring of the hint, "" = no hint
	const char *not_want;
};

const HintRow kHints[] = {
	{"mlx4_jumbo", DevKind::mlx4_en, K612, -EOPNOTSUPP, 9000, true, "up to MTU 3498", "no native XDP"},
	{"mlx4_jumbo_61", DevKind::mlx4_en, K61, -EOPNOTSUPP, 9000, false, "MTU 9000 here", "no native XDP"},
	{"mlx4_1500_other_cause", DevKind::mlx4_en, K612, -EOPNOTSUPP, 1500, false, "", ""},
	{"igb_9000", DevKind::igb, K612, -EINVAL, 9000, true, "up to MTU 3046", "frags-aware"},
	{"igb_9000_no_multibuffer", DevKind::igb, K61, -EINVAL, 9000, false, "no XDP multi-buffer", ""},
	{"igb_1500_einval", DevKind::igb, K612, -EINVAL, 1500, false, "", ""},
	{"i40e_61_jumbo", DevKind::i40e, K61, -EINVAL, 9000, true, "up to MTU 3050", ""},
	{"i40e_612_single_buffer", DevKind::i40e, K612, -EINVAL, 9000, false, "frags-aware", ""},
	{"i40e_612_frags_not_the_mtu", DevKind::i40e, K612, -EINVAL, 9000, true, "", ""},
	{"ice_jumbo_eopnotsupp", DevKind::ice, K612, -EOPNOTSUPP, 9000, false, "up to MTU 3046", "no native XDP"},
	{"vmxnet3_61_no_xdp", DevKind::vmxnet3, K61, -EOPNOTSUPP, 1500, false, "no native XDP", ""},
	{"vmxnet3_612_jumbo", DevKind::vmxnet3, K612, -EOPNOTSUPP, 9000, true, "up to MTU 3494", ""},
	{"virtio_guest_offloads", DevKind::virtio_net, K612, -EOPNOTSUPP, 1500, false, "GRO_HW", ""},
	{"virtio_61_jumbo", DevKind::virtio_net, K61, -EINVAL, 9000, false, "up to MTU 4064", ""},
	{"veth_peer_mtu", DevKind::veth, K612, -ERANGE, 9000, false, "the peer's MTU", ""},
};

TEST(XdpAttachHint, DriverErrnoMtuTable)
{
	for (const HintRow &r : kHints) {
		SCOPED_TRACE(r.name);
		const std::string h = xdp_attach_hint(nic_facts(r.drv, r.k), r.err, r.mtu, r.frags, "--mode skb");
		if (!*r.want) {
			EXPECT_EQ(h, "");
		} else {
			EXPECT_TRUE(has(h, r.want)) << h;
		}
		if (*r.not_want) {
			EXPECT_FALSE(has(h, r.not_want)) << h;
		}
		if (!h.empty()) {
			EXPECT_TRUE(has(h, "--mode skb")) << h;
		}
	}
}

} // namespace

// ---- RX facts behind attach/recv/geneve decisions -------------------------

struct RxDecisionRow {
	const char *name;
	DevKind drv;
	bool strip_by_feature, rx_all_opens, rxq_from_peer, set_channels;
	RssTable rss;
	bool csum_mark;
	const char *file;	// every source names this driver file
};

const RxDecisionRow kRxDecisions[] = {
	{"igb", DevKind::igb, true, true, false, true, RssTable::settable, true, "igb"},
	{"i40e", DevKind::i40e, true, false, false, true, RssTable::settable, true, "i40e"},
	{"mlx4", DevKind::mlx4_en, true, false, false, true, RssTable::settable, true, "mlx4"},
	{"mlx5", DevKind::mlx5_core, true, false, false, true, RssTable::settable, true, "mlx5"},
	{"ice", DevKind::ice, true, false, false, true, RssTable::settable, true, "ice"},
	{"virtio_net", DevKind::virtio_net, false, false, false, true, RssTable::if_offered, true, "virtio_net.c"},
	{"veth", DevKind::veth, false, false, true, true, RssTable::none, false, "veth.c"},
	{"vmxnet3", DevKind::vmxnet3, true, false, false, false, RssTable::settable, true, "vmxnet3"},
};

void PrintTo(const RxDecisionRow &r, std::ostream *os)
{
	*os << r.name;
}

class NicRxDecisionFacts : public ::testing::TestWithParam<RxDecisionRow> {};

TEST_P(NicRxDecisionFacts, ValuesAndSources)
{
	const RxDecisionRow &r = GetParam();
	for (KernelVersion k : {K61, K612, K72}) {
		const NicFacts f = nic_facts(r.drv, k);
		EXPECT_EQ(f.strip_by_feature.value, r.strip_by_feature) << kernel_version_name(k);
		EXPECT_EQ(f.vlan_filter_rx_all.value, r.rx_all_opens) << kernel_version_name(k);
		EXPECT_EQ(f.rxq_from_peer.value, r.rxq_from_peer) << kernel_version_name(k);
		EXPECT_EQ(f.set_channels.value, r.set_channels) << kernel_version_name(k);
		EXPECT_EQ(f.rss_table.value, r.rss) << kernel_version_name(k);
		EXPECT_EQ(f.rx_csum_mark.value, r.csum_mark) << kernel_version_name(k);
		EXPECT_EQ(decap_cpumap_default(f), r.csum_mark) << kernel_version_name(k);
		for (const auto *s : {&f.strip_by_feature.source, &f.vlan_filter_rx_all.source, &f.rxq_from_peer.source,
				      &f.set_channels.source, &f.rss_table.source, &f.rx_csum_mark.source}) {
			EXPECT_TRUE(has(*s, r.file)) << *s;
			EXPECT_TRUE(has(*s, "()") || has(*s, "_ops") || has(*s, "FEATURES") || has(*s, "no ")) << *s;
		}
	}
}

INSTANTIATE_TEST_SUITE_P(Drivers, NicRxDecisionFacts, ::testing::ValuesIn(kRxDecisions),
			 [](const auto &i) { return std::string(i.param.name); });

// The Geneve decap default (geneve rule add --action decap): through the
// CPUMAP wherever the driver's RX checksum mark would vouch for the inner
// checksum after an XDP decap, and where the driver is not modelled.
TEST(GeneveDecapDefault, PerDriverFromTheFacts)
{
	for (DevKind d : {DevKind::igb, DevKind::i40e, DevKind::mlx4_en, DevKind::mlx5_core, DevKind::ice,
			  DevKind::igc, DevKind::virtio_net, DevKind::vmxnet3, DevKind::stmmac, DevKind::unknown})
		EXPECT_TRUE(decap_cpumap_default(nic_facts(d, K612))) << dev_kind_name(d);
	const NicFacts veth = nic_facts(DevKind::veth, K612);
	EXPECT_FALSE(decap_cpumap_default(veth));
	EXPECT_TRUE(has(veth.rx_csum_mark.source, "__xdp_build_skb_from_frame()")) << veth.rx_csum_mark.source;
	EXPECT_TRUE(has(nic_facts(DevKind::unknown, K612).rx_csum_mark.source, "not modelled"));
	// the decision is the fact's, whatever the driver
	NicFacts f = nic_facts(DevKind::igb, K612);
	f.rx_csum_mark.value = false;
	EXPECT_FALSE(decap_cpumap_default(f));
}

// Only vmxnet3 (6.6+) forgets its native XDP program at a close, with the
// kernel function that does it; every other modelled driver keeps it, an
// unmodelled one is taken to.
TEST(NicXdpAcrossClose, OnlyVmxnet3ForgetsItsProgram)
{
	for (KernelVersion k : {K612, K72}) {
		const NicFacts v = nic_facts(DevKind::vmxnet3, k);
		EXPECT_TRUE(v.xdp_lost_on_close.value) << kernel_version_name(k);
		EXPECT_TRUE(has(v.xdp_lost_on_close.source, "vmxnet3_rq_cleanup_all()")) << v.xdp_lost_on_close.source;
	}
	const NicFacts old = nic_facts(DevKind::vmxnet3, K61);
	EXPECT_FALSE(old.xdp_lost_on_close.value);
	EXPECT_EQ(old.xdp_lost_on_close.source, old.native_xdp.source) << "6.1: no native XDP on vmxnet3";
	for (DevKind d : {DevKind::igb, DevKind::i40e, DevKind::mlx4_en, DevKind::mlx5_core, DevKind::ice,
			  DevKind::igc, DevKind::virtio_net, DevKind::veth, DevKind::stmmac, DevKind::unknown})
		for (KernelVersion k : {K61, K612, K72}) {
			const NicFacts f = nic_facts(d, k);
			EXPECT_FALSE(f.xdp_lost_on_close.value) << dev_kind_name(d) << " " << kernel_version_name(k);
			EXPECT_FALSE(f.xdp_lost_on_close.source.empty()) << dev_kind_name(d);
		}
	EXPECT_TRUE(has(nic_facts(DevKind::unknown, K612).xdp_lost_on_close.source, "not modelled"));
}
