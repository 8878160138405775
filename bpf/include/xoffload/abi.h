/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The one definition of every struct, enum and counter index shared by the
 * BPF programs and the C++ library. Fixed-width kernel types only, explicit
 * padding; the C++ side static_asserts sizes and offsets (abi_check.hpp).
 */
#ifndef XOFFLOAD_ABI_H
#define XOFFLOAD_ABI_H

#include <linux/types.h>

#define XO_ABI_VERSION 5

/* ---- VLAN --------------------------------------------------------------- */

#define XO_VLAN_MAX_DEPTH 2	/* tags pushed, popped and told apart: 802.1Q and QinQ */
#define XO_VLAN_MORE (XO_VLAN_MAX_DEPTH + 1)	/* op[] index of frames with more tags */
#define XO_VID_MIN 1
#define XO_VID_MAX 4094
#define XO_VID_SLOTS 4096	/* one vid table slot per 12-bit VID */
#define XO_VLAN_BANKS 2		/* configurations per direction: the active one and the next */

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

/* What a policy does to the tags of a frame the allow-list let through,
 * by how many tags the frame has: xo_vlan_policy.op[depth], depth 0, 1, 2
 * or XO_VLAN_MORE (3 or more). Pops take the outermost tags, whatever lies
 * beneath; only a push can make a frame too deep.
 */
enum xo_vlan_op {
	XO_VLAN_OP_KEEP = 0,	/* tags untouched (the zero policy) */
	XO_VLAN_OP_POP1,
	XO_VLAN_OP_POP2,
	XO_VLAN_OP_PUSH1,	/* push[0] */
	XO_VLAN_OP_PUSH2,	/* push[0], push[1] */
	XO_VLAN_OP_TOO_DEEP,	/* a push would leave more than XO_VLAN_MAX_DEPTH tags: drop */
};

/* One bank of a direction's configuration (see struct xo_vlan_banks).
 * action, pop_depth and push_count are the policy in the user's words; the
 * programs act on op[], which xo_vlan_policy_compile() derives from them.
 */
struct xo_vlan_policy {
	__u32 abi_version;	/* XO_ABI_VERSION once written by userspace, 0 = default */
	__u32 action;		/* enum xo_vlan_action */
	__u32 flags;		/* enum xo_vlan_flags */
	__u8 pop_depth;		/* 1 or 2 */
	__u8 push_count;	/* 1 or 2 */
	__u8 outer_only;	/* derived: the outer tag alone decides (see below) */
	__u8 bank;		/* the bank this policy sits in: its VID table is
				 * xo_vlan_vid[xo_vid_key(bank, dir, vid)] */
	struct xo_vlan_tag push[XO_VLAN_MAX_DEPTH]; /* push[0] is outermost */
	__u8 op[XO_VLAN_MORE + 1]; /* enum xo_vlan_op by tag count (derived) */
};

/* Value of xo_vlan_cfg, indexed by enum xo_dir. A direction's whole
 * configuration (policy and VID table) exists twice; a frame reads
 * `active` once and then only that bank, so each frame sees one whole
 * configuration. Userspace writes the other bank (policy and all 4096 VID
 * slots) and then flips `active`, the only byte that changes in that last
 * update: a reconfiguration is one switch, never a mix of old and new.
 * All zero (the default policy, bank 0) until userspace writes it.
 */
struct xo_vlan_banks {
	__u32 active;		/* 0 or 1: the bank the programs use */
	__u32 pad;
	struct xo_vlan_policy bank[XO_VLAN_BANKS];
};

/* Key of @vid's slot in xo_vlan_vid for direction @dir in @bank. */
static inline __u32 xo_vid_key(__u32 bank, __u32 dir, __u32 vid)
{
	return ((bank & 1) * XO_DIR_MAX + dir) * XO_VID_SLOTS + vid;
}

/* The one definition of pop and push: what @action with @pop_depth or
 * @push_count does to a frame with @depth tags (0..XO_VLAN_MORE, the last
 * standing for 3 or more).
 */
