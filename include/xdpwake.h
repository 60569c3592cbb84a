/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * xdpwake.h - public API of libxdpwake.
 *
 * Conventions (after libbpf): one prefix `xw_`; opaque objects with
 * `xw_object__verb()` methods; options structs whose first member `sz` is
 * set to sizeof(struct) by the caller (use XW_OPTS()), so fields can be
 * added without breaking binaries; every call returns 0 or a positive value
 * on success and a negative errno on failure (see xw_strerror()); nothing is
 * printed unless the application installs a log callback (xw_set_log()).
 *
 * Naming: `xw_object__verb()` for the library's objects (struct xw_iface,
 * xw_endpoint, xw_request, xw_check); `xw_noun_verb()` for functions on
 * plain values and tables (addresses, names, knobs, counters) and for
 * process-wide calls.
 *
 * Structs the library fills for the caller (struct xw_status, xw_stats,
 * xw_knob_info, xw_endpoint_stats, xw_wait_stats) also start with `sz`,
 * set by the caller (XW_OPTS() declares them too): the library fills
 * min(sz, its own size) and zeroes the rest; sz too small for any field is
 * -EINVAL.  So every struct may grow at its end without a new symbol
 * version (userspace/libxdpwake.map).
 *
 * Timeouts (`int timeout_ms` everywhere): < 0 no limit, 0 poll once (one
 * progress pass, then -ETIMEDOUT if not done), > 0 milliseconds; as poll(2).
 * Spin times are in nanoseconds (`spin_ns`).  Endpoint ids are __u16
 * (0 .. XW_MAX_ENDPOINTS-1), as on the wire.
 */
#ifndef XDPWAKE_H
#define XDPWAKE_H

#include <stddef.h>
#include <stdbool.h>
#include <linux/types.h>

#include "xdpwake/proto.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XW_API __attribute__((visibility("default")))

#define XDPWAKE_VERSION_MAJOR 0
#define XDPWAKE_VERSION_MINOR 3
#define XDPWAKE_VERSION_PATCH 0

/** Declare and zero an options struct with its size set:
 *  XW_OPTS(xw_iface_opts, o, .mode = XW_MODE_GENERIC); */
#define XW_OPTS(TYPE, NAME, ...)                                                   \
	struct TYPE NAME = ({                                                      \
		_Pragma("GCC diagnostic push")                                     \
		_Pragma("GCC diagnostic ignored \"-Wmissing-field-initializers\"") \
		struct TYPE xw_opts_tmp_ = { .sz = sizeof(struct TYPE), __VA_ARGS__ }; \
		_Pragma("GCC diagnostic pop")                                      \
		xw_opts_tmp_;                                                      \
	})

/* ---- errors and logging --------------------------------------------- */

/** Library version as "MAJOR.MINOR.PATCH". */
XW_API const char *xw_version(void);

/**
 * Describe a (negative or positive) errno value returned by this library,
 * with the cause xdpwake calls usually have for it (e.g. -EPERM: missing
 * CAP_NET_ADMIN/CAP_BPF).  Never returns NULL; the string is static.
 */
XW_API const char *xw_strerror(int err);

enum xw_log_level {
	XW_LOG_ERROR = 0,
	XW_LOG_WARN = 1,
	XW_LOG_INFO = 2,
	XW_LOG_DEBUG = 3,
};

/** Log callback: @msg is one line without trailing newline. */
typedef void (*xw_log_fn)(enum xw_log_level level, const char *msg, void *ctx);

/**
 * Install a log callback for messages up to @max_level (NULL: silence, the
 * default).  Process-wide.  libbpf's and libxdp's own messages are routed to
 * the same callback (at XW_LOG_DEBUG, warnings at XW_LOG_WARN).
 */
XW_API void xw_set_log(xw_log_fn fn, void *ctx, enum xw_log_level max_level);

/* ---- names ---------------------------------------------------------- */

/** Name of a policy ("every", "timeout", "marker", "stream", "adaptive"),
 *  or NULL if out of range. */
XW_API const char *xw_policy_name(unsigned int policy);
/** Policy number for @name, or -EINVAL. */
XW_API int xw_policy_parse(const char *name);
/** Name of a wake reason ("every", "marker", ...), or NULL. */
XW_API const char *xw_wake_reason_name(unsigned int reason);
/** Name of a packet type ("small", "medium", ...), or NULL. */
XW_API const char *xw_pkt_type_name(unsigned int type);

/* ---- knobs ---------------------------------------------------------- */

/** Description of one knob: see XW_KNOBS in xdpwake/proto.h (set sz; see
 *  the top). */
struct xw_knob_info {
	size_t sz;
	const char *name;     /* also the pinned map's file name            */
	bool per_endpoint;    /* false: one value per interface (key 0)     */
	__u32 def;	      /* value written when the maps are created    */
	__u32 min, max;	      /* accepted range (policy: enum xw_policy)    */
	const char *help;     /* one line                                   */
};

/** Number of knobs. */
XW_API int xw_knob_count(void);
/** Fill @info (info->sz set by the caller) for knob @idx (0 ..
 *  xw_knob_count()-1); -ERANGE otherwise, -EINVAL when info->sz is too
 *  small. */
XW_API int xw_knob_info(int idx, struct xw_knob_info *info);
/** Index of the knob called @name, or -ENOENT. */
XW_API int xw_knob_find(const char *name);
/**
 * Parse a knob value: numbers (decimal, 0x hex), policy names for `policy`,
 * "eth"/"udp"/"eth,udp" for `encap`, packet type lists ("small,rndv" or
 * "all"/"none") for `lat_mask`.  Range-checked: -EINVAL / -ERANGE.
 */
XW_API int xw_knob_parse(int idx, const char *text, __u32 *value);

/* ---- statistics ----------------------------------------------------- */

/** The XDP program's counters (xw_iface__stats(); set sz, see the top): one
 *  __u64 per counter of XW_STATS (xdpwake/proto.h), in that order, after
 *  sz; counters added later go at the end. */
struct xw_stats {
	size_t sz;
	XW_STATS(XW__STATS_FIELD)
};

