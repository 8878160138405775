/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Geneve (RFC 8926) decapsulation at XDP: what xdp_geneve can make a frame
 * of, and the one adjust_head that strips the outer headers.
 */
#ifndef XOFFLOAD_GENEVE_DECAP_H
#define XOFFLOAD_GENEVE_DECAP_H

#include "geneve_parse.h"

/* What xo_gnv_decap can make a frame of: Ethernet, IPv4, IPv6. */
static __always_inline int xo_gnv_can_decap(__be16 proto)
{
	return proto == bpf_htons(XO_ETH_P_TEB) || proto == bpf_htons(ETH_P_IP) ||
	       proto == bpf_htons(ETH_P_IPV6);
}

/* Strips everything before o->inner; for an IP payload a 14-byte Ethernet
 * header with the outer MACs goes in front. Returns 0 or -1.
 */
static __always_inline int xo_gnv_decap(struct xdp_md *ctx, const struct xo_gnv_outer *o)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__be16 proto = o->gh->proto;
	int strip = o->inner - data;
	struct xo_macs macs;
	struct ethhdr *eth;

	if (proto == bpf_htons(XO_ETH_P_TEB)) {
		if (o->inner + sizeof(struct ethhdr) > data_end)
			return -1;
		return bpf_xdp_adjust_head(ctx, strip) ? -1 : 0;
	}
	if (data + XO_MAC_LEN > data_end || o->inner + 1 > data_end)
		return -1;
	macs = xo_macs_load(data);
	if (bpf_xdp_adjust_head(ctx, strip - (int)sizeof(struct ethhdr)))
		return -1;
	/* every packet pointer is stale after adjust_head: reload, recheck */
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	if ((void *)(eth + 1) > data_end)
		return -1;
	xo_macs_store(eth, macs);
	eth->h_proto = proto;
	return 0;
}

#endif /* XOFFLOAD_GENEVE_DECAP_H */