static inline __u8 xo_vlan_depth_op(__u32 action, __u32 pop_depth, __u32 push_count,
				    __u32 depth)
{
	if (action == XO_VLAN_ACT_POP) {
		__u32 n = pop_depth < depth ? pop_depth : depth;

		return n == 0 ? XO_VLAN_OP_KEEP : n == 1 ? XO_VLAN_OP_POP1 : XO_VLAN_OP_POP2;
	}
	if (action == XO_VLAN_ACT_PUSH && push_count) {
		if (depth + push_count > XO_VLAN_MAX_DEPTH)
			return XO_VLAN_OP_TOO_DEEP;
		return push_count == 1 ? XO_VLAN_OP_PUSH1 : XO_VLAN_OP_PUSH2;
	}
	return XO_VLAN_OP_KEEP;
}

/* Whether @op suits any tagged frame, whatever its tag count (keep, pop the
 * outer tag, too deep), unlike a pop of two or a push.
 */
static inline int xo_vlan_op_count_free(__u32 op)
{
	return op != XO_VLAN_OP_POP2 && op != XO_VLAN_OP_PUSH1 && op != XO_VLAN_OP_PUSH2;
}

/* Fills @p->op and @p->outer_only from its action: whoever writes a policy
 * calls this last. outer_only: every tagged frame gets the same op, and one
 * that needs no tag count, so xdp_vlan need not read past the outer tag (a
 * pop-1 or the default policy).
 */
static inline void xo_vlan_policy_compile(struct xo_vlan_policy *p)
{
	__u32 d;
	__u8 op1;

	for (d = 0; d < sizeof(p->op); d++)
		p->op[d] = xo_vlan_depth_op(p->action, p->pop_depth, p->push_count, d);
	op1 = p->op[1];
	p->outer_only = op1 == p->op[2] && op1 == p->op[XO_VLAN_MORE] &&
			xo_vlan_op_count_free(op1);
}

enum xo_vid_entry_flags {
	XO_VID_ALLOWED = 1U << 0,
};

/* Value of xo_vlan_vid, indexed by xo_vid_key(bank, dir, vid). */
struct xo_vid_entry {
	__u16 flags;		/* enum xo_vid_entry_flags */
	__u16 rewrite_vid;	/* 0 = no translation, else the new VID */
};

/* Counter reasons. Every frame a program sees lands in exactly one of them,
 * so a frame costs one counter update: PASSED, one of the four outcomes of a
 * change, or a DROP_* reason. Userspace shows what people ask for, derived:
 * modified = POPPED + PUSHED + REWRITTEN + REWRITTEN_PUSHED, pushed = PUSHED
 * + REWRITTEN_PUSHED, rewritten = REWRITTEN + REWRITTEN_PUSHED.
 */
enum xo_vlan_counter {
	XO_VLAN_CNT_PASSED = 0,
	XO_VLAN_CNT_POPPED,		/* tags removed (a rewrite before a pop is moot) */
	XO_VLAN_CNT_PUSHED,		/* tags added, no VID translated */
	XO_VLAN_CNT_REWRITTEN,		/* outer VID translated, no tag added */
	XO_VLAN_CNT_REWRITTEN_PUSHED,	/* outer VID translated, then tags added */
	XO_VLAN_CNT_DROP_MALFORMED,
	XO_VLAN_CNT_DROP_NOT_ALLOWED,
	XO_VLAN_CNT_DROP_NO_HEADROOM,
	XO_VLAN_CNT_DROP_TOO_DEEP,
	XO_VLAN_CNT_DROP_TAG_IN_META,	/* the outer tag is in metadata (the device
					 * stripped it) and the policy would pop,
					 * push or rewrite: XDP cannot (tc_vlan can) */
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
 * match: passed), XO_XSK_CNT_MALFORMED (a header the filter reads is
 * truncated or malformed, see xdp_xsk.bpf.c: passed).
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

