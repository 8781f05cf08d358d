#!/bin/sh
# t/fuzz/run.sh [SECONDS] - builds the fuzz targets (t/fuzz/build.sh, into
# build-fuzz/) and runs each for SECONDS (default 60) under ASan + UBSan,
# as many at once as there are cores, starting from corpus/TARGET and
# regressions/TARGET (read, never written: new inputs go to
# build-fuzz/work/TARGET).  Prints each target's executions; exits 1 when
# one crashed, hung (-timeout), leaked or tripped a sanitizer, leaving the
# input in build-fuzz/crashes/TARGET/ (copy it to regressions/TARGET/
# and fix what it shows).
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$src/build-fuzz
secs=${1:-60}
jobs=$(nproc 2>/dev/null || echo 2)
targets="npy safetensors dlpack cli tokenizer save examples"

"$src/t/fuzz/build.sh" "$out" || exit 1
cd "$out" || exit 1
export TENDO_POOL=off # ASan sees every buffer
export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1

run() { # TARGET: one fuzzing session, its log in TARGET.log
    t=$1
    rm -rf "work/$t" "crashes/$t"
    mkdir -p "work/$t" "crashes/$t"
    # absolute corpus paths: fuzz-cli and fuzz-save change directory
    set -- "$out/work/$t" "$src/t/fuzz/corpus/$t"
    [ -d "$src/t/fuzz/regressions/$t" ] && set -- "$@" "$src/t/fuzz/regressions/$t"
    "./fuzz-$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
        -print_final_stats=1 -close_fd_mask=1 -artifact_prefix="$out/crashes/$t/" "$@" >"$t.log" 2>&1
}

pids= n=0
for t in $targets; do
    run "$t" &
    pids="$pids $!"
    n=$((n + 1))
    if [ $n -ge "$jobs" ]; then
        for p in $pids; do wait "$p"; done
        pids= n=0
    fi
done
for p in $pids; do wait "$p"; done

status=0
for t in $targets; do
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$t.log" | tail -1)
    if ls "crashes/$t"/* >/dev/null 2>&1 || ! grep -q '^Done' "$t.log"; then
        status=1
        echo "fuzz-$t: FAILED after ${execs:-?} executions; the input is kept in $out/crashes/$t/:"
        grep -E 'ERROR|runtime error|^fuzz:|SUMMARY|Test unit written' "$t.log" | head -20
        for f in "crashes/$t"/*; do [ -f "$f" ] && od -A d -c "$f" | head -20; done
    else
        echo "fuzz-$t: ${execs:-?} executions in ${secs}s, no failure"
    fi
done
exit $status
