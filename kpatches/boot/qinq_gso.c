// SPDX-License-Identifier: GPL-2.0
/* Sends one TCP/IPv4 GSO frame with 0, 1 or 2 in-band VLAN tags through a
 * device and reports how many skbs reached the device below it: 1 means the
 * frame stayed a GSO super-packet, gso-segment count means it was segmented
 * in software on the way.
 *
 * usage: qinq_gso DEV LOWER TAGS [PAYLOAD MSS]
 * Output is one line of key=value pairs; exit 0 when the measurement ran,
 * 1 on a runtime error, 2 on bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_FRAME 65536

struct dev_stats {
	unsigned long long tx_packets;
	unsigned long long tx_bytes;
};

/* /proc/net/dev follows the caller's network namespace, /sys/class/net only
 * the namespace sysfs was mounted in: read the former.
 */
static struct dev_stats read_stats(const char *dev)
{
	struct dev_stats st = { 0 };
	char line[512];
	size_t n = strlen(dev);
	FILE *f = fopen("/proc/net/dev", "r");

	if (!f) {
		fprintf(stderr, "qinq_gso: /proc/net/dev: %s\n", strerror(errno));
		exit(1);
	}
	while (fgets(line, sizeof(line), f)) {
		char *s = line;
		unsigned long long v[10];

		while (*s == ' ')
			s++;
		if (strncmp(s, dev, n) || s[n] != ':')
			continue;
		if (sscanf(s + n + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7], &v[8], &v[9]) != 10)
			break;
		st.tx_bytes = v[8];
		st.tx_packets = v[9];
		fclose(f);
		return st;
	}
	fclose(f);
	fprintf(stderr, "qinq_gso: %s: not in /proc/net/dev\n", dev);
	exit(1);
}

static uint32_t csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len > 1) {
		sum += (uint32_t)p[0] << 8 | p[1];
		p += 2;
		len -= 2;
	}
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

int main(int argc, char **argv)
{
	static uint8_t frame[MAX_FRAME];
	struct dev_stats lo0, lo1, up0, up1;
	struct virtio_net_hdr vh = { 0 };
	struct sockaddr_ll sll = { 0 };
	struct iovec iov[2];
	struct msghdr msg = { 0 };
	const char *dev, *lower;
	int tags, payload = 4000, mss = 1000;
	size_t l2, off, ip_off, tcp_off, total;
	uint16_t outer_proto;
	uint32_t sum;
	unsigned long long dn, ln, segs;
	const char *result;
	int fd, one = 1;
	uint8_t *p;

	if (argc < 4 || argc > 6) {
		fprintf(stderr, "usage: %s DEV LOWER TAGS [PAYLOAD MSS]\n", argv[0]);
		return 2;
	}
	dev = argv[1];
	lower = argv[2];
	tags = atoi(argv[3]);
	if (argc > 4)
		payload = atoi(argv[4]);
	if (argc > 5)
		mss = atoi(argv[5]);
	if (tags < 0 || tags > 2 || mss < 64 || payload <= mss ||
	    payload > MAX_FRAME - 100) {
		fprintf(stderr, "qinq_gso: need 0 <= TAGS <= 2, MSS >= 64, MSS < PAYLOAD < %d\n",
			MAX_FRAME - 100);
		return 2;
	}

	/* Ethernet: locally administered unicast addresses. */
	p = frame;
	memcpy(p, "\x02\x00\x00\x00\x00\x02", 6);
	memcpy(p + 6, "\x02\x00\x00\x00\x00\x01", 6);
	off = 12;
	if (tags == 2) {		/* 802.1ad S-tag, VID 100 */
		put16(p + off, ETH_P_8021AD);
		put16(p + off + 2, 100);
		off += 4;
	}
	if (tags >= 1) {		/* 802.1Q C-tag, VID 200 */
		put16(p + off, ETH_P_8021Q);
		put16(p + off + 2, 200);
		off += 4;
	}
	put16(p + off, ETH_P_IP);
	l2 = off + 2;
	outer_proto = tags == 2 ? ETH_P_8021AD : tags == 1 ? ETH_P_8021Q : ETH_P_IP;

	/* IPv4 192.168.1.1 -> 192.168.1.2, DF, TCP. */
	ip_off = l2;
	p = frame + ip_off;
	p[0] = 0x45;
	put16(p + 2, 20 + 20 + payload);
	put16(p + 6, 0x4000);
	p[8] = 64;
	p[9] = 6;
	memcpy(p + 12, "\xc0\xa8\x01\x01\xc0\xa8\x01\x02", 8);
	put16(p + 10, (uint16_t)~csum_fold(csum_add(0, p, 20)));

	/* TCP 40000 -> 5001, ACK|PSH; check holds the pseudo-header sum as
	 * CHECKSUM_PARTIAL expects.
	 */
	tcp_off = ip_off + 20;
	p = frame + tcp_off;
	put16(p, 40000);
	put16(p + 2, 5001);
	p[4] = 0x10;
	p[12] = 5 << 4;
	p[13] = 0x18;
	put16(p + 14, 65535);
	sum = csum_add(0, frame + ip_off + 12, 8);
	sum += 6 + 20 + payload;
	put16(p + 16, csum_fold(sum));
	for (int i = 0; i < payload; i++)
		frame[tcp_off + 20 + i] = (uint8_t)i;
	total = tcp_off + 20 + payload;

	vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	vh.hdr_len = tcp_off + 20;
	vh.gso_size = mss;
	vh.csum_start = tcp_off;
	vh.csum_offset = 16;

	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		perror("qinq_gso: socket");
		return 1;
	}
	if (setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one))) {
		perror("qinq_gso: PACKET_VNET_HDR");
		return 1;
	}
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(outer_proto);
	sll.sll_ifindex = if_nametoindex(dev);
	if (!sll.sll_ifindex) {
		fprintf(stderr, "qinq_gso: %s: no such device\n", dev);
		return 1;
	}

	iov[0].iov_base = &vh;
	iov[0].iov_len = sizeof(vh);
	iov[1].iov_base = frame;
	iov[1].iov_len = total;
	msg.msg_name = &sll;
	msg.msg_namelen = sizeof(sll);
	msg.msg_iov = iov;
	msg.msg_iovlen = 2;

	lo0 = read_stats(lower);
	up0 = read_stats(dev);
	if (sendmsg(fd, &msg, 0) < 0) {
		perror("qinq_gso: sendmsg");
		return 1;
	}
	usleep(200 * 1000);
	lo1 = read_stats(lower);
	up1 = read_stats(dev);
	close(fd);

	segs = (unsigned long long)(payload + mss - 1) / mss;
	dn = up1.tx_packets - up0.tx_packets;
	ln = lo1.tx_packets - lo0.tx_packets;
	/* GSO: one skb all the way down. SEGMENTED: DEV already handled the
	 * segments (split at or above it). SEGMENTED_BELOW: DEV passed one skb
	 * and the lower device split it.
	 */
	result = ln == 1 ? "GSO" :
		 ln == segs && dn == segs ? "SEGMENTED" :
		 ln == segs && dn == 1 ? "SEGMENTED_BELOW" : "OTHER";
	printf("qinq_gso dev=%s lower=%s tags=%d payload=%d mss=%d segs=%llu "
	       "dev_tx_packets=%llu lower_tx_packets=%llu lower_tx_bytes=%llu result=%s\n",
	       dev, lower, tags, payload, mss, segs, dn, ln,
	       lo1.tx_bytes - lo0.tx_bytes, result);
	return 0;
}
