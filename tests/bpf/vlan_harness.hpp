// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Runs xdp_vlan and tc_vlan through BPF_PROG_TEST_RUN on crafted frames:
// loads the test skeletons once (never pinned), writes policies straight
// into the maps and reads the per-CPU counters back, summed.
#pragma once

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "packet_builder.hpp"
#include "prog_run.hpp"
#include "tc_vlan_test.skel.h"
#include "xdp_vlan_test.skel.h"
#include "xoffload/core/abi_check.hpp"
#include "xoffload/core/hook.hpp"
#include "xoffload/core/owned.hpp"

namespace xoffload::test {

// One tag of a push policy, in the words of the CLI.
struct Tag {
	uint16_t tpid = kTpid8021Q;
	uint16_t vid = 0;
	uint8_t pcp = 0;
	bool dei = false;
};

// Same encoding as TagSpec::to_abi (user/src/core/vlan.cpp): network order.
inline xo_vlan_tag to_abi(const Tag &t)
{
	return xo_vlan_tag{htons(t.tpid), htons(vlan_tci(t.vid, t.pcp, t.dei))};
}

// A direction's policy and its VID table, as the maps hold them.
struct Policy {
	xo_vlan_policy v{XO_ABI_VERSION, XO_VLAN_ACT_NONE, 0, 0, 0, {}, {}, {}};
	std::vector<std::pair<uint16_t, xo_vid_entry>> vids;

	static Policy none() { return {}; }
	static Policy pop(uint8_t depth)
	{
		Policy p;
		p.v.action = XO_VLAN_ACT_POP;
		p.v.pop_depth = depth;
		return p;
	}
	static Policy push(std::initializer_list<Tag> tags)
	{
		Policy p;
		p.v.action = XO_VLAN_ACT_PUSH;
		for (const Tag &t : tags)
			if (p.v.push_count < XO_VLAN_MAX_DEPTH)
				p.v.push[p.v.push_count++] = to_abi(t);
		return p;
	}
	Policy &allow(std::initializer_list<uint16_t> list)
	{
		v.flags |= XO_VLAN_F_ALLOW;
		for (uint16_t vid : list)
			entry(vid).flags |= XO_VID_ALLOWED;
		return *this;
	}
	Policy &rewrite(uint16_t from, uint16_t to)
	{
		v.flags |= XO_VLAN_F_REWRITE;
		entry(from).rewrite_vid = to;
		return *this;
	}

private:
	xo_vid_entry &entry(uint16_t vid)
	{
		for (auto &[k, e] : vids)
			if (k == vid)
				return e;
		vids.push_back({vid, xo_vid_entry{}});
		return vids.back().second;
	}
};

// Would change or drop every frame: written into the direction a run must
// not read, so reading the wrong one cannot go unnoticed.
inline Policy poison_policy()
{
	return Policy::push({{kTpid8021AD, 4000, 7, true}, {kTpid8021Q, 4001, 7, true}}).allow({});
}

inline const char *reason_label(uint32_t r)
{
	static const char *const names[XO_VLAN_CNT_MAX] = {
		"passed", "popped", "pushed", "rewritten", "rewritten+pushed", "dropped-malformed",
		"dropped-not-allowed", "dropped-no-headroom", "dropped-too-deep", "dropped-tag-in-metadata",
	};
	return r < XO_VLAN_CNT_MAX ? names[r] : "?";
}

enum class Verdict { pass, drop };

// What one BPF_PROG_TEST_RUN gave back.
struct RunResult {
	int err = 0;		// 0, or the negative errno of bpf_prog_test_run_opts
	uint32_t retval = 0;
	Bytes out;		// data_out; for XDP with metadata, the frame only
	Bytes meta;		// XDP metadata returned in front of the frame
	// TC only, from skb->cb[] as the wrapper left it
	bool cb_valid = false;
	bool vlan_present = false;
	uint16_t vlan_proto = 0;	// host order
	uint16_t vlan_tci = 0;

	// The frame as it would leave on the wire: a metadata tag goes back
	// right after the MACs.
	Bytes wire() const
	{
		return vlan_present ? insert_vlan(out, vlan_proto, vlan_tci) : out;
	}
	std::optional<Verdict> verdict(Hook h) const
	{
		if (h == Hook::xdp) {
			if (retval == XDP_PASS)
				return Verdict::pass;
			if (retval == XDP_DROP)
				return Verdict::drop;
		} else {
			if (retval == TC_ACT_OK)
				return Verdict::pass;
			if (retval == TC_ACT_SHOT)
				return Verdict::drop;
		}
		return std::nullopt;
	}
};

// Counters of every hook and reason, summed over CPUs.
struct Counters {
	std::array<xo_counter, size_t{XO_HOOK_MAX} * XO_VLAN_CNT_MAX> v{};

