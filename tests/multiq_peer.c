// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * multiq_peer - one process of tests/test_multiq.sh: an endpoint on the
 * first free queue of IFACE (XW_QUEUE_ANY, UDP encapsulation) exchanging
 * messages with every other endpoint of the run: those of the other host
 * over the wire, those of its own host through the shared-memory path.
 *
 *   multiq_peer IFACE ID DIR ALL PEERS VICTIMS ROUNDS
 *
 * Environment: XW_MQ_SIZES (message sizes, a comma list of up to 4;
 * default 100,6000,70000,300000), XW_MQ_WAIT (the endpoint's wait
 * strategy, e.g. block), XW_MQ_GIVE_UP_MS (default 2000).
 *
 * ALL: every id of the run (both hosts), PEERS: the ids to exchange with
 * (its own id is skipped),
 * VICTIMS: ids the test kills mid-transfer ("-": none), all comma lists.
 * DIR is shared by the run's processes:
 *   addr.ID     written once open: "ADDRESS QUEUE PID"
 *   started.ID  written after the first round (the test kills a victim then)
 *   done.ID     all rounds done; quiet.ID: this process calls no more
 *               library functions that could send (no-kill runs only);
 *               counted.ID: it read its counters (it closes, sending
 *               CLOSEs, once every process has)
 * Each round, to and from every peer, one message of every size class
 * (SMALL, MEDIUM = eager over several frames, RNDV > eager_max), every byte
 * of a pattern of (sender, receiver, round, size) checked.  Exchanges with
 * a victim are not waited for: they may fail once it is dead, and must not
 * hold up the rest.  A victim runs rounds until it is killed.
 *
 * Prints one line "RESULT key=value..." (the test checks the counters):
 * queue, port, ok (messages received and checked), bad (wrong bytes or
 * errors with non-victims), the XDP program's counters of this endpoint
 * since it opened (redirected, drop_queue, drop_other) and the endpoint's
 * (tx, rx, rx_bad, and of those the local path's local_tx, local_rx,
 * local_lost, local_rx_bad), and liveness: answered (PROBEs the XDP program
 * answered for this endpoint with XDP_TX: in the prober's tx, never
 * redirected; the answer is redirected to the prober, in nobody's tx),
 * probes (PROBEs this endpoint sent), replies (answers it took as signs of
 * life).  Exit 0 when every exchange with a non-victim passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xdpwake.h"
#include "measure.h"
#include "rand.h"

#define MAXP 128
#define MAXSIZES 4
#define MAX_ROUNDS 100000
/* SMALL, MEDIUM, RNDV (eager_max 32 KiB); XW_MQ_SIZES=100 (a comma list)
 * for small messages only. */
static size_t sizes[MAXSIZES] = { 100, 6000, 70000, 300000 };
static int NSIZES = MAXSIZES;

static int all[MAXP], nall, peers[MAXP], npeers, victims[MAXP], nvictims, me;
static const char *dir;

static __u64 now_ms(void)
{
	return xwu_now_ns() / 1000000;
}

static int parse_list(const char *s, int *out)
{
	int n = 0;

	if (!strcmp(s, "-"))
		return 0;
	while (*s && n < MAXP) {
		out[n++] = (int)strtol(s, (char **)&s, 10);
		if (*s == ',')
			s++;
	}
	return n;
}

static bool is_victim(int id)
{
	for (int i = 0; i < nvictims; i++)
		if (victims[i] == id)
			return true;
	return false;
}

static void put_file(const char *name, int id, const char *text)
{
	char p[512], t[520];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s.%d", dir, name, id);
	snprintf(t, sizeof(t), "%s.tmp", p);
	f = fopen(t, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(t, p)) {
		fprintf(stderr, "peer %d: cannot write %s\n", me, p);
		exit(2);
	}
}

static bool have_file(const char *name, int id)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s.%d", dir, name, id);
	return access(p, F_OK) == 0;
}

/* Wait (bounded) until every id in @ids has file @name, progressing.  A
 * file seen is not looked for again, and without an endpoint to progress
 * the look is every 10 ms: 128 processes looking for 127 files each every
 * millisecond took the two cores from the ones still opening. */
