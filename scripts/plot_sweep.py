#!/usr/bin/env python3
"""Plots the size sweep: sweep.csv in (written by scripts/sweep.sh), a PNG out. Optional: the
sweep calls it only when python3 with matplotlib is installed.

GFLOP/s against the square size N (log2 axis), one line per matrix-multiply stage and one for
cuBLAS: at each size the median of the cuBLAS figures the stages measured in their own runs.
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
    library = {}  # size -> the cuBLAS figures measured at that size
    lines = []
    for stage in stages:
        points = []
        for r in rows:
            if r["stage"] != stage:
                continue
            size = int(r["size"])
            if number(r["cublas_gflops"]) is not None:
                library.setdefault(size, []).append(number(r["cublas_gflops"]))
            if r["result"] == "PASS" and number(r["gflops"]) is not None:
                points.append((size, number(r["gflops"])))
        if points:
            lines.append((stage, sorted(points)))
    if not lines:
        print("plot: nothing to plot", file=sys.stderr)
        return 1
    cublas = sorted((size, statistics.median(values)) for size, values in library.items())

    fig, ax = plt.subplots(figsize=(12, 6.5))  # 1200 x 650 pixels at 100 dpi
    colors = plt.get_cmap("tab10").colors
    series = [(stage, points, colors[i % len(colors)], "-") for i, (stage, points) in enumerate(lines)]
    if cublas:
        series.append(("cuBLAS (median of the stages' runs)", cublas, "black", "--"))
    for label, points, color, style in series:
        # The line runs through the powers of two; an odd size is a hollow marker beside it, so its
        # drop (ragged edges, misaligned rows) shows without zig-zagging the line.
        powers = [(s, g) for s, g in points if s & (s - 1) == 0]
        on_line = powers if len(powers) >= 2 else points
        ax.plot([s for s, _ in on_line], [g for _, g in on_line], style, marker="o", markersize=6,
                color=color, linewidth=2, label=label)
        odd = [(s, g) for s, g in points if (s, g) not in on_line]
        ax.plot([s for s, _ in odd], [g for _, g in odd], "o", markersize=7, color=color,
                markerfacecolor="white", markeredgewidth=1.5, linestyle="none")

    ax.set_xscale("log", base=2)
    all_sizes = sorted({s for _, points, _, _ in series for s, _ in points})
    # Label the powers of two only: 1000 and 1024 (or 4096 and 4099) would print on top of each other.
    ax.set_xticks([s for s in all_sizes if s & (s - 1) == 0])
    ax.get_xaxis().set_major_formatter(FuncFormatter(lambda x, _: f"{int(x)}"))
    ax.set_xlim(all_sizes[0] / 1.3, all_sizes[-1] * 1.3)
    ax.set_ylim(bottom=0)
    ax.get_yaxis().set_major_formatter(FuncFormatter(lambda y, _: f"{y:,.0f}"))
    ax.set_xlabel("N (C = A·B, all N × N, FP32); hollow markers: odd sizes (not powers of two)", fontsize=12)
    ax.set_ylabel("GFLOP/s (2N³ / median time)", fontsize=12)
    ax.set_title("Matrix multiply: each stage and cuBLAS across sizes", fontsize=14)
    ax.tick_params(labelsize=11)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", fontsize=10)
    fig.tight_layout()
    fig.savefig(target, dpi=100)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: plot_sweep.py sweep.csv sweep.png")
    sys.exit(main(sys.argv[1], sys.argv[2]))
