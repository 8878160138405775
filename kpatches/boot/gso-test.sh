#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# QinQ GSO counting test, run by the qemu initramfs (/init) and usable on a
# host inside `unshare -n`: one veth underlay, vxlan, geneve and ipvlan on it;
# one GSO frame per (device, tag count); prints one result line per case.
set -e
QINQ=${QINQ:-qinq_gso}
# iproute2, not busybox's ip applet (which busybox sh may prefer over PATH).
IP=${IP:-$(command -v ip)}
ip() { "$IP" "$@"; }

if [ -d /proc/sys/net/ipv6 ]; then
	# No IPv6 autoconf/MLD chatter on the counted devices.
	echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
	echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
fi
ip link set lo up
ip link add ul0 type veth peer name ul1
ip addr add 10.0.0.1/24 dev ul0
ip link set ul0 up
ip link set ul1 up
# Static neighbour: no ARP on the counted device.
ip neigh add 10.0.0.2 lladdr 02:00:00:00:00:aa dev ul0 nud permanent

add() {	# add DEV ARGS...: create and bring up, or report why not
	d=$1
	shift
	if ip link add "$d" "$@" 2>/tmp/err.$d && ip link set "$d" up; then
		devs="$devs $d"
	else
		echo "qinq_gso dev=$d result=SKIP reason=\"$(cat /tmp/err.$d)\""
	fi
}
devs=
set +e
add vx0 type vxlan id 42 remote 10.0.0.2 dstport 4789
add gn0 type geneve id 42 remote 10.0.0.2
add ipvl0 link ul0 type ipvlan mode l2

for d in $devs; do
	for t in 0 1 2; do
		"$QINQ" "$d" ul0 "$t" 4000 1000
	done
done

# Stacked devices: 802.1Q (VID 200) on 802.1ad (VID 100) on the tunnel; an
# untagged frame written to the top device gets both tags from the stack.
# ipvlan is NETIF_F_VLAN_CHALLENGED and takes no VLAN devices.
echo "phase vlan-stack: 802.1Q on 802.1ad on the tunnel, frame written untagged"
for d in $devs; do
	case $d in vx0|gn0) ;; *) continue ;; esac
	if ip link add link "$d" name "$d.s" type vlan proto 802.1ad id 100 2>/tmp/err.$d &&
	   ip link add link "$d.s" name "$d.sc" type vlan proto 802.1Q id 200 2>>/tmp/err.$d &&
	   ip link set "$d.s" up && ip link set "$d.sc" up; then
		for v in "$d.s" "$d.sc"; do
			ethtool -k "$v" | awk -v v="$v" -F': *' '
				$1 == "scatter-gather" { sg = $2 }
				$1 == "tx-checksumming" { cs = $2 }
				$1 == "tcp-segmentation-offload" { tso = $2 }
				$1 == "generic-segmentation-offload" { gso = $2 }
				END { gsub(/ /, "", sg); gsub(/ /, "", cs); gsub(/ /, "", tso); gsub(/ /, "", gso)
				      printf "qinq_gso features dev=%s sg=%s csum=%s tso=%s gso=%s\n", v, sg, cs, tso, gso }'
		done
		"$QINQ" "$d.sc" ul0 0 4000 1000
	else
		echo "qinq_gso dev=$d.sc result=SKIP reason=\"$(cat /tmp/err.$d)\""
	fi
done

# A lower device that parses frames (no passthru_features_check): dummy,
# which takes tunnel GSO in hw_enc_features. With the series the core
# segments an encapsulated skb with two inner tags there, once, instead of
# above the tunnel (0002's gso_features_check() check); untagged stays GSO.
echo "phase parsing-underlay: vxlan over dummy"
if ip link add dm0 type dummy 2>/tmp/err.dm0 && ip addr add 10.1.0.1/24 dev dm0 && ip link set dm0 up &&
   ip link add vx1 type vxlan id 43 remote 10.1.0.2 dstport 4789 dev dm0 2>>/tmp/err.dm0 && ip link set vx1 up; then
	for t in 0 2; do
		"$QINQ" vx1 dm0 "$t" 4000 1000
	done
else
	echo "qinq_gso dev=vx1 result=SKIP reason=\"$(cat /tmp/err.dm0)\""
fi

# Second phase: the underlay no longer segments tunnel GSO in "hardware"
# (veth), so it has to do it in software (__skb_udp_tunnel_segment): with the
# series the tunnel passes one skb down and the underlay sends the segments;
# its byte count must equal that of segmenting before encapsulation.
if command -v ethtool >/dev/null &&
   ethtool -K ul0 tx-udp_tnl-segmentation off tx-udp_tnl-csum-segmentation off 2>/dev/null; then
	echo "phase underlay-sw-gso: ul0 tx-udp_tnl-segmentation off"
	for d in $devs; do
		case $d in vx0|gn0) "$QINQ" "$d" ul0 2 4000 1000 ;; esac
	done
else
	echo "phase underlay-sw-gso: SKIP (no ethtool or feature not changeable)"
fi
