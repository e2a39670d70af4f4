#!/usr/bin/env python3
"""The README's results table and chart, made from one run of the tour, and checked against it.

    results_table.py RUN.json [--save COPY.json] [--write README.md] [--chart PNG] [--print]
    results_table.py --check README.md

RUN.json is the tour's `tour.json` (scripts/tour.sh: every stage's `--json` report, in one array),
and beside it RUN.meta.json, the tour's `tour.meta.json`: the GPU, driver, toolkit, date, commit and
command of the run, and each stage's arguments, "what changed" and outcome. The table has one row
per stage of the tour, its headline (default) variant at the size the tour runs it: size, median
time, rate, its percentage of the library measured in the same process (cuBLAS, cudaMemcpy,
cublasSdot), and its speed-up over the stage before it in the matrix-product track, given only
where both ran the same problem.

--save COPY.json   copies RUN.json and RUN.meta.json to COPY.json and COPY.meta.json (under
                   docs/results/, where the README's table names it) and uses the copy from then on
--write README.md  writes the table between the README's `<!-- results-table: ... -->` and
                   `<!-- /results-table -->` lines; the first names the run's JSON (and the chart)
                   relative to the README, which is what --check reads back
--chart PNG        draws the chart of the same run (scripts/plot_tour.py; needs matplotlib) with
                   the run's JSON and its checksum stored in the PNG, and puts it under the table
--print            prints the block
--check README.md  exit 0 when the README's block is what its run gives (and its chart was drawn
                   from that run), 1 when not (the difference is shown); 77 when the block is still
                   the placeholder that names no run

A run in which a stage failed, or a --quick run (small sizes, to test the tour), makes no table.
Exit status: 0 done, 1 a check failed or the run makes no table, 2 bad usage or a missing file, 77
(--check) no run named yet. Only the standard library is used, but for --chart.
"""
import argparse
import difflib
import hashlib
import json
import os
import re
import shutil
import struct
import sys
import zlib

START = re.compile(r"^<!-- results-table: (\S+)(?: (\S+))? -->$")
END = "<!-- /results-table -->"
NO_RUN = "none"
# What the block says while no run is named (a repository without a run of its own yet).
PLACEHOLDER = (
    "*The results table goes here: `scripts/results_table.py` writes it from one run of the tour,\n"
    "named in its caption (GPU, date, commit, command), and the test `docs.readme_results_current`\n"
    "checks it against that run.*"
)
# The yardsticks' names as a reader knows them.
LIBRARIES = {"memcpy": "cudaMemcpy", "cublasSdot": "cublasSdot"}
SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
PNG_KEY = "cuda-stages run"


class Refused(Exception):
    """The run cannot make a table (exit 1)."""


class Usage(Exception):
    """Bad usage or a missing file (exit 2)."""


def meta_path(run):
    """RUN.json -> RUN.meta.json."""
    stem = run[:-len(".json")] if run.endswith(".json") else run
    return stem + ".meta.json"


def load(run):
    """(reports, meta, checksum) of a run; the checksum covers both files."""
    paths = (run, meta_path(run))
    for path in paths:
        if not os.path.isfile(path):
            raise Usage(f"{path} not found (the tour writes tour.json and tour.meta.json side by side)")
    raw = []
    for path in paths:
        with open(path, "rb") as f:
            raw.append(f.read())
    try:
        reports, meta = (json.loads(data.decode("utf-8")) for data in raw)
    except ValueError as error:
        raise Usage(f"{run}: not JSON: {error}") from None
    if not isinstance(reports, list) or not isinstance(meta, dict) or "stages" not in meta:
        raise Usage(f"{run}: not a tour's tour.json and tour.meta.json")
    return reports, meta, hashlib.sha256(raw[0] + raw[1]).hexdigest()


