// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Notices an interface going away under a long-running command (recv):
// deleted, moved to another netns, or its netns deleted by name.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "xoffload/core/netdev.hpp"
#include "xoffload/core/result.hpp"

namespace xoffload {

namespace nl {
class Socket;
}

class LinkWatch {
public:
	// Subscribes to @dev's link events (an rtnetlink socket in the current
	// netns, RTMGRP_LINK), and remembers the netns netns_enter() named.
	static Result<LinkWatch> open(const Netdev &dev);

	// Non-blocking: why @dev is gone ("veth-b was deleted", "netns ns1 was
	// deleted"), or nothing while it is there. Cheap enough for every
	// tenth of a second.
	std::optional<std::string> gone();

	LinkWatch(LinkWatch &&) noexcept;
	LinkWatch &operator=(LinkWatch &&) noexcept;
	~LinkWatch();

private:
	LinkWatch();
	Netdev dev_;
	std::unique_ptr<nl::Socket> nl_;	// rtnetlink, RTMGRP_LINK, non-blocking
	std::string netns_;		// "" for none given
	unsigned long netns_ino_ = 0;	// of the netns we run in
	unsigned long netns_dev_ = 0;
};

} // namespace xoffload
