#!/usr/bin/env python3
"""Plots the size sweep: sweep.csv in (written by scripts/sweep.sh), a PNG out. Optional: the
sweep calls it only when python3 with matplotlib is installed.

GFLOP/s against the square size N (log2 axis; GFLOP/s on a log axis too when tensor-core stages are
in it, ten times faster than the FP32 ones), one line per matrix-multiply stage and one for cuBLAS
per element type (FP32 for the FP32 stages, bf16 for the tensor-core stages): at each size the
median of the cuBLAS figures those stages measured in their own runs.
Lines join the powers of two; odd sizes are hollow markers beside them. A run that failed its check, was
skipped or broke has no point.
"""
import csv
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402


def number(text):
    """The CSV field as a float, or None when it is empty."""
    return float(text) if text else None


def main(source, target):
    with open(source, newline="") as f:
        rows = list(csv.DictReader(f))
    stages = list(dict.fromkeys(r["stage"] for r in rows))  # in sweep order
    library = {}  # (inputs, size) -> the cuBLAS figures measured at that size by stages of those inputs
    inputs_of = {r["stage"]: r.get("inputs") or "fp32" for r in rows}
    lines = []
    for stage in stages:
        points = []
        for r in rows:
            if r["stage"] != stage:
                continue
            if not r["size"].isdigit():
                continue  # a shape MxNxK: in the tables, not on this axis of square sizes
            size = int(r["size"])
            if number(r["cublas_gflops"]) is not None:
                library.setdefault((inputs_of[stage], size), []).append(number(r["cublas_gflops"]))
            if r["result"] == "PASS" and number(r["gflops"]) is not None:
                points.append((size, number(r["gflops"])))
        if points:
            lines.append((stage, sorted(points)))
    if not lines:
        print("plot: nothing to plot", file=sys.stderr)
        return 1
    cublas = {}
    for (inputs, size), values in library.items():
        cublas.setdefault(inputs, []).append((size, statistics.median(values)))

    fig, ax = plt.subplots(figsize=(14, 6.5))  # 1400 x 650 pixels at 100 dpi: the legend sits to the right
    # The FP32 stages in one palette with round markers, the tensor-core stages in another with
    # square ones: the whole track (sixteen stages) has no two lines alike.
    palettes = {"fp32": plt.get_cmap("tab10").colors, "bf16": plt.get_cmap("Set1").colors}
    series, used = [], {"fp32": 0, "bf16": 0}
    for stage, points in lines:
        kind = "bf16" if inputs_of[stage] == "bf16" else "fp32"
        color = palettes[kind][used[kind] % len(palettes[kind])]
        used[kind] += 1
        series.append((stage, points, color, "-", "s" if kind == "bf16" else "o"))
    names = {"fp32": ("cuBLAS FP32 (median of the FP32 stages' runs)", "black"),
             "bf16": ("cuBLAS bf16 in, FP32 sums (median of the tensor-core stages' runs)", "dimgray")}
    for inputs in ("fp32", "bf16"):
        if inputs in cublas:
            label, color = names[inputs]
            series.append((label, sorted(cublas[inputs]), color, "--", "o"))
    tensor_cores = "bf16" in inputs_of.values()
    for label, points, color, style, marker in series:
        # The line runs through the powers of two; an odd size is a hollow marker beside it, so its
        # drop (ragged edges, misaligned rows) shows without zig-zagging the line.
        powers = [(s, g) for s, g in points if s & (s - 1) == 0]
        on_line = powers if len(powers) >= 2 else points
        ax.plot([s for s, _ in on_line], [g for _, g in on_line], style, marker=marker, markersize=6,
                color=color, linewidth=2, label=label)
        odd = [(s, g) for s, g in points if (s, g) not in on_line]
        ax.plot([s for s, _ in odd], [g for _, g in odd], marker, markersize=7, color=color,
                markerfacecolor="white", markeredgewidth=1.5, linestyle="none")

    ax.set_xscale("log", base=2)
    all_sizes = sorted({s for _, points, _, _, _ in series for s, _ in points})
    # Label the powers of two only: 1000 and 1024 (or 4096 and 4099) would print on top of each other.
    ax.set_xticks([s for s in all_sizes if s & (s - 1) == 0])
    ax.get_xaxis().set_major_formatter(FuncFormatter(lambda x, _: f"{int(x)}"))
    ax.set_xlim(all_sizes[0] / 1.3, all_sizes[-1] * 1.3)
    if tensor_cores:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.get_yaxis().set_major_formatter(FuncFormatter(lambda y, _: f"{y:,.0f}"))
    inputs_text = "FP32, or bf16 A and B with FP32 sums and C" if tensor_cores else "FP32"
    ax.set_xlabel(f"N (C = A·B, all N × N, {inputs_text}); hollow markers: odd sizes (not powers of two)",
                  fontsize=12)
    ax.set_ylabel("GFLOP/s (2N³ / median time)", fontsize=12)
    ax.set_title("Matrix multiply: each stage and cuBLAS across sizes", fontsize=14)
    ax.tick_params(labelsize=11)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, borderaxespad=0)
    fig.tight_layout()
    fig.savefig(target, dpi=100)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: plot_sweep.py sweep.csv sweep.png")
    sys.exit(main(sys.argv[1], sys.argv[2]))
