/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Shell commands of the tests and benchmarks (libxwutil, not installed):
 * set-up steps (`ip netns`, `ip link`, `tc`) run through system(3), their
 * output left on the caller's stdout/stderr.
 */
#ifndef XW_UTIL_SHELL_H
#define XW_UTIL_SHELL_H

#include <stdarg.h>

/* Run the command @fmt formats (at most 4095 bytes): its exit status,
 * 128 + the signal that ended it, or -1 when it could not be started. */
__attribute__((format(printf, 1, 2))) int xwu_sh(const char *fmt, ...);
int xwu_vsh(const char *fmt, va_list ap);

#endif
