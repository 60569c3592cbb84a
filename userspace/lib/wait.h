/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * wait.h - the waiting strategies' decisions, kept pure (no clock, no I/O)
 * so that tests drive them with synthetic time.
 *
 * Cost model (Karlin et al., as the SHRIMP paper uses it): a message that
 * arrives d ns after the wait began costs d if we are still spinning, or
 * S + B if we spun S ns and then blocked (B: one block-and-wake).  The
 * offline optimum is min(d, B).
 *  - spin-block with S = B is 2-competitive: d <= B costs d; d > B costs
 *    2B against B.
 *  - adaptive picks S in [B/2, 2B] from the recent delays: d <= S costs d;
 *    S < d <= B costs S + B <= 3 min(d, B) (S >= B/2); d > B costs
 *    S + B <= 3B.  3-competitive in the worst case, and better than
 *    spin-block when delays are consistently long (S = B/2: 1.5B against 2B)
 *    or consistently just above B (S covers them).
 */
#ifndef XWI_WAIT_H
#define XWI_WAIT_H

#include <linux/types.h>
#include <stdbool.h>
#include "xdpwake.h"

#define XWI_WAIT_HIST 16
/* Wakes on this endpoint's path that B is learned from (see
 * xwi_waitpol_wake); fewer than XWI_WAKE_MIN: the calibrated B. */
#define XWI_WAKE_HIST 8
#define XWI_WAKE_MIN 4
/* A wake record older than this is not a wake-up latency (a test's fixed
 * program clock, a record read long after). */
#define XWI_WAKE_MAX_NS 10000000ULL
/* A wake that took more than XWI_WAKE_CAP times the calibrated B is not
 * learned into B: the woken thread waited for a CPU (on a CPU it shares
 * with its peer, that is the peer's own spin: learning it made B, and the
 * spin, grow wake after wake up to the scheduler's tick, issue 27). */
#define XWI_WAKE_CAP 8

/*
 * A shared CPU (issue 27).  A hybrid wait (spin-block, adaptive) that spins
 * while another task waits for its CPU delays that task: on a CPU shared by
 * both ends of a ping-pong, the task is the peer, and the message cannot
 * come before the spin ends.  So the spin probes: after half its spin time
 * (at least XWI_PROBE_FIRST_NS, at most XWI_PROBE_MAX_NS: a wait that ends
 * sooner makes no system call), and then each time the spin has doubled,
 * it yields once
 * (sched_yield(): a system call, ~1-2 us when nobody else is runnable);
 * a yield that came back after more than XWI_OFFCPU_NS, or a gap that long
 * between two spins (preempted), means another task ran on this CPU
 * meanwhile.  Then the spin ends (a pass, then the block), and the next
 * waits block at once without spinning: first XWI_SHARED_SKIP_MIN of
 * them, doubling while every spin finds the CPU shared, up to
 * XWI_SHARED_SKIP_MAX (then one wait in 65 spins to look again); a spin
 * that finds the CPU to itself resets the count.
 */
#define XWI_PROBE_FIRST_NS 2000ULL
#define XWI_PROBE_MAX_NS 20000ULL
#define XWI_OFFCPU_NS 5000ULL
#define XWI_SHARED_SKIP_MIN 2
#define XWI_SHARED_SKIP_MAX 64

/*
 * A pull under way (issue 25).  A receiver that pulls a large message asked
 * for its fragments and knows more are coming; the sender's frames arrive
 * in bursts (a TX kick's batch, a NAPI poll's flush into the RX ring) with
 * gaps that can outlast the spin time.  Blocking in such a gap costs the
 * receiver its wake latency and, on veth, the sender a wake IPI per burst:
 * at MTU 1500 the default wait's stream ran at 0.42-0.60x of the raw
 * floor, busy-polling at 0.71-0.80x (bench/RESULTS.md).  So while a
 * hybrid wait's endpoint has PULL blocks out, the wait spins until
 * pull_spin (xw_endpoint_opts, default XW_PULL_SPIN_DEFAULT) times B has
 * passed since the last pass that found work, not only its spin time
 * (xwi_waitpol_pull; pull_spin 0: off).  Bounded: a sender that stops
 * (dead, stalled, descheduled) costs at most that much spinning, then the
 * wait blocks as before (a sleep that ends without a frame does not start
 * another such spin).  A shared CPU: see waitloop.c.
 */

