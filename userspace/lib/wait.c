// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The waiting strategies' decisions (see wait.h). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "wait.h"

static const char *const strategy_names[XW_WAIT_MAX] = {
	[XW_WAIT_DEFAULT] = "default",	   [XW_WAIT_SPIN] = "spin",
	[XW_WAIT_YIELD] = "yield",	   [XW_WAIT_BLOCK] = "block",
	[XW_WAIT_SPIN_YIELD] = "spin-yield", [XW_WAIT_SPIN_BLOCK] = "spin-block",
	[XW_WAIT_NOTIFY] = "notify",	   [XW_WAIT_ADAPTIVE] = "adaptive",
};

XW_API const char *xw_wait_strategy_name(unsigned int s)
{
	return s < XW_WAIT_MAX ? strategy_names[s] : NULL;
}

XW_API int xw_wait_strategy_parse(const char *name)
{
	if (!name)
		return -EINVAL;
	for (int i = 0; i < XW_WAIT_MAX; i++)
		if (!strcasecmp(name, strategy_names[i]))
			return i;
	if (!strcasecmp(name, "sched"))
		return XW_WAIT_YIELD;
	return -EINVAL;
}

static __u64 clamp_spin(__u64 s, __u64 b)
{
	if (s < b / 2)
		return b / 2;
	if (s > 2 * b)
		return 2 * b;
	return s;
}

void xwi_waitpol_init(struct xwi_waitpol *w, enum xw_wait_strategy s, __u64 block_cost,
		      __u64 spin_ns)
{
	memset(w, 0, sizeof(*w));
	w->strategy = s == XW_WAIT_DEFAULT ? XW_WAIT_SPIN_BLOCK : s;
	w->block_cost = block_cost;
	w->spin_ns = spin_ns;
	w->block_cal = block_cost;
	w->adaptive_spin = block_cost; /* no history yet: spin-block */
	w->wake_cap = XWI_WAKE_CAP;
	w->shared_skip = XWI_SHARED_SKIP_MIN;
	w->pull_spin = XW_PULL_SPIN_DEFAULT;
}

bool xwi_waitpol_wake(struct xwi_waitpol *w, __u64 lat)
{
	__u64 v[XWI_WAKE_HIST], b;
	unsigned int n, i, j;

	if (!lat || lat > XWI_WAKE_MAX_NS)
		return true; /* not a wake-up latency: not a late wake either */
	if (w->wake_cap && w->block_cal && lat > w->wake_cap * w->block_cal)
		return false;
	w->wake[w->wpos] = lat;
	w->wpos = (w->wpos + 1) % XWI_WAKE_HIST;
	if (w->nwake < XWI_WAKE_HIST)
		w->nwake++;
	n = w->nwake;
	if (n < XWI_WAKE_MIN)
		return true;
	for (i = 0; i < n; i++) {
		for (j = i; j > 0 && v[j - 1] > w->wake[i]; j--)
			v[j] = v[j - 1];
		v[j] = w->wake[i];
	}
	b = v[n / 2];
	if (b != w->block_cost) {
		w->block_cost = b;
		w->stale = true; /* the adaptive bounds follow B */
	}
	return true;
}

bool xwi_waitpol_shared(struct xwi_waitpol *w)
{
	if (!w->shared_left)
		return false;
	w->shared_left--;
	return true;
}

void xwi_waitpol_contended(struct xwi_waitpol *w)
{
	unsigned int skip = w->shared_skip < XWI_SHARED_SKIP_MIN ? XWI_SHARED_SKIP_MIN
								   : w->shared_skip;

	w->shared_left = skip;
	w->shared_skip = skip * 2 > XWI_SHARED_SKIP_MAX ? XWI_SHARED_SKIP_MAX : skip * 2;
}

void xwi_waitpol_alone(struct xwi_waitpol *w)
{
	w->shared_skip = XWI_SHARED_SKIP_MIN;
}

