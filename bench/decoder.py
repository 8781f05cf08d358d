#!/usr/bin/env python3
"""bench/decoder.py - greedy decoding at batch 1: tokens per second of
examples/tendo-generate against transformers' generate() on the same
random Llama-style model (RMSNorm, RoPE, grouped-query attention with a
KV cache, SwiGLU), f32, at 1 and 2 threads.

    python3 bench/decoder.py [path/to/tendo-generate]

Each side decodes 1 token and N tokens after the same prompt; the decode
rate is (N - 1) / (time(N) - time(1)), so loading the model and the
prompt's forward pass cancel out (best of 3 each).  Prints the rates and
tendo/transformers (higher is better, issue 12's target >= 1.0).  Needs
torch and transformers.  Not a test.
"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.utils import logging

N = 64
REPS = 3


def best(fn):
    return min(fn() for _ in range(REPS))


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else "examples/tendo-generate"
    logging.set_verbosity_error()
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=32000, hidden_size=512, intermediate_size=1408, num_hidden_layers=8,
                      num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=512,
                      rms_norm_eps=1e-5, tie_word_embeddings=False)
    model = LlamaForCausalLM(cfg).eval()
    params = sum(p.numel() for p in model.parameters())
    prompt = torch.randint(0, cfg.vocab_size, (1, 16), generator=torch.Generator().manual_seed(1))
    print(f"torch {torch.__version__}; Llama {params / 1e6:.0f}M parameters (hidden {cfg.hidden_size}, "
          f"{cfg.num_hidden_layers} layers, {cfg.num_attention_heads}/{cfg.num_key_value_heads} heads), "
          f"prompt 16, {N} tokens, best of {REPS}")
    print(f"{'threads':>7}{'tendo tok/s':>13}{'torch tok/s':>13}{'ratio':>8}  target")
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        np.save(f"{tmp}/prompt.npy", prompt.numpy().astype(np.int64))

        for threads in (1, 2):
            torch.set_num_threads(threads)
            env = dict(os.environ, OMP_NUM_THREADS=str(threads))

            def tendo(n):
                t0 = time.perf_counter()
                subprocess.run([exe, "--tokens", str(n), tmp, f"{tmp}/prompt.npy", f"{tmp}/out.npy"], env=env,
                               check=True)
                return time.perf_counter() - t0

            def hf(n):
                with torch.no_grad():
                    t0 = time.perf_counter()
                    model.generate(prompt, max_new_tokens=n, min_new_tokens=n, do_sample=False, pad_token_id=0)
                    return time.perf_counter() - t0

            ours = (N - 1) / (best(lambda: tendo(N)) - best(lambda: tendo(1)))
            hf(2)  # warm up
            theirs = (N - 1) / (best(lambda: hf(N)) - best(lambda: hf(1)))
            ratio = ours / theirs
            print(f"{threads:>7}{ours:>13.1f}{theirs:>13.1f}{ratio:>8.2f}  >= 1.0 {'ok' if ratio >= 1 else 'MISSED'}")


if __name__ == "__main__":
    main()
