/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * engine_int.h - what the parts of the protocol engine share (not
 * installed; the endpoint layer uses engine.h only): the intrusive list,
 * the state structures and small helpers.
 *
 * The engine is split by layer (docs/ARCHITECTURE.md, docs/PROTOCOL.md);
 * calls go downwards only, but for the connection layer's up-calls, all
 * declared in one section of msg.h:
 *   engine.c  the entry points (engine.h): creation, the frame entry
 *             xwi_engine_rx, sends and receives, progress, deadlines,
 *             shutdown, teardown
 *   msg.c     the message layer (msg.h): requests, sends, eager and
 *             push-pull framing, the TX scheduler, incoming messages
 *   stream.c  message streams across the connection layer's resets
 *   match.c   matching (match.h): posted and unexpected queues, peek
 *   conn.c    the connection layer (conn.h): CRC and header checks,
 *             sessions, handshake, seq/ack/SACK, RTO and retransmission,
 *             in-order delivery, resets and give-ups
 *   peer.c    the connection layer's peer table (conn.h)
 * Each structure below says which part owns it; a part reads or writes
 * another's state only through that part's header.
 */
#ifndef XWI_ENGINE_INT_H
#define XWI_ENGINE_INT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/uio.h>

#include "crc32c.h"
#include "engine.h"

/* Messages whose id is this far ahead of the next expected one are bogus. */
#define XWI_ORDER_WINDOW 65536u
/* Old sessions of a peer remembered as stale. */
#define XWI_RETIRED 4

/* ---- intrusive lists --------------------------------------------------- */

struct xl {
	struct xl *next, *prev;
};

#define xl_entry(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

static inline void xl_init(struct xl *l)
{
	l->next = l->prev = l;
}

static inline bool xl_empty(const struct xl *l)
{
	return l->next == l;
}

static inline void xl_add_tail(struct xl *n, struct xl *head)
{
	n->prev = head->prev;
	n->next = head;
	head->prev->next = n;
	head->prev = n;
}

static inline void xl_add_before(struct xl *n, struct xl *pos)
{
	xl_add_tail(n, pos);
}

/* Unlink; the node is left self-linked, so xl_empty(n) tells "not linked". */
static inline void xl_del(struct xl *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	xl_init(n);
}

/* Move every node of @from, in order, to the front of @to. */
static inline void xl_splice_front(struct xl *from, struct xl *to)
{
	if (xl_empty(from))
		return;
	from->prev->next = to->next;
	to->next->prev = from->prev;
	to->next = from->next;
	from->next->prev = to;
	xl_init(from);
}

/* ---- state ------------------------------------------------------------- */

enum tx_kind {
	TX_SEND = 1, /* initial frames of a send request */
	TX_JOB = 2,  /* a PULL block being answered     */
	TX_CTRL = 3, /* one PULL or NOTIFY frame         */
	TX_CARRY = 4, /* eager frames carried over a reconnect */
};

struct txitem {
	struct xl link; /* in peer->ctrlq / peer->dataq; self-linked when idle */
	enum tx_kind kind;
};

struct rmsg;

/*
 * The connection with one peer address: the connection layer's state
 * (conn.c; nothing else reads or writes it - the message layer asks
 * through conn.h).
 */
