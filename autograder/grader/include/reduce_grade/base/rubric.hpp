/// \file
/// \brief The rubric (autograder/rubric.toml): points, limits, thresholds and the credit curve.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace reduce::grade {

/// Points of one lab, per graded part.
struct Points {
  double build = 1;        ///< the lab compiles, links with the tests, and is not the stub
  double tests = 4;        ///< public tests, in proportion to the tests passed
  double hidden = 2;       ///< hidden tests, in proportion to the tests passed
  double sanitizer = 1;    ///< split evenly over the sanitizer tools; a tool earns its share clean
  double performance = 2;  ///< fraction of the ceiling vs the lab's threshold (gated by tests)

  /// Sum of all parts.
  double total() const { return build + tests + hidden + sanitizer + performance; }
};

/// One lab's entry in the rubric.
struct LabRubric {
  std::string lab;  ///< lab folder, e.g. "04_sequential"
  Points points;    ///< its points (the rubric's [points] unless overridden)
  /// What the lab's speed is a fraction of: "probe" (the ceiling probe: labs that read at the
  /// memory's speed), "reference" (the course's reference solution of the lab, timed in the
  /// same benchmark run: labs bound by atomics, barriers, latency or arithmetic, whose fraction
  /// of the probe changes from GPU to GPU with the same code) or "cub" (cub::DeviceReduce::Sum
  /// as a lab library, timed the same way: the capstone, whose promise is CUB's speed).
  std::string measure = "probe";
  /// The size the lab and its measure are timed at instead of the rubric's [performance] size
  /// (e.g. "2^24"; empty: the rubric's), for a lab whose measure is timed like it: lab 01, whose
  /// one call at 2^28 takes half a second. Where the measure cannot be timed (a copy of the
  /// course without its solutions) the lab is timed at the rubric's size, beside the probe.
  std::string size;
  /// A second, launch-bound size the lab is timed at too (e.g. "2^16"; empty: none), beside its
  /// measure at the same size; the slower fraction of the two sizes counts.
  std::string launch_bound_size;
  double threshold = 0;  ///< fraction of the measure for full performance credit
  double floor = 0;      ///< fraction at and below which performance earns nothing
  /// A "reference" lab's threshold and floor against the probe, where the reference cannot be
  /// timed (a copy of the course without its solutions); a "probe" lab's are threshold, floor.
  double probe_threshold = 0;
  double probe_floor = 0;  ///< see probe_threshold
  double measured = 0;     ///< the reference solution's measured fraction of the probe
  /// How the lab's timed rows become its performance points: "slowest" (the slowest row's
  /// fraction on the credit curve, for all the points) or "per_length" (each length the lab is
  /// timed at, lab 17's segment lengths, earns an equal share of the points on the same curve
  /// from the slower of the lab's operations there: a lab fast at some lengths earns those).
  std::string credit = "slowest";
  /// A racecheck hazard (error or warning) costs the performance points as a failed test does:
  /// the labs whose lesson is synchronisation, where a race is the lesson's subject.
  bool races_gate_performance = false;

  /// The threshold of a fraction of the reference (\p reference), else of the probe.
  double threshold_for(bool reference) const {
    return reference || measure == "probe" ? threshold : probe_threshold;
  }
  /// Whether the lab's measure is timed like the lab ("reference", "cub"), not the probe.
  bool timed_measure() const { return measure != "probe"; }
  /// The floor of a fraction of the reference (\p reference), else of the probe.
  double floor_for(bool reference) const {
    return reference || measure == "probe" ? floor : probe_floor;
  }
  /// What library code the lab may use: "none" (every library reduction refused), or
  /// "primitives" (CUB's block-, warp- and thread-level primitives allowed; its device-wide
  /// algorithms, Thrust, cuBLAS... still refused). Cooperative groups and libcu++ (`cuda::`) are
  /// part of the toolkit every lab may use.
  std::string library = "none";
};

/// Time and output limits for the child processes the grader runs.
struct Limits {
  double configure_timeout_s = 300;                     ///< cmake configure
  double build_timeout_s = 1800;                        ///< one cmake --build call
  double test_timeout_s = 300;                          ///< one run of a public test binary
  double hidden_timeout_s = 300;                        ///< one run of a hidden test binary
  double sanitizer_timeout_s = 300;                     ///< one compute-sanitizer run
  double bench_timeout_s = 300;                         ///< one benchmark run
  std::size_t output_cap_bytes = std::size_t{4} << 20;  ///< output kept per run; more is a flood
  int max_restarts = 3;  ///< reruns of a test binary after a crash or a sticky CUDA error
  /// Public test suites running at once (each may hold two copies of a 2^31-element input).
  int parallel_labs = 3;
  /// Processes of the correctness phase at once: hidden suites and sanitizer runs (small inputs)
  /// fill the slots the public suites leave. Also the most several-lab checkers of the tests.
  int parallel_checks = 8;
  /// Checkers of the sanitizer phase, each over a share of every lab's operations, with one lab
  /// process per tool: 1 + tools CUDA contexts each.
  int sanitizer_checkers = 2;
  /// limits.timing_lock: "gpu" (false), a benchmark is alone on its GPU while the other GPUs'
  /// submissions go on, each on its own share of the host's CPUs; "host" (true), a benchmark is
  /// alone on the whole host, for a host where the neighbours measurably move a benchmark.
  bool host_wide_timing_lock = false;
  /// limits.gpu_memory_gib: the GPU memory a grading may use, in GiB (0: all the GPU has). The
  /// checkers at once, the large-memory slots and the tests that skip for want of memory then
  /// see at most this much, as on a smaller GPU (for a host that grades beside other work, or to
  /// try a course on a 15 GB GPU's terms).
  double gpu_memory_gib = 0;
};

