// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Software receive offload (GRO), the mirror of gso.hpp: received frames in,
// super-packets out, each frame's bytes copied once into the super-packet it
// joins with its checksums verified during that copy; or, zero-copy
// (GroConfig::zero_copy), the super-packet's headers in the engine and its
// payload left in the frames' buffers, verified where it lies.
//
// Contract (GroEngine):
//  - input: Ethernet frames, each one buffer or a list of buffers (AF_XDP
//    multi-buffer), in arrival order. receive() copies what it keeps: the
//    caller may reuse every frame's buffers as soon as it returns.
//    Zero-copy: a TCP/UDP frame held or merged (its verdict) is not copied
//    but referenced by the packet it joined (GroPacket::frags) until that
//    packet is emitted: the caller keeps the frame's buffers (not the
//    GroFrame or its `more` array) alive and unchanged until then, i.e. at
//    the latest until flush() returns, after which the engine references no
//    frame (held_flows() == 0). AF_XDP: receive() then flush() per RX batch,
//    before the batch's frames go back to the fill ring. Frames of any
//    other verdict may be reused as soon as receive() returns (fragments
//    are copied into the reassembly buffer as in copy mode).
//  - merges, by the kernel's rules (tcp_gro_receive, inet_gro_receive,
//    ipv6_gro_receive, udp_gro_receive_segment, geneve_gro_receive; the
//    engine's comments name the rule each check follows):
//      tcp     TCP over IPv4/IPv6: same flow (addresses, ports, VLAN tag
//              stack, IPv6 flow label), in-order sequence, equal ACK, window
//              and options (timestamps included, byte for byte, as the kernel
//              compares them), equal TTL/hop limit, TOS/traffic class and DF;
//              IPv4 IDs incrementing, or fixed with DF (6.x's ip_fixedid);
//              a segment longer than the first ends nothing but is not
//              merged; one shorter, or with PSH/FIN, is merged and ends the
//              run; SYN/RST/URG are never merged, CWR only first.
//      udp     UDP_GRO: same flow, non-zero checksum, equal-size datagrams,
//              the last one may be shorter and ends the run; at most 64
//              (UDP_GRO_CNT_MAX) per super-packet.
//      frag    IPv4 (RFC 791) and IPv6 (RFC 8200) reassembly: overlapping
//              fragments refuse the datagram (RFC 5722; the kernel does the
//              same for IPv4 since 4.19), but one inside a run of contiguous
//              fragments held is a duplicate, dropped alone (as the kernel's
//              inet_frag_queue_insert), so do fragments beyond 65535 bytes,
//              a queue older than frag_timeout_ns, and fragments past the
//              frag_mem bound (ipfrag_high_thresh).
//      geneve  Geneve frames (GroConfig::geneve_port) whose outer headers
//              are equal but for lengths, IPv4 ID and checksums, with equal
//              VNI and options, merged by their inner flow: inner TCP always,
//              inner UDP when udp is on too, inner fragments (reassembled
//              under the first frame's outer headers) when frag is on too.
//    VLAN tags (802.1Q, 802.1ad, up to 2) are part of every flow key.
//    IPv4 with options is passed (the kernel merges only ihl 5) unless
//    GroConfig::ipv4_options, which merges equal options.
//  - output: every packet, merged or passed, goes to the sink in the order
//    the kernel would deliver it; GroPacket::data and ::frags are valid only
//    during the sink call. Copy mode: a packet is data, one buffer. Zero-copy:
//    data, then the frags in order (a super-packet: its headers in the
//    engine, then its payload pieces, each in a frame's buffer or, pieces
//    shorter than GroConfig::zc_min_span or past kGroMaxSpans, copied into
//    the engine behind the headers); a multi-buffer frame passed: its
//    buffers as they are. Every verdict, merge, flush cause, statistic,
//    checksum state and byte of output is the same in both modes; only
//    where the bytes lie differs (GroPacket::gather gives copy mode's
//    buffer). A super-packet's headers are its first frame's, with the
//    length fields (IPv4 total length, IPv6 payload length, UDP length,
//    outer ones under Geneve) and IPv4 header checksums rewritten, the TCP
//    FIN/PSH of the last segment or'ed in, and the L4 checksum per
//    GroConfig::csum_out (see GroCsumOut). Reassembled datagrams: the first
//    fragment's headers, fragment fields cleared (IPv4: MF and offset 0,
//    DF kept only when every fragment had it, as ip_frag_reasm; IPv6: the
//    fragment header removed).
//  - nothing is held forever: flush() at the end of a batch, flush_expired()
//    on a clock, the flow table bound (max_flows: the oldest flow is flushed
//    to make room) and the fragment bounds.
//  - checksums: a frame that starts or joins a super-packet is always
//    verified (the IPv4 header, TCP/UDP, under Geneve the outer UDP when
//    non-zero and the inner IPv4 header and TCP/UDP), during its copy
//    (zero-copy: by a checksum-only pass over the bytes where they lie): the
//    kernel's GRO validates every segment it merges, and a super-packet's
//    checksum could not be written for unverified parts. verify_csum
//    verifies the frames passed as they are too. A bad checksum: the frame
//    is never merged and flushes nothing; it is emitted
//    as it is, GroPacket::csum == GroCsum::bad, its verdict and
//    GroStats::bad_csum say why. The kernel does the same (delivered
//    unmerged with CHECKSUM_NONE, dropped later by the stack).
//    A frame held and emitted alone (segs 1) goes out unchanged.
//  - errors: the constructor-like create() returns -EINVAL for a config out
//    of range, -ENOMEM when the buffers cannot be allocated; receive()
//    returns the number of packets emitted, or -EINVAL when verdicts is
//    neither empty nor as long as frames (nothing done then). Malformed
//    frames are not errors: they are emitted as they are and counted.
//  - hot path: no allocation, no virtual call; every buffer is allocated by
//    create(). Not thread-safe: one engine per receive thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>

