// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Unit and integration tests of the protocol engine (userspace/lib/engine.h)
 * over an in-memory link: engines joined by per-node frame queues with a
 * capacity (a full queue makes ops->send return -EAGAIN), a pump that
 * delivers queued frames to xwi_engine_rx and calls xwi_engine_progress
 * until everything is idle.  Every frame on the link is checked against
 * the XDP program's field rules and the MORE rules, and recorded; after
 * each scenario the record is checked for exactly the LAT/LAST marks the
 * protocol defines.  Payloads are verified byte for byte.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>

#include "harness.h"
#include "engine.h"
#include "crc32c.h"

#define MAXN 5
#define RING 8192     /* frames a node's inbound queue can hold */
#define GUARD 64      /* guard bytes after every receive buffer */
#define ALL ~0ULL

/* ---- payload pattern ---------------------------------------------------- */

static __u8 pat(__u32 seed, size_t i)
{
	__u64 x = (__u64)i * 0x9E3779B97F4A7C15ULL + (seed + 1) * 0xD1B54A32D192ED03ULL;

	x ^= x >> 29;
	x *= 0xBF58476D1CE4E5B9ULL;
	x ^= x >> 32;
	return (__u8)x;
}

static void fill(unsigned char *b, size_t len, __u32 seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = pat(seed, i);
}

/* Index of the first wrong byte, or -1. */
static long verify(const unsigned char *b, size_t len, __u32 seed)
{
	for (size_t i = 0; i < len; i++)
		if (b[i] != pat(seed, i))
			return (long)i;
	return -1;
}

static bool guard_ok(const unsigned char *b)
{
	for (int i = 0; i < GUARD; i++)
		if (b[i] != 0xA5)
			return false;
	return true;
}

/* ---- the link ----------------------------------------------------------- */

struct qframe {
	struct xw_hdr h;
	unsigned char *pl;
	size_t len;
	int src;
};

struct node {
	int id;
	struct xwi_engine *e;
	struct xwi_engine_cfg cfg;
	struct xw_addr addr;
	struct qframe q[RING];
	size_t qhead, qn;
	size_t cap; /* frames queued before -EAGAIN */
};

struct logent {
	int src, dst;
	struct xw_hdr h;
	__u32 pull_block, pull_nfrags;
};

struct lastf {
	bool valid, more;
	unsigned int epoch;
};

static struct node nodes[MAXN];
static int nnodes;
static unsigned int epoch;
static struct lastf lastf[MAXN][MAXN];
static struct logent *flog;
static size_t nlog, logcap;
static int budget = 64;
static bool dup_mode;	    /* deliver every frame twice */
static bool marks_check;    /* run the mark checker at teardown */
static bool rx_expect_ok;   /* pump: every rx must return 0 */
static int rx_errors;

static int node_of(const struct xw_addr *a)
{
	for (int i = 0; i < nnodes; i++)
		if (xw_addr_equal(&nodes[i].addr, a))
			return i;
	return -1;
}

/* The XDP program's field rules, and ours: header fields we own are 0. */
static void check_rules(int s, int d, const struct xw_hdr *h, const void *pl, size_t len)
{
	__u32 plen = ntohs(h->payload_len), mlen = ntohl(h->msg_len), off = ntohl(h->frag_off);
	__u32 idx = ntohl(h->frag_idx), cnt = ntohl(h->frag_count);

	CHECK(len == plen, "send len %zu != payload_len %u", len, plen);
	CHECK(h->version == XW_VERSION, "version %u", h->version);
	CHECK(h->type > XW_PKT_INVALID && h->type < XW_PKT_TYPE_MAX, "type %u", h->type);
	CHECK(!(h->flags & ~XW_F_KNOWN), "unknown flags %#x", h->flags);
	CHECK(!h->rsvd0 && !h->rsvd1 && !h->rsvd2 && ((h->flags & XW_F_DATA) || !h->data) &&
	      !h->session && !h->seq && !h->ack && !h->csum,
	      "reserved/reliability fields not 0 (type %u)", h->type);
	CHECK(ntohs(h->src_ep) == nodes[s].cfg.ep && ntohs(h->dst_ep) == nodes[d].cfg.ep,
	      "endpoints %u->%u", ntohs(h->src_ep), ntohs(h->dst_ep));
	CHECK(plen == 0 || pl, "payload NULL with length %u", plen);
	switch (h->type) {
	case XW_PKT_SMALL:
		CHECK(mlen == plen && idx == 0 && cnt == 1 && off == 0,
		      "SMALL not whole: msg_len %u plen %u idx %u cnt %u off %u", mlen, plen, idx,
		      cnt, off);
		break;
	case XW_PKT_MEDIUM:
	case XW_PKT_RNDV:
	case XW_PKT_PULL_REPLY:
		CHECK(cnt >= 1 && idx < cnt, "type %u idx %u cnt %u", h->type, idx, cnt);
		CHECK((__u64)off + plen <= mlen, "type %u off %u + plen %u > msg_len %u", h->type,
		      off, plen, mlen);
		break;
	case XW_PKT_PULL:
		CHECK(idx < cnt && off <= mlen, "PULL idx %u cnt %u off %u msg_len %u", idx, cnt, off,
		      mlen);
		CHECK(plen == sizeof(struct xw_pull_req), "PULL payload %u", plen);
		if (plen == sizeof(struct xw_pull_req)) {
			struct xw_pull_req pr;

			memcpy(&pr, pl, sizeof(pr));
			CHECK(ntohl(pr.nfrags) >= 1 && (__u64)idx + ntohl(pr.nfrags) <= cnt,
			      "PULL nfrags %u from %u of %u", ntohl(pr.nfrags), idx, cnt);
		}
		break;
	default:
		CHECK(!off && !idx && !cnt, "control type %u with fragment fields", h->type);
		CHECK(h->type == XW_PKT_NOTIFY, "engine emitted type %u", h->type);
		CHECK(!(h->flags & (XW_F_LAT | XW_F_LAST)) || h->type == XW_PKT_NOTIFY,
		      "LAT/LAST on type %u", h->type);
		break;
	}
}

static int link_send(void *ctx, const struct xw_addr *dst, const struct xw_hdr *h,
		     const void *payload, size_t len)
{
	struct node *sn = ctx;
	int s = sn->id, d = node_of(dst);
	struct node *dn;
	struct qframe *f;

	REQUIRE(d >= 0, "frame to an unknown address");
	dn = &nodes[d];
	check_rules(s, d, h, payload, len);
	if (dn->qn >= dn->cap)
		return -EAGAIN;
	/* frames to one destination within one engine call: all but the last
	 * of them must say MORE (the engine held the next one already) */
	if (lastf[s][d].valid && lastf[s][d].epoch == epoch)
		CHECK(lastf[s][d].more, "node %d -> %d: frame without MORE followed by another "
		      "in the same call (type %u)", s, d, h->type);
	lastf[s][d] = (struct lastf){ .valid = true, .more = h->flags & XW_F_MORE, .epoch = epoch };
	f = &dn->q[(dn->qhead + dn->qn) % RING];
	f->h = *h;
	f->len = len;
	f->src = s;
	f->pl = malloc(len ? len : 1);
	REQUIRE(f->pl, "malloc");
	if (len)
		memcpy(f->pl, payload, len);
	dn->qn++;
	if (nlog == logcap) {
		logcap = logcap ? logcap * 2 : 4096;
		flog = realloc(flog, logcap * sizeof(*flog));
		REQUIRE(flog, "realloc");
	}
	flog[nlog] = (struct logent){ .src = s, .dst = d, .h = *h };
	if (h->type == XW_PKT_PULL && len == sizeof(struct xw_pull_req)) {
		struct xw_pull_req pr;

		memcpy(&pr, payload, sizeof(pr));
		flog[nlog].pull_block = ntohl(pr.block_id);
		flog[nlog].pull_nfrags = ntohl(pr.nfrags);
	}
	nlog++;
	return 0;
}

static __u64 fake_now;
static __u64 link_now(void *ctx)
{
	return ++fake_now;
}

static const struct xwi_engine_ops link_ops = { .send = link_send, .now_ns = link_now };

/* When an engine has nothing left to send, no frame it sent may say MORE. */
static void idle_check(int s)
{
	if (xwi_engine_tx_pending(nodes[s].e))
		return;
	for (int d = 0; d < nnodes; d++)
		CHECK(!(lastf[s][d].valid && lastf[s][d].more),
		      "node %d idle but its last frame to %d has MORE", s, d);
}

static void bounds_check(int i)
{
	struct xwi_engine_stats st;

	xwi_engine_stats(nodes[i].e, &st);
	CHECK(st.unexpected_bytes <= nodes[i].cfg.unexpected_max,
	      "node %d unexpected_bytes %llu > %llu", i, (unsigned long long)st.unexpected_bytes,
	      (unsigned long long)nodes[i].cfg.unexpected_max);
	CHECK(st.pushed_bytes <= nodes[i].cfg.pushed_max, "node %d pushed_bytes %llu > %llu", i,
	      (unsigned long long)st.pushed_bytes, (unsigned long long)nodes[i].cfg.pushed_max);
}

/* Engine calls through these: one epoch per call, MORE checked after. */
static int E_isend(int s, int d, const void *buf, size_t len, __u64 match,
		   struct xw_request **r)
{
	int rc;

	epoch++;
	rc = xwi_engine_isend(nodes[s].e, &nodes[d].addr, buf, len, match, r);
	idle_check(s);
	return rc;
}

static int E_irecv(int s, void *buf, size_t len, __u64 match, __u64 mask, struct xw_request **r)
{
	int rc;

	epoch++;
	rc = xwi_engine_irecv(nodes[s].e, buf, len, match, mask, r);
	idle_check(s);
	return rc;
}

static int E_progress(int s, int b)
{
	int rc;

	epoch++;
	rc = xwi_engine_progress(nodes[s].e, b);
	idle_check(s);
	return rc;
}

static int E_cancel(int s, struct xw_request *r)
{
	int rc;

	epoch++;
	rc = xwi_engine_cancel(nodes[s].e, r);
	idle_check(s);
	return rc;
}

/* Deliver a frame to node @d as if from node @s (or from @src if given). */
static int E_rx_from(int d, const struct xw_addr *src, const struct xw_hdr *h, const void *pl,
		     size_t len)
{
	int rc;

	epoch++;
	rc = xwi_engine_rx(nodes[d].e, src, h, pl, len);
	idle_check(d);
	return rc;
}

static struct xwi_engine_cfg small_cfg(__u16 ep)
{
	struct xwi_engine_cfg c;

	xwi_engine_cfg_default(&c, ep, 64);
	c.reliable = false;	/* the message layer alone, on a lossless link */
	c.crc = false;
	c.eager_max = 320;	/* MEDIUM: up to 5 fragments */
	c.btp1 = 384;	/* 6 fragments */
	c.btp2 = 192;	/* 3 more: K = 9, 576 bytes */
	c.pull_block = 4;
	c.pull_inflight = 2;
	return c;
}

static struct xwi_engine_cfg big_cfg(__u16 ep)
{
	struct xwi_engine_cfg c;

	xwi_engine_cfg_default(&c, ep, 1400);
	c.reliable = false;
	c.crc = false;
	return c;
}

static void net_init(int n, const struct xwi_engine_cfg *cfgs)
{
	memset(lastf, 0, sizeof(lastf));
	nlog = 0;
	nnodes = n;
	dup_mode = false;
	marks_check = true;
	rx_expect_ok = true;
	rx_errors = 0;
	budget = 64;
	for (int i = 0; i < n; i++) {
		struct node *nd = &nodes[i];

		nd->id = i;
		nd->cfg = cfgs[i];
		memset(&nd->addr, 0, sizeof(nd->addr));
		nd->addr.encap = XW_ENCAP_ETH;
		nd->addr.mac[0] = 0x02;
		nd->addr.mac[5] = (__u8)(0x10 + i);
		nd->addr.ep = cfgs[i].ep;
		nd->qhead = nd->qn = 0;
		nd->cap = 512;
		nd->e = xwi_engine_new(&nd->cfg, &link_ops, nd);
		REQUIRE(nd->e, "xwi_engine_new: %s", strerror(errno));
		REQUIRE(xwi_engine_ctx(nd->e) == nd, "ctx");
	}
}

static void net_init2(struct xwi_engine_cfg a, struct xwi_engine_cfg b)
{
	struct xwi_engine_cfg c[2] = { a, b };

	net_init(2, c);
}

static struct qframe qpop(int d)
{
	struct node *nd = &nodes[d];
	struct qframe f = nd->q[nd->qhead];

	nd->qhead = (nd->qhead + 1) % RING;
	nd->qn--;
	return f;
}

static void deliver(int i, struct qframe *f)
{
	size_t n0 = nlog;
	int rc = E_rx_from(i, &nodes[f->src].addr, &f->h, f->pl, f->len);

	CHECK(nlog == n0, "xwi_engine_rx emitted frames (they go out from progress)");

	if (rc)
		rx_errors++;
	if (rx_expect_ok)
		CHECK(rc == 0, "rx at node %d of type %u from %d: %d", i, f->h.type, f->src, rc);
	if (dup_mode) {
		rc = E_rx_from(i, &nodes[f->src].addr, &f->h, f->pl, f->len);
		CHECK(rc == 0, "duplicate rx at node %d of type %u: %d", i, f->h.type, rc);
	}
}

/* Deliver and progress until no frame is queued and no engine has work. */
static void pump(void)
{
	for (long it = 0; it < 20000000; it++) {
		bool busy = false;

		for (int i = 0; i < nnodes; i++) {
			size_t n = nodes[i].qn;

			for (size_t k = 0; k < n; k++) {
				struct qframe f = qpop(i);

				deliver(i, &f);
				free(f.pl);
			}
			E_progress(i, budget);
			bounds_check(i);
		}
		for (int i = 0; i < nnodes; i++)
			if (nodes[i].qn || xwi_engine_tx_pending(nodes[i].e))
				busy = true;
		if (!busy)
			return;
	}
	REQUIRE(0, "pump did not settle");
}

static void drop_queue(int d)
{
	while (nodes[d].qn) {
		struct qframe f = qpop(d);

		free(f.pl);
	}
}

/* ---- the mark checker ---------------------------------------------------- */

struct mblock {
	__u32 first, n, pos;
};

struct mstate {
	int s, d; /* sender, receiver of the message */
	__u32 id, k, pushes;
	struct mblock *blocks;
	size_t nb, head, cap;
};

struct markcount {
	unsigned long frames[XW_PKT_TYPE_MAX], lat[XW_PKT_TYPE_MAX], last[XW_PKT_TYPE_MAX],
		more[XW_PKT_TYPE_MAX], pushes;
};

static __u32 markpos(const struct xwi_engine_cfg *c, __u32 n)
{
	return (c->mark_shift > 0 && c->mark_shift < n) ? n - 1 - c->mark_shift : n - 1;
}

static struct mstate *mfind(struct mstate **ms, size_t *nms, int s, int d, __u32 id, bool create)
{
	for (size_t i = *nms; i-- > 0;)
		if ((*ms)[i].s == s && (*ms)[i].d == d && (*ms)[i].id == id)
			return &(*ms)[i];
	if (!create)
		return NULL;
	*ms = realloc(*ms, (*nms + 1) * sizeof(**ms));
	REQUIRE(*ms, "realloc");
	(*ms)[*nms] = (struct mstate){ .s = s, .d = d, .id = id };
	return &(*ms)[(*nms)++];
}

/*
 * Check every recorded frame's LAT and LAST against the protocol: SMALL,
 * the last (or shifted) MEDIUM fragment, RNDV, PULL, the last (or shifted)
 * PULL_REPLY of each block, NOTIFY; never pushed fragments.  Pushed
 * fragments come first, in order; replies follow the PULLs in order.
 */
static void check_marks(struct markcount *mc)
{
	struct mstate *ms = NULL, *m;
	size_t nms = 0;

	memset(mc, 0, sizeof(*mc));
	for (size_t i = 0; i < nlog; i++) {
		const struct logent *f = &flog[i];
		const struct xwi_engine_cfg *c = &nodes[f->src].cfg;
		__u32 idx = ntohl(f->h.frag_idx), cnt = ntohl(f->h.frag_count), id = ntohl(f->h.msg_id);
		bool lat = f->h.flags & XW_F_LAT, last = f->h.flags & XW_F_LAST, want_lat = false,
		     want_last = false;
		__u8 t = f->h.type;

		mc->frames[t]++;
		mc->lat[t] += lat;
		mc->last[t] += last;
		mc->more[t] += !!(f->h.flags & XW_F_MORE);
		switch (t) {
		case XW_PKT_SMALL:
			want_lat = c->marks & XWI_MARK_SMALL;
			break;
		case XW_PKT_MEDIUM:
			want_lat = (c->marks & XWI_MARK_MEDIUM) && idx == markpos(c, cnt);
			want_last = idx == cnt - 1;
			break;
		case XW_PKT_RNDV:
			want_lat = c->marks & XWI_MARK_RNDV;
			m = mfind(&ms, &nms, f->src, f->dst, id, true);
			m->k = idx + 1;
			break;
		case XW_PKT_PULL:
			want_lat = c->marks & XWI_MARK_PULL;
			m = mfind(&ms, &nms, f->dst, f->src, id, false);
			CHECK(m, "PULL for a message without RNDV (id %u)", id);
			if (!m)
				break;
			if (m->nb == m->cap) {
				m->cap = m->cap ? m->cap * 2 : 16;
				m->blocks = realloc(m->blocks, m->cap * sizeof(*m->blocks));
				REQUIRE(m->blocks, "realloc");
			}
			m->blocks[m->nb++] = (struct mblock){ .first = idx, .n = f->pull_nfrags };
			break;
		case XW_PKT_PULL_REPLY:
			m = mfind(&ms, &nms, f->src, f->dst, id, false);
			CHECK(m, "PULL_REPLY for a message without RNDV (id %u)", id);
			if (!m)
				break;
			if (m->pushes + 1 < m->k) {
				/* a pushed fragment */
				m->pushes++;
				mc->pushes++;
				CHECK(idx == m->pushes, "pushed fragment %u, want %u", idx, m->pushes);
			} else {
				struct mblock *b;

				CHECK(m->head < m->nb, "PULL_REPLY %u of msg %u without a PULL", idx, id);
				if (m->head >= m->nb)
					break;
				b = &m->blocks[m->head];
				CHECK(idx == b->first + b->pos, "reply %u, want %u", idx, b->first + b->pos);
				want_lat = (c->marks & XWI_MARK_PULL_REPLY) && b->pos == markpos(c, b->n);
				want_last = b->pos == b->n - 1;
				if (++b->pos == b->n)
					m->head++;
			}
			break;
		case XW_PKT_NOTIFY:
			want_lat = c->marks & XWI_MARK_NOTIFY;
			break;
		}
		CHECK(lat == want_lat, "frame %zu type %u idx %u/%u: LAT %d, want %d", i, t, idx, cnt,
		      lat, want_lat);
		CHECK(last == want_last, "frame %zu type %u idx %u/%u: LAST %d, want %d", i, t, idx,
		      cnt, last, want_last);
	}
	for (size_t i = 0; i < nms; i++)
		free(ms[i].blocks);
	free(ms);
}

static void net_free(void)
{
	struct markcount mc;

	if (marks_check && !dup_mode)
		check_marks(&mc);
	for (int i = 0; i < nnodes; i++) {
		drop_queue(i);
		xwi_engine_free(nodes[i].e);
		nodes[i].e = NULL;
	}
	nnodes = 0;
}

static struct xwi_engine_stats stats(int i)
{
	struct xwi_engine_stats st;

	xwi_engine_stats(nodes[i].e, &st);
	return st;
}

/* ---- transfers ------------------------------------------------------------ */

/*
 * Send @len bytes from @a to @b into a receive buffer of @rlen bytes,
 * receive posted before (@early) or after the send has been pumped.
 * @sbuf / @rbuf: caller's buffers (@rbuf with GUARD bytes room) or NULL.
 */
static void xfer_buf(int a, int b, size_t len, size_t rlen, bool early, __u32 seed,
		     unsigned char *sbuf, unsigned char *rbuf)
{
	unsigned char *sb = sbuf ? sbuf : malloc(len ? len : 1);
	unsigned char *rb = rbuf ? rbuf : malloc(rlen + GUARD);
	struct xw_request *sr = NULL, *rr = NULL;
	__u64 tag = 0xABC00000ULL + seed;
	size_t want = len < rlen ? len : rlen;
	bool eager = len <= nodes[a].cfg.eager_max;
	long bad;

	REQUIRE(sb && rb, "malloc");
	if (!sbuf)
		fill(sb, len, seed);
	memset(rb, 0, rlen);
	memset(rb + rlen, 0xA5, GUARD);
	if (early)
		REQUIRE(E_irecv(b, rlen ? rb : NULL, rlen, tag, ALL, &rr) == 0, "irecv");
	REQUIRE(E_isend(a, b, len ? sb : NULL, len, tag, &sr) == 0, "isend %zu", len);
	pump();
	if (!early) {
		CHECK(sr->state == (eager ? XWI_REQ_DONE : XWI_REQ_PENDING),
		      "len %zu late: send state %d before the receive", len, sr->state);
		REQUIRE(E_irecv(b, rlen ? rb : NULL, rlen, tag, ALL, &rr) == 0, "irecv");
		pump();
	}
	CHECK(sr->state == XWI_REQ_DONE, "len %zu %s %d->%d: send not done", len,
	      early ? "early" : "late", a, b);
	CHECK(rr->state == XWI_REQ_DONE, "len %zu %s %d->%d: recv not done", len,
	      early ? "early" : "late", a, b);
	if (sr->state == XWI_REQ_DONE)
		CHECK(sr->status.error == 0 && sr->status.len == len && sr->status.msg_len == len &&
		      sr->status.match == tag,
		      "send status err %d len %zu msg_len %zu", sr->status.error, sr->status.len,
		      sr->status.msg_len);
	if (rr->state == XWI_REQ_DONE) {
		CHECK(rr->status.error == (len > rlen ? -EMSGSIZE : 0) && rr->status.len == want &&
		      rr->status.msg_len == len && rr->status.match == tag &&
		      xw_addr_equal(&rr->status.src, &nodes[a].addr),
		      "len %zu rlen %zu: recv status err %d len %zu msg_len %zu", len, rlen,
		      rr->status.error, rr->status.len, rr->status.msg_len);
		bad = verify(rb, want, seed);
		CHECK(bad < 0, "len %zu %s %d->%d: byte %ld wrong", len, early ? "early" : "late", a,
		      b, bad);
	}
	CHECK(guard_ok(rb + rlen), "len %zu rlen %zu: written past the receive buffer", len, rlen);
	CHECK(xwi_request_free(sr) == 0, "free send");
	CHECK(xwi_request_free(rr) == 0, "free recv");
	if (!sbuf)
		free(sb);
	if (!rbuf)
		free(rb);
}

static void xfer(int a, int b, size_t len, size_t rlen, bool early, __u32 seed)
{
	xfer_buf(a, b, len, rlen, early, seed, NULL, NULL);
}

static void expect_clean(int i)
{
	struct xwi_engine_stats st = stats(i);

	CHECK(st.unexpected_bytes == 0 && st.pushed_bytes == 0,
	      "node %d holds %llu unexpected, %llu pushed bytes", i,
	      (unsigned long long)st.unexpected_bytes, (unsigned long long)st.pushed_bytes);
	CHECK(st.rx_bad == 0, "node %d rx_bad %llu", i, (unsigned long long)st.rx_bad);
}

/* ---- tests ----------------------------------------------------------------- */

