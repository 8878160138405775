// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// send's command line into a frame and an offload request: the frame
// spec, the Geneve encapsulation, --gso/--mss/--sw-csum and the tags, all
// checked before the system is touched (usage errors name the option).
#include "xsk_cli.hpp"
#include "xoffload/geneve/geneve.hpp"
#include "xoffload/gso/gso.hpp"
#include "xoffload/xsk/traffic.hpp"
#include "xoffload/xsk/plan.hpp"

namespace xoffload::cli {

using namespace xsk;

namespace {

// The --geneve-* and --outer-* options (nullopt without --geneve-vni), all
// checked here; the outer source MAC, when not given, is the interface's and
// set later.
Result<std::optional<GeneveEncap>> parse_geneve_send(const XskOpts &o)
{
	if (o.geneve_vni.empty()) {
		if (o.geneve_port || !o.outer_src_ip.empty() || !o.outer_dst_ip.empty() || !o.outer_src_mac.empty() ||
		    !o.outer_dst_mac.empty() || o.geneve_csum)
			return usage_error("--geneve-port, --geneve-csum and --outer-* need --geneve-vni");
		return std::optional<GeneveEncap>();
	}
	GeneveEncap g;
	auto vni = parse_vni(o.geneve_vni);
	if (!vni)
		return usage_error("--geneve-vni: " + vni.error().msg);
	g.vni = *vni;
	if (o.geneve_port) {
		auto port = parse_geneve_port(*o.geneve_port);
		if (!port)
			return usage_error("--geneve-port: " + port.error().msg);
		g.dst_port = *port;
	}
	if (o.outer_src_ip.empty() || o.outer_dst_ip.empty())
		return usage_error("--geneve-vni needs --outer-src-ip and --outer-dst-ip (the tunnel endpoints)");
	bool v6a = false, v6b = false;
	if (auto s = parse_ip(o.outer_src_ip, g.src_ip, &v6a); !s)
		return s.error();
	if (auto s = parse_ip(o.outer_dst_ip, g.dst_ip, &v6b); !s)
		return s.error();
	if (v6a != v6b)
		return usage_error("--outer-src-ip and --outer-dst-ip must both be IPv4 or both IPv6");
	g.ipv6 = v6a;
	auto dmac = parse_mac(o.outer_dst_mac.empty() ? o.dst_mac : o.outer_dst_mac);
	if (!dmac)
		return dmac.error();
	g.dst_mac.b = *dmac;
	if (!o.outer_src_mac.empty()) {
		auto smac = parse_mac(o.outer_src_mac);
		if (!smac)
			return smac.error();
		g.src_mac.b = *smac;
	}
	g.udp_csum = o.geneve_csum;
	return std::optional<GeneveEncap>(g);
}

} // namespace

// The frame and the offload request of the command line (the source MAC,
// when not given, is set once the device is known).
Status parse_send_frame(const XskOpts &o, FrameSpec &spec, std::optional<GeneveEncap> &gnv)
{
	auto dmac = parse_mac(o.dst_mac);
	if (!dmac)
		return dmac.error();
	spec.dst_mac = *dmac;
	bool v6a = false, v6b = false;
	if (auto s = parse_ip(o.src_ip, spec.src_ip, &v6a); !s)
		return s;
	if (auto s = parse_ip(o.dst_ip, spec.dst_ip, &v6b); !s)
		return s;
	if (v6a != v6b)
		return usage_error("--src-ip and --dst-ip must both be IPv4 or both IPv6");
	spec.ipv6 = v6a;
	if (o.proto != "udp" && o.proto != "tcp")
		return usage_error("--proto " + o.proto + ": udp or tcp");
	spec.tcp = o.proto == "tcp";
	spec.src_port = o.src_port;
	spec.dst_port = o.dst_port;
	spec.size = o.size;
	if (!o.vlan.empty()) {
		auto v = parse_vids(o.vlan);
		if (!v)
			return usage_error("--vlan " + o.vlan + ": " + v.error().msg);
		spec.vids = *v;
	}
	if (o.rate && *o.rate <= 0)
		return usage_error("--rate must be positive");
	if (!o.src_mac.empty()) {
		auto m = parse_mac(o.src_mac);
		if (!m)
			return m.error();
		spec.src_mac = *m;
	}
	auto g = parse_geneve_send(o);
	if (!g)
		return g.error();
	gnv = *g;
	return ok();
}

// --gso, --mss, --sw-csum and the tags into @req (the tags leave @spec: they
// go in while each frame is copied); the frame checked before the system is.
Status parse_send_request(const XskOpts &o, FrameSpec &spec, GsoRequest &req)
{
	if (req.geneve) {
		const uint32_t max = geneve_max_inner(*req.geneve);
		if (o.size > max)
			return usage_error("--size " + std::to_string(o.size) + " too large for Geneve (at most " +
					   std::to_string(max) + ")");
	}
	if (!o.gso.empty()) {
		if (o.gso != "tso" && o.gso != "uso" && o.gso != "ufo")
			return usage_error("--gso must be tso, uso or ufo");
		if ((o.gso == "tso") != spec.tcp)
			return usage_error("--gso " + o.gso + " needs --proto " + (o.gso == "tso" ? "tcp" : "udp"));
		req.type = gso_type_of(o.gso, spec.ipv6);
		// the default fills a 1500-byte MTU, tags and outer headers included
		// (the device's smaller MTU: set once the device is known)
		req.mss = o.mss ? o.mss
				: static_cast<uint16_t>(default_mss(req.type, 1500, static_cast<unsigned>(spec.vids.size()),
								    req.geneve ? geneve_overhead(*req.geneve) : 0));
	} else if (o.mss) {
		return usage_error("--mss needs --gso");
	} else if (o.sw_csum) {
		return usage_error("--sw-csum needs --gso (plain frames: checksums in software unless --tx-csum)");
	}
	if (req.type != GsoType::none || req.geneve) {
		// tags go in while each frame is copied, never into the super-packet
		// (with Geneve: on the outer frame)
		req.ntags = static_cast<uint8_t>(spec.vids.size());
		for (size_t i = 0; i < spec.vids.size(); i++)
			req.tags[i] = GsoVlanTag{static_cast<uint16_t>(spec.vids.size() == 2 && i == 0 ? 0x88a8 : 0x8100),
						 spec.vids[i], 0, false};
		spec.vids.clear();
	}
	if (req.type != GsoType::none) {
		auto super = build_frame(spec);
		if (!super)
			return super.error();
		GsoError why{};
		const std::span<const std::byte> in(super->bytes);
		if (gso_count(std::span<const std::span<const std::byte>>(&in, 1), req, &why) < 0)
			return usage_error("--gso " + o.gso + ": " + to_string(why));
	} else if (auto f = make_tx_frame(spec, req, false); !f) {
		return f.error();
	}
	return ok();
}

} // namespace xoffload::cli
