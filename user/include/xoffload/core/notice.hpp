// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// What the library tells its user while it works, a line each: what it did
// on its own (a killed receiver's program detached, pins moved after a
// rename, a device setting restored) or what will not work as asked (a
// device that strips or filters VLAN tags, an XDP program attached alone).
// Errors are never notices: they come back as Result.
//
// By default a notice is written to stderr as "xoffload: LINE". A program
// that shows them elsewhere, or not at all, sets its own sink; the sink is
// process-wide and called on the thread that raised the notice.
#pragma once

#include <functional>
#include <string>

namespace xoffload {

using NoticeSink = std::function<void(const std::string &line)>;

// Replaces the sink; an empty one restores the default (stderr).
void set_notice_sink(NoticeSink sink);
// Hands @line (no prefix, no newline) to the sink.
void notice(const std::string &line);

} // namespace xoffload
