// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Owned<T, destroy>: the one owner of a libbpf/libxdp (or libmnl) object that
// its C API frees with a single call (a skeleton's __destroy,
// xdp_program__close, xdp_multiprog__close, bpf_object__close,
// bpf_link__destroy, mnl_socket_close).
#pragma once

#include <memory>

namespace xoffload {

// The deleter: calls @Destroy, a function taking T * (null never reaches it:
// unique_ptr skips the deleter for null).
template <auto Destroy>
struct DestroyWith {
	template <typename T>
	void operator()(T *p) const noexcept
	{
		Destroy(p);
	}
};

// Move-only, pointer-sized: Owned<xdp_vlan_bpf, xdp_vlan_bpf__destroy> s(xdp_vlan_bpf__open());
template <typename T, auto Destroy>
using Owned = std::unique_ptr<T, DestroyWith<Destroy>>;

} // namespace xoffload
