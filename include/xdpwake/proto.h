/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * xdpwake/proto.h - what applications and the XDP program both need: the
 * wire format, the endpoint registration and policies, the knobs and the
 * statistics counters.  Installed with xdpwake.h.
 *
 * This header is included by bpf/xdpwake.bpf.c (clang -target bpf), by the
 * library, the tool and the tests, and by applications.  It only uses
 * fixed-width kernel types (<linux/types.h>, no <linux/bpf.h>) so that it
 * compiles unchanged in all of them, as C and as C++.  The layouts of the
 * BPF maps that only the program and the library see (struct bpf_timer and
 * all) are in bpf/xdpwake_maps.h, which is not installed.
 *
 * Wire fields are big-endian (network byte order).  Map values are in host
 * byte order.
 */
#ifndef XDPWAKE_PROTO_H
#define XDPWAKE_PROTO_H

#include <linux/types.h>

#ifdef __cplusplus
#define XW_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define XW_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif
#define XW_OFFSETOF(t, f) __builtin_offsetof(t, f)

/* ------------------------------------------------------------------ */
/* Encapsulation                                                       */
/* ------------------------------------------------------------------ */

/* IEEE 802 "Local Experimental EtherType 1". */
#define XW_DEFAULT_ETHERTYPE 0x88B5
/* UDP mode destination port (dynamic range, unassigned). */
#define XW_DEFAULT_UDP_PORT 49152

/*
 * Per-queue UDP ports.  In UDP mode an endpoint on RX queue q listens on
 * (and sends from) port udp_port + q, so a NIC's n-tuple rule "UDP
 * destination port udp_port + q -> RX queue q" steers its frames to its
 * queue (`xdpwake steer`).  The XDP program takes a frame as ours only when
 * its port belongs to a queue in use on the interface: array map
 * `udp_queues`, key q, value = the pid of the process whose AF_XDP socket
 * is bound to queue q (0: not in use); the port code sets it when it binds
 * the queue and clears it when it closes the socket.  A crashed process
 * leaves its entry set: the port of that queue stays ours (frames to it are
 * dropped as for a closed endpoint) until another process binds the queue.
 * Queues at or beyond XW_MAX_QUEUES cannot be used with UDP encapsulation.
 */
#define XW_MAX_QUEUES 1024

/* Bits of the per-interface `encap` knob: which encapsulations are ours. */
#define XW_ENCAP_ETH 0x1u /* Ethernet, optional VLAN tags, EtherType      */
#define XW_ENCAP_UDP 0x2u /* Ethernet, optional VLAN tags, IPv4, UDP port */
#define XW_ENCAP_ALL (XW_ENCAP_ETH | XW_ENCAP_UDP)

/* ------------------------------------------------------------------ */
/* The xdpwake header                                                  */
/* ------------------------------------------------------------------ */

/* Wire version.  2: 64-byte header, 32 bits of message data at offset 56
 * (1: a 56-byte header with 24 bits of data in bytes 3 and 42-43).  A frame
 * of another version is dropped and counted (XW_R_BAD_VERSION). */
#define XW_VERSION 2

enum xw_pkt_type {
	XW_PKT_INVALID = 0,
	XW_PKT_SMALL = 1,	  /* whole message in one frame                  */
	XW_PKT_MEDIUM = 2,	  /* eager fragment of a message <= eager_max      */
	XW_PKT_RNDV = 3,	  /* rendezvous; may carry the first BTP(1) bytes  */
	XW_PKT_PULL = 4,	  /* receiver asks for a block of fragments        */
	XW_PKT_PULL_REPLY = 5,	  /* a fragment answering a PULL (or pushed BTP2)  */
	XW_PKT_NOTIFY = 6,	  /* receiver tells sender a large message is done */
	XW_PKT_ACK = 7,		  /* cumulative acknowledgement                    */
	XW_PKT_CONNECT = 8,	  /* connection request (new session id + ISN)     */
	XW_PKT_CONNECT_REPLY = 9, /* connection accept                             */
	XW_PKT_CLOSE = 10,	  /* connection teardown                           */
	XW_PKT_PROBE = 11,	  /* is the peer endpoint's socket open? (liveness) */
	XW_PKT_PROBE_REPLY = 12,  /* yes: answered by the peer's XDP program      */
	XW_PKT_TYPE_MAX = 13,
};

