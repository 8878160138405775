// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The agent's event loop: one thread polling a signalfd (SIGHUP, SIGTERM,
// SIGINT) and an rtnetlink socket (RTMGRP_LINK), with a state per ifindex
// and a debounce per interface name; /metrics runs in the HTTP server's
// thread on a snapshot taken under a mutex.
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <mutex>

#include "../core/nl.hpp"
#include "internal.hpp"
#include "xoffload/agent/agent.hpp"
#include "xoffload/config/config.hpp"
#include "xoffload/core/fd.hpp"
#include "xoffload/core/pins.hpp"
#include "xoffload/bpf/loader.hpp"
#include "xoffload/core/netdev.hpp"
#include "xoffload/features/features.hpp"

namespace xoffload::agent {

namespace {

void log_line(const std::string &s)
{
	std::fprintf(stderr, "agent: %s\n", s.c_str());
	std::fflush(stderr);
}

// "eth1: attach vlan at xdp (native)": the step's interface first
void log_step(const config::Step &s)
{
	if (s.ifname.empty() || s.text.rfind(s.ifname + ":", 0) == 0)
		log_line(s.text);
	else
		log_line(s.ifname + ": " + s.text);
}

double unix_now()
{
	timespec ts{};
	clock_gettime(CLOCK_REALTIME, &ts);
	return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// What the agent knows of a link: the state whose change asks for a re-plan.
struct Link {
	std::string name;
	std::string perm_mac;	// IFLA_PERM_ADDRESS; "" when the device has none
	std::string mac;	// IFLA_ADDRESS (a change of it is an event too)
	uint32_t mtu = 0;
	uint8_t operstate = 0;
	bool up = false;
	bool operator==(const Link &) const = default;
};

std::string mac_str(const nlattr *a)
{
	const auto *b = static_cast<const uint8_t *>(mnl_attr_get_payload(a));
	const uint16_t n = mnl_attr_get_payload_len(a);
	bool nonzero = false;
	std::string s;
	char h[4];
	for (uint16_t i = 0; i < n; i++) {
		nonzero = nonzero || b[i];
		std::snprintf(h, sizeof(h), i ? ":%02x" : "%02x", b[i]);
		s += h;
	}
	return nonzero ? s : std::string();
}

// An RTM_NEWLINK of the AF_UNSPEC family (a bridge's AF_BRIDGE copies are
// not the link itself): its ifindex and state.
std::optional<std::pair<int, Link>> parse_link(const nlmsghdr *nh)
{
	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(ifinfomsg)))
		return std::nullopt;
	const auto *ifi = static_cast<const ifinfomsg *>(mnl_nlmsg_get_payload(nh));
	if (ifi->ifi_family != AF_UNSPEC)
		return std::nullopt;
	Link l;
	l.up = ifi->ifi_flags & IFF_UP;
	nl::for_each_attr(nh, sizeof(ifinfomsg), [&](const nlattr *a) {
		switch (mnl_attr_get_type(a)) {
		case IFLA_IFNAME:
			if (mnl_attr_validate(a, MNL_TYPE_STRING) >= 0)
				l.name = mnl_attr_get_str(a);
			break;
		case IFLA_MTU:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				l.mtu = mnl_attr_get_u32(a);
			break;
		case IFLA_OPERSTATE:
			if (mnl_attr_validate(a, MNL_TYPE_U8) >= 0)
				l.operstate = mnl_attr_get_u8(a);
			break;
		case IFLA_ADDRESS:
			l.mac = mac_str(a);
			break;
		case IFLA_PERM_ADDRESS:
			l.perm_mac = mac_str(a);
			break;
		}
	});
	if (l.name.empty())
		return std::nullopt;
	return std::make_pair(ifi->ifi_index, l);
}

class Agent {
public:
	explicit Agent(const Options &o) : opt_(o) {}
	Status start();
	Status loop();

private:
	Status dump_links();
	void on_link_message(const nlmsghdr *nh);
	void drain_netlink();
	void apply_all(const char *why);
	void reconcile(const std::string &ifname);
	void reload();
	void update_managed();
	Status serve_metrics();
	void record(bool ok);
	void rearm_if_forgotten(const std::string &ifname);
	// config::match() takes the permanent MAC alone: a link without one
	// (veth, dummy) is matched by name, at events as at a whole-file plan
	std::string match_key(const Link &l) const { return l.perm_mac; }

