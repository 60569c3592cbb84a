// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The protocol engine's connection layer (userspace/lib/engine.h with
 * cfg.reliable) over the in-memory link (tests/lib/link.h, engine_net.h),
 * and CRC32C.  The message layer alone: test_engine_msg.c.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>

#include "harness.h"
#include "engine_net.h"
#include "crc32c.h"
#include "engine_int.h"

#define ALL ~0ULL

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
	/* node d does not poll (it computes, or is stopped): frames wait in
	 * its queue (beyond XWT_BUSY_Q they are dropped, as by a full RX
	 * ring) and its "XDP program" answers PROBEs at once */
	bool busy[XWT_MAXN];
	/* node d is dead (its engine freed) and its "XDP program" answers
	 * PROBEs with the "gone" answer (its socket closed); without this a
	 * dead node answers nothing (its host is down) */
	bool gone[XWT_MAXN];
	bool gone_badcrc; /* ... with a wrong CRC32C */
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
	struct xwt_lq *q = &xwt_nodes[d].q;

	REQUIRE(q->n < XWT_RING, "node %d queue overflow", d);
	REQUIRE(xwt_lq_push(q, h, pl, len, s) == 0, "malloc");
	if (q->n > 1 && chance(imp.reorder_ppm)) {
		/* swap with a random earlier frame */
		size_t k = (size_t)(rng() % (q->n - 1));
		struct xwt_lframe *f = xwt_lq_at(q, q->n - 1), *g = xwt_lq_at(q, k), t = *g;

		*g = *f;
		*f = t;
		imp.reordered++;
	}
}

#define XWT_BUSY_Q 256

/* A PROBE to node @d answered as its XDP program does: turned around. */
static void xdp_answer(int s, int d, const struct xw_hdr *h)
{
	struct xw_hdr r = *h;

	r.type = XW_PKT_PROBE_REPLY;
	r.dst_ep = h->src_ep;
	r.src_ep = h->dst_ep;
	r.csum = h->data;
	r.data = 0;
	rq_push(s, &r, NULL, 0, d);
}

/* The same program's answer for an endpoint whose socket is closed. */
static void xdp_answer_gone(int s, int d, const struct xw_hdr *h)
{
	struct xw_hdr r = *h;

	r.type = XW_PKT_PROBE_REPLY;
	r.flags = XW_F_GONE;
	r.dst_ep = h->src_ep;
	r.src_ep = h->dst_ep;
	r.csum = imp.gone_badcrc ? h->rsvd2 ^ htonl(1) : h->rsvd2;
	r.rsvd2 = 0;
	r.data = 0;
	rq_push(s, &r, NULL, 0, d);
}

/* The bytes every data frame node 0 sends of one large message (by its
 * match) must carry at its frag_off: checked in each transmission, the
 * retransmissions of lazily kept fragments too (test_lazy_*). */
static struct {
	const unsigned char *ref;
	size_t len;
	__u64 match;
	unsigned long checked, bad;
} lazy_ref;

static void lazy_check(int s, const struct xw_hdr *h, const void *payload, size_t len)
{
	size_t off = ntohl(h->frag_off);

	if (!lazy_ref.ref || s != 0 || !len || be64toh(h->match) != lazy_ref.match ||
	    (h->type != XW_PKT_PULL_REPLY && h->type != XW_PKT_RNDV))
		return;
	lazy_ref.checked++;
	if (off > lazy_ref.len || len > lazy_ref.len - off ||
	    memcmp(payload, lazy_ref.ref + off, len))
		lazy_ref.bad++;
}

static bool sink_unknown;		      /* frames to unknown addresses: counted */
static __u64 sink_frames[XW_PKT_TYPE_MAX]; /* ... per type                         */

static int r_send(void *ctx, const struct xw_addr *dst, const struct xw_hdr *h,
		  const void *payload, size_t len)
{
	struct xwt_node *sn = ctx;
	int s = sn->id, d = xwt_node_of(dst);

	if (d < 0 && sink_unknown) {
		/* an answer to a forged source address */
		sink_frames[h->type < XW_PKT_TYPE_MAX ? h->type : 0]++;
		return 0;
	}
	REQUIRE(d >= 0, "frame to an unknown address");
	CHECK(len == ntohs(h->payload_len), "len %zu payload_len %u", len, ntohs(h->payload_len));
	if (!xwt_nodes[d].e) { /* a dead node */
		if (imp.gone[d] && h->type == XW_PKT_PROBE && !imp.blackhole)
			xdp_answer_gone(s, d, h);
		return 0;
	}
	CHECK(!(h->flags & XW_F_LAT) || (h->type != XW_PKT_ACK && h->type != XW_PKT_CONNECT &&
					  h->type != XW_PKT_CONNECT_REPLY && h->type != XW_PKT_CLOSE),
	      "LAT on type %u", h->type);
	if (xwt_nodes[d].q.n + 2 >= (size_t)xwt_nodes[d].cap)
		return -EAGAIN;
	xwt_log_add(s, d, h);
	lazy_check(s, h, payload, len);
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
	if (imp.busy[d] && h->type == XW_PKT_PROBE) {
		xdp_answer(s, d, h);
		return 0;
	}
	if (imp.busy[d] && xwt_nodes[d].q.n >= XWT_BUSY_Q) {
		imp.dropped++;
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

static bool r_lossless(void *ctx, const struct xw_addr *peer)
{
	(void)ctx;
	(void)peer;
	return true;
}

/* The nodes as peers on one host (ops.lossless: the local ring). */
static const struct xwi_engine_ops l_ops = { .send = r_send, .now_ns = r_now,
					     .random = r_random, .lossless = r_lossless };

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
	xwt_nlog = 0;
	xwt_nnodes = n;
	for (int i = 0; i < n; i++)
		xwt_node_start(i, &cfgs[i], &r_ops, 4096);
}

static void rnet_init2(struct xwi_engine_cfg a, struct xwi_engine_cfg b, __u32 seed)
{
	struct xwi_engine_cfg c[2] = { a, b };

	rnet_init(2, c, seed);
}

/* Replace node @i's engine by a new incarnation (same address). */
static void rnode_restart(int i)
{
	xwt_drop_queue(i);
	xwi_engine_free(xwt_nodes[i].e);
	xwt_nodes[i].e = xwi_engine_new(&xwt_nodes[i].cfg, &r_ops, &xwt_nodes[i]);
	REQUIRE(xwt_nodes[i].e, "xwi_engine_new");
}

/* Two nodes of which node 1 never existed (its engine freed at once). */
static void rnet_init_dead1(const struct xwi_engine_cfg *cfgs, __u32 seed)
{
	rnet_init(2, cfgs, seed);
	xwi_engine_free(xwt_nodes[1].e);
	xwt_nodes[1].e = NULL;
}

static void rnet_free(void)
{
	for (int i = 0; i < xwt_nnodes; i++) {
		xwt_drop_queue(i);
		xwi_engine_free(xwt_nodes[i].e);
		xwt_nodes[i].e = NULL;
	}
	xwt_nnodes = 0;
}

static int rx_rc_bad; /* rx returned something else than 0, -EBADMSG */
static bool rlocal;   /* the nodes are local peers: lossless, no CRC */

/* Deliver what node @i's queue holds now (nothing else moves); any? */
static bool rdeliver(int i)
{
	size_t n = xwt_nodes[i].q.n;

	for (size_t k = 0; k < n; k++) {
		struct xwt_lframe f = xwt_qpop(i);
		struct xw_addr src = xwt_nodes[f.src].addr;
		int rc;

		src.nonce = 0; /* a frame's source carries none */
		rc = rlocal ? xwi_engine_rx_local(xwt_nodes[i].e, &src, &f.h, f.pl, f.len)
			    : xwi_engine_rx(xwt_nodes[i].e, &src, &f.h, f.pl, f.len);

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

	for (int i = 0; i < xwt_nnodes; i++) {
		if (!xwt_nodes[i].e || imp.busy[i])
			continue;
		if (rdeliver(i))
			moved = true;
		if (xwi_engine_progress(xwt_nodes[i].e, 64) > 0)
			moved = true;
		xwt_bounds_check(i);
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

		for (int i = 0; i < xwt_nnodes; i++)
			busy |= xwt_nodes[i].e && !imp.busy[i] &&
				(xwt_nodes[i].q.n || xwi_engine_tx_pending(xwt_nodes[i].e));
		if (done && done(arg))
			return true;
		if (!busy) {
			__u64 d = UINT64_MAX;

			for (int i = 0; i < xwt_nnodes; i++) {
				__u64 x = xwt_nodes[i].e && !imp.busy[i]
						  ? xwi_engine_next_deadline(xwt_nodes[i].e)
						  : UINT64_MAX;

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

/* A batch of messages between xwt_nodes, verified byte for byte. */
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
				x->rb = malloc(x->len + XWT_GUARD);
				REQUIRE(x->sb && x->rb, "malloc");
				xwt_epat_fill(x->sb, x->len, x->seed);
				memset(x->rb, 0, x->len);
				memset(x->rb + x->len, 0xA5, XWT_GUARD);
			}
			if (pass == (late ? 1 : 0))
				REQUIRE(xwi_engine_irecv(xwt_nodes[x->b].e, x->len ? x->rb : NULL, x->len,
							 tag, ALL, &x->rr) == 0, "irecv");
			if (pass == (late ? 0 : 1)) {
				int rc;

				while ((rc = xwi_engine_isend(xwt_nodes[x->a].e, &xwt_nodes[x->b].addr,
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
			bad = xwt_epat_verify(x->rb, x->len, x->seed);
			CHECK(bad < 0, "seed %u %s: msg %zu (%zu bytes): byte %ld wrong", rseed, what, i,
			      x->len, bad);
			CHECK(xwt_guard_ok(x->rb + x->len), "seed %u %s: written past the buffer", rseed,
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
	return xwt_node_stats(i);
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
	unsigned char inc[32], big[9001];

	for (int i = 0; i < 32; i++)
		inc[i] = (unsigned char)i;
	xwt_epat_fill(big, sizeof(big), 5);
	/* RFC 3720 (iSCSI) B.4 test vectors, and the classic check value */
	CHECK(xwi_crc32c(0, "123456789", 9) == 0xE3069283, "crc32c check value");
	CHECK(xwi_crc32c(0, zeros, 32) == 0x8A9136AA, "crc32c 32 zeros");
	CHECK(xwi_crc32c(0, ones, 32) == 0x62A8AB43, "crc32c 32 ones");
	CHECK(xwi_crc32c(0, inc, 32) == 0x46DD794E, "crc32c 0..31");
	CHECK(xwi_crc32c_sw(0, "123456789", 9) == 0xE3069283, "crc32c table check value");
	CHECK(xwi_crc32c_sw(0, inc, 32) == 0x46DD794E, "crc32c table 0..31");
	/* up to a jumbo frame: the three interleaved streams, any tail */
	for (size_t cut = 0; cut < sizeof(big); cut += 37)
		CHECK(xwi_crc32c(xwi_crc32c(0, big, cut), big + cut, sizeof(big) - cut) ==
			      xwi_crc32c_sw(0, big, sizeof(big)),
		      "crc32c incremental at %zu", cut);
	CHECK(xwi_crc32c(0, NULL, 0) == 0, "crc32c of nothing");
	/* fused with a copy: the same CRC, the same bytes, nothing written
	 * past the copy (any length, any alignment of either side) */
	for (size_t cut = 0; cut < sizeof(big); cut += 53) {
		static unsigned char dst[9001 + 8 + XWT_GUARD];
		size_t n = sizeof(big) - cut, a = cut % 8;

		memset(dst, 0xA5, sizeof(dst));
		CHECK(xwi_crc32c_copy(xwi_crc32c(0, big, cut), dst + a, big + cut, n) ==
			      xwi_crc32c_sw(0, big, sizeof(big)),
		      "crc32c fused with a copy at %zu", cut);
		CHECK(!memcmp(dst + a, big + cut, n) && xwt_guard_ok(dst + a + n) &&
			      (!a || dst[a - 1] == 0xA5),
		      "crc32c copy at %zu: bytes", cut);
	}
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
		      !xwi_engine_has_unexpected(xwt_nodes[i].e),
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
	for (size_t i = 0; i < xwt_nlog; i++)
		if (!xwt_flog[i].h.session || !xwt_flog[i].h.csum) {
			CHECK(0, "frame %zu type %u without session or csum", i, xwt_flog[i].h.type);
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
		xwt_epat_fill(sb, sizeof(sb), 41);
		xwt_epat_fill(sb2, sizeof(sb2), 42);
		REQUIRE(xwi_engine_irecv(xwt_nodes[1].e, rb, sizeof(rb), 9, ALL, &rr) == 0, "irecv");
		REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb, sizeof(sb), 9, &sr) == 0,
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
		REQUIRE(xwi_engine_irecv(xwt_nodes[0].e, rb2, sizeof(rb2), 10, ALL, &rr2) == 0, "irecv");
		REQUIRE(xwi_engine_isend(xwt_nodes[1].e, &xwt_nodes[0].addr, sb2, sizeof(sb2), 10, &sr2) == 0,
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
	REQUIRE(xwi_engine_irecv(xwt_nodes[1].e, rb[N], 200, 99, ALL, &x) == 0, "irecv");
	REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb[0], 10, 99, &ar) == 0, "isend");
	rpump(NULL, NULL, 100000000ULL);
	CHECK(x->state == XWI_REQ_DONE && !x->status.error, "reconnect: set-up message");
	xwi_request_free(x);
	xwi_request_free(ar);
	imp.mute[0] = true;
	REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb[0], 10, 98, &ar) == 0, "isend");
	for (int i = 0; i < N; i++) {
		xwt_epat_fill(sb[i], 200, 500 + (__u32)i);
		REQUIRE(xwi_engine_irecv(xwt_nodes[0].e, rb[i], 200, 100 + (__u64)i, ALL, &rr[i]) == 0,
			"irecv");
		REQUIRE(xwi_engine_isend(xwt_nodes[1].e, &xwt_nodes[0].addr, sb[i], 200, 100 + (__u64)i,
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
	REQUIRE(xwi_engine_irecv(xwt_nodes[0].e, rb[0], 200, 0, 0, &x) == 0, "irecv any");
	REQUIRE(xwi_engine_irecv(xwt_nodes[1].e, rb[N], 200, 97, ALL, &rr[N]) == 0, "irecv");
	REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb[1], 20, 97, &ar) == 0, "isend");
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
	CHECK(xwi_engine_cancel(xwt_nodes[0].e, x) == 0, "cancel");
	xwi_request_free(x);
	xwi_request_free(ar);
	xwi_request_free(rr[N]);
	rsettle();
	a = rst(0);
	b = rst(1);
	CHECK(!a.unexpected_bytes && !b.unexpected_bytes && !xwi_engine_has_unexpected(xwt_nodes[0].e),
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
		xwt_epat_fill(mb, L, 77);
		REQUIRE(xwi_engine_irecv(xwt_nodes[1].e, rb[0], 200, 99, ALL, &y) == 0, "irecv");
		REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb[0], 10, 99, &ys) == 0, "isend");
		rpump(NULL, NULL, 100000000ULL);
		xwi_request_free(y);
		xwi_request_free(ys);
		REQUIRE(xwi_engine_irecv(xwt_nodes[0].e, mr, L, 5, ALL, &mrq) == 0, "irecv");
		imp.drop_nth[1][XW_PKT_MEDIUM] = 0xFFFFFFF8u; /* fragments 0-2 pass */
		imp.sent_of[1][XW_PKT_MEDIUM] = 0;
		imp.mute[0] = true; /* and A's acks are lost */
		REQUIRE(xwi_engine_isend(xwt_nodes[1].e, &xwt_nodes[0].addr, mb, L, 5, &ms) == 0, "isend");
		REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb[0], 10, 98, &ys) == 0, "isend");
		rpump(NULL, NULL, 1500000000ULL);
		CHECK(rst(0).timeouts == 1 && mrq->state == XWI_REQ_DONE &&
			      mrq->status.error == -ETIMEDOUT,
		      "reconnect: A's give-up did not fail its half-received receive (%d/%d)",
		      mrq->state, mrq->status.error);
		xwi_request_free(mrq);
		imp.mute[0] = false;
		imp.drop_nth[1][XW_PKT_MEDIUM] = 0;
		REQUIRE(xwi_engine_irecv(xwt_nodes[0].e, mr, L, 5, ALL, &mrq) == 0, "irecv");
		xwi_request_free(ys);
		REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb[0], 10, 97, &ys) == 0, "isend");
		rpump(NULL, NULL, 3000000000ULL);
		/* the half A had taken went with its failed receive: the rest,
		 * carried over, is ignored (not a second, broken message) */
		CHECK(mrq->state == XWI_REQ_PENDING && rst(1).reconnects == 1 &&
			      ms->state == XWI_REQ_DONE && !ms->status.error,
		      "reconnect: medium after a failed receive: receive %d/%d, reconnects %llu",
		      mrq->state, mrq->status.error, (unsigned long long)rst(1).reconnects);
		xwi_engine_cancel(xwt_nodes[0].e, mrq);
		xwi_request_free(mrq);
		xwi_request_free(ms);
		xwi_request_free(ys);
		rsettle();
		rnet_free();

		/* the same, the receive not posted yet: A keeps the half, the
		 * carried rest completes it */
		rnet_init2(c, d, 952);
		rx_rc_bad = 0;
		REQUIRE(xwi_engine_irecv(xwt_nodes[1].e, rb[0], 200, 99, ALL, &y) == 0, "irecv");
		REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb[0], 10, 99, &ys) == 0, "isend");
		rpump(NULL, NULL, 100000000ULL);
		xwi_request_free(y);
		xwi_request_free(ys);
		imp.drop_nth[1][XW_PKT_MEDIUM] = 0xFFFFFFF8u;
		imp.sent_of[1][XW_PKT_MEDIUM] = 0;
		imp.mute[0] = true;
		REQUIRE(xwi_engine_isend(xwt_nodes[1].e, &xwt_nodes[0].addr, mb, L, 5, &ms) == 0, "isend");
		REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb[0], 10, 98, &ys) == 0, "isend");
		rpump(NULL, NULL, 1500000000ULL);
		CHECK(rst(0).timeouts == 1, "reconnect: A did not give up");
		imp.mute[0] = false;
		imp.drop_nth[1][XW_PKT_MEDIUM] = 0;
		xwi_request_free(ys);
		REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb[0], 10, 97, &ys) == 0, "isend");
		rpump(NULL, NULL, 3000000000ULL);
		memset(mr, 0, L);
		REQUIRE(xwi_engine_irecv(xwt_nodes[0].e, mr, L, 5, ALL, &mrq) == 0, "irecv");
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
		xwt_epat_fill(mb, L, 720);
		imp.drop_nth[0][XW_PKT_MEDIUM] = 1u << 3 | 1u << 7 | 1u << 11;
		REQUIRE(xwi_engine_irecv(xwt_nodes[1].e, mr, L, 3, ALL, &rr) == 0, "irecv");
		REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, mb, L, 3, &sr) == 0, "isend");
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

