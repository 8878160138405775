// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// XDP attach through libxdp with its refusals told apart (from what libbpf
// and libxdp log during the attach), and the single-program attach the
// loader and xdp_xsk fall back to when libxdp's dispatcher cannot run ours.
#include "xdp_attach.hpp"
#include "log.hpp"

#include <bpf/bpf.h>
#include <link.h>
#include <linux/if_link.h>
#include <sys/utsname.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "compose.hpp"
#include "xoffload/core/fd.hpp"
#include "xoffload/core/pins.hpp"
#include "xoffload/core/kernel.hpp"
#include "xoffload/core/owned.hpp"
#include "xoffload/core/notice.hpp"

namespace xoffload {

namespace {

// libbpf's and libxdp's messages while a LogCapture lives on this thread,
// every level, whatever the printers installed before let through.
thread_local std::string *t_log = nullptr;
libbpf_print_fn_t g_prev_libbpf = nullptr;
libxdp_print_fn_t g_prev_libxdp = nullptr;

void append_log(const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	char buf[512];
	int n = std::vsnprintf(buf, sizeof(buf), fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	if (static_cast<size_t>(n) < sizeof(buf)) {
		t_log->append(buf, static_cast<size_t>(n));
		return;
	}
	std::string big(static_cast<size_t>(n) + 1, '\0');
	va_copy(aq, ap);
	std::vsnprintf(big.data(), big.size(), fmt, aq);
	va_end(aq);
	big.pop_back();
	*t_log += big;
}

int capture_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (t_log)
		append_log(fmt, ap);
	return g_prev_libbpf ? g_prev_libbpf(level, fmt, ap) : 0;
}

int capture_libxdp(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	if (t_log)
		append_log(fmt, ap);
	return g_prev_libxdp ? g_prev_libxdp(level, fmt, ap) : 0;
}

// Installs the capturing printers, chained to the ones in place (which
// still print what they printed), for its lifetime.
class LogCapture {
public:
	LogCapture()
	{
		g_prev_libbpf = libbpf_set_print(capture_libbpf);
		g_prev_libxdp = libxdp_set_print(capture_libxdp);
		t_log = &text_;
	}
	~LogCapture()
	{
		t_log = nullptr;
		libbpf_set_print(g_prev_libbpf);
		libxdp_set_print(g_prev_libxdp);
	}
	LogCapture(const LogCapture &) = delete;
	LogCapture &operator=(const LogCapture &) = delete;
	const std::string &text() const { return text_; }

private:
	std::string text_;
};

// Sets @out to the rest of the line after @key in @log; false without @key.
bool line_after(std::string_view log, std::string_view key, std::string &out)
{
	size_t p = log.find(key);
	if (p == std::string_view::npos)
		return false;
	p += key.size();
	size_t e = log.find('\n', p);
	out = std::string(log.substr(p, e == std::string_view::npos ? std::string_view::npos : e - p));
	return true;
}

// The kernel refused to load the program as the dispatcher's extension,
// before verifying a single instruction (its freplace checks: the load log
// ends in "processed 0 insns"); a verifier failure processed some and is
// the program's own. Why, or empty.
std::string extension_refusal(const std::string &log, const char *prog)
{
	std::string first;
	if (!line_after(log, "-- BEGIN PROG LOAD LOG --\n", first))
		return {};
	// bpf_check_attach_target() (kernel/bpf/verifier.c), seen on Debian's
	// 6.12 and 7.2, not on 6.1; libxdp 1.6's dispatcher stub calls a
	// packet-changing helper, so it may run such extensions
	if (first.find("changes packet data") != std::string::npos)
		return "libxdp's dispatcher cannot run a packet-changing program on this kernel";
	if (log.find("processed 0 insns") == std::string::npos)
		return {};
	return std::string("the kernel refused ") + prog + " as an extension of libxdp's dispatcher (" + first + ")";
}

// Why libxdp attached a single program itself, from its own messages.
std::string libxdp_fallback_reason(const std::string &log)
{
	// libxdp checks once per process whether its dispatcher works, and
	// says why not only then
	static std::string compat_failure;
	std::string why;
	if (log.find("Skipping dispatcher due to environment setting") != std::string::npos)
		return "LIBXDP_SKIP_DISPATCHER=1 is set";
	if (line_after(log, "Compatibility check for dispatcher program failed: ", why))
		compat_failure = "libxdp's dispatcher cannot load on this kernel (freplace: " + why + ")";
	if (!compat_failure.empty())
		return compat_failure;
	if (line_after(log, "Failed to load dispatcher: ", why))
		return "libxdp's dispatcher failed to load (" + why + ")";
	return "libxdp did not use its dispatcher here";
}

__u32 mode_flag(XdpMode mode)
{
	return mode == XdpMode::skb ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
}

} // namespace

LibxdpAttach libxdp_attach(xdp_program *xp, const bpf_program *bp, int ifindex, XdpMode mode, bool frags)
{
	LibxdpAttach r;
	if (frags)
		(void)xdp_program__set_xdp_frags_support(xp, true);
	LogCapture log;
	{
		// a refused dispatcher is an answer: the callers compose or say why
		ExpectedLibraryMessages expected;
		r.err = xdp_program__attach(xp, ifindex, mode == XdpMode::skb ? XDP_MODE_SKB : XDP_MODE_NATIVE, 0);
	}
	// libxdp makes the program an extension (BPF_PROG_TYPE_EXT) of its
	// dispatcher before it loads it, and loads it as XDP when it goes alone
	r.via_dispatcher = bpf_program__type(bp) == BPF_PROG_TYPE_EXT;
	r.loaded = xdp_program__fd(xp) >= 0;
	if (!r.err) {
		if (!r.via_dispatcher)
			r.libxdp_single = libxdp_fallback_reason(log.text());
		return r;
	}
	r.refused_for_frags = r.loaded && refused_for_frags(mode, r.err);
	if (r.via_dispatcher && !r.loaded)
		r.dispatcher_refused = extension_refusal(log.text(), bpf_program__name(bp));
	else if (r.via_dispatcher && r.refused_for_frags && frags)
		r.dispatcher_refused = "libxdp's dispatcher is not frags-capable here";
	return r;
}

Result<bool> xdp_rearm(const Netdev &dev)
{
	// as attach, detach and recv swap programs: one at a time (where we
	// keep pins for the device; a hook of someone else's has no lock of ours)
	UniqueFd swap_lock;
	if (const std::string dir = pin_dir(dev); path_exists(dir)) {
		auto l = lock_hook_swaps(dir);
		if (!l)
			return l.error();
		swap_lock = std::move(*l);
	}
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	if (int err = bpf_xdp_query(dev.ifindex, 0, &q))
		return errno_error("query the XDP hook of " + dev.name, -err);
	if (!q.drv_prog_id)
		return false;
	UniqueFd prog(bpf_prog_get_fd_by_id(q.drv_prog_id));
	if (!prog.valid())
		return errno_error("open prog id " + std::to_string(q.drv_prog_id) + " on " + dev.name, errno);
	// another rearm's stand-in (it puts the program back itself): swapping
	// it would leave the stand-in on the hook for good
	bpf_prog_info pi{};
	uint32_t pl = sizeof(pi);
	if (!bpf_obj_get_info_by_fd(prog.get(), &pi, &pl) && std::string_view(pi.name) == "xo_rearm")
		return runtime_error("the XDP hook of " + dev.name + " holds a rearm's pass-everything stand-in (prog id " +
					     std::to_string(q.drv_prog_id) + "): another rearm is running, or one failed; "
					     "attach again",
				     EBUSY);
	// r0 = XDP_PASS; exit. Frags-aware where the kernel knows the flag: a
	// program taking frames of several buffers must not be swapped for one
	// the driver would refuse at this MTU.
	const bpf_insn pass[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS},
		{.code = BPF_JMP | BPF_EXIT},
	};
	UniqueFd stand_in;
	for (bool frags : {false, true}) {
		if (frags && !kernel_has_xdp_frags())
			break;
		LIBBPF_OPTS(bpf_prog_load_opts, lo, .prog_flags = frags ? BPF_F_XDP_HAS_FRAGS : 0u);
		UniqueFd fd(bpf_prog_load(BPF_PROG_TYPE_XDP, "xo_rearm", "GPL", pass, 2, &lo));
		if (!fd.valid())
			return errno_error("load the stand-in XDP program", errno);
		LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = prog.get());
		int err = bpf_xdp_attach(dev.ifindex, fd.get(), XDP_FLAGS_REPLACE | XDP_FLAGS_DRV_MODE, &o);
		if (!err) {
			stand_in = std::move(fd);
			break;
		}
		if (frags || !refused_for_frags(XdpMode::native, err))
			return errno_error("swap the XDP program of " + dev.name + " (prog id " +
						   std::to_string(q.drv_prog_id) + ") for a stand-in",
					   -err);
	}
	if (!stand_in.valid())
		return runtime_error("swap the XDP program of " + dev.name + ": the driver refused a stand-in", EINVAL);
	LIBBPF_OPTS(bpf_xdp_attach_opts, back, .old_prog_fd = stand_in.get());
	int err = bpf_xdp_attach(dev.ifindex, prog.get(), XDP_FLAGS_REPLACE | XDP_FLAGS_DRV_MODE, &back);
	if (err)	// the stand-in passes every frame: say so, loudly
		return errno_error("put prog id " + std::to_string(q.drv_prog_id) + " back on " + dev.name +
					   " (a pass-everything stand-in holds its XDP hook now; attach again)",
				   -err);
	return true;
}

