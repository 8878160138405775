// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The RX and TX queues of a device (ethtool -l): ethtool netlink
// CHANNELS_GET, else the queues sysfs lists, else what rtnetlink says the
// device allocated; and the queue lists of send/recv (--queues 0-3,5 / all).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "xoffload/features/features.hpp"
#include "xoffload/core/netdev.hpp"
#include "xoffload/core/result.hpp"

namespace xoffload {

struct Channels {
	unsigned rx = 0, tx = 0;		// queues in use: combined + rx-only, combined + tx-only
	unsigned max_rx = 0, max_tx = 0;	// what the channel limits would allow (0: unknown)
	unsigned combined = 0;			// ethtool's combined count (0 where the driver has none)
	// Where the counts come from: "ethtool" (ETHTOOL_MSG_CHANNELS_GET),
	// "sysfs" (/sys/class/net/IF/queues/rx-*, the queues in use) or
	// "rtnetlink" (IFLA_NUM_RX/TX_QUEUES: the queues the device allocated,
	// an upper bound), for a driver without ethtool's get_channels.
	std::string source;
};

// The channels of @dev in the current network namespace. sysfs is read only
// where it shows this namespace (no --netns, and the ifindex under
// /sys/class/net agrees); runtime error when nothing answers.
Result<Channels> read_channels(const Netdev &dev);

// The fields of one ETHTOOL_MSG_CHANNELS_GET reply (for tests: a recorded
// message). Returns false when it carries no count.
bool parse_channels_reply(const void *nlmsg, size_t len, Channels &out);

// A queue list of send/recv: "all" (every one of @n queues), "N" (queues
// 0..N-1, the older count form), or comma-separated queues and ranges
// ("0-3", "1,3", "0-1,6"). Sorted, without duplicates; each below @limit.
// @n == 0: "all" is refused (the count is unknown). Usage errors name @what.
Result<std::vector<uint32_t>> parse_queue_list(std::string_view s, unsigned n, unsigned limit,
					       const std::string &what = "--queues");

// "0-3", "0,2", "1-2,5": the shortest text of a sorted queue list.
std::string queue_list_text(const std::vector<uint32_t> &qs);

} // namespace xoffload

namespace xoffload {

// How to bring the flows of a device's other RX queues to the queues in
// @bound, from its driver's facts (rxq_from_peer, set_channels, rss_table,
// ntuple): RSS (ethtool -L / -X) and flow steering (ethtool -N ... action Q)
// where the driver has them, and its limits; every remedy with its
// condition where the facts are not modelled. One sentence, no newline.
std::string rx_steering_remedy(const features::NicFacts &f, const std::string &ifname,
			       const std::vector<uint32_t> &bound);
// The same for the ethtool driver name @driver ("i40e"), under the running
// kernel's facts.
std::string rx_steering_remedy(std::string_view driver, const std::string &ifname,
			       const std::vector<uint32_t> &bound);

} // namespace xoffload
