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
	/* expectations */
	bool want_retransmits;
	bool crc_exact;		  /* crc_failures == frames the harness corrupted */
	bool want_dups;
};

struct result {
	struct xw_endpoint_stats st;
	int failures;
};

static unsigned char pattern(size_t i, unsigned int seed)
{
	return (unsigned char)((i * 2654435761u) >> 13 ^ seed);
}

static int host(struct xwf_topo *t, void *arg)
{
	const struct scenario *sc = arg;
	static unsigned char buf[300000 + 64];
	struct xw_endpoint *ep;
	struct xw_addr me, peer;
	struct result res = {};
	int err;

	snprintf(xwt_pin_dir, sizeof(xwt_pin_dir), "/sys/fs/bpf/xwtest-%d", (int)getpid());
	atexit(xwt_pin_cleanup);
	XW_OPTS(xw_endpoint_opts, o, .pin_root = xwt_pin_dir, .give_up_ms = 8000);
	err = xw_endpoint__open(t->ifname[t->self], EP, &o, &ep);
	REQUIRE(err == 0, "open: %s", xw_strerror(err));
	xw_endpoint__addr(ep, &me);
	xwf_xchg(t, &me, &peer, sizeof(me));
	if (sc->blackhole_ms && t->self == XWF_HOST_A) {
		struct xwf_cfg bh = sc->ab;

		/* From now, for blackhole_ms, both ways: the first messages wait. */
		xwf_blackhole_in(&bh, 0, sc->blackhole_ms);
		xwf_set(t, XWF_A_TO_B, &bh);
		bh = sc->ba;
		xwf_blackhole_in(&bh, 0, sc->blackhole_ms);
		xwf_set(t, XWF_B_TO_A, &bh);
	}
	xwf_bar(t, "start");
	for (int r = 0; r < ROUNDS; r++)
		for (size_t i = 0; i < NSIZES; i++)
			for (int dir = 0; dir < 2; dir++) {
				unsigned int seed = (unsigned)(r * 100 + i * 2 + dir);
				bool sender = (dir == 0) == (t->self == XWF_HOST_A);
				struct xw_status st;

				if (sender) {
					for (size_t k = 0; k < sizes[i]; k++)
						buf[k] = pattern(k, seed);
					err = xw_endpoint__send(ep, &peer, buf, sizes[i], seed, 20000);
					CHECK(err == 0, "[%s] send %zu: %s", sc->name, sizes[i],
					      xw_strerror(err));
				} else {
					memset(buf, 0xEE, sizes[i] + 64);
					err = xw_endpoint__recv(ep, buf, sizes[i], seed, ~0ULL, &st,
								20000);
					CHECK(err == 0 && st.len == sizes[i], "[%s] recv %zu: %s (len %zu)",
					      sc->name, sizes[i], xw_strerror(err), st.len);
					for (size_t k = 0; !err && k < sizes[i]; k++)
						if (buf[k] != pattern(k, seed)) {
							CHECK(0, "[%s] %zu bytes: byte %zu damaged",
							      sc->name, sizes[i], k);
							break;
						}
					for (int k = 0; k < 64; k++)
						if (buf[sizes[i] + k] != 0xEE) {
							CHECK(0, "[%s] wrote past the buffer", sc->name);
							break;
						}
				}
			}
	/* Let the last acks settle before the numbers are read. */
	for (int i = 0; i < 50; i++) {
		xw_endpoint__progress(ep);
		usleep(2000);
	}
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

/* An outage longer than give_up_ms: the send fails cleanly with
 * -ETIMEDOUT within about give_up_ms, the connection is counted as given
 * up, and after the outage a new exchange works (a new session). */
static int outage_host(struct xwf_topo *t, void *arg)
{
	static unsigned char buf[300000];
	struct xw_endpoint *ep;
	struct xw_addr me, peer;
	struct xw_endpoint_stats st;
	struct xw_status s;
	__u64 t0, ms;
	int err;

	(void)arg;
	snprintf(xwt_pin_dir, sizeof(xwt_pin_dir), "/sys/fs/bpf/xwtest-%d", (int)getpid());
	atexit(xwt_pin_cleanup);
	XW_OPTS(xw_endpoint_opts, o, .pin_root = xwt_pin_dir, .give_up_ms = 1000);
	err = xw_endpoint__open(t->ifname[t->self], EP, &o, &ep);
	REQUIRE(err == 0, "open: %s", xw_strerror(err));
	xw_endpoint__addr(ep, &me);
	xwf_xchg(t, &me, &peer, sizeof(me));
	/* One exchange first: the connection is up. */
	if (t->self == XWF_HOST_A)
		CHECK(xw_endpoint__send(ep, &peer, "up", 3, 1, 5000) == 0, "first send");
	else
		CHECK(xw_endpoint__recv(ep, buf, 16, 1, ~0ULL, &s, 5000) == 0, "first recv");
	xwf_bar(t, "up");
	if (t->self == XWF_HOST_A) {
		struct xwf_cfg bh = {};

		xwf_blackhole_in(&bh, 0, 3000);
		xwf_set(t, XWF_A_TO_B, &bh);
		xwf_set(t, XWF_B_TO_A, &bh);
		t0 = xwt_now_ns();
		err = xw_endpoint__send(ep, &peer, buf, sizeof(buf), 2, 10000);
		ms = (xwt_now_ns() - t0) / 1000000;
		CHECK(err == -ETIMEDOUT, "send through a 3 s outage: %s", xw_strerror(err));
		CHECK(ms >= 900 && ms < 2900, "gave up after %llu ms (give_up_ms 1000)",
		      (unsigned long long)ms);
		xw_endpoint__stats(ep, &st);
		CHECK(st.conn_timeouts >= 1, "connection not counted as given up");
		printf("  3 s outage, give_up_ms 1000: -ETIMEDOUT after %llu ms\n",
		       (unsigned long long)ms);
	}
	xwf_bar(t, "outage");
	/* After the outage: talk again. */
	usleep(2300000);
	xwf_bar(t, "after");
	if (t->self == XWF_HOST_A)
		CHECK((err = xw_endpoint__send(ep, &peer, "again", 6, 3, 5000)) == 0,
		      "send after the outage: %s", xw_strerror(err));
	else
		CHECK((err = xw_endpoint__recv(ep, buf, 16, 3, ~0ULL, &s, 5000)) == 0 &&
			      !strcmp((char *)buf, "again"),
		      "recv after the outage: %s", xw_strerror(err));
	xwf_bar(t, "done");
	xw_endpoint__close(ep);
	return xwt_failures ? 1 : 0;
}

int main(void)
{
	struct scenario sc[] = {
		{ .name = "clean" },
		{ .name = "2% loss", .ab = { .drop_p = XWF_P(0.02) }, .ba = { .drop_p = XWF_P(0.02) },
		  .want_retransmits = true },
		{ .name = "bursty loss", .ab = { .ge_p_gb = XWF_P(0.01), .ge_p_bg = XWF_P(0.3),
						 .ge_drop_bad = XWF_P(0.8) },
		  .want_retransmits = true },
		/* Payload bits only (from byte 56 of the header on): every
		 * corrupted frame reaches the library, which must reject it. */
		{ .name = "2% corruption", .ab = { .corrupt_p = XWF_P(0.02), .corrupt_off = 56 },
		  .ba = { .corrupt_p = XWF_P(0.02), .corrupt_off = 56 }, .crc_exact = true,
		  .want_retransmits = true },
		{ .name = "10% duplication", .ab = { .dup_p = XWF_P(0.1) }, .ba = { .dup_p = XWF_P(0.1) },
		  .want_dups = true },
		{ .name = "2% truncation", .ab = { .trunc_p = XWF_P(0.02) },
		  .ba = { .trunc_p = XWF_P(0.02) }, .want_retransmits = true },
		{ .name = "reordering", .use_relay = true,
		  .relay = { .reorder_every = 3, .reorder_by = 1 } },
		{ .name = "1 s blackhole", .blackhole_ms = 1000, .want_retransmits = true },
	};
	struct xwf_topo t;

	xwt_require_root();
	xwf_setup(&t, NULL);
	if (xwt_sh("mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf"))
		xwt_skip("no bpffs");
	for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
		int rc;

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
	CHECK(xwf_run(&t, outage_host, outage_host, NULL, 60000) == 0, "outage scenario failed");
	xwf_clear(&t);
	xwf_teardown(&t);
	return xwt_done();
}
