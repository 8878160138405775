// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Builds, swaps and reads back the composed XDP program (compose.hpp).
#include "compose.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <utility>

#include "xoffload/bpf/probe.hpp"
#include "xoffload/core/fd.hpp"
#include "xoffload/core/kernel.hpp"
#include "xoffload/core/owned.hpp"
#include "xoffload/geneve/geneve.hpp"
#include "xdp_attach.hpp"
#include "xdp_offload.skel.h"

namespace xoffload {

namespace {

using OffloadSkel = Owned<xdp_offload_bpf, xdp_offload_bpf__destroy>;

// An MTU above this may hand XDP a frame in several buffers (as loader.cpp).
constexpr uint32_t kSingleBufferMtu = 1500;

struct StageDesc {
	unsigned bit;
	const char *name;
	const char *map_prefix;	// the maps of the stage (abi.h's names)
};

// In run order.
constexpr StageDesc kStages[] = {
	{XO_STAGE_VLAN, "vlan", "xo_vlan_"},
	{XO_STAGE_GENEVE, "geneve", "xo_gnv_"},
	{XO_STAGE_XSK, "recv", "xo_xsk_"},
	{XO_STAGE_CHAIN, "chain", "xo_chain"},
};

// The stage a map of xdp_offload serves; 0 for its internal ones.
unsigned stage_of_map(std::string_view name)
{
	if (name == "xo_off_stats")
		return XO_STAGE_CHAIN;
	for (const StageDesc &s : kStages)
		if (name.substr(0, std::strlen(s.map_prefix)) == s.map_prefix)
			return s.bit;
	return 0;
}

__u32 mode_flag(XdpMode mode)
{
	return mode == XdpMode::skb ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
}

const std::string &entry_name(bool frags)
{
	static const std::array<std::string, 2> names = [] {
		OffloadSkel s(xdp_offload_bpf__open());
		if (!s)
			return std::array<std::string, 2>{"xdp_offload", "xdp_offload_mb"};
		return std::array<std::string, 2>{bpf_program__name(s->progs.xdp_offload),
						  bpf_program__name(s->progs.xdp_offload_mb)};
	}();
	return names[frags];
}

// The maps of program @fd: id -> (name, fd), as a list.
struct ProgMap {
	std::string name;
	UniqueFd fd;
};

Result<std::vector<ProgMap>> prog_maps(int prog_fd)
{
	bpf_prog_info info{};
	uint32_t len = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return errno_error("read program info", errno);
	std::vector<uint32_t> ids(info.nr_map_ids);
	if (!ids.empty()) {
		bpf_prog_info again{};
		again.nr_map_ids = static_cast<uint32_t>(ids.size());
		again.map_ids = reinterpret_cast<uintptr_t>(ids.data());
		len = sizeof(again);
		if (bpf_obj_get_info_by_fd(prog_fd, &again, &len))
			return errno_error("read program maps", errno);
		ids.resize(std::min<size_t>(ids.size(), again.nr_map_ids));
	}
	std::vector<ProgMap> out;
	for (uint32_t id : ids) {
		UniqueFd fd(bpf_map_get_fd_by_id(id));
		if (!fd.valid())
			continue;	// gone meanwhile
		bpf_map_info mi{};
		uint32_t ml = sizeof(mi);
		if (bpf_obj_get_info_by_fd(fd.get(), &mi, &ml))
			continue;
		out.push_back({mi.name, std::move(fd)});
	}
	return out;
}

} // namespace

// A directory under the pin directory, flocked (bpffs holds no plain
// files; the pin directory's own flock is the VLAN and Geneve maps').
Result<UniqueFd> lock_hook_swaps(const std::string &dir)
{
	const std::string path = dir + "/compose-lock";
	if (::mkdir(path.c_str(), 0700) && errno != EEXIST)
		return errno_error("create " + path, errno);
	UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	if (!fd.valid() || flock(fd.get(), LOCK_EX))
		return errno_error("lock " + path, errno);
	return fd;
}

namespace {

// Serialises swaps of one interface's hook (attach, detach, recv, rearm).
class ComposeLock {
public:
	static Result<ComposeLock> take(const std::string &dir)
	{
		auto fd = lock_hook_swaps(dir);
		if (!fd)
			return fd.error();
		ComposeLock l;
		l.fd_ = std::move(*fd);
		return l;
	}

private:
	UniqueFd fd_;
};

// Loads xdp_offload's @frags entry with @stages; maps as compose_swap says.
Result<OffloadSkel> load_offload(const std::string &dir, unsigned stages, bool frags, int old_fd)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = dir.c_str());
	OffloadSkel skel(xdp_offload_bpf__open_opts(&oo));
	if (!skel)
		return errno_error("open xdp_offload object", errno);
	skel->rodata->xo_stages = stages;
	skel->rodata->xo_xsk_frags = frags;
	bpf_program__set_autoload(frags ? skel->progs.xdp_offload : skel->progs.xdp_offload_mb, false);
	std::vector<ProgMap> old;
	if (old_fd >= 0) {
		auto m = prog_maps(old_fd);
		if (!m)
			return m.error();
		old = std::move(*m);
	}
	bpf_map *m;
	bpf_object__for_each_map(m, skel->obj) {
		const std::string name = bpf_map__name(m);
		const unsigned st = stage_of_map(name);
		if (!st)
			continue;	// .rodata and the like: this object's own
		if (!(st & stages)) {
			// a stage it does not run: a private map, no pin made
			if (int err = bpf_map__set_pin_path(m, nullptr))
				return errno_error("unpin " + name, err);
			continue;
		}
		if (bpf_map__pin_path(m))
			continue;	// shared through its pin
		// unpinned (recv's XSKMAP, filter and counters): the old program's,
		// so the sockets in it keep receiving across the swap
		for (auto &o : old)
			if (o.name == name.substr(0, o.name.size()) && !o.name.empty()) {
				if (int err = bpf_map__reuse_fd(m, o.fd.get()))
					return errno_error("reuse map " + name, err);
				break;
			}
	}
	if ((stages & XO_STAGE_GENEVE)) {
		if (auto s = renew_cpumap(dir); !s)
			return s.error();
		// the VNI bitmap in step before the program reads it, as attach
		// does (upgrade_geneve_pins); the pin directory's name for messages
		const size_t slash = dir.find_last_of('/');
		if (auto s = sync_pinned_vnibits(dir, slash == std::string::npos ? dir : dir.substr(slash + 1)); !s)
			return s.error();
	}
	if (int err = xdp_offload_bpf__load(skel.get()))
		return errno_error("load xdp_offload (stages " + stage_list(stages) + ")", err);
	return skel;
}

