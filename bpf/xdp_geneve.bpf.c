// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* XDP Geneve (RFC 8926): frames to a registered UDP port are classified by
 * VNI and options, then passed, dropped, decapsulated or steered to an
 * AF_XDP socket or a CPU by a hash of the inner flow (software Geneve RSS).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <xdp/xdp_helpers.h>
#include "xoffload/geneve.h"

/* 1 when an option in [opts_off, opts_off + optlen) from the frame's start
 * is critical and of a class not declared known, 2 when there are more
 * options than the walk reads (whatever the header's C bit says); 0 when
 * neither; -1 when an option runs past
 * optlen or the packet. For frames with two or more critical classes the
 * per-CPU cache does not answer for: the fast walk stopped at the second,
 * this one checks every option and looks each class up. A global function,
 * so the verifier checks it once on its own instead of on every path of
 * its caller.
 */
__noinline int xo_gnv_crit_unknown(struct xdp_md *ctx, __u32 opts_off, __u32 optlen)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 zero = 0, miss = 0;
	struct xo_gnv_cache *ca;
	__u64 off = 0;

	ca = bpf_map_lookup_elem(&xo_gnv_cache, &zero);
	if (!ctx || !ca || opts_off > 511 || optlen > 252)
		return -1;
	/* the mask is what the verifier tracks; the barrier keeps clang from
	 * dropping it as implied by the check above
	 */
	barrier_var(opts_off);
	if (xo_gnv_walk_opts(data + (opts_off & 0x1ff), data_end, optlen, ca, 1, &off,
			     &miss) != XO_GNV_OK)
		return -1;
	/* options not walked may be unknown critical ones, C bit or not */
	if (off < optlen)
		return 2;
	return miss;
}

/* @frags: the frame may span several buffers (xdp_geneve_mb): it is
 * counted and its UDP length checked whole, at the cost of a helper call.
 * The outer headers, Geneve options and inner headers must be in the first
 * buffer (drivers split after the headers); the checksum walk reads every
 * buffer.
 */
