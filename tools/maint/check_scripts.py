"""The house limits for the course's Python and shell tools (check_house.py reads them too).

Files: every Python file (*.py, or a file whose first line names python) and every shell script
(*.sh, or a first line naming bash or sh) that git tracks, or that is new and not ignored, under
tools/, autograder/ (except autograder/planted/, whose cases are kept as written), .ci/ and
notebooks/. The limits are check_house.py's: a file of at most 700 lines, a function of at most 80.

Python functions are read with the ast module: a function at module or class scope, from its
`def` line to its last line (a nested function counts toward the one around it). Shell functions
are `name() {` or `function name {` at the start of a line, to the line where their braces close
(braces inside quotes are skipped; `${...}` expansions balance themselves).

A file or function may be over its limit only with a stated exception in EXCEPTIONS below: the
reason, and what would split it.
"""
from __future__ import annotations

import ast
import pathlib
import re
import subprocess

FOLDERS = ("tools", "autograder", ".ci", "notebooks")
SKIPPED = ("autograder/planted/",)

# (path, function or None for the whole file): why it is over its limit, and the way out.
EXCEPTIONS: dict[tuple[str, str | None], str] = {}

_SHEBANG_PY = re.compile(r"^#!.*\bpython")
_SHEBANG_SH = re.compile(r"^#!.*\b(ba)?sh\b")
_SHELL_FUNCTION = re.compile(r"^\s*(?:function\s+([\w:-]+)\s*(?:\(\))?|([\w:-]+)\s*\(\))\s*\{")


def kind_of(root: pathlib.Path, rel: str) -> str | None:
    """'python', 'shell' or None for a file that is neither."""
    path = root / rel
    if rel.endswith(".py"):
        return "python"
    if rel.endswith(".sh"):
        return "shell"
    if path.suffix or not path.is_file():
        return None
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            first = f.readline()
    except OSError:
        return None
    if _SHEBANG_PY.match(first):
        return "python"
    return "shell" if _SHEBANG_SH.match(first) else None


def script_files(root: pathlib.Path) -> list[tuple[str, str]]:
    """(path relative to root, kind) of every Python file and shell script of the house."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *FOLDERS],
        cwd=root, capture_output=True, text=True, check=True).stdout.split("\n")
    found = []
    for rel in sorted(set(filter(None, listed))):
        if rel.startswith(SKIPPED) or not (root / rel).is_file():
            continue
        kind = kind_of(root, rel)
        if kind:
            found.append((rel, kind))
    return found


def python_functions(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of each function at module or class scope."""
    found = []
    scopes = [ast.parse(text)]
    while scopes:
        for node in scopes.pop().body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((node.name, node.lineno, node.end_lineno or node.lineno))
            elif isinstance(node, ast.ClassDef):
                scopes.append(node)
    return found


def _brace_balance(line: str) -> int:
    """Opening minus closing braces of a shell line, outside quotes and comments."""
    balance, quote = 0, ""
    for i, c in enumerate(line):
        if quote:
            if c == quote and (quote == "'" or line[i - 1] != "\\"):
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t;"):
            break
        elif c == "{":
            balance += 1
        elif c == "}":
            balance -= 1
    return balance


def shell_functions(text: str) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of each shell function."""
    lines = text.split("\n")
    found, i = [], 0
    while i < len(lines):
        match = _SHELL_FUNCTION.match(lines[i])
        if not match:
            i += 1
            continue
        depth, last = 0, i
        for last in range(i, len(lines)):
            depth += _brace_balance(lines[last])
            if depth <= 0:
                break
        found.append((match.group(1) or match.group(2), i + 1, last + 1))
        i = last + 1
    return found


def offenders(root: pathlib.Path, max_file: int, max_function: int) -> tuple[list[str], int, int]:
    """(problems, files read, functions read) of the scripts, stated exceptions left out."""
    problems, files, functions = [], 0, 0
    for rel, kind in script_files(root):
        text = (root / rel).read_text(encoding="utf-8", errors="replace")
        files += 1
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > max_file and (rel, None) not in EXCEPTIONS:
            problems.append(f"{rel} has {lines} lines (at most {max_file})")
        try:
            found = python_functions(text) if kind == "python" else shell_functions(text)
        except SyntaxError as e:
            problems.append(f"cannot read the functions of {rel}: {e}")
            continue
        functions += len(found)
        for name, first, last in found:
            if last - first + 1 > max_function and (rel, name) not in EXCEPTIONS:
                problems.append(f"{rel}:{first}: {name} has {last - first + 1} lines"
                                f" (at most {max_function})")
    return problems, files, functions


def stale_exceptions(root: pathlib.Path, max_file: int, max_function: int) -> list[str]:
    """The exceptions that no longer excuse anything: the file or function is within its limit
    now (or gone), so the exception should go too."""
    stale = []
    for rel, name in EXCEPTIONS:
        path = root / rel
        if not path.is_file():
            stale.append(f"{rel}: no such file")
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if name is None:
            if text.count("\n") <= max_file:
                stale.append(f"{rel}: within {max_file} lines now")
            continue
        kind = kind_of(root, rel)
        found = python_functions(text) if kind == "python" else shell_functions(text)
        if not any(n == name and last - first + 1 > max_function for n, first, last in found):
            stale.append(f"{rel}: {name} is within {max_function} lines now (or gone)")
    return stale
