#!/usr/bin/env bash
# A class of mixed submissions for the class report, graded with `reduce-grade batch`: a correct
# one, the untouched starter code, one half done, and planted bugs (autograder/planted/, each laid
# over the reference solution as check-planted does), labs 04 and 09 only.
#   tools/maint/class_batch.sh DIR [batch options, e.g. --no-gpu]
# Writes DIR/submissions/<student>/ and DIR/out/ (the batch's reports and gradebook.csv).
# GRADER: the reduce-grade binary (default: build-grader/reduce-grade).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:?usage: class_batch.sh DIR [batch options]}
shift
grader=${GRADER:-$root/build-grader/reduce-grade}
subs=$dir/submissions
rm -rf "$subs" "$dir/out"
mkdir -p "$subs"

# student LABS_FROM [planted case]: labs 04 and 09 from LABS_FROM (solutions or labs), with the
# planted case's own files over them.
student() {
  local name=$1 from=$2 case=${3:-}
  mkdir -p "$subs/$name"
  cp -r "$root/$from/04_sequential" "$root/$from/09_warp_shuffle" "$subs/$name/"
  if [[ -n $case ]]; then
    local lab
    for lab in "$root/autograder/planted/$case"/*/; do
      cp -r "$lab." "$subs/$name/$(basename "$lab")/"
    done
  fi
}

student alice_correct solutions
student bob_untouched labs
student carol_half_done solutions
rm -rf "$subs/carol_half_done/09_warp_shuffle"
cp -r "$root/labs/09_warp_shuffle" "$subs/carol_half_done/"
student dave_compile_error solutions compile_error
student erin_stream_escape solutions stream_escape
student frank_oracle_seed solutions oracle_seed_from_env
student grace_missing_syncthreads solutions missing_syncthreads
student heidi_too_slow solutions too_slow
student ivan_workspace_overrun solutions workspace_overrun
student judy_cub_call solutions cub_call

"$grader" --root "$root" batch "$subs" --labs 04,09 --out "$dir/out" "$@"
