// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Peers on the same host: endpoints on one interface talk through their
 * shared-memory inboxes (userspace/lib/local.c), never through the wire.
 *
 * One anonymous network namespace, one multi-queue veth pair; process A
 * (this one) holds endpoints 1 and 3 on queue 0 and, for the kill test, 5;
 * process B endpoint 2 on queue 1; process C endpoint 4 on queue 2, killed
 * with SIGKILL in the middle of a large transfer; process D opens endpoint
 * 4 again.  Checked: every size class both ways between processes, inside
 * one process and to self, byte for byte, and that every frame went the
 * local way; cancel and truncation; a receiver asleep in block and in
 * spin-block with the marker policy woken by a local send (a marker wake
 * in the program's statistics); the death of a peer (the others go on, the
 * pending send fails after give_up_ms, a new incarnation talks again); a
 * corrupt record in an inbox is a counted drop; xw_endpoint__stats() fills
 * as much of the struct as the caller's sz says (the size before the local_*
 * fields: those bytes untouched).
 * Local peers are lossless (docs/PROTOCOL.md "Local peers"): no frame is
 * ever resent or received twice (asserted on every endpoint that only
 * talks locally); messages above XWI_LOCAL_EAGER_MAX are read once from
 * the sender's buffer (process_vm_readv: counted, sizes on both sides of
 * that threshold and of eager_max), and pulled where that is refused (an
 * endpoint with the test hook cma_off: the fallback counted once per peer,
 * every byte checked, both thresholds again, no mark for a pulled message);
 * a read message is answered with a mark in the sender's inbox, no frame
 * (the send completes only after the receiver read it, at the sender's
 * next pass), with the NOTIFY frame that wakes it to an armed sender, and
 * 40 in flight each way need more marks than a slot holds; a process
 * that holds the sender's pid (a child it forked, another program) is
 * never read from: pulled, every byte checked; process E,
 * killed after its large send reached A unmatched, makes A's receive fail
 * with a clear error; process F, killed with A's large message unmatched
 * (it could read it), makes A's send fail, not wait for a mark; process
 * G, stopped (SIGSTOP) for longer than rto_max while A's CONNECT and first
 * message wait unread in its inbox, makes A resend nothing; a ring
 * filled by a receiver that does not poll makes the sender wait, nothing
 * lost.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <bpf/bpf.h>

#include "chan.h"
#include "counters.h"
#include "harness.h"
#include "xdpwake.h"
#include "engine.h"   /* XWI_LOCAL_EAGER_MAX: where single-copy reads start */
#include "internal.h" /* xwi_iface_shared() */
#include "local.h"    /* the inbox layout: a planted record */
#include "testhook.h" /* cma_off: the pull fallback of large local messages */

#define IF_A "xwla"
#define IF_B "xwlb"
#define TMO 20000 /* ms: a hang guard only */
#define BIG (1u << 20)

static char pin_root[PATH_MAX];
static const char *who = "A";
static pid_t main_pid;

/* ---- small helpers --------------------------------------------------- */

/* One byte each way over a socketpair, bounded; @ep keeps progressing. */
static void bar(int fd, struct xw_endpoint *ep, const char *what)
{
	xwt_bar(fd, ep, what);
}

static void put(int fd, const void *p, size_t n)
{
	REQUIRE(write(fd, p, n) == (ssize_t)n, "%s: put", who);
}

static void get(int fd, void *p, size_t n)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	REQUIRE(poll(&pfd, 1, TMO) == 1 && read(fd, p, n) == (ssize_t)n, "%s: get", who);
}

/* @cma_off: the test hook - large local messages to it are pulled. */
static struct xw_endpoint *open_ep_cma(__u16 id, __u32 queue, __u32 give_up_ms, bool cma_off)
{
	struct xwi_test_opts t = { .cma_off = cma_off };
	struct xw_endpoint *ep;
	int err;

	XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root, .queue = queue,
		.give_up_ms = give_up_ms);
	err = xwi_endpoint_open_test(IF_A, id, &o, &t, &ep);
	if (err == -EAFNOSUPPORT)
		xwt_skip("AF_XDP not supported by this kernel");
	REQUIRE(err == 0, "%s: open endpoint %u on queue %u: %s", who, id, queue,
		xw_strerror(err));
	return ep;
}

static struct xw_endpoint *open_ep(__u16 id, __u32 queue, __u32 give_up_ms)
{
	return open_ep_cma(id, queue, give_up_ms, false);
}

static struct xw_addr addr_of(struct xw_endpoint *ep)
{
	struct xw_addr a;

	REQUIRE(xw_endpoint__addr(ep, &a) == 0, "addr");
	return a;
}

/* Wait for every request of @r (NULL entries skipped), progressing all of
 * their endpoints; bounded. */
static void wait_all(struct xw_request **r, struct xw_status *st, int n, const char *what)
{
	__u64 end = xwu_now_ns() + (__u64)TMO * 1000000ULL;
	int left = 0;

	for (int i = 0; i < n; i++)
		left += r[i] != NULL;
	while (left) {
		struct xw_waitable w[4];
		int idx[4], k = 0, got;

		for (int i = 0; i < n; i++)
			if (r[i]) {
				w[k] = (struct xw_waitable){ .req = r[i] };
				idx[k++] = i;
			}
		XW_OPTS(xw_wait_opts, o, .timeout_set = true, .timeout_ms = 100,
			.strategy = XW_WAIT_SPIN);
		got = xw_wait_any(w, k, &o);
		REQUIRE(got >= 0 || got == -ETIMEDOUT, "%s: wait_any: %s", what,
			xw_strerror(got));
		REQUIRE(xwu_now_ns() < end, "%s: not done in %d ms", what, TMO);
		if (got < 0)
			continue;
		REQUIRE(xw_request__test(r[idx[got]], &st[idx[got]]) == 1, "%s: test", what);
		r[idx[got]] = NULL;
		left--;
	}
}

/* ---- (a) every size class -------------------------------------------- */

static size_t size_list(struct xw_endpoint *ep, size_t *l)
{
	size_t P = (size_t)xw_endpoint__frag_payload(ep), n = 0;

	l[n++] = 0;
	l[n++] = 1;
	l[n++] = P;	    /* SMALL, the largest */
	l[n++] = P + 1;	    /* MEDIUM */
	l[n++] = XWI_LOCAL_EAGER_MAX;	  /* the largest eager to a local peer */
	l[n++] = XWI_LOCAL_EAGER_MAX + 1; /* RNDV, read from the sender's buffer */
	l[n++] = 20000;
	l[n++] = 32768;	    /* eager_max (to a peer that cannot read ours) */
	l[n++] = 32769;	    /* RNDV (+ pull in the fallback) */
	l[n++] = 300000;
	l[n++] = BIG;
	return n;
}

/* One message of @len from @tx to @rx, both in this process (@tx == @rx:
 * to self); the receive posted first, or after (@late). */
static void xfer_here(struct xw_endpoint *tx, struct xw_endpoint *rx, size_t len, int late,
		      unsigned int seed, const char *what)
{
	unsigned char *out = malloc(len + 1), *in = malloc(len + 64);
	struct xw_addr dst = addr_of(rx), src = addr_of(tx);
	struct xw_request *r[2] = { NULL, NULL };
	struct xw_status st[2] = { { .sz = sizeof(st[0]) }, { .sz = sizeof(st[1]) } };
	long d;

	REQUIRE(out && in, "malloc");
	xwt_fill(out, len, seed);
	memset(in, 0xEE, len + 64);
	if (!late)
		REQUIRE(xw_endpoint__irecv(rx, in, len, 0x100 + seed, ~0ULL, &r[1]) == 0, "irecv");
	REQUIRE(xw_endpoint__isend(tx, &dst, out, len, 0x100 + seed, &r[0]) == 0, "isend");
	if (late) {
		for (int i = 0; i < 20; i++) {
			xw_endpoint__progress(tx);
			xw_endpoint__progress(rx);
		}
		REQUIRE(xw_endpoint__irecv(rx, in, len, 0x100 + seed, ~0ULL, &r[1]) == 0, "irecv");
	}
	wait_all(r, st, 2, what);
	CHECK(st[0].error == 0, "%s %zu: send error %d", what, len, st[0].error);
	CHECK(st[1].error == 0 && st[1].len == len && st[1].msg_len == len &&
	      xw_addr_equal(&st[1].src, &src),
	      "%s %zu: recv error %d len %zu msg_len %zu", what, len, st[1].error, st[1].len,
	      st[1].msg_len);
	d = xwt_first_diff(in, len, seed);
	CHECK(d < 0, "%s %zu: byte %ld differs", what, len, d);
	for (int i = 0; i < 64; i++)
		if (in[len + i] != 0xEE) {
			CHECK(0, "%s %zu: wrote past the buffer", what, len);
			break;
		}
	free(out);
	free(in);
}

