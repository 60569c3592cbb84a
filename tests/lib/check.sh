# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# shellcheck shell=bash
#
# The shell tests' checks, sourced (". tests/lib/check.sh"): numbered ok/FAIL
# lines, a failure count, and run() keeping a command's output for the FAIL
# report.  A script ends with check_summary (exit 0 when all passed, else 1).
# Variables: checks, failures (counts); out, err, rc, ms (the last run(),
# which keeps stderr in $TMP/err: the script's scratch directory).

checks=0
failures=0
out=
err=
rc=0
ms=

# run CMD...: stdout in $out, stderr in $err, exit status in $rc, time in $ms
run() {
	local start
	start=$(date +%s%N)
	out=$("$@" 2>"${TMP:?}/err")
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	err=$(cat "$TMP/err")
}

ok() {
	checks=$((checks + 1))
	echo "ok   $checks - $1"
}

# fail DESCRIPTION: counted; the last run()'s status and output shown (if any)
fail() {
	checks=$((checks + 1))
	failures=$((failures + 1))
	echo "FAIL $checks - $1"
	[ -n "$ms" ] || return 0 # no run() yet
	echo "     exit $rc, ${ms} ms"
	[ -n "$out" ] && sed 's/^/     stdout: /' <<<"$out" | head -20
	[ -n "$err" ] && sed 's/^/     stderr: /' <<<"$err" | head -20
	return 0
}

# check DESCRIPTION CONDITION...: CONDITION is a command run by the shell
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else fail "$desc"; fi
}

has() { grep -q -- "$2" <<<"$1"; }
json_ok() { python3 -m json.tool >/dev/null 2>&1 <<<"$1"; }
# jq_py JSON EXPR: print EXPR evaluated with d = the parsed document
jq_py() { python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }

# The verdict line, and the exit status (0 all passed, 1 some failed).
check_summary() {
	echo "----"
	if [ "$failures" -ne 0 ]; then
		echo "$failures of $checks checks failed"
		exit 1
	fi
	echo "ok: $checks checks"
	exit 0
}
