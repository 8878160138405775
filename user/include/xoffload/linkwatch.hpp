// Notices an interface going away under a long-running command (recv):
// deleted, moved to another netns, or its netns deleted by name.
#pragma once

#include <optional>
#include <string>

#include "xoffload/fd.hpp"
#include "xoffload/netdev.hpp"
#include "xoffload/result.hpp"

namespace xoffload {

class LinkWatch {
public:
	// Subscribes to @dev's link events (an rtnetlink socket in the current
	// netns, RTMGRP_LINK), and remembers the netns netns_enter() named.
	static Result<LinkWatch> open(const Netdev &dev);

	// Non-blocking: why @dev is gone ("veth-b was deleted", "netns ns1 was
	// deleted"), or nothing while it is there. Cheap enough for every
	// tenth of a second.
	std::optional<std::string> gone();

private:
	LinkWatch() = default;
	Netdev dev_;
	UniqueFd nl_;
	std::string netns_;		// "" for none given
	unsigned long netns_ino_ = 0;	// of the netns we run in
	unsigned long netns_dev_ = 0;
};

} // namespace xoffload
