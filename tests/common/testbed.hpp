// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Integration-test harness: runs commands with a bounded wait and captured
// output, and owns veth testbeds (tools/testbed) that are always torn down,
// on destruction and on SIGINT/SIGTERM.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace xoffload::test {

// What a finished (or killed) command left behind.
struct CmdResult {
	int exit_code = -1;	// -1 when it did not exit normally
	int signal = 0;		// the signal that ended it, 0 if none
	bool timed_out = false;	// killed by us after the timeout
	std::string out, err;

	bool ok() const { return exit_code == 0; }
	// "exit 2" / "killed by signal 9 (timeout)" plus stderr, for assertion messages.
	std::string describe() const;
};

// Runs argv[0] (searched in PATH) with argv, without a shell. stdin is
// /dev/null; stdout and stderr are captured. After timeout_s the command's
// whole process group gets SIGKILL.
CmdResult run_cmd(const std::vector<std::string> &argv, double timeout_s = 30);

// A command left running while the test does something else (a capture).
// Killed if still running when destroyed.
class BackgroundCmd {
public:
	explicit BackgroundCmd(const std::vector<std::string> &argv);
	~BackgroundCmd();
	BackgroundCmd(const BackgroundCmd &) = delete;
	BackgroundCmd &operator=(const BackgroundCmd &) = delete;

	bool started() const { return pid_ > 0; }
	// Its process id (it leads its own process group); -1 when not started.
	int pid() const { return pid_; }
	// Waits up to timeout_s for it to exit, then kills it.
	CmdResult wait(double timeout_s);
	// Waits up to timeout_s for its stdout to contain needle (a line that
	// says it is ready); false when it did not, or exited first.
	bool wait_for_output(const std::string &needle, double timeout_s) const;
	// Sends sig to its process group (as a dropped terminal or the OOM
	// killer would); false when it is not running.
	bool signal(int sig) const;

private:
	int pid_ = -1;
	int out_fd_ = -1, err_fd_ = -1;
	std::string start_error_;
};

// How much slower than this machine everything runs: XO_TIMEOUT_SCALE,
// which tools/vm-test exports under emulation (TCG runs every verifier and
// every packet 5-20 times slower), 1 elsewhere. The hang guards stretch by
// it, and the few bounds a test asserts on a duration (the agent's 1 s).
double timeout_scale();

// A quiet period for recv --idle (stop that long after the last frame):
// host_s on this machine, stretched as the hang guards are under emulation
// (XO_TIMEOUT_SCALE), where a sender may pause longer between frames.
std::string quiet_seconds(double host_s);

// A command line quoted for humans (assertion messages).
std::string join_cmd(const std::vector<std::string> &argv);

// Path from the environment ctest sets (XO_TOOL, XO_PKT, XO_SOURCE_DIR, ...);
// empty when unset.
std::string env_or_empty(const char *name);

// A whole-number field of the tool's one-line JSON ("packets":123), or
// nothing when absent.
std::optional<uint64_t> json_u64(const std::string &js, const std::string &key);
// A string field of it ("mode":"copy"), or "<absent>".
std::string json_str(const std::string &js, const std::string &key);
// The object "key":{...} of it, braces included ("" when absent):
// json_u64 on that reads the object's fields only.
std::string json_obj(const std::string &js, const std::string &key);
// The last non-empty line of a command's output (its summary), without
// the newline.
std::string last_line(const std::string &s);

// Whether an attach's output names the XDP entry @single (xdp_vlan_mb, ...),
// or the composed program's entry of the same kind (xdp_offload_mb for a
// multi-buffer entry, xdp_offload otherwise) where attach composed it: on
// kernels and libxdp versions whose dispatcher cannot chain ours.
bool names_xdp_entry(const std::string &out, const std::string &single);

// Two network namespaces joined by a veth pair (see tools/testbed). The
// destructor always runs `tools/testbed down`; a SIGINT/SIGTERM handler does
// it for every live testbed before the process dies.
class Testbed {
public:
	struct Options {
		unsigned queues = 1;
		unsigned pairs = 1;
		bool ipv4 = false;
	};

