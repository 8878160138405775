// offload-tool bench: the benchmarks of tools/bench, run from the source tree
// this binary was built from (tools/bench builds what a bench needs into the
// same build directory, and bench xsk is a script around two binaries).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"

namespace xoffload::cli {

namespace {

constexpr const char *kBenches[] = {"vlan", "geneve", "gso", "xsk"};

struct BenchOpts {
	std::string name;
};

int run(const Globals &g, const BenchOpts &o, std::vector<std::string> args)
{
	if (std::none_of(std::begin(kBenches), std::end(kBenches), [&](const char *b) { return o.name == b; }))
		return report(usage_error("bench: unknown bench '" + o.name + "' (vlan, geneve, gso, xsk)"));
	if (!g.netns.empty())
		return report(usage_error("bench: -n does not apply (the benches make their own namespaces)"));
	const std::string script = std::string(XO_SOURCE_DIR) + "/tools/bench";
	if (::access(script.c_str(), X_OK))
		return report(runtime_error("bench: " + script + " not found: offload-tool bench runs the benches of "
					    "the source tree it was built from; run tools/bench there",
					    errno));
	if (g.json)
		args.insert(args.begin(), "--json");
	for (int i = 0; i < g.verbose; i++)
		args.insert(args.begin(), "-v");
	std::vector<std::string> argv{script, o.name};
	argv.insert(argv.end(), args.begin(), args.end());
	std::vector<char *> cargv;
	for (auto &a : argv)
		cargv.push_back(a.data());
	cargv.push_back(nullptr);
	::setenv("XO_BUILD_DIR", XO_BUILD_DIR, 0);	// one the caller set wins
	std::fflush(stdout);
	::execv(script.c_str(), cargv.data());
	return report(errno_error("bench: run " + script, errno));
}

} // namespace

std::vector<std::string> split_bench_args(int argc, char **argv)
{
	// global flags may stand before bench and between bench and its name
	// (offload-tool bench -v vlan); the name is the first word after bench
	bool after_bench = false;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		// -n NS, --netns NS, and -n last in a group of short flags (-vn NS)
		if (a == "--netns" || (a.size() > 1 && a[0] == '-' && a[1] != '-' && a.back() == 'n')) {
			i++;	// its value
			continue;
		}
		if (!a.empty() && a[0] == '-')
			continue;	// a global flag
		if (after_bench)
			return std::vector<std::string>(argv + i + 1, argv + argc);
		if (a != "bench")
			break;
		after_bench = true;
	}
	return {};
}

void add_bench_command(CLI::App &app, Globals &g, int &rc, const std::vector<std::string> &bench_args)
{
	auto o = std::make_shared<BenchOpts>();
	auto *c = app.add_subcommand("bench", "Run a benchmark of tools/bench: vlan, geneve, gso or xsk; the bench's "
					      "own options follow its name (--quick, --runs N, ...)");
	c->add_option("name", o->name, "vlan | geneve | gso | xsk")->required();
	c->callback([&g, &rc, o, &bench_args] { rc = run(g, *o, bench_args); });
}

} // namespace xoffload::cli
