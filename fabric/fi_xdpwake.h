/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * fi_xdpwake.h - what the xdpwake libfabric provider offers beyond the
 * libfabric API, for tests and tools: the waiting counters of a completion
 * queue or counter, read with
 *
 *     struct fi_xdpwake_wait_stats st;
 *     fi_control(&cq->fid, FI_XDPWAKE_GET_WAIT_STATS, &st);
 *
 * (also on a counter's fid).  Plain C, no libfabric header needed.
 */
#ifndef FI_XDPWAKE_H
#define FI_XDPWAKE_H

#include <stdint.h>

/* fi_control() command (outside libfabric's own range). */
#define FI_XDPWAKE_GET_WAIT_STATS 0x78770001

struct fi_xdpwake_wait_stats {
	/* sleeps of this CQ/counter's callers: a non-blocking read whose
	 * polls found nothing for longer than the spin time (idle_sleeps),
	 * fi_cq_sread / fi_cntr_wait (sleeps counts both) */
	uint64_t idle_sleeps;
	uint64_t sleeps;
	/* idle reads' sched_yield() probes of the CPU, and those that found
	 * it shared (another task ran: the reads yield on, for at most the
	 * idle spin time, then sleep) */
	uint64_t idle_probes;
	uint64_t idle_shared;
	/* how the sleeps ended */
	uint64_t wakes_frame;	/* an endpoint's wake fd: the XDP program (or a
				 * local sender) woke it                      */
	uint64_t wakes_event;	/* the CQ's event fd: a completion no frame
				 * caused, fi_cq_signal, a close, progress of
				 * another thread                             */
	uint64_t wakes_timer;	/* an endpoint's protocol timer was due       */
	uint64_t timeouts;	/* the sleep's bound (max sleep, the caller's
				 * timeout) passed                            */
	uint64_t arm_refused;	/* no sleep: frames waited already when armed */
	uint64_t kicks;		/* event fd writes (a sleeper was there)      */
	uint64_t sleep_ns;	/* time asleep                                */
	/* fi_trywait: 0 returned (the caller may sleep on FI_GETWAIT's fd),
	 * -FI_EAGAIN returned */
	uint64_t trywait_ok;
	uint64_t trywait_busy;
	/* the domain's FI_PROGRESS_AUTO thread (0 without one) */
	uint64_t progress_runs;	  /* its passes                           */
	uint64_t progress_sleeps; /* its sleeps on the endpoints' wake fds */
	uint64_t progress_wakes;  /* ... ended by an endpoint's wake      */
	/* non-blocking reads that found nothing on the fast path: no lock,
	 * no pass (every bound endpoint idle, cq.c cq_empty_fast); a CQ's only */
	uint64_t fast_empty;
};

#endif
