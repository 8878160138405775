// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Shared pieces of the GRO engine: a received frame as one byte string over
// its buffers, its parsed headers, the held flows and fragment queues, and
// the engine's state (GroEngine::Impl).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

#include "../packet/be_fields.hpp"
#include "xoffload/gro/gro.hpp"
#include "xoffload/packet/csum.hpp"

namespace xoffload::gro_detail {

inline constexpr size_t kMaxHdr = 768;		// headers we parse (Geneve outer + inner with options)
inline constexpr uint16_t kEthIpv4 = 0x0800, kEthIpv6 = 0x86DD, kEthTeb = 0x6558;
inline constexpr uint8_t kProtoTcp = 6, kProtoUdp = 17, kProtoFrag = 44;
inline constexpr uint8_t kTcpFin = 0x01, kTcpSyn = 0x02, kTcpRst = 0x04, kTcpPsh = 0x08, kTcpUrg = 0x20,
			 kTcpCwr = 0x80;
inline constexpr uint16_t kIpDf = 0x4000, kIpMf = 0x2000;
inline constexpr uint16_t kNone = 0xffff;	// no slot
inline constexpr size_t kFastHdr = 96;		// header bytes the fast path compares (fast_merge)

using packet_detail::ld16;
using packet_detail::ld32;
using packet_detail::st16;
inline uint64_t ldn64(const std::byte *p) noexcept	// native order: for hashing and comparing
{
	uint64_t v;
	std::memcpy(&v, p, 8);
	return v;
}
inline uint32_t ldn32(const std::byte *p) noexcept
{
	uint32_t v;
	std::memcpy(&v, p, 4);
	return v;
}
inline uint8_t u8(const std::byte *p) noexcept
{
	return std::to_integer<uint8_t>(*p);
}

// A frame's bytes as one string over its buffers.
struct Src {
	const GroFrame *f = nullptr;
	uint32_t len = 0;
	bool one = true;	// a single buffer