/** Number of counters in struct xw_stats. */
XW_API int xw_stat_count(void);
/** Name and description of counter @idx; NULL if out of range. */
XW_API const char *xw_stat_name(int idx);
XW_API const char *xw_stat_help(int idx);
/** Value of counter @idx in @s (0 if out of range or beyond s->sz). */
XW_API __u64 xw_stat_value(const struct xw_stats *s, int idx);

/* ---- the program on an interface ------------------------------------ */

/** Default bpffs directory of the pinned maps: one sub-directory per
 *  interface. */
#define XW_DEFAULT_PIN_ROOT "/sys/fs/bpf/xdpwake"

/** An xdpwake program attached to one network interface, and its maps. */
struct xw_iface;

enum xw_xdp_mode {
	XW_MODE_AUTO = 0,    /* native, falling back to generic (skb) mode */
	XW_MODE_NATIVE = 1,  /* driver mode only                            */
	XW_MODE_GENERIC = 2, /* generic (skb) mode                          */
};

struct xw_iface_opts {
	size_t sz;
	/* bpffs directory holding one sub-directory of pinned maps per
	 * interface; NULL: "/sys/fs/bpf/xdpwake". */
	const char *pin_root;
	enum xw_xdp_mode mode;
	/* Initial per-interface knobs, used only when this call attaches
	 * the program (0: the knob's default). */
	__u32 encap;
	__u32 ethertype;
	__u32 udp_port;
	/* Initial policy for every endpoint (only when this call attaches);
	 * -1 or 0 with policy_set false: the default (marker). */
	bool policy_set;
	__u32 policy;
	/* Do not attach: only open an already attached program's maps
	 * (-ENOENT if none; nothing is created). */
	bool no_attach;
	/* Endpoint ids the program takes, 0 .. max_endpoints - 1, when this
	 * call attaches it (its per-endpoint maps are sized to it; per-CPU
	 * statistics cost 288 bytes per id and possible CPU).  0: the
	 * environment's XDPWAKE_MAX_ENDPOINTS, else the host's default
	 * (xw_max_endpoints_default()).  At most XW_MAX_ENDPOINTS. */
	__u32 max_endpoints;
};

/**
 * Open the xdpwake program of interface @ifname: attach it (loading the
 * embedded BPF object through libxdp, native mode unless asked otherwise)
 * and pin its maps under <pin_root>/<ifname>, or, if it is attached already,
 * open its pinned maps.  Errors: -ENODEV no such interface; -EPERM missing
 * privileges; -EOPNOTSUPP mode not supported by the driver; -EEXIST another
 * XDP program holds the interface and cannot be chained.
 */
XW_API int xw_iface__open(const char *ifname, const struct xw_iface_opts *opts,
			  struct xw_iface **ifacep);
/** Close the handle; the program stays attached (see xw_iface__detach). */
XW_API void xw_iface__close(struct xw_iface *iface);
/** Detach the program, remove the pinned maps, and close the handle. */
XW_API int xw_iface__detach(struct xw_iface *iface);
/** Detach xdpwake from @ifname and remove its pinned maps, by name;
 *  -ENOENT if not attached. @pin_root as in xw_iface_opts (NULL: default). */
XW_API int xw_detach(const char *ifname, const char *pin_root);

/** The interface's name and index. */
XW_API const char *xw_iface__name(const struct xw_iface *iface);
XW_API int xw_iface__ifindex(const struct xw_iface *iface);
/** Directory of the pinned maps. */
XW_API const char *xw_iface__pin_dir(const struct xw_iface *iface);
/** XW_MODE_NATIVE or XW_MODE_GENERIC: how the program is attached. */
XW_API int xw_iface__mode(const struct xw_iface *iface);
/** 1 when attached through libxdp's multi-program dispatcher, 0 when
 *  attached alone (libxdp's fallback where the dispatcher cannot load). */
XW_API int xw_iface__multiprog(const struct xw_iface *iface);
/** BPF program id of the wake engine. */
XW_API __u32 xw_iface__prog_id(const struct xw_iface *iface);
/** Endpoint ids the attached program takes (0 .. this - 1; the
 *  max_endpoints it was attached with); 0 for NULL. */
XW_API __u32 xw_iface__max_endpoints(const struct xw_iface *iface);
/** The endpoint count a program attached to @ifname without a setting
 *  takes: twice the larger of the possible CPUs and the interface's RX
 *  queues, rounded up to a power of two, at least 64, at most
 *  XW_MAX_ENDPOINTS (XDPWAKE_MAX_ENDPOINTS in the environment, if set and
 *  valid, overrides it). */
XW_API __u32 xw_max_endpoints_default(const char *ifname);
/** File descriptor of one of the program's maps by its pin name
 *  ("endpoints", "shared", "stats", a knob name, ...), or -ENOENT. */
XW_API int xw_iface__map_fd(const struct xw_iface *iface, const char *name);

/** Set knob @name of endpoint @ep (ignored for per-interface knobs).
 *  -ENOENT unknown knob, -ERANGE bad endpoint or value out of range. */
XW_API int xw_iface__set_knob(struct xw_iface *iface, const char *name, __u16 ep, __u32 value);
XW_API int xw_iface__get_knob(struct xw_iface *iface, const char *name, __u16 ep, __u32 *value);

/* xw_iface__stats(): the sum over every endpoint and XW_STATS_IFACE. */
#define XW_STATS_ALL 0xFFFFu

/** Statistics summed over CPUs, of endpoint @ep (0 .. the interface's
 *  max_endpoints-1, xw_iface__max_endpoints(); -ERANGE beyond), of frames
 *  not attributed to an endpoint (XW_STATS_IFACE), or of everything
 *  (XW_STATS_ALL), into @out (out->sz set by the caller; -EINVAL when it
 *  is too small). */
XW_API int xw_iface__stats(struct xw_iface *iface, __u16 ep, struct xw_stats *out);

/** Registered endpoint information (flags has XW_EPF_ACTIVE when in use). */
XW_API int xw_iface__endpoint(struct xw_iface *iface, __u16 ep, struct xw_ep_entry *out);


/* ---- addresses ------------------------------------------------------ */

