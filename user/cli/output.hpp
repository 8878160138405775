// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Output helpers shared by the subcommands: a small JSON writer and the
// global options every subcommand sees.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "xoffload/abi.h"
#include "xoffload/core/result.hpp"

namespace xoffload::cli {

struct Globals {
	bool json = false;
	int verbose = 0;
	std::string netns;
};

// Exit codes: 0 ok, 1 runtime failure, 2 bad usage.
int report(const Error &e);

// One line of a `stats` table: @name padded to @width, then totals, or the
// rates over @rate_dt seconds when that is > 0.
void print_counter_line(const char *name, int width, uint64_t packets, uint64_t bytes, double rate_dt);


// Builds one JSON document; keys and values are escaped.
class Json {
public:
	Json &begin_object(std::string_view key = {});
	Json &end_object();
	Json &begin_array(std::string_view key = {});
	Json &end_array();
	Json &kv(std::string_view key, std::string_view v);
	Json &kv(std::string_view key, const char *v) { return kv(key, std::string_view(v)); }
	Json &kv(std::string_view key, uint64_t v);
	Json &kv(std::string_view key, int v) { return kv(key, static_cast<int64_t>(v)); }
	Json &kv(std::string_view key, unsigned v) { return kv(key, static_cast<uint64_t>(v)); }
	Json &kv(std::string_view key, int64_t v);
	Json &kv(std::string_view key, double v);
	Json &kv(std::string_view key, bool v);
	Json &value(std::string_view v);
	Json &value(uint64_t v);
	const std::string &str() const { return s_; }
	void print() const { std::printf("%s\n", s_.c_str()); std::fflush(stdout); }

private:
	void key(std::string_view k);
	void sep();
	static std::string quote(std::string_view s);
	std::string s_;
	std::vector<bool> first_{true};
};

// The counters of one set, less @prev's when given (then as rates over
// @rate_dt seconds): text lines, left out when they did not move unless
// @all, or one JSON object per counter. @name(r) names counter r.
template <size_t N, typename Name>
void print_counter_set(const std::array<xo_counter, N> &c, const std::array<xo_counter, N> *prev, Name &&name,
		       int width, bool all, double rate_dt)
{
	for (unsigned r = 0; r < N; r++) {
		uint64_t p = c[r].packets - (prev ? (*prev)[r].packets : 0);
		uint64_t b = c[r].bytes - (prev ? (*prev)[r].bytes : 0);
		if (p || all)
			print_counter_line(name(r), width, p, b, prev ? rate_dt : 0);
	}
}

template <size_t N, typename Name>
void json_counter_set(Json &j, const std::array<xo_counter, N> &c, const std::array<xo_counter, N> *prev,
		      Name &&name)
{
	for (unsigned r = 0; r < N; r++)
		j.begin_object(name(r))
			.kv("packets", uint64_t{c[r].packets - (prev ? (*prev)[r].packets : 0)})
			.kv("bytes", uint64_t{c[r].bytes - (prev ? (*prev)[r].bytes : 0)})
			.end_object();
}

} // namespace xoffload::cli
