// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// JSON writer and error reporting for offload-tool.
#include "output.hpp"

#include <cinttypes>

namespace xoffload::cli {

int report(const Error &e)
{
	std::fprintf(stderr, "offload-tool: %s\n", e.msg.c_str());
	return e.kind == ErrorKind::usage ? 2 : 1;
}

std::string Json::quote(std::string_view s)
{
	std::string o = "\"";
	for (char c : s) {
		switch (c) {
		case '"': o += "\\\""; break;
		case '\\': o += "\\\\"; break;
		case '\n': o += "\\n"; break;
		case '\t': o += "\\t"; break;
		default:
			if (static_cast<unsigned char>(c) < 0x20) {
				char b[8];
				std::snprintf(b, sizeof(b), "\\u%04x", c);
				o += b;
			} else {
				o += c;
			}
		}
	}
	return o + "\"";
}

void Json::sep()
{
	if (!first_.back())
		s_ += ",";
	first_.back() = false;
}

void Json::key(std::string_view k)
{
	sep();
	if (!k.empty())
		s_ += quote(k) + ":";
}

Json &Json::begin_object(std::string_view k)
{
	key(k);
	s_ += "{";
	first_.push_back(true);
	return *this;
}

Json &Json::end_object()
{
	s_ += "}";
	first_.pop_back();
	return *this;
}

Json &Json::begin_array(std::string_view k)
{
	key(k);
	s_ += "[";
	first_.push_back(true);
	return *this;
}

Json &Json::end_array()
{
	s_ += "]";
	first_.pop_back();
	return *this;
}

Json &Json::kv(std::string_view k, std::string_view v)
{
	key(k);
	s_ += quote(v);
	return *this;
}

Json &Json::kv(std::string_view k, uint64_t v)
{
	key(k);
	s_ += std::to_string(v);
	return *this;
}

Json &Json::kv(std::string_view k, int64_t v)
{
	key(k);
	s_ += std::to_string(v);
	return *this;
}

Json &Json::kv(std::string_view k, double v)
{
	key(k);
	char b[32];
	std::snprintf(b, sizeof(b), "%.6g", v);
	s_ += b;
	return *this;
}

Json &Json::kv(std::string_view k, bool v)
{
	key(k);
	s_ += v ? "true" : "false";
	return *this;
}

Json &Json::value(std::string_view v)
{
	sep();
	s_ += quote(v);
	return *this;
}

Json &Json::value(uint64_t v)
{
	sep();
	s_ += std::to_string(v);
	return *this;
}

void print_counter_line(const char *name, int width, uint64_t packets, uint64_t bytes, double rate_dt)
{
	if (rate_dt > 0)
		std::printf("  %-*s %12.0f pps %14.0f bps\n", width, name, static_cast<double>(packets) / rate_dt,
			    static_cast<double>(bytes) * 8 / rate_dt);
	else
		std::printf("  %-*s %12" PRIu64 " pkts %14" PRIu64 " bytes\n", width, name, packets, bytes);
}

} // namespace xoffload::cli
