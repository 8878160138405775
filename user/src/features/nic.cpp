// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// RX and AF_XDP facts per NIC driver and kernel release: what the driver does
// to a frame before XDP sees it (VLAN strip, VLAN filter), what XDP and
// AF_XDP can do on it, each with the kernel file and function it comes from
// (Debian linux-source-6.1 and -6.12; "7.2 module" = the symbol is in Debian's
// 7.2 module, the source there was not read), and the decisions taken from
// them: send's TX checksum, the meaning of an XDP attach error.
#include <cerrno>

#include "xoffload/features/features.hpp"
#include "xoffload/core/kernel.hpp"

namespace xoffload::features {

namespace {

const std::string kIntel = "drivers/net/ethernet/intel/", kMlx = "drivers/net/ethernet/mellanox/";

struct Rel {
	unsigned major, minor;
	bool at(unsigned a, unsigned b) const { return major > a || (major == a && minor >= b); }
};

template <typename T>
Fact<T> fact(T v, std::string src)
{
	return Fact<T>{v, std::move(src)};
}

void igb(NicFacts &f, Rel r)
{
	const std::string m = kIntel + "igb/igb_main.c ";
	f.native_xdp = fact(true, m + "igb_xdp() (ndo_bpf)");
	f.strip_ctag = fact(true, m + "igb_probe(): HW_VLAN_CTAG_RX in features, igb_vlan_mode() sets CTRL.VME; "
				      "igb_clean_rx_irq(): igb_run_xdp() before igb_process_skb_fields() puts the tag "
				      "in skb->vlan_tci");
	f.strip_stag = fact(false, m + "igb_reset(): VET = 0x8100 only, an 802.1ad tag stays in the frame");
	f.strip_changeable = fact(true, m + "igb_probe(): HW_VLAN_CTAG_RX in hw_features");
	f.strip_by_feature = fact(true, m + "igb_vlan_mode(): CTRL.VME (the strip) follows HW_VLAN_CTAG_RX");
	f.vlan_filter = fact(VlanFilter::drops_unregistered,
			     m + "igb_set_rx_mode(): RCTL.VFE unless IFF_PROMISC or rx-all (NETIF_F_RXALL)");
	f.vlan_filter_fixed = fact(true, m + "igb_probe(): HW_VLAN_CTAG_FILTER in features, not in hw_features");
	f.vlan_filter_remedy = "promiscuous mode (ip link set IFACE promisc on) or ethtool -K IFACE rx-all on";
	f.vlan_filter_rx_all = fact(true, m + "igb_set_rx_mode(): IFF_PROMISC or NETIF_F_RXALL -> "
					      "igb_vlan_promisc_enable()");
	f.rx_vlan_tag_kfunc = fact(false, m + "igb_netdev_ops: no xdp_metadata_ops");
	f.udp_tunnel_table = fact(0u, m + "no udp_tunnel_nic_info");
	// from 6.14, when igb has zero-copy; said for every release so that a
	// caller with an older model of a newer kernel still attaches one
	f.zc_tx_needs_xdp = fact(true, kIntel + "igb/igb_xsk.c igb_xsk_wakeup() (6.14+): -EINVAL without an XDP "
						"program (7.2 module returns -EINVAL and -ENETDOWN, source not checked "
						"on 7.x; qemu's igb on 7.2: TX never completes without one)");
	f.zc_tx_no_xdp_errno = EINVAL;
	if (r.at(6, 14)) {
		f.zero_copy = fact(true, kIntel + "igb/igb_xsk.c igb_xsk_wakeup() (6.14+; in Debian's 7.2 module, "
						  "source not checked on 7.x)");
		f.zc_tx = f.zero_copy;
	} else {
		f.zero_copy = fact(false, m + "igb_netdev_ops: no ndo_xsk_wakeup before 6.14 (igb_xsk.c)");
		f.zc_tx = f.zero_copy;
	}
	f.tx_md_csum_zc = fact(false, "igb: no xsk_tx_metadata_ops (7.2 module neither)");
	f.xdp_multi_buffer = fact(false, m + "igb_xdp_setup(): the frame must fit one RX buffer");
	f.xdp_max_mtu = fact(3046u, m + "igb_xdp_setup(): MTU + IGB_ETH_PKT_HDR_PAD (26) must fit igb_rx_bufsz(), "
					"at most IGB_RXBUFFER_3072 with 4 KiB pages, else -EINVAL \"The RX buffer size "
					"is too small for the frame size\"");
	f.xdp_mtu_errno = EINVAL;
	f.ntuple = fact(Ntuple::ether_only, kIntel + "igb/igb_ethtool.c igb_add_ethtool_nfc_entry(): only "
							 "ETHER_FLOW (MAC, ethertype, VLAN TCI); igb_probe(): NTUPLE from "
							 "i350 on");
	f.set_channels = fact(true, kIntel + "igb/igb_ethtool.c igb_ethtool_ops: .set_channels = igb_set_channels");
	f.rss_table = fact(RssTable::settable, kIntel + "igb/igb_ethtool.c igb_ethtool_ops: .set_rxfh = igb_set_rxfh");
	f.rx_csum_mark = fact(true, m + "igb_rx_checksum(): CHECKSUM_UNNECESSARY from the descriptor's TCPCS/UDPCS "
					"(igb_process_skb_fields(), after igb_run_xdp())");
}

void i40e(NicFacts &f, Rel r)
{
	const std::string m = kIntel + "i40e/i40e_main.c ";
	f.native_xdp = fact(true, m + "i40e_xdp() (ndo_bpf)");
	f.strip_ctag = fact(true, m + "i40e_config_netdev(): HW_VLAN_CTAG_RX in features; i40e_txrx.c "
				      "i40e_clean_rx_irq(): i40e_run_xdp() before i40e_process_skb_fields() takes "
				      "L2TAG1 (zero-copy: i40e_xsk.c the same)");
	f.strip_stag = fact(false, m + "i40e_config_netdev(): no HW_VLAN_STAG_RX");
	f.strip_changeable = fact(true, m + "i40e_config_netdev(): HW_VLAN_CTAG_RX in hw_features");
	f.strip_by_feature = fact(true, m + "i40e_set_features(): HW_VLAN_CTAG_RX -> i40e_vlan_stripping_enable()"
					    "/disable()");
	f.vlan_filter = fact(VlanFilter::after_first_vid,
			     m + "i40e_correct_mac_vlan_filters(): I40E_VLAN_ANY while no VID is registered; "
				 "from the first VID only the registered ones and untagged frames");
	f.vlan_filter_fixed = fact(true, m + "i40e_config_netdev(): HW_VLAN_CTAG_FILTER in features, not in "
					     "hw_features");
	f.vlan_filter_remedy = "a VLAN device per VID, or promiscuous mode (ip link set IFACE promisc on)";
	f.vlan_filter_rx_all = fact(false, m + "i40e_config_netdev(): no NETIF_F_RXALL");
	f.rx_vlan_tag_kfunc = fact(false, m + "i40e_netdev_ops: no xdp_metadata_ops");
	f.udp_tunnel_table = fact(kTunnelVxlan | kTunnelGeneve,
				  m + "i40e_probe(): udp_tunnel_nic tables[0] VXLAN | GENEVE");
	f.zero_copy = fact(true, m + "i40e_netdev_ops: .ndo_xsk_wakeup = i40e_xsk_wakeup");
	f.zc_tx = f.zero_copy;
	f.zc_tx_needs_xdp = fact(true, kIntel + "i40e/i40e_xsk.c i40e_xsk_wakeup(): -EINVAL unless "
						"i40e_enabled_xdp_vsi() (TX runs on the XDP rings)");
	f.zc_tx_no_xdp_errno = EINVAL;
	f.tx_md_csum_zc = fact(false, "i40e: no xsk_tx_metadata_ops (7.2 module neither)");
	if (r.at(6, 4)) {
		f.xdp_multi_buffer = fact(true, m + "i40e_max_vsi_frame_size(): a frags program takes "
						    "I40E_MAX_CHAINED_RX_BUFFERS buffers; xdp_features RX_SG");
		f.xdp_max_mtu = fact(3046u, m + "i40e_xdp_setup(): MTU > i40e_max_vsi_frame_size() - "
						"I40E_PACKET_HDR_PAD (26) for a program without frags: -EINVAL \"MTU "
						"too large for linear frames and XDP prog does not support frags\"");
		f.xdp_max_mtu_frags = true;
	} else {
		f.xdp_multi_buffer = fact(false, m + "i40e_xdp_setup(): frames that span buffers refused (6.1)");
		f.xdp_max_mtu = fact(3050u, m + "i40e_xdp_setup(): MTU + 22 > i40e_calculate_vsi_rx_buf_len() "
						"(3072): -EINVAL \"MTU too large to enable XDP\"");
	}
	f.xdp_mtu_errno = EINVAL;
	f.ntuple = fact(Ntuple::full, m + "i40e_config_netdev(): NTUPLE (flow director) in hw_features");
	f.set_channels = fact(true, kIntel + "i40e/i40e_ethtool.c i40e_ethtool_ops: .set_channels = "
					     "i40e_set_channels");
	f.rss_table = fact(RssTable::settable, kIntel + "i40e/i40e_ethtool.c i40e_ethtool_ops: .set_rxfh = "
							"i40e_set_rxfh");
	f.rx_csum_mark = fact(true, kIntel + "i40e/i40e_txrx.c i40e_rx_checksum(): CHECKSUM_UNNECESSARY, csum_level 0 "
					     "for a UDP port not in its tunnel table (i40e_process_skb_fields(), "
					     "after i40e_run_xdp())");
}

void mlx4(NicFacts &f, Rel r)
{
	const std::string m = kMlx + "mlx4/en_netdev.c ";
	f.native_xdp = fact(true, m + "mlx4_xdp() (ndo_bpf)");
	f.strip_ctag = fact(true, m + "mlx4_en_init_netdev(): HW_VLAN_CTAG_RX in features; en_rx.c "
				      "mlx4_en_process_rx_cq(): XDP runs before the tag from the CQE goes to "
				      "skb->vlan_tci");
	f.strip_stag = fact(true, m + "mlx4_en_init_netdev(): HW_VLAN_STAG_RX on unless the firmware has "
				      "SKIP_OUTER_VLAN");
	f.strip_changeable = fact(true, m + "mlx4_en_init_netdev(): HW_VLAN_CTAG_RX in hw_features");
	f.strip_by_feature = fact(true, m + "mlx4_en_set_features(): HW_VLAN_CTAG_RX/STAG_RX changed -> the RX "
					    "rings are reset with the new strip setting");
	f.vlan_filter = fact(VlanFilter::drops_unregistered,
			     kMlx + "mlx4/en_port.c mlx4_SET_VLAN_FLTR(): the filter holds the registered VIDs "
				    "(active_vlans)");
	f.vlan_filter_fixed = fact(true, m + "mlx4_en_init_netdev(): HW_VLAN_CTAG_FILTER in features, not in "
					     "hw_features");
	f.vlan_filter_remedy = "a VLAN device per VID, or promiscuous mode (ip link set IFACE promisc on)";
	f.vlan_filter_rx_all = fact(false, m + "mlx4_en_set_features(): NETIF_F_RXALL only turns the port's FCS "
					       "check off (mlx4_SET_PORT_fcs_check)");
	f.rx_vlan_tag_kfunc = fact(false, r.at(6, 3) ? m + "mlx4_xdp_metadata_ops: timestamp and hash only"
						      : m + "no xdp_metadata_ops");
	f.udp_tunnel_table = fact(kTunnelVxlan, m + "mlx4_udp_tunnels: VXLAN only");
	f.zero_copy = fact(false, m + "mlx4_netdev_ops: no ndo_xsk_wakeup (copy mode only)");
	f.zc_tx = f.zero_copy;
	f.tx_md_csum_zc = fact(false, "mlx4: no zero-copy");
	f.xdp_multi_buffer = fact(false, m + "mlx4_xdp_set(): single-buffer XDP only");
	f.xdp_max_mtu = fact(3498u, m + "mlx4_xdp_set() -> mlx4_en_check_xdp_mtu(): MTU > MLX4_EN_MAX_XDP_MTU "
					"(PAGE_SIZE - ETH_HLEN - 2 * VLAN_HLEN - XDP_PACKET_HEADROOM - "
					"skb_shared_info: 3498 with 4 KiB pages): -EOPNOTSUPP");
	f.xdp_mtu_errno = EOPNOTSUPP;
	f.ntuple = fact(Ntuple::dmfs_only, m + "mlx4_en_init_netdev(): NTUPLE only with "
					       "MLX4_STEERING_MODE_DEVICE_MANAGED (log_num_mgm_entry_size=-1), not "
					       "DMFS A0 static");
	f.set_channels = fact(true, kMlx + "mlx4/en_ethtool.c mlx4_en_ethtool_ops: .set_channels = "
					   "mlx4_en_set_channels");
	f.rss_table = fact(RssTable::settable, kMlx + "mlx4/en_ethtool.c mlx4_en_ethtool_ops: .set_rxfh = "
						     "mlx4_en_set_rxfh");
	f.rx_csum_mark = fact(true, kMlx + "mlx4/en_rx.c mlx4_en_process_rx_cq(): CHECKSUM_UNNECESSARY when the CQE "
					   "says the TCP/UDP checksum is good (after the XDP program ran)");
}

void mlx5(NicFacts &f, Rel r)
{
	const std::string m = kMlx + "mlx5/core/en_main.c ";
	f.native_xdp = fact(true, m + "mlx5e_xdp() (ndo_bpf)");
	f.strip_ctag = fact(true, m + "mlx5e_build_nic_netdev(): HW_VLAN_CTAG_RX in features (en/params.c: "
				      "vlan_strip_disable off); the tag is in the CQE when XDP runs");
	f.strip_stag = fact(false, m + "mlx5e_build_nic_netdev(): no HW_VLAN_STAG_RX");
	f.strip_changeable = fact(true, m + "mlx5e_build_nic_netdev(): HW_VLAN_CTAG_RX in hw_features");
	f.strip_by_feature = fact(true, m + "mlx5e_set_features(): HW_VLAN_CTAG_RX -> set_feature_rx_vlan() "
					    "(the RQs' vlan_strip_disable)");
	f.vlan_filter = fact(VlanFilter::drops_unregistered,
			     m + "mlx5e_build_nic_netdev(): HW_VLAN_CTAG_FILTER on; en_fs.c: flow rules for the "
				 "registered VIDs and untagged only");
	f.vlan_filter_fixed = fact(false, m + "mlx5e_build_nic_netdev(): HW_VLAN_CTAG_FILTER in hw_features");
	f.vlan_filter_remedy = "ethtool -K IFACE rx-vlan-filter off";
	f.vlan_filter_rx_all = fact(false, m + "set_feature_rx_all(): NETIF_F_RXALL only turns the port's FCS "
					       "check off (mlx5_set_port_fcs)");
	f.rx_vlan_tag_kfunc = r.at(6, 8) ? fact(true, kMlx + "mlx5/core/en/xdp.c mlx5e_xdp_rx_vlan_tag() (proto "
							     "always 802.1Q)")
					 : fact(false, kMlx + "mlx5/core/en/xdp.c: no xmo_rx_vlan_tag before 6.8");
	f.udp_tunnel_table = fact(kTunnelVxlan, m + "mlx5e_vxlan_set_netdev_info(): VXLAN only");
	f.zero_copy = fact(true, m + "mlx5e_netdev_ops: .ndo_xsk_wakeup = mlx5e_xsk_wakeup");
	f.zc_tx = f.zero_copy;
	f.zc_tx_needs_xdp = fact(true, kMlx + "mlx5/core/en/xsk/tx.c mlx5e_xsk_wakeup(): -ENETDOWN unless "
					      "mlx5e_xdp_is_active() (the XSK queues open with XDP only)");
	f.zc_tx_no_xdp_errno = ENETDOWN;
	f.tx_md_csum_zc = r.at(6, 8) ? fact(true, kMlx + "mlx5/core/en/xdp.c mlx5e_xsk_tx_metadata_ops "
							 ".tmo_request_checksum (6.8+; en_main.c "
							 "mlx5e_build_nic_netdev() sets xsk_tx_metadata_ops)")
				     : fact(false, "no AF_XDP TX metadata before 6.8");
	f.xdp_multi_buffer = fact(true, m + "mlx5e_params_validate_xdp(): a frags program takes a non-linear RQ");
	f.xdp_max_mtu = fact(0u, m + "mlx5e_params_validate_xdp(): above mlx5e_xdp_max_mtu() (RQ type) only "
				     "frags programs: -EINVAL");
	f.xdp_max_mtu_frags = true;
	f.xdp_mtu_errno = EINVAL;
	f.ntuple = fact(Ntuple::full, m + "mlx5e_build_nic_netdev(): NTUPLE (ethtool steering, aRFS)");
	f.set_channels = fact(true, kMlx + "mlx5/core/en_ethtool.c mlx5e_ethtool_ops: .set_channels = "
					   "mlx5e_set_channels");
	f.rss_table = fact(RssTable::settable, kMlx + "mlx5/core/en_ethtool.c mlx5e_ethtool_ops: .set_rxfh = "
						     "mlx5e_set_rxfh");
	f.rx_csum_mark = fact(true, kMlx + "mlx5/core/en_rx.c mlx5e_handle_csum(): with an XDP program no "
					   "CHECKSUM_COMPLETE (en_main.c: MLX5E_RQ_STATE_NO_CSUM_COMPLETE when "
					   "params->xdp_prog), CHECKSUM_UNNECESSARY on the CQE's L3_OK and L4_OK");
}

void ice(NicFacts &f, Rel r)
{
	const std::string m = kIntel + "ice/ice_main.c ";
	f.native_xdp = fact(true, m + "ice_xdp() (ndo_bpf)");
	f.strip_ctag = fact(true, m + "ice_set_netdev_features(): HW_VLAN_CTAG_RX in features");
	f.strip_stag = fact(false, m + "ice_set_netdev_features(): HW_VLAN_STAG_RX offered in double VLAN mode, "
				       "off by default");
	f.strip_changeable = fact(true, m + "ice_set_netdev_features(): HW_VLAN_CTAG_RX in hw_features");
	f.strip_by_feature = fact(true, m + "ice_set_vlan_offload_features(): stripping follows HW_VLAN_CTAG_RX");
	f.vlan_filter = fact(VlanFilter::drops_unregistered,
			     m + "ice_set_netdev_features(): HW_VLAN_CTAG_FILTER on (VSI VLAN pruning)");
	f.vlan_filter_fixed = fact(false, m + "ice_set_netdev_features(): HW_VLAN_CTAG_FILTER in hw_features");
	f.vlan_filter_remedy = "ethtool -K IFACE rx-vlan-filter off";
	f.vlan_filter_rx_all = fact(false, m + "ice_set_netdev_features(): no NETIF_F_RXALL");
	f.rx_vlan_tag_kfunc = r.at(6, 8) ? fact(true, kIntel + "ice/ice_txrx_lib.c ice_xdp_rx_vlan_tag()")
					 : fact(false, "ice: no xmo_rx_vlan_tag before 6.8");
	f.udp_tunnel_table = fact(kTunnelVxlan | kTunnelGeneve, m + "ice_init_dev(): udp_tunnel_nic tables VXLAN, "
								    "GENEVE");
	f.zero_copy = fact(true, m + "ice_netdev_ops: .ndo_xsk_wakeup = ice_xsk_wakeup");
	f.zc_tx = f.zero_copy;
	f.zc_tx_needs_xdp = fact(true, kIntel + "ice/ice_xsk.c ice_xsk_wakeup(): -EINVAL unless "
						"ice_is_xdp_ena_vsi()");
	f.zc_tx_no_xdp_errno = EINVAL;
	f.tx_md_csum_zc = fact(false, "ice: no xsk_tx_metadata_ops (7.2 module neither)");
	if (r.at(6, 3)) {
		f.xdp_multi_buffer = fact(true, m + "ice_xdp_setup_prog(): frags programs at any MTU; xdp_features "
						    "RX_SG");
		f.xdp_max_mtu_frags = true;
	} else {
		f.xdp_multi_buffer = fact(false, m + "ice_xdp_setup_prog(): single-buffer XDP only (6.1)");
	}
	f.xdp_max_mtu = fact(3046u, m + "ice_xdp_setup_prog(): MTU + ICE_ETH_PKT_HDR_PAD (26) > "
					"ice_max_xdp_frame_size() (3072): -EOPNOTSUPP \"MTU too large for loading "
					"XDP\"");
	f.xdp_mtu_errno = EOPNOTSUPP;
	f.ntuple = fact(Ntuple::full, m + "ice_set_netdev_features(): NTUPLE (flow director)");
	f.set_channels = fact(true, kIntel + "ice/ice_ethtool.c ice_ethtool_ops: .set_channels = ice_set_channels");
	f.rss_table = fact(RssTable::settable, kIntel + "ice/ice_ethtool.c ice_ethtool_ops: .set_rxfh = ice_set_rxfh");
	f.rx_csum_mark = fact(true, kIntel + "ice/ice_txrx_lib.c ice_rx_csum(): CHECKSUM_UNNECESSARY from the "
					     "descriptor (ice_process_skb_fields(), after the XDP program)");
}

void igc(NicFacts &f, Rel)
{
	const std::string m = kIntel + "igc/igc_main.c ";
	f.native_xdp = fact(true, m + "igc_bpf() (ndo_bpf)");
	f.zero_copy = fact(true, m + "igc_netdev_ops: .ndo_xsk_wakeup = igc_xsk_wakeup");
	f.zc_tx = f.zero_copy;
	f.zc_tx_needs_xdp = fact(true, m + "igc_xsk_wakeup(): -ENXIO unless igc_xdp_is_enabled()");
	f.zc_tx_no_xdp_errno = ENXIO;
	f.tx_md_csum_zc = fact(false, m + "igc_xsk_tx_metadata_ops: timestamp only, no tmo_request_checksum "
					  "(7.2 module neither)");
	f.rx_csum_mark = fact(true, m + "igc_rx_checksum(): CHECKSUM_UNNECESSARY from the descriptor's TCPCS/UDPCS");
}

void stmmac(NicFacts &f, Rel)
{
	const std::string m = "drivers/net/ethernet/stmicro/stmmac/stmmac_main.c ";
	f.native_xdp = fact(true, m + "stmmac_bpf() (ndo_bpf)");
	f.zero_copy = fact(true, m + "stmmac_netdev_ops: .ndo_xsk_wakeup = stmmac_xsk_wakeup");
	f.zc_tx = f.zero_copy;
	f.tx_md_csum_zc = fact(false, m + "stmmac_xsk_tx_metadata_ops: timestamp only, no tmo_request_checksum");
}

void virtio(NicFacts &f, Rel r)
{
	const std::string m = "drivers/net/virtio_net.c ";
	f.native_xdp = fact(true, m + "virtnet_xdp() (ndo_bpf)");
	f.strip_ctag = fact(false, m + "virtnet_probe(): no HW_VLAN_CTAG_RX, tags stay in the frame");
	f.strip_stag = fact(false, m + "virtnet_probe(): no HW_VLAN_STAG_RX");
	f.strip_changeable = fact(false, m + "nothing to turn off");
	f.strip_by_feature = fact(false, m + "virtnet_probe(): no HW_VLAN_CTAG_RX: nothing strips");
	f.vlan_filter = fact(VlanFilter::host, m + "virtnet_probe(): HW_VLAN_CTAG_FILTER with VIRTIO_NET_F_CTRL_VLAN; "
						    "the host drops VIDs the guest did not register (qemu, emulated)");
	f.vlan_filter_fixed = fact(true, m + "virtnet_probe(): HW_VLAN_CTAG_FILTER in features, not in hw_features");
	f.vlan_filter_remedy = "a VLAN device per VID, or promiscuous mode (qemu then filters nothing)";
	f.vlan_filter_rx_all = fact(false, m + "virtnet_probe(): no NETIF_F_RXALL");
	f.rx_vlan_tag_kfunc = fact(false, r.at(6, 10) ? m + "virtnet_xdp_metadata_ops: hash only"
						      : m + "no xdp_metadata_ops");
	f.udp_tunnel_table = fact(0u, m + "no udp_tunnel_nic_info");
	// 6.11 brought the RX half (virtnet_xsk_pool_enable(), the XSK receive
	// path), unreachable: the core binds zero-copy only to a device that
	// announces NETDEV_XDP_ACT_XSK_ZEROCOPY, which came with TX in 6.13
	if (r.at(6, 13)) {
		f.zero_copy = fact(true, m + "virtnet_probe(): NETDEV_XDP_ACT_XSK_ZEROCOPY (6.13+); "
					     "virtnet_xsk_pool_enable() needs the virtqueues' DMA device "
					     "(virtqueue_dma_dev(): VIRTIO_F_ACCESS_PLATFORM, qemu "
					     "iommu_platform=on,disable-legacy=on), else -EINVAL and auto binds copy; RX "
					     "from the pool: virtnet_add_recvbuf_xsk(), virtnet_receive_xsk_buf() (Debian's "
					     "7.2 module; qemu 10 under 7.2: RX and TX 500 of 500)");
		f.zc_tx = fact(true, m + "virtnet_poll_tx() -> virtnet_xsk_xmit() sends from the pool (6.13+, "
					 "\"virtio_net: xsk: tx: support xmit xsk buffer\")");
	} else if (r.at(6, 11)) {
		f.zero_copy = fact(false, "net/xdp/xsk_buff_pool.c xp_assign_dev(): -EOPNOTSUPP unless xdp_features has "
					  "NETDEV_XDP_ACT_XSK_ZEROCOPY, which virtnet_probe() sets only from 6.13 (the "
					  "RX half, virtio_net.c virtnet_xsk_pool_enable(), is there and unreachable; "
					  "Debian's 6.12 with iommu_platform=on: EOPNOTSUPP)");
		f.zc_tx = fact(false, m + "virtnet_poll_tx() runs free_old_xmit() only: nothing reads the pool "
					  "(xsk_tx_peek_desc()) before 6.13");
	} else {
		f.zero_copy = fact(false, m + "virtnet_netdev: no ndo_xsk_wakeup before 6.11");
		f.zc_tx = f.zero_copy;
	}
	f.zc_tx_needs_xdp = fact(false, m + "virtnet_xsk_wakeup(): -ENETDOWN only while down");
	f.tx_md_csum_zc = fact(false, "virtio_net: no xsk_tx_metadata_ops");
	if (r.at(6, 3)) {
		f.xdp_multi_buffer = fact(true, m + "virtnet_xdp_set(): frags programs at any MTU with "
						    "VIRTIO_NET_F_MRG_RXBUF");
		f.xdp_max_mtu = fact(3506u, m + "virtnet_xdp_set(): MTU > PAGE_SIZE - SKB_DATA_ALIGN("
						"XDP_PACKET_HEADROOM + skb_shared_info) - ETH_HLEN for a program "
						"without frags: -EINVAL \"MTU too large to enable XDP without frags\"");
		f.xdp_max_mtu_frags = true;
	} else {
		f.xdp_multi_buffer = fact(false, m + "virtnet_xdp_set(): single-buffer XDP only (6.1)");
		f.xdp_max_mtu = fact(4064u, m + "virtnet_xdp_set(): MTU > PAGE_SIZE - sizeof(struct "
						"padded_vnet_hdr): -EINVAL \"MTU too large to enable XDP\"");
	}
	f.xdp_mtu_errno = EINVAL;
	f.ntuple = fact(Ntuple::none, m + "no NETIF_F_NTUPLE");
	f.set_channels = fact(true, m + "virtnet_ethtool_ops: .set_channels = virtnet_set_channels");
	f.rss_table = fact(RssTable::if_offered, m + "virtnet_set_rxfh(): an indirection table only with "
						     "VIRTIO_NET_F_RSS (vi->has_rss), else -EOPNOTSUPP");
	f.rx_csum_mark = fact(true, m + (r.at(6, 11) ? "virtnet_receive_done()" : "receive_buf()") +
				    ": the host's VIRTIO_NET_HDR_F_DATA_VALID -> CHECKSUM_UNNECESSARY, flags saved "
				    "before XDP runs");
}

void veth(NicFacts &f, Rel r)
{
	const std::string m = "drivers/net/veth.c ";
	f.native_xdp = fact(true, m + "veth_xdp() (ndo_bpf)");
	f.strip_ctag = fact(false, m + "veth_xdp_rcv_skb(): XDP runs on the frame as sent; a tag the sender's "
				       "tx-vlan-offload kept in skb->vlan_tci (TC vlan push, a VLAN device) stays "
				       "there, outside the frame");
	f.strip_stag = fact(false, m + "the same for 802.1ad");
	f.strip_changeable = fact(false, m + "nothing strips; the peer's tx-vlan-offload decides (ethtool -K PEER "
					     "txvlan off puts the tag into the frame)");
	f.strip_by_feature = fact(false, m + "VETH_FEATURES shows HW_VLAN_CTAG_RX/STAG_RX, but no RX path reads "
					     "them: veth_xdp_rcv_skb() runs XDP on the skb as sent, and a tag the "
					     "sender kept in skb->vlan_tci stays there whatever they say");
	f.vlan_filter = fact(VlanFilter::none, m + "VETH_FEATURES: no HW_VLAN_CTAG_FILTER");
	f.vlan_filter_fixed = fact(false, m + "no filter");
	f.vlan_filter_rx_all = fact(false, m + "no filter");
	f.rx_vlan_tag_kfunc = r.at(6, 8) ? fact(true, m + "veth_xdp_rx_vlan_tag() (device-bound programs only)")
					 : fact(false, m + "no xmo_rx_vlan_tag before 6.8");
	f.udp_tunnel_table = fact(0u, m + "no udp_tunnel_nic_info");
	f.zero_copy = fact(false, m + "veth_netdev_ops: no ndo_xsk_wakeup (copy mode only)");
	f.zc_tx = f.zero_copy;
	f.tx_md_csum_zc = fact(false, "veth: no zero-copy");
	f.xdp_multi_buffer = fact(true, m + "veth_xdp_set(): a frags program lifts the peer's max_mtu");
	f.xdp_max_mtu = fact(3506u, m + "veth_xdp_set(): the PEER's MTU > SKB_WITH_OVERHEAD(PAGE_SIZE - "
					"VETH_XDP_HEADROOM) - hard_header_len for a program without frags: -ERANGE");
	f.xdp_max_mtu_frags = true;
	f.xdp_mtu_errno = ERANGE;
	f.ntuple = fact(Ntuple::none, m + "no NETIF_F_NTUPLE");
	f.rxq_from_peer = fact(true, m + "veth_xmit(): rxq = skb_get_queue_mapping(skb), the peer's TX queue");
	f.set_channels = fact(true, m + "veth_ethtool_ops: .set_channels = veth_set_channels");
	f.rss_table = fact(RssTable::none, m + "veth_ethtool_ops: no set_rxfh");
	f.rx_csum_mark = fact(false, m + "veth_xmit() and veth_xdp_rcv_skb() never set ip_summed: an skb from "
					 "the peer keeps its sender's state (a local sender's CHECKSUM_PARTIAL, a "
					 "raw one's CHECKSUM_NONE; a frame forwarded from a NIC keeps that NIC's "
					 "mark), and an xdp_frame redirected in becomes an skb with CHECKSUM_NONE "
					 "(veth_xdp_rcv_bulk_skb() -> __xdp_build_skb_from_frame())");
}

void vmxnet3(NicFacts &f, Rel r)
{
	const std::string m = "drivers/net/vmxnet3/vmxnet3_drv.c ";
	f.native_xdp = r.at(6, 6) ? fact(true, "drivers/net/vmxnet3/vmxnet3_xdp.c vmxnet3_xdp() (6.6+)")
				  : fact(false, m + "vmxnet3_netdev_ops: no ndo_bpf before 6.6");
	f.strip_ctag = fact(true, m + "vmxnet3_declare_features(): HW_VLAN_CTAG_RX in features");
	f.strip_stag = fact(false, m + "vmxnet3_declare_features(): no HW_VLAN_STAG_RX");
	f.strip_changeable = fact(true, m + "vmxnet3_declare_features(): HW_VLAN_CTAG_RX in hw_features");
	f.strip_by_feature = fact(true, "drivers/net/vmxnet3/vmxnet3_ethtool.c vmxnet3_set_features(): "
					"HW_VLAN_CTAG_RX -> UPT1_F_RXVLAN");
	f.vlan_filter = fact(VlanFilter::host, m + "vmxnet3_vlan_rx_add_vid(): the device's vfTable holds the "
						    "registered VIDs, emptied in promiscuous mode");
	f.vlan_filter_fixed = fact(true, m + "vmxnet3_declare_features(): HW_VLAN_CTAG_FILTER in features, not in "
					     "hw_features");
	f.vlan_filter_remedy = "a VLAN device per VID, or promiscuous mode (ip link set IFACE promisc on)";
	f.vlan_filter_rx_all = fact(false, m + "vmxnet3_declare_features(): no NETIF_F_RXALL");
	f.rx_vlan_tag_kfunc = fact(false, m + "no xdp_metadata_ops");
	f.udp_tunnel_table = fact(0u, m + "no udp_tunnel_nic_info");
	f.zero_copy = fact(false, m + "vmxnet3_netdev_ops: no ndo_xsk_wakeup (copy mode only)");
	f.zc_tx = f.zero_copy;
	f.tx_md_csum_zc = fact(false, "vmxnet3: no zero-copy");
	f.xdp_multi_buffer = fact(false, "drivers/net/vmxnet3/vmxnet3_xdp.c vmxnet3_xdp_set(): single-buffer XDP only");
	if (r.at(6, 6)) {
		f.xdp_max_mtu = fact(3494u, "drivers/net/vmxnet3/vmxnet3_xdp.c vmxnet3_xdp_set(): MTU > "
					    "VMXNET3_XDP_MAX_MTU: -EOPNOTSUPP \"MTU %u too large for XDP\"");
		f.xdp_mtu_errno = EOPNOTSUPP;
	}
	f.ntuple = fact(Ntuple::none, m + "no NETIF_F_NTUPLE");
	const std::string e = "drivers/net/vmxnet3/vmxnet3_ethtool.c vmxnet3_ethtool_ops: ";
	f.set_channels = fact(false, e + "no set_channels (the queue count is the device's)");
	f.rss_table = fact(RssTable::settable, e + ".set_rxfh = vmxnet3_set_rss (VMXNET3_RSS)");
	f.rx_csum_mark = fact(true, m + "vmxnet3_rx_csum(): CHECKSUM_UNNECESSARY from the completion "
					"descriptor's tcp/udp and tuc bits");
}

} // namespace

const char *vlan_filter_name(VlanFilter f)
{
	switch (f) {
	case VlanFilter::none: return "none";
	case VlanFilter::drops_unregistered: return "drops unregistered VIDs";
	case VlanFilter::after_first_vid: return "all VIDs until one is registered, then only registered ones";
	case VlanFilter::host: return "the host drops unregistered VIDs";
	}
	return "?";
}

const char *rss_table_name(RssTable r)
{
	switch (r) {
	case RssTable::none: return "none";
	case RssTable::settable: return "ethtool -X";
	case RssTable::if_offered: return "ethtool -X where the device offers RSS";
	}
	return "?";
}

const char *ntuple_name(Ntuple n)
{
	switch (n) {
	case Ntuple::none: return "none";
	case Ntuple::ether_only: return "flow-type ether only (MAC, ethertype, VLAN)";
	case Ntuple::full: return "L3/L4 rules";
	case Ntuple::dmfs_only: return "only in device-managed flow steering mode";
	}
	return "?";
}

void kernel_version_release(KernelVersion k, unsigned &major, unsigned &minor)
{
	switch (k) {
	case KernelVersion::v6_1: major = 6, minor = 1; return;
	case KernelVersion::v6_12: major = 6, minor = 12; return;
	case KernelVersion::v7_2: major = 7, minor = 2; return;
	}
	major = 6, minor = 1;
}

NicFacts nic_facts(DevKind driver, unsigned major, unsigned minor)
{
	NicFacts f;
	f.driver = driver;
	f.major = major;
	f.minor = minor;
	const Rel r{major, minor};
	f.modelled = true;
	// what an unmodelled driver is taken to do: strip as its features say,
	// mark the outer checksum verified as most NIC drivers do
	f.strip_by_feature.value = true;
	f.rx_csum_mark.value = true;
	switch (driver) {
	case DevKind::igb: igb(f, r); break;
	case DevKind::i40e: i40e(f, r); break;
	case DevKind::mlx4_en: mlx4(f, r); break;
	case DevKind::mlx5_core: mlx5(f, r); break;
	case DevKind::ice: ice(f, r); break;
	case DevKind::igc: igc(f, r); break;
	case DevKind::stmmac: stmmac(f, r); break;
	case DevKind::virtio_net: virtio(f, r); break;
	case DevKind::veth: veth(f, r); break;
	case DevKind::vmxnet3: vmxnet3(f, r); break;
	default: {
		f.modelled = false;
		const std::string none = std::string(dev_kind_name(driver)) + ": driver not modelled, nothing assumed";
		f.zero_copy.source = f.zc_tx.source = f.tx_md_csum_zc.source = f.rx_vlan_tag_kfunc.source = none;
		f.strip_by_feature.source = none + "; rx-vlan-hw-parse taken at its word";
		f.rx_csum_mark.source = none + "; taken to mark the outer checksum verified, as most NIC drivers do";
		// conservative for zero-copy TX: most drivers run it on their XDP rings
		f.zc_tx_needs_xdp = fact(true, none + "; Intel's (ixgbe, ice, igc) and most others run zero-copy TX "
						     "on their XDP rings");
		break;
	}
	}
	// XDP across a close: vmxnet3 alone forgets its program
	if (driver == DevKind::vmxnet3 && r.at(6, 6))
		f.xdp_lost_on_close = fact(true, "drivers/net/vmxnet3/vmxnet3_drv.c vmxnet3_rq_cleanup_all(): "
						 "adapter->xdp_bpf_prog = NULL at every vmxnet3_quiesce_dev() "
						 "(ndo_stop, change_mtu, ring and queue changes, reset) while "
						 "dev->xdp_state keeps it, so ip link still lists it (seen on Debian's "
						 "6.12; the same code in 7.2)");
	else if (!f.modelled)
		f.xdp_lost_on_close = fact(false, std::string(dev_kind_name(driver)) +
							  ": driver not modelled; taken to keep its program across a close");
	else if (!f.native_xdp.value)
		f.xdp_lost_on_close = fact(false, f.native_xdp.source);
	else
		f.xdp_lost_on_close = fact(false, "no close path of the driver clears its copy of the program; "
						  "ndo_open hands it to the rings again (6.12 and 7.2 sources)");
	// a NIC: the device's hash (RSS) or a flow rule picks the RX queue
	if (f.rxq_from_peer.source.empty() && !f.rss_table.source.empty())
		f.rxq_from_peer = fact(false, f.rss_table.source + "; the device's RSS hash or a flow rule picks the "
								   "RX queue");
	// Copy mode: net/xdp/xsk.c xsk_build_skb() turns XDP_TXMD_FLAGS_CHECKSUM
	// into CHECKSUM_PARTIAL, and __dev_direct_xmit() -> validate_xmit_skb()
	// resolves it against dev->features (the device or skb_checksum_help()):
	// right on every driver that takes the UMEM
	if (driver == DevKind::virtio_net && r.at(7, 2))
		f.tx_md_csum_copy = fact(false, "drivers/net/virtio_net.c: a UMEM with TX metadata is refused at bind "
						"(EOPNOTSUPP, copy and zero-copy; seen on Debian's 7.2, not checked on "
						"earlier 7.x)");
	else if (driver == DevKind::virtio_net && r.at(6, 8))
		f.tx_md_csum_copy = fact(false, "net/xdp/xsk.c xsk_build_skb(): virtio_net sets IFF_TX_SKB_NO_LINEAR "
						"(virtnet_probe()), so copy mode builds the skb in "
						"xsk_build_skb_zerocopy(), which never reads the TX metadata: the "
						"checksum request is dropped (Debian's 6.12: frames left with the "
						"pseudo-header seed)");
	else if (r.at(6, 8))
		f.tx_md_csum_copy = fact(true, "net/xdp/xsk.c xsk_build_skb(): XDP_TXMD_FLAGS_CHECKSUM -> "
					       "CHECKSUM_PARTIAL, then validate_xmit_skb() (6.8+)");
	else
		f.tx_md_csum_copy = fact(false, "no AF_XDP TX metadata before 6.8");
	if (!r.at(6, 8) && f.tx_md_csum_zc.value)
		f.tx_md_csum_zc = fact(false, "no AF_XDP TX metadata before 6.8");
	return f;
}

Result<KernelArg> parse_kernel_arg(std::string_view s)
{
	KernelArg a;
	if (s == "running") {
		const KernelRelease &r = running_kernel();
		a.major = r.major;
		a.minor = r.minor;
		a.model = running_kernel_model();
		a.running = true;
		a.name = r.text;
		return a;
	}
	auto k = parse_kernel_version(s);
	if (!k)
		return k.error();
	a.model = *k;
	kernel_version_release(*k, a.major, a.minor);
	a.name = kernel_version_name(*k);
	return a;
}

NicFacts nic_facts(DevKind driver, KernelVersion k)
{
	unsigned major, minor;
	kernel_version_release(k, major, minor);
	return nic_facts(driver, major, minor);
}

NicFacts nic_facts_running(std::string_view driver)
{
	const KernelRelease &r = running_kernel();
	return nic_facts(dev_kind_from_name(driver).value_or(DevKind::unknown), r.major, r.minor);
}

TxCsumDecision tx_csum_decision(const NicFacts &f, bool zero_copy, bool md_registered)
{
	TxCsumDecision d;
	const char *drv = dev_kind_name(f.driver);
	const Fact<bool> &honoured = zero_copy ? f.tx_md_csum_zc : f.tx_md_csum_copy;
	d.source = honoured.source;
	if (!md_registered) {
		d.why = "TX metadata not registered on the UMEM";
		return d;
	}
	if (honoured.value) {
		d.by_metadata = true;
		d.why = std::string(drv) + " honours it in " + (zero_copy ? "zero-copy" : "copy") + " mode";
		return d;
	}
	if (!Rel{f.major, f.minor}.at(6, 8))
		d.why = "no AF_XDP TX metadata before Linux 6.8";
	else if (!zero_copy && f.driver == DevKind::virtio_net && !Rel{f.major, f.minor}.at(7, 2))
		d.why = std::string(drv) + " drops it in copy mode (IFF_TX_SKB_NO_LINEAR: the core's "
					   "xsk_build_skb_zerocopy() never reads TX metadata)";
	else if (!zero_copy)
		d.why = std::string(drv) + " refuses a UMEM with TX metadata at bind";
	else if (!f.modelled)
		d.why = std::string(drv) + " is not modelled: zero-copy may ignore the request";
	else
		d.why = std::string(drv) + " ignores it in zero-copy mode (no tmo_request_checksum in its "
					   "xsk_tx_metadata_ops)";
	return d;
}

bool decap_cpumap_default(const NicFacts &f)
{
	return f.rx_csum_mark.value;
}

std::string xdp_attach_hint(const NicFacts &f, int err, unsigned mtu, bool frags, const char *skb_flag)
{
	const int e = err < 0 ? -err : err;
	const std::string drv = dev_kind_name(f.driver);
	if (!f.modelled)
		return "";
	if (!f.native_xdp.value && e == EOPNOTSUPP)
		return drv + " has no native XDP on Linux " + std::to_string(f.major) + "." + std::to_string(f.minor) +
		       " (try " + skb_flag + ")";
	// the MTU limit, where this errno is what the driver returns for it
	const bool over = f.xdp_max_mtu.value && mtu > f.xdp_max_mtu.value && !(frags && f.xdp_max_mtu_frags);
	if (over && e == f.xdp_mtu_errno) {
		std::string s = drv + " runs XDP up to MTU " + std::to_string(f.xdp_max_mtu.value) + " (" +
				(f.driver == DevKind::veth ? "the peer's MTU; " : "") + "MTU " + std::to_string(mtu) +
				" here): lower the MTU";
		if (f.xdp_max_mtu_frags && !frags)
			s += ", load a frags-aware program";
		else if (!f.xdp_multi_buffer.value)
			s += " (" + drv + " has no XDP multi-buffer)";
		return s + " or use " + skb_flag;
	}
	if (f.driver == DevKind::virtio_net && e == EOPNOTSUPP)
		return "virtio_net refuses XDP while the host applies receive offloads it cannot turn off "
		       "(GRO_HW/guest checksum, virtnet_xdp_set()): turn them off on the host (e.g. qemu "
		       "guest_csum=off,guest_tso4=off,guest_tso6=off) or use " + std::string(skb_flag);
	return "";
}

} // namespace xoffload::features
