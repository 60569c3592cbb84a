/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * peers_common.h - what bench/udp_pingpong.c and bench/afxdp_raw.c share:
 * signals, option values, message-size lists, and the JSON result they print
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
 */
#ifndef XW_BENCH_PEERS_COMMON_H
#define XW_BENCH_PEERS_COMMON_H

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
	double elapsed_s, busy_us;
	struct xwu_summary lat;
};

static inline void pc_json_num(const char *key, double v, int comma)
{
	if (isnan(v) || isinf(v))
		printf("\"%s\": null%s", key, comma ? ", " : "");
	else
		printf("\"%s\": %.6g%s", key, v, comma ? ", " : "");
}

/* The whole JSON document of a client run. */
static inline void pc_json_print(const char *tool, const char *test, const char *variant,
				 const char *transport, const struct pc_result *r, int n)
{
	printf("{\"tool\": \"%s\", \"command\": \"%s\", \"variant\": \"%s\", "
	       "\"transport\": \"%s\", \"ncpus\": %ld, \"results\": [",
	       tool, test, variant, transport, sysconf(_SC_NPROCESSORS_ONLN));
	for (int i = 0; i < n; i++) {
		const struct pc_result *x = &r[i];

		printf("%s\n  {\"size\": %lu, \"iters\": %llu, \"msgs\": %llu, ", i ? "," : "",
		       x->size, x->iters, x->msgs);
		if (x->batch)
			printf("\"batch\": %lu, ", x->batch);
		printf("\"retransmits\": %llu, ", x->retransmits);
		pc_json_num("elapsed_s", x->elapsed_s, 1);
		printf("\"latency_us\": {");
		pc_json_num("min", x->lat.min, 1);
		pc_json_num("mean", x->lat.mean, 1);
		pc_json_num("p50", x->lat.p50, 1);
		pc_json_num("p90", x->lat.p90, 1);
		pc_json_num("p99", x->lat.p99, 1);
		pc_json_num("max", x->lat.max, 0);
		printf("}, ");
		pc_json_num("msg_rate", xwu_ratio((double)x->msgs, x->elapsed_s), 1);
		pc_json_num("machine_busy_us", x->busy_us, 1);
		pc_json_num("machine_cpu_us_per_msg", xwu_ratio(x->busy_us, (double)x->msgs), 0);
		printf("}");
	}
	printf("\n]}\n");
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
