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
 * numbers, random, Gilbert-Elliott bursts), duplication (bpf_clone_redirect,
 * a clean copy first), one-bit corruption (never in the Ethernet/IP/UDP
 * headers, so the frame still reaches the XDP program), truncation
 * (bpf_skb_change_tail).  Decisions come from a counter-based generator
 * keyed by (seed, direction, frame number): same seed, same frame sequence
 * -> same decisions.  The seed comes from xwf_opts.seed or $XWF_SEED
 * (random otherwise), is printed at set-up and again at exit when a check
 * failed.
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
 * API (header only, everything static inline; needs impair.skel.h from the
 * build and links with libbpf):
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
 *       // joined by t.chan (xwf_bar(), xwf_xchg()); t.self = XWF_HOST_A/B
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
 *   struct xwf_relay_stats s = xwf_relay_stats(&t, XWF_A_TO_B);
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

#include "harness.h"
#include "xdpwake/proto.h"
#include "fault_maps.h"
#include "impair.skel.h"

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
	__u32 pad[2];
	struct xwf_relay_cfg cfg[2];
	struct xwf_relay_stats stats[2];
};

struct xwf_opts {
	__u64 seed;   /* 0: $XWF_SEED, else random */
	__u32 mtu;    /* 0: 1500; all six veths    */
	bool quiet;   /* do not print the seed at set-up */
};

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

static __u64 xwf_exit_seed;
static pid_t xwf_exit_owner;

static inline void xwf_print_seed(const struct xwf_topo *t)
{
	fprintf(stderr, "fault-injection seed 0x%llx (XWF_SEED=0x%llx repeats it)\n",
		(unsigned long long)t->seed, (unsigned long long)t->seed);
}

static inline void xwf_atexit(void)
{
	if (xwt_failures && getpid() == xwf_exit_owner)
		fprintf(stderr, "fault-injection seed 0x%llx (XWF_SEED=0x%llx repeats it)\n",
			(unsigned long long)xwf_exit_seed, (unsigned long long)xwf_exit_seed);
}

static inline int xwf_libbpf_silent(enum libbpf_print_level l, const char *f, va_list ap)
{
	if (l == LIBBPF_WARN && getenv("XWF_VERBOSE"))
		return vfprintf(stderr, f, ap);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Namespaces                                                         */
/* ------------------------------------------------------------------ */

static inline void xwf_enter(struct xwf_topo *t, int host)
{
	REQUIRE(host >= 0 && host <= 2, "xwf_enter: host %d", host);
	if (t->host == host)
		return;
	REQUIRE(setns(t->ns[host], CLONE_NEWNET) == 0, "setns to %c: %s", "ABM"[host],
		strerror(errno));
	t->host = host;
}

/* A socket created in @host's namespace; this process stays where it is. */
static inline int xwf_socket(struct xwf_topo *t, int host, int domain, int type, int proto)
{
	int prev = t->host, fd, err;

	xwf_enter(t, host);
	fd = socket(domain, type, proto);
	err = errno;
	xwf_enter(t, prev);
	errno = err;
	return fd;
}

__attribute__((format(printf, 3, 4))) static inline int xwf_sh(struct xwf_topo *t, int host,
							      const char *fmt, ...)
{
	char cmd[4096];
	int prev = t->host, rc;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	xwf_enter(t, host);
	rc = xwt_sh("%s", cmd);
	xwf_enter(t, prev);
	return rc;
}

static inline int xwf_ifindex(struct xwf_topo *t, int host)
{
	int prev = t->host, idx;

	xwf_enter(t, host);
	idx = (int)if_nametoindex(t->ifname[host]);
	xwf_enter(t, prev);
	return idx;
}

static inline void xwf_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, val, strlen(val)) < 0) {
		/* best effort (no IPv6) */
	}
	close(fd);
}

