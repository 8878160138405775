// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Big-endian header fields as single loads and stores, for the GSO and GRO
// engines (each patches or reads several per frame). Library-internal.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace xoffload::packet_detail {

static_assert(std::endian::native == std::endian::little, "the byte swaps assume a little-endian host");
inline uint16_t ld16(const std::byte *p) noexcept
{
	uint16_t v;
	std::memcpy(&v, p, 2);
	return __builtin_bswap16(v);
}
inline uint32_t ld32(const std::byte *p) noexcept
{
	uint32_t v;
	std::memcpy(&v, p, 4);
	return __builtin_bswap32(v);
}
inline void st16(std::byte *p, uint16_t v) noexcept
{
	v = __builtin_bswap16(v);
	std::memcpy(p, &v, 2);
}
inline void st32(std::byte *p, uint32_t v) noexcept
{
	v = __builtin_bswap32(v);
	std::memcpy(p, &v, 4);
}

} // namespace xoffload::packet_detail
