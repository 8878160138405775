// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The offload-tool command line as a CLI11 app (global options and every
// subcommand) and what its commands share, apart from main() so it can be
// parsed without running anything (tests/fuzz/cli_fuzz.cpp).
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>
#include <initializer_list>
#include <memory>
#include <utility>

#include "commands.hpp"
#include "manpage.hpp"
#include "xoffload/core/version.hpp"
#include "xoffload/bpf/loader.hpp"
#include "xoffload/core/netdev.hpp"

namespace {
// set by the handler, read by send's and recv's worker threads: a lock-free
// atomic is safe in both places
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);
void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }
} // namespace

namespace xoffload::cli {

void install_stop_handler()
{
	struct sigaction sa {};
	sa.sa_handler = on_signal;
	// a dropped ssh session (SIGHUP), a closed pipe on stdout (SIGPIPE) and
	// SIGQUIT end the command as SIGINT does: cleanly, programs detached
	for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT})
		sigaction(sig, &sa, nullptr);
}

bool stop_requested()
{
	return g_stop.load(std::memory_order_relaxed);
}

Status prepare(const Globals &g)
{
	set_library_verbosity(g.verbose);
	if (!g.netns.empty())
		return netns_enter(g.netns);
	return ok();
}

namespace {

// Each command's examples: its --help footer and the EXAMPLES of its man
// page (offload-tool-docgen parses every line with this app: one that
// stops parsing fails the build). Set after the subcommands exist, so
// theirs stay their own.
void add_examples(CLI::App &app)
{
	const std::vector<std::pair<const char *, std::vector<const char *>>> examples = {
		{"attach",
		 {"offload-tool attach eth1 vlan                       # XDP, native mode",
		  "offload-tool attach eth1 vlan --hook tc-egress      # TC clsact egress",
		  "offload-tool attach eth1 geneve",
		  "offload-tool attach eth1 chain --prog my_fw.bpf.o:xdp_fw   # your program after our stages",
		  "offload-tool -n ns1 attach veth1 vlan --mode skb"}},
		{"detach",
		 {"offload-tool detach eth1 vlan --hook tc-egress",
		  "offload-tool detach eth1                            # every feature and hook",
		  "offload-tool detach --purge eth1                    # also once eth1 is gone",
		  "offload-tool detach --all-orphans"}},
		{"status", {"offload-tool status eth1", "offload-tool --pretty status"}},
		{"rearm", {"offload-tool rearm ens192                          # vmxnet3, after a link down"}},
		{"vlan",
		 {"offload-tool vlan pop eth1 --depth 2                # strip QinQ (or the one tag there is)",
		  "offload-tool vlan push eth1 --vid 10 --inner-vid 20 --dir egress",
		  "offload-tool vlan rewrite eth1 --from 10 --to 30",
		  "offload-tool vlan allow eth1 --vid 10 20 30",
		  "offload-tool vlan show eth1",
		  "offload-tool vlan stats eth1 --format prometheus"}},
		{"geneve",
		 {"offload-tool geneve port add eth1 6081",
		  "offload-tool geneve rule add eth1 --vni 100 --action decap",
		  "offload-tool geneve rule add eth1 --vni 200 --action xsk --queues 4",
		  "offload-tool geneve rule add eth1 --default --action drop",
		  "offload-tool --json geneve stats eth1 --interval 1"}},
		{"send",
		 {"offload-tool send eth1 --dst-mac 02:00:00:00:00:0b --src-ip 198.18.0.1 --dst-ip 198.18.0.2 --count 1000",
		  "offload-tool send eth1 --dst-mac 02:00:00:00:00:0b --src-ip 198.18.0.1 --dst-ip 198.18.0.2 --proto tcp "
		  "--gso tso --size 65000 --mss 1448 --vlan 10,20",
		  "offload-tool -n ns1 send veth1 --dst-mac 02:00:00:00:00:0b --src-ip 10.250.0.1 --dst-ip 10.250.0.2 "
		  "--queues 2 --cpus 0,1 --count 1000001",
		  "offload-tool send eth1 --dst-mac 02:00:00:00:00:0b --src-ip 198.18.0.1 --dst-ip 198.18.0.2 --cpus 2 "
		  "--busy-poll   # sendto() drives the queue's NAPI"}},
		{"recv",
		 {"offload-tool recv eth1 --duration 5",
		  "offload-tool recv eth1 --queues all --pcap rx.pcap",
		  "offload-tool recv eth1 --geneve --vni 200 --pcap rx.pcap --pcap-per-socket",
		  "offload-tool recv eth1 --cpus 2 --busy-poll 64 --napi-defer-hard-irqs 2 --gro-flush-timeout 200000",
		  "offload-tool recv eth1 --gro --pcap merged.pcap --duration 10",
		  "offload-tool recv eth1 --gro tcp,frag --verify-csum --json"}},
		{"features",
		 {"offload-tool features --stack \"vlan:802.1Q/vlan:802.1ad/bridge/vxlan/veth\" --packet tcp4 --gso",
		  "offload-tool features eth1 --rx",
		  "offload-tool features --rx --driver mlx5_core --kernel 6.12"}},
		{"apply",
		 {"offload-tool apply                                   # /etc/xoffload/xoffload.toml",
		  "offload-tool apply -f lab.toml --dry-run            # validate, print the plan",
		  "offload-tool apply -f lab.toml --keep-undeclared"}},
		{"config",
		 {"offload-tool config show                            # > f; then apply -f f changes nothing",
		  "offload-tool config check -f lab.toml"}},
		{"agent",
		 {"offload-tool agent                                   # /etc/xoffload/xoffload.toml, /metrics on 127.0.0.1:9796",
		  "offload-tool agent -f lab.toml --metrics 127.0.0.1:9900",
		  "offload-tool agent -f lab.toml --metrics \"\"              # no /metrics",
		  "offload-tool -n ns1 agent -f ns1.toml"}},
		{"help", {"offload-tool help vlan", "offload-tool help"}},
	};
	for (const auto &[name, lines] : examples) {
		std::string f = "Examples:";
		for (const char *l : lines)
			f += std::string("\n  ") + l;
		app.get_subcommand(name)->footer(f);
	}
}

// The first executable @name on PATH, or "".
std::string on_path(const char *name)
{
	const char *path = std::getenv("PATH");
	std::string dirs = path ? path : "/usr/bin:/bin";
	size_t b = 0;
	while (b <= dirs.size()) {
		size_t e = dirs.find(':', b);
		std::string d = dirs.substr(b, e == std::string::npos ? std::string::npos : e - b);
		std::string f = (d.empty() ? "." : d) + "/" + name;
		if (access(f.c_str(), X_OK) == 0)
			return f;
		if (e == std::string::npos)
			break;
		b = e + 1;
	}
	return {};
}

// offload-tool help [COMMAND]: the man page, as installed, generated here
// from this very app (so it is the text the installed page has, installed
// or not), shown by man(1); without man, the command's --help.
void add_help_command(CLI::App &app, int &rc)
{
	auto *h = app.add_subcommand("help", "Show the manual page of offload-tool or of one command");
	auto topic_ptr = std::make_shared<std::string>();
	h->add_option("command", *topic_ptr, "A command (attach, vlan, geneve, send, ...); none: offload-tool(8)");
	h->callback([&app, &rc, topic_ptr] {
		const std::string &topic = *topic_ptr;
		const std::string page =
			topic.empty() ? man_overview(app, man_date(), library_version())
				      : man_command(app, topic, man_date(), library_version());
		if (page.empty()) {
			std::string known;
			for (const std::string &c : man_commands(app))
				known += (known.empty() ? "" : ", ") + c;
			rc = report_error("help: no command '" + topic + "' (" + known + ")", 2, false);
			return;
		}
		const std::string man = on_path("man");
		if (man.empty()) {
			const CLI::App *c = topic.empty() ? &app : app.get_subcommand(topic);
			std::fputs(c->help().c_str(), stdout);
			rc = 0;
			return;
		}
		std::fflush(stdout);
		FILE *p = popen((man + " -l -").c_str(), "w");
		if (!p) {
			rc = report_error("help: running man: " + std::string(std::strerror(errno)), 1, false);
			return;
		}
		const bool wrote = std::fputs(page.c_str(), p) >= 0;
		const int st = pclose(p);
		rc = wrote && st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
	});
}

} // namespace