def size_text(sizes):
    """4096x4096x4096 -> 4096³, 8192x8192 -> 8192², 268435456 -> 2²⁸, 4096x4096x512 as it is."""
    parts = sizes.split("x")
    if len(parts) > 1 and len(set(parts)) == 1:
        return parts[0] + str(len(parts)).translate(SUPERSCRIPTS)
    if len(parts) == 1 and parts[0].isdigit():
        n = int(parts[0])
        if n >= 1024 and n & (n - 1) == 0:
            return "2" + str(n.bit_length() - 1).translate(SUPERSCRIPTS)
    return " x ".join(parts)


def rate_text(rate):
    """Four significant digits, whole numbers from 10000 up (as the tour prints them)."""
    return f"{rate:.0f}" if rate >= 10000 else f"{rate:.4g}"


def library_name(report):
    name = report.get("yardstick") or ""
    if name == "cuBLAS":
        return "cuBLAS bf16" if report.get("inputs") == "bf16" else "cuBLAS FP32"
    return LIBRARIES.get(name, name)


def headline(report):
    for variant in report.get("variants", []):
        if variant.get("name") == report.get("headline") and not variant.get("yardstick"):
            return variant
    raise Refused(f"{report.get('stage')}: no headline variant '{report.get('headline')}' in its report")


def short(stage):
    return stage[:2] if stage[:2].isdigit() else stage


def cell(text):
    return str(text).replace("|", "\\|")


def table(reports, meta):
    """The table's lines, and the reasons of the stages that did not run."""
    if meta.get("quick"):
        raise Refused("this is a --quick tour (small sizes, to test the tour): it measures nothing to tabulate")
    by_stage = {}
    for report in reports:
        by_stage[report.get("stage")] = report
    lines = ["| stage | what changed | size | median ms | rate | against the library | against the stage before |",
             "|---|---|---|---:|---:|---|---|"]
    not_run = {}
    previous = None  # (stage, sizes, rate) of the last matrix-product stage
    listed = set()
    for entry in meta["stages"]:
        stage, status = entry["stage"], entry["status"]
        listed.add(stage)
        link = f"[{stage}]({stage}/README.md)"
        if status in ("skipped", "not built"):
            reason = entry.get("reason") or status
            not_run.setdefault(reason, []).append(short(stage))
            lines.append(f"| {link} | {cell(entry['changed'])} | — | — | not run | — | — |")
            previous = (stage, None, None)  # the next stage has nothing to compare with
            continue
        if status != "ran" or stage not in by_stage:
            raise Refused(f"{stage} {status if status != 'ran' else 'has no report'}"
                          f"{': ' + entry['reason'] if entry.get('reason') else ''}: a run with a failed stage makes no table")
        report = by_stage[stage]
        if report.get("result") != "PASS":
            raise Refused(f"{stage}: its result is {report.get('result')}: a run with a failed stage makes no table")
        variant = headline(report)
        unit = report.get("unit", "")
        rate = variant.get("rate")
        pct = variant.get("pct_yardstick")
        library = library_name(report)
        against_library = f"{pct:.1f}% of {library}" if pct is not None and library else "—"
        against_before = "—"
        if unit == "GFLOP/s":
            if previous is not None:
                before, before_sizes, before_rate = previous
                if before_rate is None:
                    against_before = f"— ({short(before)} did not run)"
                elif before_sizes != report["sizes"]:
                    against_before = f"— ({short(before)} ran at {size_text(before_sizes)})"
                elif rate is not None:
                    against_before = f"{rate / before_rate:.2f}x {short(before)}"
            previous = (stage, report["sizes"], rate)
        else:
            against_before = "— (another problem)"
        ms = variant.get("median_ms")
        lines.append(f"| {link} | {cell(entry['changed'])} | {size_text(report['sizes'])} | "
                     f"{'—' if ms is None else f'{ms:.4g}'} | "
                     f"{'—' if rate is None else rate_text(rate) + ' ' + unit} | {against_library} | {against_before} |")
    for stage in by_stage:
        if stage not in listed:
            raise Usage(f"{stage} has a report but the run's meta file does not list it")
    return lines, not_run


