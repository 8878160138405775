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

// Horizontal sum of 32-bit lanes holding little-endian 16-bit word sums.
__attribute__((target("avx2"))) inline uint64_t hsum_epi32(__m256i v) noexcept
{
	alignas(32) uint32_t lanes[8];
	_mm256_store_si256(reinterpret_cast<__m256i *>(lanes), v);
	uint64_t s = 0;
	for (uint32_t l : lanes)
		s += l;
	return s;
}

__attribute__((target("avx2"))) uint32_t avx2_copy(void *dst, const void *src, size_t len, uint32_t sum,
						   bool copy) noexcept
{
	const uint8_t *s = static_cast<const uint8_t *>(src);
	uint8_t *d = static_cast<uint8_t *>(dst);
	const __m256i mask = _mm256_set1_epi32(0xffff);
	__m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
	uint64_t acc = 0; // little-endian word sums, folded from the lanes
	size_t i = 0;
	unsigned rounds = 0;

	for (; i + 64 <= len; i += 64) {
		__m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + i));
		__m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + i + 32));
		if (copy) {
			_mm256_storeu_si256(reinterpret_cast<__m256i *>(d + i), a);
			_mm256_storeu_si256(reinterpret_cast<__m256i *>(d + i + 32), b);
		}
		lo = _mm256_add_epi32(lo, _mm256_and_si256(a, mask));
		hi = _mm256_add_epi32(hi, _mm256_srli_epi32(a, 16));
		lo = _mm256_add_epi32(lo, _mm256_and_si256(b, mask));
		hi = _mm256_add_epi32(hi, _mm256_srli_epi32(b, 16));
		// each lane gains < 2^17 per round: fold well before 2^32
		if (++rounds == 16384) {
			acc += hsum_epi32(lo) + hsum_epi32(hi);
			lo = hi = _mm256_setzero_si256();
			rounds = 0;
		}
	}
	acc += hsum_epi32(lo) + hsum_epi32(hi);
	uint32_t head = fold_native64(acc);
	return scalar_copy(copy ? d + i : nullptr, s + i, len - i, csum_add(sum, head), copy);
}

// GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized on its own
// _mm512_undefined helpers (a known false positive).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// Lanes widened to 64 bits before adding: a 32-bit reduction could wrap.
__attribute__((target("avx512f"))) inline uint64_t hsum512(__m512i v) noexcept
{
	alignas(64) uint32_t lanes[16];
	_mm512_store_si512(lanes, v);
	uint64_t s = 0;
	for (uint32_t l : lanes)
		s += l;
	return s;
}

__attribute__((target("avx512f,avx512bw"))) uint32_t avx512_copy(void *dst, const void *src, size_t len,
								  uint32_t sum, bool copy) noexcept
{
	const uint8_t *s = static_cast<const uint8_t *>(src);
	uint8_t *d = static_cast<uint8_t *>(dst);
	const __m512i mask = _mm512_set1_epi32(0xffff);
	__m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
	uint64_t acc = 0;
	size_t i = 0;
	unsigned rounds = 0;

	for (; i + 64 <= len; i += 64) {
		__m512i a = _mm512_loadu_si512(s + i);
		if (copy)
			_mm512_storeu_si512(d + i, a);
		lo = _mm512_add_epi32(lo, _mm512_and_si512(a, mask));
		hi = _mm512_add_epi32(hi, _mm512_srli_epi32(a, 16));
		if (++rounds == 32768) {
			acc += hsum512(lo) + hsum512(hi);
			lo = hi = _mm512_setzero_si512();
			rounds = 0;
		}
	}
	acc += hsum512(lo) + hsum512(hi);
	uint32_t head = fold_native64(acc);
	return scalar_copy(copy ? d + i : nullptr, s + i, len - i, csum_add(sum, head), copy);
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
