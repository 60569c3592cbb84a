// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The test harness's functions (harness.h): skip and verdict, root and
 * private namespaces, the per-process bpffs directory, payload patterns,
 * the clock.
 */
#include <fcntl.h>

#include "harness.h"
#include "rand.h"

int xwt_failures;
int xwt_checks;
char xwt_pin_dir[PATH_MAX];

void xwt_skip(const char *fmt, ...)
{
	va_list ap;

	printf("SKIP: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(XWT_SKIP);
}

int xwt_done(void)
{
	if (xwt_failures) {
		fprintf(stderr, "%d of %d checks failed\n", xwt_failures, xwt_checks);
		return 1;
	}
	printf("ok: %d checks\n", xwt_checks);
	return 0;
}

void xwt_require_root(void)
{
	if (geteuid() != 0)
		xwt_skip("needs root (CAP_NET_ADMIN, CAP_BPF, CAP_SYS_ADMIN)");
}

/* Move this process into a fresh, anonymous network namespace with lo up. */
void xwt_private_netns(void)
{
	xwt_require_root();
	if (unshare(CLONE_NEWNET))
		xwt_skip("unshare(CLONE_NEWNET): %s", strerror(errno));
	if (xwt_sh("ip link set lo up"))
		xwt_skip("ip link set lo up failed (iproute2 missing?)");
}

void xwt_no_ipv6(void)
{
	static const char *const paths[] = { "/proc/sys/net/ipv6/conf/all/disable_ipv6",
					     "/proc/sys/net/ipv6/conf/default/disable_ipv6" };

	for (int i = 0; i < 2; i++) {
		int fd = open(paths[i], O_WRONLY | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (write(fd, "1", 1) < 0) {
			/* best effort (no IPv6 in this kernel) */
		}
		close(fd);
	}
}

void xwt_pin_cleanup(void)
{
	char cmd[PATH_MAX + 16];

	if (xwt_pin_dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", xwt_pin_dir);
		if (system(cmd)) {
			/* best effort */
		}
	}
}

void xwt_on_signal(int sig)
{
	xwt_pin_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* A per-process bpffs directory (removed at exit) for pinned maps. */
const char *xwt_pin_root(void)
{
	if (!xwt_pin_dir[0]) {
		xwt_require_root();
		if (xwt_sh("mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf"))
			xwt_skip("cannot mount bpffs on /sys/fs/bpf");
		snprintf(xwt_pin_dir, sizeof(xwt_pin_dir), "/sys/fs/bpf/xwtest-%d", (int)getpid());
		atexit(xwt_pin_cleanup);
		signal(SIGINT, xwt_on_signal);
		signal(SIGTERM, xwt_on_signal);
		signal(SIGABRT, xwt_on_signal);
	}
	return xwt_pin_dir;
}

/* A deterministic payload pattern (xorshift from @seed), for checking every
 * byte a test sends. */
void xwt_fill(unsigned char *p, size_t n, unsigned int seed)
{
	__u32 x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)xwu_xorshift32(&x);
}

unsigned char *xwt_grow(unsigned char *buf, size_t *cap, size_t want)
{
	if (*cap >= want)
		return buf;
	free(buf);
	buf = malloc(want);
	REQUIRE(buf, "malloc %zu", want);
	*cap = want;
	return buf;
}

/* The Internet checksum (RFC 1071) of @n bytes (even) at @p, as stored. */
unsigned short xwt_ip_csum(const void *p, size_t n)
{
	const unsigned short *w = p;
	unsigned int s = 0;

	for (size_t i = 0; i < n / 2; i++)
		s += w[i];
	while (s >> 16)
		s = (s & 0xFFFF) + (s >> 16);
	return (unsigned short)~s;
}

/* The index of the first byte of @p that differs from xwt_fill(@seed), or
 * -1 when all @n are right. */
long xwt_first_diff(const unsigned char *p, size_t n, unsigned int seed)
{
	__u32 x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)xwu_xorshift32(&x))
			return (long)i;
	return -1;
}
