#!/usr/bin/env python3
"""Draws the course's bandwidth charts from benchmark JSON files.

  python3 tools/maint/make_charts.py                      # every chart in docs/images/ from docs/results/
  python3 tools/maint/make_charts.py --report grade-out/report.json [-o grade-out/ladder.png]
  python3 tools/maint/make_charts.py --table              # the GB/s columns of docs/course_map.md

Run it from the repository root after copying a new run's JSON into docs/results/ (the same step
as tools/maint/update_results.py), and commit the PNG files it writes:

  docs/images/ladder.png  GB/s of every rung at 2^28 floats (and of the capstone, where measured),
                          one bar per GPU, with that GPU's ceiling probe and cub::DeviceReduce::Sum
                          as horizontal lines (log scale: rung 01 is about 2 GB/s).
  docs/images/sizes.png   GB/s and time against n = 2^10 .. 2^30 for rung 09, the capstone (where
                          measured), CUB and the streaming-read probe, one column per GPU.
  docs/images/rungs_fraction.png   the fraction of the ceiling each rung reaches at 2^28 floats on
                          every GPU (its ladder run's probe), beside Harris's G80 kernels against
                          the G80's theoretical peak (docs/results/literature.json), rung for rung.

Inputs (Google Benchmark JSON written by reduce_bench with --benchmark_out):
  docs/results/ladder_*.json   every rung at 2^26 and 2^28 (benchmark names "<op>/<impl>/<n>/...")
  docs/results/capstone/capstone_auto_*.json   the capstone (both modes, default strategy), rung
                               09, cub and stream_read from 2^10 to 2^30, all from one run (the
                               capstone step of tools/maint/gpu_check.sh); several files of one GPU: the
                               median of each row. The other capstone_<strategy>_*.json files force
                               one strategy and are not drawn.
  docs/results/sweep_*.json    (optional) a ladder run over the sizes, for rows the above lacks
Each benchmark carries the counters median_us and median_gbps; each file's context names the GPU
("gpu") and the ceiling probe of that run ("ceiling_gbps"). Files of any GPU are drawn; a GPU is
identified by its name, so a new GPU's files add bars and a column without code changes.

--report draws one graded submission: each lab's bandwidth as a percentage of the ceiling measured
in the grading run, beside the reference solution's percentage from docs/results (on the same GPU
when there is a measurement of it, else on the first GPU found) and the rubric's threshold. It
reads the grader's report.json:
  {"gpu": "...", "ceiling_gbps": 4408.1,
   "labs": [{"lab": "04_sequential", "score": 9, "max_score": 10,
             "performance": {"gbps": 930.1, "ceiling_gbps": 4408.1, "n": 268435456,
                             "fraction": 0.211, "threshold": 0.158}}, ...]}
and is tolerant: "labs" may also be an object keyed by lab folder; "gbps", "ceiling_gbps", "n" and
"threshold" may sit in the lab itself instead of "performance"; a missing per-lab ceiling falls
back to the top-level one; labs without a bandwidth are left out.

Needs matplotlib: `sudo apt-get install python3-matplotlib` (Debian/Ubuntu; it belongs to the
system interpreter /usr/bin/python3) or `python3 -m pip install matplotlib`. When the python3 on
PATH lacks matplotlib and /usr/bin/python3 has it, the script re-runs itself with the latter.
"""
import argparse
import json
import math
import os
import pathlib
import re
import statistics
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from update_results import read_run, short_gpu  # noqa: E402  (one reader of benchmark JSON)

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
LADDER_SIZE = 1 << 28
CAPSTONE = "15_capstone"


def import_pyplot():
    """matplotlib.pyplot with the file-only backend; re-runs with /usr/bin/python3 if needed."""
    try:
        import matplotlib
    except ImportError:
        system = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(system) and os.path.exists(system):
            probe = subprocess.run([system, "-c", "import matplotlib"], capture_output=True)
            if probe.returncode == 0:
                os.execv(system, [system, os.path.abspath(__file__)] + sys.argv[1:])
        sys.exit("make_charts.py needs matplotlib: sudo apt-get install python3-matplotlib, "
                 "or python3 -m pip install matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.size": 10, "axes.titlesize": 11, "savefig.dpi": 110,
                         "axes.spines.top": False, "axes.spines.right": False})
    return plt


# ---- reading benchmark results -------------------------------------------------------------------


