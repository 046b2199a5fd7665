// The course model: lab list, lab selection, submission layout, operation plans, and the
// compiler-error excerpt.
#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/grading/planted.hpp>
#include <reduce_grade/submission/build.hpp>

#include <gtest/gtest.h>

#include <regex>

#include <unistd.h>

namespace reduce::grade {
namespace {

TEST(CourseCatalogue, ParsesOperationsAndLabs) {
  const Course course = parse_course_catalogue(R"({
    "operations": [{"name": "sum", "result": "float", "entry": "sum", "bench": "sum"},
                   {"name": "sum_deterministic", "result": "float", "entry": "sum", "bench": "sum"},
                   {"name": "maximum", "result": "float", "entry": "maximum", "bench": "maximum"},
                   {"name": "minimum", "result": "float", "entry": "minimum"},
                   {"name": "atomic_max", "result": "apply", "entry": "atomic_max_apply"}],
    "labs": [{"folder": "01_atomic_naive", "ops": ["sum"], "order": "serial"},
             {"folder": "10_max_min", "ops": ["maximum", "minimum"]},
             {"folder": "15_capstone", "ops": ["sum", "sum_deterministic"], "order": "tree"}]})");
  ASSERT_EQ(course.labs.size(), 3u);
  EXPECT_EQ(course.labs[0].folder, "01_atomic_naive");
  EXPECT_EQ(course.labs[0].order, "serial");
  EXPECT_EQ(course.labs[0].number, 1);
  EXPECT_EQ(course.labs[1].ops, (std::vector<std::string>{"maximum", "minimum"}));
  EXPECT_EQ(course.labs[1].order, "tree");
  EXPECT_EQ(course.labs[2].ops, (std::vector<std::string>{"sum", "sum_deterministic"}));
  ASSERT_NE(course.operation("sum_deterministic"), nullptr);
  EXPECT_EQ(course.operation("sum_deterministic")->entry, "sum");
  EXPECT_EQ(course.operation("atomic_max")->result, "apply");
  EXPECT_EQ(course.operation("minimum")->bench, "");
}

TEST(CourseCatalogue, RefusesUnknownOperationsAndBadJson) {
  EXPECT_THROW(parse_course_catalogue("{"), ConfigError);
  EXPECT_THROW(parse_course_catalogue(R"({"operations": [], "labs": []})"), ConfigError);
  EXPECT_THROW(parse_course_catalogue(R"({"operations": [{"name": "sum", "result": "double",
      "entry": "sum"}], "labs": [{"folder": "01_atomic_naive", "ops": ["sum"]}]})"),
               ConfigError);
  EXPECT_THROW(parse_course_catalogue(
                   R"({"operations": [{"name": "sum", "result": "float", "entry": "sum"}],
                       "labs": [{"folder": "01_x", "ops": ["product"]}]})"),
               ConfigError);
}

TEST(CourseLabs, TheRealCourse) {
  const Course course = load_course(REDUCE_GRADE_TEST_ROOT);
  ASSERT_GE(course.labs.size(), 9u);
  EXPECT_EQ(course.labs[0].folder, "01_atomic_naive");
  EXPECT_EQ(course.labs[0].ops, std::vector<std::string>{"sum"});
  EXPECT_EQ(course.labs[8].folder, "09_warp_shuffle");
  for (const CourseLab& lab : course.labs) {
    EXPECT_TRUE(fs::is_directory(course.root / "labs" / lab.folder)) << lab.folder;
    EXPECT_TRUE(fs::is_directory(course.root / "solutions" / lab.folder)) << lab.folder;
  }
}

/// One suite declaration of the course's test sources: its file and the names it may stand for
/// (both of REDUCE_EXTREMUM_PICK(maximum's, minimum's)).
struct DeclaredSuite {
  fs::path file;
  std::vector<std::string> names;
  bool hidden;  ///< in autograder/hidden/
};

/// Every suite the course's test sources declare (TEST, TEST_F, TEST_P...).
std::vector<DeclaredSuite> declared_suites(const fs::path& root) {
  const std::regex declared(R"(\b(?:TEST|TEST_F|TEST_P|TYPED_TEST|TYPED_TEST_P)\(\s*)"
                            R"((?:REDUCE_EXTREMUM_PICK\(\s*(\w+)\s*,\s*(\w+)\s*\)|(\w+)))");
  std::vector<DeclaredSuite> suites;
  for (const bool hidden : {false, true}) {
    const fs::path dir = root / "autograder" / (hidden ? "hidden" : "tests");
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
      const std::string ext = e.path().extension().string();
      if (ext != ".cu" && ext != ".cuh" && ext != ".hpp") continue;
      const std::string text = read_file(e.path());
      for (std::sregex_iterator m(text.begin(), text.end(), declared), end; m != end; ++m) {
        DeclaredSuite suite{e.path(), {}, hidden};
        for (int group : {1, 2, 3})
          if ((*m)[group].matched) suite.names.push_back((*m)[group].str());
        suites.push_back(std::move(suite));
      }
    }
  }
  return suites;
}

