// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// apply, config show, config check: the declarative configuration
// (xoffload.toml(5)) validated, planned against what runs, and applied.
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "xoffload/config/config.hpp"
#include "xoffload/config/config_model.hpp"

namespace xoffload::cli {

namespace {

const char *kind_name(config::Step::Kind k)
{
	switch (k) {
	case config::Step::Kind::attach: return "attach";
	case config::Step::Kind::change: return "change";
	default: return "detach";
	}
}

void plan_json(Json &j, const config::Plan &p, size_t done)
{
	j.begin_array("steps");
	for (size_t i = 0; i < p.steps.size(); i++) {
		const auto &s = p.steps[i];
		j.begin_object().kv("interface", s.ifname).kv("kind", kind_name(s.kind)).kv("step", s.text)
			.kv("done", i < done).end_object();
	}
	j.end_array().begin_array("skipped");
	for (const auto &s : p.skipped)
		j.value(s);
	j.end_array();
}

void plan_text(const config::Plan &p)
{
	for (const auto &s : p.steps)
		std::printf("  %s: %s\n", s.ifname.c_str(), s.text.c_str());
	for (const auto &s : p.skipped)
		std::printf("  skipped %s\n", s.c_str());
}

int apply_cmd(const Globals &g, const std::string &file, bool dry_run, bool keep_undeclared)
{
	// the whole file first: a bad one changes nothing, reads nothing
	auto c = config::load(file);
	if (!c)
		return report(c.error());
	if (auto s = prepare(g); !s)
		return report(s.error());
	auto p = config::plan(**c, std::nullopt, keep_undeclared);
	if (!p)
		return report(p.error());
	if (p->empty()) {
		if (g.json) {
			Json j;
			j.begin_object().kv("file", file).kv("dry_run", dry_run).kv("changed", false);
			plan_json(j, *p, 0);
			j.end_object().print();
		} else {
			std::printf("nothing to do: the running state matches %s\n", file.c_str());
			for (const auto &s : p->skipped)
				std::printf("  skipped %s\n", s.c_str());
		}
		return 0;
	}
	if (dry_run) {
		if (g.json) {
			Json j;
			j.begin_object().kv("file", file).kv("dry_run", true).kv("changed", false);
			plan_json(j, *p, 0);
			j.end_object().print();
		} else {
			std::printf("plan for %s (%zu step%s; --dry-run: nothing changed):\n", file.c_str(), p->steps.size(),
				    p->steps.size() == 1 ? "" : "s");
			plan_text(*p);
		}
		return 0;
	}
	if (!g.json) {
		std::printf("plan for %s (%zu step%s):\n", file.c_str(), p->steps.size(), p->steps.size() == 1 ? "" : "s");
		plan_text(*p);
		std::fflush(stdout);
	}
	// step by step, to say how far it came when one fails
	size_t done = 0;
	Status st = ok();
	for (const auto &s : p->steps) {
		config::Plan one;
		one.steps.push_back(s);
		st = config::apply(one, **c);
		if (!st)
			break;
		done++;
	}
	if (g.json && st) {
		Json j;
		j.begin_object().kv("file", file).kv("dry_run", false).kv("changed", true);
		plan_json(j, *p, done);
		j.end_object().print();
	}
	if (!st) {
		if (!g.json)
			std::printf("%zu of %zu steps done; apply again to finish once the cause is fixed\n", done,
				    p->steps.size());
		return report(st.error());
	}
	if (!g.json)
		std::printf("applied %zu step%s\n", done, done == 1 ? "" : "s");
	return 0;
}

} // namespace

void add_config_commands(CLI::App &app, Globals &g, int &rc)
{
	struct ApplyOpts {
		std::string file = config::kDefaultPath;
		bool dry_run = false, keep_undeclared = false;
	};
	auto o = std::make_shared<ApplyOpts>();
	auto *a = app.add_subcommand("apply", "Make the interfaces what a config file (xoffload.toml(5)) declares");
	a->add_option("-f,--file", o->file, std::string("The file (default ") + config::kDefaultPath + ")");
	a->add_flag("--dry-run", o->dry_run, "Validate and print the plan; change nothing");
	a->add_flag("--keep-undeclared", o->keep_undeclared,
		    "Leave alone interfaces with programs of ours that the file does not declare (default: detach "
		    "them, in this netns and those the file names)");
	a->callback([&g, &rc, o] { rc = apply_cmd(g, o->file, o->dry_run, o->keep_undeclared); });

	auto *c = app.add_subcommand("config", "The running state as a config file, and a file's validation");
	c->require_subcommand(1);
	c->fallthrough();
	auto *show = c->add_subcommand("show", "Print the running state as xoffload.toml(5) (apply -f of it is a no-op)");
	show->fallthrough();
	show->callback([&g, &rc] {
		if (auto s = prepare(g); !s) {
			rc = report(s.error());
			return;
		}
		auto t = config::show();
		if (!t) {
			rc = report(t.error());
			return;
		}
		if (g.json)
			Json().begin_object().kv("config", *t).end_object().print();
		else
			std::fputs(t->c_str(), stdout);
	});
	auto file = std::make_shared<std::string>(config::kDefaultPath);
	auto *check = c->add_subcommand("check", "Validate a config file without reading or changing the system");
	check->fallthrough();
	check->add_option("-f,--file", *file, std::string("The file (default ") + config::kDefaultPath + ")");
	check->callback([&g, &rc, file] {
		auto cfg = config::load(*file);
		if (!cfg) {
			rc = report(cfg.error());
			return;
		}
		const size_t n = (*cfg)->interfaces.size();
		if (g.json)
			Json().begin_object().kv("file", *file).kv("valid", true).kv("interfaces", uint64_t{n})
				.end_object().print();
		else
			std::printf("%s: valid\n", file->c_str());
	});
}

} // namespace xoffload::cli
