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
 * Reliability (cfg.reliable, the default): below the message layer, a
 * connection per peer address (CONNECT / CONNECT_REPLY handshake with
 * random session ids and initial sequence numbers), per-connection
 * sequence numbers, cumulative acks (piggy-backed or delayed ACK frames),
 * retransmission with an RTO and backoff, duplicate suppression, an
 * out-of-order window, a give-up timeout, and CRC32C on every frame
 * (cfg.crc).  See docs/PROTOCOL.md for the protocol.  With cfg.reliable
 * false the header's session/seq/ack/csum fields are 0 and the link must
 * be lossless (unit tests of the message layer).
 *
 * Not thread-safe: the caller serialises all calls on one engine.
 */
#ifndef XWI_ENGINE_H
#define XWI_ENGINE_H

#include <stddef.h>
#include <stdbool.h>
#include <linux/types.h>
#include <sys/uio.h>
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
	__u32 local_eager_max;	/* the same to a peer that reads our buffer
				 * (lossless, ops.cma_read: a local peer), if
				 * smaller (default XWI_LOCAL_EAGER_MAX)            */
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
	/* Reliability (see docs/PROTOCOL.md) */
	bool reliable;		/* sessions, seq/ack, retransmission (default on)   */
	bool crc;		/* CRC32C computed and checked (default on)         */
	bool sack;		/* selective acks in ACK frames (default on)        */
	__u32 window;		/* unacked frames per peer (default 256)            */
	__u32 ooo_max;		/* out-of-order frames held per peer (default 256)   */
	__u32 ack_every;	/* ACK at once after this many frames (default 16)   */
	__u32 peers_max;	/* peers (connections) per engine (default 4096)     */
	__u64 ack_delay_ns;	/* delayed ACK (default 200 us)                      */
	__u64 rto_init_ns;	/* RTO before an RTT sample (default 20 ms)          */
	__u64 rto_min_ns;	/* RTO floor (default 1 ms)                          */
	__u64 rto_max_ns;	/* RTO cap, backoff included (default 250 ms)        */
	__u64 give_up_ns;	/* silent and no answer to our probes this long:
				 * -ETIMEDOUT (default 60 s)                        */
	__u64 live_probe_ns;	/* a silent peer is probed after min(give_up/4, this)
				 * of silence, then every min(give_up/8, this)
				 * (default 1 s): a dead one is given up on the
				 * answer, -ECONNRESET                               */
	__u32 drop_first_type;	/* test only: drop the first transmission of this
				 * packet type (0: none)                            */
	bool isn_fixed;		/* test only: initial sequence numbers = isn         */
	__u32 isn;
};

/* Messages to a local peer above this size are read by the receiver
 * straight from the sender's buffer (process_vm_readv) instead of going
 * through the ring (two copies; Open MPI's vader copies once from its
 * eager limit, 4 KiB): at 16 KiB the RNDV/NOTIFY exchange and one read
 * beat eleven ring frames copied in and out, at 8 KiB six frames did at
 * least as well (bench/RESULTS.md "Local bandwidth, 4 KiB to 4 MiB").
 * Never below the provider's inject size (4 KiB: an inject send's buffer
 * is reusable at once, so it must be copied). */
#define XWI_LOCAL_EAGER_MAX 8192u

/* The pull window's default size in bytes per message (pull_block *
 * pull_inflight * frag_payload, pull_block clamped to 1..32). */
#define XWI_PULL_WINDOW (512u * 1024)

