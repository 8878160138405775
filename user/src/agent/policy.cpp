// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The agent's pure parts: the per-interface debounce, the /metrics address
// and its policy, the health metrics. No system call here (unit tested).
#include <arpa/inet.h>

#include <cerrno>
#include <cstdlib>

#include "xoffload/agent/agent.hpp"
#include "xoffload/core/prometheus.hpp"

namespace xoffload::agent {

void Debouncer::touch(const std::string &key, Clock::time_point now)
{
	auto it = due_.find(key);
	if (it == due_.end()) {
		due_[key] = Entry{now, now + quiet_};
		return;
	}
	it->second.due = std::min(now + quiet_, it->second.first + max_wait_);
}

void Debouncer::forget(const std::string &key)
{
	due_.erase(key);
}

std::vector<std::string> Debouncer::take_due(Clock::time_point now)
{
	std::vector<std::string> out;
	for (auto it = due_.begin(); it != due_.end();) {
		if (it->second.due <= now) {
			out.push_back(it->first);
			it = due_.erase(it);
		} else {
			++it;
		}
	}
	return out;
}

std::optional<Clock::time_point> Debouncer::next() const
{
	std::optional<Clock::time_point> t;
	for (const auto &[k, e] : due_)
		if (!t || e.due < *t)
			t = e.due;
	return t;
}

Result<ListenAddr> parse_listen(const std::string &spec)
{
	auto bad = [&](const std::string &why) {
		return usage_error("metrics address '" + spec + "': " + why + " (ADDR:PORT or [ADDR6]:PORT, numeric)");
	};
	ListenAddr a;
	std::string port;
	if (!spec.empty() && spec[0] == '[') {
		const size_t close = spec.find(']');
		if (close == std::string::npos || close + 1 >= spec.size() || spec[close + 1] != ':')
			return bad("no ']:' after the IPv6 address");
		a.host = spec.substr(1, close - 1);
		port = spec.substr(close + 2);
		in6_addr a6{};
		if (inet_pton(AF_INET6, a.host.c_str(), &a6) != 1)
			return bad("'" + a.host + "' is not an IPv6 address");
		a.loopback = IN6_IS_ADDR_LOOPBACK(&a6);
	} else {
		const size_t colon = spec.rfind(':');
		if (colon == std::string::npos)
			return bad("no port");
		a.host = spec.substr(0, colon);
		port = spec.substr(colon + 1);
		in_addr a4{};
		if (a.host.find(':') != std::string::npos)
			return bad("an IPv6 address goes in brackets");
		if (inet_pton(AF_INET, a.host.c_str(), &a4) != 1)
			return bad("'" + a.host + "' is not an IPv4 address");
		a.loopback = (ntohl(a4.s_addr) >> 24) == 127;
	}
	bool digits = !port.empty() && port.size() <= 5;
	for (char c : port)
		digits = digits && c >= '0' && c <= '9';
	const unsigned long p = digits ? std::strtoul(port.c_str(), nullptr, 10) : 0;
	if (!digits || p < 1 || p > 65535)
		return bad("port '" + port + "' is not in 1..65535");
	a.port = static_cast<uint16_t>(p);
	return a;
}

Status check_listen(const ListenAddr &a, bool allow_public)
{
	if (a.loopback || allow_public)
		return ok();
	return usage_error("metrics address " + a.host + ":" + std::to_string(a.port) +
			   " is not loopback: /metrics has no authentication; give --metrics-public to serve it there");
}

// Times in whole seconds: the renderer's %.9g would print a unix time as
// 1.7e+09.
std::string render_health(const Health &h)
{
	Prom p({});
	p.family("xoffload_agent_up", "gauge", "1 while the agent runs (config_file: the file it follows)")
		.sample({{"config_file", h.config_file}}, uint64_t{1});
	p.family("xoffload_agent_start_time_seconds", "gauge", "When the agent started, unix time")
		.sample({}, static_cast<uint64_t>(h.start_time));
	p.family("xoffload_agent_last_apply_success", "gauge",
		 "1 when the last apply (the whole file or one link) succeeded, 0 when it failed")
		.sample({}, uint64_t{h.last_apply_ok ? 1u : 0u});
	p.family("xoffload_agent_last_apply_time_seconds", "gauge", "When the last apply ended, unix time (0: none yet)")
		.sample({}, static_cast<uint64_t>(h.last_apply_time));
	p.family("xoffload_agent_applies_total", "counter", "Applies of the whole file (start and each reload)")
		.sample({}, h.applies);
	p.family("xoffload_agent_reconciles_total", "counter", "Re-plans of one link after its events")
		.sample({}, h.reconciles);
	p.family("xoffload_agent_steps_total", "counter", "Plan steps the agent took").sample({}, h.steps);
	p.family("xoffload_agent_errors_total", "counter", "Plans or applies that failed").sample({}, h.errors);
	p.family("xoffload_agent_reloads_total", "counter", "SIGHUP reloads, by result (refused: the file did not load)")
		.sample({{"result", "ok"}}, h.reloads)
		.sample({{"result", "refused"}}, h.reloads_refused);
	p.family("xoffload_agent_link_events_total", "counter", "rtnetlink link messages read").sample({}, h.link_events);
	p.family("xoffload_agent_netlink_resyncs_total", "counter",
		 "Netlink overruns (events lost) recovered by a dump of every link")
		.sample({}, h.resyncs);
	p.family("xoffload_agent_scrape_errors_total", "counter", "Counters of managed links a scrape could not read")
		.sample({}, h.scrape_errors);
	p.family("xoffload_agent_managed_interface", "gauge", "1 per link present that the file matches");
	for (const auto &n : h.managed)
		p.sample({{"ifname", n}}, uint64_t{1});
	return p.str();
}

} // namespace xoffload::agent
