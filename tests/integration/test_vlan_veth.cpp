// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// VLAN programs on a real veth pair in fresh namespaces: frames sent from A
// must arrive on B byte for byte as the packet builder predicts, and only
// because of the program (every test checks the result without it first).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <thread>

#include "packet_builder.hpp"
#include "xoffload/abi.h"
#include "xoffload/bpf/loader.hpp"
#include "xoffload/core/netdev.hpp"
#include "xoffload/features/features.hpp"
#include "testbed.hpp"

namespace xoffload::test {
namespace {

constexpr size_t kPayload = 32;
constexpr double kCaptureTimeout = 3.0;	// every frame we wait for comes within ms
constexpr double kCmdTimeout = 20.0;

// The tests that load through xdp-loader (xdp-tools) skip without it.
#define XO_SKIP_WITHOUT_XDP_LOADER()                                                     \
	do {                                                                             \
		if (run_cmd({"xdp-loader", "--help"}, kCmdTimeout).exit_code == 127)     \
			GTEST_SKIP() << "xdp-loader is not installed (xdp-tools)";       \
	} while (0)

struct Tag {
	uint16_t tpid;
	uint16_t vid;
	uint8_t pcp = 0;
	bool dei = false;
};
using Tags = std::vector<Tag>;

const Tag kQ100{kTpid8021Q, 100};
const Tag kQ200{kTpid8021Q, 200};
const Tag kAd100{kTpid8021AD, 100};

// Frame i of an `xo-pkt send` run with these tags and --size frame_size(tags),
// built independently of xo-pkt.
Bytes frame(const Tags &tags, unsigned i, const Mac &dst = kMacB, size_t payload = kPayload)
{
	PacketBuilder pb;
	pb.eth(dst, kMacA);
	for (const Tag &t : tags)
		pb.vlan(t.tpid, t.vid, t.pcp, t.dei);
	return pb.ipv4(kIpA, kIpB, 64, static_cast<uint16_t>(i + 1))
		.udp(kPortA, kPortB)
		.payload(payload, static_cast<uint8_t>(i))
		.build();
}

size_t frame_size(const Tags &tags, size_t payload = kPayload)
{
	return kEthHdrLen + tags.size() * kVlanHdrLen + 20 + 8 + payload;
}

std::string mac_str(const Mac &m)
{
	char b[18];
	std::snprintf(b, sizeof(b), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return b;
}

Bytes unhex(const std::string &s)
{
	Bytes b;
	for (size_t i = 0; i + 1 < s.size(); i += 2)
		b.push_back(static_cast<uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
	return b;
}

// The frames of `xo-pkt capture --json --hex` output, in arrival order.
std::vector<Bytes> parse_frames(const std::string &out)
{
	std::vector<Bytes> frames;
	const std::string key = "\"hex\":\"";
	for (size_t p = out.find(key); p != std::string::npos; p = out.find(key, p)) {
		p += key.size();
		size_t e = out.find('"', p);
		frames.push_back(unhex(out.substr(p, e - p)));
		p = e;
	}
	return frames;
}

struct Endpoint {
	std::string ns, ifname;
};

struct UniqueFdLite {
	int fd = -1;
	~UniqueFdLite()
	{
		if (fd >= 0)
			::close(fd);
	}
};

class VlanVeth : public TestbedTest {
protected:
	bool needs_bpffs() const override { return true; }
	void SetUp() override
	{
		TestbedTest::SetUp();
		if (IsSkipped() || HasFatalFailure())
			return;
		pkt_ = env_or_empty("XO_PKT");
		bpf_dir_ = env_or_empty("XO_BPF_DIR");
		ASSERT_FALSE(pkt_.empty() || bpf_dir_.empty()) << "XO_PKT and XO_BPF_DIR must be set (run through ctest)";
		a_ = {tb_->ns_a(), tb_->if_a()};
		b_ = {tb_->ns_b(), tb_->if_b()};
		char tmpl[] = "/tmp/xo-int-XXXXXX";
		ASSERT_NE(mkdtemp(tmpl), nullptr);
		tmp_ = tmpl;
	}

	void TearDown() override
	{
		if (!tmp_.empty())
			(void)run_cmd({"rm", "-rf", tmp_}, 10);
		TestbedTest::TearDown();
	}

	// [env ENV] offload-tool [--json] -n NS args...
	CmdResult tool(const std::string &ns, std::vector<std::string> args, bool json = false,
		       const std::string &env = "")
	{
		std::vector<std::string> argv;
		if (!env.empty())
			argv = {"env", env};
		argv.push_back(tool_);
		if (json)
			argv.push_back("--json");
		argv.insert(argv.end(), {"-n", ns});
		argv.insert(argv.end(), args.begin(), args.end());
		CmdResult r = run_cmd(argv, kCmdTimeout);
		last_cmd_ = join_cmd(argv);
		return r;
	}

	// Runs offload-tool and records a labelled failure unless it exits 0.
	bool tool_ok(const std::string &ns, std::vector<std::string> args)
	{
		CmdResult r = tool(ns, std::move(args));
		EXPECT_EQ(r.exit_code, 0) << last_cmd_ << ": " << r.describe();
		return r.ok();
	}

	// Arms a capture of `count` frames from kMacA on rx; returns once the
	// socket is bound (the ready file exists), or nullptr after recording why.
	std::unique_ptr<BackgroundCmd> start_capture(const Endpoint &rx, unsigned count, double timeout)
	{
		std::string ready = tmp_ + "/ready-" + std::to_string(++captures_);
		std::vector<std::string> argv{pkt_,	 "-n",	      rx.ns,  "capture",     rx.ifname,
					      "--count", std::to_string(count), "--timeout",
					      std::to_string(timeout), "--json", "--hex", "--ready-file",
					      ready,	 "--src-mac", mac_str(kMacA)};
		auto cap = std::make_unique<BackgroundCmd>(argv);
		for (int i = 0; i < 500; i++) {	// up to 5 s
			if (access(ready.c_str(), F_OK) == 0)
				return cap;
			usleep(10000);
		}
		CmdResult r = cap->wait(1);
		ADD_FAILURE() << "capture never armed: " << join_cmd(argv) << ": " << r.describe();
		return nullptr;
	}

	// Sends `count` frames with `tags` from tx; records a failure if xo-pkt
	// does. Returns xo-pkt's summary line.
	std::string send(const Endpoint &tx, const Tags &tags, unsigned count, const Mac &dst = kMacB,
			 const std::vector<std::string> &extra = {}, size_t payload = kPayload)
	{
		std::vector<std::string> argv{pkt_, "-n", tx.ns, "send", tx.ifname, "--count", std::to_string(count),
					      "--size", std::to_string(frame_size(tags, payload)), "--dst-mac", mac_str(dst)};
		argv.insert(argv.end(), extra.begin(), extra.end());
		for (const Tag &t : tags) {
			char v[40];
			std::snprintf(v, sizeof(v), "0x%04x:%u:%u:%u", t.tpid, t.vid, t.pcp, t.dei ? 1u : 0u);
			argv.insert(argv.end(), {"--vlan", v});
		}
		CmdResult r = run_cmd(argv, kCmdTimeout);
		EXPECT_EQ(r.exit_code, 0) << join_cmd(argv) << ": " << r.describe();
		return r.out;
	}

	// Sends `count` frames with `tags` from tx and returns what rx saw, at
	// most `want` frames (waiting up to the capture timeout for them).
	std::vector<Bytes> exchange(const Endpoint &tx, const Endpoint &rx, const Tags &tags, unsigned count,
				    unsigned want, const Mac &dst = kMacB, const std::vector<std::string> &extra = {})
	{
		auto cap = start_capture(rx, want, kCaptureTimeout);
		if (!cap)
			return {};
		send(tx, tags, count, dst, extra);
		CmdResult r = cap->wait(kCaptureTimeout + 5);
		// 0: all `want` frames came; 3: the timeout passed first
		EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << "capture: " << r.describe();
		return parse_frames(r.out);
	}

	std::vector<Bytes> exchange(const Tags &tags, unsigned count, const Mac &dst = kMacB)
	{
		return exchange(a_, b_, tags, count, count, dst);
	}

	// Every frame i in `got` equals want(i), and there are exactly n.
	static void expect_frames(const std::vector<Bytes> &got, unsigned n,
				  const std::function<Bytes(unsigned)> &want, const std::string &label)
	{
		EXPECT_EQ(got.size(), n) << label << ": frames received";
		for (unsigned i = 0; i < got.size() && i < n; i++)
			EXPECT_EQ(hexdump(got[i]), hexdump(want(i))) << label << ": frame " << i;
	}

	// One counter (packets, or bytes) of `offload-tool --json vlan stats`; -1 if absent.
	long long counter(const Endpoint &e, const std::string &hook, const std::string &reason,
			  const std::string &what = "packets")
	{
		CmdResult r = tool(e.ns, {"vlan", "stats", e.ifname}, true);
		EXPECT_EQ(r.exit_code, 0) << last_cmd_ << ": " << r.describe();
		// keys in snake_case: "tc_egress", "dropped_not_allowed"
		auto snake = [](std::string k) {
			std::replace(k.begin(), k.end(), '-', '_');
			return k;
		};
		size_t h = r.out.find("\"" + snake(hook) + "\":{");
		if (h == std::string::npos)
			return -1;
		std::string key = "\"" + snake(reason) + "\":{";
		size_t p = r.out.find(key, h);
		if (p == std::string::npos)
			return -1;
		std::string field = "\"" + what + "\":";
		size_t q = r.out.find(field, p);
		size_t end = r.out.find('}', p);
		if (q == std::string::npos || q > end)
			return -1;
		return std::atoll(r.out.c_str() + q + field.size());
	}

	std::string pin_dir(const Endpoint &e) const { return "/sys/fs/bpf/xoffload/" + e.ifname + "@" + e.ns; }

	// Sets the MTU of @e's interface; false (with the reason recorded) when
	// ip refuses.
	bool set_mtu(const Endpoint &e, unsigned mtu)
	{
		CmdResult r = run_cmd({"ip", "-n", e.ns, "link", "set", "dev", e.ifname, "mtu", std::to_string(mtu)},
				      kCmdTimeout);
		EXPECT_TRUE(r.ok()) << r.describe();
		return r.ok();
	}

	// After an XDP attach that succeeded: its stderr says why @entry runs
	// as a single program, in one "xoffload: ..." line, exactly when
	// status shows a single program; behind libxdp's dispatcher, nothing.
	// Where attach composed it (the dispatcher cannot chain ours), its
	// output names the composed entry of @entry's kind and the stage, status
	// shows the composed program with the probe's answer, and stderr is
	// silent about a single program.
	void expect_attach_note(const CmdResult &at, const Endpoint &e, const std::string &entry)
	{
		CmdResult st = tool(e.ns, {"status", e.ifname}, true);
		const std::string tail = "attached " + entry + " as a single program\n";
		if (st.out.find("\"composed\":{") != std::string::npos) {
			EXPECT_TRUE(names_xdp_entry(at.out, entry)) << entry << " composed: " << at.out;
			EXPECT_NE(at.out.find("at xdp: composed program"), std::string::npos) << at.out;
			EXPECT_NE(json_str(st.out, "reason"), "") << "composed, and why: " << st.out;
			EXPECT_EQ(at.err.find("single program"), std::string::npos) << "composed: " << at.err;
		} else if (st.out.find("\"multiprog\":false") != std::string::npos) {
			EXPECT_EQ(std::count(at.err.begin(), at.err.end(), '\n'), 1) << "single program: one line: " << at.err;
			EXPECT_EQ(at.err.rfind("xoffload: ", 0), 0u) << at.err;
			EXPECT_TRUE(at.err.size() >= tail.size() &&
				    at.err.compare(at.err.size() - tail.size(), tail.size(), tail) == 0)
				<< "the line ends in \"" << tail << "\": " << at.err;
		} else {
			EXPECT_NE(st.out.find("\"multiprog\":true"), std::string::npos) << st.out;
			EXPECT_EQ(at.err.find("single program"), std::string::npos) << "behind the dispatcher: " << at.err;
		}
	}

	static bool one_line(const CmdResult &r) { return std::count(r.err.begin(), r.err.end(), '\n') == 1; }

	// Nothing of ours on the interface: no program, no filter, no pins.
	void expect_clean(const Endpoint &e, const std::string &when)
	{
		std::string where = when + " (" + e.ns + "/" + e.ifname + ")";
		CmdResult st = tool(e.ns, {"status", e.ifname}, true);
		EXPECT_EQ(st.exit_code, 0) << where << ": " << last_cmd_ << ": " << st.describe();
		EXPECT_NE(st.out.find("\"attached\":[]"), std::string::npos) << where << ": status: " << st.out;
		EXPECT_NE(st.out.find("\"programs\":[]"), std::string::npos) << where << ": status: " << st.out;
		EXPECT_NE(st.out.find("\"pinned\":false"), std::string::npos) << where << ": status: " << st.out;
		CmdResult link = run_cmd({"ip", "-n", e.ns, "-d", "link", "show", "dev", e.ifname}, kCmdTimeout);
		EXPECT_EQ(link.exit_code, 0) << link.describe();
		EXPECT_EQ(link.out.find("xdp"), std::string::npos) << where << ": XDP still attached: " << link.out;
		for (const char *dir : {"ingress", "egress"}) {
			CmdResult f = run_cmd({"tc", "-n", e.ns, "filter", "show", "dev", e.ifname, dir}, kCmdTimeout);
			EXPECT_EQ(f.exit_code, 0) << f.describe();
			EXPECT_EQ(f.out, "") << where << ": tc " << dir << " filter left: " << f.out;
		}
		CmdResult q = run_cmd({"tc", "-n", e.ns, "qdisc", "show", "dev", e.ifname}, kCmdTimeout);
		EXPECT_EQ(q.exit_code, 0) << q.describe();
		EXPECT_EQ(q.out.find("clsact"), std::string::npos) << where << ": clsact qdisc left: " << q.out;
		struct stat sb {};
		EXPECT_NE(::stat(pin_dir(e).c_str(), &sb), 0) << where << ": pins left in " << pin_dir(e);
	}

	void expect_all_clean(const std::string &when)
	{
		expect_clean(a_, when);
		expect_clean(b_, when);
	}

	// Detaches everything of ours from e, then checks both ends are clean.
	void detach_and_check(const Endpoint &e)
	{
		tool_ok(e.ns, {"detach", e.ifname});
		expect_all_clean("after detach");
	}

	// TC ingress runs after AF_PACKET taps, so a capture on B's veth sees
	// frames before it. An nftables netdev ingress chain on B's veth (it
	// runs after TC ingress) forwards every frame, as TC ingress left it,
	// out of veth-c, and veth-d captures it: nft_fwd_netdev pushes back
	// skb->mac_len bytes of MAC header, VLAN tags in skb metadata stay.
	//
	// Not a bridge: after bpf_skb_vlan_push() moved a metadata tag into the
	// packet (push onto a tagged frame, rewrite of a QinQ outer tag), the
	// MAC header is 18 bytes, and the 6.1 bridge pushes back ETH_HLEN only
	// (br_dev_queue_push_xmit()): it forwarded such frames 4 bytes off, the
	// first 4 bytes of the destination MAC cut (seen in Debian's 6.1 under
	// tools/vm-test; 6.12 and later forward them whole).
	Endpoint ingress_tap()
	{
		const std::string &ns = b_.ns;
		CmdResult v = run_cmd({"nft", "--version"}, kCmdTimeout);
		if (v.exit_code == 127) {
			ADD_FAILURE() << "nft is not installed (nftables; tools/setup installs it)";
			return {};
		}
		const std::vector<std::vector<std::string>> cmds = {
			{"ip", "-n", ns, "link", "add", "veth-c", "type", "veth", "peer", "name", "veth-d"},
			{"ip", "-n", ns, "link", "set", "veth-c", "up"},
			{"ip", "-n", ns, "link", "set", "veth-d", "up"},
			{"ip", "netns", "exec", ns, "nft", "add", "table", "netdev", "xo_tap"},
			{"ip", "netns", "exec", ns, "nft", "add", "chain", "netdev", "xo_tap", "in",
			 "{ type filter hook ingress device \"" + b_.ifname + "\" priority 0; }"},
			{"ip", "netns", "exec", ns, "nft", "add", "rule", "netdev", "xo_tap", "in", "fwd", "to", "\"veth-c\""},
		};
		for (const auto &c : cmds) {
			CmdResult r = run_cmd(c, kCmdTimeout);
			EXPECT_EQ(r.exit_code, 0) << join_cmd(c) << ": " << r.describe();
		}
		return {ns, "veth-d"};
	}

	std::string pkt_, bpf_dir_, tmp_, last_cmd_;
	Endpoint a_, b_;
	unsigned captures_ = 0;
};

// ---- XDP (on B's ingress; a capture on B sees frames after XDP) -------------

TEST_F(VlanVeth, XdpNativePop)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	const unsigned n = 3;
	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({kQ100}, i); },
		      "negative: no program, the 802.1Q tag arrives");

