// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Reading xoffload.toml(5): TOML through toml++, then every key checked
// (known, of its type, in range) before anything is read from the system.
// The first problem is the one error, "FILE:LINE:COLUMN: KEY: what".
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string_view>

#include <toml++/toml.h>

#include "xoffload/config/config_model.hpp"
#include "xoffload/geneve/geneve.hpp"

namespace xoffload::config {

namespace {

// Thrown inside parse() only, caught at its end: the first bad key ends it.
struct Bad {
	Error e;
};

class Reader {
public:
	explicit Reader(std::string source) : src_(std::move(source)) {}

	[[noreturn]] void fail(const toml::source_region &r, const std::string &key, const std::string &what) const
	{
		throw Bad{usage_error(src_ + ":" + std::to_string(r.begin.line) + ":" + std::to_string(r.begin.column) +
				      ": " + key + ": " + what)};
	}
	[[noreturn]] void fail(const toml::node &n, const std::string &key, const std::string &what) const
	{
		fail(n.source(), key, what);
	}

	// Every key of @t is one of @known.
	void only(const toml::table &t, const std::string &path, std::initializer_list<std::string_view> known) const
	{
		for (auto &&[k, v] : t) {
			if (std::find(known.begin(), known.end(), k.str()) != known.end())
				continue;
			std::string list;
			for (auto n : known)
				list += (list.empty() ? "" : ", ") + std::string(n);
			fail(k.source(), join(path, std::string(k.str())), "unknown key (expected " + list + ")");
		}
	}

	static std::string join(const std::string &path, const std::string &k)
	{
		return path.empty() ? k : path + "." + k;
	}

	const toml::table *table(const toml::table &t, const std::string &path, std::string_view k) const
	{
		const toml::node *n = t.get(k);
		if (!n)
			return nullptr;
		if (!n->is_table())
			fail(*n, join(path, std::string(k)), "expected a table, not " + type_name(*n));
		return n->as_table();
	}

	std::optional<std::string> str(const toml::table &t, const std::string &path, std::string_view k) const
	{
		const toml::node *n = t.get(k);
		if (!n)
			return std::nullopt;
		if (!n->is_string())
			fail(*n, join(path, std::string(k)), "expected a string, not " + type_name(*n));
		return n->as_string()->get();
	}

	std::optional<bool> boolean(const toml::table &t, const std::string &path, std::string_view k) const
	{
		const toml::node *n = t.get(k);
		if (!n)
			return std::nullopt;
		if (!n->is_boolean())
			fail(*n, join(path, std::string(k)), "expected true or false, not " + type_name(*n));
		return n->as_boolean()->get();
	}

