#!/usr/bin/env python3
"""Tests of tools/maint/grade_phases.py on a real grading of the course's solutions on an H200,
trimmed (testdata/grade_phases/): the terminal logs of a grading from an empty build folder
(grade1.log) and of one with the course built (grade2.log), and grade2's report folder
(solutions2/) with its checkers' logs cut to the lines the tool reads (the test lines of at
least 100 ms kept), the build logs cut to their last step, bench.json to the counters read and
bench.log to a few rows."""

import io
import math
import re
import sys
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import grade_phases as gp  # noqa: E402
import grade_phases_bench as gb  # noqa: E402

DATA = HERE / "testdata" / "grade_phases"
ROOT = HERE.parent.parent


def graded_checkers(log="grade2.log", reports="solutions2"):
    """The checkers of a fixture grading, their logs attached when \\p reports is given."""
    checkers = gp.checkers_from_progress(gp.read_progress(DATA / log))
    gp.attach_logs(checkers, DATA / reports / "logs" if reports else None)
    return checkers


def by_group(checkers, kind, group):
    """The checker of \\p kind named \\p group."""
    return next(c for c in checkers if c.kind == kind and c.group == group)


class ProgressLines(unittest.TestCase):
    def test_reads_every_timestamped_line(self):
        lines = gp.read_progress(DATA / "grade2.log")
        self.assertEqual(lines[0], (0.0, "configure: the course's checkers, lab runner and "
                                         "benchmark"))
        self.assertEqual(lines[-1], (69.8, "build folder kept: /work/main/build-gpu-grade"))
        self.assertEqual(len(lines), 128)

    def test_phases_of_a_built_course(self):
        report = {"seconds": 69.9}
        self.assertEqual(gp.phases(gp.read_progress(DATA / "grade2.log"), report),
                         [("build", 0.0, 17.3),
                          ("correctness (tests, hidden tests, sanitizer)", 17.3, 54.2),
                          ("benchmark", 54.2, 69.8)])

    def test_build_steps_of_an_empty_build_folder(self):
        steps = gp.build_steps(gp.read_progress(DATA / "grade1.log"), None)
        walls = {name: round(b - a, 1) for name, a, b, _, _ in steps}
        self.assertEqual(walls["course configure"], 7.4)
        self.assertEqual(walls["course build"], 30.7)
        self.assertEqual(walls["lab staging and configure"], 3.1)
        self.assertEqual(walls["lab libraries (ninja, then the library checks)"], 12.0)

    def test_build_steps_with_their_logs(self):
        steps = gp.build_steps(gp.read_progress(DATA / "grade2.log"), DATA / "solutions2" / "logs")
        rows = {name: (round(b - a, 1), secs, note) for name, a, b, secs, note in steps}
        self.assertEqual(rows["course configure"], (3.6, 3.6, "cmake's configuring 3.4 s"))
        self.assertEqual(rows["course build"], (0.3, 0.3, "11 ninja steps"))
        self.assertEqual(rows["lab libraries (ninja, then the library checks)"],
                         (10.6, 8.2, "67 ninja steps, 20 of them common/"))

    def test_build_steps_of_a_course_built_beside_the_labs(self):
        # A first grading builds the course's binaries beside the labs' build: the two tracks'
        # lines interleave (in either order at the start), each step ends at the next line of its
        # own track or at its track's end line, and the build phase at the later of the two.
        lines = [(0.0, "isolation of the build: bubblewrap: user, mount, network"),
                 (0.0, "configure: 18 labs of /tmp/src/solutions"),
                 (0.0, "configure: the course's checkers (the suites of sum), lab runner and "
                       "benchmark"),
                 (2.9, "build: lab libraries (23 targets)"),
                 (4.2, "build: the course's binaries (7 targets)"),
                 (13.4, "build finished in 13.4 s"),
                 (25.9, "course's binaries built in 25.9 s"),
                 (27.3, "isolation of the lab's process: bubblewrap"),
                 (27.3, "tests in one checker: 04_sequential (sum)"),
                 (50.0, "benchmark of 18 lab(s) at n = 2^28"),
                 (61.7, "18 CUDA contexts: 12.0 s")]
        steps = [(name, a, b) for name, a, b, _, _ in gp.build_steps(lines, None)]
        self.assertEqual(steps, [("course configure", 0.0, 4.2), ("course build", 4.2, 25.9),
                                 ("build isolation", 0.0, 0.0),
                                 ("lab staging and configure", 0.0, 2.9),
                                 ("lab libraries (ninja, then the library checks)", 2.9, 13.4)])
        self.assertEqual(gp.phases(lines, {}), [
            ("build", 0.0, 25.9), ("correctness (tests, hidden tests, sanitizer)", 25.9, 50.0),
            ("benchmark", 50.0, 61.7)])
        self.assertIn("the labs' build ended at 13.4 s, the course's at 25.9 s",
                      "\n".join(gp.render_build(lines, None)))
        # A log of one build after the other has no such line, nor the note.
        old = gp.read_progress(DATA / "grade1.log")
        self.assertNotIn("beside the labs", "\n".join(gp.render_build(old, None)))

    def test_checkers_without_their_logs(self):
        checkers = graded_checkers("grade1.log", None)
        self.assertEqual([c.kind for c in checkers].count("tests"), 6)
        self.assertEqual([c.kind for c in checkers].count("sanitizer"), 2)
        last = max(checkers, key=lambda c: c.end)
        # Each lab of a group is printed with the group's seconds over its 4 labs: 9.5 s.
        self.assertEqual(last.names[0], "10_max_min (minimum)")
        self.assertAlmostEqual(last.seconds, 38.0)
        sanitizer = next(c for c in checkers if c.kind == "sanitizer")
        self.assertEqual(sanitizer.names[5], "01_atomic_naive (sum)")
        self.assertAlmostEqual(sanitizer.end, 66.8)  # its results' line ("01_atomic_naive: ...")

    def test_hand_made_progress_lines(self):
        lines = [(1.0, "compute-sanitizer --tool memcheck, then racecheck: 01_atomic_naive (sum), "
                       "10_max_min (maximum)"),
                 (1.1, "tests in one checker: 04_sequential (sum), 10_max_min (minimum)"),
                 (5.0, "01_atomic_naive: memcheck: 0 errors - clean (1.0 s)"),
                 (9.0, "04_sequential (sum): public tests 43/43 passed; hidden tests 28/28 "
                       "passed (3.2 s)")]
        sanitizer, tests = gp.checkers_from_progress(lines)
        self.assertEqual(sanitizer.names, ["01_atomic_naive (sum)", "10_max_min (maximum)"])
        self.assertAlmostEqual(sanitizer.seconds, 4.0)  # its results' line names its lab bare
        self.assertAlmostEqual(tests.seconds, 6.4)  # 3.2 s: the group's over its 2 labs
        self.assertEqual(gp.sanitizer_tools(lines), ["memcheck", "racecheck"])

    def test_one_submission_of_a_batch(self):
        # A batch's log (reduce-grade planted): every line has its submission's tag, or
        # "course: " for the shared course build; one lab, so its suites run alone.
        lines = gp.read_progress(DATA / "planted.log", "int_index_overflow")
        self.assertEqual(lines[0], (0.0, "configure: the course's checkers, lab runner and "
                                         "benchmark"))
        self.assertFalse(any("uint32_index_past_2_32" in text for _, text in lines))
        alone, sanitizer = gp.checkers_from_progress(lines)
        self.assertEqual((alone.names, alone.alone, alone.group),
                         (["04_sequential (sum)"], "public and hidden", "04_sequential alone"))
        self.assertEqual((alone.start, alone.seconds), (63.7, 9.3))
        self.assertAlmostEqual(sanitizer.end, 70.1)

    def test_a_rerun_alone(self):
        lines = [(1.0, "tests in one checker: 04_sequential (sum), 10_max_min (minimum)"),
                 (9.0, "04_sequential (sum): public tests 42/43 passed, 1 skipped; hidden tests "
                       "28/28 passed (3.0 s)"),
                 (9.5, "04_sequential: public tests (sum) again, alone: 1 skipped beside other "
                       "labs"),
                 (12.0, "04_sequential: public tests 43/43 passed (2.4 s)")]
        group, rerun = gp.checkers_from_progress(lines)
        self.assertEqual(group.seconds, 6.0)
        self.assertEqual((rerun.alone, rerun.skipped, rerun.seconds), ("public", "1", 2.4))
        self.assertEqual(gp.render_reruns([group, rerun])[2],
                         "- 04_sequential (sum) public tests, 1 skipped beside other labs: 9.5 "
                         "to 11.9 s (2.4 s)")


