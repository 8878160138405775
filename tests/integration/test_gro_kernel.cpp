// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Differential test of the GRO engine against the Linux kernel's own GRO:
// the same frames are injected into a veth whose peer runs NAPI GRO, the
// packets the kernel builds are captured after GRO on the peer (packet
// sockets: the bytes, and with PACKET_VNET_HDR the virtio_net_hdr that says
// gso_type/gso_size/checksum state), and compared packet by packet with what
// the engine makes of the same frames (GroCsumOut::partial, the kernel's
// tcp_gro_complete/udp_gro_complete checksum field).
//
// What makes a veth GRO (drivers/net/veth.c), on 6.1 to 6.18:
//  - `ethtool -K <rx> gro on` gives the receiving veth its NAPI instance
//    (veth_set_features -> veth_napi_enable; GRO is off by default since
//    5.13); an XDP program on it would too, and changes nothing else here;
//  - the sending veth's TSO off: veth_xmit() hands an skb to NAPI only when
//    veth_skb_is_eligible_for_gro() (TSO off on the sender, or a socket's
//    skb and rx-udp-gro-forwarding/rx-gro-list on the receiver; since 6.8
//    also any skb when an XDP program is attached);
//  - UDP: `ethtool -K <rx> rx-udp-gro-forwarding on` (NETIF_F_GRO_UDP_FWD,
//    5.12): udp_gro_receive() merges datagrams with no local socket only
//    then (rx-gro-list would build frag_list skbs, SKB_GSO_FRAGLIST, which
//    a packet socket cannot describe in a virtio_net_hdr);
//  - batching: frames sent one by one are polled one by one (the NAPI poll
//    runs at the sender's local_bh_enable) and napi_complete_done() flushes
//    GRO after each. gro_flush_timeout (20 ms) with napi_defer_hard_irqs 1
//    keeps the NAPI scheduled: the first frame is held, the others wait in
//    the veth ring until the timer polls them all at once. The frames go in
//    one sendmmsg() so that no jiffy passes between them.
//
// Known differences, each checked where it shows (see docs/guide-recv.md,
// "Compared with the kernel"):
//  - IPv4 ID fixed without DF: kernels with "net: gro: remove unnecessary df
//    checks" (6.18; include/net/gro.h inet_gro_flush()) merge it, 6.1
//    (net/ipv4/af_inet.c inet_gro_receive(), is_atomic needs DF) and 6.12
//    (inet_gro_flush(), ip_fixedid needs DF) do not; the engine follows 6.1
//    and 6.12 (gro.hpp: "fixed with DF").
//  - UDP and the IPv4 ID: 6.1 checks the ID in tcp_gro_receive() only
//    (flush_id), 6.10+ also for UDP (udp_gro_receive_segment() ->
//    gro_receive_network_flush()).
//  - VLAN: vlan_gro_receive() is net/8021q/vlan_core.c, built only with
//    CONFIG_VLAN_8021Q (y or m; Debian: m): without it the kernel merges no
//    tagged frame, and the case is skipped with that reason.
//  - Before 6.2 virtio_net_hdr_from_skb() knows no VIRTIO_NET_HDR_GSO_UDP_L4
//    and a PACKET_VNET_HDR socket drops merged UDP packets: their bytes are
//    compared (from the plain socket), their gso_size is not.
//  - Fragments are not GRO's: ip_defrag()/ipv6_frag_rcv() reassemble them on
//    local delivery; GroVsKernelFrag compares what a raw socket receives.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <ostream>
#include <thread>

#include "gso_check.hpp"
#include "packet_builder.hpp"
#include "packet_socket.hpp"
#include "testbed.hpp"
#include "xoffload/core/fd.hpp"
#include "xoffload/core/kernel.hpp"
#include "xoffload/gro/gro.hpp"
#include "xoffload/gso/gso.hpp"

