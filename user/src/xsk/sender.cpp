// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// send's loops and pacer over an Engine (see xoffload/xsk/sender.hpp).
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <mutex>

#include "xoffload/xsk/sender.hpp"
#include "xoffload/xsk/workers.hpp"

namespace xoffload::xsk {

SendPacer::SendPacer(const SendConfig &c, std::function<double()> clock, std::function<bool()> stop)
	: c_(c), clock_(std::move(clock)), stop_(std::move(stop))
{
	t0_ = now();
}

double SendPacer::now() const
{
	return clock_ ? clock_() : monotonic_seconds();
}

SendPacer::Step SendPacer::step(uint64_t frames, unsigned every)
{
	if ((++loops_ % every) != 0 && !c_.rate)
		return Step::go;
	const double t = now();
	if (stop_ && stop_()) {
		interrupted_ = true;
		return Step::stop;
	}
	if (c_.duration && t - t0_ >= *c_.duration)
		return Step::stop;
	if (c_.rate && static_cast<double>(frames) + c_.phase >= *c_.rate * (t - t0_))
		return Step::wait;
	return Step::go;
}

uint64_t SendPacer::allowed() const
{
	const double a = *c_.rate * (now() - t0_) + 1 - c_.phase;
	return a > 0 ? static_cast<uint64_t>(a) : 0;
}

double SendPacer::elapsed() const
{
	return now() - t0_;
}

double SendPacer::until_next(uint64_t frames) const
{
	return c_.rate && *c_.rate > 0 ? (static_cast<double>(frames) + c_.phase) / *c_.rate - elapsed() : 0;
}

namespace {

// What the device dropped of our frames shows only in its own counter.
std::optional<uint64_t> tx_dropped_now(const Netdev &dev)
{
	if (auto st = netdev_stats(dev))
		return st->tx_dropped;
	return std::nullopt;
}

// Worker @t's share of a run: the rate split evenly among the @n, its
// pacer t/n of a frame interval behind the first (so the n together start
// one frame at a time at the whole rate); the count is shared out batch by
// batch (CountShare).
SendConfig share_of(const SendConfig &c, size_t t, size_t n)
{
	SendConfig s = c;
	s.count = UINT64_MAX;
	s.phase = static_cast<double>(t) / static_cast<double>(n);
	if (c.rate)
		s.rate = *c.rate / static_cast<double>(n);
	return s;
}

// Frames of several threads into one pcap file.
struct SharedPcap {
	PcapWriter *w = nullptr;
	std::mutex m;
};

// What one worker thread's loop did.
struct WorkerResult {
	uint64_t bytes = 0;	// what was queued
	uint64_t super_packets = 0, segments = 0;	// the segmentation loop's
	double secs = 0;
	bool interrupted = false;
	double user_s = 0, sys_s = 0;	// the worker thread's CPU time
	std::optional<Error> err;
};

// A worker's sockets, the count all workers share and what it answers the
// reporting thread with.
struct Worker {
	Engine &e;
	std::span<const size_t> idx;
	std::vector<XskSocket *> socks;
	TotalsBoard &board;
	CountShare &count;
	size_t t;
	// publishes the totals of its sockets when a report is due, with
	// bytes_of(totals) as their bytes
	template <typename BytesOf>
	void poll(BytesOf &&bytes_of)
	{
		board.poll(t, [&] {
			Totals x = sum_of(e, idx, false);
			x.bytes = bytes_of(x);
			return x;
		});
	}
};

// On a pacer wait: the completion rings drained, and a sleep when the next
// frame (after @frames) is more than 0.1 ms away (at most 1 ms, so stop
// requests and reports are seen), instead of spinning a CPU per thread.
SendPacer::Step on_tick(SendPacer::Step step, Worker &w, const SendPacer &pacer, uint64_t frames)
{
	if (step != SendPacer::Step::wait)
		return step;
	for (auto *s : w.socks)
		s->complete();
	if (const double gap = pacer.until_next(frames); gap > 1e-4) {
		const double nap = std::min(gap - 5e-5, 1e-3);
		const timespec ts{0, static_cast<long>(nap * 1e9)};
		nanosleep(&ts, nullptr);
	}
	return step;
}

// Drains the completion rings of @socks (as long as completions keep
// coming: a slow or emulated device under load returns them late, and 2 s
// after the last one).
void drain(std::span<XskSocket *const> socks)
{
	double last_progress = monotonic_seconds();
	uint64_t left = UINT64_MAX;
	for (;;) {
		uint64_t out = 0;
		for (auto *s : socks) {
			s->complete();
			out += s->tx_outstanding();
			if (s->tx_outstanding())
				s->kick();
		}
		if (!out)
			break;
		if (out < left) {
			left = out;
			last_progress = monotonic_seconds();
		} else if (monotonic_seconds() - last_progress > 2.0) {
			break;
		}
		usleep(50);
	}
}

// Runs loop(worker, pacer, its share of c) on the threads of c.threads (default:
// one per queue), reports intervals from this thread, drains every
// socket's completions in its own thread and sums the run up. The first
// worker error stops the others and is returned.
template <typename Loop>
Result<SendResult> run_workers(Engine &e, const Netdev &dev, const SendConfig &c, const SendHooks &hooks, Loop &&loop)
{
	const std::optional<uint64_t> tx_dropped0 = tx_dropped_now(dev);
	const ThreadPlan plan = plan_threads(e.fill_ring_of, c.cpus);
	const size_t n = plan.size();
	std::vector<WorkerResult> out(n);
	TotalsBoard board(n);
	CountShare count(c.count);
	std::atomic<bool> abort{false};
	const std::function<bool()> stop = [&] { return abort.load(std::memory_order_relaxed) || (hooks.stop && hooks.stop()); };
	auto clock = [&] { return hooks.clock ? hooks.clock() : monotonic_seconds(); };
	IntervalReports reports(board, c.interval, clock(), hooks.interval);
	auto st = run_threads(
		plan,
		[&](size_t t) {
			Worker w{e, plan.socks[t], {}, board, count, t};
			for (size_t i : plan.socks[t])
				w.socks.push_back(&e.socks[i]);
			const SendConfig share = share_of(c, t, n);
			SendPacer pacer(share, hooks.clock, stop);
			WorkerResult &r = out[t];
			r = loop(w, pacer, share);
			if (r.err)
				abort.store(true);
			drain(w.socks);
			r.secs = pacer.elapsed();
			r.interrupted = pacer.interrupted() && !abort.load();
			thread_cpu(r.user_s, r.sys_s);
			Totals fin = sum_of(e, plan.socks[t], false);
			fin.bytes = r.bytes;
			board.finish(t, fin);
		},
		[&] { reports.tick(clock()); }, [&] { abort.store(true); });
	if (!st)
		return st.error();
	SendResult r;
	r.totals = sum(e, false);
	r.totals.bytes = 0;
	e.threads.clear();
	for (size_t t = 0; t < n; t++) {
		if (out[t].err)
			return *out[t].err;
		r.secs = std::max(r.secs, out[t].secs);
		r.interrupted = r.interrupted || out[t].interrupted;
		r.super_packets += out[t].super_packets;
		r.segments += out[t].segments;
		r.totals.bytes += out[t].bytes;
		ThreadTotals tt = thread_totals(e, plan, t, false, out[t].user_s, out[t].sys_s);
		tt.totals.bytes = out[t].bytes;
		e.threads.push_back(std::move(tt));
	}
	if (tx_dropped0)
		if (auto now = tx_dropped_now(dev))
			r.totals.dev_tx_dropped = counter_delta(*tx_dropped0, *now);
	return r;
}

// The plain loop of one worker: the prefilled frame on its sockets in turn.
WorkerResult send_frames_on(Worker &w, SendPacer &pacer, const SendConfig &c, const TxFrame &built, SharedPcap *pcap)
{
	WorkerResult res;
	const auto &frame = built.bytes;
	const uint32_t len = static_cast<uint32_t>(frame.size());
	const uint32_t cap = w.socks.front()->tx_chunk_capacity();
	const uint32_t chunks = (len + cap - 1) / cap;	// > 1 only with multi-buffer
	const uint32_t burst = c.batch / chunks;	// frames per socket per round
	std::vector<uint64_t> addrs(burst * chunks);
	std::vector<TxDesc> descs(burst * chunks);
	uint64_t queued = 0;	// frames this worker put on a TX ring so far
	timespec ts{};

	while (!w.count.done()) {
		w.poll([len](const Totals &x) { return x.packets * len; });
		auto st = on_tick(pacer.step(queued, 64), w, pacer, queued);
		if (st == SendPacer::Step::stop)
			break;
		if (st == SendPacer::Step::wait)
			continue;
		for (auto *s : w.socks) {
			s->complete();
			uint64_t want = burst;
			if (c.rate) {
				uint64_t allowed = pacer.allowed();
				want = allowed > queued ? std::min<uint64_t>(want, allowed - queued) : 0;
			}
			if (!want || !(want = w.count.reserve(want)))
				break;
			uint32_t n = s->tx_alloc({addrs.data(), static_cast<size_t>(want * chunks)});
			n -= n % chunks;
			for (uint32_t i = 0; i < n; i++) {
				uint32_t k = i % chunks;
				uint32_t l = std::min(cap, len - k * cap);
				if (chunks > 1) // prefilled frames only hold whole one-chunk frames
					std::memcpy(s->data(addrs[i]), frame.data() + k * cap, l);
				descs[i] = TxDesc{addrs[i], l, k + 1 < chunks, built.partial && k == 0, built.csum_start,
						  built.csum_offset};
			}
			uint32_t m = s->tx_submit({descs.data(), n});
			if (m < n)
				s->tx_free({addrs.data() + m, n - m});
			if (n % chunks)
				s->tx_free({addrs.data() + n, n % chunks});
			queued += m / chunks;
			w.count.commit(want, m / chunks);
			s->kick();
			if (pcap && m) {
				std::lock_guard<std::mutex> l(pcap->m);
				clock_gettime(CLOCK_REALTIME, &ts);
				for (uint32_t i = 0; i < m / chunks; i++)
					pcap->w->write(std::span<const std::byte>(frame), ts);
			}
		}
	}
	// bytes: what was queued (every queued frame must come back completed)
	uint64_t submitted = 0;
	for (auto *s : w.socks)
		submitted += s->stats_nosync().tx_packets;
	res.bytes = submitted * len;
	return res;
}

// The segmentation loop of one worker: a super-packet segmented into fresh
// frames of one of its sockets per round, all segments or none.
WorkerResult send_segmented_on(Worker &w, SendPacer &pacer, std::span<const std::byte> super, const GsoRequest &req,
			       int nseg, const std::string &ifname, SharedPcap *pcap)
{
	WorkerResult res;
	const std::span<const std::byte> in(super);
	const std::span<const std::span<const std::byte>> input(&in, 1);
	GsoError why{};
	const uint32_t cap = w.socks.front()->tx_chunk_capacity();
	std::vector<uint64_t> addrs(static_cast<size_t>(nseg));
	std::vector<GsoFrame> frames(static_cast<size_t>(nseg));
	std::vector<TxDesc> descs(static_cast<size_t>(nseg));
	uint64_t sent = 0, bytes = 0, segs = 0;
	timespec ts{};

	while (!w.count.done()) {
		w.poll([&](const Totals &) { return bytes; });
		auto st = on_tick(pacer.step(segs, 16), w, pacer, segs);
		if (st == SendPacer::Step::stop)
			break;
		if (st == SendPacer::Step::wait)
			continue;
		for (auto *s : w.socks) {
			s->complete();
			if (!w.count.reserve(1))
				break;
			uint32_t n = s->tx_alloc(addrs);
			if (n < static_cast<uint32_t>(nseg)) {
				s->tx_free({addrs.data(), n}); // not enough free frames yet: all or none
				w.count.commit(1, 0);
				s->kick();
				continue;
			}
			for (int i = 0; i < nseg; i++)
				frames[i] = GsoFrame{s->data(addrs[i]), cap};
			int got = gso_segment(input, req, frames, &why);
			if (got != nseg) {
				s->tx_free(addrs);
				w.count.commit(1, 0);
				res.err = runtime_error(std::string("segmentation failed: ") + to_string(why));
				break;
			}
			for (int i = 0; i < nseg; i++)
				descs[i] = TxDesc{addrs[i], frames[i].len, false, frames[i].csum_partial, frames[i].csum_start,
						  frames[i].csum_offset};
			// the TX ring takes the whole super-packet or a prefix: retry the rest
			uint32_t done = 0;
			for (int tries = 0; done < static_cast<uint32_t>(nseg); tries++) {
				done += s->tx_submit({descs.data() + done, static_cast<size_t>(nseg) - done});
				if (done < static_cast<uint32_t>(nseg)) {
					s->kick();
					s->complete();
					if (tries > 100000) {
						s->tx_free({addrs.data() + done, static_cast<size_t>(nseg) - done});
						w.count.commit(1, 0);
						res.err = runtime_error("TX ring never drained on " + ifname);
						break;
					}
				}
			}
			if (res.err)
				break;
			w.count.commit(1, 1);
			if (pcap) {
				std::lock_guard<std::mutex> l(pcap->m);
				clock_gettime(CLOCK_REALTIME, &ts);
				for (int i = 0; i < nseg; i++)
					pcap->w->write(std::span<const std::byte>(frames[i].data, frames[i].len), ts);
			}
			for (int i = 0; i < nseg; i++)
				bytes += frames[i].len;
			segs += static_cast<uint64_t>(nseg);
			sent++;
			s->kick();
		}
		if (res.err)
			break;
	}
	res.super_packets = sent;
	res.bytes = bytes;
	res.segments = segs;
	return res;
}

} // namespace

void prefill_frames(Engine &e, std::span<const std::byte> frame)
{
	const uint32_t len = static_cast<uint32_t>(frame.size());
	const uint32_t cap = e.socks.front().tx_chunk_capacity();
	const uint32_t chunks = (len + cap - 1) / cap;
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
}

Result<SendResult> send_frames(Engine &e, const Netdev &dev, const SendConfig &c, const TxFrame &built,
			       PcapWriter *pcap, const SendHooks &hooks)
{
	SharedPcap shared{pcap, {}};
	return run_workers(e, dev, c, hooks, [&](Worker &w, SendPacer &pacer, const SendConfig &share) {
		return send_frames_on(w, pacer, share, built, pcap ? &shared : nullptr);
	});
}

Result<SendResult> send_segmented(Engine &e, const Netdev &dev, const SendConfig &c, std::span<const std::byte> super,
				  const GsoRequest &req, PcapWriter *pcap, const SendHooks &hooks)
{
	const std::span<const std::byte> in(super);
	const std::span<const std::span<const std::byte>> input(&in, 1);
	GsoError why{};
	const int nseg = gso_count(input, req, &why);
	if (nseg < 0)
		return runtime_error(std::string("segmentation refused: ") + to_string(why), EINVAL);
	SharedPcap shared{pcap, {}};
	return run_workers(e, dev, c, hooks, [&](Worker &w, SendPacer &pacer, const SendConfig &) {
		return send_segmented_on(w, pacer, super, req, nseg, dev.name, pcap ? &shared : nullptr);
	});
}

Status zc_tx_program(const Netdev &dev, const EngineConfig &c, const EngineUse &use, Engine &e,
		     std::optional<XskProgram> &prog, const SendDriver &sd, const std::vector<uint32_t> &qs,
		     const std::function<bool()> &stop, const std::function<void(const std::string &)> &note)
{
	if (!e.socks.front().zero_copy())
		return ok();
	const features::NicFacts *f = sd.name ? &sd.facts : nullptr;
	if (!f || !f->zc_tx_needs_xdp.value)
		return ok();
	uint32_t id = 0;
	if (!bpf_xdp_query_id(static_cast<int>(dev.ifindex), XDP_FLAGS_DRV_MODE, &id) && id)
		return ok();	// a native program already keeps the XDP rings up
	const std::string drv = f->modelled ? dev_kind_name(f->driver) : "this driver";
	const std::string need = "zero-copy TX on " + drv + " needs an XDP program (" + f->zc_tx_needs_xdp.source + ")";
	if (auto r = reap_stale_xsk(dev); !r)
		return r.error();
	const bool was_up = netdev_running(dev.name).value_or(false);
	auto p = XskProgram::attach(dev, XdpMode::native, {});
	if (p) {
		prog.emplace(std::move(*p));
		if (note)
			note("note: " + need + ": xdp_xsk attached to " + dev.name + " for this run (passes every frame)");
		wait_for_carrier(dev, was_up, stop);
		return ok();
	}
	if (c.xsk_mode != "auto")
		return runtime_error(need + " and attaching xdp_xsk failed: " + p.error().msg + " (try --xsk-mode copy)",
				     p.error().err);
	e.socks.clear();
	e.umem.reset();
	EngineConfig copy = c;
	copy.xsk_mode = "copy";
	auto again = make_engine(dev, copy, use, qs);
	if (!again)
		return again.error();
	e = std::move(*again);
	if (note)
		note("note: copy mode: " + need + " and attaching xdp_xsk failed: " + p.error().msg);
	return ok();
}

} // namespace xoffload::xsk
