// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The protocol engine's message layer (userspace/lib/engine.h, without
 * cfg.reliable) over the in-memory link (tests/lib/link.h, engine_net.h):
 * engines joined by per-node frame queues with a capacity (a full queue
 * makes ops->send return -EAGAIN), a pump that delivers queued frames to
 * xwi_engine_rx and calls xwi_engine_progress until everything is idle.
 * Every frame on the link is checked against the XDP program's field rules
 * and the MORE rules, and recorded; after each scenario the record is
 * checked for exactly the LAT/LAST marks the protocol defines.  Payloads
 * are verified byte for byte.  The connection layer over a lossy link:
 * test_engine_rel.c.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>

#include "harness.h"
#include "engine_net.h"

#define ALL ~0ULL

/* ---- the link ----------------------------------------------------------- */

struct lastf {
	bool valid, more;
	unsigned int epoch;
};

static unsigned int epoch;
static struct lastf lastf[XWT_MAXN][XWT_MAXN];
static int budget = 64;
static bool dup_mode;	    /* deliver every frame twice */
static bool marks_check;    /* run the mark checker at teardown */
static bool rx_expect_ok;   /* pump: every rx must return 0 */
static int rx_errors;

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
	CHECK(ntohs(h->src_ep) == xwt_nodes[s].cfg.ep && ntohs(h->dst_ep) == xwt_nodes[d].cfg.ep,
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
	struct xwt_node *sn = ctx;
	int s = sn->id, d = xwt_node_of(dst);
	struct xwt_node *dn;
	struct xwt_logent *le;

	REQUIRE(d >= 0, "frame to an unknown address");
	dn = &xwt_nodes[d];
	check_rules(s, d, h, payload, len);
	if (dn->q.n >= dn->cap)
		return -EAGAIN;
	/* frames to one destination within one engine call: all but the last
	 * of them must say MORE (the engine held the next one already) */
	if (lastf[s][d].valid && lastf[s][d].epoch == epoch)
		CHECK(lastf[s][d].more, "node %d -> %d: frame without MORE followed by another "
		      "in the same call (type %u)", s, d, h->type);
	lastf[s][d] = (struct lastf){ .valid = true, .more = h->flags & XW_F_MORE, .epoch = epoch };
	REQUIRE(xwt_lq_push(&dn->q, h, payload, len, s) == 0, "malloc");
	le = xwt_log_add(s, d, h);
	if (h->type == XW_PKT_PULL && len == sizeof(struct xw_pull_req)) {
		struct xw_pull_req pr;

		memcpy(&pr, payload, sizeof(pr));
		le->pull_block = ntohl(pr.block_id);
		le->pull_nfrags = ntohl(pr.nfrags);
	}
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
	if (xwi_engine_tx_pending(xwt_nodes[s].e))
		return;
	for (int d = 0; d < xwt_nnodes; d++)
		CHECK(!(lastf[s][d].valid && lastf[s][d].more),
		      "node %d idle but its last frame to %d has MORE", s, d);
}
/* Engine calls through these: one epoch per call, MORE checked after. */
static int E_isend(int s, int d, const void *buf, size_t len, __u64 match,
		   struct xw_request **r)
{
	int rc;

	epoch++;
	rc = xwi_engine_isend(xwt_nodes[s].e, &xwt_nodes[d].addr, buf, len, match, r);
	idle_check(s);
	return rc;
}

static int E_irecv(int s, void *buf, size_t len, __u64 match, __u64 mask, struct xw_request **r)
{
	int rc;

	epoch++;
	rc = xwi_engine_irecv(xwt_nodes[s].e, buf, len, match, mask, r);
	idle_check(s);
	return rc;
}

static int E_progress(int s, int b)
{
	int rc;

	epoch++;
	rc = xwi_engine_progress(xwt_nodes[s].e, b);
	idle_check(s);
	return rc;
}

static int E_cancel(int s, struct xw_request *r)
{
	int rc;

	epoch++;
	rc = xwi_engine_cancel(xwt_nodes[s].e, r);
	idle_check(s);
	return rc;
}

/* Deliver a frame to node @d as if from node @s (or from @src if given). */
static int E_rx_from(int d, const struct xw_addr *src, const struct xw_hdr *h, const void *pl,
		     size_t len)
{
	int rc;

	epoch++;
	rc = xwi_engine_rx(xwt_nodes[d].e, src, h, pl, len);
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
	xwt_nlog = 0;
	xwt_nnodes = n;
	dup_mode = false;
	marks_check = true;
	rx_expect_ok = true;
	rx_errors = 0;
	budget = 64;
	for (int i = 0; i < n; i++) {
		xwt_node_start(i, &cfgs[i], &link_ops, 512);
		REQUIRE(xwi_engine_ctx(xwt_nodes[i].e) == &xwt_nodes[i], "ctx");
	}
}

static void net_init2(struct xwi_engine_cfg a, struct xwi_engine_cfg b)
{
	struct xwi_engine_cfg c[2] = { a, b };

	net_init(2, c);
}
static void deliver(int i, struct xwt_lframe *f)
{
	size_t n0 = xwt_nlog;
	int rc = E_rx_from(i, &xwt_nodes[f->src].addr, &f->h, f->pl, f->len);

	CHECK(xwt_nlog == n0, "xwi_engine_rx emitted frames (they go out from progress)");

	if (rc)
		rx_errors++;
	if (rx_expect_ok)
		CHECK(rc == 0, "rx at node %d of type %u from %d: %d", i, f->h.type, f->src, rc);
	if (dup_mode) {
		rc = E_rx_from(i, &xwt_nodes[f->src].addr, &f->h, f->pl, f->len);
		CHECK(rc == 0, "duplicate rx at node %d of type %u: %d", i, f->h.type, rc);
	}
}