	CmdResult at = tool(b_.ns, {"attach", b_.ifname, "vlan", "--hook", "xdp", "--mode", "native",
				    "--no-tag-kfunc"});  // the plain entry (xdp_vlan_tag: VlanMeta)
	ASSERT_EQ(at.exit_code, 0) << last_cmd_ << ": " << at.describe();
	expect_attach_note(at, b_, "xdp_vlan");
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname}));
	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({}, i); },
		      "xdp native pop: untagged on B");
	EXPECT_EQ(counter(b_, "xdp", "popped"), n) << "popped counter";
	EXPECT_EQ(counter(b_, "xdp", "dropped-malformed"), 0) << "malformed counter";
	detach_and_check(b_);
}

// xdp_rearm() (what the agent does for vmxnet3 after a close) swaps the
// native program for a stand-in and back: the hook lists the same program
// id after it, and that program pops as before, its counters going on. A
// hook without a native program (A's: none) is left alone (false).
TEST_F(VlanVeth, RearmPutsTheSameProgramBack)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	const unsigned n = 3;
	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan", "--hook", "xdp", "--mode", "native", "--no-tag-kfunc"}));
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname}));
	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({}, i); }, "pop before the re-arm");
	auto hook_id = [](const Endpoint &e) -> uint32_t {
		InNetns in(e.ns);
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		return in.ok() && bpf_xdp_query(static_cast<int>(if_nametoindex(e.ifname.c_str())), 0, &q) == 0
			       ? q.drv_prog_id
			       : 0;
	};
	const uint32_t before = hook_id(b_);
	ASSERT_NE(before, 0u) << "no native program on " << b_.ifname;
	// status warns where the driver forgets its program at a close (vmxnet3), only there
	const std::string drv = nic_driver(b_.ns, b_.ifname);
	CmdResult st = tool(b_.ns, {"status", b_.ifname});
	EXPECT_EQ(st.out.find("drops its XDP program at every link down") != std::string::npos,
		  !drv.empty() && features::nic_facts_running(drv).xdp_lost_on_close.value)
		<< (drv.empty() ? "veth" : drv) << ": " << st.out;
	// B through `offload-tool rearm`; A, whose hook is empty, through
	// xdp_rearm() (false: nothing to do) and the CLI (exit 1, one line)
	CmdResult rb = tool(b_.ns, {"rearm", b_.ifname}, true);
	ASSERT_TRUE(rb.ok()) << rb.describe();
	EXPECT_NE(rb.out.find("\"prog_id\":" + std::to_string(before)), std::string::npos) << rb.out;
	{
		InNetns in(a_.ns);
		ASSERT_TRUE(in.ok());
		auto dev = netdev_lookup(a_.ifname);
		ASSERT_TRUE(dev) << dev.error().msg;
		auto r = xdp_rearm(*dev);
		ASSERT_TRUE(r) << r.error().msg;
		EXPECT_FALSE(*r) << a_.ifname << ": re-armed only where a native program runs";
	}
	CmdResult ra = tool(a_.ns, {"rearm", a_.ifname});
	EXPECT_EQ(ra.exit_code, 1) << ra.describe();
	EXPECT_NE(ra.err.find("nothing to rearm"), std::string::npos) << ra.describe();
	EXPECT_EQ(std::count(ra.err.begin(), ra.err.end(), '\n'), 1) << "one line: " << ra.err;
	EXPECT_EQ(hook_id(b_), before) << "the same program is back on the hook";
	EXPECT_EQ(hook_id(a_), 0u) << "nothing was put on A's hook";
	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({}, i); }, "pop after the re-arm");
	EXPECT_EQ(counter(b_, "xdp", "popped"), 2 * n) << "the same maps count on";
	// a rearm's stand-in on the hook (another rearm midway, or one that
	// failed): refused, not swapped for good; the program put back by hand
	{
		InNetns in(b_.ns);
		ASSERT_TRUE(in.ok());
		const int ifindex = static_cast<int>(if_nametoindex(b_.ifname.c_str()));
		const bpf_insn pass[] = {
			{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS},
			{.code = BPF_JMP | BPF_EXIT},
		};
		int ours = bpf_prog_get_fd_by_id(before);
		int stand_in = bpf_prog_load(BPF_PROG_TYPE_XDP, "xo_rearm", "GPL", pass, 2, nullptr);
		ASSERT_GE(ours, 0);
		ASSERT_GE(stand_in, 0);
		LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = ours);
		ASSERT_EQ(bpf_xdp_attach(ifindex, stand_in, XDP_FLAGS_REPLACE | XDP_FLAGS_DRV_MODE, &o), 0);
		CmdResult r = tool(b_.ns, {"rearm", b_.ifname});
		EXPECT_EQ(r.exit_code, 1) << r.describe();
		EXPECT_NE(r.err.find("stand-in"), std::string::npos) << r.describe();
		LIBBPF_OPTS(bpf_xdp_attach_opts, back, .old_prog_fd = stand_in);
		EXPECT_EQ(bpf_xdp_attach(ifindex, ours, XDP_FLAGS_REPLACE | XDP_FLAGS_DRV_MODE, &back), 0);
		close(stand_in);
		close(ours);
	}
	EXPECT_EQ(hook_id(b_), before);
	detach_and_check(b_);
}

// The agent follows a NIC renamed by its permanent MAC (xoffload.toml's
// mac = key, no name): B declared by MAC only gets pop at start; renamed
// (down, new name, up), the same policy runs under the new name within 1 s,
// tagged frames from A arrive untagged, and the pop counter goes on from
// where it was (the pins moved with the name, nothing was attached anew). A
// veth has no permanent MAC: skipped there (tests/tools/check-agent renames
// one by name). Runs on the emulated NICs (tools/vm-test --suites nics).
TEST_F(VlanVeth, AgentFollowsARenamedNicByPermanentMac)
{
	CmdResult e = run_cmd({"ip", "netns", "exec", b_.ns, "ethtool", "-P", b_.ifname}, kCmdTimeout);
	ASSERT_EQ(e.exit_code, 0) << "ethtool -P " << b_.ifname << ": " << e.describe();
	// ethtool 6.1: "Permanent address: not set" on a veth; older ones print zeros
	std::smatch m;
	const std::regex perm_re("Permanent address: ([0-9a-f:]{17})");
	if (!std::regex_search(e.out, m, perm_re) || m[1] == "00:00:00:00:00:00")
		GTEST_SKIP() << b_.ifname << " has no permanent MAC (" << e.out.substr(0, e.out.find('\n'))
			     << "; a veth): check-agent covers a rename by name";
	const std::string perm = m[1];
	const bool native = no_native_xdp(b_.ns, b_.ifname).empty();
	const std::string conf = tmp_ + "/xoffload.toml";
	std::ofstream(conf) << "[[interface]]\nmac = \"" << perm << "\"\nnetns = \"" << b_.ns << "\"\nmode = \""
			    << (native ? "native" : "skb")
			    << "\"\n[interface.vlan]\nhooks = [\"xdp\"]\n[interface.vlan.ingress]\naction = \"pop\"\n";
	// the renamed NIC goes back to its name whatever happens below: the
	// testbed gives NICs back by name
	const std::string renamed = "xorn" + std::to_string(::getpid() % 100000);
	struct RenameBack {
		const Endpoint &b;
		std::string to;
		bool armed = false;
		~RenameBack()
		{
			if (!armed)
				return;
			(void)run_cmd({"ip", "-n", b.ns, "link", "set", to, "down"}, 10);
			(void)run_cmd({"ip", "-n", b.ns, "link", "set", to, "name", b.ifname}, 10);
			(void)run_cmd({"ip", "-n", b.ns, "link", "set", b.ifname, "up"}, 10);
		}
	} back{b_, renamed};

	auto popping = [&](const std::string &ifname) {
		CmdResult r = tool(b_.ns, {"vlan", "show", ifname}, true);
		return r.ok() && r.out.find("\"action\":\"pop\"") != std::string::npos;
	};
	// the agent's log (stderr) on stdout, where wait_for_output looks
	BackgroundCmd agent({"sh", "-c", "exec \"$0\" \"$@\" 2>&1", tool_, "-n", b_.ns, "agent", "-f", conf,
			     "--keep-undeclared", "--metrics", ""});
	ASSERT_TRUE(agent.started());
	bool up = false;
	for (int i = 0; i < 400 && !(up = popping(b_.ifname)); i++)	// 20 s, the first apply loads programs
		usleep(50000);
	ASSERT_TRUE(up) << "the agent did not apply pop to " << b_.ifname << " (permanent MAC " << perm << ")";
	const unsigned n = 3;
	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({}, i); }, "pop by MAC, before the rename");
	EXPECT_EQ(counter(b_, "xdp", "popped"), n) << "popped counter before the rename";

	for (const std::vector<std::string> &c : {std::vector<std::string>{"ip", "-n", b_.ns, "link", "set", b_.ifname, "down"},
						  {"ip", "-n", b_.ns, "link", "set", b_.ifname, "name", renamed},
						  {"ip", "-n", b_.ns, "link", "set", renamed, "up"}}) {
		CmdResult r = run_cmd(c, kCmdTimeout);
		ASSERT_EQ(r.exit_code, 0) << join_cmd(c) << ": " << r.describe();
		back.armed = true;
	}
	const auto t0 = std::chrono::steady_clock::now();
	bool follows = false;
	for (int i = 0; i < 200 && !(follows = popping(renamed)); i++)	// 10 s at most; asserted below: 1 s
		usleep(20000);
	const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
	ASSERT_TRUE(follows) << "pop never showed under the new name " << renamed;
	// 1 s on a machine; under emulation (tools/vm-test's TCG guests, where
	// XO_TIMEOUT_SCALE says how much slower everything runs) stretched
	// alike: what took 125-290 ms there on an idle host took 1,096 on a
	// loaded one
	EXPECT_LE(ms, 1000 * timeout_scale()) << "the policy followed the rename after " << ms << " ms";
	std::printf("policy under the new name %s after %lld ms\n", renamed.c_str(), static_cast<long long>(ms));
	// a driver that forgets its program at a close (vmxnet3) has it handed
	// back by the agent after the re-plan, which resets the device: frames
	// go once that is done and the link has its carrier again
	const std::string drv = nic_driver(b_.ns, renamed);
	if (features::nic_facts_running(drv).xdp_lost_on_close.value) {
		EXPECT_TRUE(agent.wait_for_output(renamed + ": XDP program handed to " + drv + " again", 20))
			<< "the agent did not re-arm " << drv << "'s program after the link came back";
	}
	bool carrier = false;
	for (int i = 0; i < 500 && !carrier; i++) {	// 10 s
		CmdResult l = run_cmd({"ip", "-n", b_.ns, "link", "show", renamed}, kCmdTimeout);
		carrier = l.out.find("LOWER_UP") != std::string::npos;
		if (!carrier)
			usleep(20000);
	}
	EXPECT_TRUE(carrier) << renamed << " has no carrier 10 s after coming up";
	const Endpoint nb{b_.ns, renamed};
	expect_frames(exchange(a_, nb, {kQ100}, n, n), n, [](unsigned i) { return frame({}, i); },
		      "pop by MAC, after the rename");
	EXPECT_EQ(counter(nb, "xdp", "popped"), 2 * n) << "popped counter after the rename: the same maps go on";
	EXPECT_EQ(counter(nb, "xdp", "dropped-malformed"), 0) << "malformed counter";

	ASSERT_TRUE(agent.signal(SIGTERM));
	CmdResult ar = agent.wait(10);
	EXPECT_EQ(ar.exit_code, 0) << "agent on SIGTERM: " << ar.describe();
	EXPECT_EQ(ar.out.find("not in the file"), std::string::npos) << ar.out;
	tool_ok(b_.ns, {"detach", "--purge", renamed});
}

// The agent under real faults, with traffic (issue #36): B's file says pop,
// allow VID 100. A stream of VID 100 frames crosses a kill -9 of the agent
// and the start of a new one, which adopts what runs: every frame arrives,
// untagged (the capture and the pop counter count them), as the datapath
// never depends on the agent. Then SIGHUP with a broken file: refused, and
// the old policy is still enforced (VID 100 popped, VID 200 dropped and
// counted not-allowed).
class AgentVeth : public VlanVeth {
protected:
	void SetUp() override
	{
		VlanVeth::SetUp();
		if (IsSkipped() || HasFatalFailure())
			return;
		conf_ = tmp_ + "/xoffload.toml";
		write_conf("[interface.vlan.ingress]\naction = \"pop\"\nallow = [100]\n");
	}
	void TearDown() override
	{
		agent_.reset();
		if (tb_)
			(void)run_cmd({tool_, "-n", b_.ns, "detach", "--purge", b_.ifname}, kCmdTimeout);
		VlanVeth::TearDown();
	}
	void write_conf(const std::string &ingress)
	{
		const bool native = no_native_xdp(b_.ns, b_.ifname).empty();
		std::ofstream(conf_) << "[[interface]]\nname = \"" << b_.ifname << "\"\nnetns = \"" << b_.ns
				     << "\"\nmode = \"" << (native ? "native" : "skb")
				     << "\"\n[interface.vlan]\nhooks = [\"xdp\"]\n" << ingress;
	}
	// An agent for B's namespace, its log (stderr) on stdout.
	void start_agent()
	{
		agent_ = std::make_unique<BackgroundCmd>(std::vector<std::string>{
			"sh", "-c", "exec \"$0\" \"$@\" 2>&1", tool_, "-n", b_.ns, "agent", "-f", conf_,
			"--keep-undeclared", "--metrics", ""});
		ASSERT_TRUE(agent_->started());
	}
	bool allow_100_popping()
	{
		CmdResult r = tool(b_.ns, {"vlan", "show", b_.ifname}, true);
		return r.ok() && r.out.find("\"action\":\"pop\"") != std::string::npos &&
		       r.out.find("100") != std::string::npos;
	}
	bool wait_policy(double seconds)
	{
		for (int i = 0; i < seconds * 50; i++) {
			if (allow_100_popping())
				return true;
			usleep(20000);
		}
		return false;
	}
	std::vector<std::string> sender(const Tags &tags, unsigned count, unsigned gap_us)
	{
		std::vector<std::string> argv{pkt_, "-n", a_.ns, "send", a_.ifname, "--count", std::to_string(count),
					      "--size", std::to_string(frame_size(tags)), "--dst-mac", mac_str(kMacB),
					      "--gap-us", std::to_string(gap_us)};
		for (const Tag &t : tags)
			argv.insert(argv.end(), {"--vlan", "0x8100:" + std::to_string(t.vid)});
		return argv;
	}

	std::string conf_;
	std::unique_ptr<BackgroundCmd> agent_;
};

TEST_F(AgentVeth, KilledUnderTrafficLosesNoFrameAndARestartAdopts)
{
	start_agent();
	ASSERT_TRUE(wait_policy(30)) << "the agent did not apply pop, allow 100 to " << b_.ifname;
	// 600 frames 5 ms apart: 3 s of traffic, the kill at about 0.8 s
	const unsigned n = 600;
	auto cap = start_capture(b_, n, 60);
	ASSERT_TRUE(cap);
	BackgroundCmd tx(sender({kQ100}, n, 5000));
	ASSERT_TRUE(tx.started());
	usleep(800000);
	ASSERT_TRUE(agent_->signal(SIGKILL));
	CmdResult killed = agent_->wait(10);
	EXPECT_EQ(killed.signal, SIGKILL) << killed.describe();
	start_agent();
	EXPECT_TRUE(agent_->wait_for_output("start: nothing to change", 30))
		<< "the new agent did not adopt what runs with nothing to change";
	CmdResult sent = tx.wait(60);
	EXPECT_EQ(sent.exit_code, 0) << sent.describe();
	CmdResult got = cap->wait(60);
	EXPECT_EQ(got.exit_code, 0) << "capture: " << got.describe();
	expect_frames(parse_frames(got.out), n, [](unsigned i) { return frame({}, i); },
		      "VID 100 across kill -9 and a restart");
	EXPECT_EQ(counter(b_, "xdp", "popped"), n) << "popped counter";
	EXPECT_EQ(counter(b_, "xdp", "dropped-not-allowed"), 0) << "not-allowed counter";

	// SIGHUP with a broken file: refused, the old policy is still enforced
	write_conf("[interface.vlan.ingress]\naction = \"pop\"\ndepth = 3\n");
	ASSERT_TRUE(agent_->signal(SIGHUP));
	EXPECT_TRUE(agent_->wait_for_output("reload refused", 20)) << "no 'reload refused' after a broken file";
	const unsigned m = 50;
	expect_frames(exchange({kQ100}, m), m, [](unsigned i) { return frame({}, i); },
		      "VID 100 after the refused reload");
	send(a_, {kQ200}, m);
	for (int i = 0; i < 250 && counter(b_, "xdp", "dropped-not-allowed") < m; i++)	// 5 s
		usleep(20000);
	EXPECT_EQ(counter(b_, "xdp", "dropped-not-allowed"), m) << "VID 200 after the refused reload";
	EXPECT_EQ(counter(b_, "xdp", "popped"), n + m) << "popped counter after the refused reload";
}

