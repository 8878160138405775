// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// systemd notifications (Type=notify): READY, RELOADING, STOPPING, STATUS.
#include <systemd/sd-daemon.h>
#include <time.h>

#include "internal.hpp"

namespace xoffload::agent {

void notify(const std::string &state)
{
	sd_notify(0, state.c_str());
}

void notify_reloading()
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	const unsigned long long usec =
		static_cast<unsigned long long>(ts.tv_sec) * 1000000ULL + static_cast<unsigned long long>(ts.tv_nsec) / 1000;
	notify("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec) + "\nSTATUS=reloading");
}

} // namespace xoffload::agent
