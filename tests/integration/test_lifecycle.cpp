// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Process and state lifecycle: recv/send killed by SIGKILL or SIGHUP leave
// nothing the next command cannot clean; pins follow the device (ifindex +
// netns), not its name, across renames and a recreated netns; orphaned pin
// directories listed and purged; recv exits when its device goes away.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include "testbed.hpp"

namespace xoffload::test {
namespace {

constexpr double kTimeout = 30;
const std::string kPinRoot = "/sys/fs/bpf/xoffload/";

bool exists(const std::string &path)
{
	struct stat st {};
	return ::stat(path.c_str(), &st) == 0;
}

size_t lines(const std::string &s)
{
	return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

bool xdp_attached(const std::string &ns, const std::string &ifname)
{
	CmdResult r = run_cmd({"ip", "-n", ns, "link", "show", "dev", ifname}, 10);
	return r.out.find("prog/xdp") != std::string::npos || r.out.find("xdpgeneric") != std::string::npos;
}

// Any TC filter at either clsact direction.
bool tc_filters(const std::string &ns, const std::string &ifname)
{
	for (const char *dir : {"ingress", "egress"}) {
		CmdResult r = run_cmd({"tc", "-n", ns, "filter", "show", "dev", ifname, dir}, 10);
		if (!r.out.empty())
			return true;
	}
	return false;
}

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0)
{
	return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string tool_path()
{
	return env_or_empty("XO_TOOL");
}

std::vector<std::string> tool_argv(const std::string &ns, std::vector<std::string> args, bool json = false)
{
	std::vector<std::string> v{tool_path()};
	if (json)
		v.push_back("--json");
	if (!ns.empty())
		v.insert(v.end(), {"-n", ns});
	v.insert(v.end(), args.begin(), args.end());
	return v;
}

CmdResult tool(const std::string &ns, std::vector<std::string> args, bool json = false)
{
	return run_cmd(tool_argv(ns, std::move(args), json), kTimeout);
}

// A network namespace of the test's own, deleted (with what is in it and
// our pins made for it) when this goes out of scope.
class OwnNetns {
public:
	explicit OwnNetns(const std::string &tag)
	    : name_("xo-lc" + tag + "-" + std::to_string(::getpid()))
	{
		ok_ = run_cmd({"ip", "netns", "add", name_}, 10).ok();
	}
	~OwnNetns()
	{
		(void)run_cmd({"ip", "netns", "del", name_}, 10);
		(void)run_cmd({"sh", "-c", "rm -rf " + kPinRoot + "*@" + name_}, 10);
	}
	bool ok() const { return ok_; }
	const std::string &name() const { return name_; }
	// Recreates the namespace under the same name (a new one).
	bool recreate()
	{
		return run_cmd({"ip", "netns", "del", name_}, 10).ok() && run_cmd({"ip", "netns", "add", name_}, 10).ok();
	}
	bool ip(std::vector<std::string> args) const
	{
		std::vector<std::string> v{"ip", "-n", name_};
		v.insert(v.end(), args.begin(), args.end());
		CmdResult r = run_cmd(v, 10);
		EXPECT_TRUE(r.ok()) << join_cmd(v) << ": " << r.describe();
		return r.ok();
	}
	// A veth pair IFNAME/IFNAMEp, up (dummy is not built everywhere).
	bool link(const std::string &ifname) const
	{
		return ip({"link", "add", ifname, "type", "veth", "peer", "name", ifname + "p"}) &&
		       ip({"link", "set", "dev", ifname + "p", "up"}) && ip({"link", "set", "dev", ifname, "up"});
	}

private:
	std::string name_;
	bool ok_ = false;
};

class Lifecycle : public TestbedTest {
protected:
	std::string pins_b(const std::string &ifname) const { return kPinRoot + ifname + "@" + tb_->ns_b(); }
	std::vector<std::string> recv_b(std::vector<std::string> extra) const
	{
		std::vector<std::string> a{"recv", tb_->if_b(), "--interval", "0"};
		a.insert(a.end(), extra.begin(), extra.end());
		return tool_argv(tb_->ns_b(), a, true);
	}
	// Nothing of ours on B: no XDP program, no TC filter, no pins.
	void expect_clean_b(const std::string &where) const
	{
		EXPECT_FALSE(xdp_attached(tb_->ns_b(), tb_->if_b())) << where << ": an XDP program is left";
		EXPECT_FALSE(tc_filters(tb_->ns_b(), tb_->if_b())) << where << ": a TC filter is left";
		EXPECT_FALSE(exists(pins_b(tb_->if_b()))) << where << ": pins left in " << pins_b(tb_->if_b());
	}
};

// SIGHUP (a dropped ssh session) ends recv as Ctrl-C does: summary, exit 0,
// xdp_xsk detached. SIGKILL leaves xdp_xsk behind; `status` calls it stale,
// and both `detach` and the next `recv` recognise and remove it, saying so
// in one line.
TEST_F(Lifecycle, KilledRecvIsRecoveredByDetachAndTheNextRecv)
{
	{
		BackgroundCmd rx(recv_b({"--duration", "30"}));
		ASSERT_TRUE(rx.wait_for_output("\"type\":\"start\"", 20)) << "recv never started";
		ASSERT_TRUE(rx.signal(SIGHUP));
		CmdResult r = rx.wait(10);
		EXPECT_EQ(r.exit_code, 0) << "SIGHUP: " << r.describe();
		EXPECT_NE(r.out.find("\"interrupted\":true"), std::string::npos) << r.out;
		expect_clean_b("after SIGHUP");
	}
	for (const char *recovery : {"detach", "recv"}) {
		SCOPED_TRACE(std::string("SIGKILL, then ") + recovery);
		BackgroundCmd rx(recv_b({"--duration", "30"}));
		ASSERT_TRUE(rx.wait_for_output("\"type\":\"start\"", 20)) << "recv never started";
		ASSERT_TRUE(rx.signal(SIGKILL));
		CmdResult k = rx.wait(10);
		EXPECT_EQ(k.signal, SIGKILL) << k.describe();
		// the precondition the recovery is for: the kernel kept it attached
		ASSERT_TRUE(xdp_attached(tb_->ns_b(), tb_->if_b())) << "xdp_xsk not left behind by SIGKILL";
		CmdResult st = tool(tb_->ns_b(), {"status", tb_->if_b()});
		EXPECT_NE(st.out.find("stale"), std::string::npos) << st.out;
		CmdResult r = std::string(recovery) == "detach" ? tool(tb_->ns_b(), {"detach", tb_->if_b()})
							       : run_cmd(recv_b({"--duration", "1"}), kTimeout);
		EXPECT_EQ(r.exit_code, 0) << r.describe();
		EXPECT_EQ(r.err.rfind("xoffload: removed xdp_xsk (prog id ", 0), 0u) << r.err;
		EXPECT_NE(r.err.find("its recv is gone"), std::string::npos) << r.err;
		// one line for it (recv may add the one saying it runs as a single program)
		size_t removed = 0;
		for (size_t at = 0; (at = r.err.find("removed", at)) != std::string::npos; at++)
			removed++;
		EXPECT_EQ(removed, 1u) << r.err;
		if (std::string(recovery) == "detach") {
			EXPECT_EQ(lines(r.err), 1u) << r.err;
		}
		expect_clean_b(std::string("after ") + recovery);
		// nothing left to recover: detach says so
		CmdResult again = tool(tb_->ns_b(), {"detach", tb_->if_b()});
		EXPECT_EQ(again.exit_code, 1) << again.describe();
		EXPECT_NE(again.err.find("nothing of xoffload is attached"), std::string::npos) << again.err;
	}
}

// send holds only sockets: killed by SIGKILL or SIGHUP it leaves nothing, and
// a recv on the same interface starts at once.
TEST_F(Lifecycle, KilledSendLeavesNothing)
{
	for (int sig : {SIGKILL, SIGHUP}) {
		SCOPED_TRACE(sig == SIGKILL ? "SIGKILL" : "SIGHUP");
		BackgroundCmd tx(tool_argv(tb_->ns_a(),
					   {"send", tb_->if_a(), "--dst-mac", "02:00:00:00:00:0b", "--src-ip", "198.18.0.1",
					    "--dst-ip", "198.18.0.2", "--rate", "1000", "--duration", "30", "--interval", "0"},
					   true));
		ASSERT_TRUE(tx.started());
		std::this_thread::sleep_for(std::chrono::milliseconds(700));
		ASSERT_TRUE(tx.signal(sig));
		CmdResult t = tx.wait(10);
		if (sig == SIGHUP)
			EXPECT_EQ(t.exit_code, 0) << t.describe();
		else
			EXPECT_EQ(t.signal, SIGKILL) << t.describe();
		EXPECT_FALSE(xdp_attached(tb_->ns_a(), tb_->if_a()));
		EXPECT_FALSE(tc_filters(tb_->ns_a(), tb_->if_a()));
		EXPECT_FALSE(exists(kPinRoot + tb_->if_a() + "@" + tb_->ns_a()));
		CmdResult r = run_cmd(tool_argv(tb_->ns_a(), {"recv", tb_->if_a(), "--duration", "1", "--interval", "0"}, true),
				      kTimeout);
		EXPECT_EQ(r.exit_code, 0) << r.describe();
		EXPECT_EQ(r.err.find("removed"), std::string::npos) << r.err;
		EXPECT_FALSE(xdp_attached(tb_->ns_a(), tb_->if_a()));
		CmdResult d = tool(tb_->ns_a(), {"detach", tb_->if_a()});
		EXPECT_EQ(d.exit_code, 1) << d.describe();
		EXPECT_NE(d.err.find("nothing of xoffload is attached"), std::string::npos) << d.err;
	}
}

// recv --geneve killed by SIGKILL or SIGHUP: its sockets leave xdp_geneve's
// XSKMAP with the process, so the next recv --geneve takes the slots; detach
// then leaves nothing.
TEST_F(Lifecycle, KilledRecvGeneveLeavesNothing)
{
	const std::string ifb = tb_->if_b();
	CmdResult a = tool(tb_->ns_b(), {"attach", ifb, "geneve"});
	ASSERT_EQ(a.exit_code, 0) << a.describe();
	CmdResult rule = tool(tb_->ns_b(), {"geneve", "rule", "add", ifb, "--vni", "200", "--action", "xsk"});
	ASSERT_EQ(rule.exit_code, 0) << rule.describe();
	for (int sig : {SIGKILL, SIGHUP}) {
		SCOPED_TRACE(sig == SIGKILL ? "SIGKILL" : "SIGHUP");
		BackgroundCmd rx(recv_b({"--geneve", "--duration", "30"}));
		ASSERT_TRUE(rx.wait_for_output("\"type\":\"start\"", 20)) << "recv --geneve never started";
		ASSERT_TRUE(rx.signal(sig));
		CmdResult k = rx.wait(10);
		if (sig == SIGHUP)
			EXPECT_EQ(k.exit_code, 0) << k.describe();
		else
			EXPECT_EQ(k.signal, SIGKILL) << k.describe();
		CmdResult r = run_cmd(recv_b({"--geneve", "--duration", "1"}), kTimeout);
		EXPECT_EQ(r.exit_code, 0) << r.describe();
	}
	CmdResult d = tool(tb_->ns_b(), {"detach", ifb});
	EXPECT_EQ(d.exit_code, 0) << d.describe();
	expect_clean_b("after detach");
}

// Renamed while attached: show, stats, attach and detach under the new name
// find the pins (moved there, one line), and detach leaves no directory
// under either name.
TEST_F(Lifecycle, RenamedInterfaceKeepsItsPins)
{
	const std::string ns = tb_->ns_b(), old_name = tb_->if_b(), new_name = "xo-renamed";
	CmdResult a = tool(ns, {"attach", old_name, "vlan"});
	ASSERT_EQ(a.exit_code, 0) << a.describe();
	ASSERT_EQ(tool(ns, {"vlan", "push", old_name, "--vid", "42"}).exit_code, 0);
	for (auto args : std::vector<std::vector<std::string>>{{"link", "set", "dev", old_name, "down"},
								{"link", "set", "dev", old_name, "name", new_name},
								{"link", "set", "dev", new_name, "up"}}) {
		args.insert(args.begin(), {"ip", "-n", ns});
		CmdResult r = run_cmd(args, 10);
		ASSERT_TRUE(r.ok()) << join_cmd(args) << ": " << r.describe();
	}
	CmdResult show = tool(ns, {"vlan", "show", new_name});
	EXPECT_EQ(show.exit_code, 0) << show.describe();
	EXPECT_NE(show.out.find("42"), std::string::npos) << show.out;
	EXPECT_NE(show.err.find("moved from " + pins_b(old_name)), std::string::npos) << show.err;
	EXPECT_EQ(lines(show.err), 1u) << show.err;
	EXPECT_TRUE(exists(pins_b(new_name)));
	EXPECT_FALSE(exists(pins_b(old_name)));
	CmdResult st = tool(ns, {"status", new_name});
	EXPECT_NE(st.out.find("maps pinned in " + pins_b(new_name)), std::string::npos) << st.out;
	EXPECT_EQ(tool(ns, {"vlan", "stats", new_name}).exit_code, 0);
	CmdResult again = tool(ns, {"attach", new_name, "vlan"});
	EXPECT_EQ(again.exit_code, 1) << again.describe();
	EXPECT_NE(again.err.find("already attached"), std::string::npos) << again.err;
	CmdResult d = tool(ns, {"detach", new_name});
	EXPECT_EQ(d.exit_code, 0) << d.describe();
	EXPECT_FALSE(xdp_attached(ns, new_name));
	EXPECT_FALSE(exists(pins_b(new_name)));
	EXPECT_FALSE(exists(pins_b(old_name)));
}

// Root and bpffs, or skip: the tests below make their own namespaces.
bool can_run(std::string *why)
{
	if (::geteuid() != 0) {
		*why = "needs root (network namespaces, bpffs)";
		return false;
	}
	if (tool_path().empty()) {
		*why = "XO_TOOL unset (run through ctest)";
		return false;
	}
	if (!exists(kPinRoot.substr(0, kPinRoot.size() - 1)) && !exists("/sys/fs/bpf")) {
		*why = "needs bpffs on /sys/fs/bpf";
		return false;
	}
	return true;
}

// `ip netns del` + a new netns and device of the same names: the old pins
// are orphans (status says why), the first command on the new device
// removes them (one line) and it starts with the default policy.
TEST(LifecycleNetns, RecreatedNetnsStartsClean)
{
	std::string why;
	if (!can_run(&why))
		GTEST_SKIP() << why;
	OwnNetns ns("r");
	ASSERT_TRUE(ns.ok());
	const std::string dev = "xolc0", pins = kPinRoot + dev + "@" + ns.name();
	ASSERT_TRUE(ns.link(dev));
	CmdResult a = tool(ns.name(), {"attach", dev, "vlan", "--hook", "tc-ingress"});
	ASSERT_EQ(a.exit_code, 0) << a.describe();
	ASSERT_EQ(tool(ns.name(), {"vlan", "push", dev, "--vid", "42"}).exit_code, 0);
	CmdResult show = tool(ns.name(), {"vlan", "show", dev});
	ASSERT_NE(show.out.find("42"), std::string::npos) << show.out;	// the negative check below means something

	ASSERT_TRUE(run_cmd({"ip", "netns", "del", ns.name()}, 10).ok());
	CmdResult st = tool("", {"status"});
	EXPECT_EQ(st.exit_code, 0) << st.describe();
	EXPECT_NE(st.out.find("orphaned pins " + pins + ": netns " + ns.name() + " is gone"), std::string::npos) << st.out;

	ASSERT_TRUE(run_cmd({"ip", "netns", "add", ns.name()}, 10).ok());
	ASSERT_TRUE(ns.link(dev));
	st = tool("", {"--json", "status"});
	EXPECT_NE(st.out.find("{\"path\":\"" + pins + "\",\"orphan\":true"), std::string::npos) << st.out;

	show = tool(ns.name(), {"vlan", "show", dev});
	EXPECT_EQ(show.out.find("42"), std::string::npos) << show.out;
	EXPECT_EQ(show.err.rfind("xoffload: removed stale pins " + pins, 0), 0u) << show.err;
	EXPECT_EQ(show.exit_code, 1) << show.describe();	// not attached: nothing of the old policy
	EXPECT_FALSE(exists(pins));
	a = tool(ns.name(), {"attach", dev, "vlan", "--hook", "tc-ingress"});
	ASSERT_EQ(a.exit_code, 0) << a.describe();
	EXPECT_TRUE(a.err.empty()) << a.err;
	show = tool(ns.name(), {"vlan", "show", dev});
	EXPECT_EQ(show.exit_code, 0) << show.describe();
	EXPECT_EQ(show.out.find("42"), std::string::npos) << show.out;
	EXPECT_EQ(tool(ns.name(), {"detach", dev}).exit_code, 0);
	EXPECT_FALSE(exists(pins));
	EXPECT_FALSE(tc_filters(ns.name(), dev));
}

// Pins made by `geneve port add` without an attach: purged with the
// interface alive, and as orphans once it is gone (detach --purge IFACE,
// detach --all-orphans), listed by status in between.
TEST(LifecycleNetns, OrphansListedAndPurged)
{
	std::string why;
	if (!can_run(&why))
		GTEST_SKIP() << why;
	OwnNetns ns("o");
	ASSERT_TRUE(ns.ok());
	const std::vector<std::string> devs{"xolc1", "xolc2", "xolc3"};
	auto pins = [&](const std::string &d) { return kPinRoot + d + "@" + ns.name(); };
	for (const auto &d : devs) {
		ASSERT_TRUE(ns.link(d));
		CmdResult r = tool(ns.name(), {"geneve", "port", "add", d, "6081"});
		ASSERT_EQ(r.exit_code, 0) << r.describe();
		ASSERT_TRUE(exists(pins(d)));
	}
	// alive, nothing attached: --purge removes the pins
	CmdResult p = tool(ns.name(), {"detach", "--purge", "xolc3"});
	EXPECT_EQ(p.exit_code, 0) << p.describe();
	EXPECT_NE(p.out.find("removed pins " + pins("xolc3")), std::string::npos) << p.out;
	EXPECT_FALSE(exists(pins("xolc3")));

	ASSERT_TRUE(ns.ip({"link", "del", "xolc1"}));
	ASSERT_TRUE(ns.ip({"link", "del", "xolc2"}));
	CmdResult st = tool(ns.name(), {"status"});
	for (const char *d : {"xolc1", "xolc2"})
		EXPECT_NE(st.out.find("orphaned pins " + pins(d) + ": ifindex "), std::string::npos) << st.out;

	p = tool(ns.name(), {"detach", "--purge", "xolc1"});
	EXPECT_EQ(p.exit_code, 0) << p.describe();
	EXPECT_FALSE(exists(pins("xolc1")));
	p = tool(ns.name(), {"detach", "--purge", "xolc1"});
	EXPECT_EQ(p.exit_code, 1) << p.describe();	// neither the interface nor pins of it: a fact, as ip says
	EXPECT_NE(p.err.find("Cannot find device \"xolc1\""), std::string::npos) << p.err;
	EXPECT_EQ(lines(p.err), 1u) << p.err;

	CmdResult all = tool(ns.name(), {"detach", "--all-orphans"});
	EXPECT_EQ(all.exit_code, 0) << all.describe();
	EXPECT_NE(all.out.find("removed orphaned pins " + pins("xolc2")), std::string::npos) << all.out;
	EXPECT_FALSE(exists(pins("xolc2")));
	CmdResult bad = tool(ns.name(), {"detach", "--all-orphans", "xolc2"});
	EXPECT_EQ(bad.exit_code, 2) << bad.describe();
}

// recv notices its device going away, with and without --duration, and its
// netns deleted by name: one line, exit 1, promptly.
TEST(LifecycleNetns, RecvExitsWhenItsDeviceGoes)
{
	std::string why;
	if (!can_run(&why))
		GTEST_SKIP() << why;
	struct Case {
		const char *name;
		bool duration;
		bool netns;	// ip netns del instead of ip link del
	};
	for (const Case &c : {Case{"link del, --duration 60", true, false}, Case{"link del, no --duration", false, false},
			      Case{"netns del", false, true}}) {
		SCOPED_TRACE(c.name);
		OwnNetns ns("g");
		ASSERT_TRUE(ns.ok());
		ASSERT_TRUE(ns.ip({"link", "add", "xolv0", "type", "veth", "peer", "name", "xolv1"}));
		ASSERT_TRUE(ns.ip({"link", "set", "dev", "xolv0", "up"}));
		ASSERT_TRUE(ns.ip({"link", "set", "dev", "xolv1", "up"}));
		std::vector<std::string> args{"recv", "xolv0", "--interval", "0", "--xdp-mode", "skb"};
		if (c.duration)
			args.insert(args.end(), {"--duration", "60"});
		BackgroundCmd rx(tool_argv(ns.name(), args, true));
		ASSERT_TRUE(rx.wait_for_output("\"type\":\"start\"", 20)) << "recv never started";
		CmdResult del = c.netns ? run_cmd({"ip", "netns", "del", ns.name()}, 10)
					: run_cmd({"ip", "-n", ns.name(), "link", "del", "xolv0"}, 10);
		ASSERT_TRUE(del.ok()) << del.describe();
		const auto t0 = Clock::now();
		CmdResult r = rx.wait(10);
		const double took = since(t0);
		EXPECT_EQ(r.exit_code, 1) << r.describe();
		EXPECT_LT(took, 3.0) << "recv took " << took << " s to notice";
		// the one line (after the one saying xdp_xsk runs as a single program, where it does)
		const std::string last = r.err.substr(r.err.rfind('\n', r.err.size() - 2) + 1);
		EXPECT_EQ(last.rfind("offload-tool: recv stopped: ", 0), 0u) << r.err;
		EXPECT_EQ(r.err.find("recv stopped"), r.err.rfind("recv stopped")) << r.err;
		EXPECT_NE(r.err.find(c.netns ? "netns " + ns.name() + " of xolv0 was deleted" : "xolv0 (ifindex "),
			  std::string::npos)
			<< r.err;
	}
}

} // namespace
} // namespace xoffload::test