namespace xoffload::test {
namespace {

using xo_test::be16;
using xo_test::be32;
using xo_test::FrameView;
using xo_test::parse_frame;

// How long the receiving NAPI holds GRO packets (gro_flush_timeout: 20 ms,
// stretched by XO_TIMEOUT_SCALE under emulation, where the sendmmsg() of a
// run can outlast 20 ms and the first frame then went out alone), and how
// long a capture waits after the last packet (well past that timeout).
std::string flush_timeout_ns()
{
	return std::to_string(static_cast<long long>(20e6 * timeout_scale()));
}
const auto kQuiet = std::chrono::milliseconds(std::max(300, static_cast<int>(80 * timeout_scale())));
constexpr auto kCaptureCap = std::chrono::seconds(5);

// A packet as a receiver describes it: bytes from the Ethernet header (tags
// in the frame), and what a virtio_net_hdr says of it.
struct Pkt {
	Bytes bytes;
	bool meta = false;	// gso/csum fields known (a kernel packet the vnet socket dropped: not)
	uint8_t gso_type = kVnetGsoNone;
	uint16_t gso_size = 0;
	uint8_t csum = 0;	// kVnetNeedsCsum, kVnetDataValid or 0
	uint16_t csum_start = 0, csum_offset = 0;
	unsigned segs = 1;	// frames in it
};

// All frames in one sendmmsg() (bounded retries for a partial send).
std::string send_all(int fd, const std::vector<Bytes> &frames)
{
	std::vector<iovec> iov(frames.size());
	std::vector<mmsghdr> msgs(frames.size());
	for (size_t i = 0; i < frames.size(); i++) {
		iov[i] = {const_cast<uint8_t *>(frames[i].data()), frames[i].size()};
		msgs[i] = {};
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	size_t done = 0;
	for (int tries = 0; done < frames.size() && tries < 100; tries++) {
		int n = sendmmsg(fd, msgs.data() + done, static_cast<unsigned>(frames.size() - done), 0);
		if (n < 0)
			return std::string("sendmmsg: ") + strerror(errno);
		done += static_cast<size_t>(n);
	}
	return done == frames.size() ? "" : "sendmmsg sent " + std::to_string(done) + " of " +
						     std::to_string(frames.size());
}

bool from_a(const uint8_t *f, size_t len)
{
	return len >= 12 && !std::memcmp(f + 6, kMacA.data(), 6);
}

// Everything from A that reaches the two sockets on B, until kQuiet passes
// without a packet: the plain socket's bytes (a tag the stack moved into
// the skb put back, PACKET_AUXDATA), paired in order with the vnet socket's
// header when it has the same packet.
std::vector<Pkt> capture(int plain, int vnet)
{
	std::vector<Bytes> raw;			// as the plain socket read them (no tag)
	std::vector<std::pair<uint16_t, uint16_t>> tag;	// tpid, tci; tpid 0: none
	std::vector<std::pair<VnetHdr, Bytes>> vh;
	Bytes buf(70000);
	auto start = std::chrono::steady_clock::now();
	auto last = start;
	while (std::chrono::steady_clock::now() - last < kQuiet && std::chrono::steady_clock::now() - start < kCaptureCap) {
		pollfd p[2] = {{plain, POLLIN, 0}, {vnet, POLLIN, 0}};
		if (poll(p, 2, 20) <= 0)
			continue;
		if (p[0].revents & POLLIN) {
			alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof(tpacket_auxdata))];
			iovec io{buf.data(), buf.size()};
			msghdr m{};
			m.msg_iov = &io;
			m.msg_iovlen = 1;
			m.msg_control = ctl;
			m.msg_controllen = sizeof(ctl);
			ssize_t n = recvmsg(plain, &m, MSG_DONTWAIT);
			if (n > 0 && from_a(buf.data(), size_t(n))) {
				std::pair<uint16_t, uint16_t> t{0, 0};
				for (cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
					if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA)
						continue;
					tpacket_auxdata a;
					std::memcpy(&a, CMSG_DATA(c), sizeof(a));
					if (a.tp_status & TP_STATUS_VLAN_VALID)
						t = {a.tp_status & TP_STATUS_VLAN_TPID_VALID ? a.tp_vlan_tpid
											    : uint16_t{ETH_P_8021Q},
						     a.tp_vlan_tci};
				}
				raw.emplace_back(buf.begin(), buf.begin() + n);
				tag.push_back(t);
				last = std::chrono::steady_clock::now();
			}
		}
		if (p[1].revents & POLLIN) {
			ssize_t n = ::recv(vnet, buf.data(), buf.size(), MSG_DONTWAIT);
			if (n > ssize_t(sizeof(VnetHdr)) && from_a(buf.data() + sizeof(VnetHdr), size_t(n) - sizeof(VnetHdr))) {
				VnetHdr h;
				std::memcpy(&h, buf.data(), sizeof(h));
				vh.emplace_back(h, Bytes(buf.begin() + sizeof(VnetHdr), buf.begin() + n));
				last = std::chrono::steady_clock::now();
			}
		}
	}
	std::vector<Pkt> out;
	size_t j = 0;
	for (size_t i = 0; i < raw.size(); i++) {
		Pkt k;
		k.bytes = tag[i].first ? insert_vlan(raw[i], tag[i].first, tag[i].second) : raw[i];
		size_t shift = tag[i].first ? kVlanHdrLen : 0;
		if (j < vh.size() && vh[j].second == raw[i]) {
			const VnetHdr &h = vh[j++].first;
			k.meta = true;
			k.gso_type = h.gso_type;
			k.gso_size = h.gso_size;
			k.csum = h.flags & (kVnetNeedsCsum | kVnetDataValid);
			if (h.flags & kVnetNeedsCsum) {
				k.csum_start = static_cast<uint16_t>(h.csum_start + shift);
				k.csum_offset = h.csum_offset;
			}
		}
		out.push_back(std::move(k));
	}
	return out;
}

// Payload bytes after the L4 header (TCP: data offset; UDP: 8), 0 if not TCP/UDP.
size_t l4_payload(const Bytes &b)
{
	FrameView v;
	if (!parse_frame(b.data(), b.size(), 0, v).empty() || v.is_frag)
		return 0;
	if (v.proto == 6 && b.size() >= v.l4 + 20)
		return b.size() - v.l4 - size_t(b[v.l4 + 12] >> 4) * 4;
	if (v.proto == 17 && b.size() >= v.l4 + 8)
		return b.size() - v.l4 - 8;
	return 0;
}

// The kernel's segment count of a packet: its gso_size says how the
// payload divides; without a vnet header (dropped by the vnet socket) the
// case's segment size does.
void count_segs(Pkt &k, size_t case_mss)
{
	size_t pl = l4_payload(k.bytes);
	size_t mss = k.meta ? k.gso_size : (pl > case_mss ? case_mss : 0);
	k.segs = mss ? static_cast<unsigned>((pl + mss - 1) / mss) : 1;
}

uint8_t vnet_gso(GsoType t)
{
	switch (t) {
	case GsoType::tso4:
		return kVnetGsoTcp4;
	case GsoType::tso6:
		return kVnetGsoTcp6;
	case GsoType::uso4:
	case GsoType::uso6:
		return kVnetGsoUdpL4;
	default:
		return kVnetGsoNone;
	}
}

// The engine on the same frames, one receive() and a flush(), the kernel's
// checksum convention.
std::vector<Pkt> engine_run(const std::vector<Bytes> &frames, const GroKinds &kinds, std::string *why,
			    GroStats *stats = nullptr)
{
	GroConfig cfg;
	cfg.kinds = kinds;
	cfg.verify_csum = true;
	cfg.csum_out = GroCsumOut::partial;
	std::unique_ptr<GroEngine> eng;
	if (int err = GroEngine::create(cfg, &eng); err < 0) {
		*why = std::string("GroEngine::create: ") + strerror(-err);
		return {};
	}
	std::vector<GroFrame> in;
	for (const Bytes &f : frames)
		in.push_back(GroFrame{std::as_bytes(std::span<const uint8_t>(f)), {}});
	std::vector<Pkt> out;
	auto take = [&out](const GroPacket &p) noexcept {
		Pkt k;
		auto *d = reinterpret_cast<const uint8_t *>(p.data.data());
		k.bytes.assign(d, d + p.data.size());
		k.meta = true;
		k.gso_type = vnet_gso(p.gso_type);
		k.gso_size = p.segs > 1 ? p.gso_size : 0;
		k.csum = p.csum == GroCsum::partial ? kVnetNeedsCsum : p.csum == GroCsum::unnecessary ? kVnetDataValid : 0;
		if (p.csum == GroCsum::partial) {
			k.csum_start = p.csum_start;
			k.csum_offset = p.csum_offset;
		}
		k.segs = p.segs;
		out.push_back(std::move(k));
	};
	std::vector<GroVerdict> verdicts(in.size());
	int n = eng->receive(in, 0, verdicts, gro_sink(take));
	if (n < 0) {
		*why = std::string("GroEngine::receive: ") + strerror(-n);
		return {};
	}
	eng->flush(gro_sink(take));
	if (stats)
		*stats = eng->stats();
	return out;
}