#include "xoffload/gso/gso.hpp"

namespace xoffload {

// What the engine merges. All off: every frame is passed (verified when
// verify_csum).
struct GroKinds {
	bool tcp = false;
	bool udp = false;
	bool frag = false;
	bool geneve = false;	// Geneve inner TCP/UDP (as tcp/udp allow) and inner fragments (frag)
	bool any() const noexcept { return tcp || udp || frag || geneve; }
};

// "tcp,udp,frag,geneve" (any subset, any order; "all"; "" or "none": none)
// into *out: 0, or -EINVAL naming nothing (the caller has the string).
int gro_kinds_parse(std::string_view s, GroKinds *out) noexcept;

// What a super-packet's L4 checksum field holds when it is emitted.
enum class GroCsumOut : uint8_t {
	complete,	// the checksum of the whole super-packet (from the sums the
			// copy took): a valid packet for a pcap, a forwarder, a tap
	partial,	// the kernel's tcp_gro_complete/udp_gro_complete: the
			// pseudo-header sum, with csum_start/csum_offset set
			// (virtio_net_hdr NEEDS_CSUM); what a packet socket captures
			// after the kernel's GRO
};

struct GroConfig {
	GroKinds kinds;
	bool verify_csum = true;	// verify passed frames too (merged ones always are): see the contract
	GroCsumOut csum_out = GroCsumOut::complete;
	bool ipv4_options = false;	// merge IPv4 with (equal) options; the kernel does not
	uint16_t geneve_port = 6081;	// outer UDP destination port of Geneve frames
	uint32_t max_flows = 64;	// super-packets held at once (kernel: 8 buckets x MAX_GRO_SKBS 8)
	uint32_t max_size = 65535;	// bytes from the L3 header (tags and, under Geneve, the outer
					// headers included, as the kernel's skb->len): GRO_LEGACY_MAX_SIZE - 1
	uint16_t max_segs_udp = 64;	// UDP_GRO_CNT_MAX
	uint16_t max_segs_tcp = 0;	// 0: bounded by max_size only, as the kernel
	uint64_t flush_timeout_ns = 1'000'000;	// flush_expired(): a super-packet held this long goes out
	// zero-copy: TCP and UDP payloads (plain and under Geneve) stay in the
	// frames' buffers, referenced by GroPacket::frags, checksummed without a
	// copy; see the contract for the buffers' lifetime. Reassembled
	// fragments are copied still.
	bool zero_copy = false;
	// zero-copy: a payload piece shorter than this is copied behind the
	// headers all the same (a piece per tiny segment costs a consumer's
	// gather more than the copy; contiguous copies make one piece)
	uint32_t zc_min_span = 256;
	// fragments
	uint32_t frag_mem = 4u << 20;	// bytes held in fragment queues (ipfrag_high_thresh); each
					// fragment costs its bytes + kGroFragOverhead
	uint32_t frag_queues = 64;	// datagrams being reassembled at once
	uint64_t frag_timeout_ns = 30'000'000'000;	// ipfrag_time
};

// Accounting cost of one held fragment beyond its bytes (the kernel counts
// skb truesize): a stream of tiny fragments reaches frag_mem too.
inline constexpr uint32_t kGroFragOverhead = 256;
// Fragments one datagram may have (a hostile stream of 8-byte fragments
// would otherwise need 8192 records per datagram).
inline constexpr uint32_t kGroMaxFrags = 256;
// Zero-copy: at most this many GroPacket::frags per packet; once all but
// one are taken, the payloads merged after are copied (into the last).
inline constexpr uint32_t kGroMaxSpans = 256;

// What happened to one input frame.
enum class GroVerdict : uint8_t {
	held,			// started a super-packet, held
	merged,			// appended to a held super-packet
	passed,			// emitted as it is: not of a kind merged, or one the kernel would not merge
				// (SYN/RST/URG, no payload, IP options, UDP without checksum, ...)
	malformed,		// headers that lie (lengths, IHL, data offset): emitted as it is
	bad_ipv4_csum,		// emitted as it is, GroCsum::bad (outer header under Geneve)
	bad_l4_csum,		// TCP/UDP checksum (not under Geneve)
	bad_outer_udp_csum,	// Geneve: the outer UDP checksum (when non-zero)
	bad_inner_ipv4_csum,	// Geneve: the inner IPv4 header
	bad_inner_l4_csum,	// Geneve: the inner TCP/UDP checksum
	frag_held,		// a fragment kept for reassembly
	frag_reassembled,	// the fragment that completed a datagram (emitted)
	frag_dropped,		// refused (GroStats::frag_drop says why): not emitted, its datagram dropped
};
const char *to_string(GroVerdict v) noexcept;

// Why a packet went out.
enum class GroFlush : uint8_t {
	passed,		// never held (GroVerdict passed, malformed, bad_*)
	batch_end,	// flush()
	timeout,	// flush_expired()
	table_full,	// the oldest flow, to make room (max_flows)
	flags,		// the last segment carried PSH or FIN
	short_seg,	// a segment shorter than gso_size (TCP) or the last shorter datagram (UDP) ended it
	size,		// the next segment would pass max_size
	segs,		// max_segs reached
	mismatch,	// the next frame of the flow did not continue it (sequence, ACK, options, TTL,
			// TOS, IP ID, flags, a longer segment, a bad checksum, ...): it starts anew
	reassembled,	// a datagram whose fragments were all there
	count_		// number of causes
};
const char *to_string(GroFlush f) noexcept;

// The checksum state of an emitted packet, as a receiver's skb would have it.
enum class GroCsum : uint8_t {
	none,		// not verified (verify_csum off): CHECKSUM_NONE
	unnecessary,	// every checksum verified (csum_level: how many beyond the first, as the
			// kernel's csum_level): CHECKSUM_UNNECESSARY; the L4 field holds the
			// complete checksum (GroCsumOut::complete)
	partial,	// verified, and the L4 checksum field holds the pseudo-header sum
			// (GroCsumOut::partial): CHECKSUM_PARTIAL, csum_start/csum_offset set
	bad,		// a checksum is wrong (the frame's verdict says which): passed as it is
};
const char *to_string(GroCsum c) noexcept;

// One emitted packet: what a virtio_net_hdr / skb_shared_info would say.
// Offsets (hdr_len, csum_start) are into the whole packet: data then frags.
struct GroPacket {
	std::span<const std::byte> data;	// the packet, from its Ethernet header; valid during the sink call.
						// Zero-copy: its first bytes (a held packet's: hdr_len at least)
	std::span<const std::span<const std::byte>> frags;	// zero-copy: the bytes after data, in order
						// (skb frag_list, chained mbufs); empty in copy mode
	GsoType gso_type = GsoType::none;	// tso4/tso6 (TCP), uso4/uso6 (UDP_GRO: SKB_GSO_UDP_L4);
						// none when segs == 1 or reassembled; under Geneve the inner's
	uint16_t gso_size = 0;			// payload bytes of every segment but maybe the last (0: segs == 1)
	uint16_t segs = 1;			// frames merged (reassembled: fragments)
	uint16_t hdr_len = 0;			// bytes before the (inner) L4 payload
	uint16_t csum_start = 0;		// GroCsum::partial: where the L4 checksum's sum starts
	uint16_t csum_offset = 0;		// ... and where, after csum_start, it is stored
	GroCsum csum = GroCsum::none;
	uint8_t csum_level = 0;			// GroCsum::unnecessary: 1 when the inner L4 under Geneve was verified too
	bool encap = false;			// Geneve: gso_type is the inner's (SKB_GSO_UDP_TUNNEL)
	bool encap_csum = false;		// ... with a non-zero outer UDP checksum (SKB_GSO_UDP_TUNNEL_CSUM)
	GroFlush flush = GroFlush::passed;	// why it went out
	GroVerdict verdict = GroVerdict::passed;	// passed packets: the frame's verdict; else held
	uint32_t frame = UINT32_MAX;		// passed packets: the frame's index in its receive() call

