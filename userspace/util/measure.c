// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The clock and CPU time (measure.h): one reading of /proc/stat and of
 * getrusage for the tool's pingpong/stream, the benchmark drivers and the
 * peers' programs, so that they all report the same quantities.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include "measure.h"

__u64 xwu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

int xwu_cpu_ticks_read(struct xwu_cpu_ticks *t)
{
	FILE *f = fopen("/proc/stat", "re");
	int n;

	memset(t, 0, sizeof(*t));
	if (!f)
		return -errno;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &t->user, &t->nice,
		   &t->system, &t->idle, &t->iowait, &t->irq, &t->softirq, &t->steal);
	fclose(f);
	if (n < 8) {
		memset(t, 0, sizeof(*t));
		return -EIO;
	}
	return 0;
}

int xwu_machine_cpu_us(__u64 *busy_us, __u64 *total_us)
{
	long hz = sysconf(_SC_CLK_TCK);
	struct xwu_cpu_ticks t;
	__u64 busy;
	int err;

	*busy_us = *total_us = 0;
	err = xwu_cpu_ticks_read(&t);
	if (err)
		return err;
	if (hz <= 0)
		return -EIO;
	busy = t.user + t.nice + t.system + t.irq + t.softirq + t.steal;
	*busy_us = busy * 1000000ULL / (__u64)hz;
	*total_us = (busy + t.idle + t.iowait) * 1000000ULL / (__u64)hz;
	return 0;
}

__u64 xwu_machine_busy_us(void)
{
	__u64 busy, total;

	xwu_machine_cpu_us(&busy, &total);
	return busy;
}

__u64 xwu_tv_us(const struct timeval *tv)
{
	return (__u64)tv->tv_sec * 1000000ULL + (__u64)tv->tv_usec;
}

__u64 xwu_proc_cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return xwu_tv_us(&ru.ru_utime) + xwu_tv_us(&ru.ru_stime);
}