/* ---- Geneve (xdp_geneve, RFC 8926) ----------------------------------------
 * xo_gnv_ports: HASH, key __u32 UDP port (host order) -> struct xo_gnv_port.
 *   The reference count is kept by userspace (under flock of the pin dir),
 *   like udp_tunnel_nic: two adds need two deletes.
 * xo_gnv_rules: HASH, key __u32 VNI -> struct xo_gnv_rule; the key
 *   XO_GNV_VNI_DEFAULT holds the default rule (VNIs without one; absent:
 *   pass). A hash update replaces the whole value at once, so a frame sees
 *   a rule old or new, never half of each.
 * xo_gnv_cfg:   ARRAY[1] struct xo_gnv_cfg (flags, generation).
 * xo_gnv_optcls: HASH, key __u32 option class (host order) -> __u32 (1):
 *   classes declared known; a critical option of any other class drops.
 * xo_gnv_xsks:  XSKMAP[XO_GNV_XSK_SLOTS]: for the xsk action, one row of
 *   XO_GNV_MAX_QUEUES slots per rx queue, index xo_gnv_xsk_slot(rx queue,
 *   hash, rule.queues): an AF_XDP socket takes only frames of the queue it
 *   is bound to (the kernel refuses, and drops, a frame redirected to a
 *   socket of another queue), so each queue has its own sockets and a
 *   queue without them finds its row empty (no-target: passed).
 * xo_gnv_cpus:  CPUMAP[XO_GNV_MAX_QUEUES]: slot = xo_gnv_flow_hash() %
 *   rule.queues for the cpu action (any queue may redirect to any CPU).
 * xo_gnv_stats: PERCPU_ARRAY[1] struct xo_gnv_stats, every frame.
 * xo_gnv_vstats: PERCPU_ARRAY[XO_GNV_MAX_RULES + 1] struct xo_gnv_stats,
 *   indexed by the rule's counter slot: slot 0 is the default rule's (VNIs
 *   without a rule), userspace gives each VNI rule a free slot 1..MAX_RULES
 *   and zeroes it. An array, not a hash keyed by VNI: one inlined lookup per
 *   frame instead of a second hash walk, and bounded whatever arrives.
 */
#define XO_GNV_MAX_PORTS 64
#define XO_GNV_MAX_RULES 1024
#define XO_GNV_MAX_CLASSES 256
#define XO_GNV_MAX_QUEUES 64		/* xsk/cpu slots of a rule (per rx queue for xsk) */
#define XO_GNV_MAX_RXQ 64		/* rx queues xdp_geneve steers to AF_XDP sockets */
#define XO_GNV_XSK_SLOTS (XO_GNV_MAX_RXQ * XO_GNV_MAX_QUEUES)	/* xo_gnv_xsks entries */
#define XO_GNV_VNI_MAX 0xffffffU
#define XO_GNV_VNI_DEFAULT 0xffffffffU	/* "VNI" (xo_gnv_rules key) of the default rule */
#define XO_GNV_SLOT_DEFAULT 0		/* xo_gnv_vstats slot of the default rule */
#define XO_GNV_MAX_OPTS 63		/* TLV options walked per packet: every one
					 * opt_len (6 bits of 4-byte words) can hold */
#define XO_GNV_PORT_DEFAULT 6081	/* IANA */

#define XO_ETH_P_TEB 0x6558		/* Transparent Ethernet Bridging */

/* Geneve base header as on the wire (8 bytes). */
struct xo_gnv_hdr {
	__u8 ver_optlen;	/* version (2 bits) | option length in 4-byte words (6) */
	__u8 flags;		/* O (0x80) | C (0x40) | reserved */
	__be16 proto;
	__u8 vni[3];
	__u8 rsvd;
};

/* One TLV option header (4 bytes) followed by length * 4 bytes of data. */
struct xo_gnv_opt {
	__be16 opt_class;
	__u8 type;		/* C bit (0x80) = critical */
	__u8 len;		/* low 5 bits: data length in 4-byte words */
};

#define XO_GNV_F_OAM 0x80
#define XO_GNV_F_CRIT 0x40
#define XO_GNV_OPT_CRIT 0x80

enum xo_gnv_action {
	XO_GNV_ACT_PASS = 0,	/* untouched to the stack */
	XO_GNV_ACT_DROP = 1,
	XO_GNV_ACT_DECAP = 2,	/* inner frame to the stack */
	XO_GNV_ACT_XSK = 3,	/* redirect to xo_gnv_xsks[xo_gnv_xsk_slot(rxq, hash, queues)] */
	XO_GNV_ACT_CPU = 4,	/* redirect to xo_gnv_cpus[hash % queues] */
	XO_GNV_ACT_MAX = 5,
};

struct xo_gnv_port {
	__u32 refcnt;
	__u32 flags;		/* enum xo_gnv_port_flags, userspace only (the
				 * former padding: 0 in older pins, as meant) */
};

