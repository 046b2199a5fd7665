#!/usr/bin/env python3
"""Tests of check_version.py on small course roots written here."""
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_version  # noqa: E402

CMAKE = "cmake_minimum_required(VERSION 3.25)\nproject(reduce_course VERSION {} LANGUAGES CXX)\n"


def root(version: str, changelog) -> pathlib.Path:
    path = pathlib.Path(tempfile.mkdtemp())
    (path / "CMakeLists.txt").write_text(CMAKE.format(version))
    if changelog is not None:
        (path / "CHANGELOG.md").write_text(changelog)
    return path


class Version(unittest.TestCase):
    def test_matching_version_and_entries_pass(self):
        text = "# Changelog\n\n## 1.1.0 - unreleased\n\n- more\n\n## 1.0.0 - 2026-12-02\n"
        self.assertEqual(check_version.problems(root("1.1.0", text), tags=["1.0.0"]), [])

    def test_a_top_entry_other_than_the_cmake_version_fails(self):
        found = check_version.problems(root("1.1.0", "## 1.0.0 - unreleased\n"), tags=[])
        self.assertEqual(len(found), 1, found)
        self.assertIn("the top entry is 1.0.0", found[0])
        self.assertIn("is 1.1.0", found[0])

    def test_no_version_no_changelog_and_a_bad_heading_fail(self):
        no_version = root("1.0.0", "## 1.0.0 - unreleased\n")
        (no_version / "CMakeLists.txt").write_text("project(reduce_course LANGUAGES CXX)\n")
        self.assertIn("no project(reduce_course VERSION",
                      check_version.problems(no_version, tags=[])[0])
        self.assertIn("CHANGELOG.md missing", check_version.problems(root("1.0.0", None))[0])
        found = check_version.problems(root("1.0.0", "## 1.0.0 - unreleased\n## Older\n"), tags=[])
        self.assertTrue(any("'## Older' is not" in f for f in found), found)

    def test_entries_out_of_order_fail(self):
        text = "## 1.0.0 - unreleased\n## 1.2.0 - 2026-01-01\n"
        found = check_version.problems(root("1.0.0", text), tags=[])
        self.assertTrue(any("1.2.0 comes after 1.0.0" in f for f in found), found)

    def test_a_tagged_version_still_unreleased_fails(self):
        found = check_version.problems(root("1.0.0", "## 1.0.0 - unreleased\n"), tags=["1.0.0"])
        self.assertEqual(len(found), 1, found)
        self.assertIn("tag v1.0.0", found[0])

    def test_the_course_agrees(self):
        course = pathlib.Path(__file__).resolve().parents[2]
        self.assertEqual(check_version.problems(course), [])


if __name__ == "__main__":
    unittest.main()
