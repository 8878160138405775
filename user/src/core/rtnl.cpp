// One rtnetlink dump: request out, every reply message to a callback.
#include <linux/netlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <vector>

#include "internal.hpp"
#include "xoffload/fd.hpp"

namespace xoffload {

Status rtnl_dump(nlmsghdr *req, const std::string &what,
		 const std::function<void(const nlmsghdr *)> &each)
{
	UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
	if (!fd.valid())
		return errno_error("netlink socket", errno);
	req->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req->nlmsg_seq = 1;
	if (::send(fd.get(), req, req->nlmsg_len, 0) < 0)
		return errno_error(what, errno);
	std::vector<char> buf(65536);
	for (;;) {
		ssize_t n = ::recv(fd.get(), buf.data(), buf.size(), 0);
		if (n < 0)
			return errno_error(what + " recv", errno);
		int len = static_cast<int>(n);
		for (auto *nh = reinterpret_cast<nlmsghdr *>(buf.data()); NLMSG_OK(nh, len); nh = NLMSG_NEXT(nh, len)) {
			if (nh->nlmsg_type == NLMSG_DONE)
				return ok();
			if (nh->nlmsg_type == NLMSG_ERROR) {
				int e = -static_cast<const nlmsgerr *>(NLMSG_DATA(nh))->error;
				return e ? errno_error(what, e) : ok();
			}
			each(nh);
		}
	}
}

} // namespace xoffload
