// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tools/bench gro: received frames per second merged into super-packets by
// the GRO engine (user/src/gro), against a plain memcpy of the same bytes
// and DPDK's rte_gro_reassemble_burst on the same frames.
//
// Design (printed with the results as well):
// - One thread pinned to one CPU. Each row's frames are cut from one ~64 KiB
//   super-packet by the project's GSO engine (TSO4 mss 1448 with the TCP
//   timestamp option: 1514-byte frames; the other rows the mss that fills
//   the same 1500-byte MTU), so that they merge back into one super-packet.
//   A burst is the frames of one super-packet, given to the engine in one
//   receive() followed by flush() (the end of an AF_XDP RX batch), to DPDK in
//   one rte_gro_reassemble_burst() call.
// - Input: the frames sit in UMEM-like 2048-byte slots (frame 64 bytes in),
//   copies of the burst one after another through 4096 slots (8 MiB, more
//   than L2: frames a NIC just wrote are not L1/L2-hot); each burst takes
//   the next copy. DPDK's frames sit in as many mbufs (the same 8 MiB of
//   data), the burst's copy in turn.
// - Timed per burst on the wall clock (vDSO), summed; a run is ~300,000
//   frames; each figure is the median of the runs with min and max, the
//   methods' runs interleaved. Ours: receive() + flush(), the sink taking
//   each packet's length (the super-packet is the engine's copy). memcpy:
//   the bytes the engine writes (the first frame whole, every later frame's
//   payload) copied from the same slots into one 64 KiB buffer. DPDK:
//   rte_gro_reassemble_burst() (which links mbufs and copies nothing), then
//   each packet it returns copied into the same 64 KiB buffer (the
//   super-packet as one buffer, as ours is); "+csum" verifies each frame's
//   IPv4 header and TCP checksum (rte_ipv4_cksum, rte_ipv4_udptcp_cksum;
//   frag4: the datagram's UDP checksum once reassembled) first, since rte_gro verifies nothing
//   (rte_gro.h: "It doesn't check if input packets have correct
//   checksums"). Not timed: putting DPDK's mbufs back as the NIC would
//   have written them (chain, data offset, lengths, the header bytes
//   rte_gro rewrote).
// - Our engine always verifies the frames it merges (gro.hpp: "a frame
//   that starts or joins a super-packet is always verified"): there is no
//   row of ours without verification; GroConfig::verify_csum only decides
//   for frames passed as they are.
// - Two modes of ours, both timed on every row: copy (the first table: the
//   super-packet in one engine buffer, payloads copied and summed in one
//   pass) and zero-copy (GroConfig::zero_copy, the second table: headers in
//   the engine, payloads left in the slots, summed in place; the sink takes
//   the packet's length, data and frags). Zero-copy's like-for-like DPDK
//   reference is DPDK "chained": rte_gro_reassemble_burst with its mbuf
//   chain left as it is (no copy out), without and with (+csum) the
//   checksum checks. The DPDK columns of the first table copy the chain into
//   one buffer, as our copy mode's output is one.
// - Targets: tcp4 >= 1.5x DPDK "with checksum validation" is judged on
//   equal work: zero-copy against DPDK chained +csum (both verify, neither
//   copies a payload) and copy mode against DPDK with its copy out +csum
//   (both verify and copy); and, as first measured, zero-copy against DPDK
//   with its copy out and no checks. DPDK chained without its checks is a
//   reference line: it reads the headers only (about 30 ns a frame here,
//   less than summing the 1,448 payload bytes alone takes any engine that
//   verifies: 1.5x over that cannot be met while verifying).
// - Verified before timing: our one packet per burst is the super-packet the
//   frames were cut from (from the L4 header on, byte for byte; TCP rows:
//   whole, headers included), with segs == frames; DPDK returns one packet
//   per burst whose payload is the same.
// - tcp6: DPDK 22.11 (Debian 12) has no TCP/IPv6 GRO (RTE_GRO_TCP_IPV6 came
//   in 23.07); udp4: DPDK has no UDP GRO of datagrams (RTE_GRO_UDP_IPV4 is
//   IPv4 fragment reassembly, the frag4 row's reference); tcp4+geneve: DPDK
//   merges VXLAN, not Geneve: its column there is VXLAN on the same inner
//   frames (8-byte tunnel header over UDP, like Geneve without options),
//   labelled and never a target.
#include "bench.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "geneve_encap.hpp"
#include "packet_builder.hpp"
#include "xoffload/gro/gro.hpp"
#include "xoffload/gso/gso.hpp"

#ifdef XO_HAVE_DPDK
#include <rte_config.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_gro.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mbuf_ptype.h>
#include <rte_tcp.h>
#include <unistd.h>
#endif

