// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * policy_demo - the five wake policies side by side on real traffic (`make demo`).
 *
 * Two network namespaces joined by a veth pair (tests/lib/xwt_e2e.h): the
 * receiver attaches xdpwake (native XDP), registers an endpoint with an
 * AF_XDP socket and a wake ring, and receives as a blocking receiver does
 * (take what is there; arm, recheck, sleep on the ring; take the frames the
 * wake record counts).  The sender marks frames as the library will.  For
 * every policy and each traffic pattern it measures:
 *
 *   wakes        wake records the receiver got, and per message
 *   delay        wake record time minus the send time of the frame that
 *                completed the message (each message a wake delivered;
 *                same CLOCK_MONOTONIC on both sides), p50 and p99
 *   wake-up      wake record time to the receiver running again, p50
 *   rx CPU       receiver process user+sys time (getrusage) per message
 *   machine CPU  busy time of all CPUs over the run per message (softirq
 *                and the sender included): wall time minus cpuidle
 *                residency, read on each CPU (microseconds), or /proc/stat
 *                where cpuidle is missing
 *
 * Patterns:
 *   ping    single SMALL|LAT frames 200 us apart
 *   burst   16-fragment MEDIUM messages sent back to back (MORE on all but
 *           the last, LAT on the last), 300 us between messages
 *   stream  single-frame SMALL messages, LAT on each, MORE on all but the
 *           last of each batch of 32 (the sender has more queued)
 *
 * Usage: policy_demo [--quick] [--reps N] [--json] [--iface IFACE [--ep N]]
 *        policy_demo --peer IFACE --to MAC [--ep N] [--quick] [--reps N]
 *
 * Each policy/pattern pair runs --reps times (5; 1 with --quick) and the
 * runs are pooled: one run of the stream pattern lasts milliseconds.
 *
 * With --iface the demo attaches to a real interface and only receives;
 * it prints the command to run on the peer machine (--peer), which sends
 * the same schedule, announcing each run with a CONNECT frame.  Clocks of
 * two machines differ, so delays are not shown then.
 *
 * Exit: 0 ok, 1 setup or run failure (with a message), 2 usage.
 */
#include <getopt.h>

#include "xwt_e2e.h"
#include "json.h"
#include "measure.h"
#include "stats.h"

#define DEMO_EP 1
#define MS 1000000ULL

enum { PAT_PING, PAT_BURST, PAT_STREAM, PAT_NR };

struct pattern {
	const char *name;
	const char *desc;
	__u32 msgs, msgs_quick;
	__u32 msg_frames; /* frames per message */
	struct xwe_cmd cmd;
};

static const struct pattern patterns[PAT_NR] = {
	[PAT_PING] = { "ping", "single SMALL|LAT frames, 200 us apart", 1000, 200, 1,
		       { .type = XW_PKT_SMALL, .payload_len = 64, .lat = XWE_LAT_ALL,
			 .gap_us = 200 } },
	[PAT_BURST] = { "burst", "16-fragment messages back to back, LAT on the last, "
				 "MORE on the others, 300 us apart",
			200, 50, 16,
			{ .type = XW_PKT_MEDIUM, .group = 16, .payload_len = 1024,
			  .lat = XWE_LAT_LAST, .more = XWE_MORE_GROUP, .group_gap_us = 300 } },
	[PAT_STREAM] = { "stream", "single-frame messages, LAT on each, MORE on all but the "
				   "last of each batch of 32",
			 2000, 500, 1,
			 { .type = XW_PKT_SMALL, .group = 32, .payload_len = 256,
			   .lat = XWE_LAT_ALL, .more = XWE_MORE_GROUP, .group_gap_us = 30 } },
};

struct result {
	int pat, policy;
	__u32 runs, msgs, frames;	/* summed over the repetitions */
	__u64 frames_rx, lost, bad;
	__u64 wakes, sleeps, stale;	/* records got; sleeps; records of earlier rechecks */
	__u64 xdp_wakes, timer_wakes, unarmed, deferrals;
	__u32 delay_n;			/* messages a wake delivered */
	double p50_us, p99_us;		/* < 0: not measured */
	__u32 wakeup_n;			/* wakes that found new frames */
	double up50_us, up99_us;	/* record time to the receiver running */
	double rx_cpu, sys_cpu, stat_cpu; /* us, summed; sys_cpu < 0: unknown */
	double rx_cpu_us, sys_cpu_us, stat_cpu_us; /* per message */
	double secs;
	bool done;
};

static struct xwe E;
static struct result results[PAT_NR][XW_POLICY_MAX];
static __u64 send_ts[XWE_MAX_SEND];
static __u64 rec_at[XWE_MAX_RECS]; /* consumed count when the sleep began */
static __u64 rec_woke[XWE_MAX_RECS]; /* when the receiver ran again */
#define MAX_DELAYS (1 << 17)
static double delays[MAX_DELAYS]; /* pooled over the repetitions of one configuration */
static double wakeups[MAX_DELAYS];
static bool opt_quick, opt_json;
static int opt_reps = -1;
static const char *cpu_source = "cpuidle";

/* ---- CPU accounting ---------------------------------------------------- */

