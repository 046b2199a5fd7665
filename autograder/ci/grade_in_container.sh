#!/usr/bin/env bash
# Grades one student's repository in a throw-away container: the script of the `students` job
# of autograder/ci/grade.yml, which runs it in an NVIDIA CUDA container on the GPU runner. It
# runs the same anywhere (without a GPU: --no-gpu, build points only).
#
#   grade_in_container.sh COURSE SUBMISSION OUT [reduce-grade grade options...]
#
#   COURSE      the course (the instructor's repository, checked out)
#   SUBMISSION  the student's repository (a copy of the student release), or a labs/ folder
#   OUT         the report folder (summary.txt, report.json, junit.xml, results.json)
#
# What the student's code can reach: grading compiles and runs it in this container, so the
# script grades against a private copy of the course that holds only what grading reads, never
# solutions/, the planted corpus or .git (whose objects hold the solutions too), and it deletes
# those from COURSE as well when REDUCE_CI_SCRUB_COURSE=1 (the workflow sets it: its checkout
# is inside the container). The grader runs the student's code in bubblewrap where it works
# (the workflow installs it), with the course hidden.
#
# Environment: REDUCE_GRADER, a reduce-grade binary to use instead of building the grader from
# COURSE; SUBMISSION_NAME, the name the reports give the
# submission (default: SUBMISSION).
#
# Exit code: reduce-grade's (0 graded, 1 below --pass-mark, 2 configuration error, 3 no GPU:
# build points only, 4 internal error).
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,24p' "$0" >&2
  exit 2
fi
course=$(realpath "$1") submission=$(realpath "$2") out=$3
shift 3
export PATH=/usr/local/cuda/bin:$PATH

# The private copy: tracked files and untracked ones alike (a CI checkout has no others), less
# what grading never reads.
work=$(mktemp -d "${TMPDIR:-/tmp}/reduce-ci.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/course"
tar -C "$course" --exclude=./solutions --exclude=./autograder/planted --exclude=./.git \
  --exclude='./build*' --exclude='__pycache__' --exclude='*.pyc' -cf - . |
  tar -C "$work/course" -xf -
if [ "${REDUCE_CI_SCRUB_COURSE:-0}" = 1 ]; then
  rm -rf "$course/solutions" "$course/autograder/planted" "$course/.git"
fi

grader=${REDUCE_GRADER:-}
if [ -z "$grader" ]; then
  echo "grade_in_container: building the grader"
  build=$work/grader-build
  if ! { cmake -S "$work/course/autograder/grader" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release &&
    cmake --build "$build" --target reduce-grade; } >"$work/grader-build.log" 2>&1; then
    tail -30 "$work/grader-build.log" >&2
    exit 4
  fi
  grader=$build/reduce-grade
fi

rc=0
"$grader" --root "$work/course" grade "$submission" --out "$out" \
  --submission-name "${SUBMISSION_NAME:-$2}" "$@" || rc=$?
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$out/summary.txt" ]; then
  { echo '```'; cat "$out/summary.txt"; echo '```'; } >>"$GITHUB_STEP_SUMMARY"
fi
echo "grade_in_container: reduce-grade exited with $rc"
exit "$rc"