static void test_sizes_small(void)
{
	static const size_t sizes[] = {
		0, 1, 63, 64, 65, 128, 191, 192, 193, 255, 256, 257, 319, 320, /* eager */
		321, 383, 384, 385,	 /* btp1: all pushed            */
		575, 576, 577,		 /* btp1 + btp2 (K = 9)         */
		831, 832, 833,		 /* one pull block after K      */
		1087, 1088, 1089,	 /* two blocks = pull_inflight  */
		5000, 100000,
	};
	static const struct { size_t cap; int budget; } links[] = {
		{ 512, 64 }, { 2, 3 }, { 4096, INT_MAX }, { 1, 1 },
	};
	__u32 seed = 1;

	for (size_t l = 0; l < sizeof(links) / sizeof(links[0]); l++) {
		net_init2(small_cfg(1), small_cfg(2));
		nodes[0].cap = nodes[1].cap = links[l].cap;
		budget = links[l].budget;
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			for (int dir = 0; dir < 2; dir++) {
				for (int early = 0; early < 2; early++) {
					xfer(dir, !dir, sizes[i], sizes[i], early, seed++);
					xfer(dir, !dir, sizes[i], sizes[i] + 100, early, seed++);
				}
			}
		}
		expect_clean(0);
		expect_clean(1);
		for (int i = 0; i < 2; i++) {
			struct xwi_engine_stats st = stats(i);

			CHECK(st.rx_dup == 0 && st.rx_dropped_nomem == 0,
			      "link %zu node %d: dup %llu nomem %llu", l, i,
			      (unsigned long long)st.rx_dup, (unsigned long long)st.rx_dropped_nomem);
			CHECK(st.sends_done == st.recvs_done && st.sends_done > 0,
			      "sends_done %llu recvs_done %llu", (unsigned long long)st.sends_done,
			      (unsigned long long)st.recvs_done);
		}
		net_free();
	}
}

static void test_sizes_big(void)
{
	const size_t P = 1400, K = 5 * 1400, B = 32 * 1400;
	const size_t sizes[] = {
		0, 1, P - 1, P, P + 1, 2 * P, K - 1, K, K + 1, 32767, 32768, 32769,
		B - 1, B, B + 1, K + B - 1, K + B, K + B + 1, K + 4 * B, K + 4 * B + 1,
		(1 << 20) + 123,
	};
	const size_t big = 64u << 20;
	unsigned char *sb, *rb;
	__u32 seed = 1000;

	net_init2(big_cfg(3), big_cfg(4));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (int dir = 0; dir < 2; dir++)
			for (int early = 0; early < 2; early++)
				xfer(dir, !dir, sizes[i], sizes[i], early, seed++);
	/* 64 MiB, both directions, early and late */
	sb = malloc(big);
	rb = malloc(big + GUARD);
	REQUIRE(sb && rb, "malloc 64 MiB");
	fill(sb, big, 77);
	for (int dir = 0; dir < 2; dir++)
		for (int early = 0; early < 2; early++)
			xfer_buf(dir, !dir, big, big, early, 77, sb, rb);
	free(sb);
	free(rb);
	expect_clean(0);
	expect_clean(1);
	net_free();
}

/* Both directions at once, several messages in flight each way. */
static void test_bidirectional(void)
{
	const size_t sizes[] = { 0, 50, 300, 5000, 70000 };
	const int n = sizeof(sizes) / sizeof(sizes[0]);
	unsigned char *sb[2][5], *rb[2][5];
	struct xw_request *sr[2][5], *rr[2][5];

	net_init2(small_cfg(1), small_cfg(2));
	nodes[0].cap = nodes[1].cap = 7;
	for (int d = 0; d < 2; d++) {
		for (int i = 0; i < n; i++) {
			sb[d][i] = malloc(sizes[i] + 1);
			rb[d][i] = malloc(sizes[i] + GUARD);
			fill(sb[d][i], sizes[i], 10 * d + i);
			memset(rb[d][i] + sizes[i], 0xA5, GUARD);
			REQUIRE(E_irecv(!d, rb[d][i], sizes[i], i, ALL, &rr[d][i]) == 0, "irecv");
		}
	}
	for (int i = 0; i < n; i++)
		for (int d = 0; d < 2; d++)
			REQUIRE(E_isend(d, !d, sb[d][i], sizes[i], i, &sr[d][i]) == 0, "isend");
	pump();
	for (int d = 0; d < 2; d++) {
		for (int i = 0; i < n; i++) {
			CHECK(sr[d][i]->state == XWI_REQ_DONE && rr[d][i]->state == XWI_REQ_DONE,
			      "dir %d msg %d not done", d, i);
			CHECK(verify(rb[d][i], sizes[i], 10 * d + i) < 0, "dir %d msg %d data", d, i);
			CHECK(guard_ok(rb[d][i] + sizes[i]), "guard");
			xwi_request_free(sr[d][i]);
			xwi_request_free(rr[d][i]);
			free(sb[d][i]);
			free(rb[d][i]);
		}
	}
	net_free();
}

/* ---- matching ---------------------------------------------------------------- */

static void test_matching(void)
{
	unsigned char s[6][300], r[6][300 + GUARD];
	struct xw_request *sr[6], *rr[6];

	/* masks and wildcard; posted receives in post order */
	net_init2(small_cfg(1), small_cfg(2));
	REQUIRE(E_irecv(1, r[0], 300, 0x1234000000000000ULL, 0xFFFF000000000000ULL, &rr[0]) == 0,
		"irecv");
	REQUIRE(E_irecv(1, r[1], 300, 0x0000000000000007ULL, 0x00000000000000FFULL, &rr[1]) == 0,
		"irecv");
	REQUIRE(E_irecv(1, r[2], 300, 0xDEAD, 0, &rr[2]) == 0, "irecv");	/* wildcard */
	REQUIRE(E_irecv(1, r[3], 300, 0x1234000000000000ULL, 0xFFFF000000000000ULL, &rr[3]) == 0,
		"irecv");
	fill(s[0], 300, 100);
	fill(s[1], 300, 101);
	fill(s[2], 300, 102);
	fill(s[3], 300, 103);
	/* 0x99..07 matches rr[1] (low byte 7) */
	REQUIRE(E_isend(0, 1, s[0], 100, 0x9900000000000007ULL, &sr[0]) == 0, "isend");
	/* matches rr[0] (first posted with prefix 0x1234) */
	REQUIRE(E_isend(0, 1, s[1], 200, 0x1234000000000001ULL, &sr[1]) == 0, "isend");
	/* 0x1234..07: rr[3] is the only one left matching prefix; but rr[2]
	 * (wildcard) was posted earlier: post order wins */
	REQUIRE(E_isend(0, 1, s[2], 300, 0x1234000000000007ULL, &sr[2]) == 0, "isend");
	REQUIRE(E_isend(0, 1, s[3], 50, 0x1234FFFFFFFFFFFFULL, &sr[3]) == 0, "isend");
	pump();
	CHECK(rr[1]->state == XWI_REQ_DONE && rr[1]->status.msg_len == 100 &&
	      verify(r[1], 100, 100) < 0, "low-byte mask");
	CHECK(rr[0]->state == XWI_REQ_DONE && rr[0]->status.msg_len == 200 &&
	      verify(r[0], 200, 101) < 0, "prefix mask");
	CHECK(rr[2]->state == XWI_REQ_DONE && rr[2]->status.msg_len == 300 &&
	      rr[2]->status.match == 0x1234000000000007ULL && verify(r[2], 300, 102) < 0,
	      "wildcard takes the earlier-posted match");
	CHECK(rr[3]->state == XWI_REQ_DONE && rr[3]->status.msg_len == 50 &&
	      verify(r[3], 50, 103) < 0, "last");
	for (int i = 0; i < 4; i++) {
		xwi_request_free(sr[i]);
		xwi_request_free(rr[i]);
	}
	net_free();

	/* unexpected messages (all classes) matched in send order */
	net_init2(small_cfg(1), small_cfg(2));
	{
		const size_t sz[6] = { 10, 300, 2000, 0, 64, 700 };
		unsigned char *b[6];

		for (int i = 0; i < 6; i++) {
			b[i] = malloc(sz[i] + 1);
			fill(b[i], sz[i], 200 + i);
			REQUIRE(E_isend(0, 1, b[i], sz[i], 0x77, &sr[i]) == 0, "isend");
		}
		pump();
		CHECK(stats(1).unexpected_msgs == 6, "unexpected_msgs %llu",
		      (unsigned long long)stats(1).unexpected_msgs);
		for (int i = 0; i < 6; i++) {
			unsigned char *rb = malloc(2000 + GUARD);

			memset(rb + 2000, 0xA5, GUARD);
			REQUIRE(E_irecv(1, rb, 2000, 0, 0, &rr[i]) == 0, "irecv");
			pump();
			CHECK(rr[i]->state == XWI_REQ_DONE && rr[i]->status.msg_len == sz[i] &&
			      verify(rb, sz[i], 200 + i) < 0 && guard_ok(rb + 2000),
			      "unexpected message %d out of order (got len %zu)", i,
			      rr[i]->status.msg_len);
			free(rb);
		}
		for (int i = 0; i < 6; i++) {
			CHECK(sr[i]->state == XWI_REQ_DONE, "send %d", i);
			xwi_request_free(sr[i]);
			xwi_request_free(rr[i]);
			free(b[i]);
		}
		expect_clean(1);
	}
	net_free();

	/* an unexpected message with a non-matching tag is skipped, not lost */
	net_init2(small_cfg(1), small_cfg(2));
	fill(s[0], 100, 300);
	fill(s[1], 100, 301);
	REQUIRE(E_isend(0, 1, s[0], 100, 1, &sr[0]) == 0, "isend");
	REQUIRE(E_isend(0, 1, s[1], 100, 2, &sr[1]) == 0, "isend");
	pump();
	REQUIRE(E_irecv(1, r[1], 300, 2, ALL, &rr[1]) == 0, "irecv");
	REQUIRE(E_irecv(1, r[0], 300, 1, ALL, &rr[0]) == 0, "irecv");
	CHECK(rr[1]->state == XWI_REQ_DONE && verify(r[1], 100, 301) < 0, "tag 2");
	CHECK(rr[0]->state == XWI_REQ_DONE && verify(r[0], 100, 300) < 0, "tag 1");
	for (int i = 0; i < 2; i++) {
		xwi_request_free(sr[i]);
		xwi_request_free(rr[i]);
	}
	expect_clean(1);
	net_free();
}

/* Three peers send to one; messages of each peer are matched in its order. */
static void test_three_peers(void)
{
	const size_t sz[6] = { 10, 200, 1000, 11, 3000, 201 };
	struct xwi_engine_cfg c[4] = { small_cfg(1), small_cfg(2), small_cfg(3), small_cfg(4) };
	unsigned char *sb[4][6], *rb[18];
	struct xw_request *sr[4][6], *rr[18];
	int next[4] = { 0 };

	for (int early = 0; early < 3; early++) {
		net_init(4, c);
		for (int i = 0; i < 4; i++)
			nodes[i].cap = 5;
		/* early 0: all late; 1: half posted before; 2: all before */
		int pre = early == 0 ? 0 : early == 1 ? 9 : 18;

		for (int k = 0; k < 18; k++) {
			rb[k] = malloc(4000 + GUARD);
			memset(rb[k] + 4000, 0xA5, GUARD);
		}
		for (int k = 0; k < pre; k++)
			REQUIRE(E_irecv(0, rb[k], 4000, 0x42, ALL, &rr[k]) == 0, "irecv");
		for (int m = 0; m < 6; m++) {
			for (int p = 1; p < 4; p++) {
				sb[p][m] = malloc(sz[m]);
				fill(sb[p][m], sz[m], 1000 * p + m);
				REQUIRE(E_isend(p, 0, sb[p][m], sz[m], 0x42, &sr[p][m]) == 0, "isend");
			}
			if (m == 2)
				pump();
		}
		pump();
		for (int k = pre; k < 18; k++) {
			REQUIRE(E_irecv(0, rb[k], 4000, 0, 0, &rr[k]) == 0, "irecv");
			if (k % 4 == 0)
				pump();
		}
		pump();
		memset(next, 0, sizeof(next));
		for (int k = 0; k < 18; k++) {
			int p = node_of(&rr[k]->status.src);

			CHECK(rr[k]->state == XWI_REQ_DONE, "recv %d", k);
			CHECK(p >= 1 && p < 4, "recv %d from node %d", k, p);
			if (p < 1 || p >= 4)
				continue;
			CHECK(next[p] < 6 && rr[k]->status.msg_len == sz[next[p]],
			      "early %d: peer %d message %d arrived as the %d-th (len %zu)", early, p,
			      next[p], k, rr[k]->status.msg_len);
			if (next[p] < 6)
				CHECK(verify(rb[k], sz[next[p]], 1000 * p + next[p]) < 0 &&
				      guard_ok(rb[k] + 4000), "data of peer %d msg %d", p, next[p]);
			next[p]++;
		}
		for (int p = 1; p < 4; p++) {
			CHECK(next[p] == 6, "peer %d: %d messages", p, next[p]);
			for (int m = 0; m < 6; m++) {
				CHECK(sr[p][m]->state == XWI_REQ_DONE, "send %d/%d", p, m);
				xwi_request_free(sr[p][m]);
				free(sb[p][m]);
			}
		}
		for (int k = 0; k < 18; k++) {
			xwi_request_free(rr[k]);
			free(rb[k]);
		}
		expect_clean(0);
		net_free();
	}
}

/* Frames of later messages arriving first are held until their turn. */
static void test_reorder_held(void)
{
	const size_t sz[3] = { 30, 200, 2000 }; /* SMALL, MEDIUM, large */
	unsigned char *sb[3], rb[3][2000 + GUARD];
	struct xw_request *sr[3], *rr[3];

	for (int early = 0; early < 2; early++) {
		for (int order = 0; order < 3; order++) {
			net_init2(small_cfg(1), small_cfg(2));
			marks_check = false;
			nodes[1].cap = RING;
			if (early)
				for (int i = 0; i < 3; i++)
					REQUIRE(E_irecv(1, rb[i], 2000, 9, ALL, &rr[i]) == 0, "irecv");
			for (int i = 0; i < 3; i++) {
				sb[i] = malloc(sz[i]);
				fill(sb[i], sz[i], 40 + i);
				REQUIRE(E_isend(0, 1, sb[i], sz[i], 9, &sr[i]) == 0, "isend");
			}
			/* B's queue: message 0 last, the MEDIUM's fragments reversed,
			 * the large message's frames in order (a push before its RNDV
			 * would be lost without the reliability layer) */
			{
				static const int seq[3][3] = { { 2, 1, 0 }, { 1, 2, 0 }, { 2, 0, 1 } };
				struct node *nd = &nodes[1];
				size_t n = nd->qn, k = 0;
				struct qframe *tmp = malloc(n * sizeof(*tmp));

				for (size_t j = 0; j < n; j++)
					tmp[j] = nd->q[(nd->qhead + j) % RING];
				for (int g = 0; g < 3; g++) {
					int id = seq[order][g];

					for (size_t j = 0; j < n; j++) {
						size_t jj = id == 1 ? n - 1 - j : j;

						if (ntohl(tmp[jj].h.msg_id) == (__u32)id)
							nd->q[(nd->qhead + k++) % RING] = tmp[jj];
					}
				}
				CHECK(k == n, "regrouped %zu of %zu frames", k, n);
				free(tmp);
			}
			pump();
			if (!early)
				for (int i = 0; i < 3; i++)
					REQUIRE(E_irecv(1, rb[i], 2000, 9, ALL, &rr[i]) == 0, "irecv");
			pump();
			for (int i = 0; i < 3; i++) {
				CHECK(rr[i]->state == XWI_REQ_DONE && rr[i]->status.msg_len == sz[i] &&
				      verify(rb[i], sz[i], 40 + i) < 0,
				      "early %d order %d: message %d (got len %zu)", early, order, i,
				      rr[i]->status.msg_len);
				CHECK(sr[i]->state == XWI_REQ_DONE, "send %d", i);
				xwi_request_free(sr[i]);
				xwi_request_free(rr[i]);
				free(sb[i]);
			}
			expect_clean(1);
			net_free();
		}
	}
}

/* Held messages over the bounds: eager ones are lost, large ones pulled. */
static void test_held_over_bound(void)
{
	const size_t sz[4] = { 30, 200, 2000, 40 };
	static const int seq[4] = { 1, 2, 3, 0 };
	struct xwi_engine_cfg b = small_cfg(2);
	unsigned char *sb[4], rb[4][2000];
	struct xw_request *sr[4], *rr[4];
	struct node *nd;
	struct qframe *tmp;
	size_t n, k = 0;

	b.unexpected_max = 0;
	b.pushed_max = 0;
	net_init2(small_cfg(1), b);
	marks_check = false;
	nodes[1].cap = RING;
	for (int i = 0; i < 4; i++)
		REQUIRE(E_irecv(1, rb[i], 2000, 9, ALL, &rr[i]) == 0, "irecv");
	for (int i = 0; i < 4; i++) {
		sb[i] = malloc(sz[i]);
		fill(sb[i], sz[i], 70 + i);
		REQUIRE(E_isend(0, 1, sb[i], sz[i], 9, &sr[i]) == 0, "isend");
	}
	nd = &nodes[1];
	n = nd->qn;
	tmp = malloc(n * sizeof(*tmp));
	for (size_t j = 0; j < n; j++)
		tmp[j] = nd->q[(nd->qhead + j) % RING];
	for (int g = 0; g < 4; g++)
		for (size_t j = 0; j < n; j++)
			if (ntohl(tmp[j].h.msg_id) == (__u32)seq[g])
				nd->q[(nd->qhead + k++) % RING] = tmp[j];
	free(tmp);
	pump();
	CHECK(stats(1).rx_dropped_nomem == 4 + 9 + 1, "dropped %llu",
	      (unsigned long long)stats(1).rx_dropped_nomem);
	/* message 0 to rr[0]; 1 (MEDIUM) and 3 (SMALL) were lost; 2 pulled */
	CHECK(rr[0]->state == XWI_REQ_DONE && rr[0]->status.msg_len == 30 &&
	      verify(rb[0], 30, 70) < 0, "message 0");
	CHECK(rr[1]->state == XWI_REQ_DONE && rr[1]->status.msg_len == 2000 &&
	      verify(rb[1], 2000, 72) < 0, "large message pulled whole");
	CHECK(rr[2]->state == XWI_REQ_PENDING && rr[3]->state == XWI_REQ_PENDING,
	      "dropped messages not delivered");
	for (int i = 0; i < 4; i++) {
		if (rr[i]->state == XWI_REQ_PENDING)
			CHECK(E_cancel(1, rr[i]) == 0, "cancel");
		CHECK(sr[i]->state == XWI_REQ_DONE, "send %d", i);
		xwi_request_free(rr[i]);
		xwi_request_free(sr[i]);
		free(sb[i]);
	}
	xfer(0, 1, 100, 100, true, 75);
	expect_clean(1);
	net_free();
}

/*
 * Late receive of a large message whose pushes were dropped (pushed_max 0):
 * PULLs cover the pushed fragments; when those arrive before a PULL could
 * go out, the PULL is withdrawn.
 */
static void test_pull_withdrawn(void)
{
	struct xwi_engine_cfg b = small_cfg(2);
	unsigned char *sb = malloc(2000), rb[2000];
	struct xw_request *sr, *rr;
	struct markcount mc;
	struct qframe f;

	b.pushed_max = 0;
	net_init2(small_cfg(1), b);
	fill(sb, 2000, 80);
	REQUIRE(E_isend(0, 1, sb, 2000, 1, &sr) == 0, "isend");
	CHECK(nodes[1].qn == 9, "RNDV + 8 pushes queued (%zu)", nodes[1].qn);
	f = qpop(1); /* the RNDV: unexpected, its bytes dropped */
	deliver(1, &f);
	free(f.pl);
	nodes[0].cap = 0; /* B's PULLs cannot go out */
	REQUIRE(E_irecv(1, rb, 2000, 1, ALL, &rr) == 0, "irecv");
	CHECK(xwi_engine_tx_pending(nodes[1].e), "PULLs queued");
	while (nodes[1].qn) { /* the pushes: complete the second block */
		f = qpop(1);
		deliver(1, &f);
		free(f.pl);
	}
	nodes[0].cap = 512;
	pump();
	CHECK(sr->state == XWI_REQ_DONE && rr->state == XWI_REQ_DONE && verify(rb, 2000, 80) < 0,
	      "late receive after dropped pushes");
	check_marks(&mc);
	/* blocks: [0..3] (needs fragment 0), [4..7] withdrawn, then the rest */
	CHECK(mc.frames[XW_PKT_PULL] == 1 + (32 - 9 + 3) / 4, "%lu PULLs",
	      mc.frames[XW_PKT_PULL]);
	CHECK(flog[9].h.type == XW_PKT_PULL && ntohl(flog[9].h.frag_idx) == 0 &&
	      flog[9].pull_nfrags == 4, "first PULL asks fragments 0..3");
	xwi_request_free(sr);
	xwi_request_free(rr);
	free(sb);
	expect_clean(1);
	net_free();
}

/* Engines freed with everything in flight: no leak (LeakSanitizer), no crash. */
static void test_teardown(void)
{
	const size_t sz[5] = { 0, 30, 200, 2000, 100000 };
	unsigned char *sb = malloc(100000), *rb = malloc(100000);

	fill(sb, 100000, 90);
	for (int steps = 0; steps < 40; steps++) {
		struct xw_request *r, *all[13];
		int nr = 0;

		net_init2(small_cfg(1), small_cfg(2));
		marks_check = false;
		nodes[0].cap = nodes[1].cap = 3;
		budget = 1;
		for (int i = 0; i < 5; i++) {
			REQUIRE(E_isend(0, 1, sb, sz[i], i, &r) == 0, "isend");
			all[nr++] = r;
			REQUIRE(E_isend(1, 0, sb, sz[i], i, &r) == 0, "isend");
			all[nr++] = r;
		}
		/* a late receive of the large message from 0, a posted one */
		REQUIRE(E_irecv(1, rb, 100000, 4, ALL, &r) == 0, "irecv");
		all[nr++] = r;
		REQUIRE(E_irecv(0, rb, 10, 77, ALL, &r) == 0, "irecv");
		all[nr++] = r;
		REQUIRE(E_irecv(0, rb + 50000, 2000, 3, ALL, &r) == 0, "irecv");
		all[nr++] = r;
		for (int it = 0; it < steps * 3; it++) {
			for (int i = 0; i < 2; i++) {
				if (nodes[i].qn) {
					struct qframe f = qpop(i);

					deliver(i, &f);
					free(f.pl);
				}
				E_progress(i, budget);
			}
		}
		/* what is on the link arrives, nothing more goes out: PULLs,
		 * NOTIFYs and replies stay queued in the engines */
		for (int i = 0; i < 2; i++) {
			while (nodes[i].qn) {
				struct qframe f = qpop(i);

				deliver(i, &f);
				free(f.pl);
			}
		}
		/* done requests are the application's to free; pending ones
		 * go with their engine */
		for (int i = 0; i < nr; i++)
			if (all[i]->state == XWI_REQ_DONE)
				CHECK(xwi_request_free(all[i]) == 0, "free");
		net_free();
	}
	free(sb);
	free(rb);
}

/* ---- truncation ------------------------------------------------------------- */

