// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Reference model of xdp_vlan/tc_vlan and xdp_geneve, written from the
// README's sections "vlan" and "geneve" (now docs/guide-vlan.md and
// docs/guide-geneve.md), not from bpf/: what the differential test
// (test_diff_model.cpp) expects of every frame, in those guides' counter names.
//
// Where the guides are silent the model makes a choice and says so in a
// comment starting "README:" (the tag predates the move to docs/); each is
// an ambiguity of docs/guide-vlan.md or docs/guide-geneve.md.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "packet_builder.hpp"
#include "xoffload/abi.h"

namespace xoffload::test::model {

inline uint16_t rd16(std::span<const uint8_t> b, size_t off)
{
	return static_cast<uint16_t>(b[off] << 8 | b[off + 1]);
}

inline bool is_tpid(uint16_t t)
{
	return t == 0x8100 || t == 0x88a8;	// README: 802.1Q and 802.1ad only (no 0x9100)
}

// What a frame became: verdict, bytes (for pass/redirect) and the README
// counters it moved by one (each with the frame's length in bytes).
struct Outcome {
	enum Verdict { pass, drop, redirect } verdict = pass;
	Bytes out;
	std::vector<std::string> counted;
	// Geneve only: the rule whose per-VNI row counts the frame too.
	std::optional<uint32_t> vni_row;
	// Geneve only: the frame is of a class whose semantics harden-datapath
	// changes (a protocol other than TEB/IPv4/IPv6, more than
	// XO_GNV_MAX_OPTS options).
	bool changed_semantics = false;
};

inline const char *verdict_name(Outcome::Verdict v)
{
	return v == Outcome::pass ? "pass" : v == Outcome::drop ? "drop" : "redirect";
}

// ---- VLAN ------------------------------------------------------------------

struct VTag {
	uint16_t tpid = 0x8100;
	uint16_t vid = 0;
	uint8_t pcp = 0;
	bool dei = false;
};

// One direction's policy in the words of `offload-tool vlan`.
struct VlanPolicy {
	enum Action { none, pop, push } action = none;
	unsigned pop_depth = 1;			// 1 or 2
	std::vector<VTag> tags;			// push: 1 or 2 tags, tags[0] outermost
	bool allow_on = false;			// `vlan allow` given (even an empty list)
	std::set<uint16_t> allowed;
	std::map<uint16_t, uint16_t> rewrite;	// --from -> --to

