#!/usr/bin/env bash
# Which neighbour loads move a graded benchmark. The benchmark of three labs at the graded size
# (2^28) runs as reduce-grade runs it: each lab in a runner process, timed by the benchmark's
# clock and checked against the runner's CUDA events (clocks_agree), beside the ceiling probe and
# the stream read of the same process, pinned to the first half of the CPUs. It runs alone and
# beside one neighbour at a time, alternating with a run alone (alone, cpu_other, alone,
# cpu_same, ...) so that drift over the minutes hits every condition alike:
#   alone          nothing else running
#   cpu_other      a CPU burner on every core of the other half (stress/host_stress.cpp, cpu)
#   cpu_same       the same on the benchmark's own cores
#   build_other    the solutions built over and over on the other half (cmake --build
#                  --clean-first of solutions_all in BUILD-neighbours, configured once here)
#   memory_other   each core of the other half copying 256 MiB buffers (host_stress memory)
#   pcie_same_gpu  256 MiB pinned copies both ways at once on the benchmark's GPU, from the other
#                  half (stress/pcie_stress.cu): an upper bound on another GPU's tests' traffic
#   gpu_context    (only where CONDITIONS names it) an idle CUDA context on the same GPU
# Each neighbour starts in a process group of its own, has RAMP_S to get going, and the whole
# group is stopped after the benchmark (and on any exit of this script).
#
#   tools/maint/neighbours.sh [BUILD] [OUT]   (default build-gpu and ./out; BUILD holds a course
#                                              build: bin/reduce_bench, solutions/labs.txt)
# Writes OUT/neighbours/: <condition>-<run>.json (the benchmark's JSON; alone's runs numbered on
# through the repetitions), <condition>-<run>.log and .neighbour.log, runs.tsv (each run's exit
# status, wall time, neighbour still running, each half's busy %), cpus.txt (which CPUs share a
# core) and neighbours.md (tools/maint/neighbours_table.py); prints the table and the total time.
# env: REPS (runs of each condition, default 3), CONDITIONS (default: the five above but alone),
#      SIZE (2^28), LABS ("04_sequential 09_warp_shuffle 15_capstone"), RAMP_S (2),
#      BUDGET_S (225: no run starts that could end past it), BENCH_CPUS and OTHER_CPUS (the two
#      halves, default 0-7 and 8-15 on 16 CPUs), BENCH_MODE (graded, or trusted: the labs loaded
#      into the benchmark's own process as gpu_check.sh's bench step and tools/ladder run them,
#      with no clocks_agree)
# Exit: 0 measured, 2 usage or no build, 77 no GPU (nothing measured).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
BUILD=${1:-${BUILD:-build-gpu}}
OUT=${2:-${OUT:-$PWD/out}}
dir=$OUT/neighbours
REPS=${REPS:-3}
CONDITIONS=${CONDITIONS:-cpu_other cpu_same build_other memory_other pcie_same_gpu}
SIZE=${SIZE:-2^28}
LABS=${LABS:-04_sequential 09_warp_shuffle 15_capstone}
RAMP_S=${RAMP_S:-2}
BUDGET_S=${BUDGET_S:-225}
BENCH_MODE=${BENCH_MODE:-graded}
ncpu=$(nproc)
half=$((ncpu / 2))
BENCH_CPUS=${BENCH_CPUS:-0-$((half - 1))}
OTHER_CPUS=${OTHER_CPUS:-$half-$((ncpu - 1))}
tools=$BUILD/neighbours-tools
build_dir=$BUILD-neighbours

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
say() { echo "[$(since "$t_start")s] $*"; }
t_start=$(now)

bench=$BUILD/bin/reduce_bench
labs_file=$BUILD/solutions/labs.txt
if [ ! -x "$bench" ] || [ ! -f "$labs_file" ]; then
  echo "neighbours: $bench or $labs_file missing: build first (tools/maint/gpu_check.sh build)" >&2
  exit 2
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "neighbours: no GPU (nvidia-smi lists none): nothing measured" >&2
  exit 77
fi
if [ "$ncpu" -lt 4 ]; then
  echo "neighbours: $ncpu CPUs: two halves of at least 2 are needed" >&2
  exit 2
fi
mkdir -p "$dir" "$tools"
# Which CPUs share a core: a neighbour on the other half that is the same cores' second threads
# is not on other cores.
lscpu -e=CPU,CORE,SOCKET,NODE >"$dir/cpus.txt" 2>&1

# The benchmark's rows: the grader's way (reduce_bench --graded=name=sum:library, each lab in a
# runner process, as the grader's launch spec names them), or the ladder's (REDUCE_LABS_FILE).
runner_labs=() pattern=""
for lab in $LABS; do
  lib=$(grep -m1 "^$lab=" "$labs_file" | cut -d= -f2-)
  [ -n "$lib" ] || { echo "neighbours: $lab is not in $labs_file" >&2; exit 2; }
  runner_labs+=("--graded=$lab=sum:$lib")
  pattern+="$lab|"
