// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The man pages of offload-tool, written from the CLI11 app it parses with
// (build_app), so they cannot drift from --help: offload-tool(8) (global
// options, the list of commands, exit status, files) and one page per
// command, offload-tool-COMMAND(8), with every subcommand and option under
// it and the command's examples (its --help footer). Used by
// offload-tool-docgen (the installed pages) and by `offload-tool help`.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace xoffload::cli {

// What the pages and the bash completion read from the app.
struct CommandNode {
	std::string path;	// "vlan stats"; "" for the top level
	const CLI::App *app;
};
// Every command of the tree under @app (itself first), depth first.
std::vector<CommandNode> command_tree(const CLI::App *app, const std::string &path = {});
// An option that takes no value (add_flag).
bool is_flag(const CLI::Option *o);
// The values an IsMember check allows ({text,json,prometheus}); empty without one.
std::vector<std::string> value_set(const CLI::Option *o);
// "-n", "--netns": every name of @o.
std::vector<std::string> option_names(const CLI::Option *o);

// The commands that have a page of their own: the app's subcommands, in
// the order --help lists them.
std::vector<std::string> man_commands(const CLI::App &app);

// offload-tool(8).
std::string man_overview(const CLI::App &app, const std::string &date, const std::string &version);

// offload-tool-@command(8); "" when @command is not one of man_commands().
std::string man_command(const CLI::App &app, const std::string &command, const std::string &date,
			const std::string &version);

// The example lines of @cmd's footer ("  offload-tool ..." after
// "Examples:"), each without its comment.
std::vector<std::string> command_examples(const CLI::App &cmd);

// The date the pages carry: the build's (SOURCE_DATE_EPOCH when set), the
// same in the installed pages and in `offload-tool help`.
const char *man_date() noexcept;

} // namespace xoffload::cli
