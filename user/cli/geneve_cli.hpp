// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What the geneve subcommands share: their options, the common checks
// around each command, and the helpers that build the subcommand tree
// (cmd_geneve.cpp, cmd_geneve_ports.cpp, cmd_geneve_rules.cpp).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "commands.hpp"
#include "xoffload/geneve/geneve.hpp"
#include "xoffload/core/netdev.hpp"

namespace xoffload::cli {

struct GeneveOpts {
	std::string ifname, port, vni, action, queues = "1", cls, state;
	bool dflt = false, remove = false, nic = false, watch = false;
	double interval = 0;
	unsigned count = 0;
	std::string format = "text";
};

// Runs fn(dev, maps) after the common checks, reporting any error.
void geneve_run(const Globals &g, int &rc, const std::string &ifname, bool create,
		const std::function<Status(const Netdev &, GeneveMaps &)> &fn,
		const std::function<Status(const Netdev &)> &before = {});

// "default" for XO_GNV_VNI_DEFAULT, else the number.
std::string vni_str(uint32_t vni);
// "vni":N, or for the default rule "vni":null,"default":true (JSON numbers
// stay numbers; "default" is what users type for it)
void json_vni(Json &j, uint32_t vni);

// A subcommand of @gv that takes subcommands (port, rule, option).
CLI::App *geneve_group(CLI::App *gv, const char *name, const char *desc);
// A subcommand of @parent that runs, with its own options and an
// interface argument (required unless !need_if).
std::pair<CLI::App *, std::shared_ptr<GeneveOpts>> geneve_leaf(CLI::App *parent, const char *name, const char *desc,
								bool need_if = true);

void add_geneve_port_commands(CLI::App *gv, Globals &g, int &rc);	// port add, del, sync, list
void add_geneve_rule_commands(CLI::App *gv, Globals &g, int &rc);	// rule add, del, list; option known, list

} // namespace xoffload::cli
