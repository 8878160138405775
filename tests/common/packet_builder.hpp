// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Fluent builder of test frames, and the one vocabulary of test addresses,
// MACs and ports shared by unit, BPF and integration tests and benchmarks.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

namespace xoffload::test {

using Bytes = std::vector<uint8_t>;
using Mac = std::array<uint8_t, 6>;
using Ip4 = std::array<uint8_t, 4>;
using Ip6 = std::array<uint8_t, 16>;

// Locally administered, so they never collide with a real NIC.
inline constexpr Mac kMacA{0x02, 0x00, 0x00, 0x00, 0x00, 0x0a};
inline constexpr Mac kMacB{0x02, 0x00, 0x00, 0x00, 0x00, 0x0b};
inline constexpr Mac kMacC{0x02, 0x00, 0x00, 0x00, 0x00, 0x0c};
inline constexpr Mac kMacBcast{0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

// 198.18.0.0/15 (RFC 2544 benchmarking) and 2001:db8::/32 (documentation).
inline constexpr Ip4 kIpA{198, 18, 0, 1};
inline constexpr Ip4 kIpB{198, 18, 0, 2};
inline constexpr Ip4 kIpC{198, 18, 0, 3};
inline constexpr Ip6 kIp6A{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01};
inline constexpr Ip6 kIp6B{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02};

inline constexpr uint16_t kPortA = 40001;
inline constexpr uint16_t kPortB = 40002;
inline constexpr uint16_t kPortC = 40003;
inline constexpr uint16_t kPortGeneve = 6081;

inline constexpr uint16_t kTpid8021Q = 0x8100;
inline constexpr uint16_t kTpid8021AD = 0x88a8;
inline constexpr uint16_t kEthIPv4 = 0x0800;
inline constexpr uint16_t kEthIPv6 = 0x86dd;
inline constexpr size_t kMacsLen = 12;	// where a VLAN tag goes
inline constexpr size_t kEthHdrLen = 14;
inline constexpr size_t kVlanHdrLen = 4;

// 802.1Q TCI: PCP (3 bits) | DEI (1 bit) | VID (12 bits).
constexpr uint16_t vlan_tci(uint16_t vid, uint8_t pcp = 0, bool dei = false)
{
	return static_cast<uint16_t>((pcp & 7) << 13 | (dei ? 1 : 0) << 12 | (vid & 0x0fff));
}

namespace detail {

inline void put16(Bytes &b, uint16_t v)
{
	b.push_back(static_cast<uint8_t>(v >> 8));
	b.push_back(static_cast<uint8_t>(v));
}

inline void set16(Bytes &b, size_t off, uint16_t v)
{
	b[off] = static_cast<uint8_t>(v >> 8);
	b[off + 1] = static_cast<uint8_t>(v);
}

inline uint32_t sum16(std::span<const uint8_t> d, uint32_t sum = 0)
{
	for (size_t i = 0; i + 1 < d.size(); i += 2)
		sum += static_cast<uint32_t>(d[i] << 8 | d[i + 1]);
	if (d.size() & 1)
		sum += static_cast<uint32_t>(d.back() << 8);
	return sum;
}

inline uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return static_cast<uint16_t>(~sum);
}

} // namespace detail

// RFC 1071 Internet checksum of @d (already complemented).
inline uint16_t inet_csum(std::span<const uint8_t> d)
{
	return detail::fold(detail::sum16(d));
}

// Builds a frame outermost layer first; lengths, ethertypes, the IPv4 header
// checksum and the UDP/TCP checksums are filled in by build(). Layers the
// caller leaves out are simply absent (eth().payload(4) is a valid frame).
class PacketBuilder {
public:
	PacketBuilder &eth(const Mac &dst, const Mac &src)
	{
		layers_.push_back({Kind::eth, {}, 0, 0, 0});
		Layer &l = layers_.back();
		l.hdr.assign(dst.begin(), dst.end());
		l.hdr.insert(l.hdr.end(), src.begin(), src.end());
		return *this;
	}
	// Overrides the ethertype the last eth() or vlan() layer carries, which
	// build() would otherwise derive from the layer that follows.
	PacketBuilder &ethertype(uint16_t type)
	{
		layers_.back().next_type = type;
		return *this;
	}
	PacketBuilder &vlan(uint16_t tpid, uint16_t vid, uint8_t pcp = 0, bool dei = false)
	{
		layers_.push_back({Kind::vlan, {}, tpid, 0, 0});
		detail::put16(layers_.back().hdr, vlan_tci(vid, pcp, dei));
		return *this;
	}
	PacketBuilder &ipv4(const Ip4 &src, const Ip4 &dst, uint8_t ttl = 64, uint16_t id = 1)
	{
		layers_.push_back({Kind::ipv4, {}, kEthIPv4, 0, 0});
		auto &h = layers_.back().hdr;
		h = {0x45, 0, 0, 0};	// version/IHL, DSCP, total length at build
		detail::put16(h, id);
		detail::put16(h, 0x4000);	// DF
		h.push_back(ttl);
		h.push_back(0);		// protocol at build
		detail::put16(h, 0);	// checksum at build
		h.insert(h.end(), src.begin(), src.end());
		h.insert(h.end(), dst.begin(), dst.end());
		return *this;
	}
	// Appends IPv4 options (a multiple of 4 bytes) to the last ipv4() layer.
	PacketBuilder &ip_options(std::initializer_list<uint8_t> opts)
	{
		auto &h = layers_.back().hdr;
		h.insert(h.end(), opts.begin(), opts.end());
		h[0] = static_cast<uint8_t>(0x40 | h.size() / 4);
		return *this;
	}
	// Appends TCP options (a multiple of 4 bytes) to the last tcp() layer.
	PacketBuilder &tcp_options(std::initializer_list<uint8_t> opts)
	{
		auto &h = layers_.back().hdr;
		h.insert(h.end(), opts.begin(), opts.end());
		h[12] = static_cast<uint8_t>((h.size() / 4) << 4);
		return *this;
	}
	// An IPv6 extension header (0 hop-by-hop, 43 routing, 60 destination
	// options) carrying @body (6 + 8k bytes: next header and length are added).
	PacketBuilder &ipv6_ext(uint8_t type, std::initializer_list<uint8_t> body)
	{
		layers_.push_back({Kind::ip6ext, {0, 0}, 0, type, 0});
		auto &h = layers_.back().hdr;
		h.insert(h.end(), body.begin(), body.end());
		h[1] = static_cast<uint8_t>(h.size() / 8 - 1);
		return *this;
	}
	PacketBuilder &ipv6(const Ip6 &src, const Ip6 &dst, uint8_t hop_limit = 64)
	{
		layers_.push_back({Kind::ipv6, {}, kEthIPv6, 0, 0});
		auto &h = layers_.back().hdr;
		h = {0x60, 0, 0, 0, 0, 0, 0, hop_limit};	// length, next header at build
		h.insert(h.end(), src.begin(), src.end());
		h.insert(h.end(), dst.begin(), dst.end());
		return *this;
	}
	PacketBuilder &udp(uint16_t sport, uint16_t dport)
	{
		layers_.push_back({Kind::udp, {}, 0, 17, 0});
		auto &h = layers_.back().hdr;
		detail::put16(h, sport);
		detail::put16(h, dport);
		detail::put16(h, 0);	// length at build
		detail::put16(h, 0);	// checksum at build
		return *this;
	}
	PacketBuilder &tcp(uint16_t sport, uint16_t dport, uint8_t flags = 0x18 /* PSH|ACK */,
			   uint32_t seq = 1)
	{
		layers_.push_back({Kind::tcp, {}, 0, 6, 0});
		auto &h = layers_.back().hdr;
		detail::put16(h, sport);
		detail::put16(h, dport);
		detail::put16(h, static_cast<uint16_t>(seq >> 16));
		detail::put16(h, static_cast<uint16_t>(seq));
		detail::put16(h, 0);	// ack
		detail::put16(h, 0);
		h.push_back(5 << 4);	// data offset: 20 bytes
		h.push_back(flags);
		detail::put16(h, 65535);	// window
		detail::put16(h, 0);	// checksum at build
		detail::put16(h, 0);	// urgent pointer
		return *this;
	}
	// @n bytes of a recognisable pattern (seed, seed+1, ...), so a shifted or
	// truncated payload shows in a diff.
	PacketBuilder &payload(size_t n, uint8_t seed = 0)
	{
		layers_.push_back({Kind::payload, {}, 0, 0, 0});
		for (size_t i = 0; i < n; i++)
			layers_.back().hdr.push_back(static_cast<uint8_t>(seed + i));
		return *this;
	}
	PacketBuilder &payload(std::span<const uint8_t> bytes)
	{
		layers_.push_back({Kind::payload, {bytes.begin(), bytes.end()}, 0, 0, 0});
		return *this;
	}

