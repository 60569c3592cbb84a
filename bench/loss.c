// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * loss - recovery time under frame loss (issue 26), xdpwake against TCP.
 *
 * Hosts A and B of the fault harness (tests/lib/fault.h): three network
 * namespaces, a middle that drops frames with tc BPF on its ingress
 * (tests/bpf/impair.bpf.c; with tcp_port set it impairs the TCP segments
 * of that port the same way).  Per row, in one run and one topology:
 *
 *   random   loss p in both directions (every frame type, pure ACKs and
 *            PULLs included), a mixed workload of message sizes 0 B - 4 MiB
 *            one way (A -> B) or both ways at once; every byte is checked
 *            at the receiver.
 *   burst    1 MiB from A, a 0 B answer from B, N rounds: in every round the
 *            middle drops 50 consecutive data frames of the 1 MiB message
 *            (PULL_REPLY frames 350-399; TCP: segments with payload
 *            300-349), against the same rounds without the burst.
 *
 * xdpwake rows use the public API only (include/xdpwake.h): time, the
 * endpoint counters of both hosts (retransmits, per type, duplicates
 * received, and loss recovery's: timer expiries, resends on acks, tail
 * probes, lost and spurious retransmissions, RTT samples) and the RTO over
 * time (rto_ns, sampled about every half millisecond: a point per change),
 * and the silences of at least 2 ms (nothing sent or received).  TCP rows: the same workload over one
 * connection per direction (8-byte length, then the bytes), TCP_INFO
 * (tcpi_rto over time, retransmissions) and the hosts' TcpExt counters.
 *
 * Output: one JSON document on stdout (userspace/util/json.c); progress on
 * stderr.  bench/loss.sh runs it, bench/loss_report.py tabulates and plots.
 *
 *   loss [--quick] [--smoke] [--only SUBSTR] [--seed N]
 *
 * --smoke: a small workload at 5 % loss, both transports, both ways; the
 * exit status says whether every byte arrived (no timing is judged).
 */
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>

#include "chan.h"
#include "fault.h"
#include "json.h"
#include "measure.h"
#include "xdpwake.h"

#define EP 3
#define TCP_PORT 5201
#define WIN 4			/* messages in flight per direction            */
#define MIB (1024 * 1024)
#define BIG (4 * MIB)		/* the largest message                         */
#define STALL_NS 2000000ULL	/* a silence at least this long is a stall     */
#define MAX_EV 4096
#define BURST_FIRST_XW 350	/* PULL_REPLY frames of a 1 MiB message: ~750 */
#define BURST_FIRST_TCP 300	/* TCP segments of 1 MiB: ~725                 */

enum { NETSTAT_TIMEOUTS, NETSTAT_TLP, NETSTAT_TLP_REC, NETSTAT_FAST, NETSTAT_SLOWSTART,
       NETSTAT_LOSTRTX, NETSTAT_SPURIOUS_RTO, NETSTAT_DSACK_RECV, NETSTAT_SACK_REC, NETSTAT_N };
static const char *const netstat_keys[NETSTAT_N] = {
	"TCPTimeouts",	   "TCPLossProbes",   "TCPLossProbeRecovery", "TCPFastRetrans",
	"TCPSlowStartRetrans", "TCPLostRetransmit", "TCPSpuriousRTOs", "TCPDSACKRecv",
	"TCPSackRecovery",
};

struct row {
	char name[48];
	bool tcp;
	bool both;	/* random: both ways at once                  */
	double loss;	/* random loss, both directions               */
	int burst;	/* burst rows: frames dropped per round (0: reference) */
	bool burst_row;
	unsigned nmsg;	/* messages per direction, or burst rounds    */
};

struct ev {
	float t_ms, v_ms;
};

struct host_res {
	int errors;
	__u64 msgs_rx, bytes_rx, msgs_tx;
	double time_ms;
	struct xw_endpoint_stats st;
	__u64 stalls;		/* silences >= 2 ms                             */
	double stall_ms;	/* their total                                  */
	__u64 tcp_retrans;
	__s64 netstat[NETSTAT_N];
	unsigned nround;
	float round_ms[64];
	unsigned nev;		/* the RTO over time: a point per change        */
	struct ev ev[MAX_EV];
};

static struct {
	struct host_res h[2];
} *shm;

static unsigned run_seed = 1;
static bool quick;

