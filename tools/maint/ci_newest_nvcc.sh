#!/usr/bin/env bash
# CI: compiles every lab and solution with the newest nvcc on PyPI for sm_75, sm_80, sm_89 and
# sm_90 (tools/maint/compile_labs.sh), beside the toolkit the course is built with. The wheels
# are pinned below; a toolkit from PyPI needs no root and no NVIDIA repository. Where PyPI cannot
# be reached it says so and skips (exit 0); a lab or solution that does not compile fails.
#
#   tools/maint/ci_newest_nvcc.sh [JOBS]
set -euo pipefail
cd "$(dirname "$0")/../.."
jobs=${1:-$(nproc)}
wheels=(nvidia-cuda-nvcc==13.5.37 nvidia-nvvm==13.5.37 nvidia-cuda-crt==13.5.37
  nvidia-cuda-runtime==13.5.37 nvidia-cuda-cccl==13.3.5.0.6)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! python3 -m pip download --no-deps -q -d "$work/wheels" "${wheels[@]}" >"$work/pip.log" 2>&1; then
  echo "ci_newest_nvcc: skipped: the wheels could not be downloaded from PyPI ($(tail -1 "$work/pip.log"))"
  exit 0
fi
for wheel in "$work"/wheels/*.whl; do python3 -m zipfile -e "$wheel" "$work/toolkit"; done
chmod +x "$work"/toolkit/nvidia/cu13/bin/* "$work"/toolkit/nvidia/cu13/nvvm/bin/*
tools/maint/compile_labs.sh "$work/toolkit/nvidia/cu13/bin/nvcc" "75 80 89 90" "$jobs"
