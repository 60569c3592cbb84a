// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Messages end to end: two processes in two network namespaces joined by a
 * veth pair, each with xdpwake endpoints (real XDP program, AF_XDP
 * sockets).  Every size class and threshold +-1 up to 64 MiB in both
 * directions with early and late receivers, several endpoints and peers,
 * unexpected messages matched in order, truncation, cancel, both
 * encapsulations; payloads verified byte for byte.
 *
 * Host A is this process (after unshare), host B a child in its own
 * namespace; they step through the same script and meet at barriers over a
 * socketpair.
 */
#include <net/if.h>
#include <sys/socket.h>

#include <poll.h>

#include "chan.h"
#include "counters.h"
#include "harness.h"
#include "hosts.h"
#include "xdpwake.h"

#define IF_A "xwma"
#define IF_B "xwmb"
#define IP_A "10.77.0.1"
#define IP_B "10.77.0.2"
#define TMO 20000 /* ms: a hang guard only */

/* The two hosts (hosts.h): hosts.is_b, the channel hosts.chan[0], this
 * host's pins hosts.pin_root. */
static struct xwt_hosts hosts = { .if_a = IF_A, .if_b = IF_B, .ip_a = IP_A, .ip_b = IP_B };

/* The endpoint the barriers keep progressing (NULL: none open). */
static struct xw_endpoint *bar_ep;

/* Barriers keep bar_ep progressing (chan.h): a host waiting for the other
 * still answers and retransmits (a frame dropped under load, e.g. a late
 * receiver's message, is sent again only while its sender calls the
 * library). */
static void bar(const char *what)
{
	xwt_bar(hosts.chan[0], bar_ep, what);
}

static void xchg_addr(const struct xw_addr *mine, struct xw_addr *theirs)
{
	xwt_xchg(hosts.chan[0], bar_ep, mine, theirs, sizeof(*mine));
}

static struct xw_endpoint *open_ep(const char *ifname, __u16 id, __u32 encap)
{
	struct xw_endpoint *ep;
	int err;

	XW_OPTS(xw_endpoint_opts, o, .pin_root = hosts.pin_root, .encap = encap);
	err = xw_endpoint__open(ifname, id, &o, &ep);
	if (err == -EAFNOSUPPORT)
		xwt_skip("AF_XDP not supported by this kernel");
	REQUIRE(err == 0, "%s: open endpoint %u: %s", hosts.is_b ? "B" : "A", id, xw_strerror(err));
	return ep;
}

static __u64 unexpected_count(struct xw_endpoint *ep)
{
	struct xw_endpoint_stats s = { .sz = sizeof(s) };

	REQUIRE(xw_endpoint__stats(ep, &s) == 0, "stats");
	return s.unexpected_msgs;
}

/* Progress until @n more messages than @base have arrived unexpected (a
 * late receiver: no sleep that a slow sender could outlast; TMO only
 * guards against a hang). */
static void await_unexpected(struct xw_endpoint *ep, __u64 base, __u64 n, const char *what)
{
	__u64 end = xwu_now_ns() + (__u64)TMO * 1000000ULL;

	while (unexpected_count(ep) < base + n) {
		REQUIRE(xwu_now_ns() < end, "%s: %llu of %llu messages arrived in %d ms", what,
			(unsigned long long)(unexpected_count(ep) - base), (unsigned long long)n,
			TMO);
		xw_endpoint__progress(ep);
		usleep(100);
	}
}

/* One message @len from the sender to the receiver, the receive posted
 * before (early) or after (late) the send; both hosts call this. */
