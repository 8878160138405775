// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Shared pieces of the segmentation engine: the parsed super-packet, the
// input cursor over a list of spans, and big-endian field access.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "../packet/be_fields.hpp"
#include "xoffload/packet/csum.hpp"
#include "xoffload/gso/gso.hpp"

namespace xoffload::gso_detail {

inline constexpr size_t kMaxHdr = 512;	// L2 + L3 + L4 headers we accept
inline constexpr size_t kMacLen = 12;
inline constexpr size_t kVlanLen = 4;
inline constexpr size_t kGeneveHdr = 8;
inline constexpr uint16_t kEthIpv4 = 0x0800, kEthIpv6 = 0x86DD, kEthTeb = 0x6558;
inline constexpr uint8_t kProtoTcp = 6, kProtoUdp = 17, kProtoFrag = 44;

// Big-endian fields as single loads and stores (the engine patches several
// per frame).
using packet_detail::ld16;
using packet_detail::ld32;
using packet_detail::st16;
using packet_detail::st32;

// Reads a list of spans as one byte string.
class Input {
public:
	explicit Input(std::span<const std::span<const std::byte>> spans) noexcept : spans_(spans)
	{
		for (auto s : spans)
			total_ += s.size();
	}
	size_t size() const noexcept { return total_; }
	// The first len bytes in place when the first span holds them, else null.
	const std::byte *contiguous(size_t len) const noexcept
	{
		return !spans_.empty() && spans_[0].size() >= len ? spans_[0].data() : nullptr;
	}

	// Copies [off, off+len) into dst; returns the partial checksum of the
	// copied bytes as if they started at an even offset. off+len <= size().
	uint32_t copy(std::byte *dst, size_t off, size_t len, bool with_csum) const noexcept
	{
		if (spans_.size() == 1) [[likely]]
			return with_csum ? copy_fn_(dst, spans_[0].data() + off, len, 0)
					 : (std::memcpy(dst, spans_[0].data() + off, len), 0u);
		uint32_t sum = 0;
		size_t done = 0;
		for (auto s : spans_) {
			if (off >= s.size()) {
				off -= s.size();
				continue;
			}
			size_t n = s.size() - off < len - done ? s.size() - off : len - done;
			if (with_csum)
				sum = csum_add(sum, copy_fn_(dst + done, s.data() + off, n, 0), done);
			else
				std::memcpy(dst + done, s.data() + off, n);
			done += n;
			off = 0;
			if (done == len)
				break;
		}
		return sum;
	}

private:
	std::span<const std::span<const std::byte>> spans_;
	size_t total_ = 0;
	CsumCopyFn copy_fn_ = csum_copy_fn();
};

// A header's few dozen bytes in 16-byte moves (the last ones overlapping
// the ones before), instead of a call to memcpy; up to 96 bytes unrolled.
inline void copy_hdr(std::byte *d, const std::byte *s, size_t n) noexcept
{
	if (n < 32) {
		if (n < 16) {
			std::memcpy(d, s, n);
			return;
		}
		std::memcpy(d, s, 16);
		std::memcpy(d + n - 16, s + n - 16, 16);
		return;
	}
	std::memcpy(d, s, 32);
	if (n > 64) {
		std::memcpy(d + 32, s + 32, 32);
		for (size_t i = 64; i + 32 < n; i += 32)
			std::memcpy(d + i, s + i, 32);
	}
	std::memcpy(d + n - 32, s + n - 32, 32);
}

// The super-packet's headers, located.
struct Parsed {
	// the first hdr_len bytes of the input: in place when its first span
	// holds them (the usual case), else gathered into buf
	const std::byte *hdr = nullptr;
	std::array<std::byte, kMaxHdr> buf;
	Parsed() = default;
	Parsed(const Parsed &) = delete;	// hdr may point into buf
	Parsed &operator=(const Parsed &) = delete;
	size_t hdr_len = 0;			// = payload_off
	size_t l2_len = 0;			// MACs + existing tags + ethertype
	unsigned l2_tags = 0;
	bool ipv6 = false;
	size_t l3_off = 0, l3_len = 0;		// IPv4 ihl*4; IPv6 40 + extension headers
	uint8_t l4_proto = 0;
	size_t l4_off = 0, l4_len = 0;
	size_t payload_off = 0, payload_len = 0;
	// IPv6: unfragmentable part (from l3_off) and the byte naming what follows it
	size_t ip6_unfrag_len = 0;
	size_t ip6_unfrag_next_off = 0;		// offset in hdr of that next-header byte
};

GsoError parse(const Input &in, Parsed &p) noexcept;

// For tests and the fuzzer: where the one-pass plan of the common shape
// differs from the general one ("" when they agree; nullopt when the fast
// path does not take the input).
std::optional<std::string> plans_differ(std::span<const std::span<const std::byte>> input, const GsoRequest &req,
					std::span<GsoFrame> out);

// 16-bit flow hash of the inner 5-tuple (outer UDP source port, IPv6 frag id).
uint32_t flow_hash(const Parsed &p) noexcept;

} // namespace xoffload::gso_detail
