// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// One BPF_PROG_TEST_RUN of a program over a frame, shared by the BPF tests.
#pragma once

#include <bpf/bpf.h>

#include <cerrno>
#include <cstdint>

#include "packet_builder.hpp"

namespace xoffload::test {

struct ProgRun {
	int err = 0;		// 0, or the negative errno of bpf_prog_test_run_opts
	uint32_t retval = 0;
	Bytes out;		// data_out, as long as the kernel wrote it
};

// Runs @prog_fd once over @in with room for @grow more bytes of output;
// @ctx_in/@ctx_out (either may be null) are the program type's context.
inline ProgRun prog_run(int prog_fd, const Bytes &in, size_t grow = 1024, const void *ctx_in = nullptr,
			uint32_t ctx_in_size = 0, void *ctx_out = nullptr, uint32_t ctx_out_size = 0)
{
	ProgRun r;
	r.out.resize(in.size() + grow);
	bpf_test_run_opts o{};
	o.sz = sizeof(o);
	o.data_in = in.data();
	o.data_size_in = static_cast<uint32_t>(in.size());
	o.data_out = r.out.data();
	o.data_size_out = static_cast<uint32_t>(r.out.size());
	o.ctx_in = ctx_in;
	o.ctx_size_in = ctx_in_size;
	o.ctx_out = ctx_out;
	o.ctx_size_out = ctx_out_size;
	o.repeat = 1;
	if (bpf_prog_test_run_opts(prog_fd, &o)) {
		r.err = -errno;
		r.out.clear();
		return r;
	}
	r.retval = o.retval;
	r.out.resize(o.data_size_out);
	return r;
}

} // namespace xoffload::test
