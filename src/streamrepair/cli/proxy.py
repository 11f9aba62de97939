"""``streamrepair serve --upstream URL``: run the repairing proxy under uvicorn.

The options are registered by ``cli/integrations.py`` (``serve`` also runs the OpenCode
helper, ``serve opencode``); this module is imported only to run the proxy, and imports
the ``serve`` extra (Starlette, uvicorn, aiohttp) only then.

Of the options ``serve`` shares with the hooks, the proxy reads ``--schemas`` (schemas
of tools a request does not list; a file that cannot be read stops it at start),
``--telemetry`` and ``--log-arguments``; ``--no-builtin-schemas``, ``--profiles`` and
``--model`` are the OpenCode helper's and are refused with ``--upstream`` (the proxy
takes each tool's schema and the model from the request and applies no profiles).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

from .._plural import plural

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "HELPER_ONLY_OPTIONS",
    "SCHEMAS_ENV",
    "TOKEN_ENV",
    "add_proxy_options",
    "run_proxy",
]

#: Where the proxy listens by default: loopback only.
DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8787
#: Environment variable holding the proxy's own bearer token (unset: no token).
TOKEN_ENV: Final = "STREAMREPAIR_PROXY_TOKEN"
#: Environment variable naming the ``--schemas`` file(s) when the option is not given.
SCHEMAS_ENV: Final = "STREAMREPAIR_SCHEMAS"
#: ``serve`` options (attribute, flag) that only the OpenCode helper reads.
HELPER_ONLY_OPTIONS: Final = (
    ("no_builtin_schemas", "--no-builtin-schemas"),
    ("profiles", "--profiles"),
    ("model", "--model"),
)
_LOOPBACK: Final = frozenset({"127.0.0.1", "::1", "localhost"})


def add_proxy_options(parser: argparse.ArgumentParser) -> None:
    """The proxy's options on the ``serve`` parser."""
    group = parser.add_argument_group("proxy (streamrepair serve --upstream URL)")
    group.add_argument(
        "--upstream",
        metavar="URL",
        help="run the repairing proxy in front of this API base URL "
        "(e.g. https://api.deepseek.com or https://api.deepseek.com/anthropic)",
    )
    group.add_argument("--host", default=DEFAULT_HOST, help="address to bind (default 127.0.0.1)")
    group.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default 8787)")
    group.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="worker processes serving the port (default: the machine's cores); they share "
        "the store",
    )
    group.add_argument(
        "--store",
        metavar="SPEC",
        default="memory",
        help="where reasoning and repair notes are kept between requests: memory (default; "
        "with several workers, a file in memory they share), sqlite:PATH (a file several "
        "serve processes on this machine share) or a redis://host:port/db URL shared by "
        "every replica on every machine",
    )
    group.add_argument(
        "--store-ttl", type=float, default=None, metavar="SECONDS", help="memo lifetime (1 day)"
    )
    group.add_argument(
        "--token-env",
        metavar="VAR",
        default=TOKEN_ENV,
        help="environment variable holding the proxy's own bearer token; when it is set, "
        f"clients must send it (default ${TOKEN_ENV})",
    )
    group.add_argument(
        "--upstream-key-env",
        metavar="VAR",
        help="environment variable holding the upstream API key, sent in place of the "
        "proxy token when clients authenticate with it",
    )
    group.add_argument(
        "--max-request-bytes", type=int, default=None, metavar="N", help="(default 32 MiB)"
    )
    group.add_argument(
        "--max-argument-chars",
        type=int,
        default=None,
        metavar="N",
        help="largest tool-call argument text; larger calls are withheld (default 16 Mi)",
    )
    group.add_argument(
        "--pool-size",
        type=int,
        default=None,
        metavar="N",
        help="upstream requests at once, per worker; past it a request is refused at once "
        "with 503 and Retry-After (default 512)",
    )
    group.add_argument(
        "--max-bytes-in-flight",
        type=int,
        default=None,
        metavar="N",
        help="request body bytes read or worked on at once, per worker; past it, 503 "
        "(default 128 MiB)",
    )
    group.add_argument(
        "--max-header-bytes",
        type=int,
        default=None,
        metavar="N",
        help="largest request head (request line and headers); past it, 431 and the "
        "connection closed (default 64 KiB)",
    )
    group.add_argument(
        "--header-timeout",
        type=float,
        default=None,
        metavar="S",
        help="seconds a client has to send a request's head; then the connection is "
        "closed (default 10)",
    )
    group.add_argument(
        "--connect-timeout", type=float, default=None, metavar="S", help="(default 10)"
    )
    group.add_argument(
        "--read-timeout",
        type=float,
        default=None,
        metavar="S",
        help="seconds without a byte from the upstream (default 600)",
    )
    group.add_argument(
        "--text-tool-calls",
        metavar="FORMAT",
        default=None,
        help="read tool calls the model writes as text in its replies (a server without a "
        "tool parser) and send them as calls: auto, or a format (hermes, qwen3_coder, glm, "
        "deepseek, dsml, kimi_k2, mistral, llama3_json, pythonic, harmony; vLLM's "
        "--tool-call-parser names work too). Only for requests that declare tools; a "
        "request's x-streamrepair-text-tool-calls header (a format, auto or off) overrides "
        "it (default: off)",
    )
    group.add_argument(
        "--stream-arguments",
        action="store_true",
        default=None,
        help="stream the first tool call's arguments as they become final (a growing "
        "write_file stays visible), on Anthropic Messages and Responses; a call that ends "
        "cut off is then left unclosed, never runnable. Chat Completions calls are always "
        "held. A request's x-streamrepair-stream-arguments header (on or off) overrides it "
        "(default: off)",
    )
    group.add_argument(
        "--refusals",
        choices=("call", "notice"),
        default=None,
        help="how a call the proxy will not send as runnable (cut off, unrepairable, invalid "
        "after repairs, ambiguous escapes) reaches the client: call, as a call to the tool "
        "streamrepair_refused_call, which every harness answers with its own error so its "
        "loop goes on and the model tries again (the next request gets the call back, "
        "answered by the proxy's guidance); notice, as text that ends the turn (default: "
        "call)",
    )
    group.add_argument(
        "--allow-ambiguous-escapes",
        action="store_true",
        default=None,
        help="send calls whose strings hold escapes that raw backslashes make ambiguous "
        "(C:\\Users\\new in a file's content) with JSON's reading, instead of refusing them "
        "(default: refused, with guidance to write \\\\)",
    )
    group.add_argument(
        "--no-access-log", action="store_true", help="do not print one JSON line per request"
    )


