// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Checksum and fused copy+checksum. The vector versions sum 16-bit words into
// 32-bit lanes (even and odd words separately), folding before a lane can
// overflow; they are built with target attributes, never -march, so the
// binary runs on any x86-64 and picks the best version at start-up.
#include "xoffload/packet/csum.hpp"

#include "csum_kernel.hpp"

#include <atomic>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace xoffload {

namespace {

using namespace csum_detail;

#if defined(__x86_64__)

// GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized on its own
// _mm512_undefined helpers (a known false positive).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// Signed sum of the 32-bit lanes of a + b (each |x| <= 2^28 + 2^17).
__attribute__((target("avx512f,avx512bw"))) inline int64_t hsum512(__m512i a, __m512i b) noexcept
{
	return hsum_s32(_mm256_add_epi32(_mm512_castsi512_si256(a), _mm512_extracti64x4_epi64(a, 1)),
			_mm256_add_epi32(_mm512_castsi512_si256(b), _mm512_extracti64x4_epi64(b, 1)));
}

template <bool Copy>
__attribute__((target("avx512f,avx512bw"))) uint32_t avx512_sum(uint8_t *d, const uint8_t *s, size_t len,
								 uint32_t sum) noexcept
{
	const __m512i bias = _mm512_set1_epi16(static_cast<short>(0x8000));
	const __m512i ones = _mm512_set1_epi16(1);
	__m512i a0 = _mm512_setzero_si512(), a1 = a0;
	int64_t acc = 0;
	size_t i = 0;
	if constexpr (Copy) {
		if (size_t head = head_to_align<64>(d, len)) {
			// masked load/store of the head words, so the rest stores aligned
			__mmask32 m = static_cast<__mmask32>((uint64_t{1} << (head / 2)) - 1);
			__m512i v = _mm512_maskz_loadu_epi16(m, s);
			_mm512_mask_storeu_epi16(d, m, v);
			a0 = _mm512_madd_epi16(_mm512_maskz_mov_epi16(m, _mm512_xor_si512(v, bias)), ones);
			i = head;
		}
	}
	while (len - i >= 64) {
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
				acc += hsum512(a0, a1);
				uint64_t native = static_cast<uint64_t>(acc) + uint64_t{32768} * ((len + (64 - r)) / 2);
				return csum_add32(sum, csum_native_to_be(native));
			}
		}
		acc += hsum512(a0, a1);
		a0 = a1 = _mm512_setzero_si512();
	}
	uint64_t native = static_cast<uint64_t>(acc) + uint64_t{32768} * (i / 2);
	sum = csum_add32(sum, csum_native_to_be(native));
	return i == len ? sum : scalar_copy(Copy ? d + i : nullptr, s + i, len - i, sum, Copy);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif

template <bool Copy>
uint32_t scalar_sum(uint8_t *d, const uint8_t *s, size_t len, uint32_t sum) noexcept
{
	return scalar_copy(d, s, len, sum, Copy);
}

// An implementation with csum_copy's signature (CsumCopyFn), so that a
// caller may hold it; sum() passes a null destination.
template <uint32_t (*Fn)(uint8_t *, const uint8_t *, size_t, uint32_t) noexcept>
uint32_t as_copy_fn(void *dst, const void *src, size_t len, uint32_t sum) noexcept
{
	return Fn(static_cast<uint8_t *>(dst), static_cast<const uint8_t *>(src), len, sum);
}

// copy(dst, src, len, sum) and sum(nullptr, src, len, sum) of one implementation
struct Impl {
	CsumImpl id;
	CsumCopyFn copy, sum;
};

constexpr Impl kImpls[] = {
	{CsumImpl::scalar, as_copy_fn<scalar_sum<true>>, as_copy_fn<scalar_sum<false>>},
#if defined(__x86_64__)
	{CsumImpl::avx2, as_copy_fn<avx2_sum<true>>, as_copy_fn<avx2_sum<false>>},
	{CsumImpl::avx512, as_copy_fn<avx512_sum<true>>, as_copy_fn<avx512_sum<false>>},
#endif
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

const Impl *impl_of(CsumImpl i) noexcept
{
	for (const Impl &x : kImpls)
		if (x.id == i)
			return &x;
	return &kImpls[0];
}

// Chosen on first use; a plain load on every later call (no guard, no lock).
std::atomic<const Impl *> g_impl{nullptr};

const Impl &impl() noexcept
{
	const Impl *p = g_impl.load(std::memory_order_relaxed);
	if (p) [[likely]]
		return *p;
	// AVX2 first: on many cores the 512-bit path lowers clocks for little gain
	p = impl_of(cpu_has(CsumImpl::avx2) ? CsumImpl::avx2 : CsumImpl::scalar);
	g_impl.store(p, std::memory_order_relaxed);
	return *p;
}

} // namespace

uint32_t csum_partial(const void *data, size_t len, uint32_t sum) noexcept
{
	const auto *s = static_cast<const uint8_t *>(data);
	if (len < 64)
		return scalar_copy(nullptr, s, len, sum, false);
	return impl().sum(nullptr, s, len, sum);
}

uint32_t csum_copy(void *dst, const void *src, size_t len, uint32_t sum) noexcept
{
	return impl().copy(dst, src, len, sum);
}

CsumCopyFn csum_copy_fn() noexcept
{
	return impl().copy;
}

CsumImpl csum_impl() noexcept
{
	return impl().id;
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
	g_impl.store(impl_of(i), std::memory_order_relaxed);
	return true;
}

} // namespace xoffload
