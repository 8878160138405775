// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// ethtool netlink features (get, set, bitset parsing) and the netdev genl
// family's XDP RX metadata bits, through libmnl (nl.hpp).
#include "xoffload/core/ethtool_features.hpp"

#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "nl.hpp"

// linux/netdev.h (6.3+) is newer than some build hosts' kernel headers
#ifndef NETDEV_CMD_DEV_GET
#define NETDEV_CMD_DEV_GET 1
#define NETDEV_A_DEV_IFINDEX 1
#endif
#define XO_NETDEV_A_DEV_XDP_RX_METADATA_FEATURES 5	/* 6.8+ */
#define XO_NETDEV_XDP_RX_METADATA_VLAN_TAG 4

namespace xoffload {

const EthtoolFeature *EthtoolFeatures::find(std::string_view name) const
{
	auto it = by_name.find(name);
	return it == by_name.end() ? nullptr : &it->second;
}

bool EthtoolFeatures::active(std::string_view name) const
{
	const EthtoolFeature *f = find(name);
	return f && f->active;
}

namespace {

Error malformed(const std::string &what)
{
	return runtime_error("malformed ethtool bitset: " + what, EPROTO);
}

std::string bit_name(const std::vector<std::string> &names, uint32_t i)
{
	return i < names.size() ? names[i] : "bit" + std::to_string(i);
}

} // namespace

Result<std::map<std::string, bool>> parse_ethtool_bitset(const nlattr *nest, const std::vector<std::string> &names)
{
	bool nomask = false;
	uint32_t size = 0;
	const nlattr *bits = nullptr, *value = nullptr, *mask = nullptr;
	bool bad = false;
	nl::for_each_nested(nest, [&](const nlattr *a) {
		switch (mnl_attr_get_type(a)) {
		case ETHTOOL_A_BITSET_NOMASK:
			nomask = true;
			break;
		case ETHTOOL_A_BITSET_SIZE:
			if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
				bad = true;
			else
				size = mnl_attr_get_u32(a);
			break;
		case ETHTOOL_A_BITSET_BITS:
			bits = a;
			break;
		case ETHTOOL_A_BITSET_VALUE:
			value = a;
			break;
		case ETHTOOL_A_BITSET_MASK:
			mask = a;
			break;
		}
	});
	if (bad)
		return malformed("size");
	std::map<std::string, bool> out;
	if (value) {
		// compact: 32-bit words, bit i in word i / 32
		const size_t words = (size + 31) / 32;
		if (mnl_attr_get_payload_len(value) < words * 4 || (mask && mnl_attr_get_payload_len(mask) < words * 4))
			return malformed("compact value shorter than its size");
		if (!nomask && !mask)
			return malformed("compact bitset without mask or nomask");
		auto word = [](const nlattr *a, size_t w) {
			uint32_t v;
			std::memcpy(&v, static_cast<const char *>(mnl_attr_get_payload(a)) + w * 4, 4);
			return v;
		};
		for (uint32_t i = 0; i < size; i++) {
			bool v = word(value, i / 32) >> (i % 32) & 1;
			if (nomask ? v : (word(mask, i / 32) >> (i % 32) & 1))
				out[bit_name(names, i)] = v;
		}
		return out;
	}
	if (!bits)
		return out;	// a verbose list with no bit set
	nl::for_each_nested(bits, [&](const nlattr *b) {
		if (mnl_attr_get_type(b) != ETHTOOL_A_BITSET_BITS_BIT) {
			bad = true;
			return;
		}
		std::string name;
		bool has_index = false, val = false;
		uint32_t index = 0;
		nl::for_each_nested(b, [&](const nlattr *f) {
			switch (mnl_attr_get_type(f)) {
			case ETHTOOL_A_BITSET_BIT_INDEX:
				if (mnl_attr_validate(f, MNL_TYPE_U32) >= 0) {
					index = mnl_attr_get_u32(f);
					has_index = true;
				}
				break;
			case ETHTOOL_A_BITSET_BIT_NAME:
				if (mnl_attr_validate(f, MNL_TYPE_NUL_STRING) >= 0)
					name = mnl_attr_get_str(f);
				break;
			case ETHTOOL_A_BITSET_BIT_VALUE:
				val = true;
				break;
			}
		});
		if (name.empty() && !has_index) {
			bad = true;
			return;
		}
		if (name.empty())
			name = bit_name(names, index);
		// in a list every bit named is set
		out[name] = nomask || val;
	});
	if (bad)
		return malformed("verbose bit without index or name");
	return out;
}

Result<EthtoolFeatures> parse_features_reply(const nlmsghdr *nlh, const std::vector<std::string> &names)
{
	EthtoolFeatures fs;
	std::optional<Error> err;
	nl::for_each_attr(nlh, sizeof(genlmsghdr), [&](const nlattr *a) {
		uint16_t t = mnl_attr_get_type(a);
		bool EthtoolFeature::*field = nullptr;
		switch (t) {
		case ETHTOOL_A_FEATURES_HW:
			field = &EthtoolFeature::hw;
			break;
		case ETHTOOL_A_FEATURES_WANTED:
			field = &EthtoolFeature::wanted;
			break;
		case ETHTOOL_A_FEATURES_ACTIVE:
			field = &EthtoolFeature::active;
			break;
		case ETHTOOL_A_FEATURES_NOCHANGE:
			field = &EthtoolFeature::nochange;
			break;
		default:
			return;
		}
		auto bits = parse_ethtool_bitset(a, names);
		if (!bits) {
			err = bits.error();
			return;
		}
		for (const auto &[name, v] : *bits)
			fs.by_name[name].*field = v;
	});
	if (err)
		return *err;
	return fs;
}

namespace {

} // namespace

Result<EthtoolFeatures> ethtool_features_get(const std::string &ifname)
{
	auto es = nl::ethtool_socket();
	if (!es)
		return es.error();
	nl::Message msg;
	// verbose bitsets: every bit carries its name, no string set to fetch
	nl::ethtool_put_request(msg, es->family, ETHTOOL_MSG_FEATURES_GET, ETHTOOL_A_FEATURES_HEADER, ifname);
	std::optional<Result<EthtoolFeatures>> got;
	auto s = es->sock.request(msg, "ethtool features of " + ifname, [&](const nlmsghdr *h) {
		got = parse_features_reply(h);
		return got->ok() ? MNL_CB_OK : MNL_CB_STOP;
	});
	if (!s)
		return s.error();
	if (!got)
		return runtime_error("ethtool features of " + ifname + ": no reply", EPROTO);
	return std::move(*got);
}

Status ethtool_features_set(const std::string &ifname, const std::vector<std::pair<std::string, bool>> &want)
{
	auto es = nl::ethtool_socket();
	if (!es)
		return es.error();
	nl::Message msg;
	nl::ethtool_put_request(msg, es->family, ETHTOOL_MSG_FEATURES_SET, ETHTOOL_A_FEATURES_HEADER, ifname);
	nlmsghdr *nlh = msg.header();
	nlattr *wanted = mnl_attr_nest_start(nlh, ETHTOOL_A_FEATURES_WANTED);
	nlattr *bits = mnl_attr_nest_start(nlh, ETHTOOL_A_BITSET_BITS);
	std::string names;
	for (const auto &[name, on] : want) {
		nlattr *bit = mnl_attr_nest_start(nlh, ETHTOOL_A_BITSET_BITS_BIT);
		mnl_attr_put_strz(nlh, ETHTOOL_A_BITSET_BIT_NAME, name.c_str());
		if (on)
			mnl_attr_put(nlh, ETHTOOL_A_BITSET_BIT_VALUE, 0, nullptr);
		mnl_attr_nest_end(nlh, bit);
		names += (names.empty() ? "" : ", ") + name + (on ? " on" : " off");
	}
	mnl_attr_nest_end(nlh, bits);
	mnl_attr_nest_end(nlh, wanted);
	const std::string what = "set " + names + " on " + ifname;
	if (auto s = es->sock.request(msg, what); !s)
		return s;
	auto now = ethtool_features_get(ifname);
	if (!now)
		return now.error();
	for (const auto &[name, on] : want)
		if (now->active(name) != on)
			return runtime_error(what + ": the driver kept " + name + (on ? " off" : " on"), EOPNOTSUPP);
	return ok();
}

Result<bool> xdp_rx_meta_vlan_tag(int ifindex)
{
	auto s = nl::Socket::open(NETLINK_GENERIC);
	if (!s)
		return s.error();
	auto fam = nl::genl_family(*s, "netdev");
	if (!fam)
		return false;	// before 6.3: no netdev family, no metadata kfuncs
	nl::Message msg;
	nlmsghdr *nlh = msg.header();
	nlh->nlmsg_type = *fam;
	auto *g = msg.put_extra<genlmsghdr>();
	g->cmd = NETDEV_CMD_DEV_GET;
	g->version = 1;
	mnl_attr_put_u32(nlh, NETDEV_A_DEV_IFINDEX, static_cast<uint32_t>(ifindex));
	uint64_t meta = 0;
	auto r = s->request(msg, "netdev features of ifindex " + std::to_string(ifindex), [&](const nlmsghdr *h) {
		nl::for_each_attr(h, sizeof(genlmsghdr), [&](const nlattr *a) {
			if (mnl_attr_get_type(a) != XO_NETDEV_A_DEV_XDP_RX_METADATA_FEATURES)
				return;
			if (mnl_attr_validate(a, MNL_TYPE_U64) >= 0)
				meta = mnl_attr_get_u64(a);
			else if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				meta = mnl_attr_get_u32(a);
		});
		return MNL_CB_OK;
	});
	if (!r)
		return r.error();
	return (meta & XO_NETDEV_XDP_RX_METADATA_VLAN_TAG) != 0;
}

} // namespace xoffload