def _config_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for option, key in (
        ("max_request_bytes", "max_request_bytes"),
        ("max_argument_chars", "max_argument_chars"),
        ("connect_timeout", "connect_timeout"),
        ("read_timeout", "read_timeout"),
        ("text_tool_calls", "text_tool_calls"),
        ("stream_arguments", "stream_arguments"),
        ("pool_size", "pool_size"),
        ("max_bytes_in_flight", "max_bytes_in_flight"),
        ("max_header_bytes", "max_header_bytes"),
        ("header_timeout", "header_timeout"),
    ):
        value = getattr(args, option, None)
        if value is not None:
            out[key] = value
    if getattr(args, "refusals", None) is not None:
        from ..proxy.wire import Refusals

        out["refusals"] = Refusals(args.refusals)
    if getattr(args, "allow_ambiguous_escapes", None):
        out["refuse_ambiguous_escapes"] = False
    return out


def _refused(args: argparse.Namespace) -> str | None:
    """Why the options cannot run the proxy, if they cannot."""
    flags = [flag for name, flag in HELPER_ONLY_OPTIONS if getattr(args, name, None)]
    if not flags:
        return None
    return (
        f"{' and '.join(flags)} {'is' if len(flags) == 1 else 'are'} for 'serve opencode', "
        "not the proxy: the proxy takes each tool's schema from the request (and "
        "--schemas), the model from the request, and applies no model profiles"
    )


def _schemas(args: argparse.Namespace) -> dict[str, Any] | None:
    """The ``--schemas`` file(s) (else ``$STREAMREPAIR_SCHEMAS``), merged; None when none
    is named. ``ValueError`` saying which file and why when one cannot be read."""
    from ..integrations.calls import load_schema_files

    spec = getattr(args, "schemas", None) or os.environ.get(SCHEMAS_ENV, "")
    if not spec.strip():
        return None
    where = "--schemas" if getattr(args, "schemas", None) else f"${SCHEMAS_ENV}"
    try:
        return dict(load_schema_files(spec))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{where}: cannot load the tool schemas: {exc}") from None


