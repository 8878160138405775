// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Randomized differential test: random and mutated frames through the real
// xdp_vlan/tc_vlan/xdp_geneve (BPF_PROG_TEST_RUN) against the docs' model
// (ref_model.hpp), comparing verdict, bytes and counters frame by frame.
//
// Programs are configured through libxoffload (VlanMaps, GeneveMaps) over
// maps pinned in a private bpffs directory, so the test follows the map
// layouts wherever they go. Seeds: two fixed ones and one fresh one, printed
// at the start; XO_DIFF_SEED=S reruns one seed alone, XO_DIFF_FRAMES=N sets
// the frames per program (default 100000, split over the seeds).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/magic.h>
#include <linux/pkt_cls.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <sstream>

#include "geneve_frames.hpp"
#include "prog_run.hpp"
#include "ref_model.hpp"
#include "tc_vlan_test.skel.h"
#include "xdp_geneve.skel.h"
#include "xdp_vlan.skel.h"
#include "../../user/src/bpf/compose.hpp"
#include "xoffload/geneve/geneve.hpp"
#include "xoffload/core/owned.hpp"
#include "xoffload/vlan/vlan.hpp"

namespace xoffload::test {
namespace {

using model::Outcome;

// The two Geneve semantics harden-datapath changed (see ref_model.hpp,
// GeneveSemantics): on since that branch is merged here. Off, frames of
// those classes are generated but not compared (counted as skipped), for
// programs that predate them. XO_DIFF_NEW_GENEVE=0/1 overrides.
constexpr bool kNewGeneveSemantics = true;
constexpr unsigned kNewOptWalkLimit = 63;	// harden-datapath walks every option

bool new_geneve()
{
	const char *e = std::getenv("XO_DIFF_NEW_GENEVE");
	return e ? std::strcmp(e, "0") != 0 : kNewGeneveSemantics;
}

using Rng = std::mt19937_64;

constexpr size_t kBatch = 1000;	// frames per random configuration

unsigned pick(Rng &r, unsigned n)
{
	return static_cast<unsigned>(r() % n);
}
bool chance(Rng &r, unsigned percent)
{
	return pick(r, 100) < percent;
}

std::vector<uint64_t> seeds()
{
	if (const char *s = std::getenv("XO_DIFF_SEED"))
		return {std::strtoull(s, nullptr, 0)};
	return {0x5eed0001, 0x5eed0002, std::random_device{}() | uint64_t{std::random_device{}()} << 32};
}

size_t frames_total(size_t dflt)
{
	if (const char *s = std::getenv("XO_DIFF_FRAMES"))
		return std::strtoull(s, nullptr, 0);
	return dflt;
}

std::string hex(std::span<const uint8_t> d)
{
	static const char *x = "0123456789abcdef";
	std::string s;
	s.reserve(d.size() * 2);
	for (uint8_t b : d) {
		s += x[b >> 4];
		s += x[b & 15];
	}
	return s;
}

// A private bpffs directory for the maps, removed with everything in it.
class PinDir {
public:
	explicit PinDir(const std::string &tag)
	{
		path_ = "/sys/fs/bpf/xo-difftest-" + std::to_string(getpid()) + "-" + tag;
		std::error_code ec;
		std::filesystem::remove_all(path_, ec);
		ok_ = std::filesystem::create_directories(path_, ec);
	}
	~PinDir()
	{
		std::error_code ec;
		std::filesystem::remove_all(path_, ec);
	}
	bool ok() const { return ok_; }
	const std::string &path() const { return path_; }

private:
	std::string path_;
	bool ok_ = false;
};

// Why the test cannot run here, or empty.
std::string cannot_run()
{
	if (geteuid() != 0)
		return "needs root (BPF_PROG_TEST_RUN, bpffs)";
	struct statfs s;
	if (statfs("/sys/fs/bpf", &s) || s.f_type != BPF_FS_MAGIC)
		return "needs bpffs mounted at /sys/fs/bpf";
	return {};
}

// Counter deltas in the names of docs/guide-vlan.md and docs/guide-geneve.md:
// name -> {packets, bytes}.
using Named = std::map<std::string, std::pair<uint64_t, uint64_t>>;

// One key of a per-CPU counter map (values of PerCpu, each N counters in
// .c), summed over the CPUs.
template <class PerCpu, size_t N>
std::array<xo_counter, N> sum_per_cpu(int fd, uint32_t key, const char *what)
{
	int n = libbpf_num_possible_cpus();
	std::vector<PerCpu> pc(n > 0 ? static_cast<size_t>(n) : 1);
	if (bpf_map_lookup_elem(fd, &key, pc.data()))
		throw std::runtime_error(std::string("read ") + what + " counters");
	std::array<xo_counter, N> raw{};
	for (const auto &x : pc)
		for (size_t r = 0; r < N; r++) {
			raw[r].packets += x.c[r].packets;
			raw[r].bytes += x.c[r].bytes;
		}
	return raw;
}

std::string describe(const Named &n)
{
	std::string s;
	for (const auto &[k, v] : n)
		if (v.first || v.second)
			s += k + ":" + std::to_string(v.first) + "/" + std::to_string(v.second) + "B ";
	return s.empty() ? "(none)" : s;
}

Named expected(const Outcome &o, size_t bytes)
{
	Named n;
	for (const auto &c : o.counted)
		n[c] = {1, bytes};
	return n;
}

// One disagreement, printed whole so it can be replayed by hand.
struct Report {
	int shown = 0;
	uint64_t compared = 0, skipped = 0, mismatches = 0;

