/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The address-file rendezvous (libxwutil, not installed): the side that
 * listens writes its endpoint address to a file once it is open
 * (`xdpwake pingpong --server --addr-file`, `xwbench --role b`), the other
 * side waits for the file and reads it (`--peer-file`).  The file is
 * written under a temporary name and renamed, so a reader never sees half
 * an address.
 */
#ifndef XW_UTIL_ADDRFILE_H
#define XW_UTIL_ADDRFILE_H

#include <stddef.h>
#include <linux/types.h>

/* Write "@addr\n" to @path atomically: 0 or -errno. */
int xwu_addr_file_write(const char *path, const char *addr);

/* Read the first word of @path's first line into @buf, retrying every
 * 20 ms until it holds one, xwu_now_ns() reaches @deadline_ns or *@stop
 * (may be NULL) is set.  0; -ENOENT: no such file; -EINVAL: it stayed
 * empty. */
int xwu_addr_file_wait(const char *path, char *buf, size_t len, __u64 deadline_ns,
		       volatile int *stop);

#endif
