// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Geneve values and the control of the pinned xdp_geneve maps.
#include "xoffload/geneve/geneve.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <memory>

#include "xdp_geneve.skel.h"
#include "xoffload/core/netdev.hpp"
#include "xoffload/core/owned.hpp"
#include "xoffload/core/parse.hpp"
#include "xoffload/core/pins.hpp"

namespace xoffload {

namespace {

using Skel = Owned<xdp_geneve_bpf, xdp_geneve_bpf__destroy>;

// Creates every map of the object pinned under dir without loading the
// program (libbpf pins by name; existing pins are reused, if of this
// build's layout).
Status create_pinned(const std::string &dir, const std::string &ifname)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = dir.c_str());
	Skel skel(xdp_geneve_bpf__open_opts(&oo));
	if (!skel)
		return errno_error("open xdp_geneve object", errno);
	if (auto s = check_object_pins(skel->obj, ifname); !s)
		return s;
	bpf_program__set_autoload(skel->progs.xdp_geneve, false);
	bpf_program__set_autoload(skel->progs.xdp_geneve_mb, false);
	if (int err = xdp_geneve_bpf__load(skel.get()))
		return errno_error("create the geneve maps in " + dir, err);
	return ok();
}

int ncpus()
{
	int n = libbpf_num_possible_cpus();
	return n > 0 ? n : 1;
}

// Every entry of an xo_gnv_ports map, by port.
std::vector<GenevePort> ports_of(int fd)
{
	std::vector<GenevePort> out;
	uint32_t key = 0, next = 0;
	uint32_t *prev = nullptr;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		xo_gnv_port v{};
		if (!bpf_map_lookup_elem(fd, &next, &v))
			out.push_back({static_cast<uint16_t>(next), v.refcnt, v.flags});
		key = next;
		prev = &key;
	}
	std::sort(out.begin(), out.end(), [](auto &a, auto &b) { return a.port < b.port; });
	return out;
}

} // namespace

std::vector<std::string> geneve_map_names()
{
	static const std::vector<std::string> names = [] {
		std::vector<std::string> n;
		Skel s(xdp_geneve_bpf__open());
		if (s)
			for (bpf_map *m : {s->maps.xo_gnv_ports, s->maps.xo_gnv_rules, s->maps.xo_gnv_cfg,
					   s->maps.xo_gnv_optcls, s->maps.xo_gnv_xsks, s->maps.xo_gnv_cpus,
					   s->maps.xo_gnv_stats, s->maps.xo_gnv_vstats, s->maps.xo_gnv_vnibits})
				n.push_back(bpf_map__name(m));
		return n;
	}();
	return names;
}

Result<uint16_t> parse_geneve_port(std::string_view s)
{
	auto v = parse_number(s, "UDP port");
	if (!v)
		return v.error();
	if (*v < 1 || *v > 65535)
		return usage_error("UDP port " + std::string(s) + " outside 1..65535");
	return static_cast<uint16_t>(*v);
}

Result<uint32_t> parse_vni(std::string_view s)
{
	auto v = parse_number(s, "VNI");
	if (!v)
		return v.error();
	if (*v < 0 || *v > XO_GNV_VNI_MAX)
		return usage_error("VNI " + std::string(s) + " outside 0..16777215 (24 bits)");
	return static_cast<uint32_t>(*v);
}

Result<uint16_t> parse_option_class(std::string_view s)
{
	auto v = parse_number(s, "option class");
	if (!v)
		return v.error();
	if (*v < 0 || *v > 0xffff)
		return usage_error("option class " + std::string(s) + " outside 0..0xffff");
	return static_cast<uint16_t>(*v);
}

Result<uint32_t> parse_geneve_action(std::string_view s)
{
	for (uint32_t a = 0; a < XO_GNV_ACT_MAX; a++)
		if (s == geneve_action_name(a))
			return a;
	return usage_error("unknown action '" + std::string(s) + "' (pass, drop, decap, xsk or cpu)");
}

const char *geneve_action_name(uint32_t action)
{
	static constexpr const char *names[XO_GNV_ACT_MAX] = {"pass", "drop", "decap", "xsk", "cpu"};
	return action < XO_GNV_ACT_MAX ? names[action] : "?";
}

