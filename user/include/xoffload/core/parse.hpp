// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Parsing of numbers the user types (decimal or 0x-prefixed hex), shared by
// every command's value checks.
#pragma once

#include <string_view>

#include "xoffload/core/result.hpp"

namespace xoffload {

// The whole of s as a number; usage error "invalid <what> '<s>'" otherwise.
Result<long long> parse_number(std::string_view s, const char *what);

} // namespace xoffload
