// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// AF_XDP engine on veth pairs in fresh namespaces: offload-tool send/recv
// exact counts and bytes (sizes, VLAN, multi-queue, TX-metadata checksum),
// pcap round trip, SIGINT cleanup, "queue in use", and the UMEM frame
// accounting over 1M frames with small rings (in-process, library API).
#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <optional>
#include <regex>
#include <thread>

#include "packet_builder.hpp"
#include "testbed.hpp"
#include "xoffload/core/fd.hpp"
#include "xoffload/features/features.hpp"
#include "xoffload/core/kernel.hpp"
#include "xoffload/core/netdev.hpp"
#include "xoffload/xsk/pcap.hpp"
#include "xoffload/xsk/xsk.hpp"
#include "xoffload/xsk/prog.hpp"

namespace xoffload::test {
namespace {

constexpr double kTimeout = 30;

class XskVeth : public TestbedTest {
protected:
	void SetUp() override
	{
		TestbedTest::SetUp();
		if (IsSkipped() || HasFatalFailure())
			return;
		char tmpl[] = "/tmp/xo-xsk-XXXXXX";
		ASSERT_NE(mkdtemp(tmpl), nullptr);
		tmp_ = tmpl;
	}
	void TearDown() override
	{
		if (!tmp_.empty())
			(void)run_cmd({"rm", "-rf", tmp_}, 10);
		TestbedTest::TearDown();
	}

