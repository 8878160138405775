// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A program that is not ours, for the libxdp dispatcher tests: loaded by
 * xdp-loader next to xdp_vlan and xdp_geneve, it drops the frames sent to
 * 02:00:00:00:00:0c that arrive without a VLAN tag and passes every other
 * frame. A test sees it ran, and ran after xdp_vlan popped the tag, by
 * those frames going missing. Counts what it saw in `seen`.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <xdp/xdp_helpers.h>

__u64 seen;

SEC("xdp")
int xdp_foreign(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	static const unsigned char mac_c[ETH_ALEN] = { 0x02, 0, 0, 0, 0, 0x0c };

	__sync_fetch_and_add(&seen, 1);
	if ((void *)(eth + 1) > end || eth->h_proto == bpf_htons(ETH_P_8021Q) ||
	    eth->h_proto == bpf_htons(ETH_P_8021AD))
		return XDP_PASS;
	for (int i = 0; i < ETH_ALEN; i++)
		if (eth->h_dest[i] != mac_c[i])
			return XDP_PASS;
	return XDP_DROP;
}

/* After xdp_vlan (20) and xdp_geneve (25). */
struct {
	__uint(priority, 30);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xdp_foreign);

char _license[] SEC("license") = "Dual BSD/GPL";