class CheckerLogs(unittest.TestCase):
    def test_each_checker_finds_its_log(self):
        checkers = graded_checkers()
        self.assertEqual(sorted(c.group for c in checkers if c.kind == "tests"),
                         [f"group_{i}" for i in range(6)])
        self.assertEqual(sorted(c.group for c in checkers if c.kind == "sanitizer"),
                         ["group_0", "group_1"])

    def test_the_last_tests_checker_and_its_parts(self):
        c = by_group(graded_checkers(), "tests", "group_3")
        self.assertAlmostEqual(c.end, 54.2)
        self.assertAlmostEqual(c.context_s, 2.24)
        self.assertEqual([p.name for p in c.parts], ["10_max_min (minimum)",
                                                    "03_interleaved_strided (sum)",
                                                    "09_warp_shuffle (sum)",
                                                    "14_atomic_max (atomic_max)"])
        first = c.parts[0]
        self.assertEqual((first.count, first.ms), (84, 13122.0))
        self.assertAlmostEqual(first.start, 17.5 + 2.24)
        self.assertAlmostEqual(c.parts[1].start, 17.5 + 2.24 + 13.122)
        self.assertIn(("SumTest.AboveUint32Range", 4497.0), c.parts[1].tests)

    def test_hidden_suites_are_told_by_their_last_segment(self):
        c = by_group(graded_checkers(), "tests", "group_5")
        naive = next(p for p in c.parts if p.lab == "01_atomic_naive")
        self.assertEqual(naive.ms, 20478.0)
        self.assertAlmostEqual(naive.hidden_ms(), sum(
            ms for s, ms in naive.suites.items() if "Hidden" in s))
        self.assertGreater(naive.hidden_ms(), 0)
        self.assertIn("Draws/HiddenSumRandomSize", naive.suites)

    def test_sanitizer_repetitions_and_waits(self):
        checkers = graded_checkers()
        group = by_group(checkers, "sanitizer", "group_1")
        self.assertEqual(sorted({p.repetition for p in group.parts}), [0, 1, 2])
        racecheck = sum(p.ms for p in group.parts if p.repetition == 1) / 1e3
        self.assertAlmostEqual(racecheck, 7.9, delta=0.05)
        self.assertEqual(group.answers, [(1, 2.30), (2, 1.08), (3, 1.20)])
        waits = by_group(checkers, "tests", "group_0").waits
        self.assertEqual(waits, [(0.30, "1 of 3 large-memory slots (8.0 GiB)")])

    def test_a_hand_made_log(self):
        text = "\n".join([
            "[ startup  ] the checker's CUDA context: 0.41 s",
            "[ lab      ]  2 04_sequential sum",  # no mark: a sanitizer group's
            "[  FAILED  ] SumTest.Big (1500 ms)",
            "[  SKIPPED ] HiddenSum.Huge (0 ms)",
            "[----------] 2 tests from SumTest (1500 ms total)",
            "[==========] 2 tests from 1 test suite ran. (1501 ms total)",
            "[ lab      ] 123456 0 10_max_min maximum",  # a mark of digits only
            "[reduce-grade] /bin/checker: killed by SIGKILL (7.5 s)"])
        c = gp.Checker("sanitizer", ["04_sequential", "10_max_min (maximum)"], 10.0)
        gp.parse_checker_log(text, c)
        gp.lay_out_parts(c)
        self.assertEqual([(p.lab, p.op, p.repetition) for p in c.parts],
                         [("04_sequential", "sum", 2), ("10_max_min", "maximum", 0)])
        self.assertEqual(c.parts[0].tests, [("SumTest.Big", 1500.0), ("HiddenSum.Huge", 0.0)])
        self.assertEqual((c.parts[0].count, c.parts[0].ms), (2, 1501.0))
        self.assertAlmostEqual(c.parts[1].start, 10.0 + 0.41 + 1.501)
        self.assertEqual(c.seconds, 7.5)

    def test_a_checker_held_until_the_labs_were_built(self):
        text = "\n".join([
            "[ startup  ] the checker's CUDA context: 3.00 s",
            "[ startup  ] held until the labs were built: 4.50 s",
            "[ lab      ] 1f 0 04_sequential sum",
            "[ startup  ] held until the labs were built: 99.00 s",  # a lab's words: no hold
            "[==========] 2 tests from 1 test suite ran. (2000 ms total)",
            "[reduce-grade] /bin/checker: exit 0 (10.0 s)"])
        c = gp.Checker("tests", ["04_sequential (sum)"], 1.0)
        gp.parse_checker_log(text, c)
        gp.lay_out_parts(c)
        self.assertEqual(c.held_s, 4.5)
        self.assertAlmostEqual(c.parts[0].start, 1.0 + 3.0 + 4.5)
        self.assertEqual([gp.part_letter(c, t) for t in (2.0, 6.0, 9.0, 10.9)], ["c", "h", "A", "."])
        row = "\n".join(gp.render_checkers([c]))
        self.assertIn("| 3.00 | 4.50 |", row)
        self.assertIn("| 0.5 |", row)  # else: 10 - 3 - 4.5 - 2

    def test_a_held_checkers_part_starts_no_earlier_than_its_labs_release(self):
        # A held checker waits before each part for its lab's word: a part whose lab was released
        # after the one before it ended starts at that release, as the grader's progress says.
        lines = [(4.3, "01_atomic_naive: built and checked; its tests start"),
                 (10.2, "16_library_primitives: built and checked; its tests start"),
                 (10.2, "build finished in 9.9 s")]
        self.assertEqual(gp.releases(lines), {"01_atomic_naive": 4.3,
                                              "16_library_primitives": 10.2})
        text = "\n".join([
            "[ startup  ] the checker's CUDA context: 2.00 s",
            "[ startup  ] held until the labs were built: 1.80 s",
            "[ lab      ] 1f 0 01_atomic_naive sum",
            "[==========] 2 tests from 1 test suite ran. (3000 ms total)",
            "[ lab      ] 1f 0 16_library_primitives sum",
            "[==========] 2 tests from 1 test suite ran. (1000 ms total)"])
        c = gp.Checker("tests", ["01_atomic_naive (sum)", "16_library_primitives (sum)"], 0.5)
        gp.parse_checker_log(text, c)
        gp.lay_out_parts(c, gp.releases(lines))
        self.assertAlmostEqual(c.parts[0].start, 4.3)  # its context and hold end at 4.3 too
        self.assertAlmostEqual(c.parts[1].start, 10.2)  # not at 7.3, when lab 01's part ended
        gp.lay_out_parts(c)
        self.assertAlmostEqual(c.parts[1].start, 7.3)  # without the releases: one after another

    def test_a_lone_checker_has_one_part(self):
        c = gp.Checker("tests", ["04_sequential (sum)"], 5.0, alone="public and hidden")
        gp.parse_checker_log("[ startup  ] the checker's CUDA context: 2.00 s\n"
                             "[==========] Running 2 tests from 1 test suite.\n"
                             "[----------] 2 tests from HiddenSum (300 ms total)\n"
                             "[==========] 2 tests from 1 test suite ran. (301 ms total)\n", c)
        self.assertEqual([(p.name, p.count, p.hidden_ms()) for p in c.parts],
                         [("04_sequential (sum)", 2, 300.0)])


