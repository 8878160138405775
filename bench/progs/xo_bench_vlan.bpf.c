// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Bench-only wrappers around the real xdp_vlan code, for BPF_PROG_RUN in
 * live-frame mode. Every verdict is XDP_DROP so no frame reaches a stack.
 */
#include "xdp_vlan.bpf.c"
#include "xo_bench.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xo_bench_expect);
} xo_bench_expect SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XO_BENCH_CHK_MAX);
	__type(key, __u32);
	__type(value, __u64);
} xo_bench_chk SEC(".maps");

/* The floor: what the harness costs around a program that does nothing. */
SEC("xdp")
int xo_bench_base(struct xdp_md *ctx)
{
	return XDP_DROP;
}

/* Reference: the least any pop or push costs here, one bpf_xdp_adjust_head
 * and the harness re-syncing the xdp_frame of a frame whose head moved.
 */
SEC("xdp")
int xo_bench_adj(struct xdp_md *ctx)
{
	bpf_xdp_adjust_head(ctx, (int)sizeof(struct xo_vlan_tag));
	return XDP_DROP;
}

/* Timed: exactly the code xdp_vlan runs, then drop instead of pass. */
SEC("xdp")
int xo_bench_vlan(struct xdp_md *ctx)
{
	xo_vlan_xdp(ctx);
	return XDP_DROP;
}

static __always_inline int xo_bench_match(struct xdp_md *ctx, const __u8 *want,
					  __u32 len)
{
	__u8 *data = (void *)(long)ctx->data;
	__u8 *data_end = (void *)(long)ctx->data_end;
	int i;

	if (data + XO_BENCH_CMP > data_end || data_end - data != len)
		return 0;
#pragma unroll
	for (i = 0; i < XO_BENCH_CMP; i++)
		if (data[i] != want[i])
			return 0;
	return 1;
}

static __always_inline void xo_bench_tally(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&xo_bench_chk, &what);

	if (n)
		(*n)++;
}

/* Untimed twin of xo_bench_vlan: proves every iteration was handed the
 * intended frame (not one an earlier run left modified in a recycled page)
 * and turned it into the intended result.
 */
SEC("xdp")
int xo_bench_vchk(struct xdp_md *ctx)
{
	__u32 zero = 0, k;
	struct xo_bench_expect *e = bpf_map_lookup_elem(&xo_bench_expect, &zero);

	if (!e)
		return XDP_DROP;
	for (k = 0; k < XO_BENCH_VARIANTS; k++)
		if (k < e->variants && xo_bench_match(ctx, e->in[k], e->in_len))
			break;
	if (k >= XO_BENCH_VARIANTS) {
		xo_bench_tally(XO_BENCH_CHK_BAD_IN);
		return XDP_DROP;
	}
	xo_vlan_xdp(ctx);
	xo_bench_tally(xo_bench_match(ctx, e->out[k], e->out_len) ?
		       XO_BENCH_CHK_OK : XO_BENCH_CHK_BAD_OUT);
	return XDP_DROP;
}
