// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// features: which offloads survive a device stack for one packet class, where
// segmentation and checksum happen, and the kernel rule behind each loss;
// --rx: the driver's RX and AF_XDP facts (VLAN strip and filter, zero-copy,
// TX metadata, XDP limits, ntuple) with their kernel sources.
#include <cstdio>
#include <cstring>

#include "commands.hpp"
#include "xoffload/features/features.hpp"
#include "xoffload/core/kernel.hpp"
#include "xoffload/core/netdev.hpp"

namespace xoffload::cli {

namespace {

struct FeatOpts {
	std::string ifname, stack, packet = "tcp4", encap, kernel = "running";
	std::string driver;	// --rx without an interface: the facts of this driver
	bool gso = false, explain = false, patched = false, meta = false, no_csum = false;
	bool rx = false;
	bool running = false;	// --kernel running (the default): the model of uname's release
	unsigned vlans = 0, payload = 4000, mss = 1000;
};

// The lines of ethtool -k that matter on TX, for one mask.
void print_ethtool_like(FeatureMask m, const char *indent)
{
	for (NetdevFeature f : all_features()) {
		if (f == NetdevFeature::rxcsum || f == NetdevFeature::vlan_challenged)
			continue;
		std::printf("%s%s: %s\n", indent, feature_name(f), (m & fbit(f)) ? "on" : "off");
	}
}

// The bits that matter for this packet class: SG, checksum, VLAN insert and
// the GSO types it needs (the rest of ethtool -k is shown by --explain).
FeatureMask relevant(const PacketClass &p)
{
	FeatureMask m = fbit(NetdevFeature::sg) | fbit(NetdevFeature::fraglist) | fmask::csum | fmask::vlan_tx |
			fbit(NetdevFeature::gso_udp_tunnel) | fbit(NetdevFeature::gso_udp_tunnel_csum) | fbit(NetdevFeature::gso_partial);
	switch (p.l4) {
	case L4::tcp4: m |= fbit(NetdevFeature::tso); break;
	case L4::tcp6: m |= fbit(NetdevFeature::tso6); break;
	case L4::udp4:
	case L4::udp6: m |= fbit(NetdevFeature::gso_udp_l4); break;
	case L4::ufo4: m |= fbit(NetdevFeature::gso_udp); break;
	}
	return m;
}

void print_text(const FeatOpts &o, const std::vector<DeviceModel> &st, const PacketClass &p, const Resolution &r)
{
	FeatureMask rel = relevant(p);
	std::printf("packet: %s, %u bytes payload, gso_size %u\n", p.describe().c_str(), p.payload, p.gso_size);
	std::printf("model: Linux %s%s%s\n", o.kernel.c_str(), o.patched ? " + kpatches/" : "",
		    o.running ? (" (the running kernel, " + running_kernel().text + ")").c_str() : "");
	std::printf("result: %s\n", r.summary().c_str());
	for (size_t i = 0; i < st.size(); i++) {
		const DeviceModel &d = st[i];
		const LayerResult &l = r.layers[i];
		std::string qual;	// what the kind alone does not say
		if (d.spec.kind == DevKind::vlan)
			qual = d.spec.vlan_proto == 0x88a8 ? " 802.1ad" : " 802.1Q";
		else if (d.spec.kind == DevKind::ipvlan)
			qual = std::string(" mode ") + ipvlan_mode_name(d.spec.ipvlan_mode);
		std::printf("\n[%zu] %s%s%s%s%s\n", i, d.name().c_str(), d.spec.ifname.empty() ? "" : " (",
			    d.spec.ifname.empty() ? "" : dev_kind_name(d.spec.kind), d.spec.ifname.empty() ? "" : ")",
			    qual.c_str());
		if (!l.reached) {
			std::printf("    not reached: the skbs were dropped above\n");
			continue;
		}
		std::printf("    in: %u skb%s%s, %u tag%s%s\n", l.skbs_in, l.skbs_in == 1 ? "" : "s",
			    l.gso_in ? " (GSO)" : "", l.tags, l.tags == 1 ? "" : "s", l.encapsulated ? ", encapsulated" : "");
		std::printf("    ndo_features_check: %s\n", features_check_name(d.check));
		if (o.explain) {
			std::printf("    dev->features (%s):\n", d.source.c_str());
			print_ethtool_like(d.features, "      ");
			std::printf("    vlan_features: %s\n", mask_names(d.vlan_features).c_str());
			std::printf("    hw_enc_features: %s\n", mask_names(d.hw_enc_features).c_str());
		}
		for (const auto &t : l.trace) {
			std::printf("    - %s", t.rule.c_str());
			// rx-checksum and tx-generic-segmentation (NETIF_F_GSO) play no part on TX
			FeatureMask shown = t.removed & ~(fbit(NetdevFeature::rxcsum) | fbit(NetdevFeature::gso));
			if (shown)
				std::printf(" [removed: %s]", mask_names(shown).c_str());
			std::printf("\n        (%s)\n", t.cite.c_str());
		}
		std::printf("    effective (for this packet): %s\n", mask_names(l.effective & rel).c_str());
		if (l.dropped)
			std::printf("    out: none, %u skb%s dropped here\n", l.skbs_out, l.skbs_out == 1 ? "" : "s");
		else
			std::printf("    out: %u skb%s%s%s%s\n", l.skbs_out, l.skbs_out == 1 ? "" : "s",
				    l.sw_segmented ? ", segmented here in software" : "",
				    l.sw_csum ? ", checksummed here in software" : "",
				    l.vlan_sw_insert ? ", VLAN tag pushed in software" : "");
	}
}

void print_json(const FeatOpts &o, const std::vector<DeviceModel> &st, const PacketClass &p, const Resolution &r)
{
	Json j;
	j.begin_object().kv("kernel", o.kernel).kv("running", running_kernel().text).kv("patched", o.patched)
		.kv("packet", p.describe());
	j.begin_object("segmentation").kv("where", r.placement(true))
		.kv("device", r.seg_layer >= 0 ? r.layers[r.seg_layer].device : std::string()).end_object();
	j.begin_object("checksum").kv("where", r.placement(false))
		.kv("device", r.csum_layer >= 0 ? r.layers[r.csum_layer].device : std::string()).end_object();
	j.kv("bottom_skbs", r.bottom_skbs).kv("bottom_gso", r.bottom_gso);
	j.begin_object("drop").kv("dropped", r.drop_layer >= 0)
		.kv("device", r.drop_layer >= 0 ? r.layers[r.drop_layer].device : std::string())
		.kv("skbs", r.dropped_skbs).kv("why", r.drop_why).end_object();
	j.kv("summary", r.summary());
	j.begin_array("layers");
	for (size_t i = 0; i < st.size(); i++) {
		const DeviceModel &d = st[i];
		const LayerResult &l = r.layers[i];
		j.begin_object().kv("device", d.name()).kv("kind", dev_kind_name(d.spec.kind))
			.kv("features_check", features_check_name(d.check)).kv("features", mask_names(d.features))
			.kv("vlan_features", mask_names(d.vlan_features)).kv("hw_enc_features", mask_names(d.hw_enc_features))
			.kv("effective", mask_names(l.effective)).kv("tags", l.tags).kv("encapsulated", l.encapsulated)
			.kv("skbs_in", l.skbs_in).kv("gso_in", l.gso_in).kv("skbs_out", l.skbs_out)
			.kv("sw_segmented", l.sw_segmented).kv("sw_csum", l.sw_csum).kv("vlan_sw_insert", l.vlan_sw_insert)
			.kv("reached", l.reached).kv("dropped", l.dropped);
		if (d.spec.kind == DevKind::ipvlan)
			j.kv("ipvlan_mode", ipvlan_mode_name(d.spec.ipvlan_mode));
		j.begin_array("trace");
		for (const auto &t : l.trace)
			j.begin_object().kv("rule", t.rule).kv("source", t.cite).kv("removed", mask_names(t.removed)).end_object();
		j.end_array().end_object();
	}
	j.end_array().end_object().print();
}

std::string yes_no(bool b)
{
	return b ? "yes" : "no";
}

std::string tunnel_names(unsigned t)
{
	if (!t)
		return "none";
	std::string s;
	if (t & features::kTunnelVxlan)
		s = "vxlan";
	if (t & features::kTunnelGeneve)
		s += s.empty() ? "geneve" : ", geneve";
	return s;
}

std::string errno_text(int e)
{
	const char *n = e ? strerrorname_np(e) : nullptr;
	return n ? n : std::to_string(e);
}

// One line per fact: what, the value in words, and with -v the source.
struct RxLine {
	const char *key;	// JSON key
	const char *label;	// text label
	std::string text;	// value in words
	std::string source;
	std::string json_value;	// raw value for JSON ("true", "3046", a name)
	bool is_bool = false, is_num = false;
	bool b = false;
	unsigned n = 0;
};

std::vector<RxLine> rx_lines(const features::NicFacts &f)
{
	using features::Fact;
	std::vector<RxLine> v;
	auto bl = [&](const char *key, const char *label, const Fact<bool> &x, std::string extra = {}) {
		RxLine l{key, label, yes_no(x.value) + extra, x.source};
		l.is_bool = true;
		l.b = x.value;
		v.push_back(l);
	};
	// a fact this driver's model does not hold (empty source) says so
	auto bm = [&](const char *key, const char *label, const Fact<bool> &x, std::string extra = {}) {
		bl(key, label, x, std::move(extra));
		if (x.source.empty())
			v.back().text = "not modelled";
	};
	bl("native_xdp", "native XDP", f.native_xdp);
	bl("vlan_strip_ctag", "802.1Q tag stripped before XDP", f.strip_ctag,
	   f.strip_ctag.value ? " (rx-vlan-offload on by default)" : "");
	bl("vlan_strip_stag", "802.1ad tag stripped before XDP", f.strip_stag,
	   f.strip_stag.value ? " (rx-vlan-stag-hw-parse on by default)" : "");
	bl("vlan_strip_changeable", "stripping can be turned off", f.strip_changeable);
	bm("vlan_strip_by_feature", "rx-vlan-hw-parse on means stripped", f.strip_by_feature,
	   f.strip_by_feature.value ? "" : " (shown, but nothing strips)");
	{
		RxLine l{"vlan_filter", "VLAN filter", features::vlan_filter_name(f.vlan_filter.value),
			 f.vlan_filter.source, features::vlan_filter_name(f.vlan_filter.value)};
		if (f.vlan_filter_fixed.value)
			l.text += " [fixed]";
		if (!f.vlan_filter_remedy.empty())
			l.text += "; to pass every VID: " + f.vlan_filter_remedy;
		v.push_back(l);
	}
	bl("vlan_filter_fixed", "VLAN filter fixed on", f.vlan_filter_fixed);
	bm("vlan_filter_rx_all", "rx-all opens the VLAN filter", f.vlan_filter_rx_all);
	bl("rx_vlan_tag_kfunc", "bpf_xdp_metadata_rx_vlan_tag", f.rx_vlan_tag_kfunc,
	   f.rx_vlan_tag_kfunc.value ? " (device-bound programs only)" : "");
	{
		RxLine l{"udp_tunnel_table", "UDP tunnel port table", tunnel_names(f.udp_tunnel_table.value),
			 f.udp_tunnel_table.source, tunnel_names(f.udp_tunnel_table.value)};
		v.push_back(l);
	}
	bl("zero_copy", "AF_XDP zero-copy", f.zero_copy);
	bl("zero_copy_tx", "zero-copy TX transmits", f.zc_tx);
	bl("zero_copy_tx_needs_xdp", "zero-copy TX needs an XDP program", f.zc_tx_needs_xdp,
	   f.zc_tx_needs_xdp.value ? " (the kick fails with " + errno_text(f.zc_tx_no_xdp_errno) + " without one)"
				   : "");
	bl("tx_md_csum_zero_copy", "TX metadata checksum, zero-copy", f.tx_md_csum_zc);
	bl("tx_md_csum_copy", "TX metadata checksum, copy mode", f.tx_md_csum_copy);
	bl("xdp_multi_buffer", "XDP multi-buffer (xdp.frags)", f.xdp_multi_buffer);
	{
		const unsigned m = f.xdp_max_mtu.value;
		RxLine l{"xdp_max_mtu", "XDP max MTU",
			 m ? std::to_string(m) + " for a single-buffer program" +
				     (f.xdp_max_mtu_frags ? ", none for a frags-aware one" : "") + " (above: " +
				     errno_text(f.xdp_mtu_errno) + ")"
			   : (f.xdp_max_mtu.source.empty() ? "unknown" : "no fixed limit"),
			 f.xdp_max_mtu.source};
		l.is_num = true;
		l.n = m;
		v.push_back(l);
	}
	{
		RxLine l{"ntuple", "ntuple (ethtool -N)", features::ntuple_name(f.ntuple.value), f.ntuple.source,
			 features::ntuple_name(f.ntuple.value)};
		if (f.ntuple.source.empty())
			l.text = "not modelled";
		v.push_back(l);
	}
	bm("rxq_from_peer", "RX queue is the peer's TX queue", f.rxq_from_peer);
	bm("set_channels", "queue count settable (ethtool -L)", f.set_channels);
	{
		RxLine l{"rss_table", "RSS indirection table", features::rss_table_name(f.rss_table.value),
			 f.rss_table.source, features::rss_table_name(f.rss_table.value)};
		if (f.rss_table.source.empty())
			l.text = "not modelled";
		v.push_back(l);
	}
	bm("xdp_lost_on_close", "XDP program lost at link down", f.xdp_lost_on_close);
	bm("rx_csum_mark", "outer UDP checksum marked verified", f.rx_csum_mark,
	   features::decap_cpumap_default(f) ? " (Geneve decap goes through the CPUMAP by default)"
					     : " (Geneve decap passes by default)");
	return v;
}

int run_rx(const Globals &g, const FeatOpts &o)
{
	if (o.ifname.empty() == o.driver.empty())
		return report(usage_error("--rx: give either an interface or --driver"));
	if (!o.stack.empty() || o.gso || o.vlans || o.meta || !o.encap.empty() || o.no_csum || o.explain ||
	    o.patched || o.packet != "tcp4")
		return report(usage_error("--rx takes an interface or --driver, and --kernel; not the TX options"));
	auto k = features::parse_kernel_arg(o.kernel);
	if (!k)
		return report(k.error());
	std::string drv = o.driver;
	if (!o.ifname.empty()) {
		if (auto s = prepare(g); !s)
			return report(s.error());
		if (auto d = netdev_lookup(o.ifname); !d)
			return report(d.error());
		auto d = features::live_driver(o.ifname);
		if (!d)
			return report(d.error());
		drv = d->empty() ? "(none)" : *d;
	}
	const auto kind = dev_kind_from_name(drv);
	if (!kind && !o.driver.empty())
		return report(usage_error("--driver " + drv + ": not a modelled driver (igb i40e ice igc mlx4_en "
							  "mlx5_core stmmac virtio_net veth vmxnet3)"));
	const features::NicFacts f = features::nic_facts(kind.value_or(DevKind::unknown), k->major, k->minor);
	const std::string kernel = std::to_string(k->major) + "." + std::to_string(k->minor);
	const auto lines = rx_lines(f);
	if (g.json) {
		Json j;
		j.begin_object();
		if (!o.ifname.empty())
			j.kv("interface", o.ifname);
		j.kv("driver", drv).kv("modelled", f.modelled).kv("kernel", kernel).kv("running", k->running);
		if (k->running)
			j.kv("release", k->name);
		j.begin_object("facts");
		for (const auto &l : lines) {
			j.begin_object(l.key);
			if (l.is_bool)
				j.kv("value", l.b);
			else if (l.is_num)
				j.kv("value", l.n);
			else
				j.kv("value", l.json_value);
			j.kv("text", l.text).kv("source", l.source);
			if (std::strcmp(l.key, "vlan_filter") == 0)
				j.kv("remedy", f.vlan_filter_remedy);
			if (std::strcmp(l.key, "zero_copy_tx_needs_xdp") == 0 && f.zc_tx_needs_xdp.value)
				j.kv("errno", errno_text(f.zc_tx_no_xdp_errno));
			if (std::strcmp(l.key, "xdp_max_mtu") == 0 && l.n)
				j.kv("frags_lift", f.xdp_max_mtu_frags).kv("errno", errno_text(f.xdp_mtu_errno));
			j.end_object();
		}
		j.end_object().end_object().print();
		return 0;
	}
	std::printf("%s%s%s: RX and AF_XDP facts of Linux %s%s\n", o.ifname.c_str(), o.ifname.empty() ? "" : " (",
		    (drv + (o.ifname.empty() ? "" : ")")).c_str(), kernel.c_str(),
		    k->running ? (" (the running kernel, " + k->name + ")").c_str() : "");
	if (!f.modelled)
		std::printf("driver %s is not modelled: every value below is the conservative default\n", drv.c_str());
	for (const auto &l : lines) {
		std::printf("  %-36s %s\n", (std::string(l.label) + ":").c_str(), l.text.c_str());
		if (g.verbose && !l.source.empty())
			std::printf("  %-36s (%s)\n", "", l.source.c_str());
	}
	return 0;
}

int run(const Globals &g, FeatOpts o)
{
	if (o.rx)
		return run_rx(g, o);
	if (!o.driver.empty())
		return report(usage_error("--driver needs --rx"));
	if (o.ifname.empty() == o.stack.empty())
		return report(usage_error("give either an interface or --stack"));
	auto k = parse_kernel_version(o.kernel);
	if (!k)
		return report(k.error());
	o.running = o.kernel == "running";
	o.kernel = kernel_version_name(*k);
	auto l4 = parse_l4(o.packet);
	if (!l4)
		return report(l4.error());
	if (o.vlans > 2)
		return report(usage_error("--vlans: 0, 1 or 2"));
	if (!o.mss || o.payload > 65000)
		return report(usage_error("--mss must be > 0 and --payload <= 65000"));
	PacketClass p;
	p.l4 = *l4;
	p.gso = o.gso;
	p.vlans = o.vlans;
	p.outer_tag_in_meta = o.meta;
	p.csum_partial = !o.no_csum;
	p.payload = o.payload;
	p.gso_size = o.mss;
	if (o.encap == "vxlan")
		p.encap = Encap::vxlan;
	else if (o.encap == "geneve")
		p.encap = Encap::geneve;
	else if (!o.encap.empty())
		return report(usage_error("--encap: vxlan or geneve"));

	std::vector<LayerSpec> specs;
	if (!o.stack.empty()) {
		auto s = parse_stack(o.stack);
		if (!s)
			return report(s.error());
		specs = std::move(*s);
	} else {
		if (auto s = prepare(g); !s)
			return report(s.error());
		if (auto d = netdev_lookup(o.ifname); !d)
			return report(d.error());
		auto s = read_live_stack(o.ifname);
		if (!s)
			return report(s.error());
		specs = std::move(*s);
	}
	auto st = build_stack(specs, *k, o.patched);
	auto r = resolve(st, p, *k);
	if (g.json)
		print_json(o, st, p, r);
	else
		print_text(o, st, p, r);
	return 0;
}

} // namespace

void add_features_command(CLI::App &app, Globals &g, int &rc)
{
	auto o = std::make_shared<FeatOpts>();
	auto *c = app.add_subcommand("features", "Which offloads survive a device stack, where segmentation and "
						 "checksum happen, and why");
	c->add_option("interface", o->ifname, "Top interface of a stack on this system (rtnetlink + ethtool); "
					       "with --rx the interface whose driver's facts to print");
	c->add_option("--stack", o->stack, "Described stack, top first: \"vlan:802.1Q/vlan:802.1ad/bridge/vxlan/veth\"; "
					   "layer options kind:opt,...: 802.1Q 802.1ad peer-xdp offload udpcsum phv "
					   "l2|l3|l3s (ipvlan's mode; l3 as the kernel's default) +FEATURE -FEATURE");
	c->add_option("--packet", o->packet, "tcp4 (default) | tcp6 | udp | udp6 | ufo");
	c->add_flag("--gso", o->gso, "A GSO super-packet (else one packet)");
	c->add_option("--vlans", o->vlans, "VLAN tags on the frame as sent: 0, 1, 2")->check(whole_number(0, 2));
	c->add_flag("--vlan-meta", o->meta, "The outer tag is in skb metadata (tc vlan push), not in the packet");
	c->add_option("--encap", o->encap, "Already encapsulated by the sender: vxlan | geneve");
	c->add_flag("--no-csum", o->no_csum, "Checksum already complete (CHECKSUM_NONE), not partial");
	c->add_option("--payload", o->payload, "L4 payload bytes (default 4000)")->check(whole_number(0, 65000));
	c->add_option("--mss", o->mss, "gso_size (default 1000)")->check(whole_number(1, 65535));
	c->add_option("--kernel", o->kernel,
		      "Model of Linux 6.1 | 6.12 | 7.2 (newest) | running (default: the newest model not newer "
		      "than uname's release)");
	c->add_flag("--patched", o->patched, "With the kpatches/ series applied");
	c->add_flag("--explain", o->explain, "Show every layer's features, vlan_features, hw_enc_features");
	c->add_flag("--rx", o->rx, "The driver's RX and AF_XDP facts (VLAN strip/filter, zero-copy, TX metadata, "
				   "XDP limits, ntuple) for --kernel; -v adds each fact's kernel source");
	c->add_option("--driver", o->driver, "With --rx and no interface: the facts of this driver (igb, i40e, "
					     "ice, mlx4_en, mlx5_core, virtio_net, veth, vmxnet3, ...)");
	c->callback([&g, &rc, o] { rc = run(g, *o); });
}

} // namespace xoffload::cli