	const xo_counter &at(Hook h, uint32_t reason) const
	{
		return v[static_cast<uint32_t>(h) * XO_VLAN_CNT_MAX + reason];
	}
	Counters operator-(const Counters &o) const
	{
		Counters d;
		for (size_t i = 0; i < v.size(); i++)
			d.v[i] = {v[i].packets - o.v[i].packets, v[i].bytes - o.v[i].bytes};
		return d;
	}
};

// "xdp dropped-malformed: 1 pkts 17 bytes" per non-zero counter.
inline std::string describe(const Counters &c)
{
	std::string s;
	for (uint32_t h = 0; h < XO_HOOK_MAX; h++)
		for (uint32_t r = 0; r < XO_VLAN_CNT_MAX; r++) {
			const xo_counter &x = c.at(static_cast<Hook>(h), r);
			if (x.packets || x.bytes)
				s += std::string(to_string(static_cast<Hook>(h))) + " " +
				     reason_label(r) + ": " + std::to_string(x.packets) +
				     " pkts " + std::to_string(x.bytes) + " bytes\n";
		}
	return s.empty() ? "(none)\n" : s;
}

// In an unnamed namespace: its skeleton members' deleters are the
// skeletons' static __destroy functions (one TU includes this).
namespace {

// Both test skeletons, loaded once per process. The TC object reuses the
// XDP object's maps, as the two share them through pinning in production.
class VlanEnv {
public:
	// The environment, or nullptr with *why set (and *eperm when the
	// kernel refused for lack of privilege).
	static VlanEnv *get(std::string *why, bool *eperm)
	{
		static std::string err;
		static bool perm = false;
		static std::unique_ptr<VlanEnv> env = [] {
			auto e = std::unique_ptr<VlanEnv>(new VlanEnv);
			int ret = e->load();
			if (ret) {
				perm = ret == -EPERM;
				err = "loading the test skeletons failed: " +
				      std::string(std::strerror(-ret)) + "\n" + log();
				e.reset();
			}
			return e;
		}();
		*why = err;
		*eperm = perm;
		return env.get();
	}

	xdp_vlan_test_bpf *xdp() const { return xdp_.get(); }
	tc_vlan_test_bpf *tc() const { return tc_.get(); }

	// Writes @p as the policy of @dir, replacing its whole VID table, the
	// way libxoffload switches: into the inactive bank, then `active`
	// flips (so consecutive rows run on both banks); @raw writes p.v as it
	// is, op[] included (a writer that skips xo_vlan_policy_compile).
	void set_policy(uint32_t dir, const Policy &p, bool raw = false)
	{
		int cfg = bpf_map__fd(xdp_->maps.xo_vlan_cfg);
		int vid = bpf_map__fd(xdp_->maps.xo_vlan_vid);
		xo_vid_entry zero{};
		xo_vlan_banks b{};

		check(bpf_map_lookup_elem(cfg, &dir, &b), "read banks");
		uint32_t next = (b.active & 1) ^ 1;
		auto &touched = touched_[next][dir];
		for (uint16_t k : touched) {
			uint32_t key = xo_vid_key(next, dir, k);
			check(bpf_map_update_elem(vid, &key, &zero, BPF_ANY), "clear vid");
		}
		touched.clear();
		for (const auto &[k, e] : p.vids) {
			uint32_t key = xo_vid_key(next, dir, k);
			check(bpf_map_update_elem(vid, &key, &e, BPF_ANY), "set vid");
			touched.push_back(k);
		}
		xo_vlan_policy v = p.v;	// as libxoffload writes it: op[] compiled
		if (!raw)
			xo_vlan_policy_compile(&v);
		v.bank = static_cast<uint8_t>(next);
		b.bank[next] = v;
		check(bpf_map_update_elem(cfg, &dir, &b, BPF_ANY), "set policy");
		b.active = next;
		check(bpf_map_update_elem(cfg, &dir, &b, BPF_ANY), "flip bank");
	}

	// Policy @p at @hook's direction, poison in the other one.
	void arm(Hook hook, const Policy &p)
	{
		uint32_t dir = hook == Hook::tc_egress ? XO_DIR_EGRESS : XO_DIR_INGRESS;
		set_policy(dir, p);
		set_policy(dir ^ 1, poison_policy());
	}

	Counters counters() const
	{
		Counters c;
		int fd = bpf_map__fd(xdp_->maps.xo_vlan_stats);
		int ncpu = libbpf_num_possible_cpus();
		std::vector<xo_vlan_stats> percpu(ncpu > 0 ? ncpu : 1);

		for (uint32_t hook = 0; hook < XO_HOOK_MAX; hook++) {
			check(bpf_map_lookup_elem(fd, &hook, percpu.data()), "read stats");
			for (const xo_vlan_stats &x : percpu)
				for (uint32_t r = 0; r < XO_VLAN_CNT_MAX; r++) {
					c.v[hook * XO_VLAN_CNT_MAX + r].packets += x.c[r].packets;
					c.v[hook * XO_VLAN_CNT_MAX + r].bytes += x.c[r].bytes;
				}
		}
		return c;
	}