/*
 * @n messages of the sizes @sz (cycled) both ways, two of three from node
 * 0, posted over a link that reorders and drops (ppm) and duplicates 1 %.
 */
static void rmix_post(struct rmsgt *m, size_t n, const size_t *sz, size_t nsz, __u32 seed,
		      __u32 reorder_ppm, __u32 drop_ppm)
{
	rx_rc_bad = 0;
	imp.reorder_ppm = reorder_ppm;
	imp.drop_ppm = drop_ppm;
	imp.dup_ppm = 10000;
	for (size_t i = 0; i < n; i++)
		m[i] = (struct rmsgt){ .a = (int)(i % 3 == 2), .b = (int)(i % 3 != 2),
				       .len = sz[(i * 3 + seed) % nsz],
				       .seed = seed * 1000 + (__u32)i };
	rbatch_post(m, n, false);
}

/*
 * Jumbo fragments (8,936 B, MTU 9000): their retransmission and
 * out-of-order copies and the eager copies above 2 KiB come from the
 * engine's bounded caches (c_big, c_eager), not malloc per frame.  Loss,
 * reordering and duplicates, so frames are copied, kept out of order,
 * retransmitted and freed in every order; under ASan a block that went to
 * the wrong cache (a smaller size) is a heap overflow here.
 */
static void test_rel_jumbo(void)
{
	static const size_t sz[] = { 1, 2048, 2049, 8936, 8937, 16384, 65536, 71488, 71489, 200000 };
	const size_t n = 120;

	for (__u32 seed = 700; seed < 703; seed++) {
		struct xwi_engine_cfg c[2];
		struct rmsgt *m = calloc(n, sizeof(*m));
		struct rmsgt *v[2] = { m, m + n };
		struct xwi_engine_stats a, b;

		REQUIRE(m, "calloc");
		for (int i = 0; i < 2; i++) {
			xwi_engine_cfg_default(&c[i], (__u16)(i + 1), 8936);
			if (seed == 702) /* over XWI_EAGER_CACHE_LEN: eager copies malloc'd */
				c[i].eager_max = 300000;
		}
		rnet_init(2, c, seed);
		rmix_post(m, n, sz, sizeof(sz) / sizeof(sz[0]), seed, 100000, 20000);
		CHECK(rpump(all_done, v, 120ULL * 1000000000ULL), "seed %u jumbo: not complete",
		      rseed);
		rbatch_check(m, n, "jumbo");
		rbatch_free(m, n);
		free(m);
		rsettle();
		rel_expect_one_session("jumbo");
		a = rst(0);
		b = rst(1);
		CHECK(a.rx_ooo + b.rx_ooo > 0 && a.rtx_frames[XW_PKT_MEDIUM] + b.rtx_frames[XW_PKT_MEDIUM] > 0,
		      "seed %u jumbo: no eager frame held out of order or resent", rseed);
		CHECK(!rx_rc_bad, "seed %u jumbo: %d frames refused", rseed, rx_rc_bad);
		rnet_free();
	}
	printf("reliability: jumbo fragments (8,936 B) with 2%% loss, 10%% reordering, 1%% "
	       "duplicates: eager and large messages both ways arrive intact (also with eager_max 300,000)\n");
}

/*
 * A stream's lazily kept fragments (MTU 1500: 1,436 B each, the payload
 * left in the send's buffer) come from the engine's cache of header-only
 * frames, kept up to a window of them: after large messages both ways,
 * with loss, reordering and duplicates (fragments resent from the sends'
 * buffers, acknowledged in every order), the sender's cache holds more
 * than the small caches' XWI_CACHE_MAX and at most its window; the frames
 * with a payload stay in c_frame.  Under ASan a header-only frame put back
 * into a cache of larger blocks and written there is a heap overflow.
 */
