// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * End to end: the wake engine attached in native mode to a veth end, an
 * AF_XDP socket and a wake ring buffer registered as endpoint EP, a sender
 * in another network namespace sending real frames (tests/lib/xwt_e2e.h).
 *
 * Decisions (how many wakes, their reason, which counters move) are checked
 * exactly; times only where the rules give a bound (a timeout wake never
 * comes before coalesce_usecs) and otherwise only against hangs.
 *
 *   marker        armed, one SMALL|LAT frame: one wake, reason marker
 *   marker/timer  unmarked MEDIUM fragment: wake by the timer, not before
 *                 coalesce_usecs after the frame was sent
 *   unarmed       every policy: no record at all, frames in the RX ring,
 *                 each decision counted in wake_unarmed
 *   burst         20 fragments (MORE on all but the last, LAT on each
 *                 message's last): stream wakes once, reason stream; every
 *                 wakes once per sleep, the 19 others count as unarmed
 *   one sleep     10 LAT frames 200 us apart, one sleep: one wake
 *   race          >= 2000 arm/recheck/sleep rounds against random traffic
 *                 (marker, every, stream; random LAT/MORE): no wake lost, and
 *                 where frames wake at once, the first frame after arming
 *                 is the one that wakes
 *   bpftool       README's command block run as a script; knobs read back;
 *                 the README's policy lines change the next decision
 *   udp           UDP encapsulation on our port woken; another port passed
 *   foreign       ARP and ICMP passed, nothing reaches the RX ring
 *   detach        pins and program gone
 *
 * Exit 0 pass, 1 fail, 77 skip (not root, or a kernel feature missing).
 */
#include "xwt_e2e.h"

#define EP 3
#define MS 1000000ULL
#define NTS 4096

static struct xwe E;
static __u64 ts[NTS];

/* ---- helpers -------------------------------------------------------- */

static void knob(const char *name, __u32 v)
{
	int err = xw_iface__set_knob(E.iface, name, EP, v);

	REQUIRE(err == 0, "set %s=%u: %s", name, v, xw_strerror(err));
}

static __u32 get_knob(const char *name)
{
	__u32 v = 0;
	int err = xw_iface__get_knob(E.iface, name, EP, &v);

	CHECK(err == 0, "get %s: %s", name, xw_strerror(err));
	return v;
}

static struct xw_stats st(void)
{
	return xwe_stats(&E, EP);
}

static struct xw_stats gst(void)
{
	return xwe_stats(&E, XW_STATS_IFACE);
}

static const char *rname(unsigned int r)
{
	const char *n = xw_wake_reason_name(r);

	return n ? n : "?";
}

static long long wakes_sent(const struct xw_stats *s)
{
	return (long long)(s->wake_every + s->wake_marker + s->wake_stream + s->wake_frames +
			   s->wake_timeout + s->wake_watchdog);
}

/* Nothing armed, nothing in flight, every frame taken; optionally no
 * stray wake record either. */
static void quiesce(bool strict, unsigned long settle_us)
{
	xwe_disarm(&E);
	xwe_sleep_us(settle_us);
	xwe_drain(&E);
	E.nrecs = 0;
	xwe_poll_recs(&E);
	if (strict)
		CHECK(E.nrecs == 0, "stray wake records: %d", E.nrecs);
	E.nrecs = 0;
	CHECK(E.consumed == xwe_produced(&E), "frames left: produced %llu consumed %llu",
	      (unsigned long long)xwe_produced(&E), (unsigned long long)E.consumed);
	CHECK(E.bad_frames == 0, "%s", E.bad_msg);
}

/*
 * Arm, have the sender run @c, sleep for the wake, take all the frames,
 * then check that this one sleep got exactly one record, of @reason, with
 * `produced` == @produced.  Returns the record (kind 0 if none); the send
 * times are in ts[].
 */
static struct xw_wake_rec one_wake(const char *what, struct xwe_cmd *c, int reason,
				   __u64 produced, unsigned long settle_us)
{
	struct xw_wake_rec r = {};
	__u64 base = E.consumed;
	int got, n, taken;

	E.nrecs = 0;
	REQUIRE(xwe_arm(&E) == 1, "%s: arm with nothing in flight", what);
	REQUIRE(xwe_send(&E, c, true) == 0, "%s: cannot command the sender", what);
	got = xwe_wait(&E, xwu_now_ns() + 3000 * MS);
	n = xwe_send_wait(&E, ts, NTS, 10000);
	CHECK(n == (int)c->n, "%s: sender sent %d of %u frames", what, n, c->n);
	CHECK(got >= 1, "%s: no wake within 3 s", what);
	taken = xwe_drain_until(&E, base + c->n, xwu_now_ns() + 2000 * MS);
	CHECK(taken == (int)c->n, "%s: %d of %u frames reached the RX ring", what, taken, c->n);
	CHECK(E.bad_frames == 0, "%s: %s", what, E.bad_msg);
	xwe_sleep_us(settle_us);
	xwe_poll_recs(&E);
	CHECK(E.nrecs == 1, "%s: %d wake records for one sleep", what, E.nrecs);
	CHECK(__atomic_load_n(&E.sh->armed, __ATOMIC_SEQ_CST) == 0,
	      "%s: armed flag not taken by the wake", what);
	if (E.nrecs >= 1) {
		r = E.recs[0];
		CHECK(r.kind == XW_REC_WAKE, "%s: record kind %u", what, r.kind);
		CHECK(r.ep == EP, "%s: record for endpoint %u", what, r.ep);
		CHECK(r.reason == reason, "%s: reason %s, expected %s", what, rname(r.reason),
		      rname((unsigned int)reason));
		CHECK(r.produced == produced, "%s: record produced %llu, expected %llu", what,
		      (unsigned long long)r.produced, (unsigned long long)produced);
		CHECK(r.ts_ns >= ts[0], "%s: wake stamped before the first frame was sent", what);
	}
	xwe_disarm(&E);
	E.nrecs = 0;
	return r;
}

/* ---- marker --------------------------------------------------------- */

static void t_marker(void)
{
	struct xwe_cmd c = { .n = 1, .type = XW_PKT_SMALL, .lat = XWE_LAT_ALL, .payload_len = 32 };
	XW_OPTS(xw_stats, s0);
	XW_OPTS(xw_stats, s1);
	struct xw_wake_rec r;

	printf("marker: SMALL|LAT to an armed receiver\n");
	knob("policy", XW_POLICY_MARKER);
	quiesce(true, 1000);
	s0 = st();
	CHECK(E.consumed == 0, "first test: %llu frames before", (unsigned long long)E.consumed);
	r = one_wake("marker", &c, XW_WAKE_MARKER, 1, 20000);
	CHECK(r.pending == 1, "marker: pending %u", r.pending);
	s1 = st();
	CHECK(XWE_D(s0, s1, wake_marker) == 1, "wake_marker +%lld", XWE_D(s0, s1, wake_marker));
	CHECK(XWE_D(s0, s1, frames_redirected) == 1, "frames_redirected +%lld",
	      XWE_D(s0, s1, frames_redirected));
	CHECK(XWE_D(s0, s1, lat_frames) == 1, "lat_frames +%lld", XWE_D(s0, s1, lat_frames));
	CHECK(XWE_D(s0, s1, wake_unarmed) == 0, "wake_unarmed +%lld", XWE_D(s0, s1, wake_unarmed));
	printf("  woken %.1f us after the send\n", (double)(r.ts_ns - ts[0]) / 1e3);
}

static void t_marker_timeout(void)
{
	struct xwe_cmd c = { .n = 1, .type = XW_PKT_MEDIUM, .group = 4, .payload_len = 1000 };
	XW_OPTS(xw_stats, s0);
	XW_OPTS(xw_stats, s1);
	struct xw_wake_rec r;
	double d;

	printf("marker: unmarked MEDIUM fragment, coalesce_usecs 2000\n");
	knob("policy", XW_POLICY_MARKER);
	knob("coalesce_usecs", 2000);
	quiesce(true, 1000);
	s0 = st();
	r = one_wake("marker/timer", &c, XW_WAKE_TIMEOUT, E.consumed + 1, 10000);
	d = (double)(r.ts_ns - ts[0]) / 1e3;
	CHECK(r.ts_ns >= ts[0] + 2000000ULL, "timeout wake %.1f us after the send (< 2000)", d);
	CHECK(r.ts_ns < ts[0] + 1000 * MS, "timeout wake %.1f us after the send (> 1 s)", d);
	s1 = st();
	CHECK(XWE_D(s0, s1, wake_timeout) == 1, "wake_timeout +%lld", XWE_D(s0, s1, wake_timeout));
	CHECK(XWE_D(s0, s1, timer_fires) >= 1, "timer_fires +%lld", XWE_D(s0, s1, timer_fires));
	CHECK(XWE_D(s0, s1, wake_marker) == 0, "wake_marker +%lld", XWE_D(s0, s1, wake_marker));
	printf("  woken %.1f us after the send\n", d);
	knob("coalesce_usecs", XW_DEF_COALESCE_USECS);
}

/* ---- not armed ------------------------------------------------------ */

static void t_unarmed(void)
{
	printf("not armed: 5 SMALL|LAT frames, 10 ms apart, per policy\n");
	for (unsigned int p = 0; p < XW_POLICY_MAX; p++) {
		struct xwe_cmd c = { .n = 5, .type = XW_PKT_SMALL, .lat = XWE_LAT_ALL,
				     .payload_len = 64, .gap_us = 10000 };
		const char *pn = xw_policy_name(p);
		unsigned long long deadline;
		XW_OPTS(xw_stats, s0);
		XW_OPTS(xw_stats, s1);
		int n;

		knob("policy", p);
		quiesce(true, 2000);
		s0 = st();
		n = xwe_send_sync(&E, &c, true, ts, NTS);
		CHECK(n == 5, "%s: sent %d", pn, n);
		/* the timeout rule decides 75 us after each frame */
		deadline = xwu_now_ns() + 1000 * MS;
		do {
			xwe_sleep_us(1000);
			s1 = st();
		} while (XWE_D(s0, s1, wake_unarmed) < 5 && xwu_now_ns() < deadline);
		xwe_sleep_us(5000);
		s1 = st();
		CHECK(XWE_D(s0, s1, wake_unarmed) == 5,
		      "%s: wake_unarmed +%lld, expected +5 (timer starts +%lld, fires +%lld)", pn,
		      XWE_D(s0, s1, wake_unarmed), XWE_D(s0, s1, timer_starts),
		      XWE_D(s0, s1, timer_fires));
		CHECK(wakes_sent(&s1) == wakes_sent(&s0), "%s: %lld wakes sent to an unarmed receiver",
		      pn, wakes_sent(&s1) - wakes_sent(&s0));
		CHECK(xwe_poll_recs(&E) == 0, "%s: %d wake records while not armed", pn, E.nrecs);
		CHECK(xwe_rx_visible(&E) == 5, "%s: %u frames in the RX ring", pn, xwe_rx_visible(&E));
		CHECK(xwe_drain(&E) == 5, "%s: drain", pn);
		CHECK(E.bad_frames == 0, "%s: %s", pn, E.bad_msg);
		E.nrecs = 0;
	}
}

/* ---- bursts ----------------------------------------------------------- */

static void t_burst(void)
{
	/* 4 messages of 5 MEDIUM fragments sent back to back: LAT on each
	 * message's last fragment, MORE on every frame but the very last. */
	struct xwe_cmd c = { .n = 20, .type = XW_PKT_MEDIUM, .group = 5, .payload_len = 1000,
			     .lat = XWE_LAT_LAST, .more = XWE_MORE_BUT_LAST };
	XW_OPTS(xw_stats, s0);
	XW_OPTS(xw_stats, s1);
	XW_OPTS(xw_stats, s2);
	struct xw_wake_rec r;

	printf("burst: 20 fragments, stream policy (coalesce_usecs 200000)\n");
	knob("policy", XW_POLICY_STREAM);
	knob("coalesce_usecs", 200000); /* the bound never cuts the burst short */
	quiesce(true, 2000);
	s0 = st();
	/* Frames 0-3: no LAT, timeout rule; frame 4 (LAT|MORE) defers; the
	 * last frame (LAT, no MORE) ends the burst: one wake, reason stream. */
	r = one_wake("stream burst", &c, XW_WAKE_STREAM, E.consumed + 20, 20000);
	CHECK(r.pending == 20, "stream burst: the wake covers %u frames", r.pending);
	s1 = st();
	CHECK(XWE_D(s0, s1, wake_stream) == 1, "wake_stream +%lld", XWE_D(s0, s1, wake_stream));
	CHECK(XWE_D(s0, s1, deferrals) == 1, "deferrals +%lld", XWE_D(s0, s1, deferrals));
	CHECK(XWE_D(s0, s1, wake_unarmed) == 0, "wake_unarmed +%lld", XWE_D(s0, s1, wake_unarmed));
	CHECK(XWE_D(s0, s1, lat_frames) == 4, "lat_frames +%lld", XWE_D(s0, s1, lat_frames));
	CHECK(XWE_D(s0, s1, more_frames) == 19, "more_frames +%lld", XWE_D(s0, s1, more_frames));
	CHECK(XWE_D(s0, s1, frames_redirected) == 20, "frames_redirected +%lld",
	      XWE_D(s0, s1, frames_redirected));
	printf("  one wake %.1f us after the last frame was sent\n",
	       (double)((long long)r.ts_ns - (long long)ts[19]) / 1e3);
	/* The timer the first frames started expires with nothing pending. */
	xwe_sleep_us(220000);
	s2 = st();
	CHECK(wakes_sent(&s2) == wakes_sent(&s1) && s2.wake_unarmed == s1.wake_unarmed,
	      "the expired timer woke again");
	knob("coalesce_usecs", XW_DEF_COALESCE_USECS);

	printf("burst: the same 20 fragments, every policy\n");
	knob("policy", XW_POLICY_EVERY);
	quiesce(true, 2000);
	s0 = st();
	one_wake("every burst", &c, XW_WAKE_EVERY, E.consumed + 1, 20000);
	s1 = st();
	CHECK(XWE_D(s0, s1, wake_every) == 1, "wake_every +%lld", XWE_D(s0, s1, wake_every));
	CHECK(XWE_D(s0, s1, wake_unarmed) == 19, "every: wake_unarmed +%lld, expected +19",
	      XWE_D(s0, s1, wake_unarmed));
}

/* ---- one sleep, one wake -------------------------------------------- */

static void t_one_sleep(void)
{
	struct xwe_cmd c = { .n = 10, .type = XW_PKT_SMALL, .lat = XWE_LAT_ALL, .payload_len = 48,
			     .gap_us = 200 };
	XW_OPTS(xw_stats, s0);
	XW_OPTS(xw_stats, s1);

	printf("one sleep: 10 SMALL|LAT frames 200 us apart\n");
	knob("policy", XW_POLICY_MARKER);
	quiesce(true, 1000);
	s0 = st();
	one_wake("one sleep", &c, XW_WAKE_MARKER, E.consumed + 1, 20000);
	s1 = st();
	CHECK(XWE_D(s0, s1, wake_marker) == 1, "wake_marker +%lld", XWE_D(s0, s1, wake_marker));
	CHECK(XWE_D(s0, s1, wake_unarmed) == 9, "wake_unarmed +%lld, expected +9",
	      XWE_D(s0, s1, wake_unarmed));
}

/* ---- arm/sleep race ---------------------------------------------------- */

static void t_race(void)
{
	/* exact: every frame wakes an armed receiver at once, so the record
	 * of a sleep that began at consumed == P must say produced == P + 1
	 * (a frame that slipped in unseen shows up as P + 2 or later). */
	static const struct {
		unsigned int policy;
		int lat, more;
		bool exact;
	} rounds[] = {
		{ XW_POLICY_MARKER, XWE_LAT_ALL, XWE_MORE_NONE, true },
		{ XW_POLICY_MARKER, XWE_LAT_RAND, XWE_MORE_NONE, false }, /* timer rule */
		{ XW_POLICY_EVERY, XWE_LAT_NONE, XWE_MORE_NONE, true },
		{ XW_POLICY_STREAM, XWE_LAT_RAND, XWE_MORE_RAND, false }, /* deferrals */
	};
	long iters = 0, sleeps = 0, rechecks = 0, wakes = 0, spurious = 0, late = 0, lost = 0;
	long frames = 0, exact = 0, missed = 0, k;
	__u32 rnd = 12345;
	unsigned long long t0 = xwu_now_ns();

	printf("race: arm -> recheck -> sleep against random gaps, >= 2000 iterations\n");
	/* Rounds of 400 frames, 0-100 us apart, until 2000 iterations and 300
	 * exactly checked sleeps (bounded in rounds, not in time: a loaded
	 * receiver takes more frames per iteration, so it needs more rounds). */
	for (k = 0; (iters < 2000 || exact < 300 || k < 4) && k < 100; k++) {
		const unsigned int pol = rounds[k % 4].policy;
		struct xwe_cmd c = { .n = 400, .type = XW_PKT_SMALL, .payload_len = 16,
				     .rand_gap_us = 100, .lat = (__u8)rounds[k % 4].lat,
				     .more = (__u8)rounds[k % 4].more, .seed = (__u32)(k + 1) * 7919u };
		unsigned long long end;
		__u64 target;
		int n;

		knob("policy", pol);
		quiesce(true, 2000);
		target = E.consumed + c.n;
		REQUIRE(xwe_send(&E, &c, true) == 0, "race: cannot command the sender");
		end = xwu_now_ns() + 10000 * MS;
		for (long i = 0; i < 1000000 && E.consumed < target && xwu_now_ns() < end; i++) {
			__u64 maxp = 0, first = ~0ULL, at;
			int got;

			if (xwe_drain(&E))
				continue;
			iters++;
			/* Widen the window between the last look at the RX ring
			 * and arming (0-30 us of "other work"), so that frames
			 * land in it and only the recheck can see them. */
			xwe_wait_until(xwu_now_ns() + xwe_rand(&rnd) % 30000);
			if (!xwe_arm(&E)) {
				/* frames in flight: take them (they may not be
				 * visible in the RX ring yet), then arm again */
				rechecks++;
				xwe_drain_until(&E, xwe_produced(&E), xwu_now_ns() + 1000 * MS);
				continue;
			}
			sleeps++;
			at = E.consumed;
			E.nrecs = 0;
			got = xwe_wait(&E, xwu_now_ns() + 200 * MS);
			if (got <= 0 && xwe_produced(&E) > E.consumed) {
				/* A frame is there and no wake came: give a record on
				 * its way (a timer-rule frame at the edge) 100 ms more. */
				got = xwe_wait(&E, xwu_now_ns() + 100 * MS);
				if (got > 0)
					late++;
				else
					lost++;
			}
			if (got <= 0) {
				xwe_disarm(&E);
				continue;
			}
			wakes++;
			for (int j = 0; j < E.nrecs; j++) {
				if (E.recs[j].produced > maxp)
					maxp = E.recs[j].produced;
				if (E.recs[j].produced > at && E.recs[j].produced < first)
					first = E.recs[j].produced;
			}
			if (maxp <= at) {
				spurious++; /* the record of an earlier recheck */
			} else if (rounds[k % 4].exact) {
				exact++;
				if (first != at + 1 && missed++ < 5)
					fprintf(stderr, "race %s: slept at %llu, woken for %llu\n",
						xw_policy_name(pol), (unsigned long long)at,
						(unsigned long long)first);
			}
			xwe_drain_until(&E, maxp, xwu_now_ns() + 1000 * MS);
		}
		n = xwe_send_wait(&E, ts, NTS, 10000);
		CHECK(n == (int)c.n, "race %s: sender sent %d", xw_policy_name(pol), n);
		CHECK(E.consumed == target, "race %s: %llu of %u frames taken", xw_policy_name(pol),
		      (unsigned long long)(E.consumed - (target - c.n)), c.n);
		frames += c.n;
		quiesce(false, 2000);
	}
	CHECK(iters >= 2000, "race: only %ld iterations in %ld rounds", iters, k);
	CHECK(lost == 0, "race: %ld lost wakes (armed, a frame there, no record for 300 ms)", lost);
	CHECK(missed == 0, "race: %ld of %ld sleeps not woken by the first frame after arming",
	      missed, exact);
	CHECK(exact >= 300, "race: only %ld sleeps checked exactly", exact);
	CHECK(E.bad_frames == 0, "race: %s", E.bad_msg);
	printf("  %ld iterations over %ld frames: %ld slept, %ld saw frames at the recheck, "
	       "%ld woken (%ld by an earlier recheck's record, %ld late); %ld lost; "
	       "%ld of %ld wakes by the first frame after arming; %.2f s\n",
	       iters, frames, sleeps, rechecks, wakes, spurious, late, lost, exact - missed, exact,
	       (double)(xwu_now_ns() - t0) / 1e9);
}

/* ---- bpftool, the README's commands ------------------------------------ */

#define MAX_LINES 64

static char readme_lines[MAX_LINES][512];
static int readme_nlines;

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = len >= 0 && len < (1 << 22) ? calloc(1, (size_t)len + 1) : NULL;
	if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* README.md: $XW_SRC, else two levels above the binary (.output/tests/), else cwd. */
static char *read_readme(char *path, size_t len)
{
	const char *src = getenv("XW_SRC");
	char exe[PATH_MAX - 16];
	ssize_t n;
	char *t;

	if (src && *src) {
		snprintf(path, len, "%s/README.md", src);
		return read_text(path);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		for (int up = 0; up < 3; up++) {
			char *slash = strrchr(exe, '/');

			if (slash)
				*slash = '\0';
		}
		snprintf(path, len, "%s/README.md", exe);
		t = read_text(path);
		if (t)
			return t;
	}
	snprintf(path, len, "README.md");
	return read_text(path);
}

static int load_readme_block(void)
{
	char path[PATH_MAX];
	char *text = read_readme(path, sizeof(path)), *b, *e, *line;

	REQUIRE(text, "cannot read %s (set XW_SRC to the source directory)", path);
	b = strstr(text, "<!-- bpftool-commands-begin -->");
	e = b ? strstr(b, "<!-- bpftool-commands-end -->") : NULL;
	REQUIRE(b && e, "%s: no bpftool-commands block", path);
	*e = '\0';
	readme_nlines = 0;
	for (line = strtok(b, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strncmp(line, "<!--", 4) || !strncmp(line, "```", 3) || !*line)
			continue;
		REQUIRE(readme_nlines < MAX_LINES && strlen(line) < sizeof(readme_lines[0]),
			"README block too long");
		snprintf(readme_lines[readme_nlines++], sizeof(readme_lines[0]), "%s", line);
	}
	free(text);
	return readme_nlines;
}

/* @in with every @from replaced by @to. */
static void replace_all(char *out, size_t len, const char *in, const char *from, const char *to)
{
	size_t o = 0, fl = strlen(from), tl = strlen(to);

	while (*in && o + 1 < len) {
		if (!strncmp(in, from, fl) && o + tl + 1 < len) {
			memcpy(out + o, to, tl);
			o += tl;
			in += fl;
		} else {
			out[o++] = *in++;
		}
	}
	out[o] = '\0';
}

/* Name of the map a README line addresses ("policy" in "$PIN/policy key"). */
static int line_map(const char *line, char *name, size_t len)
{
	const char *p = strstr(line, "$PIN/");
	size_t n = 0;

	if (!p)
		return -1;
	p += 5;
	while (p[n] && p[n] != ' ' && n + 1 < len) {
		name[n] = p[n];
		n++;
	}
	name[n] = '\0';
	return 0;
}

/* The README line made to address this test's pins and endpoint. */
static void adapt_line(const char *in, char *out, size_t len)
{
	char tmp[1024], name[64], key[64];
	XW_OPTS(xw_knob_info, ki);
	int idx;

	replace_all(tmp, sizeof(tmp), in, "/sys/fs/bpf/xdpwake/veth0", E.pin_dir);
	idx = line_map(tmp, name, sizeof(name)) ? -1 : xw_knob_find(name);
	if (EP != 0 && idx >= 0 && !xw_knob_info(idx, &ki) && ki.per_endpoint) {
		snprintf(key, sizeof(key), "key %u %u %u %u", EP & 0xff, (EP >> 8) & 0xff,
			 (EP >> 16) & 0xff, (EP >> 24) & 0xff);
		replace_all(out, len, tmp, "key 0 0 0 0", key);
	} else {
		snprintf(out, len, "%s", tmp);
	}
}

/* Run @script with sh -c; its output goes to a file shown on failure. */
static int run_sh(const char *what, const char *script)
{
	char out[] = "/tmp/xwt-e2e-sh-XXXXXX", cmd[PATH_MAX + 64];
	unsigned long long deadline = xwu_now_ns() + 60000 * MS;
	int fd = mkstemp(out), st = 0, rc;
	pid_t pid, w;

	REQUIRE(fd >= 0, "mkstemp: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	close(fd);
	while ((w = waitpid(pid, &st, WNOHANG)) == 0 && xwu_now_ns() < deadline)
		xwe_sleep_us(2000);
	if (w == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (rc) {
		fprintf(stderr, "%s: exit %d; script:\n%s\noutput (tail):\n", what, rc, script);
		snprintf(cmd, sizeof(cmd), "tail -n 20 %s >&2", out);
		xwt_sh("%s", cmd);
	}
	unlink(out);
	return rc;
}

/* Run the README line on @map_name whose comment is "# @tag". */
static int run_readme_line(const char *map_name, const char *tag)
{
	char want[64], hash[64], line[1024], script[PATH_MAX + 1200], name[64];

	snprintf(want, sizeof(want), "%s", map_name);
	snprintf(hash, sizeof(hash), "# %s", tag);
	for (int i = 0; i < readme_nlines; i++) {
		const char *h = strstr(readme_lines[i], hash);

		if (line_map(readme_lines[i], name, sizeof(name)) || strcmp(name, want) || !h ||
		    !strstr(readme_lines[i], "update"))
			continue;
		if (h[strlen(hash)] && h[strlen(hash)] != ' ')
			continue;
		adapt_line(readme_lines[i], line, sizeof(line));
		snprintf(script, sizeof(script), "set -e\nPIN='%s'\n%s\n", E.pin_dir, line);
		return run_sh(tag, script);
	}
	CHECK(0, "README has no `%s ... # %s` line", map_name, tag);
	return -1;
}

static void t_bpftool(void)
{
	static char script[MAX_LINES * 1100];
	struct {
		char name[64];
		__u32 v;
	} expect[MAX_LINES];
	int nexp = 0, covered = 0, rc;
	struct xwe_cmd c;
	XW_OPTS(xw_knob_info, ki);
	XW_OPTS(xw_stats, s0);
	XW_OPTS(xw_stats, s1);
	struct xw_wake_rec r;
	size_t o;

	printf("bpftool: the README's command block\n");
	if (xwt_sh("command -v bpftool >/dev/null 2>&1")) {
		CHECK(0, "bpftool not installed (make deps)");
		return;
	}
	load_readme_block();
	CHECK(readme_nlines >= 10, "README block has %d lines", readme_nlines);
	o = (size_t)snprintf(script, sizeof(script), "set -e\n");
	for (int i = 0; i < readme_nlines; i++) {
		char line[1024], name[64];
		unsigned int k[4];
		char v[4][16];
		const char *p;

		adapt_line(readme_lines[i], line, sizeof(line));
		o += (size_t)snprintf(script + o, sizeof(script) - o, "%s\n", line);
		/* what the line writes, to read it back afterwards */
		if (line_map(line, name, sizeof(name)) || xw_knob_find(name) < 0 ||
		    !(p = strstr(line, " key ")) ||
		    sscanf(p, " key %u %u %u %u value %15s %15s %15s %15s", &k[0], &k[1], &k[2],
			   &k[3], v[0], v[1], v[2], v[3]) != 8)
			continue;
		int j;

		for (j = 0; j < nexp && strcmp(expect[j].name, name); j++)
			;
		if (j == nexp)
			nexp++;
		snprintf(expect[j].name, sizeof(expect[j].name), "%s", name);
		expect[j].v = 0;
		for (int b = 0; b < 4; b++)
			expect[j].v |= (__u32)(strtoul(v[b], NULL, 0) & 0xff) << (8 * b);
	}
	/* Every knob has its line in the README. */
	for (int i = 0; i < xw_knob_count(); i++) {
		bool found = false;

		xw_knob_info(i, &ki);
		for (int j = 0; j < nexp; j++)
			found |= !strcmp(expect[j].name, ki.name);
		covered += found;
		CHECK(found, "README block has no update line for knob %s", ki.name);
	}
	/* Move every knob away from the README's value so the read back below
	 * proves bpftool wrote it (no frames are sent meanwhile). */
	for (int j = 0; j < nexp; j++) {
		int idx = xw_knob_find(expect[j].name);
		__u32 alt;

		xw_knob_info(idx, &ki);
		alt = expect[j].v == ki.min ? ki.min + 1 : ki.min;
		REQUIRE(xw_iface__set_knob(E.iface, ki.name, EP, alt) == 0, "set %s", ki.name);
	}
	rc = run_sh("README bpftool block", script);
	CHECK(rc == 0, "the README's bpftool block failed (exit %d)", rc);
	for (int j = 0; j < nexp; j++) {
		__u32 got = get_knob(expect[j].name);

		CHECK(got == expect[j].v, "after bpftool: %s = %u (%#x), README wrote %u (%#x)",
		      expect[j].name, got, got, expect[j].v, expect[j].v);
	}
	printf("  %d lines ran, %d knobs read back as written (%d of %d knobs covered)\n",
	       readme_nlines, nexp, covered, xw_knob_count());

	/* The README's policy lines change the very next decision. */
	knob("coalesce_usecs", 3000);
	CHECK(run_readme_line("policy", "every") == 0, "README `# every` line");
	CHECK(get_knob("policy") == XW_POLICY_EVERY, "policy after `# every`: %u",
	      get_knob("policy"));
	quiesce(true, 5000);
	c = (struct xwe_cmd){ .n = 1, .type = XW_PKT_MEDIUM, .group = 3, .payload_len = 500 };
	r = one_wake("bpftool every", &c, XW_WAKE_EVERY, E.consumed + 1, 10000);
	printf("  every: unmarked fragment woke at once (%.1f us after the send)\n",
	       (double)(r.ts_ns - ts[0]) / 1e3);

	CHECK(run_readme_line("policy", "marker") == 0, "README `# marker` line");
	CHECK(get_knob("policy") == XW_POLICY_MARKER, "policy after `# marker`: %u",
	      get_knob("policy"));
	quiesce(true, 1000);
	c = (struct xwe_cmd){ .n = 1, .type = XW_PKT_MEDIUM, .group = 3, .payload_len = 500 };
	r = one_wake("bpftool marker", &c, XW_WAKE_TIMEOUT, E.consumed + 1, 10000);
	CHECK(r.ts_ns >= ts[0] + 3000000ULL, "marker: unmarked frame woke after %.1f us (< 3000)",
	      (double)(r.ts_ns - ts[0]) / 1e3);
	printf("  marker: unmarked fragment woke by the timer (%.1f us)\n",
	       (double)(r.ts_ns - ts[0]) / 1e3);

	CHECK(run_readme_line("policy", "stream") == 0, "README `# stream` line");
	CHECK(get_knob("policy") == XW_POLICY_STREAM, "policy after `# stream`: %u",
	      get_knob("policy"));
	quiesce(true, 1000);
	s0 = st();
	c = (struct xwe_cmd){ .n = 1, .type = XW_PKT_MEDIUM, .group = 3, .payload_len = 500,
			      .lat = XWE_LAT_ALL, .more = XWE_MORE_ALL };
	r = one_wake("bpftool stream", &c, XW_WAKE_TIMEOUT, E.consumed + 1, 10000);
	s1 = st();
	CHECK(r.ts_ns >= ts[0] + 3000000ULL, "stream: LAT|MORE frame woke after %.1f us (< 3000)",
	      (double)(r.ts_ns - ts[0]) / 1e3);
	CHECK(XWE_D(s0, s1, deferrals) == 1, "stream: deferrals +%lld", XWE_D(s0, s1, deferrals));
	printf("  stream: LAT|MORE fragment deferred, woken after %.1f us\n",
	       (double)(r.ts_ns - ts[0]) / 1e3);

	/* Back to the README's defaults, through the README's lines. */
	CHECK(run_readme_line("coalesce_usecs", "75 us") == 0, "README coalesce_usecs line");
	CHECK(get_knob("coalesce_usecs") == 75, "coalesce_usecs %u", get_knob("coalesce_usecs"));
	CHECK(run_readme_line("policy", "marker") == 0, "README `# marker` line");
	CHECK(get_knob("encap") == XW_ENCAP_ETH, "encap left at %u", get_knob("encap"));
	CHECK(get_knob("ethertype") == XW_DEFAULT_ETHERTYPE, "ethertype left at %#x",
	      get_knob("ethertype"));
	CHECK(get_knob("udp_port") == XW_DEFAULT_UDP_PORT, "udp_port left at %u",
	      get_knob("udp_port"));
	CHECK(get_knob("session") == 0, "session left at %u", get_knob("session"));
	CHECK(get_knob("lat_mask") == XW_DEF_LAT_MASK, "lat_mask left at %#x", get_knob("lat_mask"));
}

/* ---- UDP encapsulation ------------------------------------------------- */

static void t_udp(void)
{
	struct xwe_cmd c = { .n = 1, .type = XW_PKT_SMALL, .lat = XWE_LAT_ALL, .payload_len = 40,
			     .encap = XWT_ENC_UDP };
	XW_OPTS(xw_stats, g0);
	XW_OPTS(xw_stats, g1);
	XW_OPTS(xw_stats, s0);
	XW_OPTS(xw_stats, s1);
	__u64 p0;
	int n, got;

	printf("udp: encap eth+udp, IPv4/UDP to port %u and to port 5555\n", XW_DEFAULT_UDP_PORT);
	knob("policy", XW_POLICY_MARKER);
	knob("encap", XW_ENCAP_ALL);
	quiesce(true, 1000);
	s0 = st();
	one_wake("udp", &c, XW_WAKE_MARKER, E.consumed + 1, 10000);
	s1 = st();
	CHECK(XWE_D(s0, s1, wake_marker) == 1, "udp: wake_marker +%lld", XWE_D(s0, s1, wake_marker));

	/* Another port: passed to the kernel, never redirected or woken. */
	g0 = gst();
	p0 = xwe_produced(&E);
	REQUIRE(xwe_arm(&E) == 1, "udp: arm");
	c = (struct xwe_cmd){ .n = 1, .type = XW_PKT_SMALL, .lat = XWE_LAT_ALL, .payload_len = 40,
			      .encap = XWT_ENC_UDP, .udp_port = 5555 };
	n = xwe_send_sync(&E, &c, false, ts, NTS);
	CHECK(n == 1, "udp: sent %d", n);
	got = xwe_wait(&E, xwu_now_ns() + 30 * MS);
	CHECK(got == 0, "udp: %d wakes for a frame to another port", got);
	CHECK(xwe_disarm(&E) == 0, "udp: armed flag taken by a frame to another port");
	g1 = gst();
	CHECK(XWE_D(g0, g1, frames_passed) >= 1, "udp: frames_passed +%lld",
	      XWE_D(g0, g1, frames_passed));
	CHECK(xwe_produced(&E) == p0, "udp: frame to port 5555 redirected");
	CHECK(xwe_rx_visible(&E) == 0, "udp: %u frames in the RX ring", xwe_rx_visible(&E));

	/* Our port, but UDP switched off again: passed as well. */
	knob("encap", XW_ENCAP_ETH);
	g0 = gst();
	c = (struct xwe_cmd){ .n = 1, .type = XW_PKT_SMALL, .lat = XWE_LAT_ALL, .payload_len = 40,
			      .encap = XWT_ENC_UDP };
	n = xwe_send_sync(&E, &c, false, ts, NTS);
	xwe_sleep_us(10000);
	g1 = gst();
	CHECK(XWE_D(g0, g1, frames_passed) >= 1 && xwe_produced(&E) == p0,
	      "udp with encap=eth: passed +%lld, produced +%llu", XWE_D(g0, g1, frames_passed),
	      (unsigned long long)(xwe_produced(&E) - p0));
	CHECK(get_knob("encap") == XW_ENCAP_ETH, "encap %u", get_knob("encap"));
	quiesce(true, 1000);
}

/* ---- foreign traffic ----------------------------------------------------- */

static void t_foreign(void)
{
	struct xwe_cmd c = { .op = XWE_OP_FOREIGN, .n = 6 };
	XW_OPTS(xw_stats, g0);
	XW_OPTS(xw_stats, g1);
	__u64 p0;
	int n, got;

	printf("foreign: ARP and ICMP frames\n");
	quiesce(true, 1000);
	g0 = gst();
	p0 = xwe_produced(&E);
	REQUIRE(xwe_arm(&E) == 1, "foreign: arm");
	n = xwe_send_sync(&E, &c, false, ts, NTS);
	CHECK(n == 6, "foreign: sent %d", n);
	got = xwe_wait(&E, xwu_now_ns() + 30 * MS);
	CHECK(got == 0, "foreign: %d wakes", got);
	CHECK(xwe_disarm(&E) == 0, "foreign: armed flag taken");
	g1 = gst();
	CHECK(XWE_D(g0, g1, frames_passed) >= 6, "foreign: frames_passed +%lld",
	      XWE_D(g0, g1, frames_passed));
	CHECK(XWE_D(g0, g1, frames_ours) == 0, "foreign: frames_ours +%lld",
	      XWE_D(g0, g1, frames_ours));
	CHECK(xwe_produced(&E) == p0, "foreign: redirected");
	CHECK(xwe_rx_visible(&E) == 0, "foreign: %u frames in the RX ring", xwe_rx_visible(&E));
}

/* ---- detach -------------------------------------------------------------- */

static void t_detach(void)
{
	char dir[PATH_MAX], ifn[IF_NAMESIZE];
	struct xw_iface *again = NULL;
	int err;

	printf("detach\n");
	snprintf(dir, sizeof(dir), "%s", E.pin_dir);
	snprintf(ifn, sizeof(ifn), "%s", E.rx_if);
	err = xwe_teardown(&E, true);
	CHECK(err == 0, "xw_iface__detach: %s", xw_strerror(err));
	CHECK(access(dir, F_OK) != 0 && errno == ENOENT, "%s still there", dir);
	if (if_nametoindex(ifn)) {
		struct xw_iface_opts o;

		memset(&o, 0, sizeof(o)); /* not XW_OPTS(): see xwe_setup() */
		o.sz = sizeof(o);
		o.pin_root = xwt_pin_root();
		o.no_attach = true;
		err = xw_iface__open(ifn, &o, &again);
		CHECK(err == -ENOENT, "after detach, open(no_attach): %s", xw_strerror(err));
		if (!err)
			xw_iface__close(again);
	}
}

int main(void)
{
	struct xwe_opts o = { .ep = EP };
	unsigned long long t0 = xwu_now_ns();
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	err = xwe_setup(&E, &o);
	if (err == XWE_SKIP)
		xwt_skip("%s", E.err);
	REQUIRE(err == 0, "setup: %s", E.err);
	REQUIRE(xw_iface__mode(E.iface) == XW_MODE_NATIVE, "attached in mode %d, not native",
		xw_iface__mode(E.iface));
	printf("receiver %s: native XDP (%s), AF_XDP copy mode, endpoint %u; sender %s in its "
	       "own namespace\n",
	       E.rx_if, xw_iface__multiprog(E.iface) ? "libxdp dispatcher" : "single program",
	       EP, E.tx_if);

	t_marker();
	t_marker_timeout();
	t_unarmed();
	t_burst();
	t_one_sleep();
	t_race();
	t_bpftool();
	t_udp();
	t_foreign();
	t_detach();
	printf("%.1f s\n", (double)(xwu_now_ns() - t0) / 1e9);
	return xwt_done();
}
