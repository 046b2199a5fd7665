// reduce_lab_runner: the only course process that loads a student's lab library.
//
//   reduce_lab_runner LIBRARY        (its socket to the checker is file descriptor 3)
//   reduce_lab_runner --walls        (raises its walls and says which stand; loads nothing)
//   reduce_lab_runner --places       (behind its walls, lists where it can write or share)
//
// It answers the checker's requests (protocol.hpp) one at a time: map the checker's buffers
// (or build a tiled input from its tiles, tiled_range.hpp), call the lab on a stream of its
// own, copy each result into the checker's capture buffer on that stream, synchronise, reply. It
// decides nothing and reports no verdict; whatever the lab does to this process, the checker judges
// only the bytes in its own buffers and its own clock.
#include <reduce/lab_entry_points.cuh>
#include <reduce_runner/places.hpp>
#include <reduce_runner/protocol.hpp>
#include <reduce_runner/tiled_range.hpp>
#include <reduce_runner/walls.hpp>

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

/// The longest Request::awake_us honoured: a checker cannot keep a CPU busy for long.
constexpr std::uint32_t kMaxAwakeUs = 200'000;

using namespace reduce::runner;

bool read_all(int fd, void* data, std::size_t bytes) {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t got = ::read(fd, p, bytes);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    bytes -= static_cast<std::size_t>(got);
  }
  return true;
}

/// Reads a request; for the first \p awake_us microseconds without sleeping, so that a
/// benchmark's next request finds this process running (Request::awake_us).
bool read_request(int fd, Request& rq, std::uint32_t awake_us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(awake_us);
  for (pollfd pfd{fd, POLLIN, 0}; awake_us > 0 && std::chrono::steady_clock::now() < until;)
    if (::poll(&pfd, 1, 0) != 0) break;  // readable, closed, or an error: read_all() says which
  return read_all(fd, &rq, sizeof rq);
}

bool write_all(int fd, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t put = ::write(fd, p, bytes);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    p += put;
    bytes -= static_cast<std::size_t>(put);
  }
  return true;
}

void set_message(Reply& reply, const std::string& text) {
  std::snprintf(reply.message, sizeof reply.message, "%s", text.c_str());
}

/// A CUDA error inside a request: the reply says so and the runner exits after it.
struct CudaFailure {
  std::string what;
};

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw CudaFailure{std::string(what) + ": " + cudaGetErrorName(status) + " (" +
                      cudaGetErrorString(status) + ")"};
}

/// The checker's buffers mapped into this process: persistent ones stay mapped, the others are
/// unmapped at the end of the request that used them.
class Mappings {
 public:
  ~Mappings() {
    for (auto& [key, base] : persistent_) cudaIpcCloseMemHandle(base);
  }

  /// The lab's pointer for \p ref (null when absent).
  char* map(const BufferRef& ref) {
    if (!ref.present) return nullptr;
    const std::string key(reinterpret_cast<const char*>(&ref.handle), sizeof ref.handle);
    // A request's inputs may lie in one allocation of the checker's: it is mapped once.
    auto& kept = ref.persistent ? persistent_ : transient_;
    const auto it = kept.find(key);
    if (it != kept.end()) return it->second + ref.offset;
    void* base = nullptr;
    check(cudaIpcOpenMemHandle(&base, ref.handle, cudaIpcMemLazyEnablePeerAccess),
          "mapping a buffer of the checker");
    kept[key] = static_cast<char*>(base);
    return static_cast<char*>(base) + ref.offset;
  }

  /// Unmaps every buffer kept from earlier requests (the checker is about to free one).
  void forget() {
    for (auto& [key, base] : persistent_) cudaIpcCloseMemHandle(base);
    persistent_.clear();
  }

  /// Unmaps what this request mapped for itself.
  void end_request() {
    for (auto& [key, base] : transient_) cudaIpcCloseMemHandle(base);
    transient_.clear();
  }

 private:
  std::map<std::string, char*> persistent_;
  std::map<std::string, char*> transient_;
};

/// The lab library and the entry points it exports.
struct Lab {
  std::string path;
  bool tried = false;  // dlopen is called on the first request that names the library
  void* handle = nullptr;
  std::string load_error;