	std::vector<std::string> tool(const std::string &ns, std::vector<std::string> args) const
	{
		std::vector<std::string> v{tool_, "--json", "-n", ns};
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
	bool xdp_attached(const std::string &ns, const std::string &ifname) const
	{
		CmdResult r = run_cmd({"ip", "-n", ns, "link", "show", "dev", ifname}, 10);
		return r.out.find("prog/xdp") != std::string::npos;
	}
	// Waits for recv to have attached xdp_xsk (its sockets are in the map first).
	bool wait_attached(const std::string &ns, const std::string &ifname) const
	{
		for (int i = 0; i < 100; i++) {
			if (xdp_attached(ns, ifname)) {
				std::this_thread::sleep_for(std::chrono::milliseconds(200));
				return true;
			}
			std::this_thread::sleep_for(std::chrono::milliseconds(50));
		}
		return false;
	}

	std::string tmp_;

	// A TX-only socket on side A (queue 0): 128 frames of 2 KiB, rings of 64.
	void make_tx_socket(std::optional<xsk::Umem> &umem, std::optional<xsk::XskSocket> &sock, bool tx_metadata)
	{
		InNetns in(tb_->ns_a());
		ASSERT_TRUE(in.ok());
		auto dev = netdev_lookup(tb_->if_a());
		ASSERT_TRUE(dev.ok());
		auto u = xsk::Umem::create({128, 2048, 0, tx_metadata});
		ASSERT_TRUE(u.ok()) << u.error().msg;
		umem.emplace(std::move(*u));
		xsk::SocketConfig sc;
		sc.frames = 128;
		sc.fill_size = sc.comp_size = sc.tx_size = 64;
		sc.rx_size = 0;
		auto s = xsk::XskSocket::create(*umem, *dev, sc);
		ASSERT_TRUE(s.ok()) << s.error().msg;
		sock.emplace(std::move(*s));
	}
};

struct Case {
	const char *name;
	uint32_t size;
	std::vector<uint16_t> vids;
	bool tcp = false;
	bool tx_csum = false;
};

Bytes expected_frame(const Case &c)
{
	PacketBuilder b;
	b.eth(kMacB, kMacA);
	if (c.vids.size() == 2)
		b.vlan(kTpid8021AD, c.vids[0]).vlan(kTpid8021Q, c.vids[1]);
	else if (c.vids.size() == 1)
		b.vlan(kTpid8021Q, c.vids[0]);
	b.ipv4(kIpA, kIpB);
	size_t hdrs = kEthHdrLen + kVlanHdrLen * c.vids.size() + 20 + (c.tcp ? 20 : 8);
	if (c.tcp)
		b.tcp(kPortA, kPortB);
	else
		b.udp(kPortA, kPortB);
	b.payload(c.size - hdrs);
	return b.build();
}

// Lower-case hex without separators, as xo-pkt capture --hex prints it.
std::string hexdump_flat(const Bytes &b)
{
	static const char digits[] = "0123456789abcdef";
	std::string s;
	for (uint8_t x : b) {
		s += digits[x >> 4];
		s += digits[x & 15];
	}
	return s;
}

std::string vid_arg(const std::vector<uint16_t> &v)
{
	std::string s;
	for (auto x : v)
		s += (s.empty() ? "" : ",") + std::to_string(x);
	return s;
}

// The modes --xsk-mode auto must bind on a NIC pair, from the driver's facts
// under the running kernel: zero-copy RX where the pool binds (zero_copy),
// zero-copy TX where it also transmits (zc_tx). virtio_net binds zero-copy
// only on a device with VIRTIO_F_ACCESS_PLATFORM (bit 33 of the virtio
// device's features; qemu iommu_platform=on): without it, copy. On veth
// (no driver): copy both.
struct AutoModes {
	std::string rx = "copy", tx = "copy", why;
};
AutoModes auto_modes(const std::string &ns, const std::string &ifname)
{
	AutoModes m;
	const std::string driver = nic_driver(ns, ifname);
	if (driver.empty() || driver == "?")
		return m;
	const features::NicFacts f = features::nic_facts_running(driver);
	bool dma = true;
	if (f.driver == DevKind::virtio_net) {
		CmdResult r = run_cmd({"ip", "netns", "exec", ns, "cat", "/sys/class/net/" + ifname + "/device/features"}, 10);
		dma = r.ok() && r.out.size() > 33 && r.out[33] == '1';
		m.why = std::string("virtio ACCESS_PLATFORM ") + (dma ? "on" : "off") + "; ";
	}
	if (f.zero_copy.value && dma)
		m.rx = "zero-copy";
	if (f.zero_copy.value && f.zc_tx.value && dma)
		m.tx = "zero-copy";
	m.why += driver + " facts on " + running_kernel().text + ": zero_copy " + (f.zero_copy.value ? "yes" : "no") +
		 ", zc_tx " + (f.zc_tx.value ? "yes" : "no");
	return m;
}

// send exactly N frames of several shapes; recv gets exactly N, byte-exact,
// and its pcap reads back with libpcap. On a NIC pair each end binds the
// mode its driver's facts promise (a zero-copy driver that falls back to
// copy fails).
TEST_F(XskVeth, SendRecvExactCountAndBytes)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(tb_->ns_b(), tb_->if_b());	// recv attaches xdp_xsk native
	const AutoModes want_tx = auto_modes(tb_->ns_a(), tb_->if_a()), want_rx = auto_modes(tb_->ns_b(), tb_->if_b());
	const Case cases[] = {
		{"64B untagged", 64, {}},
		{"1514B untagged", 1514, {}},
		{"128B 802.1Q", 128, {100}},
		{"512B QinQ", 512, {100, 200}},
		{"256B TCP", 256, {}, true},
		{"300B UDP csum by TX metadata", 300, {7}, false, true},
	};
	const unsigned n = 1000;
	for (const Case &c : cases) {
		SCOPED_TRACE(c.name);
		std::string pcap = tmp_ + "/rx.pcap";
		// every RX queue: on a NIC pair RSS may put the flow on any of them
		// (qemu's igb on 7.2: all on queue 1)
		BackgroundCmd rx(tool(tb_->ns_b(), {"recv", tb_->if_b(), "--queues", "all", "--idle", quiet_seconds(0.4), "--duration", "15",
						    "--interval", "0", "--pcap", pcap}));
		ASSERT_TRUE(rx.started());
		ASSERT_TRUE(wait_attached(tb_->ns_b(), tb_->if_b())) << "recv never attached xdp_xsk";
		std::vector<std::string> extra{"--count", std::to_string(n), "--size", std::to_string(c.size),
					       "--src-port", std::to_string(kPortA), "--dst-port", std::to_string(kPortB)};
		if (!c.vids.empty())
			extra.insert(extra.end(), {"--vlan", vid_arg(c.vids)});
		if (c.tcp)
			extra.insert(extra.end(), {"--proto", "tcp"});
		if (c.tx_csum)
			extra.push_back("--tx-csum");
		CmdResult tx = run_cmd(tool(tb_->ns_a(), send_args(extra)), kTimeout);
		ASSERT_TRUE(tx.ok()) << tx.describe();
		std::string txs = last_line(tx.out);
		EXPECT_EQ(json_u64(txs, "completed"), n) << txs;
		EXPECT_NE(txs.find("\"consistent\":true"), std::string::npos) << txs;

		CmdResult r = rx.wait(20);
		ASSERT_TRUE(r.ok()) << r.describe();
		std::string rxs = last_line(r.out);
		EXPECT_EQ(json_u64(rxs, "packets"), n) << rxs;
		EXPECT_EQ(json_u64(rxs, "redirected"), n) << rxs;
		EXPECT_EQ(json_u64(rxs, "bytes"), uint64_t{n} * c.size) << rxs;
		EXPECT_NE(rxs.find("\"consistent\":true"), std::string::npos) << rxs;
		EXPECT_FALSE(xdp_attached(tb_->ns_b(), tb_->if_b())) << "recv left xdp_xsk attached";
		// which modes auto bound, for the record, and what the facts promise
		std::printf("%s: send %s, recv %s\n", c.name, json_str(txs, "mode").c_str(), json_str(rxs, "mode").c_str());
		EXPECT_EQ(json_str(txs, "mode"), want_tx.tx) << want_tx.why << "\n" << tx.err;
		EXPECT_EQ(json_str(rxs, "mode"), want_rx.rx) << want_rx.why << "\n" << r.err;

		auto frames = pcap_read_all(pcap);
		ASSERT_TRUE(frames.ok()) << frames.error().msg;
		ASSERT_EQ(frames->size(), n);
		Bytes want = expected_frame(c);
		size_t bad = 0;
		for (const auto &f : *frames)
			bad += f != want;
		EXPECT_EQ(bad, 0u) << "first frame:\n" << hexdump((*frames)[0]) << "want:\n" << hexdump(want);
	}
}

// recv with xdp_xsk as a single program (LIBXDP_SKIP_DISPATCHER=1 makes
// libxdp attach it alone, as it does itself where its dispatcher cannot
// run it): one stderr line says so and why, the frames arrive, and recv
// detaches it on exit.
TEST_F(XskVeth, RecvAsASingleProgramSaysWhyAndLeavesNothing)
{
	const unsigned n = 100;
	std::vector<std::string> argv = tool(tb_->ns_b(), {"recv", tb_->if_b(), "--idle", quiet_seconds(0.4), "--duration", "15",
							   "--interval", "0"});
	argv.insert(argv.begin(), {"env", "LIBXDP_SKIP_DISPATCHER=1"});
	BackgroundCmd rx(argv);
	ASSERT_TRUE(rx.wait_for_output("\"type\":\"start\"", 20)) << "recv never started";
	CmdResult st = run_cmd({tool_, "--json", "-n", tb_->ns_b(), "status", tb_->if_b()}, kTimeout);
	EXPECT_NE(st.out.find("\"multiprog\":false"), std::string::npos) << st.out;
	EXPECT_NE(st.out.find("\"xdp_xsk\""), std::string::npos) << st.out;
	CmdResult tx = run_cmd(tool(tb_->ns_a(), send_args({"--count", std::to_string(n)})), kTimeout);
	ASSERT_TRUE(tx.ok()) << tx.describe();
	CmdResult r = rx.wait(20);
	ASSERT_TRUE(r.ok()) << r.describe();
	EXPECT_EQ(json_u64(last_line(r.out), "packets"), n) << r.out;
	const std::string line = "attached xdp_xsk as a single program\n";
	EXPECT_EQ(r.err.rfind("xoffload: LIBXDP_SKIP_DISPATCHER=1 is set (libxdp ", 0), 0u) << r.err;
	EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
	EXPECT_NE(r.err.find(line), std::string::npos) << r.err;
	EXPECT_FALSE(xdp_attached(tb_->ns_b(), tb_->if_b())) << "recv left xdp_xsk attached";
}

class XskVeth2Q : public XskVeth {
protected:
	Testbed::Options testbed_options() const override
	{
		Testbed::Options o;
		o.queues = 2;
		return o;
	}
};

// One socket per queue over one shared UMEM on both ends: each queue's
// frames land on the peer's same queue.
// The feature model's TX-queue facts read the queues a sender can bind.
TEST_F(XskVeth2Q, QueueFactsSeeBothQueues)
{
	InNetns in(tb_->ns_a());
	ASSERT_TRUE(in.ok());
	auto f = tx_queue_facts_live(tb_->if_a(), KernelVersion::v6_12, false);
	ASSERT_TRUE(f.ok()) << f.error().msg;
	EXPECT_EQ(f->tx_queues, 2u);
	EXPECT_GE(f->max_tx_queues, 2u);
	EXPECT_FALSE(f->zero_copy) << "veth has no zero-copy AF_XDP";
}

TEST_F(XskVeth2Q, MultiQueueSharedUmem)
{
	const unsigned n = 4000;
	BackgroundCmd rx(tool(tb_->ns_b(), {"recv", tb_->if_b(), "--queues", "2", "--idle", quiet_seconds(0.4), "--duration", "15",
					    "--interval", "0"}));
	ASSERT_TRUE(wait_attached(tb_->ns_b(), tb_->if_b()));
	CmdResult tx = run_cmd(tool(tb_->ns_a(), send_args({"--queues", "2", "--count", std::to_string(n)})), kTimeout);
	ASSERT_TRUE(tx.ok()) << tx.describe();
	EXPECT_EQ(json_u64(last_line(tx.out), "completed"), n);
	CmdResult r = rx.wait(20);
	ASSERT_TRUE(r.ok()) << r.describe();
	std::string s = last_line(r.out);
	EXPECT_EQ(json_u64(s, "packets"), n) << s;
	// Per-socket entries ("sockets"), in queue order: both queues carried traffic.
	std::regex re("\"queue\":([0-9]+),\"rx_packets\":([0-9]+)");
	uint64_t total = 0;
	unsigned queues = 0;
	for (std::sregex_iterator it(s.begin(), s.end(), re), end; it != end; ++it) {
		uint64_t p = std::stoull((*it)[2]);
		EXPECT_GT(p, 0u) << "queue " << (*it)[1] << " got nothing: " << s;
		total += p;
		queues++;
	}
	EXPECT_EQ(queues, 2u) << s;
	EXPECT_EQ(total, n);
}

// The "threads" entries of a summary: (cpu or -1, packets) per worker thread.
std::vector<std::pair<int, uint64_t>> summary_threads(const std::string &s)
{
	std::vector<std::pair<int, uint64_t>> v;
	std::regex re("\"thread\":[0-9]+,(?:\"cpu\":([0-9]+),)?\"queues\":\\[[0-9,]*\\],\"packets\":([0-9]+)");
	for (std::sregex_iterator it(s.begin(), s.end(), re), end; it != end; ++it)
		v.push_back({(*it)[1].matched ? std::stoi((*it)[1]) : -1, std::stoull((*it)[2])});
	return v;
}

// One worker thread per queue on both ends (pinned with --cpus): the
// threads of send and of recv share --count out batch by batch and
// together stop at exactly N, and each side's per-thread counts add up to
// its total.
TEST_F(XskVeth2Q, OneThreadPerQueueCountsExactly)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	std::vector<int> cpus;
	for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus.push_back(c);
	const std::string pin = std::to_string(cpus.front()) + (cpus.size() > 1 ? "," + std::to_string(cpus.back()) : "");
	const uint64_t n = 20000, take = 15000;
	BackgroundCmd rx(tool(tb_->ns_b(), {"recv", tb_->if_b(), "--queues", "2", "--count", std::to_string(take),
					    "--duration", "20", "--interval", "0"}));
	ASSERT_TRUE(wait_attached(tb_->ns_b(), tb_->if_b()));
	CmdResult tx = run_cmd(tool(tb_->ns_a(), send_args({"--queues", "2", "--cpus", pin, "--count", std::to_string(n)})),
			       kTimeout);
	ASSERT_TRUE(tx.ok()) << tx.describe();
	const std::string ts = last_line(tx.out);
	EXPECT_EQ(json_u64(ts, "completed"), n) << ts;
	auto tt = summary_threads(ts);
	ASSERT_EQ(tt.size(), cpus.size()) << ts;
	uint64_t sum = 0;
	for (size_t t = 0; t < tt.size(); t++) {
		EXPECT_EQ(tt[t].first, cpus[t]) << "thread " << t << " not on its --cpus CPU: " << ts;
		EXPECT_GT(tt[t].second, 0u) << "a thread sent nothing: " << ts;
		sum += tt[t].second;
	}
	EXPECT_EQ(sum, n);
	CmdResult r = rx.wait(30);
	ASSERT_TRUE(r.ok()) << r.describe();
	const std::string rs = last_line(r.out);
	EXPECT_EQ(json_u64(rs, "packets"), take) << "recv --count across two threads: " << rs;
	auto rt = summary_threads(rs);
	ASSERT_EQ(rt.size(), 2u) << "one unpinned thread per queue: " << rs;
	uint64_t got = 0;
	for (const auto &[cpu, p] : rt) {
		EXPECT_EQ(cpu, -1) << rs;
		EXPECT_GT(p, 0u) << "a queue's thread received nothing: " << rs;
		got += p;
	}
	// --count is shared out batch by batch: no thread takes a frame beyond it
	EXPECT_EQ(got, take) << rs;
}

// --cpus: a malformed list or a CPU this process may not use is one line,
// exit 2, before anything is bound.
TEST_F(XskVeth2Q, BadCpusIsAUsageError)
{
	for (const std::string bad : {"x", "4000", "0-"}) {
		CmdResult r = run_cmd(tool(tb_->ns_a(), send_args({"--queues", "2", "--cpus", bad, "--count", "10"})), kTimeout);
		EXPECT_EQ(r.exit_code, 2) << r.describe();
		EXPECT_NE(r.err.find("--cpus " + bad + ":"), std::string::npos) << r.err;
		EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
		CmdResult v = run_cmd(tool(tb_->ns_b(), {"recv", tb_->if_b(), "--cpus", bad, "--count", "1"}), kTimeout);
		EXPECT_EQ(v.exit_code, 2) << v.describe();
		EXPECT_FALSE(xdp_attached(tb_->ns_b(), tb_->if_b()));
	}
}

// Ctrl-C: summary printed, exit 0, program detached, no pins left.
TEST_F(XskVeth, SigintLeavesNothingBehind)
{
	// signalled once it says it started: a fixed delay raced the setup of a
	// loaded TCG guest (exit 130, the handler not yet installed)
	BackgroundCmd rx({tool_, "--json", "-n", tb_->ns_b(), "recv", tb_->if_b(), "--duration", "30", "--interval", "0"});
	ASSERT_TRUE(rx.wait_for_output("\"type\":\"start\"", 15)) << "recv never started";
	ASSERT_TRUE(rx.signal(SIGINT));
	CmdResult r = rx.wait(kTimeout);
	EXPECT_EQ(r.exit_code, 0) << r.describe();
	EXPECT_NE(r.out.find("\"interrupted\":true"), std::string::npos) << r.out;
	EXPECT_FALSE(xdp_attached(tb_->ns_b(), tb_->if_b())) << "xdp_xsk still attached after SIGINT";
	EXPECT_FALSE(path_exists(std::string(kBpffsRoot) + "/xoffload/" + tb_->if_b() + "@" + tb_->ns_b()));

	CmdResult s = run_cmd({"timeout", "--preserve-status", "-s", "INT", "1", tool_, "--json", "-n", tb_->ns_a(), "send", tb_->if_a(),
			       "--dst-mac", "02:00:00:00:00:0b", "--src-ip", "198.18.0.1", "--dst-ip", "198.18.0.2",
			       "--duration", "30", "--interval", "0"},
			      kTimeout);
	EXPECT_EQ(s.exit_code, 0) << s.describe();
	std::string line = last_line(s.out);
	EXPECT_NE(line.find("\"interrupted\":true"), std::string::npos) << line;
	EXPECT_EQ(json_u64(line, "submitted"), json_u64(line, "completed")) << line;
	// The queue is free again.
	CmdResult again = run_cmd(tool(tb_->ns_a(), send_args({"--count", "10"})), kTimeout);
	EXPECT_TRUE(again.ok()) << again.describe();
}

// The value of one sysfs file of @ifname in @ns (ip netns exec mounts that
// namespace's sysfs); "" when it cannot be read.
std::string netns_sysfs(const std::string &ns, const std::string &ifname, const std::string &file)
{
	CmdResult r = run_cmd({"ip", "netns", "exec", ns, "cat", "/sys/class/net/" + ifname + "/" + file}, 10);
	return r.ok() ? r.out.substr(0, r.out.find('\n')) : "";
}

// SO_PREFER_BUSY_POLL, SO_BUSY_POLL and SO_BUSY_POLL_BUDGET of every AF_XDP
// socket process @pid holds (copies of its fds by pidfd_getfd, 5.6+).
struct BusyPollOpts {
	int prefer = -1, usecs = -1, budget = -1;
	int budget_errno = 0;	// the kernel may not report SO_BUSY_POLL_BUDGET (ENOPROTOOPT)
};
std::vector<BusyPollOpts> xsk_busy_poll_opts(int pid)
{
	std::vector<BusyPollOpts> v;
	const int pfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
	if (pfd < 0)
		return v;
	const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
	for (const auto &e : std::filesystem::directory_iterator(dir)) {
		std::error_code ec;
		if (std::filesystem::read_symlink(e.path(), ec).string().rfind("socket:", 0) != 0)
			continue;
		const int fd = static_cast<int>(::syscall(SYS_pidfd_getfd, pfd, std::stoi(e.path().filename()), 0));
		if (fd < 0)
			continue;
		int dom = 0;
		socklen_t len = sizeof(dom);
		if (!::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) && dom == 44 /* AF_XDP */) {
			BusyPollOpts o;
			len = sizeof(int);
			(void)::getsockopt(fd, SOL_SOCKET, 69 /* SO_PREFER_BUSY_POLL */, &o.prefer, &len);
			len = sizeof(int);
			(void)::getsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &o.usecs, &len);
			len = sizeof(int);
			if (::getsockopt(fd, SOL_SOCKET, 70 /* SO_BUSY_POLL_BUDGET */, &o.budget, &len))
				o.budget_errno = errno;
			v.push_back(o);
		}
		::close(fd);
	}
	::close(pfd);
	return v;
}