// Deleted and re-created under a stream of VID 100 frames (5 ms apart), B
// gets its policy back from the agent: the frames arrive untagged from the
// first one after the re-plan on, within 1 s of the re-creation (frames
// before it arrive as sent, tagged: nothing is lost, nothing popped twice).
TEST_F(AgentVeth, RecreatedVethCarriesAllowedTrafficWithinASecond)
{
	if (!nic_driver(b_.ns, b_.ifname).empty())
		GTEST_SKIP() << "a NIC cannot be deleted and re-created";
	start_agent();
	ASSERT_TRUE(wait_policy(30)) << "the agent did not apply pop, allow 100 to " << b_.ifname;
	CmdResult del = run_cmd({"ip", "-n", a_.ns, "link", "del", a_.ifname}, kCmdTimeout);
	ASSERT_EQ(del.exit_code, 0) << del.describe();
	ASSERT_TRUE(agent_->wait_for_output(b_.ifname + ": deleted", 10));
	const std::vector<std::vector<std::string>> mk = {
		{"ip", "-n", a_.ns, "link", "add", a_.ifname, "address", mac_str(kMacA), "type", "veth", "peer", "name",
		 b_.ifname, "netns", b_.ns, "address", mac_str(kMacB)},
		{"ip", "-n", a_.ns, "link", "set", a_.ifname, "up"},
		{"ip", "-n", b_.ns, "link", "set", b_.ifname, "up"}};
	const auto t0 = std::chrono::steady_clock::now();
	for (const auto &c : mk) {
		CmdResult r = run_cmd(c, kCmdTimeout);
		ASSERT_EQ(r.exit_code, 0) << join_cmd(c) << ": " << r.describe();
	}
	const unsigned n = 400;	// 2 s
	auto cap = start_capture(b_, n, 30);
	ASSERT_TRUE(cap);
	const auto t_send = std::chrono::steady_clock::now();
	BackgroundCmd tx(sender({kQ100}, n, 5000));
	ASSERT_TRUE(tx.started());
	CmdResult sent = tx.wait(60);
	const double gap_ms =	// the sender's real pace, pauses and scheduling included
		std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_send).count() / n;
	EXPECT_EQ(sent.exit_code, 0) << sent.describe();
	CmdResult got = cap->wait(60);
	const std::vector<Bytes> frames = parse_frames(got.out);
	ASSERT_EQ(frames.size(), n) << "capture: " << got.describe();
	// frame i is tagged as sent until the policy is back, untagged after
	unsigned first = n;
	for (unsigned i = 0; i < n; i++) {
		if (hexdump(frames[i]) == hexdump(frame({}, i))) {
			first = std::min(first, i);
		} else {
			EXPECT_EQ(hexdump(frames[i]), hexdump(frame({kQ100}, i))) << "frame " << i;
			EXPECT_GT(first, i) << "frame " << i << " tagged after frame " << first << " was popped";
		}
	}
	ASSERT_LT(first, n) << "no frame popped after the re-creation";
	const double send_offset_ms =
		std::chrono::duration<double, std::milli>(t_send - t0).count();
	const double ms = send_offset_ms + first * gap_ms;	// frame i leaves about i gaps after the sender starts
	EXPECT_LE(ms, 1000 * timeout_scale()) << "the first popped frame left about " << ms << " ms after the re-creation";
	std::printf("re-created: frames %u.. popped, the first about %.0f ms after the re-creation\n", first, ms);
	EXPECT_EQ(counter(b_, "xdp", "popped"), n - first) << "popped counter of the re-created " << b_.ifname;
}

// A jumbo MTU makes veth hand XDP frames in several buffers: attach picks
// xdp_vlan_mb (by the MTU, or after veth refused xdp_vlan; xdp_geneve_mb
// likewise), which pops the tags of 6000-byte frames and counts them whole.
TEST_F(VlanVeth, XdpJumboFramesPopThroughTheMultiBufferEntry)
{
	const unsigned n = 3;
	const size_t payload = 6000 - frame_size({kAd100, kQ100}, 0);
	// only the peer's MTU is large: veth refuses the single-buffer entry on
	// B (ERANGE), and attach takes the multi-buffer one instead, for vlan
	// and geneve alike
	set_mtu(a_, 9000);
	for (const auto &[feature, entry] : {std::pair{"vlan", "xdp_vlan_mb"}, std::pair{"geneve", "xdp_geneve_mb"}}) {
		const bool geneve = std::string(feature) == "geneve";
		// a CPU rule made before attach: its CPUMAP entry must survive
		// the retry, which needs a new CPUMAP (the refused xdp_geneve
		// tied the first one to single-buffer programs)
		if (geneve) {
			ASSERT_TRUE(tool_ok(b_.ns, {"geneve", "rule", "add", b_.ifname, "--vni", "5", "--action", "cpu"}));
		}
		std::vector<std::string> args{"attach", b_.ifname, feature, "--mode", "native"};
		if (!geneve)
			args.push_back("--no-tag-kfunc");	// the plain entry (xdp_vlan_tag_mb: VlanMeta)
		CmdResult at = tool(b_.ns, args);
		EXPECT_EQ(at.exit_code, 0) << last_cmd_ << ": " << at.describe();
		if (!at.ok()) {
			// nothing attached: detach only takes the rule's pins away
			(void)tool(b_.ns, {"detach", b_.ifname});
			expect_all_clean("after the failed attach and a detach");
			continue;	// the other feature and the traffic below still tell
		}
		EXPECT_TRUE(names_xdp_entry(at.out, entry)) << at.out;
		expect_attach_note(at, b_, entry);
		if (geneve) {
			CmdResult e = run_cmd({"bpftool", "map", "lookup", "pinned", pin_dir(b_) + "/xo_gnv_cpus", "key",
					       "0", "0", "0", "0"},
					      kCmdTimeout);
			EXPECT_EQ(e.exit_code, 0) << "CPUMAP entry 0 after the retry: " << e.describe();
		}
		detach_and_check(b_);
	}
	set_mtu(b_, 9000);
	auto jumbo = [&](const Tags &tags) {
		auto cap = start_capture(b_, n, kCaptureTimeout);
		if (!cap)
			return std::vector<Bytes>{};
		send(a_, tags, n, kMacB, {}, payload);
		CmdResult r = cap->wait(kCaptureTimeout + 5);
		EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << "capture: " << r.describe();
		return parse_frames(r.out);
	};
	expect_frames(jumbo({kAd100, kQ100}), n,
		      [&](unsigned i) { return frame({kAd100, kQ100}, i, kMacB, payload); },
		      "negative: no program, both tags arrive");

	CmdResult at = tool(b_.ns, {"attach", b_.ifname, "vlan", "--hook", "xdp", "--mode", "native",
				    "--no-tag-kfunc"});  // the plain entry (xdp_vlan_tag: VlanMeta)
	ASSERT_EQ(at.exit_code, 0) << last_cmd_ << ": " << at.describe();
	EXPECT_TRUE(names_xdp_entry(at.out, "xdp_vlan_mb")) << at.out;
	expect_attach_note(at, b_, "xdp_vlan_mb");
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname, "--depth", "2"}));
	expect_frames(jumbo({kAd100, kQ100}), n, [&](unsigned i) { return frame({}, i, kMacB, payload); },
		      "xdp_vlan_mb pop of 6000-byte QinQ frames");
	EXPECT_EQ(counter(b_, "xdp", "popped"), n) << "popped counter";
	EXPECT_EQ(counter(b_, "xdp", "popped", "bytes"), static_cast<long long>(n * (payload + frame_size({kAd100, kQ100}, 0))))
		<< "popped bytes: the whole frames, not their first buffers";
	detach_and_check(b_);
}

// A policy pinned by an older xoffload (ABI 2: no op[] for 3+ tags, no
// outer_only) is derived anew before the next vlan program is attached.
TEST_F(VlanVeth, AttachUpgradesAPolicyOfAnOlderAbi)
{
	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan", "--hook", "xdp", "--mode", "native"}));
	std::string cfg = pin_dir(b_) + "/xo_vlan_cfg";
	int fd = bpf_obj_get(cfg.c_str());
	ASSERT_GE(fd, 0) << cfg;
	xo_vlan_banks banks{};
	__u32 key = XO_DIR_INGRESS;
	ASSERT_EQ(bpf_map_lookup_elem(fd, &key, &banks), 0);
	xo_vlan_policy &old = banks.bank[banks.active & 1];
	old = xo_vlan_policy{};
	old.abi_version = 2;
	old.action = XO_VLAN_ACT_POP;
	old.pop_depth = 1;
	old.bank = static_cast<__u8>(banks.active & 1);
	old.op[1] = old.op[2] = XO_VLAN_OP_POP1;	// as ABI 2 wrote a pop 1
	ASSERT_EQ(bpf_map_update_elem(fd, &key, &banks, BPF_ANY), 0);

	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan", "--hook", "tc-ingress"}));
	ASSERT_EQ(bpf_map_lookup_elem(fd, &key, &banks), 0);
	::close(fd);
	xo_vlan_policy now = banks.bank[banks.active & 1];
	EXPECT_EQ(now.abi_version, XO_ABI_VERSION);
	EXPECT_EQ(now.action, XO_VLAN_ACT_POP);
	EXPECT_EQ(now.pop_depth, 1);
	EXPECT_EQ(now.op[XO_VLAN_MORE], XO_VLAN_OP_POP1) << "3+ tags: pop the outer one";
	EXPECT_EQ(now.outer_only, 1);
	detach_and_check(b_);
}

// xo_vlan_stats pinned by a build with one counter fewer (XO_VLAN_CNT_MAX 9,
// before DROP_TAG_IN_META), which libbpf cannot reuse: attach at either
// hook refuses it in one line naming the map and the remedy, attaches
// nothing and leaves the pins; after detach --purge it attaches.
TEST_F(VlanVeth, AttachRefusesAStatsMapOfAnOlderLayout)
{
	const std::string dir = pin_dir(b_), path = dir + "/xo_vlan_stats";
	ASSERT_TRUE((::mkdir("/sys/fs/bpf/xoffload", 0700) == 0 || errno == EEXIST) && ::mkdir(dir.c_str(), 0700) == 0)
		<< dir << ": " << std::strerror(errno);
	const unsigned old_value = sizeof(xo_counter) * (XO_VLAN_CNT_MAX - 1);
	int fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "xo_vlan_stats", 4, old_value, XO_HOOK_MAX, nullptr);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(bpf_obj_pin(fd, path.c_str()), 0) << path;
	::close(fd);
	for (const char *hook : {"xdp", "tc-ingress"}) {
		CmdResult r = tool(b_.ns, {"attach", b_.ifname, "vlan", "--hook", hook});
		EXPECT_EQ(r.exit_code, 1) << hook << ": " << r.describe();
		EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
		EXPECT_NE(r.err.find("pinned map " + path + " "), std::string::npos) << r.err;
		EXPECT_NE(r.err.find("(value " + std::to_string(old_value) + " bytes; this one needs value " +
				     std::to_string(sizeof(xo_vlan_stats)) + " bytes)"),
			  std::string::npos)
			<< r.err;
		EXPECT_NE(r.err.find("offload-tool detach --purge " + b_.ifname), std::string::npos) << r.err;
	}
	CmdResult st = tool(b_.ns, {"status", b_.ifname}, true);
	EXPECT_NE(st.out.find("\"attached\":[]"), std::string::npos) << "nothing attached: " << st.out;
	struct stat sb {};
	EXPECT_EQ(::stat(path.c_str(), &sb), 0) << "the refused pin stays until the user purges it";

	ASSERT_TRUE(tool_ok(b_.ns, {"detach", b_.ifname, "--purge"}));
	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan", "--hook", "tc-ingress"}));
	detach_and_check(b_);
}

TEST_F(VlanVeth, XdpSkbPop)
{
	const unsigned n = 3;
	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({kQ100}, i); },
		      "negative: no program, the 802.1Q tag arrives");

	CmdResult at = tool(b_.ns, {"attach", b_.ifname, "vlan", "--mode", "skb"});
	ASSERT_EQ(at.exit_code, 0) << last_cmd_ << ": " << at.describe();
	expect_attach_note(at, b_, "xdp_vlan");
	CmdResult st = tool(b_.ns, {"status", b_.ifname}, true);
	EXPECT_NE(st.out.find("\"mode\":\"skb\""), std::string::npos) << "status shows skb mode: " << st.out;
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname}));
	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({}, i); },
		      "xdp skb pop: untagged on B");
	EXPECT_EQ(counter(b_, "xdp", "popped"), n) << "popped counter";
	detach_and_check(b_);
}

TEST_F(VlanVeth, XdpNativePopQinQ)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	const unsigned n = 2;
	const Tags qinq{kAd100, kQ200};
	expect_frames(exchange(qinq, n), n, [&](unsigned i) { return frame(qinq, i); },
		      "negative: no program, both tags arrive");

	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan"}));
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname, "--depth", "1"}));
	expect_frames(exchange(qinq, n), n, [](unsigned i) { return frame({kQ200}, i); },
		      "pop depth 1: inner 802.1Q tag left");
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname, "--depth", "2"}));
	expect_frames(exchange(qinq, n), n, [](unsigned i) { return frame({}, i); }, "pop depth 2: untagged");
	EXPECT_EQ(counter(b_, "xdp", "popped"), 2 * n) << "popped counter";
	detach_and_check(b_);
}

TEST_F(VlanVeth, XdpPushSingle)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	const unsigned n = 3;
	const Tag q300{kTpid8021Q, 300, 5};
	expect_frames(exchange({}, n), n, [](unsigned i) { return frame({}, i); },
		      "negative: no program, untagged arrives untagged");

	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan"}));
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "push", b_.ifname, "--vid", "300", "--pcp", "5"}));
	expect_frames(exchange({}, n), n, [&](unsigned i) { return frame({q300}, i); },
		      "xdp push: 802.1Q 300/pcp5 on B");
	EXPECT_EQ(counter(b_, "xdp", "pushed"), n) << "pushed counter";
	detach_and_check(b_);
}

TEST_F(VlanVeth, XdpPushQinQ)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	const unsigned n = 3;
	const Tag outer{kTpid8021AD, 100, 3}, inner{kTpid8021Q, 200, 0, true};
	expect_frames(exchange({}, n), n, [](unsigned i) { return frame({}, i); },
		      "negative: no program, untagged arrives untagged");

	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan"}));
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "push", b_.ifname, "--vid", "100", "--pcp", "3", "--inner-vid", "200",
				    "--inner-dei"}));
	expect_frames(exchange({}, n), n, [&](unsigned i) { return frame({outer, inner}, i); },
		      "xdp push QinQ: 802.1ad 100/pcp3 then 802.1Q 200/dei");
	EXPECT_EQ(counter(b_, "xdp", "pushed"), n) << "pushed counter";
	detach_and_check(b_);
}

