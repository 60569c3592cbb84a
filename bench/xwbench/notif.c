// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xwbench notif: the notification delay of a compute-bound receiver.
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
 * polling watchdog of --watchdog-us; --watchdog-rt PRIO: its thread under
 * SCHED_FIFO where permitted), notify (plus the library's notify
 * thread, woken by the XDP program).  --samples FILE writes every delay.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xwbench.h"
#include "measure.h"
#include "rand.h"

static __u64 rng_state = 88172645463325252ULL;

static __u64 rng(void)
{
	return xwu_xorshift64(&rng_state);
}

static double rng_unit(void) /* (0, 1] */
{
	return ((double)(rng() >> 11) + 1.0) / 9007199254740992.0;
}

/* The generator's start: --seed mixed into a fixed state. */
static void rng_seed(void)
{
	rng_state ^= (__u64)o.seed * NOTIF_MAGIC;
	if (!rng_state)
		rng_state = 1;
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

void notif_sender(void)
{
	__u64 msg[8], next;
	char *buf = calloc(1, o.size);
	double *gaps = calloc((size_t)o.msgs, sizeof(double));
	struct snap s0, s1;

	if (!buf || !gaps)
		die("out of memory");
	rng_seed();
	connect_peer();
	snap_take(&s0);
	next = xwu_now_ns() + 1000000ULL;
	for (long i = 0; i < o.msgs; i++) {
		double g = -ln(rng_unit()) * (double)o.gap_us;
		struct timespec ts;

		next += (__u64)(g * 1000.0);
		gaps[i] = g;
		ts.tv_sec = (time_t)(next / 1000000000ULL);
		ts.tv_nsec = (long)(next % 1000000000ULL);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		msg[0] = xwu_now_ns();
		msg[1] = msg[0] ^ NOTIF_MAGIC;
		msg[2] = (__u64)i + 1;
		memcpy(buf, msg, o.size < sizeof(msg) ? o.size : sizeof(msg));
		send_or_die(buf, o.size, TAG_DATA, "message");
	}
	/* The receiver says when it has seen everything. */
	recv_or_die(NULL, 0, TAG_READY, NULL, "end");
	snap_take(&s1);
	json_obj_begin();
	print_config();
	json_kv_i64("msgs", o.msgs);
	json_kv_u64("size", o.size);
	json_kv_u64("gap_us", o.gap_us);
	json_side(&s0, &s1);
	json_stats("gap_actual_us", gaps, o.msgs);
	json_obj_end();
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

void notif_receiver(void)
{
	struct slot *slots = calloc(NOTIF_SLOTS, sizeof(*slots));
	double *delay = calloc((size_t)o.msgs, sizeof(double));
	double *chunks = NULL;
	long seen = 0, nchunks = 0, cap = 1024, next = 0, reposted = 0;
	double lmin = ln((double)o.chunk_min_us), lmax = ln((double)o.chunk_max_us);
	__u64 deadline, acc = 0;
	struct xw_wait_stats wst = { .sz = sizeof(wst) };
	struct snap s0, s1;
	int err;

	chunks = calloc((size_t)cap, sizeof(double));
	if (!slots || !delay || !chunks)
		die("out of memory");
	rng_seed();
	if (o.size > sizeof(slots->w))
		die("notif: --size at most %zu", sizeof(slots->w));
	chk_on = o.mode == M_CHECK;
	if (o.mode == M_WATCHDOG) {
		XW_OPTS(xw_watchdog_opts, wo, .period_usecs = o.watchdog_us, .rt_prio = o.watchdog_rt);

		err = xw_endpoint__set_watchdog_opts(ep, &wo);
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
	deadline = xwu_now_ns() + (__u64)o.limit * 1000000000ULL;
	while (seen < o.msgs && xwu_now_ns() < deadline) {
		double len = expo(lmin + (lmax - lmin) * rng_unit());
		__u64 t = xwu_now_ns(), end = t + (__u64)(len * 1000.0);

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
				t = xwu_now_ns();
				if (seen < o.msgs)
					delay[seen++] = (double)(t - stamp) / 1000.0;
				s->seen = true;
				next++;
			}
			t = xwu_now_ns();
		}
		/* A send point: one progress pass; collect and repost the
		 * slots seen, oldest first (receives match in posting order,
		 * so slot k % NOTIF_SLOTS keeps getting message k). */
		xw_endpoint__progress(ep);
		while (reposted < next) {
			struct slot *s = &slots[reposted % NOTIF_SLOTS];
			XW_OPTS(xw_status, st);

			if (xw_request__test(s->req, &st) != 1)
				break;
			post_slot(s);
			reposted++;
		}
	}
	sink = acc;
	snap_take(&s1);
	if (xw_endpoint__wait_stats(ep, &wst))
		die("wait stats");
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
	json_obj_begin();
	print_config();
	json_kv_str("mode", mode_names[o.mode]);
	json_kv_i64("msgs", o.msgs);
	json_kv_i64("seen", seen);
	json_kv_u64("size", o.size);
	json_kv_u64("gap_us", o.gap_us);
	json_kv_u64("check_us", o.check_us);
	json_kv_u64("watchdog_us", o.mode == M_WATCHDOG ? o.watchdog_us : 0);
	json_kv_u64("watchdog_rt", o.mode == M_WATCHDOG ? o.watchdog_rt : 0);
	json_kv_u64("chunk_min_us", o.chunk_min_us);
	json_kv_u64("chunk_max_us", o.chunk_max_us);
	json_side(&s0, &s1);
	json_kv_u64("watchdog_lead_ns", wst.watchdog_lead_ns);
	json_stats("chunk_us", chunks, nchunks);
	json_stats("delay_us", delay, seen);
	json_obj_end();
	for (int i = 0; i < NOTIF_SLOTS; i++)
		if (!slots[i].seen || xw_request__test(slots[i].req, NULL) != 1)
			xw_request__cancel(slots[i].req);
	free(slots);
	free(delay);
	free(chunks);
	if (seen < o.msgs)
		die("saw %ld of %ld messages before the time limit", seen, o.msgs);
}
