// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// libFuzzer harness of the userspace frame parsers on raw bytes: the
// super-packet header parser of the segmentation engine (Ethernet, up to two
// 802.1Q/802.1ad tags, IPv4 with options, IPv6 with extension headers,
// TCP/UDP; user/src/gso/gso_parse.cpp) over the input split into spans, and
// the reference models of xdp_vlan and xdp_geneve (tests/bpf/ref_model.hpp)
// that the differential test trusts. Invariants: no out-of-bounds access or
// UB (ASan/UBSan); the parse does not depend on how the input is split; a
// parsed packet's offsets add up to the input; a model's output differs from
// its input by whole tags (VLAN) or is a suffix of it (Geneve decap).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <vector>

#include "../../user/src/gso/gso_internal.hpp"
#include "packet_builder.hpp"
#include "ref_model.hpp"

using namespace xoffload;
using namespace xoffload::gso_detail;
using namespace xoffload::test;

namespace {

[[noreturn]] void fail(const char *what)
{
	std::fprintf(stderr, "frame_fuzz: %s\n", what);
	std::abort();
}

void parse_check(std::span<const std::byte> bytes, FuzzedDataProvider &fdp)
{
	const std::span<const std::byte> whole[1] = {bytes};
	Parsed a;
	GsoError ea = parse(Input(whole), a);

	// the same bytes in up to four spans
	std::vector<std::span<const std::byte>> parts;
	size_t off = 0;
	for (int i = 0; i < 3 && off < bytes.size(); i++) {
		size_t n = fdp.ConsumeIntegralInRange<size_t>(0, bytes.size() - off);
		parts.push_back(bytes.subspan(off, n));
		off += n;
	}
	parts.push_back(bytes.subspan(off));
	Parsed b;
	GsoError eb = parse(Input(parts), b);
	if (ea != eb)
		fail("parse depends on the span split");
	if (ea != GsoError::ok)
		return;
	if (a.l2_len != 14 + 4 * a.l2_tags || a.l2_tags > 2 || a.l3_off != a.l2_len)
		fail("l2 offsets");
	if (a.l4_off != a.l3_off + a.l3_len || a.payload_off != a.l4_off + a.l4_len ||
	    a.payload_off + a.payload_len != bytes.size() || a.hdr_len > kMaxHdr)
		fail("offsets do not add up to the input");
	if (a.l4_proto != kProtoTcp && a.l4_proto != kProtoUdp)
		fail("l4 protocol");
	if (flow_hash(a) != flow_hash(b))
		fail("flow hash depends on the span split");
}

void models_check(std::span<const uint8_t> f, FuzzedDataProvider &fdp)
{
	model::VlanPolicy p;
	p.action = static_cast<model::VlanPolicy::Action>(fdp.ConsumeIntegralInRange(0, 2));
	p.pop_depth = fdp.ConsumeIntegralInRange(1, 2);
	for (int i = fdp.ConsumeIntegralInRange(0, 2); i > 0; i--)
		p.tags.push_back({fdp.ConsumeBool() ? uint16_t{0x8100} : uint16_t{0x88a8},
				  fdp.ConsumeIntegralInRange<uint16_t>(1, 4094), 0, false});
	p.allow_on = fdp.ConsumeBool();
	p.allowed.insert(fdp.ConsumeIntegralInRange<uint16_t>(0, 4095));
	p.rewrite[fdp.ConsumeIntegralInRange<uint16_t>(0, 4095)] = fdp.ConsumeIntegralInRange<uint16_t>(1, 4094);
	if (f.size() >= 14) {
		model::Outcome o = model::vlan_model(p, f, fdp.ConsumeBool());
		if (o.counted.empty())
			fail("vlan model counted nothing");
		long d = static_cast<long>(o.out.size()) - static_cast<long>(f.size());
		if (d % 4 || d < -8 || d > 8)
			fail("vlan model changed the frame by other than whole tags");
	}

	model::GeneveConfig c;
	c.ports = {6081, fdp.ConsumeIntegral<uint16_t>()};
	c.rules[fdp.ConsumeIntegralInRange<uint32_t>(0, 0xffffff)] = {fdp.ConsumeIntegralInRange<uint32_t>(0, 4), 2};
	c.dflt.action = fdp.ConsumeIntegralInRange<uint32_t>(0, 4);
	c.known = {fdp.ConsumeIntegral<uint16_t>()};
	c.csum = fdp.ConsumeBool();
	model::GeneveSemantics sem{fdp.ConsumeBool(), fdp.ConsumeBool() ? 16u : 63u};
	model::Outcome o = model::geneve_model(c, sem, f);
	if (o.counted.empty())
		fail("geneve model counted nothing");
	if (o.verdict != model::Outcome::drop && o.out.size() > f.size())
		fail("geneve model grew a frame");
	if (o.verdict != model::Outcome::drop && o.counted.back() != "decapped" &&
	    !std::equal(o.out.begin(), o.out.end(), f.begin(), f.end()))
		fail("geneve model changed a frame it did not decap");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	// the last 16 bytes (when there) steer splits and configs, the rest is the frame
	size_t ctl = size > 64 ? 16 : 0;
	FuzzedDataProvider fdp(data + size - ctl, ctl);
	std::span<const uint8_t> frame(data, size - ctl);
	parse_check(std::as_bytes(frame), fdp);
	models_check(frame, fdp);
	return 0;
}
