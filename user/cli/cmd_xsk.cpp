// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// send / recv: their options on the CLI11 app, and what both commands share
// (the run itself: cmd_send.cpp, cmd_recv.cpp; printing: xsk_output.cpp).
#include "xsk_cli.hpp"
#include "xoffload/features/channels.hpp"
#include "xoffload/xsk/workers.hpp"
#include "output.hpp"

namespace xoffload::cli {

bool queues_is_count(const XskOpts &o)
{
	return o.queues && o.queues->find_first_not_of("0123456789") == std::string::npos;
}

xsk::EngineConfig engine_config(const XskOpts &o)
{
	xsk::EngineConfig c;
	c.xsk_mode = o.xsk_mode;
	c.ring_size = o.ring_size;
	c.frames = o.frames;
	c.frame_size = o.frame_size;
	c.need_wakeup = !o.no_need_wakeup;
	c.busy_poll = !o.busy_poll.empty();
	c.busy_poll_budget = c.busy_poll ? busy_poll_budget(o) : c.busy_poll_budget;
	c.multi_buffer = o.multi_buffer;
	c.no_tx_metadata = o.no_tx_metadata;
	return c;
}

Result<std::vector<uint32_t>> bound_queues(const Netdev &dev, const XskOpts &o, bool rx, unsigned limit)
{
	const bool count_of_sockets = o.geneve && queues_is_count(o);
	return xsk::bound_queues(dev, o.queue, count_of_sockets ? std::nullopt : o.queues, rx, limit);
}

// recv --geneve: a plain number in --queues counts sockets on the one --queue.
Status check_common(const XskOpts &o, unsigned queue_limit)
{
	const bool count_of_sockets = o.geneve && queues_is_count(o);
	if (o.queue && o.queues && !count_of_sockets)
		return usage_error("--queue and --queues are mutually exclusive");
	if (o.queues && *o.queues != "all")
		if (auto q = parse_queue_list(*o.queues, 0, count_of_sockets ? XO_GNV_MAX_QUEUES : queue_limit); !q)
			return q.error();
	if (o.ring_size < 64 || o.ring_size > 65536 || (o.ring_size & (o.ring_size - 1)))
		return usage_error("--ring-size must be a power of two in 64..65536");
	if (o.batch < 1 || o.batch > 1024)
		return usage_error("--batch must be 1..1024");
	if (o.duration && *o.duration <= 0)
		return usage_error("--duration must be positive");
	if (o.interval < 0)
		return usage_error("--interval must be >= 0");
	if (auto c = worker_cpus(o); !c)
		return c.error();
	if (!o.busy_poll.empty() && !busy_poll_budget(o))
		return usage_error("--busy-poll " + o.busy_poll + ": the budget is a number 1..65535 (the interface "
				   "goes first: recv eth1 --busy-poll, or --busy-poll=64)");
	if ((o.napi_defer_hard_irqs || o.gro_flush_timeout) && o.busy_poll.empty())
		return usage_error("--napi-defer-hard-irqs and --gro-flush-timeout go with --busy-poll");
	if (o.napi_defer_hard_irqs && *o.napi_defer_hard_irqs > INT32_MAX)
		return usage_error("--napi-defer-hard-irqs must be 0..2147483647");
	return ok();
}

uint32_t busy_poll_budget(const XskOpts &o)
{
	const std::string &t = o.busy_poll;
	if (t.empty() || t.size() > 5 || t.find_first_not_of("0123456789") != std::string::npos)
		return 0;
	const unsigned long v = std::stoul(t);
	return v >= 1 && v <= 65535 ? static_cast<uint32_t>(v) : 0;
}

Status busy_poll_tuning(const Netdev &dev, const XskOpts &o, std::optional<xsk::NapiTuning> &t)
{
	if (o.busy_poll.empty())
		return ok();
	auto r = xsk::NapiTuning::apply(dev, o.napi_defer_hard_irqs, o.gro_flush_timeout);
	if (!r)
		return r.error();
	t.emplace(std::move(*r));
	auto now = t->changed() ? Result<xsk::NapiDefer>(t->during()) : xsk::napi_defer_read(dev);
	if (now && (!now->defer_hard_irqs || !now->gro_flush_timeout_ns))
		std::fprintf(stderr,
			     "note: busy polling %s with napi_defer_hard_irqs %llu and gro_flush_timeout %llu: its interrupts "
			     "still run the NAPI beside the busy polls (the kernel's af_xdp.rst: 2 and 200000; "
			     "--napi-defer-hard-irqs 2 --gro-flush-timeout 200000 sets them for this run and puts them back)\n",
			     dev.name.c_str(), static_cast<unsigned long long>(now->defer_hard_irqs),
			     static_cast<unsigned long long>(now->gro_flush_timeout_ns));
	return ok();
}

void busy_poll_notes(const Netdev &dev, const xsk::Engine &e, const XskOpts &o)
{
	if (o.busy_poll.empty())
		return;
	for (const auto &s : e.socks)
		if (!s.napi_id()) {
			std::fprintf(stderr,
				     "note: busy polling on %s queue %u: its socket knows no NAPI instance at bind (napi id "
				     "0), so recvfrom()/sendto() poll nothing unless the kernel names one when the first frame "
				     "arrives (older kernels do; the summary's busy_poll_napi_ids say); veth names none at bind, "
				     "a copy-mode sender's socket gets none\n",
				     dev.name.c_str(), s.queue());
			break;
		}
}

void busy_poll_json(Json &j, const xsk::Engine &e, const XskOpts &o, const std::optional<xsk::NapiTuning> &t)
{
	if (o.busy_poll.empty())
		return;
	std::vector<uint32_t> ids;
	for (const auto &s : e.socks)
		ids.push_back(s.napi_id());
	j.begin_object("busy_poll").kv("budget", static_cast<uint64_t>(busy_poll_budget(o)))
		.kv("usecs", static_cast<uint64_t>(20)).array("napi_ids", ids);
	if (t && t->changed())
		j.kv("napi_defer_hard_irqs", t->during().defer_hard_irqs)
			.kv("gro_flush_timeout", t->during().gro_flush_timeout_ns)
			.kv("restores_napi_defer_hard_irqs", t->before().defer_hard_irqs)
			.kv("restores_gro_flush_timeout", t->before().gro_flush_timeout_ns);
	j.end_object();
}

Result<std::vector<int>> worker_cpus(const XskOpts &o)
{
	if (!o.cpus)
		return std::vector<int>{};
	return xsk::parse_cpus(*o.cpus);
}

namespace {

CLI::Option *add_common(CLI::App *c, XskOpts &o)
{
	add_format(c, o.format);
	c->add_option("interface", o.ifname, "Interface")->required();
	c->add_option("--queue", o.queue, "Queue to use (default 0)")->check(whole_number(0, UINT32_MAX));
	c->add_option("--queues", o.queues,
		      "Queues to use, one socket each, one shared UMEM: N (0..N-1), a list (0-3, 1,3) or all");
	c->add_option("--count", o.count, "Stop after N frames")->check(whole_number(1));
	c->add_option("--duration", o.duration, "Stop after S seconds")->check(positive_number());
	auto *interval = c->add_option("--interval", o.interval, "Stats line every S seconds (0: none)")
				 ->check(positive_number(true))
				 ->capture_default_str();
	c->add_option("--pcap", o.pcap, "Write the frames to this pcap file");
	c->add_option("--xsk-mode", o.xsk_mode, "AF_XDP bind mode: auto, zero-copy or copy")->capture_default_str();
	c->add_option("--ring-size", o.ring_size, "Size of every ring (power of two)")
		->check(whole_number(64, 65536))->capture_default_str();
	c->add_option("--frames", o.frames, "UMEM frames per queue (default 2 x ring size)")
		->check(whole_number(1, UINT32_MAX));
	c->add_option("--frame-size", o.frame_size, "UMEM chunk size: 2048 or 4096")
		->check(CLI::IsMember({"2048", "4096"}))->capture_default_str();
	c->add_option("--batch", o.batch, "Descriptors per ring operation")->check(whole_number(1, 1024))
		->capture_default_str();
	c->add_flag("--no-need-wakeup", o.no_need_wakeup, "Do not bind with XDP_USE_NEED_WAKEUP");
	c->add_option("--busy-poll", o.busy_poll,
		      "Busy polling: SO_PREFER_BUSY_POLL, SO_BUSY_POLL 20 us and SO_BUSY_POLL_BUDGET BUDGET (default "
		      "64) on every socket; the loop drives the NAPI by recvfrom()/sendto() and never sleeps")
		->expected(0, 1)->default_str("64")->type_name("[BUDGET]");
	c->add_option("--napi-defer-hard-irqs", o.napi_defer_hard_irqs,
		      "With --busy-poll: write N to /sys/class/net/IF/napi_defer_hard_irqs for the run (put back after)")
		->check(whole_number(0, INT32_MAX))->type_name("N");
	c->add_option("--gro-flush-timeout", o.gro_flush_timeout,
		      "With --busy-poll: write NS to /sys/class/net/IF/gro_flush_timeout for the run (put back after)")
		->check(whole_number(0, UINT32_MAX))->type_name("NS");
	c->add_option("--cpus", o.cpus,
		      "Worker threads, one per CPU given and pinned to it (1, 0,1, 0-3, all); default: one per queue");
	return interval;
}

// --format: prometheus prints the summary only, so no interval lines unless
// --interval asks for them, which it refuses
Status take_format(Globals &g, XskOpts &o)
{
	if (auto st = apply_format(g, o.format, o.interval_given && o.interval > 0); !st)
		return st;
	if (g.prometheus)
		o.interval = 0;
	return ok();
}

} // namespace

void add_xsk_commands(CLI::App &app, Globals &g, int &rc)
{
	auto so = std::make_shared<XskOpts>();
	auto *s = app.add_subcommand("send", "Generate frames through AF_XDP (pktgen-like)");
	auto *s_interval = add_common(s, *so);
	s->add_option("--dst-mac", so->dst_mac, "Destination MAC")->required();
	s->add_option("--src-mac", so->src_mac, "Source MAC (default: the interface's)");
	s->add_option("--src-ip", so->src_ip, "Source IPv4/IPv6 address")->required();
	s->add_option("--dst-ip", so->dst_ip, "Destination IPv4/IPv6 address")->required();
	s->add_option("--proto", so->proto, "udp or tcp")->capture_default_str();
	s->add_option("--src-port", so->src_port, "L4 source port")->check(whole_number(0, 65535))
		->capture_default_str();
	s->add_option("--dst-port", so->dst_port, "L4 destination port")->check(whole_number(0, 65535))
		->capture_default_str();
	s->add_option("--size", so->size, "Frame size in bytes (no FCS, tags included)")
		->check(whole_number(1, UINT32_MAX))->capture_default_str();
	s->add_option("--rate", so->rate, "Frames per second (default: as fast as possible)")
		->check(positive_number());
	s->add_option("--vlan", so->vlan, "VID or OUTER,INNER (802.1ad + 802.1Q)");
	s->add_option("--gso", so->gso, "tso | uso | ufo: --size is a super-packet, segmented into each send");
	s->add_option("--mss", so->mss,
		      "Segment payload (UFO: fragment data) bytes; default fills a 1500-byte MTU (the device's when "
		      "smaller) with the tags and tunnel headers")
		->check(whole_number(1, 65535));
	s->add_flag("--sw-csum", so->sw_csum,
		    "With --gso: compute every checksum in software even where the queue takes TX metadata");
	s->add_flag("--tx-csum", so->tx_csum,
		    "Ask the queue for the L4 checksum (AF_XDP TX metadata) where the driver honours it in the bound mode; "
		    "software elsewhere, with a note");
	s->add_option("--kernel", so->kernel,
		      "Driver facts of Linux 6.1 | 6.12 | 7.2 (newest) | running (default) for the checksum decision");
	s->add_flag("--no-tx-metadata", so->no_tx_metadata,
		    "Register the UMEM without TX metadata (default: registered for --gso and --tx-csum only)");
	s->add_option("--geneve-vni", so->geneve_vni,
		      "Send every frame (or segment) inside Geneve with this VNI (0..16777215); --size is the inner frame");
	s->add_option("--geneve-port", so->geneve_port, "Outer UDP destination port (default 6081)");
	s->add_option("--outer-src-ip", so->outer_src_ip, "Outer (tunnel) source IPv4/IPv6 address");
	s->add_option("--outer-dst-ip", so->outer_dst_ip, "Outer (tunnel) destination IPv4/IPv6 address");
	s->add_option("--outer-src-mac", so->outer_src_mac, "Outer source MAC (default: the interface's)");
	s->add_option("--outer-dst-mac", so->outer_dst_mac, "Outer destination MAC (default: --dst-mac)");
	s->add_flag("--geneve-csum", so->geneve_csum, "Compute the outer UDP checksum (default: zero)");
	s->callback([&g, &rc, so, s_interval] {
		so->interval_given = s_interval->count() > 0;
		if (auto st = take_format(g, *so); !st) {
			rc = report(st.error());
			return;
		}
		if (auto st = run_send(g, *so); !st)
			rc = report(st.error());
	});

	auto ro = std::make_shared<XskOpts>();
	auto *r = app.add_subcommand("recv", "Receive frames through AF_XDP (attaches xdp_xsk while running, "
					     "or shares xdp_geneve's XSKMAP with --geneve)");
	auto *r_interval = add_common(r, *ro);
	auto *xdp_mode = r->add_option("--xdp-mode", ro->xdp_mode, "XDP attach mode: native or skb (alias generic)")->capture_default_str();
	r->add_flag("--geneve", ro->geneve,
		    "Do not attach xdp_xsk: put N sockets on each queue (--queue, default 0, or --queues LIST|all), "
		    "sharing that queue's fill ring, in slots 0..N-1 of the queue's row of xdp_geneve's XSKMAP (N: "
		    "--sockets, else the rule's --queues; a plain --queues N is the older form of --sockets)");
	r->add_option("--sockets", ro->sockets, "With --geneve: sockets per queue (1..64)")
		->check(whole_number(1, XO_GNV_MAX_QUEUES));
	r->add_option("--vni", ro->vni, "With --geneve: N from this VNI's xsk rule");
	r->add_flag("--pcap-per-socket", ro->pcap_per_socket, "With --pcap FILE.pcap: FILE.<socket>.pcap for each socket");
	r->add_option("--filter-udp-port", ro->filter_port, "Only redirect UDP to this destination port")
		->check(whole_number(1, 65535));
	r->add_option("--filter-vlan", ro->filter_vlan, "Only redirect this outer VID (0: untagged)")
		->check(whole_number(0, 4094));
	r->add_flag("--keep-rx-vlan", ro->keep_rx_vlan,
		    "Leave the device's RX VLAN stripping on (frames reach the sockets without the tags it strips, "
		    "and they escape --filter-vlan)");
	r->add_option("--idle", ro->idle, "Stop S seconds after the last frame")->check(positive_number());
	r->add_option("--multi-buffer", ro->multi_buffer,
		      "XDP_USE_SG (frames over several chunks): auto (when the MTU needs it), on or off")
		->capture_default_str();
	r->add_option("--gro", ro->gro,
		      "Receive offload in software: merge TCP/UDP segments into super-packets by the kernel's GRO rules "
		      "and reassemble IP fragments, checksums verified in the copy; KINDS: tcp,udp,frag,geneve (default "
		      "all of them); --pcap then writes the merged packets")
		->expected(0, 1)
		->type_name("[KINDS]");
	r->add_flag("--verify-csum", ro->verify_csum,
		    "Verify the IPv4 header and TCP/UDP checksums (outer and inner under Geneve) of every frame, "
		    "merged or not, and count the bad ones by reason");
	r->callback([&g, &rc, ro, xdp_mode, r_interval] {
		ro->xdp_mode_given = xdp_mode->count() > 0;
		ro->interval_given = r_interval->count() > 0;
		if (auto st = take_format(g, *ro); !st) {
			rc = report(st.error());
			return;
		}
		if (auto st = run_recv(g, *ro); !st)
			rc = report(st.error());
	});
}

} // namespace xoffload::cli
