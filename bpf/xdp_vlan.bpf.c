// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* XDP VLAN pop/push/rewrite/allow-list, 802.1Q and 802.1ad, depth <= 2.
 * Tags are added or removed by moving only the 12 bytes of MAC addresses.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <xdp/xdp_helpers.h>
#include "xoffload/vlan.h"

/* @n is 1 or 2 at every call site (see xo_vlan_do_op); clang may merge the
 * two into one path with a register offset, which the bounds checks below
 * keep verifiable.
 */

/* Removes @n tags following the MAC addresses of the frame at @data: the
 * MACs move forward by 4 * n bytes and the head follows them. Called with
 * n <= the depth the parse found (xo_vlan_op_fits sees to it), so the check
 * never fails; it keeps the verifier's proof local instead of relying on
 * how clang joins the paths.
 * Returns 0 or a negative errno.
 */
static __always_inline long xo_xdp_pop(struct xdp_md *ctx, void *data,
				      void *data_end, int n)
{
	int len = n * (int)sizeof(struct xo_vlan_tag);
	struct xo_macs macs;

	if (xo_unlikely(data + XO_MAC_LEN + len > data_end))
		return -1;
	macs = xo_macs_load(data);
	xo_macs_store(data + len, macs);
	return bpf_xdp_adjust_head(ctx, len);
}

/* Inserts @n tags from @pol->push after the MAC addresses. Returns 0, or a
 * negative errno when the headroom cannot take them (frame unchanged).
 */
static __always_inline long xo_xdp_push(struct xdp_md *ctx,
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
	macs = xo_macs_load(data + len);
	xo_macs_store(data, macs);
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

/* Counts @yes if @cond, else @no: each at a constant index. */
static __always_inline void xo_vlan_count_if(struct xo_vlan_stats *st, __u32 cond, __u32 yes,
					     __u32 no, __u64 bytes)
{
	if (cond)
		xo_vlan_count(st, yes, bytes);
	else
		xo_vlan_count(st, no, bytes);
}

/* Pops @n tags and counts the outcome. */
static __always_inline int xo_xdp_pop_counted(struct xdp_md *ctx, void *data, void *data_end,
					      struct xo_vlan_stats *st, __u64 bytes, int n)
{
	if (xo_unlikely(xo_xdp_pop(ctx, data, data_end, n))) {
		xo_vlan_count(st, XO_VLAN_CNT_DROP_MALFORMED, bytes);
		return XDP_DROP;
	}
	xo_vlan_count(st, XO_VLAN_CNT_POPPED, bytes);
	return XDP_PASS;
}

/* Pushes @n tags and counts the outcome (@rewrite: the outer VID was
 * translated before).
 */
static __always_inline int xo_xdp_push_counted(struct xdp_md *ctx,
					       const struct xo_vlan_policy *pol,
					       struct xo_vlan_stats *st, __u64 bytes,
					       __u32 rewrite, int n)
{
	if (xo_unlikely(xo_xdp_push(ctx, pol, n))) {
		xo_vlan_count(st, XO_VLAN_CNT_DROP_NO_HEADROOM, bytes);
		return XDP_DROP;
	}
	xo_vlan_count_if(st, rewrite, XO_VLAN_CNT_REWRITTEN_PUSHED, XO_VLAN_CNT_PUSHED, bytes);
	return XDP_PASS;
}

/* Carries out the policy's op for a frame with @depth tags (a count as
 * xo_vlan_op_fits takes it) that the allow-list let through, and counts the
 * outcome, each at a constant index. @rewrite: its outer VID was translated
 * (moot when a pop removes the tag: POPPED is counted).
 */
static __always_inline int xo_vlan_do_op(struct xdp_md *ctx, void *data, void *data_end,
					 const struct xo_vlan_policy *pol,
					 struct xo_vlan_stats *st, __u64 bytes, __u32 depth,
					 __u32 rewrite)
{
	/* 64-bit: the barrier then needs no re-zero-extension */
	__u64 op = pol->op[depth == XO_VLAN_TAGGED ? 1 : depth];

	if (op == XO_VLAN_OP_POP1 && xo_vlan_op_fits(XO_VLAN_OP_POP1, depth))
		return xo_xdp_pop_counted(ctx, data, data_end, st, bytes, 1);
	barrier_var(op);
	if (op == XO_VLAN_OP_PUSH1 && xo_vlan_op_fits(XO_VLAN_OP_PUSH1, depth))
		return xo_xdp_push_counted(ctx, pol, st, bytes, rewrite, 1);
	if (op == XO_VLAN_OP_POP2 && xo_vlan_op_fits(XO_VLAN_OP_POP2, depth))
		return xo_xdp_pop_counted(ctx, data, data_end, st, bytes, 2);
	if (op == XO_VLAN_OP_PUSH2 && xo_vlan_op_fits(XO_VLAN_OP_PUSH2, depth))
		return xo_xdp_push_counted(ctx, pol, st, bytes, rewrite, 2);
	if (op == XO_VLAN_OP_TOO_DEEP) {
		xo_vlan_count(st, XO_VLAN_CNT_DROP_TOO_DEEP, bytes);
		return XDP_DROP;
	}
	xo_vlan_count_if(st, rewrite, XO_VLAN_CNT_REWRITTEN, XO_VLAN_CNT_PASSED, bytes);
	return XDP_PASS;
}

/* The allow-list and rewrite of a policy that has them, then its op: the
 * steps of xo_vlan_decide, taken in place. One difference that changes no
 * byte or counter: a rewrite before a pop is written (the decision cancels
 * it), then leaves with the popped tag.
 */
static __always_inline int xo_vlan_apply(struct xdp_md *ctx, void *data, void *data_end,
					 const struct xo_vlan_policy *pol,
					 struct xo_vlan_stats *st, __u64 bytes, __u32 depth,
					 __be16 outer_tci)
{
	struct xo_vlan_hdr *vh = data + sizeof(struct ethhdr);
	__u32 rewrite = 0;
	__be16 new_tci = 0;

	if (depth && (pol->flags & (XO_VLAN_F_ALLOW | XO_VLAN_F_REWRITE))) {
		if (xo_vlan_vid_rules(pol, XO_DIR_INGRESS, outer_tci, &rewrite, &new_tci)) {
			xo_vlan_count(st, XO_VLAN_CNT_DROP_NOT_ALLOWED, bytes);
			return XDP_DROP;
		}
		if (rewrite) {
			if (xo_unlikely((void *)(vh + 1) > data_end)) {
				/* parsed, so never taken; keeps the verifier sure */
				xo_vlan_count(st, XO_VLAN_CNT_DROP_MALFORMED, bytes);
				return XDP_DROP;
			}
			vh->tci = new_tci;
		}
	}
	return xo_vlan_do_op(ctx, data, data_end, pol, st, bytes, depth, rewrite);
}

/* Frames shorter than XO_TAGS_SEEN bytes: the cursor walk, a bounds check
 * per tag, then the same steps. Out of line, so that the common path keeps
 * its registers.
 */
static __noinline int xo_vlan_xdp_walk(struct xdp_md *ctx, const struct xo_vlan_policy *pol,
				       struct xo_vlan_stats *st, __u64 bytes)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xo_cursor c = { .pos = data, .end = data_end };
	struct xo_tags t = {};

	if (!pol || !xo_parse_eth(&c) ||
	    xo_parse_vlans(&c, xo_eth_proto(data), &t, XO_VLAN_MAX_DEPTH)) {
		xo_vlan_count(st, XO_VLAN_CNT_DROP_MALFORMED, bytes);
		return XDP_DROP;
	}
	return xo_vlan_apply(ctx, data, data_end, pol, st, bytes,
			     xo_vlan_op_index(t.depth, t.more), t.tag[0].tci);
}