struct xwi_conn {
	__u8 cstate;	       /* C_NONE, C_SYN, C_EST                         */
	bool lossless;	       /* a local peer (ops.lossless): no CRC, and once
				* established nothing kept for resending     */
	bool rx_known;	       /* peer_sid / rcv_nxt known                     */
	bool ack_now;	       /* an ACK is owed at once                       */
	bool in_recovery;      /* resending after an RTO, until `recover`      */
	bool acked_once;       /* the peer acked a frame: it knows our ISN     */
	bool est_counted;      /* this incarnation reached C_EST (st.sessions) */
	bool sess_sure;	       /* the peer's session came with our nonce      */
	__u32 my_sid, isn, snd_una, snd_nxt;
	__u32 peer_sid, rcv_nxt;
	__u32 peer_isn;	       /* the peer's ISN (half-open: rcv_nxt == peer_isn) */
	__u32 retired[XWI_RETIRED];
	__u32 nretired;
	__u32 ack_owed;	       /* frames taken since our last ack went out     */
	__u32 dupacks, recover;
	__u32 inflight;	       /* frames in rtxq                               */
	__u32 nooo;	       /* frames in ooo                                */
	__u32 backoff, conn_tries;
	__u64 ack_due;	       /* delayed ACK deadline (0: none)               */
	__u64 rtx_due;	       /* retransmission deadline (0: none)            */
	__u64 conn_due;	       /* CONNECT retry deadline (0: none)             */
	__u64 conn_start;      /* handshake started                            */
	__u64 last_progress;   /* ack advanced / first frame outstanding       */
	__u64 last_heard;      /* a frame of the peer's session arrived        */
	__u64 last_reply;      /* CONNECT_REPLY rate limit                     */
	__u64 last_challenge;  /* CONNECT answering one refused for its nonce  */
	__u64 srtt, rttvar, rto;
	bool reply_owed;       /* a CONNECT_REPLY is owed                      */
	bool probe;	       /* our CONNECT introduces us (not retried idle)  */
	__u64 last_probe;      /* keepalive CONNECT to a silent peer            */
	__u64 last_alive;      /* the peer's endpoint answered a liveness probe */
	__u64 last_liveprobe;  /* liveness probe sent (or asked ops.alive)      */
	__u64 probing_since;   /* the first of them since the last sign of life */
	__u32 probe_nonce;     /* the last PROBE's nonce (seq)                  */
	__u32 alive_consumed;  /* the consumed count of the last answer         */
	__u32 peer_eid;	       /* the peer endpoint's incarnation its CONNECT*
				* announced (0: none yet)                    */
	bool alive_seen;       /* ... known                                     */
	__u64 last_dupack;     /* a pure ACK of snd_una while frames were out   */
	__u64 unsol_due;       /* introduce ourselves (no session) then        */
	bool rtx_now;	       /* resend the oldest unacked frame at once      */
	bool holes;	       /* frames marked RF_RESEND                      */
	/* loss detection (conn.c, "loss recovery"): RACK and the tail probe */
	bool rack_valid;       /* a frame was acknowledged: rack_* are set      */
	bool tlp_out;	       /* a tail probe went out, no progress since      */
	__u32 xmit_n;	       /* transmissions so far (xwi_frame.xmit)         */
	__u32 rack_xmit;       /* xmit of the latest-sent frame acknowledged    */
	__u64 rack_rtt;	       /* ... the time from its sending to its ack      */
	__u64 rack_due;	       /* reordering window of a suspect ends (0: none) */
	__u64 tlp_due;	       /* tail probe deadline (0: none)                 */
	__u64 min_rtt;	       /* the smallest RTT sample (0: none yet)         */
	struct xl rtxq;	       /* struct xwi_frame, by seq                     */
	struct xl ooo;	       /* struct xwi_frame, held ahead, by seq         */
};

/*
 * The message layer's state for one peer address (msg.c, stream.c,
 * match.c; the connection layer does not touch it).
 */
struct xwi_mpeer {
	struct xl rr;	       /* e->txrr while it has frames to emit          */
	__u32 tx_next_id;      /* msg_id of the next message started to it     */
	__u32 rx_next_id;      /* next msg_id eligible for matching from it    */
	struct xl ctrlq;       /* struct ctrl: PULL, NOTIFY                    */
	struct xl dataq;       /* send bursts and pull jobs                    */
	struct xl sends;       /* large sends started: waiting PULL / NOTIFY   */
	struct xl active;      /* incoming, eligible, still expecting frames   */
	struct xl held;	       /* incoming, waiting for their turn, by msg_id  */
	struct rmsg *last;     /* lookup cache                                 */
	/* message streams (survive reconnects with the same peer endpoint) */
	__u32 peer_eid;	       /* the peer endpoint's incarnation (0: unknown)  */
	__u32 old_eids[XWI_RETIRED]; /* its earlier incarnations              */
	__u32 nold_eids;
	__u32 *redo;	       /* ids < rx_next_id dropped incomplete by a     */
	__u32 nredo;	       /*   reset: taken again if they come again      */
	__u64 orphan_since;    /* given up, partial messages of it kept (0: no) */
	__u32 skip_base, skip_mask; /* its ids skip_base+1+i (bit i) are final:  */
				    /*   never sent (again), not waited for      */
	bool cma_rx_off;       /* lossless peer: its buffers may not be read
				* (ops.cma_read said -EPERM): pull them      */
	bool cma_tx_off;       /* ... it pulled ours: push to it again       */
};