static __always_inline int xo_gnv_xdp(struct xdp_md *ctx, int frags)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 bytes = frags ? bpf_xdp_get_buff_len(ctx) : data_end - data;
	struct xo_cursor c = { .pos = data, .end = data_end };
	struct xo_gnv_outer o = {};
	struct xo_gnv_stats *st, *vst;
	struct xo_gnv_rule rule = { XO_GNV_ACT_PASS, 1, XO_GNV_SLOT_DEFAULT };
	struct xo_gnv_cache *ca;
	struct xo_gnv_cfg *cfg;
	__u32 zero = 0, key, action, slot, queues, reason = XO_GNV_CNT_PASSED;
	__u64 udp_off;
	int r, verdict = XDP_PASS;

	st = bpf_map_lookup_elem(&xo_gnv_stats, &zero);
	cfg = bpf_map_lookup_elem(&xo_gnv_cfg, &zero);
	ca = bpf_map_lookup_elem(&xo_gnv_cache, &zero);
	if (!cfg || !ca)
		return XDP_PASS;	/* single-slot arrays: cannot happen */
	xo_gnv_cache_sync(ca, cfg);
	if (xo_gnv_parse_outer(&c, &o, ca) != XO_GNV_OK) {
		xo_gnv_count(st, XO_GNV_CNT_NOT_GENEVE, bytes);
		return XDP_PASS;
	}
	if (frags) {
		/* the UDP header's offset as a number: clang would otherwise
		 * add the (unbounded) frame length to a packet pointer, which
		 * the verifier refuses
		 */
		udp_off = (void *)o.udp - data;
		barrier_var(udp_off);
		r = xo_gnv_parse_geneve(&c, &o, ca, 1, bytes - udp_off);
	} else {
		r = xo_gnv_parse_geneve(&c, &o, ca, 0, 0);
	}
	if (r == XO_GNV_CRIT_SLOW) {
		void *opts = (void *)(o.gh + 1);

		/* xo_gnv_crit_unknown changes no packet data: o stays valid */
		r = xo_gnv_crit_unknown(ctx, (__u32)(opts - data), (__u32)(o.inner - opts));
		r = r == 0 ? XO_GNV_OK : r == 1 ? XO_GNV_CRIT_UNKNOWN :
		    r == 2 ? XO_GNV_OPTS_UNEXAMINED : XO_GNV_MALFORMED;
	}
	if (r != XO_GNV_OK) {
		reason = r == XO_GNV_CRIT_UNKNOWN ? XO_GNV_CNT_DROP_CRIT_OPT :
			 r == XO_GNV_OPTS_UNEXAMINED ? XO_GNV_CNT_DROP_OPTS_UNEXAMINED :
			 XO_GNV_CNT_DROP_MALFORMED;
		xo_gnv_count(st, reason, bytes);
		/* the VNI is known once the base header is there: count it too */
		if (reason != XO_GNV_CNT_DROP_MALFORMED) {
			struct xo_gnv_hdr *gh = c.pos;

			if ((void *)(gh + 1) <= data_end) {
				key = xo_gnv_rule_of(xo_gnv_vni(gh), ca, &rule) ?
				      rule.slot : XO_GNV_SLOT_DEFAULT;
				xo_gnv_count(bpf_map_lookup_elem(&xo_gnv_vstats, &key),
					     reason, bytes);
			}
		}
		return XDP_DROP;
	}

	key = xo_gnv_rule_of(xo_gnv_vni(o.gh), ca, &rule) ? rule.slot : XO_GNV_SLOT_DEFAULT;
	vst = bpf_map_lookup_elem(&xo_gnv_vstats, &key);
	action = rule.action;
	queues = rule.queues;

	if (cfg && (cfg->flags & XO_GNV_F_VERIFY_CSUM)) {
		__u32 udp_off = (void *)o.udp - data;

		if (xo_udp_csum_ok(ctx, o.l3, o.ipv6, o.udp, udp_off & 0xffff,
				   bpf_ntohs(o.udp->len)) != 1) {
			reason = XO_GNV_CNT_BAD_CSUM;
			verdict = XDP_DROP;
			goto count;
		}
		/* bpf_loop may have let the verifier forget o's packet ranges */
		data = (void *)(long)ctx->data;
		data_end = (void *)(long)ctx->data_end;
	}
	/* OAM frames are control traffic for the stack: never steered */
	if ((o.gh->flags & XO_GNV_F_OAM) && action != XO_GNV_ACT_DROP)
		action = XO_GNV_ACT_PASS;

	switch (action) {
	case XO_GNV_ACT_DROP:
		reason = XO_GNV_CNT_DROP_RULE;
		verdict = XDP_DROP;
		break;
	case XO_GNV_ACT_DECAP:
		if (!xo_gnv_can_decap(o.gh->proto)) {
			reason = XO_GNV_CNT_DROP_CANNOT_DECAP;
			verdict = XDP_DROP;
		} else if (xo_gnv_decap(ctx, &o)) {
			reason = XO_GNV_CNT_DECAP_FAILED;
			verdict = XDP_DROP;
		} else if (cfg->flags & XO_GNV_F_DECAP_CPUMAP) {
			/* a new skb on this CPU, CHECKSUM_NONE (see abi.h) */
			slot = bpf_get_smp_processor_id() % XO_GNV_MAX_QUEUES;
			if (bpf_redirect_map(&xo_gnv_cpus, slot, XDP_PASS) == XDP_REDIRECT) {
				reason = XO_GNV_CNT_DECAPPED;
				verdict = XDP_REDIRECT;
			} else {
				reason = XO_GNV_CNT_NO_TARGET;
			}
		} else {
			reason = XO_GNV_CNT_DECAPPED;
		}
		break;
	case XO_GNV_ACT_XSK:
	case XO_GNV_ACT_CPU:
		if (queues < 1 || queues > XO_GNV_MAX_QUEUES)
			queues = 1;
		slot = xo_gnv_inner_hash(o.inner, data_end, o.gh->proto);
		/* a socket takes frames of its own queue only: each rx queue
		 * has its row of sockets; any queue may feed any CPU. One call
		 * per map: the verifier then calls that map's own redirect
		 * (xsk_map_redirect, cpu_map_redirect) directly; a call shared
		 * by both maps goes through bpf_xdp_redirect_map's indirect
		 * call, a retpoline where Spectre v2 is mitigated (19 ns a
		 * frame measured here). The barrier after one of the calls
		 * keeps clang from merging their identical tails into one.
		 */
		if (action == XO_GNV_ACT_XSK) {
			r = bpf_redirect_map(&xo_gnv_xsks,
					     xo_gnv_xsk_slot(ctx->rx_queue_index, slot, queues), XDP_PASS);
			barrier_var(r);
		} else {
			r = bpf_redirect_map(&xo_gnv_cpus, slot % queues, XDP_PASS);
		}
		if (r == XDP_REDIRECT) {
			reason = XO_GNV_CNT_REDIRECTED;
			verdict = XDP_REDIRECT;
		} else {
			reason = XO_GNV_CNT_NO_TARGET;	/* nobody to steer to: the stack gets it */
		}
		break;
	default:
		break;
	}
count:
	/* one reason per frame that found its rule, on the interface and the VNI */
	xo_gnv_count(st, reason, bytes);
	xo_gnv_count(vst, reason, bytes);
	return verdict;
}

#ifndef XO_COMPOSED /* xdp_offload.bpf.c: the stage alone, its entries there */
SEC("xdp")
int xdp_geneve(struct xdp_md *ctx)
{
	return xo_gnv_xdp(ctx, 0);
}

/* The same for multi-buffer frames (an MTU above one page's worth): the
 * entry to load on such an interface, by offload-tool or by xdp-loader
 * (--prog-name xdp_geneve_mb). Load one entry per object: the kernel ties
 * the CPUMAP to the first program using it, frags or not.
 */
SEC("xdp.frags")
int xdp_geneve_mb(struct xdp_md *ctx)
{
	return xo_gnv_xdp(ctx, 1);
}

/* libxdp dispatcher: after xdp_vlan (20) so outer tags it pops are gone,
 * before xdp_xsk (30); the next program runs on XDP_PASS.
 */
struct {
	__uint(priority, 25);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xdp_geneve);

struct {
	__uint(priority, 25);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xdp_geneve_mb);

char _license[] SEC("license") = "Dual BSD/GPL";
#endif /* XO_COMPOSED */
