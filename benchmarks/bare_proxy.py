"""The floor for an HTTP proxy in Python: aiohttp in, aiohttp out, bytes passed through.

What any streaming proxy written on asyncio must at least spend (``bench_proxy_load.py``
compares ``streamrepair serve`` and LiteLLM's proxy with it): the request is read whole
and sent upstream on one pooled session, and every piece of the answer the socket
hands over is written to the client as it comes, with no parsing.

    python benchmarks/bare_proxy.py UPSTREAM_URL PORT
"""

from __future__ import annotations

import sys

import aiohttp
from aiohttp import web

_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


def make_app(upstream: str) -> web.Application:
    async def start(app: web.Application) -> None:
        connector = aiohttp.TCPConnector(limit=0)
        app["session"] = aiohttp.ClientSession(upstream, connector=connector, auto_decompress=False)

    async def stop(app: web.Application) -> None:
        await app["session"].close()

    async def forward(request: web.Request) -> web.StreamResponse:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        body = await request.read()
        session: aiohttp.ClientSession = request.app["session"]
        async with session.request(
            request.method, request.rel_url.path_qs, headers=headers, data=body
        ) as answer:
            response = web.StreamResponse(status=answer.status)
            for key, value in answer.headers.items():
                if key.lower() not in _HOP:
                    response.headers[key] = value
            await response.prepare(request)
            async for piece in answer.content.iter_any():
                await response.write(piece)
            await response.write_eof()
            return response

    app = web.Application()
    app.on_startup.append(start)
    app.on_cleanup.append(stop)
    app.router.add_route("*", "/{path:.*}", forward)
    return app


if __name__ == "__main__":
    import asyncio

    try:  # the event loop uvicorn picks for the other proxies
        import uvloop

        loop = uvloop.new_event_loop()
    except ImportError:
        loop = asyncio.new_event_loop()
    app = make_app(sys.argv[1])
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[2]), backlog=4096, print=None, loop=loop)
