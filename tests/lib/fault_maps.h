/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * fault_maps.h - map layouts shared by tests/bpf/impair.bpf.c (the tc impairment
 * program of the fault-injection harness) and tests/fault.h (its user-space
 * side).  Only fixed-width kernel types: compiled by clang -target bpf and
 * by the tests.  All values in host byte order.  See tests/fault.h.
 */
#ifndef XWF_FAULT_MAPS_H
#define XWF_FAULT_MAPS_H

#include <linux/types.h>
#include <linux/bpf.h> /* struct bpf_spin_lock */

/* Directions (key of the per-direction maps). */
#define XWF_A_TO_B 0
#define XWF_B_TO_A 1

/* Probabilities are in 1/65536: 0 never, 65536 (XWF_ALWAYS) always. */
#define XWF_ALWAYS 65536u
#define XWF_DROP_LIST_MAX 16

/* TCP segments to or from xwf_global.tcp_port (0: TCP passes untouched) are
 * impaired like xdpwake frames, with these two pseudo types in type_mask:
 * segments with payload and segments without (SYN, FIN, pure ACKs). */
#define XWF_TCP_DATA 31
#define XWF_TCP_CTL 30

/*
 * One direction's impairments.  They apply only to xdpwake frames (our
 * EtherType, or IPv4/UDP to or from our port) whose xdpwake type is in
 * type_mask; everything else (ARP, IP, other xdpwake types) passes
 * untouched.  "Frame number" = index of the impairable frame in this
 * direction, counted from 0 at the xwf_set() that installed the config.
 *
 * Per frame, in order: blackhole?  dropped (drop list, then random or
 * Gilbert-Elliott)?  duplicated (a clean copy sent first)?  one bit
 * flipped?  tail cut?  Each random decision uses its own draw from a
 * counter-based generator keyed by (seed, direction, frame number), so the
 * same seed gives the same decisions for the same frame sequence, and
 * changing one probability does not change the other decisions.
 */
struct xwf_cfg {
	__u32 type_mask;   /* bit (1 << enum xw_pkt_type) per impaired type; 0: all  */
	__u32 drop_p;	   /* random drop (the good state's loss when GE is on)        */
	__u32 ge_p_gb;	   /* Gilbert-Elliott: good -> bad per frame; 0: GE off        */
	__u32 ge_p_bg;	   /* bad -> good per frame                                    */
	__u32 ge_drop_bad; /* loss in the bad state                                    */
	__u32 corrupt_p;   /* flip one random bit of the xdpwake header + payload      */
	__u32 corrupt_off; /* ... at or after this byte offset into the xdpwake header */
	__u32 trunc_p;	   /* cut the tail: new length uniform in [xw+1, len-1]        */
	__u32 dup_p;	   /* deliver twice (bpf_clone_redirect)                       */
	__u32 ndrop;	   /* entries of drop_idx in use                               */
	__u32 drop_idx[XWF_DROP_LIST_MAX]; /* frame numbers always dropped            */
	__u64 bh_start_ns; /* blackhole: drop everything in [start, end) of            */
	__u64 bh_end_ns;   /*   CLOCK_MONOTONIC (bpf_ktime_get_ns)                      */
	__u64 bh_base_ns;  /* periodic blackhole: drop while now >= base and           */
	__u64 bh_period_ns; /*  (now - base) % period < on                              */
	__u64 bh_on_ns;
	__u32 drop_first;  /* frame numbers [drop_first, drop_first + drop_n) dropped */
	__u32 drop_n;	   /*   (a burst; counted as dropped_list)                     */
};

/* Per-direction map value: the config and the generator state, replaced
 * atomically by user space (BPF_F_LOCK). */
struct xwf_dir {
	struct bpf_spin_lock lock;
	__u32 ge_bad;	   /* Gilbert-Elliott state: 1 = bad                            */
	__u64 index;	   /* impairable frames seen since the config was set           */
	struct xwf_cfg cfg;
};

/* Per-direction counters (cumulative until xwf_reset_counters()). */
struct xwf_counters {
	__u64 seen;	    /* xdpwake frames arriving in this direction              */
	__u64 matched;	    /* of those, in type_mask (impairable)                    */
	__u64 blackholed;   /* dropped by a blackhole                                 */
	__u64 dropped;	    /* dropped otherwise (list + random + Gilbert-Elliott)    */
	__u64 dropped_list; /*   of which by the drop list                            */
	__u64 dropped_bad;  /*   of which in the Gilbert-Elliott bad state            */
	__u64 duplicated;   /* extra copies sent                                      */
	__u64 corrupted;    /* frames with one bit flipped                            */
	__u64 truncated;    /* frames cut                                             */
	__u64 relayed;	    /* xdpwake frames handed to the delay/reorder relay       */
	__u64 other;	    /* non-xdpwake frames passed                              */
	__u64 errors;	    /* helper failures (frame passed or dropped as it was)    */
	__u64 last_bit;	    /* last flipped bit, as a bit offset into the frame       */
	__u64 last_trunc;   /* last truncated length                                  */
};

/* Global settings (single entry). */
struct xwf_global {
	__u64 seed;
	__u32 ifindex[2];  /* M's interface towards A ([0]) and towards B ([1])       */
	__u32 pipe[2];	   /* relay pipe entry per direction (0: no relay)             */
	__u32 relay_on[2]; /* direction's xdpwake frames go through the relay          */
	__u16 ethertype;   /* ours (XW_DEFAULT_ETHERTYPE)                             */
	__u16 udp_port;	   /* ours (XW_DEFAULT_UDP_PORT)                              */
	__u16 tcp_port;	   /* TCP to or from this port is impaired too (0: not)       */
	__u16 pad;
};

#endif
