// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The composed program's cost against its stages run as separate programs
// (issue: composed <= the sum of the separate programs' costs over the
// empty program, measured in the same run). Printed by tools/bench geneve
// after its own rows, and alone by tools/bench compose.
//
// - One bench object (bench/progs/xo_bench_offload.bpf.c) holds the empty
//   program, xdp_vlan's and xdp_geneve's code as two programs and the
//   composed program with the stages vlan and geneve, so all four read the
//   same maps: UDP port 6081 registered, VNI 7 decapsulated, VNI 8 passed,
//   on ingress a pop policy or a VID rewrite (100 <-> 200) as the row says.
// - Rows that leave the frame's length alone (in place: a rewrite, a pass)
//   run through plain BPF_PROG_RUN with repeat: one xdp_buff, the program
//   run over and over in a kernel loop, timed by the kernel; that works on
//   any kernel, this development machine included, at native speed. A
//   rewrite 100 <-> 200 both ways leaves every frame rewritable again.
// - Rows that move the head (pop, decap) need live-frame BPF_PROG_RUN, as
//   the vlan and geneve benches use (a fresh xdp_buff per frame); inputs
//   are fixed points of what the programs do: MAC bytes that repeat the
//   tag, so a pop leaves the same bytes at the original offset; a decap
//   only moves the head. Where the kernel refuses live frames (EPERM on
//   this development machine) those rows are skipped and say so; they run
//   in the guests (tools/vm-test --cmd '.../xo-bench compose').
// - Every wrapper returns XDP_DROP. The separate programs are timed on the
//   frame each would see behind the other: xdp_vlan on the wire frame,
//   xdp_geneve on the frame xdp_vlan leaves. Their costs over the empty
//   program are added; the composed program's cost over it must not exceed
//   that sum. What a libxdp dispatcher costs between two separate programs
//   is not counted: the comparison is the stages' code.
// - Every program's counters are checked == frames on the row's reasons
//   in a verify pass before the timed runs.
#include "bench.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "geneve_frames.hpp"
#include "xoffload/core/abi_check.hpp"
#include "xo_bench_offload.skel.h"

