/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Minimal test harness: one test program per file, exit 0 pass, 1 fail,
 * 77 skip (with the reason on stdout).  Tests needing network namespaces
 * call xwt_private_netns(): an anonymous namespace that disappears with the
 * process, so nothing is left behind even when a test crashes.  bpffs pins
 * go under a per-process directory removed at exit.
 */
#ifndef XW_TEST_HARNESS_H
#define XW_TEST_HARNESS_H

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define XWT_SKIP 77

static int xwt_failures;
static int xwt_checks;

#define CHECK(cond, ...)                                                              \
	do {                                                                          \
		xwt_checks++;                                                         \
		if (!(cond)) {                                                        \
			xwt_failures++;                                               \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                 \
			fputc('\n', stderr);                                          \
		}                                                                     \
	} while (0)

/* Like CHECK (the condition is evaluated once), but stops the test. */
#define REQUIRE(cond, ...)                                                            \
	do {                                                                          \
		int xwt_ok_ = !!(cond);                                               \
		xwt_checks++;                                                         \
		if (!xwt_ok_) {                                                       \
			fprintf(stderr, "FATAL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                 \
			fputc('\n', stderr);                                          \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

__attribute__((noreturn, format(printf, 1, 2))) static void xwt_skip(const char *fmt, ...)
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

static inline int xwt_done(void)
{
	if (xwt_failures) {
		fprintf(stderr, "%d of %d checks failed\n", xwt_failures, xwt_checks);
		return 1;
	}
	printf("ok: %d checks\n", xwt_checks);
	return 0;
}

static inline void xwt_require_root(void)
{
	if (geteuid() != 0)
		xwt_skip("needs root (CAP_NET_ADMIN, CAP_BPF, CAP_SYS_ADMIN)");
}

/* Run a shell command (stdout/stderr kept); returns its exit status. */
__attribute__((format(printf, 1, 2))) static int xwt_sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	if (st == -1)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Move this process into a fresh, anonymous network namespace with lo up. */
static inline void xwt_private_netns(void)
{
	xwt_require_root();
	if (unshare(CLONE_NEWNET))
		xwt_skip("unshare(CLONE_NEWNET): %s", strerror(errno));
	if (xwt_sh("ip link set lo up"))
		xwt_skip("ip link set lo up failed (iproute2 missing?)");
}

static char xwt_pin_dir[PATH_MAX];

static void xwt_pin_cleanup(void)
{
	char cmd[PATH_MAX + 16];

	if (xwt_pin_dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", xwt_pin_dir);
		if (system(cmd)) {
			/* best effort */
		}
	}
}

static void xwt_on_signal(int sig)
{
	xwt_pin_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* A per-process bpffs directory (removed at exit) for pinned maps. */
static inline const char *xwt_pin_root(void)
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
static inline void xwt_fill(unsigned char *p, size_t n, unsigned int seed)
{
	unsigned int x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (unsigned char)x;
	}
}

/* The index of the first byte of @p that differs from xwt_fill(@seed), or
 * -1 when all @n are right. */
static inline long xwt_first_diff(const unsigned char *p, size_t n, unsigned int seed)
{
	unsigned int x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		if (p[i] != (unsigned char)x)
			return (long)i;
	}
	return -1;
}

static inline unsigned long long xwt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#endif
