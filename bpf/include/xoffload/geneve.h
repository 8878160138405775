/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Geneve (RFC 8926) maps and parsing for xdp_geneve: the port registry, VNI
 * rules, known option classes, redirect targets and counters.
 */
#ifndef XOFFLOAD_GENEVE_H
#define XOFFLOAD_GENEVE_H

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <linux/udp.h>
#include "parse.h"

/* Pinned by name under /sys/fs/bpf/xoffload/<ifname>/ so the registry and
 * rules outlive the CLI (see abi.h for what each one holds).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XO_GNV_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct xo_gnv_port);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xo_gnv_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XO_GNV_MAX_RULES + 1);	/* + the default rule */
	__type(key, __u32);
	__type(value, struct xo_gnv_rule);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xo_gnv_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xo_gnv_cfg);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xo_gnv_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XO_GNV_MAX_CLASSES);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xo_gnv_optcls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, XO_GNV_XSK_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xo_gnv_xsks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, XO_GNV_MAX_QUEUES);
	__type(key, __u32);
	__type(value, struct bpf_cpumap_val);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xo_gnv_cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xo_gnv_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xo_gnv_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XO_GNV_MAX_RULES + 1);
	__type(key, __u32);
	__type(value, struct xo_gnv_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xo_gnv_vstats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xo_gnv_cache);
} xo_gnv_cache SEC(".maps");	/* not pinned: private to each loaded program */

/* Empties the per-CPU cache when the maps changed since it was filled. */
static __always_inline void xo_gnv_cache_sync(struct xo_gnv_cache *ca, __u32 gen)
{
	__u64 tag = 1ULL << 32 | gen;

	if (ca->gen_tag == tag)
		return;
	ca->gen_tag = tag;
	ca->port = XO_GNV_CACHE_NONE;
	ca->miss_port = XO_GNV_CACHE_NONE;
	ca->vni = XO_GNV_CACHE_NONE;
	ca->cls = XO_GNV_CACHE_NONE;
}

/* Is @port registered? The per-CPU cache answers for the last hit and the
 * last miss.
 */
static __always_inline int xo_gnv_port_ok(__u32 port, struct xo_gnv_cache *ca)
{
	if (ca->port == port)
		return 1;
	if (ca->miss_port == port)
		return 0;
	if (!bpf_map_lookup_elem(&xo_gnv_ports, &port)) {
		ca->miss_port = port;
		return 0;
	}
	ca->port = port;
	return 1;
}

/* The rule of @vni copied into @out; when the VNI has none (returns 0),
 * the default rule (xo_gnv_rules[XO_GNV_VNI_DEFAULT], pass when absent).
 * Each is one map value, replaced whole by userspace.
 */
static __always_inline int xo_gnv_rule_of(__u32 vni, struct xo_gnv_cache *ca,
					  struct xo_gnv_rule *out)
{
	struct xo_gnv_rule *r;
	__u32 dflt = XO_GNV_VNI_DEFAULT;

	if (ca->vni == vni) {
		*out = ca->rule;
		return ca->has_rule;
	}
	r = bpf_map_lookup_elem(&xo_gnv_rules, &vni);
	ca->vni = vni;
	ca->has_rule = r != NULL;
	if (!r)
		r = bpf_map_lookup_elem(&xo_gnv_rules, &dflt);
	if (r) {
		ca->rule = *r;
	} else {
		ca->rule.action = XO_GNV_ACT_PASS;
		ca->rule.queues = 1;
		ca->rule.slot = XO_GNV_SLOT_DEFAULT;
	}
	*out = ca->rule;
	return ca->has_rule;
}

