// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * crc32c.c - CRC32C with the SSE4.2 instruction or a table (see crc32c.h).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "crc32c.h"

static __u32 table[8][256];
static int table_ready; /* 0: not yet, 1: built */

static void table_build(void)
{
	for (__u32 i = 0; i < 256; i++) {
		__u32 c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
		table[0][i] = c;
	}
	for (__u32 i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xFF];
	__atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

__u32 xwi_crc32c_sw(__u32 crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	__u32 c = ~crc;

	if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE))
		table_build(); /* idempotent: racing builders write the same values */
	while (len >= 8) {
		__u64 v;

		memcpy(&v, p, 8);
		v ^= c; /* little-endian */
		c = table[7][v & 0xFF] ^ table[6][(v >> 8) & 0xFF] ^ table[5][(v >> 16) & 0xFF] ^
		    table[4][(v >> 24) & 0xFF] ^ table[3][(v >> 32) & 0xFF] ^
		    table[2][(v >> 40) & 0xFF] ^ table[1][(v >> 48) & 0xFF] ^ table[0][v >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		c = (c >> 8) ^ table[0][(c ^ *p++) & 0xFF];
	return ~c;
}

#if defined(__x86_64__)
/*
 * The crc32 instruction has a latency of 3 cycles and a throughput of 1:
 * one stream runs at a third of its speed.  Lengths of XWI_CRC_LANE * 3
 * bytes and more go as three interleaved streams of XWI_CRC_LANE bytes,
 * the second and third from 0, joined by linearity: the register after
 * A B C is shift(shift(a) ^ b) ^ c, where shift() advances a register
 * over XWI_CRC_LANE zero bytes (shift_tab: one table per byte of the
 * register, built once from the instruction itself).
 */
#define XWI_CRC_LANE 256

static __u32 shift_tab[4][256];
static int shift_ready; /* 0: not yet, 1: built */

__attribute__((target("sse4.2"))) static __u32 zeros_hw(__u32 c, size_t len)
{
	__u64 r = c;

	for (size_t i = 0; i < len / 8; i++)
		r = __builtin_ia32_crc32di(r, 0);
	return (__u32)r;
}

static void shift_build(void)
{
	__u32 col[32];

	for (int b = 0; b < 32; b++)
		col[b] = zeros_hw(1u << b, XWI_CRC_LANE);
	for (int k = 0; k < 4; k++) {
		for (__u32 v = 0; v < 256; v++) {
			__u32 r = 0;

			for (int j = 0; j < 8; j++)
				if (v >> j & 1)
					r ^= col[8 * k + j];
			shift_tab[k][v] = r;
		}
	}
	__atomic_store_n(&shift_ready, 1, __ATOMIC_RELEASE);
}

static __u32 shift(__u32 c)
{
	return shift_tab[0][c & 0xFF] ^ shift_tab[1][(c >> 8) & 0xFF] ^
	       shift_tab[2][(c >> 16) & 0xFF] ^ shift_tab[3][c >> 24];
}

/* @dst non-NULL: each word is stored there too (a constant NULL drops the
 * stores: the function is inlined into its two users). */
__attribute__((target("sse4.2"), always_inline)) static inline __u32
crc_hw_do(__u32 crc, const void *buf, size_t len, unsigned char *dst)
{
	const unsigned char *p = buf;
	__u64 c = ~crc;

	if (len >= 3 * XWI_CRC_LANE && !__atomic_load_n(&shift_ready, __ATOMIC_ACQUIRE))
		shift_build(); /* idempotent: racing builders write the same values */
	while (len >= 3 * XWI_CRC_LANE) {
		__u64 b = 0, d = 0;

		for (size_t i = 0; i < XWI_CRC_LANE; i += 8) {
			__u64 va, vb, vc;

			memcpy(&va, p + i, 8);
			memcpy(&vb, p + XWI_CRC_LANE + i, 8);
			memcpy(&vc, p + 2 * XWI_CRC_LANE + i, 8);
			c = __builtin_ia32_crc32di(c, va);
			b = __builtin_ia32_crc32di(b, vb);
			d = __builtin_ia32_crc32di(d, vc);
			if (dst) {
				memcpy(dst + i, &va, 8);
				memcpy(dst + XWI_CRC_LANE + i, &vb, 8);
				memcpy(dst + 2 * XWI_CRC_LANE + i, &vc, 8);
			}
		}
		c = shift(shift((__u32)c) ^ (__u32)b) ^ (__u32)d;
		p += 3 * XWI_CRC_LANE;
		len -= 3 * XWI_CRC_LANE;
		if (dst)
			dst += 3 * XWI_CRC_LANE;
	}
	while (len >= 8) {
		__u64 v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		if (dst) {
			memcpy(dst, &v, 8);
			dst += 8;
		}
		p += 8;
		len -= 8;
	}
	while (len--) {
		if (dst)
			*dst++ = *p;
		c = __builtin_ia32_crc32qi((__u32)c, *p++);
	}
	return ~(__u32)c;
}

__attribute__((target("sse4.2"))) static __u32 crc_hw(__u32 crc, const void *buf, size_t len)
{
	return crc_hw_do(crc, buf, len, NULL);
}

__attribute__((target("sse4.2"))) static __u32 crc_hw_copy(__u32 crc, void *dst, const void *src,
							    size_t len)
{
	return crc_hw_do(crc, src, len, dst);
}

static int have_hw = -1;

static bool hw_ok(void)
{
	int hw = __atomic_load_n(&have_hw, __ATOMIC_RELAXED);

	if (hw < 0) {
		__builtin_cpu_init();
		hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
		__atomic_store_n(&have_hw, hw, __ATOMIC_RELAXED);
	}
	return hw;
}

__u32 xwi_crc32c(__u32 crc, const void *buf, size_t len)
{
	return hw_ok() ? crc_hw(crc, buf, len) : xwi_crc32c_sw(crc, buf, len);
}

__u32 xwi_crc32c_copy(__u32 crc, void *dst, const void *src, size_t len)
{
	if (hw_ok())
		return crc_hw_copy(crc, dst, src, len);
	memcpy(dst, src, len);
	return xwi_crc32c_sw(crc, dst, len);
}
#else
__u32 xwi_crc32c(__u32 crc, const void *buf, size_t len)
{
	return xwi_crc32c_sw(crc, buf, len);
}

__u32 xwi_crc32c_copy(__u32 crc, void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	return xwi_crc32c_sw(crc, dst, len);
}
#endif
