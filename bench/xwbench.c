// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xwbench - the benchmark driver for the experiments of issue 7 that the
 * `xdpwake pingpong/stream` tool cannot run (bench/run.sh starts it).
 *
 *   xwbench pp    --role a|b IFACE [options]   ping-pong with framing, mark
 *                                              and compute options
 *   xwbench notif --role a|b IFACE [options]   notification delay of a
 *                                              compute-bound receiver
 *   xwbench idle  IFACE [options]              CPU of a receiver waiting
 *                                              with no traffic
 *
 * Two processes, one per side (e.g. in two network namespaces joined by a
 * veth pair, or on two hosts): role b opens its endpoint, writes its address
 * to --addr-file and waits for a HELLO; role a reads the address from
 * --peer-file (waiting up to --connect-timeout), says HELLO and runs the
 * test.  Both sides must get the same test options.  Each side prints one
 * JSON object on stdout when done (role a: the timings; both: the XDP
 * program's counters of its endpoint, library wait statistics, process and
 * whole-machine CPU).
 *
 * pp: per iteration (after --warmup unmeasured ones), role a optionally
 * synchronises with a 0-byte barrier ping-pong (--barrier, implied by
 * --x-us/--y-us), then times: compute x; isend --size bytes; compute y;
 * receive the --reply bytes; complete the send.  Role b: compute y; receive;
 * compute x; send the reply.  This is the push-pull paper's early/late
 * receiver routine (Fig. 5); with x = y = 0 it is a plain ping-pong.  The
 * compute loops call xw_check() every --check-us (the library's gated poll).
 * Framing and marks come from the endpoint options: --eager-max, --btp1,
 * --btp2 (bytes, or N"f" for N frames), --marks (all, none, or all minus a
 * comma list: -rndv,-pull,-pull_reply,-notify,-small,-medium), --mark-shift.
 *
 * notif: role a sends --msgs messages of --size bytes at exponentially
 * distributed gaps (mean --gap-us), each carrying its CLOCK_MONOTONIC send
 * time.  Role b computes: chunks of log-uniform length between
 * --chunk-min-us and --chunk-max-us, a "send point" (one progress pass)
 * after each chunk; inside the chunks it reads the receive buffers of its
 * posted receives (a load, not a library call) and records, per message,
 * the time from the send stamp until it sees the message in its buffer.
 * --mode: sends (progress only at send points), check (plus xw_check()
 * every --check-us inside the chunks), watchdog (plus the library's
 * polling watchdog of --watchdog-us), notify (plus the library's notify
 * thread, woken by the XDP program).  --samples FILE writes every delay.
 *
 * idle: posts a receive nothing will match and waits --seconds with
 * --wait; reports the process's CPU time (all threads) and the machine's.
 *
 * Every run is bounded by --limit seconds (SIGALRM ends it with status 1).
 * Exit: 0 ok, 1 runtime error, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h> /* isnan, isinf, NAN: macros, no libm */
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include "xdpwake.h"

#define TAG_DATA 1ULL
#define TAG_REPLY 2ULL
#define TAG_BAR 3ULL
#define TAG_HELLO 4ULL
#define TAG_READY 5ULL
#define TAG_ALL (~0ULL)
#define NOTIF_SLOTS 256
#define NOTIF_MAGIC 0x9e3779b97f4a7c15ULL

enum test { T_PP, T_NOTIF, T_IDLE };
enum mode { M_SENDS, M_CHECK, M_WATCHDOG, M_NOTIFY };

static const char *mode_names[] = { "sends", "check", "watchdog", "notify" };

static struct {
	enum test test;
	char role;
	const char *ifname, *addr_file, *peer_file, *peer, *samples;
	int ep, limit, connect_timeout, timeout_ms;
	int policy;	/* -1: leave */
	int wait;
	unsigned int spin_us;
	long iters, warmup;
	unsigned long size, reply;
	bool reply_set, barrier;
	unsigned int x_us, y_us, check_us;
	unsigned int eager_max, btp1, btp2;
	bool eager_f, btp1_f, btp2_f; /* values in frames */
	const char *marks_text;
	unsigned int marks;
	bool marks_set;
	unsigned int mark_shift;
	/* notif */
	long msgs;
	unsigned int gap_us, chunk_min_us, chunk_max_us, watchdog_us;
	enum mode mode;
	unsigned long seed;
	/* idle */
	double seconds;
} o = {
	.ep = 2, .limit = 300, .connect_timeout = 10, .timeout_ms = 10000, .policy = -1,
	.wait = XW_WAIT_DEFAULT, .iters = 1000, .warmup = -1, .size = 64, .check_us = 10,
	.msgs = 2000, .gap_us = 500, .chunk_min_us = 20, .chunk_max_us = 20000,
	.watchdog_us = 50, .mode = M_SENDS, .seed = 1, .seconds = 5,
};

static struct xw_endpoint *ep;
static struct xw_iface *ifc;
static struct xw_addr peer;
static struct xw_check chk;
static bool chk_on;
static __u32 frag_payload;

/* ---- small helpers ---------------------------------------------------- */

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static void __attribute__((format(printf, 1, 2), noreturn)) die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xwbench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void __attribute__((format(printf, 1, 2), noreturn)) usage_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xwbench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (xwbench --help)\n");
	exit(2);
}

