// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// xo-xsk-baseline: the smallest AF_XDP sender/receiver libxdp allows
// (xsk_umem__create + xsk_socket__create, no accounting, no stats), the
// reference `tools/bench xsk` compares offload-tool send/recv against.
//
//   xo-xsk-baseline tx IFNAME SECONDS SIZE [PCAP]  # prints "pps N"; sends
//                                                  # the first frame of PCAP
//   xo-xsk-baseline rx IFNAME SECONDS          # prints "pps N" (libxdp's own XDP program)
// Both also print "packets N" and "cpu_s S" (user + system CPU of the loop).
#include <net/if.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>
#define PCAP_DONT_INCLUDE_PCAP_BPF_H	// clashes with linux/bpf.h from libxdp
#include <pcap/pcap.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr unsigned kFrames = 4096, kFrameSize = 4096, kRing = 2048, kBatch = 64;

double now_s()
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// user + system CPU seconds of this process so far
double cpu_s()
{
	rusage ru{};
	getrusage(RUSAGE_SELF, &ru);
	return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int die(const char *what, int err)
{
	std::fprintf(stderr, "xo-xsk-baseline: %s: %s\n", what, std::strerror(err < 0 ? -err : err));
	return 1;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 4 || (std::strcmp(argv[1], "tx") && std::strcmp(argv[1], "rx"))) {
		std::fprintf(stderr, "usage: xo-xsk-baseline tx IFNAME SECONDS SIZE | rx IFNAME SECONDS\n");
		return 2;
	}
	const bool tx = !std::strcmp(argv[1], "tx");
	const char *ifname = argv[2];
	const double secs = std::atof(argv[3]);
	unsigned size = tx && argc > 4 ? static_cast<unsigned>(std::atoi(argv[4])) : 64;

	void *area = mmap(nullptr, size_t{kFrames} * kFrameSize, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (area == MAP_FAILED)
		return die("mmap", errno);
	// Zeroed: libxdp leaves the cached indexes of the completion ring as it finds them.
	xsk_ring_prod fill{}, txr{};
	xsk_ring_cons comp{}, rxr{};
	xsk_umem_config uc{kRing, kRing, kFrameSize, 0, 0};
	xsk_umem *umem = nullptr;
	int err = xsk_umem__create(&umem, area, size_t{kFrames} * kFrameSize, &fill, &comp, &uc);
	if (err)
		return die("xsk_umem__create", err);
	xsk_socket_config sc{};
	sc.rx_size = kRing;
	sc.tx_size = kRing;
	sc.libxdp_flags = tx ? XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD : 0;
	sc.xdp_flags = 0;
	sc.bind_flags = XDP_USE_NEED_WAKEUP;
	xsk_socket *xsk = nullptr;
	// the kernel releases a closed socket's queue from a workqueue: a queue
	// the previous run freed a moment ago can still say EBUSY; retry briefly,
	// as offload-tool's bind does (25 x 20 ms), setup is not timed
	for (int tries = 0; tries < 25; tries++) {
		err = xsk_socket__create(&xsk, ifname, 0, umem, tx ? nullptr : &rxr, tx ? &txr : nullptr, &sc);
		if (err != -EBUSY)
			break;
		usleep(20000);
	}
	if (err)
		return die("xsk_socket__create", err);
	int fd = xsk_socket__fd(xsk);

	// The same bytes as the sender compared against (so the receiving
	// side does the same work), else any bytes.
	unsigned char frame[kFrameSize];
	std::memset(frame, 0x5a, sizeof(frame));
	if (tx && argc > 5) {
		char errbuf[PCAP_ERRBUF_SIZE];
		pcap_t *p = pcap_open_offline(argv[5], errbuf);
		pcap_pkthdr *h;
		const u_char *d;
		if (!p || pcap_next_ex(p, &h, &d) != 1) {
			std::fprintf(stderr, "xo-xsk-baseline: cannot read a frame from %s\n", argv[5]);
			return 1;
		}
		size = h->caplen < kFrameSize ? h->caplen : kFrameSize;
		std::memcpy(frame, d, size);
		pcap_close(p);
	}
	for (unsigned i = 0; i < kFrames; i++)
		std::memcpy(static_cast<char *>(area) + size_t{i} * kFrameSize, frame, kFrameSize);
	unsigned long long done = 0;
	unsigned free_top = kFrames, outstanding = 0;
	static unsigned long long stack[kFrames];
	for (unsigned i = 0; i < kFrames; i++)
		stack[i] = static_cast<unsigned long long>(i) * kFrameSize;

	if (!tx) {
		unsigned idx = 0;
		unsigned n = xsk_ring_prod__reserve(&fill, kRing, &idx);
		for (unsigned i = 0; i < n; i++)
			*xsk_ring_prod__fill_addr(&fill, idx + i) = stack[--free_top];
		xsk_ring_prod__submit(&fill, n);
	}
	// receivers say when they are in place, so a bench starts the sender after
	std::printf("ready\n");
	std::fflush(stdout);
	const double cpu0 = cpu_s();
	const double t0 = now_s();
	double t = t0;
	unsigned long long loops = 0;
	while (t - t0 < secs) {
		if ((++loops & 255) == 0)
			t = now_s();
		unsigned idx = 0;
		if (tx) {
			unsigned c = xsk_ring_cons__peek(&comp, kRing, &idx);
			for (unsigned i = 0; i < c; i++)
				stack[free_top++] = *xsk_ring_cons__comp_addr(&comp, idx + i);
			if (c) {
				xsk_ring_cons__release(&comp, c);
				outstanding -= c;
				done += c;
			}
			unsigned n = free_top < kBatch ? free_top : kBatch;
			if (n && xsk_ring_prod__reserve(&txr, n, &idx) == n) {
				for (unsigned i = 0; i < n; i++) {
					xdp_desc *d = xsk_ring_prod__tx_desc(&txr, idx + i);
					d->addr = stack[--free_top];
					d->len = size;
					d->options = 0;
				}
				xsk_ring_prod__submit(&txr, n);
				outstanding += n;
			}
			if (xsk_ring_prod__needs_wakeup(&txr))
				sendto(fd, nullptr, 0, MSG_DONTWAIT, nullptr, 0);
		} else {
			unsigned n = xsk_ring_cons__peek(&rxr, kBatch, &idx);
			if (!n) {
				if (xsk_ring_prod__needs_wakeup(&fill))
					recvfrom(fd, nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
				pollfd p{fd, POLLIN, 0};
				poll(&p, 1, 10);
				t = now_s();
				continue;
			}
			unsigned fidx = 0;
			while (xsk_ring_prod__reserve(&fill, n, &fidx) != n)
				;
			for (unsigned i = 0; i < n; i++)
				*xsk_ring_prod__fill_addr(&fill, fidx + i) = xsk_ring_cons__rx_desc(&rxr, idx + i)->addr;
			xsk_ring_prod__submit(&fill, n);
			xsk_ring_cons__release(&rxr, n);
			done += n;
		}
	}
	t = now_s();
	// the CPU the loop spent (its own and the kernel work of its system
	// calls, set-up left out), for the CPU per frame tools/bench xsk compares
	const double cpu = cpu_s() - cpu0;
	std::printf("pps %.0f\npackets %llu\ncpu_s %.6f\n", static_cast<double>(done) / (t - t0), done, cpu);
	xsk_socket__delete(xsk);
	xsk_umem__delete(umem);
	return 0;
}
