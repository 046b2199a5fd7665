#!/usr/bin/env python3
"""Fails when a lesson states a measured number that docs/results does not give it.

  tools/maint/check_lessons.py [ROOT]      (default: the repository holding this script)

Checks the course's README.md, every lesson (labs/NN_*/README.md, and its APPENDIX.md where it has
one) and every page of docs/ except the grader's manual:

1. Generated blocks are current. Each block is regenerated in memory by
   tools/maint/update_results.py from docs/results/ and autograder/rubric.toml and compared with
   the file: a block that differs (a new run, an edited rubric, an edited template) is stale.
2. Prose states no measured number of its own. Outside the generated blocks, a number with a unit
   of measurement (GB/s, %, percent, us, ms, ns, a speed-up such as 1.87x or "4 times", "0.7 of
   the probe/ceiling/CUB") or a bare ratio with two or more decimals must be one that a generated
   block of the same page prints (the text reads it from the table right there), or a published
   figure of another GPU recorded in docs/results/literature.json (with the same unit).
3. Every results file a page names (docs/results/..., capstone_*.json, globs included) exists.
4. Pages that must carry a generated block carry it: README.md its course map (<!-- course-map:begin
   -->, every lab's bandwidth from docs/results), so that a map typed by hand fails too.
5. Every lesson states its task on its first screen: a heading "## Your task" within the first
   TASK_LINES lines as rendered (HTML comments, the templates of text blocks among them, left out).

Exit status 0 when everything holds, 1 otherwise; each problem is printed with its file and line.
Needs only python3: 3.11 or later, or an older one with python3-tomli (to read the rubric); without
either it exits 77, which ctest reports as a skip.
"""
import argparse
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from update_results import (BLOCK, TEXT, Course, GenerationError, pages, render)  # noqa: E402

NUM = r"\d+(?:,\d{3})*(?:\.\d+)?"
SEP = r"(?:\s*(?:,|and|or|to|-|–|/|against|vs\.?)\s*)"
UNITS = {  # spelling in prose -> unit
    "GB/s": "GB/s", "TB/s": "TB/s", "MB/s": "MB/s", "GiB/s": "GiB/s", "%": "%", "percent": "%",
    "us": "us", "µs": "us", "μs": "us", "ms": "ms", "ns": "ns", "times": "x", "×": "x", "x": "x",
}
START = r"(?<![\w.^/\-+])"  # not inside a word, a decimal, 2^28, 1/256, 2^-24 or a signed figure
MENTIONS = [
    # 874.6 and 908.7 GB/s, 17-18%, 0.8 and 0.9 ns, 4 times, 91.2 percent
    re.compile(rf"{START}(?P<nums>{NUM}(?:{SEP}{NUM})*)\s?(?P<unit>GB/s|TB/s|MB/s|GiB/s|%|"
               rf"percent\b|us\b|µs\b|μs\b|ms\b|ns\b|times\b|×)"),
    # 1.87x, 0.5x (the x attached: "4 x 2" is a product)
    re.compile(rf"{START}(?P<nums>{NUM}(?:{SEP}{NUM}x?)*)(?P<unit>x)\b"),
    # 0.668 of the probe, 0.9 of the ceiling, 0.96 of CUB's bandwidth
    re.compile(rf"{START}(?P<nums>{NUM}(?:{SEP}{NUM})*)\s+of\s+(?:the\s+)?(?:streaming[- ]read\s+)?"
               rf"(?P<unit>ceiling|probe|CUB)"),
    # a bare ratio: 0.956, 1.03
    re.compile(rf"{START}(?P<nums>\d+\.\d{{2,}}(?:{SEP}\d+\.\d{{2,}})*)(?P<unit>)(?![\d.]|\w)"),
]
NUMBER = re.compile(NUM)
RESULT_PATH = re.compile(r"(?:docs/results/|capstone/)[\w\-.*{},/]+\.(?:json|txt)|"
                         r"\b(?:ladder|ops|sweep|capstone|sanitize|strategies|waves)_[\w\-*{},]*\.(?:json|txt)")
