/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * xdpwake_maps.h - the layouts of the XDP program's maps that only the
 * program and the library (and the project's tests and benchmarks) see: the
 * mmapped hand-over area, the wake records, the local path's input, the
 * timers' state (struct bpf_timer: needs <linux/bpf.h>), the connection
 * keys.  NOT installed: applications get xdpwake.h and xdpwake/proto.h only.
 *
 * Included by bpf/xdpwake.bpf.c and by userspace/lib/internal.h (and the
 * tests and benchmarks); it lives beside the program, outside include/, and
 * is found with -Ibpf (proto.h with -Iinclude).  Map values are in host byte
 * order.
 */
#ifndef XDPWAKE_MAPS_H
#define XDPWAKE_MAPS_H

#include <linux/types.h>
#include <linux/bpf.h> /* struct bpf_timer */

#include "xdpwake/proto.h"

/* Entries of the per-CPU array `stats`: one per endpoint id, and
 * XW_STATS_IFACE. */
#define XW_STATS_ENTRIES (XW_MAX_ENDPOINTS + 1)

/* Value of `stats`: the counters of XW_STATS (proto.h), fixed-width, no sz.
 * xw_iface__stats() sums them over the CPUs into the caller's struct
 * xw_stats (xdpwake.h), whose counters follow its sz in the same order. */
struct xw_map_stats {
	XW_STATS(XW__STATS_FIELD)
};
XW_STATIC_ASSERT(sizeof(struct xw_map_stats) == XW_STATS_NR * 8,
		 "the stats map's value is packed u64s");

/*
 * Value of the `shared` map: BPF_F_MMAPABLE array, key = endpoint id,
 * mapped by the receiving process.  Two cache lines per endpoint: the first
 * is written by the senders (the XDP program, local senders' `produced`
 * increments) and read by them, the second (`consumed`) is the receiver's
 * alone to write, stored at every frame it takes: on one line the two moved
 * that line between sender and receiver twice per message (issue 28).
 *
 * Hand-over: to sleep, user space stores armed = 1, issues a full barrier,
 * then rereads `produced`; if produced != consumed it does not sleep.  The
 * XDP program increments `produced` (atomic) before it takes `armed` with an
 * atomic exchange, so either it sees armed == 1 and sends the wake, or user
 * space sees the new frame.
 */
struct xw_shared {
	__u32 armed;	    /* user: 1 = asleep, wants a wake; XDP xchg -> 0 */
	__u32 wd_armed;	    /* watchdog thread asleep, wants a wake          */
	__u64 produced;	    /* XDP: frames redirected to this endpoint       */
	__u64 wakes;	    /* XDP: wakes sent to this endpoint              */
	__u64 wd_wakes;	    /* XDP: watchdog wakes sent                      */
	__u64 conns_gen;    /* user, XDP: +1 after each change to the `conns`
			     * entries of this endpoint (see below)         */
	__u64 wd_due;	    /* XDP: the watchdog timer's deadline, 0 while it
			     * is stopped: a local sender whose receiver only
			     * has its watchdog armed runs xw_local only then
			     * (a running timer looks at the frame anyway)  */
	__u64 wd_lead_ns;   /* user: the watchdog fires this much before its
			     * period ends (its thread's record-to-pass cost) */
	__u64 rsvd0;
	/* The receiver's line. */
	__u64 consumed;	    /* user: frames taken from the RX ring           */
	__u64 rsvd1[7];
};
XW_STATIC_ASSERT(sizeof(struct xw_shared) == 128 &&
			 XW_OFFSETOF(struct xw_shared, consumed) == 64,
		 "xw_shared: the senders' line, then the receiver's `consumed` on its own");

/* Record kinds in the per-endpoint ring buffers. */
#define XW_REC_WAKE 1	  /* submitted with BPF_RB_FORCE_WAKEUP            */
#define XW_REC_DEFER 2	  /* trace only (XW_EPF_TRACE), BPF_RB_NO_WAKEUP   */
#define XW_REC_UNARMED 3  /* trace only: wake decided, receiver not armed  */

struct xw_wake_rec {
	__u8 kind;	/* XW_REC_*                                          */
	__u8 reason;	/* enum xw_wake_reason                               */
	__u16 ep;	/* endpoint id                                       */
	__u32 pending;	/* frames covered by this decision                   */
	__u64 ts_ns;	/* bpf_ktime_get_ns() at the decision                */
	__u64 produced; /* frames redirected to the endpoint so far          */
};
XW_STATIC_ASSERT(sizeof(struct xw_wake_rec) == 24, "xw_wake_rec size");

/*
 * Input of the program `xw_local` (run with BPF_PROG_TEST_RUN by a sender
 * on the same host, see userspace/lib/local.c): the wake decision for one
 * frame written into endpoint @ep's shared-memory inbox.  @produced is the
 * endpoint's `produced` count after the sender's increment.  Padded to
 * 32 bytes (BPF_PROG_TEST_RUN wants at least an Ethernet header).
 */
struct xw_local_in {
	__u32 ep;	/* destination endpoint id                   */
	__u8 type;	/* the frame's xw_hdr.type                   */
	__u8 flags;	/* the frame's xw_hdr.flags                  */
	__u16 rsvd;
	__u64 produced;	/* shared[ep].produced after the increment   */
	__u64 rsvd2[2];
};
XW_STATIC_ASSERT(sizeof(struct xw_local_in) == 32, "xw_local_in size");

/* Size of each per-endpoint ring buffer (inner map of wake_rings/wd_rings). */
#define XW_RING_BYTES 16384

/* ------------------------------------------------------------------ */
/* Per-endpoint wake state (array `wake_state`, key = endpoint id)     */
/* ------------------------------------------------------------------ */

/* Mode chosen by the adaptive policy, kept in xw_wake_state.adapt_mode. */
#define XW_ADAPT_MARKER 0
#define XW_ADAPT_STREAM 1

/*
 * The struct bpf_timer member makes these maps unfit for mmap; user space
 * reads them with bpf_map_lookup_elem (e.g. `bpftool map dump`).  The
 * kernel allows one timer per map value, hence two maps.
 */
struct xw_wake_state {
	struct bpf_timer timer; /* coalescing / deferral timer               */
	__u64 pending;		/* frames since the last wake decision       */
	__u64 first_pending_ns; /* arrival of the first of them              */
	__u64 last_frame_ns;	/* arrival of the previous frame             */
	__u64 deferred_since_ns;/* LAT wake deferred by stream since (0: no) */
	__u64 deadline_ns;	/* expiry of the running timer (0: idle)     */
	__u64 gap_ewma_ns;	/* adaptive: mean inter-arrival gap          */
	__u32 timer_ready;	/* timer initialised                         */
	__u32 adapt_mode;	/* XW_ADAPT_*                                */
	__u32 deferred;		/* a LAT wake is deferred (stream)           */
	__u32 rsvd;
};

/* Array `wd_state`, key = endpoint id: the watchdog timer. */
struct xw_wd_state {
	struct bpf_timer timer;
	__u64 deadline_ns;	/* expiry of the running timer (0: idle)     */
	__u64 produced;		/* produced count when the period started    */
	__u64 next_ns;		/* arrival of the first frame since (0: none) */
	__u32 timer_ready;
	__u32 rsvd;
};

/* ------------------------------------------------------------------ */
/* Connections (hash `conns`): per-peer session check in XDP           */
/* ------------------------------------------------------------------ */

/*
 * Whoever adds, changes or deletes an entry of `conns` with dst_ep = E
 * increments shared[E].conns_gen (atomically) after the change: the XDP
 * program keeps, per CPU and endpoint, a copy of its last lookup, which it
 * uses only while conns_gen is unchanged.  The library does this in
 * endpoint.c (ep_conn_event), the program when a CONNECT deletes an entry.
 * An entry changed without the increment may go unseen by the program.
 */

struct xw_conn_key {
	__u32 peer_ip;	   /* UDP mode: peer IPv4 address (BE); Ethernet: 0 */
	__u8 peer_mac[6];  /* Ethernet mode: peer MAC; UDP mode: zeros       */
	__u16 src_ep;	   /* peer's endpoint id                             */
	__u16 dst_ep;	   /* our endpoint id                                */
	__u16 rsvd;
};
XW_STATIC_ASSERT(sizeof(struct xw_conn_key) == 16, "xw_conn_key size");
/* The `conns` hash (allocated per entry, BPF_F_NO_PREALLOC): XW_CONNS_PER_EP
 * entries per endpoint id of the interface (max_endpoints, set at attach),
 * at least XW_MAX_CONNS (the size compiled into the object, and each
 * engine's default peer limit); a full map costs only the XDP program's
 * early session check (the library checks every frame itself). */
#define XW_MAX_CONNS 4096
#define XW_CONNS_PER_EP 64
#define XW_CONNS_LIMIT 65536

#endif /* XDPWAKE_MAPS_H */