	// The packet's length: data and every frag.
	size_t size() const noexcept
	{
		size_t n = data.size();
		for (auto f : frags)
			n += f.size();
		return n;
	}
	// Copies the packet into out, as copy mode emits it: the bytes copied,
	// or 0 (nothing copied) when out is shorter than size().
	size_t gather(std::span<std::byte> out) const noexcept
	{
		if (out.size() < size())
			return 0;
		if (!data.empty())
			std::memcpy(out.data(), data.data(), data.size());
		size_t at = data.size();
		for (auto f : frags) {
			if (!f.empty())
				std::memcpy(out.data() + at, f.data(), f.size());
			at += f.size();
		}
		return at;
	}
};

// Where packets go. A function pointer and a context, no std::function: one
// indirect call per packet. gro_sink(f) wraps a callable (kept by reference).
using GroSinkFn = void (*)(void *ctx, const GroPacket &p) noexcept;
struct GroSink {
	GroSinkFn fn = nullptr;
	void *ctx = nullptr;
	void operator()(const GroPacket &p) const noexcept { fn(ctx, p); }
};
template <typename F>
GroSink gro_sink(F &f) noexcept
{
	return GroSink{[](void *ctx, const GroPacket &p) noexcept { (*static_cast<F *>(ctx))(p); }, &f};
}

// One received frame: its first (or only) buffer, then the others of a
// multi-buffer frame.
struct GroFrame {
	std::span<const std::byte> data;
	std::span<const std::span<const std::byte>> more;
};

// Why a fragment was refused (GroVerdict::frag_dropped), or a datagram
// given up later (timeout).
enum class GroFragDrop : uint8_t {
	overlap,	// overlaps a fragment held (RFC 5722): the datagram is dropped
	too_big,	// ends past 65535 bytes of IP payload
	bad,		// malformed: a non-last fragment not a multiple of 8, empty, inconsistent
			// ends (data past a last fragment, two last fragments of different ends)
	mem,		// frag_mem would be passed: the fragment is dropped (ipfrag_high_thresh)
	queues,		// frag_queues datagrams already in reassembly
	timeout,	// frag_timeout_ns passed before the datagram was complete (or drop_fragments())
	dup,		// inside a run of contiguous fragments held (inet_frag_queue_insert's IPFRAG_DUP, whatever
			// its bytes): this one dropped, the datagram kept; crossing a run's edge is an overlap
	too_many,	// more than kGroMaxFrags fragments in one datagram: the datagram is dropped
	count_
};
const char *to_string(GroFragDrop d) noexcept;

// Why a frame was passed without merging (GroVerdict::passed).
enum class GroPass : uint8_t {
	kind_off,	// not of a kind GroConfig::kinds merges (or not TCP/UDP/fragment at all)
	flags,		// SYN, RST, URG; PSH or FIN with no flow to join (the kernel holds none of these)
	no_payload,	// TCP without payload (pure ACK), UDP datagram of 0 bytes
	ip_options,	// IPv4 with options (GroConfig::ipv4_options off)
	udp_no_csum,	// UDP checksum zero: UDP_GRO needs one
	ipv6_ext,	// IPv6 extension headers the kernel does not pull (or too many)
	geneve_hdr,	// Geneve version, OAM bit, options too long, not Ethernet inside
	too_big,	// longer than max_size alone
	padded,		// bytes past the IP length (Ethernet padding): the kernel merges none
	count_
};
const char *to_string(GroPass p) noexcept;

// Bad checksums, by where (GroVerdict::bad_*).
enum class GroCsumError : uint8_t { ipv4_hdr, l4, outer_udp, inner_ipv4_hdr, inner_l4, count_ };
const char *to_string(GroCsumError e) noexcept;

struct GroStats {
	uint64_t frames_in = 0;
	uint64_t bytes_in = 0;
	uint64_t packets_out = 0;	// every packet emitted, merged or not
	uint64_t bytes_out = 0;
	uint64_t super_packets = 0;	// packets out made of 2 frames or more
	uint64_t held = 0;		// frames that started a super-packet
	uint64_t merged = 0;		// frames appended to one
	uint64_t passed = 0;		// frames emitted as they were (pass_by, malformed and bad checksums included)
	uint64_t malformed = 0;
	std::array<uint64_t, static_cast<size_t>(GroPass::count_)> pass_by{};
	std::array<uint64_t, static_cast<size_t>(GroFlush::count_)> flush_by{};
	std::array<uint64_t, static_cast<size_t>(GroCsumError::count_)> bad_csum{};
	// fragments
	uint64_t frags_in = 0;		// fragments taken into reassembly (held, completing or dropped):
					// frames_in == held + merged + passed + frags_in
	uint64_t reassembled = 0;	// datagrams
	// fragments dropped, by reason; a datagram given up drops the fragments
	// it held under the same reason
	std::array<uint64_t, static_cast<size_t>(GroFragDrop::count_)> frag_drop{};
	uint64_t frag_mem = 0;		// bytes held now (accounting of GroConfig::frag_mem)
	uint64_t frag_mem_peak = 0;

