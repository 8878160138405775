// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// geneve rule and geneve option: what xdp_geneve does with each VNI (pass,
// drop, decap, steer to sockets or CPUs) and which option classes it knows.
#include <cstdio>
#include <string>

#include "geneve_cli.hpp"
#include "xoffload/features/features.hpp"
#include "xoffload/geneve/geneve.hpp"
#include "xoffload/core/parse.hpp"

namespace xoffload::cli {

void add_geneve_rule_commands(CLI::App *gv, Globals &g, int &rc)
{
	// ---- rule ----
	auto *rule = geneve_group(gv, "rule", "What to do with each VNI (and with VNIs without a rule)");
	auto vni_of = [](const GeneveOpts &o) -> Result<uint32_t> {
		if (o.dflt == !o.vni.empty())
			return usage_error("give exactly one of --vni N or --default");
		if (o.dflt)
			return XO_GNV_VNI_DEFAULT;
		return parse_vni(o.vni);
	};
	{
		auto [s, o] = geneve_leaf(rule, "add", "Add or replace the rule of a VNI");
		s->add_option("--vni", o->vni, "VNI 0..16777215");
		s->add_flag("--default", o->dflt, "The rule of VNIs without one (initially pass)");
		s->add_option("--action", o->action, "pass | drop | decap | xsk | cpu")->required();
		auto *queues = s->add_option("--queues", o->queues,
					     "xsk: N sockets on every RX queue (each queue its own XSKMAP row since "
					     "ABI 5; recv --geneve fills the rows of its queues), flows spread by "
					     "inner 5-tuple hash; cpu: N CPUs (default 1)");
		s->callback([&g, &rc, o, vni_of, queues] {
			auto vni = vni_of(*o);
			auto act = parse_geneve_action(o->action);
			if (act && queues->count() && *act != XO_GNV_ACT_XSK && *act != XO_GNV_ACT_CPU) {
				rc = report(usage_error("--queues applies to --action xsk and cpu, not " + o->action));
				return;
			}
			Result<long long> q = usage_error("--queues must be 1.." + std::to_string(XO_GNV_MAX_QUEUES));
			if (auto v = parse_number(o->queues, "--queues"); v && *v >= 1 && *v <= XO_GNV_MAX_QUEUES)
				q = *v;
			for (const Error *e : {vni ? nullptr : &vni.error(), act ? nullptr : &act.error(),
					       q ? nullptr : &q.error()})
				if (e) {
					rc = report(*e);
					return;
				}
			geneve_run(g, rc, o->ifname, true, [&](const Netdev &dev, GeneveMaps &m) -> Status {
				GeneveRule r{*vni, *act, static_cast<uint32_t>(*q)};
				if (auto st = m.rule_set(r); !st)
					return st;
				// the first decap rule on a driver that may vouch for the
				// outer checksum: through the CPUMAP, unless the user chose
				std::string via_note;
				if (*act == XO_GNV_ACT_DECAP) {
					auto c = m.cfg();
					if (!c)
						return c.error();
					std::string drv = driver_name(dev.name);
					const features::NicFacts nf = features::nic_facts_running(drv);
					if (!(c->flags & XO_GNV_F_DECAP_CHOSEN) && !(c->flags & XO_GNV_F_DECAP_CPUMAP) &&
					    features::decap_cpumap_default(nf)) {
						if (auto st = m.set_decap_cpumap(true, false); !st)
							return st;
						const std::string why =
							drv.empty()    ? std::string("driver unknown")
							: nf.modelled ? drv + " marks the outer UDP checksum verified"
								      : drv + " not modelled";
						via_note = "decapped frames go to the stack through the CPUMAP, so it "
							   "verifies their inner checksums (" + why +
							   "; geneve decap-via " + dev.name + " pass to change)";
					}
				}
				bool steer = *act == XO_GNV_ACT_XSK || *act == XO_GNV_ACT_CPU;
				if (g.json) {
					Json j;
					j.begin_object().kv("interface", dev.name);
					json_vni(j, *vni);
					j.kv("action", geneve_action_name(*act));
					if (steer)
						j.kv("queues", r.queues);
					j.end_object().print();
				} else {
					std::printf("%s: vni %s -> %s", dev.name.c_str(), vni_str(*vni).c_str(),
						    geneve_action_name(*act));
					if (steer)
						std::printf(" over %u %s", r.queues,
							    *act == XO_GNV_ACT_XSK ? "sockets of each RX queue" : "CPUs");
					std::printf("\n");
					if (!via_note.empty())
						std::printf("%s: %s\n", dev.name.c_str(), via_note.c_str());
				}
				return ok();
			});
		});
	}
	{
		auto [s, o] = geneve_leaf(rule, "del", "Remove a VNI's rule (--default: back to pass)");
		s->add_option("--vni", o->vni, "VNI 0..16777215");
		s->add_flag("--default", o->dflt, "Reset the default rule to pass");
		s->callback([&g, &rc, o, vni_of] {
			auto vni = vni_of(*o);
			if (!vni) {
				rc = report(vni.error());
				return;
			}
			geneve_run(g, rc, o->ifname, false, [&](const Netdev &dev, GeneveMaps &m) -> Status {
				if (auto st = m.rule_del(*vni); !st)
					return st;
				if (g.json) {
					Json j;
					j.begin_object().kv("interface", dev.name);
					json_vni(j, *vni);
					j.kv("action", "deleted").end_object().print();
				} else {
					std::printf("%s: rule of vni %s removed\n", dev.name.c_str(), vni_str(*vni).c_str());
				}
				return ok();
			});
		});
	}
	{
		auto [s, o] = geneve_leaf(rule, "list", "Rules, default first");
		s->callback([&g, &rc, o] {
			geneve_run(g, rc, o->ifname, false, [&](const Netdev &dev, GeneveMaps &m) -> Status {
				auto rules = m.rules();
				if (!rules)
					return rules.error();
				auto cfg = m.cfg();
				if (!cfg)
					return cfg.error();
				bool csum = cfg->flags & XO_GNV_F_VERIFY_CSUM;
				const char *via = (cfg->flags & XO_GNV_F_DECAP_CPUMAP) ? "cpumap" : "pass";
				if (g.json) {
					Json j;
					j.begin_object().kv("interface", dev.name).kv("verify_csum", csum).kv("decap_via", via)
						.begin_array("rules");
					for (const auto &r : *rules) {
						j.begin_object();
						json_vni(j, r.vni);
						j.kv("action", geneve_action_name(r.action)).kv("queues", r.queues).end_object();
					}
					j.end_array().end_object().print();
					return ok();
				}
				std::printf("%s: outer UDP checksum verification %s, decapped frames via %s\n", dev.name.c_str(),
					    csum ? "on" : "off", via);
				for (const auto &r : *rules) {
					std::printf("  vni %-9s %s", vni_str(r.vni).c_str(), geneve_action_name(r.action));
					if (r.action == XO_GNV_ACT_XSK)
						std::printf(" (queues %u: sockets per RX queue)", r.queues);
					else if (r.action == XO_GNV_ACT_CPU)
						std::printf(" (queues %u: CPUs)", r.queues);
					std::printf("\n");
				}
				return ok();
			});
		});
	}

	// ---- option ----
	auto *option = geneve_group(gv, "option", "RFC 8926 option policy: critical options of unknown classes drop");
	{
		auto [s, o] = geneve_leaf(option, "known", "Declare an option class known (or --remove it)");
		s->add_option("--class", o->cls, "Option class 0..0xffff")->required();
		s->add_flag("--remove", o->remove, "Forget the class instead");
		s->callback([&g, &rc, o] {
			auto cls = parse_option_class(o->cls);
			if (!cls) {
				rc = report(cls.error());
				return;
			}
			geneve_run(g, rc, o->ifname, true, [&](const Netdev &dev, GeneveMaps &m) -> Status {
				if (auto st = m.option_known(*cls, !o->remove); !st)
					return st;
				char buf[8];
				std::snprintf(buf, sizeof(buf), "0x%04x", *cls);
				if (g.json)
					Json().begin_object().kv("interface", dev.name).kv("class", buf)
						.kv("known", !o->remove).end_object().print();
				else
					std::printf("%s: option class %s %s\n", dev.name.c_str(), buf,
						    o->remove ? "no longer known" : "known");
				return ok();
			});
		});
	}
	{
		auto [s, o] = geneve_leaf(option, "list", "Known option classes");
		s->callback([&g, &rc, o] {
			geneve_run(g, rc, o->ifname, false, [&](const Netdev &dev, GeneveMaps &m) -> Status {
				auto cls = m.known_classes();
				if (!cls)
					return cls.error();
				Json j;
				j.begin_object().kv("interface", dev.name).begin_array("known_classes");
				if (!g.json)
					std::printf("%s: known option classes:%s", dev.name.c_str(), cls->empty() ? " none" : "");
				for (uint16_t c : *cls) {
					char buf[8];
					std::snprintf(buf, sizeof(buf), "0x%04x", c);
					j.value(buf);
					if (!g.json)
						std::printf(" %s", buf);
				}
				j.end_array().end_object();
				if (g.json)
					j.print();
				else
					std::printf("\n");
				return ok();
			});
		});
	}

}

} // namespace xoffload::cli
