"""The proxy's memo stores: the in-memory one (bounded, expiring) and Redis against a
real ``redis-server`` started on loopback (skipped with a message when it is absent),
including two proxy replicas sharing one Redis for one DeepSeek conversation."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
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
    ApiProtocol,
    BreakerState,
    CallMemo,
    CircuitBreaker,
    MemoryStore,
    ProxyConfig,
    ProxyMetrics,
    RedisStore,
    StoreStatus,
    create_app,
    memo_key,
    open_store,
    unavailable_fixes,
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
    assert asyncio.run(small.put({"huge": memo("h", 1000)})) is StoreStatus.ERROR
    assert small.errors == 1  # larger than the whole store: refused, counted
    assert small.stats().counts == {("put", "error"): 1}
    assert small.stats().breaker is None
    with pytest.raises(ValueError, match="must be 'memory' or a redis"):
        open_store("postgres://x")


# -- Redis --------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def redis_server(port: int | None = None) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real ``redis-server`` on loopback (no persistence): its URL and its process.
    Skips the test when the binary is absent or does not start."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip(
            "redis-server is not installed (Debian package redis-server); .ci/run installs it"
        )
    port = port or _free_port()
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
            yield f"redis://127.0.0.1:{port}/0", process
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGCONT)  # a frozen one must hear the TERM
            process.terminate()
            process.wait(10)


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as (url, _):
        yield url


def test_redis_store_round_trip_with_expiry(redis_url: str) -> None:
    async def scenario() -> tuple[Any, ...]:
        store = RedisStore(redis_url, ttl=0.3, timeout=5)  # (a loaded machine)
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
        # (a deadline for a loaded machine: this test is about the sharing, not the
        # deadline, which the breaker tests hold)
        one = create_app(ProxyConfig(upstream=upstream), store=RedisStore(redis_url, timeout=5))
        two = create_app(ProxyConfig(upstream=upstream), store=RedisStore(redis_url, timeout=5))
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


def test_the_proxy_connects_its_redis_store_as_it_starts(redis_url: str) -> None:
    """Before the first request: a request does not make the connection within its
    store deadline."""
    import redis

    watcher = redis.Redis.from_url(redis_url)
    before = watcher.info("clients")["connected_clients"]
    fake = FakeUpstream(script=[])
    with serving(fake.app()) as upstream:
        app = create_app(ProxyConfig(upstream=upstream), store=RedisStore(redis_url))
        with serving(app):
            during = watcher.info("clients")["connected_clients"]
            assert not fake.requests
    watcher.close()
    assert during == before + 1


def test_memory_store_lookup_is_always_available() -> None:
    store = MemoryStore()
    assert asyncio.run(store.put({"k": memo("c")})) is StoreStatus.OK
    found = asyncio.run(store.lookup(["k", "missing"]))
    assert found.available
    assert found.status is StoreStatus.OK
    assert found.found == {"k": memo("c")}


# -- the breaker (sans-IO) ------------------------------------------------------------------


def test_breaker_opens_after_threshold_failures_in_a_row_and_probes_once_per_cooldown() -> None:
    now = [0.0]
    breaker = CircuitBreaker(threshold=3, cooldown=10, clock=lambda: now[0])
    assert breaker.state is BreakerState.CLOSED
    assert breaker.allow()
    breaker.failed()
    breaker.failed()
    breaker.succeeded()  # a success resets the count: failures must be in a row
    breaker.failed()
    breaker.failed()
    assert breaker.allow()
    breaker.failed()
    assert breaker.state is BreakerState.OPEN
    assert not breaker.allow()
    assert breaker.opened == 1
    breaker.failed()  # a call that started before it opened: no new opening
    assert breaker.opened == 1
    now[0] = 9.9
    assert not breaker.probe_due()
    now[0] = 10.0
    assert breaker.probe_due()
    assert breaker.state is BreakerState.HALF_OPEN
    assert not breaker.allow()
    assert not breaker.probe_due()  # one probe at a time
    breaker.failed()  # the probe failed: open for another cool-down
    assert breaker.state is BreakerState.OPEN
    assert breaker.opened == 1
    now[0] = 15
    assert not breaker.probe_due()
    now[0] = 20
    assert breaker.probe_due()
    breaker.succeeded()
    assert breaker.state is BreakerState.CLOSED
    assert breaker.allow()
    breaker.failed()
    breaker.failed()
    assert breaker.allow()  # the count started again from zero
    with pytest.raises(ValueError, match="threshold"):
        CircuitBreaker(threshold=0)
    with pytest.raises(ValueError, match="cooldown"):
        CircuitBreaker(cooldown=-1)


# -- a Redis that hangs or dies -------------------------------------------------------------


def _mget_calls(url: str) -> int:
    """How many MGET commands the Redis at ``url`` has run (its own count)."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        stats = client.info("commandstats")
    finally:
        client.close()
    return int(stats.get("cmdstat_mget", {}).get("calls", 0))


