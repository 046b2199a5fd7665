#!/usr/bin/env python3
"""Tables of tools/maint/neighbours.sh's runs: how much each neighbour load moved the benchmark.

    tools/maint/neighbours_table.py DIR           Markdown tables on stdout
    tools/maint/neighbours_table.py --line FILE   one run in one line (for the script's log)

DIR holds <condition>-<run>.json (reduce_bench's Google Benchmark JSON), and where the script
wrote them runs.tsv (each run's exit status, wall time, whether its neighbour still ran at its
end, how busy the benchmark's and the other CPUs were during it, in %) and
<condition>-<run>.neighbour.log (the neighbour's own last line, e.g. its GB/s).

A row's fraction is its median GB/s over the same run's ceiling probe (the context's
ceiling_gbps, as the rubric's ceiling = "probe"; the stream_read row where a run has none). A
graded row that failed on its clocks keeps no GB/s in the JSON: its error message's clock
(the benchmark's, "the grader's clock N us") gives it, and the table counts such runs. The lab
process's CUDA events over the benchmark's clock (events/clock) says how close a row came to
"clocks disagree" (below 0.8, less 20 us, fails).
"""

import csv
import json
import re
import statistics
import sys
from pathlib import Path

# The script's conditions in its order; any other comes after them, by name.
ORDER = ["alone", "cpu_other", "cpu_same", "build_other", "memory_other", "pcie_same_gpu",
         "gpu_context"]
FILE_NAME = re.compile(r"^(?P<condition>.+)-(?P<run>\d+)\.json$")
HOST_CLOCK = re.compile(r"grader's clock ([0-9.]+) us")
EVENT_CLOCK = re.compile(r"reports ([0-9.]+) us per call")
BYTES_PER_ELEMENT = 4  # the sum's rows read floats


def number(value):
    """A JSON number or numeric string as a float; None where it is neither."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def size_of(text):
    """A row name's size part: 268435456 or 2^28."""
    if "^" in text:
        base, exponent = text.split("^", 1)
        return int(base) ** int(exponent)
    return int(text)


def parse_row(bench):
    """(impl, facts) of one benchmark row; None for aggregates and names without a size."""
    if bench.get("run_type", "iteration") != "iteration":
        return None
    parts = bench.get("name", "").split("/")
    try:
        n = size_of(parts[2])
    except (IndexError, ValueError):
        return None
    failed = bool(bench.get("error_occurred") or bench.get("skipped")) or \
        (number(bench.get("failure")) or 0) != 0
    message = bench.get("error_message") or bench.get("skip_message") or ""
    gbps, median_us = number(bench.get("median_gbps")), number(bench.get("median_us"))
    event_us = number(bench.get("runner_event_us"))
    from_message = False
    host = HOST_CLOCK.search(message)
    if gbps is None and host:
        median_us = float(host.group(1))
        gbps = n * BYTES_PER_ELEMENT / (median_us * 1e3)
        from_message = True
    events = EVENT_CLOCK.search(message)
    if event_us is None and events:
        event_us = float(events.group(1))
    clocks = number(bench.get("clocks_agree"))
    return parts[1], {
        "n": n, "gbps": gbps, "failed": failed, "from_message": from_message,
        "clocks": None if clocks is None else int(clocks),
        "events_ratio": event_us / median_us if event_us and median_us else None,
    }


def parse_run(path):
    """One run: its probe GB/s, GPU and rows (impl -> facts, with each row's fraction)."""
    data = json.loads(Path(path).read_text())
    context = data.get("context", {})
    rows = {}
    for bench in data.get("benchmarks", []):
        parsed = parse_row(bench)
        if parsed:
            rows[parsed[0]] = parsed[1]
    probe = number(context.get("ceiling_gbps"))
    stream = rows.get("stream_read", {}).get("gbps")
    ceiling = probe if probe else stream
    for facts in rows.values():
        facts["fraction"] = facts["gbps"] / ceiling if facts["gbps"] and ceiling else None
    return {"probe": probe, "stream": stream, "gpu": context.get("gpu", "?"), "rows": rows,
            "ceiling_from": "probe" if probe else "stream_read"}


