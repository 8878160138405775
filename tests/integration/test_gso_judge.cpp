// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The receiving kernel as judge of the segmentation engine: super-packets go
// out through `offload-tool send --gso` (AF_XDP, every segment written once
// into its UMEM frame) from namespace A; B's own IP stack must reassemble UFO
// fragments into the exact datagram and take USO segments without a single
// checksum error (UdpInCsumErrors unchanged).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "testbed.hpp"
#include "xoffload/core/fd.hpp"

namespace xoffload::test {
namespace {

constexpr uint16_t kPort = 40002;

class GsoJudge : public TestbedTest {
protected:
	Testbed::Options testbed_options() const override
	{
		Testbed::Options o;
		o.ipv4 = true;
		return o;
	}

	void SetUp() override
	{
		TestbedTest::SetUp();
		if (!tb_)
			return;
		ip_a_ = strip_prefix(tb_->var("XO_IP_A"));
		ip_b_ = strip_prefix(tb_->var("XO_IP_B"));
		ASSERT_FALSE(ip_a_.empty() || ip_b_.empty()) << "testbed without --ipv4 addresses";
		CmdResult r = run_cmd({"ip", "-n", tb_->ns_b(), "-br", "link", "show", "dev", tb_->if_b()}, 10);
		ASSERT_TRUE(r.ok()) << r.describe();
		// "veth-b@if2 UP 02:00:00:00:00:0b <...>"
		auto at = r.out.find("02:");
		ASSERT_NE(at, std::string::npos) << r.out;
		mac_b_ = r.out.substr(at, 17);
		sock_ = udp_socket_in_b();
		ASSERT_TRUE(sock_.valid());
	}

	static std::string strip_prefix(const std::string &cidr) { return cidr.substr(0, cidr.find('/')); }

	UniqueFd udp_socket_in_b()
	{
		int fd = -1;
		std::thread t([&] {
			UniqueFd ns(::open(("/run/netns/" + tb_->ns_b()).c_str(), O_RDONLY | O_CLOEXEC));
			if (!ns.valid() || setns(ns.get(), CLONE_NEWNET))
				return;
			UniqueFd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
			int big = 8 << 20;
			setsockopt(s.get(), SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
			sockaddr_in a{};
			a.sin_family = AF_INET;
			a.sin_port = htons(kPort);
			if (bind(s.get(), reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0)
				fd = s.release();
		});
		t.join();
		return UniqueFd(fd);
	}

	// Sends count super-packets of frame size bytes; returns the tool's result.
	CmdResult send(const std::string &gso, uint32_t size, unsigned count, bool tx_csum = false,
		       const std::string &mss = "")
	{
		std::vector<std::string> argv = {tool_, "-n", tb_->ns_a(), "send", tb_->if_a(), "--gso", gso,
						 "--size", std::to_string(size), "--count", std::to_string(count),
						 "--dst-mac", mac_b_, "--src-ip", ip_a_, "--dst-ip", ip_b_,
						 "--proto", "udp", "--dst-port", std::to_string(kPort), "--interval", "0"};
		argv.push_back(tx_csum ? "--tx-csum" : "--sw-csum");
		if (!mss.empty()) {
			argv.push_back("--mss");
			argv.push_back(mss);
		}
		return run_cmd(argv, 30);
	}

	// Datagrams that arrive within timeout_s (stops early at want).
	std::vector<std::vector<uint8_t>> receive(size_t want, double timeout_s = 3)
	{
		std::vector<std::vector<uint8_t>> got;
		std::vector<uint8_t> buf(70000);
		auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
		while (got.size() < want && std::chrono::steady_clock::now() < end) {
			pollfd p{sock_.get(), POLLIN, 0};
			if (poll(&p, 1, 50) <= 0)
				continue;
			ssize_t n = recv(sock_.get(), buf.data(), buf.size(), 0);
			if (n >= 0)
				got.emplace_back(buf.begin(), buf.begin() + n);
		}
		return got;
	}

	// One counter of B's /proc/net/snmp ("Udp", "InCsumErrors").
	long snmp(const std::string &proto, const std::string &field)
	{
		CmdResult r = run_cmd({"ip", "netns", "exec", tb_->ns_b(), "cat", "/proc/net/snmp"}, 10);
		EXPECT_TRUE(r.ok()) << r.describe();
		std::istringstream in(r.out);
		std::string names, values;
		while (std::getline(in, names) && std::getline(in, values)) {
			if (names.rfind(proto + ":", 0) != 0)
				continue;
			std::istringstream n(names), v(values);
			std::string name, val;
			while (n >> name && v >> val)
				if (name == field)
					return std::stol(val);
		}
		return -1;
	}

	// The payload `offload-tool send` writes: bytes 0, 1, 2, ... from the
	// first payload byte of the super-packet.
	static bool pattern_ok(const std::vector<uint8_t> &d, size_t first = 0)
	{
		for (size_t i = 0; i < d.size(); i++)
			if (d[i] != static_cast<uint8_t>(first + i))
				return false;
		return true;
	}

	std::string ip_a_, ip_b_, mac_b_;
	UniqueFd sock_;
};

TEST_F(GsoJudge, UfoFragmentsReassembleIntoTheExactDatagram)
{
	// negative check first: nothing arrives before anything is sent
	EXPECT_TRUE(receive(1, 0.2).empty()) << "traffic before the test sent any";
	long reasm0 = snmp("Ip", "ReasmOKs");
	// frame sizes: odd, 64000 bytes, and the largest legal datagram (65507 bytes of payload)
	for (uint32_t size : {3001u, 64000u, 14u + 20u + 8u + 65507u}) {
		CmdResult r = send("ufo", size, 1);
		ASSERT_TRUE(r.ok()) << "size " << size << ": " << r.describe();
		auto got = receive(1);
		ASSERT_EQ(got.size(), 1u) << "size " << size << ": no datagram reassembled";
		EXPECT_EQ(got[0].size(), size - 14 - 20 - 8) << "size " << size;
		EXPECT_TRUE(pattern_ok(got[0])) << "payload differs, size " << size;
	}
	EXPECT_EQ(snmp("Ip", "ReasmOKs") - reasm0, 3) << "B reassembled each datagram from fragments";
}

TEST_F(GsoJudge, UsoSegmentsArriveWithoutChecksumErrors)
{
	long err0 = snmp("Udp", "InCsumErrors"), in0 = snmp("Udp", "InDatagrams");
	ASSERT_GE(err0, 0);
	const uint32_t size = 14 + 20 + 8 + 9001; // 7 segments of 1400, the last 601 bytes
	for (bool tx_csum : {false, true}) {
		CmdResult r = send("uso", size, 2, tx_csum, "1400");
		ASSERT_TRUE(r.ok()) << r.describe();
		auto got = receive(14);
		ASSERT_EQ(got.size(), 14u) << (tx_csum ? "TX-metadata checksum" : "software checksum");
		for (size_t i = 0; i < got.size(); i++) {
			size_t k = i % 7;
			EXPECT_EQ(got[i].size(), k < 6 ? 1400u : 601u) << i;
			EXPECT_TRUE(pattern_ok(got[i], k * 1400)) << "segment " << k;
		}
	}
	EXPECT_EQ(snmp("Udp", "InCsumErrors"), err0) << "UdpInCsumErrors moved";
	EXPECT_EQ(snmp("Udp", "InDatagrams") - in0, 28);
}

} // namespace
} // namespace xoffload::test
