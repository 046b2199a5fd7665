#!/usr/bin/env bash
# tools/setup's CMake version check and its report of the GPU parts (ctest
# tools.setup_cmake_version, label cpu), offline and as any user: stand-in cmake, pip, dpkg-query,
# nvcc, nvidia-smi and compute-sanitizer first on PATH, a HOME of its own, and a copy of
# tools/setup alone (no tools/maint beside it, so no clang-format install). Cases: apt's CMake
# 3.22 with pip working (setup installs 3.25+ and says what to add to PATH), the same with pip
# failing (exit 1, with what to run), and a CMake new enough (pip never called); then a GPU with
# its driver and compute-sanitizer, a driver that does not answer, a driver older than nvcc, a
# GPU below compute capability 7.5, and no compute-sanitizer: each says what it found and what is
# missing, and exits 0.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
real_python=$(command -v python3)
failures=0

# A stand-in in $work/fake: the command name and its body.
fake() {
  mkdir -p "$work/fake"
  printf '#!/usr/bin/env bash\n%s\n' "$2" >"$work/fake/$1"
  chmod +x "$work/fake/$1"
}

# The stand-ins of one case: the first cmake on PATH says $1; pip exits $2 (0: it installs a
# CMake 3.31.6 into the user base's bin, as `pip install --user` does).
stand_ins() {
  rm -rf "${work:?}/fake" "${work:?}/home" "${work:?}/pip.log"
  mkdir -p "$work/home"
  fake cmake "echo 'cmake version $1'; echo; echo 'CMake suite maintained by Kitware'"
  fake dpkg-query "echo 'install ok installed'"
  fake nvcc "echo 'Cuda compilation tools, release 12.8, V12.8.93'"
  fake python3 "if [ \"\${1:-}\" = -m ] && [ \"\${2:-}\" = pip ]; then
  echo \"\$*\" >>'$work/pip.log'
  [ $2 -eq 0 ] || { echo 'ERROR: no matching distribution' >&2; exit 1; }
  bin=\$('$real_python' -m site --user-base)/bin
  mkdir -p \"\$bin\"
  printf '#!/bin/sh\necho \"cmake version 3.31.6\"\n' >\"\$bin/cmake\"
  chmod +x \"\$bin/cmake\"
  exit 0
fi
exec '$real_python' \"\$@\""
}

# Runs the copy of tools/setup with the stand-ins first on PATH; its output in $work/out.
run_setup() {
  mkdir -p "$work/course/tools"
  cp "$here/tools/setup" "$work/course/tools/setup"
  set +e
  env -u PYTHONUSERBASE -u CUDA_HOME -u CUDA_PATH HOME="$work/home" PATH="$work/fake:$PATH" \
    "$work/course/tools/setup" >"$work/out" 2>&1
  status=$?
  set -e
}

# Fails the case ($1) when the output lacks the fixed string $2.
expect() {
  grep -qF -- "$2" "$work/out" && return 0
  echo "FAILED $1: no \"$2\" in setup's output:"
  sed 's/^/  | /' "$work/out"
  failures=$((failures + 1))
}

expect_status() {
  [ "$status" -eq "$2" ] && return 0
  echo "FAILED $1: exit $status, expected $2"
  failures=$((failures + 1))
}

stand_ins 3.22.1 0
run_setup
expect_status "old cmake, pip works" 0
expect "old cmake, pip works" "CMake 3.22.1 is older than 3.25"
expect "old cmake, pip works" "setup: CMake 3.31.6 is in $work/home/.local/bin: add it to PATH"
expect "old cmake, pip works" "export PATH=\"\$HOME/.local/bin:\$PATH\""
expect "old cmake, pip works" "setup: ready to build (CMake 3.31.6;"
if [ "$(grep -c "add it to PATH" "$work/out")" -ne 1 ]; then
  echo "FAILED old cmake, pip works: the PATH line is not said exactly once"
  failures=$((failures + 1))
fi
grep -qF -- "install --user --quiet cmake>=3.25" "$work/pip.log" 2>/dev/null || {
  echo "FAILED old cmake, pip works: pip was not asked for cmake>=3.25 with --user"
  failures=$((failures + 1))
}

stand_ins 3.22.1 1
run_setup
expect_status "old cmake, pip fails" 1
expect "old cmake, pip fails" "setup: pip could not install CMake 3.25 or newer"
expect "old cmake, pip fails" "still missing: cmake 3.25+ (this one is 3.22.1)"
expect "old cmake, pip fails" "python3 -m pip install --user 'cmake>=3.25'"
expect "old cmake, pip fails" "cannot build without: cmake 3.25+ (this one is 3.22.1)"
if grep -q "apt-get install -y.*cmake" "$work/out"; then
  echo "FAILED old cmake, pip fails: setup offers apt's cmake, the one too old"
  failures=$((failures + 1))
