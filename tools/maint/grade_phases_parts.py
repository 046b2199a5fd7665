"""The part-seconds table of grade_phases.py (--part-seconds): each lab part's seconds in a
grading's several-lab tests checkers, as the grader's autograder/part_seconds.toml, by which
reduce-grade weighs its checker groups (checker_groups() in the grader, docs/grader.md)."""
from __future__ import annotations

import json

VERSION = 1  # the table's format: PartSeconds in autograder/grader/src/base/part_seconds.cpp

HEADER = """\
# The measured seconds of each lab part of the correctness phase's several-lab tests checkers:
# its public and hidden tests in one checker, the checker's CUDA context left out. reduce-grade
# splits the parts into its groups by these seconds; a part missing here weighs its number of
# tests times the median seconds per test of the parts below (docs/grader.md says more).
# `tests` is the number of tests the part ran when measured.
#
# Written by tools/maint/grade_phases.py from one grading's logs (do not edit by hand):
#   {command}
"""


def part_seconds(checkers):
    """{(lab, op): (seconds, tests)} of the parts of the several-lab tests checkers whose logs
    were read (a part run alone again is left out: its seconds include a checker of its own)."""
    found = {}
    for c in checkers:
        if c.kind != "tests" or c.alone:
            continue
        for p in c.parts:
            if p.count > 0:
                found.setdefault((p.lab, p.op), (p.ms / 1e3, p.count))
    return found


def measured_on(report):
    """The table's "measured on": the GPU and the start of the grading (report.json)."""
    return ", ".join(str(report[k]) for k in ("gpu", "started_at") if report.get(k)) or "unknown"


def render_toml(parts, on, command):
    """The table as TOML: a header, version, measured_on, then [part_seconds.<lab>] tables of
    `op = { seconds = S, tests = N }`, labs and operations sorted."""
    out = [HEADER.format(command=command), f"version = {VERSION}",
           f"measured_on = {json.dumps(on)}"]
    for lab in sorted({lab for lab, _ in parts}):
        out += ["", f"[part_seconds.{lab}]"]
        for (name, op), (seconds, tests) in sorted(parts.items()):
            if name == lab:
                out.append(f"{op} = {{ seconds = {seconds:.2f}, tests = {tests} }}")
    return "\n".join(out) + "\n"
