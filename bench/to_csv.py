#!/usr/bin/env python3
"""Turns cuact_bench's text tables (--headline, --family, --user) and cuact_bench_fused's (mode
"fused") into one CSV of results.

    python3 bench/to_csv.py OUT [--commit C] [--driver D] [--date D] MODE=FILE...

Each MODE=FILE is one mode's stdout (e.g. headline=OUT/headline.txt); an option applies to the
files after it, so files of different trees can share one CSV. OUT is a file, or a directory that gets
<gpu>.csv (the device name without "NVIDIA", lower case, first word: h200.csv). Columns:
op,dtype,mode,n,gbps,x_memcpy,x_cub,gpu,driver,cuda,commit,date. `op` is the row's label, with
" in place" added for in-place rows; `x_cub` is empty for rows CUB has no counterpart for.
`gpu` and `cuda` (the runtime) come from the file's header; `driver` is --driver (nvidia-smi's
driver version) or else the header's CUDA driver API version; `date` the header's date unless
--date. Exits 1 if a file has no rows, so a broken run cannot pass for an empty one.
Standard library only: bench/run_all.sh runs it on the GPU machine.
"""
import csv
import os
import re
import sys

COLUMNS = ["op", "dtype", "mode", "n", "gbps", "x_memcpy", "x_cub", "gpu", "driver", "cuda",
           "commit", "date"]
DTYPES = {"fp32", "fp64", "bf16", "fp16"}


def version(code):
    """CUDA's 13000 -> 13.0."""
    code = int(code)
    return f"{code // 1000}.{code % 1000 // 10}"


def short_name(gpu):
    """NVIDIA H100 80GB HBM3 -> h100."""
    words = [w for w in gpu.lower().split() if w != "nvidia"]
    return re.sub(r"[^a-z0-9_-]", "", words[0]) if words else "gpu"


def parse(text, mode):
    """Yields one dict per table row of one mode's output."""
    header = {"gpu": "", "cuda": "", "driver": "", "date": "", "n": "", "n_fp64": ""}
    m = re.search(r"^# cuact_bench --\S+, (\d{4}-\d\d-\d\d)", text, re.M)
    if m:
        header["date"] = m.group(1)
    m = re.search(r"^# device \d+: ([^,]+),", text, re.M)
    if m:
        header["gpu"] = m.group(1).strip()
    m = re.search(r"^# CUDA driver (\d+), runtime (\d+)", text, re.M)
    if m:
        header["driver"], header["cuda"] = version(m.group(1)), version(m.group(2))
    m = re.search(r"^# n = .*?= (\d+) elements(?: \(fp64: (\d+)\))?", text, re.M)
    if m:
        header["n"] = m.group(1)
        header["n_fp64"] = m.group(2) or m.group(1)
    for line in text.splitlines():
        if mode == "fused":
            # cuact_bench_fused: op label, dtype, GB, ms, GB/s, copy GB/s, x copy (no CUB column)
            m = re.match(r"(\S.*?)\s+(fp32|fp64|bf16|fp16)\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+"
                         r"[\d.]+\s+([\d.]+)\s*$", line)
            if m:
                label, dtype, gbps, x_memcpy = m.groups()
                yield {"op": label, "dtype": dtype, "mode": mode, "n": header["n"], "gbps": gbps,
                       "x_memcpy": x_memcpy, "x_cub": "", "gpu": header["gpu"],
                       "driver": header["driver"], "cuda": header["cuda"], "date": header["date"]}
            continue
        # op label (may hold spaces), dtype, place, GB/s, x memcpy, copy GB/s, CUB GB/s, x CUB
        m = re.match(r"(\S.*?)\s+(fp32|fp64|bf16|fp16)\s+(out|in|-)\s+([\d.]+)\s+([\d.]+)\s+"
                     r"[\d.]+\s+(\S+)\s+(\S+)\s", line)
        if not m:
            continue
        label, dtype, place, gbps, x_memcpy, _cub_gbps, x_cub = m.groups()
        yield {
            "op": label + (" in place" if place == "in" else ""),
            "dtype": dtype,
            "mode": mode,
            "n": header["n_fp64"] if dtype == "fp64" else header["n"],
            "gbps": gbps,
            "x_memcpy": x_memcpy,
            "x_cub": "" if x_cub == "-" else x_cub,
            "gpu": header["gpu"],
            "driver": header["driver"],
            "cuda": header["cuda"],
            "date": header["date"],
        }


def main(argv):
    options = {"--commit": "", "--driver": "", "--date": ""}
    inputs = []
    args = iter(argv)
    out = next(args, None)
    for arg in args:
        if arg in options:
            options[arg] = next(args, "")
        elif "=" in arg:
            inputs.append((*arg.split("=", 1), dict(options)))
        else:
            sys.exit(__doc__)
    if out is None or not inputs:
        sys.exit(__doc__)
    rows = []
    for mode, path, given in inputs:
        with open(path) as f:
            found = list(parse(f.read(), mode))
        if not found:
            sys.exit(f"to_csv.py: no result rows in {path}")
        for row in found:
            row["commit"] = given["--commit"]
            if given["--driver"]:
                row["driver"] = given["--driver"]
            if given["--date"]:
                row["date"] = given["--date"]
        rows += found
    if os.path.isdir(out):
        out = os.path.join(out, short_name(rows[0]["gpu"]) + ".csv")
    with open(out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    print(f"to_csv.py: {len(rows)} rows to {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
