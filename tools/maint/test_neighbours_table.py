#!/usr/bin/env python3
"""Tests of tools/maint/neighbours_table.py on hand-made runs in reduce_bench's JSON shape."""

import json
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import neighbours_table as nt  # noqa: E402

N = 268435456


def stream_row(gbps):
    """The trusted stream read's row, as reduce_bench writes it."""
    return {"name": f"sum/stream_read/{N}/min_time:0.100/manual_time", "family_index": 0,
            "run_name": f"sum/stream_read/{N}/min_time:0.100/manual_time",
            "run_type": "iteration", "repetitions": 1, "iterations": 1948,
            "real_time": 240.0, "time_unit": "us", "median_gbps": gbps, "median_us": 240.0,
            "wrong_results": 0.0, "failure": 0.0}


def lab_row(lab, gbps, event_ratio=0.99):
    """A graded row that passed: its clocks agree."""
    us = N * 4 / (gbps * 1e3)
    return {"name": f"sum/{lab}/{N}/iterations:1/manual_time", "run_type": "iteration",
            "iterations": 1, "median_gbps": gbps, "median_us": us,
            "runner_event_us": us * event_ratio, "calls_per_sample": 10.0, "samples": 10.0,
            "failure": 0.0, "wrong_results": 0.0, "warmup_wrong": 0.0, "clocks_agree": 1.0}


def disagreeing_row(lab, event_us, host_us):
    """A graded row that failed on its clocks: Google Benchmark kept only the verdict fields."""
    return {"name": f"sum/{lab}/{N}/iterations:1/manual_time", "run_type": "iteration",
            "error_occurred": True,
            "error_message": f"clocks disagree: the lab's process reports {event_us} us per "
                             f"call, the grader's clock {host_us} us",
            "failure": 2.0, "wrong_results": 0.0, "warmup_wrong": 0.0, "clocks_agree": 0.0}


def write_run(folder, name, rows, probe="4500.0"):
    """<folder>/<name>.json with \\p rows, the context's probe as reduce_bench writes it."""
    context = {"date": "2026-12-03T10:00:00+00:00", "num_cpus": 16, "gpu": "NVIDIA H200",
               "sm_count": "132", "theoretical_gbps": "4814.3", "ceiling_elements": "1073741824",
               "ceiling_kernel": "chunked x8 ldg", "seed": "1"}
    if probe is not None:
        context["ceiling_gbps"] = probe
    (Path(folder) / f"{name}.json").write_text(json.dumps({"context": context,
                                                           "benchmarks": rows}))


def table_row(page, row, condition):
    """The cells of the lab table's line for \\p row and \\p condition."""
    for line in page.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[:2] == [row, condition]:
            return cells
    raise AssertionError(f"no line for {row} {condition} in:\n{page}")


