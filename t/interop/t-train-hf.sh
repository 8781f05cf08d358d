#!/bin/sh
# t/interop/t-train-hf.sh - examples/tendo-train step for step against
# PyTorch and Hugging Face transformers.  transformers makes a random
# 2-layer LlamaForCausalLM (grouped-query heads, untied head) and saves it;
# tendo-train starts from those weights (--init) and trains 50 steps on a
# text's bytes; the same model in PyTorch takes the same steps on the same
# batches (tendo-train's offsets, recomputed here), with the same warmup +
# cosine learning rate and clipping.  In f32, AdamW and SGD with momentum:
# every step's loss within 1e-4 of torch's (relative) and every final
# parameter within 1e-4 (relative 2-norm).  In bf16 (tendo: bf16 weights
# with f32 master weights; torch: the same, by hand): every step's loss
# within 2 %.  Then transformers loads tendo-train's checkpoints (f32 and
# bf16, tied embeddings too) and gives the logits tendo-generate gives
# (f32 tolerance).  Skips, saying why, without a Python that has torch and
# transformers (TORCH_PYTHON, BENCH_PYTHON or PYTHON).
: "${top_builddir:=.}"
. "${top_srcdir:-.}/t/lib/find-python.sh"
find_python "torch, transformers" "torch and transformers"
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH="${top_srcdir:-.}/t/lib${PYTHONPATH:+:$PYTHONPATH}" "$py" - \
    "$top_builddir/examples/tendo-train" "$top_builddir/examples/tendo-generate" "$tmp" <<'PY'
import csv, json, subprocess, sys, warnings
import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.utils import logging
from tap import Tap
from torch_models import cosine

warnings.simplefilter("ignore")
logging.set_verbosity_error()
logging.disable_progress_bar()
train, generate, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
tap = Tap()
torch.manual_seed(0)
STEPS, B, L, SEED, WARMUP = 50, 4, 32, 5, 5
M64 = (1 << 64) - 1

# a text of a few thousand bytes, the same on every run
words = "the of and to in is was for on that with as by at from his it an were are which this be".split()
rng = np.random.default_rng(3)
text = " ".join(words[i] for i in rng.integers(0, len(words), 3000)).encode()
open(f"{tmp}/text.txt", "wb").write(text)
ntrain = len(text) - int(len(text) * 0.1)


def mix(x):  # tendo-train's splitmix64
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def batch(step):
    xs, ys = [], []
    for b in range(B):
        off = mix(((mix(SEED) ^ mix(step)) + b) & M64) % (ntrain - L)
        xs.append(list(text[off:off + L]))
        ys.append(list(text[off + 1:off + L + 1]))
    return torch.tensor(xs), torch.tensor(ys)


def run_tendo(args, out):
    r = subprocess.run([train, "--quiet", "--steps", str(STEPS), "--batch", str(B), "--seq", str(L), "--seed",
                        str(SEED), "--warmup", str(WARMUP), "--val-batches", "0", *args, f"{tmp}/init/config.json",
                        f"{tmp}/text.txt", out], capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr
    with open(f"{out}/loss.csv") as f:
        return [float(row["loss"]) for row in csv.DictReader(f)], ""


def run_torch(init, opt_name, lr, bf16):
    model = LlamaForCausalLM.from_pretrained(init, torch_dtype=torch.float32, attn_implementation="eager")
    master = [p for p in model.parameters()]
    if bf16:  # the bf16 model computes; master f32 copies take the steps
        work = LlamaForCausalLM.from_pretrained(init, torch_dtype=torch.bfloat16, attn_implementation="eager")
        wparams = list(work.parameters())
    opt = (torch.optim.AdamW(master, lr=lr, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1) if opt_name == "adamw"
           else torch.optim.SGD(master, lr=lr, momentum=0.9, weight_decay=0.1))
    losses = []
    for s in range(1, STEPS + 1):
        x, y = batch(s)
        m = work if bf16 else model
        logits = m(x).logits
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        loss.backward()
        losses.append(loss.item())
        if bf16:
            for p, w in zip(master, wparams):
                p.grad = w.grad.float()
                w.grad = None
        torch.nn.utils.clip_grad_norm_(master, 1.0)
        for g in opt.param_groups:
            g["lr"] = cosine(s - 1, WARMUP, STEPS, lr, lr / 10)
        opt.step()
        opt.zero_grad()
        if bf16:
            with torch.no_grad():
                for p, w in zip(master, wparams):
                    w.copy_(p)
    return losses, dict(model.named_parameters())


cfg = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=160, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, max_position_embeddings=128, rms_norm_eps=1e-5, tie_word_embeddings=False)
LlamaForCausalLM(cfg).save_pretrained(f"{tmp}/init", safe_serialization=True)