// The pin files of @skel's maps that do not exist yet.
std::vector<std::string> new_pins(const std::string &dir, unsigned stages)
{
	std::vector<std::string> paths;
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = dir.c_str());
	OffloadSkel skel(xdp_offload_bpf__open_opts(&oo));
	if (!skel)
		return paths;
	bpf_map *m;
	bpf_object__for_each_map(m, skel->obj) {
		const unsigned st = stage_of_map(bpf_map__name(m));
		if (const char *p = bpf_map__pin_path(m); p && (st & stages) && !path_exists(p))
			paths.emplace_back(p);
	}
	return paths;
}

} // namespace

Result<uint32_t> hook_prog_id(int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	if (int err = bpf_xdp_query(ifindex, 0, &q))
		return errno_error("query the XDP hook", err);
	return q.prog_id;
}

std::string chain_prog_pin(const std::string &pin_dir)
{
	return pin_dir + "/xo_chain_prog";
}

Result<XdpJoin> plan_xdp_join(const Netdev &dev, const IfStatus &st, XdpMode mode, const std::string &what)
{
	XdpJoin j;
	if (st.xdp_progs.empty()) {
		j.why = composition_reason();
		j.compose = !j.why.empty();
		return j;
	}
	if (!st.composed && st.xdp_multiprog)
		return j;
	const XdpProgInfo &p = st.xdp_progs.front();
	if (st.composed) {
		j.base = st.composed_stages;
		j.why = st.composed->reason;
	} else {
		j.base = single_stage(p.name, j.bound);
		if (!j.base || (j.bound && j.base == XO_STAGE_XSK)) {
			j.alone = &p;
			return j;
		}
		j.why = composition_reason();
		if (j.why.empty())
			j.why = p.name + " ran alone at the hook, which nothing can be chained to";
	}
	if (auto hm = parse_xdp_mode(st.xdp_mode); hm && *hm != mode)
		return usage_error("the XDP hook of " + dev.name + " runs in " + st.xdp_mode + " mode (" + p.name + "), and " +
				   what + " joins it there: use --mode " + st.xdp_mode);
	j.compose = true;
	j.replace_id = p.id;
	return j;
}