/* A peer address: the peer table (peer.c, the connection layer) holds one
 * for every address the engine exchanges frames with. */
struct peer {
	struct xl link;	       /* e->peers                                     */
	struct xw_addr addr;   /* addr.nonce: the peer endpoint's nonce as we
				* know it (0: unknown)                        */
	bool nonce_sure;       /* addr.nonce from the application's address or
				* a handshake that carried ours, not only
				* claimed by a CONNECT without our nonce      */
	__u64 nonce_prev;      /* the nonce a newer incarnation replaced (an
				* application address still carrying it is
				* stale, not a restart: xwi_conn_named)       */
	struct xwi_conn cn;    /* the connection (conn.c)                      */
	struct xwi_mpeer ms;   /* the message streams (msg.c, stream.c)        */
};

enum { C_NONE = 0, C_SYN = 1, C_EST = 2 };

/* xwi_frame.sack */
#define RF_SACKED 1u /* the receiver holds it (out of order)            */
#define RF_RESEND 2u /* a hole: to be resent now                        */
#define RF_HOLED 4u  /* resent as a hole since the last timeout         */
#define RF_BYRTO 8u  /* RF_RESEND set by a timer expiry (not by acks)   */

/* A copy of a sequenced frame: kept for retransmission or held out of
 * order (the connection layer), carried over a reconnect (stream.c).
 * A fragment of a large send (RNDV, PULL_REPLY) is kept lazily: its
 * payload is not copied, @ext points into the send's buffer, which stays
 * the sender's until every such frame is acknowledged (@owner counts its
 * kept frames, xwi_req_priv.krefs: the send completes only when none is
 * left).  xwi_frame_data() is the payload either way. */
struct xwi_frame {
	struct xl link;
	__u32 seq;
	__u32 tries;	 /* transmissions */
	__u32 xmit;	 /* its last transmission's place (xwi_conn.xmit_n) */
	__u8 sack;	 /* RF_* (selective acks)  */
	__u64 t_sent;
	size_t len;
	const unsigned char *ext;     /* lazily kept: the payload (else pl) */
	struct xwi_req_priv *owner;   /* lazily kept: the send it refers to */
	struct xw_hdr h;
	unsigned char pl[];
};

static inline const unsigned char *xwi_frame_data(const struct xwi_frame *f)
{
	return f->ext ? f->ext : f->pl;
}

struct ctrl {
	struct txitem tx;
	__u8 type;	   /* XW_PKT_PULL or XW_PKT_NOTIFY */
	bool standalone;   /* allocated alone: freed once emitted */
	__u32 msg_id, msg_len, frag_idx, frag_count, nfrags, block_id;
	__u64 match;
};

/* Eager frames of a closed connection, sent again on the next one (a
 * reconnect with the same peer endpoint): struct xwi_frame, in order. */
struct carry {
	struct txitem tx;
	struct xl frames;
};

struct block {
	struct ctrl pull; /* its PULL frame (queued until emitted) */
	__u32 first, n, left;
	bool busy;
};

struct job {
	struct txitem tx;
	struct xl slink; /* sreq jobs */
	struct xwi_req_priv *s;
	__u32 block_id, first, n, next;
};

enum rstate {
	R_NEW = 0,	/* just created, not yet placed                  */
	R_HELD = 1,	/* waiting for earlier messages of its peer      */
	R_UNEXP = 2,	/* eligible, in the unexpected queue             */
	R_MATCHED = 3,	/* a receive owns it                             */
	R_DROPPED = 4,	/* eager, over unexpected_max: frames discarded  */
};

