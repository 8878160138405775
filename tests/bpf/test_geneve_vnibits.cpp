// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// GeneveMaps keeps the VNI bitmap (xo_gnv_vnibits, abi.h) in step with the
// rules: a rule's bit set before the rule, cleared after its delete unless
// another rule shares it, xo_gnv_cfg.vnibits_gen == gen after every change;
// and pins of an older xoffload (no bitmap pin, or rules it wrote since)
// get the whole bitmap made anew at the next change or sync_vnibits().
// What xdp_geneve does with the bitmap: test_geneve_bpf.cpp.
#include <gtest/gtest.h>

#include <bpf/bpf.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <bit>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "xoffload/core/owned.hpp"
#include "xoffload/geneve/geneve.hpp"

namespace xoffload::test {
namespace {

class VniBits : public ::testing::Test {
protected:
	void SetUp() override
	{
		struct statfs s;
		if (geteuid() != 0)
			GTEST_SKIP() << "needs root (bpffs)";
		if (statfs("/sys/fs/bpf", &s) || s.f_type != BPF_FS_MAGIC)
			GTEST_SKIP() << "needs bpffs mounted at /sys/fs/bpf";
		dir_ = "/sys/fs/bpf/xo-vnibits-" + std::to_string(getpid());
		std::error_code ec;
		std::filesystem::remove_all(dir_, ec);
		ASSERT_TRUE(std::filesystem::create_directories(dir_, ec)) << dir_;
		names_ = geneve_map_names();
		ASSERT_EQ(names_.size(), 9u);
	}
	void TearDown() override
	{
		std::error_code ec;
		if (!dir_.empty())
			std::filesystem::remove_all(dir_, ec);
	}

	int pin(size_t i) const
	{
		return bpf_obj_get((dir_ + "/" + names_[i]).c_str());
	}
	// Every bit of the pinned bitmap set, by bit number.
	std::set<uint32_t> bits() const
	{
		UniqueFd fd(pin(8));
		EXPECT_TRUE(fd.valid()) << "the bitmap is pinned";
		std::set<uint32_t> out;
		for (uint32_t w = 0; fd.valid() && w < XO_GNV_VNIBITS_WORDS; w++) {
			uint64_t v = 0;
			EXPECT_EQ(bpf_map_lookup_elem(fd.get(), &w, &v), 0);
			for (; v; v &= v - 1)
				out.insert(w * 64 + static_cast<uint32_t>(std::countr_zero(v)));
		}
		return out;
	}
	static std::set<uint32_t> bits_of(std::initializer_list<uint32_t> vnis)
	{
		std::set<uint32_t> out;
		for (uint32_t v : vnis)
			out.insert(xo_gnv_vnibit(v));
		return out;
	}
	static void in_step(const GeneveMaps &m)
	{
		auto c = m.cfg();
		ASSERT_TRUE(c) << c.error().msg;
		EXPECT_EQ(c->vnibits_gen, c->gen) << "the config says the bitmap is in step";
		EXPECT_NE(c->gen, 0u);
	}
	// A rule written as an xoffload without the bitmap writes it: the rule,
	// then a new gen, vnibits_gen left as it was.
	void old_writer_rule(uint32_t vni) const
	{
		UniqueFd rules(pin(1)), cfg(pin(2));
		ASSERT_TRUE(rules.valid() && cfg.valid());
		xo_gnv_rule r{XO_GNV_ACT_DROP, 1, 9};
		ASSERT_EQ(bpf_map_update_elem(rules.get(), &vni, &r, BPF_ANY), 0);
		uint32_t zero = 0;
		xo_gnv_cfg c{};
		ASSERT_EQ(bpf_map_lookup_elem(cfg.get(), &zero, &c), 0);
		c.gen = xo_gnv_gen_next(c.gen);
		ASSERT_EQ(bpf_map_update_elem(cfg.get(), &zero, &c, BPF_ANY), 0);
	}

