// offload-tool bench: runs tools/bench of the source tree it was built from;
// an unknown bench and -n are refused with one line and exit 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "testbed.hpp"

using namespace xoffload::test;

namespace {

std::string tool()
{
	return env_or_empty("XO_TOOL");
}

} // namespace

TEST(CliBench, RefusesUnknownBenchesAndNetns)
{
	ASSERT_FALSE(tool().empty()) << "XO_TOOL must be set (run through ctest)";
	CmdResult r = run_cmd({tool(), "bench", "nope"}, 20);
	EXPECT_EQ(r.exit_code, 2) << r.describe();
	EXPECT_NE(r.err.find("unknown bench 'nope'"), std::string::npos) << r.err;
	EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;

	for (const char *n : {"-n", "-vn", "--netns"}) {
		r = run_cmd({tool(), n, "xo-no-such-ns", "bench", "vlan"}, 20);
		EXPECT_EQ(r.exit_code, 2) << n << ": " << r.describe();
		EXPECT_NE(r.err.find("-n does not apply"), std::string::npos) << n << ": " << r.err;
	}
}

TEST(CliBench, RunsTheVlanBenchOfTheSourceTree)
{
	ASSERT_FALSE(tool().empty()) << "XO_TOOL must be set (run through ctest)";
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (BPF_PROG_RUN)";
	if (!env_or_empty("XO_IN_VM").empty())
		GTEST_SKIP() << "a timing run under emulation (tools/vm-test, TCG) measures nothing and takes minutes";
	// global options before bench, and between bench and its name
	for (const std::vector<std::string> &argv :
	     {std::vector<std::string>{tool(), "--json", "bench", "vlan", "--quick"},
	      std::vector<std::string>{tool(), "bench", "--json", "vlan", "--quick"}}) {
		CmdResult r = run_cmd(argv, 180);
		ASSERT_EQ(r.exit_code, 0) << r.describe();
		EXPECT_NE(r.out.find("\"bench\":\"vlan\""), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("\"quick\":true"), std::string::npos)
			<< "the bench's own option went through: " << r.out;
		EXPECT_NE(r.out.find("\"name\":\"pop\""), std::string::npos) << r.out;
	}
}
