// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
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

#include "xoffload/core/result.hpp"

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
// What `ethtool -K DEV NAME on|off` changes: a long name's bit, or the bits
// of one of ethtool's short names (ethtool.c off_flag_def): tx (every TX
// checksum), sg, tso (every tx-tcp*-segmentation), ufo, gso, rx, txvlan.
// nullopt for a name not modelled (ethtool's RX-only gro, lro, rxvlan,
// ntuple, rxhash included).
std::optional<FeatureMask> feature_mask_from_name(std::string_view name);
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
	igb, i40e, mlx4_en, mlx5_core, dummy,
	// RX/AF_XDP facts only (nic_facts()); their TX features are not modelled
	ice, igc, stmmac, vmxnet3,
	unknown,
};
const char *dev_kind_name(DevKind k);
std::optional<DevKind> dev_kind_from_name(std::string_view s);	// also ethtool driver names

// Which ndo_features_check the device's netdev_ops carry.
enum class FeaturesCheck { dflt, passthru, igb, i40e, mlx4, mlx4_qinq };
const char *features_check_name(FeaturesCheck c);

// ipvlan's mode (IFLA_IPVLAN_MODE; ipvlan_port_create() starts in L3, what
// `ip link add ... type ipvlan` gives without a mode). L2 hands the frame to
// the lower device; L3 and L3S route it, so only IPv4 and IPv6 go out.
enum class IpvlanMode : uint8_t { l2 = 0, l3 = 1, l3s = 2 };
const char *ipvlan_mode_name(IpvlanMode m);

// What one layer of a stack is. opts as in the --stack syntax, already parsed.
struct LayerSpec {
	DevKind kind = DevKind::unknown;
	std::string ifname;		// empty for a described stack
	uint16_t vlan_proto = 0x8100;	// vlan kind: 802.1Q (0x8100) or 802.1ad (0x88a8)
	bool peer_xdp = false;		// veth: an XDP program on the peer
	bool tun_offload = false;	// tun: TUNSETOFFLOAD csum+tso4/6(+uso from 6.2)
	bool udp_csum = false;		// vxlan/geneve: outer UDP checksum
	bool mlx4_phv = false;		// mlx4_en: PHV bit, tx-vlan-stag-hw-insert on
	IpvlanMode ipvlan_mode = IpvlanMode::l3;	// ipvlan: l2|l3|l3s
	FeatureMask force_on = 0, force_off = 0;	// ethtool -K on top of the model
	std::optional<FeatureMask> live;	// features read from the running device
};

// The modelled device: the fields of struct net_device that
// netif_skb_features() reads, plus why each has its value.
struct DeviceModel {
	LayerSpec spec;
	FeatureMask features = 0, vlan_features = 0, hw_enc_features = 0, gso_partial_features = 0;
	FeaturesCheck check = FeaturesCheck::dflt;
	// kpatch 0002: gso_features_check() clears GSO for an encapsulated skb
	// whose inner Ethernet frame has more than one tag, on a device whose
	// ndo_features_check is not passthru_features_check
	bool inner_qinq_gso_check = false;
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
// with opts 802.1Q|802.1ad|peer-xdp|offload|udpcsum|phv|l2|l3|l3s|+<feature>|-<feature>.
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
	bool dropped = false;		// ndo_start_xmit dropped them (ipvlan L3/L3S and a tagged frame)
	bool reached = true;		// false below a layer that dropped the skbs
	std::vector<TraceStep> trace;
};

enum class Where { software, hardware, none, dropped };

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
	// a layer that dropped the skbs (index into layers; -1: none), why
	// and how many; what was not done before it is placed "dropped"
	int drop_layer = -1;
	std::string drop_why;
	unsigned dropped_skbs = 0;
	// What the summary says of segmentation (@seg) or the checksum, as one
	// word: "not_requested", "software" (at layers[..._layer]), "none_in_stack"
	// (the bottom is virtual, veth, tun or dummy: it hands the skb on unsegmented or
	// with the checksum partial, and nothing in the stack does the work),
	// "hardware" (the bottom device's driver) or "dropped" (a layer dropped
	// the skbs before it was done). The text and --json of
	// `features` both say this.
	const char *placement(bool seg) const;
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


