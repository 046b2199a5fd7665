#!/usr/bin/env python3
"""Fails when a C++ or CUDA file of the course differs from what .clang-format asks for.

  tools/maint/check_format.py [ROOT]            check (default ROOT: the repository of this script)
  tools/maint/check_format.py --fix [ROOT]      rewrite the files that differ, in place
  tools/maint/check_format.py --install         install the pinned clang-format, then exit

Checks every *.cu, *.cuh, *.cpp, *.hpp and *.h file under common/, labs/, solutions/ and
autograder/ (those git tracks, and new files git does not ignore), except autograder/planted/:
the planted-bug cases are submissions the grader is tested on, kept byte for byte as written.

One clang-format version formats the course: PINNED below, PyPI's `clang-format` wheel (other
versions format some constructs differently, so no other is used). It is looked up, in order, as
$REDUCE_CLANG_FORMAT, as `clang-format` on PATH where that is the pinned version, and in the
virtual environment that --install creates ($XDG_CACHE_HOME or ~/.cache, then
reduce-course/clang-format-PINNED). tools/setup and .ci/run run --install.

Exit status: 0 when every file conforms (or --fix rewrote them), 1 when one differs (each is
printed with its diff), 77 when the pinned clang-format is not installed, which ctest reports as
a skip; with REDUCE_FORMAT_REQUIRED=1 in the environment (CI sets it) that is an error instead (1).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import difflib
import os
import pathlib
import shutil
import subprocess
import sys

PINNED = "20.1.8"
FOLDERS = ("common", "labs", "solutions", "autograder")
EXTENSIONS = (".cu", ".cuh", ".cpp", ".hpp", ".h")
EXCLUDED = ("autograder/planted/",)
SKIP = 77


def venv_dir() -> pathlib.Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(cache) / "reduce-course" / f"clang-format-{PINNED}"


def version_of(binary: str) -> str:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    # "clang-format version 20.1.8", or a distribution's "Debian clang-format version 14.0.6"
    words = out.stdout.split()
    return words[words.index("version") + 1] if "version" in words[:-1] else ""


def find_clang_format() -> tuple[str | None, list[str]]:
    """The pinned clang-format, or None and what was found instead."""
    seen = []
    candidates = [os.environ.get("REDUCE_CLANG_FORMAT"), shutil.which("clang-format"),
                  str(venv_dir() / "bin" / "clang-format")]
    for binary in candidates:
        if not binary or not os.access(binary, os.X_OK):
            continue
        version = version_of(binary)
        if version == PINNED:
            return binary, seen
        seen.append(f"{binary} ({version or 'no version'})")
    return None, seen


def install() -> int:
    venv = venv_dir()
    binary = venv / "bin" / "clang-format"
    if os.access(binary, os.X_OK) and version_of(str(binary)) == PINNED:
        print(f"check_format: clang-format {PINNED} is installed: {binary}")
        return 0
    try:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                        "--disable-pip-version-check", "--only-binary", ":all:",
                        f"clang-format=={PINNED}"], check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"check_format: could not install clang-format {PINNED} from PyPI into {venv}: {e}"
              " (python3 -m venv needs Debian's python3-venv)", file=sys.stderr)
        return 1
    if version_of(str(binary)) != PINNED:
        print(f"check_format: {binary} is not clang-format {PINNED}", file=sys.stderr)
        return 1
    print(f"check_format: installed clang-format {PINNED} from PyPI: {binary}")
    return 0


def course_files(root: pathlib.Path) -> list[pathlib.Path]:
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard", "--", *FOLDERS],
                             capture_output=True, text=True, check=True)
        names = sorted(set(n for n in out.stdout.split("\0") if n))
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every file there
        names = sorted(str(p.relative_to(root)) for folder in FOLDERS
                       for p in (root / folder).rglob("*") if p.is_file())
    return [root / n for n in names
            if n.endswith(EXTENSIONS) and not n.startswith(EXCLUDED) and (root / n).is_file()]


def formatted(binary: str, path: pathlib.Path) -> str:
    # --style=file finds the .clang-format above the file, whatever the working directory.
    out = subprocess.run([binary, "--style=file", str(path)], capture_output=True, check=True)
    return out.stdout.decode("utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parents[2])
    parser.add_argument("--fix", action="store_true", help="rewrite the files that differ")
    parser.add_argument("--install", action="store_true",
                        help=f"install clang-format {PINNED} from PyPI, then exit")
    args = parser.parse_args()
    if args.install:
        return install()

    binary, seen = find_clang_format()
    if binary is None:
        required = os.environ.get("REDUCE_FORMAT_REQUIRED", "") not in ("", "0")
        print(f"check_format: {'FAILED' if required else 'SKIPPED'}: clang-format {PINNED} is not"
              f" installed (found: {', '.join(seen) or 'none'}); install it with"
              f" tools/maint/check_format.py --install (tools/setup does)")
        return 1 if required else SKIP

    root = args.root.resolve()
    files = course_files(root)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        results = list(pool.map(lambda p: (p, formatted(binary, p)), files))
    differ = []
    for path, want in results:
        have = path.read_text(encoding="utf-8")
        if have == want:
            continue
        rel = str(path.relative_to(root))
        differ.append(rel)
        if args.fix:
            path.write_text(want, encoding="utf-8")
            continue
        diff = list(difflib.unified_diff(have.splitlines(keepends=True),
                                         want.splitlines(keepends=True), rel, rel + " (formatted)"))
        sys.stdout.writelines(diff[:60])
        if len(diff) > 60:
            print(f"... ({len(diff) - 60} more diff lines)")
    if args.fix:
        print(f"check_format: clang-format {PINNED} rewrote {len(differ)} of {len(files)} files")
        for rel in differ:
            print(f"  {rel}")
        return 0
    if differ:
        print(f"check_format: {len(differ)} of {len(files)} files differ from .clang-format"
              f" (clang-format {PINNED}): {' '.join(differ)}")
        print("check_format: fix them with: python3 tools/maint/check_format.py --fix")
        return 1
    print(f"check_format: {len(files)} files match .clang-format (clang-format {PINNED})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
