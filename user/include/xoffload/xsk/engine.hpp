// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The AF_XDP traffic engine of send and recv: one UMEM, sockets on a set of
// queues (one per queue, or a group sharing each queue's fill ring), the
// XDP_USE_SG and TX metadata decisions taken at bind, and the accounting a
// run is summed up by (totals, per-ring drop counters, UMEM frame checks).
//
// Ownership: an Engine owns its UMEM and its sockets (move-only). Threads:
// one thread sets an Engine up and sums it up; while send or recv runs,
// each socket belongs to one worker thread (workers.hpp), and nothing here
// may touch it from another. Errors: Result,
// never exceptions; nothing here prints or reads process-wide state (the
// stop request, where one is needed, is passed in).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "xoffload/core/netdev.hpp"
#include "xoffload/core/result.hpp"
#include "xoffload/xsk/xsk.hpp"

namespace xoffload::xsk {

// How the sockets are bound and sized (the common options of send and recv).
struct EngineConfig {
	std::string xsk_mode = "auto";	// auto | zero-copy | copy (parse_bind_mode)
	uint32_t ring_size = 2048;	// every ring
	uint32_t frames = 0;		// UMEM frames per queue; 0 = 2 * ring_size
	uint32_t frame_size = 4096;	// UMEM chunk
	bool need_wakeup = true;	// XDP_USE_NEED_WAKEUP
	bool busy_poll = false;		// SO_PREFER_BUSY_POLL, SO_BUSY_POLL, SO_BUSY_POLL_BUDGET (SocketConfig)
	uint32_t busy_poll_budget = 64;	// frames one busy poll of the NAPI may take
	uint32_t busy_poll_usecs = 20;	// SO_BUSY_POLL
	std::string multi_buffer = "auto";	// RX XDP_USE_SG: auto (when needed and known), on, off
	bool no_tx_metadata = false;	// never register TX metadata
};

// What the sockets of a command are for.
struct EngineUse {
	bool rx = false, tx = false;
	bool rx_sg = false;		// bind with XDP_USE_SG where the kernel has it
	uint32_t tx_frame = 0;		// bytes of the largest frame sent whole (0: each fits a chunk)
	uint32_t shared = 0;		// > 0: that many sockets on each queue, one buffer pool per queue
	bool tx_md = false;		// a frame may ask for a TX metadata checksum: register it
};

// What the device itself lost while recv ran, before any XDP program saw
// it (deltas of its IFLA_STATS64 counters): no free RX buffer or
// descriptor (rx_missed_errors: igb's MPC, mlx5's out_of_buffer), its FIFO,
// a full ring; rx_dropped also counts what the stack dropped after
// XDP_PASS, so it is reported but not blamed on the ring.
struct DevRxDrops {
	uint64_t missed = 0, fifo = 0, over = 0, dropped = 0;
	uint64_t lost_before_xdp() const { return missed + fifo + over; }
};

// The counters of all sockets of a run, summed.
struct Totals {
	uint64_t packets = 0, bytes = 0;
	uint64_t ring_full = 0, kick_busy = 0, kick_errors = 0, wakeups = 0;
	int kick_errno = 0;		// errno of a kick error (the latest socket's)
	uint64_t k_rx_dropped = 0, k_rx_invalid = 0, k_tx_invalid = 0, k_rx_ring_full = 0, k_fill_empty = 0;
	uint64_t submitted = 0, completed = 0;
	uint64_t descs = 0;		// RX descriptors (more than packets: multi-buffer)
	// recv --gro / --verify-csum: the workers' engines so far (for the
	// interval lines; the summary has their whole GroStats)
	bool gro = false;
	uint64_t gro_frames_in = 0, gro_packets_out = 0, gro_super_packets = 0, gro_bad_csum = 0,
		 gro_frag_dropped = 0;
	std::optional<uint64_t> dev_tx_dropped;	// send: the device's tx_dropped over the run
	std::optional<DevRxDrops> dev_rx;	// recv: what the device lost over the run
};

// What one worker thread of a run did (send, recv): the CPU it was pinned
// to (-1: none), the queues of its sockets, their totals and the thread's
// CPU time.
struct ThreadTotals {
	int cpu = -1;
	std::vector<uint32_t> queues;
	Totals totals;
	double user_s = 0, sys_s = 0;	// its CPU time (getrusage RUSAGE_THREAD), kernel work in its system calls included
};

// The sockets of one command, with what the summary reports.
struct Engine {
	std::optional<Umem> umem;
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
	std::vector<ThreadTotals> threads;	// the worker threads of the run, filled as it ends
};

// Where socket k of an engine over @nqueues queues sits: the socket whose
// fill ring it uses, and its slot in its queue's group. @shared 0 or 1: one
// socket per queue, each its own ring, slot 0.
struct SocketLayout {
	std::vector<size_t> fill_ring_of;
	std::vector<uint32_t> slot_of;
};
SocketLayout socket_layout(size_t nqueues, uint32_t shared);

// The UMEM and the sockets on queues @qs (usage error: more than
// XO_GNV_MAX_QUEUES sockets on one queue, a bad xsk_mode). TX metadata is
// registered only where use asks for it, and dropped (the reason in md_why)
// where the kernel or the driver refuses it; a refused zero-copy bind says
// what the driver's facts under the running kernel explain.
Result<Engine> make_engine(const Netdev &dev, const EngineConfig &c, const EngineUse &use,
			   const std::vector<uint32_t> &qs);

// The queues a command binds: @queue alone when @queues is nullopt (queue 0
// when both are), else @queues as N (0..N-1), a list or "all" (the device's
// RX or TX queue count). @limit: queues the program behind the sockets can
// steer to. Usage error on a bad list; runtime error where the channels
// cannot be read.
Result<std::vector<uint32_t>> bound_queues(const Netdev &dev, std::optional<uint32_t> queue,
					   const std::optional<std::string> &queues, bool rx, unsigned limit);

// The distinct queues of the sockets, sorted, and as text ("0-3", "1,3").
std::vector<uint32_t> queues_of(const Engine &e);
std::string queue_list(const Engine &e);

// A driver that rebuilds its rings for an XDP program or an XSK pool drops
// the carrier for a moment: waits (at most 5 s, or until @stop says so) for
// it to come back when it was up before (@was_up) and is not now.
void wait_for_carrier(const Netdev &dev, bool was_up, const std::function<bool()> &stop);

// ---- accounting ---------------------------------------------------------------


// A counter's rise over a run (before and after; a counter that went back,
// as on a re-created device, counts as 0).
constexpr uint64_t counter_delta(uint64_t before, uint64_t after)
{
	return after >= before ? after - before : 0;
}

constexpr DevRxDrops dev_rx_drops(const NetdevStats &before, const NetdevStats &after)
{
	return DevRxDrops{counter_delta(before.rx_missed, after.rx_missed), counter_delta(before.rx_fifo, after.rx_fifo),
			  counter_delta(before.rx_over, after.rx_over),
			  counter_delta(before.rx_dropped, after.rx_dropped)};
}

// Sum of a kernel counter over sockets of which several may share one ring
// (create_shared: one buffer pool, one fill ring; XDP_STATISTICS reports
// rx_fill_ring_empty_descs of the pool to each): @ring_of[i] is the index of
// the socket whose ring socket i uses, and each ring counts once.
inline uint64_t sum_per_ring(std::span<const uint64_t> per_socket, std::span<const size_t> ring_of)
{
	uint64_t t = 0;
	for (size_t i = 0; i < per_socket.size() && i < ring_of.size(); i++)
		if (ring_of[i] == i)
			t += per_socket[i];
	return t;
}


// Totals of per-socket counters (@rx: received packets and bytes, fill ring
// full; else completed frames, TX ring full); a shared fill ring's
// fill-empty count counts once. @fill_ring_of as Engine::fill_ring_of.
Totals sum_stats(std::span<const XskStats> per_socket, std::span<const size_t> fill_ring_of, bool rx);
// The same over the engine's sockets, their kernel counters refreshed.
Totals sum(Engine &e, bool rx);

// The frames of one buffer pool: per socket, or once for a shared group
// (on the socket that owns the fill ring).
struct PoolAccounting {
	uint32_t queue = 0;
	Accounting a;
};
std::vector<PoolAccounting> pool_accounting(const Engine &e);
// Every pool's frames accounted for.
bool accounting_ok(const Engine &e);

// Why TX kicks failed, for the "never completed" line: the errno and what
// the drivers mean by it; "" without kick errors.
std::string kick_error_cause(const Netdev &dev, const Engine &e, const Totals &t);

// The one line send ends with when the device dropped frames while it ran
// (exit 1), empty when it dropped none.
inline std::string tx_dropped_warning(const std::string &ifname, uint64_t dropped, uint64_t completed)
{
	if (!dropped)
		return {};
	return "tx_dropped of " + ifname + " rose by " + std::to_string(dropped) + " while sending (" +
	       std::to_string(completed) + " frames completed): the device or its peer dropped them, not sent";
}

// The one line recv adds when the device lost frames before XDP while it
// ran, empty when it lost none. zero_copy: the driver's RX ring is filled
// from recv's fill ring, so a larger fill ring helps too.
inline std::string rx_lost_note(const std::string &ifname, const DevRxDrops &d, bool zero_copy)
{
	if (!d.lost_before_xdp())
		return {};
	return "note: " + ifname + " lost " + std::to_string(d.lost_before_xdp()) +
	       " frames before XDP while recv ran (rx_missed " + std::to_string(d.missed) + ", rx_fifo " +
	       std::to_string(d.fifo) + ", rx_over " + std::to_string(d.over) +
	       "): its RX ring had no free buffer; a longer ring (ethtool -G " + ifname + " rx N)" +
	       (zero_copy ? " or more fill-ring frames (--ring-size, --frames)" : "") + " or a slower sender helps";
}

// Monotonic seconds, the engine's default clock.
double monotonic_seconds();

} // namespace xoffload::xsk
