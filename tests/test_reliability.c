// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Reliability end to end: the real library (XDP program, AF_XDP) between
 * hosts A and B, every frame crossing the fault harness's middle namespace,
 * where it is dropped, corrupted, duplicated, reordered or blackholed.  In
 * each scenario A and B exchange a mix of sizes in both directions and
 * every byte is verified; the library's counters must show the recovery
 * (retransmissions, CRC failures equal to the frames corrupted, duplicates
 * suppressed) and never a second session on a link that stays up.
 */
#include "fault.h"
#include "xdpwake.h"

#define EP 1
#define ROUNDS 3
static const size_t sizes[] = { 0, 100, 5000, 40000, 300000 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

struct scenario {
	const char *name;
	struct xwf_cfg ab, ba;	  /* impairments per direction */
	struct xwf_relay_cfg relay; /* A -> B through the relay (delay/reorder) */
	bool use_relay;
	int blackhole_ms;	  /* a blackhole of this length in the middle */
	/* requests completed by polling xw_endpoint__progress() alone (no
	 * wait: the calls that find nothing due skip their pass) */
	bool polled;
	/* expectations */
	bool want_retransmits;
	bool crc_exact;		  /* crc_failures == frames the harness corrupted */
	bool want_dups;
};

#define CTL_TYPES                                                                        \
	(XWF_TYPE(XW_PKT_CONNECT) | XWF_TYPE(XW_PKT_CONNECT_REPLY) | XWF_TYPE(XW_PKT_ACK) | \
	 XWF_TYPE(XW_PKT_PULL))

/* Across scenarios (each runs in fresh child processes). */
static struct {
	__u64 pull_replies; /* PULL_REPLY first transmissions of the workload */
} *shared;

struct result {
	struct xw_endpoint_stats st;
	int failures;
};

static unsigned char pattern(size_t i, unsigned int seed)
{
	return (unsigned char)((i * 2654435761u) >> 13 ^ seed);
}

/* On a failure: the XDP program's and the library's counters of @ep. */
static void diag(struct xw_endpoint *ep, const char *what)
{
	struct xw_endpoint_stats es = { .sz = sizeof(es) };
	XW_OPTS(xw_stats, xs);
	struct xw_addr me;

	xw_endpoint__addr(ep, &me);
	if (xw_iface__stats(xw_endpoint__iface(ep), me.ep, &xs) == 0) {
		printf("  [%s] endpoint %u, XDP counters:", what, me.ep);
		for (int i = 0; i < xw_stat_count(); i++)
			if (xw_stat_value(&xs, i))
				printf(" %s=%llu", xw_stat_name(i),
				       (unsigned long long)xw_stat_value(&xs, i));
		printf("\n");
	}
	if (xw_iface__stats(xw_endpoint__iface(ep), XW_STATS_IFACE, &xs) == 0) {
		printf("  [%s] not an endpoint's:", what);
		for (int i = 0; i < xw_stat_count(); i++)
			if (xw_stat_value(&xs, i))
				printf(" %s=%llu", xw_stat_name(i),
				       (unsigned long long)xw_stat_value(&xs, i));
		printf("\n");
	}
	if (xw_endpoint__stats(ep, &es) == 0)
		printf("  [%s] library: rx %llu tx %llu rtx %llu rejects %llu sessions %llu "
		       "resets %llu timeouts %llu crc %llu dup %llu ooo %llu ctl %llu\n", what,
		       (unsigned long long)es.rx_frames, (unsigned long long)es.tx_frames,
		       (unsigned long long)es.retransmits, (unsigned long long)es.session_rejects,
		       (unsigned long long)es.sessions, (unsigned long long)es.peer_resets,
		       (unsigned long long)es.conn_timeouts, (unsigned long long)es.crc_failures,
		       (unsigned long long)es.rx_dup_frames, (unsigned long long)es.rx_out_of_order,
		       (unsigned long long)es.rx_ctrl_frames);
}

/* @req finished by polling xw_endpoint__progress() (at most 20 s): its
 * error, or -ETIMEDOUT (the request cancelled if it can be; its buffer is
 * static, the endpoint's close ends it otherwise). */
static int poll_done(struct xw_endpoint *ep, struct xw_request *req, struct xw_status *st)
{
	__u64 t0 = xwu_now_ns();
	int r;

	while ((r = xw_request__test(req, st)) == 0 && xwu_now_ns() - t0 < 20000000000ULL)
		xw_endpoint__progress(ep);
	if (r == 1)
		return st->error;
	if (xw_request__cancel(req) == 0)
		xw_request__test(req, st);
	return -ETIMEDOUT;
}

/* One message from the sender to the receiver, verified byte for byte
 * (@polled: completed by progress calls alone). */
static void xfer(struct xw_endpoint *ep, const struct xw_addr *peer, bool sender, size_t len,
		 unsigned int seed, const char *what, bool polled)
{
	static unsigned char buf[300000 + 64];
	XW_OPTS(xw_status, st);
	struct xw_request *req;
	int err;

	if (sender) {
		for (size_t k = 0; k < len; k++)
			buf[k] = pattern(k, seed);
		if (polled) {
			err = xw_endpoint__isend(ep, peer, buf, len, seed, &req);
			if (!err)
				err = poll_done(ep, req, &st);
		} else {
			err = xw_endpoint__send(ep, peer, buf, len, seed, 20000);
		}
		CHECK(err == 0, "[%s] send %zu: %s", what, len, xw_strerror(err));
		if (err)
			diag(ep, what);
		return;
	}
	memset(buf, 0xEE, len + 64);
	if (polled) {
		err = xw_endpoint__irecv(ep, buf, len, seed, ~0ULL, &req);
		if (!err)
			err = poll_done(ep, req, &st);
	} else {
		err = xw_endpoint__recv(ep, buf, len, seed, ~0ULL, &st, 20000);
	}
	CHECK(err == 0 && st.len == len, "[%s] recv %zu: %s (len %zu)", what, len, xw_strerror(err),
	      st.len);
	if (err)
		diag(ep, what);
	for (size_t k = 0; !err && k < len; k++)
		if (buf[k] != pattern(k, seed)) {
			CHECK(0, "[%s] %zu bytes: byte %zu damaged", what, len, k);
			break;
		}
	for (int k = 0; k < 64; k++)
		if (buf[len + k] != 0xEE) {
			CHECK(0, "[%s] wrote past the buffer", what);
			break;
		}
}

/*
 * Before the counters are read: both hosts progress until neither sent nor
 * received a frame for 300 ms, longer than the longest retransmission
 * timeout (250 ms), agreeing over the channel after each round.  Then no
 * delayed ACK, retransmission or corrupted frame is still on its way, so
 * the two hosts' counters and the harness's describe the same frames.  (A
 * fixed 100 ms of progress was enough only if neither host was kept off
 * the CPU meanwhile.)
 */
static void settle(struct xwf_topo *t, struct xw_endpoint *ep)
{
	for (int round = 0;; round++) {
		struct xw_endpoint_stats a = { .sz = sizeof(a) }, b = { .sz = sizeof(b) };
		__u64 t0 = xwu_now_ns(), busy, other;

		REQUIRE(round < 100, "the link did not go quiet in 100 rounds");
		xw_endpoint__stats(ep, &a);
		while (xwu_now_ns() - t0 < 300000000ULL) {
			xw_endpoint__progress(ep);
			usleep(1000);
		}
		xw_endpoint__stats(ep, &b);
		busy = a.tx_frames != b.tx_frames || a.rx_frames != b.rx_frames;
		xwt_xchg(t->chan, ep, &busy, &other, sizeof(busy));
		if (!busy && !other)
			return;
	}
}

/* This host's endpoint (give_up_ms @give_up) on a pin directory of its
 * own; the peer's address in @peer. */
static struct xw_endpoint *open_ep(struct xwf_topo *t, __u32 give_up, struct xw_addr *peer)
{
	struct xw_endpoint *ep;
	struct xw_addr me;
	int err;

	snprintf(xwt_pin_dir, sizeof(xwt_pin_dir), "/sys/fs/bpf/xwtest-%d", (int)getpid());
	atexit(xwt_pin_cleanup);
	XW_OPTS(xw_endpoint_opts, o, .pin_root = xwt_pin_dir, .give_up_ms = give_up);
	err = xw_endpoint__open(t->ifname[t->self], EP, &o, &ep);
	REQUIRE(err == 0, "open: %s", xw_strerror(err));
	xw_endpoint__addr(ep, &me);
	xwt_xchg(t->chan, NULL, &me, peer, sizeof(me));
	return ep;
}

static int host(struct xwf_topo *t, void *arg)
{
	const struct scenario *sc = arg;
	struct xw_endpoint *ep;
	struct xw_addr peer;
	struct result res = {};

	ep = open_ep(t, 8000, &peer);
	if (sc->blackhole_ms && t->self == XWF_HOST_A) {
		struct xwf_cfg bh = sc->ab;

		/* From now, for blackhole_ms, both ways: the first messages wait. */
		xwf_blackhole_in(&bh, 0, sc->blackhole_ms);
		xwf_set(t, XWF_A_TO_B, &bh);
		bh = sc->ba;
		xwf_blackhole_in(&bh, 0, sc->blackhole_ms);
		xwf_set(t, XWF_B_TO_A, &bh);
	}
	xwt_bar(t->chan, ep, "start");
	for (int r = 0; r < ROUNDS; r++)
		for (size_t i = 0; i < NSIZES; i++)
			for (int dir = 0; dir < 2; dir++)
				xfer(ep, &peer, (dir == 0) == (t->self == XWF_HOST_A), sizes[i],
				     (unsigned)(r * 100 + i * 2 + dir), sc->name, sc->polled);
	/* Let the last acks settle before the numbers are read. */
	settle(t, ep);
	res.st.sz = sizeof(res.st);
	xw_endpoint__stats(ep, &res.st);
	res.failures = xwt_failures;
	/* Hand the numbers to the parent through the channel's peer: A sends
	 * its result to B, B prints both. */
	if (t->self == XWF_HOST_A) {
		REQUIRE(write(t->chan, &res, sizeof(res)) == sizeof(res), "result");
	} else {
		struct result ra;

		REQUIRE(read(t->chan, &ra, sizeof(ra)) == sizeof(ra), "result");
		printf("  %-18s retransmits A %llu B %llu, duplicate frames %llu, held out of "
		       "order %llu, CRC failures %llu, sessions %llu\n", sc->name,
		       (unsigned long long)ra.st.retransmits,
		       (unsigned long long)res.st.retransmits,
		       (unsigned long long)(ra.st.rx_dup_frames + res.st.rx_dup_frames),
		       (unsigned long long)(ra.st.rx_out_of_order + res.st.rx_out_of_order),
		       (unsigned long long)(ra.st.crc_failures + res.st.crc_failures),
		       (unsigned long long)(ra.st.sessions + res.st.sessions));
		/* The link never went away for good: one session each way. */
		CHECK(ra.st.sessions == 1 && res.st.sessions == 1 &&
			      ra.st.conn_timeouts + res.st.conn_timeouts == 0 &&
			      ra.st.peer_resets + res.st.peer_resets == 0,
		      "[%s] sessions A %llu B %llu, timeouts %llu, resets %llu", sc->name,
		      (unsigned long long)ra.st.sessions, (unsigned long long)res.st.sessions,
		      (unsigned long long)(ra.st.conn_timeouts + res.st.conn_timeouts),
		      (unsigned long long)(ra.st.peer_resets + res.st.peer_resets));
		if (sc->want_retransmits)
			CHECK(ra.st.retransmits + res.st.retransmits > 0,
			      "[%s] no retransmission although frames were lost", sc->name);
		if (sc->crc_exact) {
			struct xwf_counters ab = xwf_counters(t, XWF_A_TO_B);
			struct xwf_counters ba = xwf_counters(t, XWF_B_TO_A);

			CHECK(ra.st.crc_failures + res.st.crc_failures == ab.corrupted + ba.corrupted,
			      "[%s] CRC failures %llu, frames corrupted %llu", sc->name,
			      (unsigned long long)(ra.st.crc_failures + res.st.crc_failures),
			      (unsigned long long)(ab.corrupted + ba.corrupted));
			CHECK(ab.corrupted + ba.corrupted > 0, "[%s] nothing was corrupted", sc->name);
		}
		{
			/* PULL_REPLY frames sent for the first time: the
			 * same in every scenario (the same messages), unless
			 * a PULL was answered twice. */
			__u64 first = ra.st.tx_by_type[XW_PKT_PULL_REPLY] +
				      res.st.tx_by_type[XW_PKT_PULL_REPLY] -
				      ra.st.rtx_by_type[XW_PKT_PULL_REPLY] -
				      res.st.rtx_by_type[XW_PKT_PULL_REPLY];

			if (!shared->pull_replies)
				shared->pull_replies = first;
			CHECK(first == shared->pull_replies,
			      "[%s] %llu PULL_REPLY frames sent (retransmissions aside), %llu in the "
			      "clean run: a PULL was answered twice", sc->name,
			      (unsigned long long)first, (unsigned long long)shared->pull_replies);
			CHECK(first > 0, "[%s] no PULL_REPLY sent", sc->name);
		}
		if (sc->want_dups) {
			struct xwf_counters ab = xwf_counters(t, XWF_A_TO_B);
			struct xwf_counters ba = xwf_counters(t, XWF_B_TO_A);

			CHECK(ra.st.rx_dup_frames + res.st.rx_dup_frames > 0 &&
				      ab.duplicated + ba.duplicated > 0,
			      "[%s] duplicates: %llu made, %llu suppressed", sc->name,
			      (unsigned long long)(ab.duplicated + ba.duplicated),
			      (unsigned long long)(ra.st.rx_dup_frames + res.st.rx_dup_frames));
		}
	}
	xw_endpoint__close(ep);
	return xwt_failures ? 1 : 0;
}

/* The endpoint of this host (give_up_ms @give_up), the peer's address in
 * @peer, after one message A -> B: the connection is up. */
static struct xw_endpoint *open_connected(struct xwf_topo *t, __u32 give_up,
					  struct xw_addr *peer)
{
	struct xw_endpoint *ep = open_ep(t, give_up, peer);
	XW_OPTS(xw_status, s);
	char buf[16];

	if (t->self == XWF_HOST_A)
		CHECK(xw_endpoint__send(ep, peer, "up", 3, 1, 5000) == 0, "first send");
	else
		CHECK(xw_endpoint__recv(ep, buf, sizeof(buf), 1, ~0ULL, &s, 5000) == 0,
		      "first recv");
	xwt_bar(t->chan, ep, "up");
	return ep;
}

/* Warnings naming a given-up peer (the library's log, outage_host). */
static int gave_up_msgs;
static char gave_up_last[512];

static void gave_up_cb(enum xw_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (level == XW_LOG_WARN && strstr(msg, "given up")) {
		gave_up_msgs++;
		snprintf(gave_up_last, sizeof(gave_up_last), "%s", msg);
	}
}

/* An outage longer than give_up_ms: the send fails cleanly with
 * -ETIMEDOUT at give_up_ms, the connection is counted as given up, and
 * after the outage a new exchange works (a new session).  The outage
 * lasts until A has given up (then A ends it): no time window for a slow
 * host to miss. */
static int outage_host(struct xwf_topo *t, void *arg)
{
	static unsigned char buf[300000];
	struct xw_endpoint *ep;
	struct xw_addr peer;
	struct xw_endpoint_stats st = { .sz = sizeof(st) };
	XW_OPTS(xw_status, s);
	__u64 t0, ms;
	int err;

	(void)arg;
	ep = open_connected(t, 1000, &peer);
	if (t->self == XWF_HOST_A) {
		struct xwf_cfg bh = {};

		xwf_blackhole_in(&bh, 0, 600000);
		xwf_set(t, XWF_A_TO_B, &bh);
		xwf_set(t, XWF_B_TO_A, &bh);
		xw_set_log(gave_up_cb, NULL, XW_LOG_WARN);
		t0 = xwu_now_ns();
		err = xw_endpoint__send(ep, &peer, buf, sizeof(buf), 2, 10000);
		ms = (xwu_now_ns() - t0) / 1000000;
		xw_set_log(NULL, NULL, XW_LOG_ERROR);
		xw_endpoint__stats(ep, &st);
		{
			/* the failure is said once, naming the peer */
			char pa[XW_ADDR_STRLEN];

			REQUIRE(xw_addr_format(&peer, pa, sizeof(pa)) > 0, "format the peer");
			pa[strcspn(pa, "/")] = 0; /* its MAC or IPv4:port part */
			CHECK(gave_up_msgs == 1 && strstr(gave_up_last, pa) &&
				      strstr(gave_up_last, "-ETIMEDOUT"),
			      "%d warnings of a given-up peer (%s), last \"%s\"", gave_up_msgs, pa,
			      gave_up_last);
		}
		/* given up (not the call's own 10 s timeout), never before
		 * give_up_ms */
		CHECK(err == -ETIMEDOUT, "send through an outage: %s", xw_strerror(err));
		CHECK(st.conn_timeouts >= 1, "connection not counted as given up");
		CHECK(ms >= 900, "gave up after %llu ms (give_up_ms 1000)", (unsigned long long)ms);
		printf("  outage until given up, give_up_ms 1000: -ETIMEDOUT after %llu ms\n",
		       (unsigned long long)ms);
		/* the outage ends */
		xwf_set(t, XWF_A_TO_B, NULL);
		xwf_set(t, XWF_B_TO_A, NULL);
	}
	xwt_bar(t->chan, ep, "outage");
	/* After the outage: talk again. */
	xwt_bar(t->chan, ep, "after");
	if (t->self == XWF_HOST_A)
		CHECK((err = xw_endpoint__send(ep, &peer, "again", 6, 3, 5000)) == 0,
		      "send after the outage: %s", xw_strerror(err));
	else
		CHECK((err = xw_endpoint__recv(ep, buf, 16, 3, ~0ULL, &s, 5000)) == 0 &&
			      !strcmp((char *)buf, "again"),
		      "recv after the outage: %s", xw_strerror(err));
	xwt_bar(t->chan, ep, "done");
	xw_endpoint__close(ep);
	return xwt_failures ? 1 : 0;
}

/*
 * Exactly once across a give-up of one side: A's frames to B are lost
 * (B's reach A) while B sends A 20 messages; A takes them all, B hears
 * none of A's acks.  A's own message into the outage makes A give up
 * after its give_up_ms (1 s); then A ends the outage, so B's give_up_ms
 * (5 s) is not reached however slowly A ran.  When A talks
 * again, B sees a new session of the same endpoint: it reconnects and
 * sends its unacknowledged messages again, and A, which kept its message
 * stream state, takes none of them twice.
 */
#define GU_MSGS 20
static int giveup_host(struct xwf_topo *t, void *arg)
{
	static unsigned char buf[1024];
	struct xw_endpoint *ep;
	struct xw_addr peer;
	struct xw_endpoint_stats st = { .sz = sizeof(st) };
	XW_OPTS(xw_status, s);
	int err;

	(void)arg;
	ep = open_connected(t, t->self == XWF_HOST_A ? 1000 : 5000, &peer);
	if (t->self == XWF_HOST_A) {
		struct xwf_cfg bh = {};

		xwf_blackhole_in(&bh, 0, 600000); /* until A gave up: below */
		xwf_set(t, XWF_A_TO_B, &bh);
	}
	xwt_bar(t->chan, ep, "outage on");
	if (t->self == XWF_HOST_B) {
		for (int i = 0; i < GU_MSGS; i++) {
			memset(buf, 'a' + i, 100);
			err = xw_endpoint__send(ep, &peer, buf, 100, 100 + (__u64)i, 5000);
			CHECK(err == 0, "[give-up] B's send %d: %s", i, xw_strerror(err));
		}
	} else {
		__u64 t0 = xwu_now_ns();

		for (int i = 0; i < GU_MSGS; i++) {
			err = xw_endpoint__recv(ep, buf, sizeof(buf), 100 + (__u64)i, ~0ULL, &s, 5000);
			CHECK(err == 0 && s.len == 100 && buf[0] == 'a' + i && buf[99] == 'a' + i,
			      "[give-up] A's receive %d: %s", i, xw_strerror(err));
		}
		/* into the outage: never acknowledged, A gives B up */
		CHECK(xw_endpoint__send(ep, &peer, "lost", 5, 2, 5000) == 0, "A's send");
		/* (B's resends during the outage make A introduce itself
		 * again, into the outage: that may be given up too) */
		do {
			xw_endpoint__progress(ep);
			usleep(1000);
			xw_endpoint__stats(ep, &st);
		} while (st.conn_timeouts == 0 && xwu_now_ns() - t0 < 20000000000ULL);
		CHECK(st.conn_timeouts >= 1, "[give-up] A never gave up (20 s)");
		xwf_set(t, XWF_A_TO_B, NULL); /* the outage ends */
	}
	xwt_bar(t->chan, ep, "outage over");
	if (t->self == XWF_HOST_A) {
		CHECK(xw_endpoint__send(ep, &peer, "again", 6, 3, 5000) == 0, "A's send after");
		/* B's 20 messages must not come again */
		err = xw_endpoint__recv(ep, buf, sizeof(buf), 0, 0, &s, 1000);
		CHECK(err == -ETIMEDOUT, "[give-up] a message came twice (match %llu): %s",
		      (unsigned long long)s.match, xw_strerror(err));
		xw_endpoint__stats(ep, &st);
		CHECK(st.rx_dup > 0 || st.rx_dup_frames > 0,
		      "[give-up] A saw no copy of B's messages again (nothing was tested)");
	} else {
		CHECK(xw_endpoint__recv(ep, buf, 16, 3, ~0ULL, &s, 5000) == 0 &&
			      !strcmp((char *)buf, "again"),
		      "[give-up] B's receive after the outage");
		xw_endpoint__stats(ep, &st);
		CHECK(st.reconnects == 1 && st.peer_resets == 0 && st.conn_timeouts == 0 &&
			      st.carried > 0,
		      "[give-up] B: reconnects %llu resets %llu timeouts %llu carried %llu",
		      (unsigned long long)st.reconnects, (unsigned long long)st.peer_resets,
		      (unsigned long long)st.conn_timeouts, (unsigned long long)st.carried);
		printf("  give-up, one side  A gave up, B reconnected: %d messages taken before, "
		       "%llu frames carried over (A checks that none is taken twice)\n", GU_MSGS,
		       (unsigned long long)st.carried);
	}
	xwt_bar(t->chan, ep, "done");
	xw_endpoint__close(ep);
	return xwt_failures ? 1 : 0;
}

/* Sum of A's and B's counters: B gets A's through the channel. */
static bool sum_stats(struct xwf_topo *t, struct xw_endpoint *ep, struct xw_endpoint_stats *sum);

/*
 * A 2 s blackhole every 7 s, both ways, for 16 s (three outages) while A and
 * B keep exchanging messages of every class in turn: every byte arrives,
 * the outages are ridden out by retransmission in the same session (no
 * reset, no give-up: give_up_ms 8000).
 */
static int periodic_host(struct xwf_topo *t, void *arg)
{
	static const size_t sz[] = { 0, 100, 5000, 40000, 300000 };
	struct xw_endpoint_stats sum = { .sz = sizeof(sum) };
	struct xw_endpoint *ep;
	struct xw_addr peer;
	__u64 t0;
	int n = 0;

	(void)arg;
	ep = open_connected(t, 8000, &peer);
	if (t->self == XWF_HOST_A) {
		struct xwf_cfg bh = {};

		xwf_blackhole_every(&bh, 7000, 2000);
		xwf_set(t, XWF_A_TO_B, &bh);
		xwf_set(t, XWF_B_TO_A, &bh);
	}
	xwt_bar(t->chan, ep, "blackholes on");
	t0 = xwu_now_ns();
	for (;;) {
		int go = xwu_now_ns() - t0 < 16000000000ULL && !xwt_failures, other;

		/* A decides; both stop together */
		xwt_xchg(t->chan, ep, &go, &other, sizeof(go));
		if (t->self == XWF_HOST_B)
			go = other;
		if (!go)
			break;
		xfer(ep, &peer, (n % 2 == 0) == (t->self == XWF_HOST_A), sz[n % 5],
		     (unsigned)(1000 + n), "2 s blackhole every 7 s", false);
		n++;
	}
	if (t->self == XWF_HOST_A)
		xwf_clear(t);
	settle(t, ep);
	if (sum_stats(t, ep, &sum)) {
		__u64 bh = xwf_counters(t, XWF_A_TO_B).blackholed +
			   xwf_counters(t, XWF_B_TO_A).blackholed;

		CHECK(sum.sessions == 2 && sum.peer_resets == 0 && sum.conn_timeouts == 0,
		      "[periodic blackhole] sessions %llu resets %llu timeouts %llu",
		      (unsigned long long)sum.sessions, (unsigned long long)sum.peer_resets,
		      (unsigned long long)sum.conn_timeouts);
		CHECK(bh > 0 && sum.retransmits > 0, "[periodic blackhole] %llu frames blackholed, "
		      "%llu retransmissions", (unsigned long long)bh,
		      (unsigned long long)sum.retransmits);
		printf("  %-18s 16 s, %d messages both ways: %llu frames blackholed, %llu "
		       "retransmissions, one session each\n", "2 s every 7 s", n,
		       (unsigned long long)bh, (unsigned long long)sum.retransmits);
	}
	xwt_bar(t->chan, ep, "done");
	xw_endpoint__close(ep);
	return xwt_failures ? 1 : 0;
}

static bool sum_stats(struct xwf_topo *t, struct xw_endpoint *ep, struct xw_endpoint_stats *sum)
{
	struct xw_endpoint_stats mine = { .sz = sizeof(mine) }, other = { .sz = sizeof(other) };

	xw_endpoint__stats(ep, &mine);
	if (t->self == XWF_HOST_A) {
		REQUIRE(write(t->chan, &mine, sizeof(mine)) == sizeof(mine), "stats");
		return false;
	}
	REQUIRE(read(t->chan, &other, sizeof(other)) == sizeof(other), "stats");
	*sum = mine;
	/* Every counter after sz. */
	for (size_t i = offsetof(struct xw_endpoint_stats, tx_frames) / sizeof(__u64);
	     i < sizeof(mine) / sizeof(__u64); i++)
		((__u64 *)sum)[i] += ((__u64 *)&other)[i];
	return true;
}

/*
 * 30% loss (every type, both ways) while connections are set up:
 * SETUP_CONNS fresh endpoint pairs, one after the other; for each, the loss
 * is on from before the open until the first message has gone each way
 * (the handshake and the first frames), then off for a few more messages.
 * Every byte arrives, each endpoint has exactly one session, and
 * handshake frames were retransmitted.
 */
#define SETUP_CONNS 10
static int setup_host(struct xwf_topo *t, void *arg)
{
	static const size_t sz[] = { 0, 100, 5000, 40000 };
	__u64 hs_rtx = 0, rtx = 0, base_seed = t->seed;

	(void)arg;
	snprintf(xwt_pin_dir, sizeof(xwt_pin_dir), "/sys/fs/bpf/xwtest-%d", (int)getpid());
	atexit(xwt_pin_cleanup);
	for (int k = 0; k < SETUP_CONNS && !xwt_failures; k++) {
		struct xw_endpoint_stats sum = { .sz = sizeof(sum) };
		struct xw_endpoint *ep;
		struct xw_addr me, peer;
		int err;

		if (t->self == XWF_HOST_A) {
			struct xwf_cfg loss = { .drop_p = XWF_P(0.3) };

			/* xwf_set restarts the frame numbers: without a seed
			 * per connection, every set-up would meet the same
			 * losses */
			xwf_set_seed(t, base_seed + 0x9E3779B97F4A7C15ULL * (__u64)k);
			xwf_set(t, XWF_A_TO_B, &loss);
			xwf_set(t, XWF_B_TO_A, &loss);
		}
		xwt_bar(t->chan, NULL, "loss on");
		XW_OPTS(xw_endpoint_opts, o, .pin_root = xwt_pin_dir, .give_up_ms = 15000);
		err = xw_endpoint__open(t->ifname[t->self], (__u16)(2 + k), &o, &ep);
		REQUIRE(err == 0, "open: %s", xw_strerror(err));
		xw_endpoint__addr(ep, &me);
		xwt_xchg(t->chan, NULL, &me, &peer, sizeof(me));
		for (size_t i = 0; i < sizeof(sz) / sizeof(sz[0]); i++) {
			if (i == 1) {
				xwt_bar(t->chan, ep, "set up");
				if (t->self == XWF_HOST_A)
					xwf_clear(t);
				xwt_bar(t->chan, ep, "loss off");
			}
			for (int dir = 0; dir < 2; dir++)
				xfer(ep, &peer, (dir == 0) == (t->self == XWF_HOST_A), sz[i],
				     (unsigned)(k * 10 + i * 2 + dir), "30% set-up loss", false);
		}
		settle(t, ep);
		if (sum_stats(t, ep, &sum)) {
			/* both ends: one session each, never a second */
			CHECK(sum.sessions == 2 && sum.peer_resets == 0 && sum.conn_timeouts == 0,
			      "[30%% set-up loss] connection %d: sessions %llu (want 1 each), resets "
			      "%llu, timeouts %llu", k, (unsigned long long)sum.sessions,
			      (unsigned long long)sum.peer_resets,
			      (unsigned long long)sum.conn_timeouts);
			hs_rtx += sum.rtx_by_type[XW_PKT_CONNECT] +
				  sum.rtx_by_type[XW_PKT_CONNECT_REPLY];
			rtx += sum.retransmits;
		}
		if (t->self == XWF_HOST_B && (getenv("XWT_DEBUG") || xwt_failures))
			for (int d = 0; d < 2; d++) {
				struct xwf_counters c = xwf_counters(t, d);

				printf("  [30%% set-up loss] connection %d, %s: seen %llu matched "
				       "%llu dropped %llu other %llu errors %llu\n", k,
				       d == XWF_A_TO_B ? "A->B" : "B->A",
				       (unsigned long long)c.seen, (unsigned long long)c.matched,
				       (unsigned long long)c.dropped, (unsigned long long)c.other,
				       (unsigned long long)c.errors);
			}
		xwt_bar(t->chan, ep, "conn done");
		xw_endpoint__close(ep);
	}
	if (t->self == XWF_HOST_A)
		xwf_set_seed(t, base_seed);
	if (t->self == XWF_HOST_B) {
		__u64 dropped = xwf_counters(t, XWF_A_TO_B).dropped + xwf_counters(t, XWF_B_TO_A).dropped;

		/* (a lost CONNECT is often recovered without being resent: the
		 * data sent with it makes the peer introduce itself) */
		printf("  %-18s %d connections set up and used: %llu frames dropped during the "
		       "set-ups, %llu retransmissions, %llu of them CONNECT/CONNECT_REPLY\n",
		       "30% set-up loss", SETUP_CONNS, (unsigned long long)dropped,
		       (unsigned long long)rtx, (unsigned long long)hs_rtx);
		CHECK(dropped > 0, "[30%% set-up loss] nothing was dropped");
	}
	return xwt_failures ? 1 : 0;
}

/*
 * Loss matrix: the harness drops the first frame of one packet type (in the
 * direction that type goes); A sends a SMALL, a MEDIUM and a rendezvous
 * message to B.  Everything arrives and that type was sent again exactly
 * once - more only if the extra copies were spurious (RTO under load),
 * which the receiver then saw as duplicates.  A lost ACK is not resent as
 * such: the data it acknowledged is, or a later ack covers it.
 */
static int matrix_host(struct xwf_topo *t, void *arg)
{
	unsigned int type = *(unsigned int *)arg;
	static const size_t sz[] = { 10, 3000, 300000 };
	struct xw_endpoint_stats sum = { .sz = sizeof(sum) };
	struct xw_endpoint *ep;
	struct xw_addr peer;
	char what[32];

	snprintf(what, sizeof(what), "matrix %s", xw_pkt_type_name(type));
	ep = open_ep(t, 8000, &peer);
	for (size_t i = 0; i < sizeof(sz) / sizeof(sz[0]); i++)
		xfer(ep, &peer, t->self == XWF_HOST_A, sz[i], (unsigned)i, what, false);
	settle(t, ep);
	if (sum_stats(t, ep, &sum)) {
		struct xwf_counters ab = xwf_counters(t, XWF_A_TO_B), ba = xwf_counters(t, XWF_B_TO_A);
		__u64 r = sum.rtx_by_type[type];

		CHECK(ab.dropped + ba.dropped == 1, "[%s] the harness dropped %llu frames, want 1",
		      what, (unsigned long long)(ab.dropped + ba.dropped));
		if (type != XW_PKT_ACK)
			CHECK(r >= 1 && r - 1 <= sum.rx_dup_frames,
			      "[%s] %llu retransmissions of the type (%llu duplicates received), "
			      "want 1", what, (unsigned long long)r,
			      (unsigned long long)sum.rx_dup_frames);
		CHECK(sum.sessions == 2 && sum.peer_resets == 0, "[%s] sessions %llu, resets %llu",
		      what, (unsigned long long)sum.sessions, (unsigned long long)sum.peer_resets);
		printf("  %-18s first %s lost: %llu retransmission(s) of it, %llu in all\n", what,
		       xw_pkt_type_name(type), (unsigned long long)r,
		       (unsigned long long)sum.retransmits);
	}
	xwt_bar(t->chan, ep, "matrix done");
	xw_endpoint__close(ep);
	return xwt_failures ? 1 : 0;
}

/*
 * The long soak (make soak: XW_SOAK_SECONDS): both ways, messages of every
 * size class for as long as asked, through 2% loss, 0.5% corruption, 1%
 * duplication and reordering; every byte verified, one session each way.
 */
static int soak_host(struct xwf_topo *t, void *arg)
{
	static const size_t sz[] = { 0, 1, 100, 1500, 5000, 32768, 40000, 300000 };
	__u64 end = xwu_now_ns() + *(__u64 *)arg * 1000000000ULL, msgs = 0, bytes = 0;
	struct xw_endpoint_stats sum = { .sz = sizeof(sum) };
	struct xw_endpoint *ep;
	struct xw_addr peer;

	ep = open_ep(t, 10000, &peer);
	for (unsigned int r = 0; !xwt_failures; r++) {
		char go = xwu_now_ns() < end, other;

		/* both stop after the same round */
		xwt_xchg(t->chan, ep, &go, &other, 1);
		if (!go || !other)
			break;
		for (size_t i = 0; i < sizeof(sz) / sizeof(sz[0]); i++)
			for (int dir = 0; dir < 2; dir++) {
				xfer(ep, &peer, (dir == 0) == (t->self == XWF_HOST_A), sz[i],
				     r * 16 + (unsigned)(i * 2 + dir), "soak", false);
				msgs++;
				bytes += sz[i];
			}
	}
	settle(t, ep);
	if (sum_stats(t, ep, &sum)) {
		printf("  soak: %llu messages, %llu bytes, all intact; %llu retransmissions, %llu CRC "
		       "failures, %llu duplicates, sessions %llu\n", (unsigned long long)msgs,
		       (unsigned long long)bytes, (unsigned long long)sum.retransmits,
		       (unsigned long long)sum.crc_failures, (unsigned long long)sum.rx_dup_frames,
		       (unsigned long long)sum.sessions);
		CHECK(sum.sessions == 2 && sum.peer_resets == 0 && sum.conn_timeouts == 0,
		      "soak: sessions %llu, resets %llu, timeouts %llu",
		      (unsigned long long)sum.sessions, (unsigned long long)sum.peer_resets,
		      (unsigned long long)sum.conn_timeouts);
	}
	xwt_bar(t->chan, ep, "soak done");
	xw_endpoint__close(ep);
	return xwt_failures ? 1 : 0;
}

/* XWT_SCENARIO=name[,name...]: run only these scenarios (debugging). */
static bool wanted(const char *name)
{
	const char *only = getenv("XWT_SCENARIO");
	size_t n = strlen(name);

	if (!only || !*only)
		return true;
	for (const char *p = only; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && !strncmp(p, name, n))
			return true;
		if (!end)
			break;
		p = end + 1;
	}
	return false;
}

