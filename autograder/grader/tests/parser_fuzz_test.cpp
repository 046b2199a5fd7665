// Every parser of text that a lab can influence (GoogleTest output and JSON, compute-sanitizer
// logs, benchmark JSON, compiler output, dependency lists, nm/readelf/objdump output, sources),
// fed thousands of random and mutated inputs: no exception may escape, nothing may crash, and
// what comes back stays sane. Each test prints its seed; REDUCE_FUZZ_SEED=<seed> repeats it.
// Exact cases of numbers that do not fit come first.
#include <reduce_grade/base/bench_results.hpp>
#include <reduce_grade/base/parse.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/observations/gtest_suite.hpp>
#include <reduce_grade/observations/library_check.hpp>
#include <reduce_grade/observations/sanitizer.hpp>
#include <reduce_grade/submission/build.hpp>

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace reduce::grade {
namespace {

// ---- exact cases ------------------------------------------------------------------------------

TEST(ParseNumbers, CountsAreDigitsOnlyAndNeverWrap) {
  EXPECT_EQ(parse_count("0"), 0u);
  EXPECT_EQ(parse_count("175"), 175u);
  EXPECT_EQ(parse_count("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(parse_count("18446744073709551616"), std::nullopt);
  EXPECT_EQ(parse_count("99999999999999999999"), std::nullopt);
  EXPECT_EQ(parse_count("2147483648", 2147483647), std::nullopt);
  EXPECT_EQ(parse_count("2147483647", 2147483647), 2147483647u);
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1e3", "0x10", "1.5", "12a"})
    EXPECT_EQ(parse_count(bad), std::nullopt) << bad;
  EXPECT_EQ(parse_count(std::string{'1', '\0', '2'}), std::nullopt);
}

TEST(ParseNumbers, NumbersAreFiniteOrUnreadable) {
  EXPECT_EQ(parse_number("4408.1"), 4408.1);
  EXPECT_EQ(parse_number("-2"), -2.0);
  EXPECT_EQ(parse_number("1e3"), 1000.0);
  for (const char* bad : {"", "1e999", "-1e999", "inf", "nan", "4408.1 GB/s", " 1", "0x10"})
    EXPECT_EQ(parse_number(bad), std::nullopt) << bad;
  EXPECT_EQ(leading_digits("7 timed runs"), "7");
  EXPECT_EQ(leading_digits("x7"), "");
}

TEST(SanitizerSummary, TwentyDigitCountIsUnreadableNotAThrow) {
  const SanitizerSummary errors =
      parse_sanitizer_summary("memcheck", "========= ERROR SUMMARY: 99999999999999999999 errors\n");
  EXPECT_FALSE(errors.found);
  EXPECT_EQ(errors.errors, -1);
  EXPECT_TRUE(contains(errors.problem, "unreadable")) << errors.problem;
  const SanitizerSummary hazards = parse_sanitizer_summary(
      "racecheck",
      "========= RACECHECK SUMMARY: 5 hazards displayed (0 errors, 2147483648 warnings)\n"
      "========= ERROR SUMMARY: 0 errors\n");
  EXPECT_FALSE(hazards.found);
  EXPECT_EQ(hazards.problems(), -1);
  EXPECT_TRUE(contains(hazards.problem, "unreadable")) << hazards.problem;
  // The largest int still reads; a line too long for a regex is not read at all.
  EXPECT_EQ(
      parse_sanitizer_summary("memcheck", "========= ERROR SUMMARY: 2147483647 errors").errors,
      2147483647);
  EXPECT_FALSE(parse_sanitizer_summary("memcheck",
                                       "========= ERROR SUMMARY: 1 errors" + std::string(5000, ' '))
                   .found);
  SanitizerRun run;
  run.tool = "memcheck";
  run.problem = "no summary";
  run.summary = errors;
  EXPECT_TRUE(contains(run.describe(), "unreadable")) << run.describe();
  EXPECT_FALSE(run.clean());
}

TEST(BenchJson, HugeAndNegativeNumbersAreNoMeasurement) {
  const BenchResults r = parse_bench_json(R"({
    "context": {"ceiling_gbps": "1e999", "theoretical_gbps": -5, "gpu": 7},
    "benchmarks": [
      {"name": "sum/04_sequential/99999999999999999999/manual_time", "run_type": "iteration",
       "median_us": "1e999", "median_gbps": "nan", "wrong_results": -3},
      {"name": "sum/04_sequential/-5", "median_gbps": "-1e308", "error_occurred": "yes"},
      {"name": "sum/cub/10^40", "median_gbps": 99999999999999999999}]})");
  ASSERT_TRUE(r.parsed);
  EXPECT_EQ(r.ceiling_gbps, 0);
  EXPECT_EQ(r.theoretical_gbps, 0);
  EXPECT_EQ(r.gpu, "");
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[0].n, 0u);
  EXPECT_EQ(r.rows[0].median_us, 0);
  EXPECT_EQ(r.rows[0].median_gbps, 0);
  EXPECT_EQ(r.rows[0].wrong_results, 0);
  EXPECT_EQ(r.rows[1].n, 0u);
  EXPECT_EQ(r.rows[1].median_gbps, 0);
  EXPECT_TRUE(r.rows[1].error);
  EXPECT_EQ(r.rows[2].n, 0u);
  EXPECT_EQ(r.rows[2].median_gbps, 1e20);
  EXPECT_EQ(parse_size("18446744073709551616"), 0u);
  EXPECT_EQ(parse_size("9223372036854775808"), 0u);
  EXPECT_EQ(parse_size("-5"), 0u);
  EXPECT_EQ(parse_size("2^63"), 0u);
  EXPECT_EQ(parse_size("2^62"), std::size_t{1} << 62);
  EXPECT_EQ(parse_size("nan^2"), 0u);
}

TEST(OutcomeRecord, FieldsOfTheWrongTypeAreIgnored) {
  const auto parts = parse_outcome_record(
      "{\"part\":-1,\"repetition\":0}\n{\"part\":\"1\",\"repetition\":0}\n"
      "{\"end\":5,\"result\":\"passed\"}\n{\"start\":[\"a\"]}\n"
      "{\"end\":\"S.a\",\"result\":7,\"broken\":\"yes\",\"message\":3}\n" +
      std::string(100000, '[') + std::string(100000, ']') + "\n");
  ASSERT_EQ(parts.size(), 1u);
  const RecordedPart& p = parts.at({0, 0});
  ASSERT_EQ(p.finished.size(), 1u);
  EXPECT_EQ(p.finished[0].result, TestResult::kFailed) << "no result that says passed: failed";
  EXPECT_FALSE(p.finished[0].sticky_cuda_error);
  EXPECT_TRUE(p.finished[0].message.empty());
  EXPECT_FALSE(p.in_progress.has_value());
}

TEST(LongLines, AreReadWithoutARegex) {
  // Lines long enough to overflow the stack of std::regex's recursive matcher.
  const std::string name(2'000'000, 'a');
  const std::vector<LibraryFinding> exports =
      check_exports("0000000000001000 T " + name + "\n", ContractExports{});
  ASSERT_EQ(exports.size(), 1u);
  EXPECT_TRUE(contains(exports[0].what, "aaa..."));
  SymbolPolicy policy;
  policy.forbidden_imports = {"dlopen"};
  EXPECT_EQ(check_imports("                 U dlopen@GLIBC_2.34\n U " + name, policy).size(), 1u);
  EXPECT_EQ(check_host_code("0000000000001100 <" + name + ">:\n    1205:\tsyscall\n").size(), 1u);
  EXPECT_EQ(check_symbol_text("", " 0x01 (NEEDED) Shared library: [libcublas" + name + "]\n",
                              LibraryRules{})
                .forbidden.size(),
            1u);
  EXPECT_EQ(extract_compiler_errors("[" + std::string(2'000'000, '9') + "/2] x\nerror: x\n", ""),
            "error: x");
}

// ---- the fuzzer ---------------------------------------------------------------------------------

/// The seed of this run: REDUCE_FUZZ_SEED when set, else a fresh one; printed either way.
std::uint64_t base_seed() {
  static const std::uint64_t seed = [] {
    const char* text = std::getenv("REDUCE_FUZZ_SEED");
    const auto fixed = text != nullptr ? parse_count(text) : std::nullopt;
    return fixed ? *fixed : random_seed();
  }();
  return seed;
}

/// Numbers that do not fit the types the parsers read into, or are no numbers at all.
const char* const kNumbers[] = {"99999999999999999999",
                                "-1",
                                "-2147483649",
                                "2147483648",
                                "4294967296",
                                "18446744073709551616",
                                "9223372036854775808",
                                "-0",
                                "1e999",
                                "-1e999",
                                "nan",
                                "inf",
                                "0x7fffffff",
                                "1.5",
                                "00000000000000000000000000001"};
/// What the parsers look for, to be put where they do not expect it.
const char* const kMarkers[] = {"[ RUN      ] ",
                                "[       OK ] ",
                                "[  FAILED  ] ",
                                "[  SKIPPED ] ",
                                "[==========] ",
                                " ran.",
                                "========= ERROR SUMMARY: ",
                                "RACECHECK SUMMARY: ",
                                " hazards displayed (",
                                " errors, ",
                                " warnings)",
                                "Repeating all tests (iteration ",
                                "{",
                                "}",
                                "[",
                                "]",
                                "\"",
                                ":",
                                ",",
                                "(NEEDED)",
                                "#include <",
                                "\\",
                                "$$",
                                "^",
                                " <",
                                ">:",
                                "\t",
                                "\r\n",
                                "\n"};

/// Made-up inputs: random bytes, and realistic samples broken in the ways that used to stop the
/// grader (numbers that do not fit, NUL bytes, very long lines, truncation, splices).
class Fuzzer {
 public:
  /// \p samples: realistic inputs of the parser under test.
  explicit Fuzzer(std::vector<std::string> samples) : samples_(std::move(samples)) {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    seed_ = base_seed() ^ std::hash<std::string>{}(test);
    rng_.seed(seed_);
    std::cout << "[   FUZZ   ] " << test << ": seed " << base_seed()
              << " (REDUCE_FUZZ_SEED=" << base_seed() << " repeats it)" << std::endl;
  }

  /// Input number \p i of this run.
  std::string input(int i) {
    if (i < static_cast<int>(samples_.size())) return samples_[static_cast<std::size_t>(i)];
    if (pick(10) == 0) return random_bytes(pick(2000));
    std::string text = samples_[pick(samples_.size())];
    for (std::size_t k = 1 + pick(4); k > 0; --k) mutate(text);
    return text;
  }

  /// A short, printable form of \p text for a failure message.
  static std::string shown(const std::string& text) {
    std::string out;
    for (unsigned char c : text.substr(0, 400))
      out += c >= 0x20 && c < 0x7F ? std::string(1, static_cast<char>(c)) : fmt_byte(c);
    return out + (text.size() > 400 ? "... (" + std::to_string(text.size()) + " bytes)" : "");
  }

 private:
  static std::string fmt_byte(unsigned char c) {
    static const char* const hex = "0123456789abcdef";
    return std::string("\\x") + hex[c >> 4] + hex[c & 15];
  }

  std::size_t pick(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng_() % n); }

  std::string random_bytes(std::size_t n) {
    std::string text(n, '\0');
    for (char& c : text) c = static_cast<char>(rng_() & 0xFF);
    return text;
  }

  /// One number of \p text (or, with none, the place \p at) replaced by one that does not fit.
  void replace_number(std::string& text, std::size_t at) {
    std::vector<std::size_t> starts;
    for (std::size_t i = 0; i < text.size(); ++i)
      if (std::isdigit(static_cast<unsigned char>(text[i])) &&
          (i == 0 || !std::isdigit(static_cast<unsigned char>(text[i - 1]))))
        starts.push_back(i);
    const std::string number =
        pick(4) == 0 ? std::string(1 + pick(400), '9') : kNumbers[pick(std::size(kNumbers))];
    if (starts.empty()) {
      text.insert(at, number);
      return;
    }
    const std::size_t from = starts[pick(starts.size())];
    std::size_t to = from;
    while (to < text.size() && std::isdigit(static_cast<unsigned char>(text[to]))) ++to;
    text.replace(from, to - from, number);
  }

  /// The line of \p text that holds \p at, repeated up to 50 times.
  void repeat_line(std::string& text, std::size_t at) {
    const std::size_t begin = text.rfind('\n', at == 0 ? 0 : at - 1);
    const std::size_t from = begin == std::string::npos ? 0 : begin + 1;
    const std::size_t end = text.find('\n', from);
    const std::string line = text.substr(from, end == std::string::npos ? end : end - from + 1);
    std::string copies;
    for (std::size_t k = 1 + pick(50); k > 0; --k) copies += line;
    text.insert(from, copies);
  }

  /// One of eleven mutations of \p text, at a random place.
  void mutate(std::string& text) {
    const std::size_t at = pick(text.size() + 1);
    switch (pick(11)) {
      case 0:  // bit flips
        for (std::size_t k = 1 + pick(8); k > 0 && !text.empty(); --k)
          text[pick(text.size())] ^= static_cast<char>(1u << pick(8));
        break;
      case 1:  // truncation
        text.resize(at);
        break;
      case 2:  // a range removed
        text.erase(at, pick(200));
        break;
      case 3: {  // splice with another sample
        const std::string& other = samples_[pick(samples_.size())];
        text = text.substr(0, at) + other.substr(pick(other.size() + 1));
        break;
      }
      case 4:
      case 5:  // a number replaced by one that does not fit (or is no number)
        replace_number(text, at);
        break;
      case 6:  // NUL bytes
        text.insert(at, std::string(1 + pick(4), '\0'));
        break;
      case 7: {  // a very long line (now and then long enough for a regex to overflow the stack)
        static const char kFill[] = {'9', ' ', 'a', '[', '<', '\\', '"', '=', '\0', '/'};
        const std::size_t n = pick(20) == 0 ? 200'000 + pick(300'000) : 1'000 + pick(20'000);
        text.insert(at, std::string(n, kFill[pick(std::size(kFill))]));
        break;
      }
      case 8:  // a marker the parser looks for, out of place
        text.insert(at, kMarkers[pick(std::size(kMarkers))]);
        break;
      case 9:  // a line repeated
        repeat_line(text, at);
        break;
      default:  // random bytes inserted
        text.insert(at, random_bytes(1 + pick(64)));
        break;
    }
  }

  std::vector<std::string> samples_;
  std::uint64_t seed_ = 0;
  std::mt19937_64 rng_;
};

