// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * steer - attach bpf/steer.bpf.c (the veth test path's stand-in for n-tuple
 * rules) at tc ingress of interfaces in the current network namespace, or
 * read its counters.  Used by tests/mpi/hosts.sh (`hosts N bridge` with
 * QUEUES > 1) for the root-namespace bridge ports.
 *
 *   steer attach BASE QUEUES PIN IFACE...   attach; pin the counters at PIN
 *   steer counts PIN                        "q<i> <frames>" per queue that
 *                                           saw frames, "other <frames>"
 *
 * The filters stay after the program exits (they hold the program); they
 * go with the interfaces.  Exit 77 with a reason when the kernel refuses.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdpwake/proto.h"
#include "steer.skel.h"

static int silent(enum libbpf_print_level l, const char *f, va_list ap)
{
	return l == LIBBPF_WARN ? vfprintf(stderr, f, ap) : 0;
}

static int attach(int argc, char **argv)
{
	struct steer_bpf *skel;
	int fd, err;

	if (argc < 6)
		return 2;
	skel = steer_bpf__open();
	if (!skel) {
		printf("SKIP: cannot open the steering program: %s\n", strerror(errno));
		return 77;
	}
	skel->rodata->xws_base = (__u32)strtoul(argv[2], NULL, 0);
	skel->rodata->xws_queues = (__u32)strtoul(argv[3], NULL, 0);
	if (steer_bpf__load(skel)) {
		printf("SKIP: the kernel refused the tc steering program: %s\n", strerror(errno));
		return 77;
	}
	unlink(argv[4]);
	if (bpf_map__pin(skel->maps.xws_counts, argv[4])) {
		fprintf(stderr, "steer: pin %s: %s\n", argv[4], strerror(errno));
		return 1;
	}
	fd = bpf_program__fd(skel->progs.xw_steer);
	for (int i = 5; i < argc; i++) {
		DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_INGRESS);
		DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .prog_fd = fd);

		hook.ifindex = (int)if_nametoindex(argv[i]);
		if (!hook.ifindex) {
			fprintf(stderr, "steer: %s: no such interface\n", argv[i]);
			return 1;
		}
		err = bpf_tc_hook_create(&hook);
		if (!err || err == -EEXIST)
			err = bpf_tc_attach(&hook, &opts);
		if (err) {
			printf("SKIP: tc clsact ingress on %s: %s\n", argv[i], strerror(-err));
			return 77;
		}
	}
	steer_bpf__destroy(skel);
	return 0;
}

static int counts(const char *pin)
{
	int fd = bpf_obj_get(pin);
	__u64 v;

	if (fd < 0) {
		fprintf(stderr, "steer: %s: %s\n", pin, strerror(errno));
		return 1;
	}
	for (__u32 q = 0; q <= XW_MAX_QUEUES; q++) {
		if (bpf_map_lookup_elem(fd, &q, &v) || !v)
			continue;
		if (q == XW_MAX_QUEUES)
			printf("other %llu\n", (unsigned long long)v);
		else
			printf("q%u %llu\n", q, (unsigned long long)v);
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 2;

	libbpf_set_print(silent);
	if (argc >= 2 && !strcmp(argv[1], "attach"))
		rc = attach(argc, argv);
	else if (argc == 3 && !strcmp(argv[1], "counts"))
		rc = counts(argv[2]);
	if (rc == 2)
		fprintf(stderr, "usage: steer attach BASE QUEUES PIN IFACE... | steer counts PIN\n");
	return rc;
}
