// The dependency check: a compile's depfile (nvcc -MD) read with make's escapes, and every
// header it names allowed only inside the lab, the staged contract headers, the toolkit (less
// its library reductions) and the system's folders, after links are resolved.
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/observations/library_check.hpp>
#include <reduce_grade/submission/build.hpp>
#include <reduce_grade/submission/staging.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace reduce::grade {
namespace {

TEST(DependencyParse, MakeSyntax) {
  const std::string text =
      "sum.o : sum.cu \\\n"
      "    /usr/include/stdc-predef.h \\\r\n"
      "    lab/my\\ helper.cuh lab/price$$.cuh lab/hash\\#.cuh lab/bare#.cuh \\\n"
      "    /x/back\\\\slash.h\n"
      "other.o:first.h second.h\n"
      "/usr/include/stdc-predef.h:\n"
      "\n"
      "lab/my\\ helper.cuh:\n";
  const std::vector<std::string> deps = parse_depfile(text);
  const std::vector<std::string> expected = {"sum.cu",
                                             "/usr/include/stdc-predef.h",
                                             "lab/my helper.cuh",
                                             "lab/price$.cuh",
                                             "lab/hash#.cuh",
                                             "lab/bare#.cuh",
                                             "/x/back\\\\slash.h",
                                             "first.h",
                                             "second.h"};
  EXPECT_EQ(deps, expected);
}

TEST(DependencyParse, ALabsDepfileFromNinjasDepsLog) {
  // `ninja -t deps` as the grader reads it once after a build: each object, then its inputs.
  const std::string log =
      "CMakeFiles/submission_04_sequential_sum.dir/staging/04_sequential/sum.cu.o: #deps 3, "
      "deps mtime 1764770000 (VALID)\n"
      "    staging/04_sequential/sum.cu\n"
      "    /usr/include/stdio.h\n"
      "    staging/04_sequential/my helper.cuh\n"
      "\n"
      "CMakeFiles/submission_04_sequential_sum_extra.dir/x.cu.o: #deps 1, deps mtime 1 (VALID)\n"
      "    /elsewhere.h\n"
      "\n"
      "CMakeFiles/submission_10_max_min_maximum.dir/staging/10_max_min/maximum.cu.o: #deps 1, "
      "deps mtime 1764770001 (VALID)\n"
      "    /opt/secret.h\n";
  const std::string depfile = lab_dependencies(log, "04_sequential", "sum");
  EXPECT_EQ(depfile,
            "CMakeFiles/submission_04_sequential_sum.dir/staging/04_sequential/sum.cu.o: "
            "staging/04_sequential/sum.cu /usr/include/stdio.h "
            "staging/04_sequential/my\\ helper.cuh\n");
  EXPECT_EQ(parse_depfile(depfile),
            (std::vector<std::string>{"staging/04_sequential/sum.cu", "/usr/include/stdio.h",
                                      "staging/04_sequential/my helper.cuh"}))
      << "another lab's inputs and a target that merely starts alike stay out";
  EXPECT_EQ(lab_dependencies(log, "10_max_min", "minimum"), "") << "no record: empty";
  EXPECT_EQ(lab_dependencies("", "04_sequential", "sum"), "") << "no log: empty";
}

class DependencyCheckTest : public ::testing::Test {
 protected:
  /// A staged lab, staged contract headers, a fake CUDA toolkit (with CCCL's CUB and Thrust, and
  /// the targets/x86_64-linux/include link of a real one), a fake system folder and a course.
  void SetUp() override {
    dir_ = make_temp_dir("reduce-grade-deps-");
    lab_ = dir_ / "staging" / "09_warp_shuffle";
    write_file(lab_ / "sum.cu", "");
    write_file(lab_ / "warp.cuh", "");
    write_file(lab_ / "my helper.cuh", "");
    const StageResult headers =
        stage_contract_headers(REDUCE_GRADE_TEST_ROOT, dir_ / "staging" / "include");
    ASSERT_TRUE(headers.ok) << headers.describe();
    const fs::path cuda = dir_ / "cuda";
    write_file(cuda / "include" / "cuda_runtime.h", "");
    fs::create_directories(cuda / "bin");
    write_file(cuda / "include" / "cublas_v2.h", "");
    write_file(cuda / "include" / "cccl" / "cub" / "block" / "block_reduce.cuh", "");
    write_file(cuda / "include" / "cccl" / "cub" / "util_type.cuh", "");
    write_file(cuda / "include" / "cccl" / "thrust" / "reduce.h", "");
    write_file(cuda / "include" / "cccl" / "cuda" / "std" / "cstdint", "");
    fs::create_directories(cuda / "targets" / "x86_64-linux");
    fs::create_directory_symlink("../../include", cuda / "targets" / "x86_64-linux" / "include");
    fs::create_directory_symlink("cuda", dir_ / "cuda-link");
    write_file(dir_ / "sys" / "include" / "c++" / "12" / "cstdint", "");
    write_file(dir_ / "sys" / "include" / "thrust" / "reduce.h", "");  // libthrust-dev
    write_file(dir_ / "course" / "solutions" / "09_warp_shuffle" / "sum.cu", "");

    policy_.lab_dir = lab_;
    policy_.contract_headers = headers.files;
    policy_.toolkit_roots = {dir_ / "cuda-link" / "include",
                             dir_ / "cuda-link" / "targets" / "x86_64-linux" / "include"};
    policy_.system_roots = {dir_ / "sys" / "include"};
  }
  void TearDown() override { remove_all_quietly(dir_); }

