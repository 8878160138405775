// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "xoffload/bpf/probe.hpp"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "xoffload/core/owned.hpp"
#include "xoffload/core/result.hpp"
#include "xdp_probe_ext.skel.h"
#include "xdp_probe_slot.skel.h"

namespace xoffload {

namespace {

using ExtSkel = Owned<xdp_probe_ext_bpf, xdp_probe_ext_bpf__destroy>;
using SlotSkel = Owned<xdp_probe_slot_bpf, xdp_probe_slot_bpf__destroy>;
using Link = Owned<bpf_link, bpf_link__destroy>;

// Loads one of xdp_probe_ext's programs against @target_fd's xo_probe_slot
// and links it there; 0 or the positive errno of the step that failed
// (@step says which).
int try_ext(int target_fd, bool adjust, std::string &step, const char *slot = "xo_probe_slot")
{
	ExtSkel ext(xdp_probe_ext_bpf__open());
	if (!ext) {
		step = "open";
		return errno ? errno : EINVAL;
	}
	bpf_program *use = adjust ? ext->progs.xo_probe_ext_adjust : ext->progs.xo_probe_ext;
	bpf_program *other = adjust ? ext->progs.xo_probe_ext : ext->progs.xo_probe_ext_adjust;
	bpf_program__set_autoload(other, false);
	int err = -bpf_program__set_attach_target(use, target_fd, slot);
	if (!err && (err = -xdp_probe_ext_bpf__load(ext.get())))
		step = "load";
	if (!err) {
		Link l(bpf_program__attach_freplace(use, target_fd, slot));
		if (!l) {
			err = errno ? errno : EINVAL;
			step = "link";
		}
	}
	return err;
}

// A refusal is the answer, not a warning: libbpf stays quiet meanwhile.
struct Quiet {
	libbpf_print_fn_t old = libbpf_set_print(nullptr);
	~Quiet() { libbpf_set_print(old); }
};

// libxdp's dispatcher object where libxdp looks for it: LIBXDP_OBJECT_PATH,
// then the BPF directories its builds use (Debian: /usr/lib/<triplet>/bpf).
std::string dispatcher_object()
{
	std::vector<std::string> dirs;
	if (const char *e = std::getenv("LIBXDP_OBJECT_PATH"); e && *e)
		dirs.emplace_back(e);
#ifdef XO_MULTIARCH
	dirs.emplace_back("/usr/lib/" XO_MULTIARCH "/bpf");
#endif
	for (const char *d : {"/usr/lib/x86_64-linux-gnu/bpf", "/usr/lib/aarch64-linux-gnu/bpf", "/usr/lib/bpf",
			      "/usr/local/lib/bpf", "/usr/lib64/bpf"})
		dirs.emplace_back(d);
	for (const auto &d : dirs) {
		std::string p = d + "/xdp-dispatcher.o";
		if (::access(p.c_str(), R_OK) == 0)
			return p;
	}
	return {};
}

// Sets libxdp's dispatcher config in @obj's read-only data as libxdp does
// for one program that chains on XDP_PASS (struct xdp_dispatcher_config,
// found by its BTF: num_progs_enabled 1, chain_call_actions[0]). Without it
// the dispatcher calls no slot, and from 6.8 the kernel verifies a global
// function only where it is called: prog0 is then never seen to change
// packet data (libxdp 1.6's does), and the freplace is refused as it never
// is for libxdp's own load. False when the object has no such config.
bool enable_first_slot(bpf_object *obj)
{
	const btf *b = bpf_object__btf(obj);
	if (!b)
		return false;
	const int sid = btf__find_by_name_kind(b, "xdp_dispatcher_config", BTF_KIND_STRUCT);
	if (sid < 0)
		return false;
	long npe = -1, actions = -1;
	const btf_type *st = btf__type_by_id(b, sid);
	const btf_member *m = btf_members(st);
	for (unsigned i = 0; i < btf_vlen(st); i++, m++) {
		const std::string name = btf__name_by_offset(b, m->name_off);
		if (name == "num_progs_enabled")
			npe = btf_member_bit_offset(st, i) / 8;
		else if (name == "chain_call_actions")
			actions = btf_member_bit_offset(st, i) / 8;
	}
	if (npe < 0 || actions < 0)
		return false;
	bpf_map *map;
	bpf_object__for_each_map(map, obj) {
		const std::string mname = bpf_map__name(map);
		if (mname.size() < 7 || mname.compare(mname.size() - 7, 7, ".rodata") != 0)
			continue;
		// the config variable's place in the section
		const int ds = btf__find_by_name_kind(b, ".rodata", BTF_KIND_DATASEC);
		if (ds < 0)
			return false;
		const btf_type *sec = btf__type_by_id(b, ds);
		const btf_var_secinfo *v = btf_var_secinfos(sec);
		for (unsigned i = 0; i < btf_vlen(sec); i++, v++) {
			const btf_type *var = btf__type_by_id(b, v->type);
			if (!var || btf__resolve_type(b, var->type) != sid)
				continue;
			size_t size = 0;
			const void *now = bpf_map__initial_value(map, &size);
			if (!now || v->offset + actions + sizeof(__u32) > size)
				return false;
			std::vector<unsigned char> data(size);
			std::memcpy(data.data(), now, size);
			data[v->offset + npe] = 1;
			const __u32 pass = 1U << XDP_PASS;
			std::memcpy(data.data() + v->offset + actions, &pass, sizeof(pass));
			return bpf_map__set_initial_value(map, data.data(), size) == 0;
		}
	}
	return false;
}

} // namespace

ProbeResult probe_libxdp_chain()
{
	Quiet quiet;
	ProbeResult r;
	const std::string path = dispatcher_object();
	if (path.empty()) {
		r.how = "libxdp's xdp-dispatcher.o not found (LIBXDP_OBJECT_PATH, /usr/lib/<triplet>/bpf)";
		return r;
	}
	Owned<bpf_object, bpf_object__close> obj(bpf_object__open_file(path.c_str(), nullptr));
	const bool configured = obj && enable_first_slot(obj.get());
	if (!obj || bpf_object__load(obj.get())) {
		const int err = errno ? errno : EINVAL;
		r.how = "could not load " + path + " (" + errno_name(err) + ")";
		return r;
	}
	bpf_program *disp = bpf_object__next_program(obj.get(), nullptr);
	if (!disp) {
		r.how = path + " has no program";
		return r;
	}
	std::string step;
	int err = try_ext(bpf_program__fd(disp), true, step, "prog0");
	r.probed = true;
	r.ok = !err;
	r.how = err ? "libxdp's dispatcher (" + path + ") refused a packet-changing program: freplace " + step + " (" +
			      errno_name(err) + ")" + (configured ? "" : "; its config was not found to set")
		    : "libxdp's dispatcher (" + path + ") took a packet-changing program";
	return r;
}

DispatcherProbe probe_dispatcher()
{
	Quiet quiet;
	DispatcherProbe r;
	SlotSkel target(xdp_probe_slot_bpf__open_and_load());
	if (!target) {
		const int err = errno ? errno : EINVAL;
		r.freplace.how = r.packet_change.how =
			"could not load the probe's target program (" + errno_name(err) + "): not asked";
		return r;
	}
	const int fd = bpf_program__fd(target->progs.xo_probe_target);
	std::string step;
	int err = try_ext(fd, false, step);
	r.freplace.probed = true;
	r.freplace.ok = !err;
	r.freplace.how = err ? "freplace " + step + " refused (" + errno_name(err) + ")" : "freplace loaded and linked";
	if (r.freplace.ok) {
		err = try_ext(fd, true, step);
		r.packet_change.probed = true;
		r.packet_change.ok = !err;
		r.packet_change.how = err ? "packet-changing freplace " + step + " refused (" + errno_name(err) + ")"
					  : "packet-changing freplace loaded and linked";
	} else {
		r.packet_change.how = "not asked: no freplace at all";
	}
	return r;
}

} // namespace xoffload