namespace xoffload::bench {

namespace {

using OffSkel = UniqueSkel<xo_bench_offload_bpf, xo_bench_offload_bpf__destroy>;
using test::Bytes;

constexpr uint64_t full_frames = 2'000'000, quick_frames = 200'000;
constexpr unsigned full_runs = 15, quick_runs = 3;
constexpr uint32_t batch_size = 64;
constexpr uint64_t twin_frames = batch_size;
constexpr uint16_t vid = 100, vid_b = 200;
constexpr uint32_t vni_decap = 7, vni_pass = 8;

// What each program must have counted for every frame of a case.
struct Expect {
	std::vector<unsigned> vlan;	// XO_VLAN_CNT_*
	std::vector<unsigned> gnv;	// XO_GNV_CNT_*
};

enum class Policy { pop, rewrite };

struct Row {
	const char *name;
	const char *measures;
	bool live;	// moves the head: live-frame BPF_PROG_RUN
	Policy policy;
	Bytes wire;	// what the composed program and xdp_vlan get
	Bytes behind;	// what xdp_geneve gets behind xdp_vlan
	Expect vlan_alone, gnv_alone, composed;
	std::vector<double> base, vlan, gnv, comp, ratio;	// ns per run; ratio: composed/sum
};

// 802.1Q tag bytes, repeated three times: MACs that a one-tag pop (a 12-byte
// move by 4) leaves as they were.
Bytes tag_macs()
{
	const uint8_t t[4] = {0x81, 0x00, static_cast<uint8_t>(vid >> 8), static_cast<uint8_t>(vid)};
	Bytes m;
	for (int i = 0; i < 3; i++)
		m.insert(m.end(), t, t + 4);
	return m;
}

// @f with its 12 MAC bytes replaced by tag_macs().
Bytes with_tag_macs(Bytes f)
{
	const Bytes m = tag_macs();
	std::copy(m.begin(), m.end(), f.begin());
	return f;
}

std::vector<Row> make_rows()
{
	using namespace test;
	const Bytes inner = inner_udp4(kIpA, kIpC, kPortA, kPortB, 64);
	const Bytes decap = geneve(vni_decap, kEthTeb, inner), pass = geneve(vni_pass, kEthTeb, inner);
	const std::vector<OuterTag> tag = {{kTpid8021Q, vid}}, tag_b = {{kTpid8021Q, vid_b}};
	std::vector<Row> r;
	// in place
	r.push_back({"geneve-pass", "untagged Geneve: vlan keeps it, geneve classifies, passes", false, Policy::pop,
		     outer4(pass), outer4(pass),
		     {{XO_VLAN_CNT_PASSED}, {}}, {{}, {XO_GNV_CNT_PASSED}},
		     {{XO_VLAN_CNT_PASSED}, {XO_GNV_CNT_PASSED}}});
	r.push_back({"tagged-rewrite", "tagged UDP, not Geneve: vlan rewrites the VID, geneve passes it", false,
		     Policy::rewrite, outer4(pass, 4789, tag), outer4(pass, 4789, tag_b),
		     {{XO_VLAN_CNT_REWRITTEN}, {}}, {{}, {XO_GNV_CNT_NOT_GENEVE}},
		     {{XO_VLAN_CNT_REWRITTEN}, {XO_GNV_CNT_NOT_GENEVE}}});
	r.push_back({"tagged-gnv-rw", "tagged Geneve: vlan rewrites the VID, geneve classifies through the tag", false,
		     Policy::rewrite, outer4(pass, kPortGeneve, tag), outer4(pass, kPortGeneve, tag_b),
		     {{XO_VLAN_CNT_REWRITTEN}, {}}, {{}, {XO_GNV_CNT_PASSED}},
		     {{XO_VLAN_CNT_REWRITTEN}, {XO_GNV_CNT_PASSED}}});
	// live: the head moves
	r.push_back({"geneve-decap", "untagged Geneve: vlan keeps it, geneve decaps", true, Policy::pop,
		     outer4(decap), outer4(decap),
		     {{XO_VLAN_CNT_PASSED}, {}}, {{}, {XO_GNV_CNT_DECAPPED}},
		     {{XO_VLAN_CNT_PASSED}, {XO_GNV_CNT_DECAPPED}}});
	r.push_back({"tagged-pop", "tagged UDP, not Geneve: vlan pops, geneve passes it", true, Policy::pop,
		     with_tag_macs(outer4(decap, 4789, tag)), with_tag_macs(outer4(decap, 4789)),
		     {{XO_VLAN_CNT_POPPED}, {}}, {{}, {XO_GNV_CNT_NOT_GENEVE}},
		     {{XO_VLAN_CNT_POPPED}, {XO_GNV_CNT_NOT_GENEVE}}});
	r.push_back({"tagged-gnv-pop", "tagged Geneve: vlan pops, geneve decaps", true, Policy::pop,
		     with_tag_macs(outer4(decap, kPortGeneve, tag)), with_tag_macs(outer4(decap)),
		     {{XO_VLAN_CNT_POPPED}, {}}, {{}, {XO_GNV_CNT_DECAPPED}},
		     {{XO_VLAN_CNT_POPPED}, {XO_GNV_CNT_DECAPPED}}});
	return r;
}

class ComposeBench {
public:
	explicit ComposeBench(xo_bench_offload_bpf *s) : s_(s), ncpus_(libbpf_num_possible_cpus()) {}

	// Port 6081, VNI 7 decap, VNI 8 pass; VIDs 100 and 200 rewritten to
	// each other (under a rewrite policy; a pop policy ignores it).
	int setup()
	{
		__u32 zero = 0, port = test::kPortGeneve;
		xo_gnv_port p{1, 0};
		xo_gnv_rule rd{XO_GNV_ACT_DECAP, 1, 1}, rp{XO_GNV_ACT_PASS, 1, 2};
		xo_gnv_cfg cfg{XO_ABI_VERSION, 0, {}, xo_gnv_gen_next(0), 0};
		if (bpf_map_update_elem(bpf_map__fd(s_->maps.xo_gnv_ports), &port, &p, BPF_ANY) ||
		    bpf_map_update_elem(bpf_map__fd(s_->maps.xo_gnv_rules), &vni_decap, &rd, BPF_ANY) ||
		    bpf_map_update_elem(bpf_map__fd(s_->maps.xo_gnv_rules), &vni_pass, &rp, BPF_ANY) ||
		    bpf_map_update_elem(bpf_map__fd(s_->maps.xo_gnv_cfg), &zero, &cfg, BPF_ANY))
			return -errno;
		for (auto [from, to] : {std::pair{vid, vid_b}, std::pair{vid_b, vid}}) {
			xo_vid_entry e{};
			e.rewrite_vid = to;
			__u32 key = xo_vid_key(0, XO_DIR_INGRESS, from);
			if (bpf_map_update_elem(bpf_map__fd(s_->maps.xo_vlan_vid), &key, &e, BPF_ANY))
				return -errno;
		}
		return 0;
	}

