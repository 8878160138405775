// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Attach/detach/status of the xoffload programs, from the BPF objects
// embedded through their bpftool skeletons (xsk_prog.cpp embeds recv's
// xdp_xsk, geneve.cpp xdp_geneve's to create its pinned maps).
#include "xoffload/bpf/loader.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xdp/libxdp.h>

#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "xoffload/core/kernel.hpp"
#include "../core/internal.hpp"
#include "xoffload/core/fd.hpp"
#include "xoffload/features/features.hpp"
#include "xoffload/geneve/geneve.hpp"
#include "xoffload/core/owned.hpp"
#include "xoffload/core/pins.hpp"
#include "xoffload/vlan/rx_vlan.hpp"
#include "xoffload/vlan/vlan.hpp"
#include "xoffload/core/notice.hpp"
#include "tc_vlan.skel.h"
#include "xdp_geneve.skel.h"
#include "xdp_vlan.skel.h"
#include "xdp_vlan_tag.skel.h"
#include "xdp_xsk.skel.h"
#include "xdp_xsk_tag.skel.h"
#include "xdp_attach.hpp"
#include "compose.hpp"
#include "log.hpp"

namespace xoffload {

namespace {

// Load failures come from the verifier or from missing privileges; libbpf's
// output (the verifier log) is shown only with -vv.
std::string load_note()
{
	return library_verbosity() < 2 ? " (-vv shows the libbpf/verifier log)" : "";
}

Error load_error(std::string what, int err)
{
	Error e = errno_error(std::move(what), err);
	e.msg += load_note();
	return e;
}

using XdpVlanSkel = Owned<xdp_vlan_bpf, xdp_vlan_bpf__destroy>;
using XdpVlanTagSkel = Owned<xdp_vlan_tag_bpf, xdp_vlan_tag_bpf__destroy>;
using XdpGeneveSkel = Owned<xdp_geneve_bpf, xdp_geneve_bpf__destroy>;
using TcVlanSkel = Owned<tc_vlan_bpf, tc_vlan_bpf__destroy>;
using XdpProgram = Owned<xdp_program, xdp_program__close>;
using Multiprog = Owned<xdp_multiprog, xdp_multiprog__close>;

// Program names, taken from the skeletons rather than spelled here.
struct ProgNames {
	std::string xdp, xdp_mb, tc_ingress, tc_egress;
	std::string xdp_tag, xdp_tag_mb;	// device-bound, with the rx-vlan-tag kfunc
	std::string geneve, geneve_mb;
	std::string geneve_cpus;	// xdp_geneve's CPUMAP (pin file name)
	std::string xsk, xsk_tag;	// recv's xdp_xsk (and its device-bound twin)
};

const ProgNames &prog_names()
{
	static const ProgNames names = [] {
		ProgNames n;
		XdpVlanSkel x(xdp_vlan_bpf__open());
		TcVlanSkel t(tc_vlan_bpf__open());
		if (x) {
			n.xdp = bpf_program__name(x->progs.xdp_vlan);
			n.xdp_mb = bpf_program__name(x->progs.xdp_vlan_mb);
		}
		XdpVlanTagSkel xt(xdp_vlan_tag_bpf__open());
		if (xt) {
			n.xdp_tag = bpf_program__name(xt->progs.xdp_vlan_tag);
			n.xdp_tag_mb = bpf_program__name(xt->progs.xdp_vlan_tag_mb);
		}
		if (t) {
			n.tc_ingress = bpf_program__name(t->progs.tc_vlan_ingress);
			n.tc_egress = bpf_program__name(t->progs.tc_vlan_egress);
		}
		XdpGeneveSkel g(xdp_geneve_bpf__open());
		if (g) {
			n.geneve = bpf_program__name(g->progs.xdp_geneve);
			n.geneve_mb = bpf_program__name(g->progs.xdp_geneve_mb);
			n.geneve_cpus = bpf_map__name(g->maps.xo_gnv_cpus);
		}
		Owned<xdp_xsk_bpf, xdp_xsk_bpf__destroy> x1(xdp_xsk_bpf__open());
		if (x1)
			n.xsk = bpf_program__name(x1->progs.xdp_xsk);
		Owned<xdp_xsk_tag_bpf, xdp_xsk_tag_bpf__destroy> x2(xdp_xsk_tag_bpf__open());
		if (x2)
			n.xsk_tag = bpf_program__name(x2->progs.xdp_xsk_tag);
		return n;
	}();
	return names;
}

bpf_tc_attach_point tc_point(Hook h)
{
	return h == Hook::tc_ingress ? BPF_TC_INGRESS : BPF_TC_EGRESS;
}

std::string prog_name_by_id(uint32_t id)
{
	int fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return {};
	bpf_prog_info info{};
	uint32_t len = sizeof(info);
	std::string name;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len))
		name = info.name;
	::close(fd);
	return name;
}

// Our filter at a TC hook: its prog id, 0 if none.
Result<uint32_t> tc_query(const Netdev &dev, Hook h)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = dev.ifindex, .attach_point = tc_point(h));
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = kTcHandle, .priority = kTcPriority);
	int err;
	{
		ExpectedLibraryMessages expected;	// nothing there is an answer
		err = bpf_tc_query(&hook, &q);
	}
	if (err == -ENOENT || err == -EINVAL)
		return 0u; // no clsact qdisc or no filter of ours
	if (err)
		return errno_error("query tc on " + dev.name, err);
	return q.prog_id;
}

Result<Multiprog> xdp_query(const Netdev &dev)
{
	xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(dev.ifindex);
	long err = libxdp_get_error(mp);
	if (err == -ENOENT)
		return Multiprog{};
	if (err)
		return errno_error("query xdp on " + dev.name, static_cast<int>(err));
	return Multiprog(mp);
}

