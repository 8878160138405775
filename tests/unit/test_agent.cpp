// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The agent's pure parts: link events coalesce per interface within the
// debounce window and never wait past its bound; the /metrics address is
// parsed and only loopback is served without --metrics-public; the health
// families are in the Prometheus text format.
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "xoffload/agent/agent.hpp"

namespace xoffload::agent {
namespace {

using std::chrono::milliseconds;

TEST(AgentDebounce, EventsOfOneInterfaceCoalesceIntoOneReplan)
{
	Debouncer d(milliseconds(150), milliseconds(500));
	const auto t0 = Clock::time_point{} + std::chrono::seconds(100);
	EXPECT_FALSE(d.next()) << "nothing pending yet";
	d.touch("eth1", t0);
	d.touch("eth1", t0 + milliseconds(50));	// delete + add of a re-created veth
	d.touch("eth1", t0 + milliseconds(100));	// its up
	ASSERT_TRUE(d.next());
	EXPECT_EQ(*d.next(), t0 + milliseconds(250)) << "each event pushes the re-plan back by the quiet time";
	EXPECT_TRUE(d.take_due(t0 + milliseconds(249)).empty()) << "due before its time";
	auto due = d.take_due(t0 + milliseconds(250));
	ASSERT_EQ(due.size(), 1u);
	EXPECT_EQ(due[0], "eth1");
	EXPECT_FALSE(d.pending("eth1")) << "taken keys are forgotten";
	EXPECT_FALSE(d.next());
}

TEST(AgentDebounce, AFlappingLinkIsStillReplannedWithinTheBound)
{
	Debouncer d(milliseconds(150), milliseconds(500));
	const auto t0 = Clock::time_point{} + std::chrono::seconds(100);
	for (int ms = 0; ms <= 1000; ms += 100)	// an event every 100 ms, longer than the bound
		d.touch("eth1", t0 + milliseconds(ms));
	ASSERT_TRUE(d.next());
	EXPECT_EQ(*d.next(), t0 + milliseconds(500)) << "never later than max_wait after the first event";
}

TEST(AgentDebounce, InterfacesAreDebouncedApartAndForgetDropsOne)
{
	Debouncer d(milliseconds(150), milliseconds(500));
	const auto t0 = Clock::time_point{} + std::chrono::seconds(100);
	d.touch("b", t0);
	d.touch("a", t0 + milliseconds(100));
	d.touch("gone", t0);
	d.forget("gone");	// renamed or deleted before its turn
	EXPECT_FALSE(d.pending("gone"));
	EXPECT_EQ(*d.next(), t0 + milliseconds(150)) << "the earliest key";
	auto first = d.take_due(t0 + milliseconds(150));
	ASSERT_EQ(first.size(), 1u);
	EXPECT_EQ(first[0], "b");
	auto second = d.take_due(t0 + milliseconds(400));
	ASSERT_EQ(second.size(), 1u);
	EXPECT_EQ(second[0], "a");
}

struct ListenRow {
	const char *name, *spec;
	bool ok;
	const char *host;
	uint16_t port;
	bool loopback;
};

class AgentListen : public testing::TestWithParam<ListenRow> {};

TEST_P(AgentListen, ParsesNumericAddressesOnly)
{
	const ListenRow &r = GetParam();
	auto a = parse_listen(r.spec);
	ASSERT_EQ(a.ok(), r.ok) << r.spec << ": " << (a ? std::string("parsed") : a.error().msg);
	if (!r.ok) {
		EXPECT_EQ(a.error().kind, ErrorKind::usage);
		EXPECT_NE(a.error().msg.find(std::string("'") + r.spec + "'"), std::string::npos)
			<< "the error names the address: " << a.error().msg;
		EXPECT_EQ(a.error().msg.find('\n'), std::string::npos) << "one line";
		return;
	}
	EXPECT_EQ(a->host, r.host);
	EXPECT_EQ(a->port, r.port);
	EXPECT_EQ(a->loopback, r.loopback);
}

const ListenRow kListenRows[] = {
	{"Default", "127.0.0.1:9796", true, "127.0.0.1", 9796, true},
	{"Loopback8", "127.1.2.3:80", true, "127.1.2.3", 80, true},
	{"Any4", "0.0.0.0:9796", true, "0.0.0.0", 9796, false},
	{"Nic4", "192.0.2.1:9796", true, "192.0.2.1", 9796, false},
	{"Loopback6", "[::1]:9796", true, "::1", 9796, true},
	{"Any6", "[::]:9796", true, "::", 9796, false},
	{"MappedLoopbackIsNotLoopback6", "[::ffff:127.0.0.1]:1", true, "::ffff:127.0.0.1", 1, false},
	{"NoPort", "127.0.0.1", false, "", 0, false},
	{"EmptyPort", "127.0.0.1:", false, "", 0, false},
	{"PortZero", "127.0.0.1:0", false, "", 0, false},
	{"PortTooBig", "127.0.0.1:65536", false, "", 0, false},
	{"PortSigned", "127.0.0.1:+80", false, "", 0, false},
	{"Name", "localhost:9796", false, "", 0, false},
	{"Ipv6NoBrackets", "::1:9796", false, "", 0, false},
	{"Ipv6NoClose", "[::1:9796", false, "", 0, false},
	{"Ipv6NoPort", "[::1]", false, "", 0, false},
	{"BadOctet", "127.0.0.256:80", false, "", 0, false},
	{"Empty", "", false, "", 0, false},
};

INSTANTIATE_TEST_SUITE_P(Rows, AgentListen, testing::ValuesIn(kListenRows),
			 [](const testing::TestParamInfo<ListenRow> &i) { return std::string(i.param.name); });

TEST(AgentListenPolicy, OnlyLoopbackWithoutMetricsPublic)
{
	for (const char *spec : {"127.0.0.1:9796", "[::1]:9796"}) {
		auto a = parse_listen(spec);
		ASSERT_TRUE(a) << spec;
		EXPECT_TRUE(check_listen(*a, false)) << spec << " is loopback";
	}
	for (const char *spec : {"0.0.0.0:9796", "[::]:9796", "192.0.2.1:9796"}) {
		auto a = parse_listen(spec);
		ASSERT_TRUE(a) << spec;
		auto s = check_listen(*a, false);
		ASSERT_FALSE(s) << spec << " was accepted without --metrics-public";
		EXPECT_EQ(s.error().kind, ErrorKind::usage);
		EXPECT_NE(s.error().msg.find("--metrics-public"), std::string::npos) << s.error().msg;
		EXPECT_TRUE(check_listen(*a, true)) << spec << " with --metrics-public";
	}
}

TEST(AgentHealth, RendersEveryFamilyOnceWithHelpAndType)
{
	Health h;
	h.last_apply_ok = false;
	h.last_apply_time = 1700000000.5;
	h.start_time = 1700000000;
	h.applies = 2;
	h.reconciles = 7;
	h.errors = 1;
	h.reloads = 1;
	h.reloads_refused = 3;
	h.managed = {"eth1", "we\"ird"};
	h.config_file = "/etc/xoffload/xoffload.toml";
	const std::string text = render_health(h);

	std::set<std::string> helped, typed;
	std::istringstream in(text);
	std::string line, family;
	while (std::getline(in, line)) {
		ASSERT_FALSE(line.empty()) << "no blank line in the exposition";
		if (line.rfind("# HELP ", 0) == 0) {
			family = line.substr(7, line.find(' ', 7) - 7);
			EXPECT_TRUE(helped.insert(family).second) << family << " has two # HELP";
			continue;
		}
		if (line.rfind("# TYPE ", 0) == 0) {
			const std::string name = line.substr(7, line.find(' ', 7) - 7);
			EXPECT_EQ(name, family) << "# TYPE right after its # HELP";
			EXPECT_TRUE(typed.insert(name).second) << name << " has two # TYPE";
			const std::string type = line.substr(line.rfind(' ') + 1);
			EXPECT_TRUE(type == "counter" || type == "gauge") << line;
			if (type == "counter") {
				EXPECT_EQ(name.substr(name.size() - 6), "_total") << "a counter's name ends in _total";
			}
			continue;
		}
		EXPECT_EQ(line.rfind(family, 0), 0u) << "a sample of another family than the last # HELP: " << line;
	}
	for (const char *f : {"xoffload_agent_up", "xoffload_agent_last_apply_success", "xoffload_agent_reconciles_total",
			      "xoffload_agent_errors_total", "xoffload_agent_reloads_total",
			      "xoffload_agent_managed_interface"})
		EXPECT_TRUE(typed.count(f)) << f << " missing";
	EXPECT_NE(text.find("xoffload_agent_last_apply_success 0\n"), std::string::npos) << text;
	EXPECT_NE(text.find("xoffload_agent_reconciles_total 7\n"), std::string::npos);
	EXPECT_NE(text.find("xoffload_agent_reloads_total{result=\"refused\"} 3\n"), std::string::npos);
	EXPECT_NE(text.find("xoffload_agent_managed_interface{ifname=\"we\\\"ird\"} 1\n"), std::string::npos)
		<< "label values escaped";
	EXPECT_NE(text.find("xoffload_agent_last_apply_time_seconds 1700000000\n"), std::string::npos)
		<< "unix time in whole seconds, not 1.7e+09";
}

} // namespace
} // namespace xoffload::agent
