// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// NetdevFeature model: device kinds as the kernel sets them up, and the resolution
// of netif_skb_features() + validate_xmit_skb() layer by layer. Every rule
// names the kernel file and function it mirrors (Debian linux-source 6.1 and
// 6.12; where they differ the code says so).
#include "xoffload/features/features.hpp"

#include <algorithm>
#include <cstdio>

#include "xoffload/core/kernel.hpp"

namespace xoffload {

namespace {

using F = NetdevFeature;

struct Named {
	NetdevFeature f;
	const char *name;
};
// net/ethtool/common.c netdev_features_strings[]
constexpr Named kNames[] = {
	{F::sg, "tx-scatter-gather"},
	{F::ip_csum, "tx-checksum-ipv4"},
	{F::hw_csum, "tx-checksum-ip-generic"},
	{F::ipv6_csum, "tx-checksum-ipv6"},
	{F::highdma, "highdma"},
	{F::fraglist, "tx-scatter-gather-fraglist"},
	{F::vlan_ctag_tx, "tx-vlan-hw-insert"},
	{F::vlan_challenged, "vlan-challenged"},
	{F::gso, "tx-generic-segmentation"},
	{F::tso, "tx-tcp-segmentation"},
	{F::gso_robust, "tx-gso-robust"},
	{F::tso_ecn, "tx-tcp-ecn-segmentation"},
	{F::tso_mangleid, "tx-tcp-mangleid-segmentation"},
	{F::tso6, "tx-tcp6-segmentation"},
	{F::gso_gre, "tx-gre-segmentation"},
	{F::gso_gre_csum, "tx-gre-csum-segmentation"},
	{F::gso_ipxip4, "tx-ipxip4-segmentation"},
	{F::gso_ipxip6, "tx-ipxip6-segmentation"},
	{F::gso_udp_tunnel, "tx-udp_tnl-segmentation"},
	{F::gso_udp_tunnel_csum, "tx-udp_tnl-csum-segmentation"},
	{F::gso_partial, "tx-gso-partial"},
	{F::gso_sctp, "tx-sctp-segmentation"},
	// NETIF_F_GSO_UDP has no ethtool string since UFO left the drivers
	{F::gso_udp, "tx-udp-fragmentation"},
	{F::gso_udp_l4, "tx-udp-segmentation"},
	{F::gso_fraglist, "tx-gso-list"},
	{F::rxcsum, "rx-checksum"},
	{F::vlan_stag_tx, "tx-vlan-stag-hw-insert"},
};

constexpr FeatureMask B(F f) { return fbit(f); }

constexpr FeatureMask kSg = B(F::sg), kHwCsum = B(F::hw_csum), kFraglist = B(F::fraglist),
		      kHighdma = B(F::highdma);

// drivers/net/veth.c VETH_FEATURES (identical in 6.1 and 6.12, TX bits)
constexpr FeatureMask kVethFeatures = kSg | kFraglist | kHwCsum | B(F::rxcsum) | kHighdma | fmask::gso_software |
				      fmask::gso_encap_all | fmask::vlan_tx;
// drivers/net/macvlan.c ALWAYS_ON_OFFLOADS / MACVLAN_FEATURES
constexpr FeatureMask kMacvlanAlwaysOn = kSg | kHwCsum | fmask::gso_software | B(F::gso_robust) |
					 fmask::gso_encap_all;
constexpr FeatureMask kMacvlanFeatures = kSg | kHwCsum | kHighdma | kFraglist | B(F::gso) | B(F::tso) |
					 B(F::tso_ecn) | B(F::tso6) | B(F::rxcsum);
// drivers/net/ipvlan/ipvlan_main.c IPVLAN_ALWAYS_ON_OFLOADS / IPVLAN_FEATURES
constexpr FeatureMask kIpvlanAlwaysOn = kSg | kHwCsum | B(F::gso_robust) | fmask::gso_software |
					fmask::gso_encap_all;
constexpr FeatureMask kIpvlanFeatures = kSg | kHwCsum | kHighdma | kFraglist | B(F::gso) | fmask::all_tso |
					B(F::gso_robust) | B(F::rxcsum);
// net/bridge/br_device.c COMMON_FEATURES
constexpr FeatureMask kBrCommon = kSg | kFraglist | kHighdma | fmask::gso | kHwCsum;
// include/linux/netdev_features.h MASTER_UPPER_DEV_VLAN_FEATURES / _ENC_FEATURES
constexpr FeatureMask kMasterVlan = kHwCsum | kSg | kFraglist | fmask::gso_software | fmask::gso_encap_all | kHighdma;
constexpr FeatureMask kMasterEnc = kHwCsum | kSg | B(F::rxcsum) | fmask::gso_software | B(F::gso_partial);
// drivers/net/vxlan/vxlan_core.c vxlan_setup(), drivers/net/geneve.c geneve_setup()
constexpr FeatureMask kTunnelFeatures = kSg | kHwCsum | kFraglist | B(F::rxcsum) | fmask::gso_software;

// include/linux/netdevice.h netdev_intersect_features()
FeatureMask intersect(FeatureMask f1, FeatureMask f2)
{
	if ((f1 ^ f2) & kHwCsum) {
		if (f1 & kHwCsum)
			f1 |= B(F::ip_csum) | B(F::ipv6_csum);
		else
			f2 |= B(F::ip_csum) | B(F::ipv6_csum);
	}
	return f1 & f2;
}

// net/core/dev.c netdev_increment_features()
FeatureMask increment(FeatureMask all, FeatureMask one, FeatureMask mask)
{
	if (mask & kHwCsum)
		mask |= fmask::csum;
	mask |= B(F::vlan_challenged);
	all |= one & (fmask::one_for_all | fmask::csum) & mask;
	if (all & kHwCsum)
		all &= ~(fmask::csum & ~kHwCsum);
	return all;
}

// include/linux/netdevice.h netdev_base_features(): ONE_FOR_ALL bits come from the lowers
FeatureMask base_features(FeatureMask f)
{
	return f & ~fmask::one_for_all;
}

// net/bridge/br_if.c br_features_recompute(), drivers/net/bonding/bond_main.c
// bond_fix_features(): start from the base, OR in what any lower has, then
// netdev_add_tso_features() keeps TSO on the master whatever the lowers do.
FeatureMask master_features(FeatureMask own, const DeviceModel *lower)
{
	FeatureMask f = base_features(own);
	if (lower)
		f = increment(f, lower->features, own);
	return increment(f, fmask::all_tso, own);
}

// net/8021q/vlan_dev.c vlan_tnl_features()
FeatureMask vlan_tnl_features(const DeviceModel &real)
{
	FeatureMask ret = real.hw_enc_features & (fmask::csum | fmask::gso_software | fmask::gso_encap_all);
	if ((ret & fmask::gso_encap_all) && (ret & fmask::csum))
		return (ret & ~fmask::csum) | kHwCsum;
	return 0;
}

} // namespace

const char *feature_name(NetdevFeature f)
{
	for (const auto &n : kNames)
		if (n.f == f)
			return n.name;
	return nullptr;
}

std::optional<NetdevFeature> feature_from_name(std::string_view name)
{
	for (const auto &n : kNames)
		if (name == n.name)
			return n.f;
	return std::nullopt;
}

std::optional<FeatureMask> feature_mask_from_name(std::string_view name)
{
	if (auto f = feature_from_name(name))
		return fbit(*f);
	// ethtool.c off_flag_def: each short name stands for the feature
	// strings matching its pattern ("tx-checksum-*", "tx-tcp*-segmentation")
	struct Short {
		std::string_view name;
		FeatureMask m;
	};
	static constexpr Short kShort[] = {
		{"rx", B(F::rxcsum)},
		{"tx", fmask::csum},
		{"sg", B(F::sg) | B(F::fraglist)},
		{"tso", fmask::all_tso},
		{"ufo", B(F::gso_udp)},
		{"gso", B(F::gso)},
		{"txvlan", B(F::vlan_ctag_tx)},
	};
	for (const auto &s : kShort)
		if (s.name == name)
			return s.m;
	return std::nullopt;
}

const std::vector<NetdevFeature> &all_features()
{
	static const std::vector<NetdevFeature> v = [] {
		std::vector<NetdevFeature> r;
		for (const auto &n : kNames)
			r.push_back(n.f);
		std::sort(r.begin(), r.end());
		return r;
	}();
	return v;
}

std::string mask_names(FeatureMask m)
{
	std::string s;
	for (NetdevFeature f : all_features())
		if (m & fbit(f)) {
			if (!s.empty())
				s += ',';
			s += feature_name(f);
		}
	return s.empty() ? "none" : s;
}

Result<KernelVersion> parse_kernel_version(std::string_view s)
{
	if (s == "6.1")
		return KernelVersion::v6_1;
	if (s == "6.12")
		return KernelVersion::v6_12;
	if (s == "7.2" || s == "newest")
		return KernelVersion::v7_2;
	if (s == "running")
		return running_kernel_model();
	return usage_error("unknown kernel '" + std::string(s) + "' (modelled: 6.1, 6.12, 7.2; or running)");
}

const char *kernel_version_name(KernelVersion k)
{
	switch (k) {
	case KernelVersion::v6_1: return "6.1";
	case KernelVersion::v6_12: return "6.12";
	case KernelVersion::v7_2: return "7.2";
	}
	return "?";
}

KernelVersion kernel_model_for(unsigned major, unsigned minor)
{
	auto at_least = [&](unsigned a, unsigned b) { return major > a || (major == a && minor >= b); };
	if (at_least(7, 2))
		return KernelVersion::v7_2;
	if (at_least(6, 12))
		return KernelVersion::v6_12;
	return KernelVersion::v6_1;
}

KernelVersion running_kernel_model()
{
	const KernelRelease &r = running_kernel();
	return kernel_model_for(r.major, r.minor);
}

namespace {
struct KindName {
	DevKind k;
	const char *name;
	const char *driver;	// ethtool -i driver
};
constexpr KindName kKinds[] = {
	{DevKind::veth, "veth", "veth"},
	{DevKind::tun, "tun", "tun"},
	{DevKind::macvlan, "macvlan", "macvlan"},
	{DevKind::ipvlan, "ipvlan", "ipvlan"},
	{DevKind::bridge, "bridge", "bridge"},
	{DevKind::bond, "bond", "bonding"},
	{DevKind::team, "team", "team"},
	{DevKind::vlan, "vlan", "802.1Q VLAN Support"},
	{DevKind::vxlan, "vxlan", "vxlan"},
	{DevKind::geneve, "geneve", "geneve"},
	{DevKind::virtio_net, "virtio_net", "virtio_net"},
	{DevKind::igb, "igb", "igb"},
	{DevKind::i40e, "i40e", "i40e"},
	{DevKind::mlx4_en, "mlx4_en", "mlx4_en"},
	{DevKind::mlx5_core, "mlx5_core", "mlx5_core"},
	{DevKind::dummy, "dummy", "dummy"},
	{DevKind::ice, "ice", "ice"},
	{DevKind::igc, "igc", "igc"},
	{DevKind::stmmac, "stmmac", "st_gmac"},
	{DevKind::vmxnet3, "vmxnet3", "vmxnet3"},
};
} // namespace

const char *ipvlan_mode_name(IpvlanMode m)
{
	switch (m) {
	case IpvlanMode::l2: return "l2";
	case IpvlanMode::l3: return "l3";
	case IpvlanMode::l3s: return "l3s";
	}
	return "?";
}

const char *dev_kind_name(DevKind k)
{
	for (const auto &n : kKinds)
		if (n.k == k)
			return n.name;
	return "unknown";
}

std::optional<DevKind> dev_kind_from_name(std::string_view s)
{
	for (const auto &n : kKinds)
		if (s == n.name || s == n.driver)
			return n.k;
	if (s == "tap")
		return DevKind::tun;
	if (s == "bonding")
		return DevKind::bond;
	if (s == "mlx4")
		return DevKind::mlx4_en;
	if (s == "mlx5")
		return DevKind::mlx5_core;
	return std::nullopt;
}

const char *features_check_name(FeaturesCheck c)
{
	switch (c) {
	case FeaturesCheck::dflt: return "none (dflt_features_check -> vlan_features_check)";
	case FeaturesCheck::passthru: return "passthru_features_check";
	case FeaturesCheck::igb: return "igb_features_check";
	case FeaturesCheck::i40e: return "i40e_features_check";
	case FeaturesCheck::mlx4: return "mlx4_en_features_check";
	case FeaturesCheck::mlx4_qinq: return "mlx4_en_features_check (kpatch 0004: QinQ with HW S-tag)";
	}
	return "?";
}

std::string DeviceModel::name() const
{
	return spec.ifname.empty() ? std::string(dev_kind_name(spec.kind)) : spec.ifname;
}

namespace {

DeviceModel model_one(const LayerSpec &s, const DeviceModel *lower, KernelVersion k, bool patched)
{
	DeviceModel d;
	d.spec = s;
	d.check = FeaturesCheck::passthru;
	switch (s.kind) {
	case DevKind::veth:
		d.features = kVethFeatures;
		d.vlan_features = kVethFeatures & ~fmask::vlan_tx;
		d.hw_enc_features = kVethFeatures;
		d.source = "drivers/net/veth.c veth_setup(): VETH_FEATURES";
		if (s.peer_xdp) {
			// veth_fix_features(): an XDP program on the peer clears GSO
			d.features &= ~fmask::gso_software;
			d.source += "; veth_fix_features(): peer has XDP, GSO_SOFTWARE cleared";
		}
		d.check_source = "drivers/net/veth.c veth_netdev_ops";
		break;
	case DevKind::tun: {
		// drivers/net/tun.c tun_set_iff(): hw_features; tun_net_fix_features()
		// masks TUN_USER_FEATURES with what TUNSETOFFLOAD (set_offload) allowed
		FeatureMask user = kHwCsum | B(F::tso_ecn) | B(F::tso) | B(F::tso6);
		if (k >= KernelVersion::v6_12)
			user |= B(F::gso_udp_l4);	// TUN_F_USO4/6 since 6.2
		d.features = kSg | kFraglist | fmask::vlan_tx | (s.tun_offload ? user : 0);
		d.vlan_features = d.features & ~fmask::vlan_tx;
		d.source = std::string("drivers/net/tun.c tun_set_iff(), tun_net_fix_features(): ") +
			   (s.tun_offload ? "TUNSETOFFLOAD csum+tso" : "no TUNSETOFFLOAD: csum/TSO off");
		d.check_source = "drivers/net/tun.c tap_netdev_ops";
		break;
	}
	case DevKind::macvlan: {
		FeatureMask lf = lower ? lower->features : 0, lv = lower ? lower->vlan_features : 0;
		d.features = (lf & kMacvlanFeatures) | kMacvlanAlwaysOn;
		d.vlan_features = (lv & kMacvlanFeatures) | kMacvlanAlwaysOn;
		d.hw_enc_features = d.features;
		d.source = "drivers/net/macvlan.c macvlan_init()/macvlan_fix_features(): lower & MACVLAN_FEATURES | "
			   "ALWAYS_ON_OFFLOADS";
		d.check_source = "drivers/net/macvlan.c macvlan_netdev_ops";
		break;
	}
	case DevKind::ipvlan: {
		FeatureMask lf = lower ? lower->features : 0, lv = lower ? lower->vlan_features : 0;
		d.features = (lf & kIpvlanFeatures) | kIpvlanAlwaysOn | B(F::vlan_challenged);
		d.vlan_features = (lv & kIpvlanFeatures) | kIpvlanAlwaysOn;
		d.hw_enc_features = d.features;
		d.source = std::string("drivers/net/ipvlan/ipvlan_main.c ipvlan_init(): phy & IPVLAN_FEATURES | "
				       "IPVLAN_ALWAYS_ON; mode ") + ipvlan_mode_name(d.spec.ipvlan_mode);
		d.check = patched ? FeaturesCheck::passthru : FeaturesCheck::dflt;
		d.check_source = patched ? "kpatch 0003 ipvlan_netdev_ops" : "drivers/net/ipvlan/ipvlan_main.c ipvlan_netdev_ops";
		break;
	}
	case DevKind::bridge:
		d.features = master_features(kBrCommon | fmask::vlan_tx, lower);
		d.source = "net/bridge/br_device.c br_dev_setup() COMMON_FEATURES; br_if.c br_features_recompute()";
		if (k >= KernelVersion::v7_2) {
			// br_add_if() -> netdev_compute_master_upper_features(), as bond
			// and team: vlan_features and hw_enc_features from the ports, so
			// an encapsulated GSO skb keeps its GSO through the bridge (6.18
			// still segments it there, Debian's 7.2 does not: measured by
			// tests/integration/test_features_kernel.cpp)
			d.vlan_features = increment(base_features(kMasterVlan), lower ? lower->vlan_features : 0, kMasterVlan);
			d.hw_enc_features = increment(base_features(kMasterEnc), lower ? lower->hw_enc_features : 0, kMasterEnc) |
					    fmask::gso_encap_all | fmask::vlan_tx;
			d.source += "; net/core/dev.c netdev_compute_master_upper_features(): vlan_features, hw_enc_features "
				    "from the ports";
		} else {
			d.vlan_features = kBrCommon;
			d.hw_enc_features = 0;	// br_dev_setup() never sets it
		}
		d.check_source = "net/bridge/br_device.c br_netdev_ops";
		break;
	case DevKind::bond:
	case DevKind::team: {
		FeatureMask own = kMasterVlan | fmask::vlan_tx | (s.kind == DevKind::bond ? B(F::gso_partial) : 0);
		d.features = master_features(own, lower) | fmask::vlan_tx;
		d.vlan_features = increment(base_features(kMasterVlan), lower ? lower->vlan_features : 0, kMasterVlan);
		d.hw_enc_features = increment(base_features(kMasterEnc), lower ? lower->hw_enc_features : 0, kMasterEnc) |
				    fmask::gso_encap_all | fmask::vlan_tx;
		d.source = s.kind == DevKind::bond
				   ? "drivers/net/bonding/bond_main.c bond_setup(), bond_fix_features(), "
				     "netdev_compute_master_upper_features()"
				   : "drivers/net/team/team.c team_setup(), __team_compute_features()";
		d.check_source = s.kind == DevKind::bond ? "drivers/net/bonding/bond_main.c bond_netdev_ops"
							 : "drivers/net/team/team.c team_netdev_ops";
		break;
	}
	case DevKind::vlan: {
		// net/8021q/vlan_dev.c vlan_dev_init() hw_features, vlan_dev_fix_features()
		FeatureMask hw = kHwCsum | kSg | kFraglist | fmask::gso_software | fmask::gso_encap_all | kHighdma;
		FeatureMask lf = 0, lv = 0;
		if (lower) {
			lf = intersect(lower->vlan_features | B(F::rxcsum), lower->features);
			if (lf & (B(F::ip_csum) | B(F::ipv6_csum)))
				lf |= kHwCsum;
			lv = lower->vlan_features;
		}
		d.features = intersect(hw, lf) | (hw & fmask::gso_software);
		d.vlan_features = lv;
		d.hw_enc_features = lower ? vlan_tnl_features(*lower) : 0;
		d.source = "net/8021q/vlan_dev.c vlan_dev_init(), vlan_dev_fix_features(): real_dev vlan_features & "
			   "features, GSO_SOFTWARE kept";
		d.check = FeaturesCheck::dflt;
		d.check_source = "net/8021q/vlan_dev.c vlan_netdev_ops";
		break;
	}
	case DevKind::vxlan:
		d.features = kTunnelFeatures;
		d.vlan_features = d.features;
		d.source = "drivers/net/vxlan/vxlan_core.c vxlan_setup(): vlan_features = features, no hw_enc_features";
		d.check = patched ? FeaturesCheck::passthru : FeaturesCheck::dflt;
		d.check_source = patched ? "kpatch 0002 vxlan_netdev_ether_ops" : "drivers/net/vxlan/vxlan_core.c vxlan_netdev_ether_ops";
		break;
	case DevKind::geneve:
		d.features = kTunnelFeatures;
		d.vlan_features = patched ? d.features : 0;
		d.source = patched ? "kpatch 0001 geneve_setup(): vlan_features = features"
				   : "drivers/net/geneve.c geneve_setup(): vlan_features never set (0)";
		d.check = patched ? FeaturesCheck::passthru : FeaturesCheck::dflt;
		d.check_source = patched ? "kpatch 0002 geneve_netdev_ops" : "drivers/net/geneve.c geneve_netdev_ops";
		break;
	case DevKind::virtio_net:
		// drivers/net/virtio_net.c virtnet_probe(), a host offering csum, TSO and (6.2+) USO
		d.features = kHwCsum | kSg | (fmask::all_tso & ~B(F::tso_mangleid)) | B(F::gso_robust) | kHighdma |
			     (k >= KernelVersion::v6_12 ? B(F::gso_udp_l4) : 0);
		d.vlan_features = d.features;
		d.source = "drivers/net/virtio_net.c virtnet_probe(): host csum+tso(+uso), vlan_features = features";
		d.check_source = "drivers/net/virtio_net.c virtnet_netdev";
		break;
	case DevKind::igb: {
		// drivers/net/ethernet/intel/igb/igb_main.c igb_probe() (82576 and later)
		FeatureMask partial = fmask::gso_encap_all;
		d.features = kSg | B(F::tso) | B(F::tso6) | kHwCsum | B(F::gso_udp_l4) | B(F::gso_partial) | partial |
			     kHighdma;
		d.vlan_features = d.features | B(F::tso_mangleid);
		d.hw_enc_features = d.vlan_features;
		d.features |= B(F::vlan_ctag_tx);
		d.gso_partial_features = partial;
		d.source = "drivers/net/ethernet/intel/igb/igb_main.c igb_probe()";
		d.check = FeaturesCheck::igb;
		d.check_source = "drivers/net/ethernet/intel/igb/igb_main.c igb_features_check()";
		break;
	}
	case DevKind::i40e: {
		// drivers/net/ethernet/intel/i40e/i40e_main.c i40e_config_netdev()
		FeatureMask enc = kSg | kHwCsum | kHighdma | B(F::tso) | B(F::tso_ecn) | B(F::tso6) | fmask::gso_encap_all |
				  B(F::gso_partial) | B(F::gso_udp_l4);
		d.hw_enc_features = enc;
		d.vlan_features = enc | B(F::tso_mangleid);
		d.gso_partial_features = fmask::gso_encap_all;	// I40E_GSO_PARTIAL_FEATURES
		d.features = enc | B(F::vlan_ctag_tx);
		d.source = "drivers/net/ethernet/intel/i40e/i40e_main.c i40e_config_netdev()";
		d.check = FeaturesCheck::i40e;
		d.check_source = "drivers/net/ethernet/intel/i40e/i40e_main.c i40e_features_check()";
		break;
	}
	case DevKind::mlx4_en: {
		// drivers/net/ethernet/mellanox/mlx4/en_netdev.c mlx4_en_init_netdev(), LSO + VXLAN offload mode
		FeatureMask hw = kSg | B(F::ip_csum) | B(F::ipv6_csum) | B(F::tso) | B(F::tso6) | B(F::gso_udp_tunnel) |
				 B(F::gso_udp_tunnel_csum) | B(F::gso_partial);
		d.vlan_features = hw;
		d.hw_enc_features = B(F::ip_csum) | B(F::ipv6_csum) | B(F::tso) | B(F::tso6) | B(F::gso_udp_tunnel) |
				    B(F::gso_udp_tunnel_csum) | B(F::gso_partial);
		d.gso_partial_features = B(F::gso_udp_tunnel_csum);
		d.features = hw | kHighdma | B(F::vlan_ctag_tx) | (s.mlx4_phv ? B(F::vlan_stag_tx) : 0);
		d.source = "drivers/net/ethernet/mellanox/mlx4/en_netdev.c mlx4_en_init_netdev()";
		d.check = patched ? FeaturesCheck::mlx4_qinq : FeaturesCheck::mlx4;
		d.check_source = patched ? "kpatch 0004 mlx4_en_features_check()"
					 : "drivers/net/ethernet/mellanox/mlx4/en_netdev.c mlx4_en_features_check()";
		break;
	}
	case DevKind::mlx5_core:
		// drivers/net/ethernet/mellanox/mlx5/core/en_main.c mlx5e_build_nic_netdev() (6.12)
		d.vlan_features = kSg | kHwCsum | B(F::tso) | B(F::tso6) | B(F::gso_partial) | B(F::gso_udp_tunnel) |
				  B(F::gso_udp_tunnel_csum);
		d.hw_enc_features = kHwCsum | B(F::tso) | B(F::tso6) | B(F::gso_partial) | B(F::gso_udp_tunnel) |
				    B(F::gso_udp_tunnel_csum) | B(F::vlan_ctag_tx);
		d.features = d.vlan_features | B(F::gso_udp_l4) | kHighdma | fmask::vlan_tx;
		d.source = "drivers/net/ethernet/mellanox/mlx5/core/en_main.c mlx5e_build_nic_netdev()";
		// mlx5e_features_check() starts with vlan_features_check()
		d.check = FeaturesCheck::dflt;
		d.check_source = "drivers/net/ethernet/mellanox/mlx5/core/en_main.c mlx5e_features_check()";
		break;
	case DevKind::dummy:
		// drivers/net/dummy.c dummy_setup(): a device with no
		// ndo_features_check that takes tunnel GSO (hw_enc_features)
		d.features = kSg | kFraglist | fmask::gso_software | kHwCsum | kHighdma | fmask::gso_encap_all;
		d.vlan_features = 0;
		d.hw_enc_features = d.features;
		d.check = FeaturesCheck::dflt;
		d.source = "drivers/net/dummy.c dummy_setup(): SG|FRAGLIST|GSO_SOFTWARE|HW_CSUM|HIGHDMA|GSO_ENCAP_ALL";
		d.check_source = "drivers/net/dummy.c dummy_netdev_ops";
		break;
	case DevKind::ice:
	case DevKind::igc:
	case DevKind::stmmac:
	case DevKind::vmxnet3:
		// RX/AF_XDP facts only (nic.cpp): TX features from the live device
		d.features = d.vlan_features = 0;
		d.check = FeaturesCheck::dflt;
		d.source = std::string(dev_kind_name(s.kind)) + ": TX features not modelled";
		d.check_source = "not modelled";
		break;
	case DevKind::unknown:
		d.features = d.vlan_features = 0;
		d.check = FeaturesCheck::dflt;
		d.source = "unknown kind: nothing assumed";
		d.check_source = "unknown";
		break;
	}
	d.inner_qinq_gso_check = patched && d.check != FeaturesCheck::passthru;
	if (s.live) {
		d.features = *s.live;
		d.source += "; dev->features read from the running device";
	}
	if (s.force_on || s.force_off) {
		d.features = (d.features | s.force_on) & ~s.force_off;
		d.source += "; ethtool -K overrides";
	}
	return d;
}

} // namespace

std::vector<DeviceModel> build_stack(const std::vector<LayerSpec> &layers, KernelVersion k, bool patched)
{
	std::vector<DeviceModel> out(layers.size());
	for (size_t i = layers.size(); i-- > 0;) {
		DeviceModel d = model_one(layers[i], i + 1 < layers.size() ? &out[i + 1] : nullptr, k, patched);
		// net/core/dev.c register_netdevice(), for every device
		if (d.vlan_features & B(F::tso))
			d.vlan_features |= B(F::tso_mangleid);
		if (d.hw_enc_features & B(F::tso))
			d.hw_enc_features |= B(F::tso_mangleid);
		d.vlan_features |= kHighdma;
		d.hw_enc_features |= kSg | B(F::gso_partial);
		out[i] = std::move(d);
	}
	return out;
}

Result<std::vector<LayerSpec>> parse_stack(std::string_view s)
{
	std::vector<LayerSpec> out;
	if (s.empty())
		return usage_error("empty --stack");
	size_t pos = 0;
	while (pos <= s.size()) {
		size_t slash = s.find('/', pos);
		std::string_view layer = s.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
		pos = slash == std::string_view::npos ? s.size() + 1 : slash + 1;
		std::string_view kind = layer.substr(0, layer.find(':'));
		std::string_view opts = layer.size() > kind.size() ? layer.substr(kind.size() + 1) : std::string_view{};
		auto k = dev_kind_from_name(kind);
		if (!k)
			return usage_error("unknown device kind '" + std::string(kind) +
					   "' (veth tun macvlan ipvlan bridge bond team vlan vxlan geneve virtio_net igb i40e "
					   "mlx4_en mlx5_core dummy)");
		if (*k == DevKind::ice || *k == DevKind::igc || *k == DevKind::stmmac || *k == DevKind::vmxnet3)
			return usage_error("--stack: the TX features of " + std::string(kind) +
					   " are not modelled (its RX facts: features --rx --driver " + std::string(kind) + ")");
		LayerSpec ls;
		ls.kind = *k;
		while (!opts.empty()) {
			size_t c = opts.find(',');
			std::string_view o = opts.substr(0, c);
			opts = c == std::string_view::npos ? std::string_view{} : opts.substr(c + 1);
			if (o == "802.1Q" || o == "802.1q" || o == "0x8100")
				ls.vlan_proto = 0x8100;
			else if (o == "802.1ad" || o == "0x88a8")
				ls.vlan_proto = 0x88a8;
			else if (o == "peer-xdp")
				ls.peer_xdp = true;
			else if (o == "offload")
				ls.tun_offload = true;
			else if (o == "udpcsum")
				ls.udp_csum = true;
			else if (o == "phv")
				ls.mlx4_phv = true;
			else if (*k == DevKind::ipvlan && (o == "l2" || o == "l3" || o == "l3s"))
				ls.ipvlan_mode = o == "l2" ? IpvlanMode::l2 : o == "l3" ? IpvlanMode::l3 : IpvlanMode::l3s;
			else if (!o.empty() && (o[0] == '+' || o[0] == '-')) {
				auto m = feature_mask_from_name(o.substr(1));
				if (!m)
					return usage_error("unknown feature '" + std::string(o.substr(1)) +
							   "' in --stack (ethtool -k names, or tx, sg, tso, ufo, gso, rx, txvlan)");
				(o[0] == '+' ? ls.force_on : ls.force_off) |= *m;
			} else
				return usage_error("unknown option '" + std::string(o) + "' for " + std::string(kind));
		}
		if ((ls.vlan_proto != 0x8100) && ls.kind != DevKind::vlan)
			return usage_error("802.1ad applies to vlan layers only");
		out.push_back(ls);
	}
	return out;
}

Result<L4> parse_l4(std::string_view s)
{
	if (s == "tcp4" || s == "tcp")
		return L4::tcp4;
	if (s == "tcp6")
		return L4::tcp6;
	if (s == "udp" || s == "udp4")
		return L4::udp4;
	if (s == "udp6")
		return L4::udp6;
	if (s == "ufo" || s == "ufo4")
		return L4::ufo4;
	return usage_error("unknown packet '" + std::string(s) + "' (tcp4 tcp6 udp udp6 ufo)");
}

const char *l4_name(L4 l)
{
	switch (l) {
	case L4::tcp4: return "tcp4";
	case L4::tcp6: return "tcp6";
	case L4::udp4: return "udp4";
	case L4::udp6: return "udp6";
	case L4::ufo4: return "ufo4";
	}
	return "?";
}

std::string PacketClass::describe() const
{
	std::string s = l4_name(l4);
	s += gso ? " gso" : " non-gso";
	s += " vlans=" + std::to_string(vlans);
	if (outer_tag_in_meta && vlans)
		s += " (outer tag in skb metadata)";
	if (encap != Encap::none)
		s += encap == Encap::vxlan ? " encap=vxlan" : " encap=geneve";
	s += csum_partial ? " csum=partial" : " csum=none";
	return s;
}

namespace {

bool is_v6(L4 l) { return l == L4::tcp6 || l == L4::udp6; }

FeatureMask gso_type_bits(L4 l)
{
	switch (l) {
	case L4::tcp4: return B(F::tso);
	case L4::tcp6: return B(F::tso6);
	case L4::udp4:
	case L4::udp6: return B(F::gso_udp_l4);
	case L4::ufo4: return B(F::gso_udp);
	}
	return 0;
}

// include/linux/skbuff.h can_checksum_protocol()
bool can_checksum(FeatureMask f, bool v6)
{
	if (f & kHwCsum)
		return true;
	return v6 ? (f & B(F::ipv6_csum)) : (f & B(F::ip_csum));
}

unsigned nsegs(const PacketClass &p)
{
	unsigned bytes = p.payload + (p.l4 == L4::ufo4 ? 8 : 0);	// UFO fragments the UDP header too
	unsigned mss = p.gso_size ? p.gso_size : 1;
	return (bytes + mss - 1) / mss;
}

const char *kDevC = "net/core/dev.c ";

void step(LayerResult &lr, FeatureMask before, FeatureMask after, std::string rule, std::string cite)
{
	lr.trace.push_back(TraceStep{std::move(rule), std::move(cite), before & ~after});
}

} // namespace

Resolution resolve(const std::vector<DeviceModel> &stack, const PacketClass &pkt, KernelVersion)
{
	Resolution res;
	bool gso = pkt.gso;
	FeatureMask gso_type = gso ? gso_type_bits(pkt.l4) : 0;
	unsigned tags = std::min(pkt.vlans, 2u);
	bool meta = pkt.outer_tag_in_meta && tags > 0;
	uint16_t meta_proto = tags == 2 ? 0x88a8 : 0x8100;
	bool encap = pkt.encap != Encap::none;
	bool v6 = encap ? false : is_v6(pkt.l4);	// harmonize_features() looks at the outer protocol
	bool partial = pkt.csum_partial;
	Encap tunnel = pkt.encap;
	unsigned inner_tags = 0;	// tags inside a tunnel this stack encapsulated in
	unsigned skbs = 1;
	if (encap && gso)
		gso_type |= B(F::gso_udp_tunnel);

	for (size_t i = 0; i < stack.size(); i++) {
		const DeviceModel &d = stack[i];
		LayerResult lr;
		lr.device = d.name();
		lr.kind = d.spec.kind;
		lr.dev_features = d.features;
		lr.tags = tags;
		lr.encapsulated = encap;
		lr.gso_in = gso;
		lr.skbs_in = skbs;
		FeatureMask f = d.features, b;

		if (gso && d.gso_partial_features) {
			b = f;
			f &= ~d.gso_partial_features;
			if (b != f)
				step(lr, b, f, "not SKB_GSO_PARTIAL: dev->gso_partial_features removed",
				     std::string(kDevC) + "gso_features_check()");
		}
		if (gso && encap && inner_tags >= 2 && d.inner_qinq_gso_check) {
			b = f;
			f &= ~fmask::gso;
			step(lr, b, f, "kpatch 0002: encapsulated skb with more than one inner tag on a device that "
				       "parses frames (not passthru_features_check): GSO removed",
			     std::string(kDevC) + "gso_features_check(), skb_inner_vlan_tagged_multi()");
		}
		if (encap) {
			b = f;
			f &= d.hw_enc_features;
			step(lr, b, f, "skb->encapsulation: features &= hw_enc_features",
			     std::string(kDevC) + "netif_skb_features()");
		}
		if (tags > 0) {
			b = f;
			f = intersect(f, d.vlan_features | fmask::vlan_tx);
			step(lr, b, f,
			     "VLAN-tagged skb: features &= vlan_features | HW_VLAN_CTAG_TX | HW_VLAN_STAG_TX",
			     std::string(kDevC) + "netif_skb_features(), netdev_intersect_features()");
		}
		auto vlan_check = [&](const char *who) {
			b = f;
			if (tags >= 2)
				f &= kSg | kHighdma | kHwCsum | kFraglist | fmask::vlan_tx;
			step(lr, b, f,
			     std::string(who) + (tags >= 2 ? ": multi-tagged skb keeps only SG|HIGHDMA|HW_CSUM|FRAGLIST|VLAN_TX"
						      : ": fewer than two tags, nothing removed"),
			     "include/linux/if_vlan.h vlan_features_check()");
		};
		switch (d.check) {
		case FeaturesCheck::passthru:
			step(lr, f, f, "ndo_features_check = passthru_features_check: keeps everything (" +
					       d.check_source + ")",
			     std::string(kDevC) + "passthru_features_check()");
			break;
		case FeaturesCheck::dflt:
			if (d.spec.kind == DevKind::mlx5_core)
				vlan_check("mlx5e_features_check() calls vlan_features_check()");
			else
				vlan_check(("no ndo_features_check (" + d.check_source + "): dflt_features_check()").c_str());
			break;
		case FeaturesCheck::igb:
			// igb_features_check(): MAC header <= IGB_MAX_MAC_HDR_LEN holds for <= 2 tags
			b = f;
			if (encap && !(f & B(F::tso_mangleid)))
				f &= ~B(F::tso);
			step(lr, b, f, "igb_features_check(): no vlan_features_check, header lengths fit"
				       + std::string(encap ? "; tunnel TSO needs TSO_MANGLEID" : ""),
			     d.check_source);
			break;
		case FeaturesCheck::i40e:
			b = f;
			if (partial && gso && pkt.gso_size < 64)
				f &= ~fmask::gso;
			step(lr, b, f, "i40e_features_check(): no vlan_features_check; GSO only with gso_size >= 64",
			     d.check_source);
			break;
		case FeaturesCheck::mlx4:
		case FeaturesCheck::mlx4_qinq: {
			bool skip = d.check == FeaturesCheck::mlx4_qinq && (f & B(F::vlan_stag_tx)) && meta &&
				    meta_proto == 0x88a8 && tags == 2;
			if (skip)
				step(lr, f, f, "kpatch 0004: S-tag inserted by hardware, one 802.1Q tag in the packet: "
					       "vlan_features_check() skipped", d.check_source);
			else
				vlan_check("mlx4_en_features_check() calls vlan_features_check() unconditionally");
			if (encap && partial && tunnel == Encap::geneve) {
				b = f;
				f &= ~(fmask::csum | fmask::gso);
				step(lr, b, f, "mlx4_en_features_check(): encapsulated skb not to the VXLAN port", d.check_source);
			}
			break;
		}
		}
		if (partial && !can_checksum(f, v6)) {
			b = f;
			f &= ~(fmask::csum | fmask::gso);
			step(lr, b, f, "CHECKSUM_PARTIAL but no checksum feature for the protocol: CSUM and GSO removed",
			     std::string(kDevC) + "harmonize_features(), can_checksum_protocol()");
		}
		lr.effective = f;

		// validate_xmit_skb(): VLAN, then GSO, then checksum
		if (meta) {
			FeatureMask need = meta_proto == 0x88a8 ? B(F::vlan_stag_tx) : B(F::vlan_ctag_tx);
			if (!(f & need)) {
				meta = false;
				lr.vlan_sw_insert = true;
				step(lr, f, f, "tag in skb metadata but no HW_VLAN_*_TX: pushed into the packet in software",
				     std::string(kDevC) + "validate_xmit_vlan()");
			}
		}
		if (gso) {
			FeatureMask missing = gso_type & ~f;
			// GSO partial: the type bits gso_features_check() took away as
			// dev->gso_partial_features come back once skb_segment() has cut
			// the skb to a multiple of gso_size and set SKB_GSO_PARTIAL; the
			// device segments that one skb (net/core/skbuff.c skb_segment())
			if (missing && partial && (f & B(F::gso_partial)) && !(missing & ~d.gso_partial_features) &&
			    !(missing & ~d.features) && (gso_type & f & fmask::gso_software)) {
				unsigned whole = pkt.payload / (pkt.gso_size ? pkt.gso_size : 1);
				unsigned n = whole && pkt.payload % pkt.gso_size ? 2 : 1;
				skbs *= n;
				lr.gso_partial = true;
				step(lr, f, f, "GSO partial: software cuts to " + std::to_string(n) +
						       " skb(s) of whole gso_size multiples with SKB_GSO_PARTIAL, the device "
						       "segments (" + mask_names(missing) + " in gso_partial_features)",
				     "net/core/dev.c gso_features_check(), net/core/skbuff.c skb_segment()");
				missing = 0;
			}
			if (missing || !partial) {
				lr.sw_segmented = true;
				unsigned n = nsegs(pkt);
				skbs *= n;
				gso = false;
				std::string why = missing ? "missing " + mask_names(missing) : "skb not CHECKSUM_PARTIAL";
				step(lr, f, f, "software GSO into " + std::to_string(n) + " skbs (" + why + ")",
				     std::string(kDevC) + "validate_xmit_skb(), netif_needs_gso(), skb_gso_segment()");
				if (pkt.l4 == L4::ufo4 || !can_checksum(f, v6)) {
					lr.sw_csum = partial;
					partial = false;
					if (lr.sw_csum)
						step(lr, f, f, pkt.l4 == L4::ufo4 ? "UFO: UDP checksum of the whole datagram in software"
										  : "segments checksummed during segmentation",
						     pkt.l4 == L4::ufo4 ? "net/ipv4/udp_offload.c udp4_ufo_fragment()"
									: "net/core/skbuff.c skb_segment()");
				}
			}
		}
		if (!gso && partial && !can_checksum(f, v6)) {
			lr.sw_csum = true;
			partial = false;
			step(lr, f, f, "checksum in software", std::string(kDevC) + "validate_xmit_skb(), skb_csum_hwoffload_help()");
		}
		lr.skbs_out = skbs;

		// what the device's xmit does with the skb
		switch (d.spec.kind) {
		case DevKind::vlan:
			tags = std::min(tags + 1, 2u);
			meta = true;
			meta_proto = d.spec.vlan_proto;
			step(lr, f, f, std::string("adds its ") + (meta_proto == 0x88a8 ? "802.1ad" : "802.1Q") +
					       " tag in skb metadata",
			     "net/8021q/vlan_dev.c vlan_dev_hard_start_xmit(), __vlan_hwaccel_put_tag()");
			break;
		case DevKind::vxlan:
		case DevKind::geneve:
			inner_tags = tags;	// validate_xmit_vlan() put any metadata tag in the packet
			tags = 0;
			meta = false;
			encap = true;
			tunnel = d.spec.kind == DevKind::vxlan ? Encap::vxlan : Encap::geneve;
			v6 = false;
			if (gso)
				gso_type |= d.spec.udp_csum ? B(F::gso_udp_tunnel_csum) : B(F::gso_udp_tunnel);
			step(lr, f, f, std::string("encapsulates in UDP/IPv4") + (gso ? ": SKB_GSO_UDP_TUNNEL added" : ""),
			     d.spec.kind == DevKind::vxlan ? "drivers/net/vxlan/vxlan_core.c vxlan_xmit_one(), "
							     "udp_tunnel_handle_offloads()"
							   : "drivers/net/geneve.c geneve_xmit_skb(), udp_tunnel_handle_offloads()");
			break;
		case DevKind::ipvlan: {
			// L3/L3S route what they send: ipvlan_xmit_mode_l3() ->
			// ipvlan_process_outbound() takes IPv4 and IPv6 only, and a
			// frame with a tag in the packet has skb->protocol 802.1Q/AD
			const unsigned in_band = tags - (meta ? 1 : 0);
			if (d.spec.ipvlan_mode != IpvlanMode::l2 && in_band > 0) {
				lr.dropped = true;
				res.drop_layer = static_cast<int>(i);
				res.dropped_skbs = skbs;
				res.drop_why = std::string("ipvlan mode ") + ipvlan_mode_name(d.spec.ipvlan_mode) +
					       " routes IPv4 and IPv6 only: a frame with a tag in the packet is dropped";
				step(lr, f, f, res.drop_why + " (\"Dropped outbound packet type=" +
						       (tags == 2 && !meta ? "88a8" : "8100") + "\")",
				     "drivers/net/ipvlan/ipvlan_core.c ipvlan_xmit_mode_l3(), ipvlan_process_outbound()");
			}
			break;
		}
		default:
			break;
		}
		const bool dropped = lr.dropped;
		res.layers.push_back(std::move(lr));
		if (dropped) {
			for (size_t j = i + 1; j < stack.size(); j++) {
				LayerResult below;
				below.device = stack[j].name();
				below.kind = stack[j].spec.kind;
				below.dev_features = stack[j].features;
				below.reached = false;
				below.skbs_in = below.skbs_out = 0;
				res.layers.push_back(std::move(below));
			}
			break;
		}
	}

	for (size_t i = 0; i < res.layers.size(); i++) {
		const auto &l = res.layers[i];
		if (l.sw_segmented && res.seg_layer < 0) {
			res.seg = Where::software;
			res.seg_layer = static_cast<int>(i);
		}
		if (l.sw_csum && res.csum_layer < 0) {
			res.csum = Where::software;
			res.csum_layer = static_cast<int>(i);
		}
	}
	int last = static_cast<int>(res.layers.size()) - 1;
	const bool dropped = res.drop_layer >= 0;
	if (res.seg_layer < 0 && gso) {
		res.seg = dropped ? Where::dropped : Where::hardware;
		res.seg_layer = dropped ? res.drop_layer : last;
	}
	if (res.csum_layer < 0 && partial) {
		res.csum = dropped ? Where::dropped : Where::hardware;
		res.csum_layer = dropped ? res.drop_layer : last;
	}
	if (last >= 0) {
		res.bottom_skbs = res.layers[last].skbs_out;
		res.bottom_gso = gso && !dropped;
		res.bottom_skbs_in = res.layers[last].skbs_in;
		res.bottom_gso_in = res.layers[last].gso_in;
	}
	return res;
}

const char *Resolution::placement(bool of_seg) const
{
	const Where w = of_seg ? seg : csum;
	const int layer = of_seg ? seg_layer : csum_layer;
	if (w == Where::none || layer < 0)
		return "not_requested";
	if (w == Where::software)
		return "software";
	if (w == Where::dropped)
		return "dropped";
	const DevKind k = layers[layer].kind;
	if (k == DevKind::veth || k == DevKind::tun || k == DevKind::dummy || k == DevKind::unknown)
		return "none_in_stack";
	return "hardware";
}

std::string Resolution::summary() const
{
	auto where = [&](bool of_seg, const char *what) {
		const std::string_view p = placement(of_seg);
		const int layer = of_seg ? seg_layer : csum_layer;
		if (p == "not_requested")
			return std::string(what) + ": not requested";
		const LayerResult &l = layers[layer];
		if (p == "software")
			return std::string(what) + ": software at " + l.device;
		if (p == "none_in_stack")
			return std::string(what) + ": none in this stack, " + l.device + " hands the skb on as it is";
		if (p == "dropped")
			return std::string(what) + ": never, dropped at " + l.device;
		return std::string(what) + ": hardware (" + l.device + ")";
	};
	std::string s = where(true, "segmentation") + "; " + where(false, "checksum") + "; ";
	if (drop_layer >= 0)
		return s + std::to_string(dropped_skbs) + (dropped_skbs == 1 ? " skb" : " skbs") + " dropped at " +
		       layers[drop_layer].device + " (" + drop_why + "); nothing leaves the bottom device";
	return s + std::to_string(bottom_skbs) + (bottom_gso ? " GSO skb" : " skb") + (bottom_skbs == 1 ? " leaves" : "s leave") +
	       " the bottom device";
}

} // namespace xoffload
