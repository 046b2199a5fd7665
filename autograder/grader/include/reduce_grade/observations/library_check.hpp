/// \file
/// \brief Finds library reductions (CUB, Thrust, cuBLAS, cuDNN...) inside a lab.
///
/// The built lab library is inspected, not only the source text: its symbols (nm -C, defined
/// and undefined: an inlined cub::DeviceReduce leaves its kernels and dispatch functions
/// behind) and its DT_NEEDED entries (readelf -d: a linked libcublas). The lab's sources are
/// also scanned for `#include` of the libraries' headers, which catches device-only primitives
/// (cub::BlockReduce) that inline into the student's own kernel and leave no symbol.
///
/// What the compiler and the linker saw is judged too, not only the text:
/// - check_dependencies() reads the depfile of a compile (`nvcc -MD -MF`) and allows only the
///   staged lab folder, the staged contract headers, the CUDA toolkit (less CUB and Thrust) and
///   the compiler's system folders;
/// - inspect_symbols() checks the built library's dynamic imports (no dlopen, fork, exec...),
///   its exports (the lab contract only: the version script cmake/LabExports.cmake writes from
///   course.json, with the getters the build manifest names) and its host code (no raw
///   syscall instruction).
#pragma once

#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/manifest.hpp>
#include <reduce_grade/base/rubric.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace reduce::grade {

/// What a LibraryFinding found. For kSymbol, kNeeded and kInclude its what is the thing found;
/// for the others, a whole sentence (see LibraryFinding::text()).
enum class FindingKind {
  kSymbol,     ///< a symbol of a library reduction in the built library
  kNeeded,     ///< a DT_NEEDED entry of a library (libcublas...)
  kInclude,    ///< an `#include` of a library's header in the lab's sources
  kHeader,     ///< a header the compile read that the lab may not use (check_dependencies())
  kImport,     ///< a forbidden dynamic import (check_imports())
  kExport,     ///< exports outside the lab contract (check_exports())
  kSyscall,    ///< a raw system call instruction in host code (check_host_code())
  kUnchecked,  ///< a check could not run, so the lab is not run either: what says why
};

/// The name of \p kind in reports (report.json's `kind`) and in LibraryFinding::text():
/// "symbol", "needed", "include", "header", "import", "export", "syscall", "unchecked".
const char* finding_kind_name(FindingKind kind);

/// One forbidden use found.
struct LibraryFinding {
  /// What kind of use it is, and so what `what` holds.
  FindingKind kind = FindingKind::kUnchecked;
  /// The symbol, the NEEDED entry, "file:line: `#include` <...>", or for the kinds header,
  /// import, export and syscall the sentence that explains the finding, e.g.
  /// "forbidden import: dlopen".
  std::string what;

  /// One phrase for reports: "symbol cub::DeviceReduce::Sum<...>", or what alone when it is a
  /// sentence ("forbidden header: cub/block/block_reduce.cuh (CUB) is a library reduction").
  std::string text() const;
};

/// What the inspection of one lab found.
struct LibraryCheck {
  bool inspected = false;                 ///< nm or readelf could read the library
  std::string problem;                    ///< why it could not be inspected (else empty)
  std::vector<LibraryFinding> forbidden;  ///< forbidden uses (empty: clean)
  bool stub = false;  ///< the library still throws reduce::NotImplemented (the untouched stub)

  /// One line for reports: "uses cub:: (symbol cub::DeviceReduce::Sum<...>)" etc.
  std::string describe() const;
};

/// Inspects a built lab library with nm and readelf.
LibraryCheck inspect_library(const std::filesystem::path& library, const LibraryRules& rules);

/// Checks `nm -C` output (defined and undefined symbols) and `readelf -d` output (the pure
/// part of inspect_library, for tests).
LibraryCheck check_symbol_text(const std::string& nm_text, const std::string& readelf_dynamic,
                               const LibraryRules& rules);

/// Fallback without nm: searches the library's bytes for mangled names of the libraries.
LibraryCheck check_library_bytes(const std::string& bytes, const LibraryRules& rules);

/// Scans the source files (.cu, .cuh, .h, .hpp, .cpp, .inl) of a lab folder for forbidden
/// `#include` directives.
std::vector<LibraryFinding> scan_sources(const std::filesystem::path& lab_dir,
                                         const LibraryRules& rules);

