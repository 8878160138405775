// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A program using the installed libxoffload: segments one 8000-byte UDP
// super-packet into 1500-byte VLAN-tagged frames with the GSO engine and
// prints what came out. Needs no privileges. Built by tests/tools/check-install
// through pkg-config (Makefile) and find_package (CMakeLists.txt).
#include <xoffload/core/version.hpp>
#include <xoffload/gso/gso.hpp>

#include <arpa/inet.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

// Ethernet + IPv4 + UDP headers and @payload bytes of a counting pattern.
std::vector<std::byte> udp4_super_packet(size_t payload)
{
	std::vector<std::byte> f(14 + 20 + 8 + payload);
	auto *p = reinterpret_cast<unsigned char *>(f.data());
	const unsigned char macs[12] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1};
	std::memcpy(p, macs, sizeof(macs));
	p[12] = 0x08;	// IPv4
	unsigned char *ip = p + 14;
	ip[0] = 0x45;
	const uint16_t tot = htons(uint16_t(20 + 8 + payload > 0xffff ? 0xffff : 20 + 8 + payload));
	std::memcpy(ip + 2, &tot, 2);
	ip[8] = 64;	// TTL
	ip[9] = 17;	// UDP
	const unsigned char addrs[8] = {192, 0, 2, 1, 192, 0, 2, 2};	// TEST-NET-1
	std::memcpy(ip + 12, addrs, sizeof(addrs));
	unsigned char *udp = ip + 20;
	const uint16_t sport = htons(40000), dport = htons(9), ulen = htons(uint16_t(8 + payload));
	std::memcpy(udp, &sport, 2);
	std::memcpy(udp + 2, &dport, 2);
	std::memcpy(udp + 4, &ulen, 2);
	for (size_t i = 0; i < payload; i++)
		udp[8 + i] = static_cast<unsigned char>(i);
	return f;
}

} // namespace

int main()
{
	using namespace xoffload;
	const std::vector<std::byte> in = udp4_super_packet(8000);

	GsoRequest req;
	req.type = GsoType::uso4;
	req.mss = 1500 - 20 - 8;	// the MTU less the IPv4 and UDP headers
	req.ntags = 1;
	req.tags[0].vid = 100;

	std::array<std::array<std::byte, 2048>, 16> bufs{};
	std::array<GsoFrame, 16> frames{};
	for (size_t i = 0; i < frames.size(); i++)
		frames[i] = GsoFrame{.data = bufs[i].data(), .cap = static_cast<uint32_t>(bufs[i].size())};

	GsoError why = GsoError::ok;
	const int n = gso_segment(in, req, frames, &why);
	if (n < 0) {
		std::fprintf(stderr, "consumer: gso_segment: %s (%s)\n", std::strerror(-n), to_string(why));
		return 1;
	}
	std::printf("libxoffload %s: %s of %zu bytes -> %d frames:", library_version(), to_string(req.type),
		    in.size(), n);
	for (int i = 0; i < n; i++)
		std::printf(" %u", frames[i].len);
	std::printf("\n");
	return 0;
}
