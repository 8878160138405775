// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// libxoffload's VLAN reconfiguration as the datapath sees it: the installed
// xdp_vlan with its maps pinned in a scratch bpffs directory, configured by
// VlanMaps, and after every library call the map state (one flip of the
// active bank, the old configuration intact in the other) and frames run
// through BPF_PROG_TEST_RUN.
#include <gtest/gtest.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "packet_builder.hpp"
#include "prog_run.hpp"
#include "xdp_vlan.skel.h"
#include "xoffload/core/owned.hpp"
#include "xoffload/vlan/vlan.hpp"

namespace xoffload::test {
namespace {

Bytes tagged(uint16_t vid, uint8_t pcp = 0)
{
	PacketBuilder b;
	b.eth(kMacB, kMacA);
	if (vid != 0xffff)
		b.vlan(kTpid8021Q, vid, pcp, false);
	return b.ipv4(kIpA, kIpB).udp(kPortA, kPortB).payload(18).build();
}

class VlanSwitch : public ::testing::Test {
protected:
	void SetUp() override
	{
		if (geteuid() != 0)
			GTEST_SKIP() << "needs root (BPF maps, BPF_PROG_TEST_RUN)";
		struct statfs st {};
		if (statfs("/sys/fs/bpf", &st) || st.f_type != BPF_FS_MAGIC)
			GTEST_SKIP() << "bpffs is not mounted on /sys/fs/bpf";
		char tmpl[] = "/sys/fs/bpf/xo-test-switch-XXXXXX";
		ASSERT_NE(mkdtemp(tmpl), nullptr);
		dir_ = tmpl;
		LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = dir_.c_str());
		skel_.reset(xdp_vlan_bpf__open_opts(&oo));
		ASSERT_TRUE(skel_);
		bpf_program__set_autoload(skel_->progs.xdp_vlan_mb, false);
		ASSERT_EQ(xdp_vlan_bpf__load(skel_.get()), 0);
		auto m = VlanMaps::open(dir_, "test");
		ASSERT_TRUE(m) << m.error().msg;
		maps_ = std::make_unique<VlanMaps>(std::move(*m));
	}
	void TearDown() override
	{
		maps_.reset();
		skel_.reset();
		if (!dir_.empty()) {
			for (const char *n : {"xo_vlan_cfg", "xo_vlan_vid", "xo_vlan_stats"})
				(void)unlink((dir_ + "/" + n).c_str());
			(void)rmdir(dir_.c_str());
		}
	}

	uint32_t active() const
	{
		auto b = maps_->active_bank(Dir::ingress);
		EXPECT_TRUE(b);
		return b ? *b : 99;
	}
	// The raw banks value and one VID slot of a bank, as the programs read them.
	xo_vlan_banks banks() const
	{
		xo_vlan_banks b{};
		uint32_t key = XO_DIR_INGRESS;
		EXPECT_EQ(bpf_map_lookup_elem(bpf_map__fd(skel_->maps.xo_vlan_cfg), &key, &b), 0);
		return b;
	}
	xo_vid_entry slot(uint32_t bank, uint16_t vid) const
	{
		xo_vid_entry e{};
		uint32_t key = xo_vid_key(bank, XO_DIR_INGRESS, vid);
		EXPECT_EQ(bpf_map_lookup_elem(bpf_map__fd(skel_->maps.xo_vlan_vid), &key, &e), 0);
		return e;
	}
	// The XDP verdict and output of one frame.
	ProgRun run(const Bytes &in) const { return prog_run(bpf_program__fd(skel_->progs.xdp_vlan), in, 64); }
	bool passes_unchanged(const Bytes &in) const
	{
		ProgRun r = run(in);
		return r.err == 0 && r.retval == XDP_PASS && r.out == in;
	}
	bool drops(const Bytes &in) const
	{
		ProgRun r = run(in);
		return r.err == 0 && r.retval == XDP_DROP;
	}

