// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// agent: applies a config file and keeps it applied as links come, go,
// are renamed or change MTU; /metrics with every counter of the links it
// manages (the families of vlan stats and geneve stats) and its health.
#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "prometheus.hpp"
#include "xoffload/agent/agent.hpp"
#include "xoffload/core/netdev.hpp"

namespace xoffload::cli {

namespace {

// Every counter of @ifnames: the vlan and geneve families once each, a row
// per interface that has the feature. A feature not attached is no error;
// maps that are there but cannot be read are counted in *errors.
std::string render_counters(const std::string &netns, const std::vector<std::string> &ifnames, uint64_t *errors)
{
	std::vector<std::pair<Prom::Labels, VlanCounters>> vlan;
	std::vector<std::pair<Prom::Labels, GeneveCounters>> geneve;
	for (const auto &name : ifnames) {
		auto dev = netdev_lookup(name);
		if (!dev)
			continue;	// gone since the snapshot
		const Prom::Labels labels{{"netns", netns}, {"ifname", name}};
		const std::string dir = pin_dir(*dev);
		if (auto m = VlanMaps::open(dir, name)) {
			if (auto c = m->counters())
				vlan.emplace_back(labels, *c);
			else
				++*errors;
		} else if (m.error().err != ENOENT) {
			++*errors;
		}
		if (auto m = GeneveMaps::open(dir, name, false)) {
			if (auto c = m->counters())
				geneve.emplace_back(labels, *c);
			else
				++*errors;
		} else if (m.error().err != ENOENT) {
			++*errors;
		}
	}
	Prom p({});
	prom_vlan_counters(p, vlan);
	prom_geneve_counters(p, geneve);
	return p.str();
}

} // namespace

void add_agent_command(CLI::App &app, Globals &g, int &rc)
{
	auto *s = app.add_subcommand("agent",
				     "Apply a config file and keep it applied as links change; serve /metrics; "
				     "reload on SIGHUP, leave the datapath as it is on SIGTERM");
	auto o = std::make_shared<agent::Options>();
	o->file = "/etc/xoffload/xoffload.toml";
	auto metrics = std::make_shared<std::string>();
	s->add_option("-f,--file", o->file, "The config file (xoffload.toml(5))")->capture_default_str();
	auto *mopt = s->add_option("--metrics", *metrics,
				   "Serve /metrics on ADDR:PORT or [ADDR6]:PORT instead of the file's [agent] metrics "
				   "(default 127.0.0.1:9796); \"\" for none");
	s->add_flag("--metrics-public", o->metrics_public,
		    "Allow a /metrics address that is not loopback (it has no authentication)");
	s->add_flag("--keep-undeclared", o->keep_undeclared,
		    "Leave our state on interfaces the file does not declare (as apply --keep-undeclared); "
		    "without it, start and reload detach it");
	s->callback([&g, &rc, o, metrics, mopt] {
		if (auto st = prepare(g); !st) {
			rc = report(st.error());
			return;
		}
		agent::Options opt = *o;
		if (mopt->count())
			opt.metrics = *metrics;
		const std::string netns = g.netns;
		opt.counters = [netns](const std::vector<std::string> &ifnames, uint64_t *errors) {
			return render_counters(netns, ifnames, errors);
		};
		auto st = agent::run(opt);
		rc = st ? 0 : report(st.error());
	});
}

} // namespace xoffload::cli