	Options opt_;
	config::ConfigPtr cfg_;
	std::map<int, Link> links_;
	Debouncer debounce_;
	// links that came up or changed MTU since their last re-plan: a driver
	// that forgets its XDP program on a close gets it back at that re-plan
	std::set<std::string> reopened_;
	std::unique_ptr<nl::Socket> events_;
	UniqueFd sigfd_;
	std::string metrics_spec_;	// what the server listens on, "" none
	std::unique_ptr<MetricsServer> server_;
	std::mutex mu_;	// health_ (read by the HTTP thread)
	Health health_;
};

void Agent::record(bool ok)
{
	std::lock_guard<std::mutex> g(mu_);
	health_.last_apply_ok = ok;
	health_.last_apply_time = unix_now();
	if (!ok)
		health_.errors++;
}

Status Agent::dump_links()
{
	auto sock = nl::Socket::open(NETLINK_ROUTE);
	if (!sock)
		return sock.error();
	nl::Message msg;
	nlmsghdr *nlh = msg.header();
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_DUMP;
	auto *ifi = msg.put_extra<ifinfomsg>();
	ifi->ifi_family = AF_UNSPEC;
	std::map<int, Link> now;
	auto s = sock->request(msg, "list links", [&](const nlmsghdr *h) {
		if (h->nlmsg_type == RTM_NEWLINK)
			if (auto l = parse_link(h))
				now[l->first] = l->second;
		return MNL_CB_OK;
	});
	if (!s)
		return s;
	const auto t = Clock::now();
	// what changed while events were lost counts as an event
	for (const auto &[idx, l] : links_)
		if (!now.count(idx) || now[idx].name != l.name)
			debounce_.forget(l.name);
	for (const auto &[idx, l] : now) {
		auto it = links_.find(idx);
		if (it == links_.end() || !(it->second == l))
			debounce_.touch(l.name, t);
	}
	links_ = std::move(now);
	return ok();
}

void Agent::on_link_message(const nlmsghdr *nh)
{
	{
		std::lock_guard<std::mutex> g(mu_);
		health_.link_events++;
	}
	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(ifinfomsg)))
		return;
	const auto *ifi = static_cast<const ifinfomsg *>(mnl_nlmsg_get_payload(nh));
	if (ifi->ifi_family != AF_UNSPEC)
		return;
	if (nh->nlmsg_type == RTM_DELLINK) {
		auto it = links_.find(ifi->ifi_index);
		if (it != links_.end()) {
			log_line(it->second.name + ": deleted");
			debounce_.forget(it->second.name);
			reopened_.erase(it->second.name);
			links_.erase(it);
			update_managed();
		}
		return;
	}
	if (nh->nlmsg_type != RTM_NEWLINK)
		return;
	auto l = parse_link(nh);
	if (!l)
		return;
	auto it = links_.find(l->first);
	if (it != links_.end() && it->second == l->second)
		return;	// a change we do not care about (stats, carrier timestamps)
	if (it == links_.end()) {
		log_line(l->second.name + ": appeared (ifindex " + std::to_string(l->first) + ")");
	} else if (it->second.name != l->second.name) {
		log_line(it->second.name + ": renamed to " + l->second.name);
		debounce_.forget(it->second.name);
	} else if (it->second.mtu != l->second.mtu) {
		log_line(l->second.name + ": mtu " + std::to_string(it->second.mtu) + " -> " +
			 std::to_string(l->second.mtu));
	} else if (it->second.up != l->second.up) {
		log_line(l->second.name + (l->second.up ? ": up" : ": down"));
	}
	if (it != links_.end() && ((!it->second.up && l->second.up) || it->second.mtu != l->second.mtu))
		reopened_.insert(l->second.name);
	links_[l->first] = l->second;
	debounce_.touch(l->second.name, Clock::now());
	update_managed();
}

void Agent::drain_netlink()
{
	for (;;) {
		auto r = events_->receive([&](const nlmsghdr *nh) {
			on_link_message(nh);
			return MNL_CB_OK;
		});
		if (r)
			continue;
		if (r.error().err == ENOBUFS) {
			// the kernel dropped events: what runs is what a dump says
			{
				std::lock_guard<std::mutex> g(mu_);
				health_.resyncs++;
			}
			log_line("netlink overrun: events lost, listing every link again");
			if (auto s = dump_links(); !s)
				log_line("list links: " + s.error().msg);
			continue;
		}
		if (r.error().err != EAGAIN && r.error().err != EWOULDBLOCK)
			log_line(r.error().msg);
		return;
	}
}

