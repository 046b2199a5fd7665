#!/usr/bin/env python3
"""Runs a notebook's code cells headless, with nbclient or as a plain Python script.

  tools/maint/notebook_exec.py nbclient NOTEBOOK OUT_DIR   (needs nbclient, nbformat, ipykernel)
  tools/maint/notebook_exec.py script NOTEBOOK OUT_DIR     (standard library only)

nbclient: executes the notebook in a Jupyter kernel, as `jupyter nbconvert --to notebook --execute
--ExecutePreprocessor.timeout=1800` does, but writes OUT_DIR/<name>.ipynb also when a cell stops
the run (nbconvert writes nothing then), and prints every cell's output.

script: for a machine without Jupyter. The code cells become OUT_DIR/<name>.py: a line `!cmd`
becomes a call of bash with the command (its `{name}` parts filled from the cell's variables, as
IPython does) whose exit status lands in `_exit_code`, as IPython sets it; a `%%bash` cell runs
with bash and fails on a non-zero status, as IPython 8's does; any other magic is refused.

NOTEBOOK_DEADLINE_S (environment, seconds): the whole run stops then, with what ran so far kept:
the log, and in nbclient mode the notebook with the outputs of its cells up to the one that was
running (a machine whose commands have a time limit gets them back).

Exit status (tools/maint/run_notebook.sh passes it on): 0 every cell ran; 77 the cell tagged
`gpu-check` stopped the run (no GPU: the notebook said so and ran nothing more); 1 another cell
failed or stopped it; 124 NOTEBOOK_DEADLINE_S passed; 2 usage, or a notebook that cannot be
converted.
"""
import json
import os
import pathlib
import re
import signal
import sys

STOPPED_NO_GPU = 77
PAST_DEADLINE = 124


class Deadline(BaseException):
    """NOTEBOOK_DEADLINE_S has passed (a BaseException: no cell's or library's handler keeps it)."""


