#!/usr/bin/env bash
# tools/lab-test's verdicts (ctest tools.lab_test, label cpu), without a GPU or a build: a build
# folder holding only a course-manifest.json, a stand-in checker and a stand-in cmake on PATH.
# Cases: a lab that does not compile stops with the compiler's error line and exit 1, and its
# checker never runs (it would test the library built before); a run whose every test skipped
# for want of a GPU exits 77 and says that nothing was verified and where to get a GPU; a run
# with a passing test exits 0; --no-build runs without building.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
source "$here/tools/maint/test_helpers.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
build=$work/build
mkdir -p "$build" "$work/fake"
# The manifest's shape as cmake/CourseManifest writes it, for lab 04's sum only.
cat >"$build/course-manifest.json" <<EOF
{"source_dir": "$here",
 "trees": {"labs": [{"lab": "04_sequential", "op": "sum", "library": "$build/lib04.so"}]},
 "checkers": {"public": "$work/checker"},
 "operations": {"sum": {"entry": "sum", "public_filter": "Sum*"}}}
EOF

# The stand-in cmake: its build fails with a compiler's error line when $work/broken exists.
cat >"$work/fake/cmake" <<EOF
#!/usr/bin/env bash
echo "cmake \$*" >>"$work/cmake.calls"
if [ -e "$work/broken" ]; then
  echo "$here/labs/04_sequential/sum.cu(12): error: expected a \";\""
  exit 1
fi
echo "[1/1] Linking CUDA shared library lib04.so"
EOF
# The stand-in checker: prints what $work/checker.out holds and records that it ran.
cat >"$work/checker" <<EOF
#!/usr/bin/env bash
echo ran >>"$work/checker.calls"
cat "$work/checker.out"
EOF
chmod +x "$work/fake/cmake" "$work/checker"

# Runs tools/lab-test 04 with $@ after it; output in $work/out, exit status in $status.
run() {
  rm -f "$work/cmake.calls" "$work/checker.calls"
  set +e
  PATH="$work/fake:$PATH" "$here/tools/lab-test" 04 -B "$build" "$@" >"$work/out" 2>&1
  status=$?
  set -e
}

skipped='[ RUN      ] SumExact/0
[  SKIPPED ] SumExact/0: [checker] no CUDA device
[  PASSED  ] 0 tests.
[  SKIPPED ] 1 test'
passed='[ RUN      ] SumExact/0
[       OK ] SumExact/0 (3 ms)
[  PASSED  ] 1 test.'

touch "$work/broken"
printf '%s\n' "$passed" >"$work/checker.out"
run
[ "$status" -eq 1 ] || fail "a lab that does not compile: exit $status, expected 1"
expect "a lab that does not compile" "sum.cu(12): error: expected a"
expect "a lab that does not compile" "labs/04_sequential does not build"
expect "a lab that does not compile" "no test ran"
[ ! -e "$work/checker.calls" ] || fail "a lab that does not compile: the old library was tested"
grep -q -- "--target labs_04_sequential_sum" "$work/cmake.calls" 2>/dev/null ||
  fail "a lab that does not compile: the lab's library was not built"

rm "$work/broken"
printf '%s\n' "$skipped" >"$work/checker.out"
run
[ "$status" -eq 77 ] || fail "no GPU: exit $status, expected 77"
expect "no GPU" "nothing was verified"
expect "no GPU" "Where to get a GPU"

printf '%s\n' "$passed" >"$work/checker.out"
run
[ "$status" -eq 0 ] || fail "a passing test: exit $status, expected 0"
[ -e "$work/checker.calls" ] || fail "a passing test: the checker did not run"

touch "$work/broken"
run --no-build
[ "$status" -eq 0 ] || fail "--no-build: exit $status, expected 0"
[ ! -e "$work/cmake.calls" ] || fail "--no-build: built all the same"

finish "tools/lab-test: a lab that does not compile, no GPU, a pass and --no-build as expected"
