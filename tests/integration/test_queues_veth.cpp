// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Every RX queue of a multi-queue veth (numrxqueues 4): frames sent on each
// TX queue of A arrive on the same RX queue of B (veth_xmit: the skb's queue
// mapping picks the peer's queue; AF_XDP copy-mode TX sets it to the
// socket's queue), and are all accounted for, exactly once, in recv's or the
// program's counters: recv --queues all and recv --geneve --queues all get
// them all; with sockets on queue 0 only, the others are counted
// no-socket/no-target (passed to the stack, never "redirected" and lost),
// and recv says in one line that the device has more queues than sockets.
// On an emulated NIC pair (XO_TESTBED_NICS: RSS picks the queue), only the
// totals and the line are checked.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "testbed.hpp"

namespace xoffload::test {
namespace {

constexpr double kTimeout = 30;
constexpr unsigned kPerQueue = 50;

std::string summary_of(const std::string &out)
{
	size_t at = out.rfind("{\"type\":\"summary\"");
	return at == std::string::npos ? std::string() : out.substr(at);
}

// Per queue: the rx_packets of every socket entry of a summary, summed.
std::map<unsigned, uint64_t> per_queue(const std::string &sum)
{
	std::map<unsigned, uint64_t> m;
	std::regex re("\"queue\":([0-9]+),\"rx_packets\":([0-9]+)");
	for (std::sregex_iterator it(sum.begin(), sum.end(), re), end; it != end; ++it)
		m[static_cast<unsigned>(std::stoul((*it)[1]))] += std::stoull((*it)[2]);
	return m;
}

class QueuesVeth : public TestbedTest {
protected:
	Testbed::Options testbed_options() const override
	{
		Testbed::Options o;
		o.ipv4 = true;
		// qemu's virtio-net pairs of tools/vm-test have 2 queue pairs
		o.queues = nics() ? 2 : 4;
		return o;
	}
	static bool nics()
	{
		const char *n = std::getenv("XO_TESTBED_NICS");
		return n && *n;
	}
	void SetUp() override
	{
		TestbedTest::SetUp();
		if (IsSkipped() || HasFatalFailure())
			return;
		queues_ = testbed_options().queues;
		XO_SKIP_WITHOUT_NATIVE_XDP(tb_->ns_b(), tb_->if_b());
	}
	std::vector<std::string> tool(const std::string &ns, std::vector<std::string> args) const
	{
		std::vector<std::string> v{tool_, "--json", "-n", ns};
		v.insert(v.end(), args.begin(), args.end());
		return v;
	}
	CmdResult b(std::vector<std::string> args) const { return run_cmd(tool(tb_->ns_b(), std::move(args)), kTimeout); }
	// kPerQueue frames from A on each TX queue, a flow of its own per
	// queue; @geneve: inside Geneve VNI 400. Returns frames sent.
	uint64_t send_every_queue(bool geneve)
	{
		uint64_t sent = 0;
		for (unsigned q = 0; q < queues_; q++) {
			std::vector<std::string> a{"send", tb_->if_a(), "--dst-mac", "02:00:00:00:00:0b", "--src-ip",
						   "10.250.0.1", "--dst-ip", "10.250.0.2", "--interval", "0", "--queue",
						   std::to_string(q), "--count", std::to_string(kPerQueue), "--src-port",
						   std::to_string(40000 + q), "--xsk-mode", "copy"};
			if (geneve)
				a.insert(a.end(), {"--geneve-vni", "400", "--outer-src-ip", "10.250.0.1", "--outer-dst-ip",
						   "10.250.0.2"});
			CmdResult r = run_cmd(tool(tb_->ns_a(), a), kTimeout);
			EXPECT_TRUE(r.ok()) << join_cmd(tool(tb_->ns_a(), a)) << ": " << r.describe();
			EXPECT_EQ(json_u64(summary_of(r.out), "completed"), kPerQueue) << r.out;
			sent += json_u64(summary_of(r.out), "completed").value_or(0);
		}
		return sent;
	}
	void geneve_setup()
	{
		for (std::vector<std::string> a : {std::vector<std::string>{"attach", tb_->if_b(), "geneve"},
						   {"geneve", "port", "add", tb_->if_b(), "6081"},
						   {"geneve", "rule", "add", tb_->if_b(), "--vni", "400", "--action", "xsk",
						    "--queues", "2"}}) {
			CmdResult r = b(a);
			ASSERT_TRUE(r.ok()) << join_cmd(a) << ": " << r.describe();
		}
	}
	// recv on B with @args, started (its sockets in place) before the sends
	// and stopped by SIGINT once they are done (the sends are several
	// processes: no --idle gap is safe on a loaded machine); its JSON
	// summary and stderr.
	std::pair<std::string, std::string> recv_during(std::vector<std::string> args, bool geneve, uint64_t *sent)
	{
		std::vector<std::string> a{"recv", tb_->if_b(), "--duration", "120", "--interval", "0"};
		a.insert(a.end(), args.begin(), args.end());
		BackgroundCmd rx(tool(tb_->ns_b(), a));
		EXPECT_TRUE(rx.wait_for_output("\"type\":\"start\"", 15)) << "recv never started: " << join_cmd(a);
		*sent = send_every_queue(geneve);
		return stop(rx, a);
	}
	static std::pair<std::string, std::string> stop(BackgroundCmd &rx, const std::vector<std::string> &a)
	{
		usleep(500000);	// the last frames through B's NAPI
		EXPECT_TRUE(rx.signal(SIGINT)) << "recv ended early: " << join_cmd(a);
		CmdResult r = rx.wait(40);
		EXPECT_TRUE(r.ok()) << join_cmd(a) << ": " << r.describe();
		return {summary_of(r.out), r.err};
	}

