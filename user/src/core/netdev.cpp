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
