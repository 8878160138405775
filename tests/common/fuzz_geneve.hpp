// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The Geneve encapsulation a fuzz harness asks of gso_segment (gso_fuzz,
// gro_fuzz), taken from its input in one order, so both harnesses' seeds
// mean the same: present or not, then IPv6 outer, outer UDP checksum, VNI,
// 8 option bytes or none. Only for libFuzzer harnesses (FuzzedDataProvider).
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "xoffload/gso/gso.hpp"

namespace xo_test {

// @g filled from @fdp and returned, or nullptr (no encapsulation).
inline const xoffload::GeneveEncap *consume_geneve(FuzzedDataProvider &fdp, xoffload::GeneveEncap &g)
{
	static const std::byte opts[8] = {std::byte{0x01}, std::byte{0x02}, std::byte{0x80}, std::byte{0x01},
					  std::byte{1},    std::byte{2},    std::byte{3},    std::byte{4}};
	if (!fdp.ConsumeBool())
		return nullptr;
	g.ipv6 = fdp.ConsumeBool();
	g.udp_csum = fdp.ConsumeBool();
	g.vni = fdp.ConsumeIntegralInRange<uint32_t>(0, 0xffffff);
	g.options = std::span<const std::byte>(opts, fdp.ConsumeBool() ? 8 : 0);
	return &g;
}

} // namespace xo_test
