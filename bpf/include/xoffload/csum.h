/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Internet checksums at XDP: the outer UDP checksum of a frame, summed
 * straight from the packet in the first buffer (a global function, 64-byte
 * blocks of 32-bit words, no helper call), and through bpf_xdp_load_bytes
 * in a bpf_loop for whatever lies in the other buffers of a multi-buffer
 * frame or does not suit the direct walk.
 */
#ifndef XOFFLOAD_CSUM_H
#define XOFFLOAD_CSUM_H

#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/* Every sum here is a one's complement sum of 16-bit words taken in the
 * machine's byte order (RFC 1071: summing byte-swapped words gives the
 * byte-swapped sum, so the check against 0xffff is the same in either
 * order). Fields that are numbers (the UDP length, the protocol) are added
 * as they sit in the packet, bpf_htons(). 32-bit words go into 64-bit
 * accumulators, which fold at the end: 16 Ki words cannot carry out.
 */

#define XO_CSUM_BLOCK 128		/* bytes per step of the direct walk */
#define XO_CSUM_LINEAR_MAX 4096		/* bytes it takes: a first buffer of a 4 KiB page */
#define XO_CSUM_MAX_OFF 1023		/* where a datagram may start for the walk */
#define XO_CSUM_CHUNK 64		/* bytes per bpf_loop step of the other path */

static __always_inline __u16 xo_csum_fold(__u32 s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)s;
}

static __always_inline __u32 xo_csum_fold64(__u64 s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	return xo_csum_fold((__u32)s);
}

/* A 32-bit word at byte @i of @p, widened for the 64-bit sums. */
#define XO_CSUM_W(p, i) ((__u64)*(const __u32 *)((void *)(p) + (i)))

/* @n (a constant multiple of 16) bytes at @p into the four sums: four
 * chains of adds, so they run in parallel.
 */
#define XO_CSUM_ADD(p, n)							\
	do {									\
		_Pragma("unroll")						\
		for (int _k = 0; _k < (n); _k += 16) {				\
			a += XO_CSUM_W(p, _k);					\
			b += XO_CSUM_W(p, _k + 4);				\
			c += XO_CSUM_W(p, _k + 8);				\
			d += XO_CSUM_W(p, _k + 12);				\
		}								\
	} while (0)

/* The one's complement sum, folded to 16 bits, of the @len bytes at @off
 * in the frame's first buffer; -1 when they are not all there, when @len
 * is above XO_CSUM_LINEAR_MAX or when @off is beyond XO_CSUM_MAX_OFF (the
 * caller sums them otherwise).
 *
 * A global function: the verifier checks it once on its own (its block
 * loop runs up to XO_CSUM_LINEAR_MAX / XO_CSUM_BLOCK times), not on every
 * path of its caller. The bytes after the last whole block go by halves
 * (64, 32, ... 1 bytes), each step there or not after a test of one bit
 * of @len: 2^7 paths for the verifier, a few predictable branches at run
 * time.
 */
__noinline int xo_csum_linear(struct xdp_md *ctx, __u32 off, __u32 len)
{
	__u64 a = 0, b = 0, c = 0, d = 0, nb, i;
	void *data, *end, *p;

	if (!ctx || off > XO_CSUM_MAX_OFF || len > XO_CSUM_LINEAR_MAX)
		return -1;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	/* masks the verifier tracks whatever it learnt from the checks (the
	 * barriers keep clang from dropping them as implied)
	 */
	barrier_var(off);
	off &= XO_CSUM_MAX_OFF;
	barrier_var(len);
	len &= 2 * XO_CSUM_LINEAR_MAX - 1;
	nb = len / XO_CSUM_BLOCK;

	p = data + off;
	for (i = 0; i < nb; i++) {
		/* opaque to clang, which would otherwise turn the bounds check
		 * into a trip count computed from data_end
		 */
		barrier_var(p);
		if (p + XO_CSUM_BLOCK > end)
			return -1;
		XO_CSUM_ADD(p, XO_CSUM_BLOCK);
		p += XO_CSUM_BLOCK;
	}

	/* the rest, from an offset computed anew so that every exit of the
	 * loop reaches it in one state for the verifier
	 */
	p = data + off + (len & (XO_CSUM_LINEAR_MAX - XO_CSUM_BLOCK));
#define XO_CSUM_STEP(n)								\
	if (len & (n)) {							\
		if (p + (n) > end)						\
			return -1;						\
		XO_CSUM_ADD(p, n);						\
		p += (n);							\
	}
	XO_CSUM_STEP(64)
	XO_CSUM_STEP(32)
	XO_CSUM_STEP(16)
#undef XO_CSUM_STEP
	if (len & 8) {
		if (p + 8 > end)
			return -1;
		a += XO_CSUM_W(p, 0);
		b += XO_CSUM_W(p, 4);
		p += 8;
	}
	if (len & 4) {
		if (p + 4 > end)
			return -1;
		c += XO_CSUM_W(p, 0);
		p += 4;
	}
	/* up to three bytes after the last whole word; the odd one is the
	 * first of a 16-bit word whose second is zero
	 */
	if (len & 2) {
		if (p + 2 > end)
			return -1;
		d += *(const __u16 *)p;
		p += 2;
	}
	if (len & 1) {
		if (p + 1 > end)
			return -1;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		a += *(const __u8 *)p;
#else
		a += (__u32)*(const __u8 *)p << 8;
#endif
	}
	return xo_csum_fold64(a + b + c + d);
}

