// Forwards to xoffload/geneve/geneve.hpp for the AF_XDP engine's files until the
// engine branch takes tools/dev/include-map.sed; then this file goes.
#pragma once

#include "xoffload/geneve/geneve.hpp"