/* Room for three whole tags: two told apart, and a third that must be whole
 * when there (xo_parse_vlans), so no frame this long can be cut short
 * inside the tags the policy acts on.
 */
#define XO_TAGS_SEEN (sizeof(struct ethhdr) + XO_VLAN_MORE * sizeof(struct xo_vlan_tag))

/* A frame of at least XO_TAGS_SEEN bytes (every real one: the Ethernet
 * minimum is 60) has its tags read at fixed offsets after one bounds check.
 * @frags: the frame may span several buffers (xdp_vlan_mb); its bytes are
 * then counted whole, with a helper call the single-buffer entry saves.
 * The tags are always in the first buffer, which holds at least the
 * headers a driver splits off.
 */
static __always_inline int xo_vlan_xdp(struct xdp_md *ctx, int frags)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 bytes = frags ? bpf_xdp_get_buff_len(ctx) : data_end - data;
	__u32 dir = XO_DIR_INGRESS;
	struct xo_vlan_stats *st = xo_vlan_stats_of(XO_HOOK_XDP);
	struct xo_vlan_policy *pol = xo_vlan_policy_of(dir);
	struct xo_vlan_hdr *vh = data + sizeof(struct ethhdr);

	_Static_assert(XO_VLAN_MAX_DEPTH == 2, "xo_vlan_xdp tells two tags apart");
	if (xo_unlikely(!pol || data + XO_TAGS_SEEN > data_end))
		return xo_vlan_xdp_walk(ctx, pol, st, bytes);
	/* one inlined copy of the policy per tag count, the count a constant
	 * in each: the op's fit folds away and no depth is carried around.
	 * When the outer tag alone decides (outer_only: the same op, one
	 * needing no count, for every tagged frame), the inner tags are not
	 * read: op[1] stands for them all.
	 */
	if (!xo_is_vlan_proto(xo_eth_proto(data)))
		return xo_vlan_apply(ctx, data, data_end, pol, st, bytes, 0, 0);
	if (pol->outer_only)
		return xo_vlan_apply(ctx, data, data_end, pol, st, bytes, XO_VLAN_TAGGED, vh[0].tci);
	if (!xo_is_vlan_proto(vh[0].encap_proto))
		return xo_vlan_apply(ctx, data, data_end, pol, st, bytes, 1, vh[0].tci);
	if (!xo_is_vlan_proto(vh[1].encap_proto))
		return xo_vlan_apply(ctx, data, data_end, pol, st, bytes, 2, vh[0].tci);
	return xo_vlan_apply(ctx, data, data_end, pol, st, bytes, XO_VLAN_MORE, vh[0].tci);
}

