// Each subcommand registers itself on the CLI11 app; its callback stores the
// exit code in *rc.
#pragma once

#include <CLI/CLI.hpp>

#include <time.h>

#include <chrono>
#include <string>
#include <vector>

#include "output.hpp"

namespace xoffload::cli {

void add_attach_commands(CLI::App &app, Globals &g, int &rc);	// attach, detach, status
void add_vlan_command(CLI::App &app, Globals &g, int &rc);
void add_geneve_command(CLI::App &app, Globals &g, int &rc);	// port, rule, option, csum, stats
void add_xsk_commands(CLI::App &app, Globals &g, int &rc);	// send, recv
void add_features_command(CLI::App &app, Globals &g, int &rc);
// bench runs tools/bench: what follows its name is the bench's, not ours;
// main() takes it off argv (split_bench_args) before CLI11 parses the rest.
std::vector<std::string> split_bench_args(int argc, char **argv);
void add_bench_command(CLI::App &app, Globals &g, int &rc, const std::vector<std::string> &bench_args);


// Every option and subcommand of offload-tool on @app; parsing runs the
// chosen command's callback, which stores its exit code in @rc. No side
// effect before that (tests/fuzz/cli_fuzz.cpp parses without callbacks).
void build_app(CLI::App &app, Globals &g, int &rc, const std::vector<std::string> &bench_args);

// Applies the global options (verbosity, netns); first call of every command.
Status prepare(const Globals &g);

// Stops interval loops on SIGINT/SIGTERM.
void install_stop_handler();
bool stop_requested();

// Counters printed once (interval <= 0), or as rates every interval seconds
// until Ctrl-C or count intervals (0: no limit). read() returns a Result of
// a counters value; print(cur, prev or nullptr, seconds) prints it.
template <typename Read, typename Print>
Status watch_counters(double interval, unsigned count, Read &&read, Print &&print)
{
	auto c = read();
	if (!c)
		return c.error();
	if (interval <= 0) {
		print(*c, nullptr, 0.0);
		return ok();
	}
	using Clock = std::chrono::steady_clock;
	install_stop_handler();
	auto prev = *c;
	auto t0 = Clock::now();
	for (unsigned n = 0; !count || n < count; n++) {
		auto deadline = t0 + std::chrono::duration<double>(interval);
		while (!stop_requested() && Clock::now() < deadline) {
			timespec ts{0, 50 * 1000 * 1000};
			nanosleep(&ts, nullptr);
		}
		if (stop_requested())
			break;
		auto cur = read();
		if (!cur)
			return cur.error();
		auto t1 = Clock::now();
		print(*cur, &prev, std::chrono::duration<double>(t1 - t0).count());
		prev = *cur;
		t0 = t1;
	}
	return ok();
}

} // namespace xoffload::cli
