"""The report as one self-contained HTML page: inline stylesheet (style.css) and inline SVG,
no scripts, nothing fetched."""

from __future__ import annotations

import html
import re
from functools import cache
from importlib import resources

from .model import Bullets, Cell, Charts, Doc, Group, Heading, Messages, Para, Table


@cache
def stylesheet() -> str:
    return resources.files(__package__).joinpath("style.css").read_text(encoding="utf-8")


def _inline(text: str) -> str:
    """Escape, then turn `code`, **bold** and [text](relative/path) into tags (the only markup
    paragraphs use; links stay relative: the page fetches nothing)."""
    out = html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
    return re.sub(r"\[([^\]]+)\]\(([\w./-]+)\)", r'<a href="\2">\1</a>', out)


def _cell(c: Cell, numeric: bool, tag: str = "td") -> str:
    classes = " ".join(x for x in (c.cls, "num" if numeric and "num" not in c.cls else "") if x)
    if c.cls and ("fail" in c.cls or "skip" in c.cls) and c.span > 1:
        classes = c.cls  # a status spanning numeric columns reads left-aligned
    attrs = f' class="{classes}"' if classes else ""
    if c.span > 1:
        attrs += f' colspan="{c.span}"'
    swatch = f'<span class="swatch" style="background:{c.color}"></span>' if c.color else ""
    body = swatch + html.escape(c.text)
    if c.sub:
        body += f'<span class="sub">{html.escape(c.sub)}</span>'
    return f"<{tag}{attrs}>{body}</{tag}>"


def _table(t: Table) -> str:
    cls = f' class="{t.cls}"' if t.cls else ""
    head = "".join(
        f"<th{' class=num' if num else ''}>{html.escape(h)}</th>"
        for h, num in zip(t.headers, t.numeric, strict=True)
    ).replace("<th class=num>", '<th class="num">')
    body = []
    for row in t.rows:
        cells, col = [], 0
        for c in row:
            num = t.numeric[col] if col < len(t.numeric) else False
            cells.append(_cell(c, num and c.span == 1))
            col += c.span
        body.append("<tr>" + "".join(cells) + "</tr>")
    caption = f"<caption>{html.escape(t.caption)}</caption>" if t.caption else ""
    return (
        f'<div class="tablewrap"><table{cls}>{caption}<thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def render(doc: Doc) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(doc.title)}</title>",
        f"<style>\n{stylesheet()}</style></head><body><main>",
        f"<h1>{html.escape(doc.title)}</h1>",
        f'<p class="subtitle">{html.escape(doc.subtitle)}</p>',
    ]
    toc = "".join(
        f'<a class="l{lvl}" href="#{a}">{html.escape(text)}</a>' for lvl, text, a in doc.toc
    )
    parts.append(f'<nav class="toc">{toc}</nav>')
    for b in doc.blocks:
        if isinstance(b, Heading):
            aid = f' id="{b.anchor}"' if b.anchor else ""
            parts.append(
                f'<h{b.level}{aid}><a class="anchor" href="#{b.anchor}">'
                f"{html.escape(b.text)}</a></h{b.level}>"
            )
        elif isinstance(b, Para):
            cls = f' class="{b.cls}"' if b.cls else ""
            parts.append(f"<p{cls}>{_inline(b.text)}</p>")
        elif isinstance(b, Table):
            parts.append(_table(b))
        elif isinstance(b, Charts):
            figs = "".join(
                f"<figure>{svg}<figcaption>{html.escape(cap)}</figcaption></figure>"
                for cap, svg in b.items
            )
            parts.append(f'<div class="charts">{figs}</div>')
        elif isinstance(b, Messages):
            for title, msg in b.items:
                parts.append(f'<div class="msgtitle">{html.escape(title)}</div>')
                parts.append(f"<pre>{html.escape(msg)}</pre>")
        elif isinstance(b, Bullets):
            items = "".join(f"<li>{_inline(i)}</li>" for i in b.items)
            parts.append(f'<ul class="notes">{items}</ul>')
        elif isinstance(b, Group):
            cards = "".join(
                f"<section><h4>{html.escape(title)}</h4>{_table(t)}</section>"
                for title, t in b.items
            )
            parts.append(f'<div class="group">{cards}</div>')
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"
