// Library detection: tiny shared libraries built here with g++ stand in for lab libraries that
// call CUB, link cuBLAS, still throw NotImplemented, or are clean.
#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/observations/library_check.hpp>
#include <reduce_grade/processes/process.hpp>
#include <reduce_grade/submission/staging.hpp>

#include <gtest/gtest.h>

#include <cstdlib>

namespace reduce::grade {
namespace {

/// The plans of \p ops as the catalogue (course.json) describes them.
std::vector<OpPlan> catalogue_plans(const std::vector<std::string>& ops) {
  const Course course = load_course(REDUCE_GRADE_TEST_ROOT);
  CourseLab lab;
  lab.folder = "00_test";
  lab.ops = ops;
  return plan_ops(course, lab);
}

/// The exports allowed to a library of \p ops, the getters named as the course's build names
/// them in course-manifest.json.
ContractExports catalogue_exports(const std::vector<std::string>& ops) {
  BuildManifest built;
  for (const auto& [op, getter] : {std::pair{"sum", "reduce_sum_lab"},
                                   {"sum_deterministic", "reduce_sum_lab"},
                                   {"maximum", "reduce_maximum_lab"},
                                   {"atomic_max", "reduce_atomic_max_lab"}})
    built.operations[op].getter = getter;
  return contract_exports(catalogue_plans(ops), built);
}

/// The exports a library of a sum lab may have.
ContractExports sum_contract() {
  return catalogue_exports({"sum"});
}

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
  EXPECT_EQ(check.forbidden[0].kind, FindingKind::kSymbol);
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
    needed = needed || (f.kind == FindingKind::kNeeded && contains(f.what, "libcublas"));
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

TEST(LibraryCheckText, KindNamesAndFindingText) {
  EXPECT_STREQ(finding_kind_name(FindingKind::kSymbol), "symbol");
  EXPECT_STREQ(finding_kind_name(FindingKind::kNeeded), "needed");
  EXPECT_STREQ(finding_kind_name(FindingKind::kInclude), "include");
  EXPECT_STREQ(finding_kind_name(FindingKind::kHeader), "header");
  EXPECT_STREQ(finding_kind_name(FindingKind::kImport), "import");
  EXPECT_STREQ(finding_kind_name(FindingKind::kExport), "export");
  EXPECT_STREQ(finding_kind_name(FindingKind::kSyscall), "syscall");
  EXPECT_STREQ(finding_kind_name(FindingKind::kUnchecked), "unchecked");
  // The thing found follows its kind's name; a sentence stands alone.
  EXPECT_EQ((LibraryFinding{FindingKind::kNeeded, "libcublas.so.13"}).text(),
            "needed libcublas.so.13");
  EXPECT_EQ((LibraryFinding{FindingKind::kImport, "forbidden import: fork"}).text(),
            "forbidden import: fork");
  LibraryCheck unchecked;
  unchecked.forbidden = {{FindingKind::kUnchecked, "no record"}};
  EXPECT_EQ(unchecked.describe(), "not run: no record");
}

TEST(LibraryCheckText, BytesFallback) {
  const LibraryRules rules;
  EXPECT_FALSE(
      check_library_bytes(std::string("xx_ZN3cub17CUB_200200_900_NS11DeviceReduceyy"), rules)
          .forbidden.empty());
  EXPECT_TRUE(check_library_bytes("plain bytes", rules).forbidden.empty());
  EXPECT_TRUE(check_library_bytes("_ZN6reduce14NotImplementedC1ERKSs", rules).stub);
}

TEST(LibraryCheckText, PrimitivesLabAllowsCubBlockLevelOnly) {
  LibraryRules rules;
  rules.primitives_allowed = true;
  const std::string block =
      "0000000000002000 W cub::CUB_300000_SM_900::BlockReduce<float, 256, "
      "(cub::CUB_300000_SM_900::BlockReduceAlgorithm)1, 1, 1>::Sum(float)\n";
  // What cub::BlockReduce brings along from Thrust (CUDA 13).
  const std::string thrust_seq =
      "0000000000082870 u thrust::THRUST_300001_SM_900_NS::system::detail::sequential::seq\n";
  const std::string device =
      "0000000000002000 W cub::CUB_300000_SM_900::detail::reduce::DeviceReduceKernel<float>("
      "float const*)\n"
      "                 U thrust::THRUST_300000_SM_900::cuda_cub::reduce(int)\n";
  EXPECT_TRUE(check_symbol_text(block + thrust_seq, "", rules).forbidden.empty());
  EXPECT_EQ(check_symbol_text(block + device, "", rules).forbidden.size(), 2u);
  EXPECT_EQ(check_symbol_text(block + thrust_seq, "", LibraryRules{}).forbidden.size(), 2u);
  // Without nm: CUB's namespace alone is no finding there, a device-wide name is.
  EXPECT_TRUE(check_library_bytes("xx_ZN3cub17CUB_300000_SM_900_NS11BlockReduceIfyy", rules)
                  .forbidden.empty());
  EXPECT_FALSE(check_library_bytes("xx_ZN3cub17CUB_300000_SM_900_NS12DeviceReduceyy", rules)
                   .forbidden.empty());
}

TEST(LibraryCheckText, ForLabReadsTheRubricEntry) {
  LabRubric plain, primitives;
  primitives.library = "primitives";
  EXPECT_FALSE(LibraryRules{}.for_lab(nullptr).primitives_allowed);
  EXPECT_FALSE(LibraryRules{}.for_lab(&plain).primitives_allowed);
  EXPECT_TRUE(LibraryRules{}.for_lab(&primitives).primitives_allowed);
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

TEST(LibraryCheckSources, PrimitivesLabMayIncludeCubBlockHeadersOnly) {
  const fs::path dir = make_temp_dir("reduce-grade-src-");
  write_file(dir / "16_library_primitives" / "sum.cu",
             "#include <cub/block/block_reduce.cuh>\n"
             "#include <cub/warp/warp_reduce.cuh>\n"
             "#include <cooperative_groups/reduce.h>\n"
             "#include <cub/device/device_reduce.cuh>\n"
             "#include <cub/cub.cuh>\n"
             "#include <thrust/reduce.h>\n");
  LibraryRules rules;
  rules.primitives_allowed = true;
  const std::vector<LibraryFinding> found = scan_sources(dir / "16_library_primitives", rules);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_TRUE(contains(found[0].what, "sum.cu:4: #include <cub/device/device_reduce.cuh>"));
  EXPECT_TRUE(contains(found[1].what, "sum.cu:5: #include <cub/cub.cuh>"));
  EXPECT_TRUE(contains(found[2].what, "sum.cu:6: #include <thrust/reduce.h>"));
  EXPECT_EQ(scan_sources(dir / "16_library_primitives", LibraryRules{}).size(), 5u);
  remove_all_quietly(dir);
}

// ---- imports, exports and host code of the built library --------------------------------

TEST(SymbolCheckText, ForbiddenImports) {
  const std::string nm =
      "                 w __gmon_start__\n"
      "                 U cudaLaunchKernel@libcudart.so.13\n"
      "                 U dlopen@GLIBC_2.34\n"
      "                 U dlopen@GLIBC_2.2.5\n"
      "                 U signal@GLIBC_2.2.5\n"
      "                 U posix_spawnp\n"
      "                 w fork@GLIBC_2.2.5\n";
  const std::vector<LibraryFinding> found = check_imports(nm);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].kind, FindingKind::kImport);
  EXPECT_EQ(found[0].what, "forbidden import: dlopen");
  EXPECT_EQ(found[1].what, "forbidden import: posix_spawnp");
  EXPECT_EQ(found[2].what, "forbidden import: fork");
  EXPECT_EQ(found[0].text(), "forbidden import: dlopen");
  EXPECT_TRUE(check_imports("nm: libx.so: no symbols\n").empty());
}

TEST(SymbolCheckText, ContractExports) {
  const ContractExports sum = catalogue_exports({"sum", "sum_deterministic"});
  EXPECT_EQ(sum.c_names, std::vector<std::string>{"reduce_sum_lab"});
  EXPECT_EQ(sum.cxx_prefixes,
            (std::vector<std::string>{"reduce::sum(", "reduce::sum_workspace_bytes("}));
  const ContractExports lab14 = catalogue_exports({"atomic_max", "maximum"});
  EXPECT_EQ(lab14.c_names,
            (std::vector<std::string>{"reduce_atomic_max_lab", "reduce_maximum_lab"}));
  EXPECT_EQ(lab14.cxx_prefixes,
            (std::vector<std::string>{"reduce::atomic_max_apply(", "reduce::maximum(",
                                      "reduce::maximum_workspace_bytes("}));
  // The getters are the build's (course-manifest.json): the grader names none itself.
  BuildManifest renamed;
  renamed.operations["sum"].getter = "reduce_renamed_lab";
  EXPECT_EQ(contract_exports(catalogue_plans({"sum"}), renamed).c_names,
            std::vector<std::string>{"reduce_renamed_lab"});
  EXPECT_THROW(contract_exports(catalogue_plans({"maximum"}), renamed), ConfigError);
}

TEST(SymbolCheckText, ExportsOutsideTheContract) {
  const std::string contract =
      "0000000000001505 T reduce::sum_workspace_bytes(unsigned long)\n"
      "0000000000001525 T reduce::sum(float const*, unsigned long, float*, reduce::Workspace, "
      "CUstream_st*)\n"
      "0000000000001c41 T reduce_sum_lab\n"
      "0000000000004010 B __bss_start\n";
  EXPECT_TRUE(check_exports(contract, sum_contract()).empty());
  EXPECT_TRUE(check_exports(contract, catalogue_exports({"sum", "sum_deterministic"})).empty());
  const std::string extra = contract +
                            "0000000000001b0a W dim3::dim3(unsigned int, unsigned int, unsigned "
                            "int)\n"
                            "0000000000001b0a W dim3::dim3(unsigned int, unsigned int, unsigned "
                            "int)\n"
                            "0000000000001c00 T reduce::sum_helper(float)\n"
                            "0000000000001d00 T testing::UnitTest::Run()\n"
                            "0000000000001e00 T reduce_maximum_lab@@LAB\n";
  const std::vector<LibraryFinding> found = check_exports(extra, sum_contract());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, FindingKind::kExport);
  EXPECT_EQ(found[0].what,
            "exports symbols outside the lab contract: dim3::dim3(unsigned int, unsigned int, "
            "unsigned int), reduce::sum_helper(float), testing::UnitTest::Run(), "
            "reduce_maximum_lab");
  // Lab 14: atomic_max_apply and the maximum, nothing of the sum.
  const std::vector<LibraryFinding> lab14 = check_exports(
      "0000000000001000 T reduce::atomic_max_apply(float const*, unsigned long, float*, float*, "
      "CUstream_st*)\n"
      "0000000000001100 T reduce_maximum_lab\n"
      "0000000000001180 T reduce_atomic_max_lab\n"
      "0000000000001200 T reduce_sum_lab\n",
      catalogue_exports({"atomic_max", "maximum"}));
  ASSERT_EQ(lab14.size(), 1u);
  EXPECT_EQ(lab14[0].what, "exports symbols outside the lab contract: reduce_sum_lab");
}

