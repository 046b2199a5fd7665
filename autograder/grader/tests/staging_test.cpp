// Staging: a submission's lab folder is copied into a fresh folder, refusing symbolic links,
// special files, hard links and oversized files; the contract headers are staged alone.
#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/submission/staging.hpp>

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace reduce::grade {
namespace {

class StagingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("reduce-grade-stage-");
    lab_ = dir_ / "submission" / "09_warp_shuffle";
    staged_ = dir_ / "staging" / "09_warp_shuffle";
    write_file(lab_ / "sum.cu", "#include \"helper.cuh\"\n");
    write_file(lab_ / "helper.cuh", "#pragma once\n");
  }
  void TearDown() override { remove_all_quietly(dir_); }

  /// True when some problem contains all of \p parts.
  static bool has_problem(const StageResult& r, std::initializer_list<const char*> parts) {
    for (const std::string& p : r.problems) {
      bool all = true;
      for (const char* part : parts) all = all && contains(p, part);
      if (all) return true;
    }
    return false;
  }

  fs::path dir_, lab_, staged_;
};

TEST_F(StagingTest, CopiesRegularFilesAndFolders) {
  write_file(lab_ / "kernels" / "deep" / "tile.cuh", "// tile\n");
  write_file(lab_ / "my helper.cuh", "// a space in the name\n");
  ::chmod((lab_ / "sum.cu").c_str(), 0755);
  const StageResult r = stage_lab(lab_, staged_);
  ASSERT_TRUE(r.ok) << r.describe();
  EXPECT_EQ(r.files.size(), 4u);
  EXPECT_EQ(read_file(staged_ / "sum.cu"), "#include \"helper.cuh\"\n");
  EXPECT_EQ(read_file(staged_ / "kernels" / "deep" / "tile.cuh"), "// tile\n");
  EXPECT_EQ(read_file(staged_ / "my helper.cuh"), "// a space in the name\n");
  EXPECT_EQ(fs::status(staged_ / "sum.cu").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                fs::perms::others_read);
  EXPECT_EQ(r.describe(), "staged 4 files");
}

TEST_F(StagingTest, RefusesSymbolicLinksEverywhere) {
  write_file(dir_ / "solutions" / "sum.cu", "// the answer\n");
  fs::create_symlink(dir_ / "solutions" / "sum.cu", lab_ / "answer.cuh");
  fs::create_directories(lab_ / "sub");
  fs::create_symlink("does/not/exist", lab_ / "sub" / "dangling.cuh");
  fs::create_directory_symlink(dir_ / "solutions", lab_ / "linked_folder");
  const StageResult r = stage_lab(lab_, staged_);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(has_problem(r, {"09_warp_shuffle/answer.cuh", "symbolic link", "solutions"}))
      << r.describe();
  EXPECT_TRUE(has_problem(r, {"09_warp_shuffle/sub/dangling.cuh", "symbolic link"}))
      << r.describe();
  EXPECT_TRUE(has_problem(r, {"09_warp_shuffle/linked_folder", "symbolic link"})) << r.describe();
  // Nothing half-staged is left to compile, and nothing was followed.
  EXPECT_TRUE(is_empty_dir(staged_));
  EXPECT_TRUE(r.files.empty());
}

TEST_F(StagingTest, RefusesALabFolderThatIsALink) {
  fs::create_directory_symlink(lab_, dir_ / "submission" / "10_max_min");
  const StageResult r = stage_lab(dir_ / "submission" / "10_max_min", dir_ / "staging" / "10");
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(has_problem(r, {"10_max_min: is a symbolic link (to ", "regular files and folders"}))
      << r.describe();
}

