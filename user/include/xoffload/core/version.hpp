// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The version of libxoffload a program runs with (the project version it was
// built from, e.g. "0.1.0"); the headers carry the one they were installed with.
#pragma once

#define XOFFLOAD_VERSION_MAJOR 0
#define XOFFLOAD_VERSION_MINOR 1
#define XOFFLOAD_VERSION_PATCH 0

namespace xoffload {

// "MAJOR.MINOR.PATCH" of the library linked in (shared: the one loaded).
const char *library_version() noexcept;

} // namespace xoffload
