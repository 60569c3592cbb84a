/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * crc32c.h - CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the
 * integrity check of every xdpwake frame.  Uses the SSE4.2 crc32
 * instruction when the CPU has it, else a table.
 */
#ifndef XWI_CRC32C_H
#define XWI_CRC32C_H

#include <stddef.h>
#include <linux/types.h>

/*
 * Continue a CRC32C: start with @crc = 0; the pre/post inversion is done
 * inside, so xwi_crc32c(xwi_crc32c(0, a, n), b, m) == CRC of a then b.
 * CRC32C("123456789") == 0xE3069283.
 */
__u32 xwi_crc32c(__u32 crc, const void *buf, size_t len);
/* The same computed with the table only (for tests). */
__u32 xwi_crc32c_sw(__u32 crc, const void *buf, size_t len);
/* xwi_crc32c() over @src while copying its @len bytes to @dst (one pass
 * over the bytes instead of two: the CRC fused with the copy into the
 * UMEM frame); @dst and @src do not overlap. */
__u32 xwi_crc32c_copy(__u32 crc, void *dst, const void *src, size_t len);

#endif
