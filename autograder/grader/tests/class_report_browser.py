#!/usr/bin/env python3
"""Checks a class report page (tools/class_report.py) in a real headless browser.

usage: class_report_browser.py BROWSER PAGE [--students N] [--expect TEXT]... [--screenshot PNG]

BROWSER is Chromium (or Chrome). The page must render; every <img> must be a chart file next to
the page, a valid PNG, and decoded by the browser (a copy of the page with a script that lists
each image's natural size is loaded: the page itself has no script); every link must be a
relative path to an existing file, or an anchor of the page; every --expect text must be in the
rendered page, and at least N students in its table. --screenshot keeps a screenshot of it.
Prints what failed and exits 1; 0 when every check passed.
"""
import argparse
import html.parser
import os
import pathlib
import struct
import subprocess
import sys
import tempfile
import urllib.parse

PROBE = """<script>
window.addEventListener("load", () => {
  const lines = [];
  for (const img of document.images)
    lines.push(img.getAttribute("src") + " " + (img.complete ? "loaded" : "pending") + " " +
               img.naturalWidth + "x" + img.naturalHeight);
  const pre = document.createElement("pre");
  pre.id = "browser-check";
  pre.textContent = lines.join("\\n");
  document.body.appendChild(pre);
});
</script>
"""
SECTIONS = ["review", "scores", "bandwidth", "failing-tests", "messages", "students"]


class Page(html.parser.HTMLParser):
    """The images, links, ids and text of an HTML document."""

    def __init__(self):
        super().__init__()
        self.images, self.links, self.ids, self.text = [], [], set(), []
        self.probe, self._in_probe = [], False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "img":
            self.images.append(a.get("src", ""))
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag == "pre" and a.get("id") == "browser-check":
            self._in_probe = True

    def handle_endtag(self, tag):
        if tag == "pre":
            self._in_probe = False

    def handle_data(self, data):
        (self.probe if self._in_probe else self.text).append(data)



def local_path(url_path):
    """The file a relative URL's path names: its %XX escapes are bytes, not UTF-8 (a student's
    folder name may be any bytes), so they are decoded as the filesystem decodes names."""
    return os.fsdecode(urllib.parse.unquote_to_bytes(url_path))

def png_size(path):
    """(width, height) of a PNG file, or None when it is not one."""
    data = pathlib.Path(path).read_bytes()[:33]
    if len(data) < 33 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])


def browse(browser, url, *options):
    """Runs the headless browser on \\p url; returns its stdout."""
    with tempfile.TemporaryDirectory(prefix="class-report-browser-") as profile:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               f"--user-data-dir={profile}", "--virtual-time-budget=5000", *options, url]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {run.returncode}: {run.stderr[-2000:]}")
    return run.stdout


def check(args):
    """Every check of the page; returns the list of problems."""
    page = pathlib.Path(args.page).resolve()
    folder = page.parent
    problems = []
    dom = Page()
    dom.feed(browse(args.browser, page.as_uri(), "--dump-dom"))
    text = " ".join(" ".join(dom.text).split())
    if not text:
        return ["the browser rendered no text"]
    for section in SECTIONS:
        if section not in dom.ids:
            problems.append(f"no section #{section}")
    for expected in args.expect:
        if expected not in text:
            problems.append(f"'{expected}' is not on the page")
    students = [i for i in dom.ids if i.startswith("s-")]
    if len(students) < args.students:
        problems.append(f"{len(students)} students in the table, expected at least {args.students}")

    # Charts: at least the totals, the bandwidth and one per lab; each a PNG next to the page.
    if len(dom.images) < 3:
        problems.append(f"only {len(dom.images)} charts")
    for src in dom.images:
        if urllib.parse.urlparse(src).scheme or src.startswith("/"):
            problems.append(f"chart {src} is not a relative path")
            continue
        path = folder / local_path(src)
        if not path.is_file():
            problems.append(f"chart {src}: no file {path}")
        elif not png_size(path) or min(png_size(path)) <= 0:
            problems.append(f"chart {src} is not a valid PNG")

    # Links: relative paths to existing files, or anchors of the page.
    files = 0
    for href in dom.links:
        parsed = urllib.parse.urlparse(href)
        if href.startswith("#"):
            if href[1:] not in dom.ids:
                problems.append(f"link {href}: no such anchor")
        elif parsed.scheme or href.startswith("/"):
            problems.append(f"link {href} is not a relative path")
        else:
            target = (folder / local_path(parsed.path)).resolve()
            files += 1
            if not target.is_file():
                problems.append(f"link {href}: no file {target}")
    if files < args.students:
        problems.append(f"{files} links to students' files, expected at least {args.students}")

    # The browser itself decodes every image: a copy of the page with a probe script.
    probe_page = folder / ".browser-check.html"
    probe_page.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                          encoding="utf-8")
    try:
        probed = Page()
        probed.feed(browse(args.browser, probe_page.as_uri(), "--dump-dom"))
    finally:
        probe_page.unlink()
    lines = "".join(probed.probe).split("\n") if probed.probe else []
    if len(lines) != len(dom.images):
        problems.append(f"the browser reported {len(lines)} images of {len(dom.images)}")
    for line in lines:
        src, state, size = line.rsplit(" ", 2)
        if state != "loaded" or size.startswith("0x") or size.endswith("x0"):
            problems.append(f"the browser did not show {src} ({state}, {size})")

    if args.screenshot:
        shot = pathlib.Path(args.screenshot).resolve()
        browse(args.browser, page.as_uri(), f"--screenshot={shot}", "--window-size=1280,2000",
               "--hide-scrollbars")
        size = png_size(shot) if shot.is_file() else None
        if size != (1280, 2000):
            problems.append(f"screenshot {shot}: {size or 'not a PNG'}, expected 1280x2000")
        elif shot.stat().st_size < 20000:  # a blank page compresses to a few kB
            problems.append(f"screenshot {shot} looks blank ({shot.stat().st_size} bytes)")
    print(f"{page}: {len(dom.images)} charts, {len(dom.links)} links, {len(students)} students")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("browser")
    parser.add_argument("page")
    parser.add_argument("--students", type=int, default=1)
    parser.add_argument("--expect", action="append", default=[])
    parser.add_argument("--screenshot")
    args = parser.parse_args()
    problems = check(args)
    for p in problems:
        print(f"FAILED: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