/**
 * Address of an endpoint.  Ethernet mode: the peer's MAC and endpoint id.
 * UDP mode: the peer's IPv4 address and UDP port (network byte order), the
 * next hop's MAC (filled by the library from the neighbour table when
 * zero), and the endpoint id.
 *
 * nonce: the endpoint's incarnation nonce, 64 random bits chosen when it
 * was opened (xw_endpoint__addr fills it in).  Only a peer that knows it -
 * that got the address through the job's own exchange - can reset or
 * replace an existing connection with the endpoint (docs/PROTOCOL.md,
 * "Incarnation nonces").  0: unknown; such an address can still open a
 * connection to an endpoint that has none with the sender, never reset
 * one.  xw_addr_equal() ignores it (it names the same endpoint).
 */
struct xw_addr {
	__u8 encap;	/* XW_ENCAP_ETH or XW_ENCAP_UDP */
	__u8 mac[6];
	__u8 rsvd;
	__u16 ep;	/* endpoint id, 0 .. XW_MAX_ENDPOINTS-1 */
	__be16 port;	/* UDP mode */
	__be32 ip;	/* UDP mode */
	__u64 nonce;	/* the endpoint's incarnation nonce (0: unknown) */
};

/** Room for any formatted address, with the terminating NUL. */
#define XW_ADDR_STRLEN 48

/**
 * Parse "02:00:00:00:00:0a/3" (Ethernet: MAC/endpoint) or
 * "10.0.0.2:49152/3" (UDP: IPv4:port/endpoint; the MAC is resolved when
 * sending), either optionally followed by "/" and the endpoint's nonce in
 * 16 hex digits ("02:00:00:00:00:0a/3/9f1c0e2b44d7a310"; without it the
 * nonce is 0, unknown).  -EINVAL on malformed text, -ERANGE endpoint out
 * of range.
 */
XW_API int xw_addr_parse(const char *text, struct xw_addr *addr);
/** Format @addr as xw_addr_parse() reads it (the nonce only when it is
 *  not 0); -ENOSPC if @len is too small,
 *  -EINVAL if @addr is not valid.  Returns the length written. */
XW_API int xw_addr_format(const struct xw_addr *addr, char *buf, size_t len);
/** 1 when @a and @b name the same endpoint (nonces not compared), else 0. */
XW_API int xw_addr_equal(const struct xw_addr *a, const struct xw_addr *b);

/* ---- messages ------------------------------------------------------- */

/** Outcome of a completed request (set sz; see the top: every call that
 *  fills one checks sz first, -EINVAL before it takes anything). */
struct xw_status {
	size_t sz;
	size_t len;	    /* bytes delivered into the receive buffer / sent */
	size_t msg_len;	    /* the message's full length                        */
	__u64 match;	    /* the message's match value                        */
	struct xw_addr src; /* receives: the sender                             */
	int error;	    /* 0, -EMSGSIZE (truncated), -ECANCELED, ...        */
	bool has_data;	    /* receives: the sender attached data (XW_SEND_DATA) */
	__u32 data;	    /* ... its value (at most XW_DATA_MAX)              */
};

/** A pending send or receive. */
struct xw_request;

/* ---- endpoints ------------------------------------------------------ */

/** A message endpoint: an AF_XDP socket on one interface queue, its
 *  endpoint id in the XDP program, and the protocol state. */
struct xw_endpoint;

struct xw_endpoint_opts {
	size_t sz;
	const char *pin_root;	/* as in xw_iface_opts (NULL: default)          */
	enum xw_xdp_mode mode;	/* when this endpoint attaches the program      */
	__u32 queue;		/* interface queue to bind (default 0), or
				 * XW_QUEUE_ANY                                 */
	__u32 encap;		/* XW_ENCAP_ETH (default) or XW_ENCAP_UDP       */
	__u32 ethertype;	/* 0: the interface's current/default EtherType */
	__u32 udp_port;		/* 0: the interface's current/default port      */
	bool policy_set;	/* set this endpoint's wake policy              */
	__u32 policy;
	/* Framing (0: default): eager_max 32 KiB or 8 frames' payload if more,
	 * btp1 one frame, btp2 four frames, pull_inflight 8 blocks per
	 * message, pull_block (max 32) fragments making a 512 KiB window:
	 * 32 at MTU 1500, 7 at MTU 9000. */
	__u32 eager_max;
	__u32 btp1;
	__u32 btp2;
	__u32 pull_block;
	__u32 pull_inflight;
	/* Marks (ablation): set marks_set and a mask of XW_MARK_*. */
	bool marks_set;
	__u32 marks;
	/* Memory bounds (0: default 8 MiB / 4 MiB / 1024 queued sends). */
	__u64 unexpected_max;
	__u64 pushed_max;
	__u32 tx_backlog_max;
	/* UMEM frames (0: 4096) of 4096 bytes; half for receiving. */
	__u32 umem_frames;
	/* How blocking calls wait (enum xw_wait_strategy; 0: spin-block)
	 * and the spin time of the spin-* strategies in ns (0: the calibrated
	 * block-and-wake cost, see xw_block_cost_ns()). */
	__u32 wait_strategy;
	__u64 spin_ns;
	/* Polling watchdog period (0: off); see xw_endpoint__set_watchdog(). */
	__u32 watchdog_usecs;
	/* Reliability: a peer silent while something is owed is probed
	 * (after at most 1 s of silence, then every second); one whose
	 * endpoint is closed or whose process died is given up when the
	 * answer says so, its requests -ECONNRESET.  One that answers
	 * nothing and acknowledges nothing for give_up_ms (0: 60000) is
	 * given up, its requests -ETIMEDOUT: a lost path, or a host down. */
	__u32 give_up_ms;
	/* The watchdog thread's SCHED_FIFO priority (see xw_watchdog_opts). */
	__u32 watchdog_rt_prio;
	/* Endpoint ids of the program when this endpoint attaches it (as in
	 * xw_iface_opts; 0: XDPWAKE_MAX_ENDPOINTS or the host's default). */
	__u32 max_endpoints;
	/* While this endpoint pulls a large message (PULL blocks out), its
	 * spin-block and adaptive waits poll on until pull_spin times B has
	 * passed since the last pass that found work, not only for their
	 * spin time: the sender's fragments come in bursts with gaps
	 * (README "Wait strategies"; xw_endpoint__set_pull_spin()).  Without
	 * pull_spin_set: XW_PULL_SPIN_DEFAULT; with it, 0 turns it off (such
	 * waits end their spin at the spin time, as any other), at most
	 * XW_PULL_SPIN_MAX. */
	bool pull_spin_set;
	__u32 pull_spin;
};

