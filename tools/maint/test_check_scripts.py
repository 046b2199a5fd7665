#!/usr/bin/env python3
"""Tests of check_scripts.py: Python and shell functions found and measured, exceptions honoured,
and stale exceptions reported, on files written here (a throwaway git repository); and the C++
files check_house.py reads."""
import pathlib
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_house  # noqa: E402
import check_scripts  # noqa: E402


def python_function(name, body_lines):
    return f"def {name}():\n" + "".join(f"    x = {i}\n" for i in range(body_lines))


class Functions(unittest.TestCase):
    def test_python_module_and_class_scope_nested_counts_toward_parent(self):
        text = ("def a():\n    def inner():\n        pass\n    return 1\n\n"
                "class C:\n    def b(self):\n        return 2\n")
        self.assertEqual(check_scripts.python_functions(text),
                         [("a", 1, 4), ("b", 7, 8)])

    def test_shell_functions_with_quotes_expansions_and_one_liners(self):
        text = "\n".join([
            "#!/usr/bin/env bash",
            "note() { echo \"}\"; }",
            "work() {",
            "  local x=${1:-{}}",  # an expansion whose default is a brace pair
            "  echo '{'  # a quoted brace",
            "  if true; then { echo a; }; fi",
            "}",
            "function other {",
            "  :",
            "}",
        ])
        self.assertEqual(check_scripts.shell_functions(text),
                         [("note", 2, 2), ("work", 3, 7), ("other", 8, 10)])


class Offenders(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.dir.name)
        subprocess.run(["git", "init", "-q"], cwd=self.root, check=True)
        (self.root / "tools").mkdir()

    def tearDown(self):
        self.dir.cleanup()

    def write(self, rel, text):
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def test_long_function_big_file_and_planted_cases_skipped(self):
        self.write("tools/long.py", python_function("long", 85))
        self.write("tools/big.sh", "#!/bin/sh\n" + ":\n" * 705)
        self.write("tools/script", "#!/usr/bin/env python3\n" + python_function("ok", 10))
        self.write("autograder/planted/case/x.py", python_function("ignored", 200))
        problems, files, _ = check_scripts.offenders(self.root, 700, 80)
        self.assertEqual(files, 3)
        self.assertEqual(len(problems), 2, problems)
        self.assertTrue(any("tools/long.py:1: long has 86 lines" in p for p in problems))
        self.assertTrue(any("tools/big.sh has 706 lines" in p for p in problems))

    def test_stated_exceptions_excuse_and_go_stale(self):
        self.write("tools/long.py", python_function("long", 85))
        saved = dict(check_scripts.EXCEPTIONS)
        try:
            check_scripts.EXCEPTIONS.clear()
            check_scripts.EXCEPTIONS[("tools/long.py", "long")] = "a reason"
            self.assertEqual(check_scripts.offenders(self.root, 700, 80)[0], [])
            self.assertEqual(check_scripts.stale_exceptions(self.root, 700, 80), [])
            self.write("tools/long.py", python_function("long", 10))
            self.assertEqual(len(check_scripts.stale_exceptions(self.root, 700, 80)), 1)
        finally:
            check_scripts.EXCEPTIONS.clear()
            check_scripts.EXCEPTIONS.update(saved)

    def test_house_files_are_the_autograder_and_the_vocabulary(self):
        for rel in ("autograder/runner/a.cpp", "autograder/planted/case/b.cu",
                    "common/vocabulary/include/reduce_vocabulary/c.hpp", "common/include/d.cuh",
                    "common/vocabularies/e.hpp", "labs/01/f.cu"):
            self.write(rel, "int x;\n")
        self.assertEqual(check_house.house_files(self.root),
                         ["autograder/runner/a.cpp",
                          "common/vocabulary/include/reduce_vocabulary/c.hpp"])

    def test_the_course_itself_is_within_its_limits(self):
        root = pathlib.Path(__file__).resolve().parents[2]
        self.assertEqual(check_scripts.offenders(root, 700, 80)[0], [])
        self.assertEqual(check_scripts.stale_exceptions(root, 700, 80), [])


if __name__ == "__main__":
    unittest.main()