static void test_truncation(void)
{
	static const struct { size_t len, rlen; } t[] = {
		{ 10, 5 },	{ 64, 63 },    { 65, 64 },    { 300, 1 },     { 300, 100 },
		{ 300, 0 },	{ 256, 255 },  { 257, 256 },  { 5000, 0 },    { 5000, 1 },
		{ 5000, 63 },	{ 5000, 64 },  { 5000, 65 },  { 5000, 576 },  { 5000, 577 },
		{ 5000, 1000 }, { 5000, 4999 }, { 100000, 3333 },
	};
	__u32 seed = 500;

	net_init2(small_cfg(1), small_cfg(2));
	nodes[0].cap = nodes[1].cap = 3;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		for (int early = 0; early < 2; early++)
			for (int dir = 0; dir < 2; dir++)
				xfer(dir, !dir, t[i].len, t[i].rlen, early, seed++);
	/* a truncated large receive pulls only what overlaps the buffer */
	{
		struct markcount mc;
		unsigned char *sb = malloc(100000), *rb = malloc(1000 + GUARD);

		nlog = 0;
		fill(sb, 100000, 1);
		xfer_buf(0, 1, 100000, 1000, true, 1, sb, rb);
		check_marks(&mc);
		/* 1000 bytes: fragments 0..15; 0..8 pushed, 9..15 pulled */
		CHECK(mc.frames[XW_PKT_PULL] == 2 && mc.frames[XW_PKT_PULL_REPLY] == 8 + 7,
		      "truncated pull: %lu PULLs, %lu replies", mc.frames[XW_PKT_PULL],
		      mc.frames[XW_PKT_PULL_REPLY]);
		free(sb);
		free(rb);
	}
	expect_clean(0);
	expect_clean(1);
	net_free();
}


/* ---- directed receive, peek and claim ------------------------------------ */

/* A receive restricted to one sender takes only that sender's messages,
 * posted or unexpected; a wildcard receive posted earlier still wins for
 * the others. */
static void test_directed(void)
{
	unsigned char s[3][200], r[4][200 + GUARD];
	struct xw_request *sr[3], *rr[4];

	net_init(3, (struct xwi_engine_cfg[]){ small_cfg(1), small_cfg(2), small_cfg(3) });
	for (int i = 0; i < 3; i++)
		fill(s[i], 200, 700 + i);
	/* posted: rr[0] from node 2 only, rr[1] from node 1 only */
	REQUIRE(xwi_engine_irecv_from(nodes[0].e, r[0], 200, 5, ALL, &nodes[2].addr, &rr[0]) == 0,
		"irecv_from");
	REQUIRE(xwi_engine_irecv_from(nodes[0].e, r[1], 200, 5, ALL, &nodes[1].addr, &rr[1]) == 0,
		"irecv_from");
	REQUIRE(E_isend(1, 0, s[1], 100, 5, &sr[1]) == 0, "isend");
	pump();
	CHECK(rr[0]->state == XWI_REQ_PENDING, "directed receive took another sender's message");
	CHECK(rr[1]->state == XWI_REQ_DONE && rr[1]->status.msg_len == 100 &&
	      verify(r[1], 100, 701) < 0 && node_of(&rr[1]->status.src) == 1, "directed 1");
	REQUIRE(E_isend(2, 0, s[2], 150, 5, &sr[2]) == 0, "isend");
	pump();
	CHECK(rr[0]->state == XWI_REQ_DONE && rr[0]->status.msg_len == 150 &&
	      verify(r[0], 150, 702) < 0 && node_of(&rr[0]->status.src) == 2, "directed 2");
	/* unexpected: a directed receive skips the other sender's older one */
	REQUIRE(E_isend(1, 0, s[1], 60, 9, &sr[0]) == 0, "isend");
	pump();
	xwi_request_free(sr[2]);
	REQUIRE(E_isend(2, 0, s[2], 70, 9, &sr[2]) == 0, "isend");
	pump();
	REQUIRE(xwi_engine_irecv_from(nodes[0].e, r[2], 200, 9, ALL, &nodes[2].addr, &rr[2]) == 0,
		"irecv_from");
	CHECK(rr[2]->state == XWI_REQ_DONE && rr[2]->status.msg_len == 70 &&
	      verify(r[2], 70, 702) < 0, "directed unexpected");
	REQUIRE(E_irecv(0, r[3], 200, 0, 0, &rr[3]) == 0, "irecv");
	CHECK(rr[3]->state == XWI_REQ_DONE && rr[3]->status.msg_len == 60 &&
	      node_of(&rr[3]->status.src) == 1, "wildcard after directed");
	for (int i = 0; i < 3; i++)
		xwi_request_free(sr[i]);
	for (int i = 0; i < 4; i++)
		xwi_request_free(rr[i]);
	expect_clean(0);
	net_free();
}

/* Peek shows the envelope without taking the message; claim sets it aside
 * for one receive; a 0-byte claimed receive discards it (a large one too,
 * its sender completes). */
static void test_peek_claim(void)
{
	const size_t big = 100000;
	unsigned char *sb = malloc(big), *rb = malloc(big + GUARD), s[300];
	struct xw_request *sr[4], *rr[3];
	struct xw_status st;
	__u64 c1 = 0, c2 = 0;

	net_init2(small_cfg(1), small_cfg(2));
	fill(s, 300, 800);
	fill(sb, big, 801);
	CHECK(xwi_engine_peek(nodes[1].e, 0, 0, NULL, false, &st, NULL) == -ENOMSG,
	      "peek on nothing");
	REQUIRE(E_isend(0, 1, s, 300, 0x10, &sr[0]) == 0, "isend");
	REQUIRE(E_isend(0, 1, sb, big, 0x20, &sr[1]) == 0, "isend");
	REQUIRE(E_isend(0, 1, s, 10, 0x30, &sr[2]) == 0, "isend");
	REQUIRE(E_isend(0, 1, sb, big, 0x40, &sr[3]) == 0, "isend");
	pump();
	/* peek: oldest matching, not taken, again the same */
	REQUIRE(xwi_engine_peek(nodes[1].e, 0, 0, NULL, false, &st, NULL) == 0, "peek");
	CHECK(st.match == 0x10 && st.msg_len == 300 && node_of(&st.src) == 0, "peek envelope");
	REQUIRE(xwi_engine_peek(nodes[1].e, 0x20, ALL, &nodes[0].addr, false, &st, NULL) == 0,
		"peek directed");
	CHECK(st.match == 0x20 && st.msg_len == big, "peek large envelope");
	CHECK(xwi_engine_peek(nodes[1].e, 0x20, ALL, &nodes[1].addr, false, &st, NULL) == -ENOMSG,
	      "peek from another sender");
	/* claim the large one: invisible to receives and peeks */
	REQUIRE(xwi_engine_peek(nodes[1].e, 0x20, ALL, NULL, true, &st, &c1) == 0 && c1, "claim");
	CHECK(xwi_engine_peek(nodes[1].e, 0x20, ALL, NULL, false, &st, NULL) == -ENOMSG,
	      "claimed message still visible");
	/* claim and discard the small one with 0 bytes */
	REQUIRE(xwi_engine_peek(nodes[1].e, 0x10, ALL, NULL, true, &st, &c2) == 0 && c2 != c1,
		"claim 2");
	REQUIRE(xwi_engine_irecv_claimed(nodes[1].e, c2, NULL, 0, &rr[2]) == 0, "discard");
	pump();
	CHECK(rr[2]->state == XWI_REQ_DONE && rr[2]->status.len == 0 &&
	      rr[2]->status.msg_len == 300, "discarded");
	xwi_request_free(rr[2]);
	/* wildcard receives skip the claimed message */
	REQUIRE(E_irecv(1, rb, big, 0, 0, &rr[0]) == 0, "irecv");
	CHECK(rr[0]->state == XWI_REQ_DONE && rr[0]->status.match == 0x30 &&
	      verify(rb, 10, 800) < 0, "receive skips claimed");
	xwi_request_free(rr[0]);
	REQUIRE(E_irecv(1, rb, big, 0, 0, &rr[0]) == 0, "irecv");
	pump();
	CHECK(rr[0]->state == XWI_REQ_DONE && rr[0]->status.match == 0x40 &&
	      verify(rb, big, 801) < 0, "large after claimed");
	xwi_request_free(rr[0]);
	memset(rb, 0, big);
	REQUIRE(xwi_engine_irecv_claimed(nodes[1].e, c1, rb, big, &rr[1]) == 0, "claimed recv");
	pump();
	CHECK(rr[1]->state == XWI_REQ_DONE && rr[1]->status.msg_len == big &&
	      rr[1]->status.match == 0x20 && verify(rb, big, 801) < 0, "claimed large data");
	CHECK(xwi_engine_irecv_claimed(nodes[1].e, c1, rb, big, &rr[2]) == -ENOENT,
	      "claim taken twice");
	xwi_request_free(rr[1]);
	pump();
	for (int i = 0; i < 4; i++) {
		CHECK(sr[i]->state == XWI_REQ_DONE && sr[i]->status.error == 0, "send %d", i);
		xwi_request_free(sr[i]);
	}
	expect_clean(1);
	net_free();
	free(sb);
	free(rb);
}

/* 32 bits of data travel with a message of every class (SMALL, MEDIUM,
 * RNDV with pulled fragments), posted or unexpected, and show in a peek. */
static void test_data(void)
{
	static const size_t sz[] = { 0, 10, 3000, 100000 };
	const size_t big = 100000;
	unsigned char *sb = malloc(big), *rb = malloc(big);
	struct xw_request *sr, *rr, *sr2;
	struct xw_status st;

	net_init2(small_cfg(1), small_cfg(2));
	fill(sb, big, 900);
	for (size_t i = 0; i < 4; i++)
		for (int early = 0; early < 2; early++) {
			/* every bit of the 32 used: XW_DATA_MAX itself first */
			__u32 d = XW_DATA_MAX - (__u32)(i * 0x01010101u * 2 + (size_t)early);

			if (early)
				REQUIRE(E_irecv(1, rb, big, 0x55, ALL, &rr) == 0, "irecv");
			REQUIRE(xwi_engine_isend_data(nodes[0].e, &nodes[1].addr, sb, sz[i], 0x55,
						      XWI_SEND_DATA, d, &sr) == 0, "isend_data");
			/* and one without data right after */
			REQUIRE(E_isend(0, 1, sb, 5, 0x56, &sr2) == 0, "isend");
			pump();
			if (!early) {
				REQUIRE(xwi_engine_peek(nodes[1].e, 0x55, ALL, NULL, false, &st,
							NULL) == 0, "peek");
				CHECK(st.has_data && st.data == d, "peek data %#x", st.data);
				REQUIRE(E_irecv(1, rb, big, 0x55, ALL, &rr) == 0, "irecv");
				pump();
			}
			CHECK(rr->state == XWI_REQ_DONE && rr->status.has_data &&
			      rr->status.data == d && rr->status.msg_len == sz[i] &&
			      verify(rb, sz[i], 900) < 0,
			      "data of a %zu-byte message (%s): %d %#x", sz[i],
			      early ? "posted" : "unexpected", rr->status.has_data,
			      rr->status.data);
			xwi_request_free(rr);
			REQUIRE(E_irecv(1, rb, big, 0x56, ALL, &rr) == 0, "irecv");
			CHECK(rr->state == XWI_REQ_DONE && !rr->status.has_data && !rr->status.data,
			      "no data");
			xwi_request_free(rr);
			pump();
			xwi_request_free(sr);
			xwi_request_free(sr2);
		}
	expect_clean(1);
	net_free();
	free(sb);
	free(rb);
}

/* ---- cancel -------------------------------------------------------------------- */

static void test_cancel(void)
{
	unsigned char s[5000], r[5000 + GUARD];
	struct xw_request *sr, *sr2, *rr, *rr2;

	net_init2(small_cfg(1), small_cfg(2));
	fill(s, sizeof(s), 3);

	/* unmatched receive */
	REQUIRE(E_irecv(1, r, 100, 5, ALL, &rr) == 0, "irecv");
	CHECK(xwi_request_free(rr) == -EBUSY, "free pending");
	CHECK(E_cancel(1, rr) == 0, "cancel posted receive");
	CHECK(rr->state == XWI_REQ_DONE && rr->status.error == -ECANCELED, "cancelled status %d",
	      rr->status.error);
	CHECK(E_cancel(1, rr) == -EBUSY, "cancel done receive");
	xwi_request_free(rr);
	/* the message it would have matched goes to the unexpected queue */
	REQUIRE(E_isend(0, 1, s, 100, 5, &sr) == 0, "isend");
	pump();
	CHECK(stats(1).unexpected_msgs == 1, "unexpected after cancel");
	REQUIRE(E_irecv(1, r, 100, 5, ALL, &rr) == 0, "irecv");
	CHECK(rr->state == XWI_REQ_DONE && verify(r, 100, 3) < 0, "after cancel");
	xwi_request_free(rr);
	xwi_request_free(sr);

	/* queued send, nothing out yet: link closed */
	nodes[1].cap = 0;
	REQUIRE(E_isend(0, 1, s, 5000, 6, &sr) == 0, "isend large");
	REQUIRE(E_isend(0, 1, s, 300, 7, &sr2) == 0, "isend medium");
	CHECK(sr->state == XWI_REQ_PENDING, "queued");
	CHECK(E_cancel(0, sr2) == 0, "cancel queued medium");
	CHECK(sr2->state == XWI_REQ_DONE && sr2->status.error == -ECANCELED, "medium cancelled");
	CHECK(E_cancel(0, sr) == 0, "cancel queued large");
	CHECK(sr->state == XWI_REQ_DONE && sr->status.error == -ECANCELED, "large cancelled");
	CHECK(!xwi_engine_tx_pending(nodes[0].e), "nothing left to send");
	xwi_request_free(sr);
	xwi_request_free(sr2);
	nodes[1].cap = 512;
	pump();
	CHECK(nodes[1].qn == 0 && stats(1).rx_frames[XW_PKT_RNDV] == 0, "cancelled frames sent");
	/* the receiver is not left waiting for the cancelled messages' ids */
	xfer(0, 1, 300, 300, true, 8);
	xfer(0, 1, 5000, 5000, false, 9);

	/* in progress: a MEDIUM with some fragments out */
	nodes[1].cap = 2;
	REQUIRE(E_isend(0, 1, s, 300, 10, &sr) == 0, "isend");
	CHECK(sr->state == XWI_REQ_PENDING, "medium partly out");
	CHECK(E_cancel(0, sr) == -EBUSY, "cancel started medium");
	nodes[1].cap = 512;
	REQUIRE(E_irecv(1, r, 300, 10, ALL, &rr) == 0, "irecv");
	pump();
	CHECK(sr->state == XWI_REQ_DONE && sr->status.error == 0 && rr->state == XWI_REQ_DONE &&
	      verify(r, 300, 3) < 0, "medium after -EBUSY");
	xwi_request_free(sr);
	xwi_request_free(rr);

	/* in progress: large send waiting for pulls, large receive matched */
	REQUIRE(E_isend(0, 1, s, 5000, 11, &sr) == 0, "isend");
	pump();
	CHECK(E_cancel(0, sr) == -EBUSY, "cancel large in progress");
	REQUIRE(E_irecv(1, r, 5000, 11, ALL, &rr) == 0, "irecv");
	CHECK(rr->state == XWI_REQ_PENDING, "large receive matched");
	CHECK(E_cancel(1, rr) == -EBUSY, "cancel matched receive");
	pump();
	CHECK(sr->state == XWI_REQ_DONE && rr->state == XWI_REQ_DONE && verify(r, 5000, 3) < 0,
	      "large after -EBUSY");
	/* a pending receive released by the engine */
	REQUIRE(E_irecv(1, r, 10, 99, ALL, &rr2) == 0, "irecv");
	CHECK(xwi_engine_cancel(nodes[0].e, rr2) == -EINVAL, "cancel on the wrong engine");
	CHECK(E_cancel(1, rr2) == 0, "cancel");
	xwi_request_free(rr2);
	xwi_request_free(sr);
	xwi_request_free(rr);
	expect_clean(1);
	net_free();
}

/* ---- marks --------------------------------------------------------------------- */

/* One large message (23 fragments: 9 pushed, 14 pulled in blocks 4,4,4,2),
 * one MEDIUM (5 fragments), one SMALL; returns the mark counts. */
static __u32 reply_lat[8];
static int nreply_lat;

static void marks_run(__u32 marks, __u32 shift, struct markcount *mc, __u32 *medium_lat)
{
	struct xwi_engine_cfg a = small_cfg(1), b = small_cfg(2);
	unsigned char s[1444], r[1444];
	struct xw_request *sr[3], *rr[3];
	const size_t sz[3] = { 20, 300, 1444 };

	a.marks = b.marks = marks;
	a.mark_shift = b.mark_shift = shift;
	net_init2(a, b);
	fill(s, sizeof(s), 4);
	for (int i = 0; i < 3; i++) {
		REQUIRE(E_irecv(1, r, sz[i], i, ALL, &rr[i]) == 0, "irecv");
		REQUIRE(E_isend(0, 1, s, sz[i], i, &sr[i]) == 0, "isend");
		pump();
		CHECK(sr[i]->state == XWI_REQ_DONE && rr[i]->state == XWI_REQ_DONE &&
		      verify(r, sz[i], 4) < 0, "marks %#x shift %u msg %d", marks, shift, i);
		xwi_request_free(sr[i]);
		xwi_request_free(rr[i]);
	}
	check_marks(mc);
	*medium_lat = ~0u;
	nreply_lat = 0;
	for (size_t i = 0; i < nlog; i++) {
		if (flog[i].h.type == XW_PKT_MEDIUM && (flog[i].h.flags & XW_F_LAT))
			*medium_lat = ntohl(flog[i].h.frag_idx);
		if (flog[i].h.type == XW_PKT_PULL_REPLY && (flog[i].h.flags & XW_F_LAT) &&
		    nreply_lat < 8)
			reply_lat[nreply_lat++] = ntohl(flog[i].h.frag_idx);
	}
	net_free();
}

static void test_marks(void)
{
	static const struct { __u32 kind; __u8 type; unsigned long n; } kinds[] = {
		{ XWI_MARK_SMALL, XW_PKT_SMALL, 1 },   { XWI_MARK_MEDIUM, XW_PKT_MEDIUM, 1 },
		{ XWI_MARK_RNDV, XW_PKT_RNDV, 1 },     { XWI_MARK_PULL, XW_PKT_PULL, 4 },
		{ XWI_MARK_PULL_REPLY, XW_PKT_PULL_REPLY, 4 }, { XWI_MARK_NOTIFY, XW_PKT_NOTIFY, 1 },
	};
	struct markcount mc;
	__u32 mlat;

	marks_run(XWI_MARK_ALL, 0, &mc, &mlat);
	/* blocks [9..12] [13..16] [17..20] [21..22] */
	CHECK(nreply_lat == 4 && reply_lat[0] == 12 && reply_lat[1] == 16 && reply_lat[2] == 20 &&
	      reply_lat[3] == 22, "PULL_REPLY LATs");
	CHECK(mc.frames[XW_PKT_PULL] == 4 && mc.frames[XW_PKT_PULL_REPLY] == 8 + 14 &&
	      mc.pushes == 8 && mc.frames[XW_PKT_NOTIFY] == 1 && mc.frames[XW_PKT_MEDIUM] == 5,
	      "frames: %lu PULL, %lu PULL_REPLY (%lu pushed), %lu NOTIFY, %lu MEDIUM",
	      mc.frames[XW_PKT_PULL], mc.frames[XW_PKT_PULL_REPLY], mc.pushes,
	      mc.frames[XW_PKT_NOTIFY], mc.frames[XW_PKT_MEDIUM]);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		CHECK(mc.lat[kinds[k].type] == kinds[k].n, "type %u: %lu LAT, want %lu",
		      kinds[k].type, mc.lat[kinds[k].type], kinds[k].n);
	CHECK(mc.last[XW_PKT_PULL_REPLY] == 4 && mc.last[XW_PKT_MEDIUM] == 1, "LAST counts");
	CHECK(mlat == 4, "MEDIUM LAT on %u", mlat);

	/* each kind off removes exactly its LATs */
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		marks_run(XWI_MARK_ALL & ~kinds[k].kind, 0, &mc, &mlat);
		for (size_t j = 0; j < sizeof(kinds) / sizeof(kinds[0]); j++)
			CHECK(mc.lat[kinds[j].type] == (j == k ? 0 : kinds[j].n),
			      "mark %#x off: type %u has %lu LAT", kinds[k].kind, kinds[j].type,
			      mc.lat[kinds[j].type]);
	}
	marks_run(0, 0, &mc, &mlat);
	for (int t = 0; t < XW_PKT_TYPE_MAX; t++)
		CHECK(mc.lat[t] == 0, "marks 0: type %d has LAT", t);

	/* the mis-ordering experiment: mark on N-1-X */
	marks_run(XWI_MARK_ALL, 1, &mc, &mlat);
	CHECK(mlat == 3, "shift 1: MEDIUM LAT on %u", mlat);
	CHECK(nreply_lat == 4 && reply_lat[0] == 11 && reply_lat[1] == 15 && reply_lat[2] == 19 &&
	      reply_lat[3] == 21, "shift 1: PULL_REPLY LATs on N-2 of each block");
	CHECK(mc.lat[XW_PKT_PULL_REPLY] == 4, "shift 1: PULL_REPLY LATs %lu",
	      mc.lat[XW_PKT_PULL_REPLY]);
	marks_run(XWI_MARK_ALL, 3, &mc, &mlat);
	CHECK(mlat == 1, "shift 3: MEDIUM LAT on %u", mlat);
	CHECK(nreply_lat == 4 && reply_lat[0] == 9 && reply_lat[1] == 13 && reply_lat[2] == 17 &&
	      reply_lat[3] == 22, "shift 3: PULL_REPLY LATs on N-4 (last of the 2-block)");
	marks_run(XWI_MARK_ALL, 7, &mc, &mlat);
	CHECK(mlat == 4, "shift >= N: MEDIUM LAT stays on the last (%u)", mlat);
	/* the checker verified the PULL_REPLY positions (N-2, N-4 in each block) */
}

