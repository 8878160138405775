// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Independent checker of segmentation output, shared by the GSO unit tests
// and the fuzzer: parses every frame with its own code (none of the
// engine's), verifies every checksum and length, and reassembles the
// payload (TSO/USO) or the datagram (UFO) for comparison with the input.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "xoffload/gso/gso.hpp"

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

inline Bytes frame_bytes(const xoffload::GsoFrame &g)
{
	auto *p = reinterpret_cast<const uint8_t *>(g.data);
	return Bytes(p, p + g.len);
}

// The frames gso_segment cuts @in into under @req, as bytes (at most @max
// frames of @cap bytes); empty when it refuses.
inline std::vector<Bytes> gso_cut(const Bytes &in, const xoffload::GsoRequest &req, size_t max = 64,
				  uint32_t cap = 2048)
{
	std::vector<std::vector<std::byte>> mem(max, std::vector<std::byte>(cap));
	std::vector<xoffload::GsoFrame> out;
	for (auto &m : mem)
		out.push_back(xoffload::GsoFrame{m.data(), cap});
	const int n = xoffload::gso_segment(std::as_bytes(std::span<const uint8_t>(in)), req, out);
	std::vector<Bytes> frames;
	for (int k = 0; k < n; k++)
		frames.push_back(frame_bytes(out[k]));
	return frames;
}

// NIC emulation for CsumMode::tx_metadata: complete the partial checksum.
inline void nic_complete(Bytes &f, const xoffload::GsoFrame &g)
{
	if (!g.csum_partial)
		return;
	uint16_t c = static_cast<uint16_t>(~fold(sum_bytes(f.data() + g.csum_start, f.size() - g.csum_start)));
	f[g.csum_start + g.csum_offset] = static_cast<uint8_t>(c >> 8);
	f[g.csum_start + g.csum_offset + 1] = static_cast<uint8_t>(c);
}