/* One message of @len between two processes (both call this). */
static void xfer_peer(int fd, struct xw_endpoint *ep, const struct xw_addr *peer, int sender,
		      size_t len, unsigned int seed)
{
	unsigned char *buf = malloc(len + 64);
	struct xw_request *req;
	XW_OPTS(xw_status, st);
	long d;
	int err;

	REQUIRE(buf, "malloc");
	if (sender) {
		xwt_fill(buf, len, seed);
		bar(fd, ep, "posted");
		err = xw_endpoint__send(ep, peer, buf, len, 0x200 + seed, TMO);
		CHECK(err == 0, "%s: send %zu: %s", who, len, xw_strerror(err));
	} else {
		memset(buf, 0xEE, len + 64);
		REQUIRE(xw_endpoint__irecv(ep, buf, len, 0x200 + seed, ~0ULL, &req) == 0, "irecv");
		bar(fd, ep, "posted");
		err = xw_request__wait(req, &st, TMO);
		CHECK(err == 0 && st.error == 0 && st.len == len && xw_addr_equal(&st.src, peer),
		      "%s: recv %zu: %s / error %d len %zu", who, len, xw_strerror(err), st.error,
		      st.len);
		d = xwt_first_diff(buf, len, seed);
		CHECK(d < 0, "%s: recv %zu: byte %ld differs", who, len, d);
		for (int i = 0; i < 64; i++)
			if (buf[len + i] != 0xEE) {
				CHECK(0, "%s: recv %zu: wrote past the buffer", who, len);
				break;
			}
	}
	free(buf);
}

/* Every frame of @ep went the local way, and some did; none was resent or
 * came twice (the ring is lossless: no timer may fire either). */
static void all_local(struct xw_endpoint *ep, const char *what)
{
	struct xw_endpoint_stats s = xwt_ep_stats(ep);

	CHECK(s.retransmits == 0 && s.rx_dup_frames == 0 && s.rto_timeouts == 0 &&
	      s.tail_probes == 0 && s.crc_failures == 0,
	      "%s: %s: %llu retransmissions, %llu duplicates, %llu RTO expiries, %llu tail "
	      "probes, %llu CRC failures on the local path",
	      who, what, (unsigned long long)s.retransmits, (unsigned long long)s.rx_dup_frames,
	      (unsigned long long)s.rto_timeouts, (unsigned long long)s.tail_probes,
	      (unsigned long long)s.crc_failures);

	CHECK(s.local_tx_frames > 0 && s.local_tx_frames == s.tx_frames && s.local_lost == 0,
	      "%s: %s: %llu frames sent, %llu of them local, %llu lost", who, what,
	      (unsigned long long)s.tx_frames, (unsigned long long)s.local_tx_frames,
	      (unsigned long long)s.local_lost);
	CHECK(s.local_rx_frames > 0 && s.local_rx_frames == s.rx_frames && s.local_rx_bad == 0,
	      "%s: %s: %llu frames received, %llu of them local, %llu bad", who, what,
	      (unsigned long long)s.rx_frames, (unsigned long long)s.local_rx_frames,
	      (unsigned long long)s.local_rx_bad);
}

static void sizes_peer(int fd, struct xw_endpoint *ep, const struct xw_addr *peer, int is_b)
{
	size_t l[16], n = size_list(ep, l);
	unsigned int seed = 1;

	for (size_t i = 0; i < n; i++)
		for (int dir = 0; dir < 2; dir++)
			xfer_peer(fd, ep, peer, dir == is_b, l[i], seed++);
}

static void sizes_here(struct xw_endpoint *e1, struct xw_endpoint *e3)
{
	size_t l[16], n = size_list(e1, l);
	unsigned int seed = 100;

	for (size_t i = 0; i < n; i++) {
		xfer_here(e1, e3, l[i], (int)(i & 1), seed++, "1->3");
		xfer_here(e3, e1, l[i], (int)(i & 1), seed++, "3->1");
		xfer_here(e1, e1, l[i], (int)(i & 1), seed++, "1->1 (self)");
	}
}

/* ---- (b) cancel and truncation --------------------------------------- */

static void trunc_cancel(int fd, struct xw_endpoint *ep, const struct xw_addr *peer, int is_b)
{
	static unsigned char big[100000];
	unsigned char small[1000 + 64];
	size_t lens[] = { 5000, 100000 };
	struct xw_request *req;
	XW_OPTS(xw_status, st);

	for (int k = 0; k < 2; k++) {
		if (!is_b) {
			xwt_fill(big, lens[k], 99 + k);
			bar(fd, ep, "trunc posted");
			CHECK(xw_endpoint__send(ep, peer, big, lens[k], 0x99, TMO) == 0,
			      "send %zu to a short receive", lens[k]);
			continue;
		}
		memset(small, 0xEE, sizeof(small));
		REQUIRE(xw_endpoint__irecv(ep, small, 1000, 0x99, ~0ULL, &req) == 0, "irecv");
		bar(fd, ep, "trunc posted");
		CHECK(xw_request__wait(req, &st, TMO) == 0, "wait");
		CHECK(st.error == -EMSGSIZE && st.len == 1000 && st.msg_len == lens[k],
		      "truncated %zu: error %d len %zu msg_len %zu", lens[k], st.error, st.len,
		      st.msg_len);
		CHECK(xwt_first_diff(small, 1000, 99 + k) < 0, "truncated data differs");
		for (int i = 0; i < 64; i++)
			CHECK(small[1000 + i] == 0xEE, "truncation wrote past the buffer");
	}
	if (is_b) {
		REQUIRE(xw_endpoint__irecv(ep, small, 10, 0xDEAD, ~0ULL, &req) == 0, "irecv");
		CHECK(xw_request__cancel(req) == 0, "cancel an unmatched receive");
		CHECK(xw_request__wait(req, &st, TMO) == 0 && st.error == -ECANCELED,
		      "cancelled receive: error %d", st.error);
	}
	bar(fd, ep, "trunc done");
}

/* ---- (c) a sleeping receiver is woken by a local send ----------------- */

static void *inbox_map(__u16 id);

/* Does @id poll the ring of sender @from directly (the sender sets no
 * pending bit then)? */
static bool polls(__u16 id, __u16 from)
{
	__u8 *m = inbox_map(id);
	bool r = __atomic_load_n(&((struct xwi_local_slot *)(m + XWI_LOCAL_SLOTS_OFF) + from)->polled,
				 __ATOMIC_ACQUIRE) != 0;

	munmap(m, XWI_LOCAL_FILE_BYTES);
	return r;
}

