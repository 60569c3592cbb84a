// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * fault_hosts.c - the fault harness (tests/lib/fault.h) as two named namespace
 * "hosts" for programs launched from a shell: tests/test_mpi_fault.sh runs
 * Open MPI ranks in them through tests/mpi/ns_agent.sh.
 *
 *   fault_hosts HOST_A HOST_B DROP_PERMILLE REORDER_EVERY REORDER_BY
 *
 * Sets up the three namespaces of xwf_setup() (A and B joined through the
 * impairing middle M), names A and B (ip netns attach: /run/netns/HOST_*),
 * renames their data interfaces to xwd0, and impairs every xdpwake frame in
 * both directions: dropped with probability DROP_PERMILLE / 1000 (tc
 * ingress, tests/bpf/impair.bpf.c), then through the relay, which holds every
 * REORDER_EVERY-th frame back by REORDER_BY later ones.  Prints "ready".
 *
 * Then reads commands on stdin:
 *   counters   prints one line per direction:
 *              "counters DIR seen=N dropped=N relayed=N held=N sent=N"
 *              (DIR a2b or b2a; held: frames the relay sent out of order)
 * At end of file (the shell went away, crash included) or after 900 s it
 * deletes the two names and exits; M, and with it the link between A and
 * B, vanishes with this process.
 */
#include <poll.h>

#include "fault.h"

#define LIFETIME_MS (900 * 1000)

static const char *names[2];

static void unname(void)
{
	for (int h = 0; h < 2; h++)
		if (names[h])
			xwt_sh("ip netns del %s 2>/dev/null", names[h]);
}

static void print_counters(struct xwf_topo *t)
{
	static const char *dn[2] = { "a2b", "b2a" };

	for (int d = 0; d < 2; d++) {
		struct xwf_counters c = xwf_counters(t, d);
		struct xwf_relay_stats r = xwf_relay_stats(t, d);

		printf("counters %s seen=%llu dropped=%llu relayed=%llu held=%llu sent=%llu\n",
		       dn[d], (unsigned long long)c.seen, (unsigned long long)c.dropped,
		       (unsigned long long)c.relayed, (unsigned long long)r.held,
		       (unsigned long long)r.sent);
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct xwf_topo t;
	struct xwf_relay_cfg r = { 0 };
	struct xwf_cfg c = { 0 };
	__u64 end;
	char line[64];

	if (argc != 6) {
		fprintf(stderr, "usage: %s HOST_A HOST_B DROP_PERMILLE REORDER_EVERY REORDER_BY\n",
			argv[0]);
		return 2;
	}
	xwf_setup(&t, NULL);
	atexit(unname);
	for (int h = 0; h < 2; h++) {
		int up = 0;

		xwf_enter(&t, h);
		REQUIRE(xwt_sh("ip netns attach %s %d", argv[1 + h], (int)getpid()) == 0,
			"ip netns attach %s", argv[1 + h]);
		names[h] = argv[1 + h];
		REQUIRE(xwt_sh("ip link set %s down && ip link set %s name xwd0 && "
			       "ip link set xwd0 up",
			       t.ifname[h], t.ifname[h]) == 0,
			"rename %s", t.ifname[h]);
		snprintf(t.ifname[h], sizeof(t.ifname[h]), "xwd0");
		for (int i = 0; i < 200 && !(up = xwf_running("xwd0")); i++)
			usleep(10000);
		REQUIRE(up, "%s: xwd0 has no carrier after 2 s", argv[1 + h]);
	}
	xwf_enter(&t, XWF_HOST_M);
	c.drop_p = (__u32)(strtoul(argv[3], NULL, 0) * 65536ULL / 1000);
	r.reorder_every = (__u32)strtoul(argv[4], NULL, 0);
	r.reorder_by = (__u32)strtoul(argv[5], NULL, 0);
	for (int d = 0; d < 2; d++) {
		xwf_set(&t, d, &c);
		xwf_relay(&t, d, &r);
	}
	printf("ready\n");
	fflush(stdout);
	end = xwu_now_ns() + LIFETIME_MS * 1000000ULL;
	for (;;) {
		struct pollfd p = { .fd = 0, .events = POLLIN };
		__u64 now = xwu_now_ns();
		int n;

		if (now >= end)
			break;
		n = poll(&p, 1, (int)((end - now) / 1000000ULL) + 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || !fgets(line, sizeof(line), stdin))
			break;
		if (!strncmp(line, "counters", 8))
			print_counters(&t);
	}
	xwf_teardown(&t);
	return 0;
}
