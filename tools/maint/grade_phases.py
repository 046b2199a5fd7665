#!/usr/bin/env python3
"""Where a reduce-grade run's time goes: its phases, processes and largest costs, as Markdown.

  tools/maint/grade_phases.py GRADE_LOG [--reports DIR] [--title TEXT] [--width N]
  tools/maint/grade_phases.py GRADE_LOG --reports DIR --part-seconds autograder/part_seconds.toml

GRADE_LOG is the grader's terminal output: its progress lines "[   17.4s] ..." (the wording of
progress.line() in autograder/grader/src/). DIR is the grader's report folder (its -o): the
report.json and the logs/ folder beside it give each checker's own log (its CUDA context, its lab
parts, every suite's and test's milliseconds, waits for the large-memory slots), the sanitizer's
tools one repetition each, the build's cmake runs and the benchmark's rows (logs/benchmark/
bench.json, or bench.log's counters). Without DIR only the progress lines are read: a group's
seconds are then its labs' progress-line seconds times their number (the grader prints each lab
the group's share).

What it prints: the phases (build, correctness, benchmark); each build step, the course's and the
labs' (grade_phases_build.py: a grading that builds the course's binaries runs the two at once);
each checker process (start, end, labs, startup) and a timeline of how many ran at once; each
sanitizer tool's run; the public and hidden tests per lab; reruns alone; waits; the correctness
phase's critical path; the benchmark's rows (setup: allocate, fill, warm-up; sampling, the inputs
regenerated on the GPU, the timed calls); and the top 10 time sinks. Times inside a checker are
rebuilt from its log: its start (progress line), then its CUDA context, then its parts' own totals
in order. With --part-seconds it writes, instead, each lab part's seconds in the tests checkers as
the grader's table (grade_phases_parts.py), by which reduce-grade balances its checker groups.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from grade_phases_bench import (bench_rows, fmt, lab_of_rung, render_bench,  # noqa: E402
                                row_costs, row_kind, table)
from grade_phases_build import EXIT, build_steps, exit_seconds, phases, render_build  # noqa: E402
from grade_phases_parts import measured_on, part_seconds, render_toml  # noqa: E402

PROGRESS = re.compile(r"^\[\s*(\d+(?:\.\d+)?)s\] (.*)$")
LAB = re.compile(r"^\[ lab +\] +(?:(\S+) +)?(\d+) +(\S+) +(\S+)\s*$")
SUITE = re.compile(r"^\[-{10}\] \d+ tests? from (\S+) \((\d+) ms total\)")
TEST = re.compile(r"^\[ +(OK|FAILED|SKIPPED) +\] (\S+) \((\d+) ms\)")
PART_TOTAL = re.compile(r"^\[={10}\] (\d+) tests? from \d+ test suites? ran\. \((\d+) ms total\)")
CONTEXT = re.compile(r"^\[ startup +\] the checker's CUDA context: (\d+(?:\.\d+)?) s")
HELD = re.compile(r"^\[ startup +\] held until the labs were built: (\d+(?:\.\d+)?) s")
ANSWERED = re.compile(r"^\[ startup +\] the lab's process \(start (\d+)\) answered its first "
                      r"request (\d+(?:\.\d+)?) s")
WAITED = re.compile(r"^\[ memory +\] waited (\d+(?:\.\d+)?) s for (.*)$")
NAMES = re.compile(r"(\S+) \(([^()]+)\)")
TOOLS = re.compile(r"^compute-sanitizer --tool (.+?): (.*)$")
GROUP_RESULT = re.compile(r"^(\S+) \(([^()]+)\): public tests .*?\((\d+(?:\.\d+)?) s\)$")
SAN_RESULT = re.compile(r"^(\S+): (memcheck|racecheck|synccheck|initcheck)(?: \(([^()]+)\))?: "
                        r".*\((\d+(?:\.\d+)?) s\)(?:;.*)?$")
ALONE = re.compile(r"^(\S+): (public and hidden|public|hidden) tests \(([^()]+)\)"
                   r"(?: again, alone: (\d+) skipped beside other labs)?$")
ALONE_RESULT = re.compile(r"^(\S+): (public|hidden) tests .*\((\d+(?:\.\d+)?) s\)$")
RELEASED = re.compile(r"^(\S+): built and checked; its tests start$")
ALONE_LOGS = {"public and hidden": "_graded.log", "public": "_tests.log", "hidden": "_hidden.log"}

@dataclasses.dataclass
class Part:
    """One lab part of a checker: a (lab, operation) run in one repetition."""
    lab: str
    op: str
    repetition: int
    ms: float = 0.0
    count: int = 0  # tests run
    suites: dict = dataclasses.field(default_factory=dict)
    tests: list = dataclasses.field(default_factory=list)
    start: float = 0.0  # rebuilt: seconds since the grading began

    @property
    def name(self):
        """'lab (op)', as the progress lines name it."""
        return f"{self.lab} ({self.op})"

    def hidden_ms(self):
        """Milliseconds of its hidden suites (is_hidden_test(): the suite's last segment)."""
        return sum(ms for s, ms in self.suites.items() if s.split("/")[-1].startswith("Hidden"))


@dataclasses.dataclass
class Checker:
    """One checker process of the correctness phase: a tests group or a sanitizer group."""
    kind: str  # "tests" or "sanitizer"
    names: list
    start: float
    seconds: float = math.nan
    group: str = ""
    context_s: float = 0.0
    held_s: float = 0.0  # started during the build, held until its first lab was built
    parts: list = dataclasses.field(default_factory=list)
    answers: list = dataclasses.field(default_factory=list)  # (start number, seconds)
    waits: list = dataclasses.field(default_factory=list)  # (seconds, what)
    alone: str = ""  # a suite run alone: "public and hidden", "public" or "hidden"
    skipped: str = ""  # a rerun alone: the tests it skipped beside other labs

    @property
    def end(self):
        """When it ended, seconds since the grading began."""
        return self.start + self.seconds


# ---- reading ------------------------------------------------------------------------------


def read_progress(path, tag=None):
    """The progress lines of a grade log: [(seconds, text)]; with \p tag (a batch's submission)
    only its lines and the shared course build's, their prefixes taken off."""
    lines = []
    for raw in Path(path).read_text(errors="replace").splitlines():
        m = PROGRESS.match(raw)
        text = m.group(2) if m else ""
        if m and tag is not None:
            mine = next((p for p in (f"{tag}: ", "course: ") if text.startswith(p)), None)
            if mine is None:
                continue
            text = text[len(mine):]
        if m:
            lines.append((float(m.group(1)), text))
    return lines


def parse_checker_log(text, checker):
    """Fills \\p checker from its log: context, lab parts with suites and tests, waits, exit."""
    part = None
    for line in text.splitlines():
        if m := LAB.match(line):
            part = Part(m.group(3), m.group(4), int(m.group(2)))
            checker.parts.append(part)
        elif m := CONTEXT.match(line):
            checker.context_s = float(m.group(1))
        elif (m := HELD.match(line)) and part is None:  # the checker's own: before any part
            checker.held_s = float(m.group(1))
        elif m := ANSWERED.match(line):
            checker.answers.append((int(m.group(1)), float(m.group(2))))
        elif m := WAITED.match(line):
            checker.waits.append((float(m.group(1)), m.group(2)))
        elif m := EXIT.match(line):
            checker.seconds = float(m.group(3))
        elif part is None and len(checker.names) == 1 and line.startswith("[=========="):
            lab, op = checker.names[0].rstrip(")").split(" (")  # a lone checker: one part
            part = Part(lab, op, 0)
            checker.parts.append(part)
        elif part is None:
            continue
        elif m := SUITE.match(line):
            part.suites[m.group(1)] = float(m.group(2))
        elif m := TEST.match(line):
            part.tests.append((m.group(2), float(m.group(3))))
        elif m := PART_TOTAL.match(line):
            part.count, part.ms = int(m.group(1)), float(m.group(2))


def lay_out_parts(checker, released=None):
    """Each part's start: the checker's start, its CUDA context, its hold, then the parts in
    order, none before its lab's release (\p released: {lab: seconds}, a held checker's labs)."""
    t = checker.start + checker.context_s + checker.held_s
    for part in checker.parts:
        part.start = t = max(t, (released or {}).get(part.lab, t))
        t += part.ms / 1e3


def releases(lines):
    """{lab: seconds} of the progress lines that release a lab to its held checkers' tests."""
    return {m.group(1): t for t, text in lines if (m := RELEASED.match(text))}


def plan_names(plan):
    """The 'lab (op)' names a checker's plan lists: its launch spec (group_N.launch.json, labs'
    name and op) or, in gradings before the launch spec, its group_N.labs.txt (tab-separated)."""
    if plan.suffix == ".json":
        labs = json.loads(plan.read_text()).get("labs", [])
        return frozenset(f"{lab['name']} ({lab['op']})" for lab in labs if "name" in lab)
    return frozenset(f"{cells[0]} ({cells[1]})" for cells in
                     (line.split("\t") for line in plan.read_text().splitlines()) if len(cells) > 1)


def group_logs(folder):
    """{frozenset of 'lab (op)': (group name, log text)} of a logs/tests or logs/sanitizer: the
    several-lab checkers' (group_N) and the one started during the build (early_N)."""
    found = {}
    for plan in sorted([*Path(folder).glob("group_*.labs.txt"),
                        *Path(folder).glob("group_*.launch.json"),
                        *Path(folder).glob("early_[0-9]*.launch.json")]):
        group = plan.name.split(".")[0]
        log = plan.with_name(f"{group}.log")
        if log.is_file():
            found[plan_names(plan)] = (group, log.read_text(errors="replace"))
    return found


def checkers_from_progress(lines):
    """The checkers the progress lines start, with their seconds where the lines tell them."""
    checkers, shares = [], {}
    for t, text in lines:
        if text.startswith("tests in one checker: "):
            names = [f"{a} ({b})" for a, b in NAMES.findall(text.split(": ", 1)[1])]
            checkers.append(Checker("tests", names, t))
        elif m := TOOLS.match(text):
            names = [f"{a} ({b})" if b else a for a, b in
                     re.findall(r"(\S+?)(?: \(([^()]+)\))?(?:, |$)", m.group(2)) if a]
            checkers.append(Checker("sanitizer", names, t))
        elif m := ALONE.match(text):
            checkers.append(Checker("tests", [f"{m.group(1)} ({m.group(3)})"], t, alone=m.group(2),
                                    skipped=m.group(4) or "", group=f"{m.group(1)} alone"))
        elif m := GROUP_RESULT.match(text):
            shares[f"{m.group(1)} ({m.group(2)})"] = float(m.group(3))
        elif m := SAN_RESULT.match(text):
            key = f"{m.group(1)} ({m.group(3)})" if m.group(3) else m.group(1)
            shares.setdefault(("san", key), (t, float(m.group(4))))
        elif m := ALONE_RESULT.match(text):
            close_alone(checkers, m.group(1), m.group(2), float(m.group(3)))
    for c in checkers:  # without logs: a lab's printed seconds are its group's over its labs
        found = [shares[n] for n in c.names if n in shares]
        if c.kind == "tests" and not c.alone and found:
            c.seconds = found[0] * len(c.names)
        elif c.kind == "sanitizer":  # a one-op lab's result line names it bare
            found = [shares[("san", n)] for n in _bare(c.names) if ("san", n) in shares]
            c.seconds = found[0][0] - c.start if found else math.nan
    return checkers


def close_alone(checkers, lab, which, seconds):
    """Gives its \p seconds to the earliest open lone run of \p lab that a result line of
    \p which ('public' or 'hidden') ends."""
    for c in checkers:
        if c.alone and math.isnan(c.seconds) and c.names[0].startswith(lab + " (") and (
                (which == "hidden") == (c.alone == "hidden")):
            c.seconds = seconds
            return


def attach_logs(checkers, logs, released=None):
    """Reads each checker's own log from \\p logs (the report folder's logs/) where present; a
    part starts no earlier than its lab's release (\\p released, releases())."""
    if logs is None:
        return
    tables = {"tests": group_logs(logs / "tests"), "sanitizer": group_logs(logs / "sanitizer")}
    for c in checkers:
        if c.alone:  # logs/<lab>/<op>_graded.log, _tests.log or _hidden.log
            lab, op = c.names[0].rstrip(")").split(" (")
            log = logs / lab / (op + ALONE_LOGS[c.alone])
            found = [(c.group, log.read_text(errors="replace"))] if log.is_file() else []
        else:
            found = [(g, text) for names, (g, text) in tables[c.kind].items()
                     if len(names) == len(c.names) and set(c.names) <= _bare(names)]
        if found:
            c.group = found[0][0]
            parse_checker_log(found[0][1], c)
            lay_out_parts(c, released)


def _bare(names):
    """'lab (op)' names and their bare labs (a sanitizer line names a one-op lab bare)."""
    return set(names) | {n.split(" (")[0] for n in names}


# ---- concurrency --------------------------------------------------------------------------


def running_at(checkers, t):
    """How many checkers run at time \\p t."""
    return sum(1 for c in checkers if c.start <= t < c.end)


def concurrency_levels(checkers):
    """{number running at once: seconds} over the checkers' span (a sweep over their ends)."""
    edges = sorted({c.start for c in checkers} | {c.end for c in checkers})
    levels = {}
    for a, b in zip(edges, edges[1:]):
        k = running_at(checkers, (a + b) / 2)
        levels[k] = levels.get(k, 0.0) + b - a
    return levels


def part_letter(checker, t):
    """The timeline's character for \\p checker at \\p t ('c' its CUDA context)."""
    if not checker.start <= t < checker.end:
        return " "
    if not checker.parts:
        return "#"
    if t < checker.start + checker.context_s:
        return "c"
    if t < checker.start + checker.context_s + checker.held_s:
        return "h"
    for i, part in enumerate(checker.parts):
        if part.start <= t < part.start + part.ms / 1e3:
            if checker.kind == "sanitizer":
                return "MRSX"[min(part.repetition, 3)]
            return chr(ord("A") + i)
    return "."


def timeline(checkers, width):
    """An ASCII chart: a row per checker, then how many ran at once."""
    t0, t1 = min(c.start for c in checkers), max(c.end for c in checkers)
    cols = max(1, min(width, math.ceil(t1 - t0)))
    step = (t1 - t0) / cols
    times = [t0 + (i + 0.5) * step for i in range(cols)]
    labels = [f"{c.kind[:5]} {c.group}" for c in checkers]
    w = max(len(label) for label in labels + ["at once"])
    rows = [f"{'':{w}}  {t0:<8.1f}{'':{max(0, cols - 16)}}{t1:>8.1f} s"]
    for label, c in zip(labels, checkers):
        rows.append(f"{label:{w}} |" + "".join(part_letter(c, t) for t in times) + "|")
    counts = [running_at(checkers, t) for t in times]
    rows.append(f"{'at once':{w}} |" + "".join(str(k) if k < 10 else "+" for k in counts) + "|")
    rows.append(f"(one column = {step:.2f} s; c: CUDA context; h: held until the labs were "
                "built; A, B, ...: a tests checker's "
                "parts in order; M, R, S: the sanitizer's memcheck, racecheck and synccheck "
                "repetitions; '.': after its parts, until the process ended)")
    return rows


# ---- rendering ----------------------------------------------------------------------------


def render_phases(lines, report):
    """The phases' table."""
    total = report.get("seconds") or (lines[-1][0] if lines else 0.0)
    rows = [(name, fmt(a), fmt(b), fmt(b - a), f"{100 * (b - a) / total:.0f}%")
            for name, a, b in phases(lines, report)]
    out = ["## Phases", ""] + table(("phase", "start s", "end s", "seconds", "of the run"), rows)
    if report:
        out += ["", f"The report: {fmt(report.get('seconds'))} s in all, build "
                f"{fmt(report.get('build_seconds'))} s, graded {fmt(report.get('graded_seconds'))}"
                f" s; processes {json.dumps(report.get('processes', {}))}."]
    return out + [""]


def render_checkers(checkers):
    """The checkers' table."""
    rows = []
    for c in checkers:
        own = sum(p.ms for p in c.parts) / 1e3
        answers = ", ".join(f"#{n} {fmt(s, 2)}" for n, s in c.answers) or "-"
        waits = fmt(sum(w for w, _ in c.waits), 2) if c.waits else "-"
        rest = c.seconds - c.context_s - c.held_s - own if c.parts else None
        rows.append((f"{c.kind} {c.group}", ", ".join(c.names), fmt(c.start), fmt(c.end),
                     fmt(c.seconds), fmt(c.context_s if c.parts else None, 2),
                     fmt(c.held_s, 2) if c.held_s else "-", answers, waits,
                     fmt(own if c.parts else None), fmt(rest)))
    head = ("checker", "labs", "start s", "end s", "seconds", "CUDA context s",
            "held until built s", "lab process answered after (s)", "memory-slot waits s",
            "parts' own s", "else s")
    return ["### Checker processes", ""] + table(head, rows) + [""]


def render_concurrency(checkers, width, phase):
    """The timeline, the seconds spent at each number of checkers at once, and the phase's
    seconds before its first checker and after its last."""
    levels = concurrency_levels(checkers)
    span = sum(levels.values())
    mean = sum(k * s for k, s in levels.items()) / span if span else 0.0
    text = ", ".join(f"{k} at once {fmt(s)} s" for k, s in sorted(levels.items(), reverse=True))
    first, last = min(c.start for c in checkers), max(c.end for c in checkers)
    start = (f"waited {fmt(first - phase[0])} s for its first process" if first >= phase[0] else
             f"had its first process since {fmt(phase[0] - first)} s before it (during the build)")
    edges = (f"The phase ({fmt(phase[0])} to {fmt(phase[1])} s) {start} and waited "
             f"{fmt(phase[1] - last)} s after its last.")
    return (["### How many ran at once", "", "```"] + timeline(checkers, width) + ["```", "",
            f"{text}; {fmt(mean, 2)} on average over {fmt(span)} s. {edges}", ""])


def render_sanitizer(checkers, tools):
    """Each sanitizer tool's run: the parts of its repetition (a lab process started under it)."""
    rows = []
    for c in (c for c in checkers if c.kind == "sanitizer" and c.parts):
        for rep in sorted({p.repetition for p in c.parts}):
            parts = [p for p in c.parts if p.repetition == rep]
            slow = max(parts, key=lambda p: p.ms)
            answer = next((s for n, s in c.answers if n == rep + 1), None)
            tool = tools[rep] if rep < len(tools) else f"repetition {rep}"
            rows.append((c.group, tool, fmt(parts[0].start), fmt(sum(p.ms for p in parts) / 1e3),
                         fmt(answer, 2), f"{slow.name} {fmt(slow.ms / 1e3)}"))
    if not rows:
        return []
    head = ("group", "tool", "start s", "seconds (its parts)", "lab process answered after s",
            "slowest part s")
    note = ("The first tool's seconds leave out the checker's CUDA context; each later tool's "
            "include its lab process's start under that tool.")
    return ["### Sanitizer tools", ""] + table(head, rows) + ["", note, ""]


def render_parts(checkers):
    """Public and hidden tests per lab part of the tests checkers."""
    rows = []
    for c in (c for c in checkers if c.kind == "tests"):
        for p in c.parts:
            slow = max(p.tests, key=lambda t: t[1], default=("-", 0.0))
            rows.append((p.name, c.group, fmt(p.start), fmt(p.start + p.ms / 1e3), p.count,
                         fmt((p.ms - p.hidden_ms()) / 1e3), fmt(p.hidden_ms() / 1e3),
                         fmt(p.ms / 1e3), f"{slow[0]} {fmt(slow[1] / 1e3)}"))
    if not rows:
        return []
    head = ("lab (op)", "checker", "start s", "end s", "tests", "public s", "hidden s", "total s",
            "slowest test s")
    parts = [p for c in checkers if c.kind == "tests" for p in c.parts]
    hidden = sum(p.hidden_ms() for p in parts) / 1e3
    note = (f"All parts: {sum(p.count for p in parts)} tests, {fmt(sum(p.ms for p in parts) / 1e3)}"
            f" s, of which hidden suites {fmt(hidden)} s (they run in the public tests' process).")
    return ["### Public and hidden tests per lab", ""] + table(head, rows) + ["", note, ""]


def test_window(part, test):
    """(start, end) of \p test in \p part: suites and their tests run in order (a log with some
    test lines left out places the rest a little early)."""
    t, suite = part.start, test.split(".")[0]
    for name, ms in part.suites.items():
        if name == suite:
            break
        t += ms / 1e3
    for name, ms in part.tests:
        if name == test:
            return t, t + ms / 1e3
        if name.split(".")[0] == suite:
            t += ms / 1e3
    return part.start, part.start + part.ms / 1e3


def mean_running(checkers, a, b, samples=20):
    """How many checkers ran at once, on average over [a, b)."""
    times = [a + (i + 0.5) * (b - a) / samples for i in range(samples)]
    return sum(running_at(checkers, t) for t in times) / samples


def method(test):
    """A test's name without its suite and parameter: 'Sizes/SumExact.MatchesBitwise/33' ->
    'MatchesBitwise'."""
    return test.split(".")[-1].split("/")[0]


def render_slowest(checkers, count=12):
    """The slowest single tests, when they ran, how many checkers ran then and how many runs of
    the same test (in other labs) overlapped them."""
    timed = [c for c in checkers if not math.isnan(c.seconds)]
    runs = [(ms, name, p, c, test_window(p, name)) for c in checkers if c.kind == "tests"
            for p in c.parts for name, ms in p.tests]
    rows = []
    for ms, name, p, c, (a, b) in sorted(runs, key=lambda r: -r[0])[:count]:
        mid = (a + b) / 2
        same = sum(1 for r in runs if r[4][0] <= mid < r[4][1] and method(r[1]) == method(name))
        rows.append((name, p.name, c.group, fmt(ms / 1e3, 2), f"{fmt(a)}-{fmt(b)}",
                     fmt(mean_running(timed, a, b), 1), same))
    if not rows:
        return []
    head = ("test", "lab (op)", "checker", "seconds", "ran (s, rebuilt)", "checkers at once",
            "runs of this test at once, itself included (at its middle)")
    return ["### Slowest tests", ""] + table(head, rows) + [""]


def render_reruns(checkers):
    """The suites run again alone, after a group in which some of their tests skipped."""
    out = [f"- {c.names[0]} {c.alone} tests, {c.skipped} skipped beside other labs: "
           f"{fmt(c.start)} to {fmt(c.end)} s ({fmt(c.seconds)} s)" for c in checkers if c.skipped]
    return ["### Suites run again, alone", ""] + (out or ["None."]) + [""]


def render_waits(checkers):
    """Waits for the large-memory slots, per checker."""
    out = [f"- {c.kind} {c.group}: {fmt(w, 2)} s for {what}" for c in checkers
           for w, what in c.waits]
    return ["### Waits", ""] + (out or ["None in the checkers' logs."]) + [""]


def render_critical(checkers):
    """Which checker ends the correctness phase last, and why."""
    timed = [c for c in checkers if not math.isnan(c.seconds)]
    if not timed:
        return []
    ordered = sorted(timed, key=lambda c: c.end)
    last, t0 = ordered[-1], min(c.start for c in timed)
    out = ["### Critical path", "", f"The phase's last process: {last.kind} {last.group} "
           f"({', '.join(last.names)}), {fmt(last.start)} to {fmt(last.end)} s ({fmt(last.seconds)}"
           " s)" + (f", {fmt(last.end - ordered[-2].end)} s after the next one to end "
                    f"({ordered[-2].kind} {ordered[-2].group})." if len(ordered) > 1
                    else ".")]
    if last.parts:
        steps = [f"CUDA context {fmt(last.context_s)} s"]
        steps += [f"{p.name} {fmt(p.ms / 1e3)} s ({p.count} tests)" for p in last.parts]
        steps.append(f"after its parts {fmt(last.end - last.parts[-1].start - last.parts[-1].ms / 1e3)}"
                     " s")
        tests = sorted(((ms, f"{p.lab} {name}") for p in last.parts for name, ms in p.tests),
                       reverse=True)[:5]
        out += ["", "Its time: " + ", then ".join(steps) + ".", "",
                "Its slowest tests: " + ", ".join(f"{n} {fmt(ms / 1e3)} s" for ms, n in tests) + "."]
    same = [c for c in timed if c.kind == last.kind]
    total = sum(c.seconds for c in same)
    even = t0 + total / len(same)
    longest = max((p for c in same for p in c.parts), key=lambda p: p.ms, default=None)
    out += ["", f"The {len(same)} {last.kind} checkers took {fmt(min(c.seconds for c in same))} to "
            f"{fmt(max(c.seconds for c in same))} s, {fmt(total)} s in all: spread evenly they would "
            f"end at {fmt(even)} s ({fmt(last.end - even)} s sooner)."]
    if all(c.parts for c in same):
        out[-1] += " The groups' tests and seconds: " + ", ".join(
            f"{c.group} {sum(p.count for p in c.parts)} tests in {fmt(c.seconds)} s"
            for c in same) + "."
    if longest is not None:
        out[-1] += f" The longest part, {longest.name} {fmt(longest.ms / 1e3)} s, bounds any split."
    return out + [""]


def sinks(lines, logs, checkers, rows, labs):
    """Leaves of the breakdown that do not overlap: [(seconds, what, wall or not)]."""
    found = [(b - a, f"build: {name}", True) for name, a, b, _, _ in build_steps(lines, logs)]
    methods = {}
    for p in (p for c in checkers if c.kind == "tests" for p in c.parts):
        for name, ms in p.tests:
            key = method(name)
            n, total = methods.get(key, (0, 0.0))
            methods[key] = (n + 1, total + ms / 1e3)
    found += [(s, f"test {k} ({n} runs)", False) for k, (n, s) in methods.items()]
    if any(c.parts for c in checkers):
        found.append((sum(c.context_s for c in checkers),
                      f"CUDA contexts of {len(checkers)} checkers", False))
    tools = {}
    for c in (c for c in checkers if c.kind == "sanitizer"):
        for p in c.parts:
            tools[p.repetition] = tools.get(p.repetition, 0.0) + p.ms / 1e3
    found += [(s, f"sanitizer repetition {r} (all groups)", False) for r, s in tools.items()]
    per_row = {}
    for row in rows:
        kind = row_kind(row["name"])
        lab = lab_of_rung(row["name"].split("/")[1], labs)
        key = "CUB and stream-read rows" if kind == "trusted" else f"{lab}'s {kind} rows"
        per_row[key] = per_row.get(key, 0.0) + row_costs(row)["total"]
    found += [(s, f"benchmark: {k}", True) for k, s in per_row.items()]
    return found


def render_sinks(found, tools, mean):
    """The top 10 time sinks, by their estimated wall seconds."""
    ranked = sorted(((s if wall else s / mean, s, what, wall) for s, what, wall in found),
                    reverse=True)[:10]
    rows = []
    for est, s, what, wall in ranked:
        for r, tool in enumerate(tools):
            what = what.replace(f"sanitizer repetition {r} ", f"sanitizer {tool} ")
        rows.append((what, fmt(s, 2), "wall" if wall else "checker process", fmt(est, 2)))
    note = (f"Wall: seconds of the run's clock (the build and the benchmark do one thing at a "
            f"time). Checker process: seconds inside the correctness phase's processes, which "
            f"ran {fmt(mean, 2)} at once on average; their wall estimate is their seconds over "
            "that (their real cost is on the critical path).")
    head = ("what", "seconds", "counts as", "wall estimate s")
    return ["## Top 10 time sinks", ""] + table(head, rows) + ["", note, ""]


def sanitizer_tools(lines):
    """The sanitizer's tools in the order of their repetitions."""
    for _, text in lines:
        if m := TOOLS.match(text):
            return m.group(1).split(", then ")
    return []


def read_grading(log, reports=None, tag=None):
    """One grading's progress lines, report.json ({} without it), logs/ folder (None) and
    checkers, their own logs read where the folder has them."""
    lines = read_progress(log, tag)
    report, logs = {}, None
    if reports is not None:
        reports = Path(reports)
        if (reports / "report.json").is_file():
            report = json.loads((reports / "report.json").read_text())
        logs = reports / "logs" if (reports / "logs").is_dir() else None
    checkers = checkers_from_progress(lines)
    attach_logs(checkers, logs, releases(lines))
    return lines, report, logs, checkers


def breakdown(log, reports=None, width=72, tag=None):
    """The whole breakdown of one grading, as Markdown lines."""
    lines, report, logs, checkers = read_grading(log, reports, tag)
    for kind in ("tests", "sanitizer"):  # without their logs: numbered as the lines start them
        for i, c in enumerate(c for c in checkers if c.kind == kind):
            c.group = c.group or f"#{i}"
    labs = report.get("labs_requested") or sorted({n.split(" (")[0] for c in checkers
                                                   for n in c.names})
    rows = bench_rows(logs / "benchmark") if logs is not None else []
    bench_seconds = exit_seconds(logs / "benchmark" / "bench.log") if logs is not None else None
    tools = sanitizer_tools(lines)
    out = render_phases(lines, report) + render_build(lines, logs)
    out += ["## Correctness", ""] + render_checkers(checkers)
    timed = [c for c in checkers if not math.isnan(c.seconds)]
    levels = concurrency_levels(timed) if timed else {}
    mean = sum(k * s for k, s in levels.items()) / max(sum(levels.values()), 1e-9) or 1.0
    if timed:
        out += render_concurrency(timed, width, phases(lines, report)[1][1:])
    out += render_sanitizer(checkers, tools) + render_parts(checkers) + render_slowest(checkers)
    out += render_reruns(checkers)
    out += render_waits(checkers) + render_critical(checkers)
    start = next((t for t, text in lines if text.startswith("benchmark of ")), None)
    out += render_bench(start, rows, bench_seconds, labs)
    return out + render_sinks(sinks(lines, logs, checkers, rows, labs), tools, mean)


def write_part_seconds(parser, args, argv):
    """--part-seconds: the table of the lab parts' seconds in the tests checkers' logs."""
    if not args.reports:
        parser.error("--part-seconds needs --reports: a part's seconds are in its checker's log")
    _, report, _, checkers = read_grading(args.log, args.reports, args.tag)
    parts = part_seconds(checkers)
    if not parts:
        parser.error(f"no tests checker's log with lab parts under {args.reports}/logs/tests")
    command = shlex.join(["python3", "tools/maint/grade_phases.py", *map(str, argv)])
    on = args.measured_on or measured_on(report)
    Path(args.part_seconds).write_text(render_toml(parts, on, command))
    print(f"{args.part_seconds}: {len(parts)} lab parts", file=sys.stderr)
    return 0


def main(argv=None):
    """Prints the breakdown of the grade log given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", help="the grader's terminal output (its progress lines)")
    parser.add_argument("--reports", help="the grader's report folder: report.json and logs/")
    parser.add_argument("--title", help="a heading printed first")
    parser.add_argument("--width", type=int, default=72, help="the timeline's columns")
    parser.add_argument("--tag", help="a batch's submission: only its lines (and the course's)")
    parser.add_argument("--depth", type=int, default=1,
                        help="the title's heading level (the sections' one below it)")
    parser.add_argument("--part-seconds", metavar="FILE",
                        help="write the lab parts' seconds as the grader's table "
                             "(autograder/part_seconds.toml) instead of the breakdown; needs "
                             "--reports")
    parser.add_argument("--measured-on", help="the table's measured_on (default: the GPU and "
                        "date of report.json)")
    args = parser.parse_args(argv)
    if not Path(args.log).is_file():
        parser.error(f"no such log: {args.log}")
    if args.part_seconds:
        return write_part_seconds(parser, args, sys.argv[1:] if argv is None else argv)
    out = ([f"# {args.title}", ""] if args.title else []) + breakdown(args.log, args.reports,
                                                                      args.width, args.tag)
    deeper = "#" * max(0, args.depth - 1)
    print("\n".join(deeper + line if line.startswith("#") else line for line in out).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
