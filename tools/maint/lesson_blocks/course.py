"""Course: everything a generated block may read, and the template language's functions."""
import fnmatch
import json
import math
import pathlib
import re

from .references import lab_lengths, performance_bar
from .results import (LADDER_GPUS, SIDE_FOLDERS, GenerationError, load_runs, pow2, read_run,
                      read_toml, short_gpu)
from .text import sig, span


class Course:
    """Everything a generated block may read: the results, the rubric, the lab folders."""

    def __init__(self, root):
        self.root = pathlib.Path(root)
        self.results = self.root / "docs" / "results"
        self.rows, self.ceilings = load_runs(self.results)
        self._files = {}
        self._rubric = None
        self._json = {}
        self.labs = sorted(p.name for p in (self.root / "labs").glob("[0-9][0-9]_*") if p.is_dir())

    # -- names ---------------------------------------------------------------------------------

    def impl(self, name):
        name = str(name)
        if re.fullmatch(r"\d\d", name):
            found = [lab for lab in self.labs if lab.startswith(name + "_")]
            if not found:
                raise GenerationError(f"no lab folder labs/{name}_*")
            return found[0]
        return name

    @staticmethod
    def size(n):
        n = int(n)
        return 1 << n if n < 64 else n

    def gpu(self, short, names):
        for name in names:
            if short_gpu(name) == short or name == short:
                return name
        raise GenerationError(f"no GPU named {short!r} in docs/results (have: "
                              f"{', '.join(sorted(set(short_gpu(g) for g in names))) or 'none'})")

    # -- rows ----------------------------------------------------------------------------------

    def file(self, stem):
        """(gpu, ceiling, rows, context) of docs/results/<stem>.json or of one of its folders
        capstone/, library/ (lab 16's runs) and accuracy/ (lab 18's), read only where a template
        names them."""
        if stem not in self._files:
            for folder in (self.results, *(self.results / sub for sub in SIDE_FOLDERS)):
                path = folder / f"{stem}.json"
                if path.exists():
                    gpu, ceiling, rows = read_run(path)
                    context = json.loads(path.read_text()).get("context", {})
                    self._files[stem] = (gpu, ceiling, rows, context)
                    break
            else:
                raise GenerationError(f"no results file docs/results/[{'/|'.join(SIDE_FOLDERS)}/]"
                                      f"{stem}.json")
        return self._files[stem]

    def row(self, impl, gpu, n, op="sum", run=None):
        impl, n = self.impl(impl), self.size(n)
        if run:
            name, ceiling, rows, _ = self.file(run)
            if short_gpu(name or "") != gpu and name != gpu:
                raise GenerationError(f"{run}.json was measured on {name}, not {gpu}")
            row = rows.get((op, impl, n))
            if not row:
                raise GenerationError(f"no row {op}/{impl}/{pow2(n)} in {run}.json")
            return {"us": row[0], "gbps": row[1], "ceiling": ceiling, "file": run + ".json"}
        full = self.gpu(gpu, {g for (g, *_rest) in self.rows})
        row = self.rows.get((full, op, impl, n))
        if not row:
            raise GenerationError(f"no row {op}/{impl}/{pow2(n)} on {gpu} in docs/results/*.json")
        return row

    def raw_row(self, impl, gpu, n, op, run):
        """One row of a named run as measured, also when its results were wrong (a comparison
        that times an implementation known to miss the contract): us, gbps, pct of the run's
        probe, error (|result - exact| of a timed call) and wrong (whether any call was)."""
        if not run:
            raise GenerationError("raw() reads a named run: give run=")
        impl, n = self.impl(impl), self.size(n)
        name, ceiling, _rows, _context = self.file(run)
        if short_gpu(name or "") != gpu and name != gpu:
            raise GenerationError(f"{run}.json was measured on {name}, not {gpu}")
        for folder in (self.results, *(self.results / sub for sub in SIDE_FOLDERS)):
            path = folder / f"{run}.json"
            if path.exists():
                break
        for bench in json.loads(path.read_text()).get("benchmarks", []):
            if bench.get("name", "").split("/")[:3] == [op, impl, str(n)] and "median_us" in bench:
                return {"us": bench["median_us"], "gbps": bench["median_gbps"],
                        "pct": 100 * bench["median_gbps"] / ceiling,
                        "error": bench.get("abs_error", math.nan),
                        "wrong": bench.get("wrong_results", 0) > 0}
        raise GenerationError(f"no row {op}/{impl}/{pow2(n)} in {run}.json")

    def context(self, gpu, run=None):
        if run:
            return self.file(run)[3]
        for short, name in LADDER_GPUS:
            if short == gpu:
                return self.file(name[:-5])[3]
        raise GenerationError(f"no ladder run of {gpu}")

    # -- other sources -------------------------------------------------------------------------

    def rubric(self):
        if self._rubric is None:
            self._rubric = read_toml(self.root / "autograder" / "rubric.toml")
        return self._rubric

    def lab_rubric(self, lab):
        rubric = self.rubric()
        lab = self.impl(lab)
        entry = rubric.get("labs", {}).get(lab)
        if entry is None:
            raise GenerationError(f"autograder/rubric.toml has no [labs.{lab}]")
        points = dict(rubric.get("points", {}))
        points.update(entry.get("points", {}))
        threshold = float(entry["threshold"])
        floor_ratio = float(rubric.get("performance", {}).get("floor_ratio", 0.4))
        probe_threshold = float(entry.get("probe_threshold", threshold))
        # The size a lab is timed at: its own (lab 01's, beside its reference), else the
        # rubric's, which the probe and every other lab are timed at.
        size = rubric.get("performance", {}).get("size", "2^28")
        return {"threshold": threshold, "measured": entry.get("measured"),
                "size": entry.get("size", size), "rubric_size": size,
                "floor": float(entry.get("floor", floor_ratio * threshold)), "points": points,
                "library": entry.get("library", "none"), "measure": entry.get("measure", "probe"),
                "probe_threshold": probe_threshold,
                "probe_floor": float(entry.get("probe_floor", floor_ratio * probe_threshold)),
                "races_gate": bool(entry.get("races_gate_performance", False)),
                "credit": entry.get("credit", "slowest")}

    def data(self, name):
        if name not in self._json:
            path = self.results / name
            if not path.exists():
                raise GenerationError(f"no docs/results/{name}")
            self._json[name] = json.loads(path.read_text())
        return self._json[name]

    def lit(self, source, key):
        sources = self.data("literature.json").get("sources", {})
        if source not in sources or key not in sources[source].get("figures", {}):
            raise GenerationError(f"docs/results/literature.json has no figure {source}.{key}")
        return sources[source]["figures"][key]

    def perr(self, key):
        figures = self.data("product_error_cpu.json").get("figures", {})
        if key not in figures:
            raise GenerationError(f"docs/results/product_error_cpu.json has no figure {key}")
        return figures[key]

    # -- the template namespace ----------------------------------------------------------------

    def namespace(self):
        def us(impl, gpu, n=28, op="sum", run=None):
            return self.row(impl, gpu, n, op, run)["us"]

        def gbps(impl, gpu, n=28, op="sum", run=None):
            return self.row(impl, gpu, n, op, run)["gbps"]

        def frac(impl, gpu, n=28, op="sum", run=None):
            row = self.row(impl, gpu, n, op, run)
            return row["gbps"] / row["ceiling"]

        def pct(impl, gpu, n=28, op="sum", run=None):
            return 100 * frac(impl, gpu, n, op, run)

        def ratio(a, b, gpu, n=28, op="sum", run=None):
            return us(a, gpu, n, op, run) / us(b, gpu, n, op, run)

        def of_floor(impl, gpu, n=28, op="sum", run=None):
            return gbps(impl, gpu, n, op, run) / gbps("cub", gpu, n, "floor", run)

        def raw(impl, gpu, n=28, op="sum", run=None):
            return self.raw_row(impl, gpu, n, op, run)

        def bar(lab):
            """A lesson's performance bar in one sentence (performance_bar())."""
            return performance_bar(self, lab)

        def lengths(lab):
            """The segment lengths a lab is graded at (lab_lengths()): [] without families."""
            return lab_lengths(self, lab)

        safe = {f.__name__: f for f in (min, max, abs, round, len, sum, sorted, str, int, float,
                                        list, range, zip, any, all, enumerate)}
        return dict(safe, us=us, gbps=gbps, frac=frac, pct=pct, ratio=ratio, of_floor=of_floor,
                    **self.run_functions(), rubric=self.lab_rubric,
                    lit=self.lit, perr=self.perr, pow2=pow2, span=span, sig=sig, raw=raw, bar=bar,
                    lengths=lengths)

    def run_functions(self):
        """The template functions that read a run's context and files rather than its rows:
        context, ceiling, theoretical, sms, runs, probe, tick, cap and wave."""

        def context(gpu, run=None):
            return self.context(gpu, run)

        def ceiling(gpu, run=None):
            if run:
                return self.file(run)[1]
            return float(self.context(gpu)["ceiling_gbps"])

        def theoretical(gpu, run=None):
            return float(self.context(gpu, run)["theoretical_gbps"])

        def sms(gpu, run=None):
            return int(self.context(gpu, run)["sm_count"])

        def runs(pattern):
            stems = [p.stem for p in sorted(self.results.rglob("*.json"))
                     if fnmatch.fnmatch(p.stem, pattern)]
            if not stems:
                raise GenerationError(f"no results file matches {pattern}")
            return stems

        def probe(gpu, layout, run=None):
            context = self.context(gpu, run)
            if f"probe {layout}" not in context:
                raise GenerationError(f"no probe layout '{layout}' in the context of "
                                      f"{run or gpu + ' ladder'} run")
            return float(context[f"probe {layout}"])

        def tick(run):
            """The event timer's step in a run: the smallest gap between two medians, in us."""
            times = sorted({round(us, 6) for us, _ in self.file(run)[2].values()})
            return min(b - a for a, b in zip(times, times[1:]) if b - a > 1e-6)

        def cap(kind, gpu, run=None):
            """The stem of a capstone results file: cap('auto', 'H200') -> 'capstone_auto_h200'."""
            return f"capstone_{kind}_{gpu.lower()}" + (f"_run{run}" if run else "")

        def wave(config, n, column):
            """A cell of docs/results/capstone/waves_h200_run2.txt: config 'atomic:2', n 28,
            column 'cub', 'fast' or 'det' (median us)."""
            path = self.results / "capstone" / "waves_h200_run2.txt"
            if not path.exists():
                raise GenerationError("no docs/results/capstone/waves_h200_run2.txt")
            for line in path.read_text().splitlines():
                cells = line.split()
                if len(cells) >= 6 and cells[0] == config and cells[1] == f"2^{self.size(n).bit_length() - 1}":
                    return float({"cub": cells[2], "fast": cells[3], "det": cells[5]}[column])
            raise GenerationError(f"waves_h200_run2.txt has no row {config} 2^{n}")

        return dict(ceiling=ceiling, context=context, theoretical=theoretical, sms=sms, runs=runs,
                    probe=probe, tick=tick, cap=cap, wave=wave)
