// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* XDP redirect of each rx queue to its AF_XDP socket (XSKMAP slot = queue),
 * optionally only frames matching a filter; counts every verdict by reason.
 * Frags-aware (xdp.frags): only the headers in the first buffer are read,
 * so frames larger than a page (veth or a NIC at MTU 9000) reach
 * multi-buffer (XDP_USE_SG) sockets whole.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <xdp/xdp_helpers.h>
#include "xoffload/parse.h"

/* Set by the loader when the kernel takes BPF_F_XDP_HAS_FRAGS (5.18+); the
 * verifier drops the branch that calls bpf_xdp_get_buff_len() otherwise.
 */
const volatile __u8 xo_xsk_frags = 0;

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, XO_XSK_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xo_xsk_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xo_xsk_filter);
} xo_xsk_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XO_XSK_CNT_MAX);
	__type(key, __u32);
	__type(value, struct xo_counter);
} xo_xsk_stats SEC(".maps");

#ifdef XO_XSK_TAG_META
/* The tag the driver stripped (xdp_xsk_tag.bpf.c; see xdp_vlan_tag.bpf.c). */
extern int bpf_xdp_metadata_rx_vlan_tag(const struct xdp_md *ctx, __be16 *vlan_proto,
					__u16 *vlan_tci) __ksym;
#endif

static __always_inline void xo_xsk_count(__u32 reason, __u64 bytes)
{
	struct xo_counter *c = bpf_map_lookup_elem(&xo_xsk_stats, &reason);

	if (c) {
		c->packets++;
		c->bytes += bytes;
	}
}

/* Returns 1 when the frame matches @f, 0 when not, -1 when a header it
 * reads is truncated or malformed (an IP version that is not its
 * ethertype's, an IHL below 5).
 */
static __always_inline int xo_xsk_match(struct xdp_md *ctx,
					const struct xo_xsk_filter *f)
{
	struct xo_cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	struct xo_tags tags = {};
	struct ethhdr *eth;
	struct udphdr *uh;
	__be16 proto;
	__u8 l4 = 0;

	eth = xo_parse_eth(&c);
	if (!eth)
		return -1;
	if (xo_parse_vlans(&c, xo_eth_proto(eth), &tags, XO_VLAN_MAX_DEPTH))
		return -1;
	proto = tags.inner_proto;
	if (f->flags & XO_XSK_F_VLAN) {
		__u16 vid = tags.depth ? bpf_ntohs(tags.tag[0].tci) & 0x0fff : 0;
#ifdef XO_XSK_TAG_META
		__be16 tpid;
		__u16 tci;

		/* a tag the device stripped was the outermost one */
		if (!bpf_xdp_metadata_rx_vlan_tag(ctx, &tpid, &tci))
			vid = tci & 0x0fff;
#endif
		if (vid != f->vid)
			return 0;
	}
	if ((f->flags & XO_XSK_F_ETHERTYPE) && proto != f->ethertype)
		return 0;
	if (!(f->flags & XO_XSK_F_UDP_DPORT))
		return 1;

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = xo_parse_ipv4(&c);

		if (!iph)
			return -1;
		/* later fragments carry no UDP header */
		if (xo_ipv4_later_fragment(iph))
			return 0;
		l4 = iph->protocol;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = xo_parse_ipv6(&c);

		if (!ip6)
			return -1;
		l4 = ip6->nexthdr;	/* extension headers: not matched */
	} else {
		return 0;
	}
	if (l4 != IPPROTO_UDP)
		return 0;
	uh = xo_parse_udp(&c);
	if (!uh)
		return -1;
	return uh->dest == f->udp_dport;
}

static __always_inline int xo_xsk_run(struct xdp_md *ctx)
{
	/* every buffer of a multi-buffer frame */
	__u64 bytes = xo_xsk_frags ? bpf_xdp_get_buff_len(ctx) : ctx->data_end - ctx->data;
	__u32 q = ctx->rx_queue_index;
	__u32 zero = 0;
	struct xo_xsk_filter *f;
	int m;

	f = bpf_map_lookup_elem(&xo_xsk_cfg, &zero);
	if (f && f->flags) {
		m = xo_xsk_match(ctx, f);
		if (m < 0) {
			xo_xsk_count(XO_XSK_CNT_MALFORMED, bytes);
			return XDP_PASS;
		}
		if (!m) {
			xo_xsk_count(XO_XSK_CNT_FILTERED, bytes);
			return XDP_PASS;
		}
	}
	if (bpf_redirect_map(&xo_xsk_map, q, XDP_PASS) == XDP_REDIRECT) {
		xo_xsk_count(XO_XSK_CNT_REDIRECTED, bytes);
		return XDP_REDIRECT;
	}
	xo_xsk_count(XO_XSK_CNT_NO_SOCKET, bytes);
	return XDP_PASS;
}

#if defined(XO_COMPOSED)
/* xdp_offload.bpf.c: the stage alone, its entries there */
#elif !defined(XO_XSK_TAG_META)
SEC("xdp.frags")
int xdp_xsk(struct xdp_md *ctx)
{
	return xo_xsk_run(ctx);
}

struct {
	__uint(priority, 30);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xdp_xsk);
#else
/* Loaded device-bound, alone, where the driver offers the kfunc. */
SEC("xdp.frags")
int xdp_xsk_tag(struct xdp_md *ctx)
{
	return xo_xsk_run(ctx);
}
#endif

#ifndef XO_COMPOSED
char _license[] SEC("license") = "Dual BSD/GPL";
#endif
