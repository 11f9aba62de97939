"""A complete async tool loop for DeepSeek thinking mode, with streamrepair.

    python examples/deepseek_tool_loop.py              # offline: a scripted fake DeepSeek
    python examples/deepseek_tool_loop.py --trio       # the same on trio
    python examples/deepseek_tool_loop.py --anthropic  # over the Anthropic Messages API
    DEEPSEEK_API_KEY=... python examples/deepseek_tool_loop.py --live [--anthropic]

By default it talks Chat Completions with the OpenAI SDK (``pip install openai``) and
DeepSeek's settings: ``model="deepseek-v4-flash"`` and ``extra_body={"thinking":
{"type": "enabled"}}``. With ``--anthropic`` it talks the Anthropic Messages API with
the Anthropic SDK (``pip install anthropic``), as to DeepSeek's
``https://api.deepseek.com/anthropic`` (or Claude: the loop is the same). Offline, a
fake server on 127.0.0.1 plays a scripted conversation and answers HTTP 400 to the
histories the real API rejects (no network, no API key):

* turn 1: two parallel ``get_weather`` calls (one repaired: a trailing comma and
  ``"days": "2"``), a ``write_file`` cut off at the output limit and answered with
  guidance, the retry, the final answer;
* turn 2: the user presses stop while a call is streaming (the abort fence);
* turn 3: a clean turn after the abort.

The loop itself is :func:`run_user_turn`: :class:`~streamrepair.Conversation` keeps the
history and the reasoning policy, :class:`~streamrepair.AbortFence` makes the turn
interruptible, :func:`~streamrepair.run_tool_calls` runs the parallel calls.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import http.server
import json
import os
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import anyio

from streamrepair import (
    AbortFence,
    Conversation,
    Done,
    FencePhase,
    Provider,
    ReasoningDelta,
    ReasoningPolicy,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallRejected,
    aiter_events,
    run_tool_calls,
)

MODEL = "deepseek-v4-flash"
THINKING = {"thinking": {"type": "enabled"}}
#: Model requests per user turn at most (a model that keeps calling tools is stopped).
MAX_STEPS = 8

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather forecast for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer", "description": "Days ahead, default 1."},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Write (or append to) a text file.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "content": {"type": "string"},
                    "append": {"type": "boolean"},
                },
                "required": ["path", "content"],
            },
        },
    },
]

#: The same tools as the Anthropic Messages API takes them.
ANTHROPIC_TOOLS: list[dict[str, Any]] = [
    {
        "name": t["function"]["name"],
        "description": t["function"]["description"],
        "input_schema": t["function"]["parameters"],
    }
    for t in TOOLS
]
#: Anthropic's ``max_tokens`` (required) and thinking settings (DeepSeek ignores the budget).
MAX_TOKENS = 8192
ANTHROPIC_THINKING = {"type": "enabled", "budget_tokens": 4096}

FORECASTS = {"Hangzhou": "cloudy, 7~13°C", "Suzhou": "light rain, 9~14°C"}


class Workspace:
    """The tools, run locally: a weather table and an in-memory file system."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}

    async def run(self, call: ToolCallReady) -> str:
        args = call.arguments
        if call.name == "get_weather":
            forecast = FORECASTS.get(args["city"], "no data")
            return f"{args['city']}, {args.get('days', 1)} day(s): {forecast}"
        if call.name == "write_file":
            old = self.files.get(args["path"], "") if args.get("append") else ""
            self.files[args["path"]] = old + args["content"]
            return f"wrote {len(args['content'])} characters to {args['path']}"
        raise ValueError(f"no tool {call.name}")


EventHook = Callable[[StreamEvent], Awaitable[None]]


async def open_stream(client: Any, conversation: Conversation) -> Any:
    """The request for the next response, in the conversation's protocol."""
    if conversation.provider is Provider.ANTHROPIC:
        system = {"system": conversation.system} if conversation.system else {}
        return await client.messages.create(
            model=conversation.model,
            max_tokens=MAX_TOKENS,
            messages=conversation.messages(),
            tools=ANTHROPIC_TOOLS,
            thinking=ANTHROPIC_THINKING,
            stream=True,
            **system,
        )
    return await client.chat.completions.create(
        model=conversation.model,
        messages=conversation.messages(),
        tools=TOOLS,
        stream=True,
        extra_body=THINKING,
    )