struct xo_csum_loop {
	struct xdp_md *ctx;
	__u32 off;		/* next byte to sum, from data */
	__u32 end;		/* one past the last byte */
	__u32 sum;		/* running 32-bit one's complement sum */
	__s32 err;
};

static long xo_csum_step(__u32 idx, void *arg)
{
	struct xo_csum_loop *l = arg;
	__u8 buf[XO_CSUM_CHUNK + 4] = {};
	__u32 n;
	__s64 r;

	if (l->off >= l->end)
		return 1;
	n = l->end - l->off;
	if (n >= XO_CSUM_CHUNK) {
		if (bpf_xdp_load_bytes(l->ctx, l->off, buf, XO_CSUM_CHUNK))
			goto fail;
		r = bpf_csum_diff(NULL, 0, (void *)buf, XO_CSUM_CHUNK, l->sum);
		l->off += XO_CSUM_CHUNK;
	} else {
		/* odd tail: zero padding sums as nothing, chunks start even.
		 * The helper wants a size of 1..63 (0 < n < 64 here); 6.1
		 * learns no lower bound from a test of k against 0, so it is
		 * shown k - 1 <= 62, in 64 bits (clang checked a 32-bit k on
		 * a zero-extended copy and passed the unchecked register);
		 * the barrier keeps clang from folding that back into n or
		 * dropping the check as implied by n < 64
		 */
		__u64 k = (__u64)n - 1;

		barrier_var(k);
		if (k > XO_CSUM_CHUNK - 2)
			goto fail;
		k += 1;
		if (bpf_xdp_load_bytes(l->ctx, l->off, buf, k))
			goto fail;
		k = (k + 3) & 0x7c;
		r = bpf_csum_diff(NULL, 0, (void *)buf, k, l->sum);
		l->off = l->end;
	}
	if (r < 0)
		goto fail;
	l->sum = (__u32)r;
	return 0;
fail:
	l->err = -1;
	return 1;
}

/* 1 when the checksum of the UDP header @uh, over the pseudo header of
 * the IPv4 or IPv6 header @l3 (@ipv6) and the frame's bytes [udp_off,
 * udp_off + udp_len) in every buffer, is right (or absent over IPv4), 0
 * when wrong, -1 on failure. The bytes in the first buffer are summed in
 * place by xo_csum_linear (all of them unless the frame has several
 * buffers), the rest through bpf_xdp_load_bytes.
 */
static __always_inline int xo_udp_csum_ok(struct xdp_md *ctx, void *l3, int ipv6,
					  const struct udphdr *uh, __u32 udp_off,
					  __u32 udp_len)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xo_csum_loop l = { .ctx = ctx };
	__u64 s, first = data_end - data;
	__u32 done = 0;
	int r;

	if (!uh->check)
		return ipv6 ? 0 : 1;	/* zero = no checksum, IPv4 only */
	/* the pseudo header: addresses, the protocol and the UDP length */
	s = bpf_htons(IPPROTO_UDP) + bpf_htons(udp_len);
	if (ipv6) {
		const __u32 *w = l3;

		if ((void *)(w + 10) > data_end)
			return -1;
		s += (__u64)w[2] + w[3] + w[4] + w[5] + w[6] + w[7] + w[8] + w[9];
	} else {
		const __u32 *w = l3;

		if ((void *)(w + 5) > data_end)
			return -1;
		s += (__u64)w[3] + w[4];
	}
	/* the datagram's bytes in the first buffer: all of them, or as many
	 * whole words as are there when it goes on in the next buffer
	 */
	if (udp_off < first) {
		__u64 n = first - udp_off;

		n = udp_len <= n ? udp_len : n & ~3ULL;
		r = xo_csum_linear(ctx, udp_off, (__u32)n);
		if (r >= 0) {
			s += (__u32)r;
			done = (__u32)n;
		}
	}
	if (done < udp_len) {
		l.off = udp_off + done;
		l.end = udp_off + udp_len;
		bpf_loop(65536 / XO_CSUM_CHUNK + 1, xo_csum_step, &l, 0);
		if (l.err || l.off != l.end)
			return -1;
		s += l.sum;
	}
	return xo_csum_fold64(s) == 0xffff;
}

#endif /* XOFFLOAD_CSUM_H */
