// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * One side of xdpwake pingpong / stream (perf.h): the error text, signals,
 * the think time, our handle on the interface's program, the endpoint and
 * the message buffers, and the measurements: snapshots of the XDP
 * program's counters of the endpoint, the library's wait statistics, the
 * process's and the machine's CPU time, and their deltas over the measured
 * window.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf.h"
#include "measure.h"

int perf_err(struct perf *p, int err, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
	n = strlen(p->err);
	if (err && n < sizeof(p->err))
		snprintf(p->err + n, sizeof(p->err) - n, ": %s",
			 err == -EINTR ? "interrupted" : xw_strerror(err));
	return err ? err : -EIO;
}

static void perf_on_signal(int sig)
{
	cli_stop = 1;
}

void perf_install_signals(void)
{
	struct sigaction sa = { .sa_handler = perf_on_signal }; /* no SA_RESTART */

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

void perf_noop_notify(struct xw_endpoint *ep, void *arg)
{
}

/* Computation between messages: spin on the clock. */
void perf_think(unsigned long usecs)
{
	__u64 end;

	if (!usecs)
		return;
	end = xwu_now_ns() + (__u64)usecs * 1000ULL;
	while (xwu_now_ns() < end)
		__asm__ __volatile__("" ::: "memory");
}

/* Our own handle on the interface's program: attach it if nobody has, so
 * that endpoints come and go without detaching it (we detach at the end
 * if we attached). */
int perf_iface_open(struct perf *p)
{
	struct cli_args *a = p->a;
	XW_OPTS(xw_iface_opts, probe, .pin_root = a->pin_root, .no_attach = true);
	XW_OPTS(xw_iface_opts, o, .pin_root = a->pin_root,
		.encap = a->encap_set ? a->encap : XW_ENCAP_ETH);
	int err;

	err = xw_iface__open(p->ifname, &probe, &p->ifc);
	if (err == -ENOENT) {
		err = xw_iface__open(p->ifname, &o, &p->ifc);
		p->attached = !err;
	}
	if (err)
		return perf_err(p, err, "%s: cannot attach xdpwake", p->ifname);
	return 0;
}

void perf_iface_close(struct perf *p)
{
	if (!p->ifc)
		return;
	if (p->attached)
		xw_iface__detach(p->ifc);
	else
		xw_iface__close(p->ifc);
	p->ifc = NULL;
}

int perf_ep_open(struct perf *p, bool set_policy)
{
	struct cli_args *a = p->a;
	XW_OPTS(xw_endpoint_opts, o, .pin_root = a->pin_root, .queue = (__u32)p->o->queue,
		.encap = a->encap_set ? a->encap : XW_ENCAP_ETH,
		.policy_set = set_policy && p->policy != POLICY_KEEP,
		.policy = p->policy == POLICY_KEEP ? 0 : p->policy,
		.wait_strategy = (__u32)p->wait, .spin_ns = (__u64)p->spin_us * 1000,
		.pull_spin_set = p->pull_spin >= 0,
		.pull_spin = p->pull_spin >= 0 ? (__u32)p->pull_spin : 0);
	__u64 end = xwu_now_ns() + 3000000000ULL;
	int err;

	/* A socket of a process that just exited (the previous client) is
	 * released by the kernel a little later: its queue reads as busy
	 * meanwhile.  Retry for a while before calling it taken. */
	while ((err = xw_endpoint__open(p->ifname, (__u16)p->o->ep, &o, &p->ep)) == -EBUSY &&
	       xwu_now_ns() < end && !cli_stop)
		usleep(20000);
	if (err == -EBUSY)
		return perf_err(p, err, "%s: cannot open endpoint %d (in use? try another --ep or "
				    "--queue; -v tells more)", p->ifname, p->o->ep);
	if (err)
		return perf_err(p, err, "%s: cannot open endpoint %d", p->ifname, p->o->ep);
	if (p->wait == XW_WAIT_NOTIFY) {
		err = xw_endpoint__set_notify(p->ep, perf_noop_notify, NULL);
		if (err) {
			xw_endpoint__close(p->ep);
			p->ep = NULL;
			return perf_err(p, err, "cannot start the notify thread");
		}
	}
	xw_endpoint__addr(p->ep, &p->me);
	/* The tool opens a fresh endpoint (a new incarnation, a new nonce)
	 * for every client and every try (perf_proto.c), so the address it
	 * shows and writes (--addr-file) names the endpoint without a nonce:
	 * such an address opens a connection, never resets one
	 * (docs/PROTOCOL.md "Incarnation nonces"); one with the nonce of the
	 * first incarnation would be refused by the next. */
	p->me.nonce = 0;
	xw_addr_format(&p->me, p->me_text, sizeof(p->me_text));
	return 0;
}

void perf_ep_close(struct perf *p)
{
	if (p->ep)
		xw_endpoint__close(p->ep);
	p->ep = NULL;
	for (size_t i = 0; i < p->nbufs; i++)
		free(p->bufs[i]);
	free(p->bufs);
	p->bufs = NULL;
	p->nbufs = p->capbufs = 0;
}

/* A message buffer of @len bytes (at least 1), owned by @p until ep_close. */
void *perf_buf_alloc(struct perf *p, __u64 len)
{
	void *b;

	if (p->nbufs == p->capbufs) {
		size_t cap = p->capbufs ? 2 * p->capbufs : 16;
		void **nb = realloc(p->bufs, cap * sizeof(*nb));

		if (!nb)
			return NULL;
		p->bufs = nb;
		p->capbufs = cap;
	}
	b = malloc(len ? (size_t)len : 1);
	if (!b)
		return NULL;
	memset(b, 0x5a, len ? (size_t)len : 1);
	p->bufs[p->nbufs++] = b;
	return b;
}

/* Free the buffers (nothing may use them any more). */
void perf_bufs_release(struct perf *p)
{
	for (size_t i = 0; i < p->nbufs; i++)
		free(p->bufs[i]);
	p->nbufs = 0;
}

void perf_snap_take(struct perf *p, struct snap *s)
{
	memset(s, 0, sizeof(*s));
	s->ws.sz = sizeof(s->ws);
	s->xs.sz = sizeof(s->xs);
	xw_iface__stats(p->ifc, p->o->ep, &s->xs);
	xw_endpoint__wait_stats(p->ep, &s->ws);
	getrusage(RUSAGE_SELF, &s->ru);
	xwu_machine_cpu_us(&s->busy_us, &s->total_us);
	s->t = xwu_now_ns();
}

static __u64 d64(__u64 b, __u64 a)
{
	return b >= a ? b - a : 0;
}

void perf_side_delta(struct side *d, const struct snap *a, const struct snap *b, __u64 msgs)
{
	memset(d, 0, sizeof(*d));
	d->msgs = msgs;
	d->elapsed_ns = d64(b->t, a->t);
#define XS(n) d->n = d64(b->xs.n, a->xs.n);
	XS(wake_every) XS(wake_marker) XS(wake_stream) XS(wake_frames) XS(wake_timeout)
	XS(wake_watchdog) XS(wake_unarmed) XS(frames_redirected) XS(lat_frames)
	XS(more_frames) XS(deferrals) XS(timer_fires)
#undef XS
	d->machine_busy_us = d64(b->busy_us, a->busy_us);
	d->machine_total_us = d64(b->total_us, a->total_us);
	d->proc_user_us = d64(xwu_tv_us(&b->ru.ru_utime), xwu_tv_us(&a->ru.ru_utime));
	d->proc_sys_us = d64(xwu_tv_us(&b->ru.ru_stime), xwu_tv_us(&a->ru.ru_stime));
	d->blocks = d64(b->ws.blocks, a->ws.blocks);
	d->lib_wakes = d64(b->ws.wakes, a->ws.wakes);
	d->spurious_wakes = d64(b->ws.spurious_wakes, a->ws.spurious_wakes);
	d->spins = d64(b->ws.spins, a->ws.spins);
	d->yields = d64(b->ws.yields, a->ws.yields);
	d->spin_probes = d64(b->ws.spin_probes, a->ws.spin_probes);
	d->shared_spins = d64(b->ws.shared_spins, a->ws.shared_spins);
	d->shared_waits = d64(b->ws.shared_waits, a->ws.shared_waits);
	d->sleep_timeouts = d64(b->ws.sleep_timeouts, a->ws.sleep_timeouts);
	d->late_wakes = d64(b->ws.late_wakes, a->ws.late_wakes);
	d->pull_spins = d64(b->ws.pull_spins, a->ws.pull_spins);
	d->sleep_acks = d64(b->ws.sleep_acks, a->ws.sleep_acks);
	d->block_cost_ns = b->ws.block_cost_ns;
}

/* Wakes the XDP program sent to the endpoint, of every reason. */
__u64 perf_side_wakes(const struct side *s)
{
	return s->wake_every + s->wake_marker + s->wake_stream + s->wake_frames +
	       s->wake_timeout + s->wake_watchdog;
}
