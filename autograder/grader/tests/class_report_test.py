#!/usr/bin/env python3
"""The rules of tools/class_report.py on made-up batch outputs (no matplotlib needed): the grade
boundaries, the review list, the ranking of failing tests and messages, and bad input."""
import importlib.util
import json
import os
import pathlib
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[3] / "tools" / "class_report.py"
spec = importlib.util.spec_from_file_location("class_report", SCRIPT)
cr = importlib.util.module_from_spec(spec)
sys.modules["class_report"] = cr  # dataclasses look their module up by name
spec.loader.exec_module(cr)

GRADEBOOK = "student,total,max,04_sequential,seed,status,reason\n"


def lab(name="04_sequential", score=10, **parts):
    """A lab of report.json with full marks, changed by \\p parts."""
    entry = {"lab": name, "status": "graded", "score": score, "max_score": 10, "messages": [],
             "build": {"ok": True, "timed_out": False}, "library": {"forbidden": []},
             "tests": [], "hidden": [], "sanitizer": [],
             "performance": {"ran": True, "problem": "", "gbps": 2000.0, "fraction": 0.6,
                             "threshold": 0.158, "floor": 0.063}}
    entry.update(parts)
    return entry


def submission(name, *labs, score=None):
    """A Submission with a report of \\p labs."""
    total = sum(l["score"] for l in labs) if score is None else score
    report = {"score": total, "max_score": 10 * len(labs), "gpu_available": True, "labs": list(labs)}
    return cr.Submission(name=name, folder=pathlib.Path("/nonexistent") / name, report=report)


def suite(*tests, **flags):
    """A test suite of report.json with the (name, result, message) \\p tests."""
    s = {"timed_out": False, "output_flood": False,
         "tests": [{"name": n, "result": r, "message": m} for n, r, m in tests]}
    s.update(flags)
    return s


class NearBoundary(unittest.TestCase):
    def test_just_below_a_boundary(self):
        self.assertEqual(cr.near_boundary(58.5, 100), 60)
        self.assertEqual(cr.near_boundary(58, 100), 60)  # exactly 2 points below counts
        self.assertEqual(cr.near_boundary(134, 150), 90)  # 89.3 %
        self.assertEqual(cr.near_boundary(8.5, 100), 10)

    def test_not_near(self):
        self.assertIsNone(cr.near_boundary(60, 100))  # made it
        self.assertIsNone(cr.near_boundary(57.9, 100))  # more than 2 points short
        self.assertIsNone(cr.near_boundary(99, 100))  # 100 % is not a grade boundary
        self.assertIsNone(cr.near_boundary(0, 0))

    def test_width(self):
        self.assertEqual(cr.near_boundary(55, 100, near=5), 60)
        self.assertIsNone(cr.near_boundary(55, 100, near=2))


