"""The 'timings' block: how long the README's two commands and a lab's re-grade take, from
docs/results/grading.json (the GPU host's gradings), docs/results/test_suite_cpu.json (the test
command on a 2-core machine without a GPU) and docs/results/grader_build_cpu.json."""
from .results import GenerationError, short_gpu


def newest_grading(grades, *words):
    """The newest recorded grading whose note holds every one of \\p words, of a change that
    stands (a grading of a change later reverted does not time what the grader is)."""
    for grade in reversed(grades):
        note = grade.get("note") or ""
        if (all(word in note for word in words) and grade.get("seconds") and grade.get("gpu")
                and not grade.get("reverted")):
            return grade
    raise GenerationError(f"docs/results/grading.json has no grading noted {' ... '.join(words)!r}")


def minutes(seconds):
    """'14 min 5 s'."""
    whole = int(round(seconds))
    return f"{whole // 60} min {whole % 60} s"


def timings_block(course, lab=None):
    """A short list: the test command on 2 cores, a whole course's grading and a lab's loop on
    the GPU host, each with the commit it was measured at."""
    grades = course.data("grading.json")["grades"]
    suite_file = course.data("test_suite_cpu.json")
    suites = suite_file.get("runs", [])
    if not suites:
        raise GenerationError("docs/results/test_suite_cpu.json has no run")
    suite, setup = suites[-1], suite_file["setup"]
    grader_builds = course.data("grader_build_cpu.json")
    grader_build = grader_builds["runs"][0]
    whole = newest_grading(grades, "solutions from an empty build folder")
    first = newest_grading(grades, "one-lab loop", "first grade")
    again = newest_grading(grades, "one-lab loop", "after an edit")
    gpu = short_gpu(whole["gpu"])
    lines = [
        f"- `tools/setup && tools/test` on a 2-core machine without a GPU, shared with other "
        f"builds: `tools/setup` {setup['seconds']:.0f} s ({setup['commit']}), `tools/test` "
        f"{minutes(suite['seconds'])} ({suite['tests']} tests, {suite['gpu_skipped']} of which "
        f"need a GPU and skip; {suite['commit']}).",
        f"- `tools/grade` of a whole course on the {gpu} host: {whole['seconds']:.0f} s from an "
        f"empty build folder, {whole['build_s']:.0f} s of it building the course "
        f"({whole['commit']}). The grader itself is built once, by the first call: "
        f"{grader_build['wall'].replace(':', ' min ')} s on 2 cores ({grader_builds['date']}, at "
        f"-O3; it builds at -O1 now).",
        f"- One lab, `tools/grade --labs 04`, on the {gpu} host: {first['seconds']:.0f} s the "
        f"first time (the parts of the course it needs built), {again['seconds']:.1f} s after an "
        f"edit ({again['commit']}). `tools/lab-test 04` runs its tests alone.",
    ]
    return "\n".join(lines) + "\n"