/* xw_endpoint_opts.pull_spin, xw_endpoint__set_pull_spin(): in units of B. */
#define XW_PULL_SPIN_DEFAULT 8u
#define XW_PULL_SPIN_MAX 1000u

/* xw_endpoint_opts.queue: the first queue of the interface (0 .. its RX
 * queues - 1) that this process has already or that it can bind; queues
 * that other processes hold are skipped.  With UDP encapsulation an
 * endpoint on queue q has port udp_port + q (see xdpwake/proto.h). */
#define XW_QUEUE_ANY 0xFFFFFFFFu

/* Mark kinds for xw_endpoint_opts.marks. */
#define XW_MARK_SMALL (1u << 0)	     /* SMALL                           */
#define XW_MARK_MEDIUM (1u << 1)     /* the last MEDIUM fragment        */
#define XW_MARK_RNDV (1u << 2)	     /* RNDV                            */
#define XW_MARK_PULL (1u << 3)	     /* PULL requests                   */
#define XW_MARK_PULL_REPLY (1u << 4) /* the last PULL_REPLY of a block  */
#define XW_MARK_NOTIFY (1u << 5)     /* NOTIFY                          */
#define XW_MARK_ALL 0x3Fu

/**
 * Open endpoint @id (0 .. XW_MAX_ENDPOINTS-1) on interface @ifname: attach
 * the XDP program if it is not (sharing it otherwise), bind an AF_XDP
 * socket to the queue (shared by this process's endpoints on that queue),
 * register the endpoint in the program's maps.  The first open of an
 * interface in a process removes what killed processes' endpoints left
 * on it (xw_leftovers_clean()).  Errors: -ENODEV no such interface;
 * -EPERM missing privileges; -EBUSY the endpoint id is in use by a live
 * process, or the queue asked for is bound by another process; -ENOSPC
 * with XW_QUEUE_ANY: every RX queue of the interface is bound by another
 * process (each process needs a queue of its own: the error says how to
 * add queues); -EAFNOSUPPORT no AF_XDP in this kernel; -EINVAL bad options
 * or queue; -ERANGE @id >= XW_MAX_ENDPOINTS, or beyond the max_endpoints
 * the interface's program was attached with (xw_iface__max_endpoints();
 * the error names the setting: reattach with a larger one).
 */
XW_API int xw_endpoint__open(const char *ifname, __u16 id, const struct xw_endpoint_opts *opts,
			     struct xw_endpoint **epp);
/**
 * Remove what endpoints of processes that died (a SIGKILL, a crash) left
 * in /dev/shm: their local inboxes (xdpwake-<netns inode>-<ifindex>-<id>),
 * the claim lock files beside them and half-created inboxes.  An endpoint
 * whose claim lock no process holds is closed or dead (the kernel drops a
 * dead process's lock); a live endpoint's files are never touched.
 * @ifname: that interface in this network namespace; NULL: every
 * interface of every network namespace.  @removed (may be NULL) is called
 * with the path of each file removed.  Returns the number of files
 * removed, or -errno (-ENODEV: no such interface).
 */
XW_API int xw_leftovers_clean(const char *ifname, void (*removed)(const char *path, void *ctx),
			      void *ctx);
/** Close: pending requests are dropped; the last endpoint on an interface
 *  (in any process) detaches the program if this process attached it. */
XW_API void xw_endpoint__close(struct xw_endpoint *ep);
/** This endpoint's address (Ethernet: MAC/id, UDP: IPv4:port/id). */
XW_API int xw_endpoint__addr(const struct xw_endpoint *ep, struct xw_addr *addr);
/** The interface queue the endpoint's AF_XDP socket is bound to. */
XW_API int xw_endpoint__queue(const struct xw_endpoint *ep);
/** The interface handle (knobs, statistics). */
XW_API struct xw_iface *xw_endpoint__iface(const struct xw_endpoint *ep);
/** A file descriptor that becomes readable when the XDP program wakes this
 *  endpoint (arm with xw_endpoint__arm() first), for the application's own
 *  epoll loop. */
XW_API int xw_endpoint__fd(const struct xw_endpoint *ep);
/** Payload bytes per frame (from the interface MTU). */
XW_API int xw_endpoint__frag_payload(const struct xw_endpoint *ep);

/** Non-blocking send of @len bytes with @match to @dst.  Messages up to
 *  eager_max (to an endpoint on this host: up to 8 KiB) are copied at
 *  once; larger ones are read from @buf until the request completes.
 *  -EAGAIN when the send backlog is full. */
XW_API int xw_endpoint__isend(struct xw_endpoint *ep, const struct xw_addr *dst,
			      const void *buf, size_t len, __u64 match, struct xw_request **reqp);
/** Options of xw_endpoint__isend_opts(). */
struct xw_send_opts {
	size_t sz;
	__u32 flags;		/* XW_SEND_*                                    */
	__u32 data;		/* with XW_SEND_DATA: any 32-bit value          */
};
/* More messages to the same destination follow at once (a batch): every
 * frame of this one carries MORE, so the receiver's XDP program may defer
 * its wake (`stream`, and `marker`: an eager message sent with it carries
 * no LAT mark), and the sender kicks the transmit ring once per batch of
 * frames (up to the kernel's 32 per call) instead of once per message; send
 * the batch's last message without the flag: it puts what waits on the
 * wire (as does any progress pass, i.e. any wait or test). */
#define XW_SEND_MORE (1u << 0)
/* Attach opts->data to the message (remote completion data, e.g. the
 * sender's MPI rank, any 32-bit value): the receive's status has has_data
 * and data. */
#define XW_SEND_DATA (1u << 1)
/** xw_endpoint__isend() with options (NULL: none). */
XW_API int xw_endpoint__isend_opts(struct xw_endpoint *ep, const struct xw_addr *dst,
				   const void *buf, size_t len, __u64 match,
				   const struct xw_send_opts *opts, struct xw_request **reqp);
/** Non-blocking receive of a message whose match m has
 *  (m & mask) == (match & mask). */
XW_API int xw_endpoint__irecv(struct xw_endpoint *ep, void *buf, size_t len, __u64 match,
			      __u64 mask, struct xw_request **reqp);
