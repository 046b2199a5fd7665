#!/usr/bin/env python3
"""Keeps the grader's measured runs in docs/results/grading.json and writes the paragraphs of
docs/grader.md that quote them (between <!-- grading:begin --> and <!-- grading:end -->,
<!-- planted:begin --> and <!-- planted:end -->, <!-- class:begin --> and <!-- class:end -->,
and <!-- batch:begin --> and <!-- batch:end -->).

  tools/maint/grading_results.py add-grade OUT/gradeN.log OUT/grade-solutionsN/report.json \
      --commit SHA [--parallel-checks 8] [--note TEXT]
  tools/maint/grading_results.py add-planted OUT/planted.log OUT/planted --commit SHA
  tools/maint/grading_results.py add-batch OUT/batch/gpus-0_1 --commit SHA [--note TEXT]
  tools/maint/grading_results.py render

A grade log is reduce-grade's terminal output (timestamped progress lines); a run cut off before
its report was written is recorded from the log alone, with its phases so far.
"""
import argparse
import datetime
import json
import pathlib
import re

from grade_phases_build import build_ends

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
RESULTS = ROOT / "docs" / "results" / "grading.json"
DOC = ROOT / "docs" / "grader.md"
STAMP = re.compile(r"^\[\s*([0-9.]+)s\] (.*)$")


def load():
    return json.loads(RESULTS.read_text()) if RESULTS.exists() else {"grades": [], "planted": []}


def save(data):
    RESULTS.write_text(json.dumps(data, indent=1) + "\n")


def phases(log_text):
    """Seconds of build, tests + sanitizer and benchmark from a grade log (None: not reached).
    The build ends at the later of the labs' and the course's builds (grade_phases_build)."""
    lines = [(float(m.group(1)), m.group(2)) for m in map(STAMP.match, log_text.splitlines()) if m]
    end = lines[-1][0] if lines else None
    bench = next((t for t, text in reversed(lines) if text.startswith("benchmark of")), None)
    ends = [t for t in build_ends(lines) if t is not None]
    built = max(ends) if ends else None
    report_seen = "reports:" in log_text
    return {
        "build_s": built,
        "tests_sanitizer_s": None if bench is None or built is None else round(bench - built, 1),
        "benchmark_s": None if bench is None or not report_seen else round(end - bench, 1),
    }


def samples(path, stamp_of, value_of):
    """(seconds since the first sample, value) of each line of a sampler's output."""
    rows = []
    for line in path.read_text(errors="replace").splitlines():
        try:
            rows.append((stamp_of(line), value_of(line)))
        except (ValueError, IndexError):
            continue  # a header, or a line cut off when the sampler was stopped
    return [(t - rows[0][0], v) for t, v in rows] if rows else []


def utilization(log_path, window):
    """Mean GPU utilization and busy share of the host's cores (percent) over \p window
    (seconds of the grade log), from gpu_check.sh's samplers beside the log: nvidia-smi's
    `timestamp, utilization.gpu %, ...` lines and `vmstat -t` lines. Each is timed from its first
    sample, taken as the grading's start, so that no clock or time zone needs to agree."""
    stem = log_path.with_suffix("")
    gpu_file = stem.with_name(stem.name + ".gpu-util.csv")
    cpu_file = stem.with_name(stem.name + ".vmstat.log")
    if None in window or not gpu_file.exists() or not cpu_file.exists():
        return {}

    def when(text, form):
        return datetime.datetime.strptime(text, form).timestamp()

    gpu = samples(gpu_file, lambda l: when(l.split(",")[0].strip(), "%Y/%m/%d %H:%M:%S.%f"),
                  lambda l: float(l.split(",")[1].split()[0]))
    # vmstat -t: r b swpd free buff cache si so bi bo in cs us sy id wa st [gu] date time; the
    # cores are busy for 100 - id - wa percent.
    cpu = samples(cpu_file, lambda l: when(" ".join(l.split()[-2:]), "%Y-%m-%d %H:%M:%S"),
                  lambda l: 100.0 - float(l.split()[14]) - float(l.split()[15]))

    def mean(rows):
        inside = [v for t, v in rows if window[0] <= t <= window[1]]
        return round(sum(inside) / len(inside), 1) if inside else None

    return {"tests_gpu_util_pct": mean(gpu), "tests_cpu_busy_pct": mean(cpu)}