// recv --busy-poll: the three options are on its socket (read back from
// the running process), the device's NAPI deferral is what
// --napi-defer-hard-irqs / --gro-flush-timeout said while it runs and what
// it was once recv ends by SIGINT; send --busy-poll delivers every frame;
// a bad budget and the sysfs options without --busy-poll are usage errors.
TEST_F(XskVeth, BusyPollSetsSocketOptionsAndRestoresNapiDeferral)
{
	const std::string ns = tb_->ns_b(), dev = tb_->if_b();
	const std::string defer0 = netns_sysfs(ns, dev, "napi_defer_hard_irqs");
	const std::string gro0 = netns_sysfs(ns, dev, "gro_flush_timeout");
	if (defer0.empty() || gro0.empty())
		GTEST_SKIP() << "no napi_defer_hard_irqs / gro_flush_timeout in sysfs (kernel before 5.x?)";
	ASSERT_NE(defer0, "7") << "the value the test sets must differ from the one found";

	BackgroundCmd rx({tool_, "--json", "-n", ns, "recv", dev, "--busy-poll", "32", "--napi-defer-hard-irqs", "7",
			  "--gro-flush-timeout", "200000", "--duration", "30", "--interval", "0"});
	ASSERT_TRUE(rx.wait_for_output("\"type\":\"start\"", 15)) << "recv never started: " << rx.wait(5).describe();
	ASSERT_TRUE(rx.wait_for_output("\"busy_poll\":{\"budget\":32,", 1)) << "no busy_poll object in the start line";
	EXPECT_EQ(netns_sysfs(ns, dev, "napi_defer_hard_irqs"), "7");
	EXPECT_EQ(netns_sysfs(ns, dev, "gro_flush_timeout"), "200000");
	const auto opts = xsk_busy_poll_opts(rx.pid());
	ASSERT_FALSE(opts.empty()) << "found no AF_XDP socket in recv (pid " << rx.pid() << ")";
	for (const auto &o : opts) {
		EXPECT_EQ(o.prefer, 1) << "SO_PREFER_BUSY_POLL";
		EXPECT_EQ(o.usecs, 20) << "SO_BUSY_POLL";
		if (o.budget_errno == ENOPROTOOPT)	// set-only here: what setsockopt took is all there is
			RecordProperty("so_busy_poll_budget", "not readable (ENOPROTOOPT)");
		else
			EXPECT_EQ(o.budget, 32) << "SO_BUSY_POLL_BUDGET (getsockopt errno " << o.budget_errno << ")";
	}
	// paced: with the deferral on and no busy poller owning veth's NAPI (napi
	// id 0 on kernels that take it at bind), the NAPI runs on its timer and
	// an unpaced burst overflows veth's ring (tx_dropped, exit 1)
	CmdResult s = run_cmd(tool(tb_->ns_a(), send_args({"--count", "1000", "--rate", "10000", "--busy-poll"})), kTimeout);
	EXPECT_TRUE(s.ok()) << s.describe();
	EXPECT_EQ(json_u64(last_line(s.out), "completed"), 1000u) << s.out;
	ASSERT_TRUE(rx.signal(SIGINT));
	CmdResult r = rx.wait(kTimeout);
	EXPECT_EQ(r.exit_code, 0) << r.describe();
	const std::string sum = last_line(r.out);
	EXPECT_NE(sum.find("\"busy_poll_napi_ids\":["), std::string::npos) << sum;
	// every frame sent arrived or was dropped by a counted reason
	const std::string drops = sum.substr(std::min(sum.find("\"drops\":{"), sum.size()));
	EXPECT_EQ(json_u64(sum, "packets").value_or(0) + json_u64(drops, "rx_dropped").value_or(0) +
			  json_u64(drops, "rx_ring_full").value_or(0),
		  1000u)
		<< sum;
	EXPECT_EQ(netns_sysfs(ns, dev, "napi_defer_hard_irqs"), defer0) << "not restored after SIGINT";
	EXPECT_EQ(netns_sysfs(ns, dev, "gro_flush_timeout"), gro0) << "not restored after SIGINT";

	const std::vector<std::vector<std::string>> bad = {
		{"recv", dev, "--busy-poll", "x"},
		{"recv", dev, "--busy-poll", "0"},
		{"recv", dev, "--napi-defer-hard-irqs", "2"},
		{"recv", dev, "--gro-flush-timeout", "200000"},
	};
	for (const auto &args : bad) {
		CmdResult b = run_cmd(tool(ns, args), kTimeout);
		EXPECT_EQ(b.exit_code, 2) << join_cmd(args) << ": " << b.describe();
		EXPECT_EQ(std::count(b.err.begin(), b.err.end(), '\n'), 1) << join_cmd(args) << ": " << b.err;
	}
	EXPECT_EQ(netns_sysfs(ns, dev, "napi_defer_hard_irqs"), defer0);
}

