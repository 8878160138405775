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

/* VNI and port churn: before each frame the wrapper writes the next of
 * churn_vnis VNIs (from churn_vni_base) into the Geneve header at
 * churn_gnv_off, and the next of churn_ports UDP destination ports (from
 * churn_port_base) at churn_l4_off + 2, so the per-CPU lookup cache misses
 * as it would under many tunnels. The bench pins one CPU: one counter.
 */
__u32 churn_vnis, churn_vni_base, churn_ports, churn_port_base, churn_l4_off, churn_gnv_off, churn_n;

static __always_inline void xo_bench_churn(struct xdp_md *ctx)
{
	__u8 *data = (__u8 *)(long)ctx->data, *end = (__u8 *)(long)ctx->data_end;
	__u32 n = churn_n++;
	__u8 *q;

	if (churn_ports) {
		__u32 port = churn_port_base + n % churn_ports;

		q = data + (churn_l4_off & 0x7f);
		if (q + 4 > end)
			return;
		q[2] = port >> 8;
		q[3] = port & 0xff;
	}
	if (churn_vnis) {
		__u32 vni = churn_vni_base + n % churn_vnis;

		q = data + (churn_gnv_off & 0x7f);
		if (q + 8 > end)
			return;
		q[4] = vni >> 16;
		q[5] = (vni >> 8) & 0xff;
		q[6] = vni & 0xff;
	}
}

/* The churn floor: the same rewrite, then drop. */
SEC("xdp")
int xo_bench_gbase_churn(struct xdp_md *ctx)
{
	xo_bench_churn(ctx);
	return XDP_DROP;
}

/* Timed under churn: the rewrite, then exactly xdp_geneve's code. */
SEC("xdp")
int xo_bench_gnv_churn(struct xdp_md *ctx)
{
	xo_bench_churn(ctx);
	xo_gnv_xdp(ctx, 0);
	return XDP_DROP;
}

/* Reference rows: a part of xdp_geneve's work alone, with nothing around it,
 * to show the floor under a row that contains it.
 * - the outer UDP checksum walk (xo_csum_linear) over walk_len bytes from
 *   walk_off, its sum kept in walk_sum (so it is not optimised away, and
 *   the bench checks it walked);
 * - one bpf_redirect_map() into the XSKMAP slot walk_slot (as the xsk
 *   action makes, its result in walk_sum).
 */
__u32 walk_off, walk_len, walk_slot;
__s32 walk_sum;

SEC("xdp")
int xo_bench_csum_walk(struct xdp_md *ctx)
{
	walk_sum = xo_csum_linear(ctx, walk_off, walk_len);
	return XDP_DROP;
}

SEC("xdp")
int xo_bench_redirect_only(struct xdp_md *ctx)
{
	walk_sum = bpf_redirect_map(&xo_gnv_xsks, walk_slot, XDP_PASS);
	return XDP_DROP;
}