std::string describe(const Pkt &k)
{
	char b[160];
	std::snprintf(b, sizeof(b), "%zu B, %u seg%s", k.bytes.size(), k.segs, k.segs == 1 ? "" : "s");
	std::string s = b;
	if (!k.meta)
		return s + ", no vnet header";
	std::snprintf(b, sizeof(b), ", gso_type %u gso_size %u, csum %s", k.gso_type, k.gso_size,
		      k.csum == kVnetNeedsCsum ? "partial" : k.csum == kVnetDataValid ? "valid" : "none");
	s += b;
	if (k.csum == kVnetNeedsCsum)
		s += " start " + std::to_string(k.csum_start) + " offset " + std::to_string(k.csum_offset);
	return s;
}

std::string describe(const std::vector<Pkt> &v)
{
	std::string s;
	for (size_t i = 0; i < v.size(); i++)
		s += "\n    [" + std::to_string(i) + "] " + describe(v[i]);
	return s.empty() ? "\n    (nothing)" : s;
}

std::vector<unsigned> grouping(const std::vector<Pkt> &v)
{
	std::vector<unsigned> g;
	for (const Pkt &k : v)
		g.push_back(k.segs);
	return g;
}

std::string groups_str(const std::vector<unsigned> &g)
{
	std::string s = "{";
	for (size_t i = 0; i < g.size(); i++)
		s += (i ? "," : "") + std::to_string(g[i]);
	return s + "}";
}

// "" when a and b are the same packet (bytes, and the header fields where
// both sides know them), else the first difference.
std::string same(const Pkt &kern, const Pkt &ours)
{
	if (kern.bytes != ours.bytes) {
		size_t i = 0;
		while (i < kern.bytes.size() && i < ours.bytes.size() && kern.bytes[i] == ours.bytes[i])
			i++;
		size_t from = i & ~size_t(15);
		auto window = [from](const Bytes &b) {
			return hexdump(std::span<const uint8_t>(b).subspan(std::min(from, b.size()),
									   std::min<size_t>(48, b.size() - std::min(from, b.size()))));
		};
		return "bytes differ at offset " + std::to_string(i) + " (from " + std::to_string(from) +
		       "):\n  kernel " + window(kern.bytes) + "\n  ours   " + window(ours.bytes);
	}
	if (!kern.meta)
		return "";
	if (kern.gso_type != ours.gso_type || kern.gso_size != ours.gso_size)
		return "gso: kernel " + describe(kern) + ", ours " + describe(ours);
	if (kern.csum != ours.csum || kern.csum_start != ours.csum_start || kern.csum_offset != ours.csum_offset)
		return "checksum state: kernel " + describe(kern) + ", ours " + describe(ours);
	return "";
}

// A difference the kernel sources explain: when the kernel's packets are
// grouped as kernel_segs and ours as ours_segs (each of ours then equal to
// the frame or run it was made of), the case passes as documented.
struct KnownDiff {
	std::vector<unsigned> kernel_segs, ours_segs;
	const char *why;	// the kernel file/function and version behind it
};

struct Case {
	const char *name;
	std::vector<Bytes> frames;
	GroKinds kinds;
	size_t mss;		// payload of a full segment (for a packet the vnet socket dropped)
	std::vector<KnownDiff> known;
	bool vlan = false;	// needs the kernel's VLAN GRO
	bool udp = false;	// needs the kernel's UDP GRO (rx-udp-gro-forwarding)
};

void PrintTo(const Case &c, std::ostream *os)
{
	*os << c.name << ": " << c.frames.size() << " frames";
}

// ---- frames ----

constexpr uint32_t kSeq0 = 0x20000000;

struct Seg {
	size_t len = 1448;
	uint8_t flags = 0x10;	// ACK
	uint16_t ipid = 0;	// 0: 0x100 + index (incrementing)
	bool df = true;
	uint8_t ttl = 64;
	uint8_t tos = 0;
	uint32_t tsval = 0x1000;
	bool sack = false;	// NOP NOP SACK(1 block) instead of the timestamp: another option, same length
	uint16_t sport = kPortA;
	uint16_t vlan = 0;	// 802.1Q VID, 0: untagged
	bool bad_csum = false;
	uint32_t flow_label = 0;
};

void ipv4_fix(Bytes &b, size_t l3)
{
	b[l3 + 10] = b[l3 + 11] = 0;
	uint16_t c = inet_csum(std::span<const uint8_t>(b).subspan(l3, 20));
	b[l3 + 10] = static_cast<uint8_t>(c >> 8);
	b[l3 + 11] = static_cast<uint8_t>(c);
}

// One TCP segment at @seq, the @index-th of its flow (its default IPv4 ID).
Bytes tcp_seg(bool v6, uint32_t seq, const Seg &s, size_t index)
{
	PacketBuilder b;
	b.eth(kMacB, kMacA);
	if (s.vlan)
		b.vlan(kTpid8021Q, s.vlan);
	if (v6)
		b.ipv6(kIp6A, kIp6B, s.ttl);
	else
		b.ipv4(kIpA, kIpB, s.ttl, s.ipid ? s.ipid : static_cast<uint16_t>(0x100 + index));
	b.tcp(s.sport, kPortB, s.flags, seq);
	if (s.sack)
		b.tcp_options({0x01, 0x01, 0x05, 0x0a, 0x20, 0, 0, 0, 0x20, 0, 0x10, 0});
	else
		b.tcp_options({0x01, 0x01, 0x08, 0x0a, static_cast<uint8_t>(s.tsval >> 24), static_cast<uint8_t>(s.tsval >> 16),
			       static_cast<uint8_t>(s.tsval >> 8), static_cast<uint8_t>(s.tsval), 0, 0, 0x20, 0});
	Bytes f = b.payload(s.len, static_cast<uint8_t>(seq)).build();
	size_t l3 = kEthHdrLen + (s.vlan ? kVlanHdrLen : 0);
	if (!v6 && (!s.df || s.tos)) {
		if (!s.df)
			f[l3 + 6] &= 0xbf;
		f[l3 + 1] = s.tos;
		ipv4_fix(f, l3);
	}
	if (v6 && (s.tos || s.flow_label)) {
		// traffic class and flow label are not in the pseudo-header
		uint32_t w = 0x60000000u | uint32_t{s.tos} << 20 | (s.flow_label & 0xfffff);
		f[l3] = static_cast<uint8_t>(w >> 24);
		f[l3 + 1] = static_cast<uint8_t>(w >> 16);
		f[l3 + 2] = static_cast<uint8_t>(w >> 8);
		f[l3 + 3] = static_cast<uint8_t>(w);
	}
	if (s.bad_csum)
		f[l3 + (v6 ? 40 : 20) + 16] ^= 0x5a;
	return f;
}

