// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// attach IFACE chain --prog OBJ[:PROG]: a user's XDP program after our
// stages. In the composed program's slot (a tail call through the pinned
// PROG_ARRAY xo_chain) where our stages are composed; behind libxdp's
// dispatcher, after ours, where the dispatcher chains our programs.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <unistd.h>
#include <xdp/libxdp.h>

#include <cerrno>
#include <string>
#include <vector>

#include "compose.hpp"
#include "xoffload/bpf/loader.hpp"
#include "xoffload/core/fd.hpp"
#include "xoffload/core/kernel.hpp"
#include "xoffload/core/owned.hpp"
#include "xoffload/core/pins.hpp"

namespace xoffload {

namespace {

using Object = Owned<bpf_object, bpf_object__close>;
using XdpProg = Owned<xdp_program, xdp_program__close>;

// Behind libxdp's dispatcher: after xdp_vlan (20), xdp_geneve (25) and
// recv's xdp_xsk (libxdp's default, 50).
constexpr unsigned kChainRunPrio = 200;

// Where the user's object pins its maps by name (LIBBPF_PIN_BY_NAME), so
// they go with the chain and can be found for configuring (xdp-filter's
// filter_ports): a folder of the interface's pin directory.
std::string chain_map_dir(const std::string &dir)
{
	return dir + "/chain";
}

// The pins the composed program's chain stage makes (stage_of_map).
const char *const kChainMaps[] = {"xo_chain", "xo_off_stats"};

// The one program of @obj that @want names (by name or section), or its
// only XDP program when @want is empty.
Result<bpf_program *> pick_program(bpf_object *obj, const std::string &path, const std::string &want)
{
	std::vector<bpf_program *> xdp;
	std::string names;
	bpf_program *p;
	bpf_object__for_each_program(p, obj) {
		const std::string name = bpf_program__name(p), sec = bpf_program__section_name(p);
		names += (names.empty() ? "" : ", ") + name + " (" + sec + ")";
		if (!want.empty() && (want == name || want == sec))
			return p;
		if (bpf_program__type(p) == BPF_PROG_TYPE_XDP)
			xdp.push_back(p);
	}
	if (!want.empty())
		return usage_error(path + " has no program or section " + want + "; it has: " +
				   (names.empty() ? "none" : names));
	if (xdp.size() != 1)
		return usage_error(path + " has " + std::to_string(xdp.size()) + " XDP programs; name one as " + path +
				   ":PROG (it has: " + (names.empty() ? "none" : names) + ")");
	return xdp.front();
}

// Opens @rq.object with only the chosen program to load, as an XDP
// program; multi-buffer aware when @frags (a tail call needs the caller's
// setting).
Result<Object> open_user_prog(const ChainRequest &rq, const std::string &dir, bool frags, bpf_program **out)
{
	if (::access(rq.object.c_str(), R_OK))
		return errno_error("read " + rq.object, errno);
	const std::string maps = chain_map_dir(dir);
	if (auto s = make_dirs(maps); !s)
		return s.error();
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = maps.c_str());
	Object obj(bpf_object__open_file(rq.object.c_str(), &oo));
	if (!obj)
		return errno_error("open BPF object " + rq.object, errno);
	auto p = pick_program(obj.get(), rq.object, rq.program);
	if (!p)
		return p.error();
	bpf_program *q;
	bpf_object__for_each_program(q, obj.get()) bpf_program__set_autoload(q, q == *p);
	bpf_program__set_type(*p, BPF_PROG_TYPE_XDP);
	bpf_program__set_expected_attach_type(*p, BPF_XDP);
	if (frags)
		bpf_program__set_flags(*p, bpf_program__flags(*p) | BPF_F_XDP_HAS_FRAGS);
	*out = *p;
	return obj;
}

ChainInfo chain_info(int prog_fd, const ChainRequest &rq)
{
	ChainInfo c;
	bpf_prog_info pi{};
	uint32_t len = sizeof(pi);
	if (!bpf_obj_get_info_by_fd(prog_fd, &pi, &len)) {
		c.prog_id = pi.id;
		c.prog_name = pi.name;
	}
	c.object = rq.object;
	return c;
}

// The chain's pins: the slot's maps and the user's object's.
void unlink_chain_maps(const std::string &dir)
{
	for (const char *m : kChainMaps)
		(void)::unlink((dir + "/" + m).c_str());
	(void)remove_pin_dir(chain_map_dir(dir));
}

// Behind libxdp's dispatcher, after ours.
Result<ChainInfo> attach_behind_dispatcher(const Netdev &dev, const ChainRequest &rq, const std::string &dir)
{
	bpf_program *bp = nullptr;
	auto obj = open_user_prog(rq, dir, false, &bp);
	if (!obj)
		return obj.error();
	const std::string name = bpf_program__name(bp);
	DECLARE_LIBXDP_OPTS(xdp_program_opts, xo, .obj = obj->get(), .prog_name = name.c_str());
	XdpProg xp(xdp_program__create(&xo));
	if (long err = libxdp_get_error(xp.get())) {
		xp.release();
		return errno_error("open " + name + " from " + rq.object + " for libxdp", static_cast<int>(err));
	}
	if (int err = xdp_program__set_run_prio(xp.get(), kChainRunPrio))
		return errno_error("set the run priority of " + name, err);
	if (int err = xdp_program__attach(xp.get(), dev.ifindex,
					  rq.mode == XdpMode::skb ? XDP_MODE_SKB : XDP_MODE_NATIVE, 0))
		return errno_error("attach " + name + " to " + dev.name + " behind libxdp's dispatcher", err);
	if (bpf_obj_pin(xdp_program__fd(xp.get()), chain_prog_pin(dir).c_str())) {
		const int err = errno;
		(void)xdp_program__detach(xp.get(), dev.ifindex, XDP_MODE_UNSPEC, 0);
		return errno_error("pin " + chain_prog_pin(dir), err);
	}
	ChainInfo c = chain_info(xdp_program__fd(xp.get()), rq);
	c.run_prio = kChainRunPrio;
	return c;
}

} // namespace

