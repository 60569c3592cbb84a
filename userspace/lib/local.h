/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * local.h - the path between endpoints on the same host and interface: a
 * shared-memory inbox per endpoint with one single-producer ring per
 * sending endpoint id, and the wake decision of the XDP program (xw_local)
 * run for a sleeping receiver.  See local.c.
 */
#ifndef XWI_LOCAL_H
#define XWI_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "xdpwake.h"

struct xw_iface;
struct xwi_encap;

/* Where the frames taken from an inbox go (the endpoint's engine, through
 * xwi_engine_rx_local): -ENOBUFS leaves the record in the ring, taken
 * again later (back-pressure: the ring's sender waits).  @done: a local
 * peer @src read our large message @msg_id of session @session
 * (xwi_local_done; xwi_engine_cma_done). */
struct xwi_local_sink {
	int (*deliver)(void *ctx, const struct xw_addr *src, const struct xw_hdr *h,
		       const void *payload, size_t len);
	void (*done)(void *ctx, const struct xw_addr *src, __u32 msg_id, __u32 session);
	void *ctx;
};

/* Bytes of each sender's ring in an inbox (a power of two); holds 64
 * frames of 4 KiB: more than a sender's transmit backlog needs to keep the
 * receiver busy.  The file is sparse: slots never written cost nothing. */
#define XWI_LOCAL_RING_BYTES (256u * 1024u)

/*
 * The inbox file (shared with the senders; the tests plant records in it):
 * a header page, then one control block per sender (producer and consumer
 * positions on their own cache lines), then the rings, slot = sender id.
 * Positions count bytes from 0 and only grow; a record is a struct
 * xwi_local_rec and the frame (xw_hdr + payload) padded to 8 bytes, never
 * split at the ring's end (a pad record skips to it).  The producer writes
 * the record, stores prod (release), then reads its slot's `polled`: set,
 * the owner looks at this ring's prod itself (a few senders, see
 * XWI_LOCAL_POLLED); clear, the producer sets its bit in `pending`.
 */
#define XWI_LOCAL_MAGIC 0x584c4231u /* "XLB1" */
#define XWI_LOCAL_VERSION 4u
#define XWI_LOCAL_PAD 0xFFFFFFFFu  /* record length of a pad record */
#define XWI_LOCAL_MAX_FRAME 16384u /* largest frame in a record (sanity) */

#define XWI_LOCAL_PENDING_WORDS (XW_MAX_ENDPOINTS / 64)
XW_STATIC_ASSERT(XWI_LOCAL_PENDING_WORDS <= 64 && XW_MAX_ENDPOINTS % 64 == 0,
		 "pending_words has a bit per word of pending");

struct xwi_local_hdr {
	__u32 magic;
	__u32 version;
	__u64 generation;  /* 1 + the replaced file's, at every open of the id */
	__u32 owner_pid;
	__u32 closed;	   /* set by the owner at close, or by its successor */
	__u32 ring_bytes;
	__u32 nslots;
	/* The owner's incarnation in its own memory, for xwi_local_read: a
	 * random nonzero value at read_nonce_addr, a private page of the
	 * owner's that a fork's child sees zeroed (MADV_WIPEONFORK); 0 if it
	 * has none (its buffers are pulled, not read). */
	__u64 read_nonce;
	__u64 read_nonce_addr;
	__u8 pad0[64 - 48];
	/* Senders that published records (a hint): bit i % 64 of word i / 64
	 * for sender i; bit w of pending_words: word w may have bits.  The
	 * sender sets its bit, then the word's (if not set); the owner takes
	 * pending_words, then each word it names (seq_cst exchanges). */
	__u64 pending_words;
	__u64 pending[XWI_LOCAL_PENDING_WORDS];
	__u8 pad1[4096 - 72 - 8 * XWI_LOCAL_PENDING_WORDS];
};
XW_STATIC_ASSERT(sizeof(struct xwi_local_hdr) == 4096, "the inbox header is one page");

/* A large message of the owner's that the ring's sender read from the
 * owner's buffer (xwi_local_done): its id and the session of the owner's
 * RNDV, the encapsulation the sender's frames have (the owner's peer). */
struct xwi_local_mark {
	__u32 msg_id;
	__u32 session;
	__u8 encap;
	__u8 rsvd;
	__be16 port;
	__u32 rsvd2;
};

#define XWI_LOCAL_DONE_SLOTS 32u /* marks a sender may leave unread */

