#!/usr/bin/env bash
# Compiles every CUDA source of the course with one nvcc, as the course's CMake build compiles it
# (the include folders and flags of its target, C++17, -O3), object files only: a check that a
# toolkit other than the one the course is built with takes the course. Prints one line per file
# and a summary; exits 1 when a file does not compile.
#
#   tools/maint/compile_course.sh NVCC [ARCHS] [JOBS] [COURSE_ARCHS]
#   ARCHS: the labs' and solutions' architectures, default "75 80 89 90"; JOBS: default nproc;
#   COURSE_ARCHS: those of every other file, default ARCHS.
#
# The files, by the CMake target that builds them:
#   labs/ and solutions/          the lab libraries (cmake/ReduceLab.cmake)
#   common/src/                   reduce_lab_support and reduce_common (common/CMakeLists.txt)
#   export_<op>.cu                generated from course.json (cmake/CourseLabs.cmake, run here in
#                                 script mode into a temporary folder)
#   autograder/tests/, hidden/    the checkers' objects (autograder/tests/CMakeLists.txt)
#   autograder/bench/             the benchmark, its timed inputs and their GPU test, the CUB
#                                 reference library (autograder/bench/CMakeLists.txt)
# The checkers and the benchmark include GoogleTest's and Google Benchmark's headers (tools/setup
# installs them); where the host compiler finds none, their files are skipped with a message.
# autograder/bench/cub_fixed_rows.cu needs CUB 3.4 or later: it is compiled against the newest
# CCCL headers where the course's build would find them (REDUCE_NEWEST_CCCL_INCLUDE, .cccl/include),
# else against the toolkit's own CCCL where its CUB has the segment_size overload, else it falls
# back as the course's build does, with a message (the benchmark then builds cub_fixed_absent.cpp).
#
# A toolkit from PyPI (no root, no NVIDIA repository): tools/maint/ci_toolkits.sh.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit
nvcc=${1:?usage: tools/maint/compile_course.sh NVCC [ARCHS] [JOBS] [COURSE_ARCHS]}
archs=${2:-75 80 89 90}
jobs=${3:-$(nproc)}
course_archs=${4:-$archs}
root=$(cd "$(dirname "$nvcc")/.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
toolkit_cccl=""
[ -d "$root/include/cccl" ] && toolkit_cccl="$root/include/cccl"
"$nvcc" --version | tail -2 | head -1
echo "architectures: labs and solutions $archs; every other file $course_archs"

# reduce/course_entries.inc and export_<op>.cu, as the course's configure writes them.
cat >"$out/generated.cmake" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
set(CMAKE_BINARY_DIR ${OUT})
function(reduce_course_lab)
endfunction()
include(${SOURCE}/cmake/CourseLabs.cmake)
CMAKE
if ! cmake -DOUT="$out" -DSOURCE="$PWD" -P "$out/generated.cmake" >"$out/generated.log" 2>&1; then
  echo "FAILED  cmake/CourseLabs.cmake: $(grep -m1 -i error "$out/generated.log")"
  exit 1
fi
gen=$out/generated

# The job list: one line "ARCHS|FILE|FLAGS" per file; a file that falls back is printed instead.
jobs_file=$out/jobs
: >"$jobs_file"
fallbacks=""
add() {  # add ARCHS "FLAGS" FILE...
  local a=$1 flags=$2
  shift 2
  for f in "$@"; do echo "$a|$f|$flags" >>"$jobs_file"; done
}
fall_back() {  # fall_back FILE REASON
  fallbacks+="fallback $1: $2"$'\n'
}
has_header() {  # whether the host compiler finds <$1>
  printf '#include <%s>\n' "$1" | "${CXX:-c++}" -std=c++17 -E -x c++ - >/dev/null 2>&1
}
pic=-Xcompiler=-fPIC
common="-I common/include -I $gen"
runner="-I common/vocabulary/include -I autograder/runner/include"
for f in labs/*/*.cu solutions/*/*.cu; do add "$archs" "$pic -lineinfo -I common/include -I $(dirname "$f")" "$f"; done
add "$course_archs" "$pic -lineinfo $common" common/src/*.cu
add "$course_archs" "$pic $common" "$gen"/export_*.cu
add "$course_archs" "$pic -lineinfo -I common/include -I autograder/bench/references" \
  autograder/bench/references/*.cu
checkers=(autograder/tests/*.cu autograder/hidden/*.cu)
if has_header gtest/gtest.h; then
  add "$course_archs" "$pic -DGTEST_HAS_PTHREAD=1 -I autograder/tests $common $runner" "${checkers[@]}"
else
  for f in "${checkers[@]}"; do fall_back "$f" "no GoogleTest headers (tools/setup installs them)"; done
fi
switch=-Xcompiler=-Werror=switch
bench="$switch $common $runner -I autograder/bench"
bench_files=()
for f in autograder/bench/*.cu; do
  case $f in
    */cub_fixed_rows.cu | */timed_inputs_gpu_test.cu) ;;
    */timed_inputs.cu) add "$course_archs" "$pic $switch -I autograder/bench $common" "$f" ;;
    *) bench_files+=("$f") ;;
  esac
done
if has_header benchmark/benchmark.h; then
  add "$course_archs" "$bench" "${bench_files[@]}"
