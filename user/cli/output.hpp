// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Output helpers shared by the subcommands: a small JSON writer and the
// global options every subcommand sees.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xoffload/abi.h"
#include "xoffload/core/result.hpp"

namespace xoffload::cli {

struct Globals {
	bool json = false;	// -j/--json (and -p/--pretty)
	bool pretty = false;	// -p/--pretty: indented JSON
	bool prometheus = false;	// --format prometheus (stats, send, recv)
	int verbose = 0;
	std::string netns;
};

// The options output follows (JSON or text, indented or not), read when
// something is printed: build_app binds the Globals the parse fills.
void bind_output(const Globals *g);

// Exit codes: 0 ok, 1 runtime failure, 2 bad usage. The error goes to
// stderr as "offload-tool: MSG"; under --json also to stdout as
// {"error":"MSG","exit_code":N} (bpftool's object).
int report(const Error &e);
// The same for an error found before the Globals were filled (a parse
// error): @json says whether JSON was asked for on the command line.
int report_error(const std::string &msg, int exit_code, bool json);

// One line of a `stats` table: @name padded to @width, then totals, or the
// rates over @rate_dt seconds when that is > 0.
void print_counter_line(const char *name, int width, uint64_t packets, uint64_t bytes, double rate_dt);


// Builds one JSON document (nlohmann::ordered_json underneath: keys keep
// the order they were written in), keys in snake_case ('-' becomes '_').
class Json {
public:
	Json();
	~Json();
	Json(const Json &) = delete;
	Json &operator=(const Json &) = delete;
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
	Json &kv(std::string_view key, double v);	// not finite: null
	Json &kv(std::string_view key, bool v);
	Json &null(std::string_view key);
	// "key":[n,...]
	Json &array(std::string_view key, const std::vector<uint32_t> &v);
	Json &value(std::string_view v);
	Json &value(uint64_t v);
	// the document, on one line or indented by two spaces a level
	std::string str(bool pretty = false) const;
	// prints the document, indented under -p/--pretty
	void print() const;

private:
	struct Impl;
	std::unique_ptr<Impl> d_;
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

// One JSON object per counter: {"packets":N,"bytes":N}; in watch mode
// (@prev given) the rates over @rate_dt seconds in the text's units,
// {"packets_per_s":X,"bits_per_s":X}.
template <size_t N, typename Name>
void json_counter_set(Json &j, const std::array<xo_counter, N> &c, const std::array<xo_counter, N> *prev,
		      Name &&name, double rate_dt = 0)
{
	for (unsigned r = 0; r < N; r++) {
		const uint64_t p = c[r].packets - (prev ? (*prev)[r].packets : 0);
		const uint64_t b = c[r].bytes - (prev ? (*prev)[r].bytes : 0);
		j.begin_object(name(r));
		if (prev && rate_dt > 0)
			j.kv("packets_per_s", static_cast<double>(p) / rate_dt)
				.kv("bits_per_s", static_cast<double>(b) * 8 / rate_dt);
		else
			j.kv("packets", p).kv("bytes", b);
		j.end_object();
	}
}

// Wall-clock time of a watch-mode sample: seconds since the epoch (JSON
// "timestamp") and HH:MM:SS (the text's sample header).
double sample_time();
std::string sample_clock();

} // namespace xoffload::cli
