// SPDX-License-Identifier: GPL-2.0
/*
 * xdpwake.bpf.c - the XDP wake engine.
 *
 * For every frame: parse Ethernet (+ up to two VLAN tags) (+ IPv4/UDP in UDP
 * mode) and the xdpwake header; pass anything that is not ours untouched;
 * drop and count ours-but-malformed; redirect the rest to the endpoint's
 * AF_XDP socket and decide whether the sleeping receiver is woken now, later
 * (bpf_timer) or not at all.  See DESIGN.md, "The XDP wake engine".
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/in.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <xdp/xdp_helpers.h>

#include "xdpwake_maps.h"

#ifndef EBUSY
#define EBUSY 16 /* no <errno.h> for BPF targets */
#endif

#ifndef CLOCK_MONOTONIC
#define CLOCK_MONOTONIC 1
#endif

#define NSEC_PER_USEC 1000ULL
#define ETH_P_8021Q_BE bpf_htons(0x8100)
#define ETH_P_8021AD_BE bpf_htons(0x88A8)
#define IP_MF_OFFSET_BE bpf_htons(0x3FFF)
/* Clamp for inter-arrival gaps fed to the adaptive estimate. */
#define GAP_CLAMP_NS 1000000000ULL

struct vlan_hdr {
	__be16 tci;
	__be16 proto;
};

/*
 * Knobs.  Per-endpoint knobs: one array of __u32 per knob, key = endpoint.
 * Per-interface knobs: one single-entry data section each (a one-element
 * array map to user space and bpftool), read with a plain load, so foreign
 * traffic pays no map lookup.
 */
#define XW__KNOB_XW_SCOPE_EP(name, def)                   \
	struct {                                          \
		__uint(type, BPF_MAP_TYPE_ARRAY);         \
		__uint(max_entries, XW_MAX_ENDPOINTS);    \
		__type(key, __u32);                       \
		__type(value, __u32);                     \
	} k_##name SEC(".maps");
#define XW__KNOB_XW_SCOPE_IFACE(name, def) \
	volatile __u32 xw_##name SEC(".data." #name) = (def);
#define XW__KNOB(name, scope, def, min, max) XW__KNOB_##scope(name, def)
XW_KNOBS(XW__KNOB)

/*
 * The interface's MAC address, written by the loader (0: not checked).  A
 * frame of ours addressed to another unicast MAC is not for this host - a
 * bridge or switch flooding unknown unicast, or promiscuous mode - and goes
 * to the kernel, which drops it as PACKET_OTHERHOST; it must not reach an
 * endpoint (another host's connection would look like ours).
 */
volatile __u32 xw_ifmac_hi SEC(".data.ifmac") = 0; /* bytes 0-1, network order */
volatile __u32 xw_ifmac_lo SEC(".data.ifmac") = 0; /* bytes 2-5, network order */

static __always_inline int other_host(const struct ethhdr *eth)
{
	__u32 hi = xw_ifmac_hi, lo = xw_ifmac_lo;
	__u16 dhi;
	__u32 dlo;

	if (!(hi | lo) || (eth->h_dest[0] & 1)) /* unset; multicast or broadcast */
		return 0;
	__builtin_memcpy(&dhi, eth->h_dest, 2);
	__builtin_memcpy(&dlo, eth->h_dest + 2, 4);
	return dhi != (__u16)hi || dlo != lo;
}

/*
 * The program's clock: the monotonic clock, unless a test has fixed "now"
 * here (nonzero).  The wake decisions depend on the time since the last
 * frame, the first pending frame and the start of a deferral; a test that
 * states that history must not depend on how fast it runs, so it fixes the
 * time the program sees.  Never set outside tests (not pinned, no knob); it
 * costs one load per frame.
 */
volatile __u64 xw_test_clock_ns SEC(".data.test_clock") = 0;

/*
 * Endpoint ids this instance takes: 0 .. xw_max_endpoints - 1.  The loader
 * (userspace/lib/iface.c) sizes every per-endpoint map to it before the
 * load (bpf_map__set_max_entries) and sets it here; `stats` has one entry
 * more, the interface's, at key xw_max_endpoints.  Read-only once loaded.
 */
const volatile __u32 xw_max_endpoints = XW_MAX_ENDPOINTS;

static __always_inline __u64 clock_now(void)
{
	__u64 t = xw_test_clock_ns;

	return t ? t : bpf_ktime_get_ns();
}

/* ---- state ---------------------------------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XW_MAX_ENDPOINTS);
	__type(key, __u32);
	__type(value, struct xw_ep_entry);
} endpoints SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XW_MAX_ENDPOINTS);
	__type(key, __u32);
	__type(value, struct xw_shared);
} shared SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XW_MAX_ENDPOINTS);
	__type(key, __u32);
	__type(value, struct xw_wake_state);
} wake_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XW_MAX_ENDPOINTS);
	__type(key, __u32);
	__type(value, struct xw_wd_state);
} wd_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XW_MAX_CONNS);	/* resized at load (iface.c) */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct xw_conn_key);
	__type(value, __u32);
} conns SEC(".maps");

