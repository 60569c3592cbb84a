// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * udp_pingpong - kernel UDP sockets as a peer of xdpwake (issue 7,
 * experiment 8): the same ping-pong and one-way stream as `xdpwake
 * pingpong/stream`, the same JSON fields, nothing but send()/recv().
 *
 *   udp_pingpong --server [--port P] [--mode pingpong|stream] [--batch N]
 *                [--wait block|spin|busy-poll] [--so-busy-poll USECS] [--idle-timeout S]
 *   udp_pingpong --client ADDR [--port P] [--mode pingpong|stream] [--sizes LIST]
 *                [--duration S | --iters N] [--warmup N] [--batch N]
 *                [--wait block|spin|busy-poll] [--so-busy-poll USECS] [--timeout-ms MS] [-j]
 *
 * Waiting (both sides the same way, as the script starts them):
 *   block      recv() sleeps in the kernel until the datagram is queued
 *              (SO_RCVTIMEO bounds it)
 *   spin       recv(MSG_DONTWAIT) in a user-space loop: the thread never
 *              sleeps (a non-blocking socket polled by the application)
 *   busy-poll  the kernel's busy polling: a blocking recv() on a socket with
 *              SO_BUSY_POLL (--so-busy-poll USECS, default 50) polls the
 *              device's NAPI context for up to USECS before it sleeps.  The
 *              receive path needs a NAPI id for that: on a veth pair, GRO on
 *              (peers.sh turns it on for this variant).  The client counts
 *              the datagrams its namespace received by busy polling
 *              (TcpExt BusyPollRxPackets in /proc/net/netstat) and fails
 *              when there were none: the variant would be plain blocking.
 *
 * pingpong: the client sends SIZE bytes, the server sends the datagram back
 *   as it came; latency = half the round trip.  Datagrams of 8 bytes or more
 *   carry a sequence number in their first 8 bytes and stale answers are
 *   skipped.  A round trip with no answer within --timeout-ms is sent again
 *   (counted as a retransmit).
 * stream: the client sends batches of --batch datagrams of SIZE (>= 8) bytes;
 *   the server acknowledges the last of each batch (its sequence number says
 *   which) with an 8-byte datagram; the next batch starts once the ack is in.
 *   latency = one batch, first send to its ack.  A missing ack makes the
 *   client send the last datagram of the batch again.
 *
 * Exit: 0 ok, 1 run-time error, 2 usage.
 */
#include <errno.h>
#include <endian.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "peers_common.h"

#define MAX_DGRAM 65507UL
#define DEFAULT_PORT 18515

enum { MODE_PINGPONG, MODE_STREAM };
enum { WAIT_BLOCK, WAIT_SPIN, WAIT_BUSY_POLL };
static const char *const wait_names[] = { "blocking", "spin", "busy-poll" };

static struct {
	bool server, client, json;
	const char *addr;
	unsigned long port, batch, warmup, iters, so_busy_poll, timeout_ms;
	double duration, idle_timeout;
	int mode, wait, nsizes;
	unsigned long sizes[PC_MAX_SIZES];
	bool duration_set;
} o = {
	.port = DEFAULT_PORT,
	.batch = 32,
	.warmup = 100,
	.iters = 10000,
	.timeout_ms = 200,
	.idle_timeout = 120,
	.sizes = { 0, 64, 1024, 4096 },
	.nsizes = 4,
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: udp_pingpong --server [--port P] [--mode pingpong|stream] [--batch N]\n"
		"                    [--wait block|spin|busy-poll] [--so-busy-poll USECS] [--idle-timeout S]\n"
		"       udp_pingpong --client ADDR [--port P] [--mode pingpong|stream] [--sizes LIST]\n"
		"                    [--duration S | --iters N] [--warmup N] [--batch N]\n"
		"                    [--wait block|spin|busy-poll] [--so-busy-poll USECS] [--timeout-ms MS] [-j]\n"
		"Kernel UDP socket ping-pong / one-way stream (the peer of xdpwake pingpong/stream).\n"
		"  --wait block      recv() sleeps (default); spin: recv(MSG_DONTWAIT) loop;\n"
		"                    busy-poll: recv() with SO_BUSY_POLL (the kernel polls the NAPI)\n"
		"  --so-busy-poll U  SO_BUSY_POLL in us (busy-poll: default 50; others: off)\n"
		"  --sizes LIST      message sizes, e.g. 0,64,1K (default 0,64,1K,4K; stream 128)\n"
		"  --batch N         stream: datagrams per acknowledged batch (default 32)\n"
		"  -j, --json        print one JSON object (the fields of xdpwake pingpong -j)\n"
		"exit: 0 ok, 1 error, 2 usage\n");
}

