// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target: the protocol engine's state machines (reassembly,
 * matching, push-pull, sessions, sequence numbers, retransmission) driven by
 * sequences of frames.  Two engines, A and B, exchange frames through a
 * link the input controls: which frames are delivered, dropped, duplicated,
 * reordered, corrupted or truncated, when the clock moves, which sends and
 * receives are posted, cancelled or aborted, when an engine restarts, and
 * frames forged from third-party addresses (with a valid CRC, and sessions
 * and sequence numbers filled in when asked, so that they get past the
 * reliability layer).  Small bounds (fuzz_common.h) so that every limit is
 * reached.
 *
 * Input: byte 0 mode, then operations (fuzz_ops.h), until the input ends;
 * then the link is made perfect and time runs until everything settles.
 *   mode bit 0  reliable engines (else the bare message layer over a link
 *               that only duplicates)
 *   mode bit 1  adversary: frames forged with a real peer's address and
 *               session, requests aborted, sends to forgers
 *
 * Invariants, beyond "no crash, no UB, no leak" (ASan/LSan/UBSan):
 *  - unexpected_bytes <= unexpected_max and pushed_bytes <= pushed_max at
 *    every step;
 *  - every completed request has a defined status: a receive holds
 *    min(buffer, message) bytes equal to what its sender sent, -EMSGSIZE
 *    exactly when truncated, from the right sender; no message is delivered
 *    twice to one incarnation; a cancelled send is never delivered;
 *  - an eager send's buffer is not read after isend returns, a large one's
 *    not after the send completed (ASan: freed at once);
 *  - a frame from a real peer that was not damaged is never rejected;
 *  - (not adversary) at the end every send has completed (also after
 *    give-ups and restarts: a large send whose receiver forgot it probes
 *    and gives up), and unless an engine restarted or gave a peer up,
 *    every message sent with success was delivered exactly once; without
 *    forgers nothing is left in the unexpected and pushed buffers.
 * No message is ever delivered twice to one incarnation, give-ups and
 * reconnects included (not checked after a restart: see recv_done()).
 * Not checked after an engine restarted or gave a peer up: that every
 * message sent with success was delivered (a give-up loses buffered eager
 * messages, counted in sends_lost), and stale PULLs of the old connection
 * being refused.  FZ_TRACE=1 prints every operation and
 * frame.
 * Without the adversary bit, the data checks hold even with forgers: they
 * use addresses of their own and match values outside the real messages'.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>

#include "crc32c.h"
#include "fuzz_common.h"
#include "fuzz_ops.h"

#define NN 2	    /* engines */
#define NF 3	    /* forger addresses */
#define QCAP 96	    /* frames queued per node */
#define MAXMSG 96   /* messages per input (sends) */
#define MAXRCV 160  /* receives per input */
#define HIST 16	    /* delivered frames kept for replays */
#define ABORT_ERR (-EINTR)

struct node {
	struct xwi_engine *e;
	struct xwi_engine_cfg cfg;
	struct xw_addr addr;
	int inc; /* incarnation (restarts) */
	struct xwt_lframe slots[QCAP];
	struct xwt_lq q; /* src: 0..NN-1 a node, NN.. a forger; hurt: corrupted
			  * or truncated, may be rejected */
	int cap;
	struct xwt_lframe hist[HIST];
	int nhist, hnext;
};

struct msg {
	int from, to; /* to: a node, or -1 (a forger) */
	uint32_t len;
	uint8_t *data;	/* what was sent (reference) */
	uint8_t *ubuf;	/* the buffer given to isend (large: kept until done) */
	struct xw_request *req;
	int inc;	/* sender's incarnation */
	bool pending, done, cancelled;
	int err;
	int deliv_inc;	/* receiver's incarnation that got it (-1: none) */
};

struct rcv {
	int node, inc;
	struct xw_request *req;
	uint8_t *buf;
	size_t len;
	bool pending;
};

/* What a forger knows of its connection with a node. */
struct forger {
	struct xw_addr addr;
	__u32 sid[NN], seq[NN], ack[NN];
	__u32 node_sid[NN]; /* the node's session towards it */
};

static bool trace; /* FZ_TRACE=1: print operations and frames */

