// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// AF_XDP TX-queue facts per driver and kernel, and the split of one
// super-packet's offloads between the queue's hardware and user/src/gso.
// AF_XDP hands frames to the driver as they are: no TSO, no VLAN insert; the
// only offload is the checksum request of TX metadata (XDP_TXMD_FLAGS_CHECKSUM,
// net/xdp/xsk.c xsk_build_skb()/xsk_tx_metadata_request(), 6.8+), honoured
// by drivers with xsk_tx_metadata_ops in zero-copy mode and by the copy
// mode's skb (CHECKSUM_PARTIAL on the skb, then the device's features).
#include "xoffload/features/features.hpp"

namespace xoffload {

TxQueueFacts tx_queue_facts(DevKind kind, KernelVersion k, bool zero_copy)
{
	// one source of truth: the driver's facts (nic.cpp)
	const features::NicFacts f = features::nic_facts(kind, k);
	TxQueueFacts q;
	const bool k612 = k >= KernelVersion::v6_12;	// copy-mode multi-buffer and TX metadata: 6.6, 6.8
	if (zero_copy && f.zero_copy.value) {
		q.zero_copy = true;
		q.tx_md_csum = f.tx_md_csum_zc.value;
		q.tx_md_timestamp = kind == DevKind::mlx5_core && k612;
		q.multi_buffer = k612 && (kind == DevKind::mlx5_core || kind == DevKind::i40e);
		q.source = f.zero_copy.source + "; checksum: " + f.tx_md_csum_zc.source;
	} else {
		// copy mode: net/xdp/xsk.c xsk_build_skb() makes an skb; the TX
		// metadata checksum request becomes CHECKSUM_PARTIAL (6.8+), and
		// __dev_direct_xmit() -> validate_xmit_skb() resolves it against
		// dev->features: the device or skb_checksum_help(), never wrong
		q.tx_md_csum = f.tx_md_csum_copy.value;
		q.multi_buffer = k612;
		q.source = (zero_copy ? f.zero_copy.source + "; zero-copy not available; " : std::string()) +
			   "copy mode: " + f.tx_md_csum_copy.source;
	}
	if (!q.tx_md_csum) {
		const features::TxCsumDecision d = features::tx_csum_decision(f, q.zero_copy, true);
		q.tx_md_why = d.why;
	}
	// zero-copy TX descriptors go out on the driver's XDP TX rings, which
	// exist only while an XDP program is attached: the wakeup (sendto kick)
	// fails without one and no frame ever completes
	q.zc_tx_needs_xdp = f.zc_tx_needs_xdp.value;
	if (q.zc_tx_needs_xdp)
		q.zc_tx_why = f.zc_tx_needs_xdp.source;
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
