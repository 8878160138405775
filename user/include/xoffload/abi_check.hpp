// C++ view of bpf/include/xoffload/abi.h: pins the layout the BPF side
// compiled against, so a change on one side cannot go unnoticed.
#pragma once

#include <cstddef>
#include <linux/types.h>

extern "C" {
#include "xoffload/abi.h"
}

static_assert(XO_ABI_VERSION == 1);
static_assert(sizeof(xo_vlan_tag) == 4);
static_assert(offsetof(xo_vlan_tag, tci) == 2);
static_assert(sizeof(xo_vlan_policy) == 24);
static_assert(offsetof(xo_vlan_policy, action) == 4);
static_assert(offsetof(xo_vlan_policy, flags) == 8);
static_assert(offsetof(xo_vlan_policy, pop_depth) == 12);
static_assert(offsetof(xo_vlan_policy, push_count) == 13);
static_assert(offsetof(xo_vlan_policy, push) == 16);
static_assert(sizeof(xo_vid_entry) == 4);
static_assert(offsetof(xo_vid_entry, rewrite_vid) == 2);
static_assert(sizeof(xo_counter) == 16);
static_assert(XO_VLAN_CNT_MAX == 9);
