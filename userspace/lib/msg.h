/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * msg.h - the message layer's interface inside the engine: what matching
 * (match.c) and the engine's entry points (engine.c) call.
 */
#ifndef XWI_MSG_H
#define XWI_MSG_H

#include "engine_int.h"

/* A new pending request of @kind (queued in e->pending). */
struct xw_request *xwi_req_new(struct xwi_engine *e, enum xwi_req_kind kind);
/* Receive @req takes eligible message @m (held data copied over); @m may
 * complete (and be freed) at once. */
void xwi_msg_attach(struct xwi_engine *e, struct rmsg *m, struct xw_request *req);
/* The TX scheduler: emit up to @budget queued frames, peers served
 * round-robin one frame at a time.  Frames emitted. */
int xwi_tx_run(struct xwi_engine *e, int budget);

#endif
