// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* shell.c - shell commands of the tests and benchmarks (see shell.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "shell.h"

int xwu_sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int n, st;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd)) {
		fprintf(stderr, "xwu_sh: command of %d bytes not run (at most %zu)\n", n,
			sizeof(cmd) - 1);
		return -1;
	}
	st = system(cmd);
	if (st == -1)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
