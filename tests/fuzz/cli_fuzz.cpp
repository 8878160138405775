// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// libFuzzer harness of offload-tool's command line: the real CLI11 app
// (cli::build_app) with every command's callback removed, so parsing runs
// CLI11 and the option checks but never a command. The input is argv, split
// at NUL bytes. Invariants: no out-of-bounds access or UB (ASan/UBSan);
// parsing either succeeds or throws a CLI::ParseError (what main() turns
// into a one-line usage error, exit 2), nothing else.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "parse_only.hpp"

using namespace xoffload;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	std::vector<std::string> args{"offload-tool"};
	std::string cur;
	for (size_t i = 0; i < size && args.size() < 64; i++) {
		if (data[i] == 0) {
			args.push_back(cur);
			cur.clear();
		} else {
			cur += static_cast<char>(data[i]);
		}
	}
	if (!cur.empty())
		args.push_back(cur);
	std::vector<char *> argv;
	for (auto &a : args)
		argv.push_back(a.data());
	argv.push_back(nullptr);
	const int argc = static_cast<int>(args.size());

	cli::Globals g;
	int rc = 0;
	CLI::App app{"fuzz", "offload-tool"};
	cli::build_app(app, g, rc);
	cli::KeptCallbacks kept;
	cli::strip_callbacks(app, kept);
	try {
		app.parse(argc, argv.data());
	} catch (const CLI::ParseError &) {
		// --help, --version and every refusal
	}
	if (rc != 0)
		std::abort();	// no callback ran, so nothing may have set an exit code
	return 0;
}
