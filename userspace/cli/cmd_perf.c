// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xdpwake pingpong / stream: message-passing measurements between two
 * xdpwake endpoints, in the spirit of Open-MX's omx_perf.
 *
 * One side runs --server: it opens an endpoint, prints its address and
 * waits.  The other runs --client --peer ADDR with the options of the test;
 * it sends a CONFIG message (mode, policy, wait strategy, spin and think
 * time, timeout, number of sizes) and the server obeys, so only the client
 * needs options.  Then, for each size:
 *
 *   client                               server
 *   PHASE {size, batch}           --->   allocates, posts receives
 *                                 <---   PHASE_OK
 *   warm-up messages, the last one with the MARK flag; the server takes a
 *   snapshot of its counters (XDP stats of the endpoint, wait statistics,
 *   getrusage, /proc/stat) before it answers that one, the client once it
 *   has the answer
 *   measured messages, the last with LAST; both take the end snapshot
 *                                 <---   RESULT {the server's deltas}
 *
 * pingpong: the client sends a message of SIZE bytes, the server answers
 * with one of SIZE bytes (after --think microseconds of computation).
 * stream: the client sends batches of messages, the last of each batch
 * flagged BATCH_END; the server acknowledges each batch with a 0-byte
 * message; the next batch starts once the ack is in (flow control: the
 * library has no retransmission yet, so the receive rings must never
 * overflow).
 *
 * All messages carry a 64-bit match: magic (24 bits) | session (16) |
 * type (8) | flags (16).  Every wait has a deadline (--timeout), and a
 * waiting call is cut into slices so that Ctrl-C is seen.
 *
 * Until the library has sessions, a restarted peer is not recognised
 * (message ids restart at 0 and look like old duplicates), so the server
 * opens a fresh endpoint for every client, and a client that gets no answer
 * opens a fresh endpoint before it asks again.
 */
#include <errno.h>
#include <endian.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "cli.h"

/* ---- protocol ----------------------------------------------------------- */

#define PERF_MAGIC 0x58575046u /* "XWPF" */
#define PERF_VERSION 1u

#define TAG_MAGIC 0x585750ULL /* "XWP", bits 63..40 of every match */
#define MASK_MAGIC (0xFFFFFFULL << 40)
#define MASK_TYPE (0xFFULL << 16)
#define MASK_NOFLAGS (~0xFFFFULL)

enum msg_type {
	T_CONFIG = 1,
	T_READY = 2,
	T_PHASE = 3,
	T_PHASE_OK = 4,
	T_DATA = 5,
	T_ACK = 6,
	T_RESULT = 7,
};

enum msg_flags {
	F_MARK = 1,	 /* the last warm-up message: take the start snapshot after it */
	F_BATCH_END = 2, /* stream: acknowledge the batch */
	F_LAST = 4,	 /* the last measured message */
};

enum perf_mode { MODE_PINGPONG = 1, MODE_STREAM = 2 };

#define POLICY_KEEP 0xFFFFFFFFu /* CONFIG: the client did not ask for a policy */

struct wire_config {
	__be32 magic, version;
	__be64 nonce;
	__be32 mode, policy, wait, spin_us, think_us, timeout_ms, nsizes, rsvd;
} __attribute__((packed));

struct wire_ready {
	__be32 magic, version;
	__be64 nonce;
	__be32 status, ncpus;
	__be64 block_cost_ns;
	char msg[128];
} __attribute__((packed));

struct wire_phase {
	__be32 magic, idx;
	__be64 size;
	__be32 batch, rsvd;
} __attribute__((packed));

struct wire_phase_ok {
	__be32 magic;
	__be32 status;
} __attribute__((packed));

/* One side's measurements over the measured window (deltas). */
#define SIDE_FIELDS(X)                                                                  \
	X(msgs)		    /* messages received in the window (data, or acks) */       \
	X(elapsed_ns)                                                                   \
	X(wake_every) X(wake_marker) X(wake_stream) X(wake_frames) X(wake_timeout)      \
	X(wake_watchdog)                                                                \
	X(wake_unarmed)	    /* wakes not sent: the receiver was not asleep */           \
	X(frames_redirected) X(lat_frames) X(more_frames) X(deferrals) X(timer_fires)   \
	X(machine_busy_us)  /* /proc/stat busy time of all CPUs */                      \
	X(machine_total_us) /* /proc/stat busy + idle + iowait of all CPUs */           \
	X(proc_user_us) X(proc_sys_us)                                                  \
	X(blocks) X(lib_wakes) X(spurious_wakes) X(spins) X(yields)

#define SIDE_FIELD(n) __u64 n;
struct side {
	SIDE_FIELDS(SIDE_FIELD)
};
#undef SIDE_FIELD
#define SIDE_COUNT(n) +1
#define SIDE_NR (0 SIDE_FIELDS(SIDE_COUNT))
_Static_assert(sizeof(struct side) == SIDE_NR * 8, "struct side is packed u64s");

struct wire_result {
	__be32 magic;
	__be32 status;
	__be64 v[SIDE_NR];
} __attribute__((packed));

static const char *const side_names[] = {
#define SIDE_NAME(n) #n,
	SIDE_FIELDS(SIDE_NAME)
#undef SIDE_NAME
};

/* ---- options ------------------------------------------------------------ */

enum role { ROLE_NONE, ROLE_SERVER, ROLE_CLIENT };

#define MAX_SIZES 32
#define MAX_MSG_SIZE (256ULL << 20)
#define MAX_BATCH 1024
#define RX_FRAMES_PER_BATCH 1024 /* stream: frames of one batch, half the fill ring */
#define RX_BYTES_PER_BATCH (64ULL << 20)
#define MAX_SAMPLES (16u << 20)

static struct {
	enum role role;
	const char *peer, *peer_file, *addr_file;
	__u64 sizes[MAX_SIZES];
	int nsizes;
	unsigned long iters, warmup, batch, spin_us, think_us, timeout_ms, queue;
	double duration, connect_timeout, accept_timeout;
	int wait;
	int ep;
	bool unidir, once;
	/* which options were given (client-only ones are refused on a server) */
	bool sizes_set, iters_set, warmup_set, batch_set, spin_set, think_set, timeout_set,
		wait_set, duration_set, connect_set, accept_set, ep_set, queue_set;
} po = {
	.timeout_ms = 5000,
	.connect_timeout = 3,
	.ep = 1,
	.wait = XW_WAIT_DEFAULT,
};

__attribute__((format(printf, 2, 3))) static int opt_err(struct cli_args *a, const char *fmt,
							    ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->err, sizeof(a->err), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_server(struct cli_args *a, const char *val)
{
	if (po.role == ROLE_CLIENT)
		return opt_err(a, "%s--server and --client exclude each other", "");
	po.role = ROLE_SERVER;
	return 0;
}

static int parse_client(struct cli_args *a, const char *val)
{
	if (po.role == ROLE_SERVER)
		return opt_err(a, "%s--server and --client exclude each other", "");
	po.role = ROLE_CLIENT;
	return 0;
}

static int parse_peer(struct cli_args *a, const char *val)
{
	struct xw_addr t;

	if (xw_addr_parse(val, &t))
		return opt_err(a, "bad address '%s': expected MAC/EP (02:00:00:00:00:0b/1) or "
				  "IPv4:PORT/EP (10.0.0.2:49152/1)", val);
	po.peer = val;
	return 0;
}

static int parse_peer_file(struct cli_args *a, const char *val)
{
	if (!*val)
		return opt_err(a, "%sempty file name", "");
	po.peer_file = val;
	return 0;
}

static int parse_addr_file(struct cli_args *a, const char *val)
{
	if (!*val)
		return opt_err(a, "%sempty file name", "");
	po.addr_file = val;
	return 0;
}

static int parse_perf_ep(struct cli_args *a, const char *val)
{
	unsigned long v;

	if (cli_parse_ulong(val, 0, XW_MAX_ENDPOINTS - 1, &v)) {
		snprintf(a->err, sizeof(a->err), "bad endpoint '%s': expected 0-%d", val,
			 XW_MAX_ENDPOINTS - 1);
		return -EINVAL;
	}
	po.ep = (int)v;
	po.ep_set = true;
	return 0;
}

static int parse_queue(struct cli_args *a, const char *val)
{
	if (!strcmp(val, "any"))
		po.queue = XW_QUEUE_ANY;
	else if (cli_parse_ulong(val, 0, 4095, &po.queue))
		return opt_err(a, "bad queue '%s': expected 0-4095 or any", val);
	po.queue_set = true;
	return 0;
}

static int parse_perf_encap(struct cli_args *a, const char *val)
{
	if (!strcmp(val, "eth"))
		a->encap = XW_ENCAP_ETH;
	else if (!strcmp(val, "udp"))
		a->encap = XW_ENCAP_UDP;
	else
		return opt_err(a, "bad encapsulation '%s': expected eth or udp", val);
	a->encap_set = true;
	return 0;
}

/* "64", "1K", "32k", "1M", "1G" (binary multiples). */
static int parse_size(const char *s, __u64 *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K':
		v <<= 10, end++;
		break;
	case 'm': case 'M':
		v <<= 20, end++;
		break;
	case 'g': case 'G':
		v <<= 30, end++;
		break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	if (v > MAX_MSG_SIZE)
		return -ERANGE;
	*out = v;
	return 0;
}

static int parse_sizes(struct cli_args *a, const char *val)
{
	char buf[1024], *save = NULL, *tok;
	int n = 0;

	if (strlen(val) >= sizeof(buf) || !*val)
		return opt_err(a, "bad size list '%s'", val);
	strcpy(buf, val);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int err;

		if (n == MAX_SIZES) {
			snprintf(a->err, sizeof(a->err), "at most %d sizes", MAX_SIZES);
			return -EINVAL;
		}
		err = parse_size(tok, &po.sizes[n]);
		if (err == -ERANGE) {
			snprintf(a->err, sizeof(a->err), "size '%s' over the maximum of %llu MiB",
				 tok, MAX_MSG_SIZE >> 20);
			return err;
		}
		if (err) {
			snprintf(a->err, sizeof(a->err),
				 "bad size '%s' in '%s': expected a list like 0,64,1K,32K,1M", tok,
				 val);
			return err;
		}
		n++;
	}
	if (!n)
		return opt_err(a, "bad size list '%s'", val);
	po.nsizes = n;
	po.sizes_set = true;
	return 0;
}

#define ULONG_OPT(fn, field, set, min, max, what)                                            \
	static int fn(struct cli_args *a, const char *val)                              \
	{                                                                               \
		if (cli_parse_ulong(val, min, max, &po.field)) {                        \
			snprintf(a->err, sizeof(a->err), "bad %s '%s': expected %lu-%lu", \
				 what, val, (unsigned long)(min), (unsigned long)(max)); \
			return -EINVAL;                                                 \
		}                                                                       \
		po.set = true;                                                          \
		return 0;                                                               \
	}
ULONG_OPT(parse_iters, iters, iters_set, 1, 1000000000, "iteration count")
ULONG_OPT(parse_warmup, warmup, warmup_set, 0, 1000000000, "warm-up count")
ULONG_OPT(parse_batch, batch, batch_set, 1, MAX_BATCH, "batch size")
ULONG_OPT(parse_spin, spin_us, spin_set, 0, 1000000, "spin time")
ULONG_OPT(parse_think, think_us, think_set, 0, 1000000, "think time")
ULONG_OPT(parse_timeout, timeout_ms, timeout_set, 10, 3600000, "timeout")

static int parse_seconds(struct cli_args *a, const char *val, double min, double max,
			 double *out, bool *set)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (end == val || *end || errno || !isfinite(v) || v < min || v > max) {
		snprintf(a->err, sizeof(a->err), "bad duration '%s': expected seconds from %g to %g",
			 val, min, max);
		return -EINVAL;
	}
	*out = v;
	*set = true;
	return 0;
}

