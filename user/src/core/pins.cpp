// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Pin directory identity: an ifindex + netns cookie record in each
// directory (a bpffs symlink named "device"), renames followed, stale and
// orphaned directories found.
#include "xoffload/core/pins.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <functional>

#include "xoffload/core/fd.hpp"
#include "xoffload/core/notice.hpp"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

namespace xoffload {

namespace {

const std::string &pins_root()
{
	static const std::string root = std::string(kBpffsRoot) + "/xoffload";
	return root;
}

// bpffs refuses names with a dot, so no ".device"
std::string owner_path(const std::string &dir)
{
	return dir + "/device";
}

std::string owner_text(const PinOwner &o)
{
	return "ifindex=" + std::to_string(o.ifindex) + " netns=" + std::to_string(o.netns);
}

std::optional<PinOwner> read_owner(const std::string &dir)
{
	char buf[128];
	ssize_t n = ::readlink(owner_path(dir).c_str(), buf, sizeof(buf) - 1);
	if (n <= 0)
		return std::nullopt;
	buf[n] = 0;
	PinOwner o;
	if (std::sscanf(buf, "ifindex=%d netns=%" SCNu64, &o.ifindex, &o.netns) != 2)
		return std::nullopt;
	return o;
}

Status write_owner(const std::string &dir, const PinOwner &o)
{
	if (::symlink(owner_text(o).c_str(), owner_path(dir).c_str()) && errno != EEXIST)
		return errno_error("record the device of " + dir, errno);
	return ok();
}

bool is_bpffs_dir(const std::string &path)
{
	struct stat st {};
	return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string ifname_of(int ifindex)
{
	char name[IF_NAMESIZE] = {};
	return if_indextoname(static_cast<unsigned>(ifindex), name) ? std::string(name) : std::string();
}

// Directory names under the pin root.
std::vector<std::string> pin_dir_names()
{
	std::vector<std::string> names;
	DIR *d = ::opendir(pins_root().c_str());
	if (!d)
		return names;
	while (dirent *e = ::readdir(d)) {
		std::string n = e->d_name;
		if (n != "." && n != ".." && is_bpffs_dir(pins_root() + "/" + n))
			names.push_back(n);
	}
	::closedir(d);
	return names;
}

} // namespace

// Runs @f inside the network namespace a pin directory's name points at
// (/run/netns/<ns>, the initial one for ""), then returns to the current one.
// false when that namespace does not exist (any more).
Result<bool> in_netns(const std::string &ns, const std::function<void()> &f)
{
	if (ns == netns_current()) {
		f();
		return true;
	}
	std::string path = ns.empty() ? "/proc/1/ns/net" : "/run/netns/" + ns;
	UniqueFd target(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
	if (!target.valid())
		return errno == ENOENT ? Result<bool>(false) : Result<bool>(errno_error("open " + path, errno));
	UniqueFd self(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
	if (!self.valid())
		return errno_error("open /proc/thread-self/ns/net", errno);
	if (setns(target.get(), CLONE_NEWNET))
		return errno_error("enter the netns of " + path, errno);
	f();
	if (setns(self.get(), CLONE_NEWNET))
		return errno_error("return from the netns of " + path, errno);
	return true;
}

Result<uint64_t> netns_cookie()
{
	UniqueFd s(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	if (!s.valid())
		return errno_error("socket", errno);
	uint64_t cookie = 0;
	socklen_t len = sizeof(cookie);
	if (!::getsockopt(s.get(), SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len))
		return cookie;
	struct stat st {};
	if (::stat("/proc/thread-self/ns/net", &st))
		return errno_error("identify the network namespace", errno);
	return static_cast<uint64_t>(st.st_ino);
}

Status mark_pin_dir(const Netdev &dev)
{
	auto c = netns_cookie();
	if (!c)
		return c.error();
	return write_owner(pin_dir(dev), PinOwner{dev.ifindex, *c});
}

Status reconcile_pins(const Netdev &dev)
{
	if (!bpffs_check())
		return ok();
	auto c = netns_cookie();
	if (!c)
		return c.error();
	const PinOwner me{dev.ifindex, *c};
	const std::string dir = pin_dir(dev);
	if (is_bpffs_dir(dir)) {
		std::optional<PinOwner> rec = read_owner(dir);
		if (!rec)
			return write_owner(dir, me);	// xdp-loader's or an older xoffload's: ours from now on
		if (*rec == me)
			return ok();
		std::string now = rec->netns == me.netns ? ifname_of(rec->ifindex) : std::string();
		if (!now.empty()) {
			// its device lives on under another name: the pins go with it
			std::string to = pin_dir(Netdev{now, rec->ifindex});
			if (is_bpffs_dir(to))
				return runtime_error(dir + " belongs to " + now + " (ifindex " + std::to_string(rec->ifindex) +
						     ") and " + to + " exists too (offload-tool detach --purge " + dev.name +
						     " removes the first)");
			if (::rename(dir.c_str(), to.c_str()))
				return errno_error("move " + dir + " to " + to, errno);
			notice(dir + " belonged to ifindex " + std::to_string(rec->ifindex) + ", now named " + now +
			       ": moved to " + to);
		} else {
			if (auto s = remove_pin_dir(dir); !s)
				return s;
			notice("removed stale pins " + dir + " (of ifindex " + std::to_string(rec->ifindex) + " in " +
			       (rec->netns == me.netns ? "this network namespace" : "a network namespace since deleted") +
			       ", gone; " + dev.name + " is ifindex " + std::to_string(dev.ifindex) + ")");
		}
	}
	// pins of this device kept under a name it had before
	for (const auto &n : pin_dir_names()) {
		std::string from = pins_root() + "/" + n;
		if (from == dir || read_owner(from) != std::optional<PinOwner>(me))
			continue;
		if (::rename(from.c_str(), dir.c_str()))
			return errno_error("move " + from + " to " + dir, errno);
		notice("pins of " + dev.name + " (ifindex " + std::to_string(dev.ifindex) + ") moved from " + from +
		       " (the interface was renamed)");
		break;
	}
	return ok();
}

Result<Netdev> netdev_with_pins(std::string_view ifname, bool need_bpffs)
{
	auto dev = netdev_lookup(ifname);
	if (!dev)
		return dev;
	if (need_bpffs)
		if (auto s = bpffs_check(); !s)
			return s.error();
	if (auto s = reconcile_pins(*dev); !s)
		return s.error();
	return dev;
}

Result<std::vector<PinDirState>> list_pin_dirs()
{
	std::vector<PinDirState> out;
	for (const auto &n : pin_dir_names()) {
		PinDirState s;
		s.path = pins_root() + "/" + n;
		size_t at = n.find('@');
		s.ifname = n.substr(0, at);
		s.netns = at == std::string::npos ? std::string() : n.substr(at + 1);
		s.owner = read_owner(s.path);
		auto in = in_netns(s.netns, [&] {
			auto c = netns_cookie();
			if (!c) {
				s.why = c.error().msg;
				return;
			}
			if (s.owner) {
				std::string now = ifname_of(s.owner->ifindex);
				if (s.owner->netns != *c) {
					s.orphan = true;
					s.why = "netns " + (s.netns.empty() ? std::string("(initial)") : s.netns) +
						" is a new one; its ifindex " + std::to_string(s.owner->ifindex) + " is gone";
				} else if (now.empty()) {
					s.orphan = true;
					s.why = "ifindex " + std::to_string(s.owner->ifindex) + " is gone";
				} else if (now != s.ifname) {
					s.why = "ifindex " + std::to_string(s.owner->ifindex) + " is now " + now +
						" (its next command moves the pins)";
				}
			} else if (!if_nametoindex(s.ifname.c_str())) {
				s.orphan = true;
				s.why = "no interface " + s.ifname;
			}
		});
		if (!in)
			s.why = "not checked: " + in.error().msg;	// judged by no one: never an orphan
		else if (!*in) {
			s.orphan = true;
			s.why = "netns " + s.netns + " is gone";
		}
		out.push_back(std::move(s));
	}
	return out;
}

Status purge_pin_dir(const std::string &dir)
{
	return remove_pin_dir(dir);
}

namespace {

// "value 144 bytes" for each field where @have and @want differ: @have's
// values (theirs), else @want's.
std::string shape_diff(const MapShape &have, const MapShape &want, bool theirs)
{
	std::string out;
	auto field = [&](uint32_t a, uint32_t b, const char *name, const char *unit) {
		if (a == b)
			return;
		out += (out.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(theirs ? a : b) + unit;
	};
	field(have.type, want.type, "type", "");
	field(have.key_size, want.key_size, "key", " bytes");
	field(have.value_size, want.value_size, "value", " bytes");
	field(have.max_entries, want.max_entries, "entries", "");
	field(have.flags, want.flags, "flags", "");
	return out;
}

} // namespace

Status check_pinned_shape(const std::string &path, const MapShape &want, const std::string &ifname)
{
	UniqueFd fd(bpf_obj_get(path.c_str()));
	if (!fd.valid())
		return errno == ENOENT ? ok() : errno_error("open pinned map " + path, errno);
	bpf_map_info info{};
	uint32_t len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd.get(), &info, &len))
		return errno_error("read pinned map " + path, errno);
	const MapShape have{info.type, info.key_size, info.value_size, info.max_entries, info.map_flags};
	if (have == want)
		return ok();
	return runtime_error("pinned map " + path + " has the layout of another xoffload build (" +
				     shape_diff(have, want, true) + "; this one needs " + shape_diff(have, want, false) +
				     "): offload-tool detach --purge " + ifname +
				     " removes it with the interface's other pins and settings, then set up again",
			     EINVAL);
}

Status check_object_pins(bpf_object *obj, const std::string &ifname)
{
	bpf_map *m;
	bpf_object__for_each_map(m, obj) {
		const char *path = bpf_map__pin_path(m);
		if (!path)
			continue;
		const MapShape want{static_cast<uint32_t>(bpf_map__type(m)), bpf_map__key_size(m), bpf_map__value_size(m),
				    bpf_map__max_entries(m), bpf_map__map_flags(m)};
		if (auto s = check_pinned_shape(path, want, ifname); !s)
			return s;
	}
	return ok();
}

} // namespace xoffload