done
filter="^sum/(${pattern}stream_read)/"
bench_env=(REDUCE_BENCH_SIZES="$SIZE")
bench_args=()
case $BENCH_MODE in
  graded) bench_args=("${runner_labs[@]}" --call-timeout-s=60) ;;
  trusted) bench_env+=(REDUCE_LABS_FILE="$labs_file") ;;
  *) echo "neighbours: BENCH_MODE is graded or trusted, not $BENCH_MODE" >&2; exit 2 ;;
esac

# run_bench <json> <log>: one benchmark process on the benchmark's half.
run_bench() {
  timeout 120 env -u REDUCE_LABS -u REDUCE_LABS_FILE -u REDUCE_LAUNCH_SPEC "${bench_env[@]}" \
    taskset -c "$BENCH_CPUS" "$bench" ${bench_args[@]+"${bench_args[@]}"} \
    --benchmark_filter="$filter" --benchmark_out="$1" --benchmark_out_format=json >"$2" 2>&1
}

# The neighbours' programs, built here with the host's compilers; a condition whose program did
# not build is left out, and said so.
build_tools() {
  local nvcc
  rm -f "$tools/host_stress" "$tools/pcie_stress"  # never an older call's
  ${CXX:-g++} -std=c++17 -O2 -pthread tools/maint/stress/host_stress.cpp -o "$tools/host_stress" \
    >"$dir/host_stress_build.log" 2>&1 || say "host_stress did not build (host_stress_build.log)"
  nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
  [ -x "$nvcc" ] || nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  "$nvcc" -std=c++17 -O2 tools/maint/stress/pcie_stress.cu -o "$tools/pcie_stress" \
    >"$dir/pcie_stress_build.log" 2>&1 || say "pcie_stress did not build (pcie_stress_build.log)"
}

# The second build folder that build_other rebuilds: the solutions' labs only.
configure_build_neighbour() {
  [ -f "$build_dir/build.ninja" ] && return 0
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DREDUCE_TREES=solutions \
    -DREDUCE_BUILD_TESTS=OFF -DREDUCE_BUILD_BENCHMARKS=OFF -DREDUCE_BUILD_GRADER=OFF \
    -DREDUCE_BUILD_DOCS=OFF >"$dir/build_other_configure.log" 2>&1
}

# Whether condition $1 can run here (its program built, its build folder configured).
available() {
  case $1 in
    cpu_other | cpu_same | memory_other) [ -x "$tools/host_stress" ] ;;
    pcie_same_gpu | gpu_context) [ -x "$tools/pcie_stress" ] ;;
    build_other) [ -f "$build_dir/build.ninja" ] ;;
    *) return 1 ;;
  esac
}

npid=""
# start_neighbour <condition> <log>: the neighbour in a process group of its own (setsid), so
# that stopping it stops its children too (the build's ninja and compilers).
start_neighbour() {
  local cmd
  case $1 in
    cpu_other) cmd=(taskset -c "$OTHER_CPUS" "$tools/host_stress" cpu) ;;
    cpu_same) cmd=(taskset -c "$BENCH_CPUS" "$tools/host_stress" cpu) ;;
    memory_other) cmd=(taskset -c "$OTHER_CPUS" "$tools/host_stress" memory 256) ;;
    pcie_same_gpu) cmd=(taskset -c "$OTHER_CPUS" "$tools/pcie_stress" 256) ;;
    gpu_context) cmd=(taskset -c "$OTHER_CPUS" "$tools/pcie_stress" idle) ;;
    build_other)
      # shellcheck disable=SC2016  # expanded by the inner bash, from its arguments
      cmd=(taskset -c "$OTHER_CPUS" bash -c 'while :; do
             cmake --build "$1" --clean-first -j "$2" --target solutions_all || sleep 1; done' \
        build_other "$build_dir" "$((ncpu - half))") ;;
  esac
  setsid "${cmd[@]}" </dev/null >"$2" 2>&1 &
  npid=$!
}

# cpu_ticks <list, e.g. 0-7 or 0,2-3>: the busy and all jiffies of those CPUs since boot.
cpu_ticks() {
  awk -v list="$1" 'BEGIN {
      n = split(list, parts, ",")
      for (i = 1; i <= n; i++) {
        m = split(parts[i], r, "-"); hi = m > 1 ? r[2] : r[1]
        for (c = r[1] + 0; c <= hi + 0; c++) want["cpu" c] = 1
      }
    }
    $1 in want { t = 0; for (i = 2; i <= 9 && i <= NF; i++) t += $i; busy += t - $5 - $6; all += t }
    END { print busy + 0, all + 0 }' /proc/stat
}
# busy_pct <ticks before> <ticks after>: the CPUs' busy share in between, in %.
busy_pct() {
  awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); d = y[2] - x[2]
    printf "%.0f", (d > 0 ? 100 * (y[1] - x[1]) / d : 0) }'
}