// A flow of segments: each Seg's length advances the sequence.
std::vector<Bytes> tcp_flow(bool v6, const std::vector<Seg> &segs, const std::vector<size_t> &order = {})
{
	std::vector<Bytes> in;
	uint32_t seq = kSeq0;
	for (size_t i = 0; i < segs.size(); i++) {
		in.push_back(tcp_seg(v6, seq, segs[i], i));
		seq += static_cast<uint32_t>(segs[i].len);
	}
	if (order.empty())
		return in;
	std::vector<Bytes> out;
	for (size_t i : order)
		out.push_back(in.at(i));
	return out;
}

std::vector<Seg> run(size_t n, const std::function<void(size_t, Seg &)> &edit = {}, size_t len = 1448)
{
	std::vector<Seg> v(n);
	for (size_t i = 0; i < n; i++) {
		v[i].len = len;
		if (edit)
			edit(i, v[i]);
	}
	return v;
}

Bytes udp_dgram(bool v6, size_t len, uint16_t ipid, uint8_t seed, uint16_t sport = kPortA)
{
	PacketBuilder b;
	b.eth(kMacB, kMacA);
	if (v6)
		b.ipv6(kIp6A, kIp6B);
	else
		b.ipv4(kIpA, kIpB, 64, ipid);
	return b.udp(sport, kPortB).payload(len, seed).build();
}

std::vector<Bytes> udp_run(bool v6, const std::vector<size_t> &lens, uint16_t id_step = 1)
{
	std::vector<Bytes> v;
	for (size_t i = 0; i < lens.size(); i++)
		v.push_back(udp_dgram(v6, lens[i], static_cast<uint16_t>(0x300 + i * id_step), static_cast<uint8_t>(i * 7)));
	return v;
}

const GroKinds kTcp{true, false, false, false};
const GroKinds kUdp{false, true, false, false};

std::vector<Case> cases()
{
	std::vector<Case> c;
	// in-order runs
	c.push_back({"tcp4_run", tcp_flow(false, run(8)), kTcp, 1448, {}});
	c.push_back({"tcp6_run", tcp_flow(true, run(8, {}, 1428)), kTcp, 1428, {}});
	// 64 KB: 45 segments of 1448 (65,212 bytes of IPv4 packet) fit, the 46th does not
	c.push_back({"tcp4_64k", tcp_flow(false, run(50)), kTcp, 1448, {}});
	c.push_back({"tcp4_last_short", tcp_flow(false, run(6, [](size_t i, Seg &s) { s.len = i == 5 ? 300 : 1448; })), kTcp,
		     1448, {}});
	c.push_back({"tcp4_short_mid", tcp_flow(false, run(7, [](size_t i, Seg &s) { s.len = i == 3 ? 500 : 1448; })),
		     kTcp, 1448, {}});
	c.push_back({"tcp4_longer_mid",
		     tcp_flow(false, run(7, [](size_t i, Seg &s) { s.len = i == 3 ? 1448 : 1000; }, 1000)), kTcp, 1000, {}});
	// flags
	c.push_back({"tcp4_psh_mid", tcp_flow(false, run(8, [](size_t i, Seg &s) { s.flags = i == 3 ? 0x18 : 0x10; })),
		     kTcp, 1448, {}});
	c.push_back({"tcp6_psh_mid", tcp_flow(true, run(8, [](size_t i, Seg &s) { s.flags = i == 3 ? 0x18 : 0x10; }, 1428)),
		     kTcp, 1428, {}});
	c.push_back({"tcp4_fin_end", tcp_flow(false, run(5, [](size_t i, Seg &s) { s.flags = i == 4 ? 0x11 : 0x10; })),
		     kTcp, 1448, {}});
	c.push_back({"tcp4_syn_mid", tcp_flow(false, run(6, [](size_t i, Seg &s) { s.flags = i == 2 ? 0x12 : 0x10; })),
		     kTcp, 1448, {}});
	c.push_back({"tcp4_urg_mid", tcp_flow(false, run(6, [](size_t i, Seg &s) { s.flags = i == 2 ? 0x30 : 0x10; })),
		     kTcp, 1448, {}});
	// order
	c.push_back({"tcp4_out_of_order", tcp_flow(false, run(8), {0, 1, 2, 4, 3, 5, 6, 7}), kTcp, 1448, {}});
	c.push_back({"tcp4_duplicate", tcp_flow(false, run(6), {0, 1, 2, 2, 3, 4, 5}), kTcp, 1448, {}});
	c.push_back({"tcp6_out_of_order", tcp_flow(true, run(8, {}, 1428), {0, 1, 2, 4, 3, 5, 6, 7}), kTcp, 1428, {}});
	// options
	c.push_back({"tcp4_option_mismatch", tcp_flow(false, run(8, [](size_t i, Seg &s) { s.sack = i == 3; })), kTcp,
		     1448, {}});
	c.push_back({"tcp4_timestamp_change", tcp_flow(false, run(8, [](size_t i, Seg &s) { s.tsval = i < 4 ? 0x1000 : 0x1001; })),
		     kTcp, 1448, {}});
	c.push_back({"tcp6_timestamp_change",
		     tcp_flow(true, run(8, [](size_t i, Seg &s) { s.tsval = i < 4 ? 0x1000 : 0x1001; }, 1428)), kTcp, 1428, {}});
	// IPv4 ID
	c.push_back({"tcp4_ipid_fixed_df", tcp_flow(false, run(6, [](size_t, Seg &s) { s.ipid = 0x4242; })), kTcp, 1448, {}});
	c.push_back({"tcp4_ipid_incrementing_nodf", tcp_flow(false, run(6, [](size_t, Seg &s) { s.df = false; })), kTcp, 1448,
		     {}});
	c.push_back({"tcp4_ipid_fixed_nodf", tcp_flow(false, run(6, [](size_t, Seg &s) { s.ipid = 0x4242, s.df = false; })),
		     kTcp, 1448,
		     {{{6},
		       {1, 1, 1, 1, 1, 1},
		       "IPv4 ID fixed without DF: merged by kernels with 'net: gro: remove unnecessary df checks' "
		       "(6.18, include/net/gro.h inet_gro_flush()), not by 6.1 (net/ipv4/af_inet.c inet_gro_receive(): "
		       "is_atomic needs DF) nor 6.12 (inet_gro_flush(): ip_fixedid needs DF); the engine follows 6.1/6.12"}}});
	c.push_back({"tcp4_ipid_jump", tcp_flow(false, run(6, [](size_t i, Seg &s) { s.ipid = static_cast<uint16_t>(0x100 + 2 * i); })),
		     kTcp, 1448, {}});
	c.push_back({"tcp4_df_change", tcp_flow(false, run(6, [](size_t i, Seg &s) { s.df = i < 3; })), kTcp, 1448, {}});
	// TTL/TOS
	c.push_back({"tcp4_ttl_change", tcp_flow(false, run(8, [](size_t i, Seg &s) { s.ttl = i < 4 ? 64 : 63; })), kTcp,
		     1448, {}});
	c.push_back({"tcp4_tos_change", tcp_flow(false, run(8, [](size_t i, Seg &s) { s.tos = i < 4 ? 0 : 0x10; })), kTcp,
		     1448, {}});
	c.push_back({"tcp6_hoplimit_change",
		     tcp_flow(true, run(8, [](size_t i, Seg &s) { s.ttl = i < 4 ? 64 : 63; }, 1428)), kTcp, 1428, {}});
	c.push_back({"tcp6_tclass_change",
		     tcp_flow(true, run(8, [](size_t i, Seg &s) { s.tos = i < 4 ? 0 : 0x20; }, 1428)), kTcp, 1428, {}});
	c.push_back({"tcp6_flowlabel_change",
		     tcp_flow(true, run(8, [](size_t i, Seg &s) { s.flow_label = i < 4 ? 0x12345 : 0x54321; }, 1428)), kTcp,
		     1428, {}});
	// checksums: a bad segment is delivered alone, at once (tcp4_gro_receive: flush, the run stays held)
	c.push_back({"tcp4_bad_csum_mid", tcp_flow(false, run(8, [](size_t i, Seg &s) { s.bad_csum = i == 3; })), kTcp,
		     1448, {}});
	// flows interleaved (3 flows, round robin)
	{
		std::vector<Bytes> in;
		std::vector<std::vector<Bytes>> flows;
		for (uint16_t f = 0; f < 3; f++)
			flows.push_back(tcp_flow(false, run(6, [f](size_t, Seg &s) { s.sport = static_cast<uint16_t>(kPortA + f); })));
		for (size_t i = 0; i < 6; i++)
			for (auto &fl : flows)
				in.push_back(fl[i]);
		c.push_back({"tcp4_interleaved", in, kTcp, 1448, {}});
	}
	{
		// v4 and v6 flows interleaved, one of them ending with PSH halfway
		std::vector<Bytes> a = tcp_flow(false, run(6, [](size_t i, Seg &s) { s.flags = i == 2 ? 0x18 : 0x10; }));
		std::vector<Bytes> b = tcp_flow(true, run(6, {}, 1428));
		std::vector<Bytes> in;
		for (size_t i = 0; i < 6; i++) {
			in.push_back(a[i]);
			in.push_back(b[i]);
		}
		c.push_back({"tcp46_interleaved", in, kTcp, 1448, {}});
	}
	// VLAN
	{
		Case v{"tcp4_vlan_run", tcp_flow(false, run(8, [](size_t, Seg &s) { s.vlan = 10; })), kTcp, 1448, {}};
		v.vlan = true;
		c.push_back(v);
		Case m{"tcp4_vlan_vid_change", tcp_flow(false, run(8, [](size_t i, Seg &s) { s.vlan = i < 4 ? 10 : 20; })), kTcp,
		       1448, {}};
		m.vlan = true;
		c.push_back(m);
	}
	// UDP GRO (rx-udp-gro-forwarding)
	auto udp = [&c](const char *name, std::vector<Bytes> f, size_t mss, std::vector<KnownDiff> k = {}) {
		Case u{name, std::move(f), kUdp, mss, std::move(k)};
		u.udp = true;
		c.push_back(u);
	};
	udp("udp4_run", udp_run(false, {1400, 1400, 1400, 1400, 1400, 1400, 1400, 1000}), 1400);
	udp("udp6_run", udp_run(true, {1400, 1400, 1400, 1400, 1400, 1400}), 1400);
	udp("udp4_longer_mid", udp_run(false, {1000, 1000, 1000, 1400, 1000, 1000}), 1000);
	udp("udp4_shorter_mid", udp_run(false, {1400, 1400, 600, 1400, 1400}), 1400);
	udp("udp4_70_dgrams", udp_run(false, std::vector<size_t>(70, 200)), 200,
	    {{{64, 1, 5},
	      {64, 6},
	      "where a batch ends: veth's NAPI polls at most 64 frames (its budget; the first frame came alone), "
	      "and a poll that uses its whole budget flushes GRO when HZ < 1000 (net/core/dev.c napi_poll(): "
	      "'If HZ < 1000, flush all packets'): the 65th datagram goes out alone; the engine's batch is all 70 "
	      "(UDP_GRO_CNT_MAX 64 ends the first packet in both)"}});
	udp("udp4_ipid_jump", udp_run(false, {1000, 1000, 1000, 1000, 1000, 1000}, 2), 1000,
	    {{{6},
	      {1, 1, 1, 1, 1, 1},
	      "UDP and the IPv4 ID: 6.1 checks the ID in tcp_gro_receive() only (flush_id), 6.10+ for UDP too "
	      "(net/ipv4/udp_offload.c udp_gro_receive_segment() -> gro_receive_network_flush()); the engine as 6.10+"}});
	return c;
}

