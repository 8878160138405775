// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The offload-tool command line as a CLI11 app (global options and every
// subcommand) and what its commands share, apart from main() so it can be
// parsed without running anything (tests/fuzz/cli_fuzz.cpp).
#include <atomic>
#include <csignal>
#include <cstdio>

#include "commands.hpp"
#include "xoffload/bpf/loader.hpp"
#include "xoffload/core/netdev.hpp"

namespace {
// set by the handler, read by send's and recv's worker threads: a lock-free
// atomic is safe in both places
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);
void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }
} // namespace

namespace xoffload::cli {

void install_stop_handler()
{
	struct sigaction sa {};
	sa.sa_handler = on_signal;
	// a dropped ssh session (SIGHUP), a closed pipe on stdout (SIGPIPE) and
	// SIGQUIT end the command as SIGINT does: cleanly, programs detached
	for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT})
		sigaction(sig, &sa, nullptr);
}

bool stop_requested()
{
	return g_stop.load(std::memory_order_relaxed);
}

Status prepare(const Globals &g)
{
	set_library_verbosity(g.verbose);
	if (!g.netns.empty())
		return netns_enter(g.netns);
	return ok();
}

void build_app(CLI::App &app, Globals &g, int &rc)
{
	bind_output(&g);
	// with --json or --pretty (either order) one JSON object; CLI11 runs
	// this callback before it sets g.json (defined later), so ask the options
	app.set_version_flag("--version",
			     [&app] {
				     const bool pretty = app.get_option("--pretty")->count() > 0;
				     return version_text(app.get_option("--json")->count() > 0 || pretty, pretty);
			     },
			     "Print the versions of offload-tool, libbpf, libxdp and the kernel, and the kernel features "
			     "it probes");
	app.add_flag("-j,--json", g.json, "Machine-readable output (JSON; errors too, on stdout)");
	app.add_flag_callback(
		"-p,--pretty", [&g] { g.json = g.pretty = true; }, "JSON, indented for reading (implies --json)");
	app.add_flag("-v,--verbose", g.verbose, "More output (-vv shows libbpf/libxdp debug)");
	app.add_option("-n,--netns", g.netns, "Run in this network namespace (like ip -n)");
	app.require_subcommand(1);
	app.fallthrough();

	add_attach_commands(app, g, rc);
	add_status_command(app, g, rc);
	add_vlan_command(app, g, rc);
	add_geneve_command(app, g, rc);
	add_xsk_commands(app, g, rc);
	add_features_command(app, g, rc);
}

} // namespace xoffload::cli
