// Planted cheat: lab 09 handed to cuBLAS without a trace at link time: no cuBLAS header, no
// NEEDED entry, no cublas symbol in the library's symbol tables. libcublas is dlopen()ed at run
// time and cublasSdot_v2 found with dlsym (function types declared by hand); the sum is the dot
// product with a vector of ones, chunk by chunk (cuBLAS takes int lengths), and one tiny kernel
// adds the chunks' results. A grader that only searches nm output and NEEDED entries sees none.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <dlfcn.h>

#include <algorithm>
#include <stdexcept>

namespace reduce {
namespace {

using Handle = void*;
using CreateFn = int (*)(Handle*);
using SetStreamFn = int (*)(Handle, cudaStream_t);
using SetPointerModeFn = int (*)(Handle, int);
using SdotFn = int (*)(Handle, int, const float*, int, const float*, int, float*);
constexpr int kPointerModeDevice = 1;  // CUBLAS_POINTER_MODE_DEVICE

constexpr std::size_t kChunk = std::size_t{1} << 24;  // elements per cublasSdot call

struct Blas {
  Handle handle = nullptr;
  SetStreamFn set_stream = nullptr;
  SdotFn sdot = nullptr;
};

const Blas& blas() {
  static const Blas loaded = [] {
    void* library = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) throw std::runtime_error("libcublas.so.13 not found");
    Blas b;
    auto create = reinterpret_cast<CreateFn>(dlsym(library, "cublasCreate_v2"));
    auto pointer_mode = reinterpret_cast<SetPointerModeFn>(dlsym(library, "cublasSetPointerMode_v2"));
    b.set_stream = reinterpret_cast<SetStreamFn>(dlsym(library, "cublasSetStream_v2"));
    b.sdot = reinterpret_cast<SdotFn>(dlsym(library, "cublasSdot_v2"));
    if (!create || !pointer_mode || !b.set_stream || !b.sdot || create(&b.handle) != 0 ||
        pointer_mode(b.handle, kPointerModeDevice) != 0)
      throw std::runtime_error("cuBLAS did not load");
    return b;
  }();
  return loaded;
}

std::size_t chunks(std::size_t n) { return (n + kChunk - 1) / kChunk; }

__global__ void fill_ones(float* x, std::size_t n) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = 1.0f;
}

__global__ void add_chunks(const float* partials, std::size_t count, float* out) {
  float total = 0.0f;
  for (std::size_t c = 0; c < count; ++c) total += partials[c];
  *out = total;
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  return (std::min(n, kChunk) + chunks(n)) * sizeof(float);
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  if (n == 0) {
    REDUCE_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(float), stream));
    return;
  }
  const Blas& b = blas();
  float* ones = workspace.as<float>();
  float* partials = ones + std::min(n, kChunk);
  fill_ones<<<256, 256, 0, stream>>>(ones, std::min(n, kChunk));
  REDUCE_CUDA_CHECK_LAUNCH();
  b.set_stream(b.handle, stream);
  for (std::size_t c = 0; c < chunks(n); ++c) {
    const std::size_t length = std::min(kChunk, n - c * kChunk);
    if (b.sdot(b.handle, static_cast<int>(length), in + c * kChunk, 1, ones, 1, partials + c) != 0)
      throw std::runtime_error("cublasSdot_v2 failed");
  }
  add_chunks<<<1, 1, 0, stream>>>(partials, chunks(n), out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
