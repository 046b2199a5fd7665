#!/usr/bin/env bash
# Compiles every lab source of labs/ (the stubs) and solutions/ with one nvcc for several GPU
# architectures, as the course's build compiles a lab library (C++17, -O3, the lab contract's
# headers, the lab's own folder), object files only: a check that a toolkit other than the one
# the course is built with takes the course. Prints one line per file and a summary.
#
#   tools/maint/compile_labs.sh NVCC [ARCHS] [JOBS]
#   ARCHS: default "75 80 89 90"; JOBS: default nproc.
#
# A toolkit from PyPI (no root, no NVIDIA repository): the wheels nvidia-cuda-nvcc, nvidia-nvvm,
# nvidia-cuda-crt, nvidia-cuda-runtime and nvidia-cuda-cccl of one release unpacked into one
# folder; NVCC is then <folder>/nvidia/cu13/bin/nvcc and CCCL's headers lie in its include/cccl.
set -uo pipefail
cd "$(dirname "$0")/../.."
nvcc=${1:?usage: tools/maint/compile_labs.sh NVCC [ARCHS] [JOBS]}
archs=${2:-75 80 89 90}
jobs=${3:-$(nproc)}
root=$(cd "$(dirname "$nvcc")/.." && pwd)
gencode=()
for a in $archs; do gencode+=("-gencode=arch=compute_$a,code=sm_$a"); done
includes=(-I common/include)
[ -d "$root/include/cccl" ] && includes+=(-I "$root/include/cccl")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "$("$nvcc" --version | tail -2 | head -1); architectures: $archs"
export nvcc out
export GENCODE="${gencode[*]}" INCLUDES="${includes[*]}"
files=$(ls labs/*/*.cu solutions/*/*.cu)
results=$(for f in $files; do echo "$f"; done | xargs -P "$jobs" -I{} bash -c \
  'nvcc_args=($GENCODE $INCLUDES); file={}; log="$out/$(echo "$file" | tr / _).log";
   if "$nvcc" -std=c++17 -O3 -DNDEBUG "${nvcc_args[@]}" -I "$(dirname "$file")" -c "$file" \
        -o "$out/$(echo "$file" | tr / _).o" >"$log" 2>&1; then echo "ok      $file";
   else echo "FAILED  $file: $(grep -m1 -E "error" "$log")"; fi' | sort)
echo "$results"
failed=$(echo "$results" | grep -c '^FAILED')
echo "$(echo "$results" | grep -c '^ok') compiled, $failed failed"
[ "$failed" = 0 ]