	void add(const std::string &prog, uint64_t seed, size_t batch, size_t i, const std::string &cfg,
		 std::span<const uint8_t> in, const std::string &model, const std::string &got)
	{
		mismatches++;
		if (shown++ >= 5)
			return;
		ADD_FAILURE() << "MISMATCH " << prog << " seed=0x" << std::hex << seed << std::dec << " batch=" << batch
			      << " frame=" << i << " (rerun: XO_DIFF_SEED=0x" << std::hex << seed << std::dec
			      << ")\n  config: " << cfg << "\n  frame (" << in.size() << " bytes): " << hex(in)
			      << "\n  model:   " << model << "\n  program: " << got;
	}
};

std::string render(const char *verdict, std::span<const uint8_t> out, const Named &cnt, const std::string &extra = {})
{
	return std::string(verdict) + " counters " + describe(cnt) + extra + (out.empty() ? "" : " out " + hex(out));
}

// ---- VLAN ------------------------------------------------------------------

// The VLAN objects loaded with their maps pinned in a private directory,
// configured through VlanMaps; with @composed, also the composed program's
// two entries with the vlan stage alone, on the same pinned maps, as attach
// loads it where libxdp's dispatcher cannot chain ours.
class VlanRig {
public:
	static std::unique_ptr<VlanRig> make(std::string *why, bool composed = false)
	{
		auto r = std::unique_ptr<VlanRig>(new VlanRig);
		if (!r->dir_.ok()) {
			*why = "cannot create " + r->dir_.path();
			return nullptr;
		}
		LIBBPF_OPTS(bpf_object_open_opts, o, .pin_root_path = r->dir_.path().c_str());
		r->xdp_.reset(xdp_vlan_bpf__open_opts(&o));
		if (!r->xdp_ || xdp_vlan_bpf__load(r->xdp_.get())) {
			*why = "loading xdp_vlan failed";
			return nullptr;
		}
		r->tc_.reset(tc_vlan_test_bpf__open_opts(&o));
		if (!r->tc_ || tc_vlan_test_bpf__load(r->tc_.get())) {
			*why = "loading tc_vlan_test failed";
			return nullptr;
		}
		for (bool frags : {false, true}) {
			if (!composed)
				break;
			auto c = load_composed(r->dir_.path(), XO_STAGE_VLAN, frags);
			if (!c) {
				*why = "loading xdp_offload (vlan stage): " + c.error().msg;
				return nullptr;
			}
			r->composed_[frags] = std::move(*c);
		}
		auto m = VlanMaps::open(r->dir_.path(), "difftest");
		if (!m) {
			*why = "VlanMaps::open: " + m.error().msg;
			return nullptr;
		}
		r->maps_.emplace(std::move(*m));
		return r;
	}
	// Replaces the policy of @d by @p, the way `offload-tool vlan` does.
	void configure(Dir d, const model::VlanPolicy &p)
	{
		VlanMaps &m = *maps_;
		unsigned i = static_cast<unsigned>(d);
		for (auto [from, to] : cur_[i].rewrite)
			must(m.set_rewrite(d, from, 0), "unset rewrite");
		if (cur_[i].allow_on)
			must(m.clear_allowed(d), "clear allow-list");
		xo_vlan_policy v = make_clear_policy();
		if (p.action == model::VlanPolicy::pop)
			v = make_pop_policy(v, p.pop_depth);
		else if (p.action == model::VlanPolicy::push) {
			std::vector<TagSpec> tags;
			for (const auto &t : p.tags)
				tags.push_back(TagSpec{t.tpid, t.vid, t.pcp, t.dei});
			v = make_push_policy(v, tags);
		}
		must(m.set_policy(d, v), "set policy");
		if (p.allow_on)
			must(m.set_allowed(d, {p.allowed.begin(), p.allowed.end()}, true), "allow");
		for (auto [from, to] : p.rewrite)
			must(m.set_rewrite(d, from, to), "rewrite");
		cur_[i] = p;
	}

	// Shown counters of @hook by name: the map's entry of that hook alone
	// (cheaper than VlanMaps::counters(), which reads all three), shown
	// through vlan_stats_of like `vlan stats`.
	Named counters(uint32_t hook) const
	{
		VlanStatSet v = vlan_stats_of(sum_per_cpu<xo_vlan_stats, XO_VLAN_CNT_MAX>(
			bpf_map__fd(xdp_->maps.xo_vlan_stats), hook, "vlan"));
		Named out;
		for (unsigned s = 0; s < kVlanStats; s++)
			out[vlan_counter_name(s)] = {v[s].packets, v[s].bytes};
		return out;
	}

	xdp_vlan_bpf *xdp() const { return xdp_.get(); }
	tc_vlan_test_bpf *tc() const { return tc_.get(); }
	// the composed program's entry (make(composed)), -1 when not loaded
	int composed_fd(bool frags) const { return composed_[frags].prog_fd(); }

private:
	VlanRig() : dir_("vlan") {}
	template <class S> static void must(const S &s, const char *what)
	{
		if (!s)
			throw std::runtime_error(std::string(what) + ": " + s.error().msg);
	}

