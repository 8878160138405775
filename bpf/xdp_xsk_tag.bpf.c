// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp_xsk whose --filter-vlan also sees the outer tag a driver stripped out
 * of the data (bpf_xdp_metadata_rx_vlan_tag: veth, mlx5, ice; 6.8+): entry
 * xdp_xsk_tag, loaded device-bound by recv where the driver offers the
 * kfunc. A separate object so that xdp_xsk.bpf.o loads on 6.1.
 */
#define XO_XSK_TAG_META 1
#include "xdp_xsk.bpf.c"
