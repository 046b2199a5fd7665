#!/usr/bin/env python3
"""Checks that the benchmark's two CUBs cannot stand in for each other at link time.

usage: check_cub_namespaces.py NEWEST_OBJECT COURSE_OBJECT...

NEWEST_OBJECT is cub_fixed_rows.cu's object file, built against the newest CCCL headers;
COURSE_OBJECTs are the benchmark's other object files, built against CUDA's own CCCL. Every symbol
that two of them define with external linkage is one that the linker keeps once for both (inline
functions, template instances, inline variables): none may belong to CUB, Thrust or libcu++.
CUB and Thrust wrap their namespaces by version (cub::_V_300600_SM_900 beside
cub::CUB_300001_SM_900), and CMakeLists.txt gives the newest libcu++ an ABI namespace of its own
(cuda::std::__4_cccl_newest beside __4). What both may share comes from one header or library of
the toolkit: NVTX's functions and the C++ runtime's.
Exit status 0 when nothing else is shared, 1 when something is, 77 without nm.
"""
import re
import shutil
import subprocess
import sys

# Defined symbols the linker merges or resolves across objects: global (upper case but U) and
# weak or unique (u, v, w are weak or unique only when defined, which --defined-only ensures).
EXTERNAL = re.compile(r"^[0-9a-fA-F]*\s+([A-TV-Zuvw])\s+(.+)$")
# Shared by both on purpose: one header or library of the toolkit or of the C++ runtime.
SHARED_OK = re.compile(r"^(nvtx|InitializeInjectionNvtx|DW\.ref\.__gxx_personality_v0$|std::)")
OURS = re.compile(r"^(cub|thrust|cuda)::")


def external_symbols(path):
    """{demangled name} of what \\p path defines with external linkage."""
    out = subprocess.run(["nm", "-C", "--defined-only", path], check=True, capture_output=True,
                         text=True).stdout
    return {m.group(2) for m in map(EXTERNAL.match, out.splitlines()) if m}


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    if shutil.which("nm") is None:
        print("no nm: cannot list the object files' symbols")
        return 77
    newest = external_symbols(argv[1])
    namespaces = sorted({m.group(0) for s in newest
                         for m in [re.match(r"(cub|thrust)::\w+|cuda::std::__\w+", s)] if m})
    print(f"{argv[1]}: {len(newest)} external symbols, namespaces {', '.join(namespaces)}")
    if not any(n.startswith("cub::_V_") or n.startswith("cub::CUB_") for n in namespaces):
        print("no versioned cub:: namespace in the newest CUB's object")
        return 1
    if not any(n.startswith("cuda::std::__4_") for n in namespaces):
        print("the newest libcu++ is not in an ABI namespace of its own (_LIBCUDACXX_ABI_NAMESPACE)")
        return 1
    failed = False
    for path in argv[2:]:
        course = external_symbols(path)
        shared = sorted(newest & course)
        wrong = [s for s in shared if not SHARED_OK.match(s)]
        print(f"{path}: {len(course)} external symbols, {len(shared)} shared with the newest "
              f"CUB's object ({len(shared) - len(wrong)} of them from the toolkit or the C++ "
              "runtime)")
        for s in wrong:
            print(f"  shared: {s}{'  (CCCL)' if OURS.match(s) else ''}")
        failed |= bool(wrong)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
