// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// send's TX plan: segment checks, the frames of the plain loop, and the
// feature model's answer for a packet class on a bound engine.
#include <algorithm>

#include "xoffload/xsk/plan.hpp"

namespace xoffload::xsk {

GsoType gso_type_of(const std::string &name, bool ipv6)
{
	if (name == "tso")
		return ipv6 ? GsoType::tso6 : GsoType::tso4;
	if (name == "uso")
		return ipv6 ? GsoType::uso6 : GsoType::uso4;
	if (name == "ufo")
		return ipv6 ? GsoType::ufo6 : GsoType::ufo4;
	return GsoType::none;
}

PacketClass gso_packet_class(const GsoRequest &req, uint32_t payload, bool csum_partial)
{
	PacketClass pc;
	pc.l4 = req.type == GsoType::tso4 ? L4::tcp4 : req.type == GsoType::tso6 ? L4::tcp6
	      : req.type == GsoType::uso4 ? L4::udp4 : req.type == GsoType::uso6 ? L4::udp6 : L4::ufo4;
	pc.vlans = req.ntags;
	pc.encap = req.geneve ? Encap::geneve : Encap::none;
	pc.payload = payload;
	pc.gso_size = req.mss;
	pc.csum_partial = csum_partial;
	return pc;
}

SegmentCheck check_segments(std::span<const std::byte> super, const GsoRequest &req, uint32_t cap)
{
	SegmentCheck c;
	const std::span<const std::span<const std::byte>> input(&super, 1);
	c.nseg = gso_count(input, req, &c.why);
	if (c.nseg < 0)
		return c;
	std::vector<std::byte> scratch(static_cast<size_t>(c.nseg) * cap);
	std::vector<GsoFrame> frames(static_cast<size_t>(c.nseg));
	for (int i = 0; i < c.nseg; i++)
		frames[i] = GsoFrame{scratch.data() + static_cast<size_t>(i) * cap, cap};
	if (gso_segment(input, req, frames, &c.why) != c.nseg)
		return c;
	c.fits = true;
	for (const auto &f : frames)
		c.longest = std::max(c.longest, f.len);
	return c;
}

Result<TxFrame> make_tx_frame(FrameSpec spec, const GsoRequest &req, bool partial)
{
	TxFrame f;
	if (!req.geneve) {
		spec.csum_partial = partial;
		auto b = build_frame(spec);
		if (!b)
			return b.error();
		f.bytes = std::move(b->bytes);
		f.csum_start = b->csum_start;
		f.csum_offset = b->csum_offset;
		f.partial = partial;
		return f;
	}
	auto inner = build_frame(spec);
	if (!inner)
		return inner.error();
	GsoRequest r = req;
	r.csum = partial ? CsumMode::tx_metadata : CsumMode::software;
	f.bytes.resize(inner->bytes.size() + geneve_overhead(*req.geneve) + 4 * req.ntags);
	GsoFrame out{f.bytes.data(), static_cast<uint32_t>(f.bytes.size())};
	GsoError why{};
	if (gso_segment(inner->bytes, r, std::span<GsoFrame>(&out, 1), &why) != 1)
		return usage_error(std::string("--geneve-vni: ") + to_string(why));
	f.bytes.resize(out.len);
	f.csum_start = out.csum_start;
	f.csum_offset = out.csum_offset;
	f.partial = out.csum_partial;
	return f;
}

SendDriver send_driver(const Netdev &dev, const features::KernelArg &k)
{
	SendDriver d{features::live_driver(dev.name), {}};
	const DevKind kind = d.name ? dev_kind_from_name(*d.name).value_or(DevKind::unknown) : DevKind::unknown;
	d.facts = features::nic_facts(kind, k.major, k.minor);
	return d;
}

SendPlan send_plan(const SendDriver &sd, const TxPlanInput &in, const PacketClass &pc, const features::KernelArg &k)
{
	const bool zc = in.zero_copy;
	const Result<std::string> &drv = sd.name;
	const features::TxCsumDecision d = features::tx_csum_decision(sd.facts, zc, in.md_registered);
	TxQueueFacts q;
	q.zero_copy = zc;
	q.tx_md_csum = d.by_metadata;
	q.tx_md_why = !in.md_registered && in.md == "off"
			      ? "TX metadata not registered (--sw-csum, --no-tx-metadata or no --tx-csum)"
		      : !in.md_registered && !in.md_why.empty() ? in.md_why
								 : d.why;
	q.source = (drv && !drv->empty() ? *drv : std::string("driver unknown")) + ", " + (zc ? "zero-copy" : "copy") +
		   " mode, Linux " + std::to_string(k.major) + "." + std::to_string(k.minor) + ": " + d.source;
	SendPlan s;
	s.plan = tx_plan(q, pc);
	if (in.sw_csum)
		s.plan.reasons.push_back("--sw-csum: every checksum folded into the copy in software");
	s.csum = s.plan.csum_hw ? "tx-metadata" : "software";
	s.csum_why = s.plan.csum_hw	 ? ""
		     : in.sw_csum	 ? "--sw-csum"
		     : !pc.csum_partial ? "not asked of the queue (--tx-csum asks)"
					 : q.tx_md_why;
	// --tx-csum asked for the queue and the model says no (a refused
	// registration already had its note from make_engine)
	s.tx_csum_note = in.tx_csum && pc.csum_partial && !s.plan.csum_hw && in.md_registered ? q.tx_md_why : "";
	return s;
}

} // namespace xoffload::xsk