int xdp_attach_single(int ifindex, int prog_fd, XdpMode mode)
{
	return bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_UPDATE_IF_NOEXIST | mode_flag(mode), nullptr);
}

int xdp_detach_single(int ifindex, int prog_fd, XdpMode mode)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = prog_fd);
	int err = bpf_xdp_detach(ifindex, XDP_FLAGS_REPLACE | mode_flag(mode), &o);
	// EEXIST: another program (or none) is there, ours is gone; ENODEV:
	// so is the interface
	if (err == -EEXIST || err == -ENODEV)
		return 0;
	return err;
}

std::string note_single_program(const std::string &reason, const std::string &prog)
{
	std::string line = reason + " (" + libxdp_version() + ", kernel " + kernel_release() + "): attached " + prog +
			   " as a single program";
	notice(line);
	return line;
}

std::string xdp_hook_holders(int ifindex)
{
	xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	if (libxdp_get_error(mp) || !mp)
		return {};
	Owned<xdp_multiprog, xdp_multiprog__close> owner(mp);
	auto one = [](xdp_program *p) {
		return std::string(xdp_program__name(p)) + " (prog id " + std::to_string(xdp_program__id(p)) + ")";
	};
	std::string s;
	if (xdp_multiprog__is_legacy(mp)) {
		if (xdp_program *p = xdp_multiprog__main_prog(mp))
			s = one(p) + " as a single program";
	} else {
		for (xdp_program *p = xdp_multiprog__next_prog(nullptr, mp); p; p = xdp_multiprog__next_prog(p, mp))
			s += (s.empty() ? "libxdp's dispatcher with " : ", ") + one(p);
		if (s.empty())
			s = "libxdp's dispatcher";
	}
	return s;
}

