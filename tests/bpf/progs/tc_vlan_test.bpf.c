// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Test-only TC programs around the real tc_vlan code (included, not copied):
 * after the policy ran, the skb's metadata tag is copied into skb->cb[],
 * which BPF_PROG_TEST_RUN hands back in ctx_out, so a test can put the tag
 * back on the wire and compare bytes with xdp_vlan. Never installed.
 */
#include "tc_vlan.bpf.c"

/* Marks cb[3] so the test knows the copy happened (cb[] starts zeroed). */
const volatile __u32 cb_magic = 0x786f7462;	/* "xotb" */

/* cb[0] vlan_present, cb[1] vlan_proto (network order, as in __sk_buff),
 * cb[2] vlan_tci (host order), cb[3] cb_magic.
 */
static __always_inline int xo_tc_test(struct __sk_buff *skb, __u32 dir, __u32 hook)
{
	int ret = xo_vlan_tc(skb, dir, hook);

	skb->cb[0] = skb->vlan_present;
	skb->cb[1] = skb->vlan_proto;
	skb->cb[2] = skb->vlan_tci;
	skb->cb[3] = cb_magic;
	return ret;
}

SEC("tc")
int tc_vlan_cb_in(struct __sk_buff *skb)
{
	return xo_tc_test(skb, XO_DIR_INGRESS, XO_HOOK_TC_INGRESS);
}

SEC("tc")
int tc_vlan_cb_eg(struct __sk_buff *skb)
{
	return xo_tc_test(skb, XO_DIR_EGRESS, XO_HOOK_TC_EGRESS);
}
