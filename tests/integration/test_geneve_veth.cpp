// xdp_geneve on a real veth pair: Geneve frames built here are sent from
// namespace A with a packet socket; on B, decap must deliver the inner UDP
// datagram to a listening socket with its payload intact, xsk must spread
// inner flows over several AF_XDP sockets (one queue, shared UMEM) by hash,
// each frame exactly once, and the port registry must count references
// through the CLI. Every test checks the negative case first.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include <xdp/xsk.h>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "geneve_frames.hpp"
#include "testbed.hpp"
#include "xoffload/abi_check.hpp"
#include "xoffload/fd.hpp"

namespace xoffload::test {
namespace {

constexpr double kCmdTimeout = 20.0;
const Ip4 kTbIpA{10, 250, 0, 1};
const Ip4 kTbIpB{10, 250, 0, 2};
constexpr uint16_t kInnerPort = 5555;

std::string payload_of(unsigned i)
{
	return "geneve-inner-" + std::to_string(i);
}

// Inner Ethernet/IPv4/UDP A -> B:kInnerPort carrying payload_of(i).
Bytes inner_frame(unsigned i, bool with_eth = true, uint16_t sport = kPortA)
{
	std::string p = payload_of(i);
	Bytes pb(p.begin(), p.end());
	PacketBuilder b;
	if (with_eth)
		b.eth(kMacB, kMacA);
	return b.ipv4(kTbIpA, kTbIpB, 64, static_cast<uint16_t>(i + 1)).udp(sport, kInnerPort).payload(pb).build();
}

Bytes encap(uint32_t vni, uint16_t proto, const Bytes &inner, uint16_t dport = kPortGeneve)
{
	return outer4(geneve(vni, proto, inner), dport, {}, 49152, kMacB, kMacA, kTbIpA, kTbIpB);
}

class GeneveVeth : public TestbedTest {
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
		if (IsSkipped() || HasFatalFailure())
			return;
		struct statfs st {};
		if (statfs("/sys/fs/bpf", &st) || st.f_type != BPF_FS_MAGIC)
			GTEST_SKIP() << "bpffs is not mounted on /sys/fs/bpf (tools/setup mounts it)";
		tool_ = env_or_empty("XO_TOOL");
		ASSERT_FALSE(tool_.empty()) << "XO_TOOL must be set (run through ctest)";
		{
			InNetns in(tb_->ns_a());
			ASSERT_TRUE(in.ok()) << "setns " << tb_->ns_a();
			tx_.reset(socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
			ASSERT_TRUE(tx_.valid()) << std::strerror(errno);
			tx_ifindex_ = static_cast<int>(if_nametoindex(tb_->if_a().c_str()));
			ASSERT_NE(tx_ifindex_, 0);
		}
	}

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
	bool tool_ok(std::vector<std::string> args)
	{
		CmdResult r = tool(std::move(args));
		EXPECT_EQ(r.exit_code, 0) << last_ << ": " << r.describe();
		return r.ok();
	}

	void send(const Bytes &f)
	{
		sockaddr_ll sll{};
		sll.sll_family = AF_PACKET;
		sll.sll_ifindex = tx_ifindex_;
		sll.sll_halen = 6;
		std::memcpy(sll.sll_addr, kMacB.data(), 6);
		ssize_t n = sendto(tx_.get(), f.data(), f.size(), 0, reinterpret_cast<sockaddr *>(&sll), sizeof(sll));
		EXPECT_EQ(n, static_cast<ssize_t>(f.size())) << "sendto: " << std::strerror(errno);
	}

