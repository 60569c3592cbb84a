// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The control channel of a test's two hosts (chan.h). */
#include <poll.h>
#include <xdpwake.h>

#include "chan.h"
#include "harness.h"

unsigned int xwt_chan_tmo_s = 300;
const char *xwt_chan_who = "";

#define WHO xwt_chan_who, *xwt_chan_who ? ": " : ""

void xwt_chan_wait(int fd, struct xw_endpoint *ep, const char *what)
{
	unsigned long long end = xwu_now_ns() + xwt_chan_tmo_s * 1000000000ULL;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int n = poll(&pfd, 1, ep ? 1 : 1000);

		REQUIRE(n >= 0 || errno == EINTR, "%s%s%s: poll: %s", WHO, what, strerror(errno));
		if (n > 0)
			return;
		REQUIRE(xwu_now_ns() < end, "%s%s%s: the other side did not come in %u s", WHO,
			what, xwt_chan_tmo_s);
		if (ep)
			xw_endpoint__progress(ep);
	}
}

void xwt_bar(int fd, struct xw_endpoint *ep, const char *what)
{
	char c = 'x', r;

	REQUIRE(write(fd, &c, 1) == 1, "%s%sbarrier %s: write", WHO, what);
	xwt_chan_wait(fd, ep, what);
	REQUIRE(read(fd, &r, 1) == 1, "%s%sbarrier %s: the other side is gone", WHO, what);
	REQUIRE(r == 'x', "%s%sbarrier %s: out of step (got %#x)", WHO, what, (unsigned)r);
}

void xwt_xchg(int fd, struct xw_endpoint *ep, const void *mine, void *theirs, size_t len)
{
	REQUIRE(write(fd, mine, len) == (ssize_t)len, "%s%sexchange: write", WHO);
	xwt_chan_wait(fd, ep, "exchange");
	REQUIRE(read(fd, theirs, len) == (ssize_t)len, "%s%sexchange: the other side is gone",
		WHO);
}