__u64 xwi_waitpol_probe_at(__u64 probed, __u64 spin)
{
	__u64 first = spin / 2;

	if (probed)
		return 2 * probed;
	return first < XWI_PROBE_FIRST_NS ? XWI_PROBE_FIRST_NS
	       : first > XWI_PROBE_MAX_NS ? XWI_PROBE_MAX_NS
					  : first;
}

__u64 xwi_waitpol_spin(struct xwi_waitpol *w)
{
	switch (w->strategy) {
	case XW_WAIT_SPIN_YIELD:
	case XW_WAIT_SPIN_BLOCK:
		return w->spin_ns ? w->spin_ns : w->block_cost;
	case XW_WAIT_ADAPTIVE:
		return xwi_waitpol_adaptive(w);
	default:
		return 0;
	}
}

enum xwi_wait_act xwi_waitpol_next(struct xwi_waitpol *w, __u64 waited)
{
	switch (w->strategy) {
	case XW_WAIT_SPIN:
		return XWI_ACT_SPIN;
	case XW_WAIT_YIELD:
		return XWI_ACT_YIELD;
	case XW_WAIT_BLOCK:
	case XW_WAIT_NOTIFY:
		return XWI_ACT_BLOCK;
	case XW_WAIT_SPIN_YIELD:
		return waited < xwi_waitpol_spin(w) ? XWI_ACT_SPIN : XWI_ACT_YIELD;
	case XW_WAIT_SPIN_BLOCK:
	case XW_WAIT_ADAPTIVE:
	default:
		return waited < xwi_waitpol_spin(w) ? XWI_ACT_SPIN : XWI_ACT_BLOCK;
	}
}

enum xwi_wait_act xwi_waitpol_pull(const struct xwi_waitpol *w, enum xwi_wait_act act,
				   __u64 since)
{
	if (act != XWI_ACT_BLOCK ||
	    (w->strategy != XW_WAIT_SPIN_BLOCK && w->strategy != XW_WAIT_ADAPTIVE))
		return act;
	return since < (__u64)w->pull_spin * w->block_cost ? XWI_ACT_SPIN : act;
}

/*
 * Adaptive: look at the last XWI_WAIT_HIST delays.  If at least half of them
 * ended within 2B, spin long enough for 3/4 of those (their 75th
 * percentile, plus a quarter for jitter); otherwise waiting is mostly long
 * and spinning is waste: spin the minimum.  Always within [B/2, 2B].
 */
void xwi_waitpol_done(struct xwi_waitpol *w, __u64 delay)
{
	/* This runs at the end of every wait, for every strategy (a call may
	 * ask for adaptive on an endpoint whose default is another one), on
	 * the way back to the application with its message: only record the
	 * delay.  The estimate is worked out when an adaptive wait asks. */
	w->hist[w->pos] = delay;
	w->pos = (w->pos + 1) % XWI_WAIT_HIST;
	if (w->nhist < XWI_WAIT_HIST)
		w->nhist++;
	w->stale = true;
}

__u64 xwi_waitpol_adaptive(struct xwi_waitpol *w)
{
	__u64 b = w->block_cost, *v = w->sorted;
	unsigned int n = w->nhist, i, j, lim;

	if (!w->stale)
		return w->adaptive_spin;
	w->stale = false;
	if (!n) /* no history yet: spin-block */
		return w->adaptive_spin = b;
	/* The delays within 2B, sorted (insertion: at most 16 of them). */
	for (i = 0, lim = 0; i < n; i++) {
		__u64 d = w->hist[i];

		if (d > 2 * b)
			continue;
		for (j = lim; j > 0 && v[j - 1] > d; j--)
			v[j] = v[j - 1];
		v[j] = d;
		lim++;
	}
	if (lim * 2 < n)
		w->adaptive_spin = b / 2;
	else
		w->adaptive_spin =
			clamp_spin(v[(lim * 3) / 4 < lim ? (lim * 3) / 4 : lim - 1] * 5 / 4, b);
	return w->adaptive_spin;
}

__u64 xwi_wait_cost(__u64 spin, __u64 b, __u64 delay)
{
	return delay <= spin ? delay : spin + b;
}
