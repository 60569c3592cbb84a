/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The control channel of a test's two hosts (or processes): one end of a
 * socketpair each.  They step through the same script and meet at
 * barriers; a host with an open endpoint keeps it progressing while it
 * waits (the library works inside its calls only: acks, retransmissions
 * and timers would stall, and the peer with them).
 *
 * Failures stop the test (REQUIRE), prefixed with xwt_chan_who.
 */
#ifndef XW_TEST_CHAN_H
#define XW_TEST_CHAN_H

#include <stddef.h>

struct xw_endpoint;

/* How long the other side may take to come (s; default 300). */
extern unsigned int xwt_chan_tmo_s;
/* This side's name in failure messages ("A", "B", ...; default ""). */
extern const char *xwt_chan_who;

/* Wait until the other side has written to @fd, progressing @ep (NULL:
 * none) about every millisecond meanwhile. */
void xwt_chan_wait(int fd, struct xw_endpoint *ep, const char *what);
/* One byte each way: both sides are here (out of step: the test stops). */
void xwt_bar(int fd, struct xw_endpoint *ep, const char *what);
/* @len bytes each way: @mine goes to the other side, its copy to @theirs
 * (addresses, verdicts). */
void xwt_xchg(int fd, struct xw_endpoint *ep, const void *mine, void *theirs, size_t len);

#endif
