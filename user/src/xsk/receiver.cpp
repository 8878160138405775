// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// recv's receive loop and Geneve XSKMAP slots (see xoffload/xsk/receiver.hpp).
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <cmath>

#include "xoffload/xsk/receiver.hpp"

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

RecvResult receive(Engine &e, LinkWatch &watch, const RecvConfig &c, RecvSinks sinks, const RecvHooks &hooks)
{
	RecvResult res;
	double next_watch = 0;
	const uint64_t limit = c.count;
	// room for the longest descriptor chain: rx_peek then returns whole frames
	std::vector<RxDesc> descs(std::max(c.batch, kMaxRxChain));
	std::vector<pollfd> pfds;
	for (auto &s : e.socks)
		pfds.push_back(pollfd{s.fd(), POLLIN, 0});
	std::vector<std::span<const std::byte>> pieces(kMaxRxChain);
	size_t npieces = 0;
	uint64_t got = 0;
	const double t0 = monotonic_seconds();
	double next_report = c.interval > 0 ? t0 + c.interval : INFINITY, last = t0, last_rx = 0;
	Totals prev{};
	timespec ts{};

	while (got < limit) {
		bool any = false;
		for (size_t k = 0; k < e.socks.size(); k++) {
			auto &s = e.socks[k];
			uint32_t n = s.rx_peek(descs);
			if (!n)
				continue;
			any = true;
			PcapWriter *w = sinks.per_socket.empty() ? sinks.all : &sinks.per_socket[k];
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
		double t = monotonic_seconds();
		if (any)
			last_rx = t;
		if (hooks.stop && hooks.stop()) {
			res.interrupted = true;
			break;
		}
		if (t >= next_watch) {
			next_watch = t + 0.1;
			if ((res.dev_gone = watch.gone()))
				break;
		}
		if (c.duration && t - t0 >= *c.duration)
			break;
		if (c.idle && last_rx > 0 && t - last_rx >= *c.idle)
			break;
		if (t >= next_report) {
			Totals cur = sum(e, true);
			if (hooks.interval)
				hooks.interval(cur, prev, t - last);
			prev = cur;
			last = t;
			next_report = t + c.interval;
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
	res.secs = monotonic_seconds() - t0;
	res.frames = got;
	return res;
}

} // namespace xoffload::xsk