static int parse_args(int argc, char **argv)
{
	bool sizes_set = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = 0, takes = 1;

		if (!strcmp(a, "--server")) {
			o.server = true;
			takes = 0;
		} else if (!strcmp(a, "--client") && v) {
			o.client = true;
			o.addr = v;
		} else if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			o.json = true;
			takes = 0;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "--port") && v) {
			bad = pc_parse_ulong(v, 1, 65535, &o.port);
		} else if (!strcmp(a, "--mode") && v) {
			if (!strcmp(v, "pingpong"))
				o.mode = MODE_PINGPONG;
			else if (!strcmp(v, "stream"))
				o.mode = MODE_STREAM;
			else
				bad = 1;
		} else if (!strcmp(a, "--wait") && v) {
			if (!strcmp(v, "block"))
				o.wait = WAIT_BLOCK;
			else if (!strcmp(v, "spin"))
				o.wait = WAIT_SPIN;
			else if (!strcmp(v, "busy-poll"))
				o.wait = WAIT_BUSY_POLL;
			else
				bad = 1;
		} else if (!strcmp(a, "--sizes") && v) {
			o.nsizes = pc_parse_sizes(v, o.sizes, MAX_DGRAM);
			bad = o.nsizes < 0;
			sizes_set = true;
		} else if (!strcmp(a, "--batch") && v) {
			bad = pc_parse_ulong(v, 1, 1024, &o.batch);
		} else if (!strcmp(a, "--warmup") && v) {
			bad = pc_parse_ulong(v, 0, 100000000, &o.warmup);
		} else if (!strcmp(a, "--iters") && v) {
			bad = pc_parse_ulong(v, 1, 1000000000, &o.iters);
		} else if (!strcmp(a, "--so-busy-poll") && v) {
			bad = pc_parse_ulong(v, 0, 1000000, &o.so_busy_poll);
		} else if (!strcmp(a, "--timeout-ms") && v) {
			bad = pc_parse_ulong(v, 1, 60000, &o.timeout_ms);
		} else if (!strcmp(a, "--duration") && v) {
			bad = pc_parse_double(v, 0.001, 3600, &o.duration);
			o.duration_set = true;
		} else if (!strcmp(a, "--idle-timeout") && v) {
			bad = pc_parse_double(v, 0.1, 86400, &o.idle_timeout);
		} else {
			fprintf(stderr, "udp_pingpong: bad or incomplete argument '%s'\n", a);
			return -1;
		}
		if (bad) {
			fprintf(stderr, "udp_pingpong: bad value for %s: '%s'\n", a, v);
			return -1;
		}
		i += takes;
	}
	if (o.wait == WAIT_BUSY_POLL && !o.so_busy_poll)
		o.so_busy_poll = 50;
	if (o.server == o.client) {
		fprintf(stderr, "udp_pingpong: give --server or --client ADDR\n");
		return -1;
	}
	if (o.mode == MODE_STREAM && !sizes_set) {
		o.sizes[0] = 128;
		o.nsizes = 1;
	}
	if (o.mode == MODE_STREAM)
		for (int i = 0; i < o.nsizes; i++)
			if (o.sizes[i] < 8) {
				fprintf(stderr, "udp_pingpong: stream messages carry a sequence "
						"number: 8 bytes at least\n");
				return -1;
			}
	return 0;
}

static int sock_open(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct timeval tv;
	int one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (o.so_busy_poll) {
		int us = (int)o.so_busy_poll;

		if (setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof(us))) {
			fprintf(stderr, "udp_pingpong: SO_BUSY_POLL: %s\n", strerror(errno));
			close(fd);
			return -1;
		}
	}
	/* Blocking receives wake at least this often (signals, deadlines). */
	tv.tv_sec = (time_t)(o.timeout_ms / 1000);
	tv.tv_usec = (suseconds_t)(o.timeout_ms % 1000) * 1000;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/*
 * Receive one datagram, waiting the configured way, until @deadline_ns.
 * Returns its length, -ETIMEDOUT, -EINTR (stop requested) or -errno.
 */
static ssize_t recv_wait(int fd, void *buf, size_t len, struct sockaddr_in *from,
			 unsigned long long deadline_ns)
{
	socklen_t fl = sizeof(*from);

	for (;;) {
		ssize_t n = recvfrom(fd, buf, len, o.wait == WAIT_SPIN ? MSG_DONTWAIT : 0,
				     (struct sockaddr *)from, from ? &fl : NULL);

		if (n >= 0)
			return n;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (pc_stop)
			return -EINTR;
		if (xwu_now_ns() >= deadline_ns)
			return -ETIMEDOUT;
	}
}

