// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hostile and dying peers, end to end: three hosts on a bridge.
 *
 *     host A (xwh0) ---+
 *     host B (xwh1) ---+--- bridge xwhbr (namespace S)
 *     host C (xwh2) ---+
 *
 * Every host is a namespace held by a file descriptor of this process;
 * each part runs one process per host (the library in it: XDP program,
 * AF_XDP in copy mode, endpoint 1) joined to the others by shared memory.
 *
 *  1. Peer killed mid-rendezvous.  A sends B a 32 MiB message and receives
 *     one of 32 MiB from B while C ping-pongs with A.  B is killed
 *     (SIGKILL) while both transfers are under way.  A's two requests fail
 *     cleanly with -ETIMEDOUT within its give-up time (B's program cannot
 *     answer A's liveness probes here: the bridge ports run no XDP program,
 *     so its XDP_TX goes nowhere - a host unreachable; the "gone" answer of
 *     a killed process is checked by fi_unit --peer-death and
 *     test_mpi_alive.sh), its UMEM frames all
 *     come back, it holds no bytes for B, and C's ping-pong goes on
 *     throughout without an error or a long stall.
 *  2. Floods.  B sends A 200 messages (100 B .. 200 KiB, verified byte for
 *     byte) while C floods A with (a) unexpected messages, through the
 *     library, that A receives only at the end, and (b) forged frames from
 *     a raw socket (16,000 a second): data frames that claim to come from
 *     B with sessions B never had, and CONNECTs and SMALLs from made-up
 *     addresses.  A's
 *     memory stays within its bounds (unexpected and pushed bytes, peer
 *     table, resident size), B's connection keeps its session, every
 *     legitimate message arrives, A answers no forged frame with more than
 *     one frame, and finally A receives C's flood messages: refused while
 *     over the bound, none lost.
 *  3. Forged CONNECTs from the job's own hosts (issue 29).  A and B ping-pong
 *     messages (100 B .. 200 KiB, verified byte for byte) while C, blind to
 *     their traffic, floods each with CONNECTs and CLOSEs that carry the
 *     other's MAC as source, random sessions, sequences and source
 *     endpoints 1-4, and no nonce or a random one (16,000 a second for
 *     5 s).  Neither connection is reset or replaced (no reset, reconnect
 *     or timeout; every byte intact), the refused frames are counted
 *     (nonce_rejects), and the peer tables stay bounded (the real peer
 *     and the made-up endpoints 2-4, whose nonce-less CONNECTs may open a
 *     connection that does not exist, once each).
 */
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "fault.h"
#include "xdpwake.h"
#include "crc32c.h"

#define NHOSTS 3
#define EP 1
#define TMO_MS 20000
#define BIG (32u << 20)		  /* part 1: each way                        */
#define GIVE_UP_MS 1500		  /* part 1: A's give-up time                 */
#define LEGIT_MSGS 200		  /* part 2 */
#define UNEXP_MAX (1u << 20)	  /* part 2: A's unexpected_max              */
#define PUSHED_MAX (1u << 20)	  /* part 2: A's pushed_max                  */
#define FLOOD_MSG 20000		  /* part 2: C's flood messages              */
#define FLOOD_MAX 400		  /* ... at most this many                   */
#define FLOOD_AHEAD 80		  /* ... sent before B starts (1.6 MB)       */

static const char *const hname[NHOSTS] = { "A", "B", "C" };

struct shared {
	struct xw_addr addr[NHOSTS];
	__u8 mac[NHOSTS][6];
	int ready[NHOSTS];
	int go;
	/* part 1 */
	__u64 b_killed_ns;	/* when B was killed                          */
	int a_done;		/* A's requests with B completed             */
	__u64 c_rounds, c_rounds_window, c_max_rtt_ns;
	/* part 2 */
	int b_sent;
	int stop;		/* A has every legitimate message            */
	int c_flood_msgs;	/* flood messages C sent                     */
	__u64 c_forged;		/* forged frames C sent                      */
	__u64 c_forged_connect;
	/* part 3 */
	int c_flooded;		/* C's flood is over                         */
	int rounds;		/* A's ping-pong rounds with B               */
};

static struct shared *sh;
static int nsfd[NHOSTS + 1]; /* A, B, C, S */
static int me = -1;

static unsigned char pattern(size_t i, unsigned int seed)
{
	return (unsigned char)((i * 2654435761u) >> 13 ^ seed);
}

static void fill(unsigned char *b, size_t n, unsigned int seed)
{
	for (size_t k = 0; k < n; k++)
		b[k] = pattern(k, seed);
}

static bool intact(const unsigned char *b, size_t n, unsigned int seed)
{
	for (size_t k = 0; k < n; k++)
		if (b[k] != pattern(k, seed))
			return false;
	return true;
}

/* Wait (bounded) until *flag is nonzero. */
static void await(int *flag, const char *what)
{
	__u64 end = xwu_now_ns() + 30000000000ULL;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		REQUIRE(xwu_now_ns() < end, "%s: waited 30 s for %s", hname[me], what);
		usleep(500);
	}
}

static struct xw_endpoint *host_open(const struct xw_endpoint_opts *o)
{
	char ifname[16];
	struct xw_endpoint *ep;
	int err;