/// Whether \p from_cub (a header path from the `cub` folder down, as an `#include` or a
/// dependency names it) is part of CUB's device-wide algorithms (a folder `device`, `agent`,
/// `dispatch` or `grid` on the way), or `cub.cuh`, the header that includes everything: what a
/// lab allowed CUB's block and warp primitives may still not read (scan_sources(),
/// check_dependencies()).
bool is_cub_device_wide(const std::filesystem::path& from_cub);

// ---- what the compiler read ---------------------------------------------------------------

/// The files a lab's compile may read. Paths are compared after std::filesystem::weakly_canonical
/// (absolute, symbolic links resolved, `..` removed), so the roots may be given through links.
struct DependencyPolicy {
  std::filesystem::path lab_dir;  ///< the staged lab folder: everything under it is allowed
  /// Single files allowed: the staged contract headers (stage_contract_headers().files), and,
  /// when its depfile is checked too, the course's `export_OP.cu` (generated by its build).
  std::vector<std::filesystem::path> contract_headers;
  /// The CUDA toolkit's include folders: allowed, except the libraries below.
  std::vector<std::filesystem::path> toolkit_roots = {
      "/usr/local/cuda/include", "/usr/local/cuda/targets/x86_64-linux/include"};
  /// The host compiler's system folders: allowed, except the libraries below (a Debian
  /// libthrust-dev installs /usr/include/thrust). /usr/local/include is not among them.
  std::vector<std::filesystem::path> system_roots = {"/usr/include", "/usr/lib/gcc"};
  /// Folder names that mark a library under a toolkit or system root, with the library's name:
  /// any component of the path below the root (cub/..., cccl/cub/..., cccl/thrust/...).
  std::vector<std::pair<std::string, std::string>> library_folders = {{"cub", "CUB"},
                                                                      {"thrust", "Thrust"}};
  /// Header file-name prefixes that mark a library under a toolkit or system root.
  std::vector<std::pair<std::string, std::string>> library_headers = {
      {"cublas", "cuBLAS"}, {"cudnn", "cuDNN"}, {"cutensor", "cuTENSOR"}, {"npp", "NPP"}};
  /// Folder that relative dependencies are relative to: the compile's working folder (empty:
  /// the grader's current folder).
  std::filesystem::path base_dir;
  /// A lab with `library = "primitives"`: CUB's headers are allowed but for its device-wide
  /// algorithms (a path below `cub` through `device`, `agent`, `dispatch` or `grid`, or
  /// `cub/cub.cuh`), and Thrust's headers (CUB's block primitives include some; its device
  /// algorithms include CUB's device-wide headers).
  bool primitives_allowed = false;
};

/// The dependency paths of a make-style depfile, as `nvcc -MD -MF file.d` or `gcc -MD` write
/// it (`target: dep dep \` with continuation lines, `\ ` for a space in a name, `$$` for `$`,
/// several rules, `-MP` phony rules), unresolved and in order; targets are left out.
std::vector<std::string> parse_depfile(const std::string& depfile_text);

/// Checks every dependency of \p depfile_text against \p policy; one finding (kind kHeader)
/// per forbidden file, what being:
/// - "forbidden header: <path from the library folder> (<library>) is a library reduction",
///   e.g. "forbidden header: cub/block/block_reduce.cuh (CUB) is a library reduction";
///   one finding per library, the first of its headers the compile read, then "; and N more
///   CUB headers" when there were more;
/// - "forbidden header: <absolute path> is outside the lab folder, the contract headers and the
///   CUDA toolkit", followed by " (reached as <path>)" when the depfile named it otherwise
///   (through `..` or a symbolic link); at most 10 such findings, then one "forbidden header:
///   and N more files outside the lab folder, the contract headers and the CUDA toolkit".
std::vector<LibraryFinding> check_dependencies(const std::string& depfile_text,
                                               const DependencyPolicy& policy);

// ---- what the linker produced -------------------------------------------------------------

