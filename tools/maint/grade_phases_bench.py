"""The benchmark's part of grade_phases.py: its rows read from reduce_bench's JSON (logs/benchmark/
bench.json) or its console table (bench.log, the counters with Google Benchmark's SI suffixes),
each row's phases in seconds (measurement.cu's report_phases() and report_regeneration()), and
their Markdown (with the two Markdown helpers both modules use)."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

SI = {"n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "Gi": 2**30, "Ti": 2**40}
BENCH_ROW = re.compile(r"^(\S+/\S+/\d+/\S+)\s+\S+ us\s+\S+ us\s+(\d+)\s+(.*)$")
BENCH_ERROR = re.compile(r"^(\S+/\S+/\d+/\S+)\s+ERROR OCCURRED: '(.*)'")
COUNTER = re.compile(r"(\w+)=(-?\d+(?:\.\d+)?(?:e-?\d+)?)(Gi|Ti|[numkMG])?(?:/s)?")


def si_value(number, suffix):
    """A Google Benchmark counter's value with its SI suffix (1.2m, 83u, 472.5k)."""
    return float(number) * (SI[suffix] if suffix else 1.0)


def bench_rows_from_log(text):
    """The rows of a bench.log's console table: [{name, iterations, real_time(us), counters}]."""
    rows = []
    for line in text.splitlines():
        if e := BENCH_ERROR.match(line):
            rows.append({"name": e.group(1), "error_occurred": True, "error_message": e.group(2)})
        m = BENCH_ROW.match(line)
        if not m:
            continue
        row = {"name": m.group(1), "iterations": int(m.group(2))}
        row["real_time"] = float(line.split()[1])
        for key, number, suffix in COUNTER.findall(m.group(3)):
            row[key] = si_value(number, suffix)
        rows.append(row)
    return rows


def bench_rows(folder):
    """The rows of a benchmark's log folder: bench.json's, else bench.log's; [] for neither."""
    folder = Path(folder)
    if (folder / "bench.json").is_file():
        return json.loads((folder / "bench.json").read_text()).get("benchmarks", [])
    if (folder / "bench.log").is_file():
        return bench_rows_from_log((folder / "bench.log").read_text(errors="replace"))
    return []


def row_kind(name):
    """'reference', 'trusted' (CUB, the stream read) or 'lab' for a row 'op/rung/n/...'."""
    rung = name.split("/")[1]
    if rung.startswith("reference-"):
        return "reference"
    if rung in ("cub", "stream_read") or rung.startswith("cub_"):
        return "trusted"
    return "lab"


def row_costs(row):
    """A row's phases in seconds; a trusted row has only its timed iterations (a lower bound)."""
    kind = row_kind(row["name"])
    timed = row.get("iterations", 1) * row.get("real_time", 0.0) * 1e-6
    if "setup_s" not in row:
        return {"kind": kind, "total": timed, "timed": timed, "bound": True}
    regen = row.get("inputs_regenerated", 0) * row.get("regenerate_gpu_ms_per_input", 0) * 1e-3
    calls = row.get("samples", 0) * row.get("calls_per_sample", 0) * row.get("median_us", 0)
    return {"kind": kind, "total": row["setup_s"] + row.get("sampling_s", 0.0),
            "setup": row["setup_s"], "allocate": row.get("allocate_s", 0.0),
            "fill": row.get("fill_s", 0.0), "warmup": row.get("warmup_s", 0.0),
            "sampling": row.get("sampling_s", 0.0), "regen": regen, "timed": calls * 1e-6,
            "regenerate_ms": row.get("regenerate_ms", 0.0), "bound": False}


def short_row(name):
    """'op/rung n' of a row's name."""
    cells = name.split("/")
    return f"{cells[0]}/{cells[1]} {cells[2]}"


def lab_of_rung(rung, labs):
    """The lab a benchmark rung belongs to ('reference-15_capstone_sum_deterministic' -> 15_...)."""
    rung = rung.removeprefix("reference-")
    known = [lab for lab in labs if rung.startswith(lab)]
    return max(known, key=len) if known else rung


def fmt(x, digits=1):
    """A number for the tables; '-' for none."""
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def table(head, rows):
    """A Markdown table."""
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(" --- " for _ in head) + "|"]
    return out + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def bench_table(rows):
    """The benchmark rows' table and the sums per kind of row."""
    body, sums = [], {}
    for row in rows:
        c = row_costs(row)
        for key in ("total", "regen", "timed"):
            sums.setdefault(c["kind"], {}).setdefault(key, 0.0)
            sums[c["kind"]][key] += c.get(key, 0.0)
        sums[c["kind"]]["rows"] = sums[c["kind"]].get("rows", 0) + 1
        cells = [fmt(c.get(k), 3) for k in ("setup", "allocate", "fill", "warmup", "sampling",
                                             "regen", "timed")]
        total = ("≥ " if c["bound"] else "") + fmt(c["total"], 3)
        kind = c["kind"] + (", failed: " + row.get("error_message", "") if row.get(
            "error_occurred") else "")
        body.append((short_row(row["name"]), kind, *cells, fmt(c.get("regenerate_ms"), 1),
                     total))
    head = ("row", "kind", "setup s", "allocate s", "fill s", "warm-up s", "sampling s",
            "inputs regenerated (GPU s)", "timed calls s", "regenerate ms (median)", "total s")
    return table(head, body), sums


def render_bench(start, rows, seconds, labs):
    """The benchmark's process (from \p start, \p seconds long), its rows and what its rows
    leave out."""
    if not rows:
        return []
    body, sums = bench_table(rows)
    rowsum = sum(s["total"] for s in sums.values())
    out = ["## Benchmark", "", f"One process from {fmt(start)} s: {fmt(seconds)} s (its log's "
           f"exit line); its rows add up to {fmt(rowsum)} s, the rest, {fmt((seconds or 0) - rowsum)}"
           " s, is its start, CUDA context, the ceiling probe, the trusted rows' set-up and the "
           "tables (none of them timed in the log).", ""]
    for kind, s in sorted(sums.items()):
        out.append(f"- {kind} rows: {s['rows']}, {fmt(s['total'], 2)} s" +
                   (f", of which inputs regenerated on the GPU {fmt(s['regen'], 2)} s and timed "
                    f"calls {fmt(s['timed'], 2)} s" if kind != "trusted" else
                    " (their timed iterations only)"))
    per_lab = {}
    for row in rows:
        lab = lab_of_rung(row["name"].split("/")[1], labs)
        lab = "CUB and stream read" if row_kind(row["name"]) == "trusted" else lab
        per_lab[lab] = per_lab.get(lab, 0.0) + row_costs(row)["total"]
    out += ["", "Per lab (its rows and its reference's): " + ", ".join(
        f"{lab} {fmt(s, 2)}" for lab, s in sorted(per_lab.items(), key=lambda x: -x[1])) + " s.",
        "", "Setup = allocate + fill + warm-up; total = setup + sampling; the regenerated inputs "
        "(inputs_regenerated x regenerate_gpu_ms_per_input) and the timed calls (samples x "
        "calls_per_sample x median_us) are parts of warm-up and sampling.", ""]
    return out + body + [""]