// ---- the fixture ----

// One veth pair in fresh namespaces, set up for GRO on B (see the top).
class GroVsKernelBase : public TestbedTest {
protected:
	void SetUp() override
	{
		if (!env_or_empty("XO_TESTBED_NICS").empty())
			GTEST_SKIP() << "veth only: the settings that make a veth GRO are veth's (XO_TESTBED_NICS is set)";
		TestbedTest::SetUp();
		if (IsSkipped() || HasFatalFailure())
			return;
		auto in = [this](const std::string &ns, std::vector<std::string> argv) {
			argv.insert(argv.begin(), {"ip", "netns", "exec", ns});
			return run_cmd(argv, 20);
		};
		CmdResult r = in(tb_->ns_a(), {"ethtool", "-K", tb_->if_a(), "tso", "off", "tx-tcp6-segmentation", "off"});
		ASSERT_TRUE(r.ok()) << "TSO off on the sender (veth_skb_is_eligible_for_gro): " << r.describe();
		r = in(tb_->ns_b(), {"ethtool", "-K", tb_->if_b(), "gro", "on"});
		ASSERT_TRUE(r.ok()) << "GRO on the receiving veth: " << r.describe();
		r = in(tb_->ns_b(), {"ethtool", "-K", tb_->if_b(), "rx-udp-gro-forwarding", "on"});
		udp_gro_ = r.ok();
		udp_why_ = r.ok() ? "" : "rx-udp-gro-forwarding (NETIF_F_GRO_UDP_FWD, 5.12): " + r.describe();
		std::string sys = "/sys/class/net/" + tb_->if_b() + "/";
		r = in(tb_->ns_b(), {"sh", "-c",
				     "echo " + flush_timeout_ns() + " > " + sys + "gro_flush_timeout && echo 1 > " +
					     sys + "napi_defer_hard_irqs"});
		ASSERT_TRUE(r.ok()) << "gro_flush_timeout/napi_defer_hard_irqs: " << r.describe();
		std::string why;
		tx_ = packet_socket(tb_->ns_a(), tb_->if_a(), false, &why);
		ASSERT_TRUE(tx_.valid()) << why;
		rx_ = packet_socket(tb_->ns_b(), tb_->if_b(), false, &why);
		ASSERT_TRUE(rx_.valid()) << why;
		rx_vnet_ = packet_socket(tb_->ns_b(), tb_->if_b(), true, &why);
		ASSERT_TRUE(rx_vnet_.valid()) << why;
	}

