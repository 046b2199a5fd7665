#!/usr/bin/env python3
"""Fails when the Colab notebook (notebooks/colab.ipynb) could mislead a student.

  tools/maint/check_notebook.py [ROOT]      (default: the repository holding this script)

1. It is valid nbformat 4 JSON with no outputs or execution counts committed.
2. Its first code cell is the GPU check (tag `gpu-check`): it names "Runtime > Change runtime type
   > T4 GPU" and stops the run with SystemExit, so that no later cell runs without a GPU.
3. Every shell command of a code cell (`!` lines, `%%bash` cells) that names a course tool
   (tools/...) names a file that exists, and each of its options is one that the tool's source
   (its help text) spells; tools/grade passes its options to reduce-grade, whose command line is
   autograder/grader/cli/main.cpp. `cmake --preset NAME` names a preset of CMakePresets.json.
4. README.md's "Open in Colab" link, in its section "Where to get a GPU", opens this notebook's
   path, in the repository and branch of the notebook's REPO_URL and BRANCH; so does the student
   release's README (autograder/release/README.md), in its section "No GPU? Run it on Google
   Colab".
5. tools/maint/notebook_exec.py can turn the code cells into a plain script that compiles (the
   way tools/maint/run_notebook.sh runs the notebook on a machine without Jupyter).
Before the notebook, the checker runs itself on small made-up notebooks that break each rule,
and fails if it misses one.

Exit status 0 when everything holds, 1 otherwise (each problem printed with its cell).
Standard library only.
"""
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import notebook_exec  # noqa: E402

NOTEBOOK = "notebooks/colab.ipynb"
# (README, the section that holds its Colab link): the course's, and the student release's.
COURSE_README = ("README.md", "Where to get a GPU")
RELEASE_README = ("autograder/release/README.md", "No GPU? Run it on Google Colab")
GPU_MESSAGE = "Runtime > Change runtime type > T4 GPU"
# Tools that pass their options on: the source that spells those options.
PASSES_ON = {"tools/grade": ["autograder/grader/cli/main.cpp"]}
SEPARATORS = {"&&", "||", ";", "|"}
BADGE = re.compile(r"https://colab\.research\.google\.com/github/([^/\s)]+)/([^/\s)]+)/blob/"
                   r"([^/\s)]+)/([^\s)#?]+)")


def source_of(cell):
    """A cell's source as one string (nbformat allows a list of lines)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def structure_problems(nb):
    """Rule 1: nbformat 4, every cell well formed, nothing executed committed."""
    if not isinstance(nb, dict) or nb.get("nbformat") != 4:
        return ["not an nbformat 4 notebook (nbformat must be 4)"]
    problems = []
    if not isinstance(nb.get("nbformat_minor"), int) or not isinstance(nb.get("metadata"), dict):
        problems.append("nbformat_minor (an integer) or metadata (an object) missing")
    cells = nb.get("cells")
    if not isinstance(cells, list) or not cells:
        return problems + ["no cells"]
    for number, cell in enumerate(cells, start=1):
        kind = cell.get("cell_type")
        if kind not in ("code", "markdown", "raw"):
            problems.append(f"cell {number}: cell_type {kind!r}")
        if not isinstance(cell.get("source"), (str, list)) or not isinstance(
                cell.get("metadata"), dict):
            problems.append(f"cell {number}: source or metadata missing")
        if kind == "code" and (cell.get("outputs") != [] or cell.get("execution_count")
                               is not None):
            problems.append(f"cell {number}: outputs or an execution count committed "
                            "(clear them: Edit > Clear all outputs)")
    return problems


def gpu_check_problems(nb):
    """Rule 2: the first code cell is the GPU check, and it stops the run."""
    code = [c for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    if not code:
        return ["no code cell"]
    first = code[0]
    problems = []
    if "gpu-check" not in first.get("metadata", {}).get("tags", []):
        problems.append("the first code cell is not tagged gpu-check")
    text = source_of(first)
    if GPU_MESSAGE not in text or "raise SystemExit" not in text:
        problems.append(f"the first code cell must say '{GPU_MESSAGE}' and raise SystemExit")
    return problems


def shell_commands(nb):
    """(cell number, command) of each `!` line and each line of a `%%bash` cell."""
    found = []
    for number, cell in enumerate(nb.get("cells", []), start=1):
        if cell.get("cell_type") != "code":
            continue
        lines = source_of(cell).splitlines()
        if lines and lines[0].strip() == "%%bash":
            found += [(number, line) for line in lines[1:] if line.strip()]
            continue
        found += [(number, line.strip()[1:]) for line in lines if line.strip().startswith("!")]
    return found


def words_of(command):
    """The command's words, {name} parts as a placeholder word; None where it does not parse."""
    try:
        return shlex.split(re.sub(r"\{[^{}]*\}", "VALUE", command), comments=True)
    except ValueError:
        return None