void Agent::update_managed()
{
	std::vector<std::string> m;
	for (const auto &[idx, l] : links_)
		if (config::match(*cfg_, l.name, match_key(l)))
			m.push_back(l.name);
	std::lock_guard<std::mutex> g(mu_);
	health_.managed = std::move(m);
	health_.config_file = config::source(*cfg_);
}

void Agent::apply_all(const char *why)
{
	update_managed();
	auto p = config::plan(*cfg_, std::nullopt, opt_.keep_undeclared);
	if (!p) {
		log_line(std::string(why) + ": plan: " + p.error().msg);
		record(false);
		return;
	}
	for (const auto &s : p->skipped)
		log_line("skipped: " + s);
	for (const auto &s : p->steps)
		log_step(s);
	auto st = config::apply(*p, *cfg_);
	{
		std::lock_guard<std::mutex> g(mu_);
		health_.applies++;
		health_.steps += p->steps.size();
	}
	if (!st)
		log_line(std::string(why) + ": apply: " + st.error().msg);
	else
		log_line(std::string(why) + ": " + (p->empty() ? "nothing to change" : std::to_string(p->steps.size()) + " step(s) applied"));
	record(st.ok());
}

void Agent::reconcile(const std::string &ifname)
{
	const Link *link = nullptr;
	for (const auto &[idx, l] : links_)
		if (l.name == ifname)
			link = &l;
	if (!link)
		return;	// gone again before its turn
	update_managed();
	if (!config::match(*cfg_, ifname, match_key(*link)))
		return;
	// a renamed link's pins move to its new name here, in this thread,
	// before the plan reads them and before a scrape looks for them
	if (auto d = netdev_with_pins(ifname); !d)
		log_line(ifname + ": pins: " + d.error().msg);
	auto p = config::plan(*cfg_, ifname);
	{
		std::lock_guard<std::mutex> g(mu_);
		health_.reconciles++;
	}
	if (!p) {
		log_line(ifname + ": plan: " + p.error().msg);
		record(false);
		return;
	}
	if (p->empty()) {
		rearm_if_forgotten(ifname);
		record(true);
		return;
	}
	for (const auto &s : p->steps)
		log_step(s);
	auto st = config::apply(*p, *cfg_);
	{
		std::lock_guard<std::mutex> g(mu_);
		health_.steps += p->steps.size();
	}
	if (!st)
		log_line(ifname + ": apply: " + st.error().msg);
	else
		rearm_if_forgotten(ifname);
	record(st.ok());
}

// vmxnet3 (6.6+) drops its XDP program from the datapath at every close
// (down, MTU change) while the hook still lists it, so a plan finds
// nothing to do while frames pass unprocessed: the program is handed to
// the driver again (xdp_rearm()) once the link is back.
void Agent::rearm_if_forgotten(const std::string &ifname)
{
	if (!reopened_.erase(ifname))
		return;
	auto drv = features::live_driver(ifname);
	if (!drv)
		return;
	const features::NicFacts f = features::nic_facts_running(*drv);
	if (!f.xdp_lost_on_close.value)
		return;
	auto dev = netdev_lookup(ifname);
	if (!dev)
		return;
	auto r = xdp_rearm(*dev);
	if (!r)
		log_line(ifname + ": " + r.error().msg);
	else if (*r)
		log_line(ifname + ": XDP program handed to " + *drv + " again (it forgets it at a close: " +
			 f.xdp_lost_on_close.source.substr(0, f.xdp_lost_on_close.source.find(':')) + ")");
}

Status Agent::serve_metrics()
{
	std::string spec = opt_.metrics ? *opt_.metrics : config::metrics_listen(*cfg_);
	if (spec == metrics_spec_ && (server_ || spec.empty()))
		return ok();
	ListenAddr a;
	if (!spec.empty()) {
		auto pa = parse_listen(spec);
		if (!pa)
			return pa.error();
		if (auto s = check_listen(*pa, opt_.metrics_public || config::metrics_public(*cfg_)); !s)
			return s;
		a = *pa;
	}
	server_.reset();	// the old address is let go first: a reload may keep the port
	metrics_spec_.clear();
	if (spec.empty()) {
		log_line("metrics: not served (no address)");
		return ok();
	}
	auto render = [this](std::string &body) {
		Health h;
		{
			std::lock_guard<std::mutex> g(mu_);
			h = health_;
		}
		uint64_t errors = 0;
		if (opt_.counters)
			body = opt_.counters(h.managed, &errors);
		if (errors) {
			std::lock_guard<std::mutex> g(mu_);
			health_.scrape_errors += errors;
			h.scrape_errors = health_.scrape_errors;
		}
		body += render_health(h);
	};
	auto srv = MetricsServer::start(a, render);
	if (!srv)
		return srv.error();
	server_ = std::move(*srv);
	metrics_spec_ = spec;
	log_line("metrics: http://" + (a.host.find(':') != std::string::npos ? "[" + a.host + "]" : a.host) + ":" +
		 std::to_string(a.port) + "/metrics");
	return ok();
}

