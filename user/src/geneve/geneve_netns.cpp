// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The Geneve registries of the current netns side by side, and the kernel's
// Geneve devices they share: which registry holds a --nic port, which
// device holds a port, and the --nic devices a purge deletes.
#include <dirent.h>

#include <algorithm>
#include <cerrno>

#include "xoffload/geneve/geneve_kernel.hpp"
#include "xoffload/core/netdev.hpp"
#include "xoffload/core/pins.hpp"

namespace xoffload {

std::vector<std::pair<std::string, std::string>> geneve_pin_dirs()
{
	std::vector<std::pair<std::string, std::string>> out;
	std::string root = std::string(kBpffsRoot) + "/xoffload";
	std::string suffix = netns_current().empty() ? "" : "@" + netns_current();
	auto names = geneve_map_names();
	DIR *d = opendir(root.c_str());
	if (!d || names.empty())
		return out;
	while (dirent *e = readdir(d)) {
		std::string n = e->d_name;
		if (n == "." || n == "..")
			continue;
		size_t at = n.find('@');
		std::string ifn = n.substr(0, at);
		std::string sfx = at == std::string::npos ? "" : n.substr(at);
		if (sfx != suffix)
			continue;
		if (path_exists(root + "/" + n + "/" + names[0]))
			out.push_back({ifn, root + "/" + n});
	}
	closedir(d);
	std::sort(out.begin(), out.end());
	return out;
}

bool nic_port_held_elsewhere(const std::string &self_dir, uint16_t port)
{
	for (const auto &[ifn, dir] : geneve_pin_dirs()) {
		if (dir == self_dir)
			continue;
		auto m = GeneveMaps::open(dir, ifn, false);
		if (!m)
			continue;
		auto p = m->port(port);
		if (p && p->refcnt && (p->flags & XO_GNV_PORT_F_NIC))
			return true;
	}
	return false;
}

Result<std::optional<KernelGeneveDev>> geneve_dev_on(uint16_t port)
{
	auto devs = kernel_geneve_devs();
	if (!devs)
		return devs.error();
	for (const auto &d : *devs)
		if (d.port == port && d.up)
			return std::optional<KernelGeneveDev>(d);
	return std::optional<KernelGeneveDev>();
}

Result<std::map<uint16_t, std::string>> kernel_geneve_ports()
{
	auto devs = kernel_geneve_devs();
	if (!devs)
		return devs.error();
	std::map<uint16_t, std::string> want;
	for (const auto &d : *devs)
		if (d.up && !is_nic_geneve_dev(d))
			want.emplace(d.port, d.name);
	return want;
}

Result<std::vector<NicDevPurge>> purge_nic_geneve_devs(const std::string &dir, const std::vector<GenevePort> &ports)
{
	if (std::none_of(ports.begin(), ports.end(), [](const GenevePort &p) { return p.flags & XO_GNV_PORT_F_NIC; }))
		return std::vector<NicDevPurge>{};
	auto devs = kernel_geneve_devs();
	if (!devs)
		return devs.error();
	auto gone = nic_devs_to_purge(ports, *devs, [&](uint16_t p) { return nic_port_held_elsewhere(dir, p); });
	for (const auto &d : gone)
		if (auto s = link_delete(d.name); !s && s.error().err != ENODEV)
			return s.error();	// those before it are gone: a second purge finds them so
	return gone;
}

} // namespace xoffload