/* What holds a registered port besides `geneve port add`: userspace reads
 * and writes these under the same flock as refcnt; the programs ignore them.
 */
enum xo_gnv_port_flags {
	XO_GNV_PORT_F_NIC = 1U << 0,	/* `port add --nic` made the geneve device
					 * xo-gnv-<port>; it goes with the last reference */
	XO_GNV_PORT_F_SYNC = 1U << 1,	/* `port sync` holds one reference for a
					 * kernel Geneve device on the port */
};

struct xo_gnv_rule {
	__u32 action;		/* enum xo_gnv_action */
	__u16 queues;		/* xsk: slots per rx queue, cpu: slots; 1..XO_GNV_MAX_QUEUES */
	__u16 slot;		/* xo_gnv_vstats index, 1..XO_GNV_MAX_RULES (default: 0) */
};

enum xo_gnv_cfg_flags {
	XO_GNV_F_VERIFY_CSUM = 1U << 0,	/* verify the outer UDP checksum */
	/* decap: hand the inner frame to the stack through the CPUMAP entry of
	 * this CPU (xo_gnv_cpus[cpu % XO_GNV_MAX_QUEUES]) instead of XDP_PASS.
	 * The CPUMAP builds a new skb, CHECKSUM_NONE: the stack verifies the
	 * inner checksum, which a driver's verdict on the outer UDP checksum
	 * (CHECKSUM_UNNECESSARY, csum_level 0) would otherwise stand for. No
	 * entry there: passed, counted no-target.
	 */
	XO_GNV_F_DECAP_CPUMAP = 1U << 1,
	XO_GNV_F_DECAP_CHOSEN = 1U << 2,	/* userspace only: the user chose
						 * DECAP_CPUMAP on or off */
};

struct xo_gnv_cfg {
	__u32 abi_version;	/* XO_ABI_VERSION once written by userspace */
	__u32 flags;		/* enum xo_gnv_cfg_flags */
	struct xo_gnv_rule unused;	/* the default rule until ABI 3; now in
					 * xo_gnv_rules[XO_GNV_VNI_DEFAULT] */
	__u32 gen;		/* changed by userspace after every change of
				 * xo_gnv_ports, xo_gnv_rules or xo_gnv_optcls:
				 * invalidates the per-CPU lookup cache
				 * (xo_gnv_cache). The next value is
				 * xo_gnv_gen_next(): one bit changes, so a
				 * frame reading it during the update (a byte
				 * at a time) sees the old value or the new */
	__u32 vnibits_gen;	/* the gen whose xo_gnv_vnibits userspace keeps
				 * in step with xo_gnv_rules (the former pad: 0
				 * in older pins); any other value: the programs
				 * do not read the bitmap */
};

/* The generation after @gen: the Gray code of its successor, which
 * differs from @gen's in one bit.
 */
static inline __u32 xo_gnv_gen_next(__u32 gen)
{
	__u32 n = gen, mask;

	/* Gray code back to its index */
	for (mask = n >> 1; mask; mask >>= 1)
		n ^= mask;
	n++;
	return n ^ (n >> 1);
}

/* Value of the per-CPU xo_gnv_cache[0]: the last registered and the last
 * unregistered UDP port, the last VNI's rule and the last known option
 * class this CPU looked up, all valid for xo_gnv_cfg.gen == gen. A frame
 * that finds another gen empties the entries (XO_GNV_CACHE_NONE, which no
 * port, VNI or class can equal) before anything else, so every check is one
 * compare. Saves the hash lookups for a steady flow of one port, VNI and
 * option class; userspace writes the map first and bumps gen after, so a
 * stale entry can only ever carry an old gen.
 */
#define XO_GNV_CACHE_NONE 0xffffffffu

struct xo_gnv_cache {
	__u64 gen_tag;		/* 1 << 32 | the xo_gnv_cfg.gen the entries belong
				 * to; 0 (the map's initial value): never filled */
	__u32 port;		/* last registered port seen */
	__u32 miss_port;	/* last UDP port found not registered */
	__u32 vni;		/* last VNI looked up; rule/has_rule are its */
	struct xo_gnv_rule rule;
	__u32 has_rule;		/* 0: the VNI had no rule (default applies) */
	__u32 cls;		/* last option class found known */
	__u32 bits_ok;		/* xo_gnv_vnibits is in step for gen */
	struct xo_gnv_rule dflt;	/* the default rule of gen (pass when
					 * absent), read when gen changed */
};