def add_grade(args):
    log = pathlib.Path(args.log).read_text(errors="replace")
    run = {"commit": args.commit, "parallel_checks": args.parallel_checks, "note": args.note}
    if args.reverted:
        run["reverted"] = True
    run.update(phases(log))
    built, tests = run["build_s"], run["tests_sanitizer_s"]
    run.update(utilization(pathlib.Path(args.log),
                           (built, None if tests is None else built + tests)))
    report_path = pathlib.Path(args.report)
    if report_path.exists():
        report = json.loads(report_path.read_text())
        run.update(gpu=report["gpu"], date=report["started_at"], seconds=report["seconds"],
                   score=report["score"], max_score=report["max_score"],
                   ceiling_gbps=report["ceiling_gbps"], isolation=report["isolation"].split(":")[0])
        if "processes" in report:
            run["contexts"] = report["processes"]["contexts"]
            run["lab_process_starts"] = report["processes"]["lab_process_starts"]
        run["labs"] = {
            lab["lab"]: {"score": lab["score"],
                         "fraction": lab["performance"].get("fraction"),
                         "threshold": lab["performance"].get("threshold")}
            for lab in report["labs"]
        }
    else:
        run.update(gpu=args.gpu, date=args.date, seconds=None, score=None)
    data = load()
    data["grades"].append(run)
    save(data)


def case_lab(case):
    """The lab a planted case checks (its expected.toml's `lab`), or None."""
    expected = ROOT / "autograder" / "planted" / case / "expected.toml"
    if not expected.exists():
        return None
    m = re.search(r'^lab\s*=\s*"([^"]+)"', expected.read_text(), re.M)
    return m.group(1) if m else None


def add_planted(args):
    log = pathlib.Path(args.log).read_text(errors="replace")
    folder = pathlib.Path(args.folder)
    verdicts = {}
    for line in log.splitlines():
        m = STAMP.match(line)
        if m and re.fullmatch(r"[a-z0-9_]+: (ok|FAIL.*)", m.group(2)):
            case, verdict = m.group(2).split(": ", 1)
            verdicts[case] = "ok" if verdict == "ok" else verdict
    cases = []
    for case, verdict in sorted(verdicts.items()):
        report = folder / case / "report.json"
        points = None
        if report.exists():
            labs = json.loads(report.read_text()).get("labs", [])
            checked = case_lab(case)  # a case may grade other labs beside the one it checks
            labs = [lab for lab in labs if checked is None or lab.get("lab") == checked]
            points = sum(lab["score"] for lab in labs) if labs else 0
        cases.append({"case": case, "points": points, "verdict": verdict})
    gpu = re.search(r"GPU (NVIDIA[^\n,]*)", log)
    data = load()
    data["planted"].append({"commit": args.commit, "gpu": gpu.group(1).strip() if gpu else args.gpu,
                            "date": args.date, "cases": cases})
    save(data)


def add_batch(args):
    """One `batch` run of gpu_check.sh's batch step (a run cut off has no wall_s file)."""
    from statistics import median

    from batch_compare import fractions_by_gpu, read_run  # the same folder
    run = read_run(pathlib.Path(args.folder))
    reports = list(run["reports"].values())
    entry = {
        "commit": args.commit, "note": args.note, "gpus": run["gpus"],
        "gpu": reports[0]["gpu"] if reports else "", "date": reports[0]["started_at"][:10] if reports else "",
        "copies": args.copies, "graded": len(run["gradebook"]),
        "wall_s": run["wall_s"],
        "build_s_median": median([r["build_seconds"] for r in reports]),
        "graded_s_median": median([r["graded_seconds"] for r in reports]),
        "totals": [f"{row['total']}/{row['max']}" for row in run["gradebook"]],
        "fractions": fractions_by_gpu(run),
    }
    data = load()
    data.setdefault("batches", []).append(entry)
    save(data)


