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

	struct Skel;
	std::unique_ptr<Skel> s;
};

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

} // namespace xoffload
