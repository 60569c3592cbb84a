// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The waiting strategies' decisions (userspace/lib/wait.h), driven with
 * synthetic time: the `waited` argument of xwi_waitpol_next() and the
 * `delay` argument of xwi_waitpol_done() are the clock.  No root, no
 * network, no real time.
 *
 *  - strategy names round trip;
 *  - spin budgets: spin never blocks, block blocks at once, spin-block
 *    spins exactly until its spin time (configured or B) then blocks,
 *    spin-yield yields after it, and once a wait stops spinning it never
 *    spins again;
 *  - the adaptive estimate moves as wait.c specifies (75th percentile of
 *    the delays within 2B plus a quarter, B/2 when most delays are long,
 *    always within [B/2, 2B], over a window of XWI_WAIT_HIST waits);
 *  - competitive ratios on synthetic arrival-delay sequences, including
 *    sequences built against each strategy: spin-block (S = B) within 2x
 *    of the offline optimum min(d, B) on every wait and in total, adaptive
 *    within 3x (its bound in wait.h); the cost model of xwi_wait_cost()
 *    is cross-checked against the decisions of xwi_waitpol_next();
 *  - a pull under way: spin-block and adaptive spin on to pull_spin
 *    (default XW_PULL_SPIN_DEFAULT, 2, 0 = off) times B since the last
 *    work, the other strategies unchanged.
 */
#include <stdbool.h>

#include "harness.h"
#include "rand.h"
#include "xdpwake.h"
#include "wait.h"

#define B_NS 10000ULL /* a synthetic block-and-wake cost */

static const char *act_name(enum xwi_wait_act a)
{
	return a == XWI_ACT_SPIN ? "spin" : a == XWI_ACT_YIELD ? "yield" : "block";
}

static const char *sname(enum xw_wait_strategy s)
{
	const char *n = xw_wait_strategy_name(s);

	return n ? n : "?";
}

/* ---- names ----------------------------------------------------------- */

static void names(void)
{
	char up[32];

	for (unsigned int s = 0; s < XW_WAIT_MAX; s++) {
		const char *n = xw_wait_strategy_name(s);

		CHECK(n && *n, "strategy %u has no name", s);
		if (!n)
			continue;
		CHECK(xw_wait_strategy_parse(n) == (int)s, "parse(\"%s\") = %d, want %u", n,
		      xw_wait_strategy_parse(n), s);
		for (size_t i = 0; i <= strlen(n) && i < sizeof(up); i++)
			up[i] = (char)(n[i] >= 'a' && n[i] <= 'z' ? n[i] - 'a' + 'A' : n[i]);
		up[sizeof(up) - 1] = 0;
		CHECK(xw_wait_strategy_parse(up) == (int)s, "parse(\"%s\") is not case-blind", up);
	}
	CHECK(!strcmp(sname(XW_WAIT_SPIN_BLOCK), "spin-block") &&
	      !strcmp(sname(XW_WAIT_SPIN_YIELD), "spin-yield") &&
	      !strcmp(sname(XW_WAIT_NOTIFY), "notify") && !strcmp(sname(XW_WAIT_SPIN), "spin") &&
	      !strcmp(sname(XW_WAIT_BLOCK), "block") && !strcmp(sname(XW_WAIT_YIELD), "yield") &&
	      !strcmp(sname(XW_WAIT_ADAPTIVE), "adaptive"),
	      "strategy names differ from the documented ones");
	CHECK(xw_wait_strategy_parse("sched") == XW_WAIT_YIELD, "\"sched\" is yield");
	CHECK(xw_wait_strategy_name(XW_WAIT_MAX) == NULL, "name past the end");
	CHECK(xw_wait_strategy_name(~0u) == NULL, "name of ~0");
	CHECK(xw_wait_strategy_parse("bogus") == -EINVAL, "parse bogus");
	CHECK(xw_wait_strategy_parse("") == -EINVAL, "parse empty");
	CHECK(xw_wait_strategy_parse("spin-") == -EINVAL, "parse a prefix");
	CHECK(xw_wait_strategy_parse(NULL) == -EINVAL, "parse NULL");
}

/* ---- spin budgets ---------------------------------------------------- */

/* The first waited time at which the policy stops spinning, searched in
 * [0, horizon] (decisions are a step function of `waited`: checked on a
 * grid by monotone()); horizon + 1 when it spins throughout. */
