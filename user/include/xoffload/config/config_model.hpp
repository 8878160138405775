// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The body of a configuration (config.hpp): one model for what a file
// declares and for what runs on an interface, so that plan() is a
// comparison of two values and show() a rendering of one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xoffload/bpf/loader.hpp"
#include "xoffload/config/config.hpp"
#include "xoffload/core/hook.hpp"
#include "xoffload/geneve/geneve.hpp"
#include "xoffload/vlan/vlan.hpp"

namespace xoffload::config {

inline constexpr const char *kDefaultPath = "/etc/xoffload/xoffload.toml";
inline constexpr const char *kDefaultMetrics = "127.0.0.1:9796";

// One direction's VLAN policy, in the words of `vlan pop|push|rewrite|allow`.
struct VlanDir {
	enum class Action { none, pop, push } action = Action::none;
	unsigned depth = 1;			// pop: 1 or 2
	std::vector<TagSpec> push;		// push: outer first, 1 or 2 tags
	// the allow-list: nullopt when off; on and empty drops every tagged frame
	std::optional<std::vector<uint16_t>> allow;
	std::vector<std::pair<uint16_t, uint16_t>> rewrite;	// (from, to), by from
	bool operator==(const VlanDir &o) const;
	bool is_default() const { return *this == VlanDir{}; }
};

struct Vlan {
	std::vector<Hook> hooks;		// sorted by Hook value, no duplicates
	VlanDir ingress, egress;
	bool operator==(const Vlan &) const = default;
};

struct GeneveRuleCfg {
	uint32_t vni = XO_GNV_VNI_DEFAULT;	// XO_GNV_VNI_DEFAULT: the default rule
	uint32_t action = XO_GNV_ACT_PASS;	// enum xo_gnv_action
	uint32_t queues = 1;			// xsk/cpu; 1 for the others
	bool operator==(const GeneveRuleCfg &) const = default;
};

struct Geneve {
	std::vector<uint16_t> ports;		// sorted
	bool csum = false;			// verify the outer UDP checksum
	std::string decap_via = "auto";		// auto (the library decides) | cpumap | pass
	std::vector<uint16_t> option_classes;	// known classes, sorted
	// the default rule first (pass when the file gives none), then by VNI
	std::vector<GeneveRuleCfg> rules{GeneveRuleCfg{}};
	// running only: ports geneve port add --nic or sync hold (theirs to
	// remove; apply leaves them)
	std::vector<uint16_t> held;
	bool operator==(const Geneve &) const = default;
};

// A user's XDP program after ours (attach IFACE chain --prog OBJ[:PROG]).
struct Chain {
	std::string object;	// "" when only the running program's name is known
	std::string program;	// its name (or section); "" for the object's only one
	int line = 0, column = 0;	// of prog = (messages only; not compared)
	bool operator==(const Chain &o) const { return object == o.object && program == o.program; }
};

struct Interface {
	std::string name;	// "" when declared by MAC alone
	std::string mac;	// permanent MAC, lower case; "" for none
	std::string netns;	// "" for the namespace apply runs in
	XdpMode mode = XdpMode::native;
	bool keep_rx_vlan = false;	// rx_vlan_offload = "keep"
	std::optional<Vlan> vlan;
	std::optional<Geneve> geneve;
	std::optional<Chain> chain;
	// where the file declares it (messages only; not compared)
	int line = 0, column = 0;

	// "eth1", "eth1@ns1", "mac 52:54:00:..": how messages name it
	std::string label() const;
	bool has_xdp() const;	// something of ours at the XDP hook
};

struct Config {
	std::string source;
	std::string metrics = kDefaultMetrics;
	bool metrics_public = false;	// [agent] metrics_public: a non-loopback address allowed
	std::vector<Interface> interfaces;
};

// Parses and validates TOML @text as if read from @source (load() reads
// the file and calls this): tests and `config check` use it directly.
Result<ConfigPtr> parse(const std::string &text, const std::string &source);

// The file show() prints for @c (only its interfaces and [agent] are used):
// what load() reads back to an equal model.
std::string render(const Config &c);

// The steps that take @have (running; nullopt: nothing of ours) to @want
// (declared), in apply's order, texts only (no run). Pure: for tests.
std::vector<Step> diff(const Interface &want, const std::optional<Interface> &have);

// What runs on @ifname (in the current network namespace) in the model;
// nullopt when nothing of ours is attached there.
Result<std::optional<Interface>> running(const std::string &ifname);

// "pop 2", "push 802.1ad vid 100 + 802.1Q vid 200", "none": a direction
// as plan lines say it.
std::string describe(const VlanDir &d);

} // namespace xoffload::config
