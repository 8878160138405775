// Library-internal glue between the skeleton-owning loader and its users.
#pragma once

#include <string>

namespace xoffload {

// Map names as the VLAN skeleton declares them (also the pin file names).
struct VlanMapNames {
	std::string cfg, vid, stats;
};
VlanMapNames vlan_map_names();

// Whether the kernel loads XDP programs with BPF_F_XDP_HAS_FRAGS (5.18+).
bool kernel_has_xdp_frags();

} // namespace xoffload