	std::string dir_;
	Owned<xdp_vlan_bpf, xdp_vlan_bpf__destroy> skel_;
	std::unique_ptr<VlanMaps> maps_;
};

// Each call flips the active bank once, and the bank it leaves still holds
// the configuration from before the call, whole: until the flip the
// programs read that one, after it only the new one.
TEST_F(VlanSwitch, EveryCallIsOneFlipWithTheOldBankIntact)
{
	EXPECT_EQ(active(), 0u) << "fresh maps: bank 0, the default policy";
	EXPECT_TRUE(passes_unchanged(tagged(10)));

	ASSERT_TRUE(maps_->set_allowed(Dir::ingress, {10, 11}, true));
	EXPECT_EQ(active(), 1u);
	xo_vlan_banks b = banks();
	EXPECT_EQ(b.bank[1].flags & XO_VLAN_F_ALLOW, unsigned{XO_VLAN_F_ALLOW});
	EXPECT_EQ(b.bank[1].bank, 1);
	EXPECT_EQ(slot(1, 10).flags, XO_VID_ALLOWED);
	EXPECT_EQ(b.bank[0].flags, 0u) << "the old bank: no allow-list";
	EXPECT_EQ(slot(0, 10).flags, 0);
	EXPECT_TRUE(passes_unchanged(tagged(10)));
	EXPECT_TRUE(drops(tagged(20))) << "VID 20 not allowed";
	EXPECT_TRUE(passes_unchanged(tagged(0, 5))) << "VID 0 (priority tag) bypasses the allow-list";
	EXPECT_TRUE(passes_unchanged(tagged(0xffff))) << "untagged";

	// allow --clear: VID 10 allowed before and after, so no frame of it may
	// ever meet the list without its bit (issue #15: the list was emptied
	// slot by slot while the flag stayed on)
	ASSERT_TRUE(maps_->clear_allowed(Dir::ingress));
	EXPECT_EQ(active(), 0u);
	b = banks();
	EXPECT_EQ(b.bank[0].flags & XO_VLAN_F_ALLOW, 0u);
	EXPECT_EQ(b.bank[0].bank, 0);
	EXPECT_EQ(b.bank[1].flags & XO_VLAN_F_ALLOW, unsigned{XO_VLAN_F_ALLOW}) << "old bank intact";
	EXPECT_EQ(slot(1, 10).flags, XO_VID_ALLOWED) << "old bank intact";
	EXPECT_EQ(slot(1, 11).flags, XO_VID_ALLOWED) << "old bank intact";
	EXPECT_EQ(slot(0, 10).flags, 0);
	EXPECT_TRUE(passes_unchanged(tagged(10)));
	EXPECT_TRUE(passes_unchanged(tagged(20)));

	ASSERT_TRUE(maps_->set_allowed(Dir::ingress, {10}, true));
	ASSERT_TRUE(maps_->set_rewrite(Dir::ingress, 10, 30));
	EXPECT_EQ(active(), 0u) << "two calls, two flips";
	b = banks();
	EXPECT_EQ(b.bank[0].flags, unsigned{XO_VLAN_F_ALLOW | XO_VLAN_F_REWRITE});
	EXPECT_EQ(slot(0, 10).rewrite_vid, 30);
	EXPECT_EQ(slot(0, 10).flags, XO_VID_ALLOWED) << "the allow bit carried into the new bank";
	ProgRun r = run(tagged(10, 3));
	EXPECT_EQ(r.retval, static_cast<uint32_t>(XDP_PASS));
	EXPECT_EQ(hexdump(r.out), hexdump(tagged(30, 3))) << "10 -> 30, PCP kept";

	// a push keeps the VID table; clear drops all of it in the same switch
	auto cur = maps_->policy(Dir::ingress);
	ASSERT_TRUE(cur);
	ASSERT_TRUE(maps_->set_policy(Dir::ingress, make_pop_policy(*cur, 1)));
	EXPECT_EQ(active(), 1u);
	EXPECT_EQ(slot(1, 10).rewrite_vid, 30);
	EXPECT_EQ(slot(1, 10).flags, XO_VID_ALLOWED);
	EXPECT_TRUE(drops(tagged(20)));
	ASSERT_TRUE(maps_->clear(Dir::ingress));
	EXPECT_EQ(active(), 0u);
	b = banks();
	EXPECT_EQ(b.bank[0].action, unsigned{XO_VLAN_ACT_NONE});
	EXPECT_EQ(b.bank[0].flags, 0u);
	EXPECT_EQ(slot(0, 10).flags, 0);
	EXPECT_EQ(slot(0, 10).rewrite_vid, 0);
	EXPECT_EQ(b.bank[1].action, unsigned{XO_VLAN_ACT_POP}) << "old bank intact";
	EXPECT_EQ(slot(1, 10).rewrite_vid, 30) << "old bank intact";
	EXPECT_TRUE(passes_unchanged(tagged(10)));
	EXPECT_TRUE(passes_unchanged(tagged(20)));
	auto rules = maps_->vid_rules(Dir::ingress);
	ASSERT_TRUE(rules);
	EXPECT_TRUE(rules->empty());
}

// The programs read the active bank only: a configuration written into the
// other one (as a library call does before it flips) changes nothing until
// `active` flips, and then all of it applies at once.
TEST_F(VlanSwitch, InactiveBankIsNeverRead)
{
	ASSERT_TRUE(maps_->set_allowed(Dir::ingress, {10}, true));
	ASSERT_EQ(active(), 1u);
	int cfg = bpf_map__fd(skel_->maps.xo_vlan_cfg), vid = bpf_map__fd(skel_->maps.xo_vlan_vid);
	uint32_t key = XO_DIR_INGRESS;

	// bank 0: drop everything tagged (empty allow-list) and pop otherwise
	xo_vlan_banks b = banks();
	b.bank[0] = xo_vlan_policy{};
	b.bank[0].abi_version = XO_ABI_VERSION;
	b.bank[0].action = XO_VLAN_ACT_POP;
	b.bank[0].pop_depth = 1;
	b.bank[0].flags = XO_VLAN_F_ALLOW | XO_VLAN_F_REWRITE;
	b.bank[0].bank = 0;
	xo_vlan_policy_compile(&b.bank[0]);
	ASSERT_EQ(bpf_map_update_elem(cfg, &key, &b, BPF_ANY), 0);
	xo_vid_entry e{0, 99};
	uint32_t k = xo_vid_key(0, XO_DIR_INGRESS, 10);
	ASSERT_EQ(bpf_map_update_elem(vid, &k, &e, BPF_ANY), 0);

	EXPECT_TRUE(passes_unchanged(tagged(10))) << "bank 1 still active";
	EXPECT_TRUE(drops(tagged(20)));
	b.active = 0;	// the flip alone
	ASSERT_EQ(bpf_map_update_elem(cfg, &key, &b, BPF_ANY), 0);
	EXPECT_TRUE(drops(tagged(10))) << "bank 0: VID 10 not allowed there";
	EXPECT_TRUE(drops(tagged(20)));
	ProgRun r = run(tagged(0xffff));
	EXPECT_EQ(r.retval, static_cast<uint32_t>(XDP_PASS));
}

// Pins of the layout before ABI 4 (one policy per direction) are refused
// with a line that says what to do, not misread.
TEST_F(VlanSwitch, OlderPinnedLayoutIsRefused)
{
	char tmpl[] = "/sys/fs/bpf/xo-test-old-XXXXXX";
	ASSERT_NE(mkdtemp(tmpl), nullptr);
	std::string old = tmpl;
	int cfg = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xo_vlan_cfg", 4, 28, XO_DIR_MAX, nullptr);
	int vid = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xo_vlan_vid", 4, 4, XO_DIR_MAX * XO_VID_SLOTS, nullptr);
	int st = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "xo_vlan_stats", 4, sizeof(xo_vlan_stats),
				XO_HOOK_MAX, nullptr);
	ASSERT_TRUE(cfg >= 0 && vid >= 0 && st >= 0);
	EXPECT_EQ(bpf_obj_pin(cfg, (old + "/xo_vlan_cfg").c_str()), 0);
	EXPECT_EQ(bpf_obj_pin(vid, (old + "/xo_vlan_vid").c_str()), 0);
	EXPECT_EQ(bpf_obj_pin(st, (old + "/xo_vlan_stats").c_str()), 0);
	auto m = VlanMaps::open(old, "eth9");
	EXPECT_FALSE(m);
	if (!m) {
		EXPECT_NE(m.error().msg.find("older xoffload"), std::string::npos) << m.error().msg;
	}
	for (const char *n : {"xo_vlan_cfg", "xo_vlan_vid", "xo_vlan_stats"})
		(void)unlink((old + "/" + n).c_str());
	(void)rmdir(old.c_str());
	close(cfg);
	close(vid);
	close(st);
}

} // namespace
} // namespace xoffload::test
