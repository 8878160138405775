/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Bench-only ABI between the bench BPF wrappers and the bench binary: what the
 * verifying wrapper expects to see before and after each run of the code.
 */
#ifndef XOFFLOAD_BENCH_H
#define XOFFLOAD_BENCH_H

#include <linux/types.h>

#define XO_BENCH_CMP 32		/* leading frame bytes compared, in and out */
#define XO_BENCH_VARIANTS 2	/* accepted (input, output) pairs */

/* Value of xo_bench_expect[0]. A frame must equal in[k] (first CMP bytes,
 * length in_len) and leave as out[k] (length out_len) for some k < variants.
 */
struct xo_bench_expect {
	__u32 variants;
	__u32 in_len;
	__u32 out_len;
	__u32 pad;
	__u8 in[XO_BENCH_VARIANTS][XO_BENCH_CMP];
	__u8 out[XO_BENCH_VARIANTS][XO_BENCH_CMP];
};

/* Index of the per-CPU __u64 counters in xo_bench_chk. */
enum xo_bench_chk {
	XO_BENCH_CHK_OK = 0,	/* input as expected, output as expected */
	XO_BENCH_CHK_BAD_IN,	/* the program was handed another frame */
	XO_BENCH_CHK_BAD_OUT,	/* right input, wrong result */
	XO_BENCH_CHK_MAX,
};

#endif /* XOFFLOAD_BENCH_H */
