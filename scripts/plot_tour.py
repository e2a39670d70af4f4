#!/usr/bin/env python3
"""Plots the tour's results: tour.json in, a PNG out. Optional: the tour calls it only when
python3 with matplotlib is installed.

Left: GFLOP/s of the matrix-multiply stages (01-04) against cuBLAS, log scale.
Middle and right: bandwidth of the transpose and dot-product variants against their ceilings
(cudaMemcpy device-to-device, cublasSdot) and the device's theoretical peak.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def bars(ax, labels, values, colors, title, unit, log=False, peak=None):
    positions = range(len(labels))
    ax.bar(positions, values, color=colors)
    ax.set_xticks(list(positions))
    ax.set_xticklabels(labels, rotation=40, ha="right", fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.set_ylabel(unit)
    if log:
        ax.set_yscale("log")
    if peak:
        ax.axhline(peak, color="gray", linestyle="--", linewidth=1)
        ax.text(len(labels) - 0.5, peak, "theoretical peak", ha="right", va="bottom", fontsize=7,
                color="gray")
    for x, v in zip(positions, values):
        ax.text(x, v, f"{v:,.0f}", ha="center", va="bottom", fontsize=7)


def main(source, target):
    with open(source) as f:
        stages = {s["stage"]: s for s in json.load(f)}
    panels = []
    matmul = [s for s in ("01_cpu_matmul", "02_naive_kernel", "03_multiblock", "04_shared_tiled")
              if s in stages]
    if matmul:
        labels, values, colors = [], [], []
        yardstick = None
        for name in matmul:
            for v in stages[name]["variants"]:
                if v["yardstick"]:
                    yardstick = v
                elif v["rate"] is not None:
                    labels.append(f"{name[:2]} {v['name']}\n{stages[name]['sizes'].split('x')[0]}³")
                    values.append(v["rate"])
                    colors.append("tab:blue")
        if yardstick is not None:
            labels.append("cuBLAS")
            values.append(yardstick["rate"])
            colors.append("tab:orange")
        if yardstick is not None:
            labels[-1] += f"\n{stages[matmul[-1]]['sizes'].split('x')[0]}³"
        panels.append((labels, values, colors, "Matrix multiply (log scale)", "GFLOP/s", True, None))
    for name, title in (("05_transpose", "Transpose"), ("06_dot_reduction", "Dot product")):
        if name not in stages:
            continue
        s = stages[name]
        labels = [v["name"] for v in s["variants"] if v["rate"] is not None]
        values = [v["rate"] for v in s["variants"] if v["rate"] is not None]
        colors = ["tab:orange" if v["yardstick"] else "tab:green" for v in s["variants"]
                  if v["rate"] is not None]
        peak = None
        for v in s["variants"]:
            if v["rate"] and v["pct_peak"]:
                peak = v["rate"] / (v["pct_peak"] / 100.0)
                break
        panels.append((labels, values, colors, f"{title}, {s['sizes']}", "GB/s", False, peak))
    if not panels:
        print("plot: nothing to plot", file=sys.stderr)
        return 1
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.6))
    if len(panels) == 1:
        axes = [axes]
    for ax, panel in zip(axes, panels):
        bars(ax, *panel)
    fig.suptitle("cuda-stages tour (orange: the library yardstick, measured in the same run)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: plot_tour.py tour.json tour.png")
    sys.exit(main(sys.argv[1], sys.argv[2]))
