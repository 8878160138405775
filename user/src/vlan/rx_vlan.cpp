// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// RX VLAN stripping turned off (and back on) for the programs that read tags
// at XDP, recorded in the pin directory as bpffs symlinks (rxvlan-off: the
// features to turn on again; rxvlan-by-<holder>: who keeps them off), and
// the hardware VLAN filter line.
#include "xoffload/vlan/rx_vlan.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <tuple>
#include <cstring>

#include "../core/internal.hpp"
#include "../core/nl.hpp"
#include "xoffload/core/ethtool_features.hpp"
#include "xoffload/core/fd.hpp"
#include "xoffload/features/features.hpp"
#include "xoffload/core/pins.hpp"
#include "xoffload/core/notice.hpp"

namespace xoffload {

namespace {

constexpr const char *kOffRecord = "rxvlan-off";
constexpr const char *kHolderPrefix = "rxvlan-by-";

// IFF_PROMISC of @ifindex and how many VLAN devices sit on it.
Status read_links(int ifindex, RxVlanFacts &f)
{
	auto req = rtnl_request<ifinfomsg>(RTM_GETLINK);
	req.body.ifi_family = AF_UNSPEC;
	return rtnl_dump(&req.nh, "RTM_GETLINK", [&](const nlmsghdr *nh) {
		if (nh->nlmsg_type != RTM_NEWLINK)
			return;
		auto *ifm = static_cast<const ifinfomsg *>(mnl_nlmsg_get_payload(nh));
		if (ifm->ifi_index == ifindex)
			f.promisc = ifm->ifi_flags & IFF_PROMISC;
		int link = 0;
		std::string kind;
		nl::for_each_attr(nh, sizeof(ifinfomsg), [&](const nlattr *a) {
			uint16_t t = mnl_attr_get_type(a);
			if (t == IFLA_LINK && mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				link = static_cast<int>(mnl_attr_get_u32(a));
			if (t == IFLA_LINKINFO)
				nl::for_each_nested(a, [&](const nlattr *li) {
					if (mnl_attr_get_type(li) == IFLA_INFO_KIND &&
					    mnl_attr_validate(li, MNL_TYPE_NUL_STRING) >= 0)
						kind = mnl_attr_get_str(li);
				});
		});
		// IFLA_LINK of an upper in another netns names an ifindex there:
		// the dump of this netns lists only uppers that live here
		if (kind == "vlan" && link == ifindex && ifm->ifi_index != ifindex)
			f.vlan_uppers++;
	});
}

std::vector<std::string> split(const std::string &s)
{
	std::vector<std::string> out;
	size_t p = 0;
	while (p < s.size()) {
		size_t e = s.find(',', p);
		if (e == std::string::npos)
			e = s.size();
		if (e > p)
			out.push_back(s.substr(p, e - p));
		p = e + 1;
	}
	return out;
}

std::string join(const std::vector<std::string> &v, const char *sep = ",")
{
	std::string s;
	for (const auto &x : v)
		s += (s.empty() ? "" : sep) + x;
	return s;
}

std::string read_link(const std::string &path)
{
	char buf[256];
	ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf) - 1);
	if (n <= 0)
		return {};
	return std::string(buf, static_cast<size_t>(n));
}

Status write_link(const std::string &path, const std::string &text)
{
	(void)::unlink(path.c_str());
	if (::symlink(text.c_str(), path.c_str()))
		return errno_error("record " + path, errno);
	return ok();
}

// The entries of a pin directory.
std::vector<std::string> entries(const std::string &dir)
{
	std::vector<std::string> out;
	if (DIR *d = ::opendir(dir.c_str())) {
		while (dirent *e = ::readdir(d))
			if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
				out.emplace_back(e->d_name);
		::closedir(d);
	}
	return out;
}

std::vector<std::string> holders_in(const std::string &dir)
{
	std::vector<std::string> out;
	for (const auto &n : entries(dir))
		if (n.rfind(kHolderPrefix, 0) == 0)
			out.push_back(n.substr(std::strlen(kHolderPrefix)));
	return out;
}

// flock of the pin directory, as the VLAN and Geneve maps take it.
Result<UniqueFd> lock_dir(const std::string &dir)
{
	UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (!fd.valid())
		return errno_error("open " + dir, errno);
	if (flock(fd.get(), LOCK_EX))
		return errno_error("lock " + dir, errno);
	return fd;
}

const char *reader_name(TagReader r)
{
	switch (r) {
	case TagReader::xdp_vlan:
		return "xdp_vlan";
	case TagReader::xdp_geneve:
		return "xdp_geneve";
	case TagReader::xdp_xsk:
	case TagReader::xsk_frames:
		break;
	}
	return "xdp_xsk";
}

// What @reader cannot do with the tags the device strips before XDP.
std::string stripped_consequence(const RxVlanFacts &f, TagReader r)
{
	if (r == TagReader::xdp_vlan)
		return f.meta_kfunc
			       ? "xdp_vlan reads them through the rx-vlan-tag kfunc (allow-list, rewrite decision), "
				 "but cannot pop, push or rewrite them: such frames are counted "
				 "dropped-tag-in-metadata (tc-ingress can: --hook tc-ingress)"
			       : "xdp_vlan never sees them: the allow-list, rewrite and pop miss them and a push "
				 "lands inside them (--hook tc-ingress sees them)";
	if (r == TagReader::xdp_geneve)
		// the driver puts a stripped tag back into skb->vlan_tci after
		// XDP_PASS, whatever the program did to the frame
		return "xdp_geneve never sees an outer tag: an inner frame it decaps and passes gets the outer tag "
		       "back (skb->vlan_tci), and frames steered to a socket arrive without it";
	if (r == TagReader::xsk_frames)
		return "frames reach the socket without them";
	return f.meta_kfunc ? "--filter-vlan matches them through the rx-vlan-tag kfunc; the frames reach the "
			      "socket without the tag"
			    : "--filter-vlan never sees them: tagged frames look untagged (VID 0) to it";
}

} // namespace

