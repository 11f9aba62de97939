"""The proxy's upstream clients (``upstream.py``): aiohttp by default, httpx when a
transport is given. Both on real servers on loopback: requests go upstream as the client
sent them (nothing added, no cookie kept between clients), streams are relayed, a
compressed stream is read or passed on untouched, a client that leaves closes the
upstream; and the app's slicing of what arrived at once."""

from __future__ import annotations

import gzip
import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from _proxy_support import (
    FakeUpstream,
    Reply,
    chat_stream,
    openai_client,
    stack,
    wait_for,
)
from streamrepair.proxy import ChatRelay
from streamrepair.proxy._forwarding import SLICE_BYTES, slices

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
CLIENTS = ["aiohttp", "httpx"]


def transport(client: str) -> Any:
    """The proxy's upstream client: aiohttp (no transport), or httpx on this one."""
    return httpx.AsyncHTTPTransport() if client == "httpx" else None


def _calls(url: str) -> list[tuple[str, Any]]:
    client = openai_client(base_url=f"{url}/v1", api_key="sk", max_retries=0)
    calls: dict[int, list[str]] = {}
    for chunk in client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}], stream=True, tools=TOOLS
    ):
        for choice in chunk.choices:
            for call in choice.delta.tool_calls or ():
                assert call.function is not None
                entry = calls.setdefault(call.index, ["", ""])
                entry[0] += call.function.name or ""
                entry[1] += call.function.arguments or ""
    return [(name, json.loads(args)) for name, args in calls.values()]


@pytest.mark.parametrize("client", CLIENTS)
def test_a_stream_is_relayed_and_repaired(client: str) -> None:
    stream = chat_stream(calls=(("call_1", "get_weather", '{"city": "Paris",}'),), model="m")
    fake = FakeUpstream(script=[Reply(body=stream, chunk=7)], deepseek_rules=False)
    with stack(fake, transport=transport(client)) as url:
        assert _calls(url) == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("client", CLIENTS)
def test_requests_go_upstream_as_sent_and_no_cookie_is_kept(client: str) -> None:
    answer = {"id": "c", "object": "chat.completion", "choices": []}
    cookie = {"set-cookie": "__cf_bm=one-clients-cookie; Path=/; HttpOnly"}
    fake = FakeUpstream(
        script=[Reply(json=answer, headers=cookie), Reply(json=answer)], deepseek_rules=False
    )
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    with stack(fake, transport=transport(client)) as url:
        # http.client sends no User-Agent and no Accept: nothing may be added upstream.
        where = urlsplit(url)
        connection = http.client.HTTPConnection(where.hostname or "", where.port)
        connection.request(
            "POST",
            "/v1/chat/completions",
            body=body,
            headers={"content-type": "application/json", "x-client": "one"},
        )
        first = connection.getresponse()
        assert json.loads(first.read()) == answer
        assert "one-clients-cookie" in (first.getheader("set-cookie") or "")  # passed on
        connection.close()
        second = httpx.post(
            f"{url}/v1/chat/completions",
            content=body,
            headers={"content-type": "application/json", "user-agent": "client-two/1"},
        )
        assert second.json() == answer
    one, two = fake.requests
    assert "user-agent" not in one.headers
    assert "accept" not in one.headers
    assert one.headers["x-client"] == "one"
    assert two.headers["user-agent"] == "client-two/1"
    assert "cookie" not in two.headers  # the first client's cookie never rides along


@pytest.mark.parametrize("client", CLIENTS)
def test_a_gzip_stream_is_read_and_an_unknown_encoding_passes_untouched(client: str) -> None:
    stream = chat_stream(calls=(("call_1", "get_weather", '{"city": "Rome",}'),), model="m")
    fake = FakeUpstream(
        script=[
            # asked for identity, the upstream compressed anyway
            Reply(body=gzip.compress(stream), chunk=50, headers={"content-encoding": "gzip"}),
            Reply(body=b"\x00not-really-brotli", headers={"content-encoding": "br"}),
        ],
        deepseek_rules=False,
    )
    with stack(fake, transport=transport(client)) as url:
        assert _calls(url) == [("get_weather", {"city": "Rome"})]
        body = {"model": "m", "messages": [], "stream": True, "tools": TOOLS}
        with httpx.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
            raw = b"".join(response.iter_raw())
            assert response.headers["content-encoding"] == "br"
    assert raw == b"\x00not-really-brotli"


@pytest.mark.parametrize("client", CLIENTS)
def test_a_client_that_leaves_closes_the_upstream(client: str) -> None:
    stream = chat_stream(content="x" * 300, piece=1, model="m")
    fake = FakeUpstream(script=[Reply(body=stream, chunk=100, delay=0.05)], deepseek_rules=False)
    with stack(fake, transport=transport(client)) as url:
        body = {"model": "m", "messages": [], "stream": True}
        with httpx.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
            for line in response.iter_lines():
                if '"content": "x"' in line:
                    break
        assert wait_for(lambda: fake.streams_cancelled == 1)
    assert fake.streams_finished == 0


@pytest.mark.parametrize("client", CLIENTS)
def test_connections_are_reused(client: str) -> None:
    stream = chat_stream(content="hello", model="m")
    fake = FakeUpstream(script=[Reply(body=stream) for _ in range(5)], deepseek_rules=False)
    with stack(fake, transport=transport(client)) as url:
        for _ in range(5):
            body = {"model": "m", "messages": [], "stream": True}
            with httpx.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
                assert b"[DONE]" in b"".join(response.iter_raw())
    assert len(fake.requests) == 5
    assert len({seen.peer for seen in fake.requests}) == 1  # one pooled connection


# -- slicing what arrived at once -----------------------------------------------------------


@given(st.lists(st.text(alphabet="ab\n", max_size=300), max_size=40))
def test_slices_join_to_the_data_and_end_at_event_ends(events: list[str]) -> None:
    data = "".join(e + "\n\n" for e in events).encode()
    pieces = list(slices(data))
    assert b"".join(pieces) == data
    assert all(pieces)
    if data.count(b"\n\n") > 1:
        assert pieces[0] == data[: data.index(b"\n\n") + 2]  # the first event on its own
    for piece in pieces[1:-1]:  # then cut at the first event end past SLICE_BYTES
        assert piece.find(b"\n\n", SLICE_BYTES) == len(piece) - 2


def test_text_goes_out_before_the_end_is_judged() -> None:
    """The relay returns the text of a batch before the stream core reads the end marker
    (and runs the calls' schema check): the verdicts come with memos() and final()."""
    stream = chat_stream(
        content="hi", calls=(("call_1", "get_weather", '{"city": "Oslo"}'),), model="m"
    )
    relay = ChatRelay(tools=TOOLS)
    out = b"".join(relay.feed(stream))
    assert b'"content":"hi"' in out.replace(b" ", b"")
    assert relay.ended
    assert relay.stream.done is None  # not judged yet
    assert [m.tool for m in relay.memos()] == ["get_weather"]
    assert relay.stream.done is not None
    assert b"get_weather" in b"".join(relay.final())
