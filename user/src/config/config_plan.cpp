// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What runs, in the model of config_model.hpp (read through the library's
// own readers: status, the VLAN and Geneve maps), the steps from that to
// what a file declares, and applying them with the calls the CLI's
// commands make.
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "xoffload/config/config_model.hpp"
#include "xoffload/core/netdev.hpp"
#include "xoffload/core/pins.hpp"
#include "xoffload/features/features.hpp"
#include "xoffload/geneve/geneve.hpp"
#include "xoffload/geneve/geneve_kernel.hpp"
#include "xoffload/vlan/rx_vlan.hpp"
#include "xoffload/vlan/vlan.hpp"

namespace xoffload::config {

namespace {

constexpr size_t kProgNameLen = 15;	// BPF_OBJ_NAME_LEN - 1: what the kernel keeps of a name

bool has_hook(const std::optional<Vlan> &v, Hook h)
{
	return v && std::find(v->hooks.begin(), v->hooks.end(), h) != v->hooks.end();
}

VlanDir dir_of(const xo_vlan_policy &p, const std::vector<VidRule> &rules)
{
	VlanDir d;
	if (p.action == XO_VLAN_ACT_POP) {
		d.action = VlanDir::Action::pop;
		d.depth = p.pop_depth;
	} else if (p.action == XO_VLAN_ACT_PUSH) {
		d.action = VlanDir::Action::push;
		for (unsigned i = 0; i < p.push_count && i < XO_VLAN_MAX_DEPTH; i++)
			d.push.push_back(TagSpec::from_abi(p.push[i]));
	}
	if (p.flags & XO_VLAN_F_ALLOW) {
		d.allow.emplace();
		for (const auto &r : rules)
			if (r.allowed)
				d.allow->push_back(r.vid);
	}
	for (const auto &r : rules)
		if (r.rewrite_to)
			d.rewrite.emplace_back(r.vid, r.rewrite_to);
	return d;
}

xo_vlan_policy policy_of(const VlanDir &d)
{
	xo_vlan_policy p = make_clear_policy();
	if (d.action == VlanDir::Action::pop)
		p = make_pop_policy(p, d.depth);
	else if (d.action == VlanDir::Action::push)
		p = make_push_policy(p, d.push);
	if (d.allow)
		p.flags |= XO_VLAN_F_ALLOW;
	return p;
}

std::string rule_vni(const GeneveRuleCfg &r)
{
	return r.vni == XO_GNV_VNI_DEFAULT ? "default" : "vni " + std::to_string(r.vni);
}

std::string rule_action(const GeneveRuleCfg &r)
{
	std::string s = geneve_action_name(r.action);
	if (r.action == XO_GNV_ACT_XSK || r.action == XO_GNV_ACT_CPU)
		s += " over " + std::to_string(r.queues);
	return s;
}

// The name of @c's program: the one given, or the object's only XDP program.
Result<std::string> chain_prog_name(const Chain &c)
{
	if (c.object.empty() || !c.program.empty())
		return c.program.substr(0, kProgNameLen);
	// the file's fault, found before anything changed: a usage error (and
	// one line: libbpf would say it too)
	bpf_object *obj = ::access(c.object.c_str(), R_OK) ? nullptr : bpf_object__open_file(c.object.c_str(), nullptr);
	if (!obj) {
		Error e = errno_error("interface.chain.prog: open " + c.object, errno);
		e.kind = ErrorKind::usage;
		return e;
	}
	std::vector<std::string> xdp;
	bpf_program *p;
	bpf_object__for_each_program(p, obj)
		if (bpf_program__type(p) == BPF_PROG_TYPE_XDP)
			xdp.emplace_back(bpf_program__name(p));
	bpf_object__close(obj);
	if (xdp.size() != 1)
		return usage_error("interface.chain.prog: " + c.object + " holds " + std::to_string(xdp.size()) +
				   " XDP programs: name one (OBJ:PROG)");
	return xdp[0].substr(0, kProgNameLen);
}

// Runs @f on @ifname inside @netns.
template <typename F>
Status on_dev(const std::string &netns, const std::string &ifname, F &&f)
{
	auto in = NetnsScope::enter(netns);
	if (!in)
		return in.error();
	auto dev = netdev_with_pins(ifname, true);
	if (!dev)
		return dev.error();
	return f(*dev);
}

// What @m says of direction @d: its policy and VID rules, as the file's model.
Result<VlanDir> read_dir(VlanMaps &m, Dir d)
{
	auto p = m.policy(d);
	if (!p)
		return p.error();
	auto rules = m.vid_rules(d);
	if (!rules)
		return rules.error();
	return dir_of(*p, *rules);
}

// @dev's VLAN maps made to say @v's policies (each direction one switch,
// and only where it differs).
Status sync_vlan(const Netdev &dev, const Vlan &v)
{
	auto m = VlanMaps::open(pin_dir(dev), dev.name);
	if (!m)
		return m.error();
	for (Dir d : {Dir::ingress, Dir::egress}) {
		const VlanDir &want = d == Dir::ingress ? v.ingress : v.egress;
		auto have = read_dir(*m, d);
		if (!have)
			return have.error();
		if (*have == want)
			continue;
		if (auto s = m->replace(d, policy_of(want), want.allow.value_or(std::vector<uint16_t>{}), want.rewrite); !s)
			return s;
	}
	return ok();
}

// @dev's Geneve maps made to say @g: ports, checksum, decap path, option
// classes, rules. Ports that geneve port add --nic or sync hold are theirs.
Status sync_geneve(const Netdev &dev, const Geneve &g)
{
	auto m = GeneveMaps::open(pin_dir(dev), dev.name, false);
	if (!m)
		return m.error();
	auto ports = m->ports();
	if (!ports)
		return ports.error();
	for (uint16_t p : g.ports) {
		auto cur = m->port(p);
		if (!cur)
			return cur.error();
		if (!cur->refcnt)
			if (auto r = m->port_add(p); !r)
				return r.error();
	}
	for (const auto &p : *ports) {
		if (p.flags || std::find(g.ports.begin(), g.ports.end(), p.port) != g.ports.end())
			continue;
		for (uint32_t n = p.refcnt; n > 0; n--)
			if (auto r = m->port_del(p.port); !r)
				return r.error();
	}
	auto cfg = m->cfg();
	if (!cfg)
		return cfg.error();
	if (((cfg->flags & XO_GNV_F_VERIFY_CSUM) != 0) != g.csum)
		if (auto s = m->set_verify_csum(g.csum); !s)
			return s;
	auto classes = m->known_classes();
	if (!classes)
		return classes.error();
	for (uint16_t c : g.option_classes)
		if (std::find(classes->begin(), classes->end(), c) == classes->end())
			if (auto s = m->option_known(c, true); !s)
				return s;
	for (uint16_t c : *classes)
		if (std::find(g.option_classes.begin(), g.option_classes.end(), c) == g.option_classes.end())
			if (auto s = m->option_known(c, false); !s)
				return s;
	auto rules = m->rules();
	if (!rules)
		return rules.error();
	for (const auto &w : g.rules) {
		auto it = std::find_if(rules->begin(), rules->end(), [&](const GeneveRule &r) { return r.vni == w.vni; });
		const bool steer = w.action == XO_GNV_ACT_XSK || w.action == XO_GNV_ACT_CPU;
		if (it != rules->end() && it->action == w.action && (!steer || it->queues == w.queues))
			continue;
		if (auto s = m->rule_set(GeneveRule{w.vni, w.action, w.queues}); !s)
			return s;
	}
	for (const auto &r : *rules)
		if (r.vni != XO_GNV_VNI_DEFAULT &&
		    std::none_of(g.rules.begin(), g.rules.end(), [&](const GeneveRuleCfg &w) { return w.vni == r.vni; }))
			if (auto s = m->rule_del(r.vni); !s)
				return s;
	cfg = m->cfg();
	if (!cfg)
		return cfg.error();
	if (g.decap_via != "auto") {
		const bool on = g.decap_via == "cpumap";
		if (!(cfg->flags & XO_GNV_F_DECAP_CHOSEN) || ((cfg->flags & XO_GNV_F_DECAP_CPUMAP) != 0) != on)
			return m->set_decap_cpumap(on, true);
		return ok();
	}
	// as geneve rule add --action decap: where the driver marks the outer
	// checksum verified, decapped frames go through the CPUMAP unless the
	// user chose
	const bool decap = std::any_of(g.rules.begin(), g.rules.end(),
				       [](const GeneveRuleCfg &r) { return r.action == XO_GNV_ACT_DECAP; });
	if (decap && !(cfg->flags & (XO_GNV_F_DECAP_CHOSEN | XO_GNV_F_DECAP_CPUMAP)) &&
	    features::decap_cpumap_default(features::nic_facts_running(driver_name(dev.name))))
		return m->set_decap_cpumap(true, false);
	return ok();
}

// The holders rx_vlan_take() records for our XDP readers of tags.
std::vector<std::pair<std::string, TagReader>> xdp_readers(const Interface &i)
{
	std::vector<std::pair<std::string, TagReader>> out;
	if (has_hook(i.vlan, Hook::xdp))
		out.emplace_back("vlan", TagReader::xdp_vlan);
	if (i.geneve)
		out.emplace_back("geneve", TagReader::xdp_geneve);
	return out;
}

struct Builder {
	std::string label, ifname, netns;	// label: how steps name the interface
	bool with_run;
	std::vector<Step> steps;

