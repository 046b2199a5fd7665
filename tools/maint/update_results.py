#!/usr/bin/env python3
"""Writes every generated block of the lessons from docs/results and autograder/rubric.toml.

A lesson (labs/NN_*/README.md, and its APPENDIX.md where it has one), README.md or a page of docs/
states no measured number by hand: each one sits in a block this script writes, so a new run's
JSON files in docs/results/ change the lessons with one command, and tools/maint/check_lessons.py
(a ctest test) fails when a block is stale.

Two kinds of blocks:

  <!-- NAME:begin -->                 a block drawn entirely by the generator NAME:
  ...                                   measured  the lab's rows beside the previous rung and CUB
  <!-- NAME:end -->                               (lab 15: both modes at every size)
                                        graded    what tools/grade demands of the lab: points per
                                                  part, the performance threshold as a fraction
                                                  of the ceiling probe and in GB/s per GPU
                                        harris    Harris's G80 ladder beside this course's
                                        strategies  lab 15's strategy table (an earlier run)
                                        course-map  README.md's map: every lab's reference at
                                                  2^28, the row its grade reads, on each GPU
                                        timings   README.md's: how long its two commands and a
                                                  lab's re-grade take, where measured

  <!-- text:begin                     a template kept in the comment, its rendering below it.
  Rung 05 takes {{us('05', 'H200', 28):.1f}} us on the H200.
  -->
  Rung 05 takes 618.4 us on the H200.
  <!-- text:end -->

A template is text with {{expression:format}} fields. The expression is Python, evaluated with the
functions below and nothing else (no builtins beyond min, max, abs, round, len, sum, sorted, str,
int, float, list, range, zip, any, all); the format is a format specification (".1f", ".0f",
".3f"...), after the last colon. Rows are named by lab folder or its two digits ('05'), or
'cub', 'cpu', 'stream_read', '15_capstone_sum_deterministic'; GPUs by 'H100' or 'H200'; sizes by
the power of two (28 for 2^28) or the element count:

  us(impl, gpu, n, op='sum', run=None)     median time in microseconds
  gbps(impl, gpu, n, op='sum', run=None)   input bandwidth, GB/s (10^9 bytes)
  pct(impl, gpu, n, op='sum', run=None)    percent of the ceiling probe of the row's run
  frac(impl, gpu, n, op='sum', run=None)   the same as a fraction (what the grader compares)
  ratio(a, b, gpu, n, op='sum', run=None)  us(a) / us(b): how many times longer a takes
  of_floor(impl, gpu, n, op, run=None)     gbps over the floor's of the same run (lab 17: the row
                                           floor/<n>, cub::DeviceReduce::Sum over the same n,
                                           read as op='floor', impl 'cub')
  raw(impl, gpu, n, op, run)               a named run's row as measured, wrong results too:
                                           {'us', 'gbps', 'pct', 'error', 'wrong'}
  ceiling(gpu, run=None)                   the ceiling probe of a run, GB/s
  context(gpu, run=None)                   the context of a run (its benchmark's facts: gpu,
                                           cub_version, cub_fixed_version...)
  theoretical(gpu, run=None)               the GPU's theoretical bandwidth, GB/s
  sms(gpu, run=None)                       its SM count
  runs(pattern)                            the stems of the result files matching a glob
  rubric(lab)                              {'threshold', 'floor', 'measured', 'points': {...}}
  bar(lab)                                 the lab's performance bar in one sentence: what is
                                           judged, the rubric's threshold and floor, in GB/s on
                                           each GPU where the ceiling probe is the measure, and
                                           the reference solution's fraction
  lit(source, key)                         a figure of docs/results/literature.json
  perr(key)                                a figure of docs/results/product_error_cpu.json

run=None reads the main runs (docs/results/ladder_*.json for the sums, ops_*.json for the other
operations; one run per GPU); run='capstone_auto_h200' reads that one file (a stem of
docs/results/ or of its folders capstone/, library/ and accuracy/).

usage: tools/maint/update_results.py [ROOT]       (default: the repository holding this script)
Run it after copying a new run's JSON into docs/results/ (and after editing a template).
"""
import argparse
import pathlib
import re
import sys

