// The lab contract (common/include/reduce/lab.cuh) as a checker process sees it: every entry
// point forwards to the lab runner of this process (RemoteLab::from_environment()). Test suites
// link this instead of a lab library, so they are built once for every lab and never share a
// process with the code they judge. The workspace a test passes is not handed on: the lab gets
// a guarded workspace of exactly the size it asked for.
#include <reduce/lab_entry_points.cuh>
#include <reduce_remote/remote_lab.hpp>

namespace reduce {
namespace {

remote::RemoteLab& lab() {
  return remote::RemoteLab::from_environment();
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  return lab().workspace_bytes("sum", n);
}
void sum(const float* in, std::size_t n, float* out, Workspace, cudaStream_t stream) {
  lab().reduce("sum", in, n, out, stream);
}

std::size_t maximum_workspace_bytes(std::size_t n) {
  return lab().workspace_bytes("maximum", n);
}
void maximum(const float* in, std::size_t n, float* out, Workspace, cudaStream_t stream) {
  lab().reduce("maximum", in, n, out, stream);
}

std::size_t minimum_workspace_bytes(std::size_t n) {
  return lab().workspace_bytes("minimum", n);
}
void minimum(const float* in, std::size_t n, float* out, Workspace, cudaStream_t stream) {
  lab().reduce("minimum", in, n, out, stream);
}

std::size_t product_workspace_bytes(std::size_t n) {
  return lab().workspace_bytes("product", n);
}
void product(const float* in, std::size_t n, float* out, Workspace, cudaStream_t stream) {
  lab().reduce("product", in, n, out, stream);
}

std::size_t mean_workspace_bytes(std::size_t n) {
  return lab().workspace_bytes("mean", n);
}
void mean(const float* in, std::size_t n, float* out, Workspace, cudaStream_t stream) {
  lab().reduce("mean", in, n, out, stream);
}

std::size_t argmax_workspace_bytes(std::size_t n) {
  return lab().workspace_bytes("argmax", n);
}
void argmax(const float* in, std::size_t n, std::int64_t* out, Workspace, cudaStream_t stream) {
  lab().reduce("argmax", in, n, out, stream);
}

void atomic_max_apply(const float* values, std::size_t n, float* address, float* old_values,
                      cudaStream_t stream) {
  lab().atomic_max_apply(values, n, address, old_values, stream);
}

}  // namespace reduce
