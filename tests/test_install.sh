#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# `make install` as a user of the library sees it:
#   - install with PREFIX=<tmp>/usr, and with DESTDIR=<tmp>/dest PREFIX=/usr:
#     the library (static, shared, SONAME symlinks), both public headers,
#     libxdpwake.pc with the right prefix, the xdpwake tool;
#   - the shared library: SONAME libxdpwake.so.$SOVERSION (the Makefile's),
#     exports exactly the symbols userspace/libxdpwake.map lists (each by
#     name, no wildcard), all in one version node, and those are exactly the
#     XW_API functions of the installed header (no internal xwi_*, no
#     libbpf/libxdp symbols); xdpwake.h's version macros match VERSION;
#   - tests/install/consumer.c built with gcc -std=c11 -Wall -Wextra -Werror
#     from `pkg-config --cflags --libs libxdpwake`, linked shared and static,
#     and consumer.cpp with g++ -std=c++17, all run; both check that the
#     installed headers need no <linux/bpf.h> (bpf/xdpwake_maps.h, the BPF
#     map layouts, is internal and not installed: the include directory holds
#     exactly xdpwake.h and xdpwake/proto.h);
#   - the installed tool runs `--version`.
# Needs no root.  Exit 0 pass, 1 fail, 77 skip (a required tool is missing).
set -u

here=$(cd "$(dirname "$0")" && pwd)
XW_SRC=${XW_SRC:-$(cd "$here/.." && pwd)}
OUTPUT=${OUTPUT:-$XW_SRC/.output}
MAKE=${MAKE:-make}

for tool in "$MAKE" gcc g++ pkg-config readelf nm install perl; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool is not installed"
		exit 77
	fi
done
for dep in libbpf libxdp; do
	if ! pkg-config --exists "$dep"; then
		echo "SKIP: pkg-config does not know $dep (libbpf-dev / libxdp-dev missing)"
		exit 77
	fi
done

tmp=$(mktemp -d /tmp/xw-install.XXXXXX) || { echo "FAIL: mktemp"; exit 1; }
# `make install` (re)generates $OUTPUT/libxdpwake.pc with the PREFIX given
# here; put back what was there so that a later real install does not pick
# up a .pc pointing into this test's scratch directory.
pc_built=$OUTPUT/libxdpwake.pc
if [ -f "$pc_built" ]; then cp -p "$pc_built" "$tmp/pc.saved"; fi
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	if [ -f "$tmp/pc.saved" ]; then
		cp -p "$tmp/pc.saved" "$pc_built"
	else
		rm -f "$pc_built"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

. "$XW_SRC/tests/lib/check.sh"
show_log() { sed 's/^/    | /' "$1" | tail -30; }

version=$(sed -n 's/^VERSION_\(MAJOR\|MINOR\|PATCH\) := //p' "$XW_SRC/Makefile" | paste -sd.)
soversion=$(sed -n 's/^SOVERSION := //p' "$XW_SRC/Makefile")
soname=libxdpwake.so.$soversion
echo "xdpwake $version from $XW_SRC, build in $OUTPUT, scratch $tmp"

# ---- 1. PREFIX install -------------------------------------------------------
pfx=$tmp/usr
if "$MAKE" -C "$XW_SRC" install OUTPUT="$OUTPUT" PREFIX="$pfx" >"$tmp/make1.log" 2>&1; then
	ok "make install PREFIX=$pfx"
else
	fail "make install PREFIX=$pfx"
	show_log "$tmp/make1.log"
	exit 1
fi

# ---- 2. DESTDIR install ------------------------------------------------------
dest=$tmp/dest
sys_before=$(ls -d /usr/lib/libxdpwake* /usr/include/xdpwake.h /usr/bin/xdpwake 2>/dev/null)
if "$MAKE" -C "$XW_SRC" install OUTPUT="$OUTPUT" DESTDIR="$dest" PREFIX=/usr \
	>"$tmp/make2.log" 2>&1; then
	ok "make install DESTDIR=$dest PREFIX=/usr"