async def run_user_turn(
    client: Any,
    conversation: Conversation,
    fence: AbortFence,
    text: str,
    *,
    workspace: Workspace,
    on_event: EventHook | None = None,
    on_abort: Callable[[], object] | None = None,
) -> FencePhase:
    """One user turn: request, stream, run the calls, repeat until the model answers.

    The turn is one phase of ``fence``: ``await fence.abort()`` from another task (a
    stop button) or cancelling this task ends it; the history is left complete, every
    call answered, ready for the next turn.
    """
    conversation.add_user(text)
    async with fence.phase() as phase:
        if on_abort is not None:
            phase.on_abort("on-abort", on_abort)  # registered, not run
        for _ in range(MAX_STEPS):
            stream = await open_stream(client, conversation)
            events = aiter_events(stream, tools=TOOLS)
            seen: list[StreamEvent] = []
            try:
                async with events:
                    async for event in events:
                        if isinstance(event, ToolCallReady | ToolCallRejected | Done):
                            seen.append(event)
                        if on_event is not None:
                            await on_event(event)
            finally:  # also on abort: the partial response goes in, its calls answered
                batch = conversation.add_response(seen, core=events.core)
            if batch.ready:
                await run_tool_calls(conversation, workspace.run)
            elif not batch.rejected and not batch.paused:
                break  # the model answered; the turn is over
    conversation.cancel_pending()  # after an abort: answer anything still waiting
    return phase


# -- the offline demo: a fake DeepSeek -----------------------------------------------------


def chunk(delta: Mapping[str, Any], finish: str | None = None) -> dict[str, Any]:
    """One ``chat.completion.chunk`` as DeepSeek streams it."""
    usage = None
    if finish is not None:
        usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
    return {
        "id": "3f1d2c4b-5a6e-4f70-8b9c-0d1e2f3a4b5c",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": MODEL,
        "system_fingerprint": "fp_eaab8d114b_prod0820_fp8_kvcache",
        "choices": [{"index": 0, "delta": dict(delta), "logprobs": None, "finish_reason": finish}],
        "usage": usage,
    }


def _pieces(text: str) -> Iterator[str]:
    """DeepSeek's small fragments: each quote on its own, words apart."""
    word = ""
    for char in text:
        if char in '"{}':
            if word:
                yield word
            yield char
            word = ""
        else:
            word += char
    if word:
        yield word


@dataclass(frozen=True)
class Reply:
    """A scripted response: reasoning, text, calls ``(id, name, argument text)``, and the
    finish reason; ``stall`` stops after the calls' text and waits for the client to go."""

    reasoning: str
    content: str = ""
    calls: tuple[tuple[str, str, str], ...] = ()
    finish: str = "stop"
    stall: bool = False

    def chunks(self) -> list[dict[str, Any]]:
        out = [chunk({"role": "assistant", "content": None, "reasoning_content": ""})]
        first, *rest = self.reasoning.split(" ")
        for word in [first, *(" " + w for w in rest)]:
            out.append(chunk({"content": None, "reasoning_content": word}))
        out += [chunk({"content": piece, "reasoning_content": None}) for piece in self.content]
        for index, (call_id, name, arguments) in enumerate(self.calls):
            head = {"index": index, "id": call_id, "type": "function"}
            head["function"] = {"name": name, "arguments": ""}
            out.append(chunk({"tool_calls": [head]}))
            for piece in _pieces(arguments):
                fragment = {"index": index, "function": {"arguments": piece}}
                out.append(chunk({"tool_calls": [fragment]}))
        if not self.stall:
            out.append(chunk({"content": "", "reasoning_content": None}, self.finish))
        return out

    def anthropic_events(self) -> list[dict[str, Any]]:
        """The same response as the Anthropic Messages API streams it: a signed thinking
        block, the text, a ``tool_use`` block per call; the call cut by ``length`` is
        never closed (``max_tokens``)."""
        message = {
            "id": "msg_01Hz8mA2kQfY5cRb3vNw7ZtE",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 1},
        }
        out: list[dict[str, Any]] = [{"type": "message_start", "message": message}]

        def block(index: int, start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
            out.append({"type": "content_block_start", "index": index, "content_block": start})
            out.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)

        first, *rest = self.reasoning.split(" ")
        words = [first, *(" " + w for w in rest)]
        thinking = [{"type": "thinking_delta", "thinking": w} for w in words]
        thinking.append({"type": "signature_delta", "signature": sign(self.reasoning)})
        block(0, {"type": "thinking", "thinking": "", "signature": ""}, thinking)
        out.append({"type": "content_block_stop", "index": 0})
        index = 1
        if self.content:
            block(
                index, {"type": "text", "text": ""}, [{"type": "text_delta", "text": self.content}]
            )
            out.append({"type": "content_block_stop", "index": index})
            index += 1
        for n, (call_id, name, arguments) in enumerate(self.calls):
            start = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
            pieces = [{"type": "input_json_delta", "partial_json": p} for p in _pieces(arguments)]
            block(index, start, pieces)
            last = n == len(self.calls) - 1
            if not (last and (self.stall or self.finish == "length")):
                out.append({"type": "content_block_stop", "index": index})
            index += 1
        if not self.stall:
            reason = {"tool_calls": "tool_use", "length": "max_tokens"}.get(self.finish, "end_turn")
            delta = {"stop_reason": reason, "stop_sequence": None}
            out.append({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 20}})
            out.append({"type": "message_stop"})
        return out


