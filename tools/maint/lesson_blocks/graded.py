"""The 'graded' block: what tools/grade demands of one lab."""
import json

from .references import (bench_pattern, calibration_files, calibration_median, family_rows,
                         lab_lengths, lab_ops, lengths_text, reference_fraction)
from .results import LADDER_GPUS, GenerationError
from .text import gbps_text, reflow


PART_TEXT = {
    "build": "compiles, links with the course's tests, and is not the untouched stub",
    "tests": "the public tests, in proportion to the tests passed",
    "hidden": "the hidden tests (the grader's own), in proportion to the tests passed",
}


def graded_section(course, lab):
    """What tools/grade demands of one lab, from autograder/rubric.toml and the ladder runs."""
    rubric = course.rubric()
    entry = course.lab_rubric(lab)
    points = entry["points"]
    tools = rubric.get("sanitizer", {}).get("tools", [])
    ops = lab_ops(course, lab)
    total = sum(points.get(k, 0) for k in ("build", "tests", "hidden", "sanitizer", "performance"))
    share = (f"{points.get('sanitizer', 0):g}/{len(tools)} point" if len(tools) > 1
             else f"{points.get('sanitizer', 0):g} point")
    lines = [f"`tools/grade` scores this lab out of {total:g} points (`autograder/rubric.toml`):",
             "", "| part | points | what earns them |", "| --- | ---: | --- |"]
    for part in ("build", "tests", "hidden"):
        text = PART_TEXT[part]
        if part == "hidden" and points.get("hidden", 0) == 0:
            text = "none: the rubric gives this lab's hidden tests no points of their own"
        lines.append(f"| {part} | {points.get(part, 0):g} | {text} |")
    lines.append(f"| sanitizer | {points.get('sanitizer', 0):g} | {', '.join(tools)}: "
                 f"{share} each, for a run over small sizes that finds nothing |")
    families = any(bench_pattern(course, op).endswith("*") for op in ops)
    judged = (f"the bandwidth of the slower of {' and '.join(ops)}" if len(ops) > 1
              else f"the bandwidth of {ops[0]}" if ops else "-")
    if families:
        judged = (f"the bandwidth of the slowest of {' and '.join(ops)} over the benchmark's "
                  "segment lengths")
    lines, threshold, floor = performance_part(course, lab, entry, judged, lines)
    lines, sources, calibrated = gpu_table(course, lab, ops, threshold, floor, lines)
    if entry["credit"] == "per_length":
        lines = length_table(course, lab, ops, threshold, lines)
    calibration_text = ""
    if any(calibrated.values()):
        calibration_text = (
            "The grader's calibration (`reduce-grade calibrate --runs 3`, its median, "
            f"{' and '.join(calibration_files(course, lab))}) times the reference as grading "
            "does: inputs made anew from a hidden seed before every call and the lab in its own "
            "process; the lesson's runs time the operation alone, so the two fractions differ, "
            "and the threshold is set from the calibration. ")
    lines += ["", f"GB/s: the threshold and floor times the ceiling probe of {' and '.join(sources)}; "
              "the reference's fraction comes from the run that measured it (the lesson's table). "
              + calibration_text
              + ("Correctness gates performance. This lab may use CUB's block- and warp-level "
                 "primitives; a device-wide library reduction (`cub::DeviceReduce`, Thrust's "
                 "algorithms, cuBLAS...) anywhere in it costs the whole lab its points "
                 "(docs/grader.md)." if entry.get("library") == "primitives" else
                 "Correctness gates performance, and a library reduction (CUB, Thrust, cuBLAS...) "
                 "anywhere in the lab costs the whole lab its points (docs/grader.md).")]
    return reflow("\n".join(lines)) + "\n"


