// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// /metrics over HTTP with cpp-httplib (Debian's libcpp-httplib-dev), one
// worker thread: a scrape reads BPF maps, which is quick, and a second
// scraper waits for the first.
#include <httplib.h>

#include <cerrno>
#include <cstring>

#include "internal.hpp"

namespace xoffload::agent {

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const ListenAddr &a, Render render)
{
	std::unique_ptr<MetricsServer> m(new MetricsServer);
	m->srv_ = std::make_unique<httplib::Server>();
	auto &srv = *m->srv_;
	srv.new_task_queue = [] { return new httplib::ThreadPool(1); };
	srv.Get("/metrics", [render](const httplib::Request &, httplib::Response &res) {
		std::string body;
		render(body);
		res.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
	});
	srv.Get("/", [](const httplib::Request &, httplib::Response &res) {
		res.set_content("xoffload agent: see /metrics\n", "text/plain; charset=utf-8");
	});
	errno = 0;
	if (!srv.bind_to_port(a.host, a.port)) {
		const int e = errno ? errno : EADDRINUSE;
		const std::string where = (a.host.find(':') != std::string::npos ? "[" + a.host + "]" : a.host) + ":" +
					  std::to_string(a.port);
		return errno_error("metrics: listen on " + where, e);
	}
	m->thread_ = std::thread([&srv] { srv.listen_after_bind(); });
	return m;
}

MetricsServer::~MetricsServer()
{
	if (srv_)
		srv_->stop();
	if (thread_.joinable())
		thread_.join();
}

} // namespace xoffload::agent
