#!/usr/bin/env python3
"""Prints the capstone's strategies beside CUB from reduce_bench JSON files.

usage: tools/capstone_table.py capstone_<strategy>[_<gpu>].json...  (one GPU's files)
Each file is one run of reduce_bench (capstone_<config>.json) with REDUCE_CAPSTONE_STRATEGY and
REDUCE_CAPSTONE_WAVES forced, or "auto" for the defaults;
columns: median time of each strategy, CUB's (from the auto run) and the ratio to CUB.
"""
import json
import pathlib
import re
import sys


def main():
    runs = {}
    gpu = ""
    for name in sys.argv[1:]:
        path = pathlib.Path(name)
        # capstone_<config>[_<gpu>].json, e.g. capstone_atomic-w2_h100.json
        strategy = re.sub(r"_h\d00(_run\d+)?$", "", path.stem.split("_", 1)[1])
        data = json.loads(path.read_text())
        gpu = data["context"].get("gpu", gpu)
        for b in data["benchmarks"]:
            op, impl, n = b["name"].split("/")[:3]
            if "median_us" in b:
                runs.setdefault(int(n), {})[(strategy, impl)] = b["median_us"]
    order = sorted({s for row in runs.values() for (s, _) in row}, key=lambda s: (s != "auto", s))
    print(f"capstone on {gpu}: median us (ratio to CUB in the same run)")
    print(f"{'n':>6} {'CUB':>8} " + " ".join(f"{s:>16}" for s in order) + f" {'auto determ.':>16}")
    for n in sorted(runs):
        row = runs[n]
        cub = row.get(("auto", "cub")) or next((t for (s, i), t in row.items() if i == "cub"), None)
        cells = []
        for s in order + ["auto_det"]:
            strategy, impl = ("auto", "15_capstone_sum_deterministic") if s == "auto_det" else (s, "15_capstone")
            t = row.get((strategy, impl))
            own_cub = row.get((strategy, "cub"), cub)
            cells.append(f"{t:8.1f} ({t / own_cub:5.3f})" if t and own_cub else f"{'-':>16}")
        print(f"2^{n.bit_length() - 1:<4} {cub or 0:8.1f} " + " ".join(cells))


if __name__ == "__main__":
    main()