static struct {
	bool reliable, adversary;
	__u64 clk;
	struct node n[NN];
	struct forger f[NF];
	struct msg m[MAXMSG];
	int nm;
	struct rcv r[MAXRCV];
	int nr;
	/* a real node's last header to another: session and seq, for forging */
	__u32 last_sid[NN][NN], last_seq[NN][NN], last_ack[NN][NN];
	int restarts;
	bool forged, spoofed; /* frames forged; in a real node's name */
	__u32 rnd;
} S;

/* ---- engine callbacks ---------------------------------------------------- */

static __u64 e_now(void *ctx)
{
	(void)ctx;
	return S.clk;
}

static void e_random(void *ctx, void *buf, size_t len)
{
	(void)ctx;
	for (size_t i = 0; i < len; i++) {
		S.rnd = S.rnd * 1103515245u + 12345u;
		((uint8_t *)buf)[i] = (uint8_t)(S.rnd >> 16);
	}
}

static int addr_node(const struct xw_addr *a)
{
	for (int i = 0; i < NN; i++)
		if (xw_addr_equal(&S.n[i].addr, a))
			return i;
	for (int i = 0; i < NF; i++)
		if (xw_addr_equal(&S.f[i].addr, a))
			return NN + i;
	return -1;
}

static const struct xw_addr *addr_of(int i)
{
	return i < NN ? &S.n[i].addr : &S.f[i - NN].addr;
}

static bool sequenced(__u8 type)
{
	return type >= XW_PKT_SMALL && type <= XW_PKT_NOTIFY;
}

static int e_send(void *ctx, const struct xw_addr *dst, const struct xw_hdr *h,
		  const void *payload, size_t len)
{
	int s = *(int *)ctx, d = addr_node(dst);
	struct node *dn;

	FZ_ASSERT(d >= 0 && d != s, "frame to an unknown address");
	FZ_ASSERT(len == ntohs(h->payload_len) && (!len || payload), "len %zu payload_len %u",
		  len, ntohs(h->payload_len));
	FZ_ASSERT(h->version == XW_VERSION && h->type >= XW_PKT_SMALL && h->type < XW_PKT_TYPE_MAX &&
			  !(h->flags & ~XW_F_KNOWN),
		  "emitted type %u flags %#x", h->type, h->flags);
	FZ_ASSERT(len <= FZ_P, "payload %zu over the fragment size", len);
	if (d >= NN) {
		/* a forger listens: it learns our session and sequence */
		struct forger *fg = &S.f[d - NN];

		fg->node_sid[s] = ntohl(h->session);
		if (h->type == XW_PKT_CONNECT || h->type == XW_PKT_CONNECT_REPLY) {
			fg->ack[s] = ntohl(h->seq);
		} else if (sequenced(h->type)) {
			if ((__s32)(ntohl(h->seq) + 1 - fg->ack[s]) > 0)
				fg->ack[s] = ntohl(h->seq) + 1;
		}
		return 0;
	}
	S.last_sid[s][d] = ntohl(h->session);
	S.last_seq[s][d] = ntohl(h->seq);
	S.last_ack[s][d] = ntohl(h->ack);
	dn = &S.n[d];
	if ((int)dn->q.n >= dn->cap)
		return -EAGAIN;
	FZ_ASSERT(xwt_lq_push(&dn->q, h, payload, len, s) == 0, "malloc");
	return 0;
}

static void e_conn_event(void *ctx, const struct xw_addr *peer, __u32 session)
{
	if (trace)
		fprintf(stderr, "  node %d: peer %d session %#x (t %llu)\n", *(int *)ctx,
			addr_node(peer), session, (unsigned long long)S.clk);
}

static int node_ids[NN] = { 0, 1 };

static const struct xwi_engine_ops e_ops = { .send = e_send, .now_ns = e_now,
					     .random = e_random, .conn_event = e_conn_event };

/* ---- requests -------------------------------------------------------------- */

static __u64 tag_of(int idx)
{
	return 0x5A00000000000000ULL | (__u64)idx;
}

static void bounds(int i)
{
	struct xwi_engine_stats st;

	if (!S.n[i].e)
		return;
	xwi_engine_stats(S.n[i].e, &st);
	FZ_ASSERT(st.unexpected_bytes <= S.n[i].cfg.unexpected_max, "node %d unexpected_bytes %llu",
		  i, (unsigned long long)st.unexpected_bytes);
	FZ_ASSERT(st.pushed_bytes <= S.n[i].cfg.pushed_max, "node %d pushed_bytes %llu", i,
		  (unsigned long long)st.pushed_bytes);
}

