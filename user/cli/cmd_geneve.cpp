// geneve: the UDP port registry, per-VNI rules, known option classes,
// checksum verification and counters of xdp_geneve on an interface.
#include <dirent.h>
#include <time.h>

#include <cstdio>
#include <functional>
#include <memory>

#include "commands.hpp"
#include "xoffload/geneve.hpp"
#include "xoffload/loader.hpp"
#include "xoffload/pins.hpp"

namespace xoffload::cli {

namespace {

struct GeneveOpts {
	std::string ifname, port, vni, action, queues = "1", cls, state;
	bool dflt = false, remove = false;
	double interval = 0;
	unsigned count = 0;
};

// Runs fn(dev, maps) after the common checks, reporting any error.
void run(const Globals &g, int &rc, const std::string &ifname, bool create,
	 const std::function<Status(const Netdev &, GeneveMaps &)> &fn)
{
	if (auto s = prepare(g); !s) {
		rc = report(s.error());
		return;
	}
	auto dev = netdev_lookup(ifname);
	if (!dev) {
		rc = report(dev.error());
		return;
	}
	if (auto s = bpffs_check(); !s) {
		rc = report(s.error());
		return;
	}
	if (auto s = reconcile_pins(*dev); !s) {
		rc = report(s.error());
		return;
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

void ports_out(const Globals &g, const std::string &ifname, const std::vector<GenevePort> &ports, Json *j)
{
	if (g.json) {
		j->begin_object().kv("interface", ifname).begin_array("ports");
		for (const auto &p : ports)
			j->begin_object().kv("port", unsigned{p.port}).kv("refcnt", p.refcnt).end_object();
		j->end_array().end_object();
		return;
	}
	std::printf("%s:", ifname.c_str());
	if (ports.empty())
		std::printf(" no Geneve ports");
	for (const auto &p : ports)
		std::printf(" %u (refs %u)", p.port, p.refcnt);
	std::printf("\n");
}


void set_text(const Globals &g, const char *title, const GeneveCounterSet &c, const GeneveCounterSet *prev,
	      double dt)
{
	uint64_t total = 0;
	for (unsigned r = 0; r < kGeneveStats; r++)
		total += c[r].packets - (prev ? (*prev)[r].packets : 0);
	if (!total && !g.verbose)
		return;
	std::printf("%s%s\n", title, prev ? " (per second)" : "");
	print_counter_set(c, prev, geneve_counter_name, 24, g.verbose, dt);
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

void print_counters(const Globals &g, const Netdev &dev, const GeneveCounters &c, const GeneveCounters *prev,
		    double dt)
{
	if (g.json) {
		Json j;
		j.begin_object().kv("interface", dev.name);
		if (prev)
			j.kv("interval_s", dt);
		j.begin_object("total");
		json_counter_set(j, c.total, prev ? &prev->total : nullptr, geneve_counter_name);
		j.end_object().begin_array("vnis");
		for (const auto &[vni, s] : c.per_vni) {
			j.begin_object().kv("vni", vni_str(vni));
			json_counter_set(j, s, find_vni(prev, vni), geneve_counter_name);
			j.end_object();
		}
		j.end_array().end_object().print();
		return;
	}
	set_text(g, (dev.name + " total").c_str(), c.total, prev ? &prev->total : nullptr, dt);
	for (const auto &[vni, s] : c.per_vni)
		set_text(g, ("  vni " + vni_str(vni)).c_str(), s, find_vni(prev, vni), dt);
	std::fflush(stdout);
}

// Pin directories of this netns that hold geneve maps: (ifname, dir).
std::vector<std::pair<std::string, std::string>> geneve_dirs()
{
	std::vector<std::pair<std::string, std::string>> out;
	std::string root = std::string(kBpffsRoot) + "/xoffload";
	std::string suffix = netns_current().empty() ? "" : "@" + netns_current();
	auto names = geneve_map_names();
	DIR *d = opendir(root.c_str());
	if (!d || names.empty())
		return out;
	while (dirent *e = readdir(d)) {
		std::string n = e->d_name;
		if (n == "." || n == "..")
			continue;
		size_t at = n.find('@');
		std::string ifn = n.substr(0, at);
		std::string sfx = at == std::string::npos ? "" : n.substr(at);
		if (sfx != suffix)
			continue;
		if (path_exists(root + "/" + n + "/" + names[0]))
			out.push_back({ifn, root + "/" + n});
	}
	closedir(d);
	std::sort(out.begin(), out.end());
	return out;
}

} // namespace

void add_geneve_command(CLI::App &app, Globals &g, int &rc)
{
	auto *gv = app.add_subcommand("geneve", "Geneve port registry, VNI rules, option policy and counters");
	gv->require_subcommand(1);
	gv->fallthrough();

	auto group = [&](const char *name, const char *desc) {
		auto *s = gv->add_subcommand(name, desc);
		s->require_subcommand(1);
		s->fallthrough();
		return s;
	};
	auto leaf = [](CLI::App *parent, const char *name, const char *desc, bool need_if = true) {
		auto o = std::make_shared<GeneveOpts>();
		auto *s = parent->add_subcommand(name, desc);
		s->fallthrough();
		auto *opt = s->add_option("interface", o->ifname, "Interface");
		if (need_if)
			opt->required();
		return std::make_pair(s, o);
	};

	// ---- port ----
	auto *port = group("port", "UDP ports that carry Geneve (reference-counted)");
	// add and del: the same command, one reference more or less
	for (bool add : {true, false}) {
		auto [s, o] = add ? leaf(port, "add", "Register a port (again: one more reference)")
				  : leaf(port, "del", "Drop one reference; the port goes with the last");
		s->add_option("port", o->port, "UDP port 1..65535")->required();
		s->callback([&g, &rc, o, add] {
			auto p = parse_geneve_port(o->port);
			if (!p) {
				rc = report(p.error());
				return;
			}
			run(g, rc, o->ifname, add, [&](const Netdev &dev, GeneveMaps &m) -> Status {
				auto n = add ? m.port_add(*p) : m.port_del(*p);
				if (!n)
					return n.error();
				if (g.json)
					Json().begin_object().kv("interface", dev.name).kv("action", add ? "added" : "deleted")
						.kv("port", unsigned{*p}).kv("refcnt", *n).end_object().print();
				else if (add)
					std::printf("%s: Geneve port %u added (refs %u)\n", dev.name.c_str(), *p, *n);
				else if (*n)
					std::printf("%s: Geneve port %u released (refs %u)\n", dev.name.c_str(), *p, *n);
				else
					std::printf("%s: Geneve port %u removed\n", dev.name.c_str(), *p);
				return ok();
			});
		});
	}
	{
		auto [s, o] = leaf(port, "list", "Registered ports (one interface or all)", false);
		s->callback([&g, &rc, o] {
			if (!o->ifname.empty()) {
				run(g, rc, o->ifname, false, [&](const Netdev &dev, GeneveMaps &m) -> Status {
					auto ports = m.ports();
					if (!ports)
						return ports.error();
					Json j;
					ports_out(g, dev.name, *ports, &j);
					if (g.json)
						j.print();
					return ok();
				});
				return;
			}
			if (auto st = prepare(g); !st) {
				rc = report(st.error());
				return;
			}
			Json j;
			j.begin_object().begin_array("interfaces");
			for (const auto &[ifn, dir] : geneve_dirs()) {
				auto m = GeneveMaps::open(dir, ifn, false);
				if (!m) {
					rc = report(m.error());
					return;
				}
				auto ports = m->ports();
				if (!ports) {
					rc = report(ports.error());
					return;
				}
				ports_out(g, ifn, *ports, &j);
			}
			j.end_array().end_object();
			if (g.json)
				j.print();
		});
	}

	// ---- rule ----
	auto *rule = group("rule", "What to do with each VNI (and with VNIs without a rule)");
	auto vni_of = [](const GeneveOpts &o) -> Result<uint32_t> {
		if (o.dflt == !o.vni.empty())
			return usage_error("give exactly one of --vni N or --default");
		if (o.dflt)
			return XO_GNV_VNI_DEFAULT;
		return parse_vni(o.vni);
	};
	{
		auto [s, o] = leaf(rule, "add", "Add or replace the rule of a VNI");
		s->add_option("--vni", o->vni, "VNI 0..16777215");
		s->add_flag("--default", o->dflt, "The rule of VNIs without one (initially pass)");
		s->add_option("--action", o->action, "pass | drop | decap | xsk | cpu")->required();
		auto *queues = s->add_option("--queues", o->queues, "xsk/cpu: spread flows over N sockets/CPUs (default 1)");
		s->callback([&g, &rc, o, vni_of, queues] {
			auto vni = vni_of(*o);
			auto act = parse_geneve_action(o->action);
			if (act && queues->count() && *act != XO_GNV_ACT_XSK && *act != XO_GNV_ACT_CPU) {
				rc = report(usage_error("--queues applies to --action xsk and cpu, not " + o->action));
				return;
			}
			Result<long long> q = usage_error("--queues must be 1.." + std::to_string(XO_GNV_MAX_QUEUES));
			try {
				size_t used = 0;
				long long v = std::stoll(o->queues, &used);
				if (used == o->queues.size() && v >= 1 && v <= XO_GNV_MAX_QUEUES)
					q = v;
			} catch (...) {
			}
			for (const Error *e : {vni ? nullptr : &vni.error(), act ? nullptr : &act.error(),
					       q ? nullptr : &q.error()})
				if (e) {
					rc = report(*e);
					return;
				}
			run(g, rc, o->ifname, true, [&](const Netdev &dev, GeneveMaps &m) -> Status {
				GeneveRule r{*vni, *act, static_cast<uint32_t>(*q)};
				if (auto st = m.rule_set(r); !st)
					return st;
				bool steer = *act == XO_GNV_ACT_XSK || *act == XO_GNV_ACT_CPU;
				if (g.json) {
					Json j;
					j.begin_object().kv("interface", dev.name).kv("vni", vni_str(*vni))
						.kv("action", geneve_action_name(*act));
					if (steer)
						j.kv("queues", r.queues);
					j.end_object().print();
				} else {
					std::printf("%s: vni %s -> %s", dev.name.c_str(), vni_str(*vni).c_str(),
						    geneve_action_name(*act));
					if (steer)
						std::printf(" over %u %s", r.queues,
							    *act == XO_GNV_ACT_XSK ? "XSKMAP slots" : "CPUs");
					std::printf("\n");
				}
				return ok();
			});
		});
	}
	{
		auto [s, o] = leaf(rule, "del", "Remove a VNI's rule (--default: back to pass)");
		s->add_option("--vni", o->vni, "VNI 0..16777215");
		s->add_flag("--default", o->dflt, "Reset the default rule to pass");
		s->callback([&g, &rc, o, vni_of] {
			auto vni = vni_of(*o);
			if (!vni) {
				rc = report(vni.error());
				return;
			}
			run(g, rc, o->ifname, false, [&](const Netdev &dev, GeneveMaps &m) -> Status {
				if (auto st = m.rule_del(*vni); !st)
					return st;
				if (g.json)
					Json().begin_object().kv("interface", dev.name).kv("vni", vni_str(*vni))
						.kv("action", "deleted").end_object().print();
				else
					std::printf("%s: rule of vni %s removed\n", dev.name.c_str(), vni_str(*vni).c_str());
				return ok();
			});
		});
	}
	{
		auto [s, o] = leaf(rule, "list", "Rules, default first");
		s->callback([&g, &rc, o] {
			run(g, rc, o->ifname, false, [&](const Netdev &dev, GeneveMaps &m) -> Status {
				auto rules = m.rules();
				if (!rules)
					return rules.error();
				auto cfg = m.cfg();
				if (!cfg)
					return cfg.error();
				bool csum = cfg->flags & XO_GNV_F_VERIFY_CSUM;
				if (g.json) {
					Json j;
					j.begin_object().kv("interface", dev.name).kv("verify_csum", csum).begin_array("rules");
					for (const auto &r : *rules)
						j.begin_object().kv("vni", vni_str(r.vni)).kv("action", geneve_action_name(r.action))
							.kv("queues", r.queues).end_object();
					j.end_array().end_object().print();
					return ok();
				}
				std::printf("%s: outer UDP checksum verification %s\n", dev.name.c_str(), csum ? "on" : "off");
				for (const auto &r : *rules) {
					std::printf("  vni %-9s %s", vni_str(r.vni).c_str(), geneve_action_name(r.action));
					if (r.action == XO_GNV_ACT_XSK || r.action == XO_GNV_ACT_CPU)
						std::printf(" (queues %u)", r.queues);
					std::printf("\n");
				}
				return ok();
			});
		});
	}

	// ---- option ----
	auto *option = group("option", "RFC 8926 option policy: critical options of unknown classes drop");
	{
		auto [s, o] = leaf(option, "known", "Declare an option class known (or --remove it)");
		s->add_option("--class", o->cls, "Option class 0..0xffff")->required();
		s->add_flag("--remove", o->remove, "Forget the class instead");
		s->callback([&g, &rc, o] {
			auto cls = parse_option_class(o->cls);
			if (!cls) {
				rc = report(cls.error());
				return;
			}
			run(g, rc, o->ifname, true, [&](const Netdev &dev, GeneveMaps &m) -> Status {
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
		auto [s, o] = leaf(option, "list", "Known option classes");
		s->callback([&g, &rc, o] {
			run(g, rc, o->ifname, false, [&](const Netdev &dev, GeneveMaps &m) -> Status {
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

	// ---- csum ----
	{
		auto [s, o] = leaf(gv, "csum", "Outer UDP checksum verification: on | off (bad ones drop, counted)");
		s->add_option("state", o->state, "on | off")->required();
		s->callback([&g, &rc, o] {
			if (o->state != "on" && o->state != "off") {
				rc = report(usage_error("csum takes on or off, not '" + o->state + "'"));
				return;
			}
			run(g, rc, o->ifname, true, [&](const Netdev &dev, GeneveMaps &m) -> Status {
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

	// ---- stats ----
	{
		auto [s, o] = leaf(gv, "stats", "Counters by reason, in total and per VNI");
		auto *count = add_interval_count(s, o->interval, o->count);
		s->callback([&g, &rc, o, count] {
			if (interval_count_misuse(count, o->interval)) {
				rc = report(usage_error("--count needs --interval"));
				return;
			}
			run(g, rc, o->ifname, false, [&](const Netdev &dev, GeneveMaps &m) -> Status {
				return watch_counters(o->interval, o->count, [&] { return m.counters(); },
						      [&](const GeneveCounters &cur, const GeneveCounters *prev, double dt) {
							      print_counters(g, dev, cur, prev, dt);
						      });
			});
		});
	}
}

} // namespace xoffload::cli
