// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Known-answer checks of the shared packet builder, so BPF and integration
// tests can trust the frames they compare against. Needs no privileges.
#include <gtest/gtest.h>

#include "packet_builder.hpp"

namespace xoffload::test {
namespace {

// Folded one's-complement sum over the L4 segment and its pseudo-header,
// written independently of the builder: 0xffff when the checksum is right.
uint16_t l4_verify(const Bytes &f, size_t ip, bool v6)
{
	size_t l4 = ip + (v6 ? 40 : (f[ip] & 0x0f) * 4u);
	uint32_t sum = 0;
	auto add = [&](size_t from, size_t to) {
		for (size_t i = from; i < to; i += 2)
			sum += static_cast<uint32_t>(f[i] << 8 | (i + 1 < to ? f[i + 1] : 0));
	};
	if (v6) {
		add(ip + 8, ip + 40);
		sum += f[ip + 6];
	} else {
		add(ip + 12, ip + 20);
		sum += f[ip + 9];
	}
	sum += static_cast<uint32_t>(f.size() - l4);
	add(l4, f.size());
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return static_cast<uint16_t>(sum);
}

TEST(PacketBuilder, Ipv4HeaderChecksumKnownAnswer)
{
	// the textbook header 4500 0073 0000 4000 4011 b861 c0a8 0001 c0a8 00c7
	Bytes f = PacketBuilder()
			  .eth(kMacB, kMacA)
			  .ipv4({192, 168, 0, 1}, {192, 168, 0, 199}, 64, 0)
			  .udp(kPortA, kPortB)
			  .payload(0x73 - 28)
			  .build();
	const Bytes want = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
			    0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
	ASSERT_EQ(f.size(), kEthHdrLen + 0x73);
	EXPECT_EQ(hexdump(Bytes(f.begin() + 14, f.begin() + 34)), hexdump(want));
	EXPECT_EQ(l4_verify(f, 14, false), 0xffff);
	EXPECT_EQ(f[34 + 4] << 8 | f[34 + 5], 0x73 - 20);	// UDP length
}

TEST(PacketBuilder, TagsChainEthertypesAndKeepPcpDei)
{
	Bytes f = PacketBuilder()
			  .eth(kMacB, kMacA)
			  .vlan(kTpid8021AD, 30, 3)
			  .vlan(kTpid8021Q, 100, 5, true)
			  .ipv4(kIpA, kIpB)
			  .udp(kPortA, kPortB)
			  .payload(4)
			  .build();
	const Bytes head = {0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a,
			    0x88, 0xa8, 0x60, 0x1e,	 // 802.1ad, PCP 3, VID 30
			    0x81, 0x00, 0xb0, 0x64,	 // 802.1Q, PCP 5, DEI, VID 100
			    0x08, 0x00, 0x45};
	EXPECT_EQ(hexdump(Bytes(f.begin(), f.begin() + head.size())), hexdump(head));
	EXPECT_EQ(f.size(), 22u + 20 + 8 + 4);
	EXPECT_EQ(l4_verify(f, 22, false), 0xffff);
}

TEST(PacketBuilder, Ipv6AndTcpLengthsAndChecksums)
{
	Bytes u = PacketBuilder().eth(kMacA, kMacB).ipv6(kIp6A, kIp6B).udp(1, 2).payload(7).build();
	Bytes t = PacketBuilder().eth(kMacA, kMacB).ipv4(kIpA, kIpB).tcp(1, 2).payload(7).build();
	EXPECT_EQ(u[12] << 8 | u[13], kEthIPv6);
	EXPECT_EQ(u[14 + 4] << 8 | u[14 + 5], 8 + 7);	// payload length
	EXPECT_EQ(u[14 + 6], 17);
	EXPECT_EQ(l4_verify(u, 14, true), 0xffff);
	EXPECT_EQ(t[14 + 9], 6);
	EXPECT_EQ(l4_verify(t, 14, false), 0xffff);
	EXPECT_EQ(inet_csum({t.data() + 14, 20}), 0);	// header checksum verifies
}

TEST(PacketBuilder, InsertAndRemoveTagsAfterTheMacs)
{
	Bytes plain = PacketBuilder().eth(kMacB, kMacA).ipv4(kIpA, kIpB).payload(3).build();
	Bytes tagged = PacketBuilder()
			       .eth(kMacB, kMacA)
			       .vlan(kTpid8021Q, 7, 2, true)
			       .ipv4(kIpA, kIpB)
			       .payload(3)
			       .build();
	EXPECT_EQ(insert_vlan(plain, kTpid8021Q, vlan_tci(7, 2, true)), tagged);
	EXPECT_EQ(remove_vlans(tagged, 1), plain);
	EXPECT_EQ(truncated(tagged, 15).size(), 15u);
	EXPECT_EQ(vlan_tci(4095, 7, true), 0xffff);
}

} // namespace
} // namespace xoffload::test