	PinDir dir_;
	Owned<xdp_vlan_bpf, xdp_vlan_bpf__destroy> xdp_;
	Owned<tc_vlan_test_bpf, tc_vlan_test_bpf__destroy> tc_;
	Composition composed_[2];	// xdp_offload, xdp_offload_mb
	std::optional<VlanMaps> maps_;
	model::VlanPolicy cur_[2];
};

uint16_t pick_vid(Rng &r, const std::vector<uint16_t> &pool)
{
	unsigned k = pick(r, 100);
	if (k < 55)
		return pool[pick(r, static_cast<unsigned>(pool.size()))];
	if (k < 65)
		return 0;	// priority tag
	if (k < 70)
		return 4095;
	return static_cast<uint16_t>(pick(r, 4096));
}

model::VTag random_tag(Rng &r, const std::vector<uint16_t> &pool, bool wire)
{
	model::VTag t;
	unsigned k = pick(r, 100);
	t.tpid = k < 45 ? 0x8100 : k < 90 || !wire ? 0x88a8 : k < 95 ? 0x9100 : static_cast<uint16_t>(r());
	t.vid = wire ? pick_vid(r, pool) : static_cast<uint16_t>(1 + pick(r, 4094));
	if (!wire && chance(r, 60))
		t.vid = pool[pick(r, static_cast<unsigned>(pool.size()))];
	t.pcp = static_cast<uint8_t>(pick(r, 8));
	t.dei = chance(r, 30);
	return t;
}

model::VlanPolicy random_policy(Rng &r, const std::vector<uint16_t> &pool)
{
	model::VlanPolicy p;
	unsigned k = pick(r, 100);
	if (k < 30) {
		p.action = model::VlanPolicy::none;
	} else if (k < 65) {
		p.action = model::VlanPolicy::pop;
		p.pop_depth = 1 + pick(r, 2);
	} else {
		p.action = model::VlanPolicy::push;
		unsigned n = 1 + pick(r, 2);
		for (unsigned i = 0; i < n; i++)
			p.tags.push_back(random_tag(r, pool, false));
	}
	if (chance(r, 40)) {
		p.allow_on = true;
		for (unsigned i = pick(r, 5); i-- > 0;)
			p.allowed.insert(pool[pick(r, static_cast<unsigned>(pool.size()))]);
	}
	if (chance(r, 40))
		for (unsigned i = 1 + pick(r, 3); i-- > 0;) {
			uint16_t from = pool[pick(r, static_cast<unsigned>(pool.size()))];
			uint16_t to = static_cast<uint16_t>(1 + pick(r, 4094));
			if (to != from)
				p.rewrite[from] = to;
		}
	return p;
}

// Cuts and flips: at header boundaries more often than not.
void mutate(Rng &r, Bytes &f, size_t min_len, std::initializer_list<size_t> boundaries)
{
	if (chance(r, 15) && f.size() > min_len) {
		size_t len;
		if (chance(r, 60)) {
			std::vector<size_t> b(boundaries);
			len = b[pick(r, static_cast<unsigned>(b.size()))] + pick(r, 3);
		} else {
			len = min_len + pick(r, static_cast<unsigned>(f.size() - min_len));
		}
		if (len >= min_len && len < f.size())
			f.resize(len);
	}
	if (chance(r, 12))
		for (unsigned n = 1 + pick(r, 3); n-- > 0;) {
			size_t at = pick(r, static_cast<unsigned>(std::min<size_t>(f.size(), 64)));
			f[at] ^= static_cast<uint8_t>(1u << pick(r, 8));
		}
}

Bytes random_vlan_frame(Rng &r, const std::vector<uint16_t> &pool, size_t max_payload)
{
	PacketBuilder b;
	b.eth(kMacB, kMacA);
	unsigned k = pick(r, 100);
	unsigned ntags = k < 20 ? 0 : k < 50 ? 1 : k < 80 ? 2 : k < 92 ? 3 : 4;
	for (unsigned i = 0; i < ntags; i++) {
		model::VTag t = random_tag(r, pool, true);
		b.vlan(t.tpid, t.vid, t.pcp, t.dei);
	}
	size_t pay = chance(r, 90) ? pick(r, 200) : pick(r, static_cast<unsigned>(max_payload + 1));
	k = pick(r, 100);
	if (k < 40)
		b.ipv4(kIpA, kIpB).udp(kPortA, kPortB).payload(pay, static_cast<uint8_t>(r()));
	else if (k < 70)
		b.ipv6(kIp6A, kIp6B).tcp(kPortA, kPortB).payload(pay, static_cast<uint8_t>(r()));
	else if (k < 85)
		b.ethertype(0x0806).payload(28);
	else
		b.ethertype(static_cast<uint16_t>(r())).payload(pay % 64, static_cast<uint8_t>(r()));
	Bytes f = b.build();
	mutate(r, f, kEthHdrLen, {12, 14, 16, 18, 20, 22, 24, 26, 28});
	return f;
}

// xdp_vlan's two entries, tc_vlan, and the composed program's two entries
// with the vlan stage alone.
enum class VlanProg { xdp, xdp_mb, tc, composed, composed_mb };

// test_run builds no skb of an untagged IPv4/IPv6 frame cut short inside its
// IP header (EINVAL): such a frame cannot be run at TC here.
bool tc_refused(std::span<const uint8_t> in)
{
	uint16_t type = model::rd16(in, 12);
	return (type == 0x0800 && in.size() < 14 + 20) || (type == 0x86dd && in.size() < 14 + 40);
}

// Runs @per_seed frames of each seed through @prog against the model.
void run_vlan(VlanProg prog, size_t total, size_t max_payload)
{
	if (auto why = cannot_run(); !why.empty())
		GTEST_SKIP() << why;
	std::string why;
	const bool composed = prog == VlanProg::composed || prog == VlanProg::composed_mb;
	auto rig = VlanRig::make(&why, composed);
	ASSERT_NE(rig, nullptr) << why << "\n" << "(libbpf: see stderr)";
	const char *name = prog == VlanProg::xdp	   ? "xdp_vlan"
			   : prog == VlanProg::xdp_mb	   ? "xdp_vlan_mb"
			   : prog == VlanProg::composed	   ? "xdp_offload(vlan)"
			   : prog == VlanProg::composed_mb ? "xdp_offload_mb(vlan)"
							   : "tc_vlan";
	Report rep;
	auto seedv = seeds();
	size_t per_seed = (total + seedv.size() - 1) / seedv.size();
	auto t0 = std::chrono::steady_clock::now();

	for (uint64_t seed : seedv) {
		std::printf("[ diff ] %s seed=0x%llx frames=%zu\n", name, static_cast<unsigned long long>(seed), per_seed);
		std::fflush(stdout);
		Rng r(seed);
		for (size_t done = 0, batch = 0; done < per_seed && rep.shown <= 5; batch++) {
			std::vector<uint16_t> pool;
			for (int i = 0; i < 6; i++)
				pool.push_back(static_cast<uint16_t>(1 + pick(r, 4094)));
			model::VlanPolicy pol[2] = {random_policy(r, pool), random_policy(r, pool)};
			rig->configure(Dir::ingress, pol[0]);
			rig->configure(Dir::egress, pol[1]);
			std::string cfg = "ingress: " + pol[0].describe() + " | egress: " + pol[1].describe();
			Named before[XO_HOOK_MAX];
			for (uint32_t h = 0; h < XO_HOOK_MAX; h++)
				before[h] = rig->counters(h);

			for (size_t i = 0; i < kBatch && done < per_seed; i++, done++) {
				Bytes in = random_vlan_frame(r, pool, max_payload);
				uint32_t hook = XO_HOOK_XDP;
				if (prog == VlanProg::tc)
					hook = chance(r, 50) ? XO_HOOK_TC_INGRESS : XO_HOOK_TC_EGRESS;
				const model::VlanPolicy &p = pol[hook == XO_HOOK_TC_EGRESS ? 1 : 0];
				Outcome want = model::vlan_model(p, in, hook == XO_HOOK_XDP);

				ProgRun run;
				bool vlan_present = false;
				uint16_t vproto = 0, vtci = 0;
				if (prog == VlanProg::tc) {
					__sk_buff ci{}, co{};
					bpf_program *pr = hook == XO_HOOK_TC_EGRESS ? rig->tc()->progs.tc_vlan_cb_eg
										    : rig->tc()->progs.tc_vlan_cb_in;
					run = prog_run(bpf_program__fd(pr), in, 64, &ci, sizeof(ci), &co, sizeof(co));
					vlan_present = co.cb[0] != 0;
					vproto = ntohs(static_cast<uint16_t>(co.cb[1]));
					vtci = static_cast<uint16_t>(co.cb[2]);
				} else if (composed) {
					run = prog_run(rig->composed_fd(prog == VlanProg::composed_mb), in, 64);
				} else {
					bpf_program *pr = prog == VlanProg::xdp ? rig->xdp()->progs.xdp_vlan
										: rig->xdp()->progs.xdp_vlan_mb;
					run = prog_run(bpf_program__fd(pr), in, 64);
				}
				if (run.err == -EINVAL && prog == VlanProg::tc && tc_refused(in)) {
					rep.skipped++;
					continue;
				}
				if (run.err) {
					rep.add(name, seed, batch, i, cfg, in, "runs", "test_run: " + std::string(strerror(-run.err)));
					continue;
				}
				Named after = rig->counters(hook);
				Named got;
				for (const auto &[k, v] : after)
					if (v != before[hook][k])
						got[k] = {v.first - before[hook][k].first, v.second - before[hook][k].second};
				before[hook] = std::move(after);

				bool pass = prog == VlanProg::tc ? run.retval == TC_ACT_OK : run.retval == XDP_PASS;
				bool drop = prog == VlanProg::tc ? run.retval == TC_ACT_SHOT : run.retval == XDP_DROP;
				Bytes wire = vlan_present ? insert_vlan(run.out, vproto, vtci) : run.out;
				Named exp = expected(want, in.size());
				bool same = want.verdict == Outcome::pass ? pass && wire == want.out : drop;
				same = same && describe(got) == describe(exp);
				rep.compared++;
				if (!same)
					rep.add(std::string(name) + "@" + to_string(static_cast<Hook>(hook)), seed, batch, i, cfg, in,
						render(model::verdict_name(want.verdict),
						       want.verdict == Outcome::pass ? std::span<const uint8_t>(want.out)
										     : std::span<const uint8_t>(),
						       exp),
						render(pass ? "pass" : drop ? "drop" : "other", pass ? std::span<const uint8_t>(wire) : std::span<const uint8_t>(), got,
						       " retval " + std::to_string(run.retval)));
			}
		}
	}
	double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	std::printf("[ diff ] %s: %llu frames compared, %llu not runnable here (skipped), %llu mismatches, %.1f s\n",
		    name, static_cast<unsigned long long>(rep.compared), static_cast<unsigned long long>(rep.skipped),
		    static_cast<unsigned long long>(rep.mismatches), secs);
	EXPECT_EQ(rep.mismatches, 0u);
	EXPECT_GE(rep.compared, std::min<size_t>(total, per_seed * seedv.size()) * 95 / 100);
}

TEST(DiffModel, XdpVlan)
{
	run_vlan(VlanProg::xdp, frames_total(100000), 1400);
}

TEST(DiffModel, TcVlan)
{
	run_vlan(VlanProg::tc, frames_total(100000), 1400);
}

// Multi-buffer: some frames beyond a page, so test_run hands them over in
// several buffers (kernels without frags support in test_run refuse them).
TEST(DiffModel, XdpVlanMultiBuffer)
{
	run_vlan(VlanProg::xdp_mb, frames_total(100000) / 10, 9000);
}

// The composed program (xdp_offload) with the vlan stage alone: the same
// model, the same maps, both entries.
TEST(DiffModel, ComposedVlan)
{
	run_vlan(VlanProg::composed, frames_total(100000), 1400);
}

TEST(DiffModel, ComposedVlanMultiBuffer)
{
	run_vlan(VlanProg::composed_mb, frames_total(100000) / 10, 9000);
}

// ---- Geneve ----------------------------------------------------------------

// xdp_geneve (or xdp_geneve_mb: one entry per load, the CPUMAP is tied to
// the first program that uses it) with its maps pinned in a private
// directory, configured through GeneveMaps; with @composed, the composed
// program's entry of the same kind with the geneve stage alone runs
// instead, on the same pinned maps (its load renews the CPUMAP, as attach
// does, before GeneveMaps opens the pins).
class GeneveRig {
public:
	static std::unique_ptr<GeneveRig> make(bool frags, std::string *why, bool composed = false)
	{
		auto r = std::unique_ptr<GeneveRig>(new GeneveRig(frags));
		if (!r->dir_.ok()) {
			*why = "cannot create " + r->dir_.path();
			return nullptr;
		}
		LIBBPF_OPTS(bpf_object_open_opts, o, .pin_root_path = r->dir_.path().c_str());
		r->s_.reset(xdp_geneve_bpf__open_opts(&o));
		if (!r->s_) {
			*why = "opening xdp_geneve failed";
			return nullptr;
		}
		bpf_program__set_autoload(frags ? r->s_->progs.xdp_geneve : r->s_->progs.xdp_geneve_mb, false);
		if (int err = xdp_geneve_bpf__load(r->s_.get())) {
			*why = std::string("loading xdp_geneve failed: ") + std::strerror(-err);
			return nullptr;
		}
		if (composed) {
			auto c = load_composed(r->dir_.path(), XO_STAGE_GENEVE, frags);
			if (!c) {
				*why = "loading xdp_offload (geneve stage): " + c.error().msg;
				return nullptr;
			}
			r->composed_ = std::move(*c);
		}
		auto m = GeneveMaps::open(r->dir_.path(), "difftest", false);
		if (!m) {
			*why = "GeneveMaps::open: " + m.error().msg;
			return nullptr;
		}
		r->maps_.emplace(std::move(*m));
		return r;
	}