struct rmsg {
	struct xl alink;     /* e->rmsgs (all)                                */
	struct xl plink;     /* peer->active or peer->held                    */
	struct xl ulink;     /* e->unexp                                      */
	struct peer *peer;
	struct xw_request *req;
	enum rstate state;
	bool rndv;
	bool nodata;	     /* eager, held: no buffer (dropped)              */
	bool push_dropped;   /* large: pushed bytes dropped (pull them)       */
	bool cma;	     /* large, lossless peer: read at cma_addr in the
			      * sender's process when matched (XW_F_CMA)     */
	__u64 cma_addr;
	__u32 cma_sid;	     /* the session of its RNDV (ops.cma_done)        */
	__u32 msg_id, msg_len, nfrags;
	__u32 npush;	     /* fragments sent unasked (eager: all)           */
	__u32 nhave;
	__u64 match;
	bool has_data;	     /* XW_F_DATA: the sender's 32 bits of data      */
	__u32 mdata;
	__u64 claim;	     /* unexpected, claimed by a peek (0: not): only
			      * xwi_engine_irecv_claimed() takes it          */
	__u64 *have;	     /* bitmap of fragments received (have1: <= 64)   */
	__u64 have1;
	unsigned char *data; /* unexpected bytes (eager: msg_len; large: push) */
	size_t data_len;     /* bytes accounted for data                      */
	/* matched */
	__u32 need_end;	     /* fragments [0, need_end) are needed            */
	__u32 need_left;     /* needed fragments still missing                */
	__u32 pull_next;     /* next fragment to consider for a PULL          */
	__u32 next_block;    /* next block id                                 */
	__u32 inflight;	     /* busy blocks                                   */
	struct block *blocks; /* cfg.pull_inflight (large only)               */
	struct ctrl *notify; /* preallocated NOTIFY (large only)              */
};

struct xwi_req_priv {
	struct xw_request *req;
	struct xl elink;     /* e->pending */
	/* send */
	struct txitem tx;    /* burst in peer->dataq */
	struct xl slink;     /* peer->sends (large, started) */
	struct peer *peer;
	const unsigned char *data;
	unsigned char *copy;
	__u8 cls;	     /* XW_PKT_SMALL / MEDIUM / RNDV */
	bool started;
	bool notified;	     /* NOTIFY arrived: done once its queued frames are out */
	bool internal;	     /* detached eager send: freed when its frames are out */
	bool replayed;	     /* rewound by a connection reset: frames went out */
	bool keep_id;	     /* rewound by a reconnect: sent again as msg_id */
	bool more;	     /* XWI_SEND_MORE: another message follows at once */
	bool cma;	     /* large, to a lossless peer: its RNDV offers our
			      * buffer for reading (XW_F_CMA), nothing pushed */
	bool has_data;	     /* XW_F_DATA with data on every data frame */
	__u32 mdata;
	__u32 len, nfrags, burst, next, msg_id;
	__u32 krefs;	     /* frames kept lazily that point into data
			      * (struct xwi_frame.owner) */
	bool fin_wait;	     /* complete but for krefs: completes with
			      * fin_err when the last of them goes */
	int fin_err;
	__u64 match;
	struct xl jobs;
	/* receive */
	struct xl qlink;     /* e->posted */
	unsigned char *buf;
	size_t buflen;
	__u64 rmatch, mask;
	bool has_src;	     /* directed: only messages from src match */
	struct xw_addr src;
	struct rmsg *m;
};

struct reqbox {
	struct xw_request pub;
	struct xwi_req_priv priv;
};

/*
 * Freed objects kept for reuse, per engine (one thread at a time: the port
 * lock): every message allocates and frees its requests, its
 * received-message bookkeeping, the retransmission copy of its frames and
 * the reserved copy of an eager send; a malloc/free pair costs some 180
 * instructions, a list pop/push a handful.  And larger blocks must not go
 * back to malloc at all: a jumbo frame's copy (8,936 B at MTU 9000) freed
 * on its ack leaves the top of the heap free, glibc returns it to the
 * kernel, and the next copies fault the pages in again (~200 page faults
 * per MiB of eager data at MTU 9000: bench/RESULTS.md, "Bulk data, after
 * (issue 25 part 5)").  Every object is a malloc block of the cache's size,
 * so one that leaves through plain free() is fine; only objects allocated
 * from a cache go back to it, and at most `max` are kept.
 */