static bool wait_all(struct xw_endpoint *ep, const char *name, const int *ids, int n, int ms)
{
	__u64 end = now_ms() + (__u64)ms;
	bool seen[MAXP] = { false };
	int have = 0;

	for (;;) {
		for (int i = 0; i < n; i++)
			if (!seen[i] && have_file(name, ids[i])) {
				seen[i] = true;
				have++;
			}
		if (have == n)
			return true;
		if (now_ms() > end)
			return false;
		if (ep)
			xw_endpoint__progress(ep);
		usleep(ep ? 1000 : 10000);
	}
}

static __u64 tag(int src, int round, int s)
{
	return (__u64)src << 48 | (__u64)round << 8 | (__u64)s;
}

static void fill(__u8 *b, size_t len, __u64 t, int dst)
{
	__u64 x = t * 0x9E3779B97F4A7C15ULL + (__u64)dst * 0xBF58476D1CE4E5B9ULL + 1;

	for (size_t i = 0; i < len; i++)
		b[i] = (__u8)xwu_xorshift64(&x);
}

struct op {
	struct xw_request *req;
	__u8 *buf;
	size_t len;
	__u64 tag;
	int peer;
	bool recv;
};

static struct op *vops; /* exchanges with victims, settled at the end */
static int nvops, capvops;

static void keep_victim_op(const struct op *o)
{
	if (nvops == capvops) {
		capvops = capvops ? capvops * 2 : 64;
		vops = realloc(vops, sizeof(*vops) * (size_t)capvops);
		if (!vops)
			exit(2);
	}
	vops[nvops++] = *o;
}

