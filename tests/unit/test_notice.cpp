// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The library's notices go to the sink a program sets, and to stderr with
// the "xoffload: " prefix when it sets none.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "xoffload/core/notice.hpp"

namespace xoffload {
namespace {

TEST(Notice, GoesToTheSinkAndBackToStderrWhenItIsCleared)
{
	std::vector<std::string> got;
	set_notice_sink([&](const std::string &l) { got.push_back(l); });
	notice("pins of x moved");
	notice("turned rx-vlan-offload on again on y");
	set_notice_sink({});
	ASSERT_EQ(got.size(), 2u);
	EXPECT_EQ(got[0], "pins of x moved");
	EXPECT_EQ(got[1], "turned rx-vlan-offload on again on y");

	testing::internal::CaptureStderr();
	notice("to stderr");
	EXPECT_EQ(testing::internal::GetCapturedStderr(), "xoffload: to stderr\n");
	EXPECT_EQ(got.size(), 2u) << "the cleared sink was called again";
}

} // namespace
} // namespace xoffload
