"""The class report's data (tools/class_report.py): a `reduce-grade batch` output read, and what
the page says of it: the grade boundaries a total is just below, the submissions to look at by
hand, the most frequent failing tests and messages, each lab over the class."""
import collections
import csv
import dataclasses
import json
import os
import pathlib
import re

NEAR_DEFAULT = 2.0  # percentage points below a grade boundary that put a total on the list


class BatchError(Exception):
    """The folder given is not a batch output this script can report on."""


@dataclasses.dataclass
class Submission:
    """One student's folder of a batch output, and what could be read from it."""

    name: str
    folder: pathlib.Path
    report: dict = None  # report.json, parsed
    unreadable: str = ""  # why report.json could not be read
    error: str = ""  # not graded: error.txt or the gradebook's "error: ..." status
    row: dict = None  # the gradebook row

    def lab_points(self):
        """{lab: (score, max_score)} from report.json, else from a graded gradebook row."""
        if self.report is not None:
            return {
                lab.get("lab", "?"): (float(lab.get("score", 0)), float(lab.get("max_score", 0)))
                for lab in self.report.get("labs", [])
            }
        return {}

    def total(self):
        """(score, max_score), or None when neither the report nor the gradebook says."""
        if self.report is not None:
            return float(self.report.get("score", 0)), float(self.report.get("max_score", 0))
        if self.row is not None and not self.error:
            try:
                return float(self.row["total"]), float(self.row["max"])
            except (KeyError, ValueError):
                return None
        return None


@dataclasses.dataclass
class Batch:
    """A batch output: its submissions in the gradebook's order, and its labs."""

    folder: pathlib.Path
    labs: list
    submissions: list

    def graded(self):
        """The submissions with a readable report.json."""
        return [s for s in self.submissions if s.report is not None]


# ---- reading a batch output -------------------------------------------------------------------


def read_gradebook(path):
    """(labs, rows) of gradebook.csv: the lab columns between `max` and `seed`, and its rows."""
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        if header[:3] != ["student", "total", "max"] or "seed" not in header:
            raise BatchError(f"{path} is not a reduce-grade gradebook (header: {','.join(header)})")
        labs = header[3 : header.index("seed")]
        return labs, list(reader)


ESCAPE = re.compile(r"\\x([0-9a-f]{2})|\\u([0-9a-f]{4})")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "\0")


def unescape(text):
    """The name that the grader's inert_text() made \\p text (`\\x1b` back to ESC, `\\xff` back
    to the byte 0xff), as the file system's str (undecodable bytes as surrogates)."""
    out = bytearray()
    pos = 0
    for m in ESCAPE.finditer(text):
        out += text[pos:m.start()].encode("utf-8", "surrogateescape")
        out += bytes([int(m[1], 16)]) if m[1] else chr(int(m[2], 16)).encode("utf-8", "replace")
        pos = m.end()
    out += text[pos:].encode("utf-8", "surrogateescape")
    return os.fsdecode(bytes(out))


def student_folder(folder, cell):
    """The folder name in \\p folder of a gradebook's student \\p cell, which the grader wrote
    inert (escapes for control characters and bytes that are not UTF-8) and neutralised for
    spreadsheets (a quote before a leading `=`, `+`, `-`, `@`); \\p cell itself when no folder
    matches."""
    candidates = [cell]
    if cell.startswith("'") and cell[1:2] in FORMULA_START:
        candidates.append(cell[1:])
    candidates += [unescape(c) for c in list(candidates)]
    for name in candidates:
        if "/" in name or name in ("", ".", ".."):  # never a folder outside the batch's
            continue
        try:
            if (folder / name).is_dir():
                return name
        except (OSError, ValueError):  # a name the file system cannot hold
            continue
    return cell


def read_report(path):
    """(report, problem): report.json parsed, or None and why it could not be."""
    try:
        report = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError) as e:
        return None, f"{type(e).__name__}: {e}"
    if not isinstance(report, dict) or not isinstance(report.get("labs"), list):
        return None, "not a reduce-grade report (no labs list)"
    return report, ""


