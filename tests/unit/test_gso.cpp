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

struct Row {
	const char *name;
	Bytes input;
	GsoRequest req;
	int want;		// frames, or a negative errno
	GsoError why = GsoError::ok;
	uint32_t cap = 2048;
	size_t nbufs = 64;
};

// A failing row names itself and what it asked for (gtest would print the
// struct's bytes, the Geneve pointer among them).
void PrintTo(const Row &r, std::ostream *os)
{
	*os << r.name << ": " << r.input.size() << " B, " << to_string(r.req.type) << " mss " << r.req.mss << ", "
	    << unsigned(r.req.ntags) << " tags" << (r.req.geneve ? ", geneve" : "")
	    << (r.req.csum == CsumMode::tx_metadata ? ", tx_metadata" : "") << (r.req.fixed_ipid ? ", fixed_id" : "")
	    << ", " << r.nbufs << " x " << r.cap << " B; want " << r.want << " (" << to_string(r.why) << ")";
}

using PB = PacketBuilder;

Bytes tcp4(size_t payload, uint8_t flags = 0x18, bool opts = false, bool ipopts = false)
{
	PB b;
	b.eth(kMacB, kMacA).ipv4(kIpA, kIpB, 64, 0x1234);
	if (ipopts)
		b.ip_options({0x94, 0x04, 0x00, 0x00, 0x01, 0x01, 0x07, 0x00}); // router alert (copied), NOP, EOL
	b.tcp(kPortA, kPortB, flags, 1000);
	if (opts)
		b.tcp_options({0x01, 0x01, 0x08, 0x0a, 0, 0, 0, 1, 0, 0, 0, 2}); // NOP NOP timestamp
	return b.payload(payload, 3).build();
}

Bytes tcp6(size_t payload, bool ext = false)
{
	PB b;
	b.eth(kMacB, kMacA).ipv6(kIp6A, kIp6B);
	if (ext)
		b.ipv6_ext(0, {1, 4, 0, 0, 0, 0}).ipv6_ext(60, {1, 4, 0, 0, 0, 0});
	return b.tcp(kPortA, kPortB, 0x19, 7).payload(payload, 9).build();
}

Bytes udp4(size_t payload, bool ipopts = false, int tags = 0)
{
	PB b;
	b.eth(kMacB, kMacA);
	if (tags)
		b.vlan(0x8100, 7);
	b.ipv4(kIpA, kIpB, 64, 0x4321);
	if (ipopts)
		b.ip_options({0x94, 0x04, 0x00, 0x00, 0x07, 0x07, 0x04, 0x00}); // RA (copied), record route (not copied)
	return b.udp(kPortA, kPortB).payload(payload, 1).build();
}

Bytes udp6(size_t payload, bool ext = false)
{
	PB b;
	b.eth(kMacB, kMacA).ipv6(kIp6A, kIp6B);
	if (ext)
		b.ipv6_ext(0, {1, 4, 0, 0, 0, 0}).ipv6_ext(60, {1, 4, 0, 0, 0, 0});
	return b.udp(kPortA, kPortB).payload(payload, 5).build();
}

GsoRequest rq(GsoType t, uint16_t mss, int ntags = 0)
{
	GsoRequest r;
	r.type = t;
	r.mss = mss;
	r.ntags = static_cast<uint8_t>(ntags);
	r.tags[0] = GsoVlanTag{0x88a8, 100, 3, true};
	r.tags[1] = GsoVlanTag{0x8100, 200, 5, false};
	return r;
}

const std::byte kOpts[] = {std::byte{0x01}, std::byte{0x02}, std::byte{0x80}, std::byte{0x01},	// class 0x0102, critical type
			  std::byte{0xaa}, std::byte{0xbb}, std::byte{0xcc}, std::byte{0xdd}};

GeneveEncap geneve(bool v6, bool csum)
{
	GeneveEncap g;
	g.dst_mac.b = {0x02, 0, 0, 0, 0, 0x0b};
	g.src_mac.b = {0x02, 0, 0, 0, 0, 0x0a};
	g.ipv6 = v6;
	if (v6) {
		std::copy(kIp6B.begin(), kIp6B.end(), g.src_ip.begin());
		std::copy(kIp6A.begin(), kIp6A.end(), g.dst_ip.begin());
	} else {
		std::copy(kIpB.begin(), kIpB.end(), g.src_ip.begin());
		std::copy(kIpA.begin(), kIpA.end(), g.dst_ip.begin());
	}
	g.vni = 0xabcdef;
	g.options = kOpts;
	g.udp_csum = csum;
	return g;
}

const GeneveEncap kGen4 = geneve(false, true), kGen4NoCsum = geneve(false, false), kGen6 = geneve(true, true);

GsoRequest with_geneve(GsoRequest r, const GeneveEncap *g)
{
	r.geneve = g;
	return r;
}
GsoRequest fixed_id(GsoRequest r)
{
	r.fixed_ipid = true;
	return r;
}
GsoRequest partial(GsoRequest r)
{
	r.csum = CsumMode::tx_metadata;
	return r;
}