/// compute-sanitizer settings.
struct SanitizerRules {
  std::vector<std::string> tools = {"memcheck", "racecheck", "synccheck"};  ///< tools run
  /// Tests run under the sanitizer (a GoogleTest filter of small sizes), for any operation
  /// without an entry in \p filters.
  std::string filter = "*EmptyInput*:*/33:*/1025";
  /// Per-operation filters ([sanitizer.filters]), e.g. sum = "*SumExact*/33:...".
  std::map<std::string, std::string> filters = {
      {"sum", "*SumExact*/33:*SumExact*/1025:*EmptyInput*:*SumSentinel*/1025"}};

  /// The filter for operation \p op.
  std::string filter_for(const std::string& op) const {
    const auto it = filters.find(op);
    return it != filters.end() ? it->second : filter;
  }
};

/// How bandwidth is measured and turned into a fraction.
struct PerformanceRules {
  std::string size = "2^28";  ///< elements per benchmark input (REDUCE_BENCH_SIZES syntax)
  /// "probe": the benchmark's ceiling_gbps context (the ceiling probe of the same run);
  /// "stream_read": the stream_read row at the same size.
  std::string ceiling = "probe";
  double floor_ratio = 0.4;  ///< default floor of a lab = floor_ratio * threshold
  double margin = 0.75;      ///< calibrate suggests threshold = margin * measured median
};

/// What a lab may not use: library reductions, found in its built library and its sources.
struct LibraryRules {
  /// Substrings of demangled symbols (defined or undefined) in the lab library.
  std::vector<std::string> forbidden_symbols = {"cub::",    "thrust::", "cublas", "cudnn",
                                                "cutensor", "nppsSum",  "nppiSum"};
  /// Substrings of the library's DT_NEEDED entries (readelf -d).
  std::vector<std::string> forbidden_needed = {"libcublas", "libcudnn", "libcutensor", "libnpp"};
  /// Prefixes of `#include` paths in the lab's source files.
  std::vector<std::string> forbidden_includes = {"cub/",  "thrust/",  "cublas",
                                                 "cudnn", "cutensor", "npp"};

  /// A lab with `library = "primitives"`: a symbol with "cub::" or "thrust::" (CUB's block
  /// primitives include part of Thrust) is then forbidden only when it also holds one of
  /// device_wide_symbols, and of the `#include`s of CUB only those of its device-wide
  /// algorithms (is_cub_device_wide() in library_check.hpp; the rest of forbidden_includes,
  /// "thrust/" included, stands).
  bool primitives_allowed = false;
  /// What marks CUB's device-wide algorithms in a demangled symbol (their kernels and dispatch).
  std::vector<std::string> device_wide_symbols = {"Device", "Dispatch", "Agent", "cuda_cub"};

  /// These rules for \p lab: primitives_allowed set when its rubric entry says so.
  LibraryRules for_lab(const LabRubric* lab) const {
    LibraryRules rules = *this;
    rules.primitives_allowed = lab != nullptr && lab->library == "primitives";
    return rules;
  }
};

/// The whole rubric.
struct Rubric {
  std::filesystem::path source;  ///< the file it was read from (empty when parsed from text)
  double pass_mark = 0;          ///< percent of the maximum; `grade` exits 1 below it
  Points default_points;         ///< [points]
  Limits limits;                 ///< [limits]
  SanitizerRules sanitizer;      ///< [sanitizer]
  PerformanceRules performance;  ///< [performance]
  LibraryRules library;          ///< [library]
  std::vector<LabRubric> labs;   ///< `[labs.<folder>]`, in file order

  /// The entry of lab \p folder, or nullptr.
  const LabRubric* find(const std::string& folder) const;
};

/// Parses rubric TOML text; \p source_name names it in error messages. Throws ConfigError
/// (course.hpp) for syntax errors, unknown keys, negative points or a threshold outside (0, 1].
Rubric parse_rubric(std::string_view text, const std::string& source_name = "rubric.toml");

/// Reads and parses a rubric file. Throws ConfigError.
Rubric load_rubric(const std::filesystem::path& path);

/// Problems between a rubric and the course's lab list (a course lab without a rubric entry,
/// an entry for no course lab); empty when consistent.
std::vector<std::string> check_rubric_against_labs(const Rubric& rubric,
                                                   const std::vector<std::string>& course_labs);

/// The performance credit curve: \p max_points at or above \p threshold, nothing at or below
/// \p floor, linear in between. A floor at or above the threshold makes it a step.
double performance_points(double fraction, double threshold, double floor, double max_points);

}  // namespace reduce::grade