// Visits every program at the XDP hook (the main one in legacy mode).
template <typename F>
void for_each_xdp_prog(xdp_multiprog *mp, F &&f)
{
	if (!mp)
		return;
	if (xdp_multiprog__is_legacy(mp)) {
		if (xdp_program *p = xdp_multiprog__main_prog(mp))
			f(p);
		return;
	}
	for (xdp_program *p = xdp_multiprog__next_prog(nullptr, mp); p;
	     p = xdp_multiprog__next_prog(p, mp))
		f(p);
}

XdpMode mode_of(xdp_multiprog *mp)
{
	return xdp_multiprog__attach_mode(mp) == XDP_MODE_SKB ? XdpMode::skb : XdpMode::native;
}

// The XDP program of a feature, opened with its maps pinned under dir.
struct XdpObject {
	XdpVlanSkel vlan;
	XdpVlanTagSkel vlan_tag;
	XdpGeneveSkel geneve;
	bpf_object *obj = nullptr;
	bpf_program *prog = nullptr;
};

// An MTU above this may hand XDP a frame in several buffers (veth splits
// above about 3500 bytes, other drivers earlier): the *_mb entry then.
constexpr uint32_t kSingleBufferMtu = 1500;

#ifndef BPF_F_XDP_DEV_BOUND_ONLY
#define BPF_F_XDP_DEV_BOUND_ONLY (1U << 6)
#endif

// xdp_geneve's single- or multi-buffer entry (@frags), its maps pinned
// under @dir.
Result<XdpObject> open_geneve_xdp(const std::string &dir, bool frags, int)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = dir.c_str());
	XdpObject o;
	o.geneve.reset(xdp_geneve_bpf__open_opts(&oo));
	if (!o.geneve)
		return errno_error("open xdp_geneve object", errno);
	o.obj = o.geneve->obj;
	o.prog = frags ? o.geneve->progs.xdp_geneve_mb : o.geneve->progs.xdp_geneve;
	// one entry per load: the kernel ties the CPUMAP to the first
	// program using it, frags or not
	bpf_program__set_autoload(frags ? o.geneve->progs.xdp_geneve : o.geneve->progs.xdp_geneve_mb, false);
	return o;
}

// xdp_vlan's entry, or with @tag_ifindex xdp_vlan_tag's, device-bound to
// that interface.
Result<XdpObject> open_vlan_xdp(const std::string &dir, bool frags, int tag_ifindex)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = dir.c_str());
	XdpObject o;
	if (tag_ifindex) {
		o.vlan_tag.reset(xdp_vlan_tag_bpf__open_opts(&oo));
		if (!o.vlan_tag)
			return errno_error("open xdp_vlan_tag object", errno);
		o.obj = o.vlan_tag->obj;
		o.prog = frags ? o.vlan_tag->progs.xdp_vlan_tag_mb : o.vlan_tag->progs.xdp_vlan_tag;
		bpf_program__set_autoload(frags ? o.vlan_tag->progs.xdp_vlan_tag : o.vlan_tag->progs.xdp_vlan_tag_mb,
					  false);
		// the metadata kfuncs resolve to the driver's own at load
		bpf_program__set_ifindex(o.prog, static_cast<__u32>(tag_ifindex));
		if (int err = bpf_program__set_flags(o.prog, bpf_program__flags(o.prog) | BPF_F_XDP_DEV_BOUND_ONLY))
			return errno_error("make xdp_vlan_tag device-bound", err);
	} else {
		o.vlan.reset(xdp_vlan_bpf__open_opts(&oo));
		if (!o.vlan)
			return errno_error("open xdp_vlan object", errno);
		o.obj = o.vlan->obj;
		o.prog = frags ? o.vlan->progs.xdp_vlan_mb : o.vlan->progs.xdp_vlan;
		// only the entry that is attached gets loaded (and verified)
		bpf_program__set_autoload(frags ? o.vlan->progs.xdp_vlan : o.vlan->progs.xdp_vlan_mb, false);
	}
	return o;
}

// The pins @f at @h will reuse, against the maps this build declares: a pin
// of an older layout is refused in one line before anything is attached
// (xdp_vlan_tag declares the same maps as xdp_vlan).
Status check_vlan_pins(const Netdev &dev, Hook h, const std::string &dir)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = dir.c_str());
	if (h == Hook::xdp) {
		XdpVlanSkel s(xdp_vlan_bpf__open_opts(&oo));
		return s ? check_object_pins(s->obj, dev.name) : errno_error("open xdp_vlan object", errno);
	}
	TcVlanSkel s(tc_vlan_bpf__open_opts(&oo));
	return s ? check_object_pins(s->obj, dev.name) : errno_error("open tc_vlan object", errno);
}

Status check_geneve_pins(const Netdev &dev, Hook, const std::string &dir)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = dir.c_str());
	XdpGeneveSkel s(xdp_geneve_bpf__open_opts(&oo));
	return s ? check_object_pins(s->obj, dev.name) : errno_error("open xdp_geneve object", errno);
}

// The policy pinned by an older xoffload: op[] and outer_only derived anew
// before a program of this one acts on it.
Status upgrade_vlan_pins(const Netdev &dev, const std::string &dir)
{
	auto m = VlanMaps::open(dir, dev.name);
	if (!m)
		return m.error();
	return m->upgrade();
}

// Geneve rules pinned without the VNI bitmap (an older xoffload) or
// changed since by one: the bitmap put in step before the program loads,
// which reads it from its first frame.
Status upgrade_geneve_pins(const Netdev &dev, const std::string &dir)
{
	return sync_pinned_vnibits(dir, dev.name);
}

std::vector<std::string> vlan_xdp_entries()
{
	const auto &n = prog_names();
	return {n.xdp, n.xdp_mb, n.xdp_tag, n.xdp_tag_mb};
}

std::vector<std::string> geneve_xdp_entries()
{
	const auto &n = prog_names();
	return {n.geneve, n.geneve_mb};
}