def load_batch(folder):
    """Every submission of the batch output \\p folder; raises BatchError when it is none."""
    folder = pathlib.Path(folder)
    if not folder.is_dir():
        raise BatchError(f"batch output folder not found: {folder}")
    if (folder / "report.json").is_file():
        raise BatchError(
            f"{folder} is one submission's report folder (reduce-grade grade), not a batch output"
        )
    labs, rows = [], []
    gradebook = folder / "gradebook.csv"
    if gradebook.is_file():
        labs, rows = read_gradebook(gradebook)
    # Student folders: those the gradebook names, then any other with a report or an error.
    names = [student_folder(folder, r["student"]) for r in rows]
    for child in sorted(folder.iterdir()):
        if child.is_dir() and child.name not in names:
            if (child / "report.json").exists() or (child / "error.txt").exists():
                names.append(child.name)
    if not gradebook.is_file() and not names:
        raise BatchError(
            f"{folder} is not a batch output: no gradebook.csv and no <student>/report.json "
            "(make one with: reduce-grade batch SUBMISSIONS --out FOLDER)"
        )
    if not names:
        raise BatchError(f"empty batch: {gradebook} lists no submissions and no report was found")
    by_row = {student_folder(folder, r["student"]): r for r in rows}
    submissions = []
    for name in names:
        s = Submission(name=name, folder=folder / name, row=by_row.get(name))
        if s.row is not None and s.row.get("status", "").startswith("error"):
            s.error = s.row["status"][len("error: ") :] or s.row["status"]
        if (s.folder / "report.json").exists():
            s.report, s.unreadable = read_report(s.folder / "report.json")
        elif (s.folder / "error.txt").is_file():
            s.error = (s.folder / "error.txt").read_text(errors="replace").strip() or "not graded"
        elif not s.error:
            s.error = "no report.json"
        submissions.append(s)
    if not labs:
        seen = {lab for s in submissions for lab in s.lab_points()}
        labs = sorted(seen)
    return Batch(folder=folder, labs=labs, submissions=submissions)


# ---- what the page says -----------------------------------------------------------------------


def near_boundary(score, max_score, near=NEAR_DEFAULT):
    """The grade boundary (a multiple of 10 % of the maximum, 10 to 90) that \\p score is just
    below, within \\p near percentage points, or None. 58.5 of 100 is near 60; 60 is not (it made
    it); 57.9 is not (more than 2 points short). One regraded point could move such a total."""
    if max_score <= 0:
        return None
    percent = 100.0 * score / max_score
    for boundary in range(10, 100, 10):
        if boundary - near - 1e-9 <= percent < boundary - 1e-9:
            return boundary
    return None


def first_line(text, limit=300):
    """The first line of \\p text, clipped to \\p limit characters."""
    line = str(text).strip().splitlines()[0] if str(text).strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


LOCATION = re.compile(r"^(\S+:\d+|unknown file)(:.*)?$")


def failure_line(message, limit=300):
    """The line of a GoogleTest failure \\p message that says what went wrong: not its
    "file:line" location, GoogleTest's "Expected equality of these values:" or the indented
    operands under it, but the checker's own sentence ("n = 1048583: got 701, expected ...")."""
    lines = [line for line in str(message).splitlines() if line.strip()]
    for line in lines:
        if LOCATION.match(line.strip()) or line.startswith((" ", "\t")):
            continue
        if line.strip() in ("Expected equality of these values:", "Google Test trace:"):
            continue
        return first_line(line, limit)
    return first_line(lines[0] if lines else "", limit)


def review_reasons(s, near=NEAR_DEFAULT):
    """Why submission \\p s should be looked at by hand: a list of (kind, detail)."""
    reasons = []
    if s.unreadable:
        reasons.append(("unreadable", f"report.json: {first_line(s.unreadable, 200)}"))
    if s.error:
        reasons.append(("not graded", first_line(s.error, 200)))
    for lab in (s.report or {}).get("labs", []):
        name = lab.get("lab", "?")
        stub = lab.get("status") == "stub"  # the stub's sanitizer runs say nothing of its code
        flag = lab.get("flagged_for_review")
        if flag:  # the sandbox stopped a forbidden system call (report.json, from the checker)
            reasons.append(("sandbox", f"{name}: {first_line(str(flag), 200)}"))
        for run in lab.get("sanitizer", []):
            # A finding, not a run whose tests failed for another reason (clean is false then too).
            if run.get("ran") and run.get("problems", 0) > 0 and not stub:
                reasons.append(
                    ("sanitizer", f"{name}: {run.get('tool', '?')}: {run.get('problems', 0)} "
                     f"problems ({run.get('errors', 0)} errors, {run.get('hazards', 0)} hazards)")
                )
        perf = lab.get("performance", {})
        texts = [perf.get("problem", "")] + list(lab.get("messages", []))
        impossible = next((t for t in texts if "physically impossible" in str(t)), None)
        if impossible:
            reasons.append(("impossible speed", f"{name}: {first_line(impossible, 200)}"))
        build = lab.get("build", {})
        if build.get("timed_out"):
            reasons.append(("timeout", f"{name}: the build timed out"))
        for kind in ("tests", "hidden"):
            for suite in lab.get(kind, []):
                what = "public" if kind == "tests" else "hidden"
                if suite.get("timed_out"):
                    reasons.append(("timeout", f"{name}: the {what} tests timed out"))
                elif suite.get("output_flood"):
                    reasons.append(("timeout", f"{name}: the {what} tests flooded their output"))
        findings = lab.get("library", {}).get("forbidden", [])
        if findings:
            # One line per lab: a CUB call alone brings dozens of headers and symbols.
            first = "; ".join(first_line(f.get("what", ""), 100) for f in findings[:2])
            more = f"; and {len(findings) - 2} more" if len(findings) > 2 else ""
            reasons.append(("library", f"{name}: {len(findings)} forbidden library findings: "
                            f"{first}{more}"))
    total = s.total()
    if total is not None and not s.error:
        boundary = near_boundary(total[0], total[1], near)
        if boundary is not None:
            percent = 100.0 * total[0] / total[1]
            reasons.append(("near boundary", f"{percent:.1f} % of the maximum, below {boundary} %"))
    return reasons


