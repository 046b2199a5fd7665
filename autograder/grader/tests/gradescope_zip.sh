#!/usr/bin/env bash
# The Gradescope autograder zip end to end, without a GPU (ctest grader.gradescope_zip):
# `reduce-grade gradescope` zips the course's HEAD with lab 04 chosen, the zip is unpacked into a
# folder laid out as Gradescope lays out /autograder (source/, submission/, results/), setup.sh
# runs without its package installs and with this build's grader, and run_autograder grades
# three uploads with --no-gpu: the solution of lab 04 (1 build point), the untouched stub (0,
# "not implemented") and a lab that does not compile (0, the compiler's error), plus a grading
# problem (a bad option: exit 2 and a 0-point results.json that says so).
#
#   gradescope_zip.sh REDUCE_GRADE COURSE_ROOT WORK_DIR
#
# Exit code: 0 passed, 1 failed, 77 skipped (the course is not a git checkout, or no nvcc).
set -euo pipefail
grader=$(realpath "$1") course=$(realpath "$2") work=$3
export PATH=/usr/local/cuda/bin:$PATH
git -C "$course" rev-parse --verify -q HEAD >/dev/null ||
  { echo "SKIP: $course is not a git checkout (the zip is made from a commit)"; exit 77; }
command -v nvcc >/dev/null || { echo "SKIP: no nvcc (the labs are CUDA code)"; exit 77; }

fail() { echo "FAILED: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
work=$(realpath "$work")
root=$work/autograder
"$grader" --root "$course" gradescope "$work/autograder.zip" --labs 04 ||
  fail "reduce-grade gradescope exited with $?"

# Gradescope unpacks the zip into /autograder/source and copies run_autograder beside it.
mkdir -p "$root/source" "$root/submission" "$root/results"
if command -v unzip >/dev/null; then
  unzip -q "$work/autograder.zip" -d "$root/source"
else
  python3 -m zipfile -e "$work/autograder.zip" "$root/source"
  chmod +x "$root/source/setup.sh" "$root/source/run_autograder"
fi
for f in setup.sh run_autograder CMakeLists.txt README.md docs/CMakeLists.txt \
  autograder/hidden/sum_hidden_test.cu autograder/rubric.toml labs/04_sequential/sum.cu; do
  [ -f "$root/source/$f" ] || fail "the zip has no $f"
done
[ -x "$root/source/run_autograder" ] || fail "run_autograder is not executable in the zip"
[ "$(cat "$root/source/autograder/gradescope/labs")" = 04_sequential ] ||
  fail "autograder/gradescope/labs is not 04_sequential"
left=$(cd "$root/source" && find . \( -name solutions -o -name planted -o -name '__pycache__' \
  -o -name '*.pyc' -o -name 'build' -o -name 'build-*' -o -name .git \) -print | head -5)
[ -z "$left" ] || fail "the zip holds what it must not: $left"

AUTOGRADER_ROOT=$root REDUCE_SETUP_SKIP_PACKAGES=1 REDUCE_GRADER_PREBUILT=$grader \
  bash "$root/source/setup.sh" >"$work/setup.log" 2>&1 || fail "setup.sh failed: $(tail -5 "$work/setup.log")"
cp "$root/source/run_autograder" "$root/run_autograder"

# grade NAME EXPECTED_EXIT_CODE EXPECTED_SCORE TEXT [REDUCE_GRADE_ARGS]: run_autograder on what
# submission/ holds; checks its exit code, and that results.json is JSON with that score and
# TEXT in its output or a test's.
grade() {
  local name=$1 want_rc=$2 want_score=$3 text=$4 extra=${5:---no-gpu} rc=0
  rm -rf "$root/results" && mkdir -p "$root/results"
  AUTOGRADER_ROOT=$root REDUCE_GRADE_ARGS=$extra "$root/run_autograder" >"$work/$name.log" 2>&1 ||
    rc=$?
  cp "$root/results/results.json" "$work/$name.results.json" 2>/dev/null ||
    fail "$name: no results.json (log: $work/$name.log)"
  [ "$rc" -eq "$want_rc" ] || fail "$name: run_autograder exited $rc, not $want_rc"
  python3 - "$work/$name.results.json" "$want_score" "$text" <<'PY' || fail "$name: results.json"
import json, sys
path, want, text = sys.argv[1], float(sys.argv[2]), sys.argv[3]
r = json.load(open(path))
said = r.get("output", "") + "".join(t.get("output", "") for t in r.get("tests", []))
if abs(float(r["score"]) - want) > 1e-9:
    sys.exit(f"{path}: score {r['score']}, expected {want}")
if text.lower() not in said.lower():
    sys.exit(f"{path}: no '{text}' in its output")
# The upload is named as Gradescope names it, never by a temporary copy or build folder.
for temporary in ("/tmp/submission.", "/staging/", "/reduce-grade-"):
    if temporary in said:
        sys.exit(f"{path}: a temporary path ({temporary}) in its output")
PY
  echo "$name: exit $rc, score $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["score"])' "$work/$name.results.json")"
}

# Uploads as students make them: the lab folder alone, a labs/ folder, a whole repository.
rm -rf "$root/submission" && mkdir -p "$root/submission"
cp -r "$course/solutions/04_sequential" "$root/submission/"
grade correct 0 1 "builds and links"

rm -rf "$root/submission" && mkdir -p "$root/submission/labs"
cp -r "$course/labs/04_sequential" "$root/submission/labs/"
grade stub 0 0 "not implemented"

rm -rf "$root/submission" && mkdir -p "$root/submission/reduce-course/labs"
cp -r "$course/labs/04_sequential" "$root/submission/reduce-course/labs/"
printf 'this is not C++ {\n' >>"$root/submission/reduce-course/labs/04_sequential/sum.cu"
grade broken 0 0 "does not compile"

grade grading_problem 2 0 "could not grade" "--no-gpu --no-such-option"
echo "0 failed: the Gradescope zip graded 4 uploads as expected (results in $work)"
