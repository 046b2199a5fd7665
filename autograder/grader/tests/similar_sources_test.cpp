// Identical lab sources across a batch: what a student changed is compared, the stub's own files
// are not, and nothing is followed.
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/submission/similar_sources.hpp>

#include <gtest/gtest.h>

namespace reduce::grade {
namespace {

class SimilarSources : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("reduce-grade-similar-");
    // The course's stub: a README and a sum.cu to complete.
    write_file(dir_ / "stubs" / "04_sequential" / "README.md", "# lab 4\n");
    write_file(dir_ / "stubs" / "04_sequential" / "sum.cu", "// TODO\n");
    write_file(dir_ / "stubs" / "09_warp_shuffle" / "sum.cu", "// TODO\n");
  }
  void TearDown() override { remove_all_quietly(dir_); }

  /// A student's lab folder: the stub's README and \p sum as sum.cu.
  fs::path student(const std::string& name, const std::string& sum) {
    const fs::path lab = dir_ / "subs" / name / "04_sequential";
    write_file(lab / "README.md", "# lab 4\n");
    write_file(lab / "sum.cu", sum);
    trees_.emplace_back(name, dir_ / "subs" / name);
    return lab;
  }

  std::vector<SimilarGroup> groups() const {
    return find_similar_sources(trees_, {"04_sequential", "09_warp_shuffle"}, dir_ / "stubs");
  }

  fs::path dir_;
  std::vector<std::pair<std::string, fs::path>> trees_;
};

TEST_F(SimilarSources, ByteIdenticalChangesAreGroupedTheStubIsNot) {
  student("alice", "float sum() { return 1; }\n");
  student("bob", "float sum() { return 2; }\n");
  student("carol", "// TODO\n");  // the untouched stub
  student("dave", "// TODO\n");
  const fs::path erin = student("erin", "float sum() { return 1; }\n");
  write_file(erin / "notes.txt", "mine\n");  // one more file: not identical
  student("mallory", "float sum() { return 1; }\n");
  // frank's README differs from the stub's, his sum.cu is alice's: not identical either.
  student("frank", "float sum() { return 1; }\n");
  write_file(dir_ / "subs" / "frank" / "04_sequential" / "README.md", "# my lab 4\n");
  // Two students with the same work in lab 9 as well, a folder below.
  for (const char* name : {"bob", "dave"})
    write_file(dir_ / "subs" / name / "09_warp_shuffle" / "kernels" / "k.cuh", "// k\n");
  const std::vector<SimilarGroup> g = groups();
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].lab, "04_sequential");
  EXPECT_EQ(g[0].students, (std::vector<std::string>{"alice", "mallory"}));
  EXPECT_EQ(g[1].lab, "09_warp_shuffle");
  EXPECT_EQ(g[1].students, (std::vector<std::string>{"bob", "dave"}));
  const std::string text = similar_sources_text(g, trees_.size());
  EXPECT_TRUE(contains(text, "\n04_sequential: alice, mallory\n09_warp_shuffle: bob, dave\n"))
      << text;
  EXPECT_TRUE(contains(text, "never a grade")) << text;
  EXPECT_TRUE(contains(similar_sources_text({}, 3), "no identical lab sources")) << text;
}

TEST_F(SimilarSources, NothingIsFollowed) {
  student("alice", "float sum() { return 1; }\n");
  // mallory's lab folder, and a file of bob's, are links to alice's: not compared.
  fs::create_directories(dir_ / "subs" / "mallory");
  fs::create_directory_symlink("../alice/04_sequential",
                               dir_ / "subs" / "mallory" / "04_sequential");
  trees_.emplace_back("mallory", dir_ / "subs" / "mallory");
  const fs::path bob = student("bob", "");
  fs::remove(bob / "sum.cu");
  fs::create_symlink("../../alice/04_sequential/sum.cu", bob / "sum.cu");
  // carol's labs/ is a link to alice's tree.
  fs::create_directories(dir_ / "subs" / "carol");
  fs::create_directory_symlink("../alice", dir_ / "subs" / "carol" / "labs");
  trees_.emplace_back("carol", dir_ / "subs" / "carol" / "labs");
  EXPECT_TRUE(groups().empty());
}

TEST_F(SimilarSources, HostileNamesAreListedInert) {
  student("\x1b]0;pwned\x07", "float sum() { return 1; }\n");
  student("=HYPERLINK(\"x\")", "float sum() { return 1; }\n");
  const std::string text = similar_sources_text(groups(), trees_.size());
  EXPECT_TRUE(contains(text, "04_sequential: \\x1b]0;pwned\\x07, =HYPERLINK(\"x\")\n")) << text;
  EXPECT_FALSE(contains(text, "\x1b"));
}

}  // namespace
}  // namespace reduce::grade