struct xwi_local_slot {
	__u64 prod;	/* written by the sender only */
	__u8 pad0[56];
	__u64 cons;	/* written by the owner only  */
	/* Written by the owner only: 1 once it polls this ring's prod, as long
	 * as the inbox lives (never cleared: a sender that reads it set needs
	 * no pending bit; one that reads it clear, stale or not, sets the bit,
	 * which is never wrong). */
	__u32 polled;
	__u8 pad1[52];
	__u64 done_prod; /* marks: written by the sender only */
	__u8 pad2[56];
	__u64 done_cons; /* marks taken: by the owner only */
	__u8 pad3[56];
	struct xwi_local_mark done[XWI_LOCAL_DONE_SLOTS];
};
XW_STATIC_ASSERT(offsetof(struct xwi_local_slot, done_prod) == 128 &&
			 sizeof(struct xwi_local_slot) % 64 == 0,
		 "prod, then cons and polled, then the marks: each on its own lines");

/* Senders whose rings the owner polls directly (like vader's fast boxes):
 * the first that send to it; the others set pending bits. */
#define XWI_LOCAL_POLLED 4

struct xwi_local_rec {
	__u32 len;	/* frame bytes (header + payload), or XWI_LOCAL_PAD */
	__u8 encap;	/* the sender's XW_ENCAP_*                          */
	__u8 rsvd;
	__be16 port;	/* UDP: the sender's source port                    */
};

/* Sender @id published records in the inbox @h: its bit, then its word's
 * bit, which the owner takes first - a word bit the sender finds set is
 * taken after its own bit is set. */
static inline void xwi_local_pending_set(struct xwi_local_hdr *h, __u16 id)
{
	__u64 wbit = 1ULL << (id / 64);

	__atomic_fetch_or(&h->pending[id / 64], 1ULL << (id % 64), __ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(&h->pending_words, __ATOMIC_SEQ_CST) & wbit))
		__atomic_fetch_or(&h->pending_words, wbit, __ATOMIC_SEQ_CST);
}

#define XWI_LOCAL_SLOTS_OFF sizeof(struct xwi_local_hdr)
#define XWI_LOCAL_RINGS_OFF \
	(XWI_LOCAL_SLOTS_OFF + XW_MAX_ENDPOINTS * sizeof(struct xwi_local_slot))
#define XWI_LOCAL_FILE_BYTES \
	(XWI_LOCAL_RINGS_OFF + (size_t)XW_MAX_ENDPOINTS * XWI_LOCAL_RING_BYTES)

struct xwi_local_stats {
	__u64 tx;	/* frames written into a local peer's inbox            */
	__u64 rx;	/* frames taken from our inbox and handed to the engine */
	__u64 lost;	/* frames for a local peer whose inbox is closed or
			 * missing, or whose owner is dead with its ring full */
	__u64 rx_bad;	/* records of our inbox dropped: bad length or layout  */
	__u64 wake_runs; /* xw_local runs: the receiver was asleep            */
	__u64 full;	/* sends refused for a full ring (-EAGAIN: they wait) */
	__u64 rx_held;	/* records the sink refused (-ENOBUFS): left there    */
	__u64 marks;	/* marks left in a local peer's inbox (xwi_local_done) */
	__u64 marks_full; /* marks not left: that peer's marks were full     */
	__u64 rx_marks;	/* marks taken from our inbox                          */
	__u64 tx_polled; /* frames sent to a receiver polling our ring (no
			  * pending bit set)                                  */
};

/* One endpoint's side of the local path. */
struct xwi_local;

/*
 * Create (or take over) the inbox of endpoint @id on @ifc: a new file
 * replaces one of an earlier incarnation, which is marked closed first.
 * @mac, @ip: the interface's addresses (the source of local frames);
 * @sink: where xwi_local_rx() hands the frames taken (copied).
 */
int xwi_local_open(struct xw_iface *ifc, __u16 id, const __u8 mac[6], __be32 ip,
		   const struct xwi_local_sink *sink, struct xwi_local **out);
/* Mark the inbox closed, remove it, unmap the peers' inboxes. */
void xwi_local_close(struct xwi_local *l);

/* Whether @dst is an endpoint on this host and interface. */
bool xwi_local_is_local(const struct xwi_local *l, const struct xw_addr *dst);
/* Is the local endpoint @id alive (its inbox open, its owner process
 * there - running or stopped)?  1 yes; 0 no, for certain (its inbox
 * closed or removed, or its owner process gone); -errno: cannot tell (its
 * inbox could not be opened; -EINVAL: no local peer @id). */
int xwi_local_alive(struct xwi_local *l, __u16 id);
/* Does the inbox of local endpoint @id hold records of ours its owner has
 * not taken yet (our ring's prod ahead of its cons)?  1 or 0. */
int xwi_local_unread(struct xwi_local *l, __u16 id);