def load_runs(folder):
    """condition -> {run number: parsed run} of every <condition>-<run>.json in \\p folder."""
    runs = {}
    for path in sorted(Path(folder).glob("*.json")):
        match = FILE_NAME.match(path.name)
        if not match:
            continue
        try:
            run = parse_run(path)
        except (OSError, ValueError) as e:
            print(f"neighbours_table: {path.name} left out: {e}", file=sys.stderr)
            continue
        run["neighbour_line"] = neighbour_line(path.with_suffix(".neighbour.log"))
        runs.setdefault(match["condition"], {})[int(match["run"])] = run
    return runs


def neighbour_line(path):
    """The neighbour's own last line (a stress program's rate, or why it stopped), or ''."""
    if not path.exists():
        return ""
    lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    return lines[-1][:100].replace("|", "/") if lines else ""


def read_tsv(folder):
    """(condition, run) -> runs.tsv's row, where the script wrote one."""
    path = Path(folder) / "runs.tsv"
    if not path.exists():
        return {}
    with open(path, newline="") as f:
        return {(r["condition"], int(r["run"])): r for r in csv.DictReader(f, delimiter="\t")}


def ordered(conditions):
    """\\p conditions in the script's order, others after them by name."""
    known = [c for c in ORDER if c in conditions]
    return known + sorted(c for c in conditions if c not in ORDER)


def spread(values, digits=3):
    """'median (min-max)' of \\p values, or '-'."""
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    f = f"{{:.{digits}f}}"
    return f"{f.format(statistics.median(values))} ({f.format(min(values))}-" \
        f"{f.format(max(values))})"


def median_or_none(values):
    """The median of the values that are not None, else None."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def impl_order(runs):
    """Every row name of every run: labs by name, stream_read last."""
    names = {impl for by_run in runs.values() for run in by_run.values() for impl in run["rows"]}
    return sorted(names, key=lambda name: (name == "stream_read", name))


def lab_cells(facts, alone):
    """The cells of one (row, condition) after its name and condition: runs, median fraction,
    change from alone, min/max, beyond alone's spread, clocks, events/clock, failed."""
    fractions = [f["fraction"] for f in facts if f["fraction"] is not None]
    median = median_or_none(fractions)
    change, beyond = "-", "-"
    if median is not None and alone and alone["median"]:
        change = f"{(median / alone['median'] - 1) * 100:+.1f}%"
        beyond = "yes" if median < alone["min"] or median > alone["max"] else "no"
    with_clocks = [f["clocks"] for f in facts if f["clocks"] is not None]
    clocks = f"{sum(with_clocks)}/{len(with_clocks)}" if with_clocks else "-"
    ratio = median_or_none([f["events_ratio"] for f in facts])
    failed = sum(f["failed"] for f in facts)
    estimated = sum(f["from_message"] for f in facts)
    failed_text = f"{failed}" + (f" ({estimated} from the message's clock)" if estimated else "")
    return [str(len(facts)), "-" if median is None else f"{median:.3f}", change,
            "-" if not fractions else f"{min(fractions):.3f}-{max(fractions):.3f}", beyond,
            clocks, "-" if ratio is None else f"{ratio:.2f}", failed_text]


def lab_table(runs):
    """Per row and condition: the fraction of the probe over the runs, against alone's."""
    lines = ["| row | condition | runs | fraction (median) | vs alone | min-max | beyond alone's "
             "spread | clocks agree | events/clock | failed |",
             "| --- | --- | ---: | ---: | ---: | --- | --- | ---: | ---: | --- |"]
    for impl in impl_order(runs):
        alone = None
        for condition in ordered(runs):
            facts = [run["rows"][impl] for _, run in sorted(runs[condition].items())
                     if impl in run["rows"]]
            if not facts:
                continue
            fractions = [f["fraction"] for f in facts if f["fraction"] is not None]
            if condition == "alone" and fractions:
                alone = {"median": statistics.median(fractions), "min": min(fractions),
                         "max": max(fractions)}
            cells = lab_cells(facts, alone if condition != "alone" else None)
            lines.append("| " + " | ".join([impl, condition] + cells) + " |")
    return lines


