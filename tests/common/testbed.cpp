// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Command runner and veth testbed owner for the integration tests; the
// signal handler below only uses async-signal-safe calls (kill, fork,
// execv, waitpid) on data prepared before it was armed.
#include "testbed.hpp"


#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <sstream>

namespace xoffload::test {

namespace {

// ---- registry seen by the signal handler ------------------------------------

constexpr int kSlots = 16;

struct TestbedSlot {
	volatile sig_atomic_t used;
	char script[PATH_MAX];
	char name[64];
};
struct ChildSlot {
	volatile sig_atomic_t pid;	// process group leader, 0 = free
};

TestbedSlot g_testbeds[kSlots];
ChildSlot g_children[64];

// Registry updates run with the signals blocked, so the handler never sees
// half-written slots.
class SignalsBlocked {
public:
	SignalsBlocked()
	{
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, SIGINT);
		sigaddset(&s, SIGTERM);
		sigprocmask(SIG_BLOCK, &s, &old_);
	}
	~SignalsBlocked() { sigprocmask(SIG_SETMASK, &old_, nullptr); }

private:
	sigset_t old_;
};

void on_fatal_signal(int sig)
{
	for (auto &c : g_children)
		if (c.pid > 0)
			kill(-c.pid, SIGKILL);
	for (auto &t : g_testbeds) {
		if (!t.used)
			continue;
		pid_t pid = fork();
		if (pid == 0) {
			char down[] = "down";
			char *argv[] = {t.script, down, t.name, nullptr};
			int devnull = open("/dev/null", O_WRONLY);
			if (devnull >= 0)
				dup2(devnull, STDOUT_FILENO);
			execv(t.script, argv);
			_exit(127);
		}
		if (pid > 0)
			while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
			}
		t.used = 0;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void install_handler_once()
{
	static std::once_flag once;
	std::call_once(once, [] {
		struct sigaction sa {};
		sa.sa_handler = on_fatal_signal;
		sigemptyset(&sa.sa_mask);
		sigaddset(&sa.sa_mask, SIGINT);
		sigaddset(&sa.sa_mask, SIGTERM);
		sigaction(SIGINT, &sa, nullptr);
		sigaction(SIGTERM, &sa, nullptr);
	});
}

void track_child(pid_t pid, bool add)
{
	SignalsBlocked b;
	for (auto &c : g_children) {
		if (add && c.pid == 0) {
			c.pid = pid;
			return;
		}
		if (!add && c.pid == pid) {
			c.pid = 0;
			return;
		}
	}
}

double now_s()
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::string read_all(int fd)
{
	std::string s;
	char buf[4096];
	off_t off = 0;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		s.append(buf, static_cast<size_t>(n));
		off += n;
	}
	return s;
}

// Starts argv in its own process group with stdout/stderr going to two
// memfds; returns the pid or -1 with *err set.
pid_t spawn(const std::vector<std::string> &argv, int out_fd, int err_fd, std::string *err)
{
	if (argv.empty()) {
		*err = "empty command";
		return -1;
	}
	std::vector<char *> args;
	for (const auto &a : argv)
		args.push_back(const_cast<char *>(a.c_str()));
	args.push_back(nullptr);

	install_handler_once();
	SignalsBlocked b;	// the child inherits the mask; it is reset below
	pid_t pid = fork();
	if (pid < 0) {
		*err = std::string("fork: ") + std::strerror(errno);
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, nullptr);
		int in = open("/dev/null", O_RDONLY);
		if (in >= 0)
			dup2(in, STDIN_FILENO);
		dup2(out_fd, STDOUT_FILENO);
		dup2(err_fd, STDERR_FILENO);
		execvp(args[0], args.data());
		dprintf(STDERR_FILENO, "exec %s: %s\n", args[0], std::strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);	// also here, so kill(-pid) works before the child ran
	for (auto &c : g_children)
		if (c.pid == 0) {
			c.pid = pid;
			break;
		}
	return pid;
}

// Waits for pid up to timeout_s (scaled), SIGKILLing its group after that.
void reap(pid_t pid, double timeout_s, CmdResult &r)
{
	double deadline = now_s() + timeout_s * timeout_scale();
	int status = 0;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			r.err += std::string("waitpid: ") + std::strerror(errno) + "\n";
			track_child(pid, false);
			return;
		}
		if (now_s() >= deadline && !r.timed_out) {
			r.timed_out = true;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
		}
		usleep(2000);
	}
	// whatever the leader started in its group goes too
	kill(-pid, SIGKILL);
	track_child(pid, false);
	if (WIFEXITED(status))
		r.exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		r.signal = WTERMSIG(status);
}