void Agent::reload()
{
	notify_reloading();
	auto c = config::load(opt_.file);
	if (!c) {
		log_line("reload refused, the old config keeps running: " + c.error().msg);
		{
			std::lock_guard<std::mutex> g(mu_);
			health_.reloads_refused++;
		}
		notify("READY=1\nSTATUS=reload refused: " + c.error().msg);
		return;
	}
	cfg_ = std::move(*c);
	{
		std::lock_guard<std::mutex> g(mu_);
		health_.reloads++;
	}
	log_line("reloaded " + opt_.file);
	if (auto s = serve_metrics(); !s)
		log_line("metrics: " + s.error().msg + " (no /metrics until the next reload)");
	apply_all("reload");
	notify(std::string("READY=1\nSTATUS=") + (health_.last_apply_ok ? "applied " : "apply failed: ") + opt_.file);
}

Status Agent::start()
{
	health_.start_time = unix_now();
	auto c = config::load(opt_.file);
	if (!c)
		return c.error();
	cfg_ = std::move(*c);

	// the signals are read from a signalfd, so no thread may take them:
	// block them before the HTTP server's threads exist
	sigset_t set;
	sigemptyset(&set);
	for (int sig : {SIGHUP, SIGTERM, SIGINT})
		sigaddset(&set, sig);
	if (int e = pthread_sigmask(SIG_BLOCK, &set, nullptr))
		return errno_error("block signals", e);
	// a scraper that hangs up mid-reply must not end the agent, whatever
	// the HTTP library does about SIGPIPE
	::signal(SIGPIPE, SIG_IGN);
	int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return errno_error("signalfd", errno);
	sigfd_ = UniqueFd(fd);

	auto sock = nl::Socket::open(NETLINK_ROUTE, RTMGRP_LINK, SOCK_NONBLOCK);
	if (!sock)
		return Error{sock.error().kind, sock.error().err, "subscribe to link events: " + sock.error().msg};
	events_ = std::make_unique<nl::Socket>(std::move(*sock));
	// a burst of link events (a namespace of veths deleted) fits: 4 MiB
	int rcv = 4 << 20;
	setsockopt(events_->fd(), SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)) &&
		setsockopt(events_->fd(), SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	// subscribed first, listed second: no link slips between the two
	if (auto s = dump_links(); !s)
		return s;
	for (const auto &[idx, l] : links_)
		debounce_.forget(l.name);	// the whole-file apply covers them

	if (auto s = serve_metrics(); !s)
		return s;
	apply_all("start");
	notify(std::string("READY=1\nSTATUS=") + (health_.last_apply_ok ? "applied " : "apply failed: ") + opt_.file);
	return ok();
}

Status Agent::loop()
{
	for (;;) {
		int timeout = -1;
		if (auto t = debounce_.next()) {
			auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*t - Clock::now()).count();
			timeout = ms < 0 ? 0 : static_cast<int>(ms) + 1;
		}
		pollfd fds[2] = {{sigfd_.get(), POLLIN, 0}, {events_->fd(), POLLIN, 0}};
		int n = ::poll(fds, 2, timeout);
		if (n < 0 && errno != EINTR)
			return errno_error("poll", errno);
		if (n > 0 && (fds[0].revents & POLLIN)) {
			signalfd_siginfo si{};
			while (::read(sigfd_.get(), &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si))) {
				if (si.ssi_signo == SIGHUP) {
					log_line("SIGHUP: reloading " + opt_.file);
					reload();
				} else {
					log_line(std::string(si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT") +
						 ": leaving, the datapath stays as it is");
					notify("STOPPING=1\nSTATUS=stopping (the datapath stays)");
					server_.reset();
					return ok();
				}
			}
		}
		if (n > 0 && (fds[1].revents & POLLIN))
			drain_netlink();
		for (const auto &name : debounce_.take_due(Clock::now()))
			reconcile(name);
	}
}

} // namespace

Status run(const Options &o)
{
	Agent a(o);
	if (auto s = a.start(); !s)
		return s;
	return a.loop();
}

} // namespace xoffload::agent