/* MORE exactly on frames followed by another frame to the same peer. */
static void test_more(void)
{
	struct xwi_engine_cfg c[3] = { small_cfg(1), small_cfg(2), small_cfg(3) };
	unsigned char s[300], r[4][300];
	struct xw_request *sr[4], *rr[4];

	net_init(3, c);
	fill(s, 300, 5);
	/* link open: a lone SMALL has no MORE */
	REQUIRE(E_irecv(1, r[0], 300, 0, 0, &rr[0]) == 0, "irecv");
	REQUIRE(E_isend(0, 1, s, 10, 1, &sr[0]) == 0, "isend");
	CHECK(nlog == 1 && !(flog[0].h.flags & XW_F_MORE) && (flog[0].h.flags & XW_F_LAT),
	      "lone SMALL flags %#x", nlog ? flog[0].h.flags : 0);
	pump();
	xwi_request_free(sr[0]);
	xwi_request_free(rr[0]);

	/* link closed: MEDIUM (5) + SMALL queued to B, emitted in one burst */
	nlog = 0;
	nodes[1].cap = 0;
	REQUIRE(E_isend(0, 1, s, 300, 2, &sr[0]) == 0, "isend");
	REQUIRE(E_isend(0, 1, s, 10, 3, &sr[1]) == 0, "isend");
	CHECK(nlog == 0 && xwi_engine_tx_pending(nodes[0].e), "queued");
	nodes[1].cap = 512;
	CHECK(E_progress(0, INT_MAX) == 6, "6 frames");
	CHECK(nlog == 6, "nlog %zu", nlog);
	for (size_t i = 0; i < nlog; i++)
		CHECK(!!(flog[i].h.flags & XW_F_MORE) == (i < 5), "burst frame %zu flags %#x", i,
		      flog[i].h.flags);
	CHECK(sr[0]->state == XWI_REQ_DONE && sr[1]->state == XWI_REQ_DONE, "eager done");
	xwi_request_free(sr[0]);
	xwi_request_free(sr[1]);
	pump();
	REQUIRE(E_irecv(1, r[0], 300, 2, ALL, &rr[0]) == 0, "irecv");
	REQUIRE(E_irecv(1, r[1], 300, 3, ALL, &rr[1]) == 0, "irecv");
	CHECK(rr[0]->state == XWI_REQ_DONE && rr[1]->state == XWI_REQ_DONE, "received");
	xwi_request_free(rr[0]);
	xwi_request_free(rr[1]);
	pump();

	/* two destinations: MORE is per destination */
	nlog = 0;
	nodes[1].cap = nodes[2].cap = 0;
	REQUIRE(E_isend(0, 1, s, 300, 4, &sr[0]) == 0, "isend");
	REQUIRE(E_isend(0, 2, s, 300, 4, &sr[1]) == 0, "isend");
	nodes[1].cap = nodes[2].cap = 512;
	CHECK(E_progress(0, INT_MAX) == 10, "10 frames");
	for (size_t i = 0; i < nlog; i++) {
		CHECK(flog[i].dst == 1 + (int)(i % 2), "round robin: frame %zu to %d", i,
		      flog[i].dst);
		CHECK(!!(flog[i].h.flags & XW_F_MORE) == (i < 8), "frame %zu (to %d idx %u) flags %#x",
		      i, flog[i].dst, ntohl(flog[i].h.frag_idx), flog[i].h.flags);
	}
	/* budget: a partial pass keeps MORE on the last frame emitted */
	xwi_request_free(sr[0]);
	xwi_request_free(sr[1]);
	pump();
	for (int i = 1; i < 3; i++) {
		REQUIRE(E_irecv(i, r[i], 300, 4, ALL, &rr[i]) == 0, "irecv");
		CHECK(rr[i]->state == XWI_REQ_DONE && verify(r[i], 300, 5) < 0, "peer %d", i);
		xwi_request_free(rr[i]);
	}
	nlog = 0;
	nodes[1].cap = 0;
	REQUIRE(E_isend(0, 1, s, 300, 4, &sr[0]) == 0, "isend");
	nodes[1].cap = 512;
	CHECK(E_progress(0, 2) == 2, "budget 2");
	CHECK(nlog == 2 && (flog[1].h.flags & XW_F_MORE), "MORE kept across a budget cut");
	CHECK(E_progress(0, 0) == 0 && E_progress(0, -1) == 0, "budget <= 0");
	pump();
	xwi_request_free(sr[0]);
	REQUIRE(E_irecv(1, r[1], 300, 4, ALL, &rr[1]) == 0, "irecv");
	CHECK(rr[1]->state == XWI_REQ_DONE && verify(r[1], 300, 5) < 0, "after budget");
	xwi_request_free(rr[1]);
	net_free();
}

/* ---- bounded memory -------------------------------------------------------------- */

static void test_unexpected_bound(void)
{
	struct xwi_engine_cfg a = small_cfg(1), b = small_cfg(2);
	unsigned char s[1000], r[1000 + GUARD];
	struct xw_request *sr, *rr[100];
	struct xwi_engine_stats st;
	int done = 0;

	a.eager_max = b.eager_max = 1024;
	b.unexpected_max = 10000;
	net_init2(a, b);
	fill(s, sizeof(s), 6);
	/* 100 MEDIUM messages of 1000 bytes (16 fragments) nobody receives yet */
	for (int i = 0; i < 100; i++) {
		s[0] = (unsigned char)i;
		REQUIRE(E_isend(0, 1, s, 1000, 0x100 + i, &sr) == 0, "isend");
		pump();
		CHECK(sr->state == XWI_REQ_DONE, "eager send done");
		xwi_request_free(sr);
	}
	st = stats(1);
	CHECK(st.unexpected_bytes == 10000 && st.unexpected_msgs == 10,
	      "held %llu bytes in %llu messages", (unsigned long long)st.unexpected_bytes,
	      (unsigned long long)st.unexpected_msgs);
	CHECK(st.rx_dropped_nomem == 90 * 16, "dropped %llu frames",
	      (unsigned long long)st.rx_dropped_nomem);
	/* 100 SMALLs: all dropped while the buffer is full */
	for (int i = 0; i < 100; i++) {
		REQUIRE(E_isend(0, 1, s, 50, 0x1000, &sr) == 0, "isend");
		xwi_request_free(sr);
		pump();
	}
	st = stats(1);
	CHECK(st.rx_dropped_nomem == 90 * 16 + 100 && st.unexpected_bytes == 10000,
	      "SMALL flood: dropped %llu", (unsigned long long)st.rx_dropped_nomem);
	/* receives for all 100: the first 10 complete, in order, the rest wait */
	for (int i = 0; i < 100; i++) {
		REQUIRE(E_irecv(1, r, 1000, 0, 0xF000, &rr[i]) == 0, "irecv");
		if (rr[i]->state == XWI_REQ_DONE) {
			s[0] = (unsigned char)i;
			CHECK(rr[i]->status.match == 0x100u + i && !memcmp(r, s, 1000),
			      "kept message %d", i);
			done++;
		}
	}
	CHECK(done == 10, "%d kept messages delivered", done);
	CHECK(stats(1).unexpected_bytes == 0, "buffer released");
	for (int i = 0; i < 100; i++) {
		if (rr[i]->state == XWI_REQ_PENDING)
			CHECK(E_cancel(1, rr[i]) == 0, "cancel");
		xwi_request_free(rr[i]);
	}
	/* the per-peer order is not stuck behind the dropped messages */
	xfer(0, 1, 1000, 1000, false, 12);
	xfer(0, 1, 3000, 3000, false, 13);
	expect_clean(1);
	net_free();
}

static void test_pushed_bound(void)
{
	struct xwi_engine_cfg a = small_cfg(1), b = small_cfg(2);
	unsigned char *s[4], r[4][5000 + GUARD];
	struct xw_request *sr[4], *rr[4];
	struct xwi_engine_stats st;
	struct markcount mc;

	b.pushed_max = 1000; /* one message's 576 pushed bytes */
	net_init2(a, b);
	for (int i = 0; i < 4; i++) {
		s[i] = malloc(5000);
		fill(s[i], 5000, 60 + i);
		REQUIRE(E_isend(0, 1, s[i], 5000, 0x33, &sr[i]) == 0, "isend");
	}
	pump();
	st = stats(1);
	CHECK(st.pushed_bytes == 576 && st.unexpected_msgs == 4, "pushed %llu unexpected %llu",
	      (unsigned long long)st.pushed_bytes, (unsigned long long)st.unexpected_msgs);
	CHECK(st.rx_dropped_nomem == 3 * 9, "dropped %llu pushed frames",
	      (unsigned long long)st.rx_dropped_nomem);
	for (int i = 0; i < 4; i++) {
		CHECK(sr[i]->state == XWI_REQ_PENDING, "large send %d waits", i);
		memset(r[i] + 5000, 0xA5, GUARD);
		REQUIRE(E_irecv(1, r[i], 5000, 0x33, ALL, &rr[i]) == 0, "irecv");
	}
	pump();
	for (int i = 0; i < 4; i++) {
		CHECK(sr[i]->state == XWI_REQ_DONE && rr[i]->state == XWI_REQ_DONE &&
		      verify(r[i], 5000, 60 + i) < 0 && guard_ok(r[i] + 5000),
		      "late receive %d after dropped pushes", i);
		xwi_request_free(sr[i]);
		xwi_request_free(rr[i]);
		free(s[i]);
	}
	check_marks(&mc);
	/* 3 messages pulled from fragment 0 */
	CHECK(mc.frames[XW_PKT_NOTIFY] == 4, "notifies %lu", mc.frames[XW_PKT_NOTIFY]);
	expect_clean(1);
	net_free();
}

/* ---- -EAGAIN ---------------------------------------------------------------------- */

static void test_eagain(void)
{
	struct xwi_engine_cfg a = small_cfg(1), b = small_cfg(2);
	unsigned char s[300], r[300];
	struct xw_request *sr[4], *rr;
	int got = 0;

	a.tx_backlog_max = 3;
	net_init2(a, b);
	fill(s, sizeof(s), 7);
	nodes[1].cap = 0;
	for (int i = 0; i < 3; i++)
		REQUIRE(E_isend(0, 1, s, 100 * (i + 1), 0x10, &sr[i]) == 0, "isend %d", i);
	CHECK(E_isend(0, 1, s, 10, 0x10, &sr[3]) == -EAGAIN, "backlog full");
	nodes[1].cap = 4; /* the link takes a few frames at a time */
	pump();
	for (int i = 0; i < 3; i++) {
		CHECK(sr[i]->state == XWI_REQ_DONE, "send %d", i);
		xwi_request_free(sr[i]);
	}
	CHECK(E_isend(0, 1, s, 10, 0x10, &sr[3]) == 0, "backlog drained");
	xwi_request_free(sr[3]);
	pump();
	for (;;) {
		REQUIRE(E_irecv(1, r, 300, 0x10, ALL, &rr) == 0, "irecv");
		if (rr->state != XWI_REQ_DONE) {
			E_cancel(1, rr);
			xwi_request_free(rr);
			break;
		}
		CHECK(rr->status.msg_len == (got < 3 ? 100u * (got + 1) : 10u) &&
		      verify(r, rr->status.msg_len, 7) < 0, "message %d", got);
		xwi_request_free(rr);
		got++;
	}
	CHECK(got == 4, "%d messages (the refused one must not be queued)", got);
	/* argument errors */
	CHECK(xwi_engine_isend(nodes[0].e, NULL, s, 1, 0, &sr[0]) == -EINVAL, "no dst");
	CHECK(xwi_engine_isend(nodes[0].e, &nodes[1].addr, NULL, 1, 0, &sr[0]) == -EINVAL, "no buf");
	CHECK(xwi_engine_isend(nodes[0].e, &nodes[1].addr, s, 1, 0, NULL) == -EINVAL, "no reqp");
	if (sizeof(size_t) > 4)
		CHECK(xwi_engine_isend(nodes[0].e, &nodes[1].addr, s, (size_t)1 << 32, 0, &sr[0]) ==
		      -EMSGSIZE, "4 GiB");
	CHECK(xwi_engine_irecv(nodes[0].e, NULL, 1, 0, 0, &rr) == -EINVAL, "irecv no buf");
	CHECK(xwi_request_free(NULL) == -EINVAL, "free NULL");
	CHECK(!xwi_engine_tx_pending(nodes[0].e), "nothing queued by failed calls");
	net_free();
	{
		struct xwi_engine_cfg bad = small_cfg(1);

		bad.pull_block = 33;
		CHECK(!xwi_engine_new(&bad, &link_ops, NULL), "pull_block 33 accepted");
		bad = small_cfg(1);
		bad.pull_inflight = 0;
		CHECK(!xwi_engine_new(&bad, &link_ops, NULL), "pull_inflight 0 accepted");
		bad = small_cfg(1);
		bad.frag_payload = 0;
		CHECK(!xwi_engine_new(&bad, &link_ops, NULL), "frag_payload 0 accepted");
	}
}

/* ---- malformed frames --------------------------------------------------------------- */

static struct xw_hdr mkhdr(__u8 type, __u16 src_ep, __u16 dst_ep, __u32 id, __u32 mlen,
			   __u32 idx, __u32 cnt, __u32 off, __u16 plen, __u64 match)
{
	struct xw_hdr h;

	memset(&h, 0, sizeof(h));
	h.version = XW_VERSION;
	h.type = type;
	h.src_ep = htons(src_ep);
	h.dst_ep = htons(dst_ep);
	h.msg_id = htonl(id);
	h.msg_len = htonl(mlen);
	h.frag_idx = htonl(idx);
	h.frag_count = htonl(cnt);
	h.frag_off = htonl(off);
	h.payload_len = htons(plen);
	h.match = htobe64(match);
	return h;
}

static void test_malformed(void)
{
	struct xw_addr fake = { .encap = XW_ENCAP_ETH, .mac = { 2, 0, 0, 0, 0, 0x77 }, .ep = 9 };
	unsigned char pl[2048], r[1000];
	struct xwi_engine_stats before, after;
	struct xw_request *rr, *sr;
	struct xw_pull_req pr;
	struct xw_hdr h;
	int bad = 0;

	net_init2(small_cfg(1), small_cfg(2));
	fill(pl, sizeof(pl), 8);
	before = stats(1);

#define BAD(hdr, plp, len, what)                                                       \
	do {                                                                           \
		struct xw_hdr h_ = (hdr);                                              \
		int rc_ = E_rx_from(1, &fake, &h_, (plp), (len));                      \
		CHECK(rc_ == -EPROTO, "%s: rx returned %d", what, rc_);                \
		bad++;                                                                 \
	} while (0)

	BAD(mkhdr(XW_PKT_SMALL, 9, 2, 0, 10, 0, 1, 0, 10, 0), pl, 5, "truncated payload");
	BAD(mkhdr(XW_PKT_SMALL, 9, 2, 0, 11, 0, 1, 0, 10, 0), pl, 10, "SMALL msg_len != plen");
	BAD(mkhdr(XW_PKT_SMALL, 9, 2, 0, 10, 0, 2, 0, 10, 0), pl, 10, "SMALL frag_count 2");
	BAD(mkhdr(XW_PKT_SMALL, 9, 2, 0, 100, 0, 1, 0, 100, 0), pl, 100, "SMALL > P");
	BAD(mkhdr(XW_PKT_MEDIUM, 9, 2, 0, 300, 5, 5, 320, 0, 0), pl, 0, "frag_idx == count");
	BAD(mkhdr(XW_PKT_MEDIUM, 9, 2, 0, 300, 9, 5, 0, 64, 0), pl, 64, "frag_idx > count");
	BAD(mkhdr(XW_PKT_MEDIUM, 9, 2, 0, 300, 0, 0, 0, 64, 0), pl, 64, "frag_count 0");
	BAD(mkhdr(XW_PKT_MEDIUM, 9, 2, 0, 300, 1, 5, 65, 64, 0), pl, 64, "frag_off lies");
	BAD(mkhdr(XW_PKT_MEDIUM, 9, 2, 0, 300, 4, 5, 256, 64, 0), pl, 64, "last fragment too long");
	BAD(mkhdr(XW_PKT_MEDIUM, 9, 2, 0, 300, 1, 5, 64, 63, 0), pl, 64, "fragment too short");
	BAD(mkhdr(XW_PKT_MEDIUM, 9, 2, 0, 300, 1, 6, 64, 64, 0), pl, 64, "count != msg_len / P");
	BAD(mkhdr(XW_PKT_MEDIUM, 9, 2, 0, 0xFFFFFFFF, 1, 0x4000000, 0xFFFFFFC0, 64, 0), pl, 64,
	    "offset wraps");
	BAD(mkhdr(XW_PKT_MEDIUM, 9, 3, 0, 300, 0, 5, 0, 64, 0), pl, 64, "wrong dst_ep");
	BAD(mkhdr(XW_PKT_MEDIUM, 8, 2, 0, 300, 0, 5, 0, 64, 0), pl, 64, "src_ep != address");
	BAD(mkhdr(XW_PKT_RNDV, 9, 2, 0, 5000, 79, 79, 0, 64, 0), pl, 64, "RNDV K > N");
	BAD(mkhdr(XW_PKT_RNDV, 9, 2, 0, 5000, 8, 79, 64, 64, 0), pl, 64, "RNDV frag_off");
	BAD(mkhdr(XW_PKT_RNDV, 9, 2, 0, 5000, 8, 79, 0, 32, 0), pl, 32, "RNDV short payload");
	BAD(mkhdr(XW_PKT_PULL_REPLY, 9, 2, 0, 5000, 79, 79, 79 * 64, 8, 0), pl, 8, "reply idx");
	BAD(mkhdr(XW_PKT_NOTIFY, 9, 2, 0, 5000, 1, 0, 0, 0, 0), pl, 0, "NOTIFY with frag_idx");
	BAD(mkhdr(XW_PKT_NOTIFY, 9, 2, 0, 5000, 0, 0, 0, 4, 0), pl, 4, "NOTIFY with payload");
	BAD(mkhdr(XW_PKT_ACK, 9, 2, 0, 0, 0, 1, 0, 0, 0), pl, 0, "ACK with frag_count");
	BAD(mkhdr(XW_PKT_INVALID, 9, 2, 0, 10, 0, 1, 0, 10, 0), pl, 10, "type 0");
	BAD(mkhdr(XW_PKT_TYPE_MAX, 9, 2, 0, 10, 0, 1, 0, 10, 0), pl, 10, "type 11");
	BAD(mkhdr(200, 9, 2, 0, 10, 0, 1, 0, 10, 0), pl, 10, "type 200");
	h = mkhdr(XW_PKT_SMALL, 9, 2, 0, 10, 0, 1, 0, 10, 0);
	h.version = XW_VERSION + 1;
	BAD(h, pl, 10, "next version");
	h.version = 1; /* the 56-byte header with 24 bits of data */
	BAD(h, pl, 10, "version 1");
	BAD(mkhdr(XW_PKT_SMALL, 9, 2, 1000000, 10, 0, 1, 0, 10, 0), pl, 10, "msg_id far ahead");
	pr.block_id = 0;
	pr.nfrags = htonl(5);
	BAD(mkhdr(XW_PKT_PULL, 9, 2, 0, 5000, 75, 79, 75 * 64, 8, 0), &pr, 8, "PULL past the end");
	pr.nfrags = 0;
	BAD(mkhdr(XW_PKT_PULL, 9, 2, 0, 5000, 7, 79, 7 * 64, 8, 0), &pr, 8, "PULL 0 fragments");
	pr.nfrags = htonl(1);
	BAD(mkhdr(XW_PKT_PULL, 9, 2, 0, 5000, 7, 79, 7 * 64, 4, 0), &pr, 8, "PULL short payload");
	BAD(mkhdr(XW_PKT_PULL, 9, 2, 0, 5000, 7, 79, 7 * 64 + 1, 8, 0), &pr, 8, "PULL frag_off");
	BAD(mkhdr(XW_PKT_PULL, 9, 2, 0, 5000, 80, 79, 0, 8, 0), &pr, 8, "PULL idx >= count");
	CHECK(xwi_engine_rx(nodes[1].e, &fake, &h, NULL, 10) == -EINVAL, "NULL payload");

	after = stats(1);
	CHECK(after.rx_bad == before.rx_bad + (unsigned)bad, "rx_bad %llu, want %d",
	      (unsigned long long)after.rx_bad, bad);
	after.rx_bad = before.rx_bad;
	CHECK(!memcmp(&before, &after, sizeof(before)), "stats changed by bad frames");
	CHECK(!xwi_engine_tx_pending(nodes[1].e), "bad frames made work");

	/* state-dependent: a message's fields change mid-way (fake peer) */
	REQUIRE(E_irecv(1, r, 1000, 0x5, ALL, &rr) == 0, "irecv");
	h = mkhdr(XW_PKT_MEDIUM, 9, 2, 0, 300, 0, 5, 0, 64, 0x5);
	CHECK(E_rx_from(1, &fake, &h, pl, 64) == 0, "fragment 0");
	before = stats(1);
	BAD(mkhdr(XW_PKT_MEDIUM, 9, 2, 0, 310, 1, 5, 64, 64, 0x5), pl + 64, 64, "msg_len changed");
	BAD(mkhdr(XW_PKT_MEDIUM, 9, 2, 0, 300, 1, 5, 64, 64, 0x6), pl + 64, 64, "match changed");
	BAD(mkhdr(XW_PKT_PULL_REPLY, 9, 2, 0, 300, 1, 5, 64, 64, 0x5), pl + 64, 64,
	    "class changed");
	BAD(mkhdr(XW_PKT_RNDV, 9, 2, 0, 300, 1, 5, 0, 64, 0x5), pl, 64, "RNDV for an eager id");
	after = stats(1);
	CHECK(after.rx_bad == before.rx_bad + 4, "state-dependent rx_bad");
	after.rx_bad = before.rx_bad;
	CHECK(!memcmp(&before, &after, sizeof(before)), "stats changed by bad frames");
	for (__u32 i = 1; i < 5; i++) {
		__u32 len = i == 4 ? 300 - 256 : 64;

		h = mkhdr(XW_PKT_MEDIUM, 9, 2, 0, 300, i, 5, i * 64, (__u16)len, 0x5);
		CHECK(E_rx_from(1, &fake, &h, pl + i * 64, len) == 0, "fragment %u", i);
	}
	CHECK(rr->state == XWI_REQ_DONE && rr->status.msg_len == 300 && verify(r, 300, 8) < 0 &&
	      xw_addr_equal(&rr->status.src, &fake), "message completed after bad frames");
	xwi_request_free(rr);
	/* trailing padding is fine */
	REQUIRE(E_irecv(1, r, 1000, 0x5, ALL, &rr) == 0, "irecv");
	h = mkhdr(XW_PKT_SMALL, 9, 2, 1, 10, 0, 1, 0, 10, 0x5);
	CHECK(E_rx_from(1, &fake, &h, pl, 60) == 0, "padded SMALL");
	CHECK(rr->state == XWI_REQ_DONE && rr->status.msg_len == 10 && verify(r, 10, 8) < 0,
	      "padded SMALL received");
	xwi_request_free(rr);
	/* frames of control types the engine does not use are ignored */
	h = mkhdr(XW_PKT_ACK, 9, 2, 0, 0, 0, 0, 0, 0, 0);
	CHECK(E_rx_from(1, &fake, &h, NULL, 0) == 0, "ACK ignored");
	/* NOTIFY / PULL for unknown messages are ignored */
	h = mkhdr(XW_PKT_NOTIFY, 9, 2, 1234, 5000, 0, 0, 0, 0, 0);
	CHECK(E_rx_from(1, &fake, &h, NULL, 0) == 0, "NOTIFY unknown");
	pr.nfrags = htonl(2);
	h = mkhdr(XW_PKT_PULL, 9, 2, 1234, 5000, 10, 79, 640, 8, 0);
	CHECK(E_rx_from(1, &fake, &h, &pr, 8) == 0, "PULL unknown");
	CHECK(!xwi_engine_tx_pending(nodes[1].e), "nothing to send");
	/* an unexpected RNDV (K = 9); a fragment never pushed nor asked for */
	h = mkhdr(XW_PKT_RNDV, 9, 2, 2, 5000, 8, 79, 0, 64, 0x77);
	CHECK(E_rx_from(1, &fake, &h, pl, 64) == 0, "RNDV");
	before = stats(1);
	h = mkhdr(XW_PKT_PULL_REPLY, 9, 2, 2, 5000, 20, 79, 20 * 64, 64, 0x77);
	CHECK(E_rx_from(1, &fake, &h, pl, 64) == 0, "unasked PULL_REPLY ignored");
	after = stats(1);
	after.rx_frames[XW_PKT_PULL_REPLY]--;
	CHECK(!memcmp(&before, &after, sizeof(before)), "unasked fragment changed state");
	h = mkhdr(XW_PKT_PULL_REPLY, 9, 2, 2, 5000, 3, 79, 3 * 64, 64, 0x77);
	CHECK(E_rx_from(1, &fake, &h, pl, 64) == 0, "pushed fragment");
	CHECK(stats(1).pushed_bytes == 576, "pushed bytes held %llu",
	      (unsigned long long)stats(1).pushed_bytes);

	/* PULL out of range / NOTIFY with a wrong length for a real send */
	{
		unsigned char *s = malloc(5000), rb[5000];

		fill(s, 5000, 9);
		REQUIRE(E_isend(0, 1, s, 5000, 0x9, &sr) == 0, "isend");
		pump();
		before = stats(0);
		pr.nfrags = htonl(1);
		{
			struct xw_hdr hh = mkhdr(XW_PKT_PULL, 2, 1, 0, 5001, 10, 79, 640, 8, 0x9);
			int rc = E_rx_from(0, &nodes[1].addr, &hh, &pr, 8);

			CHECK(rc == -EPROTO, "PULL msg_len differs: %d", rc);
			hh = mkhdr(XW_PKT_PULL, 2, 1, 0, 5000, 10, 79, 640, 8, 0x8);
			rc = E_rx_from(0, &nodes[1].addr, &hh, &pr, 8);
			CHECK(rc == -EPROTO, "PULL match differs: %d", rc);
			hh = mkhdr(XW_PKT_NOTIFY, 2, 1, 0, 4999, 0, 0, 0, 0, 0x9);
			rc = E_rx_from(0, &nodes[1].addr, &hh, NULL, 0);
			CHECK(rc == -EPROTO, "NOTIFY msg_len differs: %d", rc);
		}
		after = stats(0);
		CHECK(after.rx_bad == before.rx_bad + 3 && sr->state == XWI_REQ_PENDING &&
		      !xwi_engine_tx_pending(nodes[0].e), "send unaffected");
		REQUIRE(E_irecv(1, rb, 5000, 0x9, ALL, &rr) == 0, "irecv");
		pump();
		CHECK(sr->state == XWI_REQ_DONE && rr->state == XWI_REQ_DONE &&
		      verify(rb, 5000, 9) < 0, "large transfer after bad frames");
		xwi_request_free(sr);
		xwi_request_free(rr);
		free(s);
	}
#undef BAD
	/* a good transfer of each class still works */
	xfer(0, 1, 10, 10, true, 20);
	xfer(0, 1, 300, 300, false, 21);
	xfer(1, 0, 5000, 5000, false, 22);
	net_free();
}

