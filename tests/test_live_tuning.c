// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Live tuning: while host A streams numbered messages to host B (B blocks
 * in its receives), the wake policy of B's endpoint is changed three times
 * without restarting anything: with `xdpwake set`, with the README's
 * bpftool command for `marker` (run verbatim, the pin directory and key
 * substituted), and back with `xdpwake set`.  Each phase's wakes must come
 * from the policy in force (the XDP program's per-reason counters), and
 * every message must arrive, in order, intact.  Sender and receiver go in
 * lock-step (a message is sent only once the receiver is asleep), so the
 * counts do not depend on how fast either runs.
 */
#include <sys/socket.h>

#include <pthread.h>

#include "chan.h"
#include "harness.h"
#include "hosts.h"
#include "xdpwake.h"
#include "internal.h" /* xwi_iface_shared(): the receiver's armed flag */

#define IF_A "xwla"
#define IF_B "xwlb"
#define EP 2
#define MSGS_PER_PHASE 300
#define TMO 10000

static int chan = -1, is_b;
static char pin_root[PATH_MAX];

static void bar(void)
{
	xwt_bar(chan, NULL, "step");
}

/* The README's bpftool line for `# <name>` (policy), adapted to B. */
static int readme_policy_line(const char *name, const char *pin_dir, char *out, size_t len)
{
	const char *src = getenv("XW_SRC");
	char path[PATH_MAX], line[512], tag[64];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "%s/README.md", src ? src : ".");
	f = fopen(path, "r");
	if (!f)
		return -errno;
	snprintf(tag, sizeof(tag), "# %s", name);
	while (fgets(line, sizeof(line), f)) {
		char *pol = strstr(line, "$PIN/policy key 0 0 0 0 value ");

		if (!pol || !strstr(line, tag) || strncmp(line, "bpftool map update", 18))
			continue;
		line[strcspn(line, "#")] = '\0';
		/* $PIN -> our pin dir; key 0 -> endpoint EP */
		*pol = '\0';
		snprintf(out, len, "%s%s/policy key %d 0 0 0 value %s", line, pin_dir, EP,
			 pol + strlen("$PIN/policy key 0 0 0 0 value "));
		found = 1;
		break;
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}

static struct xw_stats wake_stats(struct xw_endpoint *ep)
{
	XW_OPTS(xw_stats, s);

	REQUIRE(xw_iface__stats(xw_endpoint__iface(ep), EP, &s) == 0, "stats");
	return s;
}

/*
 * Lock-step: the sender sends a message only when the receiver is asleep
 * (armed), so every message meets an armed receiver and its wake is the
 * policy's decision, however slowly either process runs.  B's helper
 * thread watches B's own armed flag (the XDP program clears it when it
 * wakes B; B clears it after its sleep) and tells A "send now" over the
 * channel once per message, after the previous one was received.
 */
struct armed_watch {
	volatile __u32 *armed;
	int received; /* messages received by the main thread (atomic) */
	int total;
};

static void *watch_armed(void *arg)
{
	struct armed_watch *w = arg;
	char c = 's';

	for (int i = 0; i < w->total; i++) {
		__u64 end = xwu_now_ns() + (__u64)TMO * 1000000ULL;

		/* message i-1 received, and B asleep again */
		while (__atomic_load_n(&w->received, __ATOMIC_ACQUIRE) < i ||
		       !__atomic_load_n(w->armed, __ATOMIC_ACQUIRE)) {
			REQUIRE(xwu_now_ns() < end, "B: not asleep for message %d after %d ms", i, TMO);
			sched_yield();
		}
		REQUIRE(write(chan, &c, 1) == 1, "send-now token");
	}
	return NULL;
}

static void receive_phase(struct xw_endpoint *ep, __u32 *next, const char *phase)
{
	char buf[256], want[256];
	struct armed_watch w = { .total = MSGS_PER_PHASE };
	struct xw_shared *sh = xwi_iface_shared(xw_endpoint__iface(ep), EP);
	XW_OPTS(xw_status, st);
	pthread_t th;

	REQUIRE(sh, "B: map the shared entry: %s", strerror(errno));
	w.armed = &sh->armed;
	REQUIRE(pthread_create(&th, NULL, watch_armed, &w) == 0, "watch thread");
	for (int i = 0; i < MSGS_PER_PHASE; i++) {
		int err = xw_endpoint__recv(ep, buf, sizeof(buf), 0x11, ~0ULL, &st, TMO);

		REQUIRE(err == 0, "%s: recv %u: %s", phase, *next, xw_strerror(err));
		__atomic_store_n(&w.received, i + 1, __ATOMIC_RELEASE);
		snprintf(want, sizeof(want), "message %u", *next);
		memset(want + strlen(want) + 1, (int)(*next & 0xFF),
		       sizeof(want) - strlen(want) - 1);
		CHECK(st.len == sizeof(buf) && !memcmp(buf, want, sizeof(buf)),
		      "%s: message %u lost, reordered or damaged (got \"%.20s\")", phase, *next, buf);
		(*next)++;
	}
	pthread_join(th, NULL);
}

static void send_phase(struct xw_endpoint *ep, const struct xw_addr *peer, __u32 *next)
{
	char buf[256], c;

	for (int i = 0; i < MSGS_PER_PHASE; i++) {
		REQUIRE(read(chan, &c, 1) == 1 && c == 's', "the receiver's send-now token");
		snprintf(buf, sizeof(buf), "message %u", *next);
		memset(buf + strlen(buf) + 1, (int)(*next & 0xFF), sizeof(buf) - strlen(buf) - 1);
		REQUIRE(xw_endpoint__send(ep, peer, buf, sizeof(buf), 0x11, TMO) == 0, "send");
		(*next)++;
	}
}

/* Change B's policy the way @how says; returns the command's status. */
static int set_policy(struct xw_endpoint *ep, const char *how, const char *name)
{
	const char *out = getenv("OUTPUT");
	char cmd[PATH_MAX * 2 + 256];

	if (!strcmp(how, "bpftool")) {
		char line[600];

		REQUIRE(readme_policy_line(name, xw_iface__pin_dir(xw_endpoint__iface(ep)), line,
					   sizeof(line)) == 0,
			"README has no bpftool line for policy %s", name);
		printf("  bpftool (from the README): %s\n", line);
		return xwt_sh("%s >/dev/null", line);
	}
	snprintf(cmd, sizeof(cmd), "%s/xdpwake set %s --pin-root %s --ep %d policy=%s",
		 out ? out : ".output", xw_iface__name(xw_endpoint__iface(ep)), pin_root, EP, name);
	printf("  %s\n", cmd);
	return xwt_sh("%s >/dev/null", cmd);
}

struct phase {
	const char *how, *policy;
	int reason_field; /* offset of the counter that must carry the wakes */
};

#define OFF(f) ((int)__builtin_offsetof(struct xw_stats, f))

static __u64 field(const struct xw_stats *s, int off)
{
	return *(const __u64 *)((const char *)s + off);
}

static void run_b(void)
{
	const struct phase phases[] = {
		{ "xdpwake", "timeout", OFF(wake_timeout) },
		{ "bpftool", "marker", OFF(wake_marker) },
		{ "xdpwake", "every", OFF(wake_every) },
	};
	const int others[] = { OFF(wake_timeout), OFF(wake_marker), OFF(wake_every),
			       OFF(wake_stream), OFF(wake_frames) };
	struct xw_endpoint *ep;
	struct xw_addr me, peer;
	__u32 next = 0;
	int err;

	XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root, .wait_strategy = XW_WAIT_BLOCK);
	err = xw_endpoint__open(IF_B, EP, &o, &ep);
	REQUIRE(err == 0, "B open: %s", xw_strerror(err));
	xw_endpoint__addr(ep, &me);
	REQUIRE(write(chan, &me, sizeof(me)) == sizeof(me) &&
		read(chan, &peer, sizeof(peer)) == sizeof(peer), "addresses");
	for (size_t p = 0; p < sizeof(phases) / sizeof(phases[0]); p++) {
		XW_OPTS(xw_stats, a);
		XW_OPTS(xw_stats, b);
		__u64 wanted, other = 0;

		CHECK(set_policy(ep, phases[p].how, phases[p].policy) == 0, "setting %s with %s failed",
		      phases[p].policy, phases[p].how);
		a = wake_stats(ep);
		bar(); /* the sender starts this phase */
		receive_phase(ep, &next, phases[p].policy);
		b = wake_stats(ep);
		wanted = field(&b, phases[p].reason_field) - field(&a, phases[p].reason_field);
		for (size_t k = 0; k < sizeof(others) / sizeof(others[0]); k++)
			if (others[k] != phases[p].reason_field)
				other += field(&b, others[k]) - field(&a, others[k]);
		printf("  phase %zu (%s, set with %s): %d messages, %llu wakes of that policy, %llu "
		       "of others\n", p + 1, phases[p].policy, phases[p].how, MSGS_PER_PHASE,
		       (unsigned long long)wanted, (unsigned long long)other);
		/* Every message met a sleeping receiver (lock-step): most of
		 * them woke it by the policy in force, and (almost) none by
		 * another. */
		CHECK(wanted + 3 >= MSGS_PER_PHASE,
		      "%s: only %llu of %d messages woke the receiver by that policy",
		      phases[p].policy, (unsigned long long)wanted, MSGS_PER_PHASE);
		CHECK(other <= 3, "%s: %llu wakes by another policy's rule", phases[p].policy,
		      (unsigned long long)other);
		bar();
	}
	CHECK(next == 3 * MSGS_PER_PHASE, "received %u messages", next);
	xw_endpoint__close(ep);
	bar();
}

