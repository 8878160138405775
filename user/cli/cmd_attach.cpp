// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// attach, detach, rearm: which xoffload programs sit on which hook (status is in
// cmd_status.cpp).
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstdio>
#include <optional>

#include "commands.hpp"
#include "xoffload/geneve/geneve.hpp"
#include "xoffload/bpf/loader.hpp"
#include "xoffload/core/pins.hpp"
#include "xoffload/xsk/prog.hpp"

namespace xoffload::cli {

namespace {

void print_attach(const Globals &g, const Netdev &dev, const AttachInfo &a, const char *verb)
{
	if (g.json) {
		Json j;
		j.begin_object().kv("interface", dev.name).kv("action", verb).kv("feature", to_string(a.feature))
			.kv("hook", to_string(a.hook)).kv("prog_id", a.prog_id).kv("prog_name", a.prog_name);
		if (a.hook == Hook::xdp) {
			j.kv("mode", to_string(a.mode)).kv("multiprog", a.multiprog).kv("composed", a.composed);
			if (a.composed)
				j.kv("stages", a.stages).kv("compose_reason", a.compose_reason);
			if (!a.single_reason.empty())
				j.kv("single_program_reason", a.single_reason);
			if (a.feature == Feature::vlan)
				j.kv("rx_vlan_tag_kfunc", a.tag_kfunc).kv("rx_vlan_note", a.rx_vlan_note);
		}
		j.kv("pin_dir", pin_dir(dev)).end_object().print();
		return;
	}
	if (a.composed) {
		std::printf("%s %s on %s at xdp: composed program %s (%s mode, stages %s), prog id %u\n", verb,
			    to_string(a.feature), dev.name.c_str(), a.prog_name.c_str(), to_string(a.mode), a.stages.c_str(),
			    a.prog_id);
		return;
	}
	std::printf("%s %s on %s at %s", verb, a.prog_name.c_str(), dev.name.c_str(), to_string(a.hook));
	if (a.hook == Hook::xdp)
		std::printf(" (%s mode, %s)", to_string(a.mode), a.multiprog ? "libxdp dispatcher" : "single program");
	std::printf(", prog id %u\n", a.prog_id);
}

// The geneve devices a purge deleted: into @j's object (--json), else one
// line each.
void print_nic_devs(Json *j, const std::vector<NicDevPurge> &devs)
{
	if (j) {
		j->begin_array("nic_devices_deleted");
		for (const auto &d : devs)
			j->value(d.name);
		j->end_array();
		return;
	}
	for (const auto &d : devs)
		std::printf("deleted geneve device %s (made by geneve port add --nic for port %u)\n", d.name.c_str(),
			    unsigned{d.port});
}

// detach --purge of an interface that no longer exists: its pin directory
// under this netns (--netns) alone, and the --nic devices of its registry.
int purge_gone(const Globals &g, const std::string &ifname)
{
	if (auto s = bpffs_check(); !s)
		return report(s.error());
	const std::string dir = pin_dir(Netdev{ifname, 0});
	if (!path_exists(dir))
		return report(runtime_error("Cannot find device \"" + ifname + "\" and no pins of it (" + dir + ")",
					    ENODEV));
	auto ports = pinned_geneve_ports(dir);
	if (!ports)
		return report(ports.error());
	auto devs = purge_nic_geneve_devs(dir, *ports);
	if (!devs)
		return report(devs.error());
	if (auto s = purge_pin_dir(dir); !s)
		return report(s.error());
	if (g.json) {
		Json j;
		j.begin_object().kv("interface", ifname).kv("action", "purged").kv("pins_removed", dir);
		print_nic_devs(&j, *devs);
		j.end_object().print();
	} else {
		print_nic_devs(nullptr, *devs);
		std::printf("removed pins %s (%s is gone)\n", dir.c_str(), ifname.c_str());
	}
	return 0;
}

int detach_orphans(const Globals &g)
{
	if (auto s = bpffs_check(); !s)
		return report(s.error());
	auto dirs = list_pin_dirs();
	if (!dirs)
		return report(dirs.error());
	Json j;
	j.begin_object().kv("action", "purged").begin_array("orphans");
	size_t n = 0;
	for (const auto &p : *dirs) {
		if (!p.orphan)
			continue;
		// its registry's --nic devices live in its netns (gone with it,
		// if that is gone); deleted before the registry that names them
		auto ports = pinned_geneve_ports(p.path);
		if (!ports)
			return report(ports.error());
		Result<std::vector<NicDevPurge>> devs = std::vector<NicDevPurge>{};
		if (auto in = in_netns(p.netns, [&] { devs = purge_nic_geneve_devs(p.path, *ports); }); !in)
			return report(in.error());
		if (!devs)
			return report(devs.error());
		if (auto s = purge_pin_dir(p.path); !s)
			return report(s.error());
		n++;
		if (g.json) {
			j.begin_object().kv("path", p.path).kv("why", p.why);
			print_nic_devs(&j, *devs);
			j.end_object();
		} else {
			print_nic_devs(nullptr, *devs);
			std::printf("removed orphaned pins %s (%s)\n", p.path.c_str(), p.why.c_str());
		}
	}
	j.end_array().end_object();
	if (g.json)
		j.print();
	else if (!n)
		std::printf("no orphaned pin directories\n");
	return 0;
}

void print_chain(const Globals &g, const Netdev &dev, const ChainInfo &c, const char *verb)
{
	if (g.json) {
		Json j;
		j.begin_object().kv("interface", dev.name).kv("action", verb).kv("feature", "chain").kv("hook", "xdp")
			.kv("prog_id", c.prog_id).kv("prog_name", c.prog_name).kv("composed", c.composed);
		if (!c.object.empty())
			j.kv("object", c.object);
		if (c.composed)
			j.kv("hook_prog_id", c.hook_prog_id).kv("hook_prog_name", c.hook_prog_name).kv("stages", c.stages);
		else
			j.kv("run_prio", c.run_prio);
		if (!c.reason.empty())
			j.kv("compose_reason", c.reason);
		j.end_object().print();
		return;
	}
	std::printf("%s chain %s (prog id %u) %s %s at xdp: ", verb, c.prog_name.c_str(), c.prog_id,
		    std::string(verb) == "attached" ? "on" : "from", dev.name.c_str());
	if (!c.composed)
		std::printf("behind libxdp's dispatcher, priority %u, after ours\n", c.run_prio);
	else if (c.hook_prog_id)
		std::printf("composed program %s (stages %s), prog id %u\n", c.hook_prog_name.c_str(), c.stages.c_str(),
			    c.hook_prog_id);
	else
		std::printf("no stage left, the hook is empty\n");
}

// The interface attach/detach chain act on, once the tool is ready.
Result<Netdev> chain_dev(const Globals &g, const std::string &ifname)
{
	if (auto s = prepare(g); !s)
		return s.error();
	return netdev_with_pins(ifname);
}

// attach IFACE chain --prog OBJ[:PROG]
int attach_chain_cmd(const Globals &g, const std::string &ifname, const std::string &prog, XdpMode mode)
{
	if (prog.empty())
		return report(usage_error("attach chain needs --prog OBJ[:PROG], the XDP program to run after ours"));
	ChainRequest rq;
	rq.mode = mode;
	rq.object = prog;
	// OBJ:PROG, where OBJ itself is no file (a path may hold a colon)
	if (size_t colon = prog.rfind(':'); colon != std::string::npos && !path_exists(prog)) {
		rq.object = prog.substr(0, colon);
		rq.program = prog.substr(colon + 1);
		if (rq.object.empty() || rq.program.empty())
			return report(usage_error("--prog " + prog + ": expected OBJ[:PROG]"));
	}
	auto dev = chain_dev(g, ifname);
	if (!dev)
		return report(dev.error());
	auto c = attach_chain(*dev, rq);
	if (!c)
		return report(c.error());
	print_chain(g, *dev, *c, "attached");
	return 0;
}

// detach IFACE chain
int detach_chain_cmd(const Globals &g, const std::string &ifname)
{
	auto dev = chain_dev(g, ifname);
	if (!dev)
		return report(dev.error());
	auto c = detach_chain(*dev);
	if (!c)
		return report(c.error());
	if (!*c)
		return report(runtime_error("no program of yours runs after ours on " + dev->name + " (attach " + dev->name +
						    " chain --prog OBJ)",
					    ENOENT));
	print_chain(g, *dev, **c, "detached");
	return 0;
}

} // namespace

void add_attach_commands(CLI::App &app, Globals &g, int &rc)
{
	struct AttachOpts {
		std::string ifname, feature, hook = "xdp", mode = "native", prog;
		bool keep_rx_vlan = false, no_tag_kfunc = false;
	};
	auto o = std::make_shared<AttachOpts>();
	auto *a = app.add_subcommand("attach", "Attach a feature's programs to an interface");
	a->add_option("interface", o->ifname, "Interface")->required();
	a->add_option("feature", o->feature,
		      "Feature: vlan | geneve | chain (a program of yours after our XDP stages: --prog)")->required();
	auto *prog_opt = a->add_option("--prog", o->prog,
				       "chain: OBJ[:PROG], the BPF object and its XDP program (name or section; "
				       "default: its only one) to run after ours");
	a->add_option("--hook", o->hook, "xdp | tc-ingress | tc-egress (default xdp)");
	auto *mode_opt = a->add_option("--mode", o->mode, "XDP mode: native | skb (alias generic) (default native)");
	a->add_flag("--keep-rx-vlan", o->keep_rx_vlan,
		    "At xdp: leave the device's RX VLAN stripping on (then tags it strips escape xdp_vlan, and "
		    "xdp_geneve's decapped frames inherit the outer tag)");
	a->add_flag("--no-tag-kfunc", o->no_tag_kfunc,
		    "vlan at xdp: load plain xdp_vlan behind libxdp's dispatcher even where the driver offers the "
		    "rx-vlan-tag kfunc (which needs a device-bound program alone); tags outside the data then "
		    "escape it");
	a->callback([&g, &rc, o, mode_opt, prog_opt] {
		if (o->feature == "chain") {
			auto mode = parse_xdp_mode(o->mode);
			if (!mode)
				rc = report(mode.error());
			else if (o->hook != "xdp" || o->keep_rx_vlan || o->no_tag_kfunc)
				rc = report(usage_error("chain runs at the xdp hook and takes only --prog and --mode"));
			else
				rc = attach_chain_cmd(g, o->ifname, o->prog, *mode);
			return;
		}
		if (prog_opt->count()) {
			rc = report(usage_error("--prog is for attach IFACE chain"));
			return;
		}
		auto feat = parse_feature(o->feature);
		auto hook = parse_hook(o->hook);
		auto mode = parse_xdp_mode(o->mode);
		for (const Error *e : {feat ? nullptr : &feat.error(), hook ? nullptr : &hook.error(),
				       mode ? nullptr : &mode.error()})
			if (e) {
				rc = report(*e);
				return;
			}
		if (mode_opt->count() && *hook != Hook::xdp) {
			rc = report(usage_error("--mode " + o->mode + " is an XDP mode; --hook " + o->hook + " takes none"));
			return;
		}
		if (o->keep_rx_vlan && *hook != Hook::xdp) {
			rc = report(usage_error("--keep-rx-vlan is for the xdp hook (where xdp_vlan and xdp_geneve read tags)"));
			return;
		}
		if (o->no_tag_kfunc && (*feat != Feature::vlan || *hook != Hook::xdp)) {
			rc = report(usage_error("--no-tag-kfunc is for vlan at the xdp hook (where xdp_vlan reads tags)"));
			return;
		}
		if (auto s = prepare(g); !s) {
			rc = report(s.error());
			return;
		}
		auto dev = netdev_with_pins(o->ifname);
		if (!dev) {
			rc = report(dev.error());
			return;
		}
		auto r = attach(*dev, *feat, *hook, *mode, AttachOptions{o->keep_rx_vlan, o->no_tag_kfunc});
		if (!r) {
			rc = report(r.error());
			return;
		}
		print_attach(g, *dev, *r, "attached");
	});

	struct DetachOpts {
		std::string ifname, feature, hook;
		bool purge = false, all_orphans = false;
	};
	auto d = std::make_shared<DetachOpts>();
	auto *ds = app.add_subcommand("detach", "Detach our programs: every feature and hook unless given");
	ds->add_option("interface", d->ifname, "Interface");
	ds->add_option("feature", d->feature, "Feature: vlan | geneve | chain (default: every one)");
	ds->add_option("--hook", d->hook, "xdp | tc-ingress | tc-egress");
	ds->add_flag("--purge", d->purge,
		     "Detach everything of ours, remove the interface's pins and the geneve devices its "
		     "geneve port add --nic made, also of an interface that is gone");
	ds->add_flag("--all-orphans", d->all_orphans,
		     "Remove every pin directory whose interface is gone or is a different one now (see status)");
	ds->callback([&g, &rc, d] {
		if (d->all_orphans && (!d->ifname.empty() || d->purge || !d->feature.empty() || !d->hook.empty())) {
			rc = report(usage_error("--all-orphans takes no interface, feature, --hook or --purge"));
			return;
		}
		if (!d->all_orphans && d->ifname.empty()) {
			rc = report(usage_error("detach needs an interface (or --all-orphans)"));
			return;
		}
		if (d->purge && (!d->feature.empty() || !d->hook.empty())) {
			rc = report(usage_error("--purge takes every feature and hook: no feature or --hook with it"));
			return;
		}
		if (d->feature == "chain") {
			if (!d->hook.empty() && d->hook != "xdp") {
				rc = report(usage_error("chain runs at the xdp hook only"));
				return;
			}
			rc = detach_chain_cmd(g, d->ifname);
			return;
		}
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
		if (d->all_orphans) {
			rc = detach_orphans(g);
			return;
		}
		auto dev = netdev_with_pins(d->ifname);
		if (!dev && d->purge && dev.error().err == ENODEV) {
			rc = purge_gone(g, d->ifname);	// the interface is gone: its pins only
			return;
		}
		if (!dev) {
			rc = report(dev.error());
			return;
		}
		// a recv killed before it could detach left its xdp_xsk behind
		std::vector<uint32_t> reaped;
		if (!feat && (!hook || *hook == Hook::xdp)) {
			auto r = xsk::reap_stale_xsk(*dev);
			if (!r) {
				rc = report(r.error());
				return;
			}
			reaped = *r;
		}
		const std::string dir = pin_dir(*dev);
		const bool had_pins = path_exists(dir);
		// the geneve registry, before detach removes it with the last program
		Result<std::vector<GenevePort>> ports = std::vector<GenevePort>{};
		if (d->purge)
			ports = pinned_geneve_ports(dir);
		if (!ports) {
			rc = report(ports.error());
			return;
		}
		auto r = detach(*dev, feat, hook);
		if (!r) {
			rc = report(r.error());
			return;
		}
		std::vector<NicDevPurge> devs;
		if (d->purge) {
			auto gone = purge_nic_geneve_devs(dir, *ports);
			if (!gone) {
				rc = report(gone.error());
				return;
			}
			devs = std::move(*gone);
		}
		if (d->purge && path_exists(dir)) {
			if (auto s = purge_pin_dir(dir); !s) {
				rc = report(s.error());
				return;
			}
		}
		const bool purged = d->purge && had_pins;
		if (r->empty() && reaped.empty() && !purged) {
			rc = report(not_attached(*dev, feat, std::nullopt));
			return;
		}
		if (g.json) {
			Json j;
			j.begin_object().kv("interface", dev->name).kv("action", "detached").begin_array("programs");
			for (const auto &a : *r)
			{
				j.begin_object().kv("hook", to_string(a.hook)).kv("prog_id", a.prog_id)
					.kv("prog_name", a.prog_name);
				if (a.chain)
					j.kv("feature", "chain").kv("composed", a.composed);
				else if (a.composed)
					j.kv("feature", to_string(a.feature)).kv("composed", true).kv("stages_left", a.stages);
				j.end_object();
			}
			for (uint32_t id : reaped)
				j.begin_object().kv("hook", "xdp").kv("prog_id", id).kv("prog_name", xsk::XskProgram::name())
					.kv("stale", true).end_object();
			j.end_array();
			if (d->purge) {
				j.kv("pins_removed", purged ? dir : std::string());
				print_nic_devs(&j, devs);
			}
			j.end_object().print();
		} else {
			for (const auto &a : *r)
				if (a.chain)
					std::printf("detached chain %s (prog id %u) from %s at xdp\n", a.prog_name.c_str(),
						    a.prog_id, dev->name.c_str());
				else if (a.composed)
					std::printf("detached %s from %s at xdp: composed program stages now %s\n",
						    to_string(a.feature), dev->name.c_str(), a.stages.c_str());
				else
					std::printf("detached %s from %s at %s\n", a.prog_name.c_str(), dev->name.c_str(),
						    to_string(a.hook));
			print_nic_devs(nullptr, devs);
			if (purged)
				std::printf("removed pins %s\n", dir.c_str());
		}
	});

	// A driver that forgets its XDP program at a close while the hook still
	// lists it (vmxnet3 on 6.6-7.2: status says so): the program handed to
	// it again, as the agent does at every link up.
	auto ra_if = std::make_shared<std::string>();
	auto *ra = app.add_subcommand("rearm", "Hand the native XDP program of an interface to its driver again "
					       "(for drivers that forget it at link down: vmxnet3; see status)");
	ra->add_option("interface", *ra_if, "Interface")->required();
	ra->callback([&g, &rc, ra_if] {
		if (auto s = prepare(g); !s) {
			rc = report(s.error());
			return;
		}
		auto dev = netdev_lookup(*ra_if);
		if (!dev) {
			rc = report(dev.error());
			return;
		}
		auto r = xdp_rearm(*dev);
		if (!r) {
			rc = report(r.error());
			return;
		}
		if (!*r) {
			rc = report(runtime_error("no native-mode XDP program on " + dev->name + ": nothing to rearm",
						  ENOENT));
			return;
		}
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		const uint32_t id = bpf_xdp_query(dev->ifindex, 0, &q) ? 0 : q.drv_prog_id;
		if (g.json)
			Json().begin_object().kv("interface", dev->name).kv("action", "rearmed").kv("prog_id", id)
				.end_object().print();
		else
			std::printf("rearmed prog id %u on %s: its driver has it again\n", id, dev->name.c_str());
	});
}

} // namespace xoffload::cli
