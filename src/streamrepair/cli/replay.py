"""``streamrepair replay``: replay a recorded stream and show what the library makes of it.

On a terminal (and with ``rich`` installed, the ``cli`` extra) the view is live: the
reasoning, the text, each tool call's arguments growing and its status, then a summary
table of ready and rejected calls with their repairs. Elsewhere the output is plain text.
``--json`` prints every event as one JSON line instead (the golden-file format), with
U+2028 and U+2029 escaped so that line-based readers see one event per line. A delta's
line holds its preview, the whole value so far, so that output is quadratic in a long
argument by its format (a 700 KB call gives about 16 GB); ``--no-previews`` leaves the
previews out, and the changes on each line still say what the delta added.

``--strict`` makes the exit status say whether the turn can be used as it is: 0 only when
the stream ended cleanly (a stop reason of ``stop``, ``tool_calls`` or ``length``), nothing
failed, every tool call is ready, and no call the stop reason announced is missing.
Input that holds no stream at all (an empty file, plain text, only comments or an end
marker: no chunk of any provider) is said so on stderr and exits 1 with or without
``--strict``.

The recording is read a block at a time and each call's arguments are followed through the
changes on its deltas (a :class:`~streamrepair.syntax.changes.ValueBuilder` per call, the
way a UI would), never through a snapshot per delta: memory stays that of the arguments,
and a long field is drawn from its tail.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import IO, Any, TextIO

from .._plural import plural
from ..events import (
    Done,
    ReasoningDelta,
    RefusalDelta,
    StopReason,
    StreamEvent,
    StreamFailed,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStarted,
)
from ..providers.normalizer import Provider
from ..providers.textcalls import TextCallFormat
from ..stream.drivers import READ_CHUNK_BYTES, iter_events
from ..stream.pipeline import ToolCallStream
from ..stream.recordings import RecordingReader
from ..syntax.changes import Closed, Opened, Reset, ValueBuilder

__all__ = ["DEMO", "EXIT_NOT_READY", "EXIT_NO_STREAM", "EXIT_OK", "json_line", "register"]

#: The replay ran (with ``--strict``: and the turn can be used as it is; module docstring).
EXIT_OK = 0
#: With ``--strict``: the stream did not end cleanly, failed, a call was rejected, or the
#: stop reason said tool calls and none arrived.
EXIT_NOT_READY = 1
#: The input held no stream: no SSE event, JSON line or event-stream message with a chunk
#: in it. There is no turn to use, so this is the status ``--strict`` gives it too.
EXIT_NO_STREAM = 1
#: The bundled demo: DeepSeek thinking, a call needing repairs, a call cut at max_tokens.
DEMO = "demo.sse"
#: Live-view pace (events per second) when ``--speed`` is not given.
_LIVE_SPEED = 60.0
_MAX_PANEL_LINES = 14
_FRAME_SECONDS = 1 / 24
#: Characters of a call's raw text kept for showing a rejected call.
_RAW_TAIL = 4096
#: A string member longer than this (or on several lines) is shown by its last lines.
_LONG = 80


def register(subparsers: Any) -> None:
    """Add the ``replay`` subcommand."""
    parser = subparsers.add_parser(
        "replay",
        help="replay a recorded LLM stream and show its tool calls",
        description=(
            "Replay a recorded stream (SSE, JSON lines, or a txtar with a -- streaming -- "
            "section) through streamrepair: reasoning, text, each tool call's arguments as "
            "they grow, and which calls are ready to run or rejected, with every repair. "
            "With no FILE, a bundled DeepSeek demo is replayed: thinking, a call that needs "
            "repairs, and a call cut off at max_tokens."
        ),
        epilog="exit status: 0 replayed (with --strict: and the turn is usable as it is), "
        "1 no stream found in FILE (no chunk of any provider: empty, plain text, only "
        "comments or an end marker), or with --strict the turn is not usable, 2 usage error "
        "or unreadable file. A --provider that does not match "
        "the stream, or a --choice the stream does not have, is reported as a stream failure "
        "(unsupported_chunk).",
    )
    parser.add_argument("file", nargs="?", metavar="FILE", help="recording ('-' for stdin)")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print events as JSON lines (U+2028/U+2029 escaped); each delta's line holds "
        "its preview, the whole value so far, so the output grows with the square of a long "
        "argument (a 700 KB call: about 16 GB); --no-previews keeps it linear",
    )
    parser.add_argument(
        "--no-previews",
        action="store_true",
        help="with --json: leave out each delta's preview (it repeats the value so far; the "
        "changes say what each delta added)",
    )
    parser.add_argument(
        "--speed",
        type=float,
        metavar="EPS",
        help=f"pace in events per second (0: no pacing; default {_LIVE_SPEED:g} live, 0 else)",
    )
    parser.add_argument(
        "--provider",
        choices=[p.value for p in Provider],
        help="the wire format (default: detected from the first chunk; a name that does not "
        "match the stream fails it)",
    )
    parser.add_argument("--tools", metavar="TOOLS.json", help="tool list to check calls against")
    parser.add_argument(
        "--choice",
        type=_choice,
        default=0,
        help="choice (Gemini: candidate) to follow when n > 1; one the stream does not have "
        "fails it",
    )
    parser.add_argument(
        "--text-tool-calls",
        type=_text_format,
        metavar="FORMAT",
        help="read tool calls the model wrote as text in its content: auto, or one of "
        + ", ".join(f.value for f in TextCallFormat if f is not TextCallFormat.AUTO)
        + " (vLLM's --tool-call-parser names work too)",
    )
    parser.add_argument("--plain", action="store_true", help="plain text even on a terminal")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 unless the stream ended cleanly (stop, tool_calls or length), nothing "
        "failed, every call is ready and none the stop reason announced is missing",
    )
    parser.set_defaults(handler=_run)


def _text_format(name: str) -> TextCallFormat:
    try:
        return TextCallFormat.parse(name)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _choice(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, not {text!r}")
    return value


def _open(file: str | None) -> tuple[IO[bytes], str]:
    if file is None:
        demo = resources.files("streamrepair").joinpath("examples").joinpath(DEMO)
        return demo.open("rb"), f"bundled demo {DEMO}"
    if file == "-":
        return sys.stdin.buffer, "standard input"
    return open(file, "rb"), file  # closed by _run


def _pieces(handle: IO[bytes], name: str) -> Iterator[bytes | Mapping[str, Any]]:
    """The recording a block at a time (never the whole file at once)."""
    reader = RecordingReader(name=name)
    while block := handle.read(READ_CHUNK_BYTES):
        yield from reader.feed(block)
    yield from reader.finish()


def _run(args: argparse.Namespace) -> int:
    if args.speed is not None and args.speed < 0:
        print("streamrepair replay: --speed must be >= 0", file=sys.stderr)
        return 2
    try:
        tools = None
        if args.tools:
            with open(args.tools, encoding="utf-8") as tools_file:
                tools = json.load(tools_file)
        core = ToolCallStream(
            provider=args.provider,
            tools=tools,
            choice=args.choice,
            text_tool_calls=args.text_tool_calls,
        )
        handle, source = _open(args.file)
    except (OSError, ValueError) as exc:
        print(f"streamrepair replay: {exc}", file=sys.stderr)
        return 2
    try:
        # iter_events hands the events of a block out one at a time and drops each as it
        # goes: with --json each delta's preview is read, and a block's worth of them
        # would be a block's worth of snapshots.
        events = iter_events(_pieces(handle, args.file or DEMO), core=core)
        out = sys.stdout
        if args.json:
            _json_lines(events, out, args.speed or 0.0, previews=not args.no_previews)
        elif not args.plain and out.isatty() and _has_rich():
            _live(events, core, source, args.speed if args.speed is not None else _LIVE_SPEED)
        else:
            _plain(events, core, source, out, args.speed or 0.0)
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()
    if _no_stream(core):
        print(
            f"streamrepair replay: no stream found in {source}: nothing in it is a chunk of "
            "an LLM stream (SSE data events, JSON lines, a txtar's -- streaming -- section, "
            "or an AWS event stream)",
            file=sys.stderr,
        )
        return EXIT_NO_STREAM
    if args.strict and not _usable(core):
        return EXIT_NOT_READY
    return EXIT_OK


def _no_stream(core: ToolCallStream) -> bool:
    """The input held no chunk of any provider, and nothing failed while reading it."""
    done = core.done
    return core.chunk_count == 0 and done is not None and done.stop_reason is StopReason.MISSING


def _usable(core: ToolCallStream) -> bool:
    """The ``--strict`` test: the turn can be used as it is (module docstring)."""
    done = core.done
    if done is None or not done.stop_reason.clean or done.tool_calls_missing:
        return False
    return all(phase.value == "ready" for _, _, phase in core.calls)


def _has_rich() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:  # pragma: no cover - rich is in the test environment
        return False
    return True


def _pace(speed: float) -> None:
    if speed > 0:
        time.sleep(1 / speed)


def json_line(event: StreamEvent, *, preview: bool = True) -> str:
    """One event as a JSON line: UTF-8 kept, but U+2028 and U+2029 escaped (JSON allows
    them raw inside strings; line-based readers, ``str.splitlines()`` among them, take
    them for line ends). ``preview=False`` leaves a delta's preview out (not computed)."""
    data = event.to_dict(omit=() if preview else ("preview",))
    text = json.dumps(data, ensure_ascii=False)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _json_lines(
    events: Iterator[StreamEvent], out: TextIO, speed: float, *, previews: bool = True
) -> None:
    for event in events:
        out.write(json_line(event, preview=previews) + "\n")
        out.flush()
        _pace(speed)