	// Replaces the whole configuration by @c, as a user of offload-tool
	// geneve would: ports, rules, default rule, known classes, csum.
	void configure(const model::GeneveConfig &c)
	{
		GeneveMaps &m = *maps_;
		for (uint16_t p : cur_.ports)
			must(m.port_del(p), "port del");
		for (const auto &[vni, rule] : cur_.rules)
			must(m.rule_del(vni), "rule del");
		for (uint16_t cls : cur_.known)
			must(m.option_known(cls, false), "option unknown");
		for (uint16_t p : c.ports)
			must(m.port_add(p), "port add");
		for (const auto &[vni, rule] : c.rules)
			must(m.rule_set({vni, rule.action, rule.queues}), "rule add");
		must(m.rule_set({XO_GNV_VNI_DEFAULT, c.dflt.action, c.dflt.queues}), "default rule");
		for (uint16_t cls : c.known)
			must(m.option_known(cls, true), "option known");
		must(m.set_verify_csum(c.csum), "csum");
		cur_ = c;
		auto rs = m.rules();
		must(rs, "rules");
		slots_.clear();
		for (const auto &r : *rs)
			slots_[r.vni] = r.slot;
	}

	struct Snapshot {
		Named total;
		std::map<uint32_t, Named> rows;	// per VNI rule (XO_GNV_VNI_DEFAULT: default)
	};
	Snapshot counters() const
	{
		auto c = maps_->counters();
		if (!c)
			throw std::runtime_error("geneve counters: " + c.error().msg);
		auto named = [](const GeneveCounterSet &s) {
			Named n;
			for (unsigned i = 0; i < kGeneveStats; i++)
				n[geneve_counter_name(i)] = {s[i].packets, s[i].bytes};
			return n;
		};
		Snapshot snap{named(c->total), {}};
		for (const auto &[vni, s] : c->per_vni)
			snap.rows[vni] = named(s);
		return snap;
	}