/* ---- server ---------------------------------------------------------- */

static int run_server(void)
{
	struct sockaddr_in me = { .sin_family = AF_INET }, from;
	unsigned long long last = xwu_now_ns(), idle_ns = (unsigned long long)(o.idle_timeout * 1e9);
	char *buf = malloc(MAX_DGRAM);
	int fd = sock_open();

	if (fd < 0 || !buf) {
		perror("udp_pingpong: socket");
		free(buf);
		return 1;
	}
	me.sin_addr.s_addr = htonl(INADDR_ANY);
	me.sin_port = htons((uint16_t)o.port);
	if (bind(fd, (struct sockaddr *)&me, sizeof(me))) {
		fprintf(stderr, "udp_pingpong: bind port %lu: %s\n", o.port, strerror(errno));
		close(fd);
		free(buf);
		return 1;
	}
	fprintf(stderr, "udp_pingpong: %s server on port %lu, %s\n",
		o.mode == MODE_STREAM ? "stream" : "pingpong", o.port,
		wait_names[o.wait]);
	while (!pc_stop) {
		ssize_t n = recv_wait(fd, buf, MAX_DGRAM, &from, xwu_now_ns() + 100000000ULL);

		if (n == -ETIMEDOUT) {
			if (xwu_now_ns() - last > idle_ns) {
				fprintf(stderr, "udp_pingpong: idle for %.0f s, exiting\n",
					o.idle_timeout);
				break;
			}
			continue;
		}
		if (n < 0)
			break;
		last = xwu_now_ns();
		if (o.mode == MODE_PINGPONG) {
			sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, sizeof(from));
		} else if (n >= 8) {
			uint64_t seq;

			memcpy(&seq, buf, 8);
			if (be64toh(seq) % o.batch == o.batch - 1)
				sendto(fd, buf, 8, 0, (struct sockaddr *)&from, sizeof(from));
		}
	}
	close(fd);
	free(buf);
	return 0;
}

/* ---- client ---------------------------------------------------------- */

/* One round trip; returns its time in ns or a negative error. */
static long long pp_round(int fd, char *sbuf, char *rbuf, unsigned long size, uint64_t seq,
			  unsigned long long *retx)
{
	unsigned long long t0 = xwu_now_ns(), give_up = t0 + 5000000000ULL;
	uint64_t be = htobe64(seq);

	if (size >= 8)
		memcpy(sbuf, &be, 8);
	for (;;) {
		unsigned long long sent = xwu_now_ns();

		if (send(fd, sbuf, size, 0) < 0 && errno != ENOBUFS && errno != EAGAIN)
			return -errno;
		for (;;) {
			ssize_t n = recv_wait(fd, rbuf, MAX_DGRAM, NULL,
					      sent + o.timeout_ms * 1000000ULL);

			if (n == -ETIMEDOUT)
				break;
			if (n < 0)
				return n;
			if (size >= 8 && (n < 8 || memcmp(rbuf, &be, 8)))
				continue; /* a stale answer */
			return (long long)(xwu_now_ns() - t0);
		}
		if (xwu_now_ns() > give_up)
			return -ETIMEDOUT;
		(*retx)++;
	}
}

/* One stream batch (sequence numbers seq..seq+batch-1); returns ns or error. */
static long long st_batch(int fd, char *sbuf, char *rbuf, unsigned long size, uint64_t seq,
			  unsigned long long *retx)
{
	unsigned long long t0 = xwu_now_ns(), give_up = t0 + 5000000000ULL;
	uint64_t be = 0;

	for (unsigned long i = 0; i < o.batch; i++) {
		be = htobe64(seq + i);
		memcpy(sbuf, &be, 8);
		while (send(fd, sbuf, size, 0) < 0) {
			if (errno != ENOBUFS && errno != EAGAIN)
				return -errno;
			if (pc_stop)
				return -EINTR;
		}
	}
	for (;;) {
		ssize_t n = recv_wait(fd, rbuf, MAX_DGRAM, NULL,
				      xwu_now_ns() + o.timeout_ms * 1000000ULL);

		if (n >= 8 && !memcmp(rbuf, &be, 8))
			return (long long)(xwu_now_ns() - t0);
		if (n >= 0)
			continue; /* a stale ack */
		if (n != -ETIMEDOUT)
			return n;
		if (xwu_now_ns() > give_up)
			return -ETIMEDOUT;
		(*retx)++;
		send(fd, sbuf, size, 0); /* the batch's last datagram again */
	}
}

