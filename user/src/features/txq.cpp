// AF_XDP TX-queue facts per driver and kernel, and the split of one
// super-packet's offloads between the queue's hardware and user/src/gso.
// AF_XDP hands frames to the driver as they are: no TSO, no VLAN insert; the
// only offload is the checksum request of TX metadata (XDP_TXMD_FLAGS_CHECKSUM,
// net/xdp/xsk.c xsk_build_skb()/xsk_tx_metadata_request(), 6.8+), honoured
// by drivers with xsk_tx_metadata_ops in zero-copy mode and by the copy
// mode's skb (CHECKSUM_PARTIAL on the skb, then the device's features).
#include "xoffload/features.hpp"

namespace xoffload {

TxQueueFacts tx_queue_facts(DevKind kind, KernelVersion k, bool zero_copy)
{
	TxQueueFacts q;
	// TX metadata (checksum, timestamp) and copy-mode multi-buffer: 6.8 and 6.6
	bool k612 = k >= KernelVersion::v6_12;
	switch (kind) {
	case DevKind::mlx5_core:
		// en_main.c: netdev->xsk_tx_metadata_ops = &mlx5e_xsk_tx_metadata_ops (6.8)
		q.zero_copy = true;
		q.tx_md_csum = k612;
		q.tx_md_timestamp = k612;
		q.multi_buffer = k612;
		q.source = "drivers/net/ethernet/mellanox/mlx5/core/en_main.c mlx5e_xsk_tx_metadata_ops (6.8+)";
		break;
	case DevKind::i40e:
		// i40e_main.c: NETDEV_XDP_ACT_XSK_ZEROCOPY; no xsk_tx_metadata_ops
		q.zero_copy = true;
		q.multi_buffer = k612;	// i40e ZC multi-buffer, 6.6
		q.source = "drivers/net/ethernet/intel/i40e/i40e_main.c xdp_features XSK_ZEROCOPY, no tx metadata ops";
		break;
	case DevKind::igb:
		// igb_xsk.c (6.14): XSK pool, zero-copy RX and TX, no tx metadata ops
		q.zero_copy = k >= KernelVersion::v7_2;
		q.source = k >= KernelVersion::v7_2
				   ? "drivers/net/ethernet/intel/igb/igb_xsk.c igb_xsk_pool_setup() (6.14+), no tx metadata ops"
				   : "drivers/net/ethernet/intel/igb/igb_main.c: no XSK pool support before 6.14";
		break;
	case DevKind::mlx4_en:
		q.source = "drivers/net/ethernet/mellanox/mlx4/en_netdev.c xdp_features BASIC|REDIRECT: copy mode only";
		break;
	case DevKind::virtio_net:
		q.source = "drivers/net/virtio_net.c: XSK pool for RX (6.11), no TX zero-copy in 6.12";
		break;
	case DevKind::veth:
		q.source = "drivers/net/veth.c: no XSK pool, copy mode only";
		break;
	default:
		q.source = std::string(dev_kind_name(kind)) + ": copy mode only";
		break;
	}
	// Zero-copy TX descriptors go out on the driver's XDP TX rings, which
	// exist only while an XDP program is attached: the wakeup (sendto kick)
	// fails without one and no frame ever completes.
	switch (kind) {
	case DevKind::i40e:
		q.zc_tx_needs_xdp = true;
		q.zc_tx_why = "i40e_xsk_wakeup() (drivers/net/ethernet/intel/i40e/i40e_xsk.c) answers ENXIO/EINVAL "
			      "unless i40e_enabled_xdp_vsi()";
		break;
	case DevKind::igb:
		q.zc_tx_needs_xdp = true;
		q.zc_tx_why = "igb_xsk_wakeup() (drivers/net/ethernet/intel/igb/igb_xsk.c, 6.14+) answers EINVAL "
			      "unless igb_xdp_is_enabled()";
		break;
	case DevKind::mlx5_core:
		q.zc_tx_needs_xdp = true;
		q.zc_tx_why = "mlx5e_xsk_wakeup() (drivers/net/ethernet/mellanox/mlx5/core/en/xsk/tx.c) answers "
			      "ENETDOWN unless mlx5e_xdp_is_active()";
		break;
	case DevKind::unknown:
		q.zc_tx_needs_xdp = true;
		q.zc_tx_why = "a driver outside the model: Intel's (ixgbe, ice, igc) and most others run zero-copy TX "
			      "on their XDP rings";
		break;
	default:
		// virtio_net: virtnet_xsk_wakeup() kicks the send queue, no program needed
		break;
	}
	bool md_refused = false;
	if (kind == DevKind::virtio_net && k >= KernelVersion::v7_2) {
		// Debian's 7.2 in qemu: bind of a UMEM with tx_metadata_len
		// answers EOPNOTSUPP, copy mode and zero-copy alike (NIC-FACTS.md)
		md_refused = true;
		q.source += "; 7.2: a UMEM with TX metadata is refused at bind";
	}
	if (!zero_copy) {
		// copy mode: net/xdp/xsk.c xsk_build_skb() makes an skb; the TX
		// metadata checksum request becomes CHECKSUM_PARTIAL (6.8+), and
		// __dev_direct_xmit() -> validate_xmit_skb() resolves it against
		// dev->features: the device or skb_checksum_help(), never wrong
		q.zero_copy = false;
		q.tx_md_csum = k612;
		q.tx_md_timestamp = false;
		q.multi_buffer = k612;	// copy-mode multi-buffer, 6.6
		q.source += k612 ? "; copy mode: net/xdp/xsk.c xsk_build_skb() CHECKSUM_PARTIAL, __dev_direct_xmit()"
				 : "; copy mode, no AF_XDP TX metadata before 6.8";
	} else if (!q.zero_copy) {
		q.source += "; zero-copy not available";
	}
	if (md_refused)
		q.tx_md_csum = q.tx_md_timestamp = false;
	if (!q.tx_md_csum)
		q.tx_md_why = md_refused ? "the driver refuses a UMEM with TX metadata"
			    : !k612	 ? "no AF_XDP TX metadata before Linux 6.8"
					 : "no xsk_tx_metadata_ops checksum in the driver";
	return q;
}

TxPlan tx_plan(const TxQueueFacts &q, const PacketClass &pkt)
{
	TxPlan p;
	bool udp = pkt.l4 == L4::udp4 || pkt.l4 == L4::udp6 || pkt.l4 == L4::ufo4;
	if (pkt.gso) {
		// segments are written into UMEM frames one by one
		if (pkt.l4 == L4::ufo4) {
			p.fragment_sw = true;
			p.reasons.push_back("UFO: never trusted to a device (mlx4-ufo seed); RFC 791 fragments in software, "
					    "checksum of the whole datagram in software");
		} else {
			p.segment_sw = true;
			p.reasons.push_back(std::string("AF_XDP has no ") + (udp ? "USO" : "TSO") +
					    ": segment in software into UMEM frames");
		}
	}
	if (pkt.vlans) {
		p.vlan_sw = true;
		p.reasons.push_back("AF_XDP TX metadata has no VLAN field: tags written during the copy");
	}
	if (pkt.csum_partial && !p.fragment_sw) {
		if (q.tx_md_csum) {
			p.csum_hw = true;
			p.reasons.push_back("checksum by the queue: XDP_TXMD_FLAGS_CHECKSUM with csum_start/csum_offset (" +
					    q.source + ")");
		} else {
			p.reasons.push_back("queue has no TX metadata checksum" +
					    (q.tx_md_why.empty() ? std::string() : " (" + q.tx_md_why + ")") +
					    ": folded into the copy in software (" + q.source + ")");
		}
	}
	return p;
}

} // namespace xoffload