from lesson_blocks.course import Course
from lesson_blocks.graded import graded_section
from lesson_blocks.references import bench_pattern, lab_ops, slowest_reference_row
from lesson_blocks.results import GenerationError, LADDER_GPUS
from lesson_blocks.results import read_run, short_gpu  # noqa: F401  (make_charts.py's, from here)
from lesson_blocks.tables import (harris_table, measured_table, strategies_now_table,
                                  strategies_table)
from lesson_blocks.text import reflow, span
from lesson_blocks.timings import timings_block

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
BEGIN, END = "<!-- measured:begin -->", "<!-- measured:end -->"  # the first generator's markers


# The words of the course map (README.md): each lab's lesson and technique. Its numbers come from
# docs/results (course_map_table()).
COURSE_MAP = {
    "01": ("naive atomic", "every thread `atomicAdd`s into one float"),
    "02": ("interleaved, divergent", "shared-memory tree, `tid % (2*s)`"),
    "03": ("interleaved, strided", "no divergence, bank conflicts"),
    "04": ("sequential addressing", "fold in half, conflict-free"),
    "05": ("first add during load", "two elements per thread on load"),
    "06": ("unrolled last warp", "warp-synchronous tail with `__syncwarp`"),
    "07": ("complete unroll", "block size as a template parameter"),
    "08": ("many elements per thread", "grid-stride loop, grid from the SM count"),
    "09": ("warp shuffle", "`__shfl_down_sync`: warp → block → grid"),
    "10": ("max and min", "another operator and its identity; NaN and ±0"),
    "11": ("product", "identity 1; overflow and underflow depend on the tree"),
    "12": ("mean", "a sum that stays exact past 2^24 elements"),
    "13": ("argmax", "value and 64-bit index together; first index wins"),
    "14": ("float atomicMax", "integer ordering and compare-and-swap"),
    "15": ("capstone", "the speed of memory at every size"),
    "16": ("library primitives", "`cub::BlockReduce`, `cg::reduce`, a `cuda::atomic_ref` ticket"),
    "17": ("segmented", "a sum and softmax's (max, sum) pair per row: a warp, a block or the "
                        "grid per segment"),
    "18": ("accuracy", "compensated sums; the exact sum rounded once, the same bits on any GPU"),
}
# What each kind of run compares a lab with, by the stem of its files without the GPU.
MAP_RUNS = {
    "ladder": "each GPU in one run, beside `cub::DeviceReduce::Sum` ({cub}) and the ceiling "
              "probe, a pure streaming read ({probe})",
    "ops": "one run per GPU, each beside its CUB counterpart in the same process, at {of_cub} of "
           "CUB's bandwidth",
    "library_primitives": "one run per GPU beside labs 09 and 15 and CUB",
    "segmented": "one run per GPU beside `cub::DeviceSegmentedReduce`",
    "accuracy": "an ill-conditioned input, one run per GPU beside CUB",
}


def lab_list(labs):
    """'Labs 01-09 and 15', 'Lab 16': two-digit lab numbers, runs of three or more as ranges."""
    numbers = sorted(int(lab) for lab in labs)
    parts, start = [], 0
    for i in range(1, len(numbers) + 1):
        if i == len(numbers) or numbers[i] != numbers[i - 1] + 1:
            run = numbers[start:i]
            parts += ([f"{run[0]:02d}-{run[-1]:02d}"] if len(run) >= 3 else
                      [f"{k:02d}" for k in run])
            start = i
    text = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return ("Labs " if len(numbers) > 1 else "Lab ") + text


def per_gpu(values, unit=""):
    """'H100 2986 GB/s, H200 4335 GB/s' from {gpu: text}."""
    return ", ".join(f"{gpu} {value}{unit}" for gpu, value in values.items())


