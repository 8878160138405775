// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// xo-xdp-inject: a fixed offered load for an AF_XDP receiver, independent of
// how fast the receiver drains: runs whatever XDP program is attached to
// IFNAME (the receiver's own) on COUNT copies of a 64-byte UDP frame
// through BPF_PROG_RUN in live-frame mode, as if they had arrived on
// IFNAME's RX queue QUEUE, so the program's XDP_REDIRECT puts them on the
// receiver's socket exactly as the driver path would. The injection runs
// on the calling CPU as fast as the kernel goes; a receiver that cannot
// keep up loses frames at its socket (counted there: rx_ring_full,
// fill-ring empty), not here. Used by `tools/bench xsk`'s RX rows.
//
//   xo-xdp-inject IFNAME QUEUE COUNT DST_MAC [SIZE]
// SIZE: frame bytes, 60..1514 (default 64). Prints "injected N" and "seconds S"; exit 1 with one line on an error.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "packet_builder.hpp"

namespace {

double now()
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

int die(const std::string &what, int err)
{
	std::fprintf(stderr, "xo-xdp-inject: %s: %s\n", what.c_str(), std::strerror(err));
	return 1;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6) {
		std::fprintf(stderr, "usage: xo-xdp-inject IFNAME QUEUE COUNT DST_MAC [SIZE]\n");
		return 2;
	}
	const unsigned ifindex = if_nametoindex(argv[1]);
	if (!ifindex)
		return die(std::string("no interface ") + argv[1], errno);
	const unsigned long queue = std::strtoul(argv[2], nullptr, 10);
	const unsigned long long count = std::strtoull(argv[3], nullptr, 10);
	const unsigned long size = argc == 6 ? std::strtoul(argv[5], nullptr, 10) : 64;
	uint8_t mac[6];
	if (std::sscanf(argv[4], "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3], &mac[4],
			&mac[5]) != 6 || !count || count > INT32_MAX || size < 60 || size > 1514) {
		std::fprintf(stderr, "xo-xdp-inject: bad DST_MAC, COUNT or SIZE\n");
		return 2;
	}
	__u32 id = 0;
	if (int err = bpf_xdp_query_id(static_cast<int>(ifindex), 0, &id))
		return die("querying the XDP program of " + std::string(argv[1]), -err);
	if (!id) {
		std::fprintf(stderr, "xo-xdp-inject: no XDP program on %s\n", argv[1]);
		return 1;
	}
	const int fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return die("opening XDP program " + std::to_string(id), errno);
	// a UDP frame to @mac from 198.18.0.1:40001 to 198.18.0.2:40002
	using namespace xoffload::test;
	Mac dst;
	std::copy(std::begin(mac), std::end(mac), dst.begin());
	const Bytes f = PacketBuilder().eth(dst, kMacA).ipv4(kIpA, kIpB).udp(kPortA, kPortB).payload(size - 42).build();
	xdp_md ctx{};
	ctx.data_end = static_cast<__u32>(f.size());
	ctx.ingress_ifindex = ifindex;
	ctx.rx_queue_index = static_cast<__u32>(queue);
	bpf_test_run_opts o{};
	o.sz = sizeof(o);
	o.data_in = f.data();
	o.data_size_in = static_cast<__u32>(f.size());
	o.ctx_in = &ctx;
	o.ctx_size_in = sizeof(ctx);
	o.repeat = static_cast<int>(count);
	o.flags = BPF_F_TEST_XDP_LIVE_FRAMES;
	o.batch_size = 64;
	const double t0 = now();
	if (bpf_prog_test_run_opts(fd, &o))
		return die("BPF_PROG_RUN (live frames) of program " + std::to_string(id), errno);
	std::printf("injected %llu\nseconds %.6f\n", count, now() - t0);
	return 0;
}
