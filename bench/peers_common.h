/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * peers_common.h - what bench/udp_pingpong.c and bench/afxdp_raw.c share:
 * signals, option values, message-size lists, the measurement of one message
 * size (pc_measure), and the JSON result they print (libxwutil's writer)
 * (the same fields as `xdpwake pingpong -j`, so bench/peers.sh reads all
 * three alike).  The clock, whole-machine CPU from /proc/stat, latency
 * samples and nearest-rank percentiles are libxwutil's (measure.h, stats.h),
 * as in `xdpwake pingpong`.
 *
 * Definitions (as in xdpwake pingpong/stream):
 *   pingpong  latency = half the round trip; msgs = 2 x round trips (both
 *             directions); msg_rate = msgs / elapsed
 *   stream    latency = one batch, first send to its acknowledgement;
 *             msgs = data messages sent one way
 *   machine_cpu_us_per_msg = /proc/stat busy time of all CPUs (user, nice,
 *             system, irq, softirq, steal) over the measured window / msgs
 *   proc_cpu_us_per_msg = the client's own CPU time (getrusage) over the
 *             measured window / msgs
 */
#ifndef XW_BENCH_PEERS_COMMON_H
#define XW_BENCH_PEERS_COMMON_H

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "measure.h"
#include "stats.h"

#define PC_MAX_SIZES 16

static volatile sig_atomic_t pc_stop;

static void pc_on_signal(int sig)
{
	(void)sig;
	pc_stop = 1;
}

static inline void pc_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = pc_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* "0,64,1K,4K" (K, M: binary) into @out; returns the count or -1. */
static inline int pc_parse_sizes(const char *arg, unsigned long *out, unsigned long max)
{
	char buf[256], *save = NULL, *tok, *end;
	int n = 0;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return -1;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long v;

		errno = 0;
		v = strtoul(tok, &end, 10);
		if (errno || end == tok)
			return -1;
		if (*end == 'K' || *end == 'k')
			v <<= 10, end++;
		else if (*end == 'M' || *end == 'm')
			v <<= 20, end++;
		if (*end == 'B' || *end == 'b')
			end++;
		if (*end || v > max || n >= PC_MAX_SIZES)
			return -1;
		out[n++] = v;
	}
	return n ? n : -1;
}

static inline int pc_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max))
		return -1;
	*out = v;
	return 0;
}