// A second send on a queue already in use fails clearly (exit 1); the first
// goes on until Ctrl-C and exits 0.
TEST_F(XskVeth, SecondSendOnSameQueueIsRefused)
{
	BackgroundCmd first(tool(tb_->ns_a(), send_args({"--duration", "30", "--rate", "10000"})));
	ASSERT_TRUE(first.started());
	// send prints nothing until its summary; its socket is bound by then
	// (a second send that finds the queue free fails the check below)
	std::this_thread::sleep_for(std::chrono::milliseconds(500));
	CmdResult second = run_cmd(tool(tb_->ns_a(), send_args({"--count", "10"})), kTimeout);
	EXPECT_EQ(second.exit_code, 1) << second.describe();
	EXPECT_NE(second.err.find("already in use"), std::string::npos) << second.err;
	ASSERT_TRUE(first.signal(SIGINT)) << "the first send ended early: " << first.wait(1).describe();
	CmdResult r = first.wait(10);
	EXPECT_TRUE(r.ok()) << r.describe();

	// And a second recv while one runs.
	BackgroundCmd rx(tool(tb_->ns_b(), {"recv", tb_->if_b(), "--duration", "30", "--interval", "0"}));
	ASSERT_TRUE(rx.wait_for_output("\"type\":\"start\"", 15)) << "recv never started";
	CmdResult rx2 = run_cmd(tool(tb_->ns_b(), {"recv", tb_->if_b(), "--duration", "1"}), kTimeout);
	EXPECT_EQ(rx2.exit_code, 1) << rx2.describe();
	EXPECT_NE(rx2.err.find("already in use"), std::string::npos) << rx2.err;
	ASSERT_TRUE(rx.signal(SIGINT)) << "the first recv ended early: " << rx.wait(1).describe();
	EXPECT_TRUE(rx.wait(10).ok());
}

