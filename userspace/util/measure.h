/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Measurement helpers of the tool, the benchmarks and the tests (libxwutil,
 * not installed): the monotonic clock, whole-machine CPU time from the first
 * line of /proc/stat and the process's own CPU time from getrusage.
 *
 * Definitions (every user reports these):
 *   machine busy  = user + nice + system + irq + softirq + steal of all CPUs
 *                   (guest time is in user/nice already)
 *   machine total = busy + idle + iowait
 *   process CPU   = getrusage(RUSAGE_SELF) user + system time (all threads)
 */
#ifndef XW_UTIL_MEASURE_H
#define XW_UTIL_MEASURE_H

#include <sys/time.h>
#include <linux/types.h>

/* CLOCK_MONOTONIC in nanoseconds. */
__u64 xwu_now_ns(void);

/* The first ("cpu") line of /proc/stat, in clock ticks (USER_HZ). */
struct xwu_cpu_ticks {
	unsigned long long user, nice, system, idle, iowait, irq, softirq, steal;
};

/* Read it: 0, -errno, or -EIO (fewer than the eight fields); all zero on
 * failure. */
int xwu_cpu_ticks_read(struct xwu_cpu_ticks *t);

/* Whole-machine busy and total CPU time in us (definitions above): 0, or
 * -errno with both set to 0. */
int xwu_machine_cpu_us(__u64 *busy_us, __u64 *total_us);

/* Whole-machine busy CPU time in us; 0 when /proc/stat cannot be read. */
__u64 xwu_machine_busy_us(void);

/* A struct timeval in us. */
__u64 xwu_tv_us(const struct timeval *tv);

/* This process's user + system CPU time in us (getrusage). */
__u64 xwu_proc_cpu_us(void);

#endif