// The pin whose presence says the feature's maps are pinned in @dir.
std::string vlan_pin_marker(const std::string &dir)
{
	return dir + "/" + vlan_map_names().cfg;
}

std::string geneve_pin_marker(const std::string &dir)
{
	const auto names = geneve_map_names();
	return names.empty() ? std::string() : dir + "/" + names[0];
}

constexpr unsigned hook_bit(Hook h)
{
	return 1u << static_cast<unsigned>(h);
}

// Each BPF feature described once: what the generic attach, detach and
// status do differently for it. Indexed by Feature.
struct FeatureDesc {
	Feature feature;
	const char *name;		// the CLI word; the rxvlan-by-<name> record
	unsigned hooks;			// hook_bit()s it attaches at
	// objects and entries: the XDP entry (frags: the multi-buffer one;
	// tag_ifindex: the device-bound variant reading stripped tags), and
	// the names of every XDP entry it has (status tells ours by them)
	Result<XdpObject> (*open_xdp)(const std::string &dir, bool frags, int tag_ifindex);
	std::vector<std::string> (*xdp_entries)();
	// pins: the one that says they exist, and the check against this
	// build's layout before they are reused
	std::string (*pin_marker)(const std::string &dir);
	Status (*check_pins)(const Netdev &dev, Hook h, const std::string &dir);
	// attach quirks
	Status (*upgrade_pins)(const Netdev &dev, const std::string &dir);	// an older ABI's pins
	Status (*before_each_load)(const std::string &dir);	// renew a map the kernel ties to a program
	bool tag_kfunc;			// has the device-bound stripped-tag variant
	TagReader tag_reader;		// how it reads tags at XDP (rx_vlan_take)
};

constexpr FeatureDesc kFeatureDescs[] = {
	{Feature::vlan, "vlan", hook_bit(Hook::xdp) | hook_bit(Hook::tc_ingress) | hook_bit(Hook::tc_egress),
	 open_vlan_xdp, vlan_xdp_entries, vlan_pin_marker, check_vlan_pins, upgrade_vlan_pins, nullptr, true,
	 TagReader::xdp_vlan},
	// the kernel ties xdp_geneve's CPUMAP to the first program that loads
	// with it, for the map's life; a refused one too: renewed before each
	{Feature::geneve, "geneve", hook_bit(Hook::xdp), open_geneve_xdp, geneve_xdp_entries, geneve_pin_marker,
	 check_geneve_pins, upgrade_geneve_pins, renew_cpumap, false, TagReader::xdp_geneve},
};

static_assert(kFeatureDescs[static_cast<size_t>(Feature::vlan)].feature == Feature::vlan &&
	      kFeatureDescs[static_cast<size_t>(Feature::geneve)].feature == Feature::geneve);

const FeatureDesc &desc(Feature f)
{
	return kFeatureDescs[static_cast<size_t>(f)];
}

// How one attempt attaches an XDP entry.
struct XdpTry {
	bool frags = false;	// the multi-buffer entry (xdp_vlan_mb, xdp_geneve_mb)
	bool single = false;	// alone through libbpf, not through libxdp
	bool tag = false;	// vlan: xdp_vlan_tag, device-bound (always single)
};

// What a failed attempt tells the next one.
struct XdpTried {
	bool refused_for_frags = false;		// see LibxdpAttach
	std::string dispatcher_refused;		// likewise
};

// The pin files of @obj's pinned maps that do not exist yet: what its load
// will create.
std::vector<std::string> pins_to_create(bpf_object *obj)
{
	std::vector<std::string> paths;
	bpf_map *m;
	bpf_object__for_each_map(m, obj)
		if (const char *p = bpf_map__pin_path(m); p && !path_exists(p))
			paths.emplace_back(p);
	return paths;
}

// Loads and attaches @f's single- or multi-buffer entry, through libxdp or
// alone (@how). A failure leaves no map pinned that this load created.
Result<AttachInfo> attach_xdp_entry(const Netdev &dev, Feature f, XdpMode mode, const std::string &dir, XdpTry how,
				    XdpTried &tried)
{
	tried = {};
	auto skel = desc(f).open_xdp(dir, how.frags, how.tag ? dev.ifindex : 0);
	if (!skel)
		return skel.error();
	const std::string name = bpf_program__name(skel->prog);
	const std::string why = "attach " + name + " to " + dev.name + " (" + to_string(mode) + ")";
	const std::vector<std::string> created = pins_to_create(skel->obj);
	AttachInfo info{Hook::xdp, mode, 0, name};
	info.feature = f;
	int err;
	bool loaded;
	XdpProgram prog;
	if (how.single) {
		if ((err = bpf_object__load(skel->obj)))
			return load_error("load " + name, err);	// libbpf unpinned what it pinned
		loaded = true;
		err = xdp_attach_single(dev.ifindex, bpf_program__fd(skel->prog), mode);
		tried.refused_for_frags = refused_for_frags(mode, err);
	} else {
		DECLARE_LIBXDP_OPTS(xdp_program_opts, po, .obj = skel->obj, .prog_name = name.c_str());
		prog.reset(xdp_program__create(&po));
		if (long e = libxdp_get_error(prog.get())) {
			prog.release();
			return errno_error("create xdp program", static_cast<int>(e));
		}
		// libxdp loads the program inside attach (as it must, to load it
		// behind its dispatcher)
		LibxdpAttach a = libxdp_attach(prog.get(), skel->prog, dev.ifindex, mode, how.frags);
		err = a.err;
		loaded = a.loaded;
		tried.refused_for_frags = a.refused_for_frags;
		tried.dispatcher_refused = a.dispatcher_refused;
		if (!err && !a.libxdp_single.empty())
			info.single_reason = note_single_program(a.libxdp_single, name);
	}
	if (err) {
		for (const auto &p : created)
			(void)::unlink(p.c_str());
		// the driver's facts first, once the multi-buffer entry was tried
		// (or cannot be): an MTU over the driver's XDP limit is no case
		// for another try (dispatcher, single program)
		XdpAttachFailure fail{why, err, mode, how.frags};
		fail.last_entry = how.frags || !kernel_has_xdp_frags();
		fail.refused_for_frags = tried.refused_for_frags;
		fail.loaded = loaded;
		fail.load_note = load_note();
		fail.skb_flag = "--mode skb";
		fail.busy = "in a way that cannot be shared (detach it first)";
		XdpAttachVerdict v = xdp_attach_error(dev, fail);
		if (v.final)
			tried = {};
		return std::move(v.error);
	}
	if (how.single) {
		bpf_prog_info pi{};
		uint32_t len = sizeof(pi);
		if (!bpf_obj_get_info_by_fd(bpf_program__fd(skel->prog), &pi, &len))
			info.prog_id = pi.id;
		return info;
	}
	info.prog_id = xdp_program__id(prog.get());
	info.run_prio = xdp_program__run_prio(prog.get());
	if (auto mp = xdp_query(dev); mp && mp->get())
		info.multiprog = !xdp_multiprog__is_legacy(mp->get());
	return info;
}

} // namespace

