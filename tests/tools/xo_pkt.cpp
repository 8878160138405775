// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// xo-pkt: sends test frames and captures wire frames over AF_PACKET, for the
// integration tests and for trying offload-tool by hand.
//
// send: frame i (0-based) of a run is, outermost first,
//   Ethernet dst/src, the --vlan tags in order, IPv4 198.18.0.1 -> 198.18.0.2
//   (TTL 64, ID i + 1, DF), UDP 40001 -> 40002, payload bytes i, i+1, ...
//   padding the frame to --size bytes (Ethernet header and tags included).
//   Frames the egress path drops (TC_ACT_SHOT, qdisc) are counted, not resent.
//   With --geneve VNI that frame (without tags, --size bytes, inner IPs from
//   --inner-src/--inner-dst, UDP source port 40001 + i % --flows) travels
//   inside Ethernet/[tags]/IPv4 198.18.0.1 -> 198.18.0.2 (or --outer-src/
//   --outer-dst)/UDP 49152 -> --geneve-port/Geneve(VNI, 0x6558).
// capture: prints every received frame as it was on the wire: a tag the
//   kernel moved into skb metadata (PACKET_AUXDATA) is put back in front,
//   like tcpdump does. Exit 0 when --count frames arrived (or the timeout
//   passed with no --count), 3 when the timeout passed first, 1 on a runtime
//   error, 2 on bad usage.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "geneve_frames.hpp"
#include "packet_builder.hpp"
#include "xoffload/core/fd.hpp"
#include "xoffload/core/netdev.hpp"

namespace {

using namespace xoffload;
using namespace xoffload::test;

constexpr int kExitOk = 0, kExitRuntime = 1, kExitUsage = 2, kExitTimeout = 3;

struct Tag {
	uint16_t tpid = kTpid8021Q;
	uint16_t vid = 0;
	uint8_t pcp = 0;
	bool dei = false;
};

struct Failure {
	int code;
	std::string msg;
};

[[noreturn]] void fail(int code, const std::string &msg)
{
	throw Failure{code, msg};
}

bool parse_uint(const std::string &s, unsigned long max, unsigned long &out, int base = 10)
{
	if (s.empty())
		return false;
	errno = 0;
	char *end = nullptr;
	unsigned long v = std::strtoul(s.c_str(), &end, base);
	if (errno || *end || v > max || s[0] == '-')
		return false;
	out = v;
	return true;
}

uint16_t parse_tpid(const std::string &s)
{
	if (s == "802.1Q" || s == "802.1q" || s == "q")
		return kTpid8021Q;
	if (s == "802.1ad" || s == "802.1AD" || s == "ad")
		return kTpid8021AD;
	unsigned long v;
	if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && parse_uint(s.substr(2), 0xffff, v, 16))
		return static_cast<uint16_t>(v);
	fail(kExitUsage, "unknown TPID '" + s + "' (802.1Q, 802.1ad or 0xNNNN)");
}

// TPID:VID[:PCP[:DEI]]; VID 0 and 4095 are allowed so invalid frames can be sent.
Tag parse_tag(const std::string &arg)
{
	std::vector<std::string> f;
	size_t start = 0;
	for (size_t p; (p = arg.find(':', start)) != std::string::npos; start = p + 1)
		f.push_back(arg.substr(start, p - start));
	f.push_back(arg.substr(start));
	if (f.size() < 2 || f.size() > 4)
		fail(kExitUsage, "bad --vlan '" + arg + "' (TPID:VID[:PCP[:DEI]])");
	Tag t;
	unsigned long v;
	t.tpid = parse_tpid(f[0]);
	if (!parse_uint(f[1], 4095, v))
		fail(kExitUsage, "bad VID in --vlan '" + arg + "' (0..4095)");
	t.vid = static_cast<uint16_t>(v);
	if (f.size() > 2) {
		if (!parse_uint(f[2], 7, v))
			fail(kExitUsage, "bad PCP in --vlan '" + arg + "' (0..7)");
		t.pcp = static_cast<uint8_t>(v);
	}
	if (f.size() > 3) {
		if (!parse_uint(f[3], 1, v))
			fail(kExitUsage, "bad DEI in --vlan '" + arg + "' (0 or 1)");
		t.dei = v != 0;
	}
	return t;
}

Mac parse_mac(const std::string &s)
{
	Mac m{};
	unsigned b[6];
	char extra;
	if (std::sscanf(s.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
			&extra) != 6)
		fail(kExitUsage, "bad MAC address '" + s + "'");
	for (int i = 0; i < 6; i++)
		m[i] = static_cast<uint8_t>(b[i]);
	return m;
}

