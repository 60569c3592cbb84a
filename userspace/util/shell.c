// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* shell.c - shell commands of the tests and benchmarks (see shell.h). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "shell.h"

int xwu_vsh(const char *fmt, va_list ap)
{
	char cmd[4096];
	int st;

	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	st = system(cmd);
	if (st == -1)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int xwu_sh(const char *fmt, ...)
{
	va_list ap;
	int st;

	va_start(ap, fmt);
	st = xwu_vsh(fmt, ap);
	va_end(ap);
	return st;
}