def performance_part(course, lab, entry, judged, lines):
    """The performance row of the points table and the paragraph on its measure (CUB's speed, the
    reference solution's or the ceiling probe's), after the lines given; returns the lines, and
    the threshold and floor that gpu_table() shows: the probe's fallback where CUB or the
    reference is the measure."""
    rubric = course.rubric()
    points, threshold, floor = entry["points"], entry["threshold"], entry["floor"]
    size = entry["rubric_size"]
    ceiling_kind = rubric.get("performance", {}).get("ceiling", "probe")
    if entry["measure"] == "cub":
        small = rubric["labs"][course.impl(lab)].get("launch_bound_size", "")
        lines.append(f"| performance | {points.get('performance', 0):g} | full at {threshold:g} of "
                     f"`cub::DeviceReduce::Sum`'s speed or above, none at {floor:.3g} or below, "
                     "linear in between; only when every public and hidden test passes |")
        lines += ["", f"Performance is {judged} at {size} elements"
                  + (f" and at a launch-bound {small} elements" if small else "")
                  + ", the slowest of them, as a fraction of the speed of `cub::DeviceReduce::Sum` "
                  "built as a lab library (autograder/bench/references) and timed in the same "
                  "benchmark process in the same way (a lab process of its own, every input made "
                  "anew before every call), the request's own cost left out of both times (the "
                  f"grader's clock less CUB's own CUDA events: {request_cost_text(course)}): "
                  "the capstone's promise is CUB's speed at every size, on whatever GPU grades "
                  "it. Where CUB's library cannot be built the grade is "
                  f"against the ceiling probe, full at {entry['probe_threshold']:g} of it, none at "
                  f"{entry['probe_floor']:.3g}, and the report says so. On the two GPUs of the "
                  "committed runs that fallback means:", ""]
        threshold, floor = entry["probe_threshold"], entry["probe_floor"]
    elif entry["measure"] == "reference":
        lines.append(f"| performance | {points.get('performance', 0):g} | full at {threshold:g} of "
                     f"the course's reference solution of this lab or above, none at {floor:.3g} "
                     "or below, linear in between; only when every public and hidden test "
                     "passes |")
        own = entry["size"]  # the lab's own size, where it has one (lab 01)
        lines += ["", f"Performance is {judged} at {own} elements, as a fraction of the "
                  "bandwidth of the course's reference solution of this lab, timed in the same "
                  "benchmark process and in the same way (a lab process of its own, every input "
                  "made anew before every call, the request's own cost left out). This lab is "
                  "bound by atomics, barriers, latency or integer work, not by the memory's "
                  "speed, so its fraction of the ceiling probe would change from GPU to GPU with "
                  "the same code; against the reference it means the same on every GPU. Where "
                  "the reference cannot be timed (a copy of the course without `solutions/`) the "
                  f"grade is against the ceiling probe{'' if own == size else f' at {size} elements'}, "
                  f"full at {entry['probe_threshold']:g} of it, none at "
                  f"{entry['probe_floor']:.3g}, and the report says so. On the two GPUs of the "
                  "committed runs that fallback means:", ""]
        threshold, floor = entry["probe_threshold"], entry["probe_floor"]
    elif entry["credit"] == "per_length":
        lengths = lab_lengths(course, lab)
        share = points.get("performance", 0) / len(lengths)
        lines.append(f"| performance | {points.get('performance', 0):g} | {share:g} for each of the "
                     f"{len(lengths)} segment lengths ({lengths_text(lengths)}): full at "
                     f"{threshold:g} of the ceiling {ceiling_kind} or above, none at {floor:.3g} or "
                     "below, linear in between, from the slower operation at that length; only "
                     "when every public and hidden test passes |")
        lines += ["", f"Performance is read per segment length at {size} elements, from the "
                  f"slower operation there, as a fraction of the ceiling {ceiling_kind} measured "
                  "in the same benchmark process; no length's share waits for the others, and the "
                  "report lists what each earned. On the GPUs of the committed runs:", ""]
    else:
        lines.append(f"| performance | {points.get('performance', 0):g} | full at {threshold:g} of "
                     f"the ceiling {ceiling_kind} or above, none at {floor:.3g} or below, linear "
                     "in between; only when every public and hidden test passes |")
        lines += ["", f"Performance is {judged} at {size} elements, as a fraction of the ceiling "
                  f"{ceiling_kind} (a streaming read) measured in the same benchmark process. "
                  "On the two GPUs of the committed runs that means:", ""]
    if entry["races_gate"]:
        lines = [line.replace("only when every public and hidden test passes |",
                              "only when every public and hidden test passes and racecheck ends clean, "
                              "with no hazard (in this lab a race is the lesson's subject) |")
                 if line.startswith("| performance") else line for line in lines]
    return lines, threshold, floor