int make_memfd(const char *name)
{
	return memfd_create(name, MFD_CLOEXEC);
}

} // namespace

double timeout_scale()
{
	static const double scale = [] {
		const char *v = std::getenv("XO_TIMEOUT_SCALE");
		double s = v ? std::atof(v) : 1.0;
		return s >= 1.0 && s <= 20.0 ? s : 1.0;
	}();
	return scale;
}

std::string quiet_seconds(double host_s)
{
	char buf[32];
	std::snprintf(buf, sizeof(buf), "%.2f", host_s * timeout_scale());
	return buf;
}

std::string CmdResult::describe() const
{
	std::ostringstream s;
	if (exit_code >= 0)
		s << "exit " << exit_code;
	else
		s << "killed by signal " << signal;
	if (timed_out)
		s << " (timeout)";
	if (!err.empty())
		s << ", stderr: " << err;
	return s.str();
}

std::string join_cmd(const std::vector<std::string> &argv)
{
	std::string s;
	for (const auto &a : argv) {
		if (!s.empty())
			s += ' ';
		if (a.empty() || a.find_first_of(" \t'\"$\\") != std::string::npos)
			s += "'" + a + "'";
		else
			s += a;
	}
	return s;
}

CmdResult run_cmd(const std::vector<std::string> &argv, double timeout_s)
{
	BackgroundCmd c(argv);
	return c.wait(timeout_s);
}

BackgroundCmd::BackgroundCmd(const std::vector<std::string> &argv)
{
	out_fd_ = make_memfd("xo-out");
	err_fd_ = make_memfd("xo-err");
	if (out_fd_ < 0 || err_fd_ < 0) {
		start_error_ = std::string("memfd_create: ") + std::strerror(errno);
		return;
	}
	pid_ = spawn(argv, out_fd_, err_fd_, &start_error_);
}

BackgroundCmd::~BackgroundCmd()
{
	if (pid_ > 0) {
		CmdResult ignored;
		kill(-pid_, SIGKILL);
		reap(pid_, 5, ignored);
	}
	if (out_fd_ >= 0)
		close(out_fd_);
	if (err_fd_ >= 0)
		close(err_fd_);
}

CmdResult BackgroundCmd::wait(double timeout_s)
{
	CmdResult r;
	if (pid_ <= 0) {
		r.err = start_error_.empty() ? "not started (or already waited for)" : start_error_;
		return r;
	}
	reap(pid_, timeout_s, r);
	pid_ = -1;
	r.out = read_all(out_fd_);
	r.err = read_all(err_fd_) + r.err;
	return r;
}

bool BackgroundCmd::signal(int sig) const
{
	return pid_ > 0 && kill(-pid_, sig) == 0;
}

bool BackgroundCmd::wait_for_output(const std::string &needle, double timeout_s) const
{
	const auto deadline =
		std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s * timeout_scale());
	while (pid_ > 0 && std::chrono::steady_clock::now() < deadline) {
		if (read_all(out_fd_).find(needle) != std::string::npos)
			return true;
		siginfo_t si{};
		if (!waitid(P_PID, static_cast<id_t>(pid_), &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid == pid_)
			return read_all(out_fd_).find(needle) != std::string::npos;	// exited: wait() reaps it
		usleep(20000);
	}
	return false;
}

std::optional<uint64_t> json_u64(const std::string &js, const std::string &key)
{
	std::smatch m;
	if (!std::regex_search(js, m, std::regex("\"" + key + "\":([0-9]+)")))
		return std::nullopt;
	return std::stoull(m[1]);
}

std::string json_str(const std::string &js, const std::string &key)
{
	std::smatch m;
	if (!std::regex_search(js, m, std::regex("\"" + key + "\":\"([^\"]*)\"")))
		return "<absent>";
	return m[1];
}

