/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Minimal test harness: one test program per file, exit 0 pass, 1 fail,
 * 77 skip (with the reason on stdout).  Tests needing network namespaces
 * call xwt_private_netns(): an anonymous namespace that disappears with the
 * process, so nothing is left behind even when a test crashes.  bpffs pins
 * go under a per-process directory removed at exit.
 *
 * The checks are macros; the functions are in harness.c (libxwt.a).
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

#include "measure.h" /* xwu_now_ns() */
#include "shell.h"
#include <sys/stat.h>
#include <sys/wait.h>

#define XWT_SKIP 77

/* Checks made and failed so far by this process (CHECK, REQUIRE). */
extern int xwt_failures;
extern int xwt_checks;
/* The per-process bpffs directory of xwt_pin_root() ("": none yet). */
extern char xwt_pin_dir[PATH_MAX];

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

__attribute__((noreturn, format(printf, 1, 2))) void xwt_skip(const char *fmt, ...);
int xwt_done(void);
void xwt_require_root(void);
/* Run a shell command (stdout/stderr kept); returns its exit status. */
#define xwt_sh xwu_sh /* shell.h (libxwutil) */
/* Move this process into a fresh, anonymous network namespace with lo up. */
void xwt_private_netns(void);
/* No IPv6 in this network namespace (no ND/MLD frames on its links); best
 * effort. */
void xwt_no_ipv6(void);
/* Remove xwt_pin_dir (at exit, and by tests that end early). */
void xwt_pin_cleanup(void);
/* Signal handler: pins removed, then die of @sig. */
void xwt_on_signal(int sig);
/* A per-process bpffs directory (removed at exit) for pinned maps. */
const char *xwt_pin_root(void);
/* A deterministic payload pattern (xorshift from @seed), for checking every
 * byte a test sends. */
void xwt_fill(unsigned char *p, size_t n, unsigned int seed);
/* A scratch buffer of at least @want bytes: @buf (of *@cap bytes) when it
 * is large enough, else a new one (the old freed, its bytes lost). */
unsigned char *xwt_grow(unsigned char *buf, size_t *cap, size_t want);
/* The Internet checksum (RFC 1071) of @n bytes (even) at @p, as stored:
 * an IPv4 header's (its check field 0), an ICMP message's. */
unsigned short xwt_ip_csum(const void *p, size_t n);
/* The index of the first byte of @p that differs from xwt_fill(@seed), or
 * -1 when all @n are right. */
long xwt_first_diff(const unsigned char *p, size_t n, unsigned int seed);


#endif
