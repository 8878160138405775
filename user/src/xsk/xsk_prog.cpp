// Attach/detach of xdp_xsk through libxdp and access to its maps via the
// bpftool skeleton (the receiver owns the program; nothing is pinned).
#include "xoffload/xsk_prog.hpp"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>
#include <xdp/libxdp.h>

#include <cerrno>
#include <vector>

#include "../core/internal.hpp"
#include "xdp_xsk.skel.h"

namespace xoffload::xsk {

namespace {
struct SkelDel {
	void operator()(xdp_xsk_bpf *s) const { xdp_xsk_bpf__destroy(s); }
};
struct ProgDel {
	void operator()(xdp_program *p) const { xdp_program__close(p); }
};
} // namespace

struct XskProgram::Impl {
	// Declaration order: the program is closed before the object it uses.
	std::unique_ptr<xdp_xsk_bpf, SkelDel> skel;
	std::unique_ptr<xdp_program, ProgDel> prog;
	Netdev dev;
	xdp_attach_mode mode = XDP_MODE_NATIVE;
	bool attached = false;
	bool multiprog = false;
	bool frags = false;
	uint32_t id = 0;
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

Result<XskProgram> XskProgram::attach(const Netdev &dev, XdpMode mode, const RxFilter &filter)
{
	auto p = std::make_unique<Impl>();
	p->dev = dev;
	p->mode = mode == XdpMode::skb ? XDP_MODE_SKB : XDP_MODE_NATIVE;
	p->skel.reset(xdp_xsk_bpf__open());
	if (!p->skel)
		return errno_error("open xdp_xsk object", errno);
	// xdp.frags lets the program run on multi-buffer frames (and attach to a
	// veth or NIC whose MTU exceeds a page); kernels before 5.18 refuse the
	// flag, so there it loads as a plain XDP program
	p->frags = kernel_has_xdp_frags();
	p->skel->rodata->xo_xsk_frags = p->frags;

	// libxdp loads the object as part of attach; the filter map is written
	// right after, before any socket is in the XSKMAP.
	DECLARE_LIBXDP_OPTS(xdp_program_opts, po, .obj = p->skel->obj,
			    .prog_name = bpf_program__name(p->skel->progs.xdp_xsk));
	p->prog.reset(xdp_program__create(&po));
	if (long err = libxdp_get_error(p->prog.get())) {
		p->prog.release();
		return errno_error("create xdp_xsk program", static_cast<int>(err));
	}
	if (!p->frags)
		if (int err = xdp_program__set_xdp_frags_support(p->prog.get(), false))
			return errno_error("load xdp_xsk without frags support", err);
	int err = xdp_program__attach(p->prog.get(), dev.ifindex, p->mode, 0);
	if (err) {
		std::string why = "attach xdp_xsk to " + dev.name + " (" + to_string(mode) + ")";
		if (err == -EOPNOTSUPP && mode == XdpMode::native)
			return runtime_error(why + ": driver has no native XDP (try --xdp-mode skb)", EOPNOTSUPP);
		if (err == -ERANGE)
			return runtime_error(why + ": the MTU is too large for XDP on this device" +
						     (p->frags ? "" : " (kernel without XDP multi-buffer)"),
					     ERANGE);
		if (err == -EEXIST || err == -EBUSY)
			return runtime_error(why + ": another XDP program is attached and cannot be shared "
						   "(another recv, or offload-tool attach; see offload-tool status)",
					     -err);
		return errno_error(why, err);
	}
	p->attached = true;
	p->id = xdp_program__id(p->prog.get());
	if (xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(dev.ifindex); !libxdp_get_error(mp) && mp) {
		p->multiprog = !xdp_multiprog__is_legacy(mp);
		xdp_multiprog__close(mp);
	}
	XskProgram out(std::move(p));

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
	if (bpf_map_update_elem(bpf_map__fd(out.p_->skel->maps.xo_xsk_cfg), &zero, &f, BPF_ANY))
		return errno_error("set xdp_xsk filter", errno);
	return out;
}

Status XskProgram::add_socket(uint32_t queue, int xsk_fd)
{
	if (queue >= XO_XSK_MAX_QUEUES)
		return usage_error("queue " + std::to_string(queue) + " beyond the XSKMAP (" +
				   std::to_string(XO_XSK_MAX_QUEUES) + " slots)");
	if (bpf_map_update_elem(bpf_map__fd(p_->skel->maps.xo_xsk_map), &queue, &xsk_fd, BPF_ANY))
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
	int fd = bpf_map__fd(p_->skel->maps.xo_xsk_stats);
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

Status XskProgram::detach()
{
	if (!p_ || !p_->attached)
		return ok();
	p_->attached = false;
	int err = xdp_program__detach(p_->prog.get(), p_->dev.ifindex, p_->mode, 0);
	if (err && err != -ENOENT)
		return errno_error("detach xdp_xsk from " + p_->dev.name, err);
	return ok();
}

} // namespace xoffload::xsk
