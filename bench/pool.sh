#!/bin/sh
# bench/pool.sh - the pool and event-site benchmarks, side by side.
#
#   bench/pool.sh BENCH_POOL [BENCH_POOL_WITHOUT_EVENTS]
#
# Runs bench-pool as built, then with TENDO_POOL=off, and (given a second
# binary from a build configured with --disable-events) that one too, and
# prints each figure in columns with the ratios that matter.  Not a test.
set -e
on=$1 off_events=$2
[ -x "$on" ] || { echo "usage: $0 BENCH_POOL [BENCH_POOL_WITHOUT_EVENTS]" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$on" > "$tmp/pool"
TENDO_POOL=off "$on" > "$tmp/nopool"
if [ -n "$off_events" ]; then "$off_events" > "$tmp/noev"; else : > "$tmp/noev"; fi
get() { awk -v k="$2" '$1 == k { print $2 }' "$tmp/$1"; }

printf '%-22s %12s %12s %12s\n' "" "pool" "TENDO_POOL=off" "malloc/free"
for s in 4k 4m; do
    printf '%-22s %10s ns %10s ns %10s ns\n' "alloc+free $s tensor" "$(get pool alloc_free_$s)" \
        "$(get nopool alloc_free_$s)" "$(get pool malloc_free_$s)"
done
printf '\nper-call overhead of a tiny op (transpose + free):\n'
printf '  events compiled in, no observer: %s ns\n' "$(get pool op_call)"
printf '  events compiled in, one observer: %s ns\n' "$(get pool op_call_observed)"
if [ -s "$tmp/noev" ]; then
    printf '  events compiled out:             %s ns\n' "$(get noev op_call)"
fi
printf '\nfragmentation (peak reserved / peak requested, target <= 1.15):\n'
printf '  tendo pool: %s   power-of-two classes: %s\n' "$(get pool frag_pool)" "$(get pool frag_pow2)"
