// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Geneve offload as userspace sees it: validated values and the control of
// the pinned xdp_geneve maps (port registry, VNI rules, known option classes,
// steering targets, counters). Layouts come from bpf/include/xoffload/abi.h.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "xoffload/core/abi_check.hpp"
#include "xoffload/core/fd.hpp"
#include "xoffload/core/result.hpp"

namespace xoffload {

Result<uint16_t> parse_geneve_port(std::string_view s);		// 1..65535
Result<uint32_t> parse_vni(std::string_view s);			// 0..2^24-1
Result<uint32_t> parse_geneve_action(std::string_view s);	// pass|drop|decap|xsk|cpu
Result<uint16_t> parse_option_class(std::string_view s);	// 0..0xffff (0x prefix ok)
const char *geneve_action_name(uint32_t action);

// What `geneve stats` shows, derived from the BPF counters (enum
// xo_gnv_counter, one per frame; see there how).
enum class GeneveStat : unsigned {
	not_geneve,
	matched,
	passed,
	dropped_rule,
	dropped_malformed,
	dropped_critical_option,
	bad_checksum,
	decapped,
	redirected,
	no_target,
	dropped_cannot_decap,
	dropped_options_unexamined,
	count,
};
inline constexpr unsigned kGeneveStats = static_cast<unsigned>(GeneveStat::count);
const char *geneve_counter_name(unsigned stat);	// by GeneveStat: "decapped", "dropped-rule", ...

struct GenevePort {
	uint16_t port;
	uint32_t refcnt;
	uint32_t flags = 0;	// enum xo_gnv_port_flags: --nic device, sync reference
};

struct GeneveRule {
	uint32_t vni;		// XO_GNV_VNI_DEFAULT for the default rule
	uint32_t action;	// enum xo_gnv_action
	uint32_t queues;	// xsk/cpu slots, 1..XO_GNV_MAX_QUEUES
	uint32_t slot = 0;	// counter slot in xo_gnv_vstats (read back; set_rule picks it)
};

using GeneveCounterSet = std::array<xo_counter, kGeneveStats>;

// The shown counters (by GeneveStat) of the BPF ones (by xo_gnv_counter).
GeneveCounterSet geneve_stats_of(const std::array<xo_counter, XO_GNV_CNT_MAX> &raw);

struct GeneveCounters {
	GeneveCounterSet total{};
	// One row per VNI with a rule, plus XO_GNV_VNI_DEFAULT (sorted last).
	std::vector<std::pair<uint32_t, GeneveCounterSet>> per_vni;
};

// The pinned maps of one interface's Geneve program.
class GeneveMaps {
public:
	// Opens the maps pinned under pin_dir. With create, makes and pins them
	// (without attaching anything) when absent, so the port registry can be
	// filled before `attach`; without, fails with a clear line.
	static Result<GeneveMaps> open(const std::string &pin_dir, const std::string &ifname, bool create);

	// Reference-counted like udp_tunnel_nic. Both return the count after
	// the call; deleting a port that is not registered is an ENOENT error.
	// Concurrent CLIs serialise on an flock of the pin directory.
	Result<uint32_t> port_add(uint16_t port);
	Result<uint32_t> port_del(uint16_t port);
	// One reference more (@delta +1) or less (-1) and the port's flags
	// set/cleared in the same locked step. Returns the entry after it; a
	// port whose last reference went has refcnt 0 and the flags it had.
	// ENOENT error when taking a reference of an absent port.
	Result<GenevePort> port_change(uint16_t port, int delta, uint32_t set = 0, uint32_t clear = 0);
	// The entry of @port; refcnt 0 when it is not registered.
	Result<GenevePort> port(uint16_t port) const;
	Result<std::vector<GenevePort>> ports() const;	// sorted by port

	// Adds or replaces the rule of r.vni (XO_GNV_VNI_DEFAULT: the default).
	// For the cpu action, CPUMAP slots 0..queues-1 get CPUs 0..n-1 in turn.
	Status rule_set(const GeneveRule &r);
	Status rule_del(uint32_t vni);		// ENOENT error when absent
	Result<std::vector<GeneveRule>> rules() const;	// default first, then by VNI
	Status option_known(uint16_t cls, bool known);
	Result<std::vector<uint16_t>> known_classes() const;
	Status set_verify_csum(bool on);
	// Decapped frames reach the stack through the CPUMAP entry of the
	// receiving CPU (on: an skb built anew, CHECKSUM_NONE, so the stack
	// verifies the inner checksum) or by XDP_PASS (off: the skb keeps what
	// the driver said of the outer frame). @chosen records that the user
	// decided, so that the default (features::decap_cpumap_default()) leaves
	// it alone. On fills the CPUMAP entries of every online CPU below
	// XO_GNV_MAX_QUEUES.
	Status set_decap_cpumap(bool on, bool chosen);

	Result<xo_gnv_cfg> cfg() const;
	// Puts xo_gnv_vnibits in step with the rules when it is not (pins of an
	// older xoffload, or rules it changed since; see abi.h), pinning it
	// when absent. Every change here keeps it so; attach calls this first.
	Status sync_vnibits();
	// Puts an AF_XDP socket bound to rx queue @queue in slot @slot of that
	// queue's row of the XSKMAP (index xo_gnv_xsk_slot(queue, slot, ...),
	// see abi.h; removes it with fd < 0). Without replace, a slot that
	// holds a live socket is an EEXIST error (the kernel empties the slots
	// of closed sockets itself).
	Status set_xsk(uint32_t queue, uint32_t slot, int xsk_fd, bool replace = true);
	Result<GeneveCounters> counters() const;
	// Lets other CLIs change the registry again (the lock is otherwise
	// held until this object goes): for long-running commands between
	// their changes.
	void unlock();

private:
	Status lock();
	// A new gen (with the flags @set set and @clear cleared), the VNI
	// bitmap in step for it: under the lock, the config read there.
	Status put_cfg(uint32_t set = 0, uint32_t clear = 0);
	Status zero_slot(uint32_t slot);
	Status bump_gen();
	Result<std::vector<uint64_t>> vnibits_of_rules() const;
	Status vnibits_ensure();	// vnibits_ open, the pin made when absent
	Status vnibits_write(uint32_t word, uint64_t bits);
	Status vnibits_rebuild();
	Status vnibits_redo_word(uint32_t vni);

	UniqueFd ports_, rules_, cfg_, optcls_, xsks_, cpus_, stats_, vstats_, vnibits_, dir_;
	std::string pin_dir_, ifname_;
	bool vnibits_fresh_ = false;	// pinned here: zero, whatever the config says
};

// Map names as the skeleton declares them (also the pin file names).
std::vector<std::string> geneve_map_names();

// The port registry pinned under @pin_dir, read without the other maps (so
// also the pins of an older layout that GeneveMaps::open refuses); empty
// when there is none.
Result<std::vector<GenevePort>> pinned_geneve_ports(const std::string &pin_dir);

// Before a program with xdp_geneve's code loads on the maps pinned under
// @pin_dir (of @ifname): the VNI bitmap put in step with the rules when
// they are pinned already (GeneveMaps::sync_vnibits); nothing when not.
Status sync_pinned_vnibits(const std::string &pin_dir, const std::string &ifname);

} // namespace xoffload
