#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Replace the README's command reference (between the cli-begin/cli-end
# markers) with `xdpwake help --markdown`: one source with the man page.
# Usage: readme-cli.sh XDPWAKE README [--check]  (--check: exit 1 if stale)
set -eu
tool=$1 readme=$2
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.gen"' EXIT
"$tool" help --markdown > "$tmp.gen"
awk -v gen="$tmp.gen" '
	/<!-- cli-begin -->/ { print; while ((getline l < gen) > 0) print l; skip = 1; next }
	/<!-- cli-end -->/ { skip = 0 }
	!skip { print }
' "$readme" > "$tmp"
grep -q '<!-- cli-begin -->' "$readme" || { echo "$readme has no cli-begin marker" >&2; exit 1; }
if [ "${3:-}" = "--check" ]; then
	cmp -s "$tmp" "$readme" || { echo "$readme: command reference is stale (make readme)" >&2; diff "$readme" "$tmp" | head -20 >&2; exit 1; }
	exit 0
fi
cat "$tmp" > "$readme"
