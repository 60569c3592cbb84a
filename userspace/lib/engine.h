/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * engine.h - the message protocol engine of one endpoint.
 *
 * Pure: it takes received frames (xwi_engine_rx) and produces frames to
 * transmit through a callback (ops->send); it owns no socket, no thread and
 * no clock of its own (time comes from ops->now_ns).  It implements
 * tag matching (posted-receive queue, unexpected queue, per-peer order),
 * eager framing (SMALL, MEDIUM fragments) and push-pull framing (RNDV with
 * the first BTP(1) bytes, BTP(2) more pushed at once, PULL blocks of up to
 * 32 fragments with several in flight, PULL_REPLY, NOTIFY), the LAT and
 * MORE marks, and bounded memory for unexpected messages and pushed bytes.
 *
 * Reliability (sessions, sequence numbers, acks, retransmission, CRC) is the
 * next layer: the header's session/seq/ack/csum fields are written as 0
 * here and the state is kept so that it can be added (every frame the engine
 * emits can be re-emitted from request state; received data is tracked per
 * fragment in a bitmap so duplicates are harmless).
 *
 * Not thread-safe: the caller serialises all calls on one engine.
 */
#ifndef XWI_ENGINE_H
#define XWI_ENGINE_H

#include <stddef.h>
#include <stdbool.h>
#include <linux/types.h>
#include "xdpwake.h"

/* Mark kinds (bits of xwi_engine_cfg.marks): which packets get LAT. */
#define XWI_MARK_SMALL (1u << 0)       /* SMALL                          */
#define XWI_MARK_MEDIUM (1u << 1)      /* the last MEDIUM fragment        */
#define XWI_MARK_RNDV (1u << 2)	       /* RNDV                            */
#define XWI_MARK_PULL (1u << 3)	       /* PULL request                    */
#define XWI_MARK_PULL_REPLY (1u << 4)  /* the last PULL_REPLY of a block  */
#define XWI_MARK_NOTIFY (1u << 5)      /* NOTIFY                          */
#define XWI_MARK_ALL 0x3Fu

struct xwi_engine_cfg {
	__u16 ep;		/* our endpoint id (xw_hdr.src_ep)                 */
	__u32 frag_payload;	/* max payload bytes per frame (MTU - headers)     */
	__u32 eager_max;	/* messages up to this size are pushed whole       */
	__u32 btp1;		/* bytes carried with RNDV (first frame, then more  */
				/* pushed frames until btp1 bytes are out)          */
	__u32 btp2;		/* bytes pushed right after, without waiting        */
	__u32 pull_block;	/* fragments per PULL block, 1..32                 */
	__u32 pull_inflight;	/* PULL blocks in flight per message, >= 1          */
	__u64 unexpected_max;	/* bytes held for unexpected eager messages        */
	__u64 pushed_max;	/* bytes held for pushed data of unexpected RNDVs  */
	__u32 tx_backlog_max;	/* send requests queued before -EAGAIN             */
	__u32 marks;		/* XWI_MARK_* kinds to set (default XWI_MARK_ALL)  */
	__u32 mark_shift;	/* test only: LAT on fragment N-1-mark_shift of a
				 * MEDIUM message / PULL block instead of the last */
};

/* Fill @cfg with the defaults: eager_max 32 KiB, btp1 = one frame's payload,
 * btp2 = 4 * frag_payload, pull_block 32, pull_inflight 4,
 * unexpected_max 8 MiB, pushed_max 4 MiB, tx_backlog_max 1024,
 * marks XWI_MARK_ALL, mark_shift 0. */
void xwi_engine_cfg_default(struct xwi_engine_cfg *cfg, __u16 ep, __u32 frag_payload);

struct xwi_engine_ops {
	/*
	 * Transmit one frame to @dst: @h is a complete header in network
	 * byte order (flags include LAT/MORE as decided by the engine),
	 * @payload/@len its payload (len == ntohs(h->payload_len)).  The
	 * callee copies both before returning.  Returns 0, or -EAGAIN when
	 * the transmit path is full: the engine keeps the frame's state and
	 * emits it again from xwi_engine_progress().
	 */
	int (*send)(void *ctx, const struct xw_addr *dst, const struct xw_hdr *h,
		    const void *payload, size_t len);
	/* Monotonic time in ns (for request timestamps and future timers). */
	__u64 (*now_ns)(void *ctx);
};

/* Request states. */
enum xwi_req_state {
	XWI_REQ_PENDING = 0,
	XWI_REQ_DONE = 1,	/* status valid */
};

enum xwi_req_kind {
	XWI_REQ_SEND = 1,
	XWI_REQ_RECV = 2,
};

/*
 * A request (send or receive).  Allocated by the engine, completed by it,
 * and freed by xwi_request_free() once the application has collected it.
 * `public` members may be read by the endpoint layer; the rest is private
 * to engine.c (add what it needs there, after the public part).
 */
