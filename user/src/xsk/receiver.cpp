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

// What recv's workers share: the frames taken off the RX rings
// (committed) and those a worker may take before it has (reserved: c.count
// is shared out batch by batch, so the threads together stop at exactly
// c.count), the stop the reporting thread decides, the time of the latest
// frame (--idle).
struct RecvShared {
	std::atomic<uint64_t> reserved{0}, committed{0};
	std::atomic<bool> stop{false};
	std::atomic<int64_t> last_rx_ns{0};
};

// Up to @want frames of what c.count leaves, reserved; 0 when the rest is
// reserved by other threads (or taken).
uint64_t reserve(RecvShared &sh, uint64_t limit, uint64_t want)
{
	uint64_t r = sh.reserved.load(std::memory_order_relaxed);
	for (;;) {
		const uint64_t take = r >= limit ? 0 : std::min(want, limit - r);
		if (!take || sh.reserved.compare_exchange_weak(r, r + take, std::memory_order_relaxed))
			return take;
	}
}

int64_t now_ns()
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// One worker: its sockets' RX rings drained, refilled and woken until the
// count is reached or the reporting thread says stop.
void receive_on(Engine &e, std::span<const size_t> idx, const RecvConfig &c, RecvSinks sinks, std::mutex &all_m,
		RecvShared &sh, TotalsBoard &board, size_t t, double &user_s, double &sys_s)
{
	const uint64_t limit = c.count;
	// room for the longest descriptor chain: rx_peek then returns whole frames
	std::vector<RxDesc> descs(std::max(c.batch, kMaxRxChain));
	std::vector<pollfd> pfds;
	for (size_t k : idx)
		pfds.push_back(pollfd{e.socks[k].fd(), POLLIN, 0});
	std::vector<std::span<const std::byte>> pieces(kMaxRxChain);
	timespec ts{};

	while (!sh.stop.load(std::memory_order_relaxed)) {
		board.poll(t, [&] { return sum_of(e, idx, true); });
		bool any = false;
		for (size_t k : idx) {
			auto &s = e.socks[k];
			// with a count: no more descriptors than frames reserved (one
			// frame each, or whole chains of at most kMaxRxChain with
			// multi-buffer, which may go a few frames over)
			uint64_t take = descs.size();
			if (limit != UINT64_MAX && !(take = reserve(sh, limit, descs.size())))
				break;
			const size_t span = e.sg ? std::max<size_t>(take, kMaxRxChain) : take;
			uint32_t n = s.rx_peek({descs.data(), std::min(span, descs.size())});
			uint64_t frames = 0;
			for (uint32_t i = 0; i < n; i++)
				frames += descs[i].more ? 0 : 1;
			sh.committed.fetch_add(frames, std::memory_order_relaxed);
			if (limit != UINT64_MAX)
				sh.reserved.fetch_add(frames - take, std::memory_order_relaxed);	// back what was not taken
			if (!n)
				continue;
			any = true;
			PcapWriter *w = sinks.per_socket.empty() ? sinks.all : &sinks.per_socket[k];
			if (w) {
				std::unique_lock<std::mutex> l(all_m, std::defer_lock);
				if (w == sinks.all)
					l.lock();
				clock_gettime(CLOCK_REALTIME, &ts);
				size_t npieces = 0;
				for (uint32_t i = 0; i < n; i++) {
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
				}
			}
			s.rx_release({descs.data(), n});
			s.refill();
		}
		if (any)
			sh.last_rx_ns.store(now_ns(), std::memory_order_relaxed);
		if (sh.committed.load(std::memory_order_relaxed) >= limit) {
			sh.stop.store(true);
			break;
		}
		if (!any) {
			// a shared group has one fill ring on one queue: one wakeup serves all
			for (size_t k : idx) {
				auto &s = e.socks[k];
				if (e.fill_ring_of[k] == k && s.fill_needs_wakeup())
					(void)::recvfrom(s.fd(), nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
			}
			(void)::poll(pfds.data(), pfds.size(), 10);
		}
	}
	board.finish(t, sum_of(e, idx, true));
	thread_cpu(user_s, sys_s);
}

} // namespace

Result<RecvResult> receive(Engine &e, LinkWatch &watch, const RecvConfig &c, RecvSinks sinks, const RecvHooks &hooks)
{
	RecvResult res;
	const ThreadPlan plan = plan_threads(e.fill_ring_of, c.cpus);
	TotalsBoard board(plan.size());
	RecvShared sh;
	std::mutex all_m;
	std::vector<std::pair<double, double>> cpu(plan.size());
	const double t0 = monotonic_seconds();
	double next_watch = 0;
	IntervalReports reports(board, c.interval, t0, hooks.interval);
	auto st = run_threads(
		plan, [&](size_t t) { receive_on(e, plan.socks[t], c, sinks, all_m, sh, board, t, cpu[t].first, cpu[t].second); },
		[&] {
			if (sh.stop.load())
				return;
			const double now = monotonic_seconds();
			const int64_t last_rx = sh.last_rx_ns.load(std::memory_order_relaxed);
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
			if (c.idle && last_rx > 0 && static_cast<double>(now_ns() - last_rx) / 1e9 >= *c.idle)
				end = true;
			if (end) {
				sh.stop.store(true);
				return;
			}
			reports.tick(now);
		});
	if (!st)
		return st.error();
	res.secs = monotonic_seconds() - t0;
	res.frames = sh.committed.load();
	e.threads.clear();
	for (size_t t = 0; t < plan.size(); t++) {
		e.threads.push_back(thread_totals(e, plan, t, true, cpu[t].first, cpu[t].second));
	}
	return res;
}

} // namespace xoffload::xsk
