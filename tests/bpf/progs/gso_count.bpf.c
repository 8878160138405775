// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Test-only TC counter for the feature-model validation: counts the skbs
 * that pass a clsact hook, GSO (gso_size != 0) and not, so a test can tell
 * where in a device stack a super-packet was segmented. Also a pass-all XDP
 * program, attached to a veth peer to make veth_fix_features() clear GSO.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

struct gso_counts {
	__u64 gso_skbs;		/* skbs with gso_size != 0 */
	__u64 plain_skbs;	/* everything else of at least min_len bytes */
	__u64 gso_segs;		/* sum of gso_segs of the GSO skbs (0 before validation) */
	__u64 bytes;
	__u64 vlan_meta;	/* skbs carrying a tag in skb metadata */
	__u64 small;		/* shorter than min_len: not ours (ARP, ...) */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gso_counts);
} gso_cnt SEC(".maps");

const volatile __u32 min_len = 200;

SEC("tc")
int gso_count(struct __sk_buff *skb)
{
	__u32 key = 0;
	struct gso_counts *c = bpf_map_lookup_elem(&gso_cnt, &key);

	if (!c)
		return TC_ACT_OK;
	if (skb->len < min_len) {
		__sync_fetch_and_add(&c->small, 1);
		return TC_ACT_OK;
	}
	if (skb->gso_size) {
		__sync_fetch_and_add(&c->gso_skbs, 1);
		__sync_fetch_and_add(&c->gso_segs, skb->gso_segs);
	} else {
		__sync_fetch_and_add(&c->plain_skbs, 1);
	}
	if (skb->vlan_present)
		__sync_fetch_and_add(&c->vlan_meta, 1);
	__sync_fetch_and_add(&c->bytes, skb->len);
	return TC_ACT_OK;
}

SEC("xdp")
int xdp_pass_all(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
