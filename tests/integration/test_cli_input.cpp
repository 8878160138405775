// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// offload-tool against bad input, as an adversarial tester types it: every
// subcommand with wrong types, out-of-range values, missing and conflicting
// options and devices that do not exist. Each row: the exit code (2 bad
// usage, 1 a fact of the system such as a missing device), exactly one line
// on stderr naming the offending option or value, and nothing left behind on
// the testbed device (no XDP or TC program, no clsact, no pins). Then send's
// refusals of frames the device cannot carry, its default mss with tags and
// Geneve, and the device's tx_dropped reported as a failure.
#include <bpf/libbpf.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <chrono>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "testbed.hpp"

namespace xoffload::test {
namespace {

constexpr double kTimeout = 20;
constexpr const char *kNoIf = "xo-nosuch0";

struct Row {
	std::vector<std::string> args;	// "IF": the testbed's device; "NOIF": one that does not exist
	int exit_code;
	std::string needle;		// what the stderr line must name
	bool in_netns = true;		// run with -n <testbed netns A>
};

size_t lines(const std::string &s)
{
	return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

class CliInput : public TestbedTest {
protected:
	std::vector<std::string> argv(const Row &r) const
	{
		std::vector<std::string> v{tool_};
		if (r.in_netns)
			v.insert(v.end(), {"-n", tb_->ns_a()});
		for (const auto &a : r.args)
			v.push_back(a == "IF" ? tb_->if_a() : a == "NOIF" ? kNoIf : a);
		return v;
	}
	std::vector<std::string> tool(std::vector<std::string> args, bool json = true) const
	{
		std::vector<std::string> v{tool_};
		if (json)
			v.push_back("--json");
		v.insert(v.end(), {"-n", tb_->ns_a()});
		v.insert(v.end(), args.begin(), args.end());
		return v;
	}
	std::vector<std::string> send_args(std::vector<std::string> extra) const
	{
		std::vector<std::string> v{"send", tb_->if_a(), "--dst-mac", "02:00:00:00:00:0b", "--src-ip",
					   "198.18.0.1", "--dst-ip", "198.18.0.2", "--interval", "0"};
		v.insert(v.end(), extra.begin(), extra.end());
		return v;
	}

	// What an xoffload command may have left on side A: "" when nothing. A
	// TC filter needs a clsact qdisc, so no clsact means no filter of ours.
	// One shell for both reads keeps the table fast.
	std::string leftovers() const
	{
		const std::string &ns = tb_->ns_a(), &ifn = tb_->if_a();
		std::string found;
		CmdResult l = run_cmd({"sh", "-c", "ip -n \"$0\" -d link show dev \"$1\" && echo @@ && tc -n \"$0\" qdisc show dev \"$1\"",
				       ns, ifn},
				      10);
		const size_t split = l.out.find("@@");
		if (!l.ok() || split == std::string::npos)
			found += "could not read the device: " + l.describe();
		else if (l.out.find("prog/xdp") < split)
			found += "XDP program: " + l.out.substr(0, split);
		else if (l.out.find("clsact", split) != std::string::npos)
			found += "clsact (TC filters): " + l.out.substr(split);
		for (const std::string &d : {"/sys/fs/bpf/xoffload/" + ifn + "@" + ns, "/sys/fs/bpf/xoffload/" + ifn})
			if (access(d.c_str(), F_OK) == 0)
				found += "pins: " + d;
		return found;
	}

};

std::vector<Row> table()
{
	const std::vector<std::string> snd{"send", "IF", "--dst-mac", "02:00:00:00:00:0b", "--src-ip", "198.18.0.1",
					   "--dst-ip", "198.18.0.2", "--interval", "0"};
	auto send = [&](std::vector<std::string> extra) {
		std::vector<std::string> v = snd;
		v.insert(v.end(), extra.begin(), extra.end());
		return v;
	};
	const std::vector<std::string> gnv{"--geneve-vni", "7", "--outer-src-ip", "10.0.0.1", "--outer-dst-ip",
					   "10.0.0.2"};
	auto with_gnv = [&](std::vector<std::string> extra) {
		extra.insert(extra.end(), gnv.begin(), gnv.end());
		return send(extra);
	};
	const std::string nodev = "Cannot find device \"xo-nosuch0\"";
	return {
		// ---- global ----
		{{}, 2, "subcommand"},
		{{"frobnicate"}, 2, "frobnicate"},
		{{"--bogus", "status"}, 2, "--bogus"},
		{{"-n", "xo-no-such-ns", "status"}, 2, "xo-no-such-ns", false},
		{{"-n"}, 2, "--netns", false},
		// ---- attach / detach / status ----
		{{"attach", "NOIF", "vlan"}, 1, nodev},
		{{"attach", "IF"}, 2, "feature"},
		{{"attach", "IF", "bogus"}, 2, "bogus"},
		{{"attach", "IF", "vlan", "--hook", "foo"}, 2, "foo"},
		{{"attach", "IF", "vlan", "--mode", "turbo"}, 2, "turbo"},
		{{"attach", "IF", "vlan", "--hook", "tc-ingress", "--mode", "skb"}, 2, "--mode skb"},
		{{"attach", "IF", "vlan", "--hook", "tc-ingress", "--keep-rx-vlan"}, 2, "--keep-rx-vlan"},
		{{"attach", "IF", "geneve", "--no-tag-kfunc"}, 2, "--no-tag-kfunc"},
		{{"attach", "", "vlan"}, 2, "invalid interface name"},
		{{"attach", "xo-far-too-long-name0", "vlan"}, 2, "xo-far-too-long-name0"},
		{{"attach", "IF", "vlan", "surplus"}, 2, "surplus"},
		{{"attach", "IF", "vlan", "--hook"}, 2, "--hook"},
		{{"detach", "NOIF"}, 1, nodev},
		{{"detach", "IF", "bogus"}, 2, "bogus"},
		{{"detach", "IF", "vlan", "--hook", "foo"}, 2, "foo"},
		{{"detach", "IF"}, 1, "IF_A"},
		{{"detach", "--purge", "NOIF"}, 1, nodev},
		{{"detach", "--all-orphans", "IF"}, 2, "--all-orphans"},
		{{"status", "NOIF"}, 1, nodev},
		{{"status", "IF", "surplus"}, 2, "surplus"},
		{{"rearm"}, 2, "interface"},
		{{"rearm", "NOIF"}, 1, nodev},
		{{"rearm", "IF"}, 1, "nothing to rearm"},
		{{"rearm", "IF", "surplus"}, 2, "surplus"},
		// ---- vlan ----
		{{"vlan"}, 2, "subcommand"},
		{{"vlan", "bogus", "IF"}, 2, "bogus"},
		{{"vlan", "pop"}, 2, "interface"},
		{{"vlan", "pop", "NOIF"}, 1, nodev},
		{{"vlan", "pop", "IF", "--depth", "3"}, 2, "'3'"},
		{{"vlan", "pop", "IF", "--depth", "0"}, 2, "'0'"},
		{{"vlan", "pop", "IF", "--depth", "-1"}, 2, "-1"},
		{{"vlan", "pop", "IF", "--dir", "sideways"}, 2, "sideways"},
		{{"vlan", "push", "IF"}, 2, "--vid"},
		{{"vlan", "push", "NOIF", "--vid", "10"}, 1, nodev},
		{{"vlan", "push", "IF", "--vid", "0"}, 2, "VID 0"},
		{{"vlan", "push", "IF", "--vid", "4095"}, 2, "VID 4095"},
		{{"vlan", "push", "IF", "--vid", "abc"}, 2, "abc"},
		{{"vlan", "push", "IF", "--vid", "-5"}, 2, "-5"},
		{{"vlan", "push", "IF", "--vid", "10", "--pcp", "8"}, 2, "PCP 8"},
		{{"vlan", "push", "IF", "--vid", "10", "--pcp", "-1"}, 2, "-1"},
		{{"vlan", "push", "IF", "--vid", "10", "--proto", "0x9100"}, 2, "0x9100"},
		{{"vlan", "push", "IF", "--vid", "10", "--inner-vid", "4095"}, 2, "VID 4095"},
		{{"vlan", "push", "IF", "--vid", "10", "--inner-pcp", "3"}, 2, "--inner-pcp"},
		{{"vlan", "push", "IF", "--vid", "10", "--inner-dei"}, 2, "--inner-dei"},
		{{"vlan", "push", "IF", "--vid", "10", "--inner-vid", "20", "--inner-pcp", "9"}, 2, "PCP 9"},
		{{"vlan", "push", "IF", "--vid", "10", "--dir", "up"}, 2, "'up'"},
		{{"vlan", "rewrite", "IF"}, 2, "--from"},
		{{"vlan", "rewrite", "IF", "--from", "10"}, 2, "--to"},
		{{"vlan", "rewrite", "IF", "--from", "10", "--to", "10"}, 2, "--to 10"},
		{{"vlan", "rewrite", "IF", "--from", "10", "--to", "20", "--delete"}, 2, "--delete"},
		{{"vlan", "rewrite", "IF", "--from", "0", "--to", "5"}, 2, "VID 0"},
		{{"vlan", "rewrite", "IF", "--from", "10", "--to", "4095"}, 2, "VID 4095"},
		{{"vlan", "rewrite", "IF", "--from", "x", "--to", "5"}, 2, "'x'"},
		{{"vlan", "rewrite", "NOIF", "--from", "10", "--to", "20"}, 1, nodev},
		{{"vlan", "allow", "IF"}, 2, "--vid"},
		{{"vlan", "allow", "IF", "--vid", "10", "--clear"}, 2, "--clear"},
		{{"vlan", "allow", "IF", "--remove", "--clear"}, 2, "--clear"},
		{{"vlan", "allow", "IF", "--remove"}, 2, "--vid"},
		{{"vlan", "allow", "IF", "--vid", "4095"}, 2, "VID 4095"},
		{{"vlan", "allow", "IF", "--vid", "10", "abc"}, 2, "abc"},
		{{"vlan", "allow", "NOIF", "--vid", "10"}, 1, nodev},
		{{"vlan", "clear", "NOIF"}, 1, nodev},
		{{"vlan", "clear", "IF", "--dir", "x"}, 2, "'x'"},
		{{"vlan", "show", "NOIF"}, 1, nodev},
		{{"vlan", "show", "IF", "--dir", "ingress"}, 2, "--dir"},
		{{"vlan", "stats", "NOIF"}, 1, nodev},
		{{"vlan", "stats", "IF", "--interval", "0"}, 2, "--interval"},
		{{"vlan", "stats", "IF", "--interval", "-1"}, 2, "--interval"},
		{{"vlan", "stats", "IF", "--interval", "abc"}, 2, "--interval"},
		{{"vlan", "stats", "IF", "--interval", "1", "--count", "0"}, 2, "--count"},
		{{"vlan", "stats", "IF", "--count", "5"}, 2, "--count"},
		// ---- geneve ----
		{{"geneve"}, 2, "subcommand"},
		{{"geneve", "port"}, 2, "subcommand"},
		{{"geneve", "port", "add", "IF"}, 2, "port"},
		{{"geneve", "port", "add", "IF", "0"}, 2, "UDP port 0"},
		{{"geneve", "port", "add", "IF", "65536"}, 2, "UDP port 65536"},
		{{"geneve", "port", "add", "IF", "abc"}, 2, "abc"},
		{{"geneve", "port", "add", "IF", "-1"}, 2, "-1"},
		{{"geneve", "port", "add", "NOIF", "6081"}, 1, nodev},
		{{"geneve", "port", "del", "NOIF", "6081"}, 1, nodev},
		{{"geneve", "port", "del", "IF", "0"}, 2, "UDP port 0"},
		{{"geneve", "port", "list", "NOIF"}, 1, nodev},
		{{"geneve", "rule", "add", "IF", "--action", "pass"}, 2, "--vni"},
		{{"geneve", "rule", "add", "IF", "--vni", "1", "--default", "--action", "pass"}, 2, "--default"},
		{{"geneve", "rule", "add", "IF", "--vni", "16777216", "--action", "pass"}, 2, "16777216"},
		{{"geneve", "rule", "add", "IF", "--vni", "-1", "--action", "pass"}, 2, "-1"},
		{{"geneve", "rule", "add", "IF", "--vni", "1", "--action", "bounce"}, 2, "bounce"},
		{{"geneve", "rule", "add", "IF", "--vni", "1"}, 2, "--action"},
		{{"geneve", "rule", "add", "IF", "--vni", "1", "--action", "pass", "--queues", "4"}, 2, "--queues"},
		{{"geneve", "rule", "add", "IF", "--vni", "1", "--action", "drop", "--queues", "1"}, 2, "--queues"},
		{{"geneve", "rule", "add", "IF", "--vni", "1", "--action", "xsk", "--queues", "0"}, 2, "--queues"},
		{{"geneve", "rule", "add", "IF", "--vni", "1", "--action", "xsk", "--queues", "65"}, 2, "--queues"},
		{{"geneve", "rule", "add", "IF", "--vni", "1", "--action", "cpu", "--queues", "x"}, 2, "--queues"},
		{{"geneve", "rule", "add", "NOIF", "--vni", "1", "--action", "pass"}, 1, nodev},
		{{"geneve", "rule", "del", "IF"}, 2, "--vni"},
		{{"geneve", "rule", "del", "IF", "--vni", "x"}, 2, "'x'"},
		{{"geneve", "rule", "list", "NOIF"}, 1, nodev},
		{{"geneve", "option", "known", "IF"}, 2, "--class"},
		{{"geneve", "option", "known", "IF", "--class", "0x10000"}, 2, "0x10000"},
		{{"geneve", "option", "known", "IF", "--class", "zz"}, 2, "zz"},
		{{"geneve", "option", "list", "NOIF"}, 1, nodev},
		{{"geneve", "csum", "IF"}, 2, "state"},
		{{"geneve", "csum", "IF", "maybe"}, 2, "'maybe'"},
		{{"geneve", "csum", "NOIF", "on"}, 1, nodev},
		{{"geneve", "stats", "NOIF"}, 1, nodev},
		{{"geneve", "stats", "IF", "--interval", "0"}, 2, "--interval"},
		{{"geneve", "stats", "IF", "--count", "3"}, 2, "--count"},
		// ---- send ----
		{send({"--count", "-1"}), 2, "--count"},
		{send({"--count", "0"}), 2, "--count"},
		{send({"--count", "abc"}), 2, "--count"},
		{send({"--count", "010x"}), 2, "--count"},
		{send({"--size", "9000", "--count", "10"}), 2, "--size 9000 does not fit"},
		{send({"--size", "1515", "--count", "1"}), 2, "at most 1514"},
		{send({"--size", "1519", "--vlan", "10", "--count", "1"}), 2, "at most 1518"},
		{send({"--size", "1522", "--vlan", "10,20", "--count", "1"}), 2, "at most 1518"},
		{with_gnv({"--size", "1500", "--count", "1"}), 2, "at most 1464"},
		{send({"--size", "20"}), 2, "20"},
		{send({"--size", "-1"}), 2, "--size"},
		{send({"--mss", "0", "--gso", "tso", "--proto", "tcp"}), 2, "--mss"},
		{send({"--mss", "1000"}), 2, "--mss"},
		{send({"--mss", "70000", "--gso", "uso"}), 2, "--mss"},
		{send({"--gso", "bogus"}), 2, "--gso"},
		{send({"--gso", "tso"}), 2, "--proto"},
		{send({"--gso", "tso", "--proto", "tcp", "--size", "64000", "--mss", "1461", "--count", "1"}), 2,
		 "--mss 1461 does not fit"},
		{send({"--gso", "tso", "--proto", "tcp", "--size", "64000", "--vlan", "10,20", "--mss", "1460", "--count",
		       "1"}),
		 2, "at most 1456"},
		{send({"--sw-csum"}), 2, "--sw-csum"},
		{send({"--proto", "sctp"}), 2, "sctp"},
		{send({"--vlan", "5000"}), 2, "5000"},
		{send({"--vlan", "10,20,30"}), 2, "10,20,30"},
		{send({"--rate", "0"}), 2, "--rate"},
		{send({"--rate", "-5"}), 2, "--rate"},
		{send({"--duration", "0"}), 2, "--duration"},
		{send({"--duration", "nan"}), 2, "--duration"},
		{send({"--interval", "-1"}), 2, "--interval"},
		{send({"--queue", "0", "--queues", "2"}), 2, "--queues"},
		{send({"--queues", "0"}), 2, "--queues"},
		{send({"--queues", "65"}), 2, "--queues"},
		{send({"--queues", "2-1"}), 2, "--queues 2-1"},
		{send({"--queues", "0,,1"}), 2, "--queues 0,,1"},
		{send({"--queues", "0-64"}), 2, "outside 0..63"},
		{send({"--queues", "some"}), 2, "--queues some"},
		{send({"--ring-size", "100"}), 2, "--ring-size"},
		{send({"--ring-size", "0"}), 2, "--ring-size"},
		{send({"--batch", "0"}), 2, "--batch"},
		{send({"--batch", "2000"}), 2, "--batch"},
		{send({"--frame-size", "1000"}), 2, "--frame-size"},
		{send({"--xsk-mode", "turbo"}), 2, "turbo"},
		{send({"--src-port", "70000"}), 2, "--src-port"},
		{send({"--dst-port", "-1"}), 2, "--dst-port"},
		{{"send", "IF", "--dst-mac", "zz", "--src-ip", "198.18.0.1", "--dst-ip", "198.18.0.2"}, 2, "zz"},
		{{"send", "IF", "--dst-mac", "02:00:00:00:00:0b", "--src-ip", "1.2.3", "--dst-ip", "198.18.0.2"}, 2,
		 "1.2.3"},
		{{"send", "IF", "--src-ip", "198.18.0.1", "--dst-ip", "198.18.0.2"}, 2, "--dst-mac"},
		{{"send", "IF", "--dst-mac", "02:00:00:00:00:0b", "--src-ip", "198.18.0.1", "--dst-ip", "2001:db8::1"}, 2,
		 "--src-ip"},
		{send({"--geneve-vni", "16777216", "--outer-src-ip", "10.0.0.1", "--outer-dst-ip", "10.0.0.2"}), 2,
		 "16777216"},
		{send({"--geneve-port", "6081"}), 2, "--geneve-vni"},
		{{"send", "NOIF", "--dst-mac", "02:00:00:00:00:0b", "--src-ip", "198.18.0.1", "--dst-ip", "198.18.0.2",
		  "--count", "1"},
		 1, nodev},
		// ---- recv ----
		{{"recv", "NOIF"}, 1, nodev},
		{{"recv", "IF", "--idle", "-1"}, 2, "--idle"},
		{{"recv", "IF", "--geneve", "--keep-rx-vlan"}, 2, "--keep-rx-vlan"},
		{{"recv", "IF", "--idle", "0"}, 2, "--idle"},
		{{"recv", "IF", "--count", "0"}, 2, "--count"},
		{{"recv", "IF", "--count", "-1"}, 2, "--count"},
		{{"recv", "IF", "--filter-udp-port", "0"}, 2, "--filter-udp-port"},
		{{"recv", "IF", "--filter-udp-port", "65536"}, 2, "--filter-udp-port"},
		{{"recv", "IF", "--filter-vlan", "4095"}, 2, "--filter-vlan"},
		{{"recv", "IF", "--xdp-mode", "hw"}, 2, "hw"},
		{{"recv", "IF", "--multi-buffer", "maybe"}, 2, "--multi-buffer"},
		{{"recv", "IF", "--pcap-per-socket"}, 2, "--pcap"},
		{{"recv", "IF", "--vni", "100"}, 2, "--vni"},
		{{"recv", "IF", "--geneve", "--filter-udp-port", "53"}, 2, "--filter-udp-port"},
		{{"recv", "IF", "--geneve", "--queues", "65"}, 2, "--queues"},
		{{"recv", "IF", "--geneve", "--queues", "0-64"}, 2, "outside 0..63"},
		{{"recv", "IF", "--geneve", "--sockets", "0"}, 2, "--sockets"},
		{{"recv", "IF", "--geneve", "--sockets", "2", "--queues", "2"}, 2, "--sockets"},
		{{"recv", "IF", "--sockets", "2"}, 2, "--sockets needs --geneve"},
		{{"recv", "IF", "--queues", "1-x"}, 2, "--queues 1-x"},
		{{"recv", "IF", "--duration", "-3"}, 2, "--duration"},
		{{"recv", "IF", "--geneve"}, 1, "IF_A"},
		// ---- features ----
		{{"features"}, 2, "--stack"},
		{{"features", "NOIF"}, 1, nodev},
		{{"features", "IF", "--stack", "veth"}, 2, "--stack"},
		{{"features", "--stack", "veth", "--vlans", "3"}, 2, "--vlans"},
		{{"features", "--stack", "veth", "--mss", "0"}, 2, "--mss"},
		{{"features", "--stack", "veth", "--payload", "70000"}, 2, "--payload"},
		{{"features", "--stack", "veth", "--packet", "sctp"}, 2, "sctp"},
		{{"features", "--stack", "veth", "--encap", "gre"}, 2, "--encap"},
		{{"features", "--stack", "veth", "--kernel", "2.6"}, 2, "2.6"},
		{{"features", "--rx"}, 2, "--driver"},
		{{"features", "IF", "--rx", "--gso"}, 2, "--rx"},
		{{"features", "IF", "--rx", "--kernel", "5.4"}, 2, "5.4"},
		{{"features", "--rx", "--driver", "e1000"}, 2, "e1000"},
		{{"features", "--stack", "veth", "--driver", "igb"}, 2, "--driver"},
		{{"features", "NOIF", "--rx"}, 1, nodev},
		{send({"--kernel", "5.4"}), 2, "5.4"},
		{{"features", "--stack", "frob"}, 2, "frob"},
		// ---- bench: tools/bench, not a command (test_tools_bench.cpp) ----
		{{"bench"}, 2, "unknown command 'bench'"},
		{{"bench", "nope"}, 2, "unknown command 'bench'"},
	};
}

// The table runs in groups, one ctest each, so a slow guest (TCG in
// tools/vm-test: about 130 s for the whole table on 6.1) stays well inside
// the per-test limit: global options, attach/detach/status, vlan, geneve,
// send, recv, features and the rest.
// command -> group; a row naming none of these commands is "global"
const std::vector<std::pair<std::string, std::string>> kCommandGroups{
	{"attach", "attach"}, {"detach", "attach"}, {"status", "attach"}, {"vlan", "vlan"},
	{"geneve", "geneve"}, {"send", "send"},     {"recv", "recv"},	  {"features", "features"},
};

std::string group_of(const Row &row)
{
	for (const auto &a : row.args)
		for (const auto &[cmd, group] : kCommandGroups)
			if (a == cmd)
				return group;
	return "global";
}

// every group once, in table order, so no group_of result can be left out
const std::vector<std::string> kGroups = [] {
	std::vector<std::string> g{"global"};
	for (const auto &[cmd, group] : kCommandGroups)
		if (std::find(g.begin(), g.end(), group) == g.end())
			g.push_back(group);
	return g;
}();

TEST(CliInputTable, HasAHundredRowsAndEveryGroupHasSome)
{
	const auto rows = table();
	EXPECT_GE(rows.size(), 100u);
	for (const auto &g : kGroups)
		EXPECT_TRUE(std::any_of(rows.begin(), rows.end(), [&](const Row &r) { return group_of(r) == g; }))
			<< "no row in group " << g;
}

class CliInputGroup : public CliInput, public ::testing::WithParamInterface<std::string> {};

TEST_P(CliInputGroup, EveryBadInvocationIsOneLineAndLeavesNothing)
{
	std::vector<Row> rows;
	for (Row &r : table())
		if (group_of(r) == GetParam())
			rows.push_back(std::move(r));
	ASSERT_FALSE(rows.empty());
	ASSERT_EQ(leftovers(), "") << "the fresh testbed is not clean";
	const auto t0 = std::chrono::steady_clock::now();
	for (const Row &row : rows) {
		const auto av = argv(row);
		SCOPED_TRACE(join_cmd(av));
		CmdResult r = run_cmd(av, kTimeout);
		EXPECT_EQ(r.exit_code, row.exit_code) << r.describe();
		EXPECT_EQ(lines(r.err), 1u) << "one line on stderr: " << r.err;
		std::string needle = row.needle == "IF_A" ? tb_->if_a() : row.needle;
		EXPECT_NE(r.err.find(needle), std::string::npos) << "names '" << needle << "': " << r.err;
		EXPECT_EQ(leftovers(), "");
	}
	// how long the group takes is reported, not asserted
	const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	RecordProperty("rows", static_cast<int>(rows.size()));
	RecordProperty("seconds", std::to_string(secs));
}

INSTANTIATE_TEST_SUITE_P(ByCommand, CliInputGroup, ::testing::ValuesIn(kGroups),
			 [](const ::testing::TestParamInfo<std::string> &i) { return i.param; });

// --version names the libbpf and libxdp the tool runs with (the very file
// this test process maps: same loader, same paths), the running kernel and
// the kernel probes, each consistent with the release (Debian's kernels
// carry no backport of these three); text and JSON say the same.
// -p/--pretty is the -j/--json document indented (two spaces a level), the
// same bytes once the indentation is taken out; under --json an error is
// also one object on stdout, with the exit status, and the stderr line stays.
TEST(CliOutput, PrettyIsTheJsonIndentedAndErrorsAreObjects)
{
	const std::string tool = env_or_empty("XO_TOOL");
	ASSERT_FALSE(tool.empty()) << "XO_TOOL is not set (run through ctest)";
	const std::vector<std::string> args{"features", "--stack", "vlan:802.1ad/macvlan/veth", "--gso", "--vlans", "1"};
	std::vector<std::string> a{tool, "-j"}, b{tool, "-p"};
	a.insert(a.end(), args.begin(), args.end());
	b.insert(b.end(), args.begin(), args.end());
	CmdResult j = run_cmd(a, kTimeout), p = run_cmd(b, kTimeout);
	ASSERT_TRUE(j.ok()) << j.describe();
	ASSERT_TRUE(p.ok()) << p.describe();
	EXPECT_EQ(lines(j.out), 1u) << j.out;
	EXPECT_GT(lines(p.out), 20u) << p.out;
	// the indentation out: newlines and the spaces after them, ": " between
	// a key and its value, nothing inside strings
	std::string compact;
	bool str = false, esc = false;
	for (size_t i = 0; i < p.out.size(); i++) {
		const char c = p.out[i];
		if (str) {
			compact += c;
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				str = false;
			continue;
		}
		if (c == '"')
			str = true;
		if (c == '\n' && i + 1 < p.out.size()) {
			size_t k = i + 1;
			while (k < p.out.size() && p.out[k] == ' ')
				k++;
			EXPECT_EQ((k - i - 1) % 2, 0u) << "indented by two spaces a level: " << p.out.substr(i + 1, 40);
			i = k - 1;
			continue;
		}
		if (c == ' ' && i > 0 && p.out[i - 1] == ':')
			continue;
		compact += c;
	}
	EXPECT_EQ(compact, j.out);

	for (const char *flag : {"-j", "--json", "-p"}) {
		CmdResult e = run_cmd({tool, flag, "attach"}, kTimeout);
		EXPECT_EQ(e.exit_code, 2) << e.describe();
		EXPECT_EQ(lines(e.err), 1u) << e.err;
		const std::string msg = e.err.substr(std::string("offload-tool: ").size(),
						     e.err.size() - std::string("offload-tool: ").size() - 1);
		if (std::string(flag) == "-p")
			EXPECT_EQ(e.out, "{\n  \"error\": \"" + msg + "\",\n  \"exit_code\": 2\n}\n");
		else
			EXPECT_EQ(e.out, "{\"error\":\"" + msg + "\",\"exit_code\":2}\n");
	}
	// a runtime failure (exit 1) of a command, not of the parse
	CmdResult e = run_cmd({tool, "--json", "status", "xo-no-such-dev0"}, kTimeout);
	EXPECT_EQ(e.exit_code, 1) << e.describe();
	EXPECT_EQ(json_str(e.out, "error").empty(), false) << e.out;
	EXPECT_NE(e.out.find("\"exit_code\":1}"), std::string::npos) << e.out;
}

TEST(CliVersion, NamesTheLibrariesTheKernelAndItsProbes)
{
	const std::string tool = env_or_empty("XO_TOOL");
	ASSERT_FALSE(tool.empty()) << "XO_TOOL is not set (run through ctest)";
	utsname u{};
	ASSERT_EQ(uname(&u), 0);
	Dl_info info{};
	ASSERT_NE(dladdr(reinterpret_cast<const void *>(&libbpf_version_string), &info), 0);
	char real[PATH_MAX];
	ASSERT_NE(realpath(info.dli_fname, real), nullptr);
	const std::string libbpf_path = real;

	CmdResult t = run_cmd({tool, "--version"}, kTimeout);
	ASSERT_TRUE(t.ok()) << t.describe();
	EXPECT_EQ(t.out.rfind("offload-tool ", 0), 0u) << t.out;
	EXPECT_NE(t.out.find("\nlibbpf " + libbpf_path.substr(libbpf_path.find(".so.") + 4) + " (" + libbpf_path + ")\n"),
		  std::string::npos)
		<< "the libbpf this process maps is " << libbpf_path << ":\n" << t.out;
	EXPECT_TRUE(std::regex_search(t.out, std::regex("\nlibxdp 1\\.[0-9]+\\.[0-9]+ \\(/"))) << t.out;
	EXPECT_NE(t.out.find(std::string("\nkernel ") + u.release + "\n"), std::string::npos) << t.out;

	CmdResult j = run_cmd({tool, "--json", "--version"}, kTimeout);
	ASSERT_TRUE(j.ok()) << j.describe();
	EXPECT_EQ(lines(j.out), 1u) << j.out;
	EXPECT_EQ(json_str(j.out, "kernel"), u.release) << j.out;
	EXPECT_EQ(json_str(j.out, "libbpf_path"), libbpf_path) << j.out;
	EXPECT_NE(t.out.find("libxdp " + json_str(j.out, "libxdp") + " (" + json_str(j.out, "libxdp_path") + ")"),
		  std::string::npos)
		<< "text and JSON name the same libxdp:\n" << t.out << j.out;
	unsigned maj = 0, min = 0;
	ASSERT_EQ(std::sscanf(u.release, "%u.%u", &maj, &min), 2) << u.release;
	const auto at_least = [&](unsigned a, unsigned b) { return maj > a || (maj == a && min >= b); };
	struct Probe {
		const char *key, *text;
		bool expect;
	};
	for (const Probe &p : {Probe{"xdp_use_sg", "AF_XDP multi-buffer (XDP_USE_SG): ", at_least(6, 6)},
			       Probe{"xsk_tx_metadata", "AF_XDP TX metadata: ", at_least(6, 8)},
			       Probe{"udp_l4_gso", "UDP_L4 GSO (tun USO): ", at_least(6, 2)},
			       Probe{"tcx", "TCX (BPF links at tc ingress/egress; xoffload attaches through clsact): ",
				     at_least(6, 6)}}) {
		SCOPED_TRACE(p.key);
		const std::string want = std::string("\"") + p.key + "\":{\"present\":" + (p.expect ? "true" : "false") +
					 ",\"probed\":true";
		EXPECT_NE(j.out.find(want), std::string::npos) << "asked the kernel, and it answered as " << u.release
							       << " should: " << j.out;
		EXPECT_NE(t.out.find(std::string(p.text) + (p.expect ? "yes (" : "no (")), std::string::npos) << t.out;
	}
	EXPECT_NE(j.out.find(std::string("\"xdp_frags\":") + (at_least(5, 18) ? "true" : "false")), std::string::npos)
		<< j.out;
	// the dispatcher probe answers as root (what it answers is the kernel's
	// and the machine's: freplace is refused here, allowed on Debian's
	// kernels), and the text says what the JSON says
	const std::string fr_key = "\"freplace\":{\"present\":";
	const size_t fr = j.out.find(fr_key);
	ASSERT_NE(fr, std::string::npos) << j.out;
	const bool freplace = j.out.compare(fr + fr_key.size(), 4, "true") == 0;
	EXPECT_NE(j.out.find("\"probed\":true", fr), std::string::npos) << j.out;
	EXPECT_NE(t.out.find(std::string("freplace (libxdp's multiprog dispatcher can load): ") + (freplace ? "yes (" : "no (")),
		  std::string::npos)
		<< t.out << j.out;
}

// Deleting what is not there is a fact of the system, exit 1 with one line,
// for a VLAN rewrite as for a Geneve port; deleting what is there works.
TEST_F(CliInput, DeletingWhatIsNotThereIsExitOne)
{
	// the table's leftover check sees what an attach leaves
	ASSERT_TRUE(run_cmd(tool({"attach", tb_->if_a(), "vlan"}), kTimeout).ok());
	EXPECT_NE(leftovers().find("XDP program"), std::string::npos) << leftovers();
	ASSERT_TRUE(run_cmd(tool({"detach", tb_->if_a()}), kTimeout).ok());
	ASSERT_TRUE(run_cmd(tool({"attach", tb_->if_a(), "vlan", "--hook", "tc-ingress"}), kTimeout).ok());
	EXPECT_NE(leftovers().find("clsact"), std::string::npos) << leftovers();
	EXPECT_NE(leftovers().find("pins"), std::string::npos) << leftovers();
	CmdResult r = run_cmd(tool({"vlan", "rewrite", tb_->if_a(), "--from", "10", "--delete"}), kTimeout);
	EXPECT_EQ(r.exit_code, 1) << r.describe();
	EXPECT_EQ(lines(r.err), 1u) << r.err;
	EXPECT_NE(r.err.find("no rewrite of VID 10"), std::string::npos) << r.err;
	ASSERT_TRUE(run_cmd(tool({"vlan", "rewrite", tb_->if_a(), "--from", "10", "--to", "20"}), kTimeout).ok());
	r = run_cmd(tool({"vlan", "rewrite", tb_->if_a(), "--from", "10", "--delete"}), kTimeout);
	EXPECT_TRUE(r.ok()) << r.describe();
	r = run_cmd(tool({"vlan", "rewrite", tb_->if_a(), "--from", "10", "--delete"}), kTimeout);
	EXPECT_EQ(r.exit_code, 1) << "deleted twice: " << r.describe();
	r = run_cmd(tool({"vlan", "rewrite", tb_->if_a(), "--from", "10", "--delete", "--dir", "egress"}), kTimeout);
	EXPECT_EQ(r.exit_code, 1) << "the other direction has none either: " << r.describe();
	ASSERT_TRUE(run_cmd(tool({"detach", tb_->if_a()}), kTimeout).ok());

	ASSERT_TRUE(run_cmd(tool({"geneve", "port", "add", tb_->if_a(), "6081"}), kTimeout).ok());
	ASSERT_TRUE(run_cmd(tool({"geneve", "port", "del", tb_->if_a(), "6081"}), kTimeout).ok());
	r = run_cmd(tool({"geneve", "port", "del", tb_->if_a(), "6081"}), kTimeout);
	EXPECT_EQ(r.exit_code, 1) << r.describe();
	EXPECT_EQ(lines(r.err), 1u) << r.err;
	EXPECT_NE(r.err.find("not registered"), std::string::npos) << r.err;
	(void)run_cmd(tool({"detach", tb_->if_a()}), kTimeout);
	(void)run_cmd({"rm", "-rf", "/sys/fs/bpf/xoffload/" + tb_->if_a() + "@" + tb_->ns_a()}, 10);
	EXPECT_EQ(leftovers(), "");
}

// Frames that just fit are sent and reach the wire (the device's tx_dropped
// stays 0); one byte more is refused with what fits.
TEST_F(CliInput, SendsWhatFitsTheMtuAndRefusesOneByteMore)
{
	struct Case {
		std::string size, vlan;
	};
	for (const Case &c : {Case{"1514", ""}, Case{"1518", "10"}, Case{"1518", "10,20"}}) {
		SCOPED_TRACE(c.size + " bytes, tags " + c.vlan);
		std::vector<std::string> extra{"--size", c.size, "--count", "20"};
		if (!c.vlan.empty())
			extra.insert(extra.end(), {"--vlan", c.vlan});
		CmdResult r = run_cmd(tool(send_args(extra)), kTimeout);
		ASSERT_TRUE(r.ok()) << r.describe();
		EXPECT_EQ(json_u64(r.out, "completed"), 20u) << r.out;
		EXPECT_EQ(json_u64(r.out, "tx_dropped"), 0u) << r.out;
		extra[1] = std::to_string(std::stoul(c.size) + 1);
		r = run_cmd(tool(send_args(extra)), kTimeout);
		EXPECT_EQ(r.exit_code, 2) << r.describe();
		EXPECT_EQ(lines(r.err), 1u) << r.err;
		EXPECT_NE(r.err.find("at most " + c.size), std::string::npos) << r.err;
		// refused before anything was sent: stdout holds the --json error object only
		EXPECT_EQ(r.out, "{\"error\":\"" + r.err.substr(14, r.err.size() - 15) + "\",\"exit_code\":2}\n")
			<< "refused before anything was sent";
	}
}

// The issue's case: TSO of 64000 bytes under two tags, and the same in
// Geneve, with the default mss. Every segment must leave the device (the
// 1522-byte frames of a tag-blind mss were dropped by veth, 86 of 88).
TEST_F(CliInput, DefaultMssFitsWithTagsAndGeneve)
{
	const std::vector<std::string> tso{"--proto", "tcp", "--gso", "tso", "--size", "64000", "--vlan", "10,20",
					   "--count", "3"};
	std::vector<std::string> in_geneve = tso;
	in_geneve.insert(in_geneve.end(),
			 {"--geneve-vni", "7", "--outer-src-ip", "10.0.0.1", "--outer-dst-ip", "10.0.0.2"});
	for (const auto &extra : {tso, in_geneve}) {
		SCOPED_TRACE(join_cmd(extra));
		CmdResult r = run_cmd(tool(send_args(extra)), kTimeout);
		ASSERT_TRUE(r.ok()) << r.describe();
		auto completed = json_u64(r.out, "completed");
		ASSERT_TRUE(completed) << r.out;
		EXPECT_GE(*completed, 3u * 44) << "64000 bytes in segments of at most ~1456: " << r.out;
		EXPECT_EQ(json_u64(r.out, "tx_dropped"), 0u) << r.out;
	}
}

// A frame the device takes but its peer cannot (a veth peer with a smaller
// MTU drops it, counted as the sender's tx_dropped): send reports the
// delta, says so in one line and exits 1 instead of claiming the frames.
TEST_F(CliInput, DeviceTxDropsAreReportedAndFail)
{
	CmdResult m = run_cmd({"ip", "-n", tb_->ns_b(), "link", "set", "dev", tb_->if_b(), "mtu", "1000"}, 10);
	ASSERT_TRUE(m.ok()) << m.describe();
	CmdResult r = run_cmd(tool(send_args({"--size", "1400", "--count", "10"})), kTimeout);
	EXPECT_EQ(r.exit_code, 1) << r.describe();
	EXPECT_EQ(lines(r.err), 1u) << r.err;
	EXPECT_NE(r.err.find("tx_dropped of " + tb_->if_a() + " rose by 10"), std::string::npos) << r.err;
	EXPECT_EQ(json_u64(r.out, "tx_dropped"), 10u) << r.out;
	EXPECT_EQ(json_u64(r.out, "completed"), 10u) << r.out;
	// text output says it too
	r = run_cmd(tool(send_args({"--size", "1400", "--count", "4"}), false), kTimeout);
	EXPECT_EQ(r.exit_code, 1) << r.describe();
	EXPECT_NE(r.out.find("tx_dropped +4"), std::string::npos) << r.out;
	// within the peer's MTU nothing is dropped
	r = run_cmd(tool(send_args({"--size", "1000", "--count", "10"})), kTimeout);
	EXPECT_TRUE(r.ok()) << r.describe();
	EXPECT_EQ(json_u64(r.out, "tx_dropped"), 0u) << r.out;
}

// recv --geneve --queues 2: two sockets on one queue share one fill ring,
// and the kernel reports that ring's fill_ring_empty to both. With rings of
// 64 and 64 frames, a burst finds the ring empty; the summary counts the
// ring once: the total is the owning socket's count, the other socket
// names the ring it uses and carries no count of its own.
TEST_F(CliInput, SharedFillRingIsCountedOnce)
{
	const std::string &nsb = tb_->ns_b(), &ifb = tb_->if_b();
	auto b = [&](std::vector<std::string> args) {
		std::vector<std::string> v{tool_, "--json", "-n", nsb};
		v.insert(v.end(), args.begin(), args.end());
		return v;
	};
	ASSERT_TRUE(run_cmd(b({"attach", ifb, "geneve"}), kTimeout).ok());
	ASSERT_TRUE(run_cmd(b({"geneve", "port", "add", ifb, "6081"}), kTimeout).ok());
	ASSERT_TRUE(run_cmd(b({"geneve", "rule", "add", ifb, "--vni", "7", "--action", "xsk", "--queues", "2"}),
			    kTimeout).ok());
	BackgroundCmd rx(b({"recv", ifb, "--geneve", "--queues", "2", "--ring-size", "64", "--frames", "64", "--idle", quiet_seconds(0.4),
			    "--duration", "20", "--interval", "0"}));
	ASSERT_TRUE(rx.wait_for_output("\"type\":\"start\"", 15)) << "recv --geneve never started";
	CmdResult tx = run_cmd(tool(send_args({"--geneve-vni", "7", "--outer-src-ip", "10.0.0.1", "--outer-dst-ip",
					       "10.0.0.2", "--count", "200000", "--size", "64"})),
			       60);
	// the peer's tiny rings overflow by design: veth counts what it could
	// not hand over in tx_dropped, and send says so with exit 1
	EXPECT_TRUE(tx.ok() || (tx.exit_code == 1 && tx.err.find("tx_dropped of") != std::string::npos))
		<< tx.describe();
	CmdResult r = rx.wait(30);
	(void)run_cmd(b({"detach", ifb}), kTimeout);
	(void)run_cmd({"rm", "-rf", "/sys/fs/bpf/xoffload/" + ifb + "@" + nsb}, 10);
	ASSERT_TRUE(r.ok()) << r.describe();
	const size_t at = r.out.rfind("{\"type\":\"summary\"");
	ASSERT_NE(at, std::string::npos) << r.out;
	const std::string sum = r.out.substr(at);
	const size_t drops = sum.find("\"drops\":{"), socks = sum.find("\"sockets\":[");
	ASSERT_NE(drops, std::string::npos) << sum;
	ASSERT_NE(socks, std::string::npos) << sum;
	auto total = json_u64(sum.substr(drops), "fill_ring_empty");
	ASSERT_TRUE(total) << sum;
	// the socket entries: [{...socket 0...},{...socket 1...}]
	const std::string list = sum.substr(socks, sum.find(']', socks) - socks);
	const size_t second = list.find("},{");
	ASSERT_NE(second, std::string::npos) << list;
	const std::string s0 = list.substr(0, second), s1 = list.substr(second);
	EXPECT_NE(s0.find("\"fill_ring\":0"), std::string::npos) << s0;
	EXPECT_NE(s1.find("\"fill_ring\":0"), std::string::npos) << "socket 1 uses socket 0's ring: " << s1;
	EXPECT_EQ(s1.find("fill_ring_empty"), std::string::npos) << "counted once, on the ring's owner: " << s1;
	auto own = json_u64(s0, "fill_ring_empty");
	ASSERT_TRUE(own) << s0;
	EXPECT_EQ(*total, *own) << "the total is the ring's own count: " << sum;
	if (*own == 0)
		GTEST_SKIP() << "the fill ring never ran empty in this run (the receiver kept up), so once and twice "
				"could not be told apart; layout checked";
}

} // namespace
} // namespace xoffload::test