std::string libxdp_version()
{
	// libxdp has no version call; its file is libxdp.so.MAJOR.MINOR.0
	// (Debian's 1.3.1 ships libxdp.so.1.3.0), so MAJOR.MINOR is what it tells
	static const std::string v = [] {
		std::string found;
		dl_iterate_phdr(
			[](dl_phdr_info *info, size_t, void *data) {
				std::string_view name = info->dlpi_name ? info->dlpi_name : "";
				if (name.find("/libxdp.so") == std::string_view::npos)
					return 0;
				char real[4096];
				std::string path(name);
				if (::realpath(path.c_str(), real))
					path = real;
				*static_cast<std::string *>(data) = path;
				return 1;
			},
			&found);
		size_t so = found.rfind(".so.");
		if (so == std::string::npos)
			return std::string("libxdp");
		std::string ver = found.substr(so + 4);
		size_t dot = ver.find('.');
		if (dot != std::string::npos && (dot = ver.find('.', dot + 1)) != std::string::npos)
			ver.resize(dot);
		return "libxdp " + ver;
	}();
	return v;
}

std::string kernel_release()
{
	utsname u{};
	if (::uname(&u))
		return "?";
	return u.release;
}

XdpAttachVerdict xdp_attach_error(const XdpAttachFailure &f, const features::NicFacts &facts, unsigned mtu,
				  const std::string &holders)
{
	const int e = f.err;
	if (f.mode == XdpMode::native) {
		if (f.last_entry) {
			std::string hint = features::xdp_attach_hint(facts, e, mtu, f.frags, f.skb_flag);
			if (!hint.empty())
				return {runtime_error(f.what + ": " + hint, -e), true};
		}
		if (e == -EOPNOTSUPP && !(facts.modelled && facts.native_xdp.value))
			return {runtime_error(f.what + ": driver has no native XDP (try " + f.skb_flag + ")", EOPNOTSUPP)};
	}
	if (e == -EEXIST || e == -EBUSY)
		return {runtime_error(f.what + ": " + (holders.empty() ? "another XDP program" : holders) +
					      " holds the XDP hook " + f.busy,
				      -e)};
	if (f.refused_for_frags && f.frags)
		return {runtime_error(f.what + ": refused (" + std::strerror(-e) + "); frames may arrive in several " +
					      "buffers here (a large MTU; on veth the peer's counts too) (lower the MTU or use " +
					      f.skb_flag + ")",
				      -e)};
	if (e == -ERANGE)
		return {runtime_error(f.what + ": the MTU is too large for XDP on this device" +
					      (f.frags ? "" : " (kernel without XDP multi-buffer)"),
				      ERANGE)};
	Error out = errno_error(f.what, e);
	if (!f.loaded)
		out.msg += f.load_note;
	return {std::move(out)};
}

XdpAttachVerdict xdp_attach_error(const Netdev &dev, const XdpAttachFailure &f)
{
	const KernelRelease &k = running_kernel();
	features::NicFacts facts = features::nic_facts(DevKind::unknown, k.major, k.minor);
	unsigned mtu = 0;
	if (f.mode == XdpMode::native) {
		if (auto drv = features::live_driver(dev.name); drv && !drv->empty())
			if (auto kind = dev_kind_from_name(*drv))
				facts = features::nic_facts(*kind, k.major, k.minor);
		if (auto m = netdev_mtu(dev.name))
			mtu = *m;
	}
	std::string holders;
	if (f.err == -EEXIST || f.err == -EBUSY)
		holders = xdp_hook_holders(dev.ifindex);
	return xdp_attach_error(f, facts, mtu, holders);
}

} // namespace xoffload