/** Options of xw_endpoint__irecv_opts(). */
struct xw_recv_opts {
	size_t sz;
	const struct xw_addr *src; /* directed: only messages from this sender
				    * match (NULL: any sender); when the
				    * connection with it is given up, the
				    * receive completes with -ETIMEDOUT     */
};
/** xw_endpoint__irecv() with options (NULL: none). */
XW_API int xw_endpoint__irecv_opts(struct xw_endpoint *ep, void *buf, size_t len, __u64 match,
				   __u64 mask, const struct xw_recv_opts *opts,
				   struct xw_request **reqp);
/** Options of xw_endpoint__peek(). */
struct xw_peek_opts {
	size_t sz;
	const struct xw_addr *src; /* only messages from this sender (NULL: any) */
	__u32 flags;		   /* XW_PEEK_*                                */
};
/* Set the message aside (MPI's matched probe): no receive or peek sees it
 * any more; xw_endpoint__irecv_claimed() takes it. */
#define XW_PEEK_CLAIM (1u << 0)
/**
 * After one progress pass, look at the oldest message waiting unmatched
 * that a receive of (@match, @mask, opts->src) would take, without taking
 * it (MPI probe): @st gets its envelope (msg_len = len = its full length,
 * match, src).  -ENOMSG when none waits.  With XW_PEEK_CLAIM, *@claim gets
 * a handle for xw_endpoint__irecv_claimed().
 */
XW_API int xw_endpoint__peek(struct xw_endpoint *ep, __u64 match, __u64 mask,
			     const struct xw_peek_opts *opts, struct xw_status *st, __u64 *claim);
/** Receive the message claimed under @claim (MPI_Mrecv); a 0-byte buffer
 *  discards it.  -ENOENT if there is no such message (already taken, or
 *  dropped because its sender was reset). */
XW_API int xw_endpoint__irecv_claimed(struct xw_endpoint *ep, __u64 claim, void *buf, size_t len,
				      struct xw_request **reqp);
/**
 * Arm the endpoint for a sleep in the application's own loop: afterwards
 * xw_endpoint__fd() becomes readable when the XDP program wakes it.  0:
 * armed, sleep on the fd (then call xw_endpoint__progress()); -EAGAIN:
 * frames wait already (not armed: progress instead of sleeping).  Pending
 * wake records are consumed first, so a readable fd means a new wake.  A
 * sleep must be bounded by the caller (retransmission timers run only
 * inside library calls).
 */
XW_API int xw_endpoint__arm(struct xw_endpoint *ep);
/**
 * Undo xw_endpoint__arm() after the application's own sleep (woken by
 * the fd or not): the XDP program wakes nobody for this endpoint any
 * more, and wake records still pending are consumed (the fd is quiet).
 * Returns 1 when the program had taken the flag (a wake was sent), 0 when
 * it had not (the sleep ended for another reason), -EINVAL.
 */
XW_API int xw_endpoint__disarm(struct xw_endpoint *ep);
/**
 * When the endpoint's protocol next needs a progress pass, as its last
 * pass left it (retransmission, delayed ACK, give-up timers): a
 * CLOCK_MONOTONIC time in ns, 0 when a pass is due now, UINT64_MAX when no
 * timer is pending.  A sleep on xw_endpoint__fd() should end by then.
 */
XW_API __u64 xw_endpoint__next_deadline(const struct xw_endpoint *ep);
/** Blocking forms; -ETIMEDOUT after @timeout_ms (< 0: no limit, 0: poll
 *  once). */
XW_API int xw_endpoint__send(struct xw_endpoint *ep, const struct xw_addr *dst, const void *buf,
			     size_t len, __u64 match, int timeout_ms);
XW_API int xw_endpoint__recv(struct xw_endpoint *ep, void *buf, size_t len, __u64 match,
			     __u64 mask, struct xw_status *st, int timeout_ms);
/** One bounded pass of receive and transmit work; returns the number of
 *  frames handled (>= 0).  When the last pass left nothing to do, no frame
 *  has come and no timer is due, it returns 0 at once, without a lock or
 *  (unless a timer is near) a clock read: made to be polled. */
XW_API int xw_endpoint__progress(struct xw_endpoint *ep);
/** Whether xw_endpoint__progress() would make a pass now (a frame came,
 *  a timer is due, something is left to transmit, or a call changed the
 *  endpoint since the last pass): the same check, without a lock or
 *  (unless a timer is near) a clock read.  A frame racing it is seen by
 *  the next call. */
XW_API bool xw_endpoint__pass_due(struct xw_endpoint *ep);
/** How many progress passes the endpoint has made, any thread's
 *  (xw_endpoint__progress(), waits, the library's threads); no lock.  A
 *  request completes only in a pass or in the call that posts or cancels
 *  it: a caller that keeps requests posted looks at them (read the count
 *  first, then xw_request__done() each) only when the count moved since
 *  its last look, or after it posted or cancelled. */
XW_API __u64 xw_endpoint__passes(const struct xw_endpoint *ep);

/** 1 and the status when the request completed (the request is released
 *  then and must not be used again), 0 while pending. */
XW_API int xw_request__test(struct xw_request *req, struct xw_status *st);
/** 1 when the request has completed (collect it with xw_request__test()),
 *  0 while pending; no progress pass (cheap: for scanning many requests
 *  after one xw_endpoint__progress()). */
XW_API int xw_request__done(const struct xw_request *req);
/** Wait for completion (releases the request); -ETIMEDOUT after
 *  @timeout_ms (< 0: no limit, 0: poll once), the request then stays
 *  valid. */
XW_API int xw_request__wait(struct xw_request *req, struct xw_status *st, int timeout_ms);
/** Cancel: 0 if cancelled (collect it with test/wait: status.error is
 *  -ECANCELED), -EBUSY if already in progress. */
XW_API int xw_request__cancel(struct xw_request *req);