#define XWI_CACHE_MAX 32
/* The payload bytes of the small frames and copies: at most this. */
#define XWI_SMALL_MAX 2048
/* Frames of larger payloads (jumbo MTUs) are kept up to this many bytes
 * per engine (at most the per-peer window of frames), eager copies larger
 * than XWI_SMALL_MAX up to XWI_EAGER_CACHE of them, each of eager_max bytes
 * if that is at most XWI_EAGER_CACHE_LEN (else they are malloc'd each;
 * README.md, "Bounded memory"). */
#define XWI_BIG_CACHE_BYTES (2u << 20)
#define XWI_EAGER_CACHE 8
#define XWI_EAGER_CACHE_LEN (256u << 10)

struct xwi_cache {
	void *head;
	unsigned int n, max;
	size_t size;
};

static inline void *xwi_cache_get(struct xwi_cache *c)
{
	void *o = c->head;

	if (!o)
		return malloc(c->size);
	c->head = *(void **)o;
	c->n--;
	return o;
}

static inline void *xwi_cache_zget(struct xwi_cache *c)
{
	void *o = xwi_cache_get(c);

	if (o)
		memset(o, 0, c->size);
	return o;
}

static inline void xwi_cache_put(struct xwi_cache *c, void *o)
{
	if (!o)
		return;
	if (c->n >= c->max) {
		free(o);
		return;
	}
	*(void **)o = c->head;
	c->head = o;
	c->n++;
}

static inline void xwi_cache_drain(struct xwi_cache *c)
{
	while (c->head) {
		void *o = c->head;

		c->head = *(void **)o;
		free(o);
	}
	c->n = 0;
}

struct xwi_engine {
	struct xwi_engine_cfg cfg;
	struct xwi_engine_ops ops;
	void *ctx;
	/* freed objects for reuse: requests (struct reqbox), received
	 * messages (struct rmsg), frames without payload bytes (c_kept: a
	 * send's fragments kept lazily, up to a window of them), frames of
	 * up to `small` payload bytes and of up to frag_payload (c_big, jumbo
	 * MTUs only), eager copies of up to `small` bytes and of up to
	 * eager_max (c_eager; size 0 if eager_max is over
	 * XWI_EAGER_CACHE_LEN) */
	struct xwi_cache c_req, c_rmsg, c_kept, c_frame, c_copy, c_big, c_eager;
	size_t small;
	struct xwi_engine_stats st;
	/* the peer table (peer.c) */
	struct xl peers;
	struct peer *last_peer;
	__u32 npeers;
	/* the connection layer (conn.c) */
	bool hook_done;	    /* drop_first_type used */
	/* the message layer (msg.c, stream.c) */
	__u32 eid;	    /* this endpoint's incarnation (CONNECT*: match) */
	__u64 nonce;	    /* its incarnation nonce (xw_addr.nonce; CONNECT*,
			     * CLOSE: docs/PROTOCOL.md "Incarnation nonces") */
	struct xl txrr;	    /* peers with frames to emit */
	struct xl pending;  /* all pending requests */
	struct xl rmsgs;    /* all incoming messages */
	__u32 backlog;	    /* sends with initial frames queued */
	bool kick_early;    /* isend of a one-frame message: ops.kick after its frame */
	__u32 pulls_out;    /* PULL blocks in flight, all incoming messages (the
			     * sum of their rmsg.inflight): a pulled message is
			     * under way (xwi_engine_pulling) */
	/* matching (match.c) */
	struct xl posted;   /* posted receives, post order */
	struct xl unexp;    /* unexpected messages, oldest first */
	__u64 next_claim;   /* claim ids handed out by xwi_engine_peek() */
};


