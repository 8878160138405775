// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Device features through ethtool netlink (ETHTOOL_MSG_FEATURES_GET/SET) and
// the XDP RX metadata a driver offers (netdev genl family): what attach and
// recv read before they decide where a VLAN tag will be.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "xoffload/core/result.hpp"

namespace xoffload {

// One feature as `ethtool -k` shows it.
struct EthtoolFeature {
	bool hw = false;	// the driver lets it be changed (hw_features)
	bool wanted = false;	// requested by the user
	bool active = false;	// in effect
	bool nochange = false;	// never changeable ("[fixed]")
	// Cannot be turned on or off: ethtool's "[fixed]".
	bool fixed() const { return nochange || !hw; }
};

struct EthtoolFeatures {
	std::map<std::string, EthtoolFeature, std::less<>> by_name;
	// The feature, or nullptr when this kernel has no feature of that name.
	const EthtoolFeature *find(std::string_view name) const;
	bool active(std::string_view name) const;
};

// The bits of one ethtool bitset nest (ETHTOOL_A_BITSET_*), compact or
// verbose, as name -> value. A list (ETHTOOL_A_BITSET_NOMASK) holds the bits
// that are set; a bitset with a mask holds the masked bits, set or not.
// Compact bits are named from @names (the ETH_SS_FEATURES string set, bit
// index order); a bit beyond it is named "bit<N>". EPROTO on a malformed nest.
Result<std::map<std::string, bool>> parse_ethtool_bitset(const nlattr *nest,
							 const std::vector<std::string> &names = {});

// Parses an ETHTOOL_MSG_FEATURES_GET reply (its genl header and attributes).
Result<EthtoolFeatures> parse_features_reply(const nlmsghdr *nlh, const std::vector<std::string> &names = {});

// The features of @ifname in the current network namespace.
Result<EthtoolFeatures> ethtool_features_get(const std::string &ifname);

// Sets the named features on or off (ETHTOOL_MSG_FEATURES_SET, verbose
// bitset with a mask: the others stay as they are), then reads them back:
// an error names any the driver did not change.
Status ethtool_features_set(const std::string &ifname, const std::vector<std::pair<std::string, bool>> &want);

// Whether the driver of @ifindex hands XDP the stripped VLAN tag through the
// bpf_xdp_metadata_rx_vlan_tag kfunc (NETDEV_A_DEV_XDP_RX_METADATA_FEATURES,
// 6.8+): false on older kernels and on drivers without it.
Result<bool> xdp_rx_meta_vlan_tag(int ifindex);

} // namespace xoffload
