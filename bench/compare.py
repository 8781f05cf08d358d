#!/usr/bin/env python3
"""bench/compare.py - tendo against numpy, side by side, on the same data.

    python3 bench/compare.py [path/to/bench-core]

Runs bench-core (which writes its inputs to a temporary directory and
prints its best times), loads the same inputs into numpy, times the numpy
equivalents the same way (best of 10), and prints each time ratio
tendo/numpy (lower is better) with the issue's target.  Not a test.
"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

REPEATS = 10

# name: (numpy equivalent of the input -> output, target ratio)
CASES = {
    "to_f16": (lambda d: d["x16m"].astype(np.float16), 1 / 5),
    "to_bf16": (lambda d: d["x16m"].astype(np.float16), 1 / 5),  # numpy has no bf16: its f16 is the bar
    "transpose_copy": (lambda d: d["m4096"].T.copy(), 1 / 5),
    "clone": (lambda d: d["x16m"].copy(), None),
}
INPUTS = {"x16m": (16777216,), "m4096": (4096, 4096)}


def best_time(fn):
    best = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
        del out
    return best


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "bench-core")
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run([exe, tmp], check=True, capture_output=True, text=True)
        data = {name: np.fromfile(os.path.join(tmp, name + ".f32"), dtype="<f4").reshape(shape)
                for name, shape in INPUTS.items()}
        print(f"numpy {np.__version__}, {os.cpu_count()} cpus; best of {REPEATS}")
        print(f"{'benchmark':<16}{'tendo ms':>10}{'numpy ms':>10}{'ratio':>8}  target")
        for line in run.stdout.splitlines():
            name, secs, shape = line.split()
            fn, target = CASES[name]
            ref = best_time(lambda: fn(data))
            ratio = float(secs) / ref
            verdict = "" if target is None else (f"<= {target:.2f} " + ("ok" if ratio <= target else "MISSED"))
            print(f"{name:<16}{float(secs) * 1e3:>10.2f}{ref * 1e3:>10.2f}{ratio:>8.3f}  {verdict}  {shape}")


if __name__ == "__main__":
    main()
