// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The scalar and AVX2 copy+checksum kernels, inline: csum.cpp dispatches to
// them, and the GSO engine's common path (gso.cpp) inlines the AVX2 one into
// its frame loop, where a call per frame cost more than the call's work
// around the copy itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "xoffload/packet/csum.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace xoffload::csum_detail {

// Loads n (< 8) bytes as the big-endian-word sum contribution.
inline uint64_t sum_tail(const uint8_t *p, size_t n) noexcept
{
	uint64_t s = 0;
	size_t i = 0;
	for (; i + 1 < n; i += 2)
		s += static_cast<uint64_t>(p[i]) << 8 | p[i + 1];
	if (i < n)
		s += static_cast<uint64_t>(p[i]) << 8;
	return s;
}

inline uint32_t scalar_copy(void *dst, const void *src, size_t len, uint32_t sum, bool copy) noexcept
{
	const uint8_t *s = static_cast<const uint8_t *>(src);
	uint8_t *d = static_cast<uint8_t *>(dst);
	uint64_t acc = 0;
	size_t i = 0;

	for (; i + 32 <= len; i += 32) {
		uint64_t w[4];
		std::memcpy(w, s + i, 32);
		if (copy)
			std::memcpy(d + i, w, 32);
		acc = csum_add64(acc, w[0]);
		acc = csum_add64(acc, w[1]);
		acc = csum_add64(acc, w[2]);
		acc = csum_add64(acc, w[3]);
	}
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		std::memcpy(&w, s + i, 8);
		if (copy)
			std::memcpy(d + i, &w, 8);
		acc = csum_add64(acc, w);
	}
	uint64_t tail = 0;
	if (i < len) {
		if (copy)
			std::memcpy(d + i, s + i, len - i);
		tail = sum_tail(s + i, len - i);
	}
	return csum_add32(csum_add32(sum, csum_native_to_be(acc)), static_cast<uint32_t>(tail));
}

#if defined(__x86_64__)

// The vector sums add 16-bit words with one vpmaddwd per vector: each word is
// first biased to a signed value (w ^ 0x8000 == w - 32768 as int16), the
// multiply by 1 adds neighbour pairs into signed 32-bit lanes, and the bias
// (32768 per word) is added back once at the end. Three operations per vector
// (xor, madd, add) where unpacking to 32 bits takes four, and the multiplier
// ports are otherwise idle.

// Word mask for a tail of r (< vector size, even) bytes at the end of the
// last full vector: the first bytes were summed already.
alignas(64) inline constexpr uint8_t tail_mask[128] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

// Signed sum of the 32-bit lanes of a + b (a: |x| <= 2^29, b: < 2^19; the sum fits).
__attribute__((target("avx2"))) inline int64_t hsum_s32(__m256i a, __m256i b) noexcept
{
	__m256i s = _mm256_add_epi32(a, b);
	__m256i q = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(s)),
				     _mm256_cvtepi32_epi64(_mm256_extracti128_si256(s, 1)));
	__m128i h = _mm_add_epi64(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
	return _mm_cvtsi128_si64(h) + _mm_extract_epi64(h, 1);
}

// The biased words of v summed in pairs into 32-bit lanes (see above).
__attribute__((target("avx2"))) inline __m256i madd_biased(__m256i v, __m256i bias, __m256i ones) noexcept
{
	return _mm256_madd_epi16(_mm256_xor_si256(v, bias), ones);
}

// 128 bytes copied (Copy) and summed: the four vectors' madds added
// pairwise, |lane| <= 2^18.
template <bool Copy>
__attribute__((target("avx2"))) inline __m256i avx2_round(uint8_t *d, const uint8_t *s, size_t i, __m256i bias,
							   __m256i ones) noexcept
{
	s += i;
	__m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s));
	__m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + 32));
	__m256i v2 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + 64));
	__m256i v3 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + 96));
	if constexpr (Copy) {
		// d is null when only summing: offset only here
		d += i;
		_mm256_storeu_si256(reinterpret_cast<__m256i *>(d), v0);
		_mm256_storeu_si256(reinterpret_cast<__m256i *>(d + 32), v1);
		_mm256_storeu_si256(reinterpret_cast<__m256i *>(d + 64), v2);
		_mm256_storeu_si256(reinterpret_cast<__m256i *>(d + 96), v3);
	}
	__m256i m01 = _mm256_add_epi32(madd_biased(v0, bias, ones), madd_biased(v1, bias, ones));
	__m256i m23 = _mm256_add_epi32(madd_biased(v2, bias, ones), madd_biased(v3, bias, ones));
	return _mm256_add_epi32(m01, m23);
}