	int64_t integer(const toml::node &n, const std::string &key, int64_t lo, int64_t hi) const
	{
		if (!n.is_integer())
			fail(n, key, "expected a whole number in " + std::to_string(lo) + ".." + std::to_string(hi) +
					     ", not " + type_name(n));
		int64_t v = n.as_integer()->get();
		if (v < lo || v > hi)
			fail(n, key, std::to_string(v) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
		return v;
	}

	std::optional<int64_t> integer(const toml::table &t, const std::string &path, std::string_view k, int64_t lo,
				       int64_t hi) const
	{
		const toml::node *n = t.get(k);
		if (!n)
			return std::nullopt;
		return integer(*n, join(path, std::string(k)), lo, hi);
	}

	// An array of whole numbers in lo..hi, each once; sorted.
	std::optional<std::vector<uint16_t>> numbers(const toml::table &t, const std::string &path, std::string_view k,
						     int64_t lo, int64_t hi, size_t max, const char *what) const
	{
		const toml::node *n = t.get(k);
		if (!n)
			return std::nullopt;
		const std::string key = join(path, std::string(k));
		if (!n->is_array())
			fail(*n, key, "expected an array of " + std::string(what) + "s, not " + type_name(*n));
		std::vector<uint16_t> out;
		for (const toml::node &e : *n->as_array()) {
			auto v = static_cast<uint16_t>(integer(e, key, lo, hi));
			if (std::find(out.begin(), out.end(), v) != out.end())
				fail(e, key, std::string(what) + " " + std::to_string(v) + " is listed twice");
			out.push_back(v);
		}
		if (out.size() > max)
			fail(*n, key, std::to_string(out.size()) + " " + what + "s, at most " + std::to_string(max));
		std::sort(out.begin(), out.end());
		return out;
	}

	// One of @words, as a string.
	std::optional<std::string> word(const toml::table &t, const std::string &path, std::string_view k,
					std::initializer_list<std::string_view> words) const
	{
		auto s = str(t, path, k);
		if (!s)
			return s;
		if (std::find(words.begin(), words.end(), *s) != words.end())
			return s;
		std::string list;
		for (auto w : words)
			list += (list.empty() ? "\"" : ", \"") + std::string(w) + "\"";
		fail(*t.get(k), join(path, std::string(k)), "\"" + *s + "\" is not one of " + list);
	}

	static std::string type_name(const toml::node &n)
	{
		switch (n.type()) {
		case toml::node_type::table: return "a table";
		case toml::node_type::array: return "an array";
		case toml::node_type::string: return "a string";
		case toml::node_type::integer: return "an integer";
		case toml::node_type::floating_point: return "a float";
		case toml::node_type::boolean: return "a boolean";
		default: return "a date or time";
		}
	}

	const std::string &source() const { return src_; }

private:
	std::string src_;
};

bool valid_ifname(const std::string &s)
{
	if (s.empty() || s.size() >= 16 || s == "." || s == "..")
		return false;
	return std::none_of(s.begin(), s.end(), [](unsigned char c) { return c == '/' || c == ':' || std::isspace(c); });
}

// "52:54:00:AB:cd:01" -> "52:54:00:ab:cd:01"; "" when not a MAC
std::string normal_mac(const std::string &s)
{
	if (s.size() != 17)
		return "";
	std::string out;
	for (size_t i = 0; i < s.size(); i++) {
		char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
		if (i % 3 == 2 ? c != ':' : !std::isxdigit(static_cast<unsigned char>(c)))
			return "";
		out += c;
	}
	return out;
}

VlanDir read_dir(const Reader &r, const toml::table &t, const std::string &path)
{
	r.only(t, path, {"action", "depth", "vid", "proto", "pcp", "dei", "inner_vid", "inner_pcp", "inner_dei",
			 "allow", "rewrite"});
	VlanDir d;
	const std::string act = r.word(t, path, "action", {"none", "pop", "push"}).value_or("none");
	d.action = act == "pop" ? VlanDir::Action::pop : act == "push" ? VlanDir::Action::push : VlanDir::Action::none;
	auto only_with = [&](std::string_view k, VlanDir::Action a, const char *what) {
		if (const toml::node *n = t.get(k); n && d.action != a)
			r.fail(*n, Reader::join(path, std::string(k)),
			       std::string("only with action = \"") + what + "\" (action is \"" + act + "\")");
	};
	only_with("depth", VlanDir::Action::pop, "pop");
	for (auto k : {"vid", "proto", "pcp", "dei", "inner_vid", "inner_pcp", "inner_dei"})
		only_with(k, VlanDir::Action::push, "push");
	if (d.action == VlanDir::Action::pop)
		d.depth = static_cast<unsigned>(r.integer(t, path, "depth", 1, 2).value_or(1));
	if (d.action == VlanDir::Action::push) {
		auto vid = r.integer(t, path, "vid", XO_VID_MIN, XO_VID_MAX);
		if (!vid)
			r.fail(t.source(), Reader::join(path, "vid"), "action = \"push\" needs vid (1..4094)");
		auto ivid = r.integer(t, path, "inner_vid", XO_VID_MIN, XO_VID_MAX);
		for (auto k : {"inner_pcp", "inner_dei"})
			if (const toml::node *n = t.get(k); n && !ivid)
				r.fail(*n, Reader::join(path, k), "needs inner_vid (the inner tag it describes)");
		auto proto = r.word(t, path, "proto", {"802.1Q", "802.1ad"}).value_or(ivid ? "802.1ad" : "802.1Q");
		TagSpec outer{proto == "802.1ad" ? uint16_t{XO_ETH_P_8021AD} : uint16_t{XO_ETH_P_8021Q},
			      static_cast<uint16_t>(*vid), static_cast<uint8_t>(r.integer(t, path, "pcp", 0, 7).value_or(0)),
			      r.boolean(t, path, "dei").value_or(false)};
		d.push.push_back(outer);
		if (ivid)
			d.push.push_back(TagSpec{XO_ETH_P_8021Q, static_cast<uint16_t>(*ivid),
						 static_cast<uint8_t>(r.integer(t, path, "inner_pcp", 0, 7).value_or(0)),
						 r.boolean(t, path, "inner_dei").value_or(false)});
	}
	d.allow = r.numbers(t, path, "allow", XO_VID_MIN, XO_VID_MAX, XO_VID_MAX, "VID");
	if (const toml::table *rw = r.table(t, path, "rewrite")) {
		const std::string key = Reader::join(path, "rewrite");
		for (auto &&[k, v] : *rw) {
			const std::string ks(k.str());
			const std::string kk = key + "." + ks;
			bool digits = !ks.empty() && ks.size() <= 4 &&
				      std::all_of(ks.begin(), ks.end(), [](unsigned char c) { return std::isdigit(c); });
			int from = digits ? std::stoi(ks) : 0;
			if (!digits || ks[0] == '0' || from < XO_VID_MIN || from > XO_VID_MAX)
				r.fail(k.source(), kk, "the key is the VID to translate, 1..4094");
			auto to = static_cast<uint16_t>(r.integer(v, kk, XO_VID_MIN, XO_VID_MAX));
			if (to == from)
				r.fail(v, kk, "translates VID " + ks + " to itself");
			d.rewrite.emplace_back(static_cast<uint16_t>(from), to);
		}
		std::sort(d.rewrite.begin(), d.rewrite.end());
	}
	return d;
}

Vlan read_vlan(const Reader &r, const toml::table &t, const std::string &path)
{
	r.only(t, path, {"hooks", "ingress", "egress"});
	Vlan v;
	if (const toml::node *n = t.get("hooks")) {
		const std::string key = Reader::join(path, "hooks");
		if (!n->is_array())
			r.fail(*n, key, "expected an array of hooks (\"xdp\", \"tc-ingress\", \"tc-egress\"), not " +
						Reader::type_name(*n));
		for (const toml::node &e : *n->as_array()) {
			if (!e.is_string())
				r.fail(e, key, "expected \"xdp\", \"tc-ingress\" or \"tc-egress\", not " + Reader::type_name(e));
			auto h = parse_hook(e.as_string()->get());
			if (!h)
				r.fail(e, key, h.error().msg);
			if (std::find(v.hooks.begin(), v.hooks.end(), *h) != v.hooks.end())
				r.fail(e, key, std::string(to_string(*h)) + " is listed twice");
			v.hooks.push_back(*h);
		}
		if (v.hooks.empty())
			r.fail(*n, key, "no hook: give at least one (or leave [vlan] out)");
		std::sort(v.hooks.begin(), v.hooks.end());
	} else {
		v.hooks = {Hook::xdp};
	}
	auto has = [&](Hook h) { return std::find(v.hooks.begin(), v.hooks.end(), h) != v.hooks.end(); };
	if (const toml::table *d = r.table(t, path, "ingress")) {
		v.ingress = read_dir(r, *d, Reader::join(path, "ingress"));
		if (!v.ingress.is_default() && !has(Hook::xdp) && !has(Hook::tc_ingress))
			r.fail(*d, Reader::join(path, "ingress"),
			       "an ingress policy needs hooks with \"xdp\" or \"tc-ingress\" (where it runs)");
	}
	if (const toml::table *d = r.table(t, path, "egress")) {
		v.egress = read_dir(r, *d, Reader::join(path, "egress"));
		if (!v.egress.is_default() && !has(Hook::tc_egress))
			r.fail(*d, Reader::join(path, "egress"), "an egress policy needs hooks with \"tc-egress\" (where it runs)");
	}
	return v;
}

Geneve read_geneve(const Reader &r, const toml::table &t, const std::string &path)
{
	r.only(t, path, {"ports", "csum", "decap_via", "option_classes", "rule"});
	Geneve g;
	g.ports = r.numbers(t, path, "ports", 1, 65535, XO_GNV_MAX_PORTS, "port").value_or(std::vector<uint16_t>{});
	g.csum = r.boolean(t, path, "csum").value_or(false);
	g.decap_via = r.word(t, path, "decap_via", {"auto", "cpumap", "pass"}).value_or("auto");
	g.option_classes = r.numbers(t, path, "option_classes", 0, 0xffff, XO_GNV_MAX_CLASSES, "option class")
				   .value_or(std::vector<uint16_t>{});
	const toml::node *rn = t.get("rule");
	if (!rn)
		return g;
	const std::string key = Reader::join(path, "rule");
	if (!rn->is_array_of_tables())
		r.fail(*rn, key, "expected [[" + key + "]] tables, not " + Reader::type_name(*rn));
	bool have_default = false;
	std::map<uint32_t, int> seen;	// vni -> line
	for (const toml::node &e : *rn->as_array()) {
		const toml::table &rt = *e.as_table();
		r.only(rt, key, {"vni", "default", "action", "queues"});
		GeneveRuleCfg rule;
		auto vni = r.integer(rt, key, "vni", 0, XO_GNV_VNI_MAX);
		bool dflt = r.boolean(rt, key, "default").value_or(false);
		if (vni.has_value() == dflt)
			r.fail(rt, key, "give exactly one of vni = N or default = true");
		rule.vni = dflt ? XO_GNV_VNI_DEFAULT : static_cast<uint32_t>(*vni);
		auto act = r.word(rt, key, "action", {"pass", "drop", "decap", "xsk", "cpu"});
		if (!act)
			r.fail(rt, Reader::join(key, "action"), "every rule needs an action (pass, drop, decap, xsk, cpu)");
		rule.action = *parse_geneve_action(*act);
		bool steer = rule.action == XO_GNV_ACT_XSK || rule.action == XO_GNV_ACT_CPU;
		if (const toml::node *q = rt.get("queues"); q && !steer)
			r.fail(*q, Reader::join(key, "queues"), "only with action \"xsk\" or \"cpu\" (action is \"" + *act + "\")");
		rule.queues = static_cast<uint32_t>(r.integer(rt, key, "queues", 1, XO_GNV_MAX_QUEUES).value_or(1));
		if (dflt) {
			if (have_default)
				r.fail(rt, key, "a second default rule");
			have_default = true;
			g.rules[0] = rule;
			continue;
		}
		if (auto [it, fresh] = seen.emplace(rule.vni, rt.source().begin.line); !fresh)
			r.fail(rt, key, "a second rule for VNI " + std::to_string(rule.vni) + " (the first at line " +
						std::to_string(it->second) + ")");
		g.rules.push_back(rule);
	}
	if (g.rules.size() - 1 > XO_GNV_MAX_RULES)
		r.fail(*rn, key, std::to_string(g.rules.size() - 1) + " VNI rules, at most " + std::to_string(XO_GNV_MAX_RULES));
	std::sort(g.rules.begin() + 1, g.rules.end(), [](auto &a, auto &b) { return a.vni < b.vni; });
	return g;
}

Chain read_chain(const Reader &r, const toml::table &t, const std::string &path)
{
	r.only(t, path, {"prog", "name"});
	auto prog = r.str(t, path, "prog");
	auto name = r.str(t, path, "name");
	if (prog.has_value() == name.has_value())
		r.fail(t, path, "give exactly one of prog = \"OBJ[:PROG]\" (a program to attach) or name = \"PROG\" "
				"(the one running, as config show prints it)");
	Chain c;
	if (name) {
		if (name->empty())
			r.fail(*t.get("name"), Reader::join(path, "name"), "empty program name");
		c.program = *name;
		return c;
	}
	c.object = *prog;
	c.line = static_cast<int>(t.get("prog")->source().begin.line);
	c.column = static_cast<int>(t.get("prog")->source().begin.column);
	// OBJ:PROG where PROG is a name (no path in it); a path may hold colons
	if (size_t colon = prog->rfind(':'); colon != std::string::npos && prog->find('/', colon) == std::string::npos) {
		c.object = prog->substr(0, colon);
		c.program = prog->substr(colon + 1);
	}
	if (c.object.empty() || (prog->rfind(':') == prog->size() - 1))
		r.fail(*t.get("prog"), Reader::join(path, "prog"), "\"" + *prog + "\": expected OBJ[:PROG]");
	// a relative object is found beside the file that names it
	if (c.object[0] != '/') {
		size_t slash = r.source().rfind('/');
		if (slash != std::string::npos)
			c.object = r.source().substr(0, slash + 1) + c.object;
	}
	return c;
}

Interface read_interface(const Reader &r, const toml::table &t)
{
	const std::string path = "interface";
	r.only(t, path, {"name", "mac", "netns", "mode", "rx_vlan_offload", "vlan", "geneve", "chain"});
	Interface i;
	i.line = static_cast<int>(t.source().begin.line);
	i.column = static_cast<int>(t.source().begin.column);
	if (auto n = r.str(t, path, "name")) {
		if (!valid_ifname(*n))
			r.fail(*t.get("name"), "interface.name", "\"" + *n + "\" cannot be an interface name (1..15 characters, no '/', ':' or space)");
		i.name = *n;
	}
	if (auto m = r.str(t, path, "mac")) {
		i.mac = normal_mac(*m);
		if (i.mac.empty())
			r.fail(*t.get("mac"), "interface.mac", "\"" + *m + "\" is not a MAC address (xx:xx:xx:xx:xx:xx)");
	}
	if (i.name.empty() && i.mac.empty())
		r.fail(t, path, "needs name = \"IFNAME\" or mac = \"PERMANENT MAC\" (or both)");
	if (auto n = r.str(t, path, "netns")) {
		if (n->empty() || n->find('/') != std::string::npos || *n == "." || *n == "..")
			r.fail(*t.get("netns"), "interface.netns", "\"" + *n + "\" cannot be a netns name (/run/netns/NAME)");
		i.netns = *n;
	}
	if (auto m = r.word(t, path, "mode", {"native", "skb", "generic"}))
		i.mode = *m == "native" ? XdpMode::native : XdpMode::skb;
	i.keep_rx_vlan = r.word(t, path, "rx_vlan_offload", {"off", "keep"}).value_or("off") == "keep";
	if (const toml::table *v = r.table(t, path, "vlan"))
		i.vlan = read_vlan(r, *v, "interface.vlan");
	if (const toml::table *g = r.table(t, path, "geneve"))
		i.geneve = read_geneve(r, *g, "interface.geneve");
	if (const toml::table *c = r.table(t, path, "chain"))
		i.chain = read_chain(r, *c, "interface.chain");
	if (t.get("mode") && !i.has_xdp())
		r.fail(*t.get("mode"), "interface.mode", "an XDP mode, but nothing of this interface runs at xdp");
	if (t.get("rx_vlan_offload") && !i.has_xdp())
		r.fail(*t.get("rx_vlan_offload"), "interface.rx_vlan_offload",
		       "for the xdp hook (vlan at xdp, geneve), which this interface does not use");
	return i;
}

bool valid_listen(const std::string &s)
{
	if (s.empty())
		return true;
	size_t colon = s.rfind(':');
	if (colon == std::string::npos || colon == 0 || colon + 1 >= s.size() || s.size() - colon - 1 > 5)
		return false;
	std::string port = s.substr(colon + 1), host = s.substr(0, colon);
	if (!std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c); }))
		return false;
	int p = std::stoi(port);
	if (p < 1 || p > 65535)
		return false;
	if (host.front() == '[')
		return host.back() == ']' && host.size() > 2;
	return host.find(':') == std::string::npos;
}

} // namespace

