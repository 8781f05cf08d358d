#!/bin/sh
# t/drivers/t-digits.sh - examples/tendo-digits without scikit-learn: 600
# synthetic 8x8 "digits" (each class a fixed random template of 0..16
# pixels, plus noise), written by awk; the MLP must classify the held-out
# fifth at least 95 % right, and a malformed line is a clear error.  (The
# real data set: t/interop/t-digits-sklearn.sh.)  Needs top_builddir.
: "${top_builddir:=.}"
prog="$top_builddir/examples/tendo-digits"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
echo "1..3"
awk 'BEGIN {
    srand(7)
    for (c = 0; c < 10; c++) for (p = 0; p < 64; p++) t[c, p] = int(rand() * 17)
    for (i = 0; i < 600; i++) {
        c = i % 10; line = ""
        for (p = 0; p < 64; p++) {
            v = t[c, p] + int(rand() * 25) - 12; v = v < 0 ? 0 : v > 16 ? 16 : v
            line = line v ","
        }
        print line c
    }
}' > "$tmp/digits.csv"
out=$("$prog" --epochs 20 "$tmp/digits.csv" 2>&1)
rc=$?
if [ $rc -eq 0 ]; then echo "ok 1 - tendo-digits trains on 600 synthetic digits"; else echo "not ok 1 - tendo-digits runs (exit status $rc)"; fi
echo "$out" | sed 's/^/# /'
acc=$(echo "$out" | sed -n 's/^tendo-digits: test accuracy \([0-9.]*\) %.*/\1/p')
if echo "$acc" | awk '{ exit !($1 >= 95) }'; then
    echo "ok 2 - held-out accuracy at least 95 % ($acc %)"
else
    echo "not ok 2 - held-out accuracy at least 95 % (got '$acc')"
fi
{ head -5 "$tmp/digits.csv"; echo "1,2,3"; } > "$tmp/bad.csv"
err=$("$prog" "$tmp/bad.csv" 2>&1)
rc=$?
if [ $rc -eq 1 ] && echo "$err" | grep -q 'line 6 is not 64 pixels and a label 0..9'; then
    echo "ok 3 - a malformed line is a clear error ($err)"
else
    echo "not ok 3 - a malformed line is a clear error (exit status $rc: $err)"
fi
