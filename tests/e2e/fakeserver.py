"""The loopback HTTP server under the end-to-end harnesses' fake model APIs.

Standard library only, no project imports (``ccharness`` is also imported from outside
this folder: a folder holding it holds this module and ``e2e_tools`` too).

* :class:`LoopbackServer` runs a request handler class on ``127.0.0.1`` (port 0: the
  system picks a free one) in a daemon thread, one daemon thread per connection.
  ``start()`` is idempotent; ``stop()`` shuts the server down and waits (at most 5 s)
  for its thread.
* :class:`QuietHandler` is the handler base: HTTP/1.1, nothing logged, and the answers
  every fake API writes: a JSON body (:meth:`~QuietHandler.send_json`), the head of an
  SSE stream (:meth:`~QuietHandler.start_sse`), a request's JSON body read
  (:meth:`~QuietHandler.read_json`).

Used by ``ccharness`` (Anthropic Messages for Claude Code), ``ocharness`` (Chat
Completions for OpenCode) and ``hharness`` (Chat Completions for Hermes Agent).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LoopbackServer", "QuietHandler"]


class LoopbackServer:
    """A ``ThreadingHTTPServer`` on ``127.0.0.1`` in a daemon thread (module docstring)."""

    def __init__(self, name: str | None = None) -> None:
        self.name = name
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._httpd is not None

    def start(self, handler: type[BaseHTTPRequestHandler]) -> None:
        """Serve ``handler`` (nothing happens when already serving)."""
        if self._httpd is not None:
            return
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        # a short poll interval: stop() waits for it (0.5 s by default, per server)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name=self.name, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return int(self._httpd.server_address[1])


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1, no request log, and the JSON and SSE answers of a fake API."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def read_json(self) -> tuple[bytes, Any]:
        """The request body: its bytes, and its JSON (None when empty or not JSON)."""
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        return raw, body

    def send_json(
        self,
        status: int,
        payload: Any,
        *,
        raw: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Answer ``payload`` as JSON (or ``raw``, sent as it is), then ``headers``."""
        data = raw if raw is not None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def start_sse(
        self, content_type: str = "text/event-stream", headers: Mapping[str, str] | None = None
    ) -> None:
        """Send the head of a 200 SSE answer that ends when the connection closes."""
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.close_connection = True
