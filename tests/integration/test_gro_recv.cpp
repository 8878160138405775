// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// recv --gro on a veth pair in fresh namespaces: TSO and UFO super-packets
// sent by `send --gso` from A come out of B's GRO engine whole (segments
// and bytes counted exactly, the --pcap holding the super-packets with
// valid checksums and the sent payload), and a frame with a bad TCP
// checksum is counted by reason and written as it came, never merged.
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <sstream>
#include <cstring>
#include <thread>

#include "gso_check.hpp"
#include "packet_builder.hpp"
#include "testbed.hpp"
#include "xoffload/core/fd.hpp"
#include "xoffload/xsk/pcap.hpp"

namespace xoffload::test {
namespace {

using xo_test::be16;
using xo_test::be32;
using xo_test::FrameView;
using xo_test::parse_frame;

constexpr double kTimeout = 30;

uint64_t u64(const std::string &js, const std::string &key)
{
	return json_u64(js, key).value_or(UINT64_MAX);
}

// The L4 checksum of a parsed frame verifies (TCP, or UDP when not zero).
bool l4_csum_ok(const Bytes &f, const FrameView &v)
{
	const size_t l4len = f.size() - v.l4;
	return xo_test::csum_ok(xo_test::pseudo(f.data(), v, v.proto, l4len) + xo_test::sum_bytes(f.data() + v.l4, l4len));
}

class GroRecvVeth : public TestbedTest {
protected:
	void SetUp() override
	{
		TestbedTest::SetUp();
		if (IsSkipped() || HasFatalFailure())
			return;
		XO_SKIP_WITHOUT_NATIVE_XDP(tb_->ns_b(), tb_->if_b());	// recv attaches xdp_xsk native
		ASSERT_FALSE(tmp_.path().empty());
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
					   "198.18.0.1", "--dst-ip", "198.18.0.2", "--interval", "0",
					   "--src-port", std::to_string(kPortA), "--dst-port", std::to_string(kPortB)};
		v.insert(v.end(), extra.begin(), extra.end());
		return v;
	}
	bool wait_attached() const
	{
		for (int i = 0; i < 100; i++) {
			CmdResult r = run_cmd({"ip", "-n", tb_->ns_b(), "link", "show", "dev", tb_->if_b()}, 10);
			if (r.out.find("prog/xdp") != std::string::npos) {
				std::this_thread::sleep_for(std::chrono::milliseconds(200));
				return true;
			}
			std::this_thread::sleep_for(std::chrono::milliseconds(50));
		}
		return false;
	}
	// recv --gro KINDS --pcap on B while @send runs on A: recv's summary line.
	// @all: every line recv printed (its interval lines with --interval).
	std::string recv_during(const std::string &kinds, const std::vector<std::string> &send, const std::string &pcap,
				const char *interval = "0", std::string *all = nullptr)
	{
		BackgroundCmd rx(tool(tb_->ns_b(), {"recv", tb_->if_b(), "--gro", kinds, "--idle", quiet_seconds(0.5),
						    "--duration", "20", "--interval", interval, "--pcap", pcap}));
		EXPECT_TRUE(rx.started());
		if (!wait_attached()) {
			ADD_FAILURE() << "recv never attached xdp_xsk: " << rx.wait(5).describe();
			return {};
		}
		CmdResult tx = run_cmd(tool(tb_->ns_a(), send_args(send)), kTimeout);
		EXPECT_TRUE(tx.ok()) << tx.describe();
		CmdResult r = rx.wait(30);
		EXPECT_TRUE(r.ok()) << r.describe();
		if (all)
			*all = r.out;
		return last_line(r.out);
	}

