/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Helpers shared by the libFuzzer targets and the corpus generator: an
 * input reader, a failure macro that aborts (libFuzzer saves the input),
 * and the configuration the fuzzers give the engine.  The payload pattern
 * and the in-memory link are tests/lib/link.h's.
 */
#ifndef XW_FUZZ_COMMON_H
#define XW_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "link.h" /* the in-memory link, the payload pattern (tests/lib/) */

/* An invariant broke: say which, then abort so that libFuzzer keeps the
 * input as a crasher. */
#define FZ_ASSERT(cond, ...)                                                   \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "INVARIANT %s:%d: %s: ", __FILE__, __LINE__, \
				#cond);                                        \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			abort();                                               \
		}                                                              \
	} while (0)

/* Input bytes, consumed front to back; 0 once exhausted. */
struct fz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t fz_u8(struct fz_in *in)
{
	uint8_t v;

	if (!in->n)
		return 0;
	v = *in->p++;
	in->n--;
	return v;
}

static inline uint16_t fz_u16(struct fz_in *in)
{
	uint16_t hi = fz_u8(in);

	return (uint16_t)(hi << 8 | fz_u8(in));
}

static inline uint32_t fz_u32(struct fz_in *in)
{
	uint32_t hi = fz_u16(in);

	return hi << 16 | fz_u16(in);
}

/*
 * Small bounds so that the limits are reached by short inputs: 64-byte
 * fragments, eager up to 320 bytes, 2 KiB messages at most (32 fragments),
 * 1 KiB of unexpected data, 512 bytes pushed, windows of 16 frames.
 */
#define FZ_P 64u
#define FZ_MSG_MAX 2048u

static inline struct xwi_engine_cfg fz_cfg(__u16 ep, bool reliable)
{
	struct xwi_engine_cfg c;

	xwi_engine_cfg_default(&c, ep, FZ_P);
	c.eager_max = 320;
	c.btp1 = 128;
	c.btp2 = 64;
	c.pull_block = 4;
	c.pull_inflight = 2;
	c.unexpected_max = 1024;
	c.pushed_max = 512;
	c.tx_backlog_max = 8;
	c.reliable = reliable;
	c.crc = true;
	c.window = 16;
	c.ooo_max = 8;
	c.ack_every = 4;
	c.peers_max = 4;
	c.ack_delay_ns = 200000;
	c.rto_init_ns = 2000000;
	c.rto_min_ns = 1000000;
	c.rto_max_ns = 8000000;
	c.give_up_ns = 100000000;
	return c;
}

#endif