// The kernel ties a CPUMAP to the first program that uses it, frags or not,
// for the map's life (bpf_prog_map_compatible). Before an xdp_geneve entry
// loads (none uses the map then: attach refuses a second geneve), the
// pinned CPUMAP is replaced by a new one with the same entries, so either
// entry can load. Under the geneve pin-directory lock, so rule changes wait;
// the new map is pinned under a temporary name and renamed over the old pin,
// so the path never goes missing. Entries carry a queue size only (we attach
// no program to them), which is all that is copied.
Status renew_cpumap(const std::string &dir)
{
	const std::string path = dir + "/" + prog_names().geneve_cpus, tmp = path + "_new";	// bpffs refuses names with a dot
	UniqueFd lock(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (!lock.valid() || flock(lock.get(), LOCK_EX))
		return errno_error("lock " + dir, errno);
	UniqueFd old(bpf_obj_get(path.c_str()));
	if (!old.valid())
		return errno == ENOENT ? ok() : errno_error("open " + path, errno);
	bpf_map_info info{};
	uint32_t len = sizeof(info);
	if (bpf_obj_get_info_by_fd(old.get(), &info, &len))
		return errno_error("read " + path, errno);
	UniqueFd fresh(bpf_map_create(BPF_MAP_TYPE_CPUMAP, info.name, info.key_size, info.value_size,
				      info.max_entries, nullptr));
	if (!fresh.valid())
		return errno_error("create a CPUMAP for " + path, errno);
	for (uint32_t k = 0; k < info.max_entries; k++) {
		bpf_cpumap_val v{};
		if (bpf_map_lookup_elem(old.get(), &k, &v))
			continue;	// no entry
		v.bpf_prog.fd = 0;
		if (bpf_map_update_elem(fresh.get(), &k, &v, BPF_ANY))
			return errno_error("copy CPUMAP entry " + std::to_string(k), errno);
	}
	(void)::unlink(tmp.c_str());
	if (bpf_obj_pin(fresh.get(), tmp.c_str()) || ::rename(tmp.c_str(), path.c_str())) {
		int e = errno;
		(void)::unlink(tmp.c_str());
		return errno_error("replace " + path, e);
	}
	return ok();
}

namespace {

Result<AttachInfo> attach_composed(const Netdev &dev, Feature f, XdpMode mode, const std::string &dir, unsigned base,
				   uint32_t replace_id, const std::string &why);

// Native mode: the multi-buffer entry (xdp_vlan_mb, xdp_geneve_mb) when the MTU is
// above kSingleBufferMtu and the kernel has multi-buffer XDP, or when the
// kernel refuses the single-buffer entry for frames that may span buffers
// (a veth whose peer has the large MTU). Through libxdp, and alone, as a
// single program, where libxdp's dispatcher cannot run the entry (refused
// as its extension, or refused for its frames), saying so on stderr.
Result<AttachInfo> attach_xdp(const Netdev &dev, Feature f, XdpMode mode, const std::string &dir, bool tag = false)
{
	auto mtu = netdev_mtu(dev.name);
	if (!mtu)
		return mtu.error();
	const bool can_frags = mode == XdpMode::native && kernel_has_xdp_frags();
	XdpTry how{can_frags && *mtu > kSingleBufferMtu, tag, tag};
	std::string single_reason;		// why the dispatcher was left
	// the kernel refuses to chain a device-bound program behind libxdp's
	// dispatcher (not device-bound), and libxdp cannot load one
	if (tag)
		single_reason = "xdp_vlan reads stripped tags through the rx-vlan-tag kfunc, which needs a "
				"device-bound program, and libxdp's dispatcher cannot chain those";
	std::optional<Error> refused_entry;	// the single-buffer entry's refusal
	for (;;) {
		if (desc(f).before_each_load)
			if (auto s = desc(f).before_each_load(dir); !s)
				return s.error();
		XdpTried tried;
		auto r = attach_xdp_entry(dev, f, mode, dir, how, tried);
		if (r) {
			if (how.single)
				r->single_reason = note_single_program(single_reason, r->prog_name);
			return r;
		}
		if (tried.refused_for_frags && can_frags && !how.frags) {
			refused_entry = r.error();
			how.frags = true;
			continue;
		}
		// libxdp's dispatcher cannot run it: the composed program, which
		// later features join (the device-bound entry is alone already)
		if (!tried.dispatcher_refused.empty() && !how.single)
		{
			// the dispatcher holds the hook for programs of others (recv's
			// xdp_xsk, xdp-loader's): ours cannot join it, nor replace it
			if (auto held = hook_prog_id(dev.ifindex); held && *held)
				return runtime_error("attach " + std::string(to_string(f)) + " to " + dev.name + ": " +
							     tried.dispatcher_refused + ", and its dispatcher holds the XDP hook for " +
							     xdp_hook_holders(dev.ifindex) + "; stop or unload them first" +
							     (f == Feature::vlan ? ", or attach vlan at TC (--hook tc-ingress)" : ""),
						     EBUSY);
			return attach_composed(dev, f, mode, dir, 0, 0, tried.dispatcher_refused);
		}
		Error e = r.error();
		if (how.single)
			e.msg = single_reason + " (" + libxdp_version() + ", kernel " + kernel_release() +
				"), and alone: " + e.msg;
		if (refused_entry)
			e.msg = refused_entry->msg + "; then " + e.msg;
		return e;
	}
}

// TC filters at both clsact hooks of @dev, whoever's: an rtnetlink dump
// (libbpf only queries a filter it is told the handle of).
Result<size_t> tc_filter_count(const Netdev &dev)
{
	size_t filters = 0;
	for (uint32_t min : {TC_H_MIN_INGRESS, TC_H_MIN_EGRESS}) {
		auto req = rtnl_request<tcmsg>(RTM_GETTFILTER);
		req.body.tcm_family = AF_UNSPEC;
		req.body.tcm_ifindex = dev.ifindex;
		req.body.tcm_parent = TC_H_MAKE(TC_H_CLSACT, min);
		auto s = rtnl_dump(&req.nh, "RTM_GETTFILTER on " + dev.name, [&](const nlmsghdr *nh) {
			if (nh->nlmsg_type == RTM_NEWTFILTER)
				filters++;
		});
		if (!s)
			return s.error();
	}
	return filters;
}

// Marks in the pin directory that the clsact qdisc on the device is ours
// (attach created it), so detach removes it once no filter is left.
std::string clsact_mark(const std::string &dir)
{
	return dir + "/clsact-created";
}

// Removes the clsact qdisc of @dev, both directions. Returns 0 or a negative
// errno.
int destroy_clsact(const Netdev &dev)
{
	LIBBPF_OPTS(bpf_tc_hook, both, .ifindex = dev.ifindex,
		    .attach_point = static_cast<bpf_tc_attach_point>(BPF_TC_INGRESS | BPF_TC_EGRESS));
	return bpf_tc_hook_destroy(&both);
}

// Removes the clsact qdisc if we created it and it holds no filter now,
// ours or anybody's; a qdisc that was there before us stays.
Status release_clsact(const Netdev &dev, const std::string &dir)
{
	if (!path_exists(clsact_mark(dir)))
		return ok();
	auto n = tc_filter_count(dev);
	if (!n)
		return n.error();
	if (*n)
		return ok();
	int err = destroy_clsact(dev);
	if (err && err != -ENOENT)
		return errno_error("remove the clsact qdisc of " + dev.name, err);
	if (::rmdir(clsact_mark(dir).c_str()) && errno != ENOENT)
		return errno_error("remove " + clsact_mark(dir), errno);
	return ok();
}

// Loads tc_vlan and attaches its @h entry to the clsact qdisc there.
Result<AttachInfo> attach_tc_prog(const Netdev &dev, Hook h, const std::string &dir)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = dev.ifindex, .attach_point = tc_point(h));
	int err;

	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = dir.c_str());
	TcVlanSkel skel(tc_vlan_bpf__open_opts(&oo));
	if (!skel)
		return errno_error("open tc_vlan object", errno);
	bpf_program *want = h == Hook::tc_ingress ? skel->progs.tc_vlan_ingress : skel->progs.tc_vlan_egress;
	bpf_program *other = h == Hook::tc_ingress ? skel->progs.tc_vlan_egress : skel->progs.tc_vlan_ingress;
	bpf_program__set_autoload(other, false);
	if ((err = tc_vlan_bpf__load(skel.get())))
		return load_error("load tc_vlan", err);
	LIBBPF_OPTS(bpf_tc_opts, to, .prog_fd = bpf_program__fd(want), .handle = kTcHandle,
		    .priority = kTcPriority);
	if ((err = bpf_tc_attach(&hook, &to)))
		return errno_error(std::string("attach ") + bpf_program__name(want) + " to " + dev.name, err);
	return AttachInfo{h, XdpMode::native, to.prog_id, bpf_program__name(want)};
}