static void on_alarm(int sig)
{
	static const char msg[] = "xwbench: time limit reached, giving up\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to do */
	}
	_exit(1);
}

static __u64 rng_state = 88172645463325252ULL;

static __u64 rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static double rng_unit(void) /* (0, 1] */
{
	return ((double)(rng() >> 11) + 1.0) / 9007199254740992.0;
}

/* Whole-machine busy time (user nice system irq softirq steal) in us. */
static __u64 machine_busy_us(void)
{
	unsigned long long v[8] = { 0 };
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "re");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 8 || hz <= 0)
		return 0;
	return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * 1000000ULL / (__u64)hz;
}

static __u64 proc_cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (__u64)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000ULL +
	       (__u64)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* log() and exp() without libm (the build links no -lm): enough
 * precision for random gaps and chunk lengths. */
static double ln(double x)
{
	double z, z2, term, sum = 0;
	int e = 0;

	if (!(x > 0))
		return -1e300;
	while (x >= 2) {
		x /= 2;
		e++;
	}
	while (x < 1) {
		x *= 2;
		e--;
	}
	z = (x - 1) / (x + 1);
	z2 = z * z;
	term = z;
	for (int k = 1; k < 60; k += 2) {
		sum += term / k;
		term *= z2;
	}
	return 2 * sum + e * 0.69314718055994530942;
}

static double expo(double y)
{
	double r, term = 1, sum = 1;
	int k = (int)(y / 0.69314718055994530942);

	r = y - k * 0.69314718055994530942;
	for (int i = 1; i < 30; i++) {
		term *= r / i;
		sum += term;
	}
	while (k > 0) {
		sum *= 2;
		k--;
	}
	while (k < 0) {
		sum /= 2;
		k++;
	}
	return sum;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted @v. */
static double pct(const double *v, long n, double p)
{
	long k;

	if (n <= 0)
		return NAN;
	k = (long)(p * (double)n / 100.0);
	if ((double)k < p * (double)n / 100.0)
		k++;
	k--;
	if (k < 0)
		k = 0;
	if (k >= n)
		k = n - 1;
	return v[k];
}

static void json_num(const char *key, double v, bool comma)
{
	if (isnan(v) || isinf(v))
		printf("\"%s\": null%s", key, comma ? ", " : "");
	else
		printf("\"%s\": %.6g%s", key, v, comma ? ", " : "");
}

static void json_stats(const char *key, double *v, long n)
{
	double sum = 0;

	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	for (long i = 0; i < n; i++)
		sum += v[i];
	printf("\"%s\": {", key);
	json_num("n", (double)n, true);
	json_num("min", n ? v[0] : NAN, true);
	json_num("mean", n ? sum / (double)n : NAN, true);
	json_num("p50", pct(v, n, 50), true);
	json_num("p90", pct(v, n, 90), true);
	json_num("p99", pct(v, n, 99), true);
	json_num("p999", pct(v, n, 99.9), true);
	json_num("max", n ? v[n - 1] : NAN, false);
	printf("}");
}

/* ---- counters ------------------------------------------------------------ */

struct snap {
	struct xw_stats xs;
	struct xw_wait_stats ws;
	struct xw_endpoint_stats es;
	__u64 busy_us, proc_us, t;
};

static void snap_take(struct snap *s)
{
	memset(s, 0, sizeof(*s));
	s->ws.sz = sizeof(s->ws);
	s->es.sz = sizeof(s->es);
	if (ifc)
		xw_iface__stats(ifc, o.ep, &s->xs);
	if (ep) {
		xw_endpoint__wait_stats(ep, &s->ws);
		xw_endpoint__stats(ep, &s->es);
	}
	s->busy_us = machine_busy_us();
	s->proc_us = proc_cpu_us();
	s->t = now_ns();
}

static __u64 xs_wakes(const struct xw_stats *s)
{
	return s->wake_every + s->wake_marker + s->wake_stream + s->wake_frames +
	       s->wake_timeout + s->wake_watchdog;
}

/* The counters of one side between two snapshots, as JSON members. */
static void json_side(const struct snap *a, const struct snap *b)
{
#define D(f) ((double)(b->f - a->f))
	printf("\"wall_s\": %.6f, ", (double)(b->t - a->t) / 1e9);
	json_num("machine_busy_us", D(busy_us), true);
	json_num("proc_cpu_us", D(proc_us), true);
	printf("\"xdp\": {");
	json_num("wakes", (double)(xs_wakes(&b->xs) - xs_wakes(&a->xs)), true);
	json_num("wake_every", D(xs.wake_every), true);
	json_num("wake_marker", D(xs.wake_marker), true);
	json_num("wake_stream", D(xs.wake_stream), true);
	json_num("wake_frames", D(xs.wake_frames), true);
	json_num("wake_timeout", D(xs.wake_timeout), true);
	json_num("wake_watchdog", D(xs.wake_watchdog), true);
	json_num("wake_unarmed", D(xs.wake_unarmed), true);
	json_num("frames_redirected", D(xs.frames_redirected), true);
	json_num("lat_frames", D(xs.lat_frames), true);
	json_num("more_frames", D(xs.more_frames), true);
	json_num("deferrals", D(xs.deferrals), true);
	json_num("timer_fires", D(xs.timer_fires), false);
	printf("}, \"lib\": {");
	json_num("blocks", D(ws.blocks), true);
	json_num("wakes", D(ws.wakes), true);
	json_num("spurious_wakes", D(ws.spurious_wakes), true);
	json_num("watchdog_runs", D(ws.watchdog_runs), true);
	json_num("watchdog_frames", D(ws.watchdog_frames), true);
	json_num("notify_runs", D(ws.notify_runs), true);
	json_num("tx_frames", D(es.tx_frames), true);
	json_num("rx_frames", D(es.rx_frames), true);
	json_num("retransmits", D(es.retransmits), false);
	printf("}");
#undef D
}

/* ---- option parsing --------------------------------------------------------- */

static unsigned long parse_size(const char *s, bool *frames)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s)
		usage_err("bad size '%s'", s);
	if (frames)
		*frames = false;
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'f':
		if (!frames)
			usage_err("'%s': frames only for --eager-max/--btp1/--btp2", s);
		*frames = true;
		end++;
		break;
	default: break;
	}
	if (*end)
		usage_err("bad size '%s'", s);
	return v;
}

