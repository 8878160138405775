// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The Prometheus text format of the CLI's counters: the renderer lives in
// core (the agent's /metrics uses it too); the families of vlan stats and
// geneve stats are written here once, for one interface or for many.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "xoffload/core/prometheus.hpp"
#include "xoffload/geneve/geneve.hpp"
#include "xoffload/vlan/vlan.hpp"

namespace xoffload::cli {

using xoffload::Prom;
using xoffload::prom_escape;

// Each family once, a sample per row and counter; a row's labels (netns,
// ifname) go before the counter's own (hook, reason, vni).
void prom_vlan_counters(Prom &p, const std::vector<std::pair<Prom::Labels, VlanCounters>> &rows);
void prom_geneve_counters(Prom &p, const std::vector<std::pair<Prom::Labels, GeneveCounters>> &rows);

} // namespace xoffload::cli
