// Ninja's build and deps logs read directly (ninja_logs.hpp), against ninja's own `-t deps` on a
// small build it ran, and while a record is still being written (a truncated copy).
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/processes/process.hpp>
#include <reduce_grade/submission/ninja_logs.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace reduce::grade {
namespace {

namespace fs = std::filesystem;

/// Runs ninja with \p args in \p dir; its output.
std::string ninja(const fs::path& dir, const std::vector<std::string>& args) {
  ProcessSpec spec;
  spec.argv = {"ninja", "-C", dir.string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.timeout_s = 60;
  const ProcessResult r = run_process(spec);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

/// A build folder where ninja made two objects whose "compiles" wrote depfiles (deps = gcc),
/// one of them with a path holding a space, and one output without deps.
struct SmallBuild {
  fs::path dir = make_temp_dir("reduce-grade-ninja-");
  SmallBuild() {
    write_file(dir / "a.c", "");
    write_file(dir / "b.c", "");
    write_file(dir / "build.ninja",
               "rule cc\n"
               "  command = printf '%s: %s\\n' $out \"$reads\" > $out.d && touch $out\n"
               "  depfile = $out.d\n"
               "  deps = gcc\n"
               "rule link\n"
               "  command = cat $in > $out\n"
               "build obj/a.o: cc a.c\n"
               "  reads = a.c /usr/include/stdio.h lab/my\\\\$ helper.h\n"
               "build obj/b.o: cc b.c\n"
               "  reads = b.c common/x.h\n"
               "build lib/liblab.so: link obj/a.o obj/b.o\n");
    ninja(dir, {});
  }
  ~SmallBuild() { remove_all_quietly(dir); }
};

TEST(NinjaLogs, TheDepsLogReadsAsNinjasOwnDepsTool) {
  const SmallBuild build;
  const std::string own = ninja(build.dir, {"-t", "deps"});
  EXPECT_EQ(read_deps_log(build.dir), own);
  EXPECT_NE(own.find("obj/a.o: #deps 3"), std::string::npos) << own;
  EXPECT_NE(own.find("    lab/my helper.h\n"), std::string::npos) << own;
}

TEST(NinjaLogs, FinishedOutputsAreTheBuildLogsOutputs) {
  const SmallBuild build;
  EXPECT_EQ(finished_outputs(build.dir),
            (std::set<std::string>{"obj/a.o", "obj/b.o", "lib/liblab.so"}));
  // A last line still being written does not count.
  const std::string log = read_file(build.dir / ".ninja_log");
  write_file(build.dir / ".ninja_log", log + "1\t2\t3\tlib/libnext.so");
  EXPECT_EQ(finished_outputs(build.dir).count("lib/libnext.so"), 0u);
  EXPECT_TRUE(finished_outputs(build.dir / "nowhere").empty());
}

TEST(NinjaLogs, ARecordStillBeingWrittenEndsTheReading) {
  const SmallBuild build;
  const std::string whole = read_deps_log(build.dir);
  const std::string log = read_file(build.dir / ".ninja_deps");
  // Cut into the last record, the deps of whichever object ninja finished last: the other
  // object's block remains, whole, and the cut one is gone.
  write_file(build.dir / ".ninja_deps", log.substr(0, log.size() - 3));
  const std::string cut = read_deps_log(build.dir);
  EXPECT_EQ(std::count(cut.begin(), cut.end(), '#'), 1) << "one object left:\n" << cut;
  EXPECT_NE(whole.find(cut), std::string::npos) << "its block as in the whole log:\n" << cut;
  write_file(build.dir / ".ninja_deps", "# ninjadeps\n");
  EXPECT_EQ(read_deps_log(build.dir), "") << "a header cut short";
  write_file(build.dir / ".ninja_deps", "# something else, at least sixteen bytes\n");
  EXPECT_EQ(read_deps_log(build.dir), "");
  EXPECT_EQ(read_deps_log(build.dir / "nowhere"), "");
}

}  // namespace
}  // namespace reduce::grade
