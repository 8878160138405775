// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// RX VLAN offloads under the programs that read VLAN tags at XDP (xdp_vlan,
// xdp_xsk --filter-vlan): tag stripping turned off for an attachment's life
// (recorded with the pins, restored when its last holder detaches, also
// after a killed process), and hardware VLAN filters explained.
#pragma once

#include <cstddef>
#include <functional>
#include <utility>
#include <string>
#include <vector>

#include "xoffload/features/features.hpp"
#include "xoffload/core/netdev.hpp"
#include "xoffload/core/result.hpp"

namespace xoffload {

// ethtool's names of the two RX stripping features.
inline constexpr const char *kRxVlanCtag = "rx-vlan-hw-parse";		// 802.1Q ("rxvlan")
inline constexpr const char *kRxVlanStag = "rx-vlan-stag-hw-parse";	// 802.1ad

// What the device does to VLAN tags before XDP and TC see a frame.
struct RxVlanFacts {
	std::string driver;			// ethtool driver name ("igb", "veth", ...)
	bool ctag_strip = false, ctag_fixed = false;	// rx-vlan-hw-parse on, and unchangeable
	bool stag_strip = false, stag_fixed = false;	// rx-vlan-stag-hw-parse likewise
	bool meta_kfunc = false;		// the driver gives XDP the stripped tag (bpf_xdp_metadata_rx_vlan_tag)
	bool filter_on = false, filter_fixed = false;	// rx-vlan-filter
	bool rx_all = false, rx_all_changeable = false;	// rx-all
	bool promisc = false;			// IFF_PROMISC
	size_t vlan_uppers = 0;			// VLAN devices on it: the VIDs it registered
	// What the driver does with them (features::nic_facts() of the running
	// kernel): whether the strip features mean a strip at XDP, how its VLAN
	// filter behaves and what opens it. The fields above are what is on now.
	features::NicFacts nic;
};

// Reads them for @dev in the current network namespace, with the facts of
// its driver under the running kernel (rx_vlan_apply_facts()).
Result<RxVlanFacts> rx_vlan_facts(const Netdev &dev);

// Puts the driver's facts into @f: where the driver strips nothing at XDP
// whatever its features say (nic.strip_by_feature false: veth), the strip
// fields go false, so nothing is turned off and no line is printed for them.
void rx_vlan_apply_facts(RxVlanFacts &f, const features::NicFacts &nic);

// The one line that says a hardware VLAN filter of @ifname drops tagged
// frames before XDP and TC see them, with the remedy for its driver; empty
// when the filter lets every VID through (or is off, or promiscuous mode or,
// where the driver's facts say it opens the filter, rx-all). The driver's
// behaviour comes from f.nic (i40e: open until a VID is registered; who
// filters; whether rx-all helps), the current setting from the live fields;
// an unmodelled driver is taken at its rx-vlan-filter.
std::string vlan_filter_advice(const RxVlanFacts &f, const std::string &ifname);

// Gives vlan_filter_advice as a notice (core/notice.hpp), if any.
void warn_vlan_filter(const RxVlanFacts &f, const std::string &ifname);

// Who reads the tags at XDP, for the lines below.
enum class TagReader {
	xdp_vlan,	// allow-list, rewrite, pop, push
	xdp_xsk,	// recv --filter-vlan
	xsk_frames,	// recv without --filter-vlan: the frames a socket gets
	xdp_geneve,	// outer tags: decap, steering
};

// Before (xdp_vlan) or right after (xdp_xsk) @reader is attached to @dev
// for @holder ("vlan", "xsk-<prog id>"): the stripping features that are on
// and changeable are turned off, one notice says so, and the
// previous setting is recorded in @dev's pin directory (made if needed)
// with @holder, so that rx_vlan_release() of the last holder (detach, also
// after the process was killed) restores it. @keep (--keep-rx-vlan): the
// device is left as it is and one line says what will not work. A stripping
// feature that is fixed on gets its line too. Returns the line(s) printed,
// without "xoffload: ", or empty.
Result<std::string> rx_vlan_take(const Netdev &dev, const RxVlanFacts &f, const std::string &holder,
				 TagReader reader, bool keep);

// @holder no longer reads tags at @dev's XDP hook: its record goes, and
// once no holder is left the features rx_vlan_take() turned off are turned
// on again (one notice). Nothing to do without a record. A pin
// directory left with nothing but its device record is removed.
Status rx_vlan_release(const Netdev &dev, const std::string &holder);

// The features a pin directory records as turned off by xoffload (to be
// turned on again), and the holders keeping them off.
struct RxVlanRecord {
	std::vector<std::string> turned_off;
	std::vector<std::string> holders;
};
RxVlanRecord rx_vlan_record(const std::string &pin_dir);

// rx_vlan_take/rx_vlan_release on the directory @dir (which must exist)
// for interface @ifname, with @set standing in for ethtool_features_set:
// the record logic alone, for tests.
using FeatureSetter = std::function<Status(const std::string &, const std::vector<std::pair<std::string, bool>> &)>;
Result<std::string> rx_vlan_take_at(const std::string &dir, const std::string &ifname, const RxVlanFacts &f,
				    const std::string &holder, TagReader reader, bool keep, const FeatureSetter &set);
Status rx_vlan_release_at(const std::string &dir, const std::string &ifname, const std::string &holder,
			  const FeatureSetter &set);

} // namespace xoffload
