"""Reading the results a block states: docs/results' benchmark files and the rubric's TOML."""
import json
import math
import pathlib
import re

LADDER_GPUS = (("H100", "ladder_h100.json"), ("H200", "ladder_h200.json"))
# Folders of docs/results that hold runs read only where a template names them.
SIDE_FOLDERS = ("capstone", "library", "accuracy", "segmented")
# The runs of the reference solutions' default code among them (the rest time variants).
DEFAULT_SIDE_RUNS = ("library/library_primitives_h*.json", "accuracy/accuracy_h*.json")
# The runs of the operations graded as a family of rows (course.json bench "<prefix>*").
FAMILY_RUNS = "segmented/segmented_h*.json"


class GenerationError(Exception):
    """A block that cannot be generated: a missing row, file or rubric entry, a bad template."""


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
