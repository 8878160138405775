// Interface lookup, netns entry and the pin directory layout.
#include "xoffload/netdev.hpp"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "xoffload/fd.hpp"

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
	if (!idx) {
		std::string where = g_netns.empty() ? "" : " in netns '" + g_netns + "'";
		return usage_error("unknown interface '" + name + "'" + where);
	}
	return Netdev{name, static_cast<int>(idx)};
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