class Results:
    """Every GPU's measurements in a results folder."""

    def __init__(self, folder):
        folder = pathlib.Path(folder)
        self.ladder, self.sweep, self.capstone, self.ceiling = {}, {}, {}, {}
        self.capstone_ceiling = {}  # the probe of the capstone runs, which the size chart draws
        # Ladder files last, so that their rows and probe win where runs overlap.
        for path in sorted(folder.glob("*.json"), key=lambda p: (p.name.startswith("ladder"), p.name)):
            gpu, ceiling, rows = read_run(path)
            if not gpu:
                continue
            kind = self.sweep if path.name.startswith("sweep") else self.ladder
            kind.setdefault(gpu, {}).update(rows)
            # The ladder run's probe, which its lines are drawn with (other runs only fill in).
            if path.name.startswith("ladder") or gpu not in self.ceiling:
                self.ceiling[gpu] = ceiling
        runs, ceilings = {}, {}
        for path in sorted((folder / "capstone").glob("capstone_auto_*.json")):
            gpu, ceiling, rows = read_run(path)
            if gpu:
                ceilings.setdefault(gpu, []).append(ceiling)
                for key, row in rows.items():
                    runs.setdefault(gpu, {}).setdefault(key, []).append(row)
        self.capstone_ceiling = {gpu: statistics.median(c) for gpu, c in ceilings.items()}
        for gpu, rows in runs.items():  # several runs of the default strategy: their median
            self.capstone[gpu] = {key: (statistics.median(u for u, _ in v),
                                        statistics.median(g for _, g in v))
                                  for key, v in rows.items()}
        self.gpus = sorted(set(self.ladder) | set(self.sweep) | set(self.capstone))

    def value(self, gpu, impl, n, op="sum", kinds=("ladder", "sweep", "capstone")):
        """(median_us, median_gbps) of one row, from the first kind of run that has it."""
        for kind in kinds:
            row = getattr(self, kind).get(gpu, {}).get((op, impl, n))
            if row:
                return row
        return None

    def rungs(self):
        """Lab folders measured in a ladder run, in course order."""
        impls = {impl for rows in self.ladder.values() for (_, impl, _) in rows}
        return sorted(i for i in impls if re.match(r"^\d\d_", i))


def rung_label(impl):
    number, _, name = impl.partition("_")
    words = name.split("_")
    if len(words) > 1 and len(name) > 12:  # two lines: "interleaved\ndivergent"
        cut = max(1, len(words) // 2)
        return f"{number}\n{' '.join(words[:cut])}\n{' '.join(words[cut:])}"
    return f"{number}\n{' '.join(words)}"


def power_of_two(n):
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


def gbps_text(value):
    if value < 10:
        return f"{math.floor(value * 10 + 0.5) / 10:.1f}"
    return str(math.floor(value + 0.5))  # half up, as the tables in the lessons


COLORS = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]


# ---- (a) the ladder ------------------------------------------------------------------------------

def ladder_chart(plt, results, out):
    rungs = [r for r in results.rungs() if int(r[:2]) <= 9]
    has_capstone = any(results.value(g, CAPSTONE, LADDER_SIZE) for g in results.gpus)
    columns = rungs + ([CAPSTONE] if has_capstone else [])
    gpus = [g for g in results.gpus if g in results.ladder]
    if not columns or not gpus:
        print("ladder chart: no ladder_*.json in the results folder, skipped")
        return None
    fig, ax = plt.subplots(figsize=(11.5, 6.2))
    width = 0.8 / len(gpus)
    handles = []
    for k, gpu in enumerate(gpus):
        color = COLORS[k % len(COLORS)]
        xs, ys = [], []
        for i, impl in enumerate(columns):
            row = results.value(gpu, impl, LADDER_SIZE)
            if row:
                xs.append(i + (k - (len(gpus) - 1) / 2) * width)
                ys.append(row[1])
        handles.append(ax.bar(xs, ys, width * 0.92, color=color,
                              label=f"{short_gpu(gpu)}: rung at 2^28"))
        for x, y in zip(xs, ys):
            if y > 20:  # inside the top of the bar, clear of the horizontal lines
                ax.text(x, y * 0.9, gbps_text(y), ha="center", va="top", fontsize=8,
                        rotation=90, color="white", fontweight="bold")
            else:
                ax.text(x, y * 1.08, gbps_text(y), ha="center", va="bottom", fontsize=8)
        ceiling = results.ceiling.get(gpu)
        cub = results.value(gpu, "cub", LADDER_SIZE, kinds=("ladder",))
        if ceiling and not math.isnan(ceiling):
            handles.append(ax.axhline(ceiling, color=color, linestyle="--", linewidth=1.2,
                                      label=f"{short_gpu(gpu)}: ceiling probe {ceiling:.0f} GB/s"))
        if cub:
            handles.append(ax.axhline(cub[1], color=color, linestyle=":", linewidth=1.6,
                                      label=f"{short_gpu(gpu)}: CUB {cub[1]:.0f} GB/s"))
    ax.set_yscale("log")
    ax.set_ylim(1, 40000)
    ax.set_xticks(range(len(columns)))
    ax.set_xticklabels([rung_label(c) for c in columns], fontsize=9)
    ax.set_ylabel("input bandwidth, GB/s (log scale)")
    ax.set_title(f"The ladder: float sum of {power_of_two(LADDER_SIZE)} elements "
                 "(median, L2 flushed, CUDA events)")
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.legend(handles=handles, loc="upper left", fontsize=8.5, ncol=len(gpus), frameon=False)
    if has_capstone:
        own_run = [short_gpu(g) for g in gpus
                   if results.value(g, CAPSTONE, LADDER_SIZE, kinds=("ladder",))]
        other = [short_gpu(g) for g in gpus if short_gpu(g) not in own_run
                 and results.value(g, CAPSTONE, LADDER_SIZE)]
        note = "Rungs, CUB and the ceiling probe: one run per GPU"
        if own_run:
            note += f"; 15 capstone in the same run ({', '.join(own_run)})"
        if other:
            note += f"; 15 capstone from a separate run ({', '.join(other)})"
        fig.text(0.01, 0.01, note + ".", fontsize=8)
    fig.tight_layout(rect=(0, 0.03 if has_capstone else 0, 1, 1))
    fig.savefig(out)
    plt.close(fig)
    return out


