#!/usr/bin/env python3
"""Generates the performance tables of docs/performance.md and README.md from bench/results/*.csv
(written by bench/run_all.sh), between `<!-- generated: NAME -->` and `<!-- end generated -->`.

    python3 tools/gen_performance.py          rewrite the generated sections
    python3 tools/gen_performance.py --check  exit 1 if a section differs from what the CSVs give

Standard library only. Sections: `readme-h200` (README.md: the headline rows, x memcpy per dtype),
`summary` (every GPU: minimum x memcpy and x CUB per mode and dtype), and per GPU `headline-GPU`,
`family-GPU`, `user-GPU` (docs/performance.md).
"""
import csv
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
DTYPES = ["fp32", "bf16", "fp16", "fp64"]
COMMAND = "bash bench/run_all.sh OUT build/bench"


def load():
    """{gpu short name: rows} for every bench/results/<gpu>.csv."""
    results = {}
    for path in sorted((root / "bench" / "results").glob("*.csv")):
        with open(path, newline="") as f:
            results[path.stem] = list(csv.DictReader(f))
    return results


def provenance(rows, modes):
    """One line: GPU, driver, CUDA, the trees and dates of the modes' rows, the command."""
    picked = [r for r in rows if r["mode"] in modes]
    trees = sorted({r["commit"] for r in picked})
    dates = sorted({r["date"] for r in picked})
    first = picked[0]
    return (f"{first['gpu']}, driver {first['driver']}, CUDA {first['cuda']}; "
            f"tree {', '.join(trees)}; {', '.join(dates)}; `{COMMAND}` "
            f"(`bench/results/{short(first)}.csv`).")


def short(row):
    words = [w for w in row["gpu"].lower().split() if w != "nvidia"]
    return re.sub(r"[^a-z0-9_-]", "", words[0]) if words else "gpu"


def pivot(rows, mode, column, dtypes):
    """A table: one line per op (in the CSV's order), one column per dtype."""
    picked = [r for r in rows if r["mode"] == mode]
    dtypes = [d for d in dtypes if any(r["dtype"] == d for r in picked)]
    ops = list(dict.fromkeys(r["op"] for r in picked))
    cell = {(r["op"], r["dtype"]): r[column] or "-" for r in picked}
    lines = ["| op | " + " | ".join(dtypes) + " |", "|---" * (len(dtypes) + 1) + "|"]
    for op in ops:
        lines.append(f"| {op} | " + " | ".join(cell.get((op, d), "") for d in dtypes) + " |")
    return lines


def pivot_pair(rows, mode, dtypes):
    """One line per op, `x memcpy / x CUB` per dtype."""
    picked = [r for r in rows if r["mode"] == mode]
    dtypes = [d for d in dtypes if any(r["dtype"] == d for r in picked)]
    ops = list(dict.fromkeys(r["op"] for r in picked))
    cell = {(r["op"], r["dtype"]): f"{r['x_memcpy']} / {r['x_cub'] or '-'}" for r in picked}
    lines = ["| op | " + " | ".join(dtypes) + " |", "|---" * (len(dtypes) + 1) + "|"]
    for op in ops:
        lines.append(f"| {op} | " + " | ".join(cell.get((op, d), "") for d in dtypes) + " |")
    return lines


def summary(results):
    lines = ["| GPU | mode | dtype | rows | min x memcpy | min x CUB | rows below CUB |",
             "|---|---|---|---|---|---|---|"]
    for gpu, rows in results.items():
        for mode in dict.fromkeys(r["mode"] for r in rows):
            for dtype in DTYPES:
                picked = [r for r in rows if r["mode"] == mode and r["dtype"] == dtype]
                if not picked:
                    continue
                low = min(picked, key=lambda r: float(r["x_memcpy"]))
                cub = [r for r in picked if r["x_cub"]]
                low_cub = min(cub, key=lambda r: float(r["x_cub"])) if cub else None
                below = sum(float(r["x_cub"]) < 1.0 for r in cub)
                lines.append(
                    f"| {gpu} | {mode} | {dtype} | {len(picked)} | {low['x_memcpy']} ({low['op']}) | "
                    + (f"{low_cub['x_cub']} ({low_cub['op']})" if low_cub else "-")
                    + f" | {below} of {len(cub)} |")
    return lines


def sections(results):
    out = {"summary": summary(results)}
    for gpu, rows in results.items():
        for mode in ("headline", "family", "user", "corpus"):
            if not any(r["mode"] == mode for r in rows):
                continue
            table = pivot(rows, mode, "x_memcpy", DTYPES) if mode == "headline" else \
                pivot_pair(rows, mode, DTYPES)
            note = ("x memcpy per dtype" if mode == "headline"
                    else "x memcpy / x CUB per dtype")
            out[f"{mode}-{gpu}"] = [f"{provenance(rows, {mode})} Cells: {note}.", ""] + table
        if gpu == "h200":
            rows_h = [r for r in rows if r["mode"] == "headline"]
            out["readme-h200"] = (
                [f"{provenance(rows, {'headline'})} Speed over a device-to-device copy of the "
                 "same bytes (1.000 = the copy ceiling):", ""]
                + pivot(rows_h, "headline", "x_memcpy", DTYPES))
    return out


def fill(text, generated, path):
    def replace(m):
        name = m.group(1)
        if name not in generated:  # e.g. a run without --user: say so rather than fail
            generated[name] = [f"(no rows for this table in bench/results/*.csv)"]
        return f"<!-- generated: {name} -->\n" + "\n".join(generated[name]) + "\n<!-- end generated -->"

    return re.sub(r"<!-- generated: (\S+) -->\n.*?<!-- end generated -->", replace, text, flags=re.S)


def main():
    generated = sections(load())
    stale = []
    for path in (root / "README.md", root / "docs" / "performance.md"):
        old = path.read_text()
        new = fill(old, generated, path.relative_to(root))
        if new != old:
            stale.append(str(path.relative_to(root)))
            if "--check" not in sys.argv[1:]:
                path.write_text(new)
    if "--check" in sys.argv[1:]:
        if stale:
            print(f"generated tables out of date in {', '.join(stale)}; run tools/gen_performance.py")
            sys.exit(1)
        print("generated performance tables match bench/results/*.csv")


if __name__ == "__main__":
    main()
