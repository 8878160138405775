// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* XDP VLAN pop/push/rewrite/allow-list, 802.1Q and 802.1ad, depth <= 2.
 * Tags are added or removed by moving only the 12 bytes of MAC addresses.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <xdp/xdp_helpers.h>
#include "xoffload/vlan.h"

#define XO_MAC_LEN 12

/* Moved as three 32-bit words, not byte by byte: packet data is at least
 * 2-byte aligned and the verifier allows unaligned packet access on every
 * architecture with efficient unaligned loads (x86-64, arm64).
 */
struct xo_macs {
	__u32 w[3];
};

/* @n is a compile-time constant at every call site (see xo_xdp_retag), so
 * the verifier sees fixed offsets.
 */

/* Removes @n tags following the MAC addresses: the MACs move forward by
 * 4 * n bytes and the head follows them. Returns 0 or a negative errno.
 */
static __always_inline int xo_xdp_pop(struct xdp_md *ctx, int n)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	int len = n * (int)sizeof(struct xo_vlan_tag);
	struct xo_macs macs;

	if (data + XO_MAC_LEN + len > data_end)
		return -1;
	macs = *(struct xo_macs *)data;
	*(struct xo_macs *)(data + len) = macs;
	return bpf_xdp_adjust_head(ctx, len);
}

/* Inserts @n tags from @tags after the MAC addresses. Returns 0, or a
 * negative errno when the headroom cannot take them (frame unchanged).
 */
static __always_inline int xo_xdp_push(struct xdp_md *ctx,
				       const struct xo_vlan_tag *tags, int n)
{
	int len = n * (int)sizeof(struct xo_vlan_tag);
	void *data, *data_end;
	struct xo_macs macs;

	if (bpf_xdp_adjust_head(ctx, -len))
		return -1;
	/* adjust_head invalidated every packet pointer: reload and recheck */
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + XO_MAC_LEN + len > data_end)
		goto undo;
	macs = *(struct xo_macs *)(data + len);
	*(struct xo_macs *)data = macs;
	*(struct xo_vlan_tag *)(data + XO_MAC_LEN) = tags[0];
	if (n > 1)
		*(struct xo_vlan_tag *)(data + XO_MAC_LEN + sizeof(tags[0])) = tags[1];
	return 0;
undo:
	bpf_xdp_adjust_head(ctx, len);
	return -1;
}

/* Applies plan->pop or plan->push; returns 0 or an XO_VLAN_CNT_DROP_*. */
static __always_inline int xo_xdp_retag(struct xdp_md *ctx,
					const struct xo_vlan_policy *pol,
					const struct xo_vlan_plan *plan)
{
	int err = 0;

	if (plan->pop == 1)
		err = xo_xdp_pop(ctx, 1);
	else if (plan->pop == 2)
		err = xo_xdp_pop(ctx, 2);
	if (err)
		return XO_VLAN_CNT_DROP_MALFORMED;
	if (plan->push == 1)
		err = xo_xdp_push(ctx, pol->push, 1);
	else if (plan->push == 2)
		err = xo_xdp_push(ctx, pol->push, 2);
	return err ? XO_VLAN_CNT_DROP_NO_HEADROOM : 0;
}

static __always_inline int xo_vlan_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 bytes = data_end - data;
	struct xo_cursor c = { .pos = data, .end = data_end };
	struct xo_vlan_policy *pol;
	struct xo_vlan_plan plan;
	struct xo_tags t = {};
	struct ethhdr *eth;
	__u32 dir = XO_DIR_INGRESS;
	struct xo_vlan_stats *st = xo_vlan_stats_of(XO_HOOK_XDP);

	pol = bpf_map_lookup_elem(&xo_vlan_cfg, &dir);
	eth = xo_parse_eth(&c);
	if (!pol || !eth || xo_parse_vlans(&c, xo_eth_proto(eth), &t, XO_VLAN_MAX_DEPTH)) {
		xo_vlan_count(st, XO_VLAN_CNT_DROP_MALFORMED, bytes);
		return XDP_DROP;
	}
	xo_vlan_decide(pol, dir, &t, &plan);
	if (plan.drop_reason) {
		xo_vlan_count(st, plan.drop_reason, bytes);
		return XDP_DROP;
	}
	if (plan.rewrite) {
		struct xo_vlan_hdr *vh = (void *)(eth + 1);

		if ((void *)(vh + 1) > data_end)
			return XDP_DROP; /* parsed above; keeps the verifier sure */
		vh->tci = plan.new_tci;
	}
	plan.drop_reason = xo_xdp_retag(ctx, pol, &plan);
	if (plan.drop_reason) {
		xo_vlan_count(st, plan.drop_reason, bytes);
		return XDP_DROP;
	}
	xo_vlan_count_kept(st, &plan, bytes);
	return XDP_PASS;
}

SEC("xdp")
int xdp_vlan(struct xdp_md *ctx)
{
	return xo_vlan_xdp(ctx);
}

/* libxdp dispatcher: priority 20 (before the default 50, so programs loaded
 * after it see frames with the policy applied); the next program in the
 * chain runs on XDP_PASS.
 */
struct {
	__uint(priority, 20);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xdp_vlan);

char _license[] SEC("license") = "Dual BSD/GPL";
