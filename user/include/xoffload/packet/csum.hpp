// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Internet checksum (RFC 1071) primitives, and the copy that computes the
// checksum of what it copies, with run-time CPU dispatch (scalar, AVX2,
// AVX-512). Sums are 32-bit partial sums, folded only at the end.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace xoffload {

// Partial ones-complement sum of bytes, as 16-bit big-endian words added into
// 'sum' (the odd last byte is padded with zero). Never folded to 16 bits.
uint32_t csum_partial(const void *data, size_t len, uint32_t sum = 0) noexcept;

// Copies len bytes from src to dst (no overlap) and returns
// csum_partial(src, len, sum).
uint32_t csum_copy(void *dst, const void *src, size_t len, uint32_t sum = 0) noexcept;

// csum_copy of the implementation chosen for this CPU, for a caller that
// copies in a loop: one indirect call per copy, no dispatch (a later
// csum_force_impl does not change what it returned).
using CsumCopyFn = uint32_t (*)(void *dst, const void *src, size_t len, uint32_t sum) noexcept;
CsumCopyFn csum_copy_fn() noexcept;

// Adds two 32-bit partial sums with end-around carry (2^32 == 1 mod 0xffff).
constexpr uint32_t csum_add32(uint32_t a, uint32_t b) noexcept
{
	uint32_t s = a + b;
	return s + (s < b);
}

// The same for sums of native 64-bit words (2^64 == 1 mod 0xffff): one add
// and one add-with-carry.
constexpr uint64_t csum_add64(uint64_t a, uint64_t b) noexcept
{
	a += b;
	return a + (a < b);
}

// Folds a partial sum to 16 bits (not complemented), branch-free: 64 -> 32
// with end-around carry, then the two halves added so that the carry out of
// the low half lands in the high half (x + rotate(x, 16)).
constexpr uint16_t csum_fold16(uint64_t sum) noexcept
{
	uint32_t x = csum_add32(static_cast<uint32_t>(sum), static_cast<uint32_t>(sum >> 32));
	x += (x >> 16) | (x << 16);
	return static_cast<uint16_t>(x >> 16);
}

// Final checksum value, host order, to be stored big-endian.
constexpr uint16_t csum_finish(uint64_t sum) noexcept
{
	return static_cast<uint16_t>(~csum_fold16(sum));
}

// Swaps the bytes of each 16-bit half of a partial sum. Swapping a word's
// bytes multiplies it by 256 modulo 0xffff, so this is the sum of the same
// bytes taken at an odd offset (RFC 1071, 2.B).
constexpr uint32_t csum_swap(uint32_t s) noexcept
{
	return ((s & 0x00ff00ffu) << 8) | ((s >> 8) & 0x00ff00ffu);
}

// A sum of native words as a 32-bit partial sum of big-endian words: the
// ones-complement sum is byte-order independent up to a final swap (RFC
// 1071, 2.B).
constexpr uint32_t csum_native_to_be(uint64_t s) noexcept
{
	uint32_t x = csum_add32(static_cast<uint32_t>(s), static_cast<uint32_t>(s >> 32));
	if constexpr (std::endian::native == std::endian::little)
		x = csum_swap(x);
	return x;
}

// csum_partial of a header: len a multiple of 4 (IPv4, TCP and UDP headers,
// IPv6 addresses), inline, for the few words a header has: native 64-bit
// words (csum_add64), a last 32-bit word, then csum_native_to_be. Unrolled
// where len is a constant.
inline uint32_t csum_hdr(const void *data, size_t len) noexcept
{
	const auto *p = static_cast<const unsigned char *>(data);
	uint64_t s = 0;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		std::memcpy(&w, p + i, 8);
		s = csum_add64(s, w);
	}
	if (i < len) {
		uint32_t w;
		std::memcpy(&w, p + i, 4);
		s = csum_add64(s, w);
	}
	return csum_native_to_be(s);
}

// Adds two partial sums; 'part' started 'offset' bytes after the start of
// the checksummed range (an odd offset swaps its bytes). The result is a
// 32-bit partial sum, not folded.
constexpr uint32_t csum_add(uint32_t sum, uint32_t part, size_t offset = 0) noexcept
{
	return csum_add32(sum, offset & 1 ? csum_swap(part) : part);
}

enum class CsumImpl { scalar, avx2, avx512 };
// The implementation csum_copy/csum_partial use on this CPU.
CsumImpl csum_impl() noexcept;
const char *to_string(CsumImpl i) noexcept;
// Forces an implementation (tests, benchmarks); returns false if the CPU lacks it.
bool csum_force_impl(CsumImpl i) noexcept;

} // namespace xoffload