class Concurrency(unittest.TestCase):
    def test_levels_of_hand_made_checkers(self):
        cs = [gp.Checker("tests", ["a (sum)"], 0.0, 10.0), gp.Checker("tests", ["b (sum)"], 2.0, 4.0)]
        self.assertEqual(gp.concurrency_levels(cs), {1: 6.0, 2: 4.0})
        self.assertEqual(gp.running_at(cs, 3.0), 2)
        self.assertEqual(gp.running_at(cs, 10.0), 0)

    def test_a_checker_started_during_the_build(self):
        cs = [gp.Checker("tests", ["a (sum)"], 4.5, 13.6), gp.Checker("tests", ["b (sum)"], 9.9, 18.7)]
        text = "\n".join(gp.render_concurrency(cs, 20, (9.9, 28.6)))
        self.assertIn("had its first process since 5.4 s before it (during the build)", text)
        self.assertIn("waited 0.0 s after its last", text)
        text = "\n".join(gp.render_concurrency(cs[1:], 20, (9.0, 30.0)))
        self.assertIn("waited 0.9 s for its first process and waited 1.4 s after its last", text)

    def test_levels_of_the_grading(self):
        levels = gp.concurrency_levels(graded_checkers())
        self.assertAlmostEqual(levels[8], 12.6, delta=0.05)  # 17.5 to 30.1 s
        self.assertAlmostEqual(sum(levels.values()), 54.2 - 17.4, delta=0.01)

    def test_timeline(self):
        rows = gp.timeline(graded_checkers(), 37)
        self.assertEqual(len(rows), 1 + 8 + 2)
        counts = rows[-2]
        self.assertTrue(counts.startswith("at once"))
        self.assertEqual(counts.split("|")[1], "8888888888888777776666666666665554321")
        sanitizer = next(r for r in rows if r.startswith("sanit group_1"))
        self.assertRegex(sanitizer, r"\|cc+M+R+S+ +\|")

    def test_the_same_test_at_once(self):
        text = "\n".join(gp.render_slowest(graded_checkers()))
        # The first parts' AboveUint32Range ran 6 at once, each about 6 times its lone cost.
        self.assertRegex(text, r"MaximumTest\.AboveUint32Range \| 10_max_min \(maximum\) \| "
                               r"group_2 \| 3\.80 \| [\d.]+-[\d.]+ \| 8\.0 \| 6 \|")


