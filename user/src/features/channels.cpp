// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Queue counts of a device through ethtool netlink (libmnl, nl.hpp), with
// the sysfs and rtnetlink fallbacks, and the --queues list syntax.
#include "xoffload/features/channels.hpp"

#include <dirent.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fstream>

#include "../core/nl.hpp"

namespace xoffload {

bool parse_channels_reply(const void *nlmsg, size_t len, Channels &out)
{
	auto *nlh = static_cast<const nlmsghdr *>(nlmsg);
	if (len < sizeof(nlmsghdr) || nlh->nlmsg_len > len || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(genlmsghdr)))
		return false;
	uint32_t rx = 0, tx = 0, comb = 0, max_rx = 0, max_tx = 0, max_comb = 0;
	bool any = false;
	nl::for_each_attr(nlh, sizeof(genlmsghdr), [&](const nlattr *a) {
		if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
			return;
		uint32_t v = mnl_attr_get_u32(a);
		switch (mnl_attr_get_type(a)) {
		case ETHTOOL_A_CHANNELS_RX_COUNT: rx = v; any = true; break;
		case ETHTOOL_A_CHANNELS_TX_COUNT: tx = v; any = true; break;
		case ETHTOOL_A_CHANNELS_COMBINED_COUNT: comb = v; any = true; break;
		case ETHTOOL_A_CHANNELS_RX_MAX: max_rx = v; break;
		case ETHTOOL_A_CHANNELS_TX_MAX: max_tx = v; break;
		case ETHTOOL_A_CHANNELS_COMBINED_MAX: max_comb = v; break;
		default: break;
		}
	});
	if (!any)
		return false;
	out.rx = comb + rx;
	out.tx = comb + tx;
	out.max_rx = max_comb + max_rx;
	out.max_tx = max_comb + max_tx;
	out.combined = comb;
	out.source = "ethtool";
	return true;
}

namespace {

// ETHTOOL_MSG_CHANNELS_GET; EOPNOTSUPP when the driver has no get_channels,
// ENOENT when the kernel has no ethtool netlink (before 5.6).
Result<Channels> ethtool_channels(const Netdev &dev)
{
	Channels ch;
	bool got = false;
	auto s = nl::ethtool_get(dev.name, ETHTOOL_MSG_CHANNELS_GET, ETHTOOL_A_CHANNELS_HEADER, 0,
				 "ethtool channels of " + dev.name, [&](const nlmsghdr *h) {
					 got = parse_channels_reply(h, h->nlmsg_len, ch) || got;
					 return MNL_CB_OK;
				 });
	if (!s)
		return s.error();
	if (!got)
		return runtime_error("ethtool channels of " + dev.name + ": no counts in the reply", EOPNOTSUPP);
	return ch;
}

// rx-N / tx-N entries under /sys/class/net/IF/queues, where that directory
// is @dev's (sysfs shows the netns that mounted it, not ours).
Result<Channels> sysfs_channels(const Netdev &dev)
{
	const std::string base = "/sys/class/net/" + dev.name;
	int idx = 0;
	if (!(std::ifstream(base + "/ifindex") >> idx) || idx != dev.ifindex)
		return runtime_error(base + " is not " + dev.name + " of this network namespace", ENOENT);
	DIR *d = ::opendir((base + "/queues").c_str());
	if (!d)
		return errno_error("read " + base + "/queues", errno);
	Channels ch;
	while (dirent *e = ::readdir(d)) {
		std::string_view n = e->d_name;
		ch.rx += n.starts_with("rx-");
		ch.tx += n.starts_with("tx-");
	}
	::closedir(d);
	ch.source = "sysfs";
	return ch;
}

// IFLA_NUM_RX_QUEUES / IFLA_NUM_TX_QUEUES of one RTM_GETLINK.
Result<Channels> rtnl_channels(const Netdev &dev)
{
	auto sock = nl::Socket::open(NETLINK_ROUTE);
	if (!sock)
		return sock.error();
	nl::Message msg;
	msg.header()->nlmsg_type = RTM_GETLINK;
	auto *ifm = msg.put_extra<ifinfomsg>();
	ifm->ifi_family = AF_UNSPEC;
	ifm->ifi_index = dev.ifindex;
	Channels ch;
	auto s = sock->request(msg, "RTM_GETLINK " + dev.name, [&](const nlmsghdr *h) {
		if (h->nlmsg_type != RTM_NEWLINK)
			return MNL_CB_OK;
		nl::for_each_attr(h, sizeof(ifinfomsg), [&](const nlattr *a) {
			if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
				return;
			if (mnl_attr_get_type(a) == IFLA_NUM_RX_QUEUES)
				ch.rx = mnl_attr_get_u32(a);
			else if (mnl_attr_get_type(a) == IFLA_NUM_TX_QUEUES)
				ch.tx = mnl_attr_get_u32(a);
		});
		return MNL_CB_OK;
	});
	if (!s)
		return s.error();
	if (!ch.rx)
		return runtime_error("no queue count of " + dev.name + " from ethtool, sysfs or rtnetlink", ENOENT);
	ch.max_rx = ch.rx;
	ch.max_tx = ch.tx;
	ch.source = "rtnetlink";
	return ch;
}

} // namespace