TEST(SymbolCheckText, RawSyscallInstructions) {
  const std::string objdump =
      "libx.so:     file format elf64-x86-64\n\n"
      "Disassembly of section .text:\n\n"
      "0000000000001100 <reduce::sum(float const*)>:\n"
      "    1100:\tcall   1030 <syscall@plt>\n"
      "    1105:\tmov    $0x3c,%eax\n"
      "    110a:\tint    $0x3\n"
      "0000000000001200 <evil>:\n"
      "    1200:\tmov    $0x3b,%eax\n"
      "    1205:\tsyscall\n"
      "    1207:\tsyscall\n"
      "0000000000001300 <older>:\n"
      "    1300:\tint    $0x80\n"
      "0000000000001400 <fast>:\n"
      "    1400:\tcs sysenter\n";
  const std::vector<LibraryFinding> found = check_host_code(objdump);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].kind, FindingKind::kSyscall);
  EXPECT_EQ(found[0].what, "raw syscall instruction in host code: syscall in evil at 0x1205");
  EXPECT_EQ(found[1].what, "raw syscall instruction in host code: int $0x80 in older at 0x1300");
  EXPECT_EQ(found[2].what, "raw syscall instruction in host code: sysenter in fast at 0x1400");
}

/// The lab contract in plain C++ (no CUDA): the same mangled names as lab.cuh's.
const char* const kContractSource = R"(
  #include <cstddef>
  struct CUstream_st;
  namespace reduce {
  struct Workspace { void* data; std::size_t bytes; };
  std::size_t sum_workspace_bytes(std::size_t n) { return n; }
  void sum(const float*, std::size_t, float*, Workspace, CUstream_st*) {}
  }
  struct FloatLab { std::size_t (*w)(std::size_t); };
  extern "C" const FloatLab* reduce_sum_lab() {
    static const FloatLab lab{&reduce::sum_workspace_bytes};
    return &lab;
  }
)";

