// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// send: parse the frame and the offload request, check it fits, bind the
// engine, ask the feature model for the TX plan, run the library's loop and
// print what it returns.
#include <cinttypes>
#include <cstdio>

#include "xsk_cli.hpp"
#include "xoffload/features/features.hpp"
#include "xoffload/gso/gso.hpp"
#include "xoffload/core/kernel.hpp"
#include "xoffload/xsk/pcap.hpp"
#include "xoffload/xsk/traffic.hpp"
#include "xoffload/xsk/plan.hpp"
#include "xoffload/xsk/sender.hpp"

namespace xoffload::cli {

namespace {

using namespace xsk;

// --gso: every segment of the super-packet fits one UMEM frame of cap bytes
// (md_room of the frame went to the TX metadata). Usage error otherwise,
// before anything is bound; else the length of the longest segment.
Result<uint32_t> check_segments_fit(const FrameSpec &spec, const GsoRequest &req, const XskOpts &o, uint32_t cap,
				    uint32_t md_room)
{
	auto super = build_frame(spec);
	if (!super)
		return super.error();
	const SegmentCheck c = check_segments(super->bytes, req, cap);
	if (c.nseg < 0)
		return usage_error("--gso " + o.gso + ": " + to_string(c.why));
	if (!c.fits)
		return usage_error("--gso " + o.gso + ": " + to_string(c.why) + " (UMEM frames hold " + std::to_string(cap) +
				   " bytes" +
				   (md_room ? " after " + std::to_string(md_room) + " of TX metadata; --sw-csum leaves " +
						      std::to_string(cap + md_room)
					    : std::string()) +
				   ")");
	return c.longest;
}

// A frame of len bytes (tags: ntags) fits what dev carries, or the one
// line that says what does: --size (or --mss with --gso) at most what fits.
Status check_fits_device(const Netdev &dev, const XskOpts &o, uint32_t len, unsigned ntags, bool gso, uint32_t mss)
{
	auto mtu = netdev_mtu(dev.name);
	if (!mtu)
		return mtu.error();
	const uint32_t limit = max_frame_len(*mtu, ntags);
	if (len <= limit)
		return ok();
	const uint32_t over = len - limit;
	const std::string what = gso ? "--mss " + std::to_string(mss) : "--size " + std::to_string(o.size);
	const uint32_t was = gso ? mss : o.size;
	return usage_error(what + " does not fit " + dev.name + " (MTU " + std::to_string(*mtu) + ", " +
			   std::to_string(ntags) + (ntags == 1 ? " tag" : " tags") + ", frames of at most " +
			   std::to_string(limit) + " bytes): " +
			   (was > over ? "at most " + std::to_string(was - over) : "nothing fits"));
}

SendConfig send_config(const XskOpts &o, std::vector<int> cpus)
{
	SendConfig c;
	c.count = o.count.value_or(UINT64_MAX);
	c.rate = o.rate;
	c.duration = o.duration;
	c.interval = o.interval;
	c.batch = o.batch;
	c.cpus = std::move(cpus);
	return c;
}

// The summary and the verdict of a finished run.
Status report_send(const Globals &g, const Netdev &dev, Engine &e, const SendResult &r,
		   std::optional<PcapWriter> &pcap)
{
	const Totals &t = r.totals;
	if (pcap)
		if (auto st = pcap->close(); !st)
			return st;
	print_summary(g, dev, e, false, t, r.secs, nullptr, pcap ? pcap->frames() : 0, r.interrupted);
	if (t.completed != t.submitted)
		return runtime_error(std::to_string(t.submitted - t.completed) + " frames never completed on " + dev.name +
				     kick_error_cause(dev, e, t));
	if (!accounting_ok(e))
		return runtime_error("UMEM frame accounting inconsistent (bug)");
	if (auto w = tx_dropped_warning(dev.name, t.dev_tx_dropped.value_or(0), t.completed); !w.empty())
		return runtime_error(w);
	return ok();
}

Result<std::optional<PcapWriter>> open_pcap(const XskOpts &o)
{
	std::optional<PcapWriter> pcap;
	if (!o.pcap.empty()) {
		auto w = PcapWriter::open(o.pcap);
		if (!w)
			return w.error();
		pcap.emplace(std::move(*w));
	}
	return pcap;
}

void set_plan(Engine &e, const SendPlan &p)
{
	e.csum = p.csum;
	e.csum_why = p.csum_why;
	e.tx_csum_note = p.tx_csum_note;
}

TxPlanInput plan_input(const Engine &e, const XskOpts &o)
{
	TxPlanInput in;
	in.zero_copy = e.socks.front().zero_copy();
	in.md_registered = e.umem->tx_metadata();
	in.md = e.md;
	in.md_why = e.md_why;
	in.sw_csum = o.sw_csum && !o.gso.empty();
	in.tx_csum = o.tx_csum;
	return in;
}

// --gso: the super-packet segmented into every send.
Status send_gso(const Globals &g, const Netdev &dev, Engine &e, const XskOpts &o, const FrameSpec &spec,
		GsoRequest req, const SendDriver &drv, const features::KernelArg &kernel, const SendHooks &hooks)
{
	// the engine computes (or leaves partial) every checksum itself
	auto super = build_frame(spec);
	if (!super)
		return super.error();
	auto pcap = open_pcap(o);
	if (!pcap)
		return pcap.error();
	// ask the feature model what this queue does; the engine does the rest
	const PacketClass pc = gso_packet_class(req, static_cast<uint32_t>(super->bytes.size()), !o.sw_csum);
	const SendPlan plan = send_plan(drv, plan_input(e, o), pc, kernel);
	set_plan(e, plan);
	print_plan(g, e, plan.plan, to_string(req.type), kernel);
	req.csum = plan.plan.csum_hw ? CsumMode::tx_metadata : CsumMode::software;
	const uint32_t cap = e.socks.front().tx_chunk_capacity();
	const SegmentCheck c = check_segments(super->bytes, req, cap);
	if (c.nseg < 0)
		return usage_error(std::string("--gso ") + o.gso + ": " + to_string(c.why));
	if (o.ring_size < static_cast<uint32_t>(c.nseg))
		return usage_error("--ring-size " + std::to_string(o.ring_size) + " below the " + std::to_string(c.nseg) +
				   " segments of one super-packet");
	// a segment that cannot fit (--mss, Geneve headers) is a usage error, not a failure mid-send
	if (!c.fits)
		return usage_error(std::string("--gso ") + o.gso + ": " + to_string(c.why) + " (UMEM frames hold " +
				   std::to_string(cap) + " bytes)");
	if (!g.json)
		std::fprintf(stderr, "sending %s super-packets of %zu bytes as %d segments (mss %u)%s on %s queues %s "
				     "(%s mode, tx-metadata %s, checksum %s)\n",
			     to_string(req.type), super->bytes.size(), c.nseg, req.mss,
			     req.geneve ? (" in Geneve VNI " + std::to_string(req.geneve->vni) + " port " +
					   std::to_string(req.geneve->dst_port)).c_str()
					: "",
			     dev.name.c_str(), queue_list(e).c_str(), e.mode.c_str(), e.md.c_str(),
			     req.csum == CsumMode::tx_metadata ? "by TX metadata" : "in software, during the copy");
	auto r = send_segmented(e, dev, send_config(o, *worker_cpus(o)), super->bytes, req, *pcap ? &**pcap : nullptr, hooks);
	if (!r)
		return r.error();
	if (!g.json && !g.prometheus)
		std::printf("  gso: %" PRIu64 " super-packets -> %" PRIu64 " segments\n", r->super_packets, r->segments);
	return report_send(g, dev, e, *r, *pcap);
}

// One frame, the same every time: prefilled, then only descriptors move.
Status send_plain(const Globals &g, const Netdev &dev, Engine &e, const XskOpts &o, const FrameSpec &spec,
		  const GsoRequest &req, const SendDriver &drv, const features::KernelArg &kernel,
		  const SendHooks &hooks)
{
	PacketClass pc;
	pc.gso = false;
	pc.csum_partial = o.tx_csum;
	pc.vlans = static_cast<unsigned>(req.geneve ? req.ntags : spec.vids.size());
	const SendPlan plan = send_plan(drv, plan_input(e, o), pc, kernel);
	set_plan(e, plan);
	const bool hw_csum = plan.plan.csum_hw;	// the frame asks the queue for its checksum (TX metadata)
	print_plan(g, e, plan.plan, "none", kernel);
	// Geneve: the engine wraps the inner frame once; every send reuses it
	auto built = make_tx_frame(spec, req, hw_csum);
	if (!built)
		return built.error();
	const uint32_t len = static_cast<uint32_t>(built->bytes.size());
	const uint32_t cap = e.socks.front().tx_chunk_capacity();
	const uint32_t chunks = (len + cap - 1) / cap;	// > 1 only with multi-buffer
	if (chunks > 1 && !e.socks.front().multi_buffer())
		return usage_error("frame of " + std::to_string(len) + " bytes needs multi-buffer");
	if (chunks > o.batch)
		return usage_error("--batch must be at least the " + std::to_string(chunks) + " chunks of one frame");
	auto pcap = open_pcap(o);
	if (!pcap)
		return pcap.error();
	prefill_frames(e, built->bytes);
	if (!g.json)
		std::fprintf(stderr, "sending on %s queues %s (%s mode, tx-metadata %s%s), %u-byte frames%s\n",
			     dev.name.c_str(), queue_list(e).c_str(), e.mode.c_str(), e.md.c_str(),
			     hw_csum ? ", checksum by TX metadata" : "", len,
			     req.geneve ? (" in Geneve VNI " + std::to_string(req.geneve->vni) + " port " +
					   std::to_string(req.geneve->dst_port)).c_str()
					: "");
	auto r = send_frames(e, dev, send_config(o, *worker_cpus(o)), *built, *pcap ? &**pcap : nullptr, hooks);
	if (!r)
		return r.error();
	return report_send(g, dev, e, *r, *pcap);
}

} // namespace

Status run_send(const Globals &g, const XskOpts &o)
{
	// from the start: a Ctrl-C during setup (attach, bind, the carrier
	// wait) ends the run at its first step, through the same cleanup
	install_stop_handler();
	if (auto s = check_common(o, XO_XSK_MAX_QUEUES); !s)
		return s;
	FrameSpec spec;
	std::optional<GeneveEncap> gnv;
	if (auto s = parse_send_frame(o, spec, gnv); !s)
		return s;
	GsoRequest req;
	if (gnv)
		req.geneve = &*gnv;
	if (auto s = parse_send_request(o, spec, req); !s)
		return s;

	auto kernel = features::parse_kernel_arg(o.kernel);
	if (!kernel)
		return kernel.error();
	if (auto s = prepare(g); !s)
		return s;
	auto dev = netdev_lookup(o.ifname);
	if (!dev)
		return dev.error();
	if (o.src_mac.empty() || (gnv && o.outer_src_mac.empty())) {
		auto m = netdev_mac(dev->name);
		if (!m)
			return m.error();
		if (o.src_mac.empty())
			spec.src_mac = *m;
		if (gnv && o.outer_src_mac.empty())
			gnv->src_mac.b = *m;
	}
	uint32_t tx_frame = 0;	// GSO segments always fit a chunk
	if (req.type == GsoType::none) {
		auto f = make_tx_frame(spec, req, false);
		if (!f)
			return f.error();
		tx_frame = static_cast<uint32_t>(f->bytes.size());
	}
	EngineUse use{false, true, false, tx_frame};
	use.tx_md = req.type != GsoType::none ? !o.sw_csum : o.tx_csum;
	// The frame layout follows the request, not the kernel: with TX metadata
	// asked for, every frame starts after its metadata area, so what fits
	// is the same on a kernel that has the metadata and on one that has not.
	const uint32_t md_room = use.tx_md && !o.no_tx_metadata ? sizeof(TxMetadata) : 0;
	if (req.type != GsoType::none) {
		if (!o.mss) {
			auto mtu = netdev_mtu(dev->name);
			if (!mtu)
				return mtu.error();
			req.mss = static_cast<uint16_t>(
				default_mss(req.type, *mtu, req.ntags, req.geneve ? geneve_overhead(*req.geneve) : 0));
		}
		auto longest = check_segments_fit(spec, req, o, o.frame_size - md_room, md_room);
		if (!longest)
			return longest.error();
		if (auto s = check_fits_device(*dev, o, *longest, req.ntags, true, req.mss); !s)
			return s;
	} else if (auto s = check_fits_device(*dev, o, tx_frame,
					      static_cast<unsigned>(req.geneve ? req.ntags : spec.vids.size()), false, 0);
		   !s) {
		return s;
	} else if (tx_frame + md_room > o.frame_size && !probe_xdp_use_sg().ok) {
		return usage_error("--size " + std::to_string(o.size) + ": a frame of " + std::to_string(tx_frame) +
				   " bytes spans several " + std::to_string(o.frame_size) +
				   "-byte UMEM frames, which needs multi-buffer AF_XDP: " + kernel_lacks(kFeatXdpUseSg));
	}
	auto qs = bound_queues(*dev, o, false, XO_XSK_MAX_QUEUES);
	if (!qs)
		return qs.error();
	std::optional<NapiTuning> napi;	// put back however send ends
	if (auto s = busy_poll_tuning(*dev, o, napi); !s)
		return s;
	const EngineConfig ec = engine_config(o);
	auto eng = make_engine(*dev, ec, use, *qs);
	if (!eng)
		return eng.error();
	Engine &e = *eng;
	busy_poll_notes(*dev, e, o);
	const std::function<bool()> stop = [] { return stop_requested(); };
	std::optional<XskProgram> zc_prog;
	const SendDriver drv = send_driver(*dev, *kernel);
	if (auto st = zc_tx_program(*dev, ec, use, e, zc_prog, drv, *qs, stop,
				    [](const std::string &line) { std::fprintf(stderr, "%s\n", line.c_str()); });
	    !st)
		return st;
	// one line where the checksum moved to software against the request
	if (use.tx_md && !e.md_why.empty() && !g.json)
		std::fprintf(stderr, "note: checksums in software: %s\n", e.md_why.c_str());
	SendHooks hooks;
	hooks.stop = stop;
	hooks.interval = [&](const Totals &now, const Totals &prev, double dt) {
		print_interval(g, *dev, e, false, now, prev, dt, nullptr);
	};
	if (req.type != GsoType::none)
		return send_gso(g, *dev, e, o, spec, req, drv, *kernel, hooks);
	return send_plain(g, *dev, e, o, spec, req, drv, *kernel, hooks);
}

} // namespace xoffload::cli