/* Did an engine give a peer up (reset the connection on -ETIMEDOUT)? */
static bool gave_up(void)
{
	for (int i = 0; i < NN; i++) {
		struct xwi_engine_stats st;

		xwi_engine_stats(S.n[i].e, &st);
		if (st.timeouts)
			return true;
	}
	return false;
}

static bool err_defined(int err)
{
	return err == 0 || err == -EMSGSIZE || err == -ECANCELED || err == -ECONNRESET ||
	       err == -ETIMEDOUT || (S.adversary && err == ABORT_ERR);
}

static void recv_done(struct rcv *r)
{
	const struct xw_status *st = &r->req->status;
	int err = st->error;

	FZ_ASSERT(err_defined(err), "receive error %d", err);
	if (err == 0 || err == -EMSGSIZE) {
		__u64 tag = st->match;
		int src = addr_node(&st->src);

		FZ_ASSERT(st->len == (r->len < st->msg_len ? r->len : st->msg_len) &&
				  (err == -EMSGSIZE) == (st->msg_len > r->len),
			  "receive status len %zu msg_len %zu error %d, buffer %zu", st->len,
			  st->msg_len, err, r->len);
		FZ_ASSERT(src >= 0 && src != r->node, "receive from an unknown address");
		if (tag >> 56 == 0x5A && !S.adversary) {
			__u64 idx = tag & 0xFFFFFFFFULL;
			struct msg *m;

			FZ_ASSERT(idx < (__u64)S.nm, "message %llu never sent",
				  (unsigned long long)idx);
			m = &S.m[idx];
			FZ_ASSERT(m->from == src && m->to == r->node, "message %llu: %d->%d, got %d->%d",
				  (unsigned long long)idx, m->from, m->to, src, r->node);
			FZ_ASSERT(st->msg_len == m->len, "message %llu: length %zu, sent %u",
				  (unsigned long long)idx, st->msg_len, m->len);
			for (size_t k = 0; k < st->len; k++)
				FZ_ASSERT(r->buf[k] == m->data[k],
					  "message %llu (%u bytes): received byte %zu differs from "
					  "the one sent", (unsigned long long)idx, m->len, k);
			FZ_ASSERT(!m->cancelled, "message %llu delivered after its send was cancelled",
				  (unsigned long long)idx);
			/* exactly once per incarnation of the receiver, also
			 * across give-ups and reconnects (the message streams
			 * survive them).  Not checked once an engine restarted:
			 * frames of a dead incarnation, held here for ever
			 * (which no network does), can make an engine take a
			 * live peer for restarted, and send it again what it
			 * had taken (at least once across a peer restart). */
			FZ_ASSERT(m->deliv_inc != S.n[r->node].inc || S.restarts,
				  "message %llu delivered twice", (unsigned long long)idx);
			m->deliv_inc = S.n[r->node].inc;
		} else if (!S.adversary) {
			FZ_ASSERT(src >= NN, "message from a real node with a foreign match %#llx",
				  (unsigned long long)tag);
		}
	}
}

static void send_done(struct msg *m)
{
	const struct xw_status *st = &m->req->status;

	FZ_ASSERT(err_defined(st->error) && st->error != -EMSGSIZE, "send error %d", st->error);
	FZ_ASSERT(st->error || st->len == m->len, "send status len %zu of %u", st->len, m->len);
	m->err = st->error;
	m->done = true;
	if (st->error == -ECANCELED) {
		FZ_ASSERT(m->deliv_inc < 0, "a delivered send was cancelled");
		m->cancelled = true;
	}
}

/* Collect completed requests (and check them). */
static void reap(void)
{
	for (int i = 0; i < S.nr; i++) {
		struct rcv *r = &S.r[i];

		if (r->pending && r->req->state == XWI_REQ_DONE) {
			recv_done(r);
			r->pending = false;
			FZ_ASSERT(!xwi_request_free(r->req), "request_free");
		}
	}
	for (int i = 0; i < S.nm; i++) {
		struct msg *m = &S.m[i];

		if (m->pending && m->req->state == XWI_REQ_DONE) {
			send_done(m);
			m->pending = false;
			FZ_ASSERT(!xwi_request_free(m->req), "request_free");
			free(m->ubuf); /* a large send's buffer: no longer read */
			m->ubuf = NULL;
		}
	}
	for (int i = 0; i < NN; i++)
		bounds(i);
}

