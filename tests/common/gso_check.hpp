// Independent checker of segmentation output, shared by the GSO unit tests
// and the fuzzer: parses every frame with its own code (none of the
// engine's), verifies every checksum and length, and reassembles the
// payload (TSO/USO) or the datagram (UFO) for comparison with the input.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "xoffload/gso.hpp"

namespace xo_test {

using Bytes = std::vector<uint8_t>;

inline uint16_t be16(const uint8_t *p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }
inline uint32_t be32(const uint8_t *p) { return uint32_t{be16(p)} << 16 | be16(p + 2); }

inline uint64_t sum_bytes(const uint8_t *p, size_t n, uint64_t s = 0)
{
	for (size_t i = 0; i < n; i += 2)
		s += (uint64_t{p[i]} << 8) | (i + 1 < n ? p[i + 1] : 0);
	return s;
}
inline uint16_t fold(uint64_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return static_cast<uint16_t>(s);
}
// True if a region including its checksum field sums to 0xffff.
inline bool csum_ok(uint64_t s) { return fold(s) == 0xffff; }

struct FrameView {
	size_t l3 = 0;		// offset of the IP header
	bool ipv6 = false;
	size_t l4 = 0;		// offset of TCP/UDP (or the fragment data)
	uint8_t proto = 0;
	std::vector<std::pair<uint16_t, uint16_t>> tags; // tpid, tci
	// IPv4 fragment fields / IPv6 fragment header
	bool is_frag = false;
	uint32_t frag_id = 0;
	size_t frag_off = 0;
	bool more = false;
};

struct CheckResult {
	std::string error;	// empty: fine
	Bytes payload;		// TSO/USO: concatenated payloads; UFO: reassembled datagram (UDP hdr + data)
	std::vector<FrameView> views;
	size_t frames = 0;
};

// Parses Ethernet + tags + IPv4/IPv6 (+ ext headers, fragment header).
inline std::string parse_frame(const uint8_t *f, size_t len, size_t start, FrameView &v)
{
	size_t off = start + 12;
	if (len < off + 2)
		return "short L2";
	uint16_t type = be16(f + off);
	while (type == 0x8100 || type == 0x88a8) {
		if (len < off + 6)
			return "short tag";
		v.tags.emplace_back(type, be16(f + off + 2));
		off += 4;
		type = be16(f + off);
	}
	off += 2;
	v.l3 = off;
	if (type == 0x0800) {
		if (len < off + 20)
			return "short IPv4";
		size_t ihl = size_t(f[off] & 15) * 4;
		if ((f[off] >> 4) != 4 || ihl < 20 || len < off + ihl)
			return "bad IPv4 header";
		if (!csum_ok(sum_bytes(f + off, ihl)))
			return "bad IPv4 header checksum";
		if (be16(f + off + 2) != len - off)
			return "IPv4 total length " + std::to_string(be16(f + off + 2)) + " != " +
			       std::to_string(len - off);
		uint16_t fo = be16(f + off + 6);
		v.is_frag = (fo & 0x3fff) != 0;
		v.more = fo & 0x2000;
		v.frag_off = size_t(fo & 0x1fff) * 8;
		v.frag_id = be16(f + off + 4);
		v.proto = f[off + 9];
		v.l4 = off + ihl;
	} else if (type == 0x86dd) {
		if (len < off + 40)
			return "short IPv6";
		if (be16(f + off + 4) != len - off - 40)
			return "IPv6 payload length lies";
		v.ipv6 = true;
		uint8_t next = f[off + 6];
		size_t p = off + 40;
		for (int n = 0; n < 8 && (next == 0 || next == 43 || next == 60 || next == 44); n++) {
			if (len < p + 8)
				return "short extension header";
			if (next == 44) {
				v.is_frag = true;
				v.frag_off = be16(f + p + 2) & ~7u;
				v.more = be16(f + p + 2) & 1;
				v.frag_id = be32(f + p + 4);
				next = f[p];
				p += 8;
				break; // the rest is fragment data
			}
			size_t l = (size_t(f[p + 1]) + 1) * 8;
			next = f[p];
			p += l;
		}
		v.proto = next;
		v.l4 = p;
	} else {
		return "not IP";
	}
	return "";
}

inline uint64_t pseudo(const uint8_t *f, const FrameView &v, uint8_t proto, size_t l4len)
{
	uint64_t s = v.ipv6 ? sum_bytes(f + v.l3 + 8, 32) : sum_bytes(f + v.l3 + 12, 8);
	return s + proto + l4len;
}

} // namespace xo_test