static long parse_long(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max)
		usage_err("bad number '%s' (%ld..%ld)", s, min, max);
	return v;
}

static unsigned int parse_marks(const char *s)
{
	static const struct { const char *name; unsigned int bit; } kinds[] = {
		{ "small", XW_MARK_SMALL }, { "medium", XW_MARK_MEDIUM },
		{ "rndv", XW_MARK_RNDV }, { "pull", XW_MARK_PULL },
		{ "pull_reply", XW_MARK_PULL_REPLY }, { "notify", XW_MARK_NOTIFY },
	};
	char buf[256], *tok, *save = NULL;
	unsigned int m = XW_MARK_ALL;

	if (!strcmp(s, "all"))
		return XW_MARK_ALL;
	if (!strcmp(s, "none"))
		return 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		if (*tok != '-')
			usage_err("--marks: all, none or a list of -KIND ('%s')", tok);
		for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (!strcmp(tok + 1, kinds[i].name))
				break;
		if (i == sizeof(kinds) / sizeof(kinds[0]))
			usage_err("--marks: unknown kind '%s'", tok + 1);
		m &= ~kinds[i].bit;
	}
	return m;
}

static void usage(void)
{
	printf("Usage: xwbench pp|notif --role a|b IFACE [options]\n"
	       "       xwbench idle IFACE [--seconds S] [--wait STRATEGY]\n\n"
	       "Common: --ep N (2) --addr-file F (b) --peer-file F | --peer ADDR (a)\n"
	       "        --policy NAME --wait STRATEGY --spin USECS --limit SECONDS (300)\n"
	       "        --connect-timeout SECONDS (10) --timeout MS (10000, every wait)\n"
	       "pp:     --size N --reply N (default: size) --iters N (1000) --warmup N\n"
	       "        --x-us U --y-us U --barrier --check-us U (10; 0: no xw_check)\n"
	       "        --eager-max N --btp1 N --btp2 N (bytes, or Nf frames)\n"
	       "        --marks all|none|-rndv,-pull,-pull_reply,-notify,... --mark-shift K\n"
	       "notif:  --msgs N (2000) --size N (64) --gap-us U (500, mean) --seed S\n"
	       "        --mode sends|check|watchdog|notify --check-us U --watchdog-us U (50)\n"
	       "        --chunk-min-us U (20) --chunk-max-us U (20000) --samples FILE\n"
	       "idle:   --seconds S (5) --wait STRATEGY\n"
	       "Sizes: decimal or 0x, K/M suffixes.  See the comment at the top of\n"
	       "bench/xwbench.c for what each test measures.\n");
}

enum {
	OPT_ROLE = 256, OPT_ADDR_FILE, OPT_PEER_FILE, OPT_PEER, OPT_EP, OPT_LIMIT, OPT_CONNECT,
	OPT_TIMEOUT, OPT_POLICY, OPT_WAIT, OPT_SPIN, OPT_ITERS, OPT_WARMUP, OPT_SIZE, OPT_REPLY,
	OPT_X, OPT_Y, OPT_BARRIER, OPT_CHECK, OPT_EAGER, OPT_BTP1, OPT_BTP2, OPT_MARKS,
	OPT_SHIFT, OPT_MSGS, OPT_GAP, OPT_CMIN, OPT_CMAX, OPT_WD, OPT_MODE, OPT_SEED,
	OPT_SAMPLES, OPT_SECONDS, OPT_HELP,
};