static void do_send(int from, int to, uint32_t len)
{
	struct msg *m;
	const struct xw_addr *dst;
	int rc;

	if (S.nm >= MAXMSG)
		return;
	m = &S.m[S.nm];
	memset(m, 0, sizeof(*m));
	m->from = from;
	m->to = to;
	m->len = len;
	m->inc = S.n[from].inc;
	m->deliv_inc = -1;
	m->data = malloc(len ? len : 1);
	m->ubuf = malloc(len ? len : 1);
	FZ_ASSERT(m->data && m->ubuf, "malloc");
	for (uint32_t i = 0; i < len; i++)
		m->data[i] = xwt_link_pat((__u32)S.nm, i);
	memcpy(m->ubuf, m->data, len);
	dst = to >= 0 ? &S.n[to].addr : &S.f[0].addr;
	rc = xwi_engine_isend(S.n[from].e, dst, m->ubuf, len, tag_of(S.nm), &m->req);
	if (rc) {
		FZ_ASSERT(rc == -EAGAIN, "isend %d", rc);
		free(m->data);
		free(m->ubuf);
		return;
	}
	S.nm++;
	m->pending = true;
	if (len <= S.n[from].cfg.eager_max) {
		/* eager: the caller may reuse the buffer at once */
		free(m->ubuf);
		m->ubuf = NULL;
	}
	reap();
}

static void do_recv(int node, size_t len, __u64 match, __u64 mask)
{
	struct rcv *r;

	if (S.nr >= MAXRCV)
		return;
	r = &S.r[S.nr++];
	memset(r, 0, sizeof(*r));
	r->node = node;
	r->inc = S.n[node].inc;
	r->len = len;
	r->buf = len ? malloc(len) : NULL;
	FZ_ASSERT(!len || r->buf, "malloc");
	if (len)
		memset(r->buf, 0xA5, len);
	FZ_ASSERT(!xwi_engine_irecv(S.n[node].e, r->buf, len, match, mask, &r->req), "irecv");
	r->pending = true;
	reap();
}

/* ---- the link ---------------------------------------------------------------- */

static void qf_free(struct xwt_lframe *f)
{
	free(f->pl);
	f->pl = NULL;
}

static void hist_add(struct node *nd, const struct xwt_lframe *f)
{
	struct xwt_lframe *h = &nd->hist[nd->hnext];

	if (nd->nhist == HIST)
		qf_free(h);
	else
		nd->nhist++;
	FZ_ASSERT(xwt_lframe_dup(h, f) == 0, "malloc");
	nd->hnext = (nd->hnext + 1) % HIST;
}

/* Hand frame @f to node @d. */
static void rx(int d, const struct xwt_lframe *f, bool keep)
{
	struct node *nd = &S.n[d];
	int rc;

	if (!nd->e)
		return;
	rc = xwi_engine_rx(nd->e, addr_of(f->src), &f->h, f->len ? f->pl : NULL, f->len);
	if (trace)
		fprintf(stderr, "  %d->%d type %u seq %u ack %u id %u idx %u len %zu%s: %d\n", f->src,
			d, f->h.type, ntohl(f->h.seq), ntohl(f->h.ack), ntohl(f->h.msg_id),
			ntohl(f->h.frag_idx), f->len, f->hurt ? " (hurt)" : "", rc);
	/* (after a restart or a give-up a peer may still speak to the old
	 * connection: its PULLs and NOTIFYs can name messages the new one
	 * does not have) */
	if (f->src < NN && !f->hurt && !S.spoofed && !S.restarts && !gave_up())
		FZ_ASSERT(rc == 0, "node %d refused an intact frame from node %d (type %u): %d", d,
			  f->src, f->h.type, rc);
	else
		FZ_ASSERT(rc == 0 || rc == -EPROTO || rc == -EBADMSG, "rx rc %d", rc);
	if (keep && f->src < NN && !f->hurt)
		hist_add(nd, f);
	reap();
}

static void deliver(int d, int count)
{
	struct node *nd = &S.n[d];

	while (count-- > 0 && nd->q.n) {
		struct xwt_lframe f = xwt_lq_take(&nd->q, 0);

		rx(d, &f, true);
		qf_free(&f);
	}
}

