/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * xdpwake pingpong / stream: what the parts of the measurement share (not
 * installed).  The protocol between client and server is described in
 * perf_proto.c; the parts:
 *
 *   cmd_perf.c     the two commands: their help, checks, and the start
 *   perf_opts.c    the options, parsed into struct perf_opts
 *   perf_proto.c   the control protocol: matches, messages, waits
 *   perf_side.c    one side's set-up: interface, endpoint, buffers, and its
 *                  measurements (snapshots of counters and CPU time, deltas)
 *   perf_server.c  the server: accepts clients, follows their configuration
 *   perf_client.c  the client: drives the test, size by size
 *   perf_report.c  the output: text lines and JSON documents
 */
#ifndef XW_CLI_PERF_H
#define XW_CLI_PERF_H

#include <linux/types.h>
#include <sys/resource.h>

#include "cli.h"
#include "stats.h"

/* ---- protocol (perf_proto.c) -------------------------------------------- */

#define PERF_MAGIC 0x58575046u /* "XWPF" */
#define PERF_VERSION 1u

#define TAG_MAGIC 0x585750ULL /* "XWP", bits 63..40 of every match */
#define MASK_MAGIC (0xFFFFFFULL << 40)
#define MASK_TYPE (0xFFULL << 16)
#define MASK_NOFLAGS (~0xFFFFULL)

enum msg_type {
	T_CONFIG = 1,
	T_READY = 2,
	T_PHASE = 3,
	T_PHASE_OK = 4,
	T_DATA = 5,
	T_ACK = 6,
	T_RESULT = 7,
};

enum msg_flags {
	F_MARK = 1,	 /* the last warm-up message: take the start snapshot after it */
	F_BATCH_END = 2, /* stream: acknowledge the batch */
	F_LAST = 4,	 /* the last measured message */
};

enum perf_mode { MODE_PINGPONG = 1, MODE_STREAM = 2 };

#define POLICY_KEEP 0xFFFFFFFFu /* CONFIG: the client did not ask for a policy */

struct wire_config {
	__be32 magic, version;
	__be64 nonce;
	__be32 mode, policy, wait, spin_us, think_us, timeout_ms, nsizes;
	__be32 pull_spin; /* 0: the library's default; else the pull spin + 1 */
} __attribute__((packed));

struct wire_ready {
	__be32 magic, version;
	__be64 nonce;
	__be32 status, ncpus;
	__be64 block_cost_ns;
	char msg[128];
} __attribute__((packed));

struct wire_phase {
	__be32 magic, idx;
	__be64 size;
	__be32 batch, rsvd;
} __attribute__((packed));

struct wire_phase_ok {
	__be32 magic;
	__be32 status;
} __attribute__((packed));

/* One side's measurements over the measured window (deltas). */
#define SIDE_FIELDS(X)                                                                  \
	X(msgs)		    /* messages received in the window (data, or acks) */       \
	X(elapsed_ns)                                                                   \
	X(wake_every) X(wake_marker) X(wake_stream) X(wake_frames) X(wake_timeout)      \
	X(wake_watchdog)                                                                \
	X(wake_unarmed)	    /* wakes not sent: the receiver was not asleep */           \
	X(frames_redirected) X(lat_frames) X(more_frames) X(deferrals) X(timer_fires)   \
	X(machine_busy_us)  /* /proc/stat busy time of all CPUs */                      \
	X(machine_total_us) /* /proc/stat busy + idle + iowait of all CPUs */           \
	X(proc_user_us) X(proc_sys_us)                                                  \
	X(blocks) X(lib_wakes) X(spurious_wakes) X(spins) X(yields)                    \
	/* a CPU shared with other tasks (xw_wait_stats, issue 27) */                   \
	X(spin_probes) X(shared_spins) X(shared_waits) X(sleep_timeouts) X(late_wakes)  \
	X(pull_spins)       /* spins extended while a message was pulled */            \
	X(sleep_acks)       /* sleeps before which the owed ACKs went at once */       \
	X(block_cost_ns)    /* the endpoint's B at the end (learned, not a delta) */

#define SIDE_FIELD(n) __u64 n;
struct side {
	SIDE_FIELDS(SIDE_FIELD)
};
#undef SIDE_FIELD
#define SIDE_COUNT(n) +1
#define SIDE_NR (0 SIDE_FIELDS(SIDE_COUNT))
_Static_assert(sizeof(struct side) == SIDE_NR * 8, "struct side is packed u64s");

struct wire_result {
	__be32 magic;
	__be32 status;
	__be64 v[SIDE_NR];
} __attribute__((packed));

extern const char *const perf_side_names[SIDE_NR];

/* ---- options (perf_opts.c) ---------------------------------------------- */

enum role { ROLE_NONE, ROLE_SERVER, ROLE_CLIENT };

#define MAX_SIZES 32
#define MAX_MSG_SIZE (256ULL << 20)
#define MAX_BATCH 1024
#define RX_FRAMES_PER_BATCH 1024 /* stream: frames of one batch, half the fill ring */
#define RX_BYTES_PER_BATCH (64ULL << 20)

struct perf_opts {
	enum role role;
	const char *peer, *peer_file, *addr_file;
	__u64 sizes[MAX_SIZES];
	int nsizes;
	unsigned long iters, warmup, batch, spin_us, think_us, timeout_ms, queue, pull_spin;
	double duration, connect_timeout, accept_timeout;
	int wait;
	int ep;
	bool unidir, once;
	/* which options were given (client-only ones are refused on a server) */
	bool sizes_set, iters_set, warmup_set, batch_set, spin_set, think_set, timeout_set,
		wait_set, duration_set, connect_set, accept_set, ep_set, queue_set, pull_spin_set;
};

