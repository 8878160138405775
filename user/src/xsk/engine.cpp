// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The traffic engine's sockets: UMEM and socket sets over queues, the TX
// metadata and XDP_USE_SG decisions at bind, and the run's accounting.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "xoffload/abi.h"
#include "xoffload/features/channels.hpp"
#include "xoffload/features/features.hpp"
#include "xoffload/core/kernel.hpp"
#include "xoffload/xsk/engine.hpp"

namespace xoffload::xsk {

namespace {

// A zero-copy bind (xsk_mode zero-copy) the kernel refused, with what the
// driver's facts under the running kernel say: no zero-copy on this release
// (virtio_net before 6.13: xp_assign_dev() answers EOPNOTSUPP), or
// virtio_net without a DMA device (EINVAL from virtnet_xsk_pool_enable(),
// which the bind would otherwise call an invalid queue).
Error zc_bind_error(const Netdev &dev, const EngineConfig &c, Error e)
{
	if (c.xsk_mode != "zero-copy" || (e.err != EOPNOTSUPP && e.err != EINVAL))
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

// One try of make_engine: the UMEM as uc says, and the sockets over it.
Result<Engine> make_sockets(const Netdev &dev, const EngineConfig &c, const EngineUse &use, const UmemConfig &uc,
			    const std::vector<uint32_t> &qs, uint32_t per, BindMode bm)
{
	const bool rx = use.rx, tx = use.tx;
	auto umem = Umem::create(uc);
	if (!umem)
		return umem.error();
	Engine e;
	e.umem.emplace(std::move(*umem));
	const SocketLayout layout = socket_layout(qs.size(), use.shared);
	for (uint32_t q : qs) {
		SocketConfig sc;
		sc.queue = q;
		sc.frames = per;
		sc.fill_size = sc.comp_size = c.ring_size;
		sc.rx_size = rx ? c.ring_size : 0;
		sc.tx_size = tx ? c.ring_size : 0;
		sc.mode = bm;
		sc.need_wakeup = c.need_wakeup;
		sc.busy_poll = c.busy_poll;
		sc.busy_poll_budget = c.busy_poll_budget;
		sc.busy_poll_usecs = c.busy_poll_usecs;
		sc.multi_buffer = (tx && use.tx_frame + e.umem->tx_metadata_len() > c.frame_size) || (rx && use.rx_sg);
		sc.multi_buffer_if_supported = rx && c.multi_buffer == "auto";
		auto s = XskSocket::create(*e.umem, dev, sc);
		if (!s)
			return s.error();
		const size_t owner = e.socks.size();
		e.socks.push_back(std::move(*s));
		// the others on this queue share its fill ring and frames
		for (uint32_t k = 1; k < use.shared; k++) {
			auto p = XskSocket::create_shared(e.socks[owner], sc);
			if (!p)
				return p.error();
			e.socks.push_back(std::move(*p));
		}
	}
	e.fill_ring_of = layout.fill_ring_of;
	e.slot_of = layout.slot_of;
	e.shared_queue = use.shared > 0;
	e.mode = e.socks.front().zero_copy() ? "zero-copy" : "copy";
	e.sg = e.socks.front().multi_buffer();
	if (rx && use.rx_sg && !e.sg)
		e.sg_why = probe_xdp_use_sg().ok ? "the kernel refused XDP_USE_SG at bind" : kernel_lacks(kFeatXdpUseSg);
	return e;
}

} // namespace

SocketLayout socket_layout(size_t nqueues, uint32_t shared)
{
	const uint32_t per = std::max<uint32_t>(shared, 1);
	SocketLayout l;
	for (size_t q = 0; q < nqueues; q++) {
		const size_t owner = l.fill_ring_of.size();
		for (uint32_t k = 0; k < per; k++) {
			l.fill_ring_of.push_back(owner);
			l.slot_of.push_back(k);
		}
	}
	return l;
}

Result<Engine> make_engine(const Netdev &dev, const EngineConfig &c, const EngineUse &use,
			   const std::vector<uint32_t> &qs)
{
	const bool tx = use.tx;
	auto bm = parse_bind_mode(c.xsk_mode);
	if (!bm)
		return bm.error();
	if (use.shared > XO_GNV_MAX_QUEUES)
		return usage_error("at most " + std::to_string(XO_GNV_MAX_QUEUES) + " sockets on one queue");
	uint32_t per = c.frames ? c.frames : 2 * c.ring_size;
	UmemConfig uc;
	uc.frame_size = c.frame_size;
	uc.frame_count = per * static_cast<uint32_t>(qs.size());
	// only where a frame may use it: copy mode pays for the metadata area on
	// every descriptor (tools/bench xsk, 1514 B: ~10% of the rate)
	const bool md_wanted = tx && use.tx_md && !c.no_tx_metadata;
	uc.tx_metadata = md_wanted && !tx_metadata_refused(dev.ifindex);
	auto e = make_sockets(dev, c, use, uc, qs, per, *bm);
	// virtio_net (7.x) refuses a pool with TX metadata at bind, in copy mode
	// too: bind again over a UMEM without it, checksums then in software
	if (!e && e.error().err == EOPNOTSUPP && uc.tx_metadata) {
		note_tx_metadata_refused(dev.ifindex);
		uc.tx_metadata = false;
		e = make_sockets(dev, c, use, uc, qs, per, *bm);
	}
	if (!e)
		return zc_bind_error(dev, c, e.error());
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

Result<std::vector<uint32_t>> bound_queues(const Netdev &dev, std::optional<uint32_t> queue,
					   const std::optional<std::string> &queues, bool rx, unsigned limit)
{
	if (!queues)
		return std::vector<uint32_t>{queue.value_or(0)};
	unsigned n = 0;
	if (*queues == "all") {
		auto ch = read_channels(dev);
		if (!ch)
			return runtime_error("--queues all: " + ch.error().msg, ch.error().err);
		n = rx ? ch->rx : ch->tx;
	}
	return parse_queue_list(*queues, n, limit);
}

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

void wait_for_carrier(const Netdev &dev, bool was_up, const std::function<bool()> &stop)
{
	if (!was_up)
		return;
	for (int i = 0; i < 100 && !(stop && stop()); i++) {
		auto up = netdev_running(dev.name);
		if (!up || *up)
			return;
		usleep(50000);
	}
}

Totals sum_stats(std::span<const XskStats> per_socket, std::span<const size_t> fill_ring_of, bool rx)
{
	Totals t;
	// the kernel reports a pool's fill-ring-empty count to every socket on
	// it: counted once per ring
	std::vector<uint64_t> fill_empty;
	for (const auto &st : per_socket) {
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
	t.k_fill_empty = sum_per_ring(fill_empty, fill_ring_of);
	return t;
}

Totals sum(Engine &e, bool rx)
{
	std::vector<XskStats> st;
	st.reserve(e.socks.size());
	for (auto &s : e.socks)
		st.push_back(s.stats());
	return sum_stats(st, e.fill_ring_of, rx);
}

std::vector<PoolAccounting> pool_accounting(const Engine &e)
{
	std::vector<PoolAccounting> v;
	for (size_t i = 0; i < e.socks.size(); i++) {
		if (i < e.fill_ring_of.size() && e.fill_ring_of[i] != i)
			continue;	// counted with the socket that owns its fill ring
		v.push_back({e.socks[i].queue(), e.socks[i].accounting()});
	}
	return v;
}

bool accounting_ok(const Engine &e)
{
	bool all = true;
	for (const auto &p : pool_accounting(e))
		all = all && p.a.consistent;
	return all;
}

std::string kick_error_cause(const Netdev &dev, const Engine &e, const Totals &t)
{
	if (!t.kick_errors)
		return "";
	const int err = t.kick_errno;
	std::string why = ": " + std::to_string(t.kick_errors) + " TX kicks (sendto) failed, the latest with " +
			  errno_name(err) + " (" + std::strerror(err) + ")";
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

double monotonic_seconds()
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

} // namespace xoffload::xsk
