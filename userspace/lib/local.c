// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Endpoints on the same host and interface talk through shared memory: a
 * frame to such a peer never leaves the host (a frame sent out of an
 * interface does not come back in).  Each endpoint owns an inbox, a file in
 * /dev/shm named after the network namespace, the interface and the
 * endpoint id, with one single-producer/single-consumer byte ring per
 * sending endpoint id (ids are unique per interface across processes).
 * Frames go in exactly as the engine hands them to its transmit callback
 * (header + payload): the connection layer, the message layer and matching
 * run above.  The ring cannot lose, reorder or corrupt a frame, so the
 * engine treats a local peer as lossless (xwi_engine_ops.lossless, docs/
 * PROTOCOL.md "Local peers"): no CRC32C, nothing kept for retransmission,
 * no timers; a full ring is back-pressure (-EAGAIN: the frame waits in the
 * sender's queue), a record the receiving engine refuses stays in the ring
 * (the sender then waits).  Large messages are read once, straight from
 * the sender's buffer (xwi_local_read: process_vm_readv).
 *
 * Waking: the sender publishes the record, increments the receiver's
 * `produced` in the `shared` map (atomic, a full barrier), then reads its
 * `armed` flag; only if the receiver sleeps does it run the XDP program's
 * wake decision (xw_local, BPF_PROG_TEST_RUN) for the frame: same policy,
 * marks, deferral and wake ring as a frame from the NIC.  The receiver
 * stores armed, fences, then rereads `produced` (and looks at its inbox),
 * so either the sender sees armed or the receiver sees the frame: the
 * hand-over of DESIGN.md, with the record visible before the count.
 *
 * Marks: a large message read from its sender's buffer (xwi_local_read)
 * is answered with a mark in the sender's inbox, beside the reader's ring
 * (xwi_local_done: the message's id and session, a small ring of its own
 * per slot), not with a NOTIFY frame: the sender's xwi_local_rx hands it to
 * the engine (sink.done), whose send completes.  The reader sets its
 * pending bit after the mark, then looks at the sender's armed flags: a
 * sender that sleeps (or whose marks are full) gets the NOTIFY frame as
 * well, which wakes it; the second of the two finds no send and is
 * ignored.
 *
 * Incarnations: an endpoint's open creates a new file and renames it over
 * the old one, which it marks closed first (its owner may have died
 * without closing).  A sender maps a peer's inbox lazily, keeps it per
 * destination id and checks `closed` on every send; a closed or missing
 * inbox loses the frame (counted), like a dead remote peer, and the
 * connection layer's timers deal with it.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <bpf/bpf.h>

#include "internal.h"
#include "local.h"
#include "port.h"

struct local_dst {
	void *map;		/* the peer's inbox, or NULL */
	struct xwi_local_hdr *hdr;
	__u64 generation;
	/* Of our slot in that inbox, as last read: its cons (never ahead of
	 * the owner's: reread only when the ring looks full, so a send does
	 * not fetch the line the owner writes at every record) and whether
	 * the owner polls our ring (set once, never cleared in an inbox). */
	__u64 cons;
	bool polled;
	/* Our slot's prod, ours alone to write: read once from the inbox
	 * (it continues an earlier incarnation's), then kept here, so a send
	 * reads no line the owner polls (a read after the owner's could find
	 * it moved to the owner's cache). */
	__u64 prod;
	bool prod_known;
};

struct xwi_local {
	struct xw_iface *ifc;
	__u16 id;
	__u8 mac[6];
	__be32 ip;
	char path[128];
	void *map;		/* our inbox */
	struct xwi_local_hdr *hdr;
	__u64 *nonce;		/* hdr->read_nonce in our memory (a page), or NULL */
	struct local_dst dst[XW_MAX_ENDPOINTS];
	struct xwi_local_stats st;
	struct xwi_local_sink sink; /* where received frames go (the endpoint's) */
	bool cma_off;		/* test hook: xwi_local_read says -EPERM */
	/* The senders whose rings we poll (their slots' `polled` set), in the
	 * order they came; read without the port lock by xwi_local_ready. */
	__u16 polled[XWI_LOCAL_POLLED];
	unsigned int npolled;
};

static inline __u32 rec_bytes(__u32 frame_len)
{
	return (__u32)((sizeof(struct xwi_local_rec) + frame_len + 7) & ~7ul);
}

static inline struct xwi_local_slot *slot_of(void *map, __u16 sender)
{
	return (struct xwi_local_slot *)((char *)map + XWI_LOCAL_SLOTS_OFF) + sender;
}

static inline __u8 *ring_of(void *map, __u16 sender)
{
	return (__u8 *)map + XWI_LOCAL_RINGS_OFF + (size_t)sender * XWI_LOCAL_RING_BYTES;
}

static void *map_file(int fd)
{
	void *m = mmap(NULL, XWI_LOCAL_FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return m == MAP_FAILED ? NULL : m;
}

static bool hdr_valid(const struct xwi_local_hdr *h)
{
	return h->magic == XWI_LOCAL_MAGIC && h->version == XWI_LOCAL_VERSION &&
	       h->ring_bytes == XWI_LOCAL_RING_BYTES && h->nslots == XW_MAX_ENDPOINTS;
}

/* Map an existing inbox at @path; NULL if missing or not an inbox. */
static void *map_existing(const char *path)
{
	struct stat st;
	void *m;
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size != XWI_LOCAL_FILE_BYTES) {
		close(fd);
		return NULL;
	}
	m = map_file(fd);
	close(fd);
	if (m && !hdr_valid(m)) {
		munmap(m, XWI_LOCAL_FILE_BYTES);
		m = NULL;
	}
	return m;
}

/*
 * Our incarnation for readers of our buffers (xwi_local_read): a random
 * nonzero value on a page of our own that a fork's child sees zeroed, its
 * address and value in the inbox header.  Without one (no page, no
 * MADV_WIPEONFORK: before Linux 4.14, no random bytes) readers pull.
 */
static void nonce_init(struct xwi_local *l)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	__u64 v = 0;
	void *p;

	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	if (madvise(p, pg, MADV_WIPEONFORK) ||
	    getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v) || !v) {
		munmap(p, pg);
		return;
	}
	l->nonce = p;
	*l->nonce = v;
	l->hdr->read_nonce = v;
	l->hdr->read_nonce_addr = (__u64)(uintptr_t)p;
}

