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
import fnmatch
import json
import math
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
BEGIN, END = "<!-- measured:begin -->", "<!-- measured:end -->"  # the first generator's markers
LADDER_GPUS = (("H100", "ladder_h100.json"), ("H200", "ladder_h200.json"))
# Folders of docs/results that hold runs read only where a template names them.
SIDE_FOLDERS = ("capstone", "library", "accuracy", "segmented")
# The runs of the reference solutions' default code among them (the rest time variants).
DEFAULT_SIDE_RUNS = ("library/library_primitives_h*.json", "accuracy/accuracy_h*.json")
# The runs of the operations graded as a family of rows (course.json bench "<prefix>*").
FAMILY_RUNS = "segmented/segmented_h*.json"


class GenerationError(Exception):
    """A block that cannot be generated: a missing row, file or rubric entry, a bad template."""


# ---- reading benchmark results -------------------------------------------------------------------

def read_run(path):
    """(gpu, ceiling GB/s, {(op, impl, n): (median_us, median_gbps)}) of one benchmark file.

    Shared with tools/maint/make_charts.py. Rows whose timed runs returned a wrong result are left out:
    they are no measurement."""
    data = json.loads(pathlib.Path(path).read_text())
    context = data.get("context", {})
    gpu = context.get("gpu")
    try:
        ceiling = float(context.get("ceiling_gbps", "nan"))
    except ValueError:
        ceiling = math.nan
    rows = {}
    for bench in data.get("benchmarks", []):
        parts = bench.get("name", "").split("/")[:3]  # "<op>/<impl>/<n>/min_time:.../manual_time"
        if parts[:1] == ["floor"] and len(parts) >= 2 and parts[1].isdigit():
            parts = ["floor", "cub", parts[1]]  # lab 17's floor/<n>: cub::DeviceReduce::Sum
        if len(parts) != 3 or not parts[2].isdigit() or "median_gbps" not in bench:
            continue
        if bench.get("wrong_results", 0):
            continue
        rows[(parts[0], parts[1], int(parts[2]))] = (bench["median_us"], bench["median_gbps"])
    return gpu, ceiling, rows


def load_runs(results):
    """{(gpu, op, impl, n): row} and {gpu: ceiling GB/s} from every JSON file of a folder."""
    rows, ceilings = {}, {}
    # Ladder runs last: where another run and a ladder run measured the same row, the ladder's
    # wins, so a rung and the rung before it come from one run.
    for path in sorted(results.glob("*.json"), key=lambda p: (p.name.startswith("ladder"), p.name)):
        gpu, ceiling, run = read_run(path)
        if not gpu:
            continue
        ceilings[gpu] = ceiling
        for (op, impl, n), (us, gbps) in run.items():
            rows[(gpu, op, impl, n)] = {"us": us, "gbps": gbps, "ceiling": ceiling,
                                        "file": path.name}
    return rows, ceilings


def short_gpu(name):
    """'NVIDIA H100 80GB HBM3' -> 'H100', 'NVIDIA H200' -> 'H200'."""
    words = name.replace("NVIDIA", "").split()
    kept = []
    for word in words:
        if re.match(r"^\d+GB$", word, re.I) or word.upper() in ("HBM3", "HBM3E", "PCIE", "SXM", "NVL"):
            break
        kept.append(word)
    return " ".join(kept) or name


def pow2(n):
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def read_toml(path):
    try:
        import tomllib  # Python 3.11
    except ImportError:
        try:
            import tomli as tomllib  # Debian/Ubuntu python3-tomli, for older interpreters
        except ImportError:
            raise GenerationError(f"reading {path} needs Python 3.11 (tomllib) or python3-tomli")
    with open(path, "rb") as f:
        return tomllib.load(f)


