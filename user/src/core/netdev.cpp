// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Interface lookup, netns entry and the pin directory layout.
#include "xoffload/core/netdev.hpp"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <linux/rtnetlink.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include "internal.hpp"
#include "xoffload/core/fd.hpp"

namespace xoffload {

namespace {
std::string g_netns;
}

Result<Netdev> netdev_lookup(std::string_view ifname)
{
	std::string name(ifname);

	if (name.empty() || name.size() >= IFNAMSIZ)
		return usage_error("invalid interface name '" + name + "'");
	unsigned idx = if_nametoindex(name.c_str());
	// a runtime fact, worded as ip words it (exit 1, not a usage error)
	if (!idx)
		return runtime_error("Cannot find device \"" + name + "\"", ENODEV);
	return Netdev{name, static_cast<int>(idx)};
}

namespace {

// One SIOCGIF* request on ifname.
Status if_ioctl(const std::string &ifname, unsigned long req, ifreq &ifr, const char *what)
{
	UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	if (!fd.valid())
		return errno_error("socket", errno);
	std::snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname.c_str());
	if (::ioctl(fd.get(), req, &ifr))
		return errno_error(std::string("read the ") + what + " of " + ifname, errno);
	return ok();
}

} // namespace

Result<uint32_t> netdev_mtu(const std::string &ifname)
{
	ifreq ifr{};
	if (auto s = if_ioctl(ifname, SIOCGIFMTU, ifr, "MTU"); !s)
		return s.error();
	return static_cast<uint32_t>(ifr.ifr_mtu);
}

Result<bool> netdev_running(const std::string &ifname)
{
	ifreq ifr{};
	if (auto s = if_ioctl(ifname, SIOCGIFFLAGS, ifr, "flags"); !s)
		return s.error();
	return (ifr.ifr_flags & (IFF_UP | IFF_RUNNING)) == (IFF_UP | IFF_RUNNING);
}

Result<std::array<uint8_t, 6>> netdev_mac(const std::string &ifname)
{
	ifreq ifr{};
	if (auto s = if_ioctl(ifname, SIOCGIFHWADDR, ifr, "MAC address"); !s)
		return s.error();
	std::array<uint8_t, 6> m{};
	std::memcpy(m.data(), ifr.ifr_hwaddr.sa_data, 6);
	return m;
}

Result<NetdevStats> netdev_stats(const Netdev &dev)
{
	auto req = rtnl_request<ifinfomsg>(RTM_GETLINK);
	req.body.ifi_family = AF_UNSPEC;
	std::optional<NetdevStats> out;
	auto s = rtnl_dump(&req.nh, "RTM_GETLINK", [&](const nlmsghdr *nh) {
		if (nh->nlmsg_type != RTM_NEWLINK)
			return;
		auto *ifm = static_cast<const ifinfomsg *>(NLMSG_DATA(nh));
		if (ifm->ifi_index != dev.ifindex)
			return;
		int len = static_cast<int>(IFLA_PAYLOAD(nh));
		for (auto *rta = IFLA_RTA(ifm); RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
			if (rta->rta_type != IFLA_STATS64 || RTA_PAYLOAD(rta) < sizeof(rtnl_link_stats64))
				continue;
			rtnl_link_stats64 st;
			std::memcpy(&st, RTA_DATA(rta), sizeof(st));	// 4-byte aligned in the message
			out = NetdevStats{st.tx_packets, st.tx_dropped, st.tx_errors, st.rx_packets, st.rx_dropped,
					  st.rx_missed_errors, st.rx_fifo_errors, st.rx_over_errors};
		}
	});
	if (!s)
		return s.error();
	if (!out)
		return runtime_error("no IFLA_STATS64 for " + dev.name + " (device gone?)", ENODEV);
	return *out;
}

