#!/bin/sh
# t/drivers/t-trace.sh - TENDO_TRACE=1 in the environment prints a line per op to
# stderr, and the summary table counts them (through `tendo demo`).
: "${top_builddir:=.}"
tendo="$top_builddir/tools/tendo"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "1..4"
if TENDO_TRACE=1 "$tendo" demo >"$tmp/out" 2>"$tmp/err"; then echo "ok 1 - tendo demo runs traced"
else echo "not ok 1 - tendo demo runs traced"; fi
if grep -q '^tendo: reshape      f32   cpu     \[12\] -> \[3,4\]' "$tmp/err"; then echo "ok 2 - a line per op: op, dtype, device, shapes, time"
else echo "not ok 2 - a line per op"; sed 's/^/# /' "$tmp/err" | head -20; fi
if grep -q '^op  *count  *total ms  *mean us' "$tmp/err" && grep -q '^randn  *1 ' "$tmp/err"; then
    echo "ok 3 - the summary table counts each op"
else echo "not ok 3 - the summary table counts each op"; sed 's/^/# /' "$tmp/err" | tail -20; fi
"$tendo" demo >"$tmp/out2" 2>"$tmp/err2"
if [ ! -s "$tmp/err2" ] && cmp -s "$tmp/out" "$tmp/out2"; then echo "ok 4 - without TENDO_TRACE: nothing on stderr, the same output"
else echo "not ok 4 - without TENDO_TRACE: nothing on stderr"; fi
