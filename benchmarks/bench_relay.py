"""The relays' CPU per upstream event, without network: this tree and, with
``--compare-with``, another source tree (an earlier commit) in the same run.

Four streams, each fed one SSE event at a time to a relay (as a paced upstream sends
them), then ended, its memos taken and its end sent, as ``streamrepair serve`` does:

* **Chat, text**: 401 events of ``reasoning_content`` then ``content`` (what most of a
  stream is);
* **Chat, arguments**: one ``write_file`` call in 400 argument pieces;
* **Anthropic**: a thinking block, a text block and a ``tool_use`` block, 130 deltas
  each (399 events);
* **Chat, a response of bench_proxy.py**: 69 events, a third reasoning, a third text, a
  third the pieces of one call with a trailing comma that is repaired and checked
  against the request's schema: the per-response work (judging the call, the memos) is
  in its figure.

Each tree runs in a child process of its own (``PYTHONPATH=<tree>/src``), which says
which build it runs (a tree without compiled modules runs the pure-Python build: give
both trees the same build). Measured: CPU time per event (``time.process_time``, the
median of ``--rounds`` relays), which moves with the machine's load; and with
``--callgrind`` (valgrind installed) the instructions per event, which do not (a run of
three relays minus a run of one, halved). ``--write-docs`` puts the table in
docs/performance.md. No assertion is made.

    python benchmarks/bench_relay.py [--compare-with /tmp/before] [--callgrind] [--write-docs]

A tree of an earlier commit, with this checkout's compiled modules (the syntax layer did
not change), e.g.::

    git archive <commit> src | tar -x -C /tmp/before
    cp src/*.so /tmp/before/src/; cp src/streamrepair/syntax/*.so /tmp/before/src/streamrepair/syntax/
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: Streams, in report order: (name, label).
STREAMS = (
    ("chat-text", "Chat, text and reasoning"),
    ("chat-arguments", "Chat, argument pieces of one call"),
    ("anthropic", "Anthropic, thinking, text and a tool_use block"),
    ("chat-response", "Chat, bench_proxy.py's 69-event response, judged"),
)

# -- the child: one tree, one stream --------------------------------------------------------

_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    }
]
_HEAD = {"id": "bench", "object": "chat.completion.chunk", "created": 1, "model": "m"}


def _chat(delta: dict[str, Any], reason: str | None = None) -> bytes:
    chunk = {**_HEAD, "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}
    return f"data: {json.dumps(chunk, separators=(',', ':'))}\n\n".encode()


def _anthropic(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n".encode()


def _pieces(n: int) -> list[str]:
    text = '{"path": "a.py", "content": "' + "x = 1\\n" * n + '"}'
    return [text[i : i + 7] for i in range(0, len(text), 7)][:n]


def stream(name: str) -> tuple[list[bytes], str]:
    """The stream's events and the relay's protocol."""
    if name == "chat-text":
        events = [_chat({"role": "assistant", "content": None, "reasoning_content": ""})]
        events += [_chat({"content": None, "reasoning_content": "think "}) for _ in range(200)]
        events += [_chat({"content": "word ", "reasoning_content": None}) for _ in range(200)]
        return [*events, _chat({"content": ""}, "stop"), b"data: [DONE]\n\n"], "chat"
    if name == "chat-arguments":
        start = {"index": 0, "id": "call_1", "type": "function"}
        function = {"name": "write_file", "arguments": ""}
        events = [_chat({"role": "assistant", "content": None})]
        events.append(_chat({"tool_calls": [{**start, "function": function}]}))
        events += [
            _chat({"tool_calls": [{"index": 0, "function": {"arguments": p}}]})
            for p in _pieces(400)
        ]
        return [*events, _chat({}, "tool_calls"), b"data: [DONE]\n\n"], "chat"
    if name == "anthropic":
        message = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
        events = [_anthropic({"type": "message_start", "message": message})]
        blocks = (
            ({"type": "thinking", "thinking": "", "signature": ""}, "thinking_delta", "thinking"),
            ({"type": "text", "text": ""}, "text_delta", "text"),
            ({"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {}}, "", ""),
        )
        for index, (block, kind, field) in enumerate(blocks):
            events.append(
                _anthropic({"type": "content_block_start", "index": index, "content_block": block})
            )
            for piece in _pieces(130) if not kind else ["word "] * 130:
                delta = (
                    {"type": kind, field: piece}
                    if kind
                    else {"type": "input_json_delta", "partial_json": piece}
                )
                events.append(
                    _anthropic({"type": "content_block_delta", "index": index, "delta": delta})
                )
            events.append(_anthropic({"type": "content_block_stop", "index": index}))
        end = {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}}
        return [*events, _anthropic(end), _anthropic({"type": "message_stop"})], "anthropic"
    sys.path.insert(1, str(HERE))
    from bench_proxy import build_stream

    data = build_stream(60)
    return [e + b"\n\n" for e in data.split(b"\n\n")[:-1]], "chat"


def child(name: str, rounds: int, timed: bool) -> None:
    """Run in the tree on ``sys.path``: ``rounds`` relays of the stream; with ``timed``,
    print the median CPU time per event and the build."""
    import streamrepair
    from streamrepair.proxy import AnthropicRelay, ChatRelay

    events, protocol = stream(name)
    relay_class: Any = ChatRelay if protocol == "chat" else AnthropicRelay
    tools = (
        _TOOLS
        if protocol == "chat"
        else [{"name": "write_file", "input_schema": _TOOLS[0]["function"]["parameters"]}]
    )

    def one() -> None:
        relay = relay_class(tools=tools)
        for event in events:
            relay.feed(event)
        relay.finish()
        relay.memos()
        relay.final()

    one()  # imports, caches
    times = []
    for _ in range(rounds):
        start = time.process_time()
        one()
        times.append(time.process_time() - start)
    if timed:
        per_event = statistics.median(times) / len(events)
        info = {"per_event": per_event, "events": len(events)}
        info["build"] = str(streamrepair.build_info())
        print(json.dumps(info))


# -- the parent ----------------------------------------------------------------------------


def _run(tree: Path, name: str, rounds: int, *, timed: bool, valgrind: str | None = None) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    command = [sys.executable, str(Path(__file__).resolve()), "--child", name, str(rounds)]
    if timed:
        command.append("--timed")
    if valgrind is not None:
        command = [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *command]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True, cwd="/")
    return done.stdout + done.stderr


def instructions(tree: Path, name: str, events: int, valgrind: str) -> float:
    """Instructions per event: a run of three relays minus a run of one, halved."""

    def collected(rounds: int) -> int:
        out = _run(tree, name, rounds, timed=False, valgrind=valgrind)
        return int(out.rsplit("Collected : ", 1)[1].split()[0])

    return (collected(3) - collected(1)) / 2 / events


def measure(trees: list[tuple[str, Path]], rounds: int, callgrind: bool) -> list[dict[str, Any]]:
    valgrind = shutil.which("valgrind") if callgrind else None
    rows = []
    for name, label in STREAMS:
        row: dict[str, Any] = {"stream": label}
        for tag, tree in trees:
            info = json.loads(_run(tree, name, rounds, timed=True).strip().splitlines()[-1])
            row[f"{tag}_us"] = info["per_event"] * 1e6
            row["events"] = info["events"]
            row[f"{tag}_build"] = info["build"]
            if valgrind is not None:
                row[f"{tag}_k"] = instructions(tree, name, info["events"], valgrind) / 1e3
        rows.append(row)
        print(row, flush=True)
    return rows


def table(rows: list[dict[str, Any]], tags: list[str], callgrind: bool) -> str:
    head = ["stream", "events"]
    for tag in tags:
        head.append(f"CPU per event, {tag} (µs)")
    if callgrind:
        head += [f"instructions per event, {tag} (k)" for tag in tags]
    if len(tags) == 2:
        head.append("after / before (instructions)" if callgrind else "after / before (CPU)")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [row["stream"], str(row["events"])]
        cells += [f"{row[f'{tag}_us']:.1f}" for tag in tags]
        if callgrind:
            cells += [f"{row[f'{tag}_k']:.0f}" for tag in tags]
        if len(tags) == 2:
            key = "_k" if callgrind else "_us"
            cells.append(f"{row[tags[1] + key] / row[tags[0] + key]:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), "--timed" in sys.argv)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare-with", type=Path, help="an earlier source tree ('before')")
    parser.add_argument("--rounds", type=int, default=30, help="relays timed per stream")
    parser.add_argument("--callgrind", action="store_true", help="count instructions too")
    parser.add_argument("--write-docs", action="store_true", help="update docs/performance.md")
    args = parser.parse_args()
    trees: list[tuple[str, Path]] = []
    if args.compare_with is not None:
        trees.append(("before", args.compare_with.resolve()))
    trees.append(("after" if trees else "this tree", ROOT))
    callgrind = args.callgrind and shutil.which("valgrind") is not None
    load = os.getloadavg()[0]
    when = time.strftime("%Y-%m-%d %H:%M")
    with tempfile.TemporaryDirectory():
        rows = measure(trees, args.rounds, callgrind)
    tags = [tag for tag, _ in trees]
    text = table(rows, tags, callgrind)
    builds = "; ".join(f"{tag}: {rows[0][tag + '_build']}" for tag in tags)
    summary = (
        f"Run of {when} on {os.cpu_count()} cores shared with other work (load average "
        f"{load:.1f} at the start); CPU time the median of {args.rounds} relays per stream"
        + ("; instructions counted with callgrind" if callgrind else "")
        + f". Builds: {builds}."
    )
    print(summary)
    print(text)
    if args.write_docs:
        from _report import write_section

        write_section("bench_relay", summary + "\n\n" + text)


if __name__ == "__main__":
    main()
