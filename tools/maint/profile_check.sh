#!/usr/bin/env bash
# Nsight Compute profiles of labs on a GPU host, each beside the course's reference, as a student
# gets them from tools/profile: one build with the solutions and a submission tree, then
# tools/profile per case, its whole output (table and diagnosis) in
# $OUT/profile_<name>_<gpu>.txt, the file to commit as docs/results/profile/.
#
#   tools/maint/profile_check.sh [CASE...]
#   CASE: NAME=LAB:OP:LENGTH:SOURCE
#     NAME    the output's name: $OUT/profile_NAME_<gpu>.txt (gpu: h200 for "NVIDIA H200")
#     LAB     the lab folder profiled; OP its operation; LENGTH lab 17's segment length ("-":
#             tools/profile's default)
#     SOURCE  what is profiled as the student's lab: "-" the reference itself (tools/profile
#             --tree solutions, one run, no second column); else a folder of the course whose
#             files go over a copy of solutions/LAB in the submission tree (tools/profile
#             --tree submission, beside solutions/LAB)
#   default cases (the slow rung, the near-ceiling rung, a slow rung's kernel submitted as the
#   near-ceiling lab, lab 17's two operations at the length that sets its grade):
#     02=02_interleaved_divergent:sum:-:-
#     09=09_warp_shuffle:sum:-:-
#     09_rung04=09_warp_shuffle:sum:-:solutions/04_sequential
#     17_sum_block=17_segmented:segmented_sum:32:$planted/segmented_block_per_segment/17_segmented
#       ($planted: autograder/planted, lab 17's sum as a block per segment: a planted case)
#     17_softmax=17_segmented:segmented_softmax:32:-
#   env: OUT (default ./out), BUILD (default build-profile; kept between calls: a second call
#        builds nothing new), JOBS, NCU (tools/profile finds it otherwise), PROFILE_TIMEOUT_S
#        (tools/profile's limit on one profiled run, default 600)
# Needs: nvcc, CMake, Ninja, GoogleTest and Google Benchmark (no grader libraries: the grader is
# not built), ncu, a GPU. Into $OUT: a text file per case, profile_check.log (the build's output,
# a line per case) and profile_logs.tgz (ncu's and the benchmark's logs, the CSVs): 8 files for
# 6 cases. Exit status: 0 every case profiled, 1 a case failed (the others still ran), 77 no GPU,
# 2 usage or the build failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-$PWD/out}
BUILD=${BUILD:-build-profile}
JOBS=${JOBS:-$(nproc)}
cases=("$@")
planted=autograder/planted
[ ${#cases[@]} -gt 0 ] || cases=(
  "02=02_interleaved_divergent:sum:-:-"
  "09=09_warp_shuffle:sum:-:-"
  "09_rung04=09_warp_shuffle:sum:-:solutions/04_sequential"
  "17_sum_block=17_segmented:segmented_sum:32:$planted/segmented_block_per_segment/17_segmented"
  "17_softmax=17_segmented:segmented_softmax:32:-")
mkdir -p "$OUT"
rm -rf "$BUILD/profile-logs"
log=$OUT/profile_check.log
: >"$log"
say() { echo "profile_check: $*" | tee -a "$log"; }

# Every case read before anything runs: a typo costs no build.
names=() labs=() ops=() lengths=() sources=() only=()
for c in "${cases[@]}"; do
  IFS=: read -r lab op length source <<<"${c#*=}"
  if [[ "$c" != *=* || -z "$source" || ! -d "solutions/$lab" ]] ||
    [[ "$source" != - && ! -d "$source" ]]; then
    echo "profile_check: not a case: $c (NAME=LAB:OP:LENGTH:SOURCE, LAB a folder of solutions/," \
      "SOURCE - or a folder)" >&2
    exit 2
  fi
  names+=("${c%%=*}") labs+=("$lab") ops+=("$op") lengths+=("$length") sources+=("$source")
  [[ " ${only[*]} " == *" $lab "* ]] || only+=("$lab")
done

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
if [ -z "$gpu" ]; then
  say "no GPU here (nvidia-smi lists none): nothing profiled; run it on a GPU host"
  exit 77
fi
tag=$(echo "${gpu##* }" | tr '[:upper:]' '[:lower:]' | tr -cd 'a-z0-9')
say "$gpu; cases: ${names[*]}"

# The submission tree: solutions/LAB of every case's lab, a case's SOURCE laid over its lab's
# copy just before that case runs (tools/profile rebuilds that one library).
sub=$PWD/$BUILD-src/submission
fill() {  # fill LAB [SOURCE]: solutions/LAB, then SOURCE's files over it
  rm -rf "${sub:?}/$1" && mkdir -p "$sub/$1" && cp solutions/"$1"/* "$sub/$1/" &&
    { [ -z "${2:-}" ] || cp "$2"/* "$sub/$1/"; }
}
for lab in "${only[@]}"; do fill "$lab" || exit 2; done
t0=$(date +%s)
only_list=$(IFS=';'; echo "${only[*]}")
if ! cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DREDUCE_TREES="solutions;$sub" -DREDUCE_ONLY_LABS="$only_list" -DREDUCE_BUILD_GRADER=OFF \
  -DREDUCE_BUILD_TESTS=OFF -DREDUCE_BUILD_HIDDEN_TESTS=OFF >>"$log" 2>&1; then
  tail -20 "$log"; say "configure failed"; exit 2
fi
if ! cmake --build "$BUILD" -j "$JOBS" --target reduce_bench solutions_all submission_all \
  >>"$log" 2>&1; then
  grep -E "error|Error" "$log" | head -20; say "build failed"; exit 2
fi
say "configured and built in $(( $(date +%s) - t0 )) s"

status=0
for i in "${!names[@]}"; do
  name=${names[$i]} lab=${labs[$i]} source=${sources[$i]}
  args=("$lab" --op "${ops[$i]}" -B "$BUILD" --timeout "${PROFILE_TIMEOUT_S:-600}")
  [ "${lengths[$i]}" = - ] || args+=(--segment-length "${lengths[$i]}")
  if [ "$source" = - ]; then
    args+=(--tree solutions)
  else
    fill "$lab" "$source" || exit 2
    args+=(--tree submission)
  fi
  file=$OUT/profile_${name}_$tag.txt
  t0=$(date +%s)
  {
    echo "\$ tools/profile ${args[*]}"
    [ "$source" = - ] || echo "  (submission/$lab: solutions/$lab with $source over it)"
    echo
  } >"$file"
  tools/profile "${args[@]}" >>"$file" 2>&1
  rc=$?
  say "$name: tools/profile exit $rc in $(( $(date +%s) - t0 )) s -> $(basename "$file")"
  # ncu's and the benchmark's logs and the CSVs travel as one archive, rewritten after each case
  # (the device returns at most 8 files); the reports stay in BUILD/profile/.
  profiled=$(ls -dt "$BUILD"/profile/*/ 2>/dev/null | head -1)
  if [ -n "$profiled" ]; then
    mkdir -p "$BUILD/profile-logs/$name" &&
      cp "$profiled"/*.log "$profiled"/*.csv "$BUILD/profile-logs/$name/" 2>/dev/null
    tar czf "$OUT/profile_logs.tgz" -C "$BUILD/profile-logs" .
  fi
  [ $rc -eq 77 ] && exit 77
  [ $rc -eq 0 ] || status=1
done
say "done: exit $status"
exit $status
