// The rules send and recv report by, kept apart from their loops so unit
// tests hold them: what frame a device carries, the default mss, counters of
// rings several sockets share, and the verdict on the device's tx_dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "xoffload/gso.hpp"

namespace xoffload::cli {

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

// Sum of a kernel counter over sockets of which several may share one ring
// (create_shared: one buffer pool, one fill ring; XDP_STATISTICS reports
// rx_fill_ring_empty_descs of the pool to each): @ring_of[i] is the index of
// the socket whose ring socket i uses, and each ring counts once.
inline uint64_t sum_per_ring(std::span<const uint64_t> per_socket, std::span<const size_t> ring_of)
{
	uint64_t t = 0;
	for (size_t i = 0; i < per_socket.size() && i < ring_of.size(); i++)
		if (ring_of[i] == i)
			t += per_socket[i];
	return t;
}

// The device's tx_dropped over a send (before and after the run; a counter
// that went back, as on a re-created device, counts as 0).
constexpr uint64_t counter_delta(uint64_t before, uint64_t after)
{
	return after >= before ? after - before : 0;
}

// The one line send ends with when the device dropped frames while it ran
// (exit 1), empty when it dropped none.
inline std::string tx_dropped_warning(const std::string &ifname, uint64_t dropped, uint64_t completed)
{
	if (!dropped)
		return {};
	return "tx_dropped of " + ifname + " rose by " + std::to_string(dropped) + " while sending (" +
	       std::to_string(completed) + " frames completed): the device or its peer dropped them, not sent";
}

} // namespace xoffload::cli