def sign(thinking: str) -> str:
    """The fake server's thinking signature: the real ones are opaque and verified by the
    server, so a thinking block whose text changed is rejected."""
    return "EqQB" + hashlib.sha256(b"fake-anthropic/" + thinking.encode()).hexdigest()[:40]


REPORT = "# Weather\n\nHangzhou: cloudy, 7~13°C\nSuzhou: light rain, 9~14°C\n"
SCRIPT: tuple[Reply, ...] = (
    Reply(
        "The user wants the weather in two cities; I call get_weather twice.",
        calls=(
            ("call_00_Tcek83ZQ4fFb1RfPQnsPEE5w", "get_weather", '{"city": "Hangzhou"}'),
            ("call_01_L8UtYbkfaMFr7hzsToGPWGfI", "get_weather", '{"city": "Suzhou", "days": "2",}'),
        ),
        finish="tool_calls",
    ),
    Reply(
        "Both forecasts are in. Now I save the report.",
        calls=(
            (
                "call_00_V0Uwt4i63m5QnWRS1q1AO1tP",
                "write_file",
                '{"path": "report.md", "content": "# Weather report for Hangzhou and Suzhou\\n\\n',
            ),
        ),
        finish="length",
    ),
    Reply(
        "The write was cut off; I send a shorter file.",
        calls=(
            (
                "call_00_IhCAliIHtM9gKpgfqbBV9873",
                "write_file",
                json.dumps({"path": "report.md", "content": REPORT}),
            ),
        ),
        finish="tool_calls",
    ),
    Reply("The report is saved.", content="Saved report.md: Hangzhou is cloudy, Suzhou rainy."),
    Reply(
        "Ningbo too; I call get_weather.",
        calls=(("call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "get_weather", '{"city": "Ning'),),
        stall=True,
    ),
    Reply("The user is done.", content="You're welcome!"),
)
USER_TURNS = (
    "What's the weather in Hangzhou and Suzhou? Save a report to report.md.",
    "Add Ningbo to the report.",
    "Never mind, that's all. Thanks!",
)


ORPHAN_ERROR = (
    "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'."
)
UNANSWERED_ERROR = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding "
    "to each 'tool_call_id'."
)
REASONING_ERROR = "The reasoning_content in the thinking mode must be passed back to the API."


def api_problem(body: Mapping[str, Any], rule: ReasoningPolicy) -> str | None:
    """Why the real API would answer 400, or None. ``rule`` is the server's generation:
    KEEP_FOR_TOOL_CALLS (V4), CLEAR_ON_USER_TURN (the Dec 2025 guide) or NEVER_SEND (R1).
    Written apart from streamrepair, from the documented errors.

    The thinking-mode rule is DeepSeek's guide's: between two user messages, if the
    model called tools, the reasoning_content of every assistant message in between
    (the final answer included: the guide's sample appends each sub-turn's message
    unchanged) must be passed back in all later requests (V4), or in the current user
    turn only (Dec 2025)."""
    messages = body["messages"]
    turn_of: list[int] = []
    turns_with_calls: set[int] = set()
    turn = -1
    for m in messages:
        if m["role"] == "user":
            turn += 1
        turn_of.append(turn)
        if m["role"] == "assistant" and m.get("tool_calls"):
            turns_with_calls.add(turn)
    waiting: set[str] = set()
    for i, m in enumerate(messages):
        if m["role"] == "tool":
            if m["tool_call_id"] not in waiting:
                return ORPHAN_ERROR
            waiting.discard(m["tool_call_id"])
            continue
        if waiting:
            return UNANSWERED_ERROR
        if m["role"] != "assistant":
            continue
        if m.get("content") is None:
            return f"messages[{i}].content: null is not allowed"
        if rule is ReasoningPolicy.NEVER_SEND and "reasoning_content" in m:
            return f"messages[{i}]: reasoning_content is not supported in input messages"
        needed = turn_of[i] in turns_with_calls and (
            rule is ReasoningPolicy.KEEP_FOR_TOOL_CALLS
            or (rule is ReasoningPolicy.CLEAR_ON_USER_TURN and turn_of[i] == turn)
        )
        if needed and not isinstance(m.get("reasoning_content"), str):
            return REASONING_ERROR
        waiting = {c["id"] for c in m.get("tool_calls", ())}
    return UNANSWERED_ERROR if waiting else None


ANTHROPIC_REASONING_ERROR = (
    "The `content[].thinking` in the thinking mode must be passed back to the API."
)


def anthropic_problem(body: Mapping[str, Any]) -> str | None:
    """Why the Anthropic Messages API would answer 400, or None, with its wording.
    Written apart from streamrepair, from the documented errors; a ``deepseek-*`` model
    adds DeepSeek's thinking rule (see :func:`api_problem`) for its ``/anthropic``
    endpoint.

    Consecutive user (or assistant) messages count as one turn, as the API combines
    them."""
    messages = body["messages"]
    thinking_on = body.get("thinking", {}).get("type") == "enabled"
    last = len(messages) - 1
    turns: list[tuple[str, list[tuple[int, int, dict[str, Any]]]]] = []
    for i, m in enumerate(messages):
        content = m["content"]
        if content in ("", []) and not (m["role"] == "assistant" and i == last):
            return (
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for j, b in enumerate(blocks):
            if b["type"] == "text" and b["text"] == "":
                return "messages: text content blocks must be non-empty"
            if b["type"] == "thinking":
                if "signature" not in b:
                    return f"messages.{i}.content.{j}.thinking.signature: Field required"
                if b["signature"] != sign(b["thinking"]):
                    return f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
        entries = [(i, j, b) for j, b in enumerate(blocks)]
        if turns and turns[-1][0] == m["role"]:
            turns[-1][1].extend(entries)
        else:
            turns.append((m["role"], entries))
    for k, (role, entries) in enumerate(turns):
        if role != "assistant":
            continue
        uses = [b["id"] for _, _, b in entries if b["type"] == "tool_use"]
        after = turns[k + 1][1] if k + 1 < len(turns) else []
        leading = []
        for _, _, b in after:
            if b["type"] != "tool_result":
                break
            leading.append(b["tool_use_id"])
        missing = [u for u in uses if u not in leading]
        if missing:
            return (
                f"messages.{entries[0][0]}: `tool_use` ids were found without `tool_result` "
                f"blocks immediately after: {', '.join(missing)}. Each `tool_use` block must "
                "have a corresponding `tool_result` block in the next message."
            )
        for i, j, b in after:
            if b["type"] == "tool_result" and b["tool_use_id"] not in uses:
                return (
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {b['tool_use_id']}. Each `tool_result` block must "
                    "have a corresponding `tool_use` block in the previous message."
                )
    if turns and turns[0][0] == "user":
        first = turns[0][1]
        for i, j, b in first:
            if b["type"] == "tool_result":
                return (
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {b['tool_use_id']}. Each `tool_result` block must "
                    "have a corresponding `tool_use` block in the previous message."
                )
    final = next((e for r, e in reversed(turns) if r == "assistant"), None)
    if thinking_on and final and any(b["type"] == "tool_use" for _, _, b in final):
        i, _, b = final[0]
        if b["type"] not in ("thinking", "redacted_thinking"):
            return (
                f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, "
                f"but found `{b['type']}`. When `thinking` is enabled, a final `assistant` "
                "message must start with a thinking block (preceeding the lastmost set of "
                "`tool_use` and `tool_result` blocks)."
            )
    if str(body.get("model", "")).startswith("deepseek"):
        return _deepseek_thinking_problem(messages)
    return None


def _deepseek_thinking_problem(messages: list[dict[str, Any]]) -> str | None:
    """DeepSeek's rule over the Anthropic format: in a user turn where the model used a
    tool, every assistant message carries its thinking back."""
    turn_of: list[int] = []
    used_tools: set[int] = set()
    turn = -1
    for m in messages:
        content = m["content"]
        blocks = [{"type": "text"}] if isinstance(content, str) else content
        if m["role"] == "user" and any(b["type"] != "tool_result" for b in blocks):
            turn += 1  # a message the user wrote, not only tool results
        turn_of.append(turn)
        if m["role"] == "assistant" and any(b["type"] == "tool_use" for b in blocks):
            used_tools.add(turn)
    for i, m in enumerate(messages):
        if m["role"] != "assistant" or turn_of[i] not in used_tools:
            continue
        content = m["content"]
        if isinstance(content, str) or not any(b["type"] == "thinking" for b in content):
            return ANTHROPIC_REASONING_ERROR
    return None


class FakeDeepSeek:
    """``POST /chat/completions`` on 127.0.0.1, answering from ``script`` in order.

    Every request body is kept in :attr:`requests`. A history the real API rejects gets
    HTTP 400 with DeepSeek's error body (see :func:`api_problem`). Use as a context
    manager; :attr:`base_url` is where to point the client.
    """

    path = "/chat/completions"
    keep_alive = b": keep-alive\n\n"

    def __init__(
        self, script: tuple[Reply, ...] = SCRIPT, *, rule: ReasoningPolicy | None = None
    ) -> None:
        self.script = list(script)
        self.rule = ReasoningPolicy.KEEP_FOR_TOOL_CALLS if rule is None else rule
        self.requests: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                if self.path.split("?")[0] != fake.path:
                    self.send_error(404)
                    return
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake._lock:
                    fake.requests.append(body)
                    problem = fake.problem(body)
                    reply = fake.script.pop(0) if problem is None and fake.script else None
                if reply is None:
                    data = json.dumps(fake.error(problem or "script exhausted")).encode()
                    self.send_response(400)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                try:
                    for frame in fake.frames(reply):
                        self.wfile.write(frame)
                    self.wfile.flush()
                    # Stalled: keep the connection open until the client goes away.
                    while reply.stall and not fake._stop.wait(0.02):
                        self.wfile.write(fake.keep_alive)
                        self.wfile.flush()
                except OSError:
                    pass  # the client closed the connection (an abort)

            def log_message(self, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def problem(self, body: Mapping[str, Any]) -> str | None:
        """Why the real API would answer 400 (None: it would not)."""
        return api_problem(body, self.rule)

    def frames(self, reply: Reply) -> list[bytes]:
        """The SSE frames of one scripted response."""
        out = [b"data: " + json.dumps(item).encode() + b"\n\n" for item in reply.chunks()]
        return out if reply.stall else [*out, b"data: [DONE]\n\n"]

    @staticmethod
    def error(message: str) -> dict[str, Any]:
        """The 400 body."""
        return {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_request_error",
            }
        }

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeDeepSeek:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


class FakeAnthropic(FakeDeepSeek):
    """``POST /v1/messages``: the same script as the Anthropic Messages API streams it
    (:meth:`Reply.anthropic_events`), and HTTP 400 with Anthropic's error body where the
    real API would answer it (see :func:`anthropic_problem`)."""

    path = "/v1/messages"
    keep_alive = b'event: ping\ndata: {"type": "ping"}\n\n'

    def problem(self, body: Mapping[str, Any]) -> str | None:
        return anthropic_problem(body)

    def frames(self, reply: Reply) -> list[bytes]:
        return [
            f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode()
            for e in reply.anthropic_events()
        ]

    @staticmethod
    def error(message: str) -> dict[str, Any]:
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}

    def __enter__(self) -> FakeAnthropic:
        super().__enter__()
        return self


@dataclass
class DemoResult:
    conversation: Conversation
    phases: list[FencePhase]
    workspace: Workspace
    stopped: list[int]  # phases whose abort handler ran


def make_client(base_url: str, *, anthropic: bool, api_key: str = "sk-offline") -> Any:
    """The SDK's async client: OpenAI's for Chat Completions, Anthropic's for Messages."""
    if anthropic:
        from anthropic import AsyncAnthropic

        return AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0)
    from openai import AsyncOpenAI

    return AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0)


