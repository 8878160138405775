// geneve: the UDP port registry, per-VNI rules, known option classes,
// checksum verification and counters of xdp_geneve on an interface.
#include <dirent.h>
#include <linux/ethtool_netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "xoffload/features.hpp"
#include "xoffload/geneve.hpp"
#include "xoffload/geneve_kernel.hpp"
#include "xoffload/linkwatch.hpp"
#include "xoffload/loader.hpp"
#include "xoffload/pins.hpp"

namespace xoffload::cli {

namespace {

struct GeneveOpts {
	std::string ifname, port, vni, action, queues = "1", cls, state;
	bool dflt = false, remove = false, nic = false, watch = false;
	double interval = 0;
	unsigned count = 0;
};

// Runs fn(dev, maps) after the common checks, reporting any error.
void run(const Globals &g, int &rc, const std::string &ifname, bool create,
	 const std::function<Status(const Netdev &, GeneveMaps &)> &fn,
	 const std::function<Status(const Netdev &)> &before = {})
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

// Pin directories of this netns that hold geneve maps: (ifname, dir).
std::vector<std::pair<std::string, std::string>> geneve_dirs();

// Does another registry of this netns than @self_dir hold @port with a --nic
// device? Then the device stays when this one lets the port go.
bool nic_port_held_elsewhere(const std::string &self_dir, uint16_t port)
{
	for (const auto &[ifn, dir] : geneve_dirs()) {
		if (dir == self_dir)
			continue;
		auto m = GeneveMaps::open(dir, ifn, false);
		if (!m)
			continue;
		auto p = m->port(port);
		if (p && p->refcnt && (p->flags & XO_GNV_PORT_F_NIC))
			return true;
	}
	return false;
}

// The kernel Geneve device that already holds @port in this netns (ours or
// anyone's, up), if any.
Result<std::optional<KernelGeneveDev>> geneve_dev_on(uint16_t port)
{
	auto devs = kernel_geneve_devs();
	if (!devs)
		return devs.error();
	for (const auto &d : *devs)
		if (d.port == port && d.up)
			return std::optional<KernelGeneveDev>(d);
	return std::optional<KernelGeneveDev>();
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

Result<std::vector<NicDevPurge>> purge_nic_geneve_devs(const std::string &dir, const std::vector<GenevePort> &ports)
{
	if (std::none_of(ports.begin(), ports.end(), [](const GenevePort &p) { return p.flags & XO_GNV_PORT_F_NIC; }))
		return std::vector<NicDevPurge>{};
	auto devs = kernel_geneve_devs();
	if (!devs)
		return devs.error();
	auto gone = nic_devs_to_purge(ports, *devs, [&](uint16_t p) { return nic_port_held_elsewhere(dir, p); });
	for (const auto &d : gone)
		if (auto s = link_delete(d.name); !s && s.error().err != ENODEV)
			return s.error();	// those before it are gone: a second purge finds them so
	return gone;
}

namespace {

// Ports of the kernel's Geneve devices that are up (their sockets are
// open: what udp_tunnel_nic tells the NICs), but not the --nic devices,
// whose ports the registry holds already: port -> a device's name.
Result<std::map<uint16_t, std::string>> kernel_geneve_ports()
{
	auto devs = kernel_geneve_devs();
	if (!devs)
		return devs.error();
	std::map<uint16_t, std::string> want;
	for (const auto &d : *devs)
		if (d.up && !is_nic_geneve_dev(d))
			want.emplace(d.port, d.name);
	return want;
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
			run(g, rc, o->ifname, add, [&](const Netdev &dev, GeneveMaps &m) -> Status {
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
		auto [s, o] = leaf(port, "sync", "Follow the kernel's Geneve devices of this netns (one reference each port)");
		s->add_flag("--watch", o->watch, "Keep following link events until Ctrl-C");
		s->callback([&g, &rc, o] {
			run(g, rc, o->ifname, true, [&](const Netdev &dev, GeneveMaps &m) -> Status {
				return port_sync(g, dev, m, o->watch);
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
				const char *via = (cfg->flags & XO_GNV_F_DECAP_CPUMAP) ? "cpumap" : "pass";
				if (g.json) {
					Json j;
					j.begin_object().kv("interface", dev.name).kv("verify_csum", csum).kv("decap_via", via)
						.begin_array("rules");
					for (const auto &r : *rules)
						j.begin_object().kv("vni", vni_str(r.vni)).kv("action", geneve_action_name(r.action))
							.kv("queues", r.queues).end_object();
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

	// ---- decap-via ----
	{
		auto [s, o] = leaf(gv, "decap-via",
				   "How decapped frames reach the stack: cpumap (it verifies their inner "
				   "checksums) | pass (XDP_PASS: the driver's verdict on the outer one stands)");
		s->add_option("state", o->state, "cpumap | pass")->required();
		s->callback([&g, &rc, o] {
			if (o->state != "cpumap" && o->state != "pass") {
				rc = report(usage_error("decap-via takes cpumap or pass, not '" + o->state + "'"));
				return;
			}
			run(g, rc, o->ifname, true, [&](const Netdev &dev, GeneveMaps &m) -> Status {
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
