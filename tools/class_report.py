#!/usr/bin/env python3
"""Writes the class report of a `reduce-grade batch` run: one static HTML page and its charts.

usage: tools/class_report.py BATCH_OUT [--out DIR] [--near POINTS]
       (or `reduce-grade report BATCH_OUT`, which finds a python3 with matplotlib and runs this)

BATCH_OUT is the --out folder of `reduce-grade batch` (or of `reduce-grade merge`): it holds
gradebook.csv and one <student>/ folder per submission with report.json (or error.txt for a
submission that could not be graded). The report goes to DIR (default BATCH_OUT/class-report):
index.html and PNG charts made by matplotlib next to it. The page needs no server and no network:
open DIR/index.html in a browser; it links to each student's files by relative paths.

On the page:
  - a score histogram per lab, and one of the totals with the grade boundaries;
  - each lab's bandwidth as a fraction of its measure (the ceiling, or the course's reference or
    CUB timed beside it), one dot per student, against the lab's threshold and floor (from
    report.json's labs[].performance);
  - the most frequent failing tests with their messages, and the most frequent lab messages;
  - the submissions to look at by hand: not graded, report unreadable, sanitizer findings,
    physically impossible speed, timeouts and output floods, forbidden library use, and totals
    just below a grade boundary (see near_boundary());
  - a table of every student with links to their report.json, summary.txt, logs...

A report.json that cannot be parsed is skipped and listed on the page. Exit codes: 0 written,
2 bad input (not a batch output, an empty batch) or matplotlib missing.
"""
import argparse
import collections
import csv
import dataclasses
import datetime
import html
import json
import os
import pathlib
import re
import sys
import urllib.parse

EXIT_BAD_INPUT = 2
NEAR_DEFAULT = 2.0  # percentage points below a grade boundary that put a total on the list
FILES_LINKED = ["report.json", "summary.txt", "junit.xml", "results.json", "error.txt"]


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


# ---- charts -----------------------------------------------------------------------------------


def import_pyplot():
    """matplotlib.pyplot with a file-only backend; exits with a clear message when missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except (ImportError, AttributeError) as e:  # AttributeError: a broken or partial install
        print(f"class_report: error: matplotlib is missing for {sys.executable} ({e}); install "
              "it (Debian/Ubuntu: apt-get install python3-matplotlib; else pip install "
              "matplotlib)", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)
    return plt


def safe_name(text):
    """\\p text as a file name (labs are folder names already; this keeps it so)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