	// The kernel's packets for @frames.
	std::vector<Pkt> kernel_run(const std::vector<Bytes> &frames, size_t mss)
	{
		std::string e = send_all(tx_.get(), frames);
		EXPECT_EQ(e, "");
		std::vector<Pkt> k = capture(rx_.get(), rx_vnet_.get());
		for (Pkt &p : k)
			count_segs(p, mss);
		return k;
	}

	bool udp_gro_ = false;
	std::string udp_why_;
	UniqueFd tx_, rx_, rx_vnet_;
};

class GroVsKernel : public GroVsKernelBase, public ::testing::WithParamInterface<Case> {};

// Whether this kernel was built with VLAN GRO (vlan_core.c), as far as
// /proc/config.gz says: "" when it was or cannot tell, else the line.
std::string vlan_config_line()
{
	CmdResult r = run_cmd({"sh", "-c", "zcat /proc/config.gz 2>/dev/null | grep -E '^(# )?CONFIG_VLAN_8021Q[ =]'"}, 10);
	if (!r.ok() || r.out.find("is not set") == std::string::npos)
		return "";
	std::string l = r.out;
	while (!l.empty() && l.back() == '\n')
		l.pop_back();
	return l;
}

TEST_P(GroVsKernel, SamePacketsAsTheKernel)
{
	const Case &c = GetParam();
	if (c.udp && !udp_gro_)
		GTEST_SKIP() << "the kernel merges UDP on a veth only with " << udp_why_;

	std::vector<Pkt> kern = kernel_run(c.frames, c.mss);
	ASSERT_FALSE(HasFailure());
	std::string why;
	GroStats st;
	std::vector<Pkt> ours = engine_run(c.frames, c.kinds, &why, &st);
	ASSERT_TRUE(why.empty()) << why;
	// every frame is in exactly one packet of ours (nothing lost, nothing twice)
	unsigned ours_frames = 0;
	for (const Pkt &p : ours)
		ours_frames += p.segs;
	EXPECT_EQ(ours_frames, c.frames.size()) << "frames in the engine's packets" << describe(ours);
	EXPECT_EQ(st.frames_in, c.frames.size());

	unsigned kern_merged = 0;
	for (const Pkt &p : kern)
		kern_merged += p.segs > 1;
	if (c.vlan && !kern.empty() && !kern_merged) {
		std::string cfg = vlan_config_line();
		if (!cfg.empty())
			GTEST_SKIP() << "this kernel merges no VLAN-tagged frame: vlan_gro_receive() is "
					"net/8021q/vlan_core.c, built only with CONFIG_VLAN_8021Q (/proc/config.gz: '"
				     << cfg << "'); the kernel delivered " << kern.size() << " packets for " << c.frames.size()
				     << " frames, unmerged";
	}
	bool udp_meta_lost = c.udp && std::any_of(kern.begin(), kern.end(), [](const Pkt &p) { return !p.meta; });
	if (udp_meta_lost) {
		std::cout << "[ note ] " << c.name << ": the vnet socket dropped merged UDP packets ("
			  << kernel_lacks(kFeatUdpL4Gso) << "): bytes compared, gso_size not\n";
		// without a gso_size, count_segs() guessed from the case's segment
		// size, wrong where sizes differ (a longer datagram mid-run): the
		// frames, in the order sent, whose payloads make up each packet's
		// payload are its segments
		size_t next = 0;
		for (Pkt &k : kern) {
			if (k.meta) {	// its segments are known: its gso_size said
				next += k.segs;
				continue;
			}
			size_t want = l4_payload(k.bytes), got = 0, first = next;
			while (next < c.frames.size() && got < want)
				got += l4_payload(c.frames[next++]);
			if (got == want)
				k.segs = static_cast<unsigned>(next - first);
			else
				next = first;	// not a run of the frames in order: keep the guess
		}
	}

	std::string ctx = std::string(c.name) + ": kernel" + describe(kern) + "\n  ours" + describe(ours);
	// a documented difference: the groupings say which, and ours must be
	// the frames (or runs) themselves
	for (const KnownDiff &d : c.known) {
		if (grouping(kern) == d.kernel_segs && grouping(ours) == d.ours_segs && grouping(kern) != grouping(ours)) {
			if (d.ours_segs == std::vector<unsigned>(c.frames.size(), 1u)) {
				for (size_t i = 0; i < ours.size(); i++)
					EXPECT_EQ(ours[i].bytes, c.frames[i]) << c.name << ": ours [" << i << "] is not its frame";
			}
			std::cout << "[ documented ] " << c.name << ": kernel " << groups_str(d.kernel_segs) << ", ours "
				  << groups_str(d.ours_segs) << ": " << d.why << "\n";
			RecordProperty("documented_difference", d.why);
			return;
		}
	}
	ASSERT_EQ(grouping(kern), grouping(ours)) << "segments per packet differ\n  " << ctx;
	ASSERT_EQ(kern.size(), ours.size()) << ctx;
	for (size_t i = 0; i < kern.size(); i++)
		EXPECT_EQ(same(kern[i], ours[i]), "") << c.name << " packet " << i << "\n  " << ctx;
	if (!HasFailure())
		std::cout << "[ equal ] " << c.name << ": " << c.frames.size() << " frames -> " << kern.size() << " packets "
		  << groups_str(grouping(kern)) << "\n";
}

INSTANTIATE_TEST_SUITE_P(Cases, GroVsKernel, ::testing::ValuesIn(cases()),
			 [](const auto &info) { return std::string(info.param.name); });

