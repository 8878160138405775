// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// xo-bench: the microbenchmarks behind tools/bench, one subcommand each.
// Also the shared helpers declared in bench.hpp.
#include "bench.hpp"

#include <bpf/bpf.h>

#include <CLI/CLI.hpp>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdarg>
#include <cstring>

namespace xoffload::bench {

namespace {

int g_verbose = 0;

int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if ((level == LIBBPF_WARN && g_verbose >= 1) || g_verbose >= 2)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

} // namespace

int pin_to_cpu(int cpu) noexcept
{
	cpu_set_t set;

	if (cpu < 0) {
		CPU_ZERO(&set);
		if (sched_getaffinity(0, sizeof(set), &set))
			return -errno;
		for (int c = CPU_SETSIZE - 1; c >= 0; c--) {
			if (CPU_ISSET(c, &set)) {
				cpu = c;
				break;
			}
		}
		if (cpu < 0)
			return -ENODEV;
	}
	if (cpu >= CPU_SETSIZE)
		return -EINVAL;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -errno;
	return cpu;
}

void set_libbpf_verbosity(int verbose) noexcept
{
	g_verbose = verbose;
	libbpf_set_print(print_libbpf);
}

double median(std::vector<double> v)
{
	if (v.empty())
		return 0.0;
	std::sort(v.begin(), v.end());
	size_t n = v.size();
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

int fail(const std::string &what, int err)
{
	if (err)
		std::fprintf(stderr, "xo-bench: %s: %s\n", what.c_str(), std::strerror(err < 0 ? -err : err));
	else
		std::fprintf(stderr, "xo-bench: %s\n", what.c_str());
	return exit_failure;
}

BenchStart bench_start(const Options &opt, const BenchSizes &z) noexcept
{
	set_libbpf_verbosity(opt.verbose);
	return {opt.frames ? opt.frames : opt.quick ? z.quick_frames : z.full_frames,
		opt.runs ? opt.runs : opt.quick ? z.quick_runs : z.full_runs, pin_to_cpu(opt.cpu)};
}

int run_xdp(int fd, bool live, uint32_t batch, const void *in, uint32_t in_len, uint64_t frames, double &wall_ns,
	    uint32_t &kern_ns) noexcept
{
	bpf_test_run_opts o{};
	o.sz = sizeof(o);
	o.data_in = in;
	o.data_size_in = in_len;
	o.repeat = static_cast<int>(frames);
	if (live) {
		o.flags = BPF_F_TEST_XDP_LIVE_FRAMES;
		o.batch_size = batch;
	}
	auto t0 = std::chrono::steady_clock::now();
	int err = bpf_prog_test_run_opts(fd, &o);
	auto t1 = std::chrono::steady_clock::now();
	if (err)
		return err < 0 ? err : -err;
	wall_ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
	kern_ns = o.duration;
	return 0;
}

int prepare_bench_object(bpf_object *obj, std::initializer_list<bpf_program *> skip) noexcept
{
	bpf_map *map;

	bpf_object__for_each_map(map, obj) {
		int err = bpf_map__set_pin_path(map, nullptr);
		if (err)
			return err;
	}
	for (bpf_program *p : skip)
		if (int err = bpf_program__set_autoload(p, false))
			return err;
	return 0;
}

} // namespace xoffload::bench

int main(int argc, char **argv)
{
	using namespace xoffload::bench;

	CLI::App app{"xo-bench: xoffload microbenchmarks (run through tools/bench)"};
	app.require_subcommand(1);
	Options opt;
	int rc = exit_ok;

	// Options every bench understands, attached to each subcommand.
	auto common = [&opt](CLI::App *sub) {
		sub->add_flag("--quick", opt.quick, "fewer frames and runs (smoke test, not a result)");
		sub->add_flag("--json", opt.json, "print one JSON object instead of the table");
		sub->add_flag("--check-target", opt.check_target, "exit 1 when the target is missed");
		sub->add_option("--frames", opt.frames, "frames per timed run (vlan: per BPF_PROG_RUN call)")
			->check(CLI::Range(uint64_t{1000}, uint64_t{1} << 30));
		sub->add_option("--runs", opt.runs, "timed calls per case (median reported)")
			->check(CLI::Range(1u, 1000u));
		sub->add_option("--cpu", opt.cpu, "CPU to pin to (default: last allowed CPU)")
			->check(CLI::NonNegativeNumber);
		sub->add_flag("-v,--verbose", opt.verbose, "libbpf warnings (-vv: debug)");
	};

	CLI::App *vlan = app.add_subcommand("vlan", "XDP VLAN pop/push/rewrite ns per packet vs an empty program");
	common(vlan);
	vlan->callback([&] { rc = run_vlan(opt); });

	CLI::App *gso = app.add_subcommand("gso", "software GSO Mseg/s per core vs memcpy and DPDK librte_gso");
	common(gso);
	gso->add_option("--slots", opt.slots, "UMEM slots of 2048 B the frames cycle through (default 2048)")
		->check(CLI::Range(64u, 1u << 20));
	gso->add_option("--csum-impl", opt.csum_impl, "force the checksum implementation")
		->check(CLI::IsMember({"scalar", "avx2", "avx512"}));
	gso->add_option("--case", opt.cases, "only these cases (repeatable), e.g. --case tso4 --case tso4+2tag");
	gso->callback([&] { rc = run_gso(opt); });

	CLI::App *gro = app.add_subcommand("gro", "software GRO Mframes/s per core vs memcpy and DPDK librte_gro");
	common(gro);
	gro->add_option("--slots", opt.slots, "UMEM slots of 2048 B the input frames sit in (default 4096)")
		->check(CLI::Range(64u, 1u << 20));
	gro->add_option("--case", opt.cases, "only these cases (repeatable), e.g. --case tcp4 --case tcp4+vlan");
	gro->callback([&] { rc = run_gro(opt); });

	CLI::App *gnv = app.add_subcommand("geneve", "XDP Geneve classify/decap ns per packet vs an empty program");
	common(gnv);
	gnv->add_option("--case", opt.cases,
			"only these rows (repeatable), e.g. --case csum4 --case xsk-steer; without the composed rows");
	gnv->callback([&] { rc = run_geneve(opt); });

	CLI::App *comp = app.add_subcommand("compose", "the composed XDP program vs its stages as separate programs");
	common(comp);
	comp->callback([&] { rc = run_compose(opt); });

	try {
		app.parse(argc, argv);
	} catch (const CLI::Success &e) {
		return app.exit(e);
	} catch (const CLI::ParseError &e) {
		std::fprintf(stderr, "xo-bench: %s\n", e.what());
		return exit_usage;
	}
	return rc;
}