// Multi-buffer (XDP_USE_SG) at MTU 9000: a 6000-byte frame spans two 4096-byte
// UMEM chunks. The peer's stack must see what send made whole and
// byte-exact, and send must count frames, not chunks, on both the TX and the
// completion side; then recv must get the same frames whole through AF_XDP
// (frags-aware xdp_xsk, descriptor chains put back together), exact count,
// byte-exact in its pcap.
TEST_F(XskVeth, MultiBufferFrameArrivesWhole)
{
	XO_SKIP_WITHOUT_NATIVE_XDP(tb_->ns_b(), tb_->if_b());	// recv attaches xdp_xsk native
	for (const std::string &ns : {tb_->ns_a(), tb_->ns_b()}) {
		const std::string &ifname = ns == tb_->ns_a() ? tb_->if_a() : tb_->if_b();
		CmdResult m = run_cmd({"ip", "-n", ns, "link", "set", "dev", ifname, "mtu", "9000"}, 10);
		ASSERT_TRUE(m.ok()) << m.describe();
	}
	const std::string pkt = env_or_empty("XO_PKT");
	ASSERT_FALSE(pkt.empty()) << "XO_PKT must be set (run through ctest)";
	if (!probe_xdp_use_sg().ok) {
		// what this kernel can do: send refuses the frame clearly (exit 2,
		// naming the feature), recv binds without XDP_USE_SG and says why
		CmdResult tx = run_cmd(tool(tb_->ns_a(), send_args({"--size", "6000", "--count", "3"})), kTimeout);
		EXPECT_EQ(tx.exit_code, 2) << tx.describe();
		EXPECT_NE(tx.err.find("XDP_USE_SG"), std::string::npos) << tx.err;
		EXPECT_EQ(std::count(tx.err.begin(), tx.err.end(), '\n'), 1) << tx.err;
		// a frame over a 2048-byte chunk at an MTU an XDP program without
		// frags still attaches at (veth on 6.1 refuses one while the
		// peer's MTU is 9000)
		for (const auto &[ns, ifname] : {std::pair{tb_->ns_a(), tb_->if_a()}, std::pair{tb_->ns_b(), tb_->if_b()}}) {
			CmdResult m = run_cmd({"ip", "-n", ns, "link", "set", "dev", ifname, "mtu", "3000"}, 10);
			ASSERT_TRUE(m.ok()) << m.describe();
		}
		BackgroundCmd rx(tool(tb_->ns_b(), {"recv", tb_->if_b(), "--frame-size", "2048", "--duration", "1",
						    "--interval", "0"}));
		CmdResult r = rx.wait(15);
		ASSERT_TRUE(r.ok()) << r.describe();
		EXPECT_NE(r.out.find("\"multi_buffer\":false"), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("\"multi_buffer_why\":\"XDP_USE_SG"), std::string::npos) << r.out;
		CmdResult on = run_cmd(tool(tb_->ns_b(), {"recv", tb_->if_b(), "--multi-buffer", "on", "--duration", "1"}),
				       kTimeout);
		EXPECT_EQ(on.exit_code, 2) << on.describe();
		GTEST_SKIP() << "multi-buffer frames: " << kernel_lacks(kFeatXdpUseSg) << " [" << probe_xdp_use_sg().how
			     << "]; checked the refusal instead";
	}
	const std::string ready = tmp_ + "/ready";
	BackgroundCmd cap({pkt, "-n", tb_->ns_b(), "capture", tb_->if_b(), "--count", "3", "--timeout", "8", "--hex",
			   "--src-mac", "02:00:00:00:00:0a", "--ready-file", ready});
	for (int i = 0; i < 100 && access(ready.c_str(), F_OK); i++)
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
	CmdResult tx = run_cmd(tool(tb_->ns_a(), send_args({"--size", "6000", "--count", "3"})), kTimeout);
	ASSERT_TRUE(tx.ok()) << tx.describe();
	EXPECT_NE(tx.out.find("\"completed\":3"), std::string::npos) << tx.out;
	CmdResult got = cap.wait(10);
	const std::string driver = nic_driver(tb_->ns_b(), tb_->if_b());
	if (!driver.empty() && got.exit_code == 3 && got.err.find(" 0 of 3 frame") != std::string::npos)
		GTEST_SKIP() << "the " << driver << " pair carried none of three 6000-byte frames at MTU 9000 between "
			     << "the two stacks (no program or socket of ours on the receiver): nothing to test at "
				"this size";
	ASSERT_TRUE(got.ok()) << got.describe();
	const Bytes frame = expected_frame(Case{"mb", 6000, {}});
	std::string want = hexdump_flat(frame);
	size_t frames = 0;
	for (size_t at = got.out.find(" hex "); at != std::string::npos; at = got.out.find(" hex ", at + 1)) {
		size_t end = got.out.find('\n', at);
		EXPECT_EQ(got.out.substr(at + 5, end - at - 5), want) << "frame " << frames;
		frames++;
	}
	EXPECT_EQ(frames, 3u);

	// AF_XDP receive of the same frames (the MTU asks for XDP_USE_SG)
	const unsigned n = 50;
	const std::string pcap = tmp_ + "/mb.pcap";
	BackgroundCmd rx(tool(tb_->ns_b(), {"recv", tb_->if_b(), "--idle", quiet_seconds(0.4), "--duration", "15", "--interval", "0",
					    "--pcap", pcap}));
	if (!wait_attached(tb_->ns_b(), tb_->if_b())) {
		CmdResult r = rx.wait(20);
		if (!driver.empty() && r.exit_code == 1 && std::count(r.err.begin(), r.err.end(), '\n') == 1)
			GTEST_SKIP() << driver << " runs no XDP program at MTU 9000, recv says: " << r.err;
		FAIL() << "recv never attached xdp_xsk at MTU 9000: " << r.describe();
	}
	tx = run_cmd(tool(tb_->ns_a(), send_args({"--size", "6000", "--count", std::to_string(n)})), kTimeout);
	ASSERT_TRUE(tx.ok()) << tx.describe();
	CmdResult r = rx.wait(20);
	ASSERT_TRUE(r.ok()) << r.describe();
	std::string rxs = last_line(r.out);
	EXPECT_NE(rxs.find("\"multi_buffer\":true"), std::string::npos) << rxs;
	EXPECT_EQ(json_u64(rxs, "packets"), n) << rxs;
	EXPECT_EQ(json_u64(rxs, "bytes"), uint64_t{n} * 6000) << rxs;
	EXPECT_EQ(json_u64(rxs, "descriptors"), uint64_t{n} * 2) << "two chunks per frame: " << rxs;
	EXPECT_EQ(json_u64(rxs, "redirected"), n) << rxs;
	EXPECT_EQ(json_u64(rxs, "rx_dropped"), 0u) << rxs;
	EXPECT_NE(rxs.find("\"consistent\":true"), std::string::npos) << rxs;
	auto got_frames = pcap_read_all(pcap);
	ASSERT_TRUE(got_frames.ok()) << got_frames.error().msg;
	ASSERT_EQ(got_frames->size(), n);
	size_t bad = 0;
	for (const auto &f : *got_frames)
		bad += f != frame;
	EXPECT_EQ(bad, 0u) << "first frame (" << (*got_frames)[0].size() << " bytes):\n" << hexdump((*got_frames)[0]);

	// Negative: without XDP_USE_SG every such frame is dropped by the kernel, counted.
	BackgroundCmd rx_off(tool(tb_->ns_b(), {"recv", tb_->if_b(), "--multi-buffer", "off", "--duration", "3",
						"--interval", "0"}));
	ASSERT_TRUE(wait_attached(tb_->ns_b(), tb_->if_b()));
	tx = run_cmd(tool(tb_->ns_a(), send_args({"--size", "6000", "--count", "5"})), kTimeout);
	ASSERT_TRUE(tx.ok()) << tx.describe();
	r = rx_off.wait(10);
	ASSERT_TRUE(r.ok()) << r.describe();
	rxs = last_line(r.out);
	EXPECT_NE(rxs.find("\"multi_buffer\":false"), std::string::npos) << rxs;
	EXPECT_EQ(json_u64(rxs, "packets"), 0u) << rxs;
	EXPECT_EQ(json_u64(rxs, "rx_dropped"), 5u) << rxs;
}

