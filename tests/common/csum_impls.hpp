// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Runs a test body under each checksum implementation this CPU has (the
// scalar one first), shared by the checksum and the GSO unit tests.
#pragma once

#include <gtest/gtest.h>

#include "xoffload/packet/csum.hpp"

namespace xo_test {

// Puts the implementation chosen before it back when it goes out of scope.
struct ImplGuard {
	xoffload::CsumImpl saved = xoffload::csum_impl();
	~ImplGuard() { xoffload::csum_force_impl(saved); }
};

// Runs @fn once under each implementation this CPU has, scalar first,
// stopping at the first fatal failure, and puts the chosen one back.
// Returns how many ran.
template <typename F>
int for_each_impl(F &&fn)
{
	using xoffload::CsumImpl;
	ImplGuard guard;
	int ran = 0;
	for (CsumImpl impl : {CsumImpl::scalar, CsumImpl::avx2, CsumImpl::avx512}) {
		if (!xoffload::csum_force_impl(impl))
			continue;
		ran++;
		fn(impl);
		if (::testing::Test::HasFatalFailure())
			break;
	}
	return ran;
}

} // namespace xo_test
