// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Software segmentation offload: one super-packet in, finished frames out,
// each written exactly once into a caller-provided buffer (a UMEM frame),
// with VLAN tags inserted and checksums computed during that one copy.
//
// Contract (gso_segment):
//  - input: an Ethernet frame (optionally already tagged), IPv4 or IPv6, TCP
//    or UDP, payload up to 64 KiB, contiguous or as a list of spans; the
//    headers may cross span boundaries.
//  - returns the number of frames written (>= 1), or a negative errno:
//      -EINVAL   malformed input or request (see *why)
//      -ENOTSUP  unsupported combination (e.g. tso4 on a UDP packet)
//      -EMSGSIZE mss too small or too large for the frames
//      -ENOBUFS  fewer buffers than segments, or a buffer too small
//    A payload that fits in one mss still gives one frame (tags, encap and
//    checksums applied): "nothing to segment" is not an error.
//  - never reads past the input nor writes past a buffer's capacity; the
//    input and the buffers must not overlap (the input is read while
//    frames are written).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace xoffload {

enum class GsoType : uint8_t { none, tso4, tso6, uso4, uso6, ufo4, ufo6 };
const char *to_string(GsoType t) noexcept;

enum class GsoError : uint8_t {
	ok,
	unsupported,		// request does not match the packet or is not implemented
	too_short,		// input ends inside the headers
	bad_l2,			// not Ethernet + IPv4/IPv6 (after at most 2 tags)
	bad_ipv4,		// version, ihl < 5, total length lies, fragment
	bad_ipv6,		// payload length lies, unknown or too many extension headers
	bad_l4,			// TCP doff < 5, UDP length lies, header past the end
	mss_too_small,
	mss_too_large,		// a segment would not fit the buffers
	too_many_segments,	// more segments than buffers
	buffer_too_small,
	too_many_tags,
	bad_geneve,		// options not a multiple of 4 or > 252 bytes
};
const char *to_string(GsoError e) noexcept;

struct GsoVlanTag {
	uint16_t tpid = 0x8100;
	uint16_t vid = 0;
	uint8_t pcp = 0;
	bool dei = false;
};

struct MacAddr {
	std::array<uint8_t, 6> b{};
};

// Outer headers for Geneve (RFC 8926) around every inner frame.
struct GeneveEncap {
	MacAddr dst_mac, src_mac;
	bool ipv6 = false;
	std::array<uint8_t, 16> src_ip{}, dst_ip{};	// IPv4 uses the first 4 bytes
	uint16_t dst_port = 6081;
	uint32_t vni = 0;				// 24 bits
	std::span<const std::byte> options;		// TLVs, multiple of 4, <= 252 bytes
	bool udp_csum = false;				// outer UDP checksum, else zero
	uint8_t ttl = 64;
};

enum class CsumMode : uint8_t {
	software,	// every checksum computed here
	tx_metadata,	// L4 checksum left partial (pseudo-header sum) for the NIC
			// (AF_XDP TX metadata): see GsoFrame::csum_start/offset
};

struct GsoRequest {
	GsoType type = GsoType::none;
	uint16_t mss = 0;		// payload bytes per segment (UFO: per fragment)
	uint8_t ntags = 0;		// tags inserted outermost, during the copy
	std::array<GsoVlanTag, 2> tags{};
	const GeneveEncap *geneve = nullptr;	// inner frame = the segment
	CsumMode csum = CsumMode::software;
	bool fixed_ipid = false;	// keep the IPv4 ID of every segment (TSO/USO)
	uint32_t ipv6_frag_id = 0;	// UFO6 identification; 0 = derived from the flow
};

// One output buffer. gso_segment fills len (and the csum fields in
// tx_metadata mode); data/cap come from the caller.
struct GsoFrame {
	std::byte *data = nullptr;
	uint32_t cap = 0;
	uint32_t len = 0;
	uint16_t csum_start = 0;	// tx_metadata: where the NIC starts summing
	uint16_t csum_offset = 0;	// tx_metadata: where, after csum_start, it stores
	bool csum_partial = false;	// tx_metadata requested for this frame
};

// See the contract at the top of this file.
int gso_segment(std::span<const std::span<const std::byte>> input, const GsoRequest &req,
		std::span<GsoFrame> out, GsoError *why = nullptr) noexcept;

inline int gso_segment(std::span<const std::byte> input, const GsoRequest &req, std::span<GsoFrame> out,
		       GsoError *why = nullptr) noexcept
{
	const std::span<const std::byte> one[1] = {input};
	return gso_segment(std::span<const std::span<const std::byte>>(one), req, out, why);
}

// Number of frames gso_segment would produce, or a negative errno (same
// checks, nothing written). Lets callers reserve exactly that many buffers.
int gso_count(std::span<const std::span<const std::byte>> input, const GsoRequest &req,
	      GsoError *why = nullptr) noexcept;

} // namespace xoffload
