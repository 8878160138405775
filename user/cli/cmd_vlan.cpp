// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// vlan: policy (pop, push, rewrite, allow, clear), show and stats of the
// VLAN programs attached to an interface.
#include <time.h>

#include <cstdio>
#include <functional>
#include <memory>

#include "commands.hpp"
#include "prometheus.hpp"
#include "xoffload/bpf/loader.hpp"
#include "xoffload/core/pins.hpp"
#include "xoffload/vlan/vlan.hpp"

namespace xoffload::cli {

namespace {

struct VlanOpts {
	std::string ifname, dir = "ingress";
	std::string depth = "1";
	std::string vid, proto, pcp = "0", inner_vid, inner_pcp = "0";
	bool dei = false, inner_dei = false;
	std::string from, to;
	bool remove = false, clear = false;
	std::vector<std::string> vids;
	double interval = 0;
	unsigned count = 0;
	std::string format = "text";
};

// Runs fn(dev, maps, dir) after the common checks, reporting any error.
void run(const Globals &g, int &rc, const VlanOpts &o,
	 const std::function<Status(const Netdev &, VlanMaps &, Dir)> &fn)
{
	auto dir = parse_dir(o.dir);
	if (!dir) {
		rc = report(dir.error());
		return;
	}
	if (auto s = prepare(g); !s) {
		rc = report(s.error());
		return;
	}
	auto dev = netdev_with_pins(o.ifname, true);
	if (!dev) {
		rc = report(dev.error());
		return;
	}
	auto maps = VlanMaps::open(pin_dir(*dev), dev->name);
	if (!maps) {
		rc = report(maps.error());
		return;
	}
	if (auto s = fn(*dev, *maps, *dir); !s)
		rc = report(s.error());
}

void print_policy_set(const Globals &g, const Netdev &dev, Dir d, const xo_vlan_policy &p)
{
	if (g.json) {
		Json().begin_object().kv("interface", dev.name).kv("dir", dir_name(d))
			.kv("policy", describe_policy(p)).end_object().print();
		return;
	}
	std::printf("%s %s: %s\n", dev.name.c_str(), dir_name(d), describe_policy(p).c_str());
}

void policy_json(Json &j, const xo_vlan_policy &p, const std::vector<VidRule> &rules)
{
	const char *act = p.action == XO_VLAN_ACT_POP ? "pop" : p.action == XO_VLAN_ACT_PUSH ? "push" : "none";
	j.kv("action", act).kv("summary", describe_policy(p));
	if (p.action == XO_VLAN_ACT_POP)
		j.kv("depth", unsigned{p.pop_depth});
	j.begin_array("push");
	for (unsigned i = 0; p.action == XO_VLAN_ACT_PUSH && i < p.push_count && i < XO_VLAN_MAX_DEPTH; i++) {
		TagSpec t = TagSpec::from_abi(p.push[i]);
		j.begin_object().kv("proto", t.tpid == XO_ETH_P_8021AD ? "802.1ad" : "802.1Q")
			.kv("vid", unsigned{t.vid}).kv("pcp", unsigned{t.pcp}).kv("dei", t.dei).end_object();
	}
	j.end_array().kv("allow_list", (p.flags & XO_VLAN_F_ALLOW) != 0).begin_array("allowed");
	for (const auto &r : rules)
		if (r.allowed)
			j.value(uint64_t{r.vid});
	j.end_array().begin_array("rewrite");
	for (const auto &r : rules)
		if (r.rewrite_to)
			j.begin_object().kv("from", unsigned{r.vid}).kv("to", unsigned{r.rewrite_to}).end_object();
	j.end_array();
}


// Every counter of every hook, zeros too (as ip -s and ethtool -S print
// theirs: a counter that did not move is news as well). In watch mode
// (@prev) each sample is rates over @dt seconds, pps and bps in the text,
// packets_per_s and bits_per_s in JSON, with the sample's wall-clock time.
void print_counters(const Globals &g, const Netdev &dev, const VlanCounters &c, const VlanCounters *prev,
		    double dt)
{
	if (g.prometheus) {
		Prom p({});
		prom_vlan_counters(p, {{{{"netns", g.netns}, {"ifname", dev.name}}, c}});
		p.print();
		return;
	}
	if (g.json) {
		Json j;
		j.begin_object().kv("interface", dev.name);
		if (prev)
			j.kv("timestamp", sample_time()).kv("interval_s", dt);
		j.begin_object("hooks");
		for (unsigned h = 0; h < kHooks; h++) {
			j.begin_object(to_string(static_cast<Hook>(h)));
			json_counter_set(j, c.v[h], prev ? &prev->v[h] : nullptr, vlan_counter_name, dt);
			j.end_object();
		}
		j.end_object().end_object().print();
		return;
	}
	if (prev)
		std::printf("%s %s, per second over %.1f s\n", dev.name.c_str(), sample_clock().c_str(), dt);
	for (unsigned h = 0; h < kHooks; h++) {
		std::printf("%s %s\n", dev.name.c_str(), to_string(static_cast<Hook>(h)));
		print_counter_set(c.v[h], prev ? &prev->v[h] : nullptr, vlan_counter_name, 24, true, dt);
	}
	std::fflush(stdout);
}

} // namespace

void add_vlan_command(CLI::App &app, Globals &g, int &rc)
{
	auto *v = app.add_subcommand("vlan", "VLAN policy and counters of an interface");
	v->require_subcommand(1);
	v->fallthrough();

	auto add = [&](const char *name, const char *desc) {
		auto o = std::make_shared<VlanOpts>();
		auto *s = v->add_subcommand(name, desc);
		s->fallthrough();
		s->add_option("interface", o->ifname, "Interface")->required();
		return std::make_pair(s, o);
	};
	auto add_dir = [](CLI::App *s, VlanOpts &o) {
		s->add_option("--dir", o.dir, "ingress (XDP, TC ingress; default) | egress (TC egress)");
	};

	{
		auto [s, o] = add("pop", "Remove the outer tag(s)");
		s->add_option("--depth", o->depth, "Tags to pop: 1 (default) or 2");
		add_dir(s, *o);
		s->callback([&g, &rc, o] {
			if (o->depth != "1" && o->depth != "2") {
				rc = report(usage_error("depth must be 1 or 2, not '" + o->depth + "'"));
				return;
			}
			run(g, rc, *o, [&](const Netdev &dev, VlanMaps &m, Dir d) -> Status {
				auto cur = m.policy(d);
				if (!cur)
					return cur.error();
				auto p = make_pop_policy(*cur, o->depth == "2" ? 2 : 1);
				if (auto s = m.set_policy(d, p); !s)
					return s;
				print_policy_set(g, dev, d, p);
				return ok();
			});
		});
	}
	{
		auto [s, o] = add("push", "Insert a tag, or two (QinQ: outer 802.1ad + inner 802.1Q)");
		s->add_option("--vid", o->vid, "VID of the (outer) tag, 1..4094")->required();
		s->add_option("--proto", o->proto, "802.1Q (default) | 802.1ad (default with --inner-vid)");
		s->add_option("--pcp", o->pcp, "Priority code point 0..7");
		s->add_flag("--dei", o->dei, "Set the drop eligible indicator");
		s->add_option("--inner-vid", o->inner_vid, "Also push an inner 802.1Q tag with this VID");
		auto *ipcp = s->add_option("--inner-pcp", o->inner_pcp, "PCP of the inner tag (with --inner-vid)");
		auto *idei = s->add_flag("--inner-dei", o->inner_dei, "DEI of the inner tag (with --inner-vid)");
		add_dir(s, *o);
		s->callback([&g, &rc, o, ipcp, idei] {
			if (o->inner_vid.empty() && (ipcp->count() || idei->count())) {
				rc = report(usage_error(std::string(ipcp->count() ? "--inner-pcp" : "--inner-dei") +
							" needs --inner-vid (the inner tag it describes)"));
				return;
			}
			std::vector<TagSpec> tags(1);
			auto vid = parse_vid(o->vid);
			auto pcp = parse_pcp(o->pcp);
			auto tpid = parse_tpid(o->proto.empty() ? (o->inner_vid.empty() ? "802.1Q" : "802.1ad") : o->proto);
			for (const Error *e : {vid ? nullptr : &vid.error(), pcp ? nullptr : &pcp.error(),
					       tpid ? nullptr : &tpid.error()})
				if (e) {
					rc = report(*e);
					return;
				}
			tags[0] = TagSpec{*tpid, *vid, *pcp, o->dei};
			if (!o->inner_vid.empty()) {
				auto ivid = parse_vid(o->inner_vid);
				auto ipcp = parse_pcp(o->inner_pcp);
				if (!ivid || !ipcp) {
					rc = report(!ivid ? ivid.error() : ipcp.error());
					return;
				}
				tags.push_back(TagSpec{XO_ETH_P_8021Q, *ivid, *ipcp, o->inner_dei});
			}
			run(g, rc, *o, [&](const Netdev &dev, VlanMaps &m, Dir d) -> Status {
				auto cur = m.policy(d);
				if (!cur)
					return cur.error();
				auto p = make_push_policy(*cur, tags);
				if (auto s = m.set_policy(d, p); !s)
					return s;
				print_policy_set(g, dev, d, p);
				return ok();
			});
		});
	}
	{
		auto [s, o] = add("rewrite", "Translate the outer VID A to B (B keeps PCP and DEI)");
		s->add_option("--from", o->from, "VID to translate")->required();
		auto *to = s->add_option("--to", o->to, "New VID");
		s->add_flag("--delete", o->remove, "Remove the translation of --from (exit 1 when there is none)")
			->excludes(to);
		add_dir(s, *o);
		s->callback([&g, &rc, o] {
			auto from = parse_vid(o->from);
			if (!from) {
				rc = report(from.error());
				return;
			}
			uint16_t to = 0;
			if (!o->remove) {
				if (o->to.empty()) {
					rc = report(usage_error("rewrite needs --to B (or --delete)"));
					return;
				}
				auto t = parse_vid(o->to);
				if (!t) {
					rc = report(t.error());
					return;
				}
				if (*t == *from) {
					rc = report(usage_error("--to " + o->to + " is --from: nothing to rewrite"));
					return;
				}
				to = *t;
			}
			run(g, rc, *o, [&](const Netdev &dev, VlanMaps &m, Dir d) -> Status {
				if (!to) {
					// as geneve port del of an absent port: a fact of the system, exit 1
					auto rules = m.vid_rules(d);
					if (!rules)
						return rules.error();
					bool there = false;
					for (const auto &r : *rules)
						there = there || (r.vid == *from && r.rewrite_to);
					if (!there)
						return runtime_error("no rewrite of VID " + std::to_string(*from) + " on " +
									     dev.name + " " + dir_name(d),
								     ENOENT);
				}
				if (auto s = m.set_rewrite(d, *from, to); !s)
					return s;
				if (g.json)
					Json().begin_object().kv("interface", dev.name).kv("dir", dir_name(d))
						.kv("from", unsigned{*from}).kv("to", unsigned{to}).end_object().print();
				else if (to)
					std::printf("%s %s: rewrite VID %u -> %u\n", dev.name.c_str(), dir_name(d), *from, to);
				else
					std::printf("%s %s: rewrite of VID %u removed\n", dev.name.c_str(), dir_name(d), *from);
				return ok();
			});
		});
	}
	{
		auto [s, o] = add("allow", "Allow-list: drop tagged frames whose outer VID is not listed");
		auto *vid = s->add_option("--vid", o->vids, "VIDs to allow (several)");
		auto *rm = s->add_flag("--remove", o->remove, "Remove the given VIDs instead");
		s->add_flag("--clear", o->clear, "Empty the list and turn the allow-list off")->excludes(vid)->excludes(rm);
		add_dir(s, *o);
		s->callback([&g, &rc, o] {
			std::vector<uint16_t> vids;
			for (const auto &sv : o->vids) {
				auto vid = parse_vid(sv);
				if (!vid) {
					rc = report(vid.error());
					return;
				}
				vids.push_back(*vid);
			}
			if (vids.empty() && !o->clear) {
				rc = report(usage_error("allow needs --vid N... or --clear"));
				return;
			}
			run(g, rc, *o, [&](const Netdev &dev, VlanMaps &m, Dir d) -> Status {
				Status s = o->clear ? m.clear_allowed(d) : m.set_allowed(d, vids, !o->remove);
				if (!s)
					return s;
				auto rules = m.vid_rules(d);
				if (!rules)
					return rules.error();
				if (g.json) {
					Json j;
					j.begin_object().kv("interface", dev.name).kv("dir", dir_name(d))
						.kv("allow_list", !o->clear).begin_array("allowed");
					for (const auto &r : *rules)
						if (r.allowed)
							j.value(uint64_t{r.vid});
					j.end_array().end_object().print();
				} else {
					std::printf("%s %s: allow-list %s:", dev.name.c_str(), dir_name(d),
						    o->clear ? "off" : "on");
					for (const auto &r : *rules)
						if (r.allowed)
							std::printf(" %u", r.vid);
					std::printf("\n");
				}
				return ok();
			});
		});
	}
	{
		auto [s, o] = add("clear", "Back to the default policy: tags untouched, no allow-list, no rewrite");
		add_dir(s, *o);
		s->callback([&g, &rc, o] {
			run(g, rc, *o, [&](const Netdev &dev, VlanMaps &m, Dir d) -> Status {
				// one switch: no frame sees the allow-list gone but a rewrite left
				if (auto s = m.clear(d); !s)
					return s;
				print_policy_set(g, dev, d, make_clear_policy());
				return ok();
			});
		});
	}
	{
		auto [s, o] = add("show", "Show the policy of both directions");
		s->callback([&g, &rc, o] {
			run(g, rc, *o, [&](const Netdev &dev, VlanMaps &m, Dir) -> Status {
				Json j;
				j.begin_object().kv("interface", dev.name);
				for (Dir d : {Dir::ingress, Dir::egress}) {
					auto p = m.policy(d);
					if (!p)
						return p.error();
					auto rules = m.vid_rules(d);
					if (!rules)
						return rules.error();
					if (g.json) {
						j.begin_object(dir_name(d));
						policy_json(j, *p, *rules);
						j.end_object();
						continue;
					}
					std::printf("%s %s: %s\n", dev.name.c_str(), dir_name(d), describe_policy(*p).c_str());
					std::string allowed, rewrites;
					for (const auto &r : *rules) {
						if (r.allowed)
							allowed += " " + std::to_string(r.vid);
						if (r.rewrite_to)
							rewrites += " " + std::to_string(r.vid) + "->" + std::to_string(r.rewrite_to);
					}
					if (!allowed.empty())
						std::printf("  allowed VIDs:%s\n", allowed.c_str());
					if (!rewrites.empty())
						std::printf("  rewrites:%s\n", rewrites.c_str());
				}
				if (g.json)
					j.end_object().print();
				return ok();
			});
		});
	}
	{
		auto [s, o] = add("stats", "Per-hook counters by reason");
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
			run(g, rc, *o, [&](const Netdev &dev, VlanMaps &m, Dir) -> Status {
				return watch_counters(o->interval, o->count, [&] { return m.counters(); },
						      [&](const VlanCounters &cur, const VlanCounters *prev, double dt) {
							      print_counters(g, dev, cur, prev, dt);
						      });
			});
		});
	}
}

} // namespace xoffload::cli