def batch_block(batches):
    """The batch runs' table, and the fractions per GPU of the run on several GPUs that graded
    the most submissions (the newest of those)."""
    if not batches:
        return "No batch run is recorded yet."
    rows = ["| date | GPU (each of the host's) | commit | --gpus | submissions | wall s | s per submission "
            "| build s (median) | graded s (median) | totals |",
            "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for b in batches:
        wall = "cut off" if b["wall_s"] is None else f"{b['wall_s']:g}"
        per = "-" if b["wall_s"] is None else f"{b['wall_s'] / b['graded']:.1f}"
        rows.append(f"| {b['date']} | {b['gpu']} | {b['commit'][:7]} | {b['gpus'] or '-'} "
                    f"| {b['graded']} of {b['copies']} | {wall} | {per} | {b['build_s_median']:g} "
                    f"| {b['graded_s_median']:g} | {', '.join(sorted(set(b['totals'])))} |")
    notes = [f"- {b['commit'][:7]}, --gpus {b['gpus'] or '-'}: {b['note']}" for b in batches if b.get("note")]
    text = "\n".join(rows + ([""] + notes if notes else []))
    multi = [b for b in batches if len({d for per in b["fractions"].values() for d in per}) > 1]
    if multi:
        from batch_compare import fraction_rows  # the same folder
        b = max(reversed(multi), key=lambda b: b["graded"])  # most submissions, then newest
        rows = fraction_rows(b["fractions"])
        devices = rows[0][1]
        table = [f"Fractions of the ceiling per GPU in the run at {b['commit'][:7]} with --gpus "
                 f"{b['gpus']} (median over the submissions graded on that GPU):", "",
                 "| lab | " + " | ".join(f"GPU {d}" for d in devices) + " | apart |",
                 "| --- | " + " | ".join("---:" for _ in devices) + " | ---: |"]
        for lab, _, medians, between, _ in rows:
            table.append(f"| {lab} | " + " | ".join("-" if m is None else f"{m:.4f}" for m in medians)
                         + f" | {100 * between:.1f} % |")
        text += "\n\n" + "\n".join(table)
    return text


def replace_block(text, name, body):
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}\n{end}{tail}"


