/// \file
/// \brief Stand-in checkers for the grader's tests, written as shell scripts around the fake
/// suite (fake_suite.cpp, REDUCE_GRADE_FAKE_SUITE): shared by the tests of the suite runner and
/// of the correctness phase.
#pragma once

#include <reduce_grade/base/util.hpp>
#include <reduce_grade/observations/gtest_suite.hpp>
#include <reduce_vocabulary/launch_spec.hpp>

#include <string>

namespace reduce::grade {

/// checker_main over its launch spec's labs, in miniature, written into \p dir: for each part (a
/// lab's operation), held where its spec says so (a run, not a listing, waits for the lab's file
/// in the hold folder, up to the hold's limit counted from its start, says how long before the
/// first part as the checker does, and leaves the part unopened past the limit or on any word but
/// "go"), then the marked line, then the tests its filter selects, listed or run with
/// FAKE_MODE=$mode. It reads the mark, the hold and the labs from its spec through the course's
/// reader (the fake suite's --spec=WHAT). \p per_part: shell lines run first for each opened
/// part, with $lab, $op and $list set; they may set $mode.
inline SuiteOptions several_labs_checker(const fs::path& dir, const std::string& per_part) {
  const fs::path checker = dir / "several-labs";
  write_file(
      checker,
      "#!/bin/sh\n"
      "mark=$(" REDUCE_GRADE_FAKE_SUITE
      " --spec=mark) || exit 2\n"
      "list=''; record=''; i=0; said=''\n"
      "for a in \"$@\"; do case \"$a\" in --record=*) record=$a;;\n"
      "  --gtest_list_tests) list=--gtest_list_tests;; esac; done\n"
      "hold=$(" REDUCE_GRADE_FAKE_SUITE " --spec=hold); limit=$(" REDUCE_GRADE_FAKE_SUITE
      " --spec=hold_limit); from=$(date +%s.%N)\n"
      "held() { awk -v a=$from -v b=$(date +%s.%N) 'BEGIN { printf \"%.2f\", b - a }'; }\n"
      "released() {  # released LAB: whether the grader said go for it\n"
      "  [ -z \"$list\" ] && [ -n \"$hold\" ] || return 0\n"
      "  while [ ! -e \"$hold/$1\" ] && awk -v h=$(held) -v l=$limit 'BEGIN { exit !(h <= l) }'\n"
      "  do sleep 0.02; done\n"
      "  [ -n \"$said\" ] || echo \"[ startup  ] held until the labs were built: $(held) s\"\n"
      "  said=1\n"
      "  why='no word from the grader within the hold'\\''s limit'\n"
      "  [ -e \"$hold/$1\" ] && why='the grader said it did not build or pass its checks'\n"
      "  [ -e \"$hold/$1\" ] && [ \"$(cat \"$hold/$1\")\" = go ] && return 0\n"
      "  echo \"checker: $1 untested: $why\"; return 1\n"
      "}\n" REDUCE_GRADE_FAKE_SUITE
      " --spec=labs | cut -f1,2,6 | while read -r lab op filter; do\n"
      "  if released \"$lab\"; then\n"
      "  echo \"[ lab      ] $mark 0 $lab $op\"\n"
      "  mode=''; part=''\n"
      "  [ -n \"$record\" ] && part=\"$record --record-part=$i,0\"\n" +
          per_part +
          "  FAKE_MODE=$mode " REDUCE_GRADE_FAKE_SUITE
          " --gtest_filter=$filter --gtest_color=no $list $part\n"
          "  fi\n"
          "  i=$((i + 1))\n"
          "done\n");
  fs::permissions(checker, fs::perms::owner_all);
  SuiteOptions options;
  options.binary = checker;
  options.timeout_s = 30;
  options.log_dir = dir / "logs";
  options.log_stem = "group_0";
  return options;
}

/// The labs of the checker's launch spec \p file, read by the course's reader, one line each:
/// "name<TAB>op<TAB>order<TAB>entry<TAB>library<TAB>filter[<TAB>filter...]".
inline std::string planned_lines(const fs::path& file) {
  std::string lines;
  for (const launch::PlannedLab& lab :
       launch::read_launch_spec(file.string(), launch::Child::kChecker).labs) {
    lines += lab.name + "\t" + lab.op + "\t" + lab.order + "\t" + lab.entry + "\t" + lab.library;
    for (const std::string& filter : lab.filters) lines += "\t" + filter;
    lines += "\n";
  }
  return lines;
}

}  // namespace reduce::grade
