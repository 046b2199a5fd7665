#!/usr/bin/env python3
"""Fails when the course's version and its CHANGELOG disagree.

  tools/maint/check_version.py [ROOT]      (default: the repository holding this script)

The version has one source, project(reduce_course VERSION X.Y.Z ...) in ROOT/CMakeLists.txt; the
grader compiles it in (reduce-grade --version, ctest grader.version). This check holds the rest to
it (CONTRIBUTING.md, "Versions and releases"):

1. CHANGELOG.md's first entry is "## X.Y.Z - unreleased" or "## X.Y.Z - YYYY-MM-DD" with the
   CMake version, and its entries' versions fall from top to bottom.
2. Where ROOT is a git checkout, every tag vA.B.C has an entry A.B.C with a date: a tagged release
   is never "unreleased".

Exit status 0 when everything holds, 1 otherwise, each problem printed on a line of its own.
"""
import pathlib
import re
import subprocess
import sys

PROJECT = re.compile(r"^project\(reduce_course\b[^)]*?\bVERSION\s+(\d+\.\d+\.\d+)\b", re.M)
ENTRY = re.compile(r"^## (?P<version>\S+)(?: - (?P<when>unreleased|\d{4}-\d{2}-\d{2}))?\s*$")
SEMVER = re.compile(r"\d+\.\d+\.\d+")


def key(version: str) -> tuple:
    return tuple(int(part) for part in version.split("."))


def project_version(root: pathlib.Path) -> str:
    """The VERSION of project(reduce_course ...), or "" where there is none."""
    found = PROJECT.search((root / "CMakeLists.txt").read_text())
    return found.group(1) if found else ""


def entries(changelog: str) -> list:
    """(line number, version, date or "unreleased" or None) of every "## " heading."""
    out = []
    for number, line in enumerate(changelog.splitlines(), 1):
        if line.startswith("## "):
            found = ENTRY.match(line)
            out.append((number, found["version"] if found else line[3:].strip(),
                        found["when"] if found else None))
    return out


def git_tags(root: pathlib.Path) -> list:
    """The tags vX.Y.Z of the git checkout at root (none where it is not one, or git is absent)."""
    try:
        listed = subprocess.run(["git", "-C", str(root), "tag", "--list", "v*"], check=True,
                                capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    return [t[1:] for t in listed.split() if SEMVER.fullmatch(t[1:])]


def problems(root: pathlib.Path, tags=None) -> list:
    version = project_version(root)
    if not version:
        return ["CMakeLists.txt: no project(reduce_course VERSION X.Y.Z ...)"]
    changelog = root / "CHANGELOG.md"
    if not changelog.is_file():
        return [f"CHANGELOG.md missing: its top entry must be ## {version} - unreleased (or a date)"]
    found = entries(changelog.read_text())
    if not found:
        return [f"CHANGELOG.md: no entry; its first must be ## {version} - unreleased (or a date)"]
    out = []
    for number, name, when in found:
        if not SEMVER.fullmatch(name) or when is None:
            out.append(f"CHANGELOG.md:{number}: '## {name}' is not '## X.Y.Z - unreleased' or "
                       "'## X.Y.Z - YYYY-MM-DD'")
    number, top, _ = found[0]
    if top != version:
        out.append(f"CHANGELOG.md:{number}: the top entry is {top}, but CMakeLists.txt's "
                   f"project(reduce_course VERSION ...) is {version}: they must be the same")
    named = [(n, v) for n, v, _ in found if SEMVER.fullmatch(v)]
    for (_, upper), (n, lower) in zip(named, named[1:]):
        if key(lower) >= key(upper):
            out.append(f"CHANGELOG.md:{n}: {lower} comes after {upper}: newest first")
    dated = {v for _, v, when in found if when not in (None, "unreleased")}
    for tag in git_tags(root) if tags is None else tags:
        if tag not in dated:
            out.append(f"tag v{tag}: CHANGELOG.md has no entry '## {tag} - YYYY-MM-DD' for it")
    return out


def main() -> int:
    root = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2]
    found = problems(root)
    for problem in found:
        print(problem)
    if found:
        return 1
    print(f"version {project_version(root)}: CMakeLists.txt and CHANGELOG.md agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
