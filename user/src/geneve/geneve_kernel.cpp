// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A NIC's UDP tunnel table (ethtool netlink), the --nic geneve device and the
// kernel's Geneve devices (rtnetlink), all through libmnl (nl.hpp).
#include "xoffload/geneve/geneve_kernel.hpp"

#include <arpa/inet.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "../core/nl.hpp"

namespace xoffload {

namespace {

// A compact bitset (ETHTOOL_A_BITSET_VALUE, 32-bit words): its first word.
std::optional<uint32_t> bitset_word0(const nlattr *nest)
{
	std::optional<uint32_t> v;
	nl::for_each_nested(nest, [&](const nlattr *a) {
		if (mnl_attr_get_type(a) == ETHTOOL_A_BITSET_VALUE && mnl_attr_get_payload_len(a) >= 4) {
			uint32_t w;
			std::memcpy(&w, mnl_attr_get_payload(a), 4);
			v = w;
		}
	});
	return v;
}

// One ETHTOOL_A_TUNNEL_UDP_TABLE into @t; EPROTO error when an attribute is
// malformed (the rest is still read).
Status parse_table(const nlattr *nest, UdpTunnelTable &t)
{
	bool good = true;
	nl::for_each_nested(nest, [&](const nlattr *a) {
		switch (mnl_attr_get_type(a)) {
		case ETHTOOL_A_TUNNEL_UDP_TABLE_SIZE:
			if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
				good = false;
			else
				t.size = mnl_attr_get_u32(a);
			break;
		case ETHTOOL_A_TUNNEL_UDP_TABLE_TYPES:
			if (auto w = bitset_word0(a))
				t.types = *w;
			else
				good = false;	// we asked for compact bitsets
			break;
		case ETHTOOL_A_TUNNEL_UDP_TABLE_ENTRY: {
			UdpTunnelTable::Entry e{0, UINT32_MAX};
			nl::for_each_nested(a, [&](const nlattr *x) {
				if (mnl_attr_get_type(x) == ETHTOOL_A_TUNNEL_UDP_ENTRY_PORT &&
				    mnl_attr_validate(x, MNL_TYPE_U16) >= 0)
					e.port = ntohs(mnl_attr_get_u16(x));
				else if (mnl_attr_get_type(x) == ETHTOOL_A_TUNNEL_UDP_ENTRY_TYPE &&
					 mnl_attr_validate(x, MNL_TYPE_U32) >= 0)
					e.type = mnl_attr_get_u32(x);
			});
			if (!e.port || e.type == UINT32_MAX)
				good = false;
			else
				t.entries.push_back(e);
			break;
		}
		default:
			break;
		}
	});
	if (!good)
		return runtime_error("tunnel info reply: malformed table", EPROTO);
	return ok();
}

uint16_t port_be16(const nlattr *a)
{
	return ntohs(mnl_attr_get_u16(a));
}

} // namespace

bool UdpTunnelInfo::has_geneve_table() const
{
	for (const auto &t : tables)
		if (t.types & (1u << ETHTOOL_UDP_TUNNEL_TYPE_GENEVE))
			return true;
	return false;
}

bool UdpTunnelInfo::knows_geneve_port(uint16_t port) const
{
	for (const auto &t : tables)
		for (const auto &e : t.entries)
			if (e.port == port && e.type == ETHTOOL_UDP_TUNNEL_TYPE_GENEVE)
				return true;
	return false;
}

Result<UdpTunnelInfo> parse_udp_tunnel_info(const nlmsghdr *nlh)
{
	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(genlmsghdr))
		return runtime_error("tunnel info reply: malformed (short)", EPROTO);
	UdpTunnelInfo info;
	info.has_tables = true;
	Status st = ok();
	nl::for_each_attr(nlh, sizeof(genlmsghdr), [&](const nlattr *a) {
		if (mnl_attr_get_type(a) != ETHTOOL_A_TUNNEL_INFO_UDP_PORTS)
			return;
		nl::for_each_nested(a, [&](const nlattr *t) {
			if (mnl_attr_get_type(t) != ETHTOOL_A_TUNNEL_UDP_TABLE)
				return;
			UdpTunnelTable table;
			if (auto s = parse_table(t, table); !s && st)
				st = s;
			info.tables.push_back(std::move(table));
		});
	});
	if (!st)
		return st.error();
	return info;
}

