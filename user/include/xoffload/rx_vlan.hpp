// Forwards to xoffload/vlan/rx_vlan.hpp for the AF_XDP engine's files until the
// engine branch takes tools/dev/include-map.sed; then this file goes.
#pragma once

#include "xoffload/vlan/rx_vlan.hpp"