// The grader splits a graded checker's results by suite name (is_hidden_test): every hidden
// suite must be named Hidden*, and no public one.
TEST(CourseSuites, OnlyTheHiddenSuitesAreNamedHidden) {
  int seen[2] = {0, 0};
  for (const DeclaredSuite& suite : declared_suites(REDUCE_GRADE_TEST_ROOT)) {
    ++seen[suite.hidden];
    for (const std::string& name : suite.names)
      EXPECT_EQ(starts_with(name, "Hidden"), suite.hidden)
          << suite.file.filename().string() << ": suite " << name;
  }
  EXPECT_GT(seen[0], 20);
  EXPECT_GT(seen[1], 10);
}

/// Whether the course's test sources declare the test \p name ("Suite.Test", as a fixture's
/// TEST_F(Suite, Test) or a TEST(Suite, Test)).
bool test_declared(const fs::path& root, const std::string& name) {
  const std::size_t dot = name.find('.');
  if (dot == std::string::npos) return false;
  const std::regex declared(R"(\bTEST(?:_F)?\(\s*)" + name.substr(0, dot) + R"(\s*,\s*)" +
                            name.substr(dot + 1) + R"(\s*\))");
  for (const fs::directory_entry& e : fs::directory_iterator(root / "autograder" / "tests")) {
    const std::string text = read_file(e.path());
    if (e.is_regular_file() && std::regex_search(text, declared)) return true;
  }
  return false;
}

// A lab's left-out tests (course.json `left_out`) are tests its operations have, each named
// exactly (a typo would leave out nothing); lab 01 keeps the 2^32-element test that fails every
// 32-bit index, and leaves out the 2^31-element one, 2^31 atomics in a line.
TEST(CourseLabs, LeftOutTestsAreTestsTheLabHas) {
  const Course course = load_course(REDUCE_GRADE_TEST_ROOT);
  int named = 0;
  for (const CourseLab& lab : course.labs)
    for (const std::string& test : lab.left_out) {
      ++named;
      EXPECT_TRUE(test_declared(course.root, test)) << lab.folder << ": " << test;
      EXPECT_EQ(test.find_first_of("*?:-"), std::string::npos) << "a name, not a pattern";
    }
  EXPECT_GE(named, 1);
  const CourseLab* atomic = course.find("01_atomic_naive");
  ASSERT_NE(atomic, nullptr);
  EXPECT_EQ(atomic->left_out, std::vector<std::string>{"SumTest.AboveInt32Range"});
  EXPECT_TRUE(test_declared(course.root, "SumTest.AboveUint32Range"));
  EXPECT_TRUE(course.find("04_sequential")->left_out.empty());
  EXPECT_FALSE(test_declared(course.root, "SumTest.NoSuchTest"));
}

/// An operation in CamelCase, the stem of its suites' names: sum_compensated -> SumCompensated.
std::string camel_case(const std::string& op) {
  std::string camel;
  bool start = true;
  for (const char ch : op) {
    if (ch == '_') {
      start = true;
      continue;
    }
    camel += start ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
    start = false;
  }
  return camel;
}

