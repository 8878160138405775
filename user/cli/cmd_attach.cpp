// attach, detach, status: which xoffload programs sit on which hook.
#include <net/if.h>

#include <cstdio>
#include <optional>

#include "commands.hpp"
#include "xoffload/loader.hpp"

namespace xoffload::cli {

namespace {

void print_attach(const Globals &g, const Netdev &dev, const AttachInfo &a, const char *verb)
{
	if (g.json) {
		Json j;
		j.begin_object().kv("interface", dev.name).kv("action", verb).kv("feature", to_string(a.feature))
			.kv("hook", to_string(a.hook)).kv("prog_id", a.prog_id).kv("prog_name", a.prog_name);
		if (a.hook == Hook::xdp) {
			j.kv("mode", to_string(a.mode)).kv("multiprog", a.multiprog);
			if (!a.single_reason.empty())
				j.kv("single_program_reason", a.single_reason);
		}
		j.kv("pin_dir", pin_dir(dev)).end_object().print();
		return;
	}
	std::printf("%s %s on %s at %s", verb, a.prog_name.c_str(), dev.name.c_str(), to_string(a.hook));
	if (a.hook == Hook::xdp)
		std::printf(" (%s mode, %s)", to_string(a.mode), a.multiprog ? "libxdp dispatcher" : "single program");
	std::printf(", prog id %u\n", a.prog_id);
}

void status_json(Json &j, const IfStatus &st)
{
	j.begin_object().kv("interface", st.dev.name).kv("ifindex", st.dev.ifindex)
		.kv("pin_dir", st.pin_dir).kv("pinned", st.pinned);
	j.begin_object("xdp").kv("mode", st.xdp_mode).kv("multiprog", st.xdp_multiprog).begin_array("programs");
	for (const auto &p : st.xdp_progs)
		j.begin_object().kv("name", p.name).kv("id", p.id).kv("run_prio", p.run_prio)
			.kv("xoffload", p.ours).end_object();
	j.end_array().end_object().begin_array("attached");
	for (const auto &a : st.ours) {
		j.begin_object().kv("feature", to_string(a.feature)).kv("hook", to_string(a.hook)).kv("prog_id", a.prog_id)
			.kv("prog_name", a.prog_name);
		if (a.hook == Hook::xdp)
			j.kv("mode", to_string(a.mode));
		j.end_object();
	}
	j.end_array().end_object();
}

void status_text(const IfStatus &st)
{
	std::printf("%s (ifindex %d)\n", st.dev.name.c_str(), st.dev.ifindex);
	if (st.xdp_progs.empty())
		std::printf("  xdp: none\n");
	else
		std::printf("  xdp: %s mode, %s\n", st.xdp_mode.c_str(),
			    st.xdp_multiprog ? "libxdp dispatcher" : "single program");
	for (const auto &p : st.xdp_progs) {
		std::string tag;
		for (const auto &a : st.ours)
			if (a.hook == Hook::xdp && a.prog_id == p.id)
				tag = std::string("  [xoffload ") + to_string(a.feature) + "]";
		std::printf("    prio %-4u %-16s id %-6u%s\n", p.run_prio, p.name.c_str(), p.id, tag.c_str());
	}
	for (const auto &a : st.ours)
		if (a.hook != Hook::xdp)
			std::printf("  %s: %s id %u\n", to_string(a.hook), a.prog_name.c_str(), a.prog_id);
	if (st.pinned)
		std::printf("  maps pinned in %s\n", st.pin_dir.c_str());
}

} // namespace

void add_attach_commands(CLI::App &app, Globals &g, int &rc)
{
	struct AttachOpts {
		std::string ifname, feature, hook = "xdp", mode = "native";
	};
	auto o = std::make_shared<AttachOpts>();
	auto *a = app.add_subcommand("attach", "Attach a feature's programs to an interface");
	a->add_option("interface", o->ifname, "Interface")->required();
	a->add_option("feature", o->feature, "Feature: vlan | geneve")->required();
	a->add_option("--hook", o->hook, "xdp | tc-ingress | tc-egress (default xdp)");
	a->add_option("--mode", o->mode, "XDP mode: native | skb (default native)");
	a->callback([&g, &rc, o] {
		auto feat = parse_feature(o->feature);
		auto hook = parse_hook(o->hook);
		auto mode = parse_xdp_mode(o->mode);
		for (const Error *e : {feat ? nullptr : &feat.error(), hook ? nullptr : &hook.error(),
				       mode ? nullptr : &mode.error()})
			if (e) {
				rc = report(*e);
				return;
			}
		if (auto s = prepare(g); !s) {
			rc = report(s.error());
			return;
		}
		auto dev = netdev_lookup(o->ifname);
		if (!dev) {
			rc = report(dev.error());
			return;
		}
		auto r = attach(*dev, *feat, *hook, *mode);
		if (!r) {
			rc = report(r.error());
			return;
		}
		print_attach(g, *dev, *r, "attached");
	});

	struct DetachOpts {
		std::string ifname, feature, hook;
	};
	auto d = std::make_shared<DetachOpts>();
	auto *ds = app.add_subcommand("detach", "Detach our programs: every feature and hook unless given");
	ds->add_option("interface", d->ifname, "Interface")->required();
	ds->add_option("feature", d->feature, "Feature: vlan | geneve (default: both)");
	ds->add_option("--hook", d->hook, "xdp | tc-ingress | tc-egress");
	ds->callback([&g, &rc, d] {
		std::optional<Feature> feat;
		if (!d->feature.empty()) {
			auto f = parse_feature(d->feature);
			if (!f) {
				rc = report(f.error());
				return;
			}
			feat = *f;
		}
		std::optional<Hook> hook;
		if (!d->hook.empty()) {
			auto h = parse_hook(d->hook);
			if (!h) {
				rc = report(h.error());
				return;
			}
			hook = *h;
		}
		if (auto s = prepare(g); !s) {
			rc = report(s.error());
			return;
		}
		auto dev = netdev_lookup(d->ifname);
		if (!dev) {
			rc = report(dev.error());
			return;
		}
		auto r = detach(*dev, feat, hook);
		if (!r) {
			rc = report(r.error());
			return;
		}
		if (r->empty()) {
			rc = report(not_attached(*dev, feat, std::nullopt));
			return;
		}
		if (g.json) {
			Json j;
			j.begin_object().kv("interface", dev->name).kv("action", "detached").begin_array("programs");
			for (const auto &a : *r)
				j.begin_object().kv("hook", to_string(a.hook)).kv("prog_id", a.prog_id)
					.kv("prog_name", a.prog_name).end_object();
			j.end_array().end_object().print();
		} else {
			for (const auto &a : *r)
				std::printf("detached %s from %s at %s\n", a.prog_name.c_str(), dev->name.c_str(),
					    to_string(a.hook));
		}
	});

	auto ifname = std::make_shared<std::string>();
	auto *st = app.add_subcommand("status", "Show what is attached (one interface or all)");
	st->add_option("interface", *ifname, "Interface (default: every interface)");
	st->callback([&g, &rc, ifname] {
		if (auto s = prepare(g); !s) {
			rc = report(s.error());
			return;
		}
		std::vector<Netdev> devs;
		if (!ifname->empty()) {
			auto dev = netdev_lookup(*ifname);
			if (!dev) {
				rc = report(dev.error());
				return;
			}
			devs.push_back(*dev);
		} else if (struct if_nameindex *all = if_nameindex()) {
			for (auto *p = all; p->if_index; p++)
				devs.push_back(Netdev{p->if_name, static_cast<int>(p->if_index)});
			if_freenameindex(all);
		}
		Json j;
		j.begin_object().begin_array("interfaces");
		for (const auto &dev : devs) {
			auto s = status(dev);
			if (!s) {
				rc = report(s.error());
				return;
			}
			// listing all interfaces: only those with some XDP program or ours
			if (ifname->empty() && s->xdp_progs.empty() && s->ours.empty() && !s->pinned)
				continue;
			if (g.json)
				status_json(j, *s);
			else
				status_text(*s);
		}
		j.end_array().end_object();
		if (g.json)
			j.print();
	});
}

} // namespace xoffload::cli
