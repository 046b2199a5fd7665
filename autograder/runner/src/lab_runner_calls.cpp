// LabRunner's untimed calls: each stages the caller's buffers into guarded ones of the
// checker's, has the runner call the lab once, checks the guards and copies the result back
// in stream order. The buffers travel as CUDA IPC handles (ref()); a tiled input as its layout
// and a copy of its tiles (TiledCopy).
#include "lab_runner_parts.hpp"

#include <reduce_runner/tiled_range.hpp>

#include <cuda.h>

#include <algorithm>
#include <stdexcept>

namespace reduce::runner {

/// A copy of each tile of a TiledRange in ordinary device memory, which has CUDA IPC handles:
/// the runner fills its own range from them. Freed once the request is answered (the runner
/// maps them for that request only).
struct LabRunner::TiledCopy {
  std::vector<void*> tiles;
  ~TiledCopy() {
    for (void* tile : tiles) cudaFree(tile);
  }
};

std::unique_ptr<LabRunner::TiledCopy> LabRunner::tiled_ref(const TiledRange& range, const float* in,
                                                           TiledRef& out) const {
  const TileLayout& layout = range.layout();
  if (layout.tiles() > static_cast<std::size_t>(kMaxTiles))
    throw RunnerError("checker: a tiled input of " + std::to_string(layout.tiles()) +
                      " tiles (at most " + std::to_string(kMaxTiles) + " reach the lab)");
  auto copy = std::make_unique<TiledCopy>();
  out.tiles = static_cast<std::uint32_t>(layout.tiles());
  out.tile_bytes = layout.tile_bytes;
  out.slots = layout.slots;
  out.offset = static_cast<std::uint64_t>(reinterpret_cast<const char*>(in) - range.data());
  for (std::size_t k = 0; k < layout.tiles(); ++k) {
    if (k > 0) out.own_slots[k - 1] = layout.own_slots[k - 1];
    void* tile = nullptr;
    cuda(cudaMalloc(&tile, layout.tile_bytes), "allocating a copy of a tile");
    copy->tiles.push_back(tile);
    cuda(cudaMemcpy(tile, range.tile(k), layout.tile_bytes, cudaMemcpyDeviceToDevice),
         "copying a tile");
    out.contents[k] = ref(tile, 0, false);
  }
  return copy;
}

long long LabRunner::Guarded::first_change(bool& before) const {
  // Only the guards cross to the host: the lab's bytes between them can be tens of megabytes
  // (a segmented call's results), and copying them took longer than the call.
  std::vector<unsigned char> head(front), tail(kGuardBytes);
  if (front > 0)
    cuda(cudaMemcpy(head.data(), base, front, cudaMemcpyDeviceToHost), "reading guards");
  cuda(cudaMemcpy(tail.data(), base + front + usable, kGuardBytes, cudaMemcpyDeviceToHost),
       "reading guards");
  for (std::size_t i = 0; i < front; ++i)
    if (head[i] != kGuardByte) {
      before = true;
      return static_cast<long long>(front - i);
    }
  for (std::size_t i = 0; i < kGuardBytes; ++i)
    if (tail[i] != kGuardByte) {
      before = false;
      return static_cast<long long>(i) + 1;
    }
  return 0;
}

void rethrow(const Reply& reply) {
  switch (reply.status) {
    case Status::kOk:
      return;
    case Status::kLabThrew:
      if (reply.error_kind == ErrorKind::kInvalidArgument)
        throw std::invalid_argument(reply.message);
      if (reply.error_kind == ErrorKind::kLogicError) throw std::logic_error(reply.message);
      throw std::runtime_error(reply.message);
    case Status::kCudaError:
      throw RunnerError(std::string("CUDA error in the lab's process: ") + reply.message);
    default:
      throw RunnerError(reply.message);
  }
}

int LabRunner::op_index(const std::string& op) const {
  const int index = find_operation(op);
  if (index < 0) throw RunnerError("checker: unknown operation " + op);
  return index;
}

BufferRef LabRunner::ref(const void* device_ptr, std::size_t bytes, bool persistent) const {
  BufferRef r;
  if (device_ptr == nullptr) return r;
  // The driver's cuMemGetAddressRange, found through the runtime: linking libcuda itself would
  // stop every checker from starting (even to list its tests) on a machine without a driver.
  using AddressRange = CUresult (*)(CUdeviceptr*, std::size_t*, CUdeviceptr);
  static const AddressRange address_range = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    cuda(cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 12000, cudaEnableDefault,
                                          &found),
         "finding cuMemGetAddressRange");
    if (found != cudaDriverEntryPointSuccess || fn == nullptr)
      throw RunnerError("checker: the driver has no cuMemGetAddressRange");
    return reinterpret_cast<AddressRange>(fn);
  }();
  CUdeviceptr base = 0;
  std::size_t size = 0;
  if (address_range(&base, &size, reinterpret_cast<CUdeviceptr>(device_ptr)) != CUDA_SUCCESS)
    throw RunnerError("checker: a buffer given to the lab is not device memory of this process");
  cuda(cudaIpcGetMemHandle(&r.handle, reinterpret_cast<void*>(base)), "cudaIpcGetMemHandle");
  r.offset = reinterpret_cast<CUdeviceptr>(device_ptr) - base;
  r.bytes = bytes;
  r.present = 1;
  r.persistent = persistent ? 1 : 0;
  return r;
}

