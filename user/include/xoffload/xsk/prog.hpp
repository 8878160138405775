// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The xdp_xsk program owned by one AF_XDP receiver: attached through libxdp
// for the receiver's lifetime, its XSKMAP filled with the receiver's sockets,
// detached (and nothing pinned) when the owner goes away.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xoffload/core/abi_check.hpp"
#include "xoffload/bpf/loader.hpp"
#include "xoffload/core/netdev.hpp"
#include "xoffload/core/result.hpp"
#include "xoffload/vlan/rx_vlan.hpp"

namespace xoffload::xsk {

struct RxFilter {
	std::optional<uint16_t> ethertype;	// innermost ethertype
	std::optional<uint16_t> vid;		// outer VID, 0 = untagged only
	std::optional<uint16_t> udp_dport;
	// With vid: leave the device's RX VLAN stripping on (--keep-rx-vlan);
	// by default it is off while the program is attached (rx_vlan.hpp)
	bool keep_rx_vlan = false;
	// The device's VLAN offloads, when the caller read them already (after
	// any stale receiver's settings were restored); attach reads them itself
	// otherwise
	std::optional<RxVlanFacts> vlan_facts;
};

// Counters of xdp_xsk summed over CPUs, by enum xo_xsk_counter.
struct XskProgCounters {
	std::array<xo_counter, XO_XSK_CNT_MAX> v{};
};
const char *xsk_counter_name(unsigned reason) noexcept;

class XskProgram {
public:
	// Loads xdp_xsk with the filter and attaches it to dev in the given
	// mode (with a VID filter: RX VLAN stripping off while attached, and
	// xdp_xsk_tag, device-bound and alone, where the driver hands XDP the
	// stripped tag), frags-aware (multi-buffer frames) where the kernel supports it:
	// through libxdp's dispatcher, or as a single program where the
	// dispatcher cannot run it (one notice says why). Fails clearly
	// when another XDP program holds the interface in a way libxdp cannot
	// share (a single program), or when the MTU is too large for XDP there.
	static Result<XskProgram> attach(const Netdev &dev, XdpMode mode, const RxFilter &filter);

	XskProgram(XskProgram &&) noexcept;
	XskProgram &operator=(XskProgram &&) noexcept;
	~XskProgram();	// detaches

	// Puts the socket in the XSKMAP slot of its queue.
	Status add_socket(uint32_t queue, int xsk_fd);
	Result<XskProgCounters> counters() const;
	uint32_t prog_id() const noexcept;
	bool multiprog() const noexcept;
	// Why it runs as a single program (the line printed at attach, without
	// "xoffload: "); empty behind libxdp's dispatcher.
	const std::string &single_reason() const noexcept;
	// Loaded with BPF_F_XDP_HAS_FRAGS: sees multi-buffer frames whole.
	bool frags() const noexcept;
	// Detaches now; idempotent.
	Status detach();


	// The program's name as the kernel reports it ("xdp_xsk").
	static const std::string &name();
	// Whether a program of this name is one of ours: xdp_xsk, or
	// xdp_xsk_tag (device-bound, reads the tag a driver stripped; loaded
	// for --filter-vlan where the driver offers the rx-vlan-tag kfunc).
	static bool is_xsk_name(const std::string &name);

private:
	struct Impl;
	explicit XskProgram(std::unique_ptr<Impl> p);
	std::unique_ptr<Impl> p_;

	// Joins the composed program at @dev's hook (or one of our programs
	// alone there) as its recv stage; nullopt where the hook holds none.
	static Result<std::optional<std::unique_ptr<Impl>>> join_composed(const Netdev &dev, XdpMode mode,
									  std::optional<RxVlanFacts> &rxv);
	// The filter and the RX VLAN record of an attached @out.
	static Result<XskProgram> configure(XskProgram out, const Netdev &dev, const std::optional<RxVlanFacts> &rxv,
					    const RxFilter &filter);
	// Takes our stage out of the composed program at the hook, if it runs
	// it; true when that (or nothing) was left to do.
	Result<bool> leave_composed();
	Status release_rx_vlan();

};

// The process holding an fd of program @prog_id (the recv that owns an
// xdp_xsk), other than this one; 0 when none does.
int bpf_prog_holder(uint32_t prog_id);

// An xdp_xsk at @dev's XDP hook whose recv is gone (killed by SIGKILL, the
// OOM killer, ...: no process holds the program) is detached, with one line
// naming it (a notice). Returns the ids of the programs removed.
Result<std::vector<uint32_t>> reap_stale_xsk(const Netdev &dev);

} // namespace xoffload::xsk
