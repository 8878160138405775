// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Test and load traffic: one Ethernet (+ up to two VLAN tags) / IPv4 or
// IPv6 / UDP or TCP frame of an exact size, as `offload-tool send` emits it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "xoffload/core/result.hpp"

namespace xoffload {

struct FrameSpec {
	std::array<uint8_t, 6> dst_mac{}, src_mac{};
	std::vector<uint16_t> vids;	// outermost first; two = 802.1ad outer + 802.1Q inner
	bool ipv6 = false;
	std::array<uint8_t, 16> src_ip{}, dst_ip{};	// IPv4 in the first 4 bytes
	bool tcp = false;
	uint16_t src_port = 40001, dst_port = 40002;
	uint32_t size = 64;		// whole frame without FCS, tags included
	// Leave the L4 checksum as the pseudo-header sum for a TX-metadata
	// checksum request (csum_start/csum_offset tell where).
	bool csum_partial = false;
};

struct BuiltFrame {
	std::vector<std::byte> bytes;
	uint16_t csum_start = 0;	// L4 header offset
	uint16_t csum_offset = 0;	// checksum field offset within it
};

// Headers only, for the minimum size of a spec.
uint32_t frame_min_size(const FrameSpec &s) noexcept;
// IPv4 ID 1, DF, TTL/hop limit 64; TCP PSH|ACK seq 1 window 65535; payload
// bytes 0, 1, 2, ... (mod 256). Usage error when size is out of range.
Result<BuiltFrame> build_frame(const FrameSpec &s);

Result<std::array<uint8_t, 6>> parse_mac(std::string_view s);
// Sets ip (first 4 bytes for IPv4) and *v6.
Status parse_ip(std::string_view s, std::array<uint8_t, 16> &ip, bool *v6);
Result<std::vector<uint16_t>> parse_vids(std::string_view s);

} // namespace xoffload
