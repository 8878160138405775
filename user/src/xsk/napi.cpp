// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// NAPI interrupt deferral in sysfs, this namespace's or another's (see
// xoffload/xsk/napi.hpp).
#include "xoffload/xsk/napi.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace xoffload::xsk {

namespace {

constexpr const char *kDefer = "napi_defer_hard_irqs";
constexpr const char *kGro = "gro_flush_timeout";

// Whether /sys/class/net/DEV is @dev of this namespace.
bool sysfs_is_ours(const Netdev &dev)
{
	int idx = 0;
	return (std::ifstream("/sys/class/net/" + dev.name + "/ifindex") >> idx) && idx == dev.ifindex;
}

// Reads (value empty) or writes one file; the text read, or "" once written.
// errno of the failing step in @err.
bool file_io(const char *path, const char *value, char *out, size_t cap, int &err)
{
	const int fd = ::open(path, value ? (O_WRONLY | O_CLOEXEC) : (O_RDONLY | O_CLOEXEC));
	if (fd < 0) {
		err = errno;
		return false;
	}
	ssize_t n;
	if (value)
		n = ::write(fd, value, std::strlen(value));
	else
		n = ::read(fd, out, cap - 1);
	err = n < 0 ? errno : 0;
	::close(fd);
	if (n < 0)
		return false;
	if (!value)
		out[n] = 0;
	return true;
}

// One file of /sys/class/net/DEV: here, or (sysfs of another namespace) in
// a child with its own mount namespace and a sysfs mounted from this network
// namespace. Only system calls run in the child.
Result<std::string> sysfs_io(const Netdev &dev, const char *file, const std::string *value)
{
	const std::string path = "/sys/class/net/" + dev.name + "/" + file;
	char buf[64] = {};
	int err = 0;
	const char *v = value ? value->c_str() : nullptr;
	auto fail = [&](int e) {
		if (e == EACCES || e == EPERM)
			return runtime_error(std::string(value ? "write " : "read ") + path + ": " + std::strerror(e) +
						     " (needs CAP_NET_ADMIN)",
					     e);
		return errno_error(std::string(value ? "write " : "read ") + path, e);
	};
	if (sysfs_is_ours(dev)) {
		if (!file_io(path.c_str(), v, buf, sizeof(buf), err))
			return fail(err);
		return std::string(buf);
	}
	int fds[2];
	if (::pipe2(fds, O_CLOEXEC))
		return errno_error("pipe", errno);
	const pid_t pid = ::fork();
	if (pid < 0) {
		const int e = errno;
		::close(fds[0]);
		::close(fds[1]);
		return errno_error("fork", e);
	}
	if (pid == 0) {
		// the child: errno (4 bytes) then the text read
		int e = 0;
		if (::unshare(CLONE_NEWNS) || ::mount(nullptr, "/", nullptr, MS_SLAVE | MS_REC, nullptr) ||
		    (::umount2("/sys", MNT_DETACH) && errno != EINVAL) || ::mount("sysfs", "/sys", "sysfs", 0, nullptr))
			e = errno;
		else if (!file_io(path.c_str(), v, buf, sizeof(buf), e) && !e)
			e = EIO;
		(void)!::write(fds[1], &e, sizeof(e));
		if (!e)
			(void)!::write(fds[1], buf, std::strlen(buf));
		::_exit(0);
	}
	::close(fds[1]);
	int e = EIO;
	std::string text;
	if (::read(fds[0], &e, sizeof(e)) != sizeof(e))
		e = EIO;
	ssize_t n;
	while ((n = ::read(fds[0], buf, sizeof(buf))) > 0)
		text.append(buf, static_cast<size_t>(n));
	::close(fds[0]);
	int status = 0;
	while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
	}
	if (e)
		return fail(e);
	return text;
}

Result<uint64_t> read_u64(const Netdev &dev, const char *file)
{
	auto t = sysfs_io(dev, file, nullptr);
	if (!t)
		return t.error();
	char *end = nullptr;
	errno = 0;
	const unsigned long long v = std::strtoull(t->c_str(), &end, 10);
	if (errno || end == t->c_str())
		return runtime_error("/sys/class/net/" + dev.name + "/" + file + ": not a number: '" + *t + "'", EINVAL);
	return static_cast<uint64_t>(v);
}

Status write_u64(const Netdev &dev, const char *file, uint64_t v)
{
	const std::string s = std::to_string(v);
	if (auto r = sysfs_io(dev, file, &s); !r)
		return r.error();
	return ok();
}

} // namespace

Result<NapiDefer> napi_defer_read(const Netdev &dev)
{
	NapiDefer d;
	auto a = read_u64(dev, kDefer);
	if (!a)
		return a.error();
	auto b = read_u64(dev, kGro);
	if (!b)
		return b.error();
	d.defer_hard_irqs = *a;
	d.gro_flush_timeout_ns = *b;
	return d;
}

Result<NapiTuning> NapiTuning::apply(const Netdev &dev, std::optional<uint64_t> defer_hard_irqs,
				     std::optional<uint64_t> gro_flush_timeout_ns)
{
	NapiTuning t;
	t.dev_ = dev;
	if (!defer_hard_irqs && !gro_flush_timeout_ns)
		return t;
	auto now = napi_defer_read(dev);
	if (!now)
		return now.error();
	t.before_ = t.during_ = *now;
	t.armed_ = true;	// from here on the destructor puts back what was found
	if (defer_hard_irqs) {
		if (auto s = write_u64(dev, kDefer, *defer_hard_irqs); !s)
			return s.error();
		t.during_.defer_hard_irqs = *defer_hard_irqs;
	}
	if (gro_flush_timeout_ns) {
		if (auto s = write_u64(dev, kGro, *gro_flush_timeout_ns); !s)
			return s.error();
		t.during_.gro_flush_timeout_ns = *gro_flush_timeout_ns;
	}
	return t;
}

NapiTuning::NapiTuning(NapiTuning &&o) noexcept
	: dev_(std::move(o.dev_)), before_(o.before_), during_(o.during_), armed_(std::exchange(o.armed_, false))
{
}

NapiTuning::~NapiTuning()
{
	(void)restore();
}

Status NapiTuning::restore()
{
	if (!armed_)
		return ok();
	armed_ = false;
	// gro_flush_timeout first: a deferral count without a timer re-arms nothing
	Status st = write_u64(dev_, kGro, before_.gro_flush_timeout_ns);
	if (auto s = write_u64(dev_, kDefer, before_.defer_hard_irqs); !s && st)
		st = s;
	return st;
}

} // namespace xoffload::xsk