def render(_args):
    data = load()
    rows = ["| date | GPU | commit | processes at once | score | CUDA contexts | build s "
            "| tests + sanitizer s | benchmark s | total s |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for g in data["grades"]:
        def cell(v):
            return "-" if v is None else f"{v:g}"
        score = "cut off" if g.get("score") is None else f"{g['score']:g}/{g['max_score']:g}"
        rows.append(f"| {g['date'][:10]} | {g['gpu']} | {g['commit'][:7]} | {g['parallel_checks']} "
                    f"| {score} | {cell(g.get('contexts'))} | {cell(g['build_s'])} "
                    f"| {cell(g['tests_sanitizer_s'])} "
                    f"| {cell(g['benchmark_s'])} | {cell(g.get('seconds'))} |")
    def busy(g):
        if g.get("tests_gpu_util_pct") is None:
            return ""
        return (f" (during tests and sanitizer the GPU was busy {g['tests_gpu_util_pct']} % of "
                f"the time, the host's cores {g['tests_cpu_busy_pct']} %)")

    notes = [f"- {g['commit'][:7]}, {g['parallel_checks']} at once: {g['note']}{busy(g)}"
             for g in data["grades"] if g.get("note")]
    grading = "\n".join(rows + ([""] + notes if notes else []))
    planted_rows = []
    for p in data["planted"]:
        ok = sum(1 for c in p["cases"] if c["verdict"] == "ok")
        planted_rows.append(f"- {p['date']}, {p['gpu']}, commit {p['commit'][:7]}: {ok} of "
                            f"{len(p['cases'])} cases met their expectation "
                            f"({', '.join(c['case'] for c in p['cases'])}).")
    text = DOC.read_text()
    text = replace_block(text, "grading", grading)
    text = replace_block(text, "planted", "\n".join(planted_rows))
    if "<!-- class:begin -->" in text:
        text = replace_block(text, "class", class_estimate(data["grades"], data.get("batches", [])))
    if "<!-- batch:begin -->" in text:
        text = replace_block(text, "batch", batch_block(data.get("batches", [])))
    DOC.write_text(text)


def class_estimate(grades, batches, students=300):
    """Hours for a class, from the newest commit with a batch run of whole-course copies on one
    GPU, one at a time (`--gpus 0`: builds overlapped, every cost of a class counted), else from
    the newest gradings of the whole course that reused a built course. Beside it, the same
    commit's run of two at once on that GPU (`--gpus 0,0`), which shows what a second worker on
    one host gives, and its gradings' GPU phases (tests, sanitizer, benchmark), the part that
    the build cannot overlap. Gradings of a change later reverted do not count."""
    whole = [g for g in grades if g.get("seconds") and len(g.get("labs", {})) >= 15
             and g.get("score") and not g.get("reverted")]
    single = [b for b in batches if b["wall_s"] is not None and b["gpus"]
              and len(b["gpus"].split(",")) == 1 and len(b["totals"]) > 0]
    if single:
        b = single[-1]
        newest, gpu = b["commit"], b["gpu"]
        # In a long batch each build overlaps the previous copy's GPU work, so the rate is the
        # graded time (or the build, if longer); a short run's wall adds one build nothing hid.
        per = round(max(b["graded_s_median"], b["build_s_median"]), 1)
        source = (f"{b['graded']} whole-course copies graded one at a time on one GPU (batch at "
                  f"{newest[:7]} on the {gpu}) took {b['graded_s_median']:g} s each once built "
                  f"(median), and {b['build_s_median']:g} s to build, which overlaps the previous "
                  f"copy's grading: a class runs at {per:g} s per submission (the run's wall, "
                  f"{b['wall_s']:g} s, adds the first build, which nothing overlaps)")
    else:
        built = [g for g in whole if g.get("build_s") is not None and g["build_s"] < 30]
        if not built:
            return "No grading of the whole course with a built course is recorded yet."
        newest, gpu = built[-1]["commit"], built[-1]["gpu"]
        runs = sorted(g["seconds"] for g in built if g["commit"] == newest and g["gpu"] == gpu)
        per = round((runs[(len(runs) - 1) // 2] + runs[len(runs) // 2]) / 2, 1)
        source = (f"One whole-course submission took {per:g} s (median of {len(runs)} gradings "
                  f"at {newest[:7]} on the {gpu}, course already built)")
    rows = ["| GPUs | hours for %d students |" % students, "| ---: | ---: |"]
    for gpus in (1, 2, 4, 8):
        rows.append(f"| {gpus} | {students * per / gpus / 3600:.2f} |")
    notes = []
    twice = [b for b in batches if b["commit"] == newest and b["wall_s"] is not None
             and b["gpus"] and len(b["gpus"].split(",")) == 2 and len(set(b["gpus"].split(","))) == 1]
    if twice:
        t = twice[-1]
        t_per = max(t["graded_s_median"], t["build_s_median"]) / 2
        notes.append(f"Two at once on that one GPU (--gpus {t['gpus']}, same commit) took "
                     f"{t['graded_s_median']:g} s each once built: one submission per "
                     f"{t_per:.1f} s, {per / t_per:.2f} times the rate of one at a time. The "
                     "table assumes each GPU has a host's share of CPUs of its own, as on the "
                     "host measured.")
    phases = [g for g in whole if g["commit"] == newest and g["gpu"] == gpu
              and g.get("tests_sanitizer_s") is not None and g.get("benchmark_s") is not None]
    if phases:
        g = phases[-1]
        gpu_s = g["tests_sanitizer_s"] + g["benchmark_s"]
        notes.append(f"The part a build cannot overlap, tests with the sanitizer and the "
                     f"benchmark, took {gpu_s:.1f} s in the grading at {newest[:7]}: "
                     f"{students * gpu_s / 8 / 60:.0f} minutes for {students} students on 8 GPUs.")
        notes.append(f"What serialises across GPUs: with the rubric's `timing_lock = \"gpu\"` (the "
                     f"default) nothing, each GPU's benchmark holding only that GPU's lock and "
                     f"each GPU's workers their own CPUs; with `\"host\"`, every benchmark of "
                     f"the class runs one after another, {students} x {g['benchmark_s']:.1f} s "
                     f"= {students * g['benchmark_s'] / 60:.0f} minutes however many GPUs, and "
                     f"the other GPUs' tests wait while one runs.")
    return (f"{source}. At that rate, one submission per GPU at a time:\n\n" + "\n".join(rows) +
            "\n\n" + "".join(n + "\n\n" for n in notes) +
            "A Slurm cluster with N GPUs divides the one-GPU time by N, plus the queue's waits.")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("add-grade")
    g.add_argument("log")
    g.add_argument("report")
    g.add_argument("--commit", required=True)
    g.add_argument("--parallel-checks", type=int, default=8)
    g.add_argument("--note", default="")
    g.add_argument("--gpu", default="")
    g.add_argument("--date", default="")
    g.add_argument("--reverted", action="store_true",
                   help="the commit's change was undone: kept in the table, left out of estimates")
    g.set_defaults(run=add_grade)
    p = sub.add_parser("add-planted")
    p.add_argument("log")
    p.add_argument("folder")
    p.add_argument("--commit", required=True)
    p.add_argument("--gpu", default="")
    p.add_argument("--date", required=True)
    p.set_defaults(run=add_planted)
    b = sub.add_parser("add-batch")
    b.add_argument("folder")
    b.add_argument("--commit", required=True)
    b.add_argument("--copies", type=int, required=True)
    b.add_argument("--note", default="")
    b.set_defaults(run=add_batch)
    r = sub.add_parser("render")
    r.set_defaults(run=render)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
