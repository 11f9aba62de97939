"""The proxy as a service (issue 22), against real servers on loopback: what a client is
told when the store cannot be read."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import httpx

from _proxy_support import FakeUpstream, Reply, chat_stream, serving
from streamrepair.proxy import (
    UNAVAILABLE_FIXES_HEADER,
    CallMemo,
    ProxyConfig,
    StoreLookup,
    StoreStats,
    StoreStatus,
    create_app,
)

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
#: A DeepSeek history whose tool turn lost its reasoning and whose tool result has no
#: notes yet: both need the memo of ``call_1``.
HISTORY: list[dict[str, Any]] = [
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


class _TimingOutStore:
    """A store whose every call times out (what a hung Redis looks like to the app)."""

    def __init__(self) -> None:
        self.errors = 0
        self.lookups = 0

    async def lookup(self, keys: Iterable[str]) -> StoreLookup:
        self.lookups += 1
        self.errors += 1
        return StoreLookup({}, StoreStatus.TIMEOUT)

    async def get(self, keys: Iterable[str]) -> dict[str, CallMemo]:
        return (await self.lookup(keys)).found

    async def put(self, memos: Mapping[str, CallMemo]) -> StoreStatus:
        self.errors += 1
        return StoreStatus.TIMEOUT

    async def ping(self) -> bool:
        return False

    def stats(self) -> StoreStats:
        return StoreStats(counts={("get", "timeout"): self.lookups})

    async def close(self) -> None:
        return None


def test_fixes_the_store_could_not_give_are_named_in_a_header_and_counted() -> None:
    store = _TimingOutStore()
    fake = FakeUpstream(script=[Reply(body=chat_stream(content="ok"))], deepseek_rules=False)
    with serving(fake.app()) as upstream:
        app = create_app(ProxyConfig(upstream=upstream, access_log=False), store=store)
        with serving(app) as proxy, httpx.Client(base_url=proxy) as client:
            body = {
                "model": "deepseek-v4-flash",
                "messages": HISTORY,
                "tools": TOOLS,
                "stream": True,
            }
            answer = client.post("/v1/chat/completions", json=body)
            metrics = client.get("/metrics").text
    assert answer.status_code == 200
    assert answer.headers[UNAVAILABLE_FIXES_HEADER] == "reasoning_restored, repair_notes"
    assert "data: [DONE]" in answer.text  # the request went on without its memos
    sent = fake.requests[0].body
    assert sent["messages"][1].get("reasoning_content") in (None, "")  # not restored
    assert (
        'streamrepair_proxy_request_fixes_unavailable_total{fix="reasoning_restored"} 1' in metrics
    )
    assert 'streamrepair_proxy_store_errors_total{kind="timeout",operation="get"} 1' in metrics
