// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Bench-only wrappers around the composed program (xdp_offload) and its
 * stages run as separate programs, for BPF_PROG_RUN in live-frame mode.
 * One object, so the composed program and the separate ones read the same
 * maps (policy, ports, rules) and count into the same counters. Every
 * verdict is XDP_DROP so no frame reaches a stack.
 */
#include "xdp_offload.bpf.c"

/* The floor: a program that does nothing. */
SEC("xdp")
int xo_bench_obase(struct xdp_md *ctx)
{
	return XDP_DROP;
}

/* xdp_vlan alone: the code of the xdp_vlan program. */
SEC("xdp")
int xo_bench_ovlan(struct xdp_md *ctx)
{
	xo_vlan_xdp(ctx, 0);
	return XDP_DROP;
}

/* xdp_geneve alone: the code of the xdp_geneve program. */
SEC("xdp")
int xo_bench_ognv(struct xdp_md *ctx)
{
	xo_gnv_xdp(ctx, 0);
	return XDP_DROP;
}

/* The composed program with the stages xo_stages names (set before load):
 * exactly xdp_offload's code, then drop instead of its verdict.
 */
SEC("xdp")
int xo_bench_ocomp(struct xdp_md *ctx)
{
	xo_offload(ctx, 0);
	return XDP_DROP;
}

