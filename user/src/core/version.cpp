// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "xoffload/core/version.hpp"

// XO_VERSION* come from CMake (project(xoffload VERSION ...)); the header's
// numbers, which an installed program compiles against, must be the same.
static_assert(XO_VERSION_MAJOR == XOFFLOAD_VERSION_MAJOR && XO_VERSION_MINOR == XOFFLOAD_VERSION_MINOR &&
		      XO_VERSION_PATCH == XOFFLOAD_VERSION_PATCH,
	      "xoffload/core/version.hpp does not match project(xoffload VERSION) in CMakeLists.txt");

namespace xoffload {

const char *library_version() noexcept
{
	return XO_VERSION;
}

} // namespace xoffload