static void parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "role", 1, 0, OPT_ROLE }, { "addr-file", 1, 0, OPT_ADDR_FILE },
		{ "peer-file", 1, 0, OPT_PEER_FILE }, { "peer", 1, 0, OPT_PEER },
		{ "ep", 1, 0, OPT_EP }, { "limit", 1, 0, OPT_LIMIT },
		{ "connect-timeout", 1, 0, OPT_CONNECT }, { "timeout", 1, 0, OPT_TIMEOUT },
		{ "policy", 1, 0, OPT_POLICY }, { "wait", 1, 0, OPT_WAIT },
		{ "spin", 1, 0, OPT_SPIN }, { "iters", 1, 0, OPT_ITERS },
		{ "warmup", 1, 0, OPT_WARMUP }, { "size", 1, 0, OPT_SIZE },
		{ "reply", 1, 0, OPT_REPLY }, { "x-us", 1, 0, OPT_X }, { "y-us", 1, 0, OPT_Y },
		{ "barrier", 0, 0, OPT_BARRIER }, { "check-us", 1, 0, OPT_CHECK },
		{ "eager-max", 1, 0, OPT_EAGER }, { "btp1", 1, 0, OPT_BTP1 },
		{ "btp2", 1, 0, OPT_BTP2 }, { "marks", 1, 0, OPT_MARKS },
		{ "mark-shift", 1, 0, OPT_SHIFT }, { "msgs", 1, 0, OPT_MSGS },
		{ "gap-us", 1, 0, OPT_GAP }, { "chunk-min-us", 1, 0, OPT_CMIN },
		{ "chunk-max-us", 1, 0, OPT_CMAX }, { "watchdog-us", 1, 0, OPT_WD },
		{ "mode", 1, 0, OPT_MODE }, { "seed", 1, 0, OPT_SEED },
		{ "samples", 1, 0, OPT_SAMPLES }, { "seconds", 1, 0, OPT_SECONDS },
		{ "help", 0, 0, OPT_HELP }, { 0, 0, 0, 0 },
	};
	int c;

	if (argc < 2)
		usage_err("a test name is needed: pp, notif or idle");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage();
		exit(0);
	}
	if (!strcmp(argv[1], "pp"))
		o.test = T_PP;
	else if (!strcmp(argv[1], "notif"))
		o.test = T_NOTIF;
	else if (!strcmp(argv[1], "idle"))
		o.test = T_IDLE;
	else
		usage_err("unknown test '%s'", argv[1]);
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case OPT_ROLE:
			if (strcmp(optarg, "a") && strcmp(optarg, "b"))
				usage_err("--role a or b");
			o.role = optarg[0];
			break;
		case OPT_ADDR_FILE: o.addr_file = optarg; break;
		case OPT_PEER_FILE: o.peer_file = optarg; break;
		case OPT_PEER: o.peer = optarg; break;
		case OPT_EP: o.ep = (int)parse_long(optarg, 0, XW_MAX_ENDPOINTS - 1); break;
		case OPT_LIMIT: o.limit = (int)parse_long(optarg, 1, 86400); break;
		case OPT_CONNECT: o.connect_timeout = (int)parse_long(optarg, 1, 3600); break;
		case OPT_TIMEOUT: o.timeout_ms = (int)parse_long(optarg, 1, 3600000); break;
		case OPT_POLICY:
			o.policy = xw_policy_parse(optarg);
			if (o.policy < 0)
				usage_err("unknown policy '%s'", optarg);
			break;
		case OPT_WAIT:
			o.wait = xw_wait_strategy_parse(optarg);
			if (o.wait < 0)
				usage_err("unknown wait strategy '%s'", optarg);
			break;
		case OPT_SPIN: o.spin_us = (unsigned int)parse_long(optarg, 0, 10000000); break;
		case OPT_ITERS: o.iters = parse_long(optarg, 1, 100000000); break;
		case OPT_WARMUP: o.warmup = parse_long(optarg, 0, 100000000); break;
		case OPT_SIZE: o.size = parse_size(optarg, NULL); break;
		case OPT_REPLY:
			o.reply = parse_size(optarg, NULL);
			o.reply_set = true;
			break;
		case OPT_X: o.x_us = (unsigned int)parse_long(optarg, 0, 10000000); break;
		case OPT_Y: o.y_us = (unsigned int)parse_long(optarg, 0, 10000000); break;
		case OPT_BARRIER: o.barrier = true; break;
		case OPT_CHECK: o.check_us = (unsigned int)parse_long(optarg, 0, 10000000); break;
		case OPT_EAGER: o.eager_max = (unsigned int)parse_size(optarg, &o.eager_f); break;
		case OPT_BTP1: o.btp1 = (unsigned int)parse_size(optarg, &o.btp1_f); break;
		case OPT_BTP2: o.btp2 = (unsigned int)parse_size(optarg, &o.btp2_f); break;
		case OPT_MARKS:
			o.marks_text = optarg;
			o.marks = parse_marks(optarg);
			o.marks_set = true;
			break;
		case OPT_SHIFT: o.mark_shift = (unsigned int)parse_long(optarg, 0, 1000); break;
		case OPT_MSGS: o.msgs = parse_long(optarg, 1, 10000000); break;
		case OPT_GAP: o.gap_us = (unsigned int)parse_long(optarg, 1, 10000000); break;
		case OPT_CMIN: o.chunk_min_us = (unsigned int)parse_long(optarg, 1, 10000000); break;
		case OPT_CMAX: o.chunk_max_us = (unsigned int)parse_long(optarg, 1, 100000000); break;
		case OPT_WD: o.watchdog_us = (unsigned int)parse_long(optarg, 1, 10000000); break;
		case OPT_MODE: {
			size_t i;

			for (i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
				if (!strcmp(optarg, mode_names[i]))
					break;
			if (i == sizeof(mode_names) / sizeof(mode_names[0]))
				usage_err("--mode sends, check, watchdog or notify");
			o.mode = (enum mode)i;
			break;
		}
		case OPT_SEED: o.seed = (unsigned long)parse_long(optarg, 0, LONG_MAX); break;
		case OPT_SAMPLES: o.samples = optarg; break;
		case OPT_SECONDS:
			o.seconds = strtod(optarg, NULL);
			if (!(o.seconds > 0 && o.seconds < 86400))
				usage_err("bad --seconds '%s'", optarg);
			break;
		case OPT_HELP:
		case 'h':
			usage();
			exit(0);
		default:
			usage_err("bad option");
		}
	}
	if (optind != argc - 1)
		usage_err("one interface name is needed");
	o.ifname = argv[optind];
	if (o.test != T_IDLE) {
		if (!o.role)
			usage_err("--role a or b is needed");
		if (o.role == 'b' && !o.addr_file)
			usage_err("role b needs --addr-file");
		if (o.role == 'a' && !o.peer_file == !o.peer)
			usage_err("role a needs --peer-file or --peer");
	}
	if (!o.reply_set)
		o.reply = o.size;
	if (o.warmup < 0)
		o.warmup = o.iters / 10 < 100 ? o.iters / 10 : 100;
	if (o.x_us || o.y_us)
		o.barrier = true;
	if (o.chunk_max_us < o.chunk_min_us)
		usage_err("--chunk-max-us below --chunk-min-us");
	if (o.test == T_NOTIF && o.size < 16)
		o.size = 16;
	rng_state ^= (__u64)o.seed * NOTIF_MAGIC;
	if (!rng_state)
		rng_state = 1;
}

