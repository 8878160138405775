// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// offload-tool apply and config show on a veth testbed: a file applied is
// what vlan show, geneve port/rule list and status report; applied again it
// is an empty plan; a change is planned as that change; config show's
// output applies as a no-op; a bad file changes nothing. Every apply keeps
// undeclared interfaces (--keep-undeclared): other state on the host is
// not this test's.
#include <fstream>
#include <string>
#include <vector>

#include "testbed.hpp"

namespace xoffload::test {
namespace {

constexpr double kCmdTimeout = 30.0;

class ConfigVeth : public TestbedTest {
protected:
	bool needs_bpffs() const override { return true; }
	void SetUp() override
	{
		TestbedTest::SetUp();
		if (IsSkipped() || HasFatalFailure())
			return;
		ASSERT_FALSE(dir_.path().empty());
	}
	void TearDown() override
	{
		if (tb_)
			(void)run_cmd({tool_, "-n", tb_->ns_a(), "detach", "--purge", tb_->if_a()}, kCmdTimeout);
		TestbedTest::TearDown();
	}

	CmdResult tool(std::vector<std::string> args, const std::string &ns = "")
	{
		std::vector<std::string> argv{tool_};
		if (!ns.empty()) {
			argv.push_back("-n");
			argv.push_back(ns);
		}
		argv.insert(argv.end(), args.begin(), args.end());
		return run_cmd(argv, kCmdTimeout);
	}

	std::string write(const std::string &name, const std::string &text)
	{
		std::string path = dir_.path() + "/" + name;
		std::ofstream(path) << text;
		return path;
	}

	// The declaration of the testbed's A side, with @ingress as the body
	// of [interface.vlan.ingress].
	std::string file_text(const std::string &ingress)
	{
		return "[[interface]]\nname = \"" + tb_->if_a() + "\"\nnetns = \"" + tb_->ns_a() +
		       "\"\nmode = \"skb\"\n\n"
		       "[interface.vlan]\nhooks = [\"xdp\", \"tc-egress\"]\n\n"
		       "[interface.vlan.ingress]\n" + ingress +
		       "\n[interface.vlan.egress]\naction = \"push\"\nvid = 10\npcp = 3\n\n"
		       "[interface.geneve]\nports = [6081]\n\n"
		       "[[interface.geneve.rule]]\nvni = 100\naction = \"decap\"\n";
	}

	// Every pin under /sys/fs/bpf/xoffload (path and inode) and every XDP
	// and TC attachment in A's namespace (bpftool net: program ids): what
	// a --dry-run must leave as it found. (Not every program loaded on the
	// machine: other tests and tools load their own meanwhile.)
	std::string pins_and_progs()
	{
		CmdResult pins = run_cmd({"find", "/sys/fs/bpf/xoffload", "-printf", "%p %i\n"}, kCmdTimeout);
		CmdResult net = run_cmd({"ip", "netns", "exec", tb_->ns_a(), "bpftool", "net", "show"}, kCmdTimeout);
		EXPECT_TRUE(net.ok()) << net.describe();
		return pins.out + net.out;
	}

	// What the CLI's own readers say of the A side.
	std::string state()
	{
		std::string s;
		for (auto args : std::vector<std::vector<std::string>>{{"vlan", "show", tb_->if_a()},
								       {"geneve", "port", "list", tb_->if_a()},
								       {"geneve", "rule", "list", tb_->if_a()}}) {
			CmdResult r = tool(args, tb_->ns_a());
			EXPECT_TRUE(r.ok()) << join_cmd(args) << ": " << r.describe();
			s += r.out;
		}
		return s;
	}

	// The [[interface]] block of the A side in config show's output.
	std::string shown_a()
	{
		CmdResult r = tool({"config", "show"});
		EXPECT_TRUE(r.ok()) << r.describe();
		const std::string mark = "\n[[interface]]\n";
		const std::string me = "name = \"" + tb_->if_a() + "\"\nnetns = \"" + tb_->ns_a() + "\"\n";
		for (size_t at = r.out.find(mark); at != std::string::npos;) {
			size_t next = r.out.find(mark, at + 1);
			std::string block = r.out.substr(at, next == std::string::npos ? std::string::npos : next - at);
			if (block.compare(mark.size(), me.size(), me) == 0)
				return block;
			at = next;
		}
		ADD_FAILURE() << "config show has no block for " << tb_->if_a() << ":\n" << r.out;
		return "";
	}

