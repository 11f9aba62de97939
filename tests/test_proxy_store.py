"""The proxy's memo stores: the in-memory one (bounded, expiring) and Redis against a
real ``redis-server`` started on loopback (skipped with a message when it is absent),
including two proxy replicas sharing one Redis for one DeepSeek conversation."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import pytest

from _proxy_support import (
    FakeUpstream,
    Reply,
    chat_stream,
    openai_client,
    serving,
)
from streamrepair.proxy import (
    CallMemo,
    MemoryStore,
    ProxyConfig,
    RedisStore,
    create_app,
    memo_key,
    open_store,
)


def memo(call_id: str, size: int = 10) -> CallMemo:
    return CallMemo(call_id=call_id, tool="t", reasoning="r" * size)


def test_memory_store_round_trip_and_keys_per_credential() -> None:
    store = MemoryStore()
    key = memo_key("Bearer one", "call_1")
    assert key != memo_key("Bearer two", "call_1")  # another client cannot read it
    asyncio.run(store.put({key: memo("call_1")}))
    found = asyncio.run(store.get([key, memo_key("Bearer two", "call_1")]))
    assert list(found) == [key]
    assert found[key] == memo("call_1")


def test_memory_store_expires_and_evicts() -> None:
    now = [0.0]
    store = MemoryStore(ttl=10, max_entries=3, max_chars=10_000, clock=lambda: now[0])
    asyncio.run(store.put({f"k{i}": memo(f"c{i}") for i in range(5)}))
    assert len(store) == 3  # the two oldest went first
    assert set(asyncio.run(store.get(["k0", "k1", "k2", "k3", "k4"]))) == {"k2", "k3", "k4"}
    now[0] = 11
    assert asyncio.run(store.get(["k2", "k3", "k4"])) == {}
    assert len(store) == 0
    small = MemoryStore(max_chars=500)
    asyncio.run(small.put({"a": memo("a", 200), "b": memo("b", 200), "c": memo("c", 200)}))
    assert small.chars <= 500
    assert set(asyncio.run(small.get(["a", "b", "c"]))) == {"b", "c"}
    asyncio.run(small.put({"huge": memo("h", 1000)}))
    assert small.errors == 1  # larger than the whole store: refused, counted
    with pytest.raises(ValueError, match="must be 'memory' or a redis"):
        open_store("postgres://x")


# -- Redis --------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip(
            "redis-server is not installed (Debian package redis-server); .ci/run installs it"
        )
    port = _free_port()
    with tempfile.TemporaryDirectory() as workdir:
        process = subprocess.Popen(
            [
                binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                workdir,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 10
            while True:
                with (
                    contextlib.suppress(OSError),
                    socket.create_connection(("127.0.0.1", port), 0.2),
                ):
                    break
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.skip("redis-server did not start on loopback")
                time.sleep(0.02)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            process.terminate()
            process.wait(10)


def test_redis_store_round_trip_with_expiry(redis_url: str) -> None:
    async def scenario() -> tuple[Any, ...]:
        store = RedisStore(redis_url, ttl=0.3)
        await store.put({"k1": memo("c1"), "k2": memo("c2")})
        first = await store.get(["k1", "k2", "k3"])
        alive = await store.ping()
        await asyncio.sleep(0.5)
        later = await store.get(["k1", "k2"])
        await store.close()
        return first, alive, later, store.errors

    first, alive, later, errors = asyncio.run(scenario())
    assert first == {"k1": memo("c1"), "k2": memo("c2")}
    assert alive
    assert later == {}
    assert errors == 0


def test_redis_store_down_finds_nothing_and_counts() -> None:
    async def scenario() -> tuple[Any, ...]:
        store = RedisStore(f"redis://127.0.0.1:{_free_port()}/0", timeout=0.5)
        await store.put({"k": memo("c")})
        found = await store.get(["k"])
        alive = await store.ping()
        await store.close()
        return found, alive, store.errors

    found, alive, errors = asyncio.run(scenario())
    assert found == {}
    assert not alive
    assert errors == 3


def test_two_replicas_share_one_conversation_through_redis(redis_url: str) -> None:
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    fake = FakeUpstream(
        script=[
            Reply(
                body=chat_stream(reasoning="Thinking hard.", calls=(("call_9", "f", '{"a": 1,}'),))
            ),
            Reply(body=chat_stream(content="ok")),
        ]
    )
    with serving(fake.app()) as upstream:
        one = create_app(ProxyConfig(upstream=upstream), store=RedisStore(redis_url))
        two = create_app(ProxyConfig(upstream=upstream), store=RedisStore(redis_url))
        with serving(one) as first_url, serving(two) as second_url:
            messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
            client = openai_client(base_url=f"{first_url}/v1", api_key="sk-a", max_retries=0)
            chunks = list(
                client.chat.completions.create(
                    model="deepseek-v4-flash", messages=messages, tools=tools, stream=True
                )
            )
            call = next(
                c.choices[0].delta.tool_calls[0]
                for c in chunks
                if c.choices and c.choices[0].delta.tool_calls
            )
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call.model_dump(exclude_none=True)],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "done"})
            other = openai_client(base_url=f"{second_url}/v1", api_key="sk-a", max_retries=0)
            list(
                other.chat.completions.create(
                    model="deepseek-v4-flash", messages=messages, tools=tools, stream=True
                )
            )
    sent = fake.requests[1].body["messages"]
    assert sent[1]["reasoning_content"] == "Thinking hard."
    assert "[streamrepair: arguments of f were repaired]" in sent[2]["content"]
