"""The floor for an ASGI proxy under uvicorn: the server stack ``streamrepair serve`` runs
on (uvicorn with httptools and uvloop), an aiohttp client behind it, bytes passed
through with no parsing.

``bench_proxy_load.py`` measures it beside ``bare_proxy.py`` (aiohttp's own server) and
``streamrepair serve``: the difference between the two bare proxies is what the server
stack costs, the difference between this one and ``serve`` is what streamrepair's
reading of the stream costs.

    python benchmarks/bare_asgi_proxy.py UPSTREAM_URL PORT
"""

from __future__ import annotations

import sys
from typing import Any

import aiohttp
import uvicorn

_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"content-length", b"host"}


class BareAsgiProxy:
    """One pooled aiohttp session; each request read whole, sent upstream, and each
    piece of the answer sent to the client as it comes."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.session: aiohttp.ClientSession | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    connector = aiohttp.TCPConnector(limit=0)
                    self.session = aiohttp.ClientSession(
                        self.upstream, connector=connector, auto_decompress=False
                    )
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    if self.session is not None:
                        await self.session.close()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        parts = []
        more = True
        while more:
            message = await receive()
            parts.append(message.get("body", b""))
            more = message.get("more_body", False)
        headers = {
            k.decode("latin-1"): v.decode("latin-1")
            for k, v in scope["headers"]
            if k.lower() not in _HOP
        }
        path = scope["path"] + (
            f"?{scope['query_string'].decode()}" if scope["query_string"] else ""
        )
        assert self.session is not None
        async with self.session.request(
            scope["method"], path, headers=headers, data=b"".join(parts)
        ) as answer:
            out = [
                (k.lower().encode("latin-1"), v.encode("latin-1"))
                for k, v in answer.headers.items()
                if k.lower().encode("latin-1") not in _HOP
            ]
            await send({"type": "http.response.start", "status": answer.status, "headers": out})
            async for piece in answer.content.iter_any():
                await send({"type": "http.response.body", "body": piece, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})


if __name__ == "__main__":
    uvicorn.run(
        BareAsgiProxy(sys.argv[1]),
        host="127.0.0.1",
        port=int(sys.argv[2]),
        http="httptools",
        loop="uvloop",
        access_log=False,
        log_level="warning",
    )
