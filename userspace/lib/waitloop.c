// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The progress pass and the wait loop: progress until a request (or any
 * of several, xw_wait_any) is ready, spinning, yielding or sleeping between
 * passes as the waiting strategy decides (wait.c); the strategy's
 * settings and statistics.
 */
#include <sched.h>

#include "internal.h"
#include "engine.h"
#include "local.h"
#include "port.h"
#include "wait.h"
#include "endpoint_int.h"

/* Looks at the RX ring per clock read while spinning. */
#define XWI_SPIN_PEEKS 4

/* ---- progress ---------------------------------------------------------- */

/*
 * The first half of a pass: the frames waiting in the RX ring and the
 * inbox, handed to the engine; *@local (if not NULL): how many came from
 * the inbox.  Caller holds the port lock.
 *
 * The pass's time (the engine's clock while it runs, ep_now): @early, a
 * time the caller read just before it took the lock (a wait reads one
 * when it starts and one per spin; 0: none), else a fresh reading.  A
 * wait that finds its message in a pass then reads no clock for it.
 * Early by the few hundred nanoseconds since that reading, as a pass's
 * time is late by the time the pass takes: a timer due in between fires
 * at the next pass, a peer was heard or a frame sent that much earlier.
 * Never earlier than a time the engine was given before (eng_t: another
 * thread's send or pass between the caller's reading and the lock), so
 * no difference the engine takes is negative.  Frames in the RX ring come
 * from the wire (their acks give RTT samples): a fresh reading for them.
 */
static int pass_rx(struct xw_endpoint *ep, __u64 early, int *local)
{
	int n, l;

	ep->pass_early = early && !xwi_port_rx_ready(ep->port);
	if (!ep->pass_early)
		early = xwi_now_ns();
	else if (early < ep->eng_t)
		early = ep->eng_t;
	ep->pass_now = ep->eng_t = early;
	/* read by a waiter whose target another thread's pass made ready */
	__atomic_store_n(&ep->last_pass, ep->pass_now, __ATOMIC_RELAXED);
	n = xwi_port_rx(ep->port, 64);
	l = xwi_local_rx(ep->local, 64);
	if (local)
		*local = l;
	return n + l;
}

/* A pass ended (after its completions were made): counted for
 * xw_endpoint__passes.  Caller holds the port lock. */
static void pass_done(struct xw_endpoint *ep)
{
	__atomic_store_n(&ep->passes, ep->passes + 1, __ATOMIC_RELEASE);
}

/* The second half: the engine's timers and transmit work, then the next
 * timer for waiters that skip passes. */
static int pass_engine(struct xw_endpoint *ep)
{
	int n;

	n = xwi_engine_progress(ep->eng, 256);
	xwi_port_flush(ep->port);
	ep->pass_now = 0;
	__atomic_store_n(&ep->eng_deadline, xwi_engine_next_deadline(ep->eng), __ATOMIC_RELAXED);
	/* A pass may leave work (a full TX ring): only a spinning wait that
	 * checked says otherwise. */
	__atomic_store_n(&ep->quiet, false, __ATOMIC_RELAXED);
	pass_done(ep);
	return n;
}

/* Before the endpoint's thread sleeps: the ACKs it owes go now
 * (xwi_engine_ack_owed), and its sleep no longer ends at their delay.
 * Skipped when another thread holds the port (its pass sends them). */
void xwi_ep_ack_before_sleep(struct xw_endpoint *ep)
{
	__u64 d;

	if (!xwi_port_trylock(ep->port))
		return;
	if (xwi_engine_ack_owed(ep->eng) > 0) {
		xwi_port_flush(ep->port);
		/* the next timer, unless a pass is due anyway (0: a pass
		 * stopped after its receive half, see pass_cut) */
		d = __atomic_load_n(&ep->eng_deadline, __ATOMIC_RELAXED);
		if (d)
			__atomic_store_n(&ep->eng_deadline, xwi_engine_next_deadline(ep->eng),
					 __ATOMIC_RELAXED);
		ep->ws.sleep_acks++;
	}
	xwi_port_unlock(ep->port);
}

/* Caller holds the port lock. */
int xwi_ep_progress_locked(struct xw_endpoint *ep)
{
	int n = pass_rx(ep, 0, NULL);

	return n + pass_engine(ep);
}

