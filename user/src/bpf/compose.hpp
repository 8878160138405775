// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The composed XDP program (bpf/xdp_offload.bpf.c): one program running the
// stages an interface needs, for kernels and libxdp versions whose
// dispatcher cannot chain ours. Built, swapped in atomically and read back
// here; shared by the loader (attach, detach, status) and the xdp_xsk owner
// (recv). Library-internal.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xoffload/abi.h"
#include "xoffload/bpf/loader.hpp"
#include "xoffload/core/fd.hpp"
#include "xoffload/core/netdev.hpp"
#include "xoffload/core/result.hpp"

struct xdp_offload_bpf;

namespace xoffload {

// The stage names users read (status, errors): vlan, geneve, recv, chain.
const char *stage_name(unsigned stage);
// "vlan, geneve" in the stages' run order; "none" for 0.
std::string stage_list(unsigned stages);
// The stage of a feature.
unsigned stage_of(Feature f);
// xdp_offload or xdp_offload_mb.
bool is_composed_name(std::string_view name);

// A composed program at an XDP hook, read back from the kernel.
struct ComposedProg {
	uint32_t prog_id = 0;
	std::string prog_name;
	unsigned stages = 0;	// enum xo_stage bits, from its read-only data
	bool frags = false;	// the multi-buffer entry
	uint32_t chain_id = 0;	// the program in its chain slot, 0 if none
};

// The stage one of our single programs runs (xdp_vlan, xdp_geneve, recv's
// xdp_xsk and their entries), 0 for a program not ours; @bound: it is
// device-bound (reads stripped tags through the kfunc).
unsigned single_stage(const std::string &name, bool &bound);

// The program at @ifindex's XDP hook as the kernel reports it (libxdp's
// dispatcher counts as one): its id, 0 when none.
Result<uint32_t> hook_prog_id(int ifindex);

// The pin that records a user's program we chained behind libxdp's
// dispatcher (attach_chain; in the composed program it sits in xo_chain).
std::string chain_prog_pin(const std::string &pin_dir);

// How a new XDP stage (a feature, the chain) joins @dev's hook, from its
// status @st: as a stage of the composed program where one is there, where
// one of our programs runs alone (composed with it, in one swap), or where
// the probes say libxdp's dispatcher cannot chain ours; otherwise through
// libxdp (behind its dispatcher, or the hook's first program).
struct XdpJoin {
	bool compose = false;
	unsigned base = 0;		// the stages it joins
	uint32_t replace_id = 0;	// the program the swap replaces; 0: the hook is empty
	bool bound = false;		// base is a device-bound program of ours
	std::string why;		// composed: why (the probe's answer)
	// a single program that cannot share the hook holds it (one not ours,
	// base 0, or recv's device-bound xdp_xsk_tag): the caller refuses
	const XdpProgInfo *alone = nullptr;
};
// @what names the newcomer in the error for a hook in another @mode ("vlan",
// "chain").
Result<XdpJoin> plan_xdp_join(const Netdev &dev, const IfStatus &st, XdpMode mode, const std::string &what);

// The composed program with id @prog_id; an error if it is not one.
Result<ComposedProg> read_composed(uint32_t prog_id);

// Why the XDP features of this machine are composed rather than chained by
// libxdp's dispatcher (the probes' answer, asked once per process); empty
// when the dispatcher can chain them.
const std::string &composition_reason();

// A composed program loaded and attached; its object stays open for the
// caller to reach its maps (recv's XSKMAP). The program stays attached
// after this is gone.
struct Composition {
	Composition();
	~Composition();
	Composition(Composition &&) noexcept;
	Composition &operator=(Composition &&) noexcept;
	ComposedProg prog;
	xdp_offload_bpf *skel() const;
	int prog_fd() const;	// the loaded entry's, -1 when none

	struct Skel;
	std::unique_ptr<Skel> s;
};

// Loads xdp_offload's @frags entry with @stages as compose_swap does (the
// stages' maps pinned under @dir, shared by name with the single programs'
// pins; the others private), and attaches nothing: for BPF_PROG_TEST_RUN
// (the differential test runs the composed program against the model).
Result<Composition> load_composed(const std::string &dir, unsigned stages, bool frags);

// What a swap starts from and goes to.
struct ComposeRequest {
	unsigned stages = 0;		// the new program's; 0 detaches
	XdpMode mode = XdpMode::native;
	// the program at the hook now (ours: composed, or one of our single
	// programs whose stage the new one takes over), 0 when the hook is empty
	uint32_t replace_id = 0;
};

// Loads xdp_offload with @rq.stages (maps pinned under @dir for its stages,
// private ones for the others, unpinned ones reused from the program it
// replaces) and puts it at @dev's XDP hook in one step: XDP_FLAGS_REPLACE
// of @rq.replace_id, which must still be there, or a first attach. A
// failure changes nothing at the hook and leaves no new pin. stages 0
// detaches @rq.replace_id (the result then holds no program).
Result<Composition> compose_swap(const Netdev &dev, const std::string &dir, const ComposeRequest &rq);

// The kernel ties a CPUMAP to the first program using it; geneve's pinned one
// is renewed before each load that takes it (loader.cpp).
Status renew_cpumap(const std::string &dir);

// Takes the lock that serialises swaps of the XDP hook of the interface
// whose pins are in @dir (attach, detach, recv, rearm); held while the fd
// is open.
Result<UniqueFd> lock_hook_swaps(const std::string &dir);

} // namespace xoffload
