// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// RX VLAN offloads: ethtool netlink feature replies (verbose and compact
// bitsets, and one recorded from a veth), the stripping record kept with the
// pins (take, release, the last holder restores), and the hardware VLAN
// filter line per driver.
#include <gtest/gtest.h>

#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "xoffload/core/ethtool_features.hpp"
#include "xoffload/vlan/rx_vlan.hpp"

namespace xoffload {
namespace {

// A FEATURES_GET_REPLY under construction.
class Reply {
public:
	Reply() : buf_(8192)
	{
		nlh_ = mnl_nlmsg_put_header(buf_.data());
		nlh_->nlmsg_type = 20;	// the ethtool family id does not matter here
		auto *g = static_cast<genlmsghdr *>(mnl_nlmsg_put_extra_header(nlh_, sizeof(genlmsghdr)));
		g->cmd = ETHTOOL_MSG_FEATURES_GET_REPLY;
		g->version = 1;
		nlattr *h = mnl_attr_nest_start(nlh_, ETHTOOL_A_FEATURES_HEADER);
		mnl_attr_put_u32(nlh_, ETHTOOL_A_HEADER_DEV_INDEX, 7);
		mnl_attr_put_strz(nlh_, ETHTOOL_A_HEADER_DEV_NAME, "eth0");
		mnl_attr_nest_end(nlh_, h);
	}
	// A verbose list (NOMASK): the names given are the bits set.
	Reply &list(uint16_t type, const std::vector<std::pair<uint32_t, std::string>> &bits, uint32_t size = 64)
	{
		nlattr *n = mnl_attr_nest_start(nlh_, type);
		mnl_attr_put(nlh_, ETHTOOL_A_BITSET_NOMASK, 0, nullptr);
		mnl_attr_put_u32(nlh_, ETHTOOL_A_BITSET_SIZE, size);
		nlattr *b = mnl_attr_nest_start(nlh_, ETHTOOL_A_BITSET_BITS);
		for (const auto &[i, name] : bits) {
			nlattr *bit = mnl_attr_nest_start(nlh_, ETHTOOL_A_BITSET_BITS_BIT);
			mnl_attr_put_u32(nlh_, ETHTOOL_A_BITSET_BIT_INDEX, i);
			mnl_attr_put_strz(nlh_, ETHTOOL_A_BITSET_BIT_NAME, name.c_str());
			mnl_attr_nest_end(nlh_, bit);
		}
		mnl_attr_nest_end(nlh_, b);
		mnl_attr_nest_end(nlh_, n);
		return *this;
	}
	// A compact bitset: value words, with a mask unless @mask is empty.
	Reply &compact(uint16_t type, uint32_t size, const std::vector<uint32_t> &value,
		       const std::vector<uint32_t> &mask = {})
	{
		nlattr *n = mnl_attr_nest_start(nlh_, type);
		if (mask.empty())
			mnl_attr_put(nlh_, ETHTOOL_A_BITSET_NOMASK, 0, nullptr);
		mnl_attr_put_u32(nlh_, ETHTOOL_A_BITSET_SIZE, size);
		mnl_attr_put(nlh_, ETHTOOL_A_BITSET_VALUE, value.size() * 4, value.data());
		if (!mask.empty())
			mnl_attr_put(nlh_, ETHTOOL_A_BITSET_MASK, mask.size() * 4, mask.data());
		mnl_attr_nest_end(nlh_, n);
		return *this;
	}
	const nlmsghdr *msg() const { return nlh_; }

private:
	std::vector<char> buf_;
	nlmsghdr *nlh_;
};

// Feature bits as a 6.12 kernel numbers them (enum netdev_features): the
// names matter, the indexes only for the compact form.
constexpr uint32_t kCtagRx = 8, kCtagFilter = 9, kStagRx = 11, kRxAll = 47;

TEST(EthtoolFeatures, VerboseReply)
{
	// igb as it comes up: rxvlan on and changeable, the filter on [fixed]
	Reply r;
	r.list(ETHTOOL_A_FEATURES_HW, {{kCtagRx, "rx-vlan-hw-parse"}, {kRxAll, "rx-all"}})
		.list(ETHTOOL_A_FEATURES_WANTED, {{kCtagRx, "rx-vlan-hw-parse"}, {kCtagFilter, "rx-vlan-filter"}})
		.list(ETHTOOL_A_FEATURES_ACTIVE, {{kCtagRx, "rx-vlan-hw-parse"}, {kCtagFilter, "rx-vlan-filter"}})
		.list(ETHTOOL_A_FEATURES_NOCHANGE, {{kCtagFilter, "rx-vlan-filter"}});
	auto fs = parse_features_reply(r.msg());
	ASSERT_TRUE(fs) << fs.error().msg;
	const EthtoolFeature *rx = fs->find("rx-vlan-hw-parse");
	ASSERT_NE(rx, nullptr);
	EXPECT_TRUE(rx->active);
	EXPECT_FALSE(rx->fixed());
	const EthtoolFeature *filt = fs->find("rx-vlan-filter");
	ASSERT_NE(filt, nullptr);
	EXPECT_TRUE(filt->active);
	EXPECT_TRUE(filt->fixed());
	const EthtoolFeature *all = fs->find("rx-all");
	ASSERT_NE(all, nullptr);
	EXPECT_FALSE(all->active);
	EXPECT_FALSE(all->fixed());
	EXPECT_EQ(fs->find("rx-vlan-stag-hw-parse"), nullptr);	// in no list: every bit clear
	EXPECT_FALSE(fs->active("rx-vlan-stag-hw-parse"));
}

TEST(EthtoolFeatures, CompactReplyNamedFromTheStringSet)
{
	std::vector<std::string> names(64);
	for (uint32_t i = 0; i < names.size(); i++)
		names[i] = "f" + std::to_string(i);
	names[kCtagRx] = "rx-vlan-hw-parse";
	names[kStagRx] = "rx-vlan-stag-hw-parse";
	names[kCtagFilter] = "rx-vlan-filter";
	names[kRxAll] = "rx-all";
	const uint32_t lo = 1u << kCtagRx | 1u << kStagRx | 1u << kCtagFilter;
	Reply r;
	r.compact(ETHTOOL_A_FEATURES_HW, 64, {lo, 1u << (kRxAll - 32)})
		.compact(ETHTOOL_A_FEATURES_ACTIVE, 64, {1u << kStagRx | 1u << kCtagFilter, 0})
		.compact(ETHTOOL_A_FEATURES_NOCHANGE, 64, {1u << kCtagFilter, 0});
	auto fs = parse_features_reply(r.msg(), names);
	ASSERT_TRUE(fs) << fs.error().msg;
	EXPECT_FALSE(fs->active("rx-vlan-hw-parse"));
	EXPECT_TRUE(fs->active("rx-vlan-stag-hw-parse"));
	EXPECT_TRUE(fs->find("rx-vlan-filter")->fixed());
	EXPECT_FALSE(fs->find("rx-vlan-stag-hw-parse")->fixed());
	EXPECT_TRUE(fs->find("rx-all")->hw);
	EXPECT_FALSE(fs->active("rx-all"));
}

TEST(EthtoolFeatures, CompactWithMaskKeepsOnlyMaskedBits)
{
	Reply r;
	r.compact(ETHTOOL_A_FEATURES_WANTED, 40, {0x3, 0x80}, {0x1, 0x80});
	auto fs = parse_features_reply(r.msg(), {"a", "b"});
	ASSERT_TRUE(fs);
	EXPECT_TRUE(fs->find("a")->wanted);
	EXPECT_EQ(fs->find("b"), nullptr);		// outside the mask
	EXPECT_TRUE(fs->find("bit39")->wanted);		// beyond the names given
}

TEST(EthtoolFeatures, MalformedCompactIsAnError)
{
	Reply r;
	r.compact(ETHTOOL_A_FEATURES_ACTIVE, 96, {0x1});	// 3 words promised, 1 sent
	auto fs = parse_features_reply(r.msg());
	ASSERT_FALSE(fs);
	EXPECT_EQ(fs.error().err, EPROTO);
}

// ---- the record kept with the pins ----------------------------------------

class RxVlanRecordTest : public ::testing::Test {
protected:
	void SetUp() override
	{
		char tmpl[] = "/tmp/xo-rxvlan-XXXXXX";
		ASSERT_NE(::mkdtemp(tmpl), nullptr);
		dir_ = tmpl;
	}
	void TearDown() override { std::filesystem::remove_all(dir_); }