static void transfer(struct xw_endpoint *ep, const struct xw_addr *peer, int sender, size_t len,
		     int late, unsigned int seed)
{
	static unsigned char *buf;
	static size_t cap;
	struct xw_request *req;
	XW_OPTS(xw_status, st);
	long d;
	int err;

	buf = xwt_grow(buf, &cap, len + 64);
	if (sender) {
		xwt_fill(buf, len, seed);
		bar(late ? "counted" : "posted");
		/* Late receiver: the send is posted, then the receiver is told;
		 * a large send completes only once the receive is posted. */
		err = xw_endpoint__isend(ep, peer, buf, len, 0x5000 + seed, &req);
		REQUIRE(err == 0, "isend %zu: %s", len, xw_strerror(err));
		if (late)
			bar("sent");
		err = xw_request__wait(req, &st, TMO);
		CHECK(err == 0 && st.error == 0, "send %zu bytes (%s receiver): %s / %d", len,
		      late ? "late" : "early", xw_strerror(err), st.error);
	} else {
		/* read before the sender sends (the barrier) */
		__u64 unexp0 = unexpected_count(ep);

		memset(buf, 0xEE, len + 64);
		if (late) {
			bar("counted");
			/* The message is unexpected (or its RNDV waits) when
			 * the receive is posted: wait until it has arrived. */
			bar("sent");
			await_unexpected(ep, unexp0, 1, "late receiver");
		}
		err = xw_endpoint__irecv(ep, buf, len, 0x5000 + seed, ~0ULL, &req);
		REQUIRE(err == 0, "irecv: %s", xw_strerror(err));
		if (!late)
			bar("posted");
		err = xw_request__wait(req, &st, TMO);
		CHECK(err == 0, "recv %zu bytes: %s", len, xw_strerror(err));
		if (err)
			return;
		CHECK(st.error == 0 && st.len == len && st.msg_len == len &&
		      st.match == 0x5000 + seed && xw_addr_equal(&st.src, peer),
		      "recv %zu (%s): status error %d len %zu msg_len %zu match %#llx", len,
		      late ? "late" : "early", st.error, st.len, st.msg_len,
		      (unsigned long long)st.match);
		d = xwt_first_diff(buf, len, seed);
		CHECK(d < 0, "recv %zu (%s): byte %ld differs", len, late ? "late" : "early", d);
		for (int i = 0; i < 64; i++)
			if (buf[len + i] != 0xEE) {
				CHECK(0, "recv %zu: wrote past the buffer", len);
				break;
			}
	}
}

static void sizes(struct xw_endpoint *ep, const struct xw_addr *peer, const char *encap_name)
{
	size_t P = (size_t)xw_endpoint__frag_payload(ep), E = 32768, B1 = P, B2 = 4 * P;
	size_t list[] = { 0, 1, P - 1, P, P + 1, 2 * P, E - 1, E, E + 1, B1 + B2 - 1, B1 + B2,
			  B1 + B2 + 1, E + 32 * P - 1, E + 32 * P, E + 32 * P + 1, 1 << 20,
			  (1 << 20) + 7, 4u << 20, 64u << 20 };
	unsigned int seed = 1;
	int n = (int)(sizeof(list) / sizeof(list[0]));

	for (int dir = 0; dir < 2; dir++)
		for (int i = 0; i < n; i++)
			for (int late = 0; late < 2; late++) {
				/* 64 MiB once per direction (early), to keep it quick. */
				if (list[i] == (64u << 20) && late)
					continue;
				transfer(ep, peer, dir == hosts.is_b, list[i], late, seed++);
			}
	if (!hosts.is_b)
		printf("%s: %d sizes x 2 directions x early/late receivers, up to 64 MiB\n",
		       encap_name, n);
}

/* Unexpected messages are matched in the order they were sent; posted
 * receives in the order they were posted. */
static void ordering(struct xw_endpoint *ep, const struct xw_addr *peer)
{
	char buf[16][64];
	XW_OPTS(xw_status, st);
	__u64 unexp0 = unexpected_count(ep);

	bar("ordering counted"); /* before A sends */
	if (!hosts.is_b) {
		for (int i = 0; i < 16; i++) {
			snprintf(buf[i], sizeof(buf[i]), "msg %d", i);
			CHECK(xw_endpoint__send(ep, peer, buf[i], 64, 0x700 + (i % 4), TMO) == 0,
			      "send %d", i);
		}
		bar("ordered sent");
		bar("ordered done");
		return;
	}
	bar("ordered sent");
	await_unexpected(ep, unexp0, 16, "ordering");
	/* Wildcard over the low 2 bits: all 16 in send order. */
	for (int i = 0; i < 16; i++) {
		CHECK(xw_endpoint__recv(ep, buf[i], 64, 0x700, ~0x3ULL, &st, TMO) == 0, "recv");
		{
			char want[16];

			snprintf(want, sizeof(want), "msg %d", i);
			CHECK(!strcmp(buf[i], want), "unexpected #%d matched \"%s\"", i, buf[i]);
			CHECK(st.match == 0x700u + (unsigned)(i % 4), "match %#llx",
			      (unsigned long long)st.match);
		}
	}
	bar("ordered done");
}

