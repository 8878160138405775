// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// send/recv's reporting rules (xoffload/xsk/plan.hpp, engine.hpp): the
// frame a device carries, the default mss (checked against what the
// segmentation engine really builds), shared-ring counters counted once, the
// tx_dropped verdict.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

#include "xoffload/gso/gso.hpp"
#include "xoffload/xsk/traffic.hpp"
#include "xoffload/xsk/engine.hpp"
#include "xoffload/xsk/plan.hpp"

using namespace xoffload;
using namespace xoffload::xsk;

TEST(XskRules, FrameLimitAllowsOneTagOverTheMtu)
{
	EXPECT_EQ(max_frame_len(1500, 0), 1514u);
	EXPECT_EQ(max_frame_len(1500, 1), 1518u);
	EXPECT_EQ(max_frame_len(1500, 2), 1518u) << "veth's is_skb_forwardable allows one VLAN header, not two";
	EXPECT_EQ(l3_room(1500, 0), 1500u);
	EXPECT_EQ(l3_room(1500, 1), 1500u);
	EXPECT_EQ(l3_room(1500, 2), 1496u);
	EXPECT_EQ(max_frame_len(9000, 2), 9018u);
}

TEST(XskRules, DefaultMssOfAnUntaggedFrameIsTheClassicOne)
{
	// the values send used before tags and tunnels were accounted for
	EXPECT_EQ(default_mss(GsoType::tso4, 1500, 0, 0), 1460u);
	EXPECT_EQ(default_mss(GsoType::tso6, 1500, 0, 0), 1440u);
	EXPECT_EQ(default_mss(GsoType::uso4, 1500, 0, 0), 1472u);
	EXPECT_EQ(default_mss(GsoType::uso6, 1500, 0, 0), 1452u);
	EXPECT_EQ(default_mss(GsoType::ufo4, 1500, 0, 0), 1480u);
	EXPECT_EQ(default_mss(GsoType::ufo6, 1500, 0, 0), 1448u);
	EXPECT_EQ(default_mss(GsoType::tso4, 9000, 0, 0), 1460u) << "fills 1500 bytes on a jumbo device";
	EXPECT_EQ(default_mss(GsoType::tso4, 1280, 0, 0), 1240u) << "the device's MTU when smaller";
	EXPECT_EQ(default_mss(GsoType::tso4, 1500, 2, 0), 1456u) << "the second tag comes out of the MTU";
	EXPECT_EQ(default_mss(GsoType::tso4, 30, 0, 0), 0u);
}

namespace {

std::vector<std::byte> super_packet(GsoType t, uint32_t size)
{
	FrameSpec s;
	s.dst_mac = {2, 0, 0, 0, 0, 0xb};
	s.src_mac = {2, 0, 0, 0, 0, 0xa};
	s.ipv6 = t == GsoType::tso6 || t == GsoType::uso6 || t == GsoType::ufo6;
	s.tcp = t == GsoType::tso4 || t == GsoType::tso6;
	if (s.ipv6) {
		s.src_ip = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
		s.dst_ip = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
	} else {
		s.src_ip = {198, 18, 0, 1};
		s.dst_ip = {198, 18, 0, 2};
	}
	s.size = size;
	auto b = build_frame(s);
	EXPECT_TRUE(b.ok()) << (b ? "" : b.error().msg);
	return b ? b->bytes : std::vector<std::byte>{};
}

// The longest frame the engine writes for this request, 0 when it refuses.
uint32_t longest_segment(const std::vector<std::byte> &in, const GsoRequest &req)
{
	int n = gso_count(std::span<const std::span<const std::byte>>(std::array{std::span<const std::byte>(in)}),
			  req);
	if (n <= 0)
		return 0;
	std::vector<std::vector<std::byte>> bufs(static_cast<size_t>(n), std::vector<std::byte>(9216));
	std::vector<GsoFrame> out;
	for (auto &b : bufs)
		out.push_back(GsoFrame{b.data(), static_cast<uint32_t>(b.size())});
	if (gso_segment(std::span<const std::byte>(in), req, out) != n)
		return 0;
	uint32_t m = 0;
	for (const auto &f : out)
		m = std::max(m, f.len);
	return m;
}

} // namespace