  /// Loads the library on first use.
  void load() {
    if (tried) return;
    tried = true;
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) load_error = dlerror();
  }

  /// The getter of kOperations[op] called, or null with \p why set.
  const void* entry(std::uint32_t op, std::string& why) const {
    if (handle == nullptr) {
      why = "the lab library did not load: " + load_error;
      return nullptr;
    }
    void* getter = dlsym(handle, kOperations[op].getter);
    if (getter == nullptr) {
      why = std::string("the lab library does not implement ") + kOperations[op].name;
      return nullptr;
    }
    return reinterpret_cast<const void* (*)()>(getter)();
  }
};

/// Calls the lab once; rethrows nothing (the caller maps exceptions to replies).
void call_lab(const void* entry, ResultKind kind, const float* in, std::size_t n,
              const std::int64_t* offsets, std::size_t segments, char* out, char* aux,
              std::size_t aux_bytes, cudaStream_t stream) {
  switch (kind) {
    case ResultKind::kSegments:
    case ResultKind::kSegmentPairs: {
      const auto* lab = static_cast<const reduce::SegmentedLab*>(entry);
      lab->run(in, n, offsets, segments, reinterpret_cast<float*>(out),
               reduce::Workspace{aux, aux_bytes}, stream);
      return;
    }
    case ResultKind::kFloat: {
      const auto* lab = static_cast<const reduce::FloatLab*>(entry);
      lab->run(in, n, reinterpret_cast<float*>(out), reduce::Workspace{aux, aux_bytes}, stream);
      return;
    }
    case ResultKind::kIndex: {
      const auto* lab = static_cast<const reduce::ArgmaxLab*>(entry);
      lab->run(in, n, reinterpret_cast<std::int64_t*>(out), reduce::Workspace{aux, aux_bytes},
               stream);
      return;
    }
    case ResultKind::kApply: {
      const auto* lab = static_cast<const reduce::AtomicMaxLab*>(entry);
      lab->apply(in, n, reinterpret_cast<float*>(out), reinterpret_cast<float*>(aux), stream);
      return;
    }
  }
}

Reply workspace_bytes(const Lab& lab, const Request& rq) {
  Reply reply;
  std::string why;
  const void* entry = lab.entry(rq.op, why);
  if (entry == nullptr) {
    reply.status = Status::kNotLoaded;
    set_message(reply, why);
    return reply;
  }
  switch (kOperations[rq.op].kind) {
    case ResultKind::kFloat:
      reply.value = static_cast<const reduce::FloatLab*>(entry)->workspace_bytes(rq.n);
      break;
    case ResultKind::kIndex:
      reply.value = static_cast<const reduce::ArgmaxLab*>(entry)->workspace_bytes(rq.n);
      break;
    case ResultKind::kApply:
      reply.value = 0;
      break;
    case ResultKind::kSegments:
    case ResultKind::kSegmentPairs:
      reply.value =
          static_cast<const reduce::SegmentedLab*>(entry)->workspace_bytes(rq.n, rq.segments);
      break;
  }
  return reply;
}

/// The reply for what the lab threw (an entry point, or its workspace_bytes): the exception's
/// kind, so that the checker throws the same, and its message.
Reply lab_threw(const std::exception_ptr& thrown) {
  Reply reply;
  reply.status = Status::kLabThrew;
  try {
    std::rethrow_exception(thrown);
  } catch (const std::invalid_argument& e) {
    reply.error_kind = ErrorKind::kInvalidArgument;
    set_message(reply, e.what());
  } catch (const std::logic_error& e) {
    reply.error_kind = ErrorKind::kLogicError;
    set_message(reply, e.what());
  } catch (const std::exception& e) {
    reply.error_kind = ErrorKind::kRuntimeError;
    set_message(reply, e.what());
  } catch (...) {
    reply.error_kind = ErrorKind::kUnknown;
    set_message(reply, "the lab threw something that is not a std::exception");
  }
  return reply;
}

/// Whether Request::tiled, when present, is one tiled input whose range holds the n floats.
bool tiled_request_fits(const Request& rq) {
  const TiledRef& t = rq.tiled;
  if (t.tiles == 0) return true;
  if (t.tiles > kMaxTiles || rq.input_count != 1 || rq.own_inputs || t.slots == 0 ||
      t.tile_bytes > (std::uint64_t{1} << 40) || t.slots > (std::uint64_t{1} << 24))
    return false;
  const std::uint64_t bytes = t.tile_bytes * t.slots;
  return rq.n <= bytes / sizeof(float) && t.offset <= bytes - rq.n * sizeof(float);
}

/// What one runner keeps from request to request: the checker's buffers it mapped, the lab's
/// stream, the inputs it allocated for timed calls, the staged copy of an input and the tiled
/// input. Its device memory is left to the process's end: a teardown would wait for the lab's
/// kernels, and the runner exits only when its checker is done with it.
class Session {
 public:
  Session() = default;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() { (void)tiled_.release(); }