else
	fail "make install DESTDIR=$dest PREFIX=/usr"
	show_log "$tmp/make2.log"
fi
sys_after=$(ls -d /usr/lib/libxdpwake* /usr/include/xdpwake.h /usr/bin/xdpwake 2>/dev/null)
check "DESTDIR install wrote nothing under /usr" test "$sys_before" = "$sys_after"

# Files of an install rooted at $1 (the prefix as seen on disk).
check_tree() {
	local root=$1 label=$2 f got missing=0

	for f in lib/libxdpwake.a "lib/libxdpwake.so.$version" "lib/$soname" lib/libxdpwake.so \
		include/xdpwake.h include/xdpwake/proto.h lib/pkgconfig/libxdpwake.pc bin/xdpwake; do
		if [ ! -e "$root/$f" ]; then
			fail "$label: $f missing"
			missing=1
		fi
	done
	[ $missing = 0 ] && ok "$label: library, headers, libxdpwake.pc and tool installed"
	# SONAME symlinks must be relative so that they survive DESTDIR staging.
	check "$label: $soname -> libxdpwake.so.$version" \
		test "$(readlink "$root/lib/$soname")" = "libxdpwake.so.$version"
	check "$label: libxdpwake.so -> $soname" \
		test "$(readlink "$root/lib/libxdpwake.so")" = "$soname"
	check "$label: bin/xdpwake is executable" test -x "$root/bin/xdpwake"
	check "$label: installed xdpwake.h is the source's" \
		cmp -s "$root/include/xdpwake.h" "$XW_SRC/include/xdpwake.h"
	check "$label: installed xdpwake/proto.h is the source's" \
		cmp -s "$root/include/xdpwake/proto.h" "$XW_SRC/include/xdpwake/proto.h"
	# Exactly the public headers: nothing internal (bpf/xdpwake_maps.h,
	# userspace/lib/*.h) is installed.
	got=$(cd "$root/include" 2>/dev/null && find . -type f | sort | tr '\n' ' ')
	check "$label: the installed headers are exactly xdpwake.h, xdpwake/proto.h (found: $got)" \
		test "$got" = "./xdpwake.h ./xdpwake/proto.h "
}

# .pc variable $2 of file $1.
pc_var() { sed -n "s|^$2=||p" "$1"; }

check_pc() {
	local pc=$1 want=$2 label=$3 got

	[ -f "$pc" ] || return
	got=$(pc_var "$pc" prefix)
	check "$label: libxdpwake.pc prefix=$want (it says prefix=$got)" test "$got" = "$want"
	got=$(pc_var "$pc" libdir)
	check "$label: libxdpwake.pc libdir=$want/lib (it says libdir=$got)" test "$got" = "$want/lib"
	got=$(pc_var "$pc" includedir)
	check "$label: libxdpwake.pc includedir=$want/include (it says $got)" \
		test "$got" = "$want/include"
	check "$label: libxdpwake.pc has Requires.private: libbpf libxdp" \
		grep -Eq '^Requires\.private:[[:space:]]*libbpf[[:space:],]+libxdp[[:space:]]*$' "$pc"
	check "$label: libxdpwake.pc Version: $version" grep -q "^Version: $version\$" "$pc"
}

hv=$(sed -n 's/^#define XDPWAKE_VERSION_\(MAJOR\|MINOR\|PATCH\) //p' "$XW_SRC/include/xdpwake.h" | paste -sd.)
check "xdpwake.h's XDPWAKE_VERSION_* say $version (they say $hv)" test "$hv" = "$version"
check_tree "$pfx" "PREFIX install"
check_pc "$pfx/lib/pkgconfig/libxdpwake.pc" "$pfx" "PREFIX install"
check_tree "$dest/usr" "DESTDIR install"
check_pc "$dest/usr/lib/pkgconfig/libxdpwake.pc" /usr "DESTDIR install"

