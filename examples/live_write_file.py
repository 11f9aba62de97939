"""A live terminal UI for a long ``write_file`` call, drawn from streamrepair's changes.

    python examples/live_write_file.py               # a synthetic DeepSeek-style stream
    python examples/live_write_file.py --cut         # the same call cut off at max_tokens
    python examples/live_write_file.py --no-delay    # as fast as it can
    python examples/live_write_file.py --file recording.sse
    python examples/live_write_file.py --file recording.sse --tool create_file

The panel follows the first call of the tool named by ``--tool`` (``write_file`` by
default, with a ``path`` and a ``content`` argument); other calls in the stream are left
out.

The path shows as soon as the model has finished writing it, the content grows line by
line with a progress count, and the end says whether the call is ready to run or why it
must not be. Nothing here diffs previews or copies the growing content: each
``ToolCallDelta`` says what changed (``event.changes``), and the UI applies that. Needs
``rich`` (``pip install 'streamrepair[cli]'``).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.text import Text

from streamrepair import (
    ToolCallDelta,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStarted,
    ToolCallStream,
)
from streamrepair.syntax import Appended, Assigned, Change, Closed, Opened

TAIL_LINES = 12


@dataclass
class WriteView:
    """What the panel shows, kept up to date from the changes alone."""

    tool: str = "write_file"  # the tool whose first call is shown
    call_id: str = ""
    path: str | None = None  # shown once the model has finished it
    path_parts: list[str] = field(default_factory=list)
    content_chars: int = 0
    writing: bool = False
    lines: deque[str] = field(default_factory=lambda: deque(maxlen=TAIL_LINES))
    partial: str = ""  # the line being written
    outcome: str = "streaming"
    deltas: int = 0
    path_final_at: int = -1
    expected_chars: int = 0

    def apply(self, change: Change) -> None:
        match change:
            case Assigned(path=("path",), value=str(path)):  # arrived whole
                self._path_done(path)
            case Appended(path=("path",), text=text):
                self.path_parts.append(text)
            case Closed(path=("path",)):
                self._path_done("".join(self.path_parts))
            case Opened(path=("content",)):
                self.writing = True
            case (
                Appended(path=("content",), text=text)
                | Assigned(path=("content",), value=str(text))
            ):
                self._grow(text)
            case Closed(path=("content",)):
                self.writing = False

    def _path_done(self, path: str) -> None:
        self.path = path
        self.path_final_at = self.deltas

    def _grow(self, text: str) -> None:
        self.content_chars += len(text)
        *done, self.partial = (self.partial + text).split("\n")
        self.lines.extend(done)
        self.partial = self.partial[-200:]

    def render(self) -> Panel:
        path = Text(self.path or "...", style="bold" if self.path else "dim")
        progress = Text(f"{self.content_chars:,} characters", style="cyan")
        if self.writing:
            progress.append("  writing...", style="yellow")
        shown = [*self.lines, self.partial + ("|" if self.writing else "")]
        body = Group(
            Text("path: ").append(path),
            Text("content: ").append(progress),
            Text("\n".join(shown[-TAIL_LINES:]), style="dim"),
        )
        style = {"streaming": "yellow", "ready": "green"}.get(self.outcome, "red")
        title = f"{self.tool} {self.call_id} - [{style}]{self.outcome}[/{style}]"
        return Panel(body, title=title, title_align="left", border_style=style)


def synthetic_stream(lines: int, cut: bool) -> tuple[list[bytes], int]:
    """An OpenAI-compatible SSE stream of one write_file call in 16-character deltas (and
    the length of its content); with ``cut``, the stream stops at the output limit."""
    content = "".join(f"    total += compute(row[{i}])  # step {i}\n" for i in range(lines))
    arguments = json.dumps({"path": "src/generated/report.py", "content": content})
    if cut:
        arguments = arguments[: len(arguments) * 2 // 3]

    def event(delta: dict[str, object], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return f"data: {json.dumps({'choices': [choice]})}\n\n".encode()

    start = {"index": 0, "id": "call_write_1", "function": {"name": "write_file"}}
    out = [event({"role": "assistant", "content": ""}), event({"tool_calls": [start]})]
    for i in range(0, len(arguments), 16):
        piece = {"index": 0, "function": {"arguments": arguments[i : i + 16]}}
        out.append(event({"tool_calls": [piece]}))
    out += [event({}, "length" if cut else "tool_calls"), b"data: [DONE]\n\n"]
    return out, len(content)


def read_file(path: str) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        while block := handle.read(4096):
            yield block


def main(argv: list[str] | None = None, *, console: Console | None = None) -> WriteView:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--file", help="replay a recording instead of the synthetic stream")
    parser.add_argument(
        "--tool", default="write_file", help="follow the first call of this tool (write_file)"
    )
    parser.add_argument("--lines", type=int, default=3000, help="lines of synthetic content")
    parser.add_argument("--cut", action="store_true", help="cut the call at max_tokens")
    parser.add_argument("--no-delay", action="store_true", help="do not pace the stream")
    args = parser.parse_args(argv)
    view = WriteView(tool=args.tool)
    if args.file:
        pieces: Iterator[bytes] = read_file(args.file)
    else:
        chunks, view.expected_chars = synthetic_stream(args.lines, args.cut)
        pieces = iter(chunks)
    console = console or Console()
    core = ToolCallStream()
    last_frame = 0.0
    with Live(view.render(), console=console, auto_refresh=False) as live:
        for piece in pieces:  # bytes as they arrive from the network
            for event in core.feed(piece):
                handle(view, event)
            now = time.monotonic()
            if now - last_frame > 1 / 20:
                live.update(view.render(), refresh=True)
                last_frame = now
            if not args.no_delay:
                time.sleep(0.002)
        if core.done is None:  # the input ended without an end marker
            for event in core.finish():
                handle(view, event)
        live.update(view.render(), refresh=True)
    if not console.is_terminal:
        console.line()  # the last frame has no line end of its own there
    if not view.call_id:
        console.print(f"no {view.tool} call in the stream")
    elif view.outcome == "ready":
        console.print(f"ready to run: write {view.content_chars:,} characters to {view.path}")
    else:
        console.print(f"NOT written ({view.outcome}): the call must not run")
    return view


def handle(view: WriteView, event: object) -> None:
    if isinstance(event, ToolCallStarted) and not view.call_id and event.name == view.tool:
        view.call_id = event.call_id
    elif isinstance(event, ToolCallDelta) and event.call_id == view.call_id:
        view.deltas += 1
        for change in event.changes:
            view.apply(change)
    elif isinstance(event, ToolCallReady) and event.call_id == view.call_id:
        view.outcome = "ready"
    elif isinstance(event, ToolCallRejected) and event.call_id == view.call_id:
        view.outcome = f"rejected: {event.reason.value}"


if __name__ == "__main__":
    main()