	ProgRun run(const Bytes &in) const
	{
		if (composed_.skel())
			return prog_run(composed_.prog_fd(), in, 64);
		return prog_run(bpf_program__fd(frags_ ? s_->progs.xdp_geneve_mb : s_->progs.xdp_geneve), in, 64);
	}

	// Per frame, cheaper than counters(): the total, or one VNI's row,
	// read from the map and shown through geneve_stats_of. The slots are
	// those GeneveMaps gave the rules (rules(), read after configure()).
	Named total() const { return read(bpf_map__fd(s_->maps.xo_gnv_stats), 0); }
	Named row(uint32_t vni) const
	{
		auto it = slots_.find(vni);
		return read(bpf_map__fd(s_->maps.xo_gnv_vstats), it == slots_.end() ? XO_GNV_SLOT_DEFAULT : it->second);
	}

private:
	explicit GeneveRig(bool frags) : dir_(frags ? "geneve-mb" : "geneve"), frags_(frags) {}
	template <class S> static void must(const S &s, const char *what)
	{
		if (!s)
			throw std::runtime_error(std::string(what) + ": " + s.error().msg);
	}

	Named read(int fd, uint32_t key) const
	{
		GeneveCounterSet g = geneve_stats_of(sum_per_cpu<xo_gnv_stats, XO_GNV_CNT_MAX>(fd, key, "geneve"));
		Named out;
		for (unsigned i = 0; i < kGeneveStats; i++)
			out[geneve_counter_name(i)] = {g[i].packets, g[i].bytes};
		return out;
	}

