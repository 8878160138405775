// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The model written back as xoffload.toml(5): what `config show` prints,
// which load() reads to an equal model (keys left out are the defaults).
#include <cstdio>
#include <string>

#include "xoffload/config/config_model.hpp"

namespace xoffload::config {

namespace {

std::string quote(const std::string &s)
{
	std::string out = "\"";
	for (char c : s) {
		if (c == '"' || c == '\\')
			out += '\\';
		out += c;
	}
	return out + "\"";
}

template <typename T>
std::string list(const std::vector<T> &v, bool hex = false)
{
	std::string s = "[";
	char b[16];
	for (size_t i = 0; i < v.size(); i++) {
		std::snprintf(b, sizeof(b), hex ? "0x%04x" : "%u", static_cast<unsigned>(v[i]));
		s += (i ? ", " : "") + std::string(b);
	}
	return s + "]";
}

void dir(std::string &o, const char *name, const VlanDir &d)
{
	if (d.is_default())
		return;
	o += "\n[interface.vlan." + std::string(name) + "]\n";
	if (d.action == VlanDir::Action::pop)
		o += "action = \"pop\"\ndepth = " + std::to_string(d.depth) + "\n";
	if (d.action == VlanDir::Action::push && !d.push.empty()) {
		const TagSpec &t = d.push[0];
		o += "action = \"push\"\nvid = " + std::to_string(t.vid) + "\n";
		o += std::string("proto = ") + (t.tpid == XO_ETH_P_8021AD ? "\"802.1ad\"" : "\"802.1Q\"") + "\n";
		if (t.pcp)
			o += "pcp = " + std::to_string(t.pcp) + "\n";
		if (t.dei)
			o += "dei = true\n";
		if (d.push.size() > 1) {
			const TagSpec &in = d.push[1];
			o += "inner_vid = " + std::to_string(in.vid) + "\n";
			if (in.pcp)
				o += "inner_pcp = " + std::to_string(in.pcp) + "\n";
			if (in.dei)
				o += "inner_dei = true\n";
		}
	}
	if (d.allow)
		o += "allow = " + list(*d.allow) + "\n";
	if (!d.rewrite.empty()) {
		o += "rewrite = { ";
		for (size_t i = 0; i < d.rewrite.size(); i++)
			o += (i ? ", " : "") + std::to_string(d.rewrite[i].first) + " = " + std::to_string(d.rewrite[i].second);
		o += " }\n";
	}
}

} // namespace

std::string render(const Config &c)
{
	std::string o = "# xoffload.toml(5)\n";
	if (c.metrics != kDefaultMetrics)
		o += "\n[agent]\nmetrics = " + quote(c.metrics) + "\n";
	for (const Interface &i : c.interfaces) {
		o += "\n[[interface]]\n";
		if (!i.name.empty())
			o += "name = " + quote(i.name) + "\n";
		if (!i.mac.empty())
			o += "mac = " + quote(i.mac) + "\n";
		if (!i.netns.empty())
			o += "netns = " + quote(i.netns) + "\n";
		if (i.has_xdp()) {
			o += std::string("mode = \"") + to_string(i.mode) + "\"\n";
			o += std::string("rx_vlan_offload = \"") + (i.keep_rx_vlan ? "keep" : "off") + "\"\n";
		}
		if (i.vlan) {
			o += "\n[interface.vlan]\nhooks = [";
			for (size_t k = 0; k < i.vlan->hooks.size(); k++)
				o += (k ? ", \"" : "\"") + std::string(to_string(i.vlan->hooks[k])) + "\"";
			o += "]\n";
			dir(o, "ingress", i.vlan->ingress);
			dir(o, "egress", i.vlan->egress);
		}
		if (i.geneve) {
			const Geneve &g = *i.geneve;
			o += "\n[interface.geneve]\nports = " + list(g.ports) + "\n";
			o += std::string("csum = ") + (g.csum ? "true" : "false") + "\n";
			o += "decap_via = " + quote(g.decap_via) + "\n";
			if (!g.option_classes.empty())
				o += "option_classes = " + list(g.option_classes, true) + "\n";
			for (const auto &r : g.rules) {
				if (r.vni == XO_GNV_VNI_DEFAULT && r == GeneveRuleCfg{})
					continue;	// the default's default
				o += "\n[[interface.geneve.rule]]\n";
				o += r.vni == XO_GNV_VNI_DEFAULT ? std::string("default = true\n")
								 : "vni = " + std::to_string(r.vni) + "\n";
				o += std::string("action = \"") + geneve_action_name(r.action) + "\"\n";
				if (r.action == XO_GNV_ACT_XSK || r.action == XO_GNV_ACT_CPU)
					o += "queues = " + std::to_string(r.queues) + "\n";
			}
		}
		if (i.chain) {
			o += "\n[interface.chain]\n";
			if (i.chain->object.empty())
				o += "name = " + quote(i.chain->program) + "\n";
			else
				o += "prog = " + quote(i.chain->object + (i.chain->program.empty() ? "" : ":" + i.chain->program)) + "\n";
		}
	}
	return o;
}

} // namespace xoffload::config
