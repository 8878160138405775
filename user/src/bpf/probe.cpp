// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "xoffload/bpf/probe.hpp"

#include <bpf/libbpf.h>

#include <cerrno>
#include <string>

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
int try_ext(int target_fd, bool adjust, std::string &step)
{
	ExtSkel ext(xdp_probe_ext_bpf__open());
	if (!ext) {
		step = "open";
		return errno ? errno : EINVAL;
	}
	bpf_program *use = adjust ? ext->progs.xo_probe_ext_adjust : ext->progs.xo_probe_ext;
	bpf_program *other = adjust ? ext->progs.xo_probe_ext : ext->progs.xo_probe_ext_adjust;
	bpf_program__set_autoload(other, false);
	int err = -bpf_program__set_attach_target(use, target_fd, "xo_probe_slot");
	if (!err && (err = -xdp_probe_ext_bpf__load(ext.get())))
		step = "load";
	if (!err) {
		Link l(bpf_program__attach_freplace(use, target_fd, "xo_probe_slot"));
		if (!l) {
			err = errno ? errno : EINVAL;
			step = "link";
		}
	}
	return err;
}

} // namespace

DispatcherProbe probe_dispatcher()
{
	// a refusal is the answer, not a warning: libbpf stays quiet meanwhile
	struct Quiet {
		libbpf_print_fn_t old = libbpf_set_print(nullptr);
		~Quiet() { libbpf_set_print(old); }
	} quiet;
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
