#!/usr/bin/env bash
# tools/setup's CMake version check (ctest tools.setup_cmake_version, label cpu), offline and as
# any user: stand-in cmake, pip, dpkg-query and nvcc first on PATH, a HOME of its own, and a copy
# of tools/setup alone (no tools/maint beside it, so no clang-format install). Cases: apt's
# CMake 3.22 with pip working (setup installs 3.25+ and says what to add to PATH), the same with
# pip failing (exit 1, with what to run), and a CMake new enough (pip never called).
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
  env -u PYTHONUSERBASE HOME="$work/home" PATH="$work/fake:$PATH" \
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
expect "old cmake, pip works" "setup: ready (CMake 3.31.6;"
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
expect "new cmake" "setup: ready (CMake 3.28.3;"
if [ -e "$work/pip.log" ]; then
  echo "FAILED new cmake: pip was called although CMake 3.28.3 is new enough"
  failures=$((failures + 1))
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures failed"
  exit 1
fi
echo "tools/setup's CMake version check: 3 cases passed"