static void wake_part(int fd, struct xw_endpoint *ep, const struct xw_addr *peer, int is_b)
{
	enum xw_wait_strategy ss[2] = { XW_WAIT_BLOCK, XW_WAIT_SPIN_BLOCK };

	for (int k = 0; k < 2; k++) {
		char buf[64] = "";
		struct xw_request *req;
		XW_OPTS(xw_status, st);
		struct xw_wait_stats w0 = { .sz = sizeof(w0) }, w1 = { .sz = sizeof(w1) };
		XW_OPTS(xw_stats, x0);
		XW_OPTS(xw_stats, x1);
		__u64 t0, t1;
		int err;

		if (!is_b) {
			bar(fd, ep, "sleeping");
			usleep(30000); /* B is asleep by now */
			/* B got our messages before: it polls our ring, so the
			 * frame that must wake it sets no pending bit */
			CHECK(polls(peer->ep, addr_of(ep).ep), "B does not poll our ring");
			CHECK(xw_endpoint__send(ep, peer, "wake up", 8, 0x77, TMO) == 0, "send");
			bar(fd, ep, "woken");
			continue;
		}
		REQUIRE(xw_iface__set_knob(xw_endpoint__iface(ep), "policy", 2,
					   XW_POLICY_MARKER) == 0, "policy");
		REQUIRE(xw_endpoint__irecv(ep, buf, sizeof(buf), 0x77, ~0ULL, &req) == 0, "irecv");
		xw_endpoint__wait_stats(ep, &w0);
		x0 = xwt_xdp_stats(ep, 2);
		bar(fd, NULL, "sleeping");
		t0 = xwu_now_ns();
		{
			/* spin-block spins 20 us, then sleeps */
			XW_OPTS(xw_wait_opts, o, .timeout_set = true, .timeout_ms = 5000,
				.strategy = ss[k], .spin_ns = 20000);
			err = xw_request__wait_opts(req, &st, &o);
		}
		t1 = xwu_now_ns();
		xw_endpoint__wait_stats(ep, &w1);
		x1 = xwt_xdp_stats(ep, 2);
		CHECK(err == 0 && st.error == 0 && st.len == 8 && !strcmp(buf, "wake up"),
		      "%s: the message: %s / error %d len %zu", xw_wait_strategy_name(ss[k]),
		      xw_strerror(err), st.error, st.len);
		CHECK(x1.wake_marker > x0.wake_marker,
		      "%s: no marker wake in the program's statistics (%llu -> %llu)",
		      xw_wait_strategy_name(ss[k]), (unsigned long long)x0.wake_marker,
		      (unsigned long long)x1.wake_marker);
		CHECK(w1.blocks > w0.blocks && w1.wakes > w0.wakes,
		      "%s: blocks %llu -> %llu, wakes %llu -> %llu", xw_wait_strategy_name(ss[k]),
		      (unsigned long long)w0.blocks, (unsigned long long)w1.blocks,
		      (unsigned long long)w0.wakes, (unsigned long long)w1.wakes);
		CHECK(t1 - t0 < 2000000000ULL, "%s: the wait took %llu ms",
		      xw_wait_strategy_name(ss[k]), (unsigned long long)((t1 - t0) / 1000000));
		bar(fd, ep, "woken");
	}
}

/* ---- (e) a corrupt record -------------------------------------------- */

static void *inbox_map(__u16 id)
{
	char path[128];
	void *m;
	int fd;

	REQUIRE(xwi_local_path(path, sizeof(path), (int)if_nametoindex(IF_A), id) == 0, "path");
	fd = open(path, O_RDWR | O_CLOEXEC);
	REQUIRE(fd >= 0, "open %s: %s", path, strerror(errno));
	m = mmap(NULL, XWI_LOCAL_FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	REQUIRE(m != MAP_FAILED, "mmap the inbox");
	return m;
}

/* A rogue sender @from writes @rec and @n bytes after it into @id's inbox,
 * as a sender would (publish, pending bit, produced). */
static void plant(struct xw_endpoint *ep, __u16 id, __u16 from, const struct xwi_local_rec *rec,
		  const void *body, size_t n)
{
	__u8 *m = inbox_map(id);
	struct xwi_local_hdr *h = (void *)m;
	struct xwi_local_slot *s = (struct xwi_local_slot *)(m + XWI_LOCAL_SLOTS_OFF) + from;
	__u8 *ring = m + XWI_LOCAL_RINGS_OFF + (size_t)from * XWI_LOCAL_RING_BYTES;
	__u64 p = s->prod;
	size_t adv = (sizeof(*rec) + n + 7) & ~(size_t)7;

	memcpy(ring + (p & (XWI_LOCAL_RING_BYTES - 1)), rec, sizeof(*rec));
	memcpy(ring + (p & (XWI_LOCAL_RING_BYTES - 1)) + sizeof(*rec), body, n);
	__atomic_store_n(&s->prod, p + adv, __ATOMIC_RELEASE);
	xwi_local_pending_set(h, from);
	__atomic_add_fetch(&xwi_iface_shared(xw_endpoint__iface(ep), id)->produced, 1,
			   __ATOMIC_SEQ_CST);
	munmap(m, XWI_LOCAL_FILE_BYTES);
}

static void corrupt_part(struct xw_endpoint *e1, struct xw_endpoint *e3)
{
	struct xwi_local_rec rec = { .encap = XW_ENCAP_ETH };
	struct xw_endpoint_stats s0 = xwt_ep_stats(e3), s1 = { .sz = sizeof(s1) };
	struct xw_hdr h = { .version = XW_VERSION, .type = XW_PKT_SMALL };
	__u8 body[XW_HDR_LEN + 16];

	/* A length shorter than a header: the layout is broken. */
	rec.len = 12;
	memset(body, 0x5A, sizeof(body));
	plant(e3, 3, 9, &rec, body, 16);
	for (int i = 0; i < 10; i++)
		xw_endpoint__progress(e3);
	s1 = xwt_ep_stats(e3);
	CHECK(s1.local_rx_bad == s0.local_rx_bad + 1, "bad record length: local_rx_bad %llu -> %llu",
	      (unsigned long long)s0.local_rx_bad, (unsigned long long)s1.local_rx_bad);

	/* A well-formed record whose frame is wrong: the engine's drop.  (No
	 * CRC on the local path - the ring cannot corrupt a frame - but the
	 * header rules hold: a SMALL frame's payload is its whole message.) */
	h.dst_ep = htons(3);
	h.src_ep = htons(9);
	h.payload_len = htons(16);
	h.msg_len = htonl(17);
	h.frag_count = htonl(1);
	h.csum = htonl(0x12345678);
	memcpy(body, &h, sizeof(h));
	rec.len = sizeof(body);
	plant(e3, 3, 9, &rec, body, sizeof(body));
	for (int i = 0; i < 10; i++)
		xw_endpoint__progress(e3);
	s0 = s1;
	s1 = xwt_ep_stats(e3);
	CHECK(s1.local_rx_frames == s0.local_rx_frames + 1 &&
	      s1.crc_failures + s1.rx_bad > s0.crc_failures + s0.rx_bad &&
	      s1.local_rx_bad == s0.local_rx_bad,
	      "bad frame: local rx %llu -> %llu, crc %llu -> %llu, rx_bad %llu -> %llu",
	      (unsigned long long)s0.local_rx_frames, (unsigned long long)s1.local_rx_frames,
	      (unsigned long long)s0.crc_failures, (unsigned long long)s1.crc_failures,
	      (unsigned long long)s0.rx_bad, (unsigned long long)s1.rx_bad);
	/* The endpoint works on. */
	xfer_here(e1, e3, 5000, 0, 4242, "after corrupt records");
}

/* ---- a pinned `shared` map of another layout ---------------------------- */

/* A program of an older build attached the interface: its `shared` map's
 * value has another size (one line, before `consumed` had its own).  A
 * process that opens the pins is refused with -EINVAL instead of reading
 * it with our layout; with the map of our layout back, it opens.  (This
 * process's endpoints share one handle: the public xw_iface__open opens
 * the pins anew.) */
static void stale_pin_part(struct xw_endpoint *e1, struct xw_endpoint *e3)
{
	struct xw_iface *ifc = xw_endpoint__iface(e1), *other = NULL;
	char p[PATH_MAX];
	int orig, fake, err;
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_MMAPABLE);
	XW_OPTS(xw_iface_opts, o, .pin_root = pin_root);

	REQUIRE((size_t)snprintf(p, sizeof(p), "%.*s/shared", PATH_MAX - 8, ifc->pin_dir) <
			sizeof(p), "pin path");
	orig = bpf_obj_get(p);
	REQUIRE(orig >= 0, "the pinned shared map %s: %s", p, strerror(errno));
	fake = bpf_map_create(BPF_MAP_TYPE_ARRAY, "shared", 4, 64, ifc->max_eps, &mo);
	REQUIRE(fake >= 0, "a shared map of 64-byte values: %s", strerror(errno));
	REQUIRE(unlink(p) == 0 && bpf_obj_pin(fake, p) == 0, "pin it: %s", strerror(errno));
	err = xw_iface__open(IF_A, &o, &other);
	CHECK(err == -EINVAL && !other, "open over a shared map of 64-byte values: %s (-EINVAL)",
	      xw_strerror(err));
	if (!err)
		xw_iface__close(other);
	REQUIRE(unlink(p) == 0 && bpf_obj_pin(orig, p) == 0, "pin the map back: %s",
		strerror(errno));
	close(fake);
	close(orig);
	err = xw_iface__open(IF_A, &o, &other);
	CHECK(err == 0, "open with the map of our layout back: %s", xw_strerror(err));
	if (!err)
		xw_iface__close(other);
	xfer_here(e1, e3, 64, 0, 7, "after the stale map");
}

/* ---- the caller's struct size ------------------------------------------ */

