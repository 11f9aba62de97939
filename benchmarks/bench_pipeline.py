"""The whole streamrepair pipeline vs openai-python's ChatCompletionStreamState.

Both get the same Chat Completions stream: one ``write_file`` tool call whose arguments
(a file's content, like an agent writing code) grow to SIZE bytes, in small fragments as
models stream them. Measured:

* ``streamrepair sse``: raw SSE bytes in, one network piece per event -> SSE decode,
  normalize, assemble, preview per delta (``ToolCallStream.feed``);
* ``streamrepair chunks``: the same chunks already parsed to dicts;
* ``sr no-preview``: from SSE bytes with ``previews=False``;
* ``openai state``: ``ChatCompletionStreamState.handle_chunk`` with the chunks already
  built as ``ChatCompletionChunk`` objects (not timed), the tool declared ``strict`` so it
  parses the arguments (it re-parses the whole buffer with jiter on every chunk);
* ``openai e2e``: what openai-python does with the same bytes: its ``SSEDecoder``, JSON,
  ``construct_type`` into ``ChatCompletionChunk``, then the state.

The table shows the median total time of several runs, two ratios (openai time /
streamrepair time: both fed the same parsed chunks, and both from the same bytes), and the per-chunk cost (median of the first and of the last tenth of
the chunks) to show whether it stays flat as the arguments grow. A preview holds the
open string, so a preview per delta copies it (C memcpy); ``sr no-preview`` shows the
cost without that. No assertion is made: this is a report.

    python benchmarks/bench_pipeline.py            # 4 sizes up to 64 KB, 3 runs
    python benchmarks/bench_pipeline.py --quick    # 1 KB and 34 KB only (about 20 s)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from streamrepair import CallProgress, ToolCallStream

FRAGMENT = 6  # characters of argument text per chunk (DeepSeek sends even smaller ones)
TOOL: Any = {
    "type": "function",
    "function": {
        "name": "write_file",
        "strict": True,
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
            "additionalProperties": False,
        },
    },
}


def arguments(size: int) -> str:
    line = "    result = compute(value, factor=2)  # keep the loop simple\n"
    content = (line * (size // len(line) + 1))[: max(size - 40, 0)]
    return json.dumps({"path": "src/app/module.py", "content": content})


def chunks(size: int) -> list[dict[str, Any]]:
    base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    text = arguments(size)
    out = [
        chunk({"role": "assistant", "content": None}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_bench",
                        "type": "function",
                        "function": {"name": "write_file", "arguments": ""},
                    }
                ]
            }
        ),
    ]
    for i in range(0, len(text), FRAGMENT):
        piece = text[i : i + FRAGMENT]
        out.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
    out.append(chunk({}, "tool_calls"))
    return out


def timed(feeds: list[Callable[[], object]]) -> tuple[float, list[float]]:
    per: list[float] = []
    clock = time.perf_counter
    start = clock()
    for feed in feeds:
        t = clock()
        feed()
        per.append(clock() - t)
    return clock() - start, per


def run_streamrepair_sse(events: list[bytes], previews: bool = True) -> tuple[float, list[float]]:
    core = ToolCallStream(previews=previews)
    total, per = timed([partial(core.feed, e) for e in events])
    t = time.perf_counter()
    core.finish()
    assert core.calls[0][2] is CallProgress.READY, core.calls
    return total + time.perf_counter() - t, per


def run_streamrepair_chunks(dicts: list[dict[str, Any]]) -> tuple[float, list[float]]:
    core = ToolCallStream()
    total, per = timed([partial(core.feed, c) for c in dicts])
    t = time.perf_counter()
    core.finish()
    assert core.calls[0][2] is CallProgress.READY, core.calls
    return total + time.perf_counter() - t, per


def _handle(state: Any, chunk: Any) -> None:
    list(state.handle_chunk(chunk))


def run_openai(objects: list[Any]) -> tuple[float, list[float]]:
    from openai.lib.streaming.chat import ChatCompletionStreamState

    state: Any = ChatCompletionStreamState(input_tools=[TOOL])
    total, per = timed([partial(_handle, state, o) for o in objects])
    snapshot = state.current_completion_snapshot
    assert snapshot.choices[0].message.tool_calls[0].function.parsed_arguments is not None
    return total, per


def run_openai_e2e(events: list[bytes]) -> tuple[float, list[float]]:
    from openai._models import construct_type
    from openai._streaming import SSEDecoder
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state: Any = ChatCompletionStreamState(input_tools=[TOOL])
    start = time.perf_counter()
    for sse in SSEDecoder().iter_bytes(iter(events)):
        if sse.data.startswith("[DONE]"):
            break
        chunk = construct_type(type_=ChatCompletionChunk, value=sse.json())
        list(state.handle_chunk(chunk))
    total = time.perf_counter() - start
    assert state.current_completion_snapshot.choices[0].message.tool_calls
    return total, []


def tenths(per: list[float]) -> tuple[float, float]:
    n = max(len(per) // 10, 1)
    return statistics.median(per[:n]) * 1e6, statistics.median(per[-n:]) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="only 1 KB and 34 KB")
    parser.add_argument("--runs", type=int, help="runs per measurement (median reported)")
    args = parser.parse_args(argv)
    sizes = [1024, 34 * 1024] if args.quick else [1024, 8 * 1024, 34 * 1024, 64 * 1024]
    runs = args.runs or 3
    try:
        from openai.types.chat import ChatCompletionChunk
    except ImportError:
        print("openai is not installed: pip install -e '.[bench]'", file=sys.stderr)
        return 2

    header = (
        f"{'args':>6} {'chunks':>6} | {'sr sse':>7} {'sr dicts':>8} {'sr nopv':>7} "
        f"{'oa state':>8} {'oa e2e':>7} | {'chunks':>6} {'bytes':>6} | per-chunk us, "
        "first -> last tenth: sr sse, sr no-preview, openai state"
    )
    print(header)
    print("-" * len(header))
    for size in sizes:
        dicts = chunks(size)
        events = [f"data: {json.dumps(c)}\n\n".encode() for c in dicts] + [b"data: [DONE]\n\n"]
        objects = [ChatCompletionChunk.model_validate(c) for c in dicts]
        results: dict[str, list[tuple[float, list[float]]]] = {
            "sse": [],
            "dicts": [],
            "nopv": [],
            "state": [],
            "e2e": [],
        }
        for _ in range(runs):
            results["sse"].append(run_streamrepair_sse(events))
            results["dicts"].append(run_streamrepair_chunks(dicts))
            results["nopv"].append(run_streamrepair_sse(events, previews=False))
            results["state"].append(run_openai(objects))
            results["e2e"].append(run_openai_e2e(events))
        med = {k: statistics.median(t for t, _ in v) for k, v in results.items()}
        flat = [
            "{:.0f} -> {:.0f}".format(*tenths(results[k][-1][1])) for k in ("sse", "nopv", "state")
        ]
        print(
            f"{size // 1024:>4}KB {len(dicts):>6} | {med['sse'] * 1e3:>5.0f}ms "
            f"{med['dicts'] * 1e3:>6.0f}ms {med['nopv'] * 1e3:>5.0f}ms "
            f"{med['state'] * 1e3:>6.0f}ms {med['e2e'] * 1e3:>5.0f}ms | "
            f"{med['state'] / med['dicts']:>5.1f}x {med['e2e'] / med['sse']:>5.1f}x | "
            + ", ".join(flat)
        )
    print(
        f"\nmedians of {runs} runs. Ratios, openai time / streamrepair time (higher is better "
        "for streamrepair): 'chunks' = both fed the parsed chunks (oa state / sr dicts), "
        "'bytes' = both from the raw SSE bytes (oa e2e / sr sse)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