class NeighboursTable(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def write_sample(self):
        """Three runs alone (04 at 900, 1000, 1100 GB/s of 4500), three beside cpu_same (one of
        them failed on its clocks), one beside memory_other."""
        for k, gbps in enumerate([900.0, 1000.0, 1100.0], 1):
            write_run(self.dir, f"alone-{k}", [stream_row(4400.0), lab_row("04_sequential", gbps),
                                               lab_row("15_capstone", 4000.0)])
        write_run(self.dir, "cpu_same-1", [stream_row(4400.0),
                                           lab_row("04_sequential", 450.0, 0.85),
                                           lab_row("15_capstone", 3600.0)])
        write_run(self.dir, "cpu_same-2", [stream_row(4400.0),
                                           disagreeing_row("04_sequential", 500.0, 1073.7418),
                                           lab_row("15_capstone", 3700.0)])
        write_run(self.dir, "cpu_same-3", [stream_row(4400.0), lab_row("04_sequential", 900.0),
                                           lab_row("15_capstone", 3800.0)], probe="4000.0")
        write_run(self.dir, "memory_other-1", [stream_row(4300.0), lab_row("04_sequential", 1000.0),
                                               lab_row("15_capstone", 4000.0)])
        (self.dir / "memory_other-1.neighbour.log").write_text(
            "host_stress: memory 80.5 GB/s over 5.1 s (8 threads)\n")
        (self.dir / "runs.tsv").write_text(
            "condition\trun\trc\twall_s\tneighbour\tbench_cpus_busy\tother_cpus_busy\n"
            "alone\t1\t0\t4.0\t-\t20\t1\nalone\t2\t0\t4.2\t-\t21\t2\n"
            "alone\t3\t0\t4.4\t-\t22\t0\n"
            "cpu_same\t1\t0\t5.0\trunning\t100\t3\ncpu_same\t2\t0\t6.0\trunning\t99\t2\n"
            "cpu_same\t3\t0\t5.5\tended\t98\t1\nmemory_other\t1\t0\t4.1\trunning\t25\t97\n")

    def test_fraction_is_of_the_same_runs_probe(self):
        self.write_sample()
        run = nt.parse_run(self.dir / "cpu_same-3.json")
        self.assertAlmostEqual(run["probe"], 4000.0)
        self.assertAlmostEqual(run["rows"]["04_sequential"]["fraction"], 900.0 / 4000.0)
        self.assertEqual(run["rows"]["04_sequential"]["clocks"], 1)

    def test_alone_row_median_and_spread(self):
        self.write_sample()
        cells = table_row(nt.report(self.dir), "04_sequential", "alone")
        self.assertEqual(cells[2:6], ["3", "0.222", "-", "0.200-0.244"])
        self.assertEqual(cells[7], "3/3")

    def test_change_from_alone_and_clocks_count(self):
        self.write_sample()
        cells = table_row(nt.report(self.dir), "04_sequential", "cpu_same")
        # 450/4500, 1073.7418 us -> 1000 GB/s /4500, 900/4000: median 0.222 vs alone 0.2222
        self.assertEqual(cells[2], "3")
        self.assertEqual(cells[5], "0.100-0.225")
        self.assertEqual(cells[7], "2/3")
        self.assertEqual(cells[9], "1 (1 from the message's clock)")
        capstone = table_row(nt.report(self.dir), "15_capstone", "cpu_same")
        # 3600/4500, 3700/4500, 3800/4000: median 0.8222 against alone's 0.8889
        self.assertEqual(capstone[3], "0.822")
        self.assertEqual(capstone[4], "-7.5%")
        self.assertEqual(capstone[6], "yes")

    def test_a_failed_rows_speed_comes_from_its_messages_clock(self):
        self.write_sample()
        facts = nt.parse_run(self.dir / "cpu_same-2.json")["rows"]["04_sequential"]
        self.assertTrue(facts["failed"])
        self.assertTrue(facts["from_message"])
        self.assertAlmostEqual(facts["gbps"], 1000.0, places=3)
        self.assertAlmostEqual(facts["events_ratio"], 500.0 / 1073.7418, places=4)
        self.assertEqual(facts["clocks"], 0)

    def test_events_over_clock_median(self):
        self.write_sample()
        cells = table_row(nt.report(self.dir), "04_sequential", "cpu_same")
        self.assertEqual(cells[8], "0.85")  # of 0.85, 0.466 and 0.99

    def test_conditions_in_the_scripts_order_and_stream_read_last(self):
        self.write_sample()
        write_run(self.dir, "zz_custom-1", [stream_row(4400.0)])
        lines = [ln for ln in nt.report(self.dir).splitlines()
                 if ln.startswith("| 04_sequential") or ln.startswith("| stream_read")]
        self.assertEqual([ln.split("|")[2].strip() for ln in lines[:3]],
                         ["alone", "cpu_same", "memory_other"])
        self.assertTrue(lines[-1].startswith("| stream_read | zz_custom"))

    def test_condition_table_reads_runs_tsv_and_the_neighbours_line(self):
        self.write_sample()
        page = nt.report(self.dir)
        cpu_same = next(ln for ln in page.splitlines() if ln.startswith("| cpu_same | 3 |"))
        cells = [c.strip() for c in cpu_same.strip("|").split("|")]
        self.assertEqual(cells[2], "4500.0 (4000.0-4500.0)")
        self.assertEqual(cells[4:7], ["5.5", "2/3", "99% / 2%"])
        memory = next(ln for ln in page.splitlines() if ln.startswith("| memory_other | 1 |"))
        self.assertIn("host_stress: memory 80.5 GB/s", memory)

    def test_without_a_probe_the_stream_read_is_the_ceiling(self):
        write_run(self.dir, "alone-1", [stream_row(4000.0), lab_row("09_warp_shuffle", 3000.0)],
                  probe=None)
        run = nt.parse_run(self.dir / "alone-1.json")
        self.assertEqual(run["ceiling_from"], "stream_read")
        self.assertAlmostEqual(run["rows"]["09_warp_shuffle"]["fraction"], 0.75)
        self.assertIn("same run's stream_read", nt.report(self.dir))

    def test_trusted_rows_have_no_clocks(self):
        row = lab_row("09_warp_shuffle", 3000.0)
        for key in ("clocks_agree", "runner_event_us", "warmup_wrong"):
            del row[key]
        write_run(self.dir, "alone-1", [stream_row(4000.0), row])
        page = nt.report(self.dir)
        self.assertIn("loaded into the benchmark's process", page)
        self.assertEqual(table_row(page, "09_warp_shuffle", "alone")[7], "-")

    def test_one_line_and_empty_folder(self):
        self.write_sample()
        line = nt.one_line(self.dir / "cpu_same-2.json")
        self.assertEqual(line, "04_sequential 0.222 failed (clocks disagree), 15_capstone 0.822 "
                               "clocks agree, stream_read 0.978; probe 4500.0 GB/s")
        empty = self.dir / "empty"
        empty.mkdir()
        self.assertIsNone(nt.report(empty))
        self.assertEqual(nt.main(["neighbours_table.py", str(empty)]), 1)

    def test_aggregates_and_unparsable_files_are_left_out(self):
        write_run(self.dir, "alone-1", [stream_row(4000.0),
                                        {"name": f"sum/cub/{N}_mean", "run_type": "aggregate"}])
        (self.dir / "alone-2.json").write_text("{truncated")
        runs = nt.load_runs(self.dir)
        self.assertEqual(list(runs["alone"]), [1])
        self.assertEqual(list(runs["alone"][1]["rows"]), ["stream_read"])


if __name__ == "__main__":
    unittest.main()