static void truncate_and_cancel(struct xw_endpoint *ep, const struct xw_addr *peer)
{
	static unsigned char big[100000];
	unsigned char small[1000 + 64];
	struct xw_request *req;
	XW_OPTS(xw_status, st);
	size_t lens[] = { 5000, 100000 };

	for (int k = 0; k < 2; k++) {
		if (!hosts.is_b) {
			xwt_fill(big, lens[k], 99 + k);
			bar("trunc posted");
			CHECK(xw_endpoint__send(ep, peer, big, lens[k], 0x99, TMO) == 0, "send");
			continue;
		}
		memset(small, 0xEE, sizeof(small));
		REQUIRE(xw_endpoint__irecv(ep, small, 1000, 0x99, ~0ULL, &req) == 0, "irecv");
		bar("trunc posted");
		CHECK(xw_request__wait(req, &st, TMO) == 0, "wait");
		CHECK(st.error == -EMSGSIZE && st.len == 1000 && st.msg_len == lens[k],
		      "truncated %zu: error %d len %zu msg_len %zu", lens[k], st.error, st.len,
		      st.msg_len);
		CHECK(xwt_first_diff(small, 1000, 99 + k) < 0, "truncated data differs");
		for (int i = 0; i < 64; i++)
			CHECK(small[1000 + i] == 0xEE, "truncation wrote past the buffer");
	}
	if (hosts.is_b) {
		REQUIRE(xw_endpoint__irecv(ep, small, 10, 0xDEAD, ~0ULL, &req) == 0, "irecv");
		CHECK(xw_request__cancel(req) == 0, "cancel an unmatched receive");
		CHECK(xw_request__wait(req, &st, TMO) == 0 && st.error == -ECANCELED,
		      "cancelled receive: error %d", st.error);
	}
	bar("trunc done");
}

/* Blocking calls give up at their timeout, also once a message is on its
 * way (a large send whose receiver never posts), and the endpoint carries
 * on afterwards. */
static void timeouts(struct xw_endpoint *ep, const struct xw_addr *peer)
{
	static unsigned char big[200000];
	XW_OPTS(xw_status, st);
	__u64 t0 = xwu_now_ns(), ms;
	int err;

	if (!hosts.is_b) {
		err = xw_endpoint__send(ep, peer, big, sizeof(big), 0xABC, 300);
		ms = (xwu_now_ns() - t0) / 1000000;
		CHECK(err == -ETIMEDOUT, "large send nobody receives: %s", xw_strerror(err));
		CHECK(ms >= 290 && ms < 2000, "large send gave up after %llu ms, want ~300",
		      (unsigned long long)ms);
	} else {
		err = xw_endpoint__recv(ep, big, sizeof(big), 0xDEF, ~0ULL, &st, 200);
		ms = (xwu_now_ns() - t0) / 1000000;
		CHECK(err == -ETIMEDOUT && st.error == -ETIMEDOUT, "recv of nothing: %s",
		      xw_strerror(err));
		CHECK(ms >= 190 && ms < 2000, "recv gave up after %llu ms, want ~200",
		      (unsigned long long)ms);
	}
	bar("timeouts");
}

/* Several endpoints on one host, several peers per endpoint. */
static void many(struct xw_endpoint *ep, const struct xw_addr *peer, const char *ifname)
{
	struct xw_endpoint *e2 = open_ep(ifname, 2, XW_ENCAP_ETH);
	struct xw_addr a2, peer2;
	char msg[32], got[32];
	XW_OPTS(xw_status, st);

	xw_endpoint__addr(e2, &a2);
	xchg_addr(&a2, &peer2);
	if (!hosts.is_b) {
		/* A's endpoints 1 and 2 both send to B's endpoints 1 and 2. */
		for (int i = 0; i < 4; i++) {
			snprintf(msg, sizeof(msg), "from %d to %d", 1 + i / 2, 1 + i % 2);
			CHECK(xw_endpoint__send(i / 2 ? e2 : ep, i % 2 ? &peer2 : peer, msg,
						sizeof(msg), 0x42, TMO) == 0,
			      "send %s", msg);
		}
	} else {
		for (int i = 0; i < 4; i++) {
			struct xw_endpoint *rx = i % 2 ? e2 : ep;

			CHECK(xw_endpoint__recv(rx, got, sizeof(got), 0x42, ~0ULL, &st, TMO) == 0,
			      "recv");
			snprintf(msg, sizeof(msg), "from %d to %d", 1 + i / 2, 1 + i % 2);
			/* Per receiving endpoint, messages arrive in send order. */
			CHECK(!strcmp(got, msg), "endpoint %d got \"%s\", want \"%s\"", 1 + i % 2,
			      got, msg);
			CHECK(st.src.ep == 1 + i / 2, "source endpoint %u", st.src.ep);
		}
	}
	bar("many done");
	xw_endpoint__close(e2);
}

/* Progress for @ms milliseconds: delayed acks go out and are taken. */
static void settle_ms(struct xw_endpoint *ep, int ms)
{
	for (int i = 0; i < ms * 10; i++) {
		xw_endpoint__progress(ep);
		usleep(100);
	}
}