static void progress(int i, int budget)
{
	if (S.n[i].e)
		xwi_engine_progress(S.n[i].e, budget);
	reap();
}

/* ---- forging ------------------------------------------------------------------ */

static void forge(struct fz_in *in)
{
	uint8_t b0 = fz_u8(in), type = fz_u8(in) % XW_PKT_TYPE_MAX, flags = fz_u8(in);
	uint8_t id = fz_u8(in);
	uint16_t mlen = fz_u16(in);
	uint8_t idx = fz_u8(in), x = fz_u8(in), y = fz_u8(in);
	int fi = (b0 & 3) % NF, d = (b0 >> 2) & 1, src = NN + fi;
	bool real = S.adversary && (b0 & 0x40);
	uint8_t pl[FZ_P + 16];
	struct xwt_lframe f = {};
	struct xw_hdr *h = &f.h;
	__u32 plen, cnt;

	if (real) {
		src = !d;
		S.spoofed = true;
	}
	h->version = XW_VERSION;
	h->type = type;
	h->flags = flags;
	h->dst_ep = htons(S.n[d].cfg.ep);
	h->src_ep = htons(addr_of(src)->ep);
	h->msg_id = htonl(id);
	h->msg_len = htonl(mlen);
	h->match = htobe64(0xF000000000000000ULL | id);
	cnt = mlen ? (mlen + FZ_P - 1) / FZ_P : 1;
	if (b0 & 0x20) { /* fragment fields as a sender would set them */
		if (type >= XW_PKT_NOTIFY) {
			idx = 0;
			cnt = 0;
		} else {
			idx = (uint8_t)(idx % cnt);
		}
		h->frag_idx = htonl(idx);
		h->frag_count = htonl(cnt);
		h->frag_off = htonl(type == XW_PKT_RNDV ? 0 : idx * FZ_P);
		if (type == XW_PKT_PULL)
			plen = sizeof(struct xw_pull_req);
		else if (type == XW_PKT_SMALL || type == XW_PKT_MEDIUM || type == XW_PKT_PULL_REPLY ||
			 type == XW_PKT_RNDV)
			plen = (__u32)(mlen - (type == XW_PKT_RNDV ? 0 : idx * FZ_P) < FZ_P ?
				       mlen - (type == XW_PKT_RNDV ? 0 : idx * FZ_P) : FZ_P);
		else
			plen = 0;
		if (type == XW_PKT_RNDV)
			h->frag_idx = htonl(x % cnt);
	} else {
		h->frag_idx = htonl(idx);
		h->frag_count = htonl(x);
		h->frag_off = htonl((__u32)y * 16);
		plen = y % (FZ_P + 9);
	}
	for (__u32 i = 0; i < plen; i++)
		pl[i] = xwt_link_pat(0xF0000000u | id, i);
	if (type == XW_PKT_PULL && plen == sizeof(struct xw_pull_req)) {
		struct xw_pull_req pr = { htonl(x), htonl(y % 40) };

		memcpy(pl, &pr, sizeof(pr));
	}
	h->payload_len = htons((__u16)plen);
	if (real) {
		/* in the real peer's name: its session, next seq, its ack */
		h->session = htonl(S.last_sid[src][d]);
		h->seq = htonl(S.last_seq[src][d] + (sequenced(type) ? 1 + (x & 3) : 0));
		h->ack = htonl(S.last_ack[src][d]);
	} else {
		struct forger *fg = &S.f[fi];

		if (type == XW_PKT_CONNECT && (b0 & 0x08)) {
			fg->sid[d] = 0x1000u * (fi + 1) + y; /* a new incarnation */
			fg->seq[d] = 1000u * (fi + 1);
		}
		h->session = htonl((b0 & 0x08) ? fg->sid[d] : y);
		if (b0 & 0x10)
			h->seq = htonl(sequenced(type) ? fg->seq[d]++ : fg->seq[d]);
		else
			h->seq = htonl(fg->seq[d] + (__u32)(__s8)x);
		h->ack = htonl(fg->ack[d]);
		if (type == XW_PKT_CONNECT_REPLY)
			h->msg_id = htonl(fg->node_sid[d]); /* the echo */
	}
	if (!(b0 & 0x80))
		h->csum = htonl(xwi_crc32c(xwi_crc32c(0, h, sizeof(*h)), pl, plen));
	f.src = src;
	f.hurt = true; /* forged: may be refused */
	f.len = plen;
	f.pl = pl;
	S.forged = true;
	rx(d, &f, false);
}

