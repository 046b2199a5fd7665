#!/usr/bin/env bash
# Lab 15's launch-bound row, timed as the grader times it, with any sum library as the lab:
# reduce_bench alone, the lab in the grader's sandbox (reduce-grade confine) beside
# cub::DeviceReduce::Sum as its measure, at one n. It prints per run the grader's clock and the
# lab process's CUDA events per call for both rows, their noise and samples, and the fraction
# both ways (clocks whole; the request's own cost left out, as the grader does from 2b9027a).
# The runs of 2026-12-02 in docs/results/capstone/graded_rows_h200.json marked "reduce_bench
# alone" came from its first form (the same rows, sandbox and size, with REDUCE_SEED=12345).
#
#   GRADER=path/to/reduce-grade tools/maint/lab15_rows.sh [LAB...]
#   LAB: cap (solutions/15_capstone, the default), cub (CUB built as the lab), r09 (rung 9)
#   env: BUILD (default build-lab15), N (default 3457), RUNS (default 2), SANDBOX=off (none),
#        OUT (default ./out; each run's bench JSON goes to $OUT/lab15_rows/)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-$PWD/out}
BUILD=${BUILD:-build-lab15}
N=${N:-3457}
RUNS=${RUNS:-2}
labs=("$@")
[ ${#labs[@]} -gt 0 ] || labs=(cap)
mkdir -p "$OUT/lab15_rows"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$OUT/lab15_rows/configure.log" 2>&1 ||
  { tail -20 "$OUT/lab15_rows/configure.log"; exit 1; }
ninja -C "$BUILD" reduce_bench reduce_lab_runner solutions_15_capstone_sum \
  solutions_09_warp_shuffle_sum reduce_cub_reference_sum >"$OUT/lab15_rows/build.log" 2>&1 ||
  { tail -30 "$OUT/lab15_rows/build.log"; exit 1; }
cub=$PWD/$BUILD/references/lib/libcub_sum.so
prefix=()  # the words in front of the lab's runner: reduce_bench --runner-prefix, one each
if [ "${SANDBOX:-on}" != off ]; then
  grader=${GRADER:?"GRADER: the reduce-grade binary, for its confine sandbox (or SANDBOX=off)"}
  mkdir -p /tmp/lab15_rows_tmp
  # The lab process's view as the grader gives it: an empty /tmp, a /dev of its own with the GPU's.
  steps=(--scratch=/tmp/lab15_rows_tmp:1073741824 --hide=/run/user --hide=/dev)
  for d in null zero urandom nvidiactl nvidia-uvm nvidia-uvm-tools nvidia-modeset; do
    [ -e "/dev/$d" ] && steps+=("--device=/dev/$d")
  done
  for d in /dev/nvidia[0-9]*; do steps+=("--device=$d"); done
  steps+=(--link=/dev/fd:/proc/self/fd --scratch=/dev/shm:67108864)
  for word in "$grader" confine "${steps[@]}" --; do prefix+=("--runner-prefix=$word"); done
fi
for run in $(seq "$RUNS"); do
  for lab in "${labs[@]}"; do
    case $lab in
      cap) lib=$PWD/$BUILD/solutions/lib/lib15_capstone_sum.so ;;
      cub) lib=$cub ;;
      r09) lib=$PWD/$BUILD/solutions/lib/lib09_warp_shuffle_sum.so ;;
      *) echo "lab15_rows: unknown lab $lab (cap, cub or r09)" >&2; exit 2 ;;
    esac
    json=$OUT/lab15_rows/${lab}_$run.json
    # The grader's launch spec as reduce_bench's flags for a person's run (docs/grader.md).
    env -u REDUCE_LAUNCH_SPEC REDUCE_BENCH_SIZES="$N" "$BUILD/bin/reduce_bench" \
      "--graded=15_capstone=sum:$lib" "--reference=reference-15_capstone=sum:$cub" \
      --call-timeout-s=60 ${prefix[@]+"${prefix[@]}"} \
      "--benchmark_filter=^sum/(15_capstone|reference-15_capstone)/$N(/|\$)" \
      "--benchmark_out=$json" --benchmark_out_format=json >"${json%.json}.log" 2>&1
    python3 - "$json" "$lab $run" <<'PY'
import json, sys
try:
    rows = {b["name"].split("/")[1]: b for b in json.load(open(sys.argv[1]))["benchmarks"]}
    lab, ref = rows["15_capstone"], rows["reference-15_capstone"]
except (OSError, ValueError, KeyError) as e:
    sys.exit(f"{sys.argv[2]}: no rows ({e})")
own = ref["median_us"] - ref["runner_event_us"]
lab_us = max(lab["median_us"] - own, lab["runner_event_us"])
for name, b in (("reference", ref), ("lab", lab)):
    print(f"{sys.argv[2]:7s} {name:9s} clock {b['median_us']:7.2f} us  events {b['runner_event_us']:6.2f} us"
          f"  noise {b['noise']:.4f}  samples {b['samples']:.0f}")
print(f"{sys.argv[2]:7s} fraction of CUB: {ref['median_us'] / lab['median_us']:.3f} clocks whole, "
      f"{ref['runner_event_us'] / lab_us:.3f} without the request's own cost ({own:.2f} us)")
PY
  done
done