static int ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 && n < 1024 ? (int)n : 1;
}

/* Idle residency of @cpu in us (sum of its cpuidle states), or -1. */
static long long cpu_idle_us(int cpu)
{
	long long sum = 0;
	char path[128];
	int found = 0;

	for (int s = 0; s < 16; s++) {
		unsigned long long t;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpuidle/state%d/time",
			 cpu, s);
		f = fopen(path, "r");
		if (!f)
			break;
		if (fscanf(f, "%llu", &t) == 1) {
			sum += (long long)t;
			found = 1;
		}
		fclose(f);
	}
	return found ? sum : -1;
}

struct cpu_snap {
	bool idle_ok;
	unsigned long long wall_ns[64];
	long long idle_us[64];
	unsigned long long stat_busy, stat_ticks_total;
};

/*
 * Busy time per CPU = wall time - idle residency.  cpuidle only adds an
 * idle period when it ends, so each CPU is read while this thread runs on
 * it (the migration ends its idle period).
 */
static void cpu_snapshot(struct cpu_snap *s)
{
	int n = ncpus();
	cpu_set_t old, one;
	struct xwu_cpu_ticks t;

	memset(s, 0, sizeof(*s));
	s->idle_ok = n <= 64 && sched_getaffinity(0, sizeof(old), &old) == 0;
	for (int c = 0; s->idle_ok && c < n; c++) {
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		if (sched_setaffinity(0, sizeof(one), &one)) {
			s->idle_ok = false;
			break;
		}
		s->wall_ns[c] = xwu_now_ns();
		s->idle_us[c] = cpu_idle_us(c);
		if (s->idle_us[c] < 0)
			s->idle_ok = false;
	}
	if (n <= 64)
		sched_setaffinity(0, sizeof(old), &old);
	if (!xwu_cpu_ticks_read(&t)) {
		s->stat_busy = t.user + t.nice + t.system + t.irq + t.softirq;
		s->stat_ticks_total = s->stat_busy + t.idle + t.iowait + t.steal;
	}
}

/* Busy us over all CPUs between two snapshots (cpuidle), -1 if unknown. */
static double cpu_busy_us(const struct cpu_snap *a, const struct cpu_snap *b)
{
	double busy = 0;

	if (!a->idle_ok || !b->idle_ok)
		return -1;
	for (int c = 0; c < ncpus(); c++) {
		double wall = (double)(b->wall_ns[c] - a->wall_ns[c]) / 1e3;
		double idle = (double)(b->idle_us[c] - a->idle_us[c]);

		busy += wall > idle ? wall - idle : 0;
	}
	return busy;
}

static double stat_busy_us(const struct cpu_snap *a, const struct cpu_snap *b)
{
	long hz = sysconf(_SC_CLK_TCK);

	return (double)(b->stat_busy - a->stat_busy) * 1e6 / (double)(hz > 0 ? hz : 100);
}

/* ---- helpers --------------------------------------------------------- */

static __u32 run_msgs(int pat)
{
	return opt_quick ? patterns[pat].msgs_quick : patterns[pat].msgs;
}

static long long wakes_sent(const struct xw_stats *s)
{
	return (long long)(s->wake_every + s->wake_marker + s->wake_stream + s->wake_frames +
			   s->wake_timeout + s->wake_watchdog);
}

static int set_defaults(void)
{
	XW_OPTS(xw_knob_info, ki);
	int err;

	for (int i = 0; i < xw_knob_count(); i++) {
		xw_knob_info(i, &ki);
		if (!ki.per_endpoint)
			continue;
		err = xw_iface__set_knob(E.iface, ki.name, E.ep, ki.def);
		if (err)
			return err;
	}
	return 0;
}

/* Nothing armed, nothing in flight, no leftover record. */
static void quiesce(void)
{
	xwe_disarm(&E);
	xwe_sleep_us(3000);
	xwe_drain(&E);
	xwe_poll_recs(&E);
	E.nrecs = 0;
}

/* ---- one run ----------------------------------------------------------- */

struct iface_ctx {
	__u32 hello;	 /* msg_id of the last CONNECT seen */
	__u64 hello_at;	 /* consumed count right after it   */
	bool seen;
};

static void on_frame(struct xwe *e, const xwe_hdr_u *h, __u32 len, void *ctx)
{
	struct iface_ctx *ic = ctx;

	if (h->type != XW_PKT_CONNECT)
		return;
	ic->hello = ntohl(h->msg_id);
	ic->seen = true;
	ic->hello_at = e->consumed; /* this frame not counted yet */
	e->rx_seq = ntohl(h->seq);  /* a new run: the peer's numbering */
}

/*
 * The blocking receiver: take what is there; else arm, recheck, sleep on
 * the ring; after a wake take the frames the record counts.  Runs until
 * @target frames were consumed, nothing arrives for @idle_ms, or (iface
 * mode) another run is announced.  Records land in E.recs, rec_at[] says
 * where each sleep began.
 */