Result<RxVlanFacts> rx_vlan_facts(const Netdev &dev)
{
	RxVlanFacts f;
	auto fs = ethtool_features_get(dev.name);
	if (!fs)
		return fs.error();
	auto take = [&](const char *name, bool &on, bool &fixed) {
		const EthtoolFeature *e = fs->find(name);
		on = e && e->active;
		fixed = !e || e->fixed();
	};
	take(kRxVlanCtag, f.ctag_strip, f.ctag_fixed);
	take(kRxVlanStag, f.stag_strip, f.stag_fixed);
	take("rx-vlan-filter", f.filter_on, f.filter_fixed);
	bool rx_all_fixed = true;
	take("rx-all", f.rx_all, rx_all_fixed);
	f.rx_all_changeable = !rx_all_fixed;
	auto meta = xdp_rx_meta_vlan_tag(dev.ifindex);
	if (!meta)
		return meta.error();
	f.meta_kfunc = *meta;
	f.driver = live_driver_name(dev.name);
	rx_vlan_apply_facts(f, features::nic_facts_running(f.driver));
	if (auto s = read_links(dev.ifindex, f); !s)
		return s.error();
	return f;
}

void rx_vlan_apply_facts(RxVlanFacts &f, const features::NicFacts &nic)
{
	f.nic = nic;
	// veth shows rx-vlan-hw-parse on but strips nothing: a tag is outside
	// the data when its sender's TX VLAN offload kept it there
	// (skb->vlan_tci); turning the features off changes nothing
	if (!nic.strip_by_feature.value)
		f.ctag_strip = f.stag_strip = false;
}

std::string vlan_filter_advice(const RxVlanFacts &f, const std::string &ifname)
{
	using features::VlanFilter;
	const features::NicFacts &n = f.nic;
	// rx-all opens the filter only where the driver says so (igb); mlx4
	// and mlx5 take it for "keep bad-FCS frames". A fact without a source
	// is not modelled for the driver: the live settings alone, as ever
	const bool rx_all_opens = n.vlan_filter_rx_all.source.empty() || n.vlan_filter_rx_all.value;
	const bool known = !n.vlan_filter.source.empty();
	if (!f.filter_on || f.promisc || (f.rx_all && rx_all_opens))
		return {};
	const std::string open = "ip link set " + ifname + " promisc on" +
				 (f.rx_all_changeable && rx_all_opens ? ", or ethtool -K " + ifname + " rx-all on" : "");
	const std::string who = (f.driver.empty() ? std::string("the driver") : f.driver) + " on " + ifname;
	// the host's filter (virtio_net's VIRTIO_NET_F_CTRL_VLAN, vmxnet3's
	// vfTable) drops the frames before the guest's XDP as a NIC's does
	const std::string filters = known && n.vlan_filter.value == VlanFilter::host
					    ? " has the host filter VLANs"
					    : " filters VLANs in hardware";
	if (known && n.vlan_filter.value == VlanFilter::after_first_vid) {
		// I40E_VLAN_ANY until a VID is registered
		if (!f.vlan_uppers)
			return {};
		return who + filters + " once a VID is registered: only the VIDs of its " +
		       std::to_string(f.vlan_uppers) + " VLAN device(s), and untagged frames, arrive (" + open + ")";
	}
	if (f.vlan_uppers)
		return f.filter_fixed ? who + filters + " (rx-vlan-filter on [fixed]): only the VIDs of its " +
						std::to_string(f.vlan_uppers) +
						" VLAN device(s) arrive; other tagged frames are dropped before XDP and TC (" +
						open + ")"
				      : std::string();
	if (f.filter_fixed)
		return who + filters + " (rx-vlan-filter on [fixed]) and no VLAN device registered a VID: tagged "
				       "frames are dropped before XDP and TC see them (" + open + ")";
	return who + filters + " (rx-vlan-filter on) and no VLAN device registered a VID: tagged frames " +
	       (known && n.vlan_filter.value == VlanFilter::drops_unregistered ? "are" : "may be") +
	       " dropped before XDP and TC see them (ethtool -K " + ifname + " rx-vlan-filter off, or " + open + ")";
}