	uint64_t bad_csum_total() const noexcept;
	uint64_t frag_drop_total() const noexcept;
	// frames_in / packets_out (1 when nothing went out)
	double merge_ratio() const noexcept;
	// Sums another engine's (per-thread engines); frag_mem and its peak add too.
	GroStats &operator+=(const GroStats &o) noexcept;
};

class GroEngine {
public:
	// 0 and *out set, or -EINVAL (a config field out of range: max_flows 0 or
	// > 4096, max_size < 128 or > 65535, frag_queues 0 or > 4096, geneve_port
	// 0) or -ENOMEM. Allocates max_flows + 1 buffers of max_size and
	// frag_queues of 64 KiB (address space; pages are touched as used);
	// zero-copy, kGroMaxSpans spans (4 KiB) per buffer too.
	static int create(const GroConfig &c, std::unique_ptr<GroEngine> *out) noexcept;
	~GroEngine();
	GroEngine(const GroEngine &) = delete;
	GroEngine &operator=(const GroEngine &) = delete;

	// Takes frames received at now_ns (any monotonic clock, the same for
	// every call); verdicts: empty, or one per frame (filled). Emits through
	// sink the packets this completes. Returns the number emitted, or -EINVAL
	// (verdicts' size): see the contract at the top.
	int receive(std::span<const GroFrame> frames, uint64_t now_ns, std::span<GroVerdict> verdicts,
		    GroSink sink) noexcept;
	// One frame (same rules); returns its verdict.
	GroVerdict receive_one(const GroFrame &frame, uint64_t now_ns, GroSink sink) noexcept;

	// Emits every held super-packet (GroFlush::batch_end); fragment queues
	// stay. Returns the number emitted.
	int flush(GroSink sink) noexcept;
	// Emits super-packets held since before now_ns - flush_timeout_ns
	// (GroFlush::timeout) and drops fragment queues older than
	// frag_timeout_ns (GroFragDrop::timeout). Returns the number emitted.
	int flush_expired(uint64_t now_ns, GroSink sink) noexcept;
	// Drops every fragment queue (counted as timeouts), e.g. at the end of a run.
	void drop_fragments() noexcept;

	const GroStats &stats() const noexcept;
	const GroConfig &config() const noexcept;
	uint32_t held_flows() const noexcept;
	uint32_t frag_queues() const noexcept;

	struct Impl;

private:
	explicit GroEngine(std::unique_ptr<Impl> impl) noexcept;
	std::unique_ptr<Impl> impl_;
};

} // namespace xoffload