std::vector<Row> rows()
{
	return {
		{"tso4_64k", tcp4(65000), rq(GsoType::tso4, 1448), 45},
		{"tso4_exact_multiple", tcp4(1448 * 4), rq(GsoType::tso4, 1448), 4},
		{"tso4_one_byte_last", tcp4(1448 * 3 + 1), rq(GsoType::tso4, 1448), 4},
		{"tso4_fits_in_one", tcp4(1000), rq(GsoType::tso4, 1448), 1},
		{"tso4_empty_payload", tcp4(0), rq(GsoType::tso4, 1448), 1},
		{"tso4_fin_cwr", tcp4(5000, 0x80 | 0x10 | 0x08 | 0x01), rq(GsoType::tso4, 1000), 5},
		{"tso4_tcp_options", tcp4(5000, 0x10, true), rq(GsoType::tso4, 1000), 5},
		{"tso4_ip_options", tcp4(5000, 0x18, false, true), rq(GsoType::tso4, 1000), 5},
		{"tso4_fixed_id", tcp4(5000), fixed_id(rq(GsoType::tso4, 1000)), 5},
		{"tso4_one_tag", tcp4(5000), rq(GsoType::tso4, 1448, 1), 4},
		{"tso4_two_tags", tcp4(5000), rq(GsoType::tso4, 1448, 2), 4},
		{"tso4_mss_1", tcp4(5), rq(GsoType::tso4, 1), 5},
		{"tso4_tx_metadata", tcp4(5000), partial(rq(GsoType::tso4, 1448, 2)), 4},
		{"tso6", tcp6(9000), rq(GsoType::tso6, 1440), 7},
		{"tso6_ext_headers", tcp6(9000, true), rq(GsoType::tso6, 1424, 2), 7},
		{"uso4", udp4(9000), rq(GsoType::uso4, 1472), 7},
		{"uso4_tagged_input", udp4(3000, false, 1), rq(GsoType::uso4, 1000, 1), 3},
		{"uso6", udp6(9000), rq(GsoType::uso6, 1452), 7},
		{"uso6_tx_metadata", udp6(4000), partial(rq(GsoType::uso6, 1452)), 3},
		{"ufo4_64000", udp4(64000), rq(GsoType::ufo4, 1480), 44},
		{"ufo4_odd", udp4(3001), rq(GsoType::ufo4, 1480), 3},
		{"ufo4_mss_not_multiple_of_8", udp4(3001), rq(GsoType::ufo4, 1483), 3},
		{"ufo4_fits", udp4(1000), rq(GsoType::ufo4, 1480), 1},
		{"ufo4_largest_datagram", udp4(65507), rq(GsoType::ufo4, 1480), 45},
		{"ufo4_ip_options", udp4(5000, true), rq(GsoType::ufo4, 1472, 2), 4},
		{"ufo6", udp6(9000), rq(GsoType::ufo6, 1448), 7},
		{"ufo6_ext_headers", udp6(9000, true), rq(GsoType::ufo6, 1432, 1), 7},
		{"geneve4_tso4", tcp4(9000), with_geneve(rq(GsoType::tso4, 1398, 1), &kGen4), 7, GsoError::ok, 2048},
		{"geneve4_nocsum_uso4", udp4(5000), with_geneve(rq(GsoType::uso4, 1400), &kGen4NoCsum), 4},
		{"geneve6_tso6", tcp6(9000), with_geneve(rq(GsoType::tso6, 1300, 2), &kGen6), 7},
		{"geneve6_ufo4", udp4(5000), with_geneve(rq(GsoType::ufo4, 1400), &kGen6), 4},
		{"geneve4_tx_metadata_lco", tcp4(5000), partial(with_geneve(rq(GsoType::tso4, 1400), &kGen4)), 4},
		{"none_checksums_only", tcp4(700), rq(GsoType::none, 0, 2), 1},
		// errors
		{"tso4_on_udp", udp4(3000), rq(GsoType::tso4, 1000), -ENOTSUP, GsoError::unsupported},
		{"tso6_on_ipv4", tcp4(3000), rq(GsoType::tso6, 1000), -ENOTSUP, GsoError::unsupported},
		{"mss_zero", tcp4(3000), rq(GsoType::tso4, 0), -EMSGSIZE, GsoError::mss_too_small},
		{"ufo_mss_7", udp4(3000), rq(GsoType::ufo4, 7), -EMSGSIZE, GsoError::mss_too_small},
		{"mss_bigger_than_buffer", tcp4(9000), rq(GsoType::tso4, 4000), -EMSGSIZE, GsoError::mss_too_large},
		{"buffer_smaller_than_headers", tcp4(9000), rq(GsoType::tso4, 1000), -ENOBUFS,
		 GsoError::buffer_too_small, 40},
		{"too_many_segments", tcp4(9000), rq(GsoType::tso4, 100), -ENOBUFS, GsoError::too_many_segments},
		{"three_tags", tcp4(3000), rq(GsoType::tso4, 1000, 2), -EINVAL, GsoError::too_many_tags, 2048, 64},
	};
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