/*
 * The last `conns` lookup of each endpoint on this CPU: a hash lookup is
 * the most expensive step of a frame of ours (~30 ns, several kernel calls),
 * and a connected endpoint's frames mostly come from the peer of its last
 * one.  Valid while shared[ep].conns_gen is what it was before the lookup
 * (maps.h: every change to `conns` increments it afterwards).  Per CPU, so
 * that two CPUs never write one copy.  Not pinned: the program's own.
 */
struct conn_memo {
	struct xw_conn_key key;
	__u64 gen;	/* shared[ep].conns_gen read before the lookup */
	__u32 session;	/* the entry's session, if found               */
	__u16 found;	/* an entry exists                             */
	__u16 valid;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XW_MAX_ENDPOINTS);
	__type(key, __u32);
	__type(value, struct conn_memo);
} conn_memo SEC(".maps");

static __always_inline int conn_key_eq(const struct xw_conn_key *a,
				       const struct xw_conn_key *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3];
}

/* UDP mode: the queues in use on this interface (see proto.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XW_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} udp_queues SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, XW_MAX_ENDPOINTS);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

struct xw_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, XW_RING_BYTES);
};

/* Per-endpoint wake ring (receiving thread) and watchdog ring. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, XW_MAX_ENDPOINTS);
	__type(key, __u32);
	__array(values, struct xw_ring);
} wake_rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, XW_MAX_ENDPOINTS);
	__type(key, __u32);
	__array(values, struct xw_ring);
} wd_rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XW_STATS_ENTRIES);
	__type(key, __u32);
	__type(value, struct xw_map_stats);
} stats SEC(".maps");

/* ---- helpers -------------------------------------------------------- */

static __always_inline __u32 knob(void *map, __u32 key, __u32 def)
{
	__u32 *v = bpf_map_lookup_elem(map, &key);

	return v ? *v : def;
}

static __always_inline void count_reason(struct xw_map_stats *s, __u32 reason)
{
	switch (reason) {
	case XW_WAKE_EVERY:
		s->wake_every++;
		break;
	case XW_WAKE_MARKER:
		s->wake_marker++;
		break;
	case XW_WAKE_STREAM:
		s->wake_stream++;
		break;
	case XW_WAKE_FRAMES:
		s->wake_frames++;
		break;
	case XW_WAKE_TIMEOUT:
		s->wake_timeout++;
		break;
	case XW_WAKE_WATCHDOG:
		s->wake_watchdog++;
		break;
	}
}