Status netns_enter(const std::string &name)
{
	if (name.empty() || name.find('/') != std::string::npos)
		return usage_error("invalid netns name '" + name + "'");
	std::string path = "/run/netns/" + name;
	UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
	if (!fd.valid()) {
		int e = errno;
		if (e == ENOENT)
			return usage_error("unknown netns '" + name + "'");
		return errno_error("open " + path, e);
	}
	if (setns(fd.get(), CLONE_NEWNET))
		return errno_error("setns to netns '" + name + "'", errno);
	g_netns = name;
	return ok();
}

const std::string &netns_current()
{
	return g_netns;
}

Result<NetnsScope> NetnsScope::enter(const std::string &name)
{
	NetnsScope sc;
	if (name.empty() || name == g_netns)
		return sc;
	int self = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return errno_error("open /proc/thread-self/ns/net", errno);
	std::string prev = g_netns;
	if (auto s = netns_enter(name); !s) {
		::close(self);
		return s.error();
	}
	sc.back_ = self;
	sc.name_ = std::move(prev);
	return sc;
}

NetnsScope::~NetnsScope()
{
	if (back_ < 0)
		return;
	// back where we came from, or every pin path after this would be wrong
	if (setns(back_, CLONE_NEWNET) == 0)
		g_netns = name_;
	::close(back_);
}

Result<std::string> netdev_perm_mac(const std::string &ifname)
{
	if (ifname.empty() || ifname.size() >= IFNAMSIZ)
		return usage_error("invalid interface name '" + ifname + "'");
	UniqueFd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	if (!s.valid())
		return errno_error("socket", errno);
	alignas(ethtool_perm_addr) uint8_t buf[sizeof(ethtool_perm_addr) + 32]{};	// MAX_ADDR_LEN
	auto *pa = reinterpret_cast<ethtool_perm_addr *>(buf);
	pa->cmd = ETHTOOL_GPERMADDR;
	pa->size = 32;
	ifreq ifr{};
	std::memcpy(ifr.ifr_name, ifname.c_str(), ifname.size());
	ifr.ifr_data = reinterpret_cast<char *>(buf);
	if (::ioctl(s.get(), SIOCETHTOOL, &ifr))
		return errno_error("read the permanent address of " + ifname, errno);
	const uint8_t *a = buf + sizeof(ethtool_perm_addr);
	if (pa->size != 6)
		return std::string();
	bool zero = true;
	for (unsigned i = 0; i < 6; i++)
		zero = zero && a[i] == 0;
	if (zero)
		return std::string();
	char b[18];
	std::snprintf(b, sizeof(b), "%02x:%02x:%02x:%02x:%02x:%02x", a[0], a[1], a[2], a[3], a[4], a[5]);
	return std::string(b);
}

Result<std::vector<std::string>> netdev_names()
{
	struct if_nameindex *ni = if_nameindex();
	if (!ni)
		return errno_error("list interfaces", errno);
	std::vector<std::string> out;
	for (struct if_nameindex *p = ni; p->if_index; p++)
		out.emplace_back(p->if_name);
	if_freenameindex(ni);
	return out;
}

Status bpffs_check()
{
	struct statfs st {};

	if (statfs(kBpffsRoot, &st) || st.f_type != BPF_FS_MAGIC)
		return runtime_error(std::string("bpffs is not mounted on ") + kBpffsRoot +
				     " (mount -t bpf bpf /sys/fs/bpf; inside 'ip netns exec' use --netns instead)");
	return ok();
}

std::string pin_dir(const Netdev &dev)
{
	std::string d = std::string(kBpffsRoot) + "/xoffload/" + dev.name;
	if (!g_netns.empty())
		d += "@" + g_netns;
	return d;
}

Status make_dirs(const std::string &path)
{
	std::error_code ec;
	std::filesystem::create_directories(path, ec);
	if (ec)
		return errno_error("mkdir " + path, ec.value());
	return ok();
}

Status remove_pin_dir(const std::string &path)
{
	std::error_code ec;
	std::filesystem::remove_all(path, ec);
	if (ec)
		return errno_error("remove " + path, ec.value());
	return ok();
}

bool path_exists(const std::string &path)
{
	struct stat st {};
	return ::stat(path.c_str(), &st) == 0;
}

} // namespace xoffload
