/// \file
/// \brief Small helpers shared by the grader: strings, files, temporary folders, clocks.
#pragma once

#include <reduce/split.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace reduce::grade {

namespace fs = std::filesystem;

/// Splits \p text at any of the characters in \p separators; empty parts are dropped.
using reduce::split;

/// \p parts joined with \p separator between them.
std::string join(const std::vector<std::string>& parts, const std::string& separator);

/// \p word as one word for a POSIX shell: as it is when nothing in it is special, else in single
/// quotes.
std::string shell_quote(const std::string& word);

/// Splits \p text into lines (without their line ends).
std::vector<std::string> split_lines(std::string_view text);

/// \p text without leading and trailing white space.
std::string trim(std::string_view text);

/// True when \p text begins with \p prefix.
bool starts_with(std::string_view text, std::string_view prefix);

/// True when \p text contains \p needle.
bool contains(std::string_view text, std::string_view needle);

/// \p text with every occurrence of \p from replaced by \p to.
std::string replace_all(std::string text, std::string_view from, std::string_view to);

/// \p text with invalid UTF-8 sequences replaced by '?' and control characters other than tab
/// and newline removed (C0, DEL, C1 U+0080..U+009F, and U+FFFE and U+FFFF, which XML 1.0
/// forbids): safe to put in JSON, XML and terminals whatever a student's code printed.
std::string sanitize_text(std::string_view text);

/// \p text made inert for a terminal or a text file, with nothing hidden: each control
/// character (C0 and DEL as `\x1b`; C1 such as U+009B, a terminal's CSI, as `\u009b`) and each
/// bidirectional override or isolate (`\u202e`) becomes a visible escape, and each byte that is
/// not valid UTF-8 becomes `\xNN`. Tab and newline are kept when \p keep_lines. Never throws.
std::string inert_text(std::string_view text, bool keep_lines = true);

/// A name from a submission (a student's folder, a file) for one line of a terminal, a summary
/// or a spreadsheet: inert_text() with tab and newline escaped too, cut to \p max_bytes with a
/// marker ("...[40 more bytes]") where longer.
std::string inert_name(std::string_view name, std::size_t max_bytes = 120);

/// At most \p max_lines lines and \p max_bytes bytes of \p text, with a note when cut.
std::string clip(std::string_view text, std::size_t max_lines, std::size_t max_bytes = 8192);

/// Reads a whole file; empty string when it cannot be read.
std::string read_file(const fs::path& path);

/// Writes \p text to \p path (creating parent folders); throws std::runtime_error on failure.
void write_file(const fs::path& path, std::string_view text);

/// A fresh, empty folder under the system temporary directory, named \p prefix + random suffix.
fs::path make_temp_dir(const std::string& prefix);

/// Removes \p path recursively; errors are ignored (used for clean-up only).
void remove_all_quietly(const fs::path& path);

/// True when \p path is a folder with no entries (or does not exist).
bool is_empty_dir(const fs::path& path);

/// Seconds since an arbitrary start, from the monotonic clock.
double now_seconds();

/// Runs \p job(0) ... job(count - 1) on up to \p threads threads. Where a job throws, no job
/// starts after it, and once the others have ended the first exception is thrown again here, on
/// the calling thread, as where the jobs ran one after another.
void run_in_parallel(std::size_t count, int threads, const std::function<void(std::size_t)>& job);

/// The current UTC time as ISO 8601, e.g. "2026-11-22T10:15:00Z".
std::string utc_timestamp();

/// A fresh random seed in [1, 2^53): from std::random_device mixed with the clock.
std::uint64_t random_seed();

/// Formats \p value with \p digits decimals, trailing zeros kept ("8.50").
std::string fixed(double value, int digits);

/// Formats a fraction of the ceiling with 4 significant digits ("0.714", "0.000375").
std::string fraction_text(double value);

/// Formats points compactly: "10", "8.5", "9.67".
std::string points_text(double value);

}  // namespace reduce::grade
