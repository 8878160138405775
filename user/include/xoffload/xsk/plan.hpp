// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What send puts on the wire and who does what of it: frame and segment
// sizes a device carries (MTU, tags, Geneve overhead, the default mss), the
// frames of the plain loop, and the TX plan the feature model gives for a
// packet class on a bound engine (checksum by TX metadata or in software).
//
// Pure functions except send_driver() (asks the device once) and
// check_segments()/make_tx_frame() (allocate scratch buffers); no printing.
// Errors: Result; a frame that cannot be built is a usage error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "xoffload/features/features.hpp"
#include "xoffload/gso/gso.hpp"
#include "xoffload/core/netdev.hpp"
#include "xoffload/core/result.hpp"
#include "xoffload/xsk/traffic.hpp"

namespace xoffload::xsk {

// Largest frame (Ethernet header and tags, no FCS) a device of this MTU
// carries: the MTU and the Ethernet header, plus one 4-byte tag when the
// frame has one (veth's is_skb_forwardable() allows exactly that, as do the
// VLAN_ETH_FRAME_LEN limits of NIC drivers). A second tag comes out of the MTU.
constexpr uint32_t max_frame_len(uint32_t mtu, unsigned tags)
{
	return mtu + 14 + (tags ? 4 : 0);
}

// The IP packet a frame with @tags holds on that device.
constexpr uint32_t l3_room(uint32_t mtu, unsigned tags)
{
	return max_frame_len(mtu, tags) - 14 - 4 * tags;
}

// The mss whose segments fill an IP packet of @l3 bytes: less the IP and
// TCP/UDP headers; UFO fragment data in multiples of 8 (IPv6 also carries a
// fragment header). 0 when nothing fits.
constexpr uint32_t mss_for_l3(GsoType t, uint32_t l3)
{
	uint32_t hdr = 0;
	switch (t) {
	case GsoType::tso4: hdr = 20 + 20; break;
	case GsoType::tso6: hdr = 40 + 20; break;
	case GsoType::uso4: hdr = 20 + 8; break;
	case GsoType::uso6: hdr = 40 + 8; break;
	case GsoType::ufo4: hdr = 20; break;
	case GsoType::ufo6: hdr = 40 + 8; break;
	default: return 0;
	}
	if (l3 <= hdr)
		return 0;
	uint32_t m = l3 - hdr;
	return t == GsoType::ufo4 || t == GsoType::ufo6 ? m & ~7u : m;
}

// send's default mss: segments that fill a 1500-byte MTU (or the device's,
// when smaller) with @tags on the frame and @encap bytes of tunnel headers
// in front of the inner IP packet (Geneve: outer Ethernet, IP, UDP, Geneve).
constexpr uint32_t default_mss(GsoType t, uint32_t mtu, unsigned tags, uint32_t encap)
{
	uint32_t l3 = l3_room(mtu < 1500 ? mtu : 1500, tags);
	return l3 > encap ? mss_for_l3(t, l3 - encap) : 0;
}

// Bytes Geneve adds in front of an inner frame (outer tags aside): outer
// Ethernet, IPv4/IPv6, UDP and the Geneve header. Also what the inner IP
// packet loses of the MTU (its own Ethernet header now counts), so what the
// default mss gives up.
constexpr uint32_t geneve_overhead(const GeneveEncap &g)
{
	return 14 + (g.ipv6 ? 40 : 20) + 8 + 8;
}

// Largest inner frame Geneve can carry: the outer IP length field (IPv4:
// total length, IPv6: payload length) holds outer UDP, Geneve and the frame.
constexpr uint32_t geneve_max_inner(const GeneveEncap &g)
{
	return 65535 - (geneve_overhead(g) - 14 - (g.ipv6 ? 40 : 0));
}

// The segmentation type of --gso tso|uso|ufo for IPv4 or IPv6 (none for
// anything else).
GsoType gso_type_of(const std::string &name, bool ipv6);

// The feature model's packet class of a super-packet of @payload bytes
// segmented as @req says (tags and Geneve from it); csum_partial: the
// checksum may be left to the queue.
PacketClass gso_packet_class(const GsoRequest &req, uint32_t payload, bool csum_partial);

// The segments of one super-packet in UMEM chunks of @cap bytes, counted
// and built once into scratch buffers: nseg -1 when gso_count() refuses the
// request, fits false when a segment outgrows @cap (why says which).
struct SegmentCheck {
	int nseg = -1;
	bool fits = false;
	uint32_t longest = 0;		// bytes of the longest segment, when fits
	GsoError why{};
};
SegmentCheck check_segments(std::span<const std::byte> super, const GsoRequest &req, uint32_t cap);

// One frame of the plain send loop, with where its L4 checksum is when TX
// metadata completes it.
struct TxFrame {
	std::vector<std::byte> bytes;
	uint16_t csum_start = 0, csum_offset = 0;
	bool partial = false;
};

// The frame @spec describes, wrapped in Geneve by the segmentation engine
// when req.geneve is set (req.type none: one frame, outer tags from req);
// @partial leaves the L4 checksum to the queue. Usage error when it cannot
// be built (messages name --geneve-vni for the encapsulation).
Result<TxFrame> make_tx_frame(FrameSpec spec, const GsoRequest &req, bool partial);

// The driver of the device send runs on, asked once (ETHTOOL_GDRVINFO) for
// every decision of the run, and its facts under the kernel of --kernel.
struct SendDriver {
	Result<std::string> name;	// an error: the device went away
	features::NicFacts facts;
};
SendDriver send_driver(const Netdev &dev, const features::KernelArg &k);

// The bound engine as the plan sees it.
struct TxPlanInput {
	bool zero_copy = false;		// the mode the sockets got
	bool md_registered = false;	// the UMEM carries TX metadata
	std::string md;			// Engine::md
	std::string md_why;		// Engine::md_why
	bool sw_csum = false;		// --sw-csum with --gso: software whatever the queue does
	bool tx_csum = false;		// --tx-csum: the user asked for the queue
};

// The plan and what the summary and the "tx plan:" line say about it.
struct SendPlan {
	TxPlan plan;
	std::string csum;		// "tx-metadata" or "software"
	std::string csum_why;		// why software ("" when by the queue)
	std::string tx_csum_note;	// why --tx-csum's request went to software ("" when it did not)
};

// What send does for one packet class on this device, as it will run: the
// driver's facts under the kernel of --kernel, for the mode the socket is
// bound in and the UMEM as registered. The checksum goes to TX metadata
// only where that mode of that driver honours it; everywhere else software
// computes it, --tx-csum included (tx_csum_note then says why).
SendPlan send_plan(const SendDriver &sd, const TxPlanInput &in, const PacketClass &pc, const features::KernelArg &k);

} // namespace xoffload::xsk