# -- the state both views show ------------------------------------------------------------


class _Call:
    """What the view knows of one call: its value, followed through the changes."""

    __slots__ = (
        "arguments",
        "call_id",
        "chars",
        "detail",
        "name",
        "notes",
        "open",
        "origin_id",
        "raw_tail",
        "repairs",
        "value",
    )

    def __init__(self, call_id: str, name: str, origin_id: str) -> None:
        self.call_id = call_id
        self.name = name
        self.origin_id = origin_id
        self.value = ValueBuilder()
        self.open: set[str | int] = set()  # top-level members still being written
        self.chars = 0  # argument characters received
        self.raw_tail = ""  # the last characters of the raw text
        self.detail = ""  # "" while streaming
        self.repairs: list[str] = []
        self.notes: list[str] = []
        self.arguments: Any = None

    def delta(self, event: ToolCallDelta) -> None:
        self.chars += len(event.text)
        self.raw_tail = (self.raw_tail + event.text)[-_RAW_TAIL:]
        self.value.apply_all(event.changes)
        for change in event.changes:
            if isinstance(change, Opened) and len(change.path) == 1:
                self.open.add(change.path[0])
            elif isinstance(change, Closed) and len(change.path) == 1:
                self.open.discard(change.path[0])
            elif isinstance(change, Reset):
                self.open.clear()