/* Append a record to @ring; trace records never wake the consumer. */
static __always_inline int emit(void *ring, __u32 ep, __u8 kind, __u8 reason,
				__u64 pending, __u64 now, __u64 produced)
{
	struct xw_wake_rec *r = bpf_ringbuf_reserve(ring, sizeof(*r), 0);

	if (!r)
		return -1;
	r->kind = kind;
	r->reason = reason;
	r->ep = ep;
	r->pending = pending > 0xFFFFFFFFULL ? 0xFFFFFFFFU : (__u32)pending;
	r->ts_ns = now;
	r->produced = produced;
	bpf_ringbuf_submit(r, kind == XW_REC_WAKE ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
}

static __always_inline void trace(__u32 ep, __u32 epflags, __u8 kind, __u8 reason,
				  __u64 pending, __u64 now, __u64 produced)
{
	void *ring;

	if (!(epflags & XW_EPF_TRACE))
		return;
	ring = bpf_map_lookup_elem(&wake_rings, &ep);
	if (ring)
		emit(ring, ep, kind, reason, pending, now, produced);
}

/*
 * A wake decision.  The pending batch is closed whether or not the receiver
 * is armed: an unarmed receiver is running and will see the frames itself.
 * The armed flag is taken with an atomic exchange, so one sleep gets at most
 * one wake.
 */
static __always_inline void wake(__u32 ep, __u32 epflags, struct xw_wake_state *ws,
				 struct xw_shared *sh, struct xw_map_stats *s, __u32 reason,
				 __u64 now)
{
	__u64 pending = ws->pending;
	__u64 produced = sh->produced;
	void *ring;

	ws->pending = 0;
	ws->deferred = 0;
	ws->deferred_since_ns = 0;

	if (__sync_lock_test_and_set(&sh->armed, 0) == 0) {
		s->wake_unarmed++;
		trace(ep, epflags, XW_REC_UNARMED, reason, pending, now, produced);
		return;
	}
	ring = bpf_map_lookup_elem(&wake_rings, &ep);
	if (!ring) {
		s->wake_noring++;
		return;
	}
	if (emit(ring, ep, XW_REC_WAKE, reason, pending, now, produced)) {
		/* The ring holds unread records, so its fd is readable and
		 * the receiver cannot stay asleep; count it. */
		s->wake_ringfull++;
		return;
	}
	__sync_fetch_and_add(&sh->wakes, 1);
	count_reason(s, reason);
}

/* Make sure the coalescing timer fires no later than @due. */
/* 0, or the timer could not be started: the caller wakes at once rather
 * than leave the frames without a wake. */
static __always_inline int timer_due(struct xw_wake_state *ws, struct xw_map_stats *s,
				     __u64 due, __u64 now)
{
	if (ws->deadline_ns && ws->deadline_ns <= due)
		return 0; /* an earlier expiry re-evaluates and re-arms */
	if (!ws->timer_ready)
		return -1;
	ws->deadline_ns = due;
	if (bpf_timer_start(&ws->timer, due > now ? due - now : 0, 0) == 0) {
		s->timer_starts++;
		return 0;
	}
	ws->deadline_ns = 0;
	return -1;
}

static int wake_timer_cb(void *map, __u32 *key, struct xw_wake_state *ws);
static int wd_timer_cb(void *map, __u32 *key, struct xw_wd_state *wd);

static __always_inline void timer_init(struct xw_wake_state *ws)
{
	long err;

	if (ws->timer_ready)
		return;
	/* -EBUSY: initialised already (the state was not reset).  Any other
	 * failure leaves timer_ready 0: the next frame tries again, and this
	 * one is woken for at once (timer_due). */
	err = bpf_timer_init(&ws->timer, &wake_state, CLOCK_MONOTONIC);
	if ((err && err != -EBUSY) || bpf_timer_set_callback(&ws->timer, wake_timer_cb))
		return;
	ws->deadline_ns = 0;
	ws->timer_ready = 1;
}

/* When the pending batch or the deferred wake falls due. */
static __always_inline __u64 due_time(struct xw_wake_state *ws, __u32 ep, __u32 *reason)
{
	__u64 coal = (__u64)knob(&k_coalesce_usecs, ep, XW_DEF_COALESCE_USECS) * NSEC_PER_USEC;
	__u64 gap = (__u64)knob(&k_stream_gap_usecs, ep, XW_DEF_STREAM_GAP_USECS) * NSEC_PER_USEC;
	__u64 due;

	if (ws->deferred) {
		due = ws->deferred_since_ns + coal;
		*reason = XW_WAKE_TIMEOUT;
		if (gap && ws->last_frame_ns + gap < due) {
			due = ws->last_frame_ns + gap;
			*reason = XW_WAKE_STREAM;
		}
		return due;
	}
	*reason = XW_WAKE_TIMEOUT;
	return ws->first_pending_ns + coal;
}

static int wake_timer_cb(void *map, __u32 *key, struct xw_wake_state *ws)
{
	__u32 ep = *key, reason = XW_WAKE_TIMEOUT, zero_flags = 0;
	struct xw_ep_entry *epi;
	struct xw_shared *sh;
	struct xw_map_stats *s;
	__u64 now = clock_now(), due;

	/* Exchange (full barrier) before reading pending: see decide(). */
	__sync_lock_test_and_set(&ws->deadline_ns, 0);
	sh = bpf_map_lookup_elem(&shared, &ep);
	s = bpf_map_lookup_elem(&stats, &ep);
	epi = bpf_map_lookup_elem(&endpoints, &ep);
	if (!sh || !s)
		return 0;
	s->timer_fires++;
	if (!ws->pending && !ws->deferred)
		return 0;
	if (sh->consumed >= sh->produced) {
		/* The receiver already took every frame: nothing to wake for. */
		ws->pending = 0;
		ws->deferred = 0;
		ws->deferred_since_ns = 0;
		return 0;
	}
	due = due_time(ws, ep, &reason);
	if (due > now && !timer_due(ws, s, due, now))
		return 0;
	wake(ep, epi ? epi->flags : zero_flags, ws, sh, s, reason, now);
	return 0;
}

/*
 * Watchdog: frames that stay unconsumed wake the library's watchdog thread
 * through the endpoint's watchdog ring, so that they are handled about a
 * period after they arrived: the timer fires `wd_lead_ns` (the library's
 * measured cost from a ring record to its pass done) before the period
 * ends, and the record carries the time the timer was due.  A generation
 * is the frames that arrived before the timer started; frames arriving
 * while it runs make the next one, due a period after the first of them
 * (next_ns).  Nothing runs while no frames wait.
 */

/* How long after a frame the timer fires: a period less the lead, at
 * least half a period (a lead grown by a busy moment must not feed on
 * itself: an earlier timer meets the sender's CPU busier). */
static __always_inline __u64 wd_fire_in(__u64 period, struct xw_shared *sh)
{
	__u64 lead = sh->wd_lead_ns;

	return lead < period / 2 ? period - lead : period - period / 2;
}

/* Start the timer for the frames up to @produced, due at @due (published
 * in sh->wd_due). */
static __always_inline void wd_start(struct xw_wd_state *wd, struct xw_shared *sh, __u64 produced,
				     __u64 due, __u64 now)
{
	if (due < now)
		due = now;
	wd->produced = produced;
	wd->next_ns = 0;
	wd->deadline_ns = due;
	if (bpf_timer_start(&wd->timer, due - now, 0))
		wd->deadline_ns = 0;
	sh->wd_due = wd->deadline_ns;
}

static int wd_timer_cb(void *map, __u32 *key, struct xw_wd_state *wd)
{
	__u32 ep = *key;
	struct xw_shared *sh;
	struct xw_map_stats *s;
	__u64 now = clock_now(), due = wd->deadline_ns, produced, consumed, period, since;
	void *ring;

	wd->deadline_ns = 0;
	sh = bpf_map_lookup_elem(&shared, &ep);
	s = bpf_map_lookup_elem(&stats, &ep);
	if (!sh || !s)
		return 0;
	/* Stopped (a full barrier), then `produced`: a local sender that
	 * counted its frame, then found wd_due set and skipped xw_local, has
	 * its frame counted here (the hand-over of `armed`, mirrored). */
	__sync_lock_test_and_set(&sh->wd_due, 0);
	produced = sh->produced;
	consumed = sh->consumed;
	if (consumed < wd->produced &&
	    __sync_lock_test_and_set(&sh->wd_armed, 0) != 0) {
		ring = bpf_map_lookup_elem(&wd_rings, &ep);
		if (!ring) {
			s->wake_noring++;
		} else if (emit(ring, ep, XW_REC_WAKE, XW_WAKE_WATCHDOG,
				wd->produced - consumed, due ? due : now, produced)) {
			s->wake_ringfull++;
		} else {
			__sync_fetch_and_add(&sh->wd_wakes, 1);
			s->wake_watchdog++;
		}
	}
	/* Frames still unconsumed: look again.  Frames of this generation
	 * (the watchdog thread may have been between passes, not armed, just
	 * now) from now; only later ones from the first of them.  Once
	 * everything is consumed the timer stops: nothing runs while idle. */
	period = (__u64)knob(&k_watchdog_usecs, ep, 0) * NSEC_PER_USEC;
	if (consumed < produced && period) {
		since = consumed >= wd->produced && wd->next_ns ? wd->next_ns : now;
		wd_start(wd, sh, produced, since + wd_fire_in(period, sh), now);
	}
	return 0;
}

/* Start the watchdog timer for a frame if none runs; else note the first
 * frame of the next generation.  Reads the clock into *@now if nothing has
 * yet (0) and the watchdog needs it. */
static __always_inline void watchdog_arm(__u32 ep, struct xw_shared *sh, __u64 produced,
					 __u64 *now)
{
	__u64 period = (__u64)knob(&k_watchdog_usecs, ep, 0) * NSEC_PER_USEC;
	struct xw_wd_state *wd;

	if (!period)
		return;
	wd = bpf_map_lookup_elem(&wd_state, &ep);
	if (!wd || (wd->deadline_ns && wd->next_ns))
		return;
	if (!*now)
		*now = clock_now();
	if (wd->deadline_ns) {
		wd->next_ns = *now;
		return;
	}
	if (!wd->timer_ready) {
		bpf_timer_init(&wd->timer, &wd_state, CLOCK_MONOTONIC);
		bpf_timer_set_callback(&wd->timer, wd_timer_cb);
		wd->timer_ready = 1;
	}
	wd_start(wd, sh, produced, *now + wd_fire_in(period, sh), *now);
}

/* The wake decision for one frame redirected to endpoint @ep. */
static __always_inline void decide(__u32 ep, __u32 epflags, struct xw_wake_state *ws,
				   struct xw_shared *sh, struct xw_map_stats *s,
				   __u8 type, __u8 flags, __u64 produced)
{
	__u64 now = 0, gap_since = GAP_CLAMP_NS, gap;
	__u32 policy, lat, more, reason, armed;

	/*
	 * `produced` was incremented atomically (a full barrier) before this
	 * load; user space stores armed, fences, then rereads produced, so a
	 * receiver arming now cannot miss the frame.
	 */
	armed = *(volatile __u32 *)&sh->armed;
	policy = knob(&k_policy, ep, XW_DEF_POLICY);

	/*
	 * The time is needed by the gap rules (stream, adaptive), by an armed
	 * receiver's batch, timer and record, and by trace records.  A frame
	 * to a running receiver under the other policies needs none (the
	 * spinning ping-pong): no clock read.  last_frame_ns is then 0, "no
	 * previous frame", which the gap rules read as a pause, as they do
	 * after a wake state reset; it only matters on a change of policy.
	 */
	if (armed || policy == XW_POLICY_STREAM || policy == XW_POLICY_ADAPTIVE ||
	    (epflags & XW_EPF_TRACE)) {
		now = clock_now();
		if (ws->last_frame_ns && now - ws->last_frame_ns < GAP_CLAMP_NS)
			gap_since = now - ws->last_frame_ns;
	}
	ws->last_frame_ns = now;

	/* The watchdog covers an application that is not waiting at all. */
	watchdog_arm(ep, sh, produced, &now);

	lat = (flags & XW_F_LAT) &&
	      ((knob(&k_lat_mask, ep, XW_DEF_LAT_MASK) >> (type & 31)) & 1);
	more = flags & XW_F_MORE;
	if (lat)
		s->lat_frames++;
	if (more)
		s->more_frames++;

	if (policy == XW_POLICY_ADAPTIVE) {
		/* The arrival rate is measured whether or not anyone sleeps. */
		ws->gap_ewma_ns = (ws->gap_ewma_ns * 7 + gap_since) / 8;
		if (ws->adapt_mode == XW_ADAPT_MARKER &&
		    ws->gap_ewma_ns < (__u64)knob(&k_adapt_enter_usecs, ep,
						  XW_DEF_ADAPT_ENTER_USECS) * NSEC_PER_USEC) {
			ws->adapt_mode = XW_ADAPT_STREAM;
			s->adapt_switches++;
		} else if (ws->adapt_mode == XW_ADAPT_STREAM &&
			   ws->gap_ewma_ns > (__u64)knob(&k_adapt_exit_usecs, ep,
							 XW_DEF_ADAPT_EXIT_USECS) * NSEC_PER_USEC) {
			ws->adapt_mode = XW_ADAPT_MARKER;
			s->adapt_switches++;
		}
		policy = ws->adapt_mode == XW_ADAPT_STREAM ? XW_POLICY_STREAM : XW_POLICY_MARKER;
	}

	/* A receiver that is not armed is running and will see this frame:
	 * no batch, no timer. */
	if (!armed) {
		s->wake_unarmed++;
		ws->pending = 0;
		ws->deferred = 0;
		ws->deferred_since_ns = 0;
		trace(ep, epflags, XW_REC_UNARMED, XW_WAKE_NONE, 1, now, produced);
		return;
	}
	timer_init(ws);

	/* Everything before this frame consumed: a new batch starts here. */
	if (sh->consumed + 1 >= produced) {
		ws->pending = 0;
		ws->deferred = 0;
		ws->deferred_since_ns = 0;
	}
	/* Atomic (a full barrier) before timer_due() reads deadline_ns: pairs
	 * with the callback's exchange of deadline_ns before it reads pending,
	 * so a frame racing an expiring timer is seen by one of the two. */
	if (__sync_fetch_and_add(&ws->pending, 1) == 0)
		ws->first_pending_ns = now;

	switch (policy) {
	case XW_POLICY_EVERY:
		wake(ep, epflags, ws, sh, s, XW_WAKE_EVERY, now);
		return;
	case XW_POLICY_MARKER:
		if (lat) {
			wake(ep, epflags, ws, sh, s, XW_WAKE_MARKER, now);
			return;
		}
		break;
	case XW_POLICY_STREAM:
		if (!lat && !ws->deferred)
			break;
		gap = (__u64)knob(&k_stream_gap_usecs, ep, XW_DEF_STREAM_GAP_USECS) *
		      NSEC_PER_USEC;
		if (more || (gap && gap_since < gap)) {
			/* Inside a burst: hold the wake until it pauses. */
			if (!ws->deferred) {
				ws->deferred = 1;
				ws->deferred_since_ns = now;
				s->deferrals++;
				trace(ep, epflags, XW_REC_DEFER, XW_WAKE_STREAM, ws->pending,
				      now, produced);
			}
			if (timer_due(ws, s, due_time(ws, ep, &reason), now))
				wake(ep, epflags, ws, sh, s, reason, now);
			return;
		}
		wake(ep, epflags, ws, sh, s, ws->deferred ? XW_WAKE_STREAM : XW_WAKE_MARKER, now);
		return;
	default:
		break;
	}

	/* The timeout rule: coalesce_frames pending, or coalesce_usecs. */
	if (ws->pending >= knob(&k_coalesce_frames, ep, XW_DEF_COALESCE_FRAMES)) {
		wake(ep, epflags, ws, sh, s, XW_WAKE_FRAMES, now);
		return;
	}
	if (timer_due(ws, s, due_time(ws, ep, &reason), now))
		wake(ep, epflags, ws, sh, s, reason, now);
}

/* ---- the program ---------------------------------------------------- */

static __always_inline int pass(struct xw_map_stats *g, __u64 len)
{
	g->frames_passed++;
	g->bytes_passed += len;
	return XDP_PASS;
}

static __always_inline int data_type(__u8 type)
{
	return type == XW_PKT_SMALL || type == XW_PKT_MEDIUM || type == XW_PKT_RNDV ||
	       type == XW_PKT_PULL_REPLY;
}

/*
 * A PROBE for endpoint @ep that passed the checks (endpoint, session,
 * queue): the peer asks whether the endpoint's socket is open, because the
 * endpoint has been silent while something is owed (its process may be
 * computing for minutes, or stopped).  Answered here when the AF_XDP socket
 * is in the XSKMAP, without touching the endpoint's RX ring or waking it,
 * as the kernel answers TCP's zero-window probes for a process that does
 * not read.  The reply is the probe turned around in place (proto.h):
 * addresses and endpoint ids swapped, type PROBE_REPLY, csum the value the
 * prober put in `data`, data the endpoint's consumed count (outside the
 * CRC).  When the socket is not there - the kernel removes it when the
 * socket is closed, so the process exited or died - or the endpoint is not
 * in use (@sh NULL), the answer says so, as a closed TCP port answers with
 * a reset: flags XW_F_GONE, csum the value the prober put in `rsvd2`,
 * rsvd2 and data 0.  The prober gives the endpoint it spoke to up at once,
 * instead of waiting out a silence that may also be a lossy path.
 */
static __always_inline int probe_answer(struct ethhdr *eth, struct iphdr *ip, struct xw_hdr *h,
					void *data_end, __u32 ep, struct xw_shared *sh,
					struct xw_map_stats *s)
{
	int gone = !sh || !bpf_map_lookup_elem(&xsks, &ep);
	__u8 mac[ETH_ALEN];
	__be32 a;
	__be16 e;

	if (eth->h_dest[0] & 1) { /* a probe is unicast: no reply from a multicast address */
		s->drop_type++;
		return XDP_DROP;
	}
	__builtin_memcpy(mac, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, mac, ETH_ALEN);
	if (ip) {
		struct udphdr *udp = (void *)ip + ip->ihl * 4;

		/* the caller checked the UDP header is in the frame; the
		 * verifier wants to see it again */
		if ((void *)(udp + 1) > data_end)
			return XDP_DROP;
		a = ip->saddr; /* the IPv4 checksum does not change */
		ip->saddr = ip->daddr;
		ip->daddr = a;
		e = udp->source;
		udp->source = udp->dest;
		udp->dest = e;
		udp->check = 0; /* optional in IPv4; the header has its CRC32C */
	}
	h->type = XW_PKT_PROBE_REPLY;
	e = h->dst_ep;
	h->dst_ep = h->src_ep;
	h->src_ep = e;
	if (gone) {
		h->flags = XW_F_GONE;
		h->csum = h->rsvd2;
		h->rsvd2 = 0;
		h->data = 0;
		s->probes_gone++;
		return XDP_TX;
	}
	h->csum = h->data;
	/* whether the process polls: a peer that polls (its consumed count
	 * moves) but ignores the prober's frames is not kept alive */
	h->data = bpf_htonl((__u32)*(volatile __u64 *)&sh->consumed);
	s->probes_answered++;
	return XDP_TX;
}

/*
 * Loaded with fragment support (xdp.frags): a frame larger than a page
 * (jumbo MTUs) arrives in several buffers, of which the program reads only
 * the first: every header it looks at must be there (a frame whose xdpwake
 * header is not is dropped as short), and the lengths it checks are the
 * whole frame's (bpf_xdp_get_buff_len), held as offsets from the frame's
 * start.  The AF_XDP socket takes the buffers as a multi-buffer frame.
 */
SEC("xdp.frags")
int xw_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	void *pos;
	__u32 gkey = xw_max_endpoints, ep, encap, plen, mlen, foff, fidx, fcnt, conf_sess;
	__u64 frame_len, limit, hoff;
	struct ethhdr *eth = data;
	struct xw_ep_entry *epi;
	struct xw_wake_state *ws;
	struct xw_shared *sh;
	struct xw_map_stats *g, *s;
	struct xw_hdr *h;
	struct iphdr *ip = 0;
	struct udphdr *udp;
	__u64 produced;
	__be16 proto;
	int act;

	frame_len = bpf_xdp_get_buff_len(ctx);
	limit = frame_len;
	g = bpf_map_lookup_elem(&stats, &gkey);
	if (!g)
		return XDP_PASS;

	if ((void *)(eth + 1) > data_end)
		return pass(g, frame_len);
	proto = eth->h_proto;
	pos = eth + 1;
#pragma unroll
	for (int i = 0; i < 2; i++) {
		struct vlan_hdr *vh = pos;

		if (proto != ETH_P_8021Q_BE && proto != ETH_P_8021AD_BE)
			break;
		if ((void *)(vh + 1) > data_end)
			return pass(g, frame_len);
		proto = vh->proto;
		pos = vh + 1;
	}

	encap = xw_encap;
	if ((encap & XW_ENCAP_ETH) && proto == bpf_htons((__u16)xw_ethertype)) {
		h = pos;
	} else if ((encap & XW_ENCAP_UDP) && proto == bpf_htons(ETH_P_IP)) {
		__u32 ihl, tot, ulen, uq, *inuse;

		ip = pos;
		if ((void *)(ip + 1) > data_end)
			return pass(g, frame_len);
		if (ip->version != 4 || ip->ihl < 5 || ip->protocol != IPPROTO_UDP ||
		    (ip->frag_off & IP_MF_OFFSET_BE))
			return pass(g, frame_len);
		ihl = ip->ihl * 4;
		udp = pos + ihl;
		if ((void *)(udp + 1) > data_end)
			return pass(g, frame_len);
		/* Port udp_port + q belongs to the endpoints on queue q: ours
		 * only while a socket of ours is bound to q.  Other ports
		 * pay no map lookup. */
		uq = (__u32)bpf_ntohs(udp->dest) - (xw_udp_port & 0xFFFF);
		if (uq >= XW_MAX_QUEUES)
			return pass(g, frame_len);
		inuse = bpf_map_lookup_elem(&udp_queues, &uq);
		if (!inuse || !*inuse)
			return pass(g, frame_len);
		/* Ours from here on: the lengths must not lie. */
		g->frames_ours++;
		g->bytes_ours += frame_len;
		tot = bpf_ntohs(ip->tot_len);
		ulen = bpf_ntohs(udp->len);
		hoff = (__u64)(pos - data);
		/* an opaque offset: the compiler must not fold it back into
		 * pointer arithmetic with the unbounded frame length */
		asm volatile("" : "+r"(hoff));
		if (tot < ihl + sizeof(*udp) || tot > frame_len - hoff ||
		    ulen < sizeof(*udp) || ulen > tot - ihl) {
			g->drop_length++;
			return XDP_DROP;
		}
		h = (void *)(udp + 1);
		limit = hoff + ihl + (ulen & 0xFFFF);
	} else {
		return pass(g, frame_len);
	}
	if (!ip) {
		g->frames_ours++;
		g->bytes_ours += frame_len;
	}
	if (other_host(eth)) {
		g->pass_other_host++;
		return XDP_PASS;
	}

	hoff = (__u64)((void *)(h + 1) - data);
	asm volatile("" : "+r"(hoff));
	if ((void *)(h + 1) > data_end || hoff > limit) {
		g->drop_short++;
		return XDP_DROP;
	}
	if (h->version != XW_VERSION) {
		g->drop_version++;
		return XDP_DROP;
	}
	if (h->type == XW_PKT_INVALID || h->type >= XW_PKT_TYPE_MAX) {
		g->drop_type++;
		return XDP_DROP;
	}
	plen = bpf_ntohs(h->payload_len);
	if (hoff + plen > limit) {
		g->drop_length++;
		return XDP_DROP;
	}
	mlen = bpf_ntohl(h->msg_len);
	foff = bpf_ntohl(h->frag_off);
	fidx = bpf_ntohl(h->frag_idx);
	fcnt = bpf_ntohl(h->frag_count);
	if (data_type(h->type) || h->type == XW_PKT_PULL) {
		if (fcnt == 0 || fidx >= fcnt) {
			g->drop_frag++;
			return XDP_DROP;
		}
		if (foff > mlen ||
		    (data_type(h->type) && (__u64)foff + plen > (__u64)mlen)) {
			g->drop_length++;
			return XDP_DROP;
		}
		if (h->type == XW_PKT_SMALL && (fcnt != 1 || foff != 0 || plen != mlen)) {
			g->drop_length++;
			return XDP_DROP;
		}
	}

	ep = bpf_ntohs(h->dst_ep);
	if (ep >= xw_max_endpoints) {
		g->drop_endpoint++;
		return XDP_DROP;
	}
	epi = bpf_map_lookup_elem(&endpoints, &ep);
	s = bpf_map_lookup_elem(&stats, &ep);
	sh = bpf_map_lookup_elem(&shared, &ep);
	ws = bpf_map_lookup_elem(&wake_state, &ep);
	if (!epi || !s || !sh || !ws) {
		g->drop_endpoint++;
		return XDP_DROP;
	}
	if (!(epi->flags & XW_EPF_ACTIVE)) {
		/* nobody there: a prober learns it (probe_answer) */
		if (h->type == XW_PKT_PROBE)
			return probe_answer(eth, ip, h, data_end, ep, NULL, s);
		g->drop_endpoint++;
		return XDP_DROP;
	}

	/* Sessions: a new incarnation introduces itself with CONNECT. */
	if (h->type != XW_PKT_CONNECT && h->type != XW_PKT_CONNECT_REPLY &&
	    h->type != XW_PKT_PROBE_REPLY) {
		conf_sess = knob(&k_session, ep, 0);
		if (conf_sess && bpf_ntohl(h->session) != conf_sess) {
			s->drop_session++;
			return XDP_DROP;
		}
	}
	if ((epi->flags & XW_EPF_CONNS) && h->type != XW_PKT_CONNECT_REPLY &&
	    h->type != XW_PKT_PROBE_REPLY) {
		struct xw_conn_key ck = {};
		struct conn_memo *cm;
		__u32 csess = 0, found = 0;
		__u64 gen;

		ck.src_ep = bpf_ntohs(h->src_ep);
		ck.dst_ep = ep;
		if (ip)
			ck.peer_ip = ip->saddr;
		else
			__builtin_memcpy(ck.peer_mac, eth->h_source, ETH_ALEN);
		/* The generation before the lookup: a change racing it
		 * leaves the memo tagged with the old one. */
		gen = *(volatile __u64 *)&sh->conns_gen;
		cm = bpf_map_lookup_elem(&conn_memo, &ep);
		if (cm && cm->valid && cm->gen == gen &&
		    conn_key_eq(&cm->key, &ck)) {
			found = cm->found;
			csess = cm->session;
		} else {
			__u32 *e = bpf_map_lookup_elem(&conns, &ck);

			if (e) {
				found = 1;
				csess = *e;
			}
			if (cm) {
				cm->key = ck;
				cm->gen = gen;
				cm->session = csess;
				cm->found = found;
				cm->valid = 1;
			}
		}
		if (found && csess != bpf_ntohl(h->session)) {
			if (h->type == XW_PKT_CONNECT) {
				/* The peer restarted: the frames right behind
				 * its CONNECT carry the new session, which the
				 * library registers once it has taken the
				 * CONNECT; until then it checks them alone. */
				bpf_map_delete_elem(&conns, &ck);
				__sync_fetch_and_add(&sh->conns_gen, 1);
				if (cm)
					cm->valid = 0;
			} else {
				s->drop_session++;
				return XDP_DROP;
			}
		}
	}

	if (ctx->rx_queue_index != epi->queue_id) {
		s->drop_queue++;
		return XDP_DROP;
	}
	if (h->type == XW_PKT_PROBE)
		return probe_answer(eth, ip, h, data_end, ep, sh, s);
	act = bpf_redirect_map(&xsks, ep, XDP_DROP);
	if (act != XDP_REDIRECT) {
		s->drop_nosocket++;
		return XDP_DROP;
	}
	s->frames_redirected++;
	s->bytes_redirected += frame_len;
	produced = __sync_fetch_and_add(&sh->produced, 1) + 1;
	decide(ep, epi->flags, ws, sh, s, h->type, h->flags, produced);
	return XDP_REDIRECT;
}

