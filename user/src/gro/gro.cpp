// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The GRO engine: parses each frame once, finds its held flow by a hash of
// its addresses and ports, applies the kernel's merge rules to the headers,
// then copies the payload straight behind the flow's bytes while summing it
// (the fused copy+checksum of xo_packet), and commits the merge only when
// every checksum verifies. The next segment of the flow the last frame
// joined skips all that for a masked compare of its headers against the
// flow's first frame (fast_merge), with the same outcome. A super-packet's length fields and checksums are
// written once, when it is emitted. Zero-copy: the same steps, the payload
// summed where it lies and referenced (zc_piece) instead of copied.
// Fragments: gro_frag.cpp.
#include <algorithm>
#include <cerrno>
#include <new>

#include "../packet/csum_kernel.hpp"
#include "gro_internal.hpp"

namespace xoffload {

using namespace gro_detail;

namespace gro_detail {

namespace {

bool is_vlan(uint16_t t)
{
	return t == 0x8100 || t == 0x88A8;
}

// Where a length or offset check failed: beyond what the frame holds
// (malformed), or beyond the header bytes we gathered (other).
enum class Need : uint8_t { ok, malformed, too_long };

inline Need need(const Parsed &p, size_t at, size_t limit)
{
	if (at > limit)
		return Need::malformed;
	return at > p.avail ? Need::too_long : Need::ok;
}

inline Cls fail(Parsed &p, Need n)
{
	if (n == Need::malformed)
		return Cls::malformed;
	p.pass = GroPass::kind_off;
	return Cls::other;
}

constexpr uint8_t kHopByHop = 0, kRouting = 43, kDestOpts = 60;

// The IP header at off (bytes up to limit belong to it). outermost: its
// total length sets p.end (the rest is padding); else it must end at limit.
Cls parse_ip(Parsed &p, Ip &ip, uint16_t type, size_t off, size_t limit, bool outermost)
{
	const std::byte *h = p.h;
	Need n;
	ip.off = static_cast<uint16_t>(off);
	size_t pkt_end;
	if (type == kEthIpv4) {
		if ((n = need(p, off + 20, limit)) != Need::ok)
			return fail(p, n);
		uint8_t vihl = u8(h + off);
		size_t ihl = size_t{vihl & 0x0fu} * 4;
		if (vihl >> 4 != 4 || ihl < 20)
			return Cls::malformed;
		if ((n = need(p, off + ihl, limit)) != Need::ok)
			return fail(p, n);
		size_t tot = ld16(h + off + 2);
		if (tot < ihl || off + tot > limit || (!outermost && off + tot != limit))
			return Cls::malformed;
		pkt_end = off + tot;
		ip.len = static_cast<uint16_t>(ihl);
		ip.opts = ihl > 20;
		ip.v6 = false;
		p.ip_parsed = true;
		if (outermost)
			p.end = static_cast<uint32_t>(pkt_end);
		uint16_t fo = ld16(h + off + 6);
		p.proto = u8(h + off + 9);
		if (fo & 0x3fff) {
			p.mf = fo & kIpMf;
			p.foff = uint32_t{fo & 0x1fffu} * 8;
			p.fid = ld16(h + off + 4);
			p.fdata = static_cast<uint16_t>(off + ihl);
			return Cls::frag;
		}
		if (fo & 0x8000) {
			// the reserved bit: inet_gro_receive flushes on any bit but DF
			p.pass = GroPass::flags;
			return Cls::other;
		}
		p.l4 = static_cast<uint16_t>(off + ihl);
	} else {
		if ((n = need(p, off + 40, limit)) != Need::ok)
			return fail(p, n);
		if (u8(h + off) >> 4 != 6)
			return Cls::malformed;
		size_t plen = ld16(h + off + 4);
		if (off + 40 + plen > limit || (!outermost && off + 40 + plen != limit))
			return Cls::malformed;
		ip.v6 = true;
		p.ip_parsed = true;
		pkt_end = off + 40 + plen;
		if (outermost)
			p.end = static_cast<uint32_t>(pkt_end);
		if (plen == 0) {
			p.pass = GroPass::no_payload;	// or a jumbogram: nothing we merge
			return Cls::other;
		}
		uint8_t next = u8(h + off + 6);
		size_t at = off + 40, next_at = off + 6;
		for (unsigned k = 0; next == kHopByHop || next == kRouting || next == kDestOpts; k++) {
			if (k == 8) {
				p.pass = GroPass::ipv6_ext;
				return Cls::other;
			}
			if ((n = need(p, at + 8, pkt_end)) != Need::ok)
				return fail(p, n);
			size_t hl = (size_t{u8(h + at + 1)} + 1) * 8;
			if ((n = need(p, at + hl, pkt_end)) != Need::ok)
				return fail(p, n);
			next_at = at;
			next = u8(h + at);
			at += hl;
		}
		ip.len = static_cast<uint16_t>(at - off);
		ip.opts = false;
		if (next == kProtoFrag) {
			if ((n = need(p, at + 8, pkt_end)) != Need::ok)
				return fail(p, n);
			uint16_t fo = ld16(h + at + 2);
			p.frag_at = static_cast<uint16_t>(at);
			p.frag_next_at = static_cast<uint16_t>(next_at);
			p.frag_next = u8(h + at);
			p.proto = p.frag_next;
			p.foff = fo & ~7u;
			p.mf = fo & 1;
			p.fid = ld32(h + at + 4);
			p.fdata = static_cast<uint16_t>(at + 8);
			return Cls::frag;
		}
		p.proto = next;
		p.l4 = static_cast<uint16_t>(at);
	}
	if (p.proto == kProtoTcp) {
		if (size_t{p.l4} + 20 > pkt_end)
			return Cls::malformed;
		if ((n = need(p, p.l4 + 20, pkt_end)) != Need::ok)
			return fail(p, n);
		size_t doff = size_t{static_cast<uint8_t>(u8(h + p.l4 + 12) >> 4)} * 4;
		if (doff < 20 || p.l4 + doff > pkt_end)
			return Cls::malformed;
		if ((n = need(p, p.l4 + doff, pkt_end)) != Need::ok)
			return fail(p, n);
		p.l4_len = static_cast<uint16_t>(doff);
	} else if (p.proto == kProtoUdp) {
		if (size_t{p.l4} + 8 > pkt_end)
			return Cls::malformed;
		if ((n = need(p, p.l4 + 8, pkt_end)) != Need::ok)
			return fail(p, n);
		if (ld16(h + p.l4 + 4) != pkt_end - p.l4)
			return Cls::malformed;
		p.l4_len = 8;
	} else {
		p.pass = GroPass::kind_off;
		return Cls::other;
	}
	p.l4_parsed = true;
	p.pay = static_cast<uint16_t>(p.l4 + p.l4_len);
	return Cls::l4;
}

// The L2 header at off: MACs, up to two tags, the type. Sets *l3.
bool parse_l2(const Parsed &p, size_t off, size_t limit, uint16_t *type, size_t *l3)
{
	size_t at = off + 12;
	if (at + 2 > limit || at + 2 > p.avail)
		return false;
	uint16_t t = ld16(p.h + at);
	for (unsigned k = 0; is_vlan(t); k++) {
		if (k == 2 || at + 6 > limit || at + 6 > p.avail)
			return false;
		at += 4;
		t = ld16(p.h + at);
	}
	*type = t;
	*l3 = at + 2;
	return true;
}

} // namespace

Cls parse(const Src &s, Parsed &p, std::byte *scratch, uint16_t geneve_port) noexcept
{
	p.len = s.len;
	p.end = s.len;
	size_t first = s.f->data.size();
	if (s.one || first >= kMaxHdr) {
		p.h = s.f->data.data();
		p.avail = static_cast<uint32_t>(first);
	} else {
		size_t grab = s.len < kMaxHdr ? s.len : kMaxHdr;
		s.copy(scratch, 0, grab);
		p.h = scratch;
		p.avail = static_cast<uint32_t>(grab);
	}
	if (p.len < 14)
		return Cls::malformed;
	uint16_t type;
	size_t l3;
	if (!parse_l2(p, 0, p.len, &type, &l3)) {
		if (p.avail >= 14 && p.len >= 22) {
			p.pass = GroPass::kind_off;	// three tags or more
			return Cls::other;
		}
		return Cls::malformed;
	}
	p.l3 = static_cast<uint16_t>(l3);
	if (type != kEthIpv4 && type != kEthIpv6) {
		p.pass = GroPass::kind_off;
		return Cls::other;
	}
	Cls c = parse_ip(p, p.ip, type, l3, p.len, true);
	if (c != Cls::l4 || p.proto != kProtoUdp || ld16(p.h + p.l4 + 2) != geneve_port)
		return c;

	// Geneve (RFC 8926): what geneve_gro_receive takes: version 0, no OAM, Ethernet inside
	// (a frame refused here is a plain UDP datagram to the port: verified as one, never merged)
	const size_t gen = p.l4 + 8, end = p.end;
	if (gen + 8 > end || gen + 8 > p.avail) {
		p.pass = GroPass::geneve_hdr;
		return Cls::other;
	}
	const std::byte *g = p.h + gen;
	size_t glen = 8 + size_t{u8(g) & 0x3fu} * 4;
	if (u8(g) >> 6 || (u8(g + 1) & 0x80) || ld16(g + 2) != kEthTeb || gen + glen + 14 > end) {
		p.pass = GroPass::geneve_hdr;
		return Cls::other;
	}
	if (!parse_l2(p, gen + glen, end, &type, &l3)) {
		p.pass = GroPass::geneve_hdr;
		return Cls::other;
	}
	if (type != kEthIpv4 && type != kEthIpv6) {
		p.pass = GroPass::kind_off;
		return Cls::other;
	}
	p.encap = true;
	p.o = p.ip;
	p.o_l4 = p.l4;
	p.gen = static_cast<uint16_t>(gen);
	p.gen_len = static_cast<uint16_t>(glen);
	p.in_l2 = static_cast<uint16_t>(gen + glen);
	p.ip = Ip{};
	p.ip_parsed = p.l4_parsed = false;
	p.l4 = p.l4_len = p.pay = 0;
	p.proto = 0;
	return parse_ip(p, p.ip, type, l3, end, false);
}

} // namespace gro_detail

namespace {

enum class Bad : uint8_t { none, ipv4, l4, outer_udp, inner_ipv4, inner_l4 };

GroVerdict verdict_of(Bad b)
{
	switch (b) {
	case Bad::ipv4: return GroVerdict::bad_ipv4_csum;
	case Bad::l4: return GroVerdict::bad_l4_csum;
	case Bad::outer_udp: return GroVerdict::bad_outer_udp_csum;
	case Bad::inner_ipv4: return GroVerdict::bad_inner_ipv4_csum;
	case Bad::inner_l4: return GroVerdict::bad_inner_l4_csum;
	case Bad::none: break;
	}
	return GroVerdict::passed;
}

GroCsumError error_of(GroVerdict v)
{
	switch (v) {
	case GroVerdict::bad_ipv4_csum: return GroCsumError::ipv4_hdr;
	case GroVerdict::bad_l4_csum: return GroCsumError::l4;
	case GroVerdict::bad_outer_udp_csum: return GroCsumError::outer_udp;
	case GroVerdict::bad_inner_ipv4_csum: return GroCsumError::inner_ipv4_hdr;
	default: return GroCsumError::inner_l4;
	}
}

inline bool ip4_ok(const std::byte *ip, size_t ihl)
{
	return csum_fold16(ihl == 20 ? csum_hdr(ip, 20) : csum_hdr(ip, ihl)) == 0xffff;
}

// Pseudo-header sum (RFC 793 / RFC 8200 8.1) for an L4 length.
inline uint32_t pseudo(const std::byte *ip, bool v6, uint8_t proto, uint32_t l4_len)
{
	uint32_t s = v6 ? csum_hdr(ip + 8, 32) : csum_hdr(ip + 12, 8);
	return csum_add32(s, uint32_t{proto} + (l4_len & 0xffff) + (l4_len >> 16));
}

// The IPv4 header checksums (outer and inner), before anything is copied.
inline Bad ip_bad(const Parsed &p)
{
	if (p.encap && !p.o.v6 && !ip4_ok(p.h + p.o.off, p.o.len))
		return Bad::ipv4;
	if (p.ip_parsed && !p.ip.v6 && !ip4_ok(p.h + p.ip.off, p.ip.len))
		return p.encap ? Bad::inner_ipv4 : Bad::ipv4;
	return Bad::none;
}

// The L4 checksums of an l4 frame whose payload [pay, end) sums to psum.
inline Bad l4_bad(const Parsed &p, uint32_t psum)
{
	const std::byte *h = p.h;
	const std::byte *l4 = h + p.l4;
	if (p.proto == kProtoUdp && ld16(l4 + 6) == 0) {
		// no checksum: allowed over IPv4 and inside a tunnel (RFC 6935), not over plain IPv6
		if (p.ip.v6 && !p.encap)
			return Bad::l4;
	} else {
		uint32_t s = csum_add32(pseudo(h + p.ip.off, p.ip.v6, p.proto, p.end - p.l4), csum_hdr(l4, p.l4_len));
		if (csum_fold16(csum_add(s, psum, p.l4_len)) != 0xffff)
			return p.encap ? Bad::inner_l4 : Bad::l4;
	}
	if (p.encap && ld16(h + p.o_l4 + 6) != 0) {
		uint32_t s = csum_add32(pseudo(h + p.o.off, p.o.v6, kProtoUdp, p.end - p.o_l4),
					csum_partial(h + p.o_l4, p.pay - p.o_l4));
		if (csum_fold16(csum_add(s, psum, p.pay - p.o_l4)) != 0xffff)
			return Bad::outer_udp;
	}
	return Bad::none;
}

// Every checksum of a frame that is not copied (passed as it is).
Bad verify_frame(const Src &s, const Parsed &p)
{
	if (Bad b = ip_bad(p); b != Bad::none)
		return b;
	if (p.l4_parsed)
		return l4_bad(p, s.take<false>(nullptr, p.pay, p.end - p.pay, nullptr));
	if (p.encap && ld16(p.h + p.o_l4 + 6) != 0) {
		uint32_t sum = csum_add32(pseudo(p.h + p.o.off, p.o.v6, kProtoUdp, p.end - p.o_l4),
					  s.take<false>(nullptr, p.o_l4, p.end - p.o_l4, nullptr));
		if (csum_fold16(sum) != 0xffff)
			return Bad::outer_udp;
	}
	return Bad::none;
}

uint32_t flow_hash(const Parsed &p)
{
	const std::byte *h = p.h, *ip = h + p.ip.off;
	uint64_t a, b = 0;
	if (!p.ip.v6) {
		a = ldn64(ip + 12);
	} else {
		a = ldn64(ip + 8) ^ ldn64(ip + 24);
		b = ldn64(ip + 16) ^ ldn64(ip + 32);
	}
	uint64_t c = uint64_t{ldn32(h + p.l4)} | uint64_t{p.proto} << 32 | uint64_t{p.ip.off} << 40;
	if (p.l3 > 14)
		c ^= uint64_t{ldn32(h + 14)} << 16;	// the outer tag's TCI (and what follows)
	if (p.encap)
		b ^= uint64_t{ldn32(h + p.gen + 4)} << 7 ^ ldn32(h + p.o.off + (p.o.v6 ? 8 : 12));
	uint64_t x = (a ^ b * 0x9E3779B97F4A7C15ull) * 0xff51afd7ed558ccdull ^ c * 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 29;
	return static_cast<uint32_t>(x >> 32) ^ static_cast<uint32_t>(x);
}

// Whether n bytes are equal: 8-byte words, the last one overlapping, for
// the few dozen bytes of a header (no call to memcmp). n >= 8.
inline bool same_bytes(const std::byte *a, const std::byte *b, size_t n)
{
	uint64_t d = 0;
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		d |= ldn64(a + i) ^ ldn64(b + i);
	if (i < n)
		d |= ldn64(a + n - 8) ^ ldn64(b + n - 8);
	return d == 0;
}

// The fields that make two IP headers one flow (the rest may only flush it).
inline bool same_ip(const std::byte *a, const std::byte *b, const Ip &ip)
{
	if (!ip.v6) {
		if (ldn64(a + 12) != ldn64(b + 12) || a[9] != b[9] || a[0] != b[0])
			return false;
		return ip.len == 20 || same_bytes(a + 12, b + 12, ip.len - 12);
	}
	// version and flow label; traffic class only flushes (ipv6_gro_receive)
	if ((ldn32(a) ^ ldn32(b)) & __builtin_bswap32(0xF00FFFFFu))
		return false;
	if (a[6] != b[6] || !same_bytes(a + 8, b + 8, ip.len - 8))
		return false;
	return true;
}

// The IP fields that may only differ at a flush (inet_gro_flush,
// ipv6_gro_flush): TTL/hop limit, TOS/traffic class, DF, and the IPv4 ID,
// incrementing by the segments held or, with DF, fixed (decided at the
// second frame: ip_fixedid). outer: an outer header with DF is not checked
// for its ID. *fixed: the flow's choice, updated when it merges.
inline bool ip_flush(const std::byte *a, const std::byte *b, bool v6, uint16_t count, bool *fixed, bool outer)
{
	if (v6)
		return ((ldn32(a) ^ ldn32(b)) & __builtin_bswap32(0x0FF00000u)) || a[7] != b[7];
	uint16_t df = ld16(b + 6) & kIpDf;
	if (a[8] != b[8] || a[1] != b[1] || df != (ld16(a + 6) & kIpDf))
		return true;
	if (outer && df)
		return false;
	uint16_t off = static_cast<uint16_t>(ld16(b + 4) - ld16(a + 4));
	if (count == 1 && df && off == 0)
		*fixed = true;
	return off != (*fixed ? 0 : count);
}

} // namespace

GroEngine::GroEngine(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
GroEngine::~GroEngine() = default;

int GroEngine::create(const GroConfig &c, std::unique_ptr<GroEngine> *out) noexcept
{
	if (!c.max_flows || c.max_flows > 4096 || c.max_size < 128 || c.max_size > 65535 || !c.frag_queues ||
	    c.frag_queues > 4096 || !c.geneve_port)
		return -EINVAL;
	std::unique_ptr<Impl> m(new (std::nothrow) Impl);
	if (!m)
		return -ENOMEM;
	m->cfg = c;
	m->copy_fn = csum_copy_fn();
#if defined(__x86_64__)
	m->avx2 = csum_impl() == CsumImpl::avx2;
#endif
	const uint32_t slots = c.max_flows + 1;
	m->slot_cap = (14 + c.max_size + 63) & ~63u;
	m->nbuckets = 16;
	while (m->nbuckets < 2 * slots)
		m->nbuckets <<= 1;
	m->frag_cap = static_cast<uint32_t>(kMaxHdr + 65536 + 64);
	m->lin_cap = 256 * 1024;
	// operator new[] without () leaves the bytes untouched: the pages come as used
	m->flow_mem.reset(new (std::nothrow) std::byte[size_t{slots} * m->slot_cap]);
	m->flows.reset(new (std::nothrow) Flow[slots]);
	m->buckets.reset(new (std::nothrow) uint16_t[m->nbuckets]);
	m->frag_mem.reset(new (std::nothrow) std::byte[size_t{c.frag_queues} * m->frag_cap]);
	m->fq.reset(new (std::nothrow) FragQueue[c.frag_queues]);
	m->frag_ranges.reset(new (std::nothrow) FragRange[size_t{c.frag_queues} * kGroMaxFrags]);
	m->hdr_scratch.reset(new (std::nothrow) std::byte[kMaxHdr]);
	m->lin.reset(new (std::nothrow) std::byte[m->lin_cap]);
	if (c.zero_copy)
		m->span_mem.reset(new (std::nothrow) std::span<const std::byte>[size_t{slots} * kGroMaxSpans]);
	if (!m->flow_mem || !m->flows || !m->buckets || !m->frag_mem || !m->fq || !m->frag_ranges || !m->hdr_scratch ||
	    !m->lin || (c.zero_copy && !m->span_mem))
		return -ENOMEM;
	for (uint32_t i = 0; i < m->nbuckets; i++)
		m->buckets[i] = kNone;
	for (uint32_t i = 0; i < slots; i++) {
		Flow &f = m->flows[i];
		f.buf = m->flow_mem.get() + size_t{i} * m->slot_cap;
		f.chain = i + 1 < slots ? static_cast<uint16_t>(i + 1) : kNone;
		if (c.zero_copy) {
			f.spans = m->span_mem.get() + size_t{i} * kGroMaxSpans;
			// fast_merge compares kFastHdr bytes of buf under a mask that is 0
			// past the headers; zero-copy may leave those bytes never written
			std::memset(f.buf, 0, kFastHdr);
		}
	}
	m->free_head = 0;
	for (uint32_t i = 0; i < c.frag_queues; i++) {
		m->fq[i].buf = m->frag_mem.get() + size_t{i} * m->frag_cap;
		m->fq[i].ranges = m->frag_ranges.get() + size_t{i} * kGroMaxFrags;
	}
	out->reset(new (std::nothrow) GroEngine(std::move(m)));
	return *out ? 0 : -ENOMEM;
}

void GroEngine::Impl::emit(const GroPacket &pk, GroSink sink) noexcept
{
	st.packets_out++;
	st.bytes_out += pk.size();
	st.flush_by[static_cast<size_t>(pk.flush)]++;
	if (pk.segs > 1)
		st.super_packets++;
	sink(pk);
}

GroVerdict GroEngine::Impl::pass(const Src &s, const Parsed *p, GroVerdict v, GroPass why, GroSink sink,
				 Check check) noexcept
{
	GroPacket pk;
	pk.frame = frame_idx;
	if (s.one) {
		pk.data = s.f->data;
	} else if (cfg.zero_copy && s.len <= lin_cap) {
		pk.data = s.f->data;	// the frame as it came: its buffers are the caller's until receive() returns
		pk.frags = s.f->more;
	} else {
		uint32_t n = s.len < lin_cap ? s.len : lin_cap;
		s.copy(lin.get(), 0, n);
		pk.data = {lin.get(), n};
		if (n < s.len)
			v = GroVerdict::malformed;	// longer than any frame AF_XDP delivers
	}
	if (v == GroVerdict::passed && check != Check::no && p) {
		Bad b = check == Check::verify ? verify_frame(s, *p) : Bad::none;
		if (b != Bad::none) {
			v = verdict_of(b);
		} else if (p->l4_parsed || p->ip_parsed) {
			pk.csum = GroCsum::unnecessary;
			if (p->encap && p->l4_parsed && ld16(p->h + p->o_l4 + 6) != 0)
				pk.csum_level = 1;
		}
	}
	if (p && p->encap) {
		pk.encap = true;
		pk.encap_csum = ld16(p->h + p->o_l4 + 6) != 0;
	}
	if (v != GroVerdict::passed && v != GroVerdict::malformed) {
		pk.csum = GroCsum::bad;
		pk.csum_level = 0;
		st.bad_csum[static_cast<size_t>(error_of(v))]++;
	}
	if (p && p->l4_parsed)
		pk.hdr_len = p->pay;
	pk.verdict = v;
	st.passed++;
	if (v == GroVerdict::passed)
		st.pass_by[static_cast<size_t>(why)]++;
	else if (v == GroVerdict::malformed)
		st.malformed++;
	emit(pk, sink);
	return v;
}

namespace {

// The flow table, the age list and the free slots: helpers over Impl.
struct Table {
	GroEngine::Impl &m;

	uint16_t lookup(uint32_t hash, const Parsed &p) const
	{
		for (uint16_t i = m.buckets[hash & (m.nbuckets - 1)]; i != kNone; i = m.flows[i].chain) {
			const Flow &f = m.flows[i];
			if (f.hash != hash || f.l4 != p.l4 || f.l3 != p.ip.off || f.encap != p.encap ||
			    f.tcp != (p.proto == kProtoTcp) || f.v6 != p.ip.v6)
				continue;
			if (p.encap && (f.o_l3 != p.o.off || f.o_l4 != p.o_l4 || f.o_v6 != p.o.v6))
				continue;
			const std::byte *a = f.buf, *b = p.h;
			// the whole L2 header, tags included (gro_list_prepare, vlan_gro_receive)
			if (!same_bytes(a, b, p.l3))
				continue;
			if (p.encap) {
				if (!same_ip(a + p.o.off, b + p.o.off, p.o) || ldn32(a + p.o_l4) != ldn32(b + p.o_l4) ||
				    (ld16(a + p.o_l4 + 6) == 0) != (ld16(b + p.o_l4 + 6) == 0))
					continue;
				// Geneve header and options, then the inner L2 header
				if (!same_bytes(a + p.gen, b + p.gen, p.ip.off - p.gen))
					continue;
			}
			if (!same_ip(a + p.ip.off, b + p.ip.off, p.ip) || ldn32(a + p.l4) != ldn32(b + p.l4))
				continue;
			return i;
		}
		return kNone;
	}

	void unlink(uint16_t i)
	{
		Flow &f = m.flows[i];
		uint16_t *pp = &m.buckets[f.hash & (m.nbuckets - 1)];
		while (*pp != i)
			pp = &m.flows[*pp].chain;
		*pp = f.chain;
		if (f.older != kNone)
			m.flows[f.older].newer = f.newer;
		else
			m.oldest = f.newer;
		if (f.newer != kNone)
			m.flows[f.newer].older = f.older;
		else
			m.newest = f.older;
		f.chain = m.free_head;
		m.free_head = i;
		m.nheld--;
		if (m.last == i)
			m.last = kNone;
	}

	// i: a slot taken off the free list
	void insert(uint16_t i)
	{
		Flow &f = m.flows[i];
		uint16_t &b = m.buckets[f.hash & (m.nbuckets - 1)];
		f.chain = b;
		b = i;
		f.older = m.newest;
		f.newer = kNone;
		if (m.newest != kNone)
			m.flows[m.newest].newer = i;
		else
			m.oldest = i;
		m.newest = i;
		m.nheld++;
	}
};

} // namespace

namespace {

// Zero-copy: a payload piece appended to a flow, its partial sum returned.
// A piece long enough is referenced where it lies while a span is left for
// the copies that may follow; a short one, or one past that, is copied
// behind the bytes in buf (the headers, then earlier copies), extending the
// last span when that is a copy too: at most kGroMaxSpans spans, however
// many frames.
inline uint32_t zc_piece(const GroEngine::Impl &m, Flow &f, const std::byte *p, size_t k) noexcept
{
	if (k >= m.cfg.zc_min_span && f.nspans + 2u <= kGroMaxSpans) {
		f.spans[f.nspans++] = {p, k};
		f.last_copied = false;
		return csum_partial(p, k, 0);
	}
	std::byte *d = f.buf + f.tail;
	const uint32_t sum = m.copy_fn(d, p, k, 0);
	if (f.last_copied)
		f.spans[f.nspans - 1] = {f.spans[f.nspans - 1].data(), f.spans[f.nspans - 1].size() + k};
	else
		f.spans[f.nspans++] = {d, k};
	f.last_copied = true;
	f.tail += static_cast<uint32_t>(k);
	return sum;
}

// A flow's zero-copy state, to put back when a frame appended fails its
// checksum (nothing but bytes past tail and spans past nspans changed).
struct ZcMark {
	uint16_t nspans;
	bool last_copied;
	uint32_t tail;
	std::span<const std::byte> last;

	explicit ZcMark(const Flow &f) noexcept
	    : nspans(f.nspans), last_copied(f.last_copied), tail(f.tail),
	      last(f.nspans ? f.spans[f.nspans - 1] : std::span<const std::byte>{})
	{
	}
	void restore(Flow &f) const noexcept
	{
		f.nspans = nspans;
		f.last_copied = last_copied;
		f.tail = tail;
		if (nspans)
			f.spans[nspans - 1] = last;
	}
};

// Zero-copy: [off, off + n) of a frame appended to a flow as zc_piece
// pieces (a multi-buffer frame: a piece per buffer it spans); the bytes'
// partial sum as Src::take gives it.
uint32_t zc_take(const GroEngine::Impl &m, Flow &f, const Src &s, size_t off, size_t n) noexcept
{
	if (s.one) [[likely]]
		return n ? zc_piece(m, f, s.f->data.data() + off, n) : 0;
	uint32_t sum = 0;
	s.each_piece(off, n, [&](const std::byte *p, size_t k, size_t done) {
		sum = csum_add(sum, zc_piece(m, f, p, k), done);
	});
	return sum;
}

// What a flow emits as its bytes: buf to len in copy mode; zero-copy, the
// headers and the spans, the first one with them when it is the copy
// straight behind them (all of a packet of short segments: one buffer).
inline void flow_bytes(const GroEngine::Impl &m, const Flow &f, GroPacket &pk) noexcept
{
	if (!m.cfg.zero_copy) {
		pk.data = {f.buf, f.len};
		return;
	}
	std::span<const std::span<const std::byte>> sp(f.spans, f.nspans);
	size_t n = f.pay;
	if (!sp.empty() && sp[0].data() == f.buf + f.pay) {
		n += sp[0].size();
		sp = sp.subspan(1);
	}
	pk.data = {f.buf, n};
	pk.frags = sp;
}

// Writes a held flow's length fields and checksums and emits it; its slot
// is free again after.
[[gnu::noinline]] void finish(GroEngine::Impl &m, uint16_t i, GroFlush cause, GroSink sink) noexcept
{
	Flow &f = m.flows[i];
	std::byte *b = f.buf;
	const uint32_t len = f.len;
	GroPacket pk;
	flow_bytes(m, f, pk);
	pk.segs = f.segs;
	pk.flush = cause;
	pk.verdict = GroVerdict::held;
	pk.hdr_len = f.pay;
	pk.csum = GroCsum::unnecessary;
	const bool outer_csum = f.encap && ld16(b + f.o_l4 + 6) != 0;
	pk.encap = f.encap;
	pk.encap_csum = outer_csum;
	pk.csum_level = outer_csum ? 1 : 0;
	if (f.segs > 1) {
		std::byte *ip = b + f.l3, *l4 = b + f.l4;
		const uint32_t l4_len = len - f.l4;
		if (!f.v6) {
			st16(ip + 2, static_cast<uint16_t>(len - f.l3));
			st16(ip + 10, 0);
			st16(ip + 10, csum_finish(csum_hdr(ip, f.l4 - f.l3)));
		} else {
			st16(ip + 4, static_cast<uint16_t>(len - f.l3 - 40));
		}
		const size_t co = f.tcp ? 16 : 6;
		if (f.tcp)
			l4[13] |= std::byte{f.or_flags};
		else
			st16(l4 + 4, static_cast<uint16_t>(l4_len));
		const uint32_t ph = pseudo(ip, f.v6, f.tcp ? kProtoTcp : kProtoUdp, l4_len);
		if (m.cfg.csum_out == GroCsumOut::partial) {
			st16(l4 + co, csum_fold16(ph));
			pk.csum = GroCsum::partial;
			pk.csum_start = f.l4;
			pk.csum_offset = static_cast<uint16_t>(co);
		} else {
			st16(l4 + co, 0);
			uint16_t c = csum_finish(csum_add(csum_add32(ph, csum_hdr(l4, f.pay - f.l4)), f.psum, f.pay - f.l4));
			st16(l4 + co, !f.tcp && c == 0 ? 0xffff : c);
		}
		if (f.encap) {
			std::byte *oip = b + f.o_l3, *udp = b + f.o_l4;
			if (!f.o_v6) {
				st16(oip + 2, static_cast<uint16_t>(len - f.o_l3));
				st16(oip + 10, 0);
				st16(oip + 10, csum_finish(csum_hdr(oip, f.o_l4 - f.o_l3)));
			} else {
				st16(oip + 4, static_cast<uint16_t>(len - f.o_l3 - 40));
			}
			st16(udp + 4, static_cast<uint16_t>(len - f.o_l4));
			if (outer_csum) {
				const uint32_t oph = pseudo(oip, f.o_v6, kProtoUdp, len - f.o_l4);
				if (m.cfg.csum_out == GroCsumOut::partial) {
					st16(udp + 6, csum_fold16(oph));
				} else {
					st16(udp + 6, 0);
					uint32_t s = csum_add32(oph, csum_partial(udp, f.pay - f.o_l4));
					uint16_t c = csum_finish(csum_add(s, f.psum, f.pay - f.o_l4));
					st16(udp + 6, c ? c : 0xffff);
				}
			}
		}
		pk.gso_type = f.tcp ? (f.v6 ? GsoType::tso6 : GsoType::tso4) : (f.v6 ? GsoType::uso6 : GsoType::uso4);
		pk.gso_size = f.gso_size;
	}
	m.emit(pk, sink);
	Table{m}.unlink(i);
}

} // namespace

// A TCP/UDP frame of a kind merged.
namespace {

// A new fast flow's mask and the sums of its first frame's constant header
// words (Flow::fast): what fast_merge compares and adds.
void fast_template(Flow &n) noexcept
{
	std::byte *mk = n.mask.data();
	std::memset(mk, 0xff, n.pay);
	std::memset(mk + n.pay, 0, kFastHdr - n.pay);
	const std::byte *ip = n.buf + n.l3, *th = n.buf + n.l4;
	if (!n.v6) {
		std::memset(mk + n.l3 + 2, 0, 4);	// total length, ID
		std::memset(mk + n.l3 + 10, 0, 2);	// header checksum
		std::byte h[20];
		std::memcpy(h, ip, 20);
		std::memset(h + 2, 0, 4);
		std::memset(h + 10, 0, 2);
		n.ip_sum0 = csum_hdr(h, 20);
		n.id0 = ld16(ip + 4);
	} else {
		std::memset(mk + n.l3 + 4, 0, 2);	// payload length
	}
	std::memset(mk + n.l4 + 4, 0, 4);	// sequence
	std::memset(mk + n.l4 + 16, 0, 4);	// checksum, urgent pointer (tcp_gro_receive compares neither)
	const size_t doff = n.pay - n.l4;
	std::byte t[60];
	std::memcpy(t, th, doff);
	std::memset(t + 4, 0, 4);
	std::memset(t + 16, 0, 4);
	const uint32_t addr = n.v6 ? csum_hdr(ip + 8, 32) : csum_hdr(ip + 12, 8);
	n.l4_sum0 = csum_add32(csum_add32(addr, kProtoTcp), csum_hdr(t, doff));
}

} // namespace

// The common case, taken before any parsing: a single-buffer TCP frame that
// continues the fast flow the last frame started or joined (Impl::last). Its
// header bytes are compared with the held super-packet's (its first frame's)
// under the flow's mask, a few wide compares: equal, the frame is of that
// flow (what Table::lookup compares) with the same TTL, TOS/traffic class,
// DF, flags, ACK, window and options (what ip_flush and on_l4 compare one by
// one; the kernel's flow match is a memcmp of the headers too), and parses as
// the first frame did. The fields that vary are then checked as on_l4 does
// (lengths without padding, no longer than the first segment, the next
// sequence number, the IPv4 ID incrementing or fixed as decided, max_size)
// and both checksums verified from the template's constant sums plus the
// varying words and the payload's sum taken in the copy. Everything else
// (a new flow, a flush, a bad checksum, the ID decision at the second frame,
// PSH/FIN) returns false having changed nothing but bytes past the flow's
// end, and on_l4 decides: the outcome is the same either way.
namespace {

template <bool Avx2, bool Zc>
inline bool fast_merge_t(GroEngine::Impl &m, const GroFrame &fr, GroSink sink) noexcept
{
	const uint16_t last = m.last;
	Flow &f = m.flows[last];
	const std::byte *h = fr.data.data();
	const size_t len = fr.data.size();
	if (!fr.more.empty() || len < kFastHdr || len <= f.pay)
		return false;
	const std::byte *a = f.buf, *mk = f.mask.data();
	uint64_t d = 0;
	for (size_t i = 0; i < kFastHdr; i += 8)
		d |= (ldn64(h + i) ^ ldn64(a + i)) & ldn64(mk + i);
	if (d)
		return false;
	const std::byte *ip = h + f.l3, *th = h + f.l4;
	const uint32_t plen = static_cast<uint32_t>(len - f.pay);
	const uint32_t seq = ld32(th + 4);
	if (plen > f.gso_size || seq != f.next_seq || f.len - 14 + plen > m.cfg.max_size)
		return false;
	if (!f.v6) {
		const uint16_t tot = ld16(ip + 2), id = ld16(ip + 4);
		if (f.l3 + size_t{tot} != len || static_cast<uint16_t>(id - f.id0) != (f.fixed_id ? 0 : f.segs))
			return false;
		if (csum_fold16(uint64_t{f.ip_sum0} + tot + id + ld16(ip + 10)) != 0xffff)
			return false;
	} else if (f.l3 + 40 + size_t{ld16(ip + 4)} != len) {
		return false;
	}
	// zero-copy: the payload referenced where it lies, summed in place; a
	// piece zc_piece would copy is left to the general path
	if (Zc && (plen < m.cfg.zc_min_span || f.nspans + 2u > kGroMaxSpans))
		return false;
	uint32_t psum;
#if defined(__x86_64__)
	if constexpr (Avx2)
		psum = csum_detail::avx2_sum<!Zc>(reinterpret_cast<uint8_t *>(f.buf + f.len),
						  reinterpret_cast<const uint8_t *>(h + f.pay), plen, 0);
	else
#endif
		psum = Zc ? csum_partial(h + f.pay, plen, 0) : m.copy_fn(f.buf + f.len, h + f.pay, plen, 0);
	const uint64_t l4 = uint64_t{f.l4_sum0} + (len - f.l4) + (seq >> 16) + (seq & 0xffff) + ld16(th + 16) +
			    ld16(th + 18) + psum;
	if (csum_fold16(l4) != 0xffff)
		return false;
	m.st.frames_in++;
	m.st.bytes_in += len;
	m.st.merged++;
	if constexpr (Zc) {
		f.spans[f.nspans++] = {h + f.pay, plen};
		f.last_copied = false;
	}
	f.psum = csum_add(f.psum, psum, f.len - f.pay);
	f.len += plen;
	f.segs++;
	f.next_seq += plen;
	if (plen < f.gso_size)
		finish(m, last, GroFlush::short_seg, sink);
	else if (m.cfg.max_segs_tcp && f.segs >= m.cfg.max_segs_tcp)
		finish(m, last, GroFlush::segs, sink);
	return true;
}

#if defined(__x86_64__)
// fast_merge_t compiled for AVX2, the copy+checksum (zero-copy: checksum)
// kernel inlined (flatten): no call per frame, the header compare in 32-byte
// vectors.
template <bool Zc>
[[gnu::noinline, gnu::flatten]] __attribute__((target("avx2"))) bool
fast_merge_avx2(GroEngine::Impl &m, const GroFrame &fr, GroSink sink) noexcept
{
	return fast_merge_t<true, Zc>(m, fr, sink);
}
#endif

} // namespace

bool GroEngine::Impl::fast_merge(const GroFrame &fr, GroSink sink) noexcept
{
#if defined(__x86_64__)
	if (avx2) [[likely]]
		return cfg.zero_copy ? fast_merge_avx2<true>(*this, fr, sink) : fast_merge_avx2<false>(*this, fr, sink);
#endif
	return cfg.zero_copy ? fast_merge_t<false, true>(*this, fr, sink) : fast_merge_t<false, false>(*this, fr, sink);
}

namespace {

GroVerdict on_l4(GroEngine::Impl &m, const Src &s, Parsed &p, uint64_t now, GroSink sink) noexcept
{
	const GroConfig &cfg = m.cfg;
	const bool tcp = p.proto == kProtoTcp;
	const std::byte *h = p.h;
	const std::byte *th = h + p.l4;
	// reasons the kernel takes no part in GRO at all (held flows untouched)
	const Check vc = cfg.verify_csum ? Check::verify : Check::no;
	if ((p.ip.opts || (p.encap && p.o.opts)) && !cfg.ipv4_options)
		return m.pass(s, &p, GroVerdict::passed, GroPass::ip_options, sink, vc);
	if (Bad b = ip_bad(p); b != Bad::none)
		return m.pass(s, &p, verdict_of(b), GroPass::kind_off, sink, Check::no);
	if (!tcp && ld16(th + 6) == 0)
		return m.pass(s, &p, GroVerdict::passed, GroPass::udp_no_csum, sink, vc);
	const uint32_t plen = p.end - p.pay;
	if (p.end - 14 > cfg.max_size)
		return m.pass(s, &p, GroVerdict::passed, GroPass::too_big, sink, vc);
	if (!tcp && plen == 0)
		return m.pass(s, &p, GroVerdict::passed, GroPass::no_payload, sink, vc);

	const uint8_t flags = tcp ? u8(th + 13) : 0;
	const uint32_t hash = flow_hash(p);
	Table t{m};
	uint16_t fi = t.lookup(hash, p);

	// frames that flush their flow and go up alone: padded, no payload,
	// SYN/RST/URG (tcp_gro_receive's flush at out_check_final); a bad
	// checksum flushes nothing (validated first, as tcp4_gro_receive)
	GroPass alone = GroPass::count_;
	if (p.end != p.len)
		alone = GroPass::padded;
	else if (tcp && plen == 0)
		alone = GroPass::no_payload;
	else if (tcp && (flags & (kTcpSyn | kTcpRst | kTcpUrg)))
		alone = GroPass::flags;
	else if (tcp && fi == kNone && (flags & (kTcpPsh | kTcpFin)))
		alone = GroPass::flags;
	if (alone != GroPass::count_) {
		const bool check = fi != kNone || cfg.verify_csum;
		Bad b = check ? verify_frame(s, p) : Bad::none;
		if (b != Bad::none)
			return m.pass(s, &p, verdict_of(b), alone, sink, Check::no);
		if (fi != kNone)
			finish(m, fi, alone == GroPass::flags ? GroFlush::flags : GroFlush::mismatch, sink);
		return m.pass(s, &p, GroVerdict::passed, alone, sink, check ? Check::verified : Check::no);
	}

	// joining the held flow?
	GroFlush restart = GroFlush::mismatch;
	if (fi != kNone) {
		Flow &f = m.flows[fi];
		const std::byte *b2 = f.buf;
		const std::byte *th2 = b2 + f.l4;
		bool fixed = f.fixed_id, o_fixed = f.o_fixed_id;
		bool flush = ip_flush(b2 + f.l3, h + p.ip.off, p.ip.v6, f.segs, &fixed, false);
		if (p.encap)
			flush |= ip_flush(b2 + f.o_l3, h + p.o.off, p.o.v6, f.segs, &o_fixed, true);
		if (tcp) {
			// doff, flags but CWR/FIN/PSH, window; CWR never joins; ACK; options
			const uint32_t w = ldn32(th + 12), w2 = ldn32(th2 + 12);
			flush |= (flags & kTcpCwr) || ((w ^ w2) & ~(uint32_t{kTcpCwr | kTcpFin | kTcpPsh} << 8));
			flush |= ldn32(th + 8) != ldn32(th2 + 8);
			if (p.l4_len == 24)
				flush |= ldn32(th + 20) != ldn32(th2 + 20);
			else if (p.l4_len > 24)
				flush |= !same_bytes(th + 20, th2 + 20, p.l4_len - 20u);
			flush |= plen - 1 >= f.gso_size;	// longer than the first segment
			flush |= ld32(th + 4) != f.next_seq;
		} else {
			// a longer datagram than the first ends the run (udp_gro_receive_segment)
			flush |= p.end - p.l4 > ld16(th2 + 4);
		}
		if (!flush && f.len - 14 + plen > cfg.max_size) {
			flush = true;
			restart = GroFlush::size;
		}
		if (!flush) {
			// the payload straight behind the flow's bytes (zero-copy: its
			// pieces), summed on the way; committed only if every checksum
			// verifies
			const ZcMark mark(f);
			const uint32_t psum = cfg.zero_copy ? zc_take(m, f, s, p.pay, plen)
							    : s.take<true>(f.buf + f.len, p.pay, plen, m.copy_fn);
			if (Bad b = l4_bad(p, psum); b != Bad::none) {
				mark.restore(f);
				return m.pass(s, &p, verdict_of(b), GroPass::kind_off, sink, Check::no);
			}
			f.psum = csum_add(f.psum, psum, f.len - f.pay);
			f.len += plen;
			f.segs++;
			f.fixed_id = fixed;
			f.o_fixed_id = o_fixed;
			m.st.merged++;
			GroFlush done = GroFlush::count_;
			if (tcp) {
				f.next_seq += plen;
				f.or_flags |= flags & (kTcpFin | kTcpPsh);
				if (flags & (kTcpFin | kTcpPsh))
					done = GroFlush::flags;
				else if (plen < f.gso_size)
					done = GroFlush::short_seg;
				else if (cfg.max_segs_tcp && f.segs >= cfg.max_segs_tcp)
					done = GroFlush::segs;
			} else if (p.end - p.l4 != ld16(th2 + 4)) {
				done = GroFlush::short_seg;
			} else if (f.segs >= (cfg.max_segs_udp ? cfg.max_segs_udp : 64)) {
				done = GroFlush::segs;
			}
			m.last = f.fast ? fi : kNone;
			if (done != GroFlush::count_)
				finish(m, fi, done, sink);
			return GroVerdict::merged;
		}
	}

	// a new flow: the frame copied into the spare slot and verified, then
	// the flow it replaces (or the oldest, at the table's bound) emitted
	const uint16_t ni = m.free_head;
	Flow &n = m.flows[ni];
	std::memcpy(n.buf, h, p.pay);
	n.nspans = 0;
	n.last_copied = false;
	n.tail = p.pay;
	const uint32_t psum = cfg.zero_copy ? zc_take(m, n, s, p.pay, plen)
					    : s.take<true>(n.buf + p.pay, p.pay, plen, m.copy_fn);
	if (Bad b = l4_bad(p, psum); b != Bad::none)
		return m.pass(s, &p, verdict_of(b), GroPass::kind_off, sink, Check::no);
	m.free_head = n.chain;	// taken: the slots emitted below go back to the list
	if (fi != kNone)
		finish(m, fi, restart, sink);
	if (tcp && (flags & (kTcpPsh | kTcpFin))) {
		// after a flush its own PSH/FIN sends it up alone (out_check_final)
		GroPacket pk;
		n.len = p.end;
		n.pay = p.pay;
		flow_bytes(m, n, pk);
		pk.frame = m.frame_idx;
		pk.hdr_len = p.pay;
		pk.csum = GroCsum::unnecessary;
		pk.encap = p.encap;
		pk.encap_csum = p.encap && ld16(h + p.o_l4 + 6) != 0;
		pk.csum_level = pk.encap_csum ? 1 : 0;
		m.st.passed++;
		m.st.pass_by[static_cast<size_t>(GroPass::flags)]++;
		m.emit(pk, sink);
		n.chain = m.free_head;
		m.free_head = ni;
		return GroVerdict::passed;
	}
	if (m.nheld == cfg.max_flows)
		finish(m, m.oldest, GroFlush::table_full, sink);
	n.len = p.end;
	n.hash = hash;
	n.t0 = now;
	n.psum = psum;
	n.next_seq = tcp ? ld32(th + 4) + plen : 0;
	n.gso_size = static_cast<uint16_t>(plen);
	n.segs = 1;
	n.l3 = p.ip.off;
	n.l4 = p.l4;
	n.pay = p.pay;
	n.o_l3 = p.o.off;
	n.o_l4 = p.o_l4;
	n.v6 = p.ip.v6;
	n.o_v6 = p.o.v6;
	n.encap = p.encap;
	n.tcp = tcp;
	n.fixed_id = n.o_fixed_id = false;
	n.or_flags = 0;
	n.fast = tcp && !p.encap && p.pay <= kFastHdr && p.ip.len == (p.ip.v6 ? 40 : 20) && !(flags & kTcpCwr);
	if (n.fast)
		fast_template(n);
	m.last = n.fast ? ni : kNone;
	t.insert(ni);
	m.st.held++;
	return GroVerdict::held;
}

} // namespace

GroVerdict GroEngine::Impl::frame(const GroFrame &fr, uint64_t now, GroSink sink) noexcept
{
	Src s(fr);
	st.frames_in++;
	st.bytes_in += s.len;
	Parsed p;
	switch (parse(s, p, hdr_scratch.get(), cfg.geneve_port)) {
	case Cls::malformed:
		return pass(s, nullptr, GroVerdict::malformed, GroPass::kind_off, sink, Check::no);
	case Cls::other:
		return pass(s, &p, GroVerdict::passed, p.pass, sink, cfg.verify_csum ? Check::verify : Check::no);
	case Cls::frag:
		if (!cfg.kinds.frag || (p.encap && !cfg.kinds.geneve))
			return pass(s, &p, GroVerdict::passed, GroPass::kind_off, sink,
				    cfg.verify_csum ? Check::verify : Check::no);
		return on_frag(s, p, now, sink);
	case Cls::l4:
		break;
	}
	const bool tcp = p.proto == kProtoTcp;
	const bool kind = p.encap ? cfg.kinds.geneve && (tcp || cfg.kinds.udp) : tcp ? cfg.kinds.tcp : cfg.kinds.udp;
	if (!kind)
		return pass(s, &p, GroVerdict::passed, GroPass::kind_off, sink,
			    cfg.verify_csum ? Check::verify : Check::no);
	return on_l4(*this, s, p, now, sink);
}

GroVerdict GroEngine::receive_one(const GroFrame &frame, uint64_t now_ns, GroSink sink) noexcept
{
	Impl &m = *impl_;
	m.frame_idx = 0;
	if (m.last != kNone && m.fast_merge(frame, sink))
		return GroVerdict::merged;
	return m.frame(frame, now_ns, sink);
}

int GroEngine::receive(std::span<const GroFrame> frames, uint64_t now_ns, std::span<GroVerdict> verdicts,
		       GroSink sink) noexcept
{
	if (!verdicts.empty() && verdicts.size() != frames.size())
		return -EINVAL;
	Impl &m = *impl_;
	const uint64_t before = m.st.packets_out;
	for (size_t i = 0; i < frames.size(); i++) {
		// the headers of the frame four ahead on their way while this one is
		// copied: a received frame is cold (DMA, or the kernel's copy on
		// another CPU), and one frame ahead (~50 ns) was too late (tools/bench
		// gro tcp4: 1.2-1.3x DPDK with the next frame, 1.3-1.6x four ahead)
		if (i + 4 < frames.size()) {
			const std::byte *nx = frames[i + 4].data.data();
			__builtin_prefetch(nx);
			__builtin_prefetch(nx + 64);
		}
		m.frame_idx = static_cast<uint32_t>(i);
		GroVerdict v = m.last != kNone && m.fast_merge(frames[i], sink) ? GroVerdict::merged
										: m.frame(frames[i], now_ns, sink);
		if (!verdicts.empty())
			verdicts[i] = v;
	}
	m.frame_idx = UINT32_MAX;
	return static_cast<int>(m.st.packets_out - before);
}

int GroEngine::flush(GroSink sink) noexcept
{
	Impl &m = *impl_;
	int n = 0;
	while (m.oldest != kNone) {
		finish(m, m.oldest, GroFlush::batch_end, sink);
		n++;
	}
	return n;
}

int GroEngine::flush_expired(uint64_t now_ns, GroSink sink) noexcept
{
	Impl &m = *impl_;
	int n = 0;
	while (m.oldest != kNone && now_ns - m.flows[m.oldest].t0 >= m.cfg.flush_timeout_ns) {
		finish(m, m.oldest, GroFlush::timeout, sink);
		n++;
	}
	m.frag_expire(now_ns, false);
	return n;
}

void GroEngine::drop_fragments() noexcept
{
	impl_->frag_expire(0, true);
}

const GroStats &GroEngine::stats() const noexcept
{
	return impl_->st;
}
const GroConfig &GroEngine::config() const noexcept
{
	return impl_->cfg;
}
uint32_t GroEngine::held_flows() const noexcept
{
	return impl_->nheld;
}
uint32_t GroEngine::frag_queues() const noexcept
{
	return impl_->nfq;
}

} // namespace xoffload