else
  for f in "${bench_files[@]}"; do fall_back "$f" "no Google Benchmark headers (tools/setup installs them)"; done
fi
gpu_test=autograder/bench/timed_inputs_gpu_test.cu
if has_header gtest/gtest.h; then
  add "$course_archs" "$switch -DGTEST_HAS_PTHREAD=1 -I autograder/bench $common" "$gpu_test"
else
  fall_back "$gpu_test" "no GoogleTest headers (tools/setup installs them)"
fi

# cub_fixed_rows.cu: the CCCL the course's build would put first, else the toolkit's own.
fixed=autograder/bench/cub_fixed_rows.cu
probe=cub/device/device_segmented_reduce.cuh
newest=${REDUCE_NEWEST_CCCL_INCLUDE:-}
[ -z "$newest" ] && [ -f .cccl/include/cub/version.cuh ] && newest=.cccl/include
[ "$newest" = OFF ] && newest=""
cub_version() {  # the CUB version of the CCCL headers in $1, as 3.4.0
  local v
  v=$(sed -n 's/^#define CUB_VERSION \([0-9]*\).*/\1/p' "$1/cub/version.cuh" 2>/dev/null)
  if [ -n "$v" ]; then echo "$v" | awk '{printf "%d.%d.%d", $1 / 100000, $1 / 100 % 1000, $1 % 100}'
  else echo "(none found)"; fi
}
abi=-D_LIBCUDACXX_ABI_NAMESPACE=__4_cccl_newest
if [ -n "$newest" ] && grep -q "int segment_size" "$newest/$probe" 2>/dev/null; then
  echo "$fixed: against the newest CCCL headers, CUB $(cub_version "$newest") in $newest"
  add "$course_archs" "$pic $abi -I $newest $bench" "$fixed"
elif [ -n "$toolkit_cccl" ] && grep -q "int segment_size" "$toolkit_cccl/$probe" 2>/dev/null; then
  # One CCCL in the binary then: no ABI namespace of its own (CUB 3.5's libcu++ rejects it).
  echo "$fixed: against the toolkit's own CCCL, CUB $(cub_version "$toolkit_cccl") (the course's" \
    "build takes only newer headers it is given: REDUCE_NEWEST_CCCL_INCLUDE)"
  add "$course_archs" "$pic $bench" "$fixed"
else
  fall_back "$fixed" "this toolkit's CUB $(cub_version "${toolkit_cccl:-$root/include}") has no \
segment_size overload of DeviceSegmentedReduce (CUB 3.4 or later) and no newer CCCL headers were \
given (REDUCE_NEWEST_CCCL_INCLUDE); the benchmark builds cub_fixed_absent.cpp in its place and \
its cub_fixed rows are skipped with a message"
fi

# -isystem: the wheels' CCCL, where that toolkit's nvcc.profile would not find it on its own.
[ -n "$toolkit_cccl" ] && export CCCL_FLAGS="-isystem $toolkit_cccl"
root_real=$(cd "$root" && pwd -P)
export nvcc out root_real
compile_one() {
  local a file flags log obj t0=$SECONDS args=()
  IFS='|' read -r a file flags <<<"$1"
  for x in $a; do args+=("-gencode=arch=compute_$x,code=sm_$x"); done
  read -ra more <<<"$flags ${CCCL_FLAGS:-}"
  log="$out/$(echo "$file" | tr / _).log"
  obj="${log%.log}.o"
  if ! "$nvcc" -std=c++17 -O3 -DNDEBUG "${args[@]}" "${more[@]}" -MD -MF "$obj.d" -c "$file" \
    -o "$obj" >"$log" 2>&1; then
    echo "FAILED   ${file#"$out"/}: $(grep -m1 -E "error" "$log")"
  elif foreign=$(foreign_header "$obj.d"); then
    echo "FAILED   ${file#"$out"/}: a header from another toolkit: $foreign"
  else
    echo "ok       ${file#"$out"/} ($((SECONDS - t0)) s)"
  fi
}
# A header of another CUDA toolkit that the dependency file $1 names (a folder such as
# /usr/local/include may link into one): the toolkit under test would not be what compiled.
foreign_header() {
  local paths
  mapfile -t paths < <(tr -s ' \134' '\n' <"$1" | grep '^/' | sort -u)
  [ ${#paths[@]} -gt 0 ] || return 1
  realpath -e -- "${paths[@]}" 2>/dev/null | grep -v "^$root_real/" |
    grep -m1 -E '/cuda(-[0-9.]+)?/|/nvidia/cu[0-9]+/'
}
export -f compile_one foreign_header
start=$SECONDS
# shellcheck disable=SC2016 # $1 is the inner shell's
results=$(xargs -P "$jobs" -d '\n' -n 1 bash -c 'compile_one "$1"' _ <"$jobs_file" | sort)
echo "$results"
[ -n "$fallbacks" ] && printf '%s' "$fallbacks"
failed=$(grep -c '^FAILED' <<<"$results")
echo "$(grep -c '^ok' <<<"$results") compiled, $(printf '%s' "$fallbacks" | grep -c '^fallback') fell back," \
  "$failed failed ($((SECONDS - start)) s, $jobs jobs)"
[ "$failed" = 0 ]