	PinDir dir_;
	std::map<uint32_t, uint32_t> slots_;
	bool frags_;
	Owned<xdp_geneve_bpf, xdp_geneve_bpf__destroy> s_;
	Composition composed_;	// make(composed): xdp_offload[_mb] with the geneve stage
	std::optional<GeneveMaps> maps_;
	model::GeneveConfig cur_;
};

Named delta(const Named &a, const Named &b)
{
	Named d;
	for (const auto &[k, v] : a) {
		auto it = b.find(k);
		std::pair<uint64_t, uint64_t> o = it == b.end() ? std::pair<uint64_t, uint64_t>{0, 0} : it->second;
		if (v != o)
			d[k] = {v.first - o.first, v.second - o.second};
	}
	return d;
}

constexpr uint16_t kClassPool[] = {0x0000, 0x0102, 0x0103, 0x0abc, 0x0101, 0xffff, 0x8000, 0x0001};

model::GeneveConfig random_geneve_config(Rng &r, const std::vector<uint32_t> &vnis)
{
	model::GeneveConfig c;
	if (chance(r, 85))
		c.ports.insert(kPortGeneve);
	for (unsigned i = pick(r, 3); i-- > 0;)
		c.ports.insert(chance(r, 50) ? 4789 : static_cast<uint16_t>(1 + pick(r, 65535)));
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned cpus = online > 0 ? static_cast<unsigned>(std::min<long>(online, 4)) : 1;
	auto rule = [&] {
		model::GeneveConfig::Rule x;
		x.action = pick(r, XO_GNV_ACT_MAX);
		x.queues = x.action == XO_GNV_ACT_CPU ? 1 + pick(r, cpus) : x.action == XO_GNV_ACT_XSK ? 1 + pick(r, 8) : 1;
		return x;
	};
	for (uint32_t v : vnis)
		if (chance(r, 75))
			c.rules[v] = rule();
	c.dflt = chance(r, 50) ? model::GeneveConfig::Rule{} : rule();
	for (uint16_t cls : kClassPool)
		if (chance(r, 40))
			c.known.insert(cls);
	c.csum = chance(r, 50);
	return c;
}

Bytes random_inner(Rng &r, uint16_t proto, size_t max_payload)
{
	size_t pay = chance(r, 90) ? pick(r, 120) : pick(r, static_cast<unsigned>(max_payload + 1));
	bool eth = proto == kEthTeb;
	if (eth && chance(r, 5))
		return Bytes(pick(r, 14), 0x11);	// shorter than an Ethernet header
	if (chance(r, 3))
		return {};
	bool v4 = proto == kEthIPv4 || (proto != kEthIPv6 && chance(r, 60));
	if (v4)
		return inner_udp4(kIpA, kIpC, static_cast<uint16_t>(r()), kPortB, pay, static_cast<uint8_t>(r()), eth);
	return inner_tcp6(kIp6A, kIp6B, static_cast<uint16_t>(r()), kPortB, pay, eth);
}

struct GeneveFrame {
	Bytes f;
	size_t udp = 0;	// offset of the outer UDP header (0: none)
};

GeneveFrame random_geneve_frame(Rng &r, const model::GeneveConfig &c, const std::vector<uint32_t> &vnis,
				size_t max_payload)
{
	// Geneve header and options
	uint16_t proto;
	unsigned k = pick(r, 100);
	proto = k < 60 ? kEthTeb : k < 75 ? kEthIPv4 : k < 90 ? kEthIPv6 : k < 95 ? 0x88b5 : static_cast<uint16_t>(r());
	uint32_t vni = chance(r, 75) ? vnis[pick(r, static_cast<unsigned>(vnis.size()))] : pick(r, 1u << 24);
	std::vector<GeneveOpt> opts;
	unsigned nopt = chance(r, 70) ? pick(r, 5) : chance(r, 70) ? pick(r, 17) : pick(r, 64);
	unsigned words = 0;
	for (unsigned i = 0; i < nopt; i++) {
		GeneveOpt o;
		o.cls = chance(r, 85) ? kClassPool[pick(r, 8)] : static_cast<uint16_t>(r());
		o.type = static_cast<uint8_t>(pick(r, 256));
		if (chance(r, 50))
			o.type &= 0x7f;
		unsigned dw = chance(r, 70) ? pick(r, 3) : pick(r, 32);
		if (words + 1 + dw > 63)
			break;
		o.data.assign(4 * dw, static_cast<uint8_t>(r()));
		words += 1 + dw;
		opts.push_back(std::move(o));
	}
	uint8_t flags = 0;
	if (chance(r, 10))
		flags |= kGnvOam;
	if (chance(r, 30))
		flags |= kGnvCrit;
	if (chance(r, 5))
		flags |= static_cast<uint8_t>(pick(r, 64));	// reserved bits
	uint8_t version = chance(r, 96) ? 0 : static_cast<uint8_t>(1 + pick(r, 3));
	int optlen = chance(r, 5) ? static_cast<int>(pick(r, 64)) : -1;
	Bytes g = geneve(vni, proto, random_inner(r, proto, max_payload), opts, flags, version, optlen);

	// outer headers
	uint16_t dport = !c.ports.empty() && chance(r, 85) ? *std::next(c.ports.begin(), pick(r, static_cast<unsigned>(c.ports.size())))
							   : static_cast<uint16_t>(r());
	PacketBuilder b;
	b.eth(kMacB, kMacA);
	k = pick(r, 100);
	unsigned ntags = k < 60 ? 0 : k < 80 ? 1 : k < 95 ? 2 : 3;
	for (unsigned i = 0; i < ntags; i++)
		b.vlan(chance(r, 50) ? kTpid8021Q : kTpid8021AD, static_cast<uint16_t>(pick(r, 4096)));
	k = pick(r, 100);
	bool v6 = k >= 60;
	if (k < 97 && !v6) {
		b.ipv4(kIpA, kIpB, 64, static_cast<uint16_t>(r()));
		switch (pick(r, 10)) {
		case 0:
			b.ip_options({1, 1, 1, 0});
			break;
		case 1:
			b.ip_options({7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0});
			break;
		case 2:
			b.ip_options({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
				      1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0});
			break;
		default:
			break;
		}
	} else if (v6) {
		b.ipv6(kIp6A, kIp6B);
		if (chance(r, 5))
			b.ipv6_ext(0, {17, 0, 0, 0, 0, 0});
	} else {
		b.ethertype(0x0806).payload(28);
		return {b.build(), 0};
	}
	if (chance(r, 4))
		b.tcp(static_cast<uint16_t>(r()), dport);
	else
		b.udp(static_cast<uint16_t>(r()), dport);
	b.payload(g);
	Bytes f = b.build();
	size_t l3 = 14 + 4 * ntags;
	size_t udp = v6 ? l3 + 40 : l3 + 4u * (f[l3] & 0x0f);
	if (v6 && f[l3 + 6] != 17)
		udp = 0;

	// mutations that keep the frame whole
	if (!v6 && chance(r, 5)) {	// a fragment: MF or an offset
		uint16_t fo = chance(r, 50) ? 0x2000 : static_cast<uint16_t>(1 + pick(r, 0x1fff));
		detail::set16(f, l3 + 6, fo);
	}
	if (!v6 && chance(r, 2))
		f[l3] = static_cast<uint8_t>(chance(r, 50) ? 0x44 : 0x65);	// IHL < 5, version 6
	if (udp && f.size() >= udp + 8) {
		if (chance(r, 6))
			detail::set16(f, udp + 6, 0);	// no checksum
		else if (chance(r, 6))
			f[udp + 6] ^= static_cast<uint8_t>(1 + pick(r, 255));
		if (chance(r, 5)) {	// the UDP length lies
			int d = static_cast<int>(pick(r, 40)) - 20;
			detail::set16(f, udp + 4, static_cast<uint16_t>(model::rd16(f, udp + 4) + d));
		}
		if (chance(r, 4))	// padding after the datagram
			f.insert(f.end(), pick(r, 20) + 1, 0xee);
	}
	size_t g0 = udp ? udp + 8 : l3 + 20;
	mutate(r, f, kEthHdrLen, {l3, l3 + 20, udp, udp + 8, g0 + 4, g0 + 8, g0 + 12, g0 + 16});
	return {std::move(f), udp};
}

void run_geneve(bool frags, size_t total, size_t max_payload, bool composed = false)
{
	if (auto why = cannot_run(); !why.empty())
		GTEST_SKIP() << why;
	std::string why;
	auto rig = GeneveRig::make(frags, &why, composed);
	ASSERT_NE(rig, nullptr) << why;
	const char *name = composed ? (frags ? "xdp_offload_mb(geneve)" : "xdp_offload(geneve)")
				    : (frags ? "xdp_geneve_mb" : "xdp_geneve");
	model::GeneveSemantics sem;
	if (new_geneve()) {
		sem.other_proto_by_rule = true;
		sem.opt_walk_limit = kNewOptWalkLimit;
		sem.crit_beyond_walk = false;
	}
	std::printf("[ diff ] %s: Geneve semantics of harden-datapath %s\n", name,
		    new_geneve() ? "on (all frame classes compared)" : "off (their frame classes skipped)");
	Report rep;
	auto seedv = seeds();
	size_t per_seed = (total + seedv.size() - 1) / seedv.size();
	auto t0 = std::chrono::steady_clock::now();

	for (uint64_t seed : seedv) {
		std::printf("[ diff ] %s seed=0x%llx frames=%zu\n", name, static_cast<unsigned long long>(seed), per_seed);
		std::fflush(stdout);
		Rng r(seed);
		for (size_t done = 0, batch = 0; done < per_seed && rep.shown <= 5; batch++) {
			std::vector<uint32_t> vnis;
			for (int i = 0; i < 6; i++)
				vnis.push_back(chance(r, 30) ? pick(r, 4) : pick(r, 1u << 24));
			model::GeneveConfig cfg = random_geneve_config(r, vnis);
			rig->configure(cfg);
			std::string cfgs = cfg.describe();
			// per frame: the total and the row the model names; per
			// batch: every row through GeneveMaps::counters(), so a
			// frame counted in a row the model did not name shows too
			auto snap = rig->counters();
			Named total = snap.total;
			std::map<uint32_t, Named> rows = snap.rows, rows_want = snap.rows;

			for (size_t i = 0; i < kBatch && done < per_seed; i++, done++) {
				GeneveFrame gf = random_geneve_frame(r, cfg, vnis, max_payload);
				const Bytes &in = gf.f;
				Outcome want = model::geneve_model(cfg, sem, in);
				if (!sem.other_proto_by_rule && want.changed_semantics) {
					// not compared: whatever it counts, anywhere, is taken as is
					auto b0 = rig->counters();
					(void)rig->run(in);
					auto b1 = rig->counters();
					for (const auto &[vni, row] : b1.rows)
						for (const auto &[k, d] : delta(row, b0.rows[vni])) {
							rows_want[vni][k].first += d.first;
							rows_want[vni][k].second += d.second;
						}
					rows = b1.rows;
					total = b1.total;
					rep.skipped++;
					continue;
				}
				ProgRun run = rig->run(in);
				if (run.err) {
					rep.add(name, seed, batch, i, cfgs, in, "runs", "test_run: " + std::string(strerror(-run.err)));
					continue;
				}
				Named after = rig->total();
				Named got = delta(after, total);
				total = std::move(after);
				Named exp = expected(want, in.size());
				std::string rows_got, rows_exp;
				if (want.vni_row) {
					uint32_t v = *want.vni_row;
					Named ra = rig->row(v);
					rows_got = "vni " + std::to_string(v) + " {" + describe(delta(ra, rows[v])) + "}";
					rows[v] = std::move(ra);
					rows_exp = "vni " + std::to_string(v) + " {" + describe(exp) + "}";
				}
				if (want.vni_row)
					for (const auto &c : want.counted) {
						auto &x = rows_want[*want.vni_row][c];
						x.first++;
						x.second += in.size();
					}
				Outcome::Verdict v = run.retval == XDP_PASS ? Outcome::pass
						     : run.retval == XDP_DROP ? Outcome::drop
						     : run.retval == XDP_REDIRECT ? Outcome::redirect
										  : static_cast<Outcome::Verdict>(99);
				bool same = v == want.verdict && describe(got) == describe(exp) && rows_got == rows_exp;
				if (same && v != Outcome::drop)
					same = run.out == want.out;
				rep.compared++;
				if (!same)
					rep.add(name, seed, batch, i, cfgs, in,
						render(model::verdict_name(want.verdict),
						       want.verdict == Outcome::drop ? std::span<const uint8_t>()
										     : std::span<const uint8_t>(want.out),
						       exp, " " + rows_exp),
						render(v <= Outcome::redirect ? model::verdict_name(v) : "other",
						       v == Outcome::drop ? std::span<const uint8_t>() : std::span<const uint8_t>(run.out),
						       got, " " + rows_got + " retval " + std::to_string(run.retval)));
			}
			auto end = rig->counters();
			for (const auto &[vni, row] : end.rows)
				if (describe(row) != describe(rows_want[vni]))
					rep.add(name, seed, batch, kBatch, cfgs, {}, "vni " + std::to_string(vni) + " row " +
						describe(rows_want[vni]) + " at the end of the batch",
						describe(row) + " (a frame counted in a row the model did not name)");
		}
	}
	double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	std::printf("[ diff ] %s: %llu frames compared, %llu skipped (semantics switch off), %llu mismatches, %.1f s\n",
		    name, static_cast<unsigned long long>(rep.compared), static_cast<unsigned long long>(rep.skipped),
		    static_cast<unsigned long long>(rep.mismatches), secs);
	EXPECT_EQ(rep.mismatches, 0u);
	EXPECT_GE(rep.compared + rep.skipped, std::min<size_t>(total, per_seed * seedv.size()) * 99 / 100);
}

TEST(DiffModel, XdpGeneve)
{
	run_geneve(false, frames_total(100000), 1400);
}

TEST(DiffModel, XdpGeneveMultiBuffer)
{
	run_geneve(true, frames_total(100000) / 10, 9000);
}

// The composed program (xdp_offload) with the geneve stage alone.
TEST(DiffModel, ComposedGeneve)
{
	run_geneve(false, frames_total(100000), 1400, true);
}

TEST(DiffModel, ComposedGeneveMultiBuffer)
{
	run_geneve(true, frames_total(100000) / 10, 9000, true);
}

} // namespace
} // namespace xoffload::test
