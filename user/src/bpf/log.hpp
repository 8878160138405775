// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Internal to libxoffload's BPF part (log.cpp): marks a call whose libbpf
// and libxdp messages are expected, because its failure is an answer we
// handle (a tc query that finds nothing, a clsact qdisc already there,
// libxdp's dispatcher refused and the composed program taken instead).
// While one lives on a thread, that thread's messages are dropped unless
// the verbosity is 1 or more (-v), where they print as libbpf wrote them.
#pragma once

namespace xoffload {

class ExpectedLibraryMessages {
public:
	ExpectedLibraryMessages() noexcept;
	~ExpectedLibraryMessages();
	ExpectedLibraryMessages(const ExpectedLibraryMessages &) = delete;
	ExpectedLibraryMessages &operator=(const ExpectedLibraryMessages &) = delete;
};

} // namespace xoffload
