// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Queues: xdp_geneve's XSKMAP index by rx queue (abi.h), the --queues list
// syntax, the ethtool CHANNELS_GET reply parser on a built message, and the
// per-driver steering remedy of recv's more-queues-than-sockets line.
#include <gtest/gtest.h>

#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include <string>
#include <vector>

#include "xoffload/core/abi_check.hpp"
#include "xoffload/features/channels.hpp"

namespace xoffload {
namespace {

TEST(XskSlot, OneRowPerRxQueue)
{
	struct Row {
		uint32_t rxq, hash, queues, want;
	};
	const std::vector<Row> rows = {
		{0, 0, 4, 0},
		{0, 7, 4, 3},
		{1, 7, 4, XO_GNV_MAX_QUEUES + 3},
		{3, 9, 4, 3 * XO_GNV_MAX_QUEUES + 1},
		{2, 5, 1, 2 * XO_GNV_MAX_QUEUES},
		{5, 0xffffffffu, 64, 5 * XO_GNV_MAX_QUEUES + 63},
		{XO_GNV_MAX_RXQ - 1, 130, 64, XO_GNV_XSK_SLOTS - 64 + 2},	// the last row
		{XO_GNV_MAX_RXQ, 1, 4, XO_GNV_XSK_SLOTS},	// beyond the map: no entry
		{0xffffffffu, 1, 4, XO_GNV_XSK_SLOTS},	// no overflow into the map
		{1, 9, 0, XO_GNV_MAX_QUEUES},		// a rule's queues out of range count as 1
		{1, 9, 65, XO_GNV_MAX_QUEUES},
	};
	for (const auto &r : rows)
		EXPECT_EQ(xo_gnv_xsk_slot(r.rxq, r.hash, r.queues), r.want)
			<< "rxq " << r.rxq << " hash " << r.hash << " queues " << r.queues;
	// every (queue, slot) pair has an index of its own, inside the map
	std::vector<int> seen(XO_GNV_XSK_SLOTS, 0);
	for (uint32_t q = 0; q < XO_GNV_MAX_RXQ; q++)
		for (uint32_t h = 0; h < XO_GNV_MAX_QUEUES; h++) {
			uint32_t i = xo_gnv_xsk_slot(q, h, XO_GNV_MAX_QUEUES);
			ASSERT_LT(i, static_cast<uint32_t>(XO_GNV_XSK_SLOTS));
			seen[i]++;
		}
	for (uint32_t i = 0; i < XO_GNV_XSK_SLOTS; i++)
		ASSERT_EQ(seen[i], 1) << "index " << i;
}

TEST(QueueList, Forms)
{
	struct Row {
		const char *in;
		unsigned n;
		std::vector<uint32_t> want;
		const char *text;
	};
	const std::vector<Row> rows = {
		{"1", 0, {0}, "0"},
		{"4", 0, {0, 1, 2, 3}, "0-3"},
		{"0-3", 0, {0, 1, 2, 3}, "0-3"},
		{"1,3", 0, {1, 3}, "1,3"},
		{"3,1,1", 0, {1, 3}, "1,3"},
		{"0-1,5,7-8", 0, {0, 1, 5, 7, 8}, "0-1,5,7-8"},
		{"2-2", 0, {2}, "2"},
		{"all", 4, {0, 1, 2, 3}, "0-3"},
		{"all", 1, {0}, "0"},
	};
	for (const auto &r : rows) {
		auto q = parse_queue_list(r.in, r.n, 64);
		ASSERT_TRUE(q.ok()) << r.in << ": " << q.error().msg;
		EXPECT_EQ(*q, r.want) << r.in;
		EXPECT_EQ(queue_list_text(*q), r.text) << r.in;
	}
	auto big = parse_queue_list("64", 0, 64);
	ASSERT_TRUE(big.ok());
	EXPECT_EQ(big->size(), 64u);
	EXPECT_EQ(queue_list_text(*big), "0-63");
}

TEST(QueueList, BadInputIsAUsageErrorNamingTheOption)
{
	struct Row {
		const char *in;
		unsigned n;
		const char *says;
	};
	const std::vector<Row> rows = {
		{"0", 0, "1..64"},	  {"65", 0, "1..64"},	   {"x", 0, "not a queue count"},
		{"", 0, "not a queue count"}, {"1,", 0, "not a queue"}, {",1", 0, "not a queue"},
		{"3-1", 0, "range"},	  {"-1", 0, "range"},	   {"1-", 0, "range"},
		{"0-64", 0, "outside 0..63"}, {"1,,2", 0, "not a queue"},
		{"all", 0, "unknown"},	  {"all", 65, "at most 64"}, {"0x2", 0, "not a queue count"},
		{"99999999999", 0, "not a queue count"},
	};
	for (const auto &r : rows) {
		auto q = parse_queue_list(r.in, r.n, 64);
		ASSERT_FALSE(q.ok()) << "'" << r.in << "' accepted";
		EXPECT_EQ(q.error().kind, ErrorKind::usage) << r.in;
		EXPECT_NE(q.error().msg.find("--queues"), std::string::npos) << q.error().msg;
		EXPECT_NE(q.error().msg.find(r.says), std::string::npos) << r.in << ": " << q.error().msg;
	}
}

// An ETHTOOL_MSG_CHANNELS_GET reply as the kernel sends it (header nest,
// then u32 attributes), built with libmnl.
std::vector<char> channels_reply(std::vector<std::pair<uint16_t, uint32_t>> attrs)
{
	std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
	nlmsghdr *nlh = mnl_nlmsg_put_header(buf.data());
	nlh->nlmsg_type = 0x20;	// the family id: any
	auto *g = static_cast<genlmsghdr *>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
	g->cmd = ETHTOOL_MSG_CHANNELS_GET_REPLY;
	g->version = ETHTOOL_GENL_VERSION;
	nlattr *nest = mnl_attr_nest_start(nlh, ETHTOOL_A_CHANNELS_HEADER);
	mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_DEV_INDEX, 7);
	mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, "eth1");
	mnl_attr_nest_end(nlh, nest);
	for (auto [t, v] : attrs)
		mnl_attr_put_u32(nlh, t, v);
	buf.resize(nlh->nlmsg_len);
	return buf;
}

