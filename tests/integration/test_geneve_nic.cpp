// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// geneve port add/list/sync and the kernel's side of Geneve ports: what the
// device's UDP tunnel table says (a veth has none), the --nic device (a
// collect_md geneve device, created through rtnetlink, gone with the last
// reference; without the geneve module, one line and nothing left), and
// sync following the kernel's Geneve devices of the netns, once and with
// --watch. The tests that need the geneve module skip without it (this
// machine); tools/vm-test's Debian guests have it.
#include <linux/rtnetlink.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <bpf/bpf.h>

#include "../../user/src/core/nl.hpp"
#include "testbed.hpp"
#include "xoffload/geneve/geneve_kernel.hpp"

namespace xoffload::test {
namespace {

constexpr double kCmdTimeout = 20.0;

class GeneveNic : public TestbedTest {
protected:
	bool needs_bpffs() const override { return true; }

	CmdResult tool(std::vector<std::string> args, bool json = false)
	{
		std::vector<std::string> argv{tool_};
		if (json)
			argv.push_back("--json");
		argv.insert(argv.end(), {"-n", tb_->ns_b()});
		argv.insert(argv.end(), args.begin(), args.end());
		last_ = join_cmd(argv);
		return run_cmd(argv, kCmdTimeout);
	}
	bool tool_ok(std::vector<std::string> args, bool json = false)
	{
		CmdResult r = tool(std::move(args), json);
		EXPECT_EQ(r.exit_code, 0) << last_ << ": " << r.describe();
		out_ = r.out;
		return r.ok();
	}
	CmdResult ip(std::vector<std::string> args)
	{
		std::vector<std::string> argv{"ip", "-n", tb_->ns_b()};
		argv.insert(argv.end(), args.begin(), args.end());
		return run_cmd(argv, kCmdTimeout);
	}
	// Whether this kernel makes geneve devices (a probe in B, deleted).
	bool geneve_module()
	{
		if (ip({"link", "add", "xo-gnv-probe", "type", "geneve", "id", "1", "remote", "192.0.2.9", "dstport",
			"6999"})
			    .ok()) {
			ip({"link", "del", "xo-gnv-probe"});
			return true;
		}
		return false;
	}
	bool link_exists(const std::string &name) { return ip({"link", "show", "dev", name}).ok(); }
	std::string pin_dir_b() const { return "/sys/fs/bpf/xoffload/" + tb_->if_b() + "@" + tb_->ns_b(); }
	bool pins_left() const { return ::access(pin_dir_b().c_str(), F_OK) == 0; }
	// {"port":P,"refcnt":N,... of `geneve port list --json`, "" when absent
	std::string port_entry(uint16_t port)
	{
		CmdResult r = tool({"geneve", "port", "list", tb_->if_b()}, true);
		std::string key = "{\"port\":" + std::to_string(port) + ",";
		size_t at = r.out.find(key);
		return at == std::string::npos ? "" : r.out.substr(at, r.out.find('}', at) - at + 1);
	}

