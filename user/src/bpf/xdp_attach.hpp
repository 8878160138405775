// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// XDP attach through libxdp, told apart when its dispatcher refuses one of
// our programs, and the single-program attach that stands in for it; shared
// by the loader and the xdp_xsk owner. Library-internal.
#pragma once

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "xoffload/features/features.hpp"
#include "xoffload/bpf/loader.hpp"
#include "xoffload/core/netdev.hpp"

namespace xoffload {

// What became of one xdp_program__attach().
struct LibxdpAttach {
	int err = 0;			// 0 or a negative errno
	bool via_dispatcher = false;	// libxdp loaded the program as its dispatcher's extension
	bool loaded = false;		// the program loaded (passed the verifier)
	// Failed: the program loaded and the kernel refused it at attach as
	// refused_for_frags() tells.
	bool refused_for_frags = false;
	// Failed: libxdp's dispatcher cannot run the program here although the
	// kernel may run it alone (its freplace was refused, or the dispatcher
	// was refused for multi-buffer frames); why, in words. Empty otherwise.
	std::string dispatcher_refused;
	// Attached, but libxdp fell back to a single program itself; why, in
	// words. Empty when attached through the dispatcher.
	std::string libxdp_single;
};

// Native mode: the kernel refuses a program without BPF_F_XDP_HAS_FRAGS, or
// a dispatcher loaded without it, where frames may span several buffers, at
// attach time: veth with ERANGE (its peer's MTU counts), other drivers with
// EINVAL. (skb mode linearises frames for such a program instead.)
inline bool refused_for_frags(XdpMode mode, int err)
{
	return mode == XdpMode::native && (err == -ERANGE || err == -EINVAL);
}

// Attaches @xp (made by xdp_program__create from @bp's object, not loaded)
// through libxdp in @mode and tells its failures apart. @frags: @bp is a
// multi-buffer entry and the kernel takes BPF_F_XDP_HAS_FRAGS, which libxdp
// is told so its dispatcher is loaded frags-capable (libxdp does not see
// the flag libbpf derives from SEC("xdp.frags")).
LibxdpAttach libxdp_attach(xdp_program *xp, const bpf_program *bp, int ifindex, XdpMode mode, bool frags);

// Attaches the loaded program @prog_fd alone at the XDP hook of @ifindex, as
// libxdp does without its dispatcher. 0, or a negative errno (-EBUSY or
// -EEXIST when any program holds the hook).
int xdp_attach_single(int ifindex, int prog_fd, XdpMode mode);
// Detaches @prog_fd from @ifindex if it is still the program there. 0 (also
// when it is gone already), or a negative errno.
int xdp_detach_single(int ifindex, int prog_fd, XdpMode mode);

// Prints "xoffload: REASON (libxdp X, kernel Y): attached PROG as a single
// program" on stderr; returns the same line without the "xoffload: ".
std::string note_single_program(const std::string &reason, const std::string &prog);

// Who holds the XDP hook of @ifindex, for an error: "xdp_vlan (prog id 12)
// as a single program" or "libxdp's dispatcher with xdp_xsk (prog id 40)";
// empty when nothing does.
std::string xdp_hook_holders(int ifindex);

// An XDP attach that failed, as the loader (offload-tool attach) and the
// xdp_xsk owner (recv) tell it.
struct XdpAttachFailure {
	std::string what;		// "attach xdp_vlan to eth0 (native)"
	int err = 0;			// the attach's negative errno
	XdpMode mode = XdpMode::native;
	bool frags = false;		// the program is frags-aware
	// No other entry (single- or multi-buffer) is left to try, so the
	// driver's facts explain the refusal if they explain it at all.
	bool last_entry = true;
	bool refused_for_frags = false;	// LibxdpAttach::refused_for_frags
	bool loaded = true;		// the program passed the verifier before the attach
	std::string load_note;		// appended when it did not: where its log is
	const char *skb_flag = "--mode skb";	// the option that selects generic XDP
	const char *busy = "";		// after "<holders> holds the XDP hook "
};
struct XdpAttachVerdict {
	Error error;
	bool final = false;	// from the driver's facts: no other way to attach helps
};
// The one translation of an XDP attach failure into its line: the driver's
// facts @facts at @mtu first (native mode), then a hook held by @holders
// (EEXIST, EBUSY), a refusal of frags-less programs, an MTU over the
// limit (ERANGE), and strerror otherwise. Pure: tests feed it facts.
XdpAttachVerdict xdp_attach_error(const XdpAttachFailure &f, const features::NicFacts &facts, unsigned mtu,
				  const std::string &holders);
// The same with the facts of @dev's driver under the running kernel, its
// MTU and the holders of its XDP hook, read live as far as @f needs them.
XdpAttachVerdict xdp_attach_error(const Netdev &dev, const XdpAttachFailure &f);

// "libxdp 1.3" (the loaded library's file name; "libxdp" when unknown),
// and uname's release.
std::string libxdp_version();
std::string kernel_release();

} // namespace xoffload
