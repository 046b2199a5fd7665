/// \file
/// \brief Finds library reductions (CUB, Thrust, cuBLAS, cuDNN...) inside a lab.
///
/// The built lab library is inspected, not only the source text: its symbols (nm -C, defined
/// and undefined: an inlined cub::DeviceReduce leaves its kernels and dispatch functions
/// behind) and its DT_NEEDED entries (readelf -d: a linked libcublas). The lab's sources are
/// also scanned for `#include` of the libraries' headers, which catches device-only primitives
/// (cub::BlockReduce) that inline into the student's own kernel and leave no symbol.
#pragma once

#include <reduce_grade/rubric.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace reduce::grade {

/// One forbidden use found.
struct LibraryFinding {
  std::string kind;  ///< "symbol", "needed" or "include"
  std::string what;  ///< the symbol, the NEEDED entry, or "file:line: `#include` <...>"
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

}  // namespace reduce::grade