/* struct xw_endpoint_stats grew (the local_* fields) without a new symbol
 * version: a caller built against the smaller struct says so in sz and gets
 * that much; a larger one (a newer header) gets the rest zeroed; an sz that
 * holds no counter is -EINVAL. */
static void abi_part(struct xw_endpoint *ep)
{
	union {
		struct xw_endpoint_stats s;
		unsigned char b[sizeof(struct xw_endpoint_stats) + 16];
	} u;
	size_t old = offsetof(struct xw_endpoint_stats, local_tx_frames);

	memset(&u, 0xA5, sizeof(u));
	u.s.sz = old;
	CHECK(xw_endpoint__stats(ep, &u.s) == 0, "stats with the old size");
	CHECK(u.s.sz == old, "sz kept");
	for (size_t i = old; i < sizeof(u); i++)
		if (u.b[i] != 0xA5) {
			CHECK(0, "the old size's call wrote byte %zu (struct of %zu)", i, old);
			break;
		}
	memset(&u, 0xA5, sizeof(u));
	u.s.sz = sizeof(u);
	CHECK(xw_endpoint__stats(ep, &u.s) == 0, "stats with a larger size");
	for (size_t i = sizeof(struct xw_endpoint_stats); i < sizeof(u); i++)
		if (u.b[i] != 0) {
			CHECK(0, "byte %zu beyond the library's struct not zeroed", i);
			break;
		}
	u.s.sz = 0;
	CHECK(xw_endpoint__stats(ep, &u.s) == -EINVAL, "stats with sz 0");
	u.s.sz = sizeof(size_t);
	CHECK(xw_endpoint__stats(ep, &u.s) == -EINVAL, "stats with sz holding no counter");
	{
		struct xw_wait_stats w = { 0 };

		CHECK(xw_endpoint__wait_stats(ep, &w) == -EINVAL, "wait stats with sz 0");
		w.sz = sizeof(w);
		CHECK(xw_endpoint__wait_stats(ep, &w) == 0 && w.sz == sizeof(w), "wait stats");
	}
}

/* ---- processes ------------------------------------------------------- */

static pid_t spawn(int *fd, void (*fn)(int))
{
	int sv[2];
	pid_t pid;

	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		close(sv[0]);
		xwt_pin_dir[0] = '\0'; /* the pins are A's to remove */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fn(sv[1]);
		exit(xwt_failures ? 1 : 0);
	}
	close(sv[1]);
	*fd = sv[0];
	return pid;
}

/* B: endpoint 2 on queue 1. */
static void host_b(int fd)
{
	struct xw_endpoint *ep;
	struct xw_addr a1, a3, me;

	xwt_chan_who = who = "B";
	ep = open_ep(2, 1, 0);
	me = addr_of(ep);
	put(fd, &me, sizeof(me));
	get(fd, &a1, sizeof(a1));
	get(fd, &a3, sizeof(a3));
	sizes_peer(fd, ep, &a1, 1);
	bar(fd, ep, "sizes done");
	all_local(ep, "sizes");
	trunc_cancel(fd, ep, &a1, 1);
	wake_part(fd, ep, &a1, 1);
	/* (d): a ping-pong with endpoint 3 while C dies */
	bar(fd, ep, "kill starts");
	for (int i = 0; i < 200; i++) {
		char m[32], r[32];
		XW_OPTS(xw_status, st);

		snprintf(m, sizeof(m), "ping %d", i);
		CHECK(xw_endpoint__send(ep, &a3, m, sizeof(m), 0x300 + (__u64)i, TMO) == 0,
		      "B: ping %d", i);
		CHECK(xw_endpoint__recv(ep, r, sizeof(r), 0x400 + (__u64)i, ~0ULL, &st, TMO) == 0 &&
		      !strcmp(r + 1, m + 1) && r[0] == 'q', "B: pong %d", i);
	}
	bar(fd, ep, "kill done");
	xw_endpoint__close(ep);
}

/* C and D: endpoint 4 on queue 2; C receives a large message slowly (A
 * kills it on the way), D exchanges one message each way with 5. */
static void host_c(int fd)
{
	struct xw_endpoint *ep;
	struct xw_request *req;
	unsigned char *buf = malloc(8u << 20);

	xwt_chan_who = who = "C";
	REQUIRE(buf, "malloc");
	/* pulled (not read at once from A's buffer): killed mid-transfer */
	ep = open_ep_cma(4, 2, 0, true);
	REQUIRE(xw_endpoint__irecv(ep, buf, 8u << 20, 0x500, ~0ULL, &req) == 0, "irecv");
	bar(fd, ep, "posted");
	/* A slow receiver: one pass a millisecond (until killed). */
	for (int i = 0; i < 60000; i++) {
		xw_endpoint__progress(ep);
		usleep(1000);
	}
	CHECK(0, "C: not killed");
}

static void host_d(int fd)
{
	struct xw_endpoint *ep;
	struct xw_addr a5, me;
	char m[64] = "";
	XW_OPTS(xw_status, st);

	xwt_chan_who = who = "D";
	ep = open_ep(4, 2, 0);
	me = addr_of(ep);
	get(fd, &a5, sizeof(a5));
	CHECK(xw_endpoint__send(ep, &a5, "from the new 4", 15, 0x600, TMO) == 0, "D: send");
	CHECK(xw_endpoint__recv(ep, m, sizeof(m), 0x601, ~0ULL, &st, TMO) == 0 &&
	      !strcmp(m, "to the new 4") && xw_addr_equal(&st.src, &a5), "D: recv");
	all_local(ep, "new incarnation");
	bar(fd, ep, "d done");
	xw_endpoint__close(ep);
	(void)me;
}

/* A's side of (d). */
static void kill_part(int fb, struct xw_endpoint *e3, struct xw_addr *a2)
{
	struct xw_endpoint *e5 = open_ep(5, 0, 400);
	unsigned char *big = malloc(8u << 20);
	struct xw_addr a4;
	struct xw_request *sreq, *dreq;
	XW_OPTS(xw_status, st);
	struct xw_endpoint_stats s0 = { .sz = sizeof(s0) };
	__u64 t0, t_kill;
	pid_t c, d;
	int fc, fd, status, err;
	char m[64] = "";

	REQUIRE(big, "malloc");
	xwt_fill(big, 8u << 20, 7);
	c = spawn(&fc, host_c);
	bar(fc, e5, "posted");
	/* C's endpoint 4: same MAC as ours, id 4, its nonce unknown (an
	 * address without one, as the tool's MAC/ep: it may open a
	 * connection; it is also the address of D, C's successor, below) */
	a4 = addr_of(e5);
	a4.ep = 4;
	a4.nonce = 0;
	bar(fb, e3, "kill starts");
	s0 = xwt_ep_stats(e5);
	REQUIRE(xw_endpoint__isend(e5, &a4, big, 8u << 20, 0x500, &sreq) == 0, "isend big");
	/* Kill C once a good part is on its way. */
	t0 = xwu_now_ns();
	for (;;) {
		struct xw_endpoint_stats s = { .sz = sizeof(s) };

		xw_endpoint__progress(e5);
		xw_endpoint__progress(e3);
		s = xwt_ep_stats(e5);
		if (s.local_tx_frames - s0.local_tx_frames > 500)
			break;
		REQUIRE(xwu_now_ns() - t0 < 10000000000ULL, "the large send did not start");
		usleep(100);
	}
	CHECK(!xw_request__done(sreq), "the 8 MiB send completed before the kill");
	kill(c, SIGKILL);
	REQUIRE(waitpid(c, &status, 0) == c, "reap C");
	close(fc);
	t_kill = xwu_now_ns();
	/* Meanwhile endpoint 3 answers B's pings (B checks them). */
	for (int i = 0; i < 200; i++) {
		char r[32];
		XW_OPTS(xw_status, s3);

		CHECK(xw_endpoint__recv(e3, r, sizeof(r), 0x300 + (__u64)i, ~0ULL, &s3, TMO) == 0,
		      "A: ping %d", i);
		r[0] = 'q';
		CHECK(xw_endpoint__send(e3, a2, r, sizeof(r), 0x400 + (__u64)i, TMO) == 0,
		      "A: pong %d", i);
		xw_endpoint__progress(e5);
	}
	/* The send to the dead peer fails after give_up_ms (400). */
	err = xw_request__wait(sreq, &st, 10000);
	CHECK(err == 0 && (st.error == -ETIMEDOUT || st.error == -ECONNRESET),
	      "the send to the killed peer: %s / status %d", xw_strerror(err), st.error);
	CHECK(xwu_now_ns() - t_kill < 8000000000ULL, "the send failed only after %llu ms",
	      (unsigned long long)((xwu_now_ns() - t_kill) / 1000000));
	bar(fb, e3, "kill done");

	/* A new process opens endpoint 4 again: talks to 5. */
	d = spawn(&fd, host_d);
	{
		struct xw_addr a5 = addr_of(e5);

		put(fd, &a5, sizeof(a5));
	}
	CHECK(xw_endpoint__recv(e5, m, sizeof(m), 0x600, ~0ULL, &st, TMO) == 0 &&
	      !strcmp(m, "from the new 4") && st.src.ep == 4, "A: recv from the new 4: %s",
	      m);
	CHECK(xw_endpoint__send(e5, &a4, "to the new 4", 13, 0x601, TMO) == 0, "A: send to D");
	bar(fd, e5, "d done");
	REQUIRE(waitpid(d, &status, 0) == d, "reap D");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "D failed (status %#x)", status);
	close(fd);
	(void)dreq;
	xw_endpoint__close(e5);
	free(big);
}

