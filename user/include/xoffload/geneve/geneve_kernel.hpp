// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The kernel's side of Geneve ports: a NIC's own UDP tunnel table (ethtool
// netlink TUNNEL_INFO), the collect_md geneve device that puts a port there
// (`geneve port add --nic`), and the kernel's Geneve devices the registry
// follows (`geneve port sync`), all through rtnetlink/ethtool netlink.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xoffload/geneve/geneve.hpp"
#include "xoffload/core/result.hpp"

namespace xoffload {

// One UDP tunnel table of a device (ETHTOOL_A_TUNNEL_UDP_TABLE).
struct UdpTunnelTable {
	uint32_t size = 0;
	uint32_t types = 0;	// bit ETHTOOL_UDP_TUNNEL_TYPE_* (VXLAN 0, GENEVE 1, VXLAN_GPE 2)
	struct Entry {
		uint16_t port;	// host order
		uint32_t type;	// ETHTOOL_UDP_TUNNEL_TYPE_*
	};
	std::vector<Entry> entries;
};

// What a device says of its UDP tunnel tables. has_tables false: the
// device has none (veth, igb, virtio_net: the kernel answers EOPNOTSUPP).
struct UdpTunnelInfo {
	bool has_tables = false;
	std::vector<UdpTunnelTable> tables;

	bool has_geneve_table() const;
	bool knows_geneve_port(uint16_t port) const;
};

// Parses an ETHTOOL_MSG_TUNNEL_INFO_GET reply (genl header, compact
// bitsets). EPROTO error for a malformed message.
Result<UdpTunnelInfo> parse_udp_tunnel_info(const nlmsghdr *nlh);

// Asks the device in the current netns (ethtool netlink).
Result<UdpTunnelInfo> udp_tunnel_info(const std::string &ifname);

// A Geneve device of the kernel as rtnetlink shows it (RTM_NEWLINK).
struct KernelGeneveDev {
	int ifindex = 0;
	std::string name, alias;
	uint16_t port = 0;	// IFLA_GENEVE_PORT, host order
	bool collect_md = false;	// IFLA_GENEVE_COLLECT_METADATA ("external")
	bool up = false;	// IFF_UP: its UDP socket is open, the NICs' tables have the port
};

// The device of an RTM_NEWLINK message if it is a Geneve device; nothing for
// any other kind, and for a message too short to be one.
std::optional<KernelGeneveDev> parse_geneve_link(const nlmsghdr *nlh);

// The link kind of an RTM_NEWLINK message (IFLA_INFO_KIND: "veth",
// "geneve", ...), "" for a device without one (a physical NIC).
std::string link_kind(const nlmsghdr *nlh);

// Every Geneve device of the current netns (an RTM_GETLINK dump).
Result<std::vector<KernelGeneveDev>> kernel_geneve_devs();

// The device `geneve port add --nic` makes for @port: "xo-gnv-<port>".
// Ours is known by that name, collect_md (is_nic_geneve_dev) and the
// registry's XO_GNV_PORT_F_NIC flag; no alias is set.
std::string nic_geneve_dev_name(uint16_t port);

// The RTM_NEWLINK request of `ip link add NAME type geneve external dstport
// PORT` brought up at once (its socket opens, udp_tunnel_nic tells every
// NIC of the netns). Exposed for the unit tests.
void put_nic_geneve_request(nlmsghdr *nlh, const std::string &name, uint16_t port);

// Whether @d is a --nic device as we make it: collect_md, named
// nic_geneve_dev_name() of its own port.
bool is_nic_geneve_dev(const KernelGeneveDev &d);

// The --nic devices `detach --purge` deletes with a registry: of its @ports
// those it holds with XO_GNV_PORT_F_NIC (what `port add --nic` records
// when it made the device or found one of ours), whose device exists among
// @devs as we make it, and that no other registry of the netns holds with
// --nic (@held_elsewhere). A device gone already, or one of the same name
// that is not ours (another kind, not collect_md, another port), is left.
struct NicDevPurge {
	std::string name;
	uint16_t port;
};
std::vector<NicDevPurge> nic_devs_to_purge(const std::vector<GenevePort> &ports,
					   const std::vector<KernelGeneveDev> &devs,
					   const std::function<bool(uint16_t port)> &held_elsewhere);

// Creates the --nic device of @port (see put_nic_geneve_request). A kernel
// without the geneve module: a runtime error saying so.
Status nic_geneve_dev_create(uint16_t port);
// Deletes a link by name (RTM_DELLINK).
Status link_delete(const std::string &name);

// The registries of the current netns and the devices they share
// (user/src/core/geneve_netns.cpp).

// Pin directories of this netns that hold Geneve maps: (ifname, dir), sorted.
std::vector<std::pair<std::string, std::string>> geneve_pin_dirs();
// Does another registry of this netns than @self_dir hold @port with a --nic
// device? Then the device stays when this one lets the port go.
bool nic_port_held_elsewhere(const std::string &self_dir, uint16_t port);
// The kernel Geneve device that already holds @port in this netns (ours or
// anyone's, up), if any.
Result<std::optional<KernelGeneveDev>> geneve_dev_on(uint16_t port);
// Ports of the kernel's Geneve devices that are up (their sockets are open:
// what udp_tunnel_nic tells the NICs), but not the --nic devices, whose
// ports the registry holds already: port -> a device's name.
Result<std::map<uint16_t, std::string>> kernel_geneve_ports();
// detach --purge: deletes the geneve devices `geneve port add --nic` made
// for the registry @ports that was pinned in @dir (those with
// XO_GNV_PORT_F_NIC; read with pinned_geneve_ports() before detach, which
// removes the pins with the last program) and that no other registry of
// the netns holds; returns them. A device gone already is skipped, so a
// purge that stopped half way can run again.
Result<std::vector<NicDevPurge>> purge_nic_geneve_devs(const std::string &dir, const std::vector<GenevePort> &ports);

// Link events of the current netns (rtnetlink group RTNLGRP_LINK): when
// they come, devices came, went or changed.
class LinkEvents {
public:
	static Result<LinkEvents> open();
	// Waits up to @timeout_ms; true when events arrived (all read, or
	// lost to a full socket buffer: look again either way), false when
	// none came or a signal ended the wait.
	Result<bool> wait(int timeout_ms);

	LinkEvents(LinkEvents &&) noexcept;
	LinkEvents &operator=(LinkEvents &&) noexcept;
	~LinkEvents();

private:
	LinkEvents();
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

// The driver of @ifname for messages: its link kind (veth, ...), else the
// driver sysfs names, else "".
std::string driver_name(const std::string &ifname);

} // namespace xoffload
