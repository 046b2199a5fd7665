#!/usr/bin/env python3
"""Writes the measured tables into the lessons from benchmark JSON files.

Every Google Benchmark JSON file in docs/results/ (written by reduce_bench with
--benchmark_out, e.g. by tools/maint/gpu_check.sh) contributes its GPU's rows. Each lesson
labs/NN_*/README.md gets, between the lines <!-- measured:begin --> and <!-- measured:end -->,
a table of its own rows beside the previous rung and cub::DeviceReduce, for every GPU and size
found; lab 15 gets both of its modes at every size from docs/results/capstone/capstone_auto_*.json.
Run it after copying a new run's JSON into docs/results/.

usage: tools/maint/update_results.py [--results docs/results] [--labs labs]
"""
import argparse
import json
import math
import pathlib
import re

BEGIN, END = "<!-- measured:begin -->", "<!-- measured:end -->"


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
        if len(parts) != 3 or not parts[2].isdigit() or "median_gbps" not in bench:
            continue
        if bench.get("wrong_results", 0):
            continue
        rows[(parts[0], parts[1], int(parts[2]))] = (bench["median_us"], bench["median_gbps"])
    return gpu, ceiling, rows


def load_runs(results):
    """{(gpu, op, impl, n): row} and {gpu: ceiling GB/s} from every JSON file."""
    rows, ceilings = {}, {}
    # Ladder runs last: where a sweep and a ladder run measured the same row, the ladder's wins,
    # so a rung and the rung before it come from one run.
    for path in sorted(results.glob("*.json"), key=lambda p: (p.name.startswith("ladder"), p.name)):
        gpu, ceiling, run = read_run(path)
        if not gpu:
            continue
        ceilings[gpu] = ceiling
        for (op, impl, n), (us, gbps) in run.items():
            rows[(gpu, op, impl, n)] = {"us": us, "gbps": gbps, "ceiling": ceiling}
    return rows, ceilings


def table_for(lab, previous, rows, ceilings):
    keys = sorted({(g, o, n) for (g, o, i, n) in rows if i == lab}, key=lambda k: (k[0], k[1], k[2]))
    if not keys:
        return None  # nothing measured: keep what the lesson has
    head = "| GPU | op | n | time (us) | GB/s | % of ceiling | CUB (us) | time / CUB |"
    sep = "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    if previous:
        head += f" rung {previous[:2]} (us) |"
        sep += " ---: |"
    lines = [head, sep]
    for gpu, op, n in keys:
        r = rows[(gpu, op, lab, n)]
        cub = rows.get((gpu, op, "cub", n))
        line = (f"| {gpu} | {op} | 2^{n.bit_length() - 1} | {r['us']:.1f} | {r['gbps']:.0f} | "
                f"{100 * r['gbps'] / r['ceiling']:.1f} | "
                f"{cub['us']:.1f} | {r['us'] / cub['us']:.3f} |" if cub else "- | - |")
        if previous:
            p = rows.get((gpu, op, previous, n))
            line += f" {p['us']:.1f} |" if p else " - |"
        lines.append(line)
    lines.append("")
    lines.append("% of ceiling: against the streaming-read probe measured in the same run "
                 "(docs/results has every run). Times: median of many runs, CUDA events, L2 "
                 "flushed before each.")
    return "\n".join(lines) + "\n"


def capstone_table(folder):
    """Lab 15's table: both modes beside CUB at every size, from the capstone step's runs
    (capstone/capstone_auto_*.json: the defaults, one process per GPU, CUB in the same run)."""
    lines = ["| GPU | n | fast (us) | GB/s | % of ceiling | CUB (us) | fast / CUB | "
             "deterministic (us) | determ. / CUB | determ. / fast |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    files = sorted((folder / "capstone").glob("capstone_auto_*.json"))
    for path in files:
        gpu, ceiling, run = read_run(path)
        for n in sorted({n for (op, impl, n) in run if op == "sum" and impl == "15_capstone"}):
            fast, cub = run[("sum", "15_capstone", n)], run.get(("sum", "cub", n))
            det = run.get(("sum", "15_capstone_sum_deterministic", n))
            if not cub or not det:
                continue
            lines.append(f"| {gpu} | 2^{n.bit_length() - 1} | {fast[0]:.1f} | {fast[1]:.0f} | "
                         f"{100 * fast[1] / ceiling:.1f} | {cub[0]:.1f} | {fast[0] / cub[0]:.3f} | "
                         f"{det[0]:.1f} | {det[0] / cub[0]:.3f} | {det[0] / fast[0]:.3f} |")
    if len(lines) == 2:
        return None
    lines.append("")
    lines.append("One process per GPU (" + ", ".join(f"docs/results/capstone/{p.name}" for p in files)
                 + "): both modes with their default strategies, CUB and the ceiling probe "
                 "measured in the same run. Times: median of many runs, CUDA events, L2 flushed "
                 "before each.")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default="docs/results")
    parser.add_argument("--labs", default="labs")
    args = parser.parse_args()
    rows, ceilings = load_runs(pathlib.Path(args.results))
    lessons = sorted(pathlib.Path(args.labs).glob("[0-9][0-9]_*/README.md"))
    folders = [p.parent.name for p in lessons]
    for path in lessons:
        lab = path.parent.name
        text = path.read_text()
        if BEGIN not in text or END not in text:
            continue
        index = folders.index(lab)
        previous = folders[index - 1] if 0 < index and int(lab[:2]) <= 9 else None
        table = (capstone_table(pathlib.Path(args.results)) if lab == "15_capstone"
                 else table_for(lab, previous, rows, ceilings))
        if table is None:
            continue
        text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), BEGIN + "\n" + table + END, text,
                      flags=re.S)
        path.write_text(text)
        print(f"updated {path}")


if __name__ == "__main__":
    main()
