/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Bounds-checked header parsing for XDP and TC, the one copy every program
 * uses: a cursor that only moves forward after each header (Ethernet, VLAN
 * tags, IPv4, IPv6, UDP) was checked against data_end.
 */
#ifndef XOFFLOAD_PARSE_H
#define XOFFLOAD_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "abi.h"

/* Branch hints: clang lays the likely side out as the fall-through, so the
 * common frame runs straight through the JITed code.
 */
#define xo_likely(x) __builtin_expect(!!(x), 1)
#define xo_unlikely(x) __builtin_expect(!!(x), 0)

/* The 12 bytes of destination and source MAC address, moved as one 64-bit
 * and one 32-bit word: two loads and two stores instead of three of each.
 * Packet data is only 2-byte aligned; the verifier allows unaligned packet
 * access on every architecture with efficient unaligned loads (x86-64,
 * arm64). Loaded and stored field by field: a struct copy would move the
 * padding too, 4 bytes past the MACs.
 */
#define XO_MAC_LEN 12

struct xo_macs {
	__u64 lo;
	__u32 hi;
};

static __always_inline struct xo_macs xo_macs_load(const void *p)
{
	struct xo_macs m = { *(const __u64 *)p, *(const __u32 *)(p + 8) };

	return m;
}

static __always_inline void xo_macs_store(void *p, struct xo_macs m)
{
	*(__u64 *)p = m.lo;
	*(__u32 *)(p + 8) = m.hi;
}

struct xo_cursor {
	void *pos;
	void *end;
};

struct xo_vlan_hdr {
	__be16 tci;
	__be16 encap_proto;
};

static __always_inline int xo_is_vlan_proto(__be16 proto)
{
	return proto == bpf_htons(XO_ETH_P_8021Q) ||
	       proto == bpf_htons(XO_ETH_P_8021AD);
}

static __always_inline struct ethhdr *xo_parse_eth(struct xo_cursor *c)
{
	struct ethhdr *eth = c->pos;

	if ((void *)(eth + 1) > c->end)
		return NULL;
	c->pos = eth + 1;
	return eth;
}

/* The ethertype as one 16-bit load: struct ethhdr is packed, so reading
 * eth->h_proto compiles to two byte loads and a shift.
 */
static __always_inline __be16 xo_eth_proto(const struct ethhdr *eth)
{
	return *(const __be16 *)((const void *)eth + 2 * ETH_ALEN);
}

/* Tags found in the packet data, outermost first. */
struct xo_tags {
	struct xo_vlan_tag tag[XO_VLAN_MAX_DEPTH];
	__be16 inner_proto;	/* ethertype after the last parsed tag */
	__u8 depth;		/* tags parsed (0..XO_VLAN_MAX_DEPTH) */
	__u8 more;		/* another tag (whole) follows the last parsed one */
};

/* Parses up to @max (at most XO_VLAN_MAX_DEPTH) tags starting with
 * ethertype @proto at the cursor, and sees whether another follows (whose
 * 4 bytes must be there too: a pop leaves it outermost). Returns 0, or -1
 * when a tag is truncated.
 */
static __always_inline int xo_parse_vlans(struct xo_cursor *c, __be16 proto,
					  struct xo_tags *t, int max)
{
	int i;

#pragma unroll
	for (i = 0; i < XO_VLAN_MAX_DEPTH; i++) {
		struct xo_vlan_hdr *vh = c->pos;

		if (i >= max || !xo_is_vlan_proto(proto))
			break;
		if ((void *)(vh + 1) > c->end)
			return -1;
		t->tag[t->depth].tpid = proto;
		t->tag[t->depth].tci = vh->tci;
		t->depth++;
		proto = vh->encap_proto;
		c->pos = vh + 1;
	}
	t->inner_proto = proto;
	t->more = xo_is_vlan_proto(proto);
	if (t->more && c->pos + sizeof(struct xo_vlan_hdr) > c->end)
		return -1;
	return 0;
}

/* An IPv4 fragment: MF set or an offset. The stack reassembles it first. */
static __always_inline int xo_ipv4_fragment(const struct iphdr *iph)
{
	return (iph->frag_off & bpf_htons(0x3fff)) != 0;
}

/* An IPv4 fragment with an offset: its L4 header is in another one. */
static __always_inline int xo_ipv4_later_fragment(const struct iphdr *iph)
{
	return (iph->frag_off & bpf_htons(0x1fff)) != 0;
}

/* IPv4 at the cursor: version 4, IHL at least 5 and the whole header with
 * its options in the frame. Returns it with the cursor past the options,
 * or NULL (cursor unchanged).
 */
static __always_inline struct iphdr *xo_parse_ipv4(struct xo_cursor *c)
{
	struct iphdr *iph = c->pos;
	__u32 hlen;

	if ((void *)(iph + 1) > c->end || iph->version != 4 || iph->ihl < 5)
		return NULL;
	hlen = iph->ihl * 4;
	if (c->pos + hlen > c->end)
		return NULL;
	c->pos += hlen;
	return iph;
}

/* IPv6 at the cursor: version 6, the fixed header in the frame. Returns it
 * with the cursor past it, or NULL (cursor unchanged). Extension headers
 * are not walked: the caller sees the first one as nexthdr.
 */
static __always_inline struct ipv6hdr *xo_parse_ipv6(struct xo_cursor *c)
{
	struct ipv6hdr *ip6 = c->pos;

	if ((void *)(ip6 + 1) > c->end || ip6->version != 6)
		return NULL;
	c->pos = ip6 + 1;
	return ip6;
}

/* The UDP header at the cursor, the cursor past it; NULL when truncated. */
static __always_inline struct udphdr *xo_parse_udp(struct xo_cursor *c)
{
	struct udphdr *uh = c->pos;

	if ((void *)(uh + 1) > c->end)
		return NULL;
	c->pos = uh + 1;
	return uh;
}

#endif /* XOFFLOAD_PARSE_H */
