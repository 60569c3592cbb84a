// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The address-file rendezvous between the two sides of a measurement
 * (addrfile.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "addrfile.h"
#include "measure.h"

int xwu_addr_file_write(const char *path, const char *addr)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid());
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "%s\n", addr);
	if (fclose(f) || rename(tmp, path)) {
		int err = -errno;

		unlink(tmp);
		return err;
	}
	return 0;
}

int xwu_addr_file_wait(const char *path, char *buf, size_t len, __u64 deadline_ns,
		       volatile int *stop)
{
	FILE *f;

	for (;;) {
		f = fopen(path, "re");
		buf[0] = '\0';
		if (f) {
			if (!fgets(buf, (int)len, f))
				buf[0] = '\0';
			fclose(f);
			buf[strcspn(buf, " \t\r\n")] = '\0';
		}
		if (buf[0] || xwu_now_ns() >= deadline_ns || (stop && *stop))
			break;
		usleep(20000);
	}
	if (!buf[0])
		return f ? -EINVAL : -ENOENT;
	return 0;
}
