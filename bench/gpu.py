#!/usr/bin/env python3
"""bench/gpu.py - PyTorch's side of `make bench-gpu`: the cases of
bench/bench-gpu.c on cuda:0, printed in the same format, so the two
columns can be compared line by line (plus cudaMalloc/cudaFree for the
pool case).  Needs torch with CUDA; prints "no CUDA device" otherwise."""
import time

try:
    import torch
except ImportError:
    raise SystemExit("bench/gpu.py needs PyTorch (pip install torch)")


def bench(name, reps, fn, nbytes=0, flops=0):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    torch.cuda.synchronize()
    us = (time.perf_counter() - t0) / reps * 1e6
    if flops:
        print(f"{name:<28} {us:12.1f} us {flops / us / 1e6:10.1f} TFLOP/s")
    elif nbytes:
        print(f"{name:<28} {us:12.1f} us {nbytes / us / 1e3:10.1f} GB/s")
    else:
        print(f"{name:<28} {us:12.3f} us")


def main():
    if not torch.cuda.is_available():
        print("no CUDA device")
        return
    d = "cuda:0"
    big, n = 1 << 28, 8192
    torch.backends.cuda.matmul.allow_tf32 = False
    for dt, size, tag in ((torch.float32, 4, "f32"), (torch.bfloat16, 2, "bf16")):
        a = torch.rand(big, device=d, dtype=dt)
        b = torch.rand(big, device=d, dtype=dt)
        bench(f"add {tag} 2^28", 10, lambda: a + b, 3 * size * big)
        bench(f"clone (D2D) {tag} 2^28", 10, lambda: a.clone(), 2 * size * big)
        del a, b
    x = torch.randn(n, n, device=d, dtype=torch.bfloat16)
    bench("softmax bf16 [8192,8192]", 10, lambda: torch.softmax(x, -1), 2 * 2 * n * n)
    bench("layer_norm bf16 [8192,8192]", 10, lambda: torch.nn.functional.layer_norm(x, (n,)), 2 * 2 * n * n)
    x = torch.randn(n, n, device=d)
    bench("sum dim0 f32 [8192,8192]", 10, lambda: x.sum(0), 4 * n * n)
    bench("sum dim1 f32 [8192,8192]", 10, lambda: x.sum(1), 4 * n * n)
    a = torch.randn(n, n, device=d, dtype=torch.bfloat16)
    b = torch.randn(n, n, device=d, dtype=torch.bfloat16)
    bench("matmul bf16 8192^3", 5, lambda: a @ b, flops=2 * n ** 3)
    m = 4096
    a = torch.randn(m, m, device=d)
    b = torch.randn(m, m, device=d)
    bench("matmul f32 4096^3", 5, lambda: a @ b, flops=2 * m ** 3)
    torch.backends.cuda.matmul.allow_tf32 = True
    bench("matmul f32 4096^3 tf32", 5, lambda: a @ b, flops=2 * m ** 3)
    torch.backends.cuda.matmul.allow_tf32 = False
    k = 4096
    for name, nn, stored_nk, dt, size in (("matvec bf16 4096x4096 [n,k]^T", 4096, True, torch.bfloat16, 2),
                                          ("matvec bf16 4096x11008 [n,k]^T", 11008, True, torch.bfloat16, 2),
                                          ("matvec bf16 4096x11008 [k,n]", 11008, False, torch.bfloat16, 2),
                                          ("matvec f32 4096x11008 [n,k]^T", 11008, True, torch.float32, 4)):
        x = torch.randn(1, k, device=d, dtype=dt)
        y = torch.empty(1, nn, device=d, dtype=dt)
        w = torch.randn(nn, k, device=d, dtype=dt).t() if stored_nk else torch.randn(k, nn, device=d, dtype=dt)
        bench(name, 200, lambda: torch.matmul(x, w, out=y), size * k * nn)
    one = torch.ones(1, device=d)
    bench("add 1 element (host us)", 10000, lambda: one + one)
    bench("pool 4 MiB alloc+free", 10000, lambda: torch.empty(1 << 20, device=d))
    # the raw allocator, for the pool's comparison: cudaMalloc + cudaFree
    torch.cuda.empty_cache()
    def raw():
        torch.empty(1 << 20, device=d)
        torch.cuda.empty_cache()
    bench("cudaMalloc+cudaFree 4 MiB", 1000, raw)


if __name__ == "__main__":
    main()