# ---- (b) bandwidth against size ------------------------------------------------------------------

def sizes_chart(plt, results, out):
    gpus = [g for g in results.gpus if g in results.sweep or g in results.capstone]
    if not gpus:
        print("size chart: no sweep_*.json or capstone results, skipped")
        return None
    # Every line from the capstone run where it has it (one run, one timing method), else from a
    # sweep or ladder run.
    kinds = ("capstone", "sweep", "ladder")
    series = [  # (impl, label, style)
        ("stream_read", "ceiling probe (streaming read)", dict(color="0.45", linestyle="--")),
        ("cub", "cub::DeviceReduce::Sum", dict(color="black")),
        ("09_warp_shuffle", "09 warp shuffle", dict(color="#1f77b4")),
        (CAPSTONE, "15 capstone", dict(color="#d62728")),
        (CAPSTONE + "_sum_deterministic", "15 capstone, deterministic mode",
         dict(color="#d62728", linestyle=":")),
    ]
    fig, axes = plt.subplots(2, len(gpus), figsize=(5.6 * len(gpus) + 0.6, 8.2), squeeze=False,
                             sharex=True)
    for col, gpu in enumerate(gpus):
        top, bottom = axes[0][col], axes[1][col]
        for impl, label, style in series:
            points = sorted({n for kind in kinds for (op, i, n) in getattr(results, kind).get(gpu, {})
                             if op == "sum" and i == impl})
            rows = [(n, results.value(gpu, impl, n, kinds=kinds)) for n in points]
            rows = [(n, r) for n, r in rows if r]
            if not rows:
                continue
            ns = [n for n, _ in rows]
            top.plot(ns, [gbps for _, (_, gbps) in rows], marker="o", markersize=3.5, label=label,
                     **style)
            bottom.plot(ns, [us for _, (us, _) in rows], marker="o", markersize=3.5, label=label,
                        **style)
        ceiling = results.capstone_ceiling.get(gpu, results.ceiling.get(gpu))
        title = short_gpu(gpu)
        if ceiling and not math.isnan(ceiling):
            title += f" (ceiling probe {ceiling:.0f} GB/s)"
        top.set_title(title)
        sizes = [n for line in top.get_lines() for n in line.get_xdata()]
        ticks = [2 ** e for e in range(0, 64, 2)
                 if sizes and min(sizes) <= 2 ** e <= max(sizes)]
        for ax in (top, bottom):
            ax.set_xscale("log", base=2)
            ax.set_xticks(ticks)
            ax.set_xticklabels([f"$2^{{{t.bit_length() - 1}}}$" for t in ticks], fontsize=9)
            ax.minorticks_off()
            ax.grid(which="major", alpha=0.3)
        bottom.set_yscale("log")
        top.set_ylim(bottom=0)
        top.set_ylabel("input bandwidth, GB/s")
        bottom.set_ylabel("median time per sum, us (log scale)")
        bottom.set_xlabel("n, floats")
        top.legend(loc="upper left", fontsize=8.5, frameon=False)
    fig.suptitle("Float sum against input size: rung 09, the capstone in both modes, CUB and the "
                 "ceiling probe (one run per GPU)")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out


