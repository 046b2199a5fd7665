#!/usr/bin/env python3
"""Prints the include folder of the newest CCCL headers that PyPI's cuda-cccl package installed
(the one holding cub/, thrust/, cuda/ and nv/), or nothing and exit status 1 where there is none
or where its CUB lacks the segment_size overload of DeviceSegmentedReduce (CUB 3.4 and later).

autograder/bench/CMakeLists.txt asks it when REDUCE_NEWEST_CCCL_INCLUDE is not given. The package
names the folder itself (cuda.cccl.get_include_paths().cub), but importing cuda.cccl needs
cuda.bindings and cuda.pathfinder, which a machine with the wheel alone may lack: the folder is
first looked for among the installed package's files (cuda/cccl/headers/include), then through
that import.
"""
import pathlib
import sys

PROBE = pathlib.Path("cub/device/device_segmented_reduce.cuh")


def usable(folder):
    """Whether \\p folder holds CCCL headers with the segment_size overload."""
    try:
        return folder is not None and "int segment_size" in (pathlib.Path(folder) / PROBE).read_text()
    except OSError:
        return False


def from_files():
    """The folder among the files the cuda-cccl distribution installed, without importing it."""
    try:
        from importlib import metadata
        files = metadata.files("cuda-cccl") or []
    except Exception:  # not installed, or no record of its files
        return None
    for f in files:
        if str(f).replace("\\", "/").endswith("headers/include/" + PROBE.as_posix()):
            return pathlib.Path(f.locate()).resolve().parents[len(PROBE.parts) - 1]
    return None


def from_import():
    """The folder as the package names it (needs its runtime dependencies)."""
    try:
        import cuda.cccl
        return pathlib.Path(cuda.cccl.get_include_paths().cub)
    except Exception:
        return None


def main():
    for find in (from_files, from_import):
        folder = find()
        if usable(folder):
            print(folder)
            return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
