// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cq.c - completion queues, and their completion-report interface
 * (xwfi_cq_push, attach, detach: endpoints call it, op.c and ep.c).
 *
 * Progress is manual: reading a CQ runs one progress pass of every
 * endpoint bound to it (through its struct xwfi_epref).  An idle
 * fi_cq_read sleeps, after the spin time, until the XDP program wakes an
 * endpoint (see cq_idle).  Blocking reads (fi_cq_sread) wait through
 * wait.c with the FI_XDPWAKE_WAIT strategy (spin-block by default: spin
 * for the measured block-and-wake cost, then sleep until the XDP program
 * wakes the endpoint), the condition being "a completion is there".
 * FI_WAIT_FD: fi_control(FI_GETWAIT) hands out the wait set's epoll fd,
 * readable when the XDP program wakes an endpoint after fi_trywait()
 * armed it.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "xwfi.h"

/* A sched_yield() that took longer ran another task: the CPU is shared. */
#define XWFI_SHARED_NS 5000ULL

/* FI_XDPWAKE_IDLE_SPIN_USECS in ns: how long the process's reads find
 * nothing before a sleep when the CPU is its own. */
static __u64 idle_spin_ns(void)
{
	return xwfi_params.idle_spin_usecs > 0 ? (__u64)xwfi_params.idle_spin_usecs * 1000 : 0;
}

static int grow(void **arr, size_t *cap, size_t head, size_t n, size_t elem)
{
	size_t ncap = *cap ? *cap * 2 : 256;
	char *a = malloc(ncap * elem);

	if (!a)
		return -FI_ENOMEM;
	for (size_t i = 0; i < n; i++)
		memcpy(a + i * elem, (char *)*arr + ((head + i) % *cap) * elem, elem);
	free(*arr);
	*arr = a;
	*cap = ncap;
	return 0;
}

/* Every completion, success or error, whatever its context (NULL is a
 * valid one), wakes a sleeper: it may have been made without a frame. */
int xwfi_cq_push(struct xwfi_cq *cq, const struct xwfi_cqe *e)
{
	if (e->err) {
		if (cq->en == cq->ecap) {
			if (grow((void **)&cq->errs, &cq->ecap, cq->ehead, cq->en, sizeof(*e)))
				return -FI_ENOMEM;
			cq->ehead = 0;
		}
		cq->errs[(cq->ehead + cq->en++) % cq->ecap] = *e;
	} else {
		if (cq->n == cq->cap) {
			if (grow((void **)&cq->ring, &cq->cap, cq->head, cq->n, sizeof(*e)))
				return -FI_ENOMEM;
			cq->head = 0;
		}
		cq->ring[(cq->head + cq->n++) % cq->cap] = *e;
	}
	xwfi_wset_kick(&cq->ws);
	return 0;
}

static size_t entry_size(enum fi_cq_format fmt)
{
	switch (fmt) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	default:
		return sizeof(struct fi_cq_tagged_entry);
	}
}

static void entry_write(enum fi_cq_format fmt, void *out, const struct xwfi_cqe *e)
{
	struct fi_cq_tagged_entry t = {
		.op_context = e->ctx,
		.flags = e->flags,
		.len = e->len,
		.buf = e->buf,
		.data = e->data,
		.tag = e->tag,
	};

	memcpy(out, &t, entry_size(fmt)); /* every format is a prefix */
}

static int cq_progress(struct xwfi_cq *cq)
{
	return xwfi_eps_progress(cq->eps, cq->neps);
}

/* Caller holds the lock. */
static ssize_t cq_take(struct xwfi_cq *cq, void *buf, size_t count, fi_addr_t *src)
{
	size_t esz = entry_size(cq->fmt), k = 0;

	if (cq->en)
		return -FI_EAVAIL;
	while (k < count && cq->n) {
		const struct xwfi_cqe *e = &cq->ring[cq->head];

		entry_write(cq->fmt, (char *)buf + k * esz, e);
		if (src)
			src[k] = e->src;
		cq->head = (cq->head + 1) % cq->cap;
		cq->n--;
		k++;
	}
	return k ? (ssize_t)k : -FI_EAGAIN;
}