	explicit Src(const GroFrame &fr) noexcept : f(&fr)
	{
		size_t n = fr.data.size();
		one = fr.more.empty();
		for (auto b : fr.more)
			n += b.size();
		len = n > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(n);
	}
	// Calls fn(bytes, k, done) for each part of [off, off + n) of the
	// frame, buffer by buffer in order (done: the bytes before the part).
	template <typename F>
	void each_piece(size_t off, size_t n, F &&fn) const noexcept
	{
		size_t done = 0;
		auto piece = [&](std::span<const std::byte> s) {
			if (done == n)
				return;
			if (off >= s.size()) {
				off -= s.size();
				return;
			}
			size_t k = s.size() - off < n - done ? s.size() - off : n - done;
			fn(s.data() + off, k, done);
			done += k;
			off = 0;
		};
		piece(f->data);
		for (auto s : f->more)
			piece(s);
	}
	// Copies [off, off+n) to dst (when dst) and returns the bytes' partial
	// sum taken as if they started at an even offset (when sum).
	template <bool Copy>
	uint32_t take(std::byte *dst, size_t off, size_t n, CsumCopyFn fn) const noexcept
	{
		if (one) [[likely]]
			return Copy ? fn(dst, f->data.data() + off, n, 0) : csum_partial(f->data.data() + off, n, 0);
		uint32_t sum = 0;
		each_piece(off, n, [&](const std::byte *p, size_t k, size_t done) {
			sum = csum_add(sum, Copy ? fn(dst + done, p, k, 0) : csum_partial(p, k, 0), done);
		});
		return sum;
	}
	void copy(std::byte *dst, size_t off, size_t n) const noexcept
	{
		if (n == 0)
			return;
		if (one) [[likely]] {
			std::memcpy(dst, f->data.data() + off, n);
			return;
		}
		each_piece(off, n, [&](const std::byte *p, size_t k, size_t done) { std::memcpy(dst + done, p, k); });
	}
};

// What parse() found.
enum class Cls : uint8_t {
	l4,		// TCP or UDP (inner under Geneve), not a fragment
	frag,		// an IPv4/IPv6 fragment (inner under Geneve)
	other,		// not IP, not TCP/UDP, or headers we do not take (pass carries why)
	malformed,	// headers that lie
};

// One IP layer's place in the frame.
struct Ip {
	uint16_t off = 0;	// IP header
	uint16_t len = 0;	// IPv4 ihl*4; IPv6 40 + extension headers before L4 (or the fragment header)
	bool v6 = false;
	bool opts = false;	// IPv4 options
};

// A frame's headers, located. Offsets from the frame's first byte.
struct Parsed {
	const std::byte *h = nullptr;	// the header bytes, contiguous (the frame's, or gathered)
	uint32_t avail = 0;		// bytes at h
	uint32_t len = 0;		// the frame
	uint32_t end = 0;		// where the (outer) IP packet ends (< len: padded)
	uint16_t l3 = 0;		// the first IP header = the end of L2 (MACs, tags, type)
	bool encap = false;		// Geneve
	Ip o;				// outer IP (encap)
	uint16_t o_l4 = 0;		// outer UDP
	uint16_t gen = 0, gen_len = 0;	// Geneve header and its length with options
	uint16_t in_l2 = 0;		// inner Ethernet (encap), else 0
	Ip ip;				// the (inner) IP layer
	uint8_t proto = 0;		// the (inner) L4 protocol
	uint16_t l4 = 0, l4_len = 0, pay = 0;	// (inner) L4 header, its length, payload offset
	// fragments (Cls::frag)
	bool mf = false;
	uint16_t frag_at = 0;		// IPv6: the fragment header
	uint16_t frag_next_at = 0;	// IPv6: the byte that names the fragment header
	uint8_t frag_next = 0;		// IPv6: what follows the fragment header
	uint32_t foff = 0;		// fragment offset, bytes
	uint32_t fid = 0;		// IPv4 ID / IPv6 identification
	uint16_t fdata = 0;		// where the fragment's data starts
	bool ip_parsed = false;		// ip holds a whole IP header
	bool l4_parsed = false;		// l4..pay hold a whole TCP/UDP header
	GroPass pass = GroPass::kind_off;	// Cls::other: why
};

Cls parse(const Src &s, Parsed &p, std::byte *scratch, uint16_t geneve_port) noexcept;

// How pass() treats a frame's checksums.
enum class Check : uint8_t {
	no,		// not verified: GroCsum::none
	verify,		// verify now
	verified,	// verified already, all good
};

// A held super-packet.
struct Flow {
	std::byte *buf = nullptr;
	uint32_t len = 0;		// bytes in buf
	uint32_t hash = 0;
	uint64_t t0 = 0;		// when its first frame came
	uint32_t psum = 0;		// partial sum of the payload bytes in buf (from pay)
	uint32_t next_seq = 0;		// TCP: the sequence number the next segment must have
	uint16_t gso_size = 0;		// the first segment's payload
	uint16_t segs = 0;
	uint16_t l3 = 0, l4 = 0, pay = 0;	// inner IP, L4, payload (= the first frame's)
	uint16_t o_l3 = 0, o_l4 = 0;	// outer IP and UDP (encap)
	bool v6 = false, o_v6 = false, encap = false, tcp = false;
	bool fixed_id = false, o_fixed_id = false;	// IPv4 IDs fixed (DF), inner and outer
	uint8_t or_flags = 0;		// TCP FIN/PSH of the segments merged
	uint16_t chain = kNone;		// next in the hash bucket
	uint16_t older = kNone, newer = kNone;	// age list
	// zero-copy: buf holds the headers (to pay), then the pieces copied
	// (Impl::zc_piece) up to tail; spans the payload's pieces in order
	std::span<const std::byte> *spans = nullptr;	// kGroMaxSpans
	uint16_t nspans = 0;
	bool last_copied = false;	// spans[nspans - 1] ends at buf + tail: a copy extends it
	uint32_t tail = 0;
	// the fast path (gro.cpp fast_merge): plain TCP whose headers fit in
	// kFastHdr; mask: 0xff on the header bytes a frame must have equal to
	// the first frame's, 0 on the fields that vary (lengths, IPv4 ID and
	// checksum, TCP sequence, checksum, urgent pointer) and past the headers
	bool fast = false;
	uint16_t id0 = 0;		// the first frame's IPv4 ID
	uint32_t ip_sum0 = 0;		// IPv4 header sum, the varying fields taken as 0
	uint32_t l4_sum0 = 0;		// pseudo-header addresses and protocol + TCP header sum, ditto
	alignas(32) std::array<std::byte, kFastHdr> mask{};
};

// A run of fragments within its datagram (inet_frag_queue's rb-tree of
// run heads, FRAG_CB()->frag_run_len).
struct FragRange {
	uint32_t start, end;
};

// A datagram being reassembled: the first fragment's headers at the front
// of buf (up to hdr bytes), the fragmentable part from data_at on.
struct FragQueue {
	bool used = false;
	uint32_t hash = 0;
	uint64_t t0 = 0;
	std::byte *buf = nullptr;
	// key: L2 (MACs, tags), outer addresses, VNI, IP addresses, ID, protocol
	std::array<std::byte, 96> key{};
	uint16_t key_len = 0;
	uint16_t hdr = 0;		// header bytes at buf[0..hdr) (0: the first fragment not seen yet)
	uint16_t data_at = 0;		// where offset 0 of the fragmentable part goes in buf
	uint32_t total = 0;		// the datagram's fragmentable length, once the last fragment came
	uint32_t max_end = 0;		// the furthest end seen
	bool have_last = false;
	uint32_t got = 0;		// bytes of fragment data held
	uint32_t mem = 0;		// accounted (GroConfig::frag_mem)
	uint32_t sum = 0;		// partial sum of the fragmentable part (at its offsets)
	uint16_t nfrags = 0;
	uint16_t nruns = 0;		// runs in ranges
	uint32_t max_size = 0, max_df_size = 0;	// IPv4: the largest fragment, the largest with DF
	uint8_t ecn = 0;		// the ECN codepoints seen, a bit each
	FragRange *ranges = nullptr;	// the runs (kGroMaxFrags at most), sorted by start
	// the first fragment's parse, offsets from buf[0]
	Parsed first;
	bool ok_outer = true;		// every frame's outer checksums verified
};

} // namespace xoffload::gro_detail