fs::path exports_map() {
  return REDUCE_GRADE_LAB_EXPORTS_MAP;
}

TEST_F(LibraryCheckTest, CleanLabLibraryPassesSymbolChecks) {
  const fs::path lib =
      build("contract_clean", kContractSource, {"-Wl,--version-script=" + exports_map().string()});
  const LibraryCheck check = inspect_symbols(lib, sum_contract());
  EXPECT_TRUE(check.inspected) << check.problem;
  EXPECT_TRUE(check.forbidden.empty()) << check.describe();
}

TEST_F(LibraryCheckTest, VersionScriptKeepsOnlyTheContract) {
  const std::string source = std::string(kContractSource) + R"(
    namespace reduce { int sum_helper(int x) { return x + 1; } }
    extern "C" int reduce_evil_lab() { return 7; }
    namespace testing { struct UnitTest { int Run(); }; int UnitTest::Run() { return 0; } })";
  const LibraryCheck without = inspect_symbols(build("exports_all", source), sum_contract());
  ASSERT_EQ(without.forbidden.size(), 1u) << without.describe();
  EXPECT_EQ(without.forbidden[0].kind, FindingKind::kExport);
  for (const char* name :
       {"reduce::sum_helper(int)", "reduce_evil_lab", "testing::UnitTest::Run()"})
    EXPECT_TRUE(contains(without.forbidden[0].what, name)) << without.forbidden[0].what;
  const LibraryCheck with = inspect_symbols(
      build("exports_contract", source, {"-Wl,--version-script=" + exports_map().string()}),
      sum_contract());
  EXPECT_TRUE(with.forbidden.empty()) << with.describe();
}

