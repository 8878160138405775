// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The counting sink of tools/bench threads and e2e: a TC ingress program
 * (cls_bpf, direct action) that counts every frame and its bytes (and the
 * wire frames a GSO skb stands for, which veth passes on unsegmented when
 * the sender's device has the offload) and drops it, so what arrives costs the receiver as little as the stack allows and
 * the count is the bench's, not a socket's. tools/bench-lib.sh attaches it
 * with tc and reads the map through the program tc reports (bpftool).
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

struct xo_sink_count {
	__u64 packets;		/* skbs */
	__u64 bytes;
	__u64 segments;		/* wire frames: a GSO skb counts its gso_segs */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xo_sink_count);
} xo_sink_cnt SEC(".maps");

SEC("tc")
int xo_sink(struct __sk_buff *skb)
{
	__u32 k = 0;
	struct xo_sink_count *c = bpf_map_lookup_elem(&xo_sink_cnt, &k);

	if (c) {
		c->packets++;
		c->bytes += skb->len;
		c->segments += skb->gso_segs ? skb->gso_segs : 1;
	}
	return TC_ACT_SHOT;
}

char _license[] SEC("license") = "Dual BSD/GPL";