/* Frames the reliability layer took that carry no message frame: ACK,
 * CONNECT*, CLOSE, and frames received twice. */
static long long rel_frames(struct xw_endpoint *ep)
{
	struct xw_endpoint_stats s = { .sz = sizeof(s) };

	REQUIRE(xw_endpoint__stats(ep, &s) == 0, "stats");
	return (long long)(s.rx_ctrl_frames + s.rx_dup_frames);
}

/*
 * The marks as the receiving XDP program saw them: for each message class,
 * how many frames arrived with LAT honoured and with MORE, on both hosts.
 * The reliability layer's own frames (acks, the handshake) never carry LAT
 * or MORE; the frame counts leave them out.
 * Defaults: btp1 = P, btp2 = 4P, so the sender pushes K = 5 fragments
 * (RNDV + 4) and the rest is pulled in blocks of 32.
 */
static void marks_on_wire(struct xw_endpoint *ep, const struct xw_addr *peer, __u16 id,
			  __u32 marks)
{
	size_t P = (size_t)xw_endpoint__frag_payload(ep);
	size_t lens[] = { 100, 10000, 300000 };
	const char *names[] = { "small", "medium", "large" };

	for (int k = 0; k < 3; k++) {
		size_t len = lens[k], n = (len + P - 1) / P, pulled = n > 5 ? n - 5 : 0;
		size_t blocks = (pulled + 31) / 32;
		long long lat_rx, more_rx, frames_rx, lat_tx, rel_a, rel_b;
		XW_OPTS(xw_stats, a);
		XW_OPTS(xw_stats, b);

		/* Expected at the receiver (frames from the sender) and at the
		 * sender (PULLs and the NOTIFY from the receiver). */
		if (k == 0) {
			lat_rx = !!(marks & XW_MARK_SMALL);
			more_rx = 0;
			frames_rx = 1;
			lat_tx = 0;
		} else if (k == 1) {
			lat_rx = !!(marks & XW_MARK_MEDIUM);
			more_rx = (long long)n - 1;
			frames_rx = (long long)n;
			lat_tx = 0;
		} else {
			lat_rx = !!(marks & XW_MARK_RNDV) +
				 (marks & XW_MARK_PULL_REPLY ? (long long)blocks : 0);
			more_rx = -1; /* depends on scheduling: checked below */
			frames_rx = (long long)n;
			lat_tx = (marks & XW_MARK_PULL ? (long long)blocks : 0) +
				 !!(marks & XW_MARK_NOTIFY);
		}
		settle_ms(ep, 3);
		bar("marks start");
		settle_ms(ep, 1);
		a = xwt_xdp_stats(ep, id);
		rel_a = rel_frames(ep);
		transfer(ep, peer, !hosts.is_b, len, 0, 900 + k);
		settle_ms(ep, 3);
		bar("marks measured");
		settle_ms(ep, 1);
		b = xwt_xdp_stats(ep, id);
		rel_b = rel_frames(ep);
		if (hosts.is_b) {
			long long lat = (long long)(b.lat_frames - a.lat_frames);
			long long more = (long long)(b.more_frames - a.more_frames);
			long long fr = (long long)(b.frames_redirected - a.frames_redirected) -
				       (rel_b - rel_a);

			CHECK(fr == frames_rx, "marks %#x %s: %lld frames at the receiver, want %lld",
			      marks, names[k], fr, frames_rx);
			CHECK(lat == lat_rx, "marks %#x %s: %lld LAT frames at the receiver, want %lld",
			      marks, names[k], lat, lat_rx);
			if (more_rx >= 0)
				CHECK(more == more_rx, "marks %#x %s: %lld MORE frames, want %lld",
				      marks, names[k], more, more_rx);
			else
				CHECK(more < fr, "marks %#x %s: MORE on every frame (%lld of %lld)",
				      marks, names[k], more, fr);
		} else {
			long long lat = (long long)(b.lat_frames - a.lat_frames);
			long long fr = (long long)(b.frames_redirected - a.frames_redirected) -
				       (rel_b - rel_a);

			CHECK(lat == lat_tx, "marks %#x %s: %lld LAT frames back at the sender, want "
			      "%lld (%zu pull blocks)", marks, names[k], lat, lat_tx, blocks);
			CHECK(fr == (k == 2 ? (long long)blocks + 1 : 0),
			      "marks %#x %s: %lld frames back at the sender", marks, names[k], fr);
		}
	}
	if (!hosts.is_b)
		printf("marks on the wire (mask %#x): small, medium, large as the XDP program "
		       "counted them\n", marks);
}