for opt_name, lr, dt in (("adamw", 3e-3, "f32"), ("sgd", 0.05, "f32"), ("adamw", 3e-3, "bf16")):
    what = f"{opt_name} {dt}, {STEPS} steps"
    out = f"{tmp}/{opt_name}-{dt}"
    subprocess.run(["mkdir", "-p", out])
    args = ["--init", f"{tmp}/init", "--optimizer", opt_name, "--lr", str(lr), "--weight-decay", "0.1",
            "--dtype", dt]
    got, err = run_tendo(args, out)
    if got is None:
        tap.ok(False, f"{what}: tendo-train runs", err)
        continue
    want, params = run_torch(f"{tmp}/init", opt_name, lr, dt == "bf16")
    rel = [abs(a - b) / abs(b) for a, b in zip(got, want)]
    worst = max(range(STEPS), key=lambda i: rel[i])
    if dt == "f32":
        mine = load_file(f"{out}/model.safetensors")
        perr = max((((mine[k].double() - v.detach().double()).norm() / v.detach().double().norm()).item(), k)
                   for k, v in params.items())
        tap.ok(len(got) == STEPS and rel[worst] <= 1e-4 and perr[0] <= 1e-4,
               f"{what}: every loss within 1e-4 of torch's (worst step {worst + 1}, {rel[worst]:.1e}; "
               f"{want[0]:.4f} to {want[-1]:.4f}), every parameter too (worst {perr[1]}, {perr[0]:.1e})",
               f"tendo {got[:4]}\ntorch {want[:4]}")
    else:
        tap.ok(len(got) == STEPS and rel[worst] <= 2e-2,
               f"{what}: every loss within 2 % of torch's (worst step {worst + 1}, {rel[worst]:.1e}; "
               f"{want[0]:.4f} to {want[-1]:.4f})", f"tendo {got[:4]}\ntorch {want[:4]}")

# transformers loads tendo-train's checkpoints
tied = dict(json.load(open(f"{tmp}/init/config.json")), tie_word_embeddings=True)
json.dump(tied, open(f"{tmp}/tied.json", "w"))
prompt = np.frombuffer(text[:24], dtype=np.uint8).astype(np.int64)
np.save(f"{tmp}/prompt.npy", prompt)
for name, args in (("f32, untied", ["--dtype", "f32"]), ("bf16, untied", ["--dtype", "bf16"]),
                   ("f32, tied", ["--dtype", "f32", "--tied"])):
    out = f"{tmp}/ckpt-{len(args)}-{args[1]}"
    subprocess.run(["mkdir", "-p", out])
    config = f"{tmp}/tied.json" if "--tied" in args else f"{tmp}/init/config.json"
    r = subprocess.run([train, "--quiet", "--steps", "20", "--batch", str(B), "--seq", str(L),
                        *[a for a in args if a != "--tied"], config, f"{tmp}/text.txt", out],
                       capture_output=True, text=True)
    g = r.returncode == 0 and subprocess.run([generate, "--tokens", "1", "--logits", f"{out}/logits.npy", out,
                                              f"{tmp}/prompt.npy", f"{out}/next.npy"],
                                             capture_output=True, text=True).returncode == 0
    if not g:
        tap.ok(False, f"{name}: tendo-train and tendo-generate run", r.stderr)
        continue
    model = LlamaForCausalLM.from_pretrained(out, torch_dtype=torch.float32).eval()
    with torch.no_grad():
        ref = model(torch.from_numpy(prompt)[None]).logits[0].numpy()
    mine = np.load(f"{out}/logits.npy")
    err = float(np.abs(mine - ref).max()) if mine.shape == ref.shape else float("inf")
    tap.ok(err <= 1e-4 * max(1.0, float(np.abs(ref).max())),
           f"{name}: transformers loads the checkpoint; its logits are tendo-generate's (max abs error {err:.1e})")
tap.done()
PY