/// Runs \p check on \p count inputs of \p fuzzer; a failure names the input.
void fuzz(Fuzzer& fuzzer, int count, const std::function<void(const std::string&)>& check) {
  for (int i = 0; i < count && !::testing::Test::HasFailure(); ++i) {
    const std::string text = fuzzer.input(i);
    try {
      check(text);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw: " << e.what();
    } catch (...) {
      ADD_FAILURE() << "threw something that is not a std::exception";
    }
    if (::testing::Test::HasFailure())
      ADD_FAILURE() << "on input " << i << " of seed " << base_seed() << ": "
                    << Fuzzer::shown(text);
  }
}

// ---- samples ------------------------------------------------------------------------------------

const char* const kGtestStream =
    "Running main() from gtest_main.cc\n"
    "[==========] Running 4 tests from 2 test suites.\n"
    "[----------] Global test environment set-up.\n"
    "[ RUN      ] SumTest.EmptyInputIsPositiveZero\n"
    "[       OK ] SumTest.EmptyInputIsPositiveZero (1 ms)\n"
    "[ RUN      ] Sizes/SumExact.MatchesBitwise/33\n"
    "sum_test.cu:80: Failure\n"
    "Expected equality of these values:\n"
    "  got\n"
    "    Which is: 1024\n"
    "  expected\n"
    "    Which is: 1025\n"
    "n = 1025: got 1024, expected exactly 1025\n"
    "[  FAILED  ] Sizes/SumExact.MatchesBitwise/33, where GetParam() = 33 (2 ms)\n"
    "[ RUN      ] SumTest.Big\n"
    "[checker] no CUDA device with 8 GiB free\n"
    "[  SKIPPED ] SumTest.Big (0 ms)\n"
    "[ RUN      ] HiddenLarge.Exact/7\n"
    "CUDA error: an illegal memory access was encountered (cudaErrorIllegalAddress)\n"
    "[  FAILED  ] HiddenLarge.Exact/7 (3 ms)\n"
    "[==========] 4 tests from 2 test suites ran. (5 ms total)\n"
    "[  PASSED  ] 1 test.\n"
    "[  FAILED  ] 2 tests, listed below:\n"
    "[  FAILED  ] Sizes/SumExact.MatchesBitwise/33, where GetParam() = 33\n"
    "[  FAILED  ] HiddenLarge.Exact/7\n";

