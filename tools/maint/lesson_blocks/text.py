"""Numbers in words, and the reflow of a rendered block to the width of the lessons."""
import math
import re


def sig(value, digits=3):
    """A number with `digits` significant figures and no exponent: 0.000909, 0.0146, 3.73, 953."""
    if value == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def span(values, spec=".1f"):
    """'2.5-3.6': the smallest and largest of some values, or one value when they print alike."""
    values = list(values)
    low, high = format(min(values), spec), format(max(values), spec)
    return low if low == high else f"{low}-{high}"


def gbps_text(value):
    """A bandwidth with three significant figures at most decimals: 2202, 11.6, 1.16."""
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


ITEM = re.compile(r"^(\s*(?:[-*]|\d+\.)\s+)")


def reflow(text, width=100):
    """Rewraps the paragraphs and list items of a rendered template to the width of the lessons;
    tables, code, headings and HTML are left as they are."""
    out = []
    for paragraph in re.split(r"\n\s*\n", text.strip("\n")):
        lines = paragraph.split("\n")
        if re.match(r"^\s*(\||```|#|<|    )", lines[0]) or any(l.lstrip().startswith("|") for l in lines):
            out.append(paragraph)
            continue
        groups = []  # one per list item (or one for a plain paragraph)
        for line in lines:
            if ITEM.match(line) or not groups:
                groups.append([line])
            else:
                groups[-1].append(line)
        wrapped = []
        for group in groups:
            item = ITEM.match(group[0])
            prefix = item.group(1) if item else ""
            words = []
            for word in " ".join([group[0][len(prefix):]] + group[1:]).split():
                if words and re.fullmatch(r"(%|us|ms|ns|GB/s|TB/s|MB|KB)[.,;:)]*", word) and \
                        re.search(r"\d$", words[-1]):
                    words[-1] += " " + word  # never "94.4" at the end of a line and "%" below
                else:
                    words.append(word)
            line, fresh = prefix, True
            for word in words:
                if not fresh and len(line) + 1 + len(word) > width:
                    wrapped.append(line)
                    line = " " * len(prefix) + word
                else:
                    line = line + word if fresh else f"{line} {word}"
                fresh = False
            wrapped.append(line)
        out.append("\n".join(wrapped))
    return "\n\n".join(out)
