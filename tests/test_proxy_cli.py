"""``streamrepair serve``: the proxy (``--upstream``) and the OpenCode helper
(``serve opencode``) under one command, and the proxy started as users start it."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from _proxy_support import FakeUpstream, Reply, chat_stream, serving
from streamrepair.cli import main


def test_help_names_both_services(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "streamrepair serve --upstream URL" in text
    assert "streamrepair serve opencode" in text
    assert "--store SPEC" in text
    assert "--max-argument-chars" in text
    assert "--text-tool-calls FORMAT" in text


def test_serve_needs_an_upstream_or_opencode(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve"]) == 2
    assert "give --upstream URL" in capsys.readouterr().err
    assert main(["serve", "opencode", "--upstream", "http://x"]) == 2
    assert main(["serve", "--upstream", "ftp://x", "--telemetry", "off"]) == 2
    args = [
        "serve",
        "--upstream",
        "http://x",
        "--text-tool-calls",
        "nonesuch",
        "--telemetry",
        "off",
    ]
    assert main(args) == 2
    assert "unknown text tool-call format 'nonesuch'" in capsys.readouterr().err


def test_help_shows_the_helper_only_options_apart(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    helper = text.index("OpenCode helper only")
    proxy = text.index("proxy (streamrepair serve --upstream URL)")
    for flag in ("--no-builtin-schemas", "--profiles SPEC", "--model MODEL"):
        assert helper < text.index(flag, helper) < proxy, flag
    assert "The proxy (--upstream) uses them for tools a request does not list" in text


@pytest.mark.parametrize(
    "extra",
    [["--profiles", "nonsense"], ["--model", "m"], ["--no-builtin-schemas"]],
    ids=["profiles", "model", "no-builtin-schemas"],
)
def test_helper_only_options_are_refused_with_upstream(
    extra: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--upstream", "http://127.0.0.1:1", "--telemetry", "off", *extra]) == 2
    err = capsys.readouterr().err
    assert f"streamrepair serve: {extra[0]} is for 'serve opencode', not the proxy" in err


def _capture_config(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Run no server: record the ProxyConfig ``run_proxy`` would serve (its app is made
    once, as a worker would)."""
    import streamrepair.proxy.app as proxy_app
    import streamrepair.proxy.server as proxy_server

    seen: list[Any] = []
    real = proxy_app.create_app

    def create_app(config: Any, **kwargs: Any) -> Any:
        seen.append(config)
        return real(config, **kwargs)

    def serve(make_app: Any, **options: Any) -> int:
        options["announce"](proxy_server.raise_open_file_limit())
        app = make_app()
        asyncio.run(app.proxy.store.close())
        return 0

    monkeypatch.setattr(proxy_app, "create_app", create_app)
    monkeypatch.setattr(proxy_server, "serve", serve)
    return seen


def test_schemas_reach_the_proxy_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = _capture_config(monkeypatch)
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    path = tmp_path / "schemas.json"
    path.write_text(json.dumps({"mcp__echo__echo": schema}))
    before = path.read_bytes()
    monkeypatch.delenv("STREAMREPAIR_SCHEMAS", raising=False)
    args = ["serve", "--upstream", "http://127.0.0.1:1", "--telemetry", "off", "--no-access-log"]
    assert main([*args, "--schemas", str(path)]) == 0
    assert seen[-1].schemas == {"mcp__echo__echo": schema}
    assert "schemas for 1 unlisted tool;" in capsys.readouterr().err  # not "1 ... tools"
    monkeypatch.setenv("STREAMREPAIR_SCHEMAS", str(path))  # the environment, as the hooks
    assert main(args) == 0
    assert seen[-1].schemas == {"mcp__echo__echo": schema}
    monkeypatch.delenv("STREAMREPAIR_SCHEMAS")
    assert main(args) == 0
    assert seen[-1].schemas is None
    assert path.read_bytes() == before