const char *stage_name(unsigned stage)
{
	for (const StageDesc &s : kStages)
		if (s.bit == stage)
			return s.name;
	return "?";
}

std::string stage_list(unsigned stages)
{
	std::string s;
	for (const StageDesc &d : kStages)
		if (stages & d.bit)
			s += (s.empty() ? "" : ", ") + std::string(d.name);
	return s.empty() ? "none" : s;
}

unsigned stage_of(Feature f)
{
	return f == Feature::vlan ? XO_STAGE_VLAN : XO_STAGE_GENEVE;
}

bool is_composed_name(std::string_view name)
{
	return name == entry_name(false) || name == entry_name(true);
}

Result<ComposedProg> read_composed(uint32_t prog_id)
{
	UniqueFd fd(bpf_prog_get_fd_by_id(prog_id));
	if (!fd.valid())
		return errno_error("open prog id " + std::to_string(prog_id), errno);
	bpf_prog_info info{};
	uint32_t len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd.get(), &info, &len))
		return errno_error("read prog id " + std::to_string(prog_id), errno);
	ComposedProg c;
	c.prog_id = prog_id;
	c.prog_name = info.name;
	if (!is_composed_name(c.prog_name))
		return runtime_error("prog id " + std::to_string(prog_id) + " (" + c.prog_name +
				     ") is not xoffload's composed program", EINVAL);
	c.frags = c.prog_name == entry_name(true);
	auto maps = prog_maps(fd.get());
	if (!maps)
		return maps.error();
	using Rodata = xdp_offload_bpf::xdp_offload_bpf__rodata;
	for (auto &m : *maps) {
		bpf_map_info mi{};
		uint32_t ml = sizeof(mi);
		if (bpf_obj_get_info_by_fd(m.fd.get(), &mi, &ml))
			continue;
		if (m.name.size() > 7 && m.name.compare(m.name.size() - 7, 7, ".rodata") == 0 &&
		    mi.value_size >= sizeof(Rodata)) {
			std::vector<std::byte> v(mi.value_size);
			uint32_t zero = 0;
			if (bpf_map_lookup_elem(m.fd.get(), &zero, v.data()))
				return errno_error("read the stages of prog id " + std::to_string(prog_id), errno);
			std::memcpy(&c.stages, v.data() + offsetof(Rodata, xo_stages), sizeof(c.stages));
		} else if (m.name == "xo_chain" && mi.type == BPF_MAP_TYPE_PROG_ARRAY) {
			uint32_t zero = 0, id = 0;
			if (!bpf_map_lookup_elem(m.fd.get(), &zero, &id))
				c.chain_id = id;
		}
	}
	return c;
}

const std::string &composition_reason()
{
	static const std::string why = [] {
		DispatcherProbe d = probe_dispatcher();
		if (!d.freplace.ok)
			return "libxdp's dispatcher cannot load here (" + d.freplace.how + ")";
		ProbeResult lx = probe_libxdp_chain();
		if (lx.probed && !lx.ok)
			return lx.how;
		return std::string();
	}();
	return why;
}

struct Composition::Skel {
	OffloadSkel skel;
};

Composition::Composition() = default;
Composition::~Composition() = default;
Composition::Composition(Composition &&) noexcept = default;
Composition &Composition::operator=(Composition &&) noexcept = default;

xdp_offload_bpf *Composition::skel() const
{
	return s ? s->skel.get() : nullptr;
}

int Composition::prog_fd() const
{
	const xdp_offload_bpf *k = skel();
	return k ? bpf_program__fd(prog.frags ? k->progs.xdp_offload_mb : k->progs.xdp_offload) : -1;
}