  /// kAllocateInputs: frees every earlier row's inputs, allocates this row's and exports them.
  Reply allocate_inputs(const Request& rq);
  /// kRun: the lab's calls on the session's stream, each result captured after its call.
  Reply run(const Lab& lab, const Request& rq);
  /// Request::forget_buffers: unmaps the checker's buffers kept from earlier requests.
  void forget_buffers() { maps_.forget(); }
  /// Creates the lab's stream on the first request (a failure is reported by that request).
  void open_stream() {
    if (stream_ == nullptr)
      check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }

 private:
  const float* staged_input(const float* input, std::size_t n);
  const float* tiled_input(const TiledRef& t);

  Mappings maps_;
  cudaStream_t stream_ = nullptr;
  float* own_inputs_[kMaxInputs] = {};   ///< kAllocateInputs' inputs for timed calls
  std::int64_t* own_offsets_ = nullptr;  ///< and the offsets of timed segmented calls
  float* staged_ = nullptr;              ///< Request::stage_input's copy, grown as needed
  std::size_t staged_n_ = 0;
  std::unique_ptr<TiledRange> tiled_;  ///< kept for the next request of the same layout
};

Reply Session::allocate_inputs(const Request& rq) {
  Reply reply;
  if (rq.input_count == 0 || rq.input_count > kMaxInputs) {
    reply.status = Status::kBadRequest;
    set_message(reply, "bad request: input count");
    return reply;
  }
  for (float*& input : own_inputs_) {  // every earlier row's, before this row's are allocated
    if (input != nullptr) cudaFree(input);
    input = nullptr;
  }
  for (std::uint32_t i = 0; i < rq.input_count; ++i) {
    check(cudaMalloc(&own_inputs_[i], std::max<std::uint64_t>(rq.n, 1) * sizeof(float)),
          "allocating the timed inputs");
    check(cudaIpcGetMemHandle(&reply.inputs[i], own_inputs_[i]), "exporting the timed inputs");
  }
  if (rq.segments > 0) {
    if (own_offsets_ != nullptr) cudaFree(own_offsets_);
    own_offsets_ = nullptr;
    check(cudaMalloc(&own_offsets_, (rq.segments + 1) * sizeof(std::int64_t)),
          "allocating the timed offsets");
    check(cudaIpcGetMemHandle(&reply.offsets, own_offsets_), "exporting the timed offsets");
  }
  return reply;
}

/// Request::stage_input: a poisoned copy of the runner's own, into which \p input (n floats)
/// is copied on the lab's stream, so that it is ready only for work ordered after the copy.
const float* Session::staged_input(const float* input, std::size_t n) {
  if (staged_n_ < n) {
    if (staged_ != nullptr) check(cudaFree(staged_), "freeing the staged input");
    check(cudaMalloc(&staged_, n * sizeof(float)), "allocating the staged input");
    staged_n_ = n;
  }
  check(cudaMemsetAsync(staged_, 0xFF, n * sizeof(float), stream_), "poisoning the input");
  check(cudaMemcpyAsync(staged_, input, n * sizeof(float), cudaMemcpyDeviceToDevice, stream_),
        "staging the input on the lab's stream");
  return staged_;
}

/// Request::tiled: a TiledRange of this process with the checker's layout, filled from its
/// copies of the tiles; returns the lab's pointer into it. The range is kept for the next
/// request of the same layout: mapping hundreds of slots costs more than copying a few tiles.
const float* Session::tiled_input(const TiledRef& t) {
  TileLayout layout;
  layout.tile_bytes = t.tile_bytes;
  layout.slots = t.slots;
  layout.own_slots.assign(t.own_slots, t.own_slots + (t.tiles - 1));
  try {
    if (!tiled_ || !(tiled_->layout() == layout)) {
      tiled_.reset();  // first, so that its memory is free for the new one
      tiled_ = std::make_unique<TiledRange>(layout);
    }
  } catch (const std::exception& e) {
    throw CudaFailure{std::string("building the tiled input: ") + e.what()};
  }
  for (std::uint32_t k = 0; k < t.tiles; ++k) {
    const char* contents = maps_.map(t.contents[k]);
    if (contents == nullptr) throw CudaFailure{"a tile of the tiled input came without contents"};
    check(cudaMemcpy(tiled_->tile(k), contents, t.tile_bytes, cudaMemcpyDeviceToDevice),
          "filling a tile of the tiled input");
  }
  // A copy between device buffers may return early, and the lab's non-blocking stream does not
  // wait for the legacy stream it ran on.
  check(cudaDeviceSynchronize(), "filling the tiled input");
  return reinterpret_cast<const float*>(tiled_->data() + t.offset);
}