static int parse_duration(struct cli_args *a, const char *val)
{
	return parse_seconds(a, val, 0.001, 3600, &po.duration, &po.duration_set);
}

static int parse_connect_timeout(struct cli_args *a, const char *val)
{
	return parse_seconds(a, val, 0.1, 3600, &po.connect_timeout, &po.connect_set);
}

static int parse_accept_timeout(struct cli_args *a, const char *val)
{
	return parse_seconds(a, val, 0, 86400 * 365.0, &po.accept_timeout, &po.accept_set);
}

static int parse_perf_policy(struct cli_args *a, const char *val)
{
	int p = xw_policy_parse(val);

	if (p < 0)
		return opt_err(a, "bad policy '%s': expected every, timeout, marker, stream or "
				  "adaptive", val);
	a->policy = (__u32)p;
	a->policy_set = true;
	return 0;
}

static int parse_wait(struct cli_args *a, const char *val)
{
	int s = xw_wait_strategy_parse(val);

	if (s <= 0)
		return opt_err(a, "bad wait strategy '%s': expected spin, yield, block, "
				  "spin-yield, spin-block, notify or adaptive", val);
	po.wait = s;
	po.wait_set = true;
	return 0;
}

static int parse_unidir(struct cli_args *a, const char *val)
{
	po.unidir = true;
	return 0;
}

static int parse_once(struct cli_args *a, const char *val)
{
	po.once = true;
	return 0;
}

/* ---- small helpers ------------------------------------------------------ */

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static __u16 sess;	/* session id of the current client (match bits 39..24) */

static __u64 tag(enum msg_type type, unsigned int flags)
{
	return TAG_MAGIC << 40 | (__u64)sess << 24 | (__u64)type << 16 | (flags & 0xFFFF);
}

static const char *mode_name(int mode)
{
	return mode == MODE_STREAM ? "stream" : "pingpong";
}

static const char *strategy_text(int s)
{
	const char *n = xw_wait_strategy_name((unsigned int)s);

	return s == XW_WAIT_DEFAULT || !n ? "spin-block" : n;
}

static void on_signal(int sig)
{
	cli_stop = 1;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART */

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static void noop_notify(struct xw_endpoint *ep, void *arg)
{
}

/* Computation between messages: spin on the clock. */
static void think(unsigned long usecs)
{
	__u64 end;

	if (!usecs)
		return;
	end = now_ns() + (__u64)usecs * 1000ULL;
	while (now_ns() < end)
		__asm__ __volatile__("" ::: "memory");
}

/* The state of one side of a run. */
struct perf {
	enum perf_mode mode;
	const char *ifname;
	struct cli_args *a;
	struct xw_iface *ifc;	 /* our own handle: keeps the program attached */
	bool attached;		 /* we attached it: detach at the end */
	struct xw_endpoint *ep;
	struct xw_addr me, peer;
	char me_text[XW_ADDR_STRLEN], peer_text[XW_ADDR_STRLEN];
	__u32 policy;		 /* POLICY_KEEP or enum xw_policy */
	int wait;		 /* enum xw_wait_strategy */
	unsigned long spin_us, think_us;
	int timeout_ms;
	/* Message buffers: a request may still use one after a failure, so
	 * they are freed only once the endpoint is closed (ep_close). */
	void **bufs;
	size_t nbufs, capbufs;
	char err[512];
};

__attribute__((format(printf, 3, 4))) static int perr(struct perf *p, int err, const char *fmt,
						       ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
	n = strlen(p->err);
	if (err && n < sizeof(p->err))
		snprintf(p->err + n, sizeof(p->err) - n, ": %s",
			 err == -EINTR ? "interrupted" : xw_strerror(err));
	return err ? err : -EIO;
}

/* Wait for @req up to @timeout_ms, in slices so that a stop request is
 * seen; -EINTR when stopped (the request then stays pending). */
static int wait_req(struct xw_request *req, struct xw_status *st, int timeout_ms)
{
	__u64 end = now_ns() + (__u64)timeout_ms * 1000000ULL;

	for (;;) {
		__u64 t = now_ns();
		int slice, err;

		if (t >= end)
			return -ETIMEDOUT;
		slice = (int)((end - t + 999999) / 1000000);
		if (slice > 200)
			slice = 200;
		err = xw_request__wait(req, st, slice);
		if (err != -ETIMEDOUT)
			return err;
		if (cli_stop)
			return -EINTR;
	}
}

/* Post a send, retrying while the send backlog is full. */
static int post_send_flags(struct perf *p, const void *buf, size_t len, __u64 match,
			   __u32 flags, struct xw_request **req)
{
	XW_OPTS(xw_send_opts, so, .flags = flags);
	__u64 end = now_ns() + (__u64)p->timeout_ms * 1000000ULL;
	int err;

	for (;;) {
		err = xw_endpoint__isend_opts(p->ep, &p->peer, buf, len, match, &so, req);
		if (err != -EAGAIN)
			return err;
		if (now_ns() >= end)
			return -ETIMEDOUT;
		if (cli_stop)
			return -EINTR;
		xw_endpoint__progress(p->ep);
	}
}

static int post_send(struct perf *p, const void *buf, size_t len, __u64 match,
		     struct xw_request **req)
{
	return post_send_flags(p, buf, len, match, 0, req);
}

/* Blocking send of a small control message. */
static int send_ctl(struct perf *p, const void *buf, size_t len, __u64 match)
{
	struct xw_request *req;
	struct xw_status st;
	int err = post_send(p, buf, len, match, &req);

	if (err)
		return err;
	err = wait_req(req, &st, p->timeout_ms);
	return err ? err : st.error;
}

/* Blocking receive of a control message of exactly @len bytes. */
static int recv_ctl(struct perf *p, void *buf, size_t len, __u64 match, __u64 mask,
		    struct xw_status *st, int timeout_ms)
{
	struct xw_request *req;
	int err = xw_endpoint__irecv(p->ep, buf, len, match, mask, &req);

	if (err)
		return err;
	err = wait_req(req, st, timeout_ms);
	if (err) {
		/* Nothing may write into @buf once we return. */
		if (xw_request__cancel(req) == 0)
			xw_request__test(req, NULL);
		return err;
	}
	if (st->error)
		return st->error;
	return st->msg_len == len ? 0 : -EPROTO;
}

/* ---- measurements ------------------------------------------------------- */

struct snap {
	struct xw_stats xs;
	struct xw_wait_stats ws;
	struct rusage ru;
	__u64 busy_us, total_us;
	__u64 t;
};

/* Whole-machine CPU time from the first line of /proc/stat, in us:
 * busy = user + nice + system + irq + softirq + steal (guest time is in
 * user/nice already), total = busy + idle + iowait. */
static int read_proc_stat(__u64 *busy_us, __u64 *total_us)
{
	unsigned long long v[8] = { 0 };
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "re");
	int n;

	*busy_us = *total_us = 0;
	if (!f)
		return -errno;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 7 || hz <= 0)
		return -EIO;
	*busy_us = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * 1000000ULL / (__u64)hz;
	*total_us = (v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7]) * 1000000ULL /
		    (__u64)hz;
	return 0;
}

static void snap_take(struct perf *p, struct snap *s)
{
	memset(s, 0, sizeof(*s));
	s->ws.sz = sizeof(s->ws);
	xw_iface__stats(p->ifc, po.ep, &s->xs);
	xw_endpoint__wait_stats(p->ep, &s->ws);
	getrusage(RUSAGE_SELF, &s->ru);
	read_proc_stat(&s->busy_us, &s->total_us);
	s->t = now_ns();
}