# ---- 3. the shared library ---------------------------------------------------
so=$pfx/lib/libxdpwake.so.$version
if [ -f "$so" ]; then
	got=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	check "SONAME is $soname (readelf says '$got')" test "$got" = "$soname"
	# Defined dynamic symbols, without version suffixes; the version node
	# itself (XDPWAKE_2.0, type A) is not a symbol of the API.
	nm -D --defined-only "$so" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u \
		>"$tmp/exports"
	bad=$(grep -v '^xw_' "$tmp/exports")
	if [ -z "$bad" ] && [ -s "$tmp/exports" ]; then
		ok "exports only xw_* symbols ($(wc -l <"$tmp/exports") of them)"
	else
		fail "exported symbols not starting with xw_: $(tr '\n' ' ' <<<"$bad" | head -c 600)"
	fi
	bad=$(grep -E '^(xwi_|bpf_|libbpf_|btf_|xdp_|libxdp_|xsk_|perf_|ring_buffer_|user_ring_buffer_)' \
		"$tmp/exports")
	check "no internal (xwi_) or libbpf/libxdp symbols exported${bad:+: $bad}" test -z "$bad"
	# Every XW_API function of the installed header is exported.
	grep -ho 'XW_API[^(]*\bxw_[A-Za-z0-9_]*[[:space:]]*(' "$pfx/include/xdpwake.h" |
		sed -E 's/.*\b(xw_[A-Za-z0-9_]*)[[:space:]]*\($/\1/' | sort -u >"$tmp/api"
	missing=$(comm -23 "$tmp/api" "$tmp/exports")
	check "all $(wc -l <"$tmp/api") XW_API functions of xdpwake.h are exported${missing:+ (missing: $(tr '\n' ' ' <<<"$missing"))}" \
		test -z "$missing" -a -s "$tmp/api"
	extra=$(comm -13 "$tmp/api" "$tmp/exports")
	check "no exported xw_ symbol outside the public header${extra:+ (extra: $(tr '\n' ' ' <<<"$extra"))}" \
		test -z "$extra"
	check "symbols carry the version node XDPWAKE_*" \
		sh -c "nm -D --defined-only '$so' | grep -q ' A XDPWAKE_'"
	# The version script lists every symbol by name, and the library
	# exports exactly those.
	map=$XW_SRC/userspace/libxdpwake.map
	sed -n 's/^[[:space:]]*\(xw_[A-Za-z0-9_]*\);[[:space:]]*$/\1/p' "$map" | sort -u >"$tmp/map"
	# Outside comments, the only `*` is local's.
	bad=$(perl -0pe 's{/\*.*?\*/}{}gs' "$map" | sed -n '/local:/,$!p' | grep '\*')
	check "the version script has no wildcard in its global lists${bad:+: $bad}" test -z "$bad"
	missing=$(comm -23 "$tmp/map" "$tmp/exports")
	extra=$(comm -13 "$tmp/map" "$tmp/exports")
	check "exports = the version script's $(wc -l <"$tmp/map") symbols${missing:+ (not exported: $(tr '\n' ' ' <<<"$missing"))}${extra:+ (not listed: $(tr '\n' ' ' <<<"$extra"))}" \
		test -z "$missing$extra" -a -s "$tmp/map"
	nodes=$(nm -D --defined-only "$so" | awk '$2 != "A" && $3 ~ /^xw_/ { sub(/.*@@?/, "", $3); print $3 }' | sort -u | tr '\n' ' ')
	check "every symbol in one version node ($nodes)" test "$(wc -w <<<"$nodes")" -eq 1
fi

# ---- 4. consumers built with pkg-config -------------------------------------
export PKG_CONFIG_PATH=$pfx/lib/pkgconfig
cflags=$(pkg-config --cflags libxdpwake 2>"$tmp/pc.err")
check "pkg-config --cflags libxdpwake ($cflags)" test $? -eq 0 -a -s "$pfx/lib/pkgconfig/libxdpwake.pc"
libs=$(pkg-config --libs libxdpwake 2>>"$tmp/pc.err")
check "pkg-config --libs libxdpwake ($libs)" test $? -eq 0
slibs=$(pkg-config --static --libs libxdpwake 2>>"$tmp/pc.err")
check "pkg-config --static --libs libxdpwake ($slibs)" test $? -eq 0
[ -s "$tmp/pc.err" ] && show_log "$tmp/pc.err"
case " $cflags " in
*" -I$pfx/include "*) ok "--cflags points at $pfx/include" ;;
*) fail "--cflags '$cflags' does not point at $pfx/include" ;;
esac
case " $slibs " in
*" -lbpf "*" -lxdp "* | *" -lxdp "*" -lbpf "*) ok "--static --libs pulls in libbpf and libxdp" ;;
*) fail "--static --libs '$slibs' lacks -lbpf/-lxdp" ;;
esac