static void test_rel_kept_cache(void)
{
	static const size_t sz[] = { 200000, 1048576, 65536, 33000 };
	const size_t n = 8, nsz = sizeof(sz) / sizeof(sz[0]);

	for (__u32 seed = 720; seed < 722; seed++) {
		struct xwi_engine_cfg c[2];
		struct rmsgt m[8];
		struct rmsgt *v[2] = { m, m + n };
		const struct xwi_cache *k;

		for (int i = 0; i < 2; i++)
			xwi_engine_cfg_default(&c[i], (__u16)(i + 1), 1436);
		rnet_init(2, c, seed);
		rmix_post(m, n, sz, nsz, seed, 50000, 10000);
		CHECK(rpump(all_done, v, 120ULL * 1000000000ULL), "seed %u kept: not complete",
		      rseed);
		rbatch_check(m, n, "kept cache");
		rbatch_free(m, n);
		rsettle();
		rel_expect_one_session("kept cache");
		k = &xwt_nodes[0].e->c_kept;
		CHECK(k->size == sizeof(struct xwi_frame) && k->n > XWI_CACHE_MAX &&
			      k->n <= k->max && k->max == c[0].window,
		      "seed %u kept: cache of %zu B frames holds %u (max %u, window %u)", rseed,
		      k->size, k->n, k->max, c[0].window);
		CHECK(xwt_nodes[0].e->c_frame.n <= XWI_CACHE_MAX, "seed %u kept: c_frame %u", rseed,
		      xwt_nodes[0].e->c_frame.n);
		CHECK(rst(0).rtx_frames[XW_PKT_PULL_REPLY] > 0, "seed %u kept: nothing resent",
		      rseed);
		CHECK(!rx_rc_bad, "seed %u kept: %d frames refused", rseed, rx_rc_bad);
		rnet_free();
	}
	printf("reliability: 1,436 B fragments kept lazily (1%% loss, 5%% reordering, 1%% "
	       "duplicates) come back to a window-sized cache of header-only frames\n");
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

	for (size_t i = xwt_nlog; i-- > 0;)
		if (xwt_flog[i].src == s && xwt_flog[i].dst == d) {
			h = xwt_flog[i].h;
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
	for (size_t i = xwt_nlog; i-- > 0;)
		if (xwt_flog[i].src == s && xwt_flog[i].dst == d && xwt_flog[i].h.type <= XW_PKT_NOTIFY)
			return ntohl(xwt_flog[i].h.seq);
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
	CHECK(xwi_engine_rx(xwt_nodes[0].e, &xwt_nodes[1].addr, &h, NULL, 0) == 0, "rx bogus ack");
	a1 = rst(0);
	CHECK(a1.bad_acks == a0.bad_acks + 1, "ack beyond what was sent: bad_acks %llu -> %llu",
	      (unsigned long long)a0.bad_acks, (unsigned long long)a1.bad_acks);
	/* forged sessions: ACK and a SMALL the receive would match */
	REQUIRE(xwi_engine_irecv(xwt_nodes[0].e, buf, sizeof(buf), 0xF0F0, ALL, &rr) == 0, "irecv");
	h = craft(1, 0, XW_PKT_ACK);
	h.session ^= htonl(0x10000);
	seal(&h, NULL, 0);
	CHECK(xwi_engine_rx(xwt_nodes[0].e, &xwt_nodes[1].addr, &h, NULL, 0) == 0, "rx forged ack");
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
		CHECK(xwi_engine_rx(xwt_nodes[0].e, &xwt_nodes[1].addr, &h, "evil", 4) == 0, "rx forged");
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
	CHECK(xwi_engine_cancel(xwt_nodes[0].e, rr) == 0 && xwi_request_free(rr) == 0, "cancel");
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
				CHECK(xwi_engine_rx(xwt_nodes[0].e, &src, &h, "evil", 4) == 0, "rx forged");
			} else {
				seal(&h, NULL, 0);
				forged_connect++;
				CHECK(xwi_engine_rx(xwt_nodes[0].e, &src, &h, NULL, 0) == 0, "rx forged");
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

/* The nodes' addresses as the job's exchange gives them: with the nonce. */
static void nonce_addrs(void)
{
	for (int i = 0; i < xwt_nnodes; i++)
		xwt_nodes[i].addr.nonce = xwi_engine_nonce(xwt_nodes[i].e);
}

/* CONNECT, CONNECT_REPLY or CLOSE with the destination nonce @dn and the
 * sender nonce @sn, sealed. */
static void nonce_put(struct xw_hdr *h, __u64 dn, __u64 sn)
{
	h->frag_off = htonl((__u32)(dn >> 32));
	h->frag_idx = htonl((__u32)dn);
	h->data = htonl((__u32)(sn >> 32));
	h->rsvd2 = htonl((__u32)sn);
	seal(h, NULL, 0);
}

/*
 * Incarnation nonces (docs/PROTOCOL.md): with addresses that carry them
 * (as the job's exchange gives them), CONNECTs from B's own address with a
 * new session and no nonce or a wrong one, a CLOSE of B's very session
 * and a CONNECT_REPLY without A's nonce are refused and counted, never a
 * reset: every message after them arrives intact in the same sessions.
 * The same CONNECT with A's nonce resets the connection.  A peer really
 * restarted (a new nonce, our address known) reconnects, whichever side
 * speaks first.
 */
static void test_rel_nonce(void)
{
	struct xwi_engine_stats a0, a1, b1;
	struct xw_addr bsrc;
	struct xw_hdr h;
	__u64 na;

	rnet_init2(rel_cfg(1), rel_cfg(2), 2100);
	nonce_addrs();
	rx_rc_bad = 0;
	rmix(10, 3000, false, 2100, "nonce: before forging", 10ULL * 1000000000ULL);
	rsettle();
	a0 = rst(0);
	na = xwi_engine_nonce(xwt_nodes[0].e);
	bsrc = xwt_nodes[1].addr;
	bsrc.nonce = 0;
	for (int i = 0; i < 400; i++) {
		__u64 dn = i % 2 ? rng() | 1 : 0;

		if (dn == na)
			dn++;
		h = craft(1, 0, XW_PKT_CONNECT);
		h.session = htonl((__u32)rng() | 1);
		h.seq = htonl((__u32)rng());
		h.ack = i % 4 < 2 ? 0 : htonl((__u32)rng());
		nonce_put(&h, dn, rng());
		CHECK(xwi_engine_rx(xwt_nodes[0].e, &bsrc, &h, NULL, 0) == 0, "rx forged CONNECT");
	}
	h = craft(1, 0, XW_PKT_CLOSE); /* B's session, B's last seq */
	nonce_put(&h, na ^ 1, xwt_nodes[1].addr.nonce);
	CHECK(xwi_engine_rx(xwt_nodes[0].e, &bsrc, &h, NULL, 0) == 0, "rx forged CLOSE");
	h = craft(1, 0, XW_PKT_CONNECT_REPLY);
	h.session = htonl((__u32)rng() | 1);
	nonce_put(&h, 0, rng());
	CHECK(xwi_engine_rx(xwt_nodes[0].e, &bsrc, &h, NULL, 0) == 0, "rx forged CONNECT_REPLY");
	/* a RNDV offering the sender's memory (XW_F_CMA) from the wire, in
	 * B's session, CRC right: only the local ring may carry the flag */
	{
		static const unsigned char frag0[64];
		__u64 bad0 = rst(0).rx_bad;

		h = craft(1, 0, XW_PKT_RNDV); /* 1,000 B: 16 fragments of 64 */
		h.flags = XW_F_CMA;
		h.msg_len = htonl(1000);
		h.frag_count = htonl(16);
		h.payload_len = htons(sizeof(frag0));
		seal(&h, frag0, sizeof(frag0));
		CHECK(xwi_engine_rx(xwt_nodes[0].e, &xwt_nodes[1].addr, &h, frag0, sizeof(frag0)) ==
				      -EPROTO &&
			      rst(0).rx_bad == bad0 + 1,
		      "a wire RNDV with XW_F_CMA: not refused as malformed (rx_bad %llu -> %llu)",
		      (unsigned long long)bad0, (unsigned long long)rst(0).rx_bad);
	}
	a1 = rst(0);
	CHECK(a1.nonce_rejects == a0.nonce_rejects + 402 && a1.peer_restarts == 0 &&
		      a1.reconnects == 0 && a1.peer_closes == 0 && a1.sessions == a0.sessions,
	      "forged control frames: nonce_rejects %llu -> %llu (want +402), restarts %llu, "
	      "reconnects %llu, closes %llu", (unsigned long long)a0.nonce_rejects,
	      (unsigned long long)a1.nonce_rejects, (unsigned long long)a1.peer_restarts,
	      (unsigned long long)a1.reconnects, (unsigned long long)a1.peer_closes);
	CHECK(a1.nonce_challenges >= 1 && a1.nonce_challenges <= 2,
	      "challenge CONNECTs: %llu for 400 refused CONNECTs at one instant",
	      (unsigned long long)a1.nonce_challenges);
	rmix(10, 3000, false, 2110, "nonce: after forging", 10ULL * 1000000000ULL);
	rsettle();
	a1 = rst(0);
	b1 = rst(1);
	CHECK(a1.sessions == 1 && b1.sessions == 1 && !a1.peer_restarts && !b1.peer_restarts &&
		      !a1.timeouts && !b1.timeouts && rx_rc_bad == 0,
	      "after forging: sessions %llu/%llu, restarts %llu/%llu, timeouts %llu/%llu",
	      (unsigned long long)a1.sessions, (unsigned long long)b1.sessions,
	      (unsigned long long)a1.peer_restarts, (unsigned long long)b1.peer_restarts,
	      (unsigned long long)a1.timeouts, (unsigned long long)b1.timeouts);
	/* the same CONNECT with A's nonce is a new incarnation of B */
	h = craft(1, 0, XW_PKT_CONNECT);
	h.session = htonl((__u32)rng() | 1);
	h.seq = htonl(1000);
	h.ack = 0;
	nonce_put(&h, na, rng());
	CHECK(xwi_engine_rx(xwt_nodes[0].e, &bsrc, &h, NULL, 0) == 0, "rx CONNECT with the nonce");
	CHECK(rst(0).peer_restarts + rst(0).reconnects == 1,
	      "a CONNECT with the right nonce resets: restarts %llu reconnects %llu",
	      (unsigned long long)rst(0).peer_restarts, (unsigned long long)rst(0).reconnects);
	rnet_free();

	/* restarts: the new incarnation knows A's address (with its nonce) */
	for (int first = 0; first < 2; first++) {
		rnet_init2(rel_cfg(1), rel_cfg(2), 2200 + (__u32)first);
		nonce_addrs();
		rx_rc_bad = 0;
		rmix(10, 3000, false, 2200, "nonce: before the restart", 10ULL * 1000000000ULL);
		rsettle();
		__u64 old_nonce = xwt_nodes[1].addr.nonce;

		rnode_restart(1);
		xwt_nodes[1].addr.nonce = xwi_engine_nonce(xwt_nodes[1].e);
		if (first == 1) {
			/* B's new incarnation speaks first */
			struct rmsgt n1 = { .a = 1, .b = 0, .len = 100, .seed = 5 };

			rbatch_post(&n1, 1, false);
			CHECK(rpump(one_done, &n1, 10ULL * 1000000000ULL), "restart: B speaks first");
			rbatch_check(&n1, 1, "restart: B speaks first");
			rbatch_free(&n1, 1);
		}
		/* else A speaks first, to B's new address: a nonce A never saw
		 * is a new incarnation, so A resets its connection with the
		 * old B (xwi_conn_named) and its CONNECT carries the new one */
		rmix(20, 3000, false, 2300, "nonce: after the restart", 10ULL * 1000000000ULL);
		a1 = rst(0);
		CHECK(a1.peer_restarts == 1 && a1.sessions == 2 && !a1.timeouts && rx_rc_bad == 0,
		      "restart (%s first): restarts %llu sessions %llu timeouts %llu",
		      first ? "B" : "A", (unsigned long long)a1.peer_restarts,
		      (unsigned long long)a1.sessions, (unsigned long long)a1.timeouts);
		/* A still sends with the old B's address: stale, not another
		 * restart - its messages go to the new B */
		xwt_nodes[1].addr.nonce = old_nonce;
		rmix(10, 3000, false, 2400, "nonce: the old address", 10ULL * 1000000000ULL);
		xwt_nodes[1].addr.nonce = xwi_engine_nonce(xwt_nodes[1].e);
		a1 = rst(0);
		CHECK(a1.peer_restarts == 1 && a1.sessions == 2 && !a1.timeouts && rx_rc_bad == 0,
		      "the old address after the restart (%s first): restarts %llu sessions %llu "
		      "timeouts %llu", first ? "B" : "A", (unsigned long long)a1.peer_restarts,
		      (unsigned long long)a1.sessions, (unsigned long long)a1.timeouts);
		rnet_free();
	}
	printf("reliability: incarnation nonces: 400 CONNECTs from the peer's address with new "
	       "sessions and no or a wrong nonce, a CLOSE of its session and a CONNECT_REPLY "
	       "without ours refused and counted, no reset, every byte after them intact; with "
	       "the nonce a CONNECT resets; a restarted peer (new nonce) reconnects whichever "
	       "side speaks first, and the old address then reaches the new incarnation\n");
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
	xwt_epat_fill(sb, 3000, 7);
	c[0].give_up_ns = c[1].give_up_ns = 2000000000ULL;
	rnet_init(2, c, 1600);
	rx_rc_bad = 0;
	REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb, 3000, 5, &sr) == 0, "isend");
	rpump(NULL, NULL, 6ULL * 1000000000ULL); /* 3x give_up, no receive posted */
	CHECK(sr->state != XWI_REQ_DONE, "late receiver: the send completed (error %d) before "
	      "any receive was posted", sr->status.error);
	REQUIRE(xwi_engine_irecv(xwt_nodes[1].e, rb, 3000, 5, ALL, &rr) == 0, "irecv");
	rpump(NULL, NULL, 2ULL * 1000000000ULL);
	CHECK(sr->state == XWI_REQ_DONE && sr->status.error == 0 && rr->state == XWI_REQ_DONE &&
		      rr->status.error == 0 && !memcmp(sb, rb, 3000),
	      "late receiver after 6 s: send %d/%d, receive %d/%d", sr->state, sr->status.error,
	      rr->state, rr->status.error);
	xwi_request_free(sr);
	xwi_request_free(rr);
	/* now the receiver dies after acking the RNDV */
	REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb, 3000, 6, &sr) == 0, "isend");
	rpump(NULL, NULL, 50000000ULL);
	CHECK(sr->state != XWI_REQ_DONE, "the send completed without a receive");
	xwi_engine_free(xwt_nodes[1].e);
	xwt_nodes[1].e = NULL;
	xwt_drop_queue(1);
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
 * A peer whose endpoint is gone (its process died; its XDP program answers
 * our PROBE with the "gone" answer) is given up on that answer, long
 * before the give-up time (60 s, the default): its requests fail with
 * -ECONNRESET within the first probe (at most live_probe_ns, 1 s, of
 * silence), counted in live_gone, not in timeouts.  The same answer about
 * a peer whose session we never had (it may not be open yet) gives
 * nothing up: that silence is waited out, -ETIMEDOUT at the give-up time.
 * A "gone" answer with a wrong CRC32C (the flag flipped on the way) is
 * dropped.
 */
