// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Constructors for Error values.
#include "xoffload/core/result.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace xoffload {

namespace {

// Messages quote what the user typed; a control character there (an
// argument with a newline) must not break the one-line contract.
std::string one_line(std::string msg)
{
	if (std::none_of(msg.begin(), msg.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
		return msg;
	std::string o;
	for (char c : msg) {
		auto u = static_cast<unsigned char>(c);
		if (c == '\n')
			o += "\\n";
		else if (c == '\t')
			o += "\\t";
		else if (u < 0x20 || u == 0x7f) {
			char buf[5];
			std::snprintf(buf, sizeof(buf), "\\x%02x", u);
			o += buf;
		} else
			o += c;
	}
	return o;
}

} // namespace

Error usage_error(std::string msg)
{
	return Error{ErrorKind::usage, EINVAL, one_line(std::move(msg))};
}

Error runtime_error(std::string msg, int err)
{
	return Error{ErrorKind::runtime, err < 0 ? -err : err, one_line(std::move(msg))};
}

std::string errno_name(int err)
{
	const char *n = strerrorname_np(err < 0 ? -err : err);
	return n ? n : "?";
}

Error errno_error(std::string msg, int err)
{
	if (err < 0)
		err = -err;
	msg += ": ";
	msg += std::strerror(err);
	return Error{ErrorKind::runtime, err, one_line(std::move(msg))};
}

} // namespace xoffload
