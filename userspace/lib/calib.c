// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The block-and-wake cost (xw_block_cost_ns): what putting a thread to
 * sleep and waking it costs on this machine, the B of the waiting
 * strategies' cost model (wait.h).  Measured once per process on the real
 * wake path (calib.bpf.c, embedded), else with an eventfd ping-pong, or
 * taken from XDPWAKE_BLOCK_COST_NS.
 */
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "internal.h"
#include "endpoint_int.h"
#include "calib.skel.h"

static __u64 block_cost;
static pthread_once_t block_cost_once = PTHREAD_ONCE_INIT;

struct pingpong {
	int a, b;
	int rounds;
};

static void *calib_peer(void *arg)
{
	struct pingpong *pp = arg;
	struct pollfd pfd = { .fd = pp->a, .events = POLLIN };
	__u64 v;

	for (int i = 0; i < pp->rounds; i++) {
		if (poll(&pfd, 1, 1000) <= 0 || read(pp->a, &v, sizeof(v)) != sizeof(v))
			break;
		v = 1;
		if (write(pp->b, &v, sizeof(v)) != sizeof(v))
			break;
	}
	return NULL;
}

static int cmp_u64(const void *x, const void *y)
{
	__u64 a = *(const __u64 *)x, b = *(const __u64 *)y;

	return a < b ? -1 : a > b;
}

/*
 * Calibration on the real wake path: a thread sleeps in epoll on a BPF ring
 * buffer; another runs calib.bpf.c with BPF_PROG_TEST_RUN, which submits a
 * record with BPF_RB_FORCE_WAKEUP stamped with the submit time; the sleeper's
 * delay from that stamp to running again is one block-and-wake as the XDP
 * program causes it.  Median of ROUNDS.  Needs CAP_BPF (endpoints do).
 */
enum { CALIB_ROUNDS = 64 };

struct calib_run {
	int prog_fd;
	int rounds;
	volatile int stop;
};

static void *calib_kicker(void *arg)
{
	struct calib_run *c = arg;
	unsigned char frame[64] = { 0 };

	for (int i = 0; i < c->rounds && !c->stop; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame),
			    .repeat = 1);

		usleep(300); /* the other thread is asleep by now */
		if (bpf_prog_test_run_opts(c->prog_fd, &o))
			break;
	}
	return NULL;
}

struct calib_sample {
	__u64 lat[CALIB_ROUNDS];
	int n;
};

static int calib_cb(void *ctx, void *data, size_t len)
{
	struct calib_sample *s = ctx;
	__u64 t, now = xwi_now_ns();

	if (len != sizeof(t) || s->n >= CALIB_ROUNDS)
		return 0;
	memcpy(&t, data, sizeof(t));
	if (now > t)
		s->lat[s->n++] = now - t;
	return 0;
}

static int calibrate_bpf(__u64 *cost)
{
	struct calib_run run = { .rounds = CALIB_ROUNDS };
	struct calib_sample *s = calloc(1, sizeof(*s));
	struct ring_buffer *rb = NULL;
	struct calib_bpf *skel;
	pthread_t t;
	int err = -EINVAL;

	if (!s)
		return -ENOMEM;
	skel = calib_bpf__open_and_load();
	if (!skel) {
		free(s);
		return -errno;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.calib_ring), calib_cb, s, NULL);
	run.prog_fd = bpf_program__fd(skel->progs.xw_calib);
	if (rb && !pthread_create(&t, NULL, calib_kicker, &run)) {
		__u64 end = xwi_now_ns() + 2000000000ULL;

		while (s->n < CALIB_ROUNDS && xwi_now_ns() < end)
			if (ring_buffer__poll(rb, 100) < 0)
				break;
		run.stop = 1;
		pthread_join(t, NULL);
		if (s->n >= CALIB_ROUNDS / 2) {
			qsort(s->lat, s->n, sizeof(s->lat[0]), cmp_u64);
			*cost = s->lat[s->n / 2];
			err = 0;
		}
	}
	ring_buffer__free(rb);
	calib_bpf__destroy(skel);
	free(s);
	return err;
}

/*
 * Fallback without BPF privileges: two threads bounce an eventfd token, each
 * sleeping in poll() until the other writes; half the median round trip is
 * the cost of putting a thread to sleep and waking it (a lower bound for the
 * XDP path, which adds the ring buffer's irq_work).
 */
static void calibrate(void)
{
	enum { ROUNDS = 200 };
	struct pingpong pp = { .rounds = ROUNDS };
	struct pollfd pfd;
	__u64 rt[ROUNDS], v = 1;
	const char *env = getenv("XDPWAKE_BLOCK_COST_NS");
	pthread_t t;
	int n = 0;

	block_cost = 20000; /* fallback */
	xwi_hook_lib_logs(); /* libbpf prints nothing unless the application asked */
	if (env && atoll(env) > 0) {
		block_cost = (__u64)atoll(env);
		return;
	}
	if (calibrate_bpf(&block_cost) == 0) {
		xwi_dbg("block-and-wake cost (BPF ring buffer wake): %llu ns",
			(unsigned long long)block_cost);
		return;
	}
	pp.a = eventfd(0, EFD_CLOEXEC);
	pp.b = eventfd(0, EFD_CLOEXEC);
	if (pp.a < 0 || pp.b < 0 || pthread_create(&t, NULL, calib_peer, &pp)) {
		if (pp.a >= 0)
			close(pp.a);
		if (pp.b >= 0)
			close(pp.b);
		return;
	}
	pfd.fd = pp.b;
	pfd.events = POLLIN;
	for (int i = 0; i < ROUNDS; i++) {
		__u64 t0 = xwi_now_ns();

		if (write(pp.a, &v, sizeof(v)) != sizeof(v) || poll(&pfd, 1, 1000) <= 0 ||
		    read(pp.b, &v, sizeof(v)) != sizeof(v))
			break;
		rt[n++] = xwi_now_ns() - t0;
	}
	pthread_join(t, NULL);
	close(pp.a);
	close(pp.b);
	if (n >= ROUNDS / 2) {
		qsort(rt, n, sizeof(rt[0]), cmp_u64);
		block_cost = rt[n / 2] / 2;
	}
	xwi_dbg("block-and-wake cost (eventfd): %llu ns", (unsigned long long)block_cost);
}

XW_API __u64 xw_block_cost_ns(void)
{
	pthread_once(&block_cost_once, calibrate);
	return block_cost;
}
