"""The official SDKs' objects as sources (openai, anthropic, google-genai), driven for real
against a server on loopback:
their streams and stream managers (openai ``chat.completions.stream``,
``beta.chat.completions.stream``, ``responses.stream``; anthropic ``messages.stream``),
their raw responses (``APIResponse``, ``LegacyAPIResponse``) and the ``httpx`` / ``httpx2``
responses under them, sync and async; what a consumer gets when the SDK itself raises
mid-stream; no pydantic warnings on chunks of unusual shape (the suite runs with
``-W error``); and the Anthropic ``pause_turn`` continuation sent back through the SDK.

Each case is compared with the same fixture read from its bytes: an SDK object must give
the same events. Skipped when an SDK is not installed.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from streamrepair import (
    Done,
    RejectReason,
    StopReason,
    StreamEvent,
    StreamFailed,
    ToolCallReady,
    ToolCallRejected,
    ToolCallStream,
    aiter_events,
    iter_events,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sse"
openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")


class _Handler(http.server.BaseHTTPRequestHandler):
    """Answers every POST with the fixture named by the request's ``model``, as chunked
    transfer encoding, one SSE event (or event-stream frame run) per chunk."""

    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        self.server.requests.append((self.path, request))
        # Gemini names the model in the path: /v1beta/models/<name>:streamGenerateContent
        in_path = re.search(r"/models/([^/:]+):", self.path)
        name = request.get("model") or (in_path.group(1) if in_path else "")
        data = (FIXTURES / name).read_bytes()
        self.send_response(200)
        binary = name.endswith(".eventstream")
        kind = "application/vnd.amazon.eventstream" if binary else "text/event-stream"
        self.send_header("content-type", kind)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        pieces = [data[i : i + 97] for i in range(0, len(data), 97)] if binary else None
        if pieces is None:
            pieces = [p + b"\n\n" for p in data.replace(b"\r\n", b"\n").split(b"\n\n") if p]
        try:
            for piece in pieces:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading at the end marker


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[tuple[str, dict[str, Any]]] = []

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up early is not a test failure

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}"


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    srv = _Server()
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture(params=["asyncio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def from_bytes(name: str) -> list[dict[str, Any]]:
    return [e.to_dict() for e in iter_events(FIXTURES / name)]


def dicts(events: list[StreamEvent]) -> list[dict[str, Any]]:
    return [e.to_dict() for e in events]


_CLIENTS: list[Any] = []


def oa(server: _Server) -> Any:
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="test", max_retries=0)
    _CLIENTS.append(client)
    return client


def an(server: _Server) -> Any:
    client = anthropic.Anthropic(base_url=server.url, api_key="test", max_retries=0)
    _CLIENTS.append(client)
    return client


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _CLIENTS:
        _CLIENTS.pop().close()  # no socket left for the garbage collector to warn about


CHAT = "deepseek-thinking-tools.sse"
MESSAGES = [{"role": "user", "content": "weather?"}]


# -- streams and stream managers ------------------------------------------------------------


def test_openai_stream(server: _Server) -> None:
    stream = oa(server).chat.completions.create(model=CHAT, messages=MESSAGES, stream=True)
    assert dicts(list(iter_events(stream))) == from_bytes(CHAT)


@pytest.mark.parametrize("beta", [False, True])
def test_openai_chat_completion_stream_manager(server: _Server, beta: bool) -> None:
    client = oa(server)
    resource = client.beta.chat.completions if beta else client.chat.completions
    with resource.stream(model=CHAT, messages=MESSAGES) as stream:
        events = list(iter_events(stream))
        final = stream.get_final_completion()  # the manager's own state still works
    assert dicts(events) == from_bytes(CHAT)
    assert final.choices[0].message.tool_calls[0].function.name == "weather"


def test_openai_responses_stream_manager(server: _Server) -> None:
    name = "responses-custom-tool-call.sse"
    with oa(server).responses.stream(model=name, input="sql?") as stream:
        events = list(iter_events(stream))
        final = stream.get_final_response()
    assert dicts(events) == from_bytes(name)
    assert [item.type for item in final.output] == [
        "reasoning",
        "custom_tool_call",
        "function_call",
    ]


@pytest.mark.parametrize(
    "name", ["anthropic-thinking-tool-use.sse", "anthropic-server-tool-web-search-pause-turn.sse"]
)
def test_anthropic_message_stream_manager(server: _Server, name: str) -> None:
    with an(server).messages.stream(model=name, max_tokens=64, messages=MESSAGES) as stream:
        events = list(iter_events(stream))
        final = stream.get_final_message()
    assert dicts(events) == from_bytes(name)
    assert final.stop_reason == events[-1].raw_stop_reason  # type: ignore[attr-defined]


def test_anthropic_beta_message_stream_with_mcp_blocks(server: _Server) -> None:
    name = "anthropic-mcp-tool-use-result.sse"
    client = an(server)
    with client.beta.messages.stream(model=name, max_tokens=64, messages=MESSAGES) as stream:
        events = list(iter_events(stream))
    assert dicts(events) == from_bytes(name)


@pytest.mark.anyio
async def test_async_stream_managers(server: _Server) -> None:
    async with (
        openai.AsyncOpenAI(base_url=server.url + "/v1", api_key="t", max_retries=0) as client,
        client.chat.completions.stream(model=CHAT, messages=MESSAGES) as stream,
    ):
        events = [e async for e in aiter_events(stream)]
        final = await stream.get_final_completion()
    assert dicts(events) == from_bytes(CHAT)
    assert final.choices[0].finish_reason == "tool_calls"
    name = "anthropic-thinking-tool-use.sse"
    async with (
        anthropic.AsyncAnthropic(base_url=server.url, api_key="t", max_retries=0) as claude,
        claude.messages.stream(model=name, max_tokens=64, messages=MESSAGES) as stream,
    ):
        async with aiter_events(stream) as found:
            events = [e async for e in found]
        message = await stream.get_final_message()
    assert dicts(events) == from_bytes(name)
    assert message.stop_reason == "tool_use"


# -- raw responses and the HTTP clients' responses -------------------------------------------


def test_openai_raw_responses(server: _Server) -> None:
    client = oa(server)
    create = client.chat.completions
    legacy = create.with_raw_response.create(model=CHAT, messages=MESSAGES, stream=True)
    assert type(legacy).__name__ == "LegacyAPIResponse"  # only .http_response has the body
    assert dicts(list(iter_events(legacy))) == from_bytes(CHAT)
    with create.with_streaming_response.create(model=CHAT, messages=MESSAGES, stream=True) as r:
        assert type(r).__name__ == "APIResponse"
        assert dicts(list(iter_events(r))) == from_bytes(CHAT)


def test_anthropic_raw_responses(server: _Server) -> None:
    name = "anthropic-thinking-tool-use.sse"
    messages = an(server).messages
    raw = messages.with_raw_response.create(
        model=name, max_tokens=64, messages=MESSAGES, stream=True
    )
    assert dicts(list(iter_events(raw))) == from_bytes(name)
    with messages.with_streaming_response.create(
        model=name, max_tokens=64, messages=MESSAGES, stream=True
    ) as response:
        assert dicts(list(iter_events(response))) == from_bytes(name)


@pytest.mark.parametrize("module", ["httpx", "httpx2"])
@pytest.mark.parametrize("name", [CHAT, "bedrock-converse-tool-use.eventstream"])
def test_http_client_responses(server: _Server, module: str, name: str) -> None:
    client_module = pytest.importorskip(module)
    with (
        client_module.Client() as client,
        client.stream("POST", server.url + "/any", json={"model": name}) as response,
    ):
        events = list(iter_events(response))
        assert response.is_closed
    assert dicts(events) == from_bytes(name)


@pytest.mark.anyio
@pytest.mark.parametrize("module", ["httpx", "httpx2"])
async def test_async_http_responses(server: _Server, module: str) -> None:
    client_module = pytest.importorskip(module)
    async with (
        client_module.AsyncClient() as client,
        client.stream("POST", server.url + "/any", json={"model": CHAT}) as response,
    ):
        events = [e async for e in aiter_events(response)]
        assert response.is_closed
    assert dicts(events) == from_bytes(CHAT)
    # a sync response under the async driver is read (and closed) synchronously
    with (
        client_module.Client() as sync_client,
        sync_client.stream("POST", server.url + "/any", json={"model": CHAT}) as response,
    ):
        events = [e async for e in aiter_events(response)]
        assert response.is_closed
    assert dicts(events) == from_bytes(CHAT)


@pytest.mark.anyio
async def test_async_api_responses(server: _Server) -> None:
    async with openai.AsyncOpenAI(
        base_url=server.url + "/v1", api_key="test", max_retries=0
    ) as client:
        create = client.chat.completions
        async with create.with_streaming_response.create(
            model=CHAT, messages=MESSAGES, stream=True
        ) as response:
            assert type(response).__name__ == "AsyncAPIResponse"
            with pytest.raises(TypeError, match="aiter_events"):
                iter_events(response).__next__()
            events = [e async for e in aiter_events(response)]
        assert dicts(events) == from_bytes(CHAT)
        legacy = await create.with_raw_response.create(model=CHAT, messages=MESSAGES, stream=True)
        with pytest.raises(TypeError, match="async body"):
            iter_events(legacy).__next__()
        assert dicts([e async for e in aiter_events(legacy)]) == from_bytes(CHAT)


# -- when the SDK raises mid-stream ----------------------------------------------------------


def test_the_verdicts_reach_a_sync_consumer_before_the_sdk_error(server: _Server) -> None:
    stream = oa(server).chat.completions.create(
        model="openai-midstream-error.sse", messages=MESSAGES, stream=True
    )
    seen: list[StreamEvent] = []
    with pytest.raises(openai.APIError):
        seen.extend(iter_events(stream))
    failed, rejected, done = seen[-3:]
    assert isinstance(failed, StreamFailed)
    assert failed.code == "source_error"
    assert failed.error_type == "server_error"
    assert failed.message.startswith("APIError: The server had an error")
    assert failed.raw["exception"] == "APIError"
    assert isinstance(rejected, ToolCallRejected)
    assert rejected.reason is RejectReason.STREAM_INCOMPLETE
    assert isinstance(done, Done)
    assert done.stop_reason is StopReason.ERROR


def test_anthropic_error_event_raised_by_the_sdk(server: _Server) -> None:
    name = "anthropic-error-event.sse"
    seen: list[StreamEvent] = []
    with (
        pytest.raises(anthropic.APIStatusError),
        an(server).messages.stream(model=name, max_tokens=64, messages=MESSAGES) as stream,
    ):
        seen.extend(iter_events(stream))
    failed = [e for e in seen if isinstance(e, StreamFailed)]
    assert [(f.code, f.error_type, f.message) for f in failed] == [
        ("source_error", "overloaded_error", "APIStatusError: Overloaded")
    ]
    assert isinstance(seen[-1], Done)
    # the same stream read from its bytes says what the provider said
    in_band = next(e for e in iter_events(FIXTURES / name) if isinstance(e, StreamFailed))
    assert in_band.error_type == "overloaded_error"


@pytest.mark.anyio
async def test_async_consumer_gets_the_verdicts_before_the_sdk_error(server: _Server) -> None:
    seen: list[StreamEvent] = []
    async with openai.AsyncOpenAI(
        base_url=server.url + "/v1", api_key="test", max_retries=0
    ) as client:
        stream = await client.chat.completions.create(
            model="openai-midstream-error.sse", messages=MESSAGES, stream=True
        )
        events = aiter_events(stream)

        async def consume() -> None:
            async with events:
                async for event in events:
                    seen.append(event)

        with pytest.raises(openai.APIError):
            await consume()
    assert [e.type for e in seen[-3:]] == ["stream_failed", "tool_call_rejected", "done"]
    assert events.core.done is seen[-1]


# -- chunks of unusual shape: no pydantic warnings ---------------------------------------


@pytest.mark.parametrize(
    ("name", "sdk"),
    [
        ("object-arguments-index-in-function.sse", "openai"),
        ("anthropic-compaction-pause.sse", "anthropic"),
        ("anthropic-fallback-block.sse", "anthropic"),
    ],
)
def test_unusual_chunks_convert_without_warnings(server: _Server, name: str, sdk: str) -> None:
    if sdk == "openai":
        stream = oa(server).chat.completions.create(model=name, messages=MESSAGES, stream=True)
    else:
        stream = an(server).messages.create(
            model=name, max_tokens=64, messages=MESSAGES, stream=True
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # what the suite's -W error does, made explicit
        events = list(iter_events(stream))
    assert not [e for e in events if isinstance(e, StreamFailed)]
    assert dicts(events) == from_bytes(name)


# -- the pause_turn continuation through the SDK --------------------------------------------


def test_pause_turn_continuation_through_the_sdk(server: _Server) -> None:
    paused = "anthropic-server-tool-web-search-pause-turn.sse"
    expected = json.loads(
        (FIXTURES / "anthropic-server-tool-web-search-pause-turn.continue.json").read_text(
            encoding="utf-8"
        )
    )
    client = an(server)
    first = [expected["messages"][0]]
    tools = expected["tools"]
    stream = client.messages.create(
        model=paused, max_tokens=2048, messages=first, tools=tools, stream=True
    )
    done = list(iter_events(stream))[-1]
    assert isinstance(done, Done)
    assert done.stop_reason is StopReason.PAUSED
    # Continue: the same request, the paused turn appended unchanged as the last message.
    resumed = "anthropic-server-tool-web-search-resumed.sse"
    stream = client.messages.create(
        model=resumed, max_tokens=2048, messages=[*first, *done.messages], tools=tools, stream=True
    )
    end = list(iter_events(stream))[-1]
    path, sent = server.requests[-1]
    assert path == "/v1/messages"
    assert sent["messages"] == expected["messages"]  # what the SDK put on the wire
    assert isinstance(end, Done)
    assert end.stop_reason is StopReason.STOP


def test_sources_that_are_not_streams_are_refused() -> None:
    with pytest.raises(TypeError, match="cannot read events"):
        list(iter_events(42))
    core = ToolCallStream()
    assert core.feed(object())[0].type == "stream_failed"


# -- google-genai ------------------------------------------------------------------------------


def _genai(server: _Server) -> Any:
    genai = pytest.importorskip("google.genai")
    types = pytest.importorskip("google.genai.types")
    client = genai.Client(api_key="test", http_options=types.HttpOptions(base_url=server.url))
    _CLIENTS.append(client)
    return client


def test_genai_chunks(server: _Server) -> None:
    name = "gemini-native-function-call-thought-signature.sse"
    stream = _genai(server).models.generate_content_stream(model=name, contents="ferries?")
    chunks = list(stream)
    assert type(chunks[0]).__name__ == "GenerateContentResponse"
    # thoughtSignature is bytes in the SDK's objects, base64 on the wire and in the message
    assert dicts(list(iter_events(chunks))) == from_bytes(name)


def test_genai_partial_args_numbers_are_the_sdks_floats(server: _Server) -> None:
    name = "gemini-vertex-partial-args.sse"
    stream = _genai(server).models.generate_content_stream(model=name, contents="book it")
    ready = [e for e in iter_events(list(stream)) if isinstance(e, ToolCallReady)]
    # PartialArg.number_value is typed float in google-genai: the wire's 2 reaches us as
    # 2.0 through its objects (from the bytes it stays 2). Nothing here rewrites it.
    assert [e.arguments for e in ready] == [
        {"port": "Quiberon", "passengers": 2.0, "with_car": False, "notes": None}
    ]
    assert type(ready[0].arguments["passengers"]) is float


def test_genai_error_raised_by_the_sdk(server: _Server) -> None:
    errors = pytest.importorskip("google.genai.errors")
    name = "gemini-midstream-error.sse"
    stream = _genai(server).models.generate_content_stream(model=name, contents="ferries?")
    seen: list[StreamEvent] = []
    with pytest.raises(errors.ServerError):
        seen.extend(iter_events(stream))
    failed = next(e for e in seen if isinstance(e, StreamFailed))
    assert (failed.code, failed.error_type) == ("source_error", "UNAVAILABLE")
    assert failed.message == "ServerError: The model is overloaded. Please try again later."
    assert failed.raw["code"] == 503
    assert [e.type for e in seen[-2:]] == ["tool_call_rejected", "done"]
