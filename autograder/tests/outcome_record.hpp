/// \file
/// \brief The checker's record of its tests' outcomes: the only place the grader reads a
/// verdict from.
///
/// GoogleTest's text stream carries the lab's own words (an exception's message, the runner's
/// last output) in the middle of the checker's lines, so a lab can print a line that looks like
/// GoogleTest's `[       OK ]`. The record is a file of JSON lines that only this process
/// writes, in the grader's log folder, which the lab's sandbox does not show; each line is
/// flushed as it is written, so a checker killed in the middle of a test leaves the tests before
/// it and the one that was running:
///
///     {"part":1,"lab":"04_sequential","op":"sum","repetition":0}    (a plan's lab begins)
///     {"start":"Sum.Sentinels"}
///     {"end":"Sum.Sentinels","result":"failed","broken":false,"message":"..."}
///     {"finished":true}                                            (its tests all ran)
///
/// A checker of one lab has no plan: each repetition of its tests (--gtest_repeat) opens part 0
/// of that repetition by itself.
/// `result` is GoogleTest's (passed, failed or skipped); `message` is the failures' text
/// (quoted, never parsed for an outcome); `broken` is the checker's own judgement that its CUDA
/// context no longer works, so that the tests after it would fail for nothing.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <string>
#include <utility>

namespace reduce::testing {

/// \p text as a JSON string (quotes included): control characters and bytes that are not
/// UTF-8 escaped, so that any message gives one valid line.
inline std::string json_string(const std::string& text) {
  std::string out = "\"";
  const auto escape = [&out](unsigned code) {
    char buffer[8];
    std::snprintf(buffer, sizeof buffer, "\\u%04x", code);
    out += buffer;
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      escape(c);
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      // A whole UTF-8 sequence passes; any other byte becomes U+FFFD.
      const std::size_t length = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
      bool whole = length > 0 && i + length <= text.size();
      for (std::size_t k = 1; whole && k < length; ++k)
        whole = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
      if (whole) {
        out.append(text, i, length);
        i += length;
      } else {
        escape(0xfffd);
        ++i;
      }
    }
  }
  return out + "\"";
}

/// A GoogleTest listener that appends each test's start and end to the record file.
class OutcomeRecord : public ::testing::EmptyTestEventListener {
 public:
  /// Most bytes of one test's failure text kept in the record.
  static constexpr std::size_t kMessageBytes = 64 * 1024;

  /// Appends to \p path; \p broken says whether this process's CUDA context is lost.
  OutcomeRecord(const std::string& path, std::function<bool()> broken)
      : file_(std::fopen(path.c_str(), "a")), broken_(std::move(broken)) {}
  ~OutcomeRecord() override {
    if (file_ != nullptr) std::fclose(file_);
  }
  OutcomeRecord(const OutcomeRecord&) = delete;
  OutcomeRecord& operator=(const OutcomeRecord&) = delete;

  /// Whether the file could be opened.
  bool open() const { return file_ != nullptr; }

  /// The line that opens a plan's lab \p index; from then on repetitions open no part.
  void part(int index, const std::string& lab, const std::string& op, int repetition) {
    planned_ = true;
    line("{\"part\":" + std::to_string(index) + ",\"lab\":" + json_string(lab) +
         ",\"op\":" + json_string(op) + ",\"repetition\":" + std::to_string(repetition) + "}");
  }

  void OnTestIterationStart(const ::testing::UnitTest&, int iteration) override {
    if (!planned_)
      line("{\"part\":0,\"lab\":\"\",\"op\":\"\",\"repetition\":" + std::to_string(iteration) +
           "}");
  }

  /// Every selected test of the part ran.
  void OnTestIterationEnd(const ::testing::UnitTest&, int) override { line("{\"finished\":true}"); }

  void OnTestStart(const ::testing::TestInfo& test) override {
    line("{\"start\":" + json_string(full_name(test)) + "}");
  }

  void OnTestEnd(const ::testing::TestInfo& test) override {
    const ::testing::TestResult& r = *test.result();
    const char* result = r.Skipped() ? "skipped" : r.Failed() ? "failed" : "passed";
    std::string message;
    for (int k = 0; k < r.total_part_count(); ++k) {
      const ::testing::TestPartResult& p = r.GetTestPartResult(k);
      if (!p.failed() && !p.skipped()) continue;
      if (!message.empty()) message += "\n";
      if (p.failed() && p.file_name() != nullptr)  // where, as GoogleTest's own report says
        message += std::string(p.file_name()) + ":" + std::to_string(p.line_number()) + "\n";
      message += p.message();
    }
    if (message.size() > kMessageBytes) message.resize(kMessageBytes);
    const bool broken = r.Failed() && broken_ && broken_();
    line("{\"end\":" + json_string(full_name(test)) + ",\"result\":\"" + result + "\",\"broken\":" +
         (broken ? "true" : "false") + ",\"message\":" + json_string(message) + "}");
  }

 private:
  static std::string full_name(const ::testing::TestInfo& test) {
    return std::string(test.test_suite_name()) + "." + test.name();
  }
  void line(const std::string& text) {
    if (file_ == nullptr) return;
    std::fputs((text + "\n").c_str(), file_);
    std::fflush(file_);
  }

  std::FILE* file_;
  std::function<bool()> broken_;
  bool planned_ = false;
};

}  // namespace reduce::testing