static __u64 mix(__u64 z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Message @i from host @from: 4 MiB every 75th (or the last of a short
 * run), 0 B one in twenty, otherwise log-uniform in [1 B, 1 MiB]. */
static size_t msg_size(const struct row *r, int from, unsigned i)
{
	__u64 h = mix(run_seed * 1000003ULL + (__u64)from * 7919 + i);

	if (r->burst_row)
		return from == XWF_HOST_A ? MIB : 0;
	if (i % 75 == 74 || (r->nmsg < 75 && i == r->nmsg - 1))
		return BIG;
	if (h % 20 == 0)
		return 0;
	return (size_t)exp((double)(h >> 11) / (double)(1ULL << 53) * log((double)MIB));
}

static unsigned data_seed(int from, unsigned i)
{
	return run_seed * 7u + (unsigned)from * 100003u + i;
}

static double ms_since(unsigned long long t0)
{
	return (double)(xwu_now_ns() - t0) / 1e6;
}

static void add_ev(struct host_res *res, double t_ms, double v_ms)
{
	if (res->nev < MAX_EV)
		res->ev[res->nev++] = (struct ev){ (float)t_ms, (float)v_ms };
}

static bool check_msg(const unsigned char *buf, size_t got, size_t want, unsigned seed)
{
	return got == want && xwt_first_diff(buf, want, seed) < 0;
}

/* The loss of a random row, both directions, every frame type. */
static void impair_random(struct xwf_topo *t, const struct row *r)
{
	struct xwf_cfg c = { .drop_p = XWF_P(r->loss) };

	xwf_set(t, XWF_A_TO_B, r->loss > 0 ? &c : NULL);
	xwf_set(t, XWF_B_TO_A, r->loss > 0 ? &c : NULL);
}

/* The next round's burst: data frames A -> B, counted from now. */
static void impair_burst(struct xwf_topo *t, const struct row *r)
{
	struct xwf_cfg c = { .type_mask = r->tcp ? XWF_TYPE(XWF_TCP_DATA) :
						   XWF_TYPE(XW_PKT_PULL_REPLY),
			     .drop_first = r->tcp ? BURST_FIRST_TCP : BURST_FIRST_XW,
			     .drop_n = (__u32)r->burst };

	xwf_set(t, XWF_A_TO_B, r->burst ? &c : NULL);
}

/* ------------------------------------------------------------------ */
/* xdpwake                                                            */

struct slot {
	struct xw_request *rq;
	unsigned i;
	size_t len;
	unsigned char *buf;
};

struct xw_host {
	struct xw_endpoint *ep;
	struct xw_addr peer;
	struct host_res *res;
	unsigned long long t0, last_act, last_sample;
	__u64 tx, rx, rto;
};

/* Sample the counters: the RTO when it changed; silences of at least
 * STALL_NS. */
static void xw_sample(struct xw_host *h)
{
	struct xw_endpoint_stats s = { .sz = sizeof(s) };
	unsigned long long now = xwu_now_ns();

	if (now - h->last_sample < 500000)
		return;
	h->last_sample = now;
	xw_endpoint__stats(h->ep, &s);
	if (s.rto_ns && s.rto_ns != h->rto) {
		add_ev(h->res, (double)(now - h->t0) / 1e6, (double)s.rto_ns / 1e6);
		h->rto = s.rto_ns;
	}
	if (s.tx_frames == h->tx && s.rx_frames == h->rx)
		return;
	if (now - h->last_act >= STALL_NS) {
		h->res->stalls++;
		h->res->stall_ms += (double)(now - h->last_act) / 1e6;
	}
	h->last_act = now;
	h->tx = s.tx_frames;
	h->rx = s.rx_frames;
}

/* A completed request of slot @s (@rx: a receive from the peer). */
static void xw_done(struct xw_host *h, struct slot *s, const struct xw_status *st, bool rx,
		    int peer)
{
	if (st->error) {
		fprintf(stderr, "loss: message %u %s: %s\n", s->i, rx ? "receive" : "send",
			xw_strerror(st->error));
		h->res->errors++;
	} else if (rx) {
		if (!check_msg(s->buf, st->len, s->len, data_seed(peer, s->i))) {
			fprintf(stderr, "loss: message %u: %zu bytes, %zu wanted, or wrong bytes\n",
				s->i, st->len, s->len);
			h->res->errors++;
		}
		h->res->msgs_rx++;
		h->res->bytes_rx += st->len;
	} else {
		h->res->msgs_tx++;
	}
	s->rq = NULL;
}

/* Keep up to WIN sends and WIN receives posted until all are done. */
static void xw_stream(struct xw_host *h, const struct row *r, int self, bool send, bool recv)
{
	struct slot tx[WIN] = {}, rx[WIN] = {};
	unsigned ntx = send ? r->nmsg : 0, nrx = recv ? r->nmsg : 0;
	unsigned next_tx = 0, next_rx = 0, done = 0;
	XW_OPTS(xw_status, st);
	int peer = self ^ 1, err;

	for (int k = 0; k < WIN; k++) {
		tx[k].buf = malloc(BIG);
		rx[k].buf = malloc(BIG);
		REQUIRE(tx[k].buf && rx[k].buf, "malloc");
	}
	while (done < ntx + nrx) {
		for (int k = 0; k < WIN; k++) {
			struct slot *s = &tx[k];

			if (s->rq || next_tx >= ntx)
				continue;
			s->i = next_tx;
			s->len = msg_size(r, self, s->i);
			xwt_fill(s->buf, s->len, data_seed(self, s->i));
			err = xw_endpoint__isend(h->ep, &h->peer, s->buf, s->len, s->i, &s->rq);
			if (err == -EAGAIN) {
				s->rq = NULL;
				break;
			}
			REQUIRE(err == 0, "isend: %s", xw_strerror(err));
			next_tx++;
		}
		for (int k = 0; k < WIN; k++) {
			struct slot *s = &rx[k];

			if (s->rq || next_rx >= nrx)
				continue;
			s->i = next_rx++;
			s->len = msg_size(r, peer, s->i);
			err = xw_endpoint__irecv(h->ep, s->buf, BIG, s->i, ~0ULL, &s->rq);
			REQUIRE(err == 0, "irecv: %s", xw_strerror(err));
		}
		/* Wait on one pending request (1 ms at most), then look at all. */
		for (int k = 0; k < 2 * WIN; k++) {
			struct slot *s = k < WIN ? &tx[k] : &rx[k - WIN];

			if (!s->rq)
				continue;
			err = xw_request__wait(s->rq, &st, 1);
			if (err == 0) {
				xw_done(h, s, &st, k >= WIN, peer);
				done++;
			}
			break;
		}
		for (int k = 0; k < 2 * WIN; k++) {
			struct slot *s = k < WIN ? &tx[k] : &rx[k - WIN];

			if (s->rq && xw_request__test(s->rq, &st) == 1) {
				xw_done(h, s, &st, k >= WIN, peer);
				done++;
			}
		}
		xw_sample(h);
	}
	for (int k = 0; k < WIN; k++) {
		free(tx[k].buf);
		free(rx[k].buf);
	}
}

/* Blocking with samples: wait for @rq in 1 ms steps. */
static void xw_finish(struct xw_host *h, struct xw_request *rq, struct xw_status *st)
{
	int err;

	while ((err = xw_request__wait(rq, st, 1)) == -ETIMEDOUT)
		xw_sample(h);
	REQUIRE(err == 0, "wait: %s", xw_strerror(err));
	xw_sample(h);
}

static void xw_bursts(struct xwf_topo *t, struct xw_host *h, const struct row *r)
{
	unsigned char *buf = malloc(MIB);
	struct xw_request *rq;
	XW_OPTS(xw_status, st);

	REQUIRE(buf, "malloc");
	for (unsigned i = 0; i < r->nmsg; i++) {
		unsigned long long t1 = xwu_now_ns();

		if (t->self == XWF_HOST_A) {
			impair_burst(t, r);
			xwt_fill(buf, MIB, data_seed(XWF_HOST_A, i));
			REQUIRE(xw_endpoint__isend(h->ep, &h->peer, buf, MIB, i, &rq) == 0, "isend");
			xw_finish(h, rq, &st);
			REQUIRE(xw_endpoint__irecv(h->ep, NULL, 0, i, ~0ULL, &rq) == 0, "irecv");
			xw_finish(h, rq, &st);
			h->res->msgs_tx++;
		} else {
			REQUIRE(xw_endpoint__irecv(h->ep, buf, MIB, i, ~0ULL, &rq) == 0, "irecv");
			xw_finish(h, rq, &st);
			if (st.error || !check_msg(buf, st.len, MIB, data_seed(XWF_HOST_A, i)))
				h->res->errors++;
			h->res->msgs_rx++;
			h->res->bytes_rx += st.len;
			REQUIRE(xw_endpoint__isend(h->ep, &h->peer, NULL, 0, i, &rq) == 0, "isend");
			xw_finish(h, rq, &st);
		}
		if (h->res->nround < sizeof(h->res->round_ms) / sizeof(h->res->round_ms[0]))
			h->res->round_ms[h->res->nround++] = (float)ms_since(t1);
	}
	free(buf);
}

static int xw_host_run(struct xwf_topo *t, const struct row *r, struct host_res *res)
{
	struct xw_host h = { .res = res };
	struct xw_addr me;
	int err;

	snprintf(xwt_pin_dir, sizeof(xwt_pin_dir), "/sys/fs/bpf/xwloss-%d", (int)getpid());
	atexit(xwt_pin_cleanup);
	XW_OPTS(xw_endpoint_opts, o, .pin_root = xwt_pin_dir, .give_up_ms = 600000);
	err = xw_endpoint__open(t->ifname[t->self], EP, &o, &h.ep);
	REQUIRE(err == 0, "open: %s", xw_strerror(err));
	xw_endpoint__addr(h.ep, &me);
	xwt_xchg(t->chan, NULL, &me, &h.peer, sizeof(me));
	/* The session first (its handshake is not part of the measurement). */
	{
		struct xw_request *rq;
		XW_OPTS(xw_status, st);

		REQUIRE(xw_endpoint__isend(h.ep, &h.peer, NULL, 0, ~0ULL, &rq) == 0, "isend");
		REQUIRE(xw_request__wait(rq, &st, 10000) == 0, "warm-up send");
		REQUIRE(xw_endpoint__recv(h.ep, NULL, 0, ~0ULL, ~0ULL, &st, 10000) == 0,
			"warm-up receive");
	}
	xwt_bar(t->chan, h.ep, "warm");
	if (t->self == XWF_HOST_A && !r->burst_row)
		impair_random(t, r);
	xwt_bar(t->chan, h.ep, "start");
	h.t0 = h.last_act = h.last_sample = xwu_now_ns();
	if (r->burst_row)
		xw_bursts(t, &h, r);
	else
		xw_stream(&h, r, t->self, t->self == XWF_HOST_A || r->both,
			  t->self == XWF_HOST_B || r->both);
	res->time_ms = ms_since(h.t0);
	xwt_bar(t->chan, h.ep, "done");
	res->st.sz = sizeof(res->st);
	xw_endpoint__stats(h.ep, &res->st);
	xw_endpoint__close(h.ep);
	return 0;
}

/* ------------------------------------------------------------------ */
/* TCP                                                                */

static void netstat_read(__s64 *v)
{
	char names[8192], vals[8192];
	FILE *f = fopen("/proc/self/net/netstat", "r");

	memset(v, 0, NETSTAT_N * sizeof(*v));
	if (!f)
		return;
	while (fgets(names, sizeof(names), f) && fgets(vals, sizeof(vals), f)) {
		char *sn, *sv, *n = strtok_r(names, " \n", &sn), *x = strtok_r(vals, " \n", &sv);

		if (!n || strcmp(n, "TcpExt:"))
			continue;
		while ((n = strtok_r(NULL, " \n", &sn)) && (x = strtok_r(NULL, " \n", &sv)))
			for (int k = 0; k < NETSTAT_N; k++)
				if (!strcmp(n, netstat_keys[k]))
					v[k] = strtoll(x, NULL, 10);
	}
	fclose(f);
}

struct tcp_dir {
	int fd;
	unsigned i, n;		/* current message, messages in all */
	size_t off, len;	/* bytes of message i done, its length (+ 8 header) */
	unsigned char hdr[8];
	unsigned char *buf;
};

/* Write as much of the current message as the socket takes; 1 when all
 * messages are out. */
static int tcp_tx(struct tcp_dir *d, const struct row *r, int self)
{
	while (d->i < d->n) {
		ssize_t k;

		if (d->off == 0) {
			size_t len = msg_size(r, self, d->i);

			for (int b = 0; b < 8; b++)
				d->hdr[b] = (unsigned char)((__u64)len >> (8 * b));
			xwt_fill(d->buf, len, data_seed(self, d->i));
			d->len = len + 8;
		}
		if (d->off < 8)
			k = send(d->fd, d->hdr + d->off, 8 - d->off, MSG_DONTWAIT | MSG_NOSIGNAL);
		else
			k = send(d->fd, d->buf + d->off - 8, d->len - d->off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k < 0) {
			REQUIRE(errno == EAGAIN || errno == EINTR, "tcp send: %s", strerror(errno));
			return 0;
		}
		d->off += (size_t)k;
		if (d->off == d->len) {
			d->off = 0;
			d->i++;
		}
	}
	return 1;
}

/* Read what has arrived; 1 when all messages are in. */
static int tcp_rx(struct tcp_dir *d, const struct row *r, int peer, struct host_res *res)
{
	while (d->i < d->n) {
		ssize_t k;

		if (d->off < 8) {
			k = recv(d->fd, d->hdr + d->off, 8 - d->off, MSG_DONTWAIT);
		} else {
			k = recv(d->fd, d->buf + d->off - 8, d->len - d->off, MSG_DONTWAIT);
		}
		if (k < 0) {
			REQUIRE(errno == EAGAIN || errno == EINTR, "tcp recv: %s", strerror(errno));
			return 0;
		}
		REQUIRE(k > 0, "tcp: the peer closed early");
		d->off += (size_t)k;
		if (d->off == 8) {
			__u64 len = 0;

			for (int b = 0; b < 8; b++)
				len |= (__u64)d->hdr[b] << (8 * b);
			REQUIRE(len <= BIG, "tcp: length %llu", (unsigned long long)len);
			d->len = len + 8;
		}
		if (d->off >= 8 && d->off == d->len) {
			size_t want = msg_size(r, peer, d->i);

			if (!check_msg(d->buf, d->len - 8, want, data_seed(peer, d->i))) {
				fprintf(stderr, "loss: tcp message %u wrong\n", d->i);
				res->errors++;
			}
			res->msgs_rx++;
			res->bytes_rx += d->len - 8;
			d->off = 0;
			d->i++;
		}
	}
	return 1;
}

static void tcp_rto_sample(int fd, struct host_res *res, unsigned long long t0, __u32 *last)
{
	struct tcp_info ti;
	socklen_t l = sizeof(ti);

	if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l))
		return;
	if (ti.tcpi_rto != *last) {
		*last = ti.tcpi_rto;
		add_ev(res, ms_since(t0), ti.tcpi_rto / 1000.0);
	}
}