/* ---- operations ----------------------------------------------------------- */

static void node_start(int i)
{
	struct node *nd = &S.n[i];

	nd->e = xwi_engine_new(&nd->cfg, &e_ops, &node_ids[i]);
	FZ_ASSERT(nd->e, "xwi_engine_new");
}

static void restart(int i)
{
	struct node *nd = &S.n[i];

	/* its pending requests go with it */
	for (int k = 0; k < S.nr; k++)
		if (S.r[k].pending && S.r[k].node == i)
			S.r[k].pending = false;
	for (int k = 0; k < S.nm; k++)
		if (S.m[k].pending && S.m[k].from == i)
			S.m[k].pending = false;
	xwi_engine_free(nd->e);
	nd->inc++;
	S.restarts++;
	node_start(i);
}

static uint32_t size_of(uint8_t cls, uint8_t v)
{
	static const uint32_t edge[] = { 0, 1, FZ_P - 1, FZ_P, FZ_P + 1, 320, 321, FZ_MSG_MAX };

	switch (cls & 3) {
	case 0:
		return v % (FZ_P + 1);
	case 1:
		return FZ_P + 1 + v % (320 - FZ_P);
	case 2:
		return 321 + (uint32_t)v * 7;
	default:
		return edge[v % 8];
	}
}

static int pick_pending(uint8_t v, bool sends, struct xw_request **req)
{
	int n = 0, k;

	for (int i = 0; i < (sends ? S.nm : S.nr); i++)
		n += sends ? S.m[i].pending : S.r[i].pending;
	if (!n)
		return -1;
	k = v % n;
	for (int i = 0; i < (sends ? S.nm : S.nr); i++) {
		if (!(sends ? S.m[i].pending : S.r[i].pending))
			continue;
		if (!k--) {
			*req = sends ? S.m[i].req : S.r[i].req;
			return sends ? S.m[i].from : S.r[i].node;
		}
	}
	return -1;
}