# ---- (c) the fraction of the ceiling, rung by rung, beside Harris's G80 --------------------------

HARRIS_RUNGS = ["02", "03", "04", "05", "06", "07", "08"]  # his kernels 1..7


def fraction_chart(plt, results, out, folder):
    rungs = [r for r in results.rungs() if int(r[:2]) <= 9]
    gpus = [g for g in results.gpus if g in results.ladder]
    if not rungs or not gpus:
        print("fraction chart: no ladder_*.json in the results folder, skipped")
        return None
    series = []  # (label, {rung: fraction}, color)
    literature = pathlib.Path(folder) / "literature.json"
    if literature.exists():
        harris = json.loads(literature.read_text())["sources"]["harris2007"]["figures"]
        series.append(("G80 (Harris 2007): of its theoretical peak",
                       {r: harris[f"k{k + 1}_gbps"] / harris["peak_gbps"]
                        for k, r in enumerate(HARRIS_RUNGS)}, "0.55"))
    for k, gpu in enumerate(gpus):
        ceiling = results.ceiling.get(gpu)
        values = {}
        for rung in rungs:
            row = results.value(gpu, rung, LADDER_SIZE, kinds=("ladder",))
            if row and ceiling:
                values[rung[:2]] = row[1] / ceiling
        series.append((f"{short_gpu(gpu)}: of the ceiling probe in the same run", values,
                       COLORS[k % len(COLORS)]))
    labels = [r[:2] for r in rungs]
    fig, ax = plt.subplots(figsize=(11.5, 5.6))
    width = 0.8 / len(series)
    for k, (label, values, color) in enumerate(series):
        xs = [i + (k - (len(series) - 1) / 2) * width for i, r in enumerate(labels) if r in values]
        ys = [100 * values[r] for r in labels if r in values]
        ax.bar(xs, ys, width * 0.92, color=color, label=label)
        for x, y in zip(xs, ys):
            ax.text(x, y + 1, f"{y:.0f}" if y >= 1 else f"{y:.2f}", ha="center", va="bottom",
                    fontsize=7.5)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels([rung_label(r) for r in rungs], fontsize=9)
    ax.set_ylim(0, 110)
    ax.set_ylabel("% of the ceiling")
    ax.set_title(f"Fraction of the ceiling, rung by rung: float sum of {power_of_two(LADDER_SIZE)} "
                 "elements (H100, H200) and Harris's kernels 1-7 on a G80 (2^22 ints)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8.5, frameon=False)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out


# ---- (d) one graded submission -------------------------------------------------------------------

def _number(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def read_report(path):
    """(gpu, [(lab, gbps, ceiling, threshold, n, score, max_score)]) from a grader report.json."""
    report = json.loads(pathlib.Path(path).read_text())
    labs = report.get("labs", [])
    if isinstance(labs, dict):
        labs = [dict(value, lab=value.get("lab", key)) for key, value in labs.items()]
    top_ceiling = _number(report.get("ceiling_gbps"))
    rows = []
    for lab in labs:
        perf = lab.get("performance") or lab.get("perf") or {}
        get = lambda key: _number(perf.get(key, lab.get(key)))  # noqa: E731
        gbps, ceiling = get("gbps"), get("ceiling_gbps") or top_ceiling
        if not gbps or not ceiling:
            gbps, ceiling = None, None  # not measured (stub, build failure, no GPU): an empty slot
        n = get("n")
        rows.append((lab.get("lab", "?"), gbps, ceiling, get("threshold"), int(n) if n else None,
                     _number(lab.get("score")), _number(lab.get("max_score"))))
    rows.sort(key=lambda r: r[0])
    return report.get("gpu") or "unknown GPU", rows


def report_chart(plt, report_path, results, out):
    gpu, rows = read_report(report_path)
    if not any(gbps for _, gbps, *_ in rows):
        sys.exit(f"{report_path}: no lab with a measured bandwidth (labs[].performance.gbps)")
    reference_gpu = gpu if gpu in results.gpus else (results.gpus[0] if results.gpus else None)
    fig, ax = plt.subplots(figsize=(max(7.0, 1.0 * len(rows) + 3), 5.8))
    xs = range(len(rows))
    width = 0.38
    subs = [100 * g / c if g else None for _, g, c, *_ in rows]
    refs = []
    for lab, _, _, _, n, _, _ in rows:
        ref = None
        if reference_gpu:
            ceiling = results.ceiling.get(reference_gpu)
            for size in [n, LADDER_SIZE] if n else [LADDER_SIZE]:
                for op in ("sum", "maximum", "minimum", "product", "mean", "argmax"):
                    row = results.value(reference_gpu, lab, size, op=op)
                    if row and ceiling:
                        ref = 100 * row[1] / ceiling
                        break
                if ref is not None:
                    break
        refs.append(ref)
    sub_x = [x - width / 2 for x, p in zip(xs, subs) if p is not None]
    ax.bar(sub_x, [p for p in subs if p is not None], width, color="#1f77b4",
           label=f"submission on {short_gpu(gpu)}")
    ref_x = [x + width / 2 for x, r in zip(xs, refs) if r is not None]
    ax.bar(ref_x, [r for r in refs if r is not None], width, color="0.7",
           label=f"reference solution on {short_gpu(reference_gpu or '-')} (docs/results)")
    threshold_label = "rubric threshold (full credit)"
    for x, (lab, gbps, _, threshold, _, score, max_score), pct in zip(xs, rows, subs):
        if pct is None:
            ax.text(x - width / 2, 0.013, "not measured", ha="center", va="bottom", rotation=90,
                    fontsize=8, color="0.3")
        elif pct > 0.3:  # inside the bar, at its foot: clear of the threshold marks
            ax.text(x - width / 2, 0.013, f"{gbps_text(gbps)} GB/s", ha="center", va="bottom",
                    rotation=90, fontsize=8, color="white", fontweight="bold")
        else:
            ax.text(x - width / 2, pct * 1.15, f"{gbps_text(gbps)} GB/s", ha="center",
                    va="bottom", rotation=90, fontsize=8)
        if threshold:
            ax.plot([x - 0.45, x + 0.45], [100 * threshold] * 2, color="#d62728", linewidth=2,
                    label=threshold_label)
            threshold_label = None
    ax.set_yscale("log")
    ax.set_ylim(0.01, 1000)
    ax.set_xticks(list(xs))
    labels = []
    for lab, *_, score, max_score in rows:
        label = rung_label(lab)
        if score is not None and max_score:
            label += f"\n{score:g}/{max_score:g}"
        labels.append(label)
    ax.set_xticklabels(labels, fontsize=8.5)
    ax.set_ylabel("% of the ceiling measured in the same run (log scale)")
    ax.set_title(f"{pathlib.Path(report_path).name}: bandwidth per lab on {gpu}")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8.5, frameon=False)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out


def print_table(results):
    gpus = [g for g in results.gpus if g in results.ladder]
    print("| rung | " + " | ".join(f"{short_gpu(g)} GB/s" for g in gpus) + " |")
    print("| --- |" + " ---: |" * len(gpus))
    for impl in results.rungs() + ["cub"]:
        # The exercises' rows come from the operations run (ops_*.json): their own operation,
        # the maximum for labs 10 and 14.
        ops = {op for rows in results.ladder.values() for (op, i, n) in rows
               if i == impl and n == LADDER_SIZE}
        op = next((o for o in ("sum", "maximum") if o in ops), min(ops, default="sum"))
        cells = [results.value(g, impl, LADDER_SIZE, op=op, kinds=("ladder",)) for g in gpus]
        label = impl if op == "sum" else f"{impl} ({op})"
        print(f"| {label} | " + " | ".join(gbps_text(c[1]) if c else "-" for c in cells) + " |")
    print("| ceiling probe | " + " | ".join(gbps_text(results.ceiling[g]) for g in gpus) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(ROOT / "docs" / "results"),
                        help="folder of benchmark JSON files (default: docs/results)")
    parser.add_argument("--out-dir", default=str(ROOT / "docs" / "images"),
                        help="where the course charts go (default: docs/images)")
    parser.add_argument("--report", help="a grader report.json: chart that submission instead")
    parser.add_argument("-o", "--output",
                        help="PNG for --report (default: ladder.png beside the report)")
    parser.add_argument("--table", action="store_true",
                        help="print the GB/s at 2^28 of every rung, CUB and the ceiling probe per "
                             "GPU (the columns of docs/course_map.md) instead of drawing")
    args = parser.parse_args()
    if args.table:
        print_table(Results(args.results))
        return
    plt = import_pyplot()
    results = Results(args.results)
    if args.report:
        out = pathlib.Path(args.output or pathlib.Path(args.report).with_name("ladder.png"))
        print(f"wrote {report_chart(plt, args.report, results, out)}")
        return
    out_dir = pathlib.Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for chart, name in ((ladder_chart, "ladder.png"), (sizes_chart, "sizes.png")):
        written = chart(plt, results, out_dir / name)
        if written:
            print(f"wrote {written}")
    written = fraction_chart(plt, results, out_dir / "rungs_fraction.png", args.results)
    if written:
        print(f"wrote {written}")


if __name__ == "__main__":
    main()