void warn_vlan_filter(const RxVlanFacts &f, const std::string &ifname)
{
	std::string line = vlan_filter_advice(f, ifname);
	if (!line.empty())
		notice(line);
}

Result<std::string> rx_vlan_take(const Netdev &dev, const RxVlanFacts &f, const std::string &holder,
				 TagReader reader, bool keep)
{
	// a pin directory only where there is something to record: a device
	// that strips nothing (veth) keeps none for a recv
	const bool strips = (f.ctag_strip && !f.ctag_fixed) || (f.stag_strip && !f.stag_fixed);
	if (!keep && strips) {
		if (auto s = make_dirs(pin_dir(dev)); !s)
			return s.error();
		if (auto s = mark_pin_dir(dev); !s)
			return s.error();
	}
	return rx_vlan_take_at(pin_dir(dev), dev.name, f, holder, reader, keep, ethtool_features_set);
}

Result<std::string> rx_vlan_take_at(const std::string &dir, const std::string &ifname, const RxVlanFacts &f,
				    const std::string &holder, TagReader reader, bool keep, const FeatureSetter &set)
{
	const Netdev dev{ifname, 0};
	std::vector<std::string> lines;
	std::vector<std::string> changeable, fixed;
	for (auto [name, on, fx] : {std::tuple{kRxVlanCtag, f.ctag_strip, f.ctag_fixed},
				    std::tuple{kRxVlanStag, f.stag_strip, f.stag_fixed}}) {
		if (!on)
			continue;
		(fx ? fixed : changeable).push_back(name);
	}
	if (keep && !changeable.empty())
		lines.push_back(join(changeable, " and ") + " stays on on " + dev.name +
				" (--keep-rx-vlan): the device strips those tags before XDP; " +
				stripped_consequence(f, reader));
	if (!keep && (!changeable.empty() || ::access(dir.c_str(), F_OK) == 0)) {
		auto lock = lock_dir(dir);
		if (!lock)
			return lock.error();
		std::vector<std::string> off = split(read_link(dir + "/" + kOffRecord));
		if (!changeable.empty()) {
			std::vector<std::pair<std::string, bool>> want;
			for (const auto &n : changeable)
				want.emplace_back(n, false);
			// recorded first: a crash in between restores a setting
			// that may not have changed, never loses one
			std::vector<std::string> all = off;
			all.insert(all.end(), changeable.begin(), changeable.end());
			if (auto s = write_link(dir + "/" + kOffRecord, join(all)); !s)
				return s.error();
			if (auto s = set(dev.name, want); !s) {
				if (off.empty())
					(void)::unlink((dir + "/" + kOffRecord).c_str());
				else
					(void)write_link(dir + "/" + kOffRecord, join(off));
				return s.error();
			}
			off = all;
			lines.push_back("turned " + join(changeable, " and ") + " off on " + dev.name + " while " +
					reader_name(reader) + " is attached (the device strips tags before XDP otherwise); "
					"detach restores it");
		}
		if (!off.empty())
			if (auto s = write_link(dir + "/" + kHolderPrefix + holder, "1"); !s)
				return s.error();
	}
	if (!fixed.empty())
		lines.push_back(join(fixed, " and ") + " is on [fixed] on " + dev.name +
				": the device strips those tags before XDP; " + stripped_consequence(f, reader));
	for (const auto &l : lines)
		notice(l);
	return join(lines, "; ");
}

Status rx_vlan_release(const Netdev &dev, const std::string &holder)
{
	return rx_vlan_release_at(pin_dir(dev), dev.name, holder, ethtool_features_set);
}

Status rx_vlan_release_at(const std::string &dir, const std::string &ifname, const std::string &holder,
			  const FeatureSetter &set)
{
	const Netdev dev{ifname, 0};
	const std::string me = dir + "/" + kHolderPrefix + holder;
	if (read_link(me).empty())
		return ok();
	auto lock = lock_dir(dir);
	if (!lock)
		return lock.error();
	if (::unlink(me.c_str()) && errno != ENOENT)
		return errno_error("remove " + me, errno);
	if (!holders_in(dir).empty())
		return ok();
	std::vector<std::string> off = split(read_link(dir + "/" + kOffRecord));
	if (!off.empty()) {
		std::vector<std::pair<std::string, bool>> want;
		for (const auto &n : off)
			want.emplace_back(n, true);
		if (auto s = set(dev.name, want); !s)
			return runtime_error("restore " + join(off, " and ") + " on " + dev.name + ": " + s.error().msg,
					     s.error().err);
		notice("turned " + join(off, " and ") + " on again on " + dev.name);
	}
	(void)::unlink((dir + "/" + kOffRecord).c_str());
	// made for the record alone (a recv): nothing but the device record left
	if (auto left = entries(dir); left.size() == 1 && left[0] == "device")
		return remove_pin_dir(dir);
	return ok();
}

RxVlanRecord rx_vlan_record(const std::string &dir)
{
	return RxVlanRecord{split(read_link(dir + "/" + kOffRecord)), holders_in(dir)};
}

} // namespace xoffload