/* Behind xo_gnv_cache's single entries, two direct-mapped per-CPU caches
 * (not pinned, private to each loaded program) answer for many ports and
 * VNIs in turn, as under many tunnels: xo_gnv_pcache[XO_GNV_PCACHE_SLOTS]
 * holds ports found registered or not, xo_gnv_vcache[XO_GNV_VCACHE_SLOTS]
 * VNIs' rules, each entry at xo_gnv_cache_slot() of its key and valid while
 * its tag equals xo_gnv_cache.gen_tag (so a gen bump empties them all at
 * once; a zeroed entry, tag 0, is never valid). Two keys of one slot evict
 * each other; a miss costs the hash lookup it saves otherwise.
 */
#define XO_GNV_PCACHE_SLOTS 64
#define XO_GNV_VCACHE_SLOTS 2048

/* xo_gnv_vnibits: ARRAY[XO_GNV_VNIBITS_WORDS] __u64, a hashed bitmap of
 * the VNIs that have a rule: bit xo_gnv_vnibit(vni) (word bit / 64, bit
 * bit % 64) is set for every VNI in xo_gnv_rules, so a VNI whose bit is
 * clear has none and takes the default rule after one inlined array read,
 * whatever the VNI caches hold; a set bit (a rule, or another VNI's bit:
 * 1,024 rules in 65,536 bits, under 2% of the others) takes the caches and
 * the hash lookup as before. Userspace sets a VNI's bit before it writes
 * the rule and clears it after the delete, and says in
 * xo_gnv_cfg.vnibits_gen which gen it kept the bitmap in step for: pins an
 * older xoffload wrote, or a rule it changed since, leave the two apart
 * and the programs then never read the bitmap.
 */
#define XO_GNV_VNIBITS_LOG2 16
#define XO_GNV_VNIBITS_WORDS (1U << (XO_GNV_VNIBITS_LOG2 - 6))

struct xo_gnv_pcache_entry {
	__u64 tag;		/* xo_gnv_cache.gen_tag when filled */
	__u32 port;
	__u32 registered;	/* 1: in xo_gnv_ports */
};

struct xo_gnv_vcache_entry {
	__u64 tag;		/* xo_gnv_cache.gen_tag when filled */
	__u32 vni;
	__u32 has_rule;		/* 0: no rule, rule is the default's */
	struct xo_gnv_rule rule;
};

/* Slot of @key in a direct-mapped cache of 2^@bits slots (Fibonacci hash:
 * consecutive ports and VNIs spread over the slots).
 */
static inline __u32 xo_gnv_cache_slot(__u32 key, __u32 bits)
{
	return (key * 2654435761u) >> (32 - bits);
}

static inline __u32 xo_gnv_vnibit(__u32 vni)
{
	return xo_gnv_cache_slot(vni, XO_GNV_VNIBITS_LOG2);
}

/* Every frame xdp_geneve sees lands in exactly one reason, so a frame costs
 * one update of the interface's counters (and one of its VNI's). Userspace
 * derives what it shows: matched (the frame parsed and found its rule or the
 * default) = PASSED + NO_TARGET + DROP_RULE + BAD_CSUM + DECAPPED +
 * DECAP_FAILED + DROP_CANNOT_DECAP + REDIRECTED; passed includes NO_TARGET;
 * dropped-malformed includes DECAP_FAILED.
 */
enum xo_gnv_counter {
	XO_GNV_CNT_NOT_GENEVE = 0,	/* not UDP to a registered port over a well-formed
					 * IPv4/IPv6 header (parse.h), or a fragment: untouched */
	XO_GNV_CNT_PASSED,
	XO_GNV_CNT_DROP_RULE,
	XO_GNV_CNT_DROP_MALFORMED,	/* headers or options malformed (before the rule) */
	XO_GNV_CNT_DROP_CRIT_OPT,
	XO_GNV_CNT_BAD_CSUM,		/* dropped */
	XO_GNV_CNT_DECAPPED,
	XO_GNV_CNT_REDIRECTED,
	XO_GNV_CNT_NO_TARGET,		/* no socket or CPU in the slot: passed to the stack */
	XO_GNV_CNT_DECAP_FAILED,	/* inner frame too short to decapsulate: dropped */
	XO_GNV_CNT_DROP_CANNOT_DECAP,	/* decap rule, protocol type not Ethernet, IPv4, IPv6 */
	XO_GNV_CNT_DROP_OPTS_UNEXAMINED, /* options the walk cannot cover (before the rule) */
	XO_GNV_CNT_MAX,
};

