#!/usr/bin/env python3
"""bench/grad.py - autograd's cost against PyTorch's, side by side, per
thread count: forward + backward of the MLP and the decoder block of
bench/bench-grad.c (same sizes, f32 and bf16), attention's backward alone
at L = 512 and 2048 (with tendo's peak pool bytes beside the O(L^2) a
materialised score matrix would take), and one AdamW step over 8
parameters of [512, 512] (torch.optim.AdamW's default and fused forms; a
bf16 parameter keeps f32 master weights and moments in tendo, bf16 ones in
torch).  A small op's fixed cost with grad mode on (the default) is `make
bench-kernels`' add_out_1.

    python3 bench/grad.py [path/to/bench-grad] [THREADS...]

Prints each time ratio tendo/torch (lower is better; issue 23's target is
<= 1.0).  Needs torch.  Not a test.
"""
import subprocess
import sys
import time

import torch
import torch.nn.functional as F


def best(fn, reps, skip=2):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times[skip:])


def leaf(*shape, scale=1.0, dtype=torch.float32):
    return (torch.randn(*shape) * scale).to(dtype).requires_grad_()


def mlp(dtype):
    B, I, H, O = 128, 256, 512, 256
    x, y = torch.randn(B, I).to(dtype), torch.randn(B, O).to(dtype)
    w = [leaf(I, H, scale=0.06, dtype=dtype), leaf(H, H, scale=0.04, dtype=dtype), leaf(H, O, scale=0.04, dtype=dtype)]
    b = [leaf(H, scale=0.1, dtype=dtype), leaf(H, scale=0.1, dtype=dtype), leaf(O, scale=0.1, dtype=dtype)]

    def step():
        a = torch.tanh(x @ w[0] + b[0])
        a = F.gelu(a @ w[1] + b[1])
        loss = ((a @ w[2] + b[2] - y) ** 2).mean()
        loss.backward()
        for p in w + b:
            p.grad = None
    return best(step, 12)


def block(dtype):
    B, L, D, HQ, HKV, HD, FF, V = 4, 128, 256, 8, 4, 32, 688, 512
    x = torch.randn(B, L, D).to(dtype)
    an, fn = leaf(D, scale=0.1, dtype=dtype), leaf(D, scale=0.1, dtype=dtype)
    wq, wk = leaf(D, HQ * HD, scale=0.06, dtype=dtype), leaf(D, HKV * HD, scale=0.06, dtype=dtype)
    wv, wo = leaf(D, HKV * HD, scale=0.06, dtype=dtype), leaf(HQ * HD, D, scale=0.06, dtype=dtype)
    wg, wu = leaf(D, FF, scale=0.06, dtype=dtype), leaf(D, FF, scale=0.06, dtype=dtype)
    wd, head = leaf(FF, D, scale=0.04, dtype=dtype), leaf(D, V, scale=0.06, dtype=dtype)
    ps = [an, fn, wq, wk, wv, wo, wg, wu, wd, head]
    tg = torch.arange(B * L) % V
    inv = 10000.0 ** (-torch.arange(0, HD, 2, dtype=torch.float64) / HD)
    ang = torch.arange(L, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = ang.cos().to(dtype), ang.sin().to(dtype)

    def rms(t, w):
        return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    def rope(t):
        t1, t2 = t[..., : HD // 2], t[..., HD // 2:]
        return torch.cat([t1 * cos - t2 * sin, t2 * cos + t1 * sin], -1)

    def step():
        h = rms(x, an)
        q = rope((h @ wq).view(B, L, HQ, HD).transpose(1, 2))
        k = rope((h @ wk).view(B, L, HKV, HD).transpose(1, 2))
        v = (h @ wv).view(B, L, HKV, HD).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True) \
            if "enable_gqa" in F.scaled_dot_product_attention.__doc__ else \
            F.scaled_dot_product_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), is_causal=True)
        x2 = x + a.transpose(1, 2).reshape(B, L, HQ * HD) @ wo
        h2 = rms(x2, fn)
        x3 = x2 + (F.silu(h2 @ wg) * (h2 @ wu)) @ wd
        loss = F.cross_entropy((x3 @ head).reshape(B * L, V), tg)
        loss.backward()
        for p in ps:
            p.grad = None
    return best(step, 8)


def attention_bwd(L):
    q, k, v = leaf(1, 8, L, 64), leaf(1, 8, L, 64), leaf(1, 8, L, 64)
    w = torch.randn(1, 8, L, 64)
    times = []
    for r in range(3 if L > 1024 else 6):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        t0 = time.perf_counter()
        o.backward(w)
        times.append(time.perf_counter() - t0)
        q.grad = k.grad = v.grad = None
    return min(times[1:])


def adamw(dtype, fused):
    ps = [leaf(512, 512, scale=0.05, dtype=dtype) for _ in range(8)]
    for p in ps:
        p.grad = (torch.randn(512, 512) * 1e-3).to(dtype)
    opt = torch.optim.AdamW(ps, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01,
                            **({"fused": True} if fused else {}))
    return best(opt.step, 12)


def main():
    prog = sys.argv[1] if len(sys.argv) > 1 else "bench/bench-grad"
    threads = [int(t) for t in sys.argv[2:]] or [1, 2]
    for th in threads:
        out = subprocess.run([prog, str(th)], check=True, capture_output=True, text=True).stdout
        ours = {l.split()[0]: float(l.split()[1]) for l in out.splitlines()}
        torch.set_num_threads(th)
        torch.manual_seed(0)
        theirs = {"mlp_f32": mlp(torch.float32), "mlp_bf16": mlp(torch.bfloat16),
                  "block_f32": block(torch.float32), "block_bf16": block(torch.bfloat16),
                  "attention_bwd_512": attention_bwd(512), "attention_bwd_2048": attention_bwd(2048),
                  "adamw_f32": adamw(torch.float32, False), "adamw_bf16": adamw(torch.bfloat16, False)}
        fused = {"adamw_f32": adamw(torch.float32, True), "adamw_bf16": adamw(torch.bfloat16, True)}
        print(f"== {th} thread{'s' if th > 1 else ''} (tendo / torch; lower is better)")
        for name, t in theirs.items():
            if name not in ours:  # a build without bf16
                continue
            print(f"  {name:24s} tendo {ours[name] * 1e3:9.3f} ms  torch {t * 1e3:9.3f} ms  "
                  f"ratio {ours[name] / t:6.2f}")
            if name in fused:
                print(f"  {name + ' (fused=True)':24s} tendo {ours[name] * 1e3:9.3f} ms  torch "
                      f"{fused[name] * 1e3:9.3f} ms  ratio {ours[name] / fused[name]:6.2f}")
        for L in (512, 2048):
            peak = ours[f"attention_bwd_{L}_peak"]
            print(f"  attention_bwd_{L} peak pool bytes {peak:.0f} "
                  f"(one f32 score matrix of all 8 heads: {8 * L * L * 4})")


if __name__ == "__main__":
    main()