bool VlanDir::operator==(const VlanDir &o) const
{
	if (action != o.action || allow != o.allow || rewrite != o.rewrite)
		return false;
	if (action == Action::pop && depth != o.depth)
		return false;
	if (action != Action::push)
		return true;
	if (push.size() != o.push.size())
		return false;
	for (size_t i = 0; i < push.size(); i++)
		if (push[i].tpid != o.push[i].tpid || push[i].vid != o.push[i].vid || push[i].pcp != o.push[i].pcp ||
		    push[i].dei != o.push[i].dei)
			return false;
	return true;
}

std::string Interface::label() const
{
	std::string s = name.empty() ? "mac " + mac : name;
	return netns.empty() ? s : s + "@" + netns;
}

bool Interface::has_xdp() const
{
	return geneve || chain ||
	       (vlan && std::find(vlan->hooks.begin(), vlan->hooks.end(), Hook::xdp) != vlan->hooks.end());
}

Result<ConfigPtr> parse(const std::string &text, const std::string &source)
{
	Reader r(source);
	try {
		toml::table root = toml::parse(text, source);
		auto c = std::make_shared<Config>();
		c->source = source;
		r.only(root, "", {"agent", "interface"});
		if (const toml::table *a = r.table(root, "", "agent")) {
			r.only(*a, "agent", {"metrics", "metrics_public"});
			c->metrics_public = r.boolean(*a, "agent", "metrics_public").value_or(false);
			if (auto m = r.str(*a, "agent", "metrics")) {
				if (!valid_listen(*m))
					r.fail(*a->get("metrics"), "agent.metrics",
					       "\"" + *m + "\" is not ADDR:PORT (\"127.0.0.1:9796\", \"[::1]:9796\"; \"\" for none)");
				c->metrics = *m;
			}
		}
		if (const toml::node *n = root.get("interface")) {
			if (!n->is_array_of_tables())
				r.fail(*n, "interface", "expected [[interface]] tables, not " + Reader::type_name(*n));
			for (const toml::node &e : *n->as_array()) {
				Interface i = read_interface(r, *e.as_table());
				for (const Interface &o : c->interfaces) {
					const bool same_name = !i.name.empty() && i.name == o.name && i.netns == o.netns;
					const bool same_mac = !i.mac.empty() && i.mac == o.mac;
					if (same_name || same_mac)
						r.fail(*e.as_table(), "interface",
						       (same_name ? i.label() : "mac " + i.mac) + " is declared twice (first at line " +
							       std::to_string(o.line) + ")");
				}
				c->interfaces.push_back(std::move(i));
			}
		}
		return ConfigPtr(std::move(c));
	} catch (const toml::parse_error &e) {
		const auto &b = e.source().begin;
		return usage_error(source + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
				   ": TOML: " + std::string(e.description()));
	} catch (const Bad &b) {
		return b.e;
	}
}