/* Random mutations of real frames: no crash, no leak, -EPROTO or 0. */
static void test_fuzz(void)
{
	unsigned int rs = 12345;
	unsigned char *s = malloc(20000), r[20000];
	struct xw_request *sr, *rr;

	fill(s, 20000, 11);
	for (int round = 0; round < 40; round++) {
		net_init2(small_cfg(1), small_cfg(2));
		rx_expect_ok = false;
		marks_check = false;
		REQUIRE(E_irecv(1, r, round % 2 ? 20000 : 700, 0, 0, &rr) == 0, "irecv");
		REQUIRE(E_isend(0, 1, s, (size_t)(rs % 20000), 0, &sr) == 0, "isend");
		for (int it = 0; it < 20000 && (nodes[0].qn || nodes[1].qn ||
						 xwi_engine_tx_pending(nodes[0].e) ||
						 xwi_engine_tx_pending(nodes[1].e));
		     it++) {
			for (int i = 0; i < 2; i++) {
				while (nodes[i].qn) {
					struct qframe f = qpop(i);
					unsigned char *hb = (unsigned char *)&f.h;

					rs = rs * 1103515245 + 12345;
					if ((rs >> 16) % 4 == 0) {
						int pos = (int)((rs >> 8) % sizeof(f.h));

						rs = rs * 1103515245 + 12345;
						hb[pos] ^= (unsigned char)(1u << ((rs >> 16) % 8));
					}
					if ((rs >> 20) % 16 == 0 && f.len)
						f.len--;
					deliver(i, &f);
					free(f.pl);
				}
				E_progress(i, budget);
			}
		}
		if (rr->state == XWI_REQ_DONE)
			xwi_request_free(rr);
		if (sr->state == XWI_REQ_DONE)
			xwi_request_free(sr);
		/* pending ones are freed by xwi_engine_free */
		net_free();
		rs = rs * 1103515245 + 12345;
	}
	free(s);
}

/* ---- duplicates --------------------------------------------------------------------- */

static void test_duplicates(void)
{
	static const size_t sizes[] = { 0, 10, 64, 300, 257, 576, 577, 1000, 5000, 100000 };
	__u32 seed = 900;

	for (int tight = 0; tight < 2; tight++) {
		struct xwi_engine_stats st0, st1;

		net_init2(small_cfg(1), small_cfg(2));
		dup_mode = true;
		if (tight)
			nodes[0].cap = nodes[1].cap = 3;
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			for (int early = 0; early < 2; early++)
				for (int dir = 0; dir < 2; dir++)
					xfer(dir, !dir, sizes[i], sizes[i], early, seed++);
		/* truncated too */
		xfer(0, 1, 5000, 100, true, seed++);
		xfer(0, 1, 5000, 100, false, seed++);
		xfer(0, 1, 300, 100, false, seed++);
		st0 = stats(0);
		st1 = stats(1);
		CHECK(st0.rx_dup > 0 && st1.rx_dup > 0, "rx_dup %llu %llu",
		      (unsigned long long)st0.rx_dup, (unsigned long long)st1.rx_dup);
		CHECK(st0.sends_done + st1.sends_done == st0.recvs_done + st1.recvs_done &&
		      st0.sends_done + st1.sends_done == 4 * 10 + 3,
		      "completions: sends %llu recvs %llu",
		      (unsigned long long)(st0.sends_done + st1.sends_done),
		      (unsigned long long)(st0.recvs_done + st1.recvs_done));
		CHECK(st0.rx_frames[XW_PKT_NOTIFY] + st1.rx_frames[XW_PKT_NOTIFY] ==
		      2 * (st0.tx_frames[XW_PKT_NOTIFY] + st1.tx_frames[XW_PKT_NOTIFY]),
		      "NOTIFY delivered twice");
		expect_clean(0);
		expect_clean(1);
		net_free();
	}
}

/* ==== reliability: a lossy link with a controlled clock ==================== */

/*
 * Engines with cfg.reliable over the same per-node queues, but frames go
 * through an impairment stage (seeded: drop, duplicate, reorder, corrupt a
 * bit, blackhole) and time only moves when the network is idle (to the
 * next engine deadline) or by a small step per pass: timeouts are tested
 * fast and deterministically.  The seed is printed on failure.
 */
static __u64 rclock;
static __u64 rng_state;
static __u32 rseed;

static struct impair {
	__u32 drop_ppm, dup_ppm, reorder_ppm, corrupt_ppm;
	bool blackhole;
	/* bit k of drop_nth[s][type]: drop the k-th frame (from 0) of that
	 * type sent by node s (scripted losses) */
	__u32 drop_nth[2][XW_PKT_TYPE_MAX];
	__u32 sent_of[2][XW_PKT_TYPE_MAX];
	bool mute[2];	/* every frame node s sends is lost (one-way outage) */
	unsigned long dropped, duplicated, reordered, corrupted, blackholed;
} imp;

static __u64 rng(void)
{
	__u64 x = (rng_state += 0x9E3779B97F4A7C15ULL);

	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

static bool chance(__u32 ppm)
{
	return ppm && rng() % 1000000 < ppm;
}

static __u64 r_now(void *ctx)
{
	(void)ctx;
	return rclock;
}

static void r_random(void *ctx, void *buf, size_t len)
{
	(void)ctx;
	for (size_t i = 0; i < len; i++)
		((unsigned char *)buf)[i] = (unsigned char)rng();
}

static void rq_push(int d, const struct xw_hdr *h, const void *pl, size_t len, int s)
{
	struct node *dn = &nodes[d];
	struct qframe *f;

	REQUIRE(dn->qn < RING, "node %d queue overflow", d);
	f = &dn->q[(dn->qhead + dn->qn) % RING];
	f->h = *h;
	f->len = len;
	f->src = s;
	f->pl = malloc(len ? len : 1);
	REQUIRE(f->pl, "malloc");
	if (len)
		memcpy(f->pl, pl, len);
	dn->qn++;
	if (dn->qn > 1 && chance(imp.reorder_ppm)) {
		/* swap with a random earlier frame */
		size_t k = (size_t)(rng() % (dn->qn - 1));
		struct qframe *g = &dn->q[(dn->qhead + k) % RING], t = *g;

		*g = *f;
		*f = t;
		imp.reordered++;
	}
}

static bool sink_unknown;		      /* frames to unknown addresses: counted */
static __u64 sink_frames[XW_PKT_TYPE_MAX]; /* ... per type                         */

static int r_send(void *ctx, const struct xw_addr *dst, const struct xw_hdr *h,
		  const void *payload, size_t len)
{
	struct node *sn = ctx;
	int s = sn->id, d = node_of(dst);

	if (d < 0 && sink_unknown) {
		/* an answer to a forged source address */
		sink_frames[h->type < XW_PKT_TYPE_MAX ? h->type : 0]++;
		return 0;
	}
	REQUIRE(d >= 0, "frame to an unknown address");
	CHECK(len == ntohs(h->payload_len), "len %zu payload_len %u", len, ntohs(h->payload_len));
	if (!nodes[d].e)
		return 0; /* a dead node */
	CHECK(!(h->flags & XW_F_LAT) || (h->type != XW_PKT_ACK && h->type != XW_PKT_CONNECT &&
					  h->type != XW_PKT_CONNECT_REPLY && h->type != XW_PKT_CLOSE),
	      "LAT on type %u", h->type);
	if (nodes[d].qn + 2 >= (size_t)nodes[d].cap)
		return -EAGAIN;
	if (nlog == logcap) {
		logcap = logcap ? logcap * 2 : 4096;
		flog = realloc(flog, logcap * sizeof(*flog));
		REQUIRE(flog, "realloc");
	}
	flog[nlog++] = (struct logent){ .src = s, .dst = d, .h = *h };
	if (s < 2 && imp.mute[s]) {
		imp.dropped++;
		return 0;
	}
	if (s < 2 && h->type < XW_PKT_TYPE_MAX) {
		__u32 k = imp.sent_of[s][h->type]++;

		if (k < 32 && (imp.drop_nth[s][h->type] >> k & 1)) {
			imp.dropped++;
			return 0;
		}
	}
	if (imp.blackhole) {
		imp.blackholed++;
		return 0;
	}
	if (chance(imp.drop_ppm)) {
		imp.dropped++;
		return 0;
	}
	if (chance(imp.corrupt_ppm)) {
		unsigned char buf[XW_HDR_LEN + 0x10000];
		size_t n = XW_HDR_LEN + len, bit;
		struct xw_hdr hc;

		memcpy(buf, h, XW_HDR_LEN);
		if (len)
			memcpy(buf + XW_HDR_LEN, payload, len);
		/* any bit but those of payload_len (a frame's length is the
		 * wire's, not a header field we could check it against) */
		do {
			bit = (size_t)(rng() % (n * 8));
		} while (bit / 8 == 40 || bit / 8 == 41);
		buf[bit / 8] ^= (unsigned char)(1u << (bit % 8));
		memcpy(&hc, buf, XW_HDR_LEN);
		rq_push(d, &hc, buf + XW_HDR_LEN, len, s);
		imp.corrupted++;
		return 0;
	}
	rq_push(d, h, payload, len, s);
	if (chance(imp.dup_ppm)) {
		rq_push(d, h, payload, len, s);
		imp.duplicated++;
	}
	return 0;
}

static const struct xwi_engine_ops r_ops = { .send = r_send, .now_ns = r_now,
					     .random = r_random };

static struct xwi_engine_cfg rel_cfg(__u16 ep)
{
	struct xwi_engine_cfg c;

	xwi_engine_cfg_default(&c, ep, 64);
	c.eager_max = 320;
	c.btp1 = 384;
	c.btp2 = 192;
	c.pull_block = 4;
	c.pull_inflight = 2;
	return c;
}

static void rnet_init(int n, const struct xwi_engine_cfg *cfgs, __u32 seed)
{
	memset(&imp, 0, sizeof(imp));
	rseed = seed;
	rng_state = seed * 0x2545F4914F6CDD1DULL + 1;
	rclock = 1000000000ULL;
	nlog = 0;
	nnodes = n;
	for (int i = 0; i < n; i++) {
		struct node *nd = &nodes[i];

		nd->id = i;
		nd->cfg = cfgs[i];
		memset(&nd->addr, 0, sizeof(nd->addr));
		nd->addr.encap = XW_ENCAP_ETH;
		nd->addr.mac[0] = 0x02;
		nd->addr.mac[5] = (__u8)(0x10 + i);
		nd->addr.ep = cfgs[i].ep;
		nd->qhead = nd->qn = 0;
		nd->cap = 4096;
		nd->e = xwi_engine_new(&nd->cfg, &r_ops, nd);
		REQUIRE(nd->e, "xwi_engine_new: %s", strerror(errno));
	}
}

static void rnet_init2(struct xwi_engine_cfg a, struct xwi_engine_cfg b, __u32 seed)
{
	struct xwi_engine_cfg c[2] = { a, b };

	rnet_init(2, c, seed);
}

/* Replace node @i's engine by a new incarnation (same address). */
static void rnode_restart(int i)
{
	drop_queue(i);
	xwi_engine_free(nodes[i].e);
	nodes[i].e = xwi_engine_new(&nodes[i].cfg, &r_ops, &nodes[i]);
	REQUIRE(nodes[i].e, "xwi_engine_new");
}

static void rnet_free(void)
{
	for (int i = 0; i < nnodes; i++) {
		drop_queue(i);
		xwi_engine_free(nodes[i].e);
		nodes[i].e = NULL;
	}
	nnodes = 0;
}

static int rx_rc_bad; /* rx returned something else than 0, -EBADMSG */

/* Deliver what node @i's queue holds now (nothing else moves); any? */
static bool rdeliver(int i)
{
	size_t n = nodes[i].qn;

	for (size_t k = 0; k < n; k++) {
		struct qframe f = qpop(i);
		int rc = xwi_engine_rx(nodes[i].e, &nodes[f.src].addr, &f.h, f.pl, f.len);

		if (rc && rc != -EBADMSG)
			rx_rc_bad++;
		free(f.pl);
	}
	return n > 0;
}

/* One pass: deliver what is queued, progress every engine, 2 us pass. */
static bool rpass(void)
{
	bool moved = false;

	for (int i = 0; i < nnodes; i++) {
		if (!nodes[i].e)
			continue;
		if (rdeliver(i))
			moved = true;
		if (xwi_engine_progress(nodes[i].e, 64) > 0)
			moved = true;
		bounds_check(i);
	}
	rclock += 2000;
	return moved;
}

/* Pump until @done(@arg) (NULL: until idle) or @limit ns of virtual time. */
static bool rpump(bool (*done)(void *), void *arg, __u64 limit)
{
	__u64 end = rclock + limit;

	while (rclock < end) {
		bool busy = rpass();

		for (int i = 0; i < nnodes; i++)
			busy |= nodes[i].e && (nodes[i].qn || xwi_engine_tx_pending(nodes[i].e));
		if (done && done(arg))
			return true;
		if (!busy) {
			__u64 d = UINT64_MAX;

			for (int i = 0; i < nnodes; i++) {
				__u64 x = nodes[i].e ? xwi_engine_next_deadline(nodes[i].e) : UINT64_MAX;

				d = x < d ? x : d;
			}
			if (d == UINT64_MAX)
				return !done;
			if (d > rclock)
				rclock = d < end ? d : end;
		}
	}
	return false;
}

static void rsettle(void)
{
	CHECK(rpump(NULL, NULL, 60ULL * 1000000000ULL), "seed %u: the network did not settle",
	      rseed);
}

/* A batch of messages between nodes, verified byte for byte. */
struct rmsgt {
	int a, b;
	size_t len;
	__u32 seed;
	unsigned char *sb, *rb;
	struct xw_request *sr, *rr;
};

static bool all_done(void *arg)
{
	struct rmsgt **v = arg;

	for (struct rmsgt *m = v[0]; m < v[1]; m++)
		if (!m->sr || m->sr->state != XWI_REQ_DONE || !m->rr ||
		    m->rr->state != XWI_REQ_DONE)
			return false;
	return true;
}

static void rbatch_post(struct rmsgt *m, size_t n, bool late)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			struct rmsgt *x = &m[i];
			__u64 tag = 0x7700000000ULL + x->seed;

			if (pass == 0) {
				x->sb = malloc(x->len ? x->len : 1);
				x->rb = malloc(x->len + GUARD);
				REQUIRE(x->sb && x->rb, "malloc");
				fill(x->sb, x->len, x->seed);
				memset(x->rb, 0, x->len);
				memset(x->rb + x->len, 0xA5, GUARD);
			}
			if (pass == (late ? 1 : 0))
				REQUIRE(xwi_engine_irecv(nodes[x->b].e, x->len ? x->rb : NULL, x->len,
							 tag, ALL, &x->rr) == 0, "irecv");
			if (pass == (late ? 0 : 1)) {
				int rc;

				while ((rc = xwi_engine_isend(nodes[x->a].e, &nodes[x->b].addr,
							      x->len ? x->sb : NULL, x->len, tag,
							      &x->sr)) == -EAGAIN)
					rpass();
				REQUIRE(rc == 0, "isend: %d", rc);
			}
		}
		if (late && pass == 0)
			for (int k = 0; k < 50; k++)
				rpass();
	}
}

/* Check every message of @m delivered intact (or completed with @err). */
static void rbatch_check(struct rmsgt *m, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		struct rmsgt *x = &m[i];
		long bad;

		CHECK(x->sr->state == XWI_REQ_DONE && x->rr->state == XWI_REQ_DONE,
		      "seed %u %s: msg %zu (%zu bytes %d->%d) not done: send %d recv %d", rseed, what,
		      i, x->len, x->a, x->b, x->sr->state, x->rr->state);
		if (x->rr->state == XWI_REQ_DONE) {
			CHECK(x->rr->status.error == 0 && x->rr->status.len == x->len,
			      "seed %u %s: msg %zu recv err %d len %zu", rseed, what, i,
			      x->rr->status.error, x->rr->status.len);
			bad = verify(x->rb, x->len, x->seed);
			CHECK(bad < 0, "seed %u %s: msg %zu (%zu bytes): byte %ld wrong", rseed, what, i,
			      x->len, bad);
			CHECK(guard_ok(x->rb + x->len), "seed %u %s: written past the buffer", rseed,
			      what);
		}
		if (x->sr->state == XWI_REQ_DONE)
			CHECK(x->sr->status.error == 0, "seed %u %s: msg %zu send err %d", rseed, what,
			      i, x->sr->status.error);
	}
}

static void rbatch_free(struct rmsgt *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (m[i].sr && m[i].sr->state == XWI_REQ_DONE)
			xwi_request_free(m[i].sr);
		if (m[i].rr && m[i].rr->state == XWI_REQ_DONE)
			xwi_request_free(m[i].rr);
		free(m[i].sb);
		free(m[i].rb);
	}
}

static const size_t rsizes[] = { 0, 1, 63, 64, 65, 200, 320, 321, 576, 577, 1000, 5000, 20000 };
#define NRSIZES (sizeof(rsizes) / sizeof(rsizes[0]))

/* @n messages of mixed sizes both ways (+ one of @big bytes each way). */
static bool rmix(size_t n, size_t big, bool late, __u32 seed, const char *what, __u64 limit)
{
	struct rmsgt *m = calloc(n + 2, sizeof(*m));
	struct rmsgt *v[2];
	size_t k = 0;
	bool ok;

	REQUIRE(m, "calloc");
	for (size_t i = 0; i < n; i++, k++)
		m[k] = (struct rmsgt){ .a = (int)(i % 2), .b = (int)!(i % 2),
				       .len = rsizes[(i * 7 + seed) % NRSIZES], .seed = seed + (__u32)i };
	if (big) {
		m[k++] = (struct rmsgt){ .a = 0, .b = 1, .len = big, .seed = seed + 100000 };
		m[k++] = (struct rmsgt){ .a = 1, .b = 0, .len = big + 17, .seed = seed + 100001 };
	}
	rbatch_post(m, k, late);
	v[0] = m;
	v[1] = m + k;
	ok = rpump(all_done, v, limit);
	CHECK(ok, "seed %u %s: not complete after %llu ms of virtual time", rseed, what,
	      (unsigned long long)(limit / 1000000));
	rbatch_check(m, k, what);
	rbatch_free(m, k);
	free(m);
	return ok;
}

static struct xwi_engine_stats rst(int i)
{
	return stats(i);
}

static __u64 rtx_total(const struct xwi_engine_stats *s)
{
	__u64 n = 0;

	for (int t = 0; t < XW_PKT_TYPE_MAX; t++)
		n += s->rtx_frames[t];
	return n;
}

/* ---- CRC32C ----------------------------------------------------------------- */

static void test_crc32c(void)
{
	static const unsigned char zeros[32], ones[32] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	unsigned char inc[32], big[4099];

	for (int i = 0; i < 32; i++)
		inc[i] = (unsigned char)i;
	fill(big, sizeof(big), 5);
	/* RFC 3720 (iSCSI) B.4 test vectors, and the classic check value */
	CHECK(xwi_crc32c(0, "123456789", 9) == 0xE3069283, "crc32c check value");
	CHECK(xwi_crc32c(0, zeros, 32) == 0x8A9136AA, "crc32c 32 zeros");
	CHECK(xwi_crc32c(0, ones, 32) == 0x62A8AB43, "crc32c 32 ones");
	CHECK(xwi_crc32c(0, inc, 32) == 0x46DD794E, "crc32c 0..31");
	CHECK(xwi_crc32c_sw(0, "123456789", 9) == 0xE3069283, "crc32c table check value");
	CHECK(xwi_crc32c_sw(0, inc, 32) == 0x46DD794E, "crc32c table 0..31");
	for (size_t cut = 0; cut < sizeof(big); cut += 37)
		CHECK(xwi_crc32c(xwi_crc32c(0, big, cut), big + cut, sizeof(big) - cut) ==
			      xwi_crc32c_sw(0, big, sizeof(big)),
		      "crc32c incremental at %zu", cut);
	CHECK(xwi_crc32c(0, NULL, 0) == 0, "crc32c of nothing");
}

/* ---- reliability scenarios ---------------------------------------------- */

static void rel_expect_one_session(const char *what)
{
	for (int i = 0; i < 2; i++) {
		struct xwi_engine_stats s = rst(i);

		CHECK(s.sessions == 1 && s.peer_restarts == 0 && s.timeouts == 0,
		      "seed %u %s: node %d sessions %llu restarts %llu timeouts %llu", rseed, what, i,
		      (unsigned long long)s.sessions, (unsigned long long)s.peer_restarts,
		      (unsigned long long)s.timeouts);
		CHECK(s.rx_bad == 0 && s.bad_acks == 0, "seed %u %s: node %d rx_bad %llu bad_acks %llu",
		      rseed, what, i, (unsigned long long)s.rx_bad, (unsigned long long)s.bad_acks);
		CHECK(s.unexpected_bytes == 0 && s.pushed_bytes == 0 &&
		      !xwi_engine_has_unexpected(nodes[i].e),
		      "seed %u %s: node %d holds unexpected data", rseed, what, i);
	}
	CHECK(rx_rc_bad == 0, "seed %u %s: %d frames rejected by rx", rseed, what, rx_rc_bad);
}

static void test_rel_clean(void)
{
	struct xwi_engine_stats a, b;

	rnet_init2(rel_cfg(1), rel_cfg(2), 1);
	rx_rc_bad = 0;
	rmix(60, 3000, false, 10, "clean", 10ULL * 1000000000ULL);
	rmix(60, 3000, true, 20, "clean late", 10ULL * 1000000000ULL);
	rsettle();
	rel_expect_one_session("clean");
	a = rst(0);
	b = rst(1);
	CHECK(rtx_total(&a) + rtx_total(&b) == 0, "clean link: %llu retransmissions",
	      (unsigned long long)(rtx_total(&a) + rtx_total(&b)));
	CHECK(a.crc_failures + b.crc_failures + a.session_rejects + b.session_rejects +
		      a.no_session + b.no_session == 0, "clean link: crc/session drops");
	CHECK(a.tx_frames[XW_PKT_CONNECT] == 1 && b.tx_frames[XW_PKT_CONNECT] == 1,
	      "simultaneous open: CONNECTs %llu %llu", (unsigned long long)a.tx_frames[XW_PKT_CONNECT],
	      (unsigned long long)b.tx_frames[XW_PKT_CONNECT]);
	/* every frame on the wire: session, seq, csum set; LAT never on ACK */
	for (size_t i = 0; i < nlog; i++)
		if (!flog[i].h.session || !flog[i].h.csum) {
			CHECK(0, "frame %zu type %u without session or csum", i, flog[i].h.type);
			break;
		}
	printf("reliability: clean link, 2 x 62 messages (simultaneous open, one CONNECT each way), "
	       "%llu + %llu ACK frames\n", (unsigned long long)a.tx_frames[XW_PKT_ACK],
	       (unsigned long long)b.tx_frames[XW_PKT_ACK]);
	rnet_free();
}

