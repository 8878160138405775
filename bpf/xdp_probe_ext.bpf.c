// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* offload-tool --version's dispatcher probe, part 2: freplace programs for
 * xdp_probe_slot's xo_probe_slot, one that leaves the packet as it is and
 * one that may change it (bpf_xdp_adjust_head, as xdp_vlan does): from 6.12
 * the kernel refuses the second behind a target that changes no packet data
 * (kernel/bpf/verifier.c "Extension program changes packet data, while
 * original does not"), which is what libxdp's dispatcher before 1.6 is.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("freplace/xo_probe_slot")
int xo_probe_ext(struct xdp_md *ctx)
{
	return XDP_PASS;
}

SEC("freplace/xo_probe_slot")
int xo_probe_ext_adjust(struct xdp_md *ctx)
{
	if (bpf_xdp_adjust_head(ctx, 0))
		return XDP_ABORTED;
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