TEST_F(XskVeth, UsageErrors)
{
	const std::vector<std::vector<std::string>> bad = {
		send_args({"--queue", "0", "--queues", "2"}),
		send_args({"--size", "20"}),
		send_args({"--vlan", "5000"}),
		{"send", tb_->if_a(), "--dst-mac", "zz", "--src-ip", "198.18.0.1", "--dst-ip", "198.18.0.2"},
		{"send", tb_->if_a(), "--dst-mac", "02:00:00:00:00:0b", "--src-ip", "198.18.0.1", "--dst-ip", "2001:db8::1"},
		{"recv", tb_->if_b(), "--xdp-mode", "hw"},
		{"recv", tb_->if_b(), "--multi-buffer", "maybe"},
	};
	for (const auto &args : bad) {
		CmdResult r = run_cmd(tool(tb_->ns_b(), args), kTimeout);
		EXPECT_EQ(r.exit_code, 2) << join_cmd(args) << ": " << r.describe();
		EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << join_cmd(args) << ": " << r.err;
	}
	CmdResult nodev = run_cmd(tool(tb_->ns_b(), {"recv", "no-such-if0"}), kTimeout);
	EXPECT_EQ(nodev.exit_code, 1) << "a device that does not exist: " << nodev.describe();
	EXPECT_NE(nodev.err.find("Cannot find device \"no-such-if0\""), std::string::npos) << nodev.err;
	// send --geneve-vni: VNI in 24 bits, port 1..65535, tunnel endpoints given
	// and of one family, frames that fit. Run where the interface exists (and
	// bounded by --count), so each is refused for the reason given.
	const std::vector<std::string> ends{"--outer-src-ip", "10.0.0.1", "--outer-dst-ip", "10.0.0.2"};
	auto gnv = [&](std::vector<std::string> v, bool with_ends = true) {
		if (with_ends)
			v.insert(v.end(), ends.begin(), ends.end());
		v.insert(v.end(), {"--count", "1"});
		return send_args(v);
	};
	const std::vector<std::pair<std::vector<std::string>, const char *>> bad_geneve = {
		{gnv({"--geneve-vni", "16777216"}), "outside 0..16777215"},
		{gnv({"--geneve-vni", "-1"}), "--geneve-vni"},
		{gnv({"--geneve-vni", "x7"}), "invalid VNI"},
		{gnv({"--geneve-vni", "7", "--geneve-port", "0"}), "--geneve-port: UDP port 0 outside 1..65535"},
		{gnv({"--geneve-vni", "7", "--geneve-port", "65536"}), "outside 1..65535"},
		{gnv({"--geneve-vni", "7"}, false), "needs --outer-src-ip and --outer-dst-ip"},
		{gnv({"--geneve-vni", "7", "--outer-src-ip", "10.0.0.1", "--outer-dst-ip", "2001:db8::2"}, false),
		 "must both be IPv4 or both IPv6"},
		{gnv({"--geneve-port", "6081"}, false), "need --geneve-vni"},
		{gnv({"--geneve-csum"}, false), "need --geneve-vni"},
		{gnv({"--geneve-vni", "7", "--size", "65500"}), "too large for Geneve"},
		{gnv({"--geneve-vni", "7", "--outer-dst-mac", "02:00"}), "MAC"},
		// a segment of mss 4000 and its headers does not fit a 4096-byte UMEM frame
		{gnv({"--geneve-vni", "7", "--gso", "uso", "--size", "9000", "--mss", "4000"}), "UMEM frames hold"},
	};
	for (const auto &[args, why] : bad_geneve) {
		CmdResult r = run_cmd(tool(tb_->ns_a(), args), kTimeout);
		EXPECT_EQ(r.exit_code, 2) << join_cmd(args) << ": " << r.describe();
		EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << join_cmd(args) << ": " << r.err;
		EXPECT_NE(r.err.find(why), std::string::npos) << join_cmd(args) << ": " << r.err;
	}
}

