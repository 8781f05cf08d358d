#!/usr/bin/env python3
"""bench/train.py - one training step (forward + backward + clip + AdamW)
of a Llama-style decoder, tendo-train against PyTorch eager, side by side.

The model of issue 24's benchmark: d 256, 4 layers, 4 heads, SwiGLU 688,
256 byte tokens, tied embeddings; batch 8 of 256 tokens; f32 and bf16
(tendo: bf16 weights with f32 master weights; torch: the same model cast
to bf16, its AdamW on bf16 parameters), at each thread count.  tendo's
time per step is the median of its loss.csv after 3 warm-up steps; torch's
the median of as many steps, transformers' LlamaForCausalLM with SDPA
attention.  Memory: tendo's pool peak (printed by tendo-train) against
torch's growth of the maximum resident set over the steps.

    python3 bench/train.py [path/to/examples/tendo-train] [THREADS...]

Prints tokens/s for each and tendo/torch throughput (higher is better;
issue 24's target is >= 1.0).  Needs torch and transformers.  Not a test.
"""
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

CONFIG = {"model_type": "llama", "hidden_size": 256, "intermediate_size": 688, "num_attention_heads": 4,
          "num_key_value_heads": 4, "num_hidden_layers": 4, "vocab_size": 256, "max_position_embeddings": 512,
          "rms_norm_eps": 1e-5, "tie_word_embeddings": True, "hidden_act": "silu"}
BATCH, SEQ, STEPS = 8, 256, 13

TORCH = r"""
import resource, statistics, sys, time, torch
import torch.nn.functional as F
from transformers import LlamaConfig, LlamaForCausalLM
cfg, dtype, threads, B, L, steps = eval(sys.argv[1])
dtype = getattr(torch, dtype)
torch.set_num_threads(threads)
torch.manual_seed(0)
model = LlamaForCausalLM(LlamaConfig(**cfg, attn_implementation="sdpa")).to(dtype)
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1)
x = torch.randint(0, 256, (B, L))
y = torch.randint(0, 256, (B, L))
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
times = []
for s in range(steps):
    t = time.perf_counter()
    logits = model(x).logits
    loss = F.cross_entropy(logits.reshape(-1, 256).float(), y.reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad()
    times.append(time.perf_counter() - t)
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0
print(statistics.median(times[3:]), rss * 1024)
"""


def tendo(prog, dtype, threads, tmp):
    cfg = os.path.join(tmp, "config.json")
    json.dump(CONFIG, open(cfg, "w"))
    text = os.path.join(tmp, "text.bin")
    with open(text, "wb") as f:
        f.write(os.urandom(1 << 20))
    out = os.path.join(tmp, f"run-{dtype}-{threads}")
    r = subprocess.run([prog, "--steps", str(STEPS), "--batch", str(BATCH), "--seq", str(SEQ), "--val-batches", "0",
                        "--threads", str(threads), "--dtype", dtype, "--lr", "3e-4", cfg, text, out],
                       check=True, capture_output=True, text=True).stdout
    with open(os.path.join(out, "loss.csv")) as f:
        seconds = [float(row["seconds"]) for row in csv.DictReader(f)]
    per_step = statistics.median(b - a for a, b in zip(seconds[3:], seconds[4:]))
    peak = float(re.search(r"pool: ([0-9.]+) MiB", r).group(1)) * 1048576
    return per_step, peak


def main():
    prog = sys.argv[1] if len(sys.argv) > 1 else "examples/tendo-train"
    threads = [int(t) for t in sys.argv[2:]] or [1, 2]
    tokens = BATCH * SEQ
    with tempfile.TemporaryDirectory() as tmp:
        for th in threads:
            print(f"== {th} thread{'s' if th > 1 else ''}: d 256, 4 layers, batch {BATCH} x {SEQ} tokens "
                  f"(tokens/s; tendo / torch, higher is better)")
            for dtype, tdt in (("f32", "float32"), ("bf16", "bfloat16")):
                ours, peak = tendo(prog, dtype, th, tmp)
                r = subprocess.run([sys.executable, "-c", TORCH, repr((CONFIG, tdt, th, BATCH, SEQ, STEPS))],
                                   check=True, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS=str(th)))
                theirs, rss = (float(v) for v in r.stdout.split())
                print(f"  {dtype:5s} tendo {tokens / ours:9.0f} tok/s  torch {tokens / theirs:9.0f} tok/s  "
                      f"ratio {theirs / ours:5.2f}   memory: tendo pool peak {peak / 2**20:7.1f} MiB, "
                      f"torch max RSS growth {rss / 2**20:7.1f} MiB")


if __name__ == "__main__":
    main()