/* ---- endpoint set-up ---------------------------------------------------------- */

static __u32 frames_to_bytes(unsigned int v, bool frames)
{
	return frames ? v * frag_payload : v;
}

static void ep_open(void)
{
	const char *root = getenv("XDPWAKE_PIN_ROOT");
	struct xw_endpoint *probe = NULL;
	__u64 end = now_ns() + 5000000000ULL;
	int err;

	/* Byte counts in frames need the frame payload: a probe endpoint on
	 * the same queue (the process's endpoints share the socket). */
	if (o.eager_f || o.btp1_f || o.btp2_f) {
		XW_OPTS(xw_endpoint_opts, po, .pin_root = root);

		while ((err = xw_endpoint__open(o.ifname, (__u16)(o.ep + 1), &po, &probe)) == -EBUSY &&
		       now_ns() < end)
			usleep(20000);
		if (err)
			die("%s: cannot open a probe endpoint: %s", o.ifname, xw_strerror(err));
		frag_payload = (__u32)xw_endpoint__frag_payload(probe);
	}
	{
		XW_OPTS(xw_endpoint_opts, eo, .pin_root = root, .policy_set = o.policy >= 0,
			.policy = o.policy >= 0 ? (__u32)o.policy : 0,
			.eager_max = frames_to_bytes(o.eager_max, o.eager_f),
			.btp1 = frames_to_bytes(o.btp1, o.btp1_f),
			.btp2 = frames_to_bytes(o.btp2, o.btp2_f), .marks_set = o.marks_set,
			.marks = o.marks, .mark_shift = o.mark_shift,
			.wait_strategy = (__u32)o.wait, .spin_ns = (__u64)o.spin_us * 1000);

		while ((err = xw_endpoint__open(o.ifname, (__u16)o.ep, &eo, &ep)) == -EBUSY &&
		       now_ns() < end)
			usleep(20000);
		if (err)
			die("%s: cannot open endpoint %d: %s", o.ifname, o.ep, xw_strerror(err));
	}
	if (probe)
		xw_endpoint__close(probe);
	frag_payload = (__u32)xw_endpoint__frag_payload(ep);
	ifc = xw_endpoint__iface(ep);
	if (o.check_us) {
		err = xw_check__init(&chk, ep, o.check_us);
		if (err)
			die("xw_check__init: %s", xw_strerror(err));
		chk_on = true;
	}
}

static int write_addr_file(const char *path, const char *text)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "%s\n", text);
	if (fclose(f) || rename(tmp, path)) {
		int err = -errno;

		unlink(tmp);
		return err;
	}
	return 0;
}

static void send_or_die(const void *buf, size_t len, __u64 tag, const char *what)
{
	int err = xw_endpoint__send(ep, &peer, buf, len, tag, o.timeout_ms);

	if (err)
		die("send %s: %s", what, xw_strerror(err));
}

static void recv_or_die(void *buf, size_t len, __u64 tag, struct xw_status *st, const char *what)
{
	struct xw_status s;
	int err = xw_endpoint__recv(ep, buf, len, tag, TAG_ALL, &s, o.timeout_ms);

	if (err)
		die("receive %s: %s", what, xw_strerror(err));
	if (s.error)
		die("receive %s: %s", what, xw_strerror(s.error));
	if (st)
		*st = s;
}