std::string json_obj(const std::string &js, const std::string &key)
{
	size_t at = js.find("\"" + key + "\":{");
	if (at == std::string::npos)
		return {};
	size_t from = js.find('{', at);
	int depth = 0;
	for (size_t i = from; i < js.size(); i++) {
		if (js[i] == '{')
			depth++;
		else if (js[i] == '}' && --depth == 0)
			return js.substr(from, i + 1 - from);
	}
	return {};
}

std::string last_line(const std::string &s)
{
	size_t end = s.find_last_not_of('\n');
	if (end == std::string::npos)
		return {};
	size_t start = s.rfind('\n', end);
	start = start == std::string::npos ? 0 : start + 1;
	return s.substr(start, end + 1 - start);
}

bool names_xdp_entry(const std::string &out, const std::string &single)
{
	if (out.find(single) != std::string::npos)
		return true;
	const bool mb = single.size() > 3 && single.compare(single.size() - 3, 3, "_mb") == 0;
	const std::string composed = std::string("composed program ") + (mb ? "xdp_offload_mb " : "xdp_offload ");
	return out.find(composed) != std::string::npos;
}

std::string env_or_empty(const char *name)
{
	const char *v = std::getenv(name);
	return v ? v : "";
}

std::string Testbed::script()
{
	std::string src = env_or_empty("XO_SOURCE_DIR");
	return src.empty() ? "" : src + "/tools/testbed";
}

std::unique_ptr<Testbed> Testbed::up(std::string *why, const Options &o)
{
	static std::atomic<unsigned> seq{0};
	std::string script = Testbed::script();
	if (script.empty()) {
		*why = "XO_SOURCE_DIR is not set (run through ctest, or export it)";
		return nullptr;
	}
	if (geteuid() != 0) {
		*why = "needs root (creates network namespaces)";
		return nullptr;
	}
	if (script.size() >= PATH_MAX) {
		*why = "XO_SOURCE_DIR path too long";
		return nullptr;
	}
	// Testbeds of test processes that died without cleaning up (SIGKILL by a
	// ctest timeout) are named after their pid: collect them once.
	static std::once_flag gc_once;
	std::call_once(gc_once, [&] { (void)run_cmd({script, "gc"}, 30); });

	std::unique_ptr<Testbed> tb(new Testbed);
	tb->name_ = "p" + std::to_string(getpid()) + "-" + std::to_string(seq++);
	{
		SignalsBlocked b;
		for (int i = 0; i < kSlots; i++)
			if (!g_testbeds[i].used) {
				std::snprintf(g_testbeds[i].script, sizeof(g_testbeds[i].script), "%s", script.c_str());
				std::snprintf(g_testbeds[i].name, sizeof(g_testbeds[i].name), "%s", tb->name_.c_str());
				g_testbeds[i].used = 1;
				tb->slot_ = i;
				break;
			}
	}
	if (tb->slot_ < 0) {
		*why = "too many live testbeds in this process";
		return nullptr;
	}
	tb->live_ = true;	// from here on the destructor runs `down`
	install_handler_once();

	std::vector<std::string> argv{script, "up", "--name", tb->name_, "--queues", std::to_string(o.queues),
				      "--pairs", std::to_string(o.pairs)};
	if (o.ipv4)
		argv.push_back("--ipv4");
	CmdResult r = run_cmd(argv, 60);
	if (!r.ok()) {
		*why = "tools/testbed up failed: " + r.describe();
		return nullptr;	// destructor tears down whatever was made
	}
	std::istringstream in(r.out);
	for (std::string line; std::getline(in, line);) {
		auto eq = line.find('=');
		if (eq != std::string::npos)
			tb->vars_.emplace_back(line.substr(0, eq), line.substr(eq + 1));
	}
	tb->ns_a_ = tb->var("XO_NS_A");
	tb->ns_b_ = tb->var("XO_NS_B");
	tb->if_a_ = tb->var("XO_IF_A");
	tb->if_b_ = tb->var("XO_IF_B");
	if (tb->ns_a_.empty() || tb->ns_b_.empty() || tb->if_a_.empty() || tb->if_b_.empty()) {
		*why = "tools/testbed up printed no XO_NS_A/XO_NS_B/XO_IF_A/XO_IF_B: " + r.out;
		return nullptr;
	}
	return tb;
}

