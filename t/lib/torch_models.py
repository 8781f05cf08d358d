"""t/lib/torch_models.py - the small models t/interop/t-grad-torch.sh and
t/interop/t-optim-torch.sh run in PyTorch beside t/grad-model (whose C
side is t/lib/grad-models.h): each a maker of the inputs and parameters
(f32, and metadata) and the loss of a dict of them; and tendo_lr_cosine,
the schedule of the tests that train beside PyTorch."""
import math

import torch
import torch.nn.functional as F


def mlp_inputs():
    B, I, H, O = 8, 16, 32, 4
    r = lambda *s: torch.randn(*s)
    return {"x": r(B, I), "target": r(B, O), "w1": r(I, H) / I ** 0.5, "b1": r(H) * 0.1,
            "w2": r(H, H) / H ** 0.5, "b2": r(H) * 0.1, "w3": r(H, O) / H ** 0.5, "b3": r(O) * 0.1}, {}


def mlp(p):
    a1 = torch.tanh(p["x"] @ p["w1"] + p["b1"])
    a2 = F.gelu(a1 @ p["w2"] + p["b2"])
    return ((a2 @ p["w3"] + p["b3"] - p["target"]) ** 2).mean()


HQ, HKV = 4, 2


def block_inputs():
    B, L, D, HD, FF, V = 2, 16, 32, 8, 64, 40
    r = lambda *s: torch.randn(*s)
    return {"x": r(B, L, D), "attn_norm": 1 + 0.1 * r(D), "wq": r(D, HQ * HD) / D ** 0.5,
            "wk": r(D, HKV * HD) / D ** 0.5, "wv": r(D, HKV * HD) / D ** 0.5, "wo": r(HQ * HD, D) / D ** 0.5,
            "ffn_norm": 1 + 0.1 * r(D), "w_gate": r(D, FF) / D ** 0.5, "w_up": r(D, FF) / D ** 0.5,
            "w_down": r(FF, D) / FF ** 0.5, "lm_head": r(D, V) / D ** 0.5,
            "targets": torch.randint(0, V, (B * L,))}, {"heads": str(HQ), "kv_heads": str(HKV)}


def rms(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def rope(x, base=10000.0):  # [B, H, L, hd], rotate-half (Hugging Face Llama)
    L, hd = x.shape[-2], x.shape[-1]
    inv = base ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    ang = torch.arange(L, dtype=torch.float64)[:, None] * inv[None, :]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)


def block(p):
    x = p["x"]
    B, L, D = x.shape
    HD = p["wq"].shape[1] // HQ
    h = rms(x, p["attn_norm"])
    q = (h @ p["wq"]).view(B, L, HQ, HD).transpose(1, 2)
    k = (h @ p["wk"]).view(B, L, HKV, HD).transpose(1, 2)
    v = (h @ p["wv"]).view(B, L, HKV, HD).transpose(1, 2)
    q, k = rope(q), rope(k)
    k, v = k.repeat_interleave(HQ // HKV, 1), v.repeat_interleave(HQ // HKV, 1)
    a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    x2 = x + a.transpose(1, 2).reshape(B, L, HQ * HD) @ p["wo"]
    h2 = rms(x2, p["ffn_norm"])
    x3 = x2 + (F.silu(h2 @ p["w_gate"]) * (h2 @ p["w_up"])) @ p["w_down"]
    logits = (x3 @ p["lm_head"]).reshape(B * L, -1)
    return F.cross_entropy(logits.float() if logits.dtype == torch.float32 else logits, p["targets"])


models = {"mlp": (mlp_inputs, mlp), "block": (block_inputs, block)}


def cosine(s, warmup, total, lr_max, lr_min):
    """tendo_lr_cosine: linear warmup, then cosine down to lr_min."""
    if s < warmup:
        return lr_max * s / warmup
    if s >= total:
        return lr_min
    return lr_min + (lr_max - lr_min) * 0.5 * (1 + math.cos(math.pi * (s - warmup) / (total - warmup)))
