// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Bench-only wrappers around the real xdp_geneve code, for BPF_PROG_RUN in
 * live-frame mode. Every verdict is XDP_DROP so no frame reaches a stack.
 */
#include "xdp_geneve.bpf.c"

/* The floor: an XDP_PASS-style program that looks at nothing (returning
 * XDP_DROP only so live frames never enter a stack).
 */
SEC("xdp")
int xo_bench_gbase(struct xdp_md *ctx)
{
	return XDP_DROP;
}

/* Timed: exactly the code xdp_geneve runs, then drop instead of its verdict. */
SEC("xdp")
int xo_bench_gnv(struct xdp_md *ctx)
{
	xo_gnv_xdp(ctx, 0);
	return XDP_DROP;
}