	snprintf(ifname, sizeof(ifname), "xwh%d", me);
	/* a host killed in an earlier part left its program attached */
	xwt_sh("ip link set dev %s xdp off 2>/dev/null", ifname);
	err = xw_endpoint__open(ifname, EP, o, &ep);
	REQUIRE(err == 0, "%s: open: %s", hname[me], xw_strerror(err));
	xw_endpoint__addr(ep, &sh->addr[me]);
	__atomic_store_n(&sh->ready[me], 1, __ATOMIC_RELEASE);
	await(&sh->go, "the start");
	return ep;
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* ---- part 1: B killed mid-rendezvous ------------------------------------- */

/* A serves C: echo every message tagged 0xC... (one receive posted). */
static void serve_c(struct xw_endpoint *ep, struct xw_request **rc, unsigned char *cbuf)
{
	XW_OPTS(xw_status, s);
	int err;

	if (!*rc)
		REQUIRE(xw_endpoint__irecv(ep, cbuf, 1024, 0xC000, 0xF000, rc) == 0, "A: irecv C");
	if (xw_request__test(*rc, &s) != 1)
		return;
	*rc = NULL;
	CHECK(s.error == 0, "A: C's message: %s", xw_strerror(s.error));
	if (!s.error)
		CHECK((err = xw_endpoint__send(ep, &s.src, cbuf, s.len, s.match, TMO_MS)) == 0,
		      "A: echo to C: %s", xw_strerror(err));
}

static int p1_a(void)
{
	static unsigned char rbuf[BIG];
	unsigned char *sbuf = malloc(BIG), cbuf[1024];
	struct xw_request *rs, *rr, *rc = NULL;
	struct xw_endpoint_stats st = { .sz = sizeof(st) };
	XW_OPTS(xw_status, s);
	int ds = 0, dr = 0, es = 0, er = 0;
	__u64 done_ns = 0, end;

	REQUIRE(sbuf, "malloc");
	fill(sbuf, BIG, 1);
	XW_OPTS(xw_endpoint_opts, o, .pin_root = xwt_pin_root(), .give_up_ms = GIVE_UP_MS);
	struct xw_endpoint *ep = host_open(&o);

	REQUIRE(xw_endpoint__irecv(ep, rbuf, BIG, 2, ~0ULL, &rr) == 0, "A: irecv");
	REQUIRE(xw_endpoint__isend(ep, &sh->addr[1], sbuf, BIG, 1, &rs) == 0, "A: isend");
	end = xwu_now_ns() + 30000000000ULL;
	while ((!ds || !dr) && xwu_now_ns() < end) {
		static __u64 next_dbg;

		if (getenv("XWT_DEBUG") && xwu_now_ns() > next_dbg) {
			xw_endpoint__stats(ep, &st);
			fprintf(stderr, "A: tx %llu rx %llu full %llu rtx %llu refused %llu rej %llu "
				"peers %llu fill %llu free %llu infl %llu\n",
				(unsigned long long)st.tx_frames, (unsigned long long)st.rx_frames,
				(unsigned long long)st.tx_full, (unsigned long long)st.retransmits,
				(unsigned long long)st.rx_refused,
				(unsigned long long)st.session_rejects, (unsigned long long)st.peers,
				(unsigned long long)st.umem_frames_fill,
				(unsigned long long)st.umem_frames_free_tx,
				(unsigned long long)st.umem_frames_tx_inflight);
			next_dbg = xwu_now_ns() + 100000000ULL;
		}
		xw_endpoint__progress(ep);
		serve_c(ep, &rc, cbuf);
		if (!ds && xw_request__test(rs, &s) == 1)
			ds = 1, es = s.error;
		if (!dr && xw_request__test(rr, &s) == 1)
			dr = 1, er = s.error;
	}
	done_ns = xwu_now_ns();
	REQUIRE(ds && dr, "A: requests with B still pending 30 s after the start");
	CHECK(es == -ETIMEDOUT && er == -ETIMEDOUT,
	      "A: send to and receive from the killed B: %s / %s, want -ETIMEDOUT both",
	      xw_strerror(es), xw_strerror(er));
	REQUIRE(sh->b_killed_ns, "A: B's requests completed before B was killed");
	{
		double ms = (double)(done_ns - sh->b_killed_ns) / 1e6;

		printf("1. B killed mid-rendezvous: A's send and receive failed (%s) %.0f ms later "
		       "(give_up_ms %d)\n", xw_strerror(es), ms, GIVE_UP_MS);
		CHECK(ms < GIVE_UP_MS + 1500, "A: gave up %.0f ms after the kill (give_up_ms %d)",
		      ms, GIVE_UP_MS);
	}
	__atomic_store_n(&sh->a_done, 1, __ATOMIC_RELEASE);
	/* keep serving C until it stops */
	end = xwu_now_ns() + 5000000000ULL;
	while (xwu_now_ns() < end && !__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		xw_endpoint__progress(ep);
		serve_c(ep, &rc, cbuf);
	}
	for (int i = 0; i < 50; i++) {
		xw_endpoint__progress(ep);
		usleep(1000);
	}
	xw_endpoint__stats(ep, &st);
	printf("  A: UMEM frames %llu = fill %llu + free TX %llu + TX in flight %llu; held for "
	       "peers %llu + %llu bytes; connections given up %llu\n",
	       (unsigned long long)st.umem_frames_total, (unsigned long long)st.umem_frames_fill,
	       (unsigned long long)st.umem_frames_free_tx,
	       (unsigned long long)st.umem_frames_tx_inflight,
	       (unsigned long long)st.unexpected_bytes, (unsigned long long)st.pushed_bytes,
	       (unsigned long long)st.conn_timeouts);
	CHECK(st.umem_frames_tx_inflight == 0 &&
		      st.umem_frames_fill + st.umem_frames_free_tx == st.umem_frames_total &&
		      st.umem_frames_free_tx == st.umem_frames_total / 2,
	      "A: UMEM frames not all back: total %llu, fill %llu, free TX %llu, in flight %llu",
	      (unsigned long long)st.umem_frames_total, (unsigned long long)st.umem_frames_fill,
	      (unsigned long long)st.umem_frames_free_tx,
	      (unsigned long long)st.umem_frames_tx_inflight);
	CHECK(st.pushed_bytes == 0 && st.unexpected_bytes == 0 && st.conn_timeouts == 1,
	      "A: held %llu + %llu bytes, %llu connections given up (want 1)",
	      (unsigned long long)st.pushed_bytes, (unsigned long long)st.unexpected_bytes,
	      (unsigned long long)st.conn_timeouts);
	if (rc) {
		/* cancelled, or complete by now: collected either way */
		xw_request__cancel(rc);
		CHECK(xw_request__wait(rc, &s, TMO_MS) == 0, "A: the last receive from C");
	}
	xw_endpoint__close(ep);
	free(sbuf);
	return xwt_failures ? 1 : 0;
}

static int p1_b(void)
{
	static unsigned char rbuf[BIG];
	unsigned char *sbuf = malloc(BIG);
	struct xw_request *rs, *rr;
	XW_OPTS(xw_status, s);
	__u64 end;

	REQUIRE(sbuf, "malloc");
	fill(sbuf, BIG, 2);
	XW_OPTS(xw_endpoint_opts, o, .pin_root = xwt_pin_root());
	struct xw_endpoint *ep = host_open(&o);

	REQUIRE(xw_endpoint__irecv(ep, rbuf, BIG, 1, ~0ULL, &rr) == 0, "B: irecv");
	REQUIRE(xw_endpoint__isend(ep, &sh->addr[0], sbuf, BIG, 2, &rs) == 0, "B: isend");
	/* Both rendezvous under way (1,000 frames each way: B's data pulled
	 * by A, A's by B, a few MiB), then die.  Counted, not timed: on a
	 * loaded machine 30 ms of progress may not even have reached A. */
	end = xwu_now_ns() + 30000000000ULL;
	for (;;) {
		struct xw_endpoint_stats st = { .sz = sizeof(st) };

		xw_endpoint__progress(ep);
		xw_endpoint__stats(ep, &st);
		if (st.tx_frames >= 1000 && st.rx_frames >= 1000)
			break;
		REQUIRE(xwu_now_ns() < end, "B: the rendezvous did not get going in 30 s (tx %llu "
			"rx %llu frames)", (unsigned long long)st.tx_frames,
			(unsigned long long)st.rx_frames);
	}
	REQUIRE(xw_request__test(rs, &s) == 0 && xw_request__test(rr, &s) == 0,
		"B: a 32 MiB transfer finished after 1,000 frames: the kill would not be "
		"mid-rendezvous");
	__atomic_store_n(&sh->b_killed_ns, xwu_now_ns(), __ATOMIC_RELEASE);
	raise(SIGKILL);
	return 1;
}

static int p1_c(void)
{
	unsigned char buf[1024], back[1024];
	XW_OPTS(xw_status, s);
	__u64 end = xwu_now_ns() + 40000000000ULL;
	int err;

	XW_OPTS(xw_endpoint_opts, o, .pin_root = xwt_pin_root());
	struct xw_endpoint *ep = host_open(&o);

	for (__u32 i = 0; !__atomic_load_n(&sh->a_done, __ATOMIC_ACQUIRE) && xwu_now_ns() < end;
	     i++) {
		__u64 t0 = xwu_now_ns(), rtt;
		__u64 match = 0xC000 | (i & 0xFFF);

		fill(buf, sizeof(buf), i);
		err = xw_endpoint__send(ep, &sh->addr[0], buf, sizeof(buf), match, TMO_MS);
		CHECK(err == 0, "C: send %u: %s", i, xw_strerror(err));
		err = xw_endpoint__recv(ep, back, sizeof(back), match, ~0ULL, &s, TMO_MS);
		CHECK(err == 0 && s.len == sizeof(back) && intact(back, sizeof(back), i),
		      "C: echo %u: %s", i, xw_strerror(err));
		if (err)
			break;
		rtt = xwu_now_ns() - t0;
		sh->c_rounds++;
		{
			__u64 killed = __atomic_load_n(&sh->b_killed_ns, __ATOMIC_ACQUIRE);

			/* a round trip begun after the kill and finished before
			 * A gave B up: A did not hold C behind the dead peer */
			if (killed && t0 > killed && !__atomic_load_n(&sh->a_done, __ATOMIC_ACQUIRE))
				sh->c_rounds_window++;
			if (killed && rtt > sh->c_max_rtt_ns)
				sh->c_max_rtt_ns = rtt;
		}
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	printf("  C: %llu round trips with A, %llu of them between the kill and A's give-up, the "
	       "longest after the kill %.1f ms\n", (unsigned long long)sh->c_rounds,
	       (unsigned long long)sh->c_rounds_window, (double)sh->c_max_rtt_ns / 1e6);
	/* Behaviour, not speed: a round trip wholly inside the window
	 * between the kill and A's give-up (give_up_ms) is impossible if A
	 * held C's traffic behind the dead B.  How long C's round trips took
	 * is printed (a loaded machine makes them slow, not wrong). */
	CHECK(sh->c_rounds_window > 0, "C: no round trip begun and finished while A waited for "
	      "the dead B");
	xw_endpoint__close(ep);
	return xwt_failures ? 1 : 0;
}

/* ---- part 2: floods ------------------------------------------------------- */

static size_t legit_len(int i)
{
	static const size_t sz[] = { 100, 5000, 40000, 200000 };

	return sz[i % 4];
}

static int p2_a(void)
{
	static unsigned char buf[200000 + 64];
	struct xw_endpoint_stats st0 = { .sz = sizeof(st0) }, st = { .sz = sizeof(st) }, mx = {};
	XW_OPTS(xw_status, s);
	long rss0, rss_max = 0;
	int err, flood;

	XW_OPTS(xw_endpoint_opts, o, .pin_root = xwt_pin_root(), .unexpected_max = UNEXP_MAX,
		.pushed_max = PUSHED_MAX);
	struct xw_endpoint *ep = host_open(&o);

	xw_endpoint__stats(ep, &st0);
	rss0 = rss_kb();
	for (int i = 0; i < LEGIT_MSGS; i++) {
		struct xw_request *r;
		__u64 end = xwu_now_ns() + 30000000000ULL;
		int done = 0;

		REQUIRE(xw_endpoint__irecv(ep, buf, legit_len(i), 0xB00000 | (__u64)i, ~0ULL, &r) == 0,
			"A: irecv");
		while (!done && xwu_now_ns() < end) {
			static __u64 next_dbg;
			long kb;

			xw_endpoint__progress(ep);
			done = xw_request__test(r, &s);
			xw_endpoint__stats(ep, &st);
			if (getenv("XWT_DEBUG") && xwu_now_ns() > next_dbg) {
				fprintf(stderr, "A msg %d: tx %llu rx %llu rtx %llu refused %llu rej %llu "
					"peers %llu unexp %llu pushed %llu evicted %llu timeouts %llu "
					"resets %llu dups %llu ooo %llu\n", i,
					(unsigned long long)st.tx_frames,
					(unsigned long long)st.rx_frames,
					(unsigned long long)st.retransmits,
					(unsigned long long)st.rx_refused,
					(unsigned long long)st.session_rejects,
					(unsigned long long)st.peers,
					(unsigned long long)st.unexpected_bytes,
					(unsigned long long)st.pushed_bytes,
					(unsigned long long)st.peers_evicted,
					(unsigned long long)st.conn_timeouts,
					(unsigned long long)st.peer_resets,
					(unsigned long long)st.rx_dup_frames,
					(unsigned long long)st.rx_out_of_order);
				{
					XW_OPTS(xw_stats, xs);

					if (!xw_iface__stats(xw_endpoint__iface(ep), XW_STATS_ALL, &xs))
						fprintf(stderr, "  A xdp: redirected %llu drop_session %llu "
							"drop_endpoint %llu other_host %llu passed %llu\n",
							(unsigned long long)xs.frames_redirected,
							(unsigned long long)xs.drop_session,
							(unsigned long long)xs.drop_endpoint,
							(unsigned long long)xs.pass_other_host,
							(unsigned long long)xs.frames_passed);
				}
				next_dbg = xwu_now_ns() + 500000000ULL;
			}
			if (st.unexpected_bytes > mx.unexpected_bytes)
				mx.unexpected_bytes = st.unexpected_bytes;
			if (st.pushed_bytes > mx.pushed_bytes)
				mx.pushed_bytes = st.pushed_bytes;
			if (st.peers > mx.peers)
				mx.peers = st.peers;
			kb = rss_kb();
			if (kb > rss_max)
				rss_max = kb;
		}
		REQUIRE(done, "A: legitimate message %d not there after 30 s of flood", i);
		CHECK(s.error == 0 && s.len == legit_len(i) && intact(buf, s.len, (unsigned)i),
		      "A: legitimate message %d: %s, %zu bytes", i, xw_strerror(s.error), s.len);
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	xw_endpoint__stats(ep, &st);
	await(&sh->ready[2], "C's flood count"); /* set again by C when it stopped */
	flood = __atomic_load_n(&sh->c_flood_msgs, __ATOMIC_ACQUIRE);
	printf("2. %d messages from B, all intact, during the flood from C: %d unexpected "
	       "messages of %d B, %llu forged frames (%llu CONNECTs)\n", LEGIT_MSGS, flood,
	       FLOOD_MSG, (unsigned long long)sh->c_forged,
	       (unsigned long long)sh->c_forged_connect);
	printf("  A: at most %llu unexpected bytes held (bound %u), %llu pushed (bound %u), %llu "
	       "peers known; resident size %ld -> %ld KiB at most; frames refused over the "
	       "bounds %llu, rejected (session) %llu, idle peers evicted %llu\n",
	       (unsigned long long)mx.unexpected_bytes, UNEXP_MAX,
	       (unsigned long long)mx.pushed_bytes, PUSHED_MAX, (unsigned long long)mx.peers,
	       rss0, rss_max, (unsigned long long)(st.rx_refused - st0.rx_refused),
	       (unsigned long long)(st.session_rejects - st0.session_rejects),
	       (unsigned long long)(st.peers_evicted - st0.peers_evicted));
	CHECK(mx.unexpected_bytes <= UNEXP_MAX && mx.pushed_bytes <= PUSHED_MAX,
	      "A: held %llu unexpected / %llu pushed bytes over the bounds",
	      (unsigned long long)mx.unexpected_bytes, (unsigned long long)mx.pushed_bytes);
	CHECK(mx.unexpected_bytes > UNEXP_MAX / 2, "A: the flood never filled the unexpected "
	      "queue (%llu bytes): the test tested nothing", (unsigned long long)mx.unexpected_bytes);
	CHECK(st.rx_refused > st0.rx_refused, "A: nothing was refused over the bound");
	CHECK(rss_max - rss0 < 64 * 1024, "A: resident size grew by %ld KiB", rss_max - rss0);
	/* no amplification: what A sent during the flood is bounded by what it
	 * received (acks, answers to CONNECTs), forged frames included */
	CHECK(st.tx_frames - st0.tx_frames <= st.rx_frames - st0.rx_frames,
	      "A: sent %llu frames for %llu received",
	      (unsigned long long)(st.tx_frames - st0.tx_frames),
	      (unsigned long long)(st.rx_frames - st0.rx_frames));
	/* C's flood messages: refused while over the bound, not lost */
	for (int i = 0; i < flood; i++) {
		err = xw_endpoint__recv(ep, buf, FLOOD_MSG, 0xF10000 | (__u64)i, ~0ULL, &s, TMO_MS);
		CHECK(err == 0 && s.len == FLOOD_MSG && intact(buf, FLOOD_MSG, 0x5000u + (unsigned)i),
		      "A: C's flood message %d: %s", i, xw_strerror(err));
		if (err)
			break;
	}
	printf("  A: then received all %d flood messages of C intact\n", flood);
	__atomic_store_n(&sh->a_done, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 50; i++) {
		xw_endpoint__progress(ep);
		usleep(1000);
	}
	xw_endpoint__close(ep);
	return xwt_failures ? 1 : 0;
}

static int p2_b(void)
{
	static unsigned char buf[200000];
	struct xw_endpoint_stats st = { .sz = sizeof(st) };
	int err;

	XW_OPTS(xw_endpoint_opts, o, .pin_root = xwt_pin_root());
	struct xw_endpoint *ep = host_open(&o);
	__u64 end = xwu_now_ns() + 30000000000ULL;

	/* the flood first: A's unexpected queue over its bound */
	while (__atomic_load_n(&sh->c_flood_msgs, __ATOMIC_ACQUIRE) < FLOOD_AHEAD) {
		REQUIRE(xwu_now_ns() < end, "B: C's flood did not start");
		usleep(1000);
	}
	for (int i = 0; i < LEGIT_MSGS; i++) {
		fill(buf, legit_len(i), (unsigned)i);
		err = xw_endpoint__send(ep, &sh->addr[0], buf, legit_len(i), 0xB00000 | (__u64)i,
					30000);
		CHECK(err == 0, "B: send %d: %s", i, xw_strerror(err));
		if (err)
			break;
	}
	await(&sh->a_done, "A");
	xw_endpoint__stats(ep, &st);
	CHECK(st.sessions == 1 && st.peer_resets == 0 && st.conn_timeouts == 0,
	      "B: sessions %llu, resets %llu, timeouts %llu: the forged frames touched B's "
	      "connection", (unsigned long long)st.sessions, (unsigned long long)st.peer_resets,
	      (unsigned long long)st.conn_timeouts);
	xw_endpoint__close(ep);
	return xwt_failures ? 1 : 0;
}

/* A forged frame to the host with @dst_mac: valid header and CRC, made-up
 * session; CONNECT, CLOSE: a made-up destination nonce (0 or random). */
static size_t forge(unsigned char *f, const __u8 *dst_mac, const __u8 *src_mac, __u16 src_ep,
		    __u8 type, __u32 r)
{
	struct xw_hdr h = {};
	static const char pl[] = "forged!";
	size_t plen = type == XW_PKT_SMALL ? sizeof(pl) : 0;
	__u16 et = htons(XW_DEFAULT_ETHERTYPE);

	memcpy(f, dst_mac, 6);
	memcpy(f + 6, src_mac, 6);
	memcpy(f + 12, &et, 2);
	h.version = XW_VERSION;
	h.type = type;
	h.dst_ep = htons(EP);
	h.src_ep = htons(src_ep);
	h.session = htonl(r | 1);
	h.seq = htonl(r * 2654435761u);
	if (type == XW_PKT_SMALL) {
		h.msg_len = htonl(plen);
		h.frag_count = htonl(1);
		h.payload_len = htons(plen);
		h.match = htobe64(0xB00000);
	}
	if ((type == XW_PKT_CONNECT || type == XW_PKT_CLOSE) && (r & 2)) {
		h.frag_off = htonl(r * 2246822519u);
		h.frag_idx = htonl(r * 3266489917u);
	}
	h.csum = htonl(xwi_crc32c(xwi_crc32c(0, &h, sizeof(h)), pl, plen));
	memcpy(f + 14, &h, sizeof(h));
	memcpy(f + 14 + sizeof(h), pl, plen);
	return 14 + sizeof(h) + plen;
}

static int p2_c(void)
{
	static unsigned char buf[FLOOD_MSG];
	struct xw_request *reqs[FLOOD_MAX];
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	unsigned char frame[128];
	int fd, n = 0, nreq = 0;
	__u32 r = 0x9E3779B9;

	XW_OPTS(xw_endpoint_opts, o, .pin_root = xwt_pin_root(), .give_up_ms = 60000);
	struct xw_endpoint *ep = host_open(&o);

	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	REQUIRE(fd >= 0, "C: AF_PACKET: %s", strerror(errno));
	sll.sll_ifindex = (int)if_nametoindex("xwh2");
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, sh->mac[0], 6);
	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		/* (a) an unexpected message through the library */
		if (n < FLOOD_MAX) {
			int err;

			fill(buf, FLOOD_MSG, 0x5000u + (unsigned)n);
			err = xw_endpoint__isend(ep, &sh->addr[0], buf, FLOOD_MSG,
						 0xF10000 | (__u64)n, &reqs[nreq]);
			if (!err) {
				n++;
				nreq++;
				__atomic_store_n(&sh->c_flood_msgs, n, __ATOMIC_RELEASE);
			} else {
				CHECK(err == -EAGAIN, "C: isend: %s", xw_strerror(err));
			}
		}
		/* (b) 16 forged frames (16,000 a second: a flood this 2-core
		 * machine's three hosts and bridge can carry; beyond that it
		 * is a CPU-exhaustion test, which no protocol passes) */
		for (int k = 0; k < 16; k++) {
			__u8 mac[6] = { 0x02, 0xEE, 0, 0, 0, 0 };
			size_t len;

			r = r * 1103515245u + 12345u;
			memcpy(mac + 2, &r, 4);
			switch (k % 4) {
			case 0: /* "from B", a session B never had */
				len = forge(frame, sh->mac[0], sh->mac[1], EP, XW_PKT_SMALL, r);
				break;
			case 1:
				len = forge(frame, sh->mac[0], sh->mac[1], EP, XW_PKT_ACK, r);
				break;
			case 2:
				len = forge(frame, sh->mac[0], mac, (__u16)(r % 64), XW_PKT_CONNECT, r);
				sh->c_forged_connect++;
				break;
			default:
				len = forge(frame, sh->mac[0], mac, (__u16)(r % 64), XW_PKT_SMALL, r);
				break;
			}
			if (sendto(fd, frame, len, 0, (struct sockaddr *)&sll, sizeof(sll)) ==
			    (ssize_t)len)
				sh->c_forged++;
		}
		xw_endpoint__progress(ep);
		/* completed (buffered) sends are released */
		for (int i = 0; i < nreq; i++) {
			XW_OPTS(xw_status, s);

			if (xw_request__test(reqs[i], &s) == 1) {
				CHECK(s.error == 0, "C: flood send: %s", xw_strerror(s.error));
				reqs[i--] = reqs[--nreq];
			}
		}
		usleep(1000);
	}
	close(fd);
	__atomic_store_n(&sh->ready[2], 1, __ATOMIC_RELEASE);
	/* let the library deliver the flood once A receives it */
	{
		__u64 end = xwu_now_ns() + 60000000000ULL;

		while (!__atomic_load_n(&sh->a_done, __ATOMIC_ACQUIRE) && xwu_now_ns() < end) {
			xw_endpoint__progress(ep);
			for (int i = 0; i < nreq; i++) {
				XW_OPTS(xw_status, s);

				if (xw_request__test(reqs[i], &s) == 1) {
					CHECK(s.error == 0, "C: flood send: %s",
					      xw_strerror(s.error));
					reqs[i--] = reqs[--nreq];
				}
			}
			usleep(100);
		}
	}
	CHECK(nreq == 0, "C: %d flood sends still pending", nreq);
	xw_endpoint__close(ep);
	return xwt_failures ? 1 : 0;
}

/* ---- part 3: forged CONNECTs from the job's own hosts ------------------------ */

#define P3_FLOOD_NS 5000000000ULL
#define P3_MIN_ROUNDS 60
#define P3_END 0xAFFFFFull

/* A and B's checks after the flood: their connection untouched. */
static void p3_check(struct xw_endpoint *ep, const struct xw_endpoint_stats *st0)
{
	struct xw_endpoint_stats st = { .sz = sizeof(st) };

	xw_endpoint__stats(ep, &st);
	printf("  %s: %llu forged control frames refused (nonce), %llu session rejects, "
	       "%llu peers known, %llu evicted; sessions %llu, resets %llu, timeouts %llu\n",
	       hname[me], (unsigned long long)(st.nonce_rejects - st0->nonce_rejects),
	       (unsigned long long)(st.session_rejects - st0->session_rejects),
	       (unsigned long long)st.peers, (unsigned long long)st.peers_evicted,
	       (unsigned long long)st.sessions, (unsigned long long)st.peer_resets,
	       (unsigned long long)st.conn_timeouts);
	/* sessions: the real one, and at most one opening per made-up source
	 * endpoint 2-4 (a CONNECT without a nonce may open a connection that
	 * does not exist: answered, never established by the real host) */
	CHECK(st.sessions <= 4 && st.peers <= 4 && st.peer_resets == 0 && st.conn_timeouts == 0 &&
		      st.reconnects == 0,
	      "%s: sessions %llu, peers %llu, resets %llu, timeouts %llu, reconnects %llu: a "
	      "forged CONNECT touched the connection", hname[me], (unsigned long long)st.sessions,
	      (unsigned long long)st.peers, (unsigned long long)st.peer_resets,
	      (unsigned long long)st.conn_timeouts, (unsigned long long)st.reconnects);
	CHECK(st.nonce_rejects > st0->nonce_rejects, "%s: no forged frame refused for its nonce",
	      hname[me]);
}

static int p3_a(void)
{
	static unsigned char sbuf[200000], rbuf[200000];
	struct xw_endpoint_stats st0 = { .sz = sizeof(st0) };
	XW_OPTS(xw_status, s);
	int err, i;

	XW_OPTS(xw_endpoint_opts, o, .pin_root = xwt_pin_root());
	struct xw_endpoint *ep = host_open(&o);

	xw_endpoint__stats(ep, &st0);
	for (i = 0; i < P3_MIN_ROUNDS || !__atomic_load_n(&sh->c_flooded, __ATOMIC_ACQUIRE);
	     i++) {
		size_t len = legit_len(i);

		fill(sbuf, len, 0x3000u + (unsigned)i);
		err = xw_endpoint__send(ep, &sh->addr[1], sbuf, len, 0xA00000 | (__u64)i, TMO_MS);
		REQUIRE(err == 0, "A: send %d: %s", i, xw_strerror(err));
		err = xw_endpoint__recv(ep, rbuf, sizeof(rbuf), 0xB00000 | (__u64)i, ~0ULL, &s,
					TMO_MS);
		REQUIRE(err == 0, "A: recv %d: %s", i, xw_strerror(err));
		CHECK(s.len == len && intact(rbuf, len, 0x3000u + (unsigned)i),
		      "A: B's answer %d: %zu bytes, corrupt", i, s.len);
	}
	sh->rounds = i;
	REQUIRE(xw_endpoint__send(ep, &sh->addr[1], NULL, 0, P3_END, TMO_MS) == 0, "A: end");
	printf("3. %d ping-pong rounds A <-> B (100 B .. 200 KiB, all intact) during %llu forged "
	       "CONNECTs and CLOSEs from their own addresses\n", i,
	       (unsigned long long)sh->c_forged);
	p3_check(ep, &st0);
	__atomic_store_n(&sh->a_done, 1, __ATOMIC_RELEASE);
	await(&sh->stop, "B's checks");
	xw_endpoint__close(ep);
	return xwt_failures ? 1 : 0;
}

static int p3_b(void)
{
	static unsigned char buf[200000];
	struct xw_endpoint_stats st0 = { .sz = sizeof(st0) };
	XW_OPTS(xw_status, s);
	int err;

	XW_OPTS(xw_endpoint_opts, o, .pin_root = xwt_pin_root());
	struct xw_endpoint *ep = host_open(&o);

	xw_endpoint__stats(ep, &st0);
	for (;;) {
		err = xw_endpoint__recv(ep, buf, sizeof(buf), 0xA00000, 0xF00000, &s, TMO_MS);
		REQUIRE(err == 0, "B: recv: %s", xw_strerror(err));
		if (s.match == P3_END)
			break;
		err = xw_endpoint__send(ep, &sh->addr[0], buf, s.len, 0xB00000 | (s.match & 0xFFFFF),
					TMO_MS);
		REQUIRE(err == 0, "B: send: %s", xw_strerror(err));
	}
	await(&sh->a_done, "A's checks");
	p3_check(ep, &st0);
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	xw_endpoint__close(ep);
	return xwt_failures ? 1 : 0;
}

static int p3_c(void)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	unsigned char frame[128];
	__u32 r = 0x7F4A7C15;
	__u64 end;
	int fd;

