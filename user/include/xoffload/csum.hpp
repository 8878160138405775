// Internet checksum (RFC 1071) primitives, and the copy that computes the
// checksum of what it copies, with run-time CPU dispatch (scalar, AVX2,
// AVX-512). Sums are 32-bit partial sums, folded only at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace xoffload {

// Partial ones-complement sum of bytes, as 16-bit big-endian words added into
// 'sum' (the odd last byte is padded with zero). Never folded to 16 bits.
uint32_t csum_partial(const void *data, size_t len, uint32_t sum = 0) noexcept;

// Copies len bytes from src to dst (no overlap) and returns
// csum_partial(src, len, sum).
uint32_t csum_copy(void *dst, const void *src, size_t len, uint32_t sum = 0) noexcept;

// Folds a partial sum to 16 bits (not complemented).
constexpr uint16_t csum_fold16(uint64_t sum) noexcept
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return static_cast<uint16_t>(sum);
}

// Final checksum value, host order, to be stored big-endian.
constexpr uint16_t csum_finish(uint64_t sum) noexcept
{
	return static_cast<uint16_t>(~csum_fold16(sum));
}

// Adds two partial sums; 'part' started 'offset' bytes after the start of
// the checksummed range (an odd offset swaps its bytes).
constexpr uint32_t csum_add(uint32_t sum, uint32_t part, size_t offset = 0) noexcept
{
	uint16_t p = csum_fold16(part);
	if (offset & 1)
		p = static_cast<uint16_t>((p << 8) | (p >> 8));
	return csum_fold16(uint64_t{sum} + p);
}

enum class CsumImpl { scalar, avx2, avx512 };
// The implementation csum_copy/csum_partial use on this CPU.
CsumImpl csum_impl() noexcept;
const char *to_string(CsumImpl i) noexcept;
// Forces an implementation (tests, benchmarks); returns false if the CPU lacks it.
bool csum_force_impl(CsumImpl i) noexcept;

} // namespace xoffload