const char* const kGtestRepeated =
    "Repeating all tests (iteration 1) . . .\n\n"
    "[ RUN      ] SumTest.A\n[       OK ] SumTest.A (1 ms)\n"
    "[==========] 1 test from 1 test suite ran. (1 ms total)\n"
    "Repeating all tests (iteration 2) . . .\n\n"
    "[ RUN      ] SumTest.A\n[  FAILED  ] SumTest.A (1 ms)\n"
    "[==========] 1 test from 1 test suite ran. (1 ms total)\n";

const char* const kGtestList =
    "Running main() from gtest_main.cc\n"
    "SumTest.\n"
    "  EmptyInputIsPositiveZero\n"
    "  EveryCallComputesAfresh\n"
    "Sizes/SumExact.  # TypeParam = x\n"
    "  MatchesBitwise/1  # GetParam() = 1\n"
    "  MatchesBitwise/33  # GetParam() = 33\n";

const char* const kOutcomeRecord =
    "{\"part\":0,\"lab\":\"04_sequential\",\"op\":\"sum\",\"repetition\":0}\n"
    "{\"start\":\"SumTest.A\"}\n"
    "{\"end\":\"SumTest.A\",\"result\":\"passed\",\"broken\":false,\"message\":\"\"}\n"
    "{\"start\":\"Sizes/SumExact.MatchesBitwise/33\"}\n"
    "{\"end\":\"Sizes/SumExact.MatchesBitwise/33\",\"result\":\"failed\",\"broken\":true,"
    "\"message\":\"sum_test.cu:80\\nExpected equality of these values:\\n  got\\n\"}\n"
    "{\"finished\":true}\n";

