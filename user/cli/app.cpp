// The offload-tool command line as a CLI11 app: global options and every
// subcommand, built apart from main() so it can be parsed without running
// anything (tests/fuzz/cli_fuzz.cpp).
#include "commands.hpp"

namespace xoffload::cli {

void build_app(CLI::App &app, Globals &g, int &rc, const std::vector<std::string> &bench_args)
{
	app.set_version_flag("--version", std::string("offload-tool ") + XOFFLOAD_VERSION);
	app.add_flag("--json", g.json, "Machine-readable output");
	app.add_flag("-v,--verbose", g.verbose, "More output (-vv shows libbpf/libxdp debug)");
	app.add_option("-n,--netns", g.netns, "Run in this network namespace (like ip -n)");
	app.require_subcommand(1);
	app.fallthrough();

	add_attach_commands(app, g, rc);
	add_vlan_command(app, g, rc);
	add_geneve_command(app, g, rc);
	add_xsk_commands(app, g, rc);
	add_features_command(app, g, rc);
	add_bench_command(app, g, rc, bench_args);
}

} // namespace xoffload::cli
