// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The one print callback of libbpf and libxdp in libxoffload. Installed as
// soon as the library's BPF part is loaded (before any object is opened),
// so a program using libxoffload gets it without asking:
// - what we expect and handle is dropped: libbpf skipping libxdp's
//   .xdp_run_config section (libxdp reads it), the kernel's "Parent Qdisc
//   doesn't exist(s)" when clsact is looked for before it exists, and
//   whatever a call marked by ExpectedLibraryMessages (log.hpp) says: a tc
//   query that finds nothing, a clsact qdisc already there, libxdp's
//   dispatcher refused (the composed program goes instead);
// - any other warning keeps its text, behind one "xoffload: " prefix;
// - info and debug lines are dropped;
// - set_library_verbosity(1) (-v) shows every warning and info line as the
//   library wrote it, handled ones too; 2 (-vv) adds the debug lines.
#include "xoffload/bpf/loader.hpp"
#include "log.hpp"

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace xoffload {

namespace {

std::atomic<int> g_verbosity{0};
thread_local int t_expected = 0;	// ExpectedLibraryMessages alive on this thread

enum class Level { warn, info, debug };

// Messages that say what we expect and handle (see the top of the file).
bool handled(std::string_view m)
{
	if (m.find("unrecognized data section") != std::string_view::npos &&
	    m.find(".xdp_run_config") != std::string_view::npos)
		return true;
	// the kernel's extack, "Parent Qdisc doesn't exists" (sic) in 6.1-7.2
	return m.find("Parent Qdisc doesn't exist") != std::string_view::npos;
}

int emit(Level level, const char *fmt, va_list ap)
{
	const int v = g_verbosity.load(std::memory_order_relaxed);
	if (v >= 2 || (v == 1 && level != Level::debug))
		return std::vfprintf(stderr, fmt, ap);
	if (level != Level::warn || t_expected > 0)
		return 0;
	va_list copy;
	va_copy(copy, ap);
	const int n = std::vsnprintf(nullptr, 0, fmt, copy);
	va_end(copy);
	if (n <= 0)
		return 0;
	std::string text(static_cast<size_t>(n) + 1, '\0');
	std::vsnprintf(text.data(), text.size(), fmt, ap);
	text.pop_back();
	if (handled(text))
		return 0;
	// a verifier log comes as one message of many lines: kept whole after the prefix
	return std::fprintf(stderr, "xoffload: %s%s", text.c_str(), text.back() == '\n' ? "" : "\n");
}

int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return emit(level == LIBBPF_WARN ? Level::warn : level == LIBBPF_INFO ? Level::info : Level::debug, fmt, ap);
}

int print_libxdp(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	return emit(level == LIBXDP_WARN ? Level::warn : level == LIBXDP_INFO ? Level::info : Level::debug, fmt, ap);
}

} // namespace

ExpectedLibraryMessages::ExpectedLibraryMessages() noexcept
{
	t_expected++;
}

ExpectedLibraryMessages::~ExpectedLibraryMessages()
{
	t_expected--;
}

bool install_library_log() noexcept
{
	libbpf_set_print(print_libbpf);
	libxdp_set_print(print_libxdp);
	return true;
}

void set_library_verbosity(int level)
{
	g_verbosity.store(level, std::memory_order_relaxed);
	install_library_log();
}

int library_verbosity() noexcept
{
	return g_verbosity.load(std::memory_order_relaxed);
}

namespace {
// before main(): no libbpf or libxdp message escapes the callback
[[maybe_unused]] const bool g_log_installed = install_library_log();
} // namespace

} // namespace xoffload
