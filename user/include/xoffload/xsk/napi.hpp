// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// A device's NAPI interrupt deferral, the two sysfs knobs busy polling wants
// (Documentation/networking/af_xdp.rst, DPDK's and OVS's AF_XDP guides):
// /sys/class/net/DEV/napi_defer_hard_irqs and gro_flush_timeout. NapiTuning
// sets them for a run and puts the values it found back when it goes (also
// after Ctrl-C: the CLI's signal handler ends the run normally; not after
// SIGKILL).
//
// sysfs shows the network namespace that mounted it: for a device of
// another namespace (offload-tool -n NS) the files are read and written by a
// child process that mounts its own sysfs in a private mount namespace, as
// `ip netns exec` does. Errors: Result (one line naming the file); needs
// CAP_NET_ADMIN to write, CAP_SYS_ADMIN for another namespace's sysfs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "xoffload/core/netdev.hpp"
#include "xoffload/core/result.hpp"

namespace xoffload::xsk {

struct NapiDefer {
	uint64_t defer_hard_irqs = 0;		// napi_defer_hard_irqs
	uint64_t gro_flush_timeout_ns = 0;	// gro_flush_timeout
};

// The device's current values.
Result<NapiDefer> napi_defer_read(const Netdev &dev);

class NapiTuning {
public:
	// Writes the values given (nullopt: left as they are) and remembers
	// the ones found; nothing given: nothing written, restore() a no-op.
	static Result<NapiTuning> apply(const Netdev &dev, std::optional<uint64_t> defer_hard_irqs,
					std::optional<uint64_t> gro_flush_timeout_ns);
	NapiTuning(NapiTuning &&o) noexcept;
	NapiTuning &operator=(NapiTuning &&) = delete;
	NapiTuning(const NapiTuning &) = delete;
	~NapiTuning();

	const NapiDefer &before() const { return before_; }
	const NapiDefer &during() const { return during_; }
	bool changed() const { return armed_; }
	// Puts the values found back (once; the destructor calls it too).
	Status restore();

private:
	NapiTuning() = default;
	Netdev dev_;
	NapiDefer before_, during_;
	bool armed_ = false;
};

} // namespace xoffload::xsk
