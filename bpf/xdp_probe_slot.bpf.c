// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* offload-tool --version's dispatcher probe, part 1: an XDP program with one
 * global function, as libxdp's dispatcher has its slots; xdp_probe_ext
 * replaces that function (freplace). Loaded and unloaded, never attached.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

__attribute__((noinline)) int xo_probe_slot(struct xdp_md *ctx)
{
	volatile int ret = XDP_PASS;

	if (!ctx)
		return XDP_ABORTED;
	return ret;
}

SEC("xdp")
int xo_probe_target(struct xdp_md *ctx)
{
	return xo_probe_slot(ctx);
}

char _license[] SEC("license") = "Dual BSD/GPL";
