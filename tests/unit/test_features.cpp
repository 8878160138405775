// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Unit tests of the offload feature model: a table of (stack, packet, kernel,
// patched) -> where segmentation and checksum happen, how many skbs leave the
// bottom, and the kernel rule that decided; each row cites the source.
#include <gtest/gtest.h>

#include "xoffload/features/features.hpp"
#include "xoffload/core/kernel.hpp"

using namespace xoffload;

namespace {

struct Row {
	const char *name;
	const char *stack;
	L4 l4;
	bool gso;
	unsigned vlans;
	KernelVersion k;
	bool patched;
	Where seg;
	int seg_layer;		// -1: none
	Where csum;
	int csum_layer;
	unsigned bottom_skbs;
	bool bottom_gso;
	const char *rule;	// substring of a trace step at the deciding layer ("" = none)
	const char *why;	// kernel source behind the row
	bool meta = false;	// outer tag in skb metadata
	Encap encap = Encap::none;
};

constexpr auto SW = Where::software, HW = Where::hardware, NO = Where::none, DR = Where::dropped;
constexpr auto K61 = KernelVersion::v6_1, K612 = KernelVersion::v6_12, K72 = KernelVersion::v7_2;

const Row kRows[] = {
	{"veth_keeps_gso", "veth", L4::tcp4, true, 0, K612, false, HW, 0, HW, 0, 1, true, "passthru_features_check",
	 "drivers/net/veth.c veth_setup() VETH_FEATURES; veth_netdev_ops passthru_features_check"},
	{"veth_qinq_keeps_gso", "veth", L4::tcp4, true, 2, K612, false, HW, 0, HW, 0, 1, true, "passthru",
	 "passthru_features_check() skips vlan_features_check()"},
	{"veth_tso_off", "veth:-tso", L4::tcp4, true, 0, K612, false, SW, 0, HW, 0, 4, false, "software GSO",
	 "net/core/dev.c validate_xmit_skb(): netif_needs_gso() -> skb_gso_segment()"},
	{"veth_peer_xdp", "veth:peer-xdp", L4::tcp6, true, 0, K612, false, SW, 0, HW, 0, 4, false, "tx-tcp6",
	 "drivers/net/veth.c veth_xdp_set(), veth_fix_features(): peer XDP clears NETIF_F_GSO_SOFTWARE"},
	{"vxlan_one_tag", "vxlan/veth", L4::tcp4, true, 1, K612, false, HW, 1, HW, 1, 1, true, "",
	 "drivers/net/vxlan/vxlan_core.c vxlan_setup(): vlan_features = features"},
	{"vxlan_qinq", "vxlan/veth", L4::tcp4, true, 2, K612, false, SW, 0, HW, 1, 4, false, "vlan_features_check",
	 "vxlan has no ndo_features_check: dflt_features_check() -> vlan_features_check() (include/linux/if_vlan.h)"},
	{"vxlan_qinq_61", "vxlan/veth", L4::udp4, true, 2, K61, false, SW, 0, HW, 1, 4, false, "multi-tagged",
	 "same in 6.1: vxlan_netdev_ether_ops has no ndo_features_check"},
	{"vxlan_qinq_patched", "vxlan/veth", L4::tcp4, true, 2, K612, true, HW, 1, HW, 1, 1, true, "kpatch 0002",
	 "kpatches/0002: vxlan passthru_features_check"},
	{"vxlan_qinq_dummy_patched", "vxlan/dummy", L4::tcp4, true, 2, K612, true, SW, 1, HW, 1, 4, false,
	 "more than one inner tag",
	 "kpatches/0002: gso_features_check() clears GSO for two inner tags on a device that parses frames"},
	{"vxlan_qinq_i40e_patched", "vxlan/i40e", L4::tcp4, true, 2, K612, true, SW, 1, HW, 1, 4, false,
	 "more than one inner tag", "the same on a NIC: segmented once, below the tunnel, not above it"},
	{"vxlan_untagged_dummy_patched", "vxlan/dummy", L4::tcp4, true, 0, K612, true, HW, 1, HW, 1, 1, true, "",
	 "no inner tags: the check does not apply"},
	{"vlan_vlan_vxlan_bridge", "vlan:802.1Q/vlan:802.1ad/bridge/vxlan/veth", L4::tcp4, true, 0, K612, false, SW, 3,
	 HW, 4, 4, false, "vlan_features_check",
	 "the two vlan devices add tags (vlan_dev_hard_start_xmit); bridge passthru; vxlan drops GSO"},
	{"geneve_one_tag", "geneve/veth", L4::tcp4, true, 1, K612, false, SW, 0, SW, 0, 4, false, "vlan_features",
	 "drivers/net/geneve.c geneve_setup() never sets vlan_features: tagged skbs lose SG, csum, GSO"},
	{"vxlan_over_bridge_612", "vxlan/bridge/veth", L4::tcp4, true, 0, K612, false, SW, 1, SW, 1, 4, false,
	 "hw_enc_features", "net/bridge/br_device.c br_dev_setup() never sets hw_enc_features: encapsulated GSO "
	 "segmented at the bridge"},
	{"vxlan_over_bridge_72", "vxlan/bridge/veth", L4::tcp4, true, 0, K72, false, HW, 2, HW, 2, 1, true, "",
	 "7.2: br_add_if() -> netdev_compute_master_upper_features() gives the bridge its ports' hw_enc_features"},
	{"vxlan_over_bridge_udp_vlan_72", "vxlan/bridge/veth", L4::udp4, true, 1, K72, false, HW, 2, HW, 2, 1, true, "",
	 "7.2: the same for USO, the inner tag is inside the tunnel"},
	{"geneve_untagged", "geneve/veth", L4::tcp4, true, 0, K612, false, HW, 1, HW, 1, 1, true, "",
	 "untagged skbs do not look at vlan_features (net/core/dev.c netif_skb_features())"},
	{"geneve_one_tag_patched", "geneve/veth", L4::tcp4, true, 1, K612, true, HW, 1, HW, 1, 1, true, "",
	 "kpatches/0001: geneve vlan_features = features"},
	{"vlan_on_geneve", "vlan:802.1Q/geneve/veth", L4::tcp6, true, 0, K612, false, SW, 0, SW, 0, 4, false,
	 "harmonize_features",
	 "net/8021q/vlan_dev.c vlan_dev_fix_features(): lower vlan_features 0 -> no csum; harmonize_features() drops GSO"},
	{"igb_qinq_hw_tso", "vlan:802.1Q/vlan:802.1ad/igb", L4::tcp4, true, 0, K612, false, HW, 2, HW, 2, 1, true,
	 "igb_features_check",
	 "drivers/net/ethernet/intel/igb/igb_main.c igb_features_check(): no vlan_features_check (seed: stacked vlan TSO)"},
	{"i40e_qinq_hw_tso", "vlan:802.1Q/vlan:802.1ad/i40e", L4::tcp6, true, 0, K61, false, HW, 2, HW, 2, 1, true,
	 "i40e_features_check", "drivers/net/ethernet/intel/i40e/i40e_main.c i40e_features_check()"},
	{"mlx4_qinq_sw", "vlan:802.1Q/vlan:802.1ad/mlx4_en", L4::tcp4, true, 0, K612, false, SW, 2, SW, 2, 4, false,
	 "unconditionally",
	 "drivers/net/ethernet/mellanox/mlx4/en_netdev.c mlx4_en_features_check() -> vlan_features_check(); "
	 "IP_CSUM is not HW_CSUM, so checksum goes too"},
	{"mlx4_qinq_phv_patched", "vlan:802.1Q/vlan:802.1ad/mlx4_en:phv", L4::tcp4, true, 0, K612, true, HW, 2, HW, 2, 1,
	 true, "kpatch 0004", "kpatches/0004: S-tag in skb->vlan_tci with HW_VLAN_STAG_TX, one 802.1Q tag in the packet"},
	{"mlx4_qinq_patched_no_phv", "vlan:802.1Q/vlan:802.1ad/mlx4_en", L4::tcp4, true, 0, K612, true, SW, 2, SW, 2, 4,
	 false, "validate_xmit_vlan",
	 "without tx-vlan-stag-hw-insert validate_xmit_vlan() puts the S-tag in the packet: two in-band tags"},
	{"mlx4_vxlan_hw", "vxlan/mlx4_en", L4::tcp4, true, 0, K612, false, HW, 1, HW, 1, 1, true, "hw_enc_features",
	 "mlx4_en_init_netdev(): hw_enc_features has TSO and GSO_UDP_TUNNEL in VXLAN offload mode"},
	{"mlx4_geneve_sw", "geneve/mlx4_en", L4::tcp4, true, 0, K612, false, SW, 1, SW, 1, 4, false, "VXLAN port",
	 "mlx4_en_features_check(): encapsulated skb to another UDP port loses CSUM and GSO"},
	{"macvlan_always_on", "macvlan/veth:-tso", L4::tcp4, true, 0, K612, false, SW, 1, HW, 1, 4, false, "",
	 "drivers/net/macvlan.c ALWAYS_ON_OFFLOADS: macvlan keeps GSO, the lower device segments (seed macvlan-always-on)"},
	{"ipvlan_qinq", "ipvlan:l2/veth", L4::tcp4, true, 2, K612, false, SW, 0, HW, 1, 4, false, "vlan_features_check",
	 "drivers/net/ipvlan/ipvlan_main.c: no ndo_features_check"},
	{"ipvlan_qinq_patched", "ipvlan:l2/veth", L4::tcp4, true, 2, K612, true, HW, 1, HW, 1, 1, true, "kpatch 0003",
	 "kpatches/0003: ipvlan passthru_features_check"},
	{"ipvlan_l3_qinq", "ipvlan/veth", L4::tcp4, true, 2, K612, false, SW, 0, DR, 0, 0, false,
	 "routes IPv4 and IPv6 only",
	 "ipvlan's default mode is L3 (ipvlan_port_create()): segmented at ipvl0, then every segment dropped by "
	 "drivers/net/ipvlan/ipvlan_core.c ipvlan_process_outbound() (skb->protocol 802.1AD)"},
	{"ipvlan_l3s_qinq_patched", "ipvlan:l3s/veth", L4::tcp4, true, 2, K612, true, DR, 0, DR, 0, 0, false,
	 "type=88a8", "kpatch 0003 keeps GSO, but L3S drops the one GSO skb the same way"},
	{"ipvlan_l3_meta_tag", "ipvlan:l3/veth", L4::udp4, true, 1, K61, false, DR, 0, DR, 0, 0, false, "type=8100",
	 "ipvlan has no HW_VLAN_CTAG_TX: validate_xmit_vlan() puts the tag in the packet, then L3 drops it", true},
	{"ipvlan_l3_untagged", "ipvlan:l3/veth", L4::tcp4, true, 0, K612, false, HW, 1, HW, 1, 1, true, "",
	 "an untagged IPv4 frame is routed out of the lower device as it is"},
	{"bridge_keeps_tso", "bridge/veth:-tso", L4::tcp4, true, 0, K612, false, SW, 1, HW, 1, 4, false, "",
	 "net/bridge/br_if.c br_features_recompute() -> netdev_add_tso_features(): bridge keeps TSO"},
	{"bond_team_qinq", "bond/team/igb", L4::tcp4, true, 2, K612, false, HW, 2, HW, 2, 1, true, "",
	 "bond_main.c / team.c passthru_features_check (seed patches 5/7 and 6/7)"},
	{"vxlan_over_bridge", "vxlan/bridge/veth", L4::tcp4, true, 0, K612, false, SW, 1, SW, 1, 4, false,
	 "hw_enc_features", "net/bridge/br_device.c br_dev_setup() leaves hw_enc_features 0"},
	{"tap_no_offload", "tun", L4::tcp4, true, 0, K612, false, SW, 0, SW, 0, 4, false, "harmonize_features",
	 "drivers/net/tun.c tun_net_fix_features(): TUN_USER_FEATURES only after TUNSETOFFLOAD"},
	{"tap_uso_612", "tun:offload", L4::udp4, true, 0, K612, false, HW, 0, HW, 0, 1, true, "",
	 "drivers/net/tun.c TUN_USER_FEATURES has NETIF_F_GSO_UDP_L4 since 6.2"},
	{"tap_uso_61", "tun:offload", L4::udp4, true, 0, K61, false, SW, 0, HW, 0, 4, false, "tx-udp-segmentation",
	 "drivers/net/tun.c (6.1) TUN_USER_FEATURES: no GSO_UDP_L4"},
	{"virtio_ufo", "virtio_net", L4::ufo4, true, 0, K612, false, SW, 0, SW, 0, 5, false, "UFO",
	 "NETIF_F_GSO_UDP on no device here; net/ipv4/udp_offload.c udp4_ufo_fragment() checksums in software"},
	{"plain_csum_mlx4_qinq", "mlx4_en", L4::tcp6, false, 2, K612, false, NO, -1, SW, 0, 1, false, "checksum in software",
	 "vlan_features_check() keeps only HW_CSUM; mlx4 has IPV6_CSUM: skb_csum_hwoffload_help()"},
	{"tc_push_qinq_vxlan", "vxlan/veth", L4::tcp4, true, 2, K612, false, SW, 0, HW, 1, 4, false, "multi-tagged",
	 "bpf_skb_vlan_push(): outer tag in skb->vlan_tci; skb_vlan_tagged_multi() counts it", true},
	{"encap_vxlan_on_i40e", "i40e", L4::tcp4, true, 0, K612, false, HW, 0, HW, 0, 1, true, "GSO partial",
	 "i40e_config_netdev(): GSO_UDP_TUNNEL in gso_partial_features: skb_segment() GSO_PARTIAL, the NIC segments",
	 false, Encap::vxlan},
	{"vxlan_on_igb_no_mangleid", "vxlan/igb", L4::tcp4, true, 0, K612, false, SW, 1, HW, 1, 4, false, "MANGLEID",
	 "igb_features_check(): tunnel IPv4 TSO needs TSO_MANGLEID, which register_netdevice() only offers (off)"},
	{"vxlan_on_igb_partial", "vxlan/igb:+tx-tcp-mangleid-segmentation", L4::tcp4, true, 0, K612, false, HW, 1, HW, 1,
	 1, true, "GSO partial",
	 "igb_probe(): IGB_GSO_PARTIAL_FEATURES: skb_segment() GSO_PARTIAL, the NIC segments"},
};

void PrintTo(const Row &r, std::ostream *os)
{
	*os << r.name;
}

class FeatureTable : public ::testing::TestWithParam<Row> {};

TEST_P(FeatureTable, Placement)
{
	const Row &r = GetParam();
	auto specs = parse_stack(r.stack);
	ASSERT_TRUE(specs.ok()) << specs.error().msg;
	PacketClass p;
	p.l4 = r.l4;
	p.gso = r.gso;
	p.vlans = r.vlans;
	p.outer_tag_in_meta = r.meta;
	p.encap = r.encap;
	auto st = build_stack(*specs, r.k, r.patched);
	Resolution res = resolve(st, p, r.k);
	std::string ctx = std::string(r.name) + " (" + r.why + "): " + res.summary();
	EXPECT_EQ(res.seg, r.seg) << ctx;
	EXPECT_EQ(res.seg_layer, r.seg_layer) << ctx;
	EXPECT_EQ(res.csum, r.csum) << ctx;
	EXPECT_EQ(res.csum_layer, r.csum_layer) << ctx;
	EXPECT_EQ(res.bottom_skbs, r.bottom_skbs) << ctx;
	EXPECT_EQ(res.bottom_gso, r.bottom_gso) << ctx;
	if (*r.rule) {
		// the deciding rule sits at the deciding layer or above it
		int at = r.seg_layer >= 0 ? r.seg_layer : r.csum_layer;
		ASSERT_GE(at, 0);
		bool found = false;
		for (int i = 0; i <= at; i++)
			for (const auto &t : res.layers[i].trace)
				found |= t.rule.find(r.rule) != std::string::npos || t.cite.find(r.rule) != std::string::npos;
		EXPECT_TRUE(found) << ctx << ": no trace step with '" << r.rule << "' down to layer " << at;
	}
}

INSTANTIATE_TEST_SUITE_P(Kernel, FeatureTable, ::testing::ValuesIn(kRows),
			 [](const auto &info) { return std::string(info.param.name); });

// ipvlan's mode in --stack: l2, l3 (the kernel's default, and ours), l3s;
// on another kind it is an unknown option. A drop is said in the summary,
// and nothing below the dropping layer is reached.
TEST(ParseStack, IpvlanModeAndTheDropItCauses)
{
	auto dflt = parse_stack("ipvlan/veth");
	ASSERT_TRUE(dflt.ok());
	EXPECT_EQ((*dflt)[0].ipvlan_mode, IpvlanMode::l3);
	auto l2 = parse_stack("ipvlan:l2/veth");
	ASSERT_TRUE(l2.ok());
	EXPECT_EQ((*l2)[0].ipvlan_mode, IpvlanMode::l2);
	auto l3s = parse_stack("ipvlan:l3s,-tso/veth");
	ASSERT_TRUE(l3s.ok());
	EXPECT_EQ((*l3s)[0].ipvlan_mode, IpvlanMode::l3s);
	auto bad = parse_stack("macvlan:l2/veth");
	ASSERT_FALSE(bad.ok());
	EXPECT_NE(bad.error().msg.find("unknown option 'l2' for macvlan"), std::string::npos) << bad.error().msg;

	PacketClass p;
	p.vlans = 2;
	p.gso = true;
	Resolution r = resolve(build_stack(*dflt, KernelVersion::v6_12, false), p, KernelVersion::v6_12);
	ASSERT_EQ(r.layers.size(), 2u);
	EXPECT_EQ(r.drop_layer, 0);
	EXPECT_EQ(r.dropped_skbs, 4u) << "segmented at ipvlan (no passthru), then each segment dropped";
	EXPECT_TRUE(r.layers[0].dropped);
	EXPECT_FALSE(r.layers[1].reached);
	EXPECT_EQ(r.layers[1].skbs_in, 0u);
	EXPECT_EQ(std::string(r.placement(false)), "dropped");
	EXPECT_NE(r.summary().find("4 skbs dropped at ipvlan (ipvlan mode l3 routes IPv4 and IPv6 only"), std::string::npos)
		<< r.summary();
	EXPECT_NE(r.summary().find("nothing leaves the bottom device"), std::string::npos) << r.summary();
}

TEST(FeatureNames, EthtoolNamesRoundTrip)
{
	for (NetdevFeature f : all_features()) {
		ASSERT_NE(feature_name(f), nullptr);
		EXPECT_EQ(feature_from_name(feature_name(f)), f) << feature_name(f);
	}
	EXPECT_STREQ(feature_name(NetdevFeature::tso), "tx-tcp-segmentation");
	EXPECT_STREQ(feature_name(NetdevFeature::gso_udp_tunnel), "tx-udp_tnl-segmentation");
	EXPECT_STREQ(feature_name(NetdevFeature::vlan_stag_tx), "tx-vlan-stag-hw-insert");
	EXPECT_EQ(mask_names(0), "none");
}

// ethtool -K's short names stand for every feature string their pattern
// matches (ethtool.c off_flag_def), as --stack kind:+NAME/-NAME takes them
TEST(FeatureNames, EthtoolShortNamesAreTheirPatterns)
{
	using F = NetdevFeature;
	EXPECT_EQ(feature_mask_from_name("tx"), fbit(F::ip_csum) | fbit(F::ipv6_csum) | fbit(F::hw_csum));
	EXPECT_EQ(mask_names(*feature_mask_from_name("tso")),
		  "tx-tcp-segmentation,tx-tcp-ecn-segmentation,tx-tcp-mangleid-segmentation,tx-tcp6-segmentation");
	EXPECT_EQ(feature_mask_from_name("ufo"), fbit(F::gso_udp));
	EXPECT_EQ(feature_mask_from_name("sg"), fbit(F::sg) | fbit(F::fraglist));
	EXPECT_EQ(feature_mask_from_name("rx"), fbit(F::rxcsum));
	EXPECT_EQ(feature_mask_from_name("txvlan"), fbit(F::vlan_ctag_tx));
	EXPECT_EQ(feature_mask_from_name("tx-udp-segmentation"), fbit(F::gso_udp_l4));
	EXPECT_EQ(feature_mask_from_name("gro"), std::nullopt) << "an RX feature the model does not hold";
	EXPECT_EQ(feature_mask_from_name("tx-checksum"), std::nullopt) << "a pattern, not a name";
	for (NetdevFeature f : all_features())
		EXPECT_EQ(feature_mask_from_name(feature_name(f)), fbit(f)) << feature_name(f);
}

TEST(FeatureMasks, MatchNetdevFeaturesH)
{
	// include/linux/netdev_features.h: NETIF_F_GSO_MASK spans bits 16..34
	EXPECT_TRUE(fmask::gso & fbit(NetdevFeature::tso));
	EXPECT_TRUE(fmask::gso & fbit(NetdevFeature::gso_fraglist));
	EXPECT_FALSE(fmask::gso & fbit(NetdevFeature::rxcsum));
	EXPECT_FALSE(fmask::gso & fbit(NetdevFeature::gso));
	EXPECT_TRUE(fmask::gso_software & fbit(NetdevFeature::gso_udp_l4));
	EXPECT_FALSE(fmask::gso_software & fbit(NetdevFeature::gso_udp));
}

TEST(ParseStack, LayersAndOptions)
{
	auto s = parse_stack("vlan:802.1Q/vlan:802.1ad/bridge/vxlan:udpcsum/veth:-tso,peer-xdp");
	ASSERT_TRUE(s.ok()) << s.error().msg;
	ASSERT_EQ(s->size(), 5u);
	EXPECT_EQ((*s)[0].vlan_proto, 0x8100);
	EXPECT_EQ((*s)[1].vlan_proto, 0x88a8);
	EXPECT_EQ((*s)[2].kind, DevKind::bridge);
	EXPECT_TRUE((*s)[3].udp_csum);
	EXPECT_TRUE((*s)[4].peer_xdp);
	EXPECT_TRUE((*s)[4].force_off & fbit(NetdevFeature::tso6)) << "tso off covers both TCP families, like ethtool";
}

TEST(ParseStack, RejectsGarbage)
{
	for (const char *bad : {"", "veth/", "foo", "veth:bogus", "veth:-nofeature", "bridge:802.1ad", "/veth"}) {
		auto s = parse_stack(bad);
		ASSERT_FALSE(s.ok()) << bad;
		EXPECT_EQ(s.error().kind, ErrorKind::usage) << bad;
	}
}

TEST(Stack, UpperDevicesFollowLowers)
{
	auto s = parse_stack("macvlan/mlx4_en");
	ASSERT_TRUE(s.ok());
	auto st = build_stack(*s, KernelVersion::v6_12, false);
	// macvlan_init(): lower & MACVLAN_FEATURES (no IP_CSUM) | ALWAYS_ON_OFFLOADS (HW_CSUM, GSO_SOFTWARE)
	EXPECT_TRUE(st[0].features & fbit(NetdevFeature::hw_csum));
	EXPECT_FALSE(st[0].features & fbit(NetdevFeature::ip_csum));
	EXPECT_TRUE(st[0].features & fbit(NetdevFeature::gso_udp_l4));
	EXPECT_EQ(st[0].check, FeaturesCheck::passthru);
	EXPECT_EQ(st[1].check, FeaturesCheck::mlx4);
}

TEST(TxPath, Mlx5ZeroCopyChecksumsInHardware)
{
	PacketClass p;
	p.l4 = L4::tcp4;
	p.gso = true;
	p.vlans = 1;
	auto q = tx_queue_facts(DevKind::mlx5_core, KernelVersion::v6_12, true);
	EXPECT_TRUE(q.zero_copy);
	EXPECT_TRUE(q.tx_md_csum);
	EXPECT_FALSE(q.hw_segmentation);
	auto plan = tx_plan(q, p);
	EXPECT_TRUE(plan.csum_hw);
	EXPECT_TRUE(plan.segment_sw);
	EXPECT_TRUE(plan.vlan_sw);
	EXPECT_FALSE(plan.fragment_sw);
}

TEST(TxPath, VethCopyModeOn61DoesEverythingInSoftware)
{
	PacketClass p;
	p.l4 = L4::udp6;
	auto q = tx_queue_facts(DevKind::veth, KernelVersion::v6_1, false);
	EXPECT_FALSE(q.zero_copy);
	EXPECT_FALSE(q.tx_md_csum) << "AF_XDP TX metadata arrived in 6.8";
	auto plan = tx_plan(q, p);
	EXPECT_FALSE(plan.csum_hw);
	EXPECT_TRUE(plan.segment_sw);
}

TEST(TxPath, VirtioNetOn72RefusesTxMetadata)
{
	PacketClass p;
	p.l4 = L4::udp4;
	auto q = tx_queue_facts(DevKind::virtio_net, KernelVersion::v7_2, false);
	EXPECT_FALSE(q.tx_md_csum) << "7.2's virtio_net refuses a UMEM with TX metadata at bind";
	EXPECT_NE(q.tx_md_why.find("refuses"), std::string::npos) << q.tx_md_why;
	auto plan = tx_plan(q, p);
	EXPECT_FALSE(plan.csum_hw);
	bool said = false;
	for (const auto &r : plan.reasons)
		said |= r.find("refuses a UMEM with TX metadata") != std::string::npos;
	EXPECT_TRUE(said) << "the plan names why the checksum is in software";
	EXPECT_TRUE(tx_queue_facts(DevKind::veth, KernelVersion::v7_2, false).tx_md_csum) << "veth copy mode takes it";
	// 6.12 binds it, but copy mode on virtio_net (IFF_TX_SKB_NO_LINEAR)
	// never reads the metadata: the checksum would be dropped
	auto q612 = tx_queue_facts(DevKind::virtio_net, KernelVersion::v6_12, false);
	EXPECT_FALSE(q612.tx_md_csum);
	EXPECT_NE(q612.tx_md_why.find("IFF_TX_SKB_NO_LINEAR"), std::string::npos) << q612.tx_md_why;
}

TEST(KernelModel, ReleaseMapsToTheNewestModelNotNewer)
{
	EXPECT_EQ(kernel_model_for(5, 15), KernelVersion::v6_1);
	EXPECT_EQ(kernel_model_for(6, 1), KernelVersion::v6_1);
	EXPECT_EQ(kernel_model_for(6, 11), KernelVersion::v6_1);
	EXPECT_EQ(kernel_model_for(6, 12), KernelVersion::v6_12);
	EXPECT_EQ(kernel_model_for(6, 18), KernelVersion::v6_12);
	EXPECT_EQ(kernel_model_for(7, 2), KernelVersion::v7_2);
	EXPECT_EQ(kernel_model_for(8, 0), KernelVersion::v7_2);
	auto r = parse_kernel_release("6.1.0-57-amd64");
	EXPECT_EQ(r.major, 6u);
	EXPECT_EQ(r.minor, 1u);
	EXPECT_TRUE(r.at_least(6, 1));
	EXPECT_FALSE(r.at_least(6, 2));
	r = parse_kernel_release("7.2.13+deb14-amd64");
	EXPECT_EQ(r.minor, 2u);
	EXPECT_TRUE(r.at_least(6, 12));
	EXPECT_EQ(parse_kernel_release("not a version").major, 0u);
	EXPECT_EQ(*parse_kernel_version("newest"), KernelVersion::v7_2);
	EXPECT_EQ(*parse_kernel_version("running"), running_kernel_model());
	EXPECT_FALSE(parse_kernel_version("6.6").ok());
	EXPECT_NE(kernel_lacks(kFeatXdpUseSg).find("needs Linux 6.6 or later (running "), std::string::npos);
}

TEST(TxPath, LiveLookupRejectsUnknownInterface)
{
	auto q = tx_queue_facts_live("xo-no-such-if0", KernelVersion::v6_12, false);
	ASSERT_FALSE(q.ok());
	EXPECT_EQ(q.error().kind, ErrorKind::usage);
	auto lo = tx_queue_facts_live("lo", KernelVersion::v6_12, true);
	ASSERT_TRUE(lo.ok());
	EXPECT_FALSE(lo->zero_copy);
}

TEST(TxPath, UfoNeverTrusted)
{
	PacketClass p;
	p.l4 = L4::ufo4;
	for (DevKind k : {DevKind::mlx4_en, DevKind::mlx5_core, DevKind::i40e}) {
		auto q = tx_queue_facts(k, KernelVersion::v6_12, k != DevKind::mlx4_en);
		EXPECT_FALSE(q.ufo_trusted);
		auto plan = tx_plan(q, p);
		EXPECT_TRUE(plan.fragment_sw) << dev_kind_name(k);
		EXPECT_FALSE(plan.csum_hw) << "UFO checksum covers the whole datagram: software";
	}
}

TEST(TxPath, ZeroCopyOnlyWhereTheDriverHasIt)
{
	EXPECT_TRUE(tx_queue_facts(DevKind::i40e, KernelVersion::v6_1, true).zero_copy);
	EXPECT_FALSE(tx_queue_facts(DevKind::i40e, KernelVersion::v6_12, true).tx_md_csum);
	EXPECT_FALSE(tx_queue_facts(DevKind::mlx4_en, KernelVersion::v6_12, true).zero_copy);
	EXPECT_FALSE(tx_queue_facts(DevKind::igb, KernelVersion::v6_12, true).zero_copy);
}

} // namespace

