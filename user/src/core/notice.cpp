// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "xoffload/core/notice.hpp"

#include <cstdio>

namespace xoffload {

namespace {
NoticeSink &sink()
{
	static NoticeSink s;
	return s;
}
} // namespace

void set_notice_sink(NoticeSink s)
{
	sink() = std::move(s);
}

void notice(const std::string &line)
{
	if (sink())
		sink()(line);
	else
		std::fprintf(stderr, "xoffload: %s\n", line.c_str());
}

} // namespace xoffload