/* Header flags. */
#define XW_F_LAT 0x01u	/* latency-sensitive: the receiver will want this now */
#define XW_F_MORE 0x02u /* sender already holds more frames for this peer    */
#define XW_F_LAST 0x04u /* last fragment of a message / of a pull block       */
#define XW_F_DATA 0x08u /* the message carries 32 bits of data in `data`
			 * (every SMALL/MEDIUM/RNDV/PULL_REPLY frame of it)  */
/* RNDV on the local path only (never on the wire; ignored from a peer that
 * is not on this host): the receiver may read the message straight from
 * the sender's buffer, whose address the frame carries in `rsvd2` (high 32
 * bits) and `csum` (low 32: local frames carry no CRC32C); docs/PROTOCOL.md
 * "Local peers". */
#define XW_F_CMA 0x10u
/* On the local path only: the sender keeps this frame until acknowledged
 * (it went before the connection was established): ack it at once.  Other
 * local frames are not kept and not acknowledged. */
#define XW_F_ACKREQ 0x20u
/* PROBE_REPLY only: the probed endpoint's socket is closed - its slot is
 * not in use, or its process exited or died (the kernel removed the socket
 * from the XSKMAP): the endpoint the prober spoke to is gone for good. */
#define XW_F_GONE 0x40u
#define XW_F_KNOWN (XW_F_LAT | XW_F_MORE | XW_F_LAST | XW_F_DATA)
/* Largest value of a message's data (the header's 32-bit `data`). */
#define XW_DATA_MAX 0xFFFFFFFFu

/*
 * Per-type field use (checked by the XDP program where marked [X]):
 *
 *   SMALL       msg_len == payload_len, frag_idx 0, frag_count 1, frag_off 0 [X]
 *   MEDIUM,     frag_count >= 1, frag_idx < frag_count                      [X]
 *   RNDV,       frag_off + payload_len <= msg_len                            [X]
 *   PULL_REPLY  (RNDV carries msg_len = the full message length)
 *               RNDV: payload = fragment 0; frag_idx = K-1, the last
 *               fragment the sender pushes unasked (K = ceil((BTP(1) +
 *               BTP(2)) / fragment payload), 1 <= K <= frag_count).
 *   PULL        frag_idx < frag_count (first fragment asked, total), [X]
 *               frag_off <= msg_len                                          [X]
 *               payload: struct xw_pull_req
 *   NOTIFY, ACK, CONNECT, CONNECT_REPLY, CLOSE: control; fragment fields 0
 *               (but for the nonce of CONNECT*, CLOSE below).
 *               CONNECT and CONNECT_REPLY: match = the sender endpoint's
 *               incarnation id << 32 | the msg_id its message stream to
 *               the receiver resumes at; msg_len = bitmap of the final ids
 *               resume+1 .. resume+32 (library-level; not checked here).
 *               CONNECT, CONNECT_REPLY, CLOSE: frag_off:frag_idx = the
 *               destination endpoint's incarnation nonce as the sender
 *               knows it (0: unknown), data:rsvd2 = the sender's (the
 *               library refuses a reset or replacement of a connection
 *               without its nonce: docs/PROTOCOL.md "Incarnation nonces").
 *   PROBE, PROBE_REPLY: liveness of a peer endpoint that is silent while
 *               something is owed (it may be computing, or stopped).
 *               PROBE: session = the prober's session id (the one the
 *               peer's `conns` entry expects from it, if it has one), seq
 *               = the prober's nonce, data = the CRC32C the reply must
 *               carry, rsvd2 = the CRC32C a "gone" reply must carry (below),
 *               payload 0.  The receiver's XDP program answers it
 *               without waking anyone when the destination endpoint's
 *               AF_XDP socket is open (and the session, if known, is
 *               right): PROBE_REPLY = the same header with type
 *               PROBE_REPLY, dst_ep and src_ep swapped, csum = the
 *               probe's data, data = the low 32 bits of the endpoint's
 *               count of frames consumed (not covered by the CRC32C: csum
 *               is computed with data 0), sent back (XDP_TX) with the
 *               Ethernet (and IPv4, UDP) addresses swapped.  When the
 *               endpoint is not in use or its socket is closed (its
 *               process died) the program answers all the same, with
 *               flags XW_F_GONE, csum = the probe's rsvd2 (the CRC32C the
 *               prober computed for that answer), rsvd2 and data 0.  A PROBE_REPLY
 *               is not checked against `conns` (it carries the prober's
 *               own session): the prober's library takes it only when
 *               session and nonce are its own.  A library that receives a
 *               PROBE itself (no program answered it) answers it when it
 *               knows the prober's session, with data = a count of the
 *               PROBEs it took (it polls).
 *
 * For every type payload_len must fit in the frame after the header
 * (trailing Ethernet padding beyond it is accepted) [X].
 */
