// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A user's program for the chain tests (attach IFACE chain --prog): drops
 * untagged IPv4 UDP frames to port 9 (discard) and passes every other frame.
 * Run after xdp_vlan's pop, a tagged frame to port 9 going missing shows it
 * ran, and ran after our stages. Counts what it dropped and passed.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

__u64 dropped, passed;

SEC("xdp")
int xdp_drop_port9(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp;

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) || ip->protocol != IPPROTO_UDP ||
	    ip->ihl < 5)
		goto pass;
	udp = (void *)ip + ip->ihl * 4;
	if ((void *)(udp + 1) > end || udp->dest != bpf_htons(9))
		goto pass;
	__sync_fetch_and_add(&dropped, 1);
	return XDP_DROP;
pass:
	__sync_fetch_and_add(&passed, 1);
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