/* May the pass under way stop after its receive half (see pass_for): the
 * engine owes nothing at once, no timer is due (nor within @slack of the
 * pass's time: how far behind that time may be), the last pass did not
 * stop early.  If so, it stops: the engine half is moved to the next pass. */
static bool pass_cut(struct xw_endpoint *ep, __u64 slack)
{
	if (xwi_engine_tx_pending(ep->eng) || xwi_port_tx_unkicked(ep->port) ||
	    ep->pass_now + slack >= __atomic_load_n(&ep->eng_deadline, __ATOMIC_RELAXED))
		return false;
	ep->pass_now = 0;
	__atomic_store_n(&ep->eng_deadline, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ep->quiet, false, __ATOMIC_RELAXED);
	pass_done(ep);
	return true;
}

/*
 * A wait's pass that stops after the receive half when that made the
 * request ready and the engine owes nothing at once: the caller returns
 * to the application with its message without the timer scans and the
 * transmit round.  Those are not lost, only moved to the next pass (a
 * spinning wait's next check, the next wait, a send's transmit round):
 * the pass leaves the endpoint not quiet and the engine's next timer
 * "due now", so no waiter skips or sleeps past them.  Anything the frames
 * queued to send (an ACK owed now, a reply) or frames of a batch not
 * kicked yet (XW_SEND_MORE) are sent by the full pass.  Nor does it stop
 * when a timer is due, or right after another stopped pass (the next timer
 * then reads "due now"): a receiver that always finds its next message
 * waiting still makes a full pass at least every other time.
 * Caller holds the port lock; *@cut says whether it stopped early.
 */
static int pass_for(struct xw_endpoint *ep, struct xw_request *req, __u64 early, bool *cut)
{
	int n = pass_rx(ep, early, NULL);

	*cut = n && req && xwi_req_is_done(req) && pass_cut(ep, 0);
	return *cut ? n : n + pass_engine(ep);
}

/*
 * The coarse clock's lag behind the precise one is a tick at most: a
 * timer further than this margin (two ticks and a millisecond) from the
 * coarse time is not due yet.  UINT64_MAX: the coarse clock is not there.
 */
static __u64 coarse_margin(void)
{
	static __u64 margin; /* 0: not asked yet */
	__u64 m = __atomic_load_n(&margin, __ATOMIC_RELAXED);
	struct timespec r;

	if (m)
		return m;
	m = clock_getres(CLOCK_MONOTONIC_COARSE, &r)
		    ? UINT64_MAX
		    : 2 * ((__u64)r.tv_sec * 1000000000ULL + (__u64)r.tv_nsec) + 1000000;
	__atomic_store_n(&margin, m, __ATOMIC_RELAXED);
	return m;
}

/*
 * Whether a timer at @d is due.  The precise clock is read only when the
 * timer is near (within the coarse clock's margin): none pending, or one
 * far off, costs no clock read.
 */
static bool due(__u64 d)
{
	__u64 m = coarse_margin();

	if (d == UINT64_MAX || (m < d && xwi_coarse_ns() < d - m))
		return false;
	return xwi_now_ns() >= d;
}

/* Whether the engine's next timer, as the last pass left it, is due. */
static bool timer_due(struct xw_endpoint *ep)
{
	return due(__atomic_load_n(&ep->eng_deadline, __ATOMIC_RELAXED));
}

/* A pass only if it would find work: frames in the RX ring or the inbox,
 * something to transmit or to kick, or an engine timer due (no clock
 * read unless one is near: the wait for an eager send, done at once,
 * comes here after every send).  Caller holds the port lock. */
int xwi_ep_progress_if_due_locked(struct xw_endpoint *ep)
{
	if (!xwi_ep_rx_ready(ep) && !xwi_engine_tx_pending(ep->eng) &&
	    !xwi_port_tx_unkicked(ep->port) && !due(xwi_engine_next_deadline(ep->eng)))
		return 0;
	return xwi_ep_progress_locked(ep);
}

/*
 * A pass of the application's progress call, unless it would find
 * nothing to do: the last pass left nothing to transmit (quiet) and
 * nothing changed the engine since, no frame is in the RX ring or the
 * inbox, and the engine's next timer is not due.  That check takes no
 * lock and, unless a timer is near, reads no clock: a caller that polls
 * (the provider's CQ reads) costs a few loads per call while nothing
 * arrives.  The hints race a frame or another thread's change at worst by
 * one call: the next sees it.  A pass sets quiet for the next calls when
 * it leaves nothing to transmit, as a spinning wait's does.
 */
