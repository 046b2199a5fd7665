"""The class report's page (tools/class_report.py): its HTML, section by section, with every
string from a submission made inert and escaped."""
import datetime
import html
import os
import pathlib
import re
import urllib.parse

from class_report_data import failing_tests, first_line, frequent_messages, median, review_reasons

FILES_LINKED = ["report.json", "summary.txt", "junit.xml", "results.json", "error.txt"]


def safe_name(text):
    """\\p text as a file name (labs are folder names already; this keeps it so)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


CSS = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.num { text-align: right; }
.grid { display: flex; flex-wrap: wrap; gap: 8px; } .grid img { border: 1px solid #eee; }
.tag { display: inline-block; padding: 0 4px; margin: 1px; border-radius: 3px; font-size: 0.9em;
       background: #fde2e2; } .muted { color: #777; } code { font-size: 0.95em; }
"""


BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))


def inert(text):
    """\\p text with nothing a reader's tools obey, as the grader's inert_text() does: control
    characters but tab and newline, C1 controls, bidirectional overrides and lone surrogates
    (U+DC80..U+DCFF: a byte of a file name that is not UTF-8) as visible escapes."""
    out = []
    for ch in str(text):
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif (code < 0x20 and ch not in "\t\n") or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0x80 <= code <= 0x9F or code in BIDI or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def esc(text):
    """\\p text made inert and escaped for HTML."""
    return html.escape(inert(text), quote=True)


def link(out, target, label):
    """An <a> to \\p target by a relative path from the page's folder \\p out."""
    rel = os.path.relpath(target, out)
    # os.fsencode: the bytes of a name that is not UTF-8, percent-encoded as they are.
    href = "/".join(urllib.parse.quote(os.fsencode(part)) for part in pathlib.Path(rel).parts)
    return f'<a href="{esc(href)}">{esc(label)}</a>'


def student_links(s, out):
    """Links to the files of submission \\p s that exist: its reports, error.txt, and the build
    log of each lab that did not build."""
    links = [link(out, s.folder / f, f) for f in FILES_LINKED if (s.folder / f).is_file()]
    for lab in (s.report or {}).get("labs", []):
        log = s.folder / "logs" / str(lab.get("lab", "")) / "build.log"
        if not lab.get("build", {}).get("ok", True) and log.is_file():
            links.append(link(out, log, f"{lab.get('lab')} build.log"))
    return " ".join(links) or '<span class="muted">no files</span>'


