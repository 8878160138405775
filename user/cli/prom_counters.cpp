// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The counter families of vlan stats and geneve stats in the Prometheus text
// format, written once for `--format prometheus` and the agent's /metrics.
#include "geneve_cli.hpp"
#include "prometheus.hpp"
#include "xoffload/core/hook.hpp"

namespace xoffload::cli {

namespace {
// @rows' labels, then @more
Prom::Labels with(const Prom::Labels &row, Prom::Labels more)
{
	Prom::Labels l = row;
	l.insert(l.end(), more.begin(), more.end());
	return l;
}
} // namespace

void prom_vlan_counters(Prom &p, const std::vector<std::pair<Prom::Labels, VlanCounters>> &rows)
{
	for (const bool bytes : {false, true}) {
		p.family(bytes ? "xoffload_vlan_bytes_total" : "xoffload_vlan_packets_total", "counter",
			 bytes ? "Bytes of the frames the VLAN programs counted, by hook and reason (vlan stats)"
			       : "Frames the VLAN programs counted, by hook and reason (vlan stats)");
		for (const auto &[labels, c] : rows)
			for (unsigned h = 0; h < kHooks; h++)
				for (unsigned r = 0; r < kVlanStats; r++)
					p.sample(with(labels, {{"hook", to_string(static_cast<Hook>(h))},
							       {"reason", vlan_counter_name(r)}}),
						 uint64_t{bytes ? c.v[h][r].bytes : c.v[h][r].packets});
	}
}

void prom_geneve_counters(Prom &p, const std::vector<std::pair<Prom::Labels, GeneveCounters>> &rows)
{
	for (const bool bytes : {false, true}) {
		p.family(bytes ? "xoffload_geneve_bytes_total" : "xoffload_geneve_packets_total", "counter",
			 bytes ? "Bytes of the frames xdp_geneve counted, by reason (geneve stats)"
			       : "Frames xdp_geneve counted, by reason (geneve stats)");
		for (const auto &[labels, c] : rows)
			for (unsigned r = 0; r < kGeneveStats; r++)
				p.sample(with(labels, {{"reason", geneve_counter_name(r)}}),
					 uint64_t{bytes ? c.total[r].bytes : c.total[r].packets});
	}
	for (const bool bytes : {false, true}) {
		p.family(bytes ? "xoffload_geneve_vni_bytes_total" : "xoffload_geneve_vni_packets_total", "counter",
			 bytes ? "Bytes of the frames xdp_geneve counted per VNI (vni=\"default\": VNIs without a "
				 "rule), by reason"
			       : "Frames xdp_geneve counted per VNI (vni=\"default\": VNIs without a rule), by reason");
		for (const auto &[labels, c] : rows)
			for (const auto &[vni, s] : c.per_vni)
				for (unsigned r = 0; r < kGeneveStats; r++)
					p.sample(with(labels, {{"vni", vni_str(vni)}, {"reason", geneve_counter_name(r)}}),
						 uint64_t{bytes ? s[r].bytes : s[r].packets});
	}
}

} // namespace xoffload::cli