// ---- RX / AF_XDP facts of a NIC driver ------------------------------------
// One source of truth for what a driver does to frames before XDP sees them
// and what its AF_XDP queues can do, per driver and kernel, each fact with
// the kernel file and function it comes from. attach, recv and send take
// their decisions from here; `offload-tool features IFACE --rx` prints it.
// Checked in Debian's linux-source-6.1 and -6.12 trees; 7.2 against the
// symbols of Debian's 7.2 modules where a source string says so; a release
// in between takes the facts by the release each one came with.
namespace features {

// A fact and where it comes from ("drivers/net/ethernet/intel/igb/igb_main.c
// igb_probe(): ..."). An empty source means the driver is not modelled and
// the value is the conservative default.
template <typename T>
struct Fact {
	T value{};
	std::string source;
};

// What the NIC's VLAN filter does with tagged frames of a VID no upper VLAN
// device registered (ndo_vlan_rx_add_vid).
enum class VlanFilter {
	none,			// no filter: every VID arrives
	drops_unregistered,	// on from the start: unregistered VIDs dropped before XDP and TC
	after_first_vid,	// passes every VID until the first one is registered
	host,			// the hypervisor filters (virtio_net CTRL_VLAN, vmxnet3)
};
const char *vlan_filter_name(VlanFilter f);

// What ethtool -N (ntuple) can steer to a queue.
enum class Ntuple {
	none,		// no NETIF_F_NTUPLE
	ether_only,	// flow-type ether: MAC, ethertype, VLAN TCI (igb, i350 and later)
	full,		// L3/L4 5-tuple rules
	dmfs_only,	// only in device-managed flow steering mode (mlx4)
};
const char *ntuple_name(Ntuple n);

// The RSS indirection table that ethtool -X sets (ethtool_ops.set_rxfh).
enum class RssTable {
	none,		// no table: the driver has no set_rxfh
	settable,	// ethtool -X IFACE equal N
	if_offered,	// only where the device offers RSS (virtio_net: VIRTIO_NET_F_RSS)
};
const char *rss_table_name(RssTable r);

// UDP tunnel port table of the NIC (udp_tunnel_nic_info): bits of these.
inline constexpr unsigned kTunnelVxlan = 1, kTunnelGeneve = 2;

struct NicFacts {
	DevKind driver = DevKind::unknown;
	unsigned major = 0, minor = 0;	// the kernel release the facts are for
	bool modelled = false;		// false: unknown driver, every fact its conservative default