enum xwi_wait_act {
	XWI_ACT_SPIN = 0,
	XWI_ACT_YIELD = 1,
	XWI_ACT_BLOCK = 2,
};

struct xwi_waitpol {
	enum xw_wait_strategy strategy;
	__u64 block_cost; /* B */
	__u64 spin_ns;	  /* configured spin time (0: B) */
	__u64 hist[XWI_WAIT_HIST];   /* the last delays, oldest at pos once full */
	__u64 sorted[XWI_WAIT_HIST]; /* scratch: those within 2B, ascending */
	unsigned int nhist, pos;
	__u64 adaptive_spin; /* the adaptive spin time, valid unless stale */
	bool stale;	     /* delays recorded since adaptive_spin was worked out */
	__u64 block_cal;     /* B as calibrated at start-up */
	__u64 wake[XWI_WAKE_HIST]; /* the last wake-up latencies on the path */
	unsigned int nwake, wpos;
	unsigned int wake_cap; /* XWI_WAKE_CAP (init); 0: every wake is learned */
	/* A shared CPU (above): waits left that block at once, and how many
	 * the next detection skips.  Kept in the endpoint's policy even when a
	 * call chooses its own strategy. */
	unsigned int shared_left, shared_skip;
	/* Spin this many B past the last pass that found work while pulling
	 * (above; 0: off).  Kept when the strategy changes. */
	__u32 pull_spin;
};

void xwi_waitpol_init(struct xwi_waitpol *w, enum xw_wait_strategy s, __u64 block_cost,
		      __u64 spin_ns);
/* Spin time before the pure strategy takes over (0 for spin/yield/block,
 * which never switch). */
__u64 xwi_waitpol_spin(struct xwi_waitpol *w);
/* What to do after @waited ns of the current wait without completion. */
enum xwi_wait_act xwi_waitpol_next(struct xwi_waitpol *w, __u64 waited);
/* A wait ended: the message arrived @delay ns after it began (recorded
 * only; the adaptive estimate is worked out when asked for). */
void xwi_waitpol_done(struct xwi_waitpol *w, __u64 delay);
/* The adaptive strategy's spin time from the recorded delays. */
__u64 xwi_waitpol_adaptive(struct xwi_waitpol *w);
/* A wake-up on the endpoint's own path took @lat ns, from the XDP
 * program's decision to the woken thread reading the record.  B becomes the
 * median of the last XWI_WAKE_HIST (once XWI_WAKE_MIN are in): the
 * calibration at start-up wakes a thread from BPF_PROG_TEST_RUN, which can
 * be several times cheaper than a wake from the data path (8.5 us against
 * 35 us on the development VM), and a spin time below the real cost makes
 * both sides of a ping-pong block in turn once one has.  A wake above
 * XWI_WAKE_CAP times the calibrated B is not learned (false returned): its
 * thread waited for a CPU. */
bool xwi_waitpol_wake(struct xwi_waitpol *w, __u64 lat);
/* Whether a hybrid wait starting now skips its spin because its CPU was
 * found shared (counts the wait down). */
bool xwi_waitpol_shared(struct xwi_waitpol *w);
/* A spin found another task waiting for this CPU: the next waits block at
 * once (see above). */
void xwi_waitpol_contended(struct xwi_waitpol *w);
/* A wait spun and ended without finding the CPU shared. */
void xwi_waitpol_alone(struct xwi_waitpol *w);
/* The spin time at which a spin of @spin ns that has probed at @probed ns
 * (0: not yet) probes next. */
__u64 xwi_waitpol_probe_at(__u64 probed, __u64 spin);
/* What a wait whose strategy said @act does while a pull is under way, the
 * last pass that found work @since ns ago (above): spin-block and adaptive
 * spin on instead of blocking until pull_spin * B; the other strategies,
 * and pull_spin 0, mean what they say. */
enum xwi_wait_act xwi_waitpol_pull(const struct xwi_waitpol *w, enum xwi_wait_act act,
				   __u64 since);
/* The cost model above, for tests and benchmarks: the cost of waiting
 * @delay ns with spin time @spin then blocking at cost @b. */
__u64 xwi_wait_cost(__u64 spin, __u64 b, __u64 delay);

#endif
