/// \file
/// \brief What the checker and the lab runner say to each other.
///
/// The checker (a course process: tests, benchmark) never loads a student's lab library. It
/// starts a runner process that loads the lab libraries it is given (one submission's, on its
/// command line) and calls them on request. Device
/// buffers travel as CUDA IPC memory handles owned by the checker; requests and replies are
/// fixed-size records on a socket. The runner holds no seed, no expected value and no verdict:
/// it calls the lab, copies each result in stream order into the checker's capture buffer, and
/// says what happened.
#pragma once

#include <reduce_vocabulary/channels.hpp>
#include <reduce_vocabulary/result_kind.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace reduce::runner {

/// Version of the records below; both sides refuse a mismatch.
inline constexpr std::uint32_t kProtocolVersion = 10;

/// One entry point of the lab contract (common/include/reduce/lab.cuh).
struct Operation {
  const char* name;    ///< the contract function, e.g. "sum"
  const char* getter;  ///< the C function a lab library exports to be found by
  ResultKind kind;     ///< what it writes
};

/// Every entry point a runner can call, in protocol order (Request::op is an index here): the
/// catalogue's (course.json), through the list CMake generates from it.
inline constexpr Operation kOperations[] = {
#ifndef DOXYGEN  // the list is generated into a build folder, which the site does not read
#define REDUCE_ENTRY(entry, getter, kind, table) {#entry, #getter, ResultKind::k##kind},
#include <reduce/course_entries.inc>
#undef REDUCE_ENTRY
#endif
};

/// Index of the entry point \p name in kOperations, or -1.
constexpr int find_operation(std::string_view name) {
  for (int i = 0; i < static_cast<int>(sizeof kOperations / sizeof kOperations[0]); ++i)
    if (name == kOperations[i].name) return i;
  return -1;
}

/// A device buffer of the checker, as the runner maps it.
struct BufferRef {
  cudaIpcMemHandle_t handle{};   ///< IPC handle of the whole allocation
  std::uint64_t offset = 0;      ///< where the lab's pointer starts, in bytes from the base
  std::uint64_t bytes = 0;       ///< bytes the runner may poison (the lab's share)
  std::uint32_t present = 0;     ///< 0: the lab gets a null pointer
  std::uint32_t persistent = 0;  ///< 1: the runner may keep it mapped for later requests
};

/// Most tiles of a tiled input (TiledRef): one repeated tile and up to seven of their own.
inline constexpr int kMaxTiles = 8;

/// An input that is a TiledRange of the checker's (tiled_range.hpp): its layout, and a copy of
/// each tile's bytes in a buffer of the checker's, from which the runner fills a range of its
/// own (memory mapped that way has no CUDA IPC handle).
struct TiledRef {
  std::uint32_t tiles = 0;                      ///< 0: no tiled input; else at most kMaxTiles
  std::uint64_t tile_bytes = 0;                 ///< TileLayout::tile_bytes
  std::uint64_t slots = 0;                      ///< TileLayout::slots
  std::uint64_t own_slots[kMaxTiles - 1] = {};  ///< TileLayout::own_slots (tiles - 1 of them)
  std::uint64_t offset = 0;                     ///< the lab's pointer, in bytes from the start
  BufferRef contents[kMaxTiles];                ///< tile k's bytes (tile_bytes of them)
};

/// What the checker asks.
enum class Command : std::uint32_t {
  kWorkspaceBytes = 1,  ///< value = `<op>_workspace_bytes(n)`
  kRun = 2,             ///< call the entry point `calls` times
  kQuit = 3,            ///< exit cleanly
  kAllocateInputs = 4,  ///< allocate input_count arrays of n floats in the runner (and, with
                        ///< segments > 0, one array of segments + 1 offsets); reply: handles
};

/// Request::poison bits: the runner fills these with 0xFF bytes before every call.
inline constexpr std::uint32_t kPoisonOut = 1;  ///< the result slot
inline constexpr std::uint32_t kPoisonAux = 2;  ///< the workspace (or old_values)

/// Most inputs one kRun request rotates through: enough distinct arrays that one timed request
/// holds calls enough to make the request's own cost (a few hundred microseconds) small beside
/// them.
inline constexpr int kMaxInputs = 16;