namespace {

// @skel's @frags entry with @stages, as a Composition.
Result<Composition> composition_of(OffloadSkel skel, unsigned stages, bool frags)
{
	Composition out;
	bpf_program *bp = frags ? skel->progs.xdp_offload_mb : skel->progs.xdp_offload;
	bpf_prog_info pi{};
	uint32_t len = sizeof(pi);
	if (bpf_obj_get_info_by_fd(bpf_program__fd(bp), &pi, &len))
		return errno_error("read the new program's id", errno);
	out.prog.prog_id = pi.id;
	out.prog.prog_name = bpf_program__name(bp);
	out.prog.stages = stages;
	out.prog.frags = frags;
	out.s = std::make_unique<Composition::Skel>();
	out.s->skel = std::move(skel);
	return out;
}

} // namespace

Result<Composition> load_composed(const std::string &dir, unsigned stages, bool frags)
{
	auto skel = load_offload(dir, stages, frags, -1);
	if (!skel)
		return skel.error();
	return composition_of(std::move(*skel), stages, frags);
}

Result<Composition> compose_swap(const Netdev &dev, const std::string &dir, const ComposeRequest &rq)
{
	// the lock lives in the pin directory; one made for it alone (recv's
	// stage, which pins nothing, coming or going) goes again afterwards
	if (!path_exists(dir)) {
		if (auto s = make_dirs(dir); !s)
			return s.error();
		auto r = compose_swap(dev, dir, rq);
		if (!(rq.stages & ~XO_STAGE_XSK) || !r)
			(void)remove_pin_dir(dir);
		return r;
	}
	auto lock = ComposeLock::take(dir);
	if (!lock)
		return lock.error();
	auto now = hook_prog_id(dev.ifindex);
	if (!now)
		return now.error();
	if (*now != rq.replace_id)
		return runtime_error("the XDP hook of " + dev.name + " changed meanwhile (prog id " +
					     std::to_string(rq.replace_id) + " -> " + std::to_string(*now) + "); try again",
				     EAGAIN);
	UniqueFd old;
	if (rq.replace_id) {
		old = UniqueFd(bpf_prog_get_fd_by_id(rq.replace_id));
		if (!old.valid())
			return errno_error("open prog id " + std::to_string(rq.replace_id), errno);
	}
	Composition out;
	if (!rq.stages) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = old.get());
		int err = bpf_xdp_detach(dev.ifindex, XDP_FLAGS_REPLACE | mode_flag(rq.mode), &o);
		if (err && err != -ENODEV)
			return errno_error("detach xdp_offload from " + dev.name, err);
		return out;
	}
	auto mtu = netdev_mtu(dev.name);
	if (!mtu)
		return mtu.error();
	const bool can_frags = kernel_has_xdp_frags();
	bool frags = can_frags && ((rq.mode == XdpMode::native && *mtu > kSingleBufferMtu) ||
				   (rq.stages & (XO_STAGE_XSK | XO_STAGE_CHAIN)));
	const std::vector<std::string> created = new_pins(dir, rq.stages);
	auto unpin_created = [&] {
		for (const auto &p : created)
			(void)::unlink(p.c_str());
	};
	for (;;) {
		auto skel = load_offload(dir, rq.stages, frags, old.get());
		if (!skel) {
			unpin_created();
			return skel.error();
		}
		bpf_program *bp = frags ? (*skel)->progs.xdp_offload_mb : (*skel)->progs.xdp_offload;
		int err;
		if (old.valid()) {
			LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = old.get());
			err = bpf_xdp_attach(dev.ifindex, bpf_program__fd(bp), XDP_FLAGS_REPLACE | mode_flag(rq.mode), &o);
		} else {
			err = xdp_attach_single(dev.ifindex, bpf_program__fd(bp), rq.mode);
		}
		if (err && !frags && can_frags && refused_for_frags(rq.mode, err)) {
			frags = true;	// frames may span buffers here after all
			continue;
		}
		if (err) {
			unpin_created();
			XdpAttachFailure fail{"attach " + std::string(bpf_program__name(bp)) + " (stages " +
						      stage_list(rq.stages) + ") to " + dev.name + " (" + to_string(rq.mode) + ")",
					      err, rq.mode, frags};
			fail.skb_flag = "--mode skb";
			fail.busy = "(detach it first)";
			return xdp_attach_error(dev, fail).error;
		}
		return composition_of(std::move(*skel), rq.stages, frags);
	}
}

} // namespace xoffload
