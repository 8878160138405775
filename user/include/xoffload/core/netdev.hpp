// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Interfaces, network namespaces and the bpffs pin layout
// (/sys/fs/bpf/xoffload/<ifname>[@<netns>]/).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>
#include <string_view>

#include "xoffload/core/result.hpp"

namespace xoffload {

struct Netdev {
	std::string name;
	int ifindex = 0;
};

// Resolves an interface in the current network namespace: a usage error for
// a name that cannot be one, a runtime error (ENODEV, 'Cannot find device
// "X"', ip's words) for one that does not exist.
Result<Netdev> netdev_lookup(std::string_view ifname);

// The MTU and the MAC address of an interface in the current namespace.
Result<uint32_t> netdev_mtu(const std::string &ifname);
Result<std::array<uint8_t, 6>> netdev_mac(const std::string &ifname);
// Whether the interface is up with carrier (IFF_UP and IFF_RUNNING).
Result<bool> netdev_running(const std::string &ifname);

// The device's own counters (rtnetlink IFLA_STATS64, read in the current
// network namespace, where sysfs may show another one's).
struct NetdevStats {
	uint64_t tx_packets = 0, tx_dropped = 0, tx_errors = 0;
	uint64_t rx_packets = 0, rx_dropped = 0;
	// frames the device lost for want of an RX buffer or descriptor (its
	// ring ran dry: rx_missed_errors, MPC/RNBC on igb), in its FIFO, or for
	// a full ring (rx_over_errors): all before any XDP program ran
	uint64_t rx_missed = 0, rx_fifo = 0, rx_over = 0;
};
Result<NetdevStats> netdev_stats(const Netdev &dev);

// Moves this process into the named network namespace (/run/netns/<name>),
// like `ip -n`. The mount namespace, and so bpffs, stays the caller's.
Status netns_enter(const std::string &name);
// Name given to netns_enter, empty for the initial one.
const std::string &netns_current();

// netns_enter() for a scope: enters @name ("" or the current name: stays)
// and, when destroyed, returns to the namespace (and name) it was in. For
// code that visits several namespaces in one process (offload-tool apply).
class NetnsScope {
public:
	static Result<NetnsScope> enter(const std::string &name);
	NetnsScope(NetnsScope &&o) noexcept : back_(o.back_), name_(std::move(o.name_)) { o.back_ = -1; }
	NetnsScope &operator=(NetnsScope &&) = delete;
	~NetnsScope();

private:
	NetnsScope() = default;
	int back_ = -1;		// the namespace to return to; -1: none left
	std::string name_;
};

// The permanent MAC address of @ifname (ethtool -P), "xx:xx:xx:xx:xx:xx";
// "" when the device has none (veth, bridges: all zeros).
Result<std::string> netdev_perm_mac(const std::string &ifname);
// Every interface of the current network namespace, by name.
Result<std::vector<std::string>> netdev_names();

inline constexpr const char *kBpffsRoot = "/sys/fs/bpf";

// Fails with a clear line when /sys/fs/bpf is not a mounted bpffs.
Status bpffs_check();
// Pin directory of one interface; contains the netns name when not the initial one.
std::string pin_dir(const Netdev &dev);
Status make_dirs(const std::string &path);
// Removes the pin directory and the pins in it; missing is fine.
Status remove_pin_dir(const std::string &path);
bool path_exists(const std::string &path);

} // namespace xoffload