const char* const kMemcheckLog =
    "========= COMPUTE-SANITIZER\n"
    "========= Invalid __global__ read of size 4 bytes\n"
    "=========     at reduce::sum_kernel(const float *, unsigned long, float *)+0x90 in sum.cu:42\n"
    "=========     by thread (255,0,0) in block (3,0,0)\n"
    "=========     Address 0x7f0000001000 is out of bounds\n"
    "=========\n"
    "========= ERROR SUMMARY: 3 errors\n";

const char* const kRacecheckLog =
    "========= COMPUTE-SANITIZER\n"
    "========= Warning: Race reported between Read access at 0x1a0 in sum.cu:42\n"
    "=========     and Write access at 0x1c0 in sum.cu:44 [248 hazards]\n"
    "=========\n"
    "========= RACECHECK SUMMARY: 5 hazards displayed (0 errors, 5 warnings)\n"
    "========= ERROR SUMMARY: 0 errors\n";

const char* const kBenchJson17 = R"({
  "context": {"date": "2025-01-01", "host_name": "h", "num_cpus": 16, "mhz_per_cpu": 2000,
              "ceiling_gbps": "4408.1", "theoretical_gbps": "4800.0", "gpu": "NVIDIA H200",
              "library_build_type": "release"},
  "benchmarks": [
    {"name": "sum/stream_read/268435456/min_time:0.100/manual_time", "family_index": 0,
     "run_name": "sum/stream_read/268435456", "run_type": "iteration", "repetitions": 1,
     "iterations": 410, "real_time": 243.8, "cpu_time": 250.1, "time_unit": "us",
     "median_us": 243.8, "median_gbps": 4403.5, "wrong_results": 0},
    {"name": "sum/04_sequential/268435455/manual_time", "run_type": "iteration",
     "median_us": 1154.5, "median_gbps": 930.1, "wrong_results": 0, "warmup_wrong": 0,
     "clocks_agree": 1, "failure": 0},
    {"name": "sum/09_warp_shuffle/2^28/manual_time", "run_type": "iteration",
     "error_occurred": true, "error_message": "WRONG in 7 timed runs", "failure": 1,
     "wrong_results": 7, "warmup_wrong": 2, "clocks_agree": 1},
    {"name": "sum/cub/268435456_mean", "run_type": "aggregate", "aggregate_name": "mean"}]})";