/*
 * Datagrams this network namespace received by busy polling (TcpExt
 * BusyPollRxPackets in /proc/net/netstat: a header line of names, then a
 * line of values), -1 when unreadable.
 */
static long long busy_poll_rx(void)
{
	char names[4096], vals[4096];
	long long v = -1;
	FILE *f = fopen("/proc/net/netstat", "r");

	if (!f)
		return -1;
	while (fgets(names, sizeof(names), f) && fgets(vals, sizeof(vals), f)) {
		char *sn, *sv, *n = strtok_r(names, " \n", &sn), *x = strtok_r(vals, " \n", &sv);

		if (!n || !x || strcmp(n, "TcpExt:"))
			continue;
		while ((n = strtok_r(NULL, " \n", &sn)) && (x = strtok_r(NULL, " \n", &sv)))
			if (!strcmp(n, "BusyPollRxPackets"))
				v = strtoll(x, NULL, 10);
	}
	fclose(f);
	return v;
}

/* The client's socket and buffers, for pc_measure()'s round. */
struct client {
	int fd;
	char *sbuf, *rbuf;
};

static long long client_round(void *ctx, unsigned long size, unsigned long long seq,
			      unsigned long long *retx)
{
	struct client *c = ctx;

	return o.mode == MODE_PINGPONG ? pp_round(c->fd, c->sbuf, c->rbuf, size, seq, retx)
				       : st_batch(c->fd, c->sbuf, c->rbuf, size, seq, retx);
}

static int run_client(void)
{
	struct sockaddr_in peer = { .sin_family = AF_INET };
	struct pc_result res[PC_MAX_SIZES];
	char *sbuf = calloc(1, MAX_DGRAM), *rbuf = malloc(MAX_DGRAM);
	int fd = sock_open(), done = 0, rc = 1;
	struct client c = { fd, sbuf, rbuf };
	struct pc_run run = { "udp_pingpong", client_round, &c, o.mode == MODE_PINGPONG,
			      o.mode == MODE_STREAM ? o.batch : 1, o.warmup, o.iters, o.duration,
			      o.duration_set };
	unsigned long long seq = 0;
	long long bp0 = -1, bp;

	memset(res, 0, sizeof(res));
	if (fd < 0 || !sbuf || !rbuf) {
		perror("udp_pingpong: socket");
		goto out;
	}
	if (inet_pton(AF_INET, o.addr, &peer.sin_addr) != 1) {
		fprintf(stderr, "udp_pingpong: '%s' is not an IPv4 address\n", o.addr);
		goto out;
	}
	peer.sin_port = htons((uint16_t)o.port);
	if (connect(fd, (struct sockaddr *)&peer, sizeof(peer))) {
		fprintf(stderr, "udp_pingpong: connect %s: %s\n", o.addr, strerror(errno));
		goto out;
	}
	bp0 = busy_poll_rx();
	for (int i = 0; i < o.nsizes; i++) {
		if (pc_measure(&run, o.sizes[i], &seq, &res[i]))
			goto out;
		done++;
	}
	rc = 0;
	bp = busy_poll_rx();
	if (o.wait == WAIT_BUSY_POLL && (bp0 < 0 || bp <= bp0)) {
		fprintf(stderr, "udp_pingpong: busy-poll: %s (a receive path without a NAPI "
				"id, e.g. a veth with GRO off, makes this a blocking run)\n",
			bp0 < 0 ? "BusyPollRxPackets unreadable in /proc/net/netstat"
				: "no datagram was received by busy polling");
		rc = 1;
		done = 0;
	} else if (o.wait == WAIT_BUSY_POLL) {
		fprintf(stderr, "udp_pingpong: busy-poll: %lld datagrams received by busy polling\n",
			bp - bp0);
	}
out:
	if (done) {
		const char *test = o.mode == MODE_PINGPONG ? "pingpong" : "stream";
		const char *var = wait_names[o.wait];

		if (o.json)
			pc_json_print("udp_pingpong", test, var, "udp", res, done);
		else
			pc_text_print(test, var, res, done);
	}
	if (fd >= 0)
		close(fd);
	free(sbuf);
	free(rbuf);
	return rc;
}

int main(int argc, char **argv)
{
	if (parse_args(argc, argv)) {
		usage(stderr);
		return 2;
	}
	pc_install_signals();
	return o.server ? run_server() : run_client();
}
