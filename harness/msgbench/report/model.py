"""The report's document model: what the sections produce and both renderers print.

The HTML and the Markdown are two printings of one Doc, so they always carry the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Cell:
    text: str
    cls: str = ""  # num, fail, skip, pass, na, muted, impl
    sub: str = ""  # a second, smaller line in HTML (an interval); appended in Markdown
    color: str = ""  # a colour swatch before the text (HTML only)
    span: int = 1


@dataclass
class Table:
    headers: list[str]
    rows: list[list[Cell]]
    numeric: list[bool]
    caption: str = ""
    cls: str = ""


@dataclass
class Heading:
    level: int
    text: str
    anchor: str = ""


@dataclass
class Para:
    text: str  # `code` and **bold** are the only markup
    cls: str = ""


@dataclass
class Charts:
    items: list[tuple[str, str]]  # (caption, svg)


@dataclass
class Messages:
    items: list[tuple[str, str]]  # (title, preformatted message)


@dataclass
class Bullets:
    items: list[str]


@dataclass
class Group:
    items: list[tuple[str, Table]]  # (title, table): side by side in HTML


Block = Heading | Para | Table | Charts | Messages | Bullets | Group


@dataclass
class Doc:
    title: str
    subtitle: str
    blocks: list[Block] = field(default_factory=list)
    toc: list[tuple[int, str, str]] = field(default_factory=list)  # (level, text, anchor)

    def heading(self, level: int, text: str, anchor: str, toc: bool = True) -> None:
        self.blocks.append(Heading(level, text, anchor))
        if toc:
            self.toc.append((level, text, anchor))