/* Deliver and progress until no frame is queued and no engine has work. */
static void pump(void)
{
	for (long it = 0; it < 20000000; it++) {
		bool busy = false;

		for (int i = 0; i < xwt_nnodes; i++) {
			size_t n = xwt_nodes[i].q.n;

			for (size_t k = 0; k < n; k++) {
				struct xwt_lframe f = xwt_qpop(i);

				deliver(i, &f);
				free(f.pl);
			}
			E_progress(i, budget);
			xwt_bounds_check(i);
		}
		for (int i = 0; i < xwt_nnodes; i++)
			if (xwt_nodes[i].q.n || xwi_engine_tx_pending(xwt_nodes[i].e))
				busy = true;
		if (!busy)
			return;
	}
	REQUIRE(0, "pump did not settle");
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
	for (size_t i = 0; i < xwt_nlog; i++) {
		const struct xwt_logent *f = &xwt_flog[i];
		const struct xwi_engine_cfg *c = &xwt_nodes[f->src].cfg;
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
	for (int i = 0; i < xwt_nnodes; i++) {
		xwt_drop_queue(i);
		xwi_engine_free(xwt_nodes[i].e);
		xwt_nodes[i].e = NULL;
	}
	xwt_nnodes = 0;
}
/* ---- transfers ------------------------------------------------------------ */

/*
 * Send @len bytes from @a to @b into a receive buffer of @rlen bytes,
 * receive posted before (@early) or after the send has been pumped.
 * @sbuf / @rbuf: caller's buffers (@rbuf with XWT_GUARD bytes room) or NULL.
 */
static void xfer_buf(int a, int b, size_t len, size_t rlen, bool early, __u32 seed,
		     unsigned char *sbuf, unsigned char *rbuf)
{
	unsigned char *sb = sbuf ? sbuf : malloc(len ? len : 1);
	unsigned char *rb = rbuf ? rbuf : malloc(rlen + XWT_GUARD);
	struct xw_request *sr = NULL, *rr = NULL;
	__u64 tag = 0xABC00000ULL + seed;
	size_t want = len < rlen ? len : rlen;
	bool eager = len <= xwt_nodes[a].cfg.eager_max;
	long bad;

	REQUIRE(sb && rb, "malloc");
	if (!sbuf)
		xwt_epat_fill(sb, len, seed);
	memset(rb, 0, rlen);
	memset(rb + rlen, 0xA5, XWT_GUARD);
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
		      xw_addr_equal(&rr->status.src, &xwt_nodes[a].addr),
		      "len %zu rlen %zu: recv status err %d len %zu msg_len %zu", len, rlen,
		      rr->status.error, rr->status.len, rr->status.msg_len);
		bad = xwt_epat_verify(rb, want, seed);
		CHECK(bad < 0, "len %zu %s %d->%d: byte %ld wrong", len, early ? "early" : "late", a,
		      b, bad);
	}
	CHECK(xwt_guard_ok(rb + rlen), "len %zu rlen %zu: written past the receive buffer", len, rlen);
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
	struct xwi_engine_stats st = xwt_node_stats(i);

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
		xwt_nodes[0].cap = xwt_nodes[1].cap = links[l].cap;
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
			struct xwi_engine_stats st = xwt_node_stats(i);

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
	rb = malloc(big + XWT_GUARD);
	REQUIRE(sb && rb, "malloc 64 MiB");
	xwt_epat_fill(sb, big, 77);
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
	xwt_nodes[0].cap = xwt_nodes[1].cap = 7;
	for (int d = 0; d < 2; d++) {
		for (int i = 0; i < n; i++) {
			sb[d][i] = malloc(sizes[i] + 1);
			rb[d][i] = malloc(sizes[i] + XWT_GUARD);
			xwt_epat_fill(sb[d][i], sizes[i], 10 * d + i);
			memset(rb[d][i] + sizes[i], 0xA5, XWT_GUARD);
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
			CHECK(xwt_epat_verify(rb[d][i], sizes[i], 10 * d + i) < 0, "dir %d msg %d data", d, i);
			CHECK(xwt_guard_ok(rb[d][i] + sizes[i]), "guard");
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
	unsigned char s[6][300], r[6][300 + XWT_GUARD];
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
	xwt_epat_fill(s[0], 300, 100);
	xwt_epat_fill(s[1], 300, 101);
	xwt_epat_fill(s[2], 300, 102);
	xwt_epat_fill(s[3], 300, 103);
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
	      xwt_epat_verify(r[1], 100, 100) < 0, "low-byte mask");
	CHECK(rr[0]->state == XWI_REQ_DONE && rr[0]->status.msg_len == 200 &&
	      xwt_epat_verify(r[0], 200, 101) < 0, "prefix mask");
	CHECK(rr[2]->state == XWI_REQ_DONE && rr[2]->status.msg_len == 300 &&
	      rr[2]->status.match == 0x1234000000000007ULL && xwt_epat_verify(r[2], 300, 102) < 0,
	      "wildcard takes the earlier-posted match");
	CHECK(rr[3]->state == XWI_REQ_DONE && rr[3]->status.msg_len == 50 &&
	      xwt_epat_verify(r[3], 50, 103) < 0, "last");
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
			xwt_epat_fill(b[i], sz[i], 200 + i);
			REQUIRE(E_isend(0, 1, b[i], sz[i], 0x77, &sr[i]) == 0, "isend");
		}
		pump();
		CHECK(xwt_node_stats(1).unexpected_msgs == 6, "unexpected_msgs %llu",
		      (unsigned long long)xwt_node_stats(1).unexpected_msgs);
		for (int i = 0; i < 6; i++) {
			unsigned char *rb = malloc(2000 + XWT_GUARD);

			memset(rb + 2000, 0xA5, XWT_GUARD);
			REQUIRE(E_irecv(1, rb, 2000, 0, 0, &rr[i]) == 0, "irecv");
			pump();
			CHECK(rr[i]->state == XWI_REQ_DONE && rr[i]->status.msg_len == sz[i] &&
			      xwt_epat_verify(rb, sz[i], 200 + i) < 0 && xwt_guard_ok(rb + 2000),
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
	xwt_epat_fill(s[0], 100, 300);
	xwt_epat_fill(s[1], 100, 301);
	REQUIRE(E_isend(0, 1, s[0], 100, 1, &sr[0]) == 0, "isend");
	REQUIRE(E_isend(0, 1, s[1], 100, 2, &sr[1]) == 0, "isend");
	pump();
	REQUIRE(E_irecv(1, r[1], 300, 2, ALL, &rr[1]) == 0, "irecv");
	REQUIRE(E_irecv(1, r[0], 300, 1, ALL, &rr[0]) == 0, "irecv");
	CHECK(rr[1]->state == XWI_REQ_DONE && xwt_epat_verify(r[1], 100, 301) < 0, "tag 2");
	CHECK(rr[0]->state == XWI_REQ_DONE && xwt_epat_verify(r[0], 100, 300) < 0, "tag 1");
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
			xwt_nodes[i].cap = 5;
		/* early 0: all late; 1: half posted before; 2: all before */
		int pre = early == 0 ? 0 : early == 1 ? 9 : 18;

		for (int k = 0; k < 18; k++) {
			rb[k] = malloc(4000 + XWT_GUARD);
			memset(rb[k] + 4000, 0xA5, XWT_GUARD);
		}
		for (int k = 0; k < pre; k++)
			REQUIRE(E_irecv(0, rb[k], 4000, 0x42, ALL, &rr[k]) == 0, "irecv");
		for (int m = 0; m < 6; m++) {
			for (int p = 1; p < 4; p++) {
				sb[p][m] = malloc(sz[m]);
				xwt_epat_fill(sb[p][m], sz[m], 1000 * p + m);
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
			int p = xwt_node_of(&rr[k]->status.src);

			CHECK(rr[k]->state == XWI_REQ_DONE, "recv %d", k);
			CHECK(p >= 1 && p < 4, "recv %d from node %d", k, p);
			if (p < 1 || p >= 4)
				continue;
			CHECK(next[p] < 6 && rr[k]->status.msg_len == sz[next[p]],
			      "early %d: peer %d message %d arrived as the %d-th (len %zu)", early, p,
			      next[p], k, rr[k]->status.msg_len);
			if (next[p] < 6)
				CHECK(xwt_epat_verify(rb[k], sz[next[p]], 1000 * p + next[p]) < 0 &&
				      xwt_guard_ok(rb[k] + 4000), "data of peer %d msg %d", p, next[p]);
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
	unsigned char *sb[3], rb[3][2000 + XWT_GUARD];
	struct xw_request *sr[3], *rr[3];

	for (int early = 0; early < 2; early++) {
		for (int order = 0; order < 3; order++) {
			net_init2(small_cfg(1), small_cfg(2));
			marks_check = false;
			xwt_nodes[1].cap = XWT_RING;
			if (early)
				for (int i = 0; i < 3; i++)
					REQUIRE(E_irecv(1, rb[i], 2000, 9, ALL, &rr[i]) == 0, "irecv");
			for (int i = 0; i < 3; i++) {
				sb[i] = malloc(sz[i]);
				xwt_epat_fill(sb[i], sz[i], 40 + i);
				REQUIRE(E_isend(0, 1, sb[i], sz[i], 9, &sr[i]) == 0, "isend");
			}
			/* B's queue: message 0 last, the MEDIUM's fragments reversed,
			 * the large message's frames in order (a push before its RNDV
			 * would be lost without the reliability layer) */
			{
				static const int seq[3][3] = { { 2, 1, 0 }, { 1, 2, 0 }, { 2, 0, 1 } };
				struct xwt_node *nd = &xwt_nodes[1];
				size_t n = nd->q.n, k = 0;
				struct xwt_lframe *tmp = malloc(n * sizeof(*tmp));

				for (size_t j = 0; j < n; j++)
					tmp[j] = *xwt_lq_at(&nd->q, j);
				for (int g = 0; g < 3; g++) {
					int id = seq[order][g];

					for (size_t j = 0; j < n; j++) {
						size_t jj = id == 1 ? n - 1 - j : j;

						if (ntohl(tmp[jj].h.msg_id) == (__u32)id)
							*xwt_lq_at(&nd->q, k++) = tmp[jj];
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
				      xwt_epat_verify(rb[i], sz[i], 40 + i) < 0,
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
	struct xwt_node *nd;
	struct xwt_lframe *tmp;
	size_t n, k = 0;

	b.unexpected_max = 0;
	b.pushed_max = 0;
	net_init2(small_cfg(1), b);
	marks_check = false;
	xwt_nodes[1].cap = XWT_RING;
	for (int i = 0; i < 4; i++)
		REQUIRE(E_irecv(1, rb[i], 2000, 9, ALL, &rr[i]) == 0, "irecv");
	for (int i = 0; i < 4; i++) {
		sb[i] = malloc(sz[i]);
		xwt_epat_fill(sb[i], sz[i], 70 + i);
		REQUIRE(E_isend(0, 1, sb[i], sz[i], 9, &sr[i]) == 0, "isend");
	}
	nd = &xwt_nodes[1];
	n = nd->q.n;
	tmp = malloc(n * sizeof(*tmp));
	for (size_t j = 0; j < n; j++)
		tmp[j] = *xwt_lq_at(&nd->q, j);
	for (int g = 0; g < 4; g++)
		for (size_t j = 0; j < n; j++)
			if (ntohl(tmp[j].h.msg_id) == (__u32)seq[g])
				*xwt_lq_at(&nd->q, k++) = tmp[j];
	free(tmp);
	pump();
	CHECK(xwt_node_stats(1).rx_dropped_nomem == 4 + 9 + 1, "dropped %llu",
	      (unsigned long long)xwt_node_stats(1).rx_dropped_nomem);
	/* message 0 to rr[0]; 1 (MEDIUM) and 3 (SMALL) were lost; 2 pulled */
	CHECK(rr[0]->state == XWI_REQ_DONE && rr[0]->status.msg_len == 30 &&
	      xwt_epat_verify(rb[0], 30, 70) < 0, "message 0");
	CHECK(rr[1]->state == XWI_REQ_DONE && rr[1]->status.msg_len == 2000 &&
	      xwt_epat_verify(rb[1], 2000, 72) < 0, "large message pulled whole");
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
	struct xwt_lframe f;

	b.pushed_max = 0;
	net_init2(small_cfg(1), b);
	xwt_epat_fill(sb, 2000, 80);
	REQUIRE(E_isend(0, 1, sb, 2000, 1, &sr) == 0, "isend");
	CHECK(xwt_nodes[1].q.n == 9, "RNDV + 8 pushes queued (%zu)", xwt_nodes[1].q.n);
	f = xwt_qpop(1); /* the RNDV: unexpected, its bytes dropped */
	deliver(1, &f);
	free(f.pl);
	xwt_nodes[0].cap = 0; /* B's PULLs cannot go out */
	CHECK(!xwi_engine_pulling(xwt_nodes[1].e), "pulling an unexpected RNDV");
	REQUIRE(E_irecv(1, rb, 2000, 1, ALL, &rr) == 0, "irecv");
	CHECK(xwi_engine_tx_pending(xwt_nodes[1].e), "PULLs queued");
	/* the wait's hint (waitloop.c): a pull is under way */
	CHECK(xwi_engine_pulling(xwt_nodes[1].e) && !xwi_engine_pulling(xwt_nodes[0].e),
	      "pulling: receiver %d, sender %d", xwi_engine_pulling(xwt_nodes[1].e),
	      xwi_engine_pulling(xwt_nodes[0].e));
	while (xwt_nodes[1].q.n) { /* the pushes: complete the second block */
		f = xwt_qpop(1);
		deliver(1, &f);
		free(f.pl);
	}
	xwt_nodes[0].cap = 512;
	pump();
	CHECK(sr->state == XWI_REQ_DONE && rr->state == XWI_REQ_DONE && xwt_epat_verify(rb, 2000, 80) < 0,
	      "late receive after dropped pushes");
	CHECK(!xwi_engine_pulling(xwt_nodes[1].e), "still pulling after the message");
	check_marks(&mc);
	/* blocks: [0..3] (needs fragment 0), [4..7] withdrawn, then the rest */
	CHECK(mc.frames[XW_PKT_PULL] == 1 + (32 - 9 + 3) / 4, "%lu PULLs",
	      mc.frames[XW_PKT_PULL]);
	CHECK(xwt_flog[9].h.type == XW_PKT_PULL && ntohl(xwt_flog[9].h.frag_idx) == 0 &&
	      xwt_flog[9].pull_nfrags == 4, "first PULL asks fragments 0..3");
	xwi_request_free(sr);
	xwi_request_free(rr);
	free(sb);
	expect_clean(1);
	net_free();
}

/* A large receive aborted with its PULLs out: no pull is left under way
 * (xwi_engine_pulling, the wait's hint) and the receiver's buffer is free. */
static void test_pull_abort(void)
{
	unsigned char *sb = malloc(5000), rb[5000];
	struct xw_request *sr, *rr;
	struct xwt_lframe f;

	REQUIRE(sb, "malloc");
	net_init2(small_cfg(1), small_cfg(2));
	xwt_epat_fill(sb, 5000, 81);
	REQUIRE(E_irecv(1, rb, 5000, 3, ALL, &rr) == 0, "irecv");
	REQUIRE(E_isend(0, 1, sb, 5000, 3, &sr) == 0, "isend");
	xwt_nodes[0].cap = 0; /* the receiver's PULLs stay queued */
	while (xwt_nodes[1].q.n) {
		f = xwt_qpop(1);
		deliver(1, &f);
		free(f.pl);
	}
	E_progress(1, budget);
	CHECK(rr->state == XWI_REQ_PENDING && xwi_engine_pulling(xwt_nodes[1].e),
	      "matched large receive not pulling (state %d)", rr->state);
	CHECK(xwi_engine_abort(xwt_nodes[1].e, rr, -EIO) == 0, "abort");
	CHECK(rr->state == XWI_REQ_DONE && rr->status.error == -EIO, "aborted status %d",
	      rr->status.error);
	CHECK(!xwi_engine_pulling(xwt_nodes[1].e), "pulling after the abort");
	CHECK(xwi_engine_abort(xwt_nodes[0].e, sr, -EIO) == 0, "abort the send");
	xwi_request_free(rr);
	xwi_request_free(sr);
	free(sb);
	net_free();
}

/* Engines freed with everything in flight: no leak (LeakSanitizer), no crash. */
static void test_teardown(void)
{
	const size_t sz[5] = { 0, 30, 200, 2000, 100000 };
	unsigned char *sb = malloc(100000), *rb = malloc(100000);

	xwt_epat_fill(sb, 100000, 90);
	for (int steps = 0; steps < 40; steps++) {
		struct xw_request *r, *all[13];
		int nr = 0;

		net_init2(small_cfg(1), small_cfg(2));
		marks_check = false;
		xwt_nodes[0].cap = xwt_nodes[1].cap = 3;
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
				if (xwt_nodes[i].q.n) {
					struct xwt_lframe f = xwt_qpop(i);

					deliver(i, &f);
					free(f.pl);
				}
				E_progress(i, budget);
			}
		}
		/* what is on the link arrives, nothing more goes out: PULLs,
		 * NOTIFYs and replies stay queued in the engines */
		for (int i = 0; i < 2; i++) {
			while (xwt_nodes[i].q.n) {
				struct xwt_lframe f = xwt_qpop(i);

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
	xwt_nodes[0].cap = xwt_nodes[1].cap = 3;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		for (int early = 0; early < 2; early++)
			for (int dir = 0; dir < 2; dir++)
				xfer(dir, !dir, t[i].len, t[i].rlen, early, seed++);
	/* a truncated large receive pulls only what overlaps the buffer */
	{
		struct markcount mc;
		unsigned char *sb = malloc(100000), *rb = malloc(1000 + XWT_GUARD);

		xwt_nlog = 0;
		xwt_epat_fill(sb, 100000, 1);
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
	unsigned char s[3][200], r[4][200 + XWT_GUARD];
	struct xw_request *sr[3], *rr[4];

	net_init(3, (struct xwi_engine_cfg[]){ small_cfg(1), small_cfg(2), small_cfg(3) });
	for (int i = 0; i < 3; i++)
		xwt_epat_fill(s[i], 200, 700 + i);
	/* posted: rr[0] from node 2 only, rr[1] from node 1 only */
	REQUIRE(xwi_engine_irecv_from(xwt_nodes[0].e, r[0], 200, 5, ALL, &xwt_nodes[2].addr, &rr[0]) == 0,
		"irecv_from");
	REQUIRE(xwi_engine_irecv_from(xwt_nodes[0].e, r[1], 200, 5, ALL, &xwt_nodes[1].addr, &rr[1]) == 0,
		"irecv_from");
	REQUIRE(E_isend(1, 0, s[1], 100, 5, &sr[1]) == 0, "isend");
	pump();
	CHECK(rr[0]->state == XWI_REQ_PENDING, "directed receive took another sender's message");
	CHECK(rr[1]->state == XWI_REQ_DONE && rr[1]->status.msg_len == 100 &&
	      xwt_epat_verify(r[1], 100, 701) < 0 && xwt_node_of(&rr[1]->status.src) == 1, "directed 1");
	REQUIRE(E_isend(2, 0, s[2], 150, 5, &sr[2]) == 0, "isend");
	pump();
	CHECK(rr[0]->state == XWI_REQ_DONE && rr[0]->status.msg_len == 150 &&
	      xwt_epat_verify(r[0], 150, 702) < 0 && xwt_node_of(&rr[0]->status.src) == 2, "directed 2");
	/* unexpected: a directed receive skips the other sender's older one */
	REQUIRE(E_isend(1, 0, s[1], 60, 9, &sr[0]) == 0, "isend");
	pump();
	xwi_request_free(sr[2]);
	REQUIRE(E_isend(2, 0, s[2], 70, 9, &sr[2]) == 0, "isend");
	pump();
	REQUIRE(xwi_engine_irecv_from(xwt_nodes[0].e, r[2], 200, 9, ALL, &xwt_nodes[2].addr, &rr[2]) == 0,
		"irecv_from");
	CHECK(rr[2]->state == XWI_REQ_DONE && rr[2]->status.msg_len == 70 &&
	      xwt_epat_verify(r[2], 70, 702) < 0, "directed unexpected");
	REQUIRE(E_irecv(0, r[3], 200, 0, 0, &rr[3]) == 0, "irecv");
	CHECK(rr[3]->state == XWI_REQ_DONE && rr[3]->status.msg_len == 60 &&
	      xwt_node_of(&rr[3]->status.src) == 1, "wildcard after directed");
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
	unsigned char *sb = malloc(big), *rb = malloc(big + XWT_GUARD), s[300];
	struct xw_request *sr[4], *rr[3];
	XW_OPTS(xw_status, st);
	__u64 c1 = 0, c2 = 0;

	net_init2(small_cfg(1), small_cfg(2));
	xwt_epat_fill(s, 300, 800);
	xwt_epat_fill(sb, big, 801);
	CHECK(xwi_engine_peek(xwt_nodes[1].e, 0, 0, NULL, false, &st, NULL) == -ENOMSG,
	      "peek on nothing");
	REQUIRE(E_isend(0, 1, s, 300, 0x10, &sr[0]) == 0, "isend");
	REQUIRE(E_isend(0, 1, sb, big, 0x20, &sr[1]) == 0, "isend");
	REQUIRE(E_isend(0, 1, s, 10, 0x30, &sr[2]) == 0, "isend");
	REQUIRE(E_isend(0, 1, sb, big, 0x40, &sr[3]) == 0, "isend");
	pump();
	/* peek: oldest matching, not taken, again the same */
	REQUIRE(xwi_engine_peek(xwt_nodes[1].e, 0, 0, NULL, false, &st, NULL) == 0, "peek");
	CHECK(st.match == 0x10 && st.msg_len == 300 && xwt_node_of(&st.src) == 0, "peek envelope");
	REQUIRE(xwi_engine_peek(xwt_nodes[1].e, 0x20, ALL, &xwt_nodes[0].addr, false, &st, NULL) == 0,
		"peek directed");
	CHECK(st.match == 0x20 && st.msg_len == big, "peek large envelope");
	CHECK(xwi_engine_peek(xwt_nodes[1].e, 0x20, ALL, &xwt_nodes[1].addr, false, &st, NULL) == -ENOMSG,
	      "peek from another sender");
	/* claim the large one: invisible to receives and peeks */
	REQUIRE(xwi_engine_peek(xwt_nodes[1].e, 0x20, ALL, NULL, true, &st, &c1) == 0 && c1, "claim");
	CHECK(xwi_engine_peek(xwt_nodes[1].e, 0x20, ALL, NULL, false, &st, NULL) == -ENOMSG,
	      "claimed message still visible");
	/* claim and discard the small one with 0 bytes */
	REQUIRE(xwi_engine_peek(xwt_nodes[1].e, 0x10, ALL, NULL, true, &st, &c2) == 0 && c2 != c1,
		"claim 2");
	REQUIRE(xwi_engine_irecv_claimed(xwt_nodes[1].e, c2, NULL, 0, &rr[2]) == 0, "discard");
	pump();
	CHECK(rr[2]->state == XWI_REQ_DONE && rr[2]->status.len == 0 &&
	      rr[2]->status.msg_len == 300, "discarded");
	xwi_request_free(rr[2]);
	/* wildcard receives skip the claimed message */
	REQUIRE(E_irecv(1, rb, big, 0, 0, &rr[0]) == 0, "irecv");
	CHECK(rr[0]->state == XWI_REQ_DONE && rr[0]->status.match == 0x30 &&
	      xwt_epat_verify(rb, 10, 800) < 0, "receive skips claimed");
	xwi_request_free(rr[0]);
	REQUIRE(E_irecv(1, rb, big, 0, 0, &rr[0]) == 0, "irecv");
	pump();
	CHECK(rr[0]->state == XWI_REQ_DONE && rr[0]->status.match == 0x40 &&
	      xwt_epat_verify(rb, big, 801) < 0, "large after claimed");
	xwi_request_free(rr[0]);
	memset(rb, 0, big);
	REQUIRE(xwi_engine_irecv_claimed(xwt_nodes[1].e, c1, rb, big, &rr[1]) == 0, "claimed recv");
	pump();
	CHECK(rr[1]->state == XWI_REQ_DONE && rr[1]->status.msg_len == big &&
	      rr[1]->status.match == 0x20 && xwt_epat_verify(rb, big, 801) < 0, "claimed large data");
	CHECK(xwi_engine_irecv_claimed(xwt_nodes[1].e, c1, rb, big, &rr[2]) == -ENOENT,
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
	XW_OPTS(xw_status, st);

	net_init2(small_cfg(1), small_cfg(2));
	xwt_epat_fill(sb, big, 900);
	for (size_t i = 0; i < 4; i++)
		for (int early = 0; early < 2; early++) {
			/* every bit of the 32 used: XW_DATA_MAX itself first */
			__u32 d = XW_DATA_MAX - (__u32)(i * 0x01010101u * 2 + (size_t)early);

			if (early)
				REQUIRE(E_irecv(1, rb, big, 0x55, ALL, &rr) == 0, "irecv");
			REQUIRE(xwi_engine_isend_data(xwt_nodes[0].e, &xwt_nodes[1].addr, sb, sz[i], 0x55,
						      XWI_SEND_DATA, d, &sr) == 0, "isend_data");
			/* and one without data right after */
			REQUIRE(E_isend(0, 1, sb, 5, 0x56, &sr2) == 0, "isend");
			pump();
			if (!early) {
				REQUIRE(xwi_engine_peek(xwt_nodes[1].e, 0x55, ALL, NULL, false, &st,
							NULL) == 0, "peek");
				CHECK(st.has_data && st.data == d, "peek data %#x", st.data);
				REQUIRE(E_irecv(1, rb, big, 0x55, ALL, &rr) == 0, "irecv");
				pump();
			}
			CHECK(rr->state == XWI_REQ_DONE && rr->status.has_data &&
			      rr->status.data == d && rr->status.msg_len == sz[i] &&
			      xwt_epat_verify(rb, sz[i], 900) < 0,
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
	unsigned char s[5000], r[5000 + XWT_GUARD];
	struct xw_request *sr, *sr2, *rr, *rr2;

	net_init2(small_cfg(1), small_cfg(2));
	xwt_epat_fill(s, sizeof(s), 3);

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
	CHECK(xwt_node_stats(1).unexpected_msgs == 1, "unexpected after cancel");
	REQUIRE(E_irecv(1, r, 100, 5, ALL, &rr) == 0, "irecv");
	CHECK(rr->state == XWI_REQ_DONE && xwt_epat_verify(r, 100, 3) < 0, "after cancel");
	xwi_request_free(rr);
	xwi_request_free(sr);

	/* queued send, nothing out yet: link closed */
	xwt_nodes[1].cap = 0;
	REQUIRE(E_isend(0, 1, s, 5000, 6, &sr) == 0, "isend large");
	REQUIRE(E_isend(0, 1, s, 300, 7, &sr2) == 0, "isend medium");
	CHECK(sr->state == XWI_REQ_PENDING, "queued");
	CHECK(E_cancel(0, sr2) == 0, "cancel queued medium");
	CHECK(sr2->state == XWI_REQ_DONE && sr2->status.error == -ECANCELED, "medium cancelled");
	CHECK(E_cancel(0, sr) == 0, "cancel queued large");
	CHECK(sr->state == XWI_REQ_DONE && sr->status.error == -ECANCELED, "large cancelled");
	CHECK(!xwi_engine_tx_pending(xwt_nodes[0].e), "nothing left to send");
	xwi_request_free(sr);
	xwi_request_free(sr2);
	xwt_nodes[1].cap = 512;
	pump();
	CHECK(xwt_nodes[1].q.n == 0 && xwt_node_stats(1).rx_frames[XW_PKT_RNDV] == 0, "cancelled frames sent");
	/* the receiver is not left waiting for the cancelled messages' ids */
	xfer(0, 1, 300, 300, true, 8);
	xfer(0, 1, 5000, 5000, false, 9);

	/* in progress: a MEDIUM with some fragments out */
	xwt_nodes[1].cap = 2;
	REQUIRE(E_isend(0, 1, s, 300, 10, &sr) == 0, "isend");
	CHECK(sr->state == XWI_REQ_PENDING, "medium partly out");
	CHECK(E_cancel(0, sr) == -EBUSY, "cancel started medium");
	xwt_nodes[1].cap = 512;
	REQUIRE(E_irecv(1, r, 300, 10, ALL, &rr) == 0, "irecv");
	pump();
	CHECK(sr->state == XWI_REQ_DONE && sr->status.error == 0 && rr->state == XWI_REQ_DONE &&
	      xwt_epat_verify(r, 300, 3) < 0, "medium after -EBUSY");
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
	CHECK(sr->state == XWI_REQ_DONE && rr->state == XWI_REQ_DONE && xwt_epat_verify(r, 5000, 3) < 0,
	      "large after -EBUSY");
	/* a pending receive released by the engine */
	REQUIRE(E_irecv(1, r, 10, 99, ALL, &rr2) == 0, "irecv");
	CHECK(xwi_engine_cancel(xwt_nodes[0].e, rr2) == -EINVAL, "cancel on the wrong engine");
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
	xwt_epat_fill(s, sizeof(s), 4);
	for (int i = 0; i < 3; i++) {
		REQUIRE(E_irecv(1, r, sz[i], i, ALL, &rr[i]) == 0, "irecv");
		REQUIRE(E_isend(0, 1, s, sz[i], i, &sr[i]) == 0, "isend");
		pump();
		CHECK(sr[i]->state == XWI_REQ_DONE && rr[i]->state == XWI_REQ_DONE &&
		      xwt_epat_verify(r, sz[i], 4) < 0, "marks %#x shift %u msg %d", marks, shift, i);
		xwi_request_free(sr[i]);
		xwi_request_free(rr[i]);
	}
	check_marks(mc);
	*medium_lat = ~0u;
	nreply_lat = 0;
	for (size_t i = 0; i < xwt_nlog; i++) {
		if (xwt_flog[i].h.type == XW_PKT_MEDIUM && (xwt_flog[i].h.flags & XW_F_LAT))
			*medium_lat = ntohl(xwt_flog[i].h.frag_idx);
		if (xwt_flog[i].h.type == XW_PKT_PULL_REPLY && (xwt_flog[i].h.flags & XW_F_LAT) &&
		    nreply_lat < 8)
			reply_lat[nreply_lat++] = ntohl(xwt_flog[i].h.frag_idx);
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
	xwt_epat_fill(s, 300, 5);
	/* link open: a lone SMALL has no MORE */
	REQUIRE(E_irecv(1, r[0], 300, 0, 0, &rr[0]) == 0, "irecv");
	REQUIRE(E_isend(0, 1, s, 10, 1, &sr[0]) == 0, "isend");
	CHECK(xwt_nlog == 1 && !(xwt_flog[0].h.flags & XW_F_MORE) && (xwt_flog[0].h.flags & XW_F_LAT),
	      "lone SMALL flags %#x", xwt_nlog ? xwt_flog[0].h.flags : 0);
	pump();
	xwi_request_free(sr[0]);
	xwi_request_free(rr[0]);

	/* link closed: MEDIUM (5) + SMALL queued to B, emitted in one burst */
	xwt_nlog = 0;
	xwt_nodes[1].cap = 0;
	REQUIRE(E_isend(0, 1, s, 300, 2, &sr[0]) == 0, "isend");
	REQUIRE(E_isend(0, 1, s, 10, 3, &sr[1]) == 0, "isend");
	CHECK(xwt_nlog == 0 && xwi_engine_tx_pending(xwt_nodes[0].e), "queued");
	xwt_nodes[1].cap = 512;
	CHECK(E_progress(0, INT_MAX) == 6, "6 frames");
	CHECK(xwt_nlog == 6, "xwt_nlog %zu", xwt_nlog);
	for (size_t i = 0; i < xwt_nlog; i++)
		CHECK(!!(xwt_flog[i].h.flags & XW_F_MORE) == (i < 5), "burst frame %zu flags %#x", i,
		      xwt_flog[i].h.flags);
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
	xwt_nlog = 0;
	xwt_nodes[1].cap = xwt_nodes[2].cap = 0;
	REQUIRE(E_isend(0, 1, s, 300, 4, &sr[0]) == 0, "isend");
	REQUIRE(E_isend(0, 2, s, 300, 4, &sr[1]) == 0, "isend");
	xwt_nodes[1].cap = xwt_nodes[2].cap = 512;
	CHECK(E_progress(0, INT_MAX) == 10, "10 frames");
	for (size_t i = 0; i < xwt_nlog; i++) {
		CHECK(xwt_flog[i].dst == 1 + (int)(i % 2), "round robin: frame %zu to %d", i,
		      xwt_flog[i].dst);
		CHECK(!!(xwt_flog[i].h.flags & XW_F_MORE) == (i < 8), "frame %zu (to %d idx %u) flags %#x",
		      i, xwt_flog[i].dst, ntohl(xwt_flog[i].h.frag_idx), xwt_flog[i].h.flags);
	}
	/* budget: a partial pass keeps MORE on the last frame emitted */
	xwi_request_free(sr[0]);
	xwi_request_free(sr[1]);
	pump();
	for (int i = 1; i < 3; i++) {
		REQUIRE(E_irecv(i, r[i], 300, 4, ALL, &rr[i]) == 0, "irecv");
		CHECK(rr[i]->state == XWI_REQ_DONE && xwt_epat_verify(r[i], 300, 5) < 0, "peer %d", i);
		xwi_request_free(rr[i]);
	}
	xwt_nlog = 0;
	xwt_nodes[1].cap = 0;
	REQUIRE(E_isend(0, 1, s, 300, 4, &sr[0]) == 0, "isend");
	xwt_nodes[1].cap = 512;
	CHECK(E_progress(0, 2) == 2, "budget 2");
	CHECK(xwt_nlog == 2 && (xwt_flog[1].h.flags & XW_F_MORE), "MORE kept across a budget cut");
	CHECK(E_progress(0, 0) == 0 && E_progress(0, -1) == 0, "budget <= 0");
	pump();
	xwi_request_free(sr[0]);
	REQUIRE(E_irecv(1, r[1], 300, 4, ALL, &rr[1]) == 0, "irecv");
	CHECK(rr[1]->state == XWI_REQ_DONE && xwt_epat_verify(r[1], 300, 5) < 0, "after budget");
	xwi_request_free(rr[1]);
	net_free();
}

/* ---- bounded memory -------------------------------------------------------------- */

static void test_unexpected_bound(void)
{
	struct xwi_engine_cfg a = small_cfg(1), b = small_cfg(2);
	unsigned char s[1000], r[1000 + XWT_GUARD];
	struct xw_request *sr, *rr[100];
	struct xwi_engine_stats st;
	int done = 0;

	a.eager_max = b.eager_max = 1024;
	b.unexpected_max = 10000;
	net_init2(a, b);
	xwt_epat_fill(s, sizeof(s), 6);
	/* 100 MEDIUM messages of 1000 bytes (16 fragments) nobody receives yet */
	for (int i = 0; i < 100; i++) {
		s[0] = (unsigned char)i;
		REQUIRE(E_isend(0, 1, s, 1000, 0x100 + i, &sr) == 0, "isend");
		pump();
		CHECK(sr->state == XWI_REQ_DONE, "eager send done");
		xwi_request_free(sr);
	}
	st = xwt_node_stats(1);
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
	st = xwt_node_stats(1);
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
	CHECK(xwt_node_stats(1).unexpected_bytes == 0, "buffer released");
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
	unsigned char *s[4], r[4][5000 + XWT_GUARD];
	struct xw_request *sr[4], *rr[4];
	struct xwi_engine_stats st;
	struct markcount mc;

	b.pushed_max = 1000; /* one message's 576 pushed bytes */
	net_init2(a, b);
	for (int i = 0; i < 4; i++) {
		s[i] = malloc(5000);
		xwt_epat_fill(s[i], 5000, 60 + i);
		REQUIRE(E_isend(0, 1, s[i], 5000, 0x33, &sr[i]) == 0, "isend");
	}
	pump();
	st = xwt_node_stats(1);
	CHECK(st.pushed_bytes == 576 && st.unexpected_msgs == 4, "pushed %llu unexpected %llu",
	      (unsigned long long)st.pushed_bytes, (unsigned long long)st.unexpected_msgs);
	CHECK(st.rx_dropped_nomem == 3 * 9, "dropped %llu pushed frames",
	      (unsigned long long)st.rx_dropped_nomem);
	for (int i = 0; i < 4; i++) {
		CHECK(sr[i]->state == XWI_REQ_PENDING, "large send %d waits", i);
		memset(r[i] + 5000, 0xA5, XWT_GUARD);
		REQUIRE(E_irecv(1, r[i], 5000, 0x33, ALL, &rr[i]) == 0, "irecv");
	}
	pump();
	for (int i = 0; i < 4; i++) {
		CHECK(sr[i]->state == XWI_REQ_DONE && rr[i]->state == XWI_REQ_DONE &&
		      xwt_epat_verify(r[i], 5000, 60 + i) < 0 && xwt_guard_ok(r[i] + 5000),
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
	xwt_epat_fill(s, sizeof(s), 7);
	xwt_nodes[1].cap = 0;
	for (int i = 0; i < 3; i++)
		REQUIRE(E_isend(0, 1, s, 100 * (i + 1), 0x10, &sr[i]) == 0, "isend %d", i);
	CHECK(E_isend(0, 1, s, 10, 0x10, &sr[3]) == -EAGAIN, "backlog full");
	xwt_nodes[1].cap = 4; /* the link takes a few frames at a time */
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
		      xwt_epat_verify(r, rr->status.msg_len, 7) < 0, "message %d", got);
		xwi_request_free(rr);
		got++;
	}
	CHECK(got == 4, "%d messages (the refused one must not be queued)", got);
	/* argument errors */
	CHECK(xwi_engine_isend(xwt_nodes[0].e, NULL, s, 1, 0, &sr[0]) == -EINVAL, "no dst");
	CHECK(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, NULL, 1, 0, &sr[0]) == -EINVAL, "no buf");
	CHECK(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, s, 1, 0, NULL) == -EINVAL, "no reqp");
	if (sizeof(size_t) > 4)
		CHECK(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, s, (size_t)1 << 32, 0, &sr[0]) ==
		      -EMSGSIZE, "4 GiB");
	CHECK(xwi_engine_irecv(xwt_nodes[0].e, NULL, 1, 0, 0, &rr) == -EINVAL, "irecv no buf");
	CHECK(xwi_request_free(NULL) == -EINVAL, "free NULL");
	CHECK(!xwi_engine_tx_pending(xwt_nodes[0].e), "nothing queued by failed calls");
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
	xwt_epat_fill(pl, sizeof(pl), 8);
	before = xwt_node_stats(1);

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
	CHECK(xwi_engine_rx(xwt_nodes[1].e, &fake, &h, NULL, 10) == -EINVAL, "NULL payload");

	after = xwt_node_stats(1);
	CHECK(after.rx_bad == before.rx_bad + (unsigned)bad, "rx_bad %llu, want %d",
	      (unsigned long long)after.rx_bad, bad);
	after.rx_bad = before.rx_bad;
	CHECK(!memcmp(&before, &after, sizeof(before)), "stats changed by bad frames");
	CHECK(!xwi_engine_tx_pending(xwt_nodes[1].e), "bad frames made work");

	/* state-dependent: a message's fields change mid-way (fake peer) */
	REQUIRE(E_irecv(1, r, 1000, 0x5, ALL, &rr) == 0, "irecv");
	h = mkhdr(XW_PKT_MEDIUM, 9, 2, 0, 300, 0, 5, 0, 64, 0x5);
	CHECK(E_rx_from(1, &fake, &h, pl, 64) == 0, "fragment 0");
	before = xwt_node_stats(1);
	BAD(mkhdr(XW_PKT_MEDIUM, 9, 2, 0, 310, 1, 5, 64, 64, 0x5), pl + 64, 64, "msg_len changed");
	BAD(mkhdr(XW_PKT_MEDIUM, 9, 2, 0, 300, 1, 5, 64, 64, 0x6), pl + 64, 64, "match changed");
	BAD(mkhdr(XW_PKT_PULL_REPLY, 9, 2, 0, 300, 1, 5, 64, 64, 0x5), pl + 64, 64,
	    "class changed");
	BAD(mkhdr(XW_PKT_RNDV, 9, 2, 0, 300, 1, 5, 0, 64, 0x5), pl, 64, "RNDV for an eager id");
	after = xwt_node_stats(1);
	CHECK(after.rx_bad == before.rx_bad + 4, "state-dependent rx_bad");
	after.rx_bad = before.rx_bad;
	CHECK(!memcmp(&before, &after, sizeof(before)), "stats changed by bad frames");
	for (__u32 i = 1; i < 5; i++) {
		__u32 len = i == 4 ? 300 - 256 : 64;

		h = mkhdr(XW_PKT_MEDIUM, 9, 2, 0, 300, i, 5, i * 64, (__u16)len, 0x5);
		CHECK(E_rx_from(1, &fake, &h, pl + i * 64, len) == 0, "fragment %u", i);
	}
	CHECK(rr->state == XWI_REQ_DONE && rr->status.msg_len == 300 && xwt_epat_verify(r, 300, 8) < 0 &&
	      xw_addr_equal(&rr->status.src, &fake), "message completed after bad frames");
	xwi_request_free(rr);
	/* trailing padding is fine */
	REQUIRE(E_irecv(1, r, 1000, 0x5, ALL, &rr) == 0, "irecv");
	h = mkhdr(XW_PKT_SMALL, 9, 2, 1, 10, 0, 1, 0, 10, 0x5);
	CHECK(E_rx_from(1, &fake, &h, pl, 60) == 0, "padded SMALL");
	CHECK(rr->state == XWI_REQ_DONE && rr->status.msg_len == 10 && xwt_epat_verify(r, 10, 8) < 0,
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
	CHECK(!xwi_engine_tx_pending(xwt_nodes[1].e), "nothing to send");
	/* an unexpected RNDV (K = 9); a fragment never pushed nor asked for */
	h = mkhdr(XW_PKT_RNDV, 9, 2, 2, 5000, 8, 79, 0, 64, 0x77);
	CHECK(E_rx_from(1, &fake, &h, pl, 64) == 0, "RNDV");
	before = xwt_node_stats(1);
	h = mkhdr(XW_PKT_PULL_REPLY, 9, 2, 2, 5000, 20, 79, 20 * 64, 64, 0x77);
	CHECK(E_rx_from(1, &fake, &h, pl, 64) == 0, "unasked PULL_REPLY ignored");
	after = xwt_node_stats(1);
	after.rx_frames[XW_PKT_PULL_REPLY]--;
	CHECK(!memcmp(&before, &after, sizeof(before)), "unasked fragment changed state");
	h = mkhdr(XW_PKT_PULL_REPLY, 9, 2, 2, 5000, 3, 79, 3 * 64, 64, 0x77);
	CHECK(E_rx_from(1, &fake, &h, pl, 64) == 0, "pushed fragment");
	CHECK(xwt_node_stats(1).pushed_bytes == 576, "pushed bytes held %llu",
	      (unsigned long long)xwt_node_stats(1).pushed_bytes);

	/* PULL out of range / NOTIFY with a wrong length for a real send */
	{
		unsigned char *s = malloc(5000), rb[5000];

		xwt_epat_fill(s, 5000, 9);
		REQUIRE(E_isend(0, 1, s, 5000, 0x9, &sr) == 0, "isend");
		pump();
		before = xwt_node_stats(0);
		pr.nfrags = htonl(1);
		{
			struct xw_hdr hh = mkhdr(XW_PKT_PULL, 2, 1, 0, 5001, 10, 79, 640, 8, 0x9);
			int rc = E_rx_from(0, &xwt_nodes[1].addr, &hh, &pr, 8);

			CHECK(rc == -EPROTO, "PULL msg_len differs: %d", rc);
			hh = mkhdr(XW_PKT_PULL, 2, 1, 0, 5000, 10, 79, 640, 8, 0x8);
			rc = E_rx_from(0, &xwt_nodes[1].addr, &hh, &pr, 8);
			CHECK(rc == -EPROTO, "PULL match differs: %d", rc);
			hh = mkhdr(XW_PKT_NOTIFY, 2, 1, 0, 4999, 0, 0, 0, 0, 0x9);
			rc = E_rx_from(0, &xwt_nodes[1].addr, &hh, NULL, 0);
			CHECK(rc == -EPROTO, "NOTIFY msg_len differs: %d", rc);
		}
		after = xwt_node_stats(0);
		CHECK(after.rx_bad == before.rx_bad + 3 && sr->state == XWI_REQ_PENDING &&
		      !xwi_engine_tx_pending(xwt_nodes[0].e), "send unaffected");
		REQUIRE(E_irecv(1, rb, 5000, 0x9, ALL, &rr) == 0, "irecv");
		pump();
		CHECK(sr->state == XWI_REQ_DONE && rr->state == XWI_REQ_DONE &&
		      xwt_epat_verify(rb, 5000, 9) < 0, "large transfer after bad frames");
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

	xwt_epat_fill(s, 20000, 11);
	for (int round = 0; round < 40; round++) {
		net_init2(small_cfg(1), small_cfg(2));
		rx_expect_ok = false;
		marks_check = false;
		REQUIRE(E_irecv(1, r, round % 2 ? 20000 : 700, 0, 0, &rr) == 0, "irecv");
		REQUIRE(E_isend(0, 1, s, (size_t)(rs % 20000), 0, &sr) == 0, "isend");
		for (int it = 0; it < 20000 && (xwt_nodes[0].q.n || xwt_nodes[1].q.n ||
						 xwi_engine_tx_pending(xwt_nodes[0].e) ||
						 xwi_engine_tx_pending(xwt_nodes[1].e));
		     it++) {
			for (int i = 0; i < 2; i++) {
				while (xwt_nodes[i].q.n) {
					struct xwt_lframe f = xwt_qpop(i);
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
			xwt_nodes[0].cap = xwt_nodes[1].cap = 3;
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			for (int early = 0; early < 2; early++)
				for (int dir = 0; dir < 2; dir++)
					xfer(dir, !dir, sizes[i], sizes[i], early, seed++);
		/* truncated too */
		xfer(0, 1, 5000, 100, true, seed++);
		xfer(0, 1, 5000, 100, false, seed++);
		xfer(0, 1, 300, 100, false, seed++);
		st0 = xwt_node_stats(0);
		st1 = xwt_node_stats(1);
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
	test_pull_abort();
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
	xwt_log_free();
	return xwt_done();
}