	Bytes build() const
	{
		Bytes out;
		std::vector<size_t> off(layers_.size());

		for (size_t i = 0; i < layers_.size(); i++) {
			const Layer &l = layers_[i];
			off[i] = out.size();
			out.insert(out.end(), l.hdr.begin(), l.hdr.end());
			// eth and vlan end with the type field naming the next layer
			if (l.kind == Kind::eth || l.kind == Kind::vlan)
				detail::put16(out, l.next_type ? l.next_type : derived_type(i));
		}
		for (size_t i = layers_.size(); i-- > 0;)
			fixup(out, off, i);
		return out;
	}

private:
	enum class Kind { eth, vlan, ipv4, ipv6, ip6ext, udp, tcp, payload };
	struct Layer {
		Kind kind;
		Bytes hdr;		// eth/vlan: without their trailing type field
		uint16_t self_type;	// vlan: its TPID; ipv4/ipv6: its ethertype
		uint8_t proto;		// udp/tcp: IP protocol number
		uint16_t next_type;	// eth/vlan: ethertype() override, 0 = derive
	};

	// The type field written in front of layer i + 1 (a tag's TPID is
	// written by the layer before it, as on the wire).
	uint16_t derived_type(size_t i) const
	{
		if (i + 1 < layers_.size() && layers_[i + 1].self_type)
			return layers_[i + 1].self_type;
		return 0x88b5;	// IEEE local experimental: no known layer follows
	}

