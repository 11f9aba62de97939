"""Request bodies parsed and encoded stepwise off the event loop (``proxy/bodies.py``):
exactly ``json.loads`` and ``json.dumps``, values and errors, and the same request sent
upstream whichever way the proxy worked on it. (How long other streams wait while a
large body is worked on: ``benchmarks/bench_proxy_service.py``.)"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _proxy_support import FakeUpstream, Reply, chat_stream, stack
from streamrepair.proxy.bodies import dumps_stepwise, encode_json, loads_stepwise, parse_json

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
_BODIES = st.dictionaries(st.text(max_size=8), _VALUES | st.lists(_VALUES, max_size=6), max_size=6)


def _same(got: Any, want: Any) -> None:
    # repr tells -0.0 from 0.0 and 1 from 1.0; json.dumps keeps key order
    assert repr(got) == repr(want)
    assert json.dumps(got) == json.dumps(want)


@settings(max_examples=100, deadline=None)
@given(body=_BODIES, layout=st.sampled_from([None, 0, 2]), ascii_=st.booleans())
def test_stepwise_parsing_is_json_loads(
    body: dict[str, Any], layout: int | None, ascii_: bool
) -> None:
    separators = (",", ":") if layout is None else None
    text = json.dumps(body, indent=layout, ensure_ascii=ascii_, separators=separators)
    for data in (text, text.encode("utf-8"), f" \n\t{text}\r\n ".encode()):
        _same(loads_stepwise(data), json.loads(data))


@settings(max_examples=100, deadline=None)
@given(body=_BODIES | _VALUES)
def test_stepwise_encoding_is_json_dumps(body: Any) -> None:
    want = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    assert dumps_stepwise(body) == want


@pytest.mark.parametrize(
    "data",
    [
        b'{"a":"\\ud800x","b":"\\ud83d\\ude00"}',  # a lone surrogate kept, a pair joined
        b'{"a":1e400,"b":NaN,"c":-Infinity,"d":123456789012345678901234567890}',
        b'{"a":1,"a":[2],"b":{"a":3,"a":4}}',  # duplicate keys: the last wins
        b'\xef\xbb\xbf{"messages":[{"role":"user"}]}',  # a UTF-8 byte order mark
        '{"a":[1,2]}'.encode("utf-16"),  # another encoding json.loads detects
        b'{"messages":[],"x":{}}',
        b"{}",
        b'[{"a":1}]',  # not an object: parsed whole
        b'"text"',
    ],
)
def test_odd_but_valid_bodies_parse_as_json_loads_parses_them(data: bytes) -> None:
    _same(loads_stepwise(data), json.loads(data))


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"{",
        b'{"a":1}{"b":2}',  # extra data
        b'{"a":[1,2}',
        b'{"a" 1}',
        b'{"a":1,}',
        b"{'a':1}",
        b'{"a":"\xff"}',  # not UTF-8
        b'{"a":"\x01"}',  # a raw control character
        b'{"messages":[1 2]}',
        b"[" * 100_000 + b"]" * 100_000,  # deeper than the interpreter recurses
        b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    ],
)
def test_bad_bodies_raise_what_json_loads_raises(data: bytes) -> None:
    with pytest.raises((ValueError, RecursionError)) as want:
        json.loads(data)
    with pytest.raises(type(want.value)) as got:
        loads_stepwise(data)
    assert str(got.value) == str(want.value)


def test_the_async_entry_points_agree_on_and_off_the_loop() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "é" * 100}] * 50}
    data = json.dumps(body).encode()

    async def both() -> tuple[Any, ...]:
        return (
            await parse_json(data, large=False),  # here
            await parse_json(data, large=True),  # in a thread, stepwise
            await encode_json(body, large=False),
            await encode_json(body, large=True),
        )

    here, there, small, large = asyncio.run(both())
    _same(here, body)
    _same(there, body)
    assert small == large == json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def test_a_large_body_gets_the_same_fixes_and_goes_out_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A DeepSeek conversation whose client drops the reasoning: the second request is
    fixed (reasoning put back, null content filled) whether its body counts as large
    (worked on in a thread, stepwise) or not, and goes upstream byte for byte the same.
    A body under the bound never goes to a thread (a hop costs more than its parse)."""
    import anyio.to_thread

    threads: list[object] = []
    real = anyio.to_thread.run_sync

    async def counted(work: Any, *args: Any, **options: Any) -> Any:
        threads.append(work)
        return await real(work, *args, **options)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    first = chat_stream(reasoning="think first", calls=(("call_1", "f", '{"a": 1}'),))
    sent: list[bytes] = []
    for large in (10**9, 1):
        fake = FakeUpstream(script=[Reply(body=first), Reply(body=chat_stream(content="ok"))])
        with stack(fake, access_log=False, large_body_bytes=large) as proxy:
            history: list[dict[str, Any]] = [{"role": "user", "content": "go " * 3000}]
            body = {
                "model": "deepseek-v4-flash",
                "messages": history,
                "tools": tools,
                "stream": True,
            }
            with httpx.Client(base_url=proxy, timeout=30) as client:
                assert client.post("/v1/chat/completions", json=body).status_code == 200
                history += [
                    {
                        "role": "assistant",
                        "content": None,  # and no reasoning_content: the client dropped it
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "f", "arguments": '{"a":1}'},
                            }
                        ],
                    },
                    {"role": "tool", "tool_call_id": "call_1", "content": "done"},
                ]
                answer = client.post("/v1/chat/completions", json=body)
        assert answer.status_code == 200, answer.text  # no 400 from the DeepSeek rules
        assert "reasoning_restored=1" in answer.headers["x-streamrepair-request-fixes"]
        assert fake.requests[1].body["messages"][1]["reasoning_content"] == "think first"
        sent.append(fake.requests[1].raw)
        if large > 1:
            assert threads == []
    assert sent[0] == sent[1]
    assert threads  # the large bodies were worked on in threads