# build NAME LOG COMMAND...: compile, showing the log on failure.
build() {
	local name=$1 log=$2
	shift 2
	if "$@" >"$log" 2>&1; then
		ok "build $name"
		return 0
	fi
	fail "build $name: $*"
	show_log "$log"
	return 1
}

# run NAME COMMAND...: run a consumer, showing what it printed.
run() {
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		ok "run $name: $out"
	else
		fail "run $name (exit $rc)"
		printf '%s\n' "$out" | sed 's/^/    | /'
	fi
}

csrc=$XW_SRC/tests/install/consumer.c
cxxsrc=$XW_SRC/tests/install/consumer.cpp
# A sanitizer build of the library needs consumers built the same way.
if [ -n "${SANITIZE:-}" ]; then
	cflags="$cflags -fsanitize=$SANITIZE"
fi

# shared
# shellcheck disable=SC2086
if build "consumer.c (shared)" "$tmp/cc-shared.log" \
	gcc -std=c11 -Wall -Wextra -Werror $cflags -o "$tmp/consumer-shared" "$csrc" $libs; then
	check "consumer-shared needs $soname" \
		sh -c "readelf -d '$tmp/consumer-shared' | grep -q 'NEEDED.*\[$soname\]'"
	resolved=$(LD_LIBRARY_PATH=$pfx/lib ldd "$tmp/consumer-shared" 2>/dev/null |
		sed -n "s/.*$soname => \([^ ]*\).*/\1/p")
	check "consumer-shared loads $soname from the install ($resolved)" \
		test "$resolved" = "$pfx/lib/$soname"
	run "consumer-shared" env LD_LIBRARY_PATH="$pfx/lib" "$tmp/consumer-shared"
fi

# static: libxdpwake from the archive, its private dependencies from
# --static --libs (libbpf/libxdp may stay shared).
static_libs=
for w in $slibs; do
	if [ "$w" = -lxdpwake ]; then
		static_libs+=" -Wl,-Bstatic -lxdpwake -Wl,-Bdynamic"
	else
		static_libs+=" $w"
	fi
done
# shellcheck disable=SC2086
if build "consumer.c (static libxdpwake)" "$tmp/cc-static.log" \
	gcc -std=c11 -Wall -Wextra -Werror $cflags -o "$tmp/consumer-static" "$csrc" $static_libs; then
	check "consumer-static does not need libxdpwake.so" \
		sh -c "! readelf -d '$tmp/consumer-static' | grep -q 'NEEDED.*libxdpwake'"
	run "consumer-static" env -u LD_LIBRARY_PATH "$tmp/consumer-static"
fi

# C++
# shellcheck disable=SC2086
if build "consumer.cpp (g++ -std=c++17)" "$tmp/cxx.log" \
	g++ -std=c++17 -Wall -Wextra -Werror $cflags -o "$tmp/consumer-cxx" "$cxxsrc" $libs; then
	run "consumer-cxx" env LD_LIBRARY_PATH="$pfx/lib" "$tmp/consumer-cxx"
fi

# ---- 5. the installed tool ---------------------------------------------------
for tool in "$pfx/bin/xdpwake" "$dest/usr/bin/xdpwake"; do
	[ -x "$tool" ] || continue
	out=$("$tool" --version 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && [[ $out == *"$version"* ]]; then
		ok "${tool#"$tmp"/} --version: $out"
	else
		fail "${tool#"$tmp"/} --version (exit $rc): $out"
	fi
done

check_summary