def caption(meta, run_link):
    gpu = meta.get("gpu") or "an unnamed GPU"
    details = []
    if meta.get("compute_capability"):
        details.append(f"compute capability {meta['compute_capability']}")
    if meta.get("sms") and meta.get("sm_clock_mhz"):
        details.append(f"{meta['sms']} SMs at {meta['sm_clock_mhz']} MHz")
    stack = []
    if meta.get("driver"):
        stack.append(f"driver {meta['driver']}")
    if meta.get("cuda"):
        stack.append(f"CUDA {meta['cuda']}")
    where = f"**{gpu}**" + (f" ({', '.join(details)})" if details else "")
    if stack:
        where += ", " + ", ".join(stack)
    commit = f"commit `{meta['commit'][:7]}`" if meta.get("commit") else "no commit recorded"
    if meta.get("tree") == "modified":
        commit += " with changes not committed"
    date = meta.get("date", "")[:10] or "an unrecorded date"
    return (f"One run of the tour. GPU: {where}. Run on {date} from {commit} by "
            f"`{meta.get('command', '?')}`; its reports: [{run_link}]({run_link}).")


def block(run, readme, chart):
    """The block's lines, from its first marker to its last, for a README at `readme`."""
    reports, meta, checksum = load(run)
    here = os.path.dirname(os.path.abspath(readme))
    run_link = os.path.relpath(os.path.abspath(run), here)
    chart_link = os.path.relpath(os.path.abspath(chart), here) if chart else None
    rows, not_run = table(reports, meta)
    lines = [f"<!-- results-table: {run_link}{' ' + chart_link if chart_link else ''} -->",
             "<!-- written by scripts/results_table.py from the run it names: change the run, not the table -->",
             caption(meta, run_link), ""] + rows
    if not_run:
        lines.append("")
        for reason, stages in not_run.items():
            lines.append(f"Not run: {', '.join(stages)} ({reason}).")
    if chart_link:
        gpu = meta.get("gpu") or "the GPU"
        lines += ["", f"![The same run on {gpu}: the rate of every stage's default variant and of the "
                      f"libraries measured beside them]({chart_link})"]
    lines.append(END)
    return lines, checksum


def find_block(lines, readme):
    """(first, last) line indexes of the block."""
    starts = [i for i, line in enumerate(lines) if START.match(line)]
    ends = [i for i, line in enumerate(lines) if line == END]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise Usage(f"{readme}: expected one '<!-- results-table: <run.json> [<chart.png>] -->' line and one "
                    f"'{END}' line after it, found {len(starts)} and {len(ends)}")
    return starts[0], ends[0]


