#!/bin/sh
# t/interop/t-generate-hf.sh - examples/tendo-generate against Hugging Face
# transformers: a small random LlamaForCausalLM (grouped-query heads, RoPE,
# SwiGLU, untied and tied output heads) saved as safetensors; tendo's logits
# for a prompt must match within f32 tolerance, and its 32 greedy tokens
# (through the KV cache) must be transformers' generate() tokens.  Then the
# input it refuses: every number option with trailing junk, overflow or out
# of range, and a missing value (status 2 and the usage); --tokens past
# max_position_embeddings (status 2 before anything big is allocated; the
# last one that fits runs); prompt ids outside the vocabulary, named with
# their position, prompts of shape [2, 3], [], [1, 1, 1, 3], of dtype i32,
# empty or longer than the context (status 1, saying what is wrong); config.json
# fields of the wrong type, out of range or unlike the weights' shapes (status 1
# naming the field).  Skips,
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

# ---- input it refuses, on the first model (vocab 256, max_position_embeddings 256, prompt of 11) ----
d = f"{tmp}/m0"
usage = [["--tokens", "1e3"], ["--tokens", "0"], ["--tokens", "-3"], ["--tokens", "12abc"], ["--tokens", " 5"],
         ["--tokens", "99999999999999999999"], ["--temperature", "nan"], ["--temperature", "-0.5"],
         ["--temperature", "1e999"], ["--top-k", "2.5"], ["--top-p", "1.5"], ["--min-p", "x"],
         ["--repeat-penalty", "0"], ["--seed", "-1"], ["--device", "cuda:x"], ["--device", "gpu"]]
bad = []
for flags in usage:
    r = subprocess.run([prog] + flags + [d, f"{d}/prompt.npy", f"{d}/out.npy"], capture_output=True, text=True)
    if r.returncode != 2 or flags[0] not in r.stderr or "usage:" not in r.stderr:
        bad.append(f"{' '.join(flags)}: status {r.returncode}: {r.stderr}")
r = subprocess.run([prog, d, f"{d}/prompt.npy", f"{d}/out.npy", "--tokens"], capture_output=True, text=True)
if r.returncode != 2 or "--tokens (missing)" not in r.stderr:
    bad.append(f"--tokens at the end: status {r.returncode}: {r.stderr}")
for args in (["--chat", d, f"{d}/prompt.npy", f"{d}/out.npy"], [d, "--prompt", "x", f"{d}/prompt.npy", f"{d}/out.npy"]):
    r = subprocess.run([prog] + args, capture_output=True, text=True)
    if r.returncode != 2 or "usage:" not in r.stderr:
        bad.append(f"{' '.join(args[:2])}: status {r.returncode}: {r.stderr}")
ok(not bad, f"{len(usage) + 3} malformed options and argument lists: status 2 with the usage", "\n".join(bad))
r = subprocess.run([prog, "--tokens", "100000000", d, f"{d}/prompt.npy", f"{d}/out.npy"], capture_output=True,
                   text=True, timeout=30)
ok(r.returncode == 2 and "exceed the model's context of 256 positions" in r.stderr and "at most 245 more" in r.stderr,
   "--tokens 100000000: status 2 before allocating, naming the context of 256 and the 245 that fit", r.stderr)
r = subprocess.run([prog, "--tokens", "245", d, f"{d}/prompt.npy", f"{d}/out.npy"], capture_output=True, text=True)
ok(r.returncode == 0 and np.load(f"{d}/out.npy").shape == (245,), "--tokens 245 (11 + 245 = 256 positions) runs",
   r.stderr)
prompts = [("with id -1 at position 3", np.array([[5, 6, 7, -1, 8]]), "token id -1 at position 3 is outside"),
           ("with id 256 = vocab_size at position 0", np.array([256, 1]), "token id 256 at position 0 is outside"),
           ("of shape [2, 3]", np.zeros((2, 3)), "shape [2, 3]; want [len] or [1, len]"),
           ("of shape []", np.array(5), "shape []; want [len] or [1, len]"),
           ("of shape [1, 1, 1, 3]", np.zeros((1, 1, 1, 3)), "shape [1, 1, 1, 3]; want [len] or [1, len]"),
           ("of dtype i32", np.array([1, 2], dtype=np.int32), "of dtype i32; want i64"),
           ("that is empty", np.zeros(0), "an empty prompt"),
           ("of 257 ids", np.zeros(257), "longer than the model's context of 256 positions")]
for what, ids, msg in prompts:
    np.save(f"{tmp}/bad.npy", ids if ids.dtype == np.int32 else ids.astype(np.int64))
    r = subprocess.run([prog, "--tokens", "1", d, f"{tmp}/bad.npy", f"{tmp}/bad-out.npy"], capture_output=True,
                       text=True)
    ok(r.returncode == 1 and msg in r.stderr, f"a prompt {what}: status 1, saying \"{msg}\"",
       f"status {r.returncode}: {r.stderr}")

# config.json fields of the wrong type, out of range, or not the weights' shapes: status 1 naming the field
import json, shutil
np.save(f"{tmp}/ok.npy", np.array([1, 2, 3], dtype=np.int64))
good = json.load(open(f"{d}/config.json"))
configs = [("rms_norm_eps as a string", {"rms_norm_eps": "x"}, "rms_norm_eps must be a number"),
           ("tie_word_embeddings as a string", {"tie_word_embeddings": "true"}, "tie_word_embeddings must be true or false"),
           ("an eps infinite in f32", {"rms_norm_eps": 1e39}, "rms_norm_eps 1e+39 must be positive and finite in f32"),
           ("a zero eps", {"rms_norm_eps": 0}, "rms_norm_eps 0 must be positive"),
           ("hidden_size 2^62", {"hidden_size": 2 ** 62}, "hidden_size 4611686018427387904 is out of range"),
           ("hidden_size 32 for 64-wide weights", {"hidden_size": 32, "head_dim": 16}, "(hidden_size)"),
           ("an intermediate_size the weights lack", {"intermediate_size": 128}, "mlp.gate_proj.weight is not [128, 64]"),
           ("num_hidden_layers as a fraction", {"num_hidden_layers": 2.5}, "num_hidden_layers must be an integer"),
           ("heads not a multiple of kv heads", {"num_key_value_heads": 3}, "not a multiple of num_key_value_heads")]
bad_dir = f"{tmp}/badcfg"
shutil.copytree(d, bad_dir)
for what, change, msg in configs:
    json.dump({**good, **change}, open(f"{bad_dir}/config.json", "w"))
    r = subprocess.run([prog, "--tokens", "1", bad_dir, f"{tmp}/ok.npy", f"{tmp}/bad-out.npy"], capture_output=True,
                       text=True)
    ok(r.returncode == 1 and msg in r.stderr, f"config.json with {what}: status 1, saying \"{msg}\"",
       f"status {r.returncode}: {r.stderr}")
tap.done()
PY