const char* const kBenchJson18 = R"({"context": {"ceiling_gbps": "3100.0"},
  "benchmarks": [
    {"name": "maximum/10_max_min/1024/min_time:0.100/manual_time", "run_type": "iteration",
     "skipped": true, "skip_message": "not implemented: see labs/10_max_min/maximum.cu"},
    {"name": "segmented_sum_1024/17_segmented/16777215", "run_type": "iteration",
     "median_us": 46.2, "median_gbps": "3000.5", "wrong_results": "0"}]})";

const char* const kCompilerLog =
    "[1/3] Building CUDA object labs/CMakeFiles/submission_04_sequential_sum.dir/sum.cu.o\n"
    "FAILED: labs/CMakeFiles/submission_04_sequential_sum.dir/sum.cu.o\n"
    "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -O3 -c /tmp/s/04_sequential/sum.cu "
    "-o sum.cu.o\n"
    "/tmp/s/04_sequential/sum.cu(12): error: identifier \"bias\" is undefined\n"
    "      float x = bias + v;\n"
    "                ^\n\n"
    "1 error detected in the compilation of \"/tmp/s/04_sequential/sum.cu\".\n"
    "/usr/bin/ld: sum.o: in function `reduce::sum(float const*)':\n"
    "sum.cu:(.text+0x10): undefined reference to `helper()'\n"
    "ninja: build stopped: subcommand failed.\n"
    "gmake[2]: *** [x] Error 1\n";

