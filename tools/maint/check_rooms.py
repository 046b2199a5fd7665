#!/usr/bin/env python3
"""Fails when an include of the grader runs upward between its rooms, or a source of the grader
stands outside them.

  tools/maint/check_rooms.py [ROOT]    check (default ROOT: the repository of this script)

The grader's sources are in folders by phase, from the ground up (ROOMS): a file may include a
header of its own room or of a room below it, never of one above. A source file is
autograder/grader/src/<room>/<name>.cpp (with the room's private headers beside it), its public
header autograder/grader/include/reduce_grade/<room>/<name>.hpp. The command line (cli/) stands
above every room, and the tests (tests/) may include any of them.

Exit status: 0 when every include runs down or stays in its room, 1 otherwise (each is printed).
"""
from __future__ import annotations

import pathlib
import re
import sys

# The rooms, from the ground up, each with what it holds.
ROOMS = (
    ("base", "words every room uses: strings and files, course.json, the rubric, manifests, "
     "the benchmark's results file"),
    ("processes", "starting processes, the sandbox, each GPU's lock, CPUs and memory slots"),
    ("observations", "what one run tells of a lab: a test suite, compute-sanitizer, the "
     "library's symbols, and the facts they make"),
    ("submission", "a submission found, staged and built, and the words of one grading"),
    ("correctness", "the correctness phase: public and hidden suites and the sanitizer"),
    ("benchmark", "the benchmark step"),
    ("scoring", "facts into points"),
    ("reports", "report.json, JUnit, Gradescope, the summary, the student release"),
    ("grading", "one submission and many: the grading, the pipeline, Slurm, the planted corpus"),
)
GRADER = pathlib.Path("autograder/grader")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def room_index(name: str) -> int:
    return [room for room, _ in ROOMS].index(name)


def room_of(path: pathlib.PurePosixPath) -> str | None:
    """The room of a grader source (src/<room>/...) or header (include/reduce_grade/<room>/...)."""
    parts = path.parts
    if len(parts) >= 3 and parts[0] == "src":
        return parts[1]
    if len(parts) >= 4 and parts[:2] == ("include", "reduce_grade"):
        return parts[2]
    return None


def included_room(target: str, own_room: str) -> str | None:
    """The room of an included path: <reduce_grade/<room>/x.hpp>, "<room>/x.hpp" (src/ is on the
    include path) or "x.hpp" (beside the includer)."""
    parts = target.split("/")
    if parts[0] == "reduce_grade":
        return parts[1] if len(parts) >= 3 else "?"
    if len(parts) == 2 and parts[0] in dict(ROOMS):
        return parts[0]
    return own_room if len(parts) == 1 else None


def problems(grader: pathlib.Path) -> list[str]:
    found = []
    rooms = dict(ROOMS)
    for path in sorted(p for p in grader.rglob("*") if p.suffix in (".cpp", ".hpp")):
        rel = pathlib.PurePosixPath(path.relative_to(grader).as_posix())
        if rel.parts[0] not in ("src", "include"):
            continue  # cli/ and tests/ stand above every room
        own = room_of(rel)
        if own not in rooms:
            found.append(f"{rel}: not in a room (one of {', '.join(rooms)})")
            continue
        for target in INCLUDE.findall(path.read_text(errors="replace")):
            other = included_room(target, own)
            if other is None:
                continue  # a library's header
            if other not in rooms:
                found.append(f"{rel}: includes {target}, which is in no room")
            elif room_index(other) > room_index(own):
                found.append(f"{rel}: includes {target}: {own} may not include {other}, a room "
                             "above it")
    return found


def main() -> int:
    root = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2]
    found = problems(root / GRADER)
    for line in found:
        print(f"check_rooms: {line}")
    if found:
        print(f"check_rooms: {len(found)} problem(s); the rooms, from the ground up: "
              + ", ".join(room for room, _ in ROOMS))
        return 1
    print(f"check_rooms: every include of the grader stays in its room or runs down "
          f"({len(ROOMS)} rooms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