	XW_OPTS(xw_endpoint_opts, o, .pin_root = xwt_pin_root());
	struct xw_endpoint *ep = host_open(&o);

	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	REQUIRE(fd >= 0, "C: AF_PACKET: %s", strerror(errno));
	sll.sll_ifindex = (int)if_nametoindex("xwh2");
	sll.sll_halen = 6;
	end = xwu_now_ns() + P3_FLOOD_NS;
	while (xwu_now_ns() < end) {
		for (int k = 0; k < 16; k++) {
			int to = k & 1; /* to A from B's address, to B from A's */
			size_t len;

			r = r * 1103515245u + 12345u;
			len = forge(frame, sh->mac[to], sh->mac[!to], (__u16)(1 + (r >> 8) % 4),
				    (r >> 12) % 8 ? XW_PKT_CONNECT : XW_PKT_CLOSE, r);
			memcpy(sll.sll_addr, sh->mac[to], 6);
			if (sendto(fd, frame, len, 0, (struct sockaddr *)&sll, sizeof(sll)) ==
			    (ssize_t)len)
				sh->c_forged++;
		}
		usleep(1000);
	}
	close(fd);
	__atomic_store_n(&sh->c_flooded, 1, __ATOMIC_RELEASE);
	await(&sh->stop, "A and B");
	xw_endpoint__close(ep);
	return xwt_failures ? 1 : 0;
}

