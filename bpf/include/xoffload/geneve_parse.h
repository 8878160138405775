/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Geneve (RFC 8926) parsing for xdp_geneve: the outer headers to a
 * registered port, the Geneve header and its TLV options, the VNI, and the
 * inner flow hash that steers.
 */
#ifndef XOFFLOAD_GENEVE_PARSE_H
#define XOFFLOAD_GENEVE_PARSE_H

#include "parse.h"
#include "geneve_maps.h"

/* The outer headers of a frame that is Geneve on a registered port. */
struct xo_gnv_outer {
	struct udphdr *udp;
	struct xo_gnv_hdr *gh;
	void *inner;		/* first byte after the options */
	void *l3;		/* the outer IPv4 or IPv6 header */
	__u8 ipv6;
	__u8 pad[7];
};

enum xo_gnv_parse {
	XO_GNV_NOT_OURS = 0,	/* leave the frame alone */
	XO_GNV_OK,
	XO_GNV_MALFORMED,
	XO_GNV_CRIT_UNKNOWN,
	XO_GNV_CRIT_SLOW,	/* two critical classes the cache does not know:
				 * o->gh, o->inner set, the caller walks the
				 * options again and looks each class up */
	XO_GNV_OPTS_UNEXAMINED,	/* more options than the walk covers */
};

/* Outer Ethernet (+ up to 2 tags), IPv4 (options, no fragments) or IPv6
 * (no extension headers), UDP to a registered port. Returns
 * XO_GNV_NOT_OURS or XO_GNV_OK with o->udp set.
 */
static __always_inline int xo_gnv_parse_outer(struct xo_cursor *c,
					      struct xo_gnv_outer *o,
					      struct xo_gnv_cache *ca)
{
	struct xo_tags t = {};
	struct ethhdr *eth;
	struct udphdr *uh;
	__u32 port;

	eth = xo_parse_eth(c);
	if (!eth || xo_parse_vlans(c, xo_eth_proto(eth), &t, XO_VLAN_MAX_DEPTH) ||
	    t.more)
		return XO_GNV_NOT_OURS;
	if (t.inner_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = xo_parse_ipv4(c);

		/* a fragment is the stack's to reassemble first: MF or offset */
		if (!iph || xo_ipv4_fragment(iph) || iph->protocol != IPPROTO_UDP)
			return XO_GNV_NOT_OURS;
		o->l3 = iph;
	} else if (t.inner_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = xo_parse_ipv6(c);

		if (!ip6 || ip6->nexthdr != IPPROTO_UDP)
			return XO_GNV_NOT_OURS;
		o->l3 = ip6;
		o->ipv6 = 1;
	} else {
		return XO_GNV_NOT_OURS;
	}
	uh = xo_parse_udp(c);
	if (!uh)
		return XO_GNV_NOT_OURS;
	port = bpf_ntohs(uh->dest);
	if (!xo_gnv_port_ok(port, ca))
		return XO_GNV_NOT_OURS;
	o->udp = uh;
	return XO_GNV_OK;
}

/* Walks the TLV options in [opts, opts + optlen), at most XO_GNV_MAX_OPTS
 * of them (as many as opt_len can hold); *off_out is where it stopped. Returns XO_GNV_OK, or
 * XO_GNV_MALFORMED when an option runs past optlen or the packet.
 *
 * Without @lookup (the fast walk, no helper call, so nothing it keeps has
 * to be spilled around one): *miss is the one critical class the cache
 * does not answer for (XO_GNV_CACHE_NONE when there is none). A second
 * such class stops the walk with XO_GNV_CRIT_SLOW and the slow walk
 * checks every option again. Stopping there rather than counting the
 * misses spares the verifier: a count is a constant on each path it
 * follows, so it walked the rest of the loop once per count reached.
 * With @lookup (a constant at each call site) every such class is looked
 * up instead and *miss is 1 when one is unknown: the slow walk, see
 * xo_gnv_crit_unknown.
 */
static __always_inline int xo_gnv_walk_opts(void *opts, void *end, __u64 optlen,
					    struct xo_gnv_cache *ca, int lookup,
					    __u64 *off_out, __u32 *miss)
{
	__u64 off = 0;
	int i;

	for (i = 0; i < XO_GNV_MAX_OPTS; i++) {
		struct xo_gnv_opt *opt;
		__u32 cls;

		if (off >= optlen)
			break;
		opt = opts + (off & 0xff);
		if ((void *)(opt + 1) > end)
			return XO_GNV_MALFORMED;
		off += sizeof(*opt) + (opt->len & 0x1f) * 4;
		if (off > optlen)
			return XO_GNV_MALFORMED;	/* option runs past opt_len */
		if (!(opt->type & XO_GNV_OPT_CRIT))
			continue;
		cls = bpf_ntohs(opt->opt_class);
		if (lookup) {
			if (!xo_gnv_class_known(cls, ca))
				*miss = 1;
			continue;
		}
		/* a class never equals XO_GNV_CACHE_NONE: one compare each */
		if (ca->cls == cls || *miss == cls)
			continue;
		if (*miss != XO_GNV_CACHE_NONE)
			return XO_GNV_CRIT_SLOW;
		*miss = cls;
	}
	*off_out = off;
	return XO_GNV_OK;
}