	void add(Step::Kind k, std::string text, std::function<Status(const Netdev &)> f)
	{
		Step s{label, k, std::move(text), {}};
		if (with_run && f)
			s.run = [ns = netns, name = ifname, f = std::move(f)] { return on_dev(ns, name, f); };
		steps.push_back(std::move(s));
	}
};

// The steps from @have to @want on one interface (see diff()).
std::vector<Step> build(const Interface &want, const std::optional<Interface> &have_in, const std::string &label,
			const std::string &ifname, bool with_run, const std::string &want_chain_name)
{
	const Interface have = have_in.value_or(Interface{});
	Builder b{label, ifname, want.netns, with_run, {}};
	const XdpMode mode = want.mode;
	const bool mode_change = have.has_xdp() && want.has_xdp() && have.mode != want.mode;
	const std::string why_mode = std::string(" (") + to_string(have.mode) + " mode; the file says " +
				     to_string(want.mode) + ")";
	const AttachOptions opts{want.keep_rx_vlan, false};

	// ---- what goes: the chain first (it runs after our stages) ----
	bool chain_same = want.chain && have.chain && want_chain_name == have.chain->program;
	if (have.chain && (!chain_same || mode_change))
		b.add(Step::Kind::detach, "detach chain " + have.chain->program + (mode_change ? why_mode : ""),
		      [](const Netdev &dev) -> Status {
			      auto r = detach_chain(dev);
			      return r ? ok() : Status(r.error());
		      });
	// geneve before vlan: when vlan stays (at tc hooks), the pins stay
	const bool geneve_fresh = want.geneve && (!have.geneve || mode_change);
	if (have.geneve && (!want.geneve || mode_change))
		b.add(Step::Kind::detach, std::string("detach geneve") + (want.geneve ? why_mode : " (not in the file)"),
		      [](const Netdev &dev) -> Status {
			      auto r = detach(dev, Feature::geneve, Hook::xdp);
			      return r ? ok() : Status(r.error());
		      });
	std::vector<Hook> vlan_attach;
	if (have.vlan)
		for (Hook h : have.vlan->hooks) {
			const bool keep = has_hook(want.vlan, h) && !(h == Hook::xdp && mode_change);
			if (keep)
				continue;
			b.add(Step::Kind::detach,
			      "detach vlan at " + std::string(to_string(h)) + (has_hook(want.vlan, h) ? why_mode : " (not in the file)"),
			      [h](const Netdev &dev) -> Status {
				      auto r = detach(dev, Feature::vlan, h);
				      return r ? ok() : Status(r.error());
			      });
		}
	if (want.vlan)
		for (Hook h : want.vlan->hooks)
			if (!has_hook(have.vlan, h) || (h == Hook::xdp && mode_change))
				vlan_attach.push_back(h);
	const bool vlan_fresh = want.vlan && (!have.vlan || vlan_attach.size() == want.vlan->hooks.size());

	// ---- what comes: our stages, then the chain after them ----
	for (Hook h : vlan_attach) {
		std::string text = "attach vlan at " + std::string(to_string(h));
		if (h == Hook::xdp)
			text += std::string(" (") + to_string(mode) + (want.keep_rx_vlan ? ", RX VLAN stripping kept)" : ")");
		b.add(Step::Kind::attach, text, [h, mode, opts, v = *want.vlan](const Netdev &dev) -> Status {
			auto r = attach(dev, Feature::vlan, h, mode, opts);
			if (!r)
				return r.error();
			return sync_vlan(dev, v);	// pins an earlier attach left keep their policy
		});
	}
	if (geneve_fresh)
		b.add(Step::Kind::attach,
		      std::string("attach geneve at xdp (") + to_string(mode) + (want.keep_rx_vlan ? ", RX VLAN stripping kept)" : ")"),
		      [mode, opts, g = *want.geneve](const Netdev &dev) -> Status {
			      auto r = attach(dev, Feature::geneve, Hook::xdp, mode, opts);
			      if (!r)
				      return r.error();
			      return sync_geneve(dev, g);
		      });
	if (want.chain && (!chain_same || mode_change)) {
		if (want.chain->object.empty()) {
			// name = only: nothing to load it from; plan() refuses first
			b.add(Step::Kind::attach, "attach chain " + want_chain_name + " (no object given)", {});
		} else {
			std::string obj = want.chain->object + (want.chain->program.empty() ? "" : ":" + want.chain->program);
			b.add(Step::Kind::attach, "attach chain " + obj + " (" + to_string(mode) + ")",
			      [c = *want.chain, mode](const Netdev &dev) -> Status {
				      auto r = attach_chain(dev, ChainRequest{c.object, c.program, mode});
				      return r ? ok() : Status(r.error());
			      });
		}
	}

	// ---- what changes on what stays (or is new: from the defaults) ----
	if (want.vlan) {
		const Vlan from = vlan_fresh || !have.vlan ? Vlan{} : *have.vlan;
		for (Dir d : {Dir::ingress, Dir::egress}) {
			const VlanDir &w = d == Dir::ingress ? want.vlan->ingress : want.vlan->egress;
			const VlanDir &h = d == Dir::ingress ? from.ingress : from.egress;
			if (w == h)
				continue;
			b.add(Step::Kind::change, "vlan " + std::string(dir_name(d)) + " policy: " + describe(h) + " -> " + describe(w),
			      [v = *want.vlan](const Netdev &dev) { return sync_vlan(dev, v); });
		}
	}
	if (want.geneve) {
		const Geneve from = geneve_fresh || !have.geneve ? Geneve{} : *have.geneve;
		const Geneve &w = *want.geneve;
		auto sync = [g = w](const Netdev &dev) { return sync_geneve(dev, g); };
		for (uint16_t p : w.ports)
			if (std::find(from.ports.begin(), from.ports.end(), p) == from.ports.end())
				b.add(Step::Kind::change, "geneve port add " + std::to_string(p), sync);
		for (uint16_t p : from.ports)
			if (std::find(w.ports.begin(), w.ports.end(), p) == w.ports.end() &&
			    std::find(from.held.begin(), from.held.end(), p) == from.held.end())
				b.add(Step::Kind::change, "geneve port del " + std::to_string(p) + " (not in the file)", sync);
		if (w.csum != from.csum)
			b.add(Step::Kind::change, std::string("geneve csum ") + (from.csum ? "on" : "off") + " -> " + (w.csum ? "on" : "off"), sync);
		if (w.decap_via != "auto" && w.decap_via != from.decap_via)
			b.add(Step::Kind::change, "geneve decap-via " + from.decap_via + " -> " + w.decap_via, sync);
		char hex[8];
		for (uint16_t c : w.option_classes)
			if (std::find(from.option_classes.begin(), from.option_classes.end(), c) == from.option_classes.end()) {
				std::snprintf(hex, sizeof(hex), "0x%04x", c);
				b.add(Step::Kind::change, std::string("geneve option known ") + hex, sync);
			}
		for (uint16_t c : from.option_classes)
			if (std::find(w.option_classes.begin(), w.option_classes.end(), c) == w.option_classes.end()) {
				std::snprintf(hex, sizeof(hex), "0x%04x", c);
				b.add(Step::Kind::change, std::string("geneve option known ") + hex + " removed", sync);
			}
		for (const auto &r : w.rules) {
			auto it = std::find_if(from.rules.begin(), from.rules.end(), [&](auto &x) { return x.vni == r.vni; });
			if (it == from.rules.end())
				b.add(Step::Kind::change, "geneve rule " + rule_vni(r) + ": " + rule_action(r), sync);
			else if (!(*it == r))
				b.add(Step::Kind::change, "geneve rule " + rule_vni(r) + ": " + rule_action(*it) + " -> " + rule_action(r), sync);
		}
		for (const auto &r : from.rules)
			if (std::none_of(w.rules.begin(), w.rules.end(), [&](auto &x) { return x.vni == r.vni; }))
				b.add(Step::Kind::change, "geneve rule of vni " + std::to_string(r.vni) + " removed (not in the file)", sync);
	}
	// RX VLAN stripping of XDP readers that stay attached
	if (want.has_xdp() && have.has_xdp() && !mode_change && want.keep_rx_vlan != have.keep_rx_vlan) {
		auto readers = xdp_readers(have);
		const bool keep = want.keep_rx_vlan;
		b.add(Step::Kind::change,
		      std::string("RX VLAN stripping: ") + (keep ? "off -> kept (on)" : "kept (on) -> off"),
		      [readers, keep](const Netdev &dev) -> Status {
			      for (const auto &[holder, reader] : readers) {
				      if (keep) {
					      if (auto s = rx_vlan_release(dev, holder); !s)
						      return s;
					      continue;
				      }
				      auto f = rx_vlan_facts(dev);
				      if (!f)
					      return f.error();
				      if (auto t = rx_vlan_take(dev, *f, holder, reader, false); !t)
					      return t.error();
			      }
			      return ok();
		      });
	}
	return std::move(b.steps);
}

// Where a declared interface is here: its link's name, or why not.
struct Resolved {
	std::string ifname;
	std::string why_not;
};

Resolved resolve(const Interface &i)
{
	auto in = NetnsScope::enter(i.netns);
	if (!in)
		return {"", in.error().msg};
	if (!i.mac.empty()) {
		auto names = netdev_names();
		if (!names)
			return {"", names.error().msg};
		for (const auto &n : *names) {
			auto m = netdev_perm_mac(n);
			if (m && *m == i.mac)
				return {n, ""};
		}
		// a link of that name without a permanent MAC (veth) is it
		if (!i.name.empty() && netdev_lookup(i.name)) {
			auto m = netdev_perm_mac(i.name);
			if (m && m->empty())
				return {i.name, ""};
		}
		return {"", "no interface here has the permanent MAC " + i.mac};
	}
	auto dev = netdev_lookup(i.name);
	if (!dev)
		return {"", dev.error().msg};
	return {i.name, ""};
}

} // namespace

std::string describe(const VlanDir &d)
{
	std::string s;
	switch (d.action) {
	case VlanDir::Action::pop:
		s = "pop " + std::to_string(d.depth);
		break;
	case VlanDir::Action::push:
		s = "push";
		for (size_t i = 0; i < d.push.size(); i++)
			s += std::string(i ? " +" : "") + (d.push[i].tpid == XO_ETH_P_8021AD ? " 802.1ad" : " 802.1Q") +
			     " vid " + std::to_string(d.push[i].vid) +
			     (d.push[i].pcp ? " pcp " + std::to_string(d.push[i].pcp) : "") + (d.push[i].dei ? " dei" : "");
		break;
	default:
		s = "none";
	}
	if (d.allow) {
		s += ", allow";
		if (d.allow->empty())
			s += " nothing tagged";
		for (size_t i = 0; i < d.allow->size(); i++)
			s += (i ? "," : " ") + std::to_string((*d.allow)[i]);
	}
	for (size_t i = 0; i < d.rewrite.size(); i++)
		s += (i ? ", " : ", rewrite ") + std::to_string(d.rewrite[i].first) + "->" + std::to_string(d.rewrite[i].second);
	return s;
}

std::vector<Step> diff(const Interface &want, const std::optional<Interface> &have)
{
	std::string name = want.chain ? want.chain->program.substr(0, kProgNameLen) : "";
	const std::string label = want.name.empty() ? "mac " + want.mac : want.name;
	return build(want, have, label, label, false, name);
}

Result<std::optional<Interface>> running(const std::string &ifname)
{
	auto dev = netdev_with_pins(ifname, true);
	if (!dev)
		return dev.error();
	auto st = status(*dev);
	if (!st)
		return st.error();
	Interface i;
	i.name = dev->name;
	i.netns = netns_current();
	bool any = false;
	for (const auto &a : st->ours) {
		any = true;
		if (a.hook == Hook::xdp)
			i.mode = a.mode;
		if (a.feature == Feature::geneve) {
			i.geneve = Geneve{};
			continue;
		}
		if (!i.vlan)
			i.vlan = Vlan{};
		if (!has_hook(i.vlan, a.hook))
			i.vlan->hooks.push_back(a.hook);
	}
	if (i.vlan)
		std::sort(i.vlan->hooks.begin(), i.vlan->hooks.end());
	uint32_t chain_id = st->chain_prog_id;
	std::string chain_name;
	if (st->composed && st->composed->chain_prog_id) {
		chain_id = st->composed->chain_prog_id;
		chain_name = st->composed->chain_prog_name;
	}
	for (const auto &p : st->xdp_progs)
		if (chain_id && p.id == chain_id)
			chain_name = p.name;
	if (chain_id) {
		any = true;
		i.chain = Chain{"", chain_name.empty() ? "prog-" + std::to_string(chain_id) : chain_name};
		if (st->xdp_mode == "skb")
			i.mode = XdpMode::skb;
	}
	if (!any)
		return std::optional<Interface>();
	if (i.vlan) {
		auto m = VlanMaps::open(st->pin_dir, dev->name);
		if (!m)
			return m.error();
		for (Dir d : {Dir::ingress, Dir::egress}) {
			auto have = read_dir(*m, d);
			if (!have)
				return have.error();
			(d == Dir::ingress ? i.vlan->ingress : i.vlan->egress) = std::move(*have);
		}
	}
	if (i.geneve) {
		auto m = GeneveMaps::open(st->pin_dir, dev->name, false);
		if (!m)
			return m.error();
		auto ports = m->ports();
		auto cfg = m->cfg();
		auto classes = m->known_classes();
		auto rules = m->rules();
		for (const Error *e : {ports ? nullptr : &ports.error(), cfg ? nullptr : &cfg.error(),
				       classes ? nullptr : &classes.error(), rules ? nullptr : &rules.error()})
			if (e)
				return *e;
		// the maps stay locked while m lives; nothing else to read
		m->unlock();
		for (const auto &p : *ports)
			if (p.refcnt) {
				i.geneve->ports.push_back(p.port);
				if (p.flags)
					i.geneve->held.push_back(p.port);
			}
		i.geneve->csum = cfg->flags & XO_GNV_F_VERIFY_CSUM;
		if (cfg->flags & XO_GNV_F_DECAP_CHOSEN)
			i.geneve->decap_via = (cfg->flags & XO_GNV_F_DECAP_CPUMAP) ? "cpumap" : "pass";
		i.geneve->option_classes = *classes;
		i.geneve->rules.clear();
		for (const auto &r : *rules) {
			const bool steer = r.action == XO_GNV_ACT_XSK || r.action == XO_GNV_ACT_CPU;
			i.geneve->rules.push_back(GeneveRuleCfg{r.vni, r.action, steer ? r.queues : 1u});
		}
	}
	if (i.has_xdp()) {
		// kept: stripping that could be turned off is on (an attach
		// without --keep-rx-vlan turns it off, or the driver strips
		// nothing at XDP, as veth)
		auto f = rx_vlan_facts(*dev);
		if (f)
			i.keep_rx_vlan = (f->ctag_strip && !f->ctag_fixed) || (f->stag_strip && !f->stag_fixed);
	}
	return std::optional<Interface>(std::move(i));
}

Result<Plan> plan(const Config &c, const std::optional<std::string> &only, bool keep_undeclared)
{
	if (auto s = bpffs_check(); !s)
		return s.error();
	Plan p;
	// (netns, ifname) of every declared interface found here
	std::set<std::pair<std::string, std::string>> declared;
	// the namespaces the file speaks for: the one apply runs in (-n) and
	// those it names; state of ours in any other is not the file's
	std::set<std::string> scope{netns_current()};
	for (const auto &i : c.interfaces)
		if (!i.netns.empty())
			scope.insert(i.netns);
	for (const auto &i : c.interfaces) {
		Resolved r = resolve(i);
		if (r.ifname.empty()) {
			if (!only)
				p.skipped.push_back(i.label() + ": " + r.why_not);
			continue;
		}
		// without netns: the namespace apply runs in (-n), as its pin
		// directories name it
		declared.emplace(i.netns.empty() ? netns_current() : i.netns, r.ifname);
		if (only && r.ifname != *only)
			continue;
		std::string chain_name;
		if (i.chain) {
			auto n = chain_prog_name(*i.chain);
			if (!n)
				return Error{n.error().kind, n.error().err,
					     c.source + ":" + std::to_string(i.chain->line) + ":" +
						     std::to_string(i.chain->column) + ": " + n.error().msg};
			chain_name = *n;
		}
		Result<std::optional<Interface>> have = std::optional<Interface>();
		{
			auto in = NetnsScope::enter(i.netns);
			if (!in)
				return in.error();
			have = running(r.ifname);
		}
		if (!have)
			return Error{have.error().kind, have.error().err, r.ifname + ": " + have.error().msg};
		if (i.chain && i.chain->object.empty() && !(*have && (*have)->chain && (*have)->chain->program == chain_name))
			return usage_error(c.source + ":" + std::to_string(i.line) + ": " + i.label() + ": chain " + chain_name +
					   " does not run there and the file gives no object to attach (prog = \"OBJ[:PROG]\")");
		auto steps = build(i, *have, r.ifname + (i.netns.empty() ? "" : "@" + i.netns), r.ifname, true, chain_name);
		for (auto &s : steps)
			p.steps.push_back(std::move(s));
	}
	if (only || keep_undeclared)
		return p;
	auto dirs = list_pin_dirs();
	if (!dirs)
		return dirs.error();
	for (const auto &d : *dirs) {
		if (d.orphan || declared.count({d.netns, d.ifname}) || !scope.count(d.netns))
			continue;
		Result<std::optional<Interface>> have = std::optional<Interface>();
		{
			auto in = NetnsScope::enter(d.netns);
			if (!in)
				continue;	// its netns went: detach --all-orphans' business
			if (!netdev_lookup(d.ifname))
				continue;
			have = running(d.ifname);
		}
		if (!have || !*have)
			continue;
		const std::string label = d.ifname + (d.netns.empty() ? "" : "@" + d.netns);
		Step s{label, Step::Kind::detach, "detach everything of ours (not in the file)", {}};
		s.run = [ns = d.netns, name = d.ifname] {
			return on_dev(ns, name, [](const Netdev &dev) -> Status {
				if (auto c = detach_chain(dev); !c)
					return c.error();
				auto r = detach(dev, std::nullopt, std::nullopt);
				return r ? ok() : Status(r.error());
			});
		};
		p.steps.push_back(std::move(s));
	}
	return p;
}

Status apply(const Plan &p, const Config &)
{
	for (const auto &s : p.steps) {
		if (!s.run)
			return usage_error(s.ifname + ": " + s.text + ": this step cannot be applied");
		if (auto r = s.run(); !r)
			return Error{r.error().kind, r.error().err, s.ifname + ": " + s.text + ": " + r.error().msg};
	}
	return ok();
}

Result<std::string> show()
{
	if (auto s = bpffs_check(); !s)
		return s.error();
	auto dirs = list_pin_dirs();
	if (!dirs)
		return dirs.error();
	Config c;
	for (const auto &d : *dirs) {
		if (d.orphan)
			continue;
		auto in = NetnsScope::enter(d.netns);
		if (!in)
			continue;
		if (!netdev_lookup(d.ifname))
			continue;
		auto have = running(d.ifname);
		if (!have)
			return Error{have.error().kind, have.error().err, d.ifname + ": " + have.error().msg};
		if (*have) {
			(*have)->netns = d.netns;
			c.interfaces.push_back(std::move(**have));
		}
	}
	std::sort(c.interfaces.begin(), c.interfaces.end(),
		  [](const Interface &a, const Interface &b) { return std::tie(a.netns, a.name) < std::tie(b.netns, b.name); });
	return render(c);
}

} // namespace xoffload::config
