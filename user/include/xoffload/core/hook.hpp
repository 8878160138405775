// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The attach points of the xoffload programs, one enum for the whole tree:
// its values are the ABI's enum xo_hook, which also indexes the per-hook
// counters the BPF side keeps (xo_vlan_stats).
#pragma once

#include <cstdint>
#include <string_view>

#include "xoffload/core/abi_check.hpp"
#include "xoffload/core/result.hpp"

namespace xoffload {

enum class Hook : uint32_t {
	xdp = XO_HOOK_XDP,
	tc_ingress = XO_HOOK_TC_INGRESS,
	tc_egress = XO_HOOK_TC_EGRESS,
};
inline constexpr unsigned kHooks = XO_HOOK_MAX;	// Hook values are 0 .. kHooks - 1
static_assert(static_cast<uint32_t>(Hook::xdp) == 0 && static_cast<uint32_t>(Hook::tc_egress) + 1 == kHooks,
	      "Hook indexes the per-hook counters: 0 .. XO_HOOK_MAX - 1, no gaps");

// "xdp", "tc-ingress", "tc-egress"; a usage error names the three.
Result<Hook> parse_hook(std::string_view s);
// The same words; "?" for a value outside the enum (a counter index out of range).
const char *to_string(Hook h);

} // namespace xoffload