// A submission is its own files: a link above the lab folder (its labs/, a zip's top folder)
// is refused, and nothing is read through it.
TEST_F(StagingTest, RefusesALabsFolderThatIsALinkToAnotherStudent) {
  const fs::path alice = dir_ / "batch" / "alice" / "labs" / "09_warp_shuffle";
  write_file(alice / "sum.cu", "// alice's work\n");
  fs::create_directories(dir_ / "batch" / "mallory");
  fs::create_directory_symlink("../alice/labs", dir_ / "batch" / "mallory" / "labs");
  const StageResult r = stage_lab(dir_ / "batch" / "mallory" / "labs" / "09_warp_shuffle", staged_);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(has_problem(r, {"09_warp_shuffle: the folder labs that holds it is a symbolic link "
                              "(to ../alice/labs); a submission must be its own folders and "
                              "regular files, and nothing is read through a link"}))
      << r.describe();
  EXPECT_TRUE(is_empty_dir(staged_));
  EXPECT_TRUE(r.files.empty());
  // The same lab folder named by its real path is alice's, and stages.
  EXPECT_TRUE(stage_lab(alice, dir_ / "staging" / "alice").ok);
  // A zip's top folder that is a link (mallory/work -> ../alice) is refused the same way.
  fs::create_directory_symlink("../alice", dir_ / "batch" / "mallory" / "work");
  const StageResult zip = stage_lab(
      dir_ / "batch" / "mallory" / "work" / "labs" / "09_warp_shuffle", dir_ / "staging" / "z");
  EXPECT_TRUE(has_problem(zip, {"the folder work that holds it is a symbolic link (to ../alice)"}))
      << zip.describe();
}

TEST_F(StagingTest, RefusesASubmissionFolderThatIsALink) {
  fs::create_directory_symlink("submission", dir_ / "mallory");
  const std::string expected =
      "the submission folder mallory is a symbolic link (to submission): a submission must be "
      "its own folder of regular files, so none of its labs is graded";
  for (const fs::path& named :
       {dir_ / "mallory", fs::path((dir_ / "mallory").string() + "/"), dir_ / "mallory" / "."}) {
    SCOPED_TRACE(named.string());
    try {
      refuse_linked_submission(named);
      ADD_FAILURE() << "not refused";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), expected);
    }
  }
  // Its own folder passes, and so does a folder reached through a link above it (a course
  // checked out through a link is not the submission's doing).
  EXPECT_NO_THROW(refuse_linked_submission(dir_ / "submission"));
  fs::create_directory_symlink(dir_, dir_.string() + "-via-link");
  EXPECT_NO_THROW(refuse_linked_submission(dir_.string() + "-via-link/submission"));
  fs::remove(dir_.string() + "-via-link");
}

TEST_F(StagingTest, AControlCharacterInANameIsRefusedAndShownInert) {
  write_file(lab_ / "\x1b]0;pwned\x07.cuh", "");
  // UTF-8 with a C1 control or an override, and bytes that are not UTF-8: a report could show
  // them only escaped, and the compiler's dependency list would carry them raw.
  write_file(lab_ / "caf\xc3\xa9\xc2\x9b.cuh", "");
  write_file(lab_ / "\xff\xfe.cuh", "");
  write_file(lab_ / "\xe2\x80\xaeuc.cuh", "");
  write_file(lab_ / "caf\xc3\xa9.cuh", "");  // plain UTF-8 is taken
  const StageResult r = stage_lab(lab_, staged_);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.problems.size(), 4u) << r.describe();
  EXPECT_EQ(r.problems[0],
            "09_warp_shuffle/\\x1b]0;pwned\\x07.cuh: has an unusual character in its name (a "
            "control or bidirectional character, bytes that are not UTF-8, or a backslash)");
  for (const std::string& p : r.problems) EXPECT_EQ(inert_text(p), p);
  for (const std::string& p : r.problems) EXPECT_EQ(p.find("caf\xc3\xa9.cuh"), std::string::npos);
}

