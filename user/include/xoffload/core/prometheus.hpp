// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The Prometheus text exposition format (0.0.4), as node_exporter's textfile
// collector reads it: `--format prometheus` of vlan stats, geneve stats, send
// and recv, and the agent's /metrics. One # HELP and # TYPE per family, its
// samples after them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xoffload {

class Prom {
public:
	using Labels = std::vector<std::pair<std::string_view, std::string>>;
	// @labels on every sample that follows (e.g. netns and ifname)
	explicit Prom(Labels common) : common_(std::move(common)) {}
	// Starts a family: @type "counter" (the name ends in _total) or "gauge".
	Prom &family(std::string_view name, std::string_view type, std::string_view help);
	// A sample of the current family, the common labels first.
	Prom &sample(const Labels &labels, uint64_t v);
	Prom &sample(const Labels &labels, double v);
	const std::string &str() const { return s_; }
	void print() const;

private:
	void head(const Labels &labels);
	std::string s_, name_;
	Labels common_;
};

// A label value with \, " and newline escaped.
std::string prom_escape(std::string_view v);

} // namespace xoffload