static void test_rel_soak(void)
{
	__u64 rtx = 0, drops = 0;

	for (__u32 seed = 100; seed < 104; seed++) {
		struct xwi_engine_stats a, b;

		rnet_init2(rel_cfg(1), rel_cfg(2), seed);
		rx_rc_bad = 0;
		imp.drop_ppm = 20000;
		rmix(200, 20000, false, seed * 1000, "2% loss", 60ULL * 1000000000ULL);
		rmix(100, 5000, true, seed * 1000 + 500, "2% loss late", 60ULL * 1000000000ULL);
		rsettle();
		rel_expect_one_session("2% loss");
		a = rst(0);
		b = rst(1);
		CHECK(rtx_total(&a) + rtx_total(&b) >= imp.dropped / 2,
		      "seed %u: %lu dropped, %llu retransmitted", rseed, imp.dropped,
		      (unsigned long long)(rtx_total(&a) + rtx_total(&b)));
		rtx += rtx_total(&a) + rtx_total(&b);
		drops += imp.dropped;
		rnet_free();
	}
	printf("reliability: 2%% loss soak, 4 seeds x 304 messages (0 B .. 20 KB): %llu frames "
	       "dropped, %llu retransmitted, all verified\n", (unsigned long long)drops,
	       (unsigned long long)rtx);
}

static bool both_sessions(void *arg)
{
	(void)arg;
	return rst(0).sessions && rst(1).sessions;
}

static void test_rel_setup_loss(void)
{
	unsigned long dropped = 0;

	for (__u32 seed = 200; seed < 230; seed++) {
		struct rmsgt m[6] = {
			{ .a = 0, .b = 1, .len = 10, .seed = 1 }, { .a = 1, .b = 0, .len = 300, .seed = 2 },
			{ .a = 0, .b = 1, .len = 3000, .seed = 3 }, { .a = 1, .b = 0, .len = 0, .seed = 4 },
			{ .a = 0, .b = 1, .len = 64, .seed = 5 }, { .a = 1, .b = 0, .len = 2000, .seed = 6 },
		};
		struct rmsgt *v[2] = { m, m + 6 };

		rnet_init2(rel_cfg(1), rel_cfg(2), seed);
		rx_rc_bad = 0;
		imp.drop_ppm = 300000;
		rbatch_post(m, 6, seed % 2);
		CHECK(rpump(both_sessions, NULL, 30ULL * 1000000000ULL),
		      "seed %u: no sessions after 30 s at 30%% loss", seed);
		dropped += imp.dropped;
		imp.drop_ppm = 0;
		CHECK(rpump(all_done, v, 30ULL * 1000000000ULL), "seed %u: transfers", seed);
		rbatch_check(m, 6, "30% loss during set-up");
		rbatch_free(m, 6);
		rsettle();
		rel_expect_one_session("30% loss during set-up");
		rnet_free();
	}
	printf("reliability: 30%% loss during connection set-up, 30 seeds: %lu frames dropped, one "
	       "session each way every time\n", dropped);
}

/*
 * Crossing handshakes, scripted: A's first CONNECT is lost, its SMALL
 * reaches B, which introduces itself with a CONNECT of its own (sent once:
 * an introduction is never retried); A takes B's session, and A's answer is
 * lost too.  A must keep retrying its own CONNECT until B shows that it
 * knows A's session: the message arrives, one session each, no reset.
 * With A's CONNECTs lost for longer than B keeps its introduction (4
 * rto_max), B forgets it and later introduces itself again with a new
 * session: A replaces B's empty session by the new one - still no reset, no
 * lost or repeated message.  Then the other way, with 30% random loss
 * while a one-way conversation starts (B only receives at first), many
 * seeds.
 */
static void test_rel_crossing(void)
{
	static const __u32 connect_lost[] = { 0x1, 0x7f, 0x3ff };
	unsigned long dropped = 0;

	for (size_t v = 0; v < sizeof(connect_lost) / sizeof(connect_lost[0]); v++) {
		unsigned char sb[40], rb[40], sb2[40], rb2[40];
		struct xw_request *sr, *rr, *sr2, *rr2;
		struct xwi_engine_stats a, b;

		rnet_init2(rel_cfg(1), rel_cfg(2), 300 + (__u32)v);
		rx_rc_bad = 0;
		imp.drop_nth[0][XW_PKT_CONNECT] = connect_lost[v];
		imp.drop_nth[0][XW_PKT_CONNECT_REPLY] = 0x1;
		fill(sb, sizeof(sb), 41);
		fill(sb2, sizeof(sb2), 42);
		REQUIRE(xwi_engine_irecv(nodes[1].e, rb, sizeof(rb), 9, ALL, &rr) == 0, "irecv");
		REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, sb, sizeof(sb), 9, &sr) == 0,
			"isend");
		rpump(NULL, NULL, 10ULL * 1000000000ULL);
		a = rst(0);
		b = rst(1);
		CHECK(rr->state == XWI_REQ_DONE && rr->status.error == 0 &&
			      !memcmp(rb, sb, sizeof(sb)),
		      "crossing %zu: receive %d/%d", v, rr->state, rr->status.error);
		CHECK(a.sessions == 1 && b.sessions == 1 && !a.peer_restarts && !b.peer_restarts &&
			      !a.timeouts && !b.timeouts,
		      "crossing %zu: sessions %llu/%llu restarts %llu/%llu timeouts %llu/%llu", v,
		      (unsigned long long)a.sessions, (unsigned long long)b.sessions,
		      (unsigned long long)a.peer_restarts, (unsigned long long)b.peer_restarts,
		      (unsigned long long)a.timeouts, (unsigned long long)b.timeouts);
		CHECK(v == 0 ? a.sessions_replaced == 0 : a.sessions_replaced == 1,
		      "crossing %zu: %llu sessions replaced", v,
		      (unsigned long long)a.sessions_replaced);
		/* and back: B's first message to A */
		REQUIRE(xwi_engine_irecv(nodes[0].e, rb2, sizeof(rb2), 10, ALL, &rr2) == 0, "irecv");
		REQUIRE(xwi_engine_isend(nodes[1].e, &nodes[0].addr, sb2, sizeof(sb2), 10, &sr2) == 0,
			"isend");
		rpump(NULL, NULL, 1ULL * 1000000000ULL);
		CHECK(rr2->state == XWI_REQ_DONE && rr2->status.error == 0 &&
			      !memcmp(rb2, sb2, sizeof(sb2)) && rst(0).recvs_done == 1,
		      "crossing %zu: the answer: receive %d/%d", v, rr2->state, rr2->status.error);
		CHECK(rst(0).sessions == 1 && rst(1).sessions == 1 && !rst(0).peer_restarts &&
			      !rst(1).peer_restarts,
		      "crossing %zu: a second session after the answer", v);
		xwi_request_free(sr);
		xwi_request_free(rr);
		xwi_request_free(sr2);
		xwi_request_free(rr2);
		rsettle();
		rnet_free();
	}
	for (__u32 seed = 400; seed < 500; seed++) {
		struct rmsgt m[2] = { { .a = 0, .b = 1, .len = 10, .seed = 1 },
				      { .a = 1, .b = 0, .len = 0, .seed = 2 } };
		struct rmsgt *v1[2] = { m, m + 1 }, *v2[2] = { m + 1, m + 2 };

		rnet_init2(rel_cfg(1), rel_cfg(2), seed);
		rx_rc_bad = 0;
		imp.drop_ppm = 300000;
		rbatch_post(m, 1, seed % 2);
		CHECK(rpump(all_done, v1, 30ULL * 1000000000ULL),
		      "seed %u: one-way start at 30%% loss: no delivery in 30 s", seed);
		rbatch_post(m + 1, 1, false);
		CHECK(rpump(all_done, v2, 30ULL * 1000000000ULL),
		      "seed %u: one-way start at 30%% loss: no answer in 30 s", seed);
		dropped += imp.dropped;
		imp.drop_ppm = 0;
		rbatch_check(m, 2, "one-way start, 30% loss");
		rbatch_free(m, 2);
		rsettle();
		for (int i = 0; i < 2; i++) {
			struct xwi_engine_stats s = rst(i);

			CHECK(s.sessions == 1 && s.peer_restarts == 0 && s.timeouts == 0,
			      "seed %u one-way start, 30%% loss: node %d sessions %llu restarts %llu "
			      "timeouts %llu", seed, i, (unsigned long long)s.sessions,
			      (unsigned long long)s.peer_restarts, (unsigned long long)s.timeouts);
		}
		rnet_free();
	}
	printf("reliability: crossing handshakes (A's CONNECT and reply lost while B introduces "
	       "itself; B forgetting its introduction): delivered, one session each, no reset; "
	       "one-way start at 30%% loss, 100 seeds: %lu frames dropped, one session each\n",
	       dropped);
}

/*
 * Exactly once across a give-up (the fuzzer's find): A's frames to B are
 * lost for longer than A's give-up (B's is 4 times longer) while B sends A
 * messages.  A takes them all, but B never hears A's acks.  A gives up
 * (its own sends fail); when the link heals and A talks again, B sees a
 * new session of the same endpoint: a reconnect, not a restart - it sends
 * its unacknowledged frames again, as they were, and A, which kept its
 * message stream state, ignores what it already has.  Every message of B
 * is received exactly once.  Then a MEDIUM message half received when the
 * connection resets: A keeps its half and the matched receive, B carries
 * the rest over, the receive completes intact.  Then a large message
 * whose receive fails with A's give-up: B starts it over under the same
 * id, A takes it again (it had dropped it), a new receive gets it.
 */
static void test_rel_reconnect(void)
{
	struct xwi_engine_cfg c = rel_cfg(1), d = rel_cfg(2);
	enum { N = 12 };
	unsigned char sb[N][200], rb[N + 1][200];
	struct xw_request *sr[N], *rr[N + 1], *ar, *x;
	struct xwi_engine_stats a, b;
	int got = 0;

	c.give_up_ns = 1000000000ULL;
	d.give_up_ns = 4000000000ULL;
	rnet_init2(c, d, 950);
	rx_rc_bad = 0;
	/* a session first */
	REQUIRE(xwi_engine_irecv(nodes[1].e, rb[N], 200, 99, ALL, &x) == 0, "irecv");
	REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, sb[0], 10, 99, &ar) == 0, "isend");
	rpump(NULL, NULL, 100000000ULL);
	CHECK(x->state == XWI_REQ_DONE && !x->status.error, "reconnect: set-up message");
	xwi_request_free(x);
	xwi_request_free(ar);
	imp.mute[0] = true;
	REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, sb[0], 10, 98, &ar) == 0, "isend");
	for (int i = 0; i < N; i++) {
		fill(sb[i], 200, 500 + (__u32)i);
		REQUIRE(xwi_engine_irecv(nodes[0].e, rb[i], 200, 100 + (__u64)i, ALL, &rr[i]) == 0,
			"irecv");
		REQUIRE(xwi_engine_isend(nodes[1].e, &nodes[0].addr, sb[i], 200, 100 + (__u64)i,
					 &sr[i]) == 0, "isend");
	}
	rpump(NULL, NULL, 1500000000ULL); /* past A's give-up, not B's */
	a = rst(0);
	b = rst(1);
	for (int i = 0; i < N; i++)
		got += rr[i]->state == XWI_REQ_DONE && !rr[i]->status.error &&
		       !memcmp(rb[i], sb[i], 200);
	CHECK(got == N && a.timeouts == 1 && b.timeouts == 0,
	      "reconnect: before the heal: %d of %d received, timeouts %llu/%llu", got, N,
	      (unsigned long long)a.timeouts, (unsigned long long)b.timeouts);
	CHECK(ar->state == XWI_REQ_DONE, "reconnect: A's send not done at its give-up");
	/* heal; A talks again: B's unacknowledged messages come again */
	imp.mute[0] = false;
	for (int i = 0; i < N; i++)
		xwi_request_free(rr[i]);
	xwi_request_free(ar);
	REQUIRE(xwi_engine_irecv(nodes[0].e, rb[0], 200, 0, 0, &x) == 0, "irecv any");
	REQUIRE(xwi_engine_irecv(nodes[1].e, rb[N], 200, 97, ALL, &rr[N]) == 0, "irecv");
	REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, sb[1], 20, 97, &ar) == 0, "isend");
	rpump(NULL, NULL, 2000000000ULL);
	a = rst(0);
	b = rst(1);
	CHECK(x->state == XWI_REQ_PENDING, "reconnect: a message of B delivered twice (match %#llx)",
	      (unsigned long long)x->status.match);
	CHECK(rr[N]->state == XWI_REQ_DONE && !rr[N]->status.error,
	      "reconnect: A's message after the heal");
	CHECK(b.reconnects == 1 && b.peer_restarts == 0 && b.carried > 0 && a.rx_dup > 0,
	      "reconnect: B reconnects %llu restarts %llu carried %llu, A's old messages ignored "
	      "%llu", (unsigned long long)b.reconnects, (unsigned long long)b.peer_restarts,
	      (unsigned long long)b.carried, (unsigned long long)a.rx_dup);
	for (int i = 0; i < N; i++) {
		CHECK(sr[i]->state == XWI_REQ_DONE && !sr[i]->status.error, "reconnect: B's send %d", i);
		xwi_request_free(sr[i]);
	}
	CHECK(xwi_engine_cancel(nodes[0].e, x) == 0, "cancel");
	xwi_request_free(x);
	xwi_request_free(ar);
	xwi_request_free(rr[N]);
	rsettle();
	a = rst(0);
	b = rst(1);
	CHECK(!a.unexpected_bytes && !b.unexpected_bytes && !xwi_engine_has_unexpected(nodes[0].e),
	      "reconnect: unexpected data left");
	rnet_free();

	/* a MEDIUM message half in when the connection resets */
	{
		enum { L = 300 }; /* 5 fragments of 64 */
		unsigned char mb[L], mr[L];
		struct xw_request *ms, *mrq, *y, *ys;

		c = rel_cfg(1);
		d = rel_cfg(2);
		c.give_up_ns = 1000000000ULL;
		d.give_up_ns = 4000000000ULL;
		rnet_init2(c, d, 951);
		rx_rc_bad = 0;
		fill(mb, L, 77);
		REQUIRE(xwi_engine_irecv(nodes[1].e, rb[0], 200, 99, ALL, &y) == 0, "irecv");
		REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, sb[0], 10, 99, &ys) == 0, "isend");
		rpump(NULL, NULL, 100000000ULL);
		xwi_request_free(y);
		xwi_request_free(ys);
		REQUIRE(xwi_engine_irecv(nodes[0].e, mr, L, 5, ALL, &mrq) == 0, "irecv");
		imp.drop_nth[1][XW_PKT_MEDIUM] = 0xFFFFFFF8u; /* fragments 0-2 pass */
		imp.sent_of[1][XW_PKT_MEDIUM] = 0;
		imp.mute[0] = true; /* and A's acks are lost */
		REQUIRE(xwi_engine_isend(nodes[1].e, &nodes[0].addr, mb, L, 5, &ms) == 0, "isend");
		REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, sb[0], 10, 98, &ys) == 0, "isend");
		rpump(NULL, NULL, 1500000000ULL);
		CHECK(rst(0).timeouts == 1 && mrq->state == XWI_REQ_DONE &&
			      mrq->status.error == -ETIMEDOUT,
		      "reconnect: A's give-up did not fail its half-received receive (%d/%d)",
		      mrq->state, mrq->status.error);
		xwi_request_free(mrq);
		imp.mute[0] = false;
		imp.drop_nth[1][XW_PKT_MEDIUM] = 0;
		REQUIRE(xwi_engine_irecv(nodes[0].e, mr, L, 5, ALL, &mrq) == 0, "irecv");
		xwi_request_free(ys);
		REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, sb[0], 10, 97, &ys) == 0, "isend");
		rpump(NULL, NULL, 3000000000ULL);
		/* the half A had taken went with its failed receive: the rest,
		 * carried over, is ignored (not a second, broken message) */
		CHECK(mrq->state == XWI_REQ_PENDING && rst(1).reconnects == 1 &&
			      ms->state == XWI_REQ_DONE && !ms->status.error,
		      "reconnect: medium after a failed receive: receive %d/%d, reconnects %llu",
		      mrq->state, mrq->status.error, (unsigned long long)rst(1).reconnects);
		xwi_engine_cancel(nodes[0].e, mrq);
		xwi_request_free(mrq);
		xwi_request_free(ms);
		xwi_request_free(ys);
		rsettle();
		rnet_free();

		/* the same, the receive not posted yet: A keeps the half, the
		 * carried rest completes it */
		rnet_init2(c, d, 952);
		rx_rc_bad = 0;
		REQUIRE(xwi_engine_irecv(nodes[1].e, rb[0], 200, 99, ALL, &y) == 0, "irecv");
		REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, sb[0], 10, 99, &ys) == 0, "isend");
		rpump(NULL, NULL, 100000000ULL);
		xwi_request_free(y);
		xwi_request_free(ys);
		imp.drop_nth[1][XW_PKT_MEDIUM] = 0xFFFFFFF8u;
		imp.sent_of[1][XW_PKT_MEDIUM] = 0;
		imp.mute[0] = true;
		REQUIRE(xwi_engine_isend(nodes[1].e, &nodes[0].addr, mb, L, 5, &ms) == 0, "isend");
		REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, sb[0], 10, 98, &ys) == 0, "isend");
		rpump(NULL, NULL, 1500000000ULL);
		CHECK(rst(0).timeouts == 1, "reconnect: A did not give up");
		imp.mute[0] = false;
		imp.drop_nth[1][XW_PKT_MEDIUM] = 0;
		xwi_request_free(ys);
		REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, sb[0], 10, 97, &ys) == 0, "isend");
		rpump(NULL, NULL, 3000000000ULL);
		memset(mr, 0, L);
		REQUIRE(xwi_engine_irecv(nodes[0].e, mr, L, 5, ALL, &mrq) == 0, "irecv");
		CHECK(mrq->state == XWI_REQ_DONE && !mrq->status.error && !memcmp(mr, mb, L) &&
			      rst(1).carried >= 2,
		      "reconnect: half-received medium, no receive posted: %d/%d, intact %d, "
		      "carried %llu", mrq->state, mrq->status.error, !memcmp(mr, mb, L),
		      (unsigned long long)rst(1).carried);
		xwi_request_free(mrq);
		xwi_request_free(ms);
		xwi_request_free(ys);
		rsettle();
		CHECK(!rst(0).unexpected_bytes, "reconnect: unexpected bytes left");
		rnet_free();
	}
	printf("reliability: exactly once across a give-up of one side: %d messages of the other "
	       "side, taken but never acknowledged, carried over the reconnect and not taken "
	       "twice; a half-received MEDIUM message completed by the carried rest (or dropped "
	       "with its failed receive)\n", N);
}

/*
 * Selective acks under sustained 30% loss: the same transfers (a 20 KB
 * message each way and small ones, several seeds) with and without SACK, in
 * virtual time.  With it, every hole three held frames below is resent at
 * once; without, one per round trip and otherwise on timeouts.  Reported,
 * and checked as a functional property: with SACK holes are resent
 * (sack_rtx > 0) and fewer retransmission timeouts fire; and scripted:
 * three holes in one message are each resent exactly once, no timeout.
 */
static void test_rel_sack(void)
{
	__u64 t_on = 0, t_off = 0, to_on = 0, to_off = 0, rtx_on = 0, rtx_off = 0, holes = 0;

	for (int sack = 0; sack < 2; sack++) {
		for (__u32 seed = 700; seed < 708; seed++) {
			struct xwi_engine_cfg c = rel_cfg(1), d = rel_cfg(2);
			__u64 t0;

			c.sack = d.sack = sack;
			c.give_up_ns = d.give_up_ns = 60000000000ULL;
			rnet_init2(c, d, seed);
			rx_rc_bad = 0;
			imp.drop_ppm = 300000;
			t0 = rclock;
			rmix(10, 20000, false, seed, "30% loss, sack", 600ULL * 1000000000ULL);
			for (int i = 0; i < 2; i++) {
				struct xwi_engine_stats st = rst(i);

				*(sack ? &to_on : &to_off) += st.rtx_timeouts;
				*(sack ? &rtx_on : &rtx_off) += rtx_total(&st);
				holes += sack ? st.sack_rtx : 0;
				CHECK(sack || !st.sack_rtx, "sack off: %llu holes resent",
				      (unsigned long long)st.sack_rtx);
			}
			*(sack ? &t_on : &t_off) += rclock - t0;
			imp.drop_ppm = 0;
			rsettle();
			rnet_free();
		}
	}
	/* scripted: fragments 3, 7 and 11 of a 30-fragment message lost: each
	 * hole resent exactly once, all on selective acks, no timeout */
	{
		struct xwi_engine_cfg c = rel_cfg(1), d = rel_cfg(2);
		enum { L = 30 * 64 };
		unsigned char *mb = malloc(L), *mr = malloc(L);
		struct xw_request *sr, *rr;
		struct xwi_engine_stats a;

		REQUIRE(mb && mr, "malloc");
		c.eager_max = d.eager_max = L;
		rnet_init2(c, d, 720);
		rx_rc_bad = 0;
		fill(mb, L, 720);
		imp.drop_nth[0][XW_PKT_MEDIUM] = 1u << 3 | 1u << 7 | 1u << 11;
		REQUIRE(xwi_engine_irecv(nodes[1].e, mr, L, 3, ALL, &rr) == 0, "irecv");
		REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, mb, L, 3, &sr) == 0, "isend");
		CHECK(rpump(NULL, NULL, 10ULL * 1000000000ULL) && rr->state == XWI_REQ_DONE &&
			      !rr->status.error && !memcmp(mb, mr, L),
		      "sack: scripted holes: the message");
		a = rst(0);
		CHECK(a.sack_rtx == 3 && a.rtx_frames[XW_PKT_MEDIUM] == 3 && a.rtx_timeouts == 0,
		      "sack: 3 holes: %llu resent on sacks, %llu MEDIUM retransmissions, %llu "
		      "timeouts", (unsigned long long)a.sack_rtx,
		      (unsigned long long)a.rtx_frames[XW_PKT_MEDIUM],
		      (unsigned long long)a.rtx_timeouts);
		xwi_request_free(sr);
		xwi_request_free(rr);
		rsettle();
		rnet_free();
		free(mb);
		free(mr);
	}
	CHECK(holes > 0 && to_on < to_off, "sack: %llu holes resent, timeouts %llu with, %llu without",
	      (unsigned long long)holes, (unsigned long long)to_on, (unsigned long long)to_off);
	printf("reliability: 30%% sustained loss, 8 seeds, 20 KB each way + 10 small: with selective "
	       "acks %llu ms (%llu timeouts, %llu retransmissions), without %llu ms (%llu, %llu) of "
	       "virtual time\n", (unsigned long long)(t_on / 1000000), (unsigned long long)to_on,
	       (unsigned long long)rtx_on, (unsigned long long)(t_off / 1000000),
	       (unsigned long long)to_off, (unsigned long long)rtx_off);
}