TEST_F(VlanVeth, XdpRewrite)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	const unsigned n = 3;
	const Tag in{kTpid8021Q, 100, 6, true}, out{kTpid8021Q, 222, 6, true};
	expect_frames(exchange({in}, n), n, [&](unsigned i) { return frame({in}, i); },
		      "negative: no program, VID 100 arrives");

	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan"}));
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "rewrite", b_.ifname, "--from", "100", "--to", "222"}));
	expect_frames(exchange({in}, n), n, [&](unsigned i) { return frame({out}, i); },
		      "xdp rewrite 100 -> 222, PCP and DEI kept");
	expect_frames(exchange({kQ200}, n), n, [](unsigned i) { return frame({kQ200}, i); },
		      "xdp rewrite leaves other VIDs alone");
	EXPECT_EQ(counter(b_, "xdp", "rewritten"), n) << "rewritten counter";
	detach_and_check(b_);
}

// Dropped frames never arrive: an allowed frame sent after them is the
// first one B sees, and the counter says how many were dropped.
TEST_F(VlanVeth, XdpAllowListDrop)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	const unsigned n = 5;
	expect_frames(exchange({kQ200}, n), n, [](unsigned i) { return frame({kQ200}, i); },
		      "negative: no program, VID 200 arrives");

	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan"}));
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "allow", b_.ifname, "--vid", "100", "101"}));
	auto cap = start_capture(b_, 1, kCaptureTimeout);
	ASSERT_TRUE(cap);
	send(a_, {kQ200}, n);
	send(a_, {kQ100}, 1);
	CmdResult r = cap->wait(kCaptureTimeout + 5);
	EXPECT_EQ(r.exit_code, 0) << "the allowed frame arrives: " << r.describe();
	expect_frames(parse_frames(r.out), 1, [](unsigned i) { return frame({kQ100}, i); },
		      "allow-list: first frame on B is the allowed VID 100");
	EXPECT_EQ(counter(b_, "xdp", "dropped-not-allowed"), n) << "dropped-not-allowed == frames sent";
	EXPECT_EQ(counter(b_, "xdp", "passed"), 1) << "passed counter";
	// untagged frames are not subject to the allow-list
	expect_frames(exchange({}, 1), 1, [](unsigned i) { return frame({}, i); }, "allow-list passes untagged");
	detach_and_check(b_);
}

// The same object loaded by xdp-loader, with its maps pinned where
// offload-tool looks for them, is configured by offload-tool. Where
// xdp-loader's libxdp dispatcher cannot run xdp_vlan (libxdp before 1.6 on
// 6.12 and later) the load fails as docs/guide-vlan.md says, and
// LIBXDP_SKIP_DISPATCHER=1 loads it as a single program.
TEST_F(VlanVeth, XdpLoaderThenOffloadToolPop)
{
	XO_SKIP_WITHOUT_XDP_LOADER();
	const unsigned n = 3;
	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({kQ100}, i); },
		      "negative: no program, the 802.1Q tag arrives");

	const std::string netns = "--net=/run/netns/" + b_.ns;
	std::vector<std::string> load{"nsenter", netns, "xdp-loader", "load", "-vv", "-m", "native", "-p",
				      pin_dir(b_), b_.ifname, bpf_dir_ + "/xdp_vlan.bpf.o"};
	CmdResult r = run_cmd(load, kCmdTimeout);
	// From 6.12 the kernel refuses the dispatcher's freplace of a program
	// that changes packet data unless libxdp's dispatcher does too (libxdp
	// 1.6): xdp-loader then fails with EINVAL, as docs/guide-vlan.md quotes
	// it, and tells its users to set LIBXDP_SKIP_DISPATCHER=1, which
	// must then work.
	struct utsname u {};
	unsigned major = 0, minor = 0;
	if (!uname(&u))
		std::sscanf(u.release, "%u.%u", &major, &minor);
	if (r.exit_code != 0 && (major > 6 || (major == 6 && minor >= 12))) {
		const std::string said = r.out + r.err;
		const std::string why = "Extension program changes packet data, while original does not";
		EXPECT_NE(said.find("Couldn't attach XDP program on iface '" + b_.ifname + "': Invalid argument(-22)"),
			  std::string::npos)
			<< join_cmd(load) << ": " << r.describe();
		EXPECT_NE(said.find(why), std::string::npos) << join_cmd(load) << ": " << r.describe();
		load.insert(load.begin(), {"env", "LIBXDP_SKIP_DISPATCHER=1"});
		RecordProperty("xdp_loader", "LIBXDP_SKIP_DISPATCHER=1 (dispatcher refused: " + why + ")");
		r = run_cmd(load, kCmdTimeout);
	}
	ASSERT_EQ(r.exit_code, 0) << join_cmd(load) << ": " << r.describe();
	CmdResult st = tool(b_.ns, {"status", b_.ifname}, true);
	EXPECT_NE(st.out.find("\"hook\":\"xdp\""), std::string::npos) << "offload-tool sees it as ours: " << st.out;
	EXPECT_NE(st.out.find("\"pinned\":true"), std::string::npos) << "maps pinned by xdp-loader: " << st.out;

	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname}));
	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({}, i); },
		      "xdp-loader + offload-tool pop: untagged on B");
	EXPECT_EQ(counter(b_, "xdp", "popped"), n) << "popped counter";

	std::vector<std::string> unload{"nsenter", netns, "xdp-loader", "unload", b_.ifname, "--all"};
	r = run_cmd(unload, kCmdTimeout);
	EXPECT_EQ(r.exit_code, 0) << join_cmd(unload) << ": " << r.describe();
	r = run_cmd({"rm", "-rf", pin_dir(b_)}, kCmdTimeout);
	EXPECT_EQ(r.exit_code, 0) << r.describe();
	expect_all_clean("after xdp-loader unload");
}

// libxdp's multiprog dispatcher, where it loads (Debian's kernels; not where
// freplace is refused, and libxdp falls back to a single program): xdp_vlan
// (priority 20), xdp_geneve (25) and a foreign program loaded by xdp-loader
// (xdp_foreign, 30) run chained on one interface. xdp_foreign drops untagged
// frames to kMacC: tagged ones to kMacC going missing shows all three ran,
// in that order.
TEST_F(VlanVeth, DispatcherChainsVlanGeneveAndAForeignProgram)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	XO_SKIP_WITHOUT_XDP_LOADER();
	const unsigned n = 3;
	expect_frames(exchange(a_, b_, {kQ100}, n, n, kMacC), n,
		      [](unsigned i) { return frame({kQ100}, i, kMacC); }, "negative: no program, tagged to C arrives");

	// --no-tag-kfunc: where the driver offers the rx-vlan-tag kfunc (veth on
	// 6.8+), attach would load the device-bound xdp_vlan_tag, which runs
	// alone; the chain is the plain xdp_vlan's
	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan", "--no-tag-kfunc"}));
	CmdResult st = tool(b_.ns, {"status", b_.ifname}, true);
	if (st.out.find("\"multiprog\":true") == std::string::npos) {
		CmdResult txt = tool(b_.ns, {"status", b_.ifname});
		tool_ok(b_.ns, {"detach", b_.ifname});
		expect_all_clean("after detach");
		GTEST_SKIP() << "no libxdp multiprog dispatcher on this kernel and libxdp: " << txt.out;
	}
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname}));
	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "geneve"}));
	const std::string netns = "--net=/run/netns/" + b_.ns;
	std::vector<std::string> load{"nsenter", netns, "xdp-loader", "load", "-m", "native", b_.ifname,
				      bpf_dir_ + "/xdp_foreign.bpf.o"};
	CmdResult r = run_cmd(load, kCmdTimeout);
	ASSERT_EQ(r.exit_code, 0) << join_cmd(load) << ": " << r.describe();

	st = tool(b_.ns, {"status", b_.ifname}, true);
	EXPECT_NE(st.out.find("\"multiprog\":true"), std::string::npos) << st.out;
	for (const char *p : {"xdp_vlan", "xdp_geneve", "xdp_foreign"})
		EXPECT_NE(st.out.find(std::string("\"") + p + "\""), std::string::npos) << p << " in " << st.out;

	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({}, i); },
		      "chain: popped, passed by xdp_geneve and xdp_foreign");
	EXPECT_EQ(exchange(a_, b_, {kQ100}, n, n, kMacC).size(), 0u) << "chain: popped, then dropped by xdp_foreign";
	EXPECT_EQ(counter(b_, "xdp", "popped"), 2 * n) << "popped counter";
	CmdResult gs = tool(b_.ns, {"geneve", "stats", b_.ifname}, true);
	EXPECT_NE(gs.out.find("\"not_geneve\":{\"packets\":" + std::to_string(2 * n)), std::string::npos)
		<< "xdp_geneve saw every frame: " << gs.out;

	// offload-tool removes its own two; the foreign program stays until
	// its owner unloads it
	ASSERT_TRUE(tool_ok(b_.ns, {"detach", b_.ifname}));
	st = tool(b_.ns, {"status", b_.ifname}, true);
	EXPECT_NE(st.out.find("\"xdp_foreign\""), std::string::npos) << "foreign program kept: " << st.out;
	EXPECT_EQ(st.out.find("\"xdp_vlan\""), std::string::npos) << st.out;
	EXPECT_EQ(exchange(a_, b_, {}, n, n, kMacC).size(), 0u) << "xdp_foreign still runs after our detach";
	std::vector<std::string> unload{"nsenter", netns, "xdp-loader", "unload", b_.ifname, "--all"};
	r = run_cmd(unload, kCmdTimeout);
	EXPECT_EQ(r.exit_code, 0) << join_cmd(unload) << ": " << r.describe();
	expect_all_clean("after xdp-loader unload");
}

// One of our programs alone at the XDP hook (xdp_vlan loaded by xdp-loader
// as a single program, LIBXDP_SKIP_DISPATCHER=1): attach geneve composes
// them (one program, stages vlan then geneve, in one swap; the vlan policy
// kept through its pins), in the hook's mode only; detach geneve leaves the
// vlan stage popping.
TEST_F(VlanVeth, XdpProgramOfOursAloneIsComposedWithTheNext)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	XO_SKIP_WITHOUT_XDP_LOADER();
	const unsigned n = 3;
	const std::string netns = "--net=/run/netns/" + b_.ns;
	std::vector<std::string> load{"env", "LIBXDP_SKIP_DISPATCHER=1", "nsenter", netns, "xdp-loader", "load", "-m",
				      "native", "-p", pin_dir(b_), b_.ifname, bpf_dir_ + "/xdp_vlan.bpf.o"};
	CmdResult r = run_cmd(load, kCmdTimeout);
	ASSERT_EQ(r.exit_code, 0) << join_cmd(load) << ": " << r.describe();
	CmdResult st = tool(b_.ns, {"status", b_.ifname}, true);
	EXPECT_NE(st.out.find("\"multiprog\":false"), std::string::npos) << st.out;
	EXPECT_EQ(st.out.find("\"composed\":{"), std::string::npos) << "alone, not composed yet: " << st.out;
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname}));
	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({}, i); }, "xdp_vlan alone pops");

	CmdResult g = tool(b_.ns, {"attach", b_.ifname, "geneve", "--mode", "skb"});
	EXPECT_EQ(g.exit_code, 2) << last_cmd_ << ": " << g.describe();
	EXPECT_TRUE(one_line(g)) << g.err;
	EXPECT_NE(g.err.find("use --mode native"), std::string::npos) << g.err;
	EXPECT_EQ(tool(b_.ns, {"status", b_.ifname}, true).out, st.out) << "the refused attach changed nothing";

	g = tool(b_.ns, {"attach", b_.ifname, "geneve"});
	ASSERT_EQ(g.exit_code, 0) << last_cmd_ << ": " << g.describe();
	EXPECT_NE(g.out.find("composed program xdp_offload"), std::string::npos) << g.out;
	EXPECT_NE(g.out.find("(native mode, stages vlan, geneve)"), std::string::npos) << g.out;
	st = tool(b_.ns, {"status", b_.ifname}, true);
	EXPECT_NE(st.out.find("\"stages\":[\"vlan\",\"geneve\"]"), std::string::npos) << st.out;
	EXPECT_EQ(st.out.find("\"xdp_vlan\""), std::string::npos) << "xdp_vlan gave way: " << st.out;
	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({}, i); },
		      "composed: the vlan stage pops with the policy xdp_vlan had");
	CmdResult gs = tool(b_.ns, {"geneve", "stats", b_.ifname}, true);
	EXPECT_NE(gs.out.find("\"not_geneve\":{\"packets\":" + std::to_string(n)), std::string::npos)
		<< "the geneve stage saw the popped frames: " << gs.out;

	ASSERT_TRUE(tool_ok(b_.ns, {"detach", b_.ifname, "geneve"}));
	st = tool(b_.ns, {"status", b_.ifname}, true);
	EXPECT_NE(st.out.find("\"stages\":[\"vlan\"]"), std::string::npos) << st.out;
	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({}, i); }, "the vlan stage alone pops");
	EXPECT_EQ(counter(b_, "xdp", "popped"), 3 * n) << "popped counter, across both swaps";
	detach_and_check(b_);
}

// A program not ours alone at the XDP hook: vlan, geneve and recv are
// refused in one line that names it and says what to do (a program of the
// user's can come back after ours through attach chain), before anything is
// loaded or pinned; the hook stays as it was.
TEST_F(VlanVeth, XdpForeignProgramAloneIsRefusedCleanly)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	XO_SKIP_WITHOUT_XDP_LOADER();
	const std::string netns = "--net=/run/netns/" + b_.ns;
	std::vector<std::string> load{"env", "LIBXDP_SKIP_DISPATCHER=1", "nsenter", netns, "xdp-loader", "load", "-m",
				      "native", b_.ifname, bpf_dir_ + "/xdp_foreign.bpf.o"};
	CmdResult r = run_cmd(load, kCmdTimeout);
	ASSERT_EQ(r.exit_code, 0) << join_cmd(load) << ": " << r.describe();
	CmdResult st = tool(b_.ns, {"status", b_.ifname}, true);
	ASSERT_NE(st.out.find("\"xdp_foreign\""), std::string::npos) << st.out;
	for (const std::vector<std::string> &args :
	     {std::vector<std::string>{"attach", b_.ifname, "vlan"}, {"attach", b_.ifname, "geneve"},
	      {"attach", b_.ifname, "chain", "--prog", bpf_dir_ + "/xdp_drop_port9.bpf.o"}}) {
		CmdResult a = tool(b_.ns, args);
		EXPECT_EQ(a.exit_code, 1) << last_cmd_ << ": " << a.describe();
		EXPECT_TRUE(one_line(a)) << a.err;
		EXPECT_NE(a.err.find("xdp_foreign (prog id"), std::string::npos) << a.err;
		EXPECT_NE(a.err.find("unload it first"), std::string::npos) << a.err;
	}
	CmdResult rv = tool(b_.ns, {"recv", b_.ifname, "--duration", "1"});
	EXPECT_EQ(rv.exit_code, 1) << last_cmd_ << ": " << rv.describe();
	EXPECT_TRUE(one_line(rv)) << rv.err;
	EXPECT_NE(rv.err.find("xdp_foreign (prog id"), std::string::npos) << rv.err;
	EXPECT_EQ(tool(b_.ns, {"status", b_.ifname}, true).out, st.out) << "refused attaches changed nothing";
	struct stat sb {};
	EXPECT_NE(::stat(pin_dir(b_).c_str(), &sb), 0) << "nothing pinned";
	std::vector<std::string> unload{"nsenter", netns, "xdp-loader", "unload", b_.ifname, "--all"};
	r = run_cmd(unload, kCmdTimeout);
	EXPECT_EQ(r.exit_code, 0) << join_cmd(unload) << ": " << r.describe();
	expect_all_clean("after xdp-loader unload");
}

