// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// xdp_geneve under BPF_PROG_TEST_RUN: a table of outer/inner shapes, each
// with its expected verdict, output bytes and counters (total and per VNI),
// plus every truncation of a tagged frame with options.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <thread>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "geneve_frames.hpp"
#include "prog_run.hpp"
#include "ref_model.hpp"
#include "xdp_geneve.skel.h"
#include "xoffload/core/abi_check.hpp"
#include "xoffload/core/netdev.hpp"
#include "xoffload/core/owned.hpp"
#include "xoffload/xsk/xsk.hpp"

namespace xoffload::test {
namespace {

constexpr uint32_t kVniPass = 100, kVniDecap = 200, kVniDrop = 300, kVniXsk = 400, kVniCpu = 500;
constexpr uint32_t kVniUnknown = 777;
constexpr uint16_t kClassKnown = 0x0102, kClassKnown2 = 0x0103, kClassKnown3 = 0x0104, kClassUnknown = 0x0abc;

using CounterSet = std::array<xo_counter, XO_GNV_CNT_MAX>;

const char *reason_label(unsigned r)
{
	static const char *const n[XO_GNV_CNT_MAX] = {"not-geneve", "passed", "dropped-rule",
						      "dropped-malformed", "dropped-crit-opt", "bad-csum",
						      "decapped", "redirected", "no-target", "decap-failed",
						      "dropped-cannot-decap", "dropped-options-unexamined"};
	return r < XO_GNV_CNT_MAX ? n[r] : "?";
}

std::string describe(const CounterSet &c)
{
	std::string s;
	for (unsigned r = 0; r < XO_GNV_CNT_MAX; r++)
		if (c[r].packets || c[r].bytes)
			s += std::string(reason_label(r)) + ": " + std::to_string(c[r].packets) + " pkts " +
			     std::to_string(c[r].bytes) + " bytes\n";
	return s.empty() ? "(none)\n" : s;
}

CounterSet minus(const CounterSet &a, const CounterSet &b)
{
	CounterSet d{};
	for (unsigned r = 0; r < XO_GNV_CNT_MAX; r++)
		d[r] = {a[r].packets - b[r].packets, a[r].bytes - b[r].bytes};
	return d;
}

// The real xdp_geneve object, loaded once, never pinned.
class GeneveEnv {
public:
	static GeneveEnv *get(std::string *why)
	{
		static std::string err;
		static std::unique_ptr<GeneveEnv> env = [] {
			auto e = std::unique_ptr<GeneveEnv>(new GeneveEnv);
			if (int ret = e->load()) {
				err = std::string("loading xdp_geneve failed: ") + std::strerror(-ret);
				e.reset();
			}
			return e;
		}();
		*why = err;
		return env.get();
	}

	// A separate, just-loaded copy: every map (and the lookup cache) as the
	// kernel creates it, zero.
	// @frags: the multi-buffer entry, xdp_geneve_mb, instead.
	static std::unique_ptr<GeneveEnv> fresh(std::string *why, bool frags = false)
	{
		auto e = std::unique_ptr<GeneveEnv>(new GeneveEnv);
		e->frags_ = frags;
		if (int ret = e->load()) {
			*why = std::string("loading xdp_geneve failed: ") + std::strerror(-ret);
			e.reset();
		}
		return e;
	}

	xdp_geneve_bpf *skel() const { return s_.get(); }
	int fd(bpf_map *m) const { return bpf_map__fd(m); }

	void check(int err, const char *what) const
	{
		if (err)
			throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
	}

	// Map writes as GeneveMaps does them: the change, then a new gen.
	void port(uint16_t p, bool on)
	{
		uint32_t k = p;
		xo_gnv_port v{1, 0};
		if (on)
			check(bpf_map_update_elem(fd(s_->maps.xo_gnv_ports), &k, &v, BPF_ANY), "port");
		else
			(void)bpf_map_delete_elem(fd(s_->maps.xo_gnv_ports), &k);
		bump();
	}
	// A new gen, the VNI bitmap in step for it (as GeneveMaps keeps it);
	// @bits_in_step false: as an xoffload without the bitmap bumps it.
	void bump(bool bits_in_step = true)
	{
		uint32_t z = 0;
		xo_gnv_cfg c{};
		check(bpf_map_lookup_elem(fd(s_->maps.xo_gnv_cfg), &z, &c), "cfg");
		c.gen = xo_gnv_gen_next(c.gen);
		if (bits_in_step)
			c.vnibits_gen = c.gen;
		check(bpf_map_update_elem(fd(s_->maps.xo_gnv_cfg), &z, &c, BPF_ANY), "cfg");
	}
	// Each VNI gets its own counter slot, as GeneveMaps::rule_set gives them,
	// and its bit in the VNI bitmap before the rule.
	void rule(uint32_t vni, uint32_t action, uint32_t queues = 1)
	{
		auto it = slots_.find(vni);
		uint16_t slot = it != slots_.end() ? it->second : static_cast<uint16_t>(slots_.size() + 1);
		slots_[vni] = slot;
		const uint32_t bit = xo_gnv_vnibit(vni);
		vnibits(bit / 64, vnibits(bit / 64) | 1ULL << (bit % 64));
		xo_gnv_rule r{action, static_cast<uint16_t>(queues), slot};
		check(bpf_map_update_elem(fd(s_->maps.xo_gnv_rules), &vni, &r, BPF_ANY), "rule");
		bump();
	}
	uint64_t vnibits(uint32_t word) const
	{
		uint64_t v = 0;
		check(bpf_map_lookup_elem(fd(s_->maps.xo_gnv_vnibits), &word, &v), "vni bitmap");
		return v;
	}
	void vnibits(uint32_t word, uint64_t v)
	{
		check(bpf_map_update_elem(fd(s_->maps.xo_gnv_vnibits), &word, &v, BPF_ANY), "vni bitmap");
	}
	void cfg(uint32_t flags, uint32_t dflt_action = XO_GNV_ACT_PASS)
	{
		uint32_t z = 0;
		xo_gnv_cfg c{};
		check(bpf_map_lookup_elem(fd(s_->maps.xo_gnv_cfg), &z, &c), "cfg");
		c = xo_gnv_cfg{XO_ABI_VERSION, flags, {}, xo_gnv_gen_next(c.gen), 0};
		c.vnibits_gen = c.gen;
		check(bpf_map_update_elem(fd(s_->maps.xo_gnv_cfg), &z, &c, BPF_ANY), "cfg");
		dflt(dflt_action);
	}
	// The default rule, as GeneveMaps::rule_set writes it.
	void dflt(uint32_t action, uint32_t queues = 1)
	{
		uint32_t k = XO_GNV_VNI_DEFAULT;
		xo_gnv_rule r{action, static_cast<uint16_t>(queues), XO_GNV_SLOT_DEFAULT};
		check(bpf_map_update_elem(fd(s_->maps.xo_gnv_rules), &k, &r, BPF_ANY), "default rule");
		bump();
	}
	void known(uint16_t cls, bool on)
	{
		uint32_t k = cls, one = 1;
		if (on)
			check(bpf_map_update_elem(fd(s_->maps.xo_gnv_optcls), &k, &one, BPF_ANY), "class");
		else
			(void)bpf_map_delete_elem(fd(s_->maps.xo_gnv_optcls), &k);
		bump();
	}
	void cpu_slot(uint32_t slot, bool on)
	{
		if (on) {
			bpf_cpumap_val v{};
			v.qsize = 256;
			check(bpf_map_update_elem(fd(s_->maps.xo_gnv_cpus), &slot, &v, BPF_ANY), "cpumap");
		} else {
			(void)bpf_map_delete_elem(fd(s_->maps.xo_gnv_cpus), &slot);
		}
	}

	CounterSet total() const
	{
		std::vector<xo_gnv_stats> pc(ncpu());
		uint32_t z = 0;
		check(bpf_map_lookup_elem(fd(s_->maps.xo_gnv_stats), &z, pc.data()), "stats");
		return sum(pc);
	}
	CounterSet vni(uint32_t vni) const
	{
		std::vector<xo_gnv_stats> pc(ncpu());
		auto it = slots_.find(vni);
		uint32_t key = vni == XO_GNV_VNI_DEFAULT || it == slots_.end() ? XO_GNV_SLOT_DEFAULT : it->second;
		check(bpf_map_lookup_elem(fd(s_->maps.xo_gnv_vstats), &key, pc.data()), "vstats");
		return sum(pc);
	}

