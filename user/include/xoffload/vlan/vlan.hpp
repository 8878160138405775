// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// VLAN policy as userspace sees it: validated values, conversion to the ABI
// structs of bpf/include/xoffload/abi.h, and the control of pinned maps.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "xoffload/core/abi_check.hpp"
#include "xoffload/core/fd.hpp"
#include "xoffload/core/hook.hpp"
#include "xoffload/core/result.hpp"

namespace xoffload {

enum class Dir : uint32_t { ingress = XO_DIR_INGRESS, egress = XO_DIR_EGRESS };

Result<uint16_t> parse_vid(std::string_view s);	// 1..4094
Result<uint8_t> parse_pcp(std::string_view s);		// 0..7
Result<uint16_t> parse_tpid(std::string_view s);	// 802.1Q | 802.1ad | 0x8100 | 0x88a8
Result<Dir> parse_dir(std::string_view s);
const char *dir_name(Dir d);

// What `vlan stats` shows, derived from the BPF counters (enum
// xo_vlan_counter, one per frame): every frame is in passed, modified or one
// dropped-* line; a modified frame is also in popped, pushed and/or rewritten.
enum class VlanStat : unsigned {
	passed,
	modified,
	popped,
	pushed,
	rewritten,
	dropped_malformed,
	dropped_not_allowed,
	dropped_no_headroom,
	dropped_too_deep,
	dropped_tag_in_metadata,	// xdp_vlan: the device stripped the tag; XDP cannot pop, push or rewrite it
	count,
};
inline constexpr unsigned kVlanStats = static_cast<unsigned>(VlanStat::count);
const char *vlan_counter_name(unsigned stat);	// by VlanStat: "popped", "dropped-malformed", ...

struct TagSpec {
	uint16_t tpid = XO_ETH_P_8021Q;
	uint16_t vid = 0;
	uint8_t pcp = 0;
	bool dei = false;
	xo_vlan_tag to_abi() const;		// network byte order
	static TagSpec from_abi(const xo_vlan_tag &t);
};

// Builders for the policy values; they never touch the kernel.
xo_vlan_policy make_pop_policy(const xo_vlan_policy &cur, unsigned depth);
xo_vlan_policy make_push_policy(const xo_vlan_policy &cur, const std::vector<TagSpec> &tags);
xo_vlan_policy make_clear_policy();
std::string describe_policy(const xo_vlan_policy &p);

using VlanStatSet = std::array<xo_counter, kVlanStats>;

// The shown counters (by VlanStat) of the BPF ones (by xo_vlan_counter).
VlanStatSet vlan_stats_of(const std::array<xo_counter, XO_VLAN_CNT_MAX> &raw);

struct VlanCounters {
	// [hook][VlanStat], summed over CPUs
	std::array<VlanStatSet, kHooks> v{};
};

struct VidRule {
	uint16_t vid;
	bool allowed;
	uint16_t rewrite_to;	// 0 = none
};

// Map names as the VLAN skeleton declares them (also the pin file names).
struct VlanMapNames {
	std::string cfg, vid, stats;
};
VlanMapNames vlan_map_names();

// The pinned maps of one interface's VLAN programs. Every call that changes
// a direction's configuration is one switch for the datapath: it writes the
// bank the programs do not use (policy and the whole VID table), then flips
// the direction's `active` word (struct xo_vlan_banks), so each frame sees
// the configuration before the call or after it, never a mix. Writers
// serialise on an flock of the pin directory; before writing a bank, a call
// waits until no frame can still be reading it (an RCU grace period).
class VlanMaps {
public:
	// Opens the maps pinned under pin_dir; fails with a clear message if the
	// programs were never attached there, or if the pins have an older
	// layout (made before XO_ABI_VERSION 4).
	static Result<VlanMaps> open(const std::string &pin_dir, const std::string &ifname);

	Result<xo_vlan_policy> policy(Dir d) const;		// the active bank's
	Status set_policy(Dir d, const xo_vlan_policy &p);	// the VID table kept
	Result<std::vector<VidRule>> vid_rules(Dir d) const;	// non-empty slots only
	Status set_allowed(Dir d, const std::vector<uint16_t> &vids, bool allowed);
	Status clear_allowed(Dir d);
	Status set_rewrite(Dir d, uint16_t from, uint16_t to);	// to = 0 removes
	// The default policy, no allow-list, no rewrite: one switch.
	Status clear(Dir d);
	// @d's whole configuration in one switch (offload-tool apply): policy
	// @p (its allow-list flag as given), exactly the VIDs @allowed allowed
	// and exactly the translations @rewrites (from, to).
	Status replace(Dir d, const xo_vlan_policy &p, const std::vector<uint16_t> &allowed,
		       const std::vector<std::pair<uint16_t, uint16_t>> &rewrites);
	Result<VlanCounters> counters() const;
	// Derives again what a policy written by an older xoffload (an older
	// XO_ABI_VERSION) carries beside the user's words (op[], outer_only).
	Status upgrade();
	// The bank the programs use for @d (0 or 1): each change flips it.
	Result<uint32_t> active_bank(Dir d) const;

private:
	using VidTable = std::vector<xo_vid_entry>;	// XO_VID_SLOTS, by VID

	Result<xo_vlan_banks> banks(Dir d) const;
	Result<VidTable> vid_table(Dir d, uint32_t bank) const;
	// Writes @p (compiled) and @t into the inactive bank, then flips.
	Status commit(Dir d, const xo_vlan_policy &p, const VidTable &t);
	// Locks the pin directory, reads the active policy and VID table of @d,
	// lets @edit change them and commits the result.
	template <typename Edit>
	Status change(Dir d, Edit edit);

	UniqueFd cfg_, vid_, stats_, dir_;
};

} // namespace xoffload