Reply Session::run(const Lab& lab, const Request& rq) {
  Reply reply;
  std::string why;
  const void* entry = lab.entry(rq.op, why);
  if (entry == nullptr) {
    reply.status = Status::kNotLoaded;
    set_message(reply, why);
    return reply;
  }
  const ResultKind kind = kOperations[rq.op].kind;
  if (rq.input_count == 0 || rq.input_count > kMaxInputs || rq.calls == 0 ||
      !tiled_request_fits(rq)) {
    reply.status = Status::kBadRequest;
    set_message(reply, "bad request: inputs or calls");
    return reply;
  }
  const float* inputs[kMaxInputs] = {};
  for (std::uint32_t i = 0; i < rq.input_count; ++i)
    inputs[i] =
        rq.own_inputs ? own_inputs_[i] : reinterpret_cast<const float*>(maps_.map(rq.inputs[i]));
  if (rq.tiled.tiles > 0)
    inputs[0] = tiled_input(rq.tiled);
  else if (rq.stage_input && !rq.own_inputs && rq.input_count == 1 && inputs[0] != nullptr)
    inputs[0] = staged_input(inputs[0], rq.n);
  char* out = maps_.map(rq.out);
  char* aux = maps_.map(rq.aux);
  char* capture = maps_.map(rq.capture);
  const auto* offsets = rq.own_inputs && !rq.offsets.present
                            ? own_offsets_
                            : reinterpret_cast<const std::int64_t*>(maps_.map(rq.offsets));
  const std::size_t rb = call_result_bytes(kind, rq.segments);

  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  check(cudaEventRecord(start, stream_), "cudaEventRecord");
  for (std::uint32_t k = 0; k < rq.calls; ++k) {
    if ((rq.poison & kPoisonOut) && out != nullptr && !updates_in_place(kind))
      check(cudaMemsetAsync(out, 0xFF, rq.out.bytes, stream_), "poisoning the output");
    if ((rq.poison & kPoisonAux) && aux != nullptr && rq.aux.bytes > 0)
      check(cudaMemsetAsync(aux, 0xFF, rq.aux.bytes, stream_), "poisoning the workspace");
    try {
      call_lab(entry, kind, inputs[k % rq.input_count], rq.n, offsets, rq.segments, out, aux,
               rq.aux.bytes, stream_);
    } catch (...) {
      reply = lab_threw(std::current_exception());
    }
    if (reply.status != Status::kOk) break;
    // The result as the stream sees it right after the call: work the lab left on another
    // stream has not finished here, so the checker sees the poison instead of a result.
    if (capture != nullptr && !updates_in_place(kind))
      check(cudaMemcpyAsync(capture + k * rb, out, rb, cudaMemcpyDeviceToDevice, stream_),
            "capturing the result");
  }
  check(cudaEventRecord(stop, stream_), "cudaEventRecord");
  check(cudaStreamSynchronize(stream_), "the lab's work on its stream");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  reply.event_ms = ms;
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  maps_.end_request();
  return reply;
}

/// Drops every environment variable but kRunnerEnvironment (what a sanitizer added).
void keep_only_runner_environment() {
  std::vector<std::pair<std::string, std::string>> kept;
  for (const char* name : kRunnerEnvironment)
    if (const char* value = std::getenv(name)) kept.emplace_back(name, value);
  clearenv();
  for (const auto& [name, value] : kept) setenv(name.c_str(), value.c_str(), 1);
}

/// Closes every copy of the sanitizer's report channel (kSanitizerLogFd) that this process
/// inherited from the sanitizer in front of it: the report reaches the checker, never the lab.
void close_report_channel() {
  struct stat channel{};
  if (::fstat(kSanitizerLogFd, &channel) != 0) return;
  DIR* fds = ::opendir("/proc/self/fd");
  std::vector<int> copies = {kSanitizerLogFd};
  for (dirent* e = fds != nullptr ? ::readdir(fds) : nullptr; e != nullptr; e = ::readdir(fds)) {
    const int fd = std::atoi(e->d_name);
    struct stat st{};
    if (fd > kRunnerSocketFd && fd != dirfd(fds) && ::fstat(fd, &st) == 0 &&
        st.st_dev == channel.st_dev && st.st_ino == channel.st_ino)
      copies.push_back(fd);
  }
  if (fds != nullptr) ::closedir(fds);
  for (int fd : copies) ::close(fd);
}