/* Fill @cfg with the defaults: eager_max the larger of 32 KiB and 8 frames'
 * payload, local_eager_max XWI_LOCAL_EAGER_MAX, btp1 = one frame's payload, btp2 = 4 * frag_payload,
 * pull_inflight 8, pull_block XWI_PULL_WINDOW / (8 * frag_payload) within
 * 1..32 (32 at MTU 1500, 7 at MTU 9000),
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
	/* Optional: send as @send does, the frame's CRC32C (csum, which is 0
	 * in @h) computed while the payload is copied out (one pass over its
	 * bytes instead of two).  Used for the frames the engine would seal
	 * itself (cfg.crc, not a lossless peer). */
	int (*send_crc)(void *ctx, const struct xw_addr *dst, const struct xw_hdr *h,
			const void *payload, size_t len);
	/* Monotonic time in ns (timers: retransmission, delayed ACK, give-up). */
	__u64 (*now_ns)(void *ctx);
	/* Optional: the peer @peer's session became @session (0: no session
	 * any more), for the XDP program's `conns` map. */
	void (*conn_event)(void *ctx, const struct xw_addr *peer, __u32 session);
	/* Optional: @len random bytes (default: getrandom()). */
	void (*random)(void *ctx, void *buf, size_t len);
	/* Optional: put the frames sent so far on the wire now.  Called
	 * right after the frame of a one-frame message the application is
	 * sending (xwi_engine_isend*), before the engine's own bookkeeping
	 * of it, so the peer gets it sooner; other frames wait for the
	 * caller's flush. */
	void (*kick)(void *ctx);
	/* Optional: is the peer endpoint @peer alive (its process there, its
	 * endpoint open)?  1 yes; 0 no, for certain (closed, or its process
	 * died: the engine gives up a peer it had a session with at once);
	 * -EOPNOTSUPP: not known here (the engine sends a PROBE frame, which
	 * the peer's XDP program answers); another negative errno: cannot
	 * tell now (no evidence either way).  The endpoint layer knows for
	 * peers on this host. */
	int (*alive)(void *ctx, const struct xw_addr *peer);
	/* Optional: does the lossless peer @peer still hold frames of ours
	 * it has not read (in its ring: not lost, not refused - it is
	 * descheduled or busy)?  1 yes, 0 no.  The handshake's frames to
	 * such a peer are resent only when it read them and did not answer. */
	int (*unread)(void *ctx, const struct xw_addr *peer);
	/* Optional: is @peer reached through a path that cannot lose,
	 * reorder or corrupt a frame (the shared-memory ring of a peer on
	 * this host)?  Asked once per peer.  Such a peer's connection keeps
	 * its handshake, sessions and liveness, but once established its
	 * frames carry no CRC32C and are not kept for retransmission: no
	 * timers, no acks needed (docs/PROTOCOL.md "Local peers"); -EAGAIN
	 * from send is the back-pressure of a full ring.  Its frames must
	 * come in through xwi_engine_rx_local(). */
	bool (*lossless)(void *ctx, const struct xw_addr *peer);
	/*
	 * Optional, for lossless peers: read @len bytes at address @addr of
	 * the process of endpoint @peer into @buf (one copy: Linux
	 * cross-memory attach).  0, or -errno (-EPERM: not permitted, e.g.
	 * Yama ptrace_scope or another user; the engine then pulls the
	 * message's fragments as for any peer, and asks no more for that
	 * peer).  Without it large messages to lossless peers are pulled.
	 */
	int (*cma_read)(void *ctx, const struct xw_addr *peer, __u64 addr, void *buf, size_t len);
	/*
	 * Optional, with cma_read: tell lossless @peer that its large message
	 * @msg_id (its RNDV's session @session) was read, without a NOTIFY
	 * frame; the peer's endpoint hands it to xwi_engine_cma_done().  0:
	 * told; else the engine sends the NOTIFY frame (the peer may get both:
	 * the second finds no send).
	 */
	int (*cma_done)(void *ctx, const struct xw_addr *peer, __u32 msg_id, __u32 session);
	/* Optional: @peer was given up, its requests fail with @err:
	 * -ETIMEDOUT: silent for @silent_ns while @why was owed, our liveness
	 * probes unanswered for @probing_ns (0: none sent); -ECONNRESET: its
	 * endpoint is closed or its process died (@why says how we know),
	 * found after @silent_ns of silence.  For the endpoint's log: the
	 * engine prints nothing. */
	void (*gave_up)(void *ctx, const struct xw_addr *peer, int err, const char *why,
			__u64 silent_ns, __u64 probing_ns);
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
	struct xw_endpoint *ep;		/* the endpoint layer's: set by it when it
					 * hands the request out (not used here) */
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
 * Lossless peer @src read our large message @msg_id, sent in our session
 * @session (its ops.cma_done): the send completes as on its NOTIFY; a mark
 * of another session or of no send we wait for is ignored.
 */
