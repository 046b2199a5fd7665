// Read-only folders for the lab runner where bubblewrap is not installed: Linux namespaces set
// up by the runner itself, before it loads the lab.
#pragma once

#include <string>
#include <vector>

namespace reduce::remote {

/// Makes every folder of \p paths read-only for this process and all it starts, and locks that
/// state so that nothing this process does afterwards can undo it:
/// 1. a new user namespace and a private mount namespace (unprivileged: no root needed);
/// 2. each path bound onto itself and remounted read-only, then each of \p writable (folders
///    inside them that must stay writable, e.g. a sanitizer's log folder) bound read-write;
/// 3. a second user and mount namespace, in which the kernel locks the mounts made in step 2
///    (they can no longer be unmounted or made writable);
/// 4. no new privileges.
/// Returns an empty string on success, else why it failed (the process is then unchanged only
/// when step 1 failed; the caller should exit on any failure).
std::string confine_read_only(const std::vector<std::string>& paths,
                              const std::vector<std::string>& writable = {});

}  // namespace reduce::remote
