// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// xoffload.toml(5) without the system: parsing, every validation error with
// its line:column and key, show's rendering read back, matching by MAC and
// the steps between two models.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "xoffload/config/config.hpp"
#include "xoffload/config/config_model.hpp"

namespace xoffload::config {
namespace {

const char *kFile = "/etc/xo/t.toml";

Interface only_interface(const std::string &text)
{
	auto c = parse(text, kFile);
	EXPECT_TRUE(c.ok()) << (c ? "" : c.error().msg);
	if (!c || (*c)->interfaces.size() != 1)
		return Interface{};
	return (*c)->interfaces[0];
}

TEST(Config, ParsesEveryKey)
{
	const char *text = R"([agent]
metrics = "[::1]:9900"
metrics_public = true

[[interface]]
name = "eth1"
mac = "52:54:00:AB:CD:01"
netns = "ns1"
mode = "skb"
rx_vlan_offload = "keep"

[interface.vlan]
hooks = ["tc-egress", "xdp"]

[interface.vlan.ingress]
action = "pop"
depth = 2
allow = [20, 10]
rewrite = { 30 = 40, 5 = 6 }

[interface.vlan.egress]
action = "push"
vid = 100
pcp = 5
dei = true
inner_vid = 200
inner_pcp = 1

[interface.geneve]
ports = [6081, 4789]
csum = true
decap_via = "pass"
option_classes = [0x0102, 7]

[[interface.geneve.rule]]
vni = 100
action = "decap"

[[interface.geneve.rule]]
default = true
action = "drop"

[[interface.geneve.rule]]
vni = 7
action = "cpu"
queues = 2

[interface.chain]
prog = "fw.bpf.o:xdp_fw"
)";
	auto c = parse(text, kFile);
	ASSERT_TRUE(c.ok()) << c.error().msg;
	EXPECT_EQ(metrics_listen(**c), "[::1]:9900");
	EXPECT_TRUE(metrics_public(**c));
	EXPECT_EQ(source(**c), kFile);
	ASSERT_EQ((*c)->interfaces.size(), 1u);
	const Interface &i = (*c)->interfaces[0];
	EXPECT_EQ(i.name, "eth1");
	EXPECT_EQ(i.mac, "52:54:00:ab:cd:01");	// lower case
	EXPECT_EQ(i.netns, "ns1");
	EXPECT_EQ(i.mode, XdpMode::skb);
	EXPECT_TRUE(i.keep_rx_vlan);
	ASSERT_TRUE(i.vlan);
	EXPECT_EQ(i.vlan->hooks, (std::vector<Hook>{Hook::xdp, Hook::tc_egress}));	// sorted
	EXPECT_EQ(i.vlan->ingress.action, VlanDir::Action::pop);
	EXPECT_EQ(i.vlan->ingress.depth, 2u);
	EXPECT_EQ(i.vlan->ingress.allow, (std::vector<uint16_t>{10, 20}));
	EXPECT_EQ(i.vlan->ingress.rewrite, (std::vector<std::pair<uint16_t, uint16_t>>{{5, 6}, {30, 40}}));
	const VlanDir &e = i.vlan->egress;
	EXPECT_EQ(e.action, VlanDir::Action::push);
	ASSERT_EQ(e.push.size(), 2u);
	EXPECT_EQ(e.push[0].tpid, XO_ETH_P_8021AD);	// the default outer TPID with an inner tag
	EXPECT_EQ(e.push[0].vid, 100);
	EXPECT_EQ(e.push[0].pcp, 5);
	EXPECT_TRUE(e.push[0].dei);
	EXPECT_EQ(e.push[1].tpid, XO_ETH_P_8021Q);
	EXPECT_EQ(e.push[1].vid, 200);
	EXPECT_EQ(e.push[1].pcp, 1);
	EXPECT_FALSE(e.allow);	// no allow-list
	ASSERT_TRUE(i.geneve);
	EXPECT_EQ(i.geneve->ports, (std::vector<uint16_t>{4789, 6081}));
	EXPECT_TRUE(i.geneve->csum);
	EXPECT_EQ(i.geneve->decap_via, "pass");
	EXPECT_EQ(i.geneve->option_classes, (std::vector<uint16_t>{7, 0x102}));
	ASSERT_EQ(i.geneve->rules.size(), 3u);	// default first, then by VNI
	EXPECT_EQ(i.geneve->rules[0], (GeneveRuleCfg{XO_GNV_VNI_DEFAULT, XO_GNV_ACT_DROP, 1}));
	EXPECT_EQ(i.geneve->rules[1], (GeneveRuleCfg{7, XO_GNV_ACT_CPU, 2}));
	EXPECT_EQ(i.geneve->rules[2], (GeneveRuleCfg{100, XO_GNV_ACT_DECAP, 1}));
	ASSERT_TRUE(i.chain);
	EXPECT_EQ(i.chain->object, "/etc/xo/fw.bpf.o");	// beside the file
	EXPECT_EQ(i.chain->program, "xdp_fw");
	EXPECT_EQ(i.line, 5);
	EXPECT_EQ(i.chain->line, 49);	// where prog = is, for plan()'s errors
	EXPECT_EQ(i.chain->column, 8);
}

TEST(Config, DefaultsWhereTheFileIsSilent)
{
	auto c = parse("[[interface]]\nname = \"eth1\"\n[interface.vlan]\n", kFile);
	ASSERT_TRUE(c.ok()) << c.error().msg;
	EXPECT_EQ(metrics_listen(**c), "127.0.0.1:9796");
	EXPECT_FALSE(metrics_public(**c));
	const Interface &i = (*c)->interfaces[0];
	EXPECT_EQ(i.mode, XdpMode::native);
	EXPECT_FALSE(i.keep_rx_vlan);
	ASSERT_TRUE(i.vlan);
	EXPECT_EQ(i.vlan->hooks, std::vector<Hook>{Hook::xdp});
	EXPECT_TRUE(i.vlan->ingress.is_default());
	EXPECT_FALSE(i.geneve);
	EXPECT_FALSE(i.chain);
	EXPECT_EQ(declared_names(**c), std::vector<std::string>{"eth1"});
}

struct BadCase {
	const char *name;
	const char *text;
	const char *want;	// the whole message after "FILE:"
};

class ConfigErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(ConfigErrors, NamesLineColumnAndKey)
{
	auto c = parse(GetParam().text, kFile);
	ASSERT_FALSE(c.ok()) << GetParam().name << " was accepted";
	EXPECT_EQ(c.error().kind, ErrorKind::usage);
	EXPECT_EQ(c.error().msg, std::string(kFile) + ":" + GetParam().want);
	EXPECT_EQ(c.error().msg.find('\n'), std::string::npos);	// one line
}

const BadCase kBad[] = {
	{"toml_syntax", "[[interface]\n", "1:13: TOML: Error while parsing table header: expected ']', saw '\\n'"},
	{"unknown_top", "[agnet]\n", "1:2: agnet: unknown key (expected agent, interface)"},
	{"unknown_agent", "[agent]\nmetric = \"x\"\n", "2:1: agent.metric: unknown key (expected metrics, metrics_public)"},
	{"metrics_form", "[agent]\nmetrics = \"localhost\"\n",
	 "2:11: agent.metrics: \"localhost\" is not ADDR:PORT (\"127.0.0.1:9796\", \"[::1]:9796\"; \"\" for none)"},
	{"metrics_port", "[agent]\nmetrics = \"0.0.0.0:70000\"\n",
	 "2:11: agent.metrics: \"0.0.0.0:70000\" is not ADDR:PORT (\"127.0.0.1:9796\", \"[::1]:9796\"; \"\" for none)"},
	{"interface_not_array", "[interface]\nname = \"eth1\"\n", "1:1: interface: expected [[interface]] tables, not a table"},
	{"unknown_interface_key", "[[interface]]\nname = \"eth1\"\nmtu = 9000\n",
	 "3:1: interface.mtu: unknown key (expected name, mac, netns, mode, rx_vlan_offload, vlan, geneve, chain)"},
	{"no_name_no_mac", "[[interface]]\nnetns = \"a\"\n",
	 "1:1: interface: needs name = \"IFNAME\" or mac = \"PERMANENT MAC\" (or both)"},
	{"name_type", "[[interface]]\nname = 3\n", "2:8: interface.name: expected a string, not an integer"},
	{"name_long", "[[interface]]\nname = \"abcdefghijklmnop\"\n",
	 "2:8: interface.name: \"abcdefghijklmnop\" cannot be an interface name (1..15 characters, no '/', ':' or space)"},
	{"mac_form", "[[interface]]\nmac = \"52:54:00:12:34\"\n",
	 "2:7: interface.mac: \"52:54:00:12:34\" is not a MAC address (xx:xx:xx:xx:xx:xx)"},
	{"netns_slash", "[[interface]]\nname = \"e\"\nnetns = \"a/b\"\n[interface.vlan]\n",
	 "3:9: interface.netns: \"a/b\" cannot be a netns name (/run/netns/NAME)"},
	{"mode_word", "[[interface]]\nname = \"e\"\nmode = \"fast\"\n[interface.vlan]\n",
	 "3:8: interface.mode: \"fast\" is not one of \"native\", \"skb\", \"generic\""},
	{"mode_without_xdp", "[[interface]]\nname = \"e\"\nmode = \"skb\"\n[interface.vlan]\nhooks = [\"tc-egress\"]\n",
	 "3:8: interface.mode: an XDP mode, but nothing of this interface runs at xdp"},
	{"rx_vlan_word", "[[interface]]\nname = \"e\"\nrx_vlan_offload = \"on\"\n[interface.vlan]\n",
	 "3:19: interface.rx_vlan_offload: \"on\" is not one of \"off\", \"keep\""},
	{"duplicate_name", "[[interface]]\nname = \"e\"\n\n[[interface]]\nname = \"e\"\n",
	 "4:1: interface: e is declared twice (first at line 1)"},
	{"duplicate_mac", "[[interface]]\nmac = \"02:00:00:00:00:01\"\n[[interface]]\nmac = \"02:00:00:00:00:01\"\n",
	 "3:1: interface: mac 02:00:00:00:00:01 is declared twice (first at line 1)"},
	{"vlan_not_table", "[[interface]]\nname = \"e\"\nvlan = 1\n", "3:8: interface.vlan: expected a table, not an integer"},
	{"hook_unknown", "[[interface]]\nname = \"e\"\n[interface.vlan]\nhooks = [\"xdp\", \"tc\"]\n",
	 "4:17: interface.vlan.hooks: unknown hook 'tc' (xdp, tc-ingress or tc-egress)"},
	{"hook_twice", "[[interface]]\nname = \"e\"\n[interface.vlan]\nhooks = [\"xdp\", \"xdp\"]\n",
	 "4:17: interface.vlan.hooks: xdp is listed twice"},
	{"hooks_empty", "[[interface]]\nname = \"e\"\n[interface.vlan]\nhooks = []\n",
	 "4:9: interface.vlan.hooks: no hook: give at least one (or leave [vlan] out)"},
	{"action_word", "[[interface]]\nname = \"e\"\n[interface.vlan.ingress]\naction = \"strip\"\n",
	 "4:10: interface.vlan.ingress.action: \"strip\" is not one of \"none\", \"pop\", \"push\""},
	{"depth_range", "[[interface]]\nname = \"e\"\n[interface.vlan.ingress]\naction = \"pop\"\ndepth = 3\n",
	 "5:9: interface.vlan.ingress.depth: 3 is outside 1..2"},
	{"depth_type", "[[interface]]\nname = \"e\"\n[interface.vlan.ingress]\naction = \"pop\"\ndepth = \"2\"\n",
	 "5:9: interface.vlan.ingress.depth: expected a whole number in 1..2, not a string"},
	{"depth_without_pop", "[[interface]]\nname = \"e\"\n[interface.vlan.ingress]\ndepth = 2\n",
	 "4:9: interface.vlan.ingress.depth: only with action = \"pop\" (action is \"none\")"},
	{"push_without_vid", "[[interface]]\nname = \"e\"\n[interface.vlan]\nhooks = [\"tc-egress\"]\n"
			     "[interface.vlan.egress]\naction = \"push\"\n",
	 "5:1: interface.vlan.egress.vid: action = \"push\" needs vid (1..4094)"},
	{"vid_range", "[[interface]]\nname = \"e\"\n[interface.vlan.ingress]\naction = \"push\"\nvid = 4095\n",
	 "5:7: interface.vlan.ingress.vid: 4095 is outside 1..4094"},
	{"pcp_range", "[[interface]]\nname = \"e\"\n[interface.vlan.ingress]\naction = \"push\"\nvid = 4\npcp = 8\n",
	 "6:7: interface.vlan.ingress.pcp: 8 is outside 0..7"},
	{"proto_word", "[[interface]]\nname = \"e\"\n[interface.vlan.ingress]\naction = \"push\"\nvid = 4\nproto = \"qinq\"\n",
	 "6:9: interface.vlan.ingress.proto: \"qinq\" is not one of \"802.1Q\", \"802.1ad\""},
	{"inner_pcp_alone", "[[interface]]\nname = \"e\"\n[interface.vlan.ingress]\naction = \"push\"\nvid = 4\ninner_pcp = 1\n",
	 "6:13: interface.vlan.ingress.inner_pcp: needs inner_vid (the inner tag it describes)"},
	{"allow_range", "[[interface]]\nname = \"e\"\n[interface.vlan.ingress]\nallow = [10, 0]\n",
	 "4:14: interface.vlan.ingress.allow: 0 is outside 1..4094"},
	{"allow_twice", "[[interface]]\nname = \"e\"\n[interface.vlan.ingress]\nallow = [10, 10]\n",
	 "4:14: interface.vlan.ingress.allow: VID 10 is listed twice"},
	{"rewrite_key", "[[interface]]\nname = \"e\"\n[interface.vlan.ingress]\nrewrite = { x = 2 }\n",
	 "4:13: interface.vlan.ingress.rewrite.x: the key is the VID to translate, 1..4094"},
	{"rewrite_self", "[[interface]]\nname = \"e\"\n[interface.vlan.ingress]\nrewrite = { 7 = 7 }\n",
	 "4:17: interface.vlan.ingress.rewrite.7: translates VID 7 to itself"},
	{"egress_without_hook", "[[interface]]\nname = \"e\"\n[interface.vlan.egress]\naction = \"pop\"\n",
	 "3:1: interface.vlan.egress: an egress policy needs hooks with \"tc-egress\" (where it runs)"},
	{"geneve_port_range", "[[interface]]\nname = \"e\"\n[interface.geneve]\nports = [0]\n",
	 "4:10: interface.geneve.ports: 0 is outside 1..65535"},
	{"geneve_decap_word", "[[interface]]\nname = \"e\"\n[interface.geneve]\ndecap_via = \"stack\"\n",
	 "4:13: interface.geneve.decap_via: \"stack\" is not one of \"auto\", \"cpumap\", \"pass\""},
	{"geneve_csum_type", "[[interface]]\nname = \"e\"\n[interface.geneve]\ncsum = \"on\"\n",
	 "4:8: interface.geneve.csum: expected true or false, not a string"},
	{"geneve_class_range", "[[interface]]\nname = \"e\"\n[interface.geneve]\noption_classes = [0x10000]\n",
	 "4:19: interface.geneve.option_classes: 65536 is outside 0..65535"},
	{"rule_vni_and_default", "[[interface]]\nname = \"e\"\n[[interface.geneve.rule]]\nvni = 1\ndefault = true\naction = \"drop\"\n",
	 "3:1: interface.geneve.rule: give exactly one of vni = N or default = true"},
	{"rule_vni_range", "[[interface]]\nname = \"e\"\n[[interface.geneve.rule]]\nvni = 16777216\naction = \"drop\"\n",
	 "4:7: interface.geneve.rule.vni: 16777216 is outside 0..16777215"},
	{"rule_no_action", "[[interface]]\nname = \"e\"\n[[interface.geneve.rule]]\nvni = 1\n",
	 "3:1: interface.geneve.rule.action: every rule needs an action (pass, drop, decap, xsk, cpu)"},
	{"rule_queues_not_steering", "[[interface]]\nname = \"e\"\n[[interface.geneve.rule]]\nvni = 1\naction = \"decap\"\nqueues = 2\n",
	 "6:10: interface.geneve.rule.queues: only with action \"xsk\" or \"cpu\" (action is \"decap\")"},
	{"rule_queues_range", "[[interface]]\nname = \"e\"\n[[interface.geneve.rule]]\nvni = 1\naction = \"xsk\"\nqueues = 65\n",
	 "6:10: interface.geneve.rule.queues: 65 is outside 1..64"},
	{"rule_vni_twice", "[[interface]]\nname = \"e\"\n[[interface.geneve.rule]]\nvni = 1\naction = \"drop\"\n"
			   "[[interface.geneve.rule]]\nvni = 1\naction = \"pass\"\n",
	 "6:1: interface.geneve.rule: a second rule for VNI 1 (the first at line 3)"},
	{"rule_unknown_key", "[[interface]]\nname = \"e\"\n[[interface.geneve.rule]]\nvni = 1\nverdict = \"drop\"\n",
	 "5:1: interface.geneve.rule.verdict: unknown key (expected vni, default, action, queues)"},
	{"chain_both", "[[interface]]\nname = \"e\"\n[interface.chain]\nprog = \"a.o\"\nname = \"x\"\n",
	 "3:1: interface.chain: give exactly one of prog = \"OBJ[:PROG]\" (a program to attach) or name = \"PROG\" (the "
	 "one running, as config show prints it)"},
	{"chain_form", "[[interface]]\nname = \"e\"\n[interface.chain]\nprog = \"a.o:\"\n",
	 "4:8: interface.chain.prog: \"a.o:\": expected OBJ[:PROG]"},
};

INSTANTIATE_TEST_SUITE_P(Config, ConfigErrors, ::testing::ValuesIn(kBad),
			 [](const ::testing::TestParamInfo<BadCase> &i) { return std::string(i.param.name); });

TEST(Config, LoadNamesAMissingFile)
{
	auto c = load("/nonexistent/xoffload.toml");
	ASSERT_FALSE(c.ok());
	EXPECT_EQ(c.error().kind, ErrorKind::usage);
	EXPECT_EQ(c.error().msg, "/nonexistent/xoffload.toml: cannot read the file: No such file or directory");
}

TEST(Config, TheInstalledExampleLoads)
{
	const char *src = std::getenv("XO_SOURCE_DIR");
	if (!src)
		GTEST_SKIP() << "XO_SOURCE_DIR is not set (run through ctest)";
	auto c = load(std::string(src) + "/etc/xoffload.toml.example");
	ASSERT_TRUE(c.ok()) << c.error().msg;
	EXPECT_EQ((*c)->interfaces.size(), 3u);
}

// A running state as running() would read it, rendered and read back.
TEST(Config, ShowsAStateThatLoadsBackEqual)
{
	Config m;
	Interface a;
	a.name = "veth-a";
	a.netns = "ns1";
	a.mode = XdpMode::skb;
	a.vlan = Vlan{};
	a.vlan->hooks = {Hook::xdp, Hook::tc_ingress, Hook::tc_egress};
	a.vlan->ingress.action = VlanDir::Action::pop;
	a.vlan->ingress.depth = 2;
	a.vlan->ingress.allow = std::vector<uint16_t>{};	// on, empty: every tagged frame drops
	a.vlan->egress.action = VlanDir::Action::push;
	a.vlan->egress.push = {TagSpec{XO_ETH_P_8021Q, 10, 3, true}, TagSpec{XO_ETH_P_8021Q, 20, 0, false}};
	a.vlan->egress.rewrite = {{1, 2}, {4000, 3}};
	a.geneve = Geneve{};
	a.geneve->ports = {6081};
	a.geneve->decap_via = "cpumap";
	a.geneve->option_classes = {0, 0xffff};
	a.geneve->rules = {GeneveRuleCfg{XO_GNV_VNI_DEFAULT, XO_GNV_ACT_XSK, 4}, GeneveRuleCfg{0, XO_GNV_ACT_DROP, 1}};
	a.chain = Chain{"", "xdp_drop_port9"};
	Interface b;
	b.name = "eth0";
	b.vlan = Vlan{};
	b.vlan->hooks = {Hook::tc_egress};
	m.interfaces = {a, b};
	const std::string text = render(m);
	auto c = parse(text, "show");
	ASSERT_TRUE(c.ok()) << c.error().msg << "\n" << text;
	ASSERT_EQ((*c)->interfaces.size(), 2u);
	for (size_t k = 0; k < 2; k++) {
		const Interface &want = m.interfaces[k], &got = (*c)->interfaces[k];
		EXPECT_EQ(got.name, want.name);
		EXPECT_EQ(got.netns, want.netns);
		EXPECT_EQ(got.mode, want.mode);
		EXPECT_EQ(got.keep_rx_vlan, want.keep_rx_vlan);
		EXPECT_EQ(got.vlan, want.vlan) << text;
		EXPECT_EQ(got.geneve, want.geneve) << text;
		EXPECT_EQ(got.chain, want.chain) << text;
		// and so no step between them
		EXPECT_TRUE(diff(got, want).empty()) << text;
	}
	EXPECT_EQ(render(**c), text);
}

TEST(Config, MatchesByPermanentMacFirst)
{
	auto c = parse("[[interface]]\nname = \"lan0\"\nmac = \"52:54:00:00:00:01\"\n"
		       "[[interface]]\nname = \"eth1\"\n"
		       "[[interface]]\nmac = \"52:54:00:00:00:02\"\n",
		       kFile);
	ASSERT_TRUE(c.ok()) << c.error().msg;
	// renamed: the MAC keeps its policy
	EXPECT_EQ(match(**c, "enp3s0", "52:54:00:00:00:01"), "lan0");
	// by MAC alone: the link's name
	EXPECT_EQ(match(**c, "eth7", "52:54:00:00:00:02"), "eth7");
	// another NIC under lan0's name is not lan0
	EXPECT_EQ(match(**c, "lan0", "52:54:00:00:00:09"), std::nullopt);
	// a link without a permanent MAC (veth) goes by its name
	EXPECT_EQ(match(**c, "lan0", ""), "lan0");
	EXPECT_EQ(match(**c, "eth1", ""), "eth1");
	EXPECT_EQ(match(**c, "eth1", "52:54:00:00:00:07"), "eth1");
	EXPECT_EQ(match(**c, "eth2", ""), std::nullopt);
}

TEST(Config, StepsFromNothingAttachThenConfigure)
{
	Interface w = only_interface("[[interface]]\nname = \"e\"\n[interface.vlan]\nhooks = [\"xdp\", \"tc-egress\"]\n"
				     "[interface.vlan.ingress]\naction = \"pop\"\n"
				     "[interface.geneve]\nports = [6081]\n[[interface.geneve.rule]]\nvni = 5\naction = \"decap\"\n");
	auto steps = diff(w, std::nullopt);
	std::vector<std::string> texts;
	for (const auto &s : steps) {
		texts.push_back(s.text);
		EXPECT_EQ(s.ifname, "e");
		EXPECT_FALSE(s.run);	// diff() plans, never runs
	}
	EXPECT_EQ(texts, (std::vector<std::string>{"attach vlan at xdp (native)", "attach vlan at tc-egress",
						   "attach geneve at xdp (native)", "vlan ingress policy: none -> pop 1",
						   "geneve port add 6081", "geneve rule vni 5: decap"}));
	EXPECT_EQ(steps[0].kind, Step::Kind::attach);
	EXPECT_EQ(steps.back().kind, Step::Kind::change);
}

TEST(Config, StepsOfAChangedFile)
{
	Interface have = only_interface("[[interface]]\nname = \"e\"\nmode = \"skb\"\n[interface.vlan]\nhooks = [\"xdp\", \"tc-egress\"]\n"
					"[interface.vlan.egress]\naction = \"push\"\nvid = 7\n");
	Interface want = only_interface("[[interface]]\nname = \"e\"\nmode = \"native\"\n[interface.vlan]\nhooks = [\"xdp\", \"tc-egress\"]\n"
					"[interface.vlan.egress]\naction = \"push\"\nvid = 8\nallow = [8]\n");
	std::vector<std::string> texts;
	for (const auto &s : diff(want, have))
		texts.push_back(s.text);
	// the mode moves the xdp program; tc-egress stays, its policy changes
	EXPECT_EQ(texts, (std::vector<std::string>{"detach vlan at xdp (skb mode; the file says native)",
						   "attach vlan at xdp (native)",
						   "vlan egress policy: push 802.1Q vid 7 -> push 802.1Q vid 8, allow 8"}));
	// back to nothing: what was declared goes
	Interface none = only_interface("[[interface]]\nname = \"e\"\n");
	texts.clear();
	for (const auto &s : diff(none, have))
		texts.push_back(s.text);
	EXPECT_EQ(texts, (std::vector<std::string>{"detach vlan at xdp (not in the file)",
						   "detach vlan at tc-egress (not in the file)"}));
	EXPECT_TRUE(diff(have, have).empty());
}

TEST(Config, StepsOfGeneveAndRxVlanChanges)
{
	Interface have = only_interface("[[interface]]\nname = \"e\"\nrx_vlan_offload = \"keep\"\n[interface.geneve]\n"
					"ports = [6081, 7000]\noption_classes = [1, 2]\ndecap_via = \"pass\"\n"
					"[[interface.geneve.rule]]\nvni = 1\naction = \"drop\"\n"
					"[[interface.geneve.rule]]\nvni = 2\naction = \"xsk\"\nqueues = 2\n");
	have.geneve->held = {7000};	// geneve port add --nic holds it
	Interface want = only_interface("[[interface]]\nname = \"e\"\n[interface.geneve]\nports = [4789]\ncsum = true\n"
					"option_classes = [2, 3]\ndecap_via = \"cpumap\"\n"
					"[[interface.geneve.rule]]\nvni = 2\naction = \"xsk\"\nqueues = 4\n"
					"[[interface.geneve.rule]]\ndefault = true\naction = \"drop\"\n");
	std::vector<std::string> texts;
	for (const auto &s : diff(want, have))
		texts.push_back(s.text);
	EXPECT_EQ(texts, (std::vector<std::string>{
				 "geneve port add 4789", "geneve port del 6081 (not in the file)",	// 7000: not ours
				 "geneve csum off -> on", "geneve decap-via pass -> cpumap", "geneve option known 0x0003",
				 "geneve option known 0x0001 removed", "geneve rule default: pass -> drop",
				 "geneve rule vni 2: xsk over 2 -> xsk over 4",
				 "geneve rule of vni 1 removed (not in the file)", "RX VLAN stripping: kept (on) -> off"}));
	// decap_via = "auto" leaves a choice made by geneve decap-via alone
	want.geneve->decap_via = "auto";
	for (const auto &s : diff(want, have))
		EXPECT_EQ(s.text.find("decap-via"), std::string::npos) << s.text;
}

TEST(Config, ApplyRefusesAStepItCannotRun)
{
	Plan p;
	p.steps.push_back(Step{"e", Step::Kind::attach, "attach vlan at xdp (native)", {}});
	Config c;
	auto s = apply(p, c);
	ASSERT_FALSE(s.ok());
	EXPECT_EQ(s.error().msg, "e: attach vlan at xdp (native): this step cannot be applied");
}

} // namespace
} // namespace xoffload::config