class Benchmark(unittest.TestCase):
    def rows(self):
        """The fixture's bench.json rows by name."""
        return {r["name"]: r for r in gb.bench_rows(DATA / "solutions2" / "logs" / "benchmark")}

    def test_a_lab_row_and_a_trusted_row(self):
        rows = self.rows()
        ref = gb.row_costs(rows["sum/reference-01_atomic_naive/268433723/iterations:1/manual_time"])
        self.assertEqual(ref["kind"], "reference")
        self.assertAlmostEqual(ref["setup"], ref["allocate"] + ref["fill"] + ref["warmup"])
        self.assertAlmostEqual(ref["total"], 0.716252 + 1.422139, places=5)
        self.assertAlmostEqual(ref["timed"], 3 * 1 * 0.4725, places=3)
        cub = gb.row_costs(rows["sum/cub/268433723/iterations:30/manual_time"])
        self.assertEqual((cub["kind"], cub["bound"]), ("trusted", True))
        self.assertAlmostEqual(cub["total"], 30 * 251.77e-6, places=6)

    def test_the_console_table_reads_as_the_json(self):
        text = (DATA / "solutions2" / "logs" / "benchmark" / "bench.log").read_text()
        from_log = gb.bench_rows_from_log(text)
        self.assertEqual(len(from_log), 7)
        self.assertEqual(from_log[-1]["error_message"], "WRONG in 30 timed runs")
        rows = self.rows()
        for row in from_log[:-1]:
            a, b = gb.row_costs(row), gb.row_costs(rows[row["name"]])
            for key in ("total", "setup", "allocate", "fill", "regen", "timed"):
                self.assertAlmostEqual(a[key], b[key], delta=1e-4 + 1e-4 * b[key], msg=key)

    def test_rungs_and_their_labs(self):
        labs = ["15_capstone", "01_atomic_naive"]
        self.assertEqual(gb.lab_of_rung("reference-15_capstone_sum_deterministic", labs),
                         "15_capstone")
        self.assertEqual(gb.row_kind("segmented_sum_32/cub/268433723/x"), "trusted")
        self.assertEqual(gb.row_kind("sum/stream_read/268433723/x"), "trusted")
        self.assertEqual(gb.row_kind("sum/01_atomic_naive/268433723/x"), "lab")
        self.assertEqual(gb.si_value("1.19717", "m"), 1.19717e-3)


