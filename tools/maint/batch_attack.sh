#!/usr/bin/env bash
# A batch of three whole-lab submissions whose middle one attacks the grading as hard as the
# planted corpus can: kill(-1) from code written at run time (lab 04), forged sanitizer logs
# (06), a forged benchmark JSON (09), a predicted maximum (10), a cached exact sum (18). The
# two others must keep full marks, the attacker must lose its points, and the batch must finish
# with a row for each.
#
#   tools/maint/batch_attack.sh OUT [reduce-grade batch options...]   (GRADER: the reduce-grade binary)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: batch_attack.sh OUT [options]}; shift
G=${GRADER:-build-grader/autograder/grader/reduce-grade}
labs=04_sequential,06_unroll_last_warp,09_warp_shuffle,10_max_min,18_accuracy
subs=$out/submissions
rm -rf "$subs" && mkdir -p "$subs"
for who in alice bob carol; do cp -r solutions "$subs/$who"; done
for case in runtime_code_kill_all forged_sanitizer_logs forged_bench_json max_predicted_from_prefix \
  reproducible_cache_by_ends; do
  for lab in autograder/planted/$case/*/; do cp -r "$lab." "$subs/bob/$(basename "$lab")/"; done
done
"$G" batch "$subs" --labs "$labs" --out "$out/batch" "$@" >"$out/batch.log" 2>&1
rc=$?
book=$out/batch/gradebook.csv
fail() { echo "batch attack: FAILED: $*"; exit 1; }
[ "$rc" = 0 ] || fail "batch exited $rc (log: $out/batch.log)"
[ "$(tail -n +2 "$book" | wc -l)" = 3 ] || fail "the gradebook has not three rows"
for who in alice carol; do
  grep -q "^$who,50,50," "$book" || fail "$who lost points: $(grep "^$who," "$book")"
done
bob=$(grep "^bob," "$book" | cut -d, -f2)
awk -v p="$bob" 'BEGIN { exit !(p <= 40) }' || fail "the attacker kept $bob of 50"
echo "batch attack: ok: alice 50/50, carol 50/50, the attacker $bob/50, labs flagged for review:" \
  "$(grep -c '"flagged_for_review": "' "$out/batch/bob/report.json")"
