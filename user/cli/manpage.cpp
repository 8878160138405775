// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// offload-tool(8) and offload-tool-COMMAND(8) from the CLI11 app (manpage.hpp).
#include "manpage.hpp"

namespace xoffload::cli {

#ifndef XO_DOC_DATE
#define XO_DOC_DATE "1970-01-01"
#endif

namespace {

std::vector<const CLI::App *> subs(const CLI::App *a)
{
	return a->get_subcommands([](const CLI::App *) { return true; });
}

} // namespace

std::vector<CommandNode> command_tree(const CLI::App *a, const std::string &path)
{
	std::vector<CommandNode> out{{path, a}};
	for (const CLI::App *s : subs(a)) {
		auto t = command_tree(s, path.empty() ? s->get_name() : path + " " + s->get_name());
		out.insert(out.end(), t.begin(), t.end());
	}
	return out;
}

bool is_flag(const CLI::Option *o)
{
	return o->get_expected_max() == 0;	// add_flag: expected(0)
}

std::vector<std::string> value_set(const CLI::Option *o)
{
	std::vector<std::string> v;
	const std::string t = o->get_type_name();
	const size_t b = t.find(":{"), e = t.find('}', b);
	if (b == std::string::npos || e == std::string::npos)
		return v;
	std::string cur;
	for (size_t i = b + 2; i < e; i++) {
		if (t[i] == ',') {
			v.push_back(cur);
			cur.clear();
		} else {
			cur += t[i];
		}
	}
	if (!cur.empty())
		v.push_back(cur);
	return v;
}

std::vector<std::string> option_names(const CLI::Option *o)
{
	std::vector<std::string> n;
	for (const auto &s : o->get_snames())
		n.push_back("-" + s);
	for (const auto &l : o->get_lnames())
		n.push_back("--" + l);
	return n;
}

namespace {


// Text for roff: backslashes and hyphens escaped, a leading . or ' kept literal.
std::string roff(const std::string &s)
{
	std::string o;
	for (size_t i = 0; i < s.size(); i++) {
		const char c = s[i];
		if (c == '\\')
			o += "\\e";
		else if (c == '-')
			o += "\\-";
		else if ((c == '.' || c == '\'') && (i == 0 || s[i - 1] == '\n'))
			o += std::string("\\&") + c;
		else
			o += c;
	}
	return o;
}

std::string upper(std::string s)
{
	for (char &c : s)
		if (c >= 'a' && c <= 'z')
			c = static_cast<char>(c - 'a' + 'A');
	return s;
}

std::string option_head(const CLI::Option *o)
{
	std::string h;
	for (const auto &n : option_names(o))
		h += (h.empty() ? "" : ", ") + std::string("\\fB") + roff(n) + "\\fR";
	if (!is_flag(o)) {
		std::string v;
		for (const auto &x : value_set(o))
			v += (v.empty() ? "" : "|") + x;
		std::string type = o->get_type_name();
		type = type.substr(0, type.find(':'));
		h += " \\fI" + roff(v.empty() ? type : v) + "\\fR";
	}
	return h;
}

std::string header(const std::string &title, const std::string &date, const std::string &version)
{
	return std::string(".\\\" SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause\n"
			   ".\\\" Generated from offload-tool's CLI11 definitions (user/cli/manpage.cpp): do not edit.\n") +
	       ".TH " + upper(title) + " 8 \"" + date + "\" \"xoffload " + version + "\" \"System Administration\"\n";
}

// One .SS per command of the subtree at @c: usage, description, every
// positional and option with its default.
std::string sections(const CLI::App *app, const std::string &path)
{
	std::string out;
	for (const CommandNode &k : command_tree(app, path)) {
		std::string usage;
		for (const CLI::Option *o : k.app->get_options())
			if (o->get_positional())
				usage += " " + std::string(o->get_required() ? "\\fI" : "[\\fI") + roff(o->get_name(true)) +
					 (o->get_required() ? "\\fR" : "\\fR]");
		if (!subs(k.app).empty())
			usage += " \\fICOMMAND\\fR";
		out += ".SS \"offload-tool " + k.path + "\"\n";
		out += "\\fBoffload\\-tool " + roff(k.path) + "\\fR" + usage + "\n.PP\n" +
		       roff(k.app->get_description()) + "\n";
		for (const CLI::Option *o : k.app->get_options()) {
			if (o->get_lnames().size() == 1 && o->get_lnames()[0] == "help")
				continue;
			if (o->get_positional())
				out += ".TP\n\\fI" + roff(o->get_name(true)) + "\\fR\n" + roff(o->get_description()) + "\n";
			else
				out += ".TP\n" + option_head(o) + "\n" + roff(o->get_description()) +
				       (o->get_default_str().empty() ? "" : " (default: " + roff(o->get_default_str()) + ")") +
				       "\n";
		}
	}
	return out;
}

std::string examples_section(const std::vector<std::string> &lines)
{
	if (lines.empty())
		return {};
	std::string out = ".SH EXAMPLES\n.nf\n";
	for (const std::string &l : lines)
		out += roff(l) + "\n";
	return out + ".fi\n";
}

constexpr const char *kExitStatus =
	".SH EXIT STATUS\n.TP\n.B 0\nSuccess.\n.TP\n.B 1\nA runtime failure: a fact of the system (a device "
	"that does not exist, nothing attached, a kernel that refuses). One line on stderr names it.\n"
	".TP\n.B 2\nBad usage: what the command line alone shows wrong (a value out of range, a missing or "
	"unknown option, options that exclude each other). One line on stderr names the option or value. "
	"Under \\fB\\-\\-json\\fR the error is also a JSON object on stdout: "
	"{\"error\":\"...\",\"exit_code\":N}.\n";

} // namespace

const char *man_date() noexcept
{
	return XO_DOC_DATE;
}

std::vector<std::string> man_commands(const CLI::App &app)
{
	std::vector<std::string> v;
	for (const CLI::App *s : subs(&app))
		v.push_back(s->get_name());
	return v;
}

std::vector<std::string> command_examples(const CLI::App &cmd)
{
	std::vector<std::string> out;
	const std::string f = cmd.get_footer();
	size_t at = f.find("Examples:");
	if (at == std::string::npos)
		return out;
	size_t pos = f.find('\n', at);
	while (pos != std::string::npos && pos + 1 < f.size()) {
		size_t end = f.find('\n', pos + 1);
		std::string line = f.substr(pos + 1, end == std::string::npos ? std::string::npos : end - pos - 1);
		pos = end;
		size_t b = line.find_first_not_of(' ');
		if (b == std::string::npos || line.compare(b, 13, "offload-tool ") != 0)
			continue;
		line = line.substr(b);
		size_t hash = line.find("  #");
		if (hash != std::string::npos)
			line = line.substr(0, hash);
		while (!line.empty() && line.back() == ' ')
			line.pop_back();
		out.push_back(line);
	}
	return out;
}

std::string man_overview(const CLI::App &app, const std::string &date, const std::string &version)
{
	std::string m = header("offload-tool", date, version);
	m += ".SH NAME\noffload-tool \\- " + roff(app.get_description()) + "\n";
	m += ".SH SYNOPSIS\n.B offload-tool\n[\\fIGLOBAL OPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGUMENTS\\fR]\n";
	m += ".SH DESCRIPTION\n"
	     "offload-tool attaches xoffload's XDP and TC programs (VLAN tag pop, push and rewrite; Geneve port "
	     "classification, per-VNI rules, decap and steering), configures them through their pinned maps, "
	     "sends and receives through AF_XDP sockets with software segmentation (TSO, USO, UFO) and "
	     "checksums, and models which offloads a device stack keeps.\n"
	     ".PP\nEach command has its own page, \\fBoffload\\-tool\\-\\fR\\fICOMMAND\\fR(8), also shown by "
	     "\\fBoffload\\-tool help\\fR \\fICOMMAND\\fR; every command takes \\fB\\-\\-help\\fR. Pins live "
	     "under \\fI/sys/fs/bpf/xoffload\\fR; use \\fB\\-n\\fR \\fINETNS\\fR rather than \\fBip netns "
	     "exec\\fR, which hides bpffs.\n";
	m += ".SH GLOBAL OPTIONS\n";
	for (const CLI::Option *o : app.get_options())
		if (!o->get_positional())
			m += ".TP\n" + option_head(o) + "\n" + roff(o->get_description()) + "\n";
	m += ".SH COMMANDS\n";
	for (const CLI::App *s : subs(&app))
		m += ".TP\n\\fBoffload\\-tool\\-" + roff(s->get_name()) + "\\fR(8)\n" + roff(s->get_description()) +
		     "\n";
	m += kExitStatus;
	m += ".SH FILES\n.TP\n.I /sys/fs/bpf/xoffload/IFNAME@NETNS/\n"
	     "The pinned maps and links of one device (the VLAN policy and counters, the Geneve registry, "
	     "rules and counters); removed by \\fBoffload\\-tool detach\\fR. \\fBdetach \\-\\-all\\-orphans\\fR "
	     "removes those of devices that no longer exist.\n"
	     ".TP\n.I /usr/lib/*/xoffload/bpf/*.bpf.o\n"
	     "The BPF objects, for \\fBxdp\\-loader\\fR(8) and \\fBip\\fR(8); offload\\-tool carries its own "
	     "copies and reads no file.\n";
	std::vector<std::string> ex;
	for (const CLI::App *s : subs(&app)) {
		const auto e = command_examples(*s);
		if (!e.empty())
			ex.push_back(e.front());
	}
	m += examples_section(ex);
	m += ".SH SEE ALSO\n";
	for (const CLI::App *s : subs(&app))
		m += "\\fBoffload\\-tool\\-" + roff(s->get_name()) + "\\fR(8), ";
	m += "\\fBxoffload.toml\\fR(5), \\fBxdp\\-loader\\fR(8), \\fBbpftool\\fR(8), \\fBip\\-link\\fR(8), \\fBethtool\\fR(8), "
	     "\\fBtc\\-bpf\\fR(8)\n";
	return m;
}

std::string man_command(const CLI::App &app, const std::string &command, const std::string &date,
			const std::string &version)
{
	const CLI::App *cmd = nullptr;
	for (const CLI::App *s : subs(&app))
		if (s->get_name() == command)
			cmd = s;
	if (!cmd)
		return {};
	const std::string name = "offload-tool-" + command;
	std::string m = header(name, date, version);
	m += ".SH NAME\n" + roff(name) + " \\- " + roff(cmd->get_description()) + "\n";
	m += ".SH SYNOPSIS\n.B offload-tool\n[\\fIGLOBAL OPTIONS\\fR] \\fB" + roff(command) + "\\fR";
	for (const CLI::Option *o : cmd->get_options())
		if (o->get_positional())
			m += " " + std::string(o->get_required() ? "\\fI" : "[\\fI") + roff(o->get_name(true)) +
			     (o->get_required() ? "\\fR" : "\\fR]");
	m += subs(cmd).empty() ? " [\\fIOPTIONS\\fR]\n" : " \\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n";
	m += ".SH DESCRIPTION\n" + roff(cmd->get_description()) +
	     ".\n.PP\nThe global options (\\fB\\-\\-json\\fR, \\fB\\-\\-pretty\\fR, \\fB\\-v\\fR, \\fB\\-n\\fR "
	     "\\fINETNS\\fR) go before the command; see \\fBoffload\\-tool\\fR(8).\n";
	m += subs(cmd).empty() ? ".SH OPTIONS\n" : ".SH COMMANDS\n";
	m += sections(cmd, command);
	m += examples_section(command_examples(*cmd));
	m += kExitStatus;
	m += ".SH SEE ALSO\n\\fBoffload\\-tool\\fR(8)";
	for (const CLI::App *s : subs(&app))
		if (s != cmd)
			m += ", \\fBoffload\\-tool\\-" + roff(s->get_name()) + "\\fR(8)";
	m += "\n";
	return m;
}

} // namespace xoffload::cli
