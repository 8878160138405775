// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Geneve (RFC 8926) test frames on top of the packet builder: the header and
// its options as bytes, inner frames, and outer encapsulation, shared by the
// BPF tests, the veth integration tests and the bench.
#pragma once

#include <cstdint>
#include <vector>

#include "packet_builder.hpp"

namespace xoffload::test {

inline constexpr uint16_t kEthTeb = 0x6558;
inline constexpr uint8_t kGnvOam = 0x80;	// O bit
inline constexpr uint8_t kGnvCrit = 0x40;	// C bit
inline constexpr uint8_t kOptCritical = 0x80;	// option type bit

struct GeneveOpt {
	uint16_t cls;
	uint8_t type;
	std::vector<uint8_t> data;	// a multiple of 4 bytes
};

// Geneve header (+ options) followed by @inner. opt_len is derived unless
// @optlen_words overrides it (to build lying headers).
inline Bytes geneve(uint32_t vni, uint16_t proto, const Bytes &inner, const std::vector<GeneveOpt> &opts = {},
		    uint8_t flags = 0, uint8_t version = 0, int optlen_words = -1)
{
	Bytes o;
	for (const auto &opt : opts) {
		detail::put16(o, opt.cls);
		o.push_back(opt.type);
		o.push_back(static_cast<uint8_t>(opt.data.size() / 4));
		o.insert(o.end(), opt.data.begin(), opt.data.end());
	}
	unsigned words = optlen_words >= 0 ? static_cast<unsigned>(optlen_words) : o.size() / 4;
	Bytes b;
	b.push_back(static_cast<uint8_t>(version << 6 | (words & 0x3f)));
	b.push_back(flags);
	detail::put16(b, proto);
	b.push_back(static_cast<uint8_t>(vni >> 16));
	b.push_back(static_cast<uint8_t>(vni >> 8));
	b.push_back(static_cast<uint8_t>(vni));
	b.push_back(0);
	b.insert(b.end(), o.begin(), o.end());
	b.insert(b.end(), inner.begin(), inner.end());
	return b;
}

// Inner Ethernet/IPv4/UDP frame (for TEB payloads), or without Ethernet.
inline Bytes inner_udp4(const Ip4 &src, const Ip4 &dst, uint16_t sport, uint16_t dport, size_t payload,
			uint8_t seed = 0, bool with_eth = true, const Mac &dmac = kMacB, const Mac &smac = kMacC)
{
	PacketBuilder b;
	if (with_eth)
		b.eth(dmac, smac);
	return b.ipv4(src, dst).udp(sport, dport).payload(payload, seed).build();
}

inline Bytes inner_tcp6(const Ip6 &src, const Ip6 &dst, uint16_t sport, uint16_t dport, size_t payload,
			bool with_eth = true)
{
	PacketBuilder b;
	if (with_eth)
		b.eth(kMacB, kMacC);
	return b.ipv6(src, dst).tcp(sport, dport).payload(payload).build();
}

struct OuterTag {
	uint16_t tpid;
	uint16_t vid;
};

// Outer Ethernet [+ tags] / IPv4 / UDP(sport, dport) carrying @gnv.
inline Bytes outer4(const Bytes &gnv, uint16_t dport = kPortGeneve, std::vector<OuterTag> tags = {},
		    uint16_t sport = 49152, const Mac &dst = kMacB, const Mac &src = kMacA,
		    const Ip4 &ipsrc = kIpA, const Ip4 &ipdst = kIpB)
{
	PacketBuilder b;
	b.eth(dst, src);
	for (const auto &t : tags)
		b.vlan(t.tpid, t.vid);
	return b.ipv4(ipsrc, ipdst).udp(sport, dport).payload(gnv).build();
}

inline Bytes outer6(const Bytes &gnv, uint16_t dport = kPortGeneve, std::vector<OuterTag> tags = {},
		    uint16_t sport = 49152)
{
	PacketBuilder b;
	b.eth(kMacB, kMacA);
	for (const auto &t : tags)
		b.vlan(t.tpid, t.vid);
	return b.ipv6(kIp6A, kIp6B).udp(sport, dport).payload(gnv).build();
}

// Offsets of an outer4/outer6 frame without tags.
inline constexpr size_t kOuter4Len = 14 + 20 + 8;	// up to the Geneve header
inline constexpr size_t kOuter6Len = 14 + 40 + 8;

} // namespace xoffload::test