def spelled(flag, texts):
    """Whether one of the texts spells the option flag (as a whole word)."""
    pattern = re.compile(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])")
    return any(pattern.search(text) for text in texts)


def tool_problems(root, words):
    """Rule 3 for one command's words: its tools exist and spell its options."""
    problems = []
    for i, word in enumerate(words):
        if not word.startswith(("tools/", "./tools/")):
            continue
        tool = word[2:] if word.startswith("./") else word
        if not (root / tool).is_file():
            problems.append(f"{tool}: no such file")
            continue
        texts = [(root / p).read_text(errors="replace")
                 for p in [tool] + PASSES_ON.get(tool, []) if (root / p).is_file()]
        for arg in words[i + 1:]:
            if arg == "--" or arg in SEPARATORS:
                break  # what follows goes to another program
            flag = arg.split("=", 1)[0]
            if flag.startswith("-") and not spelled(flag, texts):
                problems.append(f"{tool}: option {flag} is not in its help or source")
    return problems


def preset_problems(root, words):
    """Rule 3 for cmake: `--preset NAME` names a preset of CMakePresets.json."""
    if not words or words[0] != "cmake" or "--preset" not in words:
        return []
    name = words[words.index("--preset") + 1] if words[-1] != "--preset" else ""
    kind = "buildPresets" if "--build" in words else "configurePresets"
    try:
        presets = json.loads((root / "CMakePresets.json").read_text())
    except (OSError, ValueError):
        return ["CMakePresets.json: missing or not JSON"]
    names = [p.get("name") for p in presets.get(kind, [])]
    return [] if name in names else [f"cmake: no {kind} entry named {name!r}"]


def command_problems(root, nb):
    """Rule 3 over every shell command of the notebook."""
    problems = []
    for number, command in shell_commands(nb):
        words = words_of(command)
        if words is None:
            problems.append(f"cell {number}: !{command}: does not parse as shell words")
            continue
        for part in split_commands(words):
            for p in tool_problems(root, part) + preset_problems(root, part):
                problems.append(f"cell {number}: !{command}: {p}")
    return problems


def split_commands(words):
    """The words of each command of a line (split at &&, ||, ; and |)."""
    parts, part = [], []
    for word in words:
        if word in SEPARATORS:
            parts.append(part)
            part = []
        else:
            part.append(word)
    return parts + [part]


def repository_of(nb):
    """(owner, repository, branch) from the notebook's REPO_URL and BRANCH, or None."""
    text = "".join(source_of(c) for c in nb.get("cells", []) if c.get("cell_type") == "code")
    url = re.search(r'^REPO_URL = "https://github\.com/([^/"]+)/([^/"]+?)(?:\.git)?"', text, re.M)
    branch = re.search(r'^BRANCH = "([^"]+)"', text, re.M)
    return (url[1], url[2], branch[1]) if url and branch else None


def badge_problems(readme_text, nb, notebook_path, readme=COURSE_README):
    """Rule 4: a README's Colab link, in its section readme[1], opens this notebook."""
    name, title = readme
    section = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", readme_text, re.M | re.S)
    if not section:
        return [f"{name}: no section '## {title}'"]
    links = BADGE.findall(section[1])
    if not links:
        return [f"{name}: no Colab link (colab.research.google.com/github/...) in '{title}'"]
    problems = []
    repo = repository_of(nb)
    if repo is None:
        problems.append("the notebook has no REPO_URL = \"https://github.com/...\" or BRANCH")
    for owner, repository, branch, path in links:
        if path != notebook_path:
            problems.append(f"{name}: the Colab link opens {path}, not {notebook_path}")
        if repo and (owner, repository, branch) != repo:
            problems.append(f"{name}: the Colab link's {owner}/{repository}@{branch} differs from "
                            f"the notebook's REPO_URL and BRANCH ({repo[0]}/{repo[1]}@{repo[2]})")
    return problems


