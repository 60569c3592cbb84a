#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Open MPI launch agent (--mca plm_rsh_agent) for "hosts" that are network
# namespaces: `ns_agent.sh HOST COMMAND...` runs COMMAND inside namespace
# HOST, as ssh would on a cluster node, with the UTS name HOST and one bpffs
# on /sys/fs/bpf shared by every rank of that host (ip netns exec gives a
# fresh /sys without one).
host=$1
shift
exec ip netns exec "$host" unshare --uts sh -c '
	hostname "$0"
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || exit 1
	exec sh -c "$1"' "$host" "$*"
