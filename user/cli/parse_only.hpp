// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Parsing offload-tool's command line without running a command: every
// callback of the app taken out (tests/fuzz/cli_fuzz.cpp parses fuzzed
// argv this way, offload-tool-docgen the examples of the man pages).
//
// The commands' callbacks own the structs their options write into (a
// shared_ptr captured by the callback): dropping them would leave CLI11
// writing into freed memory. They are moved aside into a Kept instead,
// which must outlive the parse, and the app runs none. CLI11 keeps them
// protected; a pointer to member formed in a derived class reaches them on
// any App.
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

namespace xoffload::cli {

struct KeptCallbacks {
	std::vector<std::function<void()>> fns;
	std::vector<std::function<void(std::size_t)>> pre;
};

namespace detail {
struct CallbackAccess : CLI::App {
	static constexpr auto final_ = &CallbackAccess::final_callback_;
	static constexpr auto complete_ = &CallbackAccess::parse_complete_callback_;
	static constexpr auto preparse_ = &CallbackAccess::pre_parse_callback_;
};
} // namespace detail

// Moves every callback of @app and its subcommands into @kept.
inline void strip_callbacks(CLI::App &app, KeptCallbacks &kept)
{
	using A = detail::CallbackAccess;
	kept.fns.push_back(std::move(app.*A::final_));
	kept.fns.push_back(std::move(app.*A::complete_));
	kept.pre.push_back(std::move(app.*A::preparse_));
	app.*A::final_ = nullptr;
	app.*A::complete_ = nullptr;
	app.*A::preparse_ = nullptr;
	for (CLI::App *sub : app.get_subcommands([](CLI::App *) { return true; }))
		strip_callbacks(*sub, kept);
}

} // namespace xoffload::cli
