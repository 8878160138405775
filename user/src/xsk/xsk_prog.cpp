// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Attach/detach of xdp_xsk through libxdp and access to its maps via the
// bpftool skeleton (the receiver owns the program; nothing is pinned).
#include "xoffload/xsk/prog.hpp"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <unistd.h>
#include <xdp/libxdp.h>

#include <cerrno>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "../bpf/compose.hpp"
#include "../bpf/xdp_attach.hpp"
#include "xdp_offload.skel.h"
#include "xoffload/core/pins.hpp"
#include "xoffload/core/fd.hpp"
#include "xoffload/core/kernel.hpp"
#include "xoffload/features/features.hpp"
#include "xoffload/core/owned.hpp"
#include "xdp_xsk.skel.h"
#include "xdp_xsk_tag.skel.h"
#include "xoffload/vlan/rx_vlan.hpp"
#include "xoffload/core/notice.hpp"

#ifndef BPF_F_XDP_DEV_BOUND_ONLY
#define BPF_F_XDP_DEV_BOUND_ONLY (1U << 6)
#endif

namespace xoffload::xsk {

namespace {
using XskSkel = Owned<xdp_xsk_bpf, xdp_xsk_bpf__destroy>;
using XskTagSkel = Owned<xdp_xsk_tag_bpf, xdp_xsk_tag_bpf__destroy>;
} // namespace

struct XskProgram::Impl {
	// Declaration order: the program is closed before the object it uses.
	XskSkel skel;	// or
	XskTagSkel tag_skel;	// device-bound, with the rx-vlan-tag kfunc
	bpf_object *obj = nullptr;			// whichever of the two
	bpf_program *bp = nullptr;
	bpf_map *cfg = nullptr, *xsks = nullptr, *stats = nullptr;
	Owned<xdp_program, xdp_program__close> prog;	// through libxdp; null when single
	Netdev dev;
	XdpMode mode = XdpMode::native;
	bool attached = false;
	bool multiprog = false;
	bool single = false;	// alone through libbpf: libxdp's dispatcher could not run it
	bool frags = false;
	uint32_t id = 0;
	std::string single_reason;
	std::string rx_vlan_holder;	// set while RX VLAN stripping is off for it
	// a stage of the composed program (xdp_offload), whose maps it uses
	Composition comp;
	bool composed = false;
};

const char *xsk_counter_name(unsigned reason) noexcept
{
	switch (reason) {
	case XO_XSK_CNT_REDIRECTED:
		return "redirected";
	case XO_XSK_CNT_NO_SOCKET:
		return "no_socket";
	case XO_XSK_CNT_FILTERED:
		return "filtered";
	case XO_XSK_CNT_MALFORMED:
		return "malformed";
	}
	return "?";
}

XskProgram::XskProgram(std::unique_ptr<Impl> p) : p_(std::move(p)) {}
XskProgram::XskProgram(XskProgram &&) noexcept = default;
XskProgram &XskProgram::operator=(XskProgram &&o) noexcept
{
	if (this != &o) {
		(void)detach();
		p_ = std::move(o.p_);
	}
	return *this;
}
XskProgram::~XskProgram()
{
	(void)detach();
}

namespace {

Error attach_error(const Netdev &dev, XdpMode mode, bool frags, int err)
{
	// xdp_xsk is frags-aware wherever the kernel is: its one entry is the last
	XdpAttachFailure fail{"attach xdp_xsk to " + dev.name + " (" + to_string(mode) + ")", err, mode, frags};
	fail.skb_flag = "--xdp-mode skb";
	fail.busy = "and cannot share it (another recv, or offload-tool attach; see offload-tool status)";
	return xdp_attach_error(dev, fail).error;
}

} // namespace

Result<XskProgram> XskProgram::attach(const Netdev &dev, XdpMode mode, const RxFilter &filter)
{
	// xdp_xsk opened for dev, frags-aware where the kernel is
	// --filter-vlan reads tags: the device's stripping and its stripped-tag
	// kfunc decide where the tag is (native mode only: generic XDP runs on
	// an skb the stack untagged already)
	// Without --filter-vlan the frames themselves want their tags: the
	// socket gets what XDP sees, and a stripped tag never comes back.
	std::optional<RxVlanFacts> rxv;
	if (auto f = filter.vlan_facts ? Result<RxVlanFacts>(*filter.vlan_facts) : rx_vlan_facts(dev); f) {
		rxv = *f;
		if (mode != XdpMode::native || !filter.vid)
			rxv->meta_kfunc = false;
	} else {
		notice("cannot read the VLAN offloads of " + dev.name + " (" + f.error().msg + "): " +
		       (filter.vid ? "--filter-vlan does not see tags the device strips"
				   : "frames reach the socket without the tags the device strips"));
	}
	// where the composed program (or one of ours alone) holds the hook,
	// recv joins it as a stage: the program swapped for one with it, its
	// maps this receiver's; the stripped-tag kfunc is not for it then
	if (auto c = join_composed(dev, mode, rxv); !c)
		return c.error();
	else if (*c) {
		auto p = std::move(**c);
		XskProgram out(std::move(p));
		return configure(std::move(out), dev, rxv, filter);
	}
	const bool tag = rxv && rxv->meta_kfunc;
	auto open = [&]() -> Result<std::unique_ptr<Impl>> {
		auto i = std::make_unique<Impl>();
		i->dev = dev;
		i->mode = mode;
		// xdp.frags lets the program run on multi-buffer frames (and
		// attach to a veth or NIC whose MTU exceeds a page); kernels
		// before 5.18 refuse the flag, so there it loads as a plain XDP
		// program
		i->frags = kernel_has_xdp_frags();
		if (tag) {
			i->tag_skel.reset(xdp_xsk_tag_bpf__open());
			if (!i->tag_skel)
				return errno_error("open xdp_xsk_tag object", errno);
			i->tag_skel->rodata->xo_xsk_frags = i->frags;
			i->obj = i->tag_skel->obj;
			i->bp = i->tag_skel->progs.xdp_xsk_tag;
			i->cfg = i->tag_skel->maps.xo_xsk_cfg;
			i->xsks = i->tag_skel->maps.xo_xsk_map;
			i->stats = i->tag_skel->maps.xo_xsk_stats;
			bpf_program__set_ifindex(i->bp, static_cast<__u32>(dev.ifindex));
			if (int err = bpf_program__set_flags(i->bp, bpf_program__flags(i->bp) | BPF_F_XDP_DEV_BOUND_ONLY))
				return errno_error("make xdp_xsk_tag device-bound", err);
			return i;
		}
		i->skel.reset(xdp_xsk_bpf__open());
		if (!i->skel)
			return errno_error("open xdp_xsk object", errno);
		i->skel->rodata->xo_xsk_frags = i->frags;
		i->obj = i->skel->obj;
		i->bp = i->skel->progs.xdp_xsk;
		i->cfg = i->skel->maps.xo_xsk_cfg;
		i->xsks = i->skel->maps.xo_xsk_map;
		i->stats = i->skel->maps.xo_xsk_stats;
		return i;
	};
	auto opened = open();
	if (!opened)
		return opened.error();
	auto p = std::move(*opened);
	LibxdpAttach a;
	if (tag) {
		// the kernel refuses to chain a device-bound program behind
		// libxdp's dispatcher, and libxdp cannot load one: alone
		a.err = -EOPNOTSUPP;
		a.dispatcher_refused = "xdp_xsk reads stripped tags through the rx-vlan-tag kfunc, which needs a "
				       "device-bound program, and libxdp's dispatcher cannot chain those";
	} else {

	// libxdp loads the object as part of attach; the filter map is written
	// right after, before any socket is in the XSKMAP.
	DECLARE_LIBXDP_OPTS(xdp_program_opts, po, .obj = p->obj, .prog_name = bpf_program__name(p->bp));
	p->prog.reset(xdp_program__create(&po));
	if (long err = libxdp_get_error(p->prog.get())) {
		p->prog.release();
		return errno_error("create xdp_xsk program", static_cast<int>(err));
	}
	if (!p->frags)
		if (int err = xdp_program__set_xdp_frags_support(p->prog.get(), false))
			return errno_error("load xdp_xsk without frags support", err);
	a = libxdp_attach(p->prog.get(), p->bp, dev.ifindex, mode, p->frags);
	if (a.err && a.dispatcher_refused.empty())
		return attach_error(dev, mode, p->frags, a.err);
	}
	if (a.err) {
		// libxdp's dispatcher cannot run it here: alone, from a fresh
		// object (the refused one was made the dispatcher's extension)
		if (!tag) {
			opened = open();
			if (!opened)
				return opened.error();
			p = std::move(*opened);
		}
		bpf_program *bp = p->bp;
		if (!p->frags)
			(void)bpf_program__set_flags(bp, bpf_program__flags(bp) & ~BPF_F_XDP_HAS_FRAGS);
		if (int err = bpf_object__load(p->obj))
			return errno_error(std::string("load ") + bpf_program__name(bp), err);
		std::string versions = " (" + libxdp_version() + ", kernel " + kernel_release() + ")";
		if (int err = xdp_attach_single(dev.ifindex, bpf_program__fd(bp), mode)) {
			Error e = attach_error(dev, mode, p->frags, err);
			e.msg = a.dispatcher_refused + versions + ", and alone: " + e.msg;
			return e;
		}
		p->single = true;
		p->single_reason = note_single_program(a.dispatcher_refused, bpf_program__name(bp));
		bpf_prog_info pi{};
		uint32_t len = sizeof(pi);
		if (!bpf_obj_get_info_by_fd(bpf_program__fd(bp), &pi, &len))
			p->id = pi.id;
	} else {
		p->id = xdp_program__id(p->prog.get());
		if (!a.libxdp_single.empty())
			p->single_reason = note_single_program(a.libxdp_single, "xdp_xsk");
	}
	p->attached = true;
	if (xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(dev.ifindex); !libxdp_get_error(mp) && mp) {
		Owned<xdp_multiprog, xdp_multiprog__close> owner(mp);
		p->multiprog = !xdp_multiprog__is_legacy(mp);
	}
	return configure(XskProgram(std::move(p)), dev, rxv, filter);
}

Result<std::optional<std::unique_ptr<XskProgram::Impl>>> XskProgram::join_composed(const Netdev &dev, XdpMode mode,
										     std::optional<RxVlanFacts> &rxv)
{
	using Out = std::optional<std::unique_ptr<Impl>>;
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	if (int err = bpf_xdp_query(dev.ifindex, 0, &q))
		return errno_error("query the XDP hook of " + dev.name, err);
	if (!q.prog_id)
		return Out{};
	UniqueFd fd(bpf_prog_get_fd_by_id(q.prog_id));
	bpf_prog_info info{};
	uint32_t len = sizeof(info);
	if (!fd.valid() || bpf_obj_get_info_by_fd(fd.get(), &info, &len))
		return Out{};	// gone meanwhile: the attach below tells
	const std::string name = info.name;
	unsigned base = 0;
	if (is_composed_name(name)) {
		auto c = read_composed(q.prog_id);
		if (!c)
			return c.error();
		if (c->stages & XO_STAGE_XSK)
			return runtime_error("recv's stage already runs in the composed program on " + dev.name +
						     " (prog id " + std::to_string(q.prog_id) + "; see offload-tool status)",
					     EBUSY);
		base = c->stages;
	} else {
		// one of our vlan/geneve programs alone: composed with it
		static const std::vector<std::string> ours = {"xdp_vlan", "xdp_vlan_mb", "xdp_geneve", "xdp_geneve_mb"};
		for (const auto &n : ours)
			if (name == n)
				base = name.rfind("xdp_vlan", 0) == 0 ? XO_STAGE_VLAN : XO_STAGE_GENEVE;
		if (!base)
			return Out{};
	}
	const XdpMode hook_mode = q.attach_mode == XDP_ATTACHED_SKB ? XdpMode::skb : XdpMode::native;
	if (hook_mode != mode)
		return usage_error(std::string("the XDP hook of ") + dev.name + " runs in " + to_string(hook_mode) + " mode (" +
				   name + "), and recv joins it there: use --xdp-mode " + to_string(hook_mode));
	if (rxv)
		rxv->meta_kfunc = false;
	const std::string dir = pin_dir(dev);
	auto c = compose_swap(dev, dir, ComposeRequest{base | XO_STAGE_XSK, mode, q.prog_id});
	if (!c)
		return c.error();
	auto p = std::make_unique<Impl>();
	p->dev = dev;
	p->mode = mode;
	p->frags = c->prog.frags;
	p->id = c->prog.prog_id;
	p->attached = true;
	p->composed = true;
	p->single_reason = "recv runs as a stage of the composed program " + c->prog.prog_name + " (stages " +
			   stage_list(c->prog.stages) + ")";
	xdp_offload_bpf *sk = c->skel();
	p->obj = sk->obj;
	p->bp = c->prog.frags ? sk->progs.xdp_offload_mb : sk->progs.xdp_offload;
	p->cfg = sk->maps.xo_xsk_cfg;
	p->xsks = sk->maps.xo_xsk_map;
	p->stats = sk->maps.xo_xsk_stats;
	p->comp = std::move(*c);
	return Out{std::move(p)};
}

Result<XskProgram> XskProgram::configure(XskProgram out, const Netdev &dev, const std::optional<RxVlanFacts> &rxv,
					 const RxFilter &filter)
{
	if (rxv) {
		// after the attach: the holder is named by the program's id, which
		// `detach` finds again when this recv was killed
		const std::string holder = "xsk-" + std::to_string(out.p_->id);
		auto t = rx_vlan_take(dev, *rxv, holder, filter.vid ? TagReader::xdp_xsk : TagReader::xsk_frames,
				      filter.keep_rx_vlan);
		if (!t)
			return t.error();
		out.p_->rx_vlan_holder = holder;
	}

	xo_xsk_filter f{};
	f.abi_version = XO_ABI_VERSION;
	if (filter.ethertype) {
		f.flags |= XO_XSK_F_ETHERTYPE;
		f.ethertype = htons(*filter.ethertype);
	}
	if (filter.vid) {
		f.flags |= XO_XSK_F_VLAN;
		f.vid = *filter.vid;
	}
	if (filter.udp_dport) {
		f.flags |= XO_XSK_F_UDP_DPORT;
		f.udp_dport = htons(*filter.udp_dport);
	}
	uint32_t zero = 0;
	if (bpf_map_update_elem(bpf_map__fd(out.p_->cfg), &zero, &f, BPF_ANY))
		return errno_error("set xdp_xsk filter", errno);
	return out;
}

Status XskProgram::add_socket(uint32_t queue, int xsk_fd)
{
	if (queue >= XO_XSK_MAX_QUEUES)
		return usage_error("queue " + std::to_string(queue) + " beyond the XSKMAP (" +
				   std::to_string(XO_XSK_MAX_QUEUES) + " slots)");
	if (bpf_map_update_elem(bpf_map__fd(p_->xsks), &queue, &xsk_fd, BPF_ANY))
		return errno_error("put AF_XDP socket of queue " + std::to_string(queue) + " in the XSKMAP", errno);
	return ok();
}

Result<XskProgCounters> XskProgram::counters() const
{
	XskProgCounters c;
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return errno_error("count possible CPUs", ncpu);
	std::vector<xo_counter> per(static_cast<size_t>(ncpu));
	int fd = bpf_map__fd(p_->stats);
	for (uint32_t r = 0; r < XO_XSK_CNT_MAX; r++) {
		if (bpf_map_lookup_elem(fd, &r, per.data()))
			return errno_error("read xdp_xsk counters", errno);
		for (const auto &v : per) {
			c.v[r].packets += v.packets;
			c.v[r].bytes += v.bytes;
		}
	}
	return c;
}

const std::string &XskProgram::name()
{
	static const std::string n = [] {
		XskSkel s(xdp_xsk_bpf__open());
		return s ? std::string(bpf_program__name(s->progs.xdp_xsk)) : std::string();
	}();
	return n;
}

bool XskProgram::is_xsk_name(const std::string &name)
{
	static const std::string tag = [] {
		XskTagSkel s(xdp_xsk_tag_bpf__open());
		return s ? std::string(bpf_program__name(s->progs.xdp_xsk_tag)) : std::string();
	}();
	return name == XskProgram::name() || name == tag;
}

uint32_t XskProgram::prog_id() const noexcept
{
	return p_ ? p_->id : 0;
}

bool XskProgram::multiprog() const noexcept
{
	return p_ && p_->multiprog;
}

bool XskProgram::frags() const noexcept
{
	return p_ && p_->frags;
}

const std::string &XskProgram::single_reason() const noexcept
{
	static const std::string none;
	return p_ ? p_->single_reason : none;
}

Status XskProgram::detach()
{
	if (!p_ || !p_->attached)
		return ok();
	p_->attached = false;
	if (auto s = leave_composed(); !s || *s)
		return s ? release_rx_vlan() : Status(s.error());
	int err = p_->single ? xdp_detach_single(p_->dev.ifindex, bpf_program__fd(p_->bp), p_->mode)
			     : xdp_program__detach(p_->prog.get(), p_->dev.ifindex,
						   p_->mode == XdpMode::skb ? XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
	if (err && err != -ENOENT)
		return errno_error("detach xdp_xsk from " + p_->dev.name, err);
	return release_rx_vlan();
}

Result<bool> XskProgram::leave_composed()
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	if (int err = bpf_xdp_query(p_->dev.ifindex, 0, &q))
		return err == -ENODEV ? Result<bool>(true) : errno_error("query the XDP hook of " + p_->dev.name, err);
	if (!q.prog_id)
		return p_->composed;
	auto c = read_composed(q.prog_id);
	if (!c || !(c->stages & XO_STAGE_XSK))
		return p_->composed;	// not composed (our single xdp_xsk, or gone)
	// the hook's composed program runs our stage (ours from the start, or
	// joined when a feature was attached next to our xdp_xsk): taken out
	auto out = compose_swap(p_->dev, pin_dir(p_->dev), ComposeRequest{c->stages & ~XO_STAGE_XSK, p_->mode, q.prog_id});
	if (!out)
		return out.error();
	return true;
}

Status XskProgram::release_rx_vlan()
{
	if (!p_->rx_vlan_holder.empty()) {
		std::string holder = std::move(p_->rx_vlan_holder);
		p_->rx_vlan_holder.clear();
		if (auto s = rx_vlan_release(p_->dev, holder); !s)
			return s;
	}
	return ok();
}

} // namespace xoffload::xsk
