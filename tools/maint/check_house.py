#!/usr/bin/env python3
"""Fails when a C++ or CUDA file of autograder/ or common/vocabulary/, or a Python or shell tool
of the course, is over 700 lines or one of its functions over 80 (check_scripts.py reads the
tools; a stated exception there excuses one file or function).

  tools/maint/check_house.py [ROOT]            check (default ROOT: the repository of this script)
  tools/maint/check_house.py --top N [ROOT]    also print the N longest functions and largest files

Files: every *.cpp, *.hpp, *.cu, *.cuh and *.h under autograder/ and common/vocabulary/ (the
words the autograder's processes share, reduce::vocabulary) that git tracks (and new files git
does not ignore), except autograder/planted/: the planted-bug cases are submissions the grader
is tested on, kept byte for byte as written. The list is check_format.py's (course_files()),
so the two checks read the same files. A file's size is its number of lines.

Functions: a function's length is the number of lines from the first line of its signature (a
`template <...>` line included, the comment above it not) to the line of its closing brace.
Every body found at namespace or class scope counts: free functions, member functions written
inside their class, constructors (with their initializer lists), operators, GoogleTest's TEST,
TEST_F and TEST_P bodies (any `NAME(...) {` at that scope), and a lambda assigned to a variable
there. Everything inside a body is part of it: lambdas, local classes and braced initializers
count toward the function around them.

How it reads a file (no compiler: it relies on the code being clang-formatted): comments, string
and character literals (raw strings and digit separators included) and preprocessor lines are
blanked out; then the braces are matched. At namespace or class scope the text since the last
`;`, `{` or `}` is the head of a `{`:
- `namespace ...`, `extern "C"`: a namespace scope;
- `class`, `struct`, `union` (after an optional `template <...>`): a class scope, where member
  functions are found the same way;
- `enum ...`, a head with `=` (an initializer, `= {...}`) or without parentheses: data, skipped;
- `... = [...](...) ... {`: a lambda held by a variable: a function;
- any other head with parentheses: a function; its body ends at the matching `}`.
A `{` that follows a name with no space (`member_{x}` in an initializer list, `Type{...}`) or
that is inside parentheses (a default argument `= {}`) is a braced initializer, part of the head.

Known limits: a function whose braces are split across `#if` branches is misread (the
preprocessor lines are blanked, both branches' braces stay); such a file, or any whose braces do
not match, is reported as an error rather than passed. Macros that expand to a body's braces
are not seen. Lines are counted as they stand, blank and comment lines included.

Exit status: 0 when nothing is over its limit, 1 otherwise (each offender is printed).
"""
from __future__ import annotations

import argparse
import dataclasses
import pathlib
import re
import sys

import check_format  # beside this script: which files are the course's C++ and CUDA code
import check_scripts  # beside this script: the Python and shell tools

FOLDERS = ("autograder", "common/vocabulary")
MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 80


@dataclasses.dataclass
class Function:
    path: str
    name: str
    first: int  # 1-based line of the signature's first line
    last: int  # 1-based line of the closing brace

    @property
    def lines(self) -> int:
        return self.last - self.first + 1


class BraceError(Exception):
    """The braces of a file could not be matched."""


# ---- blanking: comments, literals, preprocessor lines ----------------------------------------

_RAW_PREFIXES = ("R", "u8R", "uR", "UR", "LR")
_RAW_OPEN = re.compile(r'"([^()\\\s]{0,16})\(')