static __u64 first_non_spin(struct xwi_waitpol *w, __u64 horizon)
{
	__u64 lo = 0, hi = horizon;

	if (xwi_waitpol_next(w, horizon) == XWI_ACT_SPIN)
		return horizon + 1;
	while (lo < hi) {
		__u64 mid = lo + (hi - lo) / 2;

		if (xwi_waitpol_next(w, mid) == XWI_ACT_SPIN)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Once a wait stops spinning it does not spin again, and the action after
 * the spin phase is always the same one. */
static void monotone(struct xwi_waitpol *w, const char *what)
{
	enum xwi_wait_act after = XWI_ACT_SPIN, a;
	__u64 t = 0;

	for (int i = 0; i < 4000; i++) {
		a = xwi_waitpol_next(w, t);
		if (after != XWI_ACT_SPIN) {
			CHECK(a == after, "%s: %s at %llu ns after %s", what, act_name(a),
			      (unsigned long long)t, act_name(after));
			if (a != after)
				return;
		}
		after = a;
		t = t < 64 ? t + 1 : t + t / 50 + (__u64)(i % 7);
	}
}

struct budget_case {
	enum xw_wait_strategy s;
	__u64 spin_ns;
	__u64 expect_spin;	/* xwi_waitpol_spin() */
	__u64 switch_at;	/* first non-spin time; ~0: never */
	enum xwi_wait_act then; /* the action from then on */
};

static void budgets(void)
{
	const __u64 NEVER = ~0ULL, H = 1000000000000ULL; /* 1000 s of waiting */
	struct budget_case cases[] = {
		{ XW_WAIT_SPIN, 0, 0, NEVER, XWI_ACT_SPIN },
		{ XW_WAIT_SPIN, 3000, 0, NEVER, XWI_ACT_SPIN },
		{ XW_WAIT_YIELD, 0, 0, 0, XWI_ACT_YIELD },
		{ XW_WAIT_BLOCK, 0, 0, 0, XWI_ACT_BLOCK },
		{ XW_WAIT_BLOCK, 3000, 0, 0, XWI_ACT_BLOCK },
		{ XW_WAIT_NOTIFY, 0, 0, 0, XWI_ACT_BLOCK },
		{ XW_WAIT_SPIN_BLOCK, 0, B_NS, B_NS, XWI_ACT_BLOCK },
		{ XW_WAIT_SPIN_BLOCK, 3000, 3000, 3000, XWI_ACT_BLOCK },
		{ XW_WAIT_SPIN_BLOCK, 5 * B_NS, 5 * B_NS, 5 * B_NS, XWI_ACT_BLOCK },
		{ XW_WAIT_SPIN_BLOCK, 1, 1, 1, XWI_ACT_BLOCK },
		{ XW_WAIT_SPIN_YIELD, 0, B_NS, B_NS, XWI_ACT_YIELD },
		{ XW_WAIT_SPIN_YIELD, 7777, 7777, 7777, XWI_ACT_YIELD },
		/* adaptive without history: spin-block with S = B */
		{ XW_WAIT_ADAPTIVE, 0, B_NS, B_NS, XWI_ACT_BLOCK },
		/* the endpoint default is spin-block */
		{ XW_WAIT_DEFAULT, 0, B_NS, B_NS, XWI_ACT_BLOCK },
		{ XW_WAIT_DEFAULT, 4000, 4000, 4000, XWI_ACT_BLOCK },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct budget_case *c = &cases[i];
		struct xwi_waitpol w;
		char what[64];
		__u64 sw;

		snprintf(what, sizeof(what), "%s (spin_ns %llu)", sname(c->s),
			 (unsigned long long)c->spin_ns);
		xwi_waitpol_init(&w, c->s, B_NS, c->spin_ns);
		CHECK(c->s != XW_WAIT_DEFAULT || w.strategy == XW_WAIT_SPIN_BLOCK,
		      "default strategy resolved to %s", sname(w.strategy));
		CHECK(xwi_waitpol_spin(&w) == c->expect_spin, "%s: spin time %llu, want %llu", what,
		      (unsigned long long)xwi_waitpol_spin(&w), (unsigned long long)c->expect_spin);
		sw = first_non_spin(&w, H);
		if (c->switch_at == NEVER) {
			CHECK(sw == H + 1, "%s: stops spinning after %llu ns", what,
			      (unsigned long long)sw);
			CHECK(xwi_waitpol_next(&w, ~0ULL) == XWI_ACT_SPIN, "%s: stops at ~0", what);
		} else {
			CHECK(sw == c->switch_at, "%s: stops spinning after %llu ns, want %llu", what,
			      (unsigned long long)sw, (unsigned long long)c->switch_at);
			/* exactly at the budget, not one ns earlier */
			if (c->switch_at > 0)
				CHECK(xwi_waitpol_next(&w, c->switch_at - 1) == XWI_ACT_SPIN,
				      "%s: not spinning at %llu", what,
				      (unsigned long long)(c->switch_at - 1));
			CHECK(xwi_waitpol_next(&w, c->switch_at) == c->then &&
			      xwi_waitpol_next(&w, c->switch_at + 1) == c->then &&
			      xwi_waitpol_next(&w, H) == c->then && xwi_waitpol_next(&w, ~0ULL) == c->then,
			      "%s: %s after the spin phase, want %s", what,
			      act_name(xwi_waitpol_next(&w, c->switch_at)), act_name(c->then));
		}
		/* pure strategies never switch; block never spins at all */
		if (c->s == XW_WAIT_BLOCK || c->s == XW_WAIT_NOTIFY || c->s == XW_WAIT_YIELD)
			CHECK(xwi_waitpol_next(&w, 0) != XWI_ACT_SPIN, "%s spins at 0", what);
		monotone(&w, what);
		/* history does not change a non-adaptive strategy's budget */
		for (int k = 0; k < 40; k++)
			xwi_waitpol_done(&w, k % 2 ? 100 * B_NS : 1);
		CHECK(c->s == XW_WAIT_ADAPTIVE || xwi_waitpol_spin(&w) == c->expect_spin,
		      "%s: spin time moved to %llu with history", what,
		      (unsigned long long)xwi_waitpol_spin(&w));
	}
	printf("spin budgets: %zu strategy/spin-time cases, boundaries exact to the ns\n",
	       sizeof(cases) / sizeof(cases[0]));
}

/* ---- the adaptive estimate ------------------------------------------- */

static __u64 feed(struct xwi_waitpol *w, __u64 delay, int n)
{
	for (int i = 0; i < n; i++)
		xwi_waitpol_done(w, delay);
	return xwi_waitpol_spin(w);
}

static __u64 xs;

static __u64 rnd(void)
{
	return xwu_xorshift64(&xs);
}

static void adaptive(void)
{
	const __u64 B = B_NS;
	struct xwi_waitpol w;
	__u64 s, prev;

	/* All short (B/10): the estimate shrinks towards the delays, but
	 * not below B/2, from the first wait on. */
	xwi_waitpol_init(&w, XW_WAIT_ADAPTIVE, B, 0);
	CHECK(xwi_waitpol_spin(&w) == B, "adaptive starts at B: %llu",
	      (unsigned long long)xwi_waitpol_spin(&w));
	for (int i = 0; i < 3 * XWI_WAIT_HIST; i++) {
		s = feed(&w, B / 10, 1);
		CHECK(s == B / 2, "all short (B/10), wait %d: spin %llu, want B/2 = %llu", i,
		      (unsigned long long)s, (unsigned long long)(B / 2));
	}
	/* Short but above B/2 * 4/5: tracks them (75th pct + 1/4). */
	xwi_waitpol_init(&w, XW_WAIT_ADAPTIVE, B, 0);
	s = feed(&w, 6 * B / 10, 1);
	CHECK(s == 6 * B / 10 * 5 / 4, "delays 0.6B: spin %llu, want 0.75B",
	      (unsigned long long)s);
	s = feed(&w, 6 * B / 10, XWI_WAIT_HIST);
	CHECK(s == 6 * B / 10 * 5 / 4, "delays 0.6B (full history): spin %llu, want 0.75B",
	      (unsigned long long)s);
	/* Shrinking gradually from B as shorter delays arrive (from 0.8B,
	 * whose 1.25x is B): never up, never below B/2. */
	xwi_waitpol_init(&w, XW_WAIT_ADAPTIVE, B, 0);
	prev = xwi_waitpol_spin(&w);
	for (__u64 d = 8 * B / 10; d >= B / 8; d -= B / 16) {
		s = feed(&w, d, 1);
		CHECK(s <= prev && s >= B / 2, "decreasing delays: spin %llu after %llu (was %llu)",
		      (unsigned long long)s, (unsigned long long)d, (unsigned long long)prev);
		prev = s;
	}
	s = feed(&w, B / 8, XWI_WAIT_HIST);
	CHECK(s == B / 2, "after a window of B/8 delays: spin %llu, want B/2",
	      (unsigned long long)s);

	/* All long (10B): spinning is waste, spin the minimum B/2. */
	xwi_waitpol_init(&w, XW_WAIT_ADAPTIVE, B, 0);
	for (int i = 0; i < 2 * XWI_WAIT_HIST; i++) {
		s = feed(&w, 10 * B, 1);
		CHECK(s == B / 2, "all long, wait %d: spin %llu, want B/2", i, (unsigned long long)s);
	}
	/* Just above B: the spin covers them (d * 5/4, up to 2B). */
	{
		__u64 ds[] = { B + 1, 11 * B / 10, 12 * B / 10, 3 * B / 2, 16 * B / 10,
			       17 * B / 10, 19 * B / 10, 2 * B };

		for (size_t i = 0; i < sizeof(ds) / sizeof(ds[0]); i++) {
			__u64 want = ds[i] * 5 / 4 > 2 * B ? 2 * B : ds[i] * 5 / 4;

			xwi_waitpol_init(&w, XW_WAIT_ADAPTIVE, B, 0);
			s = feed(&w, ds[i], XWI_WAIT_HIST);
			CHECK(s == want && s >= ds[i], "delays %llu: spin %llu, want %llu (covering)",
			      (unsigned long long)ds[i], (unsigned long long)s,
			      (unsigned long long)want);
			CHECK(xwi_waitpol_next(&w, ds[i] - 1) == XWI_ACT_SPIN,
			      "delays %llu: blocks before the message", (unsigned long long)ds[i]);
		}
	}
	/* Beyond 2B: long, B/2. */
	xwi_waitpol_init(&w, XW_WAIT_ADAPTIVE, B, 0);
	s = feed(&w, 2 * B + 1, XWI_WAIT_HIST);
	CHECK(s == B / 2, "delays 2B+1: spin %llu, want B/2", (unsigned long long)s);

	/* Majority rule over the window: after a full window of long
	 * delays, 7 of 16 short (1.2B... covered) are not enough, 8 are. */
	xwi_waitpol_init(&w, XW_WAIT_ADAPTIVE, B, 0);
	feed(&w, 10 * B, XWI_WAIT_HIST);
	s = feed(&w, 12 * B / 10, XWI_WAIT_HIST / 2 - 1);
	CHECK(s == B / 2, "7 of 16 within 2B: spin %llu, want B/2", (unsigned long long)s);
	s = feed(&w, 12 * B / 10, 1);
	CHECK(s == 15 * B / 10, "8 of 16 within 2B: spin %llu, want 1.5B", (unsigned long long)s);
	/* The window forgets: 16 waits later only the new delays count. */
	s = feed(&w, 10 * B, XWI_WAIT_HIST);
	CHECK(s == B / 2, "back to long: spin %llu", (unsigned long long)s);

	/* The 75th percentile: sorted index 3n/4 of the delays within 2B. */
	xwi_waitpol_init(&w, XW_WAIT_ADAPTIVE, B, 0);
	feed(&w, 4 * B / 10, 12);
	s = feed(&w, 12 * B / 10, 4); /* sorted[12] is the first 1.2B */
	CHECK(s == 15 * B / 10, "12 x 0.4B + 4 x 1.2B: spin %llu, want 1.5B",
	      (unsigned long long)s);
	xwi_waitpol_init(&w, XW_WAIT_ADAPTIVE, B, 0);
	feed(&w, 12 * B / 10, 3);
	s = feed(&w, 6 * B / 10, 13); /* sorted[12] is the last 0.6B */
	CHECK(s == 6 * B / 10 * 5 / 4, "3 x 1.2B + 13 x 0.6B: spin %llu, want 0.75B",
	      (unsigned long long)s);

	/* Clamps hold for anything (random delays of every scale), for
	 * several B, including B = 1 and a zero delay. */
	{
		__u64 bs[] = { 1, 2, 3, 1000, B, 123457, 50000000 };

		xs = 0x9E3779B97F4A7C15ULL;
		for (size_t k = 0; k < sizeof(bs) / sizeof(bs[0]); k++) {
			__u64 b = bs[k];
			int bad = 0;

			xwi_waitpol_init(&w, XW_WAIT_ADAPTIVE, b, 0);
			for (int i = 0; i < 20000; i++) {
				__u64 r = rnd(), d;

				switch (r % 5) {
				case 0: d = 0; break;
				case 1: d = (r >> 8) % (b + 1); break;
				case 2: d = (r >> 8) % (3 * b + 1); break;
				case 3: d = (r >> 8) % (100 * b + 1); break;
				default: d = r >> (r % 64 ? r % 64 : 1); break;
				}
				s = feed(&w, d, 1);
				bad += s < b / 2 || s > 2 * b;
			}
			CHECK(bad == 0, "B %llu: %d adaptive spin times outside [B/2, 2B]",
			      (unsigned long long)b, bad);
		}
	}
	printf("adaptive estimate: short -> max(B/2, 1.25 x p75), long -> B/2, "
	       "just above B -> covered up to 2B, clamps hold\n");
}

/* ---- competitive ratios ---------------------------------------------- */

/* The cost of one wait from the decisions themselves: spin while
 * next(t) says so; if it stops spinning before the message (at d), pay the
 * time spun plus B (yield counts as blocking in this model). */
static __u64 cost_by_decisions(struct xwi_waitpol *w, __u64 b, __u64 d)
{
	__u64 t = first_non_spin(w, d);

	return t < d ? t + b : d;
}

enum { S_SPIN, S_BLOCK, S_SB, S_ADAPT, S_OPT, S_NR };

struct seq {
	const char *name;
	int n;
	__u64 d[2000];
	int adversary; /* 1: d = adaptive's spin + 1, built online */
};

static __u64 minu(__u64 a, __u64 b)
{
	return a < b ? a : b;
}

static void run_seq(struct seq *q, double ratios[S_NR])
{
	const __u64 B = B_NS;
	__u64 tot[S_NR] = { 0 };
	struct xwi_waitpol sb, ad, sp, bl;
	int worst_sb = -1, worst_ad = -1;
	double wr_sb = 0, wr_ad = 0;

	xwi_waitpol_init(&sb, XW_WAIT_SPIN_BLOCK, B, 0);
	xwi_waitpol_init(&ad, XW_WAIT_ADAPTIVE, B, 0);
	xwi_waitpol_init(&sp, XW_WAIT_SPIN, B, 0);
	xwi_waitpol_init(&bl, XW_WAIT_BLOCK, B, 0);
	for (int i = 0; i < q->n; i++) {
		__u64 d, c[S_NR], s_ad = xwi_waitpol_spin(&ad);

		if (q->adversary)
			q->d[i] = s_ad + 1; /* just too late for adaptive's spin */
		d = q->d[i];
		c[S_SPIN] = d;
		c[S_BLOCK] = xwi_wait_cost(0, B, d);
		c[S_SB] = xwi_wait_cost(B, B, d);
		c[S_ADAPT] = xwi_wait_cost(s_ad, B, d);
		c[S_OPT] = minu(d, B);
		/* the cost model agrees with the strategies' decisions */
		CHECK(c[S_SB] == cost_by_decisions(&sb, B, d) &&
		      c[S_ADAPT] == cost_by_decisions(&ad, B, d) &&
		      c[S_BLOCK] == cost_by_decisions(&bl, B, d) &&
		      c[S_SPIN] == cost_by_decisions(&sp, B, d),
		      "%s #%d (d %llu): xwi_wait_cost disagrees with xwi_waitpol_next", q->name, i,
		      (unsigned long long)d);
		/* per wait: spin-block <= 2 opt, adaptive <= 3 opt */
		if (c[S_SB] > 2 * c[S_OPT] && worst_sb < 0)
			worst_sb = i;
		if (c[S_ADAPT] > 3 * c[S_OPT] && worst_ad < 0)
			worst_ad = i;
		if (c[S_OPT]) {
			wr_sb = wr_sb > (double)c[S_SB] / c[S_OPT] ? wr_sb : (double)c[S_SB] / c[S_OPT];
			wr_ad = wr_ad > (double)c[S_ADAPT] / c[S_OPT] ? wr_ad
								     : (double)c[S_ADAPT] / c[S_OPT];
		}
		for (int k = 0; k < S_NR; k++)
			tot[k] += c[k];
		xwi_waitpol_done(&ad, d);
		xwi_waitpol_done(&sb, d);
	}
	CHECK(worst_sb < 0, "%s: spin-block costs more than 2x the optimum at wait %d (d %llu)",
	      q->name, worst_sb, worst_sb < 0 ? 0ULL : (unsigned long long)q->d[worst_sb]);
	CHECK(worst_ad < 0, "%s: adaptive costs more than 3x the optimum at wait %d (d %llu)",
	      q->name, worst_ad, worst_ad < 0 ? 0ULL : (unsigned long long)q->d[worst_ad]);
	CHECK(tot[S_SB] <= 2 * tot[S_OPT], "%s: spin-block total %llu > 2 x optimum %llu", q->name,
	      (unsigned long long)tot[S_SB], (unsigned long long)tot[S_OPT]);
	CHECK(tot[S_ADAPT] <= 3 * tot[S_OPT], "%s: adaptive total %llu > 3 x optimum %llu",
	      q->name, (unsigned long long)tot[S_ADAPT], (unsigned long long)tot[S_OPT]);
	for (int k = 0; k < S_NR; k++)
		ratios[k] = tot[S_OPT] ? (double)tot[k] / (double)tot[S_OPT] : 1.0;
	printf("%-26s %5d %9.3f %9.3f %9.3f %9.3f %10.3f %10.3f\n", q->name, q->n, ratios[S_SPIN],
	       ratios[S_BLOCK], ratios[S_SB], ratios[S_ADAPT], wr_sb, wr_ad);
}

static void competitive(void)
{
	const __u64 B = B_NS;
	static struct seq q;
	double r[S_NR];

	printf("competitive ratios (total cost / offline optimum; B = %llu ns; worst single "
	       "wait last):\n", (unsigned long long)B);
	printf("%-26s %5s %9s %9s %9s %9s %10s %10s\n", "sequence", "waits", "spin", "block",
	       "spin-blk", "adaptive", "worst s-b", "worst adap");

#define SEQ(NAME, N, EXPR)                               \
	do {                                             \
		memset(&q, 0, sizeof(q));                \
		q.name = NAME;                           \
		q.n = N;                                 \
		for (int i = 0; i < N; i++)              \
			q.d[i] = (EXPR);                 \
		run_seq(&q, r);                          \
	} while (0)

	xs = 0x2545F4914F6CDD1DULL;
	/* all short: spinning is optimal; spin-block pays nothing extra */
	SEQ("all short (B/10)", 1000, B / 10);
	CHECK(r[S_SB] == 1.0 && r[S_SPIN] == 1.0, "all short: spin-block %.3f, spin %.3f",
	      r[S_SB], r[S_SPIN]);
	CHECK(r[S_BLOCK] >= 9.9, "all short: block only %.3f", r[S_BLOCK]);
	SEQ("short random (0..B)", 1000, rnd() % (B + 1));
	CHECK(r[S_SB] == 1.0, "delays <= B: spin-block %.3f", r[S_SB]);
	/* all long: blocking is optimal; adaptive learns to spin B/2 */
	SEQ("all long (10B)", 1000, 10 * B);
	CHECK(r[S_BLOCK] == 1.0 && r[S_SPIN] >= 9.9, "all long: block %.3f, spin %.3f",
	      r[S_BLOCK], r[S_SPIN]);
	CHECK(r[S_SB] > 1.99 && r[S_ADAPT] < 1.51,
	      "all long: spin-block %.3f (want 2), adaptive %.3f (want ~1.5)", r[S_SB], r[S_ADAPT]);
	/* the adversary of spin-block: always just after its spin time */
	SEQ("just above B (B+1)", 1000, B + 1);
	CHECK(r[S_SB] > 1.99, "B+1: spin-block %.3f, want ~2", r[S_SB]);
	CHECK(r[S_ADAPT] < 1.01, "B+1: adaptive %.3f should cover them", r[S_ADAPT]);
	SEQ("consistently 1.2B", 1000, 12 * B / 10);
	CHECK(r[S_ADAPT] < 1.21 && r[S_ADAPT] < r[S_SB], "1.2B: adaptive %.3f, spin-block %.3f",
	      r[S_ADAPT], r[S_SB]);
	/* mixed */
	SEQ("mixed uniform (0..4B)", 2000, rnd() % (4 * B + 1));
	SEQ("bimodal B/20 | 5B", 2000, rnd() % 2 ? B / 20 : 5 * B);
	SEQ("exponential-ish", 2000, (rnd() % (2 * B + 1)) >> (rnd() % 6));
	SEQ("heavy tail", 2000, rnd() % 10 ? rnd() % (B / 2) : 50 * B + rnd() % (1000 * B));
	/* alternating: against any history-based estimate */
	SEQ("alternating B/10 | 10B", 2000, i % 2 ? 10 * B : B / 10);
	SEQ("alternating B/2+1 | 2B+1", 2000, i % 2 ? 2 * B + 1 : B / 2 + 1);
	SEQ("runs of 9 short, 7 long", 2000, i % 16 < 9 ? 19 * B / 10 : 3 * B);
	SEQ("runs 8 x 1.9B, 8 x B/2+1", 2000, (i / 8) % 2 ? B / 2 + 1 : 19 * B / 10);
	SEQ("ramp 0..3B", 2000, (__u64)i * 3 * B / 2000);
	SEQ("zero delays", 500, 0);
	/* the adversary of adaptive: always 1 ns after its current spin */
	memset(&q, 0, sizeof(q));
	q.name = "adaptive's spin + 1";
	q.n = 2000;
	q.adversary = 1;
	run_seq(&q, r);
	CHECK(r[S_ADAPT] > 2.0 && r[S_ADAPT] <= 3.0,
	      "the adversary drives adaptive towards (not past) 3x: %.3f", r[S_ADAPT]);
	CHECK(r[S_SB] <= 2.0, "adaptive's adversary: spin-block %.3f", r[S_SB]);
#undef SEQ
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* The adaptive spin time against the rule written out with qsort: the
 * delays of the last XWI_WAIT_HIST waits within 2B; at least half of them
 * there, else B/2; the 75th percentile of those, plus a quarter, within
 * [B/2, 2B].  Random mixtures of short, medium and long delays. */
static void adaptive_reference(void)
{
	const __u64 B = B_NS;
	struct xwi_waitpol w;
	__u64 hist[XWI_WAIT_HIST];
	int nh = 0, pos = 0, bad = 0;

	xs = 0x9e3779b97f4a7c15ULL;
	xwi_waitpol_init(&w, XW_WAIT_ADAPTIVE, B, 0);
	for (int i = 0; i < 20000; i++) {
		__u64 d = rnd() % 4 == 0 ? rnd() % (5 * B) : rnd() % (2 * B + 2), in[XWI_WAIT_HIST],
		      want, got;
		int n = 0;

		xwi_waitpol_done(&w, d);
		hist[pos] = d;
		pos = (pos + 1) % XWI_WAIT_HIST;
		if (nh < XWI_WAIT_HIST)
			nh++;
		for (int k = 0; k < nh; k++)
			if (hist[k] <= 2 * B)
				in[n++] = hist[k];
		if (n * 2 < nh) {
			want = B / 2;
		} else {
			qsort(in, n, sizeof(in[0]), cmp_u64);
			want = in[(n * 3) / 4 < n ? (n * 3) / 4 : n - 1] * 5 / 4;
			want = want < B / 2 ? B / 2 : want > 2 * B ? 2 * B : want;
		}
		got = xwi_waitpol_spin(&w);
		if (got != want && bad++ < 5)
			CHECK(0, "adaptive after %d waits: spin %llu, the rule says %llu", i + 1,
			      (unsigned long long)got, (unsigned long long)want);
	}
	CHECK(bad == 0, "adaptive spin differs from the rule in %d of 20000 waits", bad);
}

/* B learned from wake-ups on the endpoint's own path: the calibrated value
 * until XWI_WAKE_MIN wakes are in, then the median of the last
 * XWI_WAKE_HIST; spin-block's spin and adaptive's bounds follow it;
 * impossible samples are ignored. */
static void learned_block_cost(void)
{
	const __u64 B = B_NS;
	struct xwi_waitpol w;

	xwi_waitpol_init(&w, XW_WAIT_SPIN_BLOCK, B, 0);
	for (int i = 0; i < XWI_WAKE_MIN - 1; i++)
		xwi_waitpol_wake(&w, 4 * B);
	CHECK(w.block_cost == B && xwi_waitpol_spin(&w) == B,
	      "B moved to %llu with %d wakes (needs %d)", (unsigned long long)w.block_cost,
	      XWI_WAKE_MIN - 1, XWI_WAKE_MIN);
	xwi_waitpol_wake(&w, 4 * B);
	CHECK(w.block_cost == 4 * B && xwi_waitpol_spin(&w) == 4 * B,
	      "B %llu after %d wakes of 4B, spin %llu", (unsigned long long)w.block_cost,
	      XWI_WAKE_MIN, (unsigned long long)xwi_waitpol_spin(&w));
	/* the median of the window: one outlier does not move it (7B: below
	 * XWI_WAKE_CAP times B; a wake above it is not learned at all,
	 * shared_cpu()) */
	xwi_waitpol_wake(&w, 7 * B);
	CHECK(w.block_cost == 4 * B, "one slow wake moved B to %llu",
	      (unsigned long long)w.block_cost);
	/* impossible samples are ignored: 0 and over XWI_WAKE_MAX_NS */
	for (int i = 0; i < 2 * XWI_WAKE_HIST; i++) {
		xwi_waitpol_wake(&w, 0);
		xwi_waitpol_wake(&w, XWI_WAKE_MAX_NS + 1);
	}
	CHECK(w.block_cost == 4 * B && w.nwake == XWI_WAKE_MIN + 1,
	      "ignored samples counted: B %llu, %u samples", (unsigned long long)w.block_cost,
	      w.nwake);
	/* the window slides: cheaper wakes bring B down, below the calibration */
	for (int i = 0; i < XWI_WAKE_HIST; i++)
		xwi_waitpol_wake(&w, B / 2);
	CHECK(w.block_cost == B / 2, "B %llu after a window of B/2 wakes",
	      (unsigned long long)w.block_cost);
	/* a configured spin time is kept whatever B is */
	xwi_waitpol_init(&w, XW_WAIT_SPIN_BLOCK, B, 3 * B);
	for (int i = 0; i < XWI_WAKE_HIST; i++)
		xwi_waitpol_wake(&w, 7 * B);
	CHECK(xwi_waitpol_spin(&w) == 3 * B, "configured spin moved to %llu",
	      (unsigned long long)xwi_waitpol_spin(&w));
	/* adaptive: its bounds [B/2, 2B] follow the learned B */
	xwi_waitpol_init(&w, XW_WAIT_ADAPTIVE, B, 0);
	for (int i = 0; i < XWI_WAIT_HIST; i++)
		xwi_waitpol_done(&w, 100 * B); /* long waits: spin the minimum */
	CHECK(xwi_waitpol_spin(&w) == B / 2, "adaptive, long waits: %llu",
	      (unsigned long long)xwi_waitpol_spin(&w));
	for (int i = 0; i < XWI_WAKE_HIST; i++)
		xwi_waitpol_wake(&w, 4 * B);
	CHECK(xwi_waitpol_spin(&w) == 2 * B, "adaptive after B became 4B: %llu, want %llu",
	      (unsigned long long)xwi_waitpol_spin(&w), (unsigned long long)(2 * B));
	printf("learned B: calibrated until %d wakes, then the median of %d; outliers ignored\n",
	       XWI_WAKE_MIN, XWI_WAKE_HIST);
}

/* A shared CPU (issue 27): a detection makes the next waits skip their
 * spin, 2 of them, doubling on each detection up to XWI_SHARED_SKIP_MAX; a
 * wait that found the CPU to itself resets the count; probes come at half
 * the spin time (2-20 us) and then each time the spin doubles; a wake over XWI_WAKE_CAP times the
 * calibrated B is not learned (the woken thread waited for the CPU). */
static void shared_cpu(void)
{
	const __u64 B = B_NS;
	struct xwi_waitpol w;
	unsigned int expect = XWI_SHARED_SKIP_MIN;
	int bad = 0;

	xwi_waitpol_init(&w, XW_WAIT_SPIN_BLOCK, B, 0);
	CHECK(!xwi_waitpol_shared(&w), "a new endpoint skips its spin");
	for (int d = 0; d < 8; d++) {
		unsigned int n = 0;

		xwi_waitpol_contended(&w);
		while (xwi_waitpol_shared(&w) && n < 1000)
			n++;
		bad += n != expect;
		if (n != expect)
			printf("detection %d: %u waits skipped, want %u\n", d, n, expect);
		expect = expect * 2 > XWI_SHARED_SKIP_MAX ? XWI_SHARED_SKIP_MAX : expect * 2;
	}
	CHECK(bad == 0, "skip counts after repeated detections wrong in %d cases", bad);
	xwi_waitpol_alone(&w);
	xwi_waitpol_contended(&w);
	{
		unsigned int n = 0;

		while (xwi_waitpol_shared(&w))
			n++;
		CHECK(n == XWI_SHARED_SKIP_MIN, "after a wait alone: %u skipped, want %d", n,
		      XWI_SHARED_SKIP_MIN);
	}
	/* the first probe at half the spin, within [2 us, 20 us]; then doubling */
	CHECK(xwi_waitpol_probe_at(0, 12000) == 6000 &&
		      xwi_waitpol_probe_at(0, 1000) == XWI_PROBE_FIRST_NS &&
		      xwi_waitpol_probe_at(0, 1000000) == XWI_PROBE_MAX_NS &&
		      xwi_waitpol_probe_at(6000, 12000) == 12000 &&
		      xwi_waitpol_probe_at(XWI_PROBE_MAX_NS, 1000000) == 2 * XWI_PROBE_MAX_NS,
	      "probe schedule");
	/* late wakes are not learned; the rest are */
	xwi_waitpol_init(&w, XW_WAIT_SPIN_BLOCK, B, 0);
	for (int i = 0; i < 4 * XWI_WAKE_HIST; i++)
		CHECK(!xwi_waitpol_wake(&w, XWI_WAKE_CAP * B + 1), "a late wake was learned");
	CHECK(w.block_cost == B && w.nwake == 0, "late wakes moved B to %llu (%u samples)",
	      (unsigned long long)w.block_cost, w.nwake);
	for (int i = 0; i < XWI_WAKE_HIST; i++)
		CHECK(xwi_waitpol_wake(&w, XWI_WAKE_CAP * B), "a wake at the cap refused");
	CHECK(w.block_cost == XWI_WAKE_CAP * B, "B %llu after wakes at the cap",
	      (unsigned long long)w.block_cost);
	printf("shared CPU: skips %d doubling to %d, first probe at half the spin (%llu-%llu ns), "
	       "wakes over %dx B not learned\n", XWI_SHARED_SKIP_MIN, XWI_SHARED_SKIP_MAX,
	       (unsigned long long)XWI_PROBE_FIRST_NS, (unsigned long long)XWI_PROBE_MAX_NS,
	       XWI_WAKE_CAP);
}

/* A pull under way (issue 25): spin-block and adaptive spin on instead of
 * blocking until pull_spin times B since the last pass that found work,
 * and no longer (the default, and a multiple set; 0: not at all); the
 * other strategies keep their decisions; B as learned from wakes moves
 * the bound. */
static void pull_spin(void)
{
	static const enum xw_wait_strategy hybrid[] = { XW_WAIT_SPIN_BLOCK, XW_WAIT_ADAPTIVE };
	static const enum xw_wait_strategy pure[] = { XW_WAIT_SPIN, XW_WAIT_YIELD, XW_WAIT_BLOCK,
						      XW_WAIT_SPIN_YIELD, XW_WAIT_NOTIFY };
	static const __u32 mult[] = { XW_PULL_SPIN_DEFAULT, 2, 0 };
	const __u64 B = B_NS;
	struct xwi_waitpol w;
	__u64 bound;
	int bad = 0;

	xwi_waitpol_init(&w, XW_WAIT_SPIN_BLOCK, B, 0);
	CHECK(w.pull_spin == XW_PULL_SPIN_DEFAULT, "a new policy's pull_spin is %u, not %u",
	      w.pull_spin, XW_PULL_SPIN_DEFAULT);
	for (size_t m = 0; m < sizeof(mult) / sizeof(mult[0]); m++) {
		const __u64 at[] = { 0, 1, B / 2, B, 2 * B - 1, 2 * B, 2 * B + 1,
				     XW_PULL_SPIN_DEFAULT * B - 1, XW_PULL_SPIN_DEFAULT * B,
				     XW_PULL_SPIN_DEFAULT * B + 1, 100 * B };

		bound = mult[m] * B;
		for (size_t i = 0; i < sizeof(hybrid) / sizeof(hybrid[0]); i++) {
			xwi_waitpol_init(&w, hybrid[i], B, 0);
			w.pull_spin = mult[m];
			for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
				enum xwi_wait_act act = xwi_waitpol_next(&w, at[k]),
						  got = xwi_waitpol_pull(&w, act, at[k]);
				enum xwi_wait_act want = at[k] < bound ? XWI_ACT_SPIN : act;

				if (got != want) {
					bad++;
					printf("%s, pull_spin %u, at %llu ns: %s, want %s\n",
					       sname(hybrid[i]), mult[m], (unsigned long long)at[k],
					       act_name(got), act_name(want));
				}
			}
			/* past the bound the strategy's own block stands */
			CHECK(xwi_waitpol_pull(&w, XWI_ACT_BLOCK, bound) == XWI_ACT_BLOCK,
			      "%s: spins past %llu ns", sname(hybrid[i]), (unsigned long long)bound);
		}
		for (size_t i = 0; i < sizeof(pure) / sizeof(pure[0]); i++) {
			xwi_waitpol_init(&w, pure[i], B, 0);
			w.pull_spin = mult[m];
			for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
				enum xwi_wait_act act = xwi_waitpol_next(&w, at[k]);

				if (xwi_waitpol_pull(&w, act, at[k]) != act) {
					bad++;
					printf("%s at %llu ns: the pull changed %s\n", sname(pure[i]),
					       (unsigned long long)at[k], act_name(act));
				}
			}
		}
	}
	CHECK(bad == 0, "pull-spin decisions wrong in %d cases", bad);
	/* off: a block is a block from the first nanosecond */
	xwi_waitpol_init(&w, XW_WAIT_SPIN_BLOCK, B, 0);
	w.pull_spin = 0;
	CHECK(xwi_waitpol_pull(&w, XWI_ACT_BLOCK, 0) == XWI_ACT_BLOCK, "pull_spin 0 still spins");
	/* the bound follows B as learned from the path's wakes */
	xwi_waitpol_init(&w, XW_WAIT_SPIN_BLOCK, B, 0);
	bound = XW_PULL_SPIN_DEFAULT * B;
	for (int i = 0; i < XWI_WAKE_HIST; i++)
		xwi_waitpol_wake(&w, 3 * B);
	CHECK(xwi_waitpol_pull(&w, XWI_ACT_BLOCK, bound) == XWI_ACT_SPIN &&
		      xwi_waitpol_pull(&w, XWI_ACT_BLOCK, 3 * bound) == XWI_ACT_BLOCK,
	      "the bound does not follow the learned B (%llu ns)",
	      (unsigned long long)w.block_cost);
	printf("pull under way: spin-block and adaptive spin until pull_spin (%u, 2, 0) x B "
	       "since the last work, the other strategies unchanged\n", XW_PULL_SPIN_DEFAULT);
}

int main(void)
{
	names();
	budgets();
	adaptive();
	adaptive_reference();
	competitive();
	learned_block_cost();
	shared_cpu();
	pull_spin();
	return xwt_done();
}