static bool pass_skippable(struct xw_endpoint *ep)
{
	return __atomic_load_n(&ep->quiet, __ATOMIC_ACQUIRE) && !xwi_ep_rx_ready(ep) &&
	       !timer_due(ep);
}

XW_API int xw_endpoint__progress(struct xw_endpoint *ep)
{
	__u64 m = coarse_margin();
	int n, local;

	if (!ep)
		return -EINVAL;
	if (pass_skippable(ep))
		return 0;
	xwi_port_lock(ep->port);
	/* Frames of the inbox take the coarse clock's time (no counter read,
	 * behind by a tick at most; pass_rx: never before a time the engine
	 * had): when the peer was last heard, that much early, only makes
	 * its liveness check look a few milliseconds sooner. */
	n = pass_rx(ep, m != UINT64_MAX ? xwi_coarse_ns() : 0, &local);
	/* Frames from local peers only (lossless: they owe no ACK, arm no
	 * timer): their completions are made, the caller gets them now, and
	 * the engine's half goes to the next call, as a wait's pass does
	 * (pass_for).  A frame from the wire makes the full pass, and so
	 * does a timer that may be due (within the coarse clock's margin:
	 * another peer's delayed ACK is not left to a later call). */
	if (local && local == n && pass_cut(ep, ep->pass_early ? m : 0)) {
		xwi_port_unlock(ep->port);
		return n;
	}
	/* Timers and transmit work at the precise time (not behind eng_t:
	 * the coarse clock never runs ahead of it). */
	if (ep->pass_early)
		ep->pass_now = ep->eng_t = xwi_now_ns();
	n += pass_engine(ep);
	__atomic_store_n(&ep->quiet,
			 !xwi_engine_tx_pending(ep->eng) && !xwi_port_tx_unkicked(ep->port),
			 __ATOMIC_RELEASE);
	xwi_port_unlock(ep->port);
	return n;
}

/* The same check as xw_endpoint__progress's, made alone. */
XW_API bool xw_endpoint__pass_due(struct xw_endpoint *ep)
{
	return ep && !pass_skippable(ep);
}

XW_API __u64 xw_endpoint__passes(const struct xw_endpoint *ep)
{
	return ep ? __atomic_load_n(&ep->passes, __ATOMIC_ACQUIRE) : 0;
}

/* ---- waiting ----------------------------------------------------------- */

/* A gap this long between two spins of one wait: the spinner was off its
 * CPU (preempted).  Longer than XWI_OFFCPU_NS: a spin's pass may take a few
 * microseconds of its own. */
#define XWI_PREEMPT_NS (4 * XWI_OFFCPU_NS)

/*
 * A pull under way (wait.h): while one of the wait's endpoints has PULL
 * blocks out, a hybrid wait spins on past its spin time (xwi_waitpol_pull).
 * It does not skip its spin for a shared CPU found by earlier waits, and a
 * probe (or preemption) that finds the CPU wanted now blocks this gap only
 * (`gap`): the next frame starts spinning again, and later waits are not
 * made to skip theirs.  A softirq thread that runs our own transmit work
 * for a moment is no reason to sleep through the rest of a message (at MTU
 * 1500 such findings made most waits of a stream block at every gap:
 * 12,000-63,000 blocks in 2 s against ~400), while a task that really
 * shares the CPU still gets it at every probe: the probe yields to it and
 * the wait blocks.
 */
static bool pulling(struct xw_endpoint *const *eps, int neps)
{
	for (int i = 0; i < neps; i++)
		if (xwi_engine_pulling(eps[i]->eng))
			return true;
	return false;
}

/* A spin found another task waiting for its CPU: this wait blocks (after
 * a pass), the next ones skip their spin (wait.h); while a pull is under
 * way only this gap blocks (*@gap, above). */
static void cpu_wanted(struct xw_endpoint *ep, bool pull, bool *shared, bool *gap)
{
	ep->ws.shared_spins++;
	if (pull) {
		*gap = true;
		return;
	}
	xwi_waitpol_contended(&ep->wait);
	*shared = true;
}