static void receive(__u64 target, int idle_ms, struct result *r, struct iface_ctx *ic,
		    __u32 run_id)
{
	unsigned long long last_progress = xwu_now_ns();
	__u64 last_consumed = E.consumed;

	for (long i = 0; i < 100000000L && E.consumed < target && !xwe_stop; i++) {
		__u64 at, maxp = 0;
		int before, got;

		if (ic && ic->seen && ic->hello != run_id)
			break; /* the peer moved on */
		if (E.consumed != last_consumed) {
			last_consumed = E.consumed;
			last_progress = xwu_now_ns();
		} else if (xwu_now_ns() > last_progress + (unsigned long long)idle_ms * MS) {
			break;
		}
		if (xwe_drain(&E))
			continue;
		if (!xwe_arm(&E)) {
			xwe_drain_until(&E, xwe_produced(&E), xwu_now_ns() + 100 * MS);
			continue;
		}
		r->sleeps++;
		at = E.consumed;
		before = E.nrecs;
		got = xwe_wait(&E, xwu_now_ns() + 500 * MS);
		if (got <= 0) {
			xwe_disarm(&E);
			continue;
		}
		for (int j = before; j < E.nrecs; j++) {
			rec_woke[j] = xwu_now_ns();
			rec_at[j] = at;
			if (E.recs[j].produced > maxp)
				maxp = E.recs[j].produced;
		}
		xwe_drain_until(&E, maxp, xwu_now_ns() + 100 * MS);
	}
}

/* Fill r from the records and the send times (veth: same clock). */
static void compute_delays(struct result *r, __u64 base, __u32 nframes, bool have_ts)
{
	const struct pattern *p = &patterns[r->pat];
	__u64 covered = base;

	for (int j = 0; j < E.nrecs; j++) {
		const struct xw_wake_rec *w = &E.recs[j];
		__u64 from = rec_at[j] > covered ? rec_at[j] : covered;

		if (w->produced <= rec_at[j]) {
			r->stale++;
			continue;
		}
		if (r->wakeup_n < MAX_DELAYS && rec_woke[j] >= w->ts_ns)
			wakeups[r->wakeup_n++] = (double)(rec_woke[j] - w->ts_ns) / 1e3;
		if (!have_ts)
			continue;
		/* messages whose last frame lies in (from, produced] */
		for (__u64 f = from; f < w->produced && f < base + nframes; f++) {
			__u64 idx = f - base; /* 0-based frame index of produced count f+1 */

			if ((idx + 1) % p->msg_frames || idx >= XWE_MAX_SEND ||
			    r->delay_n >= MAX_DELAYS)
				continue;
			delays[r->delay_n++] = (double)((long long)w->ts_ns - (long long)send_ts[idx]) / 1e3;
		}
		if (w->produced > covered)
			covered = w->produced;
	}
}

/* Per-message figures and percentiles once every repetition ran. */
static void finish(struct result *r, bool have_ts)
{
	xwu_sort(delays, r->delay_n);
	r->p50_us = have_ts && r->delay_n ? xwu_pct_floor(delays, r->delay_n, 50) : -1;
	r->p99_us = have_ts && r->delay_n ? xwu_pct_floor(delays, r->delay_n, 99) : -1;
	xwu_sort(wakeups, r->wakeup_n);
	r->up50_us = r->wakeup_n ? xwu_pct_floor(wakeups, r->wakeup_n, 50) : -1;
	r->up99_us = r->wakeup_n ? xwu_pct_floor(wakeups, r->wakeup_n, 99) : -1;
	r->rx_cpu_us = r->msgs ? r->rx_cpu / r->msgs : -1;
	r->sys_cpu_us = r->msgs && r->sys_cpu >= 0 ? r->sys_cpu / r->msgs : -1;
	r->stat_cpu_us = r->msgs ? r->stat_cpu / r->msgs : -1;
	r->done = true;
}

static struct xwe_cmd pattern_cmd(int pat)
{
	struct xwe_cmd c = patterns[pat].cmd;

	c.n = run_msgs(pat) * patterns[pat].msg_frames;
	return c;
}

