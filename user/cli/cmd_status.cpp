// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// status: which xoffload programs sit on which hook of one interface or
// all, their pins, and pin directories whose interface is gone.
#include <net/if.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "xoffload/bpf/loader.hpp"
#include "xoffload/core/pins.hpp"
#include "xoffload/features/features.hpp"
#include "xoffload/xsk/prog.hpp"

namespace xoffload::cli {

namespace {

void status_json(Json &j, const IfStatus &st)
{
	j.begin_object().kv("interface", st.dev.name).kv("ifindex", st.dev.ifindex)
		.kv("pin_dir", st.pin_dir).kv("pinned", st.pinned);
	j.begin_object("xdp").kv("mode", st.xdp_mode).kv("multiprog", st.xdp_multiprog).begin_array("programs");
	for (const auto &p : st.xdp_progs)
		j.begin_object().kv("name", p.name).kv("id", p.id).kv("run_prio", p.run_prio)
			.kv("xoffload", p.ours).end_object();
	j.end_array();
	if (st.composed) {
		const ComposedStatus &c = *st.composed;
		j.begin_object("composed").kv("prog_id", c.prog_id).kv("prog_name", c.prog_name).begin_array("stages");
		for (const auto &s : c.stages)
			j.value(s);
		j.end_array().kv("chain_prog_id", c.chain_prog_id).kv("chain_prog_name", c.chain_prog_name)
			.kv("chained_packets", c.chained_packets).kv("chain_empty_packets", c.chain_empty_packets)
			.kv("reason", c.reason).end_object();
	}
	if (st.chain_prog_id)
		j.kv("chain_prog_id", st.chain_prog_id);
	j.end_object().begin_array("attached");
	for (const auto &a : st.ours) {
		j.begin_object().kv("feature", to_string(a.feature)).kv("hook", to_string(a.hook)).kv("prog_id", a.prog_id)
			.kv("prog_name", a.prog_name);
		if (a.hook == Hook::xdp)
			j.kv("mode", to_string(a.mode)).kv("composed", a.composed);
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
			    st.composed	     ? "composed program"
			    : st.xdp_multiprog ? "libxdp dispatcher"
					       : "single program");
	// a driver that forgets its native program at a close (vmxnet3):
	// what runs now may not be what the hook lists after the next one
	if (st.xdp_mode == "native" && std::any_of(st.ours.begin(), st.ours.end(), [](const AttachInfo &a) {
		    return a.hook == Hook::xdp;
	    }))
		if (auto drv = features::live_driver(st.dev.name); drv && !drv->empty()) {
			const features::NicFacts f = features::nic_facts_running(*drv);
			if (f.xdp_lost_on_close.value)
				std::printf("  note: %s drops its XDP program at every link down or MTU change while the hook "
					    "still lists it (%s): `offload-tool agent` hands it back; without it, `offload-tool "
					    "rearm %s` after one\n",
					    drv->c_str(),
					    f.xdp_lost_on_close.source.substr(0, f.xdp_lost_on_close.source.find(':')).c_str(),
					    st.dev.name.c_str());
		}
	for (const auto &p : st.xdp_progs) {
		std::string tag;
		for (const auto &a : st.ours)
			if (a.hook == Hook::xdp && a.prog_id == p.id)
				tag = std::string("  [xoffload ") + to_string(a.feature) + "]";
		if (p.id == st.chain_prog_id)
			tag = "  [chain: yours, after xoffload's]";
		if (xsk::XskProgram::is_xsk_name(p.name)) {
			int pid = xsk::bpf_prog_holder(p.id);
			tag = pid ? "  [xoffload recv, pid " + std::to_string(pid) + "]"
				  : std::string("  [xoffload recv, stale: its recv is gone; detach removes it]");
		}
		if (st.composed && st.composed->prog_id == p.id) {
			const ComposedStatus &c = *st.composed;
			std::printf("    %-16s id %-6u [xoffload composed]\n", p.name.c_str(), p.id);
			for (size_t i = 0; i < c.stages.size(); i++) {
				std::printf("      %zu. %s", i + 1, c.stages[i].c_str());
				if (c.stages[i] == "chain" && c.chain_prog_id)
					std::printf(": %s (prog id %u), %llu frames handed to it, %llu passed with the slot empty",
						    c.chain_prog_name.c_str(), c.chain_prog_id,
						    static_cast<unsigned long long>(c.chained_packets),
						    static_cast<unsigned long long>(c.chain_empty_packets));
				else if (c.stages[i] == "chain")
					std::printf(": empty slot, %llu frames passed",
						    static_cast<unsigned long long>(c.chain_empty_packets));
				std::printf("\n");
			}
			std::printf("      composed because: %s\n",
				    c.reason.empty() ? "a program of ours ran alone at the hook" : c.reason.c_str());
			continue;
		}
		std::printf("    prio %-4u %-16s id %-6u%s\n", p.run_prio, p.name.c_str(), p.id, tag.c_str());
	}
	for (const auto &a : st.ours)
		if (a.hook != Hook::xdp)
			std::printf("  %s: %s id %u\n", to_string(a.hook), a.prog_name.c_str(), a.prog_id);
	if (st.pinned)
		std::printf("  maps pinned in %s\n", st.pin_dir.c_str());
}

} // namespace

void add_status_command(CLI::App &app, Globals &g, int &rc)
{
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
			auto dev = netdev_with_pins(*ifname);
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
		j.end_array();
		// listing all: pin directories whose interface is gone or another one
		if (ifname->empty() && bpffs_check()) {
			auto dirs = list_pin_dirs();
			if (!dirs) {
				rc = report(dirs.error());
				return;
			}
			j.begin_array("pin_dirs");
			for (const auto &p : *dirs) {
				if (g.json)
					j.begin_object().kv("path", p.path).kv("orphan", p.orphan).kv("note", p.why).end_object();
				else if (p.orphan)
					std::printf("orphaned pins %s: %s (offload-tool detach --all-orphans removes them)\n",
						    p.path.c_str(), p.why.c_str());
				else if (!p.why.empty())
					std::printf("pins %s: %s\n", p.path.c_str(), p.why.c_str());
			}
			j.end_array();
		}
		j.end_object();
		if (g.json)
			j.print();
	});
}

} // namespace xoffload::cli
