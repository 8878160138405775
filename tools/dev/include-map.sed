# Old -> new include paths of the per-module layout (issue #17): the VLAN and
# Geneve headers moved under xoffload/vlan/ and xoffload/geneve/, their
# sources under user/src/vlan/ and user/src/geneve/, channels.cpp under
# user/src/features/. Apply to a branch made before the move:
#   git ls-files -- '*.cpp' '*.hpp' '*.h' | xargs sed -i -E -f tools/dev/include-map.sed
# A source moved into user/src/<module>/ reaches core's private headers as
# "../core/nl.hpp"; files that stay in user/src/core are not rewritten here.
s@(#include[[:space:]]+["<])xoffload/vlan\.hpp([">])@\1xoffload/vlan/vlan.hpp\2@
s@(#include[[:space:]]+["<])xoffload/rx_vlan\.hpp([">])@\1xoffload/vlan/rx_vlan.hpp\2@
s@(#include[[:space:]]+["<])xoffload/geneve\.hpp([">])@\1xoffload/geneve/geneve.hpp\2@
s@(#include[[:space:]]+["<])xoffload/geneve_kernel\.hpp([">])@\1xoffload/geneve/geneve_kernel.hpp\2@