const char* const kDepfile =
    "labs/CMakeFiles/submission_04_sequential_sum.dir/sum.cu.o: \\\n"
    "  /tmp/build/staging/04_sequential/sum.cu \\\n"
    "  /tmp/build/staging/include/reduce/lab.cuh /usr/local/cuda/include/cuda_runtime.h \\\n"
    "  /usr/local/cuda/include/cub/device/device_reduce.cuh my\\ helper.cuh \\\n"
    "  /usr/include/c++/12/cstdint $$HOME/x.h ../../../etc/passwd \\\\\n"
    "other.o: /usr/local/cuda/include/thrust/reduce.h\n";

const char* const kNm =
    "0000000000001505 T reduce::sum_workspace_bytes(unsigned long)\n"
    "0000000000001525 T reduce::sum(float const*, unsigned long, float*, reduce::Workspace, "
    "CUstream_st*)\n"
    "0000000000001c41 T reduce_sum_lab\n"
    "0000000000001d00 W cub::CUB_200200_900_NS::DeviceReduce::Sum<float*, float*>(void*)\n"
    "0000000000004010 B __bss_start\n"
    "                 U dlopen@GLIBC_2.34\n"
    "                 U cudaFree@libcudart.so.12\n"
    "                 w __gmon_start__\n"
    "0000000000001e00 T reduce_maximum_lab@@LAB\n"
    "nm: x.so: no symbols\n";