// A copy whose destination is not 32-byte aligned (a UMEM frame's payload
// follows 14 + 20 + 20.. header bytes) splits every other store across two
// cache lines. The copy therefore starts with one unaligned vector, sums only
// its first 'head' bytes, and goes on from the next aligned destination
// address: stores aligned, loads not. Returns head (0 when not worth it or
// odd: the words would then straddle the sum's pairing).
template <size_t Vec>
inline size_t head_to_align(const uint8_t *d, size_t len) noexcept
{
	size_t head = (Vec - (reinterpret_cast<uintptr_t>(d) & (Vec - 1))) & (Vec - 1);
	return (head & 1) || len < 2 * Vec ? 0 : head;
}

// The madd results of a 256-byte round are added pairwise into one
// accumulator: 48 instructions a round where four accumulators over 128-byte
// rounds took 58 for the same bytes (GCC copied each of them between
// registers every round).
template <bool Copy>
__attribute__((target("avx2"))) inline uint32_t avx2_sum(uint8_t *d, const uint8_t *s, size_t len, uint32_t sum) noexcept
{
	const __m256i bias = _mm256_set1_epi16(static_cast<short>(0x8000));
	const __m256i ones = _mm256_set1_epi16(1);
	__m256i a0 = _mm256_setzero_si256(), a1 = a0;	// body rounds; head and tail
	int64_t acc = 0;
	size_t i = 0;
	if constexpr (Copy) {
		if (size_t head = head_to_align<32>(d, len)) {
			__m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s));
			_mm256_storeu_si256(reinterpret_cast<__m256i *>(d), v);
			// tail_mask + 64 - head has 0xff from byte head on: keep the bytes before
			__m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(tail_mask + 64 - head));
			a1 = _mm256_madd_epi16(_mm256_andnot_si256(m, _mm256_xor_si256(v, bias)), ones);
			i = head;
		}
	}
	while (len - i >= 32) {
		// a lane of a0 gains |x| <= 2^19 per 256-byte round: 1024 rounds keep it <= 2^29
		size_t end = len - i > 1024 * 256 ? i + 1024 * 256 : len;
		for (; i + 256 <= end; i += 256)
			a0 = _mm256_add_epi32(a0, _mm256_add_epi32(avx2_round<Copy>(d, s, i, bias, ones),
								  avx2_round<Copy>(d, s, i + 128, bias, ones)));
		if (i + 128 <= end) {
			a0 = _mm256_add_epi32(a0, avx2_round<Copy>(d, s, i, bias, ones));
			i += 128;
		}
		if (end == len) {
			// up to 3 vectors and a tail: at most 2^16 per vector in a1
			for (; i + 32 <= len; i += 32) {
				__m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + i));
				if constexpr (Copy)
					_mm256_storeu_si256(reinterpret_cast<__m256i *>(d + i), v);
				a1 = _mm256_add_epi32(a1, madd_biased(v, bias, ones));
			}
			// an even tail: the last 32 bytes again, the part summed already masked off
			size_t r = len - i;
			if (r && !(len & 1)) {
				__m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + len - 32));
				if constexpr (Copy)
					_mm256_storeu_si256(reinterpret_cast<__m256i *>(d + len - 32), v);
				__m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(tail_mask + 32 + r));
				a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_and_si256(_mm256_xor_si256(v, bias), m), ones));
				i = len;
			}
		}
		acc += hsum_s32(a0, a1);
		a0 = a1 = _mm256_setzero_si256();
	}
	// every word summed in vectors was 32768 low (masked-off words added 0
	// and are not counted: head + body + tail words == i / 2)
	uint64_t native = static_cast<uint64_t>(acc) + uint64_t{32768} * (i / 2);
	sum = csum_add32(sum, csum_native_to_be(native));
	return i == len ? sum : scalar_copy(Copy ? d + i : nullptr, s + i, len - i, sum, Copy);
}

#endif

} // namespace xoffload::csum_detail
