// Grading a class through a Slurm job array: the script, the tasks and the merge of what the
// tasks wrote (the real engine is exercised by tests/slurm_one_node.sh).
#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/grading/slurm.hpp>

#include <gtest/gtest.h>

namespace reduce::grade {
namespace {

SlurmPlan plan_in(const fs::path& out) {
  SlurmPlan plan;
  plan.grader = "/opt/reduce grade/reduce-grade";
  plan.course_root = "/course";
  plan.submissions = "/class/subs";
  plan.out = out;
  plan.students = {"ann", "bob", "cy", "dee", "eve"};
  plan.labs = {"04_sequential", "09_warp_shuffle"};
  plan.per_task = 2;
  plan.minutes_per_submission = 50;
  plan.course_build = out / "course-build";
  plan.sbatch_options = {"--partition=gpu"};
  return plan;
}

TEST(Slurm, TasksTakeStudentsInOrder) {
  const auto tasks = slurm_tasks({"a", "b", "c", "d", "e"}, 2);
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[2], std::vector<std::string>{"e"});
  EXPECT_EQ(slurm_tasks({"a", "b"}, 0).size(), 2u);  // at least one per task
}

TEST(Slurm, TheScriptAsksForOneGpuPerTaskAndRunsBatchOnItsLine) {
  const std::string s = slurm_script(plan_in("/class/out"));
  EXPECT_NE(s.find("#SBATCH --array=0-2\n"), std::string::npos) << s;
  EXPECT_NE(s.find("#SBATCH --gres=gpu:1\n"), std::string::npos);
  EXPECT_NE(s.find("#SBATCH --time=1:50:00\n"), std::string::npos);  // 2 x 50 + 10 minutes
  EXPECT_NE(s.find("#SBATCH --partition=gpu\n"), std::string::npos);
  EXPECT_NE(s.find("'/opt/reduce grade/reduce-grade' --root /course batch /class/subs "
                   "--only \"$students\""),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("--course-build /class/out/course-build"), std::string::npos);
  EXPECT_NE(s.find("--labs 04_sequential,09_warp_shuffle"), std::string::npos);
  SlurmPlan cpu = plan_in("/class/out");
  cpu.gpu = false;
  EXPECT_EQ(slurm_script(cpu).find("--gres"), std::string::npos);
  EXPECT_NE(slurm_script(cpu).find("--no-gpu"), std::string::npos);
}

/// The lines of \p script before its first command: the #SBATCH header.
std::string sbatch_header(const std::string& script) {
  return script.substr(0, script.find("set -euo pipefail\n"));
}

TEST(Slurm, EachTaskAsksForEightCpusByDefaultAndBuildsOnThem) {
  const std::string s = slurm_script(plan_in("/class/out"));
  EXPECT_EQ(sbatch_header(s),
            "#!/bin/bash\n"
            "# Grades the submissions of one line of tasks.txt per array task (reduce-grade "
            "slurm).\n"
            "#SBATCH --job-name=reduce-grade\n"
            "#SBATCH --array=0-2\n"
            "#SBATCH --ntasks=1\n"
            "#SBATCH --gres=gpu:1\n"
            "#SBATCH --cpus-per-task=8\n"
            "#SBATCH --time=1:50:00\n"
            "#SBATCH --output=/class/out/slurm/task-%a.log\n"
            "#SBATCH --partition=gpu\n");
  EXPECT_TRUE(contains(s, "\ncpus=${SLURM_CPUS_PER_TASK:-8}\n")) << s;
  EXPECT_TRUE(contains(
      s,
      "\necho \"task $SLURM_ARRAY_TASK_ID: SLURM_CPUS_PER_TASK=${SLURM_CPUS_PER_TASK:-unset}, "
      "batch -j $cpus\"\n"))
      << s;
  EXPECT_TRUE(contains(s, " --labs 04_sequential,09_warp_shuffle -j \"$cpus\" --course-build "))
      << s;
  SlurmPlan cpu = plan_in("/class/out");
  cpu.gpu = false;  // a task without a GPU still asks for its CPUs
  EXPECT_TRUE(contains(slurm_script(cpu), "\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=8\n"));
}

TEST(Slurm, TheCpusPerTaskGivenAreAskedForAndBuildWith) {
  SlurmPlan plan = plan_in("/class/out");
  plan.cpus_per_task = 3;
  const std::string s = slurm_script(plan);
  EXPECT_TRUE(contains(sbatch_header(s), "\n#SBATCH --gres=gpu:1\n#SBATCH --cpus-per-task=3\n"))
      << s;
  EXPECT_FALSE(contains(s, "--cpus-per-task=8")) << s;
  EXPECT_TRUE(contains(s, "\ncpus=${SLURM_CPUS_PER_TASK:-3}\n")) << s;
}

TEST(Slurm, AUsersOwnCpusPerTaskWinsAndTheGeneratedLineIsLeftOut) {
  SlurmPlan plan = plan_in("/class/out");
  plan.cpus_per_task = 3;
  plan.sbatch_options = {"--partition=gpu", "--cpus-per-task=16"};
  const std::string s = slurm_script(plan);
  const std::string header = sbatch_header(s);
  EXPECT_TRUE(contains(header,
                       "\n#SBATCH --gres=gpu:1\n#SBATCH --time=1:50:00\n#SBATCH "
                       "--output=/class/out/slurm/task-%a.log\n#SBATCH --partition=gpu\n#SBATCH "
                       "--cpus-per-task=16\n"))
      << s;
  EXPECT_EQ(header.find("--cpus-per-task"), header.rfind("--cpus-per-task")) << s;  // only theirs
  EXPECT_TRUE(contains(s, "\ncpus=${SLURM_CPUS_PER_TASK:-16}\n")) << s;
  // -c, and --cpus-per-gpu (Slurm refuses it beside --cpus-per-task), win the same way.
  plan.sbatch_options = {"--account=course -c 4"};
  EXPECT_FALSE(contains(slurm_script(plan), "--cpus-per-task")) << slurm_script(plan);
  EXPECT_TRUE(contains(slurm_script(plan), "\ncpus=${SLURM_CPUS_PER_TASK:-4}\n"));
  plan.sbatch_options = {"--cpus-per-gpu=12"};
  EXPECT_FALSE(contains(slurm_script(plan), "--cpus-per-task"));
  EXPECT_TRUE(contains(slurm_script(plan), "\ncpus=${SLURM_CPUS_PER_TASK:-12}\n"));
}

TEST(Slurm, SbatchOptionsThatAskForCpus) {
  EXPECT_EQ(sbatch_cpus({"--partition=gpu", "--constraint=c4", "-C c4"}), std::nullopt);
  EXPECT_EQ(sbatch_cpus({"--cpus-per-task=16"}), 16);
  EXPECT_EQ(sbatch_cpus({"--cpus-per-task 6"}), 6);
  EXPECT_EQ(sbatch_cpus({"-c 4"}), 4);
  EXPECT_EQ(sbatch_cpus({"-c5"}), 5);
  EXPECT_EQ(sbatch_cpus({"--partition=gpu --cpus-per-gpu=12"}), 12);
  EXPECT_EQ(sbatch_cpus({"--cpus-per-task=$N"}), 0);  // asked, count unknown: the plan's
  EXPECT_EQ(sbatch_cpus({"-c"}), 0);
}

TEST(Slurm, MergeListsTheTasksToRunAgain) {
  const fs::path out = make_temp_dir("reduce-grade-slurm-");
  const SlurmPlan plan = plan_in(out);
  ASSERT_EQ(write_slurm_job(plan), 3);
  // Task 0 graded both; task 1: one graded, one not graded; task 2 never ran.
  const auto report = [](double score) {
    return "{\"score\": " + std::to_string(score) +
           ", \"max_score\": 20, \"seed\": 7, \"gpu_available\": true, \"labs\": ["
           "{\"lab\": \"04_sequential\", \"score\": " +
           std::to_string(score) + "}]}";
  };
  write_file(out / "ann" / "report.json", report(20));
  write_file(out / "bob" / "report.json", report(10));
  write_file(out / "cy" / "report.json", report(5));
  write_file(out / "dee" / "error.txt", "the course's binaries changed\n");
  const ClassMerge m = merge_class(out);
  ASSERT_EQ(m.rows.size(), 5u);
  EXPECT_EQ(m.rows[0].lab_points, (std::vector<double>{20, 0}));
  EXPECT_EQ(m.failed_tasks, (std::vector<int>{1, 2}));
  EXPECT_EQ(m.missing, std::vector<std::string>{"eve"});
  ASSERT_EQ(m.errors.size(), 1u);
  EXPECT_NE(m.rerun.find("sbatch --array=1,2 "), std::string::npos) << m.rerun;
  const std::string csv = read_file(out / "gradebook.csv");
  EXPECT_NE(csv.find("eve,0,0,0,0,0,missing: task 2 did not finish"), std::string::npos) << csv;
  remove_all_quietly(out);
  EXPECT_THROW(merge_class(out), ConfigError);
}

TEST(Slurm, ANameNoTaskLineCanHoldCostsThatSubmissionOnly) {
  // "a,b" would split into two students, "c\nd" into two task lines: both are left out of the
  // job array, and the merge gives each a row of its own; ann and bob are graded as usual.
  const fs::path out = make_temp_dir("reduce-grade-slurm-");
  SlurmPlan plan = plan_in(out);
  plan.students = {"a,b", "ann", "c\nd", "bob"};
  ASSERT_EQ(write_slurm_job(plan), 1);
  EXPECT_EQ(read_file(out / "slurm" / "tasks.txt"), "ann,bob\n");
  write_file(out / "ann" / "report.json", "{\"score\": 1, \"max_score\": 20, \"labs\": []}");
  write_file(out / "bob" / "report.json", "{\"score\": 2, \"max_score\": 20, \"labs\": []}");
  const ClassMerge m = merge_class(out);
  ASSERT_EQ(m.rows.size(), 4u);
  EXPECT_TRUE(m.failed_tasks.empty());
  EXPECT_EQ(m.errors.size(), 2u);
  const std::string csv = read_file(out / "gradebook.csv");
  EXPECT_NE(csv.find("\n\"a,b\",0,0,0,0,0,\"error: the folder name holds a comma"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("\nc\\x0ad,0,0,0,0,0,\"error: the folder name holds a comma"),
            std::string::npos)
      << csv;
  remove_all_quietly(out);
}

TEST(Slurm, MergeListsIdenticalLabSourcesOfTheWholeClass) {
  // Each task's batch sees only its own students: the merge compares them all.
  const fs::path dir = make_temp_dir("reduce-grade-slurm-");
  SlurmPlan plan = plan_in(dir / "out");
  plan.course_root = REDUCE_GRADE_TEST_ROOT;
  plan.submissions = dir / "subs";
  plan.students = {"ann", "bob", "cy"};
  plan.per_task = 1;
  for (const char* student : {"ann", "cy"})
    write_file(dir / "subs" / student / "04_sequential" / "sum.cu", "// the same work\n");
  write_file(dir / "subs" / "bob" / "04_sequential" / "sum.cu", "// other work\n");
  ASSERT_EQ(write_slurm_job(plan), 3);
  merge_class(plan.out);
  const std::string text = read_file(plan.out / "similar_sources.txt");
  EXPECT_TRUE(contains(text, "\n04_sequential: ann, cy\n")) << text;
  EXPECT_TRUE(contains(text, "3 submissions compared")) << text;
  remove_all_quietly(dir);
}

}  // namespace
}  // namespace reduce::grade