class Course:
    """Everything a generated block may read: the results, the rubric, the lab folders."""

    def __init__(self, root):
        self.root = pathlib.Path(root)
        self.results = self.root / "docs" / "results"
        self.rows, self.ceilings = load_runs(self.results)
        self._files = {}
        self._rubric = None
        self._json = {}
        self.labs = sorted(p.name for p in (self.root / "labs").glob("[0-9][0-9]_*") if p.is_dir())

    # -- names ---------------------------------------------------------------------------------

    def impl(self, name):
        name = str(name)
        if re.fullmatch(r"\d\d", name):
            found = [lab for lab in self.labs if lab.startswith(name + "_")]
            if not found:
                raise GenerationError(f"no lab folder labs/{name}_*")
            return found[0]
        return name

    @staticmethod
    def size(n):
        n = int(n)
        return 1 << n if n < 64 else n

    def gpu(self, short, names):
        for name in names:
            if short_gpu(name) == short or name == short:
                return name
        raise GenerationError(f"no GPU named {short!r} in docs/results (have: "
                              f"{', '.join(sorted(set(short_gpu(g) for g in names))) or 'none'})")

    # -- rows ----------------------------------------------------------------------------------

    def file(self, stem):
        """(gpu, ceiling, rows, context) of docs/results/<stem>.json or of one of its folders
        capstone/, library/ (lab 16's runs) and accuracy/ (lab 18's), read only where a template
        names them."""
        if stem not in self._files:
            for folder in (self.results, *(self.results / sub for sub in SIDE_FOLDERS)):
                path = folder / f"{stem}.json"
                if path.exists():
                    gpu, ceiling, rows = read_run(path)
                    context = json.loads(path.read_text()).get("context", {})
                    self._files[stem] = (gpu, ceiling, rows, context)
                    break
            else:
                raise GenerationError(f"no results file docs/results/[{'/|'.join(SIDE_FOLDERS)}/]"
                                      f"{stem}.json")
        return self._files[stem]

    def row(self, impl, gpu, n, op="sum", run=None):
        impl, n = self.impl(impl), self.size(n)
        if run:
            name, ceiling, rows, _ = self.file(run)
            if short_gpu(name or "") != gpu and name != gpu:
                raise GenerationError(f"{run}.json was measured on {name}, not {gpu}")
            row = rows.get((op, impl, n))
            if not row:
                raise GenerationError(f"no row {op}/{impl}/{pow2(n)} in {run}.json")
            return {"us": row[0], "gbps": row[1], "ceiling": ceiling, "file": run + ".json"}
        full = self.gpu(gpu, {g for (g, *_rest) in self.rows})
        row = self.rows.get((full, op, impl, n))
        if not row:
            raise GenerationError(f"no row {op}/{impl}/{pow2(n)} on {gpu} in docs/results/*.json")
        return row

    def raw_row(self, impl, gpu, n, op, run):
        """One row of a named run as measured, also when its results were wrong (a comparison
        that times an implementation known to miss the contract): us, gbps, pct of the run's
        probe, error (|result - exact| of a timed call) and wrong (whether any call was)."""
        if not run:
            raise GenerationError("raw() reads a named run: give run=")
        impl, n = self.impl(impl), self.size(n)
        name, ceiling, _rows, _context = self.file(run)
        if short_gpu(name or "") != gpu and name != gpu:
            raise GenerationError(f"{run}.json was measured on {name}, not {gpu}")
        for folder in (self.results, *(self.results / sub for sub in SIDE_FOLDERS)):
            path = folder / f"{run}.json"
            if path.exists():
                break
        for bench in json.loads(path.read_text()).get("benchmarks", []):
            if bench.get("name", "").split("/")[:3] == [op, impl, str(n)] and "median_us" in bench:
                return {"us": bench["median_us"], "gbps": bench["median_gbps"],
                        "pct": 100 * bench["median_gbps"] / ceiling,
                        "error": bench.get("abs_error", math.nan),
                        "wrong": bench.get("wrong_results", 0) > 0}
        raise GenerationError(f"no row {op}/{impl}/{pow2(n)} in {run}.json")

    def context(self, gpu, run=None):
        if run:
            return self.file(run)[3]
        for short, name in LADDER_GPUS:
            if short == gpu:
                return self.file(name[:-5])[3]
        raise GenerationError(f"no ladder run of {gpu}")

    # -- other sources -------------------------------------------------------------------------

    def rubric(self):
        if self._rubric is None:
            self._rubric = read_toml(self.root / "autograder" / "rubric.toml")
        return self._rubric

    def lab_rubric(self, lab):
        rubric = self.rubric()
        lab = self.impl(lab)
        entry = rubric.get("labs", {}).get(lab)
        if entry is None:
            raise GenerationError(f"autograder/rubric.toml has no [labs.{lab}]")
        points = dict(rubric.get("points", {}))
        points.update(entry.get("points", {}))
        threshold = float(entry["threshold"])
        floor_ratio = float(rubric.get("performance", {}).get("floor_ratio", 0.4))
        probe_threshold = float(entry.get("probe_threshold", threshold))
        return {"threshold": threshold, "measured": entry.get("measured"),
                "floor": float(entry.get("floor", floor_ratio * threshold)), "points": points,
                "library": entry.get("library", "none"), "measure": entry.get("measure", "probe"),
                "probe_threshold": probe_threshold,
                "probe_floor": float(entry.get("probe_floor", floor_ratio * probe_threshold)),
                "races_gate": bool(entry.get("races_gate_performance", False))}

    def data(self, name):
        if name not in self._json:
            path = self.results / name
            if not path.exists():
                raise GenerationError(f"no docs/results/{name}")
            self._json[name] = json.loads(path.read_text())
        return self._json[name]

    def lit(self, source, key):
        sources = self.data("literature.json").get("sources", {})
        if source not in sources or key not in sources[source].get("figures", {}):
            raise GenerationError(f"docs/results/literature.json has no figure {source}.{key}")
        return sources[source]["figures"][key]

    def perr(self, key):
        figures = self.data("product_error_cpu.json").get("figures", {})
        if key not in figures:
            raise GenerationError(f"docs/results/product_error_cpu.json has no figure {key}")
        return figures[key]

    # -- the template namespace ----------------------------------------------------------------

    def namespace(self):
        def us(impl, gpu, n=28, op="sum", run=None):
            return self.row(impl, gpu, n, op, run)["us"]

        def gbps(impl, gpu, n=28, op="sum", run=None):
            return self.row(impl, gpu, n, op, run)["gbps"]

        def frac(impl, gpu, n=28, op="sum", run=None):
            row = self.row(impl, gpu, n, op, run)
            return row["gbps"] / row["ceiling"]

        def pct(impl, gpu, n=28, op="sum", run=None):
            return 100 * frac(impl, gpu, n, op, run)

        def ratio(a, b, gpu, n=28, op="sum", run=None):
            return us(a, gpu, n, op, run) / us(b, gpu, n, op, run)

        def of_floor(impl, gpu, n=28, op="sum", run=None):
            return gbps(impl, gpu, n, op, run) / gbps("cub", gpu, n, "floor", run)

        def context(gpu, run=None):
            return self.context(gpu, run)

        def ceiling(gpu, run=None):
            if run:
                return self.file(run)[1]
            return float(self.context(gpu)["ceiling_gbps"])

        def theoretical(gpu, run=None):
            return float(self.context(gpu, run)["theoretical_gbps"])

        def sms(gpu, run=None):
            return int(self.context(gpu, run)["sm_count"])

        def raw(impl, gpu, n=28, op="sum", run=None):
            return self.raw_row(impl, gpu, n, op, run)

        def runs(pattern):
            stems = [p.stem for p in sorted(self.results.rglob("*.json"))
                     if fnmatch.fnmatch(p.stem, pattern)]
            if not stems:
                raise GenerationError(f"no results file matches {pattern}")
            return stems

        def probe(gpu, layout, run=None):
            context = self.context(gpu, run)
            if f"probe {layout}" not in context:
                raise GenerationError(f"no probe layout '{layout}' in the context of "
                                      f"{run or gpu + ' ladder'} run")
            return float(context[f"probe {layout}"])

        def tick(run):
            """The event timer's step in a run: the smallest gap between two medians, in us."""
            times = sorted({round(us, 6) for us, _ in self.file(run)[2].values()})
            return min(b - a for a, b in zip(times, times[1:]) if b - a > 1e-6)

        def cap(kind, gpu, run=None):
            """The stem of a capstone results file: cap('auto', 'H200') -> 'capstone_auto_h200'."""
            return f"capstone_{kind}_{gpu.lower()}" + (f"_run{run}" if run else "")

        def wave(config, n, column):
            """A cell of docs/results/capstone/waves_h200_run2.txt: config 'atomic:2', n 28,
            column 'cub', 'fast' or 'det' (median us)."""
            path = self.results / "capstone" / "waves_h200_run2.txt"
            if not path.exists():
                raise GenerationError("no docs/results/capstone/waves_h200_run2.txt")
            for line in path.read_text().splitlines():
                cells = line.split()
                if len(cells) >= 6 and cells[0] == config and cells[1] == f"2^{self.size(n).bit_length() - 1}":
                    return float({"cub": cells[2], "fast": cells[3], "det": cells[5]}[column])
            raise GenerationError(f"waves_h200_run2.txt has no row {config} 2^{n}")

        def bar(lab):
            """A lesson's performance bar in one sentence (performance_bar())."""
            return performance_bar(self, lab)

        safe = {f.__name__: f for f in (min, max, abs, round, len, sum, sorted, str, int, float,
                                        list, range, zip, any, all, enumerate)}
        return dict(safe, us=us, gbps=gbps, frac=frac, pct=pct, ratio=ratio, of_floor=of_floor,
                    ceiling=ceiling, context=context, theoretical=theoretical, sms=sms, runs=runs,
                    rubric=self.lab_rubric,
                    lit=self.lit, perr=self.perr, pow2=pow2, span=span, sig=sig, probe=probe,
                    tick=tick, cap=cap, wave=wave, raw=raw, bar=bar)


