/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Samples and their summary statistics (libxwutil, not installed): a
 * growable array of samples, nearest-rank percentiles, the median and
 * ratios, for the tool's pingpong/stream and the benchmark drivers.
 * No libm: the benchmarks link without it.
 */
#ifndef XW_UTIL_STATS_H
#define XW_UTIL_STATS_H

#include <stddef.h>

/* At most this many samples are kept (the first ones). */
#define XWU_MAX_SAMPLES (1UL << 24)

/* Growable array of samples. */
struct xwu_samples {
	double *v;
	size_t n, cap;
};

/* Append @x: 0, or -ENOMEM; past XWU_MAX_SAMPLES it is dropped (0). */
int xwu_samples_add(struct xwu_samples *s, double x);
void xwu_samples_free(struct xwu_samples *s);

/* Sort @n doubles ascending, in place. */
void xwu_sort(double *v, size_t n);

/* Nearest rank: the ceil(@q * @n)-th smallest of sorted @v (0 < q <= 1);
 * NAN when @n is 0. */
double xwu_rank(const double *v, size_t n, double q);

/* The element at index floor((@n - 1) * @pct / 100) of sorted @v (the
 * lower of the two around the percentile; policy_demo's definition); -1
 * when @n is 0. */
double xwu_pct_floor(const double *v, size_t n, unsigned int pct);

/* The median of sorted @v: the middle element, or the mean of the two
 * middle ones; NAN when @n is 0. */
double xwu_median(const double *v, size_t n);

/* Summary of a set of samples; every field NAN when there are none. */
struct xwu_summary {
	double min, mean, p50, p90, p99, p999, max;
};

/* Sort @v in place and summarise it (nearest-rank percentiles; the mean
 * summed in sorted order). */
void xwu_summarize(double *v, size_t n, struct xwu_summary *o);

/* @x / @y, or NAN unless @y > 0. */
double xwu_ratio(double x, double y);

#endif