	// The ingress policy of a row: pop one tag, or rewrite the VID.
	int policy(Policy p)
	{
		__u32 dir = XO_DIR_INGRESS;
		xo_vlan_banks banks{};
		banks.bank[0].abi_version = XO_ABI_VERSION;
		if (p == Policy::pop) {
			banks.bank[0].action = XO_VLAN_ACT_POP;
			banks.bank[0].pop_depth = 1;
		} else {
			banks.bank[0].flags = XO_VLAN_F_REWRITE;
		}
		xo_vlan_policy_compile(&banks.bank[0]);
		if (bpf_map_update_elem(bpf_map__fd(s_->maps.xo_vlan_cfg), &dir, &banks, BPF_ANY))
			return -errno;
		return 0;
	}

	int base_fd() const { return bpf_program__fd(s_->progs.xo_bench_obase); }
	int vlan_fd() const { return bpf_program__fd(s_->progs.xo_bench_ovlan); }
	int gnv_fd() const { return bpf_program__fd(s_->progs.xo_bench_ognv); }
	int comp_fd() const { return bpf_program__fd(s_->progs.xo_bench_ocomp); }

	int reset_counters()
	{
		int err = zero_percpu(s_->maps.xo_vlan_stats, sizeof(xo_vlan_stats));
		if (!err)
			err = zero_percpu(s_->maps.xo_gnv_stats, sizeof(xo_gnv_stats));
		return err;
	}

	// One BPF_PROG_RUN of @frames frames, live or in place (run_xdp).
	int run(int fd, bool live, const Bytes &in, uint64_t frames, double &wall_ns, uint32_t &kern_ns)
	{
		return run_xdp(fd, live, batch_size, in.data(), static_cast<uint32_t>(in.size()), frames, wall_ns, kern_ns);
	}

	// ns per frame: (wall - a one-batch twin call) / frames, clamped into
	// the kernel's truncated average [kern, kern + 1) (see vlan_bench.cpp).
	int measure(int fd, bool live, const Bytes &in, uint64_t frames, double &ns)
	{
		double twin, wall;
		uint32_t kern;
		int err = run(fd, live, in, twin_frames, twin, kern);
		if (!err)
			err = run(fd, live, in, frames, wall, kern);
		if (!err)
			ns = std::clamp((wall - twin) / static_cast<double>(frames - twin_frames),
					static_cast<double>(kern), kern + 1.0);
		return err;
	}

	// After reset_counters() and @frames frames: exactly @want counted, by
	// xdp_vlan's counters at the XDP hook and xdp_geneve's.
	bool counters_ok(const Expect &want, uint64_t frames, std::string &why)
	{
		std::vector<xo_vlan_stats> vs(static_cast<size_t>(ncpus_));
		std::vector<xo_gnv_stats> gs(static_cast<size_t>(ncpus_));
		__u32 hook = XO_HOOK_XDP, zero = 0;
		if (bpf_map_lookup_elem(bpf_map__fd(s_->maps.xo_vlan_stats), &hook, vs.data()) ||
		    bpf_map_lookup_elem(bpf_map__fd(s_->maps.xo_gnv_stats), &zero, gs.data())) {
			why = std::string("reading the counters: ") + std::strerror(errno);
			return false;
		}
		auto check = [&](const char *what, unsigned max, const std::vector<unsigned> &listed, auto count) {
			for (unsigned r = 0; r < max; r++) {
				uint64_t n = count(r);
				uint64_t expect = std::find(listed.begin(), listed.end(), r) != listed.end() ? frames : 0;
				if (n != expect) {
					why = std::string(what) + " counter " + std::to_string(r) + " = " + std::to_string(n) +
					      ", expected " + std::to_string(expect);
					return false;
				}
			}
			return true;
		};
		return check("xo_vlan_stats", XO_VLAN_CNT_MAX, want.vlan,
			     [&](unsigned r) {
				     uint64_t n = 0;
				     for (const auto &c : vs)
					     n += c.c[r].packets;
				     return n;
			     }) &&
		       check("xo_gnv_stats", XO_GNV_CNT_MAX, want.gnv, [&](unsigned r) {
			       uint64_t n = 0;
			       for (const auto &c : gs)
				       n += c.c[r].packets;
			       return n;
		       });
	}

private:
	int zero_percpu(bpf_map *map, size_t value_size)
	{
		std::vector<uint8_t> zeros((value_size + 7) / 8 * 8 * static_cast<size_t>(ncpus_), 0);
		for (__u32 key = 0; key < bpf_map__max_entries(map); key++)
			if (bpf_map_update_elem(bpf_map__fd(map), &key, zeros.data(), BPF_ANY))
				return -errno;
		return 0;
	}