/* ---- helpers ----------------------------------------------------------- */

/*
 * Zeroed memory through malloc's per-thread cache: glibc's calloc bypasses
 * that cache, and requests, received messages and their bookkeeping are
 * allocated for every message (callgrind: ~1,300 of a round trip's
 * instructions went to calloc's slow path).
 */
static inline void *zalloc(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	if (n * size > 65536) /* from fresh pages: calloc need not clear */
		return calloc(n, size);
	p = malloc(n * size);
	if (!p)
		return NULL;
	/* Keep the compiler from fusing malloc + memset back into calloc. */
	__asm__ volatile("" : : "r"(p) : "memory");
	memset(p, 0, n * size);
	return p;
}

/*
 * A received frame's payload: in one piece, or in the UMEM frames of a
 * multi-buffer frame (@n pieces), read where it lies - the CRC over the
 * pieces, the data copied from them straight into its destination
 * (xwi_pl_copy), never gathered first.
 */
struct xwi_pl {
	const struct iovec *iov;
	unsigned int n;
};

/* Bytes [@off, @off + @len) of @pl to @dst (they are there: the frame's
 * payload_len was checked against its length). */
static inline void xwi_pl_copy(void *dst, const struct xwi_pl *pl, size_t off, size_t len)
{
	unsigned char *d = (unsigned char *)dst;

	for (unsigned int i = 0; i < pl->n && len; i++) {
		size_t l = pl->iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		l -= off;
		if (l > len)
			l = len;
		memcpy(d, (const unsigned char *)pl->iov[i].iov_base + off, l);
		d += l;
		len -= l;
		off = 0;
	}
}

/* A frame kept for retransmission or out of order, with @len payload
 * bytes; xwi_frame_put() with the same @len.  A lazily kept fragment (0
 * bytes: its payload stays in the send's buffer) takes only the header:
 * a stream has a window of them in flight, more than XWI_CACHE_MAX, and
 * each from c_frame would be a malloc and a free of `small` bytes per
 * fragment (glibc then trims and faults the heap's top in again). */
static inline struct xwi_frame *xwi_frame_alloc(struct xwi_engine *e, size_t len)
{
	if (!len)
		return (struct xwi_frame *)xwi_cache_get(&e->c_kept);
	if (len <= e->small)
		return (struct xwi_frame *)xwi_cache_get(&e->c_frame);
	if (len <= e->cfg.frag_payload)
		return (struct xwi_frame *)xwi_cache_get(&e->c_big);
	return (struct xwi_frame *)malloc(sizeof(struct xwi_frame) + len);
}

static inline void xwi_frame_put(struct xwi_engine *e, struct xwi_frame *f, size_t len)
{
	if (!len)
		xwi_cache_put(&e->c_kept, f);
	else if (len <= e->small)
		xwi_cache_put(&e->c_frame, f);
	else if (len <= e->cfg.frag_payload)
		xwi_cache_put(&e->c_big, f);
	else
		free(f);
}

/* The copy an eager send of @len bytes reserves; xwi_copy_put() with @len. */
static inline void *xwi_copy_alloc(struct xwi_engine *e, size_t len)
{
	if (len <= e->small)
		return xwi_cache_get(&e->c_copy);
	if (len <= e->c_eager.size)
		return xwi_cache_get(&e->c_eager);
	return malloc(len);
}

static inline void xwi_copy_put(struct xwi_engine *e, void *copy, size_t len)
{
	if (len <= e->small)
		xwi_cache_put(&e->c_copy, copy);
	else if (len <= e->c_eager.size)
		xwi_cache_put(&e->c_eager, copy);
	else
		free(copy);
}

static inline __u64 nfrags_of(__u64 len, __u64 p)
{
	return len ? (len + p - 1) / p : 1;
}

static inline __u32 frag_size(__u32 len, __u32 p, __u32 idx)
{
	__u64 off = (__u64)idx * p;

	if (off >= len)
		return 0;
	return len - off < p ? (__u32)(len - off) : p;
}

