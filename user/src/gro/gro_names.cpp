// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Names of the GRO engine's verdicts, causes and reasons (CLI, JSON), the
// kinds parser, and the arithmetic of its counters.
#include <cerrno>

#include "xoffload/gro/gro.hpp"

namespace xoffload {

const char *to_string(GroVerdict v) noexcept
{
	switch (v) {
	case GroVerdict::held: return "held";
	case GroVerdict::merged: return "merged";
	case GroVerdict::passed: return "passed";
	case GroVerdict::malformed: return "malformed";
	case GroVerdict::bad_ipv4_csum: return "bad_ipv4_csum";
	case GroVerdict::bad_l4_csum: return "bad_l4_csum";
	case GroVerdict::bad_outer_udp_csum: return "bad_outer_udp_csum";
	case GroVerdict::bad_inner_ipv4_csum: return "bad_inner_ipv4_csum";
	case GroVerdict::bad_inner_l4_csum: return "bad_inner_l4_csum";
	case GroVerdict::frag_held: return "frag_held";
	case GroVerdict::frag_reassembled: return "frag_reassembled";
	case GroVerdict::frag_dropped: return "frag_dropped";
	}
	return "?";
}

const char *to_string(GroFlush f) noexcept
{
	switch (f) {
	case GroFlush::passed: return "passed";
	case GroFlush::batch_end: return "batch_end";
	case GroFlush::timeout: return "timeout";
	case GroFlush::table_full: return "table_full";
	case GroFlush::flags: return "flags";
	case GroFlush::short_seg: return "short_seg";
	case GroFlush::size: return "size";
	case GroFlush::segs: return "segs";
	case GroFlush::mismatch: return "mismatch";
	case GroFlush::reassembled: return "reassembled";
	case GroFlush::count_: break;
	}
	return "?";
}

const char *to_string(GroCsum c) noexcept
{
	switch (c) {
	case GroCsum::none: return "none";
	case GroCsum::unnecessary: return "unnecessary";
	case GroCsum::partial: return "partial";
	case GroCsum::bad: return "bad";
	}
	return "?";
}

const char *to_string(GroFragDrop d) noexcept
{
	switch (d) {
	case GroFragDrop::overlap: return "overlap";
	case GroFragDrop::too_big: return "too_big";
	case GroFragDrop::bad: return "bad";
	case GroFragDrop::mem: return "mem";
	case GroFragDrop::queues: return "queues";
	case GroFragDrop::timeout: return "timeout";
	case GroFragDrop::dup: return "dup";
	case GroFragDrop::too_many: return "too_many";
	case GroFragDrop::count_: break;
	}
	return "?";
}

const char *to_string(GroPass p) noexcept
{
	switch (p) {
	case GroPass::kind_off: return "kind_off";
	case GroPass::flags: return "flags";
	case GroPass::no_payload: return "no_payload";
	case GroPass::ip_options: return "ip_options";
	case GroPass::udp_no_csum: return "udp_no_csum";
	case GroPass::ipv6_ext: return "ipv6_ext";
	case GroPass::geneve_hdr: return "geneve_hdr";
	case GroPass::too_big: return "too_big";
	case GroPass::padded: return "padded";
	case GroPass::count_: break;
	}
	return "?";
}

const char *to_string(GroCsumError e) noexcept
{
	switch (e) {
	case GroCsumError::ipv4_hdr: return "ipv4_hdr";
	case GroCsumError::l4: return "l4";
	case GroCsumError::outer_udp: return "outer_udp";
	case GroCsumError::inner_ipv4_hdr: return "inner_ipv4_hdr";
	case GroCsumError::inner_l4: return "inner_l4";
	case GroCsumError::count_: break;
	}
	return "?";
}

int gro_kinds_parse(std::string_view s, GroKinds *out) noexcept
{
	GroKinds k;
	if (s.empty() || s == "none") {
		*out = k;
		return 0;
	}
	while (!s.empty()) {
		size_t comma = s.find(',');
		std::string_view w = s.substr(0, comma);
		if (w == "tcp")
			k.tcp = true;
		else if (w == "udp")
			k.udp = true;
		else if (w == "frag")
			k.frag = true;
		else if (w == "geneve")
			k.geneve = true;
		else if (w == "all")
			k.tcp = k.udp = k.frag = k.geneve = true;
		else
			return -EINVAL;
		if (comma == std::string_view::npos)
			break;
		s.remove_prefix(comma + 1);
		if (s.empty())
			return -EINVAL;	// a trailing comma
	}
	*out = k;
	return 0;
}

uint64_t GroStats::bad_csum_total() const noexcept
{
	uint64_t n = 0;
	for (uint64_t v : bad_csum)
		n += v;
	return n;
}

uint64_t GroStats::frag_drop_total() const noexcept
{
	uint64_t n = 0;
	for (uint64_t v : frag_drop)
		n += v;
	return n;
}

double GroStats::merge_ratio() const noexcept
{
	return packets_out ? static_cast<double>(frames_in) / static_cast<double>(packets_out) : 1.0;
}

GroStats &GroStats::operator+=(const GroStats &o) noexcept
{
	frames_in += o.frames_in;
	bytes_in += o.bytes_in;
	packets_out += o.packets_out;
	bytes_out += o.bytes_out;
	super_packets += o.super_packets;
	held += o.held;
	merged += o.merged;
	passed += o.passed;
	malformed += o.malformed;
	for (size_t i = 0; i < pass_by.size(); i++)
		pass_by[i] += o.pass_by[i];
	for (size_t i = 0; i < flush_by.size(); i++)
		flush_by[i] += o.flush_by[i];
	for (size_t i = 0; i < bad_csum.size(); i++)
		bad_csum[i] += o.bad_csum[i];
	frags_in += o.frags_in;
	reassembled += o.reassembled;
	for (size_t i = 0; i < frag_drop.size(); i++)
		frag_drop[i] += o.frag_drop[i];
	frag_mem += o.frag_mem;
	frag_mem_peak += o.frag_mem_peak;
	return *this;
}

} // namespace xoffload
