// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A full receive ring: counted, and nothing lost.  Two hosts joined by a
 * veth pair (hosts.h: A this process, B a forked child).  B's endpoint has
 * the smallest UMEM the library takes (64 frames: a receive ring of 32),
 * and B does not call the library while A sends it 200 one-frame
 * messages at once (A's send window is 256 frames): the kernel drops what
 * the ring cannot hold.  Then B receives.  Checked on B:
 *  - the drops are counted in the endpoint's statistics, from the AF_XDP
 *    socket's own counters (sock_rx_ring_full + sock_rx_dropped, the
 *    kernel's XDP_STATISTICS; which of the two depends on which runs out
 *    first, the RX ring or the fill ring), none as invalid descriptors;
 *  - every message arrives, once, in order, byte for byte (A resends what
 *    was dropped).
 * Every wait is bounded; B's pause is a fixed 200 ms without a library call
 * (the drops follow from the ring's size, not from timing: A's 200 frames
 * go out within its window whatever the machine's speed, and the kernel
 * takes them into B's ring in A's transmit call).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chan.h"
#include "harness.h"
#include "hosts.h"
#include "xdpwake.h"

#define IF_A "xwra"
#define IF_B "xwrb"
#define NMSG 200
#define TMO 20000 /* ms: a hang guard only */

static struct xwt_hosts hosts = { .if_a = IF_A, .if_b = IF_B, .ip_a = "10.79.0.1",
				    .ip_b = "10.79.0.2", .veth_required = true };

static void run_host(const char *ifname)
{
	XW_OPTS(xw_endpoint_opts, o, .pin_root = hosts.pin_root,
		.umem_frames = hosts.is_b ? 64 : 0);
	struct xw_endpoint *ep;
	struct xw_addr me, peer;
	struct xw_request *req[NMSG];
	static char buf[NMSG][32];
	XW_OPTS(xw_status, st);
	int err;

	err = xw_endpoint__open(ifname, 1, &o, &ep);
	if (err == -EAFNOSUPPORT)
		xwt_skip("AF_XDP not supported by this kernel");
	REQUIRE(err == 0, "%s: open: %s", hosts.is_b ? "B" : "A", xw_strerror(err));
	xw_endpoint__addr(ep, &me);
	xwt_xchg(hosts.chan[0], ep, &me, &peer, sizeof(me));
	/* the connection first: its handshake is not what is measured */
	if (hosts.is_b) {
		REQUIRE(xw_endpoint__recv(ep, buf[0], sizeof(buf[0]), 0x77, ~0ULL, &st, TMO) == 0,
			"B: the first message");
	} else {
		REQUIRE(xw_endpoint__send(ep, &peer, "hello", 6, 0x77, TMO) == 0, "A: hello");
	}
	xwt_bar(hosts.chan[0], ep, "connected");
	if (hosts.is_b) {
		struct xw_endpoint_stats a = { .sz = sizeof(a) }, b = { .sz = sizeof(b) };
		unsigned long long dropped;
		int ok = 0;

		REQUIRE(xw_endpoint__stats(ep, &a) == 0, "stats");
		/* A sends now; B takes nothing for 200 ms */
		xwt_bar(hosts.chan[0], ep, "go");
		usleep(200000);
		for (int i = 0; i < NMSG; i++)
			REQUIRE(xw_endpoint__irecv(ep, buf[i], sizeof(buf[i]), 0x1000 + (__u64)i,
						   ~0ULL, &req[i]) == 0, "irecv %d", i);
		for (int i = 0; i < NMSG; i++) {
			char want[32];

			snprintf(want, sizeof(want), "message %d", i);
			err = xw_request__wait(req[i], &st, TMO);
			ok += err == 0 && st.error == 0 && st.len == strlen(want) + 1 &&
			      !strcmp(buf[i], want);
		}
		REQUIRE(xw_endpoint__stats(ep, &b) == 0, "stats");
		/* lost in all: ring full + dropped (a frame dropped for want of
		 * a fill-ring frame counts in sock_rx_fill_empty too) */
		dropped = (b.sock_rx_ring_full - a.sock_rx_ring_full) +
			  (b.sock_rx_dropped - a.sock_rx_dropped);
		CHECK(ok == NMSG, "%d of %d messages arrived whole and in order", ok, NMSG);
		CHECK(dropped > 0,
		      "a 32-frame receive ring took %d frames without a drop counted "
		      "(ring full %llu, fill empty %llu, dropped %llu)",
		      NMSG, (unsigned long long)(b.sock_rx_ring_full - a.sock_rx_ring_full),
		      (unsigned long long)(b.sock_rx_fill_empty - a.sock_rx_fill_empty),
		      (unsigned long long)(b.sock_rx_dropped - a.sock_rx_dropped));
		CHECK(b.sock_invalid_descs == 0, "%llu invalid descriptors",
		      (unsigned long long)b.sock_invalid_descs);
		printf("full receive ring (32 frames, %d messages sent at once, receiver away "
		       "200 ms): %llu frames dropped by the kernel (ring full %llu, dropped %llu, "
		       "of which the fill ring empty %llu), all %d messages received\n",
		       NMSG, dropped, (unsigned long long)(b.sock_rx_ring_full - a.sock_rx_ring_full),
		       (unsigned long long)(b.sock_rx_dropped - a.sock_rx_dropped),
		       (unsigned long long)(b.sock_rx_fill_empty - a.sock_rx_fill_empty), ok);
	} else {
		xwt_bar(hosts.chan[0], ep, "go");
		for (int i = 0; i < NMSG; i++) {
			snprintf(buf[i], sizeof(buf[i]), "message %d", i);
			REQUIRE(xw_endpoint__isend(ep, &peer, buf[i], strlen(buf[i]) + 1,
						   0x1000 + (__u64)i, &req[i]) == 0, "isend %d", i);
		}
		for (int i = 0; i < NMSG; i++) {
			err = xw_request__wait(req[i], &st, TMO);
			CHECK(err == 0 && st.error == 0, "send %d: %s / %d", i, xw_strerror(err),
			      st.error);
		}
	}
	/* the barrier progresses the endpoint: A's resends reach B */
	xwt_bar(hosts.chan[0], ep, "done");
	xw_endpoint__close(ep);
}

int main(void)
{
	xwt_require_root();
	REQUIRE(unshare(CLONE_NEWNET) == 0, "unshare(CLONE_NEWNET): %s", strerror(errno));
	REQUIRE(xwt_sh("ip link set lo up") == 0, "lo up");
	xwt_pin_root();
	return xwt_hosts_run(&hosts, run_host);
}