/* Role b: address out, HELLO in (the peer's address), READY back.
 * Role a: address in, HELLO out, READY in. */
static void connect_peer(void)
{
	char text[XW_ADDR_STRLEN];
	struct xw_addr me;
	struct xw_status st;
	int err;

	if (o.role == 'b') {
		xw_endpoint__addr(ep, &me);
		xw_addr_format(&me, text, sizeof(text));
		err = write_addr_file(o.addr_file, text);
		if (err)
			die("cannot write %s: %s", o.addr_file, strerror(-err));
		err = xw_endpoint__recv(ep, NULL, 0, TAG_HELLO, TAG_ALL, &st,
					o.connect_timeout * 1000 + 5000);
		if (err)
			die("no HELLO from the peer: %s", xw_strerror(err));
		peer = st.src;
		send_or_die(NULL, 0, TAG_READY, "READY");
		return;
	}
	if (o.peer_file) {
		__u64 end = now_ns() + (__u64)o.connect_timeout * 1000000000ULL;
		FILE *f;

		for (;;) {
			f = fopen(o.peer_file, "re");
			if (f) {
				bool ok = fgets(text, sizeof(text), f) != NULL;

				fclose(f);
				if (ok)
					break;
			}
			if (now_ns() > end)
				die("%s: no address after %d s", o.peer_file, o.connect_timeout);
			usleep(20000);
		}
		text[strcspn(text, "\r\n")] = 0;
	} else {
		snprintf(text, sizeof(text), "%s", o.peer);
	}
	if (xw_addr_parse(text, &peer))
		die("bad peer address '%s'", text);
	send_or_die(NULL, 0, TAG_HELLO, "HELLO");
	recv_or_die(NULL, 0, TAG_READY, NULL, "READY");
}

static void print_config(void)
{
	printf("\"test\": \"%s\", \"role\": \"%c\", \"iface\": \"%s\", \"ep\": %d, ",
	       o.test == T_PP ? "pp" : o.test == T_NOTIF ? "notif" : "idle", o.role ? o.role : 'b',
	       o.ifname, o.ep);
	printf("\"policy\": \"%s\", \"wait\": \"%s\", \"frag_payload\": %u, ",
	       o.policy >= 0 ? xw_policy_name((unsigned int)o.policy) : "default",
	       xw_wait_strategy_name((unsigned int)o.wait), frag_payload);
	printf("\"block_cost_ns\": %llu, ", (unsigned long long)xw_block_cost_ns());
}

/* ---- computing ------------------------------------------------------------------ */

static volatile __u64 sink;

/* Busy computation for @us microseconds, with xw_check() when enabled. */
static void compute_us(unsigned int us)
{
	__u64 end = now_ns() + (__u64)us * 1000ULL, acc = sink;

	while (now_ns() < end) {
		for (int i = 0; i < 32; i++)
			acc = acc * 6364136223846793005ULL + 1442695040888963407ULL;
		if (chk_on)
			xw_check(&chk);
	}
	sink = acc;
}

/* ---- pp -------------------------------------------------------------------------- */

static int run_pp(void)
{
	size_t blen = o.size > o.reply ? o.size : o.reply;
	char *buf = calloc(1, blen ? blen : 1), *rbuf = calloc(1, blen ? blen : 1);
	double *lat = calloc((size_t)o.iters, sizeof(double));
	struct snap s0, s1;
	long total = o.warmup + o.iters;

	if (!buf || !rbuf || !lat)
		die("out of memory");
	for (size_t i = 0; i < blen; i++)
		buf[i] = (char)(i * 7);
	connect_peer();
	for (long i = 0; i < total; i++) {
		if (i == o.warmup)
			snap_take(&s0);
		if (o.role == 'a') {
			struct xw_request *req;
			struct xw_status st;
			__u64 t0;
			int err;

			if (o.barrier) {
				send_or_die(NULL, 0, TAG_BAR, "barrier");
				recv_or_die(NULL, 0, TAG_BAR, NULL, "barrier");
			}
			t0 = now_ns();
			compute_us(o.x_us);
			err = xw_endpoint__isend(ep, &peer, buf, o.size, TAG_DATA, &req);
			if (err)
				die("isend: %s", xw_strerror(err));
			compute_us(o.y_us);
			recv_or_die(rbuf, o.reply, TAG_REPLY, &st, "reply");
			err = xw_request__wait(req, &st, o.timeout_ms);
			if (err)
				die("send completion: %s", xw_strerror(err));
			if (i >= o.warmup)
				lat[i - o.warmup] = (double)(now_ns() - t0) / 1000.0;
		} else {
			struct xw_status st;

			if (o.barrier) {
				recv_or_die(NULL, 0, TAG_BAR, NULL, "barrier");
				send_or_die(NULL, 0, TAG_BAR, "barrier");
			}
			compute_us(o.y_us);
			recv_or_die(rbuf, o.size, TAG_DATA, &st, "data");
			if (st.len != o.size)
				die("received %zu bytes, expected %lu", st.len, o.size);
			compute_us(o.x_us);
			send_or_die(buf, o.reply, TAG_REPLY, "reply");
		}
	}
	snap_take(&s1);
	printf("{");
	print_config();
	printf("\"size\": %lu, \"reply\": %lu, \"iters\": %ld, \"warmup\": %ld, ", o.size, o.reply,
	       o.iters, o.warmup);
	printf("\"x_us\": %u, \"y_us\": %u, \"barrier\": %s, \"check_us\": %u, ", o.x_us, o.y_us,
	       o.barrier ? "true" : "false", o.check_us);
	printf("\"eager_max\": %u, \"btp1\": %u, \"btp2\": %u, \"marks\": \"%s\", "
	       "\"marks_mask\": %u, \"mark_shift\": %u, ",
	       frames_to_bytes(o.eager_max, o.eager_f), frames_to_bytes(o.btp1, o.btp1_f),
	       frames_to_bytes(o.btp2, o.btp2_f), o.marks_text ? o.marks_text : "all",
	       o.marks_set ? o.marks : XW_MARK_ALL, o.mark_shift);
	json_side(&s0, &s1);
	if (o.role == 'a') {
		printf(", ");
		json_stats("iter_us", lat, o.iters);
	}
	printf("}\n");
	fflush(stdout);
	free(buf);
	free(rbuf);
	free(lat);
	return 0;
}