TEST_F(StagingTest, RefusesSpecialFiles) {
  ASSERT_EQ(::mkfifo((lab_ / "pipe.cuh").c_str(), 0644), 0);
  // A unix socket bound in the lab folder (its path must fit sun_path).
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string socket_path = (lab_ / "s.sock").string();
  bool bound = false;
  if (socket_path.size() < sizeof(address.sun_path)) {
    std::strcpy(address.sun_path, socket_path.c_str());
    bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  const StageResult r = stage_lab(lab_, staged_);
  ::close(fd);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(has_problem(r, {"09_warp_shuffle/pipe.cuh", "not a regular file", "fifo"}))
      << r.describe();
  if (bound) {
    EXPECT_TRUE(has_problem(r, {"09_warp_shuffle/s.sock", "not a regular file", "socket"}))
        << r.describe();
  }
}

TEST_F(StagingTest, RefusesHardLinks) {
  write_file(dir_ / "outside.cu", "// somebody else's file\n");
  fs::create_hard_link(dir_ / "outside.cu", lab_ / "borrowed.cuh");
  const StageResult r = stage_lab(lab_, staged_);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(has_problem(r, {"09_warp_shuffle/borrowed.cuh", "hard link"})) << r.describe();
}

TEST_F(StagingTest, RefusesOversizedFiles) {
  write_file(lab_ / "table.cuh", std::string((std::size_t{1} << 20) + 1, 'x'));
  const StageResult r = stage_lab(lab_, staged_);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(has_problem(r, {"09_warp_shuffle/table.cuh", "too large", "1 MiB"})) << r.describe();
}

TEST_F(StagingTest, LimitsOnCountDepthTotalAndNames) {
  StageLimits few;
  few.max_files = 3;
  write_file(lab_ / "a.cuh", "");
  write_file(lab_ / "b.cuh", "");
  EXPECT_TRUE(has_problem(stage_lab(lab_, staged_, few), {"too many files"}));

  StageLimits shallow;
  shallow.max_depth = 1;
  write_file(lab_ / "x" / "y" / "z.cuh", "");
  EXPECT_TRUE(has_problem(stage_lab(lab_, dir_ / "s2", shallow), {"x/y", "nested too deeply"}));

  StageLimits small;
  small.max_total_bytes = 30;
  EXPECT_TRUE(has_problem(stage_lab(lab_, dir_ / "s3", small), {"too large"}));

  write_file(lab_ / "bad\nname.cuh", "");
  EXPECT_TRUE(has_problem(stage_lab(lab_, dir_ / "s4"), {"bad\\x0aname.cuh", "unusual character"}));
}

TEST_F(StagingTest, StagingFolderMustBeFresh) {
  write_file(staged_ / "old.cu", "");
  const StageResult r = stage_lab(lab_, staged_);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(has_problem(r, {"not empty"}));
  EXPECT_TRUE(fs::exists(staged_ / "old.cu"));  // left alone
}

TEST_F(StagingTest, ContractHeadersAreStagedAlone) {
  const fs::path include = dir_ / "staging" / "include";
  const StageResult r = stage_contract_headers(REDUCE_GRADE_TEST_ROOT, include);
  ASSERT_TRUE(r.ok) << r.describe();
  ASSERT_EQ(r.files.size(), contract_header_names().size());
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(include / "reduce")) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 4u);
  for (const char* name : {"lab.cuh", "cuda_check.cuh", "multi_pass.cuh", "not_implemented.hpp"})
    EXPECT_EQ(read_file(include / "reduce" / name),
              read_file(fs::path(REDUCE_GRADE_TEST_ROOT) / "common/include/reduce" / name));
  // Nothing else of the course is reachable from the staged include folder.
  EXPECT_FALSE(fs::exists(include / "reduce" / "ceiling.cuh"));
  EXPECT_FALSE(fs::exists(include / "reduce/../../../solutions"));
  // Staging again replaces the copies.
  EXPECT_TRUE(stage_contract_headers(REDUCE_GRADE_TEST_ROOT, include).ok);

  const StageResult bad =
      stage_contract_headers(REDUCE_GRADE_TEST_ROOT, include, {"../../solutions/x.cu", "nope.cuh"});
  EXPECT_FALSE(bad.ok);
  EXPECT_TRUE(has_problem(bad, {"not the name of a header"})) << bad.describe();
  EXPECT_TRUE(has_problem(bad, {"nope.cuh", "does not exist"})) << bad.describe();
}

}  // namespace
}  // namespace reduce::grade
