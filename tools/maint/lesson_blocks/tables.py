"""The tables of measured rows: 'measured' (a lab beside the previous rung and CUB; lab 15's
modes), 'harris' (Harris's G80 ladder beside this course's), 'strategies' and 'strategies-now'
(lab 15's strategies forced one by one)."""
import re

from .results import LADDER_GPUS, GenerationError, pow2, read_run
from .text import reflow


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