/** Counters of an endpoint's library side (set sz; see the top). */
struct xw_endpoint_stats {
	size_t sz;
	__u64 tx_frames, rx_frames;
	__u64 tx_kicks;		/* sendto() calls to start transmission     */
	__u64 tx_full;		/* times the TX ring or frames ran out      */
	__u64 rx_bad;		/* frames the library rejected              */
	__u64 rx_dropped;	/* frames dropped over the memory bounds    */
	__u64 rx_dup;		/* duplicate fragments                      */
	__u64 unexpected_msgs;
	__u64 spins, blocks, wakes, spurious_wakes;
	/* UMEM ownership: total == fill (fill + RX rings) + free_tx +
	 * tx_inflight (TX + completion rings) whenever no call is running. */
	__u64 umem_frames_total, umem_frames_free_tx, umem_frames_fill;
	__u64 umem_frames_tx_inflight;
	__u64 umem_invariant_violations; /* checked when XDPWAKE_DEBUG=1 */
	/* Reliability */
	__u64 retransmits;	/* frames sent again (timeout, duplicate acks)   */
	__u64 crc_failures;	/* frames dropped: wrong CRC32C                  */
	__u64 session_rejects;	/* frames dropped: stale, forged or no session   */
	__u64 rx_out_of_order;	/* frames held ahead of the expected sequence    */
	__u64 rx_dup_frames;	/* frames received again (already delivered)     */
	__u64 conn_timeouts;	/* connections given up: requests -ETIMEDOUT     */
	__u64 peer_resets;	/* peer restarted, or closed while requests or
				 * frames with it were under way: those requests
				 * -ECONNRESET                                    */
	__u64 sessions;		/* sessions established with peers               */
	__u64 rx_ctrl_frames;	/* ACK, CONNECT, CONNECT_REPLY, CLOSE, PROBE,
				 * PROBE_REPLY received                          */
	__u64 tx_by_type[16];	/* frames sent per packet type (XW_PKT_*),
				 * retransmissions included                      */
	__u64 rtx_by_type[16];	/* retransmissions per packet type               */
	__u64 rx_refused;	/* frames refused over the memory bounds: not
				 * acknowledged, the sender sends them again     */
	__u64 unexpected_bytes;	/* bytes held now for unexpected messages         */
	__u64 pushed_bytes;	/* bytes held now for pushes of unexpected RNDVs  */
	__u64 peers;		/* peers (connections) known now                  */
	__u64 peers_evicted;	/* idle peers forgotten because the table was full
				 * (a flood of forged frames)                     */
	__u64 reconnects;	/* a peer endpoint came back with a new session
				 * (it had given us up): message streams carried
				 * over, nothing taken twice                      */
	__u64 carried;		/* frames sent again after a reconnect            */
	__u64 sends_lost;	/* buffered eager messages lost with a give-up
				 * (their requests had completed)                 */
	__u64 abandoned;	/* incomplete incoming messages dropped because
				 * their sender gave them up                      */
	/* Peers on this host and interface (shared-memory inboxes) */
	__u64 local_tx_frames;	/* frames written into a local peer's inbox       */
	__u64 local_rx_frames;	/* frames taken from this endpoint's inbox        */
	__u64 local_lost;	/* frames for a local peer whose inbox is closed
				 * or gone (the connection layer's timers act)    */
	__u64 local_rx_bad;	/* inbox records dropped as corrupt               */
	__u64 local_wake_runs;	/* wake decisions run for a sleeping local peer
				 * (one BPF_PROG_TEST_RUN each)                   */
	/* Liveness of silent peers (a peer that computes or is stopped is
	 * waited for; one whose endpoint closed or whose process died is
	 * given up when a probe finds it so: peers_gone below; one that
	 * answers nothing after give_up_ms) */
	__u64 live_probes;	/* PROBEs sent to peers silent while owing us     */
	__u64 live_replies;	/* PROBE_REPLYs taken: the peer endpoint is open  */
	__u64 live_local;	/* peers on this host found alive without a probe */
	__u64 peers_unacked;	/* peers that something sent to is not yet
				 * acknowledged by, or still queued for (0: every
				 * message sent has been acknowledged, or its peer
				 * given up): what closing now would lose; a
				 * caller that lingers before xw_endpoint__close
				 * runs progress until it is 0 (bounded by
				 * give_up_ms)                                    */
	/* Loss recovery (docs/PROTOCOL.md "Retransmission"): what the
	 * retransmissions above were and what the timers are now */
	__u64 rto_timeouts;	/* retransmission timer expiries                  */
	__u64 fast_rtx;		/* resends on three duplicate acks                */
	__u64 sack_rtx;		/* frames resent as lost by acks (selective acks,
				 * time-based detection), without a timer         */
	__u64 tail_probes;	/* tail-loss probes: the last unacknowledged frame
				 * sent again ~2 RTTs after the last ack, before
				 * the RTO                                         */
	__u64 lost_rtx;		/* retransmissions found lost again (by acks or
				 * a timer expiry), each resent                    */
	__u64 spurious_rtx;	/* resent frames acknowledged sooner after the
				 * resend than any round trip: the first copy had
				 * arrived (an estimate from the sender's side)    */
	__u64 rtt_samples;	/* RTT samples taken (frames acknowledged for the
				 * first time, never resent)                       */
	__u64 rtt_skipped;	/* acks of new frames that gave no sample (Karn:
				 * resent frames, frames held behind a hole, or
				 * measured already when selectively acked)        */
	__u64 sack_ignored;	/* selective acks ignored: naming a frame never
				 * sent, or malformed                              */
	__u64 rto_ns;		/* now: the largest retransmission timeout among
				 * the established connections (backoff included;
				 * the floor is rto_min, 1 ms by default)          */
	__u64 srtt_ns;		/* now: the smoothed RTT of that connection       */
	/* Peers on this host (docs/PROTOCOL.md "Local peers") */
	__u64 local_ring_full;	/* frames that waited in our queue: the local
				 * peer's ring was full (sent later, never lost)  */
	__u64 local_rx_held;	/* inbox records left in the ring for later: over
				 * the bound for unexpected data (back-pressure)  */
	__u64 local_cma_reads;	/* large messages read straight from a local
				 * sender's buffer (process_vm_readv)             */
	__u64 local_cma_bytes;	/* ... their bytes                                */
	__u64 local_cma_fallbacks; /* local peers whose buffers may not be read
				 * (EPERM: Yama ptrace_scope, another user): their
				 * large messages are pulled, copied twice        */
	__u64 nonce_rejects;	/* CONNECT, CONNECT_REPLY or CLOSE frames dropped:
				 * they did not carry this endpoint's nonce (a
				 * forged frame, or a peer without our address)
				 * and would have reset or replaced a connection */
	__u64 umem_rx_warmed;	/* receive frames (of umem_frames_fill) given their
				 * first use when the socket was created, so a
				 * job's first turn of the receive ring is not
				 * slower (0 where the kernel cannot: no
				 * live-frames test runs, or not on this queue)   */
	__u64 peer_closes;	/* peers that closed their endpoint (its CLOSE,
				 * carrying its last ack, came); those that cut
				 * something short are in peer_resets too         */
	__u64 local_cma_marks;	/* of local_cma_reads: answered with a mark in the
				 * sender's inbox instead of a NOTIFY frame (the
				 * sender did not sleep)                          */
	__u64 local_cma_done;	/* our large sends to local peers completed by
				 * such a mark                                    */
	/* The AF_XDP socket's own counters, kept by the kernel: frames of
	 * the endpoint's queue dropped before the library saw them (the
	 * socket is shared by this process's endpoints on the queue; each
	 * such frame is resent by its sender) */
	__u64 sock_rx_ring_full;  /* the RX ring was full: the process took
				   * frames too late (it did not run)      */
	__u64 sock_rx_dropped;	  /* dropped for want of a receive frame,
				   * or too long; frames lost in all:
				   * sock_rx_ring_full + sock_rx_dropped   */
	__u64 sock_rx_fill_empty; /* of those, the times the fill ring had
				   * no receive frame (the process had not
				   * given the frames back in time)        */
	__u64 sock_invalid_descs; /* invalid RX or TX descriptors (a bug)  */
	/* Liveness (see live_probes) */
	__u64 peers_gone;	  /* peers given up at once because their
				   * endpoint is closed or their process
				   * died (their XDP program said so, or
				   * for a peer on this host its inbox):
				   * requests -ECONNRESET; not in
				   * conn_timeouts                         */
};
/** Fill @st (st->sz set by the caller) with the endpoint's counters (and
 *  its socket's, shared with the process's other endpoints on the same
 *  queue); -EINVAL when st->sz is too small. */
