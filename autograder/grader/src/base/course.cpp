#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_vocabulary/result_kind.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <optional>
#include <set>
#include <system_error>

#ifndef REDUCE_GRADE_DEFAULT_ROOT
#define REDUCE_GRADE_DEFAULT_ROOT ""
#endif

namespace reduce::grade {

const CourseLab* Course::find(const std::string& folder) const {
  for (const CourseLab& lab : labs)
    if (lab.folder == folder) return &lab;
  return nullptr;
}

bool is_course_root(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "CMakeLists.txt", ec) &&
         fs::is_regular_file(dir / "cmake" / "ReduceLab.cmake", ec) &&
         fs::is_regular_file(dir / "course.json", ec) &&
         fs::is_directory(dir / "autograder" / "tests", ec);
}

namespace {

std::optional<fs::path> search_upwards(fs::path start) {
  std::error_code ec;
  start = fs::weakly_canonical(start, ec);
  for (fs::path dir = start; !dir.empty(); dir = dir.parent_path()) {
    if (is_course_root(dir)) return dir;
    if (dir == dir.root_path()) break;
  }
  return std::nullopt;
}

fs::path executable_path() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  buf[n] = '\0';
  return fs::path(buf);
}

}  // namespace

fs::path find_course_root(const std::string& explicit_root) {
  std::error_code ec;
  if (!explicit_root.empty()) {
    const fs::path root = fs::weakly_canonical(fs::absolute(explicit_root, ec), ec);
    if (!is_course_root(root))
      throw ConfigError(fmt::format(
          "--root {}: not the course root (expected CMakeLists.txt, cmake/ReduceLab.cmake, "
          "course.json and autograder/tests there)",
          explicit_root));
    return root;
  }
  if (const char* env = std::getenv("REDUCE_COURSE_ROOT"); env != nullptr && *env != '\0') {
    const fs::path root = fs::weakly_canonical(fs::absolute(env, ec), ec);
    if (!is_course_root(root))
      throw ConfigError(fmt::format("REDUCE_COURSE_ROOT={}: not the course root", env));
    return root;
  }
  if (auto found = search_upwards(fs::current_path(ec))) return *found;
  if (const fs::path exe = executable_path(); !exe.empty()) {
    if (auto found = search_upwards(exe.parent_path())) return *found;
  }
  const fs::path built_from = REDUCE_GRADE_DEFAULT_ROOT;
  if (!built_from.empty() && is_course_root(built_from)) return built_from;
  throw ConfigError(
      "cannot find the course root: run inside the course, or pass --root DIR (or set "
      "REDUCE_COURSE_ROOT)");
}

Course parse_course_catalogue(const std::string& json_text) {
  const nlohmann::json json = nlohmann::json::parse(json_text, nullptr, false);
  if (json.is_discarded() || !json.is_object()) throw ConfigError("course.json: not valid JSON");
  Course course;
  try {
    for (const auto& op : json.at("operations")) {
      CourseOperation o;
      o.name = op.at("name").get<std::string>();
      o.entry = op.at("entry").get<std::string>();
      o.result = op.at("result").get<std::string>();
      if (!runner::parse_result_kind(o.result))
        throw ConfigError("course.json: operation " + o.name + " has result '" + o.result + "' (" +
                          runner::result_kind_names() + ")");
      o.bench = op.value("bench", std::string());
      o.suites = op.value("suites", std::vector<std::string>{o.name});
      if (o.suites.empty()) o.suites = {o.name};
      course.operations.push_back(o);
    }
    for (const auto& entry : json.at("labs")) {
      CourseLab lab;
      lab.folder = entry.at("folder").get<std::string>();
      lab.ops = entry.at("ops").get<std::vector<std::string>>();
      lab.order = entry.value("order", std::string("tree"));
      if (lab.order != "serial" && lab.order != "tree" && lab.order != "tree_atomic")
        throw ConfigError("course.json: lab " + lab.folder + " has the unknown order \"" +
                          lab.order + "\" (serial, tree or tree_atomic)");
      lab.number = std::atoi(lab.folder.c_str());
      lab.left_out = entry.value("left_out", std::vector<std::string>{});
      for (const std::string& op : lab.ops)
        if (course.operation(op) == nullptr)
          throw ConfigError("course.json: lab " + lab.folder + " names the unknown operation " +
                            op);
      course.labs.push_back(lab);
    }
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(std::string("course.json: ") + e.what());
  }
  if (course.labs.empty()) throw ConfigError("course.json: no labs");
  return course;
}

