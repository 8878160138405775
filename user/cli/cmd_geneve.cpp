// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// geneve: the UDP port registry, per-VNI rules, known option classes,
// checksum verification and counters of xdp_geneve on an interface. The
// port commands are in cmd_geneve_ports.cpp, rules and options in
// cmd_geneve_rules.cpp.
#include <cstdio>
#include <functional>
#include <memory>

#include "geneve_cli.hpp"
#include "prometheus.hpp"
#include "xoffload/geneve/geneve.hpp"
#include "xoffload/bpf/loader.hpp"
#include "xoffload/core/pins.hpp"

namespace xoffload::cli {

void geneve_run(const Globals &g, int &rc, const std::string &ifname, bool create,
		const std::function<Status(const Netdev &, GeneveMaps &)> &fn,
		const std::function<Status(const Netdev &)> &before)
{
	if (auto s = prepare(g); !s) {
		rc = report(s.error());
		return;
	}
	auto dev = netdev_with_pins(ifname, true);
	if (!dev) {
		rc = report(dev.error());
		return;
	}
	// what can fail without anything pinned yet (port add --nic)
	if (before) {
		if (auto s = before(*dev); !s) {
			rc = report(s.error());
			return;
		}
	}
	auto maps = GeneveMaps::open(pin_dir(*dev), dev->name, create);
	if (!maps) {
		rc = report(maps.error());
		return;
	}
	// made here (geneve port/rule add before any attach): recorded as @dev's
	if (auto s = mark_pin_dir(*dev); !s) {
		rc = report(s.error());
		return;
	}
	if (auto s = fn(*dev, *maps); !s)
		rc = report(s.error());
}

std::string vni_str(uint32_t vni)
{
	return vni == XO_GNV_VNI_DEFAULT ? "default" : std::to_string(vni);
}

void json_vni(Json &j, uint32_t vni)
{
	if (vni == XO_GNV_VNI_DEFAULT)
		j.null("vni").kv("default", true);
	else
		j.kv("vni", vni);
}

CLI::App *geneve_group(CLI::App *gv, const char *name, const char *desc)
{
	auto *s = gv->add_subcommand(name, desc);
	s->require_subcommand(1);
	s->fallthrough();
	return s;
}

std::pair<CLI::App *, std::shared_ptr<GeneveOpts>> geneve_leaf(CLI::App *parent, const char *name, const char *desc,
								bool need_if)
{
	auto o = std::make_shared<GeneveOpts>();
	auto *s = parent->add_subcommand(name, desc);
	s->fallthrough();
	auto *opt = s->add_option("interface", o->ifname, "Interface");
	if (need_if)
		opt->required();
	return std::make_pair(s, o);
}

namespace {

// The total with every counter, zeros too (as ip -s and ethtool -S); a VNI
// with the counters that moved (every counter with -v): a VNI has as many
// lines as reasons, and there may be thousands of VNIs.
void set_text(bool all, const char *title, const GeneveCounterSet &c, const GeneveCounterSet *prev, double dt)
{
	std::printf("%s\n", title);
	print_counter_set(c, prev, geneve_counter_name, 24, all, dt);
}

const GeneveCounterSet *find_vni(const GeneveCounters *c, uint32_t vni)
{
	if (!c)
		return nullptr;
	for (const auto &[v, s] : c->per_vni)
		if (v == vni)
			return &s;
	static const GeneveCounterSet zero{};
	return &zero;
}

// In watch mode (@prev) each sample is rates over @dt seconds, pps and bps
// in the text, packets_per_s and bits_per_s in JSON, with the sample's
// wall-clock time.
void print_counters(const Globals &g, const Netdev &dev, const GeneveCounters &c, const GeneveCounters *prev,
		    double dt)
{
	if (g.prometheus) {
		Prom p({});
		prom_geneve_counters(p, {{{{"netns", g.netns}, {"ifname", dev.name}}, c}});
		p.print();
		return;
	}
	if (g.json) {
		Json j;
		j.begin_object().kv("interface", dev.name);
		if (prev)
			j.kv("timestamp", sample_time()).kv("interval_s", dt);
		j.begin_object("total");
		json_counter_set(j, c.total, prev ? &prev->total : nullptr, geneve_counter_name, dt);
		j.end_object().begin_array("vnis");
		for (const auto &[vni, s] : c.per_vni) {
			j.begin_object();
			json_vni(j, vni);
			json_counter_set(j, s, find_vni(prev, vni), geneve_counter_name, dt);
			j.end_object();
		}
		j.end_array().end_object().print();
		return;
	}
	if (prev)
		std::printf("%s %s, per second over %.1f s\n", dev.name.c_str(), sample_clock().c_str(), dt);
	set_text(true, (dev.name + " total").c_str(), c.total, prev ? &prev->total : nullptr, dt);
	for (const auto &[vni, s] : c.per_vni) {
		const GeneveCounterSet *p = find_vni(prev, vni);
		bool moved = g.verbose > 0;
		for (unsigned r = 0; r < kGeneveStats && !moved; r++)
			moved = s[r].packets != (p ? (*p)[r].packets : 0);
		if (moved)
			set_text(g.verbose > 0, ("  vni " + vni_str(vni)).c_str(), s, p, dt);
	}
	std::fflush(stdout);
}

} // namespace

void add_geneve_command(CLI::App &app, Globals &g, int &rc)
{
	auto *gv = app.add_subcommand("geneve", "Geneve port registry, VNI rules, option policy and counters");
	gv->require_subcommand(1);
	gv->fallthrough();

	add_geneve_port_commands(gv, g, rc);
	add_geneve_rule_commands(gv, g, rc);

	// ---- csum ----
	{
		auto [s, o] = geneve_leaf(gv, "csum", "Outer UDP checksum verification: on | off (bad ones drop, counted)");
		s->add_option("state", o->state, "on | off")->required();
		s->callback([&g, &rc, o] {
			if (o->state != "on" && o->state != "off") {
				rc = report(usage_error("csum takes on or off, not '" + o->state + "'"));
				return;
			}
			geneve_run(g, rc, o->ifname, true, [&](const Netdev &dev, GeneveMaps &m) -> Status {
				if (auto st = m.set_verify_csum(o->state == "on"); !st)
					return st;
				if (g.json)
					Json().begin_object().kv("interface", dev.name).kv("verify_csum", o->state == "on")
						.end_object().print();
				else
					std::printf("%s: outer UDP checksum verification %s\n", dev.name.c_str(),
						    o->state.c_str());
				return ok();
			});
		});
	}

	// ---- decap-via ----
	{
		auto [s, o] = geneve_leaf(gv, "decap-via",
				   "How decapped frames reach the stack: cpumap (it verifies their inner "
				   "checksums) | pass (XDP_PASS: the driver's verdict on the outer one stands)");
		s->add_option("state", o->state, "cpumap | pass")->required();
		s->callback([&g, &rc, o] {
			if (o->state != "cpumap" && o->state != "pass") {
				rc = report(usage_error("decap-via takes cpumap or pass, not '" + o->state + "'"));
				return;
			}
			geneve_run(g, rc, o->ifname, true, [&](const Netdev &dev, GeneveMaps &m) -> Status {
				if (auto st = m.set_decap_cpumap(o->state == "cpumap", true); !st)
					return st;
				if (g.json)
					Json().begin_object().kv("interface", dev.name).kv("decap_via", o->state)
						.end_object().print();
				else
					std::printf("%s: decapped frames via %s\n", dev.name.c_str(), o->state.c_str());
				return ok();
			});
		});
	}

	// ---- stats ----
	{
		auto [s, o] = geneve_leaf(gv, "stats", "Counters by reason, in total and per VNI");
		auto *count = add_interval_count(s, o->interval, o->count);
		add_format(s, o->format);
		s->callback([&g, &rc, o, count] {
			if (interval_count_misuse(count, o->interval)) {
				rc = report(usage_error("--count needs --interval"));
				return;
			}
			if (auto st = apply_format(g, o->format, o->interval > 0); !st) {
				rc = report(st.error());
				return;
			}
			geneve_run(g, rc, o->ifname, false, [&](const Netdev &dev, GeneveMaps &m) -> Status {
				return watch_counters(o->interval, o->count, [&] { return m.counters(); },
						      [&](const GeneveCounters &cur, const GeneveCounters *prev, double dt) {
							      print_counters(g, dev, cur, prev, dt);
						      });
			});
		});
	}
}

} // namespace xoffload::cli
