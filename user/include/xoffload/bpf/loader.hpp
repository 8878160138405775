// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Attaching the xoffload BPF programs: XDP through libxdp (dispatcher with
// multiprog where the kernel and libxdp allow it for the program, single
// program otherwise) and TC clsact through libbpf. The kernel keeps them attached after we exit; maps
// are pinned under pin_dir(dev).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xoffload/core/hook.hpp"
#include "xoffload/core/netdev.hpp"
#include "xoffload/core/result.hpp"

namespace xoffload {

enum class XdpMode { native, skb };

Result<XdpMode> parse_xdp_mode(std::string_view s);
const char *to_string(XdpMode m);

// The program families: vlan (XDP and TC), geneve (XDP only).
enum class Feature { vlan, geneve };
Result<Feature> parse_feature(std::string_view s);
const char *to_string(Feature f);

// TC filter identity: one handle/priority for every xoffload filter.
inline constexpr uint32_t kTcHandle = 0x0b0f;
inline constexpr uint32_t kTcPriority = 0x0b0f;

struct AttachInfo {
	Hook hook;
	XdpMode mode = XdpMode::native;	// XDP only
	uint32_t prog_id = 0;
	std::string prog_name;
	bool multiprog = false;		// XDP: through libxdp's dispatcher
	unsigned run_prio = 0;		// XDP multiprog priority
	Feature feature = Feature::vlan;	// from the program name (status) or the request (attach)
	// XDP, attach: why the program runs alone rather than behind libxdp's
	// dispatcher ("... (libxdp 1.3, kernel 6.12...): attached xdp_vlan as a
	// single program", also given as a notice); empty through the dispatcher
	std::string single_reason;
	// vlan at XDP: loaded device-bound with the rx-vlan-tag kfunc
	// (xdp_vlan_tag), and the lines attach printed about the device's RX
	// VLAN offloads (without "xoffload: "; empty when none)
	bool tag_kfunc = false;
	std::string rx_vlan_note;
	// XDP: a stage of xoffload's composed program (xdp_offload), which runs
	// the interface's stages in one program where libxdp's dispatcher
	// cannot chain ours; its stages after this attach or detach ("vlan,
	// geneve") and why composition was chosen (the probe's answer)
	bool composed = false;
	std::string stages;
	std::string compose_reason;
	// detach: the user's program chained after ours (attach_chain), not a
	// feature of ours
	bool chain = false;
};

// What attach may change on the device.
struct AttachOptions {
	// vlan at XDP: leave RX VLAN stripping as it is (--keep-rx-vlan)
	bool keep_rx_vlan = false;
	// vlan at XDP: plain xdp_vlan, chainable behind libxdp's dispatcher,
	// even where the driver offers the rx-vlan-tag kfunc (--no-tag-kfunc)
	bool no_tag_kfunc = false;
};

struct XdpProgInfo {
	std::string name;
	uint32_t id = 0;
	unsigned run_prio = 0;
	bool ours = false;
};

// The composed program at an XDP hook (see AttachInfo::composed).
struct ComposedStatus {
	uint32_t prog_id = 0;
	std::string prog_name;			// xdp_offload, xdp_offload_mb (multi-buffer)
	std::vector<std::string> stages;	// in run order: vlan, geneve, recv, chain
	uint32_t chain_prog_id = 0;		// the program in its chain slot
	std::string chain_prog_name;
	// frames the stages before the slot passed: handed to the program in
	// it (its verdict is theirs), or passed to the stack for want of one
	uint64_t chained_packets = 0, chain_empty_packets = 0;
	// why a composed program rather than libxdp's dispatcher: the probe's
	// answer on this machine (empty: the dispatcher could chain ours, and
	// a program of ours that was alone was composed with the next one)
	std::string reason;
};

struct IfStatus {
	Netdev dev;
	std::string pin_dir;
	bool pinned = false;			// maps present under pin_dir
	std::vector<AttachInfo> ours;		// xoffload programs attached
	std::vector<XdpProgInfo> xdp_progs;	// everything at the XDP hook
	std::string xdp_mode;			// "native", "skb", "" if none
	bool xdp_multiprog = false;
	std::optional<ComposedStatus> composed;	// the XDP hook holds xdp_offload
	unsigned composed_stages = 0;		// its enum xo_stage bits
	// the user's program we run after ours behind libxdp's dispatcher
	// (attach_chain; composed: ComposedStatus::chain_prog_id), 0 if none
	uint32_t chain_prog_id = 0;
};

// Attaches @f at @h. XDP: behind libxdp's dispatcher, or as a single
// program where the dispatcher cannot run it (one notice says why);
// refused (EBUSY) while a single program holds the XDP hook. vlan at XDP
// turns RX VLAN stripping off for the attachment's life unless
// @opts.keep_rx_vlan (rx_vlan.hpp), and loads device-bound with the
// rx-vlan-tag kfunc (xdp_vlan_tag, alone) where the driver offers it in
// native mode. vlan at any hook says when a hardware VLAN filter drops
// tagged frames first.
Result<AttachInfo> attach(const Netdev &dev, Feature f, Hook h, XdpMode mode, const AttachOptions &opts = {});
// Detaches our programs of @f (every feature when none is given) at @h (every
// hook when none is given); removes the pins once nothing of ours is left.
Result<std::vector<AttachInfo>> detach(const Netdev &dev, std::optional<Feature> f, std::optional<Hook> h);
// The error for a detach that found nothing of @f (any feature when none)
// at @h (any hook when none) on @dev.
Error not_attached(const Netdev &dev, std::optional<Feature> f, std::optional<Hook> h);
Result<IfStatus> status(const Netdev &dev);

// Hands the program on @dev's native XDP hook (ours, libxdp's dispatcher,
// anyone's) to its driver again, for a driver that forgets it on a close
// while the hook still lists it (NicFacts::xdp_lost_on_close: vmxnet3).
// The kernel calls no driver when a program replaces itself, so it swaps
// the program for one that passes every frame and back, both with
// XDP_FLAGS_REPLACE: the hook lists the same program (the same id)
// afterwards. false when the hook holds no native-mode program (nothing to
// do). Frames in between pass untouched, as they did since the close.
Result<bool> xdp_rearm(const Netdev &dev);

// A user's XDP program to run after our XDP stages.
struct ChainRequest {
	std::string object;	// a BPF object file
	std::string program;	// its program's name or section; empty: its only XDP program
	XdpMode mode = XdpMode::native;
};

struct ChainInfo {
	uint32_t prog_id = 0;		// the user's program
	std::string prog_name;
	std::string object;
	// in the composed program's chain slot (a tail call after its stages);
	// behind libxdp's dispatcher, at run_prio, otherwise
	bool composed = false;
	unsigned run_prio = 0;
	uint32_t hook_prog_id = 0;	// composed: the program at the hook now (0: none)
	std::string hook_prog_name;
	std::string stages;		// composed: its stages now
	std::string reason;		// composed: why (the probe's answer)
};

// Runs @rq's program after ours at @dev's XDP hook: in the chain slot of the
// composed program (which takes our stages, or the hook alone when it is
// empty, in one swap) where the dispatcher cannot chain ours or one of ours
// runs alone; behind libxdp's dispatcher, after ours, where it can.
// Refused (EEXIST) while a chained program runs, (EBUSY) while a program
// not ours holds the hook alone. A failure leaves the hook and the pins as
// they were.
Result<ChainInfo> attach_chain(const Netdev &dev, const ChainRequest &rq);
// Takes the chained program away, the hook left as it was before
// attach_chain; nullopt when none runs.
Result<std::optional<ChainInfo>> detach_chain(const Netdev &dev);

// libbpf's and libxdp's messages go through one callback of ours (installed
// when the library loads; log.cpp): messages we expect and handle are
// dropped, other warnings printed behind "xoffload: ". @level 1 prints every
// warning and info line as written, 2 the debug lines too.
void set_library_verbosity(int level);
int library_verbosity() noexcept;
// Installs that callback again (after a caller replaced it); returns true.
bool install_library_log() noexcept;

} // namespace xoffload
