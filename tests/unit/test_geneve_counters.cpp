// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// xdp_geneve counts each frame once; `geneve stats` derives matched, passed
// and dropped-malformed from those exclusive reasons.
#include <gtest/gtest.h>

#include <set>

#include "xoffload/geneve/geneve.hpp"

using namespace xoffload;

TEST(GeneveStats, ShownCountersDeriveFromOneCounterPerFrame)
{
	std::array<xo_counter, XO_GNV_CNT_MAX> raw{};
	for (unsigned r = 0; r < XO_GNV_CNT_MAX; r++)
		raw[r] = {uint64_t{1} << r, uint64_t{100} << r};	// a distinct bit per reason
	GeneveCounterSet s = geneve_stats_of(raw);
	auto pk = [&](GeneveStat x) { return s[static_cast<unsigned>(x)].packets; };
	auto bit = [](unsigned r) { return uint64_t{1} << r; };

	EXPECT_EQ(pk(GeneveStat::not_geneve), bit(XO_GNV_CNT_NOT_GENEVE));
	EXPECT_EQ(pk(GeneveStat::matched),
		  bit(XO_GNV_CNT_PASSED) | bit(XO_GNV_CNT_NO_TARGET) | bit(XO_GNV_CNT_DROP_RULE) |
			  bit(XO_GNV_CNT_BAD_CSUM) | bit(XO_GNV_CNT_DECAPPED) | bit(XO_GNV_CNT_DECAP_FAILED) |
			  bit(XO_GNV_CNT_DROP_CANNOT_DECAP) | bit(XO_GNV_CNT_REDIRECTED));
	EXPECT_EQ(pk(GeneveStat::passed), bit(XO_GNV_CNT_PASSED) | bit(XO_GNV_CNT_NO_TARGET));
	EXPECT_EQ(pk(GeneveStat::dropped_rule), bit(XO_GNV_CNT_DROP_RULE));
	EXPECT_EQ(pk(GeneveStat::dropped_malformed), bit(XO_GNV_CNT_DROP_MALFORMED) | bit(XO_GNV_CNT_DECAP_FAILED));
	EXPECT_EQ(pk(GeneveStat::dropped_critical_option), bit(XO_GNV_CNT_DROP_CRIT_OPT));
	EXPECT_EQ(pk(GeneveStat::bad_checksum), bit(XO_GNV_CNT_BAD_CSUM));
	EXPECT_EQ(pk(GeneveStat::decapped), bit(XO_GNV_CNT_DECAPPED));
	EXPECT_EQ(pk(GeneveStat::redirected), bit(XO_GNV_CNT_REDIRECTED));
	EXPECT_EQ(pk(GeneveStat::no_target), bit(XO_GNV_CNT_NO_TARGET));
	EXPECT_EQ(pk(GeneveStat::dropped_cannot_decap), bit(XO_GNV_CNT_DROP_CANNOT_DECAP));
	EXPECT_EQ(pk(GeneveStat::dropped_options_unexamined), bit(XO_GNV_CNT_DROP_OPTS_UNEXAMINED));
	EXPECT_EQ(s[static_cast<unsigned>(GeneveStat::passed)].bytes,
		  (uint64_t{100} << XO_GNV_CNT_PASSED) + (uint64_t{100} << XO_GNV_CNT_NO_TARGET));

	// Every frame is in exactly one of not-geneve, matched, dropped-malformed
	// before the rule, dropped-critical-option, dropped-options-unexamined.
	uint64_t frames = 0;
	for (unsigned r = 0; r < XO_GNV_CNT_MAX; r++)
		frames += raw[r].packets;
	EXPECT_EQ(pk(GeneveStat::not_geneve) + pk(GeneveStat::matched) + raw[XO_GNV_CNT_DROP_MALFORMED].packets +
			  pk(GeneveStat::dropped_critical_option) + pk(GeneveStat::dropped_options_unexamined),
		  frames);
}

TEST(GeneveStats, Names)
{
	EXPECT_STREQ(geneve_counter_name(static_cast<unsigned>(GeneveStat::matched)), "matched");
	EXPECT_STREQ(geneve_counter_name(static_cast<unsigned>(GeneveStat::no_target)), "no-target");
	EXPECT_STREQ(geneve_counter_name(static_cast<unsigned>(GeneveStat::dropped_cannot_decap)),
		     "dropped-cannot-decap");
	EXPECT_STREQ(geneve_counter_name(static_cast<unsigned>(GeneveStat::dropped_options_unexamined)),
		     "dropped-options-unexamined");
	EXPECT_STREQ(geneve_counter_name(kGeneveStats), "?");
}

// xo_gnv_cfg.gen changes by one bit per bump, so a frame reading it while
// the kernel copies the new value in, a byte at a time, sees the old value
// or the new one, never a third that an old cache entry could carry.
TEST(GeneveGen, EachBumpChangesOneBitAndNeverRepeatsSoon)
{
	uint32_t g = 0;
	std::set<uint32_t> seen{g};
	for (unsigned i = 0; i < 200000; i++) {
		uint32_t n = xo_gnv_gen_next(g);
		EXPECT_EQ(__builtin_popcount(n ^ g), 1) << "bump " << i << ": " << g << " -> " << n;
		EXPECT_TRUE(seen.insert(n).second) << "value " << n << " again after " << i << " bumps";
		g = n;
		if (HasFailure())
			break;
	}
	// from any value, also one a hand-written bump left
	for (uint32_t x : {0x7fffffffu, 0x80000000u, 0xffffffffu, 12345u})
		EXPECT_EQ(__builtin_popcount(xo_gnv_gen_next(x) ^ x), 1) << x;
}