Result<ChainInfo> attach_chain(const Netdev &dev, const ChainRequest &rq)
{
	auto st = status(dev);
	if (!st)
		return st.error();
	const std::string dir = pin_dir(dev);
	if (st->composed && st->composed->chain_prog_id)
		return runtime_error("a program already runs in the chain slot of " + dev.name + ": " +
					     st->composed->chain_prog_name + " (prog id " +
					     std::to_string(st->composed->chain_prog_id) + "); detach " + dev.name +
					     " chain first",
				     EEXIST);
	if (path_exists(chain_prog_pin(dir)))
		return runtime_error("a program already runs after ours on " + dev.name + " (pinned at " + chain_prog_pin(dir) +
					     "); detach " + dev.name + " chain first",
				     EEXIST);
	auto join = plan_xdp_join(dev, *st, rq.mode, "chain");
	if (!join)
		return join.error();
	if (join->alone || join->bound) {
		const XdpProgInfo &p = st->xdp_progs.front();
		if (join->bound)
			return runtime_error("attach chain to " + dev.name + ": " + p.name + " (prog id " + std::to_string(p.id) +
						     ") reads stripped tags as a device-bound program, which runs alone; "
						     "detach it first (vlan: attach it again with --no-tag-kfunc)",
					     EBUSY);
		return runtime_error("attach chain to " + dev.name + ": " + p.name + " (prog id " + std::to_string(p.id) +
					     ") holds the XDP hook as a single program, which nothing can be chained to; "
					     "unload it first (a program of yours can then run through attach " +
					     dev.name + " chain --prog OBJ)",
				     EBUSY);
	}
	// behind libxdp's dispatcher, in the hook's mode (libxdp's own error
	// for another one says less)
	if (!join->compose && !st->xdp_mode.empty())
		if (auto hm = parse_xdp_mode(st->xdp_mode); hm && *hm != rq.mode)
			return usage_error("the XDP hook of " + dev.name + " runs in " + st->xdp_mode +
					   " mode, and the chained program joins it there: use --mode " + st->xdp_mode);
	const bool had_pins = path_exists(dir);
	if (auto s = make_dirs(dir); !s)
		return s.error();
	if (auto s = mark_pin_dir(dev); !s)
		return s.error();
	auto undo_dir = [&] {
		if (!had_pins)
			(void)remove_pin_dir(dir);
		else
			(void)remove_pin_dir(chain_map_dir(dir));
	};
	if (!join->compose) {
		auto c = attach_behind_dispatcher(dev, rq, dir);
		if (!c)
			undo_dir();
		return c;
	}
	// the composed program's entry with a chain stage is multi-buffer
	// wherever the kernel has multi-buffer XDP (compose_swap)
	bpf_program *bp = nullptr;
	auto obj = open_user_prog(rq, dir, kernel_has_xdp_frags(), &bp);
	if (!obj) {
		undo_dir();
		return obj.error();
	}
	if (int err = bpf_object__load(obj->get())) {
		undo_dir();
		return errno_error("load " + std::string(bpf_program__name(bp)) + " from " + rq.object +
					   " (run with -v for the verifier's log)",
				   err);
	}
	// the slot is filled before the swap: no frame finds it empty
	const std::string slot = dir + "/xo_chain";
	UniqueFd map(bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, "xo_chain", sizeof(__u32), sizeof(__u32), 1, nullptr));
	if (!map.valid()) {
		undo_dir();
		return errno_error("create the chain slot", errno);
	}
	const __u32 zero = 0;
	const __u32 fd = static_cast<__u32>(bpf_program__fd(bp));
	if (bpf_map_update_elem(map.get(), &zero, &fd, BPF_ANY)) {
		const int err = errno;
		undo_dir();
		return errno_error("put " + std::string(bpf_program__name(bp)) + " in the chain slot", err);
	}
	(void)::unlink(slot.c_str());	// a stale one of a chain detached by hand
	if (bpf_obj_pin(map.get(), slot.c_str())) {
		const int err = errno;
		undo_dir();
		return errno_error("pin " + slot, err);
	}
	auto c = compose_swap(dev, dir, ComposeRequest{join->base | XO_STAGE_CHAIN, rq.mode, join->replace_id});
	if (!c) {
		unlink_chain_maps(dir);
		undo_dir();
		return c.error();
	}
	ChainInfo out = chain_info(bpf_program__fd(bp), rq);
	out.composed = true;
	out.hook_prog_id = c->prog.prog_id;
	out.hook_prog_name = c->prog.prog_name;
	out.stages = stage_list(c->prog.stages);
	out.reason = join->why;
	return out;
}