/* Quiet namespace: no IPv6 (no ND/MLD frames in the way). */
static inline void xwf_ns_basics(void)
{
	xwf_write_file("/proc/sys/net/ipv6/conf/all/disable_ipv6", "1");
	xwf_write_file("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
	REQUIRE(xwt_sh("ip link set lo up") == 0, "lo up");
}

static inline int xwf_running(const char *ifname)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ok = 0;

	if (fd < 0)
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0)
		ok = (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
	close(fd);
	return ok;
}

/* ------------------------------------------------------------------ */
/* Impairment control                                                 */
/* ------------------------------------------------------------------ */

static inline void xwf_set(struct xwf_topo *t, int dir, const struct xwf_cfg *cfg)
{
	struct xwf_dir v;
	__u32 key = (__u32)dir;

	REQUIRE(dir == XWF_A_TO_B || dir == XWF_B_TO_A, "xwf_set: direction %d", dir);
	memset(&v, 0, sizeof(v));
	if (cfg)
		v.cfg = *cfg;
	REQUIRE(v.cfg.ndrop <= XWF_DROP_LIST_MAX, "xwf_set: %u drop list entries",
		v.cfg.ndrop);
	REQUIRE(bpf_map_update_elem(t->dirs_fd, &key, &v, BPF_F_LOCK) == 0, "xwf_set: %s",
		strerror(errno));
}

static inline struct xwf_global xwf_global_get(struct xwf_topo *t)
{
	struct xwf_global g;
	__u32 key = 0;

	REQUIRE(bpf_map_lookup_elem(t->global_fd, &key, &g) == 0, "global map: %s",
		strerror(errno));
	return g;
}

static inline void xwf_global_put(struct xwf_topo *t, const struct xwf_global *g)
{
	__u32 key = 0;

	REQUIRE(bpf_map_update_elem(t->global_fd, &key, g, 0) == 0, "global map: %s",
		strerror(errno));
}

static inline void xwf_set_seed(struct xwf_topo *t, __u64 seed)
{
	struct xwf_global g = xwf_global_get(t);

	g.seed = seed;
	xwf_global_put(t, &g);
	t->seed = seed;
	xwf_exit_seed = seed;
}

static inline struct xwf_counters xwf_counters(struct xwf_topo *t, int dir)
{
	struct xwf_counters c;
	__u32 key = (__u32)dir;

	REQUIRE(bpf_map_lookup_elem(t->counters_fd, &key, &c) == 0, "counters: %s",
		strerror(errno));
	return c;
}

static inline void xwf_reset_counters(struct xwf_topo *t)
{
	struct xwf_counters c;

	memset(&c, 0, sizeof(c));
	for (__u32 key = 0; key < 2; key++)
		REQUIRE(bpf_map_update_elem(t->counters_fd, &key, &c, 0) == 0, "counters: %s",
			strerror(errno));
}

static inline __u64 xwf_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* Blackhole window [now + start_ms, now + start_ms + dur_ms). */
static inline void xwf_blackhole_in(struct xwf_cfg *c, __u32 start_ms, __u32 dur_ms)
{
	__u64 now = xwf_mono_ns();

	c->bh_start_ns = now + start_ms * 1000000ULL;
	c->bh_end_ns = c->bh_start_ns + dur_ms * 1000000ULL;
}

/* Blackhole on_ms out of every period_ms, starting now. */
static inline void xwf_blackhole_every(struct xwf_cfg *c, __u32 period_ms, __u32 on_ms)
{
	c->bh_base_ns = xwf_mono_ns();
	c->bh_period_ns = period_ms * 1000000ULL;
	c->bh_on_ns = on_ms * 1000000ULL;
}

/* ------------------------------------------------------------------ */
/* Relay (delay and reordering)                                       */
/* ------------------------------------------------------------------ */

