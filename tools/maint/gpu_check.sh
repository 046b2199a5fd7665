#!/usr/bin/env bash
# The whole check on a GPU host, in one call: build, tests of the solutions, stub checks,
# the ladder benchmark, the grader (compute-sanitizer included) when built. Logs go to $OUT (default
# ./out) and are packed into $OUT/results.tgz; a short summary is printed last and kept in
# $OUT/summary.txt.
#
#   tools/maint/gpu_check.sh [build] [test] [stubs] [bench] [ops] [library] [accuracy] [segmented] [plans] [sweep] [capstone] [grade] [planted] [calibrate] [attack] [class] [batch] [neighbours] [small] [loop] [profile]
#   (default: build test stubs bench grade; compute-sanitizer runs inside the grade step, as the
#   rubric says, and the planted warp race is one of the planted cases)
#   env: BENCH_SIZES (default 2^26,2^28), SWEEP_SIZES, BUILD (default build-gpu), JOBS,
#        OPS_SIZES (the ops step's sizes, default 2^28), LIBRARY_SIZES and ACCURACY_SIZES (the
#        library and accuracy steps', default 2^20,2^24,2^28), CAPSTONE_ROWS (the capstone step's
#        benchmark filter, default CUB, the probe, rung 09 and both capstone modes),
#        SEGMENTED_SIZES, SEGMENTED_LENGTHS, SEGMENTED_RAGGED (the segmented step's rows),
#        CCCL_INCLUDE (the newest CCCL headers for its cub_fixed rows),
#        PLANS (the plans step's patches, default docs/results/segmented/plans/*.patch),
#        PLAN_SIZES, PLAN_LENGTHS, PLAN_RAGGED (its rows),
#        ONLY_LABS ("01_atomic_naive;09_warp_shuffle": build only these labs),
#        TEST_LABELS (ctest label regex of the test step, default "solutions"), TEST_EXCLUDE
#        (ctest name regex left out of it),
#        GRADE_RUNS (gradings of the solutions in the grade step, default 3), GRADE_CHECKS
#        ("8 16:4": the rubric's parallel_checks[:sanitizer_checkers] for each of those
#        gradings), GRADE_LABS (04,15:
#        grade only these), GRADE_STUBS (0: do not grade the untouched labs/),
#        BUILD_AHEAD (planted cases built side by side, default 4), PLANTED_CASES (a,b: only these),
#        PLANTED_GPUS (0,0,0: three cases at once on GPU 0, benchmarks one at a time),
#        PLANTED_TIMEOUT_S (the planted run's limit on one test, hidden or sanitizer run; default
#        60, where the rubric says 300: raise it when several cases share the GPU),
#        CALIBRATE_RUNS (benchmark runs of reduce-grade calibrate, default 3), CALIBRATE_LABS (17:
#        calibrate only these; default GRADE_LABS, else every lab),
#        CAPSTONE_CONFIGS (strategy:waves runs at large sizes), CAPSTONE_SMALL (strategies forced
#        at SMALL_SIZES),
#        BATCH_COPIES (whole-course copies of solutions/ in the batch step, default 8),
#        BATCH_GPU_LISTS ("0,1 0": batch --gpus of each batch run, in order; "-" for the default),
#        SMALL_GIB (the small step's GPU memory in GiB, default 15),
#        BATCH_BUDGET_S (a batch run is not started when the step's time so far plus the longest
#        run so far would pass it, so that a call's time limit cuts no run; default: no limit),
#        PROFILE_CASES (the profile step's cases, tools/maint/profile_check.sh's default: labs 02,
#        09, rung 4 as lab 09 and lab 17's two operations),
#        GRADER (the reduce-grade binary for the grade step: build it on a machine with CLI11,
#        nlohmann-json, toml++ and fmt, copy it into .carry/ and name .carry in the device call)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/out}
BUILD=${BUILD:-build-gpu}
JOBS=${JOBS:-$(nproc)}
mkdir -p "$OUT"
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(build test stubs bench grade)
want() { local s; for s in "${steps[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
summary=()
note() { summary+=("$*"); echo ">> $*"; }
stamp() { date +%s; }

# The summary (printed and kept in $OUT/summary.txt) and the archive of everything else, also
# when the call is stopped at its time limit.
finish() {
  {
  echo
  echo "================ summary: $gpu ================"
  printf '%s\n' "${summary[@]}"
  [ -f "$OUT/ladder.log" ] && sed -n '/^NVIDIA\|^n = /,$p' "$OUT/ladder.log" | grep -v "^$" | head -60
  [ -f "$OUT/capstone.txt" ] && cat "$OUT/capstone.txt"
  [ -f "$OUT/accuracy.txt" ] && cat "$OUT/accuracy.txt"
  [ -f "$OUT/segmented.txt" ] && cat "$OUT/segmented.txt"
  [ -f "$OUT/plans.txt" ] && cat "$OUT/plans.txt"
  cat "$OUT/grade-solutions/summary.txt" "$OUT/planted/planted.txt" "$OUT/calibrate/calibrate.txt" \
    "$OUT/batch/compare.md" 2>/dev/null
  [ -f "$OUT/neighbours/neighbours.md" ] && cat "$OUT/neighbours/neighbours.md"
  [ -f "$OUT/ops.log" ] && sed -n '/^probe layouts/,$p' "$OUT/ops.log" | grep -v "^probe\|^$\|^rung"
  [ -f "$OUT/sweep.log" ] && sed -n '/^NVIDIA/,$p' "$OUT/sweep.log" | grep -E "n = |cub|09_|stream_read" | head -60
  } | tee "$OUT/summary.txt"
  # Everything else travels as one archive (the device tool returns only a few files per call).
  (cd "$OUT" && tar czf /tmp/results.tgz --exclude=summary.txt . &&
    find . -mindepth 1 -maxdepth 1 ! -name summary.txt -exec rm -rf {} + && mv /tmp/results.tgz .)
}
trap 'finish; exit 124' TERM INT

nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader \
  | tee "$OUT/gpu.txt"
gpu=$(head -1 "$OUT/gpu.txt")

if want build; then
  t0=$(stamp)
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DREDUCE_ONLY_LABS="${ONLY_LABS:-}" \
    >"$OUT/configure.log" 2>&1 &&
    cmake --build "$BUILD" -j "$JOBS" >"$OUT/build.log" 2>&1
  rc=$?
  note "build: rc=$rc in $(( $(stamp) - t0 ))s"
  [ $rc -eq 0 ] || { tail -40 "$OUT/build.log"; exit 1; }
fi

if want test; then
  t0=$(stamp)
  ctest --test-dir "$BUILD" -L "${TEST_LABELS:-solutions}" ${TEST_EXCLUDE:+-E "$TEST_EXCLUDE"} -j 4 \
    --timeout 900 --output-on-failure >"$OUT/ctest_solutions.log" 2>&1
  rc=$?
  note "solutions tests: $(grep -E 'tests passed' "$OUT/ctest_solutions.log") ($(( $(stamp) - t0 ))s)"
  grep -m3 -A4 "CMake Error" "$OUT/ctest_solutions.log"
  grep -E "^\s+[0-9]+ - .*(Failed|Timeout|Exception|SEGFAULT|Skipped)" "$OUT/ctest_solutions.log" | head -20
  ctest --test-dir "$BUILD" -L cpu >"$OUT/ctest_cpu.log" 2>&1
  note "cpu tests: $(grep -E 'tests passed' "$OUT/ctest_cpu.log")"
fi

if want stubs; then
  ctest --test-dir "$BUILD" -L stub -j 4 -V >"$OUT/ctest_stubs.log" 2>&1
  note "stubs: $(grep -E 'tests passed' "$OUT/ctest_stubs.log")"
  grep -Eo "stub fails cleanly \(exit [0-9]+\): not implemented: see labs/[^ ]+" "$OUT/ctest_stubs.log" \
    | sort -u | sed 's/^/   /'
fi

if want bench; then
  t0=$(stamp)
  sizes=(); IFS=, read -ra sizes <<<"${BENCH_SIZES:-2^26,2^28}"
  args=(); for s in "${sizes[@]}"; do args+=(-s "$s"); done
  tools/ladder -B "$BUILD" "${args[@]}" -- --benchmark_out="$OUT/ladder.json" \
    --benchmark_out_format=json >"$OUT/ladder.log" 2>&1
  note "ladder: rc=$? in $(( $(stamp) - t0 ))s"
fi

# The exercises' operations beside their CUB counterparts (Max, Min, Reduce with multiplies, Sum
# then a division, ArgMax).
if want ops; then
  t0=$(stamp)
  REDUCE_LABS_FILE="$BUILD/solutions/labs.txt" REDUCE_BENCH_SIZES=${OPS_SIZES:-2^28} "$BUILD/bin/reduce_bench" \
    --benchmark_filter='^(maximum|minimum|product|mean|argmax)/' \
    --benchmark_out="$OUT/ops.json" --benchmark_out_format=json >"$OUT/ops.log" 2>&1
  note "ops: rc=$? in $(( $(stamp) - t0 ))s"
fi

# Lab 16 with each of its block steps (cub::BlockReduce, cub::WarpReduce, cg::reduce) beside labs
# 09 and 15 and CUB, one benchmark process per step, for its lesson (docs/results/library/).
if want library; then
  t0=$(stamp)
  for step in block_reduce warp_reduce cg_reduce; do
    REDUCE_LAB16_BLOCK_STEP=$step REDUCE_LABS_FILE="$BUILD/solutions/labs.txt" \
      REDUCE_BENCH_SIZES=${LIBRARY_SIZES:-2^20,2^24,2^28} "$BUILD/bin/reduce_bench" \
      --benchmark_filter='^sum/(stream_read|cub|09_warp_shuffle|15_capstone|16_library_primitives)/' \
      --benchmark_out="$OUT/library_$step.json" --benchmark_out_format=json >"$OUT/library_$step.log" 2>&1
    note "library ($step): rc=$? in $(( $(stamp) - t0 ))s"
  done
fi

# Lab 18's two sums beside their CUB counterparts (TransformReduce in double; the plain Sum), then
# the compensated sum with each per-thread accumulator (neumaier, kahan, float, double), one
# benchmark process each, for its lesson (docs/results/accuracy/): bandwidth and |error| side by
# side on the cancelling input.
if want accuracy; then
  t0=$(stamp)
  export REDUCE_BENCH_KEEP_WRONG=1  # CUB's plain Sum and the float accumulator miss the contract
  REDUCE_LABS_FILE="$BUILD/solutions/labs.txt" REDUCE_BENCH_SIZES=${ACCURACY_SIZES:-2^20,2^24,2^28} \
    "$BUILD/bin/reduce_bench" --benchmark_filter='^sum_(compensated|reproducible)/' \
    --benchmark_out="$OUT/accuracy.json" --benchmark_out_format=json >"$OUT/accuracy.log" 2>&1
  note "accuracy: rc=$? in $(( $(stamp) - t0 ))s"
  for accumulator in kahan float double; do
    REDUCE_LAB18_ACCUMULATOR=$accumulator REDUCE_LABS_FILE="$BUILD/solutions/labs.txt" \
      REDUCE_BENCH_SIZES=${ACCURACY_SIZES:-2^20,2^24,2^28} "$BUILD/bin/reduce_bench" \
      --benchmark_filter='^sum_compensated/(stream_read|18_accuracy)/' \
      --benchmark_out="$OUT/accuracy_$accumulator.json" --benchmark_out_format=json \
      >"$OUT/accuracy_$accumulator.log" 2>&1
    note "accuracy ($accumulator): rc=$? in $(( $(stamp) - t0 ))s"
  done
  unset REDUCE_BENCH_KEEP_WRONG
  sed -n '/^sum_compensated, n\|^sum_reproducible, n/,/^$/p' "$OUT"/accuracy*.log | grep -v "^$" |
    grep -v "^rung" >"$OUT/accuracy.txt"
fi

# Lab 17's segmented sum and softmax at every row length (REDUCE_SEGMENT_LENGTHS) and on ragged
# rows around two means (REDUCE_SEGMENT_RAGGED), beside cub::DeviceSegmentedReduce with offsets
# (CUDA's own CUB: "cub"), its segment_size overload (the newest CUB: "cub_fixed", built where
# autograder/bench/CMakeLists.txt found the newest CCCL headers, else skipped with a message) and
# the floor (floor/<n>: cub::DeviceReduce::Sum over the same n), for its lesson
# (docs/results/segmented/segmented_<gpu>.json is $OUT/segmented.json). CCCL_INCLUDE=<folder>
# (PyPI cuda-cccl's cuda/cccl/headers/include, e.g. $PWD/.cccl/include) configures $BUILD with
# those headers and builds it first; a build step finds .cccl/include by itself.
if want segmented; then
  t0=$(stamp)
  if [ -n "${CCCL_INCLUDE:-}" ]; then
    fresh=(); [ -f "$BUILD/CMakeCache.txt" ] ||
      fresh=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DREDUCE_ONLY_LABS="${ONLY_LABS:-}")
    cmake -S . -B "$BUILD" ${fresh[@]+"${fresh[@]}"} -DREDUCE_NEWEST_CCCL_INCLUDE="$CCCL_INCLUDE" \
      >"$OUT/segmented_configure.log" 2>&1 &&
      cmake --build "$BUILD" -j "$JOBS" >"$OUT/segmented_build.log" 2>&1
    note "segmented: build against $CCCL_INCLUDE: rc=$? ($(grep -o 'cub_fixed rows.*' "$OUT/segmented_configure.log" | head -1))"
  fi
  REDUCE_LABS_FILE="$BUILD/solutions/labs.txt" REDUCE_BENCH_SIZES=${SEGMENTED_SIZES:-2^24,2^28} \
    REDUCE_SEGMENT_LENGTHS=${SEGMENTED_LENGTHS:-16,32,64,128,256,512,1024,4096,32768,2^20} \
    REDUCE_SEGMENT_RAGGED=${SEGMENTED_RAGGED:-32,1024} \
    "$BUILD/bin/reduce_bench" --benchmark_filter='^(segmented_(sum|softmax)_|floor/)' \
    --benchmark_out="$OUT/segmented.json" --benchmark_out_format=json >"$OUT/segmented.log" 2>&1
  note "segmented: rc=$? in $(( $(stamp) - t0 ))s; $(grep -c 'WRONG' "$OUT/segmented.log") rows with wrong results; cub_fixed: $(grep -o '"cub_fixed_version": "[^"]*"' "$OUT/segmented.json" | cut -d'"' -f4)"
  # Every row's line stays in segmented.log; the summary gets the table (GB/s and of_floor).
  sed -n '/^segmented rows, n = /,$p' "$OUT/segmented.log" >"$OUT/segmented.txt"
fi

# Lab 17's plans that lost (docs/results/segmented/plans/*.patch, or PLANS="a.patch b.patch"):
# each patch applied to a copy of solutions/17_segmented, built as a submission tree of its own
# (target submission_all), and timed beside the reference of $BUILD (a build step first), CUB
# 3.6's fixed-size rows and the floor in one process, the only fair comparison
# (docs/results/segmented/plans_<gpu>.json is $OUT/plans.json). A patch whose header has the line
# "rows: uniform" is right only where no row is listed, and is left out of the ragged rows.
if want plans; then
  t0=$(stamp)
  work=$(mktemp -d /tmp/plans.XXXXXX)
  names=() plan_libs=() ragged=(17_segmented)
  for patch in ${PLANS:-docs/results/segmented/plans/*.patch}; do
    name=$(basename "$patch" .patch)
    mkdir -p "$work/$name" && cp -r solutions/17_segmented "$work/$name/" &&
      patch -s -p3 -d "$work/$name/17_segmented" <"$patch" ||
      { note "plans: $patch does not apply to solutions/17_segmented"; continue; }
    (cmake -S . -B "$work/build-$name" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DREDUCE_TREES="$work/$name" -DREDUCE_ONLY_LABS=17_segmented -DREDUCE_BUILD_TESTS=OFF \
      -DREDUCE_BUILD_GRADER=OFF -DREDUCE_BUILD_DOCS=OFF &&
      cmake --build "$work/build-$name" -j "$JOBS" --target submission_all) \
      >"$OUT/plans_build_$name.log" 2>&1 &
    names+=("$name")
    grep -q '^rows: uniform' "$patch" || ragged+=("$name")
  done
  wait
  for name in ${names[@]+"${names[@]}"}; do  # a plan that did not build is named, not timed
    lib=$work/build-$name/submission/lib/lib17_segmented_segmented
    [ -f "${lib}_sum.so" ] && [ -f "${lib}_softmax.so" ] ||
      { note "plans: $name did not build (plans_build_$name.log)"; continue; }
    plan_libs+=("$name=${lib}_sum.so" "$name=${lib}_softmax.so")
  done
  IFS=, ; all="${plan_libs[*]}"; IFS='|'; ragged_impls="${ragged[*]}"; unset IFS
  REDUCE_LABS="$all" REDUCE_LABS_FILE="$BUILD/solutions/labs.txt" \
    REDUCE_BENCH_SIZES=${PLAN_SIZES:-2^24,2^28} REDUCE_SEGMENT_LENGTHS=${PLAN_LENGTHS:-16,32,64,512,4096} \
    REDUCE_SEGMENT_RAGGED=${PLAN_RAGGED:-32} "$BUILD/bin/reduce_bench" \
    --benchmark_filter="^(segmented_(sum|softmax)_[0-9]+/(17[0-9a-z_]*|cub_fixed)/|segmented_(sum|softmax)_ragged[0-9]+/($ragged_impls)/|floor/)" \
    --benchmark_out="$OUT/plans.json" --benchmark_out_format=json >"$OUT/plans.log" 2>&1
  note "plans: rc=$? in $(( $(stamp) - t0 ))s; ${#plan_libs[@]} libraries; $(grep -c 'WRONG' "$OUT/plans.log") rows with wrong results"
  sed -n '/^segmented rows, n = /,$p' "$OUT/plans.log" | grep -v '^floor\|^segmented_.*/.*/' >"$OUT/plans.txt"
fi

if want sweep; then
  t0=$(stamp)
  sizes=(); IFS=, read -ra sizes <<<"${SWEEP_SIZES:-2^10,2^12,2^14,2^16,2^18,2^20,2^22,2^24,2^26,2^28,2^30}"
  args=(); for s in "${sizes[@]}"; do args+=(-s "$s"); done
  tools/ladder -B "$BUILD" "${args[@]}" -r 9 -- --benchmark_out="$OUT/sweep.json" \
    --benchmark_out_format=json >"$OUT/sweep.log" 2>&1
  note "sweep: rc=$? in $(( $(stamp) - t0 ))s"
fi

# The capstone: its default (fast and deterministic modes) beside CUB and rung 09 over the size
# sweep, then its grid-level strategies and grid sizes forced one at a time at large sizes, and
# its small-input strategies at small sizes.
if want capstone; then
  t0=$(stamp)
  run_capstone() {  # run_capstone <name> <sizes> [VAR=value...]
    local name=$1 sizes=$2; shift 2
    env REDUCE_LABS_FILE="$BUILD/solutions/labs.txt" REDUCE_BENCH_SIZES="$sizes" "$@" "$BUILD/bin/reduce_bench" \
      --benchmark_filter="${CAPSTONE_ROWS:-^sum/(cub|stream_read|09_warp_shuffle|15_capstone[a-z_]*)/}" \
      --benchmark_out="$OUT/capstone_$name.json" --benchmark_out_format=json >"$OUT/capstone_$name.log" 2>&1
  }
  run_capstone auto "${SWEEP_SIZES:-2^10,2^12,2^14,2^16,2^18,2^20,2^22,2^24,2^26,2^28,2^30}"
  for config in ${CAPSTONE_CONFIGS-atomic:2 atomic:4 last_block:2 last_block:4}; do
    run_capstone "${config/:/-w}" "2^24,2^26,2^28,2^30" REDUCE_CAPSTONE_STRATEGY="${config%%:*}" \
      REDUCE_CAPSTONE_WAVES="${config##*:}"
  done
  # At small sizes, launch-bound: each strategy forced, beside CUB, around the switch points.
  for strategy in ${CAPSTONE_SMALL-single_block atomic last_block cluster}; do
    CAPSTONE_ROWS='^sum/(cub|15_capstone[a-z_]*)/' run_capstone "$strategy" \
      "${SMALL_SIZES:-2^10,2^12,2^14,2^15,2^16,2^17}" REDUCE_CAPSTONE_STRATEGY="$strategy"
  done
  python3 tools/capstone_table.py "$OUT"/capstone_*.json >"$OUT/capstone.txt"
  note "capstone: $(( $(stamp) - t0 ))s"
fi

# The grader on the GPU host (its binary is built on a machine with CLI11 and friends and carried):
# the solutions must get full marks three times over, the stubs nothing.
# Where a grading's wall time went, from the elapsed-time stamps of its log.
split_times() {
  # The build ends with the labs' build, or with the course's where it built beside them, later.
  awk -F'[][s]+' '/^\[/ {e=$2} /build finished in/ {b=$2} /course.s binaries built in/ {c=$2}
    /benchmark of/ {t=$2} END {if (c != "" && c + 0 > b + 0) b = c; if (b != "") printf "   build %.0fs, tests + sanitizer %.0fs, benchmark %.0fs\n", b, t-b, e-t}' "$1" |
    tee -a "$OUT/grade-times.txt"
  summary+=("$(tail -1 "$OUT/grade-times.txt")")
}
G=${GRADER:-build-grader/autograder/grader/reduce-grade}
if { want grade || want planted || want calibrate; } && [ ! -x "$G" ]; then
  note "grade/planted/calibrate: no grader at $G (build it where its libraries are and set GRADER)"
  steps=("${steps[@]/grade}"); steps=("${steps[@]/planted}"); steps=("${steps[@]/calibrate}")
fi
if want grade; then
  # Gradings of the solutions: the first from an empty build folder (the wall time a student
  # waits), the next ones reuse it, so they time the tests, sanitizer and benchmarks alone.
  checks=(${GRADE_CHECKS:-})
  for run in $(seq 1 "${GRADE_RUNS:-3}"); do
    t0=$(stamp)
    rubric=autograder/rubric.toml
    if [ -n "${checks[$((run - 1))]:-}" ]; then
      rubric="$OUT/rubric$run.toml"
      parallel=${checks[$((run - 1))]%%:*} sanitizer=${checks[$((run - 1))]#*:}
      [ "$sanitizer" = "${checks[$((run - 1))]}" ] && sanitizer=""
      sed -e "s/^parallel_checks = [0-9]*/parallel_checks = $parallel/" \
        ${sanitizer:+-e "s/^sanitizer_checkers = [0-9]*/sanitizer_checkers = $sanitizer/"} \
        autograder/rubric.toml >"$rubric"
      note "grade run $run: parallel_checks = $parallel${sanitizer:+, sanitizer_checkers = $sanitizer}"
    fi
    # What the GPU and the host's cores did meanwhile (where the graded seconds go): the GPU's
    # utilization every 250 ms and the cores' every second, beside the log's elapsed times.
    nvidia-smi --query-gpu=timestamp,utilization.gpu,utilization.memory --format=csv,noheader \
      -lms 250 >"$OUT/grade$run.gpu-util.csv" 2>/dev/null & smi=$!
    vmstat -t -n 1 >"$OUT/grade$run.vmstat.log" 2>/dev/null & vm=$!
    "$G" --rubric "$rubric" grade solutions ${GRADE_LABS:+--labs "$GRADE_LABS"} --out "$OUT/grade-solutions$run" --pass-mark 100 -j "$JOBS" \
      --build-dir "$BUILD-grade" --keep-build >"$OUT/grade$run.log" 2>&1
    rc=$?; kill $smi $vm 2>/dev/null; wait $smi $vm 2>/dev/null
    [ -f "$BUILD-grade/course/.ninja_log" ] &&  # the course build's steps, timed by Ninja
      cp "$BUILD-grade/course/.ninja_log" "$OUT/grade$run.course.ninja_log"
    note "grade solutions (run $run): rc=$rc in $(( $(stamp) - t0 ))s: $(grep -E '^total' "$OUT/grade-solutions$run/summary.txt")"
    split_times "$OUT/grade$run.log"
    note "   isolation: $(grep -o '"isolation": "[^"]*' "$OUT/grade-solutions$run/report.json" | cut -c15-);" \
      "sanitizer runs repeated unconfined: $(grep -c '"unconfined": "the' "$OUT/grade-solutions$run/report.json")"
    note "   processes: $(python3 -c 'import json,sys; p = json.load(open(sys.argv[1]))["processes"]; print(", ".join(f"{k} {v}" for k, v in p.items()))' "$OUT/grade-solutions$run/report.json" 2>/dev/null)"
    [ $run = 1 ] && cp -r "$OUT/grade-solutions1" "$OUT/grade-solutions"
  done
  if [ "${GRADE_STUBS:-1}" = 1 ]; then
    "$G" grade labs ${GRADE_LABS:+--labs "$GRADE_LABS"} --out "$OUT/grade-labs" -j "$JOBS" >"$OUT/grade-labs.log" 2>&1
    note "grade labs (stubs): rc=$? $(grep -E '^total' "$OUT/grade-labs/summary.txt")"
  fi
fi

# Every planted bug must get its expected grade and message.
if want planted; then
  sed -E "s/^(test|hidden|sanitizer)_timeout_s = 300/\1_timeout_s = ${PLANTED_TIMEOUT_S:-60}/" autograder/rubric.toml >"$OUT/fast-rubric.toml"; t0=$(stamp)
  "$G" --rubric "$OUT/fast-rubric.toml" check-planted --out "$OUT/planted" -j "$JOBS" --build-ahead "${BUILD_AHEAD:-4}" ${PLANTED_CASES:+--cases "$PLANTED_CASES"} ${PLANTED_GPUS:+--gpus "$PLANTED_GPUS"} >"$OUT/planted.log" 2>&1
  note "planted: rc=$? in $(( $(stamp) - t0 ))s: $(tail -1 "$OUT/planted/planted.txt")"
fi

# The reference solutions' fraction of the ceiling, as grading measures it (reduce-grade calibrate:
# a build of solutions/, then CALIBRATE_RUNS benchmark runs with fresh seeds); its calibrate.txt
# is docs/results/<folder>/calibrate_lab<NN>_<gpu>.txt. Exit 1: a reference below its threshold.
if want calibrate; then
  t0=$(stamp); labs=${CALIBRATE_LABS:-${GRADE_LABS:-}}
  "$G" calibrate --runs "${CALIBRATE_RUNS:-3}" ${labs:+--labs "$labs"} --out "$OUT/calibrate" -j "$JOBS" \
    >"$OUT/calibrate.log" 2>&1
  note "calibrate: rc=$? in $(( $(stamp) - t0 ))s"
fi

# Three submissions in one batch, the middle one attacking the grading (tools/maint/batch_attack.sh).
if want attack; then
  t0=$(stamp)
  GRADER=$G tools/maint/batch_attack.sh "$OUT/attack" -j "$JOBS" >"$OUT/attack.log" 2>&1
  note "attack batch: rc=$? in $(( $(stamp) - t0 ))s: $(tail -1 "$OUT/attack.log")"
fi

# A class of ten mixed submissions graded with batch, for the class report (tools/class_report.py),
# with the checkers of the grade step when it ran.
if want class; then
  t0=$(stamp)
  course=()
  [ -d "$BUILD-grade/course" ] && course=(--course-build "$BUILD-grade/course")
  GRADER=$G tools/maint/class_batch.sh "$OUT/class" -j "$JOBS" "${course[@]}" >"$OUT/class.log" 2>&1
  note "class batch: rc=$? in $(( $(stamp) - t0 ))s: $(tail -1 "$OUT/class.log")"
fi

# One folder of whole-course submissions (copies of solutions/) graded with batch once per GPU
# list: wall times, speed-ups, gradebooks compared apart from seeds, fractions per GPU.
if want batch; then
  subs=$OUT/batch/submissions
  mkdir -p "$subs"
  for i in $(seq 1 "${BATCH_COPIES:-8}"); do cp -r solutions "$subs/copy$i"; done
  # The course's checkers are built once, by a one-lab batch, so that every timed run reuses them.
  course=(--course-build "$BUILD-grade/course")
  t0=$(stamp)
  "$G" batch "$subs" --only copy1 --labs 01 --out "$OUT/batch/warm-up" -j "$JOBS" "${course[@]}" \
    >"$OUT/batch/warm-up.log" 2>&1
  note "batch: course built (and lab 01 of one copy graded) in $(( $(stamp) - t0 ))s"
  runs=(); step_t0=$(stamp); longest=0
  for list in ${BATCH_GPU_LISTS:-0,1 0}; do
    if [ -n "${BATCH_BUDGET_S:-}" ] && (( $(stamp) - step_t0 + longest > BATCH_BUDGET_S )); then
      note "batch --gpus $list: not started (${BATCH_BUDGET_S}s budget; the longest run took ${longest}s)"
      continue
    fi
    run=$OUT/batch/gpus-${list//,/_}
    gpus=(); [ "$list" = - ] || gpus=(--gpus "$list")
    mkdir -p "$run"; t0=$(stamp)
    "$G" batch "$subs" --out "$run" -j "$JOBS" "${course[@]}" "${gpus[@]}" >"$run.log" 2>&1
    rc=$?
    echo $(( $(stamp) - t0 )) >"$run/wall_s"; echo "${list/-/}" >"$run/gpus"
    (( $(cat "$run/wall_s") > longest )) && longest=$(cat "$run/wall_s")
    note "batch of ${BATCH_COPIES:-8} (--gpus $list): rc=$rc in $(cat "$run/wall_s")s"
    runs+=("$run")
  done
  python3 tools/maint/batch_compare.py "${runs[@]}" >"$OUT/batch/compare.md" 2>&1
  note "batch comparison: rc=$?"
fi

# Which neighbour loads move a graded benchmark (tools/maint/neighbours.sh): three labs' graded
# rows at 2^28 pinned to half the CPUs, alone and beside CPU burners, a build, memory copies and
# PCIe copies on the same GPU, alternating; the table is $OUT/neighbours/neighbours.md.
if want neighbours; then
  t0=$(stamp)
  tools/maint/neighbours.sh "$BUILD" "$OUT" >"$OUT/neighbours.log" 2>&1
  note "neighbours: rc=$? in $(( $(stamp) - t0 ))s ($(tail -1 "$OUT/neighbours.log"))"
fi

# A grading as on a small GPU: a process holds all but SMALL_GIB (default 15) GiB of the GPU's
# memory, and the rubric's limits.gpu_memory_gib says SMALL_GIB, so that the checkers at once,
# the large-memory slots and the tests that skip for want of memory all see a GPU that small.
if want small; then
  gib=${SMALL_GIB:-15}
  sed "s/^gpu_memory_gib = [0-9.]*/gpu_memory_gib = $gib/" autograder/rubric.toml \
    >"$OUT/small-rubric.toml"
  python3 tools/maint/hold_gpu_memory.py --leave-gib "$gib" >"$OUT/hold.log" 2>&1 &
  holder=$!
  for _ in $(seq 60); do grep -q holding "$OUT/hold.log" && break; sleep 1; done
  note "small: $(cat "$OUT/hold.log")"
  t0=$(stamp)
  "$G" --rubric "$OUT/small-rubric.toml" grade solutions --out "$OUT/grade-small" --pass-mark 100 \
    -j "$JOBS" --build-dir "$BUILD-grade" --keep-build >"$OUT/grade-small.log" 2>&1
  note "grade solutions as on a $gib GiB GPU: rc=$? in $(( $(stamp) - t0 ))s:" \
    "$(grep -E '^total' "$OUT/grade-small/summary.txt")"
  note "   $(grep -o 'tests and sanitizer: .*' "$OUT/grade-small.log" | head -1)"
  note "   tests not verified for want of memory: $(grep -o 'too little memory' \
    "$OUT/grade-small/report.json" | wc -l)"
  kill "$holder"; wait "$holder" 2>/dev/null
fi

# A student's one-lab loop: lab 04 of a copy of solutions/ graded, then graded again after an
# edit of its source (the course's checkers built by the first).
if want loop; then
  sub=$OUT/loop/submission
  mkdir -p "$OUT/loop" && rm -rf "$sub" && cp -r solutions "$sub"
  for k in 1 2; do
    [ $k = 2 ] && echo "// an edit" >>"$sub/04_sequential/sum.cu"
    t0=$(stamp)
    "$G" grade "$sub" --labs 04 --out "$OUT/loop/grade$k" -j "$JOBS" --build-dir "$BUILD-loop" \
      --keep-build >"$OUT/loop/grade$k.log" 2>&1
    rc=$?  # before the note's own expansions replace $?
    note "one-lab loop, grade $k$([ $k = 2 ] && echo ' after an edit'): rc=$rc in" \
      "$(( $(stamp) - t0 ))s: $(grep -E '^04_' "$OUT/loop/grade$k/summary.txt")"
    # Ninja's own times of every step (the course's build, the lab's): the first grade's
    # critical path.
    for log in course/.ninja_log .ninja_log; do
      [ -f "$BUILD-loop/$log" ] && cp "$BUILD-loop/$log" "$OUT/loop/grade$k.${log//\//_}"
    done
  done
fi

# Nsight Compute on labs beside their references, the diagnosis printed: one text file per case
# in $OUT/profile/ (tools/maint/profile_check.sh, its own build beside BUILD).
if want profile; then
  t0=$(stamp)
  read -ra cases <<<"${PROFILE_CASES:-}"
  OUT=$OUT/profile BUILD=$BUILD-profile tools/maint/profile_check.sh "${cases[@]}" \
    >"$OUT/profile.log" 2>&1
  note "profile: rc=$? in $(( $(stamp) - t0 ))s: $(grep -c 'exit 0 in' "$OUT/profile.log") case(s) profiled"
fi

finish
exit 0