	std::string dir_;
	std::vector<std::string> names_;
};

TEST_F(VniBits, RuleChangesKeepTheBitmapInStep)
{
	auto m = GeneveMaps::open(dir_, "vnitest", true);
	ASSERT_TRUE(m) << m.error().msg;
	EXPECT_TRUE(bits().empty());
	for (uint32_t vni : {10u, 20u, 30u, 0xffffffu})
		ASSERT_TRUE(m->rule_set({vni, XO_GNV_ACT_DROP, 1})) << vni;
	// the default rule has no bit: it is what a clear bit means
	ASSERT_TRUE(m->rule_set({XO_GNV_VNI_DEFAULT, XO_GNV_ACT_DROP, 1}));
	EXPECT_EQ(bits(), bits_of({10, 20, 30, 0xffffff}));
	in_step(*m);
	ASSERT_TRUE(m->rule_del(20));
	EXPECT_EQ(bits(), bits_of({10, 30, 0xffffff}));
	in_step(*m);
	// a change that is not a rule's keeps it in step too
	ASSERT_TRUE(m->set_verify_csum(true));
	in_step(*m);
	EXPECT_EQ(bits(), bits_of({10, 30, 0xffffff}));
}

// Two VNIs whose bits are one: deleting either keeps the bit of the other.
TEST_F(VniBits, ASharedBitStaysWhileOneOfItsRulesDoes)
{
	const uint32_t a = 77, want = xo_gnv_vnibit(a);
	uint32_t b = a + 1;
	while (b <= XO_GNV_VNI_MAX && xo_gnv_vnibit(b) != want)
		b++;
	ASSERT_LE(b, XO_GNV_VNI_MAX) << "no VNI shares the bit of " << a;
	auto m = GeneveMaps::open(dir_, "vnitest", true);
	ASSERT_TRUE(m) << m.error().msg;
	ASSERT_TRUE(m->rule_set({a, XO_GNV_ACT_DROP, 1}));
	ASSERT_TRUE(m->rule_set({b, XO_GNV_ACT_PASS, 1}));
	ASSERT_TRUE(m->rule_del(a));
	EXPECT_EQ(bits(), bits_of({b}));
	ASSERT_TRUE(m->rule_del(b));
	EXPECT_TRUE(bits().empty());
	in_step(*m);
}

// Pins an older xoffload made: no bitmap pin, and rules it wrote with gens
// it bumped. Opening them works (status reads them as they are); the next
// change pins the bitmap and makes it from every rule, as sync_vnibits()
// (attach) does.
TEST_F(VniBits, OlderPinsGetTheWholeBitmapAtTheNextChange)
{
	{
		auto m = GeneveMaps::open(dir_, "vnitest", true);
		ASSERT_TRUE(m) << m.error().msg;
		ASSERT_TRUE(m->rule_set({10, XO_GNV_ACT_DROP, 1}));
	}
	ASSERT_EQ(::unlink((dir_ + "/" + names_[8]).c_str()), 0);
	old_writer_rule(40);
	{
		auto m = GeneveMaps::open(dir_, "vnitest", false);
		ASSERT_TRUE(m) << m.error().msg;
		EXPECT_FALSE(std::filesystem::exists(dir_ + "/" + names_[8])) << "opening changes nothing";
		ASSERT_TRUE(m->sync_vnibits());
		EXPECT_EQ(bits(), bits_of({10, 40}));
		in_step(*m);
	}
	// the pin there, a rule written by the older xoffload since: the next
	// change of any kind makes the bitmap anew
	old_writer_rule(50);
	auto m = GeneveMaps::open(dir_, "vnitest", false);
	ASSERT_TRUE(m) << m.error().msg;
	ASSERT_TRUE(m->option_known(0x0102, true));
	EXPECT_EQ(bits(), bits_of({10, 40, 50}));
	in_step(*m);
	// and sync on a bitmap in step writes nothing, not even a gen
	auto before = m->cfg();
	ASSERT_TRUE(before);
	ASSERT_TRUE(m->sync_vnibits());
	auto after = m->cfg();
	ASSERT_TRUE(after);
	EXPECT_EQ(after->gen, before->gen);
}

} // namespace
} // namespace xoffload::test
