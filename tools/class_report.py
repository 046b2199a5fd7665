#!/usr/bin/env python3
"""Writes the class report of a `reduce-grade batch` run: one static HTML page and its charts.

usage: tools/class_report.py BATCH_OUT [--out DIR] [--near POINTS]
       (or `reduce-grade report BATCH_OUT`, which finds a python3 with matplotlib and runs this)

BATCH_OUT is the --out folder of `reduce-grade batch` (or of `reduce-grade merge`): it holds
gradebook.csv and one <student>/ folder per submission with report.json (or error.txt for a
submission that could not be graded). The report goes to DIR (default BATCH_OUT/class-report):
index.html and PNG charts made by matplotlib next to it. The page needs no server and no network:
open DIR/index.html in a browser; it links to each student's files by relative paths.

On the page:
  - a score histogram per lab, and one of the totals with the grade boundaries;
  - each lab's bandwidth as a fraction of its measure (the ceiling, or the course's reference or
    CUB timed beside it), one dot per student, against the lab's threshold and floor (from
    report.json's labs[].performance);
  - the most frequent failing tests with their messages, and the most frequent lab messages;
  - the submissions to look at by hand: not graded, report unreadable, sanitizer findings,
    physically impossible speed, timeouts and output floods, forbidden library use, and totals
    just below a grade boundary (see near_boundary());
  - a table of every student with links to their report.json, summary.txt, logs...

A report.json that cannot be parsed is skipped and listed on the page. Exit codes: 0 written,
2 bad input (not a batch output, an empty batch) or matplotlib missing.
"""
import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from class_report_data import NEAR_DEFAULT, BatchError, lab_summaries, load_batch  # noqa: E402
from class_report_data import (  # noqa: E402,F401  (the names its tests read, from here)
    Batch, Submission, failing_tests, frequent_messages, near_boundary, review_reasons,
    student_folder, unescape)
from class_report_page import inert, render_page, safe_name  # noqa: E402

EXIT_BAD_INPUT = 2


# ---- charts -----------------------------------------------------------------------------------