struct xwi_engine;
struct xw_request {
	/* public */
	struct xwi_engine *eng;
	enum xwi_req_kind kind;
	enum xwi_req_state state;
	struct xw_status status;	/* valid when state == XWI_REQ_DONE */
	/* private: see engine.c */
	struct xwi_req_priv *priv;
};

struct xwi_engine *xwi_engine_new(const struct xwi_engine_cfg *cfg,
				  const struct xwi_engine_ops *ops, void *ctx);
void xwi_engine_free(struct xwi_engine *e);
/* The endpoint layer's pointer, stored at creation (@ctx). */
void *xwi_engine_ctx(struct xwi_engine *e);

/*
 * A frame received from @src (its encapsulation already removed): @h in
 * network byte order, @payload/@len what follows it in the frame (len may
 * exceed payload_len: trailing padding).  Every field is checked again
 * (bounds, fragment index, offsets: wrap-safe); a bad frame returns
 * -EPROTO and changes nothing.  Returns 0 when the frame was used or
 * harmlessly ignored (e.g. a duplicate).
 */
int xwi_engine_rx(struct xwi_engine *e, const struct xw_addr *src, const struct xw_hdr *h,
		  const void *payload, size_t len);

/*
 * One bounded pass of transmit work: emit up to @budget frames that are
 * due (fragments of queued sends, pushed bytes, PULL requests, PULL
 * replies, NOTIFYs) until ops->send returns -EAGAIN.  Returns the number of
 * frames emitted (>= 0).
 */
int xwi_engine_progress(struct xwi_engine *e, int budget);

/* True when the engine has frames waiting to be emitted. */
bool xwi_engine_tx_pending(const struct xwi_engine *e);

/*
 * Post a send of @len bytes at @buf with match @match to @dst.  Eager
 * messages (len <= eager_max) are copied at once and @buf may be reused on
 * return; larger ones are read from @buf until the request completes
 * (NOTIFY received), so the buffer must stay valid and unchanged until
 * then.  Frames go out from this call when possible and otherwise from
 * xwi_engine_progress().  -EAGAIN when tx_backlog_max requests are queued;
 * -EINVAL bad arguments; -EMSGSIZE len >= 4 GiB.
 */
int xwi_engine_isend(struct xwi_engine *e, const struct xw_addr *dst, const void *buf, size_t len,
		     __u64 match, struct xw_request **reqp);

/*
 * Post a receive into @buf (@len bytes) for a message whose match m
 * satisfies (m & mask) == (match & mask).  It first looks through the
 * unexpected queue (oldest first), then waits in the posted queue (posted
 * receives are matched in the order they were posted; messages from one
 * peer are matched in the order that peer sent them).  A message longer
 * than @len is truncated: status.len = len, status.msg_len = full length,
 * status.error = -EMSGSIZE; never a byte written beyond @len.
 */
int xwi_engine_irecv(struct xwi_engine *e, void *buf, size_t len, __u64 match, __u64 mask,
		     struct xw_request **reqp);

/*
 * Cancel: a receive not yet matched completes with status.error =
 * -ECANCELED (returns 0); a send none of whose frames went out yet
 * completes with -ECANCELED (returns 0); anything already in progress
 * returns -EBUSY and continues.
 */
int xwi_engine_cancel(struct xwi_engine *e, struct xw_request *req);

/*
 * Abort: complete a pending request now with status.error = @err (< 0) and
 * forget its protocol state: a send emits nothing more and its buffer is no
 * longer read; a receive writes nothing more into its buffer and sends no
 * NOTIFY; later frames of that message are ignored as stale.  Used when a
 * blocking call times out.  -EALREADY if the request already completed.
 */
int xwi_engine_abort(struct xwi_engine *e, struct xw_request *req, int err);

/* Release a completed request (state DONE); -EBUSY if still pending. */
int xwi_request_free(struct xw_request *req);

/* Counters of one engine (for stats and tests). */
struct xwi_engine_stats {
	__u64 tx_frames[XW_PKT_TYPE_MAX];
	__u64 rx_frames[XW_PKT_TYPE_MAX];
	__u64 rx_bad;		   /* frames rejected by the checks          */
	__u64 rx_dup;		   /* fragments received twice               */
	__u64 rx_dropped_nomem;	   /* unexpected/pushed data over the bounds */
	__u64 unexpected_msgs;	   /* messages that arrived before a receive */
	__u64 unexpected_bytes;	   /* bytes held now for unexpected messages */
	__u64 pushed_bytes;	   /* bytes held now for unexpected pushes   */
	__u64 sends_done, recvs_done;
};
void xwi_engine_stats(const struct xwi_engine *e, struct xwi_engine_stats *out);
/* True when a message waits in the unexpected queue (a receive would match
 * it at once, given the right match and mask). */
bool xwi_engine_has_unexpected(const struct xwi_engine *e);

#endif
