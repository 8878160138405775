// offload-tool: command line front end of libxoffload.
#include <csignal>
#include <cstdio>

#include "commands.hpp"
#include "xoffload/loader.hpp"
#include "xoffload/netdev.hpp"

namespace {
volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }
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
	return g_stop != 0;
}

Status prepare(const Globals &g)
{
	set_library_verbosity(g.verbose);
	if (!g.netns.empty())
		return netns_enter(g.netns);
	return ok();
}

} // namespace xoffload::cli

int main(int argc, char **argv)
{
	using namespace xoffload;
	cli::Globals g;
	int rc = 0;

	CLI::App app{"xoffload: VLAN, Geneve, segmentation and checksum offloads in XDP, TC and AF_XDP",
		     "offload-tool"};
	app.set_version_flag("--version", std::string("offload-tool ") + XOFFLOAD_VERSION);
	app.add_flag("--json", g.json, "Machine-readable output");
	app.add_flag("-v,--verbose", g.verbose, "More output (-vv shows libbpf/libxdp debug)");
	app.add_option("-n,--netns", g.netns, "Run in this network namespace (like ip -n)");
	app.require_subcommand(1);
	app.fallthrough();

	cli::add_attach_commands(app, g, rc);
	cli::add_vlan_command(app, g, rc);
	cli::add_geneve_command(app, g, rc);
	cli::add_xsk_commands(app, g, rc);
	cli::add_features_command(app, g, rc);
	const std::vector<std::string> bench_args = cli::split_bench_args(argc, argv);
	cli::add_bench_command(app, g, rc, bench_args);

	try {
		// CLI11 parses everything up to the bench's name
		app.parse(argc - static_cast<int>(bench_args.size()), argv);
	} catch (const CLI::CallForHelp &e) {
		return app.exit(e);
	} catch (const CLI::CallForAllHelp &e) {
		return app.exit(e);
	} catch (const CLI::CallForVersion &e) {
		return app.exit(e);
	} catch (const CLI::ParseError &e) {
		std::string msg = e.what();
		// "A subcommand is required" when a word was given for one: name it
		CLI::App *at = &app;
		while (!at->get_subcommands().empty())
			at = at->get_subcommands().front();
		const auto rest = app.remaining(true);	// fallthrough: the word may sit with a parent
		if (msg.find("subcommand is required") != std::string::npos) {
			const std::string of = at == &app ? std::string() : " of " + at->get_name();
			if (!rest.empty() && !rest.front().empty() && rest.front()[0] != '-')
				msg = "unknown command '" + rest.front() + "'" + of;
			else if (at != &app)
				msg = at->get_name() + " needs a subcommand";
		}
		std::fprintf(stderr, "offload-tool: %s (see --help)\n", msg.c_str());
		return 2;
	}
	return rc;
}
