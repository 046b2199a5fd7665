// TiledRange: the driver's virtual memory management, reached through the runtime's entry
// points (tiled_range.hpp says why), every call checked.
#include <reduce_runner/tiled_range.hpp>

#include <cuda.h>
#include <cuda_runtime.h>

#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace reduce::runner {
namespace {

/// The driver function \p name (of the CUDA 12.0 ABI or later), or null when absent.
void* driver_function(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return nullptr;
  return fn;
}

/// The driver functions a TiledRange needs, found once.
struct Driver {
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*granularity)(std::size_t*, const CUmemAllocationProp*,
                          CUmemAllocationGranularity_flags) = nullptr;
  CUresult (*reserve)(CUdeviceptr*, std::size_t, std::size_t, CUdeviceptr,
                      unsigned long long) = nullptr;
  CUresult (*address_free)(CUdeviceptr, std::size_t) = nullptr;
  CUresult (*create)(CUmemGenericAllocationHandle*, std::size_t, const CUmemAllocationProp*,
                     unsigned long long) = nullptr;
  CUresult (*release)(CUmemGenericAllocationHandle) = nullptr;
  CUresult (*map)(CUdeviceptr, std::size_t, std::size_t, CUmemGenericAllocationHandle,
                  unsigned long long) = nullptr;
  CUresult (*unmap)(CUdeviceptr, std::size_t) = nullptr;
  CUresult (*set_access)(CUdeviceptr, std::size_t, const CUmemAccessDesc*, std::size_t) = nullptr;
  std::string missing;  // the first function not found

  Driver() {
    find(get_error_name, "cuGetErrorName");
    find(device_get, "cuDeviceGet");
    find(device_attribute, "cuDeviceGetAttribute");
    find(granularity, "cuMemGetAllocationGranularity");
    find(reserve, "cuMemAddressReserve");
    find(address_free, "cuMemAddressFree");
    find(create, "cuMemCreate");
    find(release, "cuMemRelease");
    find(map, "cuMemMap");
    find(unmap, "cuMemUnmap");
    find(set_access, "cuMemSetAccess");
  }

  template <typename Fn>
  void find(Fn& fn, const char* name) {
    fn = reinterpret_cast<Fn>(driver_function(name));
    if (fn == nullptr && missing.empty()) missing = name;
  }

  /// Throws std::runtime_error naming \p what and the driver's error unless \p status is
  /// CUDA_SUCCESS.
  void check(CUresult status, const std::string& what) const {
    if (status == CUDA_SUCCESS) return;
    const char* name = nullptr;
    if (get_error_name == nullptr || get_error_name(status, &name) != CUDA_SUCCESS) name = nullptr;
    throw std::runtime_error("mapped device memory: " + what + " failed: " +
                             (name != nullptr ? name : "CUresult " + std::to_string(status)));
  }
};

/// The driver functions, after the runtime has made its context current on this thread (the
/// driver's calls act on the current context).
const Driver& driver() {
  if (const cudaError_t status = cudaFree(nullptr); status != cudaSuccess)
    throw std::runtime_error(std::string("mapped device memory: no CUDA context: ") +
                             cudaGetErrorName(status));
  static const Driver d;
  if (!d.missing.empty())
    throw std::runtime_error("mapped device memory: the driver has no " + d.missing);
  return d;
}

/// The current device, as the driver names it.
CUdevice current_device(const Driver& d) {
  int ordinal = 0;
  if (const cudaError_t status = cudaGetDevice(&ordinal); status != cudaSuccess)
    throw std::runtime_error(std::string("mapped device memory: cudaGetDevice: ") +
                             cudaGetErrorName(status));
  CUdevice device = 0;
  d.check(d.device_get(&device, ordinal), "cuDeviceGet");
  return device;
}

/// Device memory of the current device, as cuMemCreate and its granularity take it.
CUmemAllocationProp device_memory(CUdevice device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

/// Every TiledRange of this process, by its first byte (for containing()).
std::mutex registry_mutex;
std::map<const char*, const TiledRange*>& registry() {
  static std::map<const char*, const TiledRange*> ranges;
  return ranges;
}

}  // namespace