static inline int pc_parse_ulong(const char *s, unsigned long min, unsigned long max,
				 unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* One size's result. */
struct pc_result {
	unsigned long size, batch;
	unsigned long long iters, msgs, retransmits;
	double elapsed_s, busy_us, proc_us;
	struct xwu_summary lat;
};

/* The whole JSON document of a client run (json.h). */
static inline void pc_json_print(const char *tool, const char *test, const char *variant,
				 const char *transport, const struct pc_result *r, int n)
{
	json_obj_begin();
	json_kv_str("tool", tool);
	json_kv_str("command", test);
	json_kv_str("variant", variant);
	json_kv_str("transport", transport);
	json_kv_i64("ncpus", sysconf(_SC_NPROCESSORS_ONLN));
	json_key("results");
	json_arr_begin();
	for (int i = 0; i < n; i++) {
		const struct pc_result *x = &r[i];

		json_obj_begin();
		json_kv_u64("size", x->size);
		json_kv_u64("iters", x->iters);
		json_kv_u64("msgs", x->msgs);
		if (x->batch)
			json_kv_u64("batch", x->batch);
		json_kv_u64("retransmits", x->retransmits);
		json_kv_double("elapsed_s", x->elapsed_s);
		json_key("latency_us");
		json_obj_begin();
		json_kv_double("min", x->lat.min);
		json_kv_double("mean", x->lat.mean);
		json_kv_double("p50", x->lat.p50);
		json_kv_double("p90", x->lat.p90);
		json_kv_double("p99", x->lat.p99);
		json_kv_double("max", x->lat.max);
		json_obj_end();
		json_kv_double("msg_rate", xwu_ratio((double)x->msgs, x->elapsed_s));
		json_kv_double("machine_busy_us", x->busy_us);
		json_kv_double("machine_cpu_us_per_msg", xwu_ratio(x->busy_us, (double)x->msgs));
		json_kv_double("proc_cpu_us_per_msg", xwu_ratio(x->proc_us, (double)x->msgs));
		json_obj_end();
	}
	json_arr_end();
	json_obj_end();
}

/* One ping-pong round or stream batch of @size bytes from sequence number
 * @seq: its duration in ns, or -errno; retransmissions added to *@retx. */
typedef long long (*pc_round_fn)(void *ctx, unsigned long size, unsigned long long seq,
				 unsigned long long *retx);

/* How a client measures (the options both tools share). */
struct pc_run {
	const char *tool;	/* in error messages */
	pc_round_fn round;
	void *ctx;
	bool pingpong;		/* else stream */
	unsigned long k;	/* messages per round: 1, or the stream's batch */
	unsigned long warmup, iters;
	double duration;	/* s, when duration_set (else iters rounds) */
	bool duration_set;
};

/* One size: the warm-up, then the measured rounds (latency: half a round
 * trip, or one batch); @r filled.  *@seq advances by the messages sent.
 * Returns 0, or -1 with the reason on stderr. */
static inline int pc_measure(const struct pc_run *run, unsigned long size, unsigned long long *seq,
			     struct pc_result *r)
{
	struct xwu_samples lat = { 0 };
	unsigned long long n = 0, retx = 0, t0, b0, c0, dur = (unsigned long long)(run->duration * 1e9);
	long long t;

	for (unsigned long w = 0; w < run->warmup; w += run->k) {
		t = run->round(run->ctx, size, *seq, &retx);
		*seq += run->k;
		if (t < 0) {
			fprintf(stderr, "%s: size %lu, warm-up: %s\n", run->tool, size,
				strerror((int)-t));
			return -1;
		}
	}
	retx = 0;
	b0 = xwu_machine_busy_us();
	c0 = xwu_proc_cpu_us();
	t0 = xwu_now_ns();
	for (;;) {
		if (run->duration_set ? xwu_now_ns() - t0 >= dur : n >= run->iters)
			break;
		t = run->round(run->ctx, size, *seq, &retx);
		*seq += run->k;
		if (t < 0) {
			fprintf(stderr, "%s: size %lu, message %llu: %s\n", run->tool, size, n,
				strerror((int)-t));
			xwu_samples_free(&lat);
			return -1;
		}
		if (xwu_samples_add(&lat, run->pingpong ? (double)t / 2e3 : (double)t / 1e3)) {
			xwu_samples_free(&lat);
			return -1;
		}
		n += run->k;
	}
	r->elapsed_s = (double)(xwu_now_ns() - t0) / 1e9;
	r->busy_us = (double)(xwu_machine_busy_us() - b0);
	r->proc_us = (double)(xwu_proc_cpu_us() - c0);
	r->size = size;
	r->batch = run->pingpong ? 0 : run->k;
	r->iters = n;
	r->msgs = run->pingpong ? 2 * n : n;
	r->retransmits = retx;
	xwu_summarize(lat.v, lat.n, &r->lat);
	xwu_samples_free(&lat);
	return 0;
}

static inline void pc_text_print(const char *test, const char *variant, const struct pc_result *r,
				 int n)
{
	printf("%s (%s): latency %s, us\n", test, variant,
	       strcmp(test, "pingpong") ? "= one batch to its ack" : "= half round trip");
	printf("%8s %10s %9s %9s %9s %9s %12s %10s %7s\n", "size", "msgs", "p50", "p90", "p99",
	       "max", "msg/s", "CPU us/msg", "retx");
	for (int i = 0; i < n; i++)
		printf("%8lu %10llu %9.2f %9.2f %9.2f %9.2f %12.0f %10.2f %7llu\n", r[i].size,
		       r[i].msgs, r[i].lat.p50, r[i].lat.p90, r[i].lat.p99, r[i].lat.max,
		       xwu_ratio((double)r[i].msgs, r[i].elapsed_s),
		       xwu_ratio(r[i].busy_us, (double)r[i].msgs), r[i].retransmits);
}

#endif