/* ---- topology and driver --------------------------------------------------- */

static void setup(void)
{
	char path[NHOSTS][64];

	for (int h = 0; h < NHOSTS + 1; h++) {
		if (unshare(CLONE_NEWNET))
			xwt_skip("unshare(CLONE_NEWNET): %s", strerror(errno));
		nsfd[h] = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		REQUIRE(nsfd[h] >= 0, "open netns: %s", strerror(errno));
		xwf_ns_basics();
	}
	/* now in S */
	if (xwt_sh("ip link add xwhbr type bridge && ip link set xwhbr up"))
		xwt_skip("cannot create a bridge");
	for (int h = 0; h < NHOSTS; h++) {
		snprintf(path[h], sizeof(path[h]), "/proc/%d/fd/%d", (int)getpid(), nsfd[h]);
		REQUIRE(xwt_sh("ip link add xwhs%d type veth peer name xwh%d address "
			       "02:00:00:00:0e:%02x && ip link set xwhs%d master xwhbr && "
			       "ip link set xwhs%d up && ip link set xwh%d netns %s",
			       h, h, h + 1, h, h, h, path[h]) == 0,
			"veth %d", h);
		sh->mac[h][0] = 0x02;
		sh->mac[h][4] = 0x0e;
		sh->mac[h][5] = (__u8)(h + 1);
		/* A switch with a static MAC table (port security): C's forged
		 * frames with B's source address must not steal B's port, an
		 * attack on the network that no protocol above it can stop. */
		REQUIRE(xwt_sh("bridge link set dev xwhs%d learning off && bridge fdb add "
			       "02:00:00:00:0e:%02x dev xwhs%d master static",
			       h, h + 1, h) == 0,
			"static fdb %d", h);
	}
	for (int h = 0; h < NHOSTS; h++) {
		int up = 0;
		char ifn[16];

		REQUIRE(setns(nsfd[h], CLONE_NEWNET) == 0, "setns: %s", strerror(errno));
		snprintf(ifn, sizeof(ifn), "xwh%d", h);
		REQUIRE(xwt_sh("ip link set %s up", ifn) == 0, "%s up", ifn);
		for (int i = 0; i < 200 && !(up = xwf_running(ifn)); i++)
			usleep(10000);
		REQUIRE(up, "%s: no carrier", ifn);
	}
	REQUIRE(setns(nsfd[NHOSTS], CLONE_NEWNET) == 0, "setns S: %s", strerror(errno));
}

