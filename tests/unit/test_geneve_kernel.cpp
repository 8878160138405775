// Netlink parsing of geneve_kernel.hpp: a NIC's UDP tunnel table (ethtool
// TUNNEL_INFO replies, built with libmnl as the kernel lays them out in
// net/ethtool/tunnels.c), Geneve devices in RTM_NEWLINK messages (recorded
// from Debian 13's 6.12 kernel in a tools/vm-test guest, and built), and
// the --nic device request.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include <cstring>
#include <string>
#include <vector>

#include "xoffload/geneve_kernel.hpp"

using namespace xoffload;

namespace {

struct Msg {
	std::vector<char> buf = std::vector<char>(8192);
	nlmsghdr *nlh = mnl_nlmsg_put_header(buf.data());
};

struct TableSpec {
	uint32_t size, types;
	std::vector<std::pair<uint16_t, uint32_t>> entries;
};

// An ETHTOOL_MSG_TUNNEL_INFO_GET_REPLY as ethnl_tunnel_info_fill_reply()
// writes it with compact bitsets.
Msg tunnel_reply(const std::vector<TableSpec> &tables, bool entry_type = true)
{
	Msg m;
	m.nlh->nlmsg_type = 0x15;	// the ethtool family id is dynamic; not read
	auto *g = static_cast<genlmsghdr *>(mnl_nlmsg_put_extra_header(m.nlh, sizeof(genlmsghdr)));
	g->cmd = ETHTOOL_MSG_TUNNEL_INFO_GET_REPLY;
	g->version = ETHTOOL_GENL_VERSION;
	nlattr *hdr = mnl_attr_nest_start(m.nlh, ETHTOOL_A_TUNNEL_INFO_HEADER);
	mnl_attr_put_u32(m.nlh, ETHTOOL_A_HEADER_DEV_INDEX, 4);
	mnl_attr_put_strz(m.nlh, ETHTOOL_A_HEADER_DEV_NAME, "eth1");
	mnl_attr_nest_end(m.nlh, hdr);
	nlattr *ports = mnl_attr_nest_start(m.nlh, ETHTOOL_A_TUNNEL_INFO_UDP_PORTS);
	for (const auto &t : tables) {
		nlattr *tab = mnl_attr_nest_start(m.nlh, ETHTOOL_A_TUNNEL_UDP_TABLE);
		mnl_attr_put_u32(m.nlh, ETHTOOL_A_TUNNEL_UDP_TABLE_SIZE, t.size);
		nlattr *bs = mnl_attr_nest_start(m.nlh, ETHTOOL_A_TUNNEL_UDP_TABLE_TYPES);
		mnl_attr_put(m.nlh, ETHTOOL_A_BITSET_NOMASK, 0, nullptr);
		mnl_attr_put_u32(m.nlh, ETHTOOL_A_BITSET_SIZE, __ETHTOOL_UDP_TUNNEL_TYPE_CNT);
		mnl_attr_put_u32(m.nlh, ETHTOOL_A_BITSET_VALUE, t.types);
		mnl_attr_nest_end(m.nlh, bs);
		for (const auto &[port, type] : t.entries) {
			nlattr *e = mnl_attr_nest_start(m.nlh, ETHTOOL_A_TUNNEL_UDP_TABLE_ENTRY);
			mnl_attr_put_u16(m.nlh, ETHTOOL_A_TUNNEL_UDP_ENTRY_PORT, htons(port));
			if (entry_type)
				mnl_attr_put_u32(m.nlh, ETHTOOL_A_TUNNEL_UDP_ENTRY_TYPE, type);
			mnl_attr_nest_end(m.nlh, e);
		}
		mnl_attr_nest_end(m.nlh, tab);
	}
	mnl_attr_nest_end(m.nlh, ports);
	return m;
}

constexpr uint32_t kVxlan = 1u << ETHTOOL_UDP_TUNNEL_TYPE_VXLAN;
constexpr uint32_t kGeneve = 1u << ETHTOOL_UDP_TUNNEL_TYPE_GENEVE;
constexpr uint32_t kGpe = 1u << ETHTOOL_UDP_TUNNEL_TYPE_VXLAN_GPE;

std::vector<uint8_t> from_hex(const std::string &h)
{
	std::vector<uint8_t> b;
	for (size_t i = 0; i + 1 < h.size(); i += 2)
		b.push_back(static_cast<uint8_t>(std::stoul(h.substr(i, 2), nullptr, 16)));
	return b;
}

} // namespace

