// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// C++ view of bpf/include/xoffload/abi.h: pins the layout the BPF side
// compiled against, so a change on one side cannot go unnoticed.
#pragma once

#include <cstddef>
#include <linux/types.h>

extern "C" {
#include "xoffload/abi.h"
}

static_assert(XO_ABI_VERSION == 5);
static_assert(sizeof(xo_vlan_tag) == 4);
static_assert(offsetof(xo_vlan_tag, tci) == 2);
static_assert(sizeof(xo_vlan_policy) == 28);
static_assert(offsetof(xo_vlan_policy, action) == 4);
static_assert(offsetof(xo_vlan_policy, flags) == 8);
static_assert(offsetof(xo_vlan_policy, pop_depth) == 12);
static_assert(offsetof(xo_vlan_policy, push_count) == 13);
static_assert(offsetof(xo_vlan_policy, outer_only) == 14);
static_assert(offsetof(xo_vlan_policy, bank) == 15);
static_assert(offsetof(xo_vlan_policy, push) == 16);
static_assert(offsetof(xo_vlan_policy, op) == 24);
static_assert(XO_VLAN_OP_TOO_DEEP == 5);
static_assert(sizeof(xo_vlan_banks) == 64);
static_assert(offsetof(xo_vlan_banks, bank) == 8);
static_assert(XO_VLAN_BANKS == 2);
static_assert(sizeof(xo_vid_entry) == 4);
static_assert(offsetof(xo_vid_entry, rewrite_vid) == 2);
static_assert(sizeof(xo_counter) == 16);
static_assert(sizeof(xo_vlan_stats) == 16 * XO_VLAN_CNT_MAX);
static_assert(XO_VLAN_CNT_MAX == 10);
// AF_XDP redirect (xdp_xsk)
static_assert(sizeof(xo_xsk_filter) == 16);
static_assert(offsetof(xo_xsk_filter, flags) == 4);
static_assert(offsetof(xo_xsk_filter, ethertype) == 8);
static_assert(offsetof(xo_xsk_filter, vid) == 10);
static_assert(offsetof(xo_xsk_filter, udp_dport) == 12);
static_assert(XO_XSK_CNT_MAX == 4);
// Geneve (xdp_geneve)
static_assert(sizeof(xo_gnv_hdr) == 8);
static_assert(sizeof(xo_gnv_opt) == 4);
static_assert(sizeof(xo_gnv_port) == 8);
static_assert(sizeof(xo_gnv_rule) == 8);
static_assert(offsetof(xo_gnv_rule, slot) == 6);
static_assert(sizeof(xo_gnv_cfg) == 24);
static_assert(offsetof(xo_gnv_cfg, gen) == 16);
static_assert(sizeof(xo_gnv_cache) == 48);
static_assert(sizeof(xo_gnv_pcache_entry) == 16);
static_assert(sizeof(xo_gnv_vcache_entry) == 24);
static_assert(offsetof(xo_gnv_cfg, unused) == 8);
static_assert(XO_GNV_CNT_MAX == 12);
static_assert(XO_GNV_CNT_DROP_CANNOT_DECAP == 10);
static_assert(XO_GNV_CNT_DROP_OPTS_UNEXAMINED == 11);
static_assert(sizeof(xo_gnv_stats) == 16 * XO_GNV_CNT_MAX);
static_assert(XO_GNV_XSK_SLOTS == XO_GNV_MAX_RXQ * XO_GNV_MAX_QUEUES);
