#!/usr/bin/env python3
"""Plot cuact_bench --sweep CSV output: GB/s against n, one line per contestant.

usage: python3 bench/plot.py sweep.csv sweep.png

One subplot per (operation, place) row and dtype column; memcpy (the copy ceiling) is drawn
dashed. Points whose row was flagged L2-resident are drawn hollow. A second figure next to the
first (sweep_ratio.png for sweep.png) shows cub and cuact as fractions of memcpy.
"""

import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")  # no display on the GPU machine
import matplotlib.pyplot as plt  # noqa: E402

DTYPES = ["fp32", "fp16", "bf16", "fp64"]
STYLE = {
    "memcpy": dict(color="black", linestyle="--", marker="s", label="cudaMemcpyAsync (ceiling)"),
    "cub": dict(color="tab:orange", linestyle="-", marker="^", label="cub::DeviceTransform"),
    "cuact": dict(color="tab:blue", linestyle="-", marker="o", label="cuact"),
}


def read(path):
    """{(op, place): {dtype: {contestant: [(n, gbps, ratio_memcpy, l2_resident)]}}}"""
    data = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["op"], row["place"])
            data[key][row["dtype"]][row["contestant"]].append(
                (int(row["n"]), float(row["gbps"]), float(row["ratio_memcpy"]), row["l2_resident"] == "1")
            )
    for by_dtype in data.values():
        for by_contestant in by_dtype.values():
            for points in by_contestant.values():
                points.sort()
    return data


def panel_order(data):
    """Forward rows (out of place, then in place) before backward rows, in a stable order."""
    def rank(key):
        op, place = key
        return (op.endswith("backward"), op, place != "out")

    return sorted(data.keys(), key=rank)


def draw(data, output, value_index, ylabel, title, include_memcpy):
    panels = panel_order(data)
    dtypes = [d for d in DTYPES if any(d in data[p] for p in panels)]
    dtypes += sorted({d for p in panels for d in data[p]} - set(dtypes))
    rows, cols = len(panels), len(dtypes)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False, sharex=True)
    for r, panel in enumerate(panels):
        for c, dtype in enumerate(dtypes):
            ax = axes[r][c]
            ax.set_xscale("log", base=2)
            ax.grid(True, which="major", alpha=0.3)
            by_contestant = data[panel].get(dtype, {})
            for contestant, style in STYLE.items():
                if contestant == "memcpy" and not include_memcpy:
                    continue
                points = by_contestant.get(contestant, [])
                if not points:
                    continue
                xs = [p[0] for p in points]
                ys = [p[value_index] for p in points]
                ax.plot(xs, ys, linewidth=1.2, markersize=3.5, **style)
                hollow = [(x, y) for (x, y, p) in zip(xs, ys, points) if p[3]]
                if hollow:
                    ax.plot([h[0] for h in hollow], [h[1] for h in hollow], linestyle="none",
                            marker=style["marker"], markersize=7, markerfacecolor="white",
                            markeredgecolor=style["color"])
            op, place = panel
            ax.set_title(f"{op} ({place}) {dtype}" if op in ("relu", "selu") else f"{op} {dtype}", fontsize=9)
            if c == 0:
                ax.set_ylabel(ylabel, fontsize=8)
            if r == rows - 1:
                ax.set_xlabel("n (elements)", fontsize=8)
            ax.tick_params(labelsize=7)
            if not include_memcpy:
                ax.axhline(1.0, color="black", linestyle="--", linewidth=0.8)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.9 / fig.get_figheight()))  # room for title and legend
    fig.suptitle(title, y=1 - 0.15 / fig.get_figheight(), fontsize=11)
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 1 - 0.45 / fig.get_figheight()),
                   ncol=len(handles), fontsize=9, frameon=False)
    fig.savefig(output, dpi=110)
    plt.close(fig)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 1
    source, output = argv[1], argv[2]
    data = read(source)
    if not data:
        print(f"plot.py: no rows in {source}", file=sys.stderr)
        return 1
    draw(data, output, 1, "GB/s (read + written)",
         "cuact sweep: GB/s vs n (hollow: L2-resident)", include_memcpy=True)
    stem, ext = os.path.splitext(output)
    ratio_output = f"{stem}_ratio{ext or '.png'}"
    draw(data, ratio_output, 2, "x memcpy GB/s",
         "cuact sweep: fraction of the copy ceiling (memcpy = 1)", include_memcpy=False)
    print(f"wrote {output} and {ratio_output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
