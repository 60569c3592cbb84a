/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * fault.h - the fault-injection harness: three network namespaces and an
 * impairing middle.
 *
 *      host A                    middle M                      host B
 *   +---------+  veth   +-----------------------------+  veth  +---------+
 *   |  xwfa   |<------->| xwfma  --tc ingress-->  xwfmb|<------>|  xwfb   |
 *   |10.78.0.1|         |        <--tc ingress--       |        |10.78.0.2|
 *   +---------+         |   |  relay pipes  ^          |        +---------+
 *                       |   v               |          |
 *                       | xwfpa0->xwfpa1 -> relay (AF_PACKET, delay/reorder)
 *                       | xwfpb0->xwfpb1 ->   (user space, forked child)
 *                       +-----------------------------+
 *
 * AF_XDP copy-mode transmit skips tc egress, so impairment happens on M's
 * ingress: tests/bpf/impair.bpf.c, attached with clsact (direct action) to xwfma
 * and xwfmb, redirects every frame to the other side (M is a transparent
 * wire; ARP, IP and everything not ours pass untouched) and impairs
 * xdpwake frames (EtherType 0x88B5 or IPv4/UDP port 49152, one VLAN tag
 * allowed) of the configured types: blackhole, drop (list of frame
 * numbers, a range of them, random, Gilbert-Elliott bursts), duplication (bpf_clone_redirect,
 * a clean copy first), one-bit corruption (never in the Ethernet/IP/UDP
 * headers, so the frame still reaches the XDP program), truncation
 * (bpf_skb_change_tail).  Decisions come from a counter-based generator
 * keyed by (seed, direction, frame number): same seed, same frame sequence
 * -> same decisions.  The seed comes from xwf_opts.seed or $XWF_SEED
 * (random otherwise), is printed at set-up and again at exit when a check
 * failed.  With xwf_global.tcp_port set (bench/loss.c), TCP segments to or
 * from that port are impaired too (types XWF_TCP_DATA and XWF_TCP_CTL).
 *
 * Delay and reordering (no netem or fq on this kernel): with the relay on
 * for a direction, tc redirects that direction's xdpwake frames (after the
 * impairments above; all types, type_mask does not apply) into a veth
 * "pipe" inside M; a forked relay process reads them with AF_PACKET and
 * re-sends them out of M's other interface after delay_us (+ jitter,
 * order kept) and with a reordering rule (hold every Nth frame back by K
 * positions; N=2, K=1 swaps each pair); queue and hold time are bounded.
 *
 * Namespaces are anonymous (unshare), kept alive by file descriptors of
 * the process that called xwf_setup() and by its children: they vanish
 * when it exits, crash included.  Children die with it (PDEATHSIG).
 *
 * API (the functions are in fault.c, libxwt.a; it needs impair.skel.h from
 * the build and links with libbpf):
 *
 *   struct xwf_topo t;
 *   xwf_setup(&t, &opts);         // opts may be NULL; skips (exit 77) without
 *                                 // root/veth/tc; this process ends up in M
 *   xwf_enter(&t, XWF_HOST_A);    // this process now lives in A (or B, M):
 *                                 // sockets, xdpwake endpoints on t.ifname[0]
 *   xwf_socket(&t, host, dom, type, proto)   // a socket made in host's ns
 *   xwf_sh(&t, host, "ip -s link")           // a command in host's ns
 *   pid = xwf_spawn(&t, XWF_HOST_B, fn, arg); // fn(&t, arg) in a child in B
 *   rc = xwf_join(&t, pid, timeout_ms);       // its exit code (-1: killed)
 *   rc = xwf_run(&t, fn_a, fn_b, arg, timeout_ms); // both hosts as children,
 *       // joined by t.chan (xwt_bar(), xwt_xchg() of chan.h); t.self = XWF_HOST_A/B
 *
 *   struct xwf_cfg c = { .type_mask = XWF_TYPE(XW_PKT_SMALL),
 *                        .drop_p = XWF_P(0.02) };
 *   xwf_set(&t, XWF_A_TO_B, &c);  // any time, from any process of the
 *                                 // topology (map fds are inherited); frame
 *                                 // numbers restart at 0; NULL: no impairment
 *   xwf_blackhole_in(&c, 100, 2000);     // window from now+100 ms, 2 s long
 *   xwf_blackhole_every(&c, 7000, 2000); // 2 s out of every 7 s from now
 *   xwf_clear(&t);                // both directions clean, relay off
 *   struct xwf_counters k = xwf_counters(&t, XWF_A_TO_B);
 *   xwf_reset_counters(&t);
 *   xwf_set_seed(&t, seed);       // decisions of every later frame
 *   // the first PULL from B to A lost, nothing else touched:
 *   c = (struct xwf_cfg){ .type_mask = XWF_TYPE(XW_PKT_PULL), .ndrop = 1,
 *                         .drop_idx = { 0 } };
 *   xwf_set(&t, XWF_B_TO_A, &c);
 *
 *   struct xwf_relay_cfg r = { .delay_us = 20000 };   // or reorder_every = 2,
 *   xwf_relay(&t, XWF_A_TO_B, &r);                      // reorder_by = 1
 *   xwf_relay(&t, XWF_A_TO_B, NULL);   // off (queued frames still go out)
 *   struct xwf_relay_stats s = xwf_relay_stats(&t, XWF_A_TO_B); // cumulative
 *   xwf_relay_drain(&t, XWF_A_TO_B, 1000); // queue empty: sent counted
 *
 *   xwf_teardown(&t);             // optional: exit does the same
 *
 * Directions: XWF_A_TO_B (frames from A to B), XWF_B_TO_A.  Probabilities
 * are in 1/65536 (XWF_P(0.1) = 10%, XWF_ALWAYS = 100%).  Hosts: A is
 * t.ifname[0] = "xwfa", MAC t.mac[0], IP t.ip[0]; B is index 1.
 */