std::string mac_str(const uint8_t *m)
{
	char b[18];
	std::snprintf(b, sizeof(b), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
	return b;
}

std::string hex(const Bytes &b)
{
	static const char digits[] = "0123456789abcdef";
	std::string s;
	s.reserve(b.size() * 2);
	for (uint8_t c : b) {
		s += digits[c >> 4];
		s += digits[c & 15];
	}
	return s;
}

double now_s()
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

int ifindex_of(const std::string &ifname)
{
	auto dev = netdev_lookup(ifname);
	if (!dev)
		fail(dev.error().kind == ErrorKind::usage ? kExitUsage : kExitRuntime, dev.error().msg);
	return dev->ifindex;
}

// ---- send -------------------------------------------------------------------

struct SendOpts {
	std::string ifname;
	std::vector<std::string> vlans;
	unsigned count = 1;
	unsigned size = 64;
	std::string src_mac = "02:00:00:00:00:0a", dst_mac = "02:00:00:00:00:0b";
	unsigned gap_us = 0;
	bool hex = false;
	std::string proto;	// sll_protocol; default: the frame's outer ethertype
	// Geneve encapsulation (--geneve)
	std::string geneve_vni;
	unsigned geneve_port = kPortGeneve;
	unsigned flows = 1;
	std::string inner_src = "198.18.0.1", inner_dst = "198.18.0.2";
	std::string outer_src = "198.18.0.1", outer_dst = "198.18.0.2";
};

Ip4 parse_ip4(const std::string &s)
{
	Ip4 a{};
	if (inet_pton(AF_INET, s.c_str(), a.data()) != 1)
		fail(kExitUsage, "bad IPv4 address '" + s + "'");
	return a;
}

// Frame i of a --geneve run (see the top of this file).
Bytes make_geneve_frame(const SendOpts &o, const Mac &dst, const Mac &src, const std::vector<Tag> &tags,
			uint32_t vni, unsigned i)
{
	PacketBuilder in;
	in.eth(dst, src)
		.ipv4(parse_ip4(o.inner_src), parse_ip4(o.inner_dst), 64, static_cast<uint16_t>(i + 1))
		.udp(static_cast<uint16_t>(kPortA + i % o.flows), kPortB)
		.payload(o.size - kEthHdrLen - (20 + 8), static_cast<uint8_t>(i));
	Bytes gnv = geneve(vni, kEthTeb, in.build());
	PacketBuilder out;
	out.eth(dst, src);
	for (const Tag &t : tags)
		out.vlan(t.tpid, t.vid, t.pcp, t.dei);
	return out.ipv4(parse_ip4(o.outer_src), parse_ip4(o.outer_dst))
		.udp(49152, static_cast<uint16_t>(o.geneve_port))
		.payload(gnv)
		.build();
}

constexpr size_t kIpUdpLen = 20 + 8;

Bytes make_frame(const Mac &dst, const Mac &src, const std::vector<Tag> &tags, size_t size, unsigned i)
{
	size_t hdr = kEthHdrLen + tags.size() * kVlanHdrLen + kIpUdpLen;
	PacketBuilder pb;
	pb.eth(dst, src);
	for (const Tag &t : tags)
		pb.vlan(t.tpid, t.vid, t.pcp, t.dei);
	pb.ipv4(kIpA, kIpB, 64, static_cast<uint16_t>(i + 1))
		.udp(kPortA, kPortB)
		.payload(size - hdr, static_cast<uint8_t>(i));
	return pb.build();
}

int cmd_send(const SendOpts &o)
{
	std::vector<Tag> tags;
	for (const auto &v : o.vlans)
		tags.push_back(parse_tag(v));
	size_t min = kEthHdrLen + (o.geneve_vni.empty() ? tags.size() * kVlanHdrLen : 0) + kIpUdpLen;
	uint32_t vni = 0;
	if (!o.geneve_vni.empty()) {
		unsigned long v;
		if (!parse_uint(o.geneve_vni, 0xffffff, v))
			fail(kExitUsage, "bad --geneve VNI '" + o.geneve_vni + "' (0..16777215)");
		vni = static_cast<uint32_t>(v);
		if (o.geneve_port < 1 || o.geneve_port > 65535 || o.flows < 1)
			fail(kExitUsage, "--geneve-port must be 1..65535 and --flows at least 1");
	}
	if (o.size < min || o.size > 9000)
		fail(kExitUsage, "--size must be " + std::to_string(min) + "..9000 for " +
					 std::to_string(tags.size()) + " tag(s)");
	Mac src = parse_mac(o.src_mac), dst = parse_mac(o.dst_mac);
	uint16_t proto = o.proto.empty() ? 0 : parse_tpid(o.proto);
	int ifindex = ifindex_of(o.ifname);

	// protocol 0: this socket only sends, it never queues received frames
	UniqueFd fd(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
	if (!fd.valid())
		fail(kExitRuntime, std::string("socket(AF_PACKET): ") + std::strerror(errno));
	unsigned refused = 0;
	for (unsigned i = 0; i < o.count; i++) {
		Bytes f = o.geneve_vni.empty() ? make_frame(dst, src, tags, o.size, i)
						: make_geneve_frame(o, dst, src, tags, vni, i);
		sockaddr_ll sll{};
		sll.sll_family = AF_PACKET;
		sll.sll_ifindex = ifindex;
		sll.sll_protocol = htons(proto ? proto : static_cast<uint16_t>(f[12] << 8 | f[13]));
		sll.sll_halen = ETH_ALEN;
		std::memcpy(sll.sll_addr, dst.data(), ETH_ALEN);
		for (int tries = 0;; tries++) {
			ssize_t n = ::sendto(fd.get(), f.data(), f.size(), 0, reinterpret_cast<sockaddr *>(&sll),
					     sizeof(sll));
			if (n == static_cast<ssize_t>(f.size()))
				break;
			int e = n < 0 ? errno : EMSGSIZE;
			if (e == EAGAIN && tries < 100) {
				usleep(1000);
				continue;
			}
			// ENOBUFS: the egress path (a TC program or a qdisc) dropped
			// the frame after it was handed over. Counted, not resent.
			if (e == ENOBUFS) {
				refused++;
				break;
			}
			fail(kExitRuntime, "send on " + o.ifname + ": " + std::strerror(e));
		}
		if (o.hex)
			std::printf("sent %u len %zu hex %s\n", i + 1, f.size(), hex(f).c_str());
		if (o.gap_us)
			usleep(o.gap_us);
	}
	std::printf("sent %u frame(s) of %u bytes on %s, %u dropped on egress\n", o.count, o.size, o.ifname.c_str(),
		    refused);
	return kExitOk;
}

// ---- capture ----------------------------------------------------------------

struct CaptureOpts {
	std::string ifname;
	unsigned count = 0;
	double timeout = 5;
	bool hex = false, json = false, outgoing = false;
	std::string ready_file, src_mac;
};

std::string tpid_name(uint16_t tpid)
{
	if (tpid == kTpid8021Q)
		return "802.1Q";
	if (tpid == kTpid8021AD)
		return "802.1ad";
	char b[8];
	std::snprintf(b, sizeof(b), "0x%04x", tpid);
	return b;
}

std::string tag_str(uint16_t tpid, uint16_t tci)
{
	std::string s = tpid_name(tpid) + ":" + std::to_string(tci & 0x0fff);
	if (tci >> 13)
		s += "/pcp" + std::to_string(tci >> 13);
	if (tci & 0x1000)
		s += "/dei";
	return s;
}

bool is_tpid(uint16_t t)
{
	return t == kTpid8021Q || t == kTpid8021AD || t == 0x9100;
}

const char *pkttype_name(unsigned t)
{
	switch (t) {
	case PACKET_HOST:
		return "host";
	case PACKET_BROADCAST:
		return "broadcast";
	case PACKET_MULTICAST:
		return "multicast";
	case PACKET_OTHERHOST:
		return "otherhost";
	case PACKET_OUTGOING:
		return "outgoing";
	default:
		return "other";
	}
}

void print_frame(const CaptureOpts &o, unsigned n, const Bytes &f, const std::string &meta, unsigned pkttype,
		 bool truncated)
{
	std::vector<std::string> tags;
	size_t off = kMacsLen;
	uint16_t type = 0;
	while (off + 2 <= f.size()) {
		type = static_cast<uint16_t>(f[off] << 8 | f[off + 1]);
		if (!is_tpid(type) || off + 4 > f.size() || tags.size() >= 8)
			break;
		tags.push_back(tag_str(type, static_cast<uint16_t>(f[off + 2] << 8 | f[off + 3])));
		off += 4;
	}
	char typebuf[8];
	std::snprintf(typebuf, sizeof(typebuf), "0x%04x", type);
	if (o.json) {
		std::string s = "{\"frame\":" + std::to_string(n) + ",\"len\":" + std::to_string(f.size()) +
				",\"src\":\"" + mac_str(&f[6]) + "\",\"dst\":\"" + mac_str(&f[0]) + "\",\"tags\":[";
		for (size_t i = 0; i < tags.size(); i++)
			s += (i ? ",\"" : "\"") + tags[i] + "\"";
		s += std::string("],\"type\":\"") + typebuf + "\",\"pkttype\":\"" + pkttype_name(pkttype) + "\"";
		if (!meta.empty())
			s += ",\"meta_tag\":\"" + meta + "\"";
		if (truncated)
			s += ",\"truncated\":true";
		if (o.hex)
			s += ",\"hex\":\"" + hex(f) + "\"";
		std::printf("%s}\n", s.c_str());
	} else {
		std::string t;
		for (const auto &x : tags)
			t += " " + x;
		std::printf("frame %u len %zu %s > %s tags%s type %s %s%s%s%s%s\n", n, f.size(), mac_str(&f[6]).c_str(),
			    mac_str(&f[0]).c_str(), tags.empty() ? " none" : t.c_str(), typebuf, pkttype_name(pkttype),
			    meta.empty() ? "" : " meta ", meta.c_str(), truncated ? " truncated" : "",
			    o.hex ? (" hex " + hex(f)).c_str() : "");
	}
	std::fflush(stdout);
}

int cmd_capture(const CaptureOpts &o)
{
	if (!(o.timeout > 0) || o.timeout > 3600)
		fail(kExitUsage, "--timeout must be in (0, 3600] seconds: a capture always ends");
	std::optional<Mac> want_src;
	if (!o.src_mac.empty())
		want_src = parse_mac(o.src_mac);
	int ifindex = ifindex_of(o.ifname);

	// Created with protocol 0 so nothing is queued before bind() narrows it
	// to this interface; ETH_P_ALL then sees frames before TC ingress.
	UniqueFd fd(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
	if (!fd.valid())
		fail(kExitRuntime, std::string("socket(AF_PACKET): ") + std::strerror(errno));
	int one = 1, rcvbuf = 4 << 20;
	if (setsockopt(fd.get(), SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)))
		fail(kExitRuntime, std::string("PACKET_AUXDATA: ") + std::strerror(errno));
	(void)setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	sockaddr_ll sll{};
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = ifindex;
	if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&sll), sizeof(sll)))
		fail(kExitRuntime, "bind to " + o.ifname + ": " + std::strerror(errno));
	if (!o.ready_file.empty()) {
		UniqueFd rf(::open(o.ready_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
		if (!rf.valid())
			fail(kExitRuntime, "create " + o.ready_file + ": " + std::strerror(errno));
	}

	std::vector<uint8_t> buf(65536 + 4);
	alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(tpacket_auxdata))];
	unsigned got = 0;
	double deadline = now_s() + o.timeout;
	while (!o.count || got < o.count) {
		double left = deadline - now_s();
		if (left <= 0)
			break;
		pollfd p{fd.get(), POLLIN, 0};
		int r = ::poll(&p, 1, static_cast<int>(left * 1000) + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			fail(kExitRuntime, std::string("poll: ") + std::strerror(errno));
		if (r == 0)
			continue;
		sockaddr_ll from{};
		iovec iov{buf.data(), buf.size()};
		msghdr mh{};
		mh.msg_name = &from;
		mh.msg_namelen = sizeof(from);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = ctrl;
		mh.msg_controllen = sizeof(ctrl);
		ssize_t n = ::recvmsg(fd.get(), &mh, MSG_TRUNC | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			fail(kExitRuntime, std::string("recvmsg: ") + std::strerror(errno));
		if (from.sll_pkttype == PACKET_OUTGOING && !o.outgoing)
			continue;
		bool truncated = static_cast<size_t>(n) > buf.size();
		Bytes f(buf.begin(), buf.begin() + std::min<size_t>(static_cast<size_t>(n), buf.size()));
		std::string meta;
		for (cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA ||
			    c->cmsg_len < CMSG_LEN(sizeof(tpacket_auxdata)))
				continue;
			tpacket_auxdata aux;
			std::memcpy(&aux, CMSG_DATA(c), sizeof(aux));
			// tcpdump's test: a non-zero TCI also counts, for old kernels
			if (!aux.tp_vlan_tci && !(aux.tp_status & TP_STATUS_VLAN_VALID))
				continue;
			uint16_t tpid = (aux.tp_status & TP_STATUS_VLAN_TPID_VALID) ? aux.tp_vlan_tpid : kTpid8021Q;
			f = insert_vlan(f, tpid, aux.tp_vlan_tci);
			meta = tag_str(tpid, aux.tp_vlan_tci);
		}
		if (f.size() < kEthHdrLen)
			continue;
		if (want_src && !std::equal(want_src->begin(), want_src->end(), f.begin() + 6))
			continue;
		print_frame(o, ++got, f, meta, from.sll_pkttype, truncated);
	}
	if (o.count && got < o.count) {
		std::fprintf(stderr, "xo-pkt: timeout after %.1f s: %u of %u frame(s) on %s\n", o.timeout, got, o.count,
			     o.ifname.c_str());
		return kExitTimeout;
	}
	return kExitOk;
}

} // namespace

