/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * peers_common.h - what bench/udp_pingpong.c and bench/afxdp_raw.c share:
 * clock, whole-machine CPU from /proc/stat, latency samples and nearest-rank
 * percentiles, message-size lists, and the JSON result they print (the same
 * fields as `xdpwake pingpong -j`, so bench/peers.sh reads all three alike).
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

#define PC_MAX_SIZES 16
#define PC_MAX_SAMPLES (1UL << 24)

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

static inline unsigned long long pc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* Busy time of all CPUs in us: user + nice + system + irq + softirq + steal. */
static inline unsigned long long pc_machine_busy_us(void)
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
	return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) * 1000000ULL / (unsigned long long)hz;
}

struct pc_samples {
	double *v;
	size_t n, cap;
};

static inline int pc_add(struct pc_samples *s, double x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		double *nv;

		if (cap > PC_MAX_SAMPLES)
			return 0; /* keep the first PC_MAX_SAMPLES */
		nv = realloc(s->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	return 0;
}

struct pc_pct {
	double min, mean, p50, p90, p99, max;
};

static int pc_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* Nearest rank: the ceil(q*n)-th smallest (no libm: the benches link without it). */
static inline double pc_rank(const double *v, size_t n, double q)
{
	double x = q * (double)n;
	size_t i = (size_t)x;

	if ((double)i < x)
		i++;
	return v[i >= 1 && i <= n ? i - 1 : (i ? n - 1 : 0)];
}

/* Nearest-rank percentiles (sorts @s). */
static inline void pc_pct_of(struct pc_samples *s, struct pc_pct *o)
{
	double sum = 0;

	if (!s->n) {
		o->min = o->mean = o->p50 = o->p90 = o->p99 = o->max = NAN;
		return;
	}
	qsort(s->v, s->n, sizeof(*s->v), pc_cmp);
	for (size_t i = 0; i < s->n; i++)
		sum += s->v[i];
	o->min = s->v[0];
	o->max = s->v[s->n - 1];
	o->mean = sum / (double)s->n;
	o->p50 = pc_rank(s->v, s->n, 0.50);
	o->p90 = pc_rank(s->v, s->n, 0.90);
	o->p99 = pc_rank(s->v, s->n, 0.99);
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
	struct pc_pct lat;
};

static inline double pc_ratio(double x, double y)
{
	return y > 0 ? x / y : NAN;
}

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
		pc_json_num("msg_rate", pc_ratio((double)x->msgs, x->elapsed_s), 1);
		pc_json_num("machine_busy_us", x->busy_us, 1);
		pc_json_num("machine_cpu_us_per_msg", pc_ratio(x->busy_us, (double)x->msgs), 0);
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
		       pc_ratio((double)r[i].msgs, r[i].elapsed_s),
		       pc_ratio(r[i].busy_us, (double)r[i].msgs), r[i].retransmits);
}

#endif
