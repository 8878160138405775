// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// libFuzzer harness of the value parsers behind every CLI option (VIDs, PCP,
// TPIDs, directions, Geneve ports/VNIs/actions/option classes, numbers,
// MACs, IP addresses, VID lists, --queues lists). Invariants: no out-of-bounds access or UB
// (ASan/UBSan); an accepted value is in its documented range and, printed
// in decimal, parses back to itself; a refusal is a usage error (exit 2)
// with a one-line message.
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "xoffload/features/channels.hpp"
#include "xoffload/geneve/geneve.hpp"
#include "xoffload/core/parse.hpp"
#include "xoffload/xsk/traffic.hpp"
#include "xoffload/vlan/vlan.hpp"

using namespace xoffload;

namespace {

[[noreturn]] void fail(const char *what, std::string_view in)
{
	std::fprintf(stderr, "value_fuzz: %s for input '%.*s'\n", what, static_cast<int>(in.size()), in.data());
	std::abort();
}

template <class R> void refusal_ok(const R &r, std::string_view in)
{
	if (r)
		return;
	const std::string &m = r.error().msg;
	if (m.empty() || m.find('\n') != std::string::npos)
		fail("refusal without a one-line message", in);
	if (r.error().kind != ErrorKind::usage)
		fail("bad input refused as a runtime failure (exit 1, not 2)", in);
}

// @parse accepts only [lo, hi] and reads back its own decimal form.
template <class F> void check_range(F parse, long long lo, long long hi, std::string_view in, const char *what)
{
	auto r = parse(in);
	refusal_ok(r, in);
	if (!r)
		return;
	long long v = static_cast<long long>(*r);
	if (v < lo || v > hi)
		fail(what, in);
	std::string back = std::to_string(v);
	auto again = parse(back);
	if (!again || static_cast<long long>(*again) != v)
		fail("decimal form does not parse back", in);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	// the first byte picks the parser, the rest is the text
	const std::string text(reinterpret_cast<const char *>(data) + 1, size - 1);
	const std::string_view in(text);

	switch (data[0] % 13) {
	case 0: {
		auto r = parse_number(in, "number");
		refusal_ok(r, in);
		if (r) {
			auto again = parse_number(std::to_string(*r), "number");
			if (!again || *again != *r)
				fail("number does not parse back", in);
		}
		break;
	}
	case 1:
		check_range(parse_vid, XO_VID_MIN, XO_VID_MAX, in, "VID out of 1..4094");
		break;
	case 2:
		check_range(parse_pcp, 0, 7, in, "PCP out of 0..7");
		break;
	case 3: {
		auto r = parse_tpid(in);
		refusal_ok(r, in);
		if (r && *r != XO_ETH_P_8021Q && *r != XO_ETH_P_8021AD)
			fail("TPID neither 802.1Q nor 802.1ad", in);
		break;
	}
	case 4: {
		auto r = parse_dir(in);
		refusal_ok(r, in);
		if (r) {
			auto again = parse_dir(dir_name(*r));
			if (!again || *again != *r)
				fail("direction does not parse back from its name", in);
		}
		break;
	}
	case 5:
		check_range(parse_geneve_port, 1, 65535, in, "port out of 1..65535");
		break;
	case 6:
		check_range(parse_vni, 0, XO_GNV_VNI_MAX, in, "VNI out of 24 bits");
		break;
	case 7: {
		auto r = parse_geneve_action(in);
		refusal_ok(r, in);
		if (r) {
			auto again = parse_geneve_action(geneve_action_name(*r));
			if (*r >= XO_GNV_ACT_MAX || !again || *again != *r)
				fail("action does not parse back from its name", in);
		}
		break;
	}
	case 8:
		check_range(parse_option_class, 0, 0xffff, in, "option class out of 16 bits");
		break;
	case 9: {
		auto r = parse_mac(in);
		refusal_ok(r, in);
		if (r) {
			char buf[18];
			const auto &m = *r;
			std::snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
			auto again = parse_mac(buf);
			if (!again || *again != m)
				fail("MAC does not parse back", in);
		}
		break;
	}
	case 12: {
		// --queues: sorted, distinct, each below the limit; a list's text
		// (with , or -) reads back to itself
		auto r = parse_queue_list(in, 8, 64);
		refusal_ok(r, in);
		if (r) {
			for (size_t i = 0; i < r->size(); i++)
				if ((*r)[i] >= 64 || (i && (*r)[i] <= (*r)[i - 1]))
					fail("queue list unsorted, repeated or out of range", in);
			std::string t = queue_list_text(*r);
			if (t.find_first_of(",-") != std::string::npos) {
				auto again = parse_queue_list(t, 8, 64);
				if (!again || *again != *r)
					fail("queue list text does not parse back", in);
			}
		}
		break;
	}
	case 10: {
		std::array<uint8_t, 16> ip{};
		bool v6 = false;
		auto s = parse_ip(in, ip, &v6);
		refusal_ok(s, in);
		break;
	}
	default: {
		auto r = parse_vids(in);
		refusal_ok(r, in);
		if (r)
			for (uint16_t v : *r)
				if (v < XO_VID_MIN || v > XO_VID_MAX)
					fail("VID list holds a VID out of 1..4094", in);
		break;
	}
	}
	return 0;
}