// i40e and ice: a VXLAN table and a Geneve table (i40e_main.c:15963-15968),
// 6081 learnt from a kernel socket, 4789 in the VXLAN one.
TEST(UdpTunnelInfo, I40eShapeKnowsTheGenevePortOnly)
{
	Msg m = tunnel_reply({{16, kVxlan, {{4789, ETHTOOL_UDP_TUNNEL_TYPE_VXLAN}}},
			      {16, kGeneve, {{6081, ETHTOOL_UDP_TUNNEL_TYPE_GENEVE}}}});
	auto info = parse_udp_tunnel_info(m.nlh);
	ASSERT_TRUE(info) << info.error().msg;
	ASSERT_EQ(info->tables.size(), 2u);
	EXPECT_TRUE(info->has_tables);
	EXPECT_EQ(info->tables[1].size, 16u);
	EXPECT_EQ(info->tables[1].types, kGeneve);
	EXPECT_TRUE(info->has_geneve_table());
	EXPECT_TRUE(info->knows_geneve_port(6081));
	EXPECT_FALSE(info->knows_geneve_port(6082));
	EXPECT_FALSE(info->knows_geneve_port(4789)) << "a VXLAN entry is not a Geneve one";
}

// mlx5 and mlx4: VXLAN only, plus the static IANA VXLAN entry
// (UDP_TUNNEL_NIC_INFO_STATIC_IANA_VXLAN: a table of types 0).
TEST(UdpTunnelInfo, VxlanOnlyTableHasNoGeneve)
{
	Msg m = tunnel_reply({{3, kVxlan, {}}, {1, 0, {{4789, ETHTOOL_UDP_TUNNEL_TYPE_VXLAN}}}});
	auto info = parse_udp_tunnel_info(m.nlh);
	ASSERT_TRUE(info) << info.error().msg;
	EXPECT_TRUE(info->has_tables);
	EXPECT_FALSE(info->has_geneve_table());
	EXPECT_FALSE(info->knows_geneve_port(6081));
}

// netdevsim's shared table shape: Geneve and VXLAN-GPE in one.
TEST(UdpTunnelInfo, SharedGeneveGpeTable)
{
	Msg m = tunnel_reply({{4, kGeneve | kGpe,
			       {{6081, ETHTOOL_UDP_TUNNEL_TYPE_GENEVE}, {4790, ETHTOOL_UDP_TUNNEL_TYPE_VXLAN_GPE}}}});
	auto info = parse_udp_tunnel_info(m.nlh);
	ASSERT_TRUE(info) << info.error().msg;
	EXPECT_TRUE(info->has_geneve_table());
	EXPECT_TRUE(info->knows_geneve_port(6081));
	EXPECT_FALSE(info->knows_geneve_port(4790));
}

TEST(UdpTunnelInfo, EntryWithoutTypeIsMalformed)
{
	Msg m = tunnel_reply({{4, kGeneve, {{6081, ETHTOOL_UDP_TUNNEL_TYPE_GENEVE}}}}, false);
	auto info = parse_udp_tunnel_info(m.nlh);
	ASSERT_FALSE(info);
	EXPECT_EQ(info.error().err, EPROTO);
}

TEST(UdpTunnelInfo, ShortMessageIsMalformed)
{
	Msg m;
	m.nlh->nlmsg_type = 0x15;
	auto info = parse_udp_tunnel_info(m.nlh);
	ASSERT_FALSE(info);
	EXPECT_EQ(info.error().err, EPROTO);
}

