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

/* @n is 1 or 2 at every call site (see xo_xdp_retag); clang may merge the
 * two into one path with a register offset, which the bounds checks below
 * keep verifiable.
 */

/* Removes @n tags following the MAC addresses of the frame at @data: the
 * MACs move forward by 4 * n bytes and the head follows them. Called with
 * n <= the depth xo_xdp_tags found, so the check never fails; it keeps the
 * verifier's proof local instead of relying on how clang joins the paths.
 * Returns 0 or a negative errno.
 */
static __always_inline int xo_xdp_pop(struct xdp_md *ctx, void *data,
				      void *data_end, int n)
{
	int len = n * (int)sizeof(struct xo_vlan_tag);
	struct xo_macs macs;

	if (xo_unlikely(data + XO_MAC_LEN + len > data_end))
		return -1;
	macs = *(struct xo_macs *)data;
	*(struct xo_macs *)(data + len) = macs;
	return bpf_xdp_adjust_head(ctx, len);
}

/* Inserts @n tags from @pol->push after the MAC addresses. Returns 0, or a
 * negative errno when the headroom cannot take them (frame unchanged).
 */
static __always_inline int xo_xdp_push(struct xdp_md *ctx,
				       const struct xo_vlan_policy *pol, int n)
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
	/* each tag as one 32-bit word: memcpy, not a cast, and from the policy
	 * itself, whose 4-byte alignment (and so push[]'s) clang then knows
	 */
	__u32 w;

	__builtin_memcpy(&w, &pol->push[0], sizeof(w));
	*(__u32 *)(data + XO_MAC_LEN) = w;
	if (n > 1) {
		__builtin_memcpy(&w, &pol->push[1], sizeof(w));
		*(__u32 *)(data + XO_MAC_LEN + sizeof(w)) = w;
	}
	return 0;
undo:
	bpf_xdp_adjust_head(ctx, len);
	return -1;
}

/* What xo_parse_vlans finds in the frame at @data, as scalars: @depth
 * tags, @too_deep if another follows, @outer_tci. A frame of at least
 * XO_TAGS_SEEN bytes (every real one: the Ethernet minimum is 60) is read at
 * fixed offsets after one bounds check; a shorter one takes the cursor walk,
 * a check per tag. Returns 0, or -1 when the frame is truncated.
 */
#define XO_TAGS_SEEN (sizeof(struct ethhdr) + XO_VLAN_MAX_DEPTH * sizeof(struct xo_vlan_tag))

static __always_inline int xo_xdp_tags(void *data, void *data_end, __u32 *depth,
				       int *too_deep, __be16 *outer_tci)
{
	struct xo_vlan_hdr *vh = data + sizeof(struct ethhdr);
	__be16 proto;

	_Static_assert(XO_VLAN_MAX_DEPTH == 2, "xo_xdp_tags reads two tags");
	if (xo_unlikely(data + XO_TAGS_SEEN > data_end)) {
		struct xo_cursor c = { .pos = data, .end = data_end };
		struct xo_tags t = {};

		if (!xo_parse_eth(&c) ||
		    xo_parse_vlans(&c, xo_eth_proto(data), &t, XO_VLAN_MAX_DEPTH))
			return -1;
		*depth = t.depth;
		*too_deep = t.too_deep;
		*outer_tci = t.tag[0].tci;
		return 0;
	}
	*depth = 0;
	*too_deep = 0;
	*outer_tci = 0;
	proto = xo_eth_proto(data);
	if (xo_is_vlan_proto(proto)) {
		*depth = 1;
		*outer_tci = vh[0].tci;
		proto = vh[0].encap_proto;
		if (xo_is_vlan_proto(proto)) {
			*depth = 2;
			*too_deep = xo_is_vlan_proto(vh[1].encap_proto);
		}
	}
	return 0;
}

/* Applies the plan's pop or push (never both) and counts the frame: each
 * outcome has its own path and counter, so no index is computed.
 */
