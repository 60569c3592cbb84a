#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Debian's fi_pingpong over the xdpwake provider (FI_PROVIDER_PATH = the
# build tree) between the two ends of a veth pair in two namespaces: RDM
# endpoints, untagged (-m msg) and tagged (-m tagged), every size it offers
# (-S all) with data checks (-c), once in each direction.
set -u
here=$(cd "$(dirname "$0")" && pwd)
XW_SRC=${XW_SRC:-$(cd "$here/.." && pwd)}
OUTPUT=${OUTPUT:-$XW_SRC/.output}
. "$here/fabric/common.sh"

fi_common_checks
command -v fi_pingpong >/dev/null || skip "fi_pingpong missing (libfabric-bin)"
fi_pair pp
FI_TMP=$(mktemp -d /tmp/xwfi-pp.XXXXXX)
fail=0
port=$((47600 + $$ % 1000))

# run SERVER_NS SERVER_IF CLIENT_NS CLIENT_IF SERVER_IP MODE
run() {
	local log=$FI_TMP/$1-$6 spid cpid rc
	ip netns exec "$1" env FI_XDPWAKE_IFACE="$2" timeout 120 \
		fi_pingpong -p xdpwake -e rdm -m "$6" -S all -c -I 20 -B "$port" >"$log.srv" 2>&1 &
	spid=$!
	FI_PIDS+=("$spid")
	if ! wait_listen "$1" "$port" "$spid"; then
		echo "FAIL: $6 server in $1 did not start"; sed 's/^/    | /' "$log.srv"; fail=1; return
	fi
	ip netns exec "$3" env FI_XDPWAKE_IFACE="$4" timeout 120 \
		fi_pingpong -p xdpwake -e rdm -m "$6" -S all -c -I 20 -P "$port" "$5" >"$log.cli" 2>&1 &
	cpid=$!
	FI_PIDS+=("$cpid")
	wait "$cpid"; rc=$?
	wait "$spid"; rc=$((rc | $?))
	local n
	n=$(grep -c '^[0-9]' "$log.cli")
	if [ "$rc" -eq 0 ] && [ "$n" -ge 20 ]; then
		echo "ok:   fi_pingpong -m $6, server $2, client $4: $n sizes"
		grep -E '^(bytes|1k |64k|1m )' "$log.cli" | sed 's/^/    /'
	else
		echo "FAIL: fi_pingpong -m $6 server $2 client $4 (exit $rc, $n sizes)"
		sed 's/^/    srv| /' "$log.srv" | tail -15
		sed 's/^/    cli| /' "$log.cli" | tail -15
		fail=1
	fi
}

for mode in msg tagged; do
	run "$NS_A" "$IF_A" "$NS_B" "$IF_B" "$IP_A" "$mode"
	run "$NS_B" "$IF_B" "$NS_A" "$IF_A" "$IP_B" "$mode"
done
exit $fail