def plot_lab_histogram(plt, summary, path):
    """The histogram of one lab's points, one bar per point."""
    fig, ax = plt.subplots(figsize=(4.2, 2.8), dpi=100)
    top = max(summary.max_score, max(summary.scores, default=0), 1)
    edges = [k - 0.5 for k in range(int(top) + 2)]
    ax.hist(summary.scores, bins=edges, color="#4477aa", edgecolor="white")
    ax.set_xlim(-0.7, int(top) + 0.7)
    ax.set_title(f"{summary.lab} ({len(summary.scores)} graded)", fontsize=10)
    ax.set_xlabel(f"points of {summary.max_score:g}")
    ax.set_ylabel("students")
    ax.yaxis.get_major_locator().set_params(integer=True)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_totals(plt, totals, near, path):
    """The histogram of the totals in percent of the maximum, with the grade boundaries and the
    bands just below them that put a submission on the review list."""
    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=100)
    ax.hist(totals, bins=[2.5 * k for k in range(41)], color="#4477aa", edgecolor="white")
    for boundary in range(10, 100, 10):
        ax.axvspan(boundary - near, boundary, color="#ee6677", alpha=0.15, lw=0)
        ax.axvline(boundary, color="#999999", lw=0.8, ls=":")
    ax.set_xlim(0, 100)
    ax.set_xlabel(f"total, % of the maximum (shaded: within {near:g} points below a boundary)")
    ax.set_ylabel("students")
    ax.set_title(f"totals ({len(totals)} graded)", fontsize=10)
    ax.yaxis.get_major_locator().set_params(integer=True)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_bandwidth(plt, summaries, path):
    """Each lab's fraction of its measure, one dot per student, the threshold as a red bar and the
    floor as a grey one; a note where no benchmark ran (a batch graded without a GPU)."""
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(summaries) + 2), 3.8), dpi=100)
    top = 1.0
    for i, s in enumerate(summaries):
        ax.hlines(s.threshold, i - 0.38, i + 0.38, color="#cc3311", lw=2,
                  label="threshold" if i == 0 else None)
        if s.floor > 0:
            ax.hlines(s.floor, i - 0.38, i + 0.38, color="#888888", lw=1.2, ls="--",
                      label="floor" if i == 0 else None)
        # A fixed spread, so that the same batch always gives the same picture.
        xs = [i + 0.3 * ((k * 0.618) % 1 - 0.5) for k in range(len(s.fractions))]
        colors = ["#228833" if f >= s.threshold else "#ee7733" for f in s.fractions]
        ax.scatter(xs, s.fractions, s=14, c=colors, zorder=3)
        top = max([top, s.threshold] + s.fractions)
    if not any(s.fractions for s in summaries):
        ax.text(0.5, 0.97, "no benchmark ran in this batch (graded without a GPU)",
                transform=ax.transAxes, ha="center", va="top", fontsize=10, color="#555555")
        top *= 1.1  # room for the note above the thresholds
    ax.set_xticks(range(len(summaries)))
    ax.set_xticklabels([s.lab for s in summaries], rotation=30, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(summaries) - 0.4)
    ax.set_ylim(0, top * 1.08)
    ax.set_ylabel("fraction of its measure (ceiling, reference or CUB)")
    ax.set_title("bandwidth per lab (green: at or above the threshold)", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def make_charts(batch, summaries, out, near):
    """Writes every chart into \\p out; returns {name: file name} for the page."""
    plt = import_pyplot()
    charts = {}
    for s in summaries:
        charts[s.lab] = f"scores_{safe_name(s.lab)}.png"
        plot_lab_histogram(plt, s, out / charts[s.lab])
    totals = [100.0 * t[0] / t[1] for t in (s.total() for s in batch.submissions)
              if t is not None and t[1] > 0]
    charts["totals"] = "totals.png"
    plot_totals(plt, totals, near, out / charts["totals"])
    charts["bandwidth"] = "bandwidth.png"
    plot_bandwidth(plt, summaries, out / charts["bandwidth"])
    return charts


# ---- the page ---------------------------------------------------------------------------------

CSS = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.num { text-align: right; }
.grid { display: flex; flex-wrap: wrap; gap: 8px; } .grid img { border: 1px solid #eee; }
.tag { display: inline-block; padding: 0 4px; margin: 1px; border-radius: 3px; font-size: 0.9em;
       background: #fde2e2; } .muted { color: #777; } code { font-size: 0.95em; }
"""


BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))


def inert(text):
    """\\p text with nothing a reader's tools obey, as the grader's inert_text() does: control
    characters but tab and newline, C1 controls, bidirectional overrides and lone surrogates
    (U+DC80..U+DCFF: a byte of a file name that is not UTF-8) as visible escapes."""
    out = []
    for ch in str(text):
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif (code < 0x20 and ch not in "\t\n") or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0x80 <= code <= 0x9F or code in BIDI or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def esc(text):
    """\\p text made inert and escaped for HTML."""
    return html.escape(inert(text), quote=True)


def link(out, target, label):
    """An <a> to \\p target by a relative path from the page's folder \\p out."""
    rel = os.path.relpath(target, out)
    # os.fsencode: the bytes of a name that is not UTF-8, percent-encoded as they are.
    href = "/".join(urllib.parse.quote(os.fsencode(part)) for part in pathlib.Path(rel).parts)
    return f'<a href="{esc(href)}">{esc(label)}</a>'


def student_links(s, out):
    """Links to the files of submission \\p s that exist: its reports, error.txt, and the build
    log of each lab that did not build."""
    links = [link(out, s.folder / f, f) for f in FILES_LINKED if (s.folder / f).is_file()]
    for lab in (s.report or {}).get("labs", []):
        log = s.folder / "logs" / str(lab.get("lab", "")) / "build.log"
        if not lab.get("build", {}).get("ok", True) and log.is_file():
            links.append(link(out, log, f"{lab.get('lab')} build.log"))
    return " ".join(links) or '<span class="muted">no files</span>'


def table(headers, rows, numeric=()):
    """An HTML table; \\p rows hold HTML already escaped; columns in \\p numeric align right."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f'<td{" class=num" if i in numeric else ""}>{c}</td>'
                         for i, c in enumerate(row)) + "</tr>\n"
        for row in rows
    )
    return f"<table><tr>{head}</tr>\n{body}</table>\n"


def failures_html(failures, limit, empty, tests=True):
    """The table of the \\p limit most frequent failures: failing tests with their most
    frequent messages, or (\\p tests false) lab messages in their most frequent wording."""
    if not failures:
        return f'<p class="muted">{esc(empty)}</p>\n'
    rows = []
    for f in failures[:limit]:
        common = [m for m, _ in f.messages.most_common(2) if m]
        shown = ", ".join(f.students[:8])
        if len(f.students) > 8:
            shown += f" and {len(f.students) - 8} more"
        if tests:
            cells = [f"<code>{esc(f.what)}</code>",
                     "<br>".join(esc(m) for m in common) or '<span class="muted">no message</span>']
        else:
            forms = len(f.messages)
            cells = [esc(common[0] if common else f.what) +
                     (f' <span class="muted">({forms} wordings)</span>' if forms > 1 else "")]
        rows.append([str(len(f.students)), esc(f.lab)] + cells + [esc(shown)])
    headers = ["test", "message (most frequent)"] if tests else ["message"]
    more = ""
    if len(failures) > limit:
        more = f'<p class="muted">{len(failures) - limit} more not shown.</p>\n'
    return table(["students", "lab"] + headers + ["who"], rows, (0,)) + more


def render_page(batch, summaries, charts, out, near):
    """The whole page as HTML."""
    subs = batch.submissions
    graded = batch.graded()
    no_gpu = any(not s.report.get("gpu_available", True) for s in graded)
    version = next((s.report.get("grader", {}).get("version", "") for s in graded), "")
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             f"<title>Class report: {esc(batch.folder.resolve().name)}</title>"
             f"<style>{CSS}</style></head><body>\n"]
    parts.append(f"<h1>Class report: {esc(batch.folder.resolve().name)}</h1>\n")
    errors = sum(1 for s in subs if s.error)
    unreadable = [s for s in subs if s.unreadable]
    parts.append(
        f"<p>{len(subs)} submissions: {len(graded)} graded, {errors} not graded, "
        f"{len(unreadable)} with an unreadable report.json; labs {esc(', '.join(batch.labs))}. "
        f"Written {esc(datetime.datetime.now().strftime('%Y-%m-%d %H:%M'))} from "
        f"<code>{esc(batch.folder.resolve())}</code>"
        f"{' by reduce-grade ' + esc(version) if version else ''}.</p>\n")
    if no_gpu:
        parts.append("<p><b>Graded without a GPU</b> (build points only): no test, sanitizer or "
                     "benchmark ran.</p>\n")

    review = [(s, review_reasons(s, near)) for s in subs]
    review = [(s, r) for s, r in review if r]
    parts.append(f'<h2 id="review">To look at by hand ({len(review)})</h2>\n')
    parts.append(
        f'<p class="muted">Not graded, report unreadable, sanitizer findings, physically '
        f'impossible speed, timeouts and output floods, forbidden library use, and totals within '
        f'{near:g} percentage points below a multiple of 10 % of the maximum.</p>\n')
    if review:
        rows = [[f'<a href="#s-{esc(safe_name(s.name))}">{esc(s.name)}</a>',
                 "<br>".join(f'<span class="tag">{esc(k)}</span> {esc(d)}' for k, d in r)]
                for s, r in review]
        parts.append(table(["student", "why"], rows))
    else:
        parts.append('<p class="muted">Nothing to look at.</p>\n')

    parts.append('<h2 id="scores">Scores</h2>\n<div class="grid">\n')
    parts.append(f'<img src="{esc(charts["totals"])}" alt="histogram of the totals">\n')
    for s in summaries:
        parts.append(f'<img src="{esc(charts[s.lab])}" alt="histogram of {esc(s.lab)}">\n')
    parts.append("</div>\n")
    rows = []
    for s in summaries:
        full = sum(1 for v in s.scores if v >= s.max_score - 1e-9 and s.max_score > 0)
        zero = sum(1 for v in s.scores if v <= 1e-9)
        mean = sum(s.scores) / len(s.scores) if s.scores else None
        rows.append([esc(s.lab), str(len(s.scores)), f"{mean:.2f}" if mean is not None else "-",
                     f"{median(s.scores):g}" if s.scores else "-", f"{s.max_score:g}",
                     str(full), str(zero)])
    parts.append(table(["lab", "graded", "mean", "median", "max", "full marks", "zero"], rows,
                       (1, 2, 3, 4, 5, 6)))

    parts.append('<h2 id="bandwidth">Bandwidth</h2>\n')
    parts.append(f'<img src="{esc(charts["bandwidth"])}" alt="fraction of its measure per lab">\n')
    rows = []
    for s in summaries:
        above = sum(1 for f in s.fractions if f >= s.threshold)
        below_floor = sum(1 for f in s.fractions if f < s.floor)
        rows.append([esc(s.lab), str(len(s.fractions)),
                     f"{median(s.gbps):.1f}" if s.gbps else "-",
                     f"{median(s.fractions):.3f}" if s.fractions else "-",
                     f"{s.threshold:.3f}", f"{s.floor:.3f}",
                     str(above) if s.fractions else "-", str(below_floor) if s.fractions else "-"])
    parts.append(table(["lab", "measured", "median GB/s", "median fraction", "threshold", "floor",
                        "at or above threshold", "below floor"], rows, (1, 2, 3, 4, 5, 6, 7)))

    parts.append('<h2 id="failing-tests">Most frequent failing tests</h2>\n')
    parts.append(failures_html(
        failing_tests(subs), 25,
        "No test failed." + (" No test ran: the batch was graded without a GPU." if no_gpu else "")))
    parts.append('<h2 id="messages">Most frequent messages</h2>\n')
    parts.append('<p class="muted">The labs\' messages; those that differ only in their numbers '
                 'count together.</p>\n')
    parts.append(failures_html(frequent_messages(subs), 25, "No lab lost points.", tests=False))

    parts.append('<h2 id="students">Students</h2>\n')
    rows = []
    for s in subs:
        points = s.lab_points()
        total = s.total()
        status = ("not graded: " + first_line(s.error, 120) if s.error else
                  "report.json unreadable" if s.unreadable else (s.row or {}).get("status", "graded"))
        tags = sorted({k for k, _ in review_reasons(s, near)})
        cells = [f'<span id="s-{esc(safe_name(s.name))}">{esc(s.name)}</span>',
                 f"{total[0]:g}/{total[1]:g}" if total else "-",
                 f"{100.0 * total[0] / total[1]:.1f}" if total and total[1] > 0 else "-"]
        for lab in batch.labs:
            if lab in points:
                cells.append(f"{points[lab][0]:g}")
            elif s.row is not None and lab in s.row and not s.error:
                cells.append(esc(s.row[lab]))
            else:
                cells.append("-")
        cells += [esc(status), " ".join(f'<span class="tag">{esc(t)}</span>' for t in tags),
                  student_links(s, out)]
        rows.append(cells)
    parts.append(table(["student", "total", "%"] + batch.labs + ["status", "flags", "files"], rows,
                       tuple(range(1, 3 + len(batch.labs)))))

    if unreadable:
        parts.append(f'<h2 id="unreadable">Reports that could not be read ({len(unreadable)})</h2>\n')
        parts.append(table(["student", "file", "problem"], [
            [esc(s.name), link(out, s.folder / "report.json", "report.json"), esc(s.unreadable)]
            for s in unreadable]))
    parts.append("</body></html>\n")
    return "".join(parts)


def write_report(batch_out, out=None, near=NEAR_DEFAULT):
    """Reads the batch output \\p batch_out and writes the page and its charts into \\p out
    (default BATCH_OUT/class-report); returns the page's path and the batch read."""
    batch = load_batch(batch_out)
    out = pathlib.Path(out) if out else batch.folder / "class-report"
    out.mkdir(parents=True, exist_ok=True)
    summaries = lab_summaries(batch)
    charts = make_charts(batch, summaries, out, near)
    page = out / "index.html"
    page.write_text(render_page(batch, summaries, charts, out, near), encoding="utf-8",
                    errors="replace")
    return page, batch


def main(argv=None):
    # A name that is not UTF-8 is printed escaped, never a UnicodeEncodeError.
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(errors="backslashreplace")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("batch_out", help="the --out folder of reduce-grade batch")
    parser.add_argument("--out", help="the report's folder (default: BATCH_OUT/class-report)")
    parser.add_argument("--near", type=float, default=NEAR_DEFAULT,
                        help="percentage points below a grade boundary that put a total on the "
                        "review list (default %(default)s)")
    args = parser.parse_args(argv)
    try:
        page, batch = write_report(args.batch_out, args.out, args.near)
    except BatchError as e:
        print(f"class_report: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    skipped = [inert(s.name) for s in batch.submissions if s.unreadable]
    print(f"class report: {page} ({len(batch.submissions)} submissions"
          + (f"; report.json unreadable, skipped: {', '.join(skipped)}" if skipped else "") + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