// The build selects an operation's tests in the course's checkers by name (each operation's
// filters in course-manifest.json, autograder/tests/CMakeLists.txt): every suite of <op>_test.cu
// is named after the operation in CamelCase (every suite of <op>_hidden_test.cu "Hidden" and
// that), a shared header's after an operation whose files include it, and none after a longer
// operation's name (sum's suites are no SumCompensated*).
TEST(CourseSuites, EveryOperationsSuitesAreNamedAfterIt) {
  const fs::path root = REDUCE_GRADE_TEST_ROOT;
  const Course course = load_course(root);
  std::vector<std::string> stems;
  for (const CourseOperation& op : course.operations) stems.push_back(camel_case(op.name));
  // The stems a file's suites may start with: its operation's, or those of the files that
  // include it (a shared header).
  const auto stems_of = [&](const fs::path& file, bool hidden) {
    std::vector<std::string> found;
    const std::string prefix = hidden ? "Hidden" : "";
    const std::string suffix = hidden ? "_hidden_test.cu" : "_test.cu";
    for (const CourseOperation& op : course.operations) {
      const fs::path source = file.parent_path() / (op.name + suffix);
      if (file == source ||
          (fs::exists(source) &&
           contains(read_file(source), "#include \"" + file.filename().string() + "\"")))
        found.push_back(prefix + camel_case(op.name));
    }
    return found;
  };
  for (const DeclaredSuite& suite : declared_suites(root)) {
    const std::vector<std::string> allowed = stems_of(suite.file, suite.hidden);
    for (const std::string& name : suite.names) {
      std::string stem;
      for (const std::string& s : allowed)
        if (starts_with(name, s) && s.size() > stem.size()) stem = s;
      if (stem.empty()) {
        ADD_FAILURE() << suite.file.filename().string() << ": suite " << name
                      << " is named after none of its operations";
        continue;
      }
      for (const std::string& other : stems) {
        const std::string longer = (suite.hidden ? "Hidden" : "") + other;
        EXPECT_FALSE(longer.size() > stem.size() && starts_with(longer, stem) &&
                     starts_with(name, longer))
            << suite.file.filename().string() << ": suite " << name << " is named after " << longer
            << ", another operation";
      }
    }
  }
}

TEST(SelectLabs, NumbersNamesAndAll) {
  const Course course = load_course(REDUCE_GRADE_TEST_ROOT);
  EXPECT_EQ(select_labs(course, "04,1"),
            (std::vector<std::string>{"01_atomic_naive", "04_sequential"}));
  EXPECT_EQ(select_labs(course, "09_warp_shuffle;4"),
            (std::vector<std::string>{"04_sequential", "09_warp_shuffle"}));
  EXPECT_EQ(select_labs(course, "").size(), course.labs.size());
  EXPECT_EQ(select_labs(course, "all").size(), course.labs.size());
  EXPECT_THROW(select_labs(course, "04,99"), ConfigError);
  EXPECT_THROW(select_labs(course, "sequential"), ConfigError);
}

TEST(SubmissionTree, FindsTheLabFolders) {
  const Course course = load_course(REDUCE_GRADE_TEST_ROOT);
  const fs::path dir = make_temp_dir("reduce-grade-tree-");
  fs::create_directories(dir / "flat" / "04_sequential");
  fs::create_directories(dir / "repo" / "labs" / "04_sequential");
  fs::create_directories(dir / "zip" / "alice" / "04_sequential");
  fs::create_directories(dir / "empty");
  EXPECT_EQ(resolve_submission_tree(course, dir / "flat"), dir / "flat");
  EXPECT_EQ(resolve_submission_tree(course, dir / "repo"), dir / "repo" / "labs");
  EXPECT_EQ(resolve_submission_tree(course, dir / "zip"), dir / "zip" / "alice");
  EXPECT_EQ(resolve_submission_tree(course, dir / "empty"), dir / "empty");
  remove_all_quietly(dir);
}

TEST(OpPlans, TestsHiddenTestsAndBenchmarkRows) {
  const Course course = load_course(REDUCE_GRADE_TEST_ROOT);
  CourseLab lab;
  lab.folder = "15_capstone";
  lab.ops = {"sum", "sum_deterministic", "atomic_max", "maximum"};
  const std::vector<OpPlan> plans = plan_ops(course, lab);
  ASSERT_EQ(plans.size(), 4u);
  EXPECT_TRUE(plans[0].public_tests);
  EXPECT_TRUE(plans[0].hidden_tests);  // autograder/hidden/sum_hidden_test.cu
  // The rows' family (their name is the build's: BuildManifest.*).
  EXPECT_EQ(plans[0].bench_op, "sum");
  EXPECT_EQ(plans[1].bench_op, "sum");
  EXPECT_EQ(plans[1].public_tests,
            fs::exists(course.root / "autograder" / "tests" / "sum_deterministic_test.cu"));
  EXPECT_TRUE(plans[2].bench_op.empty());  // atomic_max is tested, not benchmarked
  EXPECT_EQ(plans[3].bench_op, "maximum");
  // The suites that test each (course.json `suites`, default itself).
  EXPECT_EQ(plans[0].suites, std::vector<std::string>({"sum"}));
  EXPECT_EQ(plans[1].suites, std::vector<std::string>({"sum", "sum_deterministic"}));
  EXPECT_EQ(plans[2].suites, std::vector<std::string>({"atomic_max"}));
}

