// features: which offloads survive a device stack for one packet class, where
// segmentation and checksum happen, and the kernel rule behind each loss.
#include <cstdio>

#include "commands.hpp"
#include "xoffload/features.hpp"
#include "xoffload/kernel.hpp"
#include "xoffload/netdev.hpp"

namespace xoffload::cli {

namespace {

struct FeatOpts {
	std::string ifname, stack, packet = "tcp4", encap, kernel = "running";
	bool gso = false, explain = false, patched = false, meta = false, no_csum = false;
	bool running = false;	// --kernel running (the default): the model of uname's release
	unsigned vlans = 0, payload = 4000, mss = 1000;
};

const char *where_name(Where w)
{
	return w == Where::software ? "software" : w == Where::hardware ? "hardware" : "none";
}

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
		std::printf("\n[%zu] %s%s%s%s%s\n", i, d.name().c_str(), d.spec.ifname.empty() ? "" : " (",
			    d.spec.ifname.empty() ? "" : dev_kind_name(d.spec.kind), d.spec.ifname.empty() ? "" : ")",
			    d.spec.kind == DevKind::vlan ? (d.spec.vlan_proto == 0x88a8 ? " 802.1ad" : " 802.1Q") : "");
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
	j.begin_object("segmentation").kv("where", where_name(r.seg))
		.kv("device", r.seg_layer >= 0 ? r.layers[r.seg_layer].device : std::string()).end_object();
	j.begin_object("checksum").kv("where", where_name(r.csum))
		.kv("device", r.csum_layer >= 0 ? r.layers[r.csum_layer].device : std::string()).end_object();
	j.kv("bottom_skbs", r.bottom_skbs).kv("bottom_gso", r.bottom_gso).kv("summary", r.summary());
	j.begin_array("layers");
	for (size_t i = 0; i < st.size(); i++) {
		const DeviceModel &d = st[i];
		const LayerResult &l = r.layers[i];
		j.begin_object().kv("device", d.name()).kv("kind", dev_kind_name(d.spec.kind))
			.kv("features_check", features_check_name(d.check)).kv("features", mask_names(d.features))
			.kv("vlan_features", mask_names(d.vlan_features)).kv("hw_enc_features", mask_names(d.hw_enc_features))
			.kv("effective", mask_names(l.effective)).kv("tags", l.tags).kv("encapsulated", l.encapsulated)
			.kv("skbs_in", l.skbs_in).kv("gso_in", l.gso_in).kv("skbs_out", l.skbs_out)
			.kv("sw_segmented", l.sw_segmented).kv("sw_csum", l.sw_csum).kv("vlan_sw_insert", l.vlan_sw_insert);
		j.begin_array("trace");
		for (const auto &t : l.trace)
			j.begin_object().kv("rule", t.rule).kv("source", t.cite).kv("removed", mask_names(t.removed)).end_object();
		j.end_array().end_object();
	}
	j.end_array().end_object().print();
}

int run(const Globals &g, FeatOpts o)
{
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
	c->add_option("interface", o->ifname, "Top interface of a stack on this system (rtnetlink + ethtool)");
	c->add_option("--stack", o->stack, "Described stack, top first: \"vlan:802.1Q/vlan:802.1ad/bridge/vxlan/veth\"; "
					   "layer options kind:opt,...: 802.1Q 802.1ad peer-xdp offload udpcsum phv "
					   "+FEATURE -FEATURE");
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
	c->callback([&g, &rc, o] { rc = run(g, *o); });
}

} // namespace xoffload::cli
