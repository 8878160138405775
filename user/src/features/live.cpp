// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The stack below an interface on the running system: links from an
// rtnetlink dump (IFLA_LINK, IFLA_MASTER, IFLA_INFO_KIND, IFLA_VLAN_PROTOCOL, IFLA_IPVLAN_MODE,
// IFLA_VXLAN_LINK), active features from ethtool netlink
// (ethtool_features_get), the kind from ETHTOOL_GDRVINFO.
// Works in the caller's network namespace (no /sys, so -n NETNS is right).
#include <arpa/inet.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

#include "xoffload/features/channels.hpp"
#include "xoffload/core/fd.hpp"
#include "xoffload/core/ethtool_features.hpp"
#include "xoffload/features/features.hpp"
#include "xoffload/core/kernel.hpp"
#include "xoffload/core/netdev.hpp"
#include "../core/internal.hpp"

namespace xoffload {

namespace {

struct Link {
	int index = 0;
	std::string name, kind;
	int link = 0, master = 0, vxlan_link = 0;
	uint16_t vlan_proto = 0x8100;
	IpvlanMode ipvlan_mode = IpvlanMode::l3;
};

void parse_attrs(const rtattr *rta, int len, std::map<int, const rtattr *> &out)
{
	for (; RTA_OK(rta, len); rta = RTA_NEXT(rta, len))
		out[rta->rta_type & ~NLA_F_NESTED] = rta;
}

Result<std::map<int, Link>> dump_links()
{
	auto req = rtnl_request<ifinfomsg>(RTM_GETLINK);
	req.body.ifi_family = AF_UNSPEC;
	std::map<int, Link> links;
	auto s = rtnl_dump(&req.nh, "RTM_GETLINK", [&](const nlmsghdr *nh) {
		if (nh->nlmsg_type != RTM_NEWLINK)
			return;
		auto *ifm = static_cast<const ifinfomsg *>(NLMSG_DATA(nh));
		std::map<int, const rtattr *> a;
		parse_attrs(IFLA_RTA(ifm), static_cast<int>(IFLA_PAYLOAD(nh)), a);
		Link l;
		l.index = ifm->ifi_index;
		auto u32 = [](const rtattr *r) { return *static_cast<const uint32_t *>(RTA_DATA(r)); };
		if (a.count(IFLA_IFNAME))
			l.name = static_cast<const char *>(RTA_DATA(a[IFLA_IFNAME]));
		if (a.count(IFLA_LINK))
			l.link = static_cast<int>(u32(a[IFLA_LINK]));
		if (a.count(IFLA_MASTER))
			l.master = static_cast<int>(u32(a[IFLA_MASTER]));
		if (a.count(IFLA_LINKINFO)) {
			std::map<int, const rtattr *> li;
			const rtattr *r = a[IFLA_LINKINFO];
			parse_attrs(static_cast<const rtattr *>(RTA_DATA(r)), static_cast<int>(RTA_PAYLOAD(r)), li);
			if (li.count(IFLA_INFO_KIND))
				l.kind = static_cast<const char *>(RTA_DATA(li[IFLA_INFO_KIND]));
			if (li.count(IFLA_INFO_DATA)) {
				std::map<int, const rtattr *> d;
				const rtattr *dr = li[IFLA_INFO_DATA];
				parse_attrs(static_cast<const rtattr *>(RTA_DATA(dr)), static_cast<int>(RTA_PAYLOAD(dr)), d);
				if (l.kind == "vlan" && d.count(IFLA_VLAN_PROTOCOL))
					l.vlan_proto = ntohs(*static_cast<const uint16_t *>(RTA_DATA(d[IFLA_VLAN_PROTOCOL])));
				if (l.kind == "ipvlan" && d.count(IFLA_IPVLAN_MODE)) {
					const uint16_t m = *static_cast<const uint16_t *>(RTA_DATA(d[IFLA_IPVLAN_MODE]));
					l.ipvlan_mode = m == IPVLAN_MODE_L2 ? IpvlanMode::l2
						      : m == IPVLAN_MODE_L3S ? IpvlanMode::l3s : IpvlanMode::l3;
				}
				if (l.kind == "vxlan" && d.count(IFLA_VXLAN_LINK))
					l.vxlan_link = static_cast<int>(u32(d[IFLA_VXLAN_LINK]));
			}
		}
		links[l.index] = l;
	});
	if (!s)
		return s.error();
	return links;
}

Status ethtool_ioctl(const std::string &ifname, void *data)
{
	UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	if (!fd.valid())
		return errno_error("socket", errno);
	ifreq ifr{};
	std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
	ifr.ifr_data = static_cast<char *>(data);
	if (::ioctl(fd.get(), SIOCETHTOOL, &ifr))
		return errno_error("SIOCETHTOOL on " + ifname, errno);
	return ok();
}

std::string driver_of(const std::string &ifname)
{
	ethtool_drvinfo di{};
	di.cmd = ETHTOOL_GDRVINFO;
	if (!ethtool_ioctl(ifname, &di))
		return "";
	return di.driver;
}

} // namespace

Result<FeatureMask> read_live_features(const std::string &ifname)
{
	if (!if_nametoindex(ifname.c_str()))
		return usage_error("unknown interface '" + ifname + "'");
	auto fs = ethtool_features_get(ifname);
	if (!fs)
		return fs.error();
	FeatureMask m = 0;
	for (const auto &[name, f] : fs->by_name)
		if (f.active)
			if (auto bit = feature_from_name(name))
				m |= fbit(*bit);
	return m;
}

std::string live_driver_name(const std::string &ifname)
{
	return driver_of(ifname);
}

Result<std::vector<LayerSpec>> read_live_stack(const std::string &ifname)
{
	auto links = dump_links();
	if (!links)
		return links.error();
	int idx = static_cast<int>(if_nametoindex(ifname.c_str()));
	if (!idx || !links->count(idx))
		return usage_error("unknown interface '" + ifname + "'");
	std::vector<LayerSpec> out;
	for (int depth = 0; idx && depth < 8; depth++) {
		const Link &l = (*links)[idx];
		LayerSpec s;
		s.ifname = l.name;
		std::string drv = driver_of(l.name);
		auto k = dev_kind_from_name(l.kind.empty() ? drv : l.kind);
		if (!k)
			k = dev_kind_from_name(drv);
		s.kind = k.value_or(DevKind::unknown);
		s.vlan_proto = l.vlan_proto;
		s.ipvlan_mode = l.ipvlan_mode;
		if (s.kind == DevKind::tun)
			s.tun_offload = true;	// live features decide
		auto f = read_live_features(l.name);
		if (f)
			s.live = *f;
		out.push_back(s);
		// the lower device: the real device of vlan/macvlan/ipvlan, the
		// first port of a bridge/bond/team, the underlay of vxlan
		int next = 0;
		if (s.kind == DevKind::vlan || s.kind == DevKind::macvlan || s.kind == DevKind::ipvlan)
			next = l.link;
		else if (s.kind == DevKind::vxlan)
			next = l.vxlan_link;
		else if (s.kind == DevKind::bridge || s.kind == DevKind::bond || s.kind == DevKind::team) {
			for (const auto &[i, p] : *links)
				if (p.master == l.index) {
					next = i;
					break;
				}
		}
		if (next && !links->count(next))
			next = 0;	// IFLA_LINK into another netns
		idx = next;
	}
	return out;
}

Result<std::string> features::live_driver(const std::string &ifname)
{
	if (!if_nametoindex(ifname.c_str()))
		return usage_error("unknown interface '" + ifname + "'");
	return driver_of(ifname);
}

Result<features::NicFacts> features::nic_facts_live(const std::string &ifname, unsigned major, unsigned minor)
{
	auto d = live_driver(ifname);
	if (!d)
		return d.error();
	return nic_facts(dev_kind_from_name(*d).value_or(DevKind::unknown), major, minor);
}

Result<TxQueueFacts> tx_queue_facts_live(const std::string &ifname, KernelVersion k, bool zero_copy)
{
	if (!if_nametoindex(ifname.c_str()))
		return usage_error("unknown interface '" + ifname + "'");
	std::string drv = driver_of(ifname);
	TxQueueFacts f = tx_queue_facts(dev_kind_from_name(drv).value_or(DevKind::unknown), k, zero_copy);
	f.driver = drv;
	// ethtool netlink CHANNELS_GET (sysfs or rtnetlink where the driver has none)
	if (auto ch = read_channels(Netdev{ifname, static_cast<int>(if_nametoindex(ifname.c_str()))})) {
		f.tx_queues = ch->tx;
		f.max_tx_queues = ch->max_tx;
	}
	return f;
}

} // namespace xoffload
