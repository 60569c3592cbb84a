// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * init.c - the provider's entry point: fi_prov_ini (FI_EXT_INI) defines
 * and reads the FI_XDPWAKE_* parameters, routes the library's messages to
 * libfabric's log (log.c) and hands libfabric the provider: fi_getinfo
 * (attr.c) and the fabric (fabric.c).
 */
#include "xwfi.h"

struct xwfi_params xwfi_params = { .ep_id = -1, .idle_sleep_usecs = 10000,
				   .watchdog_usecs = 1000, .idle_spin_usecs = 1000,
				   .idle_crowd = 0, .pull_spin = -1 };

static void xwfi_cleanup(void)
{
}

struct fi_provider xwfi_prov = {
	.name = XWFI_NAME,
	.version = XWFI_VERSION,
	.fi_version = XWFI_FI_VERSION,
	.getinfo = xwfi_getinfo,
	.fabric = xwfi_fabric,
	.cleanup = xwfi_cleanup,
};

/* The FI_XDPWAKE_* parameters, in the order fi_info -e lists them. */
static const struct {
	const char *name;
	enum fi_param_type type;
	void *val; /* char ** for FI_PARAM_STRING, int * for FI_PARAM_INT */
	const char *help;
} params[] = {
	{ "iface", FI_PARAM_STRING, &xwfi_params.iface,
	  "Interface to use (default: every usable Ethernet interface, one "
	  "fi_info each)" },
	{ "queue", FI_PARAM_STRING, &xwfi_params.queue,
	  "Interface queue the endpoint binds: a number, or any (default): the "
	  "first queue no other process holds, so that every rank of a host "
	  "gets its own queue (with udp, port = base + queue; steer each port "
	  "to its queue: xdpwake steer)" },
	{ "ep_id", FI_PARAM_INT, &xwfi_params.ep_id,
	  "xdpwake endpoint id 0..1023 (default: the first free id from 1)" },
	{ "encap", FI_PARAM_STRING, &xwfi_params.encap,
	  "Encapsulation: eth (EtherType, default) or udp" },
	{ "policy", FI_PARAM_STRING, &xwfi_params.policy,
	  "Wake policy of the endpoint: every, timeout, marker, stream, adaptive "
	  "(default: the interface's)" },
	{ "wait", FI_PARAM_STRING, &xwfi_params.wait,
	  "Wait strategy of fi_cq_sread/fi_cntr_wait: spin, yield, block, "
	  "spin-yield, spin-block (default), adaptive" },
	{ "spin_usecs", FI_PARAM_INT, &xwfi_params.spin_usecs,
	  "Spin time of the spin-* strategies in us (default: the measured "
	  "block-and-wake cost)" },
	{ "pull_spin", FI_PARAM_INT, &xwfi_params.pull_spin,
	  "While an endpoint pulls a large message (rendezvous: its fragments "
	  "asked for and still coming), blocking waits of the spin-* strategies "
	  "(fi_cq_sread, fi_cntr_wait) poll on until this many times the "
	  "block-and-wake cost has passed since the last poll that found "
	  "frames, instead of sleeping in the gaps between the sender's bursts "
	  "(default 8; 0: off, at most 1000)" },
	{ "give_up_ms", FI_PARAM_INT, &xwfi_params.give_up_ms,
	  "A peer whose endpoint neither answers nor acknowledges for this long "
	  "while something is owed is given up: its operations fail with "
	  "FI_ETIMEDOUT (default 60000: a lost path or a host down). A peer that "
	  "computes or is stopped is not given up: its XDP program answers the "
	  "liveness probes while its endpoint is open; one whose endpoint closed "
	  "or whose process died is given up when a probe (after at most 1 s of "
	  "silence) finds it so, its operations failing with FI_ECONNRESET" },
	{ "idle_sleep_usecs", FI_PARAM_INT, &xwfi_params.idle_sleep_usecs,
	  "Longest sleep of one non-blocking fi_cq_read once the CQ's reads have "
	  "found nothing for longer than the spin time: the read sleeps until the "
	  "XDP program wakes one of its endpoints, a completion without a frame "
	  "is queued or a protocol timer is due; the bound lets the caller's "
	  "other progress run (default 10000; 0: never sleep in fi_cq_read, "
	  "spin as the caller does)" },
	{ "idle_spin_usecs", FI_PARAM_INT, &xwfi_params.idle_spin_usecs,
	  "How long the process's fi_cq_read calls may find nothing before one "
	  "sleeps, when the CPU is the rank's own (a sched_yield() probe ran no "
	  "other task): a short wait (a ping-pong's) keeps the spinning latency; "
	  "on a CPU another task wants, the read sleeps after the spin time "
	  "(default 1000; 0: after the spin time always)" },
	{ "idle_crowd", FI_PARAM_INT, &xwfi_params.idle_crowd,
	  "When the host has more than this many runnable tasks per CPU the "
	  "process may run on (/proc/loadavg, looked at every 10 ms), an idle "
	  "fi_cq_read of a CQ whose endpoints took frames from the wire in the "
	  "last second sleeps at once: no spin time, no sched_yield() probe or "
	  "yield phase (a poller or yielder on a crowded CPU keeps the kernel's "
	  "softirq work that carries the wire's frames and ACKs waiting; ranks "
	  "with peers on the host only keep yielding to each other) "
	  "(default 0: never; 2 for jobs with many ranks per CPU: at 2-4 ranks per "
	  "CPU it costs, their yields are faster there)" },
	{ "watchdog_usecs", FI_PARAM_INT, &xwfi_params.watchdog_usecs,
	  "Polling watchdog of every endpoint: frames the application leaves "
	  "unconsumed that long (it computes) are handled by a library thread, "
	  "woken by the XDP program only then (default 1000; 0: off)" },
	{ "pin_root", FI_PARAM_STRING, &xwfi_params.pin_root,
	  "bpffs directory of the pinned maps (default: /sys/fs/bpf/xdpwake)" },
};

FI_EXT_INI
{
	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		fi_param_define(&xwfi_prov, params[i].name, params[i].type, "%s", params[i].help);
		if (params[i].type == FI_PARAM_STRING)
			fi_param_get_str(&xwfi_prov, params[i].name, params[i].val);
		else
			fi_param_get_int(&xwfi_prov, params[i].name, params[i].val);
	}
	xw_set_log(xwfi_log_cb, NULL, XW_LOG_INFO);
	return &xwfi_prov;
}