/// What a lab library may import and export.
struct SymbolPolicy {
  /// Undefined dynamic symbols refused (version suffixes such as `@GLIBC_2.34` are ignored):
  /// loading code, changing memory protection, starting processes, tracing, raw system calls.
  std::vector<std::string> forbidden_imports = {"dlopen",
                                                "dlmopen",
                                                "dlsym",
                                                "dlvsym",
                                                "__libc_dlopen_mode",
                                                "mprotect",
                                                "pkey_mprotect",
                                                "fork",
                                                "vfork",
                                                "clone",
                                                "clone3",
                                                "execve",
                                                "execveat",
                                                "execv",
                                                "execvp",
                                                "execvpe",
                                                "execl",
                                                "execlp",
                                                "execle",
                                                "fexecve",
                                                "system",
                                                "popen",
                                                "posix_spawn",
                                                "posix_spawnp",
                                                "ptrace",
                                                "process_vm_writev",
                                                "syscall",
                                                "prctl",
                                                "setsid",
                                                "kill",
                                                "personality",
                                                "__clone",
                                                "__fork",
                                                "__vfork",
                                                "forkpty",
                                                "killpg",
                                                "tgkill",
                                                "tkill",
                                                "sigqueue",
                                                "pthread_sigqueue",
                                                "pidfd_open",
                                                "pidfd_send_signal",
                                                "pidfd_getfd",
                                                "process_vm_readv",
                                                "process_madvise",
                                                "wordexp",
                                                "daemon",
                                                "unshare",
                                                "setns",
                                                "mount",
                                                "umount",
                                                "umount2",
                                                "chroot",
                                                "pivot_root",
                                                "seccomp"};
  /// Defined dynamic symbols every shared library may carry whatever its code. (binutils 2.40
  /// exports none of them from an nvcc-built library; older linkers export some.)
  std::vector<std::string> standard_exports = {"_init", "_fini", "__bss_start", "_edata", "_end"};
};

/// The exports the lab contract (common/include/reduce/lab.cuh) allows a lab library.
struct ContractExports {
  std::vector<std::string> c_names;       ///< exact C symbols, e.g. "reduce_sum_lab"
  std::vector<std::string> cxx_prefixes;  ///< demangled-name prefixes, e.g. "reduce::sum("
};

/// The exports allowed for the operations \p plans of a lab built as \p built says: each
/// operation's C getter as the build named it (the manifest's `getter`: `reduce_sum_lab`, which
/// sum_deterministic shares) and, from the catalogue (course.json), `reduce::<entry>(` and,
/// unless the entry applies in place (atomic_max_apply), `reduce::<entry>_workspace_bytes(`.
/// Throws ConfigError where \p built has no operation of \p plans.
ContractExports contract_exports(const std::vector<OpPlan>& plans, const BuildManifest& built);

/// Checks the undefined dynamic symbols (`nm -D --undefined-only` output); one finding (kind
/// kImport) per forbidden symbol: "forbidden import: dlopen".
std::vector<LibraryFinding> check_imports(const std::string& nm_undefined_text,
                                          const SymbolPolicy& policy = {});

/// Checks the defined dynamic symbols (`nm -D --defined-only -C` output, demangled) against the
/// contract \p allowed; at most one finding (kind kExport): "exports symbols outside the lab
/// contract: <name>, <name>, ..." (the first 8 names, then "and N more").
std::vector<LibraryFinding> check_exports(const std::string& nm_defined_text,
                                          const ContractExports& allowed,
                                          const SymbolPolicy& policy = {});

/// Checks a disassembly (`objdump -d --no-show-raw-insn` output) for `syscall`, `sysenter` and
/// `int $0x80`; one finding (kind kSyscall) per function: "raw syscall instruction in host
/// code: syscall in <function> at 0x<address>".
std::vector<LibraryFinding> check_host_code(const std::string& objdump_text);

/// Runs nm (imports, exports) and objdump (every executable section of the library: .text and
/// .init/.fini/.plt alike) on \p library and applies check_imports(), check_exports() and
/// check_host_code(). inspected is false, and problem says why ("nm not found in PATH: the
/// library's imports and exports were not checked", "objdump not found in PATH: ...", "nm
/// failed (...)", "library not found: ..."), when a part could not be checked; the findings of
/// the parts that could are kept. stub is not set.
LibraryCheck inspect_symbols(const std::filesystem::path& library, const ContractExports& allowed,
                             const SymbolPolicy& policy = {});

}  // namespace reduce::grade