void xwi_engine_cma_done(struct xwi_engine *e, const struct xw_addr *src, __u32 msg_id,
			 __u32 session);

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
/* The same with the payload in @n pieces (a multi-buffer frame, read in
 * its receive buffers: scatter receive), @len bytes of them in all. */
int xwi_engine_rx_iov(struct xwi_engine *e, const struct xw_addr *src, const struct xw_hdr *h,
		      const struct iovec *iov, unsigned int n, size_t len);
/* The same for a frame that came through a lossless path (ops.lossless:
 * the local ring): no CRC32C to check.  -ENOBUFS: not taken (over the
 * bounds for unexpected data): the caller keeps it and hands it in again
 * later (back-pressure; nothing is resent on a lossless path). */
int xwi_engine_rx_local(struct xwi_engine *e, const struct xw_addr *src, const struct xw_hdr *h,
			const void *payload, size_t len);

/*
 * One bounded pass of transmit work: emit up to @budget frames that are
 * due (fragments of queued sends, pushed bytes, PULL requests, PULL
 * replies, NOTIFYs) until ops->send returns -EAGAIN.  Returns the number of
 * frames emitted (>= 0).
 */
int xwi_engine_progress(struct xwi_engine *e, int budget);
/*
 * Every delayed ACK now: the caller is about to sleep.  An ACK is delayed
 * (cfg.ack_delay_ns) in case a frame of ours can carry it; a thread that
 * sleeps sends none, and its sleep would end at the delay only to send the
 * ACK - one more wake-up, and on a busy host the sender's timer running
 * out meanwhile (a resend the receiver takes as a duplicate).  Returns the
 * frames emitted (>= 0); the caller flushes them.
 */
int xwi_engine_ack_owed(struct xwi_engine *e);

/* True when the engine has frames waiting to be emitted. */
bool xwi_engine_tx_pending(const struct xwi_engine *e);

/*
 * The time (ops->now_ns clock) of the next timer: a retransmission, a
 * delayed ACK, a handshake retry or a give-up; UINT64_MAX when none.  The
 * caller must call xwi_engine_progress() by then (it fires what is due).
 */
__u64 xwi_engine_next_deadline(const struct xwi_engine *e);

/*
 * Forget the connections (conn_event(peer, 0) for each), after sending
 * CLOSE to every connected peer (best effort, once) if @send_close.
 * Before xwi_engine_free() when the endpoint closes; pending requests are
 * left as they are.
 */
void xwi_engine_shutdown(struct xwi_engine *e, bool send_close);

/*
 * Post a send of @len bytes at @buf with match @match to @dst.  Eager
 * messages (len <= eager_max) are copied at once and @buf may be reused on
 * return; larger ones are read from @buf until the request completes
 * (NOTIFY received), so the buffer must stay valid and unchanged until
 * then.  With cfg.reliable an eager send completes once its frames are out
 * or, if they must wait (handshake, full window), once copied: buffered,
 * the engine owns the copy until the peer acknowledged every frame (it
 * fails silently, counted in sends_lost, only if the peer is given up).
 * A large send completes when its NOTIFY arrives, or with -ECONNRESET /
 * -ETIMEDOUT.  Frames go out from this call when possible and otherwise from
 * xwi_engine_progress().  -EAGAIN when tx_backlog_max requests are queued;
 * -EINVAL bad arguments; -EMSGSIZE len >= 4 GiB.
 */
int xwi_engine_isend(struct xwi_engine *e, const struct xw_addr *dst, const void *buf, size_t len,
		     __u64 match, struct xw_request **reqp);
