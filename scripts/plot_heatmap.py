#!/usr/bin/env python3
"""Heat maps of the size sweep's shapes: sweep.csv in (written by scripts/sweep.sh), a PNG out.
Optional: the sweep calls it only when python3 with matplotlib is installed and shapes were swept.

One row of panels per stage, each cell a shape m x n x k, its colour and its number the stage's %
of cuBLAS (the stage against the cuBLAS run of its own process; 100 is white, slower is red,
faster is blue):
  short A     m of at most 512 rows (a batch of tokens), by rows, against n x k;
  narrow C    n of at most 512 columns, by columns, against m x k;
  the others  squares, short and long K, odd sizes: one strip, in the order swept.
A run that failed its check, was skipped or broke has an empty cell marked with its verdict.
Usage: plot_heatmap.py sweep.csv heatmap.png [stage ...]  (default: every stage in the CSV)
"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import TwoSlopeNorm  # noqa: E402

SKINNY = 512  # at most this many rows of A (or columns of C) make a shape "short A" ("narrow C")


def family(m, n, k):
    """Which panel a shape goes in: (panel, row label, column label)."""
    if m <= SKINNY < min(n, k):
        return "short A", f"m = {m}", f"{n} x {k}"
    if n <= SKINNY < min(m, k):
        return "narrow C", f"n = {n}", f"{m} x {k}"
    return "others", "", f"{m}x{n}x{k}" if len({m, n, k}) > 1 else f"{m}³"


def sorted_labels(labels):
    """Row and column labels in numeric order, by the numbers in them ("m = 64", "4096 x 14336")."""
    def numbers(label):
        return [int(t) for t in label.replace("=", " ").replace("x", " ").split() if t.isdigit()]
    return sorted(labels, key=numbers)


def main(source, target, only):
    with open(source, newline="") as f:
        rows = [r for r in csv.DictReader(f) if "x" in r["size"]]
    stages = [s for s in dict.fromkeys(r["stage"] for r in rows) if not only or s in only]
    if not rows or not stages:
        print("heat map: no shapes MxNxK in the sweep", file=sys.stderr)
        return 1
    panels = ("short A", "narrow C", "others")
    layout = {p: ([], []) for p in panels}  # panel -> (row labels, column labels), in order
    cells = {}  # (stage, panel, row, column) -> (% of cuBLAS or None, verdict)
    for r in rows:
        m, n, k = (int(v) for v in r["size"].split("x"))
        panel, row, column = family(m, n, k)
        row_labels, column_labels = layout[panel]
        if row not in row_labels:
            row_labels.append(row)
        if column not in column_labels:
            column_labels.append(column)
        pct = float(r["pct_cublas"]) if r["pct_cublas"] and r["result"] == "PASS" else None
        cells[(r["stage"], panel, row, column)] = (pct, r["result"] or "-")
    for panel in ("short A", "narrow C"):
        layout[panel] = (sorted_labels(layout[panel][0]), sorted_labels(layout[panel][1]))
    used = [p for p in panels if layout[p][1]]
    widths = [len(layout[p][1]) for p in used]
    norm = TwoSlopeNorm(vmin=40, vcenter=100, vmax=160)
    fig, axes = plt.subplots(len(stages), len(used), squeeze=False,
                             figsize=(2.0 + 1.1 * sum(widths), 1.2 + 3.4 * len(stages)),
                             gridspec_kw={"width_ratios": widths, "hspace": 0.75})
    image = None
    for i, stage in enumerate(stages):
        values = [c[0] for (s, _, _, _), c in cells.items() if s == stage and c[0]]
        geomean = math.exp(sum(math.log(v) for v in values) / len(values)) if values else None
        for j, panel in enumerate(used):
            ax = axes[i][j]
            row_labels, column_labels = layout[panel]
            grid = [[float("nan")] * len(column_labels) for _ in row_labels]
            for a, row in enumerate(row_labels):
                for b, column in enumerate(column_labels):
                    pct, verdict = cells.get((stage, panel, row, column), (None, ""))
                    if pct is not None:
                        grid[a][b] = pct
                        text, colour = f"{pct:.0f}", "black"
                    else:
                        text, colour = (verdict or "").lower(), "dimgray"
                    ax.text(b, a, text, ha="center", va="center", fontsize=9, color=colour)
            image = ax.imshow(grid, cmap="RdBu", norm=norm, aspect="auto")
            ax.set_xticks(range(len(column_labels)))
            ax.set_xticklabels(column_labels, rotation=35, ha="right", fontsize=8)
            ax.set_yticks(range(len(row_labels)))
            ax.set_yticklabels(row_labels, fontsize=9)
            title = {"short A": "short A: m against n x k", "narrow C": "narrow C: n against m x k",
                     "others": "squares, short and long K, odd sizes"}[panel]
            ax.set_title(title, fontsize=10)
            if j == 0:
                summary = f"geometric mean {geomean:.0f}%" if geomean else "no run passed"
                ax.set_ylabel(f"{stage}\n({summary})", fontsize=10)
    fig.suptitle("% of cuBLAS (bf16 in, FP32 sums) by shape m x n x k: blue faster, red slower", fontsize=12)
    fig.colorbar(image, ax=axes, shrink=0.8, label="% of cuBLAS")
    fig.savefig(target, dpi=100, bbox_inches="tight")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: plot_heatmap.py sweep.csv heatmap.png [stage ...]")
    sys.exit(main(sys.argv[1], sys.argv[2], set(sys.argv[3:])))
