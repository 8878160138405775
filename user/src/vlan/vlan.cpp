// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// VLAN policy values and the control of the pinned VLAN maps.
#include "xoffload/vlan/vlan.hpp"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <fcntl.h>
#include <linux/membarrier.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "xoffload/core/parse.hpp"
#include "xoffload/core/owned.hpp"
#include "xoffload/core/pins.hpp"
#include "xdp_vlan.skel.h"

namespace xoffload {

VlanMapNames vlan_map_names()
{
	static const VlanMapNames names = [] {
		VlanMapNames n;
		Owned<xdp_vlan_bpf, xdp_vlan_bpf__destroy> x(xdp_vlan_bpf__open());
		if (x) {
			n.cfg = bpf_map__name(x->maps.xo_vlan_cfg);
			n.vid = bpf_map__name(x->maps.xo_vlan_vid);
			n.stats = bpf_map__name(x->maps.xo_vlan_stats);
		}
		return n;
	}();
	return names;
}

Result<uint16_t> parse_vid(std::string_view s)
{
	auto v = parse_number(s, "VID");
	if (!v)
		return v.error();
	if (*v < XO_VID_MIN || *v > XO_VID_MAX)
		return usage_error("VID " + std::string(s) + " outside 1..4094");
	return static_cast<uint16_t>(*v);
}

Result<uint8_t> parse_pcp(std::string_view s)
{
	auto v = parse_number(s, "PCP");
	if (!v)
		return v.error();
	if (*v < 0 || *v > 7)
		return usage_error("PCP " + std::string(s) + " outside 0..7");
	return static_cast<uint8_t>(*v);
}

Result<uint16_t> parse_tpid(std::string_view s)
{
	if (s == "802.1Q" || s == "802.1q" || s == "0x8100")
		return uint16_t{XO_ETH_P_8021Q};
	if (s == "802.1ad" || s == "802.1AD" || s == "0x88a8" || s == "0x88A8")
		return uint16_t{XO_ETH_P_8021AD};
	return usage_error("unknown VLAN protocol '" + std::string(s) + "' (802.1Q or 802.1ad)");
}

Result<Dir> parse_dir(std::string_view s)
{
	if (s == "ingress")
		return Dir::ingress;
	if (s == "egress")
		return Dir::egress;
	return usage_error("unknown direction '" + std::string(s) + "' (ingress or egress)");
}

const char *dir_name(Dir d)
{
	return d == Dir::ingress ? "ingress" : "egress";
}

const char *vlan_counter_name(unsigned stat)
{
	static constexpr const char *names[kVlanStats] = {
		"passed",	     "modified",	    "popped",
		"pushed",	     "rewritten",	    "dropped-malformed",
		"dropped-not-allowed", "dropped-no-headroom", "dropped-too-deep",
		"dropped-tag-in-metadata",
	};
	return stat < kVlanStats ? names[stat] : "?";
}

VlanStatSet vlan_stats_of(const std::array<xo_counter, XO_VLAN_CNT_MAX> &raw)
{
	VlanStatSet s{};
	auto at = [&](VlanStat x) -> xo_counter & { return s[static_cast<unsigned>(x)]; };
	auto add = [](xo_counter &into, const xo_counter &c) {
		into.packets += c.packets;
		into.bytes += c.bytes;
	};
	add(at(VlanStat::passed), raw[XO_VLAN_CNT_PASSED]);
	add(at(VlanStat::popped), raw[XO_VLAN_CNT_POPPED]);
	for (unsigned r : {XO_VLAN_CNT_PUSHED, XO_VLAN_CNT_REWRITTEN_PUSHED})
		add(at(VlanStat::pushed), raw[r]);
	for (unsigned r : {XO_VLAN_CNT_REWRITTEN, XO_VLAN_CNT_REWRITTEN_PUSHED})
		add(at(VlanStat::rewritten), raw[r]);
	for (unsigned r : {XO_VLAN_CNT_POPPED, XO_VLAN_CNT_PUSHED, XO_VLAN_CNT_REWRITTEN, XO_VLAN_CNT_REWRITTEN_PUSHED})
		add(at(VlanStat::modified), raw[r]);
	add(at(VlanStat::dropped_malformed), raw[XO_VLAN_CNT_DROP_MALFORMED]);
	add(at(VlanStat::dropped_not_allowed), raw[XO_VLAN_CNT_DROP_NOT_ALLOWED]);
	add(at(VlanStat::dropped_no_headroom), raw[XO_VLAN_CNT_DROP_NO_HEADROOM]);
	add(at(VlanStat::dropped_too_deep), raw[XO_VLAN_CNT_DROP_TOO_DEEP]);
	add(at(VlanStat::dropped_tag_in_metadata), raw[XO_VLAN_CNT_DROP_TAG_IN_META]);
	return s;
}

xo_vlan_tag TagSpec::to_abi() const
{
	uint16_t tci = static_cast<uint16_t>((pcp & 7) << 13 | (dei ? 1 : 0) << 12 | (vid & 0x0fff));
	return xo_vlan_tag{htons(tpid), htons(tci)};
}

TagSpec TagSpec::from_abi(const xo_vlan_tag &t)
{
	uint16_t tci = ntohs(t.tci);
	return TagSpec{ntohs(t.tpid), static_cast<uint16_t>(tci & 0x0fff),
		       static_cast<uint8_t>(tci >> 13), (tci & 0x1000) != 0};
}

xo_vlan_policy make_pop_policy(const xo_vlan_policy &cur, unsigned depth)
{
	xo_vlan_policy p{};
	p.abi_version = XO_ABI_VERSION;
	p.flags = cur.flags;
	p.action = XO_VLAN_ACT_POP;
	p.pop_depth = static_cast<uint8_t>(depth);
	return p;
}

xo_vlan_policy make_push_policy(const xo_vlan_policy &cur, const std::vector<TagSpec> &tags)
{
	xo_vlan_policy p{};
	p.abi_version = XO_ABI_VERSION;
	p.flags = cur.flags;
	p.action = XO_VLAN_ACT_PUSH;
	p.push_count = static_cast<uint8_t>(tags.size() > XO_VLAN_MAX_DEPTH ? XO_VLAN_MAX_DEPTH : tags.size());
	for (unsigned i = 0; i < p.push_count; i++)
		p.push[i] = tags[i].to_abi();
	return p;
}

xo_vlan_policy make_clear_policy()
{
	xo_vlan_policy p{};
	p.abi_version = XO_ABI_VERSION;
	return p;
}

std::string describe_policy(const xo_vlan_policy &p)
{
	std::string s;
	char buf[96];

	switch (p.action) {
	case XO_VLAN_ACT_POP:
		s = "pop " + std::to_string(p.pop_depth);
		break;
	case XO_VLAN_ACT_PUSH:
		s = "push";
		for (unsigned i = 0; i < p.push_count && i < XO_VLAN_MAX_DEPTH; i++) {
			TagSpec t = TagSpec::from_abi(p.push[i]);
			std::snprintf(buf, sizeof(buf), " %s vid %u pcp %u%s",
				      t.tpid == XO_ETH_P_8021AD ? "802.1ad" : "802.1Q", t.vid, t.pcp,
				      t.dei ? " dei" : "");
			s += buf;
		}
		break;
	default:
		s = "none";
	}
	if (p.flags & XO_VLAN_F_ALLOW)
		s += ", allow-list on";
	if (p.flags & XO_VLAN_F_REWRITE)
		s += ", rewrite on";
	return s;
}

namespace {

// Waits until every XDP and TC program run that began before the call has
// ended (they run inside RCU read-side sections): MEMBARRIER_CMD_GLOBAL is
// synchronize_rcu(). Where the kernel refuses it (nohz_full), a pause far
// longer than any one program run.
void wait_for_readers()
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) != 0)
		usleep(20000);
}

} // namespace