namespace xoffload::bench {

namespace {

using xoffload::test::Bytes;
using PB = xoffload::test::PacketBuilder;
namespace tv = xoffload::test;

constexpr size_t slot_size = 2048;
constexpr size_t slot_headroom = 64;
constexpr unsigned default_slots = 4096;
constexpr size_t max_frames = 64;
constexpr size_t out_cap = 65536 + 256;

constexpr uint64_t full_frames = 300'000;	// input frames per timed run and method
constexpr unsigned full_runs = 11;
constexpr uint64_t quick_frames = 20'000;
constexpr unsigned quick_runs = 3;
// tagged vs untagged: pairs of short blocks, order alternating (as gso's xuntag)
constexpr unsigned xuntag_pairs = 1000;
constexpr unsigned xuntag_quick_pairs = 50;
constexpr size_t xuntag_block = 8;	// bursts per block (~30 us)

// Targets of the issue.
constexpr double target_vs_dpdk = 1.5;		// TCP4, ours zero-copy and verifying, DPDK not verifying
constexpr double target_vs_memcpy = 0.6;	// 1448-byte TCP segments
constexpr double target_vs_untagged = 0.97;

constexpr uint32_t seq0 = 0x10000000;
constexpr uint16_t ipid0 = 0x1234;

enum class Kind { tcp4, tcp6, udp4, frag4, geneve };
enum class DpdkKind { none, tcp4, udp4_frag, vxlan_tcp4 };

struct CaseDef {
	const char *name;
	Kind kind;
	uint16_t mss;		// payload per frame (frag4: fragment data)
	unsigned nframes;	// frames per super-packet (a burst)
	unsigned ntags;
	DpdkKind dpdk;
	const char *untagged;	// the row the tagged-vs-untagged target compares with
	const char *note;	// printed after the row
};

constexpr CaseDef case_defs[] = {
	{"tcp4", Kind::tcp4, 1448, 45, 0, DpdkKind::tcp4, nullptr, ""},
	{"tcp4+vlan", Kind::tcp4, 1448, 45, 1, DpdkKind::tcp4, "tcp4", ""},
	{"tcp6", Kind::tcp6, 1428, 45, 0, DpdkKind::none, nullptr, "  (DPDK 22.11: no TCP/IPv6 GRO)"},
	{"udp4", Kind::udp4, 1472, 44, 0, DpdkKind::none, nullptr, "  (UDP_GRO; DPDK: no datagram GRO)"},
	{"frag4", Kind::frag4, 1480, 44, 0, DpdkKind::udp4_frag, nullptr, "  (IPv4 reassembly vs DPDK RTE_GRO_UDP_IPV4)"},
	{"tcp4+geneve", Kind::geneve, 1398, 45, 0, DpdkKind::vxlan_tcp4, nullptr,
	 "  (reference: DPDK's column is VXLAN, not Geneve)"},
};

constexpr size_t tcp_hdr_len = 20 + 12;	// with NOP NOP timestamp

bool is_tcp(Kind k)
{
	return k == Kind::tcp4 || k == Kind::tcp6 || k == Kind::geneve;
}

// The super-packet the row's frames are cut from: ACK only (DPDK 22.11's
// rte_gro merges nothing else), IPv4 with DF and ID ipid0.
Bytes super_packet(const CaseDef &c)
{
	PB b;
	b.eth(tv::kMacB, tv::kMacA);
	if (c.ntags)
		b.vlan(tv::kTpid8021Q, 100);
	if (c.kind == Kind::tcp6)
		b.ipv6(tv::kIp6A, tv::kIp6B);
	else
		b.ipv4(tv::kIpA, tv::kIpB, 64, ipid0);
	if (is_tcp(c.kind)) {
		b.tcp(tv::kPortA, tv::kPortB, 0x10, seq0);
		b.tcp_options({0x01, 0x01, 0x08, 0x0a, 0, 0, 0, 1, 0, 0, 0, 2});
	} else {
		b.udp(tv::kPortA, tv::kPortB);
	}
	size_t payload = size_t{c.mss} * c.nframes;
	if (c.kind == Kind::frag4)
		payload -= 8;	// the UDP header rides in the first fragment
	return b.payload(payload, 7).build();
}

// The frames, cut by gso_segment(). The super-packet carries the tag
// already (the engine's tag insertion is not what this measures).
std::string cut(const CaseDef &c, const Bytes &sp, std::vector<Bytes> &frames)
{
	GsoRequest r;
	switch (c.kind) {
	case Kind::tcp4:
	case Kind::geneve:
		r.type = GsoType::tso4;
		break;
	case Kind::tcp6:
		r.type = GsoType::tso6;
		break;
	case Kind::udp4:
		r.type = GsoType::uso4;
		break;
	case Kind::frag4:
		r.type = GsoType::ufo4;
		break;
	}
	r.mss = c.mss;
	r.geneve = c.kind == Kind::geneve ? &geneve_encap() : nullptr;
	std::vector<std::vector<std::byte>> mem(max_frames, std::vector<std::byte>(slot_size));
	std::vector<GsoFrame> out;
	for (auto &m : mem)
		out.push_back(GsoFrame{m.data(), slot_size});
	GsoError why = GsoError::ok;
	int n = gso_segment(std::as_bytes(std::span<const uint8_t>(sp)), r, out, &why);
	if (n <= 0)
		return std::string("gso_segment: ") + to_string(why);
	if (static_cast<unsigned>(n) != c.nframes)
		return "gso_segment cut " + std::to_string(n) + " frames, the row wants " + std::to_string(c.nframes);
	frames.clear();
	for (int k = 0; k < n; k++) {
		auto *p = reinterpret_cast<const uint8_t *>(out[k].data);
		frames.emplace_back(p, p + out[k].len);
	}
	return "";
}

// L2 (+ outer headers) + L3 + L4 header bytes of a frame of this row, and
// where its L4 header starts: what memcpy skips of every frame but the first.
struct Layout {
	size_t l4 = 0;		// offset of the (inner) L4 header, frag4: of the fragment data
	size_t hdr = 0;		// bytes before the payload
};
Layout layout(const CaseDef &c)
{
	Layout l;
	size_t outer = c.kind == Kind::geneve ? tv::kEthHdrLen + 20 + 8 + 8 : 0;
	size_t l2 = outer + tv::kEthHdrLen + c.ntags * tv::kVlanHdrLen;
	l.l4 = l2 + (c.kind == Kind::tcp6 ? 40 : 20);
	l.hdr = l.l4 + (is_tcp(c.kind) ? tcp_hdr_len : c.kind == Kind::udp4 ? 8 : 0);
	return l;
}

GroConfig engine_config(const CaseDef &c)
{
	GroConfig g;
	g.kinds.tcp = is_tcp(c.kind);
	g.kinds.udp = c.kind == Kind::udp4;
	g.kinds.frag = c.kind == Kind::frag4;
	g.kinds.geneve = c.kind == Kind::geneve;
	g.verify_csum = true;
	g.csum_out = GroCsumOut::complete;
	return g;
}

// Owner of the input slots: anonymous, populated up front.
class Slots {
public:
	Slots() = default;
	Slots(const Slots &) = delete;
	Slots &operator=(const Slots &) = delete;
	~Slots()
	{
		if (base_)
			munmap(base_, size_t{n_} * slot_size);
	}
	int init(unsigned n) noexcept
	{
		void *p = mmap(nullptr, size_t{n} * slot_size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		base_ = static_cast<std::byte *>(p);
		n_ = n;
		return 0;
	}
	std::byte *slot(size_t i) noexcept { return base_ + i * slot_size + slot_headroom; }
	unsigned size() const noexcept { return n_; }

private:
	std::byte *base_ = nullptr;
	unsigned n_ = 0;
};

// A burst copy: the frames of one super-packet in consecutive slots.
struct Copy {
	std::vector<GroFrame> frames;
};

struct Figure {
	bool valid = false;
	double mfps = 0, min = 0, max = 0;	// Mframes/s: median run, slowest, fastest
	double gbps = 0;			// input frame bytes
};

struct CaseRun {
	const CaseDef *def;
	Bytes super;
	std::vector<Bytes> frames;
	Layout lay;
	size_t frame_bytes = 0;		// one burst's input bytes
	size_t out_len = 0;		// the super-packet's length
	std::vector<Copy> copies;
	std::unique_ptr<GroEngine> eng, eng_zc;	// copy mode, zero-copy
	size_t bursts = 0;		// per timed run
	std::vector<double> t_ours, t_memcpy, t_dpdk, t_dpdk_csum;	// seconds per run
	std::vector<double> t_zc, t_dpdk_chain, t_dpdk_chain_csum;
	Figure ours, memcpy, dpdk, dpdk_csum, zc, dpdk_chain, dpdk_chain_csum;
	double vs_untagged = 0, zc_vs_untagged = 0;
};

// ---- ours and memcpy ----

struct Sink {
	size_t bytes = 0, packets = 0;
};

// One burst through an engine (copy mode or zero-copy): receive() + flush(),
// the sink taking each packet's length (zero-copy: data's and the frags').
size_t run_ours_burst(GroEngine &eng, const Copy &cp, Sink &s) noexcept
{
	auto take = [&s](const GroPacket &p) noexcept {
		s.bytes += p.size();
		s.packets++;
	};
	eng.receive(cp.frames, 0, {}, gro_sink(take));
	eng.flush(gro_sink(take));
	return cp.frames.size();
}

size_t run_memcpy_burst(const CaseRun &cr, const Copy &cp, std::byte *out) noexcept
{
	const auto &f = cp.frames;
	std::memcpy(out, f[0].data.data(), f[0].data.size());
	size_t at = f[0].data.size();
	const size_t skip = cr.def->kind == Kind::frag4 ? cr.lay.l4 : cr.lay.hdr;
	for (size_t k = 1; k < f.size(); k++) {
		size_t n = f[k].data.size() - skip;
		std::memcpy(out + at, f[k].data.data() + skip, n);
		at += n;
	}
	return f.size();
}

// ---- DPDK ----

#ifdef XO_HAVE_DPDK

class Dpdk {
public:
	Dpdk() = default;
	Dpdk(const Dpdk &) = delete;
	Dpdk &operator=(const Dpdk &) = delete;
	~Dpdk()
	{
		if (!up_)
			return;
		release();
		rte_mempool_free(pool_);
		std::string dir = rte_eal_get_runtime_dir();
		rte_eal_cleanup();
		rmdir(dir.c_str());
		if (size_t slash = dir.rfind('/'); slash != std::string::npos && slash > 0)
			rmdir(dir.substr(0, slash).c_str());
	}