def deadline_s():
    """NOTEBOOK_DEADLINE_S as a number of seconds, None where it is unset or 0."""
    value = os.environ.get("NOTEBOOK_DEADLINE_S", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None

# The script's own part: runs each converted cell in one namespace, as a kernel would.
PRELUDE = r'''
import subprocess
import sys
import traceback


def _sh(cmd):
    """A `!cmd` line: bash runs it; its exit status is returned (IPython's _exit_code)."""
    print("!" + cmd, flush=True)
    return subprocess.run(["bash", "-c", cmd]).returncode


def _bash_cell(body):
    """A `%%bash` cell: bash runs it; a non-zero status fails the cell (IPython 8)."""
    status = subprocess.run(["bash", "-c", body]).returncode
    if status != 0:
        raise subprocess.CalledProcessError(status, "%%bash cell")
    return status


def _run(cells):
    """Runs the cells in order in one namespace; the exit status of notebook_exec.py."""
    ns = {"__name__": "__main__", "_sh": _sh, "_bash_cell": _bash_cell, "_exit_code": 0}
    for number, tags, source in cells:
        print(f"--- cell {number}", flush=True)
        try:
            exec(compile(source, f"<cell {number}>", "exec"), ns)
        except SystemExit as stop:
            print(f"notebook: cell {number} stopped the run: {stop}", flush=True)
            return 77 if "gpu-check" in tags else 1
        except BaseException:
            traceback.print_exc()
            print(f"notebook: cell {number} failed", flush=True)
            return 1
        sys.stdout.flush()
    print("notebook: every cell ran", flush=True)
    return 0
'''


class ConversionError(Exception):
    """A cell that the plain script cannot run as the kernel would."""


def code_cells(nb):
    """(number counted from 1 over all cells, tags, source) of each code cell."""
    cells = []
    for number, cell in enumerate(nb.get("cells", []), start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        cells.append((number, cell.get("metadata", {}).get("tags", []), source))
    return cells


def shell_line(command):
    """The Python for `!command`: an f-string, so that `{name}` takes the variable's value."""
    for expr in re.findall(r"\{([^{}]*)\}", command):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z_0-9.]*", expr.strip()):
            raise ConversionError(f"!{command}: only {{name}} is filled in, not {{{expr}}}")
    if re.sub(r"\{[^{}]*\}", "", command).count("{") or "}" in re.sub(r"\{[^{}]*\}", "",
                                                                        command):
        raise ConversionError(f"!{command}: a brace that is not {{name}}")
    if "$" in command:
        raise ConversionError(f"!{command}: IPython fills $name from Python: write {{name}}")
    return "_exit_code = _sh(f" + repr(command) + ")"


def convert_cell(source):
    """A code cell's source as plain Python."""
    lines = source.splitlines()
    if lines and lines[0].strip().startswith("%%"):
        if lines[0].strip() != "%%bash":
            raise ConversionError(f"cell magic {lines[0].strip()} is not supported")
        return "_exit_code = _bash_cell(" + repr("\n".join(lines[1:]) + "\n") + ")\n"
    out = []
    for line in lines:
        m = re.match(r"^(\s*)([!%])(.*)$", line)
        if m and m.group(2) == "%":
            raise ConversionError(f"line magic {line.strip()} is not supported")
        out.append(m.group(1) + shell_line(m.group(3)) if m else line)
    return "\n".join(out) + "\n"


def to_script(nb):
    """The whole notebook as one Python script that runs its code cells in order."""
    parts = []
    for number, tags, source in code_cells(nb):
        lines = "".join(f"        {line!r}\n" for line in convert_cell(source).splitlines(True))
        parts.append(f"    ({number}, {tags!r}, (\n{lines}    )),\n")
    return ("#!/usr/bin/env python3\n\"\"\"The code cells of a notebook, as "
            "tools/maint/notebook_exec.py wrote them.\"\"\"\n" + PRELUDE +
            "\n\nCELLS = [\n" + "".join(parts) + "]\n\nsys.exit(_run(CELLS))\n")


def run_script(notebook, out_dir):
    """Converts the notebook to out_dir/<name>.py and runs it; its exit status."""
    import subprocess
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    try:
        script = to_script(nb)
    except ConversionError as e:
        print(f"notebook_exec: {notebook}: {e}", file=sys.stderr)
        return 2
    path = out_dir / (notebook.stem + ".py")
    path.write_text(script, encoding="utf-8")
    print(f"notebook_exec: running {path} (the code cells of {notebook})", flush=True)
    # A session of its own: at the deadline its shell commands (a build) end with it.
    child = subprocess.Popen([sys.executable, "-u", str(path)], start_new_session=True)
    try:
        return child.wait(timeout=deadline_s())
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        print(f"notebook: stopped at NOTEBOOK_DEADLINE_S={deadline_s()}: the cell that was "
              "running and those after it did not finish", flush=True)
        return PAST_DEADLINE


def print_outputs(cell):
    """A code cell's outputs as text, for a log."""
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            print(out.get("text", ""), end="")
        elif out.get("output_type") == "error":
            print(f"{out.get('ename')}: {out.get('evalue')}")
        elif "text/plain" in out.get("data", {}):
            print(out["data"]["text/plain"])


def stop_status(nb):
    """Why the run stopped: 77 for the gpu-check cell's SystemExit, else 1."""
    for number, cell in enumerate(nb.cells, start=1):
        for out in cell.get("outputs", []):
            if out.get("output_type") != "error":
                continue
            tags = cell.get("metadata", {}).get("tags", [])
            print(f"notebook: cell {number} stopped the run: {out.get('ename')}: "
                  f"{out.get('evalue')}")
            gpu_stop = out.get("ename") == "SystemExit" and "gpu-check" in tags
            return STOPPED_NO_GPU if gpu_stop else 1
    return 1


def run_nbclient(notebook, out_dir, timeout=1800):
    """Executes the notebook in a kernel; writes it to out_dir; its exit status."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    nb = nbformat.read(str(notebook), as_version=4)

    shown = set()

    def show(cell, cell_index, **_):
        """Prints each cell's outputs once it has run: the log grows as the notebook runs."""
        shown.add(cell_index)
        print(f"--- cell {cell_index + 1}")
        print_outputs(cell)
        sys.stdout.flush()

    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", on_cell_executed=show,
                            resources={"metadata": {"path": str(pathlib.Path.cwd())}})
    def stop(*_):
        """SIGALRM at the deadline."""
        raise Deadline()

    limit = deadline_s()
    if limit:
        signal.signal(signal.SIGALRM, stop)
        signal.alarm(limit)
    try:
        client.execute()
        status = 0
        print("notebook: every cell ran")
    except CellExecutionError:
        status = stop_status(nb)
    except Deadline:
        status = PAST_DEADLINE
        for index, cell in enumerate(nb.cells):  # the cell that was running, as far as it got
            if index not in shown and cell.get("outputs"):
                print(f"--- cell {index + 1} (stopped)")
                print_outputs(cell)
        print(f"notebook: stopped at NOTEBOOK_DEADLINE_S={limit}: the notebook keeps the outputs "
              "so far, of the cell that was running too")
    signal.alarm(0)
    out = out_dir / notebook.name
    nbformat.write(nb, str(out))
    print(f"notebook_exec: the executed notebook: {out}")
    return status


def main(argv):
    """Parses the command line and runs the notebook."""
    if len(argv) != 4 or argv[1] not in ("nbclient", "script"):
        print(__doc__, file=sys.stderr)
        return 2
    notebook, out_dir = pathlib.Path(argv[2]).resolve(), pathlib.Path(argv[3])
    out_dir.mkdir(parents=True, exist_ok=True)
    if argv[1] == "nbclient":
        return run_nbclient(notebook, out_dir)
    return run_script(notebook, out_dir)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