XW_API int xw_endpoint__stats(const struct xw_endpoint *ep, struct xw_endpoint_stats *st);


/* ---- waiting -------------------------------------------------------- */

/** How a blocking call waits (after the SHRIMP paper's strategies). */
enum xw_wait_strategy {
	XW_WAIT_DEFAULT = 0,	/* the endpoint's default (spin-block)          */
	XW_WAIT_SPIN = 1,	/* poll the rings until done                    */
	XW_WAIT_YIELD = 2,	/* poll, sched_yield() between polls            */
	XW_WAIT_BLOCK = 3,	/* sleep on the wake ring at once               */
	XW_WAIT_SPIN_YIELD = 4, /* spin for the spin time, then yield           */
	XW_WAIT_SPIN_BLOCK = 5, /* spin for the spin time, then sleep           */
	XW_WAIT_NOTIFY = 6,	/* a library thread sleeps on the wake ring, runs
				 * progress and the notify callback, and wakes
				 * the waiting thread                           */
	XW_WAIT_ADAPTIVE = 7,	/* spin-block, spin time from recent arrival
				 * delays, kept in [B/2, 2B] (3-competitive)    */
	XW_WAIT_MAX = 8,
};

/** Name ("spin", "spin-block", ...) of a strategy, or NULL. */
XW_API const char *xw_wait_strategy_name(unsigned int s);
/** Strategy for @name, or -EINVAL. */
XW_API int xw_wait_strategy_parse(const char *name);

/** The measured cost B of one block-and-wake on this machine, in ns,
 *  calibrated once per process on the real wake path: a thread sleeping on
 *  a BPF ring buffer woken by a BPF_RB_FORCE_WAKEUP record, as the XDP
 *  program wakes it (without BPF privileges: two threads and eventfds, a
 *  lower bound); XDPWAKE_BLOCK_COST_NS overrides.  Spin-block's default spin
 *  time: spinning B before blocking costs at most 2x the offline optimum. */
XW_API __u64 xw_block_cost_ns(void);

/** Set the endpoint's default strategy and spin time (0: B). */
XW_API int xw_endpoint__set_wait(struct xw_endpoint *ep, enum xw_wait_strategy s,
				 __u64 spin_ns);

/** While a large message is being pulled, spin-block and adaptive waits
 *  poll on until @pull_spin times B after the last pass that found work
 *  (xw_endpoint_opts.pull_spin; 0: off).  -EINVAL: NULL @ep, or @pull_spin
 *  above XW_PULL_SPIN_MAX.  Takes effect at the next wait. */
XW_API int xw_endpoint__set_pull_spin(struct xw_endpoint *ep, __u32 pull_spin);
/** The number of PULL blocks the endpoint has out (fragments of large
 *  messages asked for and not all in yet): > 0 while it pulls, so an
 *  application that polls on its own (xw_endpoint__progress() in a loop)
 *  can keep polling through the sender's gaps as the library's waits do.
 *  A hint, read without the endpoint's lock.  -EINVAL: NULL @ep. */
XW_API int xw_endpoint__pulling(const struct xw_endpoint *ep);

/** Callback of the notify strategy, run on the library's thread after it
 *  handled frames for @ep. */
typedef void (*xw_notify_fn)(struct xw_endpoint *ep, void *arg);
/** Install the notify callback (and start the endpoint's notify thread);
 *  NULL stops it. */
XW_API int xw_endpoint__set_notify(struct xw_endpoint *ep, xw_notify_fn fn, void *arg);

/** Options of xw_request__wait_opts() and xw_wait_any(). */
struct xw_wait_opts {
	size_t sz;
	/* The wait's bound.  Without timeout_set (zeroed options, as NULL
	 * options): no limit.  With timeout_set, timeout_ms as everywhere:
	 * < 0 no limit, 0 poll once (one pass, then -ETIMEDOUT if not ready),
	 * > 0 milliseconds.  A non-zero timeout_ms without timeout_set is
	 * -EINVAL (it would be ignored). */
	bool timeout_set;
	int timeout_ms;
	enum xw_wait_strategy strategy; /* XW_WAIT_DEFAULT: the endpoint's  */
	__u64 spin_ns;		       /* 0: the endpoint's                 */
	/* xw_wait_any(): also ready when cond(arg) returns true (polled
	 * between passes and after every wake). */
	bool (*cond)(void *arg);
	void *cond_arg;
	/* xw_wait_any(): endpoint items are only progressed and armed, never
	 * ready because a message waits unmatched (the caller's cond says
	 * when to return). */
	bool eps_no_unexpected;
};

