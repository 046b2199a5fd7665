/// \file
/// \brief The host driver of the block-per-chunk rungs: launch, shrink, repeat until one value.
///
/// CUDA has no grid-wide barrier inside a kernel, so a kernel in which each block reduces a
/// chunk of the input leaves one partial result per block. Launching the same kernel again on
/// those partials shrinks them by the chunk size each time; when one block is enough, its
/// result is the answer (lesson 02 explains this strategy and its alternatives).
#pragma once

#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <cstddef>

namespace reduce {

/// Blocks needed to cover \p n elements when each block reduces \p per_block of them.
constexpr std::size_t blocks_for(std::size_t n, std::size_t per_block) {
  return (n + per_block - 1) / per_block;
}

/// Workspace bytes shrink_by_passes() needs: two alternating arrays of partial results.
constexpr std::size_t multi_pass_workspace_bytes(std::size_t n, std::size_t per_block) {
  return n <= per_block
             ? 0
             : (blocks_for(n, per_block) + blocks_for(blocks_for(n, per_block), per_block)) *
                   sizeof(float);
}

/// Reduces \p n floats at \p in to one value at \p result by launching \p pass again and again,
/// each launch shrinking the array to one partial per block of \p per_block elements.
/// \param in device input
/// \param n number of elements
/// \param result device pointer to the one output float
/// \param workspace at least multi_pass_workspace_bytes(n, per_block) bytes
/// \param stream the stream every launch is queued on
/// \param per_block elements one block of \p pass reduces
/// \param pass callable `pass(const float* in, std::size_t n, float* partials, std::size_t blocks,
///             cudaStream_t)` that launches the lab's kernel with \p blocks blocks, each writing
///             the sum of its chunk of in[0..n) to partials[blockIdx.x]
template <typename Pass>
void shrink_by_passes(const float* in, std::size_t n, float* result, Workspace workspace,
                      cudaStream_t stream, std::size_t per_block, Pass&& pass) {
  if (n == 0) {
    REDUCE_CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(float), stream));
    return;
  }
  float* buffers[2] = {workspace.as<float>(),
                       workspace.as<float>() + (n > per_block ? blocks_for(n, per_block) : 0)};
  int next = 0;
  while (true) {
    const std::size_t blocks = blocks_for(n, per_block);
    float* out = blocks == 1 ? result : buffers[next];
    pass(in, n, out, blocks, stream);
    REDUCE_CUDA_CHECK_LAUNCH();
    if (blocks == 1) return;
    in = out;
    n = blocks;
    next ^= 1;
  }
}

}  // namespace reduce