def run_proxy(args: argparse.Namespace, telemetry: Any) -> int:
    """Serve until interrupted; returns the exit code."""
    refused = _refused(args)
    if refused is not None:
        print(f"streamrepair serve: {refused}", file=sys.stderr)
        return 2
    try:
        schemas = _schemas(args)
    except ValueError as exc:
        print(f"streamrepair serve: {exc}", file=sys.stderr)
        return 2
    try:
        import uvicorn  # noqa: F401

        from ..proxy.app import create_app
        from ..proxy.config import ProxyConfig
        from ..proxy.limits import split_files
        from ..proxy.server import default_workers, serve
        from ..proxy.store import DEFAULT_TTL
    except ImportError as exc:
        print(
            f"streamrepair serve: the proxy needs the serve extra ({exc.name} is missing): "
            "pip install -e '.[serve]' from a checkout of streamrepair",
            file=sys.stderr,
        )
        return 2
    workers = args.workers if args.workers is not None else default_workers()
    if workers < 1 or (workers > 1 and not hasattr(os, "fork")):
        print(
            "streamrepair serve: --workers must be 1 here, or more where fork exists",
            file=sys.stderr,
        )
        return 2
    token = os.environ.get(args.token_env) or None
    upstream_key = os.environ.get(args.upstream_key_env) if args.upstream_key_env else None
    ttl = args.store_ttl or DEFAULT_TTL
    try:
        store = _StoreSpec(args.store, workers, ttl)
        config = ProxyConfig(
            upstream=args.upstream,
            token=token,
            upstream_key=upstream_key,
            access_log=not args.no_access_log,
            telemetry=telemetry,
            schemas=schemas,
            **_config_kwargs(args),
        )
    except (ValueError, ImportError) as exc:
        print(f"streamrepair serve: {exc}", file=sys.stderr)
        return 2
    if args.host not in _LOOPBACK and token is None:
        print(
            f"streamrepair serve: warning: listening on {args.host} without a proxy token "
            f"(set ${args.token_env})",
            file=sys.stderr,
        )
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    extra = f", schemas for {plural(len(schemas), 'unlisted tool')}" if schemas else ""

    def announce(limit: Any) -> None:
        pool, clients = split_files(limit.soft, config.pool_size)
        print(
            f"streamrepair serve: http://{args.host}:{args.port} -> {args.upstream} "
            f"({plural(workers, 'worker')}, store: {store.describe()}{extra}; "
            f"{limit.describe()}; per worker at most {plural(pool, 'upstream connection')}"
            + (f" and {plural(clients, 'client connection')}" if clients < 1 << 20 else "")
            + ")",
            file=sys.stderr,
        )

    def make_app() -> Any:
        return create_app(config, store=store.open(), share=store.share())

    with store:
        return serve(
            make_app,
            host=args.host,
            port=args.port,
            workers=workers,
            max_header_bytes=config.max_header_bytes,
            header_timeout=config.header_timeout,
            announce=announce,
            on_death=store.forget,
        )


#: The workers' directories: ``streamrepair-serve-<supervisor pid>-<random>``.
_PREFIX: Final = "streamrepair-serve-"


def _remove_orphans(base: Path) -> None:
    """Remove the workers' directories of ``serve`` processes that no longer run (killed
    before they could remove their own: the memos of a directory in memory stay there)."""
    for directory in base.glob(f"{_PREFIX}*-*"):
        pid = directory.name[len(_PREFIX) :].split("-", 1)[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(directory, ignore_errors=True)
        except PermissionError:
            continue  # another user's process, alive


class _StoreSpec:
    """What ``--store`` names, for ``workers`` processes: opened in each worker after the
    fork (``open``); with several workers and ``memory``, a SQLite file in a private
    directory in memory (``/dev/shm`` when there is one), which also holds the workers'
    counters (``share``) and is removed at exit."""

    def __init__(self, spec: str, workers: int, ttl: float) -> None:
        self.spec = spec
        self.workers = workers
        self.ttl = ttl
        self.directory: Path | None = None
        self.file: Path | None = None
        if spec.startswith("sqlite:"):
            self.file = Path(spec[len("sqlite:") :]).expanduser()
            if not str(self.file).strip():
                raise ValueError("--store sqlite:PATH needs a PATH")
        elif spec.startswith(("redis://", "rediss://", "unix://")):
            import redis.asyncio  # noqa: F401  (ImportError: the redis extra is missing)
        elif spec != "memory":
            raise ValueError(f"--store must be memory, sqlite:PATH or a redis:// URL, not {spec!r}")
        if workers > 1:
            shm = Path("/dev/shm")
            base = shm if shm.is_dir() and os.access(shm, os.W_OK) else Path(tempfile.gettempdir())
            _remove_orphans(base)
            prefix = f"{_PREFIX}{os.getpid()}-"
            self.directory = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
            if spec == "memory":
                self.file = self.directory / "memos.sqlite3"
        if self.file is not None:
            from ..proxy.shared_store import create_file

            create_file(self.file)  # once, before the workers open it

    def __enter__(self) -> _StoreSpec:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)

    def describe(self) -> str:
        if self.spec == "memory" and self.file is not None:
            return f"memory, shared by the workers ({self.file})"
        return self.spec

    def open(self) -> Any:
        from ..proxy.store import open_store

        if self.file is not None:
            from ..proxy.shared_store import SqliteStore

            return SqliteStore(self.file, ttl=self.ttl)
        return open_store(self.spec, ttl=self.ttl)

    def share(self) -> Any:
        if self.directory is None:
            return None
        from ..proxy.workers import MetricsShare

        return MetricsShare(self.directory)

    def forget(self, pid: int) -> None:
        share = self.share()
        if share is not None:
            with contextlib.suppress(OSError):
                share.forget(pid)
