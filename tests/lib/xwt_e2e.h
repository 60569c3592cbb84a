/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * End-to-end harness: real XDP, real AF_XDP, real traffic.
 *
 * Two hosts in two anonymous network namespaces joined by a veth pair:
 *
 *   receiver (this process)                     sender (forked child)
 *   private netns, veth end rx_if  <--------->  its own netns, veth end tx_if
 *   xdpwake attached (native), endpoint EP:     AF_PACKET SOCK_RAW socket,
 *   AF_XDP socket (copy mode, queue 0),         runs commands read from a pipe
 *   wake ring buffer, mmapped `shared` entry    ("send N frames like this"),
 *                                               answers with the send times
 *
 * Anonymous namespaces vanish with their processes, so nothing leaks even
 * on a crash; the child also dies with the parent (PR_SET_PDEATHSIG) and is
 * killed and reaped at exit.  With xwe_opts.iface set, the receiver attaches
 * to that (real) interface instead and no sender is started.
 *
 * Receiver side, as the library will do it (DESIGN.md, "The wake
 * hand-over"): xwe_arm() stores armed = 1, issues a full barrier and
 * rechecks `produced` against what was consumed; xwe_wait() sleeps on the
 * ring buffer's epoll fd until a wake record or a deadline; xwe_drain*()
 * takes frames from the RX ring (bounded spin until the frames a record
 * counts are visible), verifies each byte for byte, recycles them to the
 * fill ring and publishes `consumed`.  Every loop is bounded in count and
 * time.
 *
 * The functions are in xwt_e2e.c (libxwt.a), linked into
 * tests/test_e2e_xdp.c and bench/policy_demo.c; the arm/recheck steps stay
 * inline here (they are on the measured path).
 */
#ifndef XWT_E2E_H
#define XWT_E2E_H

#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <linux/if_packet.h>

#include "xwt_xdp.h"  /* harness.h, xdpwake.h, libbpf, libxdp's xsk.h, xwt_build() */
#include "internal.h" /* xwi_iface_shared() */

#define XWE_FRAME_SIZE 2048u
#define XWE_NUM_FRAMES 8192u /* twice the fill ring: see xwe_refill() */
#define XWE_RING_DESCS 4096u
#define XWE_MAX_RECS 8192
#define XWE_MAX_SEND 65536u

/* xwe_setup() results besides 0. */
#define XWE_SKIP 1 /* a kernel feature or privilege is missing */
#define XWE_FAIL 2 /* anything else                             */

/* ------------------------------------------------------------------ */
/* Sender commands                                                    */

/* ------------------------------------------------------------------ */

enum { XWE_OP_START = 1, XWE_OP_SEND = 2, XWE_OP_FOREIGN = 3, XWE_OP_QUIT = 4 };

/* LAT rule per frame */
enum { XWE_LAT_NONE, XWE_LAT_ALL, XWE_LAT_LAST /* last of each group */, XWE_LAT_RAND };
/* MORE rule per frame */
enum {
	XWE_MORE_NONE,
	XWE_MORE_ALL,
	XWE_MORE_GROUP,	   /* all but the last frame of each group  */
	XWE_MORE_BUT_LAST, /* all but the last frame of the command */
	XWE_MORE_RAND,	   /* one frame in four                     */
};

struct xwe_cmd {
	__u32 op;
	__u32 n;	    /* frames                                            */
	__u32 group;	    /* frames per MEDIUM message / per batch (LAT, MORE)  */
	__u32 gap_us;	    /* before each frame inside a group                  */
	__u32 group_gap_us; /* before the first frame of each later group (0: gap_us) */
	__u32 rand_gap_us;  /* plus 0..rand_gap_us before every frame            */
	__u32 seq0;	    /* xw_hdr.seq of the first frame (payload pattern)    */
	__u32 msg_id0;	    /* xw_hdr.msg_id of the first message                */
	__u32 seed;	    /* random gaps and flags                             */
	__u16 payload_len;
	__u16 udp_port;	    /* UDP: destination port (0: XW_DEFAULT_UDP_PORT)     */
	__u16 dst_ep;
	__u16 ethertype;    /* 0: XW_DEFAULT_ETHERTYPE                            */
	__u8 type;	    /* enum xw_pkt_type                                  */
	__u8 lat, more;	    /* XWE_LAT_*, XWE_MORE_*                              */
	__u8 encap;	    /* XWT_ENC_ETH (or 0) / XWT_ENC_UDP                   */
	__u8 dst_mac[6];
	char ifname[IF_NAMESIZE];
};

struct xwe_reply {
	__s32 status;	/* 0 or -errno                               */
	__u32 n;	/* send timestamps following (u64 each)       */
	__s32 pid;	/* hello: the child's pid                     */
	__u8 mac[6];	/* start: the sender interface's MAC          */
	__u16 pad;
};

/* ------------------------------------------------------------------ */
/* State                                                              */

/* ------------------------------------------------------------------ */

struct xwe_opts {
	__u32 ep;
	const char *iface;	/* NULL: veth pair between two namespaces     */
	int mode;		/* enum xw_xdp_mode; 0: native for veth, auto */
	const char *pin_root;	/* NULL: xwt_pin_root() (veth) / default      */
	bool graceful_signals;	/* SIGINT/TERM set xwe_stop instead of dying  */
};

/* The xdpwake header where it lies in a received frame (offset 14 or 42 of
 * a UMEM chunk): accessed as possibly unaligned. */
typedef struct xw_hdr xwe_hdr_u __attribute__((aligned(1)));

struct xwe;
typedef void (*xwe_frame_fn)(struct xwe *e, const xwe_hdr_u *h, __u32 len, void *ctx);

struct xwe {
	__u32 ep;
	bool veth;
	char rx_if[IF_NAMESIZE], tx_if[IF_NAMESIZE];
	__u8 rx_mac[6], tx_mac[6];
	char err[512];

	/* sender child */
	pid_t child;
	int cmd_fd, rep_fd;
	int send_pending;
	__u32 tx_seq;	   /* next xw_hdr.seq handed to the sender */

	/* receiver */
	struct xw_iface *iface;
	bool attached;	   /* this process attached the program */
	char pin_dir[PATH_MAX];
	struct xw_shared *sh;
	void *umem_area;
	size_t umem_len;
	struct xsk_umem *umem;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx;
	__u64 free_addrs[XWE_NUM_FRAMES]; /* UMEM frames owned by us, not in a ring */
	__u32 nfree;
	int ring_fd;
	struct ring_buffer *rb;

	/* wake records read so far (xwe_wait, xwe_poll_recs); callers reset nrecs */
	struct xw_wake_rec recs[XWE_MAX_RECS];
	int nrecs;
	__u64 recs_dropped;   /* records beyond XWE_MAX_RECS, or malformed */

	__u64 consumed;	      /* frames taken from the RX ring (also in sh->consumed) */
	__u64 stale_arms;     /* recheck found frames but XDP had taken the flag: a
			       * record is on its way that wakes nobody */
	/* frame verification */
	__u32 rx_seq;	      /* next expected xw_hdr.seq */
	bool lenient;	      /* a forward seq jump counts as loss, not as an error */
	__u64 rx_lost;
	__u64 bad_frames;
	char bad_msg[256];
	xwe_frame_fn on_frame;
	void *on_frame_ctx;
};

/* Set by the first SIGINT/SIGTERM in graceful mode (xwe_opts): loops end. */
extern volatile sig_atomic_t xwe_stop;

/* ------------------------------------------------------------------ */
/* Small helpers                                                      */

/* ------------------------------------------------------------------ */

void xwe_sleep_us(unsigned long us);
/* Until CLOCK_MONOTONIC @t: sleep for long waits, spin for short ones. */
void xwe_wait_until(unsigned long long t);
__u32 xwe_rand(__u32 *s);

void xwe_fmt_mac(const __u8 m[6], char out[18]);
int xwe_parse_mac(const char *s, __u8 m[6]);

/* ------------------------------------------------------------------ */
/* Frames (sender side)                                                */

/* ------------------------------------------------------------------ */

/* An AF_PACKET socket sending on @ifname; fills @ifindex and @mac. */
int xwe_tx_open(const char *ifname, int *ifindex, __u8 mac[6]);

/*
 * Send command @c on @fd: frame i's CLOCK_MONOTONIC send time (taken just
 * before sendto; the XDP program runs inside that call on veth) goes to
 * ts[i] when i < max_ts.  Returns frames sent or -errno.
 */
int xwe_tx_run(int fd, int ifindex, const __u8 src_mac[6], const struct xwe_cmd *c,
	       __u64 *ts, __u32 max_ts);

/* ------------------------------------------------------------------ */
/* The sender child                                                    */

/* ------------------------------------------------------------------ */

void xwe_signals(bool graceful);

/* Start command @c in the sender (asynchronously); seq0 and dst fields are
 * filled in here.  @expect: the frames should reach the RX ring (their
 * sequence numbers are the ones the receiver will check). */
int xwe_send(struct xwe *e, struct xwe_cmd *c, bool expect);
/* Wait for the running command: its send times go to @ts (up to @max).
 * Returns the number of frames sent, or -errno. */
int xwe_send_wait(struct xwe *e, __u64 *ts, __u32 max, int timeout_ms);
/* Send and wait: the common case in tests. */
int xwe_send_sync(struct xwe *e, struct xwe_cmd *c, bool expect, __u64 *ts,
		  __u32 max);

/* ------------------------------------------------------------------ */
/* Receiver                                                            */

/* ------------------------------------------------------------------ */

/*
 * Arm: store 1 to armed, full barrier, recheck produced against consumed.
 * Returns 1 when armed with nothing in flight (go to sleep), 0 when frames
 * arrived in between (disarmed again; take them first).
 */
static inline int xwe_arm(struct xwe *e)
{
	__atomic_store_n(&e->sh->armed, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&e->sh->produced, __ATOMIC_RELAXED) == e->consumed)
		return 1;
	if (__atomic_exchange_n(&e->sh->armed, 0, __ATOMIC_SEQ_CST) == 0)
		e->stale_arms++;
	return 0;
}

