// The block size of rung 4, in a header whose name is C1 controls and a right-to-left override.
#pragma once

namespace reduce {
inline constexpr unsigned kBlockThreads = 256;
}  // namespace reduce
