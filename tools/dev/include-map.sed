# SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
# Old -> new include paths of the per-module layout (issue #17), in two steps:
# first the VLAN and Geneve headers moved under xoffload/vlan/ and
# xoffload/geneve/ (their sources under user/src/vlan/ and user/src/geneve/,
# channels.cpp under user/src/features/), then every other public header
# under its module's directory (xoffload/core/, xsk/ with the xsk_ prefix
# dropped, bpf/, features/, gso/, packet/). Apply to a branch made before:
#   git ls-files -- '*.cpp' '*.hpp' '*.h' | xargs sed -i -E -f tools/dev/include-map.sed
# A source moved into user/src/<module>/ reaches core's private headers as
# "../core/nl.hpp"; files that stay in user/src/core are not rewritten here.
s@(#include[[:space:]]+["<])xoffload/vlan\.hpp([">])@\1xoffload/vlan/vlan.hpp\2@
s@(#include[[:space:]]+["<])xoffload/rx_vlan\.hpp([">])@\1xoffload/vlan/rx_vlan.hpp\2@
s@(#include[[:space:]]+["<])xoffload/geneve\.hpp([">])@\1xoffload/geneve/geneve.hpp\2@
s@(#include[[:space:]]+["<])xoffload/geneve_kernel\.hpp([">])@\1xoffload/geneve/geneve_kernel.hpp\2@

# Second step (issue #17): every public header under its module's directory,
# user/include/xoffload/<module>/ (core, xsk, bpf, features, gso, packet).
s@(#include[[:space:]]+["<])xoffload/abi_check\.hpp([">])@\1xoffload/core/abi_check.hpp\2@
s@(#include[[:space:]]+["<])xoffload/result\.hpp([">])@\1xoffload/core/result.hpp\2@
s@(#include[[:space:]]+["<])xoffload/parse\.hpp([">])@\1xoffload/core/parse.hpp\2@
s@(#include[[:space:]]+["<])xoffload/fd\.hpp([">])@\1xoffload/core/fd.hpp\2@
s@(#include[[:space:]]+["<])xoffload/owned\.hpp([">])@\1xoffload/core/owned.hpp\2@
s@(#include[[:space:]]+["<])xoffload/hook\.hpp([">])@\1xoffload/core/hook.hpp\2@
s@(#include[[:space:]]+["<])xoffload/netdev\.hpp([">])@\1xoffload/core/netdev.hpp\2@
s@(#include[[:space:]]+["<])xoffload/kernel\.hpp([">])@\1xoffload/core/kernel.hpp\2@
s@(#include[[:space:]]+["<])xoffload/pins\.hpp([">])@\1xoffload/core/pins.hpp\2@
s@(#include[[:space:]]+["<])xoffload/linkwatch\.hpp([">])@\1xoffload/core/linkwatch.hpp\2@
s@(#include[[:space:]]+["<])xoffload/ethtool_features\.hpp([">])@\1xoffload/core/ethtool_features.hpp\2@
s@(#include[[:space:]]+["<])xoffload/xsk\.hpp([">])@\1xoffload/xsk/xsk.hpp\2@
s@(#include[[:space:]]+["<])xoffload/xsk_engine\.hpp([">])@\1xoffload/xsk/engine.hpp\2@
s@(#include[[:space:]]+["<])xoffload/xsk_plan\.hpp([">])@\1xoffload/xsk/plan.hpp\2@
s@(#include[[:space:]]+["<])xoffload/xsk_prog\.hpp([">])@\1xoffload/xsk/prog.hpp\2@
s@(#include[[:space:]]+["<])xoffload/xsk_receiver\.hpp([">])@\1xoffload/xsk/receiver.hpp\2@
s@(#include[[:space:]]+["<])xoffload/xsk_sender\.hpp([">])@\1xoffload/xsk/sender.hpp\2@
s@(#include[[:space:]]+["<])xoffload/traffic\.hpp([">])@\1xoffload/xsk/traffic.hpp\2@
s@(#include[[:space:]]+["<])xoffload/pcap\.hpp([">])@\1xoffload/xsk/pcap.hpp\2@
s@(#include[[:space:]]+["<])xoffload/loader\.hpp([">])@\1xoffload/bpf/loader.hpp\2@
s@(#include[[:space:]]+["<])xoffload/features\.hpp([">])@\1xoffload/features/features.hpp\2@
s@(#include[[:space:]]+["<])xoffload/channels\.hpp([">])@\1xoffload/features/channels.hpp\2@
s@(#include[[:space:]]+["<])xoffload/gso\.hpp([">])@\1xoffload/gso/gso.hpp\2@
s@(#include[[:space:]]+["<])xoffload/csum\.hpp([">])@\1xoffload/packet/csum.hpp\2@
