// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The agent (issue #36, `offload-tool agent`): applies a config file, then
// follows link events and re-applies what the file declares for a link that
// appears, is renamed or changes MTU or state; reloads on SIGHUP, leaves on
// SIGTERM with the datapath as it is; serves /metrics; tells systemd.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "xoffload/core/result.hpp"

namespace xoffload::agent {

using Clock = std::chrono::steady_clock;

// Link events of one interface that come within a short time coalesce into
// one re-plan: the first event of a quiet interface is due @quiet later,
// each further one pushes that back by @quiet again, but never later than
// @max_wait after the first (a flapping link is still reconciled within
// 1 s). Keys are interface names.
class Debouncer {
public:
	explicit Debouncer(Clock::duration quiet = std::chrono::milliseconds(150),
			   Clock::duration max_wait = std::chrono::milliseconds(500))
		: quiet_(quiet), max_wait_(max_wait) {}
	void touch(const std::string &key, Clock::time_point now);
	void forget(const std::string &key);
	// The keys due at @now, in name order; they are forgotten.
	std::vector<std::string> take_due(Clock::time_point now);
	// When the next key is due; nullopt when none is pending.
	std::optional<Clock::time_point> next() const;
	bool pending(const std::string &key) const { return due_.count(key) != 0; }

private:
	struct Entry {
		Clock::time_point first, due;
	};
	Clock::duration quiet_, max_wait_;
	std::map<std::string, Entry> due_;
};

// Where /metrics listens: "ADDR:PORT", "[ADDR6]:PORT"; "" for nowhere.
struct ListenAddr {
	std::string host;	// numeric, brackets removed
	uint16_t port = 0;
	bool loopback = false;	// 127.0.0.0/8 or ::1
};
// Parses @spec (numeric addresses only: a name would resolve to who knows
// what). Usage error (exit 2) with a line naming the spec.
Result<ListenAddr> parse_listen(const std::string &spec);
// The address policy: loopback always; any other address (0.0.0.0, ::, a
// NIC's) only with @allow_public, since /metrics has no authentication.
Status check_listen(const ListenAddr &a, bool allow_public);

// The agent's own health, as /metrics shows it (xoffload_agent_*).
struct Health {
	bool last_apply_ok = true;	// the last apply (whole file or one link)
	double last_apply_time = 0;	// unix seconds; 0 before the first
	uint64_t applies = 0;		// whole-file applies (start, SIGHUP)
	uint64_t reconciles = 0;	// link re-plans after events
	uint64_t steps = 0;		// plan steps taken
	uint64_t errors = 0;		// failed plans or applies
	uint64_t reloads = 0;		// SIGHUPs that loaded a new file
	uint64_t reloads_refused = 0;	// SIGHUPs whose file did not load
	uint64_t link_events = 0;	// rtnetlink link messages read
	uint64_t resyncs = 0;		// netlink overruns (ENOBUFS) recovered by a dump
	uint64_t scrape_errors = 0;	// counters a scrape could not read
	double start_time = 0;		// unix seconds
	std::vector<std::string> managed;	// links the file matches, present now
	std::string config_file;
};
// @h in the Prometheus text format, every family with # HELP and # TYPE.
std::string render_health(const Health &h);

struct Options {
	std::string file;		// -f: the config file
	std::optional<std::string> metrics;	// --metrics: instead of the file's [agent] metrics
	bool metrics_public = false;	// --metrics-public: allow a non-loopback address
	// --keep-undeclared: whole-file plans (start, reload) leave state of ours
	// on interfaces the file does not declare, as apply --keep-undeclared
	bool keep_undeclared = false;
	// Renders the counters of @ifnames (families written once), adding to
	// *errors what it could not read. Called from the HTTP server's thread.
	std::function<std::string(const std::vector<std::string> &ifnames, uint64_t *errors)> counters;
};

// Runs until SIGTERM or SIGINT: 0 then, 1 when the first load or the
// metrics listener fails (the line is returned as the error; a bad file is
// a usage error). Signals SIGHUP, SIGTERM and SIGINT are blocked in the
// calling thread and read through a signalfd.
Status run(const Options &o);

} // namespace xoffload::agent
