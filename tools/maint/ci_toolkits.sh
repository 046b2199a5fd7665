#!/usr/bin/env bash
# CI: compiles every CUDA source of the course (labs, solutions, common/, the checkers, the
# benchmark: tools/maint/compile_course.sh) with the oldest and the newest nvcc 13 on PyPI, beside
# the toolkit the course is built with. A toolkit from PyPI needs no root and no NVIDIA
# repository: the wheels of one release, pinned below, unpacked into one folder. Where PyPI cannot
# be reached it says so and skips (exit 0); a file that does not compile fails; a file that needs
# what a toolkit lacks falls back with a message (compile_course.sh).
#
#   tools/maint/ci_toolkits.sh [JOBS] [COURSE_ARCHS]
#   COURSE_ARCHS: the architectures of every file but the labs and solutions (those get sm_75,
#   sm_80, sm_89 and sm_90), default "90": the checkers and the benchmark for four architectures
#   would take each toolkit several times as long on CI's 2 cores.
#
# nvcc 12 is not here: PyPI's nvidia-cuda-nvcc-cu12 wheels (12.0 to 12.9) hold ptxas and NVVM's
# headers, no nvcc, cudafe++, cicc or fatbinary.
set -euo pipefail
cd "$(dirname "$0")/../.."
jobs=${1:-$(nproc)}
course_archs=${2:-90}
# Each toolkit: nvcc, NVVM, the front end's headers, the runtime's headers, CCCL and NVTX (the
# benchmark's ranges) of one CUDA release, the versions PyPI carries for it.
toolkits=(
  "13.0 nvidia-cuda-nvcc==13.0.48 nvidia-nvvm==13.0.48 nvidia-cuda-crt==13.0.48
   nvidia-cuda-runtime==13.0.48 nvidia-cuda-cccl==13.0.50 nvidia-nvtx==13.0.39"
  "13.5 nvidia-cuda-nvcc==13.5.37 nvidia-nvvm==13.5.37 nvidia-cuda-crt==13.5.37
   nvidia-cuda-runtime==13.5.37 nvidia-cuda-cccl==13.3.5.0.6 nvidia-nvtx==13.5.25"
)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for toolkit in "${toolkits[@]}"; do
  read -d '' -ra wheels <<<"$toolkit" || true  # every line: -d '' reads to the end
  name=${wheels[0]}
  wheels=("${wheels[@]:1}")
  dir=$work/$name
  echo "ci_toolkits: nvcc $name from PyPI (${wheels[*]})"
  if ! python3 -m pip download --no-deps -q -d "$dir/wheels" "${wheels[@]}" >"$dir.pip.log" 2>&1; then
    echo "ci_toolkits: skipped: the wheels could not be downloaded from PyPI ($(tail -1 "$dir.pip.log"))"
    continue
  fi
  for wheel in "$dir"/wheels/*.whl; do python3 -m zipfile -e "$wheel" "$dir/toolkit"; done
  cu=$dir/toolkit/nvidia/cu13
  find "$cu" -path '*/bin/*' -type f -exec chmod +x {} +
  # 13.0's wheels keep cicc in bin/ and the headers in include/, where its nvcc.profile does not
  # look (nvvm/bin, targets/x86_64-linux/include): without the links its nvcc would take the
  # headers of whatever CUDA the host compiler finds, which compile_course.sh fails.
  if [ ! -e "$cu/nvvm/bin/cicc" ] && [ -e "$cu/bin/cicc" ]; then
    mkdir -p "$cu/nvvm/bin"
    ln -s ../../bin/cicc "$cu/nvvm/bin/cicc"
  fi
  if grep -q '_TARGET_DIR_)/include' "$cu/bin/nvcc.profile" && [ ! -e "$cu/targets" ]; then
    mkdir -p "$cu/targets"
    ln -s .. "$cu/targets/$(uname -m)-linux"
  fi
  tools/maint/compile_course.sh "$cu/bin/nvcc" "75 80 89 90" "$jobs" "$course_archs" || status=1
  rm -rf "$dir"
done
exit "$status"
