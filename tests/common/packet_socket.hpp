// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Raw packet sockets in a test's network namespace, and the virtio_net_hdr
// a PACKET_VNET_HDR socket reads and writes ahead of each frame: the GSO and
// GRO comparisons with the kernel (test_gso_kernel, test_gro_kernel).
#pragma once

#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/socket.h>

#include <arpa/inet.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

#include "testbed.hpp"
#include "xoffload/core/fd.hpp"

namespace xoffload::test {

// <linux/virtio_net.h> names a member 'class' and cannot be included from
// C++: the header a PACKET_VNET_HDR socket prepends (native endianness).
struct VnetHdr {
	uint8_t flags;
	uint8_t gso_type;
	uint16_t hdr_len;
	uint16_t gso_size;
	uint16_t csum_start;
	uint16_t csum_offset;
};
static_assert(sizeof(VnetHdr) == 10);
inline constexpr uint8_t kVnetNeedsCsum = 1, kVnetDataValid = 2;
inline constexpr uint8_t kVnetGsoNone = 0, kVnetGsoTcp4 = 1, kVnetGsoUdp = 3, kVnetGsoTcp6 = 4,
			 kVnetGsoUdpL4 = 5, kVnetGsoEcn = 0x80;

// A raw packet socket on @ifname inside netns @ns (made on a thread that
// enters the namespace; the socket stays there), with PACKET_AUXDATA (a tag
// the stack took out of the frame, in a cmsg), PACKET_VNET_HDR when @vnet,
// and an 8 MiB receive buffer. Invalid, and *why said, on failure.
inline UniqueFd packet_socket(const std::string &ns, const std::string &ifname, bool vnet, std::string *why)
{
	int fd = -1;
	std::thread t([&] {
		InNetns in(ns);
		if (!in.ok()) {
			*why = "setns " + ns + ": " + std::strerror(errno);
			return;
		}
		UniqueFd s(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL)));
		int one = 1;
		if (!s.valid() || setsockopt(s.get(), SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)) ||
		    (vnet && setsockopt(s.get(), SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)))) {
			*why = std::string("packet socket: ") + std::strerror(errno);
			return;
		}
		int rcvbuf = 8 << 20;
		setsockopt(s.get(), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
		sockaddr_ll sll{};
		sll.sll_family = AF_PACKET;
		sll.sll_protocol = htons(ETH_P_ALL);
		sll.sll_ifindex = static_cast<int>(if_nametoindex(ifname.c_str()));
		if (!sll.sll_ifindex || bind(s.get(), reinterpret_cast<sockaddr *>(&sll), sizeof(sll))) {
			*why = "bind " + ifname + ": " + std::strerror(errno);
			return;
		}
		fd = s.release();
	});
	t.join();
	return UniqueFd(fd);
}

} // namespace xoffload::test