std::size_t LabRunner::workspace_bytes(const std::string& op, std::size_t n) {
  return workspace_bytes(op, n, 0);
}

std::size_t LabRunner::workspace_bytes(const std::string& op, std::size_t n, std::size_t segments) {
  std::lock_guard<std::mutex> lock(mutex_);
  Request rq;
  rq.command = Command::kWorkspaceBytes;
  rq.op = static_cast<std::uint32_t>(op_index(op));
  rq.n = n;
  rq.segments = segments;
  const Reply reply = request(rq);
  rethrow(reply);
  if (reply.value > (std::size_t{1} << 40))
    throw RunnerError(op + "_workspace_bytes(" + std::to_string(n) + ") asked for " +
                      std::to_string(reply.value) + " bytes");
  return reply.value;
}

void LabRunner::check_guards(const std::string& op, std::size_t n) {
  bool before = false;
  if (const long long at = out_->first_change(before)) {
    const ResultKind kind = kOperations[op_index(op)].kind;
    throw RunnerError("the lab wrote " + std::string(before ? "before" : "past") + " its " +
                      (is_index(kind)      ? "one-index"
                       : per_segment(kind) ? "per-segment"
                                           : "one-float") +
                      " output (" + std::to_string(at) + " bytes " +
                      (before ? "before it" : "past its end") + ", n = " + std::to_string(n) + ")");
  }
  if (const long long at = workspace_->first_change(before)) {
    throw RunnerError("the lab wrote past its workspace: " + op + "_workspace_bytes(" +
                      std::to_string(n) + ") asked for " + std::to_string(workspace_->usable) +
                      " bytes, and guard byte " + std::to_string(at) + " after them changed");
  }
}

/// A guarded workspace of at least \p bytes. The runner maps persistent buffers once and keeps
/// them, so an outgrown workspace it may still map is not freed yet (freeing memory another
/// process maps is undefined, and a new allocation could get the old one's handle): the next
/// request tells the runner to unmap what it keeps, and the old workspace is freed once it
/// answers. The runner keeps running, with the timed inputs it holds.
void LabRunner::ensure_workspace(std::size_t bytes) {
  if (workspace_ && workspace_->fits(bytes)) return;
  if (workspace_ && child_) retired_.push_back(std::move(workspace_));
  workspace_ = std::make_unique<Guarded>(bytes, 0);
}

void LabRunner::ensure_buffer(std::unique_ptr<Guarded>& slot, std::size_t bytes,
                              std::size_t front_guard) {
  if (slot && slot->fits(bytes)) return;
  if (slot && child_) retired_.push_back(std::move(slot));  // as ensure_workspace() says
  slot = std::make_unique<Guarded>(bytes, front_guard);
}

void LabRunner::reduce_segments(const std::string& op, const float* in, std::size_t n,
                                const std::int64_t* offsets, std::size_t segments, float* out,
                                cudaStream_t stream) {
  call_once(op, in, n, offsets, segments, out, stream);
}