struct xw_hdr {
	__u8 version;	    /* XW_VERSION                                 */
	__u8 type;	    /* enum xw_pkt_type                           */
	__u8 flags;	    /* XW_F_*                                     */
	__u8 rsvd0;	    /* 0                                          */
	__be16 dst_ep;	    /* destination endpoint id                    */
	__be16 src_ep;	    /* source endpoint id                         */
	__be32 session;	    /* connection session id (0: none yet)        */
	__be32 seq;	    /* per-connection sequence number             */
	__be32 ack;	    /* cumulative ack: next sequence expected     */
	__be32 msg_id;	    /* sender's message id                        */
	__be32 msg_len;	    /* total message length in bytes              */
	__be32 frag_off;    /* byte offset of this fragment's payload     */
	__be32 frag_idx;    /* fragment index                             */
	__be32 frag_count;  /* fragment count of the message              */
	__be16 payload_len; /* payload bytes following this header        */
	__be16 rsvd1;	    /* 0                                          */
	__be32 csum;	    /* CRC32C over header (csum = 0) and payload  */
	__be64 match;	    /* 64-bit match (tag) value                   */
	__be32 data;	    /* with XW_F_DATA: the message's data, else 0 */
	__be32 rsvd2;	    /* 0                                          */
};

#define XW_HDR_LEN 64

/*
 * ACK: match = bitmap of the frames the receiver holds out of order, bit
 * i = seq ack + 1 + i (64 frames); the payload, if any, extends it: up to
 * XW_SACK_EXT_WORDS 64-bit big-endian words, word w bit i = seq ack + 1 +
 * 64 * (w + 1) + i.  Library-level (the XDP program checks only that the
 * payload fits); a sender ignores the selective acks of an ACK whose
 * payload is not a whole number of words within that bound, or that names
 * a sequence number it never sent.
 */
#define XW_SACK_EXT_WORDS 15

XW_STATIC_ASSERT(sizeof(struct xw_hdr) == XW_HDR_LEN, "xw_hdr size");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, version) == 0, "xw_hdr.version");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, type) == 1, "xw_hdr.type");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, flags) == 2, "xw_hdr.flags");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, dst_ep) == 4, "xw_hdr.dst_ep");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, src_ep) == 6, "xw_hdr.src_ep");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, session) == 8, "xw_hdr.session");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, seq) == 12, "xw_hdr.seq");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, ack) == 16, "xw_hdr.ack");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, msg_id) == 20, "xw_hdr.msg_id");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, msg_len) == 24, "xw_hdr.msg_len");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, frag_off) == 28, "xw_hdr.frag_off");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, frag_idx) == 32, "xw_hdr.frag_idx");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, frag_count) == 36, "xw_hdr.frag_count");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, payload_len) == 40, "xw_hdr.payload_len");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, csum) == 44, "xw_hdr.csum");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, match) == 48, "xw_hdr.match");
XW_STATIC_ASSERT(XW_OFFSETOF(struct xw_hdr, data) == 56, "xw_hdr.data");

/* Payload of a PULL request (big-endian). */
struct xw_pull_req {
	__be32 block_id;  /* receiver's block id, echoed in replies */
	__be32 nfrags;	  /* fragments asked, starting at frag_idx  */
};
XW_STATIC_ASSERT(sizeof(struct xw_pull_req) == 8, "xw_pull_req size");

/* ------------------------------------------------------------------ */
/* Endpoints and policies                                              */
/* ------------------------------------------------------------------ */

