#!/usr/bin/env bash
# Prepares what the Colab notebook's headless run needs on a GPU host without network or package
# registry (Python 3.12, nvcc, CMake, GoogleTest and Google Benchmark there; no CLI11,
# nlohmann-json, toml++ or fmt; no Jupyter), in one folder to carry there:
#   FOLDER/archives  the grader libraries' pinned archives (tools/maint/dependency_archives.sh;
#                    GIT_MIRRORS where github.com cannot be reached)
#   FOLDER/wheels    nbclient, nbformat and ipykernel with everything they need, as wheels for
#                    CPython 3.12 on x86-64 Linux (pip download, from PyPI)
# Then it prints the command to run there, from the repository's root, with FOLDER carried.
#
#   tools/maint/notebook_carry.sh [FOLDER]     (default build-colab: ignored by git)
#   env PYTHON_VERSION (default 3.12), FINISHED (1, the default: lab 04's reference solution is
#   copied into labs/ there first, so that the notebook's lab passes its tests and is graded as
#   the solution; 0: the untouched stub, a student's first run), DEADLINE_S
#   (NOTEBOOK_DEADLINE_S there, default 470)
# Exit status: 0 ready, 1 something could not be had.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
folder=${1:-build-colab}
py=${PYTHON_VERSION:-3.12}
tools/maint/dependency_archives.sh "$folder/archives" || exit 1
mkdir -p "$folder/wheels"
platforms=()
for p in manylinux_2_28 manylinux_2_27 manylinux_2_17 manylinux2014 manylinux1; do
  platforms+=(--platform "${p}_x86_64")
done
python3 -m pip download -q --only-binary=:all: --python-version "$py" --implementation cp \
  "${platforms[@]}" -d "$folder/wheels" nbclient nbformat ipykernel ||
  { echo "notebook_carry: pip could not download the wheels" >&2; exit 1; }
echo "notebook_carry: $folder holds $(du -sh "$folder" | cut -f1): $(ls "$folder/archives" | wc -l)" \
  "archives, $(ls "$folder/wheels" | wc -l) wheels"
finish=""
[ "${FINISHED:-1}" != 1 ] || finish="cp solutions/04_sequential/sum.cu labs/04_sequential/; "
cat <<EOF
The command, from the repository's root, with $folder carried (its output in \$OUT/colab/):
export PYTHONUNBUFFERED=1 PIP_RETRIES=0 PIP_TIMEOUT=3 NOTEBOOK_DEADLINE_S=${DEADLINE_S:-470} \
REDUCE_DEPENDENCY_ARCHIVES=\$PWD/$folder/archives; python3 -m pip install -q --no-index \
--no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $folder/wheels/*.whl && \
export PYTHONPATH=/tmp/site; ${finish}tools/maint/run_notebook.sh \$OUT/colab; echo "run_notebook exit \$?"
EOF