/** Wait with explicit options; as xw_request__wait() otherwise. */
XW_API int xw_request__wait_opts(struct xw_request *req, struct xw_status *st,
				 const struct xw_wait_opts *opts);

/** One thing xw_wait_any() waits for. */
struct xw_waitable {
	struct xw_request *req;	  /* ready when complete (collect with test) */
	struct xw_endpoint *ep;	  /* or: ready when a message waits on it
				   * unmatched (post a receive for it)       */
};

/* Most items xw_wait_any() takes at once. */
#define XW_WAIT_ANY_MAX 16

/**
 * Wait until one of @items is ready, or opts->cond() is true, using the
 * strategy of the first item's endpoint (or opts->strategy).  Returns the
 * index of a ready item, @n when the condition is true, -ETIMEDOUT.  The
 * items' endpoints are progressed; sleeping arms all of them.  -E2BIG when
 * @n > XW_WAIT_ANY_MAX.
 */
XW_API int xw_wait_any(struct xw_waitable *items, int n, const struct xw_wait_opts *opts);

/** Per-endpoint waiting statistics (set sz; see the top). */
struct xw_wait_stats {
	size_t sz;
	__u64 waits;		/* blocking waits                          */
	__u64 spins;		/* polls that found nothing                */
	__u64 yields;		/* sched_yield() calls (yield, spin-yield) */
	__u64 blocks;		/* sleeps on the wake ring                 */
	__u64 wakes;		/* wake records received                   */
	__u64 spurious_wakes;	/* woken with nothing to do                */
	__u64 spin_ns;		/* time spent spinning                     */
	__u64 block_ns;		/* time spent asleep                       */
	__u64 block_cost_ns;	/* B, the calibrated block-and-wake cost   */
	__u64 adaptive_spin_ns; /* the adaptive strategy's current spin    */
	__u64 watchdog_runs;	/* watchdog thread passes                  */
	__u64 watchdog_frames;	/* frames the watchdog handled             */
	__u64 notify_runs;	/* notify callbacks run                    */
	__u64 watchdog_lead_ns; /* the watchdog fires this much early      */
	/* A CPU shared with other tasks (spin-block, adaptive; issue 27): */
	__u64 spin_probes;	/* sched_yield() probes inside a spin      */
	__u64 shared_spins;	/* spins ended because another task waited
				 * for this CPU (a probe ran it, or the
				 * spinner was preempted)                  */
	__u64 shared_waits;	/* waits that blocked without spinning:
				 * the CPU was found shared just before    */
	__u64 sleep_timeouts;	/* sleeps ended by their timeout with no
				 * wake and no frame (timer fallbacks)     */
	__u64 late_wakes;	/* wakes not learned into B: the woken
				 * thread waited for a CPU                 */
	__u64 pull_spins;	/* spins past the spin time because a
				 * large message was being pulled (polled
				 * until pull_spin x B after the last pass
				 * that found work, xw_endpoint_opts)      */
	__u64 sleep_acks;	/* sleeps before which the delayed ACKs
				 * owed were sent at once (not at the end
				 * of their delay, which would have ended
				 * the sleep to send them)                 */
};
/** Fill @st (st->sz set by the caller); -EINVAL when st->sz is too small. */
XW_API int xw_endpoint__wait_stats(const struct xw_endpoint *ep, struct xw_wait_stats *st);

/**
 * Polling watchdog: with @period_usecs > 0, frames the application leaves
 * unconsumed (it does not call the library) are handled by a library
 * thread about @period_usecs after they arrived: the XDP program wakes the
 * thread early by the thread's own measured wake-up cost
 * (`watchdog_lead_ns` in the wait stats, at most half a period), so the
 * period is the target delay, not a lower bound.  No periodic timer: it
 * costs nothing while no frames arrive.  0 stops it.  Up to 10,000,000 us.
 */
XW_API int xw_endpoint__set_watchdog(struct xw_endpoint *ep, __u32 period_usecs);

/** Options of xw_endpoint__set_watchdog_opts() (set sz; see the top). */
struct xw_watchdog_opts {
	size_t sz;
	__u32 period_usecs; /* as xw_endpoint__set_watchdog(); 0: off */
	/* 1-99: run the watchdog thread under SCHED_FIFO at this priority
	 * where the process may (CAP_SYS_NICE or RLIMIT_RTPRIO), so that its
	 * wake-up preempts the application's computation at once; without
	 * the privilege, and at 0, the thread keeps the normal policy (with
	 * the fair scheduler's shortest slice, which preempts on most wakes). */
	__u32 rt_prio;
};
/** The watchdog with options; -EINVAL for a period or priority out of range. */
XW_API int xw_endpoint__set_watchdog_opts(struct xw_endpoint *ep,
					  const struct xw_watchdog_opts *opts);

/* Check polls: sprinkle xw_check() in compute loops; it reads the cycle
 * counter and polls only when the interval has passed. */
struct xw_check {
	__u64 next;	   /* cycle count of the next poll */
	__u64 interval;	   /* cycles between polls         */
	struct xw_endpoint *ep;
};
/** Set up @c to poll @ep every @interval_usecs. */
XW_API int xw_check__init(struct xw_check *c, struct xw_endpoint *ep, __u32 interval_usecs);
/** The slow path of xw_check(): one progress pass, next deadline. */
XW_API int xw_check__poll(struct xw_check *c);

static inline __u64 xw__cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
	__u64 v;

	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return 0; /* xw_check__init() falls back to a clock: see xw_check__poll */
#endif
}

/** A few cycles when nothing is due; otherwise one progress pass.  Returns
 *  the frames handled (0 when not due). */
static inline int xw_check(struct xw_check *c)
{
	if (__builtin_expect(xw__cycles() < c->next, 1))
		return 0;
	return xw_check__poll(c);
}

#ifdef __cplusplus
}
#endif

#endif /* XDPWAKE_H */