void LabRunner::reduce(const std::string& op, const float* in, std::size_t n, void* out,
                       cudaStream_t stream) {
  call_once(op, in, n, nullptr, 0, out, stream);
}

void LabRunner::call_once(const std::string& op, const float* in, std::size_t n,
                          const std::int64_t* offsets, std::size_t segments, void* out,
                          cudaStream_t stream) {
  const int index = op_index(op);
  const std::size_t ws = workspace_bytes(op, n, segments);
  std::lock_guard<std::mutex> lock(mutex_);
  cuda(cudaStreamSynchronize(stream), "waiting for the caller's stream");
  const std::size_t rb = call_result_bytes(kOperations[index].kind, segments);
  ensure_buffer(out_, std::max<std::size_t>(rb, 256), kFrontGuard);
  ensure_buffer(capture_, std::max<std::size_t>(rb, 256), 0);
  ensure_workspace(ws);
  out_->arm(rb);
  workspace_->arm(ws);
  // The lab's output starts as the caller's did: a test's own poison (a NaN, or a pattern that
  // is no NaN when NaN is the expected answer) must still tell a result from no write at all.
  if (out != nullptr && rb > 0)
    cuda(cudaMemcpy(out_->lab_ptr(), out, rb, cudaMemcpyDeviceToDevice), "staging the output");
  Request rq;
  rq.command = Command::kRun;
  rq.op = static_cast<std::uint32_t>(index);
  rq.n = n;
  rq.segments = segments;
  rq.calls = 1;
  rq.input_count = 1;
  rq.poison = out != nullptr ? kPoisonAux : kPoisonOut | kPoisonAux;
  std::unique_ptr<TiledCopy> tiles;  // kept until the runner has answered
  if (const TiledRange* range = TiledRange::containing(in)) {
    tiles = tiled_ref(*range, in, rq.tiled);
  } else {
    rq.inputs[0] = ref(in, n * sizeof(float), false);
    rq.inputs[0].bytes = 0;  // inputs are never poisoned
  }
  if (offsets != nullptr) {
    rq.offsets = ref(offsets, (segments + 1) * sizeof(std::int64_t), false);
    rq.offsets.bytes = 0;
  }
  rq.stage_input = stage_inputs_ && !tiles ? 1 : 0;
  rq.out = ref(out_->lab_ptr(), rb, true);
  rq.aux = ref(workspace_->lab_ptr(), ws, true);
  rq.capture = ref(capture_->lab_ptr(), rb, true);
  const Reply reply = request(rq);
  rethrow(reply);
  check_guards(op, n);
  if (rb > 0)
    cuda(cudaMemcpyAsync(out, capture_->lab_ptr(), rb, cudaMemcpyDeviceToDevice, stream),
         "copying the results");
}

Request LabRunner::armed_run(int index, std::size_t n, std::size_t calls, std::size_t inputs,
                             std::size_t result_bytes, std::size_t workspace_bytes) {
  ensure_buffer(out_, std::max<std::size_t>(result_bytes, 256), kFrontGuard);
  ensure_workspace(workspace_bytes);
  out_->arm(result_bytes);
  workspace_->arm(workspace_bytes);
  Request rq;
  rq.command = Command::kRun;
  rq.op = static_cast<std::uint32_t>(index);
  rq.n = n;
  rq.calls = static_cast<std::uint32_t>(calls);
  rq.input_count = static_cast<std::uint32_t>(inputs);
  rq.out = ref(out_->lab_ptr(), result_bytes, true);
  rq.aux = ref(workspace_->lab_ptr(), workspace_bytes, true);
  return rq;
}