static void test_rel_gone_peer(void)
{
	struct xwi_engine_cfg c[2] = { rel_cfg(1), rel_cfg(2) };
	const __u64 G = c[0].give_up_ns, P = c[0].live_probe_ns;
	struct xwi_engine_stats s0;
	unsigned char *sb = malloc(20000), rb[100];
	struct xw_request *sr, *rr;
	__u64 t0;

	REQUIRE(sb, "malloc");
	REQUIRE(G == 60000000000ULL && P == 1000000000ULL, "defaults: give_up %llu ns, probe %llu ns",
		(unsigned long long)G, (unsigned long long)P);
	xwt_epat_fill(sb, 20000, 41);
	for (int crc_bad = 0; crc_bad < 2; crc_bad++) {
		rnet_init(2, c, 1710 + crc_bad);
		rx_rc_bad = 0;
		{ /* a first exchange: the connection is up */
			struct rmsgt w[1] = { { .a = 0, .b = 1, .len = 100, .seed = 40 } };
			struct rmsgt *wv[2] = { w, w + 1 };

			rbatch_post(w, 1, false);
			CHECK(rpump(all_done, wv, 10 * P), "gone peer: warm-up");
			rbatch_free(w, 1);
		}
		/* a large send waits for its PULLs, a receive for its message */
		REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb, 20000, 9, &sr) == 0,
			"isend");
		REQUIRE(xwi_engine_irecv_from(xwt_nodes[0].e, rb, sizeof(rb), 7, ~0ULL,
					      &xwt_nodes[1].addr, &rr) == 0, "irecv");
		rpump(NULL, NULL, P / 10);
		CHECK(sr->state != XWI_REQ_DONE && rr->state != XWI_REQ_DONE,
		      "gone peer: requests done (%d/%d) before the peer died", sr->status.error,
		      rr->status.error);
		xwi_engine_free(xwt_nodes[1].e);
		xwt_nodes[1].e = NULL;
		xwt_drop_queue(1);
		imp.gone[1] = true;
		imp.gone_badcrc = crc_bad;
		t0 = rclock;
		while ((sr->state != XWI_REQ_DONE || rr->state != XWI_REQ_DONE) &&
		       rclock - t0 < 2 * G)
			if (!rpass())
				rpump(NULL, NULL, P / 100);
		s0 = rst(0);
		if (!crc_bad) {
			CHECK(sr->state == XWI_REQ_DONE && sr->status.error == -ECONNRESET &&
				      rr->state == XWI_REQ_DONE && rr->status.error == -ECONNRESET &&
				      rclock - t0 <= P + P / 2,
			      "gone peer: send %d/%d, receive %d/%d after %llu ms (probe %llu ms, "
			      "give_up %llu ms)", sr->state, sr->status.error, rr->state,
			      rr->status.error, (unsigned long long)((rclock - t0) / 1000000),
			      (unsigned long long)(P / 1000000), (unsigned long long)(G / 1000000));
			CHECK(s0.live_gone == 1 && s0.timeouts == 0,
			      "gone peer: live_gone %llu, timeouts %llu",
			      (unsigned long long)s0.live_gone, (unsigned long long)s0.timeouts);
			printf("reliability: a gone peer (its program's answer) given up after %llu ms "
			       "(give_up %llu s): -ECONNRESET\n",
			       (unsigned long long)((rclock - t0) / 1000000),
			       (unsigned long long)(G / 1000000000));
		} else {
			CHECK(sr->state == XWI_REQ_DONE && sr->status.error == -ETIMEDOUT &&
				      rclock - t0 >= G - P && s0.live_gone == 0 && s0.timeouts == 1 &&
				      s0.crc_failures >= G / P / 2,
			      "corrupted gone answers: send %d/%d after %llu ms, live_gone %llu, "
			      "timeouts %llu, crc failures %llu", sr->state, sr->status.error,
			      (unsigned long long)((rclock - t0) / 1000000),
			      (unsigned long long)s0.live_gone, (unsigned long long)s0.timeouts,
			      (unsigned long long)s0.crc_failures);
			printf("reliability: corrupted \"gone\" answers dropped (%llu CRC failures), "
			       "the peer given up at give_up: -ETIMEDOUT\n",
			       (unsigned long long)s0.crc_failures);
		}
		xwi_request_free(sr);
		xwi_request_free(rr);
		rnet_free();
	}

	/* a peer that was never open: "gone" answers, no give-up before G */
	rnet_init_dead1(c, 1712);
	imp.gone[1] = true;
	REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb, 20000, 9, &sr) == 0, "isend");
	t0 = rclock;
	while (sr->state != XWI_REQ_DONE && rclock - t0 < 2 * G)
		if (!rpass())
			rpump(NULL, NULL, P / 100);
	s0 = rst(0);
	CHECK(sr->state == XWI_REQ_DONE && sr->status.error == -ETIMEDOUT && rclock - t0 >= G - P &&
		      s0.live_gone == 0 && s0.live_gone_unknown >= G / P / 2,
	      "never open: send %d/%d after %llu ms, live_gone %llu, unknown %llu", sr->state,
	      sr->status.error, (unsigned long long)((rclock - t0) / 1000000),
	      (unsigned long long)s0.live_gone, (unsigned long long)s0.live_gone_unknown);
	printf("reliability: a peer never open answers \"gone\" %llu times: waited out, "
	       "-ETIMEDOUT at give_up\n", (unsigned long long)s0.live_gone_unknown);
	xwi_request_free(sr);
	rnet_free();
	free(sb);
}

/*
 * A peer that computes (or is stopped) for 20x the give-up time between
 * posting and waiting is never given up: its endpoint answers the liveness
 * PROBEs without the process (the link answers for it, as its XDP program
 * does).  Both directions, eager and rendezvous sizes, in flight while it
 * computes; every byte checked when it polls again.  Then it dies: the
 * survivor gives it up within give-up (+ one probe interval) of its last
 * answer, and its requests fail with -ETIMEDOUT.
 */
