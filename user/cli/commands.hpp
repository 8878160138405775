// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Each subcommand registers itself on the CLI11 app; its callback stores the
// exit code in *rc.
#pragma once

#include <CLI/CLI.hpp>

#include <time.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "output.hpp"
#include "xoffload/geneve/geneve_kernel.hpp"

namespace xoffload::cli {

void add_attach_commands(CLI::App &app, Globals &g, int &rc);	// attach, detach
void add_status_command(CLI::App &app, Globals &g, int &rc);
void add_vlan_command(CLI::App &app, Globals &g, int &rc);
void add_geneve_command(CLI::App &app, Globals &g, int &rc);	// port, rule, option, csum, stats
void add_xsk_commands(CLI::App &app, Globals &g, int &rc);	// send, recv
void add_features_command(CLI::App &app, Globals &g, int &rc);
void add_agent_command(CLI::App &app, Globals &g, int &rc);
void add_config_commands(CLI::App &app, Globals &g, int &rc);	// apply, config show|check


// Validators of numeric options, checked on the text before CLI11 converts
// it (CLI11 2.1 reads "-1" into an unsigned as its maximum, and "010" as
// octal): CLI11 then reports "--opt: <why>" as a usage error (exit 2).
// A whole number in lo..hi, decimal digits only.
inline CLI::Validator whole_number(uint64_t lo, uint64_t hi = UINT64_MAX)
{
	return CLI::Validator(
		[lo, hi](std::string &s) -> std::string {
			bool digits = !s.empty() && s.size() <= 20;
			for (char c : s)
				digits = digits && c >= '0' && c <= '9';
			errno = 0;
			unsigned long long v = digits ? std::strtoull(s.c_str(), nullptr, 10) : 0;
			if (digits && errno != ERANGE && v >= lo && v <= hi)
				return {};
			return "'" + s + "' is not a whole number " +
			       (hi == UINT64_MAX ? ">= " + std::to_string(lo)
						 : "in " + std::to_string(lo) + ".." + std::to_string(hi));
		},
		"");
}

// Seconds (or a rate): a finite number, > 0, or >= 0 when zero_ok.
inline CLI::Validator positive_number(bool zero_ok = false)
{
	return CLI::Validator(
		[zero_ok](std::string &s) -> std::string {
			char *end = nullptr;
			errno = 0;
			double v = s.empty() ? NAN : std::strtod(s.c_str(), &end);
			if (end && !*end && errno != ERANGE && std::isfinite(v) && (v > 0 || (zero_ok && v == 0)))
				return {};
			return "'" + s + "' is not a number " + (zero_ok ? ">= 0" : "> 0");
		},
		"");
}

// The app's one-line description (--help, the man page's NAME).
inline constexpr const char *kToolDescription =
	"xoffload: VLAN, Geneve, segmentation and checksum offloads in XDP, TC and AF_XDP";
// Every option and subcommand of offload-tool on @app; parsing runs the
// chosen command's callback, which stores its exit code in @rc. No side
// effect before that (tests/fuzz/cli_fuzz.cpp parses without callbacks).
void build_app(CLI::App &app, Globals &g, int &rc);
// What --version prints (version.cpp): text, or one JSON object.
std::string version_text(bool json, bool pretty);

// --interval S and --count N of a stats command. In its callback,
// interval_count_misuse() is the usage error of --count without --interval.
inline CLI::Option *add_interval_count(CLI::App *s, double &interval, unsigned &count)
{
	s->add_option("--interval", interval, "Print rates every S seconds until Ctrl-C")->check(positive_number());
	return s->add_option("--count", count, "Stop after N intervals (with --interval)")
		->check(whole_number(1, UINT32_MAX));
}

// --format text|json|prometheus of the commands that print counters (vlan
// stats, geneve stats, send, recv).
inline CLI::Option *add_format(CLI::App *s, std::string &format)
{
	return s->add_option("--format", format,
			     "text (default), json (as --json) or prometheus (node_exporter's textfile format: "
			     "one snapshot, counters as counters)")
		->check(CLI::IsMember({"text", "json", "prometheus"}));
}
// Applies --format to @g. Usage error: prometheus with --json (two formats),
// prometheus with an interval (@watch; a textfile holds one snapshot).
Status apply_format(Globals &g, const std::string &format, bool watch);

inline bool interval_count_misuse(const CLI::Option *count, double interval)
{
	return count->count() && interval <= 0;
}

// Applies the global options (verbosity, netns); first call of every command.
Status prepare(const Globals &g);

// Stops interval loops on SIGINT, SIGTERM, SIGHUP, SIGPIPE and SIGQUIT.
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
