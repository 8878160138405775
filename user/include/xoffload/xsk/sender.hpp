// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// send's loops over an Engine: the plain loop (one prebuilt frame, moved as
// descriptors), the segmentation-offload loop (a super-packet segmented
// straight into UMEM frames every round), and the pacer both share (rate,
// duration, stop request, interval reports).
//
// Threads: the loops run on worker threads, one per queue or per CPU of
// SendConfig::cpus (workers.hpp), each owning its sockets and its share of
// the rate (the count is shared out batch by batch: together they send
// exactly c.count, whichever queues do the work); the calling thread calls the hooks (interval
// reports of totals the workers publish; stop is called from the workers
// too, so it must be thread-safe). Nothing here prints: interval reports go to SendHooks::interval, the run
// ends with a SendResult the caller reports. Errors: Result, runtime errors
// only (the caller checks the frame and the request first).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "xoffload/gso/gso.hpp"
#include "xoffload/xsk/pcap.hpp"
#include "xoffload/xsk/engine.hpp"
#include "xoffload/xsk/plan.hpp"
#include "xoffload/xsk/prog.hpp"

namespace xoffload::xsk {

// When a send stops and how fast it goes.
struct SendConfig {
	uint64_t count = UINT64_MAX;	// frames (plain) or super-packets (segmented)
	std::optional<double> rate;	// frames (segments) per second; none: as fast as the rings go
	std::optional<double> duration;	// seconds
	double interval = 1.0;		// seconds between interval reports; <= 0: none
	uint32_t batch = 64;		// descriptors per socket per round (plain loop)
	std::vector<int> cpus;		// one worker thread per CPU, pinned; empty: one per queue, unpinned
	// With a rate: how far into its first frame interval a pacer starts
	// (0..1): the workers' pacers are staggered so that together they
	// start one frame at a time instead of one frame each at once.
	double phase = 0;
};

// What the loops ask of their caller; every member may be empty.
struct SendHooks {
	std::function<bool()> stop;	// true: end the run now (interrupted)
	// totals now and at the previous report, seconds between them
	std::function<void(const Totals &now, const Totals &prev, double dt)> interval;
	std::function<double()> clock;	// monotonic seconds; monotonic_seconds() when empty (thread-safe)
};

// Rate, duration and stop request of a send loop, on an injected clock
// (interval reports are the reporting thread's: IntervalReports in
// workers.hpp). Not thread-safe; no allocation after construction.
class SendPacer {
public:
	SendPacer(const SendConfig &c, std::function<double()> clock, std::function<bool()> stop);

	enum class Step { go, wait, stop };
	// Called every round with the frames the rate applies to; looks at the
	// clock every @every rounds (every round when pacing).
	Step step(uint64_t frames, unsigned every);
	// Frames the rate allows now (with one in hand); needs a rate.
	uint64_t allowed() const;
	double elapsed() const;		// seconds since construction
	// With a rate: seconds until the frame after @frames is due (<= 0: now).
	double until_next(uint64_t frames) const;
	bool interrupted() const { return interrupted_; }

private:
	double now() const;
	SendConfig c_;
	std::function<double()> clock_;
	std::function<bool()> stop_;
	double t0_;
	bool interrupted_ = false;
	uint64_t loops_ = 0;
};

// How a send ended: totals after the completion rings drained (bytes: what
// was sent), the run's seconds, and for segmented sends the super-packets
// and segments queued.
struct SendResult {
	Totals totals;
	double secs = 0;
	bool interrupted = false;
	uint64_t super_packets = 0, segments = 0;
};

// Writes @frame into every free UMEM frame of every socket once (chunk by
// chunk where it spans several), so the plain loop only moves descriptors.
void prefill_frames(Engine &e, std::span<const std::byte> frame);

// The plain loop: @frame (prefilled) on every socket of a worker in turn
// until c.count frames are queued (by all of them), the duration is up or
// hooks.stop says so; then every queued frame's completion is awaited (as
// long as completions keep coming, and 2 s after the last). @pcap: every
// frame queued, or null. e.threads gets what each worker did. Runtime
// error only when a worker thread could not be started or pinned.
Result<SendResult> send_frames(Engine &e, const Netdev &dev, const SendConfig &c, const TxFrame &frame,
			       PcapWriter *pcap, const SendHooks &hooks);

// The segmentation-offload loop: every round segments @super into freshly
// allocated frames of one socket (tags and checksums folded into the copy,
// or the L4 checksum left to TX metadata as req.csum says), all segments or
// none, and queues them; c.count counts super-packets. The caller checked
// that the segments fit a chunk and the TX ring (check_segments()).
// Runtime error when gso_count() refuses @req, segmentation fails or the
// TX ring never drains.
Result<SendResult> send_segmented(Engine &e, const Netdev &dev, const SendConfig &c, std::span<const std::byte> super,
				  const GsoRequest &req, PcapWriter *pcap, const SendHooks &hooks);

// Zero-copy TX of most drivers runs on their XDP TX rings, which exist only
// while an XDP program is attached: without one every kick fails (i40e,
// igb, mlx5; the model's zc_tx_needs_xdp) and no frame completes. Such a
// run gets xdp_xsk (no sockets in its map: it passes every frame) in @prog
// for its lifetime; where that attach fails, xsk_mode auto binds @e again
// in copy mode. @note gets the one line that says which, as it happens
// (before the carrier wait); runtime error when the attach failed under an
// explicit zero-copy mode.
Status zc_tx_program(const Netdev &dev, const EngineConfig &c, const EngineUse &use, Engine &e,
		     std::optional<XskProgram> &prog, const SendDriver &sd, const std::vector<uint32_t> &qs,
		     const std::function<bool()> &stop, const std::function<void(const std::string &)> &note);

} // namespace xoffload::xsk
