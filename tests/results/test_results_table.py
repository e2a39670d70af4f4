#!/usr/bin/env python3
"""Tests of scripts/results_table.py, the README's results table, on a hand-written fixture.

fixture.tour.json and fixture.tour.meta.json are a made-up tour of eleven stages (round numbers, a
"Fixture GPU", the year 2000): a test fixture, not a measurement. They hold each case the table
must get right: a CPU stage at another size than the next, the two bandwidth stages, a stage that
did not run, and a last stage at another size than the one before.

    python3 tests/results/test_results_table.py      (CTest: docs.results_table_script)

The chart's cases need matplotlib: they run with the first python3 that has it (this one, or the
system's /usr/bin/python3, as the tour looks for it) and are skipped, saying so, without one.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "results_table.py")
RUN, META = "fixture.tour.json", "fixture.tour.meta.json"
PLACEHOLDER = "# A front page\n\nIntro.\n\n<!-- results-table: none -->\nThe table goes here.\n<!-- /results-table -->\n\nAfter.\n"


def python_with_matplotlib():
    for python in (sys.executable, "python3", "/usr/bin/python3"):
        if shutil.which(python) and subprocess.run([python, "-c", "import matplotlib"],
                                                   capture_output=True).returncode == 0:
            return python
    return None


MATPLOTLIB = python_with_matplotlib()


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write_file(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


class ResultsTable(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.dir, "docs", "results"))
        for name in (RUN, META):
            shutil.copy(os.path.join(HERE, name), os.path.join(self.dir, "docs", "results", name))
        self.readme = os.path.join(self.dir, "README.md")
        write_file(self.readme, PLACEHOLDER)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_script(self, *args, python=None):
        done = subprocess.run([python or sys.executable, SCRIPT, *args], cwd=self.dir, capture_output=True,
                              text=True)
        return done.returncode, done.stdout + done.stderr

    def write(self, *extra):
        code, out = self.run_script("docs/results/" + RUN, "--write", "README.md", *extra)
        self.assertEqual(code, 0, out)
        return read(self.readme)

    def edit(self, path, old, new):
        path = os.path.join(self.dir, path)
        text = read(path)
        self.assertIn(old, text)
        write_file(path, text.replace(old, new, 1))

    def meta(self, change):
        path = os.path.join(self.dir, "docs", "results", META)
        meta = json.loads(read(path))
        change(meta)
        write_file(path, json.dumps(meta, indent=2))

    def test_the_table(self):
        text = self.write()
        rows = [line for line in text.splitlines() if line.startswith("| [")]
        self.assertEqual(len(rows), 11, text)
        expected = {
            "01_cpu_matmul": "| 1000³ | 200 | 10 GFLOP/s | — | — |",
            # the CPU stage ran another problem: no ratio, and the row says why
            "02_naive_kernel": "| 4096³ | 20 | 5000 GFLOP/s | 10.0% of cuBLAS FP32 | — (01 ran at 1000³) |",
            "04_shared_tiled": "| 4096³ | 10 | 10000 GFLOP/s | 20.0% of cuBLAS FP32 | 2.00x 02 |",
            "05_transpose": "| 8192² | 0.25 | 2000 GB/s | 50.0% of cudaMemcpy | — (another problem) |",
            "06_dot_reduction": "| 2²⁸ | 0.5 | 4000 GB/s | 200.0% of cublasSdot | — (another problem) |",
            # the matrix-product track skips the two other problems: 07 against 04
            "07_register_tile_1d": "| 4096³ | 5 | 20000 GFLOP/s | 40.0% of cuBLAS FP32 | 2.00x 04 |",
            "13_tensor_cores": "| 4096³ | 0.5 | 300000 GFLOP/s | 40.0% of cuBLAS bf16 | 15.00x 07 |",
            "14_ldmatrix_swizzle": "| — | — | not run | — | — |",
            "15_wgmma": "| 4096³ | 0.25 | 600000 GFLOP/s | 80.0% of cuBLAS bf16 | — (14 did not run) |",
            "21_tma_store": "| 4096³ | 0.2 | 700000 GFLOP/s | 100.0% of cuBLAS bf16 | 1.17x 15 |",
            "22_unaligned_rows": "| 4099³ | 0.25 | 500000 GFLOP/s | 400.0% of cuBLAS bf16 | — (21 ran at 4096³) |",
        }
        for row in rows:
            stage = row[3:row.index("]")]
            self.assertTrue(row.endswith(expected.pop(stage)), row)
        self.assertEqual(expected, {})
        self.assertIn("| [02_naive_kernel](02_naive_kernel/README.md) | one GPU thread per element of C |", text)
        self.assertIn("Not run: 14 (fixture reason: this stage is marked skipped).", text)
        # the caption: GPU, driver, toolkit, date, commit, command, and the run's file
        for words in ("**Fixture GPU (not a measurement)** (compute capability 9.0, 100 SMs at 1000 MHz)",
                      "driver 000.00", "CUDA 0.0.0", "2000-01-01", "commit `0123456`",
                      "`scripts/tour.sh build/default results`",
                      "[docs/results/fixture.tour.json](docs/results/fixture.tour.json)"):
            self.assertIn(words, text)
        self.assertNotIn("not committed", text)
        # what lies outside the block is kept
        self.assertTrue(text.startswith("# A front page\n\nIntro.\n\n<!-- results-table: docs/results/fixture.tour.json -->\n"))
        self.assertTrue(text.endswith("<!-- /results-table -->\n\nAfter.\n"))
        code, out = self.run_script("--check", "README.md")
        self.assertEqual(code, 0, out)

    def test_a_modified_tree_is_named(self):
        self.meta(lambda meta: meta.update(tree="modified"))
        self.assertIn("commit `0123456` with changes not committed", self.write())

    def test_check_fails_on_an_edited_figure(self):
        self.write()
        self.edit("README.md", "| 10 | 10000 GFLOP/s | 20.0% of cuBLAS FP32 |", "| 10 | 10000 GFLOP/s | 21.0% of cuBLAS FP32 |")
        code, out = self.run_script("--check", "README.md")
        self.assertEqual(code, 1, out)
        self.assertIn("-| [04_shared_tiled]", out)
        self.assertIn("21.0% of cuBLAS FP32", out)

    def test_check_fails_when_the_run_changes(self):
        self.write()
        self.edit("docs/results/" + RUN, '"rate":20000.0', '"rate":20500.0')
        code, out = self.run_script("--check", "README.md")
        self.assertEqual(code, 1, out)
        self.assertIn("+| [07_register_tile_1d]", out)

    def test_check_fails_when_the_caption_is_edited(self):
        self.write()
        self.edit("README.md", "2000-01-01", "2000-01-02")
        code, out = self.run_script("--check", "README.md")
        self.assertEqual(code, 1, out)

    def test_check_fails_when_the_run_is_gone(self):
        self.write()
        os.remove(os.path.join(self.dir, "docs", "results", RUN))
        code, out = self.run_script("--check", "README.md")
        self.assertEqual(code, 2, out)
        self.assertIn("fixture.tour.json not found", out)

    def test_placeholder_is_reported_skipped(self):
        code, out = self.run_script("--check", "README.md")
        self.assertEqual(code, 77, out)
        self.assertTrue(out.startswith("SKIP: README.md's results block names no run yet"), out)

    def refused(self, why):
        code, out = self.run_script("docs/results/" + RUN, "--write", "README.md")
        self.assertEqual(code, 1, out)
        self.assertIn(why, out)
        self.assertEqual(read(self.readme), PLACEHOLDER)

    def test_a_failed_stage_makes_no_table(self):
        self.edit("docs/results/" + RUN, '"stage":"07_register_tile_1d","sizes":"4096x4096x4096","unit":"GFLOP/s",'
                  '"yardstick":"cuBLAS","headline":"register1d_64x64x4/16","result":"PASS"',
                  '"stage":"07_register_tile_1d","sizes":"4096x4096x4096","unit":"GFLOP/s",'
                  '"yardstick":"cuBLAS","headline":"register1d_64x64x4/16","result":"FAIL"')
        self.refused("07_register_tile_1d: its result is FAIL")

    def test_a_stage_without_a_report_makes_no_table(self):
        def fail_07(meta):
            for entry in meta["stages"]:
                if entry["stage"] == "07_register_tile_1d":
                    entry.update(status="failed", reason="exit 3, no report")
        self.meta(fail_07)
        self.refused("07_register_tile_1d failed: exit 3, no report")

    def test_a_quick_tour_makes_no_table(self):
        self.meta(lambda meta: meta.update(quick=True))
        self.refused("--quick")

    def test_missing_meta_and_missing_block(self):
        os.remove(os.path.join(self.dir, "docs", "results", META))
        code, out = self.run_script("docs/results/" + RUN, "--print")
        self.assertEqual(code, 2, out)
        self.assertIn("fixture.tour.meta.json not found", out)
        shutil.copy(os.path.join(HERE, META), os.path.join(self.dir, "docs", "results", META))
        write_file(self.readme, "# No block here\n")
        code, out = self.run_script("docs/results/" + RUN, "--write", "README.md")
        self.assertEqual(code, 2, out)
        self.assertIn("expected one '<!-- results-table:", out)

    def test_save_copies_the_run_and_its_meta(self):
        code, out = self.run_script("docs/results/" + RUN, "--save", "docs/results/copy/run.json", "--write", "README.md")
        self.assertEqual(code, 0, out)
        for name in ("run.json", "run.meta.json"):
            self.assertTrue(os.path.isfile(os.path.join(self.dir, "docs", "results", "copy", name)))
        self.assertIn("<!-- results-table: docs/results/copy/run.json -->", read(self.readme))
        code, out = self.run_script("--check", "README.md")
        self.assertEqual(code, 0, out)

    @unittest.skipUnless(MATPLOTLIB, "no python3 with matplotlib here: the chart's cases need it")
    def test_the_chart_is_checked_against_its_run(self):
        code, out = self.run_script("docs/results/" + RUN, "--write", "README.md", "--chart", "docs/images/tour.png",
                                    python=MATPLOTLIB)
        self.assertEqual(code, 0, out)
        text = read(self.readme)
        self.assertIn("<!-- results-table: docs/results/fixture.tour.json docs/images/tour.png -->", text)
        self.assertIn("](docs/images/tour.png)\n<!-- /results-table -->", text)
        code, out = self.run_script("--check", "README.md")
        self.assertEqual(code, 0, out)
        # The run changes where the table does not look (a variant other than the headline), so the
        # table still matches it, but the chart was drawn from the run before: it is stale.
        self.edit("docs/results/" + RUN, '"median_ms":0.5,"min_ms":0.5,"max_ms":0.5,"reps":10,"rate":1000.0',
                  '"median_ms":0.5,"min_ms":0.5,"max_ms":0.5,"reps":10,"rate":1001.0')
        code, out = self.run_script("--check", "README.md")
        self.assertEqual(code, 1, out)
        self.assertIn("docs/images/tour.png was not drawn from docs/results/fixture.tour.json as it is now", out)
        # Drawn again, both match.
        code, out = self.run_script("docs/results/" + RUN, "--write", "README.md", "--chart", "docs/images/tour.png",
                                    python=MATPLOTLIB)
        self.assertEqual(code, 0, out)
        code, out = self.run_script("--check", "README.md")
        self.assertEqual(code, 0, out)
        os.remove(os.path.join(self.dir, "docs", "images", "tour.png"))
        code, out = self.run_script("--check", "README.md")
        self.assertEqual(code, 1, out)
        self.assertIn("does not exist", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
