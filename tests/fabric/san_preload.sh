# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Sourced by the provider tests (tests/fabric/common.sh, tests/mpi/common.sh).
# A provider built with sanitizers (make check SANITIZE=address,undefined) is
# loaded by programs that are not instrumented: fi_info, fi_pingpong, fi_unit,
# Open MPI's ranks.  The sanitizer runtimes must then be the first libraries
# of those processes, so they are preloaded (LD_PRELOAD, passed on to MPI
# ranks with -x).  Leak checking is off in them: what leaks there at exit
# belongs to libfabric and Open MPI; the library's own leaks are checked by
# the instrumented tests.

# san_preload PROVIDER_SO: exports LD_PRELOAD and ASAN_OPTIONS if the
# provider links a sanitizer runtime; SAN_PRELOADED=1 then.
san_preload() {
	local libs="" l
	SAN_PRELOADED=0
	for l in asan ubsan; do
		ldd "$1" 2>/dev/null | grep -q "lib$l\.so" || continue
		libs="$libs${libs:+:}$(gcc -print-file-name="lib$l.so")"
	done
	[ -n "$libs" ] || return 0
	export LD_PRELOAD="$libs${LD_PRELOAD:+:$LD_PRELOAD}"
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	SAN_PRELOADED=1
}