TEST(Channels, ReplyParsedAsEthtoolDoes)
{
	// i40e-like: combined channels only
	auto m = channels_reply({{ETHTOOL_A_CHANNELS_RX_MAX, 0},
				 {ETHTOOL_A_CHANNELS_TX_MAX, 0},
				 {ETHTOOL_A_CHANNELS_OTHER_MAX, 1},
				 {ETHTOOL_A_CHANNELS_COMBINED_MAX, 64},
				 {ETHTOOL_A_CHANNELS_RX_COUNT, 0},
				 {ETHTOOL_A_CHANNELS_TX_COUNT, 0},
				 {ETHTOOL_A_CHANNELS_OTHER_COUNT, 1},
				 {ETHTOOL_A_CHANNELS_COMBINED_COUNT, 8}});
	Channels c;
	ASSERT_TRUE(parse_channels_reply(m.data(), m.size(), c));
	EXPECT_EQ(c.rx, 8u);
	EXPECT_EQ(c.tx, 8u);
	EXPECT_EQ(c.max_rx, 64u);
	EXPECT_EQ(c.combined, 8u);
	EXPECT_EQ(c.source, "ethtool");
	// veth-like: separate rx and tx, no combined
	m = channels_reply({{ETHTOOL_A_CHANNELS_RX_MAX, 16},
			    {ETHTOOL_A_CHANNELS_TX_MAX, 16},
			    {ETHTOOL_A_CHANNELS_RX_COUNT, 4},
			    {ETHTOOL_A_CHANNELS_TX_COUNT, 2}});
	c = {};
	ASSERT_TRUE(parse_channels_reply(m.data(), m.size(), c));
	EXPECT_EQ(c.rx, 4u);
	EXPECT_EQ(c.tx, 2u);
	EXPECT_EQ(c.max_tx, 16u);
	EXPECT_EQ(c.combined, 0u);
	// no counts, or a truncated message: nothing taken
	m = channels_reply({});
	c = {};
	EXPECT_FALSE(parse_channels_reply(m.data(), m.size(), c));
	m = channels_reply({{ETHTOOL_A_CHANNELS_RX_COUNT, 4}});
	EXPECT_FALSE(parse_channels_reply(m.data(), m.size() - 8, c));
	EXPECT_FALSE(parse_channels_reply(m.data(), 8, c));
}

