// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tools/bench, the benchmarks' one entry point (offload-tool has no bench
// subcommand: an installed binary has no source tree to run them from): an
// unknown bench is refused with one line and exit 2, and a quick bench runs
// and prints its ratio against the baseline.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "testbed.hpp"

using namespace xoffload::test;

namespace {

std::string bench_script()
{
	const std::string src = env_or_empty("XO_SOURCE_DIR");
	return src.empty() ? std::string() : src + "/tools/bench";
}

} // namespace

TEST(ToolsBench, RefusesAnUnknownBench)
{
	ASSERT_FALSE(bench_script().empty()) << "XO_SOURCE_DIR must be set (run through ctest)";
	CmdResult r = run_cmd({bench_script(), "nope"}, 20);
	EXPECT_EQ(r.exit_code, 2) << r.describe();
	EXPECT_NE(r.err.find("unknown bench 'nope'"), std::string::npos) << r.err;
	EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;

	r = run_cmd({bench_script()}, 20);
	EXPECT_EQ(r.exit_code, 2) << "no bench named: " << r.describe();
	EXPECT_NE(r.err.find("usage: tools/bench"), std::string::npos) << r.err;
}

TEST(ToolsBench, OffloadToolHasNoBenchCommand)
{
	const std::string tool = env_or_empty("XO_TOOL");
	ASSERT_FALSE(tool.empty()) << "XO_TOOL must be set (run through ctest)";
	for (const std::vector<std::string> &argv : {std::vector<std::string>{tool, "bench", "vlan"},
						     std::vector<std::string>{tool, "--json", "bench", "vlan", "--quick"}}) {
		CmdResult r = run_cmd(argv, 20);
		EXPECT_EQ(r.exit_code, 2) << r.describe();
		EXPECT_NE(r.err.find("bench"), std::string::npos) << "names the word it refused: " << r.err;
		EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
		if (argv[1] == "--json")	// the error as a JSON object on stdout too, nothing else
			EXPECT_TRUE(r.out.rfind("{\"error\":\"unknown command 'bench'", 0) == 0 &&
				    r.out.ends_with("(see --help)\",\"exit_code\":2}\n"))
				<< r.out;
		else
			EXPECT_TRUE(r.out.empty()) << "nothing ran: " << r.out;
	}
}

// Some hosts refuse BPF_PROG_RUN in live-frame mode to root as well (EPERM
// from the syscall, for any program: this machine since December 2026,
// with freplace refused the same way): the benches that inject frames so
// cannot run there. Their one-line error says which call was refused.
bool live_frames_refused(const CmdResult &r)
{
	const bool live = r.err.find("BPF_PROG_RUN (live frames)") != std::string::npos ||
			  r.err.find("verify run: Operation not permitted") != std::string::npos;
	return r.exit_code != 0 && live && r.err.find("Operation not permitted") != std::string::npos;
}

