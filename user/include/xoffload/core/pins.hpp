// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Which device a pin directory belongs to: its ifindex and network namespace
// (recorded in the directory), so that state follows the device, not its
// name, across renames, and a new device with an old name starts clean.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "xoffload/core/netdev.hpp"
#include "xoffload/core/result.hpp"

struct bpf_object;

namespace xoffload {

// The identity a pin directory records: the device's ifindex and the
// cookie of its network namespace (SO_NETNS_COOKIE, never reused while the
// machine runs; the netns inode where the kernel lacks the cookie, < 5.14).
struct PinOwner {
	int ifindex = 0;
	uint64_t netns = 0;
	bool operator==(const PinOwner &) const = default;
};

// The cookie of the current network namespace.
Result<uint64_t> netns_cookie();

// Records @dev as the owner of its pin directory (pin_dir(dev)), which must
// exist; a record already there is kept. 0 on success.
Status mark_pin_dir(const Netdev &dev);

// Before a command uses the pins of @dev: the directory under @dev's name
// recorded for another device is moved to that device's name if it still
// exists here (renamed), else removed (its device is gone); a directory
// recorded for @dev under an old name is moved to @dev's name. One
// notice says what was moved or removed. A directory without a record (made
// by xdp-loader -p, or an older xoffload) is taken as @dev's. Nothing to do
// without bpffs.
Status reconcile_pins(const Netdev &dev);

// The device named @ifname with its pin directories reconciled (above);
// with @need_bpffs, an error first when bpffs is not mounted (bpffs_check).
// What every command that reads or changes a device's pins starts with.
Result<Netdev> netdev_with_pins(std::string_view ifname, bool need_bpffs = false);

// One directory under /sys/fs/bpf/xoffload.
struct PinDirState {
	std::string path;
	std::string ifname;		// from the directory name
	std::string netns;		// from the directory name, "" for the initial one
	std::optional<PinOwner> owner;	// the record, if any
	bool orphan = false;		// its device is gone or is a different one now
	std::string why;		// orphan: the reason; else "" or where it lives now
};

// Every pin directory of ours, each judged in its own network namespace
// (entered and left again); one that cannot be judged is not an orphan.
Result<std::vector<PinDirState>> list_pin_dirs();

// Runs @f inside the network namespace a pin directory's name points at
// (/run/netns/<ns>, the initial one for ""), then returns to the current
// one; false (f not run) when that namespace does not exist (any more).
Result<bool> in_netns(const std::string &ns, const std::function<void()> &f);

// Removes @dir's pins and the directory.
Status purge_pin_dir(const std::string &dir);

// What libbpf compares before it reuses a pinned map (bpf_map_info).
struct MapShape {
	uint32_t type = 0, key_size = 0, value_size = 0, max_entries = 0, flags = 0;
	bool operator==(const MapShape &) const = default;
};

// A map pinned at @path (none there: ok) of another shape than @want, as
// an xoffload built with another abi.h leaves it (a counter more, a larger
// table), cannot be reused: libbpf would fail inside the load with an
// EINVAL that names nothing, and a reader would misread it. A runtime error
// in one line naming the map, both shapes and the remedy (offload-tool
// detach --purge @ifname).
Status check_pinned_shape(const std::string &path, const MapShape &want, const std::string &ifname);

// check_pinned_shape() for every pinned map of @obj (opened, not loaded,
// with the pin root of @ifname's directory) against the map it declares.
Status check_object_pins(bpf_object *obj, const std::string &ifname);

} // namespace xoffload