def table(headers, rows, numeric=()):
    """An HTML table; \\p rows hold HTML already escaped; columns in \\p numeric align right."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f'<td{" class=num" if i in numeric else ""}>{c}</td>'
                         for i, c in enumerate(row)) + "</tr>\n"
        for row in rows
    )
    return f"<table><tr>{head}</tr>\n{body}</table>\n"


def failures_html(failures, limit, empty, tests=True):
    """The table of the \\p limit most frequent failures: failing tests with their most
    frequent messages, or (\\p tests false) lab messages in their most frequent wording."""
    if not failures:
        return f'<p class="muted">{esc(empty)}</p>\n'
    rows = []
    for f in failures[:limit]:
        common = [m for m, _ in f.messages.most_common(2) if m]
        shown = ", ".join(f.students[:8])
        if len(f.students) > 8:
            shown += f" and {len(f.students) - 8} more"
        if tests:
            cells = [f"<code>{esc(f.what)}</code>",
                     "<br>".join(esc(m) for m in common) or '<span class="muted">no message</span>']
        else:
            forms = len(f.messages)
            cells = [esc(common[0] if common else f.what) +
                     (f' <span class="muted">({forms} wordings)</span>' if forms > 1 else "")]
        rows.append([str(len(f.students)), esc(f.lab)] + cells + [esc(shown)])
    headers = ["test", "message (most frequent)"] if tests else ["message"]
    more = ""
    if len(failures) > limit:
        more = f'<p class="muted">{len(failures) - limit} more not shown.</p>\n'
    return table(["students", "lab"] + headers + ["who"], rows, (0,)) + more


def render_page(batch, summaries, charts, out, near):
    """The whole page as HTML."""
    subs = batch.submissions
    graded = batch.graded()
    no_gpu = any(not s.report.get("gpu_available", True) for s in graded)
    parts = page_head(batch, graded, no_gpu)
    parts += review_section(subs, near)
    parts += scores_section(summaries, charts)
    parts += bandwidth_section(summaries, charts)
    parts += failures_sections(subs, no_gpu)
    parts += students_section(batch, out, near)
    parts += unreadable_section(subs, out)
    parts.append("</body></html>\n")
    return "".join(parts)


def page_head(batch, graded, no_gpu):
    """The page's head, its title and the batch in one paragraph: the parts of its HTML."""
    subs = batch.submissions
    version = next((s.report.get("grader", {}).get("version", "") for s in graded), "")
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             f"<title>Class report: {esc(batch.folder.resolve().name)}</title>"
             f"<style>{CSS}</style></head><body>\n"]
    parts.append(f"<h1>Class report: {esc(batch.folder.resolve().name)}</h1>\n")
    errors = sum(1 for s in subs if s.error)
    unreadable = [s for s in subs if s.unreadable]
    parts.append(
        f"<p>{len(subs)} submissions: {len(graded)} graded, {errors} not graded, "
        f"{len(unreadable)} with an unreadable report.json; labs {esc(', '.join(batch.labs))}. "
        f"Written {esc(datetime.datetime.now().strftime('%Y-%m-%d %H:%M'))} from "
        f"<code>{esc(batch.folder.resolve())}</code>"
        f"{' by reduce-grade ' + esc(version) if version else ''}.</p>\n")
    if no_gpu:
        parts.append("<p><b>Graded without a GPU</b> (build points only): no test, sanitizer or "
                     "benchmark ran.</p>\n")
    return parts


def review_section(subs, near):
    """The submissions to look at by hand, each with its reasons."""
    parts = []
    review = [(s, review_reasons(s, near)) for s in subs]
    review = [(s, r) for s, r in review if r]
    parts.append(f'<h2 id="review">To look at by hand ({len(review)})</h2>\n')
    parts.append(
        f'<p class="muted">Not graded, report unreadable, sanitizer findings, physically '
        f'impossible speed, timeouts and output floods, forbidden library use, and totals within '
        f'{near:g} percentage points below a multiple of 10 % of the maximum.</p>\n')
    if review:
        rows = [[f'<a href="#s-{esc(safe_name(s.name))}">{esc(s.name)}</a>',
                 "<br>".join(f'<span class="tag">{esc(k)}</span> {esc(d)}' for k, d in r)]
                for s, r in review]
        parts.append(table(["student", "why"], rows))
    else:
        parts.append('<p class="muted">Nothing to look at.</p>\n')
    return parts


def scores_section(summaries, charts):
    """The histograms of the totals and of each lab, and each lab's points over the class."""
    parts = []
    parts.append('<h2 id="scores">Scores</h2>\n<div class="grid">\n')
    parts.append(f'<img src="{esc(charts["totals"])}" alt="histogram of the totals">\n')
    for s in summaries:
        parts.append(f'<img src="{esc(charts[s.lab])}" alt="histogram of {esc(s.lab)}">\n')
    parts.append("</div>\n")
    rows = []
    for s in summaries:
        full = sum(1 for v in s.scores if v >= s.max_score - 1e-9 and s.max_score > 0)
        zero = sum(1 for v in s.scores if v <= 1e-9)
        mean = sum(s.scores) / len(s.scores) if s.scores else None
        rows.append([esc(s.lab), str(len(s.scores)), f"{mean:.2f}" if mean is not None else "-",
                     f"{median(s.scores):g}" if s.scores else "-", f"{s.max_score:g}",
                     str(full), str(zero)])
    parts.append(table(["lab", "graded", "mean", "median", "max", "full marks", "zero"], rows,
                       (1, 2, 3, 4, 5, 6)))
    return parts