Result<UdpTunnelInfo> udp_tunnel_info(const std::string &ifname)
{
	Result<UdpTunnelInfo> out = UdpTunnelInfo{};
	auto s = nl::ethtool_get(ifname, ETHTOOL_MSG_TUNNEL_INFO_GET, ETHTOOL_A_TUNNEL_INFO_HEADER,
				 ETHTOOL_FLAG_COMPACT_BITSETS, "UDP tunnel info of " + ifname, [&](const nlmsghdr *h) {
					 out = parse_udp_tunnel_info(h);
					 return out ? MNL_CB_OK : MNL_CB_ERROR;
				 });
	if (!s) {
		// "device does not report tunnel offload info": no table at all
		if (s.error().err == EOPNOTSUPP)
			return UdpTunnelInfo{};
		return out ? s.error() : out.error();
	}
	return out;
}

std::string link_kind(const nlmsghdr *nlh)
{
	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(ifinfomsg))
		return "";
	std::string kind;
	nl::for_each_attr(nlh, sizeof(ifinfomsg), [&](const nlattr *a) {
		if (mnl_attr_get_type(a) != IFLA_LINKINFO)
			return;
		nl::for_each_nested(a, [&](const nlattr *x) {
			if (mnl_attr_get_type(x) == IFLA_INFO_KIND && mnl_attr_validate(x, MNL_TYPE_NUL_STRING) >= 0)
				kind = mnl_attr_get_str(x);
		});
	});
	return kind;
}

std::optional<KernelGeneveDev> parse_geneve_link(const nlmsghdr *nlh)
{
	if ((nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK) ||
	    nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(ifinfomsg))
		return std::nullopt;
	auto *ifi = static_cast<const ifinfomsg *>(mnl_nlmsg_get_payload(nlh));
	KernelGeneveDev d;
	d.ifindex = ifi->ifi_index;
	d.up = ifi->ifi_flags & IFF_UP;
	bool geneve = false, has_port = false;
	nl::for_each_attr(nlh, sizeof(ifinfomsg), [&](const nlattr *a) {
		switch (mnl_attr_get_type(a)) {
		case IFLA_IFNAME:
			if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
				d.name = mnl_attr_get_str(a);
			break;
		case IFLA_IFALIAS:
			if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
				d.alias = mnl_attr_get_str(a);
			break;
		case IFLA_LINKINFO:
			nl::for_each_nested(a, [&](const nlattr *x) {
				if (mnl_attr_get_type(x) == IFLA_INFO_KIND &&
				    mnl_attr_validate(x, MNL_TYPE_NUL_STRING) >= 0)
					geneve = std::strcmp(mnl_attr_get_str(x), "geneve") == 0;
				if (mnl_attr_get_type(x) != IFLA_INFO_DATA)
					return;
				nl::for_each_nested(x, [&](const nlattr *g) {
					if (mnl_attr_get_type(g) == IFLA_GENEVE_PORT &&
					    mnl_attr_validate(g, MNL_TYPE_U16) >= 0) {
						d.port = port_be16(g);
						has_port = true;
					} else if (mnl_attr_get_type(g) == IFLA_GENEVE_COLLECT_METADATA) {
						d.collect_md = true;
					}
				});
			});
			break;
		default:
			break;
		}
	});
	// a geneve device always reports its port; one without is not ours to read
	if (!geneve || !has_port || d.name.empty())
		return std::nullopt;
	return d;
}

Result<std::vector<KernelGeneveDev>> kernel_geneve_devs()
{
	auto sock = nl::Socket::open(NETLINK_ROUTE);
	if (!sock)
		return sock.error();
	nl::Message msg;
	msg.header()->nlmsg_type = RTM_GETLINK;
	msg.header()->nlmsg_flags = NLM_F_DUMP;
	msg.put_extra<ifinfomsg>()->ifi_family = AF_UNSPEC;
	std::vector<KernelGeneveDev> out;
	auto s = sock->request(msg, "list the network devices", [&](const nlmsghdr *h) {
		if (auto d = parse_geneve_link(h))
			out.push_back(*d);
		return MNL_CB_OK;
	});
	if (!s)
		return s.error();
	return out;
}

std::string nic_geneve_dev_name(uint16_t port)
{
	return "xo-gnv-" + std::to_string(port);
}

void put_nic_geneve_request(nlmsghdr *nlh, const std::string &name, uint16_t port)
{
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	auto *ifi = static_cast<ifinfomsg *>(mnl_nlmsg_put_extra_header(nlh, sizeof(ifinfomsg)));
	ifi->ifi_family = AF_UNSPEC;
	// up at once: geneve_open() opens the UDP socket, which is what tells
	// udp_tunnel_nic (and through it every NIC of the netns) the port
	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name.c_str());
	nlattr *li = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "geneve");
	nlattr *data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	mnl_attr_put(nlh, IFLA_GENEVE_COLLECT_METADATA, 0, nullptr);
	mnl_attr_put_u16(nlh, IFLA_GENEVE_PORT, htons(port));
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, li);
}

