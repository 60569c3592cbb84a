/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The deterministic generators of the tests and the benchmarks (Marsaglia's
 * xorshift): payload patterns, jitter, random gaps.  Not for anything that
 * must be unpredictable.  The state must not be 0 (it would stay 0).
 */
#ifndef XW_UTIL_RAND_H
#define XW_UTIL_RAND_H

#include <linux/types.h>

/* xorshift64 (13, 7, 17): the next state, which is also the value. */
static inline __u64 xwu_xorshift64(__u64 *s)
{
	__u64 x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* xorshift32 (13, 17, 5): the next state, which is also the value. */
static inline __u32 xwu_xorshift32(__u32 *s)
{
	__u32 x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

#endif
