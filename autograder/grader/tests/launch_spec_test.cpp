// The launch spec's file (reduce_vocabulary/launch_spec.hpp): what the grader writes is what a
// child reads, and a file of another version, of another child, malformed or missing stops the
// child with a message that says so.
#include <reduce_vocabulary/launch_spec.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace reduce::launch {
namespace {

namespace fs = std::filesystem;

/// A fresh folder of this test's own (the library links nothing of the grader's).
fs::path make_temp_dir(const std::string& prefix) {
  std::string pattern = (fs::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

LaunchSpec checker_spec() {
  LaunchSpec spec;
  spec.child = Child::kChecker;
  spec.seed = 18446744073709551615ull;  // the largest key survives the JSON
  spec.runner.prefix = {"bwrap", "--ro-bind", "/ a b", "/", "--"};
  spec.runner.repetitions = {{{"compute-sanitizer", "--tool", "racecheck"}, "/logs/r-%n.log"},
                             {{"compute-sanitizer", "--tool", "memcheck"}, ""}};
  spec.runner.call_timeout_s = 60;
  spec.runner.exit_grace_s = 1.5;
  spec.mark = "0123456789abcdef";
  spec.labs = {{"04_sequential", "sum", "serial", "sum", "/lib/lib04.so", {"Sum*", "-*Large*"}},
               {"10_minimum", "minimum", "tree", "minimum", "/lib/lib10\t\x1f.so", {}}};
  spec.memory_slots_dir = "/tmp/slots";
  spec.memory_slots = 3;
  spec.gpu_memory_bytes = std::uint64_t{15} << 30;
  spec.hold = "/logs/tests/held";
  spec.hold_limit_s = 600.5;
  return spec;
}

/// The benchmark's runner labs of \p a and \p b, field by field (graded labs or references).
void expect_same_labs(const std::vector<RunnerLab>& a, const std::vector<RunnerLab>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].op, b[i].op);
    EXPECT_EQ(a[i].library, b[i].library);
  }
}

void expect_same(const LaunchSpec& a, const LaunchSpec& b) {
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.child, b.child);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.runner.prefix, b.runner.prefix);
  ASSERT_EQ(a.runner.repetitions.size(), b.runner.repetitions.size());
  for (std::size_t i = 0; i < a.runner.repetitions.size(); ++i) {
    EXPECT_EQ(a.runner.repetitions[i].prefix, b.runner.repetitions[i].prefix);
    EXPECT_EQ(a.runner.repetitions[i].report, b.runner.repetitions[i].report);
  }
  EXPECT_EQ(a.runner.call_timeout_s, b.runner.call_timeout_s);
  EXPECT_EQ(a.runner.exit_grace_s, b.runner.exit_grace_s);
  EXPECT_EQ(a.mark, b.mark);
  ASSERT_EQ(a.labs.size(), b.labs.size());
  for (std::size_t i = 0; i < a.labs.size(); ++i) {
    EXPECT_EQ(a.labs[i].name, b.labs[i].name);
    EXPECT_EQ(a.labs[i].op, b.labs[i].op);
    EXPECT_EQ(a.labs[i].order, b.labs[i].order);
    EXPECT_EQ(a.labs[i].entry, b.labs[i].entry);
    EXPECT_EQ(a.labs[i].library, b.labs[i].library);
    EXPECT_EQ(a.labs[i].filters, b.labs[i].filters);
  }
  EXPECT_EQ(a.memory_slots_dir, b.memory_slots_dir);
  EXPECT_EQ(a.memory_slots, b.memory_slots);
  EXPECT_EQ(a.gpu_memory_bytes, b.gpu_memory_bytes);
  EXPECT_EQ(a.hold, b.hold);
  EXPECT_EQ(a.hold_limit_s, b.hold_limit_s);
  expect_same_labs(a.graded, b.graded);
  expect_same_labs(a.references, b.references);
  EXPECT_EQ(a.sizes, b.sizes);
}

/// The message of the LaunchSpecError that reading \p text as \p child throws ("" if none).
std::string refusal(const std::string& text, Child child = Child::kChecker) {
  try {
    parse_launch_spec(text, "test.json", child);
  } catch (const LaunchSpecError& e) {
    return e.what();
  }
  return "";
}

TEST(LaunchSpec, CheckerSpecRoundTripsThroughItsFile) {
  const fs::path dir = make_temp_dir("launch-spec-");
  const fs::path file = dir / "tests.launch.json";
  write_launch_spec(file.string(), checker_spec());
  expect_same(read_launch_spec(file.string(), Child::kChecker), checker_spec());
  // Readable by its owner alone: the seed and the mark are the grading's secrets.
  struct stat st{};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  fs::remove_all(dir);
}