class _View:
    def __init__(self) -> None:
        self.reasoning: list[str] = []
        self.text: list[str] = []
        self.calls: dict[str, _Call] = {}
        self.outcomes: list[ToolCallReady | ToolCallRejected] = []
        self.errors: list[str] = []
        self.done: Done | None = None

    def apply(self, event: StreamEvent) -> None:
        if isinstance(event, ReasoningDelta):
            self.reasoning.append(event.text)
        elif isinstance(event, TextDelta | RefusalDelta):
            self.text.append(event.text)
        elif isinstance(event, ToolCallStarted):
            if event.call_id == event.origin_id:  # a split call is shown in its origin's
                self.calls[event.call_id] = _Call(event.call_id, event.name, event.origin_id)
        elif isinstance(event, ToolCallDelta):
            self.calls[event.call_id].delta(event)
        elif isinstance(event, ToolCallReady | ToolCallRejected):
            self.outcomes.append(event)
            call = self.calls[event.origin_id]
            if isinstance(event, ToolCallRejected):
                call.detail = f"rejected: {event.reason.value}"
            elif not call.detail:
                call.detail = "ready"
        elif isinstance(event, StreamFailed):
            self.errors.append(event.message)
        elif isinstance(event, Done):
            self.done = event


def _repair_lines(event: ToolCallReady) -> list[str]:
    lines = [f"{r.kind.value} at {r.offset}: {r.description}" for r in event.repairs]
    for note in event.schema_repairs:
        rule = getattr(getattr(note, "rule", None), "value", "schema")
        where = getattr(note, "location", "")
        before, after = getattr(note, "before", ""), getattr(note, "after", "")
        lines.append(f"{rule} at {where}: {before} -> {after}")
    return lines


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _done_line(done: Done) -> str:
    line = f"done: stop reason {done.stop_reason.value}"
    if done.raw_stop_reason and done.raw_stop_reason != done.stop_reason.value:
        line += f" (provider said {done.raw_stop_reason!r})"
    if done.tool_calls_missing:
        line += "; the stop reason says tool calls, but none arrived"
    if done.usage:
        line += f"; usage {_json(done.usage)}"
    return line


