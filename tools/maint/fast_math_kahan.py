#!/usr/bin/env python3
"""Shows what nvcc's --use_fast_math does to Kahan's summation, and what it does change: the
evidence behind lessons 12 and 18, written to docs/results/accuracy/fast_math_kahan.txt.

  tools/maint/fast_math_kahan.py [--out FILE]

Compiles, with and without --use_fast_math, for sm_80 and sm_90:
  - a probe: Kahan's loop (four additions and subtractions per element), and one division, one
    square root and one expf (what fast math is documented to change);
  - the references of lab 12 (solutions/12_mean/mean.cu) and lab 18
    (solutions/18_accuracy/sum_compensated.cu: TwoSum and Neumaier's chains);
and prints the probe's float instructions in order (PTX, and SASS for sm_90), and for each
reference whether every PTX line that differs differs only by an added `.ftz`. Then the same Kahan
loop through the host compiler (g++ -O2, with and without -ffast-math), whose fast math does
reassociate. No GPU needed.

Needs nvcc and, for the SASS, cuobjdump with nvdisasm (the CUDA toolkit's, or PyPI's
nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm with their bin folder on PATH); g++ for the host
part (skipped without it).
"""
import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

from float_atomic_ftz import first_line, run, tool, version_line

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
OUT = ROOT / "docs" / "results" / "accuracy" / "fast_math_kahan.txt"
ARCHES = ("sm_80", "sm_90")
FAST = "--use_fast_math"
PROBE = """\
// Kahan's compensated sum, one chain per thread.
__global__ void kahan_probe(const float* in, unsigned long n, float* out) {
  float sum = 0.0f, c = 0.0f;  // c: what the last addition lost, negated
  for (unsigned long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    const float y = in[i] - c;
    const float t = sum + y;
    c = (t - sum) - y;
    sum = t;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
// What fast math is documented to change: division, square root, the math library.
__global__ void changes_probe(const float* in, float* out) {
  const float x = in[threadIdx.x], y = in[threadIdx.x + 32];
  out[threadIdx.x] = x / y + sqrtf(x) + expf(y);
}
"""
HOST_KAHAN = """\
float kahan(const float* in, unsigned long n) {
  float sum = 0.0f, c = 0.0f;
  for (unsigned long i = 0; i < n; ++i) {
    const float y = in[i] - c;
    const float t = sum + y;
    c = (t - sum) - y;
    sum = t;
  }
  return sum;
}
"""
REFERENCES = ("solutions/12_mean/mean.cu", "solutions/18_accuracy/sum_compensated.cu")
PTX_FLOAT = re.compile(r"^\s*(?:@%p\d+\s+)?((?:add|sub|mul|fma|div|sqrt|rcp|ex2|lg2|neg|abs)"
                       r"\.[\w.]*f(?:32|64))\b")
SASS_FLOAT = re.compile(r"\b(FADD|FMUL|FFMA|MUFU)(\.[\w.]+)?\b")
HOST_FLOAT = re.compile(r"^\s+(v?(?:add|sub|mul)s[sd])\b")


def ptx_functions(ptx):
    """{function name: [its float instructions, in order]} of a PTX listing."""
    functions, name = {}, None
    for line in ptx.splitlines():
        match = re.search(r"\.entry\s+(\w+)", line)
        if match:
            name = match.group(1)
            functions[name] = []
            continue
        instruction = PTX_FLOAT.match(line)
        if instruction and name:
            functions[name].append(instruction.group(1))
    return functions


def sass_functions(sass):
    """{function name: [its float instructions, in order]} of a cuobjdump -sass listing."""
    functions, name = {}, None
    for line in sass.splitlines():
        match = re.search(r"Function : (\S+)", line)
        if match:
            name = match.group(1)
            functions[name] = []
            continue
        instruction = SASS_FLOAT.search(line)
        if instruction and name:
            functions[name].append(instruction.group(0))
    return functions


def probe_name(mangled, functions):
    return next((f for f in functions if mangled in f), None)


def compile_ptx(nvcc, source, arch, fast):
    flags = ["-std=c++17", f"-arch={arch}", "-I", str(ROOT / "common" / "include")]
    return run([nvcc, *flags, *([FAST] if fast else []), "-ptx", "-o", "-", str(source)])


