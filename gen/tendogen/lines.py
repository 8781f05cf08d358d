"""#line: generated code points back at its template.

The loader tags every template line that is plain output text with an
invisible marker holding the template's name and the line's number; after
rendering, the markers are stripped and a `#line N "PATH"` goes in wherever
the output stops following its template line by line (a loop starting over,
an {% if %} skipping lines, a macro's body), so that a compiler error or a
debugger lands on the template line that produced the code.  Lines that
hold only {% %} tags or {# #} comments get no marker: trim_blocks and
lstrip_blocks keep them producing nothing.
"""

import re

import jinja2

from . import GenError

MARK, MARK_END = "\ue000", "\ue001"  # private-use code points, in no template
MARK_RE = re.compile(f"{MARK}([^{MARK_END}]*):([0-9]+){MARK_END}")
TAG_OPEN = re.compile(r"\{[{%#]")
TAG_CLOSE = {"{": "}}", "%": "%}", "#": "#}"}


def _tags(src):
    """(start, end, kind) of every {{ }}, {% %} and {# #} in src, in order;
    kind is the character after the brace."""
    spans, i = [], 0
    while m := TAG_OPEN.search(src, i):
        kind, close, j = m.group()[1], TAG_CLOSE[m.group()[1]], m.end()
        while j < len(src) and not src.startswith(close, j):
            if kind != "#" and src[j] in "'\"":  # a string literal may hold the closer
                q, j = src[j], j + 1
                while j < len(src) and src[j] != q:
                    j += 2 if src[j] == "\\" else 1
            j += 1
        spans.append((m.start(), min(j + 2, len(src)), kind))
        i = j + 2
    return spans


def mark_lines(source, name):
    """source with a marker at the start of the text of each line that is
    plain output (text or {{ }}), after its indentation and any leading
    tags, where it changes neither what lstrip_blocks nor what a `-` strips."""
    if MARK in source or MARK_END in source:
        raise GenError(f"{name}: holds the code points U+E000/U+E001 tendo-gen marks lines with")
    spans = _tags(source)
    out, pos, k = [], 0, 0
    for n, line in enumerate(source.splitlines(keepends=True), 1):
        start, end = pos, pos + len(line)
        pos = end
        out.append(line)
        while k < len(spans) and spans[k][1] <= start:
            k += 1
        if k < len(spans) and spans[k][0] < start:
            continue  # the line starts inside a tag or comment
        at, kk, tagged = start, k, False
        while True:  # skip indentation and leading {% %} / {# #}
            while at < end and source[at] in " \t":
                at += 1
            if not (kk < len(spans) and spans[kk][0] == at and spans[kk][2] in "%#"):
                break
            if spans[kk][1] > end:
                at = None  # a tag running onto the next lines
                break
            at, kk, tagged = spans[kk][1], kk + 1, True
        if at is None:
            continue
        if at == end or source[at] in "\r\n":
            # nothing but tags, or a blank line; one after a `-%}` is stripped away
            if tagged or source[:start].rstrip().endswith(("-%}", "-}}", "-#}")):
                continue
        elif source.startswith("{{-", at):
            continue  # it strips the whitespace before it, which a marker would stop
        i = at - start
        out[-1] = f"{line[:i]}{MARK}{name}:{n}{MARK_END}{line[i:]}"
    return "".join(out)


class LineMarkingLoader(jinja2.FileSystemLoader):
    """A FileSystemLoader whose templates carry mark_lines' markers."""

    def get_source(self, environment, template):
        source, filename, uptodate = super().get_source(environment, template)
        return mark_lines(source, template), filename, uptodate


C_COND = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b")


def _in_comment_after(line, in_comment):
    """Whether a /* */ comment is still open after C `line`, given whether
    one was open before it (string and character literals skipped)."""
    i = 0
    while i < len(line):
        if in_comment:
            j = line.find("*/", i)
            if j < 0:
                return True
            in_comment, i = False, j + 2
        elif line[i] in "'\"":
            q, i = line[i], i + 1
            while i < len(line) and line[i] not in (q, "\n"):
                i += 2 if line[i] == "\\" else 1
            i += 1
        elif line.startswith("//", i):
            return False
        elif line.startswith("/*", i):
            in_comment, i = True, i + 2
        else:
            i += 1
    return in_comment


def _origin(line):
    """(template, line) that the text of an output line comes from: the
    marker before its first non-blank character; the last marker of a blank
    line; None for a line that an expression's value runs onto."""
    marks = list(MARK_RE.finditer(line))
    if not marks:
        return None
    text = MARK_RE.sub(lambda m: MARK * len(m.group()), line)  # same offsets
    first = len(text) - len(text.lstrip(f" \t\r\n{MARK}"))
    before = [m for m in marks if m.start() < first]
    if first == len(text):
        before = marks
    return (before[-1].group(1), int(before[-1].group(2))) if before else None


def add_line_directives(text, path_of):
    """text with its markers replaced by #line directives (path_of(name) is
    the path a directive names; None: markers removed, no directives).  A directive never goes after a line that
    ends in a backslash, inside a /* */ comment, above the banner comment
    or before a blank line (the next line with text resyncs); one in a
    conditional group that the preprocessor may skip is followed by another
    after that group ends."""
    out = []
    at = None            # (template, line) the compiler gives the next output line
    in_comment = continued = False
    banner = True        # still in the leading comment (the DO NOT EDIT banner)
    groups = []          # per open #if: whether a #line went into it
    for raw in text.splitlines(keepends=True):
        line = MARK_RE.sub("", raw)
        stripped = line.strip()
        if banner and stripped and not in_comment and not stripped.startswith(("/*", "//")):
            banner = False
        free = not (in_comment or continued)  # a directive may go before this line
        origin = _origin(raw)
        if path_of and free and not banner and stripped and origin and origin != at:
            out.append(f'#line {origin[1]} "{c_string(path_of(origin[0]))}"\n')
            at = origin
            if groups:
                groups[-1] = True
        out.append(line)
        at = (at[0], at[1] + 1) if at else None
        m = C_COND.match(line) if free else None
        if m and m.group(1).startswith("if"):
            groups.append(False)
        elif m and groups:
            if groups[-1]:  # the group that ends here may have been skipped
                at = None
            if m.group(1) == "endif":
                had = groups.pop()
                if had and groups:
                    groups[-1] = True
            else:
                groups[-1] = False
        in_comment = _in_comment_after(line, in_comment)
        continued = line.rstrip("\r\n").endswith("\\")
    text = "".join(out)
    if MARK in text or MARK_END in text:
        raise GenError("a line marker was left in the output (a marked template line passed through a filter?)")
    return text


def c_string(s):
    """s as the inside of a C string literal."""
    return s.replace("\\", "\\\\").replace('"', '\\"')