std::string Testbed::var(const std::string &key) const
{
	for (const auto &[k, v] : vars_)
		if (k == key)
			return v;
	return "";
}

bool Testbed::down()
{
	if (!live_)
		return true;
	CmdResult r = run_cmd({script(), "down", name_}, 60);
	live_ = false;
	if (slot_ >= 0) {
		SignalsBlocked b;
		g_testbeds[slot_].used = 0;
		slot_ = -1;
	}
	if (!r.ok())
		std::fprintf(stderr, "testbed %s: down failed: %s\n", name_.c_str(), r.describe().c_str());
	return r.ok();
}

Testbed::~Testbed()
{
	down();
}

void TestbedTest::SetUp()
{
	// a build misconfiguration must fail, not skip every test quietly
	ASSERT_FALSE(Testbed::script().empty()) << "XO_SOURCE_DIR is not set (run through ctest, or export it)";
	tool_ = env_or_empty("XO_TOOL");
	ASSERT_FALSE(tool_.empty()) << "XO_TOOL is not set (run through ctest, or export it)";
	if (needs_bpffs()) {
		struct statfs st {};
		if (statfs("/sys/fs/bpf", &st) || st.f_type != BPF_FS_MAGIC)
			GTEST_SKIP() << "bpffs is not mounted on /sys/fs/bpf (tools/setup mounts it)";
	}
	std::string why;
	tb_ = Testbed::up(&why, testbed_options());
	if (!tb_)
		GTEST_SKIP() << "no veth testbed: " << why;
}

void TestbedTest::TearDown()
{
	if (tb_) {
		EXPECT_TRUE(tb_->down()) << "tools/testbed down " << tb_->name() << " failed";
	}
	tb_.reset();
}

std::string nic_driver(const std::string &ns, const std::string &ifname)
{
	if (env_or_empty("XO_TESTBED_NICS").empty())
		return "";
	InNetns in(ns);
	int s = in.ok() ? ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0) : -1;
	if (s < 0)
		return "?";
	ethtool_drvinfo info{};
	info.cmd = ETHTOOL_GDRVINFO;
	ifreq ifr{};
	std::snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname.c_str());
	ifr.ifr_data = reinterpret_cast<char *>(&info);
	std::string driver = ::ioctl(s, SIOCETHTOOL, &ifr) == 0 ? info.driver : "?";
	::close(s);
	return driver;
}

std::string no_native_xdp(const std::string &ns, const std::string &ifname)
{
	const std::string driver = nic_driver(ns, ifname);
	if (driver.empty())
		return "";
	InNetns in(ns);
	if (!in.ok())
		return "";
	const unsigned ifindex = if_nametoindex(ifname.c_str());
	if (!ifindex)
		return "";
	// XDP_PASS: r0 = 2; exit
	const bpf_insn pass[] = {
		{BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, XDP_PASS},
		{BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xo_probe_drv", "GPL", pass, 2, nullptr);
	if (fd < 0)
		return "";
	int err = bpf_xdp_attach(static_cast<int>(ifindex), fd, XDP_FLAGS_DRV_MODE, nullptr);
	::close(fd);
	if (!err) {
		(void)bpf_xdp_detach(static_cast<int>(ifindex), XDP_FLAGS_DRV_MODE, nullptr);
		return "";
	}
	if (err != -EOPNOTSUPP)
		return "";
	utsname u{};
	return ifname + ": " + driver + " has no native XDP on Linux " + (::uname(&u) ? "?" : u.release) +
	       " (the test needs it)";
}

InNetns::InNetns(const std::string &ns)
{
	orig_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	int target = ::open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
	ok_ = orig_ >= 0 && target >= 0 && setns(target, CLONE_NEWNET) == 0;
	if (target >= 0)
		::close(target);
}

InNetns::~InNetns()
{
	if (orig_ >= 0) {
		(void)setns(orig_, CLONE_NEWNET);
		::close(orig_);
	}
}

TempDir::TempDir(const char *prefix)
{
	std::string tmpl = std::string("/tmp/") + prefix + "-XXXXXX";
	if (mkdtemp(tmpl.data()))
		path_ = tmpl;
}

TempDir::~TempDir()
{
	std::error_code ec;
	if (!path_.empty())
		std::filesystem::remove_all(path_, ec);
}

} // namespace xoffload::test
