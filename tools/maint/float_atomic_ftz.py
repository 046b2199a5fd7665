#!/usr/bin/env python3
"""Shows what a float atomicAdd compiles to: the evidence behind lessons 01 and 15's paragraph on
subnormals, written to docs/results/atomics/float_atomic_ftz.txt.

  tools/maint/float_atomic_ftz.py [--out FILE]

Compiles, for sm_75, sm_80 and sm_90, with the course's flags (no -ftz, no --use_fast_math):
  - a two-kernel probe: atomicAdd(float*, float) with its result unused (compiled to a RED) and
    used (an ATOM);
  - the reference of lab 01 (solutions/01_atomic_naive/sum.cu: one atomicAdd per element);
  - the reference of lab 15's fast mode (solutions/15_capstone/sum.cu: one atomicAdd per block);
and prints, for each, the PTX instruction of every float atomic add and the SASS instruction
(cuobjdump -sass) it became. The PTX says `red.global.add.f32`, with no .ftz: PTX has no
non-flushing f32 atomic add ("atom.add.f32 rounds to nearest even and flushes subnormal inputs
and results to sign-preserving zero", PTX ISA, atom); the SASS names it, `...ADD.F32.FTZ.RN`.
No GPU needed.

Needs nvcc and cuobjdump with nvdisasm (the CUDA toolkit's, or PyPI's nvidia-cuda-cuobjdump and
nvidia-cuda-nvdisasm: put their bin folder on PATH). Exits 1 when a tool is missing or an
expected atomic is not found.
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
OUT = ROOT / "docs" / "results" / "atomics" / "float_atomic_ftz.txt"
ARCHES = ("sm_75", "sm_80", "sm_90")
PROBE = """\
// atomicAdd(float*, float) on global memory: result unused (RED) and used (ATOM).
__global__ void red_probe(const float* in, float* out) { atomicAdd(out, in[threadIdx.x]); }
__global__ void atom_probe(const float* in, float* out, float* old) {
  old[threadIdx.x] = atomicAdd(out, in[threadIdx.x]);
}
// The same on shared memory.
__global__ void shared_probe(const float* in, float* out) {
  __shared__ float total;
  if (threadIdx.x == 0) total = 0.0f;
  __syncthreads();
  atomicAdd(&total, in[threadIdx.x]);
  __syncthreads();
  if (threadIdx.x == 0) *out = total;
}
"""
SOURCES = (("probe.cu", None), ("lab 01 reference", "solutions/01_atomic_naive/sum.cu"),
           ("lab 15 reference, fast mode", "solutions/15_capstone/sum.cu"))
PTX_ATOMIC = re.compile(r"\b(?:red|atom)\.[\w.]*add\.f32\b[^;]*;")
SASS_ATOMIC = re.compile(r"\b(?:RED|REDG|ATOM|ATOMG)\.[\w.]*ADD\.F32[\w.]*")
# A shared-memory float atomicAdd: a compare-and-swap loop around an ordinary FADD.
SASS_SHARED = re.compile(r"\bATOMS\.CAST[\w.]*|\bFADD[\w.]*")


def tool(name):
    """The path of a CUDA tool: PATH, then $CUDA_HOME/bin and /usr/local/cuda/bin."""
    found = shutil.which(name)
    for folder in (os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"):
        if not found and folder and (pathlib.Path(folder) / "bin" / name).exists():
            found = str(pathlib.Path(folder) / "bin" / name)
    if not found:
        sys.exit(f"float_atomic_ftz: no {name} on PATH (CUDA toolkit, or PyPI's "
                 f"nvidia-cuda-{'nvcc' if name == 'nvcc' else name} with its bin folder on PATH)")
    return found


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"float_atomic_ftz: {' '.join(command)} failed:\n{result.stderr}")
    return result.stdout


def first_line(text):
    return next((line for line in text.splitlines() if line.strip()), "").strip()


def version_line(text):
    """The line of `tool --version` that names the release: "Cuda compilation tools, release
    13.0, V13.0.88"."""
    return next((line.strip() for line in text.splitlines() if "release" in line),
                first_line(text))