static bool unexpected_waiting(struct xw_endpoint *ep)
{
	bool r;

	xwi_port_lock(ep->port);
	r = xwi_engine_has_unexpected(ep->eng);
	xwi_port_unlock(ep->port);
	return r;
}

static bool target_ready(struct xwi_wait_target *w)
{
	if (w->req)
		return xwi_req_is_done(w->req);
	for (int i = 0; i < w->n; i++) {
		struct xw_waitable *it = &w->items[i];

		if ((it->req && xwi_req_is_done(it->req)) ||
		    (!it->req && it->ep && !XWI_OPT(w->opts, eps_no_unexpected, false) &&
		     unexpected_waiting(it->ep))) {
			w->ready = i;
			return true;
		}
	}
	if (w->opts && w->opts->cond && w->opts->cond(w->opts->cond_arg)) {
		w->ready = w->n;
		return true;
	}
	return false;
}

/* The endpoints a wait progresses. */
static int target_eps(struct xwi_wait_target *w, struct xw_endpoint **eps, int max)
{
	int n = 0;

	if (w->req) {
		eps[n++] = w->req->ep;
		return n;
	}
	for (int i = 0; i < w->n && n < max; i++) {
		struct xw_endpoint *ep = w->items[i].req ? w->items[i].req->ep : w->items[i].ep;
		bool seen = false;

		for (int j = 0; j < n; j++)
			seen |= eps[j] == ep;
		if (ep && !seen)
			eps[n++] = ep;
	}
	return n;
}

/*
 * Whether a progress pass of @ep at time @now would find nothing to do: the
 * last pass left nothing to transmit (quiet), nothing changed the engine
 * since, no frame is in the RX ring and no engine timer is due.  Read
 * without the port lock, as hints: a frame or change that races this check
 * is seen on the next spin, which follows at once.  Spinning then costs a
 * few loads instead of a locked pass over the engine.
 */
static bool pass_idle(struct xw_endpoint *ep, __u64 now)
{
	return __atomic_load_n(&ep->quiet, __ATOMIC_ACQUIRE) && !xwi_ep_rx_ready(ep) &&
	       now < __atomic_load_n(&ep->eng_deadline, __ATOMIC_RELAXED);
}

/*
 * Progress until the target is ready or the deadline (0: none) passes,
 * waiting between passes as the strategy says.  The port lock is held only
 * around progress passes, never while asleep.
 */