static void marks_ablation(const char *ifname)
{
	__u32 masks[] = { XW_MARK_ALL & ~XW_MARK_MEDIUM & ~XW_MARK_PULL_REPLY,
			  XW_MARK_ALL & ~XW_MARK_SMALL & ~XW_MARK_RNDV & ~XW_MARK_PULL &
				  ~XW_MARK_NOTIFY,
			  0 };

	for (int i = 0; i < 3; i++) {
		struct xw_endpoint *ep;
		struct xw_addr me, peer;
		int err;

		XW_OPTS(xw_endpoint_opts, o, .pin_root = hosts.pin_root, .marks_set = true,
			.marks = masks[i]);
		err = xw_endpoint__open(ifname, 6, &o, &ep);
		REQUIRE(err == 0, "open with marks %#x: %s", masks[i], xw_strerror(err));
		xw_endpoint__addr(ep, &me);
		xchg_addr(&me, &peer);
		bar_ep = ep;
		marks_on_wire(ep, &peer, 6, masks[i]);
		/* both counted before either closes (a CLOSE to the peer) */
		bar("ablation counted");
		bar_ep = NULL;
		xw_endpoint__close(ep);
		bar("ablation closed");
	}
}

/* After traffic: every UMEM frame is accounted for. */
static void umem_invariant(struct xw_endpoint *ep)
{
	struct xw_endpoint_stats s = { .sz = sizeof(s) };

	for (int i = 0; i < 100; i++) {
		xw_endpoint__progress(ep);
		usleep(100);
	}
	REQUIRE(xw_endpoint__stats(ep, &s) == 0, "stats");
	CHECK(s.umem_frames_fill + s.umem_frames_free_tx + s.umem_frames_tx_inflight ==
		      s.umem_frames_total && s.umem_invariant_violations == 0,
	      "UMEM frames: fill %llu + free %llu + in flight %llu != %llu (violations %llu)",
	      (unsigned long long)s.umem_frames_fill, (unsigned long long)s.umem_frames_free_tx,
	      (unsigned long long)s.umem_frames_tx_inflight,
	      (unsigned long long)s.umem_frames_total,
	      (unsigned long long)s.umem_invariant_violations);
}

static void run_host(const char *ifname)
{
	struct xw_endpoint *ep;
	struct xw_addr me, peer;

	/* Ethernet encapsulation */
	ep = open_ep(ifname, 1, XW_ENCAP_ETH);
	xw_endpoint__addr(ep, &me);
	xchg_addr(&me, &peer);
	bar_ep = ep;
	sizes(ep, &peer, "ethernet");
	ordering(ep, &peer);
	truncate_and_cancel(ep, &peer);
	timeouts(ep, &peer);
	many(ep, &peer, ifname);
	marks_on_wire(ep, &peer, 1, XW_MARK_ALL);
	umem_invariant(ep);
	bar_ep = NULL;
	xw_endpoint__close(ep);
	bar("eth closed");
	marks_ablation(ifname);

	/* UDP encapsulation, endpoint 3 */
	ep = open_ep(ifname, 3, XW_ENCAP_UDP);
	xw_endpoint__addr(ep, &me);
	xchg_addr(&me, &peer);
	bar_ep = ep;
	{
		unsigned int seed = 500;
		size_t P = (size_t)xw_endpoint__frag_payload(ep);
		size_t list[] = { 0, 1, P, P + 1, 32768, 32769, 300000 };

		for (size_t i = 0; i < sizeof(list) / sizeof(list[0]); i++)
			for (int dir = 0; dir < 2; dir++)
				transfer(ep, &peer, dir == hosts.is_b, list[i], (int)(i & 1), seed++);
		if (!hosts.is_b)
			printf("udp: %zu sizes both directions\n", sizeof(list) / sizeof(list[0]));
	}
	bar_ep = NULL;
	xw_endpoint__close(ep);
	bar("udp closed");
	/* The last endpoint closed: the program it attached is gone (while
	 * both hosts, and so the veth pair, still exist). */
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "ip -d link show %s | grep -q 'prog/xdp'", ifname);
		CHECK(xwt_sh("ip link show %s >/dev/null", ifname) == 0 && xwt_sh("%s", cmd) != 0,
		      "%s: XDP program still attached after the last endpoint closed", ifname);
	}
	bar("final");
}

int main(void)
{

	setenv("XDPWAKE_DEBUG", "1", 1); /* the library checks its UMEM invariant */
	xwt_private_netns();
	xwt_pin_root();
	return xwt_hosts_run(&hosts, run_host);
}