# Whether a process of session $1 (the neighbour's, by setsid) is still alive; zombies are not
# (pgrep counts them).
# shellcheck disable=SC2009
session_alive() { ps -o stat= -s "$1" 2>/dev/null | grep -qv '^Z'; }

# Stops the neighbour: TERM to its group (the stress programs print their rate; ninja passes it
# on to its compilers, each in a group of its own), then KILL to whatever of its session is left
# after 5 s.
stop_neighbour() {
  [ -n "$npid" ] || return 0
  kill -TERM -- "-$npid" 2>/dev/null || kill -TERM "$npid" 2>/dev/null
  for _ in $(seq 50); do
    session_alive "$npid" || break
    sleep 0.1
  done
  session_alive "$npid" && pkill -KILL -s "$npid"
  wait "$npid" 2>/dev/null
  npid=""
}
trap stop_neighbour EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

t0=$(now)
build_tools
case " $CONDITIONS " in
  *" build_other "*) configure_build_neighbour || say "build_other: $build_dir did not configure" \
    "(build_other_configure.log)" ;;
esac
say "neighbours' programs built in $(since "$t0")s; benchmark on CPUs $BENCH_CPUS," \
  "neighbours on $OTHER_CPUS, $BENCH_MODE rows: $filter at $SIZE"
conditions=()
for c in $CONDITIONS; do
  case $c in
    cpu_other | cpu_same | build_other | memory_other | pcie_same_gpu | gpu_context) ;;
    *) say "$c left out: not a condition of this script"; continue ;;
  esac
  if available "$c"; then conditions+=("$c"); else say "$c left out: its neighbour is missing"; fi
done

# The order of the runs: alone before each condition, every repetition.
order=()
for _ in $(seq "$REPS"); do
  for c in ${conditions[@]+"${conditions[@]}"}; do order+=(alone "$c"); done
done
[ ${#conditions[@]} -gt 0 ] || order=(alone)

printf 'condition\trun\trc\twall_s\tneighbour\tbench_cpus_busy\tother_cpus_busy\n' \
  >"$dir/runs.tsv"
declare -A runs_of=()
longest=0 done_runs=0
for c in "${order[@]}"; do
  ramp=0; [ "$c" = alone ] || ramp=$RAMP_S
  if awk -v e="$(since "$t_start")" -v l="$longest" -v r="$ramp" -v b="$BUDGET_S" \
    'BEGIN { exit !(e + l + r > b) }'; then
    say "stopped after $done_runs of ${#order[@]} runs: the next could end past ${BUDGET_S}s"
    break
  fi
  k=$((${runs_of[$c]:-0} + 1)); runs_of[$c]=$k
  name=$c-$k
  state="-"
  if [ "$c" != alone ]; then
    start_neighbour "$c" "$dir/$name.neighbour.log"
    sleep "$RAMP_S"
  fi
  bench_before=$(cpu_ticks "$BENCH_CPUS") other_before=$(cpu_ticks "$OTHER_CPUS")
  t_run=$(now)
  run_bench "$dir/$name.json" "$dir/$name.log"
  rc=$?
  wall=$(since "$t_run")
  bench_busy=$(busy_pct "$bench_before" "$(cpu_ticks "$BENCH_CPUS")")
  other_busy=$(busy_pct "$other_before" "$(cpu_ticks "$OTHER_CPUS")")
  if [ -n "$npid" ]; then
    state=running; session_alive "$npid" || state=ended
  fi
  stop_neighbour
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$k" "$rc" "$wall" "$state" "$bench_busy" \
    "$other_busy" >>"$dir/runs.tsv"
  done_runs=$((done_runs + 1))
  awk -v w="$wall" -v r="$ramp" -v l="$longest" 'BEGIN { exit !(w + r > l) }' &&
    longest=$(awk -v w="$wall" -v r="$ramp" 'BEGIN { printf "%.1f", w + r }')
  if [ "$rc" = 3 ] && [ ! -s "$dir/$name.json" ]; then
    say "$name: the benchmark found no CUDA device: nothing measured"
    exit 77
  fi
  line=$(python3 tools/maint/neighbours_table.py --line "$dir/$name.json" 2>&1 | tail -1)
  say "$name: rc=$rc in ${wall}s, neighbour $state, CPUs busy ${bench_busy}%/${other_busy}%: $line"
done

python3 tools/maint/neighbours_table.py "$dir" >"$dir/neighbours.md"
cat "$dir/neighbours.md"
say "neighbours: $done_runs runs, total $(since "$t_start")s"
