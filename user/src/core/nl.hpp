// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Netlink through libmnl: one socket type for rtnetlink and generic netlink
// (ethtool), request/reply with the kernel's extended ack turned into the
// error line. Every netlink exchange of the library goes through here.
#pragma once

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "xoffload/core/owned.hpp"
#include "xoffload/core/result.hpp"

namespace xoffload::nl {

// A message being built: a buffer sized for one request.
class Message {
public:
	explicit Message(size_t size = 4096) : buf_(size) { nlh_ = mnl_nlmsg_put_header(buf_.data()); }
	nlmsghdr *header() { return nlh_; }
	// Room for a fixed family header (ifinfomsg, genlmsghdr, ...).
	template <typename T>
	T *put_extra() { return static_cast<T *>(mnl_nlmsg_put_extra_header(nlh_, sizeof(T))); }
	size_t capacity() const { return buf_.size(); }

private:
	std::vector<char> buf_;
	nlmsghdr *nlh_;
};

// Called for each reply message; return MNL_CB_OK to go on, MNL_CB_STOP to
// end early, MNL_CB_ERROR to fail (the callback then sets its own error).
using Each = std::function<int(const nlmsghdr *)>;

class Socket {
public:
	// @bus: NETLINK_ROUTE or NETLINK_GENERIC. @groups: multicast groups to
	// join (bitmask of the old-style groups, 0 for none). @flags: more
	// socket(2) type flags (SOCK_NONBLOCK); SOCK_CLOEXEC always.
	static Result<Socket> open(int bus, unsigned groups = 0, int flags = 0);

	// Sends @msg (type and flags set by the caller; seq and portid are set
	// here, NLM_F_REQUEST and NLM_F_ACK added) and reads replies until the
	// kernel's ack or NLMSG_DONE. @what names the request in error lines;
	// the kernel's extack message is appended when it sent one.
	Status request(Message &msg, const std::string &what, const Each &each = {});

	// Joins a multicast group by number (RTNLGRP_*, or a genl group id).
	Status join(unsigned group);

	// Receives one batch of multicast messages and hands each to @each.
	// Returns an error with err == EAGAIN when the socket is non-blocking and
	// nothing is queued.
	Status receive(const Each &each);

	int fd() const;
	uint32_t portid() const;

private:
	Owned<mnl_socket, mnl_socket_close> sock_;
	uint32_t seq_ = 0;
	std::vector<char> rbuf_;	// receive(): kept, it runs every tenth of a second
};

// Every attribute of @nlh after @offset bytes of family header, in order.
// (libmnl's mnl_attr_for_each is a C macro that does not compile as C++.)
template <typename F>
void for_each_attr(const nlmsghdr *nlh, size_t offset, F &&f)
{
	auto *a = static_cast<const nlattr *>(mnl_nlmsg_get_payload_offset(nlh, offset));
	auto *tail = static_cast<const char *>(mnl_nlmsg_get_payload_tail(nlh));
	for (; mnl_attr_ok(a, static_cast<int>(tail - reinterpret_cast<const char *>(a))); a = mnl_attr_next(a))
		f(a);
}

// Every attribute nested in @nest.
template <typename F>
void for_each_nested(const nlattr *nest, F &&f)
{
	auto *a = static_cast<const nlattr *>(mnl_attr_get_payload(nest));
	auto *tail = reinterpret_cast<const char *>(nest) + mnl_attr_get_len(nest);
	for (; mnl_attr_ok(a, static_cast<int>(tail - reinterpret_cast<const char *>(a))); a = mnl_attr_next(a))
		f(a);
}

// Receive buffer for dumps (libmnl 1.0.4 has no MNL_SOCKET_DUMP_SIZE).
inline constexpr size_t recv_buffer_size = 65536;

// Resolves a generic netlink family id ("ethtool", ...); ENOENT when the
// kernel has none.
Result<uint16_t> genl_family(Socket &sock, const std::string &name);

// An ethtool netlink request for @cmd on @ifname: genl header and the
// ETHTOOL_A_*_HEADER nest (index 1 of every ethtool message) filled in.
// @header_flags: ETHTOOL_FLAG_COMPACT_BITSETS and friends.
void ethtool_put_request(Message &msg, uint16_t family, uint8_t cmd, uint16_t header_attr,
			 const std::string &ifname, uint32_t header_flags = 0);

// A generic netlink socket with the ethtool family resolved (ENOENT, with a
// line naming CONFIG_ETHTOOL_NETLINK, on a kernel without it).
struct EthtoolSocket {
	Socket sock;
	uint16_t family;
};
Result<EthtoolSocket> ethtool_socket();

// One ethtool netlink GET for @ifname (cmd, its header attribute, header
// flags); each reply message to @each; @what names it in error lines.
Status ethtool_get(const std::string &ifname, uint8_t cmd, uint16_t header_attr, uint32_t header_flags,
		   const std::string &what, const Each &each);

} // namespace xoffload::nl
