// Checksum and fused copy+checksum. The vector versions sum 16-bit words into
// 32-bit lanes (even and odd words separately), folding before a lane can
// overflow; they are built with target attributes, never -march, so the
// binary runs on any x86-64 and picks the best version at start-up.
#include "xoffload/csum.hpp"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace xoffload {

namespace {

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

// Sums 8-byte words in native (little-endian) order: the ones-complement sum
// is byte-order independent up to a final swap (RFC 1071, 2.B).
inline uint64_t add64(uint64_t a, uint64_t b) noexcept
{
	a += b;
	return a + (a < b);
}

inline uint32_t fold_native64(uint64_t s) noexcept
{
	// fold 64 -> 16 bits, then swap to big-endian word order
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	uint16_t v = csum_fold16(s);
	return static_cast<uint16_t>((v << 8) | (v >> 8));
}

uint32_t scalar_copy(void *dst, const void *src, size_t len, uint32_t sum, bool copy) noexcept
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
		acc = add64(acc, w[0]);
		acc = add64(acc, w[1]);
		acc = add64(acc, w[2]);
		acc = add64(acc, w[3]);
	}
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		std::memcpy(&w, s + i, 8);
		if (copy)
			std::memcpy(d + i, &w, 8);
		acc = add64(acc, w);
	}
	uint64_t tail = 0;
	if (i < len) {
		if (copy)
			std::memcpy(d + i, s + i, len - i);
		tail = sum_tail(s + i, len - i);
	}
	return csum_fold16(uint64_t{sum} + fold_native64(acc) + tail);
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
alignas(64) constexpr uint8_t tail_mask[128] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

// Signed sum of the 32-bit lanes of a + b + c + d (each lane |x| < 2^29).
__attribute__((target("avx2"))) inline int64_t hsum_s32(__m256i a, __m256i b, __m256i c, __m256i d) noexcept
{
	__m256i s = _mm256_add_epi32(_mm256_add_epi32(a, b), _mm256_add_epi32(c, d));
	__m256i q = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(s)),
				     _mm256_cvtepi32_epi64(_mm256_extracti128_si256(s, 1)));
	__m128i h = _mm_add_epi64(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
	return _mm_cvtsi128_si64(h) + _mm_extract_epi64(h, 1);
}

template <bool Copy>
__attribute__((target("avx2"))) uint32_t avx2_sum(uint8_t *d, const uint8_t *s, size_t len, uint32_t sum) noexcept
{
	const __m256i bias = _mm256_set1_epi16(static_cast<short>(0x8000));
	const __m256i ones = _mm256_set1_epi16(1);
	int64_t acc = 0;
	size_t i = 0;
	while (len - i >= 32) {
		__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
		// a lane gains |x| <= 2^16 per round: 4096 rounds keep it < 2^29
		size_t end = len - i > 4096 * 128 ? i + 4096 * 128 : len;
		for (; i + 128 <= end; i += 128) {
			__m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + i));
			__m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + i + 32));
			__m256i v2 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + i + 64));
			__m256i v3 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + i + 96));
			if constexpr (Copy) {
				_mm256_storeu_si256(reinterpret_cast<__m256i *>(d + i), v0);
				_mm256_storeu_si256(reinterpret_cast<__m256i *>(d + i + 32), v1);
				_mm256_storeu_si256(reinterpret_cast<__m256i *>(d + i + 64), v2);
				_mm256_storeu_si256(reinterpret_cast<__m256i *>(d + i + 96), v3);
			}
			a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_xor_si256(v0, bias), ones));
			a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_xor_si256(v1, bias), ones));
			a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_xor_si256(v2, bias), ones));
			a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_xor_si256(v3, bias), ones));
		}
		if (end == len) {
			for (; i + 32 <= len; i += 32) {
				__m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + i));
				if constexpr (Copy)
					_mm256_storeu_si256(reinterpret_cast<__m256i *>(d + i), v);
				a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_xor_si256(v, bias), ones));
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
		acc += hsum_s32(a0, a1, a2, a3);
	}
	// every word summed in vectors was 32768 low
	uint64_t native = static_cast<uint64_t>(acc) + uint64_t{32768} * (i / 2);
	sum = csum_add(sum, fold_native64(native));
	return i == len ? sum : scalar_copy(Copy ? d + i : nullptr, s + i, len - i, sum, Copy);
}

__attribute__((target("avx2"))) uint32_t avx2_copy(void *dst, const void *src, size_t len, uint32_t sum,
						   bool copy) noexcept
{
	if (copy)
		return avx2_sum<true>(static_cast<uint8_t *>(dst), static_cast<const uint8_t *>(src), len, sum);
	return avx2_sum<false>(nullptr, static_cast<const uint8_t *>(src), len, sum);
}

// GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized on its own
// _mm512_undefined helpers (a known false positive).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

