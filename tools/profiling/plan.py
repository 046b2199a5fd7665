"""What tools/profile runs: a lab's library and its reference from a build's
course-manifest.json, the graded size from the rubric, and the benchmark's one row of that lab
under ncu, the lab loaded into the benchmark's own process (REDUCE_LABS_FILE, as tools/ladder
does: the grader's walled runner lets no profiler in). The benchmark wraps each call of such a
lab in the NVTX range "lab-call", and ncu profiles only the kernels inside it: not the
benchmark's own kernels (CUB, the probe, its inputs, its L2 flushes).

Pure functions on paths, text and dictionaries; tools/profiling/test_diagnose.py checks them.
"""
import re
from pathlib import Path

# The grader times n = the rubric's size minus 1 to 4093, drawn from the run's key
# (autograder/grader/src/benchmark/benchmark.cpp, timed_size): never a power of two. The profile takes
# the middle of that range.
GRADED_OFFSET = 1 + 4092 // 2
LAB_RANGE = "lab-call"  # the NVTX range around each call of a lab (measurement.cuh)

def parse_size(text):
    """Elements from "2^28", "268435456" or "2^28-2047"; ValueError otherwise."""
    match = re.fullmatch(r"\s*(\d+)(?:\^(\d+))?\s*(?:-\s*(\d+))?\s*", str(text))
    if not match:
        raise ValueError(f"not a size: {text!r} (e.g. 2^28, 268435456 or 2^28-2047)")
    base, power, less = match.groups()
    value = int(base) ** int(power) if power else int(base)
    return value - int(less or 0)


def read_rubric(text):
    """The rubric's [performance] size and each lab's `measure` (default "probe"), read with
    tomllib where Python has it (3.11+), else by line."""
    try:
        import tomllib
    except ImportError:
        return read_rubric_lines(text)
    data = tomllib.loads(text)
    labs = {name: entry.get("measure", "probe") for name, entry in data.get("labs", {}).items()}
    return data.get("performance", {}).get("size", "2^28"), labs


def read_rubric_lines(text):
    """read_rubric() without tomllib: the rubric's keys are plain `key = value` lines."""
    size, labs, section = "2^28", {}, ""
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("["):
            section = line.strip("[]")
            if section.startswith("labs.") and section.count(".") == 1:
                labs[section[5:]] = "probe"
        elif "=" in line:
            key, value = (part.strip() for part in line.split("=", 1))
            if section == "performance" and key == "size":
                size = value.strip('"')
            elif section.startswith("labs.") and key == "measure" and section[5:] in labs:
                labs[section[5:]] = value.strip('"')
    return size, labs


def graded_size(rubric_size):
    """(n, how it was chosen) for the rubric's size."""
    n = parse_size(rubric_size) - GRADED_OFFSET
    return n, (f"the rubric's {rubric_size} less {GRADED_OFFSET}; the grader takes 1 to 4093 "
               "less, drawn per run")


def matches(entry, lab):
    """Whether a manifest entry is lab \\p lab (its folder, or its number as 4 or 04)."""
    return entry["lab"] == lab or (lab.isdigit() and entry["lab"].split("_")[0] == lab.zfill(2))


def benchmarked(course, op):
    """The benchmark family of course.json's operation \\p op ("" where it has none)."""
    found = next((o for o in course["operations"] if o["name"] == op), None)
    return "" if found is None else found.get("bench", "")


def find_entry(manifest, tree, lab, op, course):
    """The manifest entry of \\p lab in \\p tree: operation \\p op, else the lab's first
    benchmarked one. ValueError says what is missing."""
    entries = manifest["trees"].get(tree)
    if entries is None:
        raise ValueError(f"the build has no tree '{tree}' (it has: {', '.join(manifest['trees'])})")
    found = [e for e in entries if matches(e, lab)]
    if not found:
        raise ValueError(f"no lab {lab} in tree '{tree}'")
    if op:
        chosen = [e for e in found if e["op"] == op]
        if not chosen:
            raise ValueError(f"lab {found[0]['lab']} has no operation {op} (it has: "
                             f"{', '.join(e['op'] for e in found)})")
        entry = chosen[0]
    else:
        entry = next((e for e in found if benchmarked(course, e["op"])), found[0])
    if not benchmarked(course, entry["op"]):
        raise ValueError(f"{entry['lab']}'s operation {entry['op']} is not benchmarked: no "
                         "performance points depend on its speed")
    return entry


def family(course, op, segment_length):
    """The benchmark rows' first part: the operation's family, a segmented one's at
    \\p segment_length (segmented_sum_1024)."""
    bench = benchmarked(course, op)
    return bench[:-1] + str(segment_length) if bench.endswith("*") else bench


def row_filter(row_family, bench_name, n):
    """--benchmark_filter for the one row of the lab at \\p n (Google Benchmark may add
    /manual_time and the like after it)."""
    return f"--benchmark_filter=^{re.escape(row_family)}/{re.escape(bench_name)}/{n}(/|$)"


def ncu_words(ncu, launches, metrics, report, log):
    """ncu in front of the benchmark: the first \\p launches kernels inside the lab's NVTX
    range, the metrics asked for, a report file to import, its own messages into \\p log."""
    return [ncu, "--nvtx", "--nvtx-include", LAB_RANGE + "/", "--launch-count", str(launches),
            "--metrics", ",".join(metrics), "--export", str(report), "--force-overwrite",
            "--log-file", str(log)]


def labs_line(entry):
    """The line of a REDUCE_LABS_FILE that loads \\p entry's library under its row's name."""
    return f"{entry['bench_name']}={entry['library']}\n"


def bench_environment(base, labs_file, n, segment_length):
    """The benchmark's environment: the one lab of \\p labs_file loaded into its own process,
    no lab graded through a runner, at \\p n."""
    # A launch spec would have the benchmark run graded labs through runner processes.
    env = {k: v for k, v in base.items() if k not in ("REDUCE_LABS", "REDUCE_LAUNCH_SPEC")}
    env.update({
        "REDUCE_LABS_FILE": str(labs_file),
        "REDUCE_BENCH_SIZES": str(n),
        "REDUCE_SEGMENT_LENGTHS": str(segment_length),
        "REDUCE_SEED": "1",
    })
    return env


def available_metrics(query_text, metrics):
    """(kept, dropped): \\p metrics whose base name `ncu --query-metrics` lists; all of them
    kept where the listing does not look like one. Launch figures and the duration are always
    asked for."""
    listed = set(re.findall(r"^\s*([a-z][a-z0-9]*__[a-z0-9_]+)\b", query_text, re.M))
    if len(listed) < 100:
        return list(metrics), []
    always = lambda m: m.startswith("launch__") or m.startswith("gpu__time_duration")  # noqa: E731
    kept = [m for m in metrics if always(m) or m.split(".")[0] in listed]
    return kept, [m for m in metrics if m not in kept]


def reference_entry(manifests, entry):
    """(manifest's build folder, entry) of the same lab and operation in a solutions tree among
    \\p manifests ((folder, manifest) pairs, in order of preference), or None."""
    for folder, manifest in manifests:
        for candidate in manifest.get("trees", {}).get("solutions", []):
            if candidate["lab"] == entry["lab"] and candidate["op"] == entry["op"]:
                return Path(folder), candidate
    return None
