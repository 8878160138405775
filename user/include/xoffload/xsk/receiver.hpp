// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// recv's side of the engine: the receive loop over an Engine's sockets
// (pcap per run or per socket, interval reports, stop by count, duration,
// idle time, the device going away or a stop request), and recv --geneve's
// ownership of slots in xdp_geneve's XSKMAP.
//
// Threads: receive() runs one worker thread per queue (or per CPU of
// RecvConfig::cpus, workers.hpp), each owning its sockets; the calling
// thread watches the device, the clock and the stop hook, and makes the
// interval reports. Nothing here prints. Errors: Result (the loop itself cannot fail: it returns why it
// stopped).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "xoffload/geneve/geneve.hpp"
#include "xoffload/gro/gro.hpp"
#include "xoffload/core/linkwatch.hpp"
#include "xoffload/xsk/pcap.hpp"
#include "xoffload/xsk/engine.hpp"
#include "xoffload/xsk/prog.hpp"

namespace xoffload::xsk {

// Bytes of a received frame one UMEM chunk holds: the kernel keeps
// XDP_PACKET_HEADROOM in front of the data (copy and zero-copy mode alike).
inline constexpr uint32_t kXdpPacketHeadroom = 256;

// Whether recv binds with XDP_USE_SG under multi_buffer "auto": when a
// frame of the MTU with two tags outgrows one chunk of @frame_size.
constexpr bool rx_needs_sg(uint32_t mtu, uint32_t frame_size)
{
	return mtu + 14 + 8 > frame_size - kXdpPacketHeadroom;
}

// recv --geneve: the sockets sit in slots 0..N-1 of each queue's row of the
// XSKMAP xdp_geneve pinned for the interface, for as long as this lives;
// xdp_geneve stays. Move-only; clears its slots in the destructor.
class GeneveSlots {
public:
	explicit GeneveSlots(GeneveMaps maps) : maps_(std::move(maps)) {}
	GeneveSlots(GeneveSlots &&) = default;
	GeneveSlots &operator=(GeneveSlots &&) = delete;
	GeneveSlots(const GeneveSlots &) = delete;
	~GeneveSlots() { (void)clear(); }
	GeneveMaps &maps() { return maps_; }
	// Puts socket @fd in (queue, slot); never takes a slot from a live
	// socket (the kernel empties those of closed ones, so a taken slot is
	// another receiver's): an error then.
	Status add(uint32_t queue, uint32_t slot, int fd);
	// Empties every slot add() filled; the first error, after trying all.
	Status clear();

private:
	GeneveMaps maps_;
	std::vector<std::pair<uint32_t, uint32_t>> slots_;	// (queue, slot)
};

// How many sockets recv --geneve puts on each queue: @given (--sockets), else
// the xsk rule of @vni, else the largest xsk rule of @rules. rule_queues:
// the slots the rules steer to (recv warns when given leaves some empty).
// Runtime error: no rule for @vni, its action is not xsk, or nothing given
// and no xsk rule (@ifname names the device in the message).
struct GeneveSocketCount {
	uint32_t sockets = 0;
	uint32_t rule_queues = 0;
};
Result<GeneveSocketCount> geneve_socket_count(std::span<const GeneveRule> rules, const std::string &ifname,
					      std::optional<uint32_t> vni, std::optional<uint32_t> given);

// recv without --geneve: xdp_xsk attached for the run, every socket of @e
// in its XSKMAP. A stale receiver's program is reaped first (a recv killed
// before it could detach); the device's RX VLAN offloads are read after that,
// once its settings are back, into filter.vlan_facts (where the tags are) and
// into the result (for the caller's note on a hardware VLAN filter). Returns
// once the carrier is back (zero-copy rebuilds the driver's rings) or @stop.
// Refused where xdp_geneve holds the hook as a single program: the error
// says recv --geneve receives from its xsk rules.
struct RecvProgram {
	XskProgram prog;
	std::optional<RxVlanFacts> vlan_facts;
};
Result<RecvProgram> attach_recv_program(const Netdev &dev, XdpMode mode, RxFilter filter, Engine &e,
					const std::function<bool()> &stop);

// When recv stops and how often it reports.
struct RecvConfig {
	uint64_t count = UINT64_MAX;	// frames
	std::optional<double> duration;	// seconds from the start
	std::optional<double> idle;	// seconds after the last frame
	double interval = 1.0;		// <= 0: no interval reports
	uint32_t batch = 64;		// descriptors per ring operation
	std::vector<int> cpus;		// one worker thread per CPU, pinned; empty: one per queue, unpinned
	// recv --gro / --verify-csum: every worker runs its own GroEngine over
	// its batches (flushed at the end of each batch, fragments expired on
	// the batch's clock) and the sinks get the packets it emits, not the
	// wire frames
	std::optional<GroConfig> gro;
};

// Where frames are written: every frame to @all (one writer for all the
// worker threads, taken in turn), or socket k's to per_socket[k] (when not
// empty); neither: none.
struct RecvSinks {
	PcapWriter *all = nullptr;
	std::span<PcapWriter> per_socket;
};

struct RecvHooks {
	std::function<bool()> stop;	// true: end the run now (interrupted)
	std::function<void(const Totals &now, const Totals &prev, double dt)> interval;
};

struct RecvResult {
	double secs = 0;
	bool interrupted = false;
	std::optional<std::string> dev_gone;	// why the device went away, when it did
	uint64_t frames = 0;			// whole frames counted: c.count at most
	GroStats gro;				// RecvConfig::gro: every worker's engine, summed
};

// Receives on every socket of @e until c.count frames, the duration, the
// idle time, the device going away (@watch, looked at every 0.1 s) or
// hooks.stop; refills the fill rings and wakes the kernel where it asks.
// e.threads gets what each worker received. Runtime error only when a
// worker thread could not be started or pinned, or c.gro's engines not
// created (its config out of range, memory).
Result<RecvResult> receive(Engine &e, LinkWatch &watch, const RecvConfig &c, RecvSinks sinks, const RecvHooks &hooks);

} // namespace xoffload::xsk