static void test_rel_corrupt(void)
{
	unsigned long corrupted = 0;

	for (__u32 seed = 300; seed < 304; seed++) {
		struct xwi_engine_stats a, b;

		rnet_init2(rel_cfg(1), rel_cfg(2), seed);
		rx_rc_bad = 0;
		imp.corrupt_ppm = 20000;
		rmix(200, 20000, false, seed * 1000, "2% corruption", 60ULL * 1000000000ULL);
		rsettle();
		rel_expect_one_session("2% corruption");
		a = rst(0);
		b = rst(1);
		CHECK(a.crc_failures + b.crc_failures == imp.corrupted,
		      "seed %u: crc_failures %llu + %llu, %lu frames corrupted", rseed,
		      (unsigned long long)a.crc_failures, (unsigned long long)b.crc_failures,
		      imp.corrupted);
		CHECK(imp.corrupted > 0, "seed %u: nothing corrupted", rseed);
		corrupted += imp.corrupted;
		rnet_free();
	}
	printf("reliability: 2%% bit corruption, 4 seeds: %lu frames corrupted = CRC failures, "
	       "nothing corrupt delivered\n", corrupted);
}

static void test_rel_dup(void)
{
	for (__u32 seed = 400; seed < 404; seed++) {
		struct xwi_engine_stats a, b;

		rnet_init2(rel_cfg(1), rel_cfg(2), seed);
		rx_rc_bad = 0;
		imp.dup_ppm = 100000;
		rmix(200, 20000, seed % 2, seed * 1000, "10% duplication", 60ULL * 1000000000ULL);
		rsettle();
		rel_expect_one_session("10% duplication");
		a = rst(0);
		b = rst(1);
		CHECK(a.recvs_done == 101 && b.recvs_done == 101 && a.sends_done == 101 &&
		      b.sends_done == 101, "seed %u: completions %llu %llu %llu %llu", rseed,
		      (unsigned long long)a.recvs_done, (unsigned long long)b.recvs_done,
		      (unsigned long long)a.sends_done, (unsigned long long)b.sends_done);
		CHECK(a.rx_dup_frames + b.rx_dup_frames > 0, "seed %u: no duplicates seen", rseed);
		rnet_free();
	}
	printf("reliability: 10%% duplication (data, acks, pulls, handshakes): no duplicate "
	       "delivery, one session\n");
}

static void test_rel_reorder(void)
{
	for (__u32 seed = 500; seed < 504; seed++) {
		struct xwi_engine_stats a, b;

		rnet_init2(rel_cfg(1), rel_cfg(2), seed);
		rx_rc_bad = 0;
		imp.reorder_ppm = 100000;
		imp.drop_ppm = seed % 2 ? 10000 : 0;
		rmix(200, 20000, seed % 2, seed * 1000, "reordering", 60ULL * 1000000000ULL);
		rsettle();
		rel_expect_one_session("reordering");
		a = rst(0);
		b = rst(1);
		CHECK(a.rx_ooo + b.rx_ooo > 0, "seed %u: nothing held out of order", rseed);
		rnet_free();
	}
	printf("reliability: 10%% reordering (+1%% loss on odd seeds): released in order\n");
}

static bool one_done(void *arg)
{
	struct rmsgt *m = arg;

	return m->sr->state == XWI_REQ_DONE && m->rr->state == XWI_REQ_DONE;
}

static void test_rel_matrix(void)
{
	static const struct {
		__u8 type;
		int node; /* who emits it */
	} mx[] = {
		{ XW_PKT_SMALL, 0 },	  { XW_PKT_MEDIUM, 0 }, { XW_PKT_RNDV, 0 },
		{ XW_PKT_PULL, 1 },	  { XW_PKT_PULL_REPLY, 0 }, { XW_PKT_NOTIFY, 1 },
		{ XW_PKT_CONNECT, 0 },	  { XW_PKT_CONNECT_REPLY, 1 }, { XW_PKT_ACK, 1 },
	};

	for (size_t t = 0; t < sizeof(mx) / sizeof(mx[0]); t++) {
		struct xwi_engine_cfg c[2] = { rel_cfg(1), rel_cfg(2) };
		struct rmsgt m[3] = { { .a = 0, .b = 1, .len = 10, .seed = 1 },
				      { .a = 0, .b = 1, .len = 300, .seed = 2 },
				      { .a = 0, .b = 1, .len = 3000, .seed = 3 } };
		struct xwi_engine_stats a, b;
		__u8 ty = mx[t].type;

		c[mx[t].node].drop_first_type = ty;
		rnet_init(2, c, 600 + (__u32)t);
		rx_rc_bad = 0;
		for (int i = 0; i < 3; i++) {
			rbatch_post(&m[i], 1, false);
			CHECK(rpump(one_done, &m[i], 10ULL * 1000000000ULL),
			      "matrix %u: message %d not complete", ty, i);
			rsettle(); /* delayed ACKs go out (and may be dropped) */
		}
		rbatch_check(m, 3, "loss matrix");
		rbatch_free(m, 3);
		rsettle();
		rel_expect_one_session("loss matrix");
		a = rst(0);
		b = rst(1);
		CHECK(a.hook_drops + b.hook_drops == 1, "matrix %u: %llu frames dropped by the hook",
		      ty, (unsigned long long)(a.hook_drops + b.hook_drops));
		if (ty != XW_PKT_ACK)
			CHECK(a.rtx_frames[ty] + b.rtx_frames[ty] == 1,
			      "matrix %u: %llu retransmissions of the type, want 1", ty,
			      (unsigned long long)(a.rtx_frames[ty] + b.rtx_frames[ty]));
		rnet_free();
	}
	printf("reliability: loss matrix, first frame of each type dropped (SMALL .. ACK): each "
	       "run completes with exactly one retransmission of that type\n");
}

static void test_rel_wrap(void)
{
	for (__u32 k = 0; k < 4; k++) {
		struct xwi_engine_cfg a = rel_cfg(1), b = rel_cfg(2);

		a.isn_fixed = b.isn_fixed = true;
		/* the highest ISNs allowed (no wrap within the first window) */
		a.isn = 0xFFFFFFFEu - a.window - k * 50;
		b.isn = 0xFFFFFFFEu - b.window - k * 7;
		rnet_init2(a, b, 700 + k);
		rx_rc_bad = 0;
		imp.drop_ppm = k ? 20000 : 0;
		imp.reorder_ppm = k > 1 ? 50000 : 0;
		rmix(100, 20000, false, 7000 + k, "sequence wrap", 60ULL * 1000000000ULL);
		rsettle();
		rel_expect_one_session("sequence wrap");
		rnet_free();
	}
	printf("reliability: sequence numbers wrapping through 2^32 (ISN 2^32 - window - 2 ..), "
	       "with loss and reordering\n");
}

/* A frame from node @s to node @d built on the last one logged between them. */
static struct xw_hdr craft(int s, int d, __u8 type)
{
	struct xw_hdr h;
	bool found = false;

	for (size_t i = nlog; i-- > 0;)
		if (flog[i].src == s && flog[i].dst == d) {
			h = flog[i].h;
			found = true;
			break;
		}
	REQUIRE(found, "no frame %d -> %d logged", s, d);
	h.type = type;
	h.flags = 0;
	h.payload_len = 0;
	h.msg_id = h.msg_len = h.frag_off = h.frag_idx = h.frag_count = 0;
	h.match = 0;
	return h;
}

static void seal(struct xw_hdr *h, const void *pl, size_t len)
{
	h->csum = 0;
	h->csum = htonl(xwi_crc32c(xwi_crc32c(0, h, sizeof(*h)), pl, len));
}

static __u32 last_seq(int s, int d)
{
	for (size_t i = nlog; i-- > 0;)
		if (flog[i].src == s && flog[i].dst == d && flog[i].h.type <= XW_PKT_NOTIFY)
			return ntohl(flog[i].h.seq);
	REQUIRE(0, "no sequenced frame %d -> %d", s, d);
	return 0;
}

static void test_rel_forged(void)
{
	struct xw_request *rr;
	struct xw_hdr h;
	unsigned char buf[16];
	struct xwi_engine_stats a0, a1;

	rnet_init2(rel_cfg(1), rel_cfg(2), 800);
	rx_rc_bad = 0;
	rmix(10, 0, false, 800, "before forging", 10ULL * 1000000000ULL);
	rsettle();
	a0 = rst(0);
	/* an ack for a sequence never sent */
	h = craft(1, 0, XW_PKT_ACK);
	h.ack = htonl(last_seq(0, 1) + 1000);
	seal(&h, NULL, 0);
	CHECK(xwi_engine_rx(nodes[0].e, &nodes[1].addr, &h, NULL, 0) == 0, "rx bogus ack");
	a1 = rst(0);
	CHECK(a1.bad_acks == a0.bad_acks + 1, "ack beyond what was sent: bad_acks %llu -> %llu",
	      (unsigned long long)a0.bad_acks, (unsigned long long)a1.bad_acks);
	/* forged sessions: ACK and a SMALL the receive would match */
	REQUIRE(xwi_engine_irecv(nodes[0].e, buf, sizeof(buf), 0xF0F0, ALL, &rr) == 0, "irecv");
	h = craft(1, 0, XW_PKT_ACK);
	h.session ^= htonl(0x10000);
	seal(&h, NULL, 0);
	CHECK(xwi_engine_rx(nodes[0].e, &nodes[1].addr, &h, NULL, 0) == 0, "rx forged ack");
	h = craft(1, 0, XW_PKT_SMALL);
	h.session ^= htonl(0x1);
	h.seq = htonl(last_seq(1, 0) + 1);
	h.msg_len = htonl(4);
	h.frag_count = htonl(1);
	h.payload_len = htons(4);
	h.msg_id = htonl(5);
	h.match = htobe64(0xF0F0);
	seal(&h, "evil", 4);
	for (int i = 0; i < 100; i++)
		CHECK(xwi_engine_rx(nodes[0].e, &nodes[1].addr, &h, "evil", 4) == 0, "rx forged");
	rsettle();
	a1 = rst(0);
	CHECK(a1.session_rejects == a0.session_rejects + 101,
	      "forged sessions: session_rejects %llu -> %llu, want +101",
	      (unsigned long long)a0.session_rejects, (unsigned long long)a1.session_rejects);
	CHECK(rr->state == XWI_REQ_PENDING, "a forged-session frame was delivered");
	/* the connection still works, and the real message matches */
	rmix(10, 3000, false, 810, "after forging", 10ULL * 1000000000ULL);
	a1 = rst(0);
	CHECK(a1.sessions == 1 && rst(1).sessions == 1 && a1.bad_acks == 1 && a1.rx_bad == 0 &&
	      rx_rc_bad == 0, "forged frames: sessions %llu, bad_acks %llu, rx_bad %llu",
	      (unsigned long long)a1.sessions, (unsigned long long)a1.bad_acks,
	      (unsigned long long)a1.rx_bad);
	CHECK(xwi_engine_cancel(nodes[0].e, rr) == 0 && xwi_request_free(rr) == 0, "cancel");
	rnet_free();
	printf("reliability: an ack for a sequence never sent is ignored; 101 forged-session "
	       "frames dropped and counted, the connection unaffected\n");
}

/*
 * A flood of forged frames from made-up addresses (CONNECTs with random
 * sessions, SMALLs of sessions nobody has) at a victim with a small peer
 * table, while it exchanges messages with a real peer: the table stays
 * within peers_max, no forged frame is delivered or held, the victim
 * answers at most one frame per forged frame (no amplification), the real
 * connection goes on in its session, and after the flood a new real peer
 * gets in (idle peers are evicted).
 */
static void test_rel_flood(void)
{
	struct xwi_engine_cfg c[3] = { rel_cfg(1), rel_cfg(2), rel_cfg(3) };
	__u64 forged_connect = 0, forged_small = 0;
	struct xwi_engine_stats v, r;
	__u64 peers_max_seen = 0;

	c[0].peers_max = 16;
	rnet_init(3, c, 1400);
	rx_rc_bad = 0;
	memset(sink_frames, 0, sizeof(sink_frames));
	sink_unknown = true;
	rmix(20, 3000, false, 1400, "before the flood", 10ULL * 1000000000ULL);
	for (int round = 0; round < 40; round++) {
		for (int i = 0; i < 250; i++) {
			struct xw_addr src = { .encap = XW_ENCAP_ETH, .ep = (__u16)(rng() % 64) };
			struct xw_hdr h;
			__u32 x = (__u32)rng();

			memcpy(src.mac, (__u8[6]){ 0x02, 0xEE, (__u8)(x >> 24), (__u8)(x >> 16),
						     (__u8)(x >> 8), (__u8)x }, 6);
			h = craft(1, 0, i % 2 ? XW_PKT_SMALL : XW_PKT_CONNECT);
			h.src_ep = htons(src.ep);
			h.session = htonl((__u32)rng() | 1);
			h.seq = htonl((__u32)rng());
			h.ack = 0;
			if (h.type == XW_PKT_SMALL) {
				h.msg_len = htonl(4);
				h.frag_count = htonl(1);
				h.payload_len = htons(4);
				h.match = htobe64(0xF0F0);
				seal(&h, "evil", 4);
				forged_small++;
				CHECK(xwi_engine_rx(nodes[0].e, &src, &h, "evil", 4) == 0, "rx forged");
			} else {
				seal(&h, NULL, 0);
				forged_connect++;
				CHECK(xwi_engine_rx(nodes[0].e, &src, &h, NULL, 0) == 0, "rx forged");
			}
			if (rst(0).peers > peers_max_seen)
				peers_max_seen = rst(0).peers;
		}
		/* the real pair keeps talking during the flood */
		rmix(6, round % 8 ? 0 : 3000, false, 1500 + (__u32)round * 10, "during the flood",
		     10ULL * 1000000000ULL);
	}
	rsettle();
	v = rst(0);
	r = rst(1);
	CHECK(peers_max_seen <= 16 && v.peers <= 16, "peer table: %llu peers at most, %llu now "
	      "(peers_max 16)", (unsigned long long)peers_max_seen, (unsigned long long)v.peers);
	CHECK(v.peers_evicted > 0, "no idle peer was evicted");
	CHECK(v.unexpected_bytes == 0 && v.pushed_bytes == 0, "forged data held: %llu + %llu bytes",
	      (unsigned long long)v.unexpected_bytes, (unsigned long long)v.pushed_bytes);
	CHECK(sink_frames[XW_PKT_CONNECT_REPLY] <= forged_connect &&
		      sink_frames[XW_PKT_CONNECT] <= forged_small &&
		      sink_frames[XW_PKT_SMALL] + sink_frames[XW_PKT_MEDIUM] + sink_frames[XW_PKT_ACK] +
				      sink_frames[XW_PKT_RNDV] == 0,
	      "answers to forged addresses: %llu CONNECT_REPLY for %llu CONNECTs, %llu CONNECT for "
	      "%llu SMALLs, %llu other", (unsigned long long)sink_frames[XW_PKT_CONNECT_REPLY],
	      (unsigned long long)forged_connect, (unsigned long long)sink_frames[XW_PKT_CONNECT],
	      (unsigned long long)forged_small,
	      (unsigned long long)(sink_frames[XW_PKT_SMALL] + sink_frames[XW_PKT_ACK]));
	CHECK(r.sessions == 1 && r.peer_restarts == 0 && r.timeouts == 0 && v.timeouts == 0,
	      "the real connection: sessions %llu, restarts %llu, timeouts %llu/%llu",
	      (unsigned long long)r.sessions, (unsigned long long)r.peer_restarts,
	      (unsigned long long)r.timeouts, (unsigned long long)v.timeouts);
	/* a new real peer after the flood (once the forged peers are idle
	 * for the eviction age, 4 rto_max) */
	rclock += 1100000000ULL;
	rsettle();
	{
		struct rmsgt m[2] = { { .a = 2, .b = 0, .len = 3000, .seed = 1 },
				      { .a = 0, .b = 2, .len = 500, .seed = 2 } };
		struct rmsgt *vv[2] = { m, m + 2 };

		rbatch_post(m, 2, false);
		CHECK(rpump(all_done, vv, 10ULL * 1000000000ULL), "a new peer after the flood");
		rbatch_check(m, 2, "new peer after the flood");
		rbatch_free(m, 2);
	}
	CHECK(rx_rc_bad == 0, "rx returned unexpected errors %d times", rx_rc_bad);
	sink_unknown = false;
	rnet_free();
	printf("reliability: flood of %llu forged CONNECTs and %llu forged SMALLs from made-up "
	       "addresses: peer table <= %llu (peers_max 16, %llu idle peers evicted), answers "
	       "%llu + %llu (<= 1 per forged frame), nothing held, the real connection unaffected, "
	       "a new peer gets in\n", (unsigned long long)forged_connect,
	       (unsigned long long)forged_small, (unsigned long long)peers_max_seen,
	       (unsigned long long)v.peers_evicted,
	       (unsigned long long)sink_frames[XW_PKT_CONNECT_REPLY],
	       (unsigned long long)sink_frames[XW_PKT_CONNECT]);
}

/*
 * A large send waits for the receiver's PULLs: an alive receiver that posts
 * its receive only after more than give_up is not given up (the sender
 * probes it, it answers); one killed after acking the RNDV is given up
 * within give_up, not waited for forever.
 */
static void test_rel_probe(void)
{
	struct xwi_engine_cfg c[2] = { rel_cfg(1), rel_cfg(2) };
	unsigned char *sb = malloc(3000), *rb = malloc(3000);
	struct xw_request *sr, *rr;
	__u64 t0;

	REQUIRE(sb && rb, "malloc");
	fill(sb, 3000, 7);
	c[0].give_up_ns = c[1].give_up_ns = 2000000000ULL;
	rnet_init(2, c, 1600);
	rx_rc_bad = 0;
	REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, sb, 3000, 5, &sr) == 0, "isend");
	rpump(NULL, NULL, 6ULL * 1000000000ULL); /* 3x give_up, no receive posted */
	CHECK(sr->state != XWI_REQ_DONE, "late receiver: the send completed (error %d) before "
	      "any receive was posted", sr->status.error);
	REQUIRE(xwi_engine_irecv(nodes[1].e, rb, 3000, 5, ALL, &rr) == 0, "irecv");
	rpump(NULL, NULL, 2ULL * 1000000000ULL);
	CHECK(sr->state == XWI_REQ_DONE && sr->status.error == 0 && rr->state == XWI_REQ_DONE &&
		      rr->status.error == 0 && !memcmp(sb, rb, 3000),
	      "late receiver after 6 s: send %d/%d, receive %d/%d", sr->state, sr->status.error,
	      rr->state, rr->status.error);
	xwi_request_free(sr);
	xwi_request_free(rr);
	/* now the receiver dies after acking the RNDV */
	REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, sb, 3000, 6, &sr) == 0, "isend");
	rpump(NULL, NULL, 50000000ULL);
	CHECK(sr->state != XWI_REQ_DONE, "the send completed without a receive");
	xwi_engine_free(nodes[1].e);
	nodes[1].e = NULL;
	drop_queue(1);
	t0 = rclock;
	while (sr->state != XWI_REQ_DONE && rclock - t0 < 10ULL * 1000000000ULL)
		rpass();
	CHECK(sr->state == XWI_REQ_DONE && sr->status.error == -ETIMEDOUT &&
		      rclock - t0 <= 2500000000ULL,
	      "killed receiver: send state %d error %d after %llu ms (give_up 2 s)", sr->state,
	      sr->status.error, (unsigned long long)((rclock - t0) / 1000000));
	CHECK(rst(0).probes > 0, "the silent receiver was never probed");
	xwi_request_free(sr);
	rnet_free();
	free(sb);
	free(rb);
	printf("reliability: a large send to a receiver that posts late (3x give-up) completes "
	       "(the sender probes, the receiver answers); one to a receiver killed after the "
	       "RNDV fails with -ETIMEDOUT within give-up\n");
}

/*
 * A peer given up takes its directed receives with it: node 0 waits for a
 * message from node 1 (directed), one from node 2 (directed) and one from
 * anyone; node 1 dies while node 0 sends to it.  When node 0 gives node 1
 * up, its large send and the receive directed at node 1 complete with
 * -ETIMEDOUT (nobody else could ever satisfy that receive); the other two
 * stay posted and still work.
 */
static void test_rel_giveup_directed(void)
{
	struct xwi_engine_cfg c[3] = { rel_cfg(1), rel_cfg(2), rel_cfg(3) };
	static unsigned char sb[3000];
	unsigned char rb[3][300];
	struct xw_request *sr, *rr[3], *s2;
	__u64 t0;

	fill(sb, sizeof(sb), 11);
	for (int i = 0; i < 3; i++)
		c[i].give_up_ns = 1000000000ULL;
	rnet_init(3, c, 1700);
	rx_rc_bad = 0;
	REQUIRE(xwi_engine_irecv_from(nodes[0].e, rb[0], 300, 9, ALL, &nodes[1].addr, &rr[0]) == 0,
		"irecv from 1");
	REQUIRE(xwi_engine_irecv_from(nodes[0].e, rb[1], 300, 9, ALL, &nodes[2].addr, &rr[1]) == 0,
		"irecv from 2");
	REQUIRE(xwi_engine_irecv(nodes[0].e, rb[2], 300, 10, ALL, &rr[2]) == 0, "irecv any");
	/* a session with node 1 first, then it dies */
	REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, sb, 100, 1, &sr) == 0, "isend");
	rpump(NULL, NULL, 50000000ULL);
	CHECK(sr->state == XWI_REQ_DONE && !sr->status.error, "first send: state %d error %d",
	      sr->state, sr->status.error);
	xwi_request_free(sr);
	xwi_engine_free(nodes[1].e);
	nodes[1].e = NULL;
	drop_queue(1);
	/* a large send (RNDV): it completes only when node 1 has pulled it */
	REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, sb, 3000, 2, &sr) == 0, "isend");
	t0 = rclock;
	while (sr->state != XWI_REQ_DONE && rclock - t0 < 5ULL * 1000000000ULL)
		rpass();
	CHECK(sr->state == XWI_REQ_DONE && sr->status.error == -ETIMEDOUT,
	      "send to the dead peer: state %d error %d", sr->state, sr->status.error);
	CHECK(rr[0]->state == XWI_REQ_DONE && rr[0]->status.error == -ETIMEDOUT &&
		      xw_addr_equal(&rr[0]->status.src, &nodes[1].addr),
	      "receive directed at the given-up peer: state %d error %d", rr[0]->state,
	      rr[0]->status.error);
	CHECK(rr[1]->state != XWI_REQ_DONE && rr[2]->state != XWI_REQ_DONE,
	      "other receives completed with the give-up: directed %d/%d, any %d/%d",
	      rr[1]->state, rr[1]->status.error, rr[2]->state, rr[2]->status.error);
	/* node 2 still gets through to both */
	REQUIRE(xwi_engine_isend(nodes[2].e, &nodes[0].addr, sb, 300, 9, &s2) == 0, "isend 2");
	rpump(NULL, NULL, 50000000ULL);
	xwi_request_free(s2);
	REQUIRE(xwi_engine_isend(nodes[2].e, &nodes[0].addr, sb, 200, 10, &s2) == 0, "isend 2");
	rpump(NULL, NULL, 50000000ULL);
	CHECK(rr[1]->state == XWI_REQ_DONE && !rr[1]->status.error && rr[1]->status.len == 300 &&
		      !memcmp(rb[1], sb, 300) && rr[2]->state == XWI_REQ_DONE &&
		      !rr[2]->status.error && rr[2]->status.len == 200 && !memcmp(rb[2], sb, 200),
	      "after the give-up: from 2 %d/%d, any %d/%d", rr[1]->state, rr[1]->status.error,
	      rr[2]->state, rr[2]->status.error);
	CHECK(!rx_rc_bad, "%d frames rejected", rx_rc_bad);
	xwi_request_free(s2);
	xwi_request_free(sr);
	for (int i = 0; i < 3; i++)
		xwi_request_free(rr[i]);
	rnet_free();
	printf("reliability: a peer given up fails the receives directed at it (-ETIMEDOUT); "
	       "receives from others and from anyone stay and complete\n");
}