static void run_a(void)
{
	struct xw_endpoint *ep;
	struct xw_addr me, peer;
	__u32 next = 0;
	int err;

	XW_OPTS(xw_endpoint_opts, o, .pin_root = pin_root);
	err = xw_endpoint__open(IF_A, EP, &o, &ep);
	REQUIRE(err == 0, "A open: %s", xw_strerror(err));
	xw_endpoint__addr(ep, &me);
	REQUIRE(read(chan, &peer, sizeof(peer)) == sizeof(peer) &&
		write(chan, &me, sizeof(me)) == sizeof(me), "addresses");
	for (int p = 0; p < 3; p++) {
		bar();
		send_phase(ep, &peer, &next);
		bar();
	}
	xw_endpoint__close(ep);
	bar();
}

int main(void)
{
	struct xwt_hosts h = { .if_a = IF_A, .if_b = IF_B };

	xwt_private_netns();
	xwt_pin_root();
	if (xwt_sh("command -v bpftool >/dev/null"))
		xwt_skip("bpftool is not installed");
	xwt_hosts_fork(&h);
	is_b = h.is_b;
	chan = h.chan[0];
	snprintf(pin_root, sizeof(pin_root), "%s", h.pin_root);
	if (is_b) {
		run_b();
		exit(xwt_failures ? 1 : 0);
	}
	run_a();
	xwt_hosts_join(&h);
	return xwt_done();
}
