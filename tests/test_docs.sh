#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# The man page and the README's command reference come from the tool's
# command table: the README is up to date, the page renders without
# warnings, and it documents every command and every option --help shows.
set -u
OUTPUT=${OUTPUT:-$(dirname "$0")/../.output}
SRC=${XW_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
tool=$OUTPUT/xdpwake
. "$SRC/tests/lib/check.sh"

[ -x "$tool" ] || { echo "FAIL: $tool not built"; exit 1; }
if "$SRC/scripts/readme-cli.sh" "$tool" "$SRC/README.md" --check; then
	ok "README command reference matches 'xdpwake help --markdown'"
else
	fail "README command reference is stale (run make readme)"
fi
page=$(mktemp)
trap 'rm -f "$page" "$page.txt" "$page.err"' EXIT
"$tool" help --man > "$page" || fail "xdpwake help --man failed"
if command -v groff >/dev/null; then
	groff -man -Tutf8 -ww -z "$page" 2> "$page.err"
	if [ -s "$page.err" ]; then fail "groff warnings: $(head -3 "$page.err")"; else ok "man page renders without warnings"; fi
	MANWIDTH=100 groff -man -Tutf8 "$page" 2>/dev/null | col -b > "$page.txt"
	# The commands as the tool's own help lists them.
	cmds=$("$tool" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
	[ -n "$cmds" ] || fail "no command list in xdpwake --help"
	nc=0 no=0
	for c in $cmds; do
		nc=$((nc + 1))
		grep -q "^   $c" "$page.txt" || { fail "man page lacks command $c"; continue; }
		for o in $("$tool" "$c" --help 2>/dev/null | grep -oE '^\s+(-[a-zA-Z], )?--[a-z][a-z-]*' | grep -oE -- '--[a-z][a-z-]*'); do
			no=$((no + 1))
			grep -q -- "$o" "$page.txt" || fail "man page: $c lacks $o"
		done
	done
	[ "$nc" -ge 10 ] && [ "$no" -ge 50 ] || fail "only $nc commands / $no options found in --help"
	ok "man page documents all $nc commands and the $no options their --help shows"
else
	echo "note: groff missing, rendering not checked (make deps installs man-db)"
fi

# docs/ARCHITECTURE.md is the map of who owns what: every source file of the
# library, the tool and the BPF programs is on it, and nothing on it is gone.
arch=$SRC/docs/ARCHITECTURE.md
if [ -f "$arch" ]; then
	missing=()
	for f in "$SRC"/userspace/*/*.[ch] "$SRC"/bpf/*.bpf.c "$SRC"/include/xdpwake.h \
		"$SRC"/include/xdpwake/*.h; do
		[ -f "$f" ] || continue
		grep -qE "[\`/]$(basename "$f" | sed "s/\./\\\\./g")\`" "$arch" || missing+=("${f#"$SRC"/}")
	done
	gone=()
	for n in $(grep -oE '`[A-Za-z0-9_./-]+\.(c|h)`' "$arch" | tr -d '`' | sort -u); do
		[ -n "$(find "$SRC/userspace" "$SRC/bpf" "$SRC/include" "$SRC/tests" "$SRC/bench" \
			"$SRC/fabric" -name "$(basename "$n")" -print -quit 2>/dev/null)" ] ||
			gone+=("$n")
	done
	if [ ${#missing[@]} -eq 0 ] && [ ${#gone[@]} -eq 0 ]; then
		ok "docs/ARCHITECTURE.md maps every source file, and only existing ones"
	else
		[ ${#missing[@]} -eq 0 ] || fail "docs/ARCHITECTURE.md does not mention: ${missing[*]}"
		[ ${#gone[@]} -eq 0 ] || fail "docs/ARCHITECTURE.md names files that do not exist: ${gone[*]}"
	fi
else
	fail "docs/ARCHITECTURE.md is missing"
fi
check_summary
