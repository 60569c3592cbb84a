// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * log.c - the library's messages (xw_set_log) go through libfabric's
 * logging: warnings as FI_WARN, the rest as FI_INFO; while an endpoint
 * tries ids in turn, those of one attempt are held and released at debug
 * level when that id was only busy.
 */
#include <stdio.h>

#include "xwfi.h"

/* The library's messages go through libfabric's logging. */
#define XWFI_HELD_MAX 8

static __thread struct {
	bool on;
	int n;
	enum xw_log_level level[XWFI_HELD_MAX];
	char msg[XWFI_HELD_MAX][256];
} held;

static void log_out(enum xw_log_level level, const char *msg, bool busy)
{
	if (busy)
		FI_LOG(&xwfi_prov, FI_LOG_DEBUG, FI_LOG_EP_CTRL, "%s\n", msg);
	else if (level <= XW_LOG_WARN)
		FI_WARN(&xwfi_prov, FI_LOG_CORE, "%s\n", msg);
	else
		FI_INFO(&xwfi_prov, FI_LOG_CORE, "%s\n", msg);
}

void xwfi_log_cb(enum xw_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (held.on && held.n < XWFI_HELD_MAX) {
		held.level[held.n] = level;
		snprintf(held.msg[held.n++], sizeof(held.msg[0]), "%s", msg);
		return;
	}
	log_out(level, msg, false);
}

void xwfi_log_hold(void)
{
	held.on = true;
	held.n = 0;
}

void xwfi_log_release(bool busy)
{
	held.on = false;
	for (int i = 0; i < held.n; i++)
		log_out(held.level[i], held.msg[i], busy);
	held.n = 0;
}