# -- plain text ---------------------------------------------------------------------------


def _plain(
    events: Iterator[StreamEvent], core: ToolCallStream, source: str, out: TextIO, speed: float
) -> None:
    view = _View()
    out.write(f"replaying {source}\n")
    # Reasoning and text are printed a run at a time, in stream order: a run ends when
    # the other kind, a new call or a failure is printed.
    run: list[str] = []
    run_kind = ""

    def end_run() -> None:
        if run:
            out.write(f"{run_kind}: {''.join(run)}\n")
            run.clear()

    for event in events:
        view.apply(event)
        if isinstance(event, ReasoningDelta | TextDelta):
            kind = "reasoning" if isinstance(event, ReasoningDelta) else "text"
            if kind != run_kind:
                end_run()
                run_kind = kind
            run.append(event.text)
        elif isinstance(event, ToolCallStarted):
            end_run()
            split = f", split from {event.origin_id}" if event.origin_id != event.call_id else ""
            out.write(f"tool call started: {event.name} ({event.call_id}{split})\n")
        elif isinstance(event, StreamFailed):
            end_run()
            out.write(f"stream failed: {event.message}\n")
        _pace(speed)
    end_run()
    for outcome in view.outcomes:
        if isinstance(outcome, ToolCallReady):
            out.write(f"READY    {outcome.name} ({outcome.call_id})\n")
            out.write(f"         arguments: {_json(outcome.arguments)}\n")
            for line in _repair_lines(outcome):
                out.write(f"         repair: {line}\n")
            for note in outcome.notes:
                out.write(f"         note: {note}\n")
        else:
            out.write(f"REJECTED {outcome.name} ({outcome.call_id}) {outcome.reason.value}\n")
            out.write(f"         {outcome.detail}\n")
            out.write(f"         raw: {outcome.raw[:200]!r}\n")
    if view.done is not None and not _no_stream(core):  # _run says what was not found
        out.write(_done_line(view.done) + "\n")
    out.flush()


# -- live view (rich) ---------------------------------------------------------------------


def _tail(text: str, lines: int = _MAX_PANEL_LINES) -> str:
    parts = text.splitlines() or [""]
    return "\n".join(parts[-lines:])