// Geneve: the kernel merges Geneve only through a geneve device's UDP
// tunnel socket (drivers/net/geneve.c geneve_gro_receive(), set up when the
// device opens: geneve_open() -> geneve_sock_add()); a bare veth never does
// (with rx-udp-gro-forwarding it would merge the outer datagrams as plain
// UDP, which compares nothing). Where a geneve device can be made in B, a
// TCP4 run in Geneve (and one with PSH halfway) is compared as the cases
// above; without the geneve module (CONFIG_GENEVE) the test skips saying so.
TEST_F(GroVsKernelBase, GeneveSameAsTheKernel)
{
	CmdResult r = run_cmd({"ip", "-n", tb_->ns_b(), "link", "add", "xogro-gnv", "type", "geneve", "id", "42", "remote",
			       "198.18.0.1", "dstport", "6081"},
			      20);
	if (!r.ok())
		GTEST_SKIP() << "the kernel's Geneve GRO needs a geneve device (drivers/net/geneve.c "
				"geneve_gro_receive); none can be made here: "
			     << r.describe();
	r = run_cmd({"ip", "-n", tb_->ns_b(), "link", "set", "xogro-gnv", "up"}, 20);
	ASSERT_TRUE(r.ok()) << "the geneve device up (its UDP socket): " << r.describe();
	GeneveEncap g;
	g.dst_mac.b = kMacB;
	g.src_mac.b = kMacA;
	std::copy(kIpA.begin(), kIpA.end(), g.src_ip.begin());
	std::copy(kIpB.begin(), kIpB.end(), g.dst_ip.begin());
	g.vni = 42;
	g.udp_csum = false;
	for (bool psh_mid : {false, true}) {
		// the frames: a TCP4 run cut by gso_segment inside Geneve (inner mss
		// 1398: 1514-byte outer frames)
		std::vector<Bytes> frames;
		for (int half = 0; half < (psh_mid ? 2 : 1); half++) {
			Bytes sp = PacketBuilder()
					   .eth(kMacC, kMacA)
					   .ipv4(kIpA, kIpC, 64, static_cast<uint16_t>(0x500 + 4 * half))
					   .tcp(kPortA, kPortB, psh_mid ? 0x18 : 0x10, kSeq0 + static_cast<uint32_t>(half * 4 * 1398))
					   .tcp_options({0x01, 0x01, 0x08, 0x0a, 0, 0, 0x10, 0, 0, 0, 0x20, 0})
					   .payload(size_t{psh_mid ? 4u : 8u} * 1398, static_cast<uint8_t>(half))
					   .build();
			GsoRequest req;
			req.type = GsoType::tso4;
			req.mss = 1398;
			req.geneve = &g;
			const std::vector<Bytes> cut = xo_test::gso_cut(sp, req, 16);
			ASSERT_GT(cut.size(), 1u);
			frames.insert(frames.end(), cut.begin(), cut.end());
		}
		std::vector<Pkt> kern = kernel_run(frames, 1398);
		std::string why;
		std::vector<Pkt> ours = engine_run(frames, GroKinds{true, false, false, true}, &why);
		ASSERT_TRUE(why.empty()) << why;
		std::string ctx = std::string(psh_mid ? "geneve_psh_mid" : "geneve_run") + ": kernel" + describe(kern) +
				  "\n  ours" + describe(ours);
		// segments per packet from the bytes: the inner payload over 1398
		auto segs = [](const std::vector<Pkt> &v) {
			std::vector<size_t> g2;
			for (const Pkt &p : v)
				g2.push_back((p.bytes.size() - 50 - 66 + 1397) / 1398);
			return g2;
		};
		ASSERT_EQ(segs(kern), segs(ours)) << ctx;
		for (size_t i = 0; i < kern.size(); i++)
			EXPECT_EQ(same(kern[i], ours[i]), "") << ctx;
	}
}

// ---- fragments: what a socket receives after ip_defrag()/ipv6_frag_rcv() ----

struct FragCase {
	const char *name;
	bool v6;
	size_t payload;
	uint16_t mtu_data;		// UFO fragment payload (a multiple of 8)
	std::vector<size_t> order;	// fragment order sent (empty: as cut)
	// extra: a copy of a fragment moved 8 bytes back, sent before it
	enum Extra { none, overlap, inside_run } extra = none;
	// overlap: fragment 2's copy, overlapping the end of the run 0-1 and
	//   beyond: the kernel drops the datagram (inet_frag_queue_insert():
	//   IPFRAG_OVERLAP, RFC 5722), and its other fragments never complete one;
	// inside_run: fragment 1's copy, sent after fragment 1, inside the run
	//   0-1 (other bytes, a range no fragment has): the kernel takes it for a
	//   duplicate (IPFRAG_DUP: dropped, the datagram kept) and delivers the
	//   datagram
};

void PrintTo(const FragCase &c, std::ostream *os)
{
	*os << c.name;
}

class GroVsKernelFrag : public GroVsKernelBase, public ::testing::WithParamInterface<FragCase> {};