/*
 * XWI_SEND_MORE: a batch of eager messages sent with the hint, the last one
 * without: every frame of the flagged ones says MORE and carries no LAT;
 * the last message's frames carry the marks as usual and its last frame no
 * MORE.  A large (RNDV) message keeps its LAT with the hint.
 */
static void test_rel_more_hint(void)
{
	static const size_t lens[] = { 10, 200, 300, 40 };
	unsigned char sb[512], rb[4][512];
	struct xw_request *sr, *rr[4];
	size_t log0;

	memset(sb, 0x5A, sizeof(sb));
	rnet_init2(rel_cfg(1), rel_cfg(2), 1700);
	rx_rc_bad = 0;
	rmix(4, 0, false, 1700, "before the batch", 10ULL * 1000000000ULL);
	rsettle();
	for (int i = 0; i < 4; i++)
		REQUIRE(xwi_engine_irecv(nodes[1].e, rb[i], sizeof(rb[i]), 0x900 + (__u64)i, ALL,
					 &rr[i]) == 0, "irecv");
	log0 = nlog;
	for (int i = 0; i < 4; i++) {
		REQUIRE(xwi_engine_isend_flags(nodes[0].e, &nodes[1].addr, sb, lens[i],
					       0x900 + (__u64)i, i < 3 ? XWI_SEND_MORE : 0, &sr) == 0,
			"isend");
		xwi_request_free(sr); /* eager: complete at once */
	}
	rsettle();
	for (int i = 0; i < 4; i++) {
		CHECK(rr[i]->state == XWI_REQ_DONE && rr[i]->status.error == 0 &&
			      rr[i]->status.len == lens[i] && !memcmp(rb[i], sb, lens[i]),
		      "batch message %d", i);
		xwi_request_free(rr[i]);
	}
	for (size_t k = log0; k < nlog; k++) {
		const struct xw_hdr *h = &flog[k].h;
		__u32 id = ntohl(h->msg_id) - ntohl(flog[log0].h.msg_id);
		bool last_frame = ntohl(h->frag_idx) + 1 == ntohl(h->frag_count);

		if (flog[k].src != 0 || h->type > XW_PKT_MEDIUM || id > 3)
			continue;
		if (id < 3)
			CHECK((h->flags & XW_F_MORE) && !(h->flags & XW_F_LAT),
			      "hinted message %u frame %u: flags %#x", id, ntohl(h->frag_idx),
			      h->flags);
		else if (last_frame)
			CHECK(!(h->flags & XW_F_MORE) && (h->flags & XW_F_LAT),
			      "last message, last frame: flags %#x", h->flags);
	}
	CHECK(xwi_engine_isend_flags(nodes[0].e, &nodes[1].addr, sb, 10, 1, 0x80, &sr) == -EINVAL,
	      "unknown send flag accepted");
	rnet_free();
	printf("more hint: a batch sent with XWI_SEND_MORE says MORE on every frame and LAT only on "
	       "the last message\n");
}

static void test_rel_blackhole(void)
{
	struct xwi_engine_cfg c = rel_cfg(1), d = rel_cfg(2);
	struct rmsgt m[2] = { { .a = 0, .b = 1, .len = 20000, .seed = 1 },
			      { .a = 1, .b = 0, .len = 9000, .seed = 2 } };
	struct rmsgt *v[2] = { m, m + 2 };
	struct xwi_engine_stats a, b;

	/* shorter than give-up: resumes, same session */
	rnet_init2(c, d, 900);
	rx_rc_bad = 0;
	rbatch_post(m, 2, false);
	for (int i = 0; i < 5; i++)
		rpass();
	imp.blackhole = true;
	rpump(all_done, v, 2ULL * 1000000000ULL);
	imp.blackhole = false;
	CHECK(rpump(all_done, v, 10ULL * 1000000000ULL), "blackhole 2 s: not complete");
	rbatch_check(m, 2, "blackhole 2 s");
	rbatch_free(m, 2);
	rsettle();
	rel_expect_one_session("blackhole 2 s");
	a = rst(0);
	b = rst(1);
	CHECK(rtx_total(&a) + rtx_total(&b) > 0 && imp.blackholed > 0, "blackhole: no retransmission");
	rnet_free();

	/* longer than give-up: -ETIMEDOUT both sides, then a new session works */
	c.give_up_ns = d.give_up_ns = 3000000000ULL;
	memset(m, 0, sizeof(m));
	m[0] = (struct rmsgt){ .a = 0, .b = 1, .len = 20000, .seed = 3 };
	m[1] = (struct rmsgt){ .a = 1, .b = 0, .len = 9000, .seed = 4 };
	rnet_init2(c, d, 901);
	rx_rc_bad = 0;
	rbatch_post(m, 2, false);
	for (int i = 0; i < 5; i++)
		rpass();
	imp.blackhole = true;
	CHECK(rpump(all_done, v, 5ULL * 1000000000ULL), "blackhole 5 s: requests still pending");
	for (int i = 0; i < 2; i++) {
		CHECK(m[i].sr->state == XWI_REQ_DONE && m[i].sr->status.error == -ETIMEDOUT,
		      "blackhole 5 s: send %d: state %d error %d", i, m[i].sr->state,
		      m[i].sr->status.error);
		CHECK(m[i].rr->state == XWI_REQ_DONE && m[i].rr->status.error == -ETIMEDOUT,
		      "blackhole 5 s: recv %d: state %d error %d", i, m[i].rr->state,
		      m[i].rr->status.error);
	}
	CHECK(rclock - 1000000000ULL < 4ULL * 1000000000ULL, "give-up took %llu ms (3 s set)",
	      (unsigned long long)((rclock - 1000000000ULL) / 1000000));
	rbatch_free(m, 2);
	a = rst(0);
	b = rst(1);
	CHECK(a.timeouts >= 1 && b.timeouts >= 1, "timeouts %llu %llu",
	      (unsigned long long)a.timeouts, (unsigned long long)b.timeouts);
	imp.blackhole = false;
	rsettle();
	rmix(20, 3000, false, 910, "after the give-up", 10ULL * 1000000000ULL);
	a = rst(0);
	b = rst(1);
	CHECK(a.sessions == 2 && b.sessions == 2, "after the give-up: sessions %llu %llu, want 2",
	      (unsigned long long)a.sessions, (unsigned long long)b.sessions);
	rnet_free();
	printf("reliability: 2 s blackhole resumes in the same session; 5 s (give-up 3 s): "
	       "-ETIMEDOUT both ways, then a new session works\n");
}

static void test_rel_restart(void)
{
	struct rmsgt m[2] = { { .a = 0, .b = 1, .len = 20000, .seed = 1 },
			      { .a = 1, .b = 0, .len = 9000, .seed = 2 } };
	struct rmsgt n1 = { .a = 1, .b = 0, .len = 100, .seed = 3 };
	struct xwi_engine_stats a;

	/* the restarted peer speaks first */
	rnet_init2(rel_cfg(1), rel_cfg(2), 1000);
	rx_rc_bad = 0;
	rmix(10, 0, false, 1000, "before the restart", 10ULL * 1000000000ULL);
	rbatch_post(m, 2, false);
	for (int i = 0; i < 5; i++)
		rpass();
	rnode_restart(1);
	rbatch_post(&n1, 1, false);
	CHECK(rpump(one_done, &n1, 10ULL * 1000000000ULL), "restart: the new incarnation's message");
	rbatch_check(&n1, 1, "new incarnation");
	rbatch_free(&n1, 1);
	CHECK(m[0].sr->state == XWI_REQ_DONE && m[0].sr->status.error == -ECONNRESET,
	      "restart: the old send: state %d error %d", m[0].sr->state, m[0].sr->status.error);
	CHECK(m[1].rr->state == XWI_REQ_DONE && m[1].rr->status.error == -ECONNRESET,
	      "restart: the old receive: state %d error %d", m[1].rr->state, m[1].rr->status.error);
	xwi_request_free(m[0].sr);
	xwi_request_free(m[1].rr);
	free(m[0].sb);
	free(m[0].rb);
	free(m[1].sb);
	free(m[1].rb);
	rmix(40, 3000, false, 1100, "after the restart", 10ULL * 1000000000ULL);
	a = rst(0);
	CHECK(a.peer_restarts == 1 && a.sessions == 2, "restarts %llu sessions %llu",
	      (unsigned long long)a.peer_restarts, (unsigned long long)a.sessions);
	rnet_free();

	/* the peer that stayed open speaks first to the reopened endpoint */
	rnet_init2(rel_cfg(1), rel_cfg(2), 1001);
	rx_rc_bad = 0;
	rmix(10, 0, false, 1200, "before the reopen", 10ULL * 1000000000ULL);
	rsettle();
	rnode_restart(1);
	rmix(40, 3000, false, 1300, "to the reopened endpoint", 10ULL * 1000000000ULL);
	a = rst(0);
	CHECK(a.peer_restarts == 1 && a.sessions == 2, "reopen: restarts %llu sessions %llu",
	      (unsigned long long)a.peer_restarts, (unsigned long long)a.sessions);
	rnet_free();
	printf("reliability: restarted peer: old requests -ECONNRESET, the new incarnation works "
	       "both ways (also when the peer that stayed open speaks first)\n");
}

/*
 * A sender that dies in the middle of an eager message (only its first
 * fragment arrived) must not pin the receiver's unexpected memory: a live
 * peer's message over the bound is refused at first (its sender resends),
 * and once the dead one has been silent for give_up_ns its partial message
 * is dropped (abandoned) and the live message is taken.
 */
static void test_rel_partial_dead(void)
{
	struct xwi_engine_cfg c[3] = { rel_cfg(1), rel_cfg(2), rel_cfg(3) };
	unsigned char dead[900], live[600], rb[600];
	struct xw_request *ds, *ls, *rr;
	struct xwi_engine_stats st;

	for (int i = 0; i < 3; i++) {
		c[i].eager_max = 1000;
		c[i].give_up_ns = 2000000000ULL;
	}
	c[1].unexpected_max = 1000;
	rnet_init(3, c, 1150);
	rx_rc_bad = 0;
	fill(dead, sizeof(dead), 1);
	fill(live, sizeof(live), 2);
	imp.drop_nth[0][XW_PKT_MEDIUM] = ~1u; /* only fragment 0 of node 0's message */
	REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, dead, sizeof(dead), 1, &ds) == 0,
		"isend");
	rpump(NULL, NULL, 10000000ULL);
	CHECK(rst(1).unexpected_bytes == sizeof(dead), "partial: %llu unexpected bytes held",
	      (unsigned long long)rst(1).unexpected_bytes);
	xwi_request_free(ds);
	xwi_engine_free(nodes[0].e); /* node 0 dies */
	nodes[0].e = NULL;
	drop_queue(0);
	REQUIRE(xwi_engine_isend(nodes[2].e, &nodes[1].addr, live, sizeof(live), 2, &ls) == 0,
		"isend");
	rpump(NULL, NULL, 500000000ULL);
	st = rst(1);
	CHECK(st.rx_nobufs > 0 && st.abandoned == 0, "partial: live message refused %llu times, "
	      "%llu abandoned before the dead peer's give-up time",
	      (unsigned long long)st.rx_nobufs, (unsigned long long)st.abandoned);
	rpump(NULL, NULL, 3000000000ULL);
	st = rst(1);
	REQUIRE(xwi_engine_irecv(nodes[1].e, rb, sizeof(rb), 2, ALL, &rr) == 0, "irecv");
	CHECK(st.abandoned == 1 && rr->state == XWI_REQ_DONE && !rr->status.error &&
		      !memcmp(rb, live, sizeof(live)) && ls->state == XWI_REQ_DONE && !ls->status.error,
	      "partial: abandoned %llu, live message %d/%d", (unsigned long long)st.abandoned,
	      rr->state, rr->status.error);
	xwi_request_free(ls);
	xwi_request_free(rr);
	rsettle();
	CHECK(rst(1).unexpected_bytes == 0, "partial: %llu unexpected bytes left",
	      (unsigned long long)rst(1).unexpected_bytes);
	rnet_free();
	printf("reliability: a sender dead in the middle of an eager message: a live peer's message "
	       "over the bound refused until the dead one was silent for give-up, then its "
	       "partial message dropped and the live one taken\n");
}

/*
 * A CONNECT bound to a session of the previous incarnation.  Crossing
 * handshakes: B takes A's CONNECT (its session is now bound to A's) while
 * its own CONNECT and first message are answered by A, whose answer is
 * slow; A is then reopened and talks to B (its CONNECT is slow too).  B
 * retries its CONNECT - its ack names the old A's session - and resends its
 * message from its ISN; the new A must not adopt that session: its frames
 * are numbered in B's message stream to the old A, which B starts again
 * from id 0 once the new A's CONNECT arrives (a restart).  Before, the new A
 * took the resent fragment under id 0 (a receive matched it), then refused
 * B's next message, a large one renumbered to id 0, with -EPROTO
 * (acknowledged all the same): it was lost, its send failed (here; in the
 * fuzzer's case it waited for PULLs for ever while the new A answered its
 * probes).
 */
static void test_rel_stale_connect(void)
{
	struct xwi_engine_cfg c = rel_cfg(1), d = rel_cfg(2);
	unsigned char small[10], med[150], big[1000], rb[1000], rs[10];
	struct xw_request *s0, *s1, *ms, *ls, *rr, *x;
	struct xwi_engine_stats a;

	c.give_up_ns = d.give_up_ns = 400000000ULL;
	rnet_init2(c, d, 1400);
	rx_rc_bad = 0;
	fill(small, sizeof(small), 1);
	fill(med, sizeof(med), 2);
	fill(big, sizeof(big), 3);
	/* both open at once; each takes the other's CONNECT */
	REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, small, sizeof(small), 1, &s0) == 0,
		"isend");
	REQUIRE(xwi_engine_isend(nodes[1].e, &nodes[0].addr, med, sizeof(med), 2, &ms) == 0,
		"isend");
	rdeliver(1);
	rdeliver(0);
	xwi_engine_progress(nodes[0].e, 64); /* A's answer: in B's queue, slow */
	/* A is reopened and talks to B: its CONNECT is behind the old answer */
	CHECK(s0->state == XWI_REQ_DONE, "stale connect: A's eager send is buffered");
	xwi_request_free(s0);
	rnode_restart(0);
	REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, small, sizeof(small), 3, &s1) == 0,
		"isend");
	/* B retries its CONNECT and resends its message; the new A gets them */
	rclock += d.rto_init_ns + 1000;
	xwi_engine_progress(nodes[1].e, 64);
	rdeliver(0);
	xwi_engine_progress(nodes[0].e, 64);
	/* B's next message; then the link heals */
	REQUIRE(xwi_engine_isend(nodes[1].e, &nodes[0].addr, big, sizeof(big), 4, &ls) == 0,
		"isend");
	REQUIRE(xwi_engine_irecv(nodes[0].e, rb, sizeof(rb), 4, ALL, &rr) == 0, "irecv");
	REQUIRE(xwi_engine_irecv(nodes[0].e, rs, sizeof(rs), 2, ALL, &x) == 0, "irecv");
	rpump(NULL, NULL, 4 * d.give_up_ns);
	a = rst(0);
	CHECK(rr->state == XWI_REQ_DONE && !rr->status.error && !memcmp(rb, big, sizeof(big)) &&
		      ls->state == XWI_REQ_DONE && !ls->status.error,
	      "stale connect: B's large message: receive %d/%d, send %d/%d", rr->state,
	      rr->status.error, ls->state, ls->status.error);
	CHECK(x->state == XWI_REQ_PENDING,
	      "stale connect: the new A got B's message to the old one (%d/%d)", x->state,
	      x->status.error);
	CHECK(s1->state == XWI_REQ_DONE && !s1->status.error && rx_rc_bad == 0 && !a.rx_bad,
	      "stale connect: A's send %d/%d, %d frames refused", s1->state, s1->status.error,
	      rx_rc_bad);
	CHECK(xwi_engine_cancel(nodes[0].e, x) == 0, "cancel");
	xwi_request_free(x);
	xwi_request_free(rr);
	xwi_request_free(ls);
	xwi_request_free(ms);
	xwi_request_free(s1);
	rsettle();
	rnet_free();
	printf("reliability: a reopened endpoint does not adopt a session bound to its previous "
	       "incarnation (crossing handshakes): the peer's next message is taken in its new "
	       "stream\n");
}

static void test_rel_bound(void)
{
	struct xwi_engine_cfg a = rel_cfg(1), b = rel_cfg(2);
	struct rmsgt m[20];
	struct rmsgt *v[2] = { m, m + 20 };
	struct xwi_engine_stats s;

	b.unexpected_max = 1000; /* three 300-byte messages */
	rnet_init2(a, b, 1100);
	rx_rc_bad = 0;
	memset(m, 0, sizeof(m));
	for (int i = 0; i < 20; i++)
		m[i] = (struct rmsgt){ .a = 0, .b = 1, .len = 300, .seed = 50 + (__u32)i };
	/* late receivers: the messages arrive unexpected, over the bound */
	for (int i = 0; i < 20; i++) {
		m[i].sb = malloc(300);
		m[i].rb = malloc(300 + GUARD);
		REQUIRE(m[i].sb && m[i].rb, "malloc");
		fill(m[i].sb, 300, m[i].seed);
		memset(m[i].rb + 300, 0xA5, GUARD);
		REQUIRE(xwi_engine_isend(nodes[0].e, &nodes[1].addr, m[i].sb, 300,
					 0x7700000000ULL + m[i].seed, &m[i].sr) == 0, "isend");
	}
	rpump(NULL, NULL, 50000000ULL); /* 50 ms */
	s = rst(1);
	CHECK(s.unexpected_bytes <= 1000 && s.rx_nobufs > 0,
	      "bound: unexpected_bytes %llu, rx_nobufs %llu", (unsigned long long)s.unexpected_bytes,
	      (unsigned long long)s.rx_nobufs);
	for (int i = 0; i < 20; i++)
		REQUIRE(xwi_engine_irecv(nodes[1].e, m[i].rb, 300, 0x7700000000ULL + m[i].seed, ALL,
					 &m[i].rr) == 0, "irecv");
	CHECK(rpump(all_done, v, 10ULL * 1000000000ULL), "bound: not all delivered");
	rbatch_check(m, 20, "unexpected bound");
	rbatch_free(m, 20);
	rsettle();
	rel_expect_one_session("unexpected bound");
	printf("reliability: unexpected messages over the bound are refused (%llu frames), not "
	       "lost: the sender's retransmissions deliver them once receives are posted\n",
	       (unsigned long long)s.rx_nobufs);
	rnet_free();
}

static void test_rel_close(void)
{
	struct xwi_engine_stats a;

	rnet_init2(rel_cfg(1), rel_cfg(2), 1200);
	rx_rc_bad = 0;
	rmix(10, 3000, false, 1200, "before CLOSE", 10ULL * 1000000000ULL);
	rsettle();
	xwi_engine_shutdown(nodes[1].e, true);
	rsettle();
	a = rst(0);
	CHECK(a.peer_closes == 1 && a.rx_frames[XW_PKT_CLOSE] == 1, "CLOSE: peer_closes %llu",
	      (unsigned long long)a.peer_closes);
	rnode_restart(1);
	rmix(20, 3000, false, 1300, "after CLOSE", 10ULL * 1000000000ULL);
	a = rst(0);
	CHECK(a.sessions == 2 && a.peer_restarts == 0 && a.session_rejects == 0,
	      "after CLOSE: sessions %llu restarts %llu rejects %llu", (unsigned long long)a.sessions,
	      (unsigned long long)a.peer_restarts, (unsigned long long)a.session_rejects);
	rnet_free();
	printf("reliability: CLOSE resets the connection at once; the next incarnation gets a new "
	       "session\n");
}

static void test_rel_killed(void)
{
	struct xwi_engine_cfg c[3] = { rel_cfg(1), rel_cfg(2), rel_cfg(3) };
	struct rmsgt m[2] = { { .a = 0, .b = 1, .len = 20000, .seed = 1 },
			      { .a = 1, .b = 0, .len = 9000, .seed = 2 } };
	struct xwi_engine_stats s;
	__u64 t0;

	for (int i = 0; i < 3; i++)
		c[i].give_up_ns = 2000000000ULL;
	rnet_init(3, c, 1300);
	rx_rc_bad = 0;
	rbatch_post(m, 2, false);
	for (int i = 0; i < 5; i++)
		rpass();
	/* node 0 dies mid-rendezvous (both directions in flight) */
	xwi_engine_free(nodes[0].e);
	nodes[0].e = NULL;
	drop_queue(0);
	t0 = rclock;
	/* node 1 keeps talking to node 2 meanwhile */
	for (__u32 k = 0; k < 5; k++) {
		struct rmsgt x[2] = { { .a = 1, .b = 2, .len = 3000, .seed = 10 + k },
				      { .a = 2, .b = 1, .len = 300, .seed = 20 + k } };
		struct rmsgt *v[2] = { x, x + 2 };

		rbatch_post(x, 2, false);
		CHECK(rpump(all_done, v, 10ULL * 1000000000ULL), "node 2 <-> 1 while 0 is dead");
		rbatch_check(x, 2, "other peer");
		rbatch_free(x, 2);
	}
	rpump(NULL, NULL, 5ULL * 1000000000ULL);
	CHECK(m[0].rr->state == XWI_REQ_DONE && m[0].rr->status.error == -ETIMEDOUT,
	      "killed sender: the receive: state %d error %d", m[0].rr->state, m[0].rr->status.error);
	CHECK(m[1].sr->state == XWI_REQ_DONE && m[1].sr->status.error == -ETIMEDOUT,
	      "killed receiver: the send: state %d error %d", m[1].sr->state, m[1].sr->status.error);
	s = rst(1);
	CHECK(s.timeouts == 1 && s.pushed_bytes == 0 && s.unexpected_bytes == 0,
	      "survivor: timeouts %llu, held %llu + %llu bytes", (unsigned long long)s.timeouts,
	      (unsigned long long)s.pushed_bytes, (unsigned long long)s.unexpected_bytes);
	CHECK(rclock - t0 < 5ULL * 1000000000ULL, "gave up after %llu ms",
	      (unsigned long long)((rclock - t0) / 1000000));
	xwi_request_free(m[0].rr);
	xwi_request_free(m[1].sr);
	m[0].sr = m[1].rr = NULL; /* freed with node 0 */
	free(m[0].sb);
	free(m[0].rb);
	free(m[1].sb);
	free(m[1].rb);
	rnet_free();
	printf("reliability: peer killed mid-rendezvous: the survivor's send and receive fail with "
	       "-ETIMEDOUT after the give-up time, its other peer unaffected\n");
}

int main(void)
{
	test_sizes_small();
	test_sizes_big();
	test_bidirectional();
	test_matching();
	test_three_peers();
	test_reorder_held();
	test_held_over_bound();
	test_pull_withdrawn();
	test_teardown();
	test_truncation();
	test_cancel();
	test_directed();
	test_peek_claim();
	test_data();
	test_marks();
	test_more();
	test_unexpected_bound();
	test_pushed_bound();
	test_eagain();
	test_malformed();
	test_fuzz();
	test_duplicates();
	test_crc32c();
	test_rel_clean();
	test_rel_soak();
	test_rel_setup_loss();
	test_rel_corrupt();
	test_rel_dup();
	test_rel_reorder();
	test_rel_matrix();
	test_rel_wrap();
	test_rel_forged();
	test_rel_flood();
	test_rel_probe();
	test_rel_giveup_directed();
	test_rel_crossing();
	test_rel_reconnect();
	test_rel_sack();
	test_rel_more_hint();
	test_rel_blackhole();
	test_rel_restart();
	test_rel_stale_connect();
	test_rel_bound();
	test_rel_partial_dead();
	test_rel_close();
	test_rel_killed();
	free(flog);
	return xwt_done();
}
