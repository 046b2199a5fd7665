// The launch spec's one reader and one writer (reduce_vocabulary/launch_spec.hpp): every field
// is checked for its type, so that a wrong file stops the child with what is wrong instead of
// running it with a default.
#include <reduce_vocabulary/launch_spec.hpp>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace reduce::launch {

namespace {

using nlohmann::json;

const char* child_name(Child child) {
  return child == Child::kChecker ? "checker" : "bench";
}

json runner_json(const RunnerLaunch& r) {
  json repetitions = json::array();
  for (const RunnerLaunch::Repetition& rep : r.repetitions)
    repetitions.push_back({{"prefix", rep.prefix}, {"report", rep.report}});
  return {{"prefix", r.prefix},
          {"repetitions", repetitions},
          {"call_timeout_s", r.call_timeout_s},
          {"exit_grace_s", r.exit_grace_s}};
}

json labs_json(const std::vector<PlannedLab>& labs) {
  json out = json::array();
  for (const PlannedLab& l : labs)
    out.push_back({{"name", l.name},
                   {"op", l.op},
                   {"order", l.order},
                   {"entry", l.entry},
                   {"library", l.library},
                   {"filters", l.filters}});
  return out;
}

json runner_labs_json(const std::vector<RunnerLab>& labs) {
  json out = json::array();
  for (const RunnerLab& l : labs)
    out.push_back({{"name", l.name}, {"op", l.op}, {"library", l.library}});
  return out;
}

/// Reads one field of an object: absent keeps \p out; present with another type throws
/// json::type_error, which parse_launch_spec() reports with the field's name.
template <typename T>
void field(const json& object, const char* key, T& out) {
  const auto it = object.find(key);
  if (it == object.end()) return;
  // nlohmann converts any number to any arithmetic type: -1 would become a huge count, 1.5 a 1.
  if constexpr (std::is_integral_v<T>) {
    if (!it->is_number_integer() || (std::is_unsigned_v<T> && !it->is_number_unsigned()))
      throw std::invalid_argument(std::string("\"") + key + "\" is no " +
                                  (std::is_unsigned_v<T> ? "count" : "integer"));
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!it->is_number()) throw std::invalid_argument(std::string("\"") + key + "\" is no number");
  }
  out = it->get<T>();
}

/// The object \p value, else a type error that names \p what.
const json& object_of(const json& value, const std::string& what) {
  if (!value.is_object()) throw std::invalid_argument(what + " is not a JSON object");
  return value;
}

RunnerLaunch runner_of(const json& j) {
  RunnerLaunch r;
  object_of(j, "\"runner\"");
  field(j, "prefix", r.prefix);
  field(j, "call_timeout_s", r.call_timeout_s);
  field(j, "exit_grace_s", r.exit_grace_s);
  if (const auto it = j.find("repetitions"); it != j.end()) {
    for (const json& rep : it->get<std::vector<json>>()) {
      RunnerLaunch::Repetition one;
      object_of(rep, "a repetition");
      field(rep, "prefix", one.prefix);
      field(rep, "report", one.report);
      r.repetitions.push_back(std::move(one));
    }
  }
  if (!(r.call_timeout_s >= 0) || !(r.exit_grace_s >= 0))
    throw std::invalid_argument("a runner's seconds must not be negative");
  return r;
}

/// Each object of the array \p j (\p what, for messages) read by \p one.
template <typename T, typename Read>
std::vector<T> list_of(const json& j, const std::string& what, Read one) {
  std::vector<T> items;
  for (const json& item : j.get<std::vector<json>>()) items.push_back(one(object_of(item, what)));
  return items;
}

PlannedLab planned_lab(const json& l) {
  PlannedLab lab;
  field(l, "name", lab.name);
  field(l, "op", lab.op);
  field(l, "order", lab.order);
  field(l, "entry", lab.entry);
  field(l, "library", lab.library);
  field(l, "filters", lab.filters);
  if (lab.name.empty() || lab.library.empty())
    throw std::invalid_argument("a planned lab needs a name and a library");
  return lab;
}

RunnerLab runner_lab(const json& l) {
  RunnerLab lab;
  field(l, "name", lab.name);
  field(l, "op", lab.op);
  field(l, "library", lab.library);
  if (lab.name.empty() || lab.op.empty() || lab.library.empty())
    throw std::invalid_argument("a runner lab needs a name, an op and a library");
  return lab;
}

