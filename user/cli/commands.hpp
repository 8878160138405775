// Each subcommand registers itself on the CLI11 app; its callback stores the
// exit code in *rc.
#pragma once

#include <CLI/CLI.hpp>

#include "output.hpp"

namespace xoffload::cli {

void add_attach_commands(CLI::App &app, Globals &g, int &rc);	// attach, detach, status
void add_vlan_command(CLI::App &app, Globals &g, int &rc);
void add_geneve_command(CLI::App &app, Globals &g, int &rc);	// port, rule, option, csum, stats
void add_xsk_commands(CLI::App &app, Globals &g, int &rc);	// send, recv
void add_features_command(CLI::App &app, Globals &g, int &rc);

// Applies the global options (verbosity, netns); first call of every command.
Status prepare(const Globals &g);

// Stops interval loops on SIGINT/SIGTERM.
void install_stop_handler();
bool stop_requested();

} // namespace xoffload::cli
