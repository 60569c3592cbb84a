#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# The provider defects of issue 23 (part 4), one row each
# (tests/fabric/fi_defects.c): completion levels and attributes fi_getinfo
# must not grant, fi_close lingering until sent data is acknowledged (and
# bounded when the peer is gone), FI_AV_TABLE indices with an invalid
# address, -FI_ENOSYS from RMA/atomic/collective calls, NULL arguments.
# One process (and its peer, the same program, started by it) with two RDM
# endpoints on the two ends of a veth pair inside a fresh namespace.
# FI_DEFECTS_ONLY=linger,avtable runs only those rows.
set -u
here=$(cd "$(dirname "$0")" && pwd)
XW_SRC=${XW_SRC:-$(cd "$here/.." && pwd)}
OUTPUT=${OUTPUT:-$XW_SRC/.output}
. "$here/fabric/common.sh"

fi_common_checks
BIN=$OUTPUT/tests/fi_defects.bin # make tests (mk/fabric.mk)
[ -x "$BIN" ] || { echo "FAIL: $BIN not built (make tests)"; exit 1; }
fi_ns1 d 02:00:00:00:da:01 02:00:00:00:db:01

# the peer gone: the library gives it up after 5 s; every wait of the
# program is bounded (the whole run takes about 15 s)
# Its silent peers must stay silent: no polling watchdog (the provider's
# default, FI_XDPWAKE_WATCHDOG_USECS=1000, would answer for a peer that
# does not call in, which is what the watchdog is for)
FI_XDPWAKE_WATCHDOG_USECS=0 FI_LOG_LEVEL=warn ip netns exec "$NS_A" timeout -k 10 180 "$BIN" xwa xwb \
	2>"$OUTPUT/tests/fi_defects.err"
rc=$?
if [ $rc -ne 0 ]; then
	echo "FAIL: fi_defects (exit $rc); its log:"
	sed 's/^/    | /' "$OUTPUT/tests/fi_defects.err" | tail -20
	exit 1
fi
exit 0
