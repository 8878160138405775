// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// geneve port: the registry's UDP ports (add, del, list), a port put in the
// NIC's UDP tunnel table through a geneve device (--nic), and the registry
// following the kernel's Geneve devices (sync).
#include <cstdio>
#include <map>
#include <optional>

#include "geneve_cli.hpp"
#include "xoffload/geneve/geneve.hpp"
#include "xoffload/geneve/geneve_kernel.hpp"
#include "xoffload/core/linkwatch.hpp"
#include "xoffload/core/pins.hpp"

namespace xoffload::cli {

namespace {

// What the device's own UDP tunnel table says (ethtool TUNNEL_INFO).
struct NicTable {
	Result<UdpTunnelInfo> info = UdpTunnelInfo{};
	std::string driver;
};

NicTable nic_table(const std::string &ifname)
{
	return {udp_tunnel_info(ifname), driver_name(ifname)};
}

// "no UDP tunnel table (veth)", "UDP tunnel table without Geneve (VXLAN
// only)", "" when it has a Geneve table; the error line when unreadable.
std::string nic_table_note(const NicTable &t)
{
	if (!t.info)
		return "UDP tunnel table unreadable (" + t.info.error().msg + ")";
	if (!t.info->has_tables)
		return "no UDP tunnel table" + (t.driver.empty() ? std::string() : " (" + t.driver + ")");
	if (!t.info->has_geneve_table())
		return "UDP tunnel table without Geneve (VXLAN only): the NIC cannot learn Geneve ports";
	return "";
}

// JSON: "none", "no-geneve", "geneve" or "unknown".
const char *nic_table_kind(const NicTable &t)
{
	if (!t.info)
		return "unknown";
	return !t.info->has_tables ? "none" : t.info->has_geneve_table() ? "geneve" : "no-geneve";
}

// The per-port words: "NIC knows it" / "NIC does not know it (--nic ...)".
std::string nic_port_note(const NicTable &t, uint16_t port)
{
	if (!t.info || !t.info->has_geneve_table())
		return "";
	return t.info->knows_geneve_port(port) ? "NIC table knows it"
					       : "NIC table does not know it (geneve port add --nic registers it)";
}

void port_json(Json &j, const NicTable &t, const GenevePort &p)
{
	j.begin_object().kv("port", unsigned{p.port}).kv("refcnt", p.refcnt);
	j.kv("nic_device", (p.flags & XO_GNV_PORT_F_NIC) ? nic_geneve_dev_name(p.port) : std::string());
	j.kv("sync", (p.flags & XO_GNV_PORT_F_SYNC) != 0);
	if (t.info && t.info->has_geneve_table())
		j.kv("nic_known", t.info->knows_geneve_port(p.port));
	j.end_object();
}

void ports_out(const Globals &g, const std::string &ifname, const std::vector<GenevePort> &ports, Json *j)
{
	NicTable t = nic_table(ifname);
	if (g.json) {
		j->begin_object().kv("interface", ifname).kv("udp_tunnel_table", nic_table_kind(t)).begin_array("ports");
		for (const auto &p : ports)
			port_json(*j, t, p);
		j->end_array().end_object();
		return;
	}
	std::printf("%s:", ifname.c_str());
	if (ports.empty())
		std::printf(" no Geneve ports");
	for (const auto &p : ports) {
		std::string nic = nic_port_note(t, p.port);
		std::printf(" %u (refs %u%s%s%s%s)", p.port, p.refcnt,
			    (p.flags & XO_GNV_PORT_F_NIC) ? ", device " : "",
			    (p.flags & XO_GNV_PORT_F_NIC) ? nic_geneve_dev_name(p.port).c_str() : "",
			    (p.flags & XO_GNV_PORT_F_SYNC) ? ", one held by sync" : "",
			    nic.empty() ? "" : ("; " + nic).c_str());
	}
	std::string note = nic_table_note(t);
	std::printf("%s%s\n", note.empty() ? "" : "; ", note.c_str());
}

// One pass: the registry's sync references made to match the devices.
// Returns how many ports changed.
Result<unsigned> sync_once(const Globals &g, const Netdev &dev, GeneveMaps &m)
{
	auto want = kernel_geneve_ports();
	if (!want)
		return want.error();
	auto cur = m.ports();
	if (!cur)
		return cur.error();
	unsigned changed = 0;
	// @device: the one that holds the port now, "" when it went
	auto say = [&](const char *action, uint16_t port, const std::string &device, uint32_t refs) {
		changed++;
		if (g.json) {
			Json j;
			j.begin_object().kv("interface", dev.name).kv("action", action).kv("port", unsigned{port});
			if (!device.empty())
				j.kv("device", device);
			j.kv("refcnt", refs).end_object().print();
		} else if (!device.empty()) {
			std::printf("%s: Geneve port %u %s (geneve device %s; refs %u)\n", dev.name.c_str(), port, action,
				    device.c_str(), refs);
		} else {
			std::printf("%s: Geneve port %u %s (its geneve device is gone or down; refs %u)\n",
				    dev.name.c_str(), port, action, refs);
		}
		std::fflush(stdout);
	};
	std::map<uint16_t, bool> synced;
	for (const auto &p : *cur)
		if (p.flags & XO_GNV_PORT_F_SYNC)
			synced[p.port] = true;
	for (const auto &[port, _] : synced) {
		if (want->count(port))
			continue;
		auto e = m.port_change(port, -1, 0, XO_GNV_PORT_F_SYNC);
		if (!e)
			return e.error();
		say(e->refcnt ? "released" : "removed", port, "", e->refcnt);
	}
	for (const auto &[port, name] : *want) {
		if (synced.count(port))
			continue;
		auto e = m.port_change(port, 1, XO_GNV_PORT_F_SYNC);
		if (!e)
			return e.error();
		say("added", port, name, e->refcnt);
	}
	return changed;
}

Status port_sync(const Globals &g, const Netdev &dev, GeneveMaps &m, bool watch)
{
	// subscribed before the first pass, so no device comes or goes unseen
	std::optional<LinkEvents> events;
	std::optional<LinkWatch> lw;
	if (watch) {
		auto e = LinkEvents::open();
		if (!e)
			return e.error();
		events.emplace(std::move(*e));
		auto w = LinkWatch::open(dev);
		if (!w)
			return w.error();
		lw.emplace(std::move(*w));
	}
	auto n = sync_once(g, dev, m);
	m.unlock();
	if (!n)
		return n.error();
	if (!watch) {
		if (!*n && !g.json)
			std::printf("%s: Geneve ports in sync with the kernel's Geneve devices\n", dev.name.c_str());
		return ok();
	}
	if (!g.json)
		std::printf("%s: following the Geneve devices of this netns (Ctrl-C to stop)\n", dev.name.c_str());
	std::fflush(stdout);
	install_stop_handler();
	while (!stop_requested()) {
		if (auto why = lw->gone())
			return runtime_error(*why, ENODEV);
		auto got = events->wait(100);
		if (!got)
			return got.error();
		if (!*got)
			continue;
		auto c = sync_once(g, dev, m);
		m.unlock();
		if (!c)
			return c.error();
	}
	return ok();
}

} // namespace

void add_geneve_port_commands(CLI::App *gv, Globals &g, int &rc)
{
	// ---- port ----
	auto *port = geneve_group(gv, "port", "UDP ports that carry Geneve (reference-counted)");
	// add and del: the same command, one reference more or less
	for (bool add : {true, false}) {
		auto [s, o] = add ? geneve_leaf(port, "add", "Register a port (again: one more reference)")
				  : geneve_leaf(port, "del", "Drop one reference; the port goes with the last");
		s->add_option("port", o->port, "UDP port 1..65535")->required();
		if (add)
			s->add_flag("--nic", o->nic,
				    "Also put the port in the NIC's UDP tunnel table: a collect_md geneve device "
				    "xo-gnv-PORT in this netns, removed with the last reference");
		s->callback([&g, &rc, o, add] {
			auto p = parse_geneve_port(o->port);
			if (!p) {
				rc = report(p.error());
				return;
			}
			// --nic: the device first, so that a failure leaves nothing pinned
			std::string holder;	// a device that holds the port for the NICs
			bool created = false, ours = false;
			auto before = [&](const Netdev &) -> Status {
				if (!o->nic)
					return ok();
				auto d = geneve_dev_on(*p);
				if (!d)
					return d.error();
				if (*d) {
					holder = (*d)->name;
					ours = is_nic_geneve_dev(**d);
					return ok();
				}
				if (auto st = nic_geneve_dev_create(*p); !st)
					return st;
				holder = nic_geneve_dev_name(*p);
				created = ours = true;
				return ok();
			};
			geneve_run(g, rc, o->ifname, add, [&](const Netdev &dev, GeneveMaps &m) -> Status {
				auto e = add ? m.port_change(*p, 1, ours ? XO_GNV_PORT_F_NIC : 0) : m.port_change(*p, -1);
				if (!e)
					return e.error();
				std::string gone_dev;	// the --nic device this del removed
				if (!add && !e->refcnt && (e->flags & XO_GNV_PORT_F_NIC) &&
				    !nic_port_held_elsewhere(pin_dir(dev), *p)) {
					gone_dev = nic_geneve_dev_name(*p);
					if (auto st = link_delete(gone_dev); !st && st.error().err != ENODEV)
						return st;
				}
				NicTable t = nic_table(dev.name);
				std::string nic = nic_port_note(t, *p), note = nic_table_note(t);
				if (g.json) {
					Json j;
					j.begin_object().kv("interface", dev.name).kv("action", add ? "added" : "deleted")
						.kv("port", unsigned{*p}).kv("refcnt", e->refcnt)
						.kv("udp_tunnel_table", nic_table_kind(t));
					if (t.info && t.info->has_geneve_table())
						j.kv("nic_known", t.info->knows_geneve_port(*p));
					if (!holder.empty())
						j.kv("nic_device", holder).kv("nic_device_created", created);
					if (!gone_dev.empty())
						j.kv("nic_device_deleted", gone_dev);
					j.end_object().print();
					return ok();
				}
				if (add)
					std::printf("%s: Geneve port %u added (refs %u)", dev.name.c_str(), *p, e->refcnt);
				else if (e->refcnt)
					std::printf("%s: Geneve port %u released (refs %u)", dev.name.c_str(), *p, e->refcnt);
				else
					std::printf("%s: Geneve port %u removed", dev.name.c_str(), *p);
				if (!holder.empty())
					std::printf("; %s %s holds it for the NICs of this netns", created ? "new geneve device" :
						    ours ? "geneve device" : "the kernel's geneve device", holder.c_str());
				if (!gone_dev.empty())
					std::printf("; geneve device %s deleted", gone_dev.c_str());
				if (!nic.empty())
					std::printf("; %s", nic.c_str());
				if (!note.empty())
					std::printf("; %s", note.c_str());
				std::printf("\n");
				return ok();
			}, before);
			if (rc && created)
				(void)link_delete(nic_geneve_dev_name(*p));	// nothing left after a failure
		});
	}
	{
		auto [s, o] = geneve_leaf(port, "sync", "Follow the kernel's Geneve devices of this netns (one reference each port)");
		s->add_flag("--watch", o->watch, "Keep following link events until Ctrl-C");
		s->callback([&g, &rc, o] {
			geneve_run(g, rc, o->ifname, true, [&](const Netdev &dev, GeneveMaps &m) -> Status {
				return port_sync(g, dev, m, o->watch);
			});
		});
	}
	{
		auto [s, o] = geneve_leaf(port, "list", "Registered ports (one interface or all)", false);
		s->callback([&g, &rc, o] {
			if (!o->ifname.empty()) {
				geneve_run(g, rc, o->ifname, false, [&](const Netdev &dev, GeneveMaps &m) -> Status {
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
			for (const auto &[ifn, dir] : geneve_pin_dirs()) {
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

}

} // namespace xoffload::cli