/*
 * Endpoint ids 0 .. XW_MAX_ENDPOINTS-1 per interface (the wire carries 16
 * bits).  The XDP program's per-endpoint maps are arrays of this many
 * entries: a lookup costs the same at any size; their memory is in
 * README.md, "Memory per endpoint and per interface".
 */
#define XW_MAX_ENDPOINTS 1024

enum xw_policy {
	XW_POLICY_EVERY = 0,	/* wake on every frame                         */
	XW_POLICY_TIMEOUT = 1,	/* coalesce_frames or coalesce_usecs           */
	XW_POLICY_MARKER = 2,	/* LAT frame wakes now, others: timeout rule   */
	XW_POLICY_STREAM = 3,	/* LAT frame wakes when the stream pauses      */
	XW_POLICY_ADAPTIVE = 4, /* marker or stream from the arrival rate      */
	XW_POLICY_MAX = 5,
};

/* Knob defaults (written by the library when it creates the maps). */
#define XW_DEF_POLICY XW_POLICY_MARKER
#define XW_DEF_COALESCE_USECS 75
#define XW_DEF_COALESCE_FRAMES 32
#define XW_DEF_STREAM_GAP_USECS 0	/* 0: rely on the sender's MORE hint */
#define XW_DEF_LAT_MASK 0xFFFFFFFFu	/* honour LAT on every packet type  */
#define XW_DEF_ADAPT_ENTER_USECS 20	/* mean gap below this: stream        */
#define XW_DEF_ADAPT_EXIT_USECS 60	/* mean gap above this: marker        */
#define XW_DEF_WATCHDOG_USECS 0		/* 0: watchdog off                   */

/* Bits in struct xw_ep_entry.flags */
#define XW_EPF_ACTIVE 0x1u  /* endpoint registered: frames are accepted */
#define XW_EPF_TRACE 0x2u   /* also log non-wake decisions (NO_WAKEUP)  */
#define XW_EPF_CONNS 0x4u   /* per-peer sessions registered in `conns`  */

/* Value of the `endpoints` map (array, key = endpoint id). */
struct xw_ep_entry {
	__u32 flags;	/* XW_EPF_*                                    */
	__u32 queue_id; /* RX queue the endpoint's AF_XDP socket binds */
	__u32 owner_pid;
	__u32 rsvd;
};

/* Reasons carried by a wake record. */
enum xw_wake_reason {
	XW_WAKE_NONE = 0,
	XW_WAKE_EVERY = 1,     /* policy every                              */
	XW_WAKE_MARKER = 2,    /* a LAT frame                               */
	XW_WAKE_STREAM = 3,    /* end of a stream that held a deferred wake */
	XW_WAKE_FRAMES = 4,    /* coalesce_frames pending                   */
	XW_WAKE_TIMEOUT = 5,   /* coalesce_usecs after the first pending    */
	XW_WAKE_WATCHDOG = 6,  /* frames unconsumed past the watchdog period */
	XW_WAKE_REASON_MAX = 7,
};

/* ------------------------------------------------------------------ */
/* Knobs                                                               */
/* ------------------------------------------------------------------ */

/*
 * Every knob is its own pinned BPF array of __u32 so that one
 * `bpftool map update pinned <dir>/<knob> key <ep> 0 0 0 value <v> 0 0 0`
 * changes exactly one knob of one endpoint; the program reads it on the next
 * frame.  Per-interface knobs have a single entry (key 0).
 *
 * X(name, scope, default, min, max)
 */