const char *geneve_counter_name(unsigned stat)
{
	static constexpr const char *names[kGeneveStats] = {
		"not-geneve",	     "matched",		"passed",      "dropped-rule",
		"dropped-malformed", "dropped-critical-option", "bad-checksum", "decapped",
		"redirected",	     "no-target",		"dropped-cannot-decap",
		"dropped-options-unexamined",
	};
	return stat < kGeneveStats ? names[stat] : "?";
}

GeneveCounterSet geneve_stats_of(const std::array<xo_counter, XO_GNV_CNT_MAX> &raw)
{
	GeneveCounterSet s{};
	auto add = [&](GeneveStat x, unsigned r) {
		s[static_cast<unsigned>(x)].packets += raw[r].packets;
		s[static_cast<unsigned>(x)].bytes += raw[r].bytes;
	};
	add(GeneveStat::not_geneve, XO_GNV_CNT_NOT_GENEVE);
	for (unsigned r : {XO_GNV_CNT_PASSED, XO_GNV_CNT_NO_TARGET, XO_GNV_CNT_DROP_RULE, XO_GNV_CNT_BAD_CSUM,
			   XO_GNV_CNT_DECAPPED, XO_GNV_CNT_DECAP_FAILED, XO_GNV_CNT_DROP_CANNOT_DECAP,
			   XO_GNV_CNT_REDIRECTED})
		add(GeneveStat::matched, r);
	add(GeneveStat::passed, XO_GNV_CNT_PASSED);
	add(GeneveStat::passed, XO_GNV_CNT_NO_TARGET);
	add(GeneveStat::dropped_rule, XO_GNV_CNT_DROP_RULE);
	add(GeneveStat::dropped_malformed, XO_GNV_CNT_DROP_MALFORMED);
	add(GeneveStat::dropped_malformed, XO_GNV_CNT_DECAP_FAILED);
	add(GeneveStat::dropped_critical_option, XO_GNV_CNT_DROP_CRIT_OPT);
	add(GeneveStat::bad_checksum, XO_GNV_CNT_BAD_CSUM);
	add(GeneveStat::decapped, XO_GNV_CNT_DECAPPED);
	add(GeneveStat::redirected, XO_GNV_CNT_REDIRECTED);
	add(GeneveStat::no_target, XO_GNV_CNT_NO_TARGET);
	add(GeneveStat::dropped_cannot_decap, XO_GNV_CNT_DROP_CANNOT_DECAP);
	add(GeneveStat::dropped_options_unexamined, XO_GNV_CNT_DROP_OPTS_UNEXAMINED);
	return s;
}

