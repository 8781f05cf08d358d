#!/usr/bin/env python3
"""bench/kernels-torch.py - tendo's GEMMs, attention and small-op cost against
PyTorch (and numpy's OpenBLAS for f32 GEMM), side by side, per thread count.

    python3 bench/kernels-torch.py [path/to/bench-kernels] [THREADS...]

For each thread count (default 1 and 2) runs bench-kernels, then the same
cases in torch (torch.set_num_threads) and numpy, and prints each time
ratio tendo/reference (lower is better) with issue 14's and issue 12's
targets (f16 GEMM against tendo's own f32: torch's CPU f16 GEMM is not a
bar worth timing; f32 GEMM also against numpy's OpenBLAS with the same
thread count).  Also prints the 2-thread speed-up of the batched attention
matmul.  Needs torch; numpy is optional.  Not a test.
"""
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

try:
    import numpy as np
except ImportError:  # numpy is only the f32 GEMM reference
    np = None


def best_time(fn, reps):
    fn()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


NUMPY_F32 = """
import sys, time
import numpy as np
rng = np.random.default_rng(0)
for n in (1024, 2048):
    a, b = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
    a @ b
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    print(n, best)
"""


def numpy_f32_times(threads):
    """n -> best seconds of numpy's f32 n x n GEMM, its OpenBLAS held to
    threads threads (the variable is read when numpy loads, hence a child)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-c", NUMPY_F32], env=env, check=True, capture_output=True, text=True)
    return {int(l.split()[0]): float(l.split()[1]) for l in out.stdout.splitlines()}


def torch_cases():
    """name -> (callable, reps, target ratio or None)."""
    g = torch.Generator().manual_seed(0)
    cases = {}
    for n in (512, 1024, 2048):
        a, b = torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)
        ab, bb = a.bfloat16(), b.bfloat16()
        reps = 3 if n >= 2048 else 10
        cases[f"matmul_bf16_{n}"] = (lambda ab=ab, bb=bb: ab @ bb, reps, 1.0)
        cases[f"matmul_f32_{n}"] = (lambda a=a, b=b: a @ b, reps, None)
        ai, bi = (a * 40).to(torch.int8), (b * 40).to(torch.int8)
        cases[f"matmul_i8_{n}"] = (lambda ai=ai, bi=bi: torch._int_mm(ai, bi), reps, None)
    q, kt = torch.randn(10, 12, 54, 32, generator=g), torch.randn(10, 12, 32, 54, generator=g)
    cases["bmm_attn_f32"] = (lambda: q @ kt, 50, None)
    Q, K, V = (torch.randn(1, 8, 2048, 64, generator=g) for _ in range(3))
    cases["attention_2048"] = (lambda: F.scaled_dot_product_attention(Q, K, V), 3, 1.0)
    cases["attention_2048_causal"] = (lambda: F.scaled_dot_product_attention(Q, K, V, is_causal=True), 3, 1.0)
    x, o = torch.ones(1), torch.empty(1)

    def small():
        for _ in range(10000):
            torch.add(x, x, out=o)
    cases["add_out_1"] = (small, 5, None)
    return cases


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "bench-kernels")
    threads = [int(t) for t in sys.argv[2:]] or [1, 2]
    cases = torch_cases()
    print(f"torch {torch.__version__} ({torch.backends.cpu.get_cpu_capability()})"
          + (f", numpy {np.__version__}" if np is not None else ""))
    bmm = {}
    for nt in threads:
        torch.set_num_threads(nt)
        run = subprocess.run([exe, str(nt)], check=True, capture_output=True, text=True)
        print(f"\n{nt} thread(s)\n{'case':<24}{'tendo ms':>10}{'torch ms':>10}{'ratio':>8}  target")
        times = {l.split()[0]: float(l.split()[1]) for l in run.stdout.splitlines()}
        for line in run.stdout.splitlines():
            name, secs = line.split()
            secs = float(secs)
            if name.startswith("matmul_f16_"):  # torch's f16 GEMM crawls on CPUs: against tendo's f32
                f32 = times[name.replace("f16", "f32")]
                print(f"{name + ' vs f32':<24}{secs * 1e3:>10.4f}{f32 * 1e3:>10.4f}{secs / f32:>8.3f}  "
                      f"<= 1.11 {'ok' if secs / f32 <= 1 / 0.9 else 'MISSED'}  (tendo's own f32)")
                continue
            fn, reps, target = cases[name]
            if name.startswith("matmul_i8_"):
                n = int(name.split("_")[-1])
                gops = 2 * n ** 3 / secs / 1e9
                try:
                    ref = best_time(fn, reps)
                except RuntimeError as e:  # torch._int_mm without a CPU kernel
                    print(f"{name:<24}{secs * 1e3:>10.4f}{'-':>10}{'-':>8}  {gops:.0f} GOP/s (torch: {e})")
                    continue
                print(f"{name:<24}{secs * 1e3:>10.4f}{ref * 1e3:>10.4f}{secs / ref:>8.3f}  {gops:.0f} GOP/s "
                      f"(torch._int_mm)")
                continue
            ref = best_time(fn, reps) / (10000 if name == "add_out_1" else 1)
            ratio = secs / ref
            verdict = "" if target is None else f"<= {target:.2f} " + ("ok" if ratio <= target else "MISSED")
            if name == "add_out_1":
                verdict = "<= 100 ns " + ("ok" if secs <= 100e-9 else "MISSED")
            print(f"{name:<24}{secs * 1e3:>10.4f}{ref * 1e3:>10.4f}{ratio:>8.3f}  {verdict}")
            if name == "bmm_attn_f32":
                bmm[nt] = secs
        if np is not None:
            ref = numpy_f32_times(nt)
            for n in (1024, 2048):
                got = times[f"matmul_f32_{n}"]
                print(f"{'matmul_f32_' + str(n) + ' vs numpy':<24}{got * 1e3:>10.4f}{ref[n] * 1e3:>10.4f}"
                      f"{got / ref[n]:>8.3f}  <= 1.05 {'ok' if got / ref[n] <= 1 / 0.95 else 'MISSED'}  "
                      f"(numpy's OpenBLAS, {nt} thread(s))")
    if 1 in bmm and 2 in bmm:
        print(f"\nbatched attention matmul [10,12,54,32]@[10,12,32,54]: 2-thread speed-up "
              f"{bmm[1] / bmm[2]:.2f}x (target >= 1.7x)")


if __name__ == "__main__":
    main()
