// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// send / recv: interval lines, summaries and the TX plan line, as text or JSON.
#include <cinttypes>
#include <cstdio>

#include "prometheus.hpp"
#include "xsk_cli.hpp"
#include "xoffload/core/kernel.hpp"
#include "xoffload/features/channels.hpp"

namespace xoffload::cli {

namespace {

// Per-socket counters (stats() refreshed by sum()).
void sockets_out(const xsk::Engine &e, bool rx, Json *j)
{
	if (j)
		j->begin_array("sockets");
	for (size_t i = 0; i < e.socks.size(); i++) {
		const auto &st = e.socks[i].stats_nosync();
		// a shared fill ring's count stands on the socket that owns the ring only
		const size_t ring = i < e.fill_ring_of.size() ? e.fill_ring_of[i] : i;
		if (j) {
			j->begin_object();
			if (e.geneve)
				j->kv("slot", static_cast<uint64_t>(e.slot_of[i]));
			j->kv("queue", e.socks[i].queue()).kv("rx_packets", st.rx_packets).kv("rx_bytes", st.rx_bytes)
				.kv("descriptors", st.rx_descs).kv("tx_completed", st.tx_completed)
				.kv("rx_dropped", st.k_rx_dropped).kv("rx_ring_full", st.k_rx_ring_full)
				.kv("fill_ring", static_cast<uint64_t>(ring));
			if (ring == i)
				j->kv("fill_ring_empty", st.k_fill_empty);
			j->end_object();
		} else if (e.socks.size() > 1) {
			std::string who = e.geneve ? "slot " + std::to_string(e.slot_of[i]) + " (queue " +
							 std::to_string(e.socks[i].queue()) + ")"
						   : "queue " + std::to_string(e.socks[i].queue());
			if (rx)
				std::printf("  socket %s: %" PRIu64 " packets %" PRIu64 " bytes, drops: rx-dropped %" PRIu64
					    " rx-ring-full %" PRIu64 "%s\n",
					    who.c_str(), st.rx_packets, st.rx_bytes, st.k_rx_dropped, st.k_rx_ring_full,
					    ring == i ? (" fill-empty " + std::to_string(st.k_fill_empty)).c_str()
						      : (" (fill ring of socket " + std::to_string(ring) + ")").c_str());
			else
				std::printf("  socket %s: %" PRIu64 " frames completed\n", who.c_str(), st.tx_completed);
		}
	}
	if (j)
		j->end_array();
}

// The worker threads of the run: where each ran, its queues and what its
// sockets counted (the summary's totals are their sum).
void threads_out(const xsk::Engine &e, Json *j)
{
	if (j)
		j->begin_array("threads");
	for (size_t t = 0; t < e.threads.size(); t++) {
		const auto &th = e.threads[t];
		if (j) {
			j->begin_object().kv("thread", static_cast<uint64_t>(t));
			if (th.cpu >= 0)
				j->kv("cpu", static_cast<uint64_t>(th.cpu));
			j->array("queues", th.queues).kv("packets", th.totals.packets).kv("bytes", th.totals.bytes)
				.kv("user_s", th.user_s).kv("sys_s", th.sys_s).end_object();
		} else if (e.threads.size() > 1) {
			std::printf("  thread %zu (%s, queues %s): %" PRIu64 " packets %" PRIu64 " bytes, %.2f s user, %.2f s system\n",
				    t, th.cpu >= 0 ? ("cpu " + std::to_string(th.cpu)).c_str() : "not pinned",
				    queue_list_text(th.queues).c_str(), th.totals.packets, th.totals.bytes, th.user_s, th.sys_s);
		}
	}
	if (j)
		j->end_array();
}

// One entry per set of frames: per socket, or once for sockets sharing a queue.
void accounting_out(const xsk::Engine &e, Json &j)
{
	j.begin_array("accounting");
	for (const auto &[queue, a] : xsk::pool_accounting(e))
		j.begin_object().kv("queue", queue).kv("sockets", a.sockets).kv("total", a.total)
			.kv("free", a.free).kv("fill", a.fill).kv("rx", a.rx).kv("tx", a.tx)
			.kv("completion", a.completion).kv("in_use", a.in_use).kv("bad_addr", a.bad_addr)
			.kv("consistent", a.consistent).end_object();
	j.end_array();
}

// The run's summary as node_exporter's textfile collector reads it: the
// counters of this run (they start at zero with every run, which Prometheus
// takes as a counter reset), the run's length and whether its frame
// accounting held.
// recv --gro / --verify-csum: the engines' counters (summed over the
// workers), one family per counter and its causes as labels, as gro_json.
void prom_gro(Prom &p, const GroStats &s)
{
	p.family("xoffload_gro_frames_total", "counter", "Frames the GRO engines took in").sample({}, s.frames_in);
	p.family("xoffload_gro_frame_bytes_total", "counter", "Bytes of those frames").sample({}, s.bytes_in);
	p.family("xoffload_gro_packets_total", "counter", "Packets the GRO engines emitted, merged or not")
		.sample({}, s.packets_out);
	p.family("xoffload_gro_packet_bytes_total", "counter", "Bytes of those packets").sample({}, s.bytes_out);
	p.family("xoffload_gro_super_packets_total", "counter", "Packets emitted made of two frames or more")
		.sample({}, s.super_packets);
	p.family("xoffload_gro_frame_verdicts_total", "counter",
		 "Frames by what became of them (held: started a super-packet; passed includes malformed and bad "
		 "checksums; fragment: taken into reassembly)");
	const std::pair<const char *, uint64_t> verdicts[] = {
		{"held", s.held}, {"merged", s.merged}, {"passed", s.passed}, {"fragment", s.frags_in}};
	for (const auto &[v, n] : verdicts)
		p.sample({{"verdict", v}}, n);
	p.family("xoffload_gro_malformed_total", "counter", "Frames whose headers lie, passed as they were")
		.sample({}, s.malformed);
	p.family("xoffload_gro_flushes_total", "counter", "Packets emitted, by why they went out");
	for (size_t i = 0; i < s.flush_by.size(); i++)
		p.sample({{"cause", to_string(static_cast<GroFlush>(i))}}, s.flush_by[i]);
	p.family("xoffload_gro_passed_total", "counter", "Frames passed unmerged, by reason");
	for (size_t i = 0; i < s.pass_by.size(); i++)
		p.sample({{"reason", to_string(static_cast<GroPass>(i))}}, s.pass_by[i]);
	p.family("xoffload_gro_bad_csum_total", "counter", "Frames with a wrong checksum (never merged), by where");
	for (size_t i = 0; i < s.bad_csum.size(); i++)
		p.sample({{"where", to_string(static_cast<GroCsumError>(i))}}, s.bad_csum[i]);
	p.family("xoffload_gro_reassembled_total", "counter", "IP datagrams reassembled from fragments")
		.sample({}, s.reassembled);
	p.family("xoffload_gro_fragment_drops_total", "counter", "Fragments dropped, by reason");
	for (size_t i = 0; i < s.frag_drop.size(); i++)
		p.sample({{"reason", to_string(static_cast<GroFragDrop>(i))}}, s.frag_drop[i]);
	p.family("xoffload_gro_fragment_memory_peak_bytes", "gauge", "Most bytes held in fragment queues at once")
		.sample({}, s.frag_mem_peak);
}

void prom_summary(const Globals &g, const Netdev &dev, const xsk::Engine &e, bool rx, const xsk::Totals &t,
		  double secs, const xsk::XskProgCounters *xc, bool interrupted, const GeneveCounterSet *gnv,
		  const GroStats *gro)
{
	const std::string dir = rx ? "rx" : "tx";
	Prom p({{"netns", g.netns}, {"ifname", dev.name}, {"dir", dir}});
	p.family("xoffload_xsk_packets_total", "counter", "Frames the AF_XDP sockets of the run received or sent")
		.sample({}, t.packets);
	p.family("xoffload_xsk_bytes_total", "counter", "Bytes of those frames").sample({}, t.bytes);
	p.family("xoffload_xsk_run_seconds", "gauge", "Length of the run").sample({}, secs);
	p.family("xoffload_xsk_sockets", "gauge", "AF_XDP sockets of the run")
		.sample({{"mode", e.mode}}, static_cast<uint64_t>(e.socks.size()));
	p.family("xoffload_xsk_ring_full_total", "counter",
		 rx ? "Refills that found the fill ring already full (ahead of the kernel, not a loss)"
		    : "Sends that found the TX ring full (back-pressure, not a loss)")
		.sample({}, t.ring_full);
	p.family("xoffload_xsk_wakeups_total", "counter", "Wakeup system calls (sendto/poll) of the run")
		.sample({}, t.wakeups);
	p.family("xoffload_xsk_drops_total", "counter",
		 "Frames lost or refused around the sockets, by reason (the kernel's XDP_STATISTICS and the kicks)");
	const std::pair<const char *, uint64_t> drops[] = {
		{"rx-dropped", t.k_rx_dropped},	  {"rx-ring-full", t.k_rx_ring_full}, {"fill-ring-empty", t.k_fill_empty},
		{"rx-invalid", t.k_rx_invalid},	  {"tx-invalid", t.k_tx_invalid},     {"kick-errors", t.kick_errors}};
	for (const auto &[reason, n] : drops)
		p.sample({{"reason", reason}}, n);
	p.family("xoffload_xsk_kick_busy_total", "counter", "TX kicks the kernel answered EBUSY (retried)")
		.sample({}, t.kick_busy);
	if (!rx) {
		p.family("xoffload_xsk_tx_submitted_total", "counter", "Descriptors put on the TX rings")
			.sample({}, t.submitted);
		p.family("xoffload_xsk_tx_completed_total", "counter", "Descriptors the completion rings gave back")
			.sample({}, t.completed);
		if (t.dev_tx_dropped)
			p.family("xoffload_xsk_device_tx_dropped_total", "counter",
				 "The device's tx_dropped over the run (IFLA_STATS64)")
				.sample({}, *t.dev_tx_dropped);
	} else {
		p.family("xoffload_xsk_rx_descriptors_total", "counter",
			 "RX descriptors (more than frames when a frame spans several chunks)")
			.sample({}, t.descs);
		if (t.dev_rx) {
			p.family("xoffload_xsk_device_rx_drops_total", "counter",
				 "The device's own RX losses over the run, before XDP (IFLA_STATS64), by counter");
			const std::pair<const char *, uint64_t> dev_drops[] = {{"rx_missed", t.dev_rx->missed},
									       {"rx_fifo", t.dev_rx->fifo},
									       {"rx_over", t.dev_rx->over},
									       {"rx_dropped", t.dev_rx->dropped}};
			for (const auto &[counter, n] : dev_drops)
				p.sample({{"counter", counter}}, n);
		}
	}
	if (xc) {
		p.family("xoffload_xsk_xdp_packets_total", "counter", "Frames xdp_xsk counted during the run, by reason");
		for (unsigned r = 0; r < XO_XSK_CNT_MAX; r++)
			p.sample({{"reason", xsk::xsk_counter_name(r)}}, static_cast<uint64_t>(xc->v[r].packets));
	}
	if (gnv) {
		p.family("xoffload_xsk_geneve_packets_total", "counter",
			 "Frames xdp_geneve counted during the run, by reason (recv --geneve)");
		for (unsigned r = 0; r < kGeneveStats; r++)
			p.sample({{"reason", geneve_counter_name(r)}}, static_cast<uint64_t>((*gnv)[r].packets));
	}
	if (gro)
		prom_gro(p, *gro);
	p.family("xoffload_xsk_thread_packets_total", "counter",
		 "Frames each worker thread's sockets received or sent (cpu: where it was pinned)");
	for (size_t t = 0; t < e.threads.size(); t++)
		p.sample({{"thread", std::to_string(t)},
			  {"cpu", e.threads[t].cpu >= 0 ? std::to_string(e.threads[t].cpu) : std::string("none")}},
			 e.threads[t].totals.packets);
	p.family("xoffload_xsk_interrupted", "gauge", "1 when a signal ended the run").sample({}, uint64_t{interrupted});
	p.family("xoffload_xsk_accounting_consistent", "gauge",
		 "1 when every UMEM frame of the run was accounted for at its end")
		.sample({}, uint64_t{xsk::accounting_ok(e)});
	p.print();
}

} // namespace

void print_interval(const Globals &g, const Netdev &dev, const xsk::Engine &e, bool rx, const xsk::Totals &now,
		    const xsk::Totals &prev, double dt, const xsk::XskProgCounters *xc)
{
	double pps = dt > 0 ? static_cast<double>(now.packets - prev.packets) / dt : 0;
	double gbps = dt > 0 ? static_cast<double>(now.bytes - prev.bytes) * 8 / dt / 1e9 : 0;
	// recv --gro: the engines' frames in, packets out (and their ratio),
	// super-packets, bad checksums and fragments dropped in the interval
	const uint64_t gin = now.gro_frames_in - prev.gro_frames_in, gout = now.gro_packets_out - prev.gro_packets_out;
	const double gratio = gout ? static_cast<double>(gin) / static_cast<double>(gout) : 1.0;
	if (g.json) {
		Json j;
		j.begin_object().kv("type", "interval").kv("interface", dev.name).kv("dir", rx ? "rx" : "tx")
			.kv("interval_s", dt).kv("pps", pps).kv("gbps", gbps).kv("packets", now.packets - prev.packets)
			.kv(rx ? "fill_full" : "ring_full", now.ring_full - prev.ring_full).kv("mode", e.mode);
		if (rx && now.gro)
			j.begin_object("gro").kv("frames_in", gin).kv("packets_out", gout).kv("merge_ratio", gratio)
				.kv("super_packets", now.gro_super_packets - prev.gro_super_packets)
				.kv("bad_csum", now.gro_bad_csum - prev.gro_bad_csum)
				.kv("frags_dropped", now.gro_frag_dropped - prev.gro_frag_dropped).end_object();
		j.end_object().print();
		return;
	}
	// RX: the fill ring found already topped up (we are ahead of the kernel,
	// not a loss); TX: the TX ring had no room (back-pressure)
	std::printf("%-10s %s q%-6s %12.0f pps %8.3f Gbps  %s %-8" PRIu64, dev.name.c_str(), rx ? "rx" : "tx",
		    xsk::queue_list(e).c_str(), pps, gbps, rx ? "fill-full" : "ring-full", now.ring_full - prev.ring_full);
	if (rx)
		std::printf(" drops: rx-ring-full %" PRIu64 " fill-empty %" PRIu64 " invalid %" PRIu64,
			    now.k_rx_ring_full - prev.k_rx_ring_full, now.k_fill_empty - prev.k_fill_empty,
			    now.k_rx_invalid - prev.k_rx_invalid);
	else
		std::printf(" kick-busy %" PRIu64 " drops: tx-invalid %" PRIu64, now.kick_busy - prev.kick_busy,
			    now.k_tx_invalid - prev.k_tx_invalid);
	if (xc)
		std::printf(" xdp: no-socket %" PRIu64 " filtered %" PRIu64, static_cast<uint64_t>(xc->v[XO_XSK_CNT_NO_SOCKET].packets),
			    static_cast<uint64_t>(xc->v[XO_XSK_CNT_FILTERED].packets));
	if (rx && now.gro) {
		// nothing out (fragments waiting, runs held): no ratio
		char ratio[32] = "-";
		if (gout)
			std::snprintf(ratio, sizeof(ratio), "%.2fx", gratio);
		std::printf(" gro: %" PRIu64 " in %" PRIu64 " out (%s) super %" PRIu64 " bad-csum %" PRIu64
			    " frag-dropped %" PRIu64,
			    gin, gout, ratio, now.gro_super_packets - prev.gro_super_packets,
			    now.gro_bad_csum - prev.gro_bad_csum, now.gro_frag_dropped - prev.gro_frag_dropped);
	}
	std::printf("  (%s)\n", e.mode.c_str());
	std::fflush(stdout);
}

namespace {

// recv --gro / --verify-csum: the engines' counters, as JSON.
void gro_json(Json &j, const GroStats &s)
{
	j.begin_object("gro").kv("frames_in", s.frames_in).kv("packets_out", s.packets_out)
		.kv("merge_ratio", s.merge_ratio()).kv("super_packets", s.super_packets).kv("held", s.held)
		.kv("merged", s.merged).kv("passed", s.passed).kv("malformed", s.malformed).kv("bytes_in", s.bytes_in)
		.kv("bytes_out", s.bytes_out);
	j.begin_object("flushes");
	for (size_t i = 0; i < s.flush_by.size(); i++)
		j.kv(to_string(static_cast<GroFlush>(i)), s.flush_by[i]);
	j.end_object().begin_object("passed_by");
	for (size_t i = 0; i < s.pass_by.size(); i++)
		j.kv(to_string(static_cast<GroPass>(i)), s.pass_by[i]);
	j.end_object().begin_object("bad_csum").kv("total", s.bad_csum_total());
	for (size_t i = 0; i < s.bad_csum.size(); i++)
		j.kv(to_string(static_cast<GroCsumError>(i)), s.bad_csum[i]);
	j.end_object().begin_object("fragments").kv("in", s.frags_in).kv("reassembled", s.reassembled)
		.kv("mem_peak", s.frag_mem_peak).begin_object("dropped").kv("total", s.frag_drop_total());
	for (size_t i = 0; i < s.frag_drop.size(); i++)
		j.kv(to_string(static_cast<GroFragDrop>(i)), s.frag_drop[i]);
	j.end_object().end_object().end_object();
}

// The same as text lines: only the causes and reasons that happened.
void gro_text(const GroStats &s)
{
	std::printf("  gro: %" PRIu64 " frames in, %" PRIu64 " packets out (merge ratio %.2f), %" PRIu64
		    " super-packets; held %" PRIu64 " merged %" PRIu64 " passed %" PRIu64 " malformed %" PRIu64 "\n",
		    s.frames_in, s.packets_out, s.merge_ratio(), s.super_packets, s.held, s.merged, s.passed,
		    s.malformed);
	std::printf("    flushes:");
	for (size_t i = 0; i < s.flush_by.size(); i++)
		if (s.flush_by[i])
			std::printf(" %s %" PRIu64, to_string(static_cast<GroFlush>(i)), s.flush_by[i]);
	std::printf("%s\n    bad checksums: %" PRIu64, s.packets_out ? "" : " none", s.bad_csum_total());
	for (size_t i = 0; i < s.bad_csum.size(); i++)
		if (s.bad_csum[i])
			std::printf(" %s %" PRIu64, to_string(static_cast<GroCsumError>(i)), s.bad_csum[i]);
	std::printf("\n");
	uint64_t by = 0;
	for (uint64_t v : s.pass_by)
		by += v;
	if (by) {
		std::printf("    passed by:");
		for (size_t i = 0; i < s.pass_by.size(); i++)
			if (s.pass_by[i])
				std::printf(" %s %" PRIu64, to_string(static_cast<GroPass>(i)), s.pass_by[i]);
		std::printf("\n");
	}
	if (s.frags_in) {
		std::printf("    fragments: %" PRIu64 " in, %" PRIu64 " datagrams reassembled, %" PRIu64 " dropped",
			    s.frags_in, s.reassembled, s.frag_drop_total());
		for (size_t i = 0; i < s.frag_drop.size(); i++)
			if (s.frag_drop[i])
				std::printf(" %s %" PRIu64, to_string(static_cast<GroFragDrop>(i)), s.frag_drop[i]);
		std::printf(", memory peak %" PRIu64 " B\n", s.frag_mem_peak);
	}
}

} // namespace

void print_summary(const Globals &g, const Netdev &dev, const xsk::Engine &e, bool rx, const xsk::Totals &t,
		   double secs, const xsk::XskProgCounters *xc, uint64_t pcap_frames, bool interrupted,
		   const GeneveCounterSet *gnv, const GroStats *gro)
{
	double pps = secs > 0 ? static_cast<double>(t.packets) / secs : 0;
	double gbps = secs > 0 ? static_cast<double>(t.bytes) * 8 / secs / 1e9 : 0;
	if (g.prometheus) {
		prom_summary(g, dev, e, rx, t, secs, xc, interrupted, gnv, gro);
		return;
	}
	if (g.json) {
		Json j;
		j.begin_object().kv("type", "summary").kv("interface", dev.name).kv("dir", rx ? "rx" : "tx")
			.array("queues", xsk::queues_of(e)).kv("mode", e.mode).kv("tx_metadata", e.md)
			.kv("multi_buffer", e.sg).kv("kernel", running_kernel().text);
		if (!e.md_why.empty())
			j.kv("tx_metadata_why", e.md_why);
		if (!e.sg_why.empty())
			j.kv("multi_buffer_why", e.sg_why);
		if (!rx) {
			j.kv("checksum", e.csum);
			if (!e.csum_why.empty() && e.csum != "tx-metadata")
				j.kv("checksum_why", e.csum_why);
		}
		j
			.kv("packets", t.packets).kv("bytes", t.bytes).kv("duration_s", secs).kv("pps", pps)
			.kv("gbps", gbps).kv(rx ? "fill_full" : "ring_full", t.ring_full).kv("wakeups", t.wakeups)
			.kv("interrupted", interrupted);
		if (!rx) {
			j.kv("submitted", t.submitted).kv("completed", t.completed);
			if (t.dev_tx_dropped)
				j.kv("tx_dropped", *t.dev_tx_dropped);
		} else
			j.kv("descriptors", t.descs);
		if (t.dev_rx)
			j.begin_object("device").kv("rx_missed", t.dev_rx->missed).kv("rx_fifo", t.dev_rx->fifo)
				.kv("rx_over", t.dev_rx->over).kv("rx_dropped", t.dev_rx->dropped).end_object();
		j.begin_object("drops").kv("rx_dropped", t.k_rx_dropped).kv("rx_ring_full", t.k_rx_ring_full)
			.kv("fill_ring_empty", t.k_fill_empty).kv("rx_invalid", t.k_rx_invalid)
			.kv("tx_invalid", t.k_tx_invalid).kv("kick_busy", t.kick_busy).kv("kick_errors", t.kick_errors)
			.end_object();
		if (xc) {
			j.begin_object("xdp");
			for (unsigned r = 0; r < XO_XSK_CNT_MAX; r++)
				j.kv(xsk::xsk_counter_name(r), static_cast<uint64_t>(xc->v[r].packets));
			j.end_object();
		}
		if (gnv) {
			j.begin_object("geneve");
			for (unsigned r = 0; r < kGeneveStats; r++)
				j.kv(geneve_counter_name(r), static_cast<uint64_t>((*gnv)[r].packets));
			j.end_object();
		}
		if (pcap_frames)
			j.kv("pcap_frames", pcap_frames);
		if (gro)
			gro_json(j, *gro);
		sockets_out(e, rx, &j);
		threads_out(e, &j);
		accounting_out(e, j);
		if (!e.socks.empty() && e.socks.front().busy_poll()) {
			// after the run: kernels before 6.x's bind-time marking name the
			// NAPI when the first frame arrives
			std::vector<uint32_t> ids;
			for (const auto &s : e.socks)
				ids.push_back(s.napi_id());
			j.array("busy_poll_napi_ids", ids);
		}
		j.end_object().print();
		return;
	}
	std::printf("%s %s summary: %" PRIu64 " packets %" PRIu64 " bytes in %.3f s = %.0f pps %.3f Gbps, "
		    "queues %s%s, %s mode, tx-metadata %s, multi-buffer %s%s\n",
		    dev.name.c_str(), rx ? "rx" : "tx", t.packets, t.bytes, secs, pps, gbps, xsk::queue_list(e).c_str(),
		    e.shared_queue ? (" (" + std::to_string(e.socks.size()) + " sockets)").c_str() : "",
		    e.mode.c_str(), e.md.c_str(), e.sg ? "on" : "off", interrupted ? " (interrupted)" : "");
	sockets_out(e, rx, nullptr);
	threads_out(e, nullptr);
	if (!rx)
		std::printf("  submitted %" PRIu64 " completed %" PRIu64 " ring-full %" PRIu64 " kick-busy %" PRIu64
			    " kick-errors %" PRIu64 " tx-invalid %" PRIu64 "; %s tx_dropped %s\n",
			    t.submitted, t.completed, t.ring_full, t.kick_busy, t.kick_errors, t.k_tx_invalid,
			    dev.name.c_str(), t.dev_tx_dropped ? ("+" + std::to_string(*t.dev_tx_dropped)).c_str() : "unknown");
	else
		std::printf("  %" PRIu64 " descriptors; drops: rx-dropped %" PRIu64 " rx-ring-full %" PRIu64
			    " fill-empty %" PRIu64 " invalid %" PRIu64 "; fill-ring-full %" PRIu64 "\n",
			    t.descs, t.k_rx_dropped, t.k_rx_ring_full, t.k_fill_empty, t.k_rx_invalid, t.ring_full);
	if (rx && t.dev_rx)
		std::printf("  %s before XDP: rx-missed %" PRIu64 " rx-fifo %" PRIu64 " rx-over %" PRIu64
			    "; rx-dropped %" PRIu64 " (the device's counters over the run)\n",
			    dev.name.c_str(), t.dev_rx->missed, t.dev_rx->fifo, t.dev_rx->over, t.dev_rx->dropped);
	if (xc) {
		std::printf("  xdp_xsk:");
		for (unsigned r = 0; r < XO_XSK_CNT_MAX; r++)
			std::printf(" %s %" PRIu64, xsk::xsk_counter_name(r), static_cast<uint64_t>(xc->v[r].packets));
		std::printf("\n");
	}
	if (gnv) {
		std::printf("  xdp_geneve during the run:");
		for (unsigned r = 0; r < kGeneveStats; r++)
			if ((*gnv)[r].packets)
				std::printf(" %s %" PRIu64, geneve_counter_name(r), static_cast<uint64_t>((*gnv)[r].packets));
		std::printf("\n");
	}
	if (gro)
		gro_text(*gro);
	if (pcap_frames)
		std::printf("  pcap: %" PRIu64 " %s written\n", pcap_frames, gro ? "packets" : "frames");
	std::printf("  frame accounting: %s\n", xsk::accounting_ok(e) ? "consistent" : "INCONSISTENT");
	std::fflush(stdout);
}

void print_plan(const Globals &g, const xsk::Engine &e, const TxPlan &p, const char *gso,
		const features::KernelArg &k)
{
	if (g.json)
		return;
	if (!e.tx_csum_note.empty())
		std::fprintf(stderr, "note: --tx-csum: checksums in software: %s\n", e.tx_csum_note.c_str());
	std::string seg = std::string(gso) == "none" ? "none" : std::string("software (") + gso + ")";
	const std::string facts = std::to_string(k.major) + "." + std::to_string(k.minor);
	const std::string kernel = k.running ? "kernel " + running_kernel().text + " (facts of " + facts + ")"
					     : "facts of " + facts + " (--kernel; running " + running_kernel().text + ")";
	std::fprintf(stderr, "tx plan: segmentation %s, checksum %s%s, tags %s, multi-buffer %s; %s\n", seg.c_str(),
		     p.csum_hw ? "by the queue (TX metadata)" : "in software",
		     !p.csum_hw && !e.csum_why.empty() ? (" (" + e.csum_why + ")").c_str() : "",
		     p.vlan_sw ? "in software" : "none", e.sg ? "on" : "off", kernel.c_str());
	if (g.verbose)
		for (const auto &r : p.reasons)
			std::fprintf(stderr, "  why: %s\n", r.c_str());
}

} // namespace xoffload::cli