/* The same with XWI_SEND_* flags.  XWI_SEND_MORE: another message to @dst
 * follows at once - every frame of this one says MORE, and an eager one
 * carries no LAT mark (the next message's frames do). */
#define XWI_SEND_MORE (1u << 0)
int xwi_engine_isend_flags(struct xwi_engine *e, const struct xw_addr *dst, const void *buf,
			   size_t len, __u64 match, __u32 flags, struct xw_request **reqp);
/* The same with XWI_SEND_DATA: the message carries @data (32 bits)
 * to the receiver's status (has_data, data). */
#define XWI_SEND_DATA (1u << 1)
int xwi_engine_isend_data(struct xwi_engine *e, const struct xw_addr *dst, const void *buf,
			  size_t len, __u64 match, __u32 flags, __u32 data, struct xw_request **reqp);

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

/* xwi_engine_irecv() restricted to messages from @src (NULL: any sender). */
int xwi_engine_irecv_from(struct xwi_engine *e, void *buf, size_t len, __u64 match, __u64 mask,
			  const struct xw_addr *src, struct xw_request **reqp);

/*
 * Look at the oldest unexpected message a receive (@match, @mask, @src)
 * would take, without taking it: its envelope in @st (len = msg_len = its
 * full length, match, src).  -ENOMSG when none waits.  With @claim the
 * message is set aside under *@claim_id: no other receive or peek sees it;
 * xwi_engine_irecv_claimed() takes it (a 0-byte buffer discards it).
 */
int xwi_engine_peek(struct xwi_engine *e, __u64 match, __u64 mask, const struct xw_addr *src,
		    bool claim, struct xw_status *st, __u64 *claim_id);
/* Receive the message claimed under @claim_id; -ENOENT if there is none
 * (taken already, or dropped with a reset of its peer). */
