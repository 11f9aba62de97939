"""``streamrepair serve``: the proxy (``--upstream``) and the OpenCode helper
(``serve opencode``) under one command, and the proxy started as users start it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

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