namespace {

// send attaches an XDP program for a zero-copy run where the driver's
// wakeup refuses kicks without one (NIC-FACTS.md; igb_xsk.c from 6.14)
TEST(TxPath, ZeroCopyTxNeedsAnXdpProgramWhereTheDriverRunsItOnXdpRings)
{
	struct Row {
		DevKind kind;
		KernelVersion k;
		bool zero_copy, needs;
	};
	const Row rows[] = {
		{DevKind::i40e, KernelVersion::v6_1, true, true},
		{DevKind::i40e, KernelVersion::v6_12, true, true},
		{DevKind::mlx5_core, KernelVersion::v6_12, true, true},
		{DevKind::igb, KernelVersion::v6_12, false, true},
		{DevKind::igb, KernelVersion::v7_2, true, true},
		{DevKind::virtio_net, KernelVersion::v7_2, true, false},	// pool binds from 6.11, TX from 6.13
		{DevKind::veth, KernelVersion::v7_2, false, false},
		{DevKind::mlx4_en, KernelVersion::v6_12, false, false},
		{DevKind::unknown, KernelVersion::v6_12, false, true},
	};
	for (const auto &r : rows) {
		auto q = tx_queue_facts(r.kind, r.k, true);
		SCOPED_TRACE(std::string(dev_kind_name(r.kind)) + " " + kernel_version_name(r.k));
		EXPECT_EQ(q.zero_copy, r.zero_copy);
		EXPECT_EQ(q.zc_tx_needs_xdp, r.needs);
		EXPECT_EQ(q.zc_tx_why.empty(), !r.needs) << "a driver that needs the program says which function refuses";
	}
}

} // namespace