	ProgRun run(const Bytes &in) const { return prog_run(bpf_program__fd(entry()), in, 512); }
	// As if the frame arrived on rx queue @rxq of device @ifindex (the
	// kernel takes rx_queue_index only with the ingress_ifindex of a device
	// of the caller's netns that has that queue).
	ProgRun run_on(const Bytes &in, uint32_t ifindex, uint32_t rxq) const
	{
		xdp_md ctx{};
		ctx.data_end = static_cast<uint32_t>(in.size());
		ctx.ingress_ifindex = ifindex;
		ctx.rx_queue_index = rxq;
		return prog_run(bpf_program__fd(entry()), in, 512, &ctx, sizeof(ctx));
	}
	// An AF_XDP socket at index @index of xo_gnv_xsks (fd < 0: none).
	void xsk_at(uint32_t index, int fd)
	{
		uint32_t v = static_cast<uint32_t>(fd);
		if (fd >= 0)
			check(bpf_map_update_elem(bpf_map__fd(s_->maps.xo_gnv_xsks), &index, &v, BPF_ANY), "xskmap");
		else
			(void)bpf_map_delete_elem(bpf_map__fd(s_->maps.xo_gnv_xsks), &index);
	}

private:
	GeneveEnv() = default;
	static size_t ncpu()
	{
		int n = libbpf_num_possible_cpus();
		return n > 0 ? static_cast<size_t>(n) : 1;
	}
	static CounterSet sum(const std::vector<xo_gnv_stats> &pc)
	{
		CounterSet c{};
		for (const auto &x : pc)
			for (unsigned r = 0; r < XO_GNV_CNT_MAX; r++) {
				c[r].packets += x.c[r].packets;
				c[r].bytes += x.c[r].bytes;
			}
		return c;
	}
	int load()
	{
		s_.reset(xdp_geneve_bpf__open());
		if (!s_)
			return -errno;
		bpf_map *m;
		bpf_object__for_each_map(m, s_->obj)
		{
			if (int err = bpf_map__set_pin_path(m, nullptr))
				return err;
		}
		// one entry per load: the kernel ties the CPUMAP to the first
		// program using it, frags or not
		bpf_program__set_autoload(frags_ ? s_->progs.xdp_geneve : s_->progs.xdp_geneve_mb, false);
		return xdp_geneve_bpf__load(s_.get());
	}
	bpf_program *entry() const { return frags_ ? s_->progs.xdp_geneve_mb : s_->progs.xdp_geneve; }
	Owned<xdp_geneve_bpf, xdp_geneve_bpf__destroy> s_;
	bool frags_ = false;
	std::map<uint32_t, uint16_t> slots_;
};

class GeneveBpf : public ::testing::Test {
protected:
	void SetUp() override
	{
		if (geteuid() != 0)
			GTEST_SKIP() << "needs root (BPF_PROG_TEST_RUN)";
		std::string why;
		env_ = GeneveEnv::get(&why);
		ASSERT_NE(env_, nullptr) << why;
		env_->port(kPortGeneve, true);
		env_->port(kPortC, false);
		env_->cfg(0);
		env_->rule(kVniPass, XO_GNV_ACT_PASS);
		env_->rule(kVniDecap, XO_GNV_ACT_DECAP);
		env_->rule(kVniDrop, XO_GNV_ACT_DROP);
		env_->rule(kVniXsk, XO_GNV_ACT_XSK, 4);
		env_->rule(kVniCpu, XO_GNV_ACT_CPU, 2);
		env_->known(kClassKnown, true);
		env_->known(kClassKnown2, true);
		env_->known(kClassKnown3, true);
		env_->known(kClassUnknown, false);
	}
	GeneveEnv *env_ = nullptr;
};

enum class V { pass, drop, redirect };

uint32_t retval_of(V v)
{
	return v == V::pass ? XDP_PASS : v == V::drop ? XDP_DROP : XDP_REDIRECT;
}

struct Case {
	std::string name;
	Bytes in;
	V verdict;
	Bytes out;			// expected frame (pass/redirect), empty = unchanged
	std::vector<uint32_t> counted;	// reasons counted once with in.size() bytes
	uint32_t vni_key = 0;		// per-VNI row that must show the same (0 = none)
	std::function<void(GeneveEnv &)> setup = nullptr;
	uint32_t ifindex = 0, rxq = 0;	// ingress device and rx queue (0, 0: none given)
};

void PrintTo(const Case &c, std::ostream *os)
{
	*os << c.name;
}

const Bytes kInner = inner_udp4(kIpA, kIpC, kPortA, kPortB, 40, 7);
const Bytes kInnerIp = inner_udp4(kIpA, kIpC, kPortA, kPortB, 40, 7, false);
const Bytes kInner6Ip = inner_tcp6(kIp6A, kIp6B, kPortA, kPortB, 24, false);
const std::vector<GeneveOpt> kOptsPlain = {{0x0001, 0x01, {1, 2, 3, 4}}, {kClassUnknown, 0x05, {}}};
const std::vector<GeneveOpt> kOptsCritUnknown = {{0x0001, 0x01, {1, 2, 3, 4}},
						 {kClassUnknown, kOptCritical | 3, {9, 9, 9, 9, 9, 9, 9, 9}}};
const std::vector<GeneveOpt> kOptsCritKnown = {{kClassKnown, kOptCritical | 1, {5, 6, 7, 8}}};
// Three critical classes: the per-CPU cache holds one, so at least two miss
// and the frame takes the walk that looks each class up.
const std::vector<GeneveOpt> kOptsThreeKnown = {{kClassKnown, kOptCritical | 1, {5, 6, 7, 8}},
						{kClassKnown2, kOptCritical | 2, {}},
						{kClassKnown3, kOptCritical | 3, {}}};
const std::vector<GeneveOpt> kOptsKnownThenUnknown = {{kClassKnown2, kOptCritical | 1, {}},
						      {kClassKnown3, kOptCritical | 1, {}},
						      {kClassUnknown, kOptCritical | 2, {1, 2, 3, 4}}};
const std::vector<GeneveOpt> kOptsUnknownTwice = {{kClassUnknown, kOptCritical | 1, {}},
						  {kClassUnknown, kOptCritical | 1, {}}};
const std::vector<GeneveOpt> kOptsKnownTwice = {{kClassKnown2, kOptCritical | 1, {}},
						{kClassKnown2, kOptCritical | 1, {}}};


// @n options of 4 bytes (no data), of a class no rule declares; with
// @crit_last, then one critical option of @last_cls (unknown by default).
// @all_crit: the @n are critical too, of class @last_cls.
std::vector<GeneveOpt> many_opts(unsigned n, bool crit_last, uint16_t last_cls = kClassUnknown,
				 bool all_crit = false)
{
	std::vector<GeneveOpt> v;
	for (unsigned i = 0; i < n; i++)
		v.push_back(all_crit ? GeneveOpt{last_cls, static_cast<uint8_t>(kOptCritical | 1), {}}
				     : GeneveOpt{static_cast<uint16_t>(0x0200 + i), 0x01, {}});
	if (crit_last)
		v.push_back({last_cls, static_cast<uint8_t>(kOptCritical | 2), {}});
	return v;
}

Bytes eth_then(const Bytes &ip, uint16_t type)
{
	PacketBuilder b;
	b.eth(kMacB, kMacA).ethertype(type);
	Bytes e = b.build();
	e.insert(e.end(), ip.begin(), ip.end());
	return e;
}

Bytes fragment(Bytes f, uint16_t frag)
{
	f[14 + 6] = static_cast<uint8_t>(frag >> 8);
	f[14 + 7] = static_cast<uint8_t>(frag);
	return f;
}

// The IP version nibble of an untagged frame set to @v.
Bytes ip_version(Bytes f, uint8_t v)
{
	f[14] = static_cast<uint8_t>(v << 4 | (f[14] & 0x0f));
	return f;
}

Bytes with_udp_csum(Bytes f, size_t udp_off, uint16_t v)
{
	f[udp_off + 6] = static_cast<uint8_t>(v >> 8);
	f[udp_off + 7] = static_cast<uint8_t>(v);
	return f;
}

std::vector<Case> cases()
{
	const Bytes g_pass = geneve(kVniPass, kEthTeb, kInner);
	const Bytes g_decap = geneve(kVniDecap, kEthTeb, kInner);
	const Bytes big_inner = inner_udp4(kIpA, kIpC, kPortA, kPortB, 1333, 3);	// odd sizes: csum tail
	const Bytes g_big = geneve(kVniPass, kEthTeb, big_inner);
	const Bytes v4 = outer4(g_pass);
	auto verify = [](GeneveEnv &e) { e.cfg(XO_GNV_F_VERIFY_CSUM); };
	return {
		{"ipv4_pass", v4, V::pass, {}, {XO_GNV_CNT_PASSED}, kVniPass},
		{"ipv6_pass", outer6(g_pass), V::pass, {}, {XO_GNV_CNT_PASSED}, kVniPass},
		{"ipv4_decap_teb", outer4(g_decap), V::pass, kInner, {XO_GNV_CNT_DECAPPED}, kVniDecap},
		{"ipv6_decap_teb", outer6(g_decap), V::pass, kInner, {XO_GNV_CNT_DECAPPED}, kVniDecap},
		{"qinq_outer_decap", outer4(g_decap, kPortGeneve, {{kTpid8021AD, 30}, {kTpid8021Q, 100}}), V::pass,
		 kInner, {XO_GNV_CNT_DECAPPED}, kVniDecap},
		{"dot1q_outer_ipv6_decap", outer6(g_decap, kPortGeneve, {{kTpid8021Q, 7}}), V::pass, kInner,
		 {XO_GNV_CNT_DECAPPED}, kVniDecap},
		{"decap_ipv4_payload_gets_outer_macs", outer4(geneve(kVniDecap, kEthIPv4, kInnerIp)), V::pass,
		 eth_then(kInnerIp, kEthIPv4), {XO_GNV_CNT_DECAPPED}, kVniDecap},
		{"decap_ipv6_payload_gets_outer_macs", outer6(geneve(kVniDecap, kEthIPv6, kInner6Ip)), V::pass,
		 eth_then(kInner6Ip, kEthIPv6), {XO_GNV_CNT_DECAPPED}, kVniDecap},
		{"options_plain_decap", outer4(geneve(kVniDecap, kEthTeb, kInner, kOptsPlain)), V::pass, kInner,
		 {XO_GNV_CNT_DECAPPED}, kVniDecap},
		{"critical_unknown_option_drops", outer4(geneve(kVniDecap, kEthTeb, kInner, kOptsCritUnknown, kGnvCrit)),
		 V::drop, {}, {XO_GNV_CNT_DROP_CRIT_OPT}, kVniDecap},
		{"critical_unknown_option_without_c_bit_drops",
		 outer6(geneve(kVniPass, kEthTeb, kInner, kOptsCritUnknown)), V::drop, {}, {XO_GNV_CNT_DROP_CRIT_OPT},
		 kVniPass},
		{"three_known_critical_classes_decap",
		 outer4(geneve(kVniDecap, kEthTeb, kInner, kOptsThreeKnown, kGnvCrit)), V::pass, kInner,
		 {XO_GNV_CNT_DECAPPED}, kVniDecap},
		{"known_known_unknown_critical_classes_drop",
		 outer6(geneve(kVniDecap, kEthTeb, kInner, kOptsKnownThenUnknown, kGnvCrit)), V::drop, {},
		 {XO_GNV_CNT_DROP_CRIT_OPT}, kVniDecap},
		{"same_unknown_critical_class_twice_drops",
		 outer4(geneve(kVniDecap, kEthTeb, kInner, kOptsUnknownTwice, kGnvCrit)), V::drop, {},
		 {XO_GNV_CNT_DROP_CRIT_OPT}, kVniDecap},
		{"same_known_critical_class_twice_decaps",
		 outer4(geneve(kVniDecap, kEthTeb, kInner, kOptsKnownTwice, kGnvCrit)), V::pass, kInner,
		 {XO_GNV_CNT_DECAPPED}, kVniDecap},
		{"critical_known_option_decaps", outer4(geneve(kVniDecap, kEthTeb, kInner, kOptsCritKnown, kGnvCrit)),
		 V::pass, kInner, {XO_GNV_CNT_DECAPPED}, kVniDecap},
		{"critical_class_declared_known_later",
		 outer4(geneve(kVniDecap, kEthTeb, kInner, kOptsCritUnknown, kGnvCrit)), V::pass, kInner,
		 {XO_GNV_CNT_DECAPPED}, kVniDecap, [](GeneveEnv &e) { e.known(kClassUnknown, true); }},
		{"optlen_beyond_packet", outer4(geneve(kVniPass, kEthTeb, {}, {}, 0, 0, 63)), V::drop, {},
		 {XO_GNV_CNT_DROP_MALFORMED}},
		{"optlen_beyond_udp_length", outer4(geneve(kVniPass, kEthTeb, Bytes(20, 0), {}, 0, 0, 6)), V::drop, {},
		 {XO_GNV_CNT_DROP_MALFORMED}},
		{"option_longer_than_optlen",
		 outer4(geneve(kVniPass, kEthTeb, kInner, {{0x0001, 0x01, {1, 2, 3, 4, 5, 6, 7, 8}}}, 0, 0, 2)), V::drop,
		 {}, {XO_GNV_CNT_DROP_MALFORMED}},
		{"version_1", outer4(geneve(kVniPass, kEthTeb, kInner, {}, 0, 1)), V::drop, {},
		 {XO_GNV_CNT_DROP_MALFORMED}},
		{"unregistered_port_untouched", outer4(g_decap, kPortC), V::pass, {}, {XO_GNV_CNT_NOT_GENEVE}},
		{"fragment_mf_untouched", fragment(outer4(g_decap), 0x2000), V::pass, {}, {XO_GNV_CNT_NOT_GENEVE}},
		{"fragment_offset_untouched", fragment(outer4(g_decap), 0x0010), V::pass, {}, {XO_GNV_CNT_NOT_GENEVE}},
		// the same parse helper as xdp_xsk (bpf/include/xoffload/parse.h):
		// a header whose version is not its ethertype's is not IP at all
		{"ipv4_version_6_untouched", ip_version(outer4(g_decap), 6), V::pass, {}, {XO_GNV_CNT_NOT_GENEVE}},
		{"ipv6_version_4_untouched", ip_version(outer6(g_decap), 4), V::pass, {}, {XO_GNV_CNT_NOT_GENEVE}},
		{"ipv4_options_outer_decap",
		 PacketBuilder().eth(kMacB, kMacA).ipv4(kIpA, kIpB).ip_options({1, 1, 1, 0}).udp(1, kPortGeneve)
			 .payload(g_decap).build(),
		 V::pass, kInner, {XO_GNV_CNT_DECAPPED}, kVniDecap},
		{"tcp_to_geneve_port_untouched",
		 PacketBuilder().eth(kMacB, kMacA).ipv4(kIpA, kIpB).tcp(1, kPortGeneve).payload(g_decap).build(), V::pass,
		 {}, {XO_GNV_CNT_NOT_GENEVE}},
		{"arp_untouched", PacketBuilder().eth(kMacBcast, kMacA).ethertype(0x0806).payload(28).build(), V::pass,
		 {}, {XO_GNV_CNT_NOT_GENEVE}},
		{"drop_rule", outer4(geneve(kVniDrop, kEthTeb, kInner)), V::drop, {}, {XO_GNV_CNT_DROP_RULE},
		 kVniDrop},
		{"unknown_vni_default_pass", outer4(geneve(kVniUnknown, kEthTeb, kInner)), V::pass, {},
		 {XO_GNV_CNT_PASSED}, XO_GNV_VNI_DEFAULT},
		{"unknown_vni_default_drop", outer4(geneve(kVniUnknown, kEthTeb, kInner)), V::drop, {},
		 {XO_GNV_CNT_DROP_RULE}, XO_GNV_VNI_DEFAULT, [](GeneveEnv &e) { e.cfg(0, XO_GNV_ACT_DROP); }},
		{"unknown_vni_default_decap", outer6(geneve(kVniUnknown, kEthTeb, kInner)), V::pass, kInner,
		 {XO_GNV_CNT_DECAPPED}, XO_GNV_VNI_DEFAULT, [](GeneveEnv &e) { e.cfg(0, XO_GNV_ACT_DECAP); }},
		{"oam_frame_not_decapped", outer4(geneve(kVniDecap, kEthTeb, kInner, {}, kGnvOam)), V::pass, {},
		 {XO_GNV_CNT_PASSED}, kVniDecap},
		{"xsk_without_socket_passes", outer4(geneve(kVniXsk, kEthTeb, kInner)), V::pass, {},
		 {XO_GNV_CNT_NO_TARGET}, kVniXsk},
		{"vni_24_bits", outer4(geneve(0xabcdef, kEthTeb, kInner)), V::drop, {}, {XO_GNV_CNT_DROP_RULE},
		 0xabcdef, [](GeneveEnv &e) { e.rule(0xabcdef, XO_GNV_ACT_DROP); }},
		// ---- options: every one opt_len can hold is walked ----
		{"seventeen_plain_then_unknown_critical_no_c_bit",
		 outer4(geneve(kVniDecap, kEthTeb, kInner, many_opts(17, true))), V::drop, {},
		 {XO_GNV_CNT_DROP_CRIT_OPT}, kVniDecap},
		{"seventeen_plain_then_unknown_critical_c_bit",
		 outer4(geneve(kVniDecap, kEthTeb, kInner, many_opts(17, true), kGnvCrit)), V::drop, {},
		 {XO_GNV_CNT_DROP_CRIT_OPT}, kVniDecap},
		{"seventeen_plain_then_known_critical_decaps",
		 outer4(geneve(kVniDecap, kEthTeb, kInner, many_opts(17, true, kClassKnown), kGnvCrit)), V::pass,
		 kInner, {XO_GNV_CNT_DECAPPED}, kVniDecap},
		{"sixty_two_plain_then_unknown_critical",
		 outer4(geneve(kVniPass, kEthTeb, kInner, many_opts(62, true))), V::drop, {},
		 {XO_GNV_CNT_DROP_CRIT_OPT}, kVniPass},
		{"sixty_three_plain_options_decap", outer6(geneve(kVniDecap, kEthTeb, kInner, many_opts(63, false))),
		 V::pass, kInner, {XO_GNV_CNT_DECAPPED}, kVniDecap},
		{"sixty_three_known_critical_options_decap",
		 outer4(geneve(kVniDecap, kEthTeb, kInner, many_opts(63, false, kClassKnown, true), kGnvCrit)),
		 V::pass, kInner, {XO_GNV_CNT_DECAPPED}, kVniDecap},
		// ---- outer UDP checksum verification ----
		{"csum_good_ipv4", v4, V::pass, {}, {XO_GNV_CNT_PASSED}, kVniPass, verify},
		{"csum_good_ipv6_big", outer6(g_big), V::pass, {}, {XO_GNV_CNT_PASSED}, kVniPass, verify},
		{"csum_good_ipv4_big", outer4(g_big), V::pass, {}, {XO_GNV_CNT_PASSED}, kVniPass, verify},
		{"csum_bad_ipv4", with_udp_csum(v4, 34, 0x1234), V::drop, {}, {XO_GNV_CNT_BAD_CSUM}, kVniPass, verify},
		{"csum_bad_payload_bit", [&] { Bytes f = outer4(g_big); f.back() ^= 0x01; return f; }(), V::drop, {},
		 {XO_GNV_CNT_BAD_CSUM}, kVniPass, verify},
		{"csum_zero_ipv4_allowed", with_udp_csum(v4, 34, 0), V::pass, {}, {XO_GNV_CNT_PASSED}, kVniPass,
		 verify},
		{"csum_zero_ipv6_refused", with_udp_csum(outer6(g_pass), 54, 0), V::drop, {},
		 {XO_GNV_CNT_BAD_CSUM}, kVniPass, verify},
		{"csum_bad_ignored_when_off", with_udp_csum(v4, 34, 0x1234), V::pass, {}, {XO_GNV_CNT_PASSED},
		 kVniPass},
	};
}

class GeneveCase : public GeneveBpf, public ::testing::WithParamInterface<Case> {};

void run_case(GeneveEnv &env, const Case &c)
{
	if (c.setup)
		c.setup(env);
	CounterSet t0 = env.total();
	CounterSet v0 = c.vni_key ? env.vni(c.vni_key) : CounterSet{};
	auto r = c.ifindex ? env.run_on(c.in, c.ifindex, c.rxq) : env.run(c.in);
	ASSERT_EQ(r.err, 0) << std::strerror(-r.err);
	EXPECT_EQ(r.retval, retval_of(c.verdict));
	if (c.verdict != V::drop) {
		EXPECT_EQ(hexdump(r.out), hexdump(c.out.empty() ? c.in : c.out));
	}
	CounterSet want{};
	for (uint32_t reason : c.counted)
		want[reason] = {1, c.in.size()};
	EXPECT_EQ(describe(minus(env.total(), t0)), describe(want)) << "total counters";
	if (c.vni_key) {
		EXPECT_EQ(describe(minus(env.vni(c.vni_key), v0)), describe(want)) << "counters of vni " << c.vni_key;
	}
}

TEST_P(GeneveCase, VerdictBytesAndCounters)
{
	run_case(*env_, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Table, GeneveCase, ::testing::ValuesIn(cases()),
			 [](const auto &info) { return info.param.name; });

// Protocol types xdp_geneve cannot decapsulate (ARP, MPLS, NSH, anything
// else): the rule decides, as for any frame. pass and the default pass leave
// it untouched, drop drops it, decap drops it as dropped-cannot-decap,
// xsk/cpu steer it as an inner frame without an IP 5-tuple (hash of zero
// fields).
TEST_F(GeneveBpf, EveryProtocolTypeFollowsItsRule)
{
	const Bytes payload = PacketBuilder().payload(28, 5).build();
	const uint32_t slot = xo_gnv_flow_hash(0, 0, 0, 0, 0) % 2;	// kVniCpu has 2 queues
	for (uint16_t proto : {uint16_t{0x0806}, uint16_t{0x8847}, uint16_t{0x894f}, uint16_t{0x88b5}}) {
		char label[16];
		std::snprintf(label, sizeof(label), "0x%04x", proto);
		SCOPED_TRACE(label);
		auto f = [&](uint32_t vni) { return outer4(geneve(vni, proto, payload)); };
		run_case(*env_, {"pass", f(kVniPass), V::pass, {}, {XO_GNV_CNT_PASSED}, kVniPass});
		run_case(*env_, {"default pass", f(kVniUnknown), V::pass, {}, {XO_GNV_CNT_PASSED}, XO_GNV_VNI_DEFAULT});
		run_case(*env_, {"drop", f(kVniDrop), V::drop, {}, {XO_GNV_CNT_DROP_RULE}, kVniDrop});
		run_case(*env_, {"decap", f(kVniDecap), V::drop, {}, {XO_GNV_CNT_DROP_CANNOT_DECAP}, kVniDecap});
		run_case(*env_, {"default decap", outer6(geneve(kVniUnknown, proto, payload)), V::drop, {},
				 {XO_GNV_CNT_DROP_CANNOT_DECAP}, XO_GNV_VNI_DEFAULT,
				 [](GeneveEnv &e) { e.dflt(XO_GNV_ACT_DECAP); }});
		env_->dflt(XO_GNV_ACT_PASS);
		run_case(*env_, {"xsk, no socket", f(kVniXsk), V::pass, {}, {XO_GNV_CNT_NO_TARGET}, kVniXsk});
		env_->cpu_slot(slot, true);
		env_->cpu_slot(slot ^ 1, false);
		run_case(*env_, {"cpu, the zero-field hash's slot", f(kVniCpu), V::redirect, {},
				 {XO_GNV_CNT_REDIRECTED}, kVniCpu});
		env_->cpu_slot(slot, false);
		env_->cpu_slot(slot ^ 1, true);
		run_case(*env_, {"cpu, the other slot only", f(kVniCpu), V::pass, {}, {XO_GNV_CNT_NO_TARGET}, kVniCpu});
		env_->cpu_slot(slot ^ 1, false);
	}
	// the same inner protocol inside an Ethernet payload hashes alike
	const Bytes arp_eth = PacketBuilder().eth(kMacBcast, kMacC).ethertype(0x0806).payload(28).build();
	env_->cpu_slot(slot, true);
	run_case(*env_, {"cpu, ARP in Ethernet", outer4(geneve(kVniCpu, kEthTeb, arp_eth)), V::redirect, {},
			 {XO_GNV_CNT_REDIRECTED}, kVniCpu});
	env_->cpu_slot(slot, false);
}

// A per-CPU cache that was never filled is all zero, and so is xo_gnv_cfg
// until userspace writes it: port 0, VNI 0 and option class 0 must not look
// cached then.
TEST(GeneveBpfFresh, ZeroedCacheAnswersForNothing)
{
	std::string why;
	auto env = GeneveEnv::fresh(&why);
	ASSERT_NE(env, nullptr) << why;
	// map writes without a gen bump: xo_gnv_cfg stays all zero (gen 0)
	uint32_t port = kPortGeneve;
	xo_gnv_port pv{1, 0};
	ASSERT_EQ(bpf_map_update_elem(env->fd(env->skel()->maps.xo_gnv_ports), &port, &pv, BPF_ANY), 0);
	const std::vector<GeneveOpt> class0 = {{0x0000, kOptCritical | 1, {1, 2, 3, 4}}};
	run_case(*env, {"class 0 unknown", outer4(geneve(0, kEthTeb, kInner, class0, kGnvCrit)), V::drop, {},
			{XO_GNV_CNT_DROP_CRIT_OPT}});
	// VNI 0 has no rule: the default (pass), not a zeroed cached rule
	run_case(*env, {"vni 0 default", outer4(geneve(0, kEthTeb, kInner)), V::pass, {}, {XO_GNV_CNT_PASSED}});
	// UDP to port 0 is not Geneve
	run_case(*env, {"port 0", outer4(geneve(kVniPass, kEthTeb, kInner), 0), V::pass, {},
			{XO_GNV_CNT_NOT_GENEVE}});
}

// The VNI bitmap (abi.h): read only while xo_gnv_cfg says it is in step.
// A rule whose bit is wrongly clear then shows that it is read (the VNI
// takes the default rule), and a gen bumped by a writer that does not keep
// the bitmap (an older xoffload) that it is not read any more.
TEST(GeneveBpfFresh, VniBitmapReadOnlyWhenInStep)
{
	std::string why;
	auto env = GeneveEnv::fresh(&why);
	ASSERT_NE(env, nullptr) << why;
	env->port(kPortGeneve, true);
	env->cfg(0, XO_GNV_ACT_PASS);
	env->rule(kVniDrop, XO_GNV_ACT_DROP);
	const Bytes drop = outer4(geneve(kVniDrop, kEthTeb, kInner));
	const uint32_t bit = xo_gnv_vnibit(kVniDrop), word = bit / 64;
	ASSERT_NE(env->vnibits(word) & 1ULL << (bit % 64), 0u) << "rule() sets the VNI's bit";
	run_case(*env, {"rule, bit set", drop, V::drop, {}, {XO_GNV_CNT_DROP_RULE}, kVniDrop});
	// VNIs without a rule, their bits clear or shared: the default either way
	for (uint32_t vni : {kVniDrop + 1, kVniDrop + 2, 0xfffffeu})
		run_case(*env, {"no rule", outer4(geneve(vni, kEthTeb, kInner)), V::pass, {}, {XO_GNV_CNT_PASSED}});
	// in step, the bit cleared behind the rule's back: the bitmap answers
	env->vnibits(word, env->vnibits(word) & ~(1ULL << (bit % 64)));
	env->bump();
	run_case(*env, {"rule, bit clear, in step", drop, V::pass, {}, {XO_GNV_CNT_PASSED}});
	// an older writer's gen: the bitmap is ignored, the rule applies again
	env->bump(false);
	run_case(*env, {"rule, bit clear, not in step", drop, V::drop, {}, {XO_GNV_CNT_DROP_RULE}, kVniDrop});
}

// xdp_geneve_mb: BPF_PROG_TEST_RUN puts what exceeds one page of a frame
// into fragments. The headers are read from the first buffer; the UDP
// length, the checksum and the counted bytes cover the whole frame.
TEST(GeneveBpfMultiBuffer, JumboFramesAcrossBuffers)
{
	std::string why;
	auto env = GeneveEnv::fresh(&why, true);
	ASSERT_NE(env, nullptr) << why;
	env->port(kPortGeneve, true);
	env->cfg(XO_GNV_F_VERIFY_CSUM);
	env->rule(kVniPass, XO_GNV_ACT_PASS);
	env->rule(kVniDrop, XO_GNV_ACT_DROP);
	env->rule(kVniDecap, XO_GNV_ACT_DECAP);
	const Bytes big = inner_udp4(kIpA, kIpC, kPortA, kPortB, 5900, 9);
	const Bytes pass = outer4(geneve(kVniPass, kEthTeb, big));
	ASSERT_GT(pass.size(), 4096u) << "must not fit one buffer";
	run_case(*env, {"jumbo pass, checksum verified", pass, V::pass, {}, {XO_GNV_CNT_PASSED}, kVniPass});
	run_case(*env, {"jumbo bad checksum", with_udp_csum(pass, 34, 0x1234), V::drop, {}, {XO_GNV_CNT_BAD_CSUM},
			kVniPass});
	run_case(*env, {"jumbo drop rule", outer4(geneve(kVniDrop, kEthTeb, big)), V::drop, {},
			{XO_GNV_CNT_DROP_RULE}, kVniDrop});
	run_case(*env, {"jumbo decap", outer4(geneve(kVniDecap, kEthTeb, big)), V::pass, big,
			{XO_GNV_CNT_DECAPPED}, kVniDecap});
	// cut short of its UDP length in the last buffer: malformed
	Bytes cut = pass;
	cut.resize(pass.size() - 100);
	run_case(*env, {"jumbo cut short", cut, V::drop, {}, {XO_GNV_CNT_DROP_MALFORMED}});
}

// ---- the outer UDP checksum, every length ----

// The checksum over every datagram length the direct walk treats apart
// (each remainder of its 128-byte blocks, so each step of 64 ... 1 bytes),
// around the end of a first buffer (the multi-buffer entry sums the rest
// through bpf_xdp_load_bytes, from wherever the first buffer stops), over
// IPv4, IPv6 and a QinQ outer; each frame whole and with one bit flipped
// (first byte of the inner frame, last byte, a byte in between). The
// verdict must be the reference model's (ref_model.hpp: udp_csum_ok), which
// sums the same bytes in plain C++.
struct CsumShape {
	const char *name;
	bool v6;
	std::vector<OuterTag> tags;
};

void csum_sweep(GeneveEnv &env, const CsumShape &sh, const std::vector<size_t> &payloads, unsigned *ran)
{
	for (size_t pay : payloads) {
		const Bytes inner = inner_udp4(kIpA, kIpC, kPortA, kPortB, pay, static_cast<uint8_t>(pay));
		const Bytes g = geneve(kVniPass, kEthTeb, inner);
		const Bytes good = sh.v6 ? outer6(g, kPortGeneve, sh.tags) : outer4(g, kPortGeneve, sh.tags);
		const size_t ip = 14 + 4 * sh.tags.size(), udp = ip + (sh.v6 ? 40 : 20);
		const uint16_t udp_len = model::rd16(good, udp + 4);
		ASSERT_EQ(udp_len, good.size() - udp);
		const size_t in0 = udp + 16;	// the inner frame: flipping bits there keeps the headers whole
		const size_t flips[] = {in0, good.size() - 1, in0 + (pay * 7919) % (good.size() - in0)};
		for (int k = -1; k < 3; k++) {
			Bytes f = good;
			if (k >= 0)
				f[flips[k]] ^= static_cast<uint8_t>(1u << (pay % 8));
			const bool ok = model::udp_csum_ok(f, ip, sh.v6, udp, udp_len);
			ASSERT_EQ(ok, k < 0) << "the model: a flipped bit always shows";
			SCOPED_TRACE(std::string(sh.name) + ", inner payload " + std::to_string(pay) + " (UDP length " +
				     std::to_string(udp_len) + ")" + (k < 0 ? "" : ", bit flipped at " + std::to_string(flips[k])));
			run_case(env, {"csum", f, ok ? V::pass : V::drop, {},
				       {ok ? XO_GNV_CNT_PASSED : XO_GNV_CNT_BAD_CSUM}, kVniPass});
			if (::testing::Test::HasFailure())
				return;
			++*ran;
		}
	}
}

const CsumShape kCsumShapes[] = {{"ipv4", false, {}},
				 {"ipv6", true, {}},
				 {"ipv4 qinq", false, {{kTpid8021AD, 10}, {kTpid8021Q, 20}}}};

TEST(GeneveBpfChecksum, EveryLengthInOneBuffer)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (BPF_PROG_TEST_RUN)";
	std::string why;
	auto env = GeneveEnv::fresh(&why);
	ASSERT_NE(env, nullptr) << why;
	env->port(kPortGeneve, true);
	env->cfg(XO_GNV_F_VERIFY_CSUM);
	env->rule(kVniPass, XO_GNV_ACT_PASS);
	// inner payloads 0..299 (UDP lengths 58..357: every remainder mod 128),
	// then around the 1,400-byte inner frame and up to what one buffer holds
	std::vector<size_t> pays;
	for (size_t p = 0; p < 300; p++)
		pays.push_back(p);
	for (size_t p = 1330; p < 1400; p++)
		pays.push_back(p);
	for (size_t p = 3300; p < 3330; p++)
		pays.push_back(p);
	unsigned ran = 0;
	for (const CsumShape &sh : kCsumShapes) {
		csum_sweep(*env, sh, pays, &ran);
		if (HasFailure())
			return;
	}
	EXPECT_EQ(ran, 3 * 4 * pays.size());
}

TEST(GeneveBpfChecksum, EveryLengthAcrossBuffers)
{
	if (geteuid() != 0)
		GTEST_SKIP() << "needs root (BPF_PROG_TEST_RUN)";
	std::string why;
	auto env = GeneveEnv::fresh(&why, true);
	ASSERT_NE(env, nullptr) << why;
	env->port(kPortGeneve, true);
	env->cfg(XO_GNV_F_VERIFY_CSUM);
	env->rule(kVniPass, XO_GNV_ACT_PASS);
	// BPF_PROG_TEST_RUN keeps what fits a page in the first buffer: these
	// frames end before, at and after that point (wherever it is on this
	// kernel), by one byte at a time, then span several buffers
	std::vector<size_t> pays;
	for (size_t p = 0; p < 130; p++)
		pays.push_back(p);
	for (size_t p = 3380; p < 3560; p++)
		pays.push_back(p);
	for (size_t p : {4000u, 4097u, 5901u, 8191u, 8999u})
		pays.push_back(p);
	unsigned ran = 0;
	for (const CsumShape &sh : kCsumShapes) {
		csum_sweep(*env, sh, pays, &ran);
		if (HasFailure())
			return;
	}
	EXPECT_EQ(ran, 3 * 4 * pays.size());
}

// ---- every truncation ----

struct Trunc {
	std::string name;
	Bytes full;
	size_t geneve_at;	// first offset that is past the outer UDP header
};

void PrintTo(const Trunc &t, std::ostream *os)
{
	*os << t.name << " (" << t.full.size() << " B, Geneve at " << t.geneve_at << ")";
}

std::vector<Trunc> truncs()
{
	const Bytes g = geneve(kVniDecap, kEthTeb, kInner, kOptsCritKnown, kGnvCrit);
	return {
		{"ipv4_qinq_opts", outer4(g, kPortGeneve, {{kTpid8021AD, 30}, {kTpid8021Q, 100}}), kOuter4Len + 8},
		{"ipv6_opts", outer6(g), kOuter6Len},
		{"ipv4_ip_payload", outer4(geneve(kVniDecap, kEthIPv4, kInnerIp)), kOuter4Len},
	};
}

class GeneveTrunc : public GeneveBpf, public ::testing::WithParamInterface<Trunc> {};

TEST_P(GeneveTrunc, EveryLengthUntouchedOrMalformed)
{
	const Trunc &t = GetParam();
	for (size_t len = kEthHdrLen; len < t.full.size(); len++) {
		SCOPED_TRACE("length " + std::to_string(len));
		Bytes in = truncated(t.full, len);
		Case c{"t", in, len < t.geneve_at ? V::pass : V::drop, {},
		       {len < t.geneve_at ? XO_GNV_CNT_NOT_GENEVE : XO_GNV_CNT_DROP_MALFORMED}};
		run_case(*env_, c);
		if (HasFailure())
			return;
	}
	// and whole, it decaps
	run_case(*env_, {"full", t.full, V::pass,
			 t.name == "ipv4_ip_payload" ? eth_then(kInnerIp, kEthIPv4) : kInner,
			 {XO_GNV_CNT_DECAPPED}, kVniDecap});
}

INSTANTIATE_TEST_SUITE_P(Lengths, GeneveTrunc, ::testing::ValuesIn(truncs()),
			 [](const auto &info) { return info.param.name; });

// ---- steering: the program's hash is xo_gnv_flow_hash of the inner flow ----

TEST_F(GeneveBpf, CpuSteeringPicksTheSlotOfTheInnerFlowHash)
{
	for (uint16_t sport = 1000; sport < 1016; sport++) {
		SCOPED_TRACE("inner sport " + std::to_string(sport));
		Bytes inner = inner_udp4(kIpA, kIpC, sport, kPortB, 16);
		uint32_t slot = xo_gnv_flow_hash(0xc6120001, 0xc6120003, sport, kPortB, 17) % 2;
		// only the predicted CPU slot exists: redirected; only the other: no target
		env_->cpu_slot(slot, true);
		env_->cpu_slot(slot ^ 1, false);
		run_case(*env_, {"hit", outer4(geneve(kVniCpu, kEthTeb, inner)), V::redirect, {},
				 {XO_GNV_CNT_REDIRECTED}, kVniCpu});
		env_->cpu_slot(slot, false);
		env_->cpu_slot(slot ^ 1, true);
		run_case(*env_, {"miss", outer4(geneve(kVniCpu, kEthTeb, inner)), V::pass, {},
				 {XO_GNV_CNT_NO_TARGET}, kVniCpu});
		env_->cpu_slot(slot ^ 1, false);
		if (HasFailure())
			return;
	}
}

// An inner header that is not what its ethertype says (IPv4 with version
// 6, IPv6 with version 4) or whose IPv4 options run past the frame hashes
// as zero fields, like any inner frame without an IP 5-tuple: one slot for
// all of them. Each frame is picked so that hashing what it carries (what
// xdp_geneve did before stop 19) would land in the other slot.
TEST_F(GeneveBpf, CpuSteeringHashesMalformedInnerIpAsZeroFields)
{
	const uint32_t slot = xo_gnv_flow_hash(0, 0, 0, 0, 0) % 2;	// kVniCpu has 2 queues
	auto xor6 = [](const Ip6 &a) {
		uint32_t h = 0;
		for (size_t i = 0; i < 16; i += 4)
			h ^= static_cast<uint32_t>(a[i] << 24 | a[i + 1] << 16 | a[i + 2] << 8 | a[i + 3]);
		return h;
	};
	struct Row {
		const char *name;
		Bytes inner;
	};
	std::vector<Row> rows;
	for (uint16_t sport = 1000; sport < 1100 && rows.size() < 2; sport++) {
		if (rows.empty() && xo_gnv_flow_hash(0xc6120001, 0xc6120003, sport, kPortB, 17) % 2 != slot) {
			Bytes f = inner_udp4(kIpA, kIpC, sport, kPortB, 16);
			f[14] = static_cast<uint8_t>(0x60 | (f[14] & 0x0f));
			rows.push_back({"ipv4_version_6", f});
		}
		if (rows.size() == 1 && xo_gnv_flow_hash(xor6(kIp6A), xor6(kIp6B), sport, kPortB, 6) % 2 != slot) {
			Bytes f = inner_tcp6(kIp6A, kIp6B, sport, kPortB, 16);
			f[14] = static_cast<uint8_t>(0x40 | (f[14] & 0x0f));
			rows.push_back({"ipv6_version_4", f});
		}
	}
	ASSERT_EQ(rows.size(), 2u);
	// IHL 15: 40 bytes of options that are not there (ports unread)
	Bytes cut = inner_udp4(kIpA, kIpC, 1, 2, 0);
	cut.resize(14 + 20);
	cut[14] = 0x4f;
	if (xo_gnv_flow_hash(0xc6120001, 0xc6120003, 0, 0, 17) % 2 != slot)
		rows.push_back({"ipv4_options_cut", cut});
	for (const auto &r : rows) {
		SCOPED_TRACE(r.name);
		env_->cpu_slot(slot, true);
		env_->cpu_slot(slot ^ 1, false);
		run_case(*env_, {"hit", outer4(geneve(kVniCpu, kEthTeb, r.inner)), V::redirect, {},
				 {XO_GNV_CNT_REDIRECTED}, kVniCpu});
		env_->cpu_slot(slot, false);
		if (HasFailure())
			return;
	}
}

// decap-via cpumap (XO_GNV_F_DECAP_CPUMAP): a decapped frame leaves by the
// CPUMAP entry of the running CPU, where a new skb is built (CHECKSUM_NONE)
// and the stack verifies the inner checksum; the program never reads it,
// so an inner frame with a wrong one leaves the same way, never by
// XDP_PASS with the driver's verdict on the outer checksum. Without the
// entry: passed decapped, counted no-target. Flag off: XDP_PASS as before.
TEST_F(GeneveBpf, DecapViaCpumapHandsEveryInnerChecksumToTheStack)
{
	Bytes bad = kInner;
	bad[14 + 20 + 6] ^= 0x5a;	// inner UDP checksum now wrong
	Bytes bad_ip = kInnerIp;
	bad_ip[20 + 6] ^= 0x5a;
	// an IPv4 payload gets an Ethernet header with the outer MACs
	Bytes bad_ip_eth = PacketBuilder().eth(kMacB, kMacA).build();
	bad_ip_eth.resize(12);
	bad_ip_eth.insert(bad_ip_eth.end(), {0x08, 0x00});
	bad_ip_eth.insert(bad_ip_eth.end(), bad_ip.begin(), bad_ip.end());
	const unsigned ncpu = std::min<unsigned>(static_cast<unsigned>(libbpf_num_possible_cpus()), XO_GNV_MAX_QUEUES);

	env_->cfg(XO_GNV_F_DECAP_CPUMAP);
	for (unsigned cpu = 0; cpu < ncpu; cpu++)
		env_->cpu_slot(cpu, true);
	run_case(*env_, {"good_inner", outer4(geneve(kVniDecap, kEthTeb, kInner)), V::redirect, kInner,
			 {XO_GNV_CNT_DECAPPED}, kVniDecap});
	run_case(*env_, {"bad_inner", outer4(geneve(kVniDecap, kEthTeb, bad)), V::redirect, bad,
			 {XO_GNV_CNT_DECAPPED}, kVniDecap});
	run_case(*env_, {"bad_inner_ipv4_payload_ipv6_outer", outer6(geneve(kVniDecap, kEthIPv4, bad_ip)),
			 V::redirect, bad_ip_eth, {XO_GNV_CNT_DECAPPED}, kVniDecap});
	for (unsigned cpu = 0; cpu < ncpu; cpu++)
		env_->cpu_slot(cpu, false);
	run_case(*env_, {"no_cpumap_entry", outer4(geneve(kVniDecap, kEthTeb, bad)), V::pass, bad,
			 {XO_GNV_CNT_NO_TARGET}, kVniDecap});
	env_->cfg(0);
	run_case(*env_, {"flag_off", outer4(geneve(kVniDecap, kEthTeb, bad)), V::pass, bad, {XO_GNV_CNT_DECAPPED},
			 kVniDecap});
}

// The per-CPU lookup cache (xo_gnv_cache) must follow every registry, rule
// and option-class change that bumps xo_gnv_cfg.gen, hit after hit.
TEST_F(GeneveBpf, LookupCacheFollowsEveryChange)
{
	const Bytes f = outer4(geneve(kVniDecap, kEthTeb, kInner, kOptsCritKnown, kGnvCrit));
	const std::vector<uint32_t> decapped = {XO_GNV_CNT_DECAPPED};
	for (int i = 0; i < 3; i++)	// warm: the cache now holds port, VNI and class
		run_case(*env_, {"warm", f, V::pass, kInner, decapped, kVniDecap});
	env_->rule(kVniDecap, XO_GNV_ACT_DROP);
	run_case(*env_, {"rule now drop", f, V::drop, {}, {XO_GNV_CNT_DROP_RULE}, kVniDecap});
	env_->rule(kVniDecap, XO_GNV_ACT_DECAP);
	run_case(*env_, {"rule back", f, V::pass, kInner, decapped, kVniDecap});
	env_->known(kClassKnown, false);
	run_case(*env_, {"class forgotten", f, V::drop, {}, {XO_GNV_CNT_DROP_CRIT_OPT}, kVniDecap});
	env_->known(kClassKnown, true);
	run_case(*env_, {"class known again", f, V::pass, kInner, decapped, kVniDecap});
	env_->port(kPortGeneve, false);
	run_case(*env_, {"port gone", f, V::pass, {}, {XO_GNV_CNT_NOT_GENEVE}});
	env_->port(kPortGeneve, true);
	run_case(*env_, {"port back", f, V::pass, kInner, decapped, kVniDecap});
	const Bytes fc = outer4(geneve(kVniDecap, kEthTeb, kInner), kPortC);
	run_case(*env_, {"unregistered", fc, V::pass, {}, {XO_GNV_CNT_NOT_GENEVE}});	// cached as a miss
	env_->port(kPortC, true);	// the cached miss for kPortC must go too
	run_case(*env_, {"other port", fc, V::pass, kInner, decapped, kVniDecap});
}

// The direct-mapped port and VNI caches behind it answer for many ports and
// VNIs in turn: every rule, registry and default-rule change must reach
// the VNIs and ports they hold too, not only the last one.
TEST_F(GeneveBpf, PortAndVniCachesFollowEveryChange)
{
	const std::vector<uint32_t> passed = {XO_GNV_CNT_PASSED}, decapped = {XO_GNV_CNT_DECAPPED};
	const Bytes fp = outer4(geneve(kVniPass, kEthTeb, kInner)), fd = outer4(geneve(kVniDecap, kEthTeb, kInner)),
		    fx = outer4(geneve(kVniDrop, kEthTeb, kInner)), fu = outer4(geneve(kVniUnknown, kEthTeb, kInner)),
		    fc = outer4(geneve(kVniPass, kEthTeb, kInner), kPortC);
	// VNIs and ports in turn: after the first round each answer comes from the caches
	for (int i = 0; i < 3; i++) {
		run_case(*env_, {"pass", fp, V::pass, {}, passed, kVniPass});
		run_case(*env_, {"decap", fd, V::pass, kInner, decapped, kVniDecap});
		run_case(*env_, {"drop", fx, V::drop, {}, {XO_GNV_CNT_DROP_RULE}, kVniDrop});
		run_case(*env_, {"no rule: default", fu, V::pass, {}, passed, XO_GNV_VNI_DEFAULT});
		run_case(*env_, {"unregistered port", fc, V::pass, {}, {XO_GNV_CNT_NOT_GENEVE}});
	}
	env_->rule(kVniDrop, XO_GNV_ACT_PASS);	// a VNI the VNI cache holds, not the last one seen
	run_case(*env_, {"decap again", fd, V::pass, kInner, decapped, kVniDecap});
	run_case(*env_, {"drop rule now pass", fx, V::pass, {}, passed, kVniDrop});
	env_->dflt(XO_GNV_ACT_DROP);	// the default, cached for kVniUnknown
	run_case(*env_, {"pass again", fp, V::pass, {}, passed, kVniPass});
	run_case(*env_, {"default now drop", fu, V::drop, {}, {XO_GNV_CNT_DROP_RULE}, XO_GNV_VNI_DEFAULT});
	env_->port(kPortC, true);	// a port the port cache holds as unregistered
	run_case(*env_, {"pass via the main port", fp, V::pass, {}, passed, kVniPass});
	run_case(*env_, {"port now registered", fc, V::pass, {}, passed, kVniPass});
	env_->port(kPortC, false);
	run_case(*env_, {"pass via the main port", fp, V::pass, {}, passed, kVniPass});
	run_case(*env_, {"port gone again", fc, V::pass, {}, {XO_GNV_CNT_NOT_GENEVE}});
}

TEST_F(GeneveBpf, FlowHashSpreadsFlows)
{
	for (uint32_t n : {2u, 3u, 4u, 8u}) {
		std::map<uint32_t, int> per_slot;
		for (uint16_t sport = 1000; sport < 1800; sport++)
			per_slot[xo_gnv_flow_hash(0xc6120001, 0xc6120003, sport, kPortB, 17) % n]++;
		ASSERT_EQ(per_slot.size(), n);
		for (auto [slot, cnt] : per_slot)
			EXPECT_GT(cnt, 800 / static_cast<int>(n) * 3 / 4) << n << " slots: slot " << slot;
	}
	// every field moves the slot of some flows (byte order included)
	unsigned moved[5] = {};
	for (uint16_t sport = 1000; sport < 1064; sport++) {
		uint32_t h = xo_gnv_flow_hash(0xc6120001, 0xc6120003, sport, kPortB, 17) % 2;
		moved[0] += h != xo_gnv_flow_hash(0x010012c6, 0xc6120003, sport, kPortB, 17) % 2;
		moved[1] += h != xo_gnv_flow_hash(0xc6120001, 0x030012c6, sport, kPortB, 17) % 2;
		moved[2] += h != xo_gnv_flow_hash(0xc6120001, 0xc6120003, sport + 1000, kPortB, 17) % 2;
		moved[3] += h != xo_gnv_flow_hash(0xc6120001, 0xc6120003, sport, kPortB + 1, 17) % 2;
		moved[4] += h != xo_gnv_flow_hash(0xc6120001, 0xc6120003, sport, kPortB, 6) % 2;
	}
	for (unsigned f = 0; f < 5; f++)
		EXPECT_GT(moved[f], 16u) << "field " << f;
}

// ---- xsk steering by rx queue: row xo_gnv_xsk_slot(rxq, hash, queues) ----

// A network namespace of the test's own with a veth pair of 4 RX queues,
// deleted at the end: the ingress device whose rx queues test runs name,
// and the device the AF_XDP sockets bind to.
class QueueNetns {
public:
	QueueNetns() : name_("xo-bpfq-" + std::to_string(getpid()))
	{
		(void)std::system(("ip netns del " + name_ + " 2>/dev/null").c_str());
		ok_ = std::system(("ip netns add " + name_).c_str()) == 0 &&
		      std::system(("ip -n " + name_ + " link add xoq0 numtxqueues 4 numrxqueues 4 type veth peer name "
				   "xoq1 numtxqueues 4 numrxqueues 4 && ip -n " + name_ + " link set xoq0 up && ip -n " +
				   name_ + " link set xoq1 up")
					  .c_str()) == 0;
	}
	~QueueNetns() { (void)std::system(("ip netns del " + name_ + " 2>/dev/null").c_str()); }
	bool ok() const { return ok_; }
	// Runs @fn on a thread inside the namespace.
	void run(const std::function<void()> &fn) const
	{
		std::thread t([&] {
			int fd = ::open(("/run/netns/" + name_).c_str(), O_RDONLY | O_CLOEXEC);
			if (fd < 0 || setns(fd, CLONE_NEWNET)) {
				ADD_FAILURE() << "setns " << name_ << ": " << std::strerror(errno);
				if (fd >= 0)
					::close(fd);
				return;
			}
			::close(fd);
			fn();
		});
		t.join();
	}

private:
	std::string name_;
	bool ok_ = false;
};

// An AF_XDP socket takes only frames of its own queue, so xdp_geneve keys
// the XSKMAP by the frame's rx queue: a socket of queue q sits in row q, and
// a frame of another queue finds that row empty (no-target, passed) instead
// of being redirected to a socket that refuses it (before ABI 5: slot
// hash % queues whatever the queue; the kernel dropped such frames after
// they were counted redirected).
TEST_F(GeneveBpf, XskSteeringKeysTheSlotByRxQueue)
{
	QueueNetns ns;
	if (!ns.ok())
		GTEST_SKIP() << "needs ip netns and veth with 4 rx queues (iproute2, veth module)";
	ns.run([&] {
		auto dev = netdev_lookup("xoq0");
		ASSERT_TRUE(dev.ok()) << dev.error().msg;
		const uint32_t ifx = static_cast<uint32_t>(dev->ifindex);
		auto umem = xsk::Umem::create({256, 2048, 0, false});
		ASSERT_TRUE(umem.ok()) << umem.error().msg;
		// one socket on queue 0 and one on queue 1, each in its queue's row
		std::vector<xsk::XskSocket> socks;
		for (uint32_t q : {0u, 1u}) {
			xsk::SocketConfig sc;
			sc.queue = q;
			sc.frames = 128;
			sc.fill_size = sc.comp_size = sc.rx_size = 64;
			sc.tx_size = 0;
			sc.mode = xsk::BindMode::copy;
			auto sk = xsk::XskSocket::create(*umem, *dev, sc);
			ASSERT_TRUE(sk.ok()) << "queue " << q << ": " << sk.error().msg;
			socks.push_back(std::move(*sk));
		}
		for (uint16_t sport = 1000; sport < 1008 && !HasFailure(); sport++) {
			SCOPED_TRACE("inner sport " + std::to_string(sport));
			const Bytes f = outer4(geneve(kVniXsk, kEthTeb, inner_udp4(kIpA, kIpC, sport, kPortB, 16)));
			const uint32_t h = xo_gnv_flow_hash(0xc6120001, 0xc6120003, sport, kPortB, 17);
			const uint32_t row0 = xo_gnv_xsk_slot(0, h, 4), row1 = xo_gnv_xsk_slot(1, h, 4);
			ASSERT_EQ(row0, h % 4);
			ASSERT_EQ(row1, XO_GNV_MAX_QUEUES + h % 4);
			env_->xsk_at(row0, socks[0].fd());
			env_->xsk_at(row1, socks[1].fd());
			const Case hit0{"queue 0: its socket", f, V::redirect, {}, {XO_GNV_CNT_REDIRECTED}, kVniXsk,
					nullptr, ifx, 0};
			const Case hit1{"queue 1: its socket", f, V::redirect, {}, {XO_GNV_CNT_REDIRECTED}, kVniXsk,
					nullptr, ifx, 1};
			run_case(*env_, hit0);
			run_case(*env_, hit1);
			// queues 2 and 3 have no socket: passed, never redirected
			for (uint32_t q : {2u, 3u})
				run_case(*env_, {"queue " + std::to_string(q) + ": no socket", f, V::pass, {},
						 {XO_GNV_CNT_NO_TARGET}, kVniXsk, nullptr, ifx, q});
			// queue 1's socket gone: queue 1's frames are not sent to queue 0's
			env_->xsk_at(row1, -1);
			run_case(*env_, {"queue 1 without its socket", f, V::pass, {}, {XO_GNV_CNT_NO_TARGET}, kVniXsk,
					 nullptr, ifx, 1});
			run_case(*env_, hit0);
			// the slot of another flow in the right row: no target either
			env_->xsk_at(row0, -1);
			env_->xsk_at(xo_gnv_xsk_slot(0, h + 1, 4), socks[0].fd());
			run_case(*env_, {"queue 0, other slot", f, V::pass, {}, {XO_GNV_CNT_NO_TARGET}, kVniXsk, nullptr,
					 ifx, 0});
			env_->xsk_at(xo_gnv_xsk_slot(0, h + 1, 4), -1);
		}
	});
}

} // namespace
} // namespace xoffload::test
