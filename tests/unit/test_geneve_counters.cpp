// xdp_geneve counts each frame once; `geneve stats` derives matched, passed
// and dropped-malformed from those exclusive reasons.
#include <gtest/gtest.h>

#include "xoffload/geneve.hpp"

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
			  bit(XO_GNV_CNT_REDIRECTED));
	EXPECT_EQ(pk(GeneveStat::passed), bit(XO_GNV_CNT_PASSED) | bit(XO_GNV_CNT_NO_TARGET));
	EXPECT_EQ(pk(GeneveStat::dropped_rule), bit(XO_GNV_CNT_DROP_RULE));
	EXPECT_EQ(pk(GeneveStat::dropped_malformed), bit(XO_GNV_CNT_DROP_MALFORMED) | bit(XO_GNV_CNT_DECAP_FAILED));
	EXPECT_EQ(pk(GeneveStat::dropped_critical_option), bit(XO_GNV_CNT_DROP_CRIT_OPT));
	EXPECT_EQ(pk(GeneveStat::bad_checksum), bit(XO_GNV_CNT_BAD_CSUM));
	EXPECT_EQ(pk(GeneveStat::decapped), bit(XO_GNV_CNT_DECAPPED));
	EXPECT_EQ(pk(GeneveStat::redirected), bit(XO_GNV_CNT_REDIRECTED));
	EXPECT_EQ(pk(GeneveStat::no_target), bit(XO_GNV_CNT_NO_TARGET));
	EXPECT_EQ(s[static_cast<unsigned>(GeneveStat::passed)].bytes,
		  (uint64_t{100} << XO_GNV_CNT_PASSED) + (uint64_t{100} << XO_GNV_CNT_NO_TARGET));

	// Every frame is in exactly one of not-geneve, matched, dropped-malformed
	// before the rule, dropped-critical-option.
	uint64_t frames = 0;
	for (unsigned r = 0; r < XO_GNV_CNT_MAX; r++)
		frames += raw[r].packets;
	EXPECT_EQ(pk(GeneveStat::not_geneve) + pk(GeneveStat::matched) + raw[XO_GNV_CNT_DROP_MALFORMED].packets +
			  pk(GeneveStat::dropped_critical_option),
		  frames);
}

TEST(GeneveStats, Names)
{
	EXPECT_STREQ(geneve_counter_name(static_cast<unsigned>(GeneveStat::matched)), "matched");
	EXPECT_STREQ(geneve_counter_name(static_cast<unsigned>(GeneveStat::no_target)), "no-target");
	EXPECT_STREQ(geneve_counter_name(kGeneveStats), "?");
}
