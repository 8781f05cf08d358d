# bench/gpu-ratios.awk - reads bench/gpu-run.sh's bench.txt (tendo's
# bench-gpu under "== tendo", bench/gpu.py under "== PyTorch", lines
# "CASE  TIME us ...") and prints each case's two times and the ratio
# tendo / PyTorch (below 1: tendo faster); a case only PyTorch has (the raw
# cudaMalloc) gets no ratio.
/^== tendo/ { side = 1; next }
/^== PyTorch/ { side = 2; next }
{
    if (!match($0, /  +[0-9.]+ us/))
        next
    name = substr($0, 1, RSTART - 1)
    v = substr($0, RSTART)
    sub(/ us.*/, "", v)
    gsub(/ /, "", v)
    if (side == 1)
        t[name] = v
    else if (side == 2) {
        p[name] = v
        order[++n] = name
    }
}
END {
    printf "%-34s %10s %10s  %s\n", "case", "tendo", "PyTorch", "ratio"
    for (i = 1; i <= n; i++) {
        k = order[i]
        if (k in t)
            printf "%-34s %10s %10s  %5.2f\n", k, t[k], p[k], t[k] / p[k]
        else
            printf "%-34s %10s %10s\n", k, "-", p[k]
    }
}
