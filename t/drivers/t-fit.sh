#!/bin/sh
# t/drivers/t-fit.sh - examples/tendo-fit, the README's first program, trains:
# the fitted line is y = 3x - 2 within 0.01, and the MLP's mean squared
# error on sin(x) falls below a hundredth of where it started.
# Needs top_builddir (make check exports it).
: "${top_builddir:=.}"
echo "1..3"
out=$("$top_builddir/examples/tendo-fit" 600 2>&1)
rc=$?
if [ $rc -eq 0 ]; then echo "ok 1 - tendo-fit 600 runs"; else echo "not ok 1 - tendo-fit 600 runs (exit status $rc)"; fi
echo "$out" | sed 's/^/# /'
line=$(echo "$out" | sed -n 's/^line  fitted y = \([-0-9.]*\) x \([-+0-9.]*\) .*/\1 \2/p')
if echo "$line" | awk '{ exit !($1 > 2.99 && $1 < 3.01 && $2 > -2.01 && $2 < -1.99) }'; then
    echo "ok 2 - the fitted line is y = 3x - 2 within 0.01 ($line)"
else
    echo "not ok 2 - the fitted line is y = 3x - 2 within 0.01 (got '$line')"
fi
mlp=$(echo "$out" | sed -n 's/^mlp .*mean squared error \([0-9.e-]*\) after [0-9]* steps (\([0-9.e-]*\) at the start)$/\1 \2/p')
if echo "$mlp" | awk '{ exit !(NF == 2 && $1 < $2 / 100) }'; then
    echo "ok 3 - the MLP's error on sin(x) fell over 100 times ($mlp)"
else
    echo "not ok 3 - the MLP's error on sin(x) fell over 100 times (got '$mlp')"
fi