static __always_inline void xo_gnv_count(struct xo_gnv_stats *st, __u32 reason,
					 __u64 bytes)
{
	if (st && reason < XO_GNV_CNT_MAX) {
		st->c[reason].packets++;
		st->c[reason].bytes += bytes;
	}
}

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
		struct iphdr *iph = c->pos;
		__u32 hlen;

		if ((void *)(iph + 1) > c->end || iph->version != 4 || iph->ihl < 5)
			return XO_GNV_NOT_OURS;
		hlen = iph->ihl * 4;
		if (c->pos + hlen > c->end)
			return XO_GNV_NOT_OURS;
		/* a fragment is the stack's to reassemble first: MF or offset */
		if (iph->frag_off & bpf_htons(0x3fff) || iph->protocol != IPPROTO_UDP)
			return XO_GNV_NOT_OURS;
		o->l3 = iph;
		c->pos += hlen;
	} else if (t.inner_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = c->pos;

		if ((void *)(ip6 + 1) > c->end || ip6->nexthdr != IPPROTO_UDP)
			return XO_GNV_NOT_OURS;
		o->l3 = ip6;
		o->ipv6 = 1;
		c->pos = ip6 + 1;
	} else {
		return XO_GNV_NOT_OURS;
	}
	uh = c->pos;
	if ((void *)(uh + 1) > c->end)
		return XO_GNV_NOT_OURS;
	port = bpf_ntohs(uh->dest);
	if (!xo_gnv_port_ok(port, ca))
		return XO_GNV_NOT_OURS;
	o->udp = uh;
	c->pos = uh + 1;
	return XO_GNV_OK;
}

/* Is option class @cls declared known? The per-CPU cache answers for the
 * last class found known; otherwise a map lookup, which fills the cache.
 */
static __always_inline int xo_gnv_class_known(__u32 cls, struct xo_gnv_cache *ca)
{
	if (ca->cls == cls)
		return 1;
	if (!bpf_map_lookup_elem(&xo_gnv_optcls, &cls))
		return 0;
	ca->cls = cls;
	return 1;
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

static __always_inline __u32 xo_gnv_vni(const struct xo_gnv_hdr *gh)
{
	return (__u32)gh->vni[0] << 16 | (__u32)gh->vni[1] << 8 | gh->vni[2];
}

/* xo_gnv_flow_hash of the inner packet at @p (ethertype @proto; TEB: an
 * Ethernet frame). Missing or truncated inner headers, and every protocol
 * but IPv4 and IPv6 (ARP, MPLS, NSH, ...), hash as zero fields.
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
		struct iphdr *iph = c.pos;

		if ((void *)(iph + 1) > c.end || iph->ihl < 5)
			goto out;
		s = bpf_ntohl(iph->saddr);
		d = bpf_ntohl(iph->daddr);
		l4 = iph->protocol;
		if (iph->frag_off & bpf_htons(0x1fff))
			goto out;	/* no ports in later fragments */
		c.pos += iph->ihl * 4;
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = c.pos;

		if ((void *)(ip6 + 1) > c.end)
			goto out;
		s = bpf_ntohl(ip6->saddr.in6_u.u6_addr32[0] ^ ip6->saddr.in6_u.u6_addr32[1] ^
			      ip6->saddr.in6_u.u6_addr32[2] ^ ip6->saddr.in6_u.u6_addr32[3]);
		d = bpf_ntohl(ip6->daddr.in6_u.u6_addr32[0] ^ ip6->daddr.in6_u.u6_addr32[1] ^
			      ip6->daddr.in6_u.u6_addr32[2] ^ ip6->daddr.in6_u.u6_addr32[3]);
		l4 = ip6->nexthdr;
		c.pos = ip6 + 1;
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

/* ---- outer UDP checksum: bpf_loop over 64-byte chunks -------------------- */

#define XO_CSUM_CHUNK 64

struct xo_csum_loop {
	struct xdp_md *ctx;
	__u32 off;		/* next byte to sum, from data */
	__u32 end;		/* one past the last byte */
	__u32 sum;		/* running 32-bit one's complement sum */
	__s32 err;
};

static long xo_csum_step(__u32 idx, void *arg)
{
	struct xo_csum_loop *l = arg;
	__u8 buf[XO_CSUM_CHUNK + 4] = {};
	__u32 n;
	__s64 r;

	if (l->off >= l->end)
		return 1;
	n = l->end - l->off;
	if (n >= XO_CSUM_CHUNK) {
		if (bpf_xdp_load_bytes(l->ctx, l->off, buf, XO_CSUM_CHUNK))
			goto fail;
		r = bpf_csum_diff(NULL, 0, (void *)buf, XO_CSUM_CHUNK, l->sum);
		l->off += XO_CSUM_CHUNK;
	} else {
		/* odd tail: zero padding sums as nothing, chunks start even.
		 * The helper wants a size of 1..63 (0 < n < 64 here); 6.1
		 * learns no lower bound from a test of k against 0, so it is
		 * shown k - 1 <= 62, in 64 bits (clang checked a 32-bit k on
		 * a zero-extended copy and passed the unchecked register);
		 * the barrier keeps clang from folding that back into n or
		 * dropping the check as implied by n < 64
		 */
		__u64 k = (__u64)n - 1;

		barrier_var(k);
		if (k > XO_CSUM_CHUNK - 2)
			goto fail;
		k += 1;
		if (bpf_xdp_load_bytes(l->ctx, l->off, buf, k))
			goto fail;
		k = (k + 3) & 0x7c;
		r = bpf_csum_diff(NULL, 0, (void *)buf, k, l->sum);
		l->off = l->end;
	}
	if (r < 0)
		goto fail;
	l->sum = (__u32)r;
	return 0;
fail:
	l->err = -1;
	return 1;
}

static __always_inline __u16 xo_csum_fold(__u32 s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)s;
}