static inline void xwf_relay(struct xwf_topo *t, int dir, const struct xwf_relay_cfg *rc)
{
	struct xwf_global g;

	REQUIRE(dir == XWF_A_TO_B || dir == XWF_B_TO_A, "xwf_relay: direction %d", dir);
	if (rc) {
		REQUIRE(rc->delay_us <= XWF_RELAY_DELAY_MAX && rc->jitter_us <= XWF_RELAY_DELAY_MAX &&
				rc->hold_max_us <= XWF_RELAY_DELAY_MAX,
			"xwf_relay: delay/jitter/hold above %u us", XWF_RELAY_DELAY_MAX);
		__atomic_add_fetch(&t->shm->seq[dir], 1, __ATOMIC_SEQ_CST);
		t->shm->cfg[dir] = *rc;
		__atomic_add_fetch(&t->shm->seq[dir], 1, __ATOMIC_SEQ_CST);
	}
	g = xwf_global_get(t);
	g.relay_on[dir] = rc != NULL;
	xwf_global_put(t, &g);
}

static inline struct xwf_relay_stats xwf_relay_stats(struct xwf_topo *t, int dir)
{
	struct xwf_relay_stats s;
	__u64 *dst = (__u64 *)&s, *src = (__u64 *)&t->shm->stats[dir];

	for (size_t i = 0; i < sizeof(s) / 8; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	return s;
}

struct xwf_rq_frame {
	__u32 len;
	__u64 arrival, release;
	__u8 *buf;
};

struct xwf_rq {
	struct xwf_relay_cfg cfg;
	__u32 seq_seen;
	__u64 index;	  /* frames since the config          */
	__u64 rng;
	__u32 head, count, qmax;
	__u64 last_release;
	struct xwf_rq_frame q[XWF_RELAY_QMAX];
	struct xwf_rq_frame held;
	int held_valid;
	__u32 held_left;
	__u64 held_deadline;
	__u8 *store;	  /* XWF_RELAY_QMAX + 1 slots */
	__u32 slot;
	int out_ifindex;
};

static inline void xwf_rstat(struct xwf_topo *t, int dir, size_t field_off)
{
	__u64 *p = (__u64 *)((char *)&t->shm->stats[dir] + field_off);

	__atomic_add_fetch(p, 1, __ATOMIC_RELAXED);
}

#define XWF_RSTAT(t, dir, f) xwf_rstat(t, dir, offsetof(struct xwf_relay_stats, f))

static inline void xwf_rq_push(struct xwf_topo *t, int dir, struct xwf_rq *q, const __u8 *buf,
			       __u32 len, __u64 arrival)
{
	struct xwf_rq_frame *f;
	__u64 rel = arrival + q->cfg.delay_us * 1000ULL;
	__u32 tail;

	if (q->count >= q->qmax) {
		XWF_RSTAT(t, dir, overflow);
		return;
	}
	if (q->cfg.jitter_us) {
		q->rng ^= q->rng << 13;
		q->rng ^= q->rng >> 7;
		q->rng ^= q->rng << 17;
		rel += (q->rng % (q->cfg.jitter_us + 1ULL)) * 1000ULL;
	}
	if (rel < q->last_release)
		rel = q->last_release;
	q->last_release = rel;
	tail = (q->head + q->count) % XWF_RELAY_QMAX;
	f = &q->q[tail];
	memcpy(f->buf, buf, len);
	f->len = len;
	f->arrival = arrival;
	f->release = rel;
	q->count++;
}

static inline void xwf_rq_release_held(struct xwf_topo *t, int dir, struct xwf_rq *q)
{
	if (!q->held_valid)
		return;
	q->held_valid = 0;
	xwf_rq_push(t, dir, q, q->held.buf, q->held.len, q->held.arrival);
}

static inline void xwf_rq_frame_in(struct xwf_topo *t, int dir, struct xwf_rq *q,
				   const __u8 *buf, __u32 len, __u64 now)
{
	__u64 i = q->index++;

	if (q->cfg.reorder_every && q->cfg.reorder_by && i % q->cfg.reorder_every == 0 &&
	    !q->held_valid) {
		memcpy(q->held.buf, buf, len);
		q->held.len = len;
		q->held.arrival = now;
		q->held_valid = 1;
		q->held_left = q->cfg.reorder_by;
		q->held_deadline = now + (q->cfg.hold_max_us ? q->cfg.hold_max_us
							     : XWF_RELAY_HOLD_DEF) * 1000ULL;
		XWF_RSTAT(t, dir, held);
		return;
	}
	xwf_rq_push(t, dir, q, buf, len, now);
	if (q->held_valid && --q->held_left == 0)
		xwf_rq_release_held(t, dir, q);
}

/* A new config from xwf_relay() (seqlock): frame numbers restart. */
static inline void xwf_rq_refresh(struct xwf_topo *t, int dir, struct xwf_rq *q)
{
	__u32 s1 = __atomic_load_n(&t->shm->seq[dir], __ATOMIC_ACQUIRE), s2;
	struct xwf_relay_cfg c;

	if (s1 == q->seq_seen || (s1 & 1))
		return;
	c = t->shm->cfg[dir];
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	s2 = __atomic_load_n(&t->shm->seq[dir], __ATOMIC_ACQUIRE);
	if (s1 != s2)
		return;
	xwf_rq_release_held(t, dir, q);
	q->cfg = c;
	q->seq_seen = s1;
	q->index = 0;
	q->qmax = c.queue_max && c.queue_max < XWF_RELAY_QMAX ? c.queue_max : XWF_RELAY_QMAX;
}

/* The relay process: forked by xwf_setup() in M; never returns. */
__attribute__((noreturn)) static inline void xwf_relay_main(struct xwf_topo *t)
{
	static struct xwf_rq rq[2];
	struct pollfd pfd[2];
	struct sockaddr_ll sll;
	__u32 slot = t->mtu + 64;
	static __u8 rbuf[65536];
	int txfd, big = 8 << 20, one = 1;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != t->owner)
		_exit(0);
	prctl(PR_SET_TIMERSLACK, 1UL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	txfd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (txfd < 0)
		_exit(2);
	for (int dir = 0; dir < 2; dir++) {
		struct xwf_rq *q = &rq[dir];
		int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));

		if (fd < 0)
			_exit(2);
		setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
		setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
		memset(&sll, 0, sizeof(sll));
		sll.sll_family = AF_PACKET;
		sll.sll_protocol = htons(ETH_P_ALL);
		sll.sll_ifindex = t->m_ifindex[2 + dir];
		if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
			_exit(2);
		pfd[dir].fd = fd;
		pfd[dir].events = POLLIN;
		q->store = calloc(XWF_RELAY_QMAX + 1, slot);
		if (!q->store)
			_exit(2);
		for (int i = 0; i < XWF_RELAY_QMAX; i++)
			q->q[i].buf = q->store + (size_t)i * slot;
		q->held.buf = q->store + (size_t)XWF_RELAY_QMAX * slot;
		q->slot = slot;
		q->qmax = XWF_RELAY_QMAX;
		q->rng = (t->seed ^ (0x9E3779B97F4A7C15ULL * (dir + 1))) | 1;
		q->out_ifindex = t->m_ifindex[dir ^ 1];
		q->seq_seen = ~0u;
	}
	for (;;) {
		__u64 now = xwf_mono_ns(), next = now + 20000000ULL;
		struct timespec ts;

		if (getppid() != t->owner)
			_exit(0);
		for (int dir = 0; dir < 2; dir++) {
			struct xwf_rq *q = &rq[dir];

			xwf_rq_refresh(t, dir, q);
			if (q->held_valid && now >= q->held_deadline) {
				XWF_RSTAT(t, dir, held_late);
				xwf_rq_release_held(t, dir, q);
			}
			while (q->count && q->q[q->head].release <= now) {
				struct xwf_rq_frame *f = &q->q[q->head];

				memset(&sll, 0, sizeof(sll));
				sll.sll_family = AF_PACKET;
				sll.sll_ifindex = q->out_ifindex;
				sll.sll_halen = 6;
				memcpy(sll.sll_addr, f->buf, 6);
				if (sendto(txfd, f->buf, f->len, 0, (struct sockaddr *)&sll,
					   sizeof(sll)) == (ssize_t)f->len)
					XWF_RSTAT(t, dir, sent);
				else
					XWF_RSTAT(t, dir, errors);
				q->head = (q->head + 1) % XWF_RELAY_QMAX;
				q->count--;
			}
			if (q->count && q->q[q->head].release < next)
				next = q->q[q->head].release;
			if (q->held_valid && q->held_deadline < next)
				next = q->held_deadline;
		}
		now = xwf_mono_ns();
		if (next < now)
			next = now;
		ts.tv_sec = (time_t)((next - now) / 1000000000ULL);
		ts.tv_nsec = (long)((next - now) % 1000000000ULL);
		if (ppoll(pfd, 2, &ts, NULL) <= 0)
			continue;
		now = xwf_mono_ns();
		for (int dir = 0; dir < 2; dir++) {
			if (!(pfd[dir].revents & POLLIN))
				continue;
			for (int k = 0; k < 256; k++) {
				struct sockaddr_ll from;
				socklen_t fl = sizeof(from);
				ssize_t n = recvfrom(pfd[dir].fd, rbuf, sizeof(rbuf), MSG_TRUNC,
						     (struct sockaddr *)&from, &fl);

				if (n < 0)
					break;
				if (from.sll_pkttype == PACKET_OUTGOING)
					continue;
				XWF_RSTAT(t, dir, received);
				if ((size_t)n > slot || (size_t)n > sizeof(rbuf)) {
					XWF_RSTAT(t, dir, oversize);
					continue;
				}
				xwf_rq_refresh(t, dir, &rq[dir]);
				xwf_rq_frame_in(t, dir, &rq[dir], rbuf, (__u32)n, now);
			}
		}
	}
}