def bandwidth_section(summaries, charts):
    """Each lab's fraction of its measure over the class, against its threshold and floor."""
    parts = []
    parts.append('<h2 id="bandwidth">Bandwidth</h2>\n')
    parts.append(f'<img src="{esc(charts["bandwidth"])}" alt="fraction of its measure per lab">\n')
    rows = []
    for s in summaries:
        above = sum(1 for f in s.fractions if f >= s.threshold)
        below_floor = sum(1 for f in s.fractions if f < s.floor)
        rows.append([esc(s.lab), str(len(s.fractions)),
                     f"{median(s.gbps):.1f}" if s.gbps else "-",
                     f"{median(s.fractions):.3f}" if s.fractions else "-",
                     f"{s.threshold:.3f}", f"{s.floor:.3f}",
                     str(above) if s.fractions else "-", str(below_floor) if s.fractions else "-"])
    parts.append(table(["lab", "measured", "median GB/s", "median fraction", "threshold", "floor",
                        "at or above threshold", "below floor"], rows, (1, 2, 3, 4, 5, 6, 7)))
    return parts


def failures_sections(subs, no_gpu):
    """The most frequent failing tests, and the labs' most frequent messages."""
    parts = []
    parts.append('<h2 id="failing-tests">Most frequent failing tests</h2>\n')
    parts.append(failures_html(
        failing_tests(subs), 25,
        "No test failed." + (" No test ran: the batch was graded without a GPU." if no_gpu else "")))
    parts.append('<h2 id="messages">Most frequent messages</h2>\n')
    parts.append('<p class="muted">The labs\' messages; those that differ only in their numbers '
                 'count together.</p>\n')
    parts.append(failures_html(frequent_messages(subs), 25, "No lab lost points.", tests=False))
    return parts


def students_section(batch, out, near):
    """Every student in one table: points per lab, status, flags and links to their files."""
    subs = batch.submissions
    parts = []
    parts.append('<h2 id="students">Students</h2>\n')
    rows = []
    for s in subs:
        points = s.lab_points()
        total = s.total()
        status = ("not graded: " + first_line(s.error, 120) if s.error else
                  "report.json unreadable" if s.unreadable else (s.row or {}).get("status", "graded"))
        tags = sorted({k for k, _ in review_reasons(s, near)})
        cells = [f'<span id="s-{esc(safe_name(s.name))}">{esc(s.name)}</span>',
                 f"{total[0]:g}/{total[1]:g}" if total else "-",
                 f"{100.0 * total[0] / total[1]:.1f}" if total and total[1] > 0 else "-"]
        for lab in batch.labs:
            if lab in points:
                cells.append(f"{points[lab][0]:g}")
            elif s.row is not None and lab in s.row and not s.error:
                cells.append(esc(s.row[lab]))
            else:
                cells.append("-")
        cells += [esc(status), " ".join(f'<span class="tag">{esc(t)}</span>' for t in tags),
                  student_links(s, out)]
        rows.append(cells)
    parts.append(table(["student", "total", "%"] + batch.labs + ["status", "flags", "files"], rows,
                       tuple(range(1, 3 + len(batch.labs)))))
    return parts


def unreadable_section(subs, out):
    """The report.json files that could not be read, when there are any."""
    parts = []
    unreadable = [s for s in subs if s.unreadable]
    if unreadable:
        parts.append(f'<h2 id="unreadable">Reports that could not be read ({len(unreadable)})</h2>\n')
        parts.append(table(["student", "file", "problem"], [
            [esc(s.name), link(out, s.folder / "report.json", "report.json"), esc(s.unreadable)]
            for s in unreadable]))
    return parts