TEST(CompilerErrors, ExcerptDropsNinjaNoiseAndTheSubmissionPath) {
  const std::string log =
      "[1/4] Building CUDA object common/CMakeFiles/reduce_common.dir/src/ceiling.cu.o\n"
      "[2/4] Building CUDA object submission/CMakeFiles/x.dir/sum.cu.o\n"
      "FAILED: submission/CMakeFiles/x.dir/sum.cu.o\n"
      "/usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -O3 -x cu -c "
      "/tmp/sub/04_sequential/sum.cu -o sum.cu.o\n"
      "/tmp/sub/04_sequential/sum.cu(28): error: identifier \"bias\" is undefined\n"
      "    if (tid == 0) partials[blockIdx.x] = s[0] + bias\n"
      "                                                ^\n"
      "\n"
      "1 error detected in the compilation of \"/tmp/sub/04_sequential/sum.cu\".\n"
      "ninja: build stopped: cannot make progress due to previous errors.\n";
  const std::string errors = extract_compiler_errors(log, "/tmp/sub");
  EXPECT_TRUE(
      starts_with(errors, "04_sequential/sum.cu(28): error: identifier \"bias\" is undefined"));
  EXPECT_TRUE(contains(errors, "1 error detected"));
  EXPECT_FALSE(contains(errors, "ninja:"));
  EXPECT_FALSE(contains(errors, "nvcc -forward"));
  EXPECT_FALSE(contains(errors, "/tmp/sub/"));
  const std::string linker =
      "/usr/bin/ld: CMakeFiles/t.dir/sum_test.cu.o: in function `run':\n"
      "sum_test.cu:(.text+0x1a): undefined reference to `reduce::sum(float const*, unsigned "
      "long)'\n"
      "collect2: error: ld returned 1 exit status\n";
  EXPECT_TRUE(
      contains(extract_compiler_errors(linker, "/tmp/sub"), "undefined reference to `reduce::sum"));
  // Only the linker's errors: the sources compiled (a link failure, not a compile error).
  EXPECT_TRUE(links_only("FAILED: lib/libx.so\n/usr/bin/g++ -Werror=return-type -shared -o x.so\n" +
                         linker + "ninja: build stopped: subcommand failed.\n"));
  EXPECT_FALSE(links_only(log));
  EXPECT_FALSE(links_only(log + linker));
  const std::string long_log = std::string(40, 'x') + "\n" + [] {
    std::string s;
    for (int i = 0; i < 50; ++i) s += "sum.cu(" + std::to_string(i) + "): error: e\n";
    return s;
  }();
  EXPECT_TRUE(contains(extract_compiler_errors(long_log, "", 20), "more lines in the build log"));
}

}  // namespace
}  // namespace reduce::grade

namespace reduce::grade {
namespace {

// A planted case keeps only the files its bug changes; grading lays them over the solution.
TEST(PlantedCases, MaterializeOverlaysTheCaseOnItsSolution) {
  const fs::path tmp = fs::temp_directory_path() / ("planted-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  write_file(tmp / "solutions/14_lab/a.cu", "solution a");
  write_file(tmp / "solutions/14_lab/b.cuh", "solution b");
  write_file(tmp / "case/14_lab/b.cuh", "buggy b");
  PlantedExpectation c;
  c.name = "case";
  c.dir = tmp / "case";
  c.lab = "14_lab";
  const fs::path root = materialize_case(c, tmp / "solutions", tmp / "work");
  EXPECT_EQ(read_file(root / "14_lab/a.cu"), "solution a");
  EXPECT_EQ(read_file(root / "14_lab/b.cuh"), "buggy b");
  // A lab graded beside it without a folder in the case is its solution.
  write_file(tmp / "solutions/03_lab/c.cu", "solution c");
  c.graded_beside = {"03_lab"};
  const fs::path beside = materialize_case(c, tmp / "solutions", tmp / "work");
  EXPECT_EQ(read_file(beside / "03_lab/c.cu"), "solution c");
  EXPECT_EQ(read_file(beside / "14_lab/b.cuh"), "buggy b");
  // A lab missing on purpose stays missing: the case is graded as it is.
  c.lab = "15_missing";
  EXPECT_EQ(materialize_case(c, tmp / "solutions", tmp / "work"), c.dir);
  fs::remove_all(tmp);
}

}  // namespace
}  // namespace reduce::grade
