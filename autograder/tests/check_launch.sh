#!/usr/bin/env bash
# The test course.checker_reads_its_launch_spec: the course's checker reads the launch spec that
# REDUCE_LAUNCH_SPEC names (its labs and the mark that opens each part), stops with what is wrong
# where the spec does not read or --runner-prefix comes beside it, and without a spec (ctest, a
# person's run) lists its tests as before. No GPU needed: it lists tests only.
#   check_launch.sh CHECKER
set -uo pipefail
checker=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "check_launch: $*" >&2; exit 1; }

# A spec the grader's writer would write (reduce_vocabulary/launch_spec.hpp, version 3).
cat > "$dir/spec.json" <<'JSON'
{"version": 3, "child": "checker", "seed": 5, "mark": "m0c4",
 "runner": {"prefix": [], "repetitions": [], "call_timeout_s": 60, "exit_grace_s": 0},
 "labs": [{"name": "a", "op": "sum", "order": "tree", "entry": "sum", "library": "/a.so",
           "filters": ["*"]},
          {"name": "b", "op": "maximum", "order": "serial", "entry": "maximum",
           "library": "/b.so", "filters": ["-*"]}],
 "memory_slots": {"dir": "", "count": 0}, "gpu_memory_bytes": 0}
JSON
out=$(REDUCE_LAUNCH_SPEC=$dir/spec.json "$checker" --gtest_list_tests 2>&1) ||
  fail "a checker over the spec's labs did not list: $out"
grep -qx '\[ lab      \] m0c4 0 a sum' <<<"$out" || fail "no part of lab a opened by the mark: $out"
grep -qx '\[ lab      \] m0c4 0 b maximum' <<<"$out" || fail "no part of lab b: $out"
[ "$(grep -c '^  ' <<<"$out")" -gt 0 ] || fail "lab a's part lists no test: $out"

# A spec of another version, or --runner-prefix beside a spec: exit 2, saying why.
sed 's/"version": 3/"version": 1/' "$dir/spec.json" > "$dir/v1.json"
out=$(REDUCE_LAUNCH_SPEC=$dir/v1.json "$checker" --gtest_list_tests 2>&1)
rc=$?
[ $rc = 2 ] && grep -q "version 1" <<<"$out" || fail "a spec of version 1 gave $rc: $out"
out=$(REDUCE_LAUNCH_SPEC=$dir/spec.json "$checker" --runner-prefix=env --gtest_list_tests 2>&1)
rc=$?
[ $rc = 2 ] && grep -q "runner-prefix" <<<"$out" || fail "--runner-prefix beside a spec gave $rc: $out"
out=$(REDUCE_LAUNCH_SPEC=$dir/missing.json "$checker" --gtest_list_tests 2>&1)
[ $? = 2 ] || fail "a missing spec did not stop the checker: $out"

# A held checker (started while its labs build, LaunchSpec::hold): before each lab's part it
# waits for that lab's file in its hold folder and tests the lab only on "go"; any other word, or
# the hold's limit passing first, leaves that lab's part unopened. Its labs select no test here,
# so that "go" runs none, with or without a GPU.
held() {  # held LIMIT_S: the spec, with a hold of that limit and no test selected
  sed -e "s|\"gpu_memory_bytes\": 0}|\"gpu_memory_bytes\": 0, \"hold\": {\"folder\": \"$dir/held\", \"limit_s\": $1}}|" \
      -e 's|"filters": \["\*"\]|"filters": ["-*"]|' "$dir/spec.json" > "$dir/held.json"
  rm -rf "$dir/held" && mkdir "$dir/held"
}
release() {  # release SECONDS LAB WORD: the grader's word on a lab, written whole, after SECONDS
  sleep "$1"; echo "$3" > "$dir/held/$2.new" && mv "$dir/held/$2.new" "$dir/held/$2"; }
run_held() { REDUCE_LAUNCH_SPEC=$dir/held.json "$checker" --gtest_color=no 2>&1; }
held 30
{ release 1 a stop; release 0.5 b go; } &
out=$(run_held) || fail "a checker with a stopped lab failed: $out"
wait
waited=$(sed -n 's/^\[ startup  \] held until the labs were built: \([0-9.]*\) s$/\1/p' <<<"$out")
awk -v w="${waited:-0}" 'BEGIN { exit !(w >= 0.9 && w < 20) }' || fail "held ${waited:-no} s, not about 1 s: $out"
grep -q "a untested: the grader said it did not build or pass its checks" <<<"$out" ||
  fail "no word of lab a's stop: $out"
grep -q '^\[ lab.* a sum$' <<<"$out" && fail "a stopped lab's part was opened: $out"
grep -qx '\[ lab      \] m0c4 0 b maximum' <<<"$out" || fail "lab b, released after a's stop, was not tested: $out"
held 0.5
out=$(run_held) || fail "a checker past its hold failed: $out"
for lab in a b; do
  grep -q "$lab untested: no word from the grader within the hold's limit" <<<"$out" ||
    fail "a checker past its hold's limit did not say so of lab $lab: $out"
done
grep -q '^\[ lab' <<<"$out" && fail "a checker past its hold opened a lab's part: $out"
held 30
release 0 a go
release 0 b go
out=$(run_held)
grep -qx '\[ lab      \] m0c4 0 a sum' <<<"$out" || fail "a released checker did not test lab a: $out"
grep -qx '\[ lab      \] m0c4 0 b maximum' <<<"$out" || fail "a released checker did not test lab b: $out"
grep -q "untested" <<<"$out" && fail "a released lab was left untested: $out"

# A person's run: no spec, the lab on the command line, REDUCE_SEED checked.
out=$(env -u REDUCE_LAUNCH_SPEC "$checker" --lab=/a.so --lab-filter='*' --runner-prefix=env \
  --gtest_list_tests 2>&1) || fail "a run without a spec did not list: $out"
grep -q '^\[ lab' <<<"$out" && fail "a run without a spec printed parts: $out"
out=$(env -u REDUCE_LAUNCH_SPEC REDUCE_SEED=x1 "$checker" --gtest_list_tests 2>&1)
rc=$?
[ $rc = 2 ] && grep -q "REDUCE_SEED=x1" <<<"$out" || fail "REDUCE_SEED=x1 gave $rc: $out"
echo "check_launch: the checker reads its spec, refuses a wrong one, waits where held, and runs without one"
