// The rules send and recv report by, kept apart from their loops so unit
// tests hold them: what frame a device carries, the default mss, counters of
// rings several sockets share, and the verdict on the device's tx_dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "xoffload/gso.hpp"
#include "xoffload/netdev.hpp"

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

// What the device itself lost while recv ran, before any XDP program saw
// it (deltas of its IFLA_STATS64 counters): no free RX buffer or
// descriptor (rx_missed_errors: igb's MPC, mlx5's out_of_buffer), its FIFO,
// a full ring; rx_dropped also counts what the stack dropped after
// XDP_PASS, so it is reported but not blamed on the ring.
struct DevRxDrops {
	uint64_t missed = 0, fifo = 0, over = 0, dropped = 0;
	uint64_t lost_before_xdp() const { return missed + fifo + over; }
};

constexpr DevRxDrops dev_rx_drops(const NetdevStats &before, const NetdevStats &after)
{
	return DevRxDrops{counter_delta(before.rx_missed, after.rx_missed), counter_delta(before.rx_fifo, after.rx_fifo),
			  counter_delta(before.rx_over, after.rx_over),
			  counter_delta(before.rx_dropped, after.rx_dropped)};
}

// The one line recv adds when the device lost frames before XDP while it
// ran, empty when it lost none. zero_copy: the driver's RX ring is filled
// from recv's fill ring, so a larger fill ring helps too.
inline std::string rx_lost_note(const std::string &ifname, const DevRxDrops &d, bool zero_copy)
{
	if (!d.lost_before_xdp())
		return {};
	return "note: " + ifname + " lost " + std::to_string(d.lost_before_xdp()) +
	       " frames before XDP while recv ran (rx_missed " + std::to_string(d.missed) + ", rx_fifo " +
	       std::to_string(d.fifo) + ", rx_over " + std::to_string(d.over) +
	       "): its RX ring had no free buffer; a longer ring (ethtool -G " + ifname + " rx N)" +
	       (zero_copy ? " or more fill-ring frames (--ring-size, --frames)" : "") + " or a slower sender helps";
}

} // namespace xoffload::cli