	// EAL on @cpu with no hugepages, PCI or shared files; @nmbufs mbufs of a
	// 2048-byte data room. 0 or a negative errno.
	int init(int cpu, int verbose, unsigned nmbufs) noexcept
	{
		std::string lcore = std::to_string(cpu);
		std::string level = verbose ? "--log-level=7" : "--log-level=1";
		const char *argv[] = {"xo-bench",	 "--no-huge", "--no-pci",     "--no-shconf", "--no-telemetry",
				      "--file-prefix=xo-bench-gro", "-m",	 "256",	"-l",	   lcore.c_str(),
				      level.c_str()};
		int argc = static_cast<int>(std::size(argv));
		if (rte_eal_init(argc, const_cast<char **>(argv)) < 0)
			return -rte_errno;
		up_ = true;
		pool_ = rte_pktmbuf_pool_create("xo_gro_rx", nmbufs, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
		return pool_ ? 0 : -rte_errno;
	}

	// The row's frames into mbufs, @ncopies bursts of them, as a NIC's
	// receive path would leave them (lengths, packet_type).
	int load(const CaseRun &cr, size_t ncopies, std::string &why)
	{
		release();
		const CaseDef &c = *cr.def;
		kind_ = c.dpdk;
		param_ = {};
		param_.max_flow_num = 4;
		param_.max_item_per_flow = static_cast<uint16_t>(RTE_GRO_MAX_BURST_ITEM_NUM / 4);
		std::vector<Bytes> frames = cr.frames;
		uint32_t ptype = RTE_PTYPE_L3_IPV4 | (c.ntags ? RTE_PTYPE_L2_ETHER_VLAN : RTE_PTYPE_L2_ETHER);
		size_t l2 = tv::kEthHdrLen + c.ntags * tv::kVlanHdrLen;
		switch (c.dpdk) {
		case DpdkKind::tcp4:
			ptype |= RTE_PTYPE_L4_TCP;
			param_.gro_types = RTE_GRO_TCP_IPV4;
			break;
		case DpdkKind::udp4_frag:
			ptype |= RTE_PTYPE_L4_FRAG;
			param_.gro_types = RTE_GRO_UDP_IPV4;
			break;
		case DpdkKind::vxlan_tcp4:
			ptype |= RTE_PTYPE_L4_UDP | RTE_PTYPE_TUNNEL_VXLAN | RTE_PTYPE_INNER_L2_ETHER |
				 RTE_PTYPE_INNER_L3_IPV4 | RTE_PTYPE_INNER_L4_TCP;
			param_.gro_types = RTE_GRO_IPV4_VXLAN_TCP_IPV4;
			// Geneve without options has VXLAN's layout: port 4789 and the
			// VXLAN header (flags I, VNI) in place of Geneve's; the outer UDP
			// checksum is 0, nothing to fix
			for (Bytes &f : frames) {
				size_t udp = tv::kEthHdrLen + 20;
				f[udp + 2] = 4789 >> 8;
				f[udp + 3] = 4789 & 0xff;
				f[udp + 8] = 0x08;
				f[udp + 9] = f[udp + 10] = f[udp + 11] = 0;
			}
			break;
		case DpdkKind::none:
			return -EINVAL;
		}
		pristine_ = frames;
		for (size_t cp = 0; cp < ncopies; cp++) {
			std::vector<rte_mbuf *> burst;
			for (const Bytes &f : frames) {
				rte_mbuf *m = rte_pktmbuf_alloc(pool_);
				if (!m) {
					why = "mbuf pool exhausted";
					return -ENOMEM;
				}
				char *d = rte_pktmbuf_append(m, static_cast<uint16_t>(f.size()));
				if (!d) {
					rte_pktmbuf_free(m);
					why = "frame does not fit an mbuf";
					return -EMSGSIZE;
				}
				std::memcpy(d, f.data(), f.size());
				m->packet_type = ptype;
				if (c.dpdk == DpdkKind::vxlan_tcp4) {
					m->outer_l2_len = tv::kEthHdrLen;
					m->outer_l3_len = 20;
					m->l2_len = 8 + 8 + tv::kEthHdrLen;	// DPDK's tunnel convention
					m->l3_len = 20;
					m->l4_len = tcp_hdr_len;
				} else {
					m->l2_len = static_cast<uint16_t>(l2);
					m->l3_len = 20;
					m->l4_len = c.dpdk == DpdkKind::tcp4 ? tcp_hdr_len : 0;
				}
				burst.push_back(m);
			}
			bursts_.push_back(std::move(burst));
			data_off_ = bursts_[0][0]->data_off;
		}
		work_.resize(frames.size());
		return 0;
	}

	// One burst: (verify,) merge, copy each packet out (out null: the chain
	// left as it is, its length taken from the head mbuf, as zero-copy's sink
	// takes ours). Returns the number of frames in the packets returned (==
	// the burst when all went out), and their count in *npkts.
	size_t burst(size_t cp, bool csum, std::byte *out, size_t *npkts, size_t *out_len) noexcept
	{
		auto &b = bursts_[cp];
		std::copy(b.begin(), b.end(), work_.begin());
		uint16_t n = static_cast<uint16_t>(b.size());
		if (csum) {
			for (uint16_t i = 0; i < n; i++)
				bad_ += !csum_ok(b[i]);
		}
		uint16_t k = rte_gro_reassemble_burst(work_.data(), n, &param_);
		size_t frames = 0, at = 0;
		for (uint16_t i = 0; i < k; i++) {
			rte_mbuf *p = work_[i];
			frames += p->nb_segs;
			if (!out) {
				at += p->pkt_len;
				continue;
			}
			for (rte_mbuf *m = p; m; m = m->next) {
				if (at + m->data_len > out_cap)
					break;
				std::memcpy(out + at, rte_pktmbuf_mtod(m, const void *), m->data_len);
				at += m->data_len;
			}
			if (csum && kind_ == DpdkKind::udp4_frag)
				bad_ += !udp_datagram_ok(out, at);
		}
		if (npkts)
			*npkts = k;
		if (out_len)
			*out_len = at;
		return frames;
	}

	// The mbufs of burst @cp back as the NIC wrote them (not timed).
	void reset(size_t cp) noexcept
	{
		auto &b = bursts_[cp];
		for (size_t i = 0; i < b.size(); i++) {
			rte_mbuf *m = b[i];
			m->next = nullptr;
			m->nb_segs = 1;
			m->data_off = data_off_;
			m->data_len = static_cast<uint16_t>(pristine_[i].size());
			m->pkt_len = m->data_len;
			// the headers rte_gro may have rewritten (lengths, flags)
			std::memcpy(rte_pktmbuf_mtod(m, void *), pristine_[i].data(), std::min<size_t>(128, pristine_[i].size()));
		}
	}

	uint64_t bad() const noexcept { return bad_; }
	size_t copies() const noexcept { return bursts_.size(); }

private:
	// The checks an application must add: IPv4 header, TCP (frag4: the
	// header only; the datagram's UDP checksum once reassembled).
	bool csum_ok(rte_mbuf *m) const noexcept
	{
		size_t l3 = kind_ == DpdkKind::vxlan_tcp4 ? m->outer_l2_len : m->l2_len;
		auto *ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr *, l3);
		if (rte_ipv4_cksum(ip) != 0)
			return false;
		if (kind_ == DpdkKind::udp4_frag)
			return true;
		if (kind_ == DpdkKind::vxlan_tcp4) {
			ip = rte_pktmbuf_mtod_offset(m, const rte_ipv4_hdr *, m->outer_l2_len + m->outer_l3_len + m->l2_len);
			if (rte_ipv4_cksum(ip) != 0)
				return false;
		}
		return l4_ok(ip, reinterpret_cast<const char *>(ip) + 20);
	}
	// rte_ipv4_udptcp_cksum_verify is experimental in 22.11: the stable sum
	// over a segment whose checksum is right complements to 0 (UDP: 0xffff)
	static bool l4_ok(const rte_ipv4_hdr *ip, const void *l4) noexcept
	{
		uint16_t c = rte_ipv4_udptcp_cksum(ip, l4);
		return c == 0 || c == 0xffff;
	}
	bool udp_datagram_ok(const std::byte *f, size_t len) const noexcept
	{
		size_t l3 = tv::kEthHdrLen;
		if (len < l3 + 28)
			return false;
		auto *ip = reinterpret_cast<const rte_ipv4_hdr *>(f + l3);
		// over the datagram as reassembled (its IP total length is DPDK's)
		return l4_ok(ip, f + l3 + 20);
	}
	void release() noexcept
	{
		for (auto &b : bursts_)
			for (rte_mbuf *m : b) {
				m->next = nullptr;
				m->nb_segs = 1;
				rte_pktmbuf_free(m);
			}
		bursts_.clear();
	}