def import_pyplot():
    """matplotlib.pyplot with a file-only backend; exits with a clear message when missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except (ImportError, AttributeError) as e:  # AttributeError: a broken or partial install
        print(f"class_report: error: matplotlib is missing for {sys.executable} ({e}); install "
              "it (Debian/Ubuntu: apt-get install python3-matplotlib; else pip install "
              "matplotlib)", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)
    return plt


def plot_lab_histogram(plt, summary, path):
    """The histogram of one lab's points, one bar per point."""
    fig, ax = plt.subplots(figsize=(4.2, 2.8), dpi=100)
    top = max(summary.max_score, max(summary.scores, default=0), 1)
    edges = [k - 0.5 for k in range(int(top) + 2)]
    ax.hist(summary.scores, bins=edges, color="#4477aa", edgecolor="white")
    ax.set_xlim(-0.7, int(top) + 0.7)
    ax.set_title(f"{summary.lab} ({len(summary.scores)} graded)", fontsize=10)
    ax.set_xlabel(f"points of {summary.max_score:g}")
    ax.set_ylabel("students")
    ax.yaxis.get_major_locator().set_params(integer=True)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_totals(plt, totals, near, path):
    """The histogram of the totals in percent of the maximum, with the grade boundaries and the
    bands just below them that put a submission on the review list."""
    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=100)
    ax.hist(totals, bins=[2.5 * k for k in range(41)], color="#4477aa", edgecolor="white")
    for boundary in range(10, 100, 10):
        ax.axvspan(boundary - near, boundary, color="#ee6677", alpha=0.15, lw=0)
        ax.axvline(boundary, color="#999999", lw=0.8, ls=":")
    ax.set_xlim(0, 100)
    ax.set_xlabel(f"total, % of the maximum (shaded: within {near:g} points below a boundary)")
    ax.set_ylabel("students")
    ax.set_title(f"totals ({len(totals)} graded)", fontsize=10)
    ax.yaxis.get_major_locator().set_params(integer=True)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_bandwidth(plt, summaries, path):
    """Each lab's fraction of its measure, one dot per student, the threshold as a red bar and the
    floor as a grey one; a note where no benchmark ran (a batch graded without a GPU)."""
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(summaries) + 2), 3.8), dpi=100)
    top = 1.0
    for i, s in enumerate(summaries):
        ax.hlines(s.threshold, i - 0.38, i + 0.38, color="#cc3311", lw=2,
                  label="threshold" if i == 0 else None)
        if s.floor > 0:
            ax.hlines(s.floor, i - 0.38, i + 0.38, color="#888888", lw=1.2, ls="--",
                      label="floor" if i == 0 else None)
        # A fixed spread, so that the same batch always gives the same picture.
        xs = [i + 0.3 * ((k * 0.618) % 1 - 0.5) for k in range(len(s.fractions))]
        colors = ["#228833" if f >= s.threshold else "#ee7733" for f in s.fractions]
        ax.scatter(xs, s.fractions, s=14, c=colors, zorder=3)
        top = max([top, s.threshold] + s.fractions)
    if not any(s.fractions for s in summaries):
        ax.text(0.5, 0.97, "no benchmark ran in this batch (graded without a GPU)",
                transform=ax.transAxes, ha="center", va="top", fontsize=10, color="#555555")
        top *= 1.1  # room for the note above the thresholds
    ax.set_xticks(range(len(summaries)))
    ax.set_xticklabels([s.lab for s in summaries], rotation=30, ha="right", fontsize=8)
    ax.set_xlim(-0.6, len(summaries) - 0.4)
    ax.set_ylim(0, top * 1.08)
    ax.set_ylabel("fraction of its measure (ceiling, reference or CUB)")
    ax.set_title("bandwidth per lab (green: at or above the threshold)", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def make_charts(batch, summaries, out, near):
    """Writes every chart into \\p out; returns {name: file name} for the page."""
    plt = import_pyplot()
    charts = {}
    for s in summaries:
        charts[s.lab] = f"scores_{safe_name(s.lab)}.png"
        plot_lab_histogram(plt, s, out / charts[s.lab])
    totals = [100.0 * t[0] / t[1] for t in (s.total() for s in batch.submissions)
              if t is not None and t[1] > 0]
    charts["totals"] = "totals.png"
    plot_totals(plt, totals, near, out / charts["totals"])
    charts["bandwidth"] = "bandwidth.png"
    plot_bandwidth(plt, summaries, out / charts["bandwidth"])
    return charts


def write_report(batch_out, out=None, near=NEAR_DEFAULT):
    """Reads the batch output \\p batch_out and writes the page and its charts into \\p out
    (default BATCH_OUT/class-report); returns the page's path and the batch read."""
    batch = load_batch(batch_out)
    out = pathlib.Path(out) if out else batch.folder / "class-report"
    out.mkdir(parents=True, exist_ok=True)
    summaries = lab_summaries(batch)
    charts = make_charts(batch, summaries, out, near)
    page = out / "index.html"
    page.write_text(render_page(batch, summaries, charts, out, near), encoding="utf-8",
                    errors="replace")
    return page, batch


def main(argv=None):
    # A name that is not UTF-8 is printed escaped, never a UnicodeEncodeError.
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(errors="backslashreplace")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("batch_out", help="the --out folder of reduce-grade batch")
    parser.add_argument("--out", help="the report's folder (default: BATCH_OUT/class-report)")
    parser.add_argument("--near", type=float, default=NEAR_DEFAULT,
                        help="percentage points below a grade boundary that put a total on the "
                        "review list (default %(default)s)")
    args = parser.parse_args(argv)
    try:
        page, batch = write_report(args.batch_out, args.out, args.near)
    except BatchError as e:
        print(f"class_report: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    skipped = [inert(s.name) for s in batch.submissions if s.unreadable]
    print(f"class report: {page} ({len(batch.submissions)} submissions"
          + (f"; report.json unreadable, skipped: {', '.join(skipped)}" if skipped else "") + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
