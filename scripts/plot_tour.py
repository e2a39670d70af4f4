#!/usr/bin/env python3
"""Plots the tour's results: tour.json in, a PNG out. Optional: the tour calls it only when
python3 with matplotlib is installed.

Left: GFLOP/s of the matrix-multiply stages (every stage whose unit is GFLOP/s, in tour order)
against the last one's yardstick (cuBLAS), log scale. Then one panel per bandwidth stage (GB/s):
its variants against their ceilings (cudaMemcpy device-to-device, cublasSdot) and the device's
theoretical peak.
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


# Panel titles of the bandwidth stages; a stage not named here is titled by its directory name.
TITLES = {"05_transpose": "Transpose", "06_dot_reduction": "Dot product"}


def main(source, target):
    with open(source) as f:
        stages = json.load(f)
    panels = []
    matmul = [s for s in stages if s["unit"] == "GFLOP/s"]
    if matmul:
        labels, values, colors = [], [], []
        for s in matmul:
            for v in s["variants"]:
                if not v["yardstick"] and v["rate"] is not None:
                    labels.append(f"{s['stage'][:2]} {v['name']}\n{s['sizes'].split('x')[0]}³")
                    values.append(v["rate"])
                    colors.append("tab:blue")
        # The library bar: the yardstick of the last stage that measured one.
        for s in reversed(matmul):
            yardstick = next((v for v in s["variants"] if v["yardstick"] and v["rate"] is not None), None)
            if yardstick is not None:
                labels.append(f"{yardstick['name']}\n{s['sizes'].split('x')[0]}³")
                values.append(yardstick["rate"])
                colors.append("tab:orange")
                break
        panels.append((labels, values, colors, "Matrix multiply (log scale)", "GFLOP/s", True, None))
    for s in stages:
        if s["unit"] != "GB/s":
            continue
        measured = [v for v in s["variants"] if v["rate"] is not None]
        labels = [v["name"] for v in measured]
        values = [v["rate"] for v in measured]
        colors = ["tab:orange" if v["yardstick"] else "tab:green" for v in measured]
        peak = None
        for v in measured:
            if v["pct_peak"]:
                peak = v["rate"] / (v["pct_peak"] / 100.0)
                break
        title = TITLES.get(s["stage"], s["stage"])
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