namespace {

// An RTM_NEWLINK of a device as rtnl_fill_ifinfo() lays one out (the
// attributes read here, and others around them).
Msg link_msg(const std::string &name, const char *kind, int port, bool md, unsigned flags)
{
	Msg m;
	m.nlh->nlmsg_type = RTM_NEWLINK;
	auto *ifi = static_cast<ifinfomsg *>(mnl_nlmsg_put_extra_header(m.nlh, sizeof(ifinfomsg)));
	ifi->ifi_index = 7;
	ifi->ifi_flags = flags;
	mnl_attr_put_strz(m.nlh, IFLA_IFNAME, name.c_str());
	mnl_attr_put_u32(m.nlh, IFLA_MTU, 1450);
	if (kind) {
		nlattr *li = mnl_attr_nest_start(m.nlh, IFLA_LINKINFO);
		mnl_attr_put_strz(m.nlh, IFLA_INFO_KIND, kind);
		nlattr *d = mnl_attr_nest_start(m.nlh, IFLA_INFO_DATA);
		if (md)
			mnl_attr_put(m.nlh, IFLA_GENEVE_COLLECT_METADATA, 0, nullptr);
		mnl_attr_put_u8(m.nlh, IFLA_GENEVE_TTL, 0);
		if (port >= 0)
			mnl_attr_put_u16(m.nlh, IFLA_GENEVE_PORT, htons(static_cast<uint16_t>(port)));
		mnl_attr_put_u8(m.nlh, IFLA_GENEVE_UDP_CSUM, 0);
		mnl_attr_nest_end(m.nlh, d);
		mnl_attr_nest_end(m.nlh, li);
	}
	mnl_attr_put_strz(m.nlh, IFLA_QDISC, "noqueue");
	return m;
}

} // namespace

TEST(GeneveLink, BuiltMessages)
{
	auto d = parse_geneve_link(link_msg("genev_sys_6081", "geneve", 6081, true, IFF_UP).nlh);
	ASSERT_TRUE(d);
	EXPECT_EQ(d->name, "genev_sys_6081");
	EXPECT_EQ(d->ifindex, 7);
	EXPECT_EQ(d->port, 6081);
	EXPECT_TRUE(d->collect_md);
	EXPECT_TRUE(d->up);

	d = parse_geneve_link(link_msg("gnv0", "geneve", 7000, false, 0).nlh);
	ASSERT_TRUE(d);
	EXPECT_EQ(d->port, 7000);
	EXPECT_FALSE(d->collect_md);
	EXPECT_FALSE(d->up);

	EXPECT_FALSE(parse_geneve_link(link_msg("veth0", "veth", -1, false, IFF_UP).nlh)) << "not geneve";
	EXPECT_FALSE(parse_geneve_link(link_msg("eth0", nullptr, -1, false, IFF_UP).nlh)) << "no link info";
	EXPECT_FALSE(parse_geneve_link(link_msg("gnv1", "geneve", -1, false, IFF_UP).nlh)) << "no port";
	EXPECT_EQ(link_kind(link_msg("veth0", "veth", -1, false, IFF_UP).nlh), "veth");
	EXPECT_EQ(link_kind(link_msg("eth0", nullptr, -1, false, IFF_UP).nlh), "");

	Msg other = link_msg("gnv2", "geneve", 6081, true, IFF_UP);
	other.nlh->nlmsg_type = RTM_NEWADDR;
	EXPECT_FALSE(parse_geneve_link(other.nlh)) << "not a link message";
	Msg cut = link_msg("gnv3", "geneve", 6081, true, IFF_UP);
	cut.nlh->nlmsg_len = NLMSG_HDRLEN + 4;
	EXPECT_FALSE(parse_geneve_link(cut.nlh)) << "shorter than ifinfomsg";
}

// The request parsed back: what the kernel will find in it.
TEST(GeneveLink, NicDeviceRequestIsAnExternalGeneveUp)
{
	Msg m;
	put_nic_geneve_request(m.nlh, nic_geneve_dev_name(6081), 6081);
	EXPECT_EQ(m.nlh->nlmsg_type, RTM_NEWLINK);
	EXPECT_EQ(m.nlh->nlmsg_flags & (NLM_F_CREATE | NLM_F_EXCL), unsigned{NLM_F_CREATE | NLM_F_EXCL});
	auto *ifi = static_cast<ifinfomsg *>(mnl_nlmsg_get_payload(m.nlh));
	EXPECT_EQ(ifi->ifi_change & IFF_UP, unsigned{IFF_UP});
	auto d = parse_geneve_link(m.nlh);
	ASSERT_TRUE(d);
	EXPECT_EQ(d->name, "xo-gnv-6081");
	EXPECT_EQ(d->port, 6081);
	EXPECT_TRUE(d->collect_md);
	EXPECT_TRUE(d->up);
	EXPECT_LE(nic_geneve_dev_name(65535).size(), 15u) << "IFNAMSIZ";
}
