// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The outer headers of the gso and gro benches' Geneve rows: the same
// tunnel on both sides of the engine pair.
#pragma once

#include <algorithm>

#include "packet_builder.hpp"
#include "xoffload/gso/gso.hpp"

namespace xoffload::bench {

inline const GeneveEncap &geneve_encap()
{
	static const GeneveEncap g = [] {
		namespace tv = xoffload::test;
		GeneveEncap e;
		e.dst_mac.b = tv::kMacC;
		e.src_mac.b = tv::kMacA;
		std::copy(tv::kIpA.begin(), tv::kIpA.end(), e.src_ip.begin());
		std::copy(tv::kIpC.begin(), tv::kIpC.end(), e.dst_ip.begin());
		e.vni = 42;
		e.udp_csum = false;	// Linux's default for Geneve over IPv4
		return e;
	}();
	return g;
}

} // namespace xoffload::bench
