// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The Prometheus text exposition format (xoffload/core/prometheus.hpp).
#include "xoffload/core/prometheus.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace xoffload {

std::string prom_escape(std::string_view v)
{
	std::string o;
	for (char c : v) {
		if (c == '\\')
			o += "\\\\";
		else if (c == '"')
			o += "\\\"";
		else if (c == '\n')
			o += "\\n";
		else
			o += c;
	}
	return o;
}

Prom &Prom::family(std::string_view name, std::string_view type, std::string_view help)
{
	name_ = name;
	// HELP escapes \ and newline only
	std::string h;
	for (char c : help)
		h += c == '\\' ? std::string("\\\\") : c == '\n' ? std::string("\\n") : std::string(1, c);
	s_ += "# HELP " + name_ + " " + h + "\n# TYPE " + name_ + " " + std::string(type) + "\n";
	return *this;
}

void Prom::head(const Labels &labels)
{
	s_ += name_;
	bool first = true;
	for (const Labels *set : {static_cast<const Labels *>(&common_), &labels})
		for (const auto &[k, v] : *set) {
			s_ += first ? "{" : ",";
			first = false;
			s_ += std::string(k) + "=\"" + prom_escape(v) + "\"";
		}
	if (!first)
		s_ += "}";
	s_ += " ";
}

Prom &Prom::sample(const Labels &labels, uint64_t v)
{
	head(labels);
	s_ += std::to_string(v) + "\n";
	return *this;
}

Prom &Prom::sample(const Labels &labels, double v)
{
	head(labels);
	char b[48];
	if (std::isnan(v))
		std::snprintf(b, sizeof(b), "NaN");
	else if (std::isinf(v))
		std::snprintf(b, sizeof(b), v > 0 ? "+Inf" : "-Inf");
	else
		std::snprintf(b, sizeof(b), "%.9g", v);
	s_ += std::string(b) + "\n";
	return *this;
}

void Prom::print() const
{
	std::fputs(s_.c_str(), stdout);
	std::fflush(stdout);
}

} // namespace xoffload