static int tcp_host_run(struct xwf_topo *t, const struct row *r, struct host_res *res)
{
	bool send_ = t->self == XWF_HOST_A || r->both || r->burst_row;
	bool recv_ = t->self == XWF_HOST_B || r->both || r->burst_row;
	struct tcp_dir tx = { .fd = -1 }, rx = { .fd = -1 };
	int lfd = -1, one = 1, peer = t->self ^ 1;
	__s64 ns0[NETSTAT_N];
	unsigned long long t0, last_s = 0;
	__u32 last_rto = 0;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(TCP_PORT) };

	/* Burst rows: A's message and B's answer share A's connection. */
	bool listen_ = r->burst_row ? t->self == XWF_HOST_B : recv_;
	bool connect_ = r->burst_row ? t->self == XWF_HOST_A : send_;

	tx.buf = malloc(BIG);
	rx.buf = malloc(BIG);
	REQUIRE(tx.buf && rx.buf, "malloc");
	if (listen_) {
		lfd = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		REQUIRE(bind(lfd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(lfd, 4) == 0,
			"tcp listen: %s", strerror(errno));
	}
	xwt_bar(t->chan, NULL, "listen");
	if (connect_) {
		tx.fd = socket(AF_INET, SOCK_STREAM, 0);
		inet_pton(AF_INET, t->ip[peer], &a.sin_addr);
		REQUIRE(connect(tx.fd, (struct sockaddr *)&a, sizeof(a)) == 0, "tcp connect: %s",
			strerror(errno));
		setsockopt(tx.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	if (listen_) {
		rx.fd = accept(lfd, NULL, NULL);
		REQUIRE(rx.fd >= 0, "accept: %s", strerror(errno));
		setsockopt(rx.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		close(lfd);
	}
	if (r->burst_row) {
		/* One connection: A sends on it and reads B's answer from it. */
		if (t->self == XWF_HOST_A)
			rx.fd = tx.fd;
		else
			tx.fd = rx.fd;
	}
	xwt_bar(t->chan, NULL, "warm");
	if (t->self == XWF_HOST_A && !r->burst_row)
		impair_random(t, r);
	xwt_bar(t->chan, NULL, "start");
	netstat_read(ns0);
	t0 = xwu_now_ns();
	if (r->burst_row) {
		for (unsigned i = 0; i < r->nmsg; i++) {
			unsigned long long t1 = xwu_now_ns();
			bool a_ = t->self == XWF_HOST_A;

			if (a_)
				impair_burst(t, r);
			tx.i = rx.i = i;
			tx.n = rx.n = i + 1;
			tx.off = rx.off = 0;
			/* A: the message, then the answer; B: the other way round. */
			for (int step = 0; step < 2; step++) {
				bool sending = (step == 0) == a_;
				struct pollfd pf = { .fd = tx.fd, .events = sending ? POLLOUT : POLLIN };

				while (!(sending ? tcp_tx(&tx, r, t->self) :
						   tcp_rx(&rx, r, peer, res))) {
					poll(&pf, 1, 1);
					tcp_rto_sample(tx.fd, res, t0, &last_rto);
				}
			}
			if (a_)
				res->msgs_tx++;
			if (res->nround < sizeof(res->round_ms) / sizeof(res->round_ms[0]))
				res->round_ms[res->nround++] = (float)ms_since(t1);
		}
	} else {
		bool tx_done = !send_, rx_done = !recv_;

		tx.n = send_ ? r->nmsg : 0;
		rx.n = recv_ ? r->nmsg : 0;
		while (!tx_done || !rx_done) {
			struct pollfd pf[2] = { { .fd = tx_done ? -1 : tx.fd, .events = POLLOUT },
						{ .fd = rx_done ? -1 : rx.fd, .events = POLLIN } };

			poll(pf, 2, 1);
			if (!tx_done && tcp_tx(&tx, r, t->self)) {
				tx_done = true;
				res->msgs_tx = tx.n;
			}
			if (!rx_done)
				rx_done = tcp_rx(&rx, r, peer, res);
			if (xwu_now_ns() - last_s >= 1000000) {
				last_s = xwu_now_ns();
				tcp_rto_sample(tx.fd, res, t0, &last_rto);
			}
		}
	}
	res->time_ms = ms_since(t0);
	xwt_bar(t->chan, NULL, "done");
	if (tx.fd >= 0) {
		struct tcp_info ti;
		socklen_t l = sizeof(ti);

		if (!getsockopt(tx.fd, IPPROTO_TCP, TCP_INFO, &ti, &l))
			res->tcp_retrans = ti.tcpi_total_retrans;
	}
	netstat_read(res->netstat);
	for (int k = 0; k < NETSTAT_N; k++)
		res->netstat[k] -= ns0[k];
	xwt_bar(t->chan, NULL, "counted");
	if (tx.fd >= 0)
		close(tx.fd);
	if (rx.fd >= 0 && rx.fd != tx.fd)
		close(rx.fd);
	free(tx.buf);
	free(rx.buf);
	return 0;
}

static int host(struct xwf_topo *t, void *arg)
{
	const struct row *r = arg;
	struct host_res *res = &shm->h[t->self];

	memset(res, 0, sizeof(*res));
	return r->tcp ? tcp_host_run(t, r, res) : xw_host_run(t, r, res);
}

/* ------------------------------------------------------------------ */
/* Rows and output                                                    */

static void json_counters(const char *key, const struct xwf_counters *c)
{
	static const char *const names[] = { "seen", "matched", "dropped", "dropped_burst" };
	const __u64 v[] = { c->seen, c->matched, c->dropped, c->dropped_list };

	json_key(key);
	json_obj_begin();
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
		json_kv_u64(names[k], v[k]);
	json_obj_end();
}

/* The endpoint counters each xdpwake host reports. */
#define XW_KEY(f) { #f, offsetof(struct xw_endpoint_stats, f) }
static const struct {
	const char *name;
	size_t off;
} xw_keys[] = {
	XW_KEY(retransmits),  XW_KEY(tx_frames),    XW_KEY(rx_frames),	  XW_KEY(rx_dup_frames),
	XW_KEY(rx_dup),	      XW_KEY(rx_out_of_order), XW_KEY(rx_ctrl_frames), XW_KEY(rto_timeouts),
	XW_KEY(fast_rtx),     XW_KEY(sack_rtx),	    XW_KEY(tail_probes),  XW_KEY(lost_rtx),
	XW_KEY(spurious_rtx), XW_KEY(rtt_samples),  XW_KEY(rtt_skipped),  XW_KEY(sack_ignored),
};

static void json_host(const struct row *r, const struct host_res *h)
{
	json_obj_begin();
	json_kv_double("time_ms", h->time_ms);
	json_kv_i64("errors", h->errors);
	json_kv_u64("msgs_tx", h->msgs_tx);
	json_kv_u64("msgs_rx", h->msgs_rx);
	json_kv_u64("bytes_rx", h->bytes_rx);
	if (r->tcp) {
		json_kv_u64("retransmits", h->tcp_retrans);
		json_key("tcpext");
		json_obj_begin();
		for (int k = 0; k < NETSTAT_N; k++)
			json_kv_i64(netstat_keys[k], h->netstat[k]);
		json_obj_end();
	} else {
		for (size_t k = 0; k < sizeof(xw_keys) / sizeof(xw_keys[0]); k++)
			json_kv_u64(xw_keys[k].name,
				    *(const __u64 *)((const char *)&h->st + xw_keys[k].off));
		json_key("tx_by_type");
		json_obj_begin();
		for (unsigned k = 1; k < XW_PKT_TYPE_MAX; k++)
			json_kv_u64(xw_pkt_type_name(k), h->st.tx_by_type[k]);
		json_obj_end();
		json_key("rtx_by_type");
		json_obj_begin();
		for (unsigned k = 1; k < XW_PKT_TYPE_MAX; k++)
			json_kv_u64(xw_pkt_type_name(k), h->st.rtx_by_type[k]);
		json_obj_end();
		json_kv_u64("stalls", h->stalls);
		json_kv_double("stall_ms", h->stall_ms);
		json_kv_double("rto_end_ms", (double)h->st.rto_ns / 1e6);
		json_kv_double("srtt_end_ms", (double)h->st.srtt_ns / 1e6);
	}
	json_key("rounds_ms");
	json_arr_begin();
	for (unsigned k = 0; k < h->nround; k++)
		json_double(h->round_ms[k]);
	json_arr_end();
	/* [t, RTO] at each change (xdpwake: rto_ns; TCP: tcpi_rto). */
	json_key("rto_ms");
	json_arr_begin();
	for (unsigned k = 0; k < h->nev; k++) {
		json_arr_begin();
		json_double(h->ev[k].t_ms);
		json_double(h->ev[k].v_ms);
		json_arr_end();
	}
	json_arr_end();
	json_obj_end();
}

static int run_row(struct xwf_topo *t, struct row *r, int timeout_ms)
{
	struct xwf_counters ab, ba;
	double tmax = 0;
	int rc, errors = 0;

	xwf_clear(t);
	xwf_reset_counters(t);
	fprintf(stderr, "loss: %-22s ...", r->name);
	rc = xwf_run(t, host, host, r, timeout_ms);
	ab = xwf_counters(t, XWF_A_TO_B);
	ba = xwf_counters(t, XWF_B_TO_A);
	xwf_clear(t);
	for (int h = 0; h < 2; h++) {
		errors += shm->h[h].errors;
		if (shm->h[h].time_ms > tmax)
			tmax = shm->h[h].time_ms;
	}
	fprintf(stderr, " %s %.0f ms, dropped %llu/%llu\n", rc ? "FAILED" : "ok", tmax,
		(unsigned long long)(ab.dropped + ba.dropped),
		(unsigned long long)(ab.seen + ba.seen));
	json_obj_begin();
	json_kv_str("name", r->name);
	json_kv_str("transport", r->tcp ? "tcp" : "xdpwake");
	json_kv_str("workload", r->burst_row ? "burst" : r->both ? "both" : "oneway");
	json_kv_double("loss", r->loss);
	json_kv_i64("burst", r->burst);
	json_kv_u64("nmsg", r->nmsg);
	json_kv_bool("completed", rc == 0);
	json_kv_i64("errors", errors);
	if (rc == 0)
		json_kv_double("time_ms", tmax);
	else
		json_kv_double("time_ms", NAN);
	json_key("wire");
	json_obj_begin();
	json_counters("a_to_b", &ab);
	json_counters("b_to_a", &ba);
	json_obj_end();
	json_key("hosts");
	json_arr_begin();
	for (int h = 0; h < 2; h++)
		json_host(r, &shm->h[h]);
	json_arr_end();
	json_obj_end();
	return rc || errors;
}

static void topo_setup(struct xwf_topo *t)
{
	struct xwf_global g;
	__u32 key = 0;

	xwf_setup(t, &(struct xwf_opts){ .quiet = true });
	if (xwt_sh("mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf"))
		xwt_skip("no bpffs");
	/* Frames, not super-frames: TCP segments of one MSS each way (as
	 * xdpwake's), so a dropped frame is one segment. */
	for (int h = 0; h < 2; h++)
		xwf_sh(t, h, "ethtool -K %s tso off gso off gro off >/dev/null 2>&1", t->ifname[h]);
	xwf_sh(t, XWF_HOST_M, "for i in xwfma xwfmb; do ethtool -K $i tso off gso off gro off; "
			      "done >/dev/null 2>&1");
	REQUIRE(bpf_map_lookup_elem(t->global_fd, &key, &g) == 0, "global map");
	g.tcp_port = TCP_PORT;
	REQUIRE(bpf_map_update_elem(t->global_fd, &key, &g, 0) == 0, "global map");
}

int main(int argc, char **argv)
{
	static const double rates[] = { 0, 0.01, 0.02, 0.05, 0.10, 0.30 };
	static const struct option lo[] = { { "quick", no_argument, NULL, 'q' },
					    { "smoke", no_argument, NULL, 's' },
					    { "only", required_argument, NULL, 'o' },
					    { "seed", required_argument, NULL, 'S' },
					    {} };
	struct row rows[64];
	int nrows = 0, c, fails = 0, timeout_ms;
	const char *only = NULL;
	bool smoke = false;
	unsigned nmsg, rounds;
	struct xwf_topo t;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'q')
			quick = true;
		else if (c == 's')
			smoke = true;
		else if (c == 'o')
			only = optarg;
		else if (c == 'S')
			run_seed = (unsigned)strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	xwt_require_root();
	nmsg = smoke ? 20 : quick ? 40 : 300;
	rounds = smoke ? 2 : quick ? 4 : 10;
	timeout_ms = smoke ? 60000 : quick ? 240000 : 1800000;
	for (int tcp = 0; tcp < 2; tcp++) {
		for (int both = 0; both < 2; both++)
			for (size_t k = 0; k < sizeof(rates) / sizeof(rates[0]); k++) {
				struct row *r = &rows[nrows];

				if (smoke && (rates[k] != 0.05 || !both))
					continue;
				*r = (struct row){ .tcp = tcp, .both = both, .loss = rates[k],
						   .nmsg = nmsg };
				snprintf(r->name, sizeof(r->name), "%s %s %g%%",
					 tcp ? "tcp" : "xdpwake", both ? "both" : "oneway",
					 rates[k] * 100);
				nrows++;
			}
		for (int b = 0; b < 2; b++) {
			struct row *r = &rows[nrows];

			*r = (struct row){ .tcp = tcp, .burst_row = true, .burst = b ? 50 : 0,
					   .nmsg = rounds };
			snprintf(r->name, sizeof(r->name), "%s burst %d", tcp ? "tcp" : "xdpwake",
				 b ? 50 : 0);
			nrows++;
		}
	}
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	REQUIRE(shm != MAP_FAILED, "mmap");
	topo_setup(&t);
	json_obj_begin();
	json_kv_str("bench", "loss");
	json_kv_bool("quick", quick);
	json_kv_bool("smoke", smoke);
	json_kv_u64("seed", run_seed);
	json_kv_u64("harness_seed", t.seed);
	json_kv_u64("nmsg", nmsg);
	{
		double la[3] = {};

		getloadavg(la, 3);
		json_kv_double("loadavg_start", la[0]);
	}
	json_key("rows");
	json_arr_begin();
	for (int i = 0; i < nrows; i++) {
		/* interleave: each xdpwake row next to its TCP row */
		int k = i % 2 ? nrows / 2 + i / 2 : i / 2;

		if (only && !strstr(rows[k].name, only))
			continue;
		fails += run_row(&t, &rows[k], timeout_ms);
	}
	json_arr_end();
	{
		double la[3] = {};

		getloadavg(la, 3);
		json_kv_double("loadavg_end", la[0]);
	}
	json_obj_end();
	xwf_teardown(&t);
	return fails ? 1 : 0;
}