int xwi_engine_irecv_claimed(struct xwi_engine *e, __u64 claim_id, void *buf, size_t len,
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
	__u64 sends_direct;	   /* of sends_done: one frame, out at once to a
				    * lossless peer (msg.c's short path)     */
	/* reliability */
	__u64 rtx_frames[XW_PKT_TYPE_MAX]; /* retransmissions per type     */
	__u64 rtx_timeouts;	   /* retransmission timer expiries          */
	__u64 fast_rtx;		   /* retransmissions on three duplicate acks */
	__u64 sack_rtx;		   /* frames resent as lost by acks (selective
				    * acks, time-based detection)            */
	__u64 rx_dup_frames;	   /* frames whose seq was already delivered */
	__u64 rx_ooo;		   /* frames held ahead of the expected seq  */
	__u64 rx_ooo_dropped;	   /* ... over the out-of-order bound        */
	__u64 crc_failures;	   /* frames with a wrong CRC32C             */
	__u64 session_rejects;	   /* frames with a stale or forged session  */
	__u64 no_session;	   /* frames from a peer without a session   */
	__u64 handshake_dups;	   /* CONNECT / CONNECT_REPLY seen again     */
	__u64 bad_acks;		   /* acks for sequences never sent (ignored) */
	__u64 sessions;		   /* sessions established (once per
				    * incarnation of ours)                  */
	__u64 sessions_replaced;   /* an empty session of the peer replaced
				    * by another one (crossing handshakes)  */
	__u64 peer_restarts;	   /* a peer came back with a new session    */
	__u64 peer_closes;	   /* CLOSE received                         */
	__u64 peer_closes_cut;	   /* ... cutting requests or unacked frames */
	__u64 timeouts;		   /* connections given up (-ETIMEDOUT)      */
	__u64 peers_dropped;	   /* CONNECTs over peers_max                */
	__u64 peers_evicted;	   /* idle peers forgotten (table full)      */
	__u64 peers;		   /* peers known now (at most peers_max)    */
	__u64 probes;		   /* keepalive CONNECTs to silent peers     */
	__u64 live_probes;	   /* PROBEs sent to silent peers            */
	__u64 live_replies;	   /* PROBE_REPLYs taken (the peer is alive) */
	__u64 live_polling;	   /* ... from a peer that polls, yet ignores
				    * us (not counted as alive)             */
	__u64 live_local;	   /* liveness answered by ops.alive          */
	__u64 live_gone;	   /* peers given up because their endpoint is
				    * closed or their process died (a "gone"
				    * PROBE_REPLY, or ops.alive): -ECONNRESET */
	__u64 live_gone_unknown;   /* "gone" answers about a peer whose
				    * session we never had (not open yet?):
				    * waited for as silence                  */
	__u64 probes_answered;	   /* PROBEs answered by the library itself  */
	__u64 hook_drops;	   /* frames dropped by drop_first_type      */
	__u64 rx_nobufs;	   /* frames refused over the bounds (resent) */
	__u64 replayed;		   /* messages sent again to a new incarnation */
	__u64 sends_lost;	   /* eager messages failed after their request
				    * completed (buffered; peer given up)     */
	__u64 reconnects;	   /* a new session of the same peer endpoint:
				    * the message streams carried over       */
	__u64 carried;		   /* eager frames sent again after a reconnect */
	__u64 redelivered;	   /* messages dropped incomplete by a reset,
				    * taken again when they came again       */
	__u64 renotified;	   /* NOTIFY sent again for a large message
				    * complete before a reset (RNDV resent)  */
	__u64 abandoned;	   /* incomplete messages dropped: their sender
				    * gave them up (its resume point)         */
	__u64 eid_flaps;	   /* a peer endpoint taken for restarted came
				    * back (late frames of a dead incarnation:
				    * the one case of a possible duplicate)  */
	/* loss recovery (conn.c) */
	__u64 tail_probes;	   /* tail-loss probes sent                   */
	__u64 lost_rtx;		   /* retransmissions found lost again        */
	__u64 spurious_rtx;	   /* resent frames acked sooner than an RTT
				    * after the resend (the first copy's ack) */
	__u64 rtt_samples;	   /* RTT samples taken                       */
	__u64 rtt_skipped;	   /* acks of new frames without a sample
				    * (resent, held behind a hole, or measured
				    * already when selectively acked)        */
	__u64 bad_sacks;	   /* selective acks ignored (never-sent
				    * sequence numbers, malformed)           */
	__u64 rto_ns, srtt_ns;	   /* now: the largest RTO among the
				    * connections (backoff included), its srtt */
	/* lossless (local) peers */
	__u64 cma_reads;	   /* large messages read straight from the
				    * sender's buffer (ops.cma_read)          */
	__u64 cma_bytes;	   /* ... their bytes                         */
	__u64 cma_fallbacks;	   /* peers whose buffers could not be read
				    * (-EPERM...): their messages are pulled  */
	__u64 cma_marks;	   /* reads answered with ops.cma_done, no
				    * NOTIFY frame                            */
	__u64 cma_done;		   /* our sends completed by such a mark     */
	__u64 nonce_rejects;	   /* CONNECT*, CLOSE without our nonce that
				    * would reset or replace a connection    */
	__u64 nonce_challenges;	   /* CONNECTs of our session answering them */
};
void xwi_engine_stats(const struct xwi_engine *e, struct xwi_engine_stats *out);
/* The engine's incarnation nonce (xw_addr.nonce of its endpoint; not 0). */
__u64 xwi_engine_nonce(const struct xwi_engine *e);
/* True when a message waits in the unexpected queue (a receive would match
 * it at once, given the right match and mask). */
bool xwi_engine_has_unexpected(const struct xwi_engine *e);
/* The PULL blocks out, all incoming messages: > 0 while a large message
 * is being pulled and its fragments are still expected (a wait may keep
 * polling for them: waitloop.c, "A pull under way").  May be called
 * without the port lock: a hint, as of the last pass. */
__u32 xwi_engine_pulling(const struct xwi_engine *e);
/* Peers that something sent to is not acknowledged by yet (frames kept for
 * retransmission) or still queued for (xw_endpoint_stats.peers_unacked). */
__u64 xwi_engine_peers_unacked(const struct xwi_engine *e);

#endif
