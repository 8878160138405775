// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Error values for control paths: errno captured at the call site plus one
// human line. g++ 12 has no std::expected, so this is the small subset we use.
//
// The errno sign convention, for the whole library: a function that returns
// an int status (hot paths, thin wrappers of libbpf/libxdp/syscalls) returns
// 0 or a count on success and a NEGATIVE errno on failure, as the kernel and
// libbpf do (gso_segment, XskSocket::kick, the XDP attach helpers). Where an
// errno is stored rather than returned (Error::err, a counter's "last errno")
// it is the positive value, as errno itself. Control paths return Result.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace xoffload {

// kind tells the CLI which exit code a failure maps to.
enum class ErrorKind { usage, runtime };

struct Error {
	ErrorKind kind = ErrorKind::runtime;
	int err = 0;		// positive errno, 0 if none applies
	std::string msg;	// one line, no trailing newline
};

Error usage_error(std::string msg);
Error runtime_error(std::string msg, int err = 0);
// Appends ": strerror(err)" to msg; err may be negative (libbpf style).
Error errno_error(std::string msg, int err);
// The errno's symbolic name ("EPERM", "ENODEV"), "?" when it has none; err
// may be negative (libbpf style).
std::string errno_name(int err);

template <typename T>
class [[nodiscard]] Result {
public:
	Result(T v) : v_(std::move(v)) {}
	Result(Error e) : v_(std::move(e)) {}
	bool ok() const noexcept { return v_.index() == 0; }
	explicit operator bool() const noexcept { return ok(); }
	T &value() & { return std::get<0>(v_); }
	const T &value() const & { return std::get<0>(v_); }
	T &&value() && { return std::get<0>(std::move(v_)); }
	T &operator*() & { return value(); }
	const T &operator*() const & { return value(); }
	T &&operator*() && { return std::move(*this).value(); }
	T *operator->() { return &std::get<0>(v_); }
	const T *operator->() const { return &std::get<0>(v_); }
	const Error &error() const { return std::get<1>(v_); }
	T value_or(T dflt) const & { return ok() ? value() : std::move(dflt); }

private:
	std::variant<T, Error> v_;
};

struct Ok {};
using Status = Result<Ok>;
inline Status ok() { return Ok{}; }

} // namespace xoffload