// recv's xdp_xsk holds the XDP hook (behind libxdp's dispatcher, or alone
// where the dispatcher cannot load). attach vlan then chains behind the
// dispatcher, or composes with recv's stage (one program, its XSKMAP the
// receiver's); detach vlan leaves recv receiving, and once recv is gone
// nothing is left either way.
TEST_F(VlanVeth, XdpAttachNextToRecvChainsOrComposes)
{
	// recv runs until signalled: a --duration ran out before the last
	// status under a slow TCG guest (6.1), and xdp_xsk was gone
	BackgroundCmd rx({tool_, "--json", "-n", b_.ns, "recv", b_.ifname, "--duration", "120", "--interval", "0"});
	ASSERT_TRUE(rx.wait_for_output("\"type\":\"start\"", 20)) << "recv never started";
	CmdResult st = tool(b_.ns, {"status", b_.ifname}, true);
	const bool composed = st.out.find("\"composed\":{") != std::string::npos;
	ASSERT_TRUE(composed || st.out.find("\"xdp_xsk\"") != std::string::npos) << st.out;
	CmdResult at = tool(b_.ns, {"attach", b_.ifname, "vlan", "--no-tag-kfunc"});
	if (at.exit_code != 0) {
		// libxdp's dispatcher holds the hook for xdp_xsk and cannot run
		// xdp_vlan (6.12+ with libxdp < 1.6): refused in one line
		EXPECT_EQ(at.exit_code, 1) << last_cmd_ << ": " << at.describe();
		EXPECT_TRUE(one_line(at)) << at.err;
		EXPECT_NE(at.err.find("xdp_xsk"), std::string::npos) << at.err;
		EXPECT_NE(st.out.find("\"multiprog\":true"), std::string::npos) << "refused beside a dispatcher only: " << st.out;
		st = tool(b_.ns, {"status", b_.ifname}, true);
		EXPECT_NE(st.out.find("\"attached\":[]"), std::string::npos) << "nothing of vlan: " << st.out;
		EXPECT_TRUE(rx.signal(SIGINT));
		EXPECT_TRUE(rx.wait(30).ok());
		expect_all_clean("after recv");
		return;
	}
	st = tool(b_.ns, {"status", b_.ifname}, true);
	EXPECT_EQ(at.err.find("single program"), std::string::npos) << at.err;
	if (st.out.find("\"composed\":{") != std::string::npos)
		EXPECT_NE(st.out.find("\"stages\":[\"vlan\",\"recv\"]"), std::string::npos) << st.out;
	else
		EXPECT_NE(st.out.find("\"xdp_xsk\""), std::string::npos) << st.out;
	const unsigned n = 3;
	send(a_, {kQ100}, n);
	EXPECT_EQ(counter(b_, "xdp", "passed") + counter(b_, "xdp", "popped"), n) << "vlan saw the frames first";
	ASSERT_TRUE(tool_ok(b_.ns, {"detach", b_.ifname, "vlan"}));
	st = tool(b_.ns, {"status", b_.ifname}, true);
	EXPECT_NE(st.out.find("\"attached\":[]"), std::string::npos) << "nothing of vlan: " << st.out;
	EXPECT_TRUE(st.out.find("\"xdp_xsk\"") != std::string::npos ||
		    st.out.find("\"stages\":[\"recv\"]") != std::string::npos)
		<< "recv's program still there: " << st.out;
	EXPECT_TRUE(rx.signal(SIGINT));
	CmdResult r = rx.wait(30);
	EXPECT_TRUE(r.ok()) << r.describe();
	EXPECT_NE(r.out.find("\"rx_packets\":" + std::to_string(n)), std::string::npos)
		<< "recv took the frames vlan passed: " << r.out;
	expect_all_clean("after recv");
}

// VLAN, Geneve and recv together at one XDP hook, at MTU 1500 and 9000 (the
// multi-buffer entries): one composed program with the stages in that order
// where the dispatcher cannot chain ours, libxdp's dispatcher where it can.
// Tagged frames are popped by vlan, passed by geneve (no Geneve port) and
// received by recv, every one exactly once.
TEST_F(VlanVeth, XdpVlanGeneveAndRecvRunTogether)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	const unsigned n = 4;
	for (unsigned mtu : {1500u, 9000u}) {
		const std::string label = "MTU " + std::to_string(mtu);
		ASSERT_TRUE(set_mtu(a_, mtu) && set_mtu(b_, mtu)) << label;
		CmdResult at = tool(b_.ns, {"attach", b_.ifname, "vlan", "--no-tag-kfunc"});
		if (mtu > 1500 && at.exit_code == 1 && at.err.find("has no XDP multi-buffer") != std::string::npos) {
			// a NIC whose driver runs XDP on one buffer only (igb, vmxnet3):
			// refused, naming the limit, and nothing left attached
			EXPECT_NE(at.err.find("runs XDP up to MTU"), std::string::npos) << at.err;
			CmdResult st = tool(b_.ns, {"status", b_.ifname}, true);
			EXPECT_NE(st.out.find("\"attached\":[]"), std::string::npos) << label << ": " << st.out;
			const size_t why = at.err.rfind("offload-tool: ");
			GTEST_SKIP() << label << ": " << at.err.substr(why == std::string::npos ? 0 : why)
				     << " (MTU 1500 ran; the refusal at 9000 checked)";
		}
		ASSERT_EQ(at.exit_code, 0) << label << ": " << at.describe();
		ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname})) << label;
		ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "geneve"})) << label;
		BackgroundCmd rx({tool_, "--json", "-n", b_.ns, "recv", b_.ifname, "--duration", "120", "--interval", "0"});
		ASSERT_TRUE(rx.wait_for_output("\"type\":\"start\"", 20)) << label << ": recv never started";
		CmdResult st = tool(b_.ns, {"status", b_.ifname}, true);
		const bool composed = st.out.find("\"composed\":{") != std::string::npos;
		if (composed) {
			EXPECT_NE(st.out.find("\"stages\":[\"vlan\",\"geneve\",\"recv\"]"), std::string::npos)
				<< label << ": " << st.out;
			EXPECT_NE(st.out.find(mtu > 1500 ? "\"xdp_offload_mb\"" : "\"xdp_offload"), std::string::npos)
				<< label << ": " << st.out;
		} else {
			for (const char *p : {"\"xdp_vlan", "\"xdp_geneve", "\"xdp_xsk\""})
				EXPECT_NE(st.out.find(p), std::string::npos) << label << ": " << p << " in " << st.out;
		}
		RecordProperty("route_mtu_" + std::to_string(mtu), composed ? "composed" : "libxdp dispatcher");
		send(a_, {kQ100}, n);
		EXPECT_TRUE(rx.signal(SIGINT));
		CmdResult r = rx.wait(30);
		EXPECT_TRUE(r.ok()) << label << ": " << r.describe();
		EXPECT_NE(r.out.find("\"rx_packets\":" + std::to_string(n)), std::string::npos)
			<< label << ": recv took every frame: " << r.out;
		EXPECT_EQ(counter(b_, "xdp", "popped"), n) << label << ": popped by vlan first";
		CmdResult gs = tool(b_.ns, {"geneve", "stats", b_.ifname}, true);
		EXPECT_NE(gs.out.find("\"not_geneve\":{\"packets\":" + std::to_string(n)), std::string::npos)
			<< label << ": then seen by geneve: " << gs.out;
		detach_and_check(b_);
	}
}

// attach IFACE chain --prog OBJ: a program of the user's runs after our
// stages (the composed program's slot, or behind libxdp's dispatcher after
// ours), its frames counted apart (chained); geneve joins with the chain
// kept; detach chain gives the hook back as it was; Debian's xdp-filter
// object runs there too, its maps pinned under the interface's chain/
// folder; detach takes everything.
TEST_F(VlanVeth, ChainRunsAUsersProgramAfterOurStages)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	const unsigned n = 3;
	const std::vector<std::string> port9{"--geneve", "5", "--geneve-port", "9"};
	// frames to UDP port 9 that reach B (tagged: popped by vlan first)
	auto port9_arrive = [&](unsigned count) {
		return static_cast<unsigned>(exchange(a_, b_, {kQ100}, count, count, kMacB, port9).size());
	};
	EXPECT_EQ(port9_arrive(n), n) << "negative: no program, frames to port 9 arrive";

	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan", "--no-tag-kfunc"}));
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname}));
	const std::string before = tool(b_.ns, {"status", b_.ifname}, true).out;
	CmdResult at = tool(b_.ns, {"attach", b_.ifname, "chain", "--prog", bpf_dir_ + "/xdp_drop_port9.bpf.o"});
	ASSERT_EQ(at.exit_code, 0) << last_cmd_ << ": " << at.describe();
	EXPECT_EQ(at.out.rfind("attached chain xdp_drop_port9 (prog id ", 0), 0u) << at.out;
	CmdResult st = tool(b_.ns, {"status", b_.ifname}, true);
	const bool composed = st.out.find("\"composed\":{") != std::string::npos;
	if (composed) {
		EXPECT_NE(st.out.find("\"stages\":[\"vlan\",\"chain\"]"), std::string::npos) << st.out;
		EXPECT_EQ(json_str(st.out, "chain_prog_name"), "xdp_drop_port9") << st.out;
	} else {
		EXPECT_NE(st.out.find("\"multiprog\":true"), std::string::npos) << st.out;
		EXPECT_NE(st.out.find("\"name\":\"xdp_drop_port9\""), std::string::npos) << st.out;
		EXPECT_TRUE(json_u64(st.out, "chain_prog_id").value_or(0) > 0) << st.out;
	}
	RecordProperty("chain_route", composed ? "composed program's slot" : "libxdp dispatcher");
	CmdResult again = tool(b_.ns, {"attach", b_.ifname, "chain", "--prog", bpf_dir_ + "/xdp_foreign.bpf.o"});
	EXPECT_EQ(again.exit_code, 1) << again.describe();
	EXPECT_TRUE(one_line(again)) << again.err;
	EXPECT_NE(again.err.find("detach " + b_.ifname + " chain first"), std::string::npos) << again.err;

	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({}, i); },
		      "popped by vlan, passed by the chained program");
	EXPECT_EQ(port9_arrive(n), 0u) << "popped by vlan, then dropped by the chained program";
	EXPECT_EQ(counter(b_, "xdp", "popped"), 2 * n) << "popped counter";
	if (composed) {
		st = tool(b_.ns, {"status", b_.ifname}, true);
		EXPECT_EQ(json_u64(st.out, "chained_packets"), std::optional<uint64_t>(2 * n)) << st.out;
		EXPECT_EQ(json_u64(st.out, "chain_empty_packets"), std::optional<uint64_t>(0)) << st.out;
	}

	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "geneve"}));
	st = tool(b_.ns, {"status", b_.ifname}, true);
	if (composed) {
		EXPECT_NE(st.out.find("\"stages\":[\"vlan\",\"geneve\",\"chain\"]"), std::string::npos) << st.out;
	}
	EXPECT_EQ(port9_arrive(n), 0u) << "vlan, geneve (port 9 is no Geneve port), then the chained program drops";
	ASSERT_TRUE(tool_ok(b_.ns, {"detach", b_.ifname, "geneve"}));
	EXPECT_EQ(tool(b_.ns, {"status", b_.ifname}, true).out.find("\"chain\"]") != std::string::npos, composed)
		<< "the chain stays when geneve goes";

	CmdResult dc = tool(b_.ns, {"detach", b_.ifname, "chain"});
	ASSERT_EQ(dc.exit_code, 0) << last_cmd_ << ": " << dc.describe();
	EXPECT_EQ(dc.out.rfind("detached chain xdp_drop_port9", 0), 0u) << dc.out;
	st = tool(b_.ns, {"status", b_.ifname}, true);
	// ids aside (a swap loads a new program), the hook is as it was
	const std::regex ids("\"(prog_)?id\":[0-9]+");
	EXPECT_EQ(std::regex_replace(st.out, ids, "#"), std::regex_replace(before, ids, "#"));
	EXPECT_EQ(port9_arrive(n), n) << "no chained program: frames to port 9 arrive";
	CmdResult none = tool(b_.ns, {"detach", b_.ifname, "chain"});
	EXPECT_EQ(none.exit_code, 1) << none.describe();
	EXPECT_TRUE(one_line(none)) << none.err;

	// Debian's xdp-filter for UDP with policy allow (its rules drop): port 9
	// put in its filter_ports (key: the port as the frame carries it, in a
	// u32; flags DST | UDP), as `xdp-filter port 9 -p udp` would
	const std::string filt = "/usr/lib/x86_64-linux-gnu/bpf/xdpfilt_alw_udp.o";
	struct stat sb {};
	if (::stat(filt.c_str(), &sb) == 0) {
		CmdResult xf = tool(b_.ns, {"attach", b_.ifname, "chain", "--prog", filt});
		ASSERT_EQ(xf.exit_code, 0) << last_cmd_ << ": " << xf.describe();
		const std::string ports = pin_dir(b_) + "/chain/filter_ports";
		CmdResult up = run_cmd({"bpftool", "map", "update", "pinned", ports, "key", "0", "9", "0", "0", "value",
					"0x0a", "0", "0", "0", "0", "0", "0", "0"},
				       kCmdTimeout);
		EXPECT_EQ(up.exit_code, 0) << up.describe();
		EXPECT_EQ(port9_arrive(n), 0u) << "xdp-filter drops port 9 after our pop";
		expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({}, i); },
			      "xdp-filter passes other ports");
		ASSERT_TRUE(tool_ok(b_.ns, {"detach", b_.ifname, "chain"}));
		EXPECT_NE(::stat((pin_dir(b_) + "/chain").c_str(), &sb), 0) << "its pins went with it";
	} else {
		RecordProperty("xdp_filter", "not installed: " + filt);
	}
	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "chain", "--prog", bpf_dir_ + "/xdp_drop_port9.bpf.o"}));
	detach_and_check(b_);
}

// ---- TC ----------------------------------------------------------------------

TEST_F(VlanVeth, TcIngressPop)
{
	const unsigned n = 3;
	Endpoint tap = ingress_tap();
	expect_frames(exchange(a_, tap, {kQ100}, n, n, kMacC), n, [](unsigned i) { return frame({kQ100}, i, kMacC); },
		      "negative: no program, the tag arrives");

	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan", "--hook", "tc-ingress"}));
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname}));
	expect_frames(exchange(a_, tap, {kQ100}, n, n, kMacC), n, [](unsigned i) { return frame({}, i, kMacC); },
		      "tc ingress pop: untagged after B");
	EXPECT_EQ(counter(b_, "tc-ingress", "popped"), n) << "popped counter";
	detach_and_check(b_);
}

// Detach removes the clsact qdisc only when attach created it and no
// filter is left; one that was there before, or holds a filter of someone
// else's, stays with that filter.
TEST_F(VlanVeth, DetachLeavesAClsactItDidNotCreate)
{
	auto sh = [&](std::vector<std::string> c) {
		CmdResult r = run_cmd(c, kCmdTimeout);
		EXPECT_EQ(r.exit_code, 0) << join_cmd(c) << ": " << r.describe();
		return r.out;
	};
	auto qdiscs = [&] { return sh({"tc", "-n", b_.ns, "qdisc", "show", "dev", b_.ifname}); };

	// ours: created by attach, gone with the last of our filters
	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan", "--hook", "tc-ingress"}));
	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan", "--hook", "tc-egress"}));
	ASSERT_TRUE(tool_ok(b_.ns, {"detach", b_.ifname, "vlan", "--hook", "tc-ingress"}));
	EXPECT_NE(qdiscs().find("clsact"), std::string::npos) << "tc-egress still attached";
	ASSERT_TRUE(tool_ok(b_.ns, {"detach", b_.ifname}));
	EXPECT_EQ(qdiscs().find("clsact"), std::string::npos);

	// someone else's filter in our clsact: both stay
	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan", "--hook", "tc-ingress"}));
	// a classic-BPF filter that matches nothing ("ret #0"): cls_bpf is built in
	sh({"tc", "-n", b_.ns, "filter", "add", "dev", b_.ifname, "egress", "pref", "7", "bpf", "bytecode",
	    "1,6 0 0 0,"});
	ASSERT_TRUE(tool_ok(b_.ns, {"detach", b_.ifname}));
	EXPECT_NE(sh({"tc", "-n", b_.ns, "filter", "show", "dev", b_.ifname, "egress"}).find("bytecode"),
		  std::string::npos)
		<< "someone else's filter went with our detach";
	sh({"tc", "-n", b_.ns, "qdisc", "del", "dev", b_.ifname, "clsact"});

	// a clsact that was there before attach: stays, empty
	sh({"tc", "-n", b_.ns, "qdisc", "add", "dev", b_.ifname, "clsact"});
	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan", "--hook", "tc-ingress"}));
	ASSERT_TRUE(tool_ok(b_.ns, {"detach", b_.ifname}));
	EXPECT_NE(qdiscs().find("clsact"), std::string::npos) << "the user's clsact was removed";
	sh({"tc", "-n", b_.ns, "qdisc", "del", "dev", b_.ifname, "clsact"});
	expect_all_clean("at the end");
}

