/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* VLAN policy maps and the hook-independent parts of the decision: the
 * policy's op[] (checked by xo_vlan_op_fits) and the allow-list/rewrite
 * rules. tc_vlan runs xo_vlan_decide; xdp_vlan takes the same steps in place
 * (bpf/xdp_vlan.bpf.c). The BPF tests hold both to the same bytes and
 * counters for every policy and frame they try.
 */
#ifndef XOFFLOAD_VLAN_H
#define XOFFLOAD_VLAN_H

#include "parse.h"

/* Maps are pinned by name: xdp_vlan and tc_vlan loaded with the same pin
 * root (/sys/fs/bpf/xoffload/<ifname>) share one policy.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XO_DIR_MAX);
	__type(key, __u32);
	__type(value, struct xo_vlan_banks);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xo_vlan_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XO_VLAN_BANKS * XO_DIR_MAX * XO_VID_SLOTS);
	__type(key, __u32);
	__type(value, struct xo_vid_entry);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xo_vlan_vid SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XO_HOOK_MAX);
	__type(key, __u32);
	__type(value, struct xo_vlan_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xo_vlan_stats SEC(".maps");

/* The active policy of direction @dir: `active` is read once, and the
 * policy's own bank field leads to the VID table of the same bank, so a
 * frame never mixes two configurations (see struct xo_vlan_banks).
 */
static __always_inline struct xo_vlan_policy *xo_vlan_policy_of(__u32 dir)
{
	struct xo_vlan_banks *b = bpf_map_lookup_elem(&xo_vlan_cfg, &dir);

	return b ? &b->bank[b->active & 1] : NULL;
}

static __always_inline struct xo_vlan_stats *xo_vlan_stats_of(__u32 hook)
{
	return bpf_map_lookup_elem(&xo_vlan_stats, &hook);
}

static __always_inline void xo_vlan_count(struct xo_vlan_stats *st, __u32 reason,
					  __u64 bytes)
{
	if (xo_likely(st && reason < XO_VLAN_CNT_MAX)) {
		st->c[reason].packets++;
		st->c[reason].bytes += bytes;
	}
}

#define XO_VID_MASK 0x0fff

/* What to do with one frame, decided from the policy and its tags. */
struct xo_vlan_plan {
	__u32 drop_reason;	/* 0 = keep the frame, else an XO_VLAN_CNT_DROP_* */
	__u8 rewrite;		/* replace the outer tag's TCI with new_tci */
	__u8 pop;		/* tags to remove */
	__u8 push;		/* tags to add (policy->push[0..push-1]) */
	__u8 pad;
	__be16 new_tci;
};

/* The allow-list and rewrite rules for a frame whose outer tag carries
 * @outer_tci (network order), when @pol has either flag. Returns
 * XO_VLAN_CNT_DROP_NOT_ALLOWED, or 0 with *@rewrite set (and *@new_tci) when
 * the outer VID is translated.
 */
static __always_inline __u32 xo_vlan_vid_rules(const struct xo_vlan_policy *pol, __u32 dir,
					       __be16 outer_tci, __u32 *rewrite,
					       __be16 *new_tci)
{
	__u16 tci = bpf_ntohs(outer_tci);
	__u32 key = xo_vid_key(pol->bank, dir, tci & XO_VID_MASK);
	struct xo_vid_entry *e = bpf_map_lookup_elem(&xo_vlan_vid, &key);

	/* VID 0 is a priority tag: the frame belongs to the untagged (native)
	 * VLAN, which the allow-list does not filter
	 */
	if ((pol->flags & XO_VLAN_F_ALLOW) && (tci & XO_VID_MASK) &&
	    (!e || !(e->flags & XO_VID_ALLOWED)))
		return XO_VLAN_CNT_DROP_NOT_ALLOWED;
	if ((pol->flags & XO_VLAN_F_REWRITE) && e && e->rewrite_vid) {
		*rewrite = 1;
		*new_tci = bpf_htons((tci & ~XO_VID_MASK) | (e->rewrite_vid & XO_VID_MASK));
	}
	return 0;
}

/* A tag count for xo_vlan_op_fits: one or more tags, how many not read
 * (xdp_vlan with an outer_only policy, acting on op[1]). Only the ops that
 * need no count fit it.
 */
