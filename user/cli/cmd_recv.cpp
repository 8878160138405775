// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// recv: check the options, bind the engine, put its sockets behind xdp_xsk
// (attached for the run) or in xdp_geneve's XSKMAP, run the library's
// receive loop and print what it returns.
#include <algorithm>
#include <cstdio>

#include "xsk_cli.hpp"
#include "xoffload/features/channels.hpp"
#include "xoffload/features/features.hpp"
#include "xoffload/core/kernel.hpp"
#include "xoffload/bpf/loader.hpp"
#include "xoffload/xsk/pcap.hpp"
#include "xoffload/core/pins.hpp"
#include "xoffload/vlan/rx_vlan.hpp"
#include "xoffload/xsk/receiver.hpp"

namespace xoffload::cli {

namespace {

using namespace xsk;

// --pcap-per-socket: rx.pcap -> rx.0.pcap, rx.1.pcap, ...; other names get .N.pcap appended.
std::string pcap_per_socket_name(const std::string &path, size_t i)
{
	const std::string ext = ".pcap";
	const bool has_ext = path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
	return (has_ext ? path.substr(0, path.size() - ext.size()) : path) + "." + std::to_string(i) + ext;
}

// How many sockets recv --geneve makes on each queue: --sockets (or its
// older form, a plain --queues N), else the xsk rule of --vni, else the
// largest xsk rule on the interface.
Result<uint32_t> geneve_sockets(const GeneveMaps &maps, const Netdev &dev, const XskOpts &o)
{
	auto rules = maps.rules();
	if (!rules)
		return rules.error();
	std::optional<uint32_t> vni;
	if (o.vni) {
		auto v = parse_vni(*o.vni);
		if (!v)
			return usage_error("--vni: " + v.error().msg);
		vni = *v;
	}
	std::optional<uint32_t> given = o.sockets;
	if (!given && queues_is_count(o))
		given = static_cast<uint32_t>(std::stoul(*o.queues));
	auto n = geneve_socket_count(*rules, dev.name, vni, given);
	if (!n)
		return n.error();
	if (given && n->rule_queues > n->sockets)
		std::fprintf(stderr, "warning: xdp_geneve steers to %u slots per queue, %u sockets leave the rest "
				     "empty (counted no-target)\n",
			     n->rule_queues, n->sockets);
	return n->sockets;
}

Status check_recv(const XskOpts &o)
{
	if (o.geneve) {
		if (o.filter_port || o.filter_vlan || o.xdp_mode_given)
			return usage_error("--filter-udp-port, --filter-vlan and --xdp-mode are xdp_xsk's; with --geneve "
					   "xdp_geneve's rules decide what arrives");
		if (o.sockets && (*o.sockets < 1 || *o.sockets > XO_GNV_MAX_QUEUES))
			return usage_error("--sockets must be 1.." + std::to_string(XO_GNV_MAX_QUEUES));
		if (o.sockets && queues_is_count(o))
			return usage_error("--sockets and a count of --queues (its older form) are mutually exclusive");
	} else if (o.vni) {
		return usage_error("--vni needs --geneve");
	} else if (o.sockets) {
		return usage_error("--sockets needs --geneve");
	}
	if (auto s = check_common(o, o.geneve ? XO_GNV_MAX_RXQ : XO_XSK_MAX_QUEUES); !s)
		return s;
	if (auto xm = parse_xdp_mode(o.xdp_mode); !xm)
		return xm.error();
	if (o.filter_vlan && *o.filter_vlan > 4094)
		return usage_error("--filter-vlan must be 0..4094");
	if (o.keep_rx_vlan && o.geneve)
		return usage_error("--keep-rx-vlan is for recv's own xdp_xsk; with --geneve, xdp_geneve's attach decides "
				   "(offload-tool attach IFACE geneve --keep-rx-vlan)");
	if (o.multi_buffer != "auto" && o.multi_buffer != "on" && o.multi_buffer != "off")
		return usage_error("--multi-buffer must be auto, on or off");
	if (o.pcap_per_socket && o.pcap.empty())
		return usage_error("--pcap-per-socket needs --pcap");
	if (o.gro && !o.gro->empty()) {
		GroKinds k;
		if (gro_kinds_parse(*o.gro, &k) < 0)
			return usage_error("--gro: '" + *o.gro + "' is not a list of tcp, udp, frag, geneve (or all)");
	}
	return ok();
}

// recv --gro / --verify-csum: the engine's config (GroConfig's defaults:
// the kernel's bounds), or none.
std::optional<GroConfig> gro_config(const XskOpts &o)
{
	if (!o.gro && !o.verify_csum)
		return std::nullopt;
	GroConfig c;
	if (o.gro)
		(void)gro_kinds_parse(o.gro->empty() ? "all" : *o.gro, &c.kinds);
	c.verify_csum = o.verify_csum;
	return c;
}

// recv --geneve: xdp_geneve's maps, the socket count, and the warnings of
// a device where nothing would arrive.
Status open_geneve(const Netdev &dev, const XskOpts &o, std::optional<GeneveSlots> &slots, uint32_t &nsock)
{
	if (auto s = bpffs_check(); !s)
		return s;
	if (auto s = reconcile_pins(dev); !s)
		return s;
	auto maps = GeneveMaps::open(pin_dir(dev), dev.name, false);
	if (!maps)
		return maps.error();
	auto n = geneve_sockets(*maps, dev, o);
	if (!n)
		return n.error();
	nsock = *n;
	slots.emplace(std::move(*maps));
	// a hardware VLAN filter drops tagged frames before any XDP program
	if (auto f = rx_vlan_facts(dev))
		warn_vlan_filter(*f, dev.name);
	auto st = status(dev);
	bool attached = false;
	if (st)
		for (const auto &a : st->ours)
			attached = attached || (a.feature == Feature::geneve && a.hook == Hook::xdp);
	if (!attached)
		std::fprintf(stderr, "warning: xdp_geneve is not attached to %s: nothing reaches the sockets until "
				     "offload-tool attach %s geneve\n",
			     dev.name.c_str(), dev.name.c_str());
	return ok();
}

// Without --geneve: xdp_xsk attached for the run, every socket in its map
// (the library's attach_recv_program), and the note on a hardware VLAN filter.
Status attach_xsk(const Netdev &dev, const XskOpts &o, XdpMode xm, Engine &e, std::optional<XskProgram> &prog)
{
	RxFilter filter;
	filter.udp_dport = o.filter_port;
	filter.vid = o.filter_vlan;
	filter.keep_rx_vlan = o.keep_rx_vlan;
	auto r = attach_recv_program(dev, xm, filter, e, [] { return stop_requested(); });
	if (!r)
		return r.error();
	if (r->vlan_facts)
		warn_vlan_filter(*r->vlan_facts, dev.name);
	prog.emplace(std::move(r->prog));
	return ok();
}

// The "start" line (JSON) or the "receiving on" line, after the note on
// queues no socket is bound to (an AF_XDP socket receives only from its own
// queue: how to steer flows here).
void print_start(const Globals &g, const Netdev &dev, const XskOpts &o, const Engine &e, uint32_t nsock,
		 const XskProgram *prog, XdpMode xm, const std::optional<NapiTuning> &napi)
{
	busy_poll_notes(dev, e, o);
	auto ch = read_channels(dev);
	std::vector<uint32_t> unbound;
	if (ch) {
		const auto bound = queues_of(e);
		for (uint32_t q = 0; q < ch->rx; q++)
			if (!std::binary_search(bound.begin(), bound.end(), q))
				unbound.push_back(q);
		if (!unbound.empty())
			std::fprintf(stderr,
				     "note: %s has %u RX queues (%s), recv has sockets on %zu (queue%s %s): frames arriving "
				     "on queue%s %s reach no socket (%s, passed to the stack); %s\n",
				     dev.name.c_str(), ch->rx, ch->source.c_str(), bound.size(), bound.size() > 1 ? "s" : "",
				     queue_list(e).c_str(), unbound.size() > 1 ? "s" : "", queue_list_text(unbound).c_str(),
				     o.geneve ? "xdp_geneve counts them no-target" : "xdp_xsk counts them no_socket",
				     rx_steering_remedy(live_driver_name(dev.name), dev.name, bound).c_str());
	}
	if (g.json) {
		// tells scripts the sockets are in place
		Json j;
		j.begin_object().kv("type", "start").kv("interface", dev.name).array("queues", queues_of(e))
			.kv("sockets", static_cast<uint64_t>(e.socks.size())).kv("mode", e.mode)
			.kv("multi_buffer", e.sg).kv("kernel", running_kernel().text);
		if (ch)
			j.kv("rx_queues", static_cast<uint64_t>(ch->rx)).kv("rx_queues_source", ch->source)
				.kv("unbound_queues", queue_list_text(unbound));
		if (!e.sg_why.empty())
			j.kv("multi_buffer_why", e.sg_why);
		j.kv("via", o.geneve ? "xdp_geneve" : "xdp_xsk");
		busy_poll_json(j, e, o, napi);
		j.end_object().print();
		std::fflush(stdout);
	} else if (o.geneve) {
		std::fprintf(stderr, "receiving on %s queue%s %s with %zu sockets each in xdp_geneve's XSKMAP slots 0..%zu "
				     "of their queue (%s mode, multi-buffer %s%s)\n",
			     dev.name.c_str(), queues_of(e).size() > 1 ? "s" : "", queue_list(e).c_str(), (size_t)nsock,
			     (size_t)nsock - 1, e.mode.c_str(),
			     e.sg ? "on" : "off", e.sg_why.empty() ? "" : (": " + e.sg_why).c_str());
	} else {
		std::fprintf(stderr, "receiving on %s queues %s (%s mode, multi-buffer %s%s, xdp_xsk prog id %u %s)\n",
			     dev.name.c_str(), queue_list(e).c_str(), e.mode.c_str(), e.sg ? "on" : "off",
			     e.sg_why.empty() ? "" : (": " + e.sg_why).c_str(), prog->prog_id(), to_string(xm));
	}
}

} // namespace

Status run_recv(const Globals &g, const XskOpts &o)
{
	install_stop_handler();	// from the start, as run_send
	if (auto s = check_recv(o); !s)
		return s;
	const XdpMode xm = *parse_xdp_mode(o.xdp_mode);
	if (auto s = prepare(g); !s)
		return s;
	auto dev = netdev_lookup(o.ifname);
	if (!dev)
		return dev.error();
	std::optional<GeneveSlots> slots;
	uint32_t nsock = 0;
	if (o.geneve)
		if (auto s = open_geneve(*dev, o, slots, nsock); !s)
			return s;
	// XDP_USE_SG where frames can outgrow a chunk: asked for needlessly, it
	// would make the kernel fall back to copy mode on a zero-copy driver
	// without multi-buffer support (xp_assign_dev)
	bool sg = o.multi_buffer == "on";
	if (sg && !probe_xdp_use_sg().ok)
		return usage_error("--multi-buffer on: " + kernel_lacks(kFeatXdpUseSg));
	const uint32_t one_chunk = o.frame_size - kXdpPacketHeadroom;
	if (o.multi_buffer == "auto") {
		auto mtu = netdev_mtu(dev->name);
		if (!mtu)
			return mtu.error();
		sg = rx_needs_sg(*mtu, o.frame_size);
	}
	auto qs = bound_queues(*dev, o, true, o.geneve ? XO_GNV_MAX_RXQ : XO_XSK_MAX_QUEUES);
	if (!qs)
		return qs.error();
	// before the sockets: the values found go back however recv ends
	std::optional<NapiTuning> napi;
	if (auto s = busy_poll_tuning(*dev, o, napi); !s)
		return s;
	// Sockets first: a queue in use fails here, before any program is attached.
	auto eng = make_engine(*dev, engine_config(o), EngineUse{true, false, sg, 0, nsock}, *qs);
	if (!eng)
		return eng.error();
	Engine &e = *eng;
	e.geneve = o.geneve;
	// Before 6.6 the kernel's XDP redirect refuses a multi-buffer frame for
	// an XSKMAP outright (the socket never sees it, so no rx_dropped); from
	// 6.6 a socket without XDP_USE_SG drops it and counts it.
	if (!e.sg_why.empty())
		e.sg_why += "; frames over " + std::to_string(one_chunk) + " bytes are dropped " +
			    (probe_xdp_use_sg().ok ? std::string("(rx_dropped)")
						   : std::string("by the kernel's XDP redirect before they reach "
								 "the socket (not in rx_dropped)"));
	std::optional<XskProgram> prog;
	if (o.geneve) {
		for (size_t k = 0; k < e.socks.size(); k++)
			if (auto st = slots->add(e.socks[k].queue(), e.slot_of[k], e.socks[k].fd()); !st)
				return st;
	} else if (auto st = attach_xsk(*dev, o, xm, e, prog); !st) {
		return st;
	}
	std::optional<PcapWriter> pcap;		// every frame, or
	std::vector<PcapWriter> pcaps;		// one file per socket
	// a super-packet is up to 65535 bytes from its L3 header: tcpdump's own
	// default snaplen keeps it whole
	const std::optional<GroConfig> gro = gro_config(o);
	const uint32_t snaplen = gro ? 262144 : 65535;
	if (!o.pcap.empty() && !o.pcap_per_socket) {
		auto w = PcapWriter::open(o.pcap, snaplen);
		if (!w)
			return w.error();
		pcap.emplace(std::move(*w));
	}
	if (o.pcap_per_socket) {
		for (size_t i = 0; i < e.socks.size(); i++) {
			auto w = PcapWriter::open(pcap_per_socket_name(o.pcap, i), snaplen);
			if (!w)
				return w.error();
			pcaps.push_back(std::move(*w));
		}
	}
	GeneveCounters gnv0;
	if (slots)
		if (auto c = slots->maps().counters())
			gnv0 = *c;
	for (auto &s : e.socks)
		s.refill();
	// what the device loses before XDP shows only in its own counters
	const auto dev_st0 = netdev_stats(*dev);
	print_start(g, *dev, o, e, nsock, prog ? &*prog : nullptr, xm, napi);

	install_stop_handler();
	auto watch = LinkWatch::open(*dev);
	if (!watch)
		return watch.error();
	RecvConfig rc;
	rc.count = o.count.value_or(UINT64_MAX);
	rc.duration = o.duration;
	rc.idle = o.idle;
	rc.interval = o.interval;
	rc.batch = o.batch;
	rc.cpus = *worker_cpus(o);
	rc.gro = gro;
	RecvHooks hooks;
	hooks.stop = [] { return stop_requested(); };
	hooks.interval = [&](const Totals &now, const Totals &prev, double dt) {
		std::optional<XskProgCounters> xc;
		if (prog)
			if (auto c = prog->counters())
				xc = *c;
		print_interval(g, *dev, e, true, now, prev, dt, xc ? &*xc : nullptr);
	};
	auto rr = receive(e, *watch, rc, RecvSinks{pcap ? &*pcap : nullptr, pcaps}, hooks);
	if (!rr)
		return rr.error();
	const RecvResult &r = *rr;
	std::optional<XskProgCounters> xc;
	std::optional<GeneveCounterSet> gnv;
	if (prog) {
		if (auto c = prog->counters())
			xc = *c;
		if (auto s = prog->detach(); !s && !r.dev_gone)
			return s;
	}
	if (slots) {
		if (auto c = slots->maps().counters()) {
			gnv.emplace();
			for (unsigned i = 0; i < kGeneveStats; i++) {
				(*gnv)[i].packets = c->total[i].packets - gnv0.total[i].packets;
				(*gnv)[i].bytes = c->total[i].bytes - gnv0.total[i].bytes;
			}
		}
		if (auto s = slots->clear(); !s && !r.dev_gone)
			return s;
	}
	Totals t = sum(e, true);
	if (dev_st0)
		if (auto st = netdev_stats(*dev))
			t.dev_rx = dev_rx_drops(*dev_st0, *st);
	uint64_t pcap_frames = 0;
	if (pcap) {
		if (auto s = pcap->close(); !s)
			return s;
		pcap_frames = pcap->frames();
	}
	for (auto &w : pcaps) {
		if (auto s = w.close(); !s)
			return s;
		pcap_frames += w.frames();
	}
	print_summary(g, *dev, e, true, t, r.secs, xc ? &*xc : nullptr, pcap_frames, r.interrupted, gnv ? &*gnv : nullptr,
		      gro ? &r.gro : nullptr);
	if (t.dev_rx)
		if (auto n = rx_lost_note(dev->name, *t.dev_rx, e.mode == "zero-copy"); !n.empty())
			std::fprintf(stderr, "%s\n", n.c_str());
	if (r.dev_gone)
		return runtime_error("recv stopped: " + *r.dev_gone);
	if (napi)
		if (auto s = napi->restore(); !s)
			return s;
	if (!accounting_ok(e))
		return runtime_error("UMEM frame accounting inconsistent (bug)");
	return ok();
}

} // namespace xoffload::cli
