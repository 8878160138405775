// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Worker threads of send and recv (see xoffload/xsk/workers.hpp).
#include <pthread.h>
#include <sys/resource.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <thread>

#include "xoffload/features/channels.hpp"
#include "xoffload/xsk/workers.hpp"

namespace xoffload::xsk {

ThreadPlan plan_threads(std::span<const size_t> fill_ring_of, std::span<const int> cpus)
{
	// groups: sockets of one fill ring, in the order their owners come
	std::vector<std::vector<size_t>> groups;
	std::vector<size_t> group_of(fill_ring_of.size(), SIZE_MAX);
	for (size_t i = 0; i < fill_ring_of.size(); i++) {
		const size_t owner = fill_ring_of[i] < fill_ring_of.size() ? fill_ring_of[i] : i;
		if (group_of[owner] == SIZE_MAX) {
			group_of[owner] = groups.size();
			groups.emplace_back();
		}
		group_of[i] = group_of[owner];
		groups[group_of[i]].push_back(i);
	}
	ThreadPlan p;
	const size_t n = cpus.empty() ? groups.size() : std::min(cpus.size(), groups.size());
	p.socks.resize(n);
	p.cpu.assign(n, -1);
	for (size_t t = 0; t < n && !cpus.empty(); t++)
		p.cpu[t] = cpus[t];
	for (size_t g = 0; g < groups.size() && n; g++)
		p.socks[g % n].insert(p.socks[g % n].end(), groups[g].begin(), groups[g].end());
	return p;
}

std::vector<int> allowed_cpus()
{
	std::vector<int> v;
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return v;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			v.push_back(c);
	return v;
}

namespace {

std::string cpu_text(const std::vector<int> &cpus)
{
	std::vector<uint32_t> u(cpus.begin(), cpus.end());
	return queue_list_text(u);
}

} // namespace

Result<std::vector<int>> parse_cpus(std::string_view s)
{
	const std::vector<int> allowed = allowed_cpus();
	std::vector<int> out;
	if (s == "all") {
		if (allowed.empty())
			return usage_error("--cpus all: this process's CPUs cannot be read");
		return allowed;
	}
	// the list form of a queue list; a lone number is one CPU, not a count
	const bool list = s.find_first_of(",-") != std::string_view::npos;
	const std::string text = list ? std::string(s) : std::string(s) + "-" + std::string(s);
	auto l = parse_queue_list(text, 0, 65536, "--cpus");
	if (!l)
		return usage_error("--cpus " + std::string(s) + ": not a list of CPUs below 65536 (examples: 1, 0,1, 0-3, all)");
	for (uint32_t c : *l) {
		if (!std::binary_search(allowed.begin(), allowed.end(), static_cast<int>(c)))
			return usage_error("--cpus " + std::string(s) + ": CPU " + std::to_string(c) +
					   " is not one this process may run on (" + cpu_text(allowed) + ")");
		out.push_back(static_cast<int>(c));
	}
	return out;
}

Totals sum_of(Engine &e, std::span<const size_t> idx, bool rx)
{
	std::vector<XskStats> st;
	std::vector<size_t> ring_of;
	st.reserve(idx.size());
	for (size_t k = 0; k < idx.size(); k++) {
		const size_t i = idx[k];
		st.push_back(e.socks[i].stats());
		// the ring's owner among idx (plan_threads keeps a group together)
		const size_t owner = i < e.fill_ring_of.size() ? e.fill_ring_of[i] : i;
		size_t at = k;
		for (size_t j = 0; j < idx.size(); j++)
			if (idx[j] == owner)
				at = j;
		ring_of.push_back(at);
	}
	return sum_stats(st, ring_of, rx);
}

ThreadTotals thread_totals(Engine &e, const ThreadPlan &plan, size_t t, bool rx, double user_s, double sys_s)
{
	ThreadTotals tt{plan.cpu[t], {}, sum_of(e, plan.socks[t], rx), user_s, sys_s};
	for (size_t i : plan.socks[t])
		tt.queues.push_back(e.socks[i].queue());
	return tt;
}

void add_totals(Totals &a, const Totals &b)
{
	a.packets += b.packets;
	a.bytes += b.bytes;
	a.ring_full += b.ring_full;
	a.kick_busy += b.kick_busy;
	a.kick_errors += b.kick_errors;
	if (b.kick_errno)
		a.kick_errno = b.kick_errno;
	a.wakeups += b.wakeups;
	a.k_rx_dropped += b.k_rx_dropped;
	a.k_rx_invalid += b.k_rx_invalid;
	a.k_tx_invalid += b.k_tx_invalid;
	a.k_rx_ring_full += b.k_rx_ring_full;
	a.k_fill_empty += b.k_fill_empty;
	a.submitted += b.submitted;
	a.completed += b.completed;
	a.descs += b.descs;
	a.gro = a.gro || b.gro;
	a.gro_frames_in += b.gro_frames_in;
	a.gro_packets_out += b.gro_packets_out;
	a.gro_super_packets += b.gro_super_packets;
	a.gro_bad_csum += b.gro_bad_csum;
	a.gro_frag_dropped += b.gro_frag_dropped;
}

void thread_cpu(double &user_s, double &sys_s)
{
	rusage ru{};
	user_s = sys_s = 0;
	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return;
	user_s = static_cast<double>(ru.ru_utime.tv_sec) + ru.ru_utime.tv_usec / 1e6;
	sys_s = static_cast<double>(ru.ru_stime.tv_sec) + ru.ru_stime.tv_usec / 1e6;
}

uint64_t CountShare::reserve(uint64_t want)
{
	if (limit_ == UINT64_MAX)
		return want;
	uint64_t r = reserved_.load(std::memory_order_relaxed);
	for (;;) {
		const uint64_t take = r >= limit_ ? 0 : std::min(want, limit_ - r);
		if (!take || reserved_.compare_exchange_weak(r, r + take, std::memory_order_relaxed))
			return take;
	}
}

void CountShare::commit(uint64_t reserved, uint64_t took)
{
	committed_.fetch_add(took, std::memory_order_relaxed);
	if (limit_ != UINT64_MAX)
		reserved_.fetch_add(took - reserved, std::memory_order_relaxed);	// modular: gives back reserved - took
}

TotalsBoard::TotalsBoard(size_t nthreads) : slots_(new Slot[nthreads]), n_(nthreads) {}

void TotalsBoard::publish(size_t t, const Totals &x, uint64_t round)
{
	{
		std::lock_guard<std::mutex> l(slots_[t].m);
		slots_[t].t = x;
	}
	slots_[t].seen.store(round, std::memory_order_release);
}

void TotalsBoard::finish(size_t t, const Totals &final)
{
	publish(t, final, round_.load(std::memory_order_acquire));
	slots_[t].done.store(true, std::memory_order_release);
}

Totals TotalsBoard::collect(double wait)
{
	const uint64_t want = round_.fetch_add(1, std::memory_order_acq_rel) + 1;
	const double t0 = monotonic_seconds();
	for (;;) {
		bool all = true;
		for (size_t t = 0; t < n_; t++)
			all = all && (slots_[t].done.load(std::memory_order_acquire) ||
				      slots_[t].seen.load(std::memory_order_acquire) >= want);
		if (all)
			break;
		if (monotonic_seconds() - t0 >= wait)
			break;
		const timespec nap{0, 200 * 1000};
		nanosleep(&nap, nullptr);
	}
	Totals sum;
	for (size_t t = 0; t < n_; t++) {
		std::lock_guard<std::mutex> l(slots_[t].m);
		add_totals(sum, slots_[t].t);
	}
	return sum;
}

IntervalReports::IntervalReports(TotalsBoard &board, double interval, double t0, Report report)
	: board_(board), interval_(interval), last_(t0), next_(interval > 0 ? t0 + interval : INFINITY),
	  report_(std::move(report))
{
}

void IntervalReports::tick(double now)
{
	if (now < next_)
		return;
	Totals cur = board_.collect(0.2);
	if (report_)
		report_(cur, prev_, now - last_);
	prev_ = cur;
	last_ = now;
	next_ = now + interval_;
}

Status run_threads(const ThreadPlan &plan, const std::function<void(size_t)> &body,
		   const std::function<void()> &tick, const std::function<void()> &fail)
{
	const size_t n = plan.size();
	std::vector<std::thread> th;
	th.reserve(n);
	std::unique_ptr<std::atomic<bool>[]> done(new std::atomic<bool>[n]);
	std::vector<int> pin_err(n, 0);
	Status st = ok();
	for (size_t t = 0; t < n; t++) {
		done[t].store(false);
		try {
			th.emplace_back([&, t] {
				if (plan.cpu[t] >= 0) {
					cpu_set_t set;
					CPU_ZERO(&set);
					CPU_SET(plan.cpu[t], &set);
					pin_err[t] = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
				}
				if (!pin_err[t])
					body(t);
				else if (fail)
					fail();
				done[t].store(true, std::memory_order_release);
			});
		} catch (const std::system_error &ex) {
			done[t].store(true);
			if (fail)
				fail();
			if (st)
				st = runtime_error(std::string("cannot start worker thread ") + std::to_string(t) + ": " +
							   ex.what(),
						   ex.code().value());
		}
	}
	for (;;) {
		bool all = true;
		for (size_t t = 0; t < n; t++)
			all = all && done[t].load(std::memory_order_acquire);
		if (all)
			break;
		const timespec nap{0, 5 * 1000 * 1000};
		nanosleep(&nap, nullptr);
		if (tick)
			tick();
	}
	for (auto &x : th)
		x.join();
	for (size_t t = 0; t < n && st; t++)
		if (pin_err[t])
			st = runtime_error("cannot pin worker thread " + std::to_string(t) + " to CPU " +
						   std::to_string(plan.cpu[t]) + ": " + std::strerror(pin_err[t]),
					   pin_err[t]);
	return st;
}

} // namespace xoffload::xsk
