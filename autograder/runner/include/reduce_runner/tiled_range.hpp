/// \file
/// \brief A device address range far larger than the physical memory behind it: a few tiles of
/// device memory, one of them mapped again and again (the CUDA driver's virtual memory
/// management: cuMemAddressReserve, cuMemCreate, cuMemMap, cuMemSetAccess).
///
/// The tests use it for inputs of more than 2^32 floats on any GPU (autograder/tests/
/// mapped_input.hpp). The checker and the lab's process each build their own: memory of the
/// driver's virtual memory management has no CUDA IPC handle, so the checker sends the tiles'
/// bytes and the layout (protocol.hpp, TiledRef) and the runner maps a copy of them.
///
/// The driver's functions are found through the runtime (cudaGetDriverEntryPointByVersion), as
/// LabRunner finds cuMemGetAddressRange: a checker linked to libcuda would not even start, to
/// list its tests, on a machine without the driver.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace reduce::runner {

/// Where each tile of a TiledRange lies: the range is `slots` slots of `tile_bytes` each; tile 0
/// fills every slot but those of the other tiles, each of which fills exactly one slot. Building
/// the range maps each slot with a call of its own (cuMemMap), so a range costs `slots` calls in
/// every process that maps it: larger tiles, fewer calls. Needs no GPU (CPU tests use it).
struct TileLayout {
  std::size_t tile_bytes = 0;          ///< bytes of one tile: a multiple of tile_granularity()
  std::size_t slots = 0;               ///< slots in the range
  std::vector<std::size_t> own_slots;  ///< own_slots[k - 1]: the one slot of tile k (k >= 1)

  /// Tiles of physical memory: tile 0 and one per entry of own_slots.
  std::size_t tiles() const noexcept { return own_slots.size() + 1; }
  /// The tile that fills \p slot.
  std::size_t tile_at(std::size_t slot) const noexcept {
    for (std::size_t k = 0; k < own_slots.size(); ++k)
      if (own_slots[k] == slot) return k + 1;
    return 0;
  }
  /// Bytes of the whole range.
  std::size_t bytes() const noexcept { return tile_bytes * slots; }
  /// The same tiles in the same places.
  bool operator==(const TileLayout& other) const noexcept {
    return tile_bytes == other.tile_bytes && slots == other.slots && own_slots == other.own_slots;
  }
};

/// Empty when the current device supports the driver's virtual memory management
/// (CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED); otherwise why not.
std::string tiling_unsupported();

/// The smallest tile: the driver's minimum granularity of device memory on the current device
/// (cuMemGetAllocationGranularity; 2 MiB on the GPUs seen so far).
/// \throws std::runtime_error when the driver does not answer
std::size_t tile_granularity();

/// A TiledRange on the current device, released (unmapped, freed) when it is destroyed. Its
/// tiles start with undefined contents: write them through tile(k) (writing anywhere in a slot
/// writes the tile that fills it, and so every slot that tile fills).
class TiledRange {
 public:
  /// Reserves layout.bytes() of address space, creates the tiles, maps each slot's tile and
  /// grants the device read and write access to the whole range.
  /// \throws std::invalid_argument for a layout in which tile 0 fills no slot, with a tile size
  ///         that is not a multiple of tile_granularity(), or with an own slot outside the range
  ///         or taken twice
  /// \throws std::runtime_error naming the driver call that failed, and its error
  explicit TiledRange(TileLayout layout);
  /// Waits for the device (no kernel may still read the range), then unmaps and frees it.
  ~TiledRange();
  TiledRange(const TiledRange&) = delete;
  TiledRange& operator=(const TiledRange&) = delete;

  /// The range's first byte (device memory).
  char* data() const noexcept { return base_; }
  /// Where the tiles lie.
  const TileLayout& layout() const noexcept { return layout_; }
  /// The first byte of tile \p k in the range: slot 0's or the first slot that tile 0 fills
  /// for k == 0, its own slot for the others.
  char* tile(std::size_t k) const noexcept;

  /// The range of this process that holds \p address (a checker's, for LabRunner), or null.
  static const TiledRange* containing(const void* address);

 private:
  void release() noexcept;

  TileLayout layout_;
  char* base_ = nullptr;
  std::size_t mapped_slots_ = 0;             // slots mapped so far (all once built)
  std::vector<unsigned long long> handles_;  // the tiles' physical memory
};

}  // namespace reduce::runner
