// Netdev offload feature model: feature bits with ethtool's names, device
// kinds with the features/vlan_features/hw_enc_features/ndo_features_check
// the kernel gives them (6.1 and 6.12), and the layer-by-layer resolution of
// netif_skb_features() for one packet class down a device stack: where the
// super-packet gets segmented and checksummed, and the rule that decided it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xoffload/result.hpp"

namespace xoffload {

// Bit numbers as in include/linux/netdev_features.h (enum netdev_features),
// identical in 6.1 and 6.12 for every bit modelled here.
enum class NetdevFeature : uint8_t {
	sg = 0, ip_csum = 1, hw_csum = 3, ipv6_csum = 4, highdma = 5, fraglist = 6,
	vlan_ctag_tx = 7, vlan_challenged = 10, gso = 11,
	tso = 16, gso_robust = 17, tso_ecn = 18, tso_mangleid = 19, tso6 = 20,
	gso_gre = 22, gso_gre_csum = 23, gso_ipxip4 = 24, gso_ipxip6 = 25,
	gso_udp_tunnel = 26, gso_udp_tunnel_csum = 27, gso_partial = 28,
	gso_sctp = 30, gso_udp = 32, gso_udp_l4 = 33, gso_fraglist = 34,
	rxcsum = 41, vlan_stag_tx = 46,
};
using FeatureMask = uint64_t;

constexpr FeatureMask fbit(NetdevFeature f) { return FeatureMask{1} << static_cast<unsigned>(f); }

// Named masks of include/linux/netdev_features.h.
namespace fmask {
inline constexpr FeatureMask csum = fbit(NetdevFeature::ip_csum) | fbit(NetdevFeature::ipv6_csum) | fbit(NetdevFeature::hw_csum);
inline constexpr FeatureMask all_tso = fbit(NetdevFeature::tso) | fbit(NetdevFeature::tso6) | fbit(NetdevFeature::tso_ecn) |
				       fbit(NetdevFeature::tso_mangleid);
inline constexpr FeatureMask gso_software = all_tso | fbit(NetdevFeature::gso_sctp) | fbit(NetdevFeature::gso_udp_l4) |
					    fbit(NetdevFeature::gso_fraglist);
inline constexpr FeatureMask gso_encap_all = fbit(NetdevFeature::gso_gre) | fbit(NetdevFeature::gso_gre_csum) |
					     fbit(NetdevFeature::gso_ipxip4) | fbit(NetdevFeature::gso_ipxip6) |
					     fbit(NetdevFeature::gso_udp_tunnel) | fbit(NetdevFeature::gso_udp_tunnel_csum);
// NETIF_F_GSO_MASK: bits NETIF_F_GSO_SHIFT(16)..NETIF_F_GSO_LAST(34)
inline constexpr FeatureMask gso = ((FeatureMask{1} << 35) - 1) & ~((FeatureMask{1} << 16) - 1);
inline constexpr FeatureMask vlan_tx = fbit(NetdevFeature::vlan_ctag_tx) | fbit(NetdevFeature::vlan_stag_tx);
inline constexpr FeatureMask one_for_all = gso_software | fbit(NetdevFeature::gso_robust) | fbit(NetdevFeature::sg) |
					   fbit(NetdevFeature::highdma) | fbit(NetdevFeature::fraglist) |
					   fbit(NetdevFeature::vlan_challenged);
} // namespace fmask

// ethtool -k name ("tx-tcp-segmentation"), nullptr for bits not modelled.
const char *feature_name(NetdevFeature f);
std::optional<NetdevFeature> feature_from_name(std::string_view name);
// Every modelled feature, in bit order.
const std::vector<NetdevFeature> &all_features();
// "tx-scatter-gather,tx-tcp-segmentation" (or "none").
std::string mask_names(FeatureMask m);

// The kernels whose facts the model holds (Debian 12, 13 and sid), in order:
// a rule that came with a release applies from its version on (k >= ...).
enum class KernelVersion { v6_1, v6_12, v7_2 };
// "6.1" | "6.12" | "7.2" (also "newest"); "running": the model for this kernel
Result<KernelVersion> parse_kernel_version(std::string_view s);
const char *kernel_version_name(KernelVersion k);
// The newest modelled version not newer than release (major.minor); a
// kernel between two of them takes the older one's facts, one before 6.1
// the 6.1 facts.
KernelVersion kernel_model_for(unsigned major, unsigned minor);
// The model of the running kernel (uname).
KernelVersion running_kernel_model();

enum class DevKind {
	veth, tun, macvlan, ipvlan, bridge, bond, team, vlan, vxlan, geneve, virtio_net,
	igb, i40e, mlx4_en, mlx5_core, unknown,
};
const char *dev_kind_name(DevKind k);
std::optional<DevKind> dev_kind_from_name(std::string_view s);	// also ethtool driver names

// Which ndo_features_check the device's netdev_ops carry.
enum class FeaturesCheck { dflt, passthru, igb, i40e, mlx4, mlx4_qinq };
const char *features_check_name(FeaturesCheck c);

// What one layer of a stack is. opts as in the --stack syntax, already parsed.
struct LayerSpec {
	DevKind kind = DevKind::unknown;
	std::string ifname;		// empty for a described stack
	uint16_t vlan_proto = 0x8100;	// vlan kind: 802.1Q (0x8100) or 802.1ad (0x88a8)
	bool peer_xdp = false;		// veth: an XDP program on the peer
	bool tun_offload = false;	// tun: TUNSETOFFLOAD csum+tso4/6(+uso from 6.2)
	bool udp_csum = false;		// vxlan/geneve: outer UDP checksum
	bool mlx4_phv = false;		// mlx4_en: PHV bit, tx-vlan-stag-hw-insert on
	FeatureMask force_on = 0, force_off = 0;	// ethtool -K on top of the model
	std::optional<FeatureMask> live;	// features read from the running device
};

// The modelled device: the fields of struct net_device that
// netif_skb_features() reads, plus why each has its value.
struct DeviceModel {
	LayerSpec spec;
	FeatureMask features = 0, vlan_features = 0, hw_enc_features = 0, gso_partial_features = 0;
	FeaturesCheck check = FeaturesCheck::dflt;
	std::string source;	// "drivers/net/veth.c veth_setup(), VETH_FEATURES"
	std::string check_source;
	std::string name() const;	// ifname or kind
};

// Builds every layer top to bottom; an upper device's features depend on the
// lower ones (macvlan ALWAYS_ON, vlan_dev_fix_features, br_features_recompute).
// patched: the kpatches/ series applied (geneve vlan_features; vxlan/geneve/
// ipvlan passthru_features_check; mlx4_en QinQ with hardware S-tag insert).
std::vector<DeviceModel> build_stack(const std::vector<LayerSpec> &layers, KernelVersion k, bool patched);

// "vlan:802.1Q/vlan:802.1ad/bridge/vxlan/veth"; per layer kind[:opt[,opt]]
// with opts 802.1Q|802.1ad|peer-xdp|offload|udpcsum|phv|+<feature>|-<feature>.
Result<std::vector<LayerSpec>> parse_stack(std::string_view s);

enum class L4 { tcp4, tcp6, udp4, udp6, ufo4 };
enum class Encap { none, vxlan, geneve };
Result<L4> parse_l4(std::string_view s);	// tcp4 tcp6 udp udp4 udp6 ufo
const char *l4_name(L4 l);

struct PacketClass {
	L4 l4 = L4::tcp4;
	bool gso = true;
	unsigned vlans = 0;		// 0..2 tags the sender put on the frame
	bool outer_tag_in_meta = false;	// outer tag in skb->vlan_tci (tc bpf_skb_vlan_push, vlan dev)
	Encap encap = Encap::none;	// already encapsulated by the sender (skb->encapsulation)
	bool csum_partial = true;	// CHECKSUM_PARTIAL (virtio NEEDS_CSUM)
	unsigned payload = 4000;	// L4 payload bytes
	unsigned gso_size = 1000;
	std::string describe() const;
};

// One decision inside netif_skb_features()/validate_xmit_skb() for a layer.
struct TraceStep {
	std::string rule;	// what happened, for humans
	std::string cite;	// kernel file and function
	FeatureMask removed = 0;
};

struct LayerResult {
	std::string device;
	DevKind kind = DevKind::unknown;
	FeatureMask dev_features = 0;	// dev->features
	FeatureMask effective = 0;	// netif_skb_features() for this skb
	unsigned tags = 0;		// VLAN tags the skb carries at this device
	bool encapsulated = false;
	bool gso_in = false;		// a GSO skb reached this device
	unsigned skbs_in = 1;		// skbs entering the device's dev_queue_xmit
	bool sw_segmented = false;	// skb_gso_segment() in validate_xmit_skb()
	bool gso_partial = false;	// GSO partial: cut in software, segmented by the device
	bool sw_csum = false;		// checksum computed in software here
	bool vlan_sw_insert = false;	// validate_xmit_vlan() pushed a metadata tag into the packet
	unsigned skbs_out = 1;		// skbs handed to ndo_start_xmit
	std::vector<TraceStep> trace;
};

enum class Where { software, hardware, none };

struct Resolution {
	std::vector<LayerResult> layers;
	// Placement of segmentation and checksum: which layer (index into layers) and how.
	Where seg = Where::none, csum = Where::none;
	int seg_layer = -1, csum_layer = -1;
	// skbs the bottom device hands on (to its driver, the veth peer, the tap reader)
	unsigned bottom_skbs = 1;
	bool bottom_gso = false;	// the bottom device receives/hands on a GSO skb
	unsigned bottom_skbs_in = 1;	// skbs entering the bottom device's dev_queue_xmit
	bool bottom_gso_in = false;
	std::string summary() const;
};

// Resolves one packet class down the stack (stack[0] is where it is sent).
Resolution resolve(const std::vector<DeviceModel> &stack, const PacketClass &pkt, KernelVersion k);

// Reads the stack below ifname from the running system (rtnetlink links,
// SIOCETHTOOL features, driver names), top first. Usage error for unknown
// interfaces, runtime error for netlink/ioctl failures.
Result<std::vector<LayerSpec>> read_live_stack(const std::string &ifname);
// Features of one device as ethtool -k reports them (active set).
Result<FeatureMask> read_live_features(const std::string &ifname);
// The ethtool driver name of a device ("igb", "veth"; ETHTOOL_GDRVINFO),
// empty when it has none.
std::string live_driver_name(const std::string &ifname);

// ---- AF_XDP TX path ------------------------------------------------------
// What an AF_XDP TX queue of a device does in hardware, so the sender does
// the rest in software (user/src/gso).
struct TxQueueFacts {
	bool zero_copy = false;		// XDP_ZEROCOPY bind supported
	bool tx_md_csum = false;	// XDP_TXMD_FLAGS_CHECKSUM honoured (AF_XDP TX metadata)
	std::string tx_md_why;		// why not, when tx_md_csum is false
	bool tx_md_timestamp = false;
	bool multi_buffer = false;	// XDP_USE_SG on TX in the chosen mode
	bool hw_segmentation = false;	// never for AF_XDP in 6.1/6.12
	bool hw_vlan_insert = false;	// never for AF_XDP: no TX metadata field for a tag
	bool ufo_trusted = false;	// never: UFO left the kernel drivers (mlx4-ufo seed)
	// Queues an AF_XDP sender can bind (live devices: read_channels(),
	// combined + tx; 0 when unknown, e.g. a profile without a device).
	unsigned tx_queues = 0;
	unsigned max_tx_queues = 0;	// what the channel limits would allow
	std::string source;		// where the fact comes from
	// Zero-copy TX runs only while an XDP program is attached to the device
	// (the driver's ndo_xsk_wakeup refuses the kick otherwise); zc_tx_why
	// names the driver function and what it answers.
	bool zc_tx_needs_xdp = false;
	std::string zc_tx_why;
	std::string driver;		// live devices: the ethtool driver name
};

// mode: true for zero-copy, false for copy (skb) mode.
TxQueueFacts tx_queue_facts(DevKind kind, KernelVersion k, bool zero_copy);

// The same for a device of the running system (kind from its ethtool driver
// name); usage error for an unknown interface.
Result<TxQueueFacts> tx_queue_facts_live(const std::string &ifname, KernelVersion k, bool zero_copy);

// The sender's question for one super-packet: what to do in software.
struct TxPlan {
	bool csum_hw = false;		// set XDP_TXMD_FLAGS_CHECKSUM, leave the pseudo-header sum
	bool segment_sw = false;	// gso_segment() into UMEM frames
	bool vlan_sw = false;		// write tags during the copy
	bool fragment_sw = false;	// UFO: RFC 791 fragments in software
	std::vector<std::string> reasons;
};
TxPlan tx_plan(const TxQueueFacts &q, const PacketClass &pkt);

} // namespace xoffload
