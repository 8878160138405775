/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The one definition of every struct, enum and counter index shared by the
 * BPF programs and the C++ library. Fixed-width kernel types only, explicit
 * padding; the C++ side static_asserts sizes and offsets (abi_check.hpp).
 */
#ifndef XOFFLOAD_ABI_H
#define XOFFLOAD_ABI_H

#include <linux/types.h>

#define XO_ABI_VERSION 1

/* ---- VLAN --------------------------------------------------------------- */

#define XO_VLAN_MAX_DEPTH 2	/* tags parsed and produced, like DESIGN.md */
#define XO_VID_MIN 1
#define XO_VID_MAX 4094
#define XO_VID_SLOTS 4096	/* one vid table slot per 12-bit VID */

#define XO_ETH_P_8021Q 0x8100
#define XO_ETH_P_8021AD 0x88A8

/* Policy direction. XDP only ever sees ingress; TC has both. */
enum xo_dir {
	XO_DIR_INGRESS = 0,
	XO_DIR_EGRESS = 1,
	XO_DIR_MAX = 2,
};

/* Attach point, used to index counters so each hook has its own. */
enum xo_hook {
	XO_HOOK_XDP = 0,
	XO_HOOK_TC_INGRESS = 1,
	XO_HOOK_TC_EGRESS = 2,
	XO_HOOK_MAX = 3,
};

enum xo_vlan_action {
	XO_VLAN_ACT_NONE = 0,	/* default policy: tags untouched */
	XO_VLAN_ACT_POP = 1,
	XO_VLAN_ACT_PUSH = 2,
};

enum xo_vlan_flags {
	XO_VLAN_F_ALLOW = 1U << 0,	/* drop tagged frames whose outer VID is not allowed */
	XO_VLAN_F_REWRITE = 1U << 1,	/* translate the outer VID through the vid table */
};

/* One tag as it sits on the wire after the MAC addresses. */
struct xo_vlan_tag {
	__be16 tpid;
	__be16 tci;
};

/* Value of xo_vlan_cfg, indexed by enum xo_dir. */
struct xo_vlan_policy {
	__u32 abi_version;	/* XO_ABI_VERSION once written by userspace, 0 = default */
	__u32 action;		/* enum xo_vlan_action */
	__u32 flags;		/* enum xo_vlan_flags */
	__u8 pop_depth;		/* 1 or 2 */
	__u8 push_count;	/* 1 or 2 */
	__u8 pad[2];
	struct xo_vlan_tag push[XO_VLAN_MAX_DEPTH]; /* push[0] is outermost */
};

enum xo_vid_entry_flags {
	XO_VID_ALLOWED = 1U << 0,
};

/* Value of xo_vlan_vid, indexed by dir * XO_VID_SLOTS + vid. */
struct xo_vid_entry {
	__u16 flags;		/* enum xo_vid_entry_flags */
	__u16 rewrite_vid;	/* 0 = no translation, else the new VID */
};

/* Counter reasons. Every frame a program sees lands in exactly one of
 * PASSED, MODIFIED (then also in one or more of POPPED/PUSHED/REWRITTEN)
 * or a DROP_* reason.
 */
enum xo_vlan_counter {
	XO_VLAN_CNT_PASSED = 0,
	XO_VLAN_CNT_MODIFIED,
	XO_VLAN_CNT_POPPED,
	XO_VLAN_CNT_PUSHED,
	XO_VLAN_CNT_REWRITTEN,
	XO_VLAN_CNT_DROP_MALFORMED,
	XO_VLAN_CNT_DROP_NOT_ALLOWED,
	XO_VLAN_CNT_DROP_NO_HEADROOM,
	XO_VLAN_CNT_DROP_TOO_DEEP,
	XO_VLAN_CNT_MAX,
};

struct xo_counter {
	__u64 packets;
	__u64 bytes;
};

/* Value of the per-CPU xo_vlan_stats map, indexed by enum xo_hook: one map
 * lookup per frame, whatever it counts.
 */
struct xo_vlan_stats {
	struct xo_counter c[XO_VLAN_CNT_MAX];
};

/* ---- AF_XDP redirect (xdp_xsk) ------------------------------------------
 * xdp_xsk redirects frames arriving on rx queue q to the socket in slot q of
 * its XSKMAP, optionally only those matching a filter. Every frame it sees
 * lands in exactly one of: XO_XSK_CNT_REDIRECTED, XO_XSK_CNT_NO_SOCKET (no
 * socket on that queue: passed to the stack), XO_XSK_CNT_FILTERED (did not
 * match: passed), XO_XSK_CNT_MALFORMED (truncated headers: passed).
 */
#define XO_XSK_MAX_QUEUES 64	/* XSKMAP slots = rx queue indexes */

enum xo_xsk_filter_flags {
	XO_XSK_F_ETHERTYPE = 1U << 0,	/* innermost ethertype == ethertype */
	XO_XSK_F_VLAN = 1U << 1,	/* outer VID == vid (0: frame must be untagged) */
	XO_XSK_F_UDP_DPORT = 1U << 2,	/* IPv4/IPv6 UDP with this destination port */
};

/* Value of xo_xsk_cfg[0]; all zero = redirect everything. */
struct xo_xsk_filter {
	__u32 abi_version;	/* XO_ABI_VERSION once written by userspace */
	__u32 flags;		/* enum xo_xsk_filter_flags */
	__be16 ethertype;
	__u16 vid;		/* host order, 0..4094 */
	__be16 udp_dport;
	__u16 pad;
};

enum xo_xsk_counter {
	XO_XSK_CNT_REDIRECTED = 0,
	XO_XSK_CNT_NO_SOCKET,
	XO_XSK_CNT_FILTERED,
	XO_XSK_CNT_MALFORMED,
	XO_XSK_CNT_MAX,
};
/* xo_xsk_stats: per-CPU array of struct xo_counter indexed by enum xo_xsk_counter. */

#endif /* XOFFLOAD_ABI_H */
