// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// IPv4 (RFC 791) and IPv6 (RFC 8200) reassembly, the mate of UFO: each
// fragment's data copied once, at its offset, into its datagram's buffer
// while summed; overlaps refuse the datagram (RFC 5722), a fragment inside
// a run already held only itself (the kernel's IPFRAG_DUP); memory, queues,
// fragments per datagram and time bounded. Under Geneve the inner fragments are
// reassembled behind the first fragment's outer headers.
#include "gro_internal.hpp"

namespace xoffload {

using namespace gro_detail;

namespace {

inline bool ip4_ok(const std::byte *ip, size_t ihl)
{
	return csum_fold16(csum_hdr(ip, ihl)) == 0xffff;
}

inline uint32_t pseudo(const std::byte *ip, bool v6, uint8_t proto, uint32_t l4_len)
{
	uint32_t s = v6 ? csum_hdr(ip + 8, 32) : csum_hdr(ip + 12, 8);
	return csum_add32(s, uint32_t{proto} + (l4_len & 0xffff) + (l4_len >> 16));
}

// The key of a datagram: the VLAN IDs, the outer addresses and VNI under
// Geneve, the addresses, the ID and (IPv4) the protocol.
uint16_t frag_key(const Parsed &p, std::byte *k)
{
	const std::byte *h = p.h;
	size_t n = 0;
	auto put = [&](const std::byte *b, size_t len) {
		std::memcpy(k + n, b, len);
		n += len;
	};
	// the tags' TCIs (PCP, DEI, VID) at 14 and 18, as many as there are
	for (size_t at = 14; at + 4 <= p.l3; at += 4)
		put(h + at, 2);
	const std::byte sep{0xa5};
	put(&sep, 1);
	if (p.encap) {
		put(h + p.o.off + (p.o.v6 ? 8 : 12), p.o.v6 ? 32 : 8);
		put(h + p.gen + 4, 3);
	}
	const std::byte *ip = h + p.ip.off;
	put(ip + (p.ip.v6 ? 8 : 12), p.ip.v6 ? 32 : 8);
	if (p.ip.v6) {
		put(h + p.frag_at + 4, 4);
	} else {
		put(ip + 4, 2);
		put(ip + 9, 1);
	}
	return static_cast<uint16_t>(n);
}

uint32_t key_hash(const std::byte *k, size_t n)
{
	uint32_t x = 2166136261u;
	for (size_t i = 0; i < n; i++) {
		x ^= std::to_integer<uint32_t>(k[i]);
		x *= 16777619u;
	}
	return x;
}

} // namespace

void GroEngine::Impl::frag_release(FragQueue &q) noexcept
{
	st.frag_mem -= q.mem;
	q.used = false;
	q.mem = 0;
	nfq--;
}

int GroEngine::Impl::frag_expire(uint64_t now, bool all) noexcept
{
	int n = 0;
	for (uint32_t i = 0; i < cfg.frag_queues && nfq; i++) {
		FragQueue &q = fq[i];
		if (!q.used || (!all && now - q.t0 < cfg.frag_timeout_ns))
			continue;
		st.frag_drop[static_cast<size_t>(GroFragDrop::timeout)] += q.nfrags;
		frag_release(q);
		n++;
	}
	return n;
}

GroVerdict GroEngine::Impl::on_frag(const Src &s, Parsed &p, uint64_t now, GroSink sink) noexcept
{
	auto drop = [&](GroFragDrop why, FragQueue *kill) {
		st.frags_in++;
		st.frag_drop[static_cast<size_t>(why)]++;
		if (kill) {
			// the datagram's fragments go with it, under the same reason
			st.frag_drop[static_cast<size_t>(why)] += kill->nfrags;
			frag_release(*kill);
		}
		return GroVerdict::frag_dropped;
	};
	const std::byte *h = p.h;
	// IPv4 headers (outer and inner): a bad one is passed as it is, flagged
	if (p.encap && !p.o.v6 && !ip4_ok(h + p.o.off, p.o.len))
		return pass(s, &p, GroVerdict::bad_ipv4_csum, GroPass::kind_off, sink, Check::no);
	if (!p.ip.v6 && !ip4_ok(h + p.ip.off, p.ip.len))
		return pass(s, &p, p.encap ? GroVerdict::bad_inner_ipv4_csum : GroVerdict::bad_ipv4_csum,
			    GroPass::kind_off, sink, Check::no);

	const uint32_t flen = p.end - p.fdata;
	const uint32_t fend = p.foff + flen;
	// the bytes between the IP header and the fragmentable part (IPv6: the
	// unfragmentable extension headers) count against the 65535 of the length field
	const uint32_t before = p.ip.v6 ? p.frag_at - p.ip.off - 40 : p.ip.len;
	std::byte key[sizeof(FragQueue::key)];
	const uint16_t klen = frag_key(p, key);
	const uint32_t hash = key_hash(key, klen);
	FragQueue *q = nullptr;
	for (uint32_t i = 0; i < cfg.frag_queues; i++) {
		FragQueue &c = fq[i];
		if (c.used && c.hash == hash && c.key_len == klen && std::memcmp(c.key.data(), key, klen) == 0) {
			q = &c;
			break;
		}
	}
	if (fend + before > 65535)
		return drop(GroFragDrop::too_big, q);
	// empty, a non-last fragment not a multiple of 8, ends that disagree
	if (flen == 0 || (p.mf && (flen & 7)))
		return drop(GroFragDrop::bad, q);
	if (q && ((!p.mf && ((q->have_last && fend != q->total) || fend < q->max_end)) ||
		  (p.mf && q->have_last && fend > q->total)))
		return drop(GroFragDrop::bad, q);
	const uint32_t cost = flen + kGroFragOverhead;
	if (st.frag_mem + cost > cfg.frag_mem)
		return drop(GroFragDrop::mem, nullptr);
	if (!q) {
		if (nfq == cfg.frag_queues)
			frag_expire(now, false);
		if (nfq == cfg.frag_queues)
			return drop(GroFragDrop::queues, nullptr);
		for (uint32_t i = 0; i < cfg.frag_queues; i++)
			if (!fq[i].used) {
				q = &fq[i];
				break;
			}
		q->used = true;
		q->hash = hash;
		q->key_len = klen;
		std::memcpy(q->key.data(), key, klen);
		q->t0 = now;
		q->hdr = 0;
		q->data_at = static_cast<uint16_t>(kMaxHdr);
		q->total = 0;
		q->max_end = 0;
		q->have_last = false;
		q->got = 0;
		q->mem = 0;
		q->sum = 0;
		q->nfrags = 0;
		q->nruns = 0;
		q->max_size = q->max_df_size = 0;
		q->ecn = 0;
		q->ok_outer = true;
		nfq++;
	}
	// inet_frag_queue_insert(): the queue is a list of runs (fragments that
	// came in order, each starting where the one before ended), sorted by
	// start. A fragment past the furthest end extends the last run or starts
	// a new one after it (starting before that end: an overlap); any other
	// fragment lying entirely inside a run is a duplicate (dropped alone,
	// IPFRAG_DUP, even when its bytes are not a fragment's), and one that
	// crosses a run's edge an overlap (the datagram dropped, RFC 5722).
	uint32_t at = q->nruns;		// the run it becomes, or extends (at == nruns - 1)
	bool extend = false;
	if (q->nruns && fend > q->max_end) {
		if (p.foff < q->max_end)
			return drop(GroFragDrop::overlap, q);
		if (p.foff == q->max_end) {
			at = q->nruns - 1;
			extend = true;
		}
	} else if (q->nruns) {
		at = 0;
		while (at < q->nruns && q->ranges[at].end <= p.foff)
			at++;
		if (at < q->nruns && q->ranges[at].start < fend) {
			if (p.foff >= q->ranges[at].start && fend <= q->ranges[at].end)
				return drop(GroFragDrop::dup, nullptr);
			return drop(GroFragDrop::overlap, q);
		}
	}
	if (q->nfrags == kGroMaxFrags)
		return drop(GroFragDrop::too_many, q);

	// the data at its offset, summed; under Geneve a non-zero outer UDP
	// checksum covers this frame's inner bytes: verified before it counts
	std::byte *dst = q->buf + q->data_at + p.foff;
	const uint32_t dsum = s.take<true>(dst, p.fdata, flen, copy_fn);
	if (p.encap && ld16(h + p.o_l4 + 6) != 0) {
		uint32_t os = csum_add32(pseudo(h + p.o.off, p.o.v6, kProtoUdp, p.end - p.o_l4),
					 csum_partial(h + p.o_l4, p.fdata - p.o_l4));
		if (csum_fold16(csum_add(os, dsum, p.fdata - p.o_l4)) != 0xffff) {
			if (q->nfrags == 0)
				frag_release(*q);
			return pass(s, &p, GroVerdict::bad_outer_udp_csum, GroPass::kind_off, sink, Check::no);
		}
	}
	if (extend) {
		q->ranges[at].end = fend;
	} else {
		for (uint32_t k = q->nruns; k > at; k--)
			q->ranges[k] = q->ranges[k - 1];
		q->ranges[at] = FragRange{p.foff, fend};
		q->nruns++;
	}
	q->nfrags++;
	q->got += flen;
	q->sum = csum_add(q->sum, dsum, p.foff);
	q->mem += cost;
	st.frag_mem += cost;
	if (st.frag_mem > st.frag_mem_peak)
		st.frag_mem_peak = st.frag_mem;
	if (fend > q->max_end)
		q->max_end = fend;
	if (!p.ip.v6) {
		const std::byte *ip = h + p.ip.off;
		const uint32_t size = p.end - p.ip.off;
		if (size > q->max_size)
			q->max_size = size;
		if ((ld16(ip + 6) & kIpDf) && size > q->max_df_size)
			q->max_df_size = size;
		q->ecn |= static_cast<uint8_t>(1u << (u8(ip + 1) & 3));
	}
	if (!p.mf) {
		q->have_last = true;
		q->total = fend;
	}
	if (p.foff == 0) {
		// the first fragment's headers, right in front of the data: IPv4 with
		// every option it has, IPv6 up to the fragment header
		const uint16_t hend = p.ip.v6 ? p.frag_at : p.fdata;
		std::memcpy(q->buf + q->data_at - hend, h, hend);
		q->hdr = hend;
		q->first = p;
		q->first.h = nullptr;
	}
	st.frags_in++;
	if (!q->have_last || !q->hdr || q->got != q->total)
		return GroVerdict::frag_held;

	// complete: the first fragment's headers with the fragment fields undone
	const Parsed &f = q->first;
	std::byte *base = q->buf + q->data_at - q->hdr;
	const uint32_t len = q->hdr + q->total;
	std::byte *ip = base + f.ip.off;
	uint32_t l4_at = q->hdr;	// where the L4 header is (after IPv6 extension headers in the fragmentable part)
	uint8_t proto = f.proto;
	if (!f.ip.v6) {
		// RFC 3168 5.3 via the kernel's ip_frag_ecn_table: Not-ECT mixed with
		// ECT or CE is refused; CE with ECT sets CE
		const uint8_t ecn = q->ecn;
		if ((ecn & 1) && (ecn & ~1)) {
			st.frags_in--;	// drop() counts it again
			return drop(GroFragDrop::bad, q);
		}
		if (ecn & 8)
			ip[1] |= std::byte{3};
		st16(ip + 2, static_cast<uint16_t>(len - f.ip.off));
		// DF only when the largest fragment had it (ip_frag_reasm)
		st16(ip + 6, q->max_df_size && q->max_df_size == q->max_size ? kIpDf : 0);
		st16(ip + 10, 0);
		st16(ip + 10, csum_finish(csum_hdr(ip, f.ip.len)));
	} else {
		base[f.frag_next_at] = std::byte{f.frag_next};
		st16(ip + 4, static_cast<uint16_t>(len - f.ip.off - 40));
		// extension headers at the start of the fragmentable part
		for (unsigned k = 0; k < 8 && (proto == 0 || proto == 43 || proto == 60); k++) {
			if (l4_at + 8 > len)
				break;
			const uint32_t hl = (uint32_t{u8(base + l4_at + 1)} + 1) * 8;
			proto = u8(base + l4_at);
			l4_at += hl;
		}
	}
	GroPacket pk;
	pk.data = {base, len};
	pk.segs = q->nfrags;
	pk.flush = GroFlush::reassembled;
	pk.verdict = GroVerdict::frag_reassembled;
	pk.frame = frame_idx;
	pk.hdr_len = static_cast<uint16_t>(q->hdr);
	// the L4 checksum over the whole datagram, from the sums of the copies
	// (the extension headers' sum taken back out)
	const uint32_t l4_len = l4_at <= len ? len - l4_at : 0;
	const bool tcp = proto == kProtoTcp, udp = proto == kProtoUdp;
	if ((tcp && l4_len >= 20) || (udp && l4_len >= 8)) {
		const std::byte *l4 = base + l4_at;
		uint32_t sum = q->sum;
		if (l4_at > q->hdr)
			sum = csum_add32(sum, ~csum_partial(base + q->hdr, l4_at - q->hdr));
		bool ok = true;
		if (udp && ld16(l4 + 6) == 0)
			ok = !f.ip.v6 || f.encap;
		else
			ok = csum_fold16(csum_add32(pseudo(ip, f.ip.v6, proto, l4_len), sum)) == 0xffff;
		if (!ok) {
			pk.csum = GroCsum::bad;
			st.bad_csum[static_cast<size_t>(f.encap ? GroCsumError::inner_l4 : GroCsumError::l4)]++;
		} else {
			pk.csum = GroCsum::unnecessary;
		}
		pk.hdr_len = static_cast<uint16_t>(l4_at + (tcp ? size_t{static_cast<uint8_t>(u8(l4 + 12) >> 4)} * 4 : 8));
	}
	if (f.encap) {
		std::byte *oip = base + f.o.off, *udp_o = base + f.o_l4;
		if (!f.o.v6) {
			st16(oip + 2, static_cast<uint16_t>(len - f.o.off));
			st16(oip + 10, 0);
			st16(oip + 10, csum_finish(csum_hdr(oip, f.o.len)));
		} else {
			st16(oip + 4, static_cast<uint16_t>(len - f.o.off - 40));
		}
		st16(udp_o + 4, static_cast<uint16_t>(len - f.o_l4));
		pk.encap = true;
		if (ld16(udp_o + 6) != 0) {
			// every frame's outer checksum was verified: the reassembled one is written whole
			pk.encap_csum = true;
			st16(udp_o + 6, 0);
			uint32_t os = csum_add32(pseudo(oip, f.o.v6, kProtoUdp, len - f.o_l4),
						 csum_partial(udp_o, q->hdr - f.o_l4));
			uint16_t c = csum_finish(csum_add(os, q->sum, q->hdr - f.o_l4));
			st16(udp_o + 6, c ? c : 0xffff);
			if (pk.csum == GroCsum::unnecessary)
				pk.csum_level = 1;
		}
	}
	st.reassembled++;
	emit(pk, sink);
	frag_release(*q);
	return GroVerdict::frag_reassembled;
}

} // namespace xoffload
