// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The traffic engine's pieces that need no socket: the send pacer on an
// injected clock, the TX plan from the feature model, socket layout and
// Geneve slot counts, totals over per-socket counters, GSO classes and
// segment checks, the Geneve/MTU arithmetic send sizes frames by, and the
// worker threads' plan, CPU list and interval board.
#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "xoffload/abi.h"
#include "xoffload/features/features.hpp"
#include "xoffload/xsk/engine.hpp"
#include "xoffload/xsk/plan.hpp"
#include "xoffload/xsk/receiver.hpp"
#include "xoffload/xsk/sender.hpp"
#include "xoffload/xsk/workers.hpp"

using namespace xoffload;
using namespace xoffload::xsk;

namespace {

// ---- pacer ----------------------------------------------------------------------

// A clock the test moves by hand.
struct FakeClock {
	double t = 100.0;
	std::function<double()> fn() { return [this] { return t; }; }
};

TEST(SendPacer, UnpacedLooksAtTheClockEveryNthRound)
{
	FakeClock clk;
	SendConfig c;
	c.duration = 1.0;
	c.interval = 0;
	SendPacer p(c, clk.fn(), nullptr);
	clk.t += 5;	// the duration is long over, but only every 4th round looks
	EXPECT_EQ(p.step(0, 4), SendPacer::Step::go);
	EXPECT_EQ(p.step(0, 4), SendPacer::Step::go);
	EXPECT_EQ(p.step(0, 4), SendPacer::Step::go);
	EXPECT_EQ(p.step(0, 4), SendPacer::Step::stop);
	EXPECT_FALSE(p.interrupted());
}

// Workers' pacers are staggered: the second of two at rate 1/s (the whole
// rate 2/s) starts half a frame interval later, so the two send at 0 s and
// 0.5 s, then 1 s and 1.5 s, not two frames at once.
TEST(SendPacer, APhaseStaggersTheFirstFrame)
{
	FakeClock clk;
	SendConfig c;
	c.rate = 1.0;
	c.interval = 0;
	c.phase = 0.5;
	SendPacer p(c, clk.fn(), nullptr);
	clk.t += 0.25;
	EXPECT_EQ(p.step(0, 1), SendPacer::Step::wait);
	EXPECT_EQ(p.allowed(), 0u);
	clk.t += 0.5;	// 0.75 s
	EXPECT_EQ(p.step(0, 1), SendPacer::Step::go);
	EXPECT_EQ(p.allowed(), 1u);
	clk.t += 0.5;	// 1.25 s: the second frame is due at 1.5 s
	EXPECT_EQ(p.step(1, 1), SendPacer::Step::wait);
	EXPECT_EQ(p.allowed(), 1u);
	EXPECT_DOUBLE_EQ(p.until_next(1), 0.25);	// the frame after the first is due at 1.5 s
	clk.t += 0.5;	// 1.75 s
	EXPECT_EQ(p.step(1, 1), SendPacer::Step::go);
	EXPECT_EQ(p.allowed(), 2u);
	EXPECT_LT(p.until_next(1), 0);
}

struct RateCase {
	const char *name;
	double rate, elapsed;
	uint64_t frames;
	SendPacer::Step want;
	uint64_t allowed;	// allowed() at that time
};

class SendPacerRate : public ::testing::TestWithParam<RateCase> {};

TEST_P(SendPacerRate, WaitsWhenAheadOfTheRate)
{
	const RateCase &r = GetParam();
	FakeClock clk;
	SendConfig c;
	c.rate = r.rate;
	c.interval = 0;
	SendPacer p(c, clk.fn(), nullptr);
	clk.t += r.elapsed;
	// pacing looks at the clock every round, whatever @every says
	EXPECT_EQ(p.step(r.frames, 1000), r.want);
	EXPECT_EQ(p.allowed(), r.allowed);
}

const RateCase kRateCases[] = {
	{"start_waits", 1000, 0.0, 0, SendPacer::Step::wait, 1},
	{"behind_goes", 1000, 0.5, 499, SendPacer::Step::go, 501},
	{"on_the_rate_waits", 1000, 0.5, 500, SendPacer::Step::wait, 501},
	{"ahead_waits", 10, 1.0, 20, SendPacer::Step::wait, 11},
	{"slow_rate", 0.5, 4.0, 1, SendPacer::Step::go, 3},
};
INSTANTIATE_TEST_SUITE_P(Cases, SendPacerRate, ::testing::ValuesIn(kRateCases),
			 [](const auto &i) { return std::string(i.param.name); });

TEST(SendPacer, StopRequestInterruptsBeforeAnythingElse)
{
	FakeClock clk;
	bool stop = false;
	SendConfig c;
	c.interval = 1;
	SendPacer p(c, clk.fn(), [&] { return stop; });
	clk.t += 2;
	stop = true;
	EXPECT_EQ(p.step(0, 1), SendPacer::Step::stop);
	EXPECT_TRUE(p.interrupted());
}

TEST(SendPacer, DurationStopsWithoutInterrupt)
{
	FakeClock clk;
	SendConfig c;
	c.duration = 2.5;
	c.interval = 0;
	SendPacer p(c, clk.fn(), [] { return false; });
	clk.t += 2.4;
	EXPECT_EQ(p.step(0, 1), SendPacer::Step::go);
	clk.t += 0.1;
	EXPECT_EQ(p.step(0, 1), SendPacer::Step::stop);
	EXPECT_FALSE(p.interrupted());
	EXPECT_DOUBLE_EQ(p.elapsed(), 2.5);
}

// ---- TX plan --------------------------------------------------------------------

struct PlanCase {
	const char *name;
	DevKind driver;
	unsigned major, minor;
	bool zero_copy, md_registered;
	const char *md;			// Engine::md
	bool sw_csum, tx_csum, csum_partial;
	unsigned vlans;
	bool want_hw;
	const char *want_csum_why;	// substring ("" : empty)
	const char *want_note;		// substring of tx_csum_note ("" : empty)
};

class SendPlanTable : public ::testing::TestWithParam<PlanCase> {};

TEST_P(SendPlanTable, ChecksumAndItsReason)
{
	const PlanCase &c = GetParam();
	SendDriver sd{std::string(dev_kind_name(c.driver)), features::nic_facts(c.driver, c.major, c.minor)};
	features::KernelArg k;
	k.major = c.major;
	k.minor = c.minor;
	TxPlanInput in;
	in.zero_copy = c.zero_copy;
	in.md_registered = c.md_registered;
	in.md = c.md;
	in.sw_csum = c.sw_csum;
	in.tx_csum = c.tx_csum;
	PacketClass pc;
	pc.gso = false;
	pc.l4 = L4::udp4;
	pc.csum_partial = c.csum_partial;
	pc.vlans = c.vlans;
	const SendPlan p = send_plan(sd, in, pc, k);
	EXPECT_EQ(p.plan.csum_hw, c.want_hw);
	EXPECT_EQ(p.csum, c.want_hw ? "tx-metadata" : "software");
	EXPECT_EQ(p.plan.vlan_sw, c.vlans > 0);
	if (*c.want_csum_why)
		EXPECT_NE(p.csum_why.find(c.want_csum_why), std::string::npos) << p.csum_why;
	else
		EXPECT_EQ(p.csum_why, "");
	if (*c.want_note)
		EXPECT_NE(p.tx_csum_note.find(c.want_note), std::string::npos) << p.tx_csum_note;
	else
		EXPECT_EQ(p.tx_csum_note, "");
}

const PlanCase kPlanCases[] = {
	{"veth_copy_612_by_queue", DevKind::veth, 6, 12, false, true, "enabled", false, true, true, 0, true, "", ""},
	{"veth_copy_612_tagged", DevKind::veth, 6, 12, false, true, "enabled", false, true, true, 2, true, "", ""},
	{"veth_not_asked", DevKind::veth, 6, 12, false, false, "off", false, false, false, 0, false,
	 "not asked of the queue", ""},
	{"veth_md_off_asked", DevKind::veth, 6, 12, false, false, "off", false, true, true, 0, false,
	 "TX metadata not registered", ""},
	{"sw_csum_wins", DevKind::veth, 6, 12, false, false, "off", true, false, false, 0, false, "--sw-csum", ""},
	{"virtio_copy_612_drops", DevKind::virtio_net, 6, 12, false, true, "enabled", false, true, true, 0, false,
	 "drops it in copy mode", "drops it in copy mode"},
	{"i40e_zc_ignores", DevKind::i40e, 6, 12, true, true, "enabled", false, true, true, 0, false,
	 "ignores it in zero-copy", "ignores it in zero-copy"},
	{"mlx5_zc_612_by_queue", DevKind::mlx5_core, 6, 12, true, true, "enabled", false, true, true, 1, true, "", ""},
	{"veth_61_no_metadata", DevKind::veth, 6, 1, false, true, "enabled", false, true, true, 0, false,
	 "before Linux 6.8", "before Linux 6.8"},
};
INSTANTIATE_TEST_SUITE_P(Cases, SendPlanTable, ::testing::ValuesIn(kPlanCases),
			 [](const auto &i) { return std::string(i.param.name); });

TEST(SendPlan, RefusedRegistrationKeepsItsReasonAndNoNote)
{
	SendDriver sd{std::string("virtio_net"), features::nic_facts(DevKind::virtio_net, 7, 2)};
	features::KernelArg k;
	k.major = 7;
	k.minor = 2;
	TxPlanInput in;
	in.md = "refused";
	in.md_why = "eth0 refuses a UMEM with TX metadata at bind (EOPNOTSUPP)";
	in.tx_csum = true;
	PacketClass pc;
	pc.gso = false;
	pc.csum_partial = true;
	const SendPlan p = send_plan(sd, in, pc, k);
	EXPECT_FALSE(p.plan.csum_hw);
	EXPECT_EQ(p.csum_why, in.md_why);
	EXPECT_EQ(p.tx_csum_note, "");	// make_engine's note said it already
}

TEST(SendPlan, SwCsumAddsItsReason)
{
	SendDriver sd{std::string("veth"), features::nic_facts(DevKind::veth, 6, 12)};
	features::KernelArg k;
	k.major = 6;
	k.minor = 12;
	TxPlanInput in;
	in.md = "off";
	in.sw_csum = true;
	GsoRequest req;
	req.type = GsoType::tso4;
	req.mss = 1000;
	const SendPlan p = send_plan(sd, in, gso_packet_class(req, 9000, false), k);
	EXPECT_TRUE(p.plan.segment_sw);
	ASSERT_FALSE(p.plan.reasons.empty());
	EXPECT_EQ(p.plan.reasons.back(), "--sw-csum: every checksum folded into the copy in software");
}

// ---- GSO classes and sizes --------------------------------------------------------

TEST(XskPlan, GsoTypeAndPacketClass)
{
	const struct {
		const char *name;
		bool v6;
		GsoType type;
		L4 l4;
	} cases[] = {
		{"tso", false, GsoType::tso4, L4::tcp4}, {"tso", true, GsoType::tso6, L4::tcp6},
		{"uso", false, GsoType::uso4, L4::udp4}, {"uso", true, GsoType::uso6, L4::udp6},
		{"ufo", false, GsoType::ufo4, L4::ufo4}, {"gro", false, GsoType::none, L4::ufo4},
	};
	for (const auto &c : cases) {
		SCOPED_TRACE(std::string(c.name) + (c.v6 ? "6" : "4"));
		EXPECT_EQ(gso_type_of(c.name, c.v6), c.type);
		if (c.type == GsoType::none)
			continue;
		GsoRequest req;
		req.type = c.type;
		req.mss = 1400;
		req.ntags = 2;
		const PacketClass pc = gso_packet_class(req, 20000, true);
		EXPECT_EQ(pc.l4, c.l4);
		EXPECT_EQ(pc.vlans, 2u);
		EXPECT_EQ(pc.gso_size, 1400u);
		EXPECT_EQ(pc.payload, 20000u);
		EXPECT_EQ(pc.encap, Encap::none);
		EXPECT_TRUE(pc.gso);
	}
	GeneveEncap g;
	GsoRequest req;
	req.type = GsoType::uso6;
	req.geneve = &g;
	EXPECT_EQ(gso_packet_class(req, 100, false).encap, Encap::geneve);
	EXPECT_FALSE(gso_packet_class(req, 100, false).csum_partial);
}

TEST(XskPlan, GeneveOverheadAndLargestInnerFrame)
{
	GeneveEncap v4, v6;
	v6.ipv6 = true;
	EXPECT_EQ(geneve_overhead(v4), 50u);	// 14 + 20 + 8 + 8
	EXPECT_EQ(geneve_overhead(v6), 70u);	// 14 + 40 + 8 + 8
	// IPv4 total length counts the IP header; IPv6 payload length does not
	EXPECT_EQ(geneve_max_inner(v4), 65535u - 36u);
	EXPECT_EQ(geneve_max_inner(v6), 65535u - 16u);
	// the default mss gives the outer headers up
	EXPECT_EQ(default_mss(GsoType::tso4, 1500, 0, geneve_overhead(v4)), 1500u - 50u - 40u);
	EXPECT_EQ(default_mss(GsoType::uso6, 1500, 1, geneve_overhead(v6)), 1500u - 70u - 48u);
}

TEST(XskPlan, RxMultiBufferWhenTheMtuOutgrowsAChunk)
{
	const struct {
		uint32_t mtu, frame_size;
		bool sg;
	} cases[] = {{1500, 2048, false}, {1500, 4096, false}, {1770, 2048, false}, {1771, 2048, true},
		     {3818, 4096, false}, {3819, 4096, true}, {9000, 4096, true}};
	for (const auto &c : cases)
		EXPECT_EQ(rx_needs_sg(c.mtu, c.frame_size), c.sg) << c.mtu << " / " << c.frame_size;
}

FrameSpec udp_spec(uint32_t size)
{
	FrameSpec s;
	s.src_ip = {10, 0, 0, 1};
	s.dst_ip = {10, 0, 0, 2};
	s.size = size;
	return s;
}

TEST(XskPlan, SegmentCheckCountsFitsAndMeasures)
{
	auto super = build_frame(udp_spec(14 + 20 + 8 + 3000));
	ASSERT_TRUE(super);
	GsoRequest req;
	req.type = GsoType::uso4;
	req.mss = 1000;
	SegmentCheck c = check_segments(super->bytes, req, 2048);
	EXPECT_EQ(c.nseg, 3);
	EXPECT_TRUE(c.fits);
	EXPECT_EQ(c.longest, 14u + 20u + 8u + 1000u);
	// a chunk smaller than one segment: counted, does not fit
	c = check_segments(super->bytes, req, 512);
	EXPECT_EQ(c.nseg, 3);
	EXPECT_FALSE(c.fits);
	// a TCP request over a UDP frame: refused before counting
	req.type = GsoType::tso4;
	c = check_segments(super->bytes, req, 2048);
	EXPECT_LT(c.nseg, 0);
	EXPECT_FALSE(c.fits);
}

TEST(XskPlan, PlainFrameWithAndWithoutGeneve)
{
	GsoRequest req;
	auto f = make_tx_frame(udp_spec(100), req, true);
	ASSERT_TRUE(f);
	EXPECT_EQ(f->bytes.size(), 100u);
	EXPECT_TRUE(f->partial);
	EXPECT_EQ(f->csum_start, 34u);	// UDP header after Ethernet and IPv4
	EXPECT_EQ(f->csum_offset, 6u);
	GeneveEncap g;
	g.src_ip = {192, 0, 2, 1};
	g.dst_ip = {192, 0, 2, 2};
	req.geneve = &g;
	req.ntags = 1;
	req.tags[0] = GsoVlanTag{0x8100, 7, 0, false};
	f = make_tx_frame(udp_spec(100), req, false);
	ASSERT_TRUE(f);
	EXPECT_EQ(f->bytes.size(), 100u + geneve_overhead(g) + 4u);
	EXPECT_FALSE(f->partial);
}

// ---- socket layout, Geneve slots ---------------------------------------------------

TEST(SocketLayout, OneRingPerQueueSlotsInTheGroup)
{
	const struct {
		size_t nqueues;
		uint32_t shared;
		std::vector<size_t> ring;
		std::vector<uint32_t> slot;
	} cases[] = {
		{1, 0, {0}, {0}},
		{3, 0, {0, 1, 2}, {0, 0, 0}},
		{3, 1, {0, 1, 2}, {0, 0, 0}},
		{1, 4, {0, 0, 0, 0}, {0, 1, 2, 3}},
		{2, 3, {0, 0, 0, 3, 3, 3}, {0, 1, 2, 0, 1, 2}},
	};
	for (const auto &c : cases) {
		SCOPED_TRACE(std::to_string(c.nqueues) + " queues x " + std::to_string(c.shared));
		const SocketLayout l = socket_layout(c.nqueues, c.shared);
		EXPECT_EQ(l.fill_ring_of, c.ring);
		EXPECT_EQ(l.slot_of, c.slot);
	}
}

struct SlotCase {
	const char *name;
	std::vector<GeneveRule> rules;
	std::optional<uint32_t> vni, given;
	bool ok;
	uint32_t sockets, rule_queues;
	const char *error;	// substring when !ok
};

class GeneveSocketCountTable : public ::testing::TestWithParam<SlotCase> {};

TEST_P(GeneveSocketCountTable, FromTheRulesOrGiven)
{
	const SlotCase &c = GetParam();
	auto n = geneve_socket_count(c.rules, "veth0", c.vni, c.given);
	ASSERT_EQ(static_cast<bool>(n), c.ok) << (n ? "" : n.error().msg);
	if (!c.ok) {
		EXPECT_NE(n.error().msg.find(c.error), std::string::npos) << n.error().msg;
		return;
	}
	EXPECT_EQ(n->sockets, c.sockets);
	EXPECT_EQ(n->rule_queues, c.rule_queues);
}

const SlotCase kSlotCases[] = {
	{"largest_xsk_rule", {{10, XO_GNV_ACT_XSK, 2}, {20, XO_GNV_ACT_XSK, 5}, {30, XO_GNV_ACT_CPU, 8}},
	 std::nullopt, std::nullopt, true, 5, 5, ""},
	{"rule_of_vni", {{10, XO_GNV_ACT_XSK, 2}, {20, XO_GNV_ACT_XSK, 5}}, 10u, std::nullopt, true, 2, 2, ""},
	{"given_wins", {{10, XO_GNV_ACT_XSK, 4}}, std::nullopt, 2u, true, 2, 4, ""},
	{"given_without_rules", {}, std::nullopt, 3u, true, 3, 0, ""},
	{"no_xsk_rule", {{30, XO_GNV_ACT_CPU, 8}}, std::nullopt, std::nullopt, false, 0, 0,
	 "no Geneve rule on veth0 steers to AF_XDP sockets"},
	{"no_rule_for_vni", {{10, XO_GNV_ACT_XSK, 2}}, 11u, std::nullopt, false, 0, 0, "no Geneve rule for VNI 11"},
	{"vni_not_xsk", {{30, XO_GNV_ACT_CPU, 8}}, 30u, 4u, false, 0, 0, "not xsk"},
};
INSTANTIATE_TEST_SUITE_P(Cases, GeneveSocketCountTable, ::testing::ValuesIn(kSlotCases),
			 [](const auto &i) { return std::string(i.param.name); });

// ---- totals -------------------------------------------------------------------------

TEST(Totals, SumOverSocketsSharedFillRingOnce)
{
	std::vector<XskStats> st(3);
	for (size_t i = 0; i < st.size(); i++) {
		st[i].rx_packets = 10 * (i + 1);
		st[i].rx_bytes = 1000 * (i + 1);
		st[i].rx_descs = 11 * (i + 1);
		st[i].tx_packets = 5 * (i + 1);
		st[i].tx_completed = 4 * (i + 1);
		st[i].fill_ring_full = 1;
		st[i].tx_ring_full = 2;
		st[i].kick_busy = 3;
		st[i].k_rx_dropped = i;
		st[i].k_fill_empty = 7;	// the pool's count, reported to each of its sockets
	}
	st[1].kick_errors = 2;
	st[1].last_kick_errno = 19;
	const std::vector<size_t> shared = {0, 0, 2};	// sockets 0 and 1 share a ring
	Totals rx = sum_stats(st, shared, true);
	EXPECT_EQ(rx.packets, 60u);
	EXPECT_EQ(rx.bytes, 6000u);
	EXPECT_EQ(rx.descs, 66u);
	EXPECT_EQ(rx.ring_full, 3u);	// fill ring full
	EXPECT_EQ(rx.k_fill_empty, 14u);	// two rings, not three sockets
	EXPECT_EQ(rx.k_rx_dropped, 3u);
	EXPECT_EQ(rx.kick_errors, 2u);
	EXPECT_EQ(rx.kick_errno, 19);
	Totals tx = sum_stats(st, std::vector<size_t>{0, 1, 2}, false);
	EXPECT_EQ(tx.packets, 24u);	// completed frames
	EXPECT_EQ(tx.bytes, 0u);	// the loop knows the bytes, not the counters
	EXPECT_EQ(tx.submitted, 30u);
	EXPECT_EQ(tx.completed, 24u);
	EXPECT_EQ(tx.ring_full, 6u);	// TX ring full
	EXPECT_EQ(tx.kick_busy, 9u);
	EXPECT_EQ(tx.k_fill_empty, 21u);
}

TEST(Totals, EmptyEngineSumsToZero)
{
	Totals t = sum_stats({}, {}, true);
	EXPECT_EQ(t.packets, 0u);
	EXPECT_EQ(t.k_fill_empty, 0u);
	EXPECT_EQ(t.kick_errno, 0);
}

// ---- worker threads -------------------------------------------------------------

TEST(ThreadPlan, OneThreadPerQueueUnpinned)
{
	const std::vector<size_t> own = {0, 1, 2};
	ThreadPlan p = plan_threads(own, {});
	ASSERT_EQ(p.size(), 3u);
	for (size_t t = 0; t < 3; t++) {
		EXPECT_EQ(p.socks[t], std::vector<size_t>{t});
		EXPECT_EQ(p.cpu[t], -1);
	}
}

TEST(ThreadPlan, ASharedFillRingStaysOnOneThread)
{
	// two queues, two sockets each sharing the first one's ring (recv --geneve)
	const std::vector<size_t> shared = {0, 0, 2, 2};
	ThreadPlan p = plan_threads(shared, {});
	ASSERT_EQ(p.size(), 2u);
	EXPECT_EQ(p.socks[0], (std::vector<size_t>{0, 1}));
	EXPECT_EQ(p.socks[1], (std::vector<size_t>{2, 3}));
	// one CPU: one thread, pinned, driving every socket
	const std::vector<int> one = {1};
	p = plan_threads(shared, one);
	ASSERT_EQ(p.size(), 1u);
	EXPECT_EQ(p.cpu[0], 1);
	EXPECT_EQ(p.socks[0], (std::vector<size_t>{0, 1, 2, 3}));
}

TEST(ThreadPlan, MoreCpusThanQueuesAndGroupsDealtInTurn)
{
	const std::vector<size_t> own = {0, 1};
	const std::vector<int> three = {4, 5, 6};
	ThreadPlan p = plan_threads(own, three);
	ASSERT_EQ(p.size(), 2u);	// a thread without sockets would do nothing
	EXPECT_EQ(p.cpu, (std::vector<int>{4, 5}));
	const std::vector<size_t> five = {0, 1, 2, 3, 4};
	const std::vector<int> two = {0, 1};
	p = plan_threads(five, two);
	ASSERT_EQ(p.size(), 2u);
	EXPECT_EQ(p.socks[0], (std::vector<size_t>{0, 2, 4}));
	EXPECT_EQ(p.socks[1], (std::vector<size_t>{1, 3}));
	EXPECT_EQ(plan_threads({}, two).size(), 0u);
}

TEST(ParseCpus, ListsRangesAllAndRefusals)
{
	const std::vector<int> allowed = allowed_cpus();
	ASSERT_FALSE(allowed.empty());
	auto all = parse_cpus("all");
	ASSERT_TRUE(all.ok()) << all.error().msg;
	EXPECT_EQ(*all, allowed);
	const std::string first = std::to_string(allowed.front());
	auto one = parse_cpus(first);	// one CPU, not a count
	ASSERT_TRUE(one.ok()) << one.error().msg;
	EXPECT_EQ(*one, std::vector<int>{allowed.front()});
	for (const char *bad : {"x", "1-", ",", "-1", "0-1-2"}) {
		auto r = parse_cpus(bad);
		ASSERT_FALSE(r.ok()) << bad;
		EXPECT_EQ(r.error().msg.rfind(std::string("--cpus ") + bad + ":", 0), 0u) << r.error().msg;
	}
	auto far = parse_cpus("4000");
	ASSERT_FALSE(far.ok());
	EXPECT_NE(far.error().msg.find("CPU 4000 is not one this process may run on"), std::string::npos)
		<< far.error().msg;
}

TEST(TotalsBoard, CollectSumsWhatEveryWorkerPublished)
{
	TotalsBoard board(2);
	std::atomic<bool> quit{false};
	std::atomic<uint64_t> polls{0};
	// worker 0 answers every round with its growing count; worker 1 finishes early
	std::thread w0([&] {
		uint64_t n = 0;
		while (!quit.load()) {
			n++;
			board.poll(0, [&] {
				Totals t;
				t.packets = n;
				t.submitted = 1;
				return t;
			});
			polls++;
		}
	});
	Totals fin;
	fin.packets = 1000;
	fin.kick_errno = 11;
	board.finish(1, fin);
	Totals a = board.collect(5.0);
	Totals b = board.collect(5.0);
	quit = true;
	w0.join();
	EXPECT_GE(a.packets, 1001u);	// worker 0 answered (n >= 1) plus worker 1's final count
	EXPECT_GT(b.packets, a.packets);	// a fresh answer each round
	EXPECT_EQ(b.submitted, 1u);
	EXPECT_EQ(b.kick_errno, 11);
	EXPECT_GT(polls.load(), 0u);
}

TEST(TotalsBoard, AWorkerThatNeverAnswersDoesNotHoldTheReportUp)
{
	TotalsBoard board(1);
	Totals t = board.collect(0.05);	// nobody polls: its (empty) previous answer
	EXPECT_EQ(t.packets, 0u);
}

TEST(IntervalReports, EveryIntervalWithThePreviousTotalsAndTheSecondsBetween)
{
	TotalsBoard board(1);
	Totals fin;
	fin.packets = 42;
	board.finish(0, fin);	// a finished worker answers every round with this
	std::vector<std::pair<uint64_t, double>> seen;	// (prev packets, dt)
	uint64_t now_packets = 0;
	IntervalReports r(board, 1.0, 100.0, [&](const Totals &now, const Totals &prev, double dt) {
		now_packets = now.packets;
		seen.push_back({prev.packets, dt});
	});
	r.tick(100.5);	// not yet
	EXPECT_TRUE(seen.empty());
	r.tick(101.25);
	r.tick(101.5);	// within a second of the last report
	r.tick(102.5);
	ASSERT_EQ(seen.size(), 2u);
	EXPECT_EQ(now_packets, 42u);
	EXPECT_EQ(seen[0].first, 0u);	// nothing reported before the first
	EXPECT_DOUBLE_EQ(seen[0].second, 1.25);
	EXPECT_EQ(seen[1].first, 42u);
	EXPECT_DOUBLE_EQ(seen[1].second, 1.25);
	IntervalReports none(board, 0, 100.0, [&](const Totals &, const Totals &, double) { seen.clear(); });
	none.tick(1e9);
	EXPECT_EQ(seen.size(), 2u) << "interval 0: no reports";
}

TEST(CountShare, ThreadsTogetherTakeExactlyTheCount)
{
	CountShare c(100000);
	std::atomic<uint64_t> took{0};
	auto worker = [&](uint64_t batch, bool short_takes) {
		for (uint64_t i = 0; !c.done(); i++) {
			const uint64_t r = c.reserve(batch);
			// a ring that had fewer frames than reserved: the rest goes back
			const uint64_t t = short_takes && r > 1 && (i % 3) == 0 ? r / 2 : r;
			c.commit(r, t);
			took += t;
		}
	};
	std::thread a(worker, 64, true), b(worker, 7, false);
	a.join();
	b.join();
	EXPECT_EQ(c.committed(), 100000u);
	EXPECT_EQ(took.load(), 100000u);
	EXPECT_EQ(c.reserve(5), 0u) << "nothing left to reserve";
	CountShare unlimited(UINT64_MAX);
	EXPECT_EQ(unlimited.reserve(64), 64u);
	unlimited.commit(64, 10);
	EXPECT_FALSE(unlimited.done());
	EXPECT_EQ(unlimited.committed(), 10u);
}

// The reporting thread's ticks come at any time: a report is due an
// interval after the last one, with the seconds since it.
TEST(IntervalReports, ReportsEveryIntervalWithTheTimeSinceTheLast)
{
	TotalsBoard board(1);
	board.finish(0, Totals{});
	double now = 100.0, dt = 0;
	bool reported = false;
	IntervalReports r(board, 1.0, now, [&](const Totals &, const Totals &, double d) {
		reported = true;
		dt = d;
	});
	const struct {
		double advance;
		bool report;
		double dt;
	} steps[] = {{0.5, false, 0}, {0.6, true, 1.1}, {0.5, false, 0}, {0.5, true, 1.0}, {3.0, true, 3.0}};
	for (const auto &s : steps) {
		now += s.advance;
		reported = false;
		r.tick(now);
		EXPECT_EQ(reported, s.report) << "at +" << now - 100;
		if (s.report) {
			EXPECT_NEAR(dt, s.dt, 1e-9);
		}
	}
}

TEST(Totals, AddTotalsCounterByCounter)
{
	Totals a, b;
	a.packets = 1;
	a.k_fill_empty = 2;
	a.kick_errno = 5;
	b.packets = 10;
	b.bytes = 20;
	b.descs = 3;
	b.completed = 4;
	add_totals(a, b);
	EXPECT_EQ(a.packets, 11u);
	EXPECT_EQ(a.bytes, 20u);
	EXPECT_EQ(a.k_fill_empty, 2u);
	EXPECT_EQ(a.descs, 3u);
	EXPECT_EQ(a.completed, 4u);
	EXPECT_EQ(a.kick_errno, 5);	// b had none
}

} // namespace
