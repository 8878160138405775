// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Declarative configuration (issue #36): what xoffload sets up on each
// interface, read from a TOML file (xoffload.toml(5)), compared with what
// runs, and applied. `offload-tool apply`, `config show` and the agent are
// its users.
//
// CONTRACT between the config core (config.cpp and friends: parse,
// validate, plan, apply, show) and the agent (agent/: netlink follow,
// metrics, sd_notify). Change it only together with both sides.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xoffload/core/result.hpp"

namespace xoffload::config {

// The parsed, validated file. Its body is the core's (config_model.hpp);
// everyone else holds it by pointer and asks it through these functions.
struct Config;
using ConfigPtr = std::shared_ptr<const Config>;

// The file it was read from.
const std::string &source(const Config &c);
// [agent] metrics = "ADDR:PORT": where the agent serves /metrics; "" for
// nowhere. Default "127.0.0.1:9796".
std::string metrics_listen(const Config &c);
// [agent] metrics_public = true: /metrics may listen on an address that is
// not loopback (it has no authentication). Default false.
bool metrics_public(const Config &c);
// The interface names the file declares (by name; MAC-matched ones appear
// once a link matches, see match()).
std::vector<std::string> declared_names(const Config &c);

// Reads and validates @path as a whole. A bad file is one error, its
// message "FILE:LINE:COLUMN: KEY: what is wrong" (usage error, exit 2);
// nothing is read from the system.
Result<ConfigPtr> load(const std::string &path);

// Where a link matches the file: by name, or by permanent MAC (a renamed
// NIC keeps its policy). @perm_mac "" when the link has none.
std::optional<std::string> match(const Config &c, const std::string &ifname, const std::string &perm_mac);

// One step of a plan, as apply prints it: "eth1: attach vlan at xdp
// (native)", "eth1: vlan ingress policy: pop 1 -> pop 2", "eth2: detach
// geneve (not in the file)".
struct Step {
	std::string ifname;
	enum class Kind { attach, change, detach } kind;
	std::string text;
	// what apply() runs for it (plan() fills it; empty in diff()'s steps,
	// which apply() refuses)
	std::function<Status()> run;
};

struct Plan {
	std::vector<Step> steps;	// in the order apply takes them
	std::vector<std::string> skipped;	// declared interfaces absent here, with why
	bool empty() const { return steps.empty(); }
};

// What applying @c would change, comparing with what runs (pins, hooks,
// policies). @only: one interface (the agent after a link event); nullopt:
// every declared one, and interfaces with state of ours the file does not
// declare (their state is removed) unless @keep_undeclared.
Result<Plan> plan(const Config &c, const std::optional<std::string> &only = std::nullopt,
		  bool keep_undeclared = false);

// Takes @p's steps in order. Stops at the first failure, which names the
// step; steps done stay done (apply again to finish). Applying a plan of a
// file twice: the second plan is empty.
Status apply(const Plan &p, const Config &c);

// The running state of every interface with state of ours, as a file that
// load() reads back and whose plan() is empty (config show > f; apply -f f
// is a no-op).
Result<std::string> show();

} // namespace xoffload::config
