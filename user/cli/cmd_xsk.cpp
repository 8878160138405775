// send / recv: AF_XDP traffic generator and receiver (one socket per queue
// over one shared UMEM), with xdp-bench-like interval stats and a summary.
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "commands.hpp"
#include "xsk_rules.hpp"
#include "xoffload/channels.hpp"
#include "xoffload/fd.hpp"
#include "xoffload/loader.hpp"
#include "xoffload/pcap.hpp"
#include "xoffload/traffic.hpp"
#include "xoffload/features.hpp"
#include "xoffload/geneve.hpp"
#include "xoffload/gso.hpp"
#include "xoffload/kernel.hpp"
#include "xoffload/linkwatch.hpp"
#include "xoffload/pins.hpp"
#include "xoffload/rx_vlan.hpp"
#include "xoffload/xsk.hpp"
#include "xoffload/xsk_prog.hpp"

namespace xoffload::cli {

namespace {

using xsk::XskSocket;

struct XskOpts {
	std::string ifname;
	std::optional<uint32_t> queue;
	// queues 0..N-1 ("N"), a list ("0-3", "1,3") or "all"; recv --geneve:
	// a plain N is the older form of --sockets (N sockets on --queue)
	std::optional<std::string> queues;
	std::optional<uint32_t> sockets;	// recv --geneve: sockets per queue
	std::optional<uint64_t> count;
	std::optional<double> duration;
	double interval = 1.0;
	std::string pcap;
	std::string xsk_mode = "auto";
	uint32_t ring_size = 2048;
	uint32_t frames = 0;		// per queue; 0 = 2 * ring size
	uint32_t frame_size = 4096;
	uint32_t batch = 64;
	bool no_need_wakeup = false;
	bool busy_poll = false;
	bool check_accounting = false;
	// send
	std::string dst_mac, src_mac, src_ip, dst_ip, proto = "udp", vlan;
	uint16_t src_port = 40001, dst_port = 40002;
	uint32_t size = 64;
	std::optional<double> rate;
	bool tx_csum = false;
	bool no_tx_metadata = false;
	std::string kernel = "running";	// send: whose driver facts decide the checksum
	std::string gso;		// tso | uso | ufo: --size is a super-packet, segmented per send
	bool sw_csum = false;		// --gso: never leave the checksum to the queue
	uint16_t mss = 0;		// 0: from a 1500-byte MTU
	// send --geneve-vni: every frame in Geneve (RFC 8926) by the GSO engine
	std::string geneve_vni;
	std::optional<std::string> geneve_port;	// default 6081
	std::string outer_src_ip, outer_dst_ip, outer_src_mac, outer_dst_mac;
	bool geneve_csum = false;
	// recv
	std::string xdp_mode = "native";
	std::string multi_buffer = "auto";	// XDP_USE_SG: auto (when the MTU needs it), on, off
	std::optional<uint16_t> filter_port;
	std::optional<uint16_t> filter_vlan;
	bool keep_rx_vlan = false;	// recv --keep-rx-vlan
	std::optional<double> idle;
	bool xdp_mode_given = false;
	bool geneve = false;		// sockets in xdp_geneve's XSKMAP instead of xdp_xsk
	std::optional<std::string> vni;	// --geneve: take the socket count from this VNI's rule
	bool pcap_per_socket = false;	// FILE.<socket>.pcap each
};

double now_s()
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Bytes of a received frame one UMEM chunk holds: the kernel keeps
// XDP_PACKET_HEADROOM in front of the data (copy and zero-copy mode alike).
constexpr uint32_t kXdpPacketHeadroom = 256;

// Sockets of one command, with what the summary reports.
struct Engine {
	std::optional<xsk::Umem> umem;
	std::vector<XskSocket> socks;
	std::string mode;		// "copy" / "zero-copy"
	std::string md;			// tx-metadata state: enabled, off, unsupported, refused, n/a
	std::string md_why;		// why not enabled, where it was wanted
	bool sg = false;		// bound with XDP_USE_SG
	std::string sg_why;		// why not, where it was wanted
	std::string csum = "n/a";	// send: who completes the L4 checksum (tx-metadata, software)
	std::string csum_why;
	std::string tx_csum_note;	// why --tx-csum's request went to software, "" when it did not
	bool shared_queue = false;	// several sockets per queue, one fill ring each (create_shared)
	std::vector<size_t> fill_ring_of;	// per socket: the socket whose fill ring (and pool) it uses
	std::vector<uint32_t> slot_of;	// per socket: its slot in its queue's group (0..N-1)
	bool geneve = false;		// socket k sits in slot slot_of[k] of its queue's row of xdp_geneve's XSKMAP
};

// What the sockets of a command are for.
struct EngineUse {
	bool rx = false, tx = false;
	bool rx_sg = false;		// bind with XDP_USE_SG where the kernel has it
	uint32_t tx_frame = 0;		// bytes of the largest frame sent whole (0: each fits a chunk)
	uint32_t shared = 0;		// > 0: that many sockets on each queue, one buffer pool per queue
	bool tx_md = false;		// a frame may ask for a TX metadata checksum: register it
};

Result<Engine> make_sockets(const Netdev &dev, const XskOpts &o, const EngineUse &use, const xsk::UmemConfig &uc,
			    const std::vector<uint32_t> &qs, uint32_t per, xsk::BindMode bm);

// recv --geneve: --queues names the RX queues only as a list or "all"; a
// plain number there is the older form of --sockets.
bool queues_is_count(const XskOpts &o)
{
	return o.queues && o.queues->find_first_not_of("0123456789") == std::string::npos;
}

// The queues a command binds: --queue Q, --queues N|LIST|all (all: the
// device's RX or TX queue count), else queue 0. @limit: queues the program
// behind the sockets can steer to.
Result<std::vector<uint32_t>> bound_queues(const Netdev &dev, const XskOpts &o, bool rx, unsigned limit)
{
	if (!o.queues || (o.geneve && queues_is_count(o)))
		return std::vector<uint32_t>{o.queue.value_or(0)};
	unsigned n = 0;
	if (*o.queues == "all") {
		auto ch = read_channels(dev);
		if (!ch)
			return runtime_error("--queues all: " + ch.error().msg, ch.error().err);
		n = rx ? ch->rx : ch->tx;
	}
	return parse_queue_list(*o.queues, n, limit);
}

// A zero-copy bind (--xsk-mode zero-copy) the kernel refused, with what the
// driver's facts under the running kernel say: no zero-copy on this release
// (virtio_net before 6.13: xp_assign_dev() answers EOPNOTSUPP), or
// virtio_net without a DMA device (EINVAL from virtnet_xsk_pool_enable(),
// which the bind would otherwise call an invalid queue).
Error zc_bind_error(const Netdev &dev, const XskOpts &o, Error e)
{
	if (o.xsk_mode != "zero-copy" || (e.err != EOPNOTSUPP && e.err != EINVAL))
		return e;
	const features::NicFacts f = features::nic_facts_running(live_driver_name(dev.name));
	if (!f.modelled)
		return e;
	const std::string drv = dev_kind_name(f.driver);
	if (!f.zero_copy.value)
		e.msg += ": " + drv + " has no AF_XDP zero-copy on Linux " + std::to_string(f.major) + "." +
			 std::to_string(f.minor) + " (" + f.zero_copy.source + ")";
	else if (f.driver == DevKind::virtio_net && e.err == EINVAL)
		e.msg += ": virtio_net binds zero-copy only on a device with VIRTIO_F_ACCESS_PLATFORM (the DMA API; "
			 "qemu: iommu_platform=on,disable-legacy=on)";
	return e;
}

// The UMEM and the sockets of a command on queues @qs. TX metadata is
// registered only where use asks for it, and dropped (with the reason in
// md_why) where the kernel or the driver refuses it.
Result<Engine> make_engine(const Netdev &dev, const XskOpts &o, const EngineUse &use, const std::vector<uint32_t> &qs)
{
	const bool tx = use.tx;
	auto bm = xsk::parse_bind_mode(o.xsk_mode);
	if (!bm)
		return bm.error();
	if (use.shared > XO_GNV_MAX_QUEUES)
		return usage_error("at most " + std::to_string(XO_GNV_MAX_QUEUES) + " sockets on one queue");
	uint32_t per = o.frames ? o.frames : 2 * o.ring_size;
	xsk::UmemConfig uc;
	uc.frame_size = o.frame_size;
	uc.frame_count = per * static_cast<uint32_t>(qs.size());
	// only where a frame may use it: copy mode pays for the metadata area on
	// every descriptor (tools/bench xsk, 1514 B: ~10% of the rate)
	const bool md_wanted = tx && use.tx_md && !o.no_tx_metadata;
	uc.tx_metadata = md_wanted && !tx_metadata_refused(dev.ifindex);
	auto e = make_sockets(dev, o, use, uc, qs, per, *bm);
	// virtio_net (7.x) refuses a pool with TX metadata at bind, in copy mode
	// too: bind again over a UMEM without it, checksums then in software
	if (!e && e.error().err == EOPNOTSUPP && uc.tx_metadata) {
		note_tx_metadata_refused(dev.ifindex);
		uc.tx_metadata = false;
		e = make_sockets(dev, o, use, uc, qs, per, *bm);
	}
	if (!e)
		return zc_bind_error(dev, o, e.error());
	if (!tx) {
		e->md = "n/a";
	} else if (e->umem->tx_metadata()) {
		e->md = "enabled";
	} else if (!md_wanted) {
		e->md = "off";
	} else if (!uc.tx_metadata) {
		e->md = "refused";
		e->md_why = dev.name + " refuses a UMEM with TX metadata at bind (EOPNOTSUPP)";
	} else {
		e->md = "unsupported";
		e->md_why = kernel_lacks(kFeatXskTxMetadata);
	}
	return e;
}

// One try of make_engine: the UMEM as uc says, and the sockets over it.
Result<Engine> make_sockets(const Netdev &dev, const XskOpts &o, const EngineUse &use, const xsk::UmemConfig &uc,
			    const std::vector<uint32_t> &qs, uint32_t per, xsk::BindMode bm)
{
	const bool rx = use.rx, tx = use.tx;
	auto umem = xsk::Umem::create(uc);
	if (!umem)
		return umem.error();
	Engine e;
	e.umem.emplace(std::move(*umem));
	for (uint32_t q : qs) {
		xsk::SocketConfig sc;
		sc.queue = q;
		sc.frames = per;
		sc.fill_size = sc.comp_size = o.ring_size;
		sc.rx_size = rx ? o.ring_size : 0;
		sc.tx_size = tx ? o.ring_size : 0;
		sc.mode = bm;
		sc.need_wakeup = !o.no_need_wakeup;
		sc.busy_poll = o.busy_poll;
		sc.multi_buffer = (tx && use.tx_frame + e.umem->tx_metadata_len() > o.frame_size) || (rx && use.rx_sg);
		sc.multi_buffer_if_supported = rx && o.multi_buffer == "auto";
		auto s = XskSocket::create(*e.umem, dev, sc);
		if (!s)
			return s.error();
		const size_t owner = e.socks.size();
		e.socks.push_back(std::move(*s));
		e.fill_ring_of.push_back(owner);
		e.slot_of.push_back(0);
		// the others on this queue share its fill ring and frames
		for (uint32_t k = 1; k < use.shared; k++) {
			auto p = XskSocket::create_shared(e.socks[owner], sc);
			if (!p)
				return p.error();
			e.socks.push_back(std::move(*p));
			e.fill_ring_of.push_back(owner);
			e.slot_of.push_back(k);
		}
	}
	e.shared_queue = use.shared > 0;
	e.mode = e.socks.front().zero_copy() ? "zero-copy" : "copy";
	e.sg = e.socks.front().multi_buffer();
	if (rx && use.rx_sg && !e.sg)
		e.sg_why = probe_xdp_use_sg().ok ? "the kernel refused XDP_USE_SG at bind" : kernel_lacks(kFeatXdpUseSg);
	return e;
}

struct Totals {
	uint64_t packets = 0, bytes = 0;
	uint64_t ring_full = 0, kick_busy = 0, kick_errors = 0, wakeups = 0;
	int kick_errno = 0;		// errno of a kick error (the latest socket's)
	uint64_t k_rx_dropped = 0, k_rx_invalid = 0, k_tx_invalid = 0, k_rx_ring_full = 0, k_fill_empty = 0;
	uint64_t submitted = 0, completed = 0;
	uint64_t descs = 0;		// RX descriptors (more than packets: multi-buffer)
	std::optional<uint64_t> dev_tx_dropped;	// send: the device's tx_dropped over the run
	std::optional<DevRxDrops> dev_rx;	// recv: what the device lost over the run
};

Totals sum(Engine &e, bool rx)
{
	Totals t;
	// the kernel reports a pool's fill-ring-empty count to every socket on
	// it: counted once per ring
	std::vector<uint64_t> fill_empty;
	for (auto &s : e.socks) {
		const auto &st = s.stats();
		fill_empty.push_back(st.k_fill_empty);
		t.packets += rx ? st.rx_packets : st.tx_completed;
		t.bytes += rx ? st.rx_bytes : 0;
		t.descs += st.rx_descs;
		t.submitted += st.tx_packets;
		t.completed += st.tx_completed;
		t.ring_full += rx ? st.fill_ring_full : st.tx_ring_full;
		t.kick_busy += st.kick_busy;
		t.kick_errors += st.kick_errors;
		if (st.last_kick_errno)
			t.kick_errno = st.last_kick_errno;
		t.wakeups += st.wakeups;
		t.k_rx_dropped += st.k_rx_dropped;
		t.k_rx_invalid += st.k_rx_invalid;
		t.k_tx_invalid += st.k_tx_invalid;
		t.k_rx_ring_full += st.k_rx_ring_full;
	}
	t.k_fill_empty = sum_per_ring(fill_empty, e.fill_ring_of);
	return t;
}

// Why TX kicks failed, for the "never completed" line: the errno and what
// the drivers mean by it.
std::string kick_error_cause(const Netdev &dev, const Engine &e, const Totals &t)
{
	if (!t.kick_errors)
		return "";
	const int err = t.kick_errno;
	std::string why = ": " + std::to_string(t.kick_errors) + " TX kicks (sendto) failed, the latest with " +
			  std::string(strerrorname_np(err) ? strerrorname_np(err) : "?") + " (" + std::strerror(err) + ")";
	const bool zc = e.socks.front().zero_copy();
	if (zc && (err == EINVAL || err == ENXIO || err == ENETDOWN))
		why += ": the driver's zero-copy TX is not running on queue " + std::to_string(e.socks.front().queue()) +
		       " (most drivers need an XDP program attached for it; try --xsk-mode copy)";
	else if (err == ENETDOWN)
		why += ": " + dev.name + " is down or its TX queue is stopped";
	else if (err == ENXIO || err == EINVAL)
		why += ": the driver refused the wakeup for queue " + std::to_string(e.socks.front().queue());
	else if (err == ENOBUFS || err == EAGAIN)
		why += ": the TX queue stayed full";
	return why;
}

// The distinct queues of the sockets.
std::vector<uint32_t> queues_of(const Engine &e)
{
	std::vector<uint32_t> qs;
	for (const auto &k : e.socks)
		qs.push_back(k.queue());
	std::sort(qs.begin(), qs.end());
	qs.erase(std::unique(qs.begin(), qs.end()), qs.end());
	return qs;
}

std::string queue_list(const Engine &e)
{
	return queue_list_text(queues_of(e));
}

// Per-socket counters (stats() refreshed by sum()).
void sockets_out(Engine &e, bool rx, Json *j)
{
	if (j)
		j->begin_array("sockets");
	for (size_t i = 0; i < e.socks.size(); i++) {
		const auto &st = e.socks[i].stats_nosync();
		// a shared fill ring's count stands on the socket that owns the ring only
		const size_t ring = i < e.fill_ring_of.size() ? e.fill_ring_of[i] : i;
		if (j) {
			j->begin_object();
			if (e.geneve)
				j->kv("slot", static_cast<uint64_t>(e.slot_of[i]));
			j->kv("queue", e.socks[i].queue()).kv("rx_packets", st.rx_packets).kv("rx_bytes", st.rx_bytes)
				.kv("descriptors", st.rx_descs).kv("tx_completed", st.tx_completed)
				.kv("rx_dropped", st.k_rx_dropped).kv("rx_ring_full", st.k_rx_ring_full)
				.kv("fill_ring", static_cast<uint64_t>(ring));
			if (ring == i)
				j->kv("fill_ring_empty", st.k_fill_empty);
			j->end_object();
		} else if (e.socks.size() > 1) {
			std::string who = e.geneve ? "slot " + std::to_string(e.slot_of[i]) + " (queue " +
							 std::to_string(e.socks[i].queue()) + ")"
						   : "queue " + std::to_string(e.socks[i].queue());
			if (rx)
				std::printf("  socket %s: %" PRIu64 " packets %" PRIu64 " bytes, drops: rx-dropped %" PRIu64
					    " rx-ring-full %" PRIu64 "%s\n",
					    who.c_str(), st.rx_packets, st.rx_bytes, st.k_rx_dropped, st.k_rx_ring_full,
					    ring == i ? (" fill-empty " + std::to_string(st.k_fill_empty)).c_str()
						      : (" (fill ring of socket " + std::to_string(ring) + ")").c_str());
			else
				std::printf("  socket %s: %" PRIu64 " frames completed\n", who.c_str(), st.tx_completed);
		}
	}
	if (j)
		j->end_array();
}

void print_interval(const Globals &g, const Netdev &dev, Engine &e, bool rx, const Totals &now,
		    const Totals &prev, double dt, const xsk::XskProgCounters *xc)
{
	double pps = dt > 0 ? static_cast<double>(now.packets - prev.packets) / dt : 0;
	double gbps = dt > 0 ? static_cast<double>(now.bytes - prev.bytes) * 8 / dt / 1e9 : 0;
	if (g.json) {
		Json j;
		j.begin_object().kv("type", "interval").kv("interface", dev.name).kv("dir", rx ? "rx" : "tx")
			.kv("interval_s", dt).kv("pps", pps).kv("gbps", gbps).kv("packets", now.packets - prev.packets)
			.kv(rx ? "fill_full" : "ring_full", now.ring_full - prev.ring_full).kv("mode", e.mode)
			.end_object().print();
		return;
	}
	// RX: the fill ring found already topped up (we are ahead of the kernel,
	// not a loss); TX: the TX ring had no room (back-pressure)
	std::printf("%-10s %s q%-6s %12.0f pps %8.3f Gbps  %s %-8" PRIu64, dev.name.c_str(), rx ? "rx" : "tx",
		    queue_list(e).c_str(), pps, gbps, rx ? "fill-full" : "ring-full", now.ring_full - prev.ring_full);
	if (rx)
		std::printf(" drops: rx-ring-full %" PRIu64 " fill-empty %" PRIu64 " invalid %" PRIu64,
			    now.k_rx_ring_full - prev.k_rx_ring_full, now.k_fill_empty - prev.k_fill_empty,
			    now.k_rx_invalid - prev.k_rx_invalid);
	else
		std::printf(" kick-busy %" PRIu64 " drops: tx-invalid %" PRIu64, now.kick_busy - prev.kick_busy,
			    now.k_tx_invalid - prev.k_tx_invalid);
	if (xc)
		std::printf(" xdp: no-socket %" PRIu64 " filtered %" PRIu64, static_cast<uint64_t>(xc->v[XO_XSK_CNT_NO_SOCKET].packets),
			    static_cast<uint64_t>(xc->v[XO_XSK_CNT_FILTERED].packets));
	std::printf("  (%s)\n", e.mode.c_str());
	std::fflush(stdout);
}

// One entry per set of frames: per socket, or once for sockets sharing a queue.
bool accounting_ok(Engine &e, Json *j)
{
	bool all = true;
	if (j)
		j->begin_array("accounting");
	for (size_t i = 0; i < e.socks.size(); i++) {
		if (e.fill_ring_of[i] != i)
			continue;	// counted with the socket that owns its fill ring
		auto &s = e.socks[i];
		auto a = s.accounting();
		all = all && a.consistent;
		if (j)
			j->begin_object().kv("queue", s.queue()).kv("sockets", a.sockets).kv("total", a.total)
				.kv("free", a.free).kv("fill", a.fill).kv("rx", a.rx).kv("tx", a.tx)
				.kv("completion", a.completion).kv("in_use", a.in_use).kv("bad_addr", a.bad_addr)
				.kv("consistent", a.consistent).end_object();
	}
	if (j)
		j->end_array();
	return all;
}

// gnv: xdp_geneve's counters over the run (recv --geneve).
void print_summary(const Globals &g, const Netdev &dev, Engine &e, bool rx, const Totals &t, double secs,
		   const xsk::XskProgCounters *xc, uint64_t pcap_frames, bool interrupted,
		   const GeneveCounterSet *gnv = nullptr)
{
	double pps = secs > 0 ? static_cast<double>(t.packets) / secs : 0;
	double gbps = secs > 0 ? static_cast<double>(t.bytes) * 8 / secs / 1e9 : 0;
	if (g.json) {
		Json j;
		j.begin_object().kv("type", "summary").kv("interface", dev.name).kv("dir", rx ? "rx" : "tx")
			.kv("queues", queue_list(e)).kv("mode", e.mode).kv("tx_metadata", e.md).kv("multi_buffer", e.sg)
			.kv("kernel", running_kernel().text);
		if (!e.md_why.empty())
			j.kv("tx_metadata_why", e.md_why);
		if (!e.sg_why.empty())
			j.kv("multi_buffer_why", e.sg_why);
		if (!rx) {
			j.kv("checksum", e.csum);
			if (!e.csum_why.empty() && e.csum != "tx-metadata")
				j.kv("checksum_why", e.csum_why);
		}
		j
			.kv("packets", t.packets).kv("bytes", t.bytes).kv("duration_s", secs).kv("pps", pps)
			.kv("gbps", gbps).kv(rx ? "fill_full" : "ring_full", t.ring_full).kv("wakeups", t.wakeups)
			.kv("interrupted", interrupted);
		if (!rx) {
			j.kv("submitted", t.submitted).kv("completed", t.completed);
			if (t.dev_tx_dropped)
				j.kv("tx_dropped", *t.dev_tx_dropped);
		} else
			j.kv("descriptors", t.descs);
		if (t.dev_rx)
			j.begin_object("device").kv("rx_missed", t.dev_rx->missed).kv("rx_fifo", t.dev_rx->fifo)
				.kv("rx_over", t.dev_rx->over).kv("rx_dropped", t.dev_rx->dropped).end_object();
		j.begin_object("drops").kv("rx_dropped", t.k_rx_dropped).kv("rx_ring_full", t.k_rx_ring_full)
			.kv("fill_ring_empty", t.k_fill_empty).kv("rx_invalid", t.k_rx_invalid)
			.kv("tx_invalid", t.k_tx_invalid).kv("kick_busy", t.kick_busy).kv("kick_errors", t.kick_errors)
			.end_object();
		if (xc) {
			j.begin_object("xdp");
			for (unsigned r = 0; r < XO_XSK_CNT_MAX; r++)
				j.kv(xsk::xsk_counter_name(r), static_cast<uint64_t>(xc->v[r].packets));
			j.end_object();
		}
		if (gnv) {
			j.begin_object("geneve");
			for (unsigned r = 0; r < kGeneveStats; r++)
				j.kv(geneve_counter_name(r), static_cast<uint64_t>((*gnv)[r].packets));
			j.end_object();
		}
		if (pcap_frames)
			j.kv("pcap_frames", pcap_frames);
		sockets_out(e, rx, &j);
		accounting_ok(e, &j);
		j.end_object().print();
		return;
	}
	std::printf("%s %s summary: %" PRIu64 " packets %" PRIu64 " bytes in %.3f s = %.0f pps %.3f Gbps, "
		    "queues %s%s, %s mode, tx-metadata %s, multi-buffer %s%s\n",
		    dev.name.c_str(), rx ? "rx" : "tx", t.packets, t.bytes, secs, pps, gbps, queue_list(e).c_str(),
		    e.shared_queue ? (" (" + std::to_string(e.socks.size()) + " sockets)").c_str() : "",
		    e.mode.c_str(), e.md.c_str(), e.sg ? "on" : "off", interrupted ? " (interrupted)" : "");
	sockets_out(e, rx, nullptr);
	if (!rx)
		std::printf("  submitted %" PRIu64 " completed %" PRIu64 " ring-full %" PRIu64 " kick-busy %" PRIu64
			    " kick-errors %" PRIu64 " tx-invalid %" PRIu64 "; %s tx_dropped %s\n",
			    t.submitted, t.completed, t.ring_full, t.kick_busy, t.kick_errors, t.k_tx_invalid,
			    dev.name.c_str(), t.dev_tx_dropped ? ("+" + std::to_string(*t.dev_tx_dropped)).c_str() : "unknown");
	else
		std::printf("  %" PRIu64 " descriptors; drops: rx-dropped %" PRIu64 " rx-ring-full %" PRIu64
			    " fill-empty %" PRIu64 " invalid %" PRIu64 "; fill-ring-full %" PRIu64 "\n",
			    t.descs, t.k_rx_dropped, t.k_rx_ring_full, t.k_fill_empty, t.k_rx_invalid, t.ring_full);
	if (rx && t.dev_rx)
		std::printf("  %s before XDP: rx-missed %" PRIu64 " rx-fifo %" PRIu64 " rx-over %" PRIu64
			    "; rx-dropped %" PRIu64 " (the device's counters over the run)\n",
			    dev.name.c_str(), t.dev_rx->missed, t.dev_rx->fifo, t.dev_rx->over, t.dev_rx->dropped);
	if (xc) {
		std::printf("  xdp_xsk:");
		for (unsigned r = 0; r < XO_XSK_CNT_MAX; r++)
			std::printf(" %s %" PRIu64, xsk::xsk_counter_name(r), static_cast<uint64_t>(xc->v[r].packets));
		std::printf("\n");
	}
	if (gnv) {
		std::printf("  xdp_geneve during the run:");
		for (unsigned r = 0; r < kGeneveStats; r++)
			if ((*gnv)[r].packets)
				std::printf(" %s %" PRIu64, geneve_counter_name(r), static_cast<uint64_t>((*gnv)[r].packets));
		std::printf("\n");
	}
	if (pcap_frames)
		std::printf("  pcap: %" PRIu64 " frames written\n", pcap_frames);
	std::printf("  frame accounting: %s\n", accounting_ok(e, nullptr) ? "consistent" : "INCONSISTENT");
	std::fflush(stdout);
}

// A bad --queues list is a usage error before any device is looked at.
// recv --geneve: a plain number there counts sockets on the one --queue.
Status check_common(const XskOpts &o, unsigned queue_limit)
{
	const bool count_of_sockets = o.geneve && queues_is_count(o);
	if (o.queue && o.queues && !count_of_sockets)
		return usage_error("--queue and --queues are mutually exclusive");
	if (o.queues && *o.queues != "all")
		if (auto q = parse_queue_list(*o.queues, 0, count_of_sockets ? XO_GNV_MAX_QUEUES : queue_limit); !q)
			return q.error();
	if (o.ring_size < 64 || o.ring_size > 65536 || (o.ring_size & (o.ring_size - 1)))
		return usage_error("--ring-size must be a power of two in 64..65536");
	if (o.batch < 1 || o.batch > 1024)
		return usage_error("--batch must be 1..1024");
	if (o.duration && *o.duration <= 0)
		return usage_error("--duration must be positive");
	if (o.interval < 0)
		return usage_error("--interval must be >= 0");
	return ok();
}

// ---- send -------------------------------------------------------------------

// Stop, duration, interval stats and rate pacing, shared by both send loops.
// bytes_of turns the current totals into the byte count the stats show.
class SendPacer {
public:
	SendPacer(const Globals &g, const Netdev &dev, Engine &e, const XskOpts &o)
		: g_(g), dev_(dev), e_(e), o_(o), t0_(now_s()),
		  next_report_(o.interval > 0 ? t0_ + o.interval : INFINITY), last_(t0_)
	{
		install_stop_handler();
		// what the device dropped of our frames shows only in its own counter
		if (auto st = netdev_stats(dev))
			tx_dropped0_ = st->tx_dropped;
	}
	enum class Step { go, wait, stop };
	// Called every round; checks the clock every 'every' rounds (always when
	// pacing). frames: what the rate applies to.
	template <typename BytesOf>
	Step step(uint64_t frames, unsigned every, BytesOf &&bytes_of)
	{
		if ((++loops_ % every) != 0 && !o_.rate)
			return Step::go;
		double t = now_s();
		if (stop_requested()) {
			interrupted_ = true;
			return Step::stop;
		}
		if (o_.duration && t - t0_ >= *o_.duration)
			return Step::stop;
		if (t >= next_report_) {
			Totals cur = sum(e_, false);
			cur.bytes = bytes_of(cur);
			print_interval(g_, dev_, e_, false, cur, prev_, t - last_, nullptr);
			prev_ = cur;
			last_ = t;
			next_report_ = t + o_.interval;
		}
		if (o_.rate && static_cast<double>(frames) >= *o_.rate * (t - t0_)) {
			for (auto &s : e_.socks)
				s.complete();
			return Step::wait;
		}
		return Step::go;
	}
	// Frames the rate allows now (with one in hand).
	uint64_t allowed() const { return static_cast<uint64_t>(*o_.rate * (now_s() - t0_)) + 1; }
	// Drains the completion rings, prints the summary, checks every frame
	// came back and the UMEM accounting holds.
	Status finish(uint64_t bytes_sent, std::optional<PcapWriter> &pcap)
	{
		// as long as completions keep coming (a slow or emulated device
		// under load returns them late), and 2 s after the last one
		double last_progress = now_s();
		uint64_t left = UINT64_MAX;
		for (;;) {
			uint64_t out = 0;
			for (auto &s : e_.socks) {
				s.complete();
				out += s.tx_outstanding();
				if (s.tx_outstanding())
					s.kick();
			}
			if (!out)
				break;
			if (out < left) {
				left = out;
				last_progress = now_s();
			} else if (now_s() - last_progress > 2.0) {
				break;
			}
			usleep(50);
		}
		const double secs = now_s() - t0_;
		Totals t = sum(e_, false);
		t.bytes = bytes_sent;
		if (tx_dropped0_)
			if (auto st = netdev_stats(dev_))
				t.dev_tx_dropped = counter_delta(*tx_dropped0_, st->tx_dropped);
		if (pcap)
			if (auto st = pcap->close(); !st)
				return st;
		print_summary(g_, dev_, e_, false, t, secs, nullptr, pcap ? pcap->frames() : 0, interrupted_);
		if (t.completed != t.submitted)
			return runtime_error(std::to_string(t.submitted - t.completed) + " frames never completed on " +
					     dev_.name + kick_error_cause(dev_, e_, t));
		if (!accounting_ok(e_, nullptr))
			return runtime_error("UMEM frame accounting inconsistent (bug)");
		if (auto w = tx_dropped_warning(dev_.name, t.dev_tx_dropped.value_or(0), t.completed); !w.empty())
			return runtime_error(w);
		return ok();
	}

private:
	const Globals &g_;
	const Netdev &dev_;
	Engine &e_;
	const XskOpts &o_;
	double t0_, next_report_, last_;
	Totals prev_{};
	bool interrupted_ = false;
	uint64_t loops_ = 0;
	std::optional<uint64_t> tx_dropped0_;
};

// The segmentation-offload send loop: every round segments the super-packet
// straight into freshly allocated UMEM frames (tags inserted and checksums
// folded in during that one copy; L4 checksum left to TX metadata when the
// kernel takes it), then queues them. --count counts super-packets.
Status send_gso_loop(const Globals &g, const Netdev &dev, Engine &e, const XskOpts &o, const BuiltFrame &super,
		     GsoRequest req, std::optional<PcapWriter> &pcap)
{
	const std::span<const std::byte> in(super.bytes);
	const std::span<const std::span<const std::byte>> input(&in, 1);
	GsoError why{};
	int nseg = gso_count(input, req, &why);
	if (nseg < 0)
		return usage_error(std::string("--gso ") + o.gso + ": " + to_string(why));
	const uint32_t cap = e.socks.front().tx_chunk_capacity();
	std::vector<uint64_t> addrs(static_cast<size_t>(nseg));
	std::vector<GsoFrame> frames(static_cast<size_t>(nseg));
	std::vector<xsk::TxDesc> descs(static_cast<size_t>(nseg));
	if (o.ring_size < static_cast<uint32_t>(nseg))
		return usage_error("--ring-size " + std::to_string(o.ring_size) + " below the " + std::to_string(nseg) +
				   " segments of one super-packet");
	{
		// one dry run into chunk-sized buffers: a segment that cannot fit
		// (--mss, Geneve headers) is a usage error, not a failure mid-send
		std::vector<std::byte> scratch(static_cast<size_t>(nseg) * cap);
		for (int i = 0; i < nseg; i++)
			frames[i] = GsoFrame{scratch.data() + static_cast<size_t>(i) * cap, cap};
		if (gso_segment(input, req, frames, &why) != nseg)
			return usage_error(std::string("--gso ") + o.gso + ": " + to_string(why) + " (UMEM frames hold " +
					   std::to_string(cap) + " bytes)");
	}
	if (!g.json)
		std::fprintf(stderr, "sending %s super-packets of %zu bytes as %d segments (mss %u)%s on %s queues %s "
				     "(%s mode, tx-metadata %s, checksum %s)\n",
			     to_string(req.type), super.bytes.size(), nseg, req.mss,
			     req.geneve ? (" in Geneve VNI " + std::to_string(req.geneve->vni) + " port " +
					   std::to_string(req.geneve->dst_port)).c_str()
					: "",
			     dev.name.c_str(), queue_list(e).c_str(), e.mode.c_str(), e.md.c_str(),
			     req.csum == CsumMode::tx_metadata ? "by TX metadata" : "in software, during the copy");

	SendPacer pacer(g, dev, e, o);
	const uint64_t limit = o.count.value_or(UINT64_MAX);
	uint64_t sent = 0, bytes = 0, segs = 0;
	timespec ts{};

	while (sent < limit) {
		auto st = pacer.step(segs, 16, [&](const Totals &) { return bytes; });
		if (st == SendPacer::Step::stop)
			break;
		if (st == SendPacer::Step::wait)
			continue;
		for (auto &s : e.socks) {
			s.complete();
			if (sent == limit)
				break;
			uint32_t n = s.tx_alloc(addrs);
			if (n < static_cast<uint32_t>(nseg)) {
				s.tx_free({addrs.data(), n}); // not enough free frames yet: all or none
				s.kick();
				continue;
			}
			for (int i = 0; i < nseg; i++)
				frames[i] = GsoFrame{s.data(addrs[i]), cap};
			int got = gso_segment(input, req, frames, &why);
			if (got != nseg) {
				s.tx_free(addrs);
				return runtime_error(std::string("segmentation failed: ") + to_string(why));
			}
			for (int i = 0; i < nseg; i++)
				descs[i] = xsk::TxDesc{addrs[i], frames[i].len, false, frames[i].csum_partial,
						       frames[i].csum_start, frames[i].csum_offset};
			// the TX ring takes the whole super-packet or a prefix: retry the rest
			uint32_t done = 0;
			for (int tries = 0; done < static_cast<uint32_t>(nseg); tries++) {
				done += s.tx_submit({descs.data() + done, static_cast<size_t>(nseg) - done});
				if (done < static_cast<uint32_t>(nseg)) {
					s.kick();
					s.complete();
					if (tries > 100000) {
						s.tx_free({addrs.data() + done, static_cast<size_t>(nseg) - done});
						return runtime_error("TX ring never drained on " + dev.name);
					}
				}
			}
			if (pcap) {
				clock_gettime(CLOCK_REALTIME, &ts);
				for (int i = 0; i < nseg; i++)
					pcap->write(std::span<const std::byte>(frames[i].data, frames[i].len), ts);
			}
			for (int i = 0; i < nseg; i++)
				bytes += frames[i].len;
			segs += static_cast<uint64_t>(nseg);
			sent++;
			s.kick();
		}
	}
	if (!g.json)
		std::printf("  gso: %" PRIu64 " super-packets -> %" PRIu64 " segments\n", sent, segs);
	return pacer.finish(bytes, pcap);
}

// Bytes Geneve adds in front of an inner frame (outer tags aside): outer
// Ethernet, IPv4/IPv6, UDP and the Geneve header. Also what the inner IP
// packet loses of the MTU (its own Ethernet header now counts), so what the
// default mss gives up.
uint32_t geneve_overhead(const GeneveEncap &g)
{
	return 14 + (g.ipv6 ? 40 : 20) + 8 + 8;
}

// The --geneve-* and --outer-* options (nullopt without --geneve-vni), all
// checked here; the outer source MAC, when not given, is the interface's and
// set later.
Result<std::optional<GeneveEncap>> parse_geneve_send(const XskOpts &o)
{
	if (o.geneve_vni.empty()) {
		if (o.geneve_port || !o.outer_src_ip.empty() || !o.outer_dst_ip.empty() || !o.outer_src_mac.empty() ||
		    !o.outer_dst_mac.empty() || o.geneve_csum)
			return usage_error("--geneve-port, --geneve-csum and --outer-* need --geneve-vni");
		return std::optional<GeneveEncap>();
	}
	GeneveEncap g;
	auto vni = parse_vni(o.geneve_vni);
	if (!vni)
		return usage_error("--geneve-vni: " + vni.error().msg);
	g.vni = *vni;
	if (o.geneve_port) {
		auto port = parse_geneve_port(*o.geneve_port);
		if (!port)
			return usage_error("--geneve-port: " + port.error().msg);
		g.dst_port = *port;
	}
	if (o.outer_src_ip.empty() || o.outer_dst_ip.empty())
		return usage_error("--geneve-vni needs --outer-src-ip and --outer-dst-ip (the tunnel endpoints)");
	bool v6a = false, v6b = false;
	if (auto s = parse_ip(o.outer_src_ip, g.src_ip, &v6a); !s)
		return s.error();
	if (auto s = parse_ip(o.outer_dst_ip, g.dst_ip, &v6b); !s)
		return s.error();
	if (v6a != v6b)
		return usage_error("--outer-src-ip and --outer-dst-ip must both be IPv4 or both IPv6");
	g.ipv6 = v6a;
	auto dmac = parse_mac(o.outer_dst_mac.empty() ? o.dst_mac : o.outer_dst_mac);
	if (!dmac)
		return dmac.error();
	g.dst_mac.b = *dmac;
	if (!o.outer_src_mac.empty()) {
		auto smac = parse_mac(o.outer_src_mac);
		if (!smac)
			return smac.error();
		g.src_mac.b = *smac;
	}
	g.udp_csum = o.geneve_csum;
	return std::optional<GeneveEncap>(g);
}

// One frame of the plain send loop, with where its L4 checksum is when TX
// metadata completes it.
struct TxFrame {
	std::vector<std::byte> bytes;
	uint16_t csum_start = 0, csum_offset = 0;
	bool partial = false;
};

// The frame spec describes, wrapped in Geneve by the segmentation engine
// when req.geneve is set (req.type none: one frame, outer tags from req).
Result<TxFrame> make_tx_frame(FrameSpec spec, const GsoRequest &req, bool partial)
{
	TxFrame f;
	if (!req.geneve) {
		spec.csum_partial = partial;
		auto b = build_frame(spec);
		if (!b)
			return b.error();
		f.bytes = std::move(b->bytes);
		f.csum_start = b->csum_start;
		f.csum_offset = b->csum_offset;
		f.partial = partial;
		return f;
	}
	auto inner = build_frame(spec);
	if (!inner)
		return inner.error();
	GsoRequest r = req;
	r.csum = partial ? CsumMode::tx_metadata : CsumMode::software;
	f.bytes.resize(inner->bytes.size() + geneve_overhead(*req.geneve) + 4 * req.ntags);
	GsoFrame out{f.bytes.data(), static_cast<uint32_t>(f.bytes.size())};
	GsoError why{};
	if (gso_segment(inner->bytes, r, std::span<GsoFrame>(&out, 1), &why) != 1)
		return usage_error(std::string("--geneve-vni: ") + to_string(why));
	f.bytes.resize(out.len);
	f.csum_start = out.csum_start;
	f.csum_offset = out.csum_offset;
	f.partial = out.csum_partial;
	return f;
}

// --gso: every segment of the super-packet fits one UMEM frame of cap bytes
// (md_room of the frame went to the TX metadata). Usage error otherwise,
// before anything is bound; else the length of the longest segment.
Result<uint32_t> check_segments_fit(const FrameSpec &spec, const GsoRequest &req, const XskOpts &o, uint32_t cap,
			  uint32_t md_room)
{
	auto super = build_frame(spec);
	if (!super)
		return super.error();
	const std::span<const std::byte> in(super->bytes);
	const std::span<const std::span<const std::byte>> input(&in, 1);
	GsoError why{};
	int nseg = gso_count(input, req, &why);
	if (nseg < 0)
		return usage_error("--gso " + o.gso + ": " + to_string(why));
	std::vector<std::byte> scratch(static_cast<size_t>(nseg) * cap);
	std::vector<GsoFrame> frames(static_cast<size_t>(nseg));
	for (int i = 0; i < nseg; i++)
		frames[i] = GsoFrame{scratch.data() + static_cast<size_t>(i) * cap, cap};
	if (gso_segment(input, req, frames, &why) != nseg)
		return usage_error("--gso " + o.gso + ": " + to_string(why) + " (UMEM frames hold " + std::to_string(cap) +
				   " bytes" +
				   (md_room ? " after " + std::to_string(md_room) + " of TX metadata; --sw-csum leaves " +
						      std::to_string(cap + md_room)
					    : std::string()) +
				   ")");
	uint32_t longest = 0;
	for (const auto &f : frames)
		longest = std::max(longest, f.len);
	return longest;
}

// A frame of len bytes (tags: ntags) fits what dev carries, or the one
// line that says what does: --size (or --mss with --gso) at most what fits.
Status check_fits_device(const Netdev &dev, const XskOpts &o, uint32_t len, unsigned ntags, bool gso,
			 uint32_t mss)
{
	auto mtu = netdev_mtu(dev.name);
	if (!mtu)
		return mtu.error();
	const uint32_t limit = max_frame_len(*mtu, ntags);
	if (len <= limit)
		return ok();
	const uint32_t over = len - limit;
	const std::string what = gso ? "--mss " + std::to_string(mss) : "--size " + std::to_string(o.size);
	const uint32_t was = gso ? mss : o.size;
	return usage_error(what + " does not fit " + dev.name + " (MTU " + std::to_string(*mtu) + ", " +
			   std::to_string(ntags) + (ntags == 1 ? " tag" : " tags") + ", frames of at most " +
			   std::to_string(limit) + " bytes): " +
			   (was > over ? "at most " + std::to_string(was - over) : "nothing fits"));
}

// The driver of the device send runs on, asked once (ETHTOOL_GDRVINFO) for
// every decision of the run, and its facts under the kernel of --kernel.
struct SendDriver {
	Result<std::string> name;	// an error: the device went away
	features::NicFacts facts;
};

SendDriver send_driver(const Netdev &dev, const features::KernelArg &k)
{
	SendDriver d{features::live_driver(dev.name), {}};
	const DevKind kind = d.name ? dev_kind_from_name(*d.name).value_or(DevKind::unknown) : DevKind::unknown;
	d.facts = features::nic_facts(kind, k.major, k.minor);
	return d;
}

// What send does for one packet class on this device, as it will run: the
// driver's facts under the kernel of --kernel (the running one by default),
// for the mode the socket is bound in (after an `auto` bind, the mode it
// got) and the UMEM as registered (TX metadata is what the kernel and the
// driver took). The checksum goes to TX metadata only where that mode of
// that driver honours it; everywhere else software computes it, --tx-csum
// included (tx_csum_note then says why).
TxPlan send_plan(const SendDriver &sd, Engine &e, const XskOpts &o, const PacketClass &pc,
		 const features::KernelArg &k)
{
	const bool zc = e.socks.front().zero_copy();
	const Result<std::string> &drv = sd.name;
	const features::TxCsumDecision d = features::tx_csum_decision(sd.facts, zc, e.umem->tx_metadata());
	TxQueueFacts q;
	q.zero_copy = zc;
	q.tx_md_csum = d.by_metadata;
	q.tx_md_why = !e.umem->tx_metadata() && e.md == "off"
			      ? "TX metadata not registered (--sw-csum, --no-tx-metadata or no --tx-csum)"
		      : !e.umem->tx_metadata() && !e.md_why.empty() ? e.md_why
								    : d.why;
	q.source = (drv && !drv->empty() ? *drv : std::string("driver unknown")) + ", " + (zc ? "zero-copy" : "copy") +
		   " mode, Linux " + std::to_string(k.major) + "." + std::to_string(k.minor) + ": " + d.source;
	TxPlan p = tx_plan(q, pc);
	if (o.sw_csum && !o.gso.empty())
		p.reasons.push_back("--sw-csum: every checksum folded into the copy in software");
	e.csum = p.csum_hw ? "tx-metadata" : "software";
	e.csum_why = p.csum_hw		   ? ""
		     : o.sw_csum && !o.gso.empty() ? "--sw-csum"
		     : !pc.csum_partial		   ? "not asked of the queue (--tx-csum asks)"
						   : q.tx_md_why;
	// --tx-csum asked for the queue and the model says no (a refused
	// registration already had its note from make_engine)
	e.tx_csum_note = o.tx_csum && pc.csum_partial && !p.csum_hw && e.umem->tx_metadata() ? q.tx_md_why : "";
	return p;
}

// The "tx plan:" line (always, on stderr; the reasons behind it with -v).
void print_plan(const Globals &g, const Engine &e, const TxPlan &p, const char *gso, const features::KernelArg &k)
{
	if (g.json)
		return;
	if (!e.tx_csum_note.empty())
		std::fprintf(stderr, "note: --tx-csum: checksums in software: %s\n", e.tx_csum_note.c_str());
	std::string seg = std::string(gso) == "none" ? "none" : std::string("software (") + gso + ")";
	const std::string facts = std::to_string(k.major) + "." + std::to_string(k.minor);
	const std::string kernel = k.running ? "kernel " + running_kernel().text + " (facts of " + facts + ")"
					     : "facts of " + facts + " (--kernel; running " + running_kernel().text + ")";
	std::fprintf(stderr, "tx plan: segmentation %s, checksum %s%s, tags %s, multi-buffer %s; %s\n", seg.c_str(),
		     p.csum_hw ? "by the queue (TX metadata)" : "in software",
		     !p.csum_hw && !e.csum_why.empty() ? (" (" + e.csum_why + ")").c_str() : "",
		     p.vlan_sw ? "in software" : "none", e.sg ? "on" : "off", kernel.c_str());
	if (g.verbose)
		for (const auto &r : p.reasons)
			std::fprintf(stderr, "  why: %s\n", r.c_str());
}

// A driver that rebuilds its rings for an XDP program or an XSK pool (igb,
// i40e: close and open) drops the carrier for a moment: frames sent to it
// or by it meanwhile are lost. Waits (at most 5 s) for the carrier to come
// back when it was up before (was_up) and is not now.
void wait_for_carrier(const Netdev &dev, bool was_up)
{
	if (!was_up)
		return;
	for (int i = 0; i < 100 && !stop_requested(); i++) {
		auto up = netdev_running(dev.name);
		if (!up || *up)
			return;
		usleep(50000);
	}
}

// Zero-copy TX of most drivers runs on their XDP TX rings, which exist only
// while an XDP program is attached: without one every kick fails (i40e,
// igb, mlx5; the model's zc_tx_needs_xdp) and no frame completes. Such a
// run gets xdp_xsk (no sockets in its map: it passes every frame) for its
// lifetime; where that attach fails, --xsk-mode auto binds copy mode again.
// The driver's facts are those of the release send runs on (--kernel), not
// of an older model: igb has zero-copy from 6.14.
Status zc_tx_program(const Netdev &dev, const XskOpts &o, const EngineUse &use, Result<Engine> &eng,
		     std::optional<xsk::XskProgram> &prog, const SendDriver &sd, const std::vector<uint32_t> &qs)
{
	if (!eng->socks.front().zero_copy())
		return ok();
	const features::NicFacts *f = sd.name ? &sd.facts : nullptr;
	if (!f || !f->zc_tx_needs_xdp.value)
		return ok();
	uint32_t id = 0;
	if (!bpf_xdp_query_id(static_cast<int>(dev.ifindex), XDP_FLAGS_DRV_MODE, &id) && id)
		return ok();	// a native program already keeps the XDP rings up
	const std::string drv = f->modelled ? dev_kind_name(f->driver) : "this driver";
	const std::string need = "zero-copy TX on " + drv + " needs an XDP program (" + f->zc_tx_needs_xdp.source + ")";
	if (auto r = xsk::reap_stale_xsk(dev); !r)
		return r.error();
	const bool was_up = netdev_running(dev.name).value_or(false);
	auto p = xsk::XskProgram::attach(dev, XdpMode::native, {});
	if (p) {
		prog.emplace(std::move(*p));
		std::fprintf(stderr, "note: %s: xdp_xsk attached to %s for this run (passes every frame)\n", need.c_str(),
			     dev.name.c_str());
		wait_for_carrier(dev, was_up);
		return ok();
	}
	if (o.xsk_mode != "auto")
		return runtime_error(need + " and attaching xdp_xsk failed: " + p.error().msg + " (try --xsk-mode copy)",
				     p.error().err);
	eng->socks.clear();
	eng->umem.reset();
	XskOpts copy = o;
	copy.xsk_mode = "copy";
	eng = make_engine(dev, copy, use, qs);
	if (!eng)
		return eng.error();
	std::fprintf(stderr, "note: copy mode: %s and attaching xdp_xsk failed: %s\n", need.c_str(),
		     p.error().msg.c_str());
	return ok();
}

Status run_send(const Globals &g, const XskOpts &o)
{
	// from the start: a Ctrl-C during setup (attach, bind, the carrier
	// wait) ends the run at its first step, through the same cleanup
	install_stop_handler();
	if (auto s = check_common(o, XO_XSK_MAX_QUEUES); !s)
		return s;
	FrameSpec spec;
	auto dmac = parse_mac(o.dst_mac);
	if (!dmac)
		return dmac.error();
	spec.dst_mac = *dmac;
	bool v6a = false, v6b = false;
	if (auto s = parse_ip(o.src_ip, spec.src_ip, &v6a); !s)
		return s;
	if (auto s = parse_ip(o.dst_ip, spec.dst_ip, &v6b); !s)
		return s;
	if (v6a != v6b)
		return usage_error("--src-ip and --dst-ip must both be IPv4 or both IPv6");
	spec.ipv6 = v6a;
	if (o.proto != "udp" && o.proto != "tcp")
		return usage_error("--proto " + o.proto + ": udp or tcp");
	spec.tcp = o.proto == "tcp";
	spec.src_port = o.src_port;
	spec.dst_port = o.dst_port;
	spec.size = o.size;
	if (!o.vlan.empty()) {
		auto v = parse_vids(o.vlan);
		if (!v)
			return usage_error("--vlan " + o.vlan + ": " + v.error().msg);
		spec.vids = *v;
	}
	if (o.rate && *o.rate <= 0)
		return usage_error("--rate must be positive");
	if (!o.src_mac.empty()) {
		auto m = parse_mac(o.src_mac);
		if (!m)
			return m.error();
		spec.src_mac = *m;
	}
	auto gnv = parse_geneve_send(o);
	if (!gnv)
		return gnv.error();
	GsoRequest req;
	if (*gnv) {
		req.geneve = &**gnv;
		// the outer IP length field holds the outer UDP, Geneve and the inner frame
		const uint32_t max = 65535 - (geneve_overhead(**gnv) - 14 - ((*gnv)->ipv6 ? 40 : 0));
		if (o.size > max)
			return usage_error("--size " + std::to_string(o.size) + " too large for Geneve (at most " +
					   std::to_string(max) + ")");
	}
	if (!o.gso.empty()) {
		if (o.gso != "tso" && o.gso != "uso" && o.gso != "ufo")
			return usage_error("--gso must be tso, uso or ufo");
		if ((o.gso == "tso") != spec.tcp)
			return usage_error("--gso " + o.gso + " needs --proto " + (o.gso == "tso" ? "tcp" : "udp"));
		req.type = o.gso == "tso" ? (spec.ipv6 ? GsoType::tso6 : GsoType::tso4)
			 : o.gso == "uso" ? (spec.ipv6 ? GsoType::uso6 : GsoType::uso4)
					  : (spec.ipv6 ? GsoType::ufo6 : GsoType::ufo4);
		// the default fills a 1500-byte MTU, tags and outer headers included
		// (the device's smaller MTU: set once the device is known)
		req.mss = o.mss ? o.mss
				: static_cast<uint16_t>(default_mss(req.type, 1500, static_cast<unsigned>(spec.vids.size()),
								    *gnv ? geneve_overhead(**gnv) : 0));
	} else if (o.mss) {
		return usage_error("--mss needs --gso");
	} else if (o.sw_csum) {
		return usage_error("--sw-csum needs --gso (plain frames: checksums in software unless --tx-csum)");
	}
	if (req.type != GsoType::none || req.geneve) {
		// tags go in while each frame is copied, never into the super-packet
		// (with Geneve: on the outer frame)
		req.ntags = static_cast<uint8_t>(spec.vids.size());
		for (size_t i = 0; i < spec.vids.size(); i++)
			req.tags[i] = GsoVlanTag{static_cast<uint16_t>(spec.vids.size() == 2 && i == 0 ? 0x88a8 : 0x8100),
						 spec.vids[i], 0, false};
		spec.vids.clear();
	}
	// Validate the frame before touching the system.
	if (req.type != GsoType::none) {
		auto super = build_frame(spec);
		if (!super)
			return super.error();
		GsoError why{};
		const std::span<const std::byte> in(super->bytes);
		if (gso_count(std::span<const std::span<const std::byte>>(&in, 1), req, &why) < 0)
			return usage_error("--gso " + o.gso + ": " + to_string(why));
	} else if (auto f = make_tx_frame(spec, req, false); !f) {
		return f.error();
	}

	auto kernel = features::parse_kernel_arg(o.kernel);
	if (!kernel)
		return kernel.error();
	if (auto s = prepare(g); !s)
		return s;
	auto dev = netdev_lookup(o.ifname);
	if (!dev)
		return dev.error();
	if (o.src_mac.empty() || (*gnv && o.outer_src_mac.empty())) {
		auto m = netdev_mac(dev->name);
		if (!m)
			return m.error();
		if (o.src_mac.empty())
			spec.src_mac = *m;
		if (*gnv && o.outer_src_mac.empty())
			(*gnv)->src_mac.b = *m;
	}
	uint32_t tx_frame = 0;	// GSO segments always fit a chunk
	if (req.type == GsoType::none) {
		auto f = make_tx_frame(spec, req, false);
		if (!f)
			return f.error();
		tx_frame = static_cast<uint32_t>(f->bytes.size());
	}
	EngineUse use{false, true, false, tx_frame};
	use.tx_md = req.type != GsoType::none ? !o.sw_csum : o.tx_csum;
	// The frame layout follows the request, not the kernel: with TX metadata
	// asked for, every frame starts after its metadata area, so what fits
	// is the same on a kernel that has the metadata and on one that has not.
	const uint32_t md_room = use.tx_md && !o.no_tx_metadata ? sizeof(xsk::TxMetadata) : 0;
	if (req.type != GsoType::none) {
		if (!o.mss) {
			auto mtu = netdev_mtu(dev->name);
			if (!mtu)
				return mtu.error();
			req.mss = static_cast<uint16_t>(
				default_mss(req.type, *mtu, req.ntags, req.geneve ? geneve_overhead(*req.geneve) : 0));
		}
		auto longest = check_segments_fit(spec, req, o, o.frame_size - md_room, md_room);
		if (!longest)
			return longest.error();
		if (auto s = check_fits_device(*dev, o, *longest, req.ntags, true, req.mss); !s)
			return s;
	} else if (auto s = check_fits_device(*dev, o, tx_frame,
					      static_cast<unsigned>(req.geneve ? req.ntags : spec.vids.size()), false, 0);
		   !s) {
		return s;
	} else if (tx_frame + md_room > o.frame_size && !probe_xdp_use_sg().ok) {
		return usage_error("--size " + std::to_string(o.size) + ": a frame of " + std::to_string(tx_frame) +
				   " bytes spans several " + std::to_string(o.frame_size) +
				   "-byte UMEM frames, which needs multi-buffer AF_XDP: " + kernel_lacks(kFeatXdpUseSg));
	}
	auto qs = bound_queues(*dev, o, false, XO_XSK_MAX_QUEUES);
	if (!qs)
		return qs.error();
	auto eng = make_engine(*dev, o, use, *qs);
	if (!eng)
		return eng.error();
	std::optional<xsk::XskProgram> zc_prog;
	const SendDriver drv = send_driver(*dev, *kernel);
	if (auto st = zc_tx_program(*dev, o, use, eng, zc_prog, drv, *qs); !st)
		return st;
	Engine &e = *eng;
	// one line where the checksum moved to software against the request
	if (use.tx_md && !e.md_why.empty() && !g.json)
		std::fprintf(stderr, "note: checksums in software: %s\n", e.md_why.c_str());
	if (req.type != GsoType::none) {
		// the engine computes (or leaves partial) every checksum itself
		auto super = build_frame(spec);
		if (!super)
			return super.error();
		std::optional<PcapWriter> pcap;
		if (!o.pcap.empty()) {
			auto w = PcapWriter::open(o.pcap);
			if (!w)
				return w.error();
			pcap.emplace(std::move(*w));
		}
		// ask the feature model what this queue does; the engine does the rest
		PacketClass pc;
		pc.l4 = req.type == GsoType::tso4 ? L4::tcp4 : req.type == GsoType::tso6 ? L4::tcp6
		      : req.type == GsoType::uso4 ? L4::udp4 : req.type == GsoType::uso6 ? L4::udp6 : L4::ufo4;
		pc.vlans = req.ntags;
		pc.encap = req.geneve ? Encap::geneve : Encap::none;
		pc.payload = static_cast<unsigned>(super->bytes.size());
		pc.gso_size = req.mss;
		pc.csum_partial = !o.sw_csum;
		TxPlan plan = send_plan(drv, e, o, pc, *kernel);
		print_plan(g, e, plan, to_string(req.type), *kernel);
		req.csum = plan.csum_hw ? CsumMode::tx_metadata : CsumMode::software;
		return send_gso_loop(g, *dev, e, o, *super, req, pcap);
	}
	bool hw_csum = false;	// the frame asks the queue for its checksum (TX metadata)
	{
		PacketClass pc;
		pc.gso = false;
		pc.csum_partial = o.tx_csum;
		pc.vlans = static_cast<unsigned>(req.geneve ? req.ntags : spec.vids.size());
		TxPlan plan = send_plan(drv, e, o, pc, *kernel);
		hw_csum = plan.csum_hw;
		print_plan(g, e, plan, "none", *kernel);
	}
	// Geneve: the engine wraps the inner frame once; every send reuses it
	auto built = make_tx_frame(spec, req, hw_csum);
	if (!built)
		return built.error();
	const auto &frame = built->bytes;
	const uint32_t len = static_cast<uint32_t>(frame.size());
	const uint32_t cap = e.socks.front().tx_chunk_capacity();
	const uint32_t chunks = (len + cap - 1) / cap;	// > 1 only with multi-buffer
	if (chunks > 1 && !e.socks.front().multi_buffer())
		return usage_error("frame of " + std::to_string(len) + " bytes needs multi-buffer");
	if (chunks > o.batch)
		return usage_error("--batch must be at least the " + std::to_string(chunks) + " chunks of one frame");

	std::optional<PcapWriter> pcap;
	if (!o.pcap.empty()) {
		auto w = PcapWriter::open(o.pcap);
		if (!w)
			return w.error();
		pcap.emplace(std::move(*w));
	}

	// The frame is the same every time: write it into every frame once, so
	// the loop only moves descriptors (as pktgen does).
	for (auto &s : e.socks) {
		std::vector<uint64_t> all(s.accounting().total);
		uint32_t n = s.tx_alloc(all);
		for (uint32_t i = 0; i < n; i++) {
			uint32_t k = i % chunks;
			uint32_t off = k * cap, l = std::min(cap, len - off);
			std::memcpy(s.data(all[i]), frame.data() + off, l);
		}
		s.tx_free({all.data(), n});
	}
	if (!g.json)
		std::fprintf(stderr, "sending on %s queues %s (%s mode, tx-metadata %s%s), %u-byte frames%s\n",
			     dev->name.c_str(), queue_list(e).c_str(), e.mode.c_str(), e.md.c_str(),
			     hw_csum ? ", checksum by TX metadata" : "", len,
			     req.geneve ? (" in Geneve VNI " + std::to_string(req.geneve->vni) + " port " +
					   std::to_string(req.geneve->dst_port)).c_str()
					: "");

	SendPacer pacer(g, *dev, e, o);
	const uint64_t limit = o.count.value_or(UINT64_MAX);
	const uint32_t burst = o.batch / chunks;	// frames per socket per round
	std::vector<uint64_t> addrs(burst * chunks);
	std::vector<xsk::TxDesc> descs(burst * chunks);
	uint64_t queued = 0;	// frames on a TX ring so far
	timespec ts{};

	while (queued < limit) {
		auto st = pacer.step(queued, 64, [len](const Totals &cur) { return cur.packets * len; });
		if (st == SendPacer::Step::stop)
			break;
		if (st == SendPacer::Step::wait)
			continue;
		for (auto &s : e.socks) {
			s.complete();
			uint64_t want = std::min<uint64_t>(burst, limit - queued);
			if (o.rate) {
				uint64_t allowed = pacer.allowed();
				want = allowed > queued ? std::min<uint64_t>(want, allowed - queued) : 0;
			}
			if (!want)
				break;
			uint32_t n = s.tx_alloc({addrs.data(), static_cast<size_t>(want * chunks)});
			n -= n % chunks;
			for (uint32_t i = 0; i < n; i++) {
				uint32_t k = i % chunks;
				uint32_t l = std::min(cap, len - k * cap);
				if (chunks > 1) // prefilled frames only hold whole one-chunk frames
					std::memcpy(s.data(addrs[i]), frame.data() + k * cap, l);
				descs[i] = xsk::TxDesc{addrs[i], l, k + 1 < chunks, built->partial && k == 0,
						       built->csum_start, built->csum_offset};
			}
			uint32_t m = s.tx_submit({descs.data(), n});
			if (m < n)
				s.tx_free({addrs.data() + m, n - m});
			if (n % chunks)
				s.tx_free({addrs.data() + n, n % chunks});
			queued += m / chunks;
			s.kick();
			if (pcap && m) {
				clock_gettime(CLOCK_REALTIME, &ts);
				for (uint32_t i = 0; i < m / chunks; i++)
					pcap->write(std::span<const std::byte>(frame), ts);
			}
		}
	}
	// every queued frame must come back on the completion ring
	Totals t = sum(e, false);
	return pacer.finish(t.submitted * len, pcap);
}

// ---- recv -------------------------------------------------------------------

// --pcap-per-socket: rx.pcap -> rx.0.pcap, rx.1.pcap, ...; other names get .N.pcap appended.
std::string pcap_per_socket_name(const std::string &path, size_t i)
{
	const std::string ext = ".pcap";
	const bool has_ext = path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
	return (has_ext ? path.substr(0, path.size() - ext.size()) : path) + "." + std::to_string(i) + ext;
}

// recv --geneve: the sockets sit in slots 0..N-1 of the XSKMAP xdp_geneve
// pinned for the interface, for as long as recv runs; xdp_geneve stays.
class GeneveSlots {
public:
	GeneveSlots(GeneveMaps maps) : maps_(std::move(maps)) {}
	~GeneveSlots() { (void)clear(); }
	GeneveMaps &maps() { return maps_; }
	Status add(uint32_t queue, uint32_t slot, int fd)
	{
		// never take a slot from a live socket: the kernel empties those of
		// closed ones, so a taken slot is another receiver's
		if (auto s = maps_.set_xsk(queue, slot, fd, false); !s)
			return s;
		slots_.push_back({queue, slot});
		return ok();
	}
	Status clear()
	{
		Status st = ok();
		for (auto [queue, slot] : slots_)
			if (auto s = maps_.set_xsk(queue, slot, -1); !s && st)
				st = s;
		slots_.clear();
		return st;
	}

private:
	GeneveMaps maps_;
	std::vector<std::pair<uint32_t, uint32_t>> slots_;	// (queue, slot)
};

// How many sockets recv --geneve makes on each queue: --sockets (or its
// older form, a plain --queues N), else the xsk rule of --vni, else the
// largest xsk rule on the interface.
Result<uint32_t> geneve_sockets(const GeneveMaps &maps, const Netdev &dev, const XskOpts &o)
{
	auto rules = maps.rules();
	if (!rules)
		return rules.error();
	uint32_t rule_queues = 0;
	if (o.vni) {
		auto vni = parse_vni(*o.vni);
		if (!vni)
			return usage_error("--vni: " + vni.error().msg);
		const GeneveRule *r = nullptr;
		for (const auto &x : *rules)
			if (x.vni == *vni)
				r = &x;
		if (!r)
			return runtime_error("no Geneve rule for VNI " + std::to_string(*vni) + " on " + dev.name, ENOENT);
		if (r->action != XO_GNV_ACT_XSK)
			return runtime_error("the Geneve rule of VNI " + std::to_string(*vni) + " on " + dev.name + " is " +
						     geneve_action_name(r->action) + ", not xsk",
					     EINVAL);
		rule_queues = r->queues;
	} else {
		for (const auto &x : *rules)
			if (x.action == XO_GNV_ACT_XSK)
				rule_queues = std::max(rule_queues, x.queues);
	}
	std::optional<uint32_t> given = o.sockets;
	if (!given && queues_is_count(o))
		given = static_cast<uint32_t>(std::stoul(*o.queues));
	if (given) {
		if (rule_queues > *given)
			std::fprintf(stderr, "warning: xdp_geneve steers to %u slots per queue, %u sockets leave the rest "
					     "empty (counted no-target)\n",
				     rule_queues, *given);
		return *given;
	}
	if (!rule_queues)
		return runtime_error("no Geneve rule on " + dev.name + " steers to AF_XDP sockets (geneve rule add " +
					     dev.name + " --vni N --action xsk --queues N), or give --sockets",
				     ENOENT);
	return rule_queues;
}

Status run_recv(const Globals &g, const XskOpts &o)
{
	install_stop_handler();	// from the start, as run_send
	if (o.geneve) {
		if (o.filter_port || o.filter_vlan || o.xdp_mode_given)
			return usage_error("--filter-udp-port, --filter-vlan and --xdp-mode are xdp_xsk's; with --geneve "
					   "xdp_geneve's rules decide what arrives");
		if (o.sockets && (*o.sockets < 1 || *o.sockets > XO_GNV_MAX_QUEUES))
			return usage_error("--sockets must be 1.." + std::to_string(XO_GNV_MAX_QUEUES));
		if (o.sockets && queues_is_count(o))
			return usage_error("--sockets and a count of --queues (its older form) are mutually exclusive");
	} else if (o.vni) {
		return usage_error("--vni needs --geneve");
	} else if (o.sockets) {
		return usage_error("--sockets needs --geneve");
	}
	if (auto s = check_common(o, o.geneve ? XO_GNV_MAX_RXQ : XO_XSK_MAX_QUEUES); !s)
		return s;
	auto xm = parse_xdp_mode(o.xdp_mode);
	if (!xm)
		return xm.error();
	if (o.filter_vlan && *o.filter_vlan > 4094)
		return usage_error("--filter-vlan must be 0..4094");
	if (o.keep_rx_vlan && o.geneve)
		return usage_error("--keep-rx-vlan is for recv's own xdp_xsk; with --geneve, xdp_geneve's attach decides "
				   "(offload-tool attach IFACE geneve --keep-rx-vlan)");
	if (o.multi_buffer != "auto" && o.multi_buffer != "on" && o.multi_buffer != "off")
		return usage_error("--multi-buffer must be auto, on or off");
	if (o.pcap_per_socket && o.pcap.empty())
		return usage_error("--pcap-per-socket needs --pcap");
	if (auto s = prepare(g); !s)
		return s;
	auto dev = netdev_lookup(o.ifname);
	if (!dev)
		return dev.error();
	std::optional<GeneveSlots> slots;
	uint32_t nsock = 0;
	if (o.geneve) {
		if (auto s = bpffs_check(); !s)
			return s;
		if (auto s = reconcile_pins(*dev); !s)
			return s;
		auto maps = GeneveMaps::open(pin_dir(*dev), dev->name, false);
		if (!maps)
			return maps.error();
		auto n = geneve_sockets(*maps, *dev, o);
		if (!n)
			return n.error();
		nsock = *n;
		slots.emplace(std::move(*maps));
		// a hardware VLAN filter drops tagged frames before any XDP program
		if (auto f = rx_vlan_facts(*dev))
			warn_vlan_filter(*f, dev->name);
		auto st = status(*dev);
		bool attached = false;
		if (st)
			for (const auto &a : st->ours)
				attached = attached || (a.feature == Feature::geneve && a.hook == Hook::xdp);
		if (!attached)
			std::fprintf(stderr, "warning: xdp_geneve is not attached to %s: nothing reaches the sockets until "
					     "offload-tool attach %s geneve\n",
				     dev->name.c_str(), dev->name.c_str());
	}
	// XDP_USE_SG where frames can outgrow a chunk: asked for needlessly, it
	// would make the kernel fall back to copy mode on a zero-copy driver
	// without multi-buffer support (xp_assign_dev)
	bool sg = o.multi_buffer == "on";
	if (sg && !probe_xdp_use_sg().ok)
		return usage_error("--multi-buffer on: " + kernel_lacks(kFeatXdpUseSg));
	const uint32_t one_chunk = o.frame_size - kXdpPacketHeadroom;
	if (o.multi_buffer == "auto") {
		auto mtu = netdev_mtu(dev->name);
		if (!mtu)
			return mtu.error();
		sg = *mtu + 14 + 8 > one_chunk;	// Ethernet + two tags
	}
	auto qs = bound_queues(*dev, o, true, o.geneve ? XO_GNV_MAX_RXQ : XO_XSK_MAX_QUEUES);
	if (!qs)
		return qs.error();
	// Sockets first: a queue in use fails here, before any program is attached.
	auto eng = make_engine(*dev, o, EngineUse{true, false, sg, 0, nsock}, *qs);
	if (!eng)
		return eng.error();
	Engine &e = *eng;
	e.geneve = o.geneve;
	// Before 6.6 the kernel's XDP redirect refuses a multi-buffer frame for
	// an XSKMAP outright (the socket never sees it, so no rx_dropped); from
	// 6.6 a socket without XDP_USE_SG drops it and counts it.
	if (!e.sg_why.empty())
		e.sg_why += "; frames over " + std::to_string(one_chunk) + " bytes are dropped " +
			    (probe_xdp_use_sg().ok ? std::string("(rx_dropped)")
						   : std::string("by the kernel's XDP redirect before they reach "
								 "the socket (not in rx_dropped)"));
	std::optional<xsk::XskProgram> prog;
	if (o.geneve) {
		for (size_t k = 0; k < e.socks.size(); k++)
			if (auto st = slots->add(e.socks[k].queue(), e.slot_of[k], e.socks[k].fd()); !st)
				return st;
	} else {
		xsk::RxFilter filter;
		filter.udp_dport = o.filter_port;
		filter.vid = o.filter_vlan;
		filter.keep_rx_vlan = o.keep_rx_vlan;
		// a recv killed before it could detach left its xdp_xsk behind
		if (auto r = xsk::reap_stale_xsk(*dev); !r)
			return r.error();
		// read once the stale receiver's settings are back: for the VLAN
		// filter line and for the attach (where the tags are)
		if (auto f = rx_vlan_facts(*dev)) {
			warn_vlan_filter(*f, dev->name);
			filter.vlan_facts = *f;
		}
		const bool was_up = netdev_running(dev->name).value_or(false);
		auto p = xsk::XskProgram::attach(*dev, *xm, filter);
		if (!p) {
			// single-program XDP: xdp_geneve holds the hook, but its XSKMAP is open
			auto st = status(*dev);
			if (st)
				for (const auto &a : st->ours)
					if (a.feature == Feature::geneve && a.hook == Hook::xdp)
						return runtime_error(p.error().msg + "; xdp_geneve is attached: "
									 "recv --geneve receives from its xsk rules",
								     p.error().err);
			return p.error();
		}
		prog.emplace(std::move(*p));
		for (auto &s : e.socks)
			if (auto st = prog->add_socket(s.queue(), s.fd()); !st)
				return st;
		// ready only once the driver's rings (zero-copy: rebuilt for the
		// program) carry frames again
		wait_for_carrier(*dev, was_up);
	}
	std::optional<PcapWriter> pcap;		// every frame, or
	std::vector<PcapWriter> pcaps;		// one file per socket
	if (!o.pcap.empty() && !o.pcap_per_socket) {
		auto w = PcapWriter::open(o.pcap);
		if (!w)
			return w.error();
		pcap.emplace(std::move(*w));
	}
	if (o.pcap_per_socket) {
		for (size_t i = 0; i < e.socks.size(); i++) {
			auto w = PcapWriter::open(pcap_per_socket_name(o.pcap, i));
			if (!w)
				return w.error();
			pcaps.push_back(std::move(*w));
		}
	}
	GeneveCounters gnv0;
	if (slots) {
		auto c = slots->maps().counters();
		if (c)
			gnv0 = *c;
	}
	for (auto &s : e.socks)
		s.refill();
	// what the device loses before XDP shows only in its own counters
	const auto dev_st0 = netdev_stats(*dev);
	// An AF_XDP socket receives only from its own queue: say so when the
	// device has queues no socket is bound to, and how to steer flows here.
	auto ch = read_channels(*dev);
	std::vector<uint32_t> unbound;
	if (ch) {
		const auto bound = queues_of(e);
		for (uint32_t q = 0; q < ch->rx; q++)
			if (!std::binary_search(bound.begin(), bound.end(), q))
				unbound.push_back(q);
		if (!unbound.empty())
			std::fprintf(stderr,
				     "note: %s has %u RX queues (%s), recv has sockets on %zu (queue%s %s): frames arriving "
				     "on queue%s %s reach no socket (%s, passed to the stack); %s\n",
				     dev->name.c_str(), ch->rx, ch->source.c_str(), bound.size(), bound.size() > 1 ? "s" : "",
				     queue_list(e).c_str(), unbound.size() > 1 ? "s" : "", queue_list_text(unbound).c_str(),
				     o.geneve ? "xdp_geneve counts them no-target" : "xdp_xsk counts them no_socket",
				     rx_steering_remedy(live_driver_name(dev->name), dev->name, bound).c_str());
	}
	if (g.json) {
		// tells scripts the sockets are in place
		Json j;
		j.begin_object().kv("type", "start").kv("interface", dev->name).kv("queues", queue_list(e))
			.kv("sockets", static_cast<uint64_t>(e.socks.size())).kv("mode", e.mode)
			.kv("multi_buffer", e.sg).kv("kernel", running_kernel().text);
		if (ch)
			j.kv("rx_queues", static_cast<uint64_t>(ch->rx)).kv("rx_queues_source", ch->source)
				.kv("unbound_queues", queue_list_text(unbound));
		if (!e.sg_why.empty())
			j.kv("multi_buffer_why", e.sg_why);
		j.kv("via", o.geneve ? "xdp_geneve" : "xdp_xsk").end_object().print();
		std::fflush(stdout);
	} else if (o.geneve) {
		std::fprintf(stderr, "receiving on %s queue%s %s with %zu sockets each in xdp_geneve's XSKMAP slots 0..%zu "
				     "of their queue (%s mode, multi-buffer %s%s)\n",
			     dev->name.c_str(), queues_of(e).size() > 1 ? "s" : "", queue_list(e).c_str(), (size_t)nsock,
			     (size_t)nsock - 1, e.mode.c_str(),
			     e.sg ? "on" : "off", e.sg_why.empty() ? "" : (": " + e.sg_why).c_str());
	} else {
		std::fprintf(stderr, "receiving on %s queues %s (%s mode, multi-buffer %s%s, xdp_xsk prog id %u %s)\n",
			     dev->name.c_str(), queue_list(e).c_str(), e.mode.c_str(), e.sg ? "on" : "off",
			     e.sg_why.empty() ? "" : (": " + e.sg_why).c_str(), prog->prog_id(), to_string(*xm));
	}

	install_stop_handler();
	auto watch = LinkWatch::open(*dev);
	if (!watch)
		return watch.error();
	std::optional<std::string> dev_gone;
	double next_watch = 0;
	const uint64_t limit = o.count.value_or(UINT64_MAX);
	// room for the longest descriptor chain: rx_peek then returns whole frames
	std::vector<xsk::RxDesc> descs(std::max(o.batch, xsk::kMaxRxChain));
	std::vector<pollfd> pfds;
	for (auto &s : e.socks)
		pfds.push_back(pollfd{s.fd(), POLLIN, 0});
	std::vector<std::span<const std::byte>> pieces(xsk::kMaxRxChain);
	size_t npieces = 0;
	uint64_t got = 0;
	const double t0 = now_s();
	double next_report = o.interval > 0 ? t0 + o.interval : INFINITY, last = t0, last_rx = 0;
	Totals prev{};
	bool interrupted = false;
	timespec ts{};

	while (got < limit) {
		bool any = false;
		for (size_t k = 0; k < e.socks.size(); k++) {
			auto &s = e.socks[k];
			uint32_t n = s.rx_peek(descs);
			if (!n)
				continue;
			any = true;
			PcapWriter *w = pcaps.empty() ? (pcap ? &*pcap : nullptr) : &pcaps[k];
			if (w)
				clock_gettime(CLOCK_REALTIME, &ts);
			for (uint32_t i = 0; i < n; i++) {
				const auto &d = descs[i];
				if (w && npieces < pieces.size())
					pieces[npieces++] = {s.data(d.addr), d.len};
				if (d.more)
					continue;
				if (got < limit) {
					got++;
					if (w) {
						if (npieces == 1)
							w->write(pieces[0], ts);
						else
							w->write(std::span<const std::span<const std::byte>>(pieces.data(), npieces), ts);
					}
				}
				npieces = 0;
			}
			s.rx_release({descs.data(), n});
			s.refill();
		}
		double t = now_s();
		if (any)
			last_rx = t;
		if (stop_requested()) {
			interrupted = true;
			break;
		}
		if (t >= next_watch) {
			next_watch = t + 0.1;
			if ((dev_gone = watch->gone()))
				break;
		}
		if (o.duration && t - t0 >= *o.duration)
			break;
		if (o.idle && last_rx > 0 && t - last_rx >= *o.idle)
			break;
		if (t >= next_report) {
			Totals cur = sum(e, true);
			std::optional<xsk::XskProgCounters> xc;
			if (prog)
				if (auto c = prog->counters())
					xc = *c;
			print_interval(g, *dev, e, true, cur, prev, t - last, xc ? &*xc : nullptr);
			prev = cur;
			last = t;
			next_report = t + o.interval;
		}
		if (!any) {
			// a shared group has one fill ring on one queue: one wakeup serves all
			for (size_t k = 0; k < e.socks.size(); k++) {
				auto &s = e.socks[k];
				if (e.fill_ring_of[k] == k && s.fill_needs_wakeup())
					(void)::recvfrom(s.fd(), nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
			}
			int r = ::poll(pfds.data(), pfds.size(), 10);
			(void)r;
		}
	}
	const double secs = now_s() - t0;
	std::optional<xsk::XskProgCounters> xc;
	std::optional<GeneveCounterSet> gnv;
	if (prog) {
		if (auto c = prog->counters())
			xc = *c;
		if (auto s = prog->detach(); !s && !dev_gone)
			return s;
	}
	if (slots) {
		if (auto c = slots->maps().counters()) {
			gnv.emplace();
			for (unsigned r = 0; r < kGeneveStats; r++) {
				(*gnv)[r].packets = c->total[r].packets - gnv0.total[r].packets;
				(*gnv)[r].bytes = c->total[r].bytes - gnv0.total[r].bytes;
			}
		}
		if (auto s = slots->clear(); !s && !dev_gone)
			return s;
	}
	Totals t = sum(e, true);
	if (dev_st0)
		if (auto st = netdev_stats(*dev))
			t.dev_rx = dev_rx_drops(*dev_st0, *st);
	uint64_t pcap_frames = 0;
	if (pcap) {
		if (auto s = pcap->close(); !s)
			return s;
		pcap_frames = pcap->frames();
	}
	for (auto &w : pcaps) {
		if (auto s = w.close(); !s)
			return s;
		pcap_frames += w.frames();
	}
	print_summary(g, *dev, e, true, t, secs, xc ? &*xc : nullptr, pcap_frames, interrupted, gnv ? &*gnv : nullptr);
	if (t.dev_rx)
		if (auto n = rx_lost_note(dev->name, *t.dev_rx, e.mode == "zero-copy"); !n.empty())
			std::fprintf(stderr, "%s\n", n.c_str());
	if (dev_gone)
		return runtime_error("recv stopped: " + *dev_gone);
	if (!accounting_ok(e, nullptr))
		return runtime_error("UMEM frame accounting inconsistent (bug)");
	return ok();
}

void add_common(CLI::App *c, XskOpts &o)
{
	c->add_option("interface", o.ifname, "Interface")->required();
	c->add_option("--queue", o.queue, "Queue to use (default 0)")->check(whole_number(0, UINT32_MAX));
	c->add_option("--queues", o.queues,
		      "Queues to use, one socket each, one shared UMEM: N (0..N-1), a list (0-3, 1,3) or all");
	c->add_option("--count", o.count, "Stop after N frames")->check(whole_number(1));
	c->add_option("--duration", o.duration, "Stop after S seconds")->check(positive_number());
	c->add_option("--interval", o.interval, "Stats line every S seconds (0: none)")
		->check(positive_number(true))->capture_default_str();
	c->add_option("--pcap", o.pcap, "Write the frames to this pcap file");
	c->add_option("--xsk-mode", o.xsk_mode, "AF_XDP bind mode: auto, zero-copy or copy")->capture_default_str();
	c->add_option("--ring-size", o.ring_size, "Size of every ring (power of two)")
		->check(whole_number(64, 65536))->capture_default_str();
	c->add_option("--frames", o.frames, "UMEM frames per queue (default 2 x ring size)")
		->check(whole_number(1, UINT32_MAX));
	c->add_option("--frame-size", o.frame_size, "UMEM chunk size: 2048 or 4096")
		->check(CLI::IsMember({"2048", "4096"}))->capture_default_str();
	c->add_option("--batch", o.batch, "Descriptors per ring operation")->check(whole_number(1, 1024))
		->capture_default_str();
	c->add_flag("--no-need-wakeup", o.no_need_wakeup, "Do not bind with XDP_USE_NEED_WAKEUP");
	c->add_flag("--busy-poll", o.busy_poll, "Prefer busy polling (SO_PREFER_BUSY_POLL)");
}

} // namespace

void add_xsk_commands(CLI::App &app, Globals &g, int &rc)
{
	auto so = std::make_shared<XskOpts>();
	auto *s = app.add_subcommand("send", "Generate frames through AF_XDP (pktgen-like)");
	add_common(s, *so);
	s->add_option("--dst-mac", so->dst_mac, "Destination MAC")->required();
	s->add_option("--src-mac", so->src_mac, "Source MAC (default: the interface's)");
	s->add_option("--src-ip", so->src_ip, "Source IPv4/IPv6 address")->required();
	s->add_option("--dst-ip", so->dst_ip, "Destination IPv4/IPv6 address")->required();
	s->add_option("--proto", so->proto, "udp or tcp")->capture_default_str();
	s->add_option("--src-port", so->src_port, "L4 source port")->check(whole_number(0, 65535))
		->capture_default_str();
	s->add_option("--dst-port", so->dst_port, "L4 destination port")->check(whole_number(0, 65535))
		->capture_default_str();
	s->add_option("--size", so->size, "Frame size in bytes (no FCS, tags included)")
		->check(whole_number(1, UINT32_MAX))->capture_default_str();
	s->add_option("--rate", so->rate, "Frames per second (default: as fast as possible)")
		->check(positive_number());
	s->add_option("--vlan", so->vlan, "VID or OUTER,INNER (802.1ad + 802.1Q)");
	s->add_option("--gso", so->gso, "tso | uso | ufo: --size is a super-packet, segmented into each send");
	s->add_option("--mss", so->mss,
		      "Segment payload (UFO: fragment data) bytes; default fills a 1500-byte MTU (the device's when "
		      "smaller) with the tags and tunnel headers")
		->check(whole_number(1, 65535));
	s->add_flag("--sw-csum", so->sw_csum,
		    "With --gso: compute every checksum in software even where the queue takes TX metadata");
	s->add_flag("--tx-csum", so->tx_csum,
		    "Ask the queue for the L4 checksum (AF_XDP TX metadata) where the driver honours it in the bound mode; "
		    "software elsewhere, with a note");
	s->add_option("--kernel", so->kernel,
		      "Driver facts of Linux 6.1 | 6.12 | 7.2 (newest) | running (default) for the checksum decision");
	s->add_flag("--no-tx-metadata", so->no_tx_metadata,
		    "Register the UMEM without TX metadata (default: registered for --gso and --tx-csum only)");
	s->add_option("--geneve-vni", so->geneve_vni,
		      "Send every frame (or segment) inside Geneve with this VNI (0..16777215); --size is the inner frame");
	s->add_option("--geneve-port", so->geneve_port, "Outer UDP destination port (default 6081)");
	s->add_option("--outer-src-ip", so->outer_src_ip, "Outer (tunnel) source IPv4/IPv6 address");
	s->add_option("--outer-dst-ip", so->outer_dst_ip, "Outer (tunnel) destination IPv4/IPv6 address");
	s->add_option("--outer-src-mac", so->outer_src_mac, "Outer source MAC (default: the interface's)");
	s->add_option("--outer-dst-mac", so->outer_dst_mac, "Outer destination MAC (default: --dst-mac)");
	s->add_flag("--geneve-csum", so->geneve_csum, "Compute the outer UDP checksum (default: zero)");
	s->callback([&g, &rc, so] {
		if (auto st = run_send(g, *so); !st)
			rc = report(st.error());
	});

	auto ro = std::make_shared<XskOpts>();
	auto *r = app.add_subcommand("recv", "Receive frames through AF_XDP (attaches xdp_xsk while running, "
					     "or shares xdp_geneve's XSKMAP with --geneve)");
	add_common(r, *ro);
	auto *xdp_mode = r->add_option("--xdp-mode", ro->xdp_mode, "XDP attach mode: native or skb")->capture_default_str();
	r->add_flag("--geneve", ro->geneve,
		    "Do not attach xdp_xsk: put N sockets on each queue (--queue, default 0, or --queues LIST|all), "
		    "sharing that queue's fill ring, in slots 0..N-1 of the queue's row of xdp_geneve's XSKMAP (N: "
		    "--sockets, else the rule's --queues; a plain --queues N is the older form of --sockets)");
	r->add_option("--sockets", ro->sockets, "With --geneve: sockets per queue (1..64)")
		->check(whole_number(1, XO_GNV_MAX_QUEUES));
	r->add_option("--vni", ro->vni, "With --geneve: N from this VNI's xsk rule");
	r->add_flag("--pcap-per-socket", ro->pcap_per_socket, "With --pcap FILE.pcap: FILE.<socket>.pcap for each socket");
	r->add_option("--filter-udp-port", ro->filter_port, "Only redirect UDP to this destination port")
		->check(whole_number(1, 65535));
	r->add_option("--filter-vlan", ro->filter_vlan, "Only redirect this outer VID (0: untagged)")
		->check(whole_number(0, 4094));
	r->add_flag("--keep-rx-vlan", ro->keep_rx_vlan,
		    "Leave the device's RX VLAN stripping on (frames reach the sockets without the tags it strips, "
		    "and they escape --filter-vlan)");
	r->add_option("--idle", ro->idle, "Stop S seconds after the last frame")->check(positive_number());
	r->add_option("--multi-buffer", ro->multi_buffer,
		      "XDP_USE_SG (frames over several chunks): auto (when the MTU needs it), on or off")
		->capture_default_str();
	r->callback([&g, &rc, ro, xdp_mode] {
		ro->xdp_mode_given = xdp_mode->count() > 0;
		if (auto st = run_recv(g, *ro); !st)
			rc = report(st.error());
	});
}

} // namespace xoffload::cli