#ifndef XWF_FAULT_H
#define XWF_FAULT_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "chan.h"
#include "harness.h"
#include "xdpwake/proto.h"
#include "fault_maps.h"

#define XWF_HOST_A 0
#define XWF_HOST_B 1
#define XWF_HOST_M 2

#define XWF_P(frac) ((__u32)((frac) * 65536.0 + 0.5))
#define XWF_TYPE(t) (1u << (t))

#define XWF_IP_A "10.78.0.1"
#define XWF_IP_B "10.78.0.2"

#define XWF_RELAY_QMAX 1024	      /* frames queued per direction, at most */
#define XWF_RELAY_DELAY_MAX 10000000u /* us */
#define XWF_RELAY_HOLD_DEF 10000u     /* us a held frame waits at most     */

struct xwf_relay_cfg {
	__u32 delay_us;	     /* every frame waits at least this long               */
	__u32 jitter_us;     /* plus 0..jitter_us (order kept)                      */
	__u32 reorder_every; /* 0: keep order; else frames i % every == 0 (counted   */
	__u32 reorder_by;    /*   from this call) go out after reorder_by later ones */
	__u32 hold_max_us;   /* a held frame goes anyway after this (0: 10 ms)       */
	__u32 queue_max;     /* frames queued (0 or more than XWF_RELAY_QMAX: max)   */
};

struct xwf_relay_stats {
	__u64 received;	 /* frames the relay read from the pipe             */
	__u64 sent;	 /* frames it sent on                                */
	__u64 held;	 /* frames held back by the reordering rule          */
	__u64 held_late; /* ... of which released by hold_max_us             */
	__u64 overflow;	 /* dropped: queue full                              */
	__u64 oversize;	 /* dropped: larger than the MTU                     */
	__u64 errors;	 /* send failures                                    */
};

struct xwf_shm {
	__u32 seq[2]; /* seqlock over cfg[dir]; odd while written */
	__u32 ready;  /* the relay's sockets are bound (set once)  */
	__u32 pad;
	struct xwf_relay_cfg cfg[2];
	struct xwf_relay_stats stats[2];
};

struct xwf_opts {
	__u64 seed;   /* 0: $XWF_SEED, else random */
	__u32 mtu;    /* 0: 1500; all six veths    */
	bool quiet;   /* do not print the seed at set-up */
};

struct impair_bpf; /* impair.skel.h (fault.c) */
struct xwf_topo;
typedef int (*xwf_fn)(struct xwf_topo *t, void *arg);

