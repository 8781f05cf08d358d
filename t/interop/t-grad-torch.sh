#!/bin/sh
# t/interop/t-grad-torch.sh - tendo's gradients against PyTorch's: a 3-layer
# MLP (tanh, gelu, mean squared error) and one Llama-style decoder block
# (RMSNorm, RoPE, causal grouped-query attention, SwiGLU, residuals, an
# output head and the mean cross-entropy), from the same weights and inputs
# (exchanged as safetensors, through t/grad-model).  In f32 the loss and
# every gradient must be within 1e-5 of torch's (relative 2-norm); in bf16
# (torch computing in bf16 too) within 4e-2.  Skips, saying why, without a
# Python that has torch and safetensors (TORCH_PYTHON, BENCH_PYTHON or PYTHON).
: "${top_builddir:=.}"
. "${top_srcdir:-.}/t/lib/find-python.sh"
find_python "torch, safetensors" "torch and safetensors"
PYTHONPATH="${top_srcdir:-.}/t/lib${PYTHONPATH:+:$PYTHONPATH}" "$py" - "$top_builddir/t/grad-model" "$tmp" <<'PY'
import subprocess, sys
import torch
from safetensors.torch import load_file, save_file
from tap import Tap
from torch_models import models

prog, tmp = sys.argv[1], sys.argv[2]
tap = Tap()
torch.manual_seed(0)

for name, (make, fwd) in models.items():
    inputs, meta = make()
    path = f"{tmp}/{name}.safetensors"
    save_file(inputs, path, metadata=meta)
    for dt, tol in (("f32", 1e-5), ("bf16", 4e-2)):
        tdt = torch.float32 if dt == "f32" else torch.bfloat16
        outp = f"{tmp}/{name}-{dt}.out.safetensors"
        run = subprocess.run([prog, name, dt, path, outp], capture_output=True, text=True)
        if run.returncode == 77:
            tap.ok(True, f"{name} {dt} # SKIP this build has no {dt}")
            continue
        if run.returncode != 0:
            tap.ok(False, f"{name} {dt}: grad-model runs", run.stderr)
            continue
        got = load_file(outp)
        p = {k: (v.detach().clone().to(tdt).requires_grad_() if v.is_floating_point() else v)
             for k, v in inputs.items()}
        loss = fwd(p)
        loss.backward()

        def rel(a, b):
            a, b = a.double(), b.double()
            return ((a - b).norm() / max(b.norm().item(), 1e-30)).item()

        worst = [("loss", rel(got["loss"].reshape(()), loss.detach().float()))]
        for k, v in p.items():
            if v.is_floating_point():
                worst.append((k, rel(got[f"grad.{k}"], v.grad.float())))
        bad = [f"{k} {e:.2e}" for k, e in worst if not e <= tol]
        top = max(worst, key=lambda t: t[1])
        tap.ok(not bad, f"{name} {dt}: the loss and {len(worst) - 1} gradients within {tol:g} of torch's "
                        f"(worst {top[0]}, {top[1]:.1e})", "outside: " + ", ".join(bad))
tap.done()
PY
