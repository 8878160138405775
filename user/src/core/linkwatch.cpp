// Link events of one interface through rtnetlink, and the netns name
// checked against the netns we run in.
#include "xoffload/linkwatch.hpp"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>

namespace xoffload {

Result<LinkWatch> LinkWatch::open(const Netdev &dev)
{
	LinkWatch w;
	w.dev_ = dev;
	w.nl_.reset(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE));
	if (!w.nl_.valid())
		return errno_error("netlink socket", errno);
	sockaddr_nl sa{};
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = RTMGRP_LINK;
	if (::bind(w.nl_.get(), reinterpret_cast<sockaddr *>(&sa), sizeof(sa)))
		return errno_error("subscribe to link events", errno);
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
	char buf[16384];
	bool lost = false;	// events dropped (ENOBUFS): ask directly
	for (;;) {
		ssize_t n = ::recv(nl_.get(), buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == ENOBUFS) {
				lost = true;
				continue;
			}
			break;	// EAGAIN: nothing more
		}
		int len = static_cast<int>(n);
		for (auto *nh = reinterpret_cast<nlmsghdr *>(buf); NLMSG_OK(nh, len); nh = NLMSG_NEXT(nh, len)) {
			if (nh->nlmsg_type != RTM_DELLINK)
				continue;
			// a bridge port leaving its bridge gets an AF_BRIDGE
			// RTM_DELLINK and lives on: ask whether it is still here
			const auto *ifi = static_cast<const ifinfomsg *>(NLMSG_DATA(nh));
			char name[IF_NAMESIZE];
			if (ifi->ifi_index == dev_.ifindex && !if_indextoname(static_cast<unsigned>(dev_.ifindex), name))
				return dev_.name + " (ifindex " + std::to_string(dev_.ifindex) +
				       ") was deleted or moved to another network namespace";
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
