#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# libFuzzer targets ($OUTPUT/fuzz/fuzz_*, built by mk/fuzz.mk with ASan and
# UBSan): every regression input (tests/fuzz/regress/<target>/) and corpus
# file (tests/fuzz/corpus/<target>/) once, then a fixed number of fuzzing
# runs per target from the corpus, with a fixed seed (FUZZ_SEED overrides; 0
# lets libFuzzer choose): the same inputs on a fast or a loaded machine, so
# a result never depends on how fast the machine is.  One process per target (no -jobs: the machine's
# cores are shared).  Any crash, sanitizer report or broken invariant fails,
# with the reproducer's path.  Skips when the targets were not built (no
# clang with libFuzzer).
#   FUZZ_RUNS      runs per target (default: fuzz_engine 60000, fuzz_frame
#                  2000000, other targets 100000; about 20 s each here idle)
#   FUZZ_SECONDS   fuzz for this long per target instead (make fuzz: long,
#                  exploratory runs, not reproducible run for run)
# Reproducible run for run (the same binary explores the same inputs): the
# corpus goes in as a sorted list (-seed_inputs; a directory is read in
# readdir order, the file system's, which differs between clones, and
# libFuzzer's start-up shuffle, seeded, permutes whatever order it gets);
# no reload of the output directory and no allocator purge (both every
# second: time); address randomization off (setarch -R) - pointer values
# reach libFuzzer's comparison tracing (-use_cmp), whose operands it
# writes into inputs, so with ASLR every process mutates differently.
# Without setarch (or where the personality cannot be set) it still runs,
# not reproducibly (said once).  With a FUZZ_WORK_DIR that already holds
# inputs, those are read in readdir order too.
#   FUZZ_SEED      default 1
#   FUZZ_CRASH_DIR where crashers are kept (default $OUTPUT/fuzz/crashes)
#   FUZZ_WORK_DIR  where new corpus inputs go, per target (default: temporary)
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUTPUT=${OUTPUT:-$here/../.output}
secs=${FUZZ_SECONDS:-}
seed=${FUZZ_SEED:-1}
tmp=$(mktemp -d /tmp/xw-fuzz.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
crashdir=${FUZZ_CRASH_DIR:-$OUTPUT/fuzz/crashes}
workdir=${FUZZ_WORK_DIR:-$tmp/corpus}
mkdir -p "$crashdir" "$workdir"
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

targets=()
for src in "$here"/fuzz/fuzz_*.c; do
	t=$(basename "$src" .c)
	[ -x "$OUTPUT/fuzz/$t" ] && targets+=("$t")
done
if [ ${#targets[@]} -eq 0 ]; then
	echo "SKIP no libFuzzer targets in $OUTPUT/fuzz (clang with libFuzzer missing?)"
	exit 77
fi
runs_of() {
	if [ -n "${FUZZ_RUNS:-}" ]; then echo "$FUZZ_RUNS"; return; fi
	case $1 in
	fuzz_engine) echo 60000 ;;
	fuzz_frame) echo 2000000 ;;
	*) echo 100000 ;;
	esac
}
if [ -n "$secs" ]; then
	echo "fuzz: seed $seed, ${secs}s per target: ${targets[*]}"
else
	echo "fuzz: seed $seed, a fixed number of runs per target: ${targets[*]}"
fi

norand=(setarch "$(uname -m)" -R)
if ! "${norand[@]}" true 2>/dev/null; then
	echo "fuzz: setarch -R unavailable: address randomization stays on, runs not reproducible"
	norand=()
fi

fail=0
for t in "${targets[@]}"; do
	bin=$OUTPUT/fuzz/$t
	log=$tmp/$t.log
	# 1. known crashers and the seed corpus, each input once
	inputs=()
	for d in "$here/fuzz/regress/$t" "$here/fuzz/corpus/$t"; do
		[ -d "$d" ] || continue
		for f in "$d"/*; do [ -f "$f" ] && inputs+=("$f"); done
	done
	if [ ${#inputs[@]} -gt 0 ]; then
		# one process per input would take too long; on a failure,
		# find the input that breaks alone
		if ! "$bin" -runs=1 "${inputs[@]}" >"$log" 2>&1; then
			for f in "${inputs[@]}"; do
				if ! "$bin" -runs=1 "$f" >"$log" 2>&1; then
					echo "FAIL $t: $f"
					grep -m3 -E 'INVARIANT|ERROR|runtime error' "$log"
					echo "reproduce: $bin $f"
					fail=1
					break
				fi
			done
		fi
		echo "$t: ${#inputs[@]} regression and corpus inputs replayed"
	fi
	if [ -n "$secs" ]; then
		[ "$secs" -gt 0 ] || continue
		budget=(-max_total_time="$secs")
	else
		budget=(-runs="$(runs_of "$t")")
	fi
	# 2. bounded fuzzing from the corpus; new inputs go to $workdir/$t
	mkdir -p "$workdir/$t"
	seeds=()
	list=$(find "$workdir/$t" "$here/fuzz/corpus/$t" -maxdepth 1 -type f 2>/dev/null |
		LC_ALL=C sort | paste -sd, -)
	if [ -n "$list" ]; then
		printf '%s' "$list" >"$tmp/$t.seeds"
		seeds=(-seed_inputs=@"$tmp/$t.seeds")
	fi
	if ! "${norand[@]}" "$bin" -seed="$seed" "${budget[@]}" -timeout=60 -rss_limit_mb=1024 \
		-max_len=4096 -print_final_stats=1 -reload=0 -purge_allocator_interval=-1 \
		"${seeds[@]}" -artifact_prefix="$crashdir/$t-" "$workdir/$t" >"$log" 2>&1 ||
		grep -q '^==[0-9]*==ERROR' "$log"; then
		repro=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
		echo "FAIL $t (seed $seed)"
		grep -m5 -E 'INVARIANT|ERROR|runtime error|SUMMARY' "$log"
		if [ -n "$repro" ]; then
			echo "reproducer: $repro"
			echo "reproduce: $bin $repro  (FZ_TRACE=1 for fuzz_engine's trace)"
		fi
		fail=1
		continue
	fi
	echo "$t: $(sed -n 's/^stat::number_of_executed_units: *//p' "$log") runs," \
		"$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log") exec/s," \
		"$(sed -n 's/^stat::new_units_added: *//p' "$log") new inputs"
done
exit $fail
