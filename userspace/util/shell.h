/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Shell commands of the tests and benchmarks (libxwutil, not installed):
 * set-up steps (`ip netns`, `ip link`, `tc`) run through system(3), their
 * output left on the caller's stdout/stderr.
 */
#ifndef XW_UTIL_SHELL_H
#define XW_UTIL_SHELL_H

/* Run the command @fmt formats: its exit status, 128 + the signal that
 * ended it, or -1 when it could not be started or is longer than 4095
 * bytes (not run: a cut command could do something else). */
__attribute__((format(printf, 1, 2))) int xwu_sh(const char *fmt, ...);

#endif
