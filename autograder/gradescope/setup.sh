#!/usr/bin/env bash
# Gradescope autograder setup: runs once, as root, when the autograder image is built.
#
# The autograder zip holds the course (CMakeLists.txt, cmake/, common/, labs/, autograder/ with
# the hidden tests, the rubric and the grader's sources) with this file and run_autograder copied
# to its top level; Gradescope unpacks it into /autograder/source. docs/grader.md ("Gradescope")
# shows how to make the zip.
#
# CUDA must be present: use a Gradescope base image with the CUDA toolkit (nvcc 12 or newer and
# compute-sanitizer), or install it below from NVIDIA's repository. Without a GPU at grading time
# reduce-grade still builds every lab and gives build points only (the results say so).
set -euo pipefail
SOURCE=/autograder/source
BUILD=/autograder/grader-build

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends \
  build-essential cmake ninja-build git ca-certificates curl \
  libgtest-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev libfmt-dev

# toml++ is packaged in Debian 12 / Ubuntu 24.04 (libtomlplusplus-dev); older images build the
# header-only library from its release tag.
if ! apt-get install -y --no-install-recommends libtomlplusplus-dev; then
  git clone --depth 1 --branch v3.4.0 https://github.com/marzer/tomlplusplus.git /tmp/tomlplusplus
  cmake -S /tmp/tomlplusplus -B /tmp/tomlplusplus/build -DCMAKE_INSTALL_PREFIX=/usr/local
  cmake --install /tmp/tomlplusplus/build
fi

# CUDA: the course's labs and tests are CUDA code.
if ! command -v nvcc >/dev/null 2>&1; then
  if [ -x /usr/local/cuda/bin/nvcc ]; then
    echo 'export PATH=/usr/local/cuda/bin:$PATH' >/etc/profile.d/cuda.sh
    export PATH=/usr/local/cuda/bin:$PATH
  else
    echo "setup.sh: nvcc not found. Use a CUDA base image, or install the CUDA toolkit here, e.g.:" >&2
    echo "  apt-get install -y cuda-toolkit-12-8   (after adding NVIDIA's apt repository)" >&2
    exit 1
  fi
fi
nvcc --version

# The grader needs no CUDA itself; build it from the course's sources.
cmake -S "$SOURCE/autograder/grader" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" --target reduce-grade
"$BUILD/reduce-grade" --version
chmod +x "$SOURCE/run_autograder" 2>/dev/null || true