/* ---- (f) single copy, its fallback; back-pressure ---------------------- */

/* Large messages between e1 and an endpoint that may not read its peers'
 * buffers (cma_off): pulled, the refusal counted once for the peer. */
static void cma_part(struct xw_endpoint *e1)
{
	static const size_t around[] = { XWI_LOCAL_EAGER_MAX, XWI_LOCAL_EAGER_MAX + 1, 32768,
					 32769 };
	struct xw_endpoint *e6 = open_ep_cma(6, 0, 0, true);
	struct xw_endpoint_stats s1 = xwt_ep_stats(e1), s6;
	unsigned int seed = 310;

	xfer_here(e1, e6, BIG, 0, 300, "1->6 (pulled)");
	xfer_here(e1, e6, 300000, 1, 301, "1->6 (pulled, late)");
	xfer_here(e6, e1, BIG, 0, 302, "6->1 (read)");
	s6 = xwt_ep_stats(e6);
	CHECK(s6.local_cma_fallbacks == 1 && s6.local_cma_reads == 0,
	      "6: %llu fallbacks, %llu single-copy reads (1, 0 expected)",
	      (unsigned long long)s6.local_cma_fallbacks, (unsigned long long)s6.local_cma_reads);
	CHECK(xwt_ep_stats(e1).local_cma_reads == s1.local_cma_reads + 1,
	      "1: the message of 6 not read from its buffer");
	/* Either side of the local threshold and of eager_max: 1 -> 6 as for
	 * a remote peer (eager up to eager_max, then pulled); 6 -> 1 read by
	 * 1 from above the local threshold. */
	for (size_t i = 0; i < sizeof(around) / sizeof(around[0]); i++) {
		__u64 r1 = xwt_ep_stats(e1).local_cma_reads;

		for (int late = 0; late < 2; late++) {
			xfer_here(e1, e6, around[i], late, seed++, "1->6 (fallback)");
			xfer_here(e6, e1, around[i], late, seed++, "6->1");
		}
		CHECK(xwt_ep_stats(e1).local_cma_reads ==
			      r1 + (around[i] > XWI_LOCAL_EAGER_MAX ? 2 : 0),
		      "1: %zu B from 6: %llu read from its buffer", around[i],
		      (unsigned long long)(xwt_ep_stats(e1).local_cma_reads - r1));
	}
	CHECK(xwt_ep_stats(e6).local_cma_reads == 0 && xwt_ep_stats(e6).local_cma_fallbacks == 1,
	      "6: read a buffer, or its refusal counted twice");
	/* 6 pulled 1's messages: NOTIFY frames, no marks; 1 read 6's: marks */
	CHECK(xwt_ep_stats(e6).local_cma_marks == 0 && xwt_ep_stats(e1).local_cma_done == s1.local_cma_done,
	      "6: %llu marks for pulled messages",
	      (unsigned long long)xwt_ep_stats(e6).local_cma_marks);
	all_local(e6, "pulled");
	xw_endpoint__close(e6);
}

/* Both sides of the local threshold between e1 and e3: up to
 * XWI_LOCAL_EAGER_MAX through the ring (eager), above it read once from
 * the sender's buffer - as many reads as messages above it. */
static void threshold_part(struct xw_endpoint *e1, struct xw_endpoint *e3)
{
	static const size_t lens[] = { XWI_LOCAL_EAGER_MAX - 1, XWI_LOCAL_EAGER_MAX,
				       XWI_LOCAL_EAGER_MAX + 1, 2 * XWI_LOCAL_EAGER_MAX, 32768,
				       32769 };
	unsigned int seed = 400;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		__u64 r3 = xwt_ep_stats(e3).local_cma_reads, r1 = xwt_ep_stats(e1).local_cma_reads;
		__u64 want = lens[i] > XWI_LOCAL_EAGER_MAX;

		xfer_here(e1, e3, lens[i], 0, seed++, "1->3 (threshold)");
		xfer_here(e3, e1, lens[i], 1, seed++, "3->1 (threshold, late)");
		CHECK(xwt_ep_stats(e3).local_cma_reads == r3 + want &&
			      xwt_ep_stats(e1).local_cma_reads == r1 + want,
		      "%zu B: %llu and %llu single-copy reads, %llu expected", lens[i],
		      (unsigned long long)(xwt_ep_stats(e3).local_cma_reads - r3),
		      (unsigned long long)(xwt_ep_stats(e1).local_cma_reads - r1),
		      (unsigned long long)want);
	}
}

/* Progress @a and @b until the @n requests of @r are done (their status in
 * @st); bounded. */
static void progress_all(struct xw_endpoint *a, struct xw_endpoint *b, struct xw_request **r,
			 struct xw_status *st, int n, const char *what)
{
	__u64 end = xwu_now_ns() + (__u64)TMO * 1000000ULL;

	for (int i = 0; i < n; i++) {
		st[i] = (struct xw_status){ .sz = sizeof(st[i]) };
		while (xw_request__test(r[i], &st[i]) != 1) {
			xw_endpoint__progress(a);
			xw_endpoint__progress(b);
			REQUIRE(xwu_now_ns() < end, "%s: not done in %d ms", what, TMO);
		}
	}
}

/* A sender to a receiver that does not poll: its ring fills, the frames
 * wait (counted) and all arrive once it polls; a receiver over its bound
 * for unexpected data leaves the records in the ring until receives come. */
static void backpressure_part(struct xw_endpoint *e1, struct xw_endpoint *e3)
{
	/* eager: the largest message that goes through the ring */
	enum { N = 100, LEN = XWI_LOCAL_EAGER_MAX };
	XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root, .unexpected_max = 3 * LEN);
	struct xw_endpoint_stats s0 = xwt_ep_stats(e1), s;
	struct xw_request *rq[N], *sq[N];
	struct xw_status st[N];
	unsigned char *in = malloc((size_t)N * LEN), *out = malloc((size_t)N * LEN);
	struct xw_addr a3 = addr_of(e3), a9;
	struct xw_endpoint *e9;

	REQUIRE(in && out, "malloc");
	for (int i = 0; i < N; i++)
		xwt_fill(out + (size_t)i * LEN, LEN, 400 + (unsigned int)i);
	/* 400 kB of eager messages to e3 (its ring: 256 KiB), which does
	 * not poll meanwhile */
	for (int i = 0; i < N; i++)
		REQUIRE(xw_endpoint__isend(e1, &a3, out + (size_t)i * LEN, LEN, 0x800 + (__u64)i,
					   &sq[i]) == 0, "isend %d", i);
	for (int i = 0; i < 50; i++)
		xw_endpoint__progress(e1);
	s = xwt_ep_stats(e1);
	CHECK(s.local_ring_full > s0.local_ring_full, "the ring to 3 never filled");
	for (int i = 0; i < N; i++) {
		REQUIRE(xw_endpoint__irecv(e3, in + (size_t)i * LEN, LEN, 0x800 + (__u64)i, ~0ULL,
					   &rq[i]) == 0, "irecv %d", i);
	}
	progress_all(e1, e3, rq, st, N, "back-pressure");
	progress_all(e1, e3, sq, st, N, "back-pressure sends");
	for (int i = 0; i < N; i++) {
		long d = xwt_first_diff(in + (size_t)i * LEN, LEN, 400 + (unsigned int)i);

		CHECK(d < 0, "back-pressure: message %d byte %ld differs", i, d);
	}
	/* a receiver with room for 3 unexpected messages gets 20 */
	o.queue = 0;
	REQUIRE(xw_endpoint__open(IF_A, 9, &o, &e9) == 0, "open 9");
	a9 = addr_of(e9);
	memset(in, 0, (size_t)N * LEN);
	for (int i = 0; i < 20; i++)
		REQUIRE(xw_endpoint__isend(e1, &a9, out + (size_t)i * LEN, LEN, 0x900 + (__u64)i,
					   &sq[i]) == 0, "isend %d", i);
	for (int i = 0; i < 50; i++) {
		xw_endpoint__progress(e1);
		xw_endpoint__progress(e9);
	}
	CHECK(xwt_ep_stats(e9).local_rx_held > 0, "9: nothing left in the ring over its bound");
	for (int i = 0; i < 20; i++) {
		REQUIRE(xw_endpoint__irecv(e9, in + (size_t)i * LEN, LEN, 0x900 + (__u64)i, ~0ULL,
					   &rq[i]) == 0, "irecv %d", i);
	}
	progress_all(e1, e9, rq, st, 20, "held records");
	for (int i = 0; i < 20; i++) {
		long d = xwt_first_diff(in + (size_t)i * LEN, LEN, 400 + (unsigned int)i);

		CHECK(d < 0 && st[i].error == 0, "held records: message %d byte %ld differs", i, d);
	}
	progress_all(e1, e9, sq, st, 20, "held records sends");
	all_local(e9, "held records");
	all_local(e3, "back-pressure");
	xw_endpoint__close(e9);
	free(in);
	free(out);
}