#if defined(XO_COMPOSED)
/* xdp_offload.bpf.c: the stage alone, its entries there */
#elif !defined(XO_VLAN_TAG_META)
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

#else /* XO_VLAN_TAG_META: xdp_vlan_tag.bpf.c */

/* The driver's copy of the tag it stripped into the RX descriptor or the
 * skb (veth, mlx5, ice; 6.8+). Device-bound programs only: the entries
 * below load bound to their interface, alone (libxdp's dispatcher cannot
 * chain them), and only where the driver offers it.
 */
extern int bpf_xdp_metadata_rx_vlan_tag(const struct xdp_md *ctx, __be16 *vlan_proto,
					__u16 *vlan_tci) __ksym;

/* A frame whose outer tag (@tci, host order) the device took out of the
 * data: the allow-list and the rewrite rule see it, counted as the in-data
 * path counts; what XDP cannot do to a tag outside the data (pop it, push
 * a tag outside it, change its VID) is dropped and counted
 * DROP_TAG_IN_META, never passed as if done.
 */
static __noinline int xo_vlan_xdp_meta(struct xdp_md *ctx, const struct xo_vlan_policy *pol,
				       struct xo_vlan_stats *st, __u64 bytes, __u16 tci)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xo_cursor c = { .pos = data, .end = data_end };
	struct xo_tags t = {};
	__u32 rewrite = 0, depth;
	__be16 new_tci = 0;
	__u8 op;

	if (!pol || !xo_parse_eth(&c) ||
	    xo_parse_vlans(&c, xo_eth_proto(data), &t, XO_VLAN_MAX_DEPTH)) {
		xo_vlan_count(st, XO_VLAN_CNT_DROP_MALFORMED, bytes);
		return XDP_DROP;
	}
	/* the stripped tag is the outermost one */
	depth = xo_vlan_op_index(t.depth + 1, t.more);
	if (depth > XO_VLAN_MORE)
		depth = XO_VLAN_MORE;
	if ((pol->flags & (XO_VLAN_F_ALLOW | XO_VLAN_F_REWRITE)) &&
	    xo_vlan_vid_rules(pol, XO_DIR_INGRESS, bpf_htons(tci), &rewrite, &new_tci)) {
		xo_vlan_count(st, XO_VLAN_CNT_DROP_NOT_ALLOWED, bytes);
		return XDP_DROP;
	}
	op = pol->op[depth];
	if (op == XO_VLAN_OP_TOO_DEEP) {
		xo_vlan_count(st, XO_VLAN_CNT_DROP_TOO_DEEP, bytes);
		return XDP_DROP;
	}
	if (op != XO_VLAN_OP_KEEP || rewrite) {
		xo_vlan_count(st, XO_VLAN_CNT_DROP_TAG_IN_META, bytes);
		return XDP_DROP;
	}
	xo_vlan_count(st, XO_VLAN_CNT_PASSED, bytes);
	return XDP_PASS;
}

static __always_inline int xo_vlan_xdp_tag(struct xdp_md *ctx, int frags)
{
	__be16 proto;
	__u16 tci;

	if (xo_likely(bpf_xdp_metadata_rx_vlan_tag(ctx, &proto, &tci)))
		return xo_vlan_xdp(ctx, frags);	/* no tag outside the data */
	return xo_vlan_xdp_meta(ctx, xo_vlan_policy_of(XO_DIR_INGRESS), xo_vlan_stats_of(XO_HOOK_XDP),
				frags ? bpf_xdp_get_buff_len(ctx) : ctx->data_end - ctx->data, tci);
}

SEC("xdp")
int xdp_vlan_tag(struct xdp_md *ctx)
{
	return xo_vlan_xdp_tag(ctx, 0);
}

SEC("xdp.frags")
int xdp_vlan_tag_mb(struct xdp_md *ctx)
{
	return xo_vlan_xdp_tag(ctx, 1);
}

#endif /* XO_VLAN_TAG_META */

#ifndef XO_COMPOSED
char _license[] SEC("license") = "Dual BSD/GPL";
#endif
