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
    "add_f32_out": (lambda d: np.add(d["x16m"], d["y16m"], out=d["o16m"]), 1.0),
    "add_f16_out": (lambda d: np.add(d["x16m_h"], d["y16m_h"], out=d["o16m_h"]), 0.1),
    "exp_f32_out": (lambda d: np.exp(d["x16m"], out=d["o16m"]), 1.0),
    "sum_f32": (lambda d: d["x16m"].sum(), 1.0),
    "sum_dim0": (lambda d: d["m4096"].sum(axis=0), 1.0),
    "sum_dim1": (lambda d: d["m4096"].sum(axis=1), 1.0),
    "softmax": (lambda d: softmax(d["m4096"]), 0.5),
    "matmul_f32": (lambda d: d["a1024"] @ d["b1024"], None),
    "layer_norm": (lambda d: layer_norm(d["m4096"]), None),
    # numpy has no bf16: these compare tendo's bf16 with numpy's f32
    "sum_dim1_bf16": (lambda d: d["m4096"].sum(axis=1), None),
    "softmax_bf16": (lambda d: softmax(d["m4096"]), None),
    "layer_norm_bf16": (lambda d: layer_norm(d["m4096"]), None),
    "matmul_bf16": (lambda d: d["a1024"] @ d["b1024"], None),
    # the dtype families: each at most numpy's time; f64 matmul at least
    # 0.95 of OpenBLAS dgemm's speed (through numpy)
    "add_i32_out": (lambda d: np.add(d["xi16m"], d["yi16m"], out=d["oi16m"]), 1.0),
    "sum_i64": (lambda d: d["xl16m"].sum(), 1.0),
    "add_f64_out": (lambda d: np.add(d["x16m_d"], d["y16m_d"], out=d["o16m_d"]), 1.0),
    "exp_f64_out": (lambda d: np.exp(d["x16m_d"], out=d["o16m_d"]), 1.0),
    "matmul_f64": (lambda d: d["a1024_d"] @ d["b1024_d"], 1 / 0.95),
    "gt_where_f32": (lambda d: np.where(d["x16m"] > d["y16m"], d["x16m"], d["y16m"]), 1.0),
    "argmax_f32": (lambda d: d["x16m"].argmax(), 1.0),
    "f32_to_i32": (lambda d: d["xs16m"].astype(np.int32), 1.0),
    "i32_to_f32": (lambda d: d["xi16m"].astype(np.float32), 1.0),
    "u8_to_f32": (lambda d: d["xu16m"].astype(np.float32), 1.0),
}
INPUTS = {"x16m": (16777216,), "y16m": (16777216,), "m4096": (4096, 4096), "a1024": (1024, 1024),
          "b1024": (1024, 1024), "xs16m": (16777216,)}
# the integer inputs, DIR/<name>.raw in their own dtype
RAW_INPUTS = {"xi16m": "<i4", "yi16m": "<i4", "xl16m": "<i8", "xu16m": "u1"}


def softmax(x):
    """The issue's numpy expression for a row softmax."""
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def layer_norm(x, eps=1e-5):
    """layer_norm over the last dim, without weight or bias."""
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(-1, keepdims=True) + eps)


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
        data.update({name: np.fromfile(os.path.join(tmp, name + ".raw"), dtype=dt)
                     for name, dt in RAW_INPUTS.items()})
        data["o16m"] = np.empty_like(data["x16m"])
        data["oi16m"] = np.empty_like(data["xi16m"])
        for k in ("x16m", "y16m", "a1024", "b1024"):
            data[k + "_d"] = data[k].astype(np.float64)
        data["o16m_d"] = np.empty_like(data["x16m_d"])
        for k in ("x16m", "y16m", "o16m"):
            data[k + "_h"] = data[k].astype(np.float16)
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