	// XDP run of @prog; @meta_len bytes of @meta_fill go in front as metadata.
	RunResult run_xdp(bpf_program *prog, const Bytes &in, uint32_t meta_len = 0,
			  uint8_t meta_fill = 0xa5) const
	{
		RunResult r;
		Bytes data(meta_len, meta_fill);
		data.insert(data.end(), in.begin(), in.end());
		xdp_md ctx{};
		ctx.data = meta_len;
		ctx.data_end = static_cast<uint32_t>(data.size());
		ProgRun p = meta_len ? prog_run(bpf_program__fd(prog), data, 1024, &ctx, sizeof(ctx))
				     : prog_run(bpf_program__fd(prog), data);
		r.err = p.err;
		if (p.err)
			return r;
		r.retval = p.retval;
		size_t m = std::min<size_t>(meta_len, p.out.size());
		r.meta.assign(p.out.begin(), p.out.begin() + m);
		r.out.assign(p.out.begin() + m, p.out.end());
		return r;
	}

	RunResult run_xdp(const Bytes &in) const { return run_xdp(xdp_->progs.xdp_vlan, in); }

	// TC run through the cb-copying wrapper of @hook.
	RunResult run_tc(Hook hook, const Bytes &in) const
	{
		RunResult r;
		bpf_program *prog = hook == Hook::tc_egress ? tc_->progs.tc_vlan_cb_eg
							    : tc_->progs.tc_vlan_cb_in;
		__sk_buff ctx_in{}, ctx_out{};
		ProgRun p = prog_run(bpf_program__fd(prog), in, 1024, &ctx_in, sizeof(ctx_in), &ctx_out, sizeof(ctx_out));
		r.err = p.err;
		if (p.err)
			return r;
		r.retval = p.retval;
		r.out = std::move(p.out);
		r.cb_valid = ctx_out.cb[3] == tc_->rodata->cb_magic;
		r.vlan_present = ctx_out.cb[0] != 0;
		r.vlan_proto = ntohs(static_cast<uint16_t>(ctx_out.cb[1]));
		r.vlan_tci = static_cast<uint16_t>(ctx_out.cb[2]);
		return r;
	}

	RunResult run(Hook hook, const Bytes &in) const
	{
		return hook == Hook::xdp ? run_xdp(in) : run_tc(hook, in);
	}

	// Everything libbpf warned about, for failure messages.
	static std::string &log()
	{
		static std::string s;
		return s;
	}

private:
	VlanEnv() = default;

	static int print(enum libbpf_print_level level, const char *fmt, va_list ap)
	{
		va_list aq;
		if (level == LIBBPF_DEBUG)
			return 0;
		va_copy(aq, ap);
		int n = vsnprintf(nullptr, 0, fmt, aq);
		va_end(aq);
		if (n > 0) {
			std::string buf(static_cast<size_t>(n) + 1, '\0');
			vsnprintf(buf.data(), buf.size(), fmt, ap);
			buf.resize(static_cast<size_t>(n));
			log() += buf;
		}
		return n;
	}

	// Tests never touch /sys/fs/bpf: pinning is switched off on every map.
	static int unpin(bpf_object *obj)
	{
		bpf_map *m;
		bpf_object__for_each_map(m, obj)
		{
			int err = bpf_map__set_pin_path(m, nullptr);
			if (err)
				return err;
		}
		return 0;
	}

	int load()
	{
		int err;

		libbpf_set_print(print);
		xdp_.reset(xdp_vlan_test_bpf__open());
		if (!xdp_)
			return -errno;
		if ((err = unpin(xdp_->obj)) || (err = xdp_vlan_test_bpf__load(xdp_.get())))
			return err;
		tc_.reset(tc_vlan_test_bpf__open());
		if (!tc_)
			return -errno;
		if ((err = unpin(tc_->obj)))
			return err;
		if ((err = bpf_map__reuse_fd(tc_->maps.xo_vlan_cfg,
					     bpf_map__fd(xdp_->maps.xo_vlan_cfg))) ||
		    (err = bpf_map__reuse_fd(tc_->maps.xo_vlan_vid,
					     bpf_map__fd(xdp_->maps.xo_vlan_vid))) ||
		    (err = bpf_map__reuse_fd(tc_->maps.xo_vlan_stats,
					     bpf_map__fd(xdp_->maps.xo_vlan_stats))))
			return err;
		return tc_vlan_test_bpf__load(tc_.get());
	}

	static void check(int err, const char *what)
	{
		if (err)
			throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
	}

	// declaration order: tc_ (sharing xdp_'s maps) is destroyed first
	Owned<xdp_vlan_test_bpf, xdp_vlan_test_bpf__destroy> xdp_;
	Owned<tc_vlan_test_bpf, tc_vlan_test_bpf__destroy> tc_;
	std::vector<uint16_t> touched_[XO_VLAN_BANKS][XO_DIR_MAX];
};

} // namespace

} // namespace xoffload::test
