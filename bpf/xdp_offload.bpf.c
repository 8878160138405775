// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The composed XDP program: xdp_vlan, xdp_geneve and xdp_xsk as stages of
 * one program, then a slot for a program of the user's (tail call), for
 * kernels and libxdp versions whose dispatcher cannot chain ours (see abi.h,
 * "The composed program"). The stages are the programs' own code, included,
 * with their maps: pinned ones under the same names, so they are shared
 * with xdp_vlan, tc_vlan, xdp_geneve and offload-tool's vlan/geneve
 * commands.
 */
#define XO_COMPOSED 1
#include "xdp_vlan.bpf.c"
#include "xdp_geneve.bpf.c"
#include "xdp_xsk.bpf.c"

/* Set by the loader before load: enum xo_stage bits. */
const volatile __u32 xo_stages = 0;

/* The slot after our stages: a user's XDP program, loaded by offload-tool
 * (attach IFACE chain --prog OBJ) with the same frags setting. Pinned: a
 * PROG_ARRAY loses its entries with its last user reference.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xo_chain SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XO_OFF_CNT_MAX);
	__type(key, __u32);
	__type(value, struct xo_counter);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xo_off_stats SEC(".maps");

static __always_inline void xo_off_count(__u32 reason, __u64 bytes)
{
	struct xo_counter *c = bpf_map_lookup_elem(&xo_off_stats, &reason);

	if (c) {
		c->packets++;
		c->bytes += bytes;
	}
}

/* Takes back a frame counted under @reason on this CPU. */
static __always_inline void xo_off_uncount(__u32 reason, __u64 bytes)
{
	struct xo_counter *c = bpf_map_lookup_elem(&xo_off_stats, &reason);

	if (c) {
		c->packets--;
		c->bytes -= bytes;
	}
}

/* Each stage sees what the one before passed; any other verdict is the
 * frame's (counted by the stage that gave it).
 */
static __always_inline int xo_offload(struct xdp_md *ctx, int frags)
{
	int v;

	if (xo_stages & XO_STAGE_VLAN) {
		v = xo_vlan_xdp(ctx, frags);
		if (v != XDP_PASS)
			return v;
	}
	if (xo_stages & XO_STAGE_GENEVE) {
		v = xo_gnv_xdp(ctx, frags);
		if (v != XDP_PASS)
			return v;
	}
	if (xo_stages & XO_STAGE_XSK) {
		v = xo_xsk_run(ctx);
		if (v != XDP_PASS)
			return v;
	}
	if (xo_stages & XO_STAGE_CHAIN) {
		__u64 bytes = frags ? bpf_xdp_get_buff_len(ctx) : ctx->data_end - ctx->data;

		/* counted before: a call that succeeds does not come back */
		xo_off_count(XO_OFF_CNT_CHAINED, bytes);
		bpf_tail_call(ctx, &xo_chain, 0);
		xo_off_uncount(XO_OFF_CNT_CHAINED, bytes);
		xo_off_count(XO_OFF_CNT_CHAIN_EMPTY, bytes);
	}
	return XDP_PASS;
}

SEC("xdp")
int xdp_offload(struct xdp_md *ctx)
{
	return xo_offload(ctx, 0);
}

/* Multi-buffer frames (an MTU above one page's worth). */
SEC("xdp.frags")
int xdp_offload_mb(struct xdp_md *ctx)
{
	return xo_offload(ctx, 1);
}

char _license[] SEC("license") = "Dual BSD/GPL";
