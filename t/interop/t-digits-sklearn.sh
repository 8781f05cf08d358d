#!/bin/sh
# t/interop/t-digits-sklearn.sh - examples/tendo-digits, the README's first
# training walk-through, on scikit-learn's bundled digits data set (no
# download: the CSV ships inside sklearn): it reads all 1,797 samples and
# its MLP reaches at least 95 % accuracy on the held-out fifth.  Skips,
# saying why, without a Python that has scikit-learn (TORCH_PYTHON,
# BENCH_PYTHON or PYTHON: CI's torch venv has it).
: "${top_builddir:=.}"
. "${top_srcdir:-.}/t/lib/find-python.sh"
find_python "sklearn" "scikit-learn"
PYTHONPATH="${top_srcdir:-.}/t/lib${PYTHONPATH:+:$PYTHONPATH}" "$py" - "$top_builddir/examples/tendo-digits" "$tmp" <<'PY'
import gzip, os, re, subprocess, sys
import sklearn
from sklearn.datasets import load_digits
from tap import Tap

prog, tmp = sys.argv[1], sys.argv[2]
tap = Tap()
src = os.path.join(os.path.dirname(sklearn.__file__), "datasets", "data", "digits.csv.gz")
with gzip.open(src, "rb") as f, open(f"{tmp}/digits.csv", "wb") as out:
    out.write(f.read())
r = subprocess.run([prog, f"{tmp}/digits.csv"], capture_output=True, text=True)
tap.ok(r.returncode == 0, "tendo-digits runs on sklearn's digits.csv.gz, unpacked", r.stderr)
for line in r.stdout.splitlines():
    print(f"# {line}")
count = re.search(r"^tendo-digits: (\d+) digits", r.stdout, re.M)
tap.ok(count is not None and int(count.group(1)) == len(load_digits().target),
       f"it reads every sample load_digits() has ({len(load_digits().target)})")
acc = re.search(r"test accuracy ([0-9.]+) % \((\d+) of (\d+)\)$", r.stdout, re.M)
tap.ok(acc is not None and float(acc.group(1)) >= 95.0,
       f"test accuracy at least 95 % ({acc.group(0) if acc else 'not printed'})")
tap.done()
PY
