// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// xdp_xsk's filter under BPF_PROG_TEST_RUN: a table of frames, each with the
// one counter it must land in (no socket is in the XSKMAP, so a match is
// counted no-socket and passed). The IP and UDP parsing is parse.h's, the
// same helpers xdp_geneve uses.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <unistd.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "packet_builder.hpp"
#include "prog_run.hpp"
#include "xdp_xsk.skel.h"
#include "xoffload/core/abi_check.hpp"

namespace xoffload::test {
namespace {

constexpr uint16_t kDport = 4789, kOtherPort = 4790;

using XskCounters = std::array<xo_counter, XO_XSK_CNT_MAX>;

const char *xsk_reason(unsigned r)
{
	static const char *const n[XO_XSK_CNT_MAX] = {"redirected", "no-socket", "filtered", "malformed"};
	return r < XO_XSK_CNT_MAX ? n[r] : "?";
}

struct XskSkel {
	void operator()(xdp_xsk_bpf *s) const { xdp_xsk_bpf__destroy(s); }
};

class XskBpf : public ::testing::Test {
protected:
	void SetUp() override
	{
		if (geteuid() != 0)
			GTEST_SKIP() << "needs root (BPF_PROG_TEST_RUN)";
		s_.reset(xdp_xsk_bpf__open_and_load());
		ASSERT_TRUE(s_) << "loading xdp_xsk failed: " << std::strerror(errno);
	}
	void filter(uint32_t flags, uint16_t dport)
	{
		uint32_t z = 0;
		xo_xsk_filter f{};
		f.abi_version = XO_ABI_VERSION;
		f.flags = flags;
		f.udp_dport = htons(dport);
		ASSERT_EQ(bpf_map_update_elem(bpf_map__fd(s_->maps.xo_xsk_cfg), &z, &f, BPF_ANY), 0);
	}
	XskCounters counters() const
	{
		int n = libbpf_num_possible_cpus();
		std::vector<xo_counter> pc(n > 0 ? static_cast<size_t>(n) : 1);
		XskCounters c{};
		for (uint32_t r = 0; r < XO_XSK_CNT_MAX; r++) {
			if (bpf_map_lookup_elem(bpf_map__fd(s_->maps.xo_xsk_stats), &r, pc.data()))
				ADD_FAILURE() << "reading xo_xsk_stats: " << std::strerror(errno);
			for (const auto &x : pc) {
				c[r].packets += x.packets;
				c[r].bytes += x.bytes;
			}
		}
		return c;
	}
	// One run of @in: XDP_PASS, and exactly one frame of in.size() bytes
	// added to counter @reason, nothing to the others.
	void expect(const Bytes &in, unsigned reason)
	{
		XskCounters before = counters();
		ProgRun r = prog_run(bpf_program__fd(s_->progs.xdp_xsk), in, 0);
		ASSERT_EQ(r.err, 0);
		EXPECT_EQ(r.retval, uint32_t{XDP_PASS});
		XskCounters after = counters();
		for (unsigned k = 0; k < XO_XSK_CNT_MAX; k++) {
			uint64_t dp = after[k].packets - before[k].packets, db = after[k].bytes - before[k].bytes;
			EXPECT_EQ(dp, k == reason ? 1u : 0u) << xsk_reason(k);
			EXPECT_EQ(db, k == reason ? in.size() : 0u) << xsk_reason(k);
		}
	}
	std::unique_ptr<xdp_xsk_bpf, XskSkel> s_;
};

Bytes udp4(uint16_t dport, size_t payload = 18)
{
	return PacketBuilder().eth(kMacB, kMacA).ipv4(kIpA, kIpB).udp(1000, dport).payload(payload).build();
}

Bytes udp6(uint16_t dport)
{
	return PacketBuilder().eth(kMacB, kMacA).ipv6(kIp6A, kIp6B).udp(1000, dport).payload(18).build();
}

// The version nibble of the IP header of an untagged frame.
Bytes ip_version(Bytes f, uint8_t v)
{
	f[14] = static_cast<uint8_t>(v << 4 | (f[14] & 0x0f));
	return f;
}

Bytes frag_off(Bytes f, uint16_t v)
{
	f[14 + 6] = static_cast<uint8_t>(v >> 8);
	f[14 + 7] = static_cast<uint8_t>(v);
	return f;
}

struct XskCase {
	const char *name;
	Bytes in;
	unsigned reason;
};

TEST_F(XskBpf, UdpPortFilterCountsEachFrameOnce)
{
	filter(XO_XSK_F_UDP_DPORT, kDport);
	Bytes ihl4 = udp4(kDport);
	ihl4[14] = 0x44;
	Bytes opts_cut = udp4(kDport, 0);
	opts_cut.resize(14 + 24);
	opts_cut[14] = 0x47;	// 28 bytes of header, 24 there
	Bytes udp_cut = udp4(kDport);
	udp_cut.resize(14 + 20 + 6);
	const std::vector<XskCase> cases = {
		{"ipv4_match", udp4(kDport), XO_XSK_CNT_NO_SOCKET},
		{"ipv6_match", udp6(kDport), XO_XSK_CNT_NO_SOCKET},
		{"ipv4_other_port", udp4(kOtherPort), XO_XSK_CNT_FILTERED},
		{"ipv6_other_port", udp6(kOtherPort), XO_XSK_CNT_FILTERED},
		{"ipv4_options_match",
		 PacketBuilder().eth(kMacB, kMacA).ipv4(kIpA, kIpB).ip_options({1, 1, 1, 0}).udp(1, kDport).payload(8)
			 .build(),
		 XO_XSK_CNT_NO_SOCKET},
		{"tcp_to_port", PacketBuilder().eth(kMacB, kMacA).ipv4(kIpA, kIpB).tcp(1, kDport).payload(8).build(),
		 XO_XSK_CNT_FILTERED},
		{"arp", PacketBuilder().eth(kMacBcast, kMacA).ethertype(0x0806).payload(28).build(),
		 XO_XSK_CNT_FILTERED},
		// the first fragment has the UDP header, later ones none
		{"ipv4_first_fragment_match", frag_off(udp4(kDport), 0x2000), XO_XSK_CNT_NO_SOCKET},
		{"ipv4_later_fragment", frag_off(udp4(kDport), 0x0010), XO_XSK_CNT_FILTERED},
		{"ipv4_ihl_4", ihl4, XO_XSK_CNT_MALFORMED},
		{"ipv4_options_cut", opts_cut, XO_XSK_CNT_MALFORMED},
		{"udp_cut", udp_cut, XO_XSK_CNT_MALFORMED},
		// parse.h since stop 19: a version that is not the ethertype's
		// is malformed (before, xdp_xsk read on and matched the port)
		{"ipv4_version_6", ip_version(udp4(kDport), 6), XO_XSK_CNT_MALFORMED},
		{"ipv6_version_4", ip_version(udp6(kDport), 4), XO_XSK_CNT_MALFORMED},
	};
	for (const auto &c : cases) {
		SCOPED_TRACE(c.name);
		expect(c.in, c.reason);
	}
}

TEST_F(XskBpf, NoFilterTakesEveryFrame)
{
	expect(ip_version(udp4(kDport), 6), XO_XSK_CNT_NO_SOCKET);
	filter(XO_XSK_F_ETHERTYPE, 0);
	expect(ip_version(udp4(kDport), 6), XO_XSK_CNT_FILTERED);
}

} // namespace
} // namespace xoffload::test