template <bool Copy>
__attribute__((target("avx512f,avx512bw"))) uint32_t avx512_sum(uint8_t *d, const uint8_t *s, size_t len,
								 uint32_t sum) noexcept
{
	const __m512i bias = _mm512_set1_epi16(static_cast<short>(0x8000));
	const __m512i ones = _mm512_set1_epi16(1);
	int64_t acc = 0;
	size_t i = 0;
	while (len - i >= 64) {
		__m512i a0 = _mm512_setzero_si512(), a1 = a0;
		size_t end = len - i > 4096 * 128 ? i + 4096 * 128 : len;
		for (; i + 128 <= end; i += 128) {
			__m512i v0 = _mm512_loadu_si512(s + i);
			__m512i v1 = _mm512_loadu_si512(s + i + 64);
			if constexpr (Copy) {
				_mm512_storeu_si512(d + i, v0);
				_mm512_storeu_si512(d + i + 64, v1);
			}
			a0 = _mm512_add_epi32(a0, _mm512_madd_epi16(_mm512_xor_si512(v0, bias), ones));
			a1 = _mm512_add_epi32(a1, _mm512_madd_epi16(_mm512_xor_si512(v1, bias), ones));
		}
		if (end == len) {
			if (i + 64 <= len) {
				__m512i v = _mm512_loadu_si512(s + i);
				if constexpr (Copy)
					_mm512_storeu_si512(d + i, v);
				a0 = _mm512_add_epi32(a0, _mm512_madd_epi16(_mm512_xor_si512(v, bias), ones));
				i += 64;
			}
			size_t r = len - i;
			if (r && !(len & 1)) {
				// masked load/store of the tail words: no overlap, no table
				__mmask32 m = static_cast<__mmask32>((uint64_t{1} << (r / 2)) - 1);
				__m512i v = _mm512_maskz_loadu_epi16(m, s + i);
				if constexpr (Copy)
					_mm512_mask_storeu_epi16(d + i, m, v);
				a1 = _mm512_add_epi32(a1, _mm512_madd_epi16(_mm512_maskz_xor_epi32(0xffff, v, bias), ones));
				// the masked-off words went in as -32768: count them as summed words
				i = len;
				acc += hsum_s32(_mm512_castsi512_si256(a0), _mm512_extracti64x4_epi64(a0, 1),
						_mm512_castsi512_si256(a1), _mm512_extracti64x4_epi64(a1, 1));
				uint64_t native = static_cast<uint64_t>(acc) + uint64_t{32768} * ((len + (64 - r)) / 2);
				return csum_add(sum, fold_native64(native));
			}
		}
		acc += hsum_s32(_mm512_castsi512_si256(a0), _mm512_extracti64x4_epi64(a0, 1),
				_mm512_castsi512_si256(a1), _mm512_extracti64x4_epi64(a1, 1));
	}
	uint64_t native = static_cast<uint64_t>(acc) + uint64_t{32768} * (i / 2);
	sum = csum_add(sum, fold_native64(native));
	return i == len ? sum : scalar_copy(Copy ? d + i : nullptr, s + i, len - i, sum, Copy);
}

uint32_t avx512_copy(void *dst, const void *src, size_t len, uint32_t sum, bool copy) noexcept
{
	if (copy)
		return avx512_sum<true>(static_cast<uint8_t *>(dst), static_cast<const uint8_t *>(src), len, sum);
	return avx512_sum<false>(nullptr, static_cast<const uint8_t *>(src), len, sum);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif

using CopyFn = uint32_t (*)(void *, const void *, size_t, uint32_t, bool) noexcept;

struct Dispatch {
	CsumImpl impl = CsumImpl::scalar;
	CopyFn fn = scalar_copy;
};

bool cpu_has(CsumImpl i) noexcept
{
#if defined(__x86_64__)
	switch (i) {
	case CsumImpl::scalar:
		return true;
	case CsumImpl::avx2:
		return __builtin_cpu_supports("avx2");
	case CsumImpl::avx512:
		return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
	}
	return false;
#else
	return i == CsumImpl::scalar;
#endif
}

CopyFn fn_of(CsumImpl i) noexcept
{
#if defined(__x86_64__)
	if (i == CsumImpl::avx512)
		return avx512_copy;
	if (i == CsumImpl::avx2)
		return avx2_copy;
#endif
	return scalar_copy;
}

Dispatch &dispatch() noexcept
{
	static Dispatch d = [] {
		Dispatch x;
		// AVX2 first: on many cores the 512-bit path lowers clocks for little gain
		for (CsumImpl i : {CsumImpl::avx2, CsumImpl::scalar})
			if (cpu_has(i)) {
				x.impl = i;
				x.fn = fn_of(i);
				break;
			}
		return x;
	}();
	return d;
}

} // namespace

uint32_t csum_partial(const void *data, size_t len, uint32_t sum) noexcept
{
	if (len < 64)
		return scalar_copy(nullptr, data, len, sum, false);
	return dispatch().fn(nullptr, data, len, sum, false);
}

uint32_t csum_copy(void *dst, const void *src, size_t len, uint32_t sum) noexcept
{
	return dispatch().fn(dst, src, len, sum, true);
}

CsumImpl csum_impl() noexcept
{
	return dispatch().impl;
}

const char *to_string(CsumImpl i) noexcept
{
	switch (i) {
	case CsumImpl::scalar:
		return "scalar";
	case CsumImpl::avx2:
		return "avx2";
	case CsumImpl::avx512:
		return "avx512";
	}
	return "?";
}

bool csum_force_impl(CsumImpl i) noexcept
{
	if (!cpu_has(i))
		return false;
	dispatch().impl = i;
	dispatch().fn = fn_of(i);
	return true;
}

} // namespace xoffload