def blank(text: str) -> str:
    """The text with comments, string and character literals and preprocessor lines replaced by
    spaces (newlines kept, so line numbers and offsets stay), literals' quotes kept."""
    out = list(text)
    n = len(text)
    i = 0
    line_start = True  # only white space since the last newline

    def wipe(a: int, b: int) -> None:
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "\n":
            line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if line_start and c == "#":  # a preprocessor line, with its continuations
            j = i
            while j < n:
                if text[j] == "\n" and (j == 0 or text[j - 1] != "\\"):
                    break
                if text.startswith("/*", j):  # a comment may hide the line's end
                    end = text.find("*/", j + 2)
                    j = n if end < 0 else end + 2
                    continue
                j += 1
            wipe(i, j)
            i = j
            continue
        line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            wipe(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            wipe(i, j)
            i = j
        elif c == '"':
            m = _RAW_OPEN.match(text, i)
            if text[_word_start(text, i):i] in _RAW_PREFIXES and m:  # R"delim( ... )delim"
                closing = ")" + m.group(1) + '"'
                j = text.find(closing, m.end())
                j = n if j < 0 else j + len(closing)
            else:
                j = _quoted_end(text, i, '"')
            wipe(i + 1, j - 1)
            i = j
        elif c == "'":
            start = _word_start(text, i)
            word = text[start:i]
            if word and word[0].isdigit():  # a digit separator: 1'000'000
                i += 1
                continue
            j = _quoted_end(text, i, "'")
            wipe(i + 1, j - 1)
            i = j
        else:
            i += 1
    return "".join(out)


def _word_start(text: str, i: int) -> int:
    """The start of the identifier or number that ends just before index i."""
    while i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
        i -= 1
    return i


def _quoted_end(text: str, i: int, quote: str) -> int:
    """The index after the literal that opens with quote at index i (or at the line's end)."""
    j = i + 1
    while j < len(text) and text[j] != quote and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    return min(j + 1, len(text))


# ---- braces ----------------------------------------------------------------------------------

_ACCESS = re.compile(r"^\s*(?:public|private|protected)\s*:(?!:)")
_TEMPLATE = re.compile(r"^\s*template\s*<")
_ATTRIBUTES = re.compile(r"\b(?:alignas|__align__|__attribute__|__declspec)\s*\(\(?[^()]*\)?\)")


def _strip_template(head: str) -> str:
    """The head without a leading `template <...>` (nested angle brackets allowed)."""
    while _TEMPLATE.match(head):
        depth = 0
        for k, c in enumerate(head):
            if c == "<":
                depth += 1
            elif c == ">":
                depth -= 1
                if depth == 0:
                    head = head[k + 1:]
                    break
        else:
            return head
    return head


def _top_level_equals(head: str) -> int:
    """The index of an `=` outside parentheses and brackets that is an assignment or an
    initializer (not `==`, `<=`, `operator=`...), or -1."""
    depth = 0
    for k, c in enumerate(head):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "=" and depth == 0:
            before = head[k - 1] if k > 0 else ""
            after = head[k + 1] if k + 1 < len(head) else ""
            if after == "=" or before in "=!<>+-*/%&|^":
                continue
            if re.search(r"operator\s*$", head[:k]):
                continue
            return k
    return -1


def classify(head: str) -> str:
    """What a `{` at namespace or class scope opens, from the text before it: "namespace",
    "class", "function" or "data"."""
    head = _ACCESS.sub("", head).strip()
    if re.match(r"^(?:inline\s+)?namespace\b", head) or re.match(r'^extern\s+"', head):
        return "namespace"
    bare = _strip_template(head).strip()
    bare = re.sub(r"^(?:typedef\s+)", "", bare)
    if re.match(r"^(?:enum)\b", bare):
        return "data"
    if re.match(r"^(?:class|struct|union)\b", bare) and "(" not in _ATTRIBUTES.sub("", bare):
        return "class"
    equals = _top_level_equals(bare)
    if equals >= 0:
        return "function" if bare[equals + 1:].lstrip().startswith("[") else "data"
    return "function" if "(" in bare and ")" in bare else "data"


def function_name(head: str, scopes: list[str]) -> str:
    """A readable name for the function of a head: `Class::name`, or `TEST_F(Suite, Name)`."""
    text = " ".join(_ACCESS.sub("", head).split())
    text = _strip_template(text).strip()
    equals = _top_level_equals(text)
    if equals >= 0:  # a lambda held by a variable
        words = re.findall(r"[A-Za-z_]\w*", text[:equals])
        return (words[-1] if words else "lambda") + " (lambda)"
    m = re.search(r"((?:[\w~]+::)*operator\s*(?:\(\)|[^\s(]+))\s*\(", text)
    if m:
        name = m.group(1)
    else:
        paren = text.find("(")
        before = text[:paren].rstrip() if paren >= 0 else text
        words = re.findall(r"[~A-Za-z_][\w:~]*", before)
        name = words[-1] if words else before
        if len(words) == 1 and re.fullmatch(r"[A-Z][A-Z0-9_]+", name):  # TEST_F(Suite, Name)
            depth = 0
            for k in range(paren, len(text)):
                depth += {"(": 1, ")": -1}.get(text[k], 0)
                if depth == 0:
                    name = text[:k + 1]
                    break
    classes = [s for s in scopes if s]
    return "::".join(classes + [name]) if classes and "::" not in name else name


def _skip_braces(code: str, i: int) -> int:
    """The index after the `}` that matches the `{` at index i."""
    depth = 0
    for k in range(i, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k + 1
    raise BraceError(f"no }} for the {{ at offset {i}")


def functions_of(code: str, path: str) -> list[Function]:
    """The function bodies of blanked source code (see the module's docstring)."""
    line_of = _line_index(code)
    found: list[Function] = []
    scopes: list[tuple[str, str]] = []  # ("namespace" | "class", class name or "")
    head_start = 0
    paren = 0
    i = 0
    n = len(code)
    while i < n:
        c = code[i]
        if c in "([":
            paren += 1
        elif c in ")]":
            paren = max(0, paren - 1)
        elif c == ";" and paren == 0:
            head_start = i + 1
        elif c == "}":
            if not scopes:
                raise BraceError(f"an unmatched }} at line {line_of(i)}")
            scopes.pop()
            head_start = i + 1
            paren = 0
        elif c == "{":
            before = code[i - 1] if i > 0 else " "
            if paren > 0 or before.isalnum() or before in "_>":
                i = _skip_braces(code, i)  # a braced initializer: part of the statement
                continue
            head = code[head_start:i]
            kind = classify(head)
            if kind == "function":
                end = _skip_braces(code, i)
                # The signature's first line: the head less an access label and white space.
                offset = head_start + len(head) - len(_ACCESS.sub("", head).lstrip())
                name = function_name(head, [s[1] for s in scopes])
                found.append(Function(path, name, line_of(offset), line_of(end - 1)))
                i = end
                head_start = end
                continue
            if kind == "data":
                i = _skip_braces(code, i)
                continue
            name = ""
            if kind == "class":
                m = re.match(r"^(?:class|struct|union)\s+(?:\w+\s*\(.*?\)\s*)?(\w+)",
                             _strip_template(_ACCESS.sub("", head).strip()).strip())
                name = m.group(1) if m else ""
            scopes.append((kind, name))
            head_start = i + 1
        i += 1
    if scopes:
        raise BraceError(f"{len(scopes)} unclosed {{ at the end")
    return found


def _line_index(code: str):
    starts = [0] + [m.end() for m in re.finditer("\n", code)]

    def line_of(offset: int) -> int:
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    return line_of


# ---- the tree --------------------------------------------------------------------------------


def house_files(root: pathlib.Path) -> list[str]:
    """The files checked, relative to root: check_format.py's C++ and CUDA files (tracked and
    new, the planted-bug cases left out) under FOLDERS."""
    names = (str(path.relative_to(root)) for path in check_format.course_files(root))
    return [n for n in names if n.startswith(tuple(folder + "/" for folder in FOLDERS))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parents[2])
    parser.add_argument("--top", type=int, default=0, metavar="N",
                        help="print the N longest functions and the N largest files")
    args = parser.parse_args()
    root = args.root.resolve()

    sizes: list[tuple[int, str]] = []
    functions: list[Function] = []
    unreadable: list[str] = []
    for rel in house_files(root):
        text = (root / rel).read_text(encoding="utf-8", errors="replace")
        sizes.append((text.count("\n") + (0 if text.endswith("\n") or not text else 1), rel))
        try:
            functions += functions_of(blank(text), rel)
        except BraceError as e:
            unreadable.append(f"{rel}: {e}")

    big_files = [(lines, rel) for lines, rel in sizes if lines > MAX_FILE_LINES]
    long_functions = [f for f in functions if f.lines > MAX_FUNCTION_LINES]
    scripts, script_files, script_functions = check_scripts.offenders(
        root, MAX_FILE_LINES, MAX_FUNCTION_LINES)
    scripts += [f"a stated exception excuses nothing: {s}"
                for s in check_scripts.stale_exceptions(root, MAX_FILE_LINES, MAX_FUNCTION_LINES)]
    if args.top > 0:
        print(f"check_house: the {args.top} longest functions:")
        for f in sorted(functions, key=lambda f: -f.lines)[:args.top]:
            print(f"  {f.lines:5d}  {f.path}:{f.first}  {f.name}")
        print(f"check_house: the {args.top} largest files:")
        for lines, rel in sorted(sizes, key=lambda s: -s[0])[:args.top]:
            print(f"  {lines:5d}  {rel}")

    for lines, rel in big_files:
        print(f"check_house: {rel} has {lines} lines (at most {MAX_FILE_LINES})")
    for f in sorted(long_functions, key=lambda f: (f.path, f.first)):
        print(f"check_house: {f.path}:{f.first}: {f.name} has {f.lines} lines"
              f" (at most {MAX_FUNCTION_LINES})")
    for problem in unreadable:
        print(f"check_house: cannot read the functions of {problem}")
    for problem in scripts:
        print(f"check_house: {problem}")
    if big_files or long_functions or unreadable or scripts:
        print(f"check_house: {len(big_files)} files over {MAX_FILE_LINES} lines,"
              f" {len(long_functions)} functions over {MAX_FUNCTION_LINES} lines,"
              f" {len(unreadable)} files not read, {len(scripts)} problems in the tools; split them"
              f" into smaller files and named helpers")
        return 1
    print(f"check_house: {len(sizes)} files of at most {MAX_FILE_LINES} lines,"
          f" {len(functions)} functions of at most {MAX_FUNCTION_LINES} lines; tools:"
          f" {script_files} Python and shell files, {script_functions} functions,"
          f" {len(check_scripts.EXCEPTIONS)} stated exceptions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
