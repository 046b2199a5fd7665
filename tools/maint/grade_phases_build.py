"""The build's part of grade_phases.py: the phases' bounds and the build's steps, from the progress
lines (and, with the report folder, each step's process log).

The build's steps are on two tracks: the course's (its configure and build, or the shared course
build of a batch) and the labs' (the build's sandbox, the staging and configure, the lab
libraries). Where a grading builds the course's binaries itself, the two run at once
(prepare_submission() in autograder/grader/src/grading/grader.cpp): the course's track then ends
at its own line ("course's binaries built in 25.9 s"), the labs' at "build finished in", and the
build phase at the later of the two. An older log, where they ran one after the other, has no
such line: there the course's last step ends where the labs' first begins.
"""
from __future__ import annotations

import re
from pathlib import Path

from grade_phases_bench import fmt, table

EXIT = re.compile(r"^\[reduce-grade\] (.+?): (.+) \((\d+(?:\.\d+)?) s\)\s*$")
LABS_DONE = ("build finished in",)
COURSE_DONE = ("course's binaries built in", "course's binaries failed to build in")
BUILD_STEPS = [  # (progress line's start, step, log file of its process, track)
    ("configure: the course's", "course configure", "course-configure.log", "course"),
    ("build: the course's binaries", "course build", "course-build.log", "course"),
    ("course: using the course build", "course build (shared)", None, "course"),
    ("isolation of the build", "build isolation", None, "labs"),
    ("configure: ", "lab staging and configure", "configure.log", "labs"),
    ("build: lab libraries", "lab libraries (ninja, then the library checks)",
     "build-libraries.log", "labs"),
]


def exit_seconds(path):
    """Seconds of the process a grader log ends with ('[reduce-grade] X: exit 0 (3.6 s)')."""
    if path is None or not Path(path).is_file():
        return None
    found = None
    for line in Path(path).read_text(errors="replace").splitlines():
        m = EXIT.match(line)
        if m:
            found = float(m.group(3))
    return found


def first_line(lines, starts):
    """When the first progress line that starts with one of \\p starts was printed (None: no
    line does)."""
    return next((t for t, text in lines if text.startswith(starts)), None)


def build_ends(lines):
    """(the labs' build's end, the course's build's end where it ran beside them): None where the
    log has no such line."""
    return first_line(lines, LABS_DONE), first_line(lines, COURSE_DONE)


def phases(lines, report):
    """[(phase, start, end)]: build, correctness and benchmark."""
    def first(pattern, default=None):
        return next((t for t, text in lines if re.match(pattern, text)), default)

    end = report.get("seconds") or (lines[-1][0] if lines else 0.0)
    ends = [t for t in build_ends(lines) if t is not None]
    build_end = max(ends) if ends else first("isolation of the lab's process", 0.0)
    bench, contexts = first("benchmark of "), first(r"\d+ CUDA contexts: ", end)
    out = [("build", 0.0, build_end), ("correctness (tests, hidden tests, sanitizer)", build_end,
                                        bench if bench is not None else contexts)]
    return out + ([("benchmark", bench, contexts)] if bench is not None else [])


def build_steps(lines, logs):
    """[(step, start, end, process seconds or None, note)] of the build phase: the course's
    track, then the labs'. A step ends where the next of its track begins, a track's last one at
    its track's end line; without that line (a log of one build after the other), where the next
    step of either track begins, else at the build's end."""
    finished, course_done = build_ends(lines)
    last = max((t for t in (finished, course_done) if t is not None), default=None)
    marks = []
    for t, text in lines:
        if last is not None and t > last:
            break
        for prefix, name, log, track in BUILD_STEPS:
            if text.startswith(prefix) and not any(m[1] == name for m in marks):
                marks.append((t, name, log, track))
                break
    steps = []
    for track, done in (("course", course_done), ("labs", finished)):
        mine = [m for m in marks if m[3] == track]
        for i, mark in enumerate(mine):
            t, name, log, _ = mark
            later = marks[marks.index(mark) + 1:]
            end = (mine[i + 1][0] if i + 1 < len(mine) else done if done is not None
                   else later[0][0] if later else finished or t)
            secs = exit_seconds(logs / log) if logs is not None and log else None
            steps.append((name, t, end, secs, ninja_note(logs / log) if logs and log else ""))
    return steps


def ninja_note(path):
    """'N ninja steps' of a build log (of the trimmed logs: its last line), or what cmake says
    it spent configuring."""
    if not path.is_file():
        return ""
    text = path.read_text(errors="replace")
    steps = re.findall(r"^\[(\d+)/(\d+)\] (.*)$", text, re.M)
    if steps:  # common/: the course's own code, built again with the labs
        common = sum(1 for *_, what in steps if " common/" in what)
        return f"{steps[-1][1]} ninja steps" + (f", {common} of them common/" if common else "")
    conf = re.search(r"Configuring done \((\d+(?:\.\d+)?)s\)", text)
    return f"cmake's configuring {conf.group(1)} s" if conf else ""


def render_build(lines, logs):
    """The build steps: wall time between progress lines and each process's own seconds."""
    steps = build_steps(lines, logs)
    rows = [(name, fmt(a), fmt(b), fmt(b - a), fmt(secs), note)
            for name, a, b, secs, note in steps]
    out = ["## Build", ""] + table(("step", "start s", "end s", "wall s", "its process s", "note"),
                                   rows)
    for name, a, b, secs, _ in steps:
        if name.startswith("lab libraries") and secs is not None:
            out += ["", f"After ninja's exit: {fmt(b - a - secs)} s until \"build finished\" "
                    "(each built lab's library checks, inspect_built_lab())."]
    finished, course_done = build_ends(lines)
    if finished is not None and course_done is not None:
        out += ["", f"The course's binaries were built beside the labs (their steps overlap): the "
                f"labs' build ended at {fmt(finished)} s, the course's at {fmt(course_done)} s, "
                f"and the build phase with the later."]
    return out + [""]