// Attaches tc_vlan at @h, creating the clsact qdisc if there is none (and
// removing it again if the attach fails).
Result<AttachInfo> attach_tc(const Netdev &dev, Hook h, const std::string &dir)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = dev.ifindex, .attach_point = tc_point(h));
	int err;
	{
		ExpectedLibraryMessages expected;	// a clsact already there is fine
		err = bpf_tc_hook_create(&hook);
	}
	if (err && err != -EEXIST)
		return errno_error("create clsact qdisc on " + dev.name, err);
	if (!err && ::mkdir(clsact_mark(dir).c_str(), 0700) && errno != EEXIST) {
		// untracked it could never be removed: take it away again now
		int e = errno;
		(void)destroy_clsact(dev);
		return errno_error("mark " + clsact_mark(dir), e);
	}
	auto r = attach_tc_prog(dev, h, dir);
	if (!r)
		(void)release_clsact(dev, dir);
	return r;
}

// Which feature an XDP program of ours with this name serves, if it is ours.
std::optional<Feature> xdp_feature_of(const std::string &name)
{
	for (const FeatureDesc &d : kFeatureDescs)
		for (const std::string &e : d.xdp_entries())
			if (name == e)
				return d.feature;
	return std::nullopt;
}

bool is_our_name(const std::string &name)
{
	const auto &n = prog_names();
	return xdp_feature_of(name) || name == n.tc_ingress || name == n.tc_egress;
}

} // namespace

unsigned single_stage(const std::string &name, bool &bound)
{
	const auto &n = prog_names();
	bound = name == n.xdp_tag || name == n.xdp_tag_mb || name == n.xsk_tag;
	if (name == n.xsk || name == n.xsk_tag)
		return XO_STAGE_XSK;
	if (auto f = xdp_feature_of(name))
		return stage_of(*f);
	return 0;
}

