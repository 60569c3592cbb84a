/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Operations of the fuzz_engine input (and of the seeds gen_corpus writes):
 * one byte op (modulo FZ_OP_MAX), one byte argument `a` (bit 0: the node),
 * then the operation's own bytes.
 */
#ifndef XW_FUZZ_OPS_H
#define XW_FUZZ_OPS_H

enum {
	FZ_OP_SEND = 0,	    /* a: node (bit 1: to a forger); size class, value */
	FZ_OP_RECV = 1,	    /* a: node, bits 1-2 match kind; size/9, which msg */
	FZ_OP_DELIVER = 2,  /* a: node, 1 + (a>>1)%8 frames from its queue      */
	FZ_OP_PROGRESS = 3, /* a: node, budget 1 + (a>>1)%64                    */
	FZ_OP_CLOCK = 4,    /* a: 50 us steps, or 20 ms steps from 240           */
	FZ_OP_DROP = 5,	    /* a: node; position, value                         */
	FZ_OP_DUP = 6,
	FZ_OP_REORDER = 7,  /* the frame goes to the end of the queue           */
	FZ_OP_CORRUPT = 8,  /* xor (a|1) into byte value*7 % frame length         */
	FZ_OP_TRUNC = 9,
	FZ_OP_REPLAY = 10,  /* a delivered frame again (a late duplicate)        */
	FZ_OP_FORGE = 11,   /* then 8 bytes, see forge()                        */
	FZ_OP_CANCEL = 12,  /* a: bit 1 sends, a>>2 which pending request        */
	FZ_OP_ABORT = 13,
	FZ_OP_RESTART = 14,
	FZ_OP_CAP = 15,	    /* a: node, queue capacity 1 + (a>>1)%96           */
	FZ_OP_MAX = 16,
};

#endif