Result<VlanMaps> VlanMaps::open(const std::string &pin_dir, const std::string &ifname)
{
	VlanMapNames names = vlan_map_names();
	VlanMaps m;
	UniqueFd *fds[] = {&m.cfg_, &m.vid_, &m.stats_};
	const std::string *paths[] = {&names.cfg, &names.vid, &names.stats};

	for (int i = 0; i < 3; i++) {
		std::string path = pin_dir + "/" + *paths[i];
		int fd = bpf_obj_get(path.c_str());
		if (fd < 0) {
			if (errno == ENOENT)
				return runtime_error("vlan is not attached on " + ifname +
						     " (run: offload-tool attach " + ifname + " vlan)", ENOENT);
			return errno_error("open pinned map " + path, errno);
		}
		fds[i]->reset(fd);
	}
	// pins of an older layout cannot be read or written as this one's
	struct {
		int fd;
		uint32_t value_size, max_entries;
	} want[] = {{m.cfg_.get(), sizeof(xo_vlan_banks), XO_DIR_MAX},
		    {m.vid_.get(), sizeof(xo_vid_entry), XO_VLAN_BANKS * XO_DIR_MAX * XO_VID_SLOTS}};
	for (const auto &w : want) {
		bpf_map_info info{};
		uint32_t len = sizeof(info);
		if (bpf_obj_get_info_by_fd(w.fd, &info, &len))
			return errno_error("read pinned vlan map", errno);
		if (info.value_size != w.value_size || info.max_entries != w.max_entries)
			return runtime_error("the vlan maps pinned in " + pin_dir +
						     " were made by an older xoffload (before ABI 4): detach it from " +
						     ifname + " and remove " + pin_dir + ", then attach again",
					     EINVAL);
	}
	// the counters grow with the reasons (XO_VLAN_CNT_MAX)
	if (auto s = check_pinned_shape(pin_dir + "/" + names.stats,
					{BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(xo_vlan_stats), XO_HOOK_MAX, 0},
					ifname);
	    !s)
		return s.error();
	m.dir_.reset(::open(pin_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (!m.dir_.valid())
		return errno_error("open " + pin_dir, errno);
	return m;
}

Result<xo_vlan_banks> VlanMaps::banks(Dir d) const
{
	uint32_t key = static_cast<uint32_t>(d);
	xo_vlan_banks b{};
	if (bpf_map_lookup_elem(cfg_.get(), &key, &b))
		return errno_error("read vlan policy", errno);
	return b;
}

Result<uint32_t> VlanMaps::active_bank(Dir d) const
{
	auto b = banks(d);
	if (!b)
		return b.error();
	return b->active & 1;
}

Result<xo_vlan_policy> VlanMaps::policy(Dir d) const
{
	auto b = banks(d);
	if (!b)
		return b.error();
	return b->bank[b->active & 1];
}

Result<VlanMaps::VidTable> VlanMaps::vid_table(Dir d, uint32_t bank) const
{
	// one batch: the slots of a bank and direction are contiguous
	VidTable t(XO_VID_SLOTS);
	std::vector<uint32_t> keys(XO_VID_SLOTS);
	uint32_t first = xo_vid_key(bank, static_cast<uint32_t>(d), 0), prev = first - 1, out = 0;
	uint32_t count = XO_VID_SLOTS;
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	int err = bpf_map_lookup_batch(vid_.get(), first ? &prev : nullptr, &out, keys.data(), t.data(),
				       &count, &o);
	if ((err && errno != ENOENT) || count != XO_VID_SLOTS || keys[0] != first)
		return errno_error("read vid table", err ? errno : EIO);
	return t;
}

Status VlanMaps::commit(Dir d, const xo_vlan_policy &p, const VidTable &t)
{
	uint32_t key = static_cast<uint32_t>(d);
	auto b = banks(d);
	if (!b)
		return b.error();
	uint32_t next = (b->active & 1) ^ 1;

	// a frame that read `active` before the last flip may still be in the
	// bank written now
	wait_for_readers();
	std::vector<uint32_t> keys(XO_VID_SLOTS);
	for (uint32_t vid = 0; vid < XO_VID_SLOTS; vid++)
		keys[vid] = xo_vid_key(next, key, vid);
	uint32_t count = XO_VID_SLOTS;
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	if (bpf_map_update_batch(vid_.get(), keys.data(), t.data(), &count, &o) || count != XO_VID_SLOTS)
		return errno_error("write vid table", errno ? errno : EIO);

	xo_vlan_policy &v = b->bank[next];
	v = p;
	v.abi_version = XO_ABI_VERSION;
	v.bank = static_cast<uint8_t>(next);
	xo_vlan_policy_compile(&v);	// the programs act on op[]: derived on every write
	// the new bank first, `active` unchanged (the bytes of the active bank
	// are rewritten as they are); then the flip, the one byte that changes
	if (bpf_map_update_elem(cfg_.get(), &key, &*b, BPF_ANY))
		return errno_error("write vlan policy", errno);
	b->active = next;
	if (bpf_map_update_elem(cfg_.get(), &key, &*b, BPF_ANY))
		return errno_error("write vlan policy", errno);
	return ok();
}

template <typename Edit>
Status VlanMaps::change(Dir d, Edit edit)
{
	// released when dir_ closes, i.e. when the maps object goes away
	if (flock(dir_.get(), LOCK_EX))
		return errno_error("lock the vlan pin directory", errno);
	auto b = banks(d);
	if (!b)
		return b.error();
	auto t = vid_table(d, b->active & 1);
	if (!t)
		return t.error();
	xo_vlan_policy p = b->bank[b->active & 1];
	edit(p, *t);
	// the rewrite flag says whether any VID is translated
	bool rewrites = std::any_of(t->begin(), t->end(), [](const xo_vid_entry &e) { return e.rewrite_vid != 0; });
	p.flags = rewrites ? (p.flags | XO_VLAN_F_REWRITE) : (p.flags & ~XO_VLAN_F_REWRITE);
	return commit(d, p, *t);
}

Status VlanMaps::set_policy(Dir d, const xo_vlan_policy &p)
{
	return change(d, [&](xo_vlan_policy &cur, VidTable &) { cur = p; });
}

Status VlanMaps::upgrade()
{
	for (Dir d : {Dir::ingress, Dir::egress}) {
		auto p = policy(d);
		if (!p)
			return p.error();
		if (p->abi_version == 0 || p->abi_version == XO_ABI_VERSION)
			continue;	// never written (the zero default), or current
		if (auto s = set_policy(d, *p); !s)
			return s;
	}
	return ok();
}

Result<std::vector<VidRule>> VlanMaps::vid_rules(Dir d) const
{
	auto bank = active_bank(d);
	if (!bank)
		return bank.error();
	auto t = vid_table(d, *bank);
	if (!t)
		return t.error();
	std::vector<VidRule> out;
	for (uint16_t vid = XO_VID_MIN; vid <= XO_VID_MAX; vid++) {
		const xo_vid_entry &e = (*t)[vid];
		if (e.flags || e.rewrite_vid)
			out.push_back({vid, (e.flags & XO_VID_ALLOWED) != 0, e.rewrite_vid});
	}
	return out;
}

Status VlanMaps::set_allowed(Dir d, const std::vector<uint16_t> &vids, bool allowed)
{
	for (uint16_t vid : vids)
		if (vid < XO_VID_MIN || vid > XO_VID_MAX)
			return usage_error("VID " + std::to_string(vid) + " outside 1..4094");
	return change(d, [&](xo_vlan_policy &p, VidTable &t) {
		for (uint16_t vid : vids)
			t[vid].flags = allowed ? (t[vid].flags | XO_VID_ALLOWED) : (t[vid].flags & ~XO_VID_ALLOWED);
		p.flags |= XO_VLAN_F_ALLOW;
	});
}

Status VlanMaps::clear_allowed(Dir d)
{
	return change(d, [](xo_vlan_policy &p, VidTable &t) {
		for (auto &e : t)
			e.flags &= static_cast<uint16_t>(~XO_VID_ALLOWED);
		p.flags &= ~XO_VLAN_F_ALLOW;
	});
}

Status VlanMaps::set_rewrite(Dir d, uint16_t from, uint16_t to)
{
	if (from < XO_VID_MIN || from > XO_VID_MAX || to > XO_VID_MAX)
		return usage_error("VID outside 1..4094");
	return change(d, [&](xo_vlan_policy &, VidTable &t) { t[from].rewrite_vid = to; });
}

Status VlanMaps::clear(Dir d)
{
	return change(d, [](xo_vlan_policy &p, VidTable &t) {
		p = make_clear_policy();
		std::fill(t.begin(), t.end(), xo_vid_entry{});
	});
}

Status VlanMaps::replace(Dir d, const xo_vlan_policy &p, const std::vector<uint16_t> &allowed,
			 const std::vector<std::pair<uint16_t, uint16_t>> &rewrites)
{
	for (uint16_t vid : allowed)
		if (vid < XO_VID_MIN || vid > XO_VID_MAX)
			return usage_error("VID " + std::to_string(vid) + " outside 1..4094");
	for (auto [from, to] : rewrites)
		if (from < XO_VID_MIN || from > XO_VID_MAX || to < XO_VID_MIN || to > XO_VID_MAX)
			return usage_error("VID outside 1..4094");
	return change(d, [&](xo_vlan_policy &cur, VidTable &t) {
		cur = p;
		std::fill(t.begin(), t.end(), xo_vid_entry{});
		for (uint16_t vid : allowed)
			t[vid].flags |= XO_VID_ALLOWED;
		for (auto [from, to] : rewrites)
			t[from].rewrite_vid = to;
	});
}

Result<VlanCounters> VlanMaps::counters() const
{
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return errno_error("count possible CPUs", ncpu);
	std::vector<xo_vlan_stats> percpu(static_cast<size_t>(ncpu));
	VlanCounters c;
	for (uint32_t hook = 0; hook < XO_HOOK_MAX; hook++) {
		if (bpf_map_lookup_elem(stats_.get(), &hook, percpu.data()))
			return errno_error("read vlan counters", errno);
		std::array<xo_counter, XO_VLAN_CNT_MAX> raw{};
		for (const auto &v : percpu)
			for (uint32_t r = 0; r < XO_VLAN_CNT_MAX; r++) {
				raw[r].packets += v.c[r].packets;
				raw[r].bytes += v.c[r].bytes;
			}
		c.v[hook] = vlan_stats_of(raw);
	}
	return c;
}

} // namespace xoffload