namespace {

// Attaches @f as a stage of the composed program: @base's stages and @f's
// in one program that replaces @replace_id (0: the hook is empty).
Result<AttachInfo> attach_composed(const Netdev &dev, Feature f, XdpMode mode, const std::string &dir, unsigned base,
				   uint32_t replace_id, const std::string &why)
{
	auto c = compose_swap(dev, dir, ComposeRequest{base | stage_of(f), mode, replace_id});
	if (!c)
		return c.error();
	AttachInfo info{Hook::xdp, mode, c->prog.prog_id, c->prog.prog_name};
	info.feature = f;
	info.composed = true;
	info.stages = stage_list(c->prog.stages);
	info.compose_reason = why;
	return info;
}

// A single program at the XDP hook (not ours, or ours but device-bound for
// recv): nothing can be chained to it, so @f is refused before anything is
// loaded or pinned.
Error single_program_holds_hook(const Netdev &dev, Feature f, const XdpProgInfo &p)
{
	std::string msg = std::string("attach ") + to_string(f) + " to " + dev.name + ": ";
	std::optional<Feature> holder = xdp_feature_of(p.name);
	if (holder)
		msg += std::string(to_string(*holder)) + " (" + p.name + ", prog id " + std::to_string(p.id) + ")";
	else
		msg += p.name + " (prog id " + std::to_string(p.id) + "), not ours,";
	msg += " holds the XDP hook as a single program, which nothing can be chained to (only libxdp's dispatcher "
	       "chains programs, and it was not used for this one); ";
	if (!holder && p.name.rfind("xdp_xsk", 0) == 0)
		msg = std::string("attach ") + to_string(f) + " to " + dev.name + ": recv's " + p.name + " (prog id " +
		      std::to_string(p.id) + ") reads stripped tags as a device-bound program, which runs alone; ";
	const auto at_tc = [](Feature x) { return (desc(x).hooks & hook_bit(Hook::tc_ingress)) != 0; };
	if (holder) {
		msg += std::string("detach ") + to_string(*holder) + " first";
		if (at_tc(*holder))
			msg += std::string(" (") + to_string(*holder) + " can run at TC instead: --hook tc-ingress)";
	} else {
		msg += "unload it first (a program of yours can then run after ours: attach " + dev.name +
		       " chain --prog OBJ)";
	}
	if (at_tc(f))
		msg += std::string(", or attach ") + to_string(f) + " at TC (--hook tc-ingress)";
	return runtime_error(msg, EBUSY);
}

} // namespace

Result<XdpMode> parse_xdp_mode(std::string_view s)
{
	if (s == "native")
		return XdpMode::native;
	// "generic": the kernel's and ip-link's name (xdpgeneric) for skb mode
	if (s == "skb" || s == "generic")
		return XdpMode::skb;
	return usage_error("unknown XDP mode '" + std::string(s) + "' (native, or skb and its alias generic)");
}

Result<Feature> parse_feature(std::string_view s)
{
	for (const FeatureDesc &d : kFeatureDescs)
		if (s == d.name)
			return d.feature;
	return usage_error("unknown feature '" + std::string(s) + "' (vlan or geneve)");
}

const char *to_string(XdpMode m)
{
	return m == XdpMode::skb ? "skb" : "native";
}

const char *to_string(Feature f)
{
	return desc(f).name;
}

// The composed program's chain counters (xo_off_stats under @dir), packets
// by enum xo_off_counter, summed over the CPUs.
static Result<std::array<uint64_t, XO_OFF_CNT_MAX>> chain_counts(const std::string &dir)
{
	std::array<uint64_t, XO_OFF_CNT_MAX> out{};
	const std::string path = dir + "/xo_off_stats";
	UniqueFd fd(bpf_obj_get(path.c_str()));
	if (!fd.valid())
		return errno == ENOENT ? Result<std::array<uint64_t, XO_OFF_CNT_MAX>>(out)
				       : errno_error("open " + path, errno);
	const int cpus = libbpf_num_possible_cpus();
	if (cpus <= 0)
		return errno_error("count the possible CPUs", cpus);
	std::vector<xo_counter> v(static_cast<size_t>(cpus));
	for (__u32 k = 0; k < XO_OFF_CNT_MAX; k++) {
		if (bpf_map_lookup_elem(fd.get(), &k, v.data()))
			return errno_error("read " + path, errno);
		for (const xo_counter &c : v)
			out[k] += c.packets;
	}
	return out;
}

