// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Unit tests of the VLAN policy values: parsing of user input and the ABI encoding.
#include <arpa/inet.h>
#include <algorithm>
#include <cstring>
#include <gtest/gtest.h>

#include "xoffload/bpf/loader.hpp"
#include "xoffload/vlan/vlan.hpp"

using namespace xoffload;

TEST(ParseVid, AcceptsOneTo4094)
{
	EXPECT_EQ(*parse_vid("1"), 1);
	EXPECT_EQ(*parse_vid("4094"), 4094);
	EXPECT_EQ(*parse_vid("0x64"), 100);
}

TEST(ParseVid, RejectsOutOfRangeAndGarbage)
{
	for (const char *bad : {"0", "4095", "-1", "", "12a", "abc", "99999999999"}) {
		auto r = parse_vid(bad);
		ASSERT_FALSE(r) << bad;
		EXPECT_EQ(r.error().kind, ErrorKind::usage) << bad;
	}
}

TEST(ParsePcp, ZeroToSeven)
{
	EXPECT_EQ(*parse_pcp("0"), 0);
	EXPECT_EQ(*parse_pcp("7"), 7);
	EXPECT_FALSE(parse_pcp("8"));
	EXPECT_FALSE(parse_pcp("-1"));
}

TEST(ParseNames, HooksModesProtosDirs)
{
	EXPECT_EQ(*parse_hook("tc-egress"), Hook::tc_egress);
	EXPECT_FALSE(parse_hook("tc"));
	EXPECT_EQ(*parse_xdp_mode("skb"), XdpMode::skb);
	EXPECT_EQ(*parse_xdp_mode("generic"), XdpMode::skb);
	EXPECT_EQ(*parse_xdp_mode("native"), XdpMode::native);
	EXPECT_FALSE(parse_xdp_mode("hw"));
	EXPECT_EQ(*parse_tpid("802.1ad"), 0x88a8);
	EXPECT_EQ(*parse_tpid("802.1Q"), 0x8100);
	EXPECT_FALSE(parse_tpid("802.1x"));
	EXPECT_EQ(*parse_dir("egress"), Dir::egress);
	EXPECT_FALSE(parse_dir("both"));
}

TEST(TagSpec, EncodesPcpDeiVidInNetworkOrder)
{
	TagSpec t{0x88a8, 100, 5, true};
	xo_vlan_tag a = t.to_abi();
	EXPECT_EQ(ntohs(a.tpid), 0x88a8);
	EXPECT_EQ(ntohs(a.tci), (5 << 13) | (1 << 12) | 100);
	TagSpec back = TagSpec::from_abi(a);
	EXPECT_EQ(back.tpid, 0x88a8);
	EXPECT_EQ(back.vid, 100);
	EXPECT_EQ(back.pcp, 5);
	EXPECT_TRUE(back.dei);
}

TEST(Policy, PushQinQKeepsFlagsAndOrder)
{
	xo_vlan_policy cur{};
	cur.flags = XO_VLAN_F_ALLOW;
	auto p = make_push_policy(cur, {TagSpec{0x88a8, 10, 0, false}, TagSpec{0x8100, 20, 3, false}});
	EXPECT_EQ(p.abi_version, XO_ABI_VERSION);
	EXPECT_EQ(p.action, XO_VLAN_ACT_PUSH);
	EXPECT_EQ(p.push_count, 2);
	EXPECT_EQ(p.flags, XO_VLAN_F_ALLOW);
	EXPECT_EQ(ntohs(p.push[0].tpid), 0x88a8);
	EXPECT_EQ(ntohs(p.push[1].tci), (3 << 13) | 20);
	EXPECT_EQ(describe_policy(p), "push 802.1ad vid 10 pcp 0 802.1Q vid 20 pcp 3, allow-list on");
}

TEST(Policy, PopAndClear)
{
	xo_vlan_policy cur{};
	cur.flags = XO_VLAN_F_REWRITE;
	auto p = make_pop_policy(cur, 2);
	EXPECT_EQ(p.action, XO_VLAN_ACT_POP);
	EXPECT_EQ(p.pop_depth, 2);
	EXPECT_EQ(p.flags, XO_VLAN_F_REWRITE);
	auto c = make_clear_policy();
	EXPECT_EQ(c.action, XO_VLAN_ACT_NONE);
	EXPECT_EQ(c.flags, 0u);
}

