// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Per driver: how flows reach the AF_XDP queues one binds (RSS indirection,
// channel count, ntuple flow steering), for recv's more-queues-than-sockets
// line, taken from the driver's facts (features::nic_facts(): rxq_from_peer,
// set_channels, rss_table, ntuple, each with its ethtool_ops source).
#include "xoffload/features/channels.hpp"

#include <algorithm>

#include "xoffload/features/features.hpp"

namespace xoffload {

std::string rx_steering_remedy(const features::NicFacts &f, const std::string &ifname,
			       const std::vector<uint32_t> &bound)
{
	using features::Ntuple;
	using features::RssTable;
	const std::string drv = dev_kind_name(f.driver);
	const std::string q0 = bound.empty() ? "0" : std::to_string(bound.front());
	const std::string n = std::to_string(bound.empty() ? 1 : bound.size());
	const bool from_zero = !bound.empty() && bound.front() == 0 && bound.back() + 1 == bound.size();
	// RSS over queues 0..N-1 only covers a bound set that starts at 0
	std::vector<uint32_t> first;
	for (uint32_t q = 0; q < std::max<size_t>(bound.size(), 1); q++)
		first.push_back(q);
	const std::string queues = std::string("queue") + (first.size() > 1 ? "s " : " ") + queue_list_text(first);
	const std::string channels = "ethtool -L " + ifname + " combined " + n +
				     (from_zero ? "" : " (then bind " + queues + ")");
	const std::string indir = "RSS onto " + queues + " only: ethtool -X " + ifname + " equal " + n;
	const std::string ntuple = "ethtool -N " + ifname + " flow-type udp4 dst-port PORT action " + q0;
	// an empty source: the driver's RX queue facts are not modelled, so
	// every remedy is offered with its condition
	const bool known = !f.ntuple.source.empty() && !f.set_channels.source.empty() && !f.rss_table.source.empty();
	if (!known)
		return channels + ", or " + indir + "; or, where the driver has flow steering: " + ntuple;
	if (f.rxq_from_peer.value)
		return "on " + drv + " the peer's TX queue picks the RX queue: bind every queue (--queues all) or "
		       "send on the bound ones";
	std::string rss;
	if (f.set_channels.value)
		rss = channels;
	if (f.rss_table.value != RssTable::none)
		rss += (rss.empty() ? "" : ", or ") + indir;
	if (f.rss_table.value == RssTable::if_offered)
		rss += " (where the device offers RSS)";
	if (rss.empty())
		rss = drv + " spreads flows over its queues by itself (no ethtool -L or -X)";
	switch (f.ntuple.value) {
	case Ntuple::none: return rss + "; " + drv + " has no flow steering rules";
	case Ntuple::ether_only:
		return rss + "; " + drv + " steers only by ethertype, MAC or VLAN (ethtool -N " + ifname +
		       " flow-type ether vlan VID action " + q0 + "), never by UDP port";
	case Ntuple::full: return rss + "; or steer a flow: " + ntuple;
	case Ntuple::dmfs_only: return rss + "; or steer a flow (" + drv + " only in DMFS steering mode): " + ntuple;
	}
	return rss;
}

std::string rx_steering_remedy(std::string_view driver, const std::string &ifname,
			       const std::vector<uint32_t> &bound)
{
	return rx_steering_remedy(features::nic_facts_running(driver), ifname, bound);
}

} // namespace xoffload