static pid_t spawn(int host, int (*fn)(void))
{
	pid_t parent = getpid(), pid;

	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	me = host;
	xwt_pin_dir[0] = 0;
	xwt_failures = 0; /* the child's own verdict, not the parent's */
	REQUIRE(setns(nsfd[host], CLONE_NEWNET) == 0, "setns: %s", strerror(errno));
	exit(fn() ? 1 : xwt_failures ? 1 : 0);
}

/* Runs one function per host; expect_kill: B dies by SIGKILL. */
static void part(const char *name, int (*fn[NHOSTS])(void), bool expect_kill)
{
	pid_t pid[NHOSTS];
	int rc[NHOSTS];

	__u8 mac[NHOSTS][6];

	memcpy(mac, sh->mac, sizeof(mac));
	memset(sh, 0, sizeof(*sh));
	memcpy(sh->mac, mac, sizeof(mac));
	for (int h = 0; h < NHOSTS; h++)
		pid[h] = spawn(h, fn[h]);
	for (int h = 0; h < NHOSTS; h++)
		await(&sh->ready[h], "the hosts' endpoints");
	for (int h = 0; h < NHOSTS; h++)
		sh->ready[h] = 0;
	__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
	for (int h = 0; h < NHOSTS; h++)
		rc[h] = xwf_join(NULL, pid[h], 90000);
	for (int h = 0; h < NHOSTS; h++) {
		if (expect_kill && h == 1)
			CHECK(rc[h] == 128 + SIGKILL, "%s: B exited %d, want killed", name, rc[h]);
		else
			CHECK(rc[h] == 0, "%s: host %s exited %d", name, hname[h], rc[h]);
	}
	/* the killed host's pins (its program is detached by the next open) */
	xwt_sh("rm -rf /sys/fs/bpf/xwtest-%d", (int)pid[1]);
}

int main(void)
{
	int (*p1[NHOSTS])(void) = { p1_a, p1_b, p1_c };
	int (*p2[NHOSTS])(void) = { p2_a, p2_b, p2_c };
	int (*p3[NHOSTS])(void) = { p3_a, p3_b, p3_c };

	setvbuf(stdout, NULL, _IOLBF, 0);
	xwt_require_root();
	if (xwt_sh("mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf"))
		xwt_skip("no bpffs");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	REQUIRE(sh != MAP_FAILED, "mmap");
	setup();
	if (!getenv("XWT_PART") || atoi(getenv("XWT_PART")) == 1)
		part("peer killed mid-rendezvous", p1, true);
	if (!getenv("XWT_PART") || atoi(getenv("XWT_PART")) == 2)
		part("floods", p2, false);
	if (!getenv("XWT_PART") || atoi(getenv("XWT_PART")) == 3)
		part("forged CONNECTs from the job's hosts", p3, false);
	return xwt_done();
}