def sig(value, digits=3):
    """A number with `digits` significant figures and no exponent: 0.000909, 0.0146, 3.73, 953."""
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def span(values, spec=".1f"):
    """'2.5-3.6': the smallest and largest of some values, or one value when they print alike."""
    values = list(values)
    low, high = format(min(values), spec), format(max(values), spec)
    return low if low == high else f"{low}-{high}"


# ---- generators of whole blocks --------------------------------------------------------------

def measured_table(course, lab):
    """The lab's rows beside the previous rung (labs 02-09) and CUB, every GPU and size."""
    if lab == "15_capstone":
        return capstone_table(course)
    rows = course.rows
    index = course.labs.index(lab)
    previous = course.labs[index - 1] if 0 < index and int(lab[:2]) <= 9 else None
    keys = sorted({(g, o, n) for (g, o, i, n) in rows if i == lab})
    if not keys:
        raise GenerationError(f"no measured row of {lab} in docs/results/*.json")
    head = "| GPU | op | n | time (us) | GB/s | % of ceiling | CUB (us) | time / CUB |"
    sep = "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    if previous:
        head += f" rung {previous[:2]} (us) | rung {previous[:2]} / this |"
        sep += " ---: | ---: |"
    lines = [head, sep]
    for gpu, op, n in keys:
        r = rows[(gpu, op, lab, n)]
        cub = rows.get((gpu, op, "cub", n))
        pct = 100 * r["gbps"] / r["ceiling"]
        line = (f"| {gpu} | {op} | {pow2(n)} | {r['us']:.1f} | "
                + (f"{r['gbps']:.1f}" if r["gbps"] < 10 else f"{r['gbps']:.0f}") + " | "
                + (f"{pct:.2f}" if pct < 1 else f"{pct:.1f}") + " | ")
        line += f"{cub['us']:.1f} | {r['us'] / cub['us']:.3f} |" if cub else "- | - |"
        if previous:
            p = rows.get((gpu, op, previous, n))
            line += f" {p['us']:.1f} | {p['us'] / r['us']:.2f} |" if p else " - | - |"
        lines.append(line)
    files = sorted({rows[(g, o, lab, n)]["file"] for g, o, n in keys})
    lines += ["", "% of ceiling: against the streaming-read probe measured in the same run ("
              + ", ".join(f"docs/results/{f}" for f in files) + "). Times: median of many runs, "
              "CUDA events, L2 flushed before each."]
    return reflow("\n".join(lines)) + "\n"