def condition_table(runs, tsv):
    """Per condition: the probe, the stream read, the run's wall time, how busy each half of the
    CPUs was during it (runs.tsv), its neighbour."""
    lines = ["| condition | runs | probe GB/s | stream_read GB/s | benchmark wall s | "
             "neighbour ran to the end | CPUs busy (bench / other half) | neighbour's own report |",
             "| --- | ---: | --- | --- | ---: | ---: | ---: | --- |"]
    for condition in ordered(runs):
        by_run = runs[condition]
        logged = [tsv[(condition, k)] for k in by_run if (condition, k) in tsv]
        walls = median_or_none([number(r.get("wall_s")) for r in logged])
        busy = [median_or_none([number(r.get(f"{half}_cpus_busy")) for r in logged])
                for half in ("bench", "other")]
        states = [r.get("neighbour", "-") for r in logged if r.get("neighbour", "-") != "-"]
        alive = f"{states.count('running')}/{len(states)}" if states else "-"
        reports = [run["neighbour_line"] for _, run in sorted(by_run.items())
                   if run["neighbour_line"]]
        lines.append("| " + " | ".join([
            condition, str(len(by_run)),
            spread([run["probe"] for run in by_run.values()], 1),
            spread([run["stream"] for run in by_run.values()], 1),
            "-" if walls is None else f"{walls:.1f}", alive,
            " / ".join("-" if b is None else f"{b:.0f}%" for b in busy),
            reports[len(reports) // 2] if reports else "-"]) + " |")
    return lines


def report(folder):
    """The whole Markdown page for \\p folder's runs; None when it holds none."""
    runs = load_runs(folder)
    if not runs:
        return None
    first = next(iter(next(iter(runs.values())).values()))
    sizes = sorted({f["n"] for by_run in runs.values() for run in by_run.values()
                    for f in run["rows"].values()})
    graded = any(f["clocks"] is not None for by_run in runs.values() for run in by_run.values()
                 for f in run["rows"].values())
    return "\n".join([
        f"## Neighbour loads beside the benchmark ({first['gpu']}, n = "
        f"{', '.join(str(n) for n in sizes)})", "",
        "Labs " + ("graded (each in a runner process, as reduce-grade times them)" if graded
                   else "loaded into the benchmark's process (no clocks_agree)") +
        f". Fraction: the row's GB/s over the same run's {first['ceiling_from']}; vs alone: the "
        "median's change from alone's median; beyond alone's spread: the median lies outside "
        "alone's min-max; events/clock: the lab process's CUDA events over the benchmark's "
        "clock (a row fails below 0.8).", "",
        *lab_table(runs), "", *condition_table(runs, read_tsv(folder)), ""])


def one_line(path):
    """One run's rows in one line: fraction of the probe and the clocks' verdict."""
    run = parse_run(path)
    cells = []
    for impl, facts in sorted(run["rows"].items(), key=lambda kv: (kv[0] == "stream_read", kv[0])):
        fraction = "-" if facts["fraction"] is None else f"{facts['fraction']:.3f}"
        clocks = {None: "", 1: " clocks agree", 0: " clocks disagree"}[facts["clocks"]]
        verdict = f" failed ({clocks.strip() or 'see its log'})" if facts["failed"] else clocks
        cells.append(f"{impl} {fraction}{verdict}".rstrip())
    probe = "-" if run["probe"] is None else f"{run['probe']:.1f}"
    return ", ".join(cells) + f"; probe {probe} GB/s"


def main(argv):
    """Prints the tables of a folder, or one run's line."""
    if len(argv) == 3 and argv[1] == "--line":
        print(one_line(argv[2]))
        return 0
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    page = report(argv[1])
    if page is None:
        print(f"neighbours_table: no <condition>-<run>.json in {argv[1]}", file=sys.stderr)
        return 1
    print(page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
