// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The receive offload engine: the round trip through the segmentation
// engine (every row of the GSO table and 100,000 random super-packets come
// back byte for byte: tests/common/gro_check.hpp says what that compares),
// the kernel's merge rules row by row, checksum verification, fragment
// reassembly, and hostile input (truncated, corrupted, overlapping,
// flooding) that must never crash, never pass the memory bound, and be
// counted.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "geneve_frames.hpp"
#include "gro_check.hpp"
#include "gso_check.hpp"
#include "gso_rows.hpp"
#include "packet_builder.hpp"
#include "xoffload/gro/gro.hpp"

using namespace xoffload;
using namespace xo_test;
using namespace xoffload::test;

namespace {

using xo_test::Bytes;

// Output buffers for gso_segment.
struct Bufs {
	std::vector<std::vector<std::byte>> mem;
	std::vector<GsoFrame> frames;
	Bufs(size_t n, uint32_t cap)
	{
		mem.resize(n);
		for (auto &m : mem) {
			m.resize(cap);
			frames.push_back(GsoFrame{m.data(), cap});
		}
	}
};

std::span<const std::byte> bytes_of(const Bytes &b)
{
	return {reinterpret_cast<const std::byte *>(b.data()), b.size()};
}

// ---- the round trip: every row of the GSO table ----

class GroRoundTrip : public ::testing::TestWithParam<Row> {};

TEST_P(GroRoundTrip, GsoThenGroGivesTheSuperPacketBack)
{
	const Row &r = GetParam();
	Bufs b(r.nbufs, r.cap);
	const int n = gso_segment(bytes_of(r.input), r.req, b.frames);
	ASSERT_EQ(n, r.want) << r.name;
	for (GroCsumOut mode : {GroCsumOut::complete, GroCsumOut::partial}) {
		EXPECT_EQ(gro_round_trip(r.input, r.req, b.frames, n, mode), "")
			<< r.name << (mode == GroCsumOut::partial ? " (partial)" : " (complete)");
		// the same frames as multi-buffer descriptors, cut in the headers and in the payload
		std::vector<std::pair<size_t, size_t>> splits(static_cast<size_t>(n), {30, 70});
		EXPECT_EQ(gro_round_trip(r.input, r.req, b.frames, n, mode, splits), "") << r.name << " split";
	}
}

std::vector<Row> trip_rows()
{
	std::vector<Row> out;
	for (Row &r : rows())
		if (r.want > 0)
			out.push_back(std::move(r));
	return out;
}

INSTANTIATE_TEST_SUITE_P(GsoTable, GroRoundTrip, ::testing::ValuesIn(trip_rows()),
			 [](const auto &info) { return std::string(info.param.name); });

// ---- the round trip: random super-packets ----

struct Random {
	std::mt19937_64 rng;
	explicit Random(uint64_t seed) : rng(seed) {}
	uint64_t below(uint64_t n) { return rng() % n; }
	bool coin(unsigned in = 2) { return below(in) == 0; }
};

const std::byte kOpts8[8] = {std::byte{0x01}, std::byte{0x02}, std::byte{0x80}, std::byte{0x01},
			     std::byte{1},    std::byte{2},    std::byte{3},    std::byte{4}};

// One random super-packet and request within what the kernel's rules merge
// into one packet (no SYN/RST/URG, at most 64 UDP segments, 256 fragments,
// 65535 bytes from L3): "" or what went wrong.
std::string random_trip(Random &r, GroCsumOut mode, GroEngine *engine, GroEngine *zc_engine, size_t *frames_out)
{
	const bool v6 = r.coin(), tcp = r.coin();
	const int in_tags = static_cast<int>(r.below(3));
	GsoRequest req;
	const bool ufo = !tcp && r.coin(3);
	req.type = tcp ? (v6 ? GsoType::tso6 : GsoType::tso4)
		       : ufo ? (v6 ? GsoType::ufo6 : GsoType::ufo4) : (v6 ? GsoType::uso6 : GsoType::uso4);
	if (r.coin(20))
		req.type = GsoType::none;
	GeneveEncap g;
	if (r.coin(4)) {
		g.ipv6 = r.coin();
		g.udp_csum = r.coin();
		g.vni = static_cast<uint32_t>(r.below(1 << 24));
		g.options = std::span<const std::byte>(kOpts8, r.coin() ? 8 : 0);
		std::copy(kIpA.begin(), kIpA.end(), g.src_ip.begin());
		std::copy(kIpC.begin(), kIpC.end(), g.dst_ip.begin());
		g.dst_mac.b = {2, 0, 0, 0, 0, 0x0d};
		g.src_mac.b = {2, 0, 0, 0, 0, 0x0e};
		req.geneve = &g;
	}
	req.ntags = static_cast<uint8_t>(r.below(static_cast<uint64_t>(req.geneve ? 3 : 3 - in_tags)));
	req.tags[0] = {0x88a8, static_cast<uint16_t>(r.below(4095) + 1), static_cast<uint8_t>(r.below(8)), r.coin()};
	req.tags[1] = {0x8100, static_cast<uint16_t>(r.below(4095) + 1), static_cast<uint8_t>(r.below(8)), r.coin()};
	req.fixed_ipid = r.coin(4);
	req.csum = r.coin(4) ? CsumMode::tx_metadata : CsumMode::software;

	PacketBuilder b;
	b.eth(kMacB, kMacA);
	for (int t = 0; t < in_tags; t++)
		b.vlan(t ? 0x8100 : 0x88a8, static_cast<uint16_t>(r.below(4094) + 1));
	size_t hdr = 14 + 4 * size_t(in_tags);
	if (v6) {
		b.ipv6(kIp6A, kIp6B, static_cast<uint8_t>(r.below(255) + 1));
		hdr += 40;
		if (r.coin(4)) {
			b.ipv6_ext(0, {1, 4, 0, 0, 0, 0});
			hdr += 8;
		}
		if (r.coin(4)) {
			b.ipv6_ext(60, {1, 4, 0, 0, 0, 0, 1, 6, 0, 0, 0, 0, 0, 0});
			hdr += 16;
		}
	} else {
		b.ipv4(kIpA, kIpB, static_cast<uint8_t>(r.below(255) + 1), static_cast<uint16_t>(r.rng()));
		hdr += 20;
		if (r.coin(6)) {
			b.ip_options({0x94, 0x04, 0x00, 0x00, 0x07, 0x07, 0x04, 0x00});
			hdr += 8;
		}
	}
	if (tcp) {
		// no SYN/RST/URG: the kernel merges none of those
		const uint8_t flags = static_cast<uint8_t>(r.rng() & 0xd9);
		b.tcp(static_cast<uint16_t>(r.below(65535) + 1), kPortB, flags, static_cast<uint32_t>(r.rng()));
		hdr += 20;
		if (r.coin(3)) {
			b.tcp_options({0x01, 0x01, 0x08, 0x0a, 0, 0, 0, 1, 0, 0, 0, 2});
			hdr += 12;
		}
	} else {
		b.udp(static_cast<uint16_t>(r.below(65535) + 1), kPortB);
		hdr += 8;
	}
	const size_t outer = req.geneve ? 14 + 4 * size_t(req.ntags) + (g.ipv6 ? 40 : 20) + 16 + g.options.size() : 0;
	const size_t added = req.geneve ? outer : 4 * size_t(req.ntags);
	// 65535 bytes from the first L3 header, the outer one included
	const size_t room = 65535 + 14 - hdr - added - (req.geneve ? 0 : 0);
	size_t payload = r.coin(3) ? r.below(std::min<size_t>(room, 65000)) : r.below(4000);
	// the mss: at most 64 segments (the kernel's UDP count; TCP kept as short)
	size_t mss = 1 + r.below(1500);
	if (ufo)
		mss = 264 + r.below(1300);
	else if (payload / mss >= 64)
		mss = payload / 63 + 1;
	if (mss > 65535)
		mss = 65535;
	req.mss = static_cast<uint16_t>(mss);
	Bytes in = b.payload(payload, static_cast<uint8_t>(r.rng())).build();
	if (req.type == GsoType::none) {
		req.mss = 0;
		mss = in.size();
	}

	// every frame fits (a request of type none is one frame of it all)
	const size_t cap = std::min(in.size(), 2048 + hdr + mss) + outer + 64;
	const int want = gso_count(std::span<const std::span<const std::byte>>(std::array{bytes_of(in)}), req);
	if (want <= 0)
		return "gso_count: " + std::to_string(want);
	Bufs bufs(static_cast<size_t>(want), static_cast<uint32_t>(cap));
	GsoError why{};
	const int n = gso_segment(bytes_of(in), req, bufs.frames, &why);
	if (n != want)
		return "gso_segment: " + std::to_string(n) + " " + to_string(why) + " (" + to_string(req.type) + " mss " +
		       std::to_string(req.mss) + ", " + std::to_string(in.size()) + " B, cap " + std::to_string(cap) + ")";
	std::vector<std::pair<size_t, size_t>> splits;
	if (r.coin(4))
		for (int k = 0; k < n; k++)
			splits.emplace_back(r.below(200), r.below(3000));
	*frames_out += static_cast<size_t>(n);
	std::string e = gro_round_trip(in, req, bufs.frames, n, mode, splits, engine, zc_engine);
	if (!e.empty())
		e += std::string(" [") + to_string(req.type) + " mss " + std::to_string(req.mss) + " payload " +
		     std::to_string(payload) + " tags " + std::to_string(in_tags) + "+" + std::to_string(req.ntags) +
		     (req.geneve ? " geneve" : "") + (v6 ? " v6" : " v4") + "]";
	return e;
}

TEST(GroRoundTrip, HundredThousandRandomSuperPackets)
{
	Random r(0x37);
	size_t frames = 0;
	const int kCases = 100000;
	// each case also through a zero-copy engine, paired with the copy-mode
	// one so that their statistics stay comparable: [mode][zc_min_span 1 or 256]
	std::unique_ptr<GroEngine> copy[2][2], zc[2][2];
	for (int p = 0; p < 2; p++)
		for (int m = 0; m < 2; m++) {
			const GroCsumOut mode = p ? GroCsumOut::partial : GroCsumOut::complete;
			ASSERT_EQ(GroEngine::create(trip_config(mode), &copy[p][m]), 0);
			ASSERT_EQ(GroEngine::create(trip_config_zc(mode, m ? 256 : 1), &zc[p][m]), 0);
		}
	for (int i = 0; i < kCases; i++) {
		const int p = i % 4 == 3, m = (i / 4) % 2;
		std::string e = random_trip(r, p ? GroCsumOut::partial : GroCsumOut::complete, copy[p][m].get(),
					    zc[p][m].get(), &frames);
		ASSERT_EQ(e, "") << "case " << i;
	}
	// more than one frame per case on average: the merges were exercised
	EXPECT_GT(frames, size_t{2} * kCases);
}

// ---- frames for the rule tables ----

// Recomputes a frame's IPv4 header and TCP/UDP checksums (outer and inner
// under Geneve) with the test's own code.
void fix_csums(Bytes &f, size_t start = 0)
{
	// the IPv4 header checksum first: parse_frame refuses a wrong one
	size_t l3 = start + 12;
	while (l3 + 2 <= f.size() && (be16(f.data() + l3) == 0x8100 || be16(f.data() + l3) == 0x88a8))
		l3 += 4;
	if (l3 + 2 + 20 <= f.size() && be16(f.data() + l3) == 0x0800) {
		l3 += 2;
		size_t ihl = size_t(f[l3] & 15) * 4;
		if (l3 + ihl <= f.size()) {
			put16(f, l3 + 10, 0);
			put16(f, l3 + 10, static_cast<uint16_t>(~fold(sum_bytes(f.data() + l3, ihl))));
		}
	}
	FrameView v;
	if (!parse_frame(f.data(), f.size(), start, v).empty())
		return;
	if (v.is_frag || (v.proto != 6 && v.proto != 17))
		return;
	if (v.proto == 17 && be16(f.data() + v.l4 + 2) == 6081 && start == 0)
		fix_csums(f, v.l4 + 16 + size_t(f[v.l4 + 8] & 63) * 4);	// the inner first
	const size_t co = v.proto == 6 ? 16 : 6;
	if (v.proto == 17 && be16(f.data() + v.l4 + co) == 0 && start == 0 && be16(f.data() + v.l4 + 2) == 6081)
		return;	// a Geneve outer without checksum stays so
	put16(f, v.l4 + co, 0);
	uint16_t c = static_cast<uint16_t>(
		~fold(pseudo(f.data(), v, v.proto, f.size() - v.l4) + sum_bytes(f.data() + v.l4, f.size() - v.l4)));
	put16(f, v.l4 + co, v.proto == 17 && c == 0 ? 0xffff : c);
}

struct Seg {
	bool v6 = false;
	bool udp = false;
	uint32_t seq = 1000;
	uint32_t ack = 0;
	uint16_t id = 100;
	uint8_t flags = 0x10;	// ACK
	size_t len = 1000;
	uint8_t ttl = 64;
	uint8_t tos = 0;
	bool df = true;
	uint16_t win = 65535;
	std::vector<uint16_t> vids;	// outermost first: 802.1ad then 802.1Q
	uint8_t pcp = 0;
	bool ts = false;		// TCP timestamp option
	uint32_t tsval = 1;
	uint16_t sport = kPortA;
	uint32_t label = 0;
	uint8_t seed = 0;		// payload pattern
};

Bytes make(const Seg &s)
{
	PacketBuilder b;
	b.eth(kMacB, kMacA);
	for (size_t k = 0; k < s.vids.size(); k++)
		b.vlan(k + 1 < s.vids.size() ? 0x88a8 : 0x8100, s.vids[k], s.pcp);
	if (s.v6)
		b.ipv6(kIp6A, kIp6B, s.ttl);
	else
		b.ipv4(kIpA, kIpB, s.ttl, s.id);
	if (s.udp) {
		b.udp(s.sport, kPortB);
	} else {
		b.tcp(s.sport, kPortB, s.flags, s.seq);
		if (s.ts)
			b.tcp_options({0x01, 0x01, 0x08, 0x0a, static_cast<uint8_t>(s.tsval >> 24),
				       static_cast<uint8_t>(s.tsval >> 16), static_cast<uint8_t>(s.tsval >> 8),
				       static_cast<uint8_t>(s.tsval), 0, 0, 0, 2});
	}
	Bytes f = b.payload(s.len, s.seed).build();
	FrameView v;
	parse_frame(f.data(), f.size(), 0, v);
	if (!s.v6) {
		f[v.l3 + 1] = s.tos;
		put16(f, v.l3 + 6, s.df ? 0x4000 : 0);
	} else {
		put16(f, v.l3, static_cast<uint16_t>(0x6000 | s.tos << 4 | (s.label >> 16 & 0xf)));
		put16(f, v.l3 + 2, static_cast<uint16_t>(s.label));
	}
	if (!s.udp) {
		put16(f, v.l4 + 8, static_cast<uint16_t>(s.ack >> 16));
		put16(f, v.l4 + 10, static_cast<uint16_t>(s.ack));
		put16(f, v.l4 + 14, s.win);
	}
	fix_csums(f);
	return f;
}

// n segments of a stream: seq and IPv4 ID advancing.
std::vector<Seg> stream(size_t n, Seg s = {})
{
	std::vector<Seg> out;
	for (size_t k = 0; k < n; k++) {
		out.push_back(s);
		s.seq += static_cast<uint32_t>(s.len);
		s.id++;
		s.seed = static_cast<uint8_t>(s.seed + s.len);
	}
	return out;
}

GroConfig config(bool tcp = true, bool udp = true, bool frag = true, bool geneve = true)
{
	GroConfig c;
	c.kinds = {tcp, udp, frag, geneve};
	return c;
}

struct Out {
	std::vector<Bytes> packets;
	std::vector<GroPacket> meta;
	std::vector<GroVerdict> verdicts;
	GroStats st;
};

// The frames through an engine of cfg in one receive() and a flush();
// through zero-copy engines of cfg too (every piece referenced, and pieces
// of 256 bytes or more), which must give what trip_diff compares: so every
// test that runs frames here holds for both modes.
Out run(const std::vector<Bytes> &frames, GroConfig cfg = config(), bool flush = true)
{
	Out o;
	cfg.zero_copy = false;
	GroTrip t;
	EXPECT_EQ(gro_run(frames, cfg, t, {}, nullptr, 1, flush), 0);
	for (uint32_t min_span : {1u, 256u}) {
		GroConfig zc = cfg;
		zc.zero_copy = true;
		zc.zc_min_span = min_span;
		GroTrip z;
		EXPECT_EQ(gro_run(frames, zc, z, {}, nullptr, 1, flush), 0);
		EXPECT_EQ(trip_diff(t, z), "") << "zc_min_span " << min_span;
	}
	o.packets = std::move(t.packets);
	o.meta = std::move(t.meta);
	o.verdicts = std::move(t.verdicts);
	o.st = t.stats;
	return o;
}

std::vector<Bytes> build(const std::vector<Seg> &segs)
{
	std::vector<Bytes> out;
	for (const Seg &s : segs)
		out.push_back(make(s));
	return out;
}

// The accounting every run must satisfy.
void expect_accounted(const GroStats &st)
{
	EXPECT_EQ(st.frames_in, st.held + st.merged + st.passed + st.frags_in);
	uint64_t by = 0;
	for (uint64_t v : st.flush_by)
		by += v;
	EXPECT_EQ(by, st.packets_out);
	EXPECT_LE(st.frag_mem, st.frag_mem_peak);
}

// ---- the kernel's rules, row by row ----

struct RuleRow {
	const char *name;
	std::vector<Seg> segs;
	std::vector<uint16_t> want_segs;	// per packet out, in order
	std::vector<GroFlush> want_flush;	// per packet out
	GroConfig cfg = config();
};

// f applied to segment k
std::vector<Seg> edit(std::vector<Seg> v, size_t k, void (*f)(Seg &))
{
	f(v[k]);
	return v;
}

// f applied to segment k and those after it
std::vector<Seg> from(std::vector<Seg> v, size_t k, void (*f)(Seg &))
{
	for (; k < v.size(); k++)
		f(v[k]);
	return v;
}

// segment k made another flow's by f, the stream going on around it
std::vector<Seg> other(std::vector<Seg> v, size_t k, void (*f)(Seg &))
{
	f(v[k]);
	for (size_t j = k + 1; j < v.size(); j++) {
		v[j].seq -= static_cast<uint32_t>(v[k].len);
		v[j].id--;
	}
	return v;
}

std::vector<RuleRow> rule_rows()
{
	Seg v6;
	v6.v6 = true;
	Seg udp;
	udp.udp = true;
	Seg tagged;
	tagged.vids = {10};
	Seg qinq;
	qinq.vids = {100, 10};
	Seg ts;
	ts.ts = true;
	Seg nodf;
	nodf.df = false;
	std::vector<RuleRow> r = {
		{"tcp4_four_in_order", stream(4), {4}, {GroFlush::batch_end}},
		{"tcp6_four_in_order", stream(4, v6), {4}, {GroFlush::batch_end}},
		{"tcp4_vlan", stream(4, tagged), {4}, {GroFlush::batch_end}},
		{"tcp4_qinq", stream(4, qinq), {4}, {GroFlush::batch_end}},
		{"tcp4_psh_ends_the_run",
		 edit(stream(4), 1, [](Seg &s) { s.flags |= 0x08; }),
		 {2, 2},
		 {GroFlush::flags, GroFlush::batch_end}},
		{"tcp4_fin_ends_the_run",
		 edit(stream(3), 2, [](Seg &s) { s.flags |= 0x01; }),
		 {3},
		 {GroFlush::flags}},
		{"tcp4_shorter_segment_ends_the_run",
		 edit(stream(4), 1, [](Seg &s) { s.len = 500; }),
		 {2, 2},
		 {GroFlush::short_seg, GroFlush::batch_end}},
		{"tcp4_longer_segment_starts_anew",
		 [] {
			 auto v = stream(3);
			 v[1].len = v[2].len = 1200;
			 v[2].seq = v[1].seq + 1200;
			 return v;
		 }(),
		 {1, 2},
		 {GroFlush::mismatch, GroFlush::batch_end}},
		{"tcp4_sequence_gap",
		 edit(stream(3), 2, [](Seg &s) { s.seq += 1; }),
		 {2, 1},
		 {GroFlush::mismatch, GroFlush::batch_end}},
		{"tcp4_ack_differs",
		 from(stream(3), 1, [](Seg &s) { s.ack = 7; }),
		 {1, 2},
		 {GroFlush::mismatch, GroFlush::batch_end}},
		{"tcp4_window_differs",
		 edit(stream(3), 2, [](Seg &s) { s.win = 1000; }),
		 {2, 1},
		 {GroFlush::mismatch, GroFlush::batch_end}},
		{"tcp4_timestamps_equal_merge", stream(3, ts), {3}, {GroFlush::batch_end}},
		{"tcp4_timestamp_differs",
		 edit(stream(3, ts), 2, [](Seg &s) { s.tsval = 9; }),
		 {2, 1},
		 {GroFlush::mismatch, GroFlush::batch_end}},
		{"tcp4_ttl_differs",
		 from(stream(3), 1, [](Seg &s) { s.ttl = 63; }),
		 {1, 2},
		 {GroFlush::mismatch, GroFlush::batch_end}},
		{"tcp4_tos_differs",
		 from(stream(3), 1, [](Seg &s) { s.tos = 4; }),
		 {1, 2},
		 {GroFlush::mismatch, GroFlush::batch_end}},
		{"tcp4_id_jumps",
		 edit(stream(3), 2, [](Seg &s) { s.id += 5; }),
		 {2, 1},
		 {GroFlush::mismatch, GroFlush::batch_end}},
		{"tcp4_fixed_id_with_df",
		 [] {
			 auto v = stream(4);
			 for (Seg &s : v)
				 s.id = 77;
			 return v;
		 }(),
		 {4},
		 {GroFlush::batch_end}},
		{"tcp4_fixed_id_without_df",
		 [] {
			 auto v = stream(3);
			 for (Seg &s : v) {
				 s.id = 77;
				 s.df = false;
			 }
			 return v;
		 }(),
		 {1, 1, 1},
		 {GroFlush::mismatch, GroFlush::mismatch, GroFlush::batch_end}},
		{"tcp4_incrementing_id_without_df", stream(3, nodf), {3}, {GroFlush::batch_end}},
		{"tcp4_df_differs",
		 from(stream(3), 1, [](Seg &s) { s.df = false; }),
		 {1, 2},
		 {GroFlush::mismatch, GroFlush::batch_end}},
		{"tcp4_cwr_on_a_later_segment",
		 edit(stream(3), 1, [](Seg &s) { s.flags |= 0x80; }),
		 {1, 2},
		 {GroFlush::mismatch, GroFlush::batch_end}},
		{"tcp4_cwr_on_the_first",
		 edit(stream(3), 0, [](Seg &s) { s.flags |= 0x80; }),
		 {3},
		 {GroFlush::batch_end}},
		{"tcp4_rst_flushes_and_goes_alone",
		 edit(stream(3), 2, [](Seg &s) { s.flags = 0x14; }),
		 {2, 1},
		 {GroFlush::flags, GroFlush::passed}},
		{"tcp4_syn_alone", edit(stream(1), 0, [](Seg &s) { s.flags = 0x02; }), {1}, {GroFlush::passed}},
		{"tcp4_urg_flushes",
		 edit(stream(3), 1, [](Seg &s) { s.flags |= 0x20; }),
		 {1, 1, 1},
		 {GroFlush::flags, GroFlush::passed, GroFlush::batch_end}},
		{"tcp4_pure_ack_flushes",
		 edit(stream(3), 2, [](Seg &s) { s.len = 0; }),
		 {2, 1},
		 {GroFlush::mismatch, GroFlush::passed}},
		{"tcp4_lone_psh_not_held", edit(stream(1), 0, [](Seg &s) { s.flags = 0x18; }), {1}, {GroFlush::passed}},
		{"tcp6_flow_label_another_flow",
		 other(stream(3, v6), 1, [](Seg &s) { s.label = 0x12345; }),
		 {2, 1},
		 {GroFlush::batch_end, GroFlush::batch_end}},
		{"tcp6_traffic_class_flushes",
		 from(stream(3, v6), 1, [](Seg &s) { s.tos = 0x20; }),
		 {1, 2},
		 {GroFlush::mismatch, GroFlush::batch_end}},
		{"tcp6_hop_limit_flushes",
		 edit(stream(3, v6), 2, [](Seg &s) { s.ttl = 1; }),
		 {2, 1},
		 {GroFlush::mismatch, GroFlush::batch_end}},
		{"vlan_vid_another_flow",
		 other(stream(3, tagged), 1, [](Seg &s) { s.vids = {11}; }),
		 {2, 1},
		 {GroFlush::batch_end, GroFlush::batch_end}},
		{"vlan_pcp_another_flow",
		 other(stream(3, tagged), 2, [](Seg &s) { s.pcp = 5; }),
		 {2, 1},
		 {GroFlush::batch_end, GroFlush::batch_end}},
		{"vlan_qinq_and_single_tag_two_flows",
		 other(stream(3, qinq), 1, [](Seg &s) { s.vids = {10}; }),
		 {2, 1},
		 {GroFlush::batch_end, GroFlush::batch_end}},
		{"tagged_and_untagged_two_flows",
		 other(stream(3, tagged), 1, [](Seg &s) { s.vids = {}; }),
		 {2, 1},
		 {GroFlush::batch_end, GroFlush::batch_end}},
		{"udp4_equal_datagrams", stream(5, udp), {5}, {GroFlush::batch_end}},
		{"udp4_last_shorter_ends",
		 edit(stream(4, udp), 2, [](Seg &s) { s.len = 10; }),
		 {3, 1},
		 {GroFlush::short_seg, GroFlush::batch_end}},
		{"udp4_longer_starts_anew",
		 edit(stream(3, udp), 1, [](Seg &s) { s.len = 1100; }),
		 {1, 2},
		 {GroFlush::mismatch, GroFlush::short_seg}},
		{"udp4_sixty_four_at_most", stream(70, udp), {64, 6}, {GroFlush::segs, GroFlush::batch_end}},
		{"udp6_equal_datagrams",
		 [] {
			 Seg s;
			 s.udp = s.v6 = true;
			 return stream(4, s);
		 }(),
		 {4},
		 {GroFlush::batch_end}},
		{"tcp4_64k_bound",
		 stream(50, [] {
			 Seg s;
			 s.len = 1448;
			 return s;
		 }()),
		 {45, 5},
		 {GroFlush::size, GroFlush::batch_end}},
		{"kind_off_tcp_passed", stream(3), {1, 1, 1}, {GroFlush::passed, GroFlush::passed, GroFlush::passed},
		 config(false)},
	};
	// four flows, room for two: the oldest goes out
	{
		std::vector<Seg> v;
		for (uint16_t f = 0; f < 4; f++) {
			Seg s;
			s.sport = static_cast<uint16_t>(kPortA + f);
			v.push_back(s);
		}
		GroConfig c = config();
		c.max_flows = 2;
		r.push_back({"table_full_flushes_the_oldest", v, {1, 1, 1, 1},
			     {GroFlush::table_full, GroFlush::table_full, GroFlush::batch_end, GroFlush::batch_end}, c});
	}
	{
		GroConfig c = config();
		c.max_segs_tcp = 3;
		r.push_back({"tcp_max_segs", stream(7), {3, 3, 1},
			     {GroFlush::segs, GroFlush::segs, GroFlush::batch_end}, c});
	}
	return r;
}

class GroRules : public ::testing::TestWithParam<RuleRow> {};

void PrintTo(const RuleRow &r, std::ostream *os)
{
	*os << r.name;
}

TEST_P(GroRules, MergesAsTheKernel)
{
	const RuleRow &r = GetParam();
	Out o = run(build(r.segs), r.cfg);
	std::vector<uint16_t> segs;
	std::vector<GroFlush> causes;
	for (const GroPacket &p : o.meta) {
		segs.push_back(p.segs);
		causes.push_back(p.flush);
	}
	EXPECT_EQ(segs, r.want_segs) << r.name;
	ASSERT_EQ(causes.size(), r.want_flush.size()) << r.name;
	for (size_t k = 0; k < causes.size(); k++)
		EXPECT_EQ(to_string(causes[k]), std::string(to_string(r.want_flush[k]))) << r.name << " packet " << k;
	expect_accounted(o.st);
	// whatever was merged is a valid packet: every checksum and length
	// verifies with the test's own code, and the payload is the frames'
	std::vector<Bytes> in = build(r.segs);
	size_t payload_in = 0, payload_out = 0;
	for (const Bytes &f : in) {
		FrameView v;
		ASSERT_EQ(parse_frame(f.data(), f.size(), 0, v), "");
		payload_in += f.size() - v.l4 - (v.proto == 6 ? size_t(f[v.l4 + 12] >> 4) * 4 : 8);
	}
	for (const Bytes &p : o.packets) {
		FrameView v;
		ASSERT_EQ(parse_frame(p.data(), p.size(), 0, v), "") << r.name;
		EXPECT_TRUE(csum_ok(pseudo(p.data(), v, v.proto, p.size() - v.l4) + sum_bytes(p.data() + v.l4, p.size() - v.l4)))
			<< r.name << ": L4 checksum of an output packet";
		payload_out += p.size() - v.l4 - (v.proto == 6 ? size_t(p[v.l4 + 12] >> 4) * 4 : 8);
	}
	EXPECT_EQ(payload_out, payload_in) << r.name;
}

INSTANTIATE_TEST_SUITE_P(Kernel, GroRules, ::testing::ValuesIn(rule_rows()),
			 [](const auto &info) { return std::string(info.param.name); });

// A merged TCP packet is the first segment's headers with the lengths, the
// IPv4 checksum, FIN/PSH of the last and the checksum of the whole; the
// payloads concatenated in order.
TEST(Gro, MergedTcpPacketIsTheSegmentsConcatenated)
{
	auto segs = stream(3);
	segs[2].flags |= 0x08;
	Out o = run(build(segs));
	ASSERT_EQ(o.packets.size(), 1u);
	const Bytes &p = o.packets[0];
	Bytes first = make(segs[0]);
	FrameView v;
	ASSERT_EQ(parse_frame(p.data(), p.size(), 0, v), "");
	EXPECT_EQ(be16(p.data() + v.l3 + 4), 100) << "the first segment's IPv4 ID";
	EXPECT_EQ(p[v.l4 + 13], 0x18) << "ACK with the last segment's PSH";
	EXPECT_EQ(be32(p.data() + v.l4 + 4), 1000u) << "the first segment's sequence number";
	EXPECT_TRUE(std::equal(p.begin(), p.begin() + 14, first.begin()));
	Bytes want_payload;
	for (const Seg &s : segs) {
		Bytes f = make(s);
		want_payload.insert(want_payload.end(), f.begin() + 54, f.end());
	}
	EXPECT_EQ(Bytes(p.begin() + 54, p.end()), want_payload);
	const GroPacket &m = o.meta[0];
	EXPECT_EQ(m.gso_type, GsoType::tso4);
	EXPECT_EQ(m.gso_size, 1000);
	EXPECT_EQ(m.segs, 3);
	EXPECT_EQ(m.hdr_len, 54);
	EXPECT_EQ(m.csum, GroCsum::unnecessary);
	EXPECT_EQ(o.st.super_packets, 1u);
	EXPECT_EQ(o.st.merged, 2u);
	EXPECT_EQ(o.st.held, 1u);
}

TEST(Gro, PartialChecksumOutputIsTheKernels)
{
	GroConfig c = config();
	c.csum_out = GroCsumOut::partial;
	Out o = run(build(stream(3)), c);
	ASSERT_EQ(o.packets.size(), 1u);
	const Bytes &p = o.packets[0];
	const GroPacket &m = o.meta[0];
	EXPECT_EQ(m.csum, GroCsum::partial);
	EXPECT_EQ(m.csum_start, 34);
	EXPECT_EQ(m.csum_offset, 16);
	FrameView v;
	ASSERT_EQ(parse_frame(p.data(), p.size(), 0, v), "");
	EXPECT_EQ(be16(p.data() + 34 + 16), fold(pseudo(p.data(), v, 6, p.size() - 34)))
		<< "~tcp_v4_check(len, saddr, daddr, 0), as tcp_gro_complete";
	// a held frame emitted alone is left as it came
	Out one = run(build(stream(1)), c);
	ASSERT_EQ(one.packets.size(), 1u);
	EXPECT_EQ(one.packets[0], make(stream(1)[0]));
	EXPECT_EQ(one.meta[0].csum, GroCsum::unnecessary);
	EXPECT_EQ(one.meta[0].gso_type, GsoType::none);
}

// ---- checksums ----

TEST(Gro, BadChecksumsAreNeverMergedAndFlushNothing)
{
	auto segs = stream(4);
	std::vector<Bytes> f = build(segs);
	f[1][60] ^= 0x40;		// payload: the TCP checksum no longer verifies
	Bytes bad_ip = f[2];
	f[2][14 + 8] ^= 1;		// TTL changed, IPv4 checksum left: bad header checksum
	Out o = run(f);
	// held: 0; 1 bad (passed, the flow kept); 2 bad IPv4 (passed); 3 merges with 0? no: seq gap
	ASSERT_EQ(o.verdicts.size(), 4u);
	EXPECT_EQ(o.verdicts[0], GroVerdict::held);
	EXPECT_EQ(o.verdicts[1], GroVerdict::bad_l4_csum);
	EXPECT_EQ(o.verdicts[2], GroVerdict::bad_ipv4_csum);
	EXPECT_EQ(o.st.bad_csum[size_t(GroCsumError::l4)], 1u);
	EXPECT_EQ(o.st.bad_csum[size_t(GroCsumError::ipv4_hdr)], 1u);
	EXPECT_EQ(o.st.bad_csum_total(), 2u);
	// the bad ones went out as they came, flagged, before the flow
	ASSERT_GE(o.packets.size(), 2u);
	EXPECT_EQ(o.packets[0], f[1]);
	EXPECT_EQ(o.meta[0].csum, GroCsum::bad);
	EXPECT_EQ(o.meta[0].verdict, GroVerdict::bad_l4_csum);
	EXPECT_EQ(o.meta[0].frame, 1u);
	EXPECT_EQ(o.packets[1], f[2]);
	expect_accounted(o.st);

	// the retransmission of the damaged segment continues the held flow
	std::vector<Bytes> g = build(segs);
	g.insert(g.begin() + 1, f[1]);
	Out o2 = run(g);
	ASSERT_EQ(o2.packets.size(), 2u);
	EXPECT_EQ(o2.meta[1].segs, 4) << "the flow was neither flushed nor broken by the bad segment";
}

TEST(Gro, VerifyCsumChecksPassedFrames)
{
	Seg s;
	s.flags = 0x02;		// SYN: passed
	Bytes good = make(s), bad = good;
	bad[bad.size() - 1] ^= 1;
	GroConfig on = config(), off = config();
	off.verify_csum = false;
	Out a = run({good, bad}, on);
	EXPECT_EQ(a.meta[0].csum, GroCsum::unnecessary);
	EXPECT_EQ(a.meta[1].csum, GroCsum::bad);
	EXPECT_EQ(a.verdicts[1], GroVerdict::bad_l4_csum);
	Out b = run({good, bad}, off);
	EXPECT_EQ(b.meta[0].csum, GroCsum::none);
	EXPECT_EQ(b.meta[1].csum, GroCsum::none);
	EXPECT_EQ(b.verdicts[1], GroVerdict::passed);
	// frames not of a kind merged: verified too
	GroConfig none = config(false, false, false, false);
	Out c = run({good, bad}, none);
	EXPECT_EQ(c.verdicts[1], GroVerdict::bad_l4_csum);
	EXPECT_EQ(c.st.pass_by[size_t(GroPass::kind_off)], 1u);
}

// Geneve frames around an inner TCP segment k of a stream.
Bytes geneve_frame(const Seg &inner, uint32_t vni = 100, bool outer_csum = true, uint16_t outer_id = 1,
		   std::vector<GeneveOpt> opts = {})
{
	Bytes in = make(inner);
	Bytes g = geneve(vni, kEthTeb, in, opts);
	PacketBuilder b;
	b.eth(kMacA, kMacC).ipv4(kIpC, kIpA, 64, outer_id).udp(50000, kPortGeneve).payload(g);
	Bytes f = b.build();
	put16(f, 14 + 6, 0);	// outer without DF: its ID must increment
	if (!outer_csum)
		put16(f, 34 + 6, 0);
	fix_csums(f);
	return f;
}

TEST(Gro, GeneveMergesByInnerFlow)
{
	auto segs = stream(4);
	std::vector<Bytes> f;
	for (size_t k = 0; k < segs.size(); k++)
		f.push_back(geneve_frame(segs[k], 100, true, static_cast<uint16_t>(7 + k)));
	Out o = run(f);
	ASSERT_EQ(o.packets.size(), 1u);
	const GroPacket &m = o.meta[0];
	EXPECT_EQ(m.segs, 4);
	EXPECT_TRUE(m.encap);
	EXPECT_TRUE(m.encap_csum);
	EXPECT_EQ(m.csum_level, 1);
	EXPECT_EQ(m.gso_type, GsoType::tso4);
	const Bytes &p = o.packets[0];
	FrameView ov, iv;
	ASSERT_EQ(parse_frame(p.data(), p.size(), 0, ov), "");
	EXPECT_TRUE(csum_ok(pseudo(p.data(), ov, 17, p.size() - ov.l4) + sum_bytes(p.data() + ov.l4, p.size() - ov.l4)))
		<< "outer UDP checksum of the whole";
	EXPECT_EQ(be16(p.data() + ov.l4 + 4), p.size() - ov.l4);
	ASSERT_EQ(parse_frame(p.data(), p.size(), ov.l4 + 16, iv), "");
	EXPECT_TRUE(csum_ok(pseudo(p.data(), iv, 6, p.size() - iv.l4) + sum_bytes(p.data() + iv.l4, p.size() - iv.l4)));

	// another VNI, other options, an outer ID that does not increment: not merged
	std::vector<Bytes> g = {geneve_frame(segs[0], 100, true, 7), geneve_frame(segs[1], 101, true, 8),
				geneve_frame(segs[2], 100, true, 9, {{0x0102, 1, {1, 2, 3, 4}}}),
				geneve_frame(segs[3], 100, true, 20)};
	Out o2 = run(g);
	EXPECT_EQ(o2.packets.size(), 4u);
	// outer checksum present on one, absent on the other: two flows
	Out o3 = run({geneve_frame(segs[0], 100, true, 7), geneve_frame(segs[1], 100, false, 8)});
	EXPECT_EQ(o3.packets.size(), 2u);
	// without the geneve kind: passed (verified)
	Out o4 = run(f, config(true, true, true, false));
	EXPECT_EQ(o4.packets.size(), 4u);
	EXPECT_EQ(o4.st.pass_by[size_t(GroPass::kind_off)], 4u);
}

TEST(Gro, GeneveBadChecksumsByLevel)
{
	auto segs = stream(2);
	Bytes outer_bad = geneve_frame(segs[0]);
	outer_bad[34 + 6] ^= 1;		// outer UDP checksum
	Out o = run({outer_bad});
	EXPECT_EQ(o.verdicts[0], GroVerdict::bad_outer_udp_csum);
	EXPECT_EQ(o.st.bad_csum[size_t(GroCsumError::outer_udp)], 1u);
	Bytes inner_bad2 = geneve_frame(segs[0], 100, false);
	inner_bad2[inner_bad2.size() - 1] ^= 1;
	Out o2 = run({inner_bad2});
	EXPECT_EQ(o2.verdicts[0], GroVerdict::bad_inner_l4_csum);
	Bytes inner_ip = geneve_frame(segs[0], 100, false);
	const size_t in_l3 = 34 + 16 + 14;
	inner_ip[in_l3 + 8] ^= 1;	// inner TTL
	Out o3 = run({inner_ip});
	EXPECT_EQ(o3.verdicts[0], GroVerdict::bad_inner_ipv4_csum);
}

// ---- fragments ----

// A UDP datagram of @payload bytes cut by UFO into fragments of @mss.
std::vector<Bytes> fragments(size_t payload, uint16_t mss, bool v6 = false, uint16_t id = 0x4242)
{
	PacketBuilder b;
	b.eth(kMacB, kMacA);
	if (v6)
		b.ipv6(kIp6A, kIp6B);
	else
		b.ipv4(kIpA, kIpB, 64, id);
	Bytes in = b.udp(kPortA, kPortB).payload(payload, 3).build();
	GsoRequest r;
	r.type = v6 ? GsoType::ufo6 : GsoType::ufo4;
	r.mss = mss;
	r.ipv6_frag_id = id;
	std::vector<Bytes> out = gso_cut(in, r, 300);
	EXPECT_GT(out.size(), 1u);
	return out;
}

TEST(GroFrag, ReassemblesInAnyOrder)
{
	for (bool v6 : {false, true}) {
		std::vector<Bytes> fr = fragments(9000, 1480, v6);
		Out ref = run(fr);
		ASSERT_EQ(ref.packets.size(), 1u) << v6;
		EXPECT_EQ(ref.meta[0].flush, GroFlush::reassembled);
		EXPECT_EQ(ref.meta[0].segs, fr.size());
		EXPECT_EQ(ref.meta[0].csum, GroCsum::unnecessary);
		std::mt19937 rng(5);
		for (int k = 0; k < 20; k++) {
			std::vector<Bytes> s = fr;
			if (k == 0)
				std::reverse(s.begin(), s.end());
			else
				std::shuffle(s.begin(), s.end(), rng);
			Out o = run(s);
			ASSERT_EQ(o.packets.size(), 1u);
			EXPECT_EQ(o.packets[0], ref.packets[0]) << "order " << k << (v6 ? " v6" : " v4");
			EXPECT_EQ(o.st.reassembled, 1u);
			EXPECT_EQ(o.st.frag_mem, 0u) << "nothing held after";
			expect_accounted(o.st);
		}
	}
}

TEST(GroFrag, DuplicateDroppedAloneOverlapDropsTheDatagram)
{
	std::vector<Bytes> fr = fragments(5000, 1480);
	// an exact duplicate: the datagram still completes
	std::vector<Bytes> dup = fr;
	dup.insert(dup.begin() + 1, fr[0]);
	Out o = run(dup);
	EXPECT_EQ(o.st.frag_drop[size_t(GroFragDrop::dup)], 1u);
	EXPECT_EQ(o.st.reassembled, 1u);
	// a fragment overlapping another (offset moved by 8 bytes)
	Bytes ov = fr[1];
	FrameView v;
	parse_frame(ov.data(), ov.size(), 0, v);
	put16(ov, v.l3 + 6, static_cast<uint16_t>((be16(ov.data() + v.l3 + 6) & 0xe000) | ((v.frag_off + 8) / 8)));
	fix_csums(ov);
	std::vector<Bytes> s = {fr[0], fr[1], ov};
	s.insert(s.end(), fr.begin() + 2, fr.end());
	Out o2 = run(s);
	EXPECT_EQ(o2.verdicts[2], GroVerdict::frag_dropped);
	EXPECT_EQ(o2.st.frag_drop[size_t(GroFragDrop::overlap)], 3u) << "the overlapping one and the two held";
	EXPECT_EQ(o2.st.reassembled, 0u) << "the rest of the datagram is held, never completed";
	expect_accounted(o2.st);
}


// inet_frag_queue_insert(): fragments that came in order form one run, and a
// fragment inside a run is a duplicate even when no fragment had its range;
// the same fragment against two runs (the fragments came in reverse, each
// its own run) crosses an edge: an overlap.
TEST(GroFrag, InsideARunIsADuplicateAcrossRunsAnOverlap)
{
	for (bool v6 : {false, true}) {
		std::vector<Bytes> fr = fragments(5000, 1448, v6);
		ASSERT_GE(fr.size(), 4u);
		Out ref = run(fr);
		ASSERT_EQ(ref.packets.size(), 1u);
		// fr[1] moved 8 bytes back: inside the run fr[0]..fr[1], across fr[0] | fr[1] as two runs
		Bytes back = fr[1];
		FrameView v;
		ASSERT_EQ(parse_frame(back.data(), back.size(), 0, v), "");
		const size_t at = v6 ? v.l3 + 40 + 2 : v.l3 + 6;
		const uint16_t w = be16(back.data() + at);
		put16(back, at, static_cast<uint16_t>(w - (v6 ? 8 : 1)));
		fix_csums(back);

		std::vector<Bytes> in_run = {fr[0], fr[1], back};
		in_run.insert(in_run.end(), fr.begin() + 2, fr.end());
		Out o = run(in_run);
		EXPECT_EQ(o.verdicts[2], GroVerdict::frag_dropped) << v6;
		EXPECT_EQ(o.st.frag_drop[size_t(GroFragDrop::dup)], 1u) << v6;
		EXPECT_EQ(o.st.frag_drop_total(), 1u) << v6;
		ASSERT_EQ(o.packets.size(), 1u) << "the datagram kept " << v6;
		EXPECT_EQ(o.packets[0], ref.packets[0]) << "the duplicate's bytes written nowhere " << v6;
		expect_accounted(o.st);

		std::vector<Bytes> two_runs = {fr[1], fr[0], back};
		two_runs.insert(two_runs.end(), fr.begin() + 2, fr.end());
		Out o2 = run(two_runs);
		EXPECT_EQ(o2.verdicts[2], GroVerdict::frag_dropped) << v6;
		EXPECT_EQ(o2.st.frag_drop[size_t(GroFragDrop::overlap)], 3u) << "it and the two held " << v6;
		EXPECT_EQ(o2.st.reassembled, 0u) << v6;
		expect_accounted(o2.st);
	}
}
TEST(GroFrag, TimeoutsQueuesAndMemoryBound)
{
	std::vector<Bytes> fr = fragments(5000, 1480);
	GroConfig c = config();
	c.frag_timeout_ns = 1000;
	std::unique_ptr<GroEngine> e;
	ASSERT_EQ(GroEngine::create(c, &e), 0);
	int out = 0;
	auto sink = [&out](const GroPacket &) { out++; };
	GroFrame f0{bytes_of(fr[0]), {}};
	EXPECT_EQ(e->receive_one(f0, 10, gro_sink(sink)), GroVerdict::frag_held);
	EXPECT_EQ(e->frag_queues(), 1u);
	e->flush_expired(500, gro_sink(sink));
	EXPECT_EQ(e->frag_queues(), 1u) << "not yet";
	e->flush_expired(1010, gro_sink(sink));
	EXPECT_EQ(e->frag_queues(), 0u);
	EXPECT_EQ(e->stats().frag_drop[size_t(GroFragDrop::timeout)], 1u);
	EXPECT_EQ(e->stats().frag_mem, 0u);

	// many datagrams' first fragments: the queue bound, then memory
	GroConfig q = config();
	q.frag_queues = 4;
	std::vector<Bytes> firsts;
	for (uint16_t id = 1; id <= 10; id++)
		firsts.push_back(fragments(3000, 1480, false, id)[0]);
	Out o = run(firsts, q);
	EXPECT_EQ(o.st.frag_drop[size_t(GroFragDrop::queues)], 6u);
	GroConfig m = config();
	m.frag_mem = 3 * (1480 + kGroFragOverhead);
	Out o2 = run(firsts, m);
	EXPECT_EQ(o2.st.frag_drop[size_t(GroFragDrop::mem)], 7u);
	EXPECT_LE(o2.st.frag_mem_peak, m.frag_mem);
}

TEST(GroFrag, BadAndTooBigFragments)
{
	std::vector<Bytes> fr = fragments(5000, 1480);
	FrameView v;
	parse_frame(fr[1].data(), fr[1].size(), 0, v);
	// a middle fragment whose length is not a multiple of 8
	Bytes odd = fr[1];
	odd.pop_back();
	put16(odd, v.l3 + 2, static_cast<uint16_t>(odd.size() - v.l3));
	fix_csums(odd);
	Out o = run({fr[0], odd});
	EXPECT_EQ(o.verdicts[1], GroVerdict::frag_dropped);
	EXPECT_EQ(o.st.frag_drop[size_t(GroFragDrop::bad)], 2u);
	// an offset that ends past 65535
	Bytes big = fr[1];
	put16(big, v.l3 + 6, static_cast<uint16_t>(0x2000 | (65000 / 8)));
	fix_csums(big);
	Out o2 = run({big});
	EXPECT_EQ(o2.st.frag_drop[size_t(GroFragDrop::too_big)], 1u);
	// two last fragments with different ends
	Bytes last = fr.back();
	FrameView lv;
	parse_frame(last.data(), last.size(), 0, lv);
	Bytes last2 = last;
	last2.resize(last2.size() - 8);
	put16(last2, lv.l3 + 2, static_cast<uint16_t>(last2.size() - lv.l3));
	fix_csums(last2);
	Out o3 = run({last, last2});
	EXPECT_EQ(o3.st.frag_drop[size_t(GroFragDrop::bad)], 2u);
	expect_accounted(o3.st);
}

TEST(GroFrag, TinyFragmentFloodStaysBounded)
{
	// 8-byte fragments of one datagram: past kGroMaxFrags the datagram goes
	Bytes base = fragments(3000, 1480)[1];
	FrameView v;
	parse_frame(base.data(), base.size(), 0, v);
	std::vector<Bytes> flood;
	for (uint32_t k = 1; k < 400; k++) {
		Bytes f(base.begin(), base.begin() + static_cast<long>(v.l4) + 8);
		put16(f, v.l3 + 2, static_cast<uint16_t>(f.size() - v.l3));
		put16(f, v.l3 + 6, static_cast<uint16_t>(0x2000 | (k * 2)));	// every other 8 bytes: all holes
		fix_csums(f);
		flood.push_back(f);
	}
	GroConfig c = config();
	c.frag_mem = 64 * 1024;
	Out o = run(flood, c);
	EXPECT_GT(o.st.frag_drop[size_t(GroFragDrop::too_many)] + o.st.frag_drop[size_t(GroFragDrop::mem)], 0u);
	EXPECT_LE(o.st.frag_mem_peak, c.frag_mem);
	expect_accounted(o.st);
}

// ---- hostile input ----

// Every prefix, and every byte flipped, of frames of each kind: no crash (the
// sanitizers of gro_fuzz watch the same code), every frame accounted.
TEST(GroHostile, TruncatedAndCorruptedFramesAreCounted)
{
	std::vector<Bytes> kinds = {make(Seg{}), make([] {
					    Seg s;
					    s.udp = true;
					    return s;
				    }()),
				    make([] {
					    Seg s;
					    s.v6 = true;
					    s.vids = {5, 6};
					    return s;
				    }()),
				    geneve_frame(Seg{})};
	for (const Bytes &f : fragments(3000, 1480))
		kinds.push_back(f);
	for (const Bytes &f : fragments(3000, 1480, true))
		kinds.push_back(f);
	std::mt19937 rng(9);
	GroConfig c = config();
	c.frag_mem = 256 * 1024;
	std::unique_ptr<GroEngine> e;
	ASSERT_EQ(GroEngine::create(c, &e), 0);
	uint64_t out_bytes = 0;
	auto sink = [&out_bytes](const GroPacket &p) { out_bytes += p.data.size(); };
	uint64_t n = 0;
	for (const Bytes &f : kinds) {
		for (size_t len = 0; len <= std::min<size_t>(f.size(), 200); len++) {
			Bytes t(f.begin(), f.begin() + static_cast<long>(len));
			e->receive_one(GroFrame{bytes_of(t), {}}, n, gro_sink(sink));
			n++;
		}
		for (size_t at = 0; at < std::min<size_t>(f.size(), 150); at++) {
			Bytes t = f;
			t[at] ^= static_cast<uint8_t>(1 + rng() % 255);
			e->receive_one(GroFrame{bytes_of(t), {}}, n, gro_sink(sink));
			n++;
		}
	}
	e->flush(gro_sink(sink));
	const GroStats &st = e->stats();
	EXPECT_EQ(st.frames_in, n);
	expect_accounted(st);
	EXPECT_GT(st.malformed, 0u);
	EXPECT_GT(st.bad_csum_total(), 0u);
	EXPECT_LE(st.frag_mem_peak, c.frag_mem);
	e->drop_fragments();
	EXPECT_EQ(e->stats().frag_mem, 0u);
	EXPECT_EQ(e->frag_queues(), 0u);
}

// ---- zero-copy (every test above runs its frames through both modes: run()) ----

// Whether a span lies inside a buffer.
bool inside(std::span<const std::byte> s, const Bytes &b)
{
	auto *lo = reinterpret_cast<const std::byte *>(b.data());
	return s.data() >= lo && s.data() + s.size() <= lo + b.size();
}

// A zero-copy engine over frames the test owns: what it emits, with where
// each frag points.
struct ZcOut {
	std::vector<Bytes> packets;		// gathered
	std::vector<size_t> hdr;		// data's length
	std::vector<std::vector<std::span<const std::byte>>> frags;
	std::vector<GroVerdict> verdicts;
};

ZcOut run_zc(const std::vector<Bytes> &frames, GroConfig c)
{
	c.zero_copy = true;
	ZcOut o;
	std::unique_ptr<GroEngine> e;
	EXPECT_EQ(GroEngine::create(c, &e), 0);
	std::vector<GroFrame> in;
	for (const Bytes &f : frames)
		in.push_back(GroFrame{bytes_of(f), {}});
	auto sink = [&o](const GroPacket &p) {
		Bytes b(p.size());
		EXPECT_EQ(p.gather(std::as_writable_bytes(std::span<uint8_t>(b))), b.size());
		o.packets.push_back(std::move(b));
		o.hdr.push_back(p.data.size());
		o.frags.emplace_back(p.frags.begin(), p.frags.end());
	};
	o.verdicts.resize(frames.size());
	EXPECT_GE(e->receive(in, 1, o.verdicts, gro_sink(sink)), 0);
	e->flush(gro_sink(sink));
	EXPECT_EQ(e->held_flows(), 0u);
	return o;
}

// A merged packet is its headers in the engine and every segment's payload
// where it lies, in order: nothing copied.
TEST(GroZeroCopy, PayloadsAreReferencedWhereTheyLie)
{
	std::vector<Bytes> f = build(stream(4));
	ZcOut o = run_zc(f, config());
	ASSERT_EQ(o.packets.size(), 1u);
	EXPECT_EQ(o.hdr[0], 54u) << "data: the headers only";
	ASSERT_EQ(o.frags[0].size(), 4u);
	for (size_t k = 0; k < 4; k++) {
		EXPECT_EQ(o.frags[0][k].data(), reinterpret_cast<const std::byte *>(f[k].data()) + 54) << "frame " << k;
		EXPECT_EQ(o.frags[0][k].size(), 1000u);
	}
	EXPECT_EQ(o.packets, run(f).packets);
	// a frame alone: its headers and its payload, unchanged
	const std::vector<Bytes> single = {f[0]};
	ZcOut one = run_zc(single, config());
	ASSERT_EQ(one.packets.size(), 1u);
	EXPECT_EQ(one.packets[0], f[0]);
	ASSERT_EQ(one.frags[0].size(), 1u);
	EXPECT_TRUE(inside(one.frags[0][0], single[0]));
}

// Pieces shorter than zc_min_span are copied behind the headers: a stream of
// short segments comes out as one buffer, as in copy mode.
TEST(GroZeroCopy, ShortPiecesAreCopied)
{
	Seg s;
	s.len = 100;
	std::vector<Bytes> f = build(stream(5, s));
	ZcOut o = run_zc(f, config());
	ASSERT_EQ(o.packets.size(), 1u);
	EXPECT_TRUE(o.frags[0].empty());
	EXPECT_EQ(o.hdr[0], 54u + 500u);
	GroConfig c = config();
	c.zc_min_span = 100;
	ZcOut r = run_zc(f, c);
	ASSERT_EQ(r.packets.size(), 1u);
	EXPECT_EQ(r.frags[0].size(), 5u) << "at zc_min_span 100, referenced";
	EXPECT_EQ(r.packets, o.packets);
}

// However many segments, at most kGroMaxSpans frags: the frames past the
// last but one are copied into the last.
TEST(GroZeroCopy, FragsAreBounded)
{
	Seg s;
	s.len = 40;
	const size_t n = kGroMaxSpans + 60;
	std::vector<Bytes> f = build(stream(n, s));
	GroConfig c = config();
	c.zc_min_span = 1;
	ZcOut o = run_zc(f, c);
	ASSERT_EQ(o.packets.size(), 1u);
	ASSERT_EQ(o.frags[0].size(), size_t{kGroMaxSpans});
	for (size_t k = 0; k + 1 < kGroMaxSpans; k++)
		EXPECT_TRUE(inside(o.frags[0][k], f[k])) << "frag " << k;
	EXPECT_EQ(o.frags[0].back().size(), (n - kGroMaxSpans + 1) * 40) << "the rest, copied into one";
	Out cp = run(f, c);
	ASSERT_EQ(cp.packets.size(), 1u);
	EXPECT_EQ(o.packets[0], cp.packets[0]);
	EXPECT_EQ(cp.meta[0].segs, n);
}

// A frame with a bad checksum is never merged, so never referenced: no frag
// points into it, and the packet it would have joined is copy mode's.
TEST(GroZeroCopy, BadChecksumsAreNeverReferenced)
{
	std::vector<Seg> segs = stream(4);
	std::vector<Bytes> f = build(segs);
	Bytes bad = f[1];
	bad[60] ^= 0x40;
	std::vector<Bytes> in = {f[0], bad, f[1], f[2], f[3]};
	for (uint32_t min_span : {1u, 256u, 2000u}) {
		GroConfig c = config();
		c.zc_min_span = min_span;
		ZcOut o = run_zc(in, c);
		EXPECT_EQ(o.verdicts[1], GroVerdict::bad_l4_csum);
		ASSERT_EQ(o.packets.size(), 2u);
		EXPECT_EQ(o.packets[0], bad);
		EXPECT_EQ(o.frags[1].size(), min_span > 1000 ? 0u : 4u);
		for (auto sp : o.frags[1])
			EXPECT_FALSE(inside(sp, in[1])) << "min_span " << min_span;
		EXPECT_EQ(o.packets, run(in, c).packets) << "min_span " << min_span;
	}
}

// The contract's lifetimes, with a check that the spoiling can see a
// reference kept: frames spoilt while still held change what comes out.
TEST(GroZeroCopy, FramesAreNotReadOnceReleased)
{
	std::vector<Bytes> f = build(stream(6));
	GroConfig c = config();
	c.zero_copy = true;
	std::unique_ptr<GroEngine> e;
	ASSERT_EQ(GroEngine::create(c, &e), 0);
	std::vector<Bytes> got;
	auto sink = [&got](const GroPacket &p) {
		Bytes b(p.size());
		p.gather(std::as_writable_bytes(std::span<uint8_t>(b)));
		got.push_back(std::move(b));
	};
	// first: spoiling a held frame before the flush must show
	{
		std::vector<Bytes> mine = {f[0], f[1]};
		std::vector<GroFrame> in = {GroFrame{bytes_of(mine[0]), {}}, GroFrame{bytes_of(mine[1]), {}}};
		e->receive(in, 1, {}, gro_sink(sink));
		std::fill(mine[1].begin(), mine[1].end(), 0xa5);
		e->flush(gro_sink(sink));
		ASSERT_EQ(got.size(), 1u);
		EXPECT_NE(got[0], run({f[0], f[1]}).packets.at(0)) << "a held frame spoilt: the output must show it";
		got.clear();
	}
	// then: batches of the same flow, each batch's frames spoilt and freed
	// after its flush; every packet must be copy mode's
	std::vector<Bytes> copy_out;
	std::unique_ptr<GroEngine> ce;
	GroConfig cc = config();
	ASSERT_EQ(GroEngine::create(cc, &ce), 0);
	auto csink = [&copy_out](const GroPacket &p) {
		auto *b = reinterpret_cast<const uint8_t *>(p.data.data());
		copy_out.emplace_back(b, b + p.data.size());
	};
	for (size_t at = 0; at < f.size(); at += 2) {
		auto mine = std::make_unique<std::vector<Bytes>>(f.begin() + static_cast<long>(at),
								 f.begin() + static_cast<long>(at + 2));
		std::vector<GroFrame> in = {GroFrame{bytes_of((*mine)[0]), {}}, GroFrame{bytes_of((*mine)[1]), {}}};
		e->receive(in, 1, {}, gro_sink(sink));
		ce->receive(in, 1, {}, gro_sink(csink));
		e->flush(gro_sink(sink));
		ce->flush(gro_sink(csink));
		EXPECT_EQ(e->held_flows(), 0u);
		for (Bytes &b : *mine)
			std::fill(b.begin(), b.end(), 0xa5);
		mine.reset();
	}
	EXPECT_EQ(got, copy_out);
	EXPECT_EQ(got.size(), 3u);
}

// A multi-buffer frame passed comes out as its buffers, untouched.
TEST(GroZeroCopy, PassedMultiBufferFrameIsItsBuffers)
{
	Seg s;
	s.flags = 0x02;	// SYN: passed
	Bytes f = make(s);
	std::span<const std::byte> all = bytes_of(f);
	std::array<std::span<const std::byte>, 2> more = {all.subspan(30, 40), all.subspan(70)};
	GroConfig c = config();
	c.zero_copy = true;
	std::unique_ptr<GroEngine> e;
	ASSERT_EQ(GroEngine::create(c, &e), 0);
	std::vector<GroPacket> got;
	auto sink = [&got](const GroPacket &p) { got.push_back(p); };
	EXPECT_EQ(e->receive_one(GroFrame{all.first(30), more}, 1, gro_sink(sink)), GroVerdict::passed);
	ASSERT_EQ(got.size(), 1u);
	EXPECT_EQ(got[0].data.data(), all.data());
	ASSERT_EQ(got[0].frags.size(), 2u);
	EXPECT_EQ(got[0].frags[1].data(), more[1].data());
	EXPECT_EQ(got[0].size(), f.size());
	EXPECT_EQ(got[0].csum, GroCsum::unnecessary);
}

// ---- the API ----

TEST(GroApi, ConfigBoundsAndArguments)
{
	std::unique_ptr<GroEngine> e;
	GroConfig c;
	c.max_flows = 0;
	EXPECT_EQ(GroEngine::create(c, &e), -EINVAL);
	c = {};
	c.max_size = 65536;
	EXPECT_EQ(GroEngine::create(c, &e), -EINVAL);
	c = {};
	c.frag_queues = 5000;
	EXPECT_EQ(GroEngine::create(c, &e), -EINVAL);
	c = {};
	ASSERT_EQ(GroEngine::create(c, &e), 0);
	Bytes f = make(Seg{});
	GroFrame fr{bytes_of(f), {}};
	std::vector<GroVerdict> two(2);
	auto sink = [](const GroPacket &) {};
	EXPECT_EQ(e->receive(std::span<const GroFrame>(&fr, 1), 0, two, gro_sink(sink)), -EINVAL);
	EXPECT_EQ(e->stats().frames_in, 0u) << "nothing done";
	EXPECT_EQ(e->receive(std::span<const GroFrame>(&fr, 1), 0, {}, gro_sink(sink)), 1) << "no kind on: passed";

	GroKinds k;
	EXPECT_EQ(gro_kinds_parse("tcp,frag", &k), 0);
	EXPECT_TRUE(k.tcp && k.frag && !k.udp && !k.geneve);
	EXPECT_EQ(gro_kinds_parse("all", &k), 0);
	EXPECT_TRUE(k.tcp && k.udp && k.frag && k.geneve);
	EXPECT_EQ(gro_kinds_parse("tcp,", &k), -EINVAL);
	EXPECT_EQ(gro_kinds_parse("tcp,sctp", &k), -EINVAL);
	EXPECT_EQ(gro_kinds_parse("", &k), 0);
	EXPECT_FALSE(k.any());
}

TEST(GroApi, FlushExpiredEmitsOnlyOldFlows)
{
	GroConfig c = config();
	c.flush_timeout_ns = 100;
	std::unique_ptr<GroEngine> e;
	ASSERT_EQ(GroEngine::create(c, &e), 0);
	std::vector<GroPacket> got;
	auto sink = [&got](const GroPacket &p) { got.push_back(p); };
	Seg a, b;
	b.sport = kPortC;
	Bytes fa = make(a), fb = make(b);
	e->receive_one(GroFrame{bytes_of(fa), {}}, 1000, gro_sink(sink));
	e->receive_one(GroFrame{bytes_of(fb), {}}, 1050, gro_sink(sink));
	EXPECT_EQ(e->held_flows(), 2u);
	EXPECT_EQ(e->flush_expired(1099, gro_sink(sink)), 0);
	EXPECT_EQ(e->flush_expired(1100, gro_sink(sink)), 1);
	ASSERT_EQ(got.size(), 1u);
	EXPECT_EQ(got[0].flush, GroFlush::timeout);
	EXPECT_EQ(e->held_flows(), 1u);
	EXPECT_EQ(e->flush(gro_sink(sink)), 1);
	EXPECT_EQ(e->held_flows(), 0u);
}

} // namespace