bool is_nic_geneve_dev(const KernelGeneveDev &d)
{
	return d.collect_md && d.name == nic_geneve_dev_name(d.port);
}

std::vector<NicDevPurge> nic_devs_to_purge(const std::vector<GenevePort> &ports,
					   const std::vector<KernelGeneveDev> &devs,
					   const std::function<bool(uint16_t port)> &held_elsewhere)
{
	std::vector<NicDevPurge> out;
	for (const auto &p : ports) {
		if (!p.refcnt || !(p.flags & XO_GNV_PORT_F_NIC))
			continue;
		const std::string name = nic_geneve_dev_name(p.port);
		bool ours = false;
		for (const auto &d : devs)
			ours = ours || (d.name == name && d.port == p.port && is_nic_geneve_dev(d));
		if (ours && !(held_elsewhere && held_elsewhere(p.port)))
			out.push_back({name, p.port});
	}
	return out;
}

Status nic_geneve_dev_create(uint16_t port)
{
	auto sock = nl::Socket::open(NETLINK_ROUTE);
	if (!sock)
		return sock.error();
	const std::string name = nic_geneve_dev_name(port);
	nl::Message msg;
	put_nic_geneve_request(msg.header(), name, port);
	auto s = sock->request(msg, "create geneve device " + name + " (external, dstport " + std::to_string(port) + ")");
	if (!s && s.error().err == EOPNOTSUPP)
		return runtime_error("create geneve device " + name +
					     ": this kernel has no geneve module (Unknown device type); "
					     "--nic needs it (CONFIG_GENEVE)",
				     EOPNOTSUPP);
	return s;
}

Status link_delete(const std::string &name)
{
	auto sock = nl::Socket::open(NETLINK_ROUTE);
	if (!sock)
		return sock.error();
	nl::Message msg;
	msg.header()->nlmsg_type = RTM_DELLINK;
	msg.put_extra<ifinfomsg>()->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(msg.header(), IFLA_IFNAME, name.c_str());
	return sock->request(msg, "delete device " + name);
}

struct LinkEvents::Impl {
	nl::Socket sock;
};

LinkEvents::LinkEvents() = default;
LinkEvents::LinkEvents(LinkEvents &&) noexcept = default;
LinkEvents &LinkEvents::operator=(LinkEvents &&) noexcept = default;
LinkEvents::~LinkEvents() = default;

Result<LinkEvents> LinkEvents::open()
{
	auto sock = nl::Socket::open(NETLINK_ROUTE);
	if (!sock)
		return sock.error();
	if (auto s = sock->join(RTNLGRP_LINK); !s)
		return s.error();
	LinkEvents e;
	e.impl_ = std::make_unique<Impl>(Impl{std::move(*sock)});
	return e;
}

Result<bool> LinkEvents::wait(int timeout_ms)
{
	bool got = false;
	for (int t = timeout_ms;; t = 0) {
		pollfd p{impl_->sock.fd(), POLLIN, 0};
		int r = ::poll(&p, 1, t);
		if (r < 0 && errno != EINTR)
			return errno_error("wait for link events", errno);
		if (r <= 0)
			return got;
		// ENOBUFS (events lost) is an event too: the caller looks again
		auto s = impl_->sock.receive({});
		if (!s && s.error().err != ENOBUFS)
			return s.error();
		got = true;
	}
}

std::string driver_name(const std::string &ifname)
{
	auto sock = nl::Socket::open(NETLINK_ROUTE);
	if (sock) {
		nl::Message msg;
		msg.header()->nlmsg_type = RTM_GETLINK;
		msg.put_extra<ifinfomsg>()->ifi_family = AF_UNSPEC;
		mnl_attr_put_strz(msg.header(), IFLA_IFNAME, ifname.c_str());
		std::string kind;
		(void)sock->request(msg, "get link " + ifname, [&](const nlmsghdr *h) {
			kind = link_kind(h);
			return MNL_CB_OK;
		});
		if (!kind.empty())
			return kind;
	}
	char buf[PATH_MAX];
	std::string link = "/sys/class/net/" + ifname + "/device/driver";
	ssize_t n = ::readlink(link.c_str(), buf, sizeof(buf) - 1);
	if (n <= 0)
		return "";
	std::string path(buf, static_cast<size_t>(n));
	return path.substr(path.rfind('/') + 1);
}

} // namespace xoffload
