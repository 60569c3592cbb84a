/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Helpers for tests that run the real compiled XDP program with
 * BPF_PROG_TEST_RUN: load the skeleton (no attach), give it a real AF_XDP
 * socket on a veth in the test's private namespace so redirects succeed,
 * build frames, read counters and wake records.
 */
#ifndef XWT_XDP_H
#define XWT_XDP_H

#include <arpa/inet.h>
#include <endian.h>
#include <net/if.h>
#include <sys/mman.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <linux/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "harness.h"
#include "xdpwake.h"
#include "xdpwake.skel.h"
#include "internal.h"

#define XWT_IF_A "xwta"
#define XWT_IF_B "xwtb"
#define XWT_MAX_FRAME 10240 /* jumbo frames: multi-buffer in BPF_PROG_TEST_RUN */
/* A bound on waiting for something the program will do (a timer expiry):
 * it only turns a hang into a failure, it is not a latency claim. */
#define XWT_HANG_MS 10000

struct xwt_xdp {
	struct xw_xdp_bpf *skel;
	int prog_fd;
	int ifindex;
	void *umem_area;
	struct xsk_umem *umem;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx;
	int ring_fd[XW_MAX_ENDPOINTS];
	int wd_ring_fd[XW_MAX_ENDPOINTS];
	struct ring_buffer *rb;
	/* records read by xwt_drain() */
	struct xw_wake_rec recs[256];
	int nrecs;
};

int xwt_silent(enum libbpf_print_level l, const char *f, va_list ap);
int xwt_knob_fd(struct xwt_xdp *x, const char *name);
void xwt_set_knob(struct xwt_xdp *x, const char *name, __u32 ep, __u32 v);
/* Write every knob's default into the knob maps of @obj (the program's
 * object), as the library does on attach; 0 or -errno. */
int xwt_write_defaults(struct bpf_object *obj);
/* The same on x's program (a failure stops the test). */
void xwt_defaults(struct xwt_xdp *x);
void xwt_set_endpoint(struct xwt_xdp *x, __u32 ep, __u32 flags, __u32 queue);
/* Mark UDP queue @q in use (@pid, 0: not in use) as the library's port
 * does when it binds the queue (proto.h, "Per-queue UDP ports"). */
void xwt_set_queue(struct xwt_xdp *x, __u32 q, __u32 pid);
void xwt_set_shared(struct xwt_xdp *x, __u32 ep, const struct xw_shared *s);
struct xw_shared xwt_get_shared(struct xwt_xdp *x, __u32 ep);
/* Overwrite the wake state (an update also cancels the entry's timer). */
void xwt_set_wake_state(struct xwt_xdp *x, __u32 ep, const struct xw_wake_state *w);
struct xw_wake_state xwt_get_wake_state(struct xwt_xdp *x, __u32 ep);
struct xw_wd_state xwt_get_wd_state(struct xwt_xdp *x, __u32 ep);
/*
 * Fix the program's "now" at @ns (0: the monotonic clock again).  A row that
 * states "the last frame came 1 us ago" runs the program with the clock
 * fixed, so the decision does not depend on how fast the test runs.  Timers
 * still expire in real time: release the clock before waiting for one.
 */
void xwt_set_clock(struct xwt_xdp *x, __u64 ns);

/* Give endpoint @ep a wake ring and a watchdog ring, read through x->rb. */
void xwt_add_rings(struct xwt_xdp *x, __u32 ep);
/* Read whatever records are there now (no waiting). */
int xwt_drain(struct xwt_xdp *x);
/* Wait up to @timeout_ms for at least one record. */
int xwt_wait_rec(struct xwt_xdp *x, int timeout_ms);
/*
 * Load the program and give endpoint 0..n_xsk-1... only endpoint @ep an
 * AF_XDP socket bound to XWT_IF_A queue 0 (copy mode).  Moves the process
 * into a private network namespace.
 */
void xwt_setup(struct xwt_xdp *x, __u32 ep);
void xwt_teardown(struct xwt_xdp *x);
/* Add the per-CPU counters of stats entry @key (the map at @stats_fd) to
 * *@sum; 0 or -errno. */
int xwt_read_stats(int stats_fd, __u32 key, struct xw_stats *sum);
/* Sum the per-CPU counters of every stats entry. */
struct xw_stats xwt_stats(struct xwt_xdp *x);

/* ---- frames ---------------------------------------------------------- */

#define XWT_ENC_ETH 1
#define XWT_ENC_UDP 2

struct xwt_frame {
	int encap;	  /* XWT_ENC_ETH (default) or XWT_ENC_UDP          */
	int vlans;	  /* 0..3 VLAN tags                                */
	__u16 ethertype;  /* 0: XW_DEFAULT_ETHERTYPE                       */
	__u16 udp_port;	  /* 0: XW_DEFAULT_UDP_PORT                        */
	int ip_opt_words; /* IPv4 options, 32-bit words                    */
	__u16 ip_frag;	  /* IPv4 frag_off field (host order)              */
	int udp_len_delta;/* added to the correct UDP length               */
	int ip_len_delta; /* added to the correct IPv4 total length        */
	__u8 version;	  /* 0: XW_VERSION                                 */
	__u8 type, flags;
	__u16 dst_ep, src_ep;
	__u32 session;
	__u32 msg_len, frag_off, frag_idx, frag_count;
	int msg_len_set;  /* use msg_len as given (else = payload for SMALL) */
	__u16 payload_len;/* declared */
	int present;	  /* payload bytes actually present (-1: declared)  */
	int pad;	  /* trailing bytes after everything               */
	int truncate;	  /* >0: cut the frame to this many bytes           */
};

/* Build @f into @buf; returns the frame length.  Headers are assembled in
 * aligned locals and copied in (IP sits at offset 14: not 4-aligned). */
int xwt_build(const struct xwt_frame *f, __u8 *buf);
/* One BPF_PROG_TEST_RUN of an XDP program (the tests' and bench/xdp_cost's):
 * @len bytes of @buf as received on @ifindex queue @queue, @repeat times
 * (the kernel's loop); the frame as the program left it into @out
 * (XWT_MAX_FRAME bytes; NULL: not wanted). */
struct xwt_run_args {
	int prog_fd, ifindex;
	__u32 queue;
	const void *buf;
	__u32 len;
	int repeat;
	void *out;
};

struct xwt_run_res {
	__u32 retval;	/* the verdict (of the last iteration) */
	__u32 duration;	/* ns per iteration, measured by the kernel */
	__u32 out_len;
};

/* 0 or -errno. */
int xwt_test_run(const struct xwt_run_args *a, struct xwt_run_res *r);
/* Run x's program once on @len bytes of @buf; returns the XDP verdict (a
 * failure stops the test). */
int xwt_run(struct xwt_xdp *x, const void *buf, int len, __u32 queue,
	    int *out_len, void *out);
const char *xwt_verdict(int v);

#endif