int xwi_local_open(struct xw_iface *ifc, __u16 id, const __u8 mac[6], __be32 ip,
		   const struct xwi_local_sink *sink, struct xwi_local **out)
{
	struct xwi_local *l;
	__u64 gen = 0;
	char tmp[160];
	void *old;
	int fd, err;

	*out = NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->ifc = ifc;
	l->id = id;
	memcpy(l->mac, mac, 6);
	l->ip = ip;
	l->sink = *sink;
	err = xwi_local_path(l->path, sizeof(l->path), xw_iface__ifindex(ifc), id);
	if (err)
		goto fail;
	/* An earlier incarnation's inbox: closed, so its senders come to
	 * ours; its generation continues. */
	old = map_existing(l->path);
	if (old) {
		struct xwi_local_hdr *oh = old;

		gen = __atomic_load_n(&oh->generation, __ATOMIC_RELAXED);
		__atomic_store_n(&oh->closed, 1, __ATOMIC_SEQ_CST);
		munmap(old, XWI_LOCAL_FILE_BYTES);
	}
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", l->path, (int)getpid());
	unlink(tmp);
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		xwi_err("cannot create the local inbox %s: %s", tmp, strerror(errno));
		goto fail;
	}
	if (ftruncate(fd, (off_t)XWI_LOCAL_FILE_BYTES)) {
		err = -errno;
		close(fd);
		unlink(tmp);
		goto fail;
	}
	l->map = map_file(fd);
	close(fd);
	if (!l->map) {
		err = -errno;
		unlink(tmp);
		goto fail;
	}
	l->hdr = l->map;
	l->hdr->version = XWI_LOCAL_VERSION;
	l->hdr->generation = gen + 1;
	l->hdr->owner_pid = (__u32)getpid();
	l->hdr->ring_bytes = XWI_LOCAL_RING_BYTES;
	l->hdr->nslots = XW_MAX_ENDPOINTS;
	nonce_init(l);
	__atomic_store_n(&l->hdr->magic, XWI_LOCAL_MAGIC, __ATOMIC_RELEASE);
	if (rename(tmp, l->path)) {
		err = -errno;
		xwi_err("cannot install the local inbox %s: %s", l->path, strerror(errno));
		unlink(tmp);
		goto fail;
	}
	*out = l;
	return 0;
