#!/usr/bin/env python3
"""Plots the tour's results: tour.json in, a PNG out. Optional: the tour calls it only when
python3 with matplotlib is installed.

Left: GFLOP/s of the matrix-multiply stages (every stage whose unit is GFLOP/s, in tour order)
against the last one's yardstick (cuBLAS), log scale. Then one panel per bandwidth stage (GB/s):
its variants against their ceilings (cudaMemcpy device-to-device, cublasSdot) and the device's
theoretical peak. The title names the colours drawn, when there are several; the stages that did not run (each
--skipped "STAGE|REASON", as the tour passes them) are named under the plot with their reason.

usage: plot_tour.py tour.json tour.png [--skipped "STAGE|REASON"]... [--title TEXT]

scripts/results_table.py calls main() to draw the README's chart, with a title that names the run
and the run's checksum stored in the PNG (metadata), which its --check reads back.
"""
import argparse
import json
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator  # noqa: E402

# What each bar colour stands for, named in the title only when such a bar is drawn.
COLORS = {
    "tab:blue": "blue: matrix-multiply variants",
    "tab:purple": "purple: the same on the tensor cores (bf16 in, FP32 sums)",
    "tab:green": "green: bandwidth variants",
    "tab:orange": "orange: the library yardstick, measured in the same run",
}
# Panel titles of the bandwidth stages; a stage not named here is titled by its directory name.
TITLES = {"05_transpose": "Transpose", "06_dot_reduction": "Dot product"}


def value_text(v):
    """A bar's value: whole numbers with separators from 100 up, three significant digits below."""
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def bars(ax, labels, values, colors, title, unit, log=False, peak=None):
    positions = range(len(labels))
    ax.bar(positions, values, color=colors)
    ax.set_xticks(list(positions))
    ax.set_xticklabels(labels, rotation=40, ha="right", fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.set_ylabel(unit)
    top = max(values + ([peak] if peak else []))
    if log:
        ax.set_yscale("log")
        # Plain numbers on the axis; 1-2-5 steps when the bars span less than three decades.
        span = top / min(values)
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0,) if span > 1000 else (1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:,g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda y, _: ""))
        ax.set_ylim(min(values) / 1.5, top * 2.0)  # room for the value above the tallest bar
    else:
        ax.set_ylim(0, top * 1.12)
    if peak:
        ax.axhline(peak, color="gray", linestyle="--", linewidth=1)
        ax.text(len(labels) - 0.5, peak, "theoretical peak", ha="right", va="bottom", fontsize=7,
                color="gray")
    for x, v in zip(positions, values):
        ax.text(x, v, value_text(v), ha="center", va="bottom", fontsize=7)


def stage_list(stages):
    """Stages by number, consecutive ones as a range: "stages 02-06, 08"; by name when unnumbered."""
    numbers = [s[:2] for s in stages]
    if not all(n.isdigit() for n in numbers):
        return ", ".join(stages)
    runs = []
    for n in numbers:
        if runs and int(n) == int(runs[-1][1]) + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    text = ", ".join(first if first == last else f"{first}-{last}" for first, last in runs)
    return ("stage " if len(stages) == 1 else "stages ") + text


def skipped_note(skipped, width):
    """The stages that did not run, grouped by the reason they gave, wrapped to width characters."""
    reasons = {}
    for entry in skipped:
        stage, _, reason = entry.partition("|")
        reasons.setdefault(reason or "no reason given", []).append(stage)
    lines = []
    for reason, stages in reasons.items():
        text = f"Not run here, {stage_list(stages)}: {reason}"
        lines += textwrap.wrap(text, width, subsequent_indent="    ")
    return "\n".join(lines)


def main(source, target, skipped, title="cuda-stages tour", metadata=None):
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
                    colors.append("tab:purple" if s.get("inputs") == "bf16" else "tab:blue")
        # The library bars: for each element type (FP32; bf16 for the tensor-core stages), the
        # yardstick of the last stage of that type that measured one at the size most of them ran
        # (stage 22 runs at 4099³, where cuBLAS is another library: the bar shows it at 4096³).
        for inputs in ("fp32", "bf16"):
            sizes = [s["sizes"] for s in matmul if s.get("inputs", "fp32") == inputs]
            usual = max(set(sizes), key=sizes.count) if sizes else None
            for s in reversed(matmul):
                if s.get("inputs", "fp32") != inputs or s["sizes"] != usual:
                    continue
                yardstick = next((v for v in s["variants"] if v["yardstick"] and v["rate"] is not None), None)
                if yardstick is not None:
                    name = yardstick["name"] + (" bf16" if inputs == "bf16" else " FP32")
                    labels.append(f"{name}\n{s['sizes'].split('x')[0]}³")
                    values.append(yardstick["rate"])
                    colors.append("tab:orange")
                    break
        if values:
            panels.append((labels, values, colors, "Matrix multiply (log scale)", "GFLOP/s", True, None))
    for s in stages:
        if s["unit"] != "GB/s":
            continue
        measured = [v for v in s["variants"] if v["rate"] is not None]
        if not measured:
            continue
        labels = [v["name"] for v in measured]
        values = [v["rate"] for v in measured]
        colors = ["tab:orange" if v["yardstick"] else "tab:green" for v in measured]
        peak = None
        for v in measured:
            if v["pct_peak"]:
                peak = v["rate"] / (v["pct_peak"] / 100.0)
                break
        name = TITLES.get(s["stage"], s["stage"])
        panels.append((labels, values, colors, f"{name}, {s['sizes']}", "GB/s", False, peak))
    if not panels:
        print("plot: nothing to plot", file=sys.stderr)
        return 1

    # Each panel as wide as its bars need (about 0.45 inch a bar, 3 inches at least); the figure
    # at least 7 inches, so that the title and the note fit.
    widths = [max(3.0, 0.45 * len(panel[0]) + 1.2) for panel in panels]
    fig_width = max(7.0, sum(widths))
    fig, axes = plt.subplots(1, len(panels), figsize=(fig_width, 4.8),
                             gridspec_kw={"width_ratios": widths}, squeeze=False)
    for ax, panel in zip(axes[0], panels):
        bars(ax, *panel)
    # The colours, named when there are several to tell apart.
    drawn = {color for panel in panels for color in panel[2]}
    legend = "; ".join(text for color, text in COLORS.items() if color in drawn)
    fig.suptitle(f"{title}\n{legend}" if len(drawn) > 1 else title, fontsize=10)
    chars = int(fig_width * 13)  # characters of 8-point text a line of the figure holds
    if skipped:
        note = skipped_note(skipped, chars)
        fig.text(0.01, 0.0, note, ha="left", va="top", fontsize=8, color="dimgray")
    fig.tight_layout()
    # bbox_inches="tight" grows the picture to whatever lies outside the axes: the title, the note.
    fig.savefig(target, dpi=110, bbox_inches="tight", pad_inches=0.15, metadata=metadata)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Plots the tour's results.")
    parser.add_argument("source", help="tour.json, written by scripts/tour.sh")
    parser.add_argument("target", help="the PNG to write")
    parser.add_argument("--skipped", action="append", default=[], metavar="STAGE|REASON",
                        help="a stage that did not run and the reason it gave (repeatable)")
    parser.add_argument("--title", default="cuda-stages tour", help="the chart's title")
    args = parser.parse_args()
    sys.exit(main(args.source, args.target, args.skipped, title=args.title))