const char* const kReadelf =
    "Dynamic section at offset 0x2de0 contains 27 entries:\n"
    "  Tag        Type                         Name/Value\n"
    " 0x0000000000000001 (NEEDED)             Shared library: [libcublas.so.12]\n"
    " 0x0000000000000001 (NEEDED)             Shared library: [libc.so.6]\n"
    " 0x000000000000000e (SONAME)             Library soname: [libsum.so]\n";

const char* const kObjdump =
    "libx.so:     file format elf64-x86-64\n\n"
    "Disassembly of section .text:\n\n"
    "0000000000001100 <reduce::sum(float const*)>:\n"
    "    1100:\tcall   1030 <syscall@plt>\n"
    "    1105:\tmov    $0x3c,%eax\n"
    "0000000000001200 <evil>:\n"
    "    1205:\tsyscall\n"
    "    1300:\tint    $0x80\n"
    "    1400:\tcs sysenter\n"
    "    1401:\trex.W lock\n";

const char* const kSource =
    "// a lab\n"
    "#include <cub/cub.cuh>\n"
    "  #  include \"cub/block/block_reduce.cuh\"\n"
    "#include<thrust/reduce.h>\n"
    "#include <reduce/lab.cuh>\n"
    "__global__ void k(float* x) { x[0] = 1; }\n";

// ---- the parsers under fuzz ---------------------------------------------------------------------

constexpr int kInputs = 5000;

TEST(ParserFuzz, SanitizerSummaries) {
  Fuzzer fuzzer({kMemcheckLog, kRacecheckLog, "========= ERROR SUMMARY: 1 error\n",
                 "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n",
                 kGtestRepeated});
  fuzz(fuzzer, kInputs, [](const std::string& text) {
    for (const char* tool : {"memcheck", "racecheck", "synccheck"}) {
      const SanitizerSummary s = parse_sanitizer_summary(tool, text);
      if (!s.found) {
        EXPECT_EQ(s.errors, -1);
        EXPECT_EQ(s.hazards, -1);
        EXPECT_EQ(s.warnings, -1);
        continue;
      }
      EXPECT_TRUE(s.problem.empty());
      EXPECT_GE(s.errors, 0) << tool;
      EXPECT_GE(s.problems(), 0) << tool;
      if (std::string(tool) == "racecheck") {
        EXPECT_GE(s.hazards, 0);
        EXPECT_GE(s.warnings, 0);
      }
    }
  });
}

TEST(ParserFuzz, GoogleTestListsAndOutcomeRecords) {
  Fuzzer fuzzer({kOutcomeRecord, kGtestStream, kGtestList});
  fuzz(fuzzer, kInputs, [](const std::string& text) {
    std::size_t outcomes = 0;
    for (const auto& [at, part] : parse_outcome_record(text)) {
      outcomes += part.finished.size();
      for (const TestOutcome& o : part.finished) EXPECT_LE(o.message.size(), 6200u);
      SuiteRun run;
      run.tests = part.finished;
      EXPECT_GE(run.passed(), 0);
      EXPECT_LE(run.failure_summaries(5).size(), 6u);
      const auto [pub, hidden] = split_hidden(run);
      EXPECT_EQ(pub.tests.size() + hidden.tests.size(), run.tests.size());
    }
    EXPECT_LE(outcomes, split_lines(text).size());
    EXPECT_LE(parse_gtest_list(text).size(), split_lines(text).size());
    condense_failure(text);
  });
}

/// The recorded H200 benchmark run the other tests read, when the checkout has it.
std::string recorded_run() {
  const std::string text =
      read_file(fs::path(REDUCE_GRADE_TEST_ROOT) / "docs" / "results" / "ladder_h200.json");
  return text.empty() ? kBenchJson17 : text;
}