int main(int argc, char **argv)
{
	std::string netns;
	SendOpts so;
	CaptureOpts co;

	CLI::App app{"xo-pkt: send test frames / capture wire frames (VLAN tags from skb metadata put back)",
		     "xo-pkt"};
	app.add_option("-n,--netns", netns, "Run in this network namespace (/run/netns/NAME)");
	app.require_subcommand(1);

	auto *s = app.add_subcommand("send", "Send Ethernet/[tags]/IPv4/UDP frames");
	s->add_option("interface", so.ifname, "Interface")->required();
	s->add_option("--vlan", so.vlans, "Tag TPID:VID[:PCP[:DEI]], outermost first; repeat for QinQ")
		->allow_extra_args(false);
	s->add_option("--count", so.count, "Frames to send (default 1)")->check(CLI::Range(1u, 1000000u));
	s->add_option("--size", so.size, "Frame length with Ethernet header and tags, no FCS (default 64)");
	s->add_option("--src-mac", so.src_mac, "Source MAC (default 02:00:00:00:00:0a)");
	s->add_option("--dst-mac", so.dst_mac, "Destination MAC (default 02:00:00:00:00:0b)");
	s->add_option("--gap-us", so.gap_us, "Pause between frames, microseconds");
	s->add_flag("--hex", so.hex, "Print every frame sent");
	s->add_option("--geneve", so.geneve_vni, "Encapsulate in Geneve with this VNI (--size: inner frame)");
	s->add_option("--geneve-port", so.geneve_port, "Outer UDP destination port (default 6081)");
	s->add_option("--flows", so.flows, "Geneve: inner UDP source ports 40001.. cycled over N flows");
	s->add_option("--inner-src", so.inner_src, "Geneve: inner IPv4 source (default 198.18.0.1)");
	s->add_option("--inner-dst", so.inner_dst, "Geneve: inner IPv4 destination (default 198.18.0.2)");
	s->add_option("--outer-src", so.outer_src, "Geneve: outer IPv4 source (default 198.18.0.1)");
	s->add_option("--outer-dst", so.outer_dst, "Geneve: outer IPv4 destination (default 198.18.0.2)");
	s->add_option("--proto", so.proto,
		      "skb->protocol to send with, 0xNNNN (default: the outer ethertype, as the stack would)");

	auto *c = app.add_subcommand("capture", "Print received frames as they were on the wire");
	c->add_option("interface", co.ifname, "Interface")->required();
	c->add_option("--count", co.count, "Stop after N frames (default: run until --timeout)");
	c->add_option("--timeout", co.timeout, "Give up after S seconds (default 5)");
	c->add_flag("--hex", co.hex, "Also print the frame bytes");
	c->add_flag("--json", co.json, "One JSON object per frame");
	c->add_option("--ready-file", co.ready_file, "Create PATH once the socket is bound (sync for tests)");
	c->add_option("--src-mac", co.src_mac, "Only frames from this source MAC");
	c->add_flag("--outgoing", co.outgoing, "Also frames this host sends on the interface");

	try {
		app.parse(argc, argv);
	} catch (const CLI::CallForHelp &e) {
		return app.exit(e);
	} catch (const CLI::ParseError &e) {
		std::fprintf(stderr, "xo-pkt: %s (see --help)\n", e.what());
		return kExitUsage;
	}
	try {
		if (!netns.empty()) {
			if (auto st = netns_enter(netns); !st)
				fail(st.error().kind == ErrorKind::usage ? kExitUsage : kExitRuntime, st.error().msg);
		}
		if (s->parsed())
			return cmd_send(so);
		return cmd_capture(co);
	} catch (const Failure &f) {
		std::fprintf(stderr, "xo-pkt: %s\n", f.msg.c_str());
		return f.code;
	}
}
