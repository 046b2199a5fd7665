#!/usr/bin/env bash
# tools/maint/compile_course.sh's verdicts with a stand-in toolkit (ctest tools.compile_course,
# label cpu; no GPU, no nvcc): every file compiles (exit 0); a file that does not compile fails
# the run and is named with its error (exit 1); a header from another CUDA toolkit fails it too;
# cub_fixed_rows.cu falls back with a message where the toolkit's CUB is older than 3.4 and is
# compiled where it is newer; without GoogleTest's headers the checkers fall back with a message.
#   tools/maint/test_compile_course.sh
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
source "$here/tools/maint/test_helpers.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# A toolkit: bin/nvcc writes the object and its dependency file (FAKE_DEP added to it), and fails
# on a source whose path contains FAKE_FAIL; include/cccl holds CUB's version and probe headers.
toolkit() {  # toolkit DIR CUB_VERSION SEGMENT_SIZE(yes|no)
  mkdir -p "$1/bin" "$1/include/cccl/cub/device"
  cat >"$1/bin/nvcc" <<'SH'
#!/usr/bin/env bash
[ "$1" = --version ] && { printf 'Cuda compilation tools, release 99.9, V99.9.1\nBuild\n'; exit 0; }
while [ $# -gt 0 ]; do
  case $1 in -c) src=$2; shift ;; -o) obj=$2; shift ;; -MF) deps=$2; shift ;; esac
  shift
done
if [ -n "${FAKE_FAIL:-}" ] && [[ $src == *"$FAKE_FAIL"* ]]; then
  echo "$src(1): error: planted" >&2
  exit 1
fi
printf '%s : %s \\\n %s\n' "$obj" "$src" "${FAKE_DEP:-}" >"$deps"
touch "$obj"
SH
  chmod +x "$1/bin/nvcc"
  echo "#define CUB_VERSION $2 // as CCCL writes it" >"$1/include/cccl/cub/version.cuh"
  local overload=""
  [ "$3" = yes ] && overload="int segment_size"
  echo "// $overload" >"$1/include/cccl/cub/device/device_segmented_reduce.cuh"
}
toolkit "$work/old" 300001 no
toolkit "$work/new" 300500 yes
mkdir -p "$work/cuda-12.9/include"
echo "// another toolkit's header" >"$work/cuda-12.9/include/cuda_runtime.h"

# run CASE TOOLKIT [VAR=VALUE...]: compile_course.sh for sm_90 alone; exit status in $status.
run() {
  local name=$1 tk=$2
  shift 2
  set +e
  env REDUCE_NEWEST_CCCL_INCLUDE=OFF "$@" "$here/tools/maint/compile_course.sh" "$work/$tk/bin/nvcc" \
    90 2 >"$work/out" 2>&1
  status=$?
  set -e
  echo "case $name: exit $status"
}

run all_compile old
[ "$status" = 0 ] || fail "all_compile: exit $status, not 0"
expect all_compile "ok       solutions/04_sequential/sum.cu"
expect all_compile "ok       autograder/tests/sum_test.cu"
expect all_compile "ok       autograder/bench/session.cu"
expect all_compile "ok       common/src/ceiling.cu"
expect all_compile "ok       generated/export_sum.cu"
expect all_compile "fallback autograder/bench/cub_fixed_rows.cu: this toolkit's CUB 3.0.1 has no"
expect all_compile "1 fell back, 0 failed"

run one_fails old FAKE_FAIL=solutions/04_sequential/sum.cu
[ "$status" = 1 ] || fail "one_fails: exit $status, not 1"
expect one_fails "FAILED   solutions/04_sequential/sum.cu: solutions/04_sequential/sum.cu(1): error: planted"
expect one_fails "1 failed"

run other_toolkit old FAKE_DEP="$work/cuda-12.9/include/cuda_runtime.h"
[ "$status" = 1 ] || fail "other_toolkit: exit $status, not 1"
expect other_toolkit "FAILED   labs/04_sequential/sum.cu: a header from another toolkit: $work/cuda-12.9/include/cuda_runtime.h"

run newer_cub new
[ "$status" = 0 ] || fail "newer_cub: exit $status, not 0"
expect newer_cub "against the toolkit's own CCCL, CUB 3.5.0"
expect newer_cub "ok       autograder/bench/cub_fixed_rows.cu"
expect newer_cub "0 fell back, 0 failed"

run no_gtest new CXX=false
[ "$status" = 0 ] || fail "no_gtest: exit $status, not 0"
expect no_gtest "fallback autograder/tests/sum_test.cu: no GoogleTest headers (tools/setup installs them)"
expect no_gtest "fallback autograder/bench/session.cu: no Google Benchmark headers"
finish "tools/maint/compile_course.sh: 5 cases met"
