// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Test-only: at a veth's TC egress, marks every skb's outermost checksum
 * verified (CHECKSUM_UNNECESSARY, csum_level 0), as i40e and igb do from the
 * RX descriptor for a UDP frame to a port the NIC does not know. The mark
 * crosses the veth, so the peer's XDP sees a frame a real NIC would hand it.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

SEC("tc")
int tc_csum_mark(struct __sk_buff *skb)
{
	/* CHECKSUM_NONE -> CHECKSUM_UNNECESSARY, level 0 */
	bpf_csum_level(skb, BPF_CSUM_LEVEL_INC);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "Dual BSD/GPL";