int xwi_wait_for(struct xwi_wait_target *w, enum xw_wait_strategy s, __u64 spin, __u64 deadline)
{
	struct xw_endpoint *eps[XW_WAIT_ANY_MAX];
	int neps = target_eps(w, eps, XW_WAIT_ANY_MAX), n;
	struct xw_endpoint *ep;
	struct xwi_waitpol *pol, tmp;
	__u64 start = xwi_now_ns(), spin_start = start, t, seen = 0, spun = 0, probed = 0;
	__u64 worked = start; /* the last pass that found work */
	/* The last clock reading, if nothing waited since: the next pass's
	 * time (pass_rx).  0 after a yield. */
	__u64 early = start;
	bool notify, cut = false, hybrid, decided = false, shared = false, alone = false;
	bool pull = false, gap = false;
	enum xwi_wait_act act;

	if (!neps)
		return -EINVAL;
	if (deadline == XWI_WAIT_REL)
		deadline = xwi_deadline_after(start, w->timeout_ms);
	ep = eps[0];
	pol = &ep->wait;
	if (s != XW_WAIT_DEFAULT || spin) {
		xwi_waitpol_init(&tmp, s != XW_WAIT_DEFAULT ? s : ep->wait.strategy, ep->wait.block_cost,
				 spin ? spin : ep->wait.spin_ns);
		tmp.pull_spin = __atomic_load_n(&ep->wait.pull_spin, __ATOMIC_RELAXED);
		/* An adaptive call learns from the endpoint's history. */
		if (tmp.strategy == XW_WAIT_ADAPTIVE)
			tmp.adaptive_spin = xwi_waitpol_adaptive(&ep->wait);
		pol = &tmp;
	}
	/* While a notify thread runs, it owns the wake ring. */
	notify = ep->notify.running && neps == 1;
	/* The spins that end in a block look out for a CPU shared with
	 * another task (wait.h, "A shared CPU"). */
	hybrid = !notify &&
		 (pol->strategy == XW_WAIT_SPIN_BLOCK || pol->strategy == XW_WAIT_ADAPTIVE);
	ep->ws.waits++;
	t = start;
	for (;;) {
		n = 0;
		if (notify)
			seen = __atomic_load_n(&ep->nseq, __ATOMIC_ACQUIRE);
		for (int i = 0; i < neps; i++) {
			if (spun && pass_idle(eps[i], t))
				continue;
			xwi_port_lock(eps[i]->port);
			n += pass_for(eps[i], w->req, early, &cut);
			if (cut && w->keep_lock) {
				/* the caller collects the request under it */
				w->locked = true;
				goto ready;
			}
			/* Spinning: may the next spins skip the pass? */
			if (spun && !cut)
				__atomic_store_n(&eps[i]->quiet, !xwi_engine_tx_pending(eps[i]->eng),
						 __ATOMIC_RELEASE);
			xwi_port_unlock(eps[i]->port);
		}
		if (target_ready(w))
			break;
		early = t = xwi_now_ns();
		if (spun) {
			/* One clock read per spin: the time since the last. */
			ep->ws.spin_ns += t - spun;
			/* A spin that took this long was preempted: another
			 * task wanted this CPU (a pass that found work does
			 * not count, n > 0). */
			if (hybrid && !(pull ? gap : shared) && !n && t - spun > XWI_PREEMPT_NS)
				cpu_wanted(ep, pull, &shared, &gap);
			spun = 0;
		}
		if (deadline && t >= deadline)
			return -ETIMEDOUT;
		if (n > 0) {
			spin_start = worked = t;
			probed = 0;
			gap = false;
			continue;
		}
		act = notify ? XWI_ACT_BLOCK : xwi_waitpol_next(pol, t - spin_start);
		pull = hybrid && __atomic_load_n(&pol->pull_spin, __ATOMIC_RELAXED) &&
		       pulling(eps, neps);
		if (act == XWI_ACT_BLOCK && pull && !gap &&
		    xwi_waitpol_pull(pol, act, t - worked) == XWI_ACT_SPIN) {
			act = XWI_ACT_SPIN;
			ep->ws.pull_spins++;
		}
		if (act == XWI_ACT_SPIN && hybrid) {
			/* The first spin of the wait: does it skip the spin
			 * (the CPU was found shared by the last waits)?  Not
			 * while a pull is under way (above). */
			if (!decided) {
				decided = true;
				shared = !pull && xwi_waitpol_shared(&ep->wait);
				ep->ws.shared_waits += shared;
			}
			if (pull ? gap : shared) {
				act = XWI_ACT_BLOCK;
			} else if (t - spin_start >= xwi_waitpol_probe_at(probed, xwi_waitpol_spin(pol))) {
				/* Probe: does another task want this CPU?  If
				 * it ran, look for the message (it may be the
				 * peer, which has answered), then block. */
				__u64 t0 = xwi_now_ns(), t1;

				probed = t - spin_start;
				sched_yield();
				t1 = xwi_now_ns();
				ep->ws.spin_probes++;
				if (t1 - t0 > XWI_OFFCPU_NS)
					cpu_wanted(ep, pull, &shared, &gap);
				else
					alone = true;
				ep->ws.spin_ns += t1 - t0;
				early = t = t1;
				continue;
			}
		}
		switch (act) {
		case XWI_ACT_SPIN:
			ep->ws.spins++;
			/* Between two clock reads, look at the ring a few
			 * times: a frame is seen sooner (one endpoint). */
			xwi_cpu_relax();
			for (int k = 1; neps == 1 && k < XWI_SPIN_PEEKS && !xwi_ep_rx_ready(ep); k++)
				xwi_cpu_relax();
			spun = t;
			break;
		case XWI_ACT_YIELD:
			ep->ws.yields++;
			sched_yield();
			early = 0; /* another task may have run long */
			break;
		case XWI_ACT_BLOCK:
			for (int i = 0; !notify && i < neps; i++)
				xwi_ep_ack_before_sleep(eps[i]);
			if (notify)
				xwi_notify_await(ep, seen, deadline);
			else if (neps > 1)
				xwi_block_many(eps, neps, deadline);
			else
				/* Transmit work waiting for ring space or a
				 * neighbour: nap briefly instead. */
				xwi_block_once(ep, deadline,
					       xwi_engine_tx_pending(ep->eng) ||
							       xwi_port_tx_busy(ep->port)
						       ? 1
						       : XWI_MAX_SLEEP_MS);
			early = spin_start = xwi_now_ns();
			probed = 0;
			gap = false;
			break;
		}
	}
ready:
	/* A probe found the CPU to itself and none found it shared: the
	 * next detection skips the fewest waits again. */
	if (alone && !shared)
		xwi_waitpol_alone(&ep->wait);
	/* The adaptive strategy learns how long waits take: until the start
	 * of the pass that found the target ready (a clock read less on the
	 * way back to the application). */
	t = __atomic_load_n(&ep->last_pass, __ATOMIC_RELAXED);
	if (t < start)
		t = start;
	xwi_waitpol_done(&ep->wait, t - start);
	return 0;
}