	std::string describe() const
	{
		std::string s = action == none ? "none" : action == pop ? "pop " + std::to_string(pop_depth) : "push";
		for (const VTag &t : tags)
			if (action == push)
				s += " [" + std::string(t.tpid == 0x88a8 ? "802.1ad" : "802.1Q") + " vid " +
				     std::to_string(t.vid) + " pcp " + std::to_string(t.pcp) + (t.dei ? " dei]" : "]");
		if (allow_on) {
			s += "; allow {";
			for (uint16_t v : allowed)
				s += " " + std::to_string(v);
			s += " }";
		}
		for (auto [f, t] : rewrite)
			s += "; rewrite " + std::to_string(f) + "->" + std::to_string(t);
		return s;
	}
};

// @xdp: the XDP hook (no difference in the README's semantics). README:
// "outer_only (the outer tag alone decides, so xdp_vlan reads no further)"
// reads as if a pop-1 or the default policy at XDP let a cut-short second
// or third tag through; but "a third must be whole when there" is said of
// every frame, and the model holds to it at both hooks, whatever the policy.
inline Outcome vlan_model(const VlanPolicy &p, std::span<const uint8_t> in, bool xdp)
{
	Outcome o;
	auto drop = [&](const char *why) {
		o.verdict = Outcome::drop;
		o.out.assign(in.begin(), in.end());
		o.counted = {why};
		return o;
	};
	// README: silent on frames shorter than an Ethernet header; test_run
	// refuses them (EINVAL) at both hooks, so the test never asks.
	// README: "a frame may carry any number of tags, two are told apart, and
	// a third must be whole when there". A tag is whole when its 4 bytes are
	// there; README: silent on whether the type field after a tag must be
	// there too. The model asks for it (a tag whose payload type is missing
	// is not a whole tag).
	(void)xdp;
	const unsigned examine = 3;
	unsigned depth = 0;
	size_t off = 12;
	while (depth < examine && in.size() >= off + 2 && is_tpid(rd16(in, off))) {
		if (in.size() < off + 4 + 2)
			return drop("dropped-malformed");
		depth++;
		off += 4;
	}
	// depth 3 stands for "3 or more": nothing past the third tag is read
	Bytes f(in.begin(), in.end());
	uint16_t outer_vid = depth ? rd16(f, 14) & 0x0fff : 0;

	// README: "untagged frames are not subject to the allow-list"; silent on
	// a priority tag (VID 0). The model takes VID 0 as untagged (802.1Q's
	// meaning), so exempt.
	if (p.allow_on && depth && outer_vid != 0 && !p.allowed.count(outer_vid))
		return drop("dropped-not-allowed");

	bool rewritten = false;
	if (depth) {
		auto it = p.rewrite.find(outer_vid);
		if (it != p.rewrite.end() && it->second) {
			uint16_t tci = static_cast<uint16_t>((rd16(f, 14) & 0xf000) | (it->second & 0x0fff));
			detail::set16(f, 14, tci);	// "PCP/DEI kept"
			rewritten = true;
		}
	}

	o.verdict = Outcome::pass;
	if (p.action == VlanPolicy::pop && depth) {
		unsigned n = std::min(p.pop_depth, depth);
		f.erase(f.begin() + 12, f.begin() + 12 + 4 * n);
		o.out = std::move(f);
		o.counted = {"modified", "popped"};	// "a rewrite before a pop is moot"
		return o;
	}
	if (p.action == VlanPolicy::push && !p.tags.empty()) {
		// README: "Push onto a frame that would then carry more than 2
		// tags is dropped"; depth 3 means 3 or more.
		if (depth + p.tags.size() > 2)
			return drop("dropped-too-deep");
		Bytes tags;
		for (const VTag &t : p.tags) {
			detail::put16(tags, t.tpid);
			detail::put16(tags, vlan_tci(t.vid, t.pcp, t.dei));
		}
		f.insert(f.begin() + 12, tags.begin(), tags.end());
		o.out = std::move(f);
		o.counted = {"modified", "pushed"};
		if (rewritten)
			o.counted.push_back("rewritten");
		return o;
	}
	o.out = std::move(f);
	o.counted = rewritten ? std::vector<std::string>{"modified", "rewritten"} : std::vector<std::string>{"passed"};
	return o;
}

// ---- Geneve ----------------------------------------------------------------

struct GeneveConfig {
	std::set<uint16_t> ports;
	struct Rule {
		uint32_t action = XO_GNV_ACT_PASS;	// enum xo_gnv_action
		uint32_t queues = 1;
	};
	std::map<uint32_t, Rule> rules;
	Rule dflt;
	std::set<uint16_t> known;
	bool csum = false;