def course_map_table(course, lab=None):
    """README.md's course map: every lab's reference solution at 2^28 floats on each GPU, the row
    its performance grade reads (slowest_reference_row()), and where each figure comes from."""
    gpus = [short for short, name in LADDER_GPUS if (course.results / name).exists()]
    lines = ["| lab | lesson | technique |" + "".join(f" {g} GB/s |" for g in gpus),
             "| --- | --- | --- |" + " ---: |" * len(gpus)]
    slowest, groups = {}, {}
    for folder in course.labs:
        number = folder[:2]
        if number not in COURSE_MAP:
            raise GenerationError(f"no words for lab {number} in COURSE_MAP (update_results.py)")
        title, technique = COURSE_MAP[number]
        ops = lab_ops(course, folder)
        rows = {g: slowest_reference_row(course, folder, g, ops) for g in gpus}
        cells = "".join(" - |" if not r else f" {r['gbps']:.1f} |" if r["gbps"] < 100 else
                        f" {r['gbps']:.0f} |" for r in rows.values())
        lines.append(f"| {number} | [{title}](labs/{folder}/README.md) | {technique} |{cells}")
        found = [r for r in rows.values() if r]
        if found:
            stem = re.sub(r"_h\d+$", "", pathlib.Path(found[0]["file"]).stem)
            group = groups.setdefault(stem, {"labs": [], "files": set()})
            group["labs"].append(number)
            group["files"].update(r["file"] for r in found)
            if len(ops) > 1 or any(bench_pattern(course, op).endswith("*") for op in ops):
                slowest[number] = {g: r["op"] for g, r in rows.items() if r}
    lines += ["", course_map_note(course, gpus, slowest, groups)]
    return reflow("\n".join(lines)) + "\n"


def course_map_note(course, gpus, slowest, groups):
    """The paragraph under the course map: what each figure is and which runs it comes from."""
    which = []
    for number, ops in slowest.items():
        names = set(ops.values())
        which.append(f"lab {number}: `{names.pop()}`" if len(names) == 1 else
                     f"lab {number}: " + ", ".join(f"`{op}` on the {g}" for g, op in ops.items()))
    text = ("Input bandwidth of each lab's reference solution at 2^28 floats, in the row its "
            "performance grade reads: the slowest of the operations it is graded on ("
            + "; ".join(which) + "). ")
    for stem, group in groups.items():
        numbers, files = group["labs"], sorted(group["files"])
        words = MAP_RUNS.get(stem, "one run per GPU")
        if "{cub}" in words:
            words = words.format(
                cub=per_gpu({g: f"{course.row('cub', g, 28)['gbps']:.0f}" for g in gpus}, " GB/s"),
                probe=per_gpu({g: f"{course.file(f'ladder_{g.lower()}')[1]:.0f}" for g in gpus},
                              " GB/s"))
        elif "{of_cub}" in words:
            words = words.format(of_cub=" and ".join(
                f"{span(of_cub(course, numbers, g), '.0f')} % ({g})" for g in gpus))
        text += f"{lab_list(numbers)} ({file_set(files)}): {words}. "
    return text + ("Every run's JSON is in [docs/results](docs/results); "
                   "`python3 tools/maint/make_charts.py` draws them. This table is generated "
                   "(`tools/maint/update_results.py`, its words in `COURSE_MAP` there), and "
                   "`tools/maint/check_lessons.py` fails when it differs from docs/results.")


def file_set(files):
    """'docs/results/ladder_{h100,h200}.json' for files that differ only by their GPU."""
    stems = {re.sub(r"_h\d+\.json$", "", f) for f in files}
    if len(files) < 2 or len(stems) != 1:
        return ", ".join(files)
    gpus = sorted(re.search(r"_(h\d+)\.json$", f).group(1) for f in files)
    return f"{stems.pop()}_{{{','.join(gpus)}}}.json"


def of_cub(course, numbers, gpu):
    """Percentages of CUB's bandwidth, in the same run, of every benchmarked operation of some
    labs on one GPU (the operations' CUB counterparts: cub::DeviceReduce::Max for maximum...)."""
    values = []
    for number in numbers:
        folder = course.impl(number)
        for op in lab_ops(course, folder):
            values.append(100 * course.row(folder, gpu, 28, op)["gbps"] /
                          course.row("cub", gpu, 28, op)["gbps"])
    return values


GENERATORS = {"measured": measured_table, "graded": graded_section, "harris": harris_table,
              "strategies": strategies_table, "strategies-now": strategies_now_table,
              "course-map": course_map_table, "timings": timings_block}


# ---- templates ----------------------------------------------------------------------------------

FIELD = re.compile(r"\{\{(.+?)\}\}", re.S)
FORMAT_SPEC = re.compile(r"[<>=^]?[+\- ]?#?0?\d*[,_]?(\.\d+)?[bcdeEfFgGnosxX%]?")