	// A UDP socket bound to B:kInnerPort inside namespace B.
	UniqueFd listen_b()
	{
		InNetns in(tb_->ns_b());
		EXPECT_TRUE(in.ok());
		UniqueFd s(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
		sockaddr_in a{};
		a.sin_family = AF_INET;
		a.sin_port = htons(kInnerPort);
		std::memcpy(&a.sin_addr, kTbIpB.data(), 4);
		EXPECT_EQ(bind(s.get(), reinterpret_cast<sockaddr *>(&a), sizeof(a)), 0) << std::strerror(errno);
		return s;
	}

	// Datagrams that arrive within timeout_ms of quiet.
	static std::vector<std::string> drain(int fd, int timeout_ms)
	{
		std::vector<std::string> got;
		pollfd p{fd, POLLIN, 0};
		while (poll(&p, 1, timeout_ms) > 0) {
			char buf[2048];
			ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (n < 0)
				break;
			got.emplace_back(buf, static_cast<size_t>(n));
		}
		return got;
	}

	uint64_t counter(const std::string &json, const std::string &vni, const std::string &reason)
	{
		// {"vni":"100","not-geneve":{...},...,"decapped":{"packets":N,...
		size_t at = vni.empty() ? json.find("\"total\"") : json.find("\"vni\":\"" + vni + "\"");
		if (at == std::string::npos)
			return ~0ull;
		size_t r = json.find("\"" + reason + "\":{\"packets\":", at);
		if (r == std::string::npos)
			return ~0ull;
		return std::stoull(json.substr(r + reason.size() + 14));
	}

	std::string pin_dir_b() const { return "/sys/fs/bpf/xoffload/" + tb_->if_b() + "@" + tb_->ns_b(); }

	std::string tool_, last_;
	UniqueFd tx_;
	int tx_ifindex_ = 0;
};

TEST_F(GeneveVeth, DecapDeliversInnerUdpWithPayloadIntact)
{
	constexpr unsigned n = 20;
	UniqueFd rx = listen_b();
	ASSERT_TRUE(rx.valid());
	ASSERT_TRUE(tool_ok({"attach", tb_->if_b(), "geneve"}));
	ASSERT_TRUE(tool_ok({"geneve", "rule", "add", tb_->if_b(), "--vni", "100", "--action", "decap"}));
	ASSERT_TRUE(tool_ok({"geneve", "rule", "add", tb_->if_b(), "--vni", "300", "--action", "drop"}));

	// negative first: the port is not registered, so nothing is decapped
	for (unsigned i = 0; i < 5; i++)
		send(encap(100, kEthTeb, inner_frame(i)));
	EXPECT_TRUE(drain(rx.get(), 300).empty()) << "inner datagrams arrived without a registered port";

	ASSERT_TRUE(tool_ok({"geneve", "port", "add", tb_->if_b(), "6081"}));
	for (unsigned i = 0; i < n; i++) {
		// TEB and IPv4 payloads alternate; VNI 300 frames in between must vanish
		send(encap(100, i % 2 ? kEthIPv4 : kEthTeb, inner_frame(i, i % 2 == 0)));
		send(encap(300, kEthTeb, inner_frame(1000 + i)));
	}
	auto got = drain(rx.get(), 500);
	ASSERT_EQ(got.size(), n);
	for (unsigned i = 0; i < n; i++)
		EXPECT_EQ(got[i], payload_of(i)) << "datagram " << i;

	CmdResult st = tool({"geneve", "stats", tb_->if_b()}, true);
	ASSERT_TRUE(st.ok()) << st.describe();
	EXPECT_EQ(counter(st.out, "100", "decapped"), n) << st.out;
	EXPECT_EQ(counter(st.out, "300", "dropped-rule"), n) << st.out;
	EXPECT_EQ(counter(st.out, "", "decapped"), n) << st.out;
	EXPECT_EQ(counter(st.out, "", "dropped-rule"), n) << st.out;
	CmdResult txt = tool({"geneve", "stats", tb_->if_b()});
	EXPECT_NE(txt.out.find("vni 100"), std::string::npos) << txt.out;
}

TEST_F(GeneveVeth, PortRegistryIsReferenceCountedThroughTheCli)
{
	UniqueFd rx = listen_b();
	const std::string &ifb = tb_->if_b();
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6081"}));	// before attach: pins made
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6081"}));
	ASSERT_TRUE(tool_ok({"attach", ifb, "geneve"}));
	ASSERT_TRUE(tool_ok({"geneve", "rule", "add", ifb, "--default", "--action", "decap"}));
	CmdResult l = tool({"geneve", "port", "list", ifb}, true);
	EXPECT_NE(l.out.find("{\"port\":6081,\"refcnt\":2}"), std::string::npos) << l.out;

	ASSERT_TRUE(tool_ok({"geneve", "port", "del", ifb, "6081"}));
	send(encap(42, kEthTeb, inner_frame(1)));
	EXPECT_EQ(drain(rx.get(), 300).size(), 1u) << "one reference left: still decapped";

	ASSERT_TRUE(tool_ok({"geneve", "port", "del", ifb, "6081"}));
	l = tool({"geneve", "port", "list", ifb}, true);
	EXPECT_NE(l.out.find("\"ports\":[]"), std::string::npos) << l.out;
	send(encap(42, kEthTeb, inner_frame(2)));
	EXPECT_TRUE(drain(rx.get(), 300).empty()) << "last reference gone: not decapped";

	CmdResult r = tool({"geneve", "port", "del", ifb, "6081"});
	EXPECT_EQ(r.exit_code, 1) << "deleting an absent port: " << r.describe();
	EXPECT_NE(r.err.find("not registered"), std::string::npos) << r.err;
	for (auto args : std::vector<std::vector<std::string>>{
		     {"geneve", "port", "add", ifb, "0"},
		     {"geneve", "port", "add", ifb, "65536"},
		     {"geneve", "rule", "add", ifb, "--vni", "16777216", "--action", "pass"},
		     {"geneve", "rule", "add", ifb, "--vni", "1", "--action", "bounce"}}) {
		CmdResult b = tool(args);
		EXPECT_EQ(b.exit_code, 2) << join_cmd(args) << ": " << b.describe();
		EXPECT_EQ(std::count(b.err.begin(), b.err.end(), '\n'), 1) << b.err;
	}
	// the registry lives in bpffs: it outlived every CLI process above
	EXPECT_TRUE(access((pin_dir_b() + "/xo_gnv_ports").c_str(), F_OK) == 0);
}

// cpu: the outer frames go through the CPUMAP (CPUs 0..1 by inner-flow hash)
// and on into B's stack, where a UDP socket on the Geneve port gets each once.
TEST_F(GeneveVeth, CpuSteeringDeliversEveryFrameOnce)
{
	constexpr unsigned n = 40;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		GTEST_SKIP() << "needs 2 CPUs";
	UniqueFd rx;
	{
		InNetns in(tb_->ns_b());
		ASSERT_TRUE(in.ok());
		rx.reset(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
		sockaddr_in a{};
		a.sin_family = AF_INET;
		a.sin_port = htons(kPortGeneve);
		std::memcpy(&a.sin_addr, kTbIpB.data(), 4);
		ASSERT_EQ(bind(rx.get(), reinterpret_cast<sockaddr *>(&a), sizeof(a)), 0) << std::strerror(errno);
	}
	const std::string &ifb = tb_->if_b();
	ASSERT_TRUE(tool_ok({"attach", ifb, "geneve"}));
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6081"}));
	ASSERT_TRUE(tool_ok({"geneve", "rule", "add", ifb, "--vni", "500", "--action", "cpu", "--queues", "2"}));
	CmdResult bad = tool({"geneve", "rule", "add", ifb, "--vni", "501", "--action", "cpu", "--queues", "64"});
	EXPECT_EQ(bad.exit_code, 2) << "more CPUs than online: " << bad.describe();

	for (unsigned i = 0; i < n; i++)
		send(encap(500, kEthTeb, inner_frame(i, true, static_cast<uint16_t>(30000 + i))));
	auto got = drain(rx.get(), 500);
	ASSERT_EQ(got.size(), n) << "Geneve datagrams reaching B's stack through the CPUMAP";
	std::set<std::string> distinct(got.begin(), got.end());
	EXPECT_EQ(distinct.size(), n) << "a frame arrived twice";
	CmdResult st = tool({"geneve", "stats", ifb}, true);
	EXPECT_EQ(counter(st.out, "500", "redirected"), n) << st.out;
	EXPECT_EQ(counter(st.out, "500", "no-target"), 0u) << st.out;
}

// ---- xsk: N AF_XDP sockets on one queue sharing one UMEM ------------------

struct XskRx {
	void *area = nullptr;
	size_t area_len = 0;
	xsk_umem *umem = nullptr;
	xsk_ring_prod fill{};
	xsk_ring_cons comp{};
	std::vector<xsk_socket *> socks;
	std::vector<xsk_ring_cons> rx;

	~XskRx()
	{
		for (auto *s : socks)
			xsk_socket__delete(s);
		if (umem)
			xsk_umem__delete(umem);
		if (area)
			munmap(area, area_len);
	}
};

constexpr uint32_t kFrames = 1024, kFrameSize = 2048;

TEST_F(GeneveVeth, XskSpreadsInnerFlowsOverSocketsExactlyOnce)
{
	constexpr unsigned nsock = 3, nframes = 90;
	const std::string &ifb = tb_->if_b();
	ASSERT_TRUE(tool_ok({"attach", ifb, "geneve"}));
	ASSERT_TRUE(tool_ok({"geneve", "port", "add", ifb, "6081"}));
	ASSERT_TRUE(tool_ok({"geneve", "rule", "add", ifb, "--vni", "400", "--action", "xsk", "--queues",
			     std::to_string(nsock)}));

	XskRx x;
	x.rx.resize(nsock);
	{
		InNetns in(tb_->ns_b());
		ASSERT_TRUE(in.ok());
		x.area_len = size_t{kFrames} * kFrameSize;
		x.area = mmap(nullptr, x.area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(x.area, MAP_FAILED);
		xsk_umem_config uc{};
		uc.fill_size = kFrames;
		uc.comp_size = 64;
		uc.frame_size = kFrameSize;
		int err = xsk_umem__create(&x.umem, x.area, x.area_len, &x.fill, &x.comp, &uc);
		ASSERT_EQ(err, 0) << "xsk_umem__create: " << std::strerror(-err);
		for (unsigned i = 0; i < nsock; i++) {
			xsk_socket_config sc{};
			sc.rx_size = 256;
			sc.tx_size = 0;
			sc.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
			sc.bind_flags = XDP_COPY;
			xsk_socket *s = nullptr;
			err = xsk_socket__create_shared(&s, ifb.c_str(), 0, x.umem, &x.rx[i], nullptr, &x.fill, &x.comp,
							&sc);
			if (err == -EOPNOTSUPP || err == -EPROTONOSUPPORT)
				GTEST_SKIP() << "AF_XDP not available: " << std::strerror(-err);
			ASSERT_EQ(err, 0) << "socket " << i << ": " << std::strerror(-err);
			x.socks.push_back(s);
		}
	}
	UniqueFd xsks(bpf_obj_get((pin_dir_b() + "/xo_gnv_xsks").c_str()));
	ASSERT_TRUE(xsks.valid()) << std::strerror(errno);
	for (uint32_t i = 0; i < nsock; i++) {
		uint32_t fd = static_cast<uint32_t>(xsk_socket__fd(x.socks[i]));
		ASSERT_EQ(bpf_map_update_elem(xsks.get(), &i, &fd, BPF_ANY), 0) << std::strerror(errno);
	}
	uint32_t idx = 0;
	ASSERT_EQ(xsk_ring_prod__reserve(&x.fill, kFrames, &idx), kFrames);
	for (uint32_t i = 0; i < kFrames; i++)
		*xsk_ring_prod__fill_addr(&x.fill, idx + i) = uint64_t{i} * kFrameSize;
	xsk_ring_prod__submit(&x.fill, kFrames);

	// negative first: another VNI (default rule pass) never reaches a socket
	for (unsigned i = 0; i < 5; i++)
		send(encap(401, kEthTeb, inner_frame(i)));

	std::map<unsigned, unsigned> want_slot;	// frame -> predicted socket
	for (unsigned i = 0; i < nframes; i++) {
		uint16_t sport = static_cast<uint16_t>(20000 + i * 7);
		want_slot[i] = xo_gnv_flow_hash(0x0afa0001, 0x0afa0002, sport, kInnerPort, 17) % nsock;
		send(encap(400, kEthTeb, inner_frame(i, true, sport)));
	}

	std::map<unsigned, std::vector<unsigned>> seen;	// frame -> sockets it arrived on
	std::vector<unsigned> per_sock(nsock);
	unsigned total = 0, foreign = 0;
	for (int spin = 0; spin < 300 && total < nframes; spin++) {
		bool any = false;
		for (unsigned s = 0; s < nsock; s++) {
			uint32_t ri = 0;
			uint32_t got = xsk_ring_cons__peek(&x.rx[s], 64, &ri);
			for (uint32_t k = 0; k < got; k++) {
				const xdp_desc *d = xsk_ring_cons__rx_desc(&x.rx[s], ri + k);
				const uint8_t *p = static_cast<const uint8_t *>(xsk_umem__get_data(x.area, d->addr));
				// outer 42 + Geneve 8 + inner eth 14 + IP 20 + UDP 8: the payload
				std::string payload(reinterpret_cast<const char *>(p) + 92, d->len > 92 ? d->len - 92 : 0);
				unsigned i = 0;
				if (payload.rfind("geneve-inner-", 0) == 0 && (i = std::stoul(payload.substr(13)), true) &&
				    i < nframes) {
					seen[i].push_back(s);
					per_sock[s]++;
				} else {
					foreign++;
				}
				uint32_t fi = 0;
				while (xsk_ring_prod__reserve(&x.fill, 1, &fi) != 1) {
				}
				*xsk_ring_prod__fill_addr(&x.fill, fi) = d->addr & ~uint64_t{kFrameSize - 1};
				xsk_ring_prod__submit(&x.fill, 1);
				total++;
				any = true;
			}
			xsk_ring_cons__release(&x.rx[s], got);
		}
		if (!any)
			usleep(10000);
	}
	EXPECT_EQ(foreign, 0u) << "frames of VNI 401 (pass) reached a socket";
	EXPECT_EQ(seen.size(), nframes) << "distinct frames received";
	for (const auto &[i, socks] : seen) {
		EXPECT_EQ(socks.size(), 1u) << "frame " << i << " arrived " << socks.size() << " times";
		if (!socks.empty()) {
			EXPECT_EQ(socks[0], want_slot[i]) << "frame " << i << " on the wrong socket";
		}
	}
	unsigned used = 0;
	for (unsigned s = 0; s < nsock; s++)
		used += per_sock[s] > 0;
	EXPECT_EQ(used, nsock) << "every socket got some flows";

	CmdResult st = tool({"geneve", "stats", ifb}, true);
	EXPECT_EQ(counter(st.out, "400", "redirected"), nframes) << st.out;
	EXPECT_EQ(counter(st.out, "default", "passed"), 5u) << st.out;
}

} // namespace
} // namespace xoffload::test