	// Stands in for ethtool: applies the requests to `on_`.
	FeatureSetter setter()
	{
		return [this](const std::string &ifname, const std::vector<std::pair<std::string, bool>> &want) -> Status {
			EXPECT_EQ(ifname, "eth9");
			for (const auto &[n, v] : want) {
				calls_.push_back(n + (v ? "=on" : "=off"));
				on_[n] = v;
			}
			return ok();
		};
	}
	static RxVlanFacts igb()
	{
		RxVlanFacts f;
		f.driver = "igb";
		f.ctag_strip = true;
		f.stag_fixed = true;
		return f;
	}

	std::string dir_;
	std::map<std::string, bool> on_{{kRxVlanCtag, true}};
	std::vector<std::string> calls_;
};

TEST_F(RxVlanRecordTest, TurnedOffWhileHeldRestoredByTheLastHolder)
{
	auto t = rx_vlan_take_at(dir_, "eth9", igb(), "vlan", TagReader::xdp_vlan, false, setter());
	ASSERT_TRUE(t) << t.error().msg;
	EXPECT_NE(t->find("turned rx-vlan-hw-parse off on eth9"), std::string::npos) << *t;
	EXPECT_FALSE(on_[kRxVlanCtag]);
	RxVlanRecord rec = rx_vlan_record(dir_);
	EXPECT_EQ(rec.turned_off, std::vector<std::string>{kRxVlanCtag});
	EXPECT_EQ(rec.holders, std::vector<std::string>{"vlan"});

	// a recv joins: the device already strips nothing, nothing changes
	RxVlanFacts now = igb();
	now.ctag_strip = false;
	auto t2 = rx_vlan_take_at(dir_, "eth9", now, "xsk-42", TagReader::xdp_xsk, false, setter());
	ASSERT_TRUE(t2);
	EXPECT_EQ(*t2, "");
	EXPECT_EQ(rx_vlan_record(dir_).holders.size(), 2u);
	EXPECT_EQ(calls_.size(), 1u);

	// the first to leave restores nothing; the last restores
	ASSERT_TRUE(rx_vlan_release_at(dir_, "eth9", "vlan", setter()));
	EXPECT_FALSE(on_[kRxVlanCtag]);
	ASSERT_TRUE(rx_vlan_release_at(dir_, "eth9", "xsk-42", setter()));
	EXPECT_TRUE(on_[kRxVlanCtag]);
	EXPECT_EQ(calls_, (std::vector<std::string>{"rx-vlan-hw-parse=off", "rx-vlan-hw-parse=on"}));
	rec = rx_vlan_record(dir_);
	EXPECT_TRUE(rec.turned_off.empty());
	EXPECT_TRUE(rec.holders.empty());
	// a holder never recorded changes nothing
	ASSERT_TRUE(rx_vlan_release_at(dir_, "eth9", "xsk-7", setter()));
	EXPECT_EQ(calls_.size(), 2u);
}

TEST_F(RxVlanRecordTest, KeepLeavesTheDeviceAndSaysWhatWillNotWork)
{
	auto t = rx_vlan_take_at(dir_, "eth9", igb(), "vlan", TagReader::xdp_vlan, true, setter());
	ASSERT_TRUE(t);
	EXPECT_TRUE(calls_.empty());
	EXPECT_TRUE(on_[kRxVlanCtag]);
	EXPECT_NE(t->find("--keep-rx-vlan"), std::string::npos) << *t;
	EXPECT_NE(t->find("xdp_vlan never sees them"), std::string::npos) << *t;
	EXPECT_TRUE(rx_vlan_record(dir_).holders.empty());
}

TEST_F(RxVlanRecordTest, FixedStrippingIsReportedNotTouched)
{
	RxVlanFacts f;
	f.driver = "veth";
	f.ctag_strip = true;
	f.ctag_fixed = true;
	f.meta_kfunc = true;
	auto t = rx_vlan_take_at(dir_, "eth9", f, "vlan", TagReader::xdp_vlan, false, setter());
	ASSERT_TRUE(t);
	EXPECT_TRUE(calls_.empty());
	EXPECT_NE(t->find("[fixed]"), std::string::npos) << *t;
	EXPECT_NE(t->find("dropped-tag-in-metadata"), std::string::npos) << *t;
	EXPECT_TRUE(rx_vlan_record(dir_).holders.empty());
}

TEST_F(RxVlanRecordTest, FailedSetLeavesNoRecord)
{
	FeatureSetter refuse = [](const std::string &, const std::vector<std::pair<std::string, bool>> &) -> Status {
		return runtime_error("driver says no", EOPNOTSUPP);
	};
	auto t = rx_vlan_take_at(dir_, "eth9", igb(), "vlan", TagReader::xdp_vlan, false, refuse);
	ASSERT_FALSE(t);
	RxVlanRecord rec = rx_vlan_record(dir_);
	EXPECT_TRUE(rec.turned_off.empty());
	EXPECT_TRUE(rec.holders.empty());
}

// ---- hardware VLAN filters --------------------------------------------------

struct FilterCase {
	const char *name;
	const char *driver;	// the ethtool driver name; its facts are the 6.12 ones
	bool on, fixed, promisc, rx_all, rx_all_changeable;
	size_t uppers;
	const char *expect;	// substring of the line, "" = no line
	const char *never = nullptr;	// not in the line
};

TEST(VlanFilterAdvice, PerDriver)
{
	const FilterCase cases[] = {
		{"igb default: every tagged frame dropped", "igb", true, true, false, false, true, 0,
		 "dropped before XDP and TC see them (ip link set eth0 promisc on, or ethtool -K eth0 rx-all on)"},
		{"igb with one VLAN device: only its VID", "igb", true, true, false, false, true, 1,
		 "only the VIDs of its 1 VLAN device(s) arrive"},
		{"igb promiscuous: open", "igb", true, true, true, false, true, 0, ""},
		{"igb rx-all: open", "igb", true, true, false, true, true, 0, ""},
		{"i40e without VIDs: I40E_VLAN_ANY", "i40e", true, true, false, false, false, 0, ""},
		{"i40e once a VID is registered", "i40e", true, true, false, false, false, 2,
		 "once a VID is registered: only the VIDs of its 2 VLAN device(s), and untagged frames"},
		{"i40e promiscuous: open", "i40e", true, true, true, false, false, 2, ""},
		{"virtio_net fixed, no rx-all", "virtio_net", true, true, false, false, false, 0,
		 "(ip link set eth0 promisc on)", "rx-all"},
		{"virtio_net: the host filters", "virtio_net", true, true, false, false, false, 0,
		 "virtio_net on eth0 has the host filter VLANs (rx-vlan-filter on [fixed])", "in hardware"},
		{"vmxnet3: the host filters", "vmxnet3", true, true, false, false, false, 0,
		 "has the host filter VLANs", "in hardware"},
		{"changeable filter: can be turned off", "ixgbe", true, false, false, false, false, 0,
		 "ethtool -K eth0 rx-vlan-filter off"},
		{"unmodelled: may be dropped", "ixgbe", true, false, false, false, false, 0, "tagged frames may be dropped"},
		{"unmodelled: rx-all taken to open it", "ixgbe", true, true, false, false, true, 0,
		 "or ethtool -K eth0 rx-all on"},
		{"igc: AF_XDP facts only, its filter taken as it shows", "igc", true, true, false, false, true, 0,
		 "(rx-vlan-filter on [fixed]) and no VLAN device registered a VID: tagged frames are dropped before XDP "
		 "and TC see them (ip link set eth0 promisc on, or ethtool -K eth0 rx-all on)"},
		{"changeable filter with VLAN devices: their VIDs are wanted", "ixgbe", true, false, false, false, false, 1,
		 ""},
		// mlx4 and mlx5: rx-all keeps bad-FCS frames, the VLAN filter stays
		{"mlx4 default: rx-all is no remedy", "mlx4_en", true, true, false, false, true, 0,
		 "tagged frames are dropped before XDP and TC see them (ip link set eth0 promisc on)", "rx-all"},
		{"mlx4 with rx-all on: still filtered", "mlx4_en", true, true, false, true, true, 0,
		 "rx-vlan-filter on [fixed]"},
		{"mlx5 changeable: turn it off", "mlx5_core", true, false, false, false, true, 0,
		 "tagged frames are dropped before XDP and TC see them (ethtool -K eth0 rx-vlan-filter off, or ip link "
		 "set eth0 promisc on)",
		 "rx-all"},
		{"mlx5 turned off: nothing", "mlx5_core", false, false, false, false, true, 0, ""},
		{"ice changeable with a VLAN device: its VID is wanted", "ice", true, false, false, false, false, 1, ""},
		{"ice default", "ice", true, false, false, false, false, 0, "are dropped before XDP"},
		{"no filter (veth)", "veth", false, false, false, false, false, 0, ""},
	};
	for (const auto &c : cases) {
		RxVlanFacts f;
		f.driver = c.driver;
		f.filter_on = c.on;
		f.filter_fixed = c.fixed;
		f.promisc = c.promisc;
		f.rx_all = c.rx_all;
		f.rx_all_changeable = c.rx_all_changeable;
		f.vlan_uppers = c.uppers;
		rx_vlan_apply_facts(f, features::nic_facts(dev_kind_from_name(c.driver).value_or(DevKind::unknown),
							   KernelVersion::v6_12));
		std::string line = vlan_filter_advice(f, "eth0");
		if (!*c.expect) {
			EXPECT_EQ(line, "") << c.name;
		} else {
			EXPECT_NE(line.find(c.expect), std::string::npos) << c.name << ": " << line;
		}
		if (c.never) {
			EXPECT_EQ(line.find(c.never), std::string::npos) << c.name << ": " << line;
		}
	}
}

// The strip features say what is on; the driver's facts say whether "on"
// means a tag outside the frame at XDP (veth shows them on, strips nothing).
TEST(RxVlanApplyFacts, StripFeaturesPerDriver)
{
	struct Row {
		DevKind drv;
		bool ctag, stag;	// what the live features say
		bool want_ctag, want_stag;
	};
	const Row rows[] = {
		{DevKind::veth, true, true, false, false},
		{DevKind::virtio_net, true, false, false, false},
		{DevKind::igb, true, false, true, false},
		{DevKind::i40e, true, false, true, false},
		{DevKind::mlx4_en, true, true, true, true},
		{DevKind::mlx5_core, false, false, false, false},
		{DevKind::ice, true, false, true, false},
		{DevKind::vmxnet3, true, false, true, false},
		{DevKind::unknown, true, true, true, true},	// not modelled: the features taken at their word
		{DevKind::igc, true, false, true, false},	// igc's RX VLAN facts not modelled: likewise
	};
	for (const auto &r : rows)
		for (KernelVersion k : {KernelVersion::v6_1, KernelVersion::v6_12}) {
			RxVlanFacts f;
			f.ctag_strip = r.ctag;
			f.stag_strip = r.stag;
			rx_vlan_apply_facts(f, features::nic_facts(r.drv, k));
			EXPECT_EQ(f.ctag_strip, r.want_ctag) << dev_kind_name(r.drv);
			EXPECT_EQ(f.stag_strip, r.want_stag) << dev_kind_name(r.drv);
			EXPECT_EQ(f.nic.driver, r.drv);
		}
	// nothing left to turn off on veth: no ethtool call, no line
	RxVlanFacts v;
	v.driver = "veth";
	v.ctag_strip = true;
	rx_vlan_apply_facts(v, features::nic_facts(DevKind::veth, KernelVersion::v6_12));
	std::vector<std::string> calls;
	FeatureSetter set = [&](const std::string &, const std::vector<std::pair<std::string, bool>> &w) -> Status {
		for (const auto &[n, on] : w)
			calls.push_back(n);
		return ok();
	};
	char tmpl[] = "/tmp/xo-rxvlan-veth-XXXXXX";
	ASSERT_NE(::mkdtemp(tmpl), nullptr);
	auto t = rx_vlan_take_at(tmpl, "veth9", v, "vlan", TagReader::xdp_vlan, false, set);
	std::filesystem::remove_all(tmpl);
	ASSERT_TRUE(t) << t.error().msg;
	EXPECT_EQ(*t, "");
	EXPECT_TRUE(calls.empty());
}

} // namespace
} // namespace xoffload