namespace xoffload {

struct GroEngine::Impl {
	GroConfig cfg;
	GroStats st;
	CsumCopyFn copy_fn = nullptr;
	// flows: max_flows + 1 slots (one spare: a frame is copied in before the
	// flow it replaces is emitted)
	std::unique_ptr<std::byte[]> flow_mem;
	std::unique_ptr<gro_detail::Flow[]> flows;
	std::unique_ptr<std::span<const std::byte>[]> span_mem;	// zero-copy: kGroMaxSpans per slot
	std::unique_ptr<uint16_t[]> buckets;
	uint32_t nbuckets = 0;		// a power of 2
	uint32_t slot_cap = 0;
	uint16_t free_head = gro_detail::kNone;	// free slots (chained by Flow::chain)
	uint16_t oldest = gro_detail::kNone, newest = gro_detail::kNone;
	uint32_t nheld = 0;
	// fragments
	std::unique_ptr<std::byte[]> frag_mem;
	std::unique_ptr<gro_detail::FragQueue[]> fq;
	std::unique_ptr<gro_detail::FragRange[]> frag_ranges;
	uint32_t frag_cap = 0;
	uint32_t nfq = 0;
	// scratch: gathered headers of a multi-buffer frame, a linearized one
	std::unique_ptr<std::byte[]> hdr_scratch;
	std::unique_ptr<std::byte[]> lin;
	uint32_t lin_cap = 0;
	uint32_t frame_idx = UINT32_MAX;	// the frame receive() is at
	uint16_t last = gro_detail::kNone;	// the fast flow the last frame started or joined
	bool avx2 = false;		// the AVX2 copy+checksum is csum_copy's: called directly

	GroVerdict frame(const GroFrame &f, uint64_t now, GroSink sink) noexcept;
	// last != kNone: merges f into that flow when it continues it in the
	// common way (gro.cpp); false: nothing done, frame() decides.
	bool fast_merge(const GroFrame &f, GroSink sink) noexcept;
	GroVerdict on_frag(const gro_detail::Src &s, gro_detail::Parsed &p, uint64_t now, GroSink sink) noexcept;
	// Emits a frame as it is (v: passed, malformed or a bad_* verdict, which
	// it counts).
	GroVerdict pass(const gro_detail::Src &s, const gro_detail::Parsed *p, GroVerdict v, GroPass why,
			GroSink sink, gro_detail::Check check) noexcept;
	void emit(const GroPacket &pk, GroSink sink) noexcept;
	void frag_release(gro_detail::FragQueue &q) noexcept;
	int frag_expire(uint64_t now, bool all) noexcept;
};

} // namespace xoffload