/* A child's end: tell A (@what), then progress @ep slowly until killed. */
static void until_killed(int fd, struct xw_endpoint *ep, const char *what)
{
	bar(fd, ep, what);
	for (int i = 0; i < 60000; i++) {
		xw_endpoint__progress(ep);
		usleep(1000);
	}
	CHECK(0, "%s: not killed", who);
}

/* A large send of @tx to @rx (both here), the receive posted late: not
 * complete before @rx read it; @rx reads it in its own pass and answers
 * with a mark (@armed false: no frame) or, @tx armed (asleep), with the
 * NOTIFY frame that wakes it; the send completes at @tx's next pass. */
static void done_once(struct xw_endpoint *tx, struct xw_endpoint *rx, bool armed,
		      unsigned int seed)
{
	size_t len = 300000;
	unsigned char *out = malloc(len), *in = malloc(len);
	struct xw_addr dst = addr_of(rx);
	struct xw_request *sr, *rr;
	struct xw_endpoint_stats t0, r0, t1, r1;
	XW_OPTS(xw_status, st);
	long d;

	REQUIRE(out && in, "malloc");
	xwt_fill(out, len, seed);
	REQUIRE(xw_endpoint__isend(tx, &dst, out, len, 0x800 + seed, &sr) == 0, "isend");
	for (int i = 0; i < 50; i++) {
		xw_endpoint__progress(tx);
		xw_endpoint__progress(rx);
	}
	CHECK(!xw_request__done(sr), "mark: the send completed before a receive took it");
	t0 = xwt_ep_stats(tx);
	r0 = xwt_ep_stats(rx);
	if (armed)
		REQUIRE(xw_endpoint__arm(tx) == 0, "mark: arm the sender");
	REQUIRE(xw_endpoint__irecv(rx, in, len, 0x800 + seed, ~0ULL, &rr) == 0, "irecv");
	REQUIRE(xw_request__test(rr, &st) == 1 && st.error == 0 && st.len == len,
		"mark: the receive did not complete at once (read): error %d", st.error);
	d = xwt_first_diff(in, len, seed);
	CHECK(d < 0, "mark: byte %ld differs", d);
	r1 = xwt_ep_stats(rx);
	CHECK(r1.local_cma_reads == r0.local_cma_reads + 1, "mark: not read from the buffer");
	CHECK(!xw_request__done(sr), "mark: the send completed without its pass");
	if (armed) {
		CHECK(r1.local_cma_marks == r0.local_cma_marks &&
			      r1.local_tx_frames == r0.local_tx_frames + 1,
		      "mark: to a sleeping sender %llu marks, %llu frames (0, the NOTIFY expected)",
		      (unsigned long long)(r1.local_cma_marks - r0.local_cma_marks),
		      (unsigned long long)(r1.local_tx_frames - r0.local_tx_frames));
		CHECK(xw_endpoint__disarm(tx) == 1, "mark: the sleeping sender was not woken");
	} else {
		CHECK(r1.local_cma_marks == r0.local_cma_marks + 1 &&
			      r1.local_tx_frames == r0.local_tx_frames,
		      "mark: %llu marks, %llu frames (1, 0 expected)",
		      (unsigned long long)(r1.local_cma_marks - r0.local_cma_marks),
		      (unsigned long long)(r1.local_tx_frames - r0.local_tx_frames));
	}
	xw_endpoint__progress(tx);
	REQUIRE(xw_request__test(sr, &st) == 1, "mark: the send not complete after its pass");
	CHECK(st.error == 0 && st.len == len, "mark: send error %d len %zu", st.error, st.len);
	t1 = xwt_ep_stats(tx);
	CHECK(t1.local_cma_done == t0.local_cma_done + !armed &&
		      t1.local_rx_frames == t0.local_rx_frames + armed,
	      "mark: the sender completed %llu sends by a mark, took %llu frames",
	      (unsigned long long)(t1.local_cma_done - t0.local_cma_done),
	      (unsigned long long)(t1.local_rx_frames - t0.local_rx_frames));
	free(out);
	free(in);
}

/* Read large messages end with a mark in the sender's inbox, not a NOTIFY
 * frame - but where the sender sleeps; more marks than a slot holds
 * (8 MiB in 40 messages of 200 KiB in flight) and both ways at once. */
static void mark_part(struct xw_endpoint *e1, struct xw_endpoint *e3)
{
	enum { N = 40, LEN = 200000 };
	unsigned char *buf = malloc((size_t)4 * N * LEN);
	struct xw_request *r[4 * N];
	struct xw_status st[4 * N];
	struct xw_addr a1 = addr_of(e1), a3 = addr_of(e3);
	__u64 t0;

	REQUIRE(buf, "malloc");
	done_once(e1, e3, false, 400);
	done_once(e3, e1, false, 401);
	done_once(e1, e3, true, 402);
	for (int i = 0; i < N; i++) {
		unsigned char *o = buf + (size_t)i * LEN, *o2 = o + (size_t)N * LEN;
		unsigned char *in = o2 + (size_t)N * LEN, *in2 = in + (size_t)N * LEN;

		xwt_fill(o, LEN, 410 + (unsigned int)i);
		xwt_fill(o2, LEN, 460 + (unsigned int)i);
		REQUIRE(xw_endpoint__irecv(e3, in, LEN, 0x900 + (__u64)i, ~0ULL, &r[2 * N + i]) == 0 &&
				xw_endpoint__irecv(e1, in2, LEN, 0x980 + (__u64)i, ~0ULL,
						   &r[3 * N + i]) == 0,
			"irecv");
		REQUIRE(xw_endpoint__isend(e1, &a3, o, LEN, 0x900 + (__u64)i, &r[i]) == 0 &&
				xw_endpoint__isend(e3, &a1, o2, LEN, 0x980 + (__u64)i, &r[N + i]) == 0,
			"isend");
	}
	for (int i = 0; i < 4 * N; i++)
		st[i] = (struct xw_status){ .sz = sizeof(st[i]) };
	t0 = xwu_now_ns();
	for (int i = 0, left = 4 * N; left; i = (i + 1) % (4 * N)) {
		if (r[i] && xw_request__test(r[i], &st[i]) == 1) {
			r[i] = NULL;
			left--;
		}
		xw_endpoint__progress(e1);
		xw_endpoint__progress(e3);
		REQUIRE(xwu_now_ns() - t0 < (__u64)TMO * 1000000ULL, "marks: not done");
	}
	for (int i = 0; i < 4 * N; i++)
		CHECK(st[i].error == 0 && st[i].len == LEN, "marks %d: error %d len %zu", i,
		      st[i].error, st[i].len);
	for (int i = 0; i < N; i++) {
		long d = xwt_first_diff(buf + (size_t)(2 * N + i) * LEN, LEN, 410 + (unsigned int)i),
		     d2 = xwt_first_diff(buf + (size_t)(3 * N + i) * LEN, LEN, 460 + (unsigned int)i);

		CHECK(d < 0 && d2 < 0, "marks %d: byte %ld / %ld differs", i, d, d2);
	}
	free(buf);
}