Result<IfStatus> status(const Netdev &dev)
{
	IfStatus st;
	st.dev = dev;
	st.pin_dir = pin_dir(dev);
	for (const FeatureDesc &d : kFeatureDescs)
		if (const std::string m = d.pin_marker(st.pin_dir); !m.empty() && path_exists(m))
			st.pinned = true;

	auto mp = xdp_query(dev);
	if (!mp)
		return mp.error();
	if (mp->get()) {
		xdp_multiprog *m = mp->get();
		st.xdp_mode = to_string(mode_of(m));
		st.xdp_multiprog = !xdp_multiprog__is_legacy(m);
		for_each_xdp_prog(m, [&](xdp_program *p) {
			XdpProgInfo pi{xdp_program__name(p), xdp_program__id(p),
				       xdp_program__run_prio(p), false};
			std::optional<Feature> f = xdp_feature_of(pi.name);
			pi.ours = f.has_value() || is_composed_name(pi.name);
			if (f)
				st.ours.push_back(AttachInfo{Hook::xdp, mode_of(m), pi.id, pi.name,
							     st.xdp_multiprog, pi.run_prio, *f});
			st.xdp_progs.push_back(std::move(pi));
		});
	}
	// the composed program: one entry per feature stage in it
	for (const XdpProgInfo &pi : st.xdp_progs) {
		if (!is_composed_name(pi.name))
			continue;
		auto c = read_composed(pi.id);
		if (!c)
			return c.error();
		ComposedStatus cs;
		cs.prog_id = c->prog_id;
		cs.prog_name = c->prog_name;
		cs.chain_prog_id = c->chain_id;
		cs.reason = composition_reason();
		for (unsigned bit = 1; bit & XO_STAGE_ALL; bit <<= 1)
			if (c->stages & bit)
				cs.stages.emplace_back(stage_name(bit));
		if (c->chain_id)
			cs.chain_prog_name = prog_name_by_id(c->chain_id);
		if (c->stages & XO_STAGE_CHAIN) {
			auto n = chain_counts(st.pin_dir);
			if (!n)
				return n.error();
			cs.chained_packets = (*n)[XO_OFF_CNT_CHAINED];
			cs.chain_empty_packets = (*n)[XO_OFF_CNT_CHAIN_EMPTY];
		}
		for (Feature f : {Feature::vlan, Feature::geneve})
			if (c->stages & stage_of(f)) {
				AttachInfo a{Hook::xdp, parse_xdp_mode(st.xdp_mode).value_or(XdpMode::native), pi.id, pi.name};
				a.feature = f;
				a.composed = true;
				a.stages = stage_list(c->stages);
				a.compose_reason = cs.reason;
				st.ours.push_back(std::move(a));
			}
		st.composed_stages = c->stages;
		st.composed = std::move(cs);
	}
	if (const std::string pin = chain_prog_pin(st.pin_dir); path_exists(pin)) {
		UniqueFd fd(bpf_obj_get(pin.c_str()));
		bpf_prog_info pi{};
		uint32_t len = sizeof(pi);
		if (fd.valid() && !bpf_obj_get_info_by_fd(fd.get(), &pi, &len))
			st.chain_prog_id = pi.id;
	}
	for (Hook h : {Hook::tc_ingress, Hook::tc_egress}) {
		auto id = tc_query(dev, h);
		if (!id)
			return id.error();
		if (*id) {
			std::string name = prog_name_by_id(*id);
			if (is_our_name(name))
				st.ours.push_back(AttachInfo{h, XdpMode::native, *id, name});
		}
	}
	return st;
}

Result<AttachInfo> attach(const Netdev &dev, Feature f, Hook h, XdpMode mode, const AttachOptions &opts)
{
	const FeatureDesc &d = desc(f);
	if (!(d.hooks & hook_bit(h))) {	// geneve: XDP only
		std::string at;
		for (unsigned i = 0; i < kHooks; i++)
			if (d.hooks & hook_bit(static_cast<Hook>(i)))
				at += std::string(at.empty() ? "" : ", ") + to_string(static_cast<Hook>(i));
		return usage_error(std::string(d.name) + " attaches at the " + at + " hook only");
	}
	if (auto s = bpffs_check(); !s)
		return s.error();
	auto st = status(dev);
	if (!st)
		return st.error();
	for (const auto &a : st->ours)
		if (a.hook == h && a.feature == f)
			return runtime_error(std::string(to_string(f)) + " is already attached to " + dev.name + " at " + to_string(h) +
					     " (prog id " + std::to_string(a.prog_id) + ")", EEXIST);
	XdpJoin join;
	if (h == Hook::xdp) {
		auto j = plan_xdp_join(dev, *st, mode, to_string(f));
		if (!j)
			return j.error();
		join = std::move(*j);
		if (join.alone)
			return single_program_holds_hook(dev, f, *join.alone);
	}
	std::string dir = pin_dir(dev);
	bool had_pins = path_exists(dir);	// e.g. a geneve port registry made before attach
	if (had_pins)
		if (auto s = d.check_pins(dev, h, dir); !s)
			return s.error();
	if (auto s = make_dirs(dir); !s)
		return s.error();
	if (auto s = mark_pin_dir(dev); !s)
		return s.error();
	// maps pinned by an older xoffload: made this one's before a program
	// of this one acts on them
	if (d.upgrade_pins && path_exists(d.pin_marker(dir)))
		if (auto s = d.upgrade_pins(dev, dir); !s)
			return s.error();
	// vlan at XDP reads tags: where the device strips them first, stripping
	// goes off for the attachment's life, and the driver's stripped-tag
	// kfunc is used where it has one (native mode: generic XDP runs on an
	// skb the stack untagged already, and no driver kfunc serves it)
	// xdp_geneve reads outer tags too: a tag stripped before XDP comes back
	// on the inner frame it decaps and passes
	// (every feature reads tags: vlan at each of its hooks, geneve at XDP,
	// its only one)
	std::optional<RxVlanFacts> rxv;
	std::string rx_note;
	if (auto facts = rx_vlan_facts(dev)) {
		rxv = *facts;
		if (std::string line = vlan_filter_advice(*rxv, dev.name); !line.empty())
			notice(line);
	} else {
		notice("cannot read the VLAN offloads of " + dev.name + " (" + facts.error().msg +
		       "): tags the device strips are not seen at XDP");
	}
	const bool reads_tags = h == Hook::xdp && rxv;
	const char *holder = d.name;	// "vlan", "geneve": the rxvlan-by-<holder> record
	if (reads_tags) {
		// xdp_geneve has no stripped-tag variant: it cannot give a tag back
		if (mode != XdpMode::native || opts.no_tag_kfunc || !d.tag_kfunc)
			rxv->meta_kfunc = false;
		// the composed program is not device-bound (its stages share the
		// hook); alone on an empty hook, vlan keeps the kfunc's variant
		if (join.compose && (join.replace_id || !rxv->meta_kfunc))
			rxv->meta_kfunc = false;
		else if (join.compose)
			join.compose = false;
		// behind libxdp's dispatcher, which holds programs of ours already,
		// a device-bound program cannot join: plain xdp_vlan goes, and the
		// device's stripping goes off (rx_vlan_take) so tags stay in the data
		if (!join.compose && rxv->meta_kfunc && st->xdp_multiprog && !st->xdp_progs.empty()) {
			rxv->meta_kfunc = false;
			notice(std::string(to_string(f)) + " joins libxdp's dispatcher on " + dev.name +
			       " as the plain program, not the device-bound stripped-tag variant, which no dispatcher "
			       "takes");
		}
		if (join.bound && join.base == XO_STAGE_VLAN) {
			// xdp_vlan_tag gives way to the composed vlan stage, which reads
			// tags in the data only: vlan's record says so from now on
			RxVlanFacts plain = *rxv;
			plain.meta_kfunc = false;
			if (auto t = rx_vlan_take(dev, plain, "vlan", TagReader::xdp_vlan, opts.keep_rx_vlan); !t)
				return t.error();
			notice("vlan leaves the device-bound xdp_vlan_tag to share the XDP hook of " + dev.name + " with " +
			       to_string(f) + " (one composed program, not device-bound): tags the device strips are "
			       "no longer read from its metadata");
		}
		auto t = rx_vlan_take(dev, *rxv, holder, d.tag_reader, opts.keep_rx_vlan);
		if (!t) {
			if (st->ours.empty() && !had_pins)
				(void)remove_pin_dir(dir);
			return t.error();
		}
		rx_note = *t;
	}
	auto r = h != Hook::xdp ? attach_tc(dev, h, dir)
		 : join.compose ? attach_composed(dev, f, mode, dir, join.base, join.replace_id, join.why)
			      : attach_xdp(dev, f, mode, dir, reads_tags && rxv->meta_kfunc);
	if (!r && reads_tags)
		(void)rx_vlan_release(dev, holder);
	if (!r && st->ours.empty() && !had_pins)
		(void)remove_pin_dir(dir); // nothing of ours remains: leave no pins behind
	if (r) {
		r->tag_kfunc = reads_tags && rxv->meta_kfunc;
		r->rx_vlan_note = rx_note;
	}
	return r;
}

