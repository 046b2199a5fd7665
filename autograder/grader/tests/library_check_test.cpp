// Library detection: tiny shared libraries built here with g++ stand in for lab libraries that
// call CUB, link cuBLAS, still throw NotImplemented, or are clean.
#include <reduce_grade/library_check.hpp>
#include <reduce_grade/process.hpp>
#include <reduce_grade/util.hpp>

#include <gtest/gtest.h>

namespace reduce::grade {
namespace {

class LibraryCheckTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = make_temp_dir("reduce-grade-lib-"); }
  static void TearDownTestSuite() { remove_all_quietly(dir_); }

  /// Compiles \p code into dir/<name>.so; returns its path.
  static fs::path build(const std::string& name, const std::string& code,
                        const std::vector<std::string>& extra = {}) {
    const fs::path source = dir_ / (name + ".cpp");
    const fs::path library = dir_ / (name + ".so");
    write_file(source, code);
    ProcessSpec spec;
    spec.argv = {"g++", "-shared", "-fPIC", "-o", library.string(), source.string()};
    for (const std::string& e : extra) spec.argv.push_back(e);
    spec.timeout_s = 120;
    const ProcessResult r = run_process(spec);
    EXPECT_TRUE(r.succeeded()) << r.output;
    return library;
  }

  static fs::path dir_;
  LibraryRules rules_;
};

fs::path LibraryCheckTest::dir_;

TEST_F(LibraryCheckTest, CleanLibraryIsNotFlagged) {
  const fs::path lib = build("clean", R"(
    namespace reduce { float sum_like(const float* x, unsigned long n) {
      float s = 0; for (unsigned long i = 0; i < n; ++i) s += x[i]; return s; } })");
  const LibraryCheck check = inspect_library(lib, rules_);
  EXPECT_TRUE(check.inspected) << check.problem;
  EXPECT_TRUE(check.forbidden.empty()) << check.describe();
  EXPECT_FALSE(check.stub);
}

TEST_F(LibraryCheckTest, CubSymbolsAreFlagged) {
  // An undefined reference to a cub:: function and a defined cub:: template instance, as an
  // inlined cub::DeviceReduce leaves behind.
  const fs::path lib = build("cub_like", R"(
    namespace cub { namespace CUB_200200_900_NS {
      int DeviceReduceSum(const float* in, long n);
      template <typename T> int Dispatch(T v) { return static_cast<int>(v) + 1; }
    } }
    int lab_sum(const float* in, long n) {
      return cub::CUB_200200_900_NS::DeviceReduceSum(in, n) + cub::CUB_200200_900_NS::Dispatch(2.0f);
    })");
  const LibraryCheck check = inspect_library(lib, rules_);
  ASSERT_FALSE(check.forbidden.empty());
  EXPECT_EQ(check.forbidden[0].kind, "symbol");
  EXPECT_TRUE(contains(check.describe(), "cub::"));
  EXPECT_TRUE(contains(check.describe(), "forbidden library reduction"));
}

TEST_F(LibraryCheckTest, NeededCublasIsFlagged) {
  // A fake libcublas with its soname, and a lab library linked against it.
  build("libcublas_fake", "int cublasSasumLike() { return 0; }", {"-Wl,-soname,libcublas.so.13"});
  fs::copy_file(dir_ / "libcublas_fake.so", dir_ / "libcublas.so.13",
                fs::copy_options::overwrite_existing);
  const fs::path lib = build("needs_cublas", "int f() { return 1; }",
                             {"-Wl,--no-as-needed", "-L" + dir_.string(), "-l:libcublas.so.13"});
  const LibraryCheck check = inspect_library(lib, rules_);
  bool needed = false;
  for (const LibraryFinding& f : check.forbidden)
    needed = needed || (f.kind == "needed" && contains(f.what, "libcublas"));
  EXPECT_TRUE(needed) << check.describe();
}

TEST_F(LibraryCheckTest, UntouchedStubIsRecognised) {
  const fs::path lib = build("stub", R"(
    #include <string>
    namespace reduce { struct NotImplemented { explicit NotImplemented(const std::string& file); }; }
    void sum_stub() { throw reduce::NotImplemented(__FILE__); })");
  const LibraryCheck check = inspect_library(lib, rules_);
  EXPECT_TRUE(check.stub);
  EXPECT_TRUE(check.forbidden.empty());
}

TEST_F(LibraryCheckTest, MissingLibrary) {
  const LibraryCheck check = inspect_library(dir_ / "none.so", rules_);
  EXPECT_FALSE(check.inspected);
  EXPECT_TRUE(contains(check.problem, "not found"));
}

TEST(LibraryCheckText, SymbolsAndNeededEntries) {
  const LibraryRules rules;
  const std::string nm =
      "0000000000001530 T reduce::sum(float const*, unsigned long, float*, reduce::Workspace, "
      "CUstream_st*)\n"
      "                 U cudaLaunchKernel\n"
      "0000000000002000 W cub::CUB_300000_SM_900::DeviceReduceKernel<float>(float const*)\n"
      "                 U thrust::THRUST_300000_SM_900::reduce(int)\n"
      "                 U cublasSasum_v2\n";
  const std::string elf =
      " 0x0000000000000001 (NEEDED)             Shared library: [libcudart.so.13]\n"
      " 0x0000000000000001 (NEEDED)             Shared library: [libcudnn.so.9]\n";
  const LibraryCheck check = check_symbol_text(nm, elf, rules);
  EXPECT_EQ(check.forbidden.size(), 4u) << check.describe();
  const LibraryCheck clean =
      check_symbol_text(nm.substr(0, nm.find("0000000000002000")),
                        " (NEEDED) Shared library: [libcudart.so.13]\n", rules);
  EXPECT_TRUE(clean.forbidden.empty());
}

TEST(LibraryCheckText, BytesFallback) {
  const LibraryRules rules;
  EXPECT_FALSE(
      check_library_bytes(std::string("xx_ZN3cub17CUB_200200_900_NS11DeviceReduceyy"), rules)
          .forbidden.empty());
  EXPECT_TRUE(check_library_bytes("plain bytes", rules).forbidden.empty());
  EXPECT_TRUE(check_library_bytes("_ZN6reduce14NotImplementedC1ERKSs", rules).stub);
}

TEST(LibraryCheckSources, ForbiddenIncludesAreFoundCommentedOnesAreNot) {
  const fs::path dir = make_temp_dir("reduce-grade-src-");
  write_file(dir / "09_warp_shuffle" / "sum.cu",
             "// faster than #include <cub/cub.cuh> would be\n"
             "#include <reduce/lab.cuh>\n"
             "#  include <cub/block/block_reduce.cuh>\n");
  write_file(dir / "09_warp_shuffle" / "helper.cuh", "#include \"thrust/reduce.h\"\n");
  const std::vector<LibraryFinding> found = scan_sources(dir / "09_warp_shuffle", LibraryRules{});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_TRUE(contains(found[0].what, "helper.cuh:1"));
  EXPECT_TRUE(contains(found[1].what, "sum.cu:3: #include <cub/block/block_reduce.cuh>"));
  remove_all_quietly(dir);
}

}  // namespace
}  // namespace reduce::grade