fail:
	if (l->map)
		munmap(l->map, XWI_LOCAL_FILE_BYTES);
	if (l->nonce)
		munmap(l->nonce, (size_t)sysconf(_SC_PAGESIZE));
	free(l);
	return err;
}

static void dst_drop(struct local_dst *d)
{
	if (d->map)
		munmap(d->map, XWI_LOCAL_FILE_BYTES);
	d->map = NULL;
	d->hdr = NULL;
	d->cons = 0;
	d->polled = false;
	d->prod = 0;
	d->prod_known = false;
}

void xwi_local_close(struct xwi_local *l)
{
	struct xwi_local_hdr *cur;

	if (!l)
		return;
	for (int i = 0; i < XW_MAX_ENDPOINTS; i++)
		dst_drop(&l->dst[i]);
	if (l->map) {
		__atomic_store_n(&l->hdr->closed, 1, __ATOMIC_SEQ_CST);
		/* Remove the name only if it is still ours (a successor may
		 * have replaced it already). */
		cur = map_existing(l->path);
		if (cur) {
			if (cur->generation == l->hdr->generation &&
			    cur->owner_pid == l->hdr->owner_pid)
				unlink(l->path);
			munmap(cur, XWI_LOCAL_FILE_BYTES);
		}
		munmap(l->map, XWI_LOCAL_FILE_BYTES);
	}
	if (l->nonce)
		munmap(l->nonce, (size_t)sysconf(_SC_PAGESIZE));
	free(l);
}

bool xwi_local_is_local(const struct xwi_local *l, const struct xw_addr *dst)
{
	if (!l)
		return false;
	if (dst->encap == XW_ENCAP_UDP)
		return l->ip && dst->ip == l->ip;
	return !memcmp(dst->mac, l->mac, 6);
}

/* The inbox of @id, mapped and open; NULL if there is none to write to. */
static struct local_dst *dst_get(struct xwi_local *l, __u16 id)
{
	struct local_dst *d = &l->dst[id];
	char path[128];

	if (d->map && !__atomic_load_n(&d->hdr->closed, __ATOMIC_ACQUIRE))
		return d;
	/* Not mapped yet, or closed: its successor's, if there is one. */
	dst_drop(d);
	if (xwi_local_path(path, sizeof(path), xw_iface__ifindex(l->ifc), id))
		return NULL;
	d->map = map_existing(path);
	if (!d->map)
		return NULL;
	d->hdr = d->map;
	if (__atomic_load_n(&d->hdr->closed, __ATOMIC_ACQUIRE)) {
		dst_drop(d);
		return NULL;
	}
	if (d->hdr->generation != d->generation)
		xwi_dbg("endpoint %u: local peer %u, inbox generation %llu", l->id, id,
			(unsigned long long)d->hdr->generation);
	d->generation = d->hdr->generation;
	return d;
}

static bool owner_dead(const struct xwi_local_hdr *h)
{
	pid_t pid = (pid_t)h->owner_pid;

	return pid > 0 && kill(pid, 0) && errno == ESRCH;
}

int xwi_local_alive(struct xwi_local *l, __u16 id)
{
	struct local_dst *d;

	if (!l || id >= XW_MAX_ENDPOINTS)
		return -EINVAL; /* no evidence either way */
	errno = 0;
	d = dst_get(l, id);
	if (!d) /* closed (its flag), removed (ENOENT) or not an inbox: gone */
		return errno && errno != ENOENT ? -errno : 0;
	return owner_dead(d->hdr) ? 0 : 1;
}

int xwi_local_unread(struct xwi_local *l, __u16 id)
{
	struct xwi_local_slot *s;
	struct local_dst *d;

	if (!l || id >= XW_MAX_ENDPOINTS)
		return 0;
	d = dst_get(l, id);
	if (!d)
		return 0;
	s = slot_of(d->map, l->id);
	return __atomic_load_n(&s->cons, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&s->prod, __ATOMIC_RELAXED) ? 1 : 0;
}

void xwi_local_set_cma(struct xwi_local *l, bool on)
{
	if (l)
		l->cma_off = !on;
}