def _render(view: _View, source: str) -> Any:
    from rich.console import Group
    from rich.panel import Panel
    from rich.text import Text

    parts: list[Any] = [Text(f"replaying {source}", style="bold")]
    body: Any
    if view.reasoning:
        body = Text(_tail("".join(view.reasoning), 6), style="italic dim")
        parts.append(Panel(body, title="reasoning", title_align="left", border_style="dim"))
    if view.text:
        parts.append(Panel(Text(_tail("".join(view.text), 6)), title="text", title_align="left"))
    for call in view.calls.values():
        status = call.detail or "streaming..."
        style = "green" if status == "ready" else "red" if "rejected" in status else "yellow"
        if call.detail.startswith("rejected"):
            # The raw text, not the value: the value closes what the model left open.
            body = Text(_tail(call.raw_tail), style="red")
        elif call.value.value is None:  # free text (a custom tool), or nothing shown yet
            body = Text(_tail(call.raw_tail))
        else:
            body = _arguments_view(call)
        size = f"{call.chars / 1024:.1f} KB" if call.chars >= 1024 else plural(call.chars, "char")
        title = f"{call.name} [dim]{call.call_id} {size}[/dim] - [{style}]{status}[/{style}]"
        parts.append(Panel(body, title=title, title_align="left", border_style=style))
    for message in view.errors:
        parts.append(Text(f"stream failed: {message}", style="bold red"))
    return Group(*parts)


def _arguments_view(call: _Call) -> Any:
    """The arguments as they stand: each member on a line, a long string by its last
    lines, the members still being written marked."""
    from rich.console import Group
    from rich.text import Text

    value = call.value.value
    if not isinstance(value, dict):
        return Text(_tail(json.dumps(value, ensure_ascii=False)))
    parts: list[Any] = []
    for key, member in value.items():
        writing = key in call.open
        mark = " [writing]" if writing else ""
        if isinstance(member, str) and (len(member) > _LONG or "\n" in member):
            chars = f"{len(member):,} char{'' if len(member) == 1 else 's'}"
            parts.append(Text(f"{key}: {chars}{mark}", style="bold"))
            parts.append(Text(_tail(member, _MAX_PANEL_LINES - 2), style="cyan"))
        else:
            shown = json.dumps(member, ensure_ascii=False)
            if len(shown) > 4 * _LONG:
                shown = shown[: 4 * _LONG] + "..."
            line = Text(f"{key}: ", style="bold")
            line.append(shown + mark, style="yellow" if writing else "")
            parts.append(line)
    return Group(*parts)


def _summary(view: _View) -> Any:
    from rich.table import Table

    table = Table(title="tool calls", show_lines=True)
    for column in ("call", "tool", "status", "repairs / reason", "arguments / detail"):
        table.add_column(column, overflow="fold")
    for outcome in view.outcomes:
        if isinstance(outcome, ToolCallReady):
            notes = "".join(f"\nnote: {n}" for n in outcome.notes)
            table.add_row(
                outcome.call_id,
                outcome.name,
                "[green]ready[/green]",
                "\n".join(_repair_lines(outcome)) or "-",
                _json(outcome.arguments) + notes,
            )
        else:
            table.add_row(
                outcome.call_id,
                outcome.name,
                "[red]rejected[/red]",
                outcome.reason.value,
                outcome.detail,
            )
    return table


def _live(events: Iterator[StreamEvent], core: ToolCallStream, source: str, speed: float) -> None:
    from rich.console import Console
    from rich.live import Live

    console = Console()
    view = _View()
    last = 0.0
    with Live(_render(view, source), console=console, auto_refresh=False) as live:
        for event in events:
            view.apply(event)
            now = time.monotonic()
            if not isinstance(event, ToolCallDelta | TextDelta | ReasoningDelta) or (
                now - last >= _FRAME_SECONDS
            ):
                live.update(_render(view, source), refresh=True)
                last = now
            _pace(speed)
        live.update(_render(view, source), refresh=True)
    if view.outcomes:
        console.print(_summary(view))
    if view.done is not None and not _no_stream(core):  # _run says what was not found
        console.print(_done_line(view.done))