TEST_F(VlanVeth, TcIngressPopQinQ)
{
	const unsigned n = 2;
	const Tags qinq{kAd100, kQ200};
	Endpoint tap = ingress_tap();
	expect_frames(exchange(a_, tap, qinq, n, n, kMacC), n, [&](unsigned i) { return frame(qinq, i, kMacC); },
		      "negative: no program, both tags arrive");

	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan", "--hook", "tc-ingress"}));
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname}));
	expect_frames(exchange(a_, tap, qinq, n, n, kMacC), n, [](unsigned i) { return frame({kQ200}, i, kMacC); },
		      "tc ingress pop depth 1: the metadata tag goes, 802.1Q 200 stays");
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname, "--depth", "2"}));
	expect_frames(exchange(a_, tap, qinq, n, n, kMacC), n, [](unsigned i) { return frame({}, i, kMacC); },
		      "tc ingress pop depth 2: untagged");
	detach_and_check(b_);
}

// At TC ingress the outer tag sits in skb metadata: the rewrite goes through
// pop + push and must keep the inner tag where it was.
TEST_F(VlanVeth, TcIngressRewriteQinQ)
{
	const unsigned n = 2;
	const Tag outer{kTpid8021AD, 100, 2};
	const Tags qinq{outer, kQ200};
	const Tags want{{kTpid8021AD, 300, 2}, kQ200};
	Endpoint tap = ingress_tap();
	expect_frames(exchange(a_, tap, qinq, n, n, kMacC), n, [&](unsigned i) { return frame(qinq, i, kMacC); },
		      "negative: no program, outer VID 100 arrives");

	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan", "--hook", "tc-ingress"}));
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "rewrite", b_.ifname, "--from", "100", "--to", "300"}));
	expect_frames(exchange(a_, tap, qinq, n, n, kMacC), n, [&](unsigned i) { return frame(want, i, kMacC); },
		      "tc ingress rewrite (metadata tag): 802.1ad 300/pcp2 then 802.1Q 200");
	EXPECT_EQ(counter(b_, "tc-ingress", "rewritten"), n) << "rewritten counter";
	detach_and_check(b_);
}

TEST_F(VlanVeth, TcIngressPushQinQ)
{
	const unsigned n = 2;
	Endpoint tap = ingress_tap();
	expect_frames(exchange(a_, tap, {}, n, n, kMacC), n, [](unsigned i) { return frame({}, i, kMacC); },
		      "negative: no program, untagged arrives untagged");

	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan", "--hook", "tc-ingress"}));
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "push", b_.ifname, "--vid", "100", "--inner-vid", "200"}));
	expect_frames(exchange(a_, tap, {}, n, n, kMacC), n,
		      [](unsigned i) { return frame({kAd100, kQ200}, i, kMacC); },
		      "tc ingress push QinQ: 802.1ad 100 then 802.1Q 200 after B");
	EXPECT_EQ(counter(b_, "tc-ingress", "pushed"), n) << "pushed counter";
	detach_and_check(b_);
}

TEST_F(VlanVeth, TcEgressPushSingle)
{
	const unsigned n = 3;
	const Tag q42{kTpid8021Q, 42, 1};
	expect_frames(exchange({}, n), n, [](unsigned i) { return frame({}, i); },
		      "negative: no program, untagged arrives untagged");

	ASSERT_TRUE(tool_ok(a_.ns, {"attach", a_.ifname, "vlan", "--hook", "tc-egress"}));
	ASSERT_TRUE(tool_ok(a_.ns, {"vlan", "push", a_.ifname, "--vid", "42", "--pcp", "1", "--dir", "egress"}));
	expect_frames(exchange({}, n), n, [&](unsigned i) { return frame({q42}, i); },
		      "tc egress push: 802.1Q 42/pcp1 on B");
	EXPECT_EQ(counter(a_, "tc-egress", "pushed"), n) << "pushed counter";
	detach_and_check(a_);
}

TEST_F(VlanVeth, TcEgressPushQinQ)
{
	const unsigned n = 3;
	expect_frames(exchange({}, n), n, [](unsigned i) { return frame({}, i); },
		      "negative: no program, untagged arrives untagged");

	ASSERT_TRUE(tool_ok(a_.ns, {"attach", a_.ifname, "vlan", "--hook", "tc-egress"}));
	ASSERT_TRUE(tool_ok(a_.ns, {"vlan", "push", a_.ifname, "--vid", "100", "--inner-vid", "200", "--dir", "egress"}));
	expect_frames(exchange({}, n), n, [](unsigned i) { return frame({kAd100, kQ200}, i); },
		      "tc egress push QinQ: 802.1ad 100 then 802.1Q 200 on B");
	EXPECT_EQ(counter(a_, "tc-egress", "pushed"), n) << "pushed counter";
	// the ingress policy is separate: nothing pushed on frames A receives
	detach_and_check(a_);
}

// Frames AF_PACKET sends keep their tag in the packet: the rewrite at TC
// egress is the in-packet one.
TEST_F(VlanVeth, TcEgressRewrite)
{
	const unsigned n = 3;
	const Tag in{kTpid8021Q, 100, 4}, out{kTpid8021Q, 7, 4};
	expect_frames(exchange({in}, n), n, [&](unsigned i) { return frame({in}, i); },
		      "negative: no program, VID 100 arrives");

	ASSERT_TRUE(tool_ok(a_.ns, {"attach", a_.ifname, "vlan", "--hook", "tc-egress"}));
	ASSERT_TRUE(tool_ok(a_.ns, {"vlan", "rewrite", a_.ifname, "--from", "100", "--to", "7", "--dir", "egress"}));
	expect_frames(exchange({in}, n), n, [&](unsigned i) { return frame({out}, i); },
		      "tc egress rewrite (in-packet tag): 100 -> 7, PCP kept");
	EXPECT_EQ(counter(a_, "tc-egress", "rewritten"), n) << "rewritten counter";
	detach_and_check(a_);
}

TEST_F(VlanVeth, TcEgressPop)
{
	const unsigned n = 3;
	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({kQ100}, i); },
		      "negative: no program, the 802.1Q tag arrives");

	ASSERT_TRUE(tool_ok(a_.ns, {"attach", a_.ifname, "vlan", "--hook", "tc-egress"}));
	ASSERT_TRUE(tool_ok(a_.ns, {"vlan", "pop", a_.ifname, "--dir", "egress"}));
	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({}, i); },
		      "tc egress pop: untagged on B");
	EXPECT_EQ(counter(a_, "tc-egress", "popped"), n) << "popped counter";
	detach_and_check(a_);
}

// bpf_skb_vlan_pop() goes by skb->protocol, not by the packet: a sender
// whose skb->protocol is not the tag's TPID (AF_PACKET bound to ETH_P_IP
// sending a tagged frame) must not get a frame counted as popped that still
// carries its tag. Popping it or refusing it (counted as a drop) are fine.
TEST_F(VlanVeth, TcEgressPopWhenProtocolIsNotTheTpid)
{
	{
		auto cap = start_capture(b_, 1, kCaptureTimeout);
		ASSERT_TRUE(cap);
		send(a_, {kQ100}, 1, kMacB, {"--proto", "0x0800"});
		CmdResult r = cap->wait(kCaptureTimeout + 5);
		expect_frames(parse_frames(r.out), 1, [](unsigned i) { return frame({kQ100}, i); },
			      "negative: no program, the frame sent with skb->protocol IPv4 keeps its tag");
	}
	ASSERT_TRUE(tool_ok(a_.ns, {"attach", a_.ifname, "vlan", "--hook", "tc-egress"}));
	ASSERT_TRUE(tool_ok(a_.ns, {"vlan", "pop", a_.ifname, "--dir", "egress"}));
	auto cap = start_capture(b_, 2, 1.5);
	ASSERT_TRUE(cap);
	send(a_, {kQ100}, 1, kMacB, {"--proto", "0x0800"});
	send(a_, {}, 1, kMacC);	// sentinel: passes whatever happened to the first
	CmdResult r = cap->wait(kCaptureTimeout + 5);
	auto got = parse_frames(r.out);
	long long popped = counter(a_, "tc-egress", "popped");
	long long malformed = counter(a_, "tc-egress", "dropped-malformed");
	ASSERT_FALSE(got.empty()) << "the sentinel arrives: " << r.describe();
	EXPECT_EQ(hexdump(got.back()), hexdump(frame({}, 0, kMacC))) << "last frame is the sentinel";
	if (got.size() == 2) {
		EXPECT_EQ(hexdump(got[0]), hexdump(frame({}, 0))) << "frame sent with skb->protocol IPv4: popped";
		EXPECT_EQ(popped, 1) << "popped counter";
	} else {
		EXPECT_EQ(popped, 0) << "refused frame must not count as popped";
		EXPECT_EQ(malformed, 1) << "refused frame is counted as a drop";
	}
	detach_and_check(a_);
}

TEST_F(VlanVeth, TcEgressAllowListDrop)
{
	const unsigned n = 4;
	expect_frames(exchange({kQ200}, n), n, [](unsigned i) { return frame({kQ200}, i); },
		      "negative: no program, VID 200 arrives");

	ASSERT_TRUE(tool_ok(a_.ns, {"attach", a_.ifname, "vlan", "--hook", "tc-egress"}));
	ASSERT_TRUE(tool_ok(a_.ns, {"vlan", "allow", a_.ifname, "--vid", "100", "--dir", "egress"}));
	auto cap = start_capture(b_, 1, kCaptureTimeout);
	ASSERT_TRUE(cap);
	// a TC_ACT_SHOT at egress reaches the AF_PACKET sender as ENOBUFS
	std::string sent = send(a_, {kQ200}, n);
	EXPECT_NE(sent.find(", " + std::to_string(n) + " dropped on egress"), std::string::npos)
		<< "sender sees its frames dropped: " << sent;
	send(a_, {kQ100}, 1);
	CmdResult r = cap->wait(kCaptureTimeout + 5);
	EXPECT_EQ(r.exit_code, 0) << "the allowed frame arrives: " << r.describe();
	expect_frames(parse_frames(r.out), 1, [](unsigned i) { return frame({kQ100}, i); },
		      "egress allow-list: first frame on B is the allowed VID 100");
	EXPECT_EQ(counter(a_, "tc-egress", "dropped-not-allowed"), n) << "dropped-not-allowed == frames sent";
	detach_and_check(a_);
}

// ---- CLI contract --------------------------------------------------------------

// Usage errors exit 2 with exactly one line on stderr and change nothing.
TEST_F(VlanVeth, CliUsageErrors)
{
	ASSERT_TRUE(tool_ok(b_.ns, {"attach", b_.ifname, "vlan"}));
	const std::string &ifb = b_.ifname;
	const std::vector<std::vector<std::string>> bad = {
		{"vlan", "push", ifb, "--vid", "0"},
		{"vlan", "push", ifb, "--vid", "4095"},
		{"vlan", "push", ifb, "--vid", "10", "--pcp", "8"},
		{"vlan", "push", ifb, "--vid", "10", "--inner-vid", "4095"},
		{"vlan", "push", ifb, "--vid", "10", "--proto", "0x9100"},
		{"vlan", "rewrite", ifb, "--from", "0", "--to", "5"},
		{"vlan", "allow", ifb, "--vid", "4095"},
		{"vlan", "pop", ifb, "--depth", "3"},
		{"vlan", "pop", ifb, "--dir", "sideways"},
		{"attach", ifb, "vlan", "--hook", "foo"},
		{"attach", ifb, "vlan", "--mode", "turbo"},
		{"attach", ifb, "geneve-nope"},
		{"detach", ifb, "vlan", "--hook", "foo"},
		{"frobnicate"},
	};
	for (const auto &args : bad) {
		CmdResult r = tool(b_.ns, args);
		EXPECT_EQ(r.exit_code, 2) << last_cmd_ << ": " << r.describe();
		EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1)
			<< last_cmd_ << ": one line on stderr, got: " << r.err;
	}
	// a device that does not exist is a fact of the system, as ip says it
	for (const std::vector<std::string> &args :
	     {std::vector<std::string>{"vlan", "pop", "nosuch0"}, std::vector<std::string>{"attach", "nosuch0", "vlan"}}) {
		CmdResult r = tool(b_.ns, args);
		EXPECT_EQ(r.exit_code, 1) << last_cmd_ << ": " << r.describe();
		EXPECT_NE(r.err.find("Cannot find device \"nosuch0\""), std::string::npos) << r.err;
	}
	CmdResult r = run_cmd({tool_, "-n", "xo-no-such-netns", "status"}, kCmdTimeout);
	EXPECT_EQ(r.exit_code, 2) << "unknown netns: " << r.describe();

	CmdResult show = tool(b_.ns, {"vlan", "show", b_.ifname}, true);
	EXPECT_NE(show.out.find("\"ingress\":{\"action\":\"none\""), std::string::npos)
		<< "rejected commands changed the policy: " << show.out;

	r = tool(b_.ns, {"attach", b_.ifname, "vlan"});
	EXPECT_EQ(r.exit_code, 1) << "attach twice: " << r.describe();
	EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "attach twice: one line, got: " << r.err;
	r = tool(b_.ns, {"attach", b_.ifname, "vlan", "--hook", "tc-egress"});
	EXPECT_EQ(r.exit_code, 0) << "another hook is fine: " << r.describe();
	r = tool(b_.ns, {"attach", b_.ifname, "vlan", "--hook", "tc-egress"});
	EXPECT_EQ(r.exit_code, 1) << "tc attach twice: " << r.describe();
	detach_and_check(b_);
}

// Commands that fail leave nothing attached and no pins behind.
TEST_F(VlanVeth, FailedCommandsLeaveNothing)
{
	expect_all_clean("fresh testbed");
	struct Case {
		std::vector<std::string> args;
		int exit_code;
	};
	const std::vector<Case> cases = {
		{{"attach", b_.ifname, "vlan", "--hook", "bogus"}, 2},
		{{"attach", b_.ifname, "vlan", "--mode", "bogus"}, 2},
		{{"vlan", "pop", b_.ifname}, 1},	// nothing attached: no maps
		{{"vlan", "push", b_.ifname, "--vid", "5"}, 1},
		{{"vlan", "stats", b_.ifname}, 1},
		{{"detach", b_.ifname}, 1},
		{{"detach", b_.ifname, "vlan", "--hook", "tc-ingress"}, 1},
	};
	for (const auto &c : cases) {
		CmdResult r = tool(b_.ns, c.args);
		EXPECT_EQ(r.exit_code, c.exit_code) << last_cmd_ << ": " << r.describe();
		expect_all_clean("after failed: " + last_cmd_);
	}
	// lo has no native XDP: the attach fails at the kernel, after the pin
	// directory was made
	CmdResult r = tool(b_.ns, {"attach", "lo", "vlan", "--mode", "native"});
	EXPECT_EQ(r.exit_code, 1) << last_cmd_ << ": " << r.describe();
	expect_clean({b_.ns, "lo"}, "after failed native attach on lo");
	expect_all_clean("at the end");
}

