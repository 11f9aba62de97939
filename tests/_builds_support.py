"""Everything a package's syntax layer says about a text, as plain data: for comparing two
builds of the package (tests/test_builds_agree.py) or two ways of reading within one
(tests/test_lexical_loops.py)."""

from __future__ import annotations

from types import ModuleType
from typing import Any


def _error(exc: BaseException) -> tuple[Any, ...]:
    """An exception as data: its class name, message and the attributes ours carry."""
    fields = ("reason", "offset", "line", "column", "expected", "limit", "index")
    return (
        type(exc).__name__,
        str(exc),
        tuple((name, getattr(exc, name)) for name in fields if hasattr(exc, name)),
    )


def _repaired(result: Any) -> tuple[Any, ...]:
    return (
        repr(result.value),
        result.structure_synthesized,
        tuple((r.kind.name, r.offset, r.description, r.count) for r in result.repairs),
    )


def _attempt(call: Any) -> tuple[Any, ...]:
    try:
        value = call()
    except Exception as exc:
        return ("raised", _error(exc))
    if isinstance(value, tuple):
        return ("ok", tuple(_repaired(v) for v in value))
    return ("ok", _repaired(value))


def record(
    package: ModuleType, chunks: list[str], *, changes: bool, max_size: int | None
) -> list[Any]:
    """Everything the package's syntax layer says about ``chunks``, as plain data."""
    bound = {} if max_size is None else {"max_size": max_size}
    assembler = package.ArgumentAssembler(changes=changes, **bound)
    builder = package.ValueBuilder()
    adapter = package.IjsonAdapter()
    out: list[Any] = []
    for chunk in chunks:
        try:
            status = assembler.feed(chunk)
        except Exception as exc:  # feeding an assembler that has failed raises again
            out.append(("feed raised", _error(exc)))
            break
        error = assembler.error
        out.append(
            (
                status.name,
                assembler.status.name,
                assembler.chars_fed,
                assembler.value_count,
                None if error is None else _error(error),
                repr(assembler.preview()),
                repr(assembler.preview(live=True)),
            )
        )
        if changes:
            taken = assembler.take_changes()
            out.append(tuple(repr(c.to_dict()) for c in taken))
            for sink in (builder.apply_all, adapter.feed):
                try:
                    out.append(repr(sink(taken)))
                except Exception as exc:
                    out.append(("sink raised", _error(exc)))
            out.append(repr(builder.value))
            out.append(repr(assembler.lazy_preview().resolve()))
    out.append(_attempt(assembler.finish))
    out.append((assembler.status.name, None if assembler.error is None else "error"))
    out.append(_attempt(assembler.finish_values))
    out.append(_attempt(lambda: package.repair("".join(chunks))))
    return out


def cut(text: str, points: list[int]) -> list[str]:
    cuts = sorted({p for p in points if 0 < p < len(text)})
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