// Checks frames produced from input under req; returns "" or what is wrong.
inline std::string check(const Bytes &input, const xoffload::GsoRequest &req, std::span<const xoffload::GsoFrame> out, int n)
{
	FrameView in;
	std::string e = parse_frame(input.data(), input.size(), 0, in);
	if (!e.empty())
		return "input: " + e;
	size_t in_l4len = in.proto == 6 ? size_t(input[in.l4 + 12] >> 4) * 4 : 8;
	size_t in_payload = in.l4 + in_l4len;
	Bytes want_payload(input.begin() + in_payload, input.end());
	bool ufo = req.type == xoffload::GsoType::ufo4 || req.type == xoffload::GsoType::ufo6;
	size_t opt = req.geneve ? req.geneve->options.size() : 0;

	Bytes got;		// TSO/USO payload, or UFO datagram (fragmentable part)
	std::map<size_t, Bytes> frags;
	std::optional<uint32_t> frag_id;
	bool saw_last = false;
	uint64_t seq0 = in.proto == 6 ? be32(input.data() + in.l4 + 4) : 0;
	uint8_t in_flags = in.proto == 6 ? input[in.l4 + 13] : 0;
	uint16_t id0 = in.ipv6 ? 0 : be16(input.data() + in.l3 + 4);
	size_t inner0 = 0; // where frame 0's inner frame starts

	for (int k = 0; k < n; k++) {
		Bytes f = frame_bytes(out[k]);
		nic_complete(f, out[k]);
		std::string where = "frame " + std::to_string(k) + ": ";
		size_t inner = 0;
		FrameView ov;
		if (req.geneve) {
			if (!(e = parse_frame(f.data(), f.size(), 0, ov)).empty())
				return where + "outer " + e;
			if (ov.proto != 17 || ov.is_frag)
				return where + "outer not UDP";
			const uint8_t *u = f.data() + ov.l4;
			if (be16(u + 2) != req.geneve->dst_port || be16(u + 4) != f.size() - ov.l4)
				return where + "outer UDP port/length";
			if (be16(u) < 49152)
				return where + "outer source port not from the ephemeral range";
			if (be16(u + 6) == 0 ? req.geneve->udp_csum : !req.geneve->udp_csum)
				return where + "outer UDP checksum presence";
			if (be16(u + 6) && !csum_ok(pseudo(f.data(), ov, 17, f.size() - ov.l4) +
						    sum_bytes(u, f.size() - ov.l4)))
				return where + "outer UDP checksum";
			const uint8_t *g = u + 8;
			if ((g[0] >> 6) != 0 || size_t(g[0] & 63) * 4 != opt || be16(g + 2) != 0x6558 ||
			    be32(g + 4) >> 8 != req.geneve->vni)
				return where + "Geneve header";
			if (std::memcmp(g + 8, req.geneve->options.data(), opt))
				return where + "Geneve options";
			if (ov.tags.size() != req.ntags)
				return where + "outer tag count";
			inner = ov.l4 + 16 + opt;
		}
		if (k == 0)
			inner0 = inner;
		FrameView v;
		if (!(e = parse_frame(f.data(), f.size(), inner, v)).empty())
			return where + e;
		size_t want_tags = in.tags.size() + (req.geneve ? 0 : req.ntags);
		if (v.tags.size() != want_tags)
			return where + "tag count " + std::to_string(v.tags.size());
		for (unsigned t = 0; !req.geneve && t < req.ntags; t++) {
			const xoffload::GsoVlanTag &rt = req.tags[t];
			uint16_t tci = static_cast<uint16_t>(rt.pcp << 13 | (rt.dei ? 1 : 0) << 12 | rt.vid);
			if (v.tags[t].first != rt.tpid || v.tags[t].second != tci)
				return where + "inserted tag " + std::to_string(t);
		}
		if (std::memcmp(f.data() + inner, input.data(), 12))
			return where + "MAC addresses";

		if (ufo && (v.is_frag || n > 1)) {
			if (!v.is_frag)
				return where + "not a fragment";
			if (frag_id && *frag_id != v.frag_id)
				return where + "fragment ID differs";
			frag_id = v.frag_id;
			if (!v.more) {
				if (saw_last)
					return where + "two last fragments";
				saw_last = true;
			} else if ((f.size() - v.l4) % 8) {
				return where + "non-last fragment not a multiple of 8";
			}
			if (v.l4 == f.size())
				return where + "empty fragment";
			frags[v.frag_off] = Bytes(f.begin() + v.l4, f.end());
			continue;
		}
		// a whole TCP segment or UDP datagram
		size_t l4len = v.proto == 6 ? size_t(f[v.l4 + 12] >> 4) * 4 : 8;
		if (!csum_ok(pseudo(f.data(), v, v.proto, f.size() - v.l4) + sum_bytes(f.data() + v.l4, f.size() - v.l4)))
			return where + "L4 checksum";
		size_t pl = f.size() - v.l4 - l4len;
		if (v.proto == 17 && be16(f.data() + v.l4 + 4) != f.size() - v.l4)
			return where + "UDP length";
		if (k + 1 < n && req.type != xoffload::GsoType::none && pl != req.mss)
			return where + "segment payload " + std::to_string(pl) + " != mss";
		if (v.proto == 6) {
			if (be32(f.data() + v.l4 + 4) != static_cast<uint32_t>(seq0 + got.size()))
				return where + "sequence number";
			uint8_t fl = f[v.l4 + 13];
			bool last = k + 1 == n;
			if ((fl & 0x09) != (last ? (in_flags & 0x09) : 0))
				return where + "FIN/PSH";
			if ((fl & 0x80) != (k == 0 ? (in_flags & 0x80) : 0))
				return where + "CWR";
			if ((fl & ~0x89) != (in_flags & ~0x89))
				return where + "other TCP flags";
		}
		if (!v.ipv6 && n > 1) {
			uint16_t want = req.fixed_ipid ? id0 : static_cast<uint16_t>(id0 + k);
			if (be16(f.data() + v.l3 + 4) != want)
				return where + "IPv4 ID";
		}
		got.insert(got.end(), f.begin() + v.l4 + l4len, f.end());
	}
	if (ufo && !frags.empty()) {
		if (!saw_last)
			return "no last fragment";
		Bytes dg;
		for (auto &[off, data] : frags) {
			if (off != dg.size())
				return "fragment offsets not contiguous at " + std::to_string(off);
			dg.insert(dg.end(), data.begin(), data.end());
		}
		// IPv6: the fragmentable part may start with extension headers
		size_t ext = in.ipv6 ? in.l4 - (in.l3 + 40) - 0 : 0;
		Bytes want(input.begin() + in.l4 - ext, input.end());
		if (in.ipv6) {
			// the input's extension headers after the unfragmentable part are
			// exactly the reassembled prefix; compare from the UDP header
			ext = dg.size() - (input.size() - in.l4);
			want.assign(input.begin() + in.l4, input.end());
		}
		Bytes udp(dg.begin() + ext, dg.end());
		if (udp.size() != want.size() || be16(udp.data() + 4) != udp.size())
			return "reassembled datagram length";
		Bytes f0 = frame_bytes(out[0]);
		FrameView v0;
		parse_frame(f0.data(), f0.size(), inner0, v0);
		if (!csum_ok(pseudo(f0.data(), v0, 17, udp.size()) + sum_bytes(udp.data(), udp.size())))
			return "reassembled UDP checksum";
		if (!std::equal(udp.begin(), udp.begin() + 4, want.begin()))
			return "reassembled UDP ports differ";
		if (!std::equal(udp.begin() + 8, udp.end(), want.begin() + 8))
			return "reassembled payload differs";
		return "";
	}
	if (got != want_payload)
		return "payload differs (" + std::to_string(got.size()) + " vs " + std::to_string(want_payload.size()) + ")";
	return "";
}

} // namespace xo_test