/* 1 when the UDP checksum over the pseudo header and [udp_off, udp_off +
 * udp_len) is right (or absent over IPv4), 0 when wrong, -1 on failure.
 */
static __always_inline int xo_gnv_udp_csum_ok(struct xdp_md *ctx,
					      const struct xo_gnv_outer *o,
					      __u32 udp_off, __u32 udp_len)
{
	struct {
		__u32 s[4], d[4];
		__be32 len;
		__u8 z[3];
		__u8 proto;
	} ph = {};
	struct xo_csum_loop l = {
		.ctx = ctx, .off = udp_off, .end = udp_off + udp_len,
	};
	__s64 r;

	if (!o->udp->check)
		return o->ipv6 ? 0 : 1;	/* zero = no checksum, IPv4 only */
	if (o->ipv6) {
		struct ipv6hdr *ip6 = o->l3;

		if ((void *)(ip6 + 1) > (void *)(long)ctx->data_end)
			return -1;
		__builtin_memcpy(ph.s, &ip6->saddr, 16);
		__builtin_memcpy(ph.d, &ip6->daddr, 16);
		ph.len = bpf_htonl(udp_len);
		ph.proto = IPPROTO_UDP;
		r = bpf_csum_diff(NULL, 0, (void *)&ph, sizeof(ph), 0);
	} else {
		/* IPv4 pseudo header: saddr, daddr, 0, proto, length (12 bytes) */
		struct iphdr *iph = o->l3;
		struct {
			__u32 s, d;
			__u8 z, proto;
			__be16 len;
		} p4 = { 0, 0, 0, IPPROTO_UDP, bpf_htons(udp_len) };

		if ((void *)(iph + 1) > (void *)(long)ctx->data_end)
			return -1;
		p4.s = iph->saddr;
		p4.d = iph->daddr;
		r = bpf_csum_diff(NULL, 0, (void *)&p4, sizeof(p4), 0);
	}
	if (r < 0)
		return -1;
	l.sum = (__u32)r;
	bpf_loop(65536 / XO_CSUM_CHUNK + 1, xo_csum_step, &l, 0);
	if (l.err || l.off != l.end)
		return -1;
	return xo_csum_fold(l.sum) == 0xffff;
}

#endif /* XOFFLOAD_GENEVE_H */
