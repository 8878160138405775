// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Shared plumbing of the xo-bench microbenchmarks: options, CPU pinning,
// statistics, libbpf owners and the per-subcommand entry points.
#pragma once

#include <bpf/libbpf.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "xoffload/core/owned.hpp"

namespace xoffload::bench {

// Options every subcommand takes; defaults of 0 mean "the bench decides".
struct Options {
	bool quick = false;	// fewer frames and runs: a smoke test, not a result
	bool json = false;
	bool check_target = false;	// exit 1 when the bench's target is missed
	uint64_t frames = 0;	// frames per timed run (vlan: per BPF_PROG_RUN call)
	unsigned runs = 0;	// timed calls per case
	int cpu = -1;		// -1: the last CPU this process may use
	int verbose = 0;
	unsigned slots = 0;	// gso: UMEM slots the output frames cycle through; gro: the input frames'
	std::string csum_impl;	// gso: force scalar/avx2/avx512 (empty: the engine's choice)
	std::vector<std::string> cases;	// gso, gro: only these cases (empty: all)
};

// Exit codes, as the CLI uses them.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failure = 1;
inline constexpr int exit_usage = 2;

// Pins the calling thread to @cpu (or, if -1, to the last allowed CPU).
// Returns the CPU, or a negative errno.
int pin_to_cpu(int cpu) noexcept;

// Routes libbpf's messages to stderr: warnings with -v, debug with -vv.
void set_libbpf_verbosity(int verbose) noexcept;

// Median of @v (the mean of the middle two for even sizes); 0 if empty.
double median(std::vector<double> v);

// "xo-bench: <what>: <strerror(-err)>" on stderr; returns exit_failure.
int fail(const std::string &what, int err = 0);

// Owner of a bpftool skeleton: Skel is the generated struct, Destroy its
// __destroy function (libxoffload's one owner of libbpf objects).
template <typename Skel, void (*Destroy)(Skel *)>
using UniqueSkel = Owned<Skel, Destroy>;

// The set-up every BPF bench starts with: frames and runs from the options
// or the bench's own defaults (quick or full), libbpf's verbosity set, the
// thread pinned. cpu < 0 (a negative errno) when pinning failed.
struct BenchStart {
	uint64_t frames;
	unsigned runs;
	int cpu;
};
struct BenchSizes {
	uint64_t quick_frames;
	unsigned quick_runs;
	uint64_t full_frames;
	unsigned full_runs;
};
BenchStart bench_start(const Options &opt, const BenchSizes &sizes) noexcept;

// Readies a bench object for loading: clears the pin path of every map, so
// loading never reads or writes /sys/fs/bpf (the maps are LIBBPF_PIN_BY_NAME
// for the real tool), and keeps the @skip programs (the real entries the
// wrappers include) from loading. Returns 0 or a negative errno.
int prepare_bench_object(bpf_object *obj, std::initializer_list<bpf_program *> skip) noexcept;

// One BPF_PROG_RUN of @frames frames of @in (@in_len bytes) through XDP
// program @fd: live frames (BPF_F_TEST_XDP_LIVE_FRAMES, batches of
// @batch: a fresh xdp_buff per frame, as a driver gives) or in place (one
// xdp_buff, the program run over and over). @wall_ns: the whole call's
// wall time; @kern_ns: the kernel's own truncated average per frame.
// Returns 0 or a negative errno.
int run_xdp(int fd, bool live, uint32_t batch, const void *in, uint32_t in_len, uint64_t frames, double &wall_ns,
	    uint32_t &kern_ns) noexcept;

// Subcommands. Each returns an exit code.
int run_vlan(const Options &opt);
int run_gso(const Options &opt);
int run_gro(const Options &opt);
int run_geneve(const Options &opt);
int run_compose(const Options &opt);

// The composed program's rows (compose_bench.cpp), shared by geneve and
// compose: medians over the runs, in ns per frame.
struct ComposedResult {
	std::string name, measures;
	double base_ns = 0, vlan_ns = 0, gnv_ns = 0, comp_ns = 0;
	double ratio = 0, ratio_min = 0, ratio_max = 0;	// (comp - base) / ((vlan - base) + (gnv - base))
	bool live = false;	// timed with live frames (the head moves), else in place
	std::string skipped;	// why the row was not measured (live frames refused); "" if it was
};
// Loads, verifies and times the rows; 0, or a negative errno with @what set.
// @verbose: the programs' sizes after the verifier and the JIT on stderr.
int measure_composed(uint64_t frames, unsigned runs, int verbose, std::vector<ComposedResult> &out,
		     std::string &what);
// Prints the rows (a JSON member "composed":[...] with @json); true when
// the target (ratio <= 1) is missed.
bool print_composed(const std::vector<ComposedResult> &rows, bool json);

// A target over the rows it applies to: the worst row and how many pass
// (the gso and gro benches' target tables).
struct Target {
	const char *name;
	double threshold;
	bool ref = false;	// printed with its verdict, not judged (--check-target)
	double worst = 0;
	const char *worst_case = "-";
	unsigned rows = 0, passed = 0;

	void add(const char *row, double v)
	{
		if (v <= 0)
			return;
		if (!rows || v < worst) {
			worst = v;
			worst_case = row;
		}
		rows++;
		passed += v >= threshold;
	}
	bool pass() const { return rows && passed == rows; }
};

// The run of the row called @name (Run::def->name), or nullptr.
template <class Run>
const Run *find_row(const std::vector<Run> &runs, const char *name)
{
	for (const auto &r : runs)
		if (name && !std::strcmp(r.def->name, name))
			return &r;
	return nullptr;
}

// @v printed with the printf format @f.
inline std::string fmt(const char *f, double v)
{
	char b[48];
	std::snprintf(b, sizeof(b), f, v);
	return b;
}

} // namespace xoffload::bench