static void test_rel_busy_peer(void)
{
	struct xwi_engine_cfg c[2] = { rel_cfg(1), rel_cfg(2) };
	struct rmsgt m[4] = { { .a = 0, .b = 1, .len = 20000, .seed = 31 },
			      { .a = 1, .b = 0, .len = 9000, .seed = 32 },
			      { .a = 0, .b = 1, .len = 200, .seed = 33 },
			      { .a = 1, .b = 0, .len = 100, .seed = 34 } };
	struct rmsgt *v[2] = { m, m + 4 };
	const __u64 G = 1000000000ULL; /* give_up_ns */
	struct xwi_engine_stats s0;
	unsigned long long answered;
	unsigned char *sb = malloc(20000);
	struct xw_request *sr;
	__u64 t0;

	REQUIRE(sb, "malloc");
	c[0].give_up_ns = c[1].give_up_ns = G;
	rnet_init(2, c, 1700);
	rx_rc_bad = 0;
	/* a first exchange: the connection is up */
	{
		struct rmsgt w[1] = { { .a = 0, .b = 1, .len = 100, .seed = 30 } };
		struct rmsgt *wv[2] = { w, w + 1 };

		rbatch_post(w, 1, false);
		CHECK(rpump(all_done, wv, 10 * G), "busy peer: warm-up");
		rbatch_free(w, 1);
	}
	rbatch_post(m, 4, false);
	for (int i = 0; i < 3; i++)
		rpass();
	imp.busy[1] = true; /* node 1 computes for 20 give-up times */
	rpump(NULL, NULL, 20 * G);
	s0 = rst(0);
	CHECK(s0.timeouts == 0, "busy peer: given up (%llu) while its endpoint answered probes",
	      (unsigned long long)s0.timeouts);
	CHECK(s0.live_probes >= 20 && s0.live_replies >= 20,
	      "busy peer: %llu probes, %llu answers in 20 give-up times",
	      (unsigned long long)s0.live_probes, (unsigned long long)s0.live_replies);
	for (int i = 0; i < 4; i++)
		CHECK(!(m[i].sr->state == XWI_REQ_DONE && m[i].sr->status.error) &&
			      !(m[i].rr->state == XWI_REQ_DONE && m[i].rr->status.error),
		      "busy peer: message %d failed while the peer computed (%d/%d)", i,
		      m[i].sr->status.error, m[i].rr->status.error);
	answered = s0.live_replies;
	imp.busy[1] = false; /* it polls again */
	CHECK(rpump(all_done, v, 30 * G), "busy peer: the messages did not complete after it "
	      "polled again");
	rbatch_check(m, 4, "busy peer");
	rbatch_free(m, 4);
	CHECK(rst(0).timeouts == 0 && rst(1).timeouts == 0 && rx_rc_bad == 0,
	      "busy peer: timeouts %llu/%llu, bad rx %d", (unsigned long long)rst(0).timeouts,
	      (unsigned long long)rst(1).timeouts, rx_rc_bad);
	/* both compute for 10 give-up times right after a message went 0 ->
	 * 1 (its ACK still delayed: node 0 comes back to a frame unacked for
	 * 10 give-up times): nobody runs a timer meanwhile, and neither gives
	 * the other up for its own absence when it comes back */
	{
		struct rmsgt w[1] = { { .a = 0, .b = 1, .len = 100, .seed = 36 } };
		struct rmsgt *wv[2] = { w, w + 1 };

		rbatch_post(w, 1, false);
		rpass();
		imp.busy[0] = imp.busy[1] = true;
		rclock += 10 * G;
		imp.busy[0] = imp.busy[1] = false;
		CHECK(rpump(all_done, wv, 30 * G), "both away: the messages did not complete");
		rbatch_check(w, 1, "both away");
		rbatch_free(w, 1);
		CHECK(rst(0).timeouts == 0 && rst(1).timeouts == 0,
		      "both away 10 give-up times: timeouts %llu/%llu (its own absence counted)",
		      (unsigned long long)rst(0).timeouts, (unsigned long long)rst(1).timeouts);
	}
	/* it computes again, then dies with a large send to it in flight */
	xwt_epat_fill(sb, 20000, 35);
	REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb, 20000, 9, &sr) == 0,
		"isend");
	imp.busy[1] = true;
	rpump(NULL, NULL, 3 * G);
	CHECK(sr->state != XWI_REQ_DONE, "send to a busy peer done (%d) without a receive",
	      sr->status.error);
	imp.busy[1] = false;
	xwi_engine_free(xwt_nodes[1].e);
	xwt_nodes[1].e = NULL;
	xwt_drop_queue(1);
	t0 = rclock;
	while (sr->state != XWI_REQ_DONE && rclock - t0 < 10 * G)
		if (!rpass())
			rpump(NULL, NULL, G / 100);
	CHECK(sr->state == XWI_REQ_DONE && sr->status.error == -ETIMEDOUT &&
		      rclock - t0 <= G + G / 4 + G / 100,
	      "dead peer: send state %d error %d after %llu ms (give_up %llu ms)", sr->state,
	      sr->status.error, (unsigned long long)((rclock - t0) / 1000000),
	      (unsigned long long)(G / 1000000));
	xwi_request_free(sr);
	rnet_free();

	/* A peer that computes from the start: the handshake waits for it
	 * (its endpoint answers the probes), the message arrives once it
	 * polls; the same with a peer that never existed fails. */
	rnet_init(2, c, 1701);
	REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb, 200, 10, &sr) == 0, "isend");
	imp.busy[1] = true;
	rpump(NULL, NULL, 10 * G);
	s0 = rst(0);
	/* (an eager send completes once copied: the connection is what waits) */
	CHECK(!sr->status.error && s0.timeouts == 0 && s0.sends_lost == 0 && s0.live_replies >= 10,
	      "busy from the start: send error %d, timeouts %llu, lost %llu, %llu answers",
	      sr->status.error, (unsigned long long)s0.timeouts,
	      (unsigned long long)s0.sends_lost, (unsigned long long)s0.live_replies);
	imp.busy[1] = false;
	{
		unsigned char rb[200];
		struct xw_request *rr;

		REQUIRE(xwi_engine_irecv(xwt_nodes[1].e, rb, sizeof(rb), 10, ALL, &rr) == 0, "irecv");
		rpump(NULL, NULL, 5 * G);
		CHECK(sr->state == XWI_REQ_DONE && !sr->status.error && rr->state == XWI_REQ_DONE &&
			      !rr->status.error && !memcmp(rb, sb, 200),
		      "busy from the start: send %d/%d receive %d/%d", sr->state, sr->status.error,
		      rr->state, rr->status.error);
		xwi_request_free(rr);
	}
	xwi_request_free(sr);
	rnet_free();
	rnet_init_dead1(c, 1702);
	REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb, 200, 11, &sr) == 0, "isend");
	t0 = rclock;
	rpump(NULL, NULL, 5 * G);
	s0 = rst(0);
	CHECK(s0.timeouts == 1 && s0.sends_lost == 1 && s0.live_replies == 0 && s0.live_probes > 0,
	      "a peer that never was: timeouts %llu, lost %llu, %llu probes, %llu answers",
	      (unsigned long long)s0.timeouts, (unsigned long long)s0.sends_lost,
	      (unsigned long long)s0.live_probes, (unsigned long long)s0.live_replies);
	xwi_request_free(sr);
	rnet_free();
	free(sb);
	printf("reliability: a peer that computes from the start is waited for through the "
	       "handshake; one that never existed is given up\n");
	printf("reliability: a peer that computes for 20x give-up with messages in flight both "
	       "ways is kept (%llu probes answered by its endpoint), every byte arrives when it "
	       "polls again; when both were away for 10x give-up neither gives the other up; "
	       "once dead it is given up within give-up of its last answer\n",
	       answered);
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

	xwt_epat_fill(sb, sizeof(sb), 11);
	for (int i = 0; i < 3; i++)
		c[i].give_up_ns = 1000000000ULL;
	rnet_init(3, c, 1700);
	rx_rc_bad = 0;
	REQUIRE(xwi_engine_irecv_from(xwt_nodes[0].e, rb[0], 300, 9, ALL, &xwt_nodes[1].addr, &rr[0]) == 0,
		"irecv from 1");
	REQUIRE(xwi_engine_irecv_from(xwt_nodes[0].e, rb[1], 300, 9, ALL, &xwt_nodes[2].addr, &rr[1]) == 0,
		"irecv from 2");
	REQUIRE(xwi_engine_irecv(xwt_nodes[0].e, rb[2], 300, 10, ALL, &rr[2]) == 0, "irecv any");
	/* a session with node 1 first, then it dies */
	REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb, 100, 1, &sr) == 0, "isend");
	rpump(NULL, NULL, 50000000ULL);
	CHECK(sr->state == XWI_REQ_DONE && !sr->status.error, "first send: state %d error %d",
	      sr->state, sr->status.error);
	xwi_request_free(sr);
	xwi_engine_free(xwt_nodes[1].e);
	xwt_nodes[1].e = NULL;
	xwt_drop_queue(1);
	/* a large send (RNDV): it completes only when node 1 has pulled it */
	REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, sb, 3000, 2, &sr) == 0, "isend");
	t0 = rclock;
	while (sr->state != XWI_REQ_DONE && rclock - t0 < 5ULL * 1000000000ULL)
		rpass();
	CHECK(sr->state == XWI_REQ_DONE && sr->status.error == -ETIMEDOUT,
	      "send to the dead peer: state %d error %d", sr->state, sr->status.error);
	CHECK(rr[0]->state == XWI_REQ_DONE && rr[0]->status.error == -ETIMEDOUT &&
		      xw_addr_equal(&rr[0]->status.src, &xwt_nodes[1].addr),
	      "receive directed at the given-up peer: state %d error %d", rr[0]->state,
	      rr[0]->status.error);
	CHECK(rr[1]->state != XWI_REQ_DONE && rr[2]->state != XWI_REQ_DONE,
	      "other receives completed with the give-up: directed %d/%d, any %d/%d",
	      rr[1]->state, rr[1]->status.error, rr[2]->state, rr[2]->status.error);
	/* node 2 still gets through to both */
	REQUIRE(xwi_engine_isend(xwt_nodes[2].e, &xwt_nodes[0].addr, sb, 300, 9, &s2) == 0, "isend 2");
	rpump(NULL, NULL, 50000000ULL);
	xwi_request_free(s2);
	REQUIRE(xwi_engine_isend(xwt_nodes[2].e, &xwt_nodes[0].addr, sb, 200, 10, &s2) == 0, "isend 2");
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
		REQUIRE(xwi_engine_irecv(xwt_nodes[1].e, rb[i], sizeof(rb[i]), 0x900 + (__u64)i, ALL,
					 &rr[i]) == 0, "irecv");
	log0 = xwt_nlog;
	for (int i = 0; i < 4; i++) {
		REQUIRE(xwi_engine_isend_flags(xwt_nodes[0].e, &xwt_nodes[1].addr, sb, lens[i],
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
	for (size_t k = log0; k < xwt_nlog; k++) {
		const struct xw_hdr *h = &xwt_flog[k].h;
		__u32 id = ntohl(h->msg_id) - ntohl(xwt_flog[log0].h.msg_id);
		bool last_frame = ntohl(h->frag_idx) + 1 == ntohl(h->frag_count);

		if (xwt_flog[k].src != 0 || h->type > XW_PKT_MEDIUM || id > 3)
			continue;
		if (id < 3)
			CHECK((h->flags & XW_F_MORE) && !(h->flags & XW_F_LAT),
			      "hinted message %u frame %u: flags %#x", id, ntohl(h->frag_idx),
			      h->flags);
		else if (last_frame)
			CHECK(!(h->flags & XW_F_MORE) && (h->flags & XW_F_LAT),
			      "last message, last frame: flags %#x", h->flags);
	}
	CHECK(xwi_engine_isend_flags(xwt_nodes[0].e, &xwt_nodes[1].addr, sb, 10, 1, 0x80, &sr) == -EINVAL,
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
	xwt_epat_fill(dead, sizeof(dead), 1);
	xwt_epat_fill(live, sizeof(live), 2);
	imp.drop_nth[0][XW_PKT_MEDIUM] = ~1u; /* only fragment 0 of node 0's message */
	REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, dead, sizeof(dead), 1, &ds) == 0,
		"isend");
	rpump(NULL, NULL, 10000000ULL);
	CHECK(rst(1).unexpected_bytes == sizeof(dead), "partial: %llu unexpected bytes held",
	      (unsigned long long)rst(1).unexpected_bytes);
	xwi_request_free(ds);
	xwi_engine_free(xwt_nodes[0].e); /* node 0 dies */
	xwt_nodes[0].e = NULL;
	xwt_drop_queue(0);
	REQUIRE(xwi_engine_isend(xwt_nodes[2].e, &xwt_nodes[1].addr, live, sizeof(live), 2, &ls) == 0,
		"isend");
	rpump(NULL, NULL, 500000000ULL);
	st = rst(1);
	CHECK(st.rx_nobufs > 0 && st.abandoned == 0, "partial: live message refused %llu times, "
	      "%llu abandoned before the dead peer's give-up time",
	      (unsigned long long)st.rx_nobufs, (unsigned long long)st.abandoned);
	rpump(NULL, NULL, 3000000000ULL);
	st = rst(1);
	REQUIRE(xwi_engine_irecv(xwt_nodes[1].e, rb, sizeof(rb), 2, ALL, &rr) == 0, "irecv");
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
	xwt_epat_fill(small, sizeof(small), 1);
	xwt_epat_fill(med, sizeof(med), 2);
	xwt_epat_fill(big, sizeof(big), 3);
	/* both open at once; each takes the other's CONNECT */
	REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, small, sizeof(small), 1, &s0) == 0,
		"isend");
	REQUIRE(xwi_engine_isend(xwt_nodes[1].e, &xwt_nodes[0].addr, med, sizeof(med), 2, &ms) == 0,
		"isend");
	rdeliver(1);
	rdeliver(0);
	xwi_engine_progress(xwt_nodes[0].e, 64); /* A's answer: in B's queue, slow */
	/* A is reopened and talks to B: its CONNECT is behind the old answer */
	CHECK(s0->state == XWI_REQ_DONE, "stale connect: A's eager send is buffered");
	xwi_request_free(s0);
	rnode_restart(0);
	REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, small, sizeof(small), 3, &s1) == 0,
		"isend");
	/* B retries its CONNECT and resends its message; the new A gets them */
	rclock += d.rto_init_ns + 1000;
	xwi_engine_progress(xwt_nodes[1].e, 64);
	rdeliver(0);
	xwi_engine_progress(xwt_nodes[0].e, 64);
	/* B's next message; then the link heals */
	REQUIRE(xwi_engine_isend(xwt_nodes[1].e, &xwt_nodes[0].addr, big, sizeof(big), 4, &ls) == 0,
		"isend");
	REQUIRE(xwi_engine_irecv(xwt_nodes[0].e, rb, sizeof(rb), 4, ALL, &rr) == 0, "irecv");
	REQUIRE(xwi_engine_irecv(xwt_nodes[0].e, rs, sizeof(rs), 2, ALL, &x) == 0, "irecv");
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
	CHECK(xwi_engine_cancel(xwt_nodes[0].e, x) == 0, "cancel");
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
		m[i].rb = malloc(300 + XWT_GUARD);
		REQUIRE(m[i].sb && m[i].rb, "malloc");
		xwt_epat_fill(m[i].sb, 300, m[i].seed);
		memset(m[i].rb + 300, 0xA5, XWT_GUARD);
		REQUIRE(xwi_engine_isend(xwt_nodes[0].e, &xwt_nodes[1].addr, m[i].sb, 300,
					 0x7700000000ULL + m[i].seed, &m[i].sr) == 0, "isend");
	}
	rpump(NULL, NULL, 50000000ULL); /* 50 ms */
	s = rst(1);
	CHECK(s.unexpected_bytes <= 1000 && s.rx_nobufs > 0,
	      "bound: unexpected_bytes %llu, rx_nobufs %llu", (unsigned long long)s.unexpected_bytes,
	      (unsigned long long)s.rx_nobufs);
	for (int i = 0; i < 20; i++)
		REQUIRE(xwi_engine_irecv(xwt_nodes[1].e, m[i].rb, 300, 0x7700000000ULL + m[i].seed, ALL,
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
	xwi_engine_shutdown(xwt_nodes[1].e, true);
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

static bool recv_done(void *arg)
{
	struct rmsgt *m = arg;

	return m->rr && m->rr->state == XWI_REQ_DONE;
}

/*
 * Node 0 takes node 1's last message and closes; the ACK of it is lost.
 * With the CLOSE (xwi_engine_shutdown(e, true), what an endpoint's close
 * does) node 1 learns of the ack it carries and is done at once: nothing
 * given up, no reset counted.  Without it node 1 resends to the closed
 * node until it gives it up (the case the CLOSE is for: an MPI job whose
 * final ACK a switch dropped).  Then a CLOSE that cuts something short:
 * node 0 never got the message (node 1's frames lost) - counted.
 */
static void test_rel_close_last_ack(void)
{
	for (int k = 0; k < 3; k++) {
		bool with_close = k != 1, data_lost = k == 2;
		struct rmsgt m = { .a = 1, .b = 0, .len = 100, .seed = 31 + (__u32)k };
		struct xwi_engine_cfg c1 = rel_cfg(1), c2 = rel_cfg(2);
		struct xwi_engine_stats s;

		/* the closed node answers nothing (no "gone" answer: its
		 * host is down), given up after give_up_ns */
		c1.give_up_ns = c2.give_up_ns = 5000000000ULL;
		rnet_init2(c1, c2, 1400 + (__u32)k);
		rx_rc_bad = 0;
		rmix(4, 0, false, 1400, "before the last message", 10ULL * 1000000000ULL);
		rsettle();
		imp.mute[data_lost ? 1 : 0] = true;
		rbatch_post(&m, 1, false);
		if (!data_lost)
			CHECK(rpump(recv_done, &m, 1000000000ULL), "the last message not received");
		rpump(NULL, NULL, 2000000ULL); /* node 0's ACK (or node 1's data) lost */
		CHECK(imp.dropped > 0 && xwi_engine_peers_unacked(xwt_nodes[1].e) == 1,
		      "case %d: dropped %lu, node 1 unacked %llu", k, imp.dropped,
		      (unsigned long long)xwi_engine_peers_unacked(xwt_nodes[1].e));
		imp.mute[0] = imp.mute[1] = false;
		xwi_engine_shutdown(xwt_nodes[0].e, with_close);
		if (!data_lost)
			xwi_request_free(m.rr);
		m.rr = NULL;
		xwi_engine_free(xwt_nodes[0].e);
		xwt_nodes[0].e = NULL;
		rpass(); /* node 1 takes the CLOSE, if any */
		s = rst(1);
		if (with_close) {
			CHECK(s.peer_closes == 1 && s.peer_closes_cut == (data_lost ? 1u : 0u),
			      "case %d: closes %llu, cut short %llu", k,
			      (unsigned long long)s.peer_closes, (unsigned long long)s.peer_closes_cut);
			if (!data_lost)
				CHECK(xwi_engine_peers_unacked(xwt_nodes[1].e) == 0 &&
					      m.sr->state == XWI_REQ_DONE && m.sr->status.error == 0,
				      "CLOSE: node 1 still waits (unacked %llu, send %d err %d)",
				      (unsigned long long)xwi_engine_peers_unacked(xwt_nodes[1].e),
				      m.sr->state, m.sr->status.error);
		}
		rpump(NULL, NULL, 7ULL * 1000000000ULL); /* beyond the give-up time */
		s = rst(1);
		CHECK(s.timeouts == (with_close && !data_lost ? 0u : 1u),
		      "case %d: node 1 gave the closed node up %llu times", k,
		      (unsigned long long)s.timeouts);
		CHECK(rx_rc_bad == 0, "rx returned errors");
		if (m.sr->state == XWI_REQ_DONE)
			xwi_request_free(m.sr);
		free(m.sb);
		free(m.rb);
		rnet_free();
	}
	printf("reliability: a node that closes after a lost final ACK: its CLOSE carries the ack "
	       "(the peer is done at once, nothing given up); without it the peer gives it up; a "
	       "CLOSE that cuts a message short is counted\n");
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
	xwi_engine_free(xwt_nodes[0].e);
	xwt_nodes[0].e = NULL;
	xwt_drop_queue(0);
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

/* ---- loss recovery mechanisms (RACK-TLP), without timing -------------------- */

/* One message of @len bytes from node @a to node @b, verified; the engines'
 * counters after it. */
static void rone(int a, int b, size_t len, __u32 seed, const char *what)
{
	struct rmsgt m = { .a = a, .b = b, .len = len, .seed = seed };
	struct rmsgt *v[2] = { &m, &m + 1 };

	rbatch_post(&m, 1, false);
	CHECK(rpump(all_done, v, 10ULL * 1000000000ULL), "%s: not done", what);
	rbatch_check(&m, 1, what);
	rbatch_free(&m, 1);
}

/*
 * The ACKs a thread owes go at once when it is about to sleep
 * (xwi_engine_ack_owed): a receiver that took one frame owes a delayed ACK
 * (its next timer is that delay); asked, it sends exactly that ACK, its
 * deadline no longer waits for it, and a second ask sends nothing; with
 * nothing owed, nothing is sent.
 */
static void test_rel_ack_owed(void)
{
	struct xwi_engine_cfg c = rel_cfg(1), d = rel_cfg(2);
	struct rmsgt m = { .a = 0, .b = 1, .len = 10, .seed = 1790 };
	struct rmsgt *v[2] = { &m, &m + 1 };
	__u64 due;
	size_t n0;

	rnet_init2(c, d, 1790);
	rone(0, 1, 10, 1789, "ack_owed: the connection");
	rsettle();
	CHECK(xwi_engine_ack_owed(xwt_nodes[1].e) == 0, "ack_owed: an ACK with nothing owed");
	rbatch_post(&m, 1, false);
	/* the sender's frame out, then delivered, the receiver not progressed */
	xwi_engine_progress(xwt_nodes[0].e, 64);
	REQUIRE(xwt_nodes[1].q.n == 1, "ack_owed: %zu frames to the receiver", xwt_nodes[1].q.n);
	rdeliver(1);
	due = xwi_engine_next_deadline(xwt_nodes[1].e);
	CHECK(due > rclock && due <= rclock + d.ack_delay_ns,
	      "ack_owed: the receiver's next timer %llu ns from now, not its ACK delay %llu",
	      (unsigned long long)(due - rclock), (unsigned long long)d.ack_delay_ns);
	n0 = xwt_nodes[0].q.n;
	CHECK(xwi_engine_ack_owed(xwt_nodes[1].e) == 1, "ack_owed: the owed ACK not sent");
	CHECK(xwt_nodes[0].q.n == n0 + 1 &&
		      xwt_lq_at(&xwt_nodes[0].q, n0)->h.type == XW_PKT_ACK,
	      "ack_owed: %zu frames to the sender, not one ACK", xwt_nodes[0].q.n - n0);
	CHECK(xwi_engine_next_deadline(xwt_nodes[1].e) != due,
	      "ack_owed: the receiver still wakes for the ACK it sent");
	CHECK(xwi_engine_ack_owed(xwt_nodes[1].e) == 0, "ack_owed: the ACK sent twice");
	CHECK(rpump(all_done, v, 10ULL * 1000000000ULL), "ack_owed: the message not done");
	rbatch_check(&m, 1, "ack_owed");
	rbatch_free(&m, 1);
	rsettle();
	rnet_free();
}

static bool sack_resent(void *arg)
{
	(void)arg;
	return rst(0).sack_rtx > 0;
}

/*
 * RTT samples: a frame the receiver held out of order and acknowledged
 * selectively gives its sample then, and none when the cumulative ack
 * covers it after the hole was repaired (its time then is the repair's);
 * the resent frame gives none (Karn).  A 30-fragment message, fragment 3
 * lost: from the moment the hole is resent to the end, no sample.
 */
static void test_loss_rtt_samples(void)
{
	struct xwi_engine_cfg c = rel_cfg(1), d = rel_cfg(2);
	struct xwi_engine_stats s0, s1;
	struct rmsgt m = { .a = 0, .b = 1, .len = 30 * 64, .seed = 1700 };
	struct rmsgt *v[2] = { &m, &m + 1 };

	c.eager_max = d.eager_max = 30 * 64;
	rnet_init2(c, d, 1700);
	rx_rc_bad = 0;
	rone(0, 1, 10, 1701, "rtt: first message");
	imp.drop_nth[0][XW_PKT_MEDIUM] = 1u << 3;
	rbatch_post(&m, 1, false);
	CHECK(rpump(sack_resent, NULL, 10ULL * 1000000000ULL), "rtt: the hole was not resent");
	s0 = rst(0);
	CHECK(rpump(all_done, v, 10ULL * 1000000000ULL), "rtt: not done");
	rbatch_check(&m, 1, "rtt samples");
	rbatch_free(&m, 1);
	s1 = rst(0);
	CHECK(s1.rtt_samples == s0.rtt_samples && s1.rtt_skipped > s0.rtt_skipped &&
		      s1.srtt_ns == s0.srtt_ns && s1.rtx_timeouts == 0 && s1.sack_rtx == 1,
	      "rtt: after the hole was resent %llu samples (want 0), %llu skipped, srtt %llu -> %llu "
	      "ns, %llu timeouts, %llu resent", (unsigned long long)(s1.rtt_samples - s0.rtt_samples),
	      (unsigned long long)(s1.rtt_skipped - s0.rtt_skipped), (unsigned long long)s0.srtt_ns,
	      (unsigned long long)s1.srtt_ns, (unsigned long long)s1.rtx_timeouts,
	      (unsigned long long)s1.sack_rtx);
	rsettle();
	rnet_free();
}

/*
 * A lost tail frame (the last frame in flight: here a SMALL, as a last
 * PULL_REPLY, PULL or NOTIFY would be) is sent again by the tail probe, not
 * by the retransmission timer.
 */
static void test_loss_tail_probe(void)
{
	struct xwi_engine_stats s;

	rnet_init2(rel_cfg(1), rel_cfg(2), 1710);
	rx_rc_bad = 0;
	rone(0, 1, 10, 1711, "tlp: first message");
	imp.drop_nth[0][XW_PKT_SMALL] = 1u << 1;
	rone(0, 1, 10, 1712, "tlp: the lost one");
	s = rst(0);
	CHECK(s.tail_probes == 1 && s.rtx_timeouts == 0 && s.rtx_frames[XW_PKT_SMALL] == 1,
	      "tlp: %llu probes, %llu timeouts, %llu SMALL resent",
	      (unsigned long long)s.tail_probes, (unsigned long long)s.rtx_timeouts,
	      (unsigned long long)s.rtx_frames[XW_PKT_SMALL]);
	rsettle();
	rnet_free();
}

/*
 * A lost retransmission is found by time: fragment 3 of a 30-fragment
 * message and its first resend are lost; a message sent after the resend
 * is acknowledged (selectively: the receiver holds it behind the hole),
 * which shows the resend lost - it goes again at once, before the tail
 * probe and the RTO.
 */
static void test_loss_lost_rtx(void)
{
	struct xwi_engine_cfg c = rel_cfg(1), d = rel_cfg(2);
	struct rmsgt m[2] = { { .a = 0, .b = 1, .len = 30 * 64, .seed = 1720 },
			      { .a = 0, .b = 1, .len = 10, .seed = 1721 } };
	struct rmsgt *v[2] = { m, m + 2 };
	struct xwi_engine_stats s;

	c.eager_max = d.eager_max = 30 * 64;
	rnet_init2(c, d, 1720);
	rx_rc_bad = 0;
	rone(0, 1, 10, 1722, "lost rtx: first message");
	/* MEDIUM sends 0..29: the message; 30: the resend of fragment 3 */
	imp.drop_nth[0][XW_PKT_MEDIUM] = 1u << 3 | 1u << 30;
	rbatch_post(&m[0], 1, false);
	CHECK(rpump(sack_resent, NULL, 10ULL * 1000000000ULL), "lost rtx: the hole was not resent");
	rbatch_post(&m[1], 1, false);
	CHECK(rpump(all_done, v, 10ULL * 1000000000ULL), "lost rtx: not done");
	rbatch_check(m, 2, "lost rtx");
	rbatch_free(m, 2);
	s = rst(0);
	CHECK(s.lost_rtx == 1 && s.sack_rtx == 2 && s.rtx_frames[XW_PKT_MEDIUM] == 2 &&
		      s.tail_probes == 0 && s.rtx_timeouts == 0,
	      "lost rtx: %llu found lost again, %llu resent by acks, %llu MEDIUM resent, %llu "
	      "probes, %llu timeouts", (unsigned long long)s.lost_rtx,
	      (unsigned long long)s.sack_rtx, (unsigned long long)s.rtx_frames[XW_PKT_MEDIUM],
	      (unsigned long long)s.tail_probes, (unsigned long long)s.rtx_timeouts);
	rsettle();
	rnet_free();
}

/* node 0's message @m is the one lazy_check() checks (NULL: none) */
static unsigned char *lazy_watch(const struct rmsgt *m)
{
	unsigned char *ref = NULL;

	memset(&lazy_ref, 0, sizeof(lazy_ref));
	if (!m)
		return NULL;
	ref = malloc(m->len);
	REQUIRE(ref, "malloc");
	xwt_epat_fill(ref, m->len, m->seed);
	lazy_ref.ref = ref;
	lazy_ref.len = m->len;
	lazy_ref.match = 0x7700000000ULL + m->seed;
	return ref;
}

static bool lazy_sent(void *arg)
{
	return ((struct rmsgt *)arg)->sr->state == XWI_REQ_DONE;
}

/* Node 0's large message @m is out (RNDV and pushed fragments) and node 1,
 * not polling, holds it unacknowledged. */
static void lazy_post_held(struct rmsgt *m, const char *what)
{
	imp.busy[1] = true;
	rbatch_post(m, 1, false);
	for (int i = 0; i < 20; i++)
		rpass();
	CHECK(m->sr->state == XWI_REQ_PENDING && xwi_engine_peers_unacked(xwt_nodes[0].e) == 1 &&
		      xwt_nodes[1].q.n > 2,
	      "%s: send state %d, %zu frames held, peers unacked %llu", what, m->sr->state,
	      xwt_nodes[1].q.n, (unsigned long long)xwi_engine_peers_unacked(xwt_nodes[0].e));
}

/*
 * The fragments of a large send are kept for retransmission by reference
 * to the send's buffer, not copied: a resend rebuilds the frame from it.
 * Two lost PULL_REPLY frames, resent with the right bytes; a send cancelled
 * once its frames are out stays (-EBUSY); one aborted while its fragments
 * are unacknowledged completes at once with the abort's error, and its
 * buffer, freed then, is never read again (ASan): its resent frames carry
 * copies; one whose connection is given up or reset completes with the
 * error, its buffer freed at once.
 */
static void test_lazy_rtx(void)
{
	struct rmsgt m = { .a = 0, .b = 1, .len = 30 * 64, .seed = 1800 };
	struct rmsgt *v[2] = { &m, &m + 1 };
	struct xwi_engine_cfg c = rel_cfg(1), d = rel_cfg(2);
	unsigned char *ref;
	struct xwi_engine_stats s;
	int rc;

	/* two lost fragments: resent from the send's buffer */
	rnet_init2(c, d, 1800);
	rx_rc_bad = 0;
	rone(0, 1, 10, 1801, "lazy: first message");
	ref = lazy_watch(&m);
	imp.drop_nth[0][XW_PKT_PULL_REPLY] = 1u << 2 | 1u << 12;
	rbatch_post(&m, 1, false);
	CHECK(rpump(all_done, v, 10ULL * 1000000000ULL), "lazy: not done");
	rbatch_check(&m, 1, "lazy rtx");
	rbatch_free(&m, 1);
	s = rst(0);
	CHECK(s.rtx_frames[XW_PKT_PULL_REPLY] >= 2 && lazy_ref.bad == 0 && lazy_ref.checked >= 31,
	      "lazy rtx: %llu PULL_REPLY resent, %lu of %lu frames with wrong bytes",
	      (unsigned long long)s.rtx_frames[XW_PKT_PULL_REPLY], lazy_ref.bad, lazy_ref.checked);
	rsettle();
	rnet_free();
	lazy_watch(NULL);
	free(ref);

	/* cancelled, then aborted while its fragments are unacknowledged */
	m = (struct rmsgt){ .a = 0, .b = 1, .len = 30 * 64, .seed = 1810 };
	rnet_init2(c, d, 1810);
	rone(0, 1, 10, 1811, "lazy abort: first message");
	ref = lazy_watch(&m);
	lazy_post_held(&m, "lazy abort");
	rc = xwi_engine_cancel(xwt_nodes[0].e, m.sr);
	CHECK(rc == -EBUSY && m.sr->state == XWI_REQ_PENDING, "lazy cancel: %d, state %d", rc,
	      m.sr->state);
	rc = xwi_engine_abort(xwt_nodes[0].e, m.sr, -ETIMEDOUT);
	CHECK(rc == 0 && m.sr->state == XWI_REQ_DONE && m.sr->status.error == -ETIMEDOUT,
	      "lazy abort: %d, state %d, error %d", rc, m.sr->state, m.sr->status.error);
	memset(m.sb, 0x5A, m.len);
	free(m.sb); /* the caller's again: read after this, ASan says so */
	m.sb = NULL;
	xwt_drop_queue(1); /* every frame lost: resent from the copies */
	imp.busy[1] = false;
	rpump(NULL, NULL, 2ULL * 1000000000ULL);
	s = rst(0);
	CHECK(s.rtx_frames[XW_PKT_PULL_REPLY] >= 2 && lazy_ref.bad == 0,
	      "lazy abort: %llu PULL_REPLY resent, %lu of %lu frames with wrong bytes",
	      (unsigned long long)s.rtx_frames[XW_PKT_PULL_REPLY], lazy_ref.bad, lazy_ref.checked);
	if (m.rr->state == XWI_REQ_PENDING)
		xwi_engine_abort(xwt_nodes[1].e, m.rr, -ECANCELED);
	rbatch_free(&m, 1);
	rnet_free();
	lazy_watch(NULL);
	free(ref);

	/* the connection given up, then reset by a new peer incarnation */
	for (int k = 0; k < 2; k++) {
		c.give_up_ns = d.give_up_ns = 3000000000ULL;
		m = (struct rmsgt){ .a = 0, .b = 1, .len = 30 * 64, .seed = 1820 + k };
		rnet_init2(c, d, 1820 + k);
		rone(0, 1, 10, 1830 + k, "lazy reset: first message");
		lazy_post_held(&m, "lazy reset");
		if (k == 0) {
			imp.blackhole = true;
			imp.busy[1] = false;
		} else {
			rnode_restart(1); /* its receive goes with its engine */
			m.rr = NULL;
			imp.busy[1] = false;
		}
		CHECK(rpump(lazy_sent, &m, 10ULL * 1000000000ULL), "lazy reset %d: send state %d", k,
		      m.sr->state);
		CHECK(m.sr->status.error < 0, "lazy reset %d: send error %d", k, m.sr->status.error);
		free(m.sb);
		m.sb = NULL;
		imp.blackhole = false;
		rpump(NULL, NULL, 2ULL * 1000000000ULL);
		if (m.rr && m.rr->state == XWI_REQ_PENDING)
			xwi_engine_abort(xwt_nodes[1].e, m.rr, -ECANCELED);
		rbatch_free(&m, 1);
		rone(0, 1, 30 * 64, 1840 + k, "lazy reset: a large message after it");
		rnet_free();
	}
	printf("lazy retransmission copy: lost fragments resent from the send's buffer; abort "
	       "takes copies (buffer freed at once), give-up and reset let the send go\n");
}

/* Hand node 1 frame @f in three pieces (split at @a and @b of its payload,
 * each piece in a buffer of its own, as a multi-buffer frame's UMEM
 * frames); @flip: a byte of the middle piece flipped.  The engine's answer. */
static int scatter_rx(const struct xwt_lframe *f, size_t a, size_t b, bool flip)
{
	struct xw_addr src = xwt_nodes[f->src].addr;
	unsigned char *piece[3];
	struct iovec iov[3];
	size_t cut[4] = { 0, a < f->len ? a : f->len, b < f->len ? b : f->len, f->len };
	int rc;

	src.nonce = 0;
	for (int i = 0; i < 3; i++) {
		size_t n = cut[i + 1] - cut[i];

		piece[i] = malloc(n ? n : 1); /* exactly: ASan sees a read past it */
		REQUIRE(piece[i], "malloc");
		memcpy(piece[i], f->pl + cut[i], n);
		iov[i].iov_base = piece[i];
		iov[i].iov_len = n;
	}
	if (flip && iov[1].iov_len)
		piece[1][iov[1].iov_len / 2] ^= 0x10;
	rc = xwi_engine_rx_iov(xwt_nodes[1].e, &src, &f->h, iov, 3, f->len);
	for (int i = 0; i < 3; i++)
		free(piece[i]);
	return rc;
}

/* Until @m (@n messages) are done or @passes passes: each frame to node 1
 * handed to @take (which frees its payload), the nodes' progress, node 0's
 * frames delivered, the clock on. */
static void hand_run(struct rmsgt *m, size_t n, int passes,
		     void (*take)(struct xwt_lframe *f, void *arg), void *arg)
{
	struct rmsgt *v[2] = { m, m + n };

	for (int pass = 0; pass < passes && !all_done(v); pass++) {
		size_t q = xwt_nodes[1].q.n;

		for (size_t k = 0; k < q; k++) {
			struct xwt_lframe f = xwt_qpop(1);

			take(&f, arg);
		}
		for (int i = 0; i < 2; i++)
			xwi_engine_progress(xwt_nodes[i].e, 64);
		rdeliver(0);
		rclock += 2000;
	}
}

/* Two nodes, a first message, then @m posted (node 1's frames are the
 * test's to hand in): node 1's CRC failures so far. */
static __u64 hand_start(struct rmsgt *m, size_t n, __u32 seed, const char *what)
{
	rnet_init2(rel_cfg(1), rel_cfg(2), seed);
	rx_rc_bad = 0;
	rone(0, 1, 10, seed + 3, what);
	rbatch_post(m, n, false);
	return rst(1).crc_failures;
}

/*
 * Scatter receive (xwi_engine_rx_iov): a frame whose payload is in several
 * pieces (a multi-buffer frame's UMEM frames) is checked and copied where
 * it lies.  Every frame of a SMALL, a MEDIUM and a large message is handed
 * in three pieces cut at odd places: the bytes arrive; each first in a copy
 * with a byte of its middle piece flipped: dropped, counted as a CRC failure.
 */
static void scatter_take(struct xwt_lframe *f, void *arg)
{
	unsigned long *frames = arg;
	int rc;

	if (f->len > 1) {
		rc = scatter_rx(f, 1 + *frames % 7, f->len / 2 + *frames % 5, true);
		CHECK(rc == -EBADMSG, "scatter: a flipped byte: %d", rc);
	}
	rc = scatter_rx(f, 1 + *frames % 7, f->len / 2 + *frames % 5, false);
	CHECK(rc == 0, "scatter: frame type %u: %d", f->h.type, rc);
	*frames += f->len > 1;
	free(f->pl);
}

static void test_scatter_rx(void)
{
	struct rmsgt m[3] = { { .a = 0, .b = 1, .len = 60, .seed = 1900 },
			      { .a = 0, .b = 1, .len = 250, .seed = 1901 },
			      { .a = 0, .b = 1, .len = 30 * 64, .seed = 1902 } };
	unsigned long frames = 0;
	__u64 crc0;

	crc0 = hand_start(m, 3, 1900, "scatter: first message");
	hand_run(m, 3, 4000, scatter_take, &frames);
	rbatch_check(m, 3, "scatter");
	rbatch_free(m, 3);
	CHECK(frames >= 35 && rst(1).crc_failures - crc0 == frames,
	      "scatter: %lu frames with payload, %llu CRC failures", frames,
	      (unsigned long long)(rst(1).crc_failures - crc0));
	rsettle();
	rnet_free();
	printf("scatter receive: %lu frames in three pieces each, bytes intact; with a flipped "
	       "byte each dropped and counted\n", frames);
}

/* The receives of @m done. */
static size_t recvs_done(const struct rmsgt *m, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += m[i].rr && m[i].rr->state == XWI_REQ_DONE;
	return k;
}

/* test_rel_corrupt_frags' frames: the last data frame taken, the counts */
struct corrupt_frags {
	struct rmsgt *m;
	struct xwt_lframe g;
	unsigned long bad, dups, lasts;
};

static void frags_take(struct xwt_lframe *f, void *arg)
{
	struct corrupt_frags *x = arg;
	bool data = (f->h.type == XW_PKT_MEDIUM || f->h.type == XW_PKT_PULL_REPLY) && f->len;
	size_t done = recvs_done(x->m, 3);
	int rc;

	if (data && x->g.pl) {
		struct xwt_lframe d = x->g;

		d.h.seq = f->h.seq;
		d.h.ack = f->h.ack;
		seal(&d.h, d.pl, d.len);
		rc = scatter_rx(&d, 0, d.len, true);
		CHECK(rc == -EBADMSG, "corrupt frags: a corrupted duplicate: %d", rc);
		x->bad++;
		x->dups++;
	}
	if (data) {
		rc = scatter_rx(f, 0, f->len, true);
		CHECK(rc == -EBADMSG, "corrupt frags: a corrupted new fragment: %d", rc);
		CHECK(recvs_done(x->m, 3) == done,
		      "corrupt frags: a receive completed by a corrupted fragment %u of %u",
		      ntohl(f->h.frag_idx), ntohl(f->h.frag_count));
		x->bad++;
		x->lasts += ntohl(f->h.frag_idx) + 1 == ntohl(f->h.frag_count);
	}
	rc = scatter_rx(f, 0, f->len, false);
	CHECK(rc == 0, "corrupt frags: frame type %u: %d", f->h.type, rc);
	if (data) {
		free(x->g.pl);
		x->g = *f;
	} else {
		free(f->pl);
	}
}

/*
 * Corrupted data frames, each where it could do most harm if anything were
 * taken before its CRC is checked (conn.c xwi_conn_rx checks it before the
 * connection or the message layer takes anything): every data frame of two
 * MEDIUM and a pulled message (receives posted first) comes first with a
 * payload byte flipped (a corrupted new fragment; the last fragment too: its
 * message must not complete), then intact; before it, the previous accepted
 * data frame again as the next in sequence with a byte flipped (a corrupted
 * duplicate: it must not overwrite the bytes taken).  Each corrupted frame
 * dropped and counted, every message complete with the right bytes.  (The
 * CRC fused with the copy out, tried for issue 25 and measured slower,
 * passed it too: bench/RESULTS.md.)
 */
static void test_rel_corrupt_frags(void)
{
	struct rmsgt m[3] = { { .a = 0, .b = 1, .len = 250, .seed = 2100 },
			      { .a = 0, .b = 1, .len = 30 * 64 + 7, .seed = 2101 },
			      { .a = 0, .b = 1, .len = 40000, .seed = 2102 } };
	struct corrupt_frags x = { .m = m };
	__u64 crc0;

	crc0 = hand_start(m, 3, 2100, "corrupt frags: first message");
	hand_run(m, 3, 20000, frags_take, &x);
	free(x.g.pl);
	rbatch_check(m, 3, "corrupt frags");
	rbatch_free(m, 3);
	CHECK(x.lasts == 3 && x.dups > 600 && rst(1).crc_failures - crc0 == x.bad,
	      "corrupt frags: %lu corrupted (%lu duplicates, %lu last fragments), %llu CRC failures", x.bad,
	      x.dups, x.lasts, (unsigned long long)(rst(1).crc_failures - crc0));
	rsettle();
	rnet_free();
	printf("reliability: %lu corrupted data frames (%lu duplicates of taken fragments as the "
	       "next in sequence, %lu last fragments) dropped and counted, bytes intact\n", x.bad,
	       x.dups, x.lasts);
}

/*
 * After a loss episode (30% loss both ways, a 20 KB message each way and
 * small ones) the RTO comes back to its floor (rto_min + ack_delay, twice
 * that allowed for the measured RTT) within a few clean round trips: the
 * samples of the episode were the path's, not the repairs'.
 */
static void test_loss_rto_floor(void)
{
	struct xwi_engine_cfg c = rel_cfg(1), d = rel_cfg(2);
	__u64 floor = 2 * (c.rto_min_ns + c.ack_delay_ns), worst = 0, at_end = 0;
	int rounds = -1;

	c.give_up_ns = d.give_up_ns = 60000000000ULL;
	rnet_init2(c, d, 1730);
	rx_rc_bad = 0;
	imp.drop_ppm = 300000;
	rmix(10, 20000, false, 1730, "rto floor: 30% loss", 600ULL * 1000000000ULL);
	imp.drop_ppm = 0;
	for (int i = 0; i < 2; i++)
		worst = rst(i).rto_ns > worst ? rst(i).rto_ns : worst;
	for (int k = 0; k < 10 && rounds < 0; k++) {
		rone(0, 1, 10, 1731 + (__u32)k, "rto floor: clean");
		rone(1, 0, 10, 1751 + (__u32)k, "rto floor: clean");
		at_end = rst(0).rto_ns > rst(1).rto_ns ? rst(0).rto_ns : rst(1).rto_ns;
		if (at_end <= floor)
			rounds = k + 1;
	}
	CHECK(rounds > 0, "rto floor: after 10 clean round trips the RTO is %llu us (floor %llu us; "
	      "%llu us after the loss)", (unsigned long long)(at_end / 1000),
	      (unsigned long long)(floor / 1000), (unsigned long long)(worst / 1000));
	printf("loss recovery: after 30%% loss (RTO %llu us) the RTO is at its floor (<= %llu us) "
	       "after %d clean round trip(s)\n", (unsigned long long)(worst / 1000),
	       (unsigned long long)(floor / 1000), rounds);
	rsettle();
	rnet_free();
}

/*
 * A selective ack that names a frame never sent (or is malformed) is
 * ignored whole: nothing is resent for it, it is counted (bad_sacks); the
 * connection goes on.
 */
static void test_loss_forged_sack(void)
{
	struct xwi_engine_stats s0, s1;
	struct rmsgt m = { .a = 0, .b = 1, .len = 10, .seed = 1741 };
	struct rmsgt *v[2] = { &m, &m + 1 };
	struct xw_hdr h;
	__u64 w = htobe64(1ULL << 40);
	__u32 una;

	rnet_init2(rel_cfg(1), rel_cfg(2), 1740);
	rx_rc_bad = 0;
	rone(0, 1, 10, 1742, "forged sack: first message");
	rone(1, 0, 10, 1743, "forged sack: an answer");
	imp.blackhole = true;
	rbatch_post(&m, 1, false); /* one SMALL in flight, not delivered */
	una = last_seq(0, 1);
	s0 = rst(0);
	/* 1: the bitmap in match names una + 1 + 5: never sent */
	h = craft(1, 0, XW_PKT_ACK);
	h.ack = htonl(una);
	h.match = htobe64(1ULL << 5);
	seal(&h, NULL, 0);
	CHECK(xwi_engine_rx(xwt_nodes[0].e, &xwt_nodes[1].addr, &h, NULL, 0) == 0, "rx sack 1");
	/* 2: a payload word names una + 1 + 64 + 40 */
	h = craft(1, 0, XW_PKT_ACK);
	h.ack = htonl(una);
	h.payload_len = htons(8);
	seal(&h, &w, 8);
	CHECK(xwi_engine_rx(xwt_nodes[0].e, &xwt_nodes[1].addr, &h, &w, 8) == 0, "rx sack 2");
	/* 3: a payload that is not a whole word */
	h = craft(1, 0, XW_PKT_ACK);
	h.ack = htonl(una);
	h.payload_len = htons(4);
	seal(&h, &w, 4);
	CHECK(xwi_engine_rx(xwt_nodes[0].e, &xwt_nodes[1].addr, &h, &w, 4) == 0, "rx sack 3");
	CHECK(xwi_engine_progress(xwt_nodes[0].e, 64) >= 0, "progress");
	s1 = rst(0);
	/* (three duplicate acks: the oldest frame goes again, fast_rtx) */
	CHECK(s1.bad_sacks == s0.bad_sacks + 3 &&
		      rtx_total(&s1) - rtx_total(&s0) == s1.fast_rtx - s0.fast_rtx &&
		      s1.sack_rtx == s0.sack_rtx,
	      "forged sack: bad_sacks %llu -> %llu (want +3), retransmissions %llu -> %llu",
	      (unsigned long long)s0.bad_sacks, (unsigned long long)s1.bad_sacks,
	      (unsigned long long)rtx_total(&s0), (unsigned long long)rtx_total(&s1));
	imp.blackhole = false;
	CHECK(rpump(all_done, v, 10ULL * 1000000000ULL), "forged sack: not done");
	rbatch_check(&m, 1, "forged sack");
	rbatch_free(&m, 1);
	rsettle();
	rnet_free();
	printf("loss recovery: RTT samples only from frames acknowledged first and never resent; a "
	       "lost tail frame found by the tail probe, a lost retransmission by time, no timer; "
	       "forged selective acks ignored\n");
}

/*
 * The short path of a one-frame send to an established lossless peer
 * (msg.c, send_direct): it completes at isend, its frame out at once; a
 * ring found full queues it and every later send behind it (order), and
 * the queue drains in order when there is room again.
 */
static void test_rel_direct(void)
{
	enum { N = 40 };
	struct xwi_engine_cfg c0 = rel_cfg(1), c1 = rel_cfg(2);
	struct rmsgt m[3 * N + 1] = {};
	struct rmsgt *v[2];
	struct xwi_engine_stats a;
	size_t k = 0;

	rlocal = true;
	memset(&imp, 0, sizeof(imp));
	rseed = 7;
	rng_state = 7 * 0x2545F4914F6CDD1DULL + 1;
	rclock = 1000000000ULL;
	xwt_nlog = 0;
	xwt_nnodes = 2;
	xwt_node_start(0, &c0, &l_ops, 4096);
	xwt_node_start(1, &c1, &l_ops, 4096);
	/* the first opens the connection: the long way */
	m[k++] = (struct rmsgt){ .a = 0, .b = 1, .len = 8, .seed = 500 };
	rbatch_post(m, 1, false);
	v[0] = m;
	v[1] = m + 1;
	CHECK(rpump(all_done, v, 1000000000ULL), "direct: the first message");
	rsettle(); /* the handshake's end (frames may go before it) */
	CHECK(rst(0).sends_direct == 0, "direct: a send before the handshake went direct");
	/* established: each one-frame send completes at isend */
	for (int i = 0; i < N; i++)
		m[k++] = (struct rmsgt){ .a = 0, .b = 1, .len = (size_t)(i * 7 % 65),
					 .seed = 600 + (__u32)i };
	rbatch_post(m + 1, N, false);
	for (size_t i = 1; i < k; i++)
		CHECK(m[i].sr->state == XWI_REQ_DONE, "direct: send %zu pending after isend", i);
	a = rst(0);
	CHECK(a.sends_direct == N, "direct: %llu of %d sends direct",
	      (unsigned long long)a.sends_direct, N);
	/* a full ring: queued, and what follows waits behind it */
	xwt_nodes[1].cap = xwt_nodes[1].q.n + 2 + 3;
	for (int i = 0; i < N; i++)
		m[k++] = (struct rmsgt){ .a = 0, .b = 1, .len = (size_t)(i * 5 % 65),
					 .seed = 700 + (__u32)i };
	rbatch_post(m + 1 + N, N, false);
	a = rst(0);
	CHECK(a.sends_direct == N + 3, "direct: %llu sends direct with a full ring (want %d)",
	      (unsigned long long)a.sends_direct, N + 3);
	xwt_nodes[1].cap = 4096;
	/* more after the queue drained: direct again */
	v[1] = m + k;
	CHECK(rpump(all_done, v, 1000000000ULL), "direct: the queued sends");
	for (int i = 0; i < N; i++)
		m[k++] = (struct rmsgt){ .a = 0, .b = 1, .len = 64, .seed = 800 + (__u32)i };
	rbatch_post(m + 1 + 2 * N, N, false);
	v[1] = m + k;
	CHECK(rpump(all_done, v, 1000000000ULL), "direct: all messages");
	rbatch_check(m, k, "direct");
	a = rst(0);
	CHECK(a.sends_direct == 2 * N + 3 && a.sends_done == k,
	      "direct: %llu direct, %llu done of %zu", (unsigned long long)a.sends_direct,
	      (unsigned long long)a.sends_done, k);
	CHECK(rtx_total(&a) == 0 && rx_rc_bad == 0, "direct: retransmissions or refused frames");
	/* in order: each receive matched its own message (tags differ) and
	 * the frames went in send order */
	for (size_t i = 1, last = 0; i < xwt_nlog; i++)
		if (xwt_flog[i].src == 0 && xwt_flog[i].h.type == XW_PKT_SMALL) {
			CHECK(!last || ntohl(xwt_flog[i].h.msg_id) == ntohl(xwt_flog[last].h.msg_id) + 1,
			      "direct: msg ids out of order at frame %zu", i);
			last = i;
		}
	rbatch_free(m, k);
	printf("reliability: %d one-frame sends to a lossless peer direct, %d queued behind a "
	       "full ring, in order\n", 2 * N + 3, N - 3);
	rnet_free();
	rlocal = false;
}

int main(void)
{
	test_crc32c();
	test_rel_clean();
	test_rel_soak();
	test_rel_setup_loss();
	test_rel_corrupt();
	test_rel_dup();
	test_rel_reorder();
	test_rel_jumbo();
	test_rel_kept_cache();
	test_rel_matrix();
	test_rel_wrap();
	test_rel_forged();
	test_rel_flood();
	test_rel_probe();
	test_rel_giveup_directed();
	test_rel_crossing();
	test_rel_reconnect();
	test_rel_sack();
	test_loss_rtt_samples();
	test_loss_tail_probe();
	test_rel_ack_owed();
	test_loss_lost_rtx();
	test_loss_rto_floor();
	test_loss_forged_sack();
	test_lazy_rtx();
	test_scatter_rx();
	test_rel_corrupt_frags();
	test_rel_more_hint();
	test_rel_blackhole();
	test_rel_restart();
	test_rel_nonce();
	test_rel_stale_connect();
	test_rel_bound();
	test_rel_partial_dead();
	test_rel_close();
	test_rel_close_last_ack();
	test_rel_killed();
	test_rel_busy_peer();
	test_rel_gone_peer();
	test_rel_direct();
	xwt_log_free();
	return xwt_done();
}
