#!/usr/bin/env bash
# Runs the Colab notebook (notebooks/colab.ipynb) headless against a checkout on this machine, as
# a student's Colab runtime would run it after Runtime > Run all, and writes what it did to OUT_DIR.
#
#   tools/maint/run_notebook.sh OUT_DIR [--nbclient | --script]
#
#   COURSE_DIR: the checkout the notebook uses instead of cloning (default: this repository). The
#     notebook builds in it as a student would: build-student/, build-grader/, grade-out/.
#   NOTEBOOK: the notebook to run (default: notebooks/colab.ipynb of this repository).
#   --nbclient: in a Jupyter kernel (pip install nbclient nbformat ipykernel), the same run as
#     jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=1800; writes
#     OUT_DIR/colab.ipynb with its outputs. The default where those packages import.
#   --script: without Jupyter (a GPU host without pip): the code cells become OUT_DIR/colab.py,
#     `!cmd` lines subprocess calls of bash, and that script runs. The default elsewhere.
#   Either way the output is also in OUT_DIR/colab.log.
#   NOTEBOOK_DEADLINE_S: the run stops then, keeping what ran (the log; with --nbclient the
#     notebook with its outputs so far): for a machine whose commands have a time limit.
#
# Exit status: 0 every cell ran; 77 the GPU check stopped the notebook (no GPU here: it said so
# and ran nothing more); 1 another cell failed or stopped it; 124 NOTEBOOK_DEADLINE_S passed;
# 2 usage.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out="" mode=""
while [ $# -gt 0 ]; do
  case $1 in
    --nbclient) mode=nbclient; shift ;;
    --script) mode=script; shift ;;
    -h|--help) sed -n '2,21p' "$0" | cut -c3-; exit 0 ;;
    -*) echo "run_notebook: unknown option $1" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "run_notebook: one OUT_DIR only" >&2; exit 2; }; out=$1; shift ;;
  esac
done
[ -n "$out" ] || { sed -n '2,21p' "$0" | cut -c3- >&2; exit 2; }
notebook=${NOTEBOOK:-$root/notebooks/colab.ipynb}
[ -f "$notebook" ] || { echo "run_notebook: no notebook $notebook" >&2; exit 2; }
notebook=$(cd "$(dirname "$notebook")" && pwd)/$(basename "$notebook")
[ -f "${COURSE_DIR:-$root}/tools/setup" ] ||
  { echo "run_notebook: ${COURSE_DIR:-$root} is not the course" >&2; exit 2; }
COURSE_DIR=$(cd "${COURSE_DIR:-$root}" && pwd)
export COURSE_DIR
if [ -z "$mode" ]; then
  mode=script
  if python3 -c "import nbclient, nbformat, ipykernel" 2>/dev/null; then mode=nbclient; fi
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
echo "run_notebook: $notebook ($mode) against COURSE_DIR=$COURSE_DIR; output in $out"
set +e
(cd "$COURSE_DIR" && python3 -u "$here/notebook_exec.py" "$mode" "$notebook" "$out") 2>&1 |
  tee "$out/colab.log"
status=${PIPESTATUS[0]}
set -e
case $status in
  0) echo "run_notebook: every cell ran" ;;
  77) echo "run_notebook: the GPU check stopped the notebook (no GPU here); nothing else ran" ;;
  124) echo "run_notebook: stopped at NOTEBOOK_DEADLINE_S=${NOTEBOOK_DEADLINE_S:-}; what ran is in $out" ;;
  *) echo "run_notebook: a cell failed (exit status $status): $out/colab.log says which" ;;
esac
exit "$status"