class Output(unittest.TestCase):
    def run_main(self, *args):
        """main()'s output for \\p args."""
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(gp.main([str(a) for a in args]), 0)
        return out.getvalue()

    def test_the_whole_breakdown(self):
        text = self.run_main(DATA / "grade2.log", "--reports", DATA / "solutions2",
                             "--title", "run 2")
        for heading in ("# run 2", "## Phases", "## Build", "## Correctness",
                        "### Checker processes", "### How many ran at once", "### Sanitizer tools",
                        "### Public and hidden tests per lab", "### Slowest tests",
                        "### Suites run again, alone", "### Waits", "### Critical path",
                        "## Benchmark", "## Top 10 time sinks"):
            self.assertIn(f"\n{heading}\n", "\n" + text)
        self.assertIn("The phase's last process: tests group_3", text)
        self.assertIn("spread evenly they would end at 51.4 s (2.8 s sooner)", text)
        self.assertIn("its rows add up to 14.2 s, the rest, 1.4 s", text)
        self.assertIn("| group_1 | racecheck | ", text)
        sinks = text.split("## Top 10 time sinks")[1]
        self.assertEqual(len(re.findall(r"^\| (?!what|---)", sinks, re.M)), 10)
        self.assertRegex(sinks, r"\| test AboveUint32Range \(20 runs\) \| 65\.50 \| checker")

    def test_progress_lines_only(self):
        text = self.run_main(DATA / "grade1.log")
        self.assertIn("| course build | 7.4 | 38.1 | 30.7 | - |  |", text)
        self.assertIn("tests #5", text)
        self.assertNotIn("## Benchmark", text)

    def test_part_seconds_table(self):
        import tempfile
        import tomllib
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "part_seconds.toml"
            self.assertEqual(gp.main([str(DATA / "grade2.log"), "--reports",
                                      str(DATA / "solutions2"), "--part-seconds", str(out)]), 0)
            text = out.read_text()
        table = tomllib.loads(text)
        self.assertEqual(table["version"], 1)
        self.assertEqual(table["measured_on"], "NVIDIA H200, 2026-12-02T04:48:04Z")
        parts = table["part_seconds"]
        self.assertEqual(sum(len(ops) for ops in parts.values()), 23)
        self.assertEqual(parts["01_atomic_naive"]["sum"], {"seconds": 20.48, "tests": 71})
        self.assertEqual(parts["18_accuracy"]["sum_reproducible"], {"seconds": 13.68, "tests": 148})
        self.assertIn("--part-seconds", text.split("version = 1")[0])  # the command, in the header
        with self.assertRaises(SystemExit):  # a part's seconds are in the checkers' logs only
            with redirect_stderr(io.StringIO()):
                gp.main([str(DATA / "grade2.log"), "--part-seconds", "unused.toml"])

    def test_part_seconds_of_a_grading_with_launch_specs(self):
        # Since the launch spec, a checker's plan is its group_N.launch.json (no labs.txt); since
        # afdf816 every lab's part runs in a group whose checker started before the build, each
        # part tested once its lab was built (the checker's held line before its first part).
        grading = DATA / "afdf816"
        checkers = gp.checkers_from_progress(gp.read_progress(grading / "grade.log"))
        gp.attach_logs(checkers, grading / "grading" / "logs")
        self.assertEqual(sorted(c.group for c in checkers if c.kind == "tests"),
                         [f"group_{k}" for k in range(6)])
        self.assertTrue(all(c.held_s > 1 for c in checkers if c.kind == "tests"))
        parts = gp.part_seconds(checkers)
        self.assertEqual(len(parts), 23)
        seconds, tests = parts[("01_atomic_naive", "sum")]
        self.assertEqual((round(seconds, 2), tests), (14.91, 70))
        seconds, tests = parts[("14_atomic_max", "atomic_max")]
        self.assertEqual((round(seconds, 2), tests), (10.36, 38))

    def test_numbers_for_none(self):
        self.assertEqual(gp.fmt(None), "-")
        self.assertEqual(gp.fmt(math.nan), "-")
        self.assertEqual(gp.fmt(2.345, 2), "2.35")