def make_conversation(policy: ReasoningPolicy | None = None, *, anthropic: bool) -> Conversation:
    provider = Provider.ANTHROPIC if anthropic else Provider.OPENAI
    return Conversation(
        MODEL, policy=policy, system="You are a helpful assistant.", provider=provider
    )


async def demo(
    base_url: str,
    *,
    policy: ReasoningPolicy | None = None,
    echo: bool = False,
    anthropic: bool = False,
) -> DemoResult:
    """The scripted conversation: three user turns, the user presses stop in turn 2
    as soon as the ``get_weather`` call starts streaming. ``anthropic``: over the
    Anthropic Messages API (a :class:`FakeAnthropic` at ``base_url``)."""
    client = make_client(base_url, anthropic=anthropic)
    conversation = make_conversation(policy, anthropic=anthropic)
    fence = AbortFence()
    workspace = Workspace()
    stopped: list[int] = []
    phases: list[FencePhase] = []
    stop_pressed = anyio.Event()

    async def show(event: StreamEvent) -> None:
        if isinstance(event, ToolCallDelta) and fence.phases_started == 2:
            stop_pressed.set()  # the user sees the call start and presses stop
        if echo:
            if isinstance(event, ReasoningDelta | TextDelta):
                print(event.text, end="", flush=True)
            elif isinstance(event, ToolCallReady | ToolCallRejected):
                print(f"\n[{event.type}: {event.name}]", flush=True)

    async def stop_button() -> None:
        await stop_pressed.wait()
        await fence.abort()

    async with client:
        for number, text in enumerate(USER_TURNS, start=1):
            if echo:
                print(f"\n\n>>> {text}")
            async with anyio.create_task_group() as group:
                if number == 2:
                    group.start_soon(stop_button)
                phase = await run_user_turn(
                    client,
                    conversation,
                    fence,
                    text,
                    workspace=workspace,
                    on_event=show,
                    on_abort=functools.partial(stopped.append, number),
                )
                group.cancel_scope.cancel()  # the stop button goes away with the turn
            phases.append(phase)
            if echo and phase.aborted:
                print("\n[stopped by the user]")
    return DemoResult(conversation, phases, workspace, stopped)


