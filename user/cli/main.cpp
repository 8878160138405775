// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// offload-tool: command line front end of libxoffload.
#include <cstdio>
#include <cstring>

#include "commands.hpp"

int main(int argc, char **argv)
{
	using namespace xoffload;
	cli::Globals g;
	int rc = 0;

	CLI::App app{cli::kToolDescription, "offload-tool"};
	cli::build_app(app, g, rc);

	try {
		app.parse(argc, argv);
	} catch (const CLI::CallForHelp &e) {
		return app.exit(e);
	} catch (const CLI::CallForAllHelp &e) {
		return app.exit(e);
	} catch (const CLI::CallForVersion &e) {
		return app.exit(e);
	} catch (const CLI::ParseError &e) {
		std::string msg = e.what();
		// "A subcommand is required" when a word was given for one: name it
		CLI::App *at = &app;
		while (!at->get_subcommands().empty())
			at = at->get_subcommands().front();
		const auto rest = app.remaining(true);	// fallthrough: the word may sit with a parent
		if (msg.find("subcommand is required") != std::string::npos) {
			const std::string of = at == &app ? std::string() : " of " + at->get_name();
			if (!rest.empty() && !rest.front().empty() && rest.front()[0] != '-')
				msg = "unknown command '" + rest.front() + "'" + of;
			else if (at != &app)
				msg = at->get_name() + " needs a subcommand";
		}
		// a parse error may come before the flags were read: ask the words
		bool json = false;
		for (int i = 1; i < argc && std::strcmp(argv[i], "--") != 0; i++) {
			const bool pretty = !std::strcmp(argv[i], "-p") || !std::strcmp(argv[i], "--pretty");
			json = json || pretty || !std::strcmp(argv[i], "-j") || !std::strcmp(argv[i], "--json");
			g.pretty = g.pretty || pretty;	// bound to the output: the object is indented as asked
		}
		return cli::report_error(msg + " (see --help)", 2, json);
	}
	return rc;
}
