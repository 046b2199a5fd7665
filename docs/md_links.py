#!/usr/bin/env python3
"""Doxygen input filter for the course's Markdown pages: makes every relative link work on the site.

Doxygen 1.9 turns a link to another Markdown page, e.g. [lab 04](../labs/04_sequential/README.md),
into a link to that page, but passes any other relative link through unchanged, as an href into a
source tree that the HTML output does not contain. This filter rewrites, outside code:

  link to a header that the site documents  -> [text](@ref reduce/lab.cuh), the header's page
  link to a page with an anchor (x.md#label) -> [text](@ref label) when the page defines {#label},
                                                else a link to the page
  link to a file or folder that is not a page,
  to anything in solutions/, or to a missing file -> the link text alone

  image in docs/images/ named by a relative path -> ![alt](name.png), which Doxygen finds through
  (e.g. ../../docs/images/name.png in a lesson)      IMAGE_PATH and copies into the site

URLs, in-page anchors and other images are left alone.
Lines are never added or removed, so Doxygen's line numbers stay right.

usage (Doxygen FILTER_PATTERNS): md_links.py <file.md>, writes the filtered page to stdout.
"""
import os
import re
import sys

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
HEADER_DIRS = [os.path.join(ROOT, "common", "include"),
               os.path.join(ROOT, "autograder", "grader", "include")]
HEADER_EXTENSIONS = (".h", ".hpp", ".cuh")
LINK = re.compile(r"(?<!!)\[([^\]\n]*)\]\(([^()\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
IMAGE = re.compile(r"!\[([^\]\n]*)\]\(([^()\s]+)\)")
IMAGE_DIR = os.path.join(ROOT, "docs", "images")


def is_url(target):
    return re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target) is not None


def rewrite(text, target, page_dir):
    if is_url(target) or target.startswith(("#", "@", "\\")):
        return None
    path, _, anchor = target.partition("#")
    resolved = os.path.realpath(os.path.join(page_dir, path))
    if not resolved.startswith(ROOT + os.sep):
        return None
    relative = os.path.relpath(resolved, ROOT)
    if relative.split(os.sep)[0] == "solutions" or not os.path.exists(resolved):
        return text
    if resolved.endswith(".md") and os.path.isfile(resolved):
        if not anchor:
            return None  # Doxygen links Markdown pages itself
        with open(resolved, encoding="utf-8", errors="replace") as page:
            if "{#" + anchor + "}" in page.read():
                return f"[{text}](@ref {anchor})"
        return f"[{text}]({path})"
    if resolved.endswith(HEADER_EXTENSIONS):
        for include_dir in HEADER_DIRS:
            if resolved.startswith(include_dir + os.sep):
                return f"[{text}](@ref {os.path.relpath(resolved, include_dir)})"
    return text


def filter_line(line, page_dir):
    def link(match):
        replaced = rewrite(match.group(1), match.group(2), page_dir)
        return match.group(0) if replaced is None else replaced

    def image(match):
        target = match.group(2)
        resolved = os.path.realpath(os.path.join(page_dir, target))
        if is_url(target) or os.path.dirname(resolved) != IMAGE_DIR or not os.path.isfile(resolved):
            return match.group(0)
        return f"![{match.group(1)}]({os.path.basename(resolved)})"

    line = IMAGE.sub(image, line)
    out, last = [], 0
    for span in CODE_SPAN.finditer(line):  # leave `code spans` as they are
        out.append(LINK.sub(link, line[last:span.start()]))
        out.append(span.group(0))
        last = span.end()
    out.append(LINK.sub(link, line[last:]))
    return "".join(out)


def main():
    page = sys.argv[1]
    page_dir = os.path.dirname(os.path.realpath(page))
    in_fence = False
    with open(page, encoding="utf-8", errors="replace") as source:
        for line in source:
            if FENCE.match(line):
                in_fence = not in_fence
                sys.stdout.write(line)
            elif in_fence:
                sys.stdout.write(line)
            else:
                sys.stdout.write(filter_line(line, page_dir))


if __name__ == "__main__":
    main()