# Blocks a page must carry: a map typed by hand in their place would escape checks 1 and 2.
REQUIRED_BLOCKS = {"README.md": ("course-map",)}
# A lesson's task on its first screen: its heading within this many rendered lines.
TASK_HEADING, TASK_LINES = "## Your task", 20
UNIT_OF_KEY = {"ms": "ms", "us": "us", "gbps": "GB/s", "pct": "%", "step": "x", "total": "x", "x": "x"}
# A number right after one of these words names something (lab 01, rung 8, question 5): no measurement.
LABEL = re.compile(r"(?:\b(?:labs?|rungs?|kernels?|steps?|questions?|sections?|Policy|sm_|SM|"
                   r"version|reduce|CMake|CUDA|nvcc|Python|Doxygen|CCCL)\s*|§\s*)$", re.I)
# A table column whose header names one of these holds measurements in every numeric cell.
MEASURED_COLUMN = re.compile(r"GB/s|TB/s|\bus\b|\bms\b|\bns\b|%|time|CUB|probe|ceiling|speed|"
                             r"\bstep\b|\btotal\b|ratio|\bx\b", re.I)


def normal(number):
    return number.replace(",", "")


def significant(number):
    digits = normal(number).replace(".", "").lstrip("0")
    return len(digits)


def decimals(number):
    return len(number.split(".")[1]) if "." in number else 0


def held_by(number, held):
    """True when a printed number of a generated block is this number, or rounds to it (for a
    number of two or more significant digits: 4592 for 4592.3, 91.2 for 91.24)."""
    value = normal(number)
    if value in held or any(float(h) == float(value) for h in held):  # 19.50 is 19.5
        return True
    if significant(number) < 2:
        return False
    d = decimals(value)
    target = float(value)
    for h in held:
        if decimals(h) > d and round(float(h), d) == target:
            return True
    return False


def blank(text, start, end):
    """The text with [start, end) replaced by as many newlines as it held (line numbers kept)."""
    return text[:start] + "\n" * text.count("\n", start, end) + text[end:]


def literature_figures(course):
    """{unit: {printed value}} of docs/results/literature.json (figures of other GPUs)."""
    figures = {}
    try:
        sources = course.data("literature.json").get("sources", {})
    except GenerationError:
        return figures
    for source in sources.values():
        for key, value in source.get("figures", {}).items():
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                continue
            unit = UNIT_OF_KEY.get(key.rsplit("_", 1)[-1], "")
            for form in {repr(value), f"{value:g}", str(value)}:
                figures.setdefault(unit, set()).add(normal(form))
    return figures


def rubric_figures(course):
    """The rubric's numbers (thresholds, floors, measured fractions, margins): a page may quote
    what the grader demands; they are configuration, checked against autograder/rubric.toml."""
    figures = set()
    try:
        rubric = course.rubric()
    except GenerationError:
        return figures

    def walk(value):
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, float):
            figures.add(normal(repr(value)))
    walk(rubric.get("labs", {}))
    walk(rubric.get("performance", {}))
    return figures


def prose_numbers(text):
    """[(line, mention, [numbers], unit)] outside generated blocks, HTML comments and code spans."""
    for pattern in (TEXT, BLOCK):
        for match in reversed(list(pattern.finditer(text))):
            text = blank(text, match.start(), match.end())
    for match in reversed(list(re.finditer(r"<!--.*?-->", text, re.S))):
        text = blank(text, match.start(), match.end())
    return mentions(text)


def mentions(text):
    """[(line, mention, [numbers], unit)]: the measured-looking numbers of a text."""
    text = re.sub(r"`[^`\n]*`", lambda m: " " * len(m.group(0)), text)
    found, taken = [], set()
    for pattern in MENTIONS:
        for match in pattern.finditer(text):
            span = range(match.start("nums"), match.end("nums"))
            if any(i in taken for i in span):
                continue
            taken.update(span)
            unit = UNITS.get(match.group("unit"), match.group("unit"))
            unit = "probe" if unit == "ceiling" else unit
            numbers = [n.group(0) for n in NUMBER.finditer(match.group("nums"))
                       if not LABEL.search(text[max(0, match.start("nums") + n.start() - 12):
                                                match.start("nums") + n.start()])]
            line = text.count("\n", 0, match.start()) + 1
            if numbers:
                found.append((line, match.group(0).strip(), numbers, unit))
    found += table_numbers(text, taken)
    return sorted(found)