class Wording(unittest.TestCase):
    """The lines the tool reads are the grader's, its checkers' and its benchmark's as written:
    a change of their wording fails here first."""
    FRAGMENTS = {
        "autograder/grader/src/correctness/checks.cpp": ["tests in one checker: {}", "again, alone: {} skipped"
                                             " beside other labs", "public tests {}; hidden tests"],
        "autograder/grader/src/correctness/sanitizer_phase.cpp": ["compute-sanitizer --tool {}: {}"],
        "autograder/grader/src/grading/grader.cpp": ["build finished in {:.1f} s", "benchmark of {} lab(s)",
                                             "isolation of the lab's process: ", "CUDA contexts",
                                             "course's binaries {} in {:.1f} s"],
        "autograder/grader/src/submission/build.cpp": ["configure: {} lab{} of {}",
                                            "build: lab libraries ({} targets)"],
        "autograder/grader/src/processes/process.cpp": ["\\n[reduce-grade] {}: {} ({:.1f} s)\\n"],
        "autograder/tests/checker_main.cpp": ["[ lab      ] %s %d %s %s\\n"],
        "autograder/tests/gpu_test.cpp": ["[ memory   ] waited %.2f s for "],
        "autograder/runner/src/lab_runner_channels.cpp": ["answered its first request %.2f s"],
        "common/vocabulary/include/reduce_vocabulary/channels.hpp": [
            "[ startup  ] the checker's CUDA context: ",
            "[ startup  ] held until the labs were built: "],
        "autograder/bench/measurement.cu": ['"setup_s"', '"allocate_s"', '"fill_s"', '"warmup_s"',
                                            '"sampling_s"', '"regenerate_gpu_ms_per_input"',
                                            '"inputs_regenerated"'],
    }

    def test_fragments(self):
        if not (ROOT / "autograder" / "grader" / "src").is_dir():
            self.skipTest("no grader sources beside this tool")
        for rel, fragments in self.FRAGMENTS.items():
            text = (ROOT / rel).read_text()
            for fragment in fragments:
                self.assertIn(fragment, text, f"{rel} no longer says {fragment!r}")


if __name__ == "__main__":
    unittest.main()
