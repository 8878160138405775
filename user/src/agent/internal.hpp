// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The agent's own parts: the /metrics server (cpp-httplib) and the systemd
// notifications (libsystemd's sd_notify).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "xoffload/agent/agent.hpp"

namespace httplib {
class Server;
}

namespace xoffload::agent {

// GET /metrics on one address, in a thread of its own; the body is what
// @render writes. Stops (and lets the port go) when destroyed.
class MetricsServer {
public:
	using Render = std::function<void(std::string &body)>;
	static Result<std::unique_ptr<MetricsServer>> start(const ListenAddr &a, Render render);
	~MetricsServer();

private:
	MetricsServer() = default;
	std::unique_ptr<httplib::Server> srv_;
	std::thread thread_;
};

// sd_notify(3) of @state; nothing when not run by systemd (no
// $NOTIFY_SOCKET).
void notify(const std::string &state);
// RELOADING=1 with MONOTONIC_USEC (systemd 253's Type=notify-reload wants
// it; older ones ignore it).
void notify_reloading();

} // namespace xoffload::agent
