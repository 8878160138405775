// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// xdp_vlan and tc_vlan under BPF_PROG_TEST_RUN: one table of cases, each run
// at XDP, TC ingress and TC egress, which must agree byte for byte on the wire.
//
// Not covered here: TC with the outer tag already in skb metadata. test_run
// builds the skb itself and its __sk_buff ctx_in cannot set vlan_present or
// vlan_tci, so that path is left to the veth integration tests.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <ostream>

#include "tc_vlan.skel.h"
#include "vlan_harness.hpp"
#include "xdp_vlan.skel.h"

namespace xoffload::test {
namespace {

// The tags of the table. C = customer (802.1Q), S = service (802.1ad);
// PCP/DEI are non-zero so losing them shows.
const Tag kC100{kTpid8021Q, 100, 5, true};
const Tag kC200{kTpid8021Q, 200, 5, true};	// kC100 after 100 -> 200
const Tag kC300{kTpid8021Q, 300, 6, true};
const Tag kS30{kTpid8021AD, 30, 3, false};
const Tag kS31{kTpid8021AD, 31, 3, false};	// kS30 after 30 -> 31
const Tag kPrio{kTpid8021Q, 0, 4, false};	// priority tag, VID 0

// IPv4/UDP behind @tags, outermost first.
Bytes frame(std::initializer_list<Tag> tags, size_t payload = 18)
{
	PacketBuilder b;
	b.eth(kMacB, kMacA);
	for (const Tag &t : tags)
		b.vlan(t.tpid, t.vid, t.pcp, t.dei);
	return b.ipv4(kIpA, kIpB).udp(kPortA, kPortB).payload(payload).build();
}

Bytes frame6(std::initializer_list<Tag> tags)
{
	PacketBuilder b;
	b.eth(kMacA, kMacB);
	for (const Tag &t : tags)
		b.vlan(t.tpid, t.vid, t.pcp, t.dei);
	return b.ipv6(kIp6A, kIp6B).tcp(kPortB, kPortA).payload(40).build();
}

// An ARP-sized non-IP frame: the programs must not care what follows.
Bytes frame_arp(std::initializer_list<Tag> tags)
{
	PacketBuilder b;
	b.eth(kMacBcast, kMacA);
	for (const Tag &t : tags)
		b.vlan(t.tpid, t.vid, t.pcp, t.dei);
	return b.ethertype(0x0806).payload(28).build();
}

struct Case {
	std::string name;	// test name: letters, digits, '_'
	std::string what;
	Policy policy;
	Bytes in;
	Verdict verdict;
	Bytes out;		// expected on the wire; a dropped frame stays as it came
	std::vector<uint32_t> counted;	// reasons counted once, with in.size() bytes
};

void PrintTo(const Case &c, std::ostream *os)
{
	*os << c.name;
}

Case pass(std::string name, std::string what, Policy p, Bytes in, Bytes out,
	  std::vector<uint32_t> counted)
{
	return {std::move(name), std::move(what), std::move(p), std::move(in), Verdict::pass,
		std::move(out), std::move(counted)};
}

Case unchanged(std::string name, std::string what, Policy p, Bytes in)
{
	Bytes out = in;
	return pass(std::move(name), std::move(what), std::move(p), std::move(in), std::move(out),
		    {XO_VLAN_CNT_PASSED});
}

Case drop(std::string name, std::string what, Policy p, Bytes in, uint32_t reason)
{
	Bytes out = in;
	return {std::move(name), std::move(what), std::move(p), std::move(in), Verdict::drop,
		std::move(out), {reason}};
}

constexpr uint32_t kPopped[] = {XO_VLAN_CNT_POPPED};
constexpr uint32_t kPushed[] = {XO_VLAN_CNT_PUSHED};
constexpr uint32_t kRewritten[] = {XO_VLAN_CNT_REWRITTEN};

std::vector<uint32_t> v(std::span<const uint32_t> s)
{
	return {s.begin(), s.end()};
}

Policy raw_policy(uint32_t action, uint8_t pop_depth, uint8_t push_count)
{
	Policy p;
	p.v.action = action;
	p.v.pop_depth = pop_depth;
	p.v.push_count = push_count;
	p.v.push[0] = to_abi(kS30);
	p.v.push[1] = to_abi(kC100);
	return p;
}

std::vector<Case> cases()
{
	const Policy none = Policy::none();

	return {
		// ---- default policy: every frame untouched, however many tags ----
		unchanged("untagged_default", "untagged frame passes as is", none, frame({})),
		unchanged("dot1q_default", "802.1Q frame passes as is", none, frame({kC100})),
		unchanged("dot1ad_default", "single 802.1ad frame passes as is", none, frame({kS30})),
		unchanged("qinq_default", "QinQ (0x88a8 + 0x8100) passes as is", none,
			  frame({kS30, kC100})),
		unchanged("ipv6_tcp_dot1q_default", "802.1Q IPv6/TCP passes as is", none,
			  frame6({kC100})),
		unchanged("three_tags_default", "3 tags pass as is", none, frame({kS30, kC100, kC300})),
		unchanged("three_dot1q_tags_default", "3 802.1Q tags pass as is", none,
			  frame({kC300, kC100, kC200})),

		// ---- pop ----
		unchanged("pop1_untagged", "pop on an untagged frame is a no-op", Policy::pop(1),
			  frame({})),
		pass("pop1_dot1q", "pop 1 of 802.1Q", Policy::pop(1), frame({kC100}), frame({}),
		     v(kPopped)),
		pass("pop1_dot1ad", "pop 1 of a single 802.1ad tag", Policy::pop(1), frame({kS30}),
		     frame({}), v(kPopped)),
		pass("pop1_qinq_keeps_inner_pcp_dei", "pop 1 of QinQ leaves the inner tag, PCP/DEI intact",
		     Policy::pop(1), frame({kS30, kC100}), frame({kC100}), v(kPopped)),
		pass("pop1_double_dot1q", "pop 1 of 0x8100 + 0x8100", Policy::pop(1),
		     frame({kC300, kC100}), frame({kC100}), v(kPopped)),
		pass("pop2_qinq", "pop 2 of QinQ", Policy::pop(2), frame({kS30, kC100}), frame({}),
		     v(kPopped)),
		pass("pop2_dot1q_pops_one", "pop 2 of a single tag pops the one there is",
		     Policy::pop(2), frame({kC100}), frame({}), v(kPopped)),
		pass("pop1_priority_tag", "pop 1 of a VID 0 priority tag", Policy::pop(1),
		     frame({kPrio}), frame({}), v(kPopped)),
		pass("pop1_ipv6_tcp", "pop 1 of 802.1Q IPv6/TCP", Policy::pop(1), frame6({kC100}),
		     frame6({}), v(kPopped)),
		pass("pop1_non_ip", "pop 1 of a tagged ARP frame", Policy::pop(1),
		     frame_arp({kC100}), frame_arp({}), v(kPopped)),
		pass("pop1_three_tags", "pop 1 of 3 tags takes the outer one, the rest stays",
		     Policy::pop(1), frame({kS30, kC100, kC300}), frame({kC100, kC300}), v(kPopped)),
		pass("pop2_three_tags", "pop 2 of 3 tags leaves the innermost",
		     Policy::pop(2), frame({kS30, kC100, kC300}), frame({kC300}), v(kPopped)),
		unchanged("pop_depth0_noop", "pop with depth 0 changes nothing",
			  raw_policy(XO_VLAN_ACT_POP, 0, 0), frame({kC100})),

		// ---- push ----
		pass("push_dot1q", "push one 802.1Q tag, PCP/DEI set",
		     Policy::push({kC300}), frame({}), frame({kC300}), v(kPushed)),
		pass("push_dot1ad", "push one 802.1ad tag", Policy::push({kS30}), frame({}),
		     frame({kS30}), v(kPushed)),
		pass("push_qinq", "push two tags (QinQ), push[0] outermost",
		     Policy::push({kS30, kC100}), frame({}), frame({kS30, kC100}), v(kPushed)),
		pass("push_qinq_ipv6_tcp", "push two tags onto IPv6/TCP",
		     Policy::push({kS30, kC100}), frame6({}), frame6({kS30, kC100}), v(kPushed)),
		pass("push_dot1ad_onto_dot1q", "push an S-tag onto a C-tagged frame",
		     Policy::push({kS30}), frame({kC100}), frame({kS30, kC100}), v(kPushed)),
		pass("push_non_ip", "push onto an ARP frame", Policy::push({kC100}),
		     frame_arp({}), frame_arp({kC100}), v(kPushed)),
		drop("push_onto_qinq_too_deep", "push onto a double-tagged frame",
		     Policy::push({kS30}), frame({kS30, kC100}), XO_VLAN_CNT_DROP_TOO_DEEP),
		drop("push2_onto_dot1q_too_deep", "push 2 onto a single-tagged frame",
		     Policy::push({kS30, kC100}), frame({kC200}), XO_VLAN_CNT_DROP_TOO_DEEP),
		drop("push_onto_three_tags_too_deep", "push onto 3 tags",
		     Policy::push({kS30}), frame({kS30, kC100, kC300}), XO_VLAN_CNT_DROP_TOO_DEEP),
		unchanged("push_count0_noop", "push with no tags changes nothing",
			  raw_policy(XO_VLAN_ACT_PUSH, 0, 0), frame({})),

		// ---- rewrite (VID translation) ----
		pass("rewrite_dot1q_keeps_pcp_dei", "100 -> 200 keeps PCP/DEI",
		     Policy::none().rewrite(100, 200), frame({kC100}), frame({kC200}),
		     v(kRewritten)),
		pass("rewrite_qinq_outer", "only the outer VID is translated",
		     Policy::none().rewrite(30, 31), frame({kS30, kC100}), frame({kS31, kC100}),
		     v(kRewritten)),
		pass("rewrite_three_tags_outer", "3 tags: the outer VID is translated, the rest kept",
		     Policy::none().rewrite(30, 31), frame({kS30, kC100, kC300}),
		     frame({kS31, kC100, kC300}), v(kRewritten)),
		unchanged("rewrite_ignores_inner_vid", "a rule for the inner VID does nothing",
			  Policy::none().rewrite(100, 200), frame({kS30, kC100})),
		unchanged("rewrite_no_rule", "a VID without a rule passes as is",
			  Policy::none().rewrite(100, 200), frame({kC300})),
		unchanged("rewrite_untagged", "untagged frames have nothing to translate",
			  Policy::none().rewrite(100, 200), frame({})),
		pass("rewrite_then_push", "translate, then push on top",
		     Policy::push({kS30}).rewrite(100, 200), frame({kC100}), frame({kS30, kC200}),
		     {XO_VLAN_CNT_REWRITTEN_PUSHED}),
		pass("rewrite_with_pop", "the popped tag is not counted as rewritten",
		     Policy::pop(1).rewrite(100, 200), frame({kC100}), frame({}), v(kPopped)),
		pass("rewrite_with_pop_qinq", "pop takes the outer tag, inner kept as is",
		     Policy::pop(1).rewrite(30, 31), frame({kS30, kC100}), frame({kC100}),
		     v(kPopped)),

		// ---- allow-list (outer VID) ----
		unchanged("allow_listed", "allowed VID passes", Policy::none().allow({100}),
			  frame({kC100})),
		drop("allow_unlisted", "VID not allowed: dropped-not-allowed",
		     Policy::none().allow({100}), frame({kC200}), XO_VLAN_CNT_DROP_NOT_ALLOWED),
		unchanged("allow_untagged_exempt", "untagged frames are not subject to the list",
			  Policy::none().allow({100}), frame({})),
		unchanged("allow_priority_tag_exempt", "VID 0 (priority tag) is the untagged VLAN: exempt",
			  Policy::none().allow({100}), frame({kPrio})),
		unchanged("allow_priority_tag_empty_list", "VID 0 passes even an empty list",
			  Policy::none().allow({}), frame({kPrio})),
		unchanged("allow_priority_tag_over_c_tag", "the outer VID decides: 0 passes an unlisted inner",
			  Policy::none().allow({100}), frame({kPrio, kC200})),
		pass("allow_priority_tag_then_pop", "VID 0 bypasses the list, then the policy pops it",
		     Policy::pop(1).allow({100}), frame({kPrio}), frame({}), v(kPopped)),
		drop("allow_empty_list", "an empty list drops every tagged frame",
		     Policy::none().allow({}), frame({kC100}), XO_VLAN_CNT_DROP_NOT_ALLOWED),
		drop("allow_outer_vid_decides", "QinQ is judged by its outer VID",
		     Policy::none().allow({100}), frame({kS30, kC100}),
		     XO_VLAN_CNT_DROP_NOT_ALLOWED),
		unchanged("allow_qinq_outer_listed", "QinQ with an allowed outer VID passes",
			  Policy::none().allow({30}), frame({kS30, kC300})),
		drop("allow_rule_without_allowed_bit", "a rewrite rule alone does not allow",
		     Policy::none().allow({}).rewrite(100, 200), frame({kC100}),
		     XO_VLAN_CNT_DROP_NOT_ALLOWED),
		pass("allow_then_rewrite", "allowed, then translated",
		     Policy::none().allow({100}).rewrite(100, 200), frame({kC100}), frame({kC200}),
		     v(kRewritten)),
		pass("allow_then_pop", "allowed, then popped", Policy::pop(1).allow({100}),
		     frame({kC100}), frame({}), v(kPopped)),
		drop("allow_before_pop", "not allowed wins over pop", Policy::pop(1).allow({100}),
		     frame({kC200}), XO_VLAN_CNT_DROP_NOT_ALLOWED),
		pass("allow_then_push", "allowed, then pushed", Policy::push({kS30}).allow({100}),
		     frame({kC100}), frame({kS30, kC100}), v(kPushed)),
		pass("allow_untagged_push", "untagged frames are pushed despite the list",
		     Policy::push({kC100}).allow({300}), frame({}), frame({kC100}), v(kPushed)),
	};
}

class VlanBpf : public ::testing::Test {
protected:
	void SetUp() override
	{
		std::string why;
		bool eperm = false;

		env_ = VlanEnv::get(&why, &eperm);
		if (!env_) {
			if (eperm)
				GTEST_SKIP() << "BPF needs CAP_BPF + CAP_NET_ADMIN (run as root): "
					     << why;
			FAIL() << why;
		}
		env_->set_policy(XO_DIR_INGRESS, Policy::none());
		env_->set_policy(XO_DIR_EGRESS, Policy::none());
	}