#define XO_VLAN_TAGGED (XO_VLAN_MORE + 1)

/* Whether @op fits a frame with @depth tags (0..XO_VLAN_MORE, or
 * XO_VLAN_TAGGED). op[] comes from userspace: one that does not fit (a pop
 * of more tags than the frame has, a push past XO_VLAN_MAX_DEPTH tags, a
 * count-dependent op under an outer_only set by hand), which
 * xo_vlan_policy_compile never writes, keeps the frame untouched instead of
 * cutting into it. Called with a constant @op, each case is one compare.
 */
static __always_inline int xo_vlan_op_fits(__u32 op, __u32 depth)
{
	if (depth == XO_VLAN_TAGGED)
		return xo_vlan_op_count_free(op);
	switch (op) {
	case XO_VLAN_OP_POP1:
		return depth >= 1;
	case XO_VLAN_OP_POP2:
		return depth >= 2;
	case XO_VLAN_OP_PUSH1:
		return depth + 1 <= XO_VLAN_MAX_DEPTH;
	case XO_VLAN_OP_PUSH2:
		return depth + 2 <= XO_VLAN_MAX_DEPTH;
	}
	return 1;
}

/* The op[] index of a frame whose parse found @depth tags
 * (0..XO_VLAN_MAX_DEPTH) and @more if another tag follows them.
 */
static __always_inline __u32 xo_vlan_op_index(__u32 depth, int more)
{
	return more || depth > XO_VLAN_MAX_DEPTH ? XO_VLAN_MORE : depth;
}

/* Decides from what a parse found: @depth tags (0..XO_VLAN_MAX_DEPTH),
 * @more if another tag follows them, @outer_tci the outermost tag's TCI
 * (read only when @depth > 0). Order: allow-list, rewrite, then the
 * policy's op for the tag count (see xo_vlan_depth_op). xdp_vlan takes the
 * same steps on its own path, without the plan.
 */
static __always_inline void xo_vlan_decide(const struct xo_vlan_policy *pol, __u32 dir,
					   __u32 depth, int more, __be16 outer_tci,
					   struct xo_vlan_plan *plan)
{
	__u32 rewrite = 0;

	__builtin_memset(plan, 0, sizeof(*plan));
	depth = xo_vlan_op_index(depth, more);
	if (depth && (pol->flags & (XO_VLAN_F_ALLOW | XO_VLAN_F_REWRITE))) {
		plan->drop_reason = xo_vlan_vid_rules(pol, dir, outer_tci, &rewrite,
						      &plan->new_tci);
		if (plan->drop_reason)
			return;
		plan->rewrite = rewrite;
	}
	switch (pol->op[depth]) {
	case XO_VLAN_OP_POP1:
		if (!xo_vlan_op_fits(XO_VLAN_OP_POP1, depth))
			break;
		plan->pop = 1;
		plan->rewrite = 0;	/* the rewritten tag leaves anyway */
		break;
	case XO_VLAN_OP_POP2:
		if (!xo_vlan_op_fits(XO_VLAN_OP_POP2, depth))
			break;
		plan->pop = 2;
		plan->rewrite = 0;
		break;
	case XO_VLAN_OP_PUSH1:
		if (xo_vlan_op_fits(XO_VLAN_OP_PUSH1, depth))
			plan->push = 1;
		break;
	case XO_VLAN_OP_PUSH2:
		if (xo_vlan_op_fits(XO_VLAN_OP_PUSH2, depth))
			plan->push = 2;
		break;
	case XO_VLAN_OP_TOO_DEEP:
		plan->drop_reason = XO_VLAN_CNT_DROP_TOO_DEEP;
		break;
	}
}

/* The one counter of a frame that was kept, whatever happened (see enum
 * xo_vlan_counter; the decision never pops and rewrites).
 */
static __always_inline __u32 xo_vlan_kept_reason(const struct xo_vlan_plan *plan)
{
	if (plan->pop)
		return XO_VLAN_CNT_POPPED;
	if (plan->push)
		return plan->rewrite ? XO_VLAN_CNT_REWRITTEN_PUSHED : XO_VLAN_CNT_PUSHED;
	return plan->rewrite ? XO_VLAN_CNT_REWRITTEN : XO_VLAN_CNT_PASSED;
}

#endif /* XOFFLOAD_VLAN_H */
