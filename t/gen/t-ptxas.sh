#!/bin/sh
# t/gen/t-ptxas.sh - what ptxas says about every CUDA kernel tendo builds, for
# every architecture it builds for (build-aux/nvcc-lt.sh keeps the report
# of each .cu file as NAME.res beside its object):
#   - no kernel spills registers to local memory (spill stores or loads);
#   - every kernel fits the threads it may be launched with: registers x
#     threads <= 65536, the register file of one SM on sm_80 and sm_90,
#     where the threads are the kernel's __launch_bounds__ (found in the
#     sources) or, without one, the 1024 a launch may ask for;
#   - static shared memory <= 48 KiB (more needs the opt-in of dynamic).
# One TAP line per object and architecture, naming each kernel over a limit.
# Skips in a build without nvcc (no reports).
set -u
b=${top_builddir:-.}
s=${top_srcdir:-.}
res=$(ls "$b"/src/gen/*.res "$b"/kernels/*.res 2>/dev/null)
if [ -z "$res" ]; then
    echo "1..0 # SKIP no ptxas reports (built without nvcc)"
    exit 0
fi
py=${PYTHON:-python3}
"$py" - "$s" $res <<'PY'
import glob, os, re, subprocess, sys

src, reports = sys.argv[1], sys.argv[2:]

# __launch_bounds__(N[, ...]) before a kernel's name, N a number or a macro
# #defined in the same sources
texts = [open(p).read() for p in glob.glob(os.path.join(src, "kernels", "*.cuh")) +
         glob.glob(os.path.join(src, "src", "cuda", "*.cu")) + glob.glob(os.path.join(src, "templates", "*.cu.j2"))]
macros = {m.group(1): int(m.group(2)) for t in texts
          for m in re.finditer(r"^#define\s+(\w+)\s+(\d+)\s*$", t, re.M)}
bounds = {}
for t in texts:
    for m in re.finditer(r"__launch_bounds__\(\s*(\w+)[^)]*\)\s*(?:void\s+)?(\w+)\s*\(", t):
        n = int(m.group(1)) if m.group(1).isdigit() else macros.get(m.group(1))
        if n is None:
            print(f"Bail out! launch bound {m.group(1)} of {m.group(2)}: not a number or a #define")
            sys.exit(1)
        bounds[m.group(2)] = n

# ptxas's report: an entry, its frame and spills, then its registers and smem
kernels = []  # (file, mangled, arch, regs, spill_st, spill_ld, smem)
for path in reports:
    cur = None
    for line in open(path):
        if m := re.match(r"ptxas info\s*: Compiling entry function '(\S+)' for '(sm_\d+)'", line):
            cur = {"file": os.path.basename(path)[:-4], "name": m.group(1), "arch": m.group(2),
                   "regs": 0, "st": 0, "ld": 0, "smem": 0}
            kernels.append(cur)
        elif cur and (m := re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)):
            cur["st"], cur["ld"] = int(m.group(1)), int(m.group(2))
        elif cur and (m := re.match(r"ptxas info\s*: Used (\d+) registers", line)):
            cur["regs"] = int(m.group(1))
            if sm := re.search(r"(\d+) bytes smem", line):
                cur["smem"] = int(sm.group(1))
if not kernels:
    print("Bail out! the ptxas reports name no kernel: " + " ".join(reports))
    sys.exit(1)

names = subprocess.run(["c++filt"], input="\n".join(k["name"] for k in kernels), capture_output=True,
                       text=True).stdout.split("\n")
groups = {}  # (file, arch) -> [kernel, ...] in report order
for k, pretty in zip(kernels, names):
    k["pretty"] = pretty or k["name"]
    groups.setdefault((k["file"], k["arch"]), []).append(k)
print(f"1..{len(groups)}")
worst = 0
for i, ((file, arch), ks) in enumerate(groups.items(), 1):
    bad = []
    for k in ks:
        base = re.sub(r"^(?:\w+::)*", "", re.split(r"[<(]", k["pretty"])[0].split()[-1])
        threads = bounds.get(base, 1024)
        why = []
        if k["st"] or k["ld"]:
            why.append(f"spills {k['st']} bytes stored, {k['ld']} loaded")
        if k["regs"] * threads > 65536:
            why.append(f"{k['regs']} registers x {threads} threads > 65536")
        if k["smem"] > 48 * 1024:
            why.append(f"{k['smem']} bytes of static shared memory > 48 KiB")
        if why:
            bad.append(f"# {k['pretty']}: " + "; ".join(why))
        worst = max(worst, k["regs"])
    if bad:
        print(f"not ok {i} - {file} ({arch}): {len(bad)} of {len(ks)} kernels over their limits")
    else:
        regs = max(k["regs"] for k in ks)
        print(f"ok {i} - {file} ({arch}): {len(ks)} kernels, at most {regs} registers, no spills")
    for line in bad:
        print(line)
print(f"# {len(kernels)} kernels x architectures in {len(reports)} objects, at most {worst} registers")
PY