def test_frozen_redis_costs_a_timeout_until_the_breaker_opens_then_nothing() -> None:
    """SIGSTOP the server: the kernel still accepts connections and buffers commands, so
    every call hangs until its deadline. Three timeouts open the breaker; after that no
    call reaches Redis (its own MGET count says so once it runs again) and none waits;
    the background probe closes the breaker once Redis answers again."""
    with redis_server() as (url, process):

        async def scenario() -> dict[str, Any]:
            store = RedisStore(url, timeout=0.5, breaker_threshold=3, breaker_cooldown=0.5)
            out: dict[str, Any] = {"put": await store.put({"k": memo("c")})}
            os.kill(process.pid, signal.SIGSTOP)
            started = time.monotonic()
            out["hung"] = [(await store.lookup(["k"])).status for _ in range(3)]
            out["hung_seconds"] = time.monotonic() - started
            out["state"] = store.breaker.state
            started = time.monotonic()
            skipped = [await store.lookup(["k"]) for _ in range(100)]
            skipped_puts = [await store.put({"k2": memo("c2")}) for _ in range(100)]
            out["ping"] = await store.ping()
            out["skipped_seconds"] = time.monotonic() - started
            out["skipped"] = {r.status for r in skipped} | set(skipped_puts)
            out["found_while_skipped"] = [r.found for r in skipped if r.found]
            await asyncio.sleep(0.6)  # the cool-down: the next call starts a probe...
            started = time.monotonic()
            during_probe = await store.lookup(["k"])
            out["probe_call_seconds"] = time.monotonic() - started  # ...and does not wait
            out["during_probe"] = (during_probe.status, store.breaker.state)
            await asyncio.sleep(0.8)  # the probe timed out: open again
            out["after_failed_probe"] = store.breaker.state
            os.kill(process.pid, signal.SIGCONT)
            deadline = time.monotonic() + 10
            while store.breaker.state is not BreakerState.CLOSED:
                assert time.monotonic() < deadline, "the breaker never closed"
                await store.lookup(["k"])
                await asyncio.sleep(0.05)
            out["recovered"] = await store.lookup(["k"])
            out["stats"] = store.stats()
            out["metrics"] = ProxyMetrics(store=store).render()
            await store.close()
            return out

        out = asyncio.run(scenario())
        mget_calls = _mget_calls(url)
    assert out["put"] is StoreStatus.OK
    assert out["hung"] == [StoreStatus.TIMEOUT] * 3
    assert out["hung_seconds"] < 3 * 0.5 + 2  # each call bounded by its deadline
    assert out["state"] is BreakerState.OPEN
    assert out["skipped"] == {StoreStatus.SKIPPED}
    assert out["found_while_skipped"] == []
    assert out["ping"] is False
    # 201 skipped calls: the 100 ms a request may lose once the breaker is open, for all
    # of them together (a hung call would take 0.5 s each)
    assert out["skipped_seconds"] < 0.1 * 5
    assert out["probe_call_seconds"] < 0.25
    assert out["during_probe"] == (StoreStatus.SKIPPED, BreakerState.HALF_OPEN)
    assert out["after_failed_probe"] is BreakerState.OPEN
    recovered = out["recovered"]
    assert recovered.status is StoreStatus.OK
    assert recovered.found == {"k": memo("c")}
    # Redis ran the three hung MGETs (buffered while it was stopped) and the final ones;
    # none of the skipped calls reached it
    counts = out["stats"].counts
    assert counts[("get", "timeout")] == 3
    assert counts[("get", "skipped")] >= 101
    assert counts[("put", "skipped")] == 100
    assert counts[("ping", "skipped")] == 1
    assert counts[("probe", "timeout")] >= 1
    loops_after_sigcont = counts[("get", "skipped")] - 101
    assert mget_calls <= 3 + 1 + loops_after_sigcont + 1
    assert out["stats"].breaker_opened == 1
    metrics = out["metrics"]
    assert 'streamrepair_proxy_store_errors_total{kind="timeout",operation="get"} 3' in metrics
    assert 'streamrepair_proxy_store_errors_total{kind="skipped",operation="put"} 100' in metrics
    assert 'streamrepair_proxy_store_breaker_state{state="closed"} 1' in metrics
    assert 'streamrepair_proxy_store_breaker_state{state="open"} 0' in metrics
    assert "streamrepair_proxy_store_breaker_opened_total 1" in metrics