def capstone_table(course):
    """Lab 15's table: both modes beside CUB at every size, from the capstone step's runs
    (capstone/capstone_auto_*.json: the defaults, one process per GPU, CUB in the same run)."""
    lines = ["| GPU | n | fast (us) | GB/s | % of ceiling | CUB (us) | fast / CUB | "
             "deterministic (us) | determ. / CUB | determ. / fast |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    files = sorted((course.results / "capstone").glob("capstone_auto_*.json"))
    for path in files:
        gpu, ceiling, run = read_run(path)
        for n in sorted({n for (op, impl, n) in run if op == "sum" and impl == "15_capstone"}):
            fast, cub = run[("sum", "15_capstone", n)], run.get(("sum", "cub", n))
            det = run.get(("sum", "15_capstone_sum_deterministic", n))
            if not cub or not det:
                continue
            lines.append(f"| {gpu} | {pow2(n)} | {fast[0]:.1f} | {fast[1]:.0f} | "
                         f"{100 * fast[1] / ceiling:.1f} | {cub[0]:.1f} | {fast[0] / cub[0]:.3f} | "
                         f"{det[0]:.1f} | {det[0] / cub[0]:.3f} | {det[0] / fast[0]:.3f} |")
    if len(lines) == 2:
        raise GenerationError("no docs/results/capstone/capstone_auto_*.json")
    lines.append("")
    lines.append("One process per GPU (" + ", ".join(f"docs/results/capstone/{p.name}" for p in files)
                 + "): both modes with their default strategies, CUB and the ceiling probe "
                 "measured in the same run. Times: median of many runs, CUDA events, L2 flushed "
                 "before each.")
    return reflow("\n".join(lines)) + "\n"


def gbps_text(value):
    """A bandwidth with three significant figures at most decimals: 2202, 11.6, 1.16."""
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


PART_TEXT = {
    "build": "compiles, links with the course's tests, and is not the untouched stub",
    "tests": "the public tests, in proportion to the tests passed",
    "hidden": "the hidden tests (the grader's own), in proportion to the tests passed",
}


def graded_section(course, lab):
    """What tools/grade demands of one lab, from autograder/rubric.toml and the ladder runs."""
    rubric = course.rubric()
    entry = course.lab_rubric(lab)
    points, threshold, floor = entry["points"], entry["threshold"], entry["floor"]
    tools = rubric.get("sanitizer", {}).get("tools", [])
    size = rubric.get("performance", {}).get("size", "2^28")
    ceiling_kind = rubric.get("performance", {}).get("ceiling", "probe")
    ops = lab_ops(course, lab)
    total = sum(points.get(k, 0) for k in ("build", "tests", "hidden", "sanitizer", "performance"))
    share = (f"{points.get('sanitizer', 0):g}/{len(tools)} point" if len(tools) > 1
             else f"{points.get('sanitizer', 0):g} point")
    lines = [f"`tools/grade` scores this lab out of {total:g} points (`autograder/rubric.toml`):",
             "", "| part | points | what earns them |", "| --- | ---: | --- |"]
    for part in ("build", "tests", "hidden"):
        text = PART_TEXT[part]
        if part == "hidden" and points.get("hidden", 0) == 0:
            text = "none: the rubric gives this lab's hidden tests no points of their own"
        lines.append(f"| {part} | {points.get(part, 0):g} | {text} |")
    lines.append(f"| sanitizer | {points.get('sanitizer', 0):g} | {', '.join(tools)}: "
                 f"{share} each, for a run over small sizes that finds nothing |")
    families = any(bench_pattern(course, op).endswith("*") for op in ops)
    judged = (f"the bandwidth of the slower of {' and '.join(ops)}" if len(ops) > 1
              else f"the bandwidth of {ops[0]}" if ops else "-")
    if families:
        judged = (f"the bandwidth of the slowest of {' and '.join(ops)} over the benchmark's "
                  "segment lengths")
    if entry["measure"] == "cub":
        small = rubric["labs"][course.impl(lab)].get("launch_bound_size", "")
        lines.append(f"| performance | {points.get('performance', 0):g} | full at {threshold:g} of "
                     f"`cub::DeviceReduce::Sum`'s speed or above, none at {floor:.3g} or below, "
                     "linear in between; only when every public and hidden test passes |")
        lines += ["", f"Performance is {judged} at {size} elements"
                  + (f" and at a launch-bound {small} elements" if small else "")
                  + ", the slowest of them, as a fraction of the speed of `cub::DeviceReduce::Sum` "
                  "built as a lab library (autograder/bench/references) and timed in the same "
                  "benchmark process in the same way (a lab process of its own, every input made "
                  "anew before every call): the capstone's promise is CUB's speed at every size, "
                  "on whatever GPU grades it. Where CUB's library cannot be built the grade is "
                  f"against the ceiling probe, full at {entry['probe_threshold']:g} of it, none at "
                  f"{entry['probe_floor']:.3g}, and the report says so. On the two GPUs of the "
                  "committed runs that fallback means:", ""]
        threshold, floor = entry["probe_threshold"], entry["probe_floor"]
    elif entry["measure"] == "reference":
        lines.append(f"| performance | {points.get('performance', 0):g} | full at {threshold:g} of "
                     f"the course's reference solution of this lab or above, none at {floor:.3g} "
                     "or below, linear in between; only when every public and hidden test "
                     "passes |")
        lines += ["", f"Performance is {judged} at {size} elements, as a fraction of the "
                  "bandwidth of the course's reference solution of this lab, timed in the same "
                  "benchmark process and in the same way (a lab process of its own, every input "
                  "made anew before every call). This lab is bound by atomics, barriers, latency "
                  "or integer work, not by the memory's speed, so its fraction of the ceiling "
                  "probe would change from GPU to GPU with the same code; against the reference "
                  "it means the same on every GPU. Where the reference cannot be timed (a copy "
                  "of the course without `solutions/`) the grade is against the ceiling probe, "
                  f"full at {entry['probe_threshold']:g} of it, none at "
                  f"{entry['probe_floor']:.3g}, and the report says so. On the two GPUs of the "
                  "committed runs that fallback means:", ""]
        threshold, floor = entry["probe_threshold"], entry["probe_floor"]
    else:
        lines.append(f"| performance | {points.get('performance', 0):g} | full at {threshold:g} of "
                     f"the ceiling {ceiling_kind} or above, none at {floor:.3g} or below, linear "
                     "in between; only when every public and hidden test passes |")
        lines += ["", f"Performance is {judged} at {size} elements, as a fraction of the ceiling "
                  f"{ceiling_kind} (a streaming read) measured in the same benchmark process. "
                  "On the two GPUs of the committed runs that means:", ""]
    if entry["races_gate"]:
        lines = [line.replace("only when every public and hidden test passes |",
                              "only when every public and hidden test passes and racecheck ends clean, "
                              "with no hazard (in this lab a race is the lesson's subject) |")
                 if line.startswith("| performance") else line for line in lines]
    lines += ["| GPU | ceiling probe (GB/s) | full credit from (GB/s) | no credit at or below "
              "(GB/s) | reference solution (fraction) | reference / threshold |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    calibrated = {short: calibration_median(course, lab, short) for short, _name in LADDER_GPUS}
    if any(calibrated.values()):
        lines[-2] += " grader's calibration (fraction) | calibration / threshold |"
        lines[-1] += " ---: | ---: |"
    sources = []
    for short, name in LADDER_GPUS:
        stem = name[:-5]
        try:
            probe = course.file(stem)[1]
        except GenerationError:
            continue
        sources.append(f"docs/results/{name}")
        reference = reference_fraction(course, lab, short, ops)
        ref_text = f"{reference:.3g} | {reference / threshold:.2f}" if reference else "- | -"
        if any(calibrated.values()):
            median = calibrated[short]
            ref_text += f" | {median:.3g} | {median / threshold:.2f}" if median else " | - | -"
        lines.append(f"| {short} | {probe:.0f} | {gbps_text(threshold * probe)} | "
                     f"{gbps_text(floor * probe)} | {ref_text} |")
    calibration_text = ""
    if any(calibrated.values()):
        calibration_text = (
            "The grader's calibration (`reduce-grade calibrate --runs 3`, its median, "
            f"{' and '.join(calibration_files(course, lab))}) times the reference as grading "
            "does: inputs made anew from a hidden seed before every call and the lab in its own "
            "process; the lesson's runs time the operation alone, so the two fractions differ, "
            "and the threshold is set from the calibration. ")
    lines += ["", f"GB/s: the threshold and floor times the ceiling probe of {' and '.join(sources)}; "
              "the reference's fraction comes from the run that measured it (the lesson's table). "
              + calibration_text
              + ("Correctness gates performance. This lab may use CUB's block- and warp-level "
                 "primitives; a device-wide library reduction (`cub::DeviceReduce`, Thrust's "
                 "algorithms, cuBLAS...) anywhere in it costs the whole lab its points "
                 "(docs/grader.md)." if entry.get("library") == "primitives" else
                 "Correctness gates performance, and a library reduction (CUB, Thrust, cuBLAS...) "
                 "anywhere in the lab costs the whole lab its points (docs/grader.md).")]
    return reflow("\n".join(lines)) + "\n"


def judged_ops(course, ops):
    """What a lab's performance is read from, in words: 'sum', 'the slower of sum and
    sum_deterministic', 'the slowest of ... over the benchmark's segment lengths'."""
    names = " and ".join(f"`{op}`" for op in ops)
    if any(bench_pattern(course, op).endswith("*") for op in ops):
        return f"the slowest of {names} over the benchmark's segment lengths"
    return f"the slower of {names}" if len(ops) > 1 else names


def performance_bar(course, lab):
    """One sentence of a lesson's task: what earns the lab's performance points, from
    autograder/rubric.toml (its threshold and floor, and `measure`: "probe", the default, or
    "reference") and the committed runs (the threshold in GB/s on each GPU, and the reference
    solution's fraction, where the probe is the measure)."""
    folder = course.impl(lab)
    entry = course.lab_rubric(folder)
    measure = course.rubric().get("labs", {}).get(folder, {}).get("measure", "probe")
    judged = judged_ops(course, lab_ops(course, folder))
    threshold, floor = entry["threshold"], entry["floor"]
    text = (f"Performance counts only once every test passes. It is read from {judged} at 2^28 "
            f"floats: full credit at {threshold:g} ")
    if measure == "reference":
        return text + (f"of the reference solution's bandwidth, timed in the same run, or above, "
                       f"none at {floor:.3g} or below (\"What is graded\").")
    if measure == "cub":
        small = course.rubric()["labs"][folder].get("launch_bound_size", "")
        return text + (f"of `cub::DeviceReduce::Sum`'s bandwidth, timed in the same run as a lab "
                       f"is, or above, none at {floor:.3g} or below, in both modes"
                       + (f" and at {small} floats too" if small else "")
                       + " (\"What is graded\").")
    bars, reached = [], []
    for short, name in LADDER_GPUS:
        try:
            probe = course.file(name[:-5])[1]
        except GenerationError:
            continue
        bars.append(f"{gbps_text(threshold * probe)} GB/s on the {short}")
        fraction = reference_fraction(course, folder, short, lab_ops(course, folder))
        if fraction:
            reached.append(f"{fraction:.3g} on the {short}")
    text += (f"of the ceiling probe or above ({', '.join(bars)} of the committed runs), none at "
             f"{floor:.3g} or below")
    if reached:
        text += f"; the reference solution reaches {' and '.join(reached)}"
    return text + " (\"What is graded\")."


def lab_ops(course, lab):
    """The benchmarked operations of a lab, from course.json ("apply" entries have no benchmark)."""
    catalogue = json.loads((course.root / "course.json").read_text())
    bench = {op["name"]: op.get("bench") for op in catalogue.get("operations", [])}
    for entry in catalogue.get("labs", []):
        if entry.get("folder") == lab:
            return [op for op in entry.get("ops", []) if bench.get(op)]
    raise GenerationError(f"course.json has no lab {lab}")


def bench_pattern(course, op):
    """The course.json bench of an operation: its row name, or "<prefix>*" for a family."""
    catalogue = json.loads((course.root / "course.json").read_text())
    return next((o.get("bench") or "" for o in catalogue["operations"] if o["name"] == op), "")


def family_rows(course, impl, gpu, prefix):
    """The rows at 2^28 of every operation "<prefix><digits>" of impl on one GPU: the families the
    grader times (its '*' stands for digits), not lab 17's ragged rows. Each as
    slowest_reference_row() gives it."""
    found = []
    for path in sorted(course.results.glob(FAMILY_RUNS)):
        name, ceiling, rows, _context = course.file(path.stem)
        if short_gpu(name or "") != gpu:
            continue
        found += [{"op": op, "gbps": row[1], "fraction": row[1] / ceiling,
                   "file": str(path.relative_to(course.root))}
                  for (op, row_impl, n), row in sorted(rows.items())
                  if op.startswith(prefix) and op[len(prefix):].isdigit()
                  and row_impl == impl and n == 1 << 28]
    return found


def results_file(course, name):
    """The path from the repository's root of a results file named as a row names it (a file of
    docs/results/ or of one of its folders, with or without its folder)."""
    for folder in (course.results, *(course.results / sub for sub in SIDE_FOLDERS)):
        for candidate in (folder / name, folder / pathlib.Path(name).name):
            if candidate.exists():
                return str(candidate.relative_to(course.root))
    return f"docs/results/{name}"


def slowest_reference_row(course, lab, gpu, ops):
    """The row that sets the reference solution's performance on one GPU: of its benchmarked
    operations at 2^28, the one with the smallest fraction of its run's probe (of a family of
    rows, its slowest row): {'op', 'gbps', 'fraction', 'file'}, or None where a row is missing."""
    found = []
    for op in ops:
        impl, bench_op = lab, op
        if op == "sum_deterministic":
            impl, bench_op = f"{lab}_sum_deterministic", "sum"
        pattern = bench_pattern(course, op)
        if pattern.endswith("*"):
            family = family_rows(course, impl, gpu, pattern[:-1])
            if not family:
                return None
            found += family
            continue
        try:
            row = course.row(impl, gpu, 28, bench_op)
        except GenerationError:
            row = side_run_row(course, impl, gpu, bench_op)
            if row is None:
                return None
        found.append({"op": op, "gbps": row["gbps"], "fraction": row["gbps"] / row["ceiling"],
                      "file": results_file(course, row["file"])})
    return min(found, key=lambda r: r["fraction"]) if found else None


def reference_fraction(course, lab, gpu, ops):
    """The reference solution's fraction of the probe at 2^28 on one GPU: its slowest operation
    (of a family of rows, its slowest row)."""
    row = slowest_reference_row(course, lab, gpu, ops)
    return row["fraction"] if row else None


def calibration_files(course, lab):
    """The committed calibrations of one lab, as paths from the repository's root."""
    return [str(path.relative_to(course.root))
            for path in sorted(course.results.glob(f"**/calibrate_lab{lab[:2]}_*.txt"))]


def calibration_median(course, lab, gpu):
    """The median fraction of `reduce-grade calibrate` for one lab on one GPU, from
    docs/results/<folder>/calibrate_lab<NN>_<gpu>.txt, or None where there is no such file."""
    for path in sorted(course.results.glob(f"**/calibrate_lab{lab[:2]}_{gpu.lower()}.txt")):
        for line in path.read_text().splitlines():
            fields = line.split()
            if fields and fields[0] == lab and len(fields) >= 3:
                return float(fields[2])
    return None


def side_run_row(course, impl, gpu, op):
    """A row at 2^28 from the default runs of labs 16 and 18 (docs/results/library/ and
    accuracy/, kept out of the main runs; their variants' files are not read here), or None."""
    for pattern in DEFAULT_SIDE_RUNS:
        for path in sorted(course.results.glob(pattern)):
            try:
                return course.row(impl, gpu, 28, op, run=path.stem)
            except GenerationError:
                continue
    return None


HARRIS_RUNGS = ["02", "03", "04", "05", "06", "07", "08"]


def harris_table(course, lab):
    """Harris's seven G80 kernels beside the same seven rungs of this ladder on each GPU."""
    source = course.data("literature.json")["sources"]["harris2007"]
    figures = source["figures"]
    gpus = [short for short, name in LADDER_GPUS if (course.results / name).exists()]
    head = "| rung | Harris's kernel | G80 ms | G80 GB/s | step | total |"
    sep = "| --- | --- | ---: | ---: | ---: | ---: |"
    for gpu in gpus:
        head += f" {gpu} us | {gpu} GB/s | step | total |"
        sep += " ---: | ---: | ---: | ---: |"
    lines = [head, sep]
    for k, rung in enumerate(HARRIS_RUNGS):
        kernel = k + 1
        step = figures[f"k{kernel}_step"]
        total = figures[f"k{kernel}_total"]
        line = (f"| {rung} | {kernel}: {figures[f'k{kernel}_name']} | {figures[f'k{kernel}_ms']} | "
                f"{figures[f'k{kernel}_gbps']} | {'-' if step is None else f'{step}x'} | "
                f"{total}x |")
        for gpu in gpus:
            here = course.row(rung, gpu, 28)
            first = course.row(HARRIS_RUNGS[0], gpu, 28)
            prev = course.row(HARRIS_RUNGS[k - 1], gpu, 28) if k else None
            line += (f" {here['us']:.1f} | {here['gbps']:.0f} | "
                     f"{'-' if prev is None else format(prev['us'] / here['us'], '.2f') + 'x'} | "
                     f"{first['us'] / here['us']:.2f}x |")
        lines.append(line)
    lines += ["", f"G80: {source['cite']}; {source['setup']}. H100 and H200: this course's "
              "rungs at 2^28 floats, one run per GPU (docs/results/ladder_h100.json, "
              "ladder_h200.json). step: the time of the rung before divided by this rung's; "
              "total: the first rung's time divided by this rung's."]
    return reflow("\n".join(lines)) + "\n"


def strategies_table(course, lab):
    """Lab 15's table of each strategy forced on the H200 in an earlier run (a text file)."""
    path = course.results / "capstone" / "strategies_h200_run1.txt"
    if not path.exists():
        raise GenerationError("no docs/results/capstone/strategies_h200_run1.txt")
    rows = []
    for line in path.read_text().splitlines()[2:]:
        cells = re.findall(r"(2\^\d+|-|[\d.]+ \([\d.]+\)|[\d.]+)", line)
        if cells and cells[0].startswith("2^"):
            rows.append(cells)
    header = path.read_text().splitlines()[1].split()
    want = ["CUB", "single_block", "two_pass", "last_block", "atomic", "auto"]
    index = [header.index(w) for w in want]
    lines = ["| n | CUB | single_block | two_pass | last_block | atomic | default |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for cells in rows:
        values = [cells[i] for i in index]
        times = {w: float(v.split()[0]) for w, v in zip(want, values) if v != "-"}
        best = min(t for w, t in times.items() if w not in ("CUB", "auto"))
        out = []
        for w, v in zip(want, values):
            if v != "-" and w not in ("CUB", "auto") and float(v.split()[0]) == best:
                t, r = v.split()
                v = f"**{t}** {r}"
            out.append(v)
        lines.append(f"| {cells[0]} | " + " | ".join(out) + " |")
    lines += ["", "Median us, and in parentheses the ratio to CUB in that column's own process "
              "(docs/results/capstone/strategies_h200_run1.txt); bold: the fastest strategy."]
    return reflow("\n".join(lines)) + "\n"


def strategies_now_table(course, lab):
    """Lab 15: each strategy forced in its own process per GPU around the switch points
    (capstone_{single_block,atomic,last_block}_{h100,h200}.json), the fastest in bold."""
    kinds = ["single_block", "atomic", "last_block"]
    gpus = ["H100", "H200"]
    runs = {(g, k): course.file(f"capstone_{k}_{g.lower()}")[2] for g in gpus for k in kinds}
    sizes = sorted({n for (g, k), rows in runs.items() for (op, impl, n) in rows
                    if impl == "15_capstone"})
    head = "| n |" + "".join(f" {g} CUB | single_block | atomic | last_block |" for g in gpus)
    lines = [head, "| ---: |" + " ---: |" * (4 * len(gpus))]
    for n in sizes:
        line = f"| {pow2(n)} |"
        for g in gpus:
            cub = runs[(g, "single_block")].get(("sum", "cub", n))
            times = [runs[(g, k)].get(("sum", "15_capstone", n)) for k in kinds]
            best = min(t[0] for t in times if t)
            line += f" {cub[0]:.1f} |" if cub else " - |"
            for t in times:
                text = "-" if not t else f"{t[0]:.1f}"
                line += f" **{text}** |" if t and t[0] == best else f" {text} |"
        lines.append(line)
    lines += ["", "Median us, each strategy forced in its own process per GPU "
              "(docs/results/capstone/capstone_{single_block,atomic,last_block}_{h100,h200}.json; "
              "CUB from the single_block process); bold: the fastest."]
    return reflow("\n".join(lines)) + "\n"


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
              "course-map": course_map_table}


# ---- templates ----------------------------------------------------------------------------------

FIELD = re.compile(r"\{\{(.+?)\}\}", re.S)
FORMAT_SPEC = re.compile(r"[<>=^]?[+\- ]?#?0?\d*[,_]?(\.\d+)?[bcdeEfFgGnosxX%]?")


ITEM = re.compile(r"^(\s*(?:[-*]|\d+\.)\s+)")


def reflow(text, width=100):
    """Rewraps the paragraphs and list items of a rendered template to the width of the lessons;
    tables, code, headings and HTML are left as they are."""
    out = []
    for paragraph in re.split(r"\n\s*\n", text.strip("\n")):
        lines = paragraph.split("\n")
        if re.match(r"^\s*(\||```|#|<|    )", lines[0]) or any(l.lstrip().startswith("|") for l in lines):
            out.append(paragraph)
            continue
        groups = []  # one per list item (or one for a plain paragraph)
        for line in lines:
            if ITEM.match(line) or not groups:
                groups.append([line])
            else:
                groups[-1].append(line)
        wrapped = []
        for group in groups:
            item = ITEM.match(group[0])
            prefix = item.group(1) if item else ""
            words = []
            for word in " ".join([group[0][len(prefix):]] + group[1:]).split():
                if words and re.fullmatch(r"(%|us|ms|ns|GB/s|TB/s|MB|KB)[.,;:)]*", word) and \
                        re.search(r"\d$", words[-1]):
                    words[-1] += " " + word  # never "94.4" at the end of a line and "%" below
                else:
                    words.append(word)
            line, fresh = prefix, True
            for word in words:
                if not fresh and len(line) + 1 + len(word) > width:
                    wrapped.append(line)
                    line = " " * len(prefix) + word
                else:
                    line = line + word if fresh else f"{line} {word}"
                fresh = False
            wrapped.append(line)
        out.append("\n".join(wrapped))
    return "\n\n".join(out)


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