TEST(ToolsBench, RunsTheQuickVlanBench)
{
	ASSERT_FALSE(bench_script().empty()) << "XO_SOURCE_DIR must be set (run through ctest)";
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (BPF_PROG_RUN)";
	if (!env_or_empty("XO_IN_VM").empty())
		GTEST_SKIP() << "a timing run under emulation (tools/vm-test, TCG) measures nothing and takes minutes";
	// XO_BUILD_DIR (set by ctest) makes tools/bench use this build, where
	// xo-bench is already built (integration_tests depends on it)
	CmdResult r = run_cmd({bench_script(), "vlan", "--quick"}, 180);
	if (live_frames_refused(r))
		GTEST_SKIP() << "this host refuses live-frame BPF_PROG_RUN: " << r.err;
	ASSERT_EQ(r.exit_code, 0) << r.describe();
	EXPECT_NE(r.out.find("QUICK: smoke test only"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("target (issue): pop and push <= 1.5x baseline: pop "), std::string::npos)
		<< "the ratio line: " << r.out;

	r = run_cmd({bench_script(), "vlan", "--quick", "--json"}, 180);
	ASSERT_EQ(r.exit_code, 0) << r.describe();
	EXPECT_NE(r.out.find("\"bench\":\"vlan\""), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("\"quick\":true"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("\"name\":\"pop\""), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("\"ratio\":"), std::string::npos) << r.out;
}

// tools/bench gro --quick: every row measured (ours and memcpy, and DPDK's
// where it has the protocol and libdpdk-dev is installed), the targets
// judged; the bench verifies each row's super-packet before timing and exits
// 1 when one is wrong.
TEST(ToolsBench, RunsTheQuickGroBench)
{
	ASSERT_FALSE(bench_script().empty()) << "XO_SOURCE_DIR must be set (run through ctest)";
	if (!env_or_empty("XO_IN_VM").empty())
		GTEST_SKIP() << "a timing run under emulation (tools/vm-test, TCG) measures nothing and takes minutes";
	CmdResult r = run_cmd({bench_script(), "gro", "--quick", "--json"}, 300);
	ASSERT_EQ(r.exit_code, 0) << r.describe();
	EXPECT_NE(r.out.find("{\"bench\":\"gro\""), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("\"quick\":true"), std::string::npos) << r.out;
	for (const char *row : {"tcp4", "tcp4+vlan", "tcp6", "udp4", "frag4", "tcp4+geneve"}) {
		size_t at = r.out.find(std::string("{\"name\":\"") + row + "\"");
		ASSERT_NE(at, std::string::npos) << "row " << row << ": " << r.out;
		std::string line = r.out.substr(at, r.out.find('\n', at) - at);
		EXPECT_EQ(line.find("\"ours_mfps\":null"), std::string::npos) << line;
		EXPECT_EQ(line.find("\"memcpy_mfps\":null"), std::string::npos) << line;
		EXPECT_EQ(line.find("\"vs_memcpy\":null"), std::string::npos) << line;
		EXPECT_EQ(line.find("\"zc_mfps\":null"), std::string::npos) << "zero-copy: " << line;
		EXPECT_EQ(line.find("\"zc_vs_copy\":null"), std::string::npos) << "zero-copy: " << line;
	}
	// the three targets, each judged on its rows (DPDK's: n/a without libdpdk-dev)
	for (const char *t : {"1.5x DPDK", "0.6x memcpy", "0.97x untagged"}) {
		size_t at = r.out.find(t);
		ASSERT_NE(at, std::string::npos) << t << ": " << r.out;
		std::string line = r.out.substr(at, r.out.find('\n', at) - at);
		bool judged = line.find("\"verdict\":\"met\"") != std::string::npos ||
			      line.find("\"verdict\":\"not met\"") != std::string::npos;
		EXPECT_TRUE(judged || (std::string(t) == "1.5x DPDK" && line.find("\"verdict\":\"n/a\"") != std::string::npos))
			<< line;
	}

	r = run_cmd({bench_script(), "gro", "--quick", "--case", "tcp4"}, 300);
	ASSERT_EQ(r.exit_code, 0) << r.describe();
	EXPECT_NE(r.out.find("[--quick: smoke test, not a result]"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("tcp4 "), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("tcp6 "), std::string::npos) << "--case tcp4 ran another row: " << r.out;
}

// The veth benches check their own accounting on every run (every frame
// send completed is counted at the TC sink, recv's received + dropped is
// what was sent or injected) and exit 1 naming the path that lost one: a
// quick run of each must pass them and print its table.
class ToolsBenchVeth : public ::testing::TestWithParam<const char *> {};

TEST_P(ToolsBenchVeth, QuickRunAccountsForEveryFrame)
{
	ASSERT_FALSE(bench_script().empty()) << "XO_SOURCE_DIR must be set (run through ctest)";
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (network namespaces, AF_XDP, TC)";
	if (!env_or_empty("XO_IN_VM").empty())
		GTEST_SKIP() << "a timing run under emulation (tools/vm-test, TCG) measures nothing and takes minutes";
	const std::string bench = GetParam();
	CmdResult r = run_cmd({bench_script(), bench, "--quick", "--json"}, 300);
	if (live_frames_refused(r))
		GTEST_SKIP() << "this host refuses live-frame BPF_PROG_RUN: " << r.err;
	ASSERT_EQ(r.exit_code, 0) << r.describe();
	EXPECT_NE(r.out.find("{\"bench\":\"" + bench + "\""), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("null"), std::string::npos) << "a figure is missing: " << r.out;
}

INSTANTIATE_TEST_SUITE_P(Benches, ToolsBenchVeth, ::testing::Values("threads", "e2e", "xsk"),
			 [](const auto &i) { return std::string(i.param); });