	uint8_t next_proto(size_t i) const
	{
		// hop-by-hop is protocol 0: an extension header always names itself
		if (i + 1 < layers_.size() && (layers_[i + 1].proto || layers_[i + 1].kind == Kind::ip6ext))
			return layers_[i + 1].proto;
		return 253;	// RFC 3692 experimental
	}

	void fixup(Bytes &out, const std::vector<size_t> &off, size_t i) const
	{
		const Layer &l = layers_[i];
		size_t o = off[i];
		size_t len = out.size() - o;

		switch (l.kind) {
		case Kind::ipv4: {
			detail::set16(out, o + 2, static_cast<uint16_t>(len));
			out[o + 9] = next_proto(i);
			detail::set16(out, o + 10, 0);
			detail::set16(out, o + 10, inet_csum({out.data() + o, l.hdr.size()}));
			break;
		}
		case Kind::ip6ext:
			out[o] = next_proto(i);
			break;
		case Kind::ipv6:
			detail::set16(out, o + 4, static_cast<uint16_t>(len - 40));
			out[o + 6] = next_proto(i);
			break;
		case Kind::udp:
			detail::set16(out, o + 4, static_cast<uint16_t>(len));
			[[fallthrough]];
		case Kind::tcp:
			l4_csum(out, off, i, l.kind == Kind::udp ? o + 6 : o + 16);
			break;
		default:
			break;
		}
	}

	// Pseudo-header checksum over the enclosing IP layer, if there is one.
	void l4_csum(Bytes &out, const std::vector<size_t> &off, size_t i, size_t csum_at) const
	{
		size_t ipi = i;
		while (ipi > 0 && layers_[ipi - 1].kind == Kind::ip6ext)
			ipi--;
		if (ipi == 0)
			return;
		const Layer &ip = layers_[ipi - 1];
		size_t ipo = off[ipi - 1], o = off[i], len = out.size() - o;
		uint32_t sum = 0;

		if (ip.kind == Kind::ipv4)
			sum = detail::sum16({out.data() + ipo + 12, 8});
		else if (ip.kind == Kind::ipv6)
			sum = detail::sum16({out.data() + ipo + 8, 32});
		else
			return;
		sum += layers_[i].proto;
		sum += static_cast<uint32_t>(len);
		detail::set16(out, csum_at, 0);
		uint16_t c = detail::fold(detail::sum16({out.data() + o, len}, sum));
		if (c == 0 && layers_[i].kind == Kind::udp)
			c = 0xffff;	// 0 means "no checksum" for UDP
		detail::set16(out, csum_at, c);
	}

	std::vector<Layer> layers_;
};

// A copy of @frame with the tag (@tpid, @tci) inserted after the MAC
// addresses: what a driver does when it puts a metadata (hw-accel) tag back
// on the wire.
inline Bytes insert_vlan(std::span<const uint8_t> frame, uint16_t tpid, uint16_t tci)
{
	Bytes out(frame.begin(), frame.end());
	if (out.size() < kMacsLen)
		return out;
	const uint8_t tag[4] = {static_cast<uint8_t>(tpid >> 8), static_cast<uint8_t>(tpid),
				static_cast<uint8_t>(tci >> 8), static_cast<uint8_t>(tci)};
	out.insert(out.begin() + kMacsLen, std::begin(tag), std::end(tag));
	return out;
}

// A copy of @frame without the @n tags that follow the MAC addresses.
inline Bytes remove_vlans(std::span<const uint8_t> frame, size_t n = 1)
{
	Bytes out(frame.begin(), frame.end());
	size_t len = n * kVlanHdrLen;
	if (out.size() >= kMacsLen + len)
		out.erase(out.begin() + kMacsLen, out.begin() + kMacsLen + len);
	return out;
}

// The first @n bytes of @frame.
inline Bytes truncated(std::span<const uint8_t> frame, size_t n)
{
	return Bytes(frame.begin(), frame.begin() + std::min(n, frame.size()));
}

// "0000  02 00 00 ..." lines, 16 bytes each, for assertion messages.
inline std::string hexdump(std::span<const uint8_t> d)
{
	std::string s;
	char buf[32];

	for (size_t i = 0; i < d.size(); i++) {
		if (i % 16 == 0) {
			std::snprintf(buf, sizeof(buf), "%s%04zx ", i ? "\n" : "", i);
			s += buf;
		}
		std::snprintf(buf, sizeof(buf), " %02x", d[i]);
		s += buf;
	}
	return s;
}

} // namespace xoffload::test
