// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// offload-tool's use of the driver facts on a veth testbed: `features IFACE
// --rx` (text, -v sources, --json), and send's TX checksum decided by the
// facts of --kernel for the mode it bound (veth: copy mode; TX metadata
// honoured there from 6.8, so the 6.1 facts move --tx-csum to software
// with a note).
#include <gtest/gtest.h>

#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <regex>
#include <string>
#include <vector>

#include "testbed.hpp"

namespace xoffload::test {
namespace {

constexpr double kTimeout = 30;

class NicFactsCli : public TestbedTest {
protected:
	CmdResult tool(std::vector<std::string> args, bool json) const
	{
		std::vector<std::string> v{tool_};
		if (json)
			v.push_back("--json");
		v.insert(v.end(), {"-n", tb_->ns_a()});
		v.insert(v.end(), args.begin(), args.end());
		return run_cmd(v, kTimeout);
	}
	CmdResult send(std::vector<std::string> extra) const
	{
		std::vector<std::string> a{"send", tb_->if_a(), "--dst-mac", "02:00:00:00:00:0b", "--src-ip",
					   "198.18.0.1", "--dst-ip", "198.18.0.2", "--interval", "0", "--count", "50",
					   "--xsk-mode", "copy"};
		a.insert(a.end(), extra.begin(), extra.end());
		return tool(a, true);
	}
};

TEST_F(NicFactsCli, RxFactsOfVethText)
{
	CmdResult r = tool({"features", tb_->if_a(), "--rx", "--kernel", "6.12"}, false);
	ASSERT_TRUE(r.ok()) << r.describe();
	EXPECT_NE(r.out.find(tb_->if_a() + " (veth): RX and AF_XDP facts of Linux 6.12\n"), std::string::npos) << r.out;
	EXPECT_TRUE(std::regex_search(r.out, std::regex("bpf_xdp_metadata_rx_vlan_tag: +yes \\(device-bound")))
		<< r.out;
	EXPECT_TRUE(std::regex_search(r.out, std::regex("AF_XDP zero-copy: +no\n"))) << r.out;
	EXPECT_TRUE(std::regex_search(r.out, std::regex("VLAN filter: +none\n"))) << r.out;
	// the facts behind attach's strip, recv's steering line and the Geneve decap default
	EXPECT_TRUE(std::regex_search(r.out, std::regex("rx-vlan-hw-parse on means stripped: +no \\(shown, but "
							"nothing strips\\)\n")))
		<< r.out;
	EXPECT_TRUE(std::regex_search(r.out, std::regex("RX queue is the peer's TX queue: +yes\n"))) << r.out;
	EXPECT_TRUE(std::regex_search(r.out, std::regex("RSS indirection table: +none\n"))) << r.out;
	EXPECT_TRUE(std::regex_search(r.out, std::regex("outer UDP checksum marked verified: +no \\(Geneve decap "
							"passes by default\\)\n")))
		<< r.out;
	EXPECT_EQ(r.out.find("drivers/net/veth.c"), std::string::npos) << "sources only with -v:\n" << r.out;
	// 6.1: no rx-vlan-tag kfunc yet (6.8)
	CmdResult old = tool({"features", tb_->if_a(), "--rx", "--kernel", "6.1"}, false);
	ASSERT_TRUE(old.ok()) << old.describe();
	EXPECT_TRUE(std::regex_search(old.out, std::regex("bpf_xdp_metadata_rx_vlan_tag: +no\n"))) << old.out;
	// -v: every fact line followed by its source
	CmdResult v = tool({"-v", "features", tb_->if_a(), "--rx"}, false);
	ASSERT_TRUE(v.ok()) << v.describe();
	// the running kernel's facts: veth has the kfunc from 6.8
	utsname u{};
	unsigned maj = 0, min = 0;
	ASSERT_EQ(uname(&u), 0);
	ASSERT_EQ(std::sscanf(u.release, "%u.%u", &maj, &min), 2) << u.release;
	const bool kfunc = maj > 6 || (maj == 6 && min >= 8);
	EXPECT_NE(v.out.find(kfunc ? "(drivers/net/veth.c veth_xdp_rx_vlan_tag()"
				   : "(drivers/net/veth.c no xmo_rx_vlan_tag before 6.8)"),
		  std::string::npos)
		<< v.out;
	EXPECT_NE(v.out.find("the running kernel"), std::string::npos) << v.out;
}

TEST_F(NicFactsCli, RxFactsOfVethJson)
{
	CmdResult r = tool({"features", tb_->if_a(), "--rx", "--kernel", "6.12"}, true);
	ASSERT_TRUE(r.ok()) << r.describe();
	const std::string &j = r.out;
	EXPECT_EQ(std::count(j.begin(), j.end(), '\n'), 1) << j;
	EXPECT_EQ(json_str(j, "driver"), "veth") << j;
	EXPECT_EQ(json_str(j, "kernel"), "6.12") << j;
	EXPECT_NE(j.find("\"modelled\":true"), std::string::npos) << j;
	EXPECT_NE(j.find("\"rx_vlan_tag_kfunc\":{\"value\":true"), std::string::npos) << j;
	EXPECT_NE(j.find("\"zero_copy\":{\"value\":false"), std::string::npos) << j;
	EXPECT_NE(j.find("\"xdp_max_mtu\":{\"value\":3506"), std::string::npos) << j;
	EXPECT_NE(j.find("\"errno\":\"ERANGE\""), std::string::npos) << j;
	EXPECT_NE(j.find("\"source\":\"drivers/net/veth.c veth_xdp_rx_vlan_tag()"), std::string::npos) << j;
	EXPECT_NE(j.find("\"vlan_strip_by_feature\":{\"value\":false"), std::string::npos) << j;
	EXPECT_NE(j.find("\"rxq_from_peer\":{\"value\":true"), std::string::npos) << j;
	EXPECT_NE(j.find("\"rss_table\":{\"value\":\"none\""), std::string::npos) << j;
	EXPECT_NE(j.find("\"rx_csum_mark\":{\"value\":false"), std::string::npos) << j;
	EXPECT_NE(j.find("__xdp_build_skb_from_frame()"), std::string::npos) << j;
}

TEST_F(NicFactsCli, RxFactsOfADriverWithoutAnInterface)
{
	CmdResult r = run_cmd({tool_, "--json", "features", "--rx", "--driver", "mlx4_en", "--kernel", "6.12"}, kTimeout);
	ASSERT_TRUE(r.ok()) << r.describe();
	EXPECT_NE(r.out.find("\"xdp_max_mtu\":{\"value\":3498"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("\"errno\":\"EOPNOTSUPP\""), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("\"ntuple\":{\"value\":\"only in device-managed flow steering mode\""), std::string::npos)
		<< r.out;
	EXPECT_NE(r.out.find("\"vlan_filter_rx_all\":{\"value\":false"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("\"rx_csum_mark\":{\"value\":true"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("\"rss_table\":{\"value\":\"ethtool -X\""), std::string::npos) << r.out;
	CmdResult bad = run_cmd({tool_, "features", "--rx", "--driver", "e1000"}, kTimeout);
	EXPECT_EQ(bad.exit_code, 2) << bad.describe();
	EXPECT_NE(bad.err.find("e1000"), std::string::npos) << bad.err;
	CmdResult both = tool({"features", tb_->if_a(), "--rx", "--gso"}, false);
	EXPECT_EQ(both.exit_code, 2) << both.describe();
}

// --tx-csum in copy mode on veth: the 6.1 facts (no TX metadata before 6.8)
// move the checksum to software with one note; the 6.12 facts and the
// running kernel's (this machine is newer than 6.8) ask the queue.
TEST_F(NicFactsCli, TxCsumFollowsTheFactsOfTheKernel)
{
	CmdResult o61 = send({"--tx-csum", "--kernel", "6.1"});
	ASSERT_TRUE(o61.ok()) << o61.describe();
	const std::string s61 = last_line(o61.out);
	EXPECT_EQ(json_str(s61, "mode"), "copy") << s61;
	EXPECT_EQ(json_str(s61, "checksum"), "software") << s61;
	// the 6.1 facts say "before Linux 6.8"; a running kernel that old
	// cannot even register TX metadata, and says so first
	EXPECT_TRUE(std::regex_search(json_str(s61, "checksum_why"), std::regex("before Linux 6\\.8|needs Linux 6\\.8")))
		<< s61;

	CmdResult t61 = run_cmd({tool_, "-n", tb_->ns_a(), "send", tb_->if_a(), "--dst-mac", "02:00:00:00:00:0b",
				 "--src-ip", "198.18.0.1", "--dst-ip", "198.18.0.2", "--interval", "0", "--count", "5",
				 "--xsk-mode", "copy", "--tx-csum", "--kernel", "6.1"},
				kTimeout);
	ASSERT_TRUE(t61.ok()) << t61.describe();
	EXPECT_TRUE(std::regex_search(t61.err, std::regex("(^|\n)note: (--tx-csum: )?checksums in software: [^\n]*"
							 "(before Linux 6\\.8|needs Linux 6\\.8)[^\n]*\n")))
		<< t61.err;
	EXPECT_NE(t61.err.find("; facts of 6.1 (--kernel; running "), std::string::npos) << t61.err;

	for (const char *k : {"6.12", "running"}) {
		SCOPED_TRACE(k);
		CmdResult r = send({"--tx-csum", "--kernel", k});
		ASSERT_TRUE(r.ok()) << r.describe();
		const std::string s = last_line(r.out);
		if (json_str(s, "tx_metadata") != "enabled")
			GTEST_SKIP() << "this kernel registers no AF_XDP TX metadata: " << s;
		EXPECT_EQ(json_str(s, "checksum"), "tx-metadata") << s;
	}
	CmdResult bad = send({"--kernel", "5.4"});
	EXPECT_EQ(bad.exit_code, 2) << bad.describe();
}

} // namespace
} // namespace xoffload::test