Result<std::optional<ChainInfo>> detach_chain(const Netdev &dev)
{
	auto st = status(dev);
	if (!st)
		return st.error();
	const std::string dir = pin_dir(dev);
	if (st->composed && (st->composed_stages & XO_STAGE_CHAIN)) {
		ChainInfo c;
		c.composed = true;
		c.prog_id = st->composed->chain_prog_id;
		c.prog_name = st->composed->chain_prog_name;
		const unsigned keep = st->composed_stages & ~XO_STAGE_CHAIN;
		auto mode = parse_xdp_mode(st->xdp_mode);
		auto s = compose_swap(dev, dir, ComposeRequest{keep, mode.value_or(XdpMode::native), st->composed->prog_id});
		if (!s)
			return s.error();
		unlink_chain_maps(dir);
		c.stages = stage_list(keep);
		if (s->prog.prog_id) {
			c.hook_prog_id = s->prog.prog_id;
			c.hook_prog_name = s->prog.prog_name;
		}
		return std::optional<ChainInfo>(c);
	}
	const std::string pin = chain_prog_pin(dir);
	if (!path_exists(pin))
		return std::optional<ChainInfo>();
	UniqueFd fd(bpf_obj_get(pin.c_str()));
	if (!fd.valid())
		return errno_error("open " + pin, errno);
	ChainInfo c = chain_info(fd.get(), ChainRequest{});
	XdpProg xp(xdp_program__from_id(c.prog_id));
	if (long err = libxdp_get_error(xp.get())) {
		xp.release();
		return errno_error("open prog id " + std::to_string(c.prog_id) + " for libxdp", static_cast<int>(err));
	}
	// the dispatcher's own mode: with XDP_MODE_UNSPEC libxdp 1.3 replaces a
	// dispatcher attached in skb mode through the native slot, which the
	// kernel refuses ("Active program does not match expected": EBUSY)
	enum xdp_attach_mode mode = XDP_MODE_UNSPEC;
	if (xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(dev.ifindex); !libxdp_get_error(mp) && mp) {
		mode = xdp_multiprog__attach_mode(mp);
		xdp_multiprog__close(mp);
	}
	// gone from the hook already (unloaded by hand): the pin only
	int err = xdp_program__detach(xp.get(), dev.ifindex, mode, 0);
	if (err && err != -ENOENT && err != -ENODEV)
		return errno_error("detach " + c.prog_name + " from " + dev.name, err);
	(void)::unlink(pin.c_str());
	(void)remove_pin_dir(chain_map_dir(dir));
	return std::optional<ChainInfo>(c);
}

} // namespace xoffload