std::string tiling_unsupported() {
  try {
    const Driver& d = driver();
    int supported = 0;
    d.check(d.device_attribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                               current_device(d)),
            "cuDeviceGetAttribute(VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)");
    return supported != 0 ? std::string()
                          : "the GPU does not support the driver's virtual memory management";
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::size_t tile_granularity() {
  const Driver& d = driver();
  const CUmemAllocationProp prop = device_memory(current_device(d));
  std::size_t granularity = 0;
  d.check(d.granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
          "cuMemGetAllocationGranularity");
  if (granularity == 0)
    throw std::runtime_error("mapped device memory: the driver gave a granularity of 0 bytes");
  return granularity;
}

TiledRange::TiledRange(TileLayout layout) : layout_(std::move(layout)) {
  const std::size_t granularity = tile_granularity();
  if (layout_.slots <= layout_.own_slots.size() || layout_.tile_bytes == 0 ||
      layout_.tile_bytes % granularity != 0 ||
      layout_.bytes() / layout_.tile_bytes != layout_.slots)
    throw std::invalid_argument(
        "mapped device memory: tiles of " + std::to_string(layout_.tile_bytes) + " bytes in " +
        std::to_string(layout_.slots) + " slots (tiles must be a multiple of " +
        std::to_string(granularity) + " bytes, and tile 0 must fill at least one slot)");
  for (std::size_t k = 0; k < layout_.own_slots.size(); ++k)
    if (layout_.own_slots[k] >= layout_.slots || layout_.tile_at(layout_.own_slots[k]) != k + 1)
      throw std::invalid_argument("mapped device memory: tile " + std::to_string(k + 1) +
                                  "'s slot " + std::to_string(layout_.own_slots[k]) +
                                  " is outside the range or taken twice");
  const Driver& d = driver();
  const CUdevice device = current_device(d);
  const CUmemAllocationProp prop = device_memory(device);
  try {
    CUdeviceptr base = 0;
    d.check(d.reserve(&base, layout_.bytes(), 0, 0, 0), "cuMemAddressReserve");
    base_ = reinterpret_cast<char*>(base);
    for (std::size_t k = 0; k < layout_.tiles(); ++k) {
      CUmemGenericAllocationHandle handle = 0;
      d.check(d.create(&handle, layout_.tile_bytes, &prop, 0), "cuMemCreate");
      handles_.push_back(handle);
    }
    for (; mapped_slots_ < layout_.slots; ++mapped_slots_) {
      d.check(d.map(base + mapped_slots_ * layout_.tile_bytes, layout_.tile_bytes, 0,
                    handles_[layout_.tile_at(mapped_slots_)], 0),
              "cuMemMap of slot " + std::to_string(mapped_slots_));
    }
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    d.check(d.set_access(base, layout_.bytes(), &access, 1), "cuMemSetAccess");
  } catch (...) {
    release();
    throw;
  }
  const std::lock_guard<std::mutex> lock(registry_mutex);
  registry()[base_] = this;
}

TiledRange::~TiledRange() {
  {
    const std::lock_guard<std::mutex> lock(registry_mutex);
    registry().erase(base_);
  }
  (void)cudaDeviceSynchronize();  // unmapping memory a kernel still reads would fault it
  release();
}

void TiledRange::release() noexcept {
  try {
    const Driver& d = driver();
    const auto base = reinterpret_cast<CUdeviceptr>(base_);
    for (std::size_t slot = 0; slot < mapped_slots_; ++slot)
      (void)d.unmap(base + slot * layout_.tile_bytes, layout_.tile_bytes);
    for (const CUmemGenericAllocationHandle handle : handles_) (void)d.release(handle);
    if (base_ != nullptr) (void)d.address_free(base, layout_.bytes());
  } catch (...) {  // no driver: nothing was made
  }
  mapped_slots_ = 0;
  handles_.clear();
  base_ = nullptr;
}

char* TiledRange::tile(std::size_t k) const noexcept {
  std::size_t slot = 0;
  if (k > 0) {
    slot = layout_.own_slots[k - 1];
  } else {
    while (slot < layout_.slots && layout_.tile_at(slot) != 0) ++slot;
  }
  return base_ + slot * layout_.tile_bytes;
}

const TiledRange* TiledRange::containing(const void* address) {
  const auto* p = static_cast<const char*>(address);
  const std::lock_guard<std::mutex> lock(registry_mutex);
  auto after = registry().upper_bound(p);
  if (after == registry().begin()) return nullptr;
  const TiledRange* range = std::prev(after)->second;
  return p < range->data() + range->layout().bytes() ? range : nullptr;
}

}  // namespace reduce::runner