	bool up_ = false;
	rte_mempool *pool_ = nullptr;
	DpdkKind kind_ = DpdkKind::none;
	rte_gro_param param_{};
	std::vector<std::vector<rte_mbuf *>> bursts_;
	std::vector<Bytes> pristine_;
	std::vector<rte_mbuf *> work_;
	uint16_t data_off_ = 0;
	uint64_t bad_ = 0;
};

#endif

// ---- timing and reporting ----

double now_s() noexcept
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Figure figure(const CaseRun &cr, const std::vector<double> &t)
{
	Figure f;
	if (t.empty() || std::any_of(t.begin(), t.end(), [](double x) { return x <= 0; }))
		return f;
	double frames = double(cr.bursts * cr.frames.size());
	f.valid = true;
	f.mfps = frames / median(t) / 1e6;
	f.min = frames / *std::max_element(t.begin(), t.end()) / 1e6;
	f.max = frames / *std::min_element(t.begin(), t.end()) / 1e6;
	f.gbps = double(cr.bursts * cr.frame_bytes) * 8 / median(t) / 1e9;
	return f;
}

// Paired-run ratios of two methods: median, min, max of t_b[i] / t_a[i].
struct Ratio {
	double med = 0, min = 0, max = 0;
};
Ratio paired(const std::vector<double> &ta, const std::vector<double> &tb)
{
	Ratio r;
	std::vector<double> v;
	for (size_t i = 0; i < ta.size() && i < tb.size(); i++)
		if (ta[i] > 0 && tb[i] > 0)
			v.push_back(tb[i] / ta[i]);
	if (v.empty() || v.size() != ta.size())
		return r;
	r.med = median(v);
	r.min = *std::min_element(v.begin(), v.end());
	r.max = *std::max_element(v.begin(), v.end());
	return r;
}

std::string num(const Figure &f)
{
	return f.valid ? fmt("%.2f", f.mfps) : "-";
}

std::string span_of(const Figure &f)
{
	return f.valid ? fmt("%.2f", f.min) + "-" + fmt("%.2f", f.max) : "-";
}

std::string times(const Ratio &r)
{
	return r.med > 0 ? fmt("%.2fx", r.med) : "-";
}

std::string json_num(double v)
{
	return v > 0 ? fmt("%.4g", v) : "null";
}

std::string json_ratio(const Ratio &r)
{
	if (r.med <= 0)
		return "null";
	return "{\"median\":" + fmt("%.4g", r.med) + ",\"min\":" + fmt("%.4g", r.min) + ",\"max\":" + fmt("%.4g", r.max) + "}";
}

// One burst through the engine, checked: one packet, every frame in it,
// the super-packet's bytes. "" or what is wrong.
// Zero-copy: the packet gathered from its data and frags.
std::string verify_ours(CaseRun &cr, GroEngine &eng)
{
	std::vector<Bytes> got;
	std::vector<uint16_t> segs;
	auto take = [&](const GroPacket &p) noexcept {
		Bytes b(p.size());
		p.gather(std::as_writable_bytes(std::span<uint8_t>(b)));
		got.push_back(std::move(b));
		segs.push_back(p.segs);
	};
	std::vector<GroVerdict> v(cr.copies[0].frames.size());
	if (eng.receive(cr.copies[0].frames, 0, v, gro_sink(take)) < 0)
		return "receive() failed";
	eng.flush(gro_sink(take));
	if (got.size() != 1)
		return std::to_string(got.size()) + " packets out of one burst (first frame's verdict " +
		       to_string(v[0]) + ", last " + to_string(v.back()) + ")";
	if (segs[0] != cr.frames.size())
		return "a super-packet of " + std::to_string(segs[0]) + " frames, the burst has " +
		       std::to_string(cr.frames.size());
	const Bytes &o = got[0];
	cr.out_len = o.size();
	// from the L4 header on (frag4: the UDP header is the datagram's first
	// bytes), the super-packet the frames were cut from
	size_t sp_l4 = layout(*cr.def).l4 - (cr.def->kind == Kind::geneve ? tv::kEthHdrLen + 20 + 8 + 8 : 0);
	if (o.size() < cr.lay.l4 || o.size() - cr.lay.l4 != cr.super.size() - sp_l4 ||
	    !std::equal(o.begin() + static_cast<long>(cr.lay.l4), o.end(), cr.super.begin() + static_cast<long>(sp_l4)))
		return "the super-packet's L4 bytes are not those the frames were cut from";
	if (cr.def->kind != Kind::geneve && cr.def->kind != Kind::frag4 && o != cr.super)
		return "the super-packet is not the one the frames were cut from";
	return "";
}

} // namespace

int run_gro(const Options &opt)
{
	const bool quick = opt.quick;
	const uint64_t frames = opt.frames ? opt.frames : (quick ? quick_frames : full_frames);
	const unsigned nruns = opt.runs ? opt.runs : (quick ? quick_runs : full_runs);
	const unsigned nslots = opt.slots ? opt.slots : default_slots;

	int cpu = pin_to_cpu(opt.cpu);
	if (cpu < 0)
		return fail("pinning to a CPU", cpu);

#ifdef XO_HAVE_DPDK
	Dpdk dpdk;
	std::string dpdk_status = "DPDK " XO_DPDK_VERSION " librte_gro";
	bool have_dpdk = true;
	if (int err = dpdk.init(cpu, opt.verbose, nslots + 64); err < 0) {
		have_dpdk = false;
		dpdk_status = std::string("DPDK: EAL init failed (") + std::strerror(-err) + ")";
	}
	if ((cpu = pin_to_cpu(cpu)) < 0)
		return fail("pinning to a CPU", cpu);
	const std::string dpdk_flags = XO_DPDK_FLAGS;
#else
	[[maybe_unused]] const bool have_dpdk = false;
	std::string dpdk_status = "DPDK: not built (libdpdk-dev not installed)";
	const std::string dpdk_flags;
#endif

	Slots slots;
	if (int err = slots.init(nslots); err < 0)
		return fail("mapping the slots", err);
	std::vector<std::byte> outbuf(out_cap);

	for (const auto &name : opt.cases)
		if (std::none_of(std::begin(case_defs), std::end(case_defs),
				 [&](const CaseDef &c) { return name == c.name; }))
			return fail("--case " + name + ": no such case");
	std::vector<CaseRun> runs;
	runs.reserve(std::size(case_defs));
	for (const CaseDef &c : case_defs) {
		if (!opt.cases.empty() && std::find(opt.cases.begin(), opt.cases.end(), c.name) == opt.cases.end())
			continue;
		CaseRun cr;
		cr.def = &c;
		cr.super = super_packet(c);
		if (std::string e = cut(c, cr.super, cr.frames); !e.empty())
			return fail(std::string(c.name) + ": " + e);
		cr.lay = layout(c);
		for (const Bytes &f : cr.frames)
			cr.frame_bytes += f.size();
		if (int err = GroEngine::create(engine_config(c), &cr.eng); err < 0)
			return fail(std::string(c.name) + ": GroEngine::create", err);
		GroConfig zc = engine_config(c);
		zc.zero_copy = true;
		if (int err = GroEngine::create(zc, &cr.eng_zc); err < 0)
			return fail(std::string(c.name) + ": GroEngine::create (zero-copy)", err);
		cr.bursts = std::max<uint64_t>(1, frames / cr.frames.size());
		runs.push_back(std::move(cr));
	}

	// Every row's frames through the same slots, one row at a time: copies
	// of the burst one after another, as many as the slots hold.
	auto place = [&](CaseRun &cr) {
		size_t per = cr.frames.size();
		size_t ncopies = std::max<size_t>(1, slots.size() / per);
		cr.copies.assign(ncopies, Copy{});
		for (size_t cp = 0; cp < ncopies; cp++)
			for (size_t k = 0; k < per; k++) {
				std::byte *d = slots.slot((cp * per + k) % slots.size());
				std::memcpy(d, cr.frames[k].data(), cr.frames[k].size());
				cr.copies[cp].frames.push_back(
					GroFrame{std::span<const std::byte>(d, cr.frames[k].size()), {}});
			}
	};

	for (size_t i = 0; i < runs.size(); i++) {
		CaseRun &cr = runs[i];
		place(cr);
		if (std::string e = verify_ours(cr, *cr.eng); !e.empty())
			return fail(std::string(cr.def->name) + ": engine output rejected: " + e);
		if (std::string e = verify_ours(cr, *cr.eng_zc); !e.empty())
			return fail(std::string(cr.def->name) + ": zero-copy engine output rejected: " + e);
		const size_t ncopies = cr.copies.size();
		bool with_dpdk = false;
#ifdef XO_HAVE_DPDK
		if (have_dpdk && cr.def->dpdk != DpdkKind::none) {
			std::string why;
			if (int err = dpdk.load(cr, ncopies, why); err < 0)
				return fail(std::string(cr.def->name) + ": DPDK input: " + why, err);
			size_t npkts = 0, len = 0;
			size_t got = dpdk.burst(0, false, outbuf.data(), &npkts, &len);
			dpdk.reset(0);
			if (npkts != 1 || got != cr.frames.size())
				return fail(std::string(cr.def->name) + ": DPDK returned " + std::to_string(npkts) +
					    " packets of " + std::to_string(got) + " frames for one burst");
			// the payload after the (inner) L4 header must be ours
			size_t skip = cr.def->kind == Kind::frag4 ? cr.lay.l4 : cr.lay.hdr;
			if (len != cr.out_len ||
			    std::memcmp(outbuf.data() + skip, cr.super.data() + cr.super.size() - (len - skip), len - skip))
				return fail(std::string(cr.def->name) + ": DPDK's super-packet (" + std::to_string(len) +
					    " bytes) is not ours (" + std::to_string(cr.out_len) + ")");
			with_dpdk = true;
		}
#endif
		// warm-up, then interleaved runs of every method
		Sink sink;
		for (size_t b = 0; b < std::min<size_t>(cr.bursts, ncopies); b++) {
			run_ours_burst(*cr.eng, cr.copies[b % ncopies], sink);
			run_ours_burst(*cr.eng_zc, cr.copies[b % ncopies], sink);
			run_memcpy_burst(cr, cr.copies[b % ncopies], outbuf.data());
		}
		size_t want = cr.bursts * cr.frames.size();
		size_t cp = 0;
		// one timed run of an engine over every burst: its seconds, or -1
		// when a burst lost frames or packets
		auto time_engine = [&](GroEngine &eng) {
			double t = 0;
			size_t got = 0;
			Sink s;
			for (size_t b = 0; b < cr.bursts; b++, cp = (cp + 1) % ncopies) {
				double t0 = now_s();
				got += run_ours_burst(eng, cr.copies[cp], s);
				t += now_s() - t0;
			}
			return got == want && s.packets == cr.bursts ? t : -1;
		};
		for (unsigned r = 0; r < nruns; r++) {
			cr.t_ours.push_back(time_engine(*cr.eng));
			cr.t_zc.push_back(time_engine(*cr.eng_zc));
			double t = 0;
			size_t got = 0;
			for (size_t b = 0; b < cr.bursts; b++, cp = (cp + 1) % ncopies) {
				double t0 = now_s();
				got += run_memcpy_burst(cr, cr.copies[cp], outbuf.data());
				t += now_s() - t0;
			}
			cr.t_memcpy.push_back(got == want ? t : -1);
#ifdef XO_HAVE_DPDK
			if (with_dpdk) {
				// copied out into one buffer (the copy mode's reference), then
				// chained (zero-copy's); +csum of the chain: frag4's check is
				// of the datagram reassembled, which needs it in one buffer
				const bool chain_csum = cr.def->dpdk != DpdkKind::udp4_frag;
				for (int way = 0; way < 4; way++) {
					const bool chained = way >= 2, csum = way & 1;
					if (chained && csum && !chain_csum)
						continue;
					t = 0;
					got = 0;
					size_t dcp = cp % dpdk.copies();
					for (size_t b = 0; b < cr.bursts; b++, dcp = (dcp + 1) % dpdk.copies()) {
						double t0 = now_s();
						got += dpdk.burst(dcp, csum, chained ? nullptr : outbuf.data(), nullptr, nullptr);
						t += now_s() - t0;
						dpdk.reset(dcp);
					}
					auto &tv = chained ? (csum ? cr.t_dpdk_chain_csum : cr.t_dpdk_chain)
							   : (csum ? cr.t_dpdk_csum : cr.t_dpdk);
					tv.push_back(got == want ? t : -1);
				}
			}
#endif
		}
		cr.ours = figure(cr, cr.t_ours);
		cr.memcpy = figure(cr, cr.t_memcpy);
		cr.dpdk = figure(cr, cr.t_dpdk);
		cr.dpdk_csum = figure(cr, cr.t_dpdk_csum);
		cr.zc = figure(cr, cr.t_zc);
		cr.dpdk_chain = figure(cr, cr.t_dpdk_chain);
		cr.dpdk_chain_csum = figure(cr, cr.t_dpdk_chain_csum);
		if (!cr.ours.valid || !cr.memcpy.valid || !cr.zc.valid)
			return fail(std::string(cr.def->name) + ": a timed run lost frames");
		if (with_dpdk && (!cr.dpdk.valid || !cr.dpdk_csum.valid || !cr.dpdk_chain.valid ||
				  (cr.def->dpdk != DpdkKind::udp4_frag && !cr.dpdk_chain_csum.valid)))
			return fail(std::string(cr.def->name) + ": a DPDK run lost frames");
		if (const CaseRun *u = find_row(runs, cr.def->untagged)) {
			// tagged vs untagged: pairs of short blocks, order alternating;
			// the untagged row's frames are put back in the slots for its blocks
			const unsigned pairs = quick ? xuntag_quick_pairs : xuntag_pairs;
			CaseRun &ur = const_cast<CaseRun &>(*u);
			std::vector<double> rr, rz;
			size_t tcp = 0, ucp = 0;
			auto block = [&](CaseRun &x, size_t &at, bool zc) {
				Sink s;
				GroEngine &eng = zc ? *x.eng_zc : *x.eng;
				double t0 = now_s();
				for (size_t b = 0; b < xuntag_block; b++, at = (at + 1) % x.copies.size())
					run_ours_burst(eng, x.copies[at], s);
				double t = now_s() - t0;
				return s.packets == xuntag_block && t > 0 ? t : -1.0;
			};
			// both rows' copies in the slots at once: each takes half
			size_t half = slots.size() / 2;
			auto place_half = [&](CaseRun &x, size_t base) {
				size_t per = x.frames.size();
				size_t n = std::max<size_t>(1, half / per);
				x.copies.assign(n, Copy{});
				for (size_t c2 = 0; c2 < n; c2++)
					for (size_t k = 0; k < per; k++) {
						std::byte *d = slots.slot(base + (c2 * per + k) % half);
						std::memcpy(d, x.frames[k].data(), x.frames[k].size());
						x.copies[c2].frames.push_back(
							GroFrame{std::span<const std::byte>(d, x.frames[k].size()), {}});
					}
			};
			place_half(cr, 0);
			place_half(ur, half);
			// pairs of each mode in turn
			for (unsigned p = 0; p < 2 * pairs; p++) {
				const bool zc = p & 2;
				double tt, tu;
				if (p & 1) {
					tu = block(ur, ucp, zc);
					tt = block(cr, tcp, zc);
				} else {
					tt = block(cr, tcp, zc);
					tu = block(ur, ucp, zc);
				}
				if (tt <= 0 || tu <= 0)
					return fail(std::string(cr.def->name) + ": a tagged/untagged block lost packets");
				// frames per second, tagged over untagged
				(zc ? rz : rr).push_back((double(cr.frames.size()) / tt) / (double(ur.frames.size()) / tu));
			}
			cr.vs_untagged = median(rr);
			cr.zc_vs_untagged = median(rz);
		}
	}

	// the tcp4 >= 1.5x DPDK target on equal work, DPDK without its checks
	// as references (see the top)
	Target targets[] = {
		{"tcp4 zero-copy >= 1.5x DPDK chained +csum (equal work)", target_vs_dpdk},
		{"tcp4 copy mode >= 1.5x DPDK + copy out +csum (equal work)", target_vs_dpdk},
		{"tcp4 zero-copy >= 1.5x DPDK + copy out (DPDK no checks)", target_vs_dpdk},
		{"ref: tcp4 zero-copy vs DPDK chained, no checks", target_vs_dpdk, true},
		{"1448-byte TCP segments, copy mode >= 0.6x memcpy", target_vs_memcpy},
		{"tagged >= 0.97x untagged, copy mode", target_vs_untagged},
		{"tagged >= 0.97x untagged, zero-copy", target_vs_untagged},
	};
	std::vector<Ratio> r_memcpy, r_dpdk, r_dpdk_csum, z_memcpy, z_copy, z_dpdk, z_chain, z_chain_csum;
	for (const auto &cr : runs) {
		r_memcpy.push_back(paired(cr.t_ours, cr.t_memcpy));
		r_dpdk.push_back(paired(cr.t_ours, cr.t_dpdk));
		r_dpdk_csum.push_back(paired(cr.t_ours, cr.t_dpdk_csum));
		z_memcpy.push_back(paired(cr.t_zc, cr.t_memcpy));
		z_copy.push_back(paired(cr.t_zc, cr.t_ours));
		z_dpdk.push_back(paired(cr.t_zc, cr.t_dpdk));
		z_chain.push_back(paired(cr.t_zc, cr.t_dpdk_chain));
		z_chain_csum.push_back(paired(cr.t_zc, cr.t_dpdk_chain_csum));
		const Ratio &rm = r_memcpy.back();
		if (!std::strcmp(cr.def->name, "tcp4")) {
			targets[0].add(cr.def->name, z_chain_csum.back().med);
			targets[1].add(cr.def->name, r_dpdk_csum.back().med);
			targets[2].add(cr.def->name, z_dpdk.back().med);
			targets[3].add(cr.def->name, z_chain.back().med);
		}
		if (is_tcp(cr.def->kind) && cr.def->kind != Kind::geneve && cr.def->mss == 1448)
			targets[4].add(cr.def->name, rm.med);
		if (find_row(runs, cr.def->untagged)) {
			targets[5].add(cr.def->name, cr.vs_untagged);
			targets[6].add(cr.def->name, cr.zc_vs_untagged);
		}
	}
	bool all_pass = true;
	for (const auto &t : targets)
		all_pass = all_pass && (t.ref || !t.rows || t.pass());

	if (opt.json) {
		std::printf("{\"bench\":\"gro\",\"cpu\":%d,\"slots\":%u,\"slot_size\":%zu,\"frames_per_run\":%llu,\"runs\":%u,"
			    "\"quick\":%s,\"dpdk\":\"%s\",\n \"engine_flags\":\"%s\",\"dpdk_flags\":\"%s\",\n \"cases\":[\n",
			    cpu, nslots, slot_size, (unsigned long long)frames, nruns, quick ? "true" : "false",
			    dpdk_status.c_str(), XO_ENGINE_FLAGS, dpdk_flags.c_str());
		for (size_t i = 0; i < runs.size(); i++) {
			const CaseRun &cr = runs[i];
			std::printf("  {\"name\":\"%s\",\"frames_per_burst\":%zu,\"frame_len\":%zu,\"super_len\":%zu,"
				    "\"ours_mfps\":%s,\"ours_min\":%s,\"ours_max\":%s,\"ours_gbit\":%s,\"memcpy_mfps\":%s,"
				    "\"dpdk_mfps\":%s,\"dpdk_csum_mfps\":%s,\"dpdk_is\":\"%s\",\"vs_memcpy\":%s,\"vs_dpdk\":%s,"
				    "\"vs_dpdk_csum\":%s,\"vs_untagged\":%s,\"zc_mfps\":%s,\"zc_min\":%s,\"zc_max\":%s,"
				    "\"dpdk_chain_mfps\":%s,\"dpdk_chain_csum_mfps\":%s,\"zc_vs_copy\":%s,\"zc_vs_memcpy\":%s,"
				    "\"zc_vs_dpdk\":%s,\"zc_vs_dpdk_chain\":%s,\"zc_vs_dpdk_chain_csum\":%s,\"zc_vs_untagged\":%s}%s\n",
				    cr.def->name, cr.frames.size(), cr.frames[0].size(), cr.out_len, json_num(cr.ours.mfps).c_str(),
				    json_num(cr.ours.min).c_str(), json_num(cr.ours.max).c_str(), json_num(cr.ours.gbps).c_str(),
				    json_num(cr.memcpy.mfps).c_str(), json_num(cr.dpdk.mfps).c_str(),
				    json_num(cr.dpdk_csum.mfps).c_str(),
				    cr.def->dpdk == DpdkKind::vxlan_tcp4 ? "vxlan (reference)"
				    : cr.def->dpdk == DpdkKind::none ? "none"
								       : "same frames",
				    json_ratio(r_memcpy[i]).c_str(), json_ratio(r_dpdk[i]).c_str(),
				    json_ratio(r_dpdk_csum[i]).c_str(), json_num(cr.vs_untagged).c_str(), json_num(cr.zc.mfps).c_str(),
				    json_num(cr.zc.min).c_str(), json_num(cr.zc.max).c_str(), json_num(cr.dpdk_chain.mfps).c_str(),
				    json_num(cr.dpdk_chain_csum.mfps).c_str(), json_ratio(z_copy[i]).c_str(),
				    json_ratio(z_memcpy[i]).c_str(), json_ratio(z_dpdk[i]).c_str(), json_ratio(z_chain[i]).c_str(),
				    json_ratio(z_chain_csum[i]).c_str(), json_num(cr.zc_vs_untagged).c_str(),
				    i + 1 < runs.size() ? "," : "");
		}
		std::printf(" ],\n \"targets\":[\n");
		for (size_t i = 0; i < std::size(targets); i++) {
			const Target &t = targets[i];
			std::printf("  {\"target\":\"%s\",\"threshold\":%g,\"worst\":%s,\"worst_case\":\"%s\",\"rows\":%u,"
				    "\"passed\":%u,\"verdict\":\"%s\"}%s\n",
				    t.name, t.threshold, json_num(t.worst).c_str(), t.worst_case, t.rows, t.passed,
				    t.rows ? (t.pass() ? (t.ref ? "ref, over" : "met") : (t.ref ? "ref, under" : "not met")) : "n/a",
				    i + 1 < std::size(targets) ? "," : "");
		}
		std::printf(" ]}\n");
	} else {
		std::printf("tools/bench gro: received frames merged into super-packets, Mframes/s per core (CPU %d)%s\n", cpu,
			    quick ? "  [--quick: smoke test, not a result]" : "");
		std::printf("  input: the frames of one ~64 KiB super-packet per burst (cut by gso_segment), in %u UMEM-like "
			    "slots of %zu B (%.1f MiB), a burst's copy in turn\n",
			    nslots, slot_size, nslots * double(slot_size) / (1 << 20));
		std::printf("  ours: receive() + flush() per burst, checksums verified (always, for merged frames), complete "
			    "L4 checksum written;\n  copy mode (first table): the payloads copied and summed in one pass into "
			    "one buffer; zero-copy (second table): summed in place, referenced as frags\n");
		std::printf("  memcpy: the bytes ours writes (first frame whole, later frames' payload) into one buffer\n");
		std::printf("  timed per burst (wall clock), summed; median of %u interleaved runs of ~%llu frames, "
			    "[slowest-fastest run]; ratios: median of the paired runs\n",
			    nruns, (unsigned long long)frames);
		std::printf("  built: the engine (xo_gro) with '%s', as the project builds it; %s\n", XO_ENGINE_FLAGS,
			    have_dpdk ? ("DPDK's code inlined here with '" + dpdk_flags +
					 "': -O3 and libdpdk.pc's flags, as DPDK's examples")
						.c_str()
				      : "no DPDK rows");
		if (have_dpdk)
			std::printf("  %s: rte_gro_reassemble_burst (verifies no checksum) + each packet copied into one "
				    "buffer (first table) or its mbuf chain left as it is (chained, second table);\n"
				    "  +csum: rte_ipv4_cksum + rte_ipv4_udptcp_cksum checked per frame first; not timed: the "
				    "mbufs put back as a NIC's RX wrote them\n",
				    dpdk_status.c_str());
		else
			std::printf("  %s\n", dpdk_status.c_str());
		std::printf("  verified before timing: one super-packet per burst, the one the frames were cut from "
			    "(DPDK: the same payload)\n\n");
		std::printf("copy mode\n");
		std::printf("%-12s %3s %5s | %7s %11s | %7s | %6s %6s | %7s %7s %8s %6s\n", "case", "frm", "frame",
			    "Mfrm/s", "min-max", "memcpy", "DPDK", "+csum", "xmemcpy", "xDPDK", "xDPDKcs", "xuntag");
		for (size_t i = 0; i < runs.size(); i++) {
			const CaseRun &cr = runs[i];
			std::printf("%-12s %3zu %5zu | %7s %11s | %7s | %6s %6s | %7s %7s %8s %6s%s\n", cr.def->name,
				    cr.frames.size(), cr.frames[0].size(), num(cr.ours).c_str(), span_of(cr.ours).c_str(),
				    num(cr.memcpy).c_str(), num(cr.dpdk).c_str(), num(cr.dpdk_csum).c_str(),
				    times(r_memcpy[i]).c_str(), times(r_dpdk[i]).c_str(), times(r_dpdk_csum[i]).c_str(),
				    cr.vs_untagged > 0 ? fmt("%.2fx", cr.vs_untagged).c_str() : "-", cr.def->note);
		}
		// zero-copy: against DPDK chained (the like-for-like output), its
		// copy mode, DPDK with the copy out (the first table's) and memcpy
		std::printf("\nzero-copy (GroConfig::zero_copy; frag4 reassembles by copying still)\n");
		std::printf("%-12s | %7s %11s | %7s %7s | %7s %7s %7s %7s %7s %6s\n", "case", "Mfrm/s", "min-max",
			    "DPDKch", "+csum", "xDPDKch", "xDPDKcc", "xDPDK", "xcopy", "xmemcpy", "xuntag");
		for (size_t i = 0; i < runs.size(); i++) {
			const CaseRun &cr = runs[i];
			std::printf("%-12s | %7s %11s | %7s %7s | %7s %7s %7s %7s %7s %6s\n", cr.def->name,
				    num(cr.zc).c_str(), span_of(cr.zc).c_str(), num(cr.dpdk_chain).c_str(),
				    num(cr.dpdk_chain_csum).c_str(), times(z_chain[i]).c_str(), times(z_chain_csum[i]).c_str(),
				    times(z_dpdk[i]).c_str(), times(z_copy[i]).c_str(), times(z_memcpy[i]).c_str(),
				    cr.zc_vs_untagged > 0 ? fmt("%.2fx", cr.zc_vs_untagged).c_str() : "-");
		}
		std::printf("  xDPDKch: vs DPDK chained (no checks: it reads the headers only); xDPDKcc: vs DPDK chained "
			    "+csum; xDPDK: vs DPDK with its copy out (first table)\n");
		std::printf("\n%-58s %8s  %-10s %6s  %s\n", "target", "worst", "row", "rows", "verdict");
		for (const auto &t : targets) {
			std::string w = t.rows ? fmt("%.2fx", t.worst) : "-";
			std::printf("%-58s %8s  %-10s %2u/%-3u  %s\n", t.name, w.c_str(), t.worst_case, t.passed, t.rows,
				    t.rows ? (t.pass() ? (t.ref ? "ref: over" : "met") : (t.ref ? "ref: under" : "NOT MET"))
					   : "n/a (no DPDK)");
		}
	}
	return opt.check_target && !all_pass ? exit_failure : exit_ok;
}

} // namespace xoffload::bench
