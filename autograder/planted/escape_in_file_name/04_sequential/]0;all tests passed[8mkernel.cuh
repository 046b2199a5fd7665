// The block size of rung 4, in a header whose name is terminal escapes (a window title, concealed text).
#pragma once

namespace reduce {
inline constexpr unsigned kBlockThreads = 256;
}  // namespace reduce