/* The Geneve header and its options, within the UDP length, which must
 * fit the frame: the first buffer, or with @frags the @udp_room bytes from
 * the UDP header to the end of the whole frame (the headers and options
 * are in the first buffer). Any protocol type: the rule decides what
 * becomes of it. Returns XO_GNV_OK or XO_GNV_CRIT_SLOW (o->gh, o->inner
 * set), XO_GNV_MALFORMED, XO_GNV_CRIT_UNKNOWN or XO_GNV_OPTS_UNEXAMINED.
 */
static __always_inline int xo_gnv_parse_geneve(struct xo_cursor *c,
					       struct xo_gnv_outer *o,
					       struct xo_gnv_cache *ca, int frags,
					       __u64 udp_room)
{
	struct xo_gnv_hdr *gh = c->pos;
	void *udp_end, *opts;
	__u32 miss = XO_GNV_CACHE_NONE;
	__u64 optlen, off = 0, udp_len = bpf_ntohs(o->udp->len);
	int r;

	/* 6.1 and 6.12 keep no bounds through a byte swap: the mask bounds
	 * the length for them, the barrier keeps clang from dropping it as
	 * implied by the 16-bit load
	 */
	barrier_var(udp_len);
	udp_len &= 0xffff;
	udp_end = (void *)o->udp + udp_len;
	if ((void *)(gh + 1) > c->end || (void *)(gh + 1) > udp_end ||
	    (frags ? udp_len > udp_room : udp_end > c->end))
		return XO_GNV_MALFORMED;
	if (gh->ver_optlen >> 6)
		return XO_GNV_MALFORMED;	/* only version 0 exists */
	optlen = (gh->ver_optlen & 0x3f) * 4;
	opts = gh + 1;
	if (opts + optlen > udp_end)
		return XO_GNV_MALFORMED;	/* opt_len beyond the packet */

	o->gh = gh;
	o->inner = opts + optlen;
	r = xo_gnv_walk_opts(opts, c->end, optlen, ca, 0, &off, &miss);
	if (r != XO_GNV_OK)
		return r;
	/* options not walked may be unknown critical ones, C bit or not */
	if (off < optlen)
		return XO_GNV_OPTS_UNEXAMINED;
	if (miss != XO_GNV_CACHE_NONE && !xo_gnv_class_known(miss, ca))
		return XO_GNV_CRIT_UNKNOWN;
	return XO_GNV_OK;
}

/* The VNI: bytes 4-6 of the header, read with the reserved byte after
 * them as one 32-bit word (the header is in the frame whole).
 */
static __always_inline __u32 xo_gnv_vni(const struct xo_gnv_hdr *gh)
{
	return bpf_ntohl(*(const __u32 *)gh->vni) >> 8;
}

/* xo_gnv_flow_hash of the inner packet at @p (ethertype @proto; TEB: an
 * Ethernet frame). Missing, truncated or malformed inner headers (what
 * xo_parse_ipv4/_ipv6 refuse), and every protocol but IPv4 and IPv6 (ARP, MPLS,
 * NSH, ...), hash as zero fields.
 */
static __always_inline __u32 xo_gnv_inner_hash(void *p, void *end, __be16 proto)
{
	struct xo_cursor c = { .pos = p, .end = end };
	__u32 s = 0, d = 0;
	__u16 sp = 0, dp = 0;
	__u8 l4 = 0;

	if (proto == bpf_htons(XO_ETH_P_TEB)) {
		struct ethhdr *eth = xo_parse_eth(&c);
		struct xo_tags t = {};

		if (!eth || xo_parse_vlans(&c, xo_eth_proto(eth), &t, XO_VLAN_MAX_DEPTH))
			goto out;
		proto = t.inner_proto;
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = xo_parse_ipv4(&c);

		if (!iph)
			goto out;
		s = bpf_ntohl(iph->saddr);
		d = bpf_ntohl(iph->daddr);
		l4 = iph->protocol;
		if (xo_ipv4_later_fragment(iph))
			goto out;	/* no ports in later fragments */
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = xo_parse_ipv6(&c);

		if (!ip6)
			goto out;
		s = bpf_ntohl(ip6->saddr.in6_u.u6_addr32[0] ^ ip6->saddr.in6_u.u6_addr32[1] ^
			      ip6->saddr.in6_u.u6_addr32[2] ^ ip6->saddr.in6_u.u6_addr32[3]);
		d = bpf_ntohl(ip6->daddr.in6_u.u6_addr32[0] ^ ip6->daddr.in6_u.u6_addr32[1] ^
			      ip6->daddr.in6_u.u6_addr32[2] ^ ip6->daddr.in6_u.u6_addr32[3]);
		l4 = ip6->nexthdr;
	} else {
		goto out;
	}
	if (l4 == IPPROTO_UDP || l4 == IPPROTO_TCP) {
		__be16 *ports = c.pos;

		if ((void *)(ports + 2) <= c.end) {
			sp = bpf_ntohs(ports[0]);
			dp = bpf_ntohs(ports[1]);
		}
	}
out:
	return xo_gnv_flow_hash(s, d, sp, dp, l4);
}

#endif /* XOFFLOAD_GENEVE_PARSE_H */
