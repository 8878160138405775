// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Number parsing for user input.
#include "xoffload/core/parse.hpp"

#include <charconv>
#include <string>

namespace xoffload {

Result<long long> parse_number(std::string_view s, const char *what)
{
	long long v = 0;
	int base = 10;
	std::string_view t = s;
	if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
		base = 16;
		t.remove_prefix(2);
	}
	auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v, base);
	if (t.empty() || ec != std::errc() || p != t.data() + t.size())
		return usage_error(std::string("invalid ") + what + " '" + std::string(s) + "'");
	return v;
}

} // namespace xoffload
