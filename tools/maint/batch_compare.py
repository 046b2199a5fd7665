#!/usr/bin/env python3
"""Compares batch gradings of the same submissions under different GPU lists.

    tools/maint/batch_compare.py RUN_DIR...

Each RUN_DIR is a `reduce-grade batch --out` folder with a `wall_s` file (the batch's wall time,
written by tools/maint/gpu_check.sh; none where the run was cut off) and a `gpus` file (the --gpus list, empty for the default).
Prints, in Markdown:
  - per run: workers, submissions, wall time, seconds per submission, median build and graded
    seconds of one submission (report.json build_seconds / graded_seconds);
  - whether the gradebooks agree apart from the seeds (every score of every student);
  - per lab, the fraction of the ceiling on each GPU (median over the submissions graded there)
    and the spread between GPUs, from the run with the most GPUs.
Exits 1 when the gradebooks disagree.
"""

import csv
import json
import statistics
import sys
from pathlib import Path


def read_run(folder: Path) -> dict:
    gradebook = list(csv.DictReader(open(folder / "gradebook.csv")))
    reports = {}
    for row in gradebook:
        path = folder / row["student"] / "report.json"
        if path.exists():
            reports[row["student"]] = json.load(open(path))
    gpus = (folder / "gpus").read_text().strip() if (folder / "gpus").exists() else ""
    return {
        "name": folder.name,
        "gpus": gpus,
        # A run cut off before its end has no wall_s.
        "wall_s": float((folder / "wall_s").read_text()) if (folder / "wall_s").exists() else None,
        "gradebook": gradebook,
        "reports": reports,
    }


def scores(run: dict) -> dict:
    """Every column of the gradebook but the seed, per student."""
    return {row["student"]: {k: v for k, v in row.items() if k != "seed"} for row in run["gradebook"]}


def fractions_by_gpu(run: dict) -> dict:
    """{lab: {cuda_device: [fraction, ...]}} over the run's submissions."""
    out = {}
    for report in run["reports"].values():
        device = report.get("cuda_device") or "default"
        for lab in report["labs"]:
            perf = lab.get("performance") or {}
            if perf.get("ran") and perf.get("fraction"):
                out.setdefault(lab["lab"], {}).setdefault(device, []).append(perf["fraction"])
    return out


def fraction_rows(by_lab: dict):
    """Per lab of fractions_by_gpu(): (lab, the GPUs, each GPU's median or None, the spread
    between the GPUs' medians, the widest range on one GPU), both spreads relative."""
    devices = sorted({d for per in by_lab.values() for d in per})
    rows = []
    for lab in sorted(by_lab):
        medians = [statistics.median(by_lab[lab][d]) if d in by_lab[lab] else None for d in devices]
        present = [m for m in medians if m is not None]
        between = (max(present) - min(present)) / min(present) if len(present) > 1 else 0.0
        within = max((max(v) - min(v)) / min(v) for v in by_lab[lab].values())
        rows.append((lab, devices, medians, between, within))
    return rows


def main(folders: list) -> int:
    runs = [read_run(Path(f)) for f in folders]
    print("| --gpus | workers | submissions | wall s | s per submission | build s (median) | graded s (median) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for run in runs:
        n = len(run["gradebook"])
        workers = len(run["gpus"].split(",")) if run["gpus"] else 1
        builds = [r.get("build_seconds", 0) for r in run["reports"].values()]
        graded = [r.get("graded_seconds", 0) for r in run["reports"].values()]
        wall = "cut off" if run["wall_s"] is None else f"{run['wall_s']:.0f}"
        per = "-" if run["wall_s"] is None else f"{run['wall_s'] / max(n, 1):.1f}"
        print(f"| {run['gpus'] or '(default)'} | {workers} | {n} | {wall} | {per} | "
              f"{statistics.median(builds or [0]):.1f} | {statistics.median(graded or [0]):.1f} |")
    base = runs[0]
    if len(runs) > 1:
        print(f"\nbaseline for the speed-ups: --gpus {base['gpus'] or '(default)'}")
        for run in runs[1:]:
            if base["wall_s"] and run["wall_s"]:
                print(f"- --gpus {run['gpus'] or '(default)'}: {base['wall_s'] / run['wall_s']:.2f}x")
    agree = True
    for run in runs[1:]:
        if scores(run) != scores(base):
            agree = False
            for student in sorted(set(scores(run)) | set(scores(base))):
                if scores(run).get(student) != scores(base).get(student):
                    print(f"DIFFERENT: {student}: {scores(base).get(student)} vs {scores(run).get(student)}")
    totals = sorted({row["total"] + "/" + row["max"] for run in runs for row in run["gradebook"]})
    print(f"\ngradebooks apart from seeds: {'identical' if agree else 'DIFFERENT'} "
          f"across {len(runs)} runs (totals seen: {', '.join(totals)})")
    widest = max(runs, key=lambda r: len(set(r["gpus"].split(","))))
    by_lab = fractions_by_gpu(widest)
    devices = sorted({d for per in by_lab.values() for d in per})
    if len(devices) > 1:
        print(f"\nfraction of the ceiling per GPU (median over its submissions), --gpus {widest['gpus']}:\n")
        print("| lab | " + " | ".join(f"GPU {d}" for d in devices) + " | between GPUs | within one GPU |")
        print("| --- | " + " | ".join("---:" for _ in devices) + " | ---: | ---: |")
        worst = 0.0
        for lab, _, medians, between, within in fraction_rows(by_lab):
            worst = max(worst, between)
            cells = " | ".join(f"{m:.4f}" if m is not None else "-" for m in medians)
            print(f"| {lab} | {cells} | {100 * between:.1f} % | {100 * within:.1f} % |")
        print(f"\nlargest spread between GPUs: {100 * worst:.1f} %")
    return 0 if agree else 1


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