TEST(ParserFuzz, BenchmarkJson) {
  Fuzzer fuzzer({kBenchJson17, kBenchJson18, recorded_run(), "{}"});
  fuzz(fuzzer, kInputs, [](const std::string& text) {
    const BenchResults r = parse_bench_json(text);
    EXPECT_TRUE(r.parsed || !r.problem.empty());
    for (const double v : {r.ceiling_gbps, r.theoretical_gbps}) {
      EXPECT_TRUE(std::isfinite(v));
      EXPECT_GE(v, 0);
    }
    for (const BenchRow& row : r.rows) {
      for (const double v : {row.median_us, row.median_gbps, row.wrong_results}) {
        EXPECT_TRUE(std::isfinite(v));
        EXPECT_GE(v, 0);
      }
      EXPECT_LT(row.n, std::size_t{1} << 63);
      const GradedVerdict verdict = graded_verdict(row);  // never throws, whatever the fields
      EXPECT_TRUE(std::isfinite(verdict.wrong_results));
      EXPECT_GE(verdict.wrong_results, 0);
      EXPECT_TRUE(verdict.passed || !verdict.reason.empty());
    }
    EXPECT_LT(parse_size(text.substr(0, 64)), std::size_t{1} << 63);
  });
}

TEST(ParserFuzz, CompilerOutput) {
  Fuzzer fuzzer({kCompilerLog, kGtestStream});
  fuzz(fuzzer, kInputs, [](const std::string& text) {
    const std::string errors = extract_compiler_errors(text, "/tmp/s", 20);
    EXPECT_LE(split_lines(errors).size(), 21u);
    EXPECT_EQ(sanitize_text(errors), errors);
  });
}

TEST(ParserFuzz, DependencyLists) {
  Fuzzer fuzzer({kDepfile, "sum.o: sum.cu\n", ":\n"});
  const fs::path dir = make_temp_dir("reduce-grade-fuzz-");
  DependencyPolicy policy;
  policy.lab_dir = dir / "staging" / "04_sequential";
  policy.base_dir = dir;
  policy.contract_headers = {dir / "staging" / "include" / "reduce" / "lab.cuh"};
  fuzz(fuzzer, kInputs / 3, [&](const std::string& text) {
    parse_depfile(text);
    const std::vector<LibraryFinding> found = check_dependencies(text, policy);
    // One finding per library and up to ten outside files, then one line for the rest.
    EXPECT_LE(found.size(), policy.library_headers.size() + policy.library_folders.size() + 11);
  });
  remove_all_quietly(dir);
}

TEST(ParserFuzz, SymbolTables) {
  Fuzzer fuzzer({kNm, kReadelf, kObjdump});
  LibraryRules rules;
  SymbolPolicy policy;
  const ContractExports allowed{{"reduce_sum_lab"}, {"reduce::sum("}};
  fuzz(fuzzer, kInputs, [&](const std::string& text) {
    const LibraryCheck check = check_symbol_text(text, text, rules);
    EXPECT_LE(check.forbidden.size(),
              3 * rules.forbidden_symbols.size() + split_lines(text).size());
    check.describe();
    check_library_bytes(text, rules);
    EXPECT_LE(check_imports(text, policy).size(), policy.forbidden_imports.size());
    EXPECT_LE(check_exports(text, allowed, policy).size(), 1u);
    EXPECT_LE(check_host_code(text).size(), 10u);
  });
}

TEST(ParserFuzz, SourceIncludes) {
  Fuzzer fuzzer({kSource});
  const fs::path dir = make_temp_dir("reduce-grade-fuzz-");
  const LibraryRules rules;
  fuzz(fuzzer, kInputs / 10, [&](const std::string& text) {
    write_file(dir / "lab" / "sum.cu", text);
    EXPECT_LE(scan_sources(dir / "lab", rules).size(), split_lines(text).size());
  });
  remove_all_quietly(dir);
}

}  // namespace
}  // namespace reduce::grade