Result<GeneveMaps> GeneveMaps::open(const std::string &pin_dir, const std::string &ifname, bool create)
{
	auto names = geneve_map_names();
	if (names.size() != 9)
		return runtime_error("xdp_geneve object has unexpected maps");
	std::string probe = pin_dir + "/" + names[0];
	if (!path_exists(probe)) {
		if (!create)
			return runtime_error("geneve is not set up on " + ifname + " (run: offload-tool attach " +
					     ifname + " geneve, or geneve port add)", ENOENT);
		if (auto s = make_dirs(pin_dir); !s)
			return s.error();
		if (auto s = create_pinned(pin_dir, ifname); !s)
			return s.error();
	}
	GeneveMaps m;
	UniqueFd *fds[] = {&m.ports_, &m.rules_, &m.cfg_, &m.optcls_, &m.xsks_, &m.cpus_, &m.stats_, &m.vstats_};
	for (size_t i = 0; i < 8; i++) {
		std::string path = pin_dir + "/" + names[i];
		int fd = bpf_obj_get(path.c_str());
		if (fd < 0)
			return errno_error("open pinned map " + path, errno);
		fds[i]->reset(fd);
	}
	// before ABI 5 the XSKMAP had one row of slots, for every queue
	bpf_map_info info{};
	uint32_t len = sizeof(info);
	if (bpf_obj_get_info_by_fd(m.xsks_.get(), &info, &len))
		return errno_error("read the XSKMAP of " + pin_dir, errno);
	if (info.max_entries != XO_GNV_XSK_SLOTS)
		return runtime_error("the geneve maps in " + pin_dir + " were pinned by an older xoffload (XSKMAP of " +
					     std::to_string(info.max_entries) + " slots, not one row per queue): " +
					     "offload-tool detach --purge " + ifname + ", then set Geneve up again",
				     EINVAL);
	// the VNI bitmap came after the other maps: pins of an older xoffload
	// lack it until the next change (put_cfg) or attach makes it
	const std::string bits = pin_dir + "/" + names[8];
	if (path_exists(bits)) {
		if (auto s = check_pinned_shape(bits, {BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(__u64),
						       XO_GNV_VNIBITS_WORDS, 0},
						ifname);
		    !s)
			return s.error();
		m.vnibits_.reset(bpf_obj_get(bits.c_str()));
		if (!m.vnibits_.valid())
			return errno_error("open pinned map " + bits, errno);
	}
	m.pin_dir_ = pin_dir;
	m.ifname_ = ifname;
	// the counters grow with the reasons (XO_GNV_CNT_MAX)
	for (auto [i, entries] : {std::pair<size_t, uint32_t>{6, 1}, {7, XO_GNV_MAX_RULES + 1}})
		if (auto s = check_pinned_shape(pin_dir + "/" + names[i],
						{BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(xo_gnv_stats), entries, 0},
						ifname);
		    !s)
			return s.error();
	m.dir_.reset(::open(pin_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (!m.dir_.valid())
		return errno_error("open " + pin_dir, errno);
	return m;
}

Status GeneveMaps::lock()
{
	// released when dir_ closes, i.e. when the maps object goes away
	if (flock(dir_.get(), LOCK_EX))
		return errno_error("lock the geneve pin directory", errno);
	return ok();
}

void GeneveMaps::unlock()
{
	flock(dir_.get(), LOCK_UN);
}

Result<uint32_t> GeneveMaps::port_add(uint16_t port)
{
	auto p = port_change(port, 1);
	if (!p)
		return p.error();
	return p->refcnt;
}

Result<uint32_t> GeneveMaps::port_del(uint16_t port)
{
	auto p = port_change(port, -1);
	if (!p)
		return p.error();
	return p->refcnt;
}

Result<GenevePort> GeneveMaps::port(uint16_t port) const
{
	uint32_t key = port;
	xo_gnv_port v{};
	if (bpf_map_lookup_elem(ports_.get(), &key, &v) && errno != ENOENT)
		return errno_error("read port registry", errno);
	return GenevePort{port, v.refcnt, v.flags};
}

Result<GenevePort> GeneveMaps::port_change(uint16_t port, int delta, uint32_t set, uint32_t clear)
{
	if (auto s = lock(); !s)
		return s.error();
	uint32_t key = port;
	xo_gnv_port v{};
	if (bpf_map_lookup_elem(ports_.get(), &key, &v)) {
		if (errno != ENOENT)
			return errno_error("read port registry", errno);
		if (delta <= 0)
			return runtime_error("UDP port " + std::to_string(port) + " is not registered", ENOENT);
	}
	v.flags = (v.flags | set) & ~clear;
	if (delta < 0 && v.refcnt <= 1) {
		GenevePort gone{port, 0, v.flags | set};
		if (bpf_map_delete_elem(ports_.get(), &key))
			return errno_error("write port registry", errno);
		if (auto s = bump_gen(); !s)
			return s.error();
		return gone;
	}
	bool added = !v.refcnt;
	v.refcnt = delta > 0 ? v.refcnt + 1 : delta < 0 ? v.refcnt - 1 : v.refcnt;
	if (bpf_map_update_elem(ports_.get(), &key, &v, BPF_ANY)) {
		if (errno == E2BIG)
			return runtime_error("port registry full (" + std::to_string(XO_GNV_MAX_PORTS) + " ports)", E2BIG);
		return errno_error("write port registry", errno);
	}
	// the programs read only whether the port is there
	if (added) {
		if (auto s = bump_gen(); !s)
			return s.error();
	}
	return GenevePort{port, v.refcnt, v.flags};
}

Result<std::vector<GenevePort>> GeneveMaps::ports() const
{
	return ports_of(ports_.get());
}

Result<std::vector<GenevePort>> pinned_geneve_ports(const std::string &pin_dir)
{
	auto names = geneve_map_names();
	if (names.empty())
		return runtime_error("xdp_geneve object has unexpected maps");
	const std::string path = pin_dir + "/" + names[0];
	UniqueFd fd(bpf_obj_get(path.c_str()));
	if (!fd.valid())
		return errno == ENOENT ? Result<std::vector<GenevePort>>(std::vector<GenevePort>{})
				       : errno_error("open pinned map " + path, errno);
	return ports_of(fd.get());
}

Status sync_pinned_vnibits(const std::string &pin_dir, const std::string &ifname)
{
	const auto names = geneve_map_names();
	if (names.empty() || !path_exists(pin_dir + "/" + names[0]))
		return ok();
	auto m = GeneveMaps::open(pin_dir, ifname, false);
	if (!m)
		return m.error();
	return m->sync_vnibits();
}

Result<xo_gnv_cfg> GeneveMaps::cfg() const
{
	uint32_t zero = 0;
	xo_gnv_cfg c{};
	if (bpf_map_lookup_elem(cfg_.get(), &zero, &c))
		return errno_error("read geneve config", errno);
	return c;
}

Status GeneveMaps::put_cfg(uint32_t set, uint32_t clear)
{
	// read, changed and written under the lock: no other writer (of this
	// xoffload or an older one, which locks too) in between, so the gen
	// written is the next of the one read and the bitmap's state is known
	if (auto s = lock(); !s)
		return s;
	auto c = cfg();
	if (!c)
		return c.error();
	uint32_t zero = 0;
	xo_gnv_cfg v = *c;
	v.abi_version = XO_ABI_VERSION;
	v.flags = (v.flags | set) & ~clear;
	// the VNI bitmap, in step for c.gen when every change since was ours
	// (rule_set and rule_del keep it so), otherwise made anew from the
	// rules; the new gen then says it is in step
	if (auto s = vnibits_ensure(); !s)
		return s;
	if (vnibits_fresh_ || c->vnibits_gen != c->gen)
		if (auto s = vnibits_rebuild(); !s)
			return s;
	// every change invalidates the programs' per-CPU caches; the next
	// generation differs in one bit, so no frame can read a third value
	v.gen = xo_gnv_gen_next(c->gen);
	v.vnibits_gen = v.gen;
	if (bpf_map_update_elem(cfg_.get(), &zero, &v, BPF_ANY))
		return errno_error("write geneve config", errno);
	return ok();
}

Status GeneveMaps::sync_vnibits()
{
	// in step: nothing to write, no lock taken (a writer that leaves it out
	// of step later also leaves the program off the bitmap); otherwise
	// put_cfg looks again under the lock
	auto c = cfg();
	if (!c)
		return c.error();
	if (vnibits_.valid() && c->vnibits_gen == c->gen)
		return ok();
	return put_cfg();
}

namespace {

void set_vnibit(std::vector<uint64_t> &words, uint32_t vni)
{
	const uint32_t bit = xo_gnv_vnibit(vni);
	words[bit / 64] |= 1ULL << (bit % 64);
}

} // namespace

// The bitmap the rules make: a bit for each VNI with a rule.
Result<std::vector<uint64_t>> GeneveMaps::vnibits_of_rules() const
{
	auto rs = rules();
	if (!rs)
		return rs.error();
	std::vector<uint64_t> words(XO_GNV_VNIBITS_WORDS);
	for (const auto &r : *rs)
		if (r.vni != XO_GNV_VNI_DEFAULT)
			set_vnibit(words, r.vni);
	return words;
}

Status GeneveMaps::vnibits_write(uint32_t word, uint64_t bits)
{
	uint64_t cur = 0;
	if (!bpf_map_lookup_elem(vnibits_.get(), &word, &cur) && cur == bits)
		return ok();
	if (bpf_map_update_elem(vnibits_.get(), &word, &bits, BPF_ANY))
		return errno_error("write the VNI bitmap", errno);
	return ok();
}

Status GeneveMaps::vnibits_ensure()
{
	if (vnibits_.valid())
		return ok();
	const std::string path = pin_dir_ + "/" + geneve_map_names()[8];
	vnibits_.reset(bpf_obj_get(path.c_str()));	// pinned since this opened
	if (vnibits_.valid())
		return ok();
	// pins of an older xoffload (or the pin removed): the bitmap joins them
	// (libbpf reuses the pins there and pins what is missing), zero until
	// made from the rules, whatever the config says
	if (auto s = create_pinned(pin_dir_, ifname_); !s)
		return s;
	vnibits_.reset(bpf_obj_get(path.c_str()));
	if (!vnibits_.valid())
		return errno_error("open pinned map " + path, errno);
	vnibits_fresh_ = true;
	return ok();
}

// Under put_cfg's lock, vnibits_ensure() done.
Status GeneveMaps::vnibits_rebuild()
{
	auto words = vnibits_of_rules();
	if (!words)
		return words.error();
	for (uint32_t w = 0; w < XO_GNV_VNIBITS_WORDS; w++)
		if (auto s = vnibits_write(w, (*words)[w]); !s)
			return s;
	vnibits_fresh_ = false;
	return ok();
}

// The word of @vni's bit made anew from the rules (after a delete: its bit
// goes unless another VNI with a rule shares it).
Status GeneveMaps::vnibits_redo_word(uint32_t vni)
{
	if (!vnibits_.valid())
		return ok();	// put_cfg makes the whole bitmap
	auto words = vnibits_of_rules();
	if (!words)
		return words.error();
	const uint32_t w = xo_gnv_vnibit(vni) / 64;
	return vnibits_write(w, (*words)[w]);
}

Status GeneveMaps::bump_gen()
{
	// after the map write: a program that cached the old value did so
	// under the old gen (see struct xo_gnv_cache)
	return put_cfg();
}

Status GeneveMaps::zero_slot(uint32_t slot)
{
	std::vector<xo_gnv_stats> zero(static_cast<size_t>(ncpus()));
	if (bpf_map_update_elem(vstats_.get(), &slot, zero.data(), BPF_ANY))
		return errno_error("reset per-VNI counters", errno);
	return ok();
}

Status GeneveMaps::rule_set(const GeneveRule &r)
{
	if (r.action >= XO_GNV_ACT_MAX)
		return usage_error("unknown action");
	uint32_t q = r.queues ? r.queues : 1;
	if (q > XO_GNV_MAX_QUEUES)
		return usage_error("queues must be 1.." + std::to_string(XO_GNV_MAX_QUEUES));
	if (r.action == XO_GNV_ACT_CPU) {
		// a CPUMAP key is the CPU itself: slots 0..q-1 are CPUs 0..q-1
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		if (online > 0 && q > static_cast<uint32_t>(online))
			return usage_error("--queues " + std::to_string(q) + " for cpu: only " +
					   std::to_string(online) + " CPUs online");
		for (uint32_t slot = 0; slot < q; slot++) {
			bpf_cpumap_val v{};
			v.qsize = 2048;
			if (bpf_map_update_elem(cpus_.get(), &slot, &v, BPF_ANY))
				return errno_error("set CPUMAP entry of CPU " + std::to_string(slot), errno);
		}
	}
	xo_gnv_rule v{r.action, static_cast<__u16>(q), XO_GNV_SLOT_DEFAULT};
	if (r.vni == XO_GNV_VNI_DEFAULT) {
		// one hash update replaces the whole rule: no frame sees half of it
		uint32_t key = XO_GNV_VNI_DEFAULT;
		if (bpf_map_update_elem(rules_.get(), &key, &v, BPF_ANY))
			return errno_error("write default rule", errno);
		return bump_gen();
	}
	if (r.vni > XO_GNV_VNI_MAX)
		return usage_error("VNI outside 0..16777215");
	// a VNI keeps its counter slot when its rule is replaced; a new one
	// takes the lowest free slot, zeroed before the rule is visible
	if (auto s = lock(); !s)
		return s;
	auto cur = rules();
	if (!cur)
		return cur.error();
	std::vector<bool> used(XO_GNV_MAX_RULES + 1);
	for (const auto &x : *cur) {
		if (x.vni == XO_GNV_VNI_DEFAULT)
			continue;	// slot 0, never taken by a VNI
		if (x.vni == r.vni)
			v.slot = static_cast<__u16>(x.slot);
		if (x.slot <= XO_GNV_MAX_RULES)
			used[x.slot] = true;
	}
	if (!v.slot) {
		for (uint32_t i = 1; i <= XO_GNV_MAX_RULES && !v.slot; i++)
			if (!used[i])
				v.slot = static_cast<__u16>(i);
		if (!v.slot)
			return runtime_error("rule table full (" + std::to_string(XO_GNV_MAX_RULES) + " VNIs)", E2BIG);
		if (auto s = zero_slot(v.slot); !s)
			return s;
	}
	// its bit before the rule: a bit without a rule costs a lookup, a rule
	// without its bit would not be seen (a bitmap just made here is all
	// made from the rules by the put_cfg after)
	if (auto s = vnibits_ensure(); !s)
		return s;
	const uint32_t bit = xo_gnv_vnibit(r.vni), w = bit / 64;
	uint64_t word = 0;
	if (bpf_map_lookup_elem(vnibits_.get(), &w, &word))
		return errno_error("read the VNI bitmap", errno);
	if (!((word >> (bit % 64)) & 1)) {
		word |= 1ULL << (bit % 64);
		if (bpf_map_update_elem(vnibits_.get(), &w, &word, BPF_ANY))
			return errno_error("write the VNI bitmap", errno);
	}
	uint32_t key = r.vni;
	if (bpf_map_update_elem(rules_.get(), &key, &v, BPF_ANY)) {
		if (errno == E2BIG)
			return runtime_error("rule table full (" + std::to_string(XO_GNV_MAX_RULES) + " VNIs)", E2BIG);
		return errno_error("write rule", errno);
	}
	return bump_gen();
}

Status GeneveMaps::rule_del(uint32_t vni)
{
	if (vni == XO_GNV_VNI_DEFAULT) {
		// no default rule: pass (the programs' answer to an absent key)
		uint32_t key = XO_GNV_VNI_DEFAULT;
		if (bpf_map_delete_elem(rules_.get(), &key) && errno != ENOENT)
			return errno_error("delete default rule", errno);
		return bump_gen();
	}
	if (auto s = lock(); !s)
		return s;
	uint32_t key = vni;
	xo_gnv_rule v{};
	if (bpf_map_lookup_elem(rules_.get(), &key, &v) || bpf_map_delete_elem(rules_.get(), &key)) {
		if (errno == ENOENT)
			return runtime_error("no rule for VNI " + std::to_string(vni), ENOENT);
		return errno_error("delete rule", errno);
	}
	// the bit after the rule is gone
	if (auto s = vnibits_redo_word(vni); !s)
		return s;
	if (auto s = bump_gen(); !s)
		return s;
	return v.slot ? zero_slot(v.slot) : ok();
}

Result<std::vector<GeneveRule>> GeneveMaps::rules() const
{
	std::vector<GeneveRule> out;
	uint32_t key = XO_GNV_VNI_DEFAULT, next = 0;
	xo_gnv_rule d{XO_GNV_ACT_PASS, 1, XO_GNV_SLOT_DEFAULT};
	if (bpf_map_lookup_elem(rules_.get(), &key, &d) && errno != ENOENT)
		return errno_error("read default rule", errno);
	out.push_back({XO_GNV_VNI_DEFAULT, d.action, d.queues ? d.queues : 1u, XO_GNV_SLOT_DEFAULT});
	uint32_t *prev = nullptr;
	while (!bpf_map_get_next_key(rules_.get(), prev, &next)) {
		xo_gnv_rule v{};
		if (next != XO_GNV_VNI_DEFAULT && !bpf_map_lookup_elem(rules_.get(), &next, &v))
			out.push_back({next, v.action, v.queues, v.slot});
		key = next;
		prev = &key;
	}
	std::sort(out.begin() + 1, out.end(), [](auto &a, auto &b) { return a.vni < b.vni; });
	return out;
}

Status GeneveMaps::option_known(uint16_t cls, bool known)
{
	uint32_t key = cls, one = 1;
	if (known) {
		if (bpf_map_update_elem(optcls_.get(), &key, &one, BPF_ANY))
			return errno_error("write known option classes", errno);
	} else if (bpf_map_delete_elem(optcls_.get(), &key) && errno != ENOENT) {
		return errno_error("write known option classes", errno);
	}
	return bump_gen();
}

Result<std::vector<uint16_t>> GeneveMaps::known_classes() const
{
	std::vector<uint16_t> out;
	uint32_t key = 0, next = 0;
	uint32_t *prev = nullptr;
	while (!bpf_map_get_next_key(optcls_.get(), prev, &next)) {
		out.push_back(static_cast<uint16_t>(next));
		key = next;
		prev = &key;
	}
	std::sort(out.begin(), out.end());
	return out;
}

Status GeneveMaps::set_verify_csum(bool on)
{
	return on ? put_cfg(XO_GNV_F_VERIFY_CSUM, 0) : put_cfg(0, XO_GNV_F_VERIFY_CSUM);
}

Status GeneveMaps::set_decap_cpumap(bool on, bool chosen)
{
	if (on) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		uint32_t n = online > 0 ? static_cast<uint32_t>(online) : 1;
		for (uint32_t cpu = 0; cpu < n && cpu < XO_GNV_MAX_QUEUES; cpu++) {
			bpf_cpumap_val v{};
			v.qsize = 2048;
			if (bpf_map_update_elem(cpus_.get(), &cpu, &v, BPF_ANY))
				return errno_error("set CPUMAP entry of CPU " + std::to_string(cpu), errno);
		}
	}
	const uint32_t chose = chosen ? XO_GNV_F_DECAP_CHOSEN : 0;
	return on ? put_cfg(XO_GNV_F_DECAP_CPUMAP | chose, 0) : put_cfg(chose, XO_GNV_F_DECAP_CPUMAP);
}

Status GeneveMaps::set_xsk(uint32_t queue, uint32_t slot, int xsk_fd, bool replace)
{
	if (queue >= XO_GNV_MAX_RXQ)
		return usage_error("queue " + std::to_string(queue) + ": xdp_geneve steers to AF_XDP sockets on queues 0.." +
				   std::to_string(XO_GNV_MAX_RXQ - 1) + " only");
	if (slot >= XO_GNV_MAX_QUEUES)
		return usage_error("XSK slot outside 0.." + std::to_string(XO_GNV_MAX_QUEUES - 1));
	// the row of the socket's own queue: the kernel refuses a frame
	// redirected to a socket bound to another queue
	uint32_t key = queue * XO_GNV_MAX_QUEUES + slot;
	if (xsk_fd < 0) {
		if (bpf_map_delete_elem(xsks_.get(), &key) && errno != ENOENT)
			return errno_error("clear XSKMAP slot", errno);
		return ok();
	}
	uint32_t v = static_cast<uint32_t>(xsk_fd);
	if (bpf_map_update_elem(xsks_.get(), &key, &v, replace ? BPF_ANY : BPF_NOEXIST)) {
		if (errno == EEXIST)
			return runtime_error("XSKMAP slot " + std::to_string(slot) + " of queue " + std::to_string(queue) +
						     " already holds a socket (another recv --geneve?)",
					     EEXIST);
		return errno_error("put socket in XSKMAP slot " + std::to_string(slot) + " of queue " +
					   std::to_string(queue),
				   errno);
	}
	return ok();
}

Result<GeneveCounters> GeneveMaps::counters() const
{
	size_t n = static_cast<size_t>(ncpus());
	std::vector<xo_gnv_stats> percpu(n);
	GeneveCounters c;
	auto sum = [&](GeneveCounterSet &into) {
		std::array<xo_counter, XO_GNV_CNT_MAX> raw{};
		for (const auto &v : percpu)
			for (unsigned r = 0; r < XO_GNV_CNT_MAX; r++) {
				raw[r].packets += v.c[r].packets;
				raw[r].bytes += v.c[r].bytes;
			}
		into = geneve_stats_of(raw);
	};
	uint32_t zero = 0;
	if (bpf_map_lookup_elem(stats_.get(), &zero, percpu.data()))
		return errno_error("read geneve counters", errno);
	sum(c.total);
	auto rs = rules();
	if (!rs)
		return rs.error();
	for (const auto &r : *rs) {
		uint32_t slot = r.slot;
		if (bpf_map_lookup_elem(vstats_.get(), &slot, percpu.data()))
			return errno_error("read per-VNI counters", errno);
		GeneveCounterSet s{};
		sum(s);
		c.per_vni.push_back({r.vni, s});
	}
	std::sort(c.per_vni.begin(), c.per_vni.end(), [](auto &a, auto &b) { return a.first < b.first; });
	return c;
}

} // namespace xoffload
