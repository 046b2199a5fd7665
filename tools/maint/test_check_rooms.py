#!/usr/bin/env python3
"""Tests of check_rooms.py on small grader trees written here."""
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_rooms  # noqa: E402


def tree(files: dict) -> pathlib.Path:
    root = pathlib.Path(tempfile.mkdtemp())
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


class Rooms(unittest.TestCase):
    def test_includes_that_run_down_or_stay_pass(self):
        root = tree({
            "src/base/util.cpp": "#include <reduce_grade/base/util.hpp>\n#include <string>\n",
            "src/correctness/checks.cpp": '#include "checks.hpp"\n'
                                          "#include <reduce_grade/processes/process.hpp>\n",
            "src/grading/grader.cpp": '#include "correctness/checks.hpp"\n',
            "include/reduce_grade/reports/report.hpp": "#include <reduce_grade/scoring/score.hpp>\n",
            "cli/main.cpp": "#include <reduce_grade/grading/grader.hpp>\n",
        })
        self.assertEqual(check_rooms.problems(root), [])

    def test_an_include_upward_fails_with_both_rooms_named(self):
        root = tree({"src/correctness/checks.cpp": "#include <reduce_grade/grading/pipeline.hpp>\n",
                     "include/reduce_grade/base/rubric.hpp":
                         '  #  include "benchmark/benchmark.hpp"\n'})
        found = check_rooms.problems(root)
        self.assertEqual(len(found), 2, found)
        self.assertIn("base may not include benchmark", found[0])
        self.assertIn("correctness may not include grading", found[1])

    def test_a_source_outside_the_rooms_and_an_include_of_no_room_fail(self):
        root = tree({"src/flat.cpp": "", "src/attic/old.cpp": "",
                     "src/base/util.cpp": "#include <reduce_grade/util.hpp>\n"})
        found = check_rooms.problems(root)
        self.assertEqual(len(found), 3, found)
        self.assertTrue(any("attic/old.cpp: not in a room" in f for f in found))
        self.assertTrue(any("flat.cpp: not in a room" in f for f in found))
        self.assertTrue(any("reduce_grade/util.hpp, which is in no room" in f for f in found))

    def test_the_course_grader_keeps_its_rooms(self):
        root = pathlib.Path(__file__).resolve().parents[2] / check_rooms.GRADER
        self.assertEqual(check_rooms.problems(root), [])


if __name__ == "__main__":
    unittest.main()