// A UDP socket and a raw socket (IPPROTO_UDP) on B: the raw one receives the
// reassembled datagram (IPv4: with its IP header; IPv6: from the UDP header),
// the UDP one keeps the stack from answering port unreachable.
TEST_P(GroVsKernelFrag, SameDatagramAsTheKernel)
{
	const FragCase &c = GetParam();
	auto in_b = [this](std::vector<std::string> argv) {
		argv.insert(argv.begin(), {"ip", "-n", tb_->ns_b()});
		return run_cmd(argv, 20);
	};
	CmdResult r = c.v6 ? run_cmd({"ip", "netns", "exec", tb_->ns_b(), "sysctl", "-qw",
				      "net.ipv6.conf." + tb_->if_b() + ".disable_ipv6=0"},
				     20)
			   : in_b({"addr", "add", "198.18.0.2/24", "dev", tb_->if_b()});
	ASSERT_TRUE(r.ok()) << r.describe();
	if (c.v6) {
		r = in_b({"addr", "add", "2001:db8::2/64", "dev", tb_->if_b(), "nodad"});
		ASSERT_TRUE(r.ok()) << r.describe();
	}
	UniqueFd raw, udp;
	{
		std::string why;
		std::thread t([&] {
			InNetns ns(tb_->ns_b());
			if (!ns.ok())
				return;
			int fam = c.v6 ? AF_INET6 : AF_INET;
			raw = UniqueFd(::socket(fam, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_UDP));
			udp = UniqueFd(::socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0));
			sockaddr_storage ss{};
			socklen_t sl;
			if (c.v6) {
				auto *s6 = reinterpret_cast<sockaddr_in6 *>(&ss);
				s6->sin6_family = AF_INET6;
				s6->sin6_port = htons(kPortB);
				sl = sizeof(*s6);
			} else {
				auto *s4 = reinterpret_cast<sockaddr_in *>(&ss);
				s4->sin_family = AF_INET;
				s4->sin_port = htons(kPortB);
				sl = sizeof(*s4);
			}
			if (udp.valid() && bind(udp.get(), reinterpret_cast<sockaddr *>(&ss), sl))
				udp = UniqueFd();
		});
		t.join();
		ASSERT_TRUE(raw.valid() && udp.valid()) << "raw/UDP socket in " << tb_->ns_b() << ": " << strerror(errno);
	}

	// the datagram and its fragments, cut by the GSO engine's UFO
	Bytes dgram = PacketBuilder()
			      .eth(kMacB, kMacA)
			      .ipv6(kIp6A, kIp6B)
			      .udp(kPortA, kPortB)
			      .payload(c.payload, 3)
			      .build();
	if (!c.v6)
		dgram = PacketBuilder().eth(kMacB, kMacA).ipv4(kIpA, kIpB, 64, 0x777).udp(kPortA, kPortB).payload(c.payload, 3).build();
	GsoRequest req;
	req.type = c.v6 ? GsoType::ufo6 : GsoType::ufo4;
	req.mss = c.mtu_data;
	req.ipv6_frag_id = 0x01020304;
	std::vector<Bytes> frags = xo_test::gso_cut(dgram, req, 64);
	ASSERT_GT(frags.size(), 1u) << "the datagram must be cut";
	if (c.extra != FragCase::none) {
		size_t k = c.extra == FragCase::overlap ? 2 : 1;
		Bytes f = frags[k];
		FrameView v;
		ASSERT_EQ(parse_frame(f.data(), f.size(), 0, v), "");
		size_t at = c.v6 ? v.l3 + 40 + 2 : v.l3 + 6;
		uint16_t w = be16(f.data() + at);
		w = static_cast<uint16_t>(w - (c.v6 ? 8 : 1));	// the offset field counts 8-byte units (v6: from bit 3)
		f[at] = static_cast<uint8_t>(w >> 8);
		f[at + 1] = static_cast<uint8_t>(w);
		if (!c.v6)
			ipv4_fix(f, v.l3);
		frags.insert(frags.begin() + 2, f);
	}
	std::vector<Bytes> send = frags;
	if (!c.order.empty()) {
		send.clear();
		for (size_t i : c.order)
			send.push_back(frags.at(i));
	}

	ASSERT_EQ(send_all(tx_.get(), send), "");
	std::vector<Bytes> got;
	Bytes buf(70000);
	auto start = std::chrono::steady_clock::now();
	auto last = start;
	while (std::chrono::steady_clock::now() - last < kQuiet && std::chrono::steady_clock::now() - start < kCaptureCap) {
		pollfd p{raw.get(), POLLIN, 0};
		if (poll(&p, 1, 20) <= 0)
			continue;
		ssize_t len = ::recv(raw.get(), buf.data(), buf.size(), MSG_DONTWAIT);
		if (len > 0) {
			got.emplace_back(buf.begin(), buf.begin() + len);
			last = std::chrono::steady_clock::now();
		}
	}

	GroKinds kinds{false, false, true, false};
	std::string why;
	GroStats st;
	std::vector<Pkt> ours = engine_run(send, kinds, &why, &st);
	ASSERT_TRUE(why.empty()) << why;
	if (c.extra == FragCase::overlap) {
		std::string sizes;
		for (const Bytes &g : got)
			sizes += " " + std::to_string(g.size()) + " B: " + hexdump(std::span<const uint8_t>(g).first(std::min<size_t>(32, g.size())));
		EXPECT_TRUE(got.empty()) << "the kernel reassembled a datagram with overlapping fragments:" << sizes;
		EXPECT_TRUE(ours.empty()) << "the engine emitted" << describe(ours);
		EXPECT_GE(st.frag_drop[static_cast<size_t>(GroFragDrop::overlap)], 1u);
		if (!HasFailure())
			std::cout << "[ equal ] " << c.name << ": neither delivers a datagram with overlapping fragments\n";
		return;
	}
	ASSERT_EQ(got.size(), 1u) << "datagrams the kernel delivered";
	ASSERT_EQ(ours.size(), 1u) << "datagrams the engine emitted" << describe(ours);
	FrameView ov;
	ASSERT_EQ(parse_frame(ours[0].bytes.data(), ours[0].bytes.size(), 0, ov), "") << "the engine's datagram";
	EXPECT_FALSE(ov.is_frag) << "fragment fields left in the engine's datagram";
	// IPv4: the whole IP datagram; IPv6: the raw socket starts at the UDP header
	size_t from = c.v6 ? ov.l4 : ov.l3;
	Bytes mine(ours[0].bytes.begin() + static_cast<long>(from), ours[0].bytes.end());
	EXPECT_EQ(hexdump(std::span<const uint8_t>(got[0]).first(std::min<size_t>(64, got[0].size()))),
		  hexdump(std::span<const uint8_t>(mine).first(std::min<size_t>(64, mine.size()))))
		<< c.name << ": headers (kernel first)";
	EXPECT_TRUE(got[0] == mine) << c.name << ": " << got[0].size() << " bytes from the kernel, " << mine.size()
				    << " from the engine";
	// and it is the datagram that was cut
	Bytes sent_l4(dgram.begin() + static_cast<long>(kEthHdrLen + (c.v6 ? 40 : 20)), dgram.end());
	EXPECT_TRUE(Bytes(mine.end() - static_cast<long>(sent_l4.size()), mine.end()) == sent_l4)
		<< "the engine's datagram is not the one cut";
	if (!HasFailure())
		std::cout << "[ equal ] " << c.name << ": " << send.size() << " fragments -> one datagram of " << got[0].size()
		  << " bytes (" << (c.v6 ? "from the UDP header" : "from the IPv4 header") << ")\n";
}

INSTANTIATE_TEST_SUITE_P(Cases, GroVsKernelFrag,
			 ::testing::Values(FragCase{"ipv4_in_order", false, 9000, 1480, {}},
					   FragCase{"ipv4_reversed", false, 9000, 1480, {6, 5, 4, 3, 2, 1, 0}},
					   FragCase{"ipv4_64k", false, 65000, 1480, {}},
					   FragCase{"ipv4_overlap", false, 5000, 1480, {}, FragCase::overlap},
					   FragCase{"ipv4_dup_inside_run", false, 5000, 1480, {}, FragCase::inside_run},
					   FragCase{"ipv6_in_order", true, 9000, 1448, {}},
					   FragCase{"ipv6_reversed", true, 9000, 1448, {6, 5, 4, 3, 2, 1, 0}},
					   FragCase{"ipv6_overlap", true, 5000, 1448, {}, FragCase::overlap},
					   FragCase{"ipv6_dup_inside_run", true, 5000, 1448, {}, FragCase::inside_run}),
			 [](const auto &info) { return std::string(info.param.name); });

} // namespace
} // namespace xoffload::test
