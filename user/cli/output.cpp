// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// JSON writer and error reporting for offload-tool.
#include "output.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <ctime>

#include <nlohmann/json.hpp>

namespace xoffload::cli {

namespace {
const Globals *g_out = nullptr;
} // namespace

void bind_output(const Globals *g)
{
	g_out = g;
}

int report_error(const std::string &msg, int exit_code, bool json)
{
	// the line on stderr either way (people read it); under --json also
	// the object on stdout (programs read that)
	if (json) {
		Json j;
		j.begin_object().kv("error", msg).kv("exit_code", exit_code).end_object().print();
	}
	std::fprintf(stderr, "offload-tool: %s\n", msg.c_str());
	return exit_code;
}

int report(const Error &e)
{
	return report_error(e.msg, e.kind == ErrorKind::usage ? 2 : 1, g_out && g_out->json);
}


Status apply_format(Globals &g, const std::string &format, bool watch)
{
	if (format == "json")
		g.json = true;
	if (format != "prometheus")
		return ok();
	if (g.json)
		return usage_error("--format prometheus and --json are two formats: give one");
	if (watch)
		return usage_error("--format prometheus prints one snapshot (a textfile for node_exporter): drop --interval "
				   "and run it from cron or a systemd timer");
	g.prometheus = true;
	return ok();
}

double sample_time()
{
	timespec ts{};
	clock_gettime(CLOCK_REALTIME, &ts);
	return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::string sample_clock()
{
	const time_t t = time(nullptr);
	tm lt{};
	char b[16];
	if (!localtime_r(&t, &lt) || !strftime(b, sizeof(b), "%H:%M:%S", &lt))
		return "?";
	return b;
}

struct Json::Impl {
	nlohmann::ordered_json root;
	std::vector<nlohmann::ordered_json *> open;	// the containers not yet ended, innermost last

	// a new value in the innermost container: by key in an object, appended
	// to an array; the first value is the document
	nlohmann::ordered_json &add(std::string_view key, nlohmann::ordered_json v)
	{
		if (open.empty()) {
			root = std::move(v);
			return root;
		}
		nlohmann::ordered_json &c = *open.back();
		if (c.is_array()) {
			c.push_back(std::move(v));
			return c.back();
		}
		// one key style, snake_case: the names users type (hooks, counter
		// reasons: "tc-egress", "dropped-not-allowed") become tc_egress and
		// dropped_not_allowed as keys; values keep the typed form
		std::string k(key);
		std::replace(k.begin(), k.end(), '-', '_');
		return c[k] = std::move(v);
	}
};

Json::Json() : d_(std::make_unique<Impl>()) {}
Json::~Json() = default;

Json &Json::begin_object(std::string_view k)
{
	d_->open.push_back(&d_->add(k, nlohmann::ordered_json::object()));
	return *this;
}

Json &Json::end_object()
{
	d_->open.pop_back();
	return *this;
}

Json &Json::begin_array(std::string_view k)
{
	d_->open.push_back(&d_->add(k, nlohmann::ordered_json::array()));
	return *this;
}

Json &Json::end_array()
{
	d_->open.pop_back();
	return *this;
}

Json &Json::kv(std::string_view k, std::string_view v)
{
	d_->add(k, std::string(v));
	return *this;
}

Json &Json::kv(std::string_view k, uint64_t v)
{
	d_->add(k, v);
	return *this;
}

Json &Json::kv(std::string_view k, int64_t v)
{
	d_->add(k, v);
	return *this;
}

Json &Json::kv(std::string_view k, double v)
{
	if (std::isfinite(v))
		d_->add(k, v);
	else
		d_->add(k, nullptr);
	return *this;
}

Json &Json::kv(std::string_view k, bool v)
{
	d_->add(k, v);
	return *this;
}

Json &Json::array(std::string_view k, const std::vector<uint32_t> &v)
{
	d_->add(k, v);
	return *this;
}

Json &Json::null(std::string_view k)
{
	d_->add(k, nullptr);
	return *this;
}

Json &Json::value(std::string_view v)
{
	d_->add({}, std::string(v));
	return *this;
}

Json &Json::value(uint64_t v)
{
	d_->add({}, v);
	return *this;
}

std::string Json::str(bool pretty) const
{
	// a name or a path that is not UTF-8 is printed with U+FFFD, not thrown at
	return d_->root.dump(pretty ? 2 : -1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void Json::print() const
{
	std::printf("%s\n", str(g_out && g_out->pretty).c_str());
	std::fflush(stdout);
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