def conversion_problems(nb):
    """Rule 5: the plain script of the code cells converts and compiles."""
    try:
        compile(notebook_exec.to_script(nb), "<notebook script>", "exec")
        for number, _, source in notebook_exec.code_cells(nb):
            compile(notebook_exec.convert_cell(source), f"<cell {number}>", "exec")
    except (notebook_exec.ConversionError, SyntaxError) as e:
        return [f"the plain script (tools/maint/notebook_exec.py): {e}"]
    return []


def check(root, nb, readme_text, release_text=None):
    """Every problem of the notebook nb in the course at root (and the release README's link)."""
    problems = structure_problems(nb)
    if problems and "nbformat 4" in problems[0]:
        return problems
    if release_text is not None:
        problems += badge_problems(release_text, nb, NOTEBOOK, RELEASE_README)
    return (problems + gpu_check_problems(nb) + command_problems(root, nb) +
            badge_problems(readme_text, nb, NOTEBOOK) + conversion_problems(nb))


def fake_notebook(*cells, url="https://github.com/o/r.git"):
    """A small notebook: a GPU check cell, then the given (kind, source) cells."""
    gpu = (f'print("{GPU_MESSAGE}")\nraise SystemExit("no GPU")\n'
           f'REPO_URL = "{url}"\nBRANCH = "main"\n')
    made = [{"cell_type": "code", "execution_count": None, "metadata": {"tags": ["gpu-check"]},
             "outputs": [], "source": gpu}]
    for kind, source in cells:
        cell = {"cell_type": kind, "metadata": {}, "source": source}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        made.append(cell)
    return {"cells": made, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def fake_course(root):
    """A course of three tools and the presets, for the self-test."""
    (root / "tools").mkdir()
    (root / "autograder/grader/cli").mkdir(parents=True)
    (root / "tools/lab-test").write_text("# tools/lab-test LAB [-B BUILD] [--watch]\n")
    (root / "tools/grade").write_text("#   tools/grade grade path --labs 04,09\n")
    (root / "autograder/grader/cli/main.cpp").write_text('c->add_option("--seed", seed);\n')
    (root / "CMakePresets.json").write_text(json.dumps(
        {"configurePresets": [{"name": "student"}], "buildPresets": [{"name": "student"}]}))


README = ("# c\n## Where to get a GPU\n[![Open In Colab](b.svg)](https://colab.research.google"
          ".com/github/o/r/blob/main/" + NOTEBOOK + ")\n## Without root\n")
GOOD = ("!tools/lab-test {LAB} -B build --watch -- --gtest_filter=x\n"
        "!tools/grade grade labs --labs {LAB} --seed 1 && cmake --build --preset student\n"
        "!cmake --preset student -DX={LAB}\n")
# (what is broken, notebook, README, words of the problem the checker must report)
BROKEN = [
    ("an output", {"outputs": [{"output_type": "stream", "name": "stdout", "text": "x"}]},
     README, "outputs or an execution count"),
    ("an execution count", {"execution_count": 3}, README, "outputs or an execution count"),
    ("a missing tool", "!tools/nothing 04\n", README, "tools/nothing: no such file"),
    ("an unknown option", "!tools/lab-test 04 --fast\n", README, "option --fast"),
    ("an unknown option passed on", "!tools/grade grade labs --speed 2\n", README,
     "option --speed"),
    ("a %%bash cell's option", "%%bash\ntools/lab-test 04 --bogus\n", README, "option --bogus"),
    ("an unknown preset", "!cmake --preset nobody\n", README, "named 'nobody'"),
    ("a $name", "!tools/lab-test $LAB\n", README, "IPython fills $name"),
    ("a line magic", "%cd /tmp\n", README, "line magic %cd"),
    ("a badge to another file", GOOD, README.replace(NOTEBOOK, "other.ipynb"), "opens other"),
    ("a badge elsewhere", GOOD, README.replace("Where to get a GPU", "GPUs"), "no section"),
    ("no badge", GOOD, "## Where to get a GPU\nColab.\n", "no Colab link"),
    ("a badge of another repository", GOOD, README.replace("/o/r/", "/o/s/"), "differs"),
]


def broken_notebook(change):
    """A fake notebook with one rule broken: a code cell's source, or fields of that cell."""
    if isinstance(change, str):
        return fake_notebook(("code", change))
    nb = fake_notebook(("code", GOOD))
    nb["cells"][1].update(change)
    return nb


def run_fake(source, gpu_stops):
    """The exit status and output of a fake notebook run as the plain script."""
    gpu = f'raise SystemExit("{GPU_MESSAGE}")' if gpu_stops else "pass"
    nb = fake_notebook(("code", source))
    nb["cells"][0]["source"] = gpu
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(notebook_exec.to_script(nb))
    r = subprocess.run([sys.executable, f.name], capture_output=True, text=True, timeout=60)
    pathlib.Path(f.name).unlink()
    return r.returncode, r.stdout


def script_failures():
    """The plain script behaves as Colab does: _exit_code, {name}, stops; else what differs."""
    failures = []
    status, out = run_fake('print("after")', gpu_stops=True)
    if status != notebook_exec.STOPPED_NO_GPU or "after" in out:
        failures.append(f"a stop at the GPU check: exit {status}, later cell ran: {'after' in out}")
    status, out = run_fake('N = 3\n!echo value {N}; exit 5\nprint("code", _exit_code)', False)
    if status != 0 or "value 3" not in out or "code 5" not in out:
        failures.append(f"!cmd: exit {status}, output {out!r}")
    status, _ = run_fake("%%bash\nexit 4\n", gpu_stops=False)
    if status != 1:
        failures.append(f"a failing %%bash cell: exit {status}, not 1")
    return failures + deadline_failures()


def deadline_failures():
    """NOTEBOOK_DEADLINE_S stops a run whose shell command outlasts it, the later cells unrun."""
    nb = fake_notebook(("code", "!sleep 30"), ("code", 'print("LATER" + "CELL")'))
    nb["cells"][0]["source"] = "pass"
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "t.ipynb"
        path.write_text(json.dumps(nb), encoding="utf-8")
        env = dict(os.environ, NOTEBOOK_DEADLINE_S="2")
        try:
            r = subprocess.run([sys.executable, str(HERE / "notebook_exec.py"), "script",
                                str(path), tmp], capture_output=True, text=True, timeout=20,
                               env=env)
        except subprocess.TimeoutExpired:
            return ["a run past NOTEBOOK_DEADLINE_S=2 still ran after 20 s"]
    if r.returncode != notebook_exec.PAST_DEADLINE or "LATERCELL" in r.stdout:
        return [f"a run past NOTEBOOK_DEADLINE_S: exit {r.returncode}, later cell ran: "
                f"{'LATERCELL' in r.stdout}"]
    return []


def self_test():
    """The checker on fakes: a good notebook passes, each broken one fails as it should."""
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        fake_course(root)
        good = check(root, fake_notebook(("code", GOOD)), README)
        if good:
            failures.append(f"a good notebook: {good}")
        for what, change, readme, words in BROKEN:
            found = check(root, broken_notebook(change), readme)
            if not any(words in p for p in found):
                failures.append(f"{what}: expected '{words}', got {found}")
        nb3 = dict(fake_notebook(), nbformat=3)
        if not any("nbformat 4" in p for p in check(root, nb3, README)):
            failures.append("an nbformat 3 notebook passed")
        plain = fake_notebook(("code", GOOD))
        plain["cells"][0]["metadata"] = {}
        if not any("gpu-check" in p for p in check(root, plain, README)):
            failures.append("a first code cell without the gpu-check tag passed")
        release = README.replace("Where to get a GPU", RELEASE_README[1])
        good_nb = fake_notebook(("code", GOOD))
        if check(root, good_nb, README, release):
            failures.append(f"a good release README: {check(root, good_nb, README, release)}")
        if not any(p.startswith(RELEASE_README[0] + ": no Colab link")
                   for p in check(root, good_nb, README, f"## {RELEASE_README[1]}\nColab.\n")):
            failures.append("a release README without the Colab link passed")
    return failures + script_failures()


def main(argv):
    """Runs the self-test, then checks the course's notebook."""
    root = pathlib.Path(argv[1] if len(argv) > 1 else pathlib.Path(__file__).parents[2]).resolve()
    failures = self_test()
    for f in failures:
        print(f"check_notebook: self-test: the checker missed or misread {f}")
    if failures:
        return 1
    path = root / NOTEBOOK
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        print(f"{NOTEBOOK}: not readable JSON: {e}")
        return 1
    release = root / RELEASE_README[0]
    problems = check(root, nb, (root / "README.md").read_text(encoding="utf-8"),
                     release.read_text(encoding="utf-8") if release.is_file() else None)
    for p in problems:
        print(f"{NOTEBOOK}: {p}")
    if problems:
        return 1
    print(f"check_notebook: {NOTEBOOK} and the READMEs' Colab links hold "
          f"({len(shell_commands(nb))} shell commands checked; self-test passed)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