	// Creates a testbed; nullptr and *why set when it cannot (not root,
	// no netns/veth support, XO_SOURCE_DIR unset, ...).
	static std::unique_ptr<Testbed> up(std::string *why, const Options &o);
	static std::unique_ptr<Testbed> up(std::string *why) { return up(why, Options{}); }
	~Testbed();
	Testbed(const Testbed &) = delete;
	Testbed &operator=(const Testbed &) = delete;

	// Tears down now; true if tools/testbed down succeeded. Idempotent.
	bool down();

	const std::string &name() const { return name_; }
	const std::string &ns_a() const { return ns_a_; }
	const std::string &ns_b() const { return ns_b_; }
	const std::string &if_a() const { return if_a_; }
	const std::string &if_b() const { return if_b_; }
	// Any variable `tools/testbed up` printed (XO_IF_A_1, XO_IP_B, ...); "" if absent.
	std::string var(const std::string &key) const;

	// $XO_SOURCE_DIR/tools/testbed, "" when XO_SOURCE_DIR is unset.
	static std::string script();

private:
	Testbed() = default;

	std::string name_, ns_a_, ns_b_, if_a_, if_b_;
	std::vector<std::pair<std::string, std::string>> vars_;
	int slot_ = -1;		// index in the signal handler's registry
	bool live_ = false;
};

// Runs the calling thread in another network namespace until destroyed
// (sockets made meanwhile stay in that namespace).
class InNetns {
public:
	explicit InNetns(const std::string &ns);
	~InNetns();
	InNetns(const InNetns &) = delete;
	InNetns &operator=(const InNetns &) = delete;
	bool ok() const { return ok_; }

private:
	int orig_ = -1;
	bool ok_ = false;
};

// On a testbed of emulated NICs (XO_TESTBED_NICS): the driver of IFNAME in
// NS ("?" when unknown); "" on veth.
std::string nic_driver(const std::string &ns, const std::string &ifname);

// On a testbed of emulated NICs (XO_TESTBED_NICS): why IFNAME in NS cannot
// run a native XDP program (its driver has none on this kernel: attaching a
// pass program in driver mode says EOPNOTSUPP); "" when it can, or on veth
// (never probed there: an XDP program on a veth clears its peer's GSO).
std::string no_native_xdp(const std::string &ns, const std::string &ifname);

#define XO_SKIP_WITHOUT_NATIVE_XDP(ns, ifname)                                                   \
	do {                                                                                     \
		if (std::string xo_why_ = ::xoffload::test::no_native_xdp(ns, ifname); !xo_why_.empty()) \
			GTEST_SKIP() << xo_why_;                                                 \
	} while (0)

// A fresh directory under /tmp, removed with everything in it when this
// goes out of scope, also when an assertion returns early. path() is empty
// if it could not be made.
class TempDir {
public:
	explicit TempDir(const char *prefix = "xo-test");
	~TempDir();
	TempDir(const TempDir &) = delete;
	TempDir &operator=(const TempDir &) = delete;
	const std::string &path() const { return path_; }

private:
	std::string path_;
};

// Fixture: a fresh testbed per test, skipped (with the reason) when not root
// or when the testbed cannot be made, or without bpffs where the fixture
// needs it; failed when XO_SOURCE_DIR or XO_TOOL is unset. TearDown
// destroys it.
class TestbedTest : public ::testing::Test {
protected:
	void SetUp() override;
	void TearDown() override;
	virtual Testbed::Options testbed_options() const { return {}; }
	// Skip unless bpffs is mounted on /sys/fs/bpf (pins of offload-tool).
	virtual bool needs_bpffs() const { return false; }

	std::unique_ptr<Testbed> tb_;
	std::string tool_;	// offload-tool (XO_TOOL)
};

} // namespace xoffload::test