def column_unit(header):
    """The unit of a table column from its header: 'H200 GB/s' -> GB/s, 'time (us)' -> us."""
    for pattern, unit in ((r"GB/s", "GB/s"), (r"TB/s", "TB/s"), (r"%", "%"), (r"\bus\b", "us"),
                          (r"\bms\b", "ms"), (r"\bns\b", "ns")):
        if re.search(pattern, header):
            return unit
    return ""  # a ratio, a count, a time without its unit: any unit


def table_numbers(text, taken):
    """[(line, cell, [number], unit)] of the numeric cells of tables whose column header names a
    measurement (a GB/s, time, CUB or probe column); unit: the column's, '' when it names none."""
    found, lines, offset, header = [], text.split("\n"), 0, None
    for i, line in enumerate(lines):
        cells = line.strip().strip("|").split("|") if line.lstrip().startswith("|") else None
        if cells is None:
            header = None
        elif i + 1 < len(lines) and re.match(r"^\s*\|[\s:|-]+\|\s*$", lines[i + 1]):
            header = [column_unit(c) if MEASURED_COLUMN.search(c) else None for c in cells]
        elif header and not re.match(r"^\s*\|[\s:|-]+\|\s*$", line):
            position = offset + line.index("|") + 1
            for k, cell in enumerate(cells):
                if k < len(header) and header[k] is not None:
                    for n in NUMBER.finditer(cell):
                        start = position + n.start()
                        before = cell[:n.start()]
                        if start in taken or LABEL.search(before) or re.search(r"[\^/]$", before):
                            continue
                        found.append((i + 1, cell.strip(), [n.group(0)], header[k]))
                position += len(cell) + 1
        offset += len(line) + 1
    return found


def held_numbers(text):
    """{unit: {number}} printed inside the generated blocks (rendered text, not templates), with
    the unit each is printed with ('' for a bare ratio or a count)."""
    held = {}
    bodies = [m.group("body") for m in TEXT.finditer(text)]
    bodies += [m.group("body") for m in BLOCK.finditer(text) if m.group("name") != "text"]
    for body in bodies:
        for _line, _mention, numbers, unit in mentions(body):
            held.setdefault(unit, set()).update(normal(n) for n in numbers)
        held.setdefault("", set()).update(normal(n) for n in NUMBER.findall(body))
    return held


def holds(value, unit, held):
    """A prose number with a unit is held by a block number printed with that unit, or by one
    printed in a column that names no unit (a ratio, a count); a bare ratio by any number."""
    if unit == "":
        return any(held_by(value, numbers) for numbers in held.values())
    return held_by(value, held.get(unit, set())) or (
        unit in ("x", "probe", "CUB") and held_by(value, held.get("", set())))


def result_paths(text, root):
    """(line, path) of every results file a page names, outside fenced code (where a command may
    name the file it writes), that does not exist."""
    for match in reversed(list(re.finditer(r"^```.*?^```", text, re.S | re.M))):
        text = blank(text, match.start(), match.end())
    missing = []
    results = root / "docs" / "results"
    for match in RESULT_PATH.finditer(text):
        name = match.group(0).rstrip(".,")
        line = text.count("\n", 0, match.start()) + 1
        if name.startswith("docs/results/"):
            name = name[len("docs/results/"):]
        elif name.startswith("capstone/"):
            pass
        else:
            name = ("capstone/" if name.startswith(("capstone_", "strategies_", "waves_"))
                    else "") + name
        alternatives = [name]
        brace = re.search(r"\{([^{}]*)\}", name)
        while brace:  # capstone_{single_block,atomic}_{h100,h200}.json
            alternatives = [a.replace(brace.group(0), choice, 1) for a in alternatives
                            for choice in brace.group(1).split(",")]
            brace = re.search(r"\{([^{}]*)\}", alternatives[0])
        for alternative in alternatives:
            if not list(results.glob(alternative)):
                missing.append((line, match.group(0), alternative))
    return missing


