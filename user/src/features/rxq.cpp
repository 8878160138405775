// Per driver: how flows reach the AF_XDP queues one binds (RSS indirection,
// channel count, ntuple flow steering), for recv's more-queues-than-sockets
// line. Driver facts: /work/shared/NIC-FACTS.md, ethtool_ops of each driver.
#include "xoffload/channels.hpp"

#include <algorithm>

namespace xoffload {

std::string rx_steering_remedy(std::string_view driver, const std::string &ifname,
			       const std::vector<uint32_t> &bound)
{
	const std::string q0 = bound.empty() ? "0" : std::to_string(bound.front());
	const std::string n = std::to_string(bound.empty() ? 1 : bound.size());
	const bool from_zero = !bound.empty() && bound.front() == 0 && bound.back() + 1 == bound.size();
	// RSS over queues 0..N-1 only covers a bound set that starts at 0
	std::vector<uint32_t> first;
	for (uint32_t q = 0; q < std::max<size_t>(bound.size(), 1); q++)
		first.push_back(q);
	const std::string rss = "ethtool -L " + ifname + " combined " + n +
				(from_zero ? "" : std::string(" (then bind queue") + (first.size() > 1 ? "s " : " ") +
							  queue_list_text(first) + ")") +
				", or RSS onto queue" + (first.size() > 1 ? "s " : " ") + queue_list_text(first) +
				" only: ethtool -X " + ifname + " equal " + n;
	const std::string ntuple = "ethtool -N " + ifname + " flow-type udp4 dst-port PORT action " + q0;
	if (driver == "veth")
		// veth_xmit(): the RX queue is the sender's TX queue (skb queue mapping)
		return "on veth the peer's TX queue picks the RX queue: bind every queue (--queues all) or send on "
		       "the bound ones";
	if (driver == "igb")
		// igb_ethtool.c igb_add_ethtool_nfc_entry(): flow-type ether only
		return rss + "; igb steers only by ethertype, MAC or VLAN (ethtool -N " + ifname +
		       " flow-type ether vlan VID action " + q0 + "), never by UDP port";
	if (driver == "i40e" || driver == "ice" || driver == "mlx5_core")
		return rss + "; or steer a flow: " + ntuple;
	if (driver == "mlx4_en")
		return rss + "; or steer a flow (mlx4 only in DMFS steering mode): " + ntuple;
	if (driver == "virtio_net")
		return rss + " (where the device offers RSS); virtio_net has no flow steering rules";
	if (driver == "vmxnet3")
		return "RSS onto queue" + std::string(first.size() > 1 ? "s " : " ") + queue_list_text(first) +
		       " only: ethtool -X " + ifname + " equal " + n +
		       "; vmxnet3 has no flow steering rules";
	return rss + "; or, where the driver has flow steering: " + ntuple;
}

} // namespace xoffload
