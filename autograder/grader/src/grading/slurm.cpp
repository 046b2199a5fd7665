#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/grading/slurm.hpp>
#include <reduce_grade/submission/similar_sources.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace reduce::grade {
int submission_minutes(const Rubric& rubric, std::size_t labs) {
  const Limits& l = rubric.limits;
  const double per_lab = l.test_timeout_s + l.hidden_timeout_s +
                         l.sanitizer_timeout_s * static_cast<double>(rubric.sanitizer.tools.size());
  const double rounds = std::ceil(static_cast<double>(labs) / std::max(l.parallel_labs, 1));
  const double seconds =
      l.configure_timeout_s + l.build_timeout_s + rounds * per_lab + l.bench_timeout_s;
  return static_cast<int>(std::ceil(seconds / 60));
}

std::vector<std::vector<std::string>> slurm_tasks(const std::vector<std::string>& students,
                                                  int per_task) {
  std::vector<std::vector<std::string>> tasks;
  const std::size_t step = static_cast<std::size_t>(std::max(per_task, 1));
  for (std::size_t i = 0; i < students.size(); i += step)
    tasks.emplace_back(students.begin() + i,
                       students.begin() + std::min(students.size(), i + step));
  return tasks;
}

namespace {

/// \p count as a number of CPUs: a plain positive number, else 0.
int cpu_count(const std::string& count) {
  if (count.empty() || count.size() > 6 ||
      count.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  return std::stoi(count);
}

}  // namespace

std::optional<int> sbatch_cpus(const std::vector<std::string>& sbatch_options) {
  std::optional<int> cpus;
  for (const std::string& option : sbatch_options) {
    // One #SBATCH line may hold several options: each word on its own.
    const std::vector<std::string> words = split(option, " \t");
    for (std::size_t i = 0; i < words.size(); ++i) {
      const std::string& w = words[i];
      const std::string next = i + 1 < words.size() ? words[i + 1] : std::string();
      if (w == "--cpus-per-task" || w == "--cpus-per-gpu" || w == "-c")
        cpus = cpu_count(next);
      else if (starts_with(w, "--cpus-per-task=") || starts_with(w, "--cpus-per-gpu="))
        cpus = cpu_count(w.substr(w.find('=') + 1));
      else if (starts_with(w, "-c") && w.size() > 2 && w.find_first_of("0123456789") == 2)
        cpus = cpu_count(w.substr(2));
    }
  }
  return cpus;
}

std::string slurm_script(const SlurmPlan& plan) {
  const std::size_t tasks = slurm_tasks(plan.students, plan.per_task).size();
  const int minutes = plan.minutes_per_submission * std::max(plan.per_task, 1) + 10;
  const fs::path slurm = plan.out / "slurm";
  std::string s = "#!/bin/bash\n";
  s += "# Grades the submissions of one line of tasks.txt per array task (reduce-grade slurm).\n";
  s += "#SBATCH --job-name=reduce-grade\n";
  s += fmt::format("#SBATCH --array=0-{}\n", tasks == 0 ? 0 : tasks - 1);
  s += "#SBATCH --ntasks=1\n";
  if (plan.gpu) s += "#SBATCH --gres=gpu:1\n";
  // A user's own count (--sbatch-option) wins: with two, sbatch would take the last
  // --cpus-per-task, and refuse --cpus-per-gpu beside one.
  const std::optional<int> asked = sbatch_cpus(plan.sbatch_options);
  if (!asked) s += fmt::format("#SBATCH --cpus-per-task={}\n", plan.cpus_per_task);
  const int cpus = asked.value_or(0) > 0 ? *asked : plan.cpus_per_task;
  s += fmt::format("#SBATCH --time={}:{:02d}:00\n", minutes / 60, minutes % 60);
  s += fmt::format("#SBATCH --output={}\n", (slurm / "task-%a.log").string());
  for (const std::string& option : plan.sbatch_options) s += "#SBATCH " + option + "\n";
  s += "set -euo pipefail\n";
  s += "slurm_dir=" + shell_quote(slurm.string()) + "\n";
  s += "students=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" \"$slurm_dir/tasks.txt\")\n";
  // The batch's builds on the task's CPUs: by default it would run a job per CPU of the node.
  s += fmt::format("cpus=${{SLURM_CPUS_PER_TASK:-{}}}\n", cpus);
  s += "echo \"task $SLURM_ARRAY_TASK_ID: SLURM_CPUS_PER_TASK=${SLURM_CPUS_PER_TASK:-unset}, "
       "batch -j $cpus\"\n";
  std::vector<std::string> args = {shell_quote(plan.grader.string()), "--root",
                                   shell_quote(plan.course_root.string())};
  if (!plan.rubric.empty()) {
    args.push_back("--rubric");
    args.push_back(shell_quote(plan.rubric.string()));
  }
  for (const std::string& word :
       {std::string("batch"), shell_quote(plan.submissions.string()), std::string("--only"),
        std::string("\"$students\""), std::string("--out"), shell_quote(plan.out.string()),
        std::string("--gradebook"),
        std::string("\"$slurm_dir/gradebook-$SLURM_ARRAY_TASK_ID.csv\""), std::string("--labs"),
        shell_quote(join(plan.labs, ",")), std::string("-j"), std::string("\"$cpus\"")})
    args.push_back(word);
  if (!plan.gpu) args.push_back("--no-gpu");
  if (!plan.course_build.empty()) {
    args.push_back("--course-build");
    args.push_back(shell_quote(plan.course_build.string()));
  }
  for (const std::string& a : plan.batch_args) args.push_back(shell_quote(a));
  s += "exec " + join(args, " ") + "\n";
  return s;
}

bool slurm_can_name(const std::string& student) {
  return student.find_first_of(",\n\r") == std::string::npos;
}

int write_slurm_job(const SlurmPlan& plan) {
  const fs::path slurm = plan.out / "slurm";
  std::error_code ec;
  fs::create_directories(slurm, ec);
  std::vector<std::string> named, left_out;
  for (const std::string& student : plan.students)
    (slurm_can_name(student) ? named : left_out).push_back(student);
  const auto tasks = slurm_tasks(named, plan.per_task);
  std::string lines;
  for (const auto& task : tasks) lines += join(task, ",") + "\n";
  write_file(slurm / "tasks.txt", lines);
  std::string left;
  for (const std::string& student : left_out) left += inert_name(student, 1024) + "\n";
  write_file(slurm / "left_out.txt", left);
  // For merge_class()'s similar_sources.txt of the whole class.
  write_file(slurm / "class.json", dump_json({{"submissions", plan.submissions.string()},
                                              {"course_root", plan.course_root.string()}}));
  write_file(slurm / "labs.txt", join(plan.labs, "\n") + "\n");
  write_file(slurm / "grade.sbatch", slurm_script(plan));
  fs::permissions(slurm / "grade.sbatch", fs::perms::owner_exec, fs::perm_options::add, ec);
  return static_cast<int>(tasks.size());
}

std::optional<GradebookRow> read_student_row(const fs::path& student_dir,
                                             const std::string& student,
                                             const std::vector<std::string>& labs) {
  std::error_code ec;
  GradebookRow row;
  row.student = student;
  if (fs::is_regular_file(student_dir / "report.json", ec)) {
    try {
      const nlohmann::ordered_json r =
          nlohmann::ordered_json::parse(read_file(student_dir / "report.json"));
      row.total = r.value("score", 0.0);
      row.max = r.value("max_score", 0.0);
      row.seed = r.value("seed", std::uint64_t{0});
      row.status = r.value("gpu_available", false) ? "graded" : "graded (no GPU)";
      row.reason = gradebook_reason(r);
      for (const std::string& lab : labs) {
        double points = 0;
        for (const auto& l : r.at("labs"))
          if (l.value("lab", std::string()) == lab) points = l.value("score", 0.0);
        row.lab_points.push_back(points);
      }
      return row;
    } catch (const std::exception& e) {
      row.status = std::string("error: unreadable report.json: ") + e.what();
      row.lab_points.assign(labs.size(), 0);
      return row;
    }
  }
  if (fs::is_regular_file(student_dir / "error.txt", ec)) {
    row.status = "error: " + trim(read_file(student_dir / "error.txt"));
    row.lab_points.assign(labs.size(), 0);
    return row;
  }
  return std::nullopt;
}

namespace {

/// OUT/similar_sources.txt of the whole class (each task's batch names only its own students),
/// from the submissions and the course that slurm/class.json names; nothing where they cannot
/// be read (the job of an older grader, a course moved away).
void write_class_similar_sources(const fs::path& out, const std::vector<std::string>& students,
                                 const std::vector<std::string>& labs) {
  try {
    const auto plan = nlohmann::json::parse(read_file(out / "slurm" / "class.json"));
    const Course course = load_course(plan.at("course_root").get<std::string>());
    const auto trees = batch_trees(course, plan.at("submissions").get<std::string>(), students);
    write_file(out / "similar_sources.txt",
               similar_sources_text(find_similar_sources(trees, labs, course.root / "labs"),
                                    trees.size()));
  } catch (const std::exception&) {
  }
}

}  // namespace

ClassMerge merge_class(const fs::path& out) {
  const fs::path slurm = out / "slurm";
  std::error_code ec;
  if (!fs::is_regular_file(slurm / "tasks.txt", ec))
    throw ConfigError(out.string() +
                      " holds no job array (slurm/tasks.txt): run reduce-grade "
                      "slurm first");
  ClassMerge m;
  for (const std::string& lab : split_lines(read_file(slurm / "labs.txt")))
    if (!trim(lab).empty()) m.labs.push_back(trim(lab));
  int task = 0;
  std::vector<std::string> named;  // every student of a task line, as its folder is named
  for (const std::string& line : split_lines(read_file(slurm / "tasks.txt"))) {
    if (trim(line).empty()) continue;
    bool failed = false;
    for (const std::string& student : split(line, ",")) {
      named.push_back(student);
      std::optional<GradebookRow> row = read_student_row(out / student, student, m.labs);
      if (!row) {
        m.missing.push_back(student);
        row = GradebookRow{student, 0,
                           0,       std::vector<double>(m.labs.size(), 0),
                           0,       fmt::format("missing: task {} did not finish", task),
                           ""};
      }
      if (starts_with(row->status, "error") || starts_with(row->status, "missing")) {
        failed = true;
        if (starts_with(row->status, "error")) m.errors.push_back(student + ": " + row->status);
      }
      m.rows.push_back(*row);
    }
    if (failed) m.failed_tasks.push_back(task);
    ++task;
  }
  // Names a task line cannot hold (a comma, a line end): a row each, not graded.
  for (const std::string& student : split_lines(read_file(slurm / "left_out.txt"))) {
    if (student.empty()) continue;
    const std::string why =
        "error: the folder name holds a comma or a line end, which a Slurm task cannot be "
        "given; grade it with reduce-grade batch or grade";
    m.rows.push_back(
        GradebookRow{student, 0, 0, std::vector<double>(m.labs.size(), 0), 0, why, ""});
    m.errors.push_back(student + ": " + why);
  }
  write_file(out / "gradebook.csv", gradebook_csv(m.labs, m.rows));
  write_class_similar_sources(out, named, m.labs);
  if (!m.failed_tasks.empty()) {
    std::vector<std::string> ids;
    for (int t : m.failed_tasks) ids.push_back(std::to_string(t));
    m.rerun = "sbatch --array=" + join(ids, ",") + " " + (slurm / "grade.sbatch").string();
  }
  return m;
}

}  // namespace reduce::grade