def png_text(path):
    """The tEXt entries of a PNG, as a dict."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise Refused(f"{path} is not a PNG")
    entries, at = {}, 8
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"tEXt" and b"\0" in body:
            key, _, value = body.partition(b"\0")
            entries[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"zTXt" and b"\0" in body:
            key, _, value = body.partition(b"\0")
            entries[key.decode("latin-1")] = zlib.decompress(value[1:]).decode("latin-1")
        at += 12 + length
    return entries


def draw(run, chart, readme):
    """Draws the chart of the run with scripts/plot_tour.py, its source and checksum stored in it."""
    try:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import plot_tour  # noqa: E402 (matplotlib is optional: only --chart needs it)
    except ImportError as error:
        raise Usage(f"--chart needs matplotlib ({error}): install it (Debian: apt install python3-matplotlib), "
                    f"or run this script with a python3 that has it") from None
    reports, meta, checksum = load(run)
    skipped = [f"{entry['stage']}|{entry.get('reason') or entry['status']}" for entry in meta["stages"]
               if entry["status"] in ("skipped", "not built")]
    gpu = meta.get("gpu") or "an unnamed GPU"
    title = f"cuda-stages tour: {gpu}, {meta.get('date', '')[:10]}"
    if meta.get("commit"):
        title += f", commit {meta['commit'][:7]}"
    here = os.path.dirname(os.path.abspath(readme)) if readme else os.getcwd()
    source = f"{os.path.relpath(os.path.abspath(run), here)} sha256:{checksum}"
    os.makedirs(os.path.dirname(os.path.abspath(chart)), exist_ok=True)
    if plot_tour.main(run, chart, skipped, title=title, metadata={PNG_KEY: source}) != 0:
        raise Refused(f"the chart of {run} could not be drawn")


def check(readme):
    if not os.path.isfile(readme):
        raise Usage(f"{readme} not found")
    with open(readme, encoding="utf-8") as f:
        lines = f.read().split("\n")
    first, last = find_block(lines, readme)
    match = START.match(lines[first])
    run_link, chart_link = match.group(1), match.group(2)
    here = os.path.dirname(os.path.abspath(readme))
    if run_link == NO_RUN:
        print(f"SKIP: {readme}'s results block names no run yet (<!-- results-table: none -->): write it with "
              f"scripts/results_table.py <run>.json --write {readme}")
        return 77
    run = os.path.join(here, run_link)
    chart = os.path.join(here, chart_link) if chart_link else None
    expected, checksum = block(run, readme, chart)
    found = lines[first:last + 1]
    if found != expected:
        print(f"FAIL: {readme}'s results table is not what {run_link} gives; regenerate it with\n"
              f"  python3 scripts/results_table.py {run_link} --write {readme}"
              f"{' --chart ' + chart_link if chart_link else ''}\n(- in {readme}, + from the run)")
        sys.stdout.writelines(difflib.unified_diff([line + "\n" for line in found],
                                                   [line + "\n" for line in expected], readme, run_link, n=0))
        return 1
    if chart:
        if not os.path.isfile(chart):
            print(f"FAIL: {readme} shows {chart_link}, which does not exist")
            return 1
        stored = png_text(chart).get(PNG_KEY)
        wanted = f"{run_link} sha256:{checksum}"
        if stored != wanted:
            print(f"FAIL: {chart_link} was not drawn from {run_link} as it is now "
                  f"(the chart says '{stored}', the run is '{wanted}'): draw it again with --chart")
            return 1
    print(f"ok: {readme}'s results table{' and chart' if chart else ''} {'match' if chart else 'matches'} {run_link} "
          f"({len(expected)} lines)")
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description="The README's results table and chart from one tour run.")
    parser.add_argument("run", nargs="?", help="the tour's tour.json (tour.meta.json beside it)")
    parser.add_argument("--save", metavar="COPY.json", help="copy the run (and its meta file) here first")
    parser.add_argument("--write", metavar="README.md", help="write the table into this file's results block")
    parser.add_argument("--chart", metavar="PNG", help="draw the run's chart here and show it under the table")
    parser.add_argument("--print", action="store_true", help="print the block")
    parser.add_argument("--check", metavar="README.md", help="check this file's results block against its run")
    args = parser.parse_args(argv)
    try:
        if args.check:
            if args.run or args.save or args.write or args.chart or args.print:
                raise Usage("--check takes the README alone")
            return check(args.check)
        if not args.run:
            raise Usage("no run given (see --help)")
        if not (args.save or args.write or args.chart or args.print):
            raise Usage("nothing to do: give --save, --write, --chart or --print")
        run = args.run
        load(run)
        if args.save:
            if not args.save.endswith(".json"):
                raise Usage("--save takes a path ending in .json")
            os.makedirs(os.path.dirname(os.path.abspath(args.save)), exist_ok=True)
            shutil.copyfile(run, args.save)
            shutil.copyfile(meta_path(run), meta_path(args.save))
            print(f"saved: {args.save}, {meta_path(args.save)}")
            run = args.save
        readme = args.write or "README.md"
        lines, _ = block(run, readme, args.chart)  # refuses a run that makes no table before drawing
        if args.chart:
            draw(run, args.chart, readme)
            print(f"chart: {args.chart}")
        if args.write:
            if not os.path.isfile(args.write):
                raise Usage(f"{args.write} not found")
            with open(args.write, encoding="utf-8") as f:
                text = f.read().split("\n")
            first, last = find_block(text, args.write)
            text[first:last + 1] = lines
            with open(args.write, "w", encoding="utf-8") as f:
                f.write("\n".join(text))
            print(f"written: the results table of {args.write}, from {run}")
        if args.print:
            print("\n".join(lines))
        return 0
    except Refused as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except Usage as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
