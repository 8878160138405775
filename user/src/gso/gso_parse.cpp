// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Parsing and validation of a super-packet's headers. Every length field is
// checked against what the input really holds ("headers that lie").
#include "gso_internal.hpp"

namespace xoffload::gso_detail {

namespace {

constexpr uint8_t kHopByHop = 0, kRouting = 43, kDestOpts = 60;
constexpr unsigned kMaxExtHeaders = 8;

bool is_vlan(uint16_t t)
{
	return t == 0x8100 || t == 0x88A8;
}

GsoError parse_ipv6(Parsed &p, size_t avail)
{
	const std::byte *ip = p.hdr + p.l3_off;
	if (avail < 40 || std::to_integer<uint8_t>(ip[0]) >> 4 != 6)
		return GsoError::bad_ipv6;
	if (40 + size_t{ld16(ip + 4)} != avail)
		return GsoError::bad_ipv6;
	uint8_t next = std::to_integer<uint8_t>(ip[6]);
	size_t off = 40;
	size_t next_off = p.l3_off + 6;
	p.ip6_unfrag_len = 40;
	p.ip6_unfrag_next_off = next_off;
	for (unsigned n = 0; next == kHopByHop || next == kRouting || next == kDestOpts; n++) {
		if (n == kMaxExtHeaders || off + 8 > avail || p.l3_off + off + 8 > kMaxHdr)
			return GsoError::bad_ipv6;
		const std::byte *eh = ip + off;
		size_t len = (size_t{std::to_integer<uint8_t>(eh[1])} + 1) * 8;
		if (off + len > avail || p.l3_off + off + len > kMaxHdr)
			return GsoError::bad_ipv6;
		// a routing header with segments left would put the final destination
		// in the pseudo-header: not something we rewrite
		if (next == kRouting && std::to_integer<uint8_t>(eh[3]) != 0)
			return GsoError::unsupported;
		next_off = p.l3_off + off;
		off += len;
		if (next == kHopByHop || next == kRouting) {
			p.ip6_unfrag_len = off;
			p.ip6_unfrag_next_off = next_off;
		}
		next = std::to_integer<uint8_t>(eh[0]);
	}
	if (next == kProtoFrag)
		return GsoError::bad_ipv6; // already a fragment
	if (next != kProtoTcp && next != kProtoUdp)
		return GsoError::unsupported;
	p.l3_len = off;
	p.l4_proto = next;
	return GsoError::ok;
}

GsoError parse_ipv4(Parsed &p, size_t avail)
{
	const std::byte *ip = p.hdr + p.l3_off;
	if (avail < 20)
		return GsoError::bad_ipv4;
	uint8_t vihl = std::to_integer<uint8_t>(ip[0]);
	size_t ihl = size_t{vihl & 0x0fu} * 4;
	if (vihl >> 4 != 4 || ihl < 20 || ihl > avail)
		return GsoError::bad_ipv4;
	// trailing bytes past tot_len would be Ethernet padding: a super-packet has none
	if (ld16(ip + 2) != avail)
		return GsoError::bad_ipv4;
	if (ld16(ip + 6) & 0x3fff)
		return GsoError::bad_ipv4; // MF or an offset: already a fragment
	uint8_t proto = std::to_integer<uint8_t>(ip[9]);
	if (proto != kProtoTcp && proto != kProtoUdp)
		return GsoError::unsupported;
	p.l3_len = ihl;
	p.l4_proto = proto;
	return GsoError::ok;
}

} // namespace

GsoError parse(const Input &in, Parsed &p) noexcept
{
	size_t total = in.size();
	size_t grab = total < kMaxHdr ? total : kMaxHdr;
	if (!(p.hdr = in.contiguous(grab))) {
		in.copy(p.buf.data(), 0, grab, false);
		p.hdr = p.buf.data();
	}

	if (grab < 14)
		return GsoError::too_short;
	size_t off = kMacLen;
	uint16_t type = ld16(p.hdr + off);
	while (is_vlan(type)) {
		if (p.l2_tags == 2)
			return GsoError::too_many_tags;
		if (off + kVlanLen + 2 > grab)
			return GsoError::too_short;
		off += kVlanLen;
		p.l2_tags++;
		type = ld16(p.hdr + off);
	}
	p.l2_len = off + 2;
	p.l3_off = p.l2_len;
	if (type != kEthIpv4 && type != kEthIpv6)
		return GsoError::bad_l2;
	p.ipv6 = type == kEthIpv6;

	// IP length fields are checked against the whole input, not the grab
	size_t l3_avail = total - p.l3_off;
	if (p.l3_off + (p.ipv6 ? 40 : 20) > grab)
		return GsoError::too_short;
	GsoError e = p.ipv6 ? parse_ipv6(p, l3_avail) : parse_ipv4(p, l3_avail);
	if (e != GsoError::ok)
		return e;

	p.l4_off = p.l3_off + p.l3_len;
	size_t l4_avail = total - p.l4_off;
	if (p.l4_proto == kProtoTcp) {
		if (l4_avail < 20 || p.l4_off + 20 > grab)
			return GsoError::bad_l4;
		size_t doff = static_cast<size_t>(std::to_integer<uint8_t>(p.hdr[p.l4_off + 12]) >> 4) * 4;
		if (doff < 20 || doff > l4_avail || p.l4_off + doff > grab)
			return GsoError::bad_l4;
		p.l4_len = doff;
	} else {
		if (l4_avail < 8 || p.l4_off + 8 > grab)
			return GsoError::bad_l4;
		if (ld16(p.hdr + p.l4_off + 4) != l4_avail)
			return GsoError::bad_l4;
		p.l4_len = 8;
	}
	p.payload_off = p.l4_off + p.l4_len;
	p.hdr_len = p.payload_off;
	p.payload_len = total - p.payload_off;
	return GsoError::ok;
}

uint32_t flow_hash(const Parsed &p) noexcept
{
	// FNV-1a over addresses, protocol and ports: cheap, stable, well spread
	uint32_t h = 2166136261u;
	auto mix = [&h](const std::byte *b, size_t n) {
		for (size_t i = 0; i < n; i++) {
			h ^= std::to_integer<uint32_t>(b[i]);
			h *= 16777619u;
		}
	};
	const std::byte *ip = p.hdr + p.l3_off;
	if (p.ipv6)
		mix(ip + 8, 32);
	else
		mix(ip + 12, 8);
	const std::byte proto{p.l4_proto};
	mix(&proto, 1);
	mix(p.hdr + p.l4_off, 4);
	return h ^ (h >> 16);
}

} // namespace xoffload::gso_detail