	Fact<bool> native_xdp;		// ndo_bpf with XDP_SETUP_PROG
	// VLAN tags on RX, default settings
	Fact<bool> strip_ctag;		// 802.1Q tag taken out of the frame before XDP (rx-vlan-offload on)
	Fact<bool> strip_stag;		// 802.1ad tag taken out too (rx-vlan-stag-hw-parse on)
	Fact<bool> strip_changeable;	// rx-vlan-offload is in hw_features (ethtool -K can turn it off)
	// The live rx-vlan-hw-parse/-stag-hw-parse say whether the driver strips
	// before XDP (true); false: the features are shown but no RX path of the
	// driver strips (veth), so turning them off changes nothing.
	Fact<bool> strip_by_feature;
	Fact<VlanFilter> vlan_filter;	// default rx-vlan-filter behaviour
	Fact<bool> vlan_filter_fixed;	// rx-vlan-filter cannot be turned off ([fixed])
	std::string vlan_filter_remedy;	// how to let unregistered VIDs through, "" when nothing filters
	Fact<bool> vlan_filter_rx_all;	// ethtool -K rx-all on lets every VID through too (igb); elsewhere
					// rx-all only keeps frames with a bad FCS
	Fact<bool> rx_vlan_tag_kfunc;	// bpf_xdp_metadata_rx_vlan_tag (6.8+, device-bound programs only)
	Fact<unsigned> udp_tunnel_table;	// kTunnelVxlan | kTunnelGeneve, 0 for none
	// AF_XDP
	Fact<bool> zero_copy;		// XDP_ZEROCOPY bind (ndo_xsk_wakeup + XDP_SETUP_XSK_POOL)
	Fact<bool> zc_tx;		// zero-copy TX actually transmits from the pool
	Fact<bool> zc_tx_needs_xdp;	// zero-copy TX kick fails while no XDP program is attached
	int zc_tx_no_xdp_errno = 0;	// what that kick returns (EINVAL, ENETDOWN)
	Fact<bool> tx_md_csum_zc;	// XDP_TXMD_FLAGS_CHECKSUM honoured in zero-copy (tmo_request_checksum)
	Fact<bool> tx_md_csum_copy;	// ... in copy mode (xsk_build_skb() CHECKSUM_PARTIAL, 6.8+)
	// XDP limits
	Fact<bool> xdp_multi_buffer;	// native XDP takes xdp.frags programs (frames in several buffers)
	Fact<unsigned> xdp_max_mtu;	// largest MTU a single-buffer XDP program attaches at; 0: no limit known
	bool xdp_max_mtu_frags = false;	// a frags-aware program lifts that limit
	int xdp_mtu_errno = 0;		// what the attach above xdp_max_mtu returns
	Fact<Ntuple> ntuple;
	// RX queues: what picks the queue a frame (and so an AF_XDP socket) gets.
	// An empty source: not modelled for this driver.
	Fact<bool> rxq_from_peer;	// the sending peer's TX queue is the RX queue (veth), no hash
	Fact<bool> set_channels;	// ethtool -L (ethtool_ops.set_channels)
	Fact<RssTable> rss_table;	// ethtool -X
	// RX checksum: the driver marks a UDP frame's outer checksum verified
	// (CHECKSUM_UNNECESSARY, csum_level 0) from its descriptor, and the skb
	// built after XDP_PASS keeps that mark: after an XDP decap the stack
	// takes it for the inner checksum. true for an unmodelled driver.
	Fact<bool> rx_csum_mark;
	// A close of the device (link down, an MTU change, a ring or queue
	// change, a reset) drops its native XDP program from the datapath while
	// the hook still lists it: frames pass unprocessed until the program is
	// handed to the driver again (xdp_rearm(); the agent does it when the
	// link comes back).
	Fact<bool> xdp_lost_on_close;
};

// The facts of @driver under Linux @major.@minor. Never fails: an unknown
// driver gets modelled == false and conservative values (no zero-copy, no
// TX-metadata checksum in zero-copy, no kfunc, no strip, no filter).
NicFacts nic_facts(DevKind driver, unsigned major, unsigned minor);
// The same for a modelled kernel (6.1, 6.12, 7.2).
NicFacts nic_facts(DevKind driver, KernelVersion k);
// The same for the ethtool driver name @driver ("igb"; "" or a name not
// modelled: DevKind::unknown) under the running kernel.
NicFacts nic_facts_running(std::string_view driver);
// major.minor of a modelled kernel: 6.1, 6.12, 7.2.
void kernel_version_release(KernelVersion k, unsigned &major, unsigned &minor);

// The --kernel of the CLI: "running" (the default) is uname's major.minor,
// "6.1", "6.12", "7.2" (or "newest") the modelled kernels. Usage error else.
struct KernelArg {
	unsigned major = 0, minor = 0;
	KernelVersion model = KernelVersion::v6_12;	// the TX model's version for it
	bool running = false;
	std::string name;	// "6.1", or the running release "6.18.44-..."
};
Result<KernelArg> parse_kernel_arg(std::string_view s);

// The ethtool driver name of @ifname (ETHTOOL_GDRVINFO), e.g. "igb"; "" when
// the device answers none (lo). Usage error for an unknown interface.
Result<std::string> live_driver(const std::string &ifname);

// nic_facts() of the driver of @ifname (live_driver()); an unmodelled
// driver gives modelled == false. Usage error for an unknown interface.
Result<NicFacts> nic_facts_live(const std::string &ifname, unsigned major, unsigned minor);

// The TX checksum decision of send for one bound socket: whether the L4
// checksum is requested through AF_XDP TX metadata, with why (a short
// clause) and the kernel source behind it.
struct TxCsumDecision {
	bool by_metadata = false;	// set XDP_TXMD_FLAGS_CHECKSUM; else software computes it
	std::string why;		// "i40e ignores it in zero-copy (no xsk_tx_metadata_ops)"
	std::string source;
};
// @zero_copy: the mode the socket is bound in (after an `auto` bind, the
// mode it got). @md_registered: the UMEM carries TX metadata.
TxCsumDecision tx_csum_decision(const NicFacts &f, bool zero_copy, bool md_registered);

// Whether xdp_geneve's decapped frames reach the stack through the CPUMAP
// (an skb built anew, CHECKSUM_NONE) when the user has not chosen: where
// the driver's RX checksum mark would vouch for the inner checksum
// (rx_csum_mark), and on a driver not modelled.
bool decap_cpumap_default(const NicFacts &f);

// The one line an XDP attach failure of @err (negative errno) on a device
// of @driver at @mtu means, from the facts; "" when the facts say nothing
// beyond the errno. @frags: the program is frags-aware. @skb_flag: the CLI
// option that selects generic XDP ("--mode skb", "--xdp-mode skb").
std::string xdp_attach_hint(const NicFacts &f, int err, unsigned mtu, bool frags, const char *skb_flag);
// (xdp_attach_error() in user/src/bpf/xdp_attach.hpp applies it, with the
// device's driver and MTU read live, for the loader and xdp_xsk alike.)

} // namespace features

} // namespace xoffload
