// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The GSO table: one row per shape of super-packet and request (and the
// errors), shared by the segmentation tests (test_gso.cpp) and the GRO round
// trip (test_gro.cpp: every row segmented, then merged back).
#pragma once

#include <algorithm>
#include <cerrno>
#include <ostream>
#include <vector>

#include "gso_check.hpp"
#include "packet_builder.hpp"
#include "xoffload/gso/gso.hpp"

namespace xo_test {

using namespace xoffload;
using namespace xoffload::test;
using xo_test::Bytes;

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
inline void PrintTo(const Row &r, std::ostream *os)
{
	*os << r.name << ": " << r.input.size() << " B, " << to_string(r.req.type) << " mss " << r.req.mss << ", "
	    << unsigned(r.req.ntags) << " tags" << (r.req.geneve ? ", geneve" : "")
	    << (r.req.csum == CsumMode::tx_metadata ? ", tx_metadata" : "") << (r.req.fixed_ipid ? ", fixed_id" : "")
	    << ", " << r.nbufs << " x " << r.cap << " B; want " << r.want << " (" << to_string(r.why) << ")";
}

using PB = xoffload::test::PacketBuilder;

inline Bytes tcp4(size_t payload, uint8_t flags = 0x18, bool opts = false, bool ipopts = false)
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

inline Bytes tcp6(size_t payload, bool ext = false)
{
	PB b;
	b.eth(kMacB, kMacA).ipv6(kIp6A, kIp6B);
	if (ext)
		b.ipv6_ext(0, {1, 4, 0, 0, 0, 0}).ipv6_ext(60, {1, 4, 0, 0, 0, 0});
	return b.tcp(kPortA, kPortB, 0x19, 7).payload(payload, 9).build();
}

inline Bytes udp4(size_t payload, bool ipopts = false, int tags = 0)
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

inline Bytes udp6(size_t payload, bool ext = false)
{
	PB b;
	b.eth(kMacB, kMacA).ipv6(kIp6A, kIp6B);
	if (ext)
		b.ipv6_ext(0, {1, 4, 0, 0, 0, 0}).ipv6_ext(60, {1, 4, 0, 0, 0, 0});
	return b.udp(kPortA, kPortB).payload(payload, 5).build();
}

inline GsoRequest rq(GsoType t, uint16_t mss, int ntags = 0)
{
	GsoRequest r;
	r.type = t;
	r.mss = mss;
	r.ntags = static_cast<uint8_t>(ntags);
	r.tags[0] = GsoVlanTag{0x88a8, 100, 3, true};
	r.tags[1] = GsoVlanTag{0x8100, 200, 5, false};
	return r;
}

inline const std::byte kOpts[] = {std::byte{0x01}, std::byte{0x02}, std::byte{0x80}, std::byte{0x01},	// class 0x0102, critical type
			  std::byte{0xaa}, std::byte{0xbb}, std::byte{0xcc}, std::byte{0xdd}};

inline GeneveEncap geneve(bool v6, bool csum)
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

inline const GeneveEncap kGen4 = geneve(false, true), kGen4NoCsum = geneve(false, false), kGen6 = geneve(true, true);

inline GsoRequest with_geneve(GsoRequest r, const GeneveEncap *g)
{
	r.geneve = g;
	return r;
}
inline GsoRequest fixed_id(GsoRequest r)
{
	r.fixed_ipid = true;
	return r;
}
inline GsoRequest partial(GsoRequest r)
{
	r.csum = CsumMode::tx_metadata;
	return r;
}

inline std::vector<Row> rows()
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

} // namespace xo_test