// 1M frames through small rings (64 entries, 128 frames per socket) with
// the receiver deliberately slow: TX ring full, RX ring full and fill ring
// empty all happen, and every frame stays accounted for throughout. The
// receiver gives frames back by rx_release() + refill(), or by rx_recycle()
// (recv's loop: straight back on the fill ring, the rest to the free list).
class XskVethAccounting : public XskVeth, public ::testing::WithParamInterface<bool> {};

TEST_P(XskVethAccounting, OneMillionFrames)
{
	using namespace xsk;
	const bool recycle = GetParam();
	uint64_t recycled = 0;	// frames rx_recycle() put on the fill ring
	// gives back what rx_peek() handed out, the way the parameter says
	auto give_back = [&](XskSocket &s, std::span<const RxDesc> d) {
		if (recycle) {
			recycled += s.rx_recycle(d);
		} else {
			s.rx_release(d);
			s.refill();
		}
	};
	// under emulation (tools/vm-test, TCG) a million frames take minutes:
	// 100k still fill every ring and overflow RX many times over
	const uint64_t kFramesToSend = env_or_empty("XO_IN_VM").empty() ? 1'000'000 : 100'000;
	std::optional<XskProgram> prog;
	std::optional<Umem> rx_umem, tx_umem;
	std::optional<XskSocket> rx, tx;
	{
		InNetns in(tb_->ns_b());
		ASSERT_TRUE(in.ok());
		auto dev = netdev_lookup(tb_->if_b());
		ASSERT_TRUE(dev.ok());
		auto u = Umem::create({128, 2048, 0, false});
		ASSERT_TRUE(u.ok()) << u.error().msg;
		rx_umem.emplace(std::move(*u));
		SocketConfig sc;
		sc.frames = 128;
		sc.fill_size = sc.comp_size = 64;
		sc.rx_size = 32;	// smaller than fill: the RX ring can overflow too
		sc.tx_size = 0;
		auto s = XskSocket::create(*rx_umem, *dev, sc);
		ASSERT_TRUE(s.ok()) << s.error().msg;
		rx.emplace(std::move(*s));
		auto p = XskProgram::attach(*dev, XdpMode::native, {});
		ASSERT_TRUE(p.ok()) << p.error().msg;
		prog.emplace(std::move(*p));
		ASSERT_TRUE(prog->add_socket(0, rx->fd()).ok());
	}
	ASSERT_NO_FATAL_FAILURE(make_tx_socket(tx_umem, tx, true));
	Bytes frame = PacketBuilder().eth(kMacB, kMacA).ipv4(kIpA, kIpB).udp(kPortA, kPortB).payload(18).build();
	rx->refill();

	std::vector<uint64_t> addrs(96);
	std::vector<TxDesc> descs(96);
	std::vector<RxDesc> rdescs(32);
	uint64_t queued = 0, received = 0, iter = 0, checks = 0, bad_checks = 0;
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(25);
	while (tx->stats_nosync().tx_completed < kFramesToSend) {
		ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "1M frames took too long";
		iter++;
		tx->complete();
		uint64_t want = std::min<uint64_t>(addrs.size(), kFramesToSend - queued);
		uint32_t n = tx->tx_alloc({addrs.data(), want});
		for (uint32_t i = 0; i < n; i++) {
			std::memcpy(tx->data(addrs[i]), frame.data(), frame.size());
			descs[i] = TxDesc{addrs[i], static_cast<uint32_t>(frame.size())};
		}
		uint32_t m = tx->tx_submit({descs.data(), n});
		tx->tx_free({addrs.data() + m, n - m});	// ring full: back to the free list
		queued += m;
		const int kicked = tx->kick();	// a full ring may refuse it: -EAGAIN, -ENOBUFS
		EXPECT_LE(kicked, 0) << "kick returns 0 or a negative errno";
		// Drain RX only every third round, and hold frames in use for a
		// round, so the RX ring overflows and the fill ring runs dry.
		if (iter % 3 == 0) {
			uint32_t r = rx->rx_peek(rdescs);
			received += r;
			if (iter % 2 == 0) {
				Accounting a = rx->accounting();
				EXPECT_EQ(a.in_use, r);
			}
			give_back(*rx, {rdescs.data(), r});
		}
		if (iter % 997 == 0) {
			checks++;
			Accounting at = tx->accounting(), ar = rx->accounting();
			bad_checks += !at.consistent + !ar.consistent;
			EXPECT_EQ(at.free + at.fill + at.rx + at.tx + at.completion + at.in_use, at.total);
		}
	}
	// Let the last frames arrive, then drain.
	for (int i = 0; i < 50; i++) {
		uint32_t r = rx->rx_peek(rdescs);
		received += r;
		give_back(*rx, {rdescs.data(), r});
		if (!r)
			std::this_thread::sleep_for(std::chrono::milliseconds(2));
	}
	const XskStats &ts = tx->stats();
	const XskStats &rs = rx->stats();
	Accounting at = tx->accounting(), ar = rx->accounting();
	EXPECT_TRUE(at.consistent);
	EXPECT_TRUE(ar.consistent);
	EXPECT_EQ(bad_checks, 0u) << "of " << checks << " mid-run checks";
	EXPECT_EQ(ts.tx_packets, kFramesToSend);
	EXPECT_EQ(ts.tx_completed, kFramesToSend);
	EXPECT_EQ(at.free, at.total) << "TX frames not all back";
	EXPECT_EQ(ar.in_use, 0u) << "RX frames not all released";
	EXPECT_GT(ts.tx_ring_full, 0u) << "the test never filled the TX ring";
	EXPECT_GT(rs.k_rx_ring_full + rs.k_fill_empty, 0u) << "the test never overflowed RX";
	// Every frame the program redirected was received or dropped by reason.
	auto c = prog->counters();
	ASSERT_TRUE(c.ok());
	uint64_t redirected = c->v[XO_XSK_CNT_REDIRECTED].packets;
	EXPECT_EQ(received, rs.rx_packets);
	// The kernel drops a redirected frame for a full RX ring (rx_ring_full)
	// or for no fill frame (rx_dropped; fill_empty counts failed peeks).
	EXPECT_EQ(redirected, received + rs.k_rx_dropped + rs.k_rx_ring_full)
		<< "rx_ring_full " << rs.k_rx_ring_full << " fill_empty " << rs.k_fill_empty;
	EXPECT_EQ(redirected + c->v[XO_XSK_CNT_NO_SOCKET].packets, kFramesToSend);
	if (recycle) {
		// 128 frames for a 64-entry fill ring: most come straight back,
		// the rest wait on the free list, and none is lost on the way
		EXPECT_GT(recycled, received / 2) << "rx_recycle put few frames back on the fill ring";
		EXPECT_EQ(ar.free + ar.fill + ar.rx, ar.total);
	}
	RecordProperty("tx_ring_full", std::to_string(ts.tx_ring_full));
	RecordProperty("rx_received", std::to_string(received));
	std::printf("1M accounting: received %llu, rx_dropped %llu (ring full %llu, fill empty %llu), tx ring full %llu\n",
		    static_cast<unsigned long long>(received), static_cast<unsigned long long>(rs.k_rx_dropped),
		    static_cast<unsigned long long>(rs.k_rx_ring_full), static_cast<unsigned long long>(rs.k_fill_empty),
		    static_cast<unsigned long long>(ts.tx_ring_full));
	{
		InNetns in(tb_->ns_b());
		EXPECT_TRUE(prog->detach().ok());
	}
}