/*
 * Read @len bytes at @addr in the process of local endpoint @id (its
 * inbox's owner) into @buf: one copy, process_vm_readv (Linux cross-memory
 * attach), one system call: the same call reads the owner's read_nonce
 * from its memory first, so the data came from the inbox's owner (a pid
 * reused after its death, or a fork's child, holds no such nonce there).
 * 0, or -errno: -EPERM where it is not permitted (Yama ptrace_scope,
 * another user; also when xwi_local_set_cma() turned it off, or the owner
 * has no nonce), -ESRCH the process or its inbox is gone (or the pid is
 * another's now), -EFAULT the range is not mapped there.
 */
int xwi_local_read(struct xwi_local *l, __u16 id, __u64 addr, void *buf, size_t len);
/* Test hook: with @on false every xwi_local_read() fails with -EPERM (the
 * fallback of a system that does not permit it). */
void xwi_local_set_cma(struct xwi_local *l, bool on);

/*
 * Write one frame (header @h as the engine hands it, payload) into @dst's
 * inbox, then wake it through xw_local if it sleeps.  0: written, or lost
 * and counted (a closed or missing inbox: as for a dead remote peer);
 * -EAGAIN: the ring is full (counted in `full`; the frame waits in the
 * engine's queue and goes when there is room: back-pressure, never a
 * loss).  Caller holds the sending endpoint's port lock (one producer per
 * ring).
 */
int xwi_local_send(struct xwi_local *l, const struct xw_addr *dst, const struct xwi_encap *enc,
		   const struct xw_hdr *h, const void *payload, size_t len);

/*
 * Tell local endpoint @dst that we read its large message @msg_id (its RNDV
 * had session @session) from its buffer: a mark in its inbox, beside our
 * ring, instead of a NOTIFY frame (no frame through either engine's
 * connection and message layers).  0: marked, and the owner does not
 * sleep (it takes the mark at its next pass through xwi_local_rx);
 * -EAGAIN: the owner sleeps armed for a wake (not counting its watchdog
 * thread: see owner_waits), or its marks are full: the caller sends the
 * NOTIFY frame, which wakes it (a mark may have been left too: the owner ignores the
 * second of the two); -ESRCH: no inbox (lost, as a frame would be).
 * Caller holds the port lock (one producer per ring).
 */
int xwi_local_done(struct xwi_local *l, const struct xw_addr *dst, const struct xwi_encap *enc,
		   __u32 msg_id, __u32 session);

/* Take up to @budget records from our inbox, each to the sink given at
 * open (a record it refuses stays, with those after it from that sender),
 * and every mark (sink.done); returns the number of records taken.
 * Caller holds the endpoint's port lock. */
int xwi_local_rx(struct xwi_local *l, int budget);

/* Whether records wait in our inbox; without the port lock, writes
 * nothing. */
bool xwi_local_ready(const struct xwi_local *l);

void xwi_local_stats(const struct xwi_local *l, struct xwi_local_stats *st);

/* Where the inboxes and claim files are. */
#define XWI_LOCAL_DIR "/dev/shm"

/* The inbox file of endpoint @id on interface @ifindex in this network
 * namespace ("/dev/shm/xdpwake-<netns inode>-<ifindex>-<id>"). */
int xwi_local_path(char *buf, size_t len, int ifindex, __u16 id);
/* Claim endpoint id @id of interface @ifindex on this host (network
 * namespace) for this process, atomically: an exclusive flock on the
 * inbox path + ".lock", held while the returned fd stays open and released
 * by the kernel when the process dies.  -EBUSY: another process holds the
 * id; another -errno: no lock file (the caller has only the registry's
 * check).  xwi_local_unclaim() releases it. */
int xwi_local_claim(int ifindex, __u16 id);
void xwi_local_unclaim(int fd, int ifindex, __u16 id);
/* Whether another process holds the claim of @id (nothing is created). */
bool xwi_local_claimed(int ifindex, __u16 id);
/* Claim queue @queue of interface @ifindex for this process's port before
 * it registers a UMEM and binds (an exclusive flock on
 * "/dev/shm/xdpwake-<netns>-<ifindex>-q<queue>.lock", held while the port
 * lives): openers starting together skip a queue another one is taking
 * without the cost of a UMEM registration and a failed bind.  The fd,
 * -EBUSY (another process holds it) or -errno (no lock file: the caller
 * binds unclaimed).  xwi_queue_unclaim() releases it. */
int xwi_queue_claim(int ifindex, __u32 queue);
void xwi_queue_unclaim(int fd, int ifindex, __u32 queue);
/* Remove the files of endpoint ids whose claim nobody holds (dead or
 * closed): inbox, lock file, half-created inbox; with @queues also the
 * queue lock files nobody holds; of interface @ifindex in this network
 * namespace, or with 0 of every interface and namespace.  @removed (may
 * be NULL) gets each path removed.  Files removed, or -errno.  (claim.c,
 * as the ones above.) */
int xwi_local_clean(int ifindex, bool queues, void (*removed)(const char *path, void *ctx),
		    void *ctx);

#endif
