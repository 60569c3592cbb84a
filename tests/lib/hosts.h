/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Two hosts for the tests that run xdpwake endpoints on both ends of a
 * veth pair: host A is this process, host B a child forked into its own
 * network namespace (it dies with A: PR_SET_PDEATHSIG).  The caller is in
 * its private namespace already (xwt_private_netns()) with its pin
 * directory (xwt_pin_root()); xwt_hosts_fork() makes the veth pair and the
 * channels (socketpairs), forks, moves B's end into B's namespace, brings
 * both ends up (with their addresses), and returns in both processes:
 *
 *   struct xwt_hosts h = { .if_a = "xwma", .if_b = "xwmb",
 *                          .ip_a = "10.77.0.1", .ip_b = "10.77.0.2" };
 *   xwt_hosts_fork(&h);
 *   if (h.is_b) { run(h.chan[0]); exit(xwt_failures ? 1 : 0); }
 *   run(h.chan[0]);
 *   xwt_hosts_join(&h);         // B exited 0 (a CHECK)
 *   return xwt_done();
 *
 * B gets pins of its own (h.pin_root, removed at its exit).
 */
#ifndef XWT_HOSTS_H
#define XWT_HOSTS_H

#include <stdbool.h>
#include <sys/types.h>

#include "harness.h"

#define XWT_HOSTS_CHAN_MAX 2

struct xwt_hosts {
	/* set by the caller */
	const char *if_a, *if_b; /* veth ends: A's stays here, B's goes to B      */
	const char *ip_a, *ip_b; /* IPv4 address (/24) of each end; NULL: none    */
	const char *veth_opts;	 /* `ip link add` options of each end, or NULL     */
	const char *veth_what;	 /* NULL: "a veth pair" (skip message) */
	int nchan;		 /* socketpairs between A and B (0: 1)             */
	bool veth_required;	 /* no veth pair fails the test instead of a skip */
	void (*b_init)(void);	 /* B: first thing in the child (before unshare)  */
	/* set by xwt_hosts_fork() */
	bool is_b;		 /* this process is host B                        */
	pid_t pid_b;		 /* A: B's pid                                    */
	int chan[XWT_HOSTS_CHAN_MAX]; /* this host's end of each socketpair      */
	char pin_root[PATH_MAX]; /* this host's bpffs pin directory               */
};

/* Make the pair, fork B; returns in A and in B (h->is_b), links up. */
void xwt_hosts_fork(struct xwt_hosts *h);
/* A: wait for B; B must have exited 0 (a CHECK). */
void xwt_hosts_join(struct xwt_hosts *h);
/* The whole run: xwt_hosts_fork(), a barrier "up" on chan[0], then
 * @fn(this host's veth end) in both; B exits with its verdict, A waits
 * for B (xwt_hosts_join()) and returns xwt_done(). */
int xwt_hosts_run(struct xwt_hosts *h, void (*fn)(const char *ifname));

#endif