	unsigned queues_ = 4;
};

// The note recv prints when the device has queues without a socket.
void expect_more_queues_line(const std::string &err, unsigned queues, const std::string &unbound, bool veth)
{
	std::smatch m;
	ASSERT_TRUE(std::regex_search(err, m, std::regex("note: [^\n]* has " + std::to_string(queues) +
							 " RX queues \\(ethtool\\)[^\n]*")))
		<< err;
	const std::string line = m[0];
	const bool one = unbound.find_first_of(",-") == std::string::npos;
	EXPECT_NE(line.find(std::string(one ? "on queue " : "on queues ") + unbound + " reach no socket"),
		  std::string::npos)
		<< "names the queues without a socket: " << line;
	if (veth)
		EXPECT_NE(line.find("--queues all"), std::string::npos) << "veth's remedy: " << line;
	else
		EXPECT_NE(line.find("ethtool -"), std::string::npos) << "the driver's remedy: " << line;
}

// plain recv (xdp_xsk) --queues all: one socket per RX queue, every frame.
TEST_F(QueuesVeth, RecvAllQueuesGetsEveryFrame)
{
	uint64_t sent = 0;
	// only our frames (UDP to send's port 40002): the stack's own (IPv6
	// neighbour discovery, ...) are counted filtered, not no_socket
	auto [sum, err] = recv_during({"--queues", "all", "--filter-udp-port", "40002"}, false, &sent);
	ASSERT_FALSE(sum.empty());
	EXPECT_EQ(sent, kPerQueue * queues_);
	EXPECT_EQ(json_u64(sum, "packets"), sent) << sum;
	EXPECT_EQ(json_u64(sum, "redirected"), sent) << sum;
	EXPECT_EQ(json_u64(sum, "no_socket"), 0u) << sum;
	auto pq = per_queue(sum);
	EXPECT_EQ(pq.size(), queues_) << "one socket per queue: " << sum;
	if (!nics()) {
		for (unsigned q = 0; q < queues_; q++)
			EXPECT_EQ(pq[q], kPerQueue) << "queue " << q << ": " << sum;
	}
	EXPECT_EQ(err.find("reach no socket"), std::string::npos) << "every queue has a socket: " << err;
	EXPECT_EQ(sum.find("\"consistent\":false"), std::string::npos) << sum;
}

// plain recv on queue 0 only: the other queues' frames are counted
// no_socket by xdp_xsk and passed; recv says so and how to steer.
TEST_F(QueuesVeth, RecvOneQueueCountsTheOthersAndSaysSo)
{
	uint64_t sent = 0;
	auto [sum, err] = recv_during({"--filter-udp-port", "40002"}, false, &sent);
	ASSERT_FALSE(sum.empty());
	uint64_t got = json_u64(sum, "packets").value_or(~0ull), none = json_u64(sum, "no_socket").value_or(~0ull);
	EXPECT_EQ(got + none, sent) << "received + no_socket == sent: " << sum;
	EXPECT_EQ(json_u64(sum, "redirected"), got) << sum;
	if (!nics()) {
		EXPECT_EQ(got, kPerQueue) << sum;
		EXPECT_EQ(none, kPerQueue * (queues_ - 1)) << sum;
	}
	expect_more_queues_line(err, queues_, queues_ == 4 ? "1-3" : "1", !nics());
}

// recv --geneve --queues all: sockets on every queue, each in its queue's
// row of xdp_geneve's XSKMAP; every Geneve frame of every queue arrives.
TEST_F(QueuesVeth, RecvGeneveAllQueuesGetsEveryFrame)
{
	ASSERT_NO_FATAL_FAILURE(geneve_setup());
	uint64_t sent = 0;
	auto [sum, err] = recv_during({"--geneve", "--vni", "400", "--queues", "all"}, true, &sent);
	ASSERT_FALSE(sum.empty());
	EXPECT_EQ(sent, kPerQueue * queues_);
	EXPECT_EQ(json_u64(sum, "packets"), sent) << sum;
	EXPECT_EQ(json_u64(sum, "redirected"), sent) << "xdp_geneve over the run: " << sum;
	EXPECT_EQ(json_u64(sum, "no_target"), 0u) << sum;
	EXPECT_EQ(json_u64(sum, "rx_dropped"), 0u) << "no frame refused by a socket: " << sum;
	auto pq = per_queue(sum);
	EXPECT_EQ(pq.size(), queues_) << sum;
	if (!nics()) {
		for (unsigned q = 0; q < queues_; q++)
			EXPECT_EQ(pq[q], kPerQueue) << "queue " << q << ": " << sum;
	}
	// two sockets per queue (the rule's --queues), one fill ring each queue
	std::regex slot("\"slot\":([01]),\"queue\":([0-9]+)");
	unsigned entries = 0;
	for (std::sregex_iterator it(sum.begin(), sum.end(), slot), end; it != end; ++it)
		entries++;
	EXPECT_EQ(entries, 2 * queues_) << sum;
	EXPECT_EQ(sum.find("\"consistent\":false"), std::string::npos) << sum;
	EXPECT_EQ(err.find("reach no socket"), std::string::npos) << err;
}

// recv --geneve on queue 0 only (the default): frames of queues 1..3 are
// no-target (passed to the stack), never redirected to queue 0's sockets
// (the kernel would refuse and drop them); received + no-target == sent.
TEST_F(QueuesVeth, RecvGeneveOneQueueNeverCountsOtherQueuesRedirected)
{
	ASSERT_NO_FATAL_FAILURE(geneve_setup());
	uint64_t sent = 0;
	auto [sum, err] = recv_during({"--geneve", "--vni", "400"}, true, &sent);
	ASSERT_FALSE(sum.empty());
	uint64_t got = json_u64(sum, "packets").value_or(~0ull);
	uint64_t redirected = json_u64(sum, "redirected").value_or(~0ull);
	uint64_t none = json_u64(sum, "no_target").value_or(~0ull);
	EXPECT_EQ(redirected, got) << "every frame counted redirected reached a socket: " << sum;
	EXPECT_EQ(got + none, sent) << "received + no-target == sent: " << sum;
	if (!nics()) {
		EXPECT_EQ(got, kPerQueue) << sum;
		EXPECT_EQ(none, kPerQueue * (queues_ - 1)) << sum;
	}
	EXPECT_EQ(json_u64(sum, "rx_dropped"), 0u) << sum;
	expect_more_queues_line(err, queues_, queues_ == 4 ? "1-3" : "1", !nics());
}

// Two recv --geneve on different queues share xdp_geneve: each takes the
// slots of its own queue's row; a second one on a queue in use is refused.
TEST_F(QueuesVeth, RecvGenevePerQueueReceiversCoexist)
{
	ASSERT_NO_FATAL_FAILURE(geneve_setup());
	// queue 0 (the default), and the others: a range (a plain number with
	// --geneve is the older form of --sockets)
	const std::vector<std::string> a1{"recv", tb_->if_b(), "--geneve", "--vni", "400", "--duration", "120",
					  "--interval", "0"};
	BackgroundCmd first(tool(tb_->ns_b(), a1));
	ASSERT_TRUE(first.wait_for_output("\"type\":\"start\"", 15));
	const std::vector<std::string> a2{"recv", tb_->if_b(), "--geneve", "--vni", "400", "--queues",
					  queues_ == 4 ? "1-3" : "1-1", "--duration", "120", "--interval", "0"};
	BackgroundCmd second(tool(tb_->ns_b(), a2));
	ASSERT_TRUE(second.wait_for_output("\"type\":\"start\"", 15)) << "the second receiver did not start";
	CmdResult busy = b({"recv", tb_->if_b(), "--geneve", "--vni", "400", "--duration", "1"});
	EXPECT_EQ(busy.exit_code, 1) << busy.describe();
	EXPECT_NE(busy.err.find("already in use"), std::string::npos) << busy.err;
	const uint64_t sent = send_every_queue(true);
	const std::string s1 = stop(first, a1).first, s2 = stop(second, a2).first;
	ASSERT_FALSE(s1.empty());
	ASSERT_FALSE(s2.empty());
	uint64_t g1 = json_u64(s1, "packets").value_or(~0ull), g2 = json_u64(s2, "packets").value_or(~0ull);
	EXPECT_EQ(g1 + g2, sent) << s1 << "\n" << s2;
	if (!nics()) {
		EXPECT_EQ(g1, kPerQueue) << s1;
		EXPECT_EQ(g2, kPerQueue * (queues_ - 1)) << s2;
	}
}

TEST_F(QueuesVeth, QueueListsAreCheckedBeforeAnythingIsBound)
{
	for (std::vector<std::string> a : {std::vector<std::string>{"recv", tb_->if_b(), "--queues", "3-1"},
					   {"recv", tb_->if_b(), "--queues", "0,x"},
					   {"recv", tb_->if_b(), "--queues", "0-64"},
					   {"recv", tb_->if_b(), "--queue", "1", "--queues", "0-1"},
					   {"recv", tb_->if_b(), "--geneve", "--queue", "1", "--queues", "all"},
					   {"recv", tb_->if_b(), "--geneve", "--sockets", "2", "--queues", "2"},
					   {"recv", tb_->if_b(), "--sockets", "2"},
					   {"recv", tb_->if_b(), "--geneve", "--sockets", "65"}}) {
		CmdResult r = b(a);
		EXPECT_EQ(r.exit_code, 2) << join_cmd(a) << ": " << r.describe();
		EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
	}
	// a queue the device does not have: the kernel's refusal, exit 1
	CmdResult r = b({"recv", tb_->if_b(), "--queues", "0-" + std::to_string(queues_), "--duration", "1"});
	EXPECT_EQ(r.exit_code, 1) << r.describe();
	CmdResult st = run_cmd({"ip", "-n", tb_->ns_b(), "link", "show", "dev", tb_->if_b()}, 10);
	EXPECT_EQ(st.out.find("prog/xdp"), std::string::npos) << "left attached: " << st.out;
}

} // namespace
} // namespace xoffload::test