static int check_recv(const struct op *o, const struct xw_status *st, __u8 *want)
{
	if (st->error || st->len != o->len || st->match != o->tag) {
		fprintf(stderr, "peer %d: from %d: error %d, %zu bytes (want %zu), match %#llx (want %#llx)\n",
			me, o->peer, st->error, st->len, o->len, (unsigned long long)st->match,
			(unsigned long long)o->tag);
		return 1;
	}
	fill(want, o->len, o->tag, me);
	if (memcmp(want, o->buf, o->len)) {
		fprintf(stderr, "peer %d: from %d: %zu bytes differ\n", me, o->peer, o->len);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct xw_addr paddr[MAXP], self;
	XW_OPTS(xw_stats, x0);
	XW_OPTS(xw_stats, x1);
	XW_OPTS(xw_stats, i0);
	XW_OPTS(xw_stats, i1);
	struct xw_endpoint_stats es = { .sz = sizeof(es) };
	struct xw_endpoint *ep;
	struct xw_iface *ifc;
	XW_OPTS(xw_status, st);
	char text[256], atext[64];
	int rounds, err, ok = 0, bad = 0, verrs = 0, vok = 0;
	__u64 t_open;
	bool victim;
	__u8 *want;

	if (argc != 8) {
		fprintf(stderr, "usage: multiq_peer IFACE ID DIR ALL PEERS VICTIMS ROUNDS\n");
		return 2;
	}
	if (getenv("XW_MQ_SIZES")) {
		const char *p = getenv("XW_MQ_SIZES");

		for (NSIZES = 0; *p && NSIZES < MAXSIZES; NSIZES++) {
			sizes[NSIZES] = strtoul(p, (char **)&p, 10);
			if (*p == ',')
				p++;
		}
		if (!NSIZES)
			return 2;
	}
	me = atoi(argv[2]);
	dir = argv[3];
	nall = parse_list(argv[4], all);
	npeers = parse_list(argv[5], peers);
	for (int i = 0; i < npeers; i++)
		if (peers[i] == me)
			peers[i--] = peers[--npeers];
	nvictims = parse_list(argv[6], victims);
	victim = is_victim(me);
	rounds = victim ? MAX_ROUNDS : atoi(argv[7]);
	{
		size_t most = 0;

		for (int s = 0; s < NSIZES; s++)
			most = sizes[s] > most ? sizes[s] : most;
		want = malloc(most ? most : 1);
	}
	if (!want)
		return 2;

	XW_OPTS(xw_endpoint_opts, o, .queue = XW_QUEUE_ANY, .encap = XW_ENCAP_UDP,
		.give_up_ms = 2000);
	/* XW_MQ_WAIT=block: ranks sleep in their waits (many per core). */
	if (getenv("XW_MQ_WAIT")) {
		int w = xw_wait_strategy_parse(getenv("XW_MQ_WAIT"));

		if (w < 0)
			return 2;
		o.wait_strategy = (__u32)w;
	}
	/* XW_MQ_GIVE_UP_MS: a loaded run's peers answer late. */
	if (getenv("XW_MQ_GIVE_UP_MS"))
		o.give_up_ms = (__u32)atoi(getenv("XW_MQ_GIVE_UP_MS"));
	t_open = xwu_now_ns();
	err = xw_endpoint__open(argv[1], (__u16)me, &o, &ep);
	if (err) {
		fprintf(stderr, "peer %d: open %s: %s\n", me, argv[1], xw_strerror(err));
		return 2;
	}
	t_open = xwu_now_ns() - t_open;
	ifc = xw_endpoint__iface(ep);
	xw_iface__stats(ifc, me, &x0);
	xw_iface__stats(ifc, XW_STATS_IFACE, &i0);
	xw_endpoint__addr(ep, &self);
	xw_addr_format(&self, atext, sizeof(atext));
	snprintf(text, sizeof(text), "%s %d %d\n", atext, xw_endpoint__queue(ep), (int)getpid());
	put_file("addr", me, text);

	/* The peers' addresses. */
	if (!wait_all(NULL, "addr", peers, npeers, 30000 + 1000 * npeers)) {
		fprintf(stderr, "peer %d: peers' addresses missing after %d s\n", me,
			30 + npeers);
		return 2;
	}
	for (int i = 0; i < npeers; i++) {
		char p[512];
		FILE *f;

		memset(&paddr[i], 0, sizeof(paddr[i]));
		snprintf(p, sizeof(p), "%s/addr.%d", dir, peers[i]);
		f = fopen(p, "r");
		if (!f || fscanf(f, "%63s", atext) != 1 || xw_addr_parse(atext, &paddr[i])) {
			fprintf(stderr, "peer %d: bad address file %s\n", me, p);
			return 2;
		}
		fclose(f);
	}

	for (int r = 0; r < rounds; r++) {
		struct op ops[MAXP * MAXSIZES * 2];
		int nops = 0;
		__u64 end;

		for (int i = 0; i < npeers; i++)
			for (int s = 0; s < NSIZES; s++) {
				struct op *op = &ops[nops++];

				op->recv = true;
				op->peer = peers[i];
				op->len = sizes[s];
				op->tag = tag(peers[i], r, s);
				op->buf = malloc(op->len);
				if (!op->buf)
					return 2;
				err = xw_endpoint__irecv(ep, op->buf, op->len, op->tag, ~0ULL, &op->req);
				if (err) {
					fprintf(stderr, "peer %d: irecv: %s\n", me, xw_strerror(err));
					return 2;
				}
			}
		for (int i = 0; i < npeers; i++)
			for (int s = 0; s < NSIZES; s++) {
				struct op *op = &ops[nops++];
				__u64 t_end = now_ms() + 10000;

				op->recv = false;
				op->peer = peers[i];
				op->len = sizes[s];
				op->tag = tag(me, r, s);
				op->buf = malloc(op->len);
				if (!op->buf)
					return 2;
				fill(op->buf, op->len, op->tag, peers[i]);
				/* -EAGAIN: the send backlog is full; progress drains it. */
				while ((err = xw_endpoint__isend(ep, &paddr[i], op->buf, op->len,
								 op->tag, &op->req)) == -EAGAIN &&
				       now_ms() < t_end)
					xw_endpoint__progress(ep);
				if (err) {
					fprintf(stderr, "peer %d: isend to %d: %s\n", me, peers[i],
						xw_strerror(err));
					return 2;
				}
			}
		/* Everything with the non-victims completes, every byte right. */
		end = now_ms() + 30000;
		for (int k = 0; k < nops; k++) {
			struct op *op = &ops[k];
			__u64 t = now_ms();

			if (is_victim(op->peer)) {
				keep_victim_op(op);
				continue;
			}
			err = xw_request__wait(op->req, &st, t < end ? (int)(end - t) : 0);
			if (err) {
				fprintf(stderr, "peer %d: round %d, %s %d, %zu bytes: %s\n", me, r,
					op->recv ? "from" : "to", op->peer, op->len, xw_strerror(err));
				bad++;
				if (err == -ETIMEDOUT)
					xw_request__cancel(op->req);
				continue;
			}
			if (op->recv) {
				if (check_recv(op, &st, want))
					bad++;
				else
					ok++;
			} else if (st.error) {
				fprintf(stderr, "peer %d: send to %d: %s\n", me, op->peer,
					xw_strerror(st.error));
				bad++;
			}
			free(op->buf);
		}
		if (r == 0)
			put_file("started", me, "1\n");
		if (bad)
			break;
	}

	/* Exchanges with victims: they complete or fail (the victim died);
	 * what arrived from one is still checked byte for byte. */
	if (nvops) {
		__u64 end = now_ms() + 2000 + 5000;

		for (int k = 0; k < nvops; k++) {
			struct op *op = &vops[k];
			__u64 t = now_ms();

			if (op->recv && !xw_request__done(op->req))
				xw_request__cancel(op->req);
			err = xw_request__wait(op->req, &st, t < end ? (int)(end - t) : 0);
			if (err) {
				fprintf(stderr, "peer %d: exchange with victim %d did not settle: %s\n",
					me, op->peer, xw_strerror(err));
				bad++;
				continue;
			}
			if (op->recv && !st.error) {
				if (check_recv(op, &st, want))
					bad++;
				else
					vok++;
			} else if (st.error) {
				verrs++;
			} else {
				vok++;
			}
		}
	}

	/* Without victims the counters must add up exactly: every process
	 * stops sending before any reads them.  Linger first so the last
	 * acknowledgements are through, then fall quiet together. */
	put_file("done", me, "1\n");
	if (!nvictims) {
		__u64 linger;

		if (!wait_all(ep, "done", all, nall, 60000)) {
			fprintf(stderr, "peer %d: the others did not finish within 60 s\n", me);
			bad++;
		}
		linger = now_ms() + 500;
		while (now_ms() < linger)
			xw_endpoint__progress(ep);
		put_file("quiet", me, "1\n");
		if (!wait_all(NULL, "quiet", all, nall, 30000)) {
			fprintf(stderr, "peer %d: the others did not fall quiet\n", me);
			bad++;
		}
		usleep(200000);
		/* Take what is still in the RX ring (acknowledgements: nothing
		 * answers them). */
		for (int i = 0; i < 100 && xw_endpoint__progress(ep) > 0; i++)
			;
	}
	xw_iface__stats(ifc, me, &x1);
	xw_iface__stats(ifc, XW_STATS_IFACE, &i1);
	xw_endpoint__stats(ep, &es);
	printf("RESULT id=%d queue=%d port=%u ok=%d bad=%d victim_ok=%d victim_err=%d "
	       "redirected=%llu drop_queue=%llu drop_other=%llu iface_drops=%llu tx=%llu rx=%llu "
	       "rx_bad=%llu local_tx=%llu local_rx=%llu local_lost=%llu local_rx_bad=%llu "
	       "answered=%llu probes=%llu replies=%llu open_ms=%llu\n",
	       me, xw_endpoint__queue(ep), ntohs(self.port), ok, bad, vok, verrs,
	       (unsigned long long)(x1.frames_redirected - x0.frames_redirected),
	       (unsigned long long)(x1.drop_queue - x0.drop_queue),
	       (unsigned long long)((x1.drop_endpoint - x0.drop_endpoint) +
				    (x1.drop_session - x0.drop_session) +
				    (x1.drop_nosocket - x0.drop_nosocket)),
	       (unsigned long long)((i1.drop_short - i0.drop_short) +
				    (i1.drop_version - i0.drop_version) +
				    (i1.drop_length - i0.drop_length) + (i1.drop_frag - i0.drop_frag) +
				    (i1.drop_type - i0.drop_type) +
				    (i1.drop_endpoint - i0.drop_endpoint)),
	       (unsigned long long)es.tx_frames, (unsigned long long)es.rx_frames,
	       (unsigned long long)es.rx_bad, (unsigned long long)es.local_tx_frames,
	       (unsigned long long)es.local_rx_frames, (unsigned long long)es.local_lost,
	       (unsigned long long)es.local_rx_bad,
	       (unsigned long long)(x1.probes_answered - x0.probes_answered),
	       (unsigned long long)es.live_probes,
	       (unsigned long long)es.live_replies, (unsigned long long)(t_open / 1000000));
	fflush(stdout);
	/* Closing sends a CLOSE to every peer: not before all have counted. */
	if (!nvictims) {
		put_file("counted", me, "1\n");
		if (!wait_all(NULL, "counted", all, nall, 30000)) {
			fprintf(stderr, "peer %d: the others did not count their frames\n", me);
			bad++;
		}
	}
	xw_endpoint__close(ep);
	return bad ? 1 : 0;
}