class Review(unittest.TestCase):
    def kinds(self, s):
        return [k for k, _ in cr.review_reasons(s)]

    def test_clean_full_marks(self):
        self.assertEqual(cr.review_reasons(submission("a", lab())), [])

    def test_each_reason(self):
        dirty = {"tool": "racecheck", "ran": True, "clean": False, "problems": 5, "errors": 0,
                 "hazards": 5}
        self.assertEqual(self.kinds(submission("a", lab(sanitizer=[dirty]))), ["sanitizer"])
        # The untouched stub's sanitizer runs say nothing about the student's code.
        self.assertEqual(self.kinds(submission("a", lab(status="stub", sanitizer=[dirty]))), [])
        fast = lab(performance={"ran": False, "problem": "physically impossible: sum read at "
                                "9000 GB/s", "threshold": 0.1, "floor": 0.04})
        self.assertEqual(self.kinds(submission("a", fast)), ["impossible speed"])
        self.assertEqual(self.kinds(submission("a", lab(tests=[suite(timed_out=True)]))),
                         ["timeout"])
        self.assertEqual(self.kinds(submission("a", lab(hidden=[suite(output_flood=True)]))),
                         ["timeout"])
        self.assertEqual(self.kinds(submission("a", lab(build={"ok": False, "timed_out": True}))),
                         ["timeout"])
        self.assertEqual(self.kinds(submission("a", lab(score=5.9))), ["near boundary"])
        flagged = lab(flagged_for_review="its process made a forbidden system call in S.t")
        self.assertEqual(self.kinds(submission("a", flagged)), ["sandbox"])
        self.assertEqual(self.kinds(submission("a", lab(flagged_for_review=None))), [])

    def test_library_one_line_per_lab(self):
        findings = [{"kind": "header", "what": f"cub header {i}"} for i in range(40)]
        reasons = cr.review_reasons(submission("a", lab(library={"forbidden": findings})))
        self.assertEqual(len(reasons), 1)
        self.assertEqual(reasons[0][0], "library")
        self.assertIn("40 forbidden library findings", reasons[0][1])

    def test_not_graded_and_unreadable(self):
        s = cr.Submission(name="x", folder=pathlib.Path("/nonexistent"), error="build crashed")
        self.assertEqual(self.kinds(s), ["not graded"])
        s = cr.Submission(name="y", folder=pathlib.Path("/nonexistent"), unreadable="bad JSON")
        self.assertEqual(self.kinds(s), ["unreadable"])


class Rankings(unittest.TestCase):
    def test_failing_tests_most_frequent_first(self):
        a = ("Sum.Tail", "failed", "n = 1025: got 1024")
        b = ("Sum.Empty", "failed", "n = 0: threw")
        ok = ("Sum.Small", "passed", "")
        subs = [
            submission("s1", lab(tests=[suite(a, ok), suite(a)])),  # counted once for s1
            submission("s2", lab(tests=[suite(a, b)])),
            submission("s3", lab(tests=[suite(ok)], hidden=[suite(a)])),
        ]
        ranked = cr.failing_tests(subs)
        self.assertEqual([(f.what, f.students) for f in ranked],
                         [("Sum.Tail", ["s1", "s2"]), ("Sum.Empty", ["s2"]),
                          ("hidden: Sum.Tail", ["s3"])])
        self.assertEqual(ranked[0].messages.most_common(1)[0], ("n = 1025: got 1024", 3))

    def test_messages_differing_in_numbers_count_together(self):
        subs = [submission("s1", lab(messages=["public tests: passed 30 of 33"])),
                submission("s2", lab(messages=["public tests: passed 31 of 33"])),
                submission("s3", lab(messages=["missing: 09_warp_shuffle/ (the lab folder)"]))]
        ranked = cr.frequent_messages(subs)
        self.assertEqual(ranked[0].what, "public tests: passed N of N")
        self.assertEqual(ranked[0].students, ["s1", "s2"])
        self.assertEqual(len(ranked[0].messages), 2)
        self.assertEqual(ranked[1].what, "missing: 09_warp_shuffle/ (the lab folder)")