static bool cq_ready(void *arg)
{
	struct xwfi_cq *cq = arg;

	return cq->n || cq->en || cq->signaled;
}

/* Bumped by every read (of any CQ of the process) that returns something
 * and every pass that handles frames: a CQ is idle only while the whole
 * process finds nothing, so that a loop polling several CQs does not sleep
 * in one while another gets completions. */
static unsigned long activity;

/* An idle read looks at the clock once in this many (cq_idle). */
#define XWFI_IDLE_CLOCK_READS 8

/* A count read and written without the lock (lock-free reads too): a
 * racing read's increment may be lost, a read of it is never torn. */
static unsigned int bump(unsigned int *c)
{
	unsigned int v = __atomic_load_n(c, __ATOMIC_RELAXED) + 1;

	__atomic_store_n(c, v, __ATOMIC_RELAXED);
	return v;
}

static void active(void)
{
	__atomic_store_n(&activity, __atomic_load_n(&activity, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
}

/* How often an idle read on a crowded host asks whether the CQ's
 * endpoints take frames from the wire, and for how long after the last
 * new one they count as doing so (cq_wire_rx). */
#define XWFI_WIRE_CHECK_NS 10000000ULL
#define XWFI_WIRE_RECENT_NS 1000000000ULL

/*
 * Whether @cq's endpoints took frames from the wire (not through the local
 * path) in the last XWFI_WIRE_RECENT_NS (a look every XWFI_WIRE_CHECK_NS,
 * cq->wire_active the last answer).  On a
 * crowded host only such a CQ's idle reads sleep at once: a wire frame and
 * its ACK are carried by the kernel's softirq work, which a crowd of
 * yielders keeps from the CPU (ACKs tens of ms late, resends), while ranks
 * whose peers are all on the host hand the CPU to each other faster by
 * yielding than by a sleep and a wake each (1 x 32 ranks, 2 CPUs).
 */
static bool cq_wire_rx(struct xwfi_cq *cq, __u64 now)
{
	__u64 n = 0;

	if (cq->wire_at && now - cq->wire_at < XWFI_WIRE_CHECK_NS)
		return cq->wire_active;
	cq->wire_at = now;
	for (int i = 0; i < cq->neps; i++) {
		struct xw_endpoint_stats s = { .sz = sizeof(s) };

		if (!xw_endpoint__stats(cq->eps[i]->xep, &s))
			n += s.rx_frames - s.local_rx_frames;
	}
	if (n != cq->wire_rx)
		cq->wire_seen = now;
	cq->wire_rx = n;
	cq->wire_active = cq->wire_seen && now - cq->wire_seen < XWFI_WIRE_RECENT_NS;
	return cq->wire_active;
}

/* Whether @cq's idle reads sleep at once: a crowded host (the last look,
 * xwfi_host_crowded) and wire traffic (cq_wire_rx's last answer).  Read
 * without the domain lock too (cq_empty_fast): a stale answer costs one
 * read. */
static bool cq_crowded(struct xwfi_cq *cq)
{
	return xwfi_wait_mode() == XWFI_IDLE_SLEEP && xwfi_host_crowded(0) &&
	       __atomic_load_n(&cq->wire_active, __ATOMIC_RELAXED);
}

/*
 * A read found nothing after a progress pass that handled @frames frames.
 * The CQ is idle from the first such read on (a read that returns
 * something, or a pass that handled frames, here or on any CQ of the
 * process, ends it); once it has been
 * idle for longer than the spin time, the read sleeps until an endpoint is
 * woken, a completion without a frame is queued, a protocol timer is due,
 * or FI_XDPWAKE_IDLE_SLEEP_USECS passed, then makes one more pass.  A
 * caller that gets completions never sleeps.  Lock held once; for -FI_ECANCELED
 * (closing) it is released.
 */
static ssize_t cq_idle(struct xwfi_cq *cq, int frames, void *buf, size_t count, fi_addr_t *src)
{
	unsigned long act = __atomic_load_n(&activity, __ATOMIC_RELAXED);
	__u64 now, sleeps;
	enum xwfi_wake why;

	if (xwfi_params.idle_sleep_usecs <= 0 || xwfi_wait_mode() == XWFI_IDLE_SPIN)
		return -FI_EAGAIN;
	if (frames) {
		active();
		act++;
	}
	if (frames || !cq->idle_since || act != cq->seen_activity) {
		cq->idle_since = xwfi_now_ns();
		cq->seen_activity = act;
		cq->probe_at = 0;
		cq->idle_reads = 0;
		return -FI_EAGAIN;
	}
	/* The clock only every XWFI_IDLE_CLOCK_READS reads while spinning: a
	 * read that finds nothing takes a fraction of a microsecond (the
	 * library's progress call costs a few loads then), the spin time is
	 * microseconds.  A CPU found shared hands the CPU over at once
	 * (below): every read of the yield phase goes on. */
	if (!cq_crowded(cq) && !cq->yielding && xwfi_spin_ns() &&
	    bump(&cq->idle_reads) % XWFI_IDLE_CLOCK_READS)
		return -FI_EAGAIN;
	now = xwfi_now_ns();
	/* On a crowded host (more runnable tasks per CPU than
	 * FI_XDPWAKE_IDLE_CROWD, xwfi_host_crowded), for endpoints that take
	 * frames from the wire (cq_wire_rx), the second idle read sleeps: no
	 * spin, no probe, no yield phase. */
	if (xwfi_wait_mode() == XWFI_IDLE_SLEEP && xwfi_host_crowded(now) && cq_wire_rx(cq, now)) {
		cq->yielding = false;
		goto sleep;
	}
	if (now - cq->idle_since < xwfi_spin_ns() && !cq->yielding)
		return -FI_EAGAIN;
	/*
	 * On a core of its own a rank loses nothing by polling on: it sleeps
	 * only after FI_XDPWAKE_IDLE_SPIN_USECS of nothing (a ping-pong's
	 * wait never sleeps, so its latency stays the spinning one).  On a
	 * core another task wants, each poll keeps that task - perhaps the
	 * peer it waits for - off the CPU: probe with sched_yield() (after
	 * the spin time, then at each doubling).  When the yield ran another
	 * task, the read hands the CPU over instead of sleeping: it yields on
	 * each read from then on (the yield phase, issue 25), from the first
	 * read of the next idle periods too, as long as each yield runs
	 * another task, for at most FI_XDPWAKE_IDLE_SPIN_USECS of the idle
	 * period, then sleeps.  Two ranks that share a CPU (the scheduler
	 * puts a woken rank on its waker's CPU) so pass it to each other with
	 * a yield per message instead of a sleep and a wake each (96-108 us a
	 * round trip, against 10-35 us on two CPUs); a yield that runs nobody
	 * ends the phase (the CPU is ours: poll, probe, sleep as above), and
	 * a task that keeps the CPU for itself gets it once the bound passed.
	 */
	if (xwfi_wait_mode() == XWFI_IDLE_SLEEP && now - cq->idle_since < idle_spin_ns()) {
		__u64 t0, t1, idle = now - cq->idle_since;

		if (idle < cq->probe_at && !cq->yielding)
			return -FI_EAGAIN;
		cq->probe_at = 2 * idle;
		pthread_mutex_unlock(&cq->dom->lock);
		t0 = xwfi_now_ns();
		sched_yield();
		t1 = xwfi_now_ns();
		pthread_mutex_lock(&cq->dom->lock);
		cq->ws.st.idle_probes++;
		cq->yielding = t1 - t0 >= XWFI_SHARED_NS;
		if (!cq->yielding)
			return cq_take(cq, buf, count, src); /* the CPU is ours: poll on */
		cq->ws.st.idle_shared++;
		if (t1 - cq->idle_since < idle_spin_ns())
			return cq_take(cq, buf, count, src); /* it ran: look, yield again */
	}
	if (xwfi_wait_mode() == XWFI_IDLE_YIELD) {
		pthread_mutex_unlock(&cq->dom->lock);
		sched_yield();
		pthread_mutex_lock(&cq->dom->lock);
		return cq_take(cq, buf, count, src);
	}
sleep:
	sleeps = cq->ws.st.sleeps;
	why = xwfi_wset_sleep(cq->dom, &cq->ws, cq->eps, cq->neps,
			      now + (__u64)xwfi_params.idle_sleep_usecs * 1000, cq_ready, cq);
	if (why == XWFI_WOKE_CLOSED) {
		pthread_mutex_unlock(&cq->dom->lock);
		return -FI_ECANCELED;
	}
	if (cq->ws.st.sleeps != sleeps)
		cq->ws.st.idle_sleeps++;
	if (why == XWFI_WOKE_EVENT)
		cq->signaled = false; /* fi_cq_signal: this read returns */
	if (cq_progress(cq))
		active();
	return cq_take(cq, buf, count, src);
}

/*
 * The fast path of a read that finds nothing (issue 28): without the
 * domain lock, when the read would return -FI_EAGAIN having changed
 * nothing but the idle read count: no completion queued, no fi_trywait
 * armed, every bound endpoint idle (no frame, no timer due, nothing to
 * collect: xwfi_ep_ref_idle) and cq_idle in its spin with no clock read
 * due (or not idling at all).  So a read that polls costs a few loads;
 * every XWFI_IDLE_CLOCK_READS-th idle read still takes the full path (the
 * spin time, the CPU probe, the sleep), and a protocol timer due makes
 * its endpoint not idle: retransmissions and ACKs run in the reads'
 * passes as before.  What races it (a post, a frame, a completion pushed
 * under the lock) is seen by the next read.
 */
static bool cq_empty_fast(struct xwfi_cq *cq)
{
	unsigned int v;

	if (__atomic_load_n(&cq->n, __ATOMIC_RELAXED) || __atomic_load_n(&cq->en, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&cq->signaled, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&cq->ws.fd_armed, __ATOMIC_RELAXED))
		return false;
	if (!xwfi_eps_idle(&cq->ws, cq->eps, &cq->neps))
		return false;
	if (xwfi_params.idle_sleep_usecs <= 0 || xwfi_wait_mode() == XWFI_IDLE_SPIN)
		return true;
	/* cq_idle's spin: idle already, nothing active since, not yielding,
	 * not on a crowded host with wire traffic (its reads sleep at once),
	 * and this read not one that reads the clock */
	if (!__atomic_load_n(&cq->idle_since, __ATOMIC_RELAXED) ||
	    cq_crowded(cq) ||
	    __atomic_load_n(&cq->yielding, __ATOMIC_RELAXED) || !xwfi_spin_ns() ||
	    __atomic_load_n(&activity, __ATOMIC_RELAXED) !=
		    __atomic_load_n(&cq->seen_activity, __ATOMIC_RELAXED))
		return false;
	/* the read that reads the clock is cq_idle's: its count there */
	v = __atomic_load_n(&cq->idle_reads, __ATOMIC_RELAXED) + 1;
	if (!(v % XWFI_IDLE_CLOCK_READS))
		return false;
	__atomic_store_n(&cq->idle_reads, v, __ATOMIC_RELAXED);
	return true;
}

static ssize_t cq_readfrom(struct fid_cq *fcq, void *buf, size_t count, fi_addr_t *src)
{
	struct xwfi_cq *cq = container_of(fcq, struct xwfi_cq, cq);
	struct xwfi_domain *dom = cq->dom;
	ssize_t r;

	if (cq_empty_fast(cq)) {
		__atomic_store_n(&cq->ws.st.fast_empty,
				 __atomic_load_n(&cq->ws.st.fast_empty, __ATOMIC_RELAXED) + 1,
				 __ATOMIC_RELAXED);
		return -FI_EAGAIN;
	}
	pthread_mutex_lock(&dom->lock);
	xwfi_wset_fd_disarm(dom, &cq->ws, cq->eps, cq->neps);
	r = cq_take(cq, buf, count, src);
	if (r == -FI_EAGAIN) {
		int frames = cq_progress(cq);

		r = cq_take(cq, buf, count, src);
		if (r == -FI_EAGAIN) {
			r = cq_idle(cq, frames, buf, count, src);
			if (r == -FI_ECANCELED)
				return -FI_EAGAIN; /* closed under us: unlocked */
		}
	}
	if (r != -FI_EAGAIN) {
		cq->idle_since = 0;
		active();
	}
	pthread_mutex_unlock(&dom->lock);
	return r;
}

static ssize_t cq_read(struct fid_cq *fcq, void *buf, size_t count)
{
	return cq_readfrom(fcq, buf, count, NULL);
}

/*
 * libfabric >= 1.5: a caller that passes err_data with err_data_size > 0
 * owns that buffer (we have no error data: err_data_size = 0, the pointer
 * untouched); with err_data_size 0 err_data is the provider's (NULL here).
 */
static ssize_t cq_readerr(struct fid_cq *fcq, struct fi_cq_err_entry *buf, uint64_t flags)
{
	struct xwfi_cq *cq = container_of(fcq, struct xwfi_cq, cq);
	const struct xwfi_cqe *e;
	bool v15 = FI_VERSION_GE(cq->dom->fab->fab.api_version, FI_VERSION(1, 5));

	(void)flags;
	pthread_mutex_lock(&cq->dom->lock);
	if (!cq->en) {
		pthread_mutex_unlock(&cq->dom->lock);
		return -FI_EAGAIN;
	}
	e = &cq->errs[cq->ehead];
	buf->op_context = e->ctx;
	buf->flags = e->flags;
	buf->len = e->len;
	buf->buf = e->buf;
	buf->data = e->data;
	buf->tag = e->tag;
	buf->olen = e->olen;
	buf->err = e->err;
	buf->prov_errno = e->prov_errno;
	if (!v15) {
		buf->err_data = NULL;
	} else {
		if (!buf->err_data_size)
			buf->err_data = NULL;
		buf->err_data_size = 0;
	}
	cq->ehead = (cq->ehead + 1) % cq->ecap;
	cq->en--;
	cq->idle_since = 0;
	pthread_mutex_unlock(&cq->dom->lock);
	return 1;
}

static ssize_t cq_sreadfrom(struct fid_cq *fcq, void *buf, size_t count, fi_addr_t *src,
			    const void *cond, int timeout)
{
	struct xwfi_cq *cq = container_of(fcq, struct xwfi_cq, cq);
	struct xwfi_domain *dom = cq->dom;
	ssize_t r;
	int err;

	(void)cond;
	if (cq->wait == FI_WAIT_NONE)
		return -FI_EINVAL;
	if (!count || !buf)
		return -FI_EINVAL;
	pthread_mutex_lock(&dom->lock);
	err = xwfi_wait_ready(dom, &cq->ws, cq->eps, &cq->neps, cq_ready, cq, timeout);
	if (err == -FI_ECANCELED)
		return err; /* closed under us: unlocked */
	r = cq_take(cq, buf, count, src);
	if (r == -FI_EAGAIN && cq->signaled)
		cq->signaled = false;
	if (r != -FI_EAGAIN)
		cq->idle_since = 0;
	pthread_mutex_unlock(&dom->lock);
	return r;
}

static ssize_t cq_sread(struct fid_cq *fcq, void *buf, size_t count, const void *cond,
			int timeout)
{
	return cq_sreadfrom(fcq, buf, count, NULL, cond, timeout);
}

/* Wakes a thread blocked in fi_cq_sread (it returns -FI_EAGAIN) or asleep
 * on the CQ's fd, at once. */
static int cq_signal(struct fid_cq *fcq)
{
	struct xwfi_cq *cq = container_of(fcq, struct xwfi_cq, cq);

	pthread_mutex_lock(&cq->dom->lock);
	cq->signaled = true;
	xwfi_wset_kick(&cq->ws);
	pthread_mutex_unlock(&cq->dom->lock);
	return 0;
}

static const char *cq_strerror(struct fid_cq *fcq, int prov_errno, const void *err_data,
			       char *buf, size_t len)
{
	const char *s = xw_strerror(-prov_errno);

	(void)fcq;
	(void)err_data;
	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = 0;
		return buf;
	}
	return s;
}

/* A thread blocked in fi_cq_sread (or asleep in fi_cq_read) returns
 * (-FI_ECANCELED / -FI_EAGAIN) before the CQ goes. */
static int cq_close(struct fid *fid)
{
	struct xwfi_cq *cq = container_of(fid, struct xwfi_cq, cq.fid);
	int err = xwfi_wset_close(cq->dom, &cq->ws, &cq->refs);

	if (err)
		return err;
	/* how its reads went, at FI_LOG_LEVEL=info (test_fi_lossy_poll) */
	FI_INFO(&xwfi_prov, FI_LOG_CQ,
		"cq closed: fast_empty %llu idle_sleeps %llu idle_probes %llu idle_shared %llu\n",
		(unsigned long long)cq->ws.st.fast_empty, (unsigned long long)cq->ws.st.idle_sleeps,
		(unsigned long long)cq->ws.st.idle_probes, (unsigned long long)cq->ws.st.idle_shared);
	free(cq->ring);
	free(cq->errs);
	free(cq);
	return 0;
}

static int cq_control(struct fid *fid, int command, void *arg)
{
	struct xwfi_cq *cq = container_of(fid, struct xwfi_cq, cq.fid);

	return xwfi_wset_control(cq->dom, &cq->ws, cq->wait, command, arg);
}

static struct fi_ops cq_fi_ops = XWFI_FI_OPS(cq_close, xwfi_no_bind, cq_control);

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

int xwfi_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cqp,
		 void *context)
{
	struct xwfi_domain *dom = container_of(domain, struct xwfi_domain, dom);
	struct xwfi_cq *cq;
	int err;

	if (!attr)
		return -FI_EINVAL;
	switch (attr->format) {
	case FI_CQ_FORMAT_UNSPEC:
	case FI_CQ_FORMAT_CONTEXT:
	case FI_CQ_FORMAT_MSG:
	case FI_CQ_FORMAT_DATA:
	case FI_CQ_FORMAT_TAGGED:
		break;
	default:
		return -FI_ENOSYS;
	}
	switch (attr->wait_obj) {
	case FI_WAIT_NONE:
	case FI_WAIT_UNSPEC:
	case FI_WAIT_FD:
		break;
	default:
		return -FI_ENOSYS;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	err = xwfi_wset_open(dom, &cq->ws);
	if (err) {
		free(cq);
		return err;
	}
	cq->dom = dom;
	cq->fmt = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
	cq->wait = attr->wait_obj;
	cq->cq.fid.fclass = FI_CLASS_CQ;
	cq->cq.fid.context = context;
	cq->cq.fid.ops = &cq_fi_ops;
	cq->cq.ops = &cq_ops;
	*cqp = &cq->cq;
	return 0;
}

int xwfi_cq_attach(struct xwfi_cq *cq, struct xwfi_epref *ep)
{
	return xwfi_wset_attach(cq->dom, &cq->ws, cq->eps, &cq->neps, &cq->refs, ep);
}

void xwfi_cq_detach(struct xwfi_cq *cq, struct xwfi_epref *ep)
{
	xwfi_wset_detach(cq->dom, &cq->ws, cq->eps, &cq->neps, &cq->refs, ep);
}

/* 0: the caller may sleep on the CQ's fd (its endpoints armed, the timer
 * set to their next protocol timer); -FI_EAGAIN: completions wait, frames
 * wait or a timer is due: read instead. */
int xwfi_cq_trywait(struct xwfi_cq *cq)
{
	struct xwfi_domain *dom = cq->dom;

	pthread_mutex_lock(&dom->lock);
	if (cq->wait == FI_WAIT_NONE) {
		pthread_mutex_unlock(&dom->lock);
		return -FI_EINVAL;
	}
	xwfi_wset_fd_disarm(dom, &cq->ws, cq->eps, cq->neps);
	cq_progress(cq);
	return xwfi_wset_trywait(dom, &cq->ws, cq->eps, cq->neps, cq_ready(cq));
}