#define XW_SCOPE_EP 0
#define XW_SCOPE_IFACE 1
#define XW_KNOBS(X)                                                              \
	X(policy, XW_SCOPE_EP, XW_DEF_POLICY, 0, XW_POLICY_MAX - 1)              \
	X(coalesce_usecs, XW_SCOPE_EP, XW_DEF_COALESCE_USECS, 0, 10000000)       \
	X(coalesce_frames, XW_SCOPE_EP, XW_DEF_COALESCE_FRAMES, 1, 1000000)      \
	X(stream_gap_usecs, XW_SCOPE_EP, XW_DEF_STREAM_GAP_USECS, 0, 10000000)   \
	X(lat_mask, XW_SCOPE_EP, XW_DEF_LAT_MASK, 0, 0xFFFFFFFFu)                \
	X(adapt_enter_usecs, XW_SCOPE_EP, XW_DEF_ADAPT_ENTER_USECS, 0, 10000000) \
	X(adapt_exit_usecs, XW_SCOPE_EP, XW_DEF_ADAPT_EXIT_USECS, 0, 10000000)   \
	X(session, XW_SCOPE_EP, 0, 0, 0xFFFFFFFFu)                               \
	X(watchdog_usecs, XW_SCOPE_EP, XW_DEF_WATCHDOG_USECS, 0, 10000000)       \
	X(encap, XW_SCOPE_IFACE, XW_ENCAP_ETH, 1, XW_ENCAP_ALL)                  \
	X(ethertype, XW_SCOPE_IFACE, XW_DEFAULT_ETHERTYPE, 0x0600, 0xFFFF)       \
	X(udp_port, XW_SCOPE_IFACE, XW_DEFAULT_UDP_PORT, 1, 0xFFFF)             \
	X(auto_detach, XW_SCOPE_IFACE, 0, 0, 1)

/* ------------------------------------------------------------------ */
/* Statistics (per-CPU array `stats`; key = endpoint id, or            */
/* XW_STATS_IFACE for frames not attributed to an endpoint).  Frames   */
/* seen = frames_passed + frames_ours (likewise bytes); foreign        */
/* traffic costs two counter updates.                                  */
/* ------------------------------------------------------------------ */

#define XW_STATS_IFACE XW_MAX_ENDPOINTS

/* X(name, description) */
#define XW_STATS(X)                                                          \
	X(frames_passed, "frames passed to the kernel (not ours)")           \
	X(bytes_passed, "bytes passed to the kernel (not ours)")             \
	X(frames_ours, "frames carrying our encapsulation")                  \
	X(bytes_ours, "bytes of frames carrying our encapsulation")          \
	X(frames_redirected, "frames redirected to an AF_XDP socket")        \
	X(bytes_redirected, "bytes redirected to an AF_XDP socket")          \
	X(lat_frames, "redirected frames with LAT honoured")                 \
	X(more_frames, "redirected frames with MORE")                        \
	X(drop_short, "drop: ours but shorter than the header")              \
	X(drop_version, "drop: unknown header version")                      \
	X(drop_length, "drop: a length or offset field lies")                \
	X(drop_frag, "drop: fragment index >= count, or count 0")            \
	X(drop_type, "drop: unknown packet type")                            \
	X(drop_endpoint, "drop: unknown or inactive endpoint")               \
	X(drop_session, "drop: wrong session")                               \
	X(drop_queue, "drop: frame arrived on another queue than the socket") \
	X(drop_nosocket, "drop: no AF_XDP socket registered")                \
	X(wake_every, "wakes: policy every")                                 \
	X(wake_marker, "wakes: LAT frame")                                   \
	X(wake_stream, "wakes: end of stream")                               \
	X(wake_frames, "wakes: coalesce_frames reached")                     \
	X(wake_timeout, "wakes: coalesce_usecs expired")                     \
	X(wake_watchdog, "wakes: watchdog")                                  \
	X(wake_unarmed, "wakes not sent: receiver not armed")                \
	X(wake_noring, "wakes not sent: no ring buffer registered")          \
	X(wake_ringfull, "wakes not sent: ring buffer full")                 \
	X(deferrals, "LAT wakes deferred by the stream rule")                \
	X(timer_starts, "coalescing timer (re)starts")                       \
	X(timer_fires, "coalescing timer expiries")                          \
	X(adapt_switches, "adaptive policy mode switches")                   \
	X(pass_other_host, "passed: ours, but addressed to another host's MAC") \
	X(probes_answered, "PROBEs answered (XDP_TX): the endpoint's socket is open") \
	X(probes_gone, "PROBEs answered (XDP_TX): the endpoint is closed or its process died")

/* One __u64 per counter, in XW_STATS order: the fields of struct xw_stats
 * (xdpwake.h, what applications read) and of the BPF map's value (the
 * library's internal struct xw_map_stats, without sz). */
#define XW__STATS_FIELD(name, desc) __u64 name;

#define XW__STATS_COUNT(name, desc) +1
#define XW_STATS_NR (0 XW_STATS(XW__STATS_COUNT))

#endif /* XDPWAKE_PROTO_H */
