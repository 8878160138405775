// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Library-internal glue of the core module, shared with the modules above it.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <functional>
#include <string>

#include "xoffload/core/result.hpp"

namespace xoffload {

// An rtnetlink request: the header, then @Body (ifinfomsg, tcmsg, ...).
template <typename Body>
struct RtnlRequest {
	nlmsghdr nh;
	Body body;
};

template <typename Body>
RtnlRequest<Body> rtnl_request(uint16_t type)
{
	RtnlRequest<Body> r{};
	r.nh.nlmsg_len = sizeof(r);
	r.nh.nlmsg_type = type;
	return r;
}

// Sends @req (its nlmsg_len, type and body set) as an rtnetlink dump and
// hands each reply message to @each; @what names the request in errors.
Status rtnl_dump(nlmsghdr *req, const std::string &what,
		 const std::function<void(const nlmsghdr *)> &each);

} // namespace xoffload
