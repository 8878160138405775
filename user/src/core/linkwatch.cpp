// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Link events of one interface through rtnetlink, and the netns name
// checked against the netns we run in.
#include "xoffload/core/linkwatch.hpp"

#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>

#include "nl.hpp"

namespace xoffload {

LinkWatch::LinkWatch() = default;
LinkWatch::LinkWatch(LinkWatch &&) noexcept = default;
LinkWatch &LinkWatch::operator=(LinkWatch &&) noexcept = default;
LinkWatch::~LinkWatch() = default;

Result<LinkWatch> LinkWatch::open(const Netdev &dev)
{
	LinkWatch w;
	w.dev_ = dev;
	auto sock = nl::Socket::open(NETLINK_ROUTE, RTMGRP_LINK, SOCK_NONBLOCK);
	if (!sock)
		return Error{sock.error().kind, sock.error().err, "subscribe to link events: " + sock.error().msg};
	w.nl_ = std::make_unique<nl::Socket>(std::move(*sock));
	w.netns_ = netns_current();
	struct stat st {};
	if (::stat("/proc/thread-self/ns/net", &st))
		return errno_error("identify the network namespace", errno);
	w.netns_ino_ = st.st_ino;
	w.netns_dev_ = st.st_dev;
	return w;
}

std::optional<std::string> LinkWatch::gone()
{
	bool lost = false;	// events dropped (ENOBUFS): ask directly
	std::optional<std::string> why;
	for (;;) {
		auto r = nl_->receive([&](const nlmsghdr *nh) {
			if (nh->nlmsg_type != RTM_DELLINK || nh->nlmsg_len < NLMSG_LENGTH(sizeof(ifinfomsg)))
				return MNL_CB_OK;
			// a bridge port leaving its bridge gets an AF_BRIDGE
			// RTM_DELLINK and lives on: ask whether it is still here
			const auto *ifi = static_cast<const ifinfomsg *>(mnl_nlmsg_get_payload(nh));
			char name[IF_NAMESIZE];
			if (ifi->ifi_index == dev_.ifindex && !if_indextoname(static_cast<unsigned>(dev_.ifindex), name)) {
				why = dev_.name + " (ifindex " + std::to_string(dev_.ifindex) +
				      ") was deleted or moved to another network namespace";
				return MNL_CB_STOP;
			}
			return MNL_CB_OK;
		});
		if (why)
			return why;
		if (!r) {
			if (r.error().err == ENOBUFS) {
				lost = true;
				continue;
			}
			break;	// EAGAIN: nothing more
		}
	}
	if (lost) {
		char name[IF_NAMESIZE];
		if (!if_indextoname(static_cast<unsigned>(dev_.ifindex), name))
			return dev_.name + " (ifindex " + std::to_string(dev_.ifindex) + ") is gone";
	}
	if (!netns_.empty()) {
		// `ip netns del` removes the name; our process keeps the netns alive
		struct stat st {};
		if (::stat(("/run/netns/" + netns_).c_str(), &st) || st.st_ino != netns_ino_ || st.st_dev != netns_dev_)
			return "netns " + netns_ + " of " + dev_.name + " was deleted";
	}
	return std::nullopt;
}

} // namespace xoffload