int xwi_local_read(struct xwi_local *l, __u16 id, __u64 addr, void *buf, size_t len)
{
	struct local_dst *d;
	__u64 want, at;
	__u8 *to = buf;
	pid_t pid;

	if (!l || id >= XW_MAX_ENDPOINTS)
		return -EINVAL;
	if (l->cma_off)
		return -EPERM;
	d = dst_get(l, id);
	if (!d)
		return -ESRCH;
	pid = (pid_t)d->hdr->owner_pid;
	want = d->hdr->read_nonce;
	at = d->hdr->read_nonce_addr;
	if (!want)
		return -EPERM;
	while (len) {
		/* The owner's nonce, then the data, in one call: one process
		 * and address space for both (the kernel takes the task and
		 * its mm once per call), so data read after a matching nonce
		 * is the owner's - whoever holds its pid now, whenever it
		 * died.  A reused pid's process has no such page; a child
		 * the owner forked has it zeroed. */
		__u64 seen = 0;
		struct iovec li[2] = { { .iov_base = &seen, .iov_len = sizeof(seen) },
				       { .iov_base = to, .iov_len = len } };
		struct iovec ri[2] = { { .iov_base = (void *)(uintptr_t)at, .iov_len = sizeof(seen) },
				       { .iov_base = (void *)(uintptr_t)addr, .iov_len = len } };
		ssize_t n = process_vm_readv(pid, li, 2, ri, 2, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) /* EFAULT: not even the nonce's page is there */
			return errno == EFAULT ? -ESRCH : -errno;
		if (n < (ssize_t)sizeof(seen) || seen != want)
			return -ESRCH;
		n -= (ssize_t)sizeof(seen);
		if (!n)
			return -EFAULT;
		to += n;
		addr += (__u64)n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Does a frame for the owner of @sh need the wake program: a thread of it
 * armed, or only its watchdog thread armed with the watchdog timer
 * stopped?  With the timer running the timer looks at the frame when it
 * fires (it stops only with every frame counted consumed; it clears
 * wd_due, fences, then reads `produced`), and wakes the thread for it at
 * its next round if it is still there - within two periods instead of one
 * - so the program run, a system call per frame (2 us of a 7.5 us round
 * trip here), is saved.
 */
static bool owner_sleeps(struct xw_shared *sh)
{
	return __atomic_load_n(&sh->armed, __ATOMIC_SEQ_CST) ||
	       (__atomic_load_n(&sh->wd_armed, __ATOMIC_SEQ_CST) &&
		!__atomic_load_n(&sh->wd_due, __ATOMIC_SEQ_CST));
}

/*
 * Does the owner of @sh sleep, armed for a wake (a thread in a blocking
 * wait, or its progress thread)?  Its watchdog thread does not count: a
 * mark needs no answer, and the send it completes is seen at the owner's
 * next call into the library (a CQ or request read runs the pass), where
 * the watchdog would only take it earlier - and the watchdog (1 ms, the
 * provider's default) sleeps armed most of the time.
 */
static bool owner_waits(struct xw_shared *sh)
{
	return __atomic_load_n(&sh->armed, __ATOMIC_SEQ_CST);
}

/* The wake decision for the frame, if the receiver sleeps (see top). */
static void wake_check(struct xwi_local *l, __u16 dst, const struct xw_hdr *h, __u64 produced,
		       struct xw_shared *sh)
{
	struct xw_local_in in = { .ep = dst, .type = h->type, .flags = h->flags,
				  .produced = produced };

	if (l->ifc->local_fd < 0 || !owner_sleeps(sh))
		return;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &in, .data_size_in = sizeof(in),
		    .repeat = 1);
	if (bpf_prog_test_run_opts(l->ifc->local_fd, &o) == 0)
		l->st.wake_runs++;
}

int xwi_local_send(struct xwi_local *l, const struct xw_addr *dst, const struct xwi_encap *enc,
		   const struct xw_hdr *h, const void *payload, size_t len)
{
	struct xwi_local_rec rec = { .encap = (__u8)enc->encap };
	struct xwi_local_slot *s;
	struct local_dst *d;
	struct xw_shared *sh;
	__u64 prod, cons, produced;
	__u32 off, need, pad = 0;
	__u8 *ring;

	if (len > XWI_LOCAL_MAX_FRAME - XW_HDR_LEN)
		return -EMSGSIZE;
	if (dst->ep >= XW_MAX_ENDPOINTS)
		return -ERANGE;
	sh = xwi_iface_shared(l->ifc, dst->ep);
	d = dst_get(l, dst->ep);
	if (!d || !sh) {
		l->st.lost++;
		return 0;
	}
	s = slot_of(d->map, l->id);
	ring = ring_of(d->map, l->id);
	rec.len = (__u32)(XW_HDR_LEN + len);
	if (enc->encap == XW_ENCAP_UDP)
		rec.port = htons(enc->udp_port);
	need = rec_bytes(rec.len);
	/* One producer (us, under our port lock): prod is ours. */
	if (!d->prod_known) {
		d->prod = __atomic_load_n(&s->prod, __ATOMIC_RELAXED);
		d->prod_known = true;
	}
	prod = d->prod;
	off = (__u32)(prod & (XWI_LOCAL_RING_BYTES - 1));
	if (off + need > XWI_LOCAL_RING_BYTES)
		pad = XWI_LOCAL_RING_BYTES - off;
	/* The cons we saw last, if that leaves room; else the owner's. */
	cons = d->cons;
	if (prod - cons > XWI_LOCAL_RING_BYTES ||
	    XWI_LOCAL_RING_BYTES - (prod - cons) < (__u64)pad + need)
		d->cons = cons = __atomic_load_n(&s->cons, __ATOMIC_ACQUIRE);
	if (prod - cons > XWI_LOCAL_RING_BYTES ||
	    XWI_LOCAL_RING_BYTES - (prod - cons) < (__u64)pad + need) {
		/* Full: the receiver is slow - or dead, with nobody to close
		 * its inbox: then the frame is lost, as to a dead peer. */
		if (owner_dead(d->hdr)) {
			l->st.lost++;
			return 0;
		}
		l->st.full++;
		return -EAGAIN;
	}
	if (pad) {
		struct xwi_local_rec p = { .len = XWI_LOCAL_PAD };

		memcpy(ring + off, &p, sizeof(p));
		prod += pad;
		off = 0;
	}
	memcpy(ring + off, &rec, sizeof(rec));
	memcpy(ring + off + sizeof(rec), h, XW_HDR_LEN);
	if (len)
		memcpy(ring + off + sizeof(rec) + XW_HDR_LEN, payload, len);
	/* Publish, then: does the owner poll our ring, or does it need the
	 * pending bit (local.h)?  Polled, the owner reads no line for the
	 * record but prod's and the record's, and we write no other: the
	 * pending bit's read-modify-write on a line the owner polls is saved. */
	d->prod = prod + need;
	__atomic_store_n(&s->prod, d->prod, __ATOMIC_RELEASE);
	if (d->polled || (d->polled = __atomic_load_n(&s->polled, __ATOMIC_ACQUIRE)))
		l->st.tx_polled++;
	else
		xwi_local_pending_set(d->hdr, l->id);
	l->st.tx++;
	/* Count it, then look at armed (the hand-over; see top). */
	produced = __atomic_add_fetch(&sh->produced, 1, __ATOMIC_SEQ_CST);
	wake_check(l, dst->ep, h, produced, sh);
	return 0;
}

/* The address of local endpoint @ep whose frames have @encap (and @port). */
static void src_of(const struct xwi_local *l, struct xw_addr *src, __u16 ep, __u8 encap,
		   __be16 port)
{
	memset(src, 0, sizeof(*src));
	src->encap = encap;
	src->ep = ep;
	memcpy(src->mac, l->mac, 6);
	if (encap == XW_ENCAP_UDP) {
		src->ip = l->ip;
		src->port = port;
	}
}

int xwi_local_done(struct xwi_local *l, const struct xw_addr *dst, const struct xwi_encap *enc,
		   __u32 msg_id, __u32 session)
{
	struct xwi_local_mark *mk;
	struct xwi_local_slot *s;
	struct local_dst *d;
	struct xw_shared *sh;
	__u64 prod;

	if (!l || dst->ep >= XW_MAX_ENDPOINTS)
		return -EINVAL;
	sh = xwi_iface_shared(l->ifc, dst->ep);
	d = dst_get(l, dst->ep);
	if (!d || !sh)
		return -ESRCH;
	if (owner_waits(sh))
		return -EAGAIN;
	s = slot_of(d->map, l->id);
	/* One producer (us, under our port lock): done_prod is ours. */
	prod = __atomic_load_n(&s->done_prod, __ATOMIC_RELAXED);
	if (prod - __atomic_load_n(&s->done_cons, __ATOMIC_ACQUIRE) >= XWI_LOCAL_DONE_SLOTS) {
		l->st.marks_full++;
		return -EAGAIN;
	}
	mk = &s->done[prod % XWI_LOCAL_DONE_SLOTS];
	mk->msg_id = msg_id;
	mk->session = session;
	mk->encap = (__u8)enc->encap;
	mk->port = enc->encap == XW_ENCAP_UDP ? htons(enc->udp_port) : 0;
	__atomic_store_n(&s->done_prod, prod + 1, __ATOMIC_RELEASE);
	xwi_local_pending_set(d->hdr, l->id);
	l->st.marks++;
	/* Our pending bit, then its armed flags (seq_cst both): it sees the
	 * bit when it rechecks after arming (xwi_ep_rx_ready), or we see it
	 * armed here and the NOTIFY frame wakes it. */
	return owner_waits(sh) ? -EAGAIN : 0;
}

/* Take the marks sender @from left in our inbox (xwi_local_done). */
static void rx_marks(struct xwi_local *l, __u16 from)
{
	struct xwi_local_slot *s = slot_of(l->map, from);
	__u64 cons = __atomic_load_n(&s->done_cons, __ATOMIC_RELAXED);
	__u64 prod = __atomic_load_n(&s->done_prod, __ATOMIC_ACQUIRE);
	struct xw_addr src;

	if (prod - cons > XWI_LOCAL_DONE_SLOTS) {
		l->st.rx_bad++;
		cons = prod; /* not from a sender that keeps the rules: dropped */
	}
	for (; cons != prod; cons++) {
		struct xwi_local_mark mk = s->done[cons % XWI_LOCAL_DONE_SLOTS];

		src_of(l, &src, from, mk.encap, mk.port);
		if (l->sink.done)
			l->sink.done(l->sink.ctx, &src, mk.msg_id, mk.session);
		l->st.rx_marks++;
	}
	__atomic_store_n(&s->done_cons, cons, __ATOMIC_RELEASE);
}

/* Drain sender @from's ring; returns records taken (bad ones included). */
static int rx_slot(struct xwi_local *l, __u16 from, int budget)
{
	struct xwi_local_slot *s = slot_of(l->map, from);
	const __u8 *ring = ring_of(l->map, from);
	__u64 cons = __atomic_load_n(&s->cons, __ATOMIC_RELAXED);
	__u64 prod = __atomic_load_n(&s->prod, __ATOMIC_ACQUIRE);
	int n = 0;

	/* Nothing: no write to the line the sender reads. */
	if (cons == prod)
		return 0;
	while (cons != prod && n < budget) {
		struct xwi_local_rec rec;
		struct xw_addr src = {};
		struct xw_hdr h;
		__u32 off = (__u32)(cons & (XWI_LOCAL_RING_BYTES - 1)), rb;

		if (prod - cons > XWI_LOCAL_RING_BYTES || ((prod - cons) & 7))
			goto corrupt;
		memcpy(&rec, ring + off, sizeof(rec));
		if (rec.len == XWI_LOCAL_PAD) {
			if (XWI_LOCAL_RING_BYTES - off > prod - cons)
				goto corrupt;
			cons += XWI_LOCAL_RING_BYTES - off;
			continue;
		}
		rb = rec_bytes(rec.len);
		if (rec.len < XW_HDR_LEN || rec.len > XWI_LOCAL_MAX_FRAME ||
		    off + rb > XWI_LOCAL_RING_BYTES || rb > prod - cons ||
		    (rec.encap != XW_ENCAP_ETH && rec.encap != XW_ENCAP_UDP))
			goto corrupt;
		memcpy(&h, ring + off + sizeof(rec), XW_HDR_LEN);
		src_of(l, &src, ntohs(h.src_ep), rec.encap, rec.port);
		/* The engine copies what it keeps: the slot is free after -
		 * unless it refused the frame (over its bounds): then it
		 * stays, and so does what follows it (the order). */
		if (l->sink.deliver(l->sink.ctx, &src, &h, ring + off + sizeof(rec) + XW_HDR_LEN,
				    rec.len - XW_HDR_LEN) == -ENOBUFS) {
			l->st.rx_held++;
			break;
		}
		n++;
		l->st.rx++;
		cons += rb;
		__atomic_store_n(&s->cons, cons, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&s->cons, cons, __ATOMIC_RELEASE);
	return n;
corrupt:
	/* Nothing after a bad record can be trusted: the rest of what the
	 * sender published goes (the connection layer sends it again). */
	l->st.rx_bad++;
	xwi_warn("endpoint %u: bad record in the local ring of sender %u: dropped", l->id, from);
	__atomic_store_n(&s->cons, prod, __ATOMIC_RELEASE);
	return n + 1;
}

/* Sender @from's ring is polled from now on, if there is room: its slot
 * says so first (a sender that has not seen it yet sets its pending bit,
 * still looked at). */
static void poll_add(struct xwi_local *l, __u16 from)
{
	struct xwi_local_slot *s = slot_of(l->map, from);

	if (l->npolled == XWI_LOCAL_POLLED || __atomic_load_n(&s->polled, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&s->polled, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&l->polled[l->npolled], from, __ATOMIC_RELAXED);
	__atomic_store_n(&l->npolled, l->npolled + 1, __ATOMIC_RELEASE);
}

/* Drain the polled senders' rings, up to @budget records in all. */
static int rx_polled(struct xwi_local *l, int budget)
{
	int total = 0;

	for (unsigned int i = 0; i < l->npolled && total < budget; i++)
		total += rx_slot(l, l->polled[i], budget - total);
	return total;
}

/* The senders that set pending bits, up to @budget records. */
static int rx_pending(struct xwi_local *l, int budget)
{
	__u64 words;
	int total = 0;

	if (!__atomic_load_n(&l->hdr->pending_words, __ATOMIC_RELAXED))
		return 0;
	words = __atomic_exchange_n(&l->hdr->pending_words, 0, __ATOMIC_SEQ_CST);
	while (words) {
		unsigned int w = (unsigned int)__builtin_ctzll(words);
		__u64 bits = __atomic_exchange_n(&l->hdr->pending[w], 0, __ATOMIC_SEQ_CST);

		words &= words - 1;
		while (bits) {
			__u16 from = (__u16)(w * 64 + (unsigned int)__builtin_ctzll(bits));
			struct xwi_local_slot *s = slot_of(l->map, from);

			bits &= bits - 1;
			if (total < budget)
				total += rx_slot(l, from, budget - total);
			rx_marks(l, from);
			poll_add(l, from);
			/* Left in the ring: seen again by the poll, or through
			 * the bit (marks are all taken). */
			if (!__atomic_load_n(&s->polled, __ATOMIC_RELAXED) &&
			    __atomic_load_n(&s->cons, __ATOMIC_RELAXED) !=
				    __atomic_load_n(&s->prod, __ATOMIC_ACQUIRE))
				xwi_local_pending_set(l->hdr, from);
		}
	}
	return total;
}

/* The polled rings get half of @budget first, then the pending bits'
 * senders, then the polled rings the rest: neither kind starves the
 * other. */
int xwi_local_rx(struct xwi_local *l, int budget)
{
	int total;

	if (!l)
		return 0;
	total = rx_polled(l, budget / 2 ? budget / 2 : 1);
	if (total < budget)
		total += rx_pending(l, budget - total);
	if (total < budget)
		total += rx_polled(l, budget - total);
	return total;
}

bool xwi_local_ready(const struct xwi_local *l)
{
	unsigned int n;

	if (!l)
		return false;
	if (__atomic_load_n(&l->hdr->pending_words, __ATOMIC_ACQUIRE))
		return true;
	n = __atomic_load_n(&l->npolled, __ATOMIC_ACQUIRE);
	for (unsigned int i = 0; i < n; i++) {
		const struct xwi_local_slot *s =
			slot_of(l->map, __atomic_load_n(&l->polled[i], __ATOMIC_RELAXED));

		if (__atomic_load_n(&s->prod, __ATOMIC_ACQUIRE) !=
		    __atomic_load_n(&s->cons, __ATOMIC_RELAXED))
			return true;
	}
	return false;
}

void xwi_local_stats(const struct xwi_local *l, struct xwi_local_stats *st)
{
	if (l)
		*st = l->st;
	else
		memset(st, 0, sizeof(*st));
}