static int run_one(int pat, int pol, struct result *r, struct iface_ctx *ic, __u32 run_id)
{
	struct xwe_cmd c = pattern_cmd(pat);
	struct cpu_snap c0, c1;
	XW_OPTS(xw_stats, s0);
	XW_OPTS(xw_stats, s1);
	double ru0, ru1;
	unsigned long long t0, t1;
	__u64 base;
	int err, n = 0;

	r->pat = pat;
	r->policy = pol;
	err = xw_iface__set_knob(E.iface, "policy", E.ep, (__u32)pol);
	if (err) {
		fprintf(stderr, "policy_demo: cannot set the policy: %s\n", xw_strerror(err));
		return -1;
	}
	quiesce();
	if (ic) {
		/* wait for the peer's CONNECT announcing this run */
		unsigned long long deadline = xwu_now_ns() + (run_id == 1 ? 3600000ULL : 60000ULL) * MS;

		while (!xwe_stop && !(ic->seen && ic->hello == run_id) && xwu_now_ns() < deadline) {
			if (xwe_drain(&E))
				continue;
			if (xwe_arm(&E)) {
				xwe_wait(&E, xwu_now_ns() + 200 * MS);
				xwe_disarm(&E);
			}
			xwe_drain_until(&E, xwe_produced(&E), xwu_now_ns() + 100 * MS);
		}
		if (!(ic->seen && ic->hello == run_id)) {
			fprintf(stderr, "policy_demo: no CONNECT for run %u from the peer\n", run_id);
			return -1;
		}
		E.nrecs = 0;
		base = ic->hello_at + 1;
	} else {
		base = E.consumed;
	}
	E.rx_lost = 0;
	E.bad_frames = 0;
	s0 = xwe_stats(&E, (int)E.ep);
	cpu_snapshot(&c0);
	ru0 = (double)xwu_proc_cpu_us();
	t0 = xwu_now_ns();
	if (!ic) {
		err = xwe_send(&E, &c, true);
		if (err) {
			if (!xwe_stop)
				fprintf(stderr, "policy_demo: the sender is gone\n");
			return -1;
		}
	}
	E.nrecs = 0;
	receive(base + c.n, ic ? 3000 : 2000, r, ic, run_id);
	t1 = xwu_now_ns();
	ru1 = (double)xwu_proc_cpu_us();
	cpu_snapshot(&c1);
	if (!ic) {
		n = xwe_send_wait(&E, send_ts, XWE_MAX_SEND, 30000);
		if (n < 0) {
			if (!xwe_stop)
				fprintf(stderr, "policy_demo: sender failed: %s\n", strerror(-n));
			return -1;
		}
	}
	s1 = xwe_stats(&E, (int)E.ep);
	r->runs++;
	r->msgs += run_msgs(pat);
	r->frames += c.n;
	r->frames_rx += E.consumed - base;
	r->lost += c.n > E.consumed - base ? c.n - (E.consumed - base) : 0;
	r->bad += E.bad_frames;
	r->wakes += (__u64)E.nrecs;
	r->xdp_wakes += (__u64)(wakes_sent(&s1) - wakes_sent(&s0));
	r->timer_wakes += (s1.wake_timeout - s0.wake_timeout) + (s1.wake_frames - s0.wake_frames);
	r->unarmed += s1.wake_unarmed - s0.wake_unarmed;
	r->deferrals += s1.deferrals - s0.deferrals;
	r->secs += (double)(t1 - t0) / 1e9;
	r->rx_cpu += ru1 - ru0;
	if (r->sys_cpu >= 0)
		r->sys_cpu = cpu_busy_us(&c0, &c1) < 0 ? -1 : r->sys_cpu + cpu_busy_us(&c0, &c1);
	r->stat_cpu += stat_busy_us(&c0, &c1);
	compute_delays(r, base, c.n, !ic && n == (int)c.n);
	return 0;
}

/* ---- output ------------------------------------------------------------ */