  /// Escapes spaces as nvcc does.
  static std::string dep(const fs::path& p) { return replace_all(p.string(), " ", "\\ "); }

  std::vector<LibraryFinding> check(const std::vector<fs::path>& deps) const {
    std::string text = "sum.o : " + dep(lab_ / "sum.cu");
    for (const fs::path& d : deps) text += " \\\n    " + dep(d);
    return check_dependencies(text + "\n", policy_);
  }

  static std::string all(const std::vector<LibraryFinding>& findings) {
    std::string text;
    for (const LibraryFinding& f : findings)
      text += std::string(finding_kind_name(f.kind)) + ": " + f.what + "\n";
    return text;
  }

  fs::path dir_, lab_;
  DependencyPolicy policy_;
};

TEST_F(DependencyCheckTest, NormalLabIsClean) {
  const fs::path include = dir_ / "staging" / "include" / "reduce";
  const std::vector<LibraryFinding> found = check(
      {lab_ / "warp.cuh", lab_ / "my helper.cuh", include / "lab.cuh", include / "cuda_check.cuh",
       include / "multi_pass.cuh", include / "not_implemented.hpp",
       dir_ / "cuda-link/bin/../targets/x86_64-linux/include/cuda_runtime.h",
       dir_ / "cuda/include/cccl/cuda/std/cstdint", dir_ / "sys/include/c++/12/cstdint"});
  EXPECT_TRUE(found.empty()) << all(found);
  // Relative names are relative to the compile's folder.
  DependencyPolicy relative = policy_;
  relative.base_dir = lab_;
  EXPECT_TRUE(check_dependencies("sum.o: sum.cu my\\ helper.cuh ./warp.cuh\n", relative).empty());
}

TEST_F(DependencyCheckTest, CubAndThrustHoweverReached) {
  const std::vector<LibraryFinding> found =
      check({dir_ / "cuda-link/targets/x86_64-linux/include/cccl/cub/block/block_reduce.cuh",
             dir_ / "cuda/include/cccl/cub/util_type.cuh",
             dir_ / "cuda-link/include/cccl/thrust/reduce.h", dir_ / "cuda/include/cublas_v2.h",
             dir_ / "sys/include/thrust/reduce.h"});
  ASSERT_EQ(found.size(), 3u) << all(found);
  EXPECT_EQ(found[0].kind, FindingKind::kHeader);
  EXPECT_EQ(found[0].what,
            "forbidden header: cub/block/block_reduce.cuh (CUB) is a library reduction; and 1 "
            "more CUB header");
  EXPECT_EQ(found[1].what,
            "forbidden header: thrust/reduce.h (Thrust) is a library reduction; and 1 more "
            "Thrust header");
  EXPECT_EQ(found[2].what, "forbidden header: cublas_v2.h (cuBLAS) is a library reduction");
}

TEST_F(DependencyCheckTest, PrimitivesLabReadsCubButNotItsDeviceWideAlgorithms) {
  DependencyPolicy primitives = policy_;
  primitives.primitives_allowed = true;
  const fs::path cub = dir_ / "cuda/include/cccl/cub";
  const auto check_with = [&](const std::vector<fs::path>& deps) {
    std::string text = "sum.o : " + dep(lab_ / "sum.cu");
    for (const fs::path& d : deps) text += " \\\n    " + dep(d);
    return check_dependencies(text + "\n", primitives);
  };
  // cub::BlockReduce includes part of Thrust (its iterators and execution policies).
  const std::vector<LibraryFinding> block =
      check_with({cub / "block/block_reduce.cuh", cub / "warp/warp_reduce.cuh",
                  cub / "util_type.cuh", dir_ / "cuda/include/cccl/cuda/std/cstdint",
                  dir_ / "cuda/include/cccl/thrust/iterator/discard_iterator.h"});
  EXPECT_TRUE(block.empty()) << all(block);
  // Thrust's device algorithms include CUB's device-wide headers.
  const std::vector<LibraryFinding> device =
      check_with({cub / "block/block_reduce.cuh", dir_ / "cuda/include/cccl/thrust/reduce.h",
                  cub / "device/device_reduce.cuh", cub / "device/dispatch/dispatch_reduce.cuh",
                  cub / "agent/agent_reduce.cuh", cub / "cub.cuh"});
  ASSERT_EQ(device.size(), 1u) << all(device);
  EXPECT_EQ(device[0].what,
            "forbidden header: cub/device/device_reduce.cuh (CUB) is a library reduction; and 3 "
            "more CUB headers");
}

TEST_F(DependencyCheckTest, PathsOutsideAreForbiddenAfterNormalising) {
  const fs::path course = dir_ / "course";
  const std::vector<LibraryFinding> found =
      check({dir_ / "staging/include/reduce/../../../course/solutions/09_warp_shuffle/sum.cu",
             course / "solutions" / "09_warp_shuffle" / "sum.cu",  // the same file: reported once
             dir_ / "other dir" / "x.cuh", "/nonexistent/include/cuda_runtime.h"});
  ASSERT_EQ(found.size(), 3u) << all(found);
  EXPECT_EQ(found[0].what,
            "forbidden header: " + (course / "solutions/09_warp_shuffle/sum.cu").string() +
                " is outside the lab folder, the contract headers and the CUDA toolkit (reached "
                "as " +
                (dir_ / "staging/include/reduce/../../../course/solutions/09_warp_shuffle/sum.cu")
                    .string() +
                ")");
  EXPECT_TRUE(contains(found[1].what, (dir_ / "other dir" / "x.cuh").string() + " is outside"))
      << found[1].what;
  EXPECT_TRUE(contains(found[2].what, "/nonexistent/include/cuda_runtime.h is outside"));
}

TEST_F(DependencyCheckTest, TheCourseItselfThroughContractHeaders) {
  // `#include <reduce/../../../solutions/09_warp_shuffle/sum.cu>` against the course's own
  // include folder (what a build without staging would allow).
  const fs::path root = fs::weakly_canonical(REDUCE_GRADE_TEST_ROOT);
  const std::vector<LibraryFinding> found =
      check({root / "common/include/reduce/../../../solutions/09_warp_shuffle/sum.cu",
             root / "common/include/reduce/lab.cuh"});
  ASSERT_EQ(found.size(), 2u) << all(found);
  EXPECT_TRUE(contains(found[0].what,
                       "forbidden header: " + (root / "solutions/09_warp_shuffle/sum.cu").string() +
                           " is outside the lab folder"))
      << found[0].what;
  // Only the staged copy of a contract header is allowed, not the course's.
  EXPECT_TRUE(contains(found[1].what, "common/include/reduce/lab.cuh is outside"));
}

TEST_F(DependencyCheckTest, SymbolicLinksAreResolved) {
  fs::create_symlink(dir_ / "course/solutions/09_warp_shuffle/sum.cu", dir_ / "answer.cuh");
  fs::create_symlink(dir_ / "cuda/include/cccl/cub/util_type.cuh", dir_ / "util.cuh");
  // (staging refuses links in the lab folder; a link in any other -I folder is found here)
  const std::vector<LibraryFinding> found = check({dir_ / "answer.cuh", dir_ / "util.cuh"});
  ASSERT_EQ(found.size(), 2u) << all(found);
  EXPECT_TRUE(contains(found[0].what, "solutions/09_warp_shuffle/sum.cu is outside"));
  EXPECT_TRUE(contains(found[0].what, "(reached as " + (dir_ / "answer.cuh").string() + ")"));
  EXPECT_EQ(found[1].what, "forbidden header: cub/util_type.cuh (CUB) is a library reduction");

  // `..` after a link is the target's parent (as open() resolves it), not the link's folder:
  // lexically this path would lie in the toolkit.
  fs::create_directory_symlink(dir_ / "course/solutions/09_warp_shuffle",
                               dir_ / "cuda/include/deep");
  const std::vector<LibraryFinding> dotdot =
      check({dir_ / "cuda/include/deep/../09_warp_shuffle/sum.cu"});
  ASSERT_EQ(dotdot.size(), 1u) << all(dotdot);
  EXPECT_TRUE(contains(dotdot[0].what, "course/solutions/09_warp_shuffle/sum.cu is outside"))
      << dotdot[0].what;
}

TEST(DependencyDefaults, RealToolkitPaths) {
  // The default roots, with or without a CUDA toolkit installed (paths compare after
  // resolving links where they exist, lexically where they do not).
  DependencyPolicy policy;
  policy.lab_dir = "/nonexistent/staging/09_warp_shuffle";
  const std::string text =
      "sum.o : /nonexistent/staging/09_warp_shuffle/sum.cu \\\n"
      " /usr/local/cuda/bin/../targets/x86_64-linux/include/cuda_runtime.h \\\n"
      " /usr/include/c++/12/cstdint /usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h \\\n"
      " /usr/local/cuda/include/cccl/cub/block/block_reduce.cuh \\\n"
      " /usr/local/cuda/include/thrust/reduce.h\n";
  const std::vector<LibraryFinding> found = check_dependencies(text, policy);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].what,
            "forbidden header: cub/block/block_reduce.cuh (CUB) is a library reduction");
  EXPECT_EQ(found[1].what, "forbidden header: thrust/reduce.h (Thrust) is a library reduction");
}

}  // namespace
}  // namespace reduce::grade
