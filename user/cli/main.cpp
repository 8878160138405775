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
	sigaction(SIGINT, &sa, nullptr);
	sigaction(SIGTERM, &sa, nullptr);
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
	const std::vector<std::string> bench_args = cli::split_bench_args(argc, argv);
	cli::build_app(app, g, rc, bench_args);

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
		std::fprintf(stderr, "offload-tool: %s (see --help)\n", msg.c_str());
		return 2;
	}
	return rc;
}