// Frames of VID 10, allowed throughout, streamed from A while every
// reconfiguring vlan command runs on B, round after round (issue #15:
// `allow --clear` and `clear` emptied the list slot by slot while it was
// on, dropping a quarter of them). Commands on other VIDs must not touch
// the stream; pop, push, rewrite and clear change its treatment, each in
// one step: every frame B receives is wholly one of the treatments the
// sequence goes through, never a mix (a rewrite without the push it came
// with, a zero tag), and no frame is dropped for any reason.
TEST_F(VlanVeth, ReconfigurationNeverDropsOrMixesAStreamedVid)
{
	const Tag q10{kTpid8021Q, 10, 3}, q11{kTpid8021Q, 11, 3}, q100{kTpid8021Q, 100, 0};
	const std::string ifb = b_.ifname;
	const std::vector<std::vector<std::string>> seq = {
		{"vlan", "allow", ifb, "--vid", "10"},
		{"vlan", "allow", ifb, "--vid", "10", "20", "30"},
		{"vlan", "allow", ifb, "--vid", "20", "--remove"},
		{"vlan", "rewrite", ifb, "--from", "20", "--to", "40"},
		{"vlan", "allow", ifb, "--clear"},
		{"vlan", "allow", ifb, "--vid", "10"},
		{"vlan", "pop", ifb},
		{"vlan", "push", ifb, "--vid", "100"},
		{"vlan", "rewrite", ifb, "--from", "10", "--to", "11"},
		{"vlan", "clear", ifb},
	};
	// what the states of seq make of frame i: untouched, popped, pushed,
	// rewritten under the push
	std::set<std::string> forms;
	for (unsigned i = 0; i < 256; i++)
		for (const Tags &t : {Tags{q10}, Tags{}, Tags{q100, q10}, Tags{q100, q11}})
			forms.insert(hexdump(frame(t, i)));

	ASSERT_TRUE(tool_ok(b_.ns, {"attach", ifb, "vlan", "--hook", "xdp", "--mode", "native"}));
	ASSERT_TRUE(tool_ok(b_.ns, seq[0]));
	// the negative check first: an unlisted VID is dropped, so the list is on
	send(a_, {{kTpid8021Q, 20}}, 3);
	ASSERT_EQ(counter(b_, "xdp", "dropped-not-allowed"), 3) << "VID 20 must be dropped before the run";

	UniqueFdLite tx;
	int ifindex = 0;
	{
		InNetns in(a_.ns);
		ASSERT_TRUE(in.ok());
		tx.fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
		ifindex = static_cast<int>(if_nametoindex(a_.ifname.c_str()));
	}
	ASSERT_GE(tx.fd, 0) << std::strerror(errno);
	ASSERT_NE(ifindex, 0);
	std::vector<Bytes> frames;
	for (unsigned i = 0; i < 256; i++)
		frames.push_back(frame({q10}, i));

	auto cap = start_capture(b_, 1000000, 60);
	ASSERT_TRUE(cap);
	std::atomic<bool> stop{false};
	std::atomic<uint64_t> sent{0};
	std::thread sender([&] {
		sockaddr_ll sll{};
		sll.sll_family = AF_PACKET;
		sll.sll_ifindex = ifindex;
		sll.sll_halen = 6;
		std::memcpy(sll.sll_addr, kMacB.data(), 6);
		for (uint64_t i = 0; !stop.load() && i < 2000000; i++) {
			const Bytes &f = frames[i % frames.size()];
			if (sendto(tx.fd, f.data(), f.size(), 0, reinterpret_cast<sockaddr *>(&sll), sizeof(sll)) ==
			    static_cast<ssize_t>(f.size()))
				sent++;
			usleep(20);
		}
	});
	unsigned rounds = 0;
	for (; rounds < 3; rounds++)
		for (const auto &cmd : seq) {
			uint64_t before = sent.load();
			CmdResult r = tool(b_.ns, cmd);
			EXPECT_EQ(r.exit_code, 0) << last_cmd_ << ": " << r.describe();
			EXPECT_GT(sent.load(), before) << "frames were streaming through " << last_cmd_;
		}
	stop = true;
	sender.join();
	usleep(300000);	// the last frames through B
	CmdResult got = cap->wait(1);
	auto received = parse_frames(got.out);

	long long seen = 0;
	for (const char *r : {"passed", "modified", "dropped-malformed", "dropped-not-allowed",
			      "dropped-no-headroom", "dropped-too-deep"})
		seen += counter(b_, "xdp", r);
	for (const char *r : {"dropped-malformed", "dropped-no-headroom", "dropped-too-deep"})
		EXPECT_EQ(counter(b_, "xdp", r), 0) << r;
	EXPECT_EQ(counter(b_, "xdp", "dropped-not-allowed"), 3) << "only the 3 VID 20 frames of the check";
	EXPECT_GT(counter(b_, "xdp", "popped"), 0) << "the stream went through the pop state";
	EXPECT_GT(counter(b_, "xdp", "pushed"), 0) << "the stream went through the push state";
	EXPECT_GT(counter(b_, "xdp", "rewritten"), 0) << "the stream went through the rewrite state";
	// every frame that left A reached xdp_vlan on B (A's own IPv6 chatter
	// may add a few), and none but the 3 was dropped
	EXPECT_GE(static_cast<uint64_t>(seen), sent.load() + 3) << "frames seen by xdp_vlan vs sent";
	size_t odd = 0;
	for (const Bytes &f : received)
		if (!forms.count(hexdump(f)) && odd++ < 5)
			ADD_FAILURE() << "a frame of no single configuration: " << hexdump(f);
	EXPECT_EQ(odd, 0u) << "of " << received.size() << " captured";
	EXPECT_GT(received.size(), 0u) << "capture on B";
	std::printf("streamed %llu frames through %u rounds of %zu commands; %zu captured on B\n",
		    static_cast<unsigned long long>(sent.load()), rounds, seq.size(), received.size());
	detach_and_check(b_);
}

// ---- RX VLAN stripping under the programs that read tags (issue 16) ---------
// A NIC that strips the 802.1Q tag into its RX descriptor before XDP (igb,
// vmxnet3 under tools/vm-test; i40e, mlx4 on hardware) hides it from
// xdp_vlan, from xdp_geneve's outer parse and from an AF_XDP socket, and the
// driver puts it back into skb->vlan_tci after XDP_PASS. attach (vlan and
// geneve at XDP) and recv turn the stripping off for their life and give it
// back. veth never strips (the sender's TX offload decides), so these run on
// the NIC pairs of tools/vm-test (suite nics) and skip on veth.
class RxStripping : public VlanVeth {
protected:
	std::string rx_vlan_state(const Endpoint &e)
	{
		CmdResult k = run_cmd({"ip", "netns", "exec", e.ns, "ethtool", "-k", e.ifname}, kCmdTimeout);
		size_t at = k.out.find("rx-vlan-offload: ");
		if (k.exit_code || at == std::string::npos)
			return "?";
		return k.out.substr(at + 17, k.out.find_first_of(" \n", at + 17) - (at + 17));
	}
	// Turns B's stripping on, as a NIC comes up; skips where it cannot.
	void SetUp() override
	{
		VlanVeth::SetUp();
		if (IsSkipped() || HasFatalFailure())
			return;
		CmdResult i = run_cmd({"ip", "netns", "exec", b_.ns, "ethtool", "-i", b_.ifname}, kCmdTimeout);
		if (i.out.find("driver: veth") != std::string::npos)
			GTEST_SKIP() << "veth never strips a tag before XDP (the sender's tx-vlan-offload decides); "
					"runs on the NIC pairs of tools/vm-test";
		(void)run_cmd({"ip", "netns", "exec", b_.ns, "ethtool", "-K", b_.ifname, "rxvlan", "on"}, kCmdTimeout);
		if (rx_vlan_state(b_) != "on")
			GTEST_SKIP() << b_.ifname << " cannot strip VLAN tags on RX (rx-vlan-offload: " << rx_vlan_state(b_)
				     << ")";
		turned_on_ = true;
	}
	void TearDown() override
	{
		if (turned_on_)	// the testbed's setting for the next test
			(void)run_cmd({"ip", "netns", "exec", b_.ns, "ethtool", "-K", b_.ifname, "rxvlan", "off"},
				      kCmdTimeout);
		VlanVeth::TearDown();
	}
	// The line of @err that says stripping went off (or "").
	static std::string off_line(const std::string &err, const std::string &reader)
	{
		size_t at = err.find("turned rx-vlan-hw-parse off on ");
		if (at == std::string::npos)
			return {};
		std::string line = err.substr(at, err.find('\n', at) - at);
		return line.find("while " + reader + " is attached") != std::string::npos ? line : std::string();
	}
	bool turned_on_ = false;
};

TEST_F(RxStripping, XdpVlanTurnsItOffPopsTheTagAndDetachRestoresIt)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	const unsigned n = 5;
	CmdResult at = tool(b_.ns, {"attach", b_.ifname, "vlan", "--no-tag-kfunc"});
	ASSERT_EQ(at.exit_code, 0) << last_cmd_ << ": " << at.describe();
	EXPECT_NE(off_line(at.err, "xdp_vlan"), "") << "one line says stripping went off: " << at.err;
	EXPECT_EQ(rx_vlan_state(b_), "off") << "while xdp_vlan is attached";
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname}));
	expect_frames(exchange({kQ100}, n), n, [](unsigned i) { return frame({}, i); }, "pop on a stripping NIC");
	EXPECT_EQ(counter(b_, "xdp", "popped"), n) << "xdp_vlan saw the tag in the frame";
	CmdResult d = tool(b_.ns, {"detach", b_.ifname});
	EXPECT_EQ(d.exit_code, 0) << d.describe();
	EXPECT_NE(d.err.find("turned rx-vlan-hw-parse on again on " + b_.ifname), std::string::npos) << d.err;
	EXPECT_EQ(rx_vlan_state(b_), "on") << "detach gives the setting back";
	expect_all_clean("after detach");
}

TEST_F(RxStripping, KeepRxVlanLeavesItOnAndSaysWhatWillNotWork)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	CmdResult at = tool(b_.ns, {"attach", b_.ifname, "vlan", "--no-tag-kfunc", "--keep-rx-vlan"});
	ASSERT_EQ(at.exit_code, 0) << last_cmd_ << ": " << at.describe();
	EXPECT_NE(at.err.find("stays on on " + b_.ifname + " (--keep-rx-vlan)"), std::string::npos) << at.err;
	EXPECT_EQ(rx_vlan_state(b_), "on");
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname}));
	(void)exchange({kQ100}, 3);
	EXPECT_EQ(counter(b_, "xdp", "popped"), 0) << "the stripped tag never reached xdp_vlan";
	detach_and_check(b_);
	EXPECT_EQ(rx_vlan_state(b_), "on");
}

// xdp_geneve parses outer tags; a decapped inner frame passed to the stack
// would get the stripped outer tag back from the driver.
TEST_F(RxStripping, XdpGeneveTurnsItOffAndDetachRestoresIt)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	CmdResult at = tool(b_.ns, {"attach", b_.ifname, "geneve"});
	ASSERT_EQ(at.exit_code, 0) << last_cmd_ << ": " << at.describe();
	EXPECT_NE(off_line(at.err, "xdp_geneve"), "") << at.err;
	EXPECT_EQ(rx_vlan_state(b_), "off") << "while xdp_geneve is attached";
	CmdResult d = tool(b_.ns, {"detach", b_.ifname});
	EXPECT_EQ(d.exit_code, 0) << d.describe();
	EXPECT_EQ(rx_vlan_state(b_), "on") << "detach gives the setting back: " << d.err;
	expect_all_clean("after detach");
}

// recv hands the frames themselves to a socket: a stripped tag would never
// come back, so recv turns stripping off while it runs, --filter-vlan or not.
TEST_F(RxStripping, RecvTurnsItOffReceivesTheTagAndGivesItBack)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	const unsigned n = 5;
	BackgroundCmd rx({tool_, "--json", "-n", b_.ns, "recv", b_.ifname, "--queues", "all", "--xsk-mode", "copy",
			  "--filter-vlan", "100", "--idle", "2", "--duration", "20", "--interval", "0"});
	ASSERT_TRUE(rx.wait_for_output("\"type\":\"start\"", 30)) << "recv never started";
	EXPECT_EQ(rx_vlan_state(b_), "off") << "while recv runs";
	usleep(300000);
	send(a_, {kQ100}, n);
	CmdResult r = rx.wait(40);
	ASSERT_TRUE(r.ok()) << r.describe();
	EXPECT_NE(off_line(r.err, "xdp_xsk"), "") << r.err;
	const std::string last = r.out.substr(r.out.rfind("{\"type\""));
	EXPECT_NE(last.find("\"packets\":" + std::to_string(n) + ","), std::string::npos)
		<< "every frame of VID 100 reached the socket, tag in the frame: " << r.out;
	EXPECT_EQ(rx_vlan_state(b_), "on") << "recv gave the setting back: " << r.err;
	expect_all_clean("after recv");
}

// ---- hardware VLAN filters (issue 16) ---------------------------------------
// A NIC's VLAN filter drops tagged frames of VIDs no VLAN device registered
// before XDP and TC see them (igb: rx-vlan-filter on [fixed], RCTL.VFE;
// qemu's virtio-net with VIRTIO_NET_F_CTRL_VLAN and vmxnet3: the host's
// table). recv and attach vlan print one line with the remedy exactly where
// the driver's facts say so. These tests measure it: B's promiscuous mode
// (on in every NIC testbed) goes off, A sends frames of an unregistered VID
// and, as a control that the path works, as many untagged ones; the count
// that arrives must be what the facts predict, the line there exactly when
// the frames are lost, and the remedy it names must let them in. veth has
// no filter, so they run on the NIC pairs of tools/vm-test (suite nics).
// Every frame goes to the broadcast address, which every NIC's unicast
// filter passes: qemu's vmxnet3 goes back to its permanent MAC on each
// activation (vmxnet3_activate_device() -> vmxnet3_reset_mac(), after the
// driver wrote the testbed's), so unpromiscuous it drops frames to B's MAC.
class VlanFilterNic : public VlanVeth {
protected:
	static constexpr unsigned kN = 20;
	const Tag kUnreg{kTpid8021Q, 300}, kOther{kTpid8021Q, 301};
	static constexpr Mac kBcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	void SetUp() override
	{
		VlanVeth::SetUp();
		if (IsSkipped() || HasFatalFailure())
			return;
		driver_ = nic_driver(b_.ns, b_.ifname);
		if (driver_.empty())
			GTEST_SKIP() << "veth filters no VLAN (no rx-vlan-filter); runs on the NIC pairs of tools/vm-test";
		ASSERT_TRUE(set_promisc(false)) << "promiscuous mode of " << b_.ifname << " stays on";
		CmdResult f = tool(b_.ns, {"features", b_.ifname, "--rx"}, true);
		ASSERT_EQ(f.exit_code, 0) << last_cmd_ << ": " << f.describe();
		filter_fact_ = fact_value(f.out, "vlan_filter");
		rx_all_fact_ = fact_value(f.out, "vlan_filter_rx_all") == "true";
		const std::string filter = feature(b_, "rx-vlan-filter"), rx_all = feature(b_, "rx-all");
		filter_on_ = filter.rfind("on", 0) == 0;
		filter_fixed_ = filter.find("[fixed]") != std::string::npos;
		rx_all_changeable_ = !rx_all.empty() && rx_all.find("[fixed]") == std::string::npos;
		// what the facts predict for a VID no VLAN device registered, and
		// for another VID once one is
		drops_ = filter_on_ && (filter_fact_ == "drops unregistered VIDs" ||
					filter_fact_ == "the host drops unregistered VIDs");
		drops_other_ = drops_ ||
			       (filter_on_ && filter_fact_.rfind("all VIDs until one is registered", 0) == 0);
		native_xdp_ = no_native_xdp(b_.ns, b_.ifname).empty();
		where_ = driver_ + " on " + b_.ifname + " (rx-vlan-filter: " + filter + ", rx-all: " + rx_all +
			 "; facts: " + filter_fact_ + ")";
	}

	void TearDown() override
	{
		if (rx_all_on_)
			(void)run_cmd(ns_cmd({"ethtool", "-K", b_.ifname, "rx-all", "off"}), kCmdTimeout);
		if (!vlan_dev_.empty())
			(void)run_cmd({"ip", "-n", b_.ns, "link", "del", "dev", vlan_dev_}, kCmdTimeout);
		VlanVeth::TearDown();
	}

	std::vector<std::string> ns_cmd(std::vector<std::string> argv) const
	{
		argv.insert(argv.begin(), {"ip", "netns", "exec", b_.ns});
		return argv;
	}

	// "value" of one fact of `features --json --rx`: a string unquoted,
	// true/false as they are; "" when absent.
	static std::string fact_value(const std::string &js, const std::string &key)
	{
		const std::string k = "\"" + key + "\":{\"value\":";
		size_t p = js.find(k);
		if (p == std::string::npos)
			return "";
		p += k.size();
		if (js[p] == '"')
			return js.substr(p + 1, js.find('"', p + 1) - p - 1);
		return js.substr(p, js.find_first_of(",}", p) - p);
	}

	// What `ethtool -k` says of @name ("on", "off [fixed]"); "" if absent.
	std::string feature(const Endpoint &e, const std::string &name)
	{
		CmdResult k = run_cmd({"ip", "netns", "exec", e.ns, "ethtool", "-k", e.ifname}, kCmdTimeout);
		size_t at = k.out.find("\n" + name + ": ");
		if (k.exit_code || at == std::string::npos)
			return "";
		at += name.size() + 3;
		return k.out.substr(at, k.out.find('\n', at) - at);
	}

	std::string link_flags()
	{
		CmdResult l = run_cmd({"ip", "-n", b_.ns, "-o", "link", "show", "dev", b_.ifname}, kCmdTimeout);
		return l.out.substr(0, l.out.find('>') + 1);
	}

	bool set_promisc(bool on)
	{
		CmdResult r = run_cmd({"ip", "-n", b_.ns, "link", "set", "dev", b_.ifname, "promisc", on ? "on" : "off"},
				      kCmdTimeout);
		EXPECT_EQ(r.exit_code, 0) << r.describe();
		// virtio_net hands the host its RX mode from a work item
		usleep(200000);
		return (link_flags().find("PROMISC") != std::string::npos) == on;
	}