TEST_F(LibraryCheckTest, ForbiddenImportsAndRawSyscalls) {
  const fs::path lib = build("imports", std::string(kContractSource) + R"(
    #include <dlfcn.h>
    #include <cstdlib>
    #include <csignal>
    extern "C" int sneaky() {
      void* h = dlopen("libcublas.so", RTLD_NOW);
      std::signal(SIGINT, SIG_IGN);
      return h != nullptr ? std::system("true") : 0;
    }
    extern "C" long raw(long n) {
      long ret;
      asm volatile("syscall" : "=a"(ret) : "a"(n) : "rcx", "r11", "memory");
      return ret;
    })",
                             {"-Wl,--version-script=" + exports_map().string(), "-ldl"});
  const LibraryCheck check = inspect_symbols(lib, sum_contract());
  EXPECT_TRUE(check.inspected) << check.problem;
  std::vector<std::string> what;
  for (const LibraryFinding& f : check.forbidden) what.push_back(f.what);
  ASSERT_EQ(what.size(), 3u) << check.describe();
  EXPECT_EQ(what[0], "forbidden import: dlopen");
  EXPECT_EQ(what[1], "forbidden import: system");
  EXPECT_TRUE(starts_with(what[2], "raw syscall instruction in host code: syscall in raw at 0x"))
      << what[2];
  EXPECT_TRUE(contains(check.describe(), "forbidden import: dlopen"));
}

