// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// xo-e2e-sender: the kernel senders `tools/bench e2e` compares offload-tool
// send --gso with, each as lean as the socket API allows (no payload
// generation per send, one thread):
//
//   xo-e2e-sender udp-gso  DST_IP PORT SECONDS SEGMENT SEGMENTS
//       UDP super-packets of SEGMENTS x SEGMENT payload bytes, UDP_SEGMENT
//       (gso_size SEGMENT): the kernel (or the device) cuts them.
//   xo-e2e-sender udp-mmsg DST_IP PORT SECONDS SEGMENT BATCH
//       ready-made datagrams of SEGMENT payload bytes, BATCH per sendmmsg().
//   xo-e2e-sender tcp      DST_IP PORT SECONDS WRITE
//       one TCP connection, WRITE bytes per send().
//   xo-e2e-sender tcp-sink PORT SECONDS
//       accepts one connection and reads and drops what arrives.
//
// Each prints "sent N" (datagrams or super-packets; tcp: bytes) and
// "seconds S" on stdout; exit 1 with one line on stderr on an error.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

namespace {

double now()
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

[[noreturn]] void die(const std::string &what)
{
	std::fprintf(stderr, "xo-e2e-sender: %s: %s\n", what.c_str(), std::strerror(errno));
	std::exit(1);
}

unsigned long num(const char *s, const char *what)
{
	char *end = nullptr;
	errno = 0;
	unsigned long v = std::strtoul(s, &end, 10);
	if (errno || !end || *end || !v) {
		std::fprintf(stderr, "xo-e2e-sender: %s: not a positive number: %s\n", what, s);
		std::exit(2);
	}
	return v;
}

sockaddr_in addr(const char *ip, const char *port)
{
	sockaddr_in a{};
	a.sin_family = AF_INET;
	a.sin_port = htons(static_cast<uint16_t>(num(port, "port")));
	if (ip && inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
		std::fprintf(stderr, "xo-e2e-sender: not an IPv4 address: %s\n", ip);
		std::exit(2);
	}
	return a;
}

void report(unsigned long long n, double secs)
{
	std::printf("sent %llu\nseconds %.6f\n", n, secs);
}

// UDP: a connected socket; ENOBUFS (a full qdisc or device) is retried, it
// is back-pressure, not loss.
int udp_socket(const sockaddr_in &dst)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket");
	if (connect(fd, reinterpret_cast<const sockaddr *>(&dst), sizeof(dst)))
		die("connect");
	return fd;
}

int udp_gso(const sockaddr_in &dst, double secs, unsigned seg, unsigned nseg)
{
	int fd = udp_socket(dst);
	int gso = static_cast<int>(seg);
	if (setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &gso, sizeof(gso)))
		die("UDP_SEGMENT");
	std::vector<char> buf(size_t{seg} * nseg, 'x');
	unsigned long long n = 0;
	const double t0 = now();
	double t = t0;
	for (unsigned long long i = 0; t - t0 < secs; i++) {
		if (send(fd, buf.data(), buf.size(), 0) < 0) {
			if (errno != ENOBUFS && errno != EAGAIN)
				die("send");
		} else {
			n++;
		}
		if ((i & 63) == 0)
			t = now();
	}
	report(n, now() - t0);
	return 0;
}

int udp_mmsg(const sockaddr_in &dst, double secs, unsigned seg, unsigned batch)
{
	int fd = udp_socket(dst);
	std::vector<char> buf(seg, 'x');
	std::vector<iovec> iov(batch, iovec{buf.data(), buf.size()});
	std::vector<mmsghdr> m(batch);
	for (unsigned i = 0; i < batch; i++) {
		m[i].msg_hdr = msghdr{};
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
	unsigned long long n = 0;
	const double t0 = now();
	double t = t0;
	for (unsigned long long i = 0; t - t0 < secs; i++) {
		int r = sendmmsg(fd, m.data(), batch, 0);
		if (r < 0) {
			if (errno != ENOBUFS && errno != EAGAIN)
				die("sendmmsg");
		} else {
			n += static_cast<unsigned>(r);
		}
		if ((i & 15) == 0)
			t = now();
	}
	report(n, now() - t0);
	return 0;
}

int tcp(const sockaddr_in &dst, double secs, unsigned write)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket");
	if (connect(fd, reinterpret_cast<const sockaddr *>(&dst), sizeof(dst)))
		die("connect");
	std::vector<char> buf(write, 'x');
	unsigned long long bytes = 0;
	const double t0 = now();
	double t = t0;
	for (unsigned long long i = 0; t - t0 < secs; i++) {
		ssize_t r = send(fd, buf.data(), buf.size(), 0);
		if (r < 0)
			die("send");
		bytes += static_cast<unsigned long long>(r);
		if ((i & 15) == 0)
			t = now();
	}
	report(bytes, now() - t0);
	close(fd);
	return 0;
}

int tcp_sink(const sockaddr_in &local, double secs)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, reinterpret_cast<const sockaddr *>(&local), sizeof(local)) || listen(fd, 1))
		die("bind/listen");
	std::printf("ready\n");
	std::fflush(stdout);
	// the connection must come within the run's time
	timeval tv{static_cast<time_t>(secs) + 5, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int c = accept(fd, nullptr, nullptr);
	if (c < 0)
		die("accept");
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	std::vector<char> buf(1 << 20);
	unsigned long long bytes = 0;
	const double t0 = now();
	for (;;) {
		ssize_t r = recv(c, buf.data(), buf.size(), 0);
		if (r < 0)
			die("recv");
		if (r == 0)
			break;
		bytes += static_cast<unsigned long long>(r);
	}
	std::printf("received %llu\nseconds %.6f\n", bytes, now() - t0);
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	const std::string mode = argc > 1 ? argv[1] : "";
	if (mode == "udp-gso" && argc == 7)
		return udp_gso(addr(argv[2], argv[3]), static_cast<double>(num(argv[4], "seconds")),
			       static_cast<unsigned>(num(argv[5], "segment")), static_cast<unsigned>(num(argv[6], "segments")));
	if (mode == "udp-mmsg" && argc == 7)
		return udp_mmsg(addr(argv[2], argv[3]), static_cast<double>(num(argv[4], "seconds")),
				static_cast<unsigned>(num(argv[5], "segment")), static_cast<unsigned>(num(argv[6], "batch")));
	if (mode == "tcp" && argc == 6)
		return tcp(addr(argv[2], argv[3]), static_cast<double>(num(argv[4], "seconds")),
			   static_cast<unsigned>(num(argv[5], "write")));
	if (mode == "tcp-sink" && argc == 4)
		return tcp_sink(addr(nullptr, argv[2]), static_cast<double>(num(argv[3], "seconds")));
	std::fprintf(stderr, "usage: xo-e2e-sender udp-gso|udp-mmsg DST_IP PORT SECONDS SEGMENT N | tcp DST_IP PORT "
			     "SECONDS WRITE | tcp-sink PORT SECONDS\n");
	return 2;
}