static void fmt_num(char *buf, size_t len, double v, int prec)
{
	if (v < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", prec, v);
}

static void print_table(void)
{
	printf("\n%-7s %-9s %6s %6s %6s %9s %8s %8s %8s %9s %10s\n", "pattern", "policy", "msgs",
	       "frames", "wakes", "wakes/msg", "delay", "p99", "wake-up", "rx us", "machine");
	printf("%-7s %-9s %6s %6s %6s %9s %8s %8s %8s %9s %10s\n", "", "", "", "", "", "",
	       "p50 us", "us", "p50 us", "per msg", "us per msg");
	for (int pat = 0; pat < PAT_NR; pat++) {
		for (int pol = 0; pol < XW_POLICY_MAX; pol++) {
			const struct result *r = &results[pat][pol];
			char a[32], b[32], c[32], d[32], u[32];

			if (!r->done)
				continue;
			fmt_num(a, sizeof(a), r->p50_us, 1);
			fmt_num(b, sizeof(b), r->p99_us, 1);
			fmt_num(u, sizeof(u), r->up50_us, 1);
			fmt_num(c, sizeof(c), r->rx_cpu_us, 2);
			fmt_num(d, sizeof(d), r->sys_cpu_us, 2);
			printf("%-7s %-9s %6u %6u %6llu %9.3f %8s %8s %8s %9s %10s%s\n",
			       patterns[pat].name, xw_policy_name((unsigned int)pol), r->msgs,
			       r->frames, (unsigned long long)r->wakes,
			       (double)r->wakes / r->msgs, a, b, u, c, d,
			       r->lost || r->bad ? "  (frames lost or bad!)" : "");
		}
	}
	printf("delay: XDP's wake decision minus the send time of the frame that completed the\n"
	       "message; wake-up: from that decision until the receiver runs again.\n");
}

static double wpm(int pat, int pol)
{
	const struct result *r = &results[pat][pol];

	return r->done && r->msgs ? (double)r->wakes / r->msgs : -1;
}

/* Names of the policies in @set, joined with commas and "and". */
static void join(char *out, size_t len, const int *set, int n)
{
	size_t o = 0;

	out[0] = '\0';
	for (int i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%s",
				      i == 0 ? "" : (i == n - 1 ? " and " : ", "),
				      xw_policy_name((unsigned int)set[i]));
}

/* What the table shows, computed from the numbers. */
static int summary(char lines[4][512])
{
	int nl = 0, fast[XW_POLICY_MAX], nfast = 0, slow[XW_POLICY_MAX], nslow = 0, best = -1;
	double coal = XW_DEF_COALESCE_USECS, lo = 1e18, hi = -1, rhi = -1;
	char a[256], b[256];
	size_t o;

	/* ping: who wakes at once, who waits for the timer */
	for (int pol = 0; pol < XW_POLICY_MAX; pol++) {
		const struct result *r = &results[PAT_PING][pol];

		if (!r->done || r->p50_us < 0)
			continue;
		if (r->p50_us < coal / 2) {
			fast[nfast++] = pol;
			lo = r->p50_us < lo ? r->p50_us : lo;
			hi = r->p50_us > hi ? r->p50_us : hi;
		} else {
			slow[nslow++] = pol;
		}
	}
	if (nfast || nslow) {
		join(a, sizeof(a), fast, nfast);
		o = (size_t)snprintf(lines[nl], sizeof(lines[nl]), "ping: ");
		if (nfast)
		{
			char range[64];

			if ((int)(lo * 10 + 0.5) == (int)(hi * 10 + 0.5))
				snprintf(range, sizeof(range), "%.1f", lo);
			else
				snprintf(range, sizeof(range), "%.1f-%.1f", lo, hi);
			o += (size_t)snprintf(lines[nl] + o, sizeof(lines[nl]) - o,
					      "%s wake%s at once (p50 %s us)", a,
					      nfast == 1 ? "s" : "", range);
		}
		for (int i = 0; i < nslow; i++)
			o += (size_t)snprintf(lines[nl] + o, sizeof(lines[nl]) - o,
					      "%s%s waits for coalesce_usecs=%.0f (p50 %.0f us)",
					      nfast || i ? "; " : "", xw_policy_name((unsigned int)slow[i]),
					      coal, results[PAT_PING][slow[i]].p50_us);
		snprintf(lines[nl] + o, sizeof(lines[nl]) - o, ".");
		nl++;
	}

	/* burst: wakes per message, and how many of them the timer sent
	 * before the message was complete */
	o = (size_t)snprintf(lines[nl], sizeof(lines[nl]), "burst: wakes per %u-frame message:",
			     patterns[PAT_BURST].msg_frames);
	nfast = 0;
	for (int pol = 0; pol < XW_POLICY_MAX; pol++) {
		const struct result *r = &results[PAT_BURST][pol];
		double w = wpm(PAT_BURST, pol), tw;

		if (w < 0)
			continue;
		tw = (double)r->timer_wakes / r->msgs;
		o += (size_t)snprintf(lines[nl] + o, sizeof(lines[nl]) - o, "%s %s %.2f",
				      nfast++ ? "," : "", xw_policy_name((unsigned int)pol), w);
		if (pol != XW_POLICY_TIMEOUT && tw >= 0.05)
			o += (size_t)snprintf(lines[nl] + o, sizeof(lines[nl]) - o,
					      " (%.2f by the coalescing timer)", tw);
		if (w > rhi) {
			rhi = w;
			best = pol;
		}
	}
	if (nfast) {
		int once[XW_POLICY_MAX], nonce = 0;

		for (int pol = 0; pol < XW_POLICY_MAX; pol++)
			if (wpm(PAT_BURST, pol) >= 0 && wpm(PAT_BURST, pol) <= 1.25)
				once[nonce++] = pol;
		join(a, sizeof(a), once, nonce);
		if (nonce)
			o += (size_t)snprintf(lines[nl] + o, sizeof(lines[nl]) - o,
					      "; %s wake%s about once per message", a,
					      nonce == 1 ? "s" : "");
		if (best >= 0 && rhi > 2)
			o += (size_t)snprintf(lines[nl] + o, sizeof(lines[nl]) - o,
					      "; %s wakes for the frames of a message one by one",
					      xw_policy_name((unsigned int)best));
		snprintf(lines[nl] + o, sizeof(lines[nl]) - o, ".");
		nl++;
	}
	best = -1;

	/* stream: who wakes per message, who per batch, and what it costs */
	nfast = nslow = 0;
	for (int pol = 0; pol < XW_POLICY_MAX; pol++) {
		double w = wpm(PAT_STREAM, pol);

		if (w < 0)
			continue;
		if (w >= 0.5)
			slow[nslow++] = pol; /* about one wake per message */
		else
			fast[nfast++] = pol;
		if (w < 0.5 && (best < 0 || w < wpm(PAT_STREAM, best)))
			best = pol;
	}
	if (nfast || nslow) {
		double batch = patterns[PAT_STREAM].cmd.group;

		o = (size_t)snprintf(lines[nl], sizeof(lines[nl]), "stream: ");
		for (int i = 0; i < nslow; i++)
			o += (size_t)snprintf(lines[nl] + o, sizeof(lines[nl]) - o, "%s%s %.2f",
					      i == 0 ? "" : (i == nslow - 1 ? " and " : ", "),
					      xw_policy_name((unsigned int)slow[i]),
					      wpm(PAT_STREAM, slow[i]));
		if (nslow)
			o += (size_t)snprintf(lines[nl] + o, sizeof(lines[nl]) - o,
					      " wakes per message (about one per LAT frame)%s",
					      nfast ? "; " : "");
		for (int i = 0; i < nfast; i++)
			o += (size_t)snprintf(lines[nl] + o, sizeof(lines[nl]) - o, "%s%s %.1f",
					      i == 0 ? "" : (i == nfast - 1 ? " and " : ", "),
					      xw_policy_name((unsigned int)fast[i]),
					      wpm(PAT_STREAM, fast[i]) * batch);
		if (nfast)
			o += (size_t)snprintf(lines[nl] + o, sizeof(lines[nl]) - o,
					      " wakes per batch of %.0f messages", batch);
		/* the price of fewer wakes: delay against marker */
		if (nfast) {
			int pick = results[PAT_STREAM][XW_POLICY_STREAM].done &&
						   wpm(PAT_STREAM, XW_POLICY_STREAM) < 0.5
					   ? XW_POLICY_STREAM
					   : best;
			int ref = results[PAT_STREAM][XW_POLICY_MARKER].done ? XW_POLICY_MARKER
									     : XW_POLICY_EVERY;

			if (pick != ref && results[PAT_STREAM][ref].done &&
			    results[PAT_STREAM][pick].p50_us >= 0 && results[PAT_STREAM][ref].p50_us >= 0 &&
			    wpm(PAT_STREAM, pick) < wpm(PAT_STREAM, ref))
				o += (size_t)snprintf(lines[nl] + o, sizeof(lines[nl]) - o,
						      "; fewer wakes cost delay: p50 %.1f us (%s) "
						      "against %.1f us (%s)",
						      results[PAT_STREAM][pick].p50_us,
						      xw_policy_name((unsigned int)pick),
						      results[PAT_STREAM][ref].p50_us,
						      xw_policy_name((unsigned int)ref));
		}
		snprintf(lines[nl] + o, sizeof(lines[nl]) - o, ".");
		nl++;
	}
	{
		/* CPU per message on the stream: least vs most */
		int cmin = -1, cmax = -1;

		for (int pol = 0; pol < XW_POLICY_MAX; pol++) {
			double v = results[PAT_STREAM][pol].sys_cpu_us;

			if (!results[PAT_STREAM][pol].done || v < 0)
				continue;
			if (cmin < 0 || v < results[PAT_STREAM][cmin].sys_cpu_us)
				cmin = pol;
			if (cmax < 0 || v > results[PAT_STREAM][cmax].sys_cpu_us)
				cmax = pol;
		}
		if (cmin >= 0 && cmax >= 0 && cmin != cmax) {
			snprintf(b, sizeof(b), "%s", xw_policy_name((unsigned int)cmax));
			snprintf(lines[nl++], sizeof(lines[0]),
				 "CPU on the stream (whole machine, per message): %s %.2f us, %s %.2f us "
				 "(%.0f%% less).",
				 xw_policy_name((unsigned int)cmin), results[PAT_STREAM][cmin].sys_cpu_us,
				 b, results[PAT_STREAM][cmax].sys_cpu_us,
				 100.0 * (1 - results[PAT_STREAM][cmin].sys_cpu_us /
						  results[PAT_STREAM][cmax].sys_cpu_us));
		}
	}
	return nl;
}

static void print_json(char lines[4][512], int nl)
{
	json_obj_begin();
	json_kv_str("interface", E.rx_if);
	json_kv_bool("veth", E.veth);
	json_kv_u64("endpoint", E.ep);
	json_kv_bool("quick", opt_quick);
	json_kv_u64("coalesce_usecs", XW_DEF_COALESCE_USECS);
	json_kv_str("cpu_source", cpu_source);
	json_key("runs");
	json_arr_begin();
	for (int pat = 0; pat < PAT_NR; pat++) {
		for (int pol = 0; pol < XW_POLICY_MAX; pol++) {
			const struct result *r = &results[pat][pol];

			if (!r->done)
				continue;
			json_obj_begin();
			json_kv_str("pattern", patterns[pat].name);
			json_kv_str("policy", xw_policy_name((unsigned int)pol));
			json_kv_u64("msgs", r->msgs);
			json_kv_u64("frames", r->frames);
			json_kv_u64("frames_received", r->frames_rx);
			json_kv_u64("lost", r->lost);
			json_kv_u64("bad", r->bad);
			json_kv_u64("wakes", r->wakes);
			json_kv_double("wakes_per_msg", (double)r->wakes / r->msgs);
			json_kv_u64("sleeps", r->sleeps);
			json_kv_u64("stale_wakes", r->stale);
			json_kv_u64("xdp_wakes", r->xdp_wakes);
			json_kv_u64("timer_wakes", r->timer_wakes);
			json_kv_u64("wake_unarmed", r->unarmed);
			json_kv_u64("deferrals", r->deferrals);
			json_kv_u64("delay_samples", r->delay_n);
			json_kv_double("delay_p50_us", r->p50_us);
			json_kv_double("delay_p99_us", r->p99_us);
			json_kv_double("wakeup_p50_us", r->up50_us);
			json_kv_double("wakeup_p99_us", r->up99_us);
			json_kv_double("rx_cpu_us_per_msg", r->rx_cpu_us);
			json_kv_double("machine_cpu_us_per_msg", r->sys_cpu_us);
			json_kv_double("proc_stat_cpu_us_per_msg", r->stat_cpu_us);
			json_kv_double("seconds", r->secs);
			json_obj_end();
		}
	}
	json_arr_end();
	json_key("summary");
	json_arr_begin();
	for (int i = 0; i < nl; i++)
		json_str(lines[i]);
	json_arr_end();
	json_obj_end();
}

/* ---- the peer (--peer): sends the schedule to a --iface receiver -------- */

static int run_peer(const char *ifname, const __u8 dst[6], __u32 ep, int reps)
{
	int ifindex, fd, total = PAT_NR * XW_POLICY_MAX * reps, k = 0, n = 0;
	__u32 seq = 1;
	__u8 mac[6];

	fd = xwe_tx_open(ifname, &ifindex, mac);
	if (fd < 0) {
		fprintf(stderr, "policy_demo: cannot send on %s: %s\n", ifname, strerror(-fd));
		return 1;
	}
	xwe_signals(true);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (int pat = 0; pat < PAT_NR && !xwe_stop; pat++) {
		for (int pol = 0; pol < XW_POLICY_MAX * reps && !xwe_stop; pol++) {
			struct xwe_cmd hello = { .op = XWE_OP_SEND, .n = 1, .type = XW_PKT_CONNECT,
						 .dst_ep = (__u16)ep, .msg_id0 = (__u32)k + 1,
						 .seq0 = seq };
			struct xwe_cmd c = pattern_cmd(pat);

			k++;
			fprintf(stderr, "[%d/%d] %s / %s: announcing, then %u frames\n", k, total,
				xw_policy_name((unsigned int)(pol / reps)), patterns[pat].name, c.n);
			memcpy(hello.dst_mac, dst, 6);
			n = xwe_tx_run(fd, ifindex, mac, &hello, NULL, 0);
			if (n < 0)
				goto out;
			seq++;
			xwe_sleep_us(50000); /* the receiver notices the CONNECT */
			c.op = XWE_OP_SEND;
			c.dst_ep = (__u16)ep;
			c.seq0 = seq;
			c.seed = seq;
			memcpy(c.dst_mac, dst, 6);
			n = xwe_tx_run(fd, ifindex, mac, &c, NULL, 0);
			if (n < 0)
				goto out;
			seq += c.n;
			xwe_sleep_us(500000);
		}
	}
out:
	close(fd);
	if (n < 0 && !xwe_stop) {
		fprintf(stderr, "policy_demo: send failed: %s\n", strerror(-n));
		return 1;
	}
	return xwe_stop ? 130 : 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: policy_demo [--quick] [--reps N] [--json] [--iface IFACE [--ep N]]\n"
		"       policy_demo --peer IFACE --to MAC [--ep N] [--quick] [--reps N]\n"
		"Runs every wake policy (every, timeout, marker, stream, adaptive) on three\n"
		"traffic patterns and prints one comparison table.\n"
		"  (default)     two network namespaces joined by veth, created and removed here\n"
		"  --iface IFACE attach to a real interface and only receive; prints the\n"
		"                command for the peer machine\n"
		"  --peer IFACE  the sending side for a receiver started with --iface\n"
		"  --to MAC      the receiver interface's MAC (with --peer)\n"
		"  --ep N        endpoint id (default %d)\n"
		"  --quick       fewer messages, one run per policy and pattern\n"
		"  --reps N      runs per policy and pattern, pooled (default 5, --quick 1)\n"
		"  --json        print JSON instead of the table\n",
		DEMO_EP);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "quick", no_argument, NULL, 'q' }, { "json", no_argument, NULL, 'j' },
		{ "iface", required_argument, NULL, 'i' }, { "peer", required_argument, NULL, 'p' },
		{ "to", required_argument, NULL, 't' }, { "ep", required_argument, NULL, 'e' },
		{ "reps", required_argument, NULL, 'r' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *iface = NULL, *peer = NULL, *to = NULL;
	struct xwe_opts o = { .ep = DEMO_EP, .graceful_signals = true };
	struct iface_ctx ic = {};
	char lines[4][512], mac[18];
	int opt, err, nl, k = 0, total = PAT_NR * XW_POLICY_MAX, failed = 0, reps;
	__u32 run_id = 0;
	unsigned long long t0 = xwu_now_ns();
	__u8 dst[6];

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt_long(argc, argv, "qji:p:t:e:r:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'q': opt_quick = true; break;
		case 'j': opt_json = true; break;
		case 'i': iface = optarg; break;
		case 'p': peer = optarg; break;
		case 't': to = optarg; break;
		case 'e': o.ep = (__u32)strtoul(optarg, NULL, 0); break;
		case 'r': opt_reps = atoi(optarg); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc || (peer && (!to || iface)) || (to && !peer) || o.ep >= XW_MAX_ENDPOINTS ||
	    (opt_reps != -1 && (opt_reps < 1 || opt_reps > 100))) {
		usage(stderr);
		return 2;
	}
	reps = opt_reps > 0 ? opt_reps : (opt_quick ? 1 : 5);
	if (geteuid() != 0) {
		fprintf(stderr, "policy_demo: needs root (CAP_NET_ADMIN and CAP_BPF, and "
				"CAP_SYS_ADMIN for namespaces): run it as root, e.g. sudo make demo\n");
		return 1;
	}
	if (peer) {
		if (xwe_parse_mac(to, dst)) {
			fprintf(stderr, "policy_demo: bad MAC address '%s'\n", to);
			return 2;
		}
		return run_peer(peer, dst, o.ep, reps);
	}

	o.iface = iface;
	err = xwe_setup(&E, &o);
	if (err) {
		fprintf(stderr, "policy_demo: setup failed: %s\n", E.err);
		if (err == XWE_SKIP)
			fprintf(stderr, "policy_demo: this machine lacks a kernel feature or "
					"privilege the demo needs (see above)\n");
		xwe_teardown(&E, E.attached);
		return 1;
	}
	err = set_defaults();
	if (err) {
		fprintf(stderr, "policy_demo: cannot set the knobs: %s\n", xw_strerror(err));
		xwe_teardown(&E, E.attached);
		return 1;
	}
	{
		struct cpu_snap s;

		cpu_snapshot(&s);
		if (!s.idle_ok)
			cpu_source = "/proc/stat";
	}
	fprintf(stderr,
		"policy_demo: receiver %s (%s XDP, %s), endpoint %u, AF_XDP on queue 0; %s\n",
		E.rx_if, xw_iface__mode(E.iface) == XW_MODE_NATIVE ? "native" : "generic",
		xw_iface__multiprog(E.iface) ? "libxdp dispatcher" : "single program", E.ep,
		E.veth ? "sender in its own network namespace across a veth pair"
		       : "frames come from the peer machine");
	if (!E.veth) {
		xwe_fmt_mac(E.rx_mac, mac);
		E.lenient = true;
		E.on_frame = on_frame;
		E.on_frame_ctx = &ic;
		fprintf(stderr,
			"\nReceiving on %s (MAC %s). The peer's frames must arrive on RX queue 0,\n"
			"e.g. on this machine: ethtool -L %s combined 1   (or an ntuple rule to queue 0)\n"
			"On the peer machine, from the same build, as root:\n"
			"    policy_demo --peer <its interface> --to %s --ep %u --reps %d%s\n"
			"Waiting for the peer (Ctrl-C stops)...\n\n",
			E.rx_if, mac, E.rx_if, mac, E.ep, reps, opt_quick ? " --quick" : "");
	}

	for (int pat = 0; pat < PAT_NR && !xwe_stop && !failed; pat++) {
		for (int pol = 0; pol < XW_POLICY_MAX && !xwe_stop && !failed; pol++) {
			struct result *r = &results[pat][pol];

			k++;
			fprintf(stderr, "[%d/%d] %s / %s ...", k, total, xw_policy_name((unsigned int)pol),
				patterns[pat].name);
			memset(r, 0, sizeof(*r));
			for (int rep = 0; rep < reps && !xwe_stop && !failed; rep++) {
				run_id++;
				if (run_one(pat, pol, r, E.veth ? NULL : &ic, run_id)) {
					if (!xwe_stop)
						fprintf(stderr, " failed\n");
					failed = 1;
				}
			}
			if (failed || xwe_stop)
				break;
			finish(r, E.veth);
			fprintf(stderr, " %u msgs, %llu wakes, %.2f s%s\n", r->msgs,
				(unsigned long long)r->wakes, r->secs,
				r->lost ? " (frames lost)" : "");
			if (r->bad) {
				fprintf(stderr, "policy_demo: bad frame: %s\n", E.bad_msg);
				failed = 1;
			}
		}
	}
	if (xwe_stop) {
		fprintf(stderr, "\npolicy_demo: interrupted\n");
		/* veth: the sender (killed by the signal) took the veth pair and
		 * the program with its namespace; the pins go at exit */
		xwe_teardown(&E, E.attached && !E.veth);
		return 130;
	}
	nl = summary(lines);
	if (opt_json) {
		print_json(lines, nl);
	} else {
		printf("\nxdpwake policies on %s%s: %s patterns, coalesce_usecs=%u, "
		       "CPU from %s\n",
		       E.veth ? "a veth pair, " : "", E.rx_if, opt_quick ? "quick" : "full",
		       XW_DEF_COALESCE_USECS, cpu_source);
		for (int pat = 0; pat < PAT_NR; pat++)
			printf("  %-7s %u msgs x %d run%s: %s\n", patterns[pat].name, run_msgs(pat),
			       reps, reps == 1 ? "" : "s", patterns[pat].desc);
		print_table();
		printf("\n");
		for (int i = 0; i < nl; i++)
			printf("%s\n", lines[i]);
	}
	fprintf(stderr, "policy_demo: %.1f s\n", (double)(xwu_now_ns() - t0) / 1e9);
	err = xwe_teardown(&E, E.attached);
	if (err)
		fprintf(stderr, "policy_demo: detach: %s\n", xw_strerror(err));
	return failed ? 1 : 0;
}