	VlanEnv *env_ = nullptr;
};

// Runs @c at @hook (policy in its direction, poison in the other) and checks
// verdict, wire bytes and exactly which counters moved.
RunResult expect_case(VlanEnv &env, Hook hook, const Case &c)
{
	SCOPED_TRACE(std::string("at ") + to_string(hook));
	env.arm(hook, c.policy);
	Counters before = env.counters();
	RunResult r = env.run(hook, c.in);
	Counters delta = env.counters() - before;

	EXPECT_EQ(r.err, 0) << "test_run: " << std::strerror(-r.err);
	if (r.err)
		return r;
	if (hook != Hook::xdp) {
		EXPECT_TRUE(r.cb_valid) << "the TC wrapper did not report skb->cb[]";
	}
	EXPECT_EQ(r.verdict(hook), c.verdict) << "retval " << r.retval;
	EXPECT_EQ(hexdump(r.wire()), hexdump(c.out)) << "wire bytes (got, want)";

	Counters want;
	for (uint32_t reason : c.counted) {
		xo_counter &w = want.v[static_cast<uint32_t>(hook) * XO_VLAN_CNT_MAX + reason];
		w.packets += 1;
		w.bytes += c.in.size();
	}
	EXPECT_EQ(describe(delta), describe(want)) << "counter deltas (got, want)";
	return r;
}

// XDP and TC must leave the same bytes on the wire, with corresponding verdicts.
void expect_same_wire(Hook a, const RunResult &ra, Hook b, const RunResult &rb)
{
	if (ra.err || rb.err)
		return;
	EXPECT_EQ(ra.verdict(a), rb.verdict(b)) << to_string(a) << " vs " << to_string(b);
	EXPECT_EQ(hexdump(ra.wire()), hexdump(rb.wire())) << to_string(a) << " vs "
							   << to_string(b);
}

class VlanCase : public VlanBpf, public ::testing::WithParamInterface<Case> {};

TEST_P(VlanCase, SameOnTheWireAtEveryHook)
{
	const Case &c = GetParam();
	SCOPED_TRACE(c.what);

	RunResult x = expect_case(*env_, Hook::xdp, c);
	RunResult ti = expect_case(*env_, Hook::tc_ingress, c);
	RunResult te = expect_case(*env_, Hook::tc_egress, c);
	expect_same_wire(Hook::xdp, x, Hook::tc_ingress, ti);
	expect_same_wire(Hook::xdp, x, Hook::tc_egress, te);
}

INSTANTIATE_TEST_SUITE_P(Table, VlanCase, ::testing::ValuesIn(cases()),
			 [](const ::testing::TestParamInfo<Case> &i) { return i.param.name; });

// ---- every truncation of tagged frames ----

struct Truncation {
	std::string name;
	Bytes full;
	unsigned depth;		// tags in the full frame
	Policy policy;
	enum { none, pop1, pop2, push1 } op;
};

void PrintTo(const Truncation &t, std::ostream *os)
{
	*os << t.name;
}

std::vector<Truncation> truncations()
{
	std::vector<Truncation> all;
	const struct {
		const char *name;
		Bytes full;
		unsigned depth;
	} frames[] = {
		{"untagged", frame({}, 4), 0},
		{"dot1q", frame({kC100}, 4), 1},
		{"qinq", frame({kS30, kC100}, 4), 2},
		{"three_tags", frame({kS30, kC100, kC300}, 4), 3},
	};
	for (const auto &f : frames) {
		std::string n = f.name;
		all.push_back({n + "_default", f.full, f.depth, Policy::none(), Truncation::none});
		all.push_back({n + "_pop1", f.full, f.depth, Policy::pop(1), Truncation::pop1});
		all.push_back({n + "_pop2", f.full, f.depth, Policy::pop(2), Truncation::pop2});
		all.push_back({n + "_push1", f.full, f.depth, Policy::push({kC300}),
			       Truncation::push1});
	}
	return all;
}

// What the policy must do with the first @len bytes of t.full: a tag is
// only parsed when all 4 bytes of it (TCI + next type) are there, a third
// tag included (a pop may leave it outermost); more are not looked at. Pops
// take the outer tags whatever lies beneath; a push onto two or more tags
// is too deep.
Case truncated_case(const Truncation &t, size_t len)
{
	Bytes in = truncated(t.full, len);
	std::string name = t.name + "_len" + std::to_string(len);
	size_t need = kEthHdrLen + kVlanHdrLen * std::min(t.depth, 3u);

	if (len < need)
		return drop(name, name, t.policy, in, XO_VLAN_CNT_DROP_MALFORMED);
	switch (t.op) {
	case Truncation::none:
		break;
	case Truncation::pop1:
	case Truncation::pop2:
		if (t.depth == 0)
			break;
		return pass(name, name, t.policy, in,
			    remove_vlans(in, std::min<size_t>(t.depth, t.op == Truncation::pop1 ? 1 : 2)),
			    v(kPopped));
	case Truncation::push1:
		if (t.depth >= 2)
			return drop(name, name, t.policy, in, XO_VLAN_CNT_DROP_TOO_DEEP);
		return pass(name, name, t.policy, in,
			    insert_vlan(in, kC300.tpid, vlan_tci(kC300.vid, kC300.pcp, kC300.dei)),
			    v(kPushed));
	}
	return unchanged(name, name, t.policy, in);
}

class VlanTruncated : public VlanBpf, public ::testing::WithParamInterface<Truncation> {};

// Inputs BPF_PROG_TEST_RUN itself turns away with EINVAL before any program
// runs (6.18): anything shorter than ETH_HLEN at either hook (bpf_test_init;
// for XDP even with metadata in front), and at TC an untagged IPv4/IPv6
// frame too short for its IP header. Those lengths cannot be tried here.
bool test_run_may_refuse(Hook h, const Bytes &in)
{
	if (in.size() < kEthHdrLen)
		return true;
	if (h == Hook::xdp)
		return false;
	uint16_t type = static_cast<uint16_t>(in[12] << 8 | in[13]);
	return (type == kEthIPv4 && in.size() < kEthHdrLen + 20) ||
	       (type == kEthIPv6 && in.size() < kEthHdrLen + 40);
}

// Every length from 0 to the full frame: never a crash, always exactly one
// outcome counted, and XDP and TC agree wherever both can run.
TEST_P(VlanTruncated, EveryLengthCountedAndSameAtEveryHook)
{
	const Truncation &t = GetParam();
	const Hook hooks[] = {Hook::xdp, Hook::tc_ingress, Hook::tc_egress};
	int refused = 0, ran = 0;

	for (size_t len = 0; len <= t.full.size(); len++) {
		Case c = truncated_case(t, len);
		std::optional<RunResult> res[3];
		SCOPED_TRACE(c.name);

		for (size_t i = 0; i < 3; i++) {
			if (test_run_may_refuse(hooks[i], c.in)) {
				env_->arm(hooks[i], c.policy);
				if (env_->run(hooks[i], c.in).err == -EINVAL) {
					refused++;
					continue;
				}
				// a kernel that takes it: the expectation below holds
			}
			res[i] = expect_case(*env_, hooks[i], c);
			ran++;
		}
		for (size_t i = 1; i < 3; i++)
			if (res[0] && res[i])
				expect_same_wire(hooks[0], *res[0], hooks[i], *res[i]);
		if (HasFailure())
			break;	// one length's diff is enough to read
	}
	EXPECT_GT(ran, 0);
	RecordProperty("runs_refused_by_test_run", refused);
}

INSTANTIATE_TEST_SUITE_P(Lengths, VlanTruncated, ::testing::ValuesIn(truncations()),
			 [](const ::testing::TestParamInfo<Truncation> &i) { return i.param.name; });

// ---- directions ----

TEST_F(VlanBpf, IngressAndEgressPoliciesAreIndependent)
{
	const Bytes c100 = frame({kC100}), c200 = frame({kC200});
	struct Expect {
		Hook hook;
		const Bytes *in;
		Verdict verdict;
		Bytes out;
		std::vector<uint32_t> counted;
	};
	auto check = [&](const Expect &e) {
		SCOPED_TRACE(to_string(e.hook));
		Counters before = env_->counters();
		RunResult r = env_->run(e.hook, *e.in);
		Counters delta = env_->counters() - before;
		ASSERT_EQ(r.err, 0);
		EXPECT_EQ(r.verdict(e.hook), e.verdict);
		EXPECT_EQ(hexdump(r.wire()), hexdump(e.out));
		Counters want;
		for (uint32_t reason : e.counted)
			want.v[static_cast<uint32_t>(e.hook) * XO_VLAN_CNT_MAX + reason] = {
				1, e.in->size()};
		EXPECT_EQ(describe(delta), describe(want));
	};

	// different actions: pop in, push out
	env_->set_policy(XO_DIR_INGRESS, Policy::pop(1));
	env_->set_policy(XO_DIR_EGRESS, Policy::push({kS30}));
	check({Hook::xdp, &c100, Verdict::pass, frame({}), v(kPopped)});
	check({Hook::tc_ingress, &c100, Verdict::pass, frame({}), v(kPopped)});
	check({Hook::tc_egress, &c100, Verdict::pass, frame({kS30, kC100}), v(kPushed)});

	// different VID tables: 100 allowed in, 200 allowed out
	env_->set_policy(XO_DIR_INGRESS, Policy::none().allow({100}));
	env_->set_policy(XO_DIR_EGRESS, Policy::none().allow({200}));
	for (Hook h : {Hook::xdp, Hook::tc_ingress}) {
		check({h, &c100, Verdict::pass, c100, {XO_VLAN_CNT_PASSED}});
		check({h, &c200, Verdict::drop, c200, {XO_VLAN_CNT_DROP_NOT_ALLOWED}});
	}
	check({Hook::tc_egress, &c100, Verdict::drop, c100, {XO_VLAN_CNT_DROP_NOT_ALLOWED}});
	check({Hook::tc_egress, &c200, Verdict::pass, c200, {XO_VLAN_CNT_PASSED}});

	// same VID, different rewrite rules per direction
	env_->set_policy(XO_DIR_INGRESS, Policy::none().rewrite(100, 300));
	env_->set_policy(XO_DIR_EGRESS, Policy::none().rewrite(100, 200));
	const Tag c100_to_300{kTpid8021Q, 300, 5, true};
	check({Hook::xdp, &c100, Verdict::pass, frame({c100_to_300}), v(kRewritten)});
	check({Hook::tc_ingress, &c100, Verdict::pass, frame({c100_to_300}), v(kRewritten)});
	check({Hook::tc_egress, &c100, Verdict::pass, c200, v(kRewritten)});
}

// op[] comes from userspace. One that does not fit the frame (a pop of more
// tags than it has, a push past two tags) keeps it, at every hook alike.
TEST_F(VlanBpf, OpThatDoesNotFitTheFrameKeepsIt)
{
	Policy bad;
	bad.v.op[0] = XO_VLAN_OP_POP1;	// no tag to pop
	bad.v.op[1] = XO_VLAN_OP_POP2;	// one tag, two to pop
	bad.v.op[2] = XO_VLAN_OP_PUSH1;	// would make three
	for (Hook h : {Hook::xdp, Hook::tc_ingress}) {
		SCOPED_TRACE(to_string(h));
		env_->set_policy(XO_DIR_INGRESS, bad, true);
		for (const Bytes &in : {frame({}), frame({kC100}), frame({kS30, kC100})}) {
			Counters before = env_->counters();
			RunResult r = env_->run(h, in);
			Counters delta = env_->counters() - before;
			ASSERT_EQ(r.err, 0);
			EXPECT_EQ(r.verdict(h), Verdict::pass);
			EXPECT_EQ(hexdump(r.wire()), hexdump(in));
			Counters want;
			want.v[static_cast<uint32_t>(h) * XO_VLAN_CNT_MAX + XO_VLAN_CNT_PASSED] = {1, in.size()};
			EXPECT_EQ(describe(delta), describe(want));
		}
	}
	// the same action compiled pops
	env_->set_policy(XO_DIR_INGRESS, Policy::pop(2));
	EXPECT_EQ(hexdump(env_->run(Hook::xdp, frame({kC100})).wire()), hexdump(frame({})));
}

// ---- headroom ----

TEST_F(VlanBpf, PushUntilHeadroomRunsOut)
{
	xdp_vlan_test_bpf *skel = env_->xdp();
	const Bytes in = frame({});

	RunResult r = env_->run_xdp(skel->progs.xdp_push_max, in);
	ASSERT_EQ(r.err, 0) << std::strerror(-r.err);
	const uint32_t n = skel->bss->push_ok;
	// XDP_PACKET_HEADROOM is 256, less the struct xdp_frame kept in front
	EXPECT_GE(n * kVlanHdrLen, 128u);
	EXPECT_LE(n * kVlanHdrLen, 256u);
	EXPECT_LT(n, 80u) << "the loop hit its bound: no push ever failed";

	// every successful push is there, newest outermost; the failed one
	// left nothing behind
	PacketBuilder b;
	b.eth(kMacB, kMacA);
	for (uint32_t vid = n; vid >= 1; vid--)
		b.vlan(kTpid8021Q, static_cast<uint16_t>(vid));
	Bytes want = b.ipv4(kIpA, kIpB).udp(kPortA, kPortB).payload(18).build();
	EXPECT_EQ(r.retval, static_cast<uint32_t>(XDP_PASS));
	EXPECT_EQ(hexdump(r.out), hexdump(want));

	// metadata lives in the same headroom: each 4 bytes of it cost one
	// push, and adjust_head carries it along intact
	for (uint32_t meta : {4u, 16u, 32u}) {
		SCOPED_TRACE("metadata " + std::to_string(meta));
		RunResult m = env_->run_xdp(skel->progs.xdp_push_max, in, meta, 0x5a);
		ASSERT_EQ(m.err, 0) << std::strerror(-m.err);
		EXPECT_EQ(skel->bss->push_ok, n - meta / 4);
		EXPECT_EQ(hexdump(m.meta), hexdump(Bytes(meta, 0x5a)));
		EXPECT_EQ(m.out.size(), in.size() + kVlanHdrLen * (n - meta / 4));
	}
}

// xdp_vlan itself with the headroom nearly gone: pushes that no longer fit
// are dropped and counted dropped-no-headroom, the frame left untouched.
// (TC has no equivalent: bpf_skb_vlan_push reallocates the head.)
TEST_F(VlanBpf, NoHeadroomIsCountedByTheRealProgram)
{
	xdp_vlan_test_bpf *skel = env_->xdp();
	const Bytes untagged = frame({}), c100 = frame({kC100});
	struct Row {
		const char *what;
		uint32_t slack;
		Policy policy;
		const Bytes *in;
		Verdict verdict;
		Bytes out;
		std::vector<uint32_t> counted;
	} rows[] = {
		{"push 1, no room", 0, Policy::push({kC100}), &untagged, Verdict::drop, untagged,
		 {XO_VLAN_CNT_DROP_NO_HEADROOM}},
		{"push 2, no room", 0, Policy::push({kS30, kC100}), &untagged, Verdict::drop,
		 untagged, {XO_VLAN_CNT_DROP_NO_HEADROOM}},
		{"push 1, room for 1", 4, Policy::push({kC100}), &untagged, Verdict::pass,
		 frame({kC100}), v(kPushed)},
		{"push 2, room for 1", 4, Policy::push({kS30, kC100}), &untagged, Verdict::drop,
		 untagged, {XO_VLAN_CNT_DROP_NO_HEADROOM}},
		{"push 2, room for 2", 8, Policy::push({kS30, kC100}), &untagged, Verdict::pass,
		 frame({kS30, kC100}), v(kPushed)},
		// the translation is written before the push fails: harmless, as
		// the frame is dropped, but it is what the bytes show
		{"rewrite + push, no room", 0, Policy::push({kS30}).rewrite(100, 200), &c100,
		 Verdict::drop, frame({kC200}), {XO_VLAN_CNT_DROP_NO_HEADROOM}},
		{"pop needs no room", 0, Policy::pop(1), &c100, Verdict::pass, untagged,
		 v(kPopped)},
		{"default needs no room", 0, Policy::none(), &c100, Verdict::pass, c100,
		 {XO_VLAN_CNT_PASSED}},
	};

	for (const Row &row : rows) {
		SCOPED_TRACE(row.what);
		env_->set_policy(XO_DIR_INGRESS, row.policy);
		skel->bss->tight_slack = row.slack;
		Counters before = env_->counters();
		RunResult r = env_->run_xdp(skel->progs.xdp_vlan_tight, *row.in);
		Counters delta = env_->counters() - before;

		ASSERT_EQ(r.err, 0) << std::strerror(-r.err);
		EXPECT_GE(skel->bss->tight_taken, 128u) << "headroom was not taken away";
		EXPECT_EQ(r.verdict(Hook::xdp), row.verdict) << "retval " << r.retval;
		EXPECT_EQ(hexdump(r.out), hexdump(row.out));
		Counters want;
		for (uint32_t reason : row.counted)
			want.v[uint32_t{XO_HOOK_XDP} * XO_VLAN_CNT_MAX + reason] = {1, row.in->size()};
		EXPECT_EQ(describe(delta), describe(want));
	}
}

// The same path with no wrapper at all: XDP metadata is carved out of the
// headroom, so enough of it leaves xdp_vlan no room to push.
TEST_F(VlanBpf, NoHeadroomThroughMetadata)
{
	xdp_vlan_test_bpf *skel = env_->xdp();
	const Bytes untagged = frame({});

	ASSERT_EQ(env_->run_xdp(skel->progs.xdp_push_max, untagged).err, 0);
	const uint32_t room = skel->bss->push_ok * kVlanHdrLen;	// usable headroom
	env_->set_policy(XO_DIR_INGRESS, Policy::push({kC100}));
	if (env_->run_xdp(skel->progs.xdp_vlan, untagged, room).err == -EINVAL)
		GTEST_SKIP() << "this kernel caps XDP test_run metadata below " << room
			     << " bytes; NoHeadroomIsCountedByTheRealProgram covers the path";

	struct Row {
		uint32_t meta;
		Policy policy;
		Verdict verdict;
		Bytes out;
		std::vector<uint32_t> counted;
	} rows[] = {
		{room, Policy::push({kC100}), Verdict::drop, untagged,
		 {XO_VLAN_CNT_DROP_NO_HEADROOM}},
		{room - 4, Policy::push({kC100}), Verdict::pass, frame({kC100}), v(kPushed)},
		{room - 4, Policy::push({kS30, kC100}), Verdict::drop, untagged,
		 {XO_VLAN_CNT_DROP_NO_HEADROOM}},
		{room - 8, Policy::push({kS30, kC100}), Verdict::pass, frame({kS30, kC100}),
		 v(kPushed)},
	};
	for (const Row &row : rows) {
		SCOPED_TRACE("metadata " + std::to_string(row.meta) + ", push " +
			     std::to_string(row.policy.v.push_count));
		env_->set_policy(XO_DIR_INGRESS, row.policy);
		Counters before = env_->counters();
		RunResult r = env_->run_xdp(skel->progs.xdp_vlan, untagged, row.meta, 0x3c);
		Counters delta = env_->counters() - before;

		ASSERT_EQ(r.err, 0) << std::strerror(-r.err);
		EXPECT_EQ(r.verdict(Hook::xdp), row.verdict) << "retval " << r.retval;
		EXPECT_EQ(hexdump(r.out), hexdump(row.out));
		EXPECT_EQ(hexdump(r.meta), hexdump(Bytes(row.meta, 0x3c)));
		Counters want;
		for (uint32_t reason : row.counted)
			want.v[uint32_t{XO_HOOK_XDP} * XO_VLAN_CNT_MAX + reason] = {1, untagged.size()};
		EXPECT_EQ(describe(delta), describe(want));
	}
}

// xdp_vlan_mb: a frame larger than a page comes in several buffers. The
// tags in the first are popped, the rest is untouched, and the counter
// takes the whole frame's bytes. (test_run hands such a frame to xdp_vlan
// too, which no driver does; xdp_vlan then counts only the first buffer.)
TEST_F(VlanBpf, MultiBufferEntryPopsAndCountsWholeFrames)
{
	xdp_vlan_test_bpf *skel = env_->xdp();
	const Bytes in = frame({kS30, kC100}, 6000);
	const uint32_t popped = uint32_t{XO_HOOK_XDP} * XO_VLAN_CNT_MAX + XO_VLAN_CNT_POPPED;

	env_->set_policy(XO_DIR_INGRESS, Policy::pop(2));
	Counters before = env_->counters();
	ASSERT_EQ(env_->run_xdp(skel->progs.xdp_vlan, in).err, 0);
	Counters single = env_->counters() - before;
	EXPECT_EQ(single.v[popped].packets, 1u);
	EXPECT_LT(single.v[popped].bytes, in.size()) << "the frame did not span several buffers";

	before = env_->counters();
	RunResult r = env_->run_xdp(skel->progs.xdp_vlan_mb, in);
	Counters delta = env_->counters() - before;

	ASSERT_EQ(r.err, 0) << std::strerror(-r.err);
	EXPECT_EQ(r.verdict(Hook::xdp), Verdict::pass) << "retval " << r.retval;
	EXPECT_EQ(hexdump(r.out), hexdump(frame({}, 6000)));
	Counters want;
	want.v[popped] = {1, in.size()};
	EXPECT_EQ(describe(delta), describe(want));
}

// ---- the objects themselves ----

TEST_F(VlanBpf, TestsNeverPin)
{
	bpf_map *m;

	for (bpf_object *obj : {env_->xdp()->obj, env_->tc()->obj})
		bpf_object__for_each_map(m, obj)
		{
			EXPECT_FALSE(bpf_map__is_pinned(m)) << bpf_map__name(m);
			EXPECT_EQ(bpf_map__pin_path(m), nullptr) << bpf_map__name(m);
		}
	// where LIBBPF_PIN_BY_NAME would have put them by default
	struct stat st;
	for (const char *p : {"/sys/fs/bpf/xo_vlan_cfg", "/sys/fs/bpf/xo_vlan_vid",
			      "/sys/fs/bpf/xo_vlan_stats"})
		EXPECT_NE(stat(p, &st), 0) << p << " exists";
}

// The wrappers include the programs under test rather than copying them:
// the installed objects must load (unpinned) and be the same code.
TEST_F(VlanBpf, InstalledObjectsLoadAndMatchTheTestedCode)
{
	Owned<xdp_vlan_bpf, xdp_vlan_bpf__destroy> x(xdp_vlan_bpf__open());
	Owned<tc_vlan_bpf, tc_vlan_bpf__destroy> t(tc_vlan_bpf__open());
	bpf_map *m;

	ASSERT_TRUE(x && t);
	for (bpf_object *obj : {x->obj, t->obj})
		bpf_object__for_each_map(m, obj)
			ASSERT_EQ(bpf_map__set_pin_path(m, nullptr), 0);
	ASSERT_EQ(xdp_vlan_bpf__load(x.get()), 0) << VlanEnv::log();
	ASSERT_EQ(tc_vlan_bpf__load(t.get()), 0) << VlanEnv::log();
	for (bpf_object *obj : {x->obj, t->obj})
		bpf_object__for_each_map(m, obj)
			EXPECT_FALSE(bpf_map__is_pinned(m)) << bpf_map__name(m);

	EXPECT_EQ(bpf_program__insn_cnt(x->progs.xdp_vlan),
		  bpf_program__insn_cnt(env_->xdp()->progs.xdp_vlan));
	EXPECT_EQ(bpf_program__insn_cnt(x->progs.xdp_vlan_mb),
		  bpf_program__insn_cnt(env_->xdp()->progs.xdp_vlan_mb));
	EXPECT_EQ(bpf_program__insn_cnt(t->progs.tc_vlan_ingress),
		  bpf_program__insn_cnt(env_->tc()->progs.tc_vlan_ingress));
	EXPECT_EQ(bpf_program__insn_cnt(t->progs.tc_vlan_egress),
		  bpf_program__insn_cnt(env_->tc()->progs.tc_vlan_egress));

	// fresh maps hold the default policy: everything passes as is
	const Bytes in = frame({kS30, kC100});
	ProgRun r = prog_run(bpf_program__fd(x->progs.xdp_vlan), in, 64);
	ASSERT_EQ(r.err, 0);
	EXPECT_EQ(r.retval, static_cast<uint32_t>(XDP_PASS));
	EXPECT_EQ(hexdump(r.out), hexdump(in));

	r = prog_run(bpf_program__fd(t->progs.tc_vlan_egress), in, 64);
	ASSERT_EQ(r.err, 0);
	EXPECT_EQ(r.retval, static_cast<uint32_t>(TC_ACT_OK));
	EXPECT_EQ(hexdump(r.out), hexdump(in));
}

} // namespace
} // namespace xoffload::test