static __u64 tv_us(const struct timeval *tv)
{
	return (__u64)tv->tv_sec * 1000000ULL + (__u64)tv->tv_usec;
}

static __u64 d64(__u64 b, __u64 a)
{
	return b >= a ? b - a : 0;
}

static void side_delta(struct side *d, const struct snap *a, const struct snap *b, __u64 msgs)
{
	memset(d, 0, sizeof(*d));
	d->msgs = msgs;
	d->elapsed_ns = d64(b->t, a->t);
#define XS(n) d->n = d64(b->xs.n, a->xs.n);
	XS(wake_every) XS(wake_marker) XS(wake_stream) XS(wake_frames) XS(wake_timeout)
	XS(wake_watchdog) XS(wake_unarmed) XS(frames_redirected) XS(lat_frames)
	XS(more_frames) XS(deferrals) XS(timer_fires)
#undef XS
	d->machine_busy_us = d64(b->busy_us, a->busy_us);
	d->machine_total_us = d64(b->total_us, a->total_us);
	d->proc_user_us = d64(tv_us(&b->ru.ru_utime), tv_us(&a->ru.ru_utime));
	d->proc_sys_us = d64(tv_us(&b->ru.ru_stime), tv_us(&a->ru.ru_stime));
	d->blocks = d64(b->ws.blocks, a->ws.blocks);
	d->lib_wakes = d64(b->ws.wakes, a->ws.wakes);
	d->spurious_wakes = d64(b->ws.spurious_wakes, a->ws.spurious_wakes);
	d->spins = d64(b->ws.spins, a->ws.spins);
	d->yields = d64(b->ws.yields, a->ws.yields);
}

/* Wakes the XDP program sent to the endpoint, of every reason. */
static __u64 side_wakes(const struct side *s)
{
	return s->wake_every + s->wake_marker + s->wake_stream + s->wake_frames +
	       s->wake_timeout + s->wake_watchdog;
}

static double ratio(double x, double y)
{
	return y > 0 ? x / y : NAN;
}