Course load_course(const fs::path& root) {
  if (!is_course_root(root))
    throw ConfigError(fmt::format("{}: not the course root", root.string()));
  Course course = parse_course_catalogue(read_file(root / "course.json"));
  course.root = root;
  for (CourseLab& lab : course.labs) lab.plans = plan_ops(course, lab);
  course.part_seconds = load_part_seconds(root / "autograder" / "part_seconds.toml");
  return course;
}

const CourseOperation* Course::operation(const std::string& name) const {
  for (const CourseOperation& op : operations)
    if (op.name == name) return &op;
  return nullptr;
}

const std::vector<OpPlan>& Course::plans(const std::string& folder) const {
  static const std::vector<OpPlan> none;
  const CourseLab* lab = find(folder);
  return lab != nullptr ? lab->plans : none;
}

std::vector<OpPlan> plan_ops(const Course& course, const CourseLab& lab) {
  std::error_code ec;
  std::vector<OpPlan> plans;
  for (const std::string& op : lab.ops) {
    const CourseOperation* info = course.operation(op);
    OpPlan plan;
    plan.op = op;
    plan.entry = info != nullptr ? info->entry : op;
    plan.result = info != nullptr ? info->result : "float";
    plan.public_tests =
        fs::is_regular_file(course.root / "autograder" / "tests" / (op + "_test.cu"), ec);
    plan.hidden_tests =
        fs::is_regular_file(course.root / "autograder" / "hidden" / (op + "_hidden_test.cu"), ec);
    if (info != nullptr) plan.bench_op = info->bench;
    plan.suites = info != nullptr ? info->suites : std::vector<std::string>{op};
    plans.push_back(plan);
  }
  return plans;
}

std::vector<std::string> select_labs(const Course& course, const std::string& spec) {
  std::vector<std::string> tokens = split(spec, ",; \t");
  std::set<std::string> chosen;
  if (tokens.empty() || (tokens.size() == 1 && tokens[0] == "all")) {
    for (const CourseLab& lab : course.labs) chosen.insert(lab.folder);
  }
  for (const std::string& token : tokens) {
    if (token == "all") continue;
    const CourseLab* match = course.find(token);
    const bool numeric = !token.empty() && std::all_of(token.begin(), token.end(), ::isdigit);
    if (match == nullptr && numeric) {
      for (const CourseLab& lab : course.labs)
        if (lab.number == std::atoi(token.c_str())) match = &lab;
    }
    if (match == nullptr) {
      std::string known;
      for (const CourseLab& lab : course.labs) known += (known.empty() ? "" : ", ") + lab.folder;
      throw ConfigError(fmt::format("--labs: unknown lab '{}' (labs: {})", token, known));
    }
    chosen.insert(match->folder);
  }
  std::vector<std::string> ordered;
  for (const CourseLab& lab : course.labs)
    if (chosen.count(lab.folder) != 0) ordered.push_back(lab.folder);
  return ordered;
}

fs::path resolve_submission_tree(const Course& course, const fs::path& path) {
  std::error_code ec;
  auto holds_labs = [&](const fs::path& dir) {
    for (const CourseLab& lab : course.labs)
      if (fs::is_directory(dir / lab.folder, ec)) return true;
    return false;
  };
  if (holds_labs(path)) return path;
  if (holds_labs(path / "labs")) return path / "labs";
  std::vector<fs::path> subdirs;
  for (const auto& entry : fs::directory_iterator(path, ec))
    if (entry.is_directory(ec) && entry.path().filename().string()[0] != '.')
      subdirs.push_back(entry.path());
  if (subdirs.size() == 1) {
    if (holds_labs(subdirs[0])) return subdirs[0];
    if (holds_labs(subdirs[0] / "labs")) return subdirs[0] / "labs";
  }
  return path;
}

}  // namespace reduce::grade