/*
 * The wake decision for a frame that did not come through the NIC: a peer
 * on the same host wrote it into the endpoint's shared-memory inbox
 * (userspace/lib/local.c), incremented `produced` and found the receiver
 * armed.  It runs this program with BPF_PROG_TEST_RUN; the input is a
 * struct xw_local_in, and the decision is decide()'s, as for a frame
 * redirected above: the endpoint's policy, the marks, deferral, the
 * watchdog, the statistics and the wake through the same ring.  Returns
 * XDP_PASS when a decision was made, XDP_ABORTED for bad input or an
 * inactive endpoint.
 */
SEC("xdp")
int xw_local(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xw_local_in *in = data;
	struct xw_ep_entry *epi;
	struct xw_wake_state *ws;
	struct xw_shared *sh;
	struct xw_map_stats *s;
	__u32 ep;

	if ((void *)(in + 1) > data_end)
		return XDP_ABORTED;
	ep = in->ep;
	if (ep >= xw_max_endpoints)
		return XDP_ABORTED;
	epi = bpf_map_lookup_elem(&endpoints, &ep);
	s = bpf_map_lookup_elem(&stats, &ep);
	sh = bpf_map_lookup_elem(&shared, &ep);
	ws = bpf_map_lookup_elem(&wake_state, &ep);
	if (!epi || !s || !sh || !ws || !(epi->flags & XW_EPF_ACTIVE))
		return XDP_ABORTED;
	decide(ep, epi->flags, ws, sh, s, in->type, in->flags, in->produced);
	return XDP_PASS;
}

/* libxdp: run as part of a multi-program chain, continue on XDP_PASS. */
struct {
	__uint(priority, 20);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xw_xdp);

char LICENSE[] SEC("license") = "GPL";
