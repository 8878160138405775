// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Frame construction for the traffic generator.
#include "xoffload/xsk/traffic.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>
#include <string>

namespace xoffload {

namespace {

void put16(std::vector<std::byte> &b, size_t off, uint16_t v)
{
	b[off] = std::byte(v >> 8);
	b[off + 1] = std::byte(v & 0xff);
}

uint32_t sum16(const std::byte *p, size_t n, uint32_t sum = 0)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += static_cast<uint32_t>(std::to_integer<uint32_t>(p[i]) << 8 | std::to_integer<uint32_t>(p[i + 1]));
	if (n & 1)
		sum += std::to_integer<uint32_t>(p[n - 1]) << 8;
	return sum;
}

uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return static_cast<uint16_t>(sum);
}

} // namespace

uint32_t frame_min_size(const FrameSpec &s) noexcept
{
	return static_cast<uint32_t>(14 + 4 * s.vids.size() + (s.ipv6 ? 40 : 20) + (s.tcp ? 20 : 8));
}

Result<BuiltFrame> build_frame(const FrameSpec &s)
{
	if (s.vids.size() > 2)
		return usage_error("at most two VLAN tags");
	const uint32_t min = frame_min_size(s);
	const uint32_t max = 65535 + 14 + 8;
	if (s.size < min)
		return usage_error("frame size " + std::to_string(s.size) + " is below the " + std::to_string(min) +
				   " bytes of headers");
	if (s.size > max)
		return usage_error("frame size " + std::to_string(s.size) + " too large");
	BuiltFrame f;
	auto &b = f.bytes;
	b.assign(s.size, std::byte{0});
	size_t o = 0;
	std::memcpy(&b[0], s.dst_mac.data(), 6);
	std::memcpy(&b[6], s.src_mac.data(), 6);
	o = 12;
	for (size_t i = 0; i < s.vids.size(); i++) {
		uint16_t tpid = (s.vids.size() == 2 && i == 0) ? 0x88a8 : 0x8100;
		put16(b, o, tpid);
		put16(b, o + 2, s.vids[i] & 0x0fff);
		o += 4;
	}
	put16(b, o, s.ipv6 ? 0x86dd : 0x0800);
	o += 2;
	const size_t l3 = o;
	const size_t l3len = s.size - l3;
	const uint8_t proto = s.tcp ? 6 : 17;
	size_t l4;
	if (s.ipv6) {
		b[l3] = std::byte{0x60};
		put16(b, l3 + 4, static_cast<uint16_t>(l3len - 40));
		b[l3 + 6] = std::byte{proto};
		b[l3 + 7] = std::byte{64};
		std::memcpy(&b[l3 + 8], s.src_ip.data(), 16);
		std::memcpy(&b[l3 + 24], s.dst_ip.data(), 16);
		l4 = l3 + 40;
	} else {
		b[l3] = std::byte{0x45};
		put16(b, l3 + 2, static_cast<uint16_t>(l3len));
		put16(b, l3 + 4, 1);
		put16(b, l3 + 6, 0x4000);
		b[l3 + 8] = std::byte{64};
		b[l3 + 9] = std::byte{proto};
		std::memcpy(&b[l3 + 12], s.src_ip.data(), 4);
		std::memcpy(&b[l3 + 16], s.dst_ip.data(), 4);
		put16(b, l3 + 10, static_cast<uint16_t>(~fold(sum16(&b[l3], 20))));
		l4 = l3 + 20;
	}
	const size_t l4len = s.size - l4;
	put16(b, l4, s.src_port);
	put16(b, l4 + 2, s.dst_port);
	size_t csum_at;
	size_t payload;
	if (s.tcp) {
		put16(b, l4 + 6, 1);	// seq 1
		b[l4 + 12] = std::byte{5 << 4};
		b[l4 + 13] = std::byte{0x18};
		put16(b, l4 + 14, 65535);
		csum_at = 16;
		payload = l4 + 20;
	} else {
		put16(b, l4 + 4, static_cast<uint16_t>(l4len));
		csum_at = 6;
		payload = l4 + 8;
	}
	for (size_t i = payload; i < s.size; i++)
		b[i] = std::byte(static_cast<uint8_t>(i - payload));
	// Pseudo-header: addresses, protocol, L4 length.
	uint32_t ph = s.ipv6 ? sum16(&b[l3 + 8], 32) : sum16(&b[l3 + 12], 8);
	ph += proto;
	ph += static_cast<uint32_t>(l4len & 0xffff) + static_cast<uint32_t>(l4len >> 16);
	if (s.csum_partial) {
		put16(b, l4 + csum_at, fold(ph));
	} else {
		uint16_t c = static_cast<uint16_t>(~fold(sum16(&b[l4], l4len, ph)));
		if (!s.tcp && c == 0)
			c = 0xffff;	// RFC 768: zero means "no checksum"
		put16(b, l4 + csum_at, c);
	}
	f.csum_start = static_cast<uint16_t>(l4);
	f.csum_offset = static_cast<uint16_t>(csum_at);
	return f;
}

Result<std::array<uint8_t, 6>> parse_mac(std::string_view s)
{
	std::array<uint8_t, 6> m{};
	std::string str(s);
	unsigned v[6];
	char tail;
	if (std::sscanf(str.c_str(), "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
		return usage_error("invalid MAC address '" + str + "'");
	for (int i = 0; i < 6; i++) {
		if (v[i] > 255)
			return usage_error("invalid MAC address '" + str + "'");
		m[i] = static_cast<uint8_t>(v[i]);
	}
	return m;
}

Status parse_ip(std::string_view s, std::array<uint8_t, 16> &ip, bool *v6)
{
	std::string str(s);
	ip = {};
	if (inet_pton(AF_INET, str.c_str(), ip.data()) == 1) {
		*v6 = false;
		return ok();
	}
	if (inet_pton(AF_INET6, str.c_str(), ip.data()) == 1) {
		*v6 = true;
		return ok();
	}
	return usage_error("invalid IP address '" + str + "'");
}

Result<std::vector<uint16_t>> parse_vids(std::string_view s)
{
	std::vector<uint16_t> out;
	while (!s.empty()) {
		size_t comma = s.find(',');
		std::string_view t = s.substr(0, comma);
		unsigned v = 0;
		auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
		if (ec != std::errc() || p != t.data() + t.size() || v < 1 || v > 4094)
			return usage_error("invalid VLAN id '" + std::string(t) + "' (1..4094)");
		out.push_back(static_cast<uint16_t>(v));
		if (comma == std::string_view::npos)
			break;
		s.remove_prefix(comma + 1);
	}
	if (out.empty() || out.size() > 2)
		return usage_error("--vlan takes one or two VLAN ids (outer,inner)");
	return out;
}

} // namespace xoffload
