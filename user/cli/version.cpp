// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// offload-tool --version: its own version, the libbpf and libxdp it runs
// with (the files the dynamic loader picked, so a guest's or a container's
// libraries show as they are), the running kernel and the kernel features
// its decisions probe (each as the probe answered: asked or inferred).
#include <dlfcn.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include <climits>
#include <cstdlib>
#include <string>

#include "commands.hpp"
#include "output.hpp"
#include "xoffload/bpf/probe.hpp"
#include "xoffload/core/kernel.hpp"
#include "xoffload/core/version.hpp"

namespace xoffload::cli {

namespace {

struct LibVersion {
	std::string version;	// "1.3.1", from the file name; "" when unknown
	std::string path;	// the file the loader mapped
};

// The library holding @sym, by its real file name: libxdp.so.1 -> libxdp.so.1.3.1.
LibVersion library_of(const void *sym)
{
	LibVersion v;
	Dl_info info{};
	if (!dladdr(sym, &info) || !info.dli_fname)
		return v;
	char real[PATH_MAX];
	v.path = realpath(info.dli_fname, real) ? real : info.dli_fname;
	const auto so = v.path.find(".so.");
	if (so != std::string::npos)
		v.version = v.path.substr(so + 4);
	return v;
}

std::string yes_no(const ProbeResult &p)
{
	return std::string(p.ok ? "yes" : "no") + " (" + p.how + ")";
}

} // namespace

std::string version_text(bool json, bool pretty)
{
	const LibVersion bpf = library_of(reinterpret_cast<const void *>(&libbpf_version_string));
	const LibVersion xdp = library_of(reinterpret_cast<const void *>(&xdp_program__open_file));
	const std::string libbpf = bpf.version.empty() ? std::string(libbpf_version_string()) : bpf.version;
	const ProbeResult &sg = probe_xdp_use_sg(), &meta = probe_xsk_tx_metadata(), &uso = probe_udp_l4_gso();
	const bool frags = kernel_has_xdp_frags();
	const ProbeResult &tcx = probe_tcx();
	const DispatcherProbe disp = probe_dispatcher();
	if (json) {
		Json j;
		j.begin_object().kv("version", library_version()).kv("libbpf", libbpf).kv("libbpf_path", bpf.path)
			.kv("libxdp", xdp.version).kv("libxdp_path", xdp.path).kv("kernel", running_kernel().text);
		j.begin_object("kernel_features");
		const std::pair<const char *, const ProbeResult *> probes[] = {
			{"xdp_use_sg", &sg},	     {"xsk_tx_metadata", &meta},
			{"udp_l4_gso", &uso},	     {"tcx", &tcx},
			{"freplace", &disp.freplace}, {"freplace_packet_change", &disp.packet_change}};
		for (const auto &[name, p] : probes)
			j.begin_object(name).kv("present", p->ok).kv("probed", p->probed).kv("how", p->how).end_object();
		j.kv("xdp_frags", frags).end_object().end_object();
		return j.str(pretty);
	}
	std::string s = std::string("offload-tool ") + library_version() + "\n";
	s += "libbpf " + libbpf + (bpf.path.empty() ? "" : " (" + bpf.path + ")") + "\n";
	s += "libxdp " + (xdp.version.empty() ? std::string("?") : xdp.version) +
	     (xdp.path.empty() ? "" : " (" + xdp.path + ")") + "\n";
	s += "kernel " + running_kernel().text + "\n";
	s += "  XDP multi-buffer (xdp.frags programs): " +
	     std::string(frags ? "yes" : "no (or not allowed to load a program)") + "\n";
	s += "  AF_XDP multi-buffer (XDP_USE_SG): " + yes_no(sg) + "\n";
	s += "  AF_XDP TX metadata: " + yes_no(meta) + "\n";
	s += "  UDP_L4 GSO (tun USO): " + yes_no(uso) + "\n";
	s += "  TCX (BPF links at tc ingress/egress; xoffload attaches through clsact): " + yes_no(tcx) + "\n";
	s += "  freplace (libxdp's multiprog dispatcher can load): " + yes_no(disp.freplace) + "\n";
	s += "  packet-changing freplace (xdp_vlan behind a dispatcher of libxdp < 1.6): " + yes_no(disp.packet_change);
	return s;
}

} // namespace xoffload::cli
