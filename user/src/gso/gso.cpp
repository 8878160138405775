// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The segmentation engine: plans the frames (the common shape in one pass),
// then writes each one exactly once: headers copied from the input or a
// template with a few fields patched (their checksums from sums taken once,
// RFC 1624), the payload copied with its checksum folded into the copy, and
// under a Geneve outer checksum the outer headers last. No frame reads back
// bytes just stored (see make_seg).
#include <cerrno>
#include <optional>
#include <string>

#include "gso_internal.hpp"
#include "../packet/csum_kernel.hpp"

namespace xoffload {

using namespace gso_detail;

const char *to_string(GsoType t) noexcept
{
	switch (t) {
	case GsoType::none: return "none";
	case GsoType::tso4: return "tso4";
	case GsoType::tso6: return "tso6";
	case GsoType::uso4: return "uso4";
	case GsoType::uso6: return "uso6";
	case GsoType::ufo4: return "ufo4";
	case GsoType::ufo6: return "ufo6";
	}
	return "?";
}

const char *to_string(GsoError e) noexcept
{
	switch (e) {
	case GsoError::ok: return "ok";
	case GsoError::unsupported: return "unsupported combination of packet and request";
	case GsoError::too_short: return "input ends inside the headers";
	case GsoError::bad_l2: return "not Ethernet with IPv4/IPv6";
	case GsoError::bad_ipv4: return "bad IPv4 header (version, ihl, total length or a fragment)";
	case GsoError::bad_ipv6: return "bad IPv6 header (payload length, extension headers or a fragment)";
	case GsoError::bad_l4: return "bad TCP/UDP header (data offset, length)";
	case GsoError::mss_too_small: return "mss too small";
	case GsoError::mss_too_large: return "mss too large for the frame buffers";
	case GsoError::too_many_segments: return "more segments than frame buffers";
	case GsoError::buffer_too_small: return "frame buffer too small for the headers";
	case GsoError::too_many_tags: return "more than 2 VLAN tags";
	case GsoError::bad_geneve: return "bad Geneve options";
	}
	return "?";
}

namespace {

constexpr uint8_t kTcpFin = 0x01, kTcpPsh = 0x08, kTcpCwr = 0x80;
constexpr uint16_t kIpMf = 0x2000;

bool is_ufo(GsoType t)
{
	return t == GsoType::ufo4 || t == GsoType::ufo6;
}

// a / b rounded up, b > 0. a is a payload or datagram length the parser has
// bounded by the 16-bit IP length fields (under 2^17), so it fits 32 bits: a
// 32-bit division, a good deal shorter than a 64-bit one.
inline size_t div_up(size_t a, size_t b)
{
	return (static_cast<uint32_t>(a) + static_cast<uint32_t>(b) - 1) / static_cast<uint32_t>(b);
}

// The longest Geneve outer headers: MACs, two tags, ethertype, IPv6, UDP,
// Geneve and 252 bytes of options.
constexpr size_t kOuterMax = 14 + 8 + 40 + 8 + kGeneveHdr + 252;

// Whether the first n buffers all hold need bytes. Branches, not a flag
// and-ed up: GCC kept such a flag in memory, stored as a byte and loaded as a
// word, a load that waits until every older store, the previous call's
// frames included, has reached the cache.
[[gnu::always_inline]] inline bool frames_fit(std::span<const GsoFrame> out, size_t n, size_t need)
{
	for (size_t k = 0; k < n; k++)
		if (out[k].cap < need || !out[k].data)
			return false;
	return true;
}

// Everything decided before the first byte is written.
struct Plan {
	Parsed p;
	size_t nframes = 0;
	size_t step = 0;		// payload bytes per segment, or datagram bytes per fragment
	bool fragment = false;		// UFO that really fragments
	size_t l2_out = 0;		// inner L2 length with inserted tags
	size_t outer_len = 0;		// Geneve outer headers
	size_t geneve_opt = 0;
	bool geneve_critical = false;
	// UFO
	size_t frag_total = 0;		// fragmentable bytes (UFO4: UDP + payload)
	size_t frag_prefix = 0;		// UFO6: extension headers after the unfragmentable part
	std::array<std::byte, 40> v4_copied_opts;	// the first v4_copied_len bytes set
	size_t v4_copied_len = 0;	// padded copied options for later fragments
};

// What the TSO/USO frame loop needs to know of a super-packet: where its
// headers are and how it is cut. fast_plan fills it directly; shape_of takes
// it from a plan.
struct Shape {
	const std::byte *hdr;		// the input's headers
	size_t l3_off, l3_len, l4_off, l4_len;
	size_t payload_off, payload_len;
	size_t l2_out;			// inner L2 length with inserted tags
	size_t nframes, step;
};

Shape shape_of(const Plan &pl)
{
	const Parsed &p = pl.p;
	return Shape{p.hdr, p.l3_off, p.l3_len, p.l4_off, p.l4_len, p.payload_off, p.payload_len,
		     pl.l2_out, pl.nframes, pl.step};
}

GsoError check_geneve(const GeneveEncap &g, Plan &pl)
{
	size_t n = g.options.size();
	if (n % 4 || n > 252 || g.vni >> 24)
		return GsoError::bad_geneve;
	for (size_t off = 0; off < n;) {
		if (off + 4 > n)
			return GsoError::bad_geneve;
		uint8_t type = std::to_integer<uint8_t>(g.options[off + 2]);
		size_t len = 4 + size_t{std::to_integer<uint8_t>(g.options[off + 3]) & 0x1fu} * 4;
		if (off + len > n)
			return GsoError::bad_geneve;
		if (type & 0x80)
			pl.geneve_critical = true;
		off += len;
	}
	pl.geneve_opt = n;
	return GsoError::ok;
}

// RFC 791: options with the copied flag go into every fragment.
void build_copied_options(Plan &pl)
{
	const Parsed &p = pl.p;
	const std::byte *o = p.hdr + p.l3_off + 20;
	size_t n = p.l3_len - 20, out = 0;
	for (size_t i = 0; i < n;) {
		uint8_t t = std::to_integer<uint8_t>(o[i]);
		if (t == 0)
			break;
		if (t == 1) {
			i++;
			continue;
		}
		if (i + 1 >= n)
			break;
		size_t len = std::to_integer<uint8_t>(o[i + 1]);
		if (len < 2 || i + len > n)
			break;
		if (t & 0x80) {
			std::memcpy(pl.v4_copied_opts.data() + out, o + i, len);
			out += len;
		}
		i += len;
	}
	while (out % 4)
		pl.v4_copied_opts[out++] = std::byte{0};
	pl.v4_copied_len = out;
}

size_t ip_hdr_len(const Plan &pl, size_t k)
{
	const Parsed &p = pl.p;
	if (!pl.fragment)
		return p.l3_len;
	if (p.ipv6)
		return p.ip6_unfrag_len + 8;
	return k == 0 ? p.l3_len : 20 + pl.v4_copied_len;
}

// Payload bytes of segment k (TSO/USO, or UFO that does not fragment).
inline size_t seg_data(size_t k, size_t nframes, size_t step, size_t payload_len)
{
	if (nframes == 1)
		return payload_len;
	size_t off = k * step;
	return payload_len - off < step ? payload_len - off : step;
}

// Headers and payload of frame k: inner header bytes, payload bytes.
// fragment: pl.fragment, or false where the caller knows it is.
inline void frame_shape(const Plan &pl, size_t k, size_t &hdr, size_t &data, bool fragment)
{
	const Parsed &p = pl.p;
	if (!fragment) {
		data = seg_data(k, pl.nframes, pl.step, p.payload_len);
		hdr = pl.l2_out + p.l3_len + p.l4_len;
		return;
	}
	size_t off = k * pl.step;
	data = pl.frag_total - off < pl.step ? pl.frag_total - off : pl.step;
	hdr = pl.l2_out + ip_hdr_len(pl, k);
}

GsoError make_plan(const Input &in, const GsoRequest &req, Plan &pl, size_t nbufs, std::span<GsoFrame> out)
{
	Parsed &p = pl.p;
	GsoError e = parse(in, p);
	if (e != GsoError::ok)
		return e;

	bool tcp = p.l4_proto == kProtoTcp;
	switch (req.type) {
	case GsoType::none:
		break;
	case GsoType::tso4:
	case GsoType::tso6:
		if (!tcp || p.ipv6 != (req.type == GsoType::tso6))
			return GsoError::unsupported;
		break;
	case GsoType::uso4:
	case GsoType::uso6:
	case GsoType::ufo4:
	case GsoType::ufo6:
		if (tcp || p.ipv6 != (req.type == GsoType::uso6 || req.type == GsoType::ufo6))
			return GsoError::unsupported;
		break;
	}
	if (req.ntags > 2 || (!req.geneve && req.ntags + p.l2_tags > 2))
		return GsoError::too_many_tags;
	if (req.type != GsoType::none && req.mss == 0)
		return GsoError::mss_too_small;

	pl.l2_out = p.l2_len + (req.geneve ? 0 : req.ntags * kVlanLen);
	if (req.geneve) {
		if ((e = check_geneve(*req.geneve, pl)) != GsoError::ok)
			return e;
		pl.outer_len = kMacLen + req.ntags * kVlanLen + 2 + (req.geneve->ipv6 ? 40 : 20) + 8 + kGeneveHdr +
			       pl.geneve_opt;
	}

	if (is_ufo(req.type)) {
		pl.frag_prefix = p.ipv6 ? p.l3_len - p.ip6_unfrag_len : 0;
		pl.frag_total = pl.frag_prefix + 8 + p.payload_len;
		if (pl.frag_total > req.mss) {
			pl.fragment = true;
			pl.step = req.mss & ~size_t{7};
			// the first fragment must hold the whole UDP header
			if (pl.step < pl.frag_prefix + 8)
				return GsoError::mss_too_small;
			pl.nframes = div_up(pl.frag_total, pl.step);
			if (!p.ipv6)
				build_copied_options(pl);
		} else {
			pl.nframes = 1;
			pl.step = p.payload_len;
		}
	} else if (req.type == GsoType::none || p.payload_len <= req.mss) {
		pl.nframes = 1;
		pl.step = p.payload_len;
	} else {
		pl.step = req.mss;
		pl.nframes = div_up(p.payload_len, pl.step);
	}

	if (pl.nframes > nbufs)
		return GsoError::too_many_segments;
	if (out.empty())
		return GsoError::ok;
	// frame 0 is the largest (its headers are the longest, its data a full step)
	size_t hdr0, data0;
	frame_shape(pl, 0, hdr0, data0, pl.fragment);
	const bool fits = frames_fit(out, pl.nframes, pl.outer_len + hdr0 + data0);
	for (size_t k = 0; k < pl.nframes && !fits; k++) {
		size_t hdr, data;
		frame_shape(pl, k, hdr, data, pl.fragment);
		if (pl.outer_len + hdr + data > out[k].cap || !out[k].data)
			return out[k].cap < pl.outer_len + hdr + 1 ? GsoError::buffer_too_small : GsoError::mss_too_large;
	}
	return GsoError::ok;
}

// The common shape planned in one pass: the input in one span, Ethernet
// without tags, IPv4 without options or IPv6 without extension headers, TCP
// (Tcp) or UDP, TSO or USO without Geneve, more payload than one mss, and
// frame buffers that fit. Fills s exactly as make_plan and shape_of would
// (gso_detail::plans_differ, run by the tests and the fuzzer, checks that);
// false for anything else, errors included, which make_plan then decides.
template <bool Tcp, bool V6>
[[gnu::always_inline]] inline bool fast_plan(const Input &in, const GsoRequest &req, std::span<GsoFrame> out, Shape &s)
{
	const size_t total = in.size();
	const std::byte *h = in.contiguous(total);
	if (!h || req.geneve || req.mss == 0 || req.ntags > 2)
		return false;
	constexpr size_t l3_off = kMacLen + 2, l3_len = V6 ? 40 : 20, l4_off = l3_off + l3_len;
	constexpr uint8_t proto = Tcp ? kProtoTcp : kProtoUdp;
	if (total < l4_off + (Tcp ? 20 : 8) || ld16(h + kMacLen) != (V6 ? kEthIpv6 : kEthIpv4))
		return false;
	const std::byte *ip = h + l3_off;
	if constexpr (V6) {
		if (std::to_integer<uint8_t>(ip[0]) >> 4 != 6 || size_t{ld16(ip + 4)} + 40 != total - l3_off ||
		    std::to_integer<uint8_t>(ip[6]) != proto)
			return false;
	} else if (std::to_integer<uint8_t>(ip[0]) != 0x45 || ld16(ip + 2) != total - l3_off || (ld16(ip + 6) & 0x3fff) ||
		   std::to_integer<uint8_t>(ip[9]) != proto) {
		return false;
	}
	size_t l4_len = 8;
	if constexpr (Tcp) {
		l4_len = static_cast<size_t>(std::to_integer<uint8_t>(h[l4_off + 12]) >> 4) * 4;
		if (l4_len < 20 || l4_off + l4_len > total)
			return false;
	} else if (ld16(h + l4_off + 4) != total - l4_off) {
		return false;
	}
	const size_t payload_off = l4_off + l4_len, payload_len = total - payload_off;
	if (payload_len <= req.mss)
		return false;
	const size_t nframes = div_up(payload_len, req.mss);
	const size_t l2_out = l3_off + req.ntags * kVlanLen;
	if (nframes > out.size() || !frames_fit(out, nframes, l2_out + l3_len + l4_len + req.mss))
		return false;
	s = Shape{h, l3_off, l3_len, l4_off, l4_len, payload_off, payload_len, l2_out, nframes, req.mss};
	return true;
}

int errno_of(GsoError e)
{
	switch (e) {
	case GsoError::ok:
		return 0;
	case GsoError::unsupported:
		return -ENOTSUP;
	case GsoError::mss_too_small:
	case GsoError::mss_too_large:
		return -EMSGSIZE;
	case GsoError::too_many_segments:
	case GsoError::buffer_too_small:
		return -ENOBUFS;
	default:
		return -EINVAL;
	}
}

// Pseudo-header sum for an L4 length (RFC 793 / RFC 8200 8.1).
uint32_t pseudo_sum(const std::byte *ip, bool ipv6, uint8_t proto, size_t l4_len)
{
	uint32_t s = ipv6 ? csum_hdr(ip + 8, 32) : csum_hdr(ip + 12, 8);
	return csum_fold16(uint64_t{s} + proto + (l4_len & 0xffff) + (l4_len >> 16));
}

void ipv4_fix_csum(std::byte *ip, size_t ihl)
{
	st16(ip + 10, 0);
	st16(ip + 10, csum_finish(csum_hdr(ip, ihl)));
}

// A VLAN tag's 4 wire bytes as a native 32-bit word (to store with memcpy).
inline uint32_t tag_word(const GsoVlanTag &tag)
{
	uint32_t tci = (tag.pcp & 7u) << 13 | (tag.dei ? 1u : 0u) << 12 | (tag.vid & 0x0fffu);
	return __builtin_bswap32(uint32_t{tag.tpid} << 16 | tci);
}

// The start of a frame's inner headers as it goes out: the input's MACs, the
// inserted tags (none under Geneve: they go outside) and the input's bytes
// after them up to byte 32, composed once per call from the input's bytes,
// so that no frame reads back a template just written with smaller stores.
struct L2Prefix {
	const std::byte *h = nullptr;	// the input's headers (at least 42 bytes)
	unsigned ntags = 0;
	// tagged: the frame's first 32 bytes, MACs, tags and the input's bytes
	// that follow them, so that the rest is copied from the input at the
	// same offset as an untagged frame's
	uint64_t q[4];	// set by l2_prefix, zero when untagged (no member initializer:
			// GCC zeroed the whole struct with rep stos)
};

[[gnu::always_inline]] inline L2Prefix l2_prefix(const std::byte *hdr, const GsoRequest &req)
{
	L2Prefix l2;
	l2.h = hdr;
	l2.ntags = req.geneve ? 0 : req.ntags;
	if (l2.ntags) {
		auto ld = [hdr](size_t at, size_t n) {
			uint64_t v = 0;
			std::memcpy(&v, hdr + at, n);
			return v;
		};
		l2.q[0] = ld(0, 8);
		l2.q[1] = ld(8, 4) | uint64_t{tag_word(req.tags[0])} << 32;
		if (l2.ntags == 2) {
			l2.q[2] = tag_word(req.tags[1]) | ld(12, 4) << 32;
			l2.q[3] = ld(16, 8);
		} else {
			l2.q[2] = ld(12, 8);
			l2.q[3] = ld(20, 8);
		}
	} else {
		l2.q[0] = l2.q[1] = l2.q[2] = l2.q[3] = 0;
	}
	return l2;
}

// The first n bytes (n >= pl.l2_out) of a frame's inner headers: the
// prefix, then the input's bytes from its own tags or ethertype on. Tags:
// how many tags are inserted where the caller knows it at compile time, -1
// where it does not.
template <int Tags = -1>
[[gnu::always_inline]] inline void write_hdrs(const L2Prefix &l2, std::byte *f, size_t n)
{
	const unsigned ntags = Tags >= 0 ? static_cast<unsigned>(Tags) : l2.ntags;
	if (ntags == 0) {
		copy_hdr(f, l2.h, n);
		return;
	}
	const size_t tags = ntags * kVlanLen;
	if (n >= 32) {
		std::memcpy(f, l2.q, 32);
		copy_hdr(f + 32, l2.h + 32 - tags, n - 32);
		return;
	}
	std::memcpy(f, l2.q, kMacLen + tags);
	copy_hdr(f + kMacLen + tags, l2.h + kMacLen, n - kMacLen - tags);
}

// MACs, inserted tags, the rest of the input's L2. Returns bytes written.
size_t write_l2(const Plan &pl, const GsoRequest &req, std::byte *f)
{
	write_hdrs(l2_prefix(pl.p.hdr, req), f, pl.l2_out);
	return pl.l2_out;
}

// Geneve outer headers in front of an inner frame of inner_len bytes whose
// bytes sum (from its start) to inner_sum. k numbers the frame.
void write_geneve(const Plan &pl, const GsoRequest &req, std::byte *o, size_t inner_len, uint32_t inner_sum,
		  size_t k, uint32_t hash)
{
	const GeneveEncap &g = *req.geneve;
	std::memcpy(o, g.dst_mac.b.data(), 6);
	std::memcpy(o + 6, g.src_mac.b.data(), 6);
	size_t off = kMacLen;
	for (unsigned t = 0; t < req.ntags; t++, off += kVlanLen) {
		const uint32_t w = tag_word(req.tags[t]);
		std::memcpy(o + off, &w, 4);
	}
	st16(o + off, g.ipv6 ? kEthIpv6 : kEthIpv4);
	off += 2;
	std::byte *ip = o + off;
	size_t gen_len = kGeneveHdr + pl.geneve_opt;
	size_t udp_len = 8 + gen_len + inner_len;
	if (g.ipv6) {
		st32(ip, 0x60000000u);
		st16(ip + 4, static_cast<uint16_t>(udp_len));
		ip[6] = std::byte{kProtoUdp};
		ip[7] = std::byte{g.ttl};
		std::memcpy(ip + 8, g.src_ip.data(), 16);
		std::memcpy(ip + 24, g.dst_ip.data(), 16);
		off += 40;
	} else {
		ip[0] = std::byte{0x45};
		ip[1] = std::byte{0};
		st16(ip + 2, static_cast<uint16_t>(20 + udp_len));
		st16(ip + 4, static_cast<uint16_t>(hash + k));
		st16(ip + 6, 0);
		ip[8] = std::byte{g.ttl};
		ip[9] = std::byte{kProtoUdp};
		std::memcpy(ip + 12, g.src_ip.data(), 4);
		std::memcpy(ip + 16, g.dst_ip.data(), 4);
		ipv4_fix_csum(ip, 20);
		off += 20;
	}
	std::byte *udp = o + off;
	// source port from the inner flow: entropy for ECMP/RSS, as udp_flow_src_port
	st16(udp, static_cast<uint16_t>(49152 + (hash % 16384)));
	st16(udp + 2, g.dst_port);
	st16(udp + 4, static_cast<uint16_t>(udp_len));
	st16(udp + 6, 0);
	std::byte *gh = udp + 8;
	gh[0] = std::byte(static_cast<uint8_t>(pl.geneve_opt / 4));
	gh[1] = std::byte{static_cast<uint8_t>(pl.geneve_critical ? 0x40 : 0)};
	st16(gh + 2, kEthTeb);
	st32(gh + 4, g.vni << 8);
	if (pl.geneve_opt)
		std::memcpy(gh + kGeneveHdr, g.options.data(), pl.geneve_opt);
	if (g.udp_csum) {
		uint32_t s = pseudo_sum(ip, g.ipv6, kProtoUdp, udp_len);
		s = csum_add(s, csum_hdr(udp, 8 + gen_len));
		s = csum_add(s, inner_sum, 8 + gen_len);
		uint16_t c = csum_finish(s);
		st16(udp + 6, c ? c : 0xffff);
	}
}

// The per-call constants of TSO/USO segments: where the inner headers'
// fields are, and the sums their checksums start from, taken once over the
// headers with the patched fields left out, so that a segment adds only
// what changed (RFC 1624) instead of summing its headers again.
struct Seg {
	size_t l3_at = 0, l4_at = 0;	// in the inner frame (tags inserted)
	size_t hdr_len = 0;		// the inner headers
	size_t nframes = 0, step = 0, payload_len = 0;
	size_t l3_over = 0, l4_over = 0;	// IP and L4 header bytes before a segment's data
	// the sums, folded to 16 bits so that a segment's fields add up in 32:
	// IPv4 header; L4 header + pseudo-header; pseudo-header alone (partial)
	uint32_t ip_base = 0, l4_base = 0, ph_base = 0;
	uint32_t seq0 = 0;
	uint16_t id0 = 0;
	uint8_t flags = 0;
	bool bump_id = false;		// IPv4 ID + k (not fixed_ipid, several frames)
	bool partial = false;		// L4 checksum left to the NIC
};

// The sums start from the input's own header bytes with the patched fields
// taken out in registers (subtracting x adds ~x): never from bytes just
// stored, which a load could read only once every store before them, the
// previous frames' cache misses included, had reached the cache.
[[gnu::always_inline]] inline Seg make_seg(const Shape &s, bool tcp, bool v6, const GsoRequest &req)
{
	Seg c;
	c.l3_at = s.l2_out;
	c.l4_at = c.l3_at + s.l3_len;
	c.hdr_len = c.l4_at + s.l4_len;
	c.l3_over = c.hdr_len - c.l3_at;
	c.l4_over = s.l4_len;
	c.nframes = s.nframes;
	c.step = s.step;
	c.payload_len = s.payload_len;
	c.bump_id = !v6 && !req.fixed_ipid && s.nframes > 1;
	c.partial = req.csum == CsumMode::tx_metadata;
	const std::byte *ip = s.hdr + s.l3_off, *l4 = s.hdr + s.l4_off;
	auto minus = [](uint16_t v) { return uint32_t{static_cast<uint16_t>(~v)}; };
	if (v6) {
		c.ph_base = csum_hdr(ip + 8, 32);
	} else {
		c.id0 = ld16(ip + 4);
		// the usual 20 bytes as a constant: the sum unrolled
		const uint32_t ip_sum = s.l3_len == 20 ? csum_hdr(ip, 20) : csum_hdr(ip, s.l3_len);
		c.ip_base = csum_fold16(
			csum_add32(ip_sum, minus(ld16(ip + 2)) + minus(ld16(ip + 10)) + (c.bump_id ? minus(c.id0) : 0)));
		c.ph_base = csum_hdr(ip + 12, 8);
	}
	c.ph_base = csum_add32(c.ph_base, tcp ? kProtoTcp : kProtoUdp);
	uint32_t out_fields = minus(ld16(l4 + (tcp ? 16 : 6)));
	uint32_t l4_sum;
	if (tcp) {
		c.seq0 = ld32(l4 + 4);
		c.flags = std::to_integer<uint8_t>(l4[13]);
		out_fields += minus(ld16(l4 + 4)) + minus(ld16(l4 + 6)) + minus(c.flags);
		l4_sum = csum_hdr(l4, 20);
		if (s.l4_len > 20)
			l4_sum = csum_add32(l4_sum, csum_hdr(l4 + 20, s.l4_len - 20));
	} else {
		out_fields += minus(ld16(l4 + 4));
		l4_sum = csum_hdr(l4, 8);
	}
	c.l4_base = csum_fold16(uint64_t{csum_add32(l4_sum, out_fields)} + c.ph_base);
	c.ph_base = csum_fold16(c.ph_base);
	return c;
}

// Patches segment k's fields into its inner headers at f (IP length, IPv4
// ID and checksum; TCP sequence and flags or UDP length) and its L4
// checksum: pseudo-header + the patched fields + psum, the sum of its
// data_len payload bytes (at an even offset: TCP and UDP headers are
// multiples of 4 bytes), one fold. The lengths fit their 16-bit fields:
// the parser bounded the input by the IP length fields.
template <bool Tcp, bool V6>
[[gnu::always_inline]] inline void patch_seg(const Seg &c, size_t k, std::byte *f, size_t data_len, uint32_t psum, GsoFrame &fr)
{
	constexpr size_t check_off = Tcp ? 16 : 6;
	std::byte *ip = f + c.l3_at, *l4 = f + c.l4_at;
	// every term but psum is under 2^16 (l4_total too: parse and fast_plan
	// require the IP length fields to match the input, jumbograms refused):
	// the sums stay 32-bit
	const uint32_t l4_total = static_cast<uint32_t>(c.l4_over + data_len);
	uint32_t l4s = c.l4_base + l4_total;	// the base and what the left-out fields add back
	if constexpr (V6) {
		st16(ip + 4, static_cast<uint16_t>(c.l3_over - 40 + data_len));
	} else {
		const uint16_t tot = static_cast<uint16_t>(c.l3_over + data_len);
		uint32_t is = c.ip_base + tot;
		st16(ip + 2, tot);
		if (c.bump_id) {
			const uint16_t id = static_cast<uint16_t>(c.id0 + k);
			st16(ip + 4, id);
			is += id;
		}
		st16(ip + 10, csum_finish(is));
	}
	if constexpr (Tcp) {
		const uint32_t seq = static_cast<uint32_t>(c.seq0 + k * c.step);
		st32(l4 + 4, seq);
		uint8_t fl = c.flags;
		if (k + 1 != c.nframes)
			fl &= static_cast<uint8_t>(~(kTcpFin | kTcpPsh));
		if (k)
			fl &= static_cast<uint8_t>(~kTcpCwr);
		l4[13] = std::byte{fl};
		l4s += (seq >> 16) + (seq & 0xffff) + fl;
	} else {
		st16(l4 + 4, static_cast<uint16_t>(l4_total));
		l4s += l4_total;
	}
	if (c.partial) {
		st16(l4 + check_off, csum_fold16(c.ph_base + l4_total));
		fr.csum_partial = true;
		fr.csum_start = static_cast<uint16_t>(l4 - fr.data);
		fr.csum_offset = static_cast<uint16_t>(check_off);
	} else {
		const uint16_t cs = csum_finish(csum_add32(l4s, psum));
		st16(l4 + check_off, !Tcp && cs == 0 ? 0xffff : cs);
		fr.csum_partial = false;
	}
}

// fn.template operator()<Tcp, V6>() for a protocol and IP version known
// only at run time: the one place that turns them into template arguments.
template <typename F>
[[gnu::always_inline]] inline decltype(auto) by_proto(bool tcp, bool v6, F &&fn)
{
	if (tcp)
		return v6 ? fn.template operator()<true, true>() : fn.template operator()<true, false>();
	return v6 ? fn.template operator()<false, true>() : fn.template operator()<false, false>();
}

// fn.template operator()<Tcp, V6>() for a TSO/USO type, -1 for the others.
template <typename F>
int by_type(GsoType t, F &&fn)
{
	switch (t) {
	case GsoType::tso4:
	case GsoType::tso6:
	case GsoType::uso4:
	case GsoType::uso6:
		return by_proto(t == GsoType::tso4 || t == GsoType::tso6, t == GsoType::tso6 || t == GsoType::uso6, fn);
	default:
		return -1;
	}
}

// What a plan needs of the frame loop. The loop is compiled once per kind,
// so that the compiler drops the branches a kind never takes from it.
enum class Kind {
	plain,		// TSO/USO (or a single frame), no Geneve: the common case
	tunnel,		// the same inside Geneve
	fragments,	// UFO fragments, no Geneve
	general,	// anything: UFO fragments inside Geneve
};

Kind kind_of(const Plan &pl, const GsoRequest &req)
{
	if (pl.fragment)
		return req.geneve ? Kind::general : Kind::fragments;
	return req.geneve ? Kind::tunnel : Kind::plain;
}

// Geneve without an outer checksum: the outer headers are a template with
// only their lengths, and the outer IPv4 ID and checksum (from a sum taken
// once), patched per frame.
struct OuterTmpl {
	size_t ip = 0, udp = 0;		// offsets of the outer IP and UDP headers
	size_t udp_over = 0;		// UDP + Geneve header bytes before the inner frame
	uint32_t ip_base = 0;		// outer IPv4 header sum, lengths, ID and checksum left out
	uint32_t hash = 0;		// outer IPv4 ID of frame 0
	bool v6 = false;
	// the template's lengths already set for an inner frame of full_inner
	// bytes (preset_outer; 0: not set), ip_full = ip_base + that IPv4 length
	size_t full_inner = 0;
	uint32_t ip_full = 0;
};

// Writes the template into buf (pl.outer_len bytes).
OuterTmpl outer_template(const Plan &pl, const GsoRequest &req, uint32_t hash, std::byte *buf)
{
	OuterTmpl o;
	o.v6 = req.geneve->ipv6;
	o.ip = kMacLen + req.ntags * kVlanLen + 2;
	o.udp = o.ip + (o.v6 ? 40 : 20);
	o.udp_over = 8 + kGeneveHdr + pl.geneve_opt;
	o.hash = hash;
	write_geneve(pl, req, buf, 0, 0, 0, hash);
	std::byte *ip = buf + o.ip;
	st16(buf + o.udp + 4, 0);
	if (o.v6) {
		st16(ip + 4, 0);
	} else {
		st16(ip + 2, 0);
		st16(ip + 4, 0);
		st16(ip + 10, 0);
		o.ip_base = csum_hdr(ip, 20);
	}
	return o;
}

// The outer UDP and IP length fields for an inner frame of inner_len bytes,
// in a copy of the template; returns the IPv4 total length (IPv6: 0).
[[gnu::always_inline]] inline uint16_t outer_lengths(const OuterTmpl &o, std::byte *frame, size_t inner_len)
{
	const uint16_t udp_len = static_cast<uint16_t>(o.udp_over + inner_len);
	st16(frame + o.udp + 4, udp_len);
	if (o.v6) {
		st16(frame + o.ip + 4, udp_len);
		return 0;
	}
	const uint16_t tot = static_cast<uint16_t>(20 + udp_len);
	st16(frame + o.ip + 2, tot);
	return tot;
}

// The lengths (and outer IPv4 ID and checksum) of frame k, whose inner frame
// is inner_len bytes, in its copy of the template.
[[gnu::always_inline]] inline void patch_outer(const OuterTmpl &o, std::byte *frame, size_t inner_len, size_t k)
{
	// a full segment's lengths came with the template (preset_outer)
	uint32_t ip_sum = o.ip_full;
	if (inner_len != o.full_inner)
		ip_sum = csum_add32(o.ip_base, outer_lengths(o, frame, inner_len));
	if (!o.v6) {
		std::byte *ip = frame + o.ip;
		const uint16_t id = static_cast<uint16_t>(o.hash + k);
		st16(ip + 4, id);
		st16(ip + 10, csum_finish(uint64_t{ip_sum} + id));
	}
}

// Sets the template's lengths for an inner frame of inner_len bytes, the
// size of every segment but maybe the last: those frames patch only the
// outer IPv4 ID and checksum.
void preset_outer(OuterTmpl &o, std::byte *buf, size_t inner_len)
{
	const uint16_t tot = outer_lengths(o, buf, inner_len);
	if (!o.v6)
		o.ip_full = csum_add32(o.ip_base, tot);
	o.full_inner = inner_len;
}

// Copies the input's [off, off+len) to dst, returning its sum when
// with_sum: Input::copy, or with Avx2 the AVX2 kernel called directly, inline
// where GCC flattens it in (only in the target("avx2") callers below, whole
// the input in one span).
template <bool Avx2>
[[gnu::always_inline]] inline uint32_t copy_payload(const Input &in, const std::byte *whole, std::byte *dst, size_t off,
						    size_t len, bool with_sum)
{
#if defined(__x86_64__)
	if constexpr (Avx2) {
		if (!with_sum) {
			std::memcpy(dst, whole + off, len);
			return 0;
		}
		return csum_detail::avx2_sum<true>(reinterpret_cast<uint8_t *>(dst),
						   reinterpret_cast<const uint8_t *>(whole + off), len, 0);
	}
#endif
	(void)whole;
	return in.copy(dst, off, len, with_sum);
}

// TSO/USO, the common case: per frame the headers copied from the input (or,
// inside Geneve without an outer checksum, from the outer and inner
// templates, Outer, which takes them from pl), the payload copied with its
// sum, the fields patched. Avx2: see copy_payload. Tags: the number of tags
// inserted where known at compile time (none under Geneve: they go outside),
// -1 where not (see write_hdrs).
template <bool Tcp, bool V6, bool Outer, bool Avx2 = false, int Tags = Outer ? 0 : -1>
int seg_frames(const Input &in, const GsoRequest &req, const Shape &s, const Plan *pl, std::span<GsoFrame> out) noexcept
{
	const Seg seg = make_seg(s, Tcp, V6, req);
	const L2Prefix l2 = l2_prefix(s.hdr, req);
	// the payload sum is needed unless the NIC does the L4 checksum
	const bool want_sum = !seg.partial;
	const size_t payload_off = s.payload_off;
	const size_t outer_len = Outer ? pl->outer_len : 0;
	std::array<std::byte, Outer ? kOuterMax + kMaxHdr : 1> hdrs;
	OuterTmpl outer;
	if constexpr (Outer) {
		outer = outer_template(*pl, req, flow_hash(pl->p), hdrs.data());
		preset_outer(outer, hdrs.data(), seg.hdr_len + seg.step);
		write_hdrs<Tags>(l2, hdrs.data() + outer_len, seg.hdr_len);
	}
	const size_t hdr_len = outer_len + seg.hdr_len;
	const std::byte *const whole = Avx2 ? in.contiguous(in.size()) : nullptr;
	for (size_t k = 0; k < seg.nframes; k++) {
		GsoFrame &fr = out[k];
		std::byte *f = fr.data;
		if constexpr (Outer)
			copy_hdr(f, hdrs.data(), hdr_len);
		else
			write_hdrs<Tags>(l2, f, hdr_len);
		const size_t data_len = seg_data(k, seg.nframes, seg.step, seg.payload_len);
		const uint32_t psum =
			copy_payload<Avx2>(in, whole, f + hdr_len, payload_off + k * seg.step, data_len, want_sum);
		patch_seg<Tcp, V6>(seg, k, f + outer_len, data_len, psum, fr);
		if constexpr (Outer)
			patch_outer(outer, f, seg.hdr_len + data_len, k);
		fr.len = static_cast<uint32_t>(hdr_len + data_len);
	}
	return static_cast<int>(seg.nframes);
}

#if defined(__x86_64__)
// Whether the target("avx2") versions below may run: AVX2 is the checksum
// implementation and the input is one span.
bool avx2_path(const Input &in)
{
	return csum_impl() == CsumImpl::avx2 && in.contiguous(in.size());
}

// seg_frames for the plan's protocol and IP version, compiled for AVX2 (see
// fast_segment_avx2; GCC 12 flattens it but keeps the kernel out of line
// here: a direct call, not through csum_copy_fn).
template <bool Outer>
[[gnu::noinline, gnu::flatten]] __attribute__((target("avx2"))) int
seg_frames_avx2(const Input &in, const GsoRequest &req, const Plan &pl, std::span<GsoFrame> out) noexcept
{
	const Shape s = shape_of(pl);
	return by_proto(pl.p.l4_proto == kProtoTcp, pl.p.ipv6, [&]<bool Tcp, bool V6>() {
		return seg_frames<Tcp, V6, Outer, true>(in, req, s, &pl, out);
	});
}
#endif

// seg_frames for the plan's protocol and IP version.
template <bool Outer>
int seg_frames(const Input &in, const GsoRequest &req, const Plan &pl, std::span<GsoFrame> out) noexcept
{
#if defined(__x86_64__)
	if (avx2_path(in))
		return seg_frames_avx2<Outer>(in, req, pl, out);
#endif
	const Shape s = shape_of(pl);
	return by_proto(pl.p.l4_proto == kProtoTcp, pl.p.ipv6, [&]<bool Tcp, bool V6>() {
		return seg_frames<Tcp, V6, Outer>(in, req, s, &pl, out);
	});
}

// The common shape (fast_plan) segmented without a plan: -1 when the input
// is not of that shape.
template <bool Tcp, bool V6>
[[gnu::noinline]] int fast_segment(const Input &in, const GsoRequest &req, std::span<GsoFrame> out) noexcept
{
	Shape s;
	if (!fast_plan<Tcp, V6>(in, req, out, s))
		return -1;
	return seg_frames<Tcp, V6, false>(in, req, s, nullptr, out);
}

#if defined(__x86_64__)
// fast_segment with the AVX2 copy+checksum inlined into the frame loop
// (flatten: seg_frames inlined here, then the kernel into it): no call, no
// spills around one, the vector constants kept across frames.
// Compiled apart for each number of inserted tags (Tags): the untagged loop
// holds no tagged prefix, the tagged ones test nothing for it.
template <bool Tcp, bool V6, int Tags>
[[gnu::noinline, gnu::flatten]] __attribute__((target("avx2"))) int
fast_segment_avx2(const Input &in, const GsoRequest &req, std::span<GsoFrame> out) noexcept
{
	Shape s;
	if (!fast_plan<Tcp, V6>(in, req, out, s))
		return -1;
	return seg_frames<Tcp, V6, false, true, Tags>(in, req, s, nullptr, out);
}

template <bool Tcp, bool V6>
int fast_segment_avx2(const Input &in, const GsoRequest &req, std::span<GsoFrame> out) noexcept
{
	// more than two tags: fast_plan refuses them, the general code says why
	return req.ntags == 0   ? fast_segment_avx2<Tcp, V6, 0>(in, req, out)
	       : req.ntags == 1 ? fast_segment_avx2<Tcp, V6, 1>(in, req, out)
				: fast_segment_avx2<Tcp, V6, 2>(in, req, out);
}
#endif

int fast_segment(const Input &in, const GsoRequest &req, std::span<GsoFrame> out) noexcept
{
#if defined(__x86_64__)
	if (csum_impl() == CsumImpl::avx2)
		return by_type(req.type, [&]<bool Tcp, bool V6>() { return fast_segment_avx2<Tcp, V6>(in, req, out); });
#endif
	return by_type(req.type, [&]<bool Tcp, bool V6>() { return fast_segment<Tcp, V6>(in, req, out); });
}

// Writes the frames of a plan of kind K (tunnel, fragments or general).
// Avx2: see copy_payload.
template <Kind K, bool Avx2 = false>
int write_frames(const Input &in, const GsoRequest &req, const Plan &pl, std::span<GsoFrame> out) noexcept
{
	const std::byte *const whole = Avx2 ? in.contiguous(in.size()) : nullptr;
	static_assert(K != Kind::plain, "seg_frames writes those");
	const bool fragment = K != Kind::tunnel && pl.fragment;
	const GeneveEncap *const geneve = K == Kind::fragments ? nullptr : req.geneve;
	const Parsed &p = pl.p;
	const bool partial = req.csum == CsumMode::tx_metadata && !fragment;
	const bool tcp = p.l4_proto == kProtoTcp;
	const size_t check_off = tcp ? 16 : 6;
	const uint32_t hash = geneve || (fragment && p.ipv6) ? flow_hash(p) : 0;
	// the payload sum is needed unless the NIC does the L4 checksum and no
	// outer checksum depends on it
	const bool want_sum = !partial || (geneve && geneve->udp_csum);
	// the plan's numbers as locals: frame bytes are std::byte, which may
	// alias anything, so a field read through a reference is read again
	// after every store to a frame
	const size_t nframes = pl.nframes, step = pl.step, outer_len = pl.outer_len;
	const size_t l3_len = p.l3_len, payload_off = p.payload_off, payload_len = p.payload_len;
	const bool ipv6 = p.ipv6;

	// UFO: the UDP checksum covers every fragment; patched into the first at the end
	uint32_t ufo_sum = 0;
	std::byte *ufo_udp = nullptr;

	// Templates: the inner headers (tags inserted) of TSO/USO frames, their
	// fields patched by patch_seg from the sums of make_seg, or of UFO
	// fragments after the first; in front of them the outer (Geneve)
	// headers, so that a frame's headers are one copy.
	std::array<std::byte, kOuterMax + kMaxHdr + 2 * kVlanLen> hdrs;
	std::byte *const otmpl = hdrs.data();
	std::byte *const tmpl = hdrs.data() + outer_len;
	// Geneve without an outer checksum: the outer headers are a template too
	const bool outer_tmpl = geneve && !geneve->udp_csum;
	const OuterTmpl outer = outer_tmpl ? outer_template(pl, req, hash, otmpl) : OuterTmpl{};
	// UFO: fragments after the first share L2 + IP (+ fragment header); only
	// the length and offset differ
	size_t f_l3 = 0, f_len = 0;
	uint32_t f_base = 0;
	if (fragment && nframes > 1) {
		f_l3 = write_l2(pl, req, tmpl);
		std::byte *ip = tmpl + f_l3;
		size_t ihl = ip_hdr_len(pl, 1);
		f_len = f_l3 + ihl;
		if (!ipv6) {
			std::memcpy(ip, p.hdr + p.l3_off, 20);
			std::memcpy(ip + 20, pl.v4_copied_opts.data(), pl.v4_copied_len);
			ip[0] = std::byte(static_cast<uint8_t>(0x40 | ihl / 4));
			st16(ip + 2, 0);
			st16(ip + 6, 0);
			st16(ip + 10, 0);
			f_base = csum_hdr(ip, ihl);
		} else {
			size_t unfrag = p.ip6_unfrag_len;
			std::memcpy(ip, p.hdr + p.l3_off, unfrag);
			std::byte orig_next = p.hdr[p.ip6_unfrag_next_off];
			ip[p.ip6_unfrag_next_off - p.l3_off] = std::byte{kProtoFrag};
			st16(ip + 4, 0);
			std::byte *fh = ip + unfrag;
			fh[0] = orig_next;
			fh[1] = std::byte{0};
			st16(fh + 2, 0);
			st32(fh + 4, req.ipv6_frag_id ? req.ipv6_frag_id : (hash | 1));
		}
	}
	const Seg seg = fragment ? Seg{} : make_seg(shape_of(pl), tcp, ipv6, req);
	const size_t tmpl_len = seg.hdr_len, t_l3 = seg.l3_at;
	if (!fragment)
		write_hdrs(l2_prefix(p.hdr, req), tmpl, tmpl_len);

	for (size_t k = 0; k < nframes; k++) {
		GsoFrame &fr = out[k];
		size_t hdr_len, data_len;
		if (!fragment) {
			hdr_len = tmpl_len;
			data_len = seg_data(k, nframes, step, payload_len);
		} else {
			frame_shape(pl, k, hdr_len, data_len, true);
		}
		std::byte *f = fr.data + outer_len;
		// the frame's inner header template (TSO/USO, or a UFO fragment after
		// the first), right behind the outer one when that is a template too
		const size_t tlen = !fragment ? tmpl_len : k ? f_len : 0;
		if (outer_tmpl) {
			// both templates in one copy, so the frame is written front to back
			copy_hdr(fr.data, otmpl, outer_len + tlen);
			patch_outer(outer, fr.data, hdr_len + data_len, k);
		} else if (tlen) {
			copy_hdr(f, tmpl, tlen);
		}
		const size_t h = !fragment ? t_l3 : k ? f_l3 : write_l2(pl, req, f);
		std::byte *ip = f + h;
		const bool last = k + 1 == nframes;
		uint32_t psum = 0;

		if (!fragment) {
			psum = copy_payload<Avx2>(in, whole, f + tmpl_len, payload_off + k * step, data_len, want_sum);
			by_proto(tcp, ipv6, [&]<bool Tcp, bool V6>() { patch_seg<Tcp, V6>(seg, k, f, data_len, psum, fr); });
		} else {
			// RFC 791 / RFC 8200 fragment k of the UDP datagram
			size_t doff = k * step; // offset in the fragmentable part
			size_t ihl = ip_hdr_len(pl, k);
			std::byte *data = ip + ihl;
			size_t pos = 0; // bytes of this fragment written
			if (k && !ipv6) {
				uint16_t tot = static_cast<uint16_t>(ihl + data_len);
				uint16_t fo = static_cast<uint16_t>(doff / 8 | (last ? 0 : kIpMf));
				st16(ip + 2, tot);
				st16(ip + 6, fo);
				st16(ip + 10, csum_finish(uint64_t{f_base} + tot + fo));
			} else if (k) {
				st16(ip + 4, static_cast<uint16_t>(p.ip6_unfrag_len - 40 + 8 + data_len));
				st16(ip + p.ip6_unfrag_len + 2, static_cast<uint16_t>(doff | (last ? 0 : 1)));
			} else if (!ipv6) {
				std::memcpy(ip, p.hdr + p.l3_off, l3_len);
				st16(ip + 2, static_cast<uint16_t>(ihl + data_len));
				st16(ip + 6, static_cast<uint16_t>(doff / 8 | (last ? 0 : kIpMf)));
				ipv4_fix_csum(ip, ihl);
			} else {
				size_t unfrag = p.ip6_unfrag_len;
				std::memcpy(ip, p.hdr + p.l3_off, unfrag);
				size_t next_rel = p.ip6_unfrag_next_off - p.l3_off;
				std::byte orig_next = p.hdr[p.ip6_unfrag_next_off];
				ip[next_rel] = std::byte{kProtoFrag};
				st16(ip + 4, static_cast<uint16_t>(unfrag - 40 + 8 + data_len));
				std::byte *fh = ip + unfrag;
				fh[0] = orig_next;
				fh[1] = std::byte{0};
				st16(fh + 2, static_cast<uint16_t>(doff | (last ? 0 : 1)));
				st32(fh + 4, req.ipv6_frag_id ? req.ipv6_frag_id : (hash | 1));
			}
			// fragmentable part: [ext headers (UFO6)] [UDP header] [payload]
			size_t udp_at = pl.frag_prefix;
			size_t unfrag_len = ipv6 ? p.ip6_unfrag_len : l3_len;
			while (pos < data_len) {
				size_t at = doff + pos;
				if (at < udp_at + 8) {
					// headers: the first fragment holds them whole (checked in the plan)
					size_t n = udp_at + 8 - at;
					std::memcpy(data + pos, p.hdr + p.l3_off + unfrag_len + at, n);
					if (at <= udp_at) {
						std::byte *udp = data + pos + (udp_at - at);
						st16(udp + 4, static_cast<uint16_t>(8 + payload_len));
						st16(udp + 6, 0);
						ufo_udp = udp;
						ufo_sum = csum_add(ufo_sum, csum_hdr(udp, 8));
					}
					pos += n;
					continue;
				}
				size_t poff = at - udp_at - 8; // payload offset
				size_t n = data_len - pos;
				uint32_t s = copy_payload<Avx2>(in, whole, data + pos, payload_off + poff, n, true);
				ufo_sum = csum_add(ufo_sum, s, 8 + poff);
				psum = csum_add(psum, s, pos);
				pos += n;
			}
		}

		size_t inner_len = hdr_len + data_len;
		if (geneve) {
			uint32_t inner_sum = 0;
			if (geneve->udp_csum) {
				size_t payload_at = hdr_len; // the frame's data follows its headers
				uint32_t hs = csum_partial(f, payload_at);
				if (partial) {
					// local checksum offload: once the NIC fills the inner L4
					// checksum, that region sums to ~pseudo
					size_t l4_at = pl.l2_out + l3_len;
					uint16_t ps = ld16(f + l4_at + check_off);
					hs = csum_partial(f, l4_at);
					inner_sum = csum_add(hs, static_cast<uint16_t>(~ps), l4_at);
				} else {
					inner_sum = csum_add(hs, psum, payload_at);
				}
			}
			if (!outer_tmpl)
				write_geneve(pl, req, fr.data, inner_len, inner_sum, k, hash);
		}
		fr.len = static_cast<uint32_t>(outer_len + inner_len);
	}

	if (fragment && ufo_udp) {
		const std::byte *ip0 = out[0].data + outer_len + pl.l2_out;
		uint32_t s = csum_add(pseudo_sum(ip0, ipv6, kProtoUdp, 8 + payload_len), ufo_sum);
		uint16_t c = csum_finish(s);
		st16(ufo_udp + 6, c ? c : 0xffff);
		// with Geneve and an outer checksum, frame 0's outer sum covered a zero here
		if (geneve && geneve->udp_csum) {
			GsoFrame &f0 = out[0];
			size_t hdr_len, data_len;
			frame_shape(pl, 0, hdr_len, data_len, fragment);
			std::byte *f = f0.data + outer_len;
			uint32_t inner_sum = csum_partial(f, hdr_len + data_len);
			write_geneve(pl, req, f0.data, hdr_len + data_len, inner_sum, 0, hash);
		}
	}
	return static_cast<int>(nframes);
}

#if defined(__x86_64__)
// write_frames compiled for AVX2 (see seg_frames_avx2).
template <Kind K>
[[gnu::noinline, gnu::flatten]] __attribute__((target("avx2"))) int
write_frames_avx2(const Input &in, const GsoRequest &req, const Plan &pl, std::span<GsoFrame> out) noexcept
{
	return write_frames<K, true>(in, req, pl, out);
}
#endif

// write_frames, its AVX2 version where avx2_path allows.
template <Kind K>
int frames_of(const Input &in, const GsoRequest &req, const Plan &pl, std::span<GsoFrame> out) noexcept
{
#if defined(__x86_64__)
	if (avx2_path(in))
		return write_frames_avx2<K>(in, req, pl, out);
#endif
	return write_frames<K>(in, req, pl, out);
}

} // namespace

int gso_count(std::span<const std::span<const std::byte>> input, const GsoRequest &req, GsoError *why) noexcept
{
	Input in(input);
	Plan pl;
	GsoError e = make_plan(in, req, pl, SIZE_MAX, {});
	if (why)
		*why = e;
	return e == GsoError::ok ? static_cast<int>(pl.nframes) : errno_of(e);
}

int gso_segment(std::span<const std::span<const std::byte>> input, const GsoRequest &req, std::span<GsoFrame> out,
		GsoError *why) noexcept
{
	Input in(input);
	if (const int n = fast_segment(in, req, out); n >= 0) {
		if (why)
			*why = GsoError::ok;
		return n;
	}
	Plan pl;
	GsoError e = make_plan(in, req, pl, out.size(), out);
	if (why)
		*why = e;
	if (e != GsoError::ok)
		return errno_of(e);
	switch (kind_of(pl, req)) {
	case Kind::plain:
		return seg_frames<false>(in, req, pl, out);
	case Kind::tunnel:
		// an outer checksum covers the inner frame: the general loop does that
		if (req.geneve->udp_csum)
			return frames_of<Kind::tunnel>(in, req, pl, out);
		return seg_frames<true>(in, req, pl, out);
	case Kind::fragments:
		return frames_of<Kind::fragments>(in, req, pl, out);
	case Kind::general:
		break;
	}
	return frames_of<Kind::general>(in, req, pl, out);
}

namespace gso_detail {

std::optional<std::string> plans_differ(std::span<const std::span<const std::byte>> input, const GsoRequest &req,
					std::span<GsoFrame> out)
{
	Input in(input);
	Shape a;
	bool tcp = false, v6 = false;	// what the fast path takes from the request's type
	if (by_type(req.type, [&]<bool Tcp, bool V6>() {
		    tcp = Tcp;
		    v6 = V6;
		    return int{fast_plan<Tcp, V6>(in, req, out, a)};
	    }) <= 0)
		return std::nullopt;
	Plan pl;
	if (make_plan(in, req, pl, out.size(), out) != GsoError::ok)
		return "fast_plan took an input make_plan refuses";
	const Shape b = shape_of(pl);
	std::string d;
	auto cmp = [&d](const char *what, size_t u, size_t v) {
		if (u != v)
			d += std::string(what) + " " + std::to_string(u) + " != " + std::to_string(v) + "; ";
	};
	cmp("hdr", a.hdr == b.hdr || std::memcmp(a.hdr, b.hdr, a.payload_off) == 0, 1);
	cmp("l3_off", a.l3_off, b.l3_off);
	cmp("l3_len", a.l3_len, b.l3_len);
	cmp("l4_off", a.l4_off, b.l4_off);
	cmp("l4_len", a.l4_len, b.l4_len);
	cmp("payload_off", a.payload_off, b.payload_off);
	cmp("payload_len", a.payload_len, b.payload_len);
	cmp("l2_out", a.l2_out, b.l2_out);
	cmp("nframes", a.nframes, b.nframes);
	cmp("step", a.step, b.step);
	// the protocol the fast path took from the type, and the plain kind
	cmp("tcp", tcp, pl.p.l4_proto == kProtoTcp);
	cmp("ipv6", v6, pl.p.ipv6);
	cmp("kind", static_cast<size_t>(kind_of(pl, req)), static_cast<size_t>(Kind::plain));
	return d;
}

} // namespace gso_detail

} // namespace xoffload