@dataclasses.dataclass
class Failure:
    """A test (or message) that failed for several students."""

    lab: str
    what: str  # the test's name, or a lab message with its numbers replaced by N
    students: list
    messages: collections.Counter


def failing_tests(submissions):
    """Failed public and hidden tests over the class, the most frequent first (then by lab and
    name): one Failure per (lab, suite, test name), counting each student once."""
    found = {}
    for s in submissions:
        for lab in (s.report or {}).get("labs", []):
            for kind in ("tests", "hidden"):
                for suite in lab.get(kind, []):
                    for test in suite.get("tests", []):
                        if test.get("result") != "failed":
                            continue
                        key = (lab.get("lab", "?"), f"{'hidden: ' if kind == 'hidden' else ''}"
                               f"{test.get('name', '?')}")
                        f = found.setdefault(key, Failure(key[0], key[1], [], collections.Counter()))
                        if s.name not in f.students:
                            f.students.append(s.name)
                        f.messages[failure_line(test.get("message", ""))] += 1
    return sorted(found.values(), key=lambda f: (-len(f.students), f.lab, f.what))


def frequent_messages(submissions):
    """The labs' messages over the class, numbers replaced by N so that "passed 30 of 33" and
    "passed 31 of 33" count together; the most frequent first."""
    found = {}
    for s in submissions:
        for lab in (s.report or {}).get("labs", []):
            for message in lab.get("messages", []):
                line = first_line(message, 300)
                # Numbers only, not the digits of a name such as 09_warp_shuffle.
                pattern = re.sub(r"(?<![\w.])\d+(\.\d+)?(?!\w)", "N", line)
                key = (lab.get("lab", "?"), pattern)
                f = found.setdefault(key, Failure(key[0], pattern, [], collections.Counter()))
                if s.name not in f.students:
                    f.students.append(s.name)
                f.messages[line] += 1
    return sorted(found.values(), key=lambda f: (-len(f.students), f.lab, f.what))


@dataclasses.dataclass
class LabSummary:
    """One lab over the class: its points and its benchmark results."""

    lab: str
    max_score: float
    scores: list
    fractions: list  # fraction of its measure of each student whose benchmark ran
    gbps: list
    threshold: float
    floor: float


def lab_summaries(batch):
    """A LabSummary per lab of the batch, in the gradebook's order."""
    out = []
    for name in batch.labs:
        summary = LabSummary(name, 0.0, [], [], [], 0.0, 0.0)
        for s in batch.submissions:
            lab = next((l for l in (s.report or {}).get("labs", []) if l.get("lab") == name), None)
            if lab is not None:
                summary.scores.append(float(lab.get("score", 0)))
                summary.max_score = max(summary.max_score, float(lab.get("max_score", 0)))
                perf = lab.get("performance", {})
                summary.threshold = float(perf.get("threshold", summary.threshold) or 0)
                summary.floor = float(perf.get("floor", summary.floor) or 0)
                if perf.get("ran") and float(perf.get("gbps", 0) or 0) > 0:
                    summary.fractions.append(float(perf.get("fraction", 0)))
                    summary.gbps.append(float(perf.get("gbps", 0)))
            elif s.row is not None and not s.error and name in s.row:
                # A graded submission whose report.json is unreadable: the gradebook's points.
                try:
                    summary.scores.append(float(s.row[name]))
                except ValueError:
                    pass
        out.append(summary)
    return out


def median(values):
    """The median of \\p values (None for none)."""
    v = sorted(values)
    if not v:
        return None
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