def test_dead_redis_opens_the_breaker_and_a_restarted_one_closes_it() -> None:
    port = _free_port()
    url = f"redis://127.0.0.1:{port}/0"

    async def scenario() -> dict[str, Any]:
        store = RedisStore(url, timeout=0.5, breaker_threshold=2, breaker_cooldown=0.2)
        out: dict[str, Any] = {"down": [(await store.lookup(["k"])).status for _ in range(2)]}
        out["state"] = store.breaker.state
        out["skipped"] = (await store.lookup(["k"])).status
        with redis_server(port):
            deadline = time.monotonic() + 10
            while store.breaker.state is not BreakerState.CLOSED:
                assert time.monotonic() < deadline, "the breaker never closed"
                await store.lookup(["k"])
                await asyncio.sleep(0.05)
            out["put"] = await store.put({"k": memo("c")})
            out["found"] = (await store.lookup(["k"])).found
        await store.close()
        out["errors"] = store.errors
        return out

    out = asyncio.run(scenario())
    assert out["down"] == [StoreStatus.ERROR] * 2  # refused at once: an error, not a timeout
    assert out["state"] is BreakerState.OPEN
    assert out["skipped"] is StoreStatus.SKIPPED
    assert out["put"] is StoreStatus.OK
    assert out["found"] == {"k": memo("c")}
    assert out["errors"] >= 2


def test_a_frozen_redis_behind_the_proxy_slows_only_the_requests_before_the_breaker() -> None:
    """Through the app as it calls the store today (a lookup before the request goes out,
    a write after the stream): with Redis frozen, the first requests wait for the
    deadlines, the breaker opens, and the later ones are served without waiting; the
    conversation goes on (no 5xx), only without the memos."""
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "done"},
    ]
    requests = 8
    fake = FakeUpstream(script=[Reply(body=chat_stream(content="ok"))] * requests)
    with redis_server() as (url, process), serving(fake.app()) as upstream:
        store = RedisStore(url, timeout=1.0, breaker_threshold=2, breaker_cooldown=60)
        with serving(create_app(ProxyConfig(upstream=upstream), store=store)) as proxy:
            client = openai_client(base_url=f"{proxy}/v1", api_key="sk-a", max_retries=0)
            os.kill(process.pid, signal.SIGSTOP)
            times = []
            for _ in range(requests):
                started = time.monotonic()
                chunks = list(
                    client.chat.completions.create(
                        model="deepseek-v4-flash", messages=history, tools=tools, stream=True
                    )
                )
                times.append(time.monotonic() - started)
                assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            state = store.breaker.state
            counts = store.stats().counts
    assert state is BreakerState.OPEN
    assert counts[("get", "timeout")] == 2  # the two requests before the breaker opened
    assert counts[("get", "skipped")] == requests - 2
    assert min(times[:2]) >= 0.9  # each waited for its lookup's deadline
    assert max(times[2:]) < 0.9  # the others never waited for Redis (generous bound)
    assert len(fake.requests) == requests


# -- what a request loses when the store is unavailable --------------------------------------


def test_unavailable_fixes_name_what_memos_would_have_done_per_protocol() -> None:
    chat = {
        "model": "deepseek-reasoner",
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "done"},
        ],
    }
    before = repr(chat)
    assert unavailable_fixes(ApiProtocol.CHAT, chat) == ("reasoning_restored", "repair_notes")
    assert repr(chat) == before  # nothing passed is changed
    chat_no_reasoning = {**chat, "model": "gpt-4o"}  # no reasoning to put back
    assert unavailable_fixes(ApiProtocol.CHAT, chat_no_reasoning) == ("repair_notes",)
    anthropic = {
        "model": "deepseek-v4-flash",
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "done"}],
            },
        ],
    }
    assert unavailable_fixes(ApiProtocol.ANTHROPIC, anthropic) == (
        "thinking_restored",
        "repair_notes",
    )
    responses = {
        "model": "gpt-5",
        "input": [
            {"type": "function_call", "call_id": "r1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "r1", "output": "done"},
        ],
    }
    assert unavailable_fixes(ApiProtocol.RESPONSES, responses) == ("repair_notes",)
    plain = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert unavailable_fixes(ApiProtocol.CHAT, plain) == ()
    assert unavailable_fixes(ApiProtocol.CHAT, {"messages": "not a list"}) == ()
