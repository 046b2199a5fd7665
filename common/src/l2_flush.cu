#include <reduce/cuda_check.cuh>
#include <reduce/l2_flush.cuh>

namespace reduce {

L2Flush::L2Flush() {
  int device = 0;
  REDUCE_CUDA_CHECK(cudaGetDevice(&device));
  int l2 = 0;
  REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  buffer_ = DeviceBuffer<unsigned char>(static_cast<std::size_t>(l2) * 2);
}

void L2Flush::flush(cudaStream_t stream) {
  value_ ^= 1;  // a different value each time, so no write can be skipped as redundant
  buffer_.fill_bytes(value_, stream);
}

}  // namespace reduce
