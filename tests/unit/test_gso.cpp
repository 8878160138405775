// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The segmentation engine, table-driven: every row builds a super-packet with
// the shared PacketBuilder, segments it, and checks every frame with the
// independent checker (tests/common/gso_check.hpp): checksums, lengths,
// sequence numbers, flags, IDs, fragment offsets, tags, Geneve headers, and
// that the payload (or the reassembled datagram) equals the input's.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "csum_impls.hpp"
#include "gso_check.hpp"
#include "gso_rows.hpp"
#include "packet_builder.hpp"
// the engine's internals (copy_hdr), as tests/fuzz/frame_fuzz.cpp reads them
#include "../../user/src/gso/gso_internal.hpp"

using namespace xoffload;
using namespace xo_test;
using namespace xoffload::test;

namespace {

using xo_test::Bytes;

// Output buffers: n frames of cap bytes each, with a guard pattern after.
struct Slots {
	std::vector<std::vector<std::byte>> mem;
	std::vector<GsoFrame> frames;
	static constexpr size_t kGuard = 64;
	Slots(size_t n, uint32_t cap)
	{
		mem.resize(n);
		for (auto &m : mem) {
			m.assign(cap + kGuard, std::byte{0x5a});
			frames.push_back(GsoFrame{m.data(), cap});
		}
	}
	bool guards_intact() const
	{
		for (size_t i = 0; i < mem.size(); i++)
			for (size_t k = frames[i].cap; k < mem[i].size(); k++)
				if (mem[i][k] != std::byte{0x5a})
					return false;
		return true;
	}
	Bytes frame(size_t i) const
	{
		auto *p = reinterpret_cast<const uint8_t *>(mem[i].data());
		return Bytes(p, p + frames[i].len);
	}
};

std::span<const std::byte> as_bytes(const Bytes &b)
{
	return {reinterpret_cast<const std::byte *>(b.data()), b.size()};
}

class GsoTable : public ::testing::TestWithParam<Row> {};

TEST_P(GsoTable, FramesVerify)
{
	Row r = GetParam();
	if (std::string(r.name) == "three_tags")
		r.input = PB().eth(kMacB, kMacA).vlan(0x8100, 5).ipv4(kIpA, kIpB).tcp(kPortA, kPortB).payload(3000).build();
	Slots s(r.nbufs, r.cap);
	GsoError why = GsoError::ok;
	int n = gso_segment(as_bytes(r.input), r.req, s.frames, &why);
	ASSERT_EQ(n, r.want) << r.name << ": " << to_string(why);
	EXPECT_EQ(why, r.why) << to_string(why);
	EXPECT_TRUE(s.guards_intact()) << "wrote past a buffer";
	// gso_count checks everything but the buffers
	const std::span<const std::byte> one[1] = {as_bytes(r.input)};
	if (r.want > 0 || (r.why != GsoError::mss_too_large && r.why != GsoError::buffer_too_small &&
			   r.why != GsoError::too_many_segments)) {
		EXPECT_EQ(gso_count(one, r.req), r.want) << "gso_count disagrees";
	}
	if (n <= 0)
		return;
	EXPECT_EQ(check(r.input, r.req, s.frames, n), "");
}

INSTANTIATE_TEST_SUITE_P(Rows, GsoTable, ::testing::ValuesIn(rows()),
			 [](const auto &info) { return std::string(info.param.name); });

// Where AVX2 is the checksum implementation and the input is one span, the
// engine runs versions compiled for AVX2 that call its kernel directly
// (inline on the common path); otherwise it calls what csum_copy_fn() names.
// Every row, and odd segment lengths, give the same frames byte for byte
// under every implementation this CPU has (the scalar one always), whole
// (the AVX2 versions) and with the headers split (the others).
TEST(Gso, EveryChecksumImplementationWritesTheSameFrames)
{
	std::vector<Row> all = rows();
	all.push_back({"tso4_odd_mss", tcp4(4345), rq(GsoType::tso4, 1447), 4});
	all.push_back({"uso6_odd_mss", udp6(4001), rq(GsoType::uso6, 999), 5});
	all.push_back({"tso6_odd_mss_tags", tcp6(3001), rq(GsoType::tso6, 1001, 2), 3});
	int compared = 0;
	for (const Row &r : all) {
		if (r.want <= 0)
			continue;
		for (size_t split : {size_t{0}, size_t{20}}) {
			std::vector<std::span<const std::byte>> spans;
			const std::span<const std::byte> whole = as_bytes(r.input);
			if (split)
				spans = {whole.first(split), whole.subspan(split)};
			else
				spans = {whole};
			std::vector<Bytes> ref;
			const int ran = for_each_impl([&](CsumImpl impl) {
				Slots s(r.nbufs, r.cap);
				const int n = gso_segment(spans, r.req, s.frames);
				ASSERT_EQ(n, r.want) << r.name << " " << to_string(impl) << " split " << split;
				std::vector<Bytes> got;
				for (int k = 0; k < n; k++) {
					const GsoFrame &f = s.frames[k];
					Bytes b = s.frame(k);
					// the offload metadata is output too
					b.push_back(f.csum_partial);
					if (f.csum_partial) {
						b.push_back(static_cast<uint8_t>(f.csum_start));
						b.push_back(static_cast<uint8_t>(f.csum_offset));
					}
					got.push_back(std::move(b));
				}
				if (impl == CsumImpl::scalar) {
					ASSERT_EQ(check(r.input, r.req, s.frames, n), "") << r.name;
					ref = std::move(got);
					return;
				}
				for (int k = 0; k < n; k++)
					ASSERT_EQ(got[k], ref[k]) << r.name << " frame " << k << ": " << to_string(impl)
								  << " differs from scalar, split " << split;
			});
			if (HasFatalFailure())
				return;
			compared += ran - 1;
		}
	}
	if (!compared)
		GTEST_SKIP() << "this CPU has only the scalar checksum";
}

// Header fields the checker cannot judge by reassembly alone.
TEST(Gso, Ufo4FragmentFieldsAndOptions)
{
	Bytes in = udp4(5000, true);
	Slots s(8, 2048);
	int n = gso_segment(as_bytes(in), rq(GsoType::ufo4, 1472), s.frames);
	ASSERT_EQ(n, 4);
	for (int k = 0; k < n; k++) {
		Bytes f = s.frame(k);
		FrameView v;
		ASSERT_EQ(parse_frame(f.data(), f.size(), 0, v), "");
		EXPECT_EQ(be16(f.data() + v.l3 + 4), 0x4321) << "one IP ID for every fragment";
		EXPECT_EQ(v.frag_off, size_t(k) * 1472);
		EXPECT_EQ(v.more, k + 1 < n);
		// only the copied option (router alert) travels beyond the first fragment
		EXPECT_EQ(f[v.l3] & 15, k == 0 ? 7 : 6) << k;
		if (k > 0) {
			EXPECT_EQ(f[v.l3 + 20], 0x94);
		}
	}
}

TEST(Gso, Ufo6FragmentHeader)
{
	Bytes in = udp6(4000, true);
	GsoRequest r = rq(GsoType::ufo6, 1432);
	r.ipv6_frag_id = 0xdeadbeef;
	Slots s(8, 2048);
	int n = gso_segment(as_bytes(in), r, s.frames);
	ASSERT_EQ(n, 3);
	for (int k = 0; k < n; k++) {
		Bytes f = s.frame(k);
		FrameView v;
		ASSERT_EQ(parse_frame(f.data(), f.size(), 0, v), "");
		EXPECT_TRUE(v.is_frag);
		EXPECT_EQ(v.frag_id, 0xdeadbeefu);
		// hop-by-hop stays in front of the fragment header
		EXPECT_EQ(f[v.l3 + 6], 0) << "next header of IPv6 is hop-by-hop";
		EXPECT_EQ(f[v.l3 + 40], 44) << "hop-by-hop now names the fragment header";
	}
}

TEST(Gso, TxMetadataLeavesPseudoHeaderSum)
{
	Bytes in = tcp4(3000);
	Slots s(4, 2048);
	int n = gso_segment(as_bytes(in), partial(rq(GsoType::tso4, 1448)), s.frames);
	ASSERT_EQ(n, 3);
	for (int k = 0; k < n; k++) {
		const GsoFrame &g = s.frames[k];
		EXPECT_TRUE(g.csum_partial);
		EXPECT_EQ(g.csum_start, 34);
		EXPECT_EQ(g.csum_offset, 16);
		Bytes f = s.frame(k);
		FrameView v;
		ASSERT_EQ(parse_frame(f.data(), f.size(), 0, v), "");
		uint16_t want = fold(pseudo(f.data(), v, 6, f.size() - v.l4));
		EXPECT_EQ(be16(f.data() + v.l4 + 16), want);
	}
}

TEST(Gso, GeneveCriticalBitAndEntropyPort)
{
	Bytes a = tcp4(3000), b = PB().eth(kMacB, kMacA).ipv4(kIpA, kIpB).tcp(kPortC, kPortB).payload(3000).build();
	Slots sa(4, 2048), sb(4, 2048);
	ASSERT_EQ(gso_segment(as_bytes(a), with_geneve(rq(GsoType::tso4, 1400), &kGen4), sa.frames), 3);
	ASSERT_EQ(gso_segment(as_bytes(b), with_geneve(rq(GsoType::tso4, 1400), &kGen4), sb.frames), 3);
	Bytes fa = sa.frame(0), fb = sb.frame(0), fa2 = sa.frame(2);
	size_t udp = 14 + 20;
	EXPECT_EQ(fa[udp + 8 + 1] & 0x40, 0x40) << "C bit: an option has the critical type bit";
	EXPECT_EQ(be16(fa.data() + udp), be16(fa2.data() + udp)) << "one flow, one source port";
	EXPECT_NE(be16(fa.data() + udp), be16(fb.data() + udp)) << "another flow, another port";
}

TEST(Gso, InputAsSpansWithHeadersSplit)
{
	Bytes in = tcp6(7000, true);
	for (size_t cut : {1, 13, 14, 40, 60, 75, 90, 100, 3000}) {
		std::span<const std::byte> all = as_bytes(in);
		std::vector<std::span<const std::byte>> parts = {all.subspan(0, cut), all.subspan(cut, 7),
								 all.subspan(cut + 7)};
		Slots s(8, 2048);
		GsoRequest r = rq(GsoType::tso6, 1400, 1);
		int n = gso_segment(parts, r, s.frames);
		ASSERT_EQ(n, 5) << cut;
		EXPECT_EQ(check(in, r, s.frames, n), "") << cut;
	}
}

TEST(Gso, HeadersThatLieAreRefused)
{
	Bytes in = tcp4(3000);
	Bytes bad_len = in;
	bad_len[14 + 3] ^= 1; // IPv4 total length
	Bytes bad_ihl = in;
	bad_ihl[14] = 0x44; // ihl 4
	Bytes bad_doff = in;
	bad_doff[14 + 20 + 12] = 0x40; // doff 4
	Bytes frag = in;
	frag[14 + 6] |= 0x20; // MF
	Bytes u = udp4(3000);
	Bytes bad_udp = u;
	bad_udp[14 + 20 + 5] ^= 2; // UDP length
	Bytes v6 = tcp6(3000);
	Bytes bad_v6 = v6;
	bad_v6[14 + 5] ^= 4; // payload length
	struct {
		const char *what;
		Bytes b;
		GsoType t;
		GsoError e;
	} cases[] = {
		{"IPv4 total length", bad_len, GsoType::tso4, GsoError::bad_ipv4},
		{"IPv4 ihl < 5", bad_ihl, GsoType::tso4, GsoError::bad_ipv4},
		{"TCP doff < 5", bad_doff, GsoType::tso4, GsoError::bad_l4},
		{"already a fragment", frag, GsoType::tso4, GsoError::bad_ipv4},
		{"UDP length", bad_udp, GsoType::uso4, GsoError::bad_l4},
		{"IPv6 payload length", bad_v6, GsoType::tso6, GsoError::bad_ipv6},
	};
	for (auto &c : cases) {
		Slots s(64, 2048);
		GsoError why{};
		EXPECT_EQ(gso_segment(as_bytes(c.b), rq(c.t, 1000), s.frames, &why), -EINVAL) << c.what;
		EXPECT_EQ(why, c.e) << c.what;
	}
	for (size_t len = 0; len < 60; len++) {
		Slots s(64, 2048);
		Bytes t(in.begin(), in.begin() + len);
		EXPECT_LT(gso_segment(as_bytes(t), rq(GsoType::tso4, 1000), s.frames), 0) << len;
	}
}

} // namespace