def only_ftz_added(plain, fast):
    """(lines that differ, whether each differs only by an added .ftz) of two PTX listings of the
    same source; None when the listings do not have the same number of lines."""
    a = [line for line in plain.splitlines() if not line.startswith("//")]
    b = [line for line in fast.splitlines() if not line.startswith("//")]
    if len(a) != len(b):
        return None
    differing = [(x, y) for x, y in zip(a, b) if x != y]
    return len(differing), all(y.replace(".ftz", "") == x for x, y in differing)


def probe_section(nvcc, cuobjdump, source, folder):
    lines = []
    for arch in ARCHES:
        plain, fast = (ptx_functions(compile_ptx(nvcc, source, arch, f)) for f in (False, True))
        for kernel in ("kahan_probe", "changes_probe"):
            name = probe_name(kernel, plain)
            lines.append(f"  {arch}  PTX  {kernel}")
            lines.append(f"    default:          {', '.join(plain[name])}")
            lines.append(f"    {FAST}: {', '.join(fast[name])}")
    if cuobjdump:
        for fast in (False, True):
            cubin = folder / f"probe_{int(fast)}.cubin"
            run([nvcc, "-std=c++17", "-arch=sm_90", *([FAST] if fast else []), "-cubin", "-o",
                 str(cubin), str(source)])
            functions = sass_functions(run([cuobjdump, "-sass", str(cubin)]))
            name = probe_name("kahan_probe", functions)
            label = FAST if fast else "default"
            lines.append(f"  sm_90  SASS kahan_probe, {label}: {', '.join(functions[name])}")
    return lines


def reference_section(nvcc):
    lines = []
    for path in REFERENCES:
        for arch in ARCHES:
            plain, fast = (compile_ptx(nvcc, ROOT / path, arch, f) for f in (False, True))
            compared = only_ftz_added(plain, fast)
            if compared is None:
                verdict = "the listings differ in length: read them"
            else:
                count, ftz_only = compared
                verdict = (f"{count} PTX lines differ, " +
                           ("each only by an added .ftz" if ftz_only else "NOT all by .ftz alone"))
            ops_plain = sum(len(v) for v in ptx_functions(plain).values())
            ops_fast = sum(len(v) for v in ptx_functions(fast).values())
            lines.append(f"  {path} {arch}: {verdict}; float instructions {ops_plain} "
                         f"default, {ops_fast} with {FAST}")
    return lines


def host_section(folder):
    gxx = shutil.which("g++")
    if not gxx:
        return ["  (no g++: skipped)"]
    source = folder / "kahan_host.cpp"
    source.write_text(HOST_KAHAN)
    lines = [f"  {first_line(run([gxx, '--version']))}"]
    for flags in (["-O2"], ["-O2", "-ffast-math"]):
        assembly = run([gxx, *flags, "-S", "-o", "-", str(source)])
        ops = [m.group(1) for m in map(HOST_FLOAT.match, assembly.splitlines()) if m]
        lines.append(f"    g++ {' '.join(flags)}: {', '.join(ops)}")
    return lines


def report(nvcc, cuobjdump):
    lines = [f"Kahan's summation and nvcc's {FAST}. Generated by tools/maint/fast_math_kahan.py; "
             "no GPU involved.",
             f"nvcc:      {version_line(run([nvcc, '--version']))}",
             f"cuobjdump: {version_line(run([cuobjdump, '--version'])) if cuobjdump else '-'}",
             "", "probe.cu:", *("  " + line for line in PROBE.splitlines()), ""]
    with tempfile.TemporaryDirectory() as scratch:
        folder = pathlib.Path(scratch)
        source = folder / "probe.cu"
        source.write_text(PROBE)
        lines += ["== the probe's float instructions, in order", *probe_section(
            nvcc, cuobjdump, source, folder), ""]
        lines += [f"== the references, PTX with and without {FAST}", *reference_section(nvcc), ""]
        lines += ["== the same Kahan loop on the host (x86-64 scalar float instructions)",
                  *host_section(folder), ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(OUT), help=f"output file (default: {OUT})")
    args = parser.parse_args()
    try:
        cuobjdump = tool("cuobjdump")
    except SystemExit as missing:  # the SASS lines are left out, the PTX says enough
        print(missing, file=sys.stderr)
        cuobjdump = None
    text = report(tool("nvcc"), cuobjdump)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
