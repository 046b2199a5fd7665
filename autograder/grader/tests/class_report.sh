#!/usr/bin/env bash
# The class report end to end, CPU only: a batch of nine mixed submissions of labs 04 and 09
# graded with --no-gpu, `reduce-grade report` on it, and the page checked in headless Chromium
# (class_report_browser.py). Also the report's errors: a folder that is not a batch output, an
# empty batch, a report.json that cannot be parsed (skipped and listed on the page), and a
# batch of hostile folder names (a formula, terminal escapes, bytes that are not UTF-8).
# Exits 77 (skipped) where chromium or matplotlib is missing.
#
#   class_report.sh GRADER COURSE_ROOT WORK_DIR
set -euo pipefail
grader=$1 root=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAILED: $*"; exit 1; }

rm -rf "$work"
mkdir -p "$work"
# Without matplotlib the report must say so clearly; there is nothing more to check here then.
if ! "$grader" --root "$root" report "$work" >"$work/probe.txt" 2>&1; then
  if grep -q "matplotlib" "$work/probe.txt"; then
    cat "$work/probe.txt"
    skip "matplotlib is missing for python3 (Debian: python3-matplotlib)"
  fi
fi
browser=""
for b in chromium chromium-browser google-chrome; do
  command -v "$b" >/dev/null && { browser=$(command -v "$b"); break; }
done
[ -n "$browser" ] || skip "chromium is not installed (Debian: apt-get install chromium)"

# Nine submissions, each a folder of lab folders: solved, stubs, compile errors, library use,
# a missing lab, a wrong signature and an empty folder.
subs=$work/submissions
sol=$root/solutions
planted=$root/autograder/planted
lab() {  # lab STUDENT FROM_FOLDER LAB [PLANTED_CASE]
  mkdir -p "$subs/$1"
  cp -r "$2/$3" "$subs/$1/"
  [ -z "${4:-}" ] || cp -r "$planted/$4/$3/." "$subs/$1/$3/"
}
lab alice "$sol" 04_sequential; lab alice "$sol" 09_warp_shuffle
lab bob "$root/labs" 04_sequential; lab bob "$root/labs" 09_warp_shuffle
lab carol "$sol" 04_sequential compile_error; lab carol "$sol" 09_warp_shuffle
lab dave "$sol" 04_sequential; lab dave "$sol" 09_warp_shuffle cub_call
lab erin "$root/labs" 04_sequential; lab erin "$sol" 09_warp_shuffle dlopen_cublas
lab frank "$sol" 04_sequential
lab grace "$sol" 04_sequential signature_mismatch; lab grace "$root/labs" 09_warp_shuffle
lab heidi "$sol" 04_sequential compile_error; lab heidi "$sol" 09_warp_shuffle
echo "this is not C++;" >>"$subs/heidi/09_warp_shuffle/sum.cu"
mkdir -p "$subs/ivan"

out=$work/class
set +e
"$grader" --root "$root" batch "$subs" --out "$out" --labs 04,09 --no-gpu --build-ahead 1 \
  >"$work/batch.txt" 2>&1
rc=$?
set -e
tail -5 "$work/batch.txt"
[ "$rc" = 3 ] || fail "batch --no-gpu exited $rc, expected 3"
grep -q "reduce-grade report" "$work/batch.txt" || fail "batch did not say how to make the report"

"$grader" --root "$root" report "$out" || fail "reduce-grade report exited $?"
page=$out/class-report/index.html
[ -f "$page" ] || fail "no $page"
python3 "$here/class_report_browser.py" "$browser" "$page" --students 9 \
  --expect "To look at by hand (2)" --expect "forbidden import" --expect "does not compile" \
  --expect "09_warp_shuffle build.log" \
  --screenshot "$work/class_report.png" || fail "the browser check failed"

# A report.json that cannot be parsed: skipped, listed on the page, the rest still reported.
cp -r "$out" "$work/broken"
rm -rf "$work/broken/class-report"
head -c 100 "$out/alice/report.json" >"$work/broken/alice/report.json"
"$grader" --root "$root" report "$work/broken" --out "$work/broken-report" >"$work/broken.txt" 2>&1 ||
  fail "report on a batch with an unreadable report.json exited $?: $(cat "$work/broken.txt")"
grep -q "unreadable, skipped: alice" "$work/broken.txt" || fail "alice's report not named as skipped"
python3 "$here/class_report_browser.py" "$browser" "$work/broken-report/index.html" --students 9 \
  --expect "Reports that could not be read" || fail "the page of the broken batch failed"

# Hostile student names: a spreadsheet formula, terminal escapes, bytes that are not UTF-8. The
# whole class is still reported, every name inert on the page and in the gradebook.
hostile=$work/hostile
mkdir -p "$hostile/=HYPERLINK(\"x\")" "$hostile/$(printf '\033]0;pwned\007')" \
  "$hostile/$(printf '\377\376')" "$hostile/plain"
"$grader" --root "$root" batch "$hostile" --out "$work/hostile-out" --labs 04 --no-gpu \
  >"$work/hostile.txt" 2>&1 || [ $? = 3 ] || fail "batch of hostile names: $(cat "$work/hostile.txt")"
"$grader" --root "$root" report "$work/hostile-out" >"$work/hostile-report.txt" 2>&1 ||
  fail "report of hostile names exited $?: $(cat "$work/hostile-report.txt")"
for file in "$work/hostile-out/gradebook.csv" "$work/hostile-out/class-report/index.html" \
  "$work/hostile.txt"; do
  ! grep -q "$(printf '\033')" "$file" || fail "$file holds a raw escape"
done
grep -q "^\"'=HYPERLINK" "$work/hostile-out/gradebook.csv" || fail "the formula was not neutralised"
python3 "$here/class_report_browser.py" "$browser" "$work/hostile-out/class-report/index.html" \
  --students 4 --expect '\x1b]0;pwned\x07' --expect '\xff\xfe' ||
  fail "the page of hostile names failed"

# Bad input: a clear error, exit code 2.
expect_error() {  # expect_error PATTERN ARGS...
  local pattern=$1; shift
  set +e
  "$grader" --root "$root" report "$@" >"$work/error.txt" 2>&1
  local code=$?
  set -e
  [ "$code" = 2 ] || fail "report $* exited $code, expected 2: $(cat "$work/error.txt")"
  grep -q "$pattern" "$work/error.txt" || fail "report $*: no '$pattern' in: $(cat "$work/error.txt")"
}
expect_error "not a batch output" "$subs"
expect_error "not found" "$work/no-such-folder"
mkdir -p "$work/empty"
head -1 "$out/gradebook.csv" >"$work/empty/gradebook.csv"
expect_error "empty batch" "$work/empty"
expect_error "one submission's report folder" "$out/alice"
echo "PASSED: class report of $(($(wc -l <"$out/gradebook.csv") - 1)) submissions checked in $browser"
