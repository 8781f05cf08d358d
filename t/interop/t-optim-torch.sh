#!/bin/sh
# t/interop/t-optim-torch.sh - training steps against PyTorch's: the MLP and
# the Llama-style decoder block of t-grad-torch.sh, trained from the same
# weights on the same batches by t/grad-model (AdamW with weight decay, and
# SGD with Nesterov momentum; clip_grad_norm(1.0) and a warmup + cosine
# learning rate every step) and by torch.optim.  In f32 every step's loss
# and gradient norm must be within 1e-4 of torch's (relative) and every
# final parameter within 1e-4 (relative 2-norm); in bf16 (torch with f32
# master weights, computing in bf16) every step's loss within 2 %.  Skips,
# saying why, without a Python that has torch and safetensors
# (TORCH_PYTHON, BENCH_PYTHON or PYTHON).
: "${top_builddir:=.}"
. "${top_srcdir:-.}/t/lib/find-python.sh"
find_python "torch, safetensors" "torch and safetensors"
PYTHONPATH="${top_srcdir:-.}/t/lib${PYTHONPATH:+:$PYTHONPATH}" "$py" - "$top_builddir/t/grad-model" "$tmp" <<'PY'
import subprocess, sys
import torch
from safetensors.torch import load_file, save_file
from tap import Tap
from torch_models import cosine, models

prog, tmp = sys.argv[1], sys.argv[2]
tap = Tap()
torch.manual_seed(0)
STEPS = 50
DATA = ("x", "target", "targets")


def torch_train(fwd, inputs, opt_name, tdt):
    """The steps grad-model takes, with f32 parameters cast to tdt in the forward."""
    params = {k: v.detach().clone().requires_grad_() for k, v in inputs.items()
              if v.is_floating_point() and k.split(".")[0] not in DATA}
    if opt_name == "adamw":
        lr = 3e-3
        opt = torch.optim.AdamW(params.values(), lr=lr, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    else:
        lr = 0.05
        opt = torch.optim.SGD(params.values(), lr=lr, momentum=0.9, weight_decay=1e-3, nesterov=True)
    losses, norms = [], []
    for s in range(STEPS):
        p = {k: v.to(tdt) for k, v in params.items()}
        for k in DATA:
            if f"{k}.{s}" in inputs:
                v = inputs[f"{k}.{s}"]
                p[k] = v.to(tdt) if v.is_floating_point() else v
        loss = fwd(p)
        loss.backward()
        losses.append(loss.item())
        norms.append(torch.nn.utils.clip_grad_norm_(params.values(), 1.0).item())
        for g in opt.param_groups:
            g["lr"] = cosine(s, 2, STEPS, lr, lr / 10)
        opt.step()
        opt.zero_grad()
    return losses, norms, params


for name, (make, fwd) in models.items():
    inputs, meta = make()
    for s in range(STEPS):  # a batch per step, drawn as the first
        batch, _ = make()
        inputs.update({f"{k}.{s}": batch[k] for k in DATA if k in batch})
    path = f"{tmp}/{name}.safetensors"
    save_file(inputs, path, metadata=meta)
    for opt_name in ("adamw", "sgd"):
        for dt in ("f32", "bf16"):
            what = f"{name} {dt} {opt_name}, {STEPS} steps"
            outp = f"{tmp}/{name}-{dt}-{opt_name}.out.safetensors"
            run = subprocess.run([prog, name, dt, path, outp, opt_name, str(STEPS)], capture_output=True, text=True)
            if run.returncode == 77:
                tap.ok(True, f"{what} # SKIP this build has no {dt}")
                continue
            if run.returncode != 0:
                tap.ok(False, f"{what}: grad-model runs", run.stderr)
                continue
            got = load_file(outp)
            losses, norms, params = torch_train(fwd, inputs, opt_name, torch.float32 if dt == "f32" else torch.bfloat16)

            def rel(a, b):
                return abs(a - b) / max(abs(b), 1e-30)

            if dt == "f32":
                worst = max([(rel(float(got["loss"][s]), losses[s]), f"loss {s}") for s in range(STEPS)] +
                            [(rel(float(got["norm"][s]), norms[s]), f"norm {s}") for s in range(STEPS)])
                for k, v in params.items():
                    a, b = got[f"param.{k}"].double(), v.detach().double()
                    worst = max(worst, (((a - b).norm() / b.norm()).item(), k))
                tap.ok(worst[0] <= 1e-4, f"{what}: every loss and norm, and {len(params)} parameters, within 1e-4 of "
                                         f"torch's (worst {worst[1]}, {worst[0]:.1e})",
                       f"losses {[round(float(x), 6) for x in got['loss'][:5]]} vs {[round(x, 6) for x in losses[:5]]}")
            else:
                worst = max((rel(float(got["loss"][s]), losses[s]), s) for s in range(STEPS))
                tap.ok(worst[0] <= 2e-2, f"{what}: every loss within 2 % of torch's (worst step {worst[1]}, "
                                         f"{worst[0]:.1e}); {losses[0]:.4f} to {losses[-1]:.4f}")
tap.done()
PY