def render_template(template, namespace):
    def field(match):
        expr, spec = match.group(1).strip(), ""
        head, colon, tail = expr.rpartition(":")
        if colon and FORMAT_SPEC.fullmatch(tail.strip()) and tail.strip():
            expr, spec = head.strip(), tail.strip()
        try:
            value = eval(expr, dict(namespace, __builtins__={}))  # noqa: S307 (the course's own text)
        except GenerationError:
            raise
        except Exception as error:  # a typo in a template: say which field
            raise GenerationError(f"template field {{{{{match.group(1).strip()}}}}}: "
                                  f"{type(error).__name__}: {error}")
        return format(value, spec)
    return FIELD.sub(field, template)


# ---- blocks in a file -----------------------------------------------------------------------------

BLOCK = re.compile(r"<!-- (?P<name>[a-z][a-z0-9-]*):begin -->\n(?P<body>.*?)<!-- (?P=name):end -->",
                   re.S)
TEXT = re.compile(r"<!-- text:begin\n(?P<template>.*?)\n-->\n(?P<body>.*?)<!-- text:end -->", re.S)


def lab_of(path, course):
    folder = pathlib.Path(path).parent.name
    return folder if folder in course.labs else None


def render(text, path, course):
    """(new text, [(kind, line, old body, new body)]) with every block of one file regenerated.
    Raises GenerationError with the file and line of the block that cannot be generated."""
    changes = []
    namespace = course.namespace()
    lab = lab_of(path, course)

    def line_of(pos):
        return text.count("\n", 0, pos) + 1

    def named(match):
        name = match.group("name")
        if name == "text":
            return match.group(0)
        generator = GENERATORS.get(name)
        where = f"{path}:{line_of(match.start())}"
        if generator is None:
            raise GenerationError(f"{where}: unknown generated block '{name}' "
                                  f"(known: {', '.join(sorted(GENERATORS))}, text)")
        if lab is None and name in ("measured", "graded"):
            raise GenerationError(f"{where}: block '{name}' outside a lab folder")
        try:
            body = generator(course, lab)
        except GenerationError as error:
            raise GenerationError(f"{where}: block '{name}': {error}")
        except KeyError as error:
            raise GenerationError(f"{where}: block '{name}': missing {error}")
        if body != match.group("body"):
            changes.append((name, line_of(match.start()), match.group("body"), body))
        return f"<!-- {name}:begin -->\n{body}<!-- {name}:end -->"

    def templated(match):
        where = f"{path}:{line_of(match.start())}"
        try:
            body = reflow(render_template(match.group("template"), namespace)) + "\n"
        except GenerationError as error:
            raise GenerationError(f"{where}: text block: {error}")
        if body != match.group("body"):
            changes.append(("text", line_of(match.start()), match.group("body"), body))
        return f"<!-- text:begin\n{match.group('template')}\n-->\n{body}<!-- text:end -->"

    new = TEXT.sub(templated, text)
    text = new  # line numbers of the named blocks: after the text blocks (same lines)
    new = BLOCK.sub(named, new)
    return new, changes


def pages(root):
    """The files that carry generated blocks and measured numbers: README.md (its course map),
    every lesson and a lesson's appendix (labs/NN_*/APPENDIX.md, its details and measurements), and
    the pages of docs/ except the grader's manual (tools/maint/grading_results.py writes its
    blocks)."""
    root = pathlib.Path(root)
    found = [root / "README.md"] if (root / "README.md").exists() else []
    found += sorted(root.glob("labs/[0-9][0-9]_*/README.md"))
    found += sorted(root.glob("labs/[0-9][0-9]_*/APPENDIX.md"))
    found += sorted(p for p in (root / "docs").glob("*.md") if p.name != "grader.md")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", default=str(ROOT), help="the course's root folder")
    args = parser.parse_args()
    course = Course(args.root)
    failed = False
    for path in pages(args.root):
        text = path.read_text()
        try:
            new, changes = render(text, path.relative_to(args.root), course)
        except GenerationError as error:
            print(f"error: {error}", file=sys.stderr)
            failed = True
            continue
        if new != text:
            path.write_text(new)
            print(f"updated {path.relative_to(args.root)} ({len(changes)} blocks)")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
