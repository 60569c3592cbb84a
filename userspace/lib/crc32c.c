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
__attribute__((target("sse4.2"))) static __u32 crc_hw(__u32 crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	__u64 c = ~crc;

	while (len >= 8) {
		__u64 v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((__u32)c, *p++);
	return ~(__u32)c;
}

static int have_hw = -1;

__u32 xwi_crc32c(__u32 crc, const void *buf, size_t len)
{
	int hw = __atomic_load_n(&have_hw, __ATOMIC_RELAXED);

	if (hw < 0) {
		__builtin_cpu_init();
		hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
		__atomic_store_n(&have_hw, hw, __ATOMIC_RELAXED);
	}
	return hw ? crc_hw(crc, buf, len) : xwi_crc32c_sw(crc, buf, len);
}
#else
__u32 xwi_crc32c(__u32 crc, const void *buf, size_t len)
{
	return xwi_crc32c_sw(crc, buf, len);
}
#endif
