#!/usr/bin/env bash
# The tools' command lines (ctest tools.help, label cpu), offline and without a GPU:
#   tools/maint/test_tool_help.sh [REDUCE_GRADE]
# tools/setup, tools/test, tools/ladder and tools/lab-test answer --help with their usage (no
# line of the script's '#' comments) and exit 0 without running anything: stand-ins for cmake,
# ctest, apt-get, dpkg-query, nvcc and nvidia-smi record any call, and a call fails the case. An
# argument a tool does not take exits 2 and says so; --lab (the grader's --labs) gets a hint.
# tools/grade configures the grader's build only once, then only builds it (a configure took
# 5-10 s of every call). tools/test ends with a summary of what ran and what needs a GPU. With REDUCE_GRADE, the grader's --version is the course's and `grade --lab 04` says "did you
# mean --labs?".
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
source "$here/tools/maint/test_helpers.sh"
grader=${1:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
mkdir -p "$work/fake"
for tool in cmake ctest apt-get dpkg-query nvcc nvidia-smi; do
  printf '#!/usr/bin/env bash\necho "%s $*" >>"%s/called"\nexit 0\n' "$tool" "$work" \
    >"$work/fake/$tool"
  chmod +x "$work/fake/$tool"
done

# Runs $@ with the stand-ins first on PATH; output in $work/out, exit status in $status.
run() {
  rm -f "$work/called"
  set +e
  PATH="$work/fake:$PATH" "$@" >"$work/out" 2>&1
  status=$?
  set -e
}

for tool in setup test ladder lab-test; do
  for flag in --help -h; do
    case_name="tools/$tool $flag"
    run "$here/tools/$tool" "$flag"
    [ "$status" -eq 0 ] || fail "$case_name: exit $status, expected 0"
    [ "$(wc -l <"$work/out")" -ge 3 ] || fail "$case_name: fewer than 3 lines of usage"
    ! grep -q '^#' "$work/out" || fail "$case_name: prints the script's comments, '#' and all"
    ! grep -qE 'pipefail|\(\) \{' "$work/out" || fail "$case_name: prints the script's code"
    [ ! -e "$work/called" ] || fail "$case_name: ran $(tr '\n' ';' <"$work/called")"
  done
  run "$here/tools/$tool" --no-such-option
  [ "$status" -eq 2 ] || fail "tools/$tool --no-such-option: exit $status, expected 2"
  [ ! -e "$work/called" ] || fail "tools/$tool --no-such-option: ran $(cat "$work/called")"
done

run "$here/tools/ladder" -s 2^26 --lab 04
[ "$status" -eq 2 ] || fail "tools/ladder --lab 04: exit $status, expected 2"
expect "tools/ladder --lab 04" "did you mean -r, e.g. -r 4?"
run "$here/tools/lab-test" --lab 04
[ "$status" -eq 2 ] || fail "tools/lab-test --lab 04: exit $status, expected 2"
expect "tools/lab-test --lab 04" "the lab comes alone: tools/lab-test 04"

# tools/grade configures the grader's build only where it has not been configured; a configured
# one is only built (a no-op when current), then reduce-grade gets the arguments.
gbuild=$work/grader-build
mkdir -p "$gbuild/autograder/grader"
printf '#!/usr/bin/env bash\necho "reduce-grade $*"\n' >"$gbuild/autograder/grader/reduce-grade"
chmod +x "$gbuild/autograder/grader/reduce-grade"
run env REDUCE_GRADER_BUILD="$gbuild" "$here/tools/grade" --version
grep -q "^cmake --preset grader -B $gbuild" "$work/called" 2>/dev/null ||
  fail "tools/grade in a new build folder: not configured"
expect "tools/grade --version" "reduce-grade --version"
touch "$gbuild/CMakeCache.txt"
run env REDUCE_GRADER_BUILD="$gbuild" "$here/tools/grade" grade labs --labs 04
! grep -q -- "--preset" "$work/called" || fail "tools/grade in a configured build: configured again"
grep -q "^cmake --build $gbuild --target reduce-grade" "$work/called" ||
  fail "tools/grade in a configured build: reduce-grade not brought up to date"
expect "tools/grade grade labs --labs 04" "reduce-grade grade labs --labs 04 --build-dir build-grading"
# A grading gets the student's own build folder (kept between gradings), unless one is named; no
# other command gets one.
run env REDUCE_GRADER_BUILD="$gbuild" "$here/tools/grade"
expect "tools/grade" "reduce-grade grade --build-dir build-grading"
run env REDUCE_GRADER_BUILD="$gbuild" "$here/tools/grade" grade labs --build-dir=mine
grep -qx "reduce-grade grade labs --build-dir=mine" "$work/out" ||
  fail "tools/grade grade --build-dir=mine: $(cat "$work/out")"
run env REDUCE_GRADER_BUILD="$gbuild" "$here/tools/grade" batch subs
grep -qx "reduce-grade batch subs" "$work/out" || fail "tools/grade batch: $(cat "$work/out")"

# tools/test ends with what ran: a copy of it, a stand-in ctest whose suite has a CPU test that
# passed, two GPU tests and a CPU test that skipped, and no GPU.
mkdir -p "$work/course/tools"
cp "$here/tools/test" "$work/course/tools/test"
cat >"$work/fake/ctest" <<'CTEST'
#!/usr/bin/env bash
case "$*" in
  *--show-only=json-v1*)
    echo '{"tests": [
      {"name": "cpu.Keys", "properties": [{"name": "LABELS", "value": ["cpu"]}]},
      {"name": "labs.04.sum", "properties": [{"name": "LABELS", "value": ["lab04"]}]},
      {"name": "grader.planted", "properties": [{"name": "LABELS", "value": ["gpu-planted"]}]},
      {"name": "grader.class_report", "properties": [{"name": "LABELS", "value": ["cpu", "slow"]}]}]}' ;;
  *)
    printf '%s
' "1/4 Test #1: cpu.Keys ...   Passed    0.01 sec"       "100% tests passed, 0 tests failed out of 4" "" "The following tests did not run:"       "	  2 - labs.04.sum (Skipped)" "	  3 - grader.planted (Skipped)"       "	  4 - grader.class_report (Skipped)" ;;
esac
CTEST
printf '#!/usr/bin/env bash\nexit 9\n' >"$work/fake/nvidia-smi"
chmod +x "$work/fake/ctest" "$work/fake/nvidia-smi"
run "$work/course/tools/test" --quick
[ "$status" -eq 0 ] || fail "tools/test: exit $status, expected 0"
expect "tools/test" ": 1 passed, 0 failed, 3 skipped"
expect "tools/test" "2 skipped need a GPU"
expect "tools/test" "no GPU here, so nothing of the labs' kernels was verified"
expect "tools/test" "1 skipped for want of a tool (grader.class_report)"

if [ -n "$grader" ]; then
  version=$(sed -n 's/^project(reduce_course VERSION \([0-9.]*\).*/\1/p' "$here/CMakeLists.txt")
  run "$grader" --version
  [ "$(cat "$work/out")" = "$version" ] ||
    fail "reduce-grade --version: not the version of CMakeLists.txt, $version"
  run "$grader" --root "$here" grade "$here/labs" --lab 04
  [ "$status" -ne 0 ] || fail "reduce-grade grade --lab 04: exit 0"
  expect "reduce-grade grade --lab 04" "did you mean --labs?"
fi

finish "the tools' --help and unknown options: every case passed${grader:+ (with the grader)}"