bool xwi_wait_opts_valid(const struct xw_wait_opts *opts)
{
	if (!XWI_OPTS_VALID(opts, xw_wait_opts))
		return false;
	if ((unsigned int)XWI_OPT(opts, strategy, XW_WAIT_DEFAULT) >= XW_WAIT_MAX)
		return false;
	if (XWI_OPT(opts, timeout_ms, 0) && !XWI_OPT(opts, timeout_set, false)) {
		xwi_err("xw_wait_opts: timeout_ms %d without timeout_set", opts->timeout_ms);
		return false;
	}
	return true;
}

XW_API int xw_wait_any(struct xw_waitable *items, int n, const struct xw_wait_opts *opts)
{
	struct xwi_wait_target w = { .items = items, .n = n, .opts = opts, .ready = -1,
				     .timeout_ms = XWI_OPT(opts, timeout_ms, -1) };
	int err;

	if (!items || n <= 0 || !xwi_wait_opts_valid(opts))
		return -EINVAL;
	if (n > XW_WAIT_ANY_MAX)
		return -E2BIG;
	for (int i = 0; i < n; i++)
		if (!items[i].req && !items[i].ep)
			return -EINVAL;
	err = xwi_wait_for(&w, XWI_OPT(opts, strategy, XW_WAIT_DEFAULT), XWI_OPT(opts, spin_ns, 0),
			   XWI_OPT(opts, timeout_set, false) ? XWI_WAIT_REL : 0);
	return err ? err : w.ready;
}

/* ---- strategy ---------------------------------------------------------- */

XW_API int xw_endpoint__set_wait(struct xw_endpoint *ep, enum xw_wait_strategy s,
				 __u64 spin_ns)
{
	__u32 pull_spin;

	if (!ep || (unsigned int)s >= XW_WAIT_MAX)
		return -EINVAL;
	/* the pull spin is set on its own (xw_endpoint__set_pull_spin) */
	pull_spin = ep->wait.pull_spin;
	xwi_waitpol_init(&ep->wait, s, xw_block_cost_ns(), spin_ns);
	ep->wait.pull_spin = pull_spin;
	ep->ws.block_cost_ns = ep->wait.block_cost;
	ep->ws.adaptive_spin_ns = ep->wait.adaptive_spin;
	return 0;
}

XW_API int xw_endpoint__set_pull_spin(struct xw_endpoint *ep, __u32 pull_spin)
{
	if (!ep || pull_spin > XW_PULL_SPIN_MAX)
		return -EINVAL;
	/* a wait running now reads it without a lock: its next decision */
	__atomic_store_n(&ep->wait.pull_spin, pull_spin, __ATOMIC_RELAXED);
	return 0;
}

XW_API int xw_endpoint__pulling(const struct xw_endpoint *ep)
{
	if (!ep)
		return -EINVAL;
	return (int)xwi_engine_pulling(ep->eng);
}

XW_API int xw_endpoint__wait_stats(const struct xw_endpoint *ep, struct xw_wait_stats *out)
{
	struct xwi_waitpol w;
	struct xw_wait_stats st;

	if (!ep || !out)
		return -EINVAL;
	w = ep->wait; /* the estimate is worked out on a copy: @ep is const */
	st = ep->ws;
	st.block_cost_ns = w.block_cost;
	st.adaptive_spin_ns = xwi_waitpol_adaptive(&w);
	return XWI_OUT_COPY(out, &st, xw_wait_stats);
}