/* The options of both commands (terminated by an entry with name NULL). */
extern const struct cli_opt perf_cli_opts[];
/* The options as parsed (the parse functions of the table fill it). */
struct perf_opts *perf_opts_get(void);
/* Check the combination for @mode and fill in the client's defaults:
 * 0, or the exit code of the usage error it reported. */
int perf_opts_finish(const struct cli_args *a, enum perf_mode mode);

/* ---- one side (perf_side.c) --------------------------------------------- */

/* The state of one side of a run. */
struct perf {
	enum perf_mode mode;
	const char *ifname;
	struct cli_args *a;
	const struct perf_opts *o;
	struct xw_iface *ifc;	 /* our own handle: keeps the program attached */
	bool attached;		 /* we attached it: detach at the end */
	struct xw_endpoint *ep;
	struct xw_addr me, peer;
	char me_text[XW_ADDR_STRLEN], peer_text[XW_ADDR_STRLEN];
	__u16 sess;		 /* session id of the current client (match bits 39..24) */
	__u32 policy;		 /* POLICY_KEEP or enum xw_policy */
	int wait;		 /* enum xw_wait_strategy */
	unsigned long spin_us, think_us;
	long pull_spin;		 /* xw_endpoint__set_pull_spin (-1: default) */
	int timeout_ms;
	/* Message buffers: a request may still use one after a failure, so
	 * they are freed only once the endpoint is closed (perf_ep_close). */
	void **bufs;
	size_t nbufs, capbufs;
	char err[512];
};

/* Say what failed in @p->err (with @err's text); returns @err, or -EIO. */
__attribute__((format(printf, 3, 4))) int perf_err(struct perf *p, int err, const char *fmt, ...);
void perf_install_signals(void);
void perf_noop_notify(struct xw_endpoint *ep, void *arg);
/* Computation between messages: spin on the clock. */
void perf_think(unsigned long usecs);

int perf_iface_open(struct perf *p);
void perf_iface_close(struct perf *p);
int perf_ep_open(struct perf *p, bool set_policy);
void perf_ep_close(struct perf *p);
/* A message buffer of @len bytes (at least 1), owned by @p until perf_ep_close. */
void *perf_buf_alloc(struct perf *p, __u64 len);
/* Free the buffers (nothing may use them any more). */
void perf_bufs_release(struct perf *p);

/* A snapshot of one side's counters and CPU time. */
struct snap {
	struct xw_stats xs;
	struct xw_wait_stats ws;
	struct rusage ru;
	__u64 busy_us, total_us;
	__u64 t;
};

void perf_snap_take(struct perf *p, struct snap *s);
void perf_side_delta(struct side *d, const struct snap *a, const struct snap *b, __u64 msgs);
/* Wakes the XDP program sent to the endpoint, of every reason. */
__u64 perf_side_wakes(const struct side *s);

/* ---- the control protocol (perf_proto.c) -------------------------------- */

__u64 perf_tag(const struct perf *p, enum msg_type type, unsigned int flags);
int perf_wait_req(struct xw_request *req, struct xw_status *st, int timeout_ms);
int perf_post_send_flags(struct perf *p, const void *buf, size_t len, __u64 match,
			 __u32 flags, struct xw_request **req);
int perf_post_send(struct perf *p, const void *buf, size_t len, __u64 match,
		   struct xw_request **req);
int perf_send_ctl(struct perf *p, const void *buf, size_t len, __u64 match);
int perf_recv_ctl(struct perf *p, void *buf, size_t len, __u64 match, __u64 mask,
		  struct xw_status *st, int timeout_ms);
void perf_result_encode(struct wire_result *w, const struct side *s, int status);
void perf_result_decode(const struct wire_result *w, struct side *s, int *status);

/* ---- server and client (perf_server.c, perf_client.c) ------------------- */

int perf_run_server(struct perf *p);
int perf_run_client(struct perf *p);

/* The client's results of one size. */
struct size_result {
	__u64 size;
	__u64 n;	    /* measured iterations (pingpong) or messages (stream) */
	__u64 msgs;	    /* data messages delivered: 2n (pingpong) or n (stream) */
	unsigned long warmup, batch;
	double elapsed_s;
	struct xwu_summary lat; /* pingpong: half round trip; stream: batch until its ack */
	struct xwu_summary raw; /* pingpong: round trip */
	double msg_rate, mbps, wakes_per_msg, machine_cpu, proc_cpu, srv_proc_cpu;
	struct side cli, srv;
};

/* ---- output (perf_report.c) --------------------------------------------- */

const char *perf_mode_name(int mode);
const char *perf_strategy_text(int s);
/* The endpoint's policy as the program has it. */
const char *perf_policy_text(struct perf *p);
/* "64", "32K", "1M", "2G". */
void perf_print_size(char *buf, size_t len, __u64 v);
/* The server: listening (text or JSON), the start of a session (text),
 * each size (text), the session as one JSON document. */
void perf_report_listening(struct perf *p);
void perf_report_session_start(struct perf *p, __u32 nsizes);
void perf_report_server_size(__u64 size, const struct side *s);
void perf_report_session_json(struct perf *p, int err, const __u64 *sizes,
			      const unsigned long *batches, const struct side *sides, int n);
/* The client: the header and one line per size (text), or the whole run
 * as one JSON document. */
void perf_text_header(struct perf *p, unsigned long spin);
void perf_text_line(struct perf *p, const struct size_result *r);
void perf_report_client_json(struct perf *p, const struct wire_ready *rd, unsigned long spin,
			     const struct size_result *res, int n);

#endif
