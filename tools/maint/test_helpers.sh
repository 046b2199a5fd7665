#!/usr/bin/env bash
# What the tools' shell tests share (sourced by test_tool_help.sh and test_lab_test.sh): a case's
# output is in $work/out, and $failures counts the cases that failed.

# fail CASE: counts a failed case and shows the output it judged.
fail() {
  echo "FAILED $1"
  sed 's/^/  | /' "$work/out"
  failures=$((failures + 1))
}

# expect CASE TEXT: fails CASE when the output lacks the fixed string TEXT.
expect() {
  grep -qF -- "$2" "$work/out" || fail "$1: no \"$2\""
}

# finish LINE: exit 1 with the count of failed cases, else print LINE (the script's verdict).
finish() {
  if [ "$failures" -gt 0 ]; then
    echo "$failures failed"
    exit 1
  fi
  echo "$1"
}