def kernels_of(sass):
    """[(kernel, [float atomic instruction])] of a cuobjdump -sass listing; for a kernel named
    shared_probe, its compare-and-swap and float additions."""
    found, kernel = [], None
    for line in sass.splitlines():
        match = re.search(r"Function : (\S+)", line)
        if match:
            kernel = match.group(1)
            found.append((kernel, []))
            continue
        pattern = SASS_SHARED if kernel and "shared_probe" in kernel else SASS_ATOMIC
        atomic = pattern.search(line)
        if atomic and found:
            found[-1][1].append(atomic.group(0))
    return [(k, atomics) for k, atomics in found if atomics]


def compile_one(nvcc, cuobjdump, source, arch, folder):
    flags = ["-std=c++17", f"-arch={arch}", "-I", str(ROOT / "common" / "include")]
    ptx = run([nvcc, *flags, "-ptx", "-o", "-", str(source)])
    cubin = folder / f"{source.stem}_{arch}.cubin"
    run([nvcc, *flags, "-cubin", "-o", str(cubin), str(source)])
    sass = run([cuobjdump, "-sass", str(cubin)])
    return sorted(set(m.group(0).split()[0] for m in PTX_ATOMIC.finditer(ptx))), kernels_of(sass)


def demangled(name, filt):
    """A kernel's C++ name (c++filt), without the hash of an anonymous namespace's mangled name,
    which changes with the file's path."""
    if filt:
        name = first_line(run([filt, name])) or name
    return re.sub(r"_GLOBAL__N__\w+", "(anonymous namespace)", name)


def report(nvcc, cuobjdump):
    filt = shutil.which("cu++filt") or shutil.which("c++filt")
    lines = ["Float atomicAdd, as compiled with the course's flags (no -ftz, no --use_fast_math).",
             "Generated by tools/maint/float_atomic_ftz.py; no GPU involved.",
             f"nvcc:      {version_line(run([nvcc, '--version']))}",
             f"cuobjdump: {version_line(run([cuobjdump, '--version']))}", ""]
    missing, shared = [], []
    with tempfile.TemporaryDirectory() as scratch:
        folder = pathlib.Path(scratch)
        (folder / "probe.cu").write_text(PROBE)
        lines += ["probe.cu:", *("  " + line for line in PROBE.splitlines()), ""]
        for label, path in SOURCES:
            source = folder / "probe.cu" if path is None else ROOT / path
            lines.append(f"== {label} ({'probe.cu' if path is None else path})")
            for arch in ARCHES:
                ptx, kernels = compile_one(nvcc, cuobjdump, source, arch, folder)
                lines.append(f"  {arch}  PTX:  {', '.join(ptx) or '(no f32 atomic add)'}")
                for kernel, atomics in kernels:
                    name = demangled(kernel, filt)
                    lines.append(f"  {arch}  SASS: {', '.join(sorted(set(atomics)))}   in {name}")
                    if "shared_probe" in kernel:
                        shared.extend(atomics)
                if not kernels or not ptx:
                    missing.append(f"{label} {arch}")
            lines.append("")
    global_adds = [line for line in lines if " SASS: " in line and "shared_probe" not in line]
    flushing = all(".FTZ" in line for line in global_adds)
    lines.append("Every float atomic add on global memory above is " + (
        "FTZ: it flushes subnormal operands and results to zero." if flushing else
        "NOT all FTZ: read the lines above."))
    if shared:
        lines.append("On shared memory: " + (
            "a compare-and-swap loop (ATOMS.CAST) around an FADD without .FTZ, which keeps "
            "subnormals." if not any(".FTZ" in a for a in shared) else
            "the FADD of the loop is FTZ too."))
    return "\n".join(lines) + "\n", missing


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(OUT), help=f"output file (default: {OUT})")
    args = parser.parse_args()
    text, missing = report(tool("nvcc"), tool("cuobjdump"))
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text, end="")
    if missing:
        sys.exit(f"float_atomic_ftz: no float atomic add found in: {', '.join(missing)}")


if __name__ == "__main__":
    main()