// What the engine builds with the default mss fits the device exactly: the
// longest segment is at most the device's frame, and one more mss byte (8
// for UFO, whose fragments step in 8s) would not fit.
TEST(XskRules, DefaultMssSegmentsFitTheDeviceWithTagsAndGeneve)
{
	GeneveEncap gv4, gv6;
	gv4.src_ip = {10, 0, 0, 1};
	gv4.dst_ip = {10, 0, 0, 2};
	gv4.vni = 7;
	gv6.ipv6 = true;
	gv6.src_ip = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xa};
	gv6.dst_ip = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xb};
	gv6.vni = 7;
	for (GsoType t : {GsoType::tso4, GsoType::tso6, GsoType::uso4, GsoType::uso6, GsoType::ufo4, GsoType::ufo6})
		for (unsigned tags : {0u, 1u, 2u})
			for (const GeneveEncap *g : std::array<const GeneveEncap *, 3>{nullptr, &gv4, &gv6})
				for (uint32_t mtu : {1500u, 1400u}) {
					SCOPED_TRACE(std::string(to_string(t)) + " tags " + std::to_string(tags) +
						     (g ? (g->ipv6 ? " geneve6" : " geneve4") : "") + " mtu " +
						     std::to_string(mtu));
					const uint32_t encap = g ? 14 + (g->ipv6 ? 40 : 20) + 8 + 8 : 0;
					GsoRequest req;
					req.type = t;
					req.geneve = g;
					req.ntags = static_cast<uint8_t>(tags);
					for (unsigned i = 0; i < tags; i++)
						req.tags[i] = GsoVlanTag{static_cast<uint16_t>(tags == 2 && i == 0 ? 0x88a8 : 0x8100),
									 static_cast<uint16_t>(10 + i), 0, false};
					req.mss = static_cast<uint16_t>(default_mss(t, mtu, tags, encap));
					ASSERT_GT(req.mss, 0u);
					auto in = super_packet(t, 20000);
					uint32_t len = longest_segment(in, req);
					ASSERT_GT(len, 0u) << "engine refused mss " << req.mss;
					EXPECT_LE(len, max_frame_len(mtu, tags)) << "mss " << req.mss;
					const bool ufo = t == GsoType::ufo4 || t == GsoType::ufo6;
					req.mss = static_cast<uint16_t>(req.mss + (ufo ? 8 : 1));
					EXPECT_GT(longest_segment(in, req), max_frame_len(mtu, tags))
						<< "the default leaves room: mss " << req.mss << " fits too";
				}
}

// recv --geneve --queues 2: both sockets sit on one buffer pool, and the
// kernel reports the pool's fill-ring-empty count (72,320 in the issue) to
// each; the total is the ring's count, not twice it.
TEST(XskRules, SharedFillRingCountsOnce)
{
	const std::vector<uint64_t> shared{72320, 72320};
	const std::vector<size_t> one_ring{0, 0};
	EXPECT_EQ(sum_per_ring(shared, one_ring), 72320u);
	// one socket per queue, each with its own ring: every count is its own
	const std::vector<uint64_t> own{5, 7, 11};
	const std::vector<size_t> own_rings{0, 1, 2};
	EXPECT_EQ(sum_per_ring(own, own_rings), 23u);
	// two queues with two sockets each
	const std::vector<uint64_t> mixed{3, 3, 9, 9};
	const std::vector<size_t> mixed_rings{0, 0, 2, 2};
	EXPECT_EQ(sum_per_ring(mixed, mixed_rings), 12u);
}

TEST(XskRules, TxDroppedDeltaIsAWarningOnlyWhenNonZero)
{
	EXPECT_EQ(counter_delta(100, 110), 10u);
	EXPECT_EQ(counter_delta(100, 100), 0u);
	EXPECT_EQ(counter_delta(100, 5), 0u) << "a counter that went back (device re-created) is no drop";
	EXPECT_TRUE(tx_dropped_warning("veth-a", 0, 10).empty());
	std::string w = tx_dropped_warning("veth-a", 86, 88);
	EXPECT_NE(w.find("veth-a"), std::string::npos) << w;
	EXPECT_NE(w.find("86"), std::string::npos) << w;
	EXPECT_NE(w.find("88 frames completed"), std::string::npos) << w;
	EXPECT_EQ(w.find('\n'), std::string::npos) << "one line: " << w;
}

// recv's device counters: what the ring lost before XDP is noted (one line,
// the counts and the remedy for the bind mode); rx_dropped alone is not,
// since it also counts the stack's drops after XDP_PASS.
TEST(XskRules, RxLostBeforeXdpIsNotedWithItsCounters)
{
	// the RX counters only: rx_missed, rx_fifo, rx_over, rx_dropped
	auto rx = [](uint64_t missed, uint64_t fifo, uint64_t over, uint64_t dropped) {
		NetdevStats s;
		s.rx_missed = missed;
		s.rx_fifo = fifo;
		s.rx_over = over;
		s.rx_dropped = dropped;
		return s;
	};
	DevRxDrops d = dev_rx_drops(rx(10, 0, 0, 7), rx(24, 1, 0, 9));
	EXPECT_EQ(d.missed, 14u);
	EXPECT_EQ(d.fifo, 1u);
	EXPECT_EQ(d.over, 0u);
	EXPECT_EQ(d.dropped, 2u);
	EXPECT_EQ(d.lost_before_xdp(), 15u);
	std::string zc = rx_lost_note("eth1", d, true);
	EXPECT_EQ(zc.rfind("note: eth1 lost 15 frames before XDP", 0), 0u) << zc;
	EXPECT_NE(zc.find("rx_missed 14, rx_fifo 1, rx_over 0"), std::string::npos) << zc;
	EXPECT_NE(zc.find("ethtool -G eth1 rx N"), std::string::npos) << zc;
	EXPECT_NE(zc.find("--ring-size"), std::string::npos) << "zero-copy: the fill ring feeds the driver: " << zc;
	EXPECT_EQ(zc.find('\n'), std::string::npos) << zc;
	std::string copy = rx_lost_note("eth1", d, false);
	EXPECT_EQ(copy.find("--ring-size"), std::string::npos) << "copy mode: the driver's own buffers: " << copy;
	EXPECT_TRUE(rx_lost_note("eth1", dev_rx_drops(rx(0, 0, 0, 0), rx(0, 0, 0, 50)), true).empty())
		<< "rx_dropped alone is the stack's, not the ring's";
	EXPECT_TRUE(rx_lost_note("eth1", dev_rx_drops(rx(9, 9, 9, 0), rx(3, 3, 3, 0)), true).empty())
		<< "counters that went back (device re-created) lost nothing";
}
