/// \file
/// \brief Stand-in checkers for the grader's tests, written as shell scripts around the fake
/// suite (fake_suite.cpp, REDUCE_GRADE_FAKE_SUITE): shared by the tests of the suite runner and
/// of the correctness phase.
#pragma once

#include <reduce_grade/base/util.hpp>
#include <reduce_grade/observations/gtest_suite.hpp>

#include <string>

namespace reduce::grade {

/// checker_main's --labs-file mode, in miniature, written into \p dir: for each part (a lab's
/// operation), the marked line, then the tests its filter (the plan's sixth field) selects,
/// listed or run with FAKE_MODE=$mode. \p per_part: shell lines run first for each part, with
/// $lab, $op and $list set; they may set $mode.
inline SuiteOptions several_labs_checker(const fs::path& dir, const std::string& per_part) {
  const fs::path checker = dir / "several-labs";
  write_file(checker,
             "#!/bin/sh\n"
             "plan=''; mark=$REDUCE_LAB_MARK; list=''; record=''; i=0\n"
             "for a in \"$@\"; do case \"$a\" in --labs-file=*) plan=${a#--labs-file=};;\n"
             "  --lab-mark=*) mark=${a#--lab-mark=};;\n"
             "  --record=*) record=$a;;\n"
             "  --gtest_list_tests) list=--gtest_list_tests;; esac; done\n"
             "cut -f1,2,6 \"$plan\" | while read -r lab op filter; do\n"
             "  echo \"[ lab      ] $mark 0 $lab $op\"\n"
             "  mode=''; part=''\n"
             "  [ -n \"$record\" ] && part=\"$record --record-part=$i,0\"\n" +
                 per_part +
                 "  FAKE_MODE=$mode " REDUCE_GRADE_FAKE_SUITE
                 " --gtest_filter=$filter --gtest_color=no $list $part\n"
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

}  // namespace reduce::grade
