// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// recv's receive loop and Geneve XSKMAP slots (see xoffload/xsk/receiver.hpp).
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>

#include "xoffload/xsk/receiver.hpp"
#include "xoffload/xsk/workers.hpp"

#include "xoffload/bpf/loader.hpp"
#include "xoffload/core/netdev.hpp"

namespace xoffload::xsk {

Status GeneveSlots::add(uint32_t queue, uint32_t slot, int fd)
{
	if (auto s = maps_.set_xsk(queue, slot, fd, false); !s)
		return s;
	slots_.push_back({queue, slot});
	return ok();
}

Status GeneveSlots::clear()
{
	Status st = ok();
	for (auto [queue, slot] : slots_)
		if (auto s = maps_.set_xsk(queue, slot, -1); !s && st)
			st = s;
	slots_.clear();
	return st;
}

Result<GeneveSocketCount> geneve_socket_count(std::span<const GeneveRule> rules, const std::string &ifname,
					      std::optional<uint32_t> vni, std::optional<uint32_t> given)
{
	GeneveSocketCount n;
	if (vni) {
		const GeneveRule *r = nullptr;
		for (const auto &x : rules)
			if (x.vni == *vni)
				r = &x;
		if (!r)
			return runtime_error("no Geneve rule for VNI " + std::to_string(*vni) + " on " + ifname, ENOENT);
		if (r->action != XO_GNV_ACT_XSK)
			return runtime_error("the Geneve rule of VNI " + std::to_string(*vni) + " on " + ifname + " is " +
						     geneve_action_name(r->action) + ", not xsk",
					     EINVAL);
		n.rule_queues = r->queues;
	} else {
		for (const auto &x : rules)
			if (x.action == XO_GNV_ACT_XSK)
				n.rule_queues = std::max(n.rule_queues, x.queues);
	}
	if (given) {
		n.sockets = *given;
		return n;
	}
	if (!n.rule_queues)
		return runtime_error("no Geneve rule on " + ifname + " steers to AF_XDP sockets (geneve rule add " + ifname +
					     " --vni N --action xsk --queues N), or give --sockets",
				     ENOENT);
	n.sockets = n.rule_queues;
	return n;
}

Result<RecvProgram> attach_recv_program(const Netdev &dev, XdpMode mode, RxFilter filter, Engine &e,
					const std::function<bool()> &stop)
{
	if (auto r = reap_stale_xsk(dev); !r)
		return r.error();
	if (auto f = rx_vlan_facts(dev))
		filter.vlan_facts = *f;
	const bool was_up = netdev_running(dev.name).value_or(false);
	auto p = XskProgram::attach(dev, mode, filter);
	if (!p) {
		// single-program XDP: xdp_geneve holds the hook, but its XSKMAP is open
		if (auto st = status(dev))
			for (const auto &a : st->ours)
				if (a.feature == Feature::geneve && a.hook == Hook::xdp)
					return runtime_error(p.error().msg + "; xdp_geneve is attached: "
								 "recv --geneve receives from its xsk rules",
							     p.error().err);
		return p.error();
	}
	RecvProgram r{std::move(*p), filter.vlan_facts};
	for (auto &s : e.socks)
		if (auto st = r.prog.add_socket(s.queue(), s.fd()); !st)
			return st.error();
	wait_for_carrier(dev, was_up, stop);
	return r;
}

namespace {

// What recv's workers share: c.count (CountShare), the stop the reporting
// thread decides, and whether frames came since the reporting thread last
// looked (--idle: it keeps the time; a clock read per batch in the workers
// cost more than the rest of a small batch).
struct RecvShared {
	explicit RecvShared(uint64_t count) : count(count), limited(count != UINT64_MAX) {}
	CountShare count;
	const bool limited;	// a --count to share out
	std::atomic<bool> stop{false};
	std::atomic<bool> got_rx{false};
	// a load first: the line stays shared until the reporting thread clears it
	void saw_rx() { if (!got_rx.load(std::memory_order_relaxed)) got_rx.store(true, std::memory_order_relaxed); }
};

// One worker: its sockets' RX rings drained, refilled and woken until the
// count is reached or the reporting thread says stop.
// recv --gro: a worker's frames through its engine, the packets it emits to
// the pcap writer (if any).
struct GroRun {
	GroEngine *eng = nullptr;
	std::vector<GroFrame> frames;
	std::vector<std::span<const std::byte>> pieces;	// the buffers after the first of each frame
	PcapWriter *w = nullptr;
	timespec ts{};
	std::vector<std::span<const std::byte>> gather;	// a packet's data and frags, for the writer
	void operator()(const GroPacket &p) noexcept
	{
		if (!w)
			return;
		if (p.frags.empty()) {
			w->write(p.data, ts);
			return;
		}
		gather[0] = p.data;
		std::copy(p.frags.begin(), p.frags.end(), gather.begin() + 1);
		w->write(std::span<const std::span<const std::byte>>(gather.data(), p.frags.size() + 1), ts);
	}
};

uint64_t monotonic_ns()
{
	timespec t{};
	clock_gettime(CLOCK_MONOTONIC, &t);
	return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(t.tv_nsec);
}

// @x with what the worker's GRO engine (if any) did so far: read on the
// worker's own thread, the engine's.
Totals with_gro(Totals x, const GroEngine *gro)
{
	if (gro) {
		const GroStats &s = gro->stats();
		x.gro = true;
		x.gro_frames_in = s.frames_in;
		x.gro_packets_out = s.packets_out;
		x.gro_super_packets = s.super_packets;
		x.gro_bad_csum = s.bad_csum_total();
		x.gro_frag_dropped = s.frag_drop_total();
	}
	return x;
}

void receive_on(Engine &e, std::span<const size_t> idx, const RecvConfig &c, RecvSinks sinks, std::mutex &all_m,
		RecvShared &sh, TotalsBoard &board, size_t t, double &user_s, double &sys_s, GroEngine *gro)
{
	GroRun gr;
	gr.eng = gro;
	if (gro) {
		gr.frames.reserve(std::max(c.batch, kMaxRxChain));
		gr.pieces.resize(std::max(c.batch, kMaxRxChain));
		gr.gather.resize(size_t{kGroMaxSpans} + 1);
	}
	const GroSink gro_out = gro_sink(gr);
	// room for the longest descriptor chain: rx_peek then returns whole frames
	std::vector<RxDesc> descs(std::max(c.batch, kMaxRxChain));
	std::vector<pollfd> pfds;
	for (size_t k : idx)
		pfds.push_back(pollfd{e.socks[k].fd(), POLLIN, 0});
	std::vector<std::span<const std::byte>> pieces(kMaxRxChain);
	timespec ts{};
	const bool busy = !idx.empty() && e.socks[idx[0]].busy_poll();
	uint64_t unlimited = 0;	// frames taken without a --count, committed once at the end

	while (!sh.stop.load(std::memory_order_relaxed)) {
		board.poll(t, [&] { return with_gro(sum_of(e, idx, true), gro); });
		bool any = false;
		for (size_t k : idx) {
			auto &s = e.socks[k];
			// with a count: no more descriptors than frames reserved (one
			// frame each); with multi-buffer, room for a whole chain, and
			// the frames past the reservation are released uncounted
			const uint64_t take = sh.limited ? sh.count.reserve(descs.size()) : descs.size();
			if (!take)
				break;
			const size_t span = e.sg ? std::max<size_t>(take, kMaxRxChain) : take;
			uint32_t frames = 0;
			uint32_t n = s.rx_peek({descs.data(), std::min(span, descs.size())}, frames);
			const uint64_t counted = std::min<uint64_t>(frames, take);
			if (sh.limited)
				sh.count.commit(take, counted);
			else
				unlimited += counted;
			if (!n)
				continue;
			any = true;
			PcapWriter *w = sinks.per_socket.empty() ? sinks.all : &sinks.per_socket[k];
			if (gro) {
				// whole frames (a chain's buffers after the first in pieces), the
				// counted ones only; the batch's held packets flushed at its end
				// as a NAPI poll's
				std::unique_lock<std::mutex> l(all_m, std::defer_lock);
				if (w && w == sinks.all)
					l.lock();
				gr.w = w;
				clock_gettime(CLOCK_REALTIME, &gr.ts);
				gr.frames.clear();
				size_t np = 0;
				uint64_t whole = 0;
				for (uint32_t i = 0; i < n && whole < counted; i++) {
					const auto &d = descs[i];
					std::span<const std::byte> b{s.data(d.addr), d.len};
					const bool first = i == 0 || !descs[i - 1].more;
					if (first) {
						gr.frames.push_back(GroFrame{b, {}});
					} else if (np < gr.pieces.size()) {
						GroFrame &f = gr.frames.back();
						if (f.more.empty())
							f.more = {gr.pieces.data() + np, 0};
						gr.pieces[np++] = b;
						f.more = {f.more.data(), f.more.size() + 1};
					}
					if (!d.more)
						whole++;
				}
				const uint64_t now = monotonic_ns();
				(void)gro->receive(gr.frames, now, {}, gro_out);
				// before rx_release: the zero-copy engine's packets point into
				// these frames until flush() returns
				gro->flush(gro_out);
				gro->flush_expired(now, gro_out);
				s.rx_release({descs.data(), n});
				s.refill();
				continue;
			}
			if (w) {
				std::unique_lock<std::mutex> l(all_m, std::defer_lock);
				if (w == sinks.all)
					l.lock();
				clock_gettime(CLOCK_REALTIME, &ts);
				size_t npieces = 0;
				uint64_t written = 0;
				for (uint32_t i = 0; i < n && written < counted; i++) {
					const auto &d = descs[i];
					if (npieces < pieces.size())
						pieces[npieces++] = {s.data(d.addr), d.len};
					if (d.more)
						continue;
					if (npieces == 1)
						w->write(pieces[0], ts);
					else
						w->write(std::span<const std::span<const std::byte>>(pieces.data(), npieces), ts);
					npieces = 0;
					written++;
				}
			}
			s.rx_recycle({descs.data(), n});
		}
		if (any)
			sh.saw_rx();
		if (sh.limited && sh.count.done()) {
			sh.stop.store(true);
			break;
		}
		if (!any) {
			// a shared group has one fill ring on one queue: one wakeup
			// serves all. Busy polling: the recvfrom() runs the queue's
			// NAPI here, and there is no sleep (the kernel's interrupts
			// are deferred to this loop, af_xdp.rst)
			for (size_t k : idx) {
				auto &s = e.socks[k];
				if (e.fill_ring_of[k] == k && (busy || s.fill_needs_wakeup()))
					s.rx_wakeup();
			}
			if (!busy)
				(void)::poll(pfds.data(), pfds.size(), 10);
		}
	}
	if (gro) {
		gr.w = nullptr;	// the writers may be closed: what is left is counted, not written
		gro->flush(gro_out);
		gro->drop_fragments();
	}
	sh.count.commit(unlimited, unlimited);
	board.finish(t, with_gro(sum_of(e, idx, true), gro));
	thread_cpu(user_s, sys_s);
}

} // namespace

Result<RecvResult> receive(Engine &e, LinkWatch &watch, const RecvConfig &c, RecvSinks sinks, const RecvHooks &hooks)
{
	RecvResult res;
	const ThreadPlan plan = plan_threads(e.fill_ring_of, c.cpus);
	TotalsBoard board(plan.size());
	RecvShared sh(c.count);
	std::mutex all_m;
	std::vector<std::pair<double, double>> cpu(plan.size());
	std::vector<std::unique_ptr<GroEngine>> gro(plan.size());
	if (c.gro) {
		// zero-copy: a worker flushes its engine at the end of every RX batch,
		// before the batch's frames go back to the fill ring (receive_on), so
		// the super-packets may point into the UMEM instead of copying it
		GroConfig gc = *c.gro;
		gc.zero_copy = true;
		for (auto &g : gro)
			if (int r = GroEngine::create(gc, &g); r < 0)
				return errno_error("GRO engine", r);
	}
	const double t0 = monotonic_seconds();
	double next_watch = 0;
	double last_rx = 0;	// when the workers were last seen with frames; 0: none yet
	IntervalReports reports(board, c.interval, t0, hooks.interval);
	auto st = run_threads(
		plan,
		[&](size_t t) {
			receive_on(e, plan.socks[t], c, sinks, all_m, sh, board, t, cpu[t].first, cpu[t].second, gro[t].get());
		},
		[&] {
			if (sh.stop.load())
				return;
			const double now = monotonic_seconds();
			if (sh.got_rx.load(std::memory_order_relaxed) && sh.got_rx.exchange(false, std::memory_order_relaxed))
				last_rx = now;
			bool end = false;
			if (hooks.stop && hooks.stop()) {
				res.interrupted = true;
				end = true;
			} else if (now >= next_watch) {
				next_watch = now + 0.1;
				end = (res.dev_gone = watch.gone()).has_value();
			}
			if (c.duration && now - t0 >= *c.duration)
				end = true;
			if (c.idle && last_rx > 0 && now - last_rx >= *c.idle)
				end = true;
			if (end) {
				sh.stop.store(true);
				return;
			}
			reports.tick(now);
		},
		[&] { sh.stop.store(true); });
	if (!st)
		return st.error();
	res.secs = monotonic_seconds() - t0;
	res.frames = sh.count.committed();
	for (const auto &g : gro)
		if (g)
			res.gro += g->stats();
	e.threads.clear();
	for (size_t t = 0; t < plan.size(); t++) {
		e.threads.push_back(thread_totals(e, plan, t, true, cpu[t].first, cpu[t].second));
	}
	return res;
}

} // namespace xoffload::xsk