/* F: endpoint 9 on queue 3 (reads its peers' buffers) takes A's large
 * message unmatched, and waits to be killed. */
static void host_f(int fd)
{
	struct xw_endpoint *ep;

	xwt_chan_who = who = "F";
	ep = open_ep(9, 3, 0);
	while (xwt_ep_stats(ep).unexpected_msgs == 0)
		xw_endpoint__progress(ep);
	until_killed(fd, ep, "arrived");
}

/* G: endpoint 11 on queue 3 takes one message and waits to be killed. */
static void host_g(int fd)
{
	struct xw_endpoint *ep;
	struct xw_request *r;
	XW_OPTS(xw_status, st);
	char buf[16] = "";

	xwt_chan_who = who = "G";
	ep = open_ep(11, 3, 0);
	REQUIRE(xw_endpoint__irecv(ep, buf, sizeof(buf), 0xb00, ~0ULL, &r) == 0, "irecv");
	bar(fd, ep, "open");
	REQUIRE(xw_request__wait(r, &st, TMO) == 0 && st.error == 0 && !strcmp(buf, "stopped"),
		"G: the message (%d)", st.error);
	until_killed(fd, ep, "got");
}

/* A local peer stopped (descheduled, a busy rank) for longer than rto_max
 * while our handshake and first message wait in its ring: nothing is
 * resent (it has not read them; it is alive), and it takes them when it
 * runs again. */
static void stopped_peer_part(void)
{
	struct xw_endpoint *e12 = open_ep(12, 0, 0);
	struct xw_addr a11 = addr_of(e12);
	struct xw_endpoint_stats s;
	struct xw_request *req;
	XW_OPTS(xw_status, st);
	int fg, status;
	__u64 t0;
	pid_t g;

	a11.ep = 11;
	a11.nonce = 0;
	g = spawn(&fg, host_g);
	bar(fg, e12, "open");
	REQUIRE(kill(g, SIGSTOP) == 0, "stop G");
	REQUIRE(xw_endpoint__isend(e12, &a11, "stopped", 8, 0xb00, &req) == 0, "isend to G");
	t0 = xwu_now_ns();
	while (xwu_now_ns() - t0 < 700000000ULL) { /* rto_max is 250 ms */
		xw_endpoint__progress(e12);
		usleep(1000);
	}
	REQUIRE(kill(g, SIGCONT) == 0, "continue G");
	bar(fg, e12, "got");
	CHECK(xw_request__wait(req, &st, TMO) == 0 && st.error == 0, "the send to G: %d",
	      st.error);
	s = xwt_ep_stats(e12);
	CHECK(s.retransmits == 0 && s.tx_by_type[XW_PKT_CONNECT] == 1 && s.conn_timeouts == 0,
	      "stopped peer: %llu frames resent (%llu CONNECTs sent), %llu timeouts",
	      (unsigned long long)s.retransmits, (unsigned long long)s.tx_by_type[XW_PKT_CONNECT],
	      (unsigned long long)s.conn_timeouts);
	kill(g, SIGKILL);
	REQUIRE(waitpid(g, &status, 0) == g, "reap G");
	close(fg);
	xw_endpoint__close(e12);
}

/* A large send to a receiver that could read it and dies first: the send
 * fails after give_up_ms, it does not wait forever for a mark. */
static void killed_reader_part(void)
{
	struct xw_endpoint *e10 = open_ep(10, 0, 400);
	unsigned char *big = malloc(BIG);
	struct xw_addr a9 = addr_of(e10);
	struct xw_request *req;
	XW_OPTS(xw_status, st);
	int ff, status, err;
	__u64 t0;
	pid_t f;

	REQUIRE(big, "malloc");
	xwt_fill(big, BIG, 11);
	a9.ep = 9;
	a9.nonce = 0;
	f = spawn(&ff, host_f);
	REQUIRE(xw_endpoint__isend(e10, &a9, big, BIG, 0xa00, &req) == 0, "isend to F");
	bar(ff, e10, "arrived");
	kill(f, SIGKILL);
	REQUIRE(waitpid(f, &status, 0) == f, "reap F");
	close(ff);
	t0 = xwu_now_ns();
	err = xw_request__wait(req, &st, 10000);
	CHECK(err == 0 && (st.error == -ETIMEDOUT || st.error == -ECONNRESET),
	      "the send to the killed reader: %s / status %d", xw_strerror(err), st.error);
	CHECK(xwu_now_ns() - t0 < 8000000000ULL, "the send failed only after %llu ms",
	      (unsigned long long)((xwu_now_ns() - t0) / 1000000));
	xw_endpoint__close(e10);
	free(big);
}

/* The process that holds a sender's pid now is not the sender (it died
 * and its pid went to another): the reader's check of the owner's nonce,
 * in the same process_vm_readv, refuses it and the message is pulled,
 * every byte checked.  The pid's holder, planted in the inbox header: a
 * child the sender forked (its copy of the sender's memory, the nonce's
 * page zeroed: MADV_WIPEONFORK) and a process running another program. */
static void impostor_part(void)
{
	struct xw_endpoint *rx = open_ep(14, 0, 0);

	for (int v = 0; v < 2; v++) {
		struct xw_endpoint *tx = open_ep((__u16)(v ? 15 : 13), 0, 0);
		struct xwi_local_hdr *h = inbox_map(v ? 15 : 13);
		int pp[2], status;
		__u32 owner = h->owner_pid;
		__u64 r0;
		pid_t x;

		CHECK(h->read_nonce && h->read_nonce_addr, "%d: the inbox names no nonce", v);
		r0 = xwt_ep_stats(rx).local_cma_reads;
		xfer_here(tx, rx, 65536, 0, 70 + (unsigned int)v, "read from the owner");
		CHECK(xwt_ep_stats(rx).local_cma_reads == r0 + 1, "%d: not read from the owner", v);
		REQUIRE(pipe(pp) == 0, "pipe");
		fflush(stdout);
		fflush(stderr);
		x = fork();
		REQUIRE(x >= 0, "fork");
		if (x == 0) {
			char c;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(pp[1]);
			if (v)
				execlp("sleep", "sleep", "60", (char *)NULL);
			_exit(read(pp[0], &c, 1) < 0);
		}
		close(pp[0]);
		__atomic_store_n(&h->owner_pid, (__u32)x, __ATOMIC_SEQ_CST);
		r0 = xwt_ep_stats(rx).local_cma_reads;
		xfer_here(tx, rx, 65536 + 4096, 0, 72 + (unsigned int)v, "impostor");
		CHECK(xwt_ep_stats(rx).local_cma_reads == r0 &&
			      xwt_ep_stats(rx).local_cma_fallbacks == 0,
		      "%s holds the sender's pid: %llu read from it, %llu refusals",
		      v ? "another program" : "a forked child",
		      (unsigned long long)(xwt_ep_stats(rx).local_cma_reads - r0),
		      (unsigned long long)xwt_ep_stats(rx).local_cma_fallbacks);
		__atomic_store_n(&h->owner_pid, owner, __ATOMIC_SEQ_CST);
		close(pp[1]);
		if (v)
			kill(x, SIGKILL);
		REQUIRE(waitpid(x, &status, 0) == x, "reap the impostor");
		munmap(h, XWI_LOCAL_FILE_BYTES);
		all_local(tx, "impostor");
		xw_endpoint__close(tx);
	}
	all_local(rx, "impostor");
	xw_endpoint__close(rx);
}

/* More senders than a receiver polls (XWI_LOCAL_POLLED): the first ones
 * polled, the others through pending bits; every message of every sender
 * arrives, in order per sender, also to a blocking wait. */