Result<ConfigPtr> load(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	if (!in)
		return usage_error(path + ": cannot read the file: " + std::string(std::strerror(errno)));
	std::stringstream ss;
	ss << in.rdbuf();
	return parse(ss.str(), path);
}

const std::string &source(const Config &c)
{
	return c.source;
}

std::string metrics_listen(const Config &c)
{
	return c.metrics;
}

bool metrics_public(const Config &c)
{
	return c.metrics_public;
}

std::vector<std::string> declared_names(const Config &c)
{
	std::vector<std::string> out;
	for (const auto &i : c.interfaces)
		if (!i.name.empty())
			out.push_back(i.name);
	return out;
}

std::optional<std::string> match(const Config &c, const std::string &ifname, const std::string &perm_mac)
{
	// a MAC is the stronger claim: a renamed NIC keeps its policy even
	// where another entry declares its old or new name
	if (!perm_mac.empty()) {
		const std::string m = normal_mac(perm_mac);
		for (const auto &i : c.interfaces)
			if (!i.mac.empty() && i.mac == m)
				return i.name.empty() ? ifname : i.name;
	}
	// by name: entries without a MAC, and with one for a link that has
	// none (veth): a NIC with another permanent MAC is another NIC
	const std::string m = normal_mac(perm_mac);
	for (const auto &i : c.interfaces)
		if (i.name == ifname && (i.mac.empty() || m.empty()))
			return i.name;
	return std::nullopt;
}

} // namespace xoffload::config
