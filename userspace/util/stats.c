// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Samples and summary statistics (stats.h).  Percentiles are nearest rank,
 * the ceil(q * n)-th smallest sample, computed without libm.
 */
#include <errno.h>
#include <math.h> /* NAN: a macro, no libm */
#include <stdlib.h>

#include "stats.h"

int xwu_samples_add(struct xwu_samples *s, double x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		double *nv;

		if (cap > XWU_MAX_SAMPLES)
			return 0; /* keep the first XWU_MAX_SAMPLES */
		nv = realloc(s->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	return 0;
}

void xwu_samples_free(struct xwu_samples *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

void xwu_sort(double *v, size_t n)
{
	if (n)
		qsort(v, n, sizeof(*v), cmp_double);
}

double xwu_rank(const double *v, size_t n, double q)
{
	double x = q * (double)n;
	size_t i = (size_t)x;

	if (!n)
		return NAN;
	if ((double)i < x)
		i++;
	return v[i >= 1 && i <= n ? i - 1 : (i ? n - 1 : 0)];
}

double xwu_pct_floor(const double *v, size_t n, unsigned int pct)
{
	return n ? v[(size_t)((n - 1) * (unsigned long long)pct / 100)] : -1;
}

double xwu_median(const double *v, size_t n)
{
	if (!n)
		return NAN;
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void xwu_summarize(double *v, size_t n, struct xwu_summary *o)
{
	double sum = 0;

	if (!n) {
		o->min = o->mean = o->p50 = o->p90 = o->p99 = o->p999 = o->max = NAN;
		return;
	}
	xwu_sort(v, n);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	o->min = v[0];
	o->max = v[n - 1];
	o->mean = sum / (double)n;
	o->p50 = xwu_rank(v, n, 0.50);
	o->p90 = xwu_rank(v, n, 0.90);
	o->p99 = xwu_rank(v, n, 0.99);
	o->p999 = xwu_rank(v, n, 0.999);
}

double xwu_ratio(double x, double y)
{
	return y > 0 ? x / y : NAN;
}