	TempDir dir_{"xo-config"};
};

TEST_F(ConfigVeth, ApplyIsIdempotentAndShowAppliesAsANoOp)
{
	const std::string f = write("a.toml", file_text("action = \"pop\"\nallow = [10, 20]\n"));

	// negative check first: nothing of ours there yet
	CmdResult st = tool({"status", tb_->if_a()}, tb_->ns_a());
	ASSERT_TRUE(st.ok()) << st.describe();
	ASSERT_EQ(st.out.find("vlan"), std::string::npos) << st.out;

	const std::string before = pins_and_progs();
	CmdResult dry = tool({"apply", "-f", f, "--dry-run", "--keep-undeclared"});
	ASSERT_TRUE(dry.ok()) << dry.describe();
	EXPECT_NE(dry.out.find("attach vlan at xdp (skb)"), std::string::npos) << dry.out;
	EXPECT_EQ(pins_and_progs(), before) << "--dry-run changed pins or programs";
	st = tool({"status", tb_->if_a()}, tb_->ns_a());
	EXPECT_EQ(st.out.find("vlan"), std::string::npos) << "--dry-run attached:\n" << st.out;

	CmdResult a = tool({"apply", "-f", f, "--keep-undeclared"});
	ASSERT_TRUE(a.ok()) << a.describe();
	const std::string label = tb_->if_a() + "@" + tb_->ns_a() + ": ";
	for (const char *step : {"attach vlan at xdp (skb)", "attach vlan at tc-egress", "attach geneve at xdp (skb)",
				 "vlan ingress policy: none -> pop 1, allow 10,20",
				 "vlan egress policy: none -> push 802.1Q vid 10 pcp 3", "geneve port add 6081",
				 "geneve rule vni 100: decap"})
		EXPECT_NE(a.out.find(label + step), std::string::npos) << step << " missing in:\n" << a.out;
	EXPECT_NE(a.out.find("applied 7 steps"), std::string::npos) << a.out;

	// the datapath as the CLI's own readers see it
	st = tool({"status", tb_->if_a()}, tb_->ns_a());
	ASSERT_TRUE(st.ok()) << st.describe();
	EXPECT_NE(st.out.find("skb mode"), std::string::npos) << st.out;
	EXPECT_NE(st.out.find("tc_vlan_egress"), std::string::npos) << st.out;
	const std::string s1 = state();
	EXPECT_NE(s1.find(tb_->if_a() + " ingress: pop 1, allow-list on"), std::string::npos) << s1;
	EXPECT_NE(s1.find("allowed VIDs: 10 20"), std::string::npos) << s1;
	EXPECT_NE(s1.find(tb_->if_a() + " egress: push 802.1Q vid 10 pcp 3"), std::string::npos) << s1;
	EXPECT_NE(s1.find(" 6081 (refs 1"), std::string::npos) << s1;
	EXPECT_NE(s1.find("vni 100       decap"), std::string::npos) << s1;

	// again: nothing to do, and nothing done
	CmdResult again = tool({"apply", "-f", f, "--keep-undeclared"});
	ASSERT_TRUE(again.ok()) << again.describe();
	EXPECT_EQ(again.out, "nothing to do: the running state matches " + f + "\n");
	EXPECT_EQ(state(), s1);
	again = tool({"--json", "apply", "-f", f, "--keep-undeclared"});
	ASSERT_TRUE(again.ok()) << again.describe();
	EXPECT_EQ(again.out, "{\"file\":\"" + f + "\",\"dry_run\":false,\"changed\":false,\"steps\":[],\"skipped\":[]}\n");

	// a change is planned as that change alone, and --dry-run leaves it
	const std::string g = write("b.toml", file_text("action = \"pop\"\ndepth = 2\nallow = [10, 20]\n"));
	const std::string applied = pins_and_progs();
	dry = tool({"apply", "-f", g, "--dry-run", "--keep-undeclared"});
	ASSERT_TRUE(dry.ok()) << dry.describe();
	EXPECT_EQ(dry.out, "plan for " + g + " (1 step; --dry-run: nothing changed):\n  " + label +
				   "vlan ingress policy: pop 1, allow 10,20 -> pop 2, allow 10,20\n");
	EXPECT_EQ(state(), s1);
	EXPECT_EQ(pins_and_progs(), applied) << "--dry-run changed pins or programs";
	dry = tool({"--json", "apply", "-f", g, "--dry-run", "--keep-undeclared"});
	ASSERT_TRUE(dry.ok()) << dry.describe();
	EXPECT_EQ(dry.out, "{\"file\":\"" + g + "\",\"dry_run\":true,\"changed\":false,\"steps\":[{\"interface\":\"" +
				   tb_->if_a() + "@" + tb_->ns_a() + "\",\"kind\":\"change\",\"step\":\"vlan ingress policy: pop 1, "
				   "allow 10,20 -> pop 2, allow 10,20\",\"done\":false}],\"skipped\":[]}\n");
	a = tool({"apply", "-f", g, "--keep-undeclared"});
	ASSERT_TRUE(a.ok()) << a.describe();
	const std::string s2 = state();
	EXPECT_NE(s2.find(tb_->if_a() + " ingress: pop 2, allow-list on"), std::string::npos) << s2;

	// config show > f; apply -f f: a no-op
	const std::string shown = shown_a();
	ASSERT_FALSE(shown.empty());
	EXPECT_NE(shown.find("depth = 2"), std::string::npos) << shown;
	const std::string h = write("shown.toml", shown);
	CmdResult noop = tool({"apply", "-f", h, "--keep-undeclared"});
	ASSERT_TRUE(noop.ok()) << noop.describe();
	EXPECT_EQ(noop.out, "nothing to do: the running state matches " + h + "\n") << shown;
	EXPECT_EQ(state(), s2);
}

TEST_F(ConfigVeth, ABadFileChangesNothing)
{
	const std::string f = write("a.toml", file_text("action = \"pop\"\n"));
	CmdResult a = tool({"apply", "-f", f, "--keep-undeclared"});
	ASSERT_TRUE(a.ok()) << a.describe();
	const std::string before = state();
	const std::string shown = shown_a();

	// valid up to its last key: the vlan change before it must not happen
	const std::string bad = write("bad.toml", file_text("action = \"pop\"\ndepth = 2\n") + "queues = 0\n");
	CmdResult r = tool({"apply", "-f", bad, "--keep-undeclared"});
	EXPECT_EQ(r.exit_code, 2) << r.describe();
	EXPECT_EQ(r.out, "");
	const int line = 24;	// queues = 0, the file's last line
	EXPECT_EQ(r.err, "offload-tool: " + bad + ":" + std::to_string(line) +
				 ":10: interface.geneve.rule.queues: only with action \"xsk\" or \"cpu\" (action is \"decap\")\n");
	EXPECT_EQ(state(), before);
	EXPECT_EQ(shown_a(), shown);

	// and a file that is no TOML at all
	const std::string junk = write("junk.toml", "[[interface]\n");
	r = tool({"apply", "-f", junk});
	EXPECT_EQ(r.exit_code, 2) << r.describe();
	EXPECT_EQ(state(), before);

	// detached by the file that no longer declares it: nothing of ours left
	const std::string none = write("none.toml", "[[interface]]\nname = \"" + tb_->if_a() + "\"\nnetns = \"" +
							   tb_->ns_a() + "\"\n");
	r = tool({"apply", "-f", none, "--keep-undeclared"});
	ASSERT_TRUE(r.ok()) << r.describe();
	EXPECT_NE(r.out.find("detach geneve (not in the file)"), std::string::npos) << r.out;
	CmdResult st = tool({"status", tb_->if_a()}, tb_->ns_a());
	ASSERT_TRUE(st.ok()) << st.describe();
	EXPECT_EQ(st.out.find("vlan"), std::string::npos) << st.out;
	EXPECT_EQ(st.out.find("geneve"), std::string::npos) << st.out;
}

// A program of the user's after ours: applied from its object, shown by
// name, kept by a file that names it, gone with a file without it.
TEST_F(ConfigVeth, ChainAppliesAndShowsByName)
{
	const std::string obj = env_or_empty("XO_BPF_DIR") + "/xdp_drop_port9.bpf.o";
	ASSERT_FALSE(env_or_empty("XO_BPF_DIR").empty()) << "XO_BPF_DIR is not set";
	const std::string head = "[[interface]]\nname = \"" + tb_->if_a() + "\"\nnetns = \"" + tb_->ns_a() +
				 "\"\nmode = \"skb\"\n[interface.vlan]\n";
	const std::string f = write("chain.toml", head + "[interface.chain]\nprog = \"" + obj + "\"\n");
	CmdResult a = tool({"apply", "-f", f, "--keep-undeclared"});
	ASSERT_TRUE(a.ok()) << a.describe();
	EXPECT_NE(a.out.find("attach chain " + obj + " (skb)"), std::string::npos) << a.out;
	CmdResult st = tool({"--json", "status", tb_->if_a()}, tb_->ns_a());
	ASSERT_TRUE(st.ok()) << st.describe();
	EXPECT_NE(st.out.find("xdp_drop_port9"), std::string::npos) << st.out;

	a = tool({"apply", "-f", f, "--keep-undeclared"});
	ASSERT_TRUE(a.ok()) << a.describe();
	EXPECT_EQ(a.out, "nothing to do: the running state matches " + f + "\n");

	const std::string shown = shown_a();
	EXPECT_NE(shown.find("[interface.chain]\nname = \"xdp_drop_port9\"\n"), std::string::npos) << shown;
	const std::string h = write("shown.toml", shown);
	a = tool({"apply", "-f", h, "--keep-undeclared"});
	ASSERT_TRUE(a.ok()) << a.describe();
	EXPECT_EQ(a.out, "nothing to do: the running state matches " + h + "\n");

	const std::string g = write("nochain.toml", head);
	a = tool({"apply", "-f", g, "--keep-undeclared"});
	ASSERT_TRUE(a.ok()) << a.describe();
	EXPECT_NE(a.out.find("detach chain xdp_drop_port9"), std::string::npos) << a.out;
	st = tool({"status", tb_->if_a()}, tb_->ns_a());
	EXPECT_EQ(st.out.find("xdp_drop_port9"), std::string::npos) << st.out;

	// an object that is not there: exit 2, the file's line and key
	const std::string missing = write("missing.toml", head + "[interface.chain]\nprog = \"nowhere.bpf.o\"\n");
	a = tool({"apply", "-f", missing, "--keep-undeclared"});
	EXPECT_EQ(a.exit_code, 2) << a.describe();
	EXPECT_EQ(a.err, "offload-tool: " + missing + ":7:8: interface.chain.prog: open " + dir_.path() +
				 "/nowhere.bpf.o: No such file or directory\n");

	// a name alone cannot bring it back: refused before anything changes
	a = tool({"apply", "-f", h, "--keep-undeclared"});
	EXPECT_EQ(a.exit_code, 2) << a.describe();
	EXPECT_NE(a.err.find("chain xdp_drop_port9 does not run there and the file gives no object to attach"),
		  std::string::npos)
		<< a.err;
}

// Without --keep-undeclared apply removes our state from interfaces the
// file does not declare, in the namespace it runs in (-n) and in those the
// file names, and never in another: the A side's vlan survives an apply in
// B that names only B, and goes with an apply in A that does not declare it.
TEST_F(ConfigVeth, UndeclaredStateGoesInTheFilesNamespacesOnly)
{
	ASSERT_TRUE(tool({"attach", tb_->if_a(), "vlan", "--mode", "skb"}, tb_->ns_a()).ok());
	ASSERT_TRUE(tool({"attach", tb_->if_b(), "vlan", "--mode", "skb"}, tb_->ns_b()).ok());
	const std::string f = write("b.toml", "[[interface]]\nname = \"" + tb_->if_b() + "\"\nnetns = \"" +
						      tb_->ns_b() + "\"\nmode = \"skb\"\n\n[interface.vlan]\nhooks = [\"xdp\"]\n");
	auto has_vlan = [&](const std::string &ns, const std::string &ifname) {
		CmdResult st = tool({"status", ifname}, ns);
		EXPECT_TRUE(st.ok()) << st.describe();
		// xdp_vlan, or the composed program's stage "1. vlan"
		return st.out.find("xdp_vlan") != std::string::npos || st.out.find(". vlan\n") != std::string::npos;
	};

	CmdResult b = tool({"apply", "-f", f}, tb_->ns_b());
	EXPECT_TRUE(b.ok()) << b.describe();
	EXPECT_EQ(b.out.find(tb_->if_a()), std::string::npos) << "a step for A, whose namespace the file does not "
								 "name:\n" << b.out;
	EXPECT_TRUE(has_vlan(tb_->ns_a(), tb_->if_a())) << "A's vlan went with an apply in B";
	EXPECT_TRUE(has_vlan(tb_->ns_b(), tb_->if_b()));

	CmdResult a = tool({"apply", "-f", f}, tb_->ns_a());
	EXPECT_TRUE(a.ok()) << a.describe();
	EXPECT_NE(a.out.find("detach everything of ours (not in the file)"), std::string::npos) << a.out;
	EXPECT_FALSE(has_vlan(tb_->ns_a(), tb_->if_a())) << "A is in the namespace apply ran in, undeclared";
	EXPECT_TRUE(has_vlan(tb_->ns_b(), tb_->if_b())) << "B is declared";
	(void)tool({"detach", "--purge", tb_->if_b()}, tb_->ns_b());
}

} // namespace
} // namespace xoffload::test
