#!/usr/bin/env python3
"""bench/io.py - tendo's safetensors loading and `tendo convert` against the
safetensors Python package (numpy) and ml_dtypes, on one 1 GiB f32 file.

    python3 bench/io.py [--tendo tools/tendo] [--bench-io bench/bench-io]
                        [--mib 1024] [--repeats 5] [--dir DIR]

`make bench-io` runs it on the programs just built.  It writes the file
(random normal f32 in 128 tensors of 8 MiB) into a temporary directory
under DIR (default: $TMPDIR or /tmp), removes it at the end, and prints
the best of REPEATS runs of each case, warm page cache on both sides:

  load + get    tendo: tendo_safetensors_load + every tensor fetched
                (bench-io, in process; mmap: nothing read yet)
                numpy: safe_open(framework="np") + get_tensor for every key
  load + sum    the same, then every byte read: tendo's tensor_sum_all
                (its threads, and on one thread); numpy's .sum()
  convert       `tendo convert --dtype bf16 IN OUT`, the whole process
                timed from outside (start-up, load, convert, write, and
                the fsync tendo does before renaming OUT into place)
                against numpy, in process: load_file,
                astype(ml_dtypes.bfloat16), save_file and an fsync of
                OUT; then `tendo convert --no-sync` against the same
                numpy script without the fsync.  os.sync() runs before
                each run, so none pays for the last one's writeback.
  inspect       `tendo inspect IN` (statistics of every tensor), whole
                process

Ratios are tendo / numpy (lower is better).  Not a test.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import ml_dtypes
import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

GiB = 1 << 30


def best_of(repeats, fn, before=None):
    best = float("inf")
    if before:
        before()
    fn()  # warm-up: imports, page cache, allocator
    for _ in range(repeats):
        if before:
            before()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def write_input(path, mib):
    """Random normal f32: 8 MiB tensors named like a model's weights."""
    rng = np.random.default_rng(0)
    n = max(1, mib // 8)
    tensors = {f"layers.{i // 4}.w{i % 4}": rng.standard_normal((2048, 1024), dtype=np.float32) for i in range(n)}
    save_file(tensors, path, metadata={"format": "np"})
    return sum(t.nbytes for t in tensors.values())


def py_load_get(path):
    out = []
    with safe_open(path, framework="np") as f:
        for k in f.keys():
            out.append(f.get_tensor(k))
    return out


def py_load_sum(path):
    total = 0.0
    with safe_open(path, framework="np") as f:
        for k in f.keys():
            total += float(f.get_tensor(k).sum())
    return total


def py_convert(src, dst, fsync=False):
    tensors = load_file(src)
    with safe_open(src, framework="np") as f:
        metadata = f.metadata()
    save_file({k: v.astype(ml_dtypes.bfloat16) for k, v in tensors.items()}, dst, metadata=metadata)
    if fsync:
        fd = os.open(dst, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)


def run_tendo(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tendo", default=os.path.join(here, "..", "tools", "tendo"))
    ap.add_argument("--bench-io", default=os.path.join(here, "bench-io"))
    ap.add_argument("--mib", type=int, default=1024, help="size of the f32 file (MiB)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--dir", default=None, help="where the temporary directory goes")
    args = ap.parse_args()
    r = args.repeats

    tmp = tempfile.mkdtemp(prefix="tendo-bench-io-", dir=args.dir)
    try:
        src, out_t, out_p = (os.path.join(tmp, n) for n in ("in.safetensors", "t.safetensors", "p.safetensors"))
        nbytes = write_input(src, args.mib)
        gb = nbytes / 1e9
        print(f"input: {nbytes / GiB:.2f} GiB of f32 in {max(1, args.mib // 8)} tensors, {tmp}; best of {r}")

        # ---- load ----
        res = subprocess.run([args.bench_io, src, str(r)], check=True, capture_output=True, text=True).stdout
        t = {k: float(v) for k, v in (line.split() for line in res.splitlines())}
        p_get = best_of(r, lambda: py_load_get(src))
        p_sum = best_of(r, lambda: py_load_sum(src))
        p_total = py_load_sum(src)
        if abs(p_total - t["sum"]) > 1e-3 * nbytes / 4:
            print(f"warning: sums differ: tendo {t['sum']}, numpy {p_total}")
        print("\nload to the CPU                 tendo        numpy    ratio   target")
        print(f"  load + get every tensor  {t['load_get']:8.4f} s  {p_get:8.4f} s  {t['load_get'] / p_get:7.4f}   <= 1.0")
        print(f"  load + sum every tensor  {t['load_sum']:8.4f} s  {p_sum:8.4f} s  {t['load_sum'] / p_sum:7.4f}   <= 1.0")
        print(f"    (tendo on one thread)  {t['load_sum1']:8.4f} s  {p_sum:8.4f} s  {t['load_sum1'] / p_sum:7.4f}")

        # ---- convert ----
        def rm_outs():
            for p in (out_t, out_p):
                if os.path.exists(p):
                    os.remove(p)

        # like for like: tendo's durable save (fsync before the rename)
        # against numpy + fsync, and `--no-sync` against plain numpy
        cmd = [args.tendo, "convert", "--no-progress", "--dtype", "bf16", src, out_t]
        quick = [args.tendo, "convert", "--no-progress", "--no-sync", "--dtype", "bf16", src, out_t]
        settle = lambda: (rm_outs(), os.sync())  # no writeback of the last run left to pay for
        c_t = best_of(r, lambda: run_tendo(cmd), before=settle)
        c_pf = best_of(r, lambda: py_convert(src, out_p, fsync=True), before=settle)
        c_tq = best_of(r, lambda: run_tendo(quick), before=settle)
        c_p = best_of(r, lambda: py_convert(src, out_p), before=settle)
        run_tendo(cmd)
        py_convert(src, out_p)
        same = True
        with safe_open(out_t, framework="np") as a, safe_open(out_p, framework="np") as b:
            same = sorted(a.keys()) == sorted(b.keys()) and all(
                a.get_tensor(k).dtype == ml_dtypes.bfloat16 and
                a.get_tensor(k).view(np.uint16).tobytes() == b.get_tensor(k).view(np.uint16).tobytes()
                for k in a.keys())
        print("\nconvert f32 -> bf16             tendo        numpy    ratio   target")
        print(f"  durable: fsync, rename   {c_t:8.4f} s  {c_pf:8.4f} s  {c_t / c_pf:7.4f}   <= 0.5")
        print(f"  --no-sync vs plain numpy {c_tq:8.4f} s  {c_p:8.4f} s  {c_tq / c_p:7.4f}   <= 0.5")
        print(f"  throughput (f32 in)      {gb / c_t:6.2f} GB/s  {gb / c_pf:6.2f} GB/s (durable)")
        print(f"                           {gb / c_tq:6.2f} GB/s  {gb / c_p:6.2f} GB/s (no fsync)")
        print(f"  outputs identical: {'yes' if same else 'NO'}")

        # ---- inspect ----
        i_t = best_of(r, lambda: run_tendo([args.tendo, "inspect", src]))
        print(f"\ntendo inspect (stats of every tensor): {i_t:.4f} s, {gb / i_t:.2f} GB/s")
        return 0 if same else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