TEST(LaunchSpec, BenchSpecRoundTrips) {
  LaunchSpec spec;
  spec.child = Child::kBench;
  spec.seed = 7;
  spec.runner.prefix = {"confine"};
  spec.runner.call_timeout_s = 60;
  spec.graded = {{"04_sequential", "sum", "/a/lib.so"}, {"17_segmented", "segmented_sum", "/b"}};
  spec.references = {{"reference-04_sequential", "sum", "/ref/lib.so"}};
  spec.sizes = {std::size_t{1} << 28, 1024};
  expect_same(parse_launch_spec(launch_spec_json(spec), "mem", Child::kBench), spec);
  LaunchSpec no_seed = spec;
  no_seed.seed.reset();
  EXPECT_FALSE(parse_launch_spec(launch_spec_json(no_seed), "mem", Child::kBench).seed);
}

TEST(LaunchSpec, AnotherVersionIsRefused) {
  std::string text = launch_spec_json(checker_spec());
  const std::string now = "\"version\": " + std::to_string(kLaunchSpecVersion);
  ASSERT_NE(text.find(now), std::string::npos);
  text.replace(text.find(now), now.size(), "\"version\": 1");
  EXPECT_NE(refusal(text).find("version 1, this build reads version " +
                               std::to_string(kLaunchSpecVersion)),
            std::string::npos)
      << refusal(text);
  EXPECT_NE(refusal(R"({"child": "checker"})").find("no integer \"version\""), std::string::npos);
  EXPECT_NE(refusal(R"({"version": "1", "child": "checker"})").find("no integer"),
            std::string::npos);
}

TEST(LaunchSpec, ASpecForAnotherChildIsRefused) {
  const std::string text = launch_spec_json(checker_spec());
  EXPECT_NE(refusal(text, Child::kBench).find("written for \"checker\", not for the bench"),
            std::string::npos)
      << refusal(text, Child::kBench);
  EXPECT_NE(refusal(R"({"version": 3})").find("written for no one"), std::string::npos);
}

TEST(LaunchSpec, MalformedFilesAreRefusedWithWhatIsWrong) {
  EXPECT_NE(refusal("").find("not valid JSON"), std::string::npos);
  EXPECT_NE(refusal("{\"version\": 3,").find("not valid JSON"), std::string::npos);
  EXPECT_NE(refusal("[1, 2]").find("not a JSON object"), std::string::npos);
  const std::string head = R"({"version": 3, "child": "checker", )";
  for (const char* body :
       {R"("seed": -1})", R"("seed": "12"})", R"("runner": {"prefix": "bwrap"}})",
        R"("runner": {"call_timeout_s": -5}})", R"("runner": []})",
        R"("runner": {"repetitions": [3]}})", R"("labs": [{"name": "04"}]})",
        R"("labs": {"name": "04", "library": "x"}})", R"("memory_slots": 3})", R"("mark": 12})",
        R"("gpu_memory_bytes": 1.5})", R"("hold": "/a"})", R"("hold": {"folder": 3}})",
        R"("hold": {"folder": "/a", "limit_s": "9"}})"}) {
    const std::string why = refusal(head + body);
    EXPECT_NE(why.find("launch spec test.json: malformed: "), std::string::npos)
        << body << " -> " << why;
  }
}

TEST(LaunchSpec, AMissingFileIsRefusedAndAnUnsetVariableMeansNone) {
  const fs::path dir = make_temp_dir("launch-spec-");
  try {
    read_launch_spec((dir / "absent.json").string(), Child::kChecker);
    ADD_FAILURE() << "a missing file was read";
  } catch (const LaunchSpecError& e) {
    EXPECT_NE(std::string(e.what()).find("absent.json: cannot be read"), std::string::npos);
  }
  ::unsetenv(kLaunchSpecVariable);
  EXPECT_FALSE(launch_spec_from_environment(Child::kChecker).has_value());
  ::setenv(kLaunchSpecVariable, (dir / "absent.json").c_str(), 1);
  EXPECT_THROW(launch_spec_from_environment(Child::kChecker), LaunchSpecError);
  ::unsetenv(kLaunchSpecVariable);
  fs::remove_all(dir);
}

TEST(LaunchSpec, WritingReplacesALinkInsteadOfFollowingIt) {
  // A link planted where the spec goes must not send the grader's secrets elsewhere.
  const fs::path dir = make_temp_dir("launch-spec-");
  write_file(dir / "elsewhere", "untouched");
  fs::create_symlink(dir / "elsewhere", dir / "spec.json");
  write_launch_spec((dir / "spec.json").string(), checker_spec());
  EXPECT_EQ(read_file(dir / "elsewhere"), "untouched");
  EXPECT_FALSE(fs::is_symlink(dir / "spec.json"));
  expect_same(read_launch_spec((dir / "spec.json").string(), Child::kChecker), checker_spec());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace reduce::launch
