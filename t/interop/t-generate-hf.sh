#!/bin/sh
# t/interop/t-generate-hf.sh - examples/tendo-generate against Hugging Face
# transformers: a small random LlamaForCausalLM (grouped-query heads, RoPE,
# SwiGLU, untied and tied output heads) saved as safetensors; tendo's logits
# for a prompt must match within f32 tolerance, and its 32 greedy tokens
# (through the KV cache) must be transformers' generate() tokens.  Skips,
# saying why, without a Python that has torch and transformers
# (TORCH_PYTHON, BENCH_PYTHON or PYTHON).
: "${top_builddir:=.}"
. "${top_srcdir:-.}/t/lib/find-python.sh"
find_python "torch, transformers" "torch and transformers"
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH="${top_srcdir:-.}/t/lib${PYTHONPATH:+:$PYTHONPATH}" "$py" - "$top_builddir/examples/tendo-generate" "$tmp" <<'PY'
import subprocess, sys, warnings
from tap import Tap
import numpy as np
import torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.utils import logging

warnings.simplefilter("ignore")
logging.set_verbosity_error()
prog, tmp = sys.argv[1], sys.argv[2]
tap = Tap()
ok = tap.ok


cases = [
    ("untied head, 4 query heads over 2 kv heads", dict(tie_word_embeddings=False, num_key_value_heads=2), 0),
    ("tied embeddings, 4 kv heads, theta 500000", dict(tie_word_embeddings=True, num_key_value_heads=4,
                                                      rope_theta=500000.0), 1),
]
for what, extra, seed in cases:
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=160, num_hidden_layers=3,
                      num_attention_heads=4, max_position_embeddings=256, rms_norm_eps=1e-5, **extra)
    model = LlamaForCausalLM(cfg).eval()
    d = f"{tmp}/m{seed}"
    model.save_pretrained(d, safe_serialization=True)
    prompt = torch.randint(0, 256, (1, 11), generator=torch.Generator().manual_seed(seed + 7))
    np.save(f"{d}/prompt.npy", prompt.numpy().astype(np.int64))
    with torch.no_grad():
        ref_logits = model(prompt).logits[0].numpy()
        ref_tokens = model.generate(prompt, max_new_tokens=32, min_new_tokens=32, do_sample=False,
                                    pad_token_id=0)[0, prompt.shape[1]:].numpy()
    r = subprocess.run([prog, "--tokens", "32", "--logits", f"{d}/logits.npy", d, f"{d}/prompt.npy", f"{d}/out.npy"],
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        ok(False, f"{what}: tendo-generate runs", r.stderr.strip())
        ok(False, f"{what}: 32 greedy tokens", "did not run")
        continue
    got = np.load(f"{d}/logits.npy")
    err = float(np.abs(got - ref_logits).max()) if got.shape == ref_logits.shape else float("inf")
    scale = float(np.abs(ref_logits).max())
    ok(err <= 1e-4 * max(1.0, scale), f"{what}: prompt logits {got.shape} within f32 tolerance "
       f"(max abs error {err:.2e}, largest |logit| {scale:.2f})", f"shape {got.shape} vs {ref_logits.shape}")
    toks = np.load(f"{d}/out.npy")
    same = toks.shape == ref_tokens.shape and bool((toks == ref_tokens).all())
    ok(same, f"{what}: 32 greedy tokens through the KV cache equal transformers' generate()",
       f"tendo {toks.tolist()}\n# transformers {ref_tokens.tolist()}")
tap.done()
PY