static inline __u32 mark_pos(const struct xwi_engine *e, __u32 n)
{
	__u32 s = e->cfg.mark_shift;

	return (s > 0 && s < n) ? n - 1 - s : n - 1;
}

static inline bool bit_test(const __u64 *b, __u32 i)
{
	return b[i / 64] & (1ULL << (i % 64));
}

static inline void bit_set(__u64 *b, __u32 i)
{
	b[i / 64] |= 1ULL << (i % 64);
}

static inline __u32 bits_below(const __u64 *b, __u32 end)
{
	__u32 n = 0, w;

	for (w = 0; w < end / 64; w++)
		n += (__u32)__builtin_popcountll(b[w]);
	if (end % 64)
		n += (__u32)__builtin_popcountll(b[w] & ((1ULL << (end % 64)) - 1));
	return n;
}

/* a is before b (wrap-safe). */
static inline bool id_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

static inline __u64 now(struct xwi_engine *e)
{
	return e->ops.now_ns ? e->ops.now_ns(e->ctx) : 0;
}

/* ---- frames ------------------------------------------------------------ */

/* A header to @p's address, of @type, everything else 0. */
static inline void hdr_init(const struct xwi_engine *e, struct xw_hdr *h, const struct peer *p,
			    __u8 type)
{
	memset(h, 0, sizeof(*h));
	h->version = XW_VERSION;
	h->type = type;
	h->dst_ep = htons(p->addr.ep);
	h->src_ep = htons(e->cfg.ep);
}

/*
 * The rules of a received header that need no state (the header rules and
 * the fragment geometry of every packet type, docs/PROTOCOL.md "Header",
 * "Fragments"): the connection layer checks them (xwi_conn_rx), after the
 * CRC and before anything changes.  0 or -EPROTO.
 */
static inline int xwi_frame_check(const struct xwi_engine *e, const struct xw_hdr *h, size_t len)
{
	__u64 P = e->cfg.frag_payload;
	__u32 plen = ntohs(h->payload_len), mlen = ntohl(h->msg_len), off = ntohl(h->frag_off);
	__u32 idx = ntohl(h->frag_idx), cnt = ntohl(h->frag_count);

	if (h->version != XW_VERSION || h->type == XW_PKT_INVALID || h->type >= XW_PKT_TYPE_MAX)
		return -EPROTO;
	if (plen > len || ntohs(h->dst_ep) != e->cfg.ep)
		return -EPROTO;
	switch (h->type) {
	case XW_PKT_SMALL:
	case XW_PKT_MEDIUM:
	case XW_PKT_RNDV:
	case XW_PKT_PULL_REPLY:
	case XW_PKT_PULL:
		break;
	case XW_PKT_CONNECT:
	case XW_PKT_CONNECT_REPLY:
	case XW_PKT_CLOSE:
		/* frag_off:frag_idx: the destination's nonce */
		return cnt ? -EPROTO : 0;
	case XW_PKT_NOTIFY:
		if (plen)
			return -EPROTO;
		/* fall through */
	default:
		return (off || idx || cnt) ? -EPROTO : 0;
	}
	if (cnt == 0 || idx >= cnt || cnt != nfrags_of(mlen, P))
		return -EPROTO;
	switch (h->type) {
	case XW_PKT_SMALL:
		if (plen != mlen || idx || off || mlen > P)
			return -EPROTO;
		break;
	case XW_PKT_RNDV:
		if (off || plen != frag_size(mlen, (__u32)P, 0))
			return -EPROTO;
		break;
	case XW_PKT_PULL:
		if (off != idx * P || plen != sizeof(struct xw_pull_req))
			return -EPROTO;
		break;
	default: /* MEDIUM, PULL_REPLY */
		if (off != idx * P || plen != frag_size(mlen, (__u32)P, idx))
			return -EPROTO;
		break;
	}
	return 0;
}

/* Free every struct xwi_frame on @q. */
static inline void xwi_frames_free(struct xl *q)
{
	while (!xl_empty(q)) {
		struct xwi_frame *f = xl_entry(q->next, struct xwi_frame, link);

		xl_del(&f->link);
		free(f);
	}
}

#endif
