// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The threads of send and recv: an engine's sockets spread over worker
// threads (one per queue, or one per CPU of --cpus), each thread the only
// one to touch its sockets, and the interval reports of a run whose
// counters live in those threads.
//
// In copy mode a socket's TX work (the kernel's copy into an skb and the
// driver's transmit) runs inside the sendto() of the thread that kicks it,
// and RX work in the softirq of the CPU the queue's interrupt lands on: one
// thread for all queues serialises what the queues could do side by side.
//
// Threads: plan_threads and parse_cpus are plain functions; TotalsBoard is
// shared by the workers (publish) and one reporting thread (collect).
// Errors: Result (usage errors for a bad CPU list).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "xoffload/core/result.hpp"
#include "xoffload/xsk/engine.hpp"

namespace xoffload::xsk {

// Which sockets each worker thread drives, and where it runs.
struct ThreadPlan {
	std::vector<std::vector<size_t>> socks;	// per thread: indices into Engine::socks
	std::vector<int> cpu;			// per thread: the CPU it is pinned to, -1 for none
	size_t size() const { return socks.size(); }
};

// Sockets sharing a fill ring (@fill_ring_of as Engine::fill_ring_of) stay
// on one thread: the ring has one producer. Without @cpus, one unpinned
// thread per such group (one per queue); with them, min(cpus, groups)
// threads, thread t pinned to cpus[t], the groups dealt out in turn.
ThreadPlan plan_threads(std::span<const size_t> fill_ring_of, std::span<const int> cpus);

// --cpus: CPUs and ranges ("1", "0,1", "0-3", "0-1,6") or "all" (every CPU
// this process may run on). Usage error for a malformed list or a CPU
// outside the process's affinity mask (the message names the allowed ones).
Result<std::vector<int>> parse_cpus(std::string_view s);
// The CPUs this process may run on (sched_getaffinity), sorted.
std::vector<int> allowed_cpus();

// The totals of the sockets @idx of @e (their kernel counters refreshed).
// Only the thread that drives those sockets may call it while they run.
Totals sum_of(Engine &e, std::span<const size_t> idx, bool rx);
// a += b, counter by counter (kick_errno: b's when it has one).
void add_totals(Totals &a, const Totals &b);
// What thread @t of @plan did, once the threads are joined: its CPU, the
// queues of its sockets, their totals (@rx as sum()) and the CPU seconds
// the thread measured.
ThreadTotals thread_totals(Engine &e, const ThreadPlan &plan, size_t t, bool rx, double user_s, double sys_s);
// The calling thread's user and system CPU seconds so far.
void thread_cpu(double &user_s, double &sys_s);

// A count (send's frames or super-packets, recv's frames) shared out among
// the worker threads batch by batch: a worker reserves what it may take,
// then commits what it took and the rest of its reservation goes back, so
// the threads together stop at exactly the count however the queues share
// the work (a stalled queue's thread leaves its part to the others).
class CountShare {
public:
	explicit CountShare(uint64_t limit) : limit_(limit) {}
	// Up to @want of what is left; 0 when the rest is reserved by others
	// or taken. Without a limit (UINT64_MAX), @want.
	uint64_t reserve(uint64_t want);
	// @took of a reservation of @reserved taken (more than reserved only
	// where a multi-buffer chain made it so).
	void commit(uint64_t reserved, uint64_t took);
	bool done() const { return committed_.load(std::memory_order_relaxed) >= limit_; }
	uint64_t committed() const { return committed_.load(std::memory_order_relaxed); }

private:
	uint64_t limit_;
	std::atomic<uint64_t> reserved_{0}, committed_{0};
};

// Interval reports across threads: the reporting thread asks for a round
// (collect()); each worker, at its next poll(), publishes the totals of its
// own sockets; collect() returns their sum once every worker answered or
// finished (at most @wait seconds: a worker stuck in a long system call is
// counted with its previous answer). Cheap when nothing is asked: poll() is
// one atomic load.
class TotalsBoard {
public:
	explicit TotalsBoard(size_t nthreads);
	// Worker @t: publishes f() when a round was asked for since its last answer.
	template <typename F>
	void poll(size_t t, F &&f)
	{
		const uint64_t want = round_.load(std::memory_order_acquire);
		if (slots_[t].seen.load(std::memory_order_relaxed) == want)
			return;
		publish(t, f(), want);
	}
	// Worker @t is done: its final totals, answered for every later round.
	void finish(size_t t, const Totals &final);
	// Reporting thread: a new round, summed.
	Totals collect(double wait);

private:
	struct Slot {
		std::atomic<uint64_t> seen{0};
		std::atomic<bool> done{false};
		std::mutex m;
		Totals t;
	};
	void publish(size_t t, const Totals &x, uint64_t round);
	std::unique_ptr<Slot[]> slots_;
	size_t n_;
	std::atomic<uint64_t> round_{0};
};

// The reporting thread's interval reports: at every tick() at least
// @interval seconds (<= 0: never) after the last report, the workers'
// totals collected from @board and handed to @report with the previous
// ones and the seconds between.
class IntervalReports {
public:
	using Report = std::function<void(const Totals &now, const Totals &prev, double dt)>;
	IntervalReports(TotalsBoard &board, double interval, double t0, Report report);
	void tick(double now);

private:
	TotalsBoard &board_;
	double interval_, last_, next_;
	Report report_;
	Totals prev_{};
};

// Runs body(t) on plan.size() threads, thread t pinned to plan.cpu[t]
// (where >= 0), and calls @tick on the calling thread every 5 ms until every
// body returned; then joins them. When a thread cannot be started or
// pinned, its body never runs and @fail is called at once (from that
// thread or this one: it must be thread-safe) so that the others can stop;
// runtime error after the join.
Status run_threads(const ThreadPlan &plan, const std::function<void(size_t)> &body,
		   const std::function<void()> &tick, const std::function<void()> &fail);

} // namespace xoffload::xsk