	TempDir tmp_{"xo-gro-recv"};
};

// send --gso tso: 20 super-packets of 20,000 bytes (PSH on the last segment
// of each) -> 14 segments each on the wire -> recv --gro tcp merges them
// back. A NAPI poll on B may end inside a super-packet, and recv flushes at
// the end of every batch as the kernel does at the end of a poll: a
// super-packet can then come out in two parts; the counts below hold
// either way, and every part is checked.
TEST_F(GroRecvVeth, TsoSuperPacketsMergedBack)
{
	const unsigned n = 20;
	const uint32_t size = 20000, mss = 1448;
	const size_t hdr = 14 + 20 + 20, payload = size - hdr;
	const unsigned nseg = static_cast<unsigned>((payload + mss - 1) / mss);
	const std::string pcap = tmp_.path() + "/tso.pcap";
	std::string s = recv_during("tcp", {"--proto", "tcp", "--gso", "tso", "--mss", std::to_string(mss), "--size",
					    std::to_string(size), "--count", std::to_string(n), "--sw-csum"},
				    pcap);
	ASSERT_FALSE(HasFailure()) << s;
	const std::string gro = json_obj(s, "gro");
	ASSERT_FALSE(gro.empty()) << "no gro object in recv's summary: " << s;
	EXPECT_EQ(u64(s, "packets"), uint64_t{n} * nseg) << "frames received: " << s;
	EXPECT_EQ(u64(gro, "frames_in"), uint64_t{n} * nseg) << gro;
	EXPECT_EQ(u64(gro, "held") + u64(gro, "merged") + u64(gro, "passed"), uint64_t{n} * nseg) << gro;
	EXPECT_EQ(u64(json_obj(gro, "bad_csum"), "total"), 0u) << gro;
	EXPECT_EQ(u64(gro, "malformed"), 0u) << gro;
	// each super-packet's last segment (PSH) ends its run: merged into it
	// (flush "flags") or, when a batch ended just before, passed alone
	EXPECT_EQ(u64(json_obj(gro, "flushes"), "flags") + u64(json_obj(gro, "passed_by"), "flags"), n) << gro;
	const uint64_t out = u64(gro, "packets_out");
	EXPECT_GE(out, n) << "a super-packet never merges into the next (PSH): " << gro;
	// how many merge depends on where recv's batches end (as the kernel's on
	// its NAPI polls): here from 20 to ~130 packets for the 280 frames
	EXPECT_LT(out, uint64_t{n} * nseg) << "nothing merged: " << gro;
	EXPECT_GE(u64(gro, "super_packets"), 1u) << gro;
	std::printf("tso: %u super-packets of %u segments -> %llu packets out (%llu more: batches that ended inside "
		    "a super-packet)\n", n, nseg,
		    static_cast<unsigned long long>(out), static_cast<unsigned long long>(out - n));

	auto pk = pcap_read_all(pcap);
	ASSERT_TRUE(pk.ok()) << pk.error().msg;
	ASSERT_EQ(pk->size(), out) << "the pcap holds the packets GRO emitted";
	uint64_t payload_bytes = 0, full = 0;
	for (size_t i = 0; i < pk->size(); i++) {
		const Bytes &f = (*pk)[i];
		FrameView v;
		ASSERT_EQ(parse_frame(f.data(), f.size(), 0, v), "") << "packet " << i;	// IPv4 checksum included
		ASSERT_EQ(v.proto, 6) << "packet " << i;
		EXPECT_EQ(be16(f.data() + v.l3 + 2), f.size() - v.l3) << "IPv4 total length of packet " << i;
		EXPECT_TRUE(l4_csum_ok(f, v)) << "TCP checksum of packet " << i << " (" << f.size() << " B)";
		const size_t pay = v.l4 + size_t(f[v.l4 + 12] >> 4) * 4;
		const uint32_t off = be32(f.data() + v.l4 + 4) - 1;	// send's super-packet starts at seq 1
		size_t wrong = 0;
		for (size_t k = pay; k < f.size(); k++)
			wrong += f[k] != static_cast<uint8_t>(off + (k - pay));
		EXPECT_EQ(wrong, 0u) << "payload bytes of packet " << i << " not the sent ones at their sequence";
		payload_bytes += f.size() - pay;
		full += f.size() == size;
	}
	EXPECT_EQ(payload_bytes, uint64_t{n} * payload) << "TCP payload bytes out == sent";
	// a split super-packet adds at least one packet: the others are the sent ones, whole
	EXPECT_GE(full + (out - n), uint64_t{n}) << full << " whole super-packets of " << size << " bytes";
	EXPECT_LE(full, uint64_t{n});
}

// recv --gro --interval: each interval line carries what the engines did
// in it (frames in, packets out, super-packets, bad checksums); over the
// run they add up to no more than the summary's totals, and the frames of
// the run show up in them.
TEST_F(GroRecvVeth, IntervalLinesCountTheGroEngines)
{
	const unsigned n = 20;
	std::string all;
	std::string s = recv_during("tcp", {"--proto", "tcp", "--gso", "tso", "--mss", "1448", "--size", "20000",
					    "--count", std::to_string(n), "--sw-csum"},
				    tmp_.path() + "/ivl.pcap", "0.05", &all);
	ASSERT_FALSE(HasFailure()) << s;
	const std::string gro = json_obj(s, "gro");
	ASSERT_FALSE(gro.empty()) << s;
	uint64_t in = 0, out = 0, lines = 0, super = 0;
	std::istringstream is(all);
	for (std::string line; std::getline(is, line);) {
		if (line.find("\"type\":\"interval\"") == std::string::npos)
			continue;
		const std::string g = json_obj(line, "gro");
		ASSERT_FALSE(g.empty()) << "an interval line of recv --gro without its gro object: " << line;
		lines++;
		const uint64_t li = u64(g, "frames_in"), lo = u64(g, "packets_out");
		EXPECT_EQ(u64(g, "bad_csum"), 0u) << line;
		in += li;
		out += lo;
		super += u64(g, "super_packets");
	}
	ASSERT_GE(lines, 1u) << all;
	EXPECT_GT(in, 0u) << "no interval saw the GRO engine take a frame: " << all;
	EXPECT_LE(in, u64(gro, "frames_in")) << all;
	EXPECT_LE(out, u64(gro, "packets_out")) << all;
	EXPECT_LE(super, u64(gro, "super_packets")) << all;
	std::printf("interval lines: %llu, frames in %llu of %llu, packets out %llu of %llu\n",
		    static_cast<unsigned long long>(lines), static_cast<unsigned long long>(in),
		    static_cast<unsigned long long>(u64(gro, "frames_in")), static_cast<unsigned long long>(out),
		    static_cast<unsigned long long>(u64(gro, "packets_out")));
}

// send --gso ufo: 10 datagrams of 9,000 bytes as IPv4 fragments ->
// recv --gro frag reassembles each (the queues outlive a batch: exact).
TEST_F(GroRecvVeth, UfoDatagramsReassembled)
{
	const unsigned n = 10;
	const uint32_t size = 9000;
	const std::string pcap = tmp_.path() + "/ufo.pcap";
	std::string s = recv_during("frag", {"--proto", "udp", "--gso", "ufo", "--size", std::to_string(size), "--count",
					     std::to_string(n), "--sw-csum"},
				    pcap);
	ASSERT_FALSE(HasFailure()) << s;
	const std::string gro = json_obj(s, "gro");
	ASSERT_FALSE(gro.empty()) << s;
	const std::string fr = json_obj(gro, "fragments");
	const uint64_t frames = u64(s, "packets");
	EXPECT_EQ(u64(gro, "frames_in"), frames) << gro;
	EXPECT_EQ(u64(fr, "in"), frames) << gro;
	EXPECT_EQ(frames % n, 0u) << "each datagram cut alike: " << s;
	EXPECT_GT(frames, uint64_t{n}) << s;
	EXPECT_EQ(u64(fr, "reassembled"), n) << gro;
	EXPECT_EQ(u64(json_obj(fr, "dropped"), "total"), 0u) << gro;
	EXPECT_EQ(u64(gro, "packets_out"), n) << gro;
	EXPECT_EQ(u64(gro, "bytes_out"), uint64_t{n} * size) << "datagrams whole: " << gro;

	auto pk = pcap_read_all(pcap);
	ASSERT_TRUE(pk.ok()) << pk.error().msg;
	ASSERT_EQ(pk->size(), n);
	for (size_t i = 0; i < n; i++) {
		const Bytes &f = (*pk)[i];
		FrameView v;
		ASSERT_EQ(parse_frame(f.data(), f.size(), 0, v), "") << "datagram " << i;
		EXPECT_FALSE(v.is_frag) << "datagram " << i;
		ASSERT_EQ(f.size(), size) << "datagram " << i;
		ASSERT_EQ(v.proto, 17);
		EXPECT_EQ(be16(f.data() + v.l4 + 4), size - v.l4) << "UDP length of datagram " << i;
		EXPECT_TRUE(l4_csum_ok(f, v)) << "UDP checksum over the reassembled datagram " << i;
		size_t wrong = 0;
		for (size_t k = v.l4 + 8; k < f.size(); k++)
			wrong += f[k] != static_cast<uint8_t>(k - v.l4 - 8);
		EXPECT_EQ(wrong, 0u) << "payload of datagram " << i;
	}
}

// Three segments of one flow in order, the middle one with a wrong TCP
// checksum, from a packet socket on A: recv counts one bad l4 checksum and
// writes that frame as it came; nothing merges across it.
TEST_F(GroRecvVeth, BadChecksumCountedNotMerged)
{
	std::vector<Bytes> frames;
	for (uint32_t i = 0; i < 3; i++)
		frames.push_back(PacketBuilder()
					 .eth(kMacB, kMacA)
					 .ipv4(kIpA, kIpB, 64, static_cast<uint16_t>(0x100 + i))
					 .tcp(kPortA, kPortB, 0x10, 1000 + i * 1000)
					 .payload(1000, static_cast<uint8_t>(i))
					 .build());
	{
		FrameView v;
		ASSERT_EQ(parse_frame(frames[1].data(), frames[1].size(), 0, v), "");
		frames[1][v.l4 + 16] ^= 0x5a;
		ASSERT_FALSE(l4_csum_ok(frames[1], v));
		ASSERT_TRUE(l4_csum_ok(frames[0], v));
	}
	const std::string pcap = tmp_.path() + "/bad.pcap";
	BackgroundCmd rx(tool(tb_->ns_b(), {"recv", tb_->if_b(), "--gro", "tcp", "--idle", quiet_seconds(0.5), "--duration",
					    "20", "--interval", "0", "--pcap", pcap}));
	ASSERT_TRUE(rx.started());
	ASSERT_TRUE(wait_attached()) << "recv never attached xdp_xsk";
	std::string why;
	std::thread t([&] {
		InNetns in(tb_->ns_a());
		if (!in.ok()) {
			why = "setns " + tb_->ns_a();
			return;
		}
		UniqueFd s(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL)));
		sockaddr_ll sll{};
		sll.sll_family = AF_PACKET;
		sll.sll_protocol = htons(ETH_P_ALL);
		sll.sll_ifindex = static_cast<int>(if_nametoindex(tb_->if_a().c_str()));
		if (!s.valid() || !sll.sll_ifindex || bind(s.get(), reinterpret_cast<sockaddr *>(&sll), sizeof(sll))) {
			why = std::string("packet socket on ") + tb_->if_a() + ": " + strerror(errno);
			return;
		}
		for (const Bytes &f : frames)
			if (::send(s.get(), f.data(), f.size(), 0) != static_cast<ssize_t>(f.size()))
				why = std::string("send: ") + strerror(errno);
	});
	t.join();
	ASSERT_EQ(why, "");
	CmdResult r = rx.wait(30);
	ASSERT_TRUE(r.ok()) << r.describe();
	const std::string s = last_line(r.out);
	const std::string gro = json_obj(s, "gro");
	ASSERT_FALSE(gro.empty()) << s;
	EXPECT_EQ(u64(gro, "frames_in"), 3u) << gro;
	EXPECT_EQ(u64(json_obj(gro, "bad_csum"), "total"), 1u) << gro;
	EXPECT_EQ(u64(json_obj(gro, "bad_csum"), "l4"), 1u) << gro;
	// the first segment and the bad one are contiguous (seq 1000+1000 = 2000):
	// a super-packet would mean the bad one was merged
	EXPECT_EQ(u64(gro, "super_packets"), 0u) << gro;
	EXPECT_EQ(u64(gro, "packets_out"), 3u) << gro;
	auto pk = pcap_read_all(pcap);
	ASSERT_TRUE(pk.ok()) << pk.error().msg;
	ASSERT_EQ(pk->size(), 3u);
	size_t same = 0;
	for (const Bytes &f : *pk)
		same += f == frames[1];
	EXPECT_EQ(same, 1u) << "the bad frame written as it came, once";
}

