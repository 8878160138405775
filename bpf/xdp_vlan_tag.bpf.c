// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* xdp_vlan for drivers that strip the outer VLAN tag out of the data and
 * hand it to XDP through the bpf_xdp_metadata_rx_vlan_tag kfunc (veth,
 * mlx5, ice; 6.8+): the same code and pinned maps, entries xdp_vlan_tag and
 * xdp_vlan_tag_mb, loaded device-bound by offload-tool where the driver
 * offers the kfunc. A separate object, so that xdp_vlan.bpf.o keeps loading
 * on kernels without the kfunc (6.1's verifier refuses an unresolved one).
 */
#define XO_VLAN_TAG_META 1
#include "xdp_vlan.bpf.c"