/// How many processes this process can see in /proc (its sandbox's own /proc shows two).
int visible_processes() {
  int count = 0;
  DIR* proc = ::opendir("/proc");
  for (dirent* e = proc != nullptr ? ::readdir(proc) : nullptr; e != nullptr; e = ::readdir(proc))
    if (e->d_name[0] >= '1' && e->d_name[0] <= '9') ++count;
  if (proc != nullptr) ::closedir(proc);
  return count;
}

/// `--walls`: the walls a runner raises here, in one line (the grader's report quotes it).
int report_walls() {
  Walls walls;
  raise_landlock(walls);
  raise_seccomp(walls);
  std::printf("%s; pid %d, %d processes visible in /proc\n", walls.describe().c_str(),
              static_cast<int>(::getpid()), visible_processes());
  return walls.seccomp ? 0 : 1;
}

/// `--places`: behind the walls, every place the lab could write to or share (a summary line
/// for the grader's report, then one line a place).
int report_places() {
  Walls walls;
  raise_landlock(walls);
  raise_seccomp(walls);
  const Places places = find_places();
  std::printf("%s\n%s", places.summary().c_str(), places.details().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the checker
  if (argc == 2 && std::strcmp(argv[1], "--walls") == 0) return report_walls();
  if (argc == 2 && std::strcmp(argv[1], "--places") == 0) return report_places();
  // Confinement is the sandbox in front of this process (the grader's), then the walls below.
  struct stat sock_stat{};
  if (argc < 2 || ::fstat(kRunnerSocketFd, &sock_stat) != 0 || !S_ISSOCK(sock_stat.st_mode)) {
    std::fprintf(stderr,
                 "usage: reduce_lab_runner LIBRARY... (started by a checker, socket on fd 3)\n");
    return 2;
  }
  const int sock = kRunnerSocketFd;
  Walls walls;
  raise_landlock(walls);  // before CUDA starts its threads, so that they inherit it
  close_report_channel();
  // The CUDA context now, while the checker makes its own (its first request would wait for it).
  // A failure here is not sticky: the first request meets and reports it. A sanitizer attaches
  // here, so the variables it needed can go before the lab is loaded.
  (void)cudaFree(nullptr);
  keep_only_runner_environment();
  raise_seccomp(walls);  // on every thread, CUDA's too
  // The labs of one submission: each library is loaded by the first request that names it, so
  // a lab's code runs only once the checker has come to that lab.
  std::vector<Lab> labs;
  for (int i = 1; i < argc; ++i) labs.push_back(Lab{argv[i]});

  Session session;
  std::uint32_t awake_us = 0;  // the last request's Request::awake_us
  for (;;) {
    Request rq;
    if (!read_request(sock, rq, awake_us)) return 0;  // the checker is gone
    awake_us = rq.command == Command::kRun ? std::min<std::uint32_t>(rq.awake_us, kMaxAwakeUs) : 0;
    Reply reply;
    if (rq.version != kProtocolVersion || rq.op >= sizeof kOperations / sizeof kOperations[0] ||
        rq.library >= labs.size()) {
      reply.status = Status::kBadRequest;
      set_message(reply, "protocol mismatch between the checker and the runner");
    } else if (rq.command == Command::kQuit) {
      return 0;
    } else {
      if (rq.forget_buffers) session.forget_buffers();
      try {
        session.open_stream();
        Lab& lab = labs[rq.library];
        if (rq.command != Command::kAllocateInputs) lab.load();
        reply = rq.command == Command::kWorkspaceBytes   ? workspace_bytes(lab, rq)
                : rq.command == Command::kAllocateInputs ? session.allocate_inputs(rq)
                                                         : session.run(lab, rq);
      } catch (const CudaFailure& failure) {
        reply = Reply{};
        reply.status = Status::kCudaError;
        reply.exiting = 1;
        set_message(reply, failure.what);
      } catch (const std::exception&) {  // the lab's workspace_bytes threw
        reply = lab_threw(std::current_exception());
      }
    }
    if (!write_all(sock, &reply, sizeof reply)) return 0;
    if (reply.exiting) {
      std::fflush(nullptr);
      _exit(3);  // a CUDA error may have poisoned this context: the checker starts a fresh one
    }
  }
}