static void op(struct fz_in *in)
{
	uint8_t o = fz_u8(in) % FZ_OP_MAX, a = fz_u8(in);
	int d = a & 1;
	struct node *nd = &S.n[d];
	struct xw_request *req;

	if (trace)
		fprintf(stderr, "op %u a %#x (node %d, queue %d, t %llu)\n", o, a, d, (int)nd->q.n,
			(unsigned long long)S.clk);

	switch (o) {
	case FZ_OP_SEND: {
		uint8_t cls = fz_u8(in), v = fz_u8(in);
		int to = (S.adversary && (a & 2)) ? -1 : !d;

		do_send(d, to, size_of(cls, v));
		break;
	}
	case FZ_OP_RECV: {
		uint8_t sz = fz_u8(in), which = fz_u8(in);
		__u64 match = 0, mask = 0;

		switch ((a >> 1) & 3) {
		case 1: /* one message, maybe one not sent yet */
			match = tag_of(which % (S.nm + 3));
			mask = ~0ULL;
			break;
		case 2: /* forged ones */
			match = 0xF000000000000000ULL;
			mask = 0xFF00000000000000ULL;
			break;
		default:
			break;
		}
		do_recv(d, (size_t)sz * 9, match, mask);
		break;
	}
	case FZ_OP_DELIVER:
		deliver(d, 1 + (a >> 1) % 8);
		break;
	case FZ_OP_PROGRESS:
		progress(d, 1 + (a >> 1) % 64);
		break;
	case FZ_OP_CLOCK:
		S.clk += a < 240 ? (__u64)(a + 1) * 50000 : (__u64)(a - 239) * 20000000;
		break;
	case FZ_OP_DROP:
	case FZ_OP_DUP:
	case FZ_OP_REORDER:
	case FZ_OP_CORRUPT:
	case FZ_OP_TRUNC: {
		uint8_t pos = fz_u8(in), v = fz_u8(in);
		int i;
		struct xwt_lframe f;

		if (!nd->q.n)
			break;
		i = pos % (int)nd->q.n;
		if (!S.reliable && o != FZ_OP_DUP)
			break; /* the bare message layer needs a lossless, ordered link */
		if (o == FZ_OP_DROP) {
			f = xwt_lq_take(&nd->q, (size_t)i);
			qf_free(&f);
		} else if (o == FZ_OP_DUP) {
			if (nd->q.n >= QCAP)
				break;
			FZ_ASSERT(xwt_lframe_dup(&f, xwt_lq_at(&nd->q, (size_t)i)) == 0, "malloc");
			xwt_lq_insert(&nd->q, (size_t)i + 1, &f);
		} else if (o == FZ_OP_REORDER) {
			f = xwt_lq_take(&nd->q, (size_t)i);
			xwt_lq_insert(&nd->q, nd->q.n, &f);
		} else if (o == FZ_OP_CORRUPT) {
			/* one burst of at most 8 bits: CRC32C always sees it; not
			 * payload_len (that is the wire's length, not checkable) */
			struct xwt_lframe *g = xwt_lq_at(&nd->q, (size_t)i);
			size_t n = XW_HDR_LEN + g->len, at = (size_t)v * 7 % n;

			if (g->hurt || at == 40 || at == 41)
				break;
			if (at < XW_HDR_LEN)
				((uint8_t *)&g->h)[at] ^= (uint8_t)(a | 1);
			else
				g->pl[at - XW_HDR_LEN] ^= (uint8_t)(a | 1);
			g->hurt = true;
		} else if (xwt_lq_at(&nd->q, (size_t)i)->len) {
			struct xwt_lframe *g = xwt_lq_at(&nd->q, (size_t)i);

			g->len -= 1 + v % g->len;
			g->hurt = true;
		}
		break;
	}
	case FZ_OP_REPLAY:
		if (nd->nhist) {
			struct xwt_lframe *f = &nd->hist[(a >> 1) % nd->nhist];

			rx(d, f, false);
		}
		break;
	case FZ_OP_FORGE:
		forge(in);
		break;
	case FZ_OP_CANCEL: {
		int n = pick_pending(a >> 2, a & 2, &req);

		if (n >= 0) {
			int rc = xwi_engine_cancel(S.n[n].e, req);

			FZ_ASSERT(rc == 0 || rc == -EBUSY, "cancel %d", rc);
			reap();
		}
		break;
	}
	case FZ_OP_ABORT: {
		int n = S.adversary ? pick_pending(a >> 2, a & 2, &req) : -1;

		if (n >= 0) {
			FZ_ASSERT(!xwi_engine_abort(S.n[n].e, req, ABORT_ERR), "abort");
			reap();
		}
		break;
	}
	case FZ_OP_RESTART:
		if (S.reliable) /* the bare message layer has no incarnations */
			restart(d);
		break;
	case FZ_OP_CAP:
		nd->cap = 1 + (a >> 1) % QCAP;
		break;
	default:
		break;
	}
}

/* ---- the end: a perfect link until everything settles --------------------- */

static bool node_idle(int i)
{
	return !S.n[i].q.n && !xwi_engine_tx_pending(S.n[i].e);
}

static void drain_unexpected(int i)
{
	/* all of them (bounded by MAXRCV): settle() may end at the next
	 * idle check */
	while (xwi_engine_has_unexpected(S.n[i].e) && S.nr < MAXRCV)
		do_recv(i, FZ_MSG_MAX, 0, 0);
}