TEST_F(LibraryCheckTest, MissingToolsAreReported) {
  const fs::path lib = build("tools", kContractSource);
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path != nullptr ? old_path : "";
  ::setenv("PATH", dir_.c_str(), 1);  // no nm, no objdump there
  const LibraryCheck check = inspect_symbols(lib, sum_contract());
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_FALSE(check.inspected);
  EXPECT_TRUE(contains(check.problem, "nm not found in PATH")) << check.problem;
  EXPECT_TRUE(contains(check.problem, "objdump not found in PATH")) << check.problem;
  EXPECT_TRUE(
      contains(inspect_symbols(dir_ / "none.so", sum_contract()).problem, "library not found"));
}

/// nvcc's own shared libraries (skipped without a CUDA toolkit; no GPU needed).
TEST_F(LibraryCheckTest, NvccLibraryWithVersionScript) {
  auto nvcc = find_program("nvcc");
  if (!nvcc && fs::exists("/usr/local/cuda/bin/nvcc")) nvcc = "/usr/local/cuda/bin/nvcc";
  if (!nvcc) GTEST_SKIP() << "nvcc not found";
  const fs::path include = fs::path(REDUCE_GRADE_TEST_ROOT) / "common" / "include";
  write_file(dir_ / "nvcc_lab.cu", R"(
    #include <reduce/lab.cuh>
    namespace reduce {
    namespace { __global__ void kernel(const float* in, float* out) { *out = *in; } }
    std::size_t sum_workspace_bytes(std::size_t n) { return n * sizeof(float); }
    void sum(const float* in, std::size_t, float* out, Workspace, cudaStream_t stream) {
      kernel<<<dim3(1), dim3(1), 0, stream>>>(in, out);
    }
    void sum_helper() {}
    })");
  // What the course's build generates from course.json for a sum lab (export_sum.cu).
  write_file(dir_ / "export_sum.cu", R"(
    #include <reduce/lab_entry_points.cuh>
    extern "C" const reduce::FloatLab* reduce_sum_lab() {
      static const reduce::FloatLab lab{&reduce::sum_workspace_bytes, &reduce::sum};
      return &lab;
    })");
  write_file(dir_ / "reduce" / "course_entries.inc",
             "REDUCE_ENTRY(sum, reduce_sum_lab, Float, FloatLab)\n");
  const auto link = [&](const std::string& name, bool script) {
    ProcessSpec spec;
    spec.argv = {nvcc->string(),
                 "-shared",
                 "-Xcompiler",
                 "-fPIC",
                 "-arch=sm_90",
                 "-cudart",
                 "shared",
                 "-I",
                 include.string(),
                 "-I",
                 dir_.string(),
                 (dir_ / "nvcc_lab.cu").string(),
                 (dir_ / "export_sum.cu").string(),
                 "-o",
                 (dir_ / name).string()};
    if (script) {
      spec.argv.push_back("-Xlinker");
      spec.argv.push_back("--version-script=" + exports_map().string());
    }
    spec.timeout_s = 300;
    const ProcessResult r = run_process(spec);
    EXPECT_TRUE(r.succeeded()) << r.output;
    return dir_ / name;
  };
  const LibraryCheck with = inspect_symbols(link("libnvcc_script.so", true), sum_contract());
  EXPECT_TRUE(with.inspected) << with.problem;
  EXPECT_TRUE(with.forbidden.empty()) << with.describe();
  const LibraryCheck without = inspect_symbols(link("libnvcc_plain.so", false), sum_contract());
  ASSERT_EQ(without.forbidden.size(), 1u) << without.describe();
  EXPECT_TRUE(contains(without.forbidden[0].what, "reduce::sum_helper()"))
      << without.forbidden[0].what;
}

}  // namespace
}  // namespace reduce::grade