def test_refusal_options_reach_the_proxy_config(monkeypatch: pytest.MonkeyPatch) -> None:
    from streamrepair.proxy import Refusals

    seen = _capture_config(monkeypatch)
    args = ["serve", "--upstream", "http://127.0.0.1:1", "--telemetry", "off", "--no-access-log"]
    assert main(args) == 0
    assert (seen[-1].refusals, seen[-1].refuse_ambiguous_escapes) == (Refusals.CALL, True)
    assert main([*args, "--refusals", "notice", "--allow-ambiguous-escapes"]) == 0
    assert (seen[-1].refusals, seen[-1].refuse_ambiguous_escapes) == (Refusals.NOTICE, False)
    with pytest.raises(SystemExit):
        main([*args, "--refusals", "text"])


def test_a_schemas_file_that_cannot_be_read_stops_the_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = _capture_config(monkeypatch)
    monkeypatch.delenv("STREAMREPAIR_SCHEMAS", raising=False)
    args = ["serve", "--upstream", "http://127.0.0.1:1", "--telemetry", "off"]
    missing = tmp_path / "nonexistent.json"
    assert main([*args, "--schemas", str(missing)]) == 2
    err = capsys.readouterr().err
    assert "streamrepair serve: --schemas: cannot load the tool schemas" in err
    assert str(missing) in err
    broken = tmp_path / "broken.json"
    broken.write_text('{"a": ')
    assert main([*args, "--schemas", str(broken)]) == 2
    assert f"{broken} is not JSON" in capsys.readouterr().err
    wrong = tmp_path / "wrong.json"
    wrong.write_text("[1, 2]")
    assert main([*args, "--schemas", str(wrong)]) == 2
    assert "a tool must be a mapping" in capsys.readouterr().err
    monkeypatch.setenv("STREAMREPAIR_SCHEMAS", str(missing))
    assert main(args) == 2
    assert "$STREAMREPAIR_SCHEMAS: cannot load" in capsys.readouterr().err
    assert seen == []  # no proxy was made


def test_without_the_serve_extra_the_hint_installs_it_from_a_checkout(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The package is on no index: the hint says what the README says."""
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # import uvicorn -> ImportError
    assert main(["serve", "--upstream", "http://127.0.0.1:1", "--telemetry", "off"]) == 2
    err = capsys.readouterr().err
    assert "the proxy needs the serve extra (uvicorn is missing)" in err
    assert "pip install -e '.[serve]' from a checkout" in err
    assert "streamrepair[serve]" not in err


def test_serve_opencode_still_answers_on_stdio() -> None:
    request = json.dumps({"id": 1, "method": "ping"}) + "\n"
    done = subprocess.run(
        [sys.executable, "-m", "streamrepair.cli", "serve", "opencode", "--telemetry", "off"],
        input=request,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    reply = json.loads(done.stdout.splitlines()[0])
    assert reply["id"] == 1


def test_serve_upstream_runs_the_proxy() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    stream = chat_stream(calls=(("call_1", "f", '{"a": 1,}'),), model="m")
    fake = FakeUpstream(script=[Reply(body=stream)])
    with serving(fake.app()) as upstream:
        env = {**os.environ, "STREAMREPAIR_PROXY_TOKEN": ""}
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamrepair.cli",
                "serve",
                "--upstream",
                upstream,
                "--port",
                str(port),
                "--telemetry",
                "off",
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 30
            while True:
                try:
                    health = httpx.get(f"{base}/healthz")
                    break
                except httpx.TransportError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True}
            relayed = httpx.post(f"{base}/v1/chat/completions", json=body).text
        finally:
            process.terminate()
            _, err = process.communicate(timeout=30)
    assert health.json()["status"] == "ok"
    assert '"arguments":"{\\"a\\":1}"' in relayed  # the trailing comma repaired
    log = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert log[-1]["path"] == "/v1/chat/completions"
    assert log[-1]["calls_sent"] == 1
