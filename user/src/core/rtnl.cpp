// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// One rtnetlink dump: request out, every reply message to a callback.
#include <cstring>

#include "internal.hpp"
#include "nl.hpp"

namespace xoffload {

Status rtnl_dump(nlmsghdr *req, const std::string &what,
		 const std::function<void(const nlmsghdr *)> &each)
{
	auto sock = nl::Socket::open(NETLINK_ROUTE);
	if (!sock)
		return sock.error();
	nl::Message msg(req->nlmsg_len + 64);
	std::memcpy(msg.header(), req, req->nlmsg_len);
	msg.header()->nlmsg_flags = NLM_F_DUMP;
	return sock->request(msg, what, [&](const nlmsghdr *nh) {
		each(nh);
		return MNL_CB_OK;
	});
}

} // namespace xoffload