def request_cost_text(course):
    """The request's own cost at lab 15's launch-bound size as the H200's gradings measured it:
    CUB's clock less its CUDA events, over the runs of capstone/graded_rows_h200.json whose
    processes stayed awake between requests, 16 inputs a request (the grader's driver)."""
    path = course.results / "capstone" / "graded_rows_h200.json"
    costs = [row["host_us"] - row["event_us"]
             for run in json.loads(path.read_text())["runs"] if "awake" in run["driver"]
             for row in run["rows"]
             if row["row"].startswith("reference-") and row["n"] < 8192
             and row.get("event_us") and row.get("calls_per_sample") == 16]
    if not costs:
        raise GenerationError(f"{path}: no launch-bound reference row with its events")
    return (f"{min(costs):.1f}-{max(costs):.1f} us a call at 2^12 floats on the H200, "
            f"{len(costs)} rows of {path.relative_to(course.root)}")


def gpu_table(course, lab, ops, threshold, floor, lines):
    """The table, after the lines given, of the threshold and floor in GB/s on each GPU of the
    committed runs, beside the reference solution's fraction and the grader's calibration where
    there is one; returns the lines, the runs read and the calibrations by GPU."""
    lines += ["| GPU | ceiling probe (GB/s) | full credit from (GB/s) | no credit at or below "
              "(GB/s) | reference solution (fraction) | reference / threshold |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    calibrated = {short: calibration_median(course, lab, short) for short, _name in LADDER_GPUS}
    if any(calibrated.values()):
        lines[-2] += " grader's calibration (fraction) | calibration / threshold |"
        lines[-1] += " ---: | ---: |"
    sources = []
    for short, name in LADDER_GPUS:
        stem = name[:-5]
        try:
            probe = course.file(stem)[1]
        except GenerationError:
            continue
        sources.append(f"docs/results/{name}")
        reference = reference_fraction(course, lab, short, ops)
        ref_text = f"{reference:.3g} | {reference / threshold:.2f}" if reference else "- | -"
        if any(calibrated.values()):
            median = calibrated[short]
            ref_text += f" | {median:.3g} | {median / threshold:.2f}" if median else " | - | -"
        lines.append(f"| {short} | {probe:.0f} | {gbps_text(threshold * probe)} | "
                     f"{gbps_text(floor * probe)} | {ref_text} |")
    return lines, sources, calibrated


def length_table(course, lab, ops, threshold, lines):
    """The table, after the lines given, of the reference solution at each graded segment length
    on each GPU of the committed runs: the slower operation's fraction of its run's probe."""
    lengths = lab_lengths(course, lab)
    gpus = [short for short, _name in LADDER_GPUS]
    rows = {gpu: [r for op in ops for r in family_rows(course, lab, gpu, bench_pattern(course, op)[:-1])]
            for gpu in gpus}
    gpus = [gpu for gpu in gpus if rows[gpu]]
    lines += ["", "The reference solution at each length (the slower operation, the lesson's "
              "runs):", "",
              "| row length | " + " | ".join(f"{gpu} reference | {gpu} / threshold" for gpu in gpus)
              + " |", "| ---: |" + " ---: | ---: |" * len(gpus)]
    for length in lengths:
        cells = []
        for gpu in gpus:
            found = [r["fraction"] for r in rows[gpu] if r["op"].rsplit("_", 1)[1] == str(length)]
            slower = min(found) if found else None
            cells.append(f"{slower:.3g} | {slower / threshold:.2f}" if slower else "- | -")
        lines.append(f"| {lengths_text([length])} | " + " | ".join(cells) + " |")
    return lines
