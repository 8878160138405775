// Output helpers shared by the subcommands: a small JSON writer and the
// global options every subcommand sees.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "xoffload/result.hpp"

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

} // namespace xoffload::cli