	// Waits (at most 10 s) for B's carrier: igb resets on an XDP attach
	// and on rx-all, and frames sent meanwhile are lost.
	bool wait_carrier()
	{
		for (int i = 0; i < 100; i++) {
			if (link_flags().find("LOWER_UP") != std::string::npos)
				return true;
			usleep(100000);
		}
		return false;
	}

	struct Received {
		bool ok = false;
		uint64_t packets = 0;
		std::string err, describe;
	};

	// recv on every queue of B while A sends each burst (tags, count);
	// what reached the socket, and recv's stderr.
	Received recv_round(const std::vector<std::pair<Tags, unsigned>> &bursts)
	{
		Received got;
		std::vector<std::string> argv{tool_,	"--json", "-n",	      b_.ns,	      "recv", b_.ifname,
					      "--queues", "all",    "--xsk-mode", "copy", "--idle", "2",
					      "--duration", "30",   "--interval", "0"};
		// vmxnet3 before 6.6 has no native XDP: the filter is the NIC's
		// either way, so xdp_xsk runs in skb mode there
		if (!native_xdp_)
			argv.insert(argv.end(), {"--xdp-mode", "skb"});
		BackgroundCmd rx(argv);
		if (!rx.wait_for_output("\"type\":\"start\"", 30)) {
			got.describe = "recv never started: " + rx.wait(1).describe();
			return got;
		}
		usleep(300000);
		for (const auto &[tags, n] : bursts)
			send(a_, tags, n, kBcast);
		CmdResult r = rx.wait(60);
		got.err = r.err;
		got.describe = r.describe();
		size_t last = r.out.rfind("{\"type\"");
		if (!r.ok() || last == std::string::npos)
			return got;
		auto p = json_u64(r.out.substr(last), "packets");
		got.ok = p.has_value();
		got.packets = p.value_or(0);
		return got;
	}

	static bool has(const std::string &s, const std::string &needle) { return s.find(needle) != std::string::npos; }
	// The line of recv and attach for a filter with no VID registered.
	static constexpr const char *kNoVidLine = "and no VLAN device registered a VID: tagged frames";

	std::string driver_, filter_fact_, where_, vlan_dev_;
	bool rx_all_fact_ = false, filter_on_ = false, filter_fixed_ = false, rx_all_changeable_ = false;
	bool drops_ = false, drops_other_ = false, rx_all_on_ = false, native_xdp_ = true;
};

// (1) the line is printed exactly where the device drops the frames of a
// VID nothing registered, and names the remedies that apply to it.
TEST_F(VlanFilterNic, RecvWarnsExactlyWhereUnregisteredVidsAreDropped)
{
	CmdResult v = run_cmd({"ip", "-n", b_.ns, "-o", "link", "show", "type", "vlan"}, kCmdTimeout);
	ASSERT_EQ(v.out, "") << "no VLAN device on B's side";
	Received r = recv_round({{{kUnreg}, kN}, {{}, kN}});
	ASSERT_TRUE(r.ok) << "recv: " << r.describe;
	std::printf("VlanFilterNic: %s: %llu of %u frames of VID 300 arrived, unpromiscuous\n", where_.c_str(),
		    static_cast<unsigned long long>(r.packets > kN ? r.packets - kN : 0), kN);
	EXPECT_EQ(r.packets, kN + (drops_ ? 0 : kN))
		<< where_ << ": " << kN << " untagged frames and " << (drops_ ? "none" : "all") << " of " << kN
		<< " of VID 300 reach the socket";
	EXPECT_EQ(has(r.err, kNoVidLine), drops_) << where_ << ": recv's line exactly where they are lost: " << r.err;
	if (drops_) {
		EXPECT_TRUE(has(r.err, "(ip link set " + b_.ifname + " promisc on")) << r.err;
		EXPECT_EQ(has(r.err, "ethtool -K " + b_.ifname + " rx-all on"), rx_all_fact_ && rx_all_changeable_)
			<< where_ << ": rx-all is named where it opens the filter: " << r.err;
	}
	expect_all_clean("after recv");
}

// attach vlan says the same, and xdp_vlan's own counters see what arrived.
TEST_F(VlanFilterNic, AttachVlanWarnsTheSameAndXdpSeesWhatArrives)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	CmdResult at = tool(b_.ns, {"attach", b_.ifname, "vlan", "--no-tag-kfunc"});
	ASSERT_EQ(at.exit_code, 0) << last_cmd_ << ": " << at.describe();
	EXPECT_EQ(has(at.err, kNoVidLine), drops_) << where_ << ": attach's line: " << at.err;
	ASSERT_TRUE(wait_carrier()) << b_.ifname << " has no carrier after the attach";
	send(a_, {kUnreg}, kN, kBcast);
	send(a_, {}, kN, kBcast);
	usleep(500000);
	EXPECT_EQ(counter(b_, "xdp", "passed"), static_cast<long long>(kN + (drops_ ? 0 : kN)))
		<< where_ << ": xdp_vlan passes what reaches it (the default policy)";
	detach_and_check(b_);
}

// (2) the remedies the line names let every VID in; each is given back.
TEST_F(VlanFilterNic, TheRemedyTheLineNamesLetsTheVidIn)
{
	if (!drops_)
		GTEST_SKIP() << where_ << " drops no VID: there is no remedy to check";
	std::vector<std::string> remedies{"promisc"};
	if (rx_all_fact_ && rx_all_changeable_)
		remedies.push_back("rx-all");
	for (const std::string &m : remedies) {
		SCOPED_TRACE(where_ + ", remedy " + m);
		if (m == "promisc") {
			ASSERT_TRUE(set_promisc(true));
		} else {
			CmdResult k = run_cmd(ns_cmd({"ethtool", "-K", b_.ifname, "rx-all", "on"}), kCmdTimeout);
			ASSERT_EQ(k.exit_code, 0) << k.describe();
			rx_all_on_ = true;
			ASSERT_EQ(feature(b_, "rx-all"), "on");
		}
		ASSERT_TRUE(wait_carrier());
		Received r = recv_round({{{kUnreg}, kN}, {{}, kN}});
		ASSERT_TRUE(r.ok) << "recv: " << r.describe;
		EXPECT_EQ(r.packets, 2 * kN) << "every frame of VID 300 and every untagged one";
		EXPECT_FALSE(has(r.err, "rx-vlan-filter on")) << "no line once the filter is open: " << r.err;
		if (m == "promisc") {
			EXPECT_TRUE(set_promisc(false)) << "promiscuous mode given back";
		} else {
			CmdResult k = run_cmd(ns_cmd({"ethtool", "-K", b_.ifname, "rx-all", "off"}), kCmdTimeout);
			EXPECT_EQ(k.exit_code, 0) << k.describe();
			EXPECT_EQ(feature(b_, "rx-all"), "off") << "rx-all given back";
			rx_all_on_ = false;
			ASSERT_TRUE(wait_carrier());
		}
	}
	// closed again: the filter is back
	Received r = recv_round({{{kUnreg}, kN}, {{}, kN}});
	ASSERT_TRUE(r.ok) << "recv: " << r.describe;
	EXPECT_EQ(r.packets, kN) << where_ << ": VID 300 dropped again once every remedy is given back";
	EXPECT_TRUE(has(r.err, kNoVidLine)) << r.err;
}

// (3) a VLAN device registers its VID: those frames arrive, the no-VID line
// goes (the line that remains says only its VIDs arrive), and the VID is
// filtered again once the device is gone.
TEST_F(VlanFilterNic, AVlanDeviceLetsItsVidIn)
{
	vlan_dev_ = "xo-vf300";
	CmdResult add = run_cmd({"ip", "-n", b_.ns, "link", "add", "link", b_.ifname, "name", vlan_dev_, "type", "vlan",
				 "id", "300"},
				kCmdTimeout);
	if (add.exit_code != 0) {
		vlan_dev_.clear();
		if (run_cmd({"modprobe", "-n", "8021q"}, kCmdTimeout).exit_code != 0)
			GTEST_SKIP() << "needs the 8021q module (VLAN devices): " << add.err;
		FAIL() << "ip link add ... type vlan: " << add.describe();
	}
	Received r = recv_round({{{kUnreg}, kN}, {{kOther}, kN}, {{}, kN}});
	ASSERT_TRUE(r.ok) << "recv: " << r.describe;
	std::printf("VlanFilterNic: %s: VID 300 registered: %llu frames of %u (VID 300, VID 301, untagged)\n",
		    where_.c_str(), static_cast<unsigned long long>(r.packets), 3 * kN);
	EXPECT_EQ(r.packets, 2 * kN + (drops_other_ ? 0 : kN))
		<< where_ << ": VID 300 and untagged arrive; VID 301 " << (drops_other_ ? "does not" : "too");
	EXPECT_FALSE(has(r.err, kNoVidLine)) << r.err;
	EXPECT_EQ(has(r.err, "only the VIDs of its 1 VLAN device(s)"), drops_other_ && filter_fixed_)
		<< where_ << ": " << r.err;
	CmdResult del = run_cmd({"ip", "-n", b_.ns, "link", "del", "dev", vlan_dev_}, kCmdTimeout);
	ASSERT_EQ(del.exit_code, 0) << del.describe();
	vlan_dev_.clear();
	r = recv_round({{{kUnreg}, kN}, {{}, kN}});
	ASSERT_TRUE(r.ok) << "recv: " << r.describe;
	EXPECT_EQ(r.packets, kN + (drops_ ? 0 : kN)) << where_ << ": VID 300 unregistered with the device";
	EXPECT_EQ(has(r.err, kNoVidLine), drops_) << r.err;
}

// ---- tags outside the frame data (issue 16, item 1) -------------------------
// A's tc-egress program pushes VID 100 with A's tx-vlan-offload on, so the
// tag travels in skb metadata (skb->vlan_tci), as a NIC that strips tags
// hands them over: B's XDP sees an untagged frame, and only the driver's
// rx-vlan-tag kfunc (veth has it, 6.8+) tells it the tag.
class VlanMeta : public VlanVeth {
protected:
	// A pushes @vid at tc-egress, the tag kept out of the data.
	void push_in_metadata(unsigned vid)
	{
		CmdResult k = run_cmd({"ip", "netns", "exec", a_.ns, "ethtool", "-K", a_.ifname, "txvlan", "on"}, kCmdTimeout);
		ASSERT_EQ(k.exit_code, 0) << "ethtool -K txvlan on: " << k.describe();
		ASSERT_TRUE(tool_ok(a_.ns, {"attach", a_.ifname, "vlan", "--hook", "tc-egress"}));
		ASSERT_TRUE(tool_ok(a_.ns, {"vlan", "push", a_.ifname, "--vid", std::to_string(vid), "--dir", "egress"}));
	}
	// veth hands XDP the tag it carries in metadata from 6.8 (veth.c
	// veth_xdp_rx_vlan_tag).
	static bool kernel_has_tag_kfunc()
	{
		utsname u{};
		unsigned maj = 0, min = 0;
		return !uname(&u) && std::sscanf(u.release, "%u.%u", &maj, &min) == 2 && (maj > 6 || (maj == 6 && min >= 8));
	}
	void SetUp() override
	{
		VlanVeth::SetUp();
		if (IsSkipped() || HasFatalFailure())
			return;
		if (!kernel_has_tag_kfunc())
			GTEST_SKIP() << "needs Linux 6.8+ (veth's rx-vlan-tag kfunc): before it XDP cannot see a tag "
					"carried in metadata";
	}
	// Attaches vlan at B's XDP: xdp_vlan_tag, device-bound, alone.
	void attach_b()
	{
		CmdResult at = tool(b_.ns, {"attach", b_.ifname, "vlan"}, true);
		ASSERT_EQ(at.exit_code, 0) << last_cmd_ << ": " << at.describe();
		EXPECT_NE(at.out.find("\"rx_vlan_tag_kfunc\":true"), std::string::npos)
			<< "veth offers the rx-vlan-tag kfunc on 6.8+: " << at.out;
		EXPECT_NE(at.out.find("\"prog_name\":\"xdp_vlan_tag\""), std::string::npos) << at.out;
		EXPECT_NE(at.err.find("device-bound program"), std::string::npos)
			<< "one line says why it runs alone: " << at.err;
	}
	void send_untagged(unsigned n) { send(a_, {}, n); }
	void TearDown() override
	{
		if (!a_.ns.empty()) {
			(void)tool(a_.ns, {"detach", a_.ifname});
			(void)tool(b_.ns, {"detach", b_.ifname});
		}
		VlanVeth::TearDown();
	}
};

TEST_F(VlanMeta, PopOfATagInMetadataIsCountedNeverPassed)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	const unsigned n = 5;
	push_in_metadata(100);
	attach_b();
	if (HasFatalFailure())
		return;
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "pop", b_.ifname}));
	send_untagged(n);
	EXPECT_EQ(counter(b_, "xdp", "dropped-tag-in-metadata"), n) << "XDP cannot pop a tag in metadata";
	EXPECT_EQ(counter(b_, "xdp", "passed"), 0) << "never counted passed";
	EXPECT_EQ(counter(b_, "xdp", "popped"), 0);
}

TEST_F(VlanMeta, AllowListSeesATagInMetadata)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	const unsigned n = 5;
	push_in_metadata(100);
	attach_b();
	if (HasFatalFailure())
		return;
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "allow", b_.ifname, "--vid", "200"}));
	send_untagged(n);
	EXPECT_EQ(counter(b_, "xdp", "dropped-not-allowed"), n) << "VID 100 (in metadata) is not allowed";
	EXPECT_EQ(counter(b_, "xdp", "passed"), 0);
	// and an allowed VID in metadata passes, tag and all
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "allow", b_.ifname, "--vid", "100"}));
	send_untagged(n);
	EXPECT_EQ(counter(b_, "xdp", "passed"), n) << "VID 100 allowed now";
}

TEST_F(VlanMeta, RewriteOfATagInMetadataIsCountedNeverPassed)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	const unsigned n = 5;
	push_in_metadata(100);
	attach_b();
	if (HasFatalFailure())
		return;
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "rewrite", b_.ifname, "--from", "100", "--to", "222"}));
	send_untagged(n);
	EXPECT_EQ(counter(b_, "xdp", "dropped-tag-in-metadata"), n) << "XDP cannot rewrite a tag in metadata";
	EXPECT_EQ(counter(b_, "xdp", "passed"), 0) << "never counted passed";
	EXPECT_EQ(counter(b_, "xdp", "rewritten"), 0);
}

// A VID the rewrite rules do not name passes with its tag in metadata.
TEST_F(VlanMeta, RewriteRulesOfOtherVidsPassATagInMetadata)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	const unsigned n = 5;
	push_in_metadata(100);
	attach_b();
	if (HasFatalFailure())
		return;
	ASSERT_TRUE(tool_ok(b_.ns, {"vlan", "rewrite", b_.ifname, "--from", "300", "--to", "301"}));
	send_untagged(n);
	EXPECT_EQ(counter(b_, "xdp", "passed"), n);
	EXPECT_EQ(counter(b_, "xdp", "dropped-tag-in-metadata"), 0);
}

TEST_F(VlanMeta, RecvFilterVlanSeesATagInMetadata)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(b_.ns, b_.ifname);
	const unsigned n = 20;
	push_in_metadata(100);
	if (HasFatalFailure())
		return;
	BackgroundCmd rx({tool_, "--json", "-n", b_.ns, "recv", b_.ifname, "--filter-vlan", "100", "--idle", "1",
			  "--duration", "15", "--interval", "0"});
	ASSERT_TRUE(rx.wait_for_output("\"type\":\"start\"", 20)) << "recv never started";
	CmdResult st = tool(b_.ns, {"status", b_.ifname}, true);
	const bool tag = st.out.find("\"xdp_xsk_tag\"") != std::string::npos;
	usleep(200000);
	send_untagged(n);
	CmdResult r = rx.wait(20);
	ASSERT_TRUE(r.ok()) << r.describe();
	EXPECT_TRUE(tag) << "recv --filter-vlan loads xdp_xsk_tag where the driver has the kfunc: " << st.out;
	const std::string last = r.out.substr(r.out.rfind("{\"type\""));
	EXPECT_NE(last.find("\"packets\":" + std::to_string(n) + ","), std::string::npos)
		<< "every frame of VID 100 (tag in metadata) received: " << r.out;
	EXPECT_NE(r.err.find("device-bound program"), std::string::npos) << r.err;
}

} // namespace
} // namespace xoffload::test
