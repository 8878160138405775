// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Test-only XDP programs around the real xdp_vlan code (included, not
 * copied): push until the headroom runs out, and run xdp_vlan with (almost)
 * no headroom left. Built into the test skeleton only, never installed.
 */
#include "xdp_vlan.bpf.c"

/* More tags than XDP_PACKET_HEADROOM (256) can ever take, so the loop
 * always ends on a failed push, never on its bound.
 */
#define XO_TEST_MAX_PUSH 80
#define XO_TEST_MAX_FRAME 256

__u32 push_ok;		/* xdp_push_max: pushes that succeeded */
__u32 tight_slack;	/* xdp_vlan_tight: headroom to leave, bytes (set by the test) */
__u32 tight_taken;	/* xdp_vlan_tight: headroom taken away, bytes */
__u8 scratch[2 * XO_TEST_MAX_FRAME];

/* Pushes one 802.1Q tag after another, VID 1, 2, ... (the last pushed is
 * outermost), until xo_xdp_push refuses. The frame must come back with every
 * successful tag and unchanged by the failed one.
 */
SEC("xdp")
int xdp_push_max(struct xdp_md *ctx)
{
	__u32 i, n = 0;

	for (i = 0; i < XO_TEST_MAX_PUSH; i++) {
		struct xo_vlan_policy pol = {
			.push = { { .tpid = bpf_htons(XO_ETH_P_8021Q),
				    .tci = bpf_htons((i + 1) & XO_VID_MASK) } },
		};

		if (xo_xdp_push(ctx, &pol, 1))
			break;
		n++;
	}
	push_ok = n;
	return XDP_PASS;
}

/* Takes all headroom but tight_slack bytes, moves the frame back to where
 * it started from the program's point of view (same bytes at data), then runs
 * the real xdp_vlan logic, whose pushes must now fail cleanly.
 */
SEC("xdp")
int xdp_vlan_tight(struct xdp_md *ctx)
{
	__u32 len = ctx->data_end - ctx->data;
	__u32 taken = 0, slack = tight_slack & ~3U;
	int i;

	if (len == 0 || len > XO_TEST_MAX_FRAME)
		return XDP_ABORTED;
	for (i = 0; i < XO_TEST_MAX_PUSH; i++) {
		if (bpf_xdp_adjust_head(ctx, -4))
			break;
		taken += 4;
	}
	if (slack > taken)
		slack = taken;
	if (slack && bpf_xdp_adjust_head(ctx, slack))
		return XDP_ABORTED;
	taken -= slack;
	/* the original bytes now sit at data + taken: copy them to data. The
	 * mask changes nothing (1 <= len <= 256) but lets the verifier see
	 * 1 <= size <= sizeof(scratch) whatever register clang picks.
	 */
	len = ((len - 1) & (2 * XO_TEST_MAX_FRAME - 1)) + 1;
	if (bpf_xdp_load_bytes(ctx, taken, scratch, len) ||
	    bpf_xdp_store_bytes(ctx, 0, scratch, len) ||
	    bpf_xdp_adjust_tail(ctx, -(int)taken))
		return XDP_ABORTED;
	tight_taken = taken;
	return xo_vlan_xdp(ctx, 0);
}