/* Disarm; returns 1 if XDP had taken the flag already (a record is coming). */
static inline int xwe_disarm(struct xwe *e)
{
	return __atomic_exchange_n(&e->sh->armed, 0, __ATOMIC_SEQ_CST) == 0;
}

static inline __u64 xwe_produced(const struct xwe *e)
{
	return __atomic_load_n(&e->sh->produced, __ATOMIC_ACQUIRE);
}

/* Read records that are there now; returns how many were added. */
int xwe_poll_recs(struct xwe *e);
/*
 * Sleep on the ring buffer until at least one record or @deadline_ns.
 * Returns records added (> 0), 0 at the deadline, or -errno.  A poll that
 * returns without a record is not a timeout: the clock decides.
 */
int xwe_wait(struct xwe *e, unsigned long long deadline_ns);

/* Frames visible in the RX ring now (not taken). */
__u32 xwe_rx_visible(struct xwe *e);

/* Take every frame visible now: verify, recycle, publish consumed. */
int xwe_drain(struct xwe *e);
/*
 * Take frames until @target frames were consumed in total (a wake record's
 * `produced`) or @deadline_ns: a record often arrives before its frame is
 * visible in the RX ring.  Bounded spin, yielding after a while.
 */
int xwe_drain_until(struct xwe *e, __u64 target, unsigned long long deadline_ns);
struct xw_stats xwe_stats(struct xwe *e, int ep);
/* Counter @f of b minus a. */
#define XWE_D(a, b, f) ((long long)((b).f - (a).f))

/* ---- setup / teardown ------------------------------------------------ */

/*
 * Build the two hosts (or, with o->iface, only the receiver on that
 * interface).  Returns 0, XWE_SKIP or XWE_FAIL with e->err set.  On failure
 * the caller exits; atexit kills the sender and the namespaces vanish.
 */
int xwe_setup(struct xwe *e, const struct xwe_opts *o);
/* Unregister the endpoint, close the socket; detach if @detach (returns its
 * result), else only close the interface handle. */
int xwe_teardown(struct xwe *e, bool detach);

#endif