fi

stand_ins 3.28.3 0
run_setup
expect_status "new cmake" 0
expect "new cmake" "setup: ready to build (CMake 3.28.3;"
if [ -e "$work/pip.log" ]; then
  echo "FAILED new cmake: pip was called although CMake 3.28.3 is new enough"
  failures=$((failures + 1))
fi

# The GPU parts' stand-ins: nvidia-smi whose header says the driver runs CUDA up to $1 and whose
# query answers $2 ("fail": nvidia-smi cannot reach the driver), and a compute-sanitizer where
# $3 is "yes". CMake 3.28.3 and nvcc 12.8 as above.
gpu_stand_ins() {
  stand_ins 3.28.3 0
  if [ "$2" = fail ]; then
    fake nvidia-smi "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"; exit 9"
  else
    fake nvidia-smi "case \"\$*\" in
  *--query-gpu=name,compute_cap,memory.total*) echo '$2' ;;
  *--query-gpu*) exit 2 ;;
  *) echo '| NVIDIA-SMI 580.65.06    Driver Version: 580.65.06    CUDA Version: $1     |' ;;
esac"
  fi
  [ "$3" != yes ] ||
    fake compute-sanitizer "echo 'NVIDIA (R) Compute Sanitizer'; echo 'Version 2025.3.0.0 build 36492512'"
}

gpu_stand_ins 13.0 "NVIDIA H200, 9.0, 143771 MiB" yes
run_setup
expect_status "a GPU" 0
expect "a GPU" "NVIDIA driver:     580.65.06 (runs CUDA up to 13.0)"
expect "a GPU" "GPU:               NVIDIA H200, compute capability 9.0, 143771 MiB"
expect "a GPU" "compute-sanitizer: $work/fake/compute-sanitizer (2025.3.0.0)"
expect "a GPU" "setup: ready to build (CMake 3.28.3; nvcc 12.8) and to run on the GPU (NVIDIA H200 (9.0), compute-sanitizer)"

gpu_stand_ins 13.0 fail yes
run_setup
expect_status "a driver that does not answer" 0
expect "a driver that does not answer" "not answering: nvidia-smi says \"NVIDIA-SMI has failed"
expect "a driver that does not answer" "the GPU parts will skip or lose points here, for want of: an NVIDIA driver that answers"
expect "a driver that does not answer" "Where to get a GPU"

gpu_stand_ins 11.8 "Tesla T4, 7.5, 15360 MiB" yes
run_setup
expect_status "a driver older than nvcc" 0
expect "a driver older than nvcc" "nvcc 12.8 builds programs this driver cannot start (it runs CUDA up to 11.8)"
expect "a driver older than nvcc" "for want of: a driver for CUDA 12.8"

gpu_stand_ins 12.4 "Tesla P100-PCIE-16GB, 6.0, 16384 MiB" yes
run_setup
expect_status "a GPU below 7.5" 0
expect "a GPU below 7.5" "programs built for this GPU run through CUDA's minor version compatibility"
expect "a GPU below 7.5" "compute capability 6.0 is below the 7.5 the course needs"
expect "a GPU below 7.5" "for want of: a GPU of compute capability 7.5 or newer"

# No compute-sanitizer: only where none is installed where setup looks beyond the stand-ins.
sanitizer_here=""
for dir in /usr/local/cuda/bin /usr/local/cuda/compute-sanitizer; do
  [ ! -x "$dir/compute-sanitizer" ] || sanitizer_here=$dir
done
command -v compute-sanitizer >/dev/null && sanitizer_here=$(command -v compute-sanitizer)
if [ -z "$sanitizer_here" ]; then
  gpu_stand_ins 13.0 "NVIDIA H200, 9.0, 143771 MiB" no
  run_setup
  expect_status "no compute-sanitizer" 0
  expect "no compute-sanitizer" "compute-sanitizer: not found"
  expect "no compute-sanitizer" "a grade here gives no sanitizer points"
  expect "no compute-sanitizer" "for want of: compute-sanitizer"
else
  echo "not checked here: setup without compute-sanitizer (this machine has $sanitizer_here)"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures failed"
  exit 1
fi
echo "tools/setup's CMake version check and GPU report: every case passed"
