// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Whether libxdp's multiprog dispatcher can run here, asked the way it
// needs it: a program with a global function (bpf/xdp_probe_slot.bpf.c)
// loaded, then an freplace program for that function loaded and linked to
// it (bpf/xdp_probe_ext.bpf.c). Nothing is attached to a device; everything
// is closed before returning. Needs CAP_BPF (root).
#pragma once

#include "xoffload/core/kernel.hpp"

namespace xoffload {

struct DispatcherProbe {
	// freplace allowed: libxdp can load its dispatcher (else it attaches
	// single programs: "freplace: Operation not permitted" on kernels
	// that refuse BPF_PROG_TYPE_EXT)
	ProbeResult freplace;
	// a packet-changing freplace program (bpf_xdp_adjust_head, as xdp_vlan)
	// accepted behind a target that changes no packet data; 6.12 and later
	// refuse it, which is what libxdp's dispatcher before 1.6 is
	ProbeResult packet_change;
};

DispatcherProbe probe_dispatcher();

// Whether libxdp's own dispatcher (its xdp-dispatcher.o, from
// LIBXDP_OBJECT_PATH or the library's BPF directory) takes a
// packet-changing extension in its first slot, as it must for xdp_vlan and
// xdp_geneve: loaded, linked and unlinked, never attached. Not probed
// (probed false) when freplace itself is refused or the object is not
// found; ok then means nothing.
ProbeResult probe_libxdp_chain();

} // namespace xoffload