	std::string last_, out_;
};

TEST_F(GeneveNic, PortAddSaysTheVethHasNoTunnelTable)
{
	const std::string &ifb = tb_->if_b();
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6081"}));
	EXPECT_NE(out_.find("no UDP tunnel table (veth)"), std::string::npos) << out_;
	ASSERT_TRUE(tool_ok({"geneve", "port", "list", ifb}));
	EXPECT_NE(out_.find("6081 (refs 1)"), std::string::npos) << out_;
	EXPECT_NE(out_.find("no UDP tunnel table (veth)"), std::string::npos) << out_;
	ASSERT_TRUE(tool_ok({"geneve", "port", "list", ifb}, true));
	EXPECT_NE(out_.find("\"udp_tunnel_table\":\"none\""), std::string::npos) << out_;
	EXPECT_EQ(out_.find("nic_known"), std::string::npos) << "no table, no verdict: " << out_;
	// the same request straight from the library
	InNetns in(tb_->ns_b());
	ASSERT_TRUE(in.ok());
	auto info = udp_tunnel_info(ifb);
	ASSERT_TRUE(info) << info.error().msg;
	EXPECT_FALSE(info->has_tables);
}

TEST_F(GeneveNic, NicWithoutTheGeneveModuleFailsAndLeavesNothing)
{
	if (geneve_module())
		GTEST_SKIP() << "this kernel has the geneve module: NicDeviceLivesAsLongAsThePort covers --nic";
	CmdResult r = tool({"geneve", "port", "add", tb_->if_b(), "6081", "--nic"});
	EXPECT_EQ(r.exit_code, 1) << r.describe();
	EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
	EXPECT_NE(r.err.find("no geneve module"), std::string::npos) << r.err;
	EXPECT_NE(r.err.find("xo-gnv-6081"), std::string::npos) << r.err;
	EXPECT_FALSE(link_exists("xo-gnv-6081"));
	EXPECT_FALSE(pins_left()) << "a failed port add --nic left pins";
}

TEST_F(GeneveNic, NicDeviceLivesAsLongAsThePort)
{
	if (!geneve_module())
		GTEST_SKIP() << "needs the geneve module (tools/vm-test guests have it)";
	const std::string &ifb = tb_->if_b();
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6081", "--nic"}, true));
	EXPECT_NE(out_.find("\"nic_device\":\"xo-gnv-6081\",\"nic_device_created\":true"), std::string::npos) << out_;
	CmdResult d = ip({"-d", "link", "show", "dev", "xo-gnv-6081"});
	ASSERT_TRUE(d.ok()) << d.describe();
	EXPECT_NE(d.out.find("geneve external"), std::string::npos) << d.out;	// ip prints no port then
	{
		InNetns in(tb_->ns_b());
		ASSERT_TRUE(in.ok());
		auto devs = kernel_geneve_devs();
		ASSERT_TRUE(devs) << devs.error().msg;
		ASSERT_EQ(devs->size(), 1u);
		EXPECT_EQ((*devs)[0].name, "xo-gnv-6081");
		EXPECT_EQ((*devs)[0].port, 6081);
		EXPECT_TRUE((*devs)[0].collect_md);
		EXPECT_TRUE((*devs)[0].up) << "up, so its socket is open";
	}
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6081", "--nic"}, true));
	EXPECT_NE(out_.find("\"nic_device_created\":false"), std::string::npos) << out_;
	EXPECT_NE(port_entry(6081).find("\"refcnt\":2,\"nic_device\":\"xo-gnv-6081\""), std::string::npos)
		<< port_entry(6081);

	ASSERT_TRUE(tool_ok({"geneve", "port", "del", ifb, "6081"}));
	EXPECT_TRUE(link_exists("xo-gnv-6081")) << "one reference left";
	ASSERT_TRUE(tool_ok({"geneve", "port", "del", ifb, "6081"}));
	EXPECT_NE(out_.find("geneve device xo-gnv-6081 deleted"), std::string::npos) << out_;
	EXPECT_FALSE(link_exists("xo-gnv-6081")) << "gone with the last reference";

	// someone else's device on the port already tells the NICs: none made
	ASSERT_TRUE(ip({"link", "add", "genev_sys_6081", "type", "geneve", "external", "dstport", "6081"}).ok());
	ASSERT_TRUE(ip({"link", "set", "genev_sys_6081", "up"}).ok());
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6081", "--nic"}));
	EXPECT_NE(out_.find("the kernel's geneve device genev_sys_6081 holds it"), std::string::npos) << out_;
	EXPECT_FALSE(link_exists("xo-gnv-6081"));
	ASSERT_TRUE(tool_ok({"geneve", "port", "del", ifb, "6081"}));
	EXPECT_TRUE(link_exists("genev_sys_6081")) << "not ours to delete";
}

// detach --purge deletes the --nic devices of the registry it removes (one
// line each), not a device it found holding the port, and runs again after
// a device went by hand.
TEST_F(GeneveNic, PurgeDeletesTheNicDevicesOfTheRegistry)
{
	if (!geneve_module())
		GTEST_SKIP() << "needs the geneve module (tools/vm-test guests have it)";
	const std::string &ifb = tb_->if_b();
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6081", "--nic"}));
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6081", "--nic"}));	// refs 2, one device
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6082", "--nic"}));
	ASSERT_TRUE(ip({"link", "add", "gnv-other", "type", "geneve", "external", "dstport", "6083"}).ok());
	ASSERT_TRUE(ip({"link", "set", "gnv-other", "up"}).ok());
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6083", "--nic"}));	// held by gnv-other
	ASSERT_TRUE(link_exists("xo-gnv-6081") && link_exists("xo-gnv-6082"));

	ASSERT_TRUE(tool_ok({"detach", ifb, "--purge"}));
	EXPECT_NE(out_.find("deleted geneve device xo-gnv-6081 "), std::string::npos) << out_;
	EXPECT_NE(out_.find("deleted geneve device xo-gnv-6082 "), std::string::npos) << out_;
	size_t lines = 0;
	for (size_t at = out_.find("deleted geneve device"); at != std::string::npos;
	     at = out_.find("deleted geneve device", at + 1))
		lines++;
	EXPECT_EQ(lines, 2u) << "one line a device, none for gnv-other:\n" << out_;
	EXPECT_FALSE(link_exists("xo-gnv-6081"));
	EXPECT_FALSE(link_exists("xo-gnv-6082"));
	EXPECT_TRUE(link_exists("gnv-other")) << "not ours to delete";
	EXPECT_FALSE(pins_left()) << "pins left";

	// a device deleted by hand before the purge: the purge still succeeds
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6081", "--nic"}));
	ASSERT_TRUE(ip({"link", "del", "xo-gnv-6081"}).ok());
	ASSERT_TRUE(tool_ok({"detach", ifb, "--purge"}, true));
	EXPECT_NE(out_.find("\"nic_devices_deleted\":[]"), std::string::npos) << out_;
	EXPECT_FALSE(pins_left()) << "pins left";
}

// detach --all-orphans: a registry whose interface is gone takes its --nic
// devices with it, deleted in the registry's own netns (the command runs
// in another), one line each; a device not ours stays.
TEST_F(GeneveNic, AllOrphansDeletesTheNicDevicesOfAnOrphanedRegistry)
{
	if (!geneve_module())
		GTEST_SKIP() << "needs the geneve module (tools/vm-test guests have it)";
	const std::string &ifb = tb_->if_b();
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6081", "--nic"}));
	ASSERT_TRUE(ip({"link", "add", "gnv-other", "type", "geneve", "external", "dstport", "6083"}).ok());
	ASSERT_TRUE(ip({"link", "set", "gnv-other", "up"}).ok());
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6083", "--nic"}));	// held by gnv-other
	ASSERT_TRUE(link_exists("xo-gnv-6081"));
	ASSERT_TRUE(ip({"link", "del", "dev", ifb}).ok());	// the registry is an orphan now
	ASSERT_TRUE(pins_left());

	CmdResult r = run_cmd({tool_, "detach", "--all-orphans"}, kCmdTimeout);	// from the initial netns
	ASSERT_EQ(r.exit_code, 0) << r.describe();
	EXPECT_NE(r.out.find("deleted geneve device xo-gnv-6081 (made by geneve port add --nic for port 6081)"),
		  std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("gnv-other"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("removed orphaned pins " + pin_dir_b()), std::string::npos) << r.out;
	EXPECT_FALSE(link_exists("xo-gnv-6081")) << "the orphan's --nic device is still there";
	EXPECT_TRUE(link_exists("gnv-other")) << "not ours to delete";
	EXPECT_FALSE(pins_left()) << "pins left";
}

// Runs without the geneve module: a registry that recorded a --nic device
// (XO_GNV_PORT_F_NIC) whose name is now a device of another kind; purge
// leaves that device, says nothing of it and removes the pins.
TEST_F(GeneveNic, PurgeLeavesADeviceOfOurNameThatIsNotOurs)
{
	const std::string &ifb = tb_->if_b();
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6081"}));
	{
		const std::string path = pin_dir_b() + "/xo_gnv_ports";
		int fd = bpf_obj_get(path.c_str());
		ASSERT_GE(fd, 0) << path;
		__u32 key = 6081;
		xo_gnv_port v{};
		ASSERT_EQ(bpf_map_lookup_elem(fd, &key, &v), 0);
		v.flags |= XO_GNV_PORT_F_NIC;	// as port add --nic records it
		ASSERT_EQ(bpf_map_update_elem(fd, &key, &v, BPF_EXIST), 0);
		::close(fd);
	}
	ASSERT_TRUE(ip({"link", "add", "xo-gnv-6081", "type", "veth", "peer", "name", "xo-gnv-6081p"}).ok());
	ASSERT_TRUE(tool_ok({"detach", ifb, "--purge"}));
	EXPECT_EQ(out_.find("geneve device"), std::string::npos) << out_;
	EXPECT_NE(out_.find("removed pins"), std::string::npos) << out_;
	EXPECT_TRUE(link_exists("xo-gnv-6081")) << "a veth of our name is not ours";
	EXPECT_FALSE(pins_left()) << "pins left";
}

TEST_F(GeneveNic, SyncFollowsTheKernelsGeneveDevices)
{
	if (!geneve_module())
		GTEST_SKIP() << "needs the geneve module (tools/vm-test guests have it)";
	const std::string &ifb = tb_->if_b();
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6081"}));	// by hand
	ASSERT_TRUE(ip({"link", "add", "genev_sys_6081", "type", "geneve", "external", "dstport", "6081"}).ok());
	ASSERT_TRUE(ip({"link", "add", "gnv7000", "type", "geneve", "id", "5", "remote", "192.0.2.1", "dstport",
			"7000"})
			    .ok());
	ASSERT_TRUE(ip({"link", "add", "gnv7001", "type", "geneve", "id", "6", "remote", "192.0.2.1", "dstport",
			"7001"})
			    .ok());	// stays down: no socket, no port
	ASSERT_TRUE(ip({"link", "set", "genev_sys_6081", "up"}).ok());
	ASSERT_TRUE(ip({"link", "set", "gnv7000", "up"}).ok());

	ASSERT_TRUE(tool_ok({"geneve", "port", "sync", ifb}));
	EXPECT_NE(out_.find("Geneve port 7000 added (geneve device gnv7000"), std::string::npos) << out_;
	EXPECT_NE(port_entry(6081).find("\"refcnt\":2,"), std::string::npos) << port_entry(6081);
	EXPECT_NE(port_entry(6081).find("\"sync\":true"), std::string::npos) << port_entry(6081);
	EXPECT_NE(port_entry(7000).find("\"refcnt\":1,"), std::string::npos) << port_entry(7000);
	EXPECT_EQ(port_entry(7001), "") << "a device that is down holds no port";
	ASSERT_TRUE(tool_ok({"geneve", "port", "sync", ifb}));
	EXPECT_NE(out_.find("in sync"), std::string::npos) << "twice: nothing more\n" << out_;
	EXPECT_NE(port_entry(6081).find("\"refcnt\":2,"), std::string::npos) << port_entry(6081);

	ASSERT_TRUE(ip({"link", "del", "genev_sys_6081"}).ok());
	ASSERT_TRUE(ip({"link", "set", "gnv7000", "down"}).ok());
	ASSERT_TRUE(tool_ok({"geneve", "port", "sync", ifb}));
	EXPECT_NE(port_entry(6081).find("\"refcnt\":1,"), std::string::npos) << "the hand-made one stays\n"
									 << port_entry(6081);
	EXPECT_NE(port_entry(6081).find("\"sync\":false"), std::string::npos) << port_entry(6081);
	EXPECT_EQ(port_entry(7000), "") << "sync's own port went with its device";
}

TEST_F(GeneveNic, SyncWatchFollowsLinkEventsUntilSigterm)
{
	if (!geneve_module())
		GTEST_SKIP() << "needs the geneve module (tools/vm-test guests have it)";
	const std::string &ifb = tb_->if_b();
	BackgroundCmd w({tool_, "-n", tb_->ns_b(), "geneve", "port", "sync", ifb, "--watch"});
	ASSERT_TRUE(w.wait_for_output("following the Geneve devices", 10)) << "watch did not start";
	ASSERT_TRUE(ip({"link", "add", "gnv7100", "up", "type", "geneve", "id", "5", "remote", "192.0.2.1",
			"dstport", "7100"})
			    .ok());
	EXPECT_TRUE(w.wait_for_output("Geneve port 7100 added", 10));
	EXPECT_NE(port_entry(7100).find("\"sync\":true"), std::string::npos) << port_entry(7100);
	ASSERT_TRUE(ip({"link", "del", "gnv7100"}).ok());
	EXPECT_TRUE(w.wait_for_output("Geneve port 7100 removed", 10));
	EXPECT_EQ(port_entry(7100), "");
	ASSERT_TRUE(w.signal(SIGTERM));
	CmdResult r = w.wait(10);
	EXPECT_EQ(r.exit_code, 0) << r.describe();
	EXPECT_FALSE(r.timed_out);
}

// The bytes Debian's kernel sends for Geneve devices, printed for
// tests/unit/test_geneve_kernel.cpp (RECORDED <name> <hex>), and parsed.
TEST_F(GeneveNic, RecordGeneveLinkMessages)
{
	if (!geneve_module())
		GTEST_SKIP() << "needs the geneve module (tools/vm-test guests have it)";
	ASSERT_TRUE(ip({"link", "add", "gnvrec0", "type", "geneve", "external", "dstport", "6081"}).ok());
	ASSERT_TRUE(ip({"link", "set", "gnvrec0", "up"}).ok());
	ASSERT_TRUE(ip({"link", "add", "gnvrec1", "type", "geneve", "id", "77", "remote", "192.0.2.1", "dstport",
			"7000"})
			    .ok());
	InNetns in(tb_->ns_b());
	ASSERT_TRUE(in.ok());
	for (const char *name : {"gnvrec0", "gnvrec1"}) {
		auto sock = nl::Socket::open(NETLINK_ROUTE);
		ASSERT_TRUE(sock);
		nl::Message msg;
		msg.header()->nlmsg_type = RTM_GETLINK;
		msg.put_extra<ifinfomsg>()->ifi_family = AF_UNSPEC;
		mnl_attr_put_strz(msg.header(), IFLA_IFNAME, name);
		std::optional<KernelGeneveDev> d;
		auto s = sock->request(msg, "get link", [&](const nlmsghdr *h) {
			std::string hex;
			auto *b = reinterpret_cast<const uint8_t *>(h);
			for (uint32_t i = 0; i < h->nlmsg_len; i++) {
				char x[3];
				std::snprintf(x, sizeof(x), "%02x", b[i]);
				hex += x;
			}
			std::printf("RECORDED %s %s\n", name, hex.c_str());
			d = parse_geneve_link(h);
			return MNL_CB_OK;
		});
		ASSERT_TRUE(s) << s.error().msg;
		ASSERT_TRUE(d) << name;
		EXPECT_EQ(d->name, name);
		EXPECT_EQ(d->port, std::string(name) == "gnvrec0" ? 6081 : 7000);
		EXPECT_EQ(d->collect_md, std::string(name) == "gnvrec0");
		EXPECT_EQ(d->up, std::string(name) == "gnvrec0");
	}
	std::fflush(stdout);
}

} // namespace
} // namespace xoffload::test