/// The spec of the parsed \p j, its version and child already checked.
LaunchSpec spec_of(const json& j, Child child) {
  LaunchSpec spec;
  spec.child = child;
  if (j.contains("seed")) {
    std::uint64_t seed = 0;
    field(j, "seed", seed);
    spec.seed = seed;
  }
  if (const auto it = j.find("runner"); it != j.end()) spec.runner = runner_of(*it);
  field(j, "mark", spec.mark);
  if (const auto it = j.find("labs"); it != j.end())
    spec.labs = list_of<PlannedLab>(*it, "a planned lab", planned_lab);
  if (const auto it = j.find("memory_slots"); it != j.end()) {
    object_of(*it, "\"memory_slots\"");
    field(*it, "dir", spec.memory_slots_dir);
    field(*it, "count", spec.memory_slots);
  }
  field(j, "gpu_memory_bytes", spec.gpu_memory_bytes);
  if (const auto it = j.find("hold"); it != j.end()) {
    object_of(*it, "\"hold\"");
    field(*it, "folder", spec.hold);
    field(*it, "limit_s", spec.hold_limit_s);
  }
  if (const auto it = j.find("graded"); it != j.end())
    spec.graded = list_of<RunnerLab>(*it, "a runner lab", runner_lab);
  if (const auto it = j.find("references"); it != j.end())
    spec.references = list_of<RunnerLab>(*it, "a runner lab", runner_lab);
  if (const auto it = j.find("sizes"); it != j.end()) {
    for (const json& size : it->get<std::vector<json>>()) {
      if (!size.is_number_unsigned()) throw std::invalid_argument("a size is no count");
      spec.sizes.push_back(size.get<std::size_t>());
    }
  }
  return spec;
}

}  // namespace

std::string launch_spec_json(const LaunchSpec& spec) {
  json j = {{"version", spec.version},
            {"child", child_name(spec.child)},
            {"runner", runner_json(spec.runner)}};
  if (spec.seed) j["seed"] = *spec.seed;
  if (spec.child == Child::kChecker) {
    j["mark"] = spec.mark;
    j["labs"] = labs_json(spec.labs);
    j["memory_slots"] = {{"dir", spec.memory_slots_dir}, {"count", spec.memory_slots}};
    j["gpu_memory_bytes"] = spec.gpu_memory_bytes;
    if (!spec.hold.empty()) j["hold"] = {{"folder", spec.hold}, {"limit_s", spec.hold_limit_s}};
  } else {
    j["graded"] = runner_labs_json(spec.graded);
    j["references"] = runner_labs_json(spec.references);
    j["sizes"] = spec.sizes;
  }
  return j.dump(2) + "\n";
}

LaunchSpec parse_launch_spec(const std::string& text, const std::string& source, Child child) {
  const std::string where = "launch spec " + source + ": ";
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) throw LaunchSpecError(where + "not valid JSON");
  if (!j.is_object()) throw LaunchSpecError(where + "not a JSON object");
  const auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer())
    throw LaunchSpecError(where + "no integer \"version\"");
  if (version->get<long long>() != kLaunchSpecVersion)
    throw LaunchSpecError(where + "version " + version->dump() + ", this build reads version " +
                          std::to_string(kLaunchSpecVersion) +
                          " only (a grader and a course built apart?)");
  const auto named = j.find("child");
  if (named == j.end() || *named != child_name(child))
    throw LaunchSpecError(where + "written for " + (named == j.end() ? "no one" : named->dump()) +
                          ", not for the " + child_name(child));
  try {
    return spec_of(j, child);
  } catch (const std::exception& e) {
    throw LaunchSpecError(where + "malformed: " + e.what());
  }
}

LaunchSpec read_launch_spec(const std::string& path, Child child) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LaunchSpecError("launch spec " + path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_launch_spec(text.str(), path, child);
}

std::optional<LaunchSpec> launch_spec_from_environment(Child child) {
  const char* path = std::getenv(kLaunchSpecVariable);
  if (path == nullptr || *path == '\0') return std::nullopt;
  return read_launch_spec(path, child);
}

std::optional<std::uint64_t> seed_from_environment() {
  const char* env = std::getenv("REDUCE_SEED");
  if (env == nullptr || *env == '\0') return std::nullopt;
  std::size_t used = 0;
  std::uint64_t seed = 0;
  try {
    seed = std::stoull(env, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || env[used] != '\0' || env[0] == '-')
    throw std::invalid_argument(std::string("REDUCE_SEED=") + env + ": expected a key (a count)");
  return seed;
}

void write_launch_spec(const std::string& path, const LaunchSpec& spec) {
  const std::string text = launch_spec_json(spec);
  const std::string temporary = path + ".new";
  ::unlink(temporary.c_str());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  for (std::size_t done = 0; ok && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    done += ok ? static_cast<std::size_t>(n) : 0;
  }
  if (fd >= 0) ok = ::close(fd) == 0 && ok;
  if (!ok || std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(temporary.c_str());
    throw LaunchSpecError("launch spec " + path + ": cannot be written: " + why);
  }
}

}  // namespace reduce::launch