/* ---- notif ----------------------------------------------------------------------- */

struct slot {
	__u64 w[8]; /* w[0] send stamp, w[1] stamp ^ magic, w[2] sequence */
	struct xw_request *req;
	bool seen;
};

static void noop_notify(struct xw_endpoint *e, void *arg)
{
	(void)e;
	(void)arg;
}

static void notif_sender(void)
{
	__u64 msg[8], next;
	char *buf = calloc(1, o.size);
	double *gaps = calloc((size_t)o.msgs, sizeof(double));
	struct snap s0, s1;

	if (!buf || !gaps)
		die("out of memory");
	connect_peer();
	snap_take(&s0);
	next = now_ns() + 1000000ULL;
	for (long i = 0; i < o.msgs; i++) {
		double g = -ln(rng_unit()) * (double)o.gap_us;
		struct timespec ts;

		next += (__u64)(g * 1000.0);
		gaps[i] = g;
		ts.tv_sec = (time_t)(next / 1000000000ULL);
		ts.tv_nsec = (long)(next % 1000000000ULL);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		msg[0] = now_ns();
		msg[1] = msg[0] ^ NOTIF_MAGIC;
		msg[2] = (__u64)i + 1;
		memcpy(buf, msg, o.size < sizeof(msg) ? o.size : sizeof(msg));
		send_or_die(buf, o.size, TAG_DATA, "message");
	}
	/* The receiver says when it has seen everything. */
	recv_or_die(NULL, 0, TAG_READY, NULL, "end");
	snap_take(&s1);
	printf("{");
	print_config();
	printf("\"msgs\": %ld, \"size\": %lu, \"gap_us\": %u, ", o.msgs, o.size, o.gap_us);
	json_side(&s0, &s1);
	printf(", ");
	json_stats("gap_actual_us", gaps, o.msgs);
	printf("}\n");
	free(buf);
	free(gaps);
}

static void post_slot(struct slot *s)
{
	int err;

	memset(s->w, 0, sizeof(s->w));
	s->seen = false;
	err = xw_endpoint__irecv(ep, s->w, o.size < sizeof(s->w) ? o.size : sizeof(s->w), TAG_DATA,
				 TAG_ALL, &s->req);
	if (err)
		die("irecv: %s", xw_strerror(err));
}