	xo_bench_offload_bpf *s_;
	int ncpus_;
};

} // namespace

int measure_composed(uint64_t frames, unsigned runs, int verbose, std::vector<ComposedResult> &out, std::string &what)
{
	OffSkel skel(xo_bench_offload_bpf__open());
	if (!skel) {
		what = "composed: opening the bench BPF object";
		return -errno;
	}
	skel->rodata->xo_stages = XO_STAGE_VLAN | XO_STAGE_GENEVE;
	int err = prepare_bench_object(skel->obj, {skel->progs.xdp_offload, skel->progs.xdp_offload_mb});
	if (!err)
		err = xo_bench_offload_bpf__load(skel.get());
	if (err) {
		what = "composed: loading the bench programs (root; -v for the verifier log)";
		return err;
	}
	if (verbose)	// what the kernel made of each program: instructions after the verifier, JITed bytes
		for (bpf_program *p : {skel->progs.xo_bench_obase, skel->progs.xo_bench_ovlan, skel->progs.xo_bench_ognv,
				       skel->progs.xo_bench_ocomp}) {
			bpf_prog_info info{};
			__u32 len = sizeof(info);
			if (!bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
				std::fprintf(stderr, "xo-bench: %s: %u xlated insns, %u JITed bytes\n", bpf_program__name(p),
					     info.xlated_prog_len / 8, info.jited_prog_len);
		}
	ComposeBench b(skel.get());
	if ((err = b.setup())) {
		what = "composed: writing the maps";
		return err;
	}
	std::vector<Row> rows = make_rows();
	// verify pass: each program, a full-length run, exactly the row's
	// counters; the first refusal of live frames skips the live rows
	std::string live_refused;
	for (const Row &r : rows) {
		if (r.live && !live_refused.empty())
			continue;
		struct {
			const char *prog;
			int fd;
			const Bytes &in;
			const Expect &want;
		} const checks[] = {{"xdp_vlan", b.vlan_fd(), r.wire, r.vlan_alone},
				    {"xdp_geneve", b.gnv_fd(), r.behind, r.gnv_alone},
				    {"composed", b.comp_fd(), r.wire, r.composed}};
		for (const auto &c : checks) {
			double wall;
			uint32_t kern;
			std::string why;
			if ((err = b.policy(r.policy)) || (err = b.reset_counters()) ||
			    (err = b.run(c.fd, r.live, c.in, frames, wall, kern))) {
				if (r.live && err == -EPERM) {
					live_refused = std::string("live-frame BPF_PROG_RUN refused here (") + std::strerror(EPERM) +
						       ")";
					break;
				}
				what = std::string("composed: ") + r.name + ": " + c.prog + ": verify run";
				return err;
			}
			if (!b.counters_ok(c.want, frames, why)) {
				what = std::string("composed: ") + r.name + ": " + c.prog + ": VERIFY FAILED: " + why;
				return -EPROTO;
			}
		}
	}
	// timed: the four programs of a row back to back, run after run, in
	// the opposite order every other run so a drift (frequency, a
	// neighbour's load) weighs on the composed program and the separate
	// ones alike
	for (unsigned k = 0; k < runs; k++)
		for (Row &r : rows) {
			if (r.live && !live_refused.empty())
				continue;
			double ns[4];
			const int fds[4] = {b.base_fd(), b.vlan_fd(), b.gnv_fd(), b.comp_fd()};
			const Bytes *in[4] = {&r.wire, &r.wire, &r.behind, &r.wire};
			if ((err = b.policy(r.policy))) {
				what = std::string("composed: ") + r.name + ": writing the policy";
				return err;
			}
			for (int j = 0; j < 4; j++) {
				const int i = k % 2 ? 3 - j : j;
				if ((err = b.measure(fds[i], r.live, *in[i], frames, ns[i]))) {
					what = std::string("composed: ") + r.name + ": timed run";
					return err;
				}
			}
			const double base = ns[0], vlan = ns[1], gnv = ns[2], comp = ns[3];
			r.base.push_back(base);
			r.vlan.push_back(vlan);
			r.gnv.push_back(gnv);
			r.comp.push_back(comp);
			double sum = (vlan - base) + (gnv - base);
			r.ratio.push_back(sum > 0 ? (comp - base) / sum : 0);
		}
	out.clear();
	for (const Row &r : rows) {
		ComposedResult c;
		c.name = r.name;
		c.measures = r.measures;
		c.live = r.live;
		if (r.ratio.empty()) {
			c.skipped = live_refused;
			out.push_back(c);
			continue;
		}
		c.base_ns = median(r.base);
		c.vlan_ns = median(r.vlan);
		c.gnv_ns = median(r.gnv);
		c.comp_ns = median(r.comp);
		c.ratio = median(r.ratio);
		c.ratio_min = *std::min_element(r.ratio.begin(), r.ratio.end());
		c.ratio_max = *std::max_element(r.ratio.begin(), r.ratio.end());
		out.push_back(c);
	}
	return 0;
}

bool print_composed(const std::vector<ComposedResult> &rows, bool json)
{
	bool missed = false;
	if (json) {
		std::printf("\"composed\":[");
		for (size_t i = 0; i < rows.size(); i++) {
			const ComposedResult &c = rows[i];
			if (!c.skipped.empty()) {
				std::printf("%s{\"name\":\"%s\",\"live\":%s,\"skipped\":\"%s\"}", i ? "," : "",
					    c.name.c_str(), c.live ? "true" : "false", c.skipped.c_str());
				continue;
			}
			missed |= c.ratio > 1.0;
			std::printf("%s{\"name\":\"%s\",\"live\":%s,\"base_ns\":%.2f,\"vlan_ns\":%.2f,"
				    "\"geneve_ns\":%.2f,\"composed_ns\":%.2f,\"ratio\":%.3f,\"ratio_min\":%.3f,"
				    "\"ratio_max\":%.3f,\"target\":1.0,\"met\":%s}",
				    i ? "," : "", c.name.c_str(), c.live ? "true" : "false", c.base_ns, c.vlan_ns, c.gnv_ns,
				    c.comp_ns, c.ratio, c.ratio_min, c.ratio_max, c.ratio <= 1.0 ? "true" : "false");
		}
		std::printf("]");
		return missed;
	}
	std::printf("composed program (xdp_offload, stages vlan + geneve) vs the two programs apart,\n"
		    "same object and maps; ns/pkt medians; ratio: (composed - empty) / ((vlan - empty) +\n"
		    "(geneve - empty)), median [min, max] of the runs, target <= 1.00\n"
		    "run: in place = plain BPF_PROG_RUN (one xdp_buff, kernel loop), live = live frames\n\n");
	std::printf("%-15s %5s %7s %7s %7s %8s %18s  %s\n", "case", "run", "empty", "vlan", "geneve", "composed",
		    "ratio [min,max]", "measures");
	for (const ComposedResult &c : rows) {
		if (!c.skipped.empty()) {
			std::printf("%-15s %5s %-51s  %s\n", c.name.c_str(), "live", ("skipped: " + c.skipped).c_str(),
				    c.measures.c_str());
			continue;
		}
		bool ok = c.ratio <= 1.0;
		missed |= !ok;
		char rt[40];
		std::snprintf(rt, sizeof(rt), "%.2f%s [%.2f,%.2f]", c.ratio, ok ? "" : "!", c.ratio_min, c.ratio_max);
		std::printf("%-15s %5s %7.1f %7.1f %7.1f %8.1f %18s  %s\n", c.name.c_str(), c.live ? "live" : "place",
			    c.base_ns, c.vlan_ns, c.gnv_ns, c.comp_ns, rt, c.measures.c_str());
	}
	std::printf("\ngeneve is timed on the frame the vlan program leaves; what a libxdp dispatcher\n"
		    "adds between two programs is not counted for the separate pair.\n"
		    "target (issue): composed <= the sum of the separate programs' costs: %s\n",
		    missed ? "MISSED" : "MET");
	return missed;
}

int run_compose(const Options &opt)
{
	const BenchStart start = bench_start(opt, {quick_frames, quick_runs, full_frames, full_runs});
	if (start.cpu < 0)
		return fail("compose: pinning to a CPU", start.cpu);
	std::vector<ComposedResult> rows;
	std::string what;
	if (int err = measure_composed(start.frames, start.runs, opt.verbose, rows, what))
		return fail(what, err);
	if (opt.json) {
		std::printf("{\"bench\":\"compose\",\"frames\":%llu,\"runs\":%u,\"cpu\":%d,",
			    static_cast<unsigned long long>(start.frames), start.runs, start.cpu);
	} else {
		std::printf("BPF_PROG_RUN in place and with live frames (batch %u), %llu frames x %u runs, CPU %d\n"
			    "every wrapper returns XDP_DROP; counters verified == frames per program and case\n\n",
			    batch_size, static_cast<unsigned long long>(start.frames), start.runs, start.cpu);
	}
	bool missed = print_composed(rows, opt.json);
	if (opt.json)
		std::printf("}\n");
	return opt.check_target && missed ? exit_failure : exit_ok;
}

} // namespace xoffload::bench