// op[] is what the programs act on, by tag count (the last slot standing
// for 3 or more): pop min(depth, tags) outer tags; push only if the frame
// then carries at most two tags, else too deep; otherwise keep. outer_only
// marks the policies that do the same to every tagged frame, whatever its
// tag count: no policy, pop 1 (or 0), push 0, and a push of two (too deep
// for any tagged frame).
TEST(Policy, CompiledOpsFollowTheActionForEveryTagCount)
{
	for (uint32_t action : {XO_VLAN_ACT_NONE, XO_VLAN_ACT_POP, XO_VLAN_ACT_PUSH})
		for (uint8_t pop_depth = 0; pop_depth <= 3; pop_depth++)
			for (uint8_t push_count = 0; push_count <= 3; push_count++) {
				xo_vlan_policy p{};
				p.action = action;
				p.pop_depth = pop_depth;
				p.push_count = push_count;
				std::memset(p.op, 0xee, sizeof(p.op));
				p.outer_only = 0xee;
				xo_vlan_policy_compile(&p);
				SCOPED_TRACE(testing::Message() << "action " << action << " pop " << int(pop_depth)
								<< " push " << int(push_count));
				for (uint32_t tags = 0; tags <= XO_VLAN_MORE; tags++) {
					uint8_t want = XO_VLAN_OP_KEEP;
					if (action == XO_VLAN_ACT_POP) {
						uint32_t n = std::min<uint32_t>(pop_depth, tags);
						want = n == 0 ? XO_VLAN_OP_KEEP : n == 1 ? XO_VLAN_OP_POP1 : XO_VLAN_OP_POP2;
					} else if (action == XO_VLAN_ACT_PUSH && push_count) {
						want = tags + push_count > 2 ? XO_VLAN_OP_TOO_DEEP
						       : push_count == 1   ? XO_VLAN_OP_PUSH1
									   : XO_VLAN_OP_PUSH2;
					}
					EXPECT_EQ(p.op[tags], want) << "tags " << tags;
				}
				bool same_for_tagged = action == XO_VLAN_ACT_NONE ||
						       (action == XO_VLAN_ACT_POP && pop_depth <= 1) ||
						       (action == XO_VLAN_ACT_PUSH && push_count != 1);
				EXPECT_EQ(p.outer_only, same_for_tagged ? 1 : 0);
			}
}

// The BPF side counts each frame once; what is shown derives the rest.
TEST(VlanStats, ShownCountersDeriveFromOneCounterPerFrame)
{
	std::array<xo_counter, XO_VLAN_CNT_MAX> raw{};
	raw[XO_VLAN_CNT_PASSED] = {1, 100};
	raw[XO_VLAN_CNT_POPPED] = {2, 200};
	raw[XO_VLAN_CNT_PUSHED] = {3, 300};
	raw[XO_VLAN_CNT_REWRITTEN] = {4, 400};
	raw[XO_VLAN_CNT_REWRITTEN_PUSHED] = {5, 500};
	raw[XO_VLAN_CNT_DROP_MALFORMED] = {6, 600};
	raw[XO_VLAN_CNT_DROP_NOT_ALLOWED] = {7, 700};
	raw[XO_VLAN_CNT_DROP_NO_HEADROOM] = {8, 800};
	raw[XO_VLAN_CNT_DROP_TOO_DEEP] = {9, 900};
	VlanStatSet s = vlan_stats_of(raw);
	auto pk = [&](VlanStat x) { return s[static_cast<unsigned>(x)].packets; };
	EXPECT_EQ(pk(VlanStat::passed), 1u);
	EXPECT_EQ(pk(VlanStat::modified), 2u + 3 + 4 + 5);
	EXPECT_EQ(pk(VlanStat::popped), 2u);
	EXPECT_EQ(pk(VlanStat::pushed), 3u + 5);
	EXPECT_EQ(pk(VlanStat::rewritten), 4u + 5);
	EXPECT_EQ(pk(VlanStat::dropped_malformed), 6u);
	EXPECT_EQ(pk(VlanStat::dropped_not_allowed), 7u);
	EXPECT_EQ(pk(VlanStat::dropped_no_headroom), 8u);
	EXPECT_EQ(pk(VlanStat::dropped_too_deep), 9u);
	EXPECT_EQ(s[static_cast<unsigned>(VlanStat::modified)].bytes, 1400u);
	// passed + modified + drops == every frame, as before
	uint64_t frames = 0;
	for (unsigned r = 0; r < XO_VLAN_CNT_MAX; r++)
		frames += raw[r].packets;
	EXPECT_EQ(pk(VlanStat::passed) + pk(VlanStat::modified) + pk(VlanStat::dropped_malformed) +
			  pk(VlanStat::dropped_not_allowed) + pk(VlanStat::dropped_no_headroom) +
			  pk(VlanStat::dropped_too_deep),
		  frames);
}

TEST(Names, CountersAndHooks)
{
	EXPECT_STREQ(vlan_counter_name(static_cast<unsigned>(VlanStat::dropped_no_headroom)), "dropped-no-headroom");
	EXPECT_STREQ(vlan_counter_name(kVlanStats), "?");
	EXPECT_STREQ(to_string(static_cast<Hook>(XO_HOOK_TC_EGRESS)), "tc-egress");
	EXPECT_STREQ(to_string(static_cast<Hook>(kHooks)), "?") << "a counter index out of range";
	// one name per hook, and parse_hook reads back what to_string wrote
	for (unsigned h = 0; h < kHooks; h++) {
		auto back = parse_hook(to_string(static_cast<Hook>(h)));
		ASSERT_TRUE(back) << h;
		EXPECT_EQ(static_cast<unsigned>(*back), h);
	}
	EXPECT_EQ(static_cast<unsigned>(Hook::tc_ingress), unsigned{XO_HOOK_TC_INGRESS});
	auto bad = parse_hook("tc");
	ASSERT_FALSE(bad);
	EXPECT_EQ(bad.error().kind, ErrorKind::usage);
	EXPECT_NE(bad.error().msg.find("xdp, tc-ingress or tc-egress"), std::string::npos) << bad.error().msg;
}
