// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// libmnl request/reply, with extended-ack error lines.
#include "nl.hpp"

#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace xoffload::nl {

namespace {

// The kernel's extack message of an NLMSG_ERROR, if it sent one.
std::string extack_msg(const nlmsghdr *nlh)
{
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return {};
	auto *err = static_cast<const nlmsgerr *>(mnl_nlmsg_get_payload(nlh));
	size_t off = sizeof(*err);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += err->msg.nlmsg_len - sizeof(nlmsghdr);
	if (mnl_nlmsg_get_payload_len(nlh) <= off)
		return {};
	std::string out;
	for_each_attr(nlh, off, [&](const nlattr *attr) {
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG && mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
			out = mnl_attr_get_str(attr);
	});
	return out;
}

} // namespace

Result<Socket> Socket::open(int bus, unsigned groups, int flags)
{
	Socket s;
	s.sock_.reset(mnl_socket_open2(bus, SOCK_CLOEXEC | flags));
	if (!s.sock_)
		return errno_error("netlink socket", errno);
	int one = 1;
	// Best effort: older kernels lack extack (the error line is then plain).
	mnl_socket_setsockopt(s.sock_.get(), NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(s.sock_.get(), NETLINK_CAP_ACK, &one, sizeof(one));
	if (mnl_socket_bind(s.sock_.get(), groups, MNL_SOCKET_AUTOPID) < 0)
		return errno_error("netlink bind", errno);
	s.seq_ = static_cast<uint32_t>(::getpid()) << 8;
	return s;
}

int Socket::fd() const { return mnl_socket_get_fd(sock_.get()); }
uint32_t Socket::portid() const { return mnl_socket_get_portid(sock_.get()); }

Status Socket::join(unsigned group)
{
	int g = static_cast<int>(group);
	if (mnl_socket_setsockopt(sock_.get(), NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)) < 0)
		return errno_error("netlink join group " + std::to_string(group), errno);
	return ok();
}

Status Socket::request(Message &msg, const std::string &what, const Each &each)
{
	nlmsghdr *nlh = msg.header();
	nlh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++seq_;
	if (mnl_socket_sendto(sock_.get(), nlh, nlh->nlmsg_len) < 0)
		return errno_error(what, errno);

	std::vector<char> buf(recv_buffer_size);
	const uint32_t seq = nlh->nlmsg_seq, port = portid();
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(sock_.get(), buf.data(), buf.size());
		if (n < 0)
			return errno_error(what + " (reply)", errno);
		// Walk ourselves rather than mnl_cb_run, so the NLMSG_ERROR's extack
		// reaches the error line.
		int len = static_cast<int>(n);
		for (auto *h = reinterpret_cast<const nlmsghdr *>(buf.data()); mnl_nlmsg_ok(h, len);
		     h = mnl_nlmsg_next(h, &len)) {
			if (!mnl_nlmsg_portid_ok(h, port) || !mnl_nlmsg_seq_ok(h, seq))
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return ok();
			if (h->nlmsg_type == NLMSG_ERROR) {
				auto *e = static_cast<const nlmsgerr *>(mnl_nlmsg_get_payload(h));
				if (e->error == 0)
					return ok();
				std::string ext = extack_msg(h);
				return errno_error(ext.empty() ? what : what + " (" + ext + ")", -e->error);
			}
			if (h->nlmsg_type < NLMSG_MIN_TYPE)
				continue;
			if (each) {
				int r = each(h);
				if (r == MNL_CB_ERROR)
					return runtime_error(what + ": malformed reply", EPROTO);
				if (r == MNL_CB_STOP)
					return ok();
			}
		}
	}
}

Status Socket::receive(const Each &each)
{
	rbuf_.resize(recv_buffer_size);
	ssize_t n = mnl_socket_recvfrom(sock_.get(), rbuf_.data(), rbuf_.size());
	if (n < 0)
		return errno_error("netlink receive", errno);
	int len = static_cast<int>(n);
	for (auto *h = reinterpret_cast<const nlmsghdr *>(rbuf_.data()); mnl_nlmsg_ok(h, len);
	     h = mnl_nlmsg_next(h, &len)) {
		if (h->nlmsg_type < NLMSG_MIN_TYPE)
			continue;
		if (each && each(h) == MNL_CB_STOP)
			break;
	}
	return ok();
}

Result<uint16_t> genl_family(Socket &sock, const std::string &name)
{
	Message msg;
	nlmsghdr *nlh = msg.header();
	nlh->nlmsg_type = GENL_ID_CTRL;
	auto *g = msg.put_extra<genlmsghdr>();
	g->cmd = CTRL_CMD_GETFAMILY;
	g->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, name.c_str());
	uint16_t id = 0;
	auto s = sock.request(msg, "generic netlink family " + name, [&](const nlmsghdr *h) {
		for_each_attr(h, sizeof(genlmsghdr), [&](const nlattr *a) {
			if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID && mnl_attr_validate(a, MNL_TYPE_U16) >= 0)
				id = mnl_attr_get_u16(a);
		});
		return MNL_CB_OK;
	});
	if (!s)
		return s.error();
	if (!id)
		return runtime_error("generic netlink family " + name + " not found", ENOENT);
	return id;
}

void ethtool_put_request(Message &msg, uint16_t family, uint8_t cmd, uint16_t header_attr,
			 const std::string &ifname, uint32_t header_flags)
{
	nlmsghdr *nlh = msg.header();
	nlh->nlmsg_type = family;
	auto *g = msg.put_extra<genlmsghdr>();
	g->cmd = cmd;
	g->version = ETHTOOL_GENL_VERSION;
	nlattr *nest = mnl_attr_nest_start(nlh, header_attr);
	mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, ifname.c_str());
	if (header_flags)
		mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_FLAGS, header_flags);
	mnl_attr_nest_end(nlh, nest);
}

Result<EthtoolSocket> ethtool_socket()
{
	auto s = Socket::open(NETLINK_GENERIC);
	if (!s)
		return s.error();
	auto fam = genl_family(*s, ETHTOOL_GENL_NAME);
	if (!fam)
		return runtime_error("ethtool netlink: " + fam.error().msg + " (kernel without CONFIG_ETHTOOL_NETLINK)",
				     fam.error().err);
	return EthtoolSocket{std::move(*s), *fam};
}

Status ethtool_get(const std::string &ifname, uint8_t cmd, uint16_t header_attr, uint32_t header_flags,
		   const std::string &what, const Each &each)
{
	auto es = ethtool_socket();
	if (!es)
		return es.error();
	Message msg;
	ethtool_put_request(msg, es->family, cmd, header_attr, ifname, header_flags);
	return es->sock.request(msg, what, each);
}

} // namespace xoffload::nl