static void settle(void)
{
	__u64 end = S.clk + 50 * S.n[0].cfg.give_up_ns;
	int iter;

	for (int i = 0; i < NN; i++) {
		S.n[i].cap = QCAP;
		/* a last message each way: a restarted engine introduces itself */
		do_send(i, !i, 1);
	}
	for (iter = 0; iter < 20000 && S.clk < end; iter++) {
		bool idle = true;

		for (int i = 0; i < NN; i++) {
			deliver(i, QCAP);
			drain_unexpected(i);
			progress(i, 64);
		}
		for (int i = 0; i < NN; i++)
			idle &= node_idle(i);
		if (!idle) {
			S.clk += 2000;
			continue;
		}
		/* idle: on to the next timer; none left (nothing unacked, no
		 * handshake, no ack owed): settled */
		{
			__u64 t = UINT64_MAX;

			for (int i = 0; i < NN; i++) {
				__u64 x = xwi_engine_next_deadline(S.n[i].e);

				t = x < t ? x : t;
			}
			if (t == UINT64_MAX)
				break;
			S.clk = t > S.clk ? t : S.clk + 1000;
		}
	}
	if (trace) {
		for (int i = 0; i < NN; i++) {
			struct xwi_engine_stats st;

			xwi_engine_stats(S.n[i].e, &st);
			fprintf(stderr, "node %d: t %llu iter %d timeouts %llu sessions %llu restarts "
				"%llu rejects %llu no_session %llu rtx %llu dup %llu bad_acks %llu "
				"nobufs %llu deadline %llu\n", i, (unsigned long long)S.clk, iter,
				(unsigned long long)st.timeouts, (unsigned long long)st.sessions,
				(unsigned long long)st.peer_restarts,
				(unsigned long long)st.session_rejects,
				(unsigned long long)st.no_session,
				(unsigned long long)st.rtx_timeouts,
				(unsigned long long)st.rx_dup_frames, (unsigned long long)st.bad_acks,
				(unsigned long long)st.rx_nobufs,
				(unsigned long long)xwi_engine_next_deadline(S.n[i].e));
		}
	}
	if (S.adversary)
		return;
	{
		struct xwi_engine_stats st[NN];
		bool lossless = !S.restarts, timeouts = gave_up();

		/*
		 * Every send completes, also once an engine gave a peer up: a
		 * large send whose RNDV the peer acknowledged and then forgot
		 * (it gave the connection up) probes the silent peer and gives
		 * up in turn.
		 */
		(void)timeouts;
		for (int i = 0; i < S.nm; i++)
			/* (unless the receives ran out: a large send then waits
			 * for a receive that can never be posted, as it should) */
			FZ_ASSERT(!S.m[i].pending || S.nr >= MAXRCV,
				  "send %d (%u bytes, %d->%d) never completed", i, S.m[i].len,
				  S.m[i].from, S.m[i].to);
		for (int i = 0; i < NN; i++) {
			xwi_engine_stats(S.n[i].e, &st[i]);
			lossless &= !st[i].timeouts && !st[i].sends_lost;
			if (!S.reliable)
				lossless &= !st[i].rx_dropped_nomem;
		}
		if (S.nr >= MAXRCV)
			lossless = false; /* no receive left to drain with */
		for (int i = 0; lossless && i < S.nm; i++)
			FZ_ASSERT(S.m[i].err || S.m[i].deliv_inc >= 0,
				  "message %d (%u bytes, %d->%d) sent but never delivered", i,
				  S.m[i].len, S.m[i].from, S.m[i].to);
		for (int i = 0; i < NN && !S.forged && S.nr < MAXRCV; i++)
			FZ_ASSERT(!st[i].unexpected_bytes && !st[i].pushed_bytes,
				  "node %d still holds %llu unexpected, %llu pushed bytes", i,
				  (unsigned long long)st[i].unexpected_bytes,
				  (unsigned long long)st[i].pushed_bytes);
	}
}

static void teardown(void)
{
	for (int i = 0; i < NN; i++) {
		struct node *nd = &S.n[i];

		xwi_engine_free(nd->e); /* frees its pending requests */
		nd->e = NULL;
		xwt_lq_drop(&nd->q);
		for (int k = 0; k < nd->nhist; k++)
			qf_free(&nd->hist[k]);
	}
	for (int i = 0; i < S.nm; i++) {
		free(S.m[i].data);
		free(S.m[i].ubuf);
	}
	for (int i = 0; i < S.nr; i++)
		free(S.r[i].buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	uint8_t mode = fz_u8(&in);

	memset(&S, 0, sizeof(S));
	trace = getenv("FZ_TRACE");
	S.reliable = mode & 1;
	S.adversary = mode & 2;
	S.clk = 1000000000ULL;
	S.rnd = 1;
	for (int i = 0; i < NN; i++) {
		struct node *nd = &S.n[i];

		nd->cfg = fz_cfg((__u16)(1 + i), S.reliable);
		xwt_link_addr(&nd->addr, i, nd->cfg.ep);
		xwt_lq_init(&nd->q, nd->slots, QCAP);
		nd->cap = QCAP;
		node_start(i);
	}
	for (int i = 0; i < NF; i++) {
		S.f[i].addr.encap = XW_ENCAP_ETH;
		S.f[i].addr.mac[0] = 0x02;
		S.f[i].addr.mac[5] = (__u8)(0x60 + i);
		S.f[i].addr.ep = 7;
	}
	for (int k = 0; k < 4096 && in.n; k++)
		op(&in);
	settle();
	teardown();
	return 0;
}