async def live(*, anthropic: bool = False) -> None:
    """Two turns against api.deepseek.com (needs ``DEEPSEEK_API_KEY``); ``anthropic``:
    through its Anthropic-format endpoint."""
    base_url = "https://api.deepseek.com" + ("/anthropic" if anthropic else "")
    client = make_client(base_url, anthropic=anthropic, api_key=os.environ["DEEPSEEK_API_KEY"])
    conversation = make_conversation(anthropic=anthropic)
    fence, workspace = AbortFence(), Workspace()

    async def show(event: StreamEvent) -> None:
        if isinstance(event, ReasoningDelta | TextDelta):
            print(event.text, end="", flush=True)

    async with client:
        for text in (USER_TURNS[0], "Now add Ningbo to the report."):
            print(f"\n\n>>> {text}")
            await run_user_turn(
                client, conversation, fence, text, workspace=workspace, on_event=show
            )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--live", action="store_true", help="use api.deepseek.com")
    parser.add_argument("--trio", action="store_true", help="run on trio")
    parser.add_argument(
        "--anthropic", action="store_true", help="the Anthropic Messages API (anthropic SDK)"
    )
    args = parser.parse_args(argv)
    backend = "trio" if args.trio else "asyncio"
    if args.live:
        anyio.run(functools.partial(live, anthropic=args.anthropic), backend=backend)
        return
    fake = FakeAnthropic() if args.anthropic else FakeDeepSeek()
    with fake as server:
        result = anyio.run(
            lambda: demo(server.base_url, echo=True, anthropic=args.anthropic), backend=backend
        )
    print(f"\n\n{len(server.requests)} requests, files: {sorted(result.workspace.files)}")


if __name__ == "__main__":
    main()