TEST(SteeringRemedy, PerDriver)
{
	struct Row {
		const char *driver;
		std::vector<uint32_t> bound;
		std::vector<const char *> says;
		std::vector<const char *> never;
	};
	const std::vector<Row> rows = {
		{"veth", {0}, {"peer's TX queue", "--queues all"}, {"ethtool"}},
		{"igb", {0}, {"ethtool -L eth1 combined 1", "flow-type ether", "never by UDP port"}, {"udp4"}},
		{"i40e", {0, 1}, {"ethtool -L eth1 combined 2", "ethtool -X eth1 equal 2",
				  "flow-type udp4 dst-port PORT action 0"}, {"DMFS"}},
		{"ice", {2}, {"combined 1 (then bind queue 0)", "action 2"}, {}},
		{"i40e", {4, 5}, {"combined 2 (then bind queues 0-1)"}, {}},
		{"mlx5_core", {0}, {"flow-type udp4"}, {}},
		{"mlx4_en", {0}, {"DMFS", "flow-type udp4"}, {}},
		{"virtio_net", {0}, {"combined 1", "no flow steering"}, {"udp4"}},
		{"vmxnet3", {0, 1}, {"equal 2", "no flow steering"}, {"-L"}},
		{"virtio_net", {1}, {"combined 1 (then bind queue 0)", "(where the device offers RSS)"}, {"udp4"}},
		{"mlx5_core", {0, 1, 2, 3}, {"combined 4", "equal 4", "action 0"}, {"then bind", "DMFS"}},
		// igc: the AF_XDP facts are modelled, the RX queue ones not: every remedy with its condition
		{"igc", {0}, {"ethtool -L eth1", "ethtool -X eth1", "where the driver has flow steering"}, {}},
		{"", {0}, {"ethtool -L eth1", "where the driver has flow steering"}, {}},
	};
	for (const auto &r : rows)
		for (KernelVersion k : {KernelVersion::v6_1, KernelVersion::v6_12, KernelVersion::v7_2}) {
			const auto kind = dev_kind_from_name(r.driver).value_or(DevKind::unknown);
			std::string s = rx_steering_remedy(features::nic_facts(kind, k), "eth1", r.bound);
			EXPECT_EQ(s.find('\n'), std::string::npos) << r.driver;
			for (const char *w : r.says)
				EXPECT_NE(s.find(w), std::string::npos) << r.driver << ": '" << w << "' not in: " << s;
			for (const char *w : r.never)
				EXPECT_EQ(s.find(w), std::string::npos) << r.driver << ": '" << w << "' in: " << s;
		}
	// the driver-name form takes the running kernel's facts of the same driver
	EXPECT_EQ(rx_steering_remedy("igb", "eth1", {0}),
		  rx_steering_remedy(features::nic_facts(DevKind::igb, running_kernel_model()), "eth1", {0}));
}

// The remedy follows the facts, not the driver's name: the same driver with
// one fact changed gets another line.
TEST(SteeringRemedy, FollowsTheFacts)
{
	features::NicFacts f = features::nic_facts(DevKind::i40e, KernelVersion::v6_12);
	const std::string full = rx_steering_remedy(f, "eth1", {0});
	EXPECT_NE(full.find("flow-type udp4"), std::string::npos) << full;
	f.ntuple.value = features::Ntuple::none;
	std::string s = rx_steering_remedy(f, "eth1", {0});
	EXPECT_NE(s.find("i40e has no flow steering rules"), std::string::npos) << s;
	f.set_channels.value = false;
	f.rss_table.value = features::RssTable::none;
	s = rx_steering_remedy(f, "eth1", {0});
	EXPECT_EQ(s.find("ethtool -L eth1"), std::string::npos) << s;
	EXPECT_EQ(s.find("ethtool -X eth1"), std::string::npos) << s;
	EXPECT_NE(s.find("no ethtool -L or -X"), std::string::npos) << s;
	f.rxq_from_peer.value = true;
	s = rx_steering_remedy(f, "eth1", {0});
	EXPECT_NE(s.find("peer's TX queue"), std::string::npos) << s;
}

} // namespace
} // namespace xoffload
