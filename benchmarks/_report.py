"""Writing one benchmark's results into docs/performance.md without touching the others.

Each benchmark owns a section between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``;
:func:`write_section` replaces that section, or appends it (before the core benchmark's
generated results, which stay last) when it is not there yet.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "performance.md"


def write_section(name: str, text: str, doc: Path = DOC) -> None:
    """Put ``text`` (Markdown) in the section called ``name`` of ``doc``."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n\n{text.strip()}\n\n{end}"
    current = doc.read_text(encoding="utf-8") if doc.exists() else "# Performance\n"
    if start in current and end in current:
        before, rest = current.split(start, 1)
        after = rest.split(end, 1)[1]
        updated = before + block + after
    elif "<!-- results -->" in current:
        before, after = current.split("<!-- results -->", 1)
        updated = before.rstrip() + "\n\n" + block + "\n\n<!-- results -->" + after
    else:
        updated = current.rstrip() + "\n\n" + block + "\n"
    doc.write_text(updated, encoding="utf-8")
