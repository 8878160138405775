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
	xo_vlan_xdp(ctx, 0);
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

/* Reference rows: a bare pop, the least a pop can cost here, and the bare
 * pop plus the per-CPU counter by reason the issue requires. A frame that
 * is not the expected single-tagged one is tallied as BAD_IN and aborted, a
 * path the timed runs never take (the bench checks the tally).
 */
static __always_inline int xo_bench_floor_fail(void)
{
	xo_bench_tally(XO_BENCH_CHK_BAD_IN);
	return XDP_ABORTED;
}

/* Ethertype check, MAC move, adjust_head(+4): a pop and nothing else. */
static __always_inline int xo_bench_floor(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	if (data + sizeof(struct ethhdr) + sizeof(struct xo_vlan_tag) > data_end ||
	    xo_eth_proto(data) != bpf_htons(XO_ETH_P_8021Q))
		return xo_bench_floor_fail();
	xo_macs_store(data + sizeof(struct xo_vlan_tag), xo_macs_load(data));
	if (bpf_xdp_adjust_head(ctx, (int)sizeof(struct xo_vlan_tag)))
		return xo_bench_floor_fail();
	return XDP_DROP;
}

SEC("xdp")
int xo_bench_floor_pop(struct xdp_md *ctx)
{
	return xo_bench_floor(ctx);
}

/* The bare pop and one xo_vlan_stats counter, as xdp_vlan counts a frame. */
SEC("xdp")
int xo_bench_floor_count(struct xdp_md *ctx)
{
	__u64 bytes = ctx->data_end - ctx->data;
	struct xo_vlan_stats *st = xo_vlan_stats_of(XO_HOOK_XDP);
	int verdict = xo_bench_floor(ctx);

	if (verdict == XDP_DROP)
		xo_vlan_count(st, XO_VLAN_CNT_POPPED, bytes);
	return verdict;
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
	xo_vlan_xdp(ctx, 0);
	xo_bench_tally(xo_bench_match(ctx, e->out[k], e->out_len) ?
		       XO_BENCH_CHK_OK : XO_BENCH_CHK_BAD_OUT);
	return XDP_DROP;
}
