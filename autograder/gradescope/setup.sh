#!/usr/bin/env bash
# Gradescope autograder setup: runs once, as root, when Gradescope builds the autograder image.
#
# The zip comes from `reduce-grade gradescope autograder.zip` (docs/grader.md, "Gradescope"): the
# course of one commit, with this file and run_autograder at its top level. Gradescope unpacks
# it into /autograder/source.
#
# Base image: Gradescope's Ubuntu 22.04 or 24.04, variant "Base". Gradescope's images carry no
# CUDA: where the image has no nvcc, this script installs the toolkit from NVIDIA's apt
# repository (CUDA_PACKAGE below). An image that has CUDA already (a manual Docker configuration
# built FROM gradescope/auto-builds with the toolkit, or an NVIDIA CUDA devel image) skips that.
# Gradescope's standard runners have no GPU: there every lab gets its build points only.
#
# CMake: the course needs 3.25 or newer, and Ubuntu 22.04's apt gives 3.22, so an older cmake is
# replaced by PyPI's (pip install cmake, in a virtual environment of its own).
#
# Environment (for testing this script outside Gradescope; Gradescope sets none of these):
#   AUTOGRADER_ROOT            the autograder folder (default /autograder)
#   REDUCE_SETUP_SKIP_PACKAGES 1: install nothing, only check what is there
#   REDUCE_GRADER_PREBUILT     a reduce-grade binary to install instead of building the grader
set -euo pipefail
ROOT=${AUTOGRADER_ROOT:-/autograder}
SOURCE=$ROOT/source
BUILD=$ROOT/grader-build
CUDA_PACKAGE=cuda-toolkit-12-8
CMAKE_MIN=3.25

install_packages() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends \
    build-essential ninja-build git ca-certificates curl binutils python3 python3-venv \
    bubblewrap libgtest-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  # toml++ is packaged in Debian 12 / Ubuntu 24.04 (libtomlplusplus-dev); older images build
  # the header-only library from its release tag.
  if ! apt-get install -y --no-install-recommends libtomlplusplus-dev; then
    git clone --depth 1 --branch v3.4.0 https://github.com/marzer/tomlplusplus.git /tmp/tomlplusplus
    cmake -S /tmp/tomlplusplus -B /tmp/tomlplusplus/build -DCMAKE_INSTALL_PREFIX=/usr/local
    cmake --install /tmp/tomlplusplus/build
  fi
}

cmake_new_enough() {
  command -v cmake >/dev/null 2>&1 || return 1
  local have
  have=$(cmake --version | head -1 | awk '{print $3}')
  [ "$(printf '%s\n%s\n' "$CMAKE_MIN" "$have" | sort -V | head -1)" = "$CMAKE_MIN" ]
}

install_cmake() {
  python3 -m venv /opt/reduce-cmake
  /opt/reduce-cmake/bin/pip install --quiet "cmake>=$CMAKE_MIN"
  ln -sf /opt/reduce-cmake/bin/cmake /usr/local/bin/cmake
  ln -sf /opt/reduce-cmake/bin/ctest /usr/local/bin/ctest
  hash -r
}

install_cuda() {
  # shellcheck disable=SC1091  # the image's own file
  . /etc/os-release
  local repo="ubuntu${VERSION_ID//./}"
  curl -fsSL -o /tmp/cuda-keyring.deb \
    "https://developer.download.nvidia.com/compute/cuda/repos/$repo/x86_64/cuda-keyring_1.1-1_all.deb"
  dpkg -i /tmp/cuda-keyring.deb
  apt-get update
  apt-get install -y --no-install-recommends "$CUDA_PACKAGE"
}

if [ "${REDUCE_SETUP_SKIP_PACKAGES:-0}" != 1 ]; then
  install_packages
  cmake_new_enough || install_cmake
fi
cmake_new_enough || {
  echo "setup.sh: CMake $CMAKE_MIN or newer is needed; found: $(cmake --version 2>&1 | head -1)" >&2
  exit 1
}

# CUDA: the course's labs and checkers are CUDA code; the grader itself needs none.
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  if [ "${REDUCE_SETUP_SKIP_PACKAGES:-0}" != 1 ]; then install_cuda; fi
fi
# run_autograder puts /usr/local/cuda/bin on PATH itself.
[ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH
command -v nvcc >/dev/null 2>&1 || {
  echo "setup.sh: nvcc not found: the CUDA toolkit must be on the image or installable here" >&2
  exit 1
}
nvcc --version | tail -1

mkdir -p "$BUILD"
if [ -n "${REDUCE_GRADER_PREBUILT:-}" ]; then
  install -m 755 "$REDUCE_GRADER_PREBUILT" "$BUILD/reduce-grade"
else
  cmake -S "$SOURCE/autograder/grader" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build "$BUILD" --target reduce-grade
fi
"$BUILD/reduce-grade" --version
chmod +x "$SOURCE/run_autograder"
