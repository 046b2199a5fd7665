#!/usr/bin/env python3
"""Tests of tools/maint/grading_results.py's reading of a grading: its phases from the grade log
and the GPU's and the host's busy shares over the tests from gpu_check.sh's samplers (hand-made
nvidia-smi and vmstat lines, in a time zone of their own)."""

import datetime
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_results as gr  # noqa: E402

LOG = """[    0.0s] configure: the course's checkers
[   10.0s] build finished in 9.8 s
[   10.2s] tests and sanitizer: 8 processes at once
[   30.0s] benchmark of 18 lab(s) at n = 2^28
[   45.0s] 01_atomic_naive: 2.3 GB/s
reports: out (report.json, junit.xml, results.json, summary.txt); exit code 0
"""
VMSTAT_HEAD = ("procs -----------memory---------- ---swap-- -----io---- -system-- "
               "-------cpu------- -----timestamp-----\n"
               " r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st gu"
               "                 EST\n")


def write_run(folder, gpu_busy, idle, start=datetime.datetime(2026, 12, 3, 2, 0, 0)):
    """A grade log and its samplers: the GPU \\p gpu_busy percent and the cores \\p idle percent
    idle during seconds 10 to 30, and 5 / 95 percent outside them."""
    log = folder / "grade2.log"
    log.write_text(LOG)
    with open(folder / "grade2.gpu-util.csv", "w") as f:
        for k in range(200):
            t = start + datetime.timedelta(seconds=k / 4)
            busy = gpu_busy if 10 <= k / 4 <= 30 else 5
            f.write(f"{t.strftime('%Y/%m/%d %H:%M:%S.%f')[:-3]}, {busy} %, 12 %\n")
        f.write("2026/12/03 02:00:5")  # cut off when the sampler was stopped
    with open(folder / "grade2.vmstat.log", "w") as f:
        f.write(VMSTAT_HEAD)
        for k in range(50):
            t = start + datetime.timedelta(seconds=k)
            i = idle if 10 <= k <= 30 else 95
            f.write(f" 2  0      0 9000 100 900    0    0     0     0  500  900 {98 - i} 2 {i} "
                    f"0 0 0 {t.strftime('%Y-%m-%d %H:%M:%S')}\n")
    return log


class Utilization(unittest.TestCase):
    def test_phases_of_the_log(self):
        self.assertEqual(gr.phases(LOG), {"build_s": 10.0, "tests_sanitizer_s": 20.0,
                                          "benchmark_s": 15.0})

    def test_a_course_built_beside_the_labs_ends_the_build(self):
        overlapped = LOG.replace("[   10.0s] build finished in 9.8 s\n",
                                 "[    6.0s] build finished in 5.8 s\n"
                                 "[   10.0s] course's binaries built in 9.9 s\n")
        self.assertEqual(gr.phases(overlapped), {"build_s": 10.0, "tests_sanitizer_s": 20.0,
                                                 "benchmark_s": 15.0})

    def test_busy_shares_over_the_tests_alone(self):
        with tempfile.TemporaryDirectory() as d:
            log = write_run(Path(d), gpu_busy=80, idle=40)
            got = gr.utilization(log, (10.0, 30.0))
        self.assertEqual(got, {"tests_gpu_util_pct": 80.0, "tests_cpu_busy_pct": 60.0})

    def test_no_samplers_no_figures(self):
        with tempfile.TemporaryDirectory() as d:
            log = Path(d) / "grade1.log"
            log.write_text(LOG)
            self.assertEqual(gr.utilization(log, (10.0, 30.0)), {})
            self.assertEqual(gr.utilization(write_run(Path(d), 80, 40), (10.0, None)), {})


if __name__ == "__main__":
    unittest.main()