int main(void)
{
	struct scenario sc[] = {
		{ .name = "clean" },
		{ .name = "2% loss", .ab = { .drop_p = XWF_P(0.02) }, .ba = { .drop_p = XWF_P(0.02) },
		  .want_retransmits = true },
		{ .name = "2% loss polled", .ab = { .drop_p = XWF_P(0.02) },
		  .ba = { .drop_p = XWF_P(0.02) }, .polled = true, .want_retransmits = true },
		{ .name = "bursty loss", .ab = { .ge_p_gb = XWF_P(0.01), .ge_p_bg = XWF_P(0.3),
						 .ge_drop_bad = XWF_P(0.8) },
		  .want_retransmits = true },
		/* Payload bits only (from byte XW_HDR_LEN of the header on): every
		 * corrupted frame reaches the library, which must reject it. */
		{ .name = "2% corruption", .ab = { .corrupt_p = XWF_P(0.02), .corrupt_off = XW_HDR_LEN },
		  .ba = { .corrupt_p = XWF_P(0.02), .corrupt_off = XW_HDR_LEN }, .crc_exact = true,
		  .want_retransmits = true },
		{ .name = "10% duplication", .ab = { .dup_p = XWF_P(0.1) }, .ba = { .dup_p = XWF_P(0.1) },
		  .want_dups = true },
		/* every handshake, ack and pull twice: still one session,
		 * and a duplicated PULL never sends its data twice */
		{ .name = "ctl duplicated", .ab = { .type_mask = CTL_TYPES, .dup_p = XWF_ALWAYS },
		  .ba = { .type_mask = CTL_TYPES, .dup_p = XWF_ALWAYS }, .want_dups = true },
		{ .name = "2% truncation", .ab = { .trunc_p = XWF_P(0.02) },
		  .ba = { .trunc_p = XWF_P(0.02) }, .want_retransmits = true },
		{ .name = "reordering", .use_relay = true,
		  .relay = { .reorder_every = 3, .reorder_by = 1 } },
		{ .name = "1 s blackhole", .blackhole_ms = 1000, .want_retransmits = true },
	};
	struct xwf_topo t;

	xwt_require_root();
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	REQUIRE(shared != MAP_FAILED, "mmap");
	xwf_setup(&t, NULL);
	if (xwt_sh("mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf"))
		xwt_skip("no bpffs");
	if (getenv("XW_SOAK_SECONDS")) {
		__u64 secs = strtoull(getenv("XW_SOAK_SECONDS"), NULL, 10);
		struct xwf_cfg c = { .drop_p = XWF_P(0.02), .corrupt_p = XWF_P(0.005),
				     .corrupt_off = XW_HDR_LEN, .dup_p = XWF_P(0.01) };
		struct xwf_relay_cfg rl = { .reorder_every = 50, .reorder_by = 2 };

		printf("soak: %llu s, both ways: 2%% loss, 0.5%% corruption, 1%% duplication, "
		       "reordering A->B\n", (unsigned long long)secs);
		xwf_set(&t, XWF_A_TO_B, &c);
		xwf_set(&t, XWF_B_TO_A, &c);
		xwf_relay(&t, XWF_A_TO_B, &rl);
		CHECK(xwf_run(&t, soak_host, soak_host, &secs, (int)(secs * 1000 + 120000)) == 0,
		      "soak failed");
		xwf_clear(&t);
		xwf_teardown(&t);
		return xwt_done();
	}
	for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
		int rc;

		if (!wanted(sc[i].name))
			continue;
		xwf_clear(&t);
		xwf_reset_counters(&t);
		xwf_set(&t, XWF_A_TO_B, &sc[i].ab);
		xwf_set(&t, XWF_B_TO_A, &sc[i].ba);
		if (sc[i].use_relay)
			xwf_relay(&t, XWF_A_TO_B, &sc[i].relay);
		rc = xwf_run(&t, host, host, &sc[i], 120000);
		CHECK(rc == 0, "scenario %s failed (%d)", sc[i].name, rc);
		if (sc[i].use_relay)
			xwf_relay(&t, XWF_A_TO_B, NULL);
	}
	xwf_clear(&t);
	xwf_reset_counters(&t);
	if (wanted("30% set-up loss"))
		CHECK(xwf_run(&t, setup_host, setup_host, NULL, 120000) == 0,
		      "30%% set-up loss scenario failed");
	if (wanted("loss matrix")) {
		static const struct {
			unsigned int type;
			int dir;
		} mx[] = {
			{ XW_PKT_CONNECT, XWF_A_TO_B },	 { XW_PKT_CONNECT_REPLY, XWF_B_TO_A },
			{ XW_PKT_SMALL, XWF_A_TO_B },	 { XW_PKT_MEDIUM, XWF_A_TO_B },
			{ XW_PKT_RNDV, XWF_A_TO_B },	 { XW_PKT_PULL, XWF_B_TO_A },
			{ XW_PKT_PULL_REPLY, XWF_A_TO_B }, { XW_PKT_NOTIFY, XWF_B_TO_A },
			{ XW_PKT_ACK, XWF_B_TO_A },
		};

		for (size_t i = 0; i < sizeof(mx) / sizeof(mx[0]); i++) {
			struct xwf_cfg c = { .type_mask = XWF_TYPE(mx[i].type), .ndrop = 1,
					     .drop_idx = { 0 } };
			unsigned int ty = mx[i].type;

			xwf_clear(&t);
			xwf_reset_counters(&t);
			xwf_set(&t, mx[i].dir, &c);
			CHECK(xwf_run(&t, matrix_host, matrix_host, &ty, 60000) == 0,
			      "loss matrix %s failed", xw_pkt_type_name(ty));
		}
	}
	xwf_clear(&t);
	xwf_reset_counters(&t);
	if (wanted("periodic blackhole")) {
		CHECK(xwf_run(&t, periodic_host, periodic_host, NULL, 120000) == 0,
		      "periodic blackhole scenario failed");
		xwf_clear(&t);
		xwf_reset_counters(&t);
	}
	if (wanted("give-up")) {
		CHECK(xwf_run(&t, giveup_host, giveup_host, NULL, 60000) == 0,
		      "give-up scenario failed");
		xwf_clear(&t);
		xwf_reset_counters(&t);
	}
	if (wanted("outage"))
		CHECK(xwf_run(&t, outage_host, outage_host, NULL, 60000) == 0,
		      "outage scenario failed");
	xwf_clear(&t);
	xwf_teardown(&t);
	return xwt_done();
}
