#!/usr/bin/env python3
"""Holds all but --leave-gib GiB of a GPU's memory until it is killed, so that a grading beside it
runs as on a GPU that small (tools/maint/gpu_check.sh small). Through the driver's own library
(libcuda, with ctypes): nothing to install.

  tools/maint/hold_gpu_memory.py --leave-gib 15 [--device 0]

Prints "holding X GiB, leaving Y GiB free" once it holds the memory, then sleeps.
Exit status: 0 killed by SIGTERM or SIGINT, 1 no driver or the driver refused, 2 usage.
"""
import argparse
import ctypes
import signal
import sys
import time


def check(status, what):
    """Stops with the driver's error code unless \\p status is CUDA_SUCCESS."""
    if status != 0:
        print(f"hold_gpu_memory: {what} failed (CUresult {status})", file=sys.stderr)
        sys.exit(1)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--leave-gib", type=float, required=True)
    p.add_argument("--device", type=int, default=0)
    args = p.parse_args()
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        print("hold_gpu_memory: no NVIDIA driver here (libcuda.so.1)", file=sys.stderr)
        return 1
    check(cuda.cuInit(0), "cuInit")
    device, context = ctypes.c_int(), ctypes.c_void_p()
    check(cuda.cuDeviceGet(ctypes.byref(device), args.device), "cuDeviceGet")
    check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
    check(cuda.cuCtxSetCurrent(context), "cuCtxSetCurrent")
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    check(cuda.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)), "cuMemGetInfo")
    gib = 1 << 30
    hold = free.value - int(args.leave_gib * gib)
    held, chunk = [], gib
    while hold > 0:  # in 1 GiB pieces: one allocation of 120 GiB may fail where pieces do not
        pointer = ctypes.c_uint64()
        size = min(chunk, hold)
        check(cuda.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(size)), "cuMemAlloc")
        held.append(pointer)
        hold -= size
    check(cuda.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)), "cuMemGetInfo")
    print(f"holding {len(held)} GiB, leaving {free.value / gib:.1f} GiB free of "
          f"{total.value / gib:.1f}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