// recv --gro --format prometheus: the engine's counters as families of
// their own, with their causes as labels (one super-packet of 3 segments).
TEST_F(GroRecvVeth, PrometheusHasTheGroCounters)
{
	BackgroundCmd rx({tool_, "-n", tb_->ns_b(), "recv", tb_->if_b(), "--gro", "tcp", "--format", "prometheus", "--idle",
			  quiet_seconds(0.5), "--duration", "20", "--interval", "0"});
	ASSERT_TRUE(rx.started());
	ASSERT_TRUE(wait_attached()) << "recv never attached xdp_xsk";
	CmdResult tx = run_cmd(tool(tb_->ns_a(), send_args({"--proto", "tcp", "--gso", "tso", "--mss", "1448", "--size",
							      std::to_string(54 + 3 * 1448), "--count", "1", "--sw-csum"})),
			       kTimeout);
	ASSERT_TRUE(tx.ok()) << tx.describe();
	CmdResult r = rx.wait(30);
	ASSERT_TRUE(r.ok()) << r.describe();
	// the value of the sample whose line starts with @head (name and labels)
	auto value = [&r](const std::string &head) -> std::optional<uint64_t> {
		for (size_t at = r.out.find(head); at != std::string::npos; at = r.out.find(head, at + 1)) {
			if (at && r.out[at - 1] != '\n')
				continue;
			size_t end = r.out.find('\n', at);
			size_t sp = r.out.rfind(' ', end);
			return std::stoull(r.out.substr(sp + 1, end - sp - 1));
		}
		return std::nullopt;
	};
	EXPECT_NE(r.out.find("# TYPE xoffload_gro_frames_total counter"), std::string::npos) << r.out;
	EXPECT_EQ(value("xoffload_gro_frames_total{"), 3u) << r.out;
	// one packet, or more where a batch ended inside the three (see above)
	const uint64_t out = value("xoffload_gro_packets_total{").value_or(0);
	EXPECT_GE(out, 1u) << r.out;
	EXPECT_LE(out, 3u) << r.out;
	EXPECT_EQ(value("xoffload_gro_super_packets_total{"), out < 3 ? 1u : 0u) << r.out;
	const std::string labels = "netns=\"" + tb_->ns_b() + "\",ifname=\"" + tb_->if_b() + "\",dir=\"rx\"";
	EXPECT_EQ(value("xoffload_gro_frame_verdicts_total{" + labels + ",verdict=\"merged\"}"), 3 - out) << r.out;
	EXPECT_EQ(value("xoffload_gro_flushes_total{" + labels + ",cause=\"flags\"}").value_or(9) +
			  value("xoffload_gro_passed_total{" + labels + ",reason=\"flags\"}").value_or(9),
		  1u)
		<< "the PSH segment ends its run, merged or alone\n"
		<< r.out;
	EXPECT_EQ(value("xoffload_gro_bad_csum_total{" + labels + ",where=\"l4\"}"), 0u) << r.out;
}

} // namespace
} // namespace xoffload::test