Error not_attached(const Netdev &dev, std::optional<Feature> f, std::optional<Hook> h)
{
	std::string where = dev.name + (h ? std::string(" at ") + to_string(*h) : std::string());
	return runtime_error(f ? std::string(to_string(*f)) + " is not attached to " + where
			       : "nothing of xoffload is attached to " + where,
			     ENOENT);
}

Result<std::vector<AttachInfo>> detach(const Netdev &dev, std::optional<Feature> f, std::optional<Hook> h)
{
	std::vector<AttachInfo> gone;
	// every feature at XDP: the user's program we chained after ours too
	if (!f && (!h || *h == Hook::xdp)) {
		auto c = detach_chain(dev);
		if (!c)
			return c.error();
		if (*c) {
			AttachInfo a{Hook::xdp, XdpMode::native, (*c)->prog_id, (*c)->prog_name};
			a.chain = true;
			a.composed = (*c)->composed;
			a.stages = (*c)->stages;
			gone.push_back(std::move(a));
		}
	}
	auto st = status(dev);
	if (!st)
		return st.error();
	size_t left = 0;
	// a program we chained behind libxdp's dispatcher keeps the pins
	if (path_exists(chain_prog_pin(pin_dir(dev))))
		left++;
	// stages of the composed program to take out: one swap for them all
	unsigned drop = 0;
	std::vector<AttachInfo> dropped;
	for (const auto &a : st->ours) {
		if ((h && a.hook != *h) || (f && a.feature != *f)) {
			left++;
			continue;
		}
		if (a.composed) {
			drop |= stage_of(a.feature);
			dropped.push_back(a);
			continue;
		}
		int err = 0;
		if (a.hook == Hook::xdp) {
			auto mp = xdp_query(dev);
			if (!mp)
				return mp.error();
			err = -ENOENT;
			for_each_xdp_prog(mp->get(), [&](xdp_program *p) {
				if (err == -ENOENT && xdp_program__id(p) == a.prog_id)
					err = xdp_program__detach(p, dev.ifindex,
								  xdp_multiprog__attach_mode(mp->get()), 0);
			});
		} else {
			LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = dev.ifindex, .attach_point = tc_point(a.hook));
			LIBBPF_OPTS(bpf_tc_opts, o, .handle = kTcHandle, .priority = kTcPriority);
			err = bpf_tc_detach(&hook, &o);
		}
		if (err)
			return errno_error(std::string("detach ") + a.prog_name + " from " + dev.name, err);
		gone.push_back(a);
		// the RX VLAN stripping it turned off comes back with its last holder
		if (a.hook == Hook::xdp)
			if (auto s = rx_vlan_release(dev, to_string(a.feature)); !s)
				return s.error();
	}
	if (drop) {
		// the chain slot staying keeps the pins (recv's stage has its own
		// maps, unpinned)
		const unsigned keep = st->composed_stages & ~drop;
		if (keep & XO_STAGE_CHAIN)
			left++;
		auto mode = parse_xdp_mode(st->xdp_mode);
		auto c = compose_swap(dev, pin_dir(dev), ComposeRequest{keep, mode.value_or(XdpMode::native),
									  st->composed->prog_id});
		if (!c)
			return c.error();
		for (auto &a : dropped) {
			a.stages = stage_list(keep);
			gone.push_back(a);
			if (auto s = rx_vlan_release(dev, to_string(a.feature)); !s)
				return s.error();
		}
	}
	for (const auto &a : gone)
		if (a.hook != Hook::xdp) {
			if (auto s = release_clsact(dev, pin_dir(dev)); !s)
				return s.error();
			break;
		}
	if (h && gone.empty())
		return not_attached(dev, f, h);
	if (!left)
		if (auto s = remove_pin_dir(pin_dir(dev)); !s)
			return s.error();
	return gone;
}

} // namespace xoffload