void build_app(CLI::App &app, Globals &g, int &rc)
{
	bind_output(&g);
	// with --json or --pretty (either order) one JSON object; CLI11 runs
	// this callback before it sets g.json (defined later), so ask the options
	app.set_version_flag("--version",
			     [&app] {
				     const bool pretty = app.get_option("--pretty")->count() > 0;
				     return version_text(app.get_option("--json")->count() > 0 || pretty, pretty);
			     },
			     "Print the versions of offload-tool, libbpf, libxdp and the kernel, and the kernel features "
			     "it probes");
	app.add_flag("-j,--json", g.json, "Machine-readable output (JSON; errors too, on stdout)");
	app.add_flag_callback(
		"-p,--pretty", [&g] { g.json = g.pretty = true; }, "JSON, indented for reading (implies --json)");
	app.add_flag("-v,--verbose", g.verbose, "More output (-vv shows libbpf/libxdp debug)");
	app.add_option("-n,--netns", g.netns, "Run in this network namespace (like ip -n)");
	app.require_subcommand(1);
	app.fallthrough();

	add_attach_commands(app, g, rc);
	add_status_command(app, g, rc);
	add_vlan_command(app, g, rc);
	add_geneve_command(app, g, rc);
	add_xsk_commands(app, g, rc);
	add_features_command(app, g, rc);
	add_config_commands(app, g, rc);
	add_agent_command(app, g, rc);
	add_help_command(app, rc);
	add_examples(app);
}

} // namespace xoffload::cli