static void many_part(struct xw_endpoint *rx)
{
	enum { NS = XWI_LOCAL_POLLED + 3, NM = 16, LEN = 100 };
	XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root, .queue = 0);
	struct xw_endpoint *tx[NS];
	struct xw_request *rq[NS * NM], *sq[NS * NM];
	struct xw_status st[NS * NM];
	static unsigned char in[NS * NM][LEN], out[NS * NM][LEN];
	struct xw_addr to = addr_of(rx);
	int polled = 0, last;

	for (int i = 0; i < NS; i++)
		REQUIRE(xw_endpoint__open(IF_A, (__u16)(40 + i), &o, &tx[i]) == 0, "open %d",
			40 + i);
	for (int round = 0; round < 2; round++) {
		for (int k = 0; k < NS * NM; k++) {
			xwt_fill(out[k], LEN, 900 + (unsigned int)(k + round));
			memset(in[k], 0, LEN);
			/* the same tag per sender: the order decides */
			REQUIRE(xw_endpoint__irecv(rx, in[k], LEN, 0xa00 + (__u64)(k % NS), ~0ULL,
						   &rq[k]) == 0, "irecv %d", k);
		}
		for (int m = 0; m < NM; m++)
			for (int i = 0; i < NS; i++)
				REQUIRE(xw_endpoint__isend(tx[i], &to, out[m * NS + i], LEN,
							   0xa00 + (__u64)i, &sq[m * NS + i]) == 0,
					"isend %d/%d", i, m);
		last = NS * NM;
		if (round) {
			/* a blocking wait (it collects the request): its arm
			 * check finds the frames in the polled rings and
			 * through the pending bits */
			XW_OPTS(xw_wait_opts, w, .timeout_set = true, .timeout_ms = TMO,
				.strategy = XW_WAIT_BLOCK);
			st[--last] = (struct xw_status){ .sz = sizeof(st[0]) };
			REQUIRE(xw_request__wait_opts(rq[last], &st[last], &w) == 0,
				"many: the blocking wait for the last message");
		}
		for (int k = 0; k < last; k++)
			progress_all(rx, tx[k % NS], &rq[k], &st[k], 1, "many: receives");
		for (int k = 0; k < NS * NM; k++) {
			long d = xwt_first_diff(in[k], LEN, 900 + (unsigned int)(k + round));

			CHECK(st[k].error == 0 && st[k].len == LEN && d < 0,
			      "many: message %d of sender %d: error %d, byte %ld differs", k / NS,
			      k % NS, st[k].error, d);
		}
		for (int k = 0; k < NS * NM; k++)
			progress_all(tx[k % NS], rx, &sq[k], &st[k], 1, "many: sends");
	}
	for (int i = 0; i < NS; i++)
		polled += polls(to.ep, (__u16)(40 + i));
	CHECK(polled > 0 && polled <= XWI_LOCAL_POLLED, "many: %d of %d senders polled", polled,
	      NS);
	all_local(rx, "many");
	for (int i = 0; i < NS; i++)
		xw_endpoint__close(tx[i]);
}

/* E: endpoint 8 on queue 3 sends 4 MiB to A's endpoint 7, unmatched, and
 * waits to be killed. */
static void host_e(int fd)
{
	unsigned char *big = malloc(4u << 20);
	struct xw_endpoint *ep;
	struct xw_request *req;
	struct xw_addr a7;

	xwt_chan_who = who = "E";
	REQUIRE(big, "malloc");
	xwt_fill(big, 4u << 20, 9);
	ep = open_ep(8, 3, 0);
	get(fd, &a7, sizeof(a7));
	REQUIRE(xw_endpoint__isend(ep, &a7, big, 4u << 20, 0x700, &req) == 0, "E: isend");
	until_killed(fd, ep, "sent");
}

/* A large message whose sender dies before it is matched: the receive
 * (its single-copy read fails) ends with a clear error after give_up_ms. */
static void killed_sender_part(void)
{
	struct xw_endpoint *e7 = open_ep(7, 0, 400);
	unsigned char *buf = malloc(4u << 20);
	struct xw_addr a7 = addr_of(e7);
	struct xw_request *req;
	XW_OPTS(xw_status, st);
	__u64 t0;
	int fe, status, err;
	pid_t e;

	REQUIRE(buf, "malloc");
	e = spawn(&fe, host_e);
	put(fe, &a7, sizeof(a7));
	bar(fe, e7, "sent");
	t0 = xwu_now_ns();
	while (xwt_ep_stats(e7).unexpected_msgs == 0) {
		xw_endpoint__progress(e7);
		REQUIRE(xwu_now_ns() - t0 < 10000000000ULL, "E's message did not arrive");
	}
	kill(e, SIGKILL);
	REQUIRE(waitpid(e, &status, 0) == e, "reap E");
	close(fe);
	t0 = xwu_now_ns();
	REQUIRE(xw_endpoint__irecv(e7, buf, 4u << 20, 0x700, ~0ULL, &req) == 0, "irecv");
	err = xw_request__wait(req, &st, 10000);
	CHECK(err == 0 && (st.error == -ETIMEDOUT || st.error == -ECONNRESET),
	      "the receive from the killed sender: %s / status %d", xw_strerror(err), st.error);
	CHECK(xwu_now_ns() - t0 < 8000000000ULL, "the receive failed only after %llu ms",
	      (unsigned long long)((xwu_now_ns() - t0) / 1000000));
	CHECK(xwt_ep_stats(e7).local_cma_fallbacks == 0,
	      "7: a dead sender counted as a refused single copy");
	xw_endpoint__close(e7);
	free(buf);
}

static void cleanup_inboxes(void)
{
	struct stat st;

	/* Inboxes of killed processes stay behind: ours go with us. */
	if (getpid() == main_pid && !stat("/proc/self/ns/net", &st))
		xwt_sh("rm -f /dev/shm/xdpwake-%llu-*", (unsigned long long)st.st_ino);
}

int main(void)
{
	struct xw_endpoint *e1, *e3;
	struct xw_addr a1, a2, a3;
	pid_t b;
	int fb, status;

	xwt_chan_who = who;
	xwt_chan_tmo_s = 120;
	main_pid = getpid();
	xwt_private_netns();
	snprintf(pin_root, sizeof(pin_root), "%s", xwt_pin_root());
	atexit(cleanup_inboxes);
	if (xwt_sh("ip link add " IF_A " numtxqueues 4 numrxqueues 4 type veth peer name " IF_B
		   " numtxqueues 4 numrxqueues 4"))
		xwt_skip("cannot create a multi-queue veth pair");
	REQUIRE(xwt_sh("ip link set " IF_A " up && ip link set " IF_B " up") == 0, "links up");

	e1 = open_ep(1, 0, 0);
	e3 = open_ep(3, 0, 0);
	a1 = addr_of(e1);
	a3 = addr_of(e3);
	b = spawn(&fb, host_b);
	get(fb, &a2, sizeof(a2));
	put(fb, &a1, sizeof(a1));
	put(fb, &a3, sizeof(a3));

	/* (a) */
	sizes_peer(fb, e1, &a2, 0);
	bar(fb, e1, "sizes done");
	sizes_here(e1, e3);
	all_local(e1, "sizes");
	all_local(e3, "sizes");
	CHECK(xwt_ep_stats(e1).local_cma_reads >= 6 && xwt_ep_stats(e1).local_cma_fallbacks == 0,
	      "1: %llu large messages read from the sender's buffer",
	      (unsigned long long)xwt_ep_stats(e1).local_cma_reads);
	printf("sizes: done\n");
	/* (f) */
	threshold_part(e1, e3);
	mark_part(e1, e3);
	all_local(e1, "marks");
	all_local(e3, "marks");
	cma_part(e1);
	impostor_part();
	printf("single copy, its marks, its fallback and a reused pid: done\n");
	backpressure_part(e1, e3);
	printf("back-pressure: done\n");
	many_part(e3);
	printf("many senders: done\n");
	/* (b), (c) */
	trunc_cancel(fb, e1, &a2, 0);
	printf("truncation and cancel: done\n");
	wake_part(fb, e1, &a2, 0);
	printf("wakes: done\n");
	/* (d) */
	kill_part(fb, e3, &a2);
	printf("kill: done\n");
	killed_sender_part();
	printf("killed sender: done\n");
	killed_reader_part();
	printf("killed reader: done\n");
	stopped_peer_part();
	printf("stopped peer: done\n");
	REQUIRE(waitpid(b, &status, 0) == b, "reap B");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "B failed (status %#x)", status);
	/* (e) */
	corrupt_part(e1, e3);
	printf("corrupt records: done\n");
	abi_part(e1);
	stale_pin_part(e1, e3);
	printf("stale shared map: done\n");
	xw_endpoint__close(e3);
	xw_endpoint__close(e1);
	return xwt_done();
}