INSTANTIATE_TEST_SUITE_P(FrameAccounting, XskVethAccounting, ::testing::Values(false, true),
			 [](const auto &i) { return std::string(i.param ? "Recycle" : "ReleaseRefill"); });

// create_shared: a second socket on the same queue shares the first one's
// fill ring and frames (one kernel buffer pool). With the XSKMAP slot of the
// queue holding the second socket, every frame the first socket's refill()
// offered comes back on the second socket's RX ring, and the group's frame
// accounting stays exact throughout.
TEST_F(XskVeth, SharedQueueSocketsShareOneFillRing)
{
	using namespace xsk;
	constexpr uint64_t kFrames = 20'000;
	std::optional<XskProgram> prog;
	std::optional<Umem> rx_umem, tx_umem;
	std::optional<XskSocket> owner, peer, tx;
	{
		InNetns in(tb_->ns_b());
		ASSERT_TRUE(in.ok());
		auto dev = netdev_lookup(tb_->if_b());
		ASSERT_TRUE(dev.ok());
		auto u = Umem::create({256, 2048, 0, false});
		ASSERT_TRUE(u.ok()) << u.error().msg;
		rx_umem.emplace(std::move(*u));
		SocketConfig sc;
		sc.frames = 256;
		sc.fill_size = sc.comp_size = 128;
		sc.rx_size = 64;
		sc.tx_size = 0;
		auto s = XskSocket::create(*rx_umem, *dev, sc);
		ASSERT_TRUE(s.ok()) << s.error().msg;
		owner.emplace(std::move(*s));
		auto p = XskSocket::create_shared(*owner, sc);
		ASSERT_TRUE(p.ok()) << p.error().msg;
		peer.emplace(std::move(*p));
		EXPECT_EQ(peer->queue(), owner->queue());
		EXPECT_EQ(rx_umem->frames_unassigned(), 0u) << "the shared socket took frames of its own";
		auto pr = XskProgram::attach(*dev, XdpMode::native, {});
		ASSERT_TRUE(pr.ok()) << pr.error().msg;
		prog.emplace(std::move(*pr));
		ASSERT_TRUE(prog->add_socket(0, peer->fd()).ok());
	}
	ASSERT_NO_FATAL_FAILURE(make_tx_socket(tx_umem, tx, false));
	Accounting a0 = owner->accounting();
	EXPECT_EQ(a0.sockets, 2u);
	EXPECT_EQ(a0.total, 256u);
	EXPECT_TRUE(a0.consistent);

	Bytes frame = PacketBuilder().eth(kMacB, kMacA).ipv4(kIpA, kIpB).udp(kPortA, kPortB).payload(18).build();
	std::vector<uint64_t> addrs(32);
	std::vector<TxDesc> descs(32);
	std::vector<RxDesc> rdescs(32);
	uint64_t queued = 0, on_owner = 0, on_peer = 0, bad_checks = 0;
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
	owner->refill();
	while (tx->stats_nosync().tx_completed < kFrames || on_peer + peer->stats().k_rx_dropped +
								  peer->stats_nosync().k_rx_ring_full < kFrames) {
		if (std::chrono::steady_clock::now() > deadline)
			break;
		tx->complete();
		uint32_t n = tx->tx_alloc({addrs.data(), std::min<uint64_t>(addrs.size(), kFrames - queued)});
		for (uint32_t i = 0; i < n; i++) {
			std::memcpy(tx->data(addrs[i]), frame.data(), frame.size());
			descs[i] = TxDesc{addrs[i], static_cast<uint32_t>(frame.size())};
		}
		uint32_t m = tx->tx_submit({descs.data(), n});
		tx->tx_free({addrs.data() + m, n - m});
		queued += m;
		tx->kick();
		on_owner += owner->rx_peek(rdescs);	// its RX ring is not in the XSKMAP
		uint32_t r = peer->rx_peek(rdescs);
		on_peer += r;
		if (r) {
			Accounting a = peer->accounting();
			bad_checks += !a.consistent || a.in_use != r;
		}
		peer->rx_release({rdescs.data(), r});
		owner->refill();	// the frames the peer released go back through the owner
	}
	EXPECT_EQ(tx->stats_nosync().tx_completed, kFrames);
	EXPECT_EQ(on_owner, 0u);
	const XskStats &ps = peer->stats();
	EXPECT_EQ(on_peer + ps.k_rx_dropped + ps.k_rx_ring_full, kFrames)
		<< "received " << on_peer << ", dropped " << ps.k_rx_dropped << " + " << ps.k_rx_ring_full;
	EXPECT_GT(on_peer, kFrames / 2);
	std::printf("shared queue: %llu of %llu frames on the peer\n", static_cast<unsigned long long>(on_peer),
		    static_cast<unsigned long long>(kFrames));
	EXPECT_EQ(bad_checks, 0u);
	Accounting a = owner->accounting(), b = peer->accounting();
	EXPECT_TRUE(a.consistent);
	EXPECT_EQ(a.in_use, 0u);
	EXPECT_EQ(a.free + a.fill + a.rx, a.total);
	EXPECT_EQ(b.total, a.total);
	EXPECT_EQ(b.fill, a.fill);

	// The owner gone, the peer still has the pool: its frames stay accounted for.
	owner.reset();
	EXPECT_EQ(peer->accounting().sockets, 1u);
	EXPECT_TRUE(peer->accounting().consistent);
	{
		InNetns in(tb_->ns_b());
		EXPECT_TRUE(prog->detach().ok());
	}
}

} // namespace
} // namespace xoffload::test
