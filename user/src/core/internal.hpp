// Library-internal glue between the skeleton-owning loader and its users.
#pragma once

#include <string>

namespace xoffload {

// Map names as the VLAN skeleton declares them (also the pin file names).
struct VlanMapNames {
	std::string cfg, vid, stats;
};
VlanMapNames vlan_map_names();

} // namespace xoffload