def task_heading_line(text):
    """The line of a lesson's "## Your task" heading as rendered (HTML comments, text blocks'
    templates among them, take no line), or None where it has none."""
    rendered = re.sub(r"<!--.*?-->\n?", "", text, flags=re.S)
    for i, line in enumerate(rendered.split("\n")):
        if line.rstrip() == TASK_HEADING:
            return i + 1
    return None


def first_difference(old, new):
    old_lines, new_lines = old.splitlines(), new.splitlines()
    for i in range(max(len(old_lines), len(new_lines))):
        a = old_lines[i] if i < len(old_lines) else "(nothing)"
        b = new_lines[i] if i < len(new_lines) else "(nothing)"
        if a != b:
            return i, a, b
    return 0, "", ""


def check(root):
    root = pathlib.Path(root)
    course = Course(root)
    literature = literature_figures(course)
    rubric = rubric_figures(course)
    problems, blocks, numbers = [], 0, 0
    for path in pages(root):
        name = path.relative_to(root)
        text = path.read_text()
        try:
            current, changes = render(text, name, course)
        except GenerationError as error:
            problems.append(f"{error}")
            continue
        blocks += len(TEXT.findall(text)) + sum(1 for m in BLOCK.finditer(text)
                                                 if m.group("name") != "text")
        for kind, line, old, new in changes:
            i, was, now = first_difference(old, new)
            problems.append(f"{name}:{line}: generated block '{kind}' is out of date with "
                            f"docs/results (its line {i + 1}):\n    the page has:      {was}\n"
                            f"    docs/results give: {now}\n"
                            f"    run tools/maint/update_results.py")
        held = held_numbers(current)
        held.setdefault("", set()).update(rubric)
        for line, mention, values, unit in prose_numbers(text):
            numbers += len(values)
            for value in values:
                if holds(value, unit, held):
                    continue
                if held_by(value, literature.get(unit, set())) or (
                        unit == "" and any(held_by(value, s) for s in literature.values())):
                    continue
                problems.append(f"{name}:{line}: '{mention}': {value} is a measured number that "
                                "no generated block of this page prints and no results file "
                                "holds; write it as a template field ({{...}} in a "
                                "<!-- text:begin --> block) or take it out")
        for line, mention, pattern in result_paths(text, root):
            problems.append(f"{name}:{line}: names {mention}, but docs/results has no {pattern}")
        if re.fullmatch(r"labs/\d\d_[^/]+/README\.md", name.as_posix()):
            task = task_heading_line(text)
            if task is None or task > TASK_LINES:
                where = "has none" if task is None else f"has it at rendered line {task}"
                problems.append(f"{name}: a lesson states its task on its first screen, a heading "
                                f"'{TASK_HEADING}' within its first {TASK_LINES} rendered lines; "
                                f"it {where}")
        present = {m.group("name") for m in BLOCK.finditer(text)}
        for block in REQUIRED_BLOCKS.get(str(name), ()):
            if block not in present:
                problems.append(f"{name}: has no generated block '{block}' (<!-- {block}:begin "
                                f"--> and <!-- {block}:end -->, written by "
                                "tools/maint/update_results.py)")
    return problems, len(pages(root)), blocks, numbers


def main():
    try:
        import tomllib  # noqa: F401
    except ImportError:
        try:
            import tomli  # noqa: F401
        except ImportError:
            print("check_lessons: skipped: reading autograder/rubric.toml needs Python 3.11 or "
                  "python3-tomli")
            sys.exit(77)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(pathlib.Path(__file__).resolve().parents[2]),
                        help="the course's root folder (default: this repository)")
    args = parser.parse_args()
    problems, files, blocks, numbers = check(args.root)
    for problem in problems:
        print(f"error: {problem}")
    if problems:
        print(f"check_lessons: {len(problems)} problems in {files} pages "
              f"({blocks} generated blocks, {numbers} numbers in prose)")
        sys.exit(1)
    print(f"check_lessons: {files} pages agree with docs/results ({blocks} generated blocks "
          f"current, {numbers} numbers in prose, each printed by a block or a published figure)")


if __name__ == "__main__":
    main()