Result<Channels> read_channels(const Netdev &dev)
{
	auto e = ethtool_channels(dev);
	if (e)
		return e;
	// a driver without get_channels (EOPNOTSUPP), a kernel without ethtool
	// netlink (ENOENT): the queues the kernel lists for the device
	if (e.error().err != EOPNOTSUPP && e.error().err != ENOENT)
		return e.error();
	if (netns_current().empty())
		if (auto s = sysfs_channels(dev))
			return s;
	return rtnl_channels(dev);
}

Result<std::vector<uint32_t>> parse_queue_list(std::string_view s, unsigned n, unsigned limit, const std::string &what)
{
	auto bad = [&](const std::string &why) {
		return usage_error(what + " " + std::string(s) + ": " + why);
	};
	std::vector<uint32_t> out;
	if (s == "all") {
		if (!n)
			return bad("the device's queue count is unknown; list the queues (0-3)");
		if (n > limit)
			return bad("the device has " + std::to_string(n) + " queues, at most " + std::to_string(limit) +
				   " can be bound");
		for (uint32_t q = 0; q < n; q++)
			out.push_back(q);
		return out;
	}
	auto num = [](std::string_view t, uint32_t &v) {
		if (t.empty() || t.size() > 9)
			return false;
		auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
		return ec == std::errc() && p == t.data() + t.size();
	};
	const bool list = s.find_first_of(",-") != std::string_view::npos;
	if (!list) {
		uint32_t c = 0;
		if (!num(s, c))
			return bad("not a queue count, list or 'all' (examples: 4, 0-3, 1,3, all)");
		if (c < 1 || c > limit)
			return bad("a count must be 1.." + std::to_string(limit));
		for (uint32_t q = 0; q < c; q++)
			out.push_back(q);
		return out;
	}
	size_t at = 0;
	while (at <= s.size()) {
		size_t end = s.find(',', at);
		std::string_view item = s.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
		size_t dash = item.find('-');
		uint32_t lo = 0, hi = 0;
		if (dash == std::string_view::npos) {
			if (!num(item, lo))
				return bad("'" + std::string(item) + "' is not a queue");
			hi = lo;
		} else if (!num(item.substr(0, dash), lo) || !num(item.substr(dash + 1), hi) || hi < lo) {
			return bad("'" + std::string(item) + "' is not a range LOW-HIGH");
		}
		if (hi >= limit)
			return bad("queue " + std::to_string(hi) + " outside 0.." + std::to_string(limit - 1));
		for (uint32_t q = lo; q <= hi; q++)
			out.push_back(q);
		if (end == std::string_view::npos)
			break;
		at = end + 1;
	}
	std::sort(out.begin(), out.end());
	out.erase(std::unique(out.begin(), out.end()), out.end());
	return out;
}

std::string queue_list_text(const std::vector<uint32_t> &qs)
{
	std::string s;
	for (size_t i = 0; i < qs.size();) {
		size_t j = i;
		while (j + 1 < qs.size() && qs[j + 1] == qs[j] + 1)
			j++;
		s += (s.empty() ? "" : ",") + std::to_string(qs[i]);
		if (j > i)
			s += "-" + std::to_string(qs[j]);
		i = j + 1;
	}
	return s;
}

} // namespace xoffload