struct pct {
	double min, mean, p50, p90, p99, max;
};

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* Nearest-rank percentiles of @v (sorted in place). */
static void pct_of(double *v, size_t n, struct pct *o)
{
	double sum = 0;

	memset(o, 0, sizeof(*o));
	if (!n) {
		o->min = o->mean = o->p50 = o->p90 = o->p99 = o->max = NAN;
		return;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
#define RANK(q) v[(size_t)ceil((q) * (double)n) - 1 < n ? (size_t)ceil((q) * (double)n) - 1 : n - 1]
	o->min = v[0];
	o->p50 = RANK(0.50);
	o->p90 = RANK(0.90);
	o->p99 = RANK(0.99);
	o->max = v[n - 1];
	o->mean = sum / (double)n;
#undef RANK
}

/* Growable array of samples (us). */
struct samples {
	double *v;
	size_t n, cap;
};

static int samples_add(struct samples *s, double x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		double *nv;

		if (cap > MAX_SAMPLES)
			return 0; /* keep the first MAX_SAMPLES */
		nv = realloc(s->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	if (s->n < s->cap)
		s->v[s->n++] = x;
	return 0;
}

/* ---- endpoint set-up ---------------------------------------------------- */

/* Our own handle on the interface's program: attach it if nobody has, so
 * that endpoints come and go without detaching it (we detach at the end
 * if we attached). */
static int iface_open(struct perf *p)
{
	struct cli_args *a = p->a;
	XW_OPTS(xw_iface_opts, probe, .pin_root = a->pin_root, .no_attach = true);
	XW_OPTS(xw_iface_opts, o, .pin_root = a->pin_root,
		.encap = a->encap_set ? a->encap : XW_ENCAP_ETH);
	int err;

	err = xw_iface__open(p->ifname, &probe, &p->ifc);
	if (err == -ENOENT) {
		err = xw_iface__open(p->ifname, &o, &p->ifc);
		p->attached = !err;
	}
	if (err)
		return perr(p, err, "%s: cannot attach xdpwake", p->ifname);
	return 0;
}

static void iface_close(struct perf *p)
{
	if (!p->ifc)
		return;
	if (p->attached)
		xw_iface__detach(p->ifc);
	else
		xw_iface__close(p->ifc);
	p->ifc = NULL;
}

static int ep_open(struct perf *p, bool set_policy)
{
	struct cli_args *a = p->a;
	XW_OPTS(xw_endpoint_opts, o, .pin_root = a->pin_root, .queue = (__u32)po.queue,
		.encap = a->encap_set ? a->encap : XW_ENCAP_ETH,
		.policy_set = set_policy && p->policy != POLICY_KEEP,
		.policy = p->policy == POLICY_KEEP ? 0 : p->policy,
		.wait_strategy = (__u32)p->wait, .spin_ns = (__u64)p->spin_us * 1000);
	__u64 end = now_ns() + 3000000000ULL;
	int err;

	/* A socket of a process that just exited (the previous client) is
	 * released by the kernel a little later: its queue reads as busy
	 * meanwhile.  Retry for a while before calling it taken. */
	while ((err = xw_endpoint__open(p->ifname, (__u16)po.ep, &o, &p->ep)) == -EBUSY &&
	       now_ns() < end && !cli_stop)
		usleep(20000);
	if (err == -EBUSY)
		return perr(p, err, "%s: cannot open endpoint %d (in use? try another --ep or "
				    "--queue; -v tells more)", p->ifname, po.ep);
	if (err)
		return perr(p, err, "%s: cannot open endpoint %d", p->ifname, po.ep);
	if (p->wait == XW_WAIT_NOTIFY) {
		err = xw_endpoint__set_notify(p->ep, noop_notify, NULL);
		if (err) {
			xw_endpoint__close(p->ep);
			p->ep = NULL;
			return perr(p, err, "cannot start the notify thread");
		}
	}
	xw_endpoint__addr(p->ep, &p->me);
	xw_addr_format(&p->me, p->me_text, sizeof(p->me_text));
	return 0;
}

static void ep_close(struct perf *p)
{
	if (p->ep)
		xw_endpoint__close(p->ep);
	p->ep = NULL;
	for (size_t i = 0; i < p->nbufs; i++)
		free(p->bufs[i]);
	free(p->bufs);
	p->bufs = NULL;
	p->nbufs = p->capbufs = 0;
}

/* A message buffer of @len bytes (at least 1), owned by @p until ep_close. */
static void *buf_alloc(struct perf *p, __u64 len)
{
	void *b;

	if (p->nbufs == p->capbufs) {
		size_t cap = p->capbufs ? 2 * p->capbufs : 16;
		void **nb = realloc(p->bufs, cap * sizeof(*nb));

		if (!nb)
			return NULL;
		p->bufs = nb;
		p->capbufs = cap;
	}
	b = malloc(len ? (size_t)len : 1);
	if (!b)
		return NULL;
	memset(b, 0x5a, len ? (size_t)len : 1);
	p->bufs[p->nbufs++] = b;
	return b;
}

/* Free the buffers (nothing may use them any more). */
static void bufs_release(struct perf *p)
{
	for (size_t i = 0; i < p->nbufs; i++)
		free(p->bufs[i]);
	p->nbufs = 0;
}

/* Messages per stream batch: the frames of one batch must fit the
 * receiver's fill ring (2048 frames by default; the library has no
 * retransmission yet, so a frame the kernel drops is a lost message):
 * eager messages bring all their frames, large ones what the sender pushes
 * unasked (BTP(1)+BTP(2), 5 frames) plus the pulls in flight (4 blocks of
 * 32).  Also at most RX_BYTES_PER_BATCH bytes of posted receive buffers. */
static unsigned long batch_for(struct perf *p, __u64 size, unsigned long want)
{
	__u64 P = (__u64)xw_endpoint__frag_payload(p->ep);
	__u64 frames, b;

	if (!P)
		P = 1;
	frames = size ? (size + P - 1) / P : 1;
	if (size > 32768 && frames > 5 + 4 * 32)
		frames = 5 + 4 * 32;
	b = RX_FRAMES_PER_BATCH / frames;
	if (size && RX_BYTES_PER_BATCH / size < b)
		b = RX_BYTES_PER_BATCH / size;
	if (b < 1)
		b = 1;
	return want < b ? want : (unsigned long)b;
}

/* ---- the server --------------------------------------------------------- */

static void result_encode(struct wire_result *w, const struct side *s, int status)
{
	const __u64 *v = (const __u64 *)s;

	memset(w, 0, sizeof(*w));
	w->magic = htobe32(PERF_MAGIC);
	w->status = htobe32((__u32)status);
	for (int i = 0; i < SIDE_NR; i++)
		w->v[i] = htobe64(v[i]);
}

static void result_decode(const struct wire_result *w, struct side *s, int *status)
{
	__u64 *v = (__u64 *)s;

	for (int i = 0; i < SIDE_NR; i++)
		v[i] = be64toh(w->v[i]);
	*status = (int)be32toh(w->status);
}

static void json_side(const char *key, const struct side *s, __u64 msgs_delivered)
{
	const __u64 *v = (const __u64 *)s;

	json_key(key);
	json_obj_begin();
	for (int i = 0; i < SIDE_NR; i++)
		json_kv_u64(side_names[i], v[i]);
	json_kv_u64("wakes", side_wakes(s));
	json_kv_double("wakes_per_msg", ratio((double)side_wakes(s), (double)s->msgs));
	json_kv_double("machine_cpu_us_per_msg",
		       ratio((double)s->machine_busy_us, (double)msgs_delivered));
	json_kv_double("proc_cpu_us_per_msg",
		       ratio((double)(s->proc_user_us + s->proc_sys_us), (double)msgs_delivered));
	json_kv_double("machine_busy_pct",
		       100 * ratio((double)s->machine_busy_us, (double)s->machine_total_us));
	json_obj_end();
}


/* Server side of one size: receive, answer (pingpong) or acknowledge each
 * batch (stream); snapshots after the MARK message and after the LAST. */
static int serve_phase(struct perf *p, __u64 size, unsigned long batch, struct side *out)
{
	static struct xw_request *rq[MAX_BATCH];
	static unsigned char *bufs[MAX_BATCH];
	unsigned long W = p->mode == MODE_STREAM ? batch : 1, h = 0;
	struct wire_phase_ok ok = { .magic = htobe32(PERF_MAGIC), .status = 0 };
	struct xw_request *sreq;
	struct snap s0, s1;
	struct xw_status st;
	unsigned char *sbuf;
	bool measuring = false, done = false, pending = false;
	__u64 msgs = 0;
	int err = 0;

	memset(rq, 0, sizeof(rq));
	memset(bufs, 0, sizeof(bufs));
	snap_take(p, &s0);
	sbuf = buf_alloc(p, size);
	for (unsigned long i = 0; sbuf && i < W; i++) {
		bufs[i] = buf_alloc(p, size);
		if (!bufs[i])
			break;
	}
	if (!sbuf || !bufs[W - 1]) {
		ok.status = htobe32((__u32)-ENOMEM);
		send_ctl(p, &ok, sizeof(ok), tag(T_PHASE_OK, 0));
		return perr(p, -ENOMEM, "buffers for size %llu", (unsigned long long)size);
	}
	for (unsigned long i = 0; i < W; i++) {
		err = xw_endpoint__irecv(p->ep, bufs[i], size, tag(T_DATA, 0), MASK_NOFLAGS, &rq[i]);
		if (err) {
			rq[i] = NULL;
			err = perr(p, err, "posting a receive");
			goto out;
		}
	}
	err = send_ctl(p, &ok, sizeof(ok), tag(T_PHASE_OK, 0));
	if (err) {
		err = perr(p, err, "sending PHASE_OK");
		goto out;
	}
	while (!done) {
		unsigned int flags;

		err = wait_req(rq[h], &st, p->timeout_ms);
		if (err) {
			err = perr(p, err, "waiting for message %llu of size %llu",
				   (unsigned long long)msgs, (unsigned long long)size);
			goto out;
		}
		rq[h] = NULL;
		if (st.error || st.msg_len != size) {
			err = perr(p, st.error ? st.error : -EPROTO,
				   "got a message of %zu bytes where %llu were expected", st.msg_len,
				   (unsigned long long)size);
			goto out;
		}
		flags = (unsigned int)(st.match & 0xFFFF);
		done = flags & F_LAST;
		if (!done) {
			err = xw_endpoint__irecv(p->ep, bufs[h], size, tag(T_DATA, 0), MASK_NOFLAGS,
						 &rq[h]);
			if (err) {
				rq[h] = NULL;
				err = perr(p, err, "posting a receive");
				goto out;
			}
		}
		h = (h + 1) % W;
		if (measuring)
			msgs++;
		/* The window opens before the answer to MARK goes out: the
		 * client starts measuring when it has that answer. */
		if (flags & F_MARK) {
			snap_take(p, &s0);
			measuring = true;
		}
		think(p->think_us);
		if (p->mode == MODE_PINGPONG) {
			err = post_send(p, sbuf, size, tag(T_DATA, flags), &sreq);
			if (!err) {
				err = wait_req(sreq, &st, p->timeout_ms);
				if (!err)
					err = st.error;
			}
		} else if (flags & F_BATCH_END) {
			err = send_ctl(p, NULL, 0, tag(T_ACK, flags));
		}
		if (err) {
			err = perr(p, err, "answering message %llu of size %llu",
				   (unsigned long long)msgs, (unsigned long long)size);
			goto out;
		}
	}
	snap_take(p, &s1);
	side_delta(out, &s0, &s1, msgs);
out:
	/* Receives still posted (the rest of a stream window): cancel them. */
	for (unsigned long i = 0; i < W; i++) {
		if (!rq[i])
			continue;
		if (xw_request__cancel(rq[i]) == 0 && xw_request__test(rq[i], NULL) == 1)
			continue;
		pending = true; /* in progress: it may still write its buffer */
	}
	if (!pending)
		bufs_release(p);
	return err;
}

/* Wait for a client's CONFIG; stale messages of earlier sessions are
 * dropped.  1: got one; 0: stopped or --accept-timeout passed. */
static int accept_config(struct perf *p, struct wire_config *cfg, struct xw_status *st,
			 __u64 *recent, int nrecent, __u64 deadline)
{
	static unsigned char buf[4096];

	for (;;) {
		struct xw_request *req;
		__u64 nonce;
		bool seen = false;
		int err;

		err = xw_endpoint__irecv(p->ep, buf, sizeof(buf), TAG_MAGIC << 40, MASK_MAGIC,
					 &req);
		if (err)
			return perr(p, err, "posting a receive");
		for (;;) {
			err = xw_request__wait(req, st, 200);
			if (err != -ETIMEDOUT)
				break;
			if (cli_stop || (deadline && now_ns() >= deadline)) {
				if (xw_request__cancel(req) == 0)
					xw_request__test(req, NULL);
				return 0;
			}
		}
		if (err)
			return perr(p, err, "waiting for a client");
		if (((st->match & MASK_TYPE) >> 16) != T_CONFIG || st->error ||
		    st->msg_len != sizeof(*cfg))
			continue; /* left over from an earlier session */
		memcpy(cfg, buf, sizeof(*cfg));
		if (be32toh(cfg->magic) != PERF_MAGIC)
			continue;
		nonce = be64toh(cfg->nonce);
		for (int i = 0; i < nrecent; i++)
			seen |= recent[i] == nonce;
		if (seen)
			continue; /* a repeated CONFIG of a client already served */
		memmove(recent + 1, recent, (size_t)(nrecent - 1) * sizeof(*recent));
		recent[0] = nonce;
		return 1;
	}
}

static void print_size(char *buf, size_t len, __u64 v)
{
	if (v && !(v & ((1ULL << 30) - 1)))
		snprintf(buf, len, "%lluG", (unsigned long long)(v >> 30));
	else if (v && !(v & ((1ULL << 20) - 1)))
		snprintf(buf, len, "%lluM", (unsigned long long)(v >> 20));
	else if (v && !(v & ((1ULL << 10) - 1)))
		snprintf(buf, len, "%lluK", (unsigned long long)(v >> 10));
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

static const char *policy_text(struct perf *p)
{
	__u32 v = POLICY_KEEP;

	if (xw_iface__get_knob(p->ifc, "policy", (__u32)po.ep, &v))
		return "?";
	return xw_policy_name(v) ? xw_policy_name(v) : "?";
}

/* Serve one client: CONFIG already received. */
static int serve_client(struct perf *p, const struct wire_config *cfg,
			const struct xw_status *cst)
{
	static struct wire_phase ph;
	struct wire_ready rd;
	struct side sides[MAX_SIZES];
	__u64 sizes[MAX_SIZES];
	unsigned long batches[MAX_SIZES];
	struct xw_status st;
	__u32 nsizes = be32toh(cfg->nsizes), pol = be32toh(cfg->policy);
	__u32 old_policy = POLICY_KEEP, tmo = be32toh(cfg->timeout_ms);
	unsigned int wait = be32toh(cfg->wait), mode = be32toh(cfg->mode);
	int err = 0, status = 0, done = 0;

	memset(&rd, 0, sizeof(rd));
	p->peer = cst->src;
	xw_addr_format(&p->peer, p->peer_text, sizeof(p->peer_text));
	sess = (__u16)((cst->match >> 24) & 0xFFFF);
	if (be32toh(cfg->version) != PERF_VERSION) {
		status = -EPROTO;
		snprintf(rd.msg, sizeof(rd.msg), "server speaks version %u, client %u",
			 PERF_VERSION, be32toh(cfg->version));
	} else if ((mode != MODE_PINGPONG && mode != MODE_STREAM) || wait >= XW_WAIT_MAX ||
		   (pol != POLICY_KEEP && !xw_policy_name(pol)) || !nsizes ||
		   nsizes > MAX_SIZES || tmo < 10 || tmo > 3600000 ||
		   be32toh(cfg->think_us) > 1000000 || be32toh(cfg->spin_us) > 1000000) {
		status = -EINVAL;
		snprintf(rd.msg, sizeof(rd.msg), "bad CONFIG (mode %u, wait %u, policy %u, %u sizes)",
			 mode, wait, pol, nsizes);
	}
	p->mode = (enum perf_mode)mode;
	p->think_us = be32toh(cfg->think_us);
	p->spin_us = be32toh(cfg->spin_us);
	p->wait = (int)wait;
	p->timeout_ms = (int)tmo;
	p->policy = pol;
	if (!status && pol != POLICY_KEEP) {
		xw_iface__get_knob(p->ifc, "policy", (__u32)po.ep, &old_policy);
		status = xw_iface__set_knob(p->ifc, "policy", (__u32)po.ep, pol);
		if (status)
			snprintf(rd.msg, sizeof(rd.msg), "cannot set the policy: %s",
				 xw_strerror(status));
	}
	if (!status) {
		status = xw_endpoint__set_wait(p->ep, (enum xw_wait_strategy)wait,
					       (__u64)p->spin_us * 1000ULL);
		if (!status && wait == XW_WAIT_NOTIFY)
			status = xw_endpoint__set_notify(p->ep, noop_notify, NULL);
		if (status)
			snprintf(rd.msg, sizeof(rd.msg), "cannot set the wait strategy: %s",
				 xw_strerror(status));
	}
	rd.magic = htobe32(PERF_MAGIC);
	rd.version = htobe32(PERF_VERSION);
	rd.nonce = cfg->nonce;
	rd.status = htobe32((__u32)status);
	rd.ncpus = htobe32((__u32)sysconf(_SC_NPROCESSORS_ONLN));
	rd.block_cost_ns = htobe64(xw_block_cost_ns());
	if (p->timeout_ms < 10)
		p->timeout_ms = 5000;
	err = send_ctl(p, &rd, sizeof(rd), tag(T_READY, 0));
	if (err) {
		err = perr(p, err, "client %s: sending READY", p->peer_text);
		goto out;
	}
	if (status) {
		err = perr(p, status, "client %s: %s", p->peer_text, rd.msg);
		goto out;
	}
	if (!cli_json) {
		printf("client %s: %s, policy %s, wait %s, think %lu us, %u size%s\n",
		       p->peer_text, mode_name(p->mode), policy_text(p), strategy_text(p->wait),
		       p->think_us, nsizes, nsizes == 1 ? "" : "s");
		fflush(stdout);
	}
	for (__u32 i = 0; i < nsizes; i++) {
		struct wire_result res;
		char sz[32];

		err = recv_ctl(p, &ph, sizeof(ph), tag(T_PHASE, 0), MASK_NOFLAGS, &st,
			       p->timeout_ms);
		if (err) {
			err = perr(p, err, "client %s: waiting for size %u of %u", p->peer_text,
				   i + 1, nsizes);
			goto out;
		}
		sizes[i] = be64toh(ph.size);
		batches[i] = be32toh(ph.batch);
		if (be32toh(ph.magic) != PERF_MAGIC || sizes[i] > MAX_MSG_SIZE || !batches[i] ||
		    batches[i] > MAX_BATCH) {
			struct wire_phase_ok ok = { .magic = htobe32(PERF_MAGIC),
						    .status = htobe32((__u32)-EINVAL) };

			send_ctl(p, &ok, sizeof(ok), tag(T_PHASE_OK, 0));
			err = perr(p, -EINVAL, "client %s: bad PHASE", p->peer_text);
			goto out;
		}
		memset(&sides[i], 0, sizeof(sides[i]));
		err = serve_phase(p, sizes[i], batches[i], &sides[i]);
		if (err) {
			/* perr already says what; name the client */
			char tmp[sizeof(p->err)];

			snprintf(tmp, sizeof(tmp), "%s", p->err);
			perr(p, 0, "client %s, size %llu: %s", p->peer_text,
			     (unsigned long long)sizes[i], tmp);
			goto out;
		}
		result_encode(&res, &sides[i], 0);
		err = send_ctl(p, &res, sizeof(res), tag(T_RESULT, 0));
		if (err) {
			err = perr(p, err, "client %s: sending the result", p->peer_text);
			goto out;
		}
		done++;
		if (!cli_json) {
			print_size(sz, sizeof(sz), sizes[i]);
			printf("  size %-6s %10llu msgs received, per message: %.3f wakes, CPU "
			       "%.2f us machine, %.2f us this process\n",
			       sz, (unsigned long long)sides[i].msgs,
			       ratio((double)side_wakes(&sides[i]), (double)sides[i].msgs),
			       ratio((double)sides[i].machine_busy_us, (double)sides[i].msgs),
			       ratio((double)(sides[i].proc_user_us + sides[i].proc_sys_us),
				     (double)sides[i].msgs));
			fflush(stdout);
		}
	}
out:
	if (old_policy != POLICY_KEEP)
		xw_iface__set_knob(p->ifc, "policy", (__u32)po.ep, old_policy);
	if (cli_json) {
		json_obj_begin();
		json_key("session");
		json_obj_begin();
		json_kv_str("client", p->peer_text);
		json_kv_str("mode", mode_name(p->mode));
		json_kv_str("wait", strategy_text(p->wait));
		json_kv_u64("think_us", p->think_us);
		json_kv_bool("ok", !err);
		if (err)
			json_kv_str("error", p->err);
		json_key("results");
		json_arr_begin();
		for (int i = 0; i < done; i++) {
			json_obj_begin();
			json_kv_u64("size", sizes[i]);
			json_kv_u64("batch", batches[i]);
			json_side("server", &sides[i], sides[i].msgs);
			json_obj_end();
		}
		json_arr_end();
		json_obj_end();
		json_obj_end();
	}
	return err;
}

static int write_addr_file(const char *path, const char *addr)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "%s\n", addr);
	if (fclose(f) || rename(tmp, path)) {
		int err = -errno;

		unlink(tmp);
		return err;
	}
	return 0;
}

static int run_server(struct perf *p)
{
	__u64 recent[16] = { 0 }, deadline = 0;
	bool first = true;
	int err = 0, served = 0, failed = 0;

	install_signals();
	p->policy = POLICY_KEEP;
	p->wait = XW_WAIT_DEFAULT;
	p->timeout_ms = 5000;
	if (iface_open(p))
		return cli_fail(EXIT_RUNTIME, -EIO, "%s", p->err);
	if (po.accept_timeout > 0)
		deadline = now_ns() + (__u64)(po.accept_timeout * 1e9);
	while (!cli_stop) {
		struct wire_config cfg = { 0 };
		struct xw_status st = { 0 };

		p->wait = XW_WAIT_DEFAULT;
		p->spin_us = 0;
		err = ep_open(p, false);
		if (err)
			break;
		if (first) {
			if (po.addr_file) {
				err = write_addr_file(po.addr_file, p->me_text);
				if (err) {
					perr(p, err, "cannot write %s", po.addr_file);
					break;
				}
			}
			if (cli_json) {
				json_obj_begin();
				json_kv_str("listening", p->me_text);
				json_kv_str("ifname", p->ifname);
				json_kv_u64("ep", (unsigned long long)po.ep);
				json_kv_u64("queue", (unsigned long long)xw_endpoint__queue(p->ep));
				json_kv_str("encap", p->me.encap == XW_ENCAP_UDP ? "udp" : "eth");
				json_obj_end();
			} else {
				printf("listening on %s (%s queue %d, %s); on the client run:\n"
				       "  xdpwake pingpong IFACE --client --peer %s [OPTIONS]\n",
				       p->me_text, p->ifname, xw_endpoint__queue(p->ep),
				       p->me.encap == XW_ENCAP_UDP ? "UDP" : "Ethernet", p->me_text);
			}
			fflush(stdout);
			first = false;
		}
		err = accept_config(p, &cfg, &st, recent, 16, deadline);
		if (err == 1) {
			served++;
			deadline = po.accept_timeout > 0 ?
				now_ns() + (__u64)(po.accept_timeout * 1e9) : 0;
			err = serve_client(p, &cfg, &st);
			if (err) {
				failed++;
				if (!cli_json)
					cli_note("%s", p->err);
			}
			err = 0;
		} else if (err == 0) {
			ep_close(p);
			break; /* stopped, or no client in time */
		}
		/* A fresh endpoint for the next client: see the top of the file. */
		ep_close(p);
		if (err < 0 || (po.once && served))
			break;
	}
	ep_close(p);
	iface_close(p);
	if (err < 0)
		return cli_fail(EXIT_RUNTIME, err, "%s", p->err);
	if (!served && po.accept_timeout > 0 && !cli_stop)
		return cli_fail(EXIT_RUNTIME, -ETIMEDOUT, "no client within %g s",
				po.accept_timeout);
	return po.once && failed ? EXIT_RUNTIME : EXIT_OK;
}

/* ---- the client --------------------------------------------------------- */

struct size_result {
	__u64 size;
	__u64 n;	    /* measured iterations (pingpong) or messages (stream) */
	__u64 msgs;	    /* data messages delivered: 2n (pingpong) or n (stream) */
	unsigned long warmup, batch;
	double elapsed_s;
	struct pct lat;	    /* pingpong: half round trip; stream: batch until its ack */
	struct pct raw;	    /* pingpong: round trip */
	double msg_rate, mbps, wakes_per_msg, machine_cpu, proc_cpu, srv_proc_cpu;
	struct side cli, srv;
};

static __u64 random64(void)
{
	__u64 v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
		v = now_ns() ^ ((__u64)getpid() << 32);
	return v;
}

/* Send CONFIG until the server answers READY or the connect timeout
 * passes; a fresh endpoint for each new try (see the top of the file). */
static int client_connect(struct perf *p, __u32 nsizes, struct wire_ready *rd)
{
	static struct wire_ready buf;
	struct wire_config cfg;
	__u64 nonce = random64(), deadline;
	int slice = 250, err;

	sess = (__u16)(nonce >> 48);
	memset(&cfg, 0, sizeof(cfg));
	cfg.magic = htobe32(PERF_MAGIC);
	cfg.version = htobe32(PERF_VERSION);
	cfg.nonce = htobe64(nonce);
	cfg.mode = htobe32(p->mode);
	cfg.policy = htobe32(p->policy);
	cfg.wait = htobe32((__u32)p->wait);
	cfg.spin_us = htobe32((__u32)p->spin_us);
	cfg.think_us = htobe32((__u32)p->think_us);
	cfg.timeout_ms = htobe32((__u32)p->timeout_ms);
	cfg.nsizes = htobe32(nsizes);
	deadline = now_ns() + (__u64)(po.connect_timeout * 1e9);
	for (int attempt = 1;; attempt++) {
		struct xw_request *req;
		struct xw_status st;
		__u64 t;

		if (!p->ep) {
			err = ep_open(p, true);
			if (err)
				return err;
		}
		err = xw_endpoint__irecv(p->ep, &buf, sizeof(buf), tag(T_READY, 0), MASK_NOFLAGS,
					 &req);
		if (err)
			return perr(p, err, "posting a receive");
		err = send_ctl(p, &cfg, sizeof(cfg), tag(T_CONFIG, 0));
		if (err)
			return perr(p, err, "sending the test configuration to %s", p->peer_text);
		t = now_ns();
		if (t < deadline && (deadline - t) / 1000000 < (__u64)slice)
			slice = (int)((deadline - t) / 1000000) + 1;
		err = wait_req(req, &st, slice);
		if (!err) {
			if (st.error || st.msg_len != sizeof(buf) || be32toh(buf.magic) != PERF_MAGIC)
				return perr(p, -EPROTO, "%s answered with a malformed READY",
					    p->peer_text);
			if (buf.nonce != cfg.nonce)
				return perr(p, -EPROTO, "%s answered another client's request",
					    p->peer_text);
			if (be32toh(buf.status)) {
				buf.msg[sizeof(buf.msg) - 1] = '\0';
				return perr(p, (int)be32toh(buf.status), "the server refused: %s",
					    buf.msg);
			}
			*rd = buf;
			return 0;
		}
		if (xw_request__cancel(req) == 0)
			xw_request__test(req, NULL);
		if (err != -ETIMEDOUT)
			return perr(p, err, "waiting for %s", p->peer_text);
		if (cli_verbose)
			cli_note("no answer from %s yet (try %d)", p->peer_text, attempt);
		ep_close(p);
		if (now_ns() >= deadline)
			return perr(p, -ETIMEDOUT,
				    "no answer from %s within %g s: is `xdpwake pingpong %s --server` "
				    "running there (same --encap, --ep %d, reachable over %s)?",
				    p->peer_text, po.connect_timeout,
				    p->me.encap == XW_ENCAP_UDP ? "IFACE --encap udp" : "IFACE",
				    p->peer.ep, p->ifname);
		slice = slice * 2 > 1000 ? 1000 : slice * 2;
	}
}

/* One ping-pong round: post the receive of the answer, send, wait both. */
static int pp_round(struct perf *p, void *sbuf, void *rbuf, __u64 size, unsigned int flags,
		    __u64 *rtt)
{
	struct xw_request *rr, *sr;
	struct xw_status st;
	__u64 t = now_ns();
	int err;

	err = xw_endpoint__irecv(p->ep, rbuf, size, tag(T_DATA, 0), MASK_NOFLAGS, &rr);
	if (err)
		return err;
	err = post_send(p, sbuf, size, tag(T_DATA, flags), &sr);
	if (err)
		return err;
	err = wait_req(sr, &st, p->timeout_ms);
	if (err || st.error)
		return err ? err : st.error;
	err = wait_req(rr, &st, p->timeout_ms);
	if (err || st.error)
		return err ? err : st.error;
	if (st.msg_len != size)
		return -EPROTO;
	*rtt = now_ns() - t;
	return 0;
}

/* One stream batch of @k messages; the last one asks for the ack. */
static int st_batch(struct perf *p, void *sbuf, __u64 size, unsigned long k, unsigned int last,
		    __u64 *lat)
{
	static struct xw_request *sr[MAX_BATCH];
	struct xw_request *ar;
	struct xw_status st;
	__u64 t = now_ns();
	int err;

	err = xw_endpoint__irecv(p->ep, NULL, 0, tag(T_ACK, 0), MASK_NOFLAGS, &ar);
	if (err)
		return err;
	for (unsigned long j = 0; j < k; j++) {
		/* all but the batch's last say "more follows" (XW_SEND_MORE) */
		err = post_send_flags(p, sbuf, size,
				      tag(T_DATA, j == k - 1 ? F_BATCH_END | last : 0),
				      j == k - 1 ? 0 : XW_SEND_MORE, &sr[j]);
		if (err)
			return err;
	}
	for (unsigned long j = 0; j < k; j++) {
		err = wait_req(sr[j], &st, p->timeout_ms);
		if (err || st.error)
			return err ? err : st.error;
	}
	err = wait_req(ar, &st, p->timeout_ms);
	if (err || st.error)
		return err ? err : st.error;
	*lat = now_ns() - t;
	return 0;
}

static int client_phase(struct perf *p, unsigned int idx, __u64 size, struct size_result *r)
{
	static struct wire_phase_ok ok;
	static struct wire_result res;
	struct wire_phase ph;
	struct samples lat = { 0 }, raw = { 0 };
	struct snap s0, s1;
	struct xw_status st;
	unsigned long batch = 1, warmup;
	__u64 n = 0, t0, dur_ns = (__u64)(po.duration * 1e9), sample;
	void *sbuf, *rbuf;
	char sz[32];
	bool last = false;
	int err, status;

	print_size(sz, sizeof(sz), size);
	memset(r, 0, sizeof(*r));
	r->size = size;
	if (p->mode == MODE_STREAM)
		batch = batch_for(p, size, po.batch_set ? po.batch : 32);
	warmup = po.warmup_set ? po.warmup
		 : po.duration_set ? 10 : (po.iters / 10 > 1000 ? 1000 : po.iters / 10);
	r->warmup = warmup;
	r->batch = batch;
	sbuf = buf_alloc(p, size);
	rbuf = buf_alloc(p, size);
	if (!sbuf || !rbuf)
		return perr(p, -ENOMEM, "buffers for size %s", sz);

	memset(&ph, 0, sizeof(ph));
	ph.magic = htobe32(PERF_MAGIC);
	ph.idx = htobe32(idx);
	ph.size = htobe64(size);
	ph.batch = htobe32((__u32)batch);
	err = send_ctl(p, &ph, sizeof(ph), tag(T_PHASE, 0));
	if (!err)
		err = recv_ctl(p, &ok, sizeof(ok), tag(T_PHASE_OK, 0), MASK_NOFLAGS, &st,
			       p->timeout_ms);
	if (err)
		return perr(p, err, "size %s: starting", sz);
	if (be32toh(ok.status))
		return perr(p, (int)be32toh(ok.status), "size %s: the server refused", sz);

	/* Warm-up; the last message (an extra one) carries MARK. */
	if (p->mode == MODE_PINGPONG) {
		for (unsigned long i = 0; i <= warmup && !err; i++)
			err = pp_round(p, sbuf, rbuf, size, i == warmup ? F_MARK : 0, &sample);
	} else {
		for (unsigned long i = 0; i < warmup && !err; i += batch)
			err = st_batch(p, sbuf, size, warmup - i < batch ? warmup - i : batch, 0,
				       &sample);
		if (!err)
			err = st_batch(p, sbuf, size, 1, F_MARK, &sample);
	}
	if (err)
		return perr(p, err, "size %s: warm-up", sz);

	snap_take(p, &s0);
	t0 = s0.t;
	while (!last) {
		unsigned long k = 1;

		if (po.duration_set) {
			last = now_ns() - t0 >= dur_ns;
			if (p->mode == MODE_STREAM)
				k = batch;
		} else if (p->mode == MODE_STREAM) {
			k = po.iters - n < batch ? po.iters - n : batch;
			last = n + k >= po.iters;
		} else {
			last = n + 1 >= po.iters;
		}
		if (p->mode == MODE_PINGPONG) {
			err = pp_round(p, sbuf, rbuf, size, last ? F_LAST : 0, &sample);
			if (!err)
				err = samples_add(&raw, sample / 1e3);
			if (!err) {
				double one = (sample / 1e3 - (double)p->think_us) / 2;

				err = samples_add(&lat, one > 0 ? one : 0);
			}
		} else {
			err = st_batch(p, sbuf, size, k, last ? F_LAST : 0, &sample);
			if (!err)
				err = samples_add(&lat, sample / 1e3);
		}
		if (err) {
			free(lat.v);
			free(raw.v);
			if (err == -EPROTO)
				return perr(p, err, "size %s, message %llu: wrong answer", sz,
					    (unsigned long long)n);
			return perr(p, err, "size %s, message %llu", sz, (unsigned long long)n);
		}
		n += k;
	}
	snap_take(p, &s1);
	err = recv_ctl(p, &res, sizeof(res), tag(T_RESULT, 0), MASK_NOFLAGS, &st, p->timeout_ms);
	if (err) {
		free(lat.v);
		free(raw.v);
		return perr(p, err, "size %s: waiting for the server's result", sz);
	}
	result_decode(&res, &r->srv, &status);
	if (be32toh(res.magic) != PERF_MAGIC || status) {
		free(lat.v);
		free(raw.v);
		return perr(p, status ? status : -EPROTO, "size %s: the server's result", sz);
	}
	side_delta(&r->cli, &s0, &s1, p->mode == MODE_PINGPONG ? n : lat.n);
	r->n = n;
	r->msgs = p->mode == MODE_PINGPONG ? 2 * n : n;
	r->elapsed_s = (double)(s1.t - s0.t) / 1e9;
	pct_of(lat.v, lat.n, &r->lat);
	pct_of(raw.v, raw.n, &r->raw);
	free(lat.v);
	free(raw.v);
	r->msg_rate = ratio((double)r->msgs, r->elapsed_s);
	r->mbps = ratio((double)r->msgs * (double)size / 1e6, r->elapsed_s);
	r->wakes_per_msg = p->mode == MODE_PINGPONG ?
		ratio((double)(side_wakes(&r->cli) + side_wakes(&r->srv)), (double)r->msgs) :
		ratio((double)side_wakes(&r->srv), (double)r->msgs);
	r->machine_cpu = ratio((double)r->cli.machine_busy_us, (double)r->msgs);
	r->proc_cpu = ratio((double)(r->cli.proc_user_us + r->cli.proc_sys_us), (double)r->msgs);
	r->srv_proc_cpu = ratio((double)(r->srv.proc_user_us + r->srv.proc_sys_us),
				(double)r->msgs);
	bufs_release(p);
	return 0;
}

static void json_pct(const char *key, const struct pct *x)
{
	json_key(key);
	json_obj_begin();
	json_kv_double("min", x->min);
	json_kv_double("mean", x->mean);
	json_kv_double("p50", x->p50);
	json_kv_double("p90", x->p90);
	json_kv_double("p99", x->p99);
	json_kv_double("max", x->max);
	json_obj_end();
}

static void text_header(struct perf *p, const struct wire_ready *rd, unsigned long spin)
{
	printf("xdpwake %s: %s %s -> %s (%s), policy %s, wait %s", mode_name(p->mode),
	       p->ifname, p->me_text, p->peer_text,
	       p->me.encap == XW_ENCAP_UDP ? "udp" : "eth", policy_text(p),
	       strategy_text(p->wait));
	if (spin)
		printf(" (spin %lu us)", spin);
	printf(", think %lu us\n", p->think_us);
	if (po.duration_set)
		printf("  %g s per size", po.duration);
	else
		printf("  %lu %s per size", po.iters,
		       p->mode == MODE_PINGPONG ? "round trips" : "messages");
	if (p->mode == MODE_PINGPONG) {
		printf("; latency = (round trip - think) / 2; msg/s, MB/s, wakes and CPU count "
		       "the messages of both directions\n");
		printf("%8s %9s %8s %8s %8s %8s %8s %10s %9s %18s %24s\n", "", "",
		       "latency", "(us)", "", "", "rtt", "", "", "wakes/msg", "CPU us/msg");
		printf("%8s %9s %8s %8s %8s %8s %8s %10s %9s %6s %5s %5s %8s %7s %7s\n", "size",
		       "iters", "p50", "p90", "p99", "max", "p50", "msg/s", "MB/s", "both", "srv",
		       "cli", "machine", "cli", "srv");
	} else {
		printf("; latency = one batch, first send to its ack; wakes/msg on the receiver "
		       "(server)\n");
		printf("%8s %9s %5s %8s %8s %8s %8s %10s %9s %18s %24s\n", "", "", "",
		       "batch", "latency", "(us)", "", "", "", "wakes/msg", "CPU us/msg");
		printf("%8s %9s %5s %8s %8s %8s %8s %10s %9s %6s %5s %5s %8s %7s %7s\n", "size",
		       "msgs", "batch", "p50", "p90", "p99", "max", "msg/s", "MB/s", "rx", "more",
		       "ack", "machine", "cli", "srv");
	}
	(void)rd;
	fflush(stdout);
}

static void text_line(struct perf *p, const struct size_result *r)
{
	char sz[32];

	print_size(sz, sizeof(sz), r->size);
	if (p->mode == MODE_PINGPONG)
		printf("%8s %9llu %8.2f %8.2f %8.2f %8.2f %8.2f %10.0f %9.2f %6.3f %5.2f %5.2f "
		       "%8.2f %7.2f %7.2f\n",
		       sz, (unsigned long long)r->n, r->lat.p50, r->lat.p90, r->lat.p99, r->lat.max,
		       r->raw.p50, r->msg_rate, r->mbps, r->wakes_per_msg,
		       ratio((double)side_wakes(&r->srv), (double)r->srv.msgs),
		       ratio((double)side_wakes(&r->cli), (double)r->cli.msgs), r->machine_cpu,
		       r->proc_cpu, r->srv_proc_cpu);
	else
		printf("%8s %9llu %5lu %8.1f %8.1f %8.1f %8.1f %10.0f %9.2f %6.3f %5.2f %5.2f "
		       "%8.2f %7.2f %7.2f\n",
		       sz, (unsigned long long)r->n, r->batch, r->lat.p50, r->lat.p90, r->lat.p99,
		       r->lat.max, r->msg_rate, r->mbps, r->wakes_per_msg,
		       ratio((double)r->srv.more_frames, (double)r->srv.frames_redirected),
		       ratio((double)side_wakes(&r->cli), (double)r->cli.msgs), r->machine_cpu,
		       r->proc_cpu, r->srv_proc_cpu);
	fflush(stdout);
}

static int run_client(struct perf *p)
{
	static struct size_result res[MAX_SIZES];
	struct wire_ready rd = { 0 };
	unsigned long spin = 0;
	const char *peer = po.peer;
	char pbuf[256];
	int err, done = 0;

	install_signals();
	if (po.peer_file) {
		/* Wait (up to the connect timeout) for the server to write it. */
		__u64 end = now_ns() + (__u64)(po.connect_timeout * 1e9);
		FILE *f;

		for (;;) {
			f = fopen(po.peer_file, "re");
			pbuf[0] = '\0';
			if (f) {
				if (!fgets(pbuf, sizeof(pbuf), f))
					pbuf[0] = '\0';
				fclose(f);
				pbuf[strcspn(pbuf, " \t\r\n")] = '\0';
			}
			if (pbuf[0] || now_ns() >= end || cli_stop)
				break;
			usleep(20000);
		}
		if (!pbuf[0])
			return cli_fail(EXIT_RUNTIME, f ? -EINVAL : -ENOENT,
					"%s: %s after %g s (is the server running?)", po.peer_file,
					f ? "empty" : "no such file", po.connect_timeout);
		peer = pbuf;
	}
	err = xw_addr_parse(peer, &p->peer);
	if (err)
		return cli_usage("bad peer address '%s'%s%s", peer, po.peer_file ? " in " : "",
				 po.peer_file ? po.peer_file : "");
	if (p->a->encap_set && p->a->encap != p->peer.encap)
		return cli_usage("--encap %s does not match the peer address %s",
				 p->a->encap == XW_ENCAP_UDP ? "udp" : "eth", peer);
	p->a->encap = p->peer.encap;
	p->a->encap_set = true;
	xw_addr_format(&p->peer, p->peer_text, sizeof(p->peer_text));
	p->me.encap = p->peer.encap;

	if (iface_open(p))
		return cli_fail(EXIT_RUNTIME, -EIO, "%s", p->err);
	err = client_connect(p, (__u32)po.nsizes, &rd);
	if (err)
		goto fail;
	if (p->wait == XW_WAIT_SPIN_YIELD || p->wait == XW_WAIT_SPIN_BLOCK ||
	    p->wait == XW_WAIT_DEFAULT || p->wait == XW_WAIT_ADAPTIVE)
		spin = p->spin_us ? p->spin_us : (unsigned long)((xw_block_cost_ns() + 500) / 1000);
	if (!cli_json)
		text_header(p, &rd, spin);
	for (int i = 0; i < po.nsizes; i++) {
		err = client_phase(p, (unsigned int)i, po.sizes[i], &res[i]);
		if (err)
			goto fail;
		done++;
		if (!cli_json)
			text_line(p, &res[i]);
	}
	if (cli_json) {
		json_obj_begin();
		json_kv_str("command", mode_name(p->mode));
		json_kv_str("ifname", p->ifname);
		json_kv_u64("ep", (unsigned long long)po.ep);
		json_kv_str("address", p->me_text);
		json_kv_str("peer", p->peer_text);
		json_kv_str("encap", p->me.encap == XW_ENCAP_UDP ? "udp" : "eth");
		json_kv_str("policy", policy_text(p));
		json_kv_str("wait", strategy_text(p->wait));
		json_kv_u64("spin_us", spin);
		json_kv_u64("think_us", p->think_us);
		if (po.duration_set)
			json_kv_double("duration_s", po.duration);
		else
			json_kv_u64("iters", po.iters);
		json_kv_u64("timeout_ms", (unsigned long long)p->timeout_ms);
		json_kv_u64("ncpus", (unsigned long long)sysconf(_SC_NPROCESSORS_ONLN));
		json_kv_u64("block_cost_ns", xw_block_cost_ns());
		json_kv_u64("server_ncpus", be32toh(rd.ncpus));
		json_kv_u64("server_block_cost_ns", be64toh(rd.block_cost_ns));
		json_key("results");
		json_arr_begin();
		for (int i = 0; i < done; i++) {
			const struct size_result *r = &res[i];

			json_obj_begin();
			json_kv_u64("size", r->size);
			json_kv_u64("iters", r->n);
			json_kv_u64("warmup", r->warmup);
			if (p->mode == MODE_STREAM)
				json_kv_u64("batch", r->batch);
			json_kv_u64("msgs", r->msgs);
			json_kv_double("elapsed_s", r->elapsed_s);
			json_pct("latency_us", &r->lat);
			if (p->mode == MODE_PINGPONG)
				json_pct("rtt_us", &r->raw);
			json_kv_double("msg_rate", r->msg_rate);
			json_kv_double("bandwidth_MBps", r->mbps);
			json_kv_double("wakes_per_msg", r->wakes_per_msg);
			json_kv_double("machine_cpu_us_per_msg", r->machine_cpu);
			json_kv_double("proc_cpu_us_per_msg", r->proc_cpu);
			json_kv_double("server_proc_cpu_us_per_msg", r->srv_proc_cpu);
			json_side("client", &r->cli, r->msgs);
			json_side("server", &r->srv, r->msgs);
			json_obj_end();
		}
		json_arr_end();
		json_obj_end();
	}
	ep_close(p);
	iface_close(p);
	return EXIT_OK;
fail:
	ep_close(p);
	iface_close(p);
	return cli_fail(EXIT_RUNTIME, err, "%s", p->err);
}

/* ---- the commands ------------------------------------------------------- */

static int run_perf(struct cli_args *a, enum perf_mode mode)
{
	struct perf p;
	const char *client_only = NULL;

	memset(&p, 0, sizeof(p));
	p.a = a;
	p.ifname = a->pos[0];
	p.mode = po.unidir ? MODE_STREAM : mode;
	if (cli_check_ifname(p.ifname))
		return EXIT_USAGE;
	if (po.role == ROLE_NONE)
		return cli_usage("say --server (wait for a client) or --client --peer ADDR");
	if (po.role == ROLE_SERVER) {
		client_only = po.peer ? "--peer" : po.peer_file ? "--peer-file"
			: po.sizes_set ? "--sizes" : po.iters_set ? "--iters"
			: po.warmup_set ? "--warmup" : po.duration_set ? "--duration"
			: po.batch_set ? "--batch" : a->policy_set ? "--policy"
			: po.wait_set ? "--wait" : po.spin_set ? "--spin"
			: po.think_set ? "--think" : po.unidir ? "--unidir"
			: po.timeout_set ? "--timeout" : po.connect_set ? "--connect-timeout" : NULL;
		if (client_only)
			return cli_usage("%s is a client option: the server follows the client's "
					 "configuration", client_only);
	} else {
		if (po.addr_file || po.once || po.accept_set)
			return cli_usage("%s is a server option", po.addr_file ? "--addr-file"
						   : po.once ? "--once" : "--accept-timeout");
		if (!po.peer == !po.peer_file)
			return cli_usage(po.peer ? "--peer and --peer-file exclude each other"
						 : "the client needs --peer ADDR or --peer-file FILE");
		if (po.iters_set && po.duration_set)
			return cli_usage("--iters and --duration exclude each other");
		if (!po.sizes_set) {
			static const __u64 pp[] = { 0, 64, 1024, 4096, 32768 };

			if (p.mode == MODE_STREAM) {
				po.sizes[0] = 128;
				po.nsizes = 1;
			} else {
				memcpy(po.sizes, pp, sizeof(pp));
				po.nsizes = (int)(sizeof(pp) / sizeof(pp[0]));
			}
		}
		if (!po.iters_set)
			po.iters = p.mode == MODE_STREAM ? 10000 : 1000;
	}
	if (cli_require_iface(p.ifname))
		return EXIT_RUNTIME;
	p.policy = a->policy_set ? a->policy : POLICY_KEEP;
	p.wait = po.wait;
	p.spin_us = po.spin_us;
	p.think_us = po.think_us;
	p.timeout_ms = (int)po.timeout_ms;
	return po.role == ROLE_SERVER ? run_server(&p) : run_client(&p);
}

static int run_pingpong(struct cli_args *a)
{
	return run_perf(a, MODE_PINGPONG);
}

static int run_stream(struct cli_args *a)
{
	return run_perf(a, MODE_STREAM);
}

#define PERF_DESC_COMMON                                                               \
	"One side runs --server on its interface: it opens endpoint --ep (1 by default), "  \
	"prints its address (e.g. \"listening on 02:00:00:00:00:0b/1\"; --addr-file "     \
	"writes it to a file) and serves clients one after the other until Ctrl-C (or "  \
	"--once). The other side runs --client --peer ADDR (or --peer-file FILE) with the " \
	"test's options: it sends the configuration first and the server obeys it (mode, " \
	"--policy, --wait, --spin, --think, --timeout), so the server needs no test "     \
	"options, and a server started as `pingpong --server` serves stream clients too. " \
	"Both sides use the same policy and wait strategy. Each size runs --warmup "       \
	"messages (default a tenth of --iters, at most 1000), one more to synchronise, "   \
	"then --iters (or --duration seconds) measured.\n\n"                               \
	"Wakes per message come from the XDP program's counters of each endpoint (wakes "   \
	"of every reason sent to the process, over the measured window); the server "     \
	"sends its numbers to the client at the end of each size, so the client prints "  \
	"both sides. CPU per message: \"machine\" is the busy time of all CPUs from "     \
	"/proc/stat (user, nice, system, irq, softirq, steal; softirq and the other side "   \
	"count when they run on this machine), \"cli\"/\"srv\" each process's own "       \
	"getrusage user+sys time, all divided by the messages delivered. Every wait has "  \
	"a deadline (--timeout): a lost peer is an error, not a hang; a client whose "     \
	"server does not answer gives up after --connect-timeout seconds.\n\n"           \
	"JSON (-j): the client prints one object: the configuration and \"results\", one " \
	"entry per size with \"iters\", \"msgs\", \"latency_us\" {min, mean, p50, p90, p99, " \
	"max}, \"msg_rate\", \"bandwidth_MBps\", \"wakes_per_msg\", "                      \
	"\"machine_cpu_us_per_msg\", \"proc_cpu_us_per_msg\", and \"client\"/\"server\" "  \
	"objects with every counter delta. The server prints {\"listening\": ADDR} and "   \
	"one {\"session\": ...} object per client."

#define PERF_OPTS                                                                      \
	{ "server", 's', NULL, "wait for clients and follow their configuration",        \
	  parse_server },                                                                 \
	{ "client", 'c', NULL, "run the test against a server (needs --peer or --peer-file)", \
	  parse_client },                                                                 \
	{ "peer", 'p', "ADDR", "the server's address as it prints it: MAC/EP, or "         \
	  "IPv4:PORT/EP with --encap udp", parse_peer },                                  \
	{ "peer-file", 0x120, "FILE", "read the server's address from FILE (waits up to " \
	  "--connect-timeout for it to appear)", parse_peer_file },                       \
	{ "addr-file", 0x121, "FILE", "server: write the address to FILE once listening", \
	  parse_addr_file },                                                              \
	{ "ep", 'e', "N", "endpoint id 0-63 (default 1)", parse_perf_ep },                \
	{ "queue", 'q', "N|any", "interface queue to bind (default 0; any: the first " \
	  "free one)", parse_queue },                                                    \
	{ "encap", 0x122, "eth|udp", "encapsulation (default eth; udp needs IPv4 "        \
	  "addresses)", parse_perf_encap },                                              \
	{ "sizes", 'S', "LIST", "message sizes, e.g. 0,64,1K,32K,1M (K, M, G: binary; "   \
	  "pingpong default 0,64,1K,4K,32K, stream 128)", parse_sizes },                   \
	{ "iters", 'n', "N", "measured iterations per size (default 1000; stream: "      \
	  "messages, default 10000)", parse_iters },                                      \
	{ "warmup", 'w', "N", "warm-up iterations per size (default iters/10, at most "   \
	  "1000)", parse_warmup },                                                        \
	{ "duration", 'd', "SECONDS", "run each size this long instead of --iters",      \
	  parse_duration },                                                               \
	{ "policy", 'P', "NAME", "wake policy of both endpoints: every, timeout, marker, " \
	  "stream, adaptive (default: leave the endpoints' policy as it is)",             \
	  parse_perf_policy },                                                            \
	{ "wait", 'W', "STRATEGY", "how both sides wait: spin, yield, block, spin-yield, " \
	  "spin-block (default), notify, adaptive", parse_wait },                         \
	{ "spin", 0x123, "USECS", "spin time of the spin-* strategies (default: the "     \
	  "measured block-and-wake cost)", parse_spin },                                  \
	{ "think", 't', "USECS", "computation on the receiving side before it answers "   \
	  "(pingpong) or after each message (stream)", parse_think },                     \
	{ "batch", 'b', "N", "stream: messages per acknowledged batch (default 32; "      \
	  "fewer for large messages so a batch fits the receive ring)", parse_batch },    \
	{ "unidir", 'u', NULL, "unidirectional: the stream test (the receiver only "      \
	  "acknowledges each batch)", parse_unidir },                                     \
	{ "timeout", 'T', "MS", "deadline of every wait for the peer (default 5000)",     \
	  parse_timeout },                                                                \
	{ "connect-timeout", 0x124, "SECONDS", "client: give up when the server has not " \
	  "answered after this long (default 3)", parse_connect_timeout },                \
	{ "accept-timeout", 0x125, "SECONDS", "server: exit with status 1 when no client " \
	  "came for this long (default: wait until Ctrl-C)", parse_accept_timeout },      \
	{ "once", 'o', NULL, "server: exit after one client (status 1 if it failed)",    \
	  parse_once },                                                                   \
	CLI_OPT_PIN_ROOT

const struct cli_cmd cli_cmd_pingpong = {
	.name = "pingpong",
	.args = "IFACE",
	.min_pos = 1,
	.max_pos = 1,
	.summary = "message latency: ping-pong between two endpoints",
	.desc = "Ping-pong: the client sends a message of each size, the server answers with "
		"one of the same size (after --think microseconds of computation); per size: "
		"latency (half the round trip, minus the think time) p50/p90/p99/max and the "
		"round trip, message rate and bandwidth (both directions), wakes per message "
		"and CPU per message. --unidir runs the stream test instead.\n\n"
		PERF_DESC_COMMON,
	.opts = (const struct cli_opt[]){ PERF_OPTS, { NULL } },
	.run = run_pingpong,
};

const struct cli_cmd cli_cmd_stream = {
	.name = "stream",
	.args = "IFACE",
	.min_pos = 1,
	.max_pos = 1,
	.summary = "message rate: a unidirectional stream of messages",
	.desc = "Stream: the client sends messages of each size in batches of --batch; the "
		"server (the receiver) acknowledges each batch with a 0-byte message and the "
		"next batch starts once the ack is in. Per size: message rate and bandwidth, "
		"batch latency (first send to ack) p50/p90/p99/max, wakes per message on the "
		"receiver (\"rx\"; \"more\" is the share of frames that carried the sender's "
		"MORE hint, \"ack\" the sender's wakes per message) and CPU per message. "
		"Every message of a batch but the last is sent with XW_SEND_MORE (more "
		"follows at once), so stream and marker receivers may wake once per "
		"batch.\n\n"
		PERF_DESC_COMMON,
	.opts = (const struct cli_opt[]){ PERF_OPTS, { NULL } },
	.run = run_stream,
};
