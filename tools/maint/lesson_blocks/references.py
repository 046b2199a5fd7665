"""The reference solutions' rows that a lab's grade reads, and a lesson's performance bar in one
sentence: from course.json, autograder/rubric.toml and the committed runs."""
import json
import pathlib
import re

from .results import (DEFAULT_SIDE_RUNS, FAMILY_RUNS, LADDER_GPUS, SIDE_FOLDERS, GenerationError,
                      pow2, short_gpu)
from .text import gbps_text


def judged_ops(course, ops):
    """What a lab's performance is read from, in words: 'sum', 'the slower of sum and
    sum_deterministic', 'the slowest of ... over the benchmark's segment lengths'."""
    names = " and ".join(f"`{op}`" for op in ops)
    if any(bench_pattern(course, op).endswith("*") for op in ops):
        return f"the slowest of {names} over the benchmark's segment lengths"
    return f"the slower of {names}" if len(ops) > 1 else names


def lab_lengths(course, lab):
    """The segment lengths the grader times a lab of families at (lab 17): the benchmark's
    default REDUCE_SEGMENT_LENGTHS in autograder/bench/segmented_rows.cu, which the grader leaves
    as it is; [] for a lab without families."""
    if not any(bench_pattern(course, op).endswith("*") for op in lab_ops(course, course.impl(lab))):
        return []
    source = course.root / "autograder" / "bench" / "segmented_rows.cu"
    match = re.search(r'size_list\("REDUCE_SEGMENT_LENGTHS",\s*"([0-9^,]+)"\)', source.read_text())
    if not match:
        raise GenerationError(f"no default REDUCE_SEGMENT_LENGTHS in {source}")
    return [2 ** int(t[2:]) if t.startswith("2^") else int(t) for t in match.group(1).split(",")]


def lengths_text(lengths):
    """'32, 1024, 32768 and 2^20': the lengths in words, large powers of two as powers."""
    words = [pow2(length) if length >= 1 << 16 else str(length) for length in lengths]
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else "".join(words)


def per_length_bar(course, lab, entry):
    """The opening of a per-length lab's bar (rubric `credit = "per_length"`): what is timed and
    each length's share of the points."""
    lengths = lab_lengths(course, lab)
    points = entry["points"].get("performance", 0)
    names = " and ".join(f"`{op}`" for op in lab_ops(course, course.impl(lab)))
    return (f"Performance counts only once every test passes. The grader times {names} at rows "
            f"of {lengths_text(lengths)} floats (2^28 floats in all), and each length earns "
            f"{points / len(lengths):g} of the {points:g} points from the slower of the two there: "
            f"its full share at {entry['threshold']:g} ")


def performance_bar(course, lab):
    """One sentence of a lesson's task: what earns the lab's performance points, from
    autograder/rubric.toml (its threshold and floor, and `measure`: "probe", the default,
    "reference" or "cub") and the committed runs (the threshold in GB/s on each GPU, and the
    reference solution's fraction, where the probe is the measure)."""
    folder = course.impl(lab)
    entry = course.lab_rubric(folder)
    measure = course.rubric().get("labs", {}).get(folder, {}).get("measure", "probe")
    judged = judged_ops(course, lab_ops(course, folder))
    threshold, floor = entry["threshold"], entry["floor"]
    size = entry["size"]
    text = (f"Performance counts only once every test passes. It is read from {judged} at "
            f"{size} floats: full credit at {threshold:g} ")
    if measure == "reference":
        return text + (f"of the reference solution's bandwidth, timed in the same run, or above, "
                       f"none at {floor:.3g} or below (\"What is graded\").")
    if measure == "cub":
        # The slowest of both modes at both sizes counts, and the request's own cost (CUB's
        # clock less its own events) is left out of both times: the rubric's rule, in words.
        small = course.rubric()["labs"][folder].get("launch_bound_size", "")
        names = " and ".join(f"`{op}`" for op in lab_ops(course, folder))
        read = (f"the slowest of {names} at {size} floats and at a launch-bound {small}" if small
                else f"{judged} at {size} floats")
        return (f"Performance counts only once every test passes. It is read from {read}: "
                f"full credit at {threshold:g} of `cub::DeviceReduce::Sum`'s speed or above, "
                f"none at {floor:.3g} or below, CUB timed in the same run as a lab is and the "
                "request's own cost left out of both times (\"What is graded\").")
    per_length = entry.get("credit") == "per_length"
    if per_length:
        text = per_length_bar(course, lab, entry)
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
             f"{floor:.3g} or below" + (", linear in between" if per_length else ""))
    if reached:
        whose = "'s slowest length" if per_length else ""
        text += f"; the reference solution{whose} reaches {' and '.join(reached)}"
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