// The engine's inline header copy: every length a header can have, and not
// one byte written outside [d, d + n).
TEST(Gso, HeaderCopyWritesExactlyItsBytes)
{
	std::vector<std::byte> src(600), dst(600 + 64);
	for (size_t i = 0; i < src.size(); i++)
		src[i] = std::byte(static_cast<uint8_t>(i * 7 + 1));
	for (size_t n = 0; n <= xoffload::gso_detail::kMaxHdr; n++) {
		std::fill(dst.begin(), dst.end(), std::byte{0xee});
		xoffload::gso_detail::copy_hdr(dst.data() + 32, src.data(), n);
		ASSERT_TRUE(std::equal(src.begin(), src.begin() + static_cast<long>(n), dst.begin() + 32)) << n;
		ASSERT_TRUE(std::all_of(dst.begin(), dst.begin() + 32, [](std::byte b) { return b == std::byte{0xee}; }))
			<< n;
		ASSERT_TRUE(std::all_of(dst.begin() + 32 + static_cast<long>(n), dst.end(),
					[](std::byte b) { return b == std::byte{0xee}; }))
			<< n;
	}
}

// The one-pass plan of the common shape (untagged IPv4 without options or
// IPv6 without extension headers, TCP/UDP, TSO/USO without Geneve) must fill
// the plan exactly as the general parser and planner do, take the common
// inputs (else this checks nothing), and leave everything else, every
// corrupted header byte included, to the general code.
TEST(Gso, OnePassPlanAgreesWithTheGeneralOne)
{
	struct Input {
		Bytes b;
		GsoType type;
	};
	std::vector<Input> inputs;
	for (size_t payload : {1u, 1448u, 1449u, 4344u, 60000u}) {
		inputs.push_back({tcp4(payload), GsoType::tso4});
		inputs.push_back({tcp4(payload, 0x19, true), GsoType::tso4});
		inputs.push_back({tcp4(payload, 0x18, false, true), GsoType::tso4});
		inputs.push_back({tcp6(payload), GsoType::tso6});
		inputs.push_back({tcp6(payload, true), GsoType::tso6});
		inputs.push_back({udp4(payload), GsoType::uso4});
		inputs.push_back({udp4(payload, false, 1), GsoType::uso4});
		inputs.push_back({udp6(payload), GsoType::uso6});
		inputs.push_back({udp6(payload, true), GsoType::uso6});
	}
	std::mt19937 rng(21);
	size_t taken = 0, checked = 0;
	for (const Input &in : inputs) {
		for (int variant = 0; variant < 40; variant++) {
			Bytes b = in.b;
			// variant 0 as built; then one header byte changed at random
			if (variant)
				b[rng() % std::min<size_t>(b.size(), 80)] = static_cast<uint8_t>(rng());
			for (GsoType t : {in.type, GsoType::tso4, GsoType::uso6, GsoType::ufo4}) {
				for (uint16_t mss : {uint16_t{0}, uint16_t{536}, uint16_t{1448}}) {
					for (int ntags : {0, 2, 3}) {
						for (uint32_t cap : {2048u, 600u}) {
							Slots s(64, cap);
							const std::span<const std::byte> one[1] = {as_bytes(b)};
							auto d = gso_detail::plans_differ(one, rq(t, mss, ntags), s.frames);
							checked++;
							if (!d)
								continue;
							taken++;
							ASSERT_EQ(*d, "") << "input " << &in - inputs.data() << " variant " << variant
									  << " " << to_string(t) << " mss " << mss << " tags "
									  << ntags << " cap " << cap;
						}
					}
				}
			}
		}
	}
	// the untagged IPv4/IPv6 TCP/UDP inputs of more than one mss
	EXPECT_GT(taken, 400u) << "of " << checked;
}