/// One request. For kRun, call k reads inputs[k % input_count]; before each call the runner
/// poisons `out` and `aux` (0xFF bytes) when `poison` is set, then calls the lab on its own
/// stream, then copies the result into capture + k * call_result_bytes on the same stream.
struct Request {
  std::uint32_t version = kProtocolVersion;  ///< kProtocolVersion
  Command command = Command::kQuit;          ///< what to do
  std::uint32_t op = 0;                      ///< index into kOperations
  std::uint32_t library = 0;      ///< which of the runner's libraries (its command line, in order)
  std::uint32_t calls = 1;        ///< kRun: calls in this request
  std::uint64_t n = 0;            ///< elements per call
  std::uint32_t input_count = 0;  ///< inputs used (at most kMaxInputs)
  std::uint32_t poison = kPoisonOut | kPoisonAux;  ///< what to poison before every call
  std::uint32_t own_inputs = 0;  ///< kRun: call k reads the runner's own input k % input_count
  /// kRun with one input: the runner poisons a copy of its own, queues the copy of inputs[0]
  /// (n floats) into it on the lab's stream, and gives the lab that copy, so the input is ready
  /// only for work ordered after it on that stream.
  std::uint32_t stage_input = 0;
  /// 1: before anything else, unmap every buffer kept mapped from earlier requests; the checker
  /// frees one of them (a workspace it outgrew) once this request is answered.
  std::uint32_t forget_buffers = 0;
  std::uint64_t segments = 0;  ///< kSegments: segments per call (offsets holds segments + 1)
  /// kSegments: the int64 offsets of the segments (never poisoned); with own_inputs and no
  /// offsets here, the runner's own (kAllocateInputs).
  BufferRef offsets;
  BufferRef inputs[kMaxInputs];  ///< input arrays
  /// kRun with one input: when tiled.tiles > 0, the input is that tiled range (inputs[0] is
  /// absent, and it is never staged).
  TiledRef tiled;
  BufferRef out;      ///< the result slot; for kApply, *address (never poisoned)
  BufferRef aux;      ///< the workspace; for kApply, old_values
  BufferRef capture;  ///< where each call's result is copied (unused for kApply)
  /// kRun: after its reply the runner waits this many microseconds for the next request
  /// without sleeping. A benchmark's requests come milliseconds apart, and a process woken
  /// from sleep starts tens of microseconds late (more from a CPU's deep idle state), a delay
  /// that lands on the grader's clock and differs from process to process.
  std::uint32_t awake_us = 0;
};

/// How a request ended.
enum class Status : std::int32_t {
  kOk = 0,          ///< done
  kLabThrew = 1,    ///< the lab threw; see error_kind and message
  kCudaError = 2,   ///< a CUDA error: the runner exits after replying (its context is suspect)
  kBadRequest = 3,  ///< the request made no sense (version, op, buffers)
  kNotLoaded = 4,   ///< the lab library did not load or lacks the entry point (or no such library)
};

/// The C++ type of what the lab threw, so the checker can throw the same kind.
enum class ErrorKind : std::int32_t {
  kNone = 0,
  kInvalidArgument = 1,  ///< std::invalid_argument
  kLogicError = 2,       ///< std::logic_error (a stub's "not implemented")
  kRuntimeError = 3,     ///< any other std::exception
  kUnknown = 4,          ///< not a std::exception
};

/// The runner's answer.
struct Reply {
  std::uint32_t version = kProtocolVersion;  ///< kProtocolVersion
  Status status = Status::kOk;               ///< how it ended
  ErrorKind error_kind = ErrorKind::kNone;   ///< for kLabThrew
  std::uint32_t exiting = 0;                 ///< 1: the runner exits after this reply
  std::uint64_t value = 0;                   ///< kWorkspaceBytes: the answer
  double event_ms = 0;  ///< kRun: the runner's CUDA-event time of all calls (a second clock)
  /// kAllocateInputs: the runner's input arrays, which the checker maps, fills and changes.
  /// Timed calls read memory the runner allocated itself: memory mapped from another process
  /// reads slower on some GPUs, which would charge the lab for the grader's plumbing.
  cudaIpcMemHandle_t inputs[kMaxInputs] = {};
  /// kAllocateInputs with segments > 0: the runner's offsets for timed segmented calls.
  cudaIpcMemHandle_t offsets = {};
  char message[1024] = {};  ///< what went wrong
};

/// The only environment variables a runner keeps: the checker starts it with these alone, and
/// the runner drops whatever a sanitizer in front of it added (LD_PRELOAD,
/// CUDA_INJECTION64_PATH...) before it loads the lab, so the lab cannot tell it is watched.
inline constexpr const char* kRunnerEnvironment[] = {
    "PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "HOME", "TMPDIR",
    "LANG"};

}  // namespace reduce::runner
