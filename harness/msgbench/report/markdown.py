"""The report as Markdown text tables (GitHub-flavoured); charts live in report.html only."""

from __future__ import annotations

from .model import Bullets, Cell, Doc, Group, Heading, Messages, Para, Table


def _escape(text: str) -> str:
    """Table-cell safe: pipes escaped, one line, and `<` escaped so that text such as
    BufWriter<StdoutLock> is not taken for an HTML tag by GitHub."""
    for a, b in (("\\", "\\\\"), ("|", "\\|"), ("<", "\\<"), ("\n", " ")):
        text = text.replace(a, b)
    return text


def _cell(c: Cell) -> str:
    text = c.text
    if c.cls and "fail" in c.cls.split() and text == "FAIL":
        text = "**FAIL**"
    if c.sub:
        text = f"{text} {c.sub}" if c.sub.startswith("[") else f"{text}: {c.sub}"
    return _escape(text)


def _table(t: Table) -> str:
    width = len(t.headers)
    lines = []
    headers = t.headers if any(t.headers) else [" "] * width
    lines.append("| " + " | ".join(_escape(h) or " " for h in headers) + " |")
    lines.append("|" + "|".join("---:" if n else "---" for n in t.numeric) + "|")
    for row in t.rows:
        cells: list[str] = []
        for c in row:
            cells.append(_cell(c))
            cells.extend([""] * (c.span - 1))
        cells += [""] * (width - len(cells))
        lines.append("| " + " | ".join(cells) + " |")
    out = "\n".join(lines)
    if t.caption:
        out += f"\n\n_{_escape(t.caption)}_"
    return out


def render(doc: Doc) -> str:
    parts = [f"# {doc.title}", "", doc.subtitle, "", "_Charts: see report.html._", ""]
    for b in doc.blocks:
        if isinstance(b, Heading):
            # An explicit anchor, so that links into a published report.md (the README's seed
            # table) land where the HTML's do, whatever the host makes of the heading's text.
            anchor = f'<a id="{b.anchor}"></a>' if b.anchor else ""
            parts += [anchor, ""] if anchor else []
            parts += ["#" * b.level + " " + b.text, ""]
        elif isinstance(b, Para):
            parts += [b.text, ""]
        elif isinstance(b, Table):
            parts += [_table(b), ""]
        elif isinstance(b, Messages):
            for title, msg in b.items:
                parts += [f"**{title}**", "", "```", msg, "```", ""]
        elif isinstance(b, Bullets):
            parts += [f"- {i}" for i in b.items] + [""]
        elif isinstance(b, Group):
            for title, t in b.items:
                parts += [f"**{title}**", "", _table(t), ""]
    return "\n".join(parts).rstrip() + "\n"