struct xo_gnv_stats {
	struct xo_counter c[XO_GNV_CNT_MAX];
};

/* The inner flow hash that picks the xsk/cpu slot, shared so userspace and
 * tests can predict it. Fields in host order; ports 0 for non-TCP/UDP and
 * later fragments, addresses folded to 32 bits (IPv6: xor of the four
 * words); every field 0 when the inner IP header is missing, truncated or
 * malformed (xo_gnv_inner_hash, geneve_parse.h).
 */
static inline __u32 xo_gnv_mix(__u32 h)
{
	/* murmur3's finaliser: every input bit reaches every output bit, so
	 * the low bits taken by "% queues" depend on the whole flow
	 */
	h ^= h >> 16;
	h *= 0x85ebca6bU;
	h ^= h >> 13;
	h *= 0xc2b2ae35U;
	h ^= h >> 16;
	return h;
}

static inline __u32 xo_gnv_flow_hash(__u32 saddr, __u32 daddr, __u16 sport,
				     __u16 dport, __u8 proto)
{
	/* each field times its own odd constant: four independent multiplies
	 * that run side by side, then one finaliser, so one chain of about a
	 * dozen cycles a frame where a finaliser per field made four
	 */
	__u32 h = saddr * 0x9e3779b1U ^ daddr * 0x85ebca77U ^
		  ((__u32)sport << 16 | dport) * 0xc2b2ae3dU ^ proto * 0x27d4eb2fU;

	return xo_gnv_mix(h);
}

/* The xo_gnv_xsks index of an xsk rule's frame: row @rxq (the rx queue it
 * arrived on), slot @hash % @queues of that row. XO_GNV_XSK_SLOTS (no
 * entry: no-target) for a queue beyond XO_GNV_MAX_RXQ; @queues outside
 * 1..XO_GNV_MAX_QUEUES counts as 1, as in the program.
 */
static inline __u32 xo_gnv_xsk_slot(__u32 rxq, __u32 hash, __u32 queues)
{
	if (rxq >= XO_GNV_MAX_RXQ)
		return XO_GNV_XSK_SLOTS;
	if (queues < 1 || queues > XO_GNV_MAX_QUEUES)
		queues = 1;
	return rxq * XO_GNV_MAX_QUEUES + hash % queues;
}

/* ---- The composed program (xdp_offload) ------------------------------------
 * Where libxdp's dispatcher cannot chain our programs, one program runs the
 * stages the interface needs, in this order, each on the frames the one
 * before passed: VLAN policy (xdp_vlan's code and pinned maps), Geneve
 * (xdp_geneve's), AF_XDP redirect (xdp_xsk's), then the chain slot: a tail
 * call to the program in xo_chain[0] (a user's own, after ours). Which
 * stages it has is set at load (read-only data, xo_stages), so the verifier
 * removes the others; adding or removing one loads a new program and swaps
 * it in atomically with the same maps.
 */
enum xo_stage {
	XO_STAGE_VLAN = 1U << 0,
	XO_STAGE_GENEVE = 1U << 1,
	XO_STAGE_XSK = 1U << 2,
	XO_STAGE_CHAIN = 1U << 3,
};
#define XO_STAGE_ALL (XO_STAGE_VLAN | XO_STAGE_GENEVE | XO_STAGE_XSK | XO_STAGE_CHAIN)

/* xo_off_stats: per-CPU array of struct xo_counter by enum xo_off_counter.
 * Every frame the stages before the slot passed lands in one: CHAINED
 * (handed to the program in the slot by tail call: its verdict is the
 * frame's, seen by nobody after it) or CHAIN_EMPTY (no program in the slot,
 * or the kernel refused the call: passed to the stack).
 */
enum xo_off_counter {
	XO_OFF_CNT_CHAINED = 0,
	XO_OFF_CNT_CHAIN_EMPTY,
	XO_OFF_CNT_MAX,
};

#endif /* XOFFLOAD_ABI_H */
