"""Reports: one run's results.json as report.html (self-contained) and report.md (text).

Both renderings print one document model (model.py) that document.build assembles from the
sections (sections/); columns and charts are chosen by metric role (roles.py).

Public: build(results) -> Doc, render_html(results) -> str, render_md(results) -> str,
write(run_dir, results) -> (html_path, md_path).
"""

from __future__ import annotations

from pathlib import Path

from . import html, markdown
from .document import build
from .model import Doc

__all__ = ["Doc", "build", "render_html", "render_md", "write"]


def render_html(results: dict) -> str:
    """The whole report as one self-contained HTML page (inline CSS and SVG, no scripts)."""
    return html.render(build(results))


def render_md(results: dict) -> str:
    """The same report as Markdown text tables (charts are in report.html)."""
    return markdown.render(build(results, with_charts=False))


def write(run_dir: Path, results: dict) -> tuple[Path, Path]:
    """Write report.html and report.md into run_dir; returns their paths."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    html_path, md_path = run_dir / "report.html", run_dir / "report.md"
    html_path.write_text(render_html(results), encoding="utf-8")
    md_path.write_text(render_md(results), encoding="utf-8")
    return html_path, md_path