void LabRunner::reduce_each(const std::string& op, const std::vector<const float*>& inputs,
                            std::size_t n, void* results, cudaStream_t stream) {
  const int index = op_index(op);
  const ResultKind kind = kOperations[index].kind;
  if (per_segment(kind) || updates_in_place(kind))
    throw std::logic_error("reduce_each: " + op + " does not return one float or one index");
  const std::size_t rb = call_result_bytes(kind, 0);
  auto* out = static_cast<char*>(results);
  const bool one_at_a_time =
      stage_inputs_ || std::any_of(inputs.begin(), inputs.end(), [](const float* in) {
        return TiledRange::containing(in) != nullptr;
      });
  if (one_at_a_time) {
    // reduce() starts the lab's output as the caller's: poisoned, as here before every call.
    cuda(cudaMemsetAsync(out, 0xFF, inputs.size() * rb, stream), "poisoning the results");
    for (std::size_t k = 0; k < inputs.size(); ++k) reduce(op, inputs[k], n, out + k * rb, stream);
    return;
  }
  const std::size_t ws = workspace_bytes(op, n, 0);
  std::lock_guard<std::mutex> lock(mutex_);
  cuda(cudaStreamSynchronize(stream), "waiting for the caller's stream");
  for (std::size_t first = 0; first < inputs.size(); first += kMaxInputs) {
    const std::size_t count = std::min<std::size_t>(kMaxInputs, inputs.size() - first);
    ensure_buffer(capture_, std::max<std::size_t>(count * rb, 256), 0);
    Request rq = armed_run(index, n, count, count, rb, ws);
    for (std::size_t k = 0; k < count; ++k) {
      rq.inputs[k] = ref(inputs[first + k], n * sizeof(float), false);
      rq.inputs[k].bytes = 0;  // inputs are never poisoned
    }
    rq.capture = ref(capture_->lab_ptr(), count * rb, true);
    const Reply reply = request(rq);
    rethrow(reply);
    check_guards(op, n);
    cuda(cudaMemcpyAsync(out + first * rb, capture_->lab_ptr(), count * rb,
                         cudaMemcpyDeviceToDevice, stream),
         "copying the results");
    // The next request's calls write the capture again: this copy must have read it first.
    if (first + count < inputs.size()) cuda(cudaStreamSynchronize(stream), "copying the results");
  }
}

void LabRunner::atomic_max_apply(const float* values, std::size_t n, float* address,
                                 float* old_values, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  cuda(cudaStreamSynchronize(stream), "waiting for the caller's stream");
  const std::size_t olds = n * sizeof(float);
  if (!out_) out_ = std::make_unique<Guarded>(256, kFrontGuard);
  ensure_workspace(olds);
  out_->arm(sizeof(float));
  workspace_->arm(olds);
  if (address != nullptr)
    cuda(cudaMemcpy(out_->lab_ptr(), address, sizeof(float), cudaMemcpyDeviceToDevice),
         "staging *address");
  // old_values start as the caller's did, so that an old value never written reads as the
  // caller's poison and not as what an earlier call left.
  if (old_values != nullptr && olds > 0)
    cuda(cudaMemcpy(workspace_->lab_ptr(), old_values, olds, cudaMemcpyDeviceToDevice),
         "staging old_values");
  Request rq;
  rq.command = Command::kRun;
  rq.op = static_cast<std::uint32_t>(op_index("atomic_max_apply"));
  rq.n = n;
  rq.calls = 1;
  rq.input_count = 1;
  rq.poison = 0;  // *address and old_values start as the caller's (staged above)
  rq.inputs[0] = ref(values, 0, false);
  rq.stage_input = stage_inputs_ ? 1 : 0;
  rq.out = ref(out_->lab_ptr(), sizeof(float), true);
  rq.aux = ref(workspace_->lab_ptr(), olds, true);
  const Reply reply = request(rq);
  rethrow(reply);
  bool before = false;
  if (out_->first_change(before))
    throw RunnerError("the lab wrote " + std::string(before ? "before" : "past") +
                      " the one float at address");
  if (const long long at = workspace_->first_change(before))
    throw RunnerError("the lab wrote past old_values (" + std::to_string(n) +
                      " floats): guard byte " + std::to_string(at) + " after them changed");
  if (address != nullptr)
    cuda(cudaMemcpyAsync(address, out_->lab_ptr(), sizeof(float), cudaMemcpyDeviceToDevice, stream),
         "returning *address");
  if (old_values != nullptr && olds > 0)
    cuda(cudaMemcpyAsync(old_values, workspace_->lab_ptr(), olds, cudaMemcpyDeviceToDevice, stream),
         "returning old_values");
}

}  // namespace reduce::runner
