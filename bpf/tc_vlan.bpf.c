// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* TC clsact ingress/egress VLAN policy: the same decision as xdp_vlan, applied
 * with bpf_skb_vlan_push/pop. The outer tag may sit in skb metadata
 * (vlan_present) rather than in the packet: both places are handled.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "xoffload/vlan.h"

/* Collects the tags of @skb, outermost first: the metadata tag (if any)
 * followed by those in the packet. Returns 0 or -1 if truncated.
 */
static __always_inline int xo_tc_tags(struct __sk_buff *skb, struct xo_tags *t)
{
	struct xo_cursor c = {
		.pos = (void *)(long)skb->data,
		.end = (void *)(long)skb->data_end,
	};
	struct ethhdr *eth = xo_parse_eth(&c);

	if (!eth)
		return -1;
	if (skb->vlan_present) {
		t->tag[0].tpid = (__be16)skb->vlan_proto;
		t->tag[0].tci = bpf_htons((__u16)skb->vlan_tci);
		t->depth = 1;
		return xo_parse_vlans(&c, xo_eth_proto(eth), t, XO_VLAN_MAX_DEPTH - 1);
	}
	return xo_parse_vlans(&c, xo_eth_proto(eth), t, XO_VLAN_MAX_DEPTH);
}

/* Replaces the outer TCI, wherever the outer tag is. */
static __always_inline int xo_tc_rewrite(struct __sk_buff *skb,
					 const struct xo_tags *t, __be16 tci)
{
	if (skb->vlan_present) {
		/* pop moves the next packet tag (if any) into metadata; push then
		 * moves it back in front of the payload, so the order holds
		 */
		if (bpf_skb_vlan_pop(skb))
			return -1;
		return bpf_skb_vlan_push(skb, t->tag[0].tpid, bpf_ntohs(tci));
	}
	return bpf_skb_store_bytes(skb, 2 * ETH_ALEN + sizeof(__be16), &tci,
				   sizeof(tci), BPF_F_RECOMPUTE_CSUM);
}

/* bpf_skb_vlan_pop() finds a tag in the packet only when skb->protocol
 * names it (a raw AF_PACKET sender may have set another protocol): refuse
 * rather than count a pop that did not happen.
 */
static __always_inline int xo_tc_can_pop(struct __sk_buff *skb, const struct xo_tags *t,
					 __u32 pop)
{
	__be16 proto = (__be16)skb->protocol;

	if (!skb->vlan_present)
		return proto == t->tag[0].tpid;
	return pop < 2 || proto == t->tag[1].tpid;
}

static __always_inline int xo_vlan_tc(struct __sk_buff *skb, __u32 dir, __u32 hook)
{
	/* a tag held in skb metadata is on the wire too: count it like XDP does */
	__u64 bytes = skb->len + (skb->vlan_present ? sizeof(struct xo_vlan_tag) : 0);
	struct xo_vlan_policy *pol;
	struct xo_vlan_plan plan;
	struct xo_tags t = {};
	struct xo_vlan_stats *st = xo_vlan_stats_of(hook);
	int i;

	pol = xo_vlan_policy_of(dir);
	if (!pol || xo_tc_tags(skb, &t)) {
		xo_vlan_count(st, XO_VLAN_CNT_DROP_MALFORMED, bytes);
		return TC_ACT_SHOT;
	}
	xo_vlan_decide(pol, dir, t.depth, t.more, t.tag[0].tci, &plan);
	if (plan.drop_reason) {
		xo_vlan_count(st, plan.drop_reason, bytes);
		return TC_ACT_SHOT;
	}
	if ((plan.pop && !xo_tc_can_pop(skb, &t, plan.pop)) ||
	    (plan.rewrite && xo_tc_rewrite(skb, &t, plan.new_tci))) {
		xo_vlan_count(st, XO_VLAN_CNT_DROP_MALFORMED, bytes);
		return TC_ACT_SHOT;
	}
#pragma unroll
	for (i = 0; i < XO_VLAN_MAX_DEPTH; i++) {
		if (i < plan.pop && bpf_skb_vlan_pop(skb)) {
			xo_vlan_count(st, XO_VLAN_CNT_DROP_MALFORMED, bytes);
			return TC_ACT_SHOT;
		}
	}
	/* innermost first: each push moves the previous one into the packet */
#pragma unroll
	for (i = XO_VLAN_MAX_DEPTH - 1; i >= 0; i--) {
		if (i < plan.push &&
		    bpf_skb_vlan_push(skb, pol->push[i].tpid,
				      bpf_ntohs(pol->push[i].tci))) {
			xo_vlan_count(st, XO_VLAN_CNT_DROP_NO_HEADROOM, bytes);
			return TC_ACT_SHOT;
		}
	}
	xo_vlan_count(st, xo_vlan_kept_reason(&plan), bytes);
	return TC_ACT_OK;
}

SEC("tc")
int tc_vlan_ingress(struct __sk_buff *skb)
{
	return xo_vlan_tc(skb, XO_DIR_INGRESS, XO_HOOK_TC_INGRESS);
}

SEC("tc")
int tc_vlan_egress(struct __sk_buff *skb)
{
	return xo_vlan_tc(skb, XO_DIR_EGRESS, XO_HOOK_TC_EGRESS);
}

char _license[] SEC("license") = "Dual BSD/GPL";