struct xwf_topo {
	int ns[3];	     /* netns fds: A, B, M                               */
	int host;	     /* where this process is now (XWF_HOST_*)            */
	pid_t owner;	     /* the process that set up                           */
	__u64 seed;
	__u32 mtu;
	struct impair_bpf *skel;
	int dirs_fd, counters_fd, global_fd;
	struct xwf_shm *shm;
	pid_t relay_pid;
	char ifname[2][IF_NAMESIZE]; /* A's and B's interfaces                  */
	__u8 mac[2][6];
	char ip[2][16];
	int m_ifindex[4];    /* in M: xwfma, xwfmb, xwfpa1, xwfpb1 */
	/* xwf_run() children */
	int self;	     /* XWF_HOST_A / XWF_HOST_B, -1 elsewhere */
	int chan;	     /* socketpair end to the other host      */
};

/* ------------------------------------------------------------------ */
/* Namespaces                                                         */

/* ------------------------------------------------------------------ */

void xwf_enter(struct xwf_topo *t, int host);
/* A socket created in @host's namespace; this process stays where it is. */
int xwf_socket(struct xwf_topo *t, int host, int domain, int type, int proto);
__attribute__((format(printf, 3, 4))) int xwf_sh(struct xwf_topo *t, int host,
						 const char *fmt, ...);
int xwf_ifindex(struct xwf_topo *t, int host);

/* Quiet namespace: no IPv6 (no ND/MLD frames in the way). */
void xwf_ns_basics(void);
int xwf_running(const char *ifname);

/* ------------------------------------------------------------------ */
/* Impairment control                                                 */

/* ------------------------------------------------------------------ */

void xwf_set(struct xwf_topo *t, int dir, const struct xwf_cfg *cfg);

void xwf_set_seed(struct xwf_topo *t, __u64 seed);
struct xwf_counters xwf_counters(struct xwf_topo *t, int dir);
void xwf_reset_counters(struct xwf_topo *t);
/* Blackhole window [now + start_ms, now + start_ms + dur_ms). */
void xwf_blackhole_in(struct xwf_cfg *c, __u32 start_ms, __u32 dur_ms);
/* Blackhole on_ms out of every period_ms, starting now. */
void xwf_blackhole_every(struct xwf_cfg *c, __u32 period_ms, __u32 on_ms);

/* ------------------------------------------------------------------ */
/* Relay (delay and reordering)                                       */

/* ------------------------------------------------------------------ */

void xwf_relay(struct xwf_topo *t, int dir, const struct xwf_relay_cfg *rc);
struct xwf_relay_stats xwf_relay_stats(struct xwf_topo *t, int dir);
/* Waits until every frame the relay read for @dir went out (or was
 * dropped): 0, or -ETIMEDOUT after timeout_ms.  Frames still in the
 * pipe, not yet read, are not its business. */
int xwf_relay_drain(struct xwf_topo *t, int dir, int timeout_ms);

/* ------------------------------------------------------------------ */
/* Set-up and teardown                                                */

/* ------------------------------------------------------------------ */

void xwf_setup(struct xwf_topo *t, const struct xwf_opts *o);
void xwf_clear(struct xwf_topo *t);
void xwf_teardown(struct xwf_topo *t);

/* ------------------------------------------------------------------ */
/* Host processes                                                     */

/* ------------------------------------------------------------------ */

/* fn(t, arg) in a child in @host's namespace; its return value (or 1 when
 * a CHECK failed) is the exit code.  Map fds and the relay's shared memory
 * are inherited, so the child can use xwf_set() & co. */
pid_t xwf_spawn(struct xwf_topo *t, int host, xwf_fn fn, void *arg);
/* Waits for a child of xwf_spawn(); kills it after timeout_ms.  Returns
 * its exit code, 128 + signal, or -1 on timeout. */
int xwf_join(struct xwf_topo *t, pid_t pid, int timeout_ms);

/* fn_a in A and fn_b in B, as two children joined by t->chan; returns 0
 * when both exit 0 (the seed is printed otherwise). */
int xwf_run(struct xwf_topo *t, xwf_fn fn_a, xwf_fn fn_b, void *arg,
	    int timeout_ms);

#endif
