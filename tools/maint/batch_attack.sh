#!/usr/bin/env bash
# A batch of three whole-lab submissions whose middle one attacks the grading as hard as the
# planted corpus can: kill(-1) from code written at run time (lab 04), forged sanitizer logs
# (06), a forged benchmark JSON (09), a predicted maximum (10), a cached exact sum (18). Its labs
# 09 and 18 also write everywhere they can each time they are loaded (batch_attack/
# write_everywhere.cuh: /dev/shm, /tmp, /var/tmp, /dev, $HOME, /run/user, the working folder,
# POSIX and System V IPC). The two others must keep full marks, the attacker must lose its
# points, the batch must finish with a row for each, and the host's /dev/shm, /tmp, /var/tmp,
# /dev and IPC must hold afterwards nothing they did not hold before.
#
#   tools/maint/batch_attack.sh OUT [reduce-grade batch options...]   (GRADER: the reduce-grade binary)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
out=${1:?usage: batch_attack.sh OUT [options]}
shift
G=${GRADER:-build-grader/autograder/grader/reduce-grade}
labs=04_sequential,06_unroll_last_warp,09_warp_shuffle,10_max_min,18_accuracy
subs=$out/submissions
rm -rf "$subs" && mkdir -p "$subs"
out=$(cd "$out" && pwd)
subs=$out/submissions
for who in alice bob carol; do cp -r solutions "$subs/$who"; done
for case in runtime_code_kill_all forged_sanitizer_logs forged_bench_json max_predicted_from_prefix \
  reproducible_cache_by_ends; do
  for lab in autograder/planted/"$case"/*/; do cp -r "$lab." "$subs/bob/$(basename "$lab")/"; done
done
for lab in 09_warp_shuffle 18_accuracy; do
  cp tools/maint/batch_attack/write_everywhere.cuh "$subs/bob/$lab/"
  for source in "$subs/bob/$lab"/*.cu; do
    printf '\n#include "write_everywhere.cuh"\n' >>"$source"
  done
done

# The host's shared places: every entry (path, type, size) of /dev/shm, /tmp (but this run's
# own folder), /var/tmp, /dev/mqueue and /dev's top level; their use; the System V objects.
snapshot() {
  {
    for d in /dev/shm /tmp /var/tmp /dev/mqueue "/run/user/$(id -u)"; do
      [ -d "$d" ] && find "$d" -xdev -mindepth 1 -path "$out" -prune -o -printf '%p %y %s\n' 2>/dev/null
    done
    find /dev -maxdepth 1 -mindepth 1 -printf '%p %y\n' 2>/dev/null
    if command -v ipcs >/dev/null; then ipcs -m -q -s 2>/dev/null | grep -c '^0x' | sed 's/^/sysv objects /'; fi
  } | LC_ALL=C sort
}
shm_used_kib() { df -k --output=used /dev/shm 2>/dev/null | tail -1 | tr -d ' '; }

snapshot >"$out/host-before.txt"
df -k /dev/shm /tmp >"$out/host-df-before.txt" 2>&1
shm_before=$(shm_used_kib)
"$G" batch "$subs" --labs "$labs" --out "$out/batch" "$@" >"$out/batch.log" 2>&1
rc=$?
snapshot >"$out/host-after.txt"
df -k /dev/shm /tmp >"$out/host-df-after.txt" 2>&1
shm_after=$(shm_used_kib)

book=$out/batch/gradebook.csv
fail() {
  echo "batch attack: FAILED: $*"
  exit 1
}
[ "$rc" = 0 ] || fail "batch exited $rc (log: $out/batch.log)"
[ "$(tail -n +2 "$book" | wc -l)" = 3 ] || fail "the gradebook has not three rows"
for who in alice carol; do
  grep -q "^$who,50,50," "$book" || fail "$who lost points: $(grep "^$who," "$book")"
done
bob=$(grep "^bob," "$book" | cut -d, -f2)
awk -v p="$bob" 'BEGIN { exit !(p <= 40) }' || fail "the attacker kept $bob of 50"

# Nothing the batch wrote stays on the host: no new or changed entry, no trace by name, no
# memory kept in /dev/shm.
LC_ALL=C comm -13 "$out/host-before.txt" "$out/host-after.txt" >"$out/host-new.txt"
[ -s "$out/host-new.txt" ] &&
  fail "the host holds $(wc -l <"$out/host-new.txt") new or changed entries after the batch," \
    "e.g. $(head -3 "$out/host-new.txt" | tr '\n' ' ')(all: $out/host-new.txt)"
traces=$(find /dev/shm /tmp /var/tmp /dev /dev/mqueue "/run/user/$(id -u)" "${HOME:-/root}" . \
  -maxdepth 2 -xdev -name 'reduce-attack*' 2>/dev/null | head -5)
[ -z "$traces" ] || fail "the attack's files are on the host: $traces"
if [ -n "$shm_before" ] && [ -n "$shm_after" ] && [ $((shm_after - shm_before)) -gt 1024 ]; then
  fail "/dev/shm holds $((shm_after - shm_before)) KiB more after the batch"
fi
said=$(grep -rhao 'reduce-attack: [^\\"]*' "$out/batch/bob" 2>/dev/null | head -1)
echo "batch attack: ok: alice 50/50, carol 50/50, the attacker $bob/50, labs flagged for review:" \
  "$(grep -c '"flagged_for_review": "' "$out/batch/bob/report.json"); the host's /dev/shm, /tmp," \
  "/var/tmp, /dev and IPC unchanged (${shm_before:-?} KiB used in /dev/shm before, ${shm_after:-?} after);" \
  "the attack said: ${said:-nothing that reached the reports}"
