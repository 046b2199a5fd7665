#!/usr/bin/env python3
"""Measures on the CPU the rounding error of a float product of many factors near 1, in three
orders, and writes docs/results/product_error_cpu.json (lesson 11 quotes it).

  python3 tools/product_error.py [--n 2^24] [--seeds 5] [--threads 270336]

For each seed: n factors uniform in [1 - 2^-9, 1 + 2^-9] (the distribution of lab 11's realistic
tests), rounded to float; the exact product (in double, pairwise: its own error is below 1e-12);
and the float product, every multiplication rounded to float, in three orders:
  serial  one running product, left to right (a single accumulator);
  tree    a balanced pairwise tree (neighbours, then neighbours of the results...);
  chains  the order of the lab's kernel: each of T threads multiplies the elements k, k+T, k+2T...
          into one chain, then a pairwise tree over the T chain products (T = an H200's 132 SMs x
          2048 threads at full occupancy).
The relative errors |float - exact| / |exact| go into the file, with the probabilistic bound
lambda * sqrt(n) * u (lambda = 8, u = 2^-24) that lesson 11 compares them with, and the mean
relative rounding error of the tree's first level (pairs of factors near 1), in units of u: a
bias that millions of multiplications add up, where independent errors would cancel.

Needs numpy (Debian/Ubuntu: python3-numpy). Float multiplications in numpy are IEEE single
precision, rounded to nearest, so the three orders are what a GPU computes in the same order.
"""
import argparse
import json
import math
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "results" / "product_error_cpu.json"


def size(text):
    return 1 << int(text[2:]) if text.startswith("2^") else int(text)


def exact_product(x64, np):
    while len(x64) > 1:
        if len(x64) % 2:
            x64 = np.append(x64, 1.0)
        x64 = x64[0::2] * x64[1::2]
    return float(x64[0])


def tree_product(x32, np):
    while len(x32) > 1:
        if len(x32) % 2:
            x32 = np.append(x32, np.float32(1))
        x32 = (x32[0::2] * x32[1::2]).astype(np.float32)
    return float(x32[0])


def serial_product(x32, np):
    p = np.float32(1)
    for chunk in np.array_split(x32, 64):
        for value in chunk.tolist():  # Python floats hold the float values exactly
            p = np.float32(p * np.float32(value))
    return float(p)


def chain_product(x32, threads, np):
    n = len(x32)
    rows = -(-n // threads)
    padded = np.ones(rows * threads, dtype=np.float32)
    padded[:n] = x32
    grid = padded.reshape(rows, threads)  # row m holds the elements m*T .. m*T + T - 1
    acc = np.ones(threads, dtype=np.float32)
    for row in grid:  # each thread's chain, in order, all threads at once
        acc = (acc * row).astype(np.float32)
    return tree_product(acc, np)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="2^24", help="factors per product (default 2^24)")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=132 * 2048)
    parser.add_argument("-o", "--output", default=str(OUT))
    args = parser.parse_args()
    try:
        import numpy as np
    except ImportError:
        sys.exit("product_error.py needs numpy: sudo apt-get install python3-numpy")
    n = size(args.n)
    u = 2.0 ** -24
    runs = []
    for seed in range(1, args.seeds + 1):
        rng = np.random.default_rng(seed)
        x32 = rng.uniform(1 - 2.0 ** -9, 1 + 2.0 ** -9, n).astype(np.float32)
        exact = exact_product(x32.astype(np.float64), np)
        run = {"seed": seed, "exact": exact}
        pairs = x32[0::2].astype(np.float64) * x32[1::2].astype(np.float64)  # exact in double
        rounded = (x32[0::2] * x32[1::2]).astype(np.float64)
        run["first_level_bias_u"] = float(np.mean((rounded - pairs) / pairs) / u)
        for name, value in (("serial", serial_product(x32, np)), ("tree", tree_product(x32, np)),
                            ("chains", chain_product(x32, args.threads, np))):
            run[name] = abs(value - exact) / abs(exact)
        print(f"seed {seed}: product {exact:.6g}; relative error serial {run['serial']:.2e}, "
              f"tree {run['tree']:.2e}, chains {run['chains']:.2e}")
        runs.append(run)
    figures = {"n": n, "threads": args.threads, "seeds": args.seeds,
               "bound_probabilistic": 8 * math.sqrt(n) * u, "random_walk": math.sqrt(n) * u}
    for name in ("serial", "tree", "chains"):
        figures[f"{name}_min"] = min(r[name] for r in runs)
        figures[f"{name}_max"] = max(r[name] for r in runs)
    figures["exact_min"] = min(r["exact"] for r in runs)
    figures["exact_max"] = max(r["exact"] for r in runs)
    figures["first_level_bias_u_min"] = min(r["first_level_bias_u"] for r in runs)
    figures["first_level_bias_u_max"] = max(r["first_level_bias_u"] for r in runs)
    figures["all_min"] = min(figures[f"{k}_min"] for k in ("serial", "tree", "chains"))
    figures["all_max"] = max(figures[f"{k}_max"] for k in ("serial", "tree", "chains"))
    data = {"about": "Relative error of float products of n factors uniform in 1 +- 2^-9, on the "
                     "CPU, in three orders (tools/product_error.py; lesson 11).",
            "command": "python3 tools/product_error.py --n 2^%d --seeds %d --threads %d"
                       % (n.bit_length() - 1, args.seeds, args.threads),
            "figures": figures, "runs": runs}
    pathlib.Path(args.output).write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
