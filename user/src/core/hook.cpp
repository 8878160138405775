// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Names of the attach points (user/include/xoffload/hook.hpp): the CLI's
// words, the status output and the counters' labels are these.
#include "xoffload/core/hook.hpp"

#include <string>

namespace xoffload {

namespace {
constexpr const char *kHookNames[kHooks] = {"xdp", "tc-ingress", "tc-egress"};
} // namespace

Result<Hook> parse_hook(std::string_view s)
{
	for (unsigned h = 0; h < kHooks; h++)
		if (s == kHookNames[h])
			return static_cast<Hook>(h);
	return usage_error("unknown hook '" + std::string(s) + "' (xdp, tc-ingress or tc-egress)");
}

const char *to_string(Hook h)
{
	const auto i = static_cast<uint32_t>(h);
	return i < kHooks ? kHookNames[i] : "?";
}

} // namespace xoffload