static __always_inline int xo_xdp_retag(struct xdp_md *ctx, void *data, void *data_end,
					const struct xo_vlan_policy *pol,
					const struct xo_vlan_plan *plan,
					struct xo_vlan_stats *st, __u64 bytes)
{
	int err;

	if (plan->pop) {
		err = plan->pop == 1 ? xo_xdp_pop(ctx, data, data_end, 1)
				     : xo_xdp_pop(ctx, data, data_end, 2);
		if (xo_unlikely(err)) {
			xo_vlan_count(st, XO_VLAN_CNT_DROP_MALFORMED, bytes);
			return XDP_DROP;
		}
		xo_vlan_count(st, XO_VLAN_CNT_POPPED, bytes);
		return XDP_PASS;
	}
	if (plan->push) {
		err = plan->push == 1 ? xo_xdp_push(ctx, pol, 1)
				      : xo_xdp_push(ctx, pol, 2);
		if (xo_unlikely(err)) {
			xo_vlan_count(st, XO_VLAN_CNT_DROP_NO_HEADROOM, bytes);
			return XDP_DROP;
		}
	}
	xo_vlan_count(st, xo_vlan_kept_reason(plan), bytes);
	return XDP_PASS;
}

/* @frags: the frame may span several buffers (xdp_vlan_mb); its bytes are
 * then counted whole, with a helper call the single-buffer entry saves.
 * The tags are always in the first buffer, which holds at least the
 * headers a driver splits off.
 */
static __always_inline int xo_vlan_xdp(struct xdp_md *ctx, int frags)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 bytes = frags ? bpf_xdp_get_buff_len(ctx) : data_end - data;
	struct xo_vlan_policy *pol;
	struct xo_vlan_plan plan;
	__u32 dir = XO_DIR_INGRESS;
	struct xo_vlan_stats *st = xo_vlan_stats_of(XO_HOOK_XDP);
	__be16 outer_tci;
	__u32 depth;
	int too_deep;

	pol = bpf_map_lookup_elem(&xo_vlan_cfg, &dir);
	if (xo_unlikely(!pol || xo_xdp_tags(data, data_end, &depth, &too_deep, &outer_tci))) {
		xo_vlan_count(st, XO_VLAN_CNT_DROP_MALFORMED, bytes);
		return XDP_DROP;
	}
	xo_vlan_decide(pol, dir, depth, too_deep, outer_tci, &plan);
	if (xo_unlikely(plan.drop_reason)) {
		xo_vlan_count(st, plan.drop_reason, bytes);
		return XDP_DROP;
	}
	if (plan.rewrite) {
		struct xo_vlan_hdr *vh = data + sizeof(struct ethhdr);

		if ((void *)(vh + 1) > data_end) {
			/* parsed above, so never taken; keeps the verifier sure */
			xo_vlan_count(st, XO_VLAN_CNT_DROP_MALFORMED, bytes);
			return XDP_DROP;
		}
		vh->tci = plan.new_tci;
	}
	return xo_xdp_retag(ctx, data, data_end, pol, &plan, st, bytes);
}

SEC("xdp")
int xdp_vlan(struct xdp_md *ctx)
{
	return xo_vlan_xdp(ctx, 0);
}

/* The same for multi-buffer frames (an MTU above one page's worth): the
 * entry to load on such an interface, by offload-tool or by xdp-loader
 * (--prog-name xdp_vlan_mb).
 */
SEC("xdp.frags")
int xdp_vlan_mb(struct xdp_md *ctx)
{
	return xo_vlan_xdp(ctx, 1);
}

/* libxdp dispatcher: priority 20 (before the default 50, so programs loaded
 * after it see frames with the policy applied); the next program in the
 * chain runs on XDP_PASS.
 */
struct {
	__uint(priority, 20);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xdp_vlan);

struct {
	__uint(priority, 20);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xdp_vlan_mb);

char _license[] SEC("license") = "Dual BSD/GPL";
