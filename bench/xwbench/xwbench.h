/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * xwbench (bench/xwbench/): what the tests and the common part share.
 */
#ifndef XW_BENCH_XWBENCH_H
#define XW_BENCH_XWBENCH_H

#include <stdbool.h>
#include <stdio.h>

#include "xdpwake.h"
#include "json.h"

#define TAG_DATA 1ULL
#define TAG_REPLY 2ULL
#define TAG_BAR 3ULL
#define TAG_HELLO 4ULL
#define TAG_READY 5ULL
#define TAG_ALL (~0ULL)
#define NOTIF_SLOTS 256
#define NOTIF_MAGIC 0x9e3779b97f4a7c15ULL

enum test { T_PP, T_NOTIF, T_IDLE };
enum mode { M_SENDS, M_CHECK, M_WATCHDOG, M_NOTIFY };

extern const char *const mode_names[4];

/* The options (xwbench.c); both sides get the same. */
struct xwb_opts {
	enum test test;
	char role;
	const char *ifname, *addr_file, *peer_file, *peer, *samples;
	int ep, limit, connect_timeout, timeout_ms;
	int policy;	/* -1: leave */
	int wait;
	unsigned int spin_us;
	long iters, warmup;
	unsigned long size, reply;
	bool reply_set, barrier;
	unsigned int x_us, y_us, check_us;
	unsigned int eager_max, btp1, btp2;
	bool eager_f, btp1_f, btp2_f; /* values in frames */
	const char *marks_text;
	unsigned int marks;
	bool marks_set;
	unsigned int mark_shift;
	/* notif */
	long msgs;
	unsigned int gap_us, chunk_min_us, chunk_max_us, watchdog_us, watchdog_rt;
	enum mode mode;
	unsigned long seed;
	/* idle */
	double seconds;
};
extern struct xwb_opts o;

/* The endpoint and what comes with it (common.c). */
extern struct xw_endpoint *ep;
extern struct xw_iface *ifc;
extern struct xw_addr peer;
extern struct xw_check chk;
extern bool chk_on;
extern __u32 frag_payload;
extern volatile __u64 sink;

void __attribute__((format(printf, 1, 2), noreturn)) die(const char *fmt, ...);
/* "key": {n, min, mean, p50, p90, p99, p999, max} (json.h); sorts @v. */
void json_stats(const char *key, double *v, long n);

/* One side's counters (XDP program, library, CPU) at one moment. */
struct snap {
	struct xw_stats xs;
	struct xw_wait_stats ws;
	struct xw_endpoint_stats es;
	__u64 busy_us, proc_us, t;
};

void snap_take(struct snap *s);
/* The counters of one side between two snapshots, as JSON members. */
void json_side(const struct snap *a, const struct snap *b);
/* The configuration as the first JSON members of a result. */
void print_config(void);

/* A size given in frames (N"f") in bytes. */
__u32 frames_to_bytes(unsigned int v, bool frames);
void ep_open(void);
void send_or_die(const void *buf, size_t len, __u64 tag, const char *what);
void recv_or_die(void *buf, size_t len, __u64 tag, struct xw_status *st, const char *what);
/* The rendezvous: role b writes its address and waits for HELLO, role a
 * reads it and says HELLO; READY back. */
void connect_peer(void);
/* Busy computation for @us microseconds, with xw_check() when enabled. */
void compute_us(unsigned int us);

/* The tests (pp.c, notif.c, idle.c). */
int run_pp(void);
void notif_sender(void);
void notif_receiver(void);
void run_idle(void);

#endif