class BadInput(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = pathlib.Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def assert_error(self, folder, text):
        with self.assertRaises(cr.BatchError) as e:
            cr.load_batch(folder)
        self.assertIn(text, str(e.exception))

    def test_not_a_batch(self):
        self.assert_error(self.dir / "missing", "not found")
        (self.dir / "alice" / "04_sequential").mkdir(parents=True)  # submissions, not reports
        self.assert_error(self.dir, "not a batch output")
        (self.dir / "report.json").write_text("{}")
        self.assert_error(self.dir, "one submission's report folder")

    def test_empty_batch(self):
        (self.dir / "gradebook.csv").write_text(GRADEBOOK)
        self.assert_error(self.dir, "empty batch")

    def test_not_a_gradebook(self):
        (self.dir / "gradebook.csv").write_text("name,points\nalice,3\n")
        self.assert_error(self.dir, "not a reduce-grade gradebook")

    def test_unreadable_report_is_kept_with_its_gradebook_points(self):
        (self.dir / "gradebook.csv").write_text(
            GRADEBOOK + "alice,7,10,7,1,graded,\nbob,0,10,0,0,error: no space,\n"
            "carol,10,10,10,2,graded,\n")
        (self.dir / "alice").mkdir()
        (self.dir / "alice" / "report.json").write_text('{"labs": [')
        (self.dir / "bob").mkdir()
        (self.dir / "bob" / "error.txt").write_text("no space left on device\n")
        (self.dir / "carol").mkdir()
        (self.dir / "carol" / "report.json").write_text(
            json.dumps(submission("carol", lab()).report))
        batch = cr.load_batch(self.dir)
        alice, bob, carol = batch.submissions
        self.assertTrue(alice.unreadable)
        self.assertIsNone(alice.report)
        self.assertEqual(bob.error, "no space left on device")
        self.assertEqual([s.name for s in batch.graded()], ["carol"])
        (summary,) = cr.lab_summaries(batch)
        self.assertEqual(sorted(summary.scores), [7.0, 10.0])  # bob, not graded, is left out
        self.assertEqual(alice.total(), (7.0, 10.0))


class HostileNames(unittest.TestCase):
    """Student folders named to trip a reader's tools: a spreadsheet formula, terminal escapes, and
    bytes that are not UTF-8. The page is written for the whole class, each name inert, each
    gradebook row with its own folder."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = pathlib.Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_the_page_survives_any_name(self):
        folders = [b'=HYPERLINK("x")', b"\x1b]0;pwned\x07", b"\xff\xfe", b"alice"]
        # The gradebook as reduce-grade writes it: names inert, formulas neutralised.
        (self.dir / "gradebook.csv").write_text(
            GRADEBOOK + '"\'=HYPERLINK(""x"")",10,10,10,1,graded,\n'
            "\\x1b]0;pwned\\x07,10,10,10,1,graded,\n\\xff\\xfe,10,10,10,1,graded,\n"
            "alice,0,10,0,0,error: none,\n")
        for raw in folders[:3]:
            name = os.fsdecode(raw)
            (self.dir / name).mkdir()
            (self.dir / name / "report.json").write_text(
                json.dumps(submission(name, lab()).report))
        (self.dir / "alice").mkdir()
        (self.dir / "alice" / "error.txt").write_text("not graded\n")
        charts = cr.make_charts
        cr.make_charts = lambda batch, summaries, out, near: {
            "totals": "t.png", "bandwidth": "b.png", "04_sequential": "s.png"}
        try:
            page, batch = cr.write_report(self.dir)
        finally:
            cr.make_charts = charts
        self.assertEqual([os.fsencode(s.name) for s in batch.submissions], folders)
        self.assertEqual(len(batch.graded()), 3)
        html = page.read_bytes()
        text = html.decode("utf-8")  # strict: the page is UTF-8 throughout
        self.assertNotIn(b"\x1b", html)
        self.assertNotIn(b"\x07", html)
        self.assertIn("=HYPERLINK(&quot;x&quot;)", text)
        self.assertIn("\\x1b]0;pwned\\x07", text)
        self.assertIn("\\xff\\xfe", text)
        self.assertIn('href="../%FF%FE/report.json"', text)

    def test_inert_and_unescape(self):
        self.assertEqual(cr.inert("a\x1b[2J\u009b\u202e\udcff\tb\n"), "a\\x1b[2J\\u009b\\u202e\\xff\tb\n")
        self.assertEqual(cr.unescape("\\x1b]0;t\\x07\\xff"), "\x1b]0;t\x07\udcff")
        self.assertEqual(cr.student_folder(self.dir, "'=1+1"), "'=1+1")  # no such folder
        (self.dir / "=1+1").mkdir()
        self.assertEqual(cr.student_folder(self.dir, "'=1+1"), "=1+1")
        self.assertEqual(cr.student_folder(self.dir, ".."), "..")  # never outside the batch


if __name__ == "__main__":
    unittest.main()