static void notif_receiver(void)
{
	struct slot *slots = calloc(NOTIF_SLOTS, sizeof(*slots));
	double *delay = calloc((size_t)o.msgs, sizeof(double));
	double *chunks = NULL;
	long seen = 0, nchunks = 0, cap = 1024, next = 0, reposted = 0;
	double lmin = ln((double)o.chunk_min_us), lmax = ln((double)o.chunk_max_us);
	__u64 deadline, acc = 0;
	struct snap s0, s1;
	int err;

	chunks = calloc((size_t)cap, sizeof(double));
	if (!slots || !delay || !chunks)
		die("out of memory");
	if (o.size > sizeof(slots->w))
		die("notif: --size at most %zu", sizeof(slots->w));
	chk_on = o.mode == M_CHECK;
	if (o.mode == M_WATCHDOG) {
		err = xw_endpoint__set_watchdog(ep, o.watchdog_us);
		if (err)
			die("watchdog: %s", xw_strerror(err));
	} else if (o.mode == M_NOTIFY) {
		err = xw_endpoint__set_notify(ep, noop_notify, NULL);
		if (err)
			die("notify thread: %s", xw_strerror(err));
	}
	for (int i = 0; i < NOTIF_SLOTS; i++)
		post_slot(&slots[i]);
	connect_peer();
	snap_take(&s0);
	deadline = now_ns() + (__u64)o.limit * 1000000000ULL;
	while (seen < o.msgs && now_ns() < deadline) {
		double len = expo(lmin + (lmax - lmin) * rng_unit());
		__u64 t = now_ns(), end = t + (__u64)(len * 1000.0);

		if (nchunks == cap) {
			double *n = realloc(chunks, (size_t)cap * 2 * sizeof(double));

			if (!n)
				die("out of memory");
			chunks = n;
			cap *= 2;
		}
		chunks[nchunks++] = len;
		/* The computation: a few hundred ns of work, then a look at
		 * the next receive buffer (and xw_check() in check mode). */
		while (t < end) {
			for (int i = 0; i < 32; i++)
				acc = acc * 6364136223846793005ULL + 1442695040888963407ULL;
			if (chk_on)
				xw_check(&chk);
			for (;;) {
				struct slot *s = &slots[next % NOTIF_SLOTS];
				__u64 stamp = __atomic_load_n(&s->w[0], __ATOMIC_ACQUIRE);
				__u64 check = __atomic_load_n(&s->w[1], __ATOMIC_ACQUIRE);

				if (s->seen || !stamp || (stamp ^ NOTIF_MAGIC) != check)
					break;
				t = now_ns();
				if (seen < o.msgs)
					delay[seen++] = (double)(t - stamp) / 1000.0;
				s->seen = true;
				next++;
			}
			t = now_ns();
		}
		/* A send point: one progress pass; collect and repost the
		 * slots seen, oldest first (receives match in posting order,
		 * so slot k % NOTIF_SLOTS keeps getting message k). */
		xw_endpoint__progress(ep);
		while (reposted < next) {
			struct slot *s = &slots[reposted % NOTIF_SLOTS];
			struct xw_status st;

			if (xw_request__test(s->req, &st) != 1)
				break;
			post_slot(s);
			reposted++;
		}
	}
	sink = acc;
	snap_take(&s1);
	if (o.mode == M_WATCHDOG)
		xw_endpoint__set_watchdog(ep, 0);
	else if (o.mode == M_NOTIFY)
		xw_endpoint__set_notify(ep, NULL, NULL);
	send_or_die(NULL, 0, TAG_READY, "end");
	if (o.samples) {
		FILE *f = fopen(o.samples, "we");

		if (!f)
			die("cannot write %s: %s", o.samples, strerror(errno));
		for (long i = 0; i < seen; i++)
			fprintf(f, "%.3f\n", delay[i]);
		if (fclose(f))
			die("cannot write %s: %s", o.samples, strerror(errno));
	}
	printf("{");
	print_config();
	printf("\"mode\": \"%s\", \"msgs\": %ld, \"seen\": %ld, \"size\": %lu, \"gap_us\": %u, "
	       "\"check_us\": %u, \"watchdog_us\": %u, \"chunk_min_us\": %u, \"chunk_max_us\": %u, ",
	       mode_names[o.mode], o.msgs, seen, o.size, o.gap_us, o.check_us,
	       o.mode == M_WATCHDOG ? o.watchdog_us : 0, o.chunk_min_us, o.chunk_max_us);
	json_side(&s0, &s1);
	printf(", ");
	json_stats("chunk_us", chunks, nchunks);
	printf(", ");
	json_stats("delay_us", delay, seen);
	printf("}\n");
	for (int i = 0; i < NOTIF_SLOTS; i++)
		if (!slots[i].seen || xw_request__test(slots[i].req, NULL) != 1)
			xw_request__cancel(slots[i].req);
	free(slots);
	free(delay);
	free(chunks);
	if (seen < o.msgs)
		die("saw %ld of %ld messages before the time limit", seen, o.msgs);
}

/* ---- idle ------------------------------------------------------------------------- */

static void run_idle(void)
{
	XW_OPTS(xw_wait_opts, wo, .timeout_ms = (int)(o.seconds * 1000.0),
		.strategy = (enum xw_wait_strategy)o.wait);
	struct xw_request *req;
	struct xw_status st;
	struct snap s0, s1;
	char buf[64];
	long hz = sysconf(_SC_CLK_TCK);
	int err;

	err = xw_endpoint__irecv(ep, buf, sizeof(buf), TAG_DATA, TAG_ALL, &req);
	if (err)
		die("irecv: %s", xw_strerror(err));
	snap_take(&s0);
	err = xw_request__wait_opts(req, &st, &wo);
	snap_take(&s1);
	if (err != -ETIMEDOUT)
		die("the idle wait ended with %s", err ? xw_strerror(err) : "a message");
	xw_request__cancel(req);
	printf("{");
	print_config();
	printf("\"seconds\": %.3f, \"clk_tck\": %ld, ", o.seconds, hz);
	json_side(&s0, &s1);
	printf(", ");
	json_num("proc_core_pct",
		 100.0 * (double)(s1.proc_us - s0.proc_us) / ((double)(s1.t - s0.t) / 1000.0), true);
	json_num("machine_core_pct",
		 100.0 * (double)(s1.busy_us - s0.busy_us) / ((double)(s1.t - s0.t) / 1000.0), false);
	printf("}\n");
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	sigaction(SIGALRM, &sa, NULL);
	alarm((unsigned int)o.limit + 30);
	ep_open();
	switch (o.test) {
	case T_PP:
		run_pp();
		break;
	case T_NOTIF:
		if (o.role == 'a')
			notif_sender();
		else
			notif_receiver();
		break;
	case T_IDLE:
		run_idle();
		break;
	}
	xw_endpoint__close(ep);
	return 0;
}
