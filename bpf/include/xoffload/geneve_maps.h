/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Geneve (RFC 8926) maps of xdp_geneve (the port registry, VNI rules, known
 * option classes, redirect targets, counters) and the per-CPU lookup caches
 * in front of the first three (one entry each, then the direct-mapped port
 * and VNI caches).
 */
#ifndef XOFFLOAD_GENEVE_MAPS_H
#define XOFFLOAD_GENEVE_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "abi.h"

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
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XO_GNV_VNIBITS_WORDS);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xo_gnv_vnibits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xo_gnv_cache);
} xo_gnv_cache SEC(".maps");	/* not pinned: private to each loaded program */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XO_GNV_PCACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct xo_gnv_pcache_entry);
} xo_gnv_pcache SEC(".maps");	/* not pinned (abi.h) */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XO_GNV_VCACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct xo_gnv_vcache_entry);
} xo_gnv_vcache SEC(".maps");	/* not pinned (abi.h) */

/* Empties the per-CPU cache when the maps changed since it was filled, and
 * reads the default rule of the new gen (xo_gnv_rules[XO_GNV_VNI_DEFAULT],
 * pass when absent): a VNI without a rule then costs one hash lookup, not
 * two. Userspace writes the maps before it bumps gen, so what is read here
 * is that gen's or newer.
 */
static __always_inline void xo_gnv_cache_sync(struct xo_gnv_cache *ca,
					       const struct xo_gnv_cfg *cfg)
{
	__u32 gen = cfg->gen;
	__u64 tag = 1ULL << 32 | gen;
	__u32 dflt = XO_GNV_VNI_DEFAULT;
	struct xo_gnv_rule *r;

	if (ca->gen_tag == tag)
		return;
	ca->gen_tag = tag;
	ca->port = XO_GNV_CACHE_NONE;
	ca->miss_port = XO_GNV_CACHE_NONE;
	ca->vni = XO_GNV_CACHE_NONE;
	ca->cls = XO_GNV_CACHE_NONE;
	ca->bits_ok = cfg->vnibits_gen == gen;
	r = bpf_map_lookup_elem(&xo_gnv_rules, &dflt);
	if (r) {
		ca->dflt = *r;
	} else {
		ca->dflt.action = XO_GNV_ACT_PASS;
		ca->dflt.queues = 1;
		ca->dflt.slot = XO_GNV_SLOT_DEFAULT;
	}
}

/* Is @port registered? The per-CPU cache answers for the last hit and the
 * last miss, the port cache for the ports seen before; the registry for
 * the rest.
 */
static __always_inline int xo_gnv_port_ok(__u32 port, struct xo_gnv_cache *ca)
{
	struct xo_gnv_pcache_entry *pe;
	__u32 idx;
	int ok;

	if (ca->port == port)
		return 1;
	if (ca->miss_port == port)
		return 0;
	idx = xo_gnv_cache_slot(port, 6) & (XO_GNV_PCACHE_SLOTS - 1);
	pe = bpf_map_lookup_elem(&xo_gnv_pcache, &idx);
	if (pe && pe->tag == ca->gen_tag && pe->port == port) {
		ok = pe->registered;
	} else {
		ok = bpf_map_lookup_elem(&xo_gnv_ports, &port) != NULL;
		if (pe) {
			pe->tag = ca->gen_tag;
			pe->port = port;
			pe->registered = ok;
		}
	}
	if (ok)
		ca->port = port;
	else
		ca->miss_port = port;
	return ok;
}

/* The rule of @vni copied into @out; when the VNI has none (returns 0),
 * the default rule (xo_gnv_rules[XO_GNV_VNI_DEFAULT], pass when absent,
 * as xo_gnv_cache_sync read it for this gen). Each is one map value,
 * replaced whole by userspace. The per-CPU cache answers for the last VNI,
 * the VNI bitmap (when in step) for VNIs without a rule, the VNI cache for
 * the rest seen before.
 */
static __always_inline int xo_gnv_rule_of(__u32 vni, struct xo_gnv_cache *ca,
					  struct xo_gnv_rule *out)
{
	struct xo_gnv_vcache_entry *ve;
	struct xo_gnv_rule *r;
	__u32 idx;

	if (ca->vni == vni) {
		*out = ca->rule;
		return ca->has_rule;
	}
	if (ca->bits_ok) {
		__u32 bit = xo_gnv_vnibit(vni), w = bit >> 6;
		__u64 *bits = bpf_map_lookup_elem(&xo_gnv_vnibits, &w);

		if (bits && !((*bits >> (bit & 63)) & 1)) {
			ca->vni = vni;
			ca->has_rule = 0;
			ca->rule = ca->dflt;
			*out = ca->dflt;
			return 0;
		}
	}
	idx = xo_gnv_cache_slot(vni, 11) & (XO_GNV_VCACHE_SLOTS - 1);
	ve = bpf_map_lookup_elem(&xo_gnv_vcache, &idx);
	ca->vni = vni;
	if (ve && ve->tag == ca->gen_tag && ve->vni == vni) {
		ca->rule = ve->rule;
		ca->has_rule = ve->has_rule;
		*out = ca->rule;
		return ca->has_rule;
	}
	r = bpf_map_lookup_elem(&xo_gnv_rules, &vni);
	ca->has_rule = r != NULL;
	ca->rule = r ? *r : ca->dflt;
	if (ve) {
		ve->tag = ca->gen_tag;
		ve->vni = vni;
		ve->has_rule = ca->has_rule;
		ve->rule = ca->rule;
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

#endif /* XOFFLOAD_GENEVE_MAPS_H */