/* ------------------------------------------------------------------ */
/* Set-up and teardown                                                */
/* ------------------------------------------------------------------ */

static inline int xwf_tc_attach(int ifindex, int prog_fd)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = prog_fd);
	int err = bpf_tc_hook_create(&hook);

	if (err && err != -EEXIST)
		return err;
	return bpf_tc_attach(&hook, &opts);
}

static inline void xwf_setup(struct xwf_topo *t, const struct xwf_opts *o)
{
	static const __u8 macs[4][6] = { { 0x02, 0x78, 0, 0, 0, 0x0a }, { 0x02, 0x78, 0, 0, 0, 0x0b },
					 { 0x02, 0x78, 0, 0, 1, 0x0a }, { 0x02, 0x78, 0, 0, 1, 0x0b } };
	const char *mif[4] = { "xwfma", "xwfmb", "xwfpa1", "xwfpb1" };
	struct xwf_global g;
	const char *env;
	char nsp[2][64];
	int err, prog_fd;

	xwt_require_root();
	memset(t, 0, sizeof(*t));
	t->self = -1;
	t->chan = -1;
	t->owner = getpid();
	t->mtu = o && o->mtu ? o->mtu : 1500;
	t->seed = o ? o->seed : 0;
	env = getenv("XWF_SEED");
	if (env && *env)
		t->seed = strtoull(env, NULL, 0);
	if (!t->seed) {
		if (getrandom(&t->seed, sizeof(t->seed), 0) != sizeof(t->seed))
			t->seed = xwf_mono_ns() ^ ((__u64)getpid() << 32);
		t->seed |= 1;
	}
	xwf_exit_seed = t->seed;
	xwf_exit_owner = getpid();
	atexit(xwf_atexit);
	if (!(o && o->quiet))
		printf("fault-injection seed 0x%llx (XWF_SEED=0x%llx repeats it)\n",
		       (unsigned long long)t->seed, (unsigned long long)t->seed);
	snprintf(t->ifname[0], IF_NAMESIZE, "xwfa");
	snprintf(t->ifname[1], IF_NAMESIZE, "xwfb");
	memcpy(t->mac[0], macs[0], 6);
	memcpy(t->mac[1], macs[1], 6);
	snprintf(t->ip[0], sizeof(t->ip[0]), XWF_IP_A);
	snprintf(t->ip[1], sizeof(t->ip[1]), XWF_IP_B);

	/* Three anonymous namespaces, each held by an fd: A, B, then M. */
	for (int h = 0; h < 3; h++) {
		if (unshare(CLONE_NEWNET))
			xwt_skip("unshare(CLONE_NEWNET): %s", strerror(errno));
		t->ns[h] = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		REQUIRE(t->ns[h] >= 0, "open netns: %s", strerror(errno));
		xwf_ns_basics();
	}
	t->host = XWF_HOST_M;
	for (int h = 0; h < 2; h++)
		snprintf(nsp[h], sizeof(nsp[h]), "/proc/%d/fd/%d", (int)getpid(), t->ns[h]);
#define XWF_MAC(m) m[0], m[1], m[2], m[3], m[4], m[5]
#define XWF_MACF "%02x:%02x:%02x:%02x:%02x:%02x"
	if (xwt_sh("ip link add xwfma address " XWF_MACF " mtu %u type veth peer name xwfa address "
		   XWF_MACF " mtu %u",
		   XWF_MAC(macs[2]), t->mtu, XWF_MAC(macs[0]), t->mtu))
		xwt_skip("cannot create a veth pair");
	REQUIRE(xwt_sh("ip link add xwfmb address " XWF_MACF " mtu %u type veth peer name xwfb "
		       "address " XWF_MACF " mtu %u",
		       XWF_MAC(macs[3]), t->mtu, XWF_MAC(macs[1]), t->mtu) == 0,
		"veth B");
	REQUIRE(xwt_sh("ip link add xwfpa0 mtu %u type veth peer name xwfpa1 mtu %u && "
		       "ip link add xwfpb0 mtu %u type veth peer name xwfpb1 mtu %u",
		       t->mtu, t->mtu, t->mtu, t->mtu) == 0,
		"relay pipes");
	REQUIRE(xwt_sh("ip link set xwfa netns %s && ip link set xwfb netns %s", nsp[0], nsp[1]) == 0,
		"move the host ends");
	REQUIRE(xwt_sh("for i in xwfma xwfmb xwfpa0 xwfpa1 xwfpb0 xwfpb1; do "
		       "ip link set $i up || exit 1; done") == 0,
		"M links up");
	for (int i = 0; i < 4; i++) {
		t->m_ifindex[i] = (int)if_nametoindex(mif[i]);
		REQUIRE(t->m_ifindex[i] > 0, "%s: no ifindex", mif[i]);
	}
	for (int h = 0; h < 2; h++) {
		xwf_enter(t, h);
		REQUIRE(xwt_sh("ip addr add %s/24 dev %s && ip link set %s up", t->ip[h],
			       t->ifname[h], t->ifname[h]) == 0,
			"%s up", t->ifname[h]);
	}
	xwf_enter(t, XWF_HOST_M);

	/* The impairment program on M's two ingresses. */
	libbpf_set_print(xwf_libbpf_silent);
	t->skel = impair_bpf__open_and_load();
	if (!t->skel)
		xwt_skip("cannot load tests/bpf/impair.bpf.c: %s", strerror(errno));
	REQUIRE(bpf_map__value_size(t->skel->maps.xwf_dirs) == sizeof(struct xwf_dir) &&
			bpf_map__value_size(t->skel->maps.xwf_counters) ==
				sizeof(struct xwf_counters) &&
			bpf_map__value_size(t->skel->maps.xwf_global) == sizeof(struct xwf_global),
		"impair.bpf.o is older than tests/fault_maps.h: rebuild it");
	t->dirs_fd = bpf_map__fd(t->skel->maps.xwf_dirs);
	t->counters_fd = bpf_map__fd(t->skel->maps.xwf_counters);
	t->global_fd = bpf_map__fd(t->skel->maps.xwf_global);
	memset(&g, 0, sizeof(g));
	g.seed = t->seed;
	g.ifindex[0] = (__u32)t->m_ifindex[0];
	g.ifindex[1] = (__u32)t->m_ifindex[1];
	g.pipe[0] = if_nametoindex("xwfpa0");
	g.pipe[1] = if_nametoindex("xwfpb0");
	g.ethertype = XW_DEFAULT_ETHERTYPE;
	g.udp_port = XW_DEFAULT_UDP_PORT;
	xwf_global_put(t, &g);
	prog_fd = bpf_program__fd(t->skel->progs.xwf_impair);
	for (int i = 0; i < 2; i++) {
		err = xwf_tc_attach(t->m_ifindex[i], prog_fd);
		if (err)
			xwt_skip("tc clsact ingress on %s: %s", mif[i], strerror(-err));
	}

	/* The relay. */
	t->shm = mmap(NULL, sizeof(*t->shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	REQUIRE(t->shm != MAP_FAILED, "mmap: %s", strerror(errno));
	memset(t->shm, 0, sizeof(*t->shm));
	fflush(NULL);
	t->relay_pid = fork();
	REQUIRE(t->relay_pid >= 0, "fork: %s", strerror(errno));
	if (t->relay_pid == 0)
		xwf_relay_main(t);

	/* Carrier on both host ends. */
	for (int h = 0; h < 2; h++) {
		int up = 0;

		xwf_enter(t, h);
		for (int i = 0; i < 200 && !(up = xwf_running(t->ifname[h])); i++)
			usleep(10000);
		REQUIRE(up, "%s: no carrier after 2 s", t->ifname[h]);
	}
	xwf_enter(t, XWF_HOST_M);
}

static inline void xwf_clear(struct xwf_topo *t)
{
	for (int d = 0; d < 2; d++) {
		xwf_set(t, d, NULL);
		xwf_relay(t, d, NULL);
	}
}

static inline void xwf_teardown(struct xwf_topo *t)
{
	if (getpid() != t->owner)
		return;
	if (t->relay_pid > 0) {
		kill(t->relay_pid, SIGKILL);
		waitpid(t->relay_pid, NULL, 0);
		t->relay_pid = 0;
	}
	if (t->skel) {
		impair_bpf__destroy(t->skel);
		t->skel = NULL;
	}
	if (t->shm && t->shm != MAP_FAILED)
		munmap(t->shm, sizeof(*t->shm));
	t->shm = NULL;
	for (int h = 0; h < 3; h++)
		if (t->ns[h] > 0)
			close(t->ns[h]);
	memset(t->ns, 0, sizeof(t->ns));
}

/* ------------------------------------------------------------------ */
/* Host processes                                                     */
/* ------------------------------------------------------------------ */

/* fn(t, arg) in a child in @host's namespace; its return value (or 1 when
 * a CHECK failed) is the exit code.  Map fds and the relay's shared memory
 * are inherited, so the child can use xwf_set() & co. */
static inline pid_t xwf_spawn(struct xwf_topo *t, int host, xwf_fn fn, void *arg)
{
	pid_t parent = getpid(), pid;

	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	xwt_pin_dir[0] = 0; /* own bpffs pins (xwt_pin_root()) */
	xwt_failures = 0;   /* the child's own verdict, not the parent's */
	xwf_enter(t, host);
	{
		int rc = fn(t, arg);

		exit(rc ? rc : xwt_failures ? 1 : 0);
	}
}

/* Waits for a child of xwf_spawn(); kills it after timeout_ms.  Returns
 * its exit code, 128 + signal, or -1 on timeout. */
static inline int xwf_join(struct xwf_topo *t, pid_t pid, int timeout_ms)
{
	__u64 end = xwf_mono_ns() + (__u64)timeout_ms * 1000000ULL;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (r < 0)
			return -1;
		if (xwf_mono_ns() > end) {
			fprintf(stderr, "fault harness: child %d still running after %d ms: killed\n",
				(int)pid, timeout_ms);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(2000);
	}
}

static inline void xwf_bar(struct xwf_topo *t, const char *what)
{
	char c = 'x', r;

	REQUIRE(write(t->chan, &c, 1) == 1, "barrier %s: write", what);
	REQUIRE(read(t->chan, &r, 1) == 1, "barrier %s: the other host is gone", what);
}

/*
 * Wait until the other host has written to the channel, calling
 * @idle(@arg) about every millisecond meanwhile: a host with an open
 * endpoint must keep it progressing while it waits (the library works
 * inside its calls only: acks, retransmissions and timers of its
 * connections would stall, and its peer with them).  At most 300 s.
 */
static inline void xwf_chan_wait(struct xwf_topo *t, const char *what, void (*idle)(void *),
				 void *arg)
{
	__u64 end = 0;

	for (;;) {
		struct pollfd pfd = { .fd = t->chan, .events = POLLIN };
		struct timespec ts;
		__u64 now;
		int n = poll(&pfd, 1, 1);

		REQUIRE(n >= 0 || errno == EINTR, "%s: poll: %s", what, strerror(errno));
		if (n > 0)
			return;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
		if (!end)
			end = now + 300000;
		REQUIRE(now < end, "%s: the other host did not come in 300 s", what);
		if (idle)
			idle(arg);
	}
}

/* A barrier that keeps an endpoint progressing (see xwf_chan_wait). */
static inline void xwf_bar_idle(struct xwf_topo *t, const char *what, void (*idle)(void *),
				void *arg)
{
	char c = 'x', r;

	REQUIRE(write(t->chan, &c, 1) == 1, "barrier %s: write", what);
	xwf_chan_wait(t, what, idle, arg);
	REQUIRE(read(t->chan, &r, 1) == 1, "barrier %s: the other host is gone", what);
}

/* xwf_xchg() that keeps an endpoint progressing (see xwf_chan_wait). */
static inline void xwf_xchg_idle(struct xwf_topo *t, const void *mine, void *theirs, size_t len,
				 void (*idle)(void *), void *arg)
{
	REQUIRE(write(t->chan, mine, len) == (ssize_t)len, "xchg: write");
	xwf_chan_wait(t, "xchg", idle, arg);
	REQUIRE(read(t->chan, theirs, len) == (ssize_t)len, "xchg: the other host is gone");
}

static inline void xwf_xchg(struct xwf_topo *t, const void *mine, void *theirs, size_t len)
{
	REQUIRE(write(t->chan, mine, len) == (ssize_t)len, "xchg: write");
	REQUIRE(read(t->chan, theirs, len) == (ssize_t)len, "xchg: the other host is gone");
}

struct xwf_run_arg {
	xwf_fn fn;
	void *arg;
	int self, chan, other;
};

static inline int xwf_run_child(struct xwf_topo *t, void *p)
{
	struct xwf_run_arg *ra = p;

	close(ra->other);
	t->self = ra->self;
	t->chan = ra->chan;
	return ra->fn(t, ra->arg);
}

/* fn_a in A and fn_b in B, as two children joined by t->chan; returns 0
 * when both exit 0 (the seed is printed otherwise). */
static inline int xwf_run(struct xwf_topo *t, xwf_fn fn_a, xwf_fn fn_b, void *arg,
			  int timeout_ms)
{
	struct xwf_run_arg ra[2];
	pid_t pid[2];
	int sv[2], rc[2];

	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0, "socketpair");
	for (int h = 0; h < 2; h++) {
		ra[h].fn = h ? fn_b : fn_a;
		ra[h].arg = arg;
		ra[h].self = h;
		ra[h].chan = sv[h];
		ra[h].other = sv[h ^ 1];
		pid[h] = xwf_spawn(t, h, xwf_run_child, &ra[h]);
	}
	close(sv[0]);
	close(sv[1]);
	{
		__u64 end = xwf_mono_ns() + (__u64)timeout_ms * 1000000ULL;

		for (int h = 0; h < 2; h++) {
			__u64 now = xwf_mono_ns();

			rc[h] = xwf_join(t, pid[h], now < end ? (int)((end - now) / 1000000ULL) : 0);
		}
	}
	if (rc[0] || rc[1]) {
		fprintf(stderr, "fault harness: host A exit %d, host B exit %d\n", rc[0], rc[1]);
		xwf_print_seed(t);
		/* A host that died left its XDP program attached (its pins
		 * went with its pin directory): the next run starts clean. */
		for (int h = 0; h < 2; h++)
			xwf_sh(t, h, "ip link set dev %s xdp off 2>/dev/null", t->ifname[h]);
		return 1;
	}
	return 0;
}

#endif