	std::string describe() const;
};

inline const char *action_name(uint32_t a)
{
	static const char *const n[] = {"pass", "drop", "decap", "xsk", "cpu"};
	return a < 5 ? n[a] : "?";
}

inline std::string GeneveConfig::describe() const
{
	std::string s = "ports {";
	for (uint16_t p : ports)
		s += " " + std::to_string(p);
	s += " }; rules {";
	for (auto [v, r] : rules)
		s += " " + std::to_string(v) + ":" + action_name(r.action) + "/" + std::to_string(r.queues);
	s += std::string(" default:") + action_name(dflt.action) + "/" + std::to_string(dflt.queues) +
	     " }; known {";
	char buf[16];
	for (uint16_t c : known) {
		std::snprintf(buf, sizeof(buf), " 0x%04x", c);
		s += buf;
	}
	return s + std::string(" }; csum ") + (csum ? "on" : "off");
}

// The semantics the model follows where the README is changing
// (harden-datapath): see test_diff_model.cpp.
struct GeneveSemantics {
	// A Geneve protocol other than TEB/IPv4/IPv6 is handled by its rule
	// (pass, drop, decap: dropped-cannot-decap, xsk/cpu: steered).
	bool other_proto_by_rule = false;
	// Options a frame may carry and still be examined whole; more is
	// dropped-options-unexamined whatever the C bit (harden-datapath's
	// walk covers all 63, so that never fires for a well-formed header).
	unsigned opt_walk_limit = 16;
	// The README before harden-datapath: "so do more than 16 options with
	// the C bit set" (dropped-critical-option); harden-datapath drops it.
	bool crit_beyond_walk = true;
};

inline uint32_t csum_add(std::span<const uint8_t> d, uint32_t sum)
{
	return detail::sum16(d, sum);
}

// Whether the outer UDP checksum of the datagram at @udp (udp_len bytes)
// verifies; @ip is the IP header (version 4 or 6).
inline bool udp_csum_ok(std::span<const uint8_t> f, size_t ip, bool v6, size_t udp, uint16_t udp_len)
{
	uint16_t field = rd16(f, udp + 6);
	if (field == 0)
		return !v6;	// "a zero checksum is accepted over IPv4 only"
	uint32_t s = 0;
	if (v6) {
		s = csum_add(f.subspan(ip + 8, 32), s);
		s += udp_len;
		s += 17;
	} else {
		s = csum_add(f.subspan(ip + 12, 8), s);
		s += 17;
		s += udp_len;
	}
	s = csum_add(f.subspan(udp, udp_len), s);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s == 0xffff;
}

inline Outcome geneve_model(const GeneveConfig &c, const GeneveSemantics &sem, std::span<const uint8_t> f)
{
	Outcome o;
	auto untouched = [&](std::vector<std::string> counted, Outcome::Verdict v = Outcome::pass) {
		o.verdict = v;
		o.out.assign(f.begin(), f.end());
		o.counted = std::move(counted);
		return o;
	};
	auto not_geneve = [&] { return untouched({"not-geneve"}); };
	auto malformed = [&] { return untouched({"dropped-malformed"}, Outcome::drop); };

	// "outer Ethernet + up to 2 tags": README: silent on 3 or more tags; the
	// model takes such a frame as not parsed, so not Geneve.
	size_t off = 12;
	unsigned tags = 0;
	if (f.size() < 14)
		return not_geneve();
	while (is_tpid(rd16(f, off))) {
		if (++tags > 2)
			return not_geneve();
		off += 4;
		if (f.size() < off + 2)
			return not_geneve();
	}
	uint16_t type = rd16(f, off);
	size_t ip = off + 2, udp;
	bool v6;
	if (type == 0x0800) {
		// "IPv4 with options but not fragments". README: silent on a
		// version other than 4 under 0x0800, IHL < 5 and the total
		// length; the model takes the first two as not Geneve and
		// does not look at the total length (the UDP length rules).
		if (f.size() < ip + 20)
			return not_geneve();
		unsigned ihl = f[ip] & 0x0f;
		if (f[ip] >> 4 != 4 || ihl < 5 || f.size() < ip + 4 * ihl)
			return not_geneve();
		if (f[ip + 9] != 17 || (rd16(f, ip + 6) & 0x3fff))	// MF or an offset
			return not_geneve();
		udp = ip + 4 * ihl;
		v6 = false;
	} else if (type == 0x86dd) {
		// "IPv6 without extension headers". README: silent on a
		// version other than 6 under 0x86DD; the model takes it as not
		// Geneve, as for IPv4 (xdp_geneve parses both with the helpers
		// of parse.h, which check the version since stop 19).
		if (f.size() < ip + 40 || f[ip] >> 4 != 6 || f[ip + 6] != 17)
			return not_geneve();
		udp = ip + 40;
		v6 = true;
	} else {
		return not_geneve();
	}
	if (f.size() < udp + 8 || !c.ports.count(rd16(f, udp + 2)))
		return not_geneve();

	// Geneve from here: whatever is wrong is dropped-malformed.
	size_t g = udp + 8;
	uint16_t udp_len = rd16(f, udp + 4);
	// README: "opt_len within the UDP length"; the UDP length itself must
	// fit the frame (xdp_geneve_mb "checks the UDP length against the whole
	// frame") and hold the Geneve header.
	if (udp_len < 16 || udp + udp_len > f.size() || f.size() < g + 8)
		return malformed();
	if (f[g] >> 6 != 0)
		return malformed();	// "Geneve version 0"
	size_t optlen = 4u * (f[g] & 0x3f);
	if (16 + optlen > udp_len)
		return malformed();
	uint8_t flags = f[g + 1];
	uint16_t proto = rd16(f, g + 2);
	uint32_t vni = static_cast<uint32_t>(f[g + 4] << 16 | f[g + 5] << 8 | f[g + 6]);
	bool known_proto = proto == XO_ETH_P_TEB || proto == 0x0800 || proto == 0x86dd;
	o.changed_semantics = !known_proto;

	// "every TLV option walked, bounded": each one must fit opt_len.
	// README: silent on a frame with both an unknown critical option and
	// an option that runs past opt_len; the model: the walk checks every
	// option's length first (dropped-malformed), the option policy comes
	// after.
	std::vector<std::pair<uint16_t, uint8_t>> opts;
	bool crit_unknown = false, bad = false;
	for (size_t p = g + 8, end = g + 8 + optlen; p < end;) {
		if (end - p < 4 || 4 + 4u * (f[p + 3] & 0x1f) > end - p) {
			bad = true;
			break;
		}
		opts.push_back({rd16(f, p), f[p + 2]});
		if ((f[p + 2] & XO_GNV_OPT_CRIT) && !c.known.count(rd16(f, p)))
			crit_unknown = true;
		p += 4 + 4u * (f[p + 3] & 0x1f);
	}
	if (opts.size() > XO_GNV_MAX_OPTS || (bad && opts.size() >= XO_GNV_MAX_OPTS))
		o.changed_semantics = true;	// options beyond the walk of this branch
	// README: silent on where the rule comes in; the model looks the rule
	// up before the option policy, so a frame dropped for an option counts
	// in its VNI's row (README: but not in "matched", which it defines as
	// "every frame that found its rule": the model follows the counter
	// list, where dropped-critical-option is not part of matched).
	auto it = c.rules.find(vni);
	const GeneveConfig::Rule &rule = it != c.rules.end() ? it->second : c.dflt;
	if (bad)
		return malformed();
	o.vni_row = it != c.rules.end() ? vni : XO_GNV_VNI_DEFAULT;

	if (opts.size() > sem.opt_walk_limit && !crit_unknown)
		return untouched({"dropped-options-unexamined"}, Outcome::drop);
	if (crit_unknown)
		return untouched({"dropped-critical-option"}, Outcome::drop);
	// "so do more than 16 options with the C bit set"
	if (sem.crit_beyond_walk && (flags & XO_GNV_F_CRIT) && opts.size() > XO_GNV_MAX_OPTS)
		return untouched({"dropped-critical-option"}, Outcome::drop);

	if (!known_proto && !sem.other_proto_by_rule) {
		o.vni_row.reset();
		return malformed();
	}

	// README: silent on the order of the checksum and the rule's action;
	// the model verifies first (a bad checksum drops whatever the action,
	// drop included) and counts it matched (abi.h's list).
	if (c.csum && !udp_csum_ok(f, ip, v6, udp, udp_len))
		return untouched({"matched", "bad-checksum"}, Outcome::drop);

	uint32_t action = rule.action;
	bool oam = flags & XO_GNV_F_OAM;
	if (oam && action != XO_GNV_ACT_DROP)
		action = XO_GNV_ACT_PASS;	// "OAM ... never decapped or steered, only passed"
	switch (action) {
	case XO_GNV_ACT_DROP:
		return untouched({"matched", "dropped-rule"}, Outcome::drop);
	case XO_GNV_ACT_DECAP: {
		size_t inner = g + 8 + optlen;
		if (!known_proto)
			return untouched({"matched", "dropped-cannot-decap"}, Outcome::drop);
		// README: "stripped with one bpf_xdp_adjust_head": whatever
		// follows the UDP length (padding) stays. README: silent on what
		// "a too-short inner frame" is; the model: a TEB frame shorter
		// than an Ethernet header, an IPv4/IPv6 payload of no byte.
		if (f.size() - inner < (proto == XO_ETH_P_TEB ? 14u : 1u))
			return untouched({"matched", "dropped-malformed"}, Outcome::drop);
		if (proto == XO_ETH_P_TEB) {
			o.out.assign(f.begin() + inner, f.end());
		} else {
			o.out.assign(f.begin(), f.begin() + 12);	// "with the outer MACs"
			detail::put16(o.out, proto);
			o.out.insert(o.out.end(), f.begin() + inner, f.end());
		}
		o.verdict = Outcome::pass;
		o.counted = {"matched", "decapped"};
		return o;
	}
	case XO_GNV_ACT_XSK:
		// no AF_XDP socket is ever bound in this test: no target
		return untouched({"matched", "passed", "no-target"});
	case XO_GNV_ACT_CPU:
		// GeneveMaps::rule_set fills CPUMAP slots 0..queues-1: always a target
		return untouched({"matched", "redirected"}, Outcome::redirect);
	default:
		return untouched({"matched", "passed"});
	}
}

} // namespace xoffload::test::model
