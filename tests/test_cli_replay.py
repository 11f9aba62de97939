"""``streamrepair replay``: the bundled demo, --json, plain and live views, exit codes."""

from __future__ import annotations

import io
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from streamrepair import iter_events
from streamrepair.cli import main
from streamrepair.cli.replay import EXIT_NO_STREAM, EXIT_NOT_READY

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sse"
DEMO = resources.files("streamrepair").joinpath("examples").joinpath("demo.sse")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["replay", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.split("\n") if line]


def test_demo_shows_thinking_a_repaired_call_and_a_cut_call(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys)
    assert code == 0
    assert "replaying bundled demo demo.sse" in out
    assert "reasoning: The user wants release notes" in out
    assert "READY    write_file (call_00_Wr1teN0tesF1le0000000001)" in out
    assert "repair: invalid_escape at 12" in out
    assert "repair: python_literal" in out
    assert "REJECTED run_command (call_01_RunTheTestSu1te000000002) cut_off" in out
    assert "done: stop reason length" in out


def test_demo_as_json_lines_matches_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--json")
    assert code == 0
    expected = [e.to_dict() for e in iter_events(DEMO.read_bytes())]
    assert json_lines(out) == json.loads(json.dumps(expected))
    types = [e["type"] for e in json_lines(out)]
    assert types.count("tool_call_ready") == 1
    assert types.count("tool_call_rejected") == 1
    assert "reasoning_delta" in types


@pytest.mark.parametrize(
    "name", ["unknown-tool.sse", "anthropic-thinking-tool-use.sse", "responses-function-call.sse"]
)
def test_json_output_matches_the_golden_file(capsys: pytest.CaptureFixture[str], name: str) -> None:
    path = FIXTURES / name
    argv = ["--json", str(path)]
    tools = path.with_name(name.split(".")[0] + ".tools.json")
    if tools.exists():
        argv += ["--tools", str(tools)]
    code, out, _ = run(capsys, *argv)
    golden = (FIXTURES / (name.split(".")[0] + ".events.jsonl")).read_text(encoding="utf-8")
    assert code == 0
    assert json_lines(out) == json_lines(golden)


def test_strict_exit_codes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert run(capsys, "--strict")[0] == 1  # the demo has a cut-off call
    assert run(capsys, "--strict", str(FIXTURES / "deepseek-thinking-tools.sse"))[0] == 0
    assert run(capsys, "--strict", str(FIXTURES / "finish-content-filter.sse"))[0] == 1
    # One meaning: the turn can be used as it is. A stop reason that says tool calls
    # when none arrived fails it, as an empty stream does; so do a stream failure, a
    # paused turn, and an end marker without a stop reason (even with every call ready).
    assert run(capsys, "--strict", str(FIXTURES / "finish-tool-calls-missing.sse"))[0] == 1
    empty = tmp_path / "empty.sse"
    empty.write_bytes(b"")
    assert run(capsys, "--strict", str(empty))[0] == 1
    assert run(capsys, "--strict", str(FIXTURES / "openai-midstream-error.sse"))[0] == 1
    paused = FIXTURES / "anthropic-server-tool-web-search-pause-turn.sse"
    assert run(capsys, "--strict", str(paused))[0] == 1
    kimi = FIXTURES / "openrouter-kimi-k2-done-usage-no-finish-reason.sse"
    assert run(capsys, "--strict", str(kimi))[0] == 1
    assert run(capsys, str(kimi))[0] == 0  # without --strict the replay ran: 0
    assert run(capsys, "--strict", str(FIXTURES / "responses-apply-patch-call.sse"))[0] == 0


NO_STREAM = {
    "empty": b"",
    "plain text": b"hello world\nnot a stream\n",
    "only comments": b": keep-alive\n\n: another\n\n",
    "only events without data": b"event: ping\n\n",
    "only the end marker": b"data: [DONE]\n\n",
    "blank lines": b"\n\n\r\n",
}


@pytest.mark.parametrize("body", NO_STREAM.values(), ids=NO_STREAM.keys())
@pytest.mark.parametrize("view", [(), ("--json",), ("--strict",)], ids=["plain", "json", "strict"])
def test_a_file_with_no_stream_says_so_and_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, body: bytes, view: tuple[str, ...]
) -> None:
    path = tmp_path / "recording.sse"
    path.write_bytes(body)
    code, out, err = run(capsys, *view, str(path))
    assert code == EXIT_NO_STREAM == 1
    assert f"streamrepair replay: no stream found in {path}: nothing in it is a chunk" in err
    assert "stop reason missing" not in out
    if view == ("--json",):  # the events are still the events: one Done
        assert [line["type"] for line in json_lines(out)] == ["done"]


def test_no_stream_on_standard_input_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    code, _, err = run(capsys, "-")
    assert code == 1
    assert "no stream found in standard input" in err


def test_a_stream_of_chunks_without_a_stop_reason_is_not_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A chunk arrived (the role), so a stream was found: it only ended without a stop
    # reason, which the replay reports as before (and --strict refuses).
    path = tmp_path / "role-only.sse"
    path.write_bytes(b'data: {"choices": [{"index": 0, "delta": {"role": "assistant"}}]}\n\n')
    code, out, err = run(capsys, str(path))
    assert (code, err) == (0, "")
    assert "done: stop reason missing" in out
    assert run(capsys, "--strict", str(path))[0] == EXIT_NOT_READY
    # and a chunk that is not JSON is a stream failure, not nothing
    path.write_bytes(b"data: not json\n\n")
    code, out, err = run(capsys, str(path))
    assert (code, err) == (0, "")
    assert "stream failed: a chunk is not valid JSON" in out


def test_no_stream_is_documented_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "1 no stream found in FILE (no chunk of any provider" in out


def test_strict_is_documented_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "exit 1 unless the stream ended cleanly (stop, tool_calls or length)" in out
    assert "none the stop reason announced is missing" in out


def test_provider_and_choice_options(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "openai-n2-choices.sse")
    code, out, _ = run(capsys, "--provider", "openai", "--choice", "1", path)
    assert code == 0
    assert "READY    get_weather (call_choice1)" in out
    # A provider that does not match the stream is reported, not read as nothing.
    code, out, _ = run(capsys, "--provider", "anthropic", path)
    assert "stream failed: the stream was named anthropic, but this chunk is in openai's" in out
    assert "done: stop reason error" in out
    assert run(capsys, "--strict", "--provider", "anthropic", path)[0] == 1
    # So is a choice the stream does not have.
    code, out, _ = run(capsys, "--choice", "2", path)
    assert "stream failed: no chunk of choice 2 arrived; the stream has choice(s) 0, 1" in out
    assert "READY" not in out
    with pytest.raises(SystemExit) as exited:
        run(capsys, "--choice", "-1", path)
    assert exited.value.code == 2
    assert "must be an integer >= 0" in capsys.readouterr().err
    code, out, _ = run(
        capsys, "--provider", "gemini", "--json", str(FIXTURES / "gemini-vertex-partial-args.sse")
    )
    assert json_lines(out)[-1]["stop_reason"] == "stop"


def test_json_escapes_line_separators(capsys: pytest.CaptureFixture[str]) -> None:
    name = "framing-crlf-bom-nospace"
    code, out, _ = run(capsys, "--json", str(FIXTURES / f"{name}.sse"))
    assert code == 0
    assert "\u2028" not in out
    assert "\\u2028" in out
    lines = out.splitlines()  # what a line-based reader does
    assert [json.loads(line) for line in lines] == json_lines(out)
    golden = (FIXTURES / f"{name}.events.jsonl").read_text(encoding="utf-8")
    assert out == golden  # the same lines as the golden file


def test_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    data = (FIXTURES / "mistral-no-index-finish-same-chunk.sse").read_bytes()
    stdin = io.TextIOWrapper(io.BytesIO(data))
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out, _ = run(capsys, "-")
    assert code == 0
    assert "READY    weather (gSIMJiOkT)" in out


def test_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, str(tmp_path / "missing.sse"))
    assert code == 2
    assert "missing.sse" in err
    code, _, err = run(capsys, "--speed", "-1")
    assert code == 2
    assert "--speed must be >= 0" in err
    bad = tmp_path / "tools.json"
    bad.write_text("{not json")
    code, _, err = run(capsys, "--tools", str(bad))
    assert code == 2
    nameless = tmp_path / "nameless.json"
    nameless.write_text('[{"type": "function", "function": {}}]')
    assert run(capsys, "--tools", str(nameless))[0] == 2


def test_live_view_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("rich")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "120")
    code, out, _ = run(capsys, "--speed", "0")
    assert code == 0
    assert "\x1b[" in out  # styled for a terminal
    assert "tool calls" in out  # the summary table
    assert "write_file" in out
    assert "rejected: cut_off" in out
    assert "done: stop reason length" in out


def test_the_live_view_counts_a_call_of_one_character_in_the_singular(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("rich")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "120")
    function = {"name": "f", "arguments": "["}
    chunks = [
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "id": "c1", "function": function}]},
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
    ]
    path = tmp_path / "one.sse"
    path.write_text("".join(f"data: {json.dumps(c)}\n\n" for c in chunks))
    code, out, _ = run(capsys, "--speed", "0", str(path))
    assert code == 0
    assert "c1 1 char" in out  # the call panel's size
    assert "1 chars" not in out
    assert "1 character arrived" in " ".join(out.split())


def test_plain_flag_wins_over_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, out, _ = run(capsys, "--plain", str(FIXTURES / "finish-tool-calls-missing.sse"))
    assert code == 0
    assert "\x1b[" not in out
    assert "text: I will call the tool now." in out
    assert "the stop reason says tool calls, but none arrived" in out


def test_plain_output_of_a_stream_failure(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(FIXTURES / "openai-midstream-error.sse"))
    assert code == 0
    assert "stream failed: The server had an error" in out
    assert "REJECTED search (call_err00001) stream_incomplete" in out


@pytest.mark.parametrize(
    "path",
    sorted(p for p in FIXTURES.iterdir() if p.suffix in (".sse", ".ndjson")),
    ids=lambda p: p.name,
)
def test_replay_works_on_every_fixture(capsys: pytest.CaptureFixture[str], path: Path) -> None:
    code, out, err = run(capsys, str(path))
    assert (code, err) == (0, "")
    assert out.rstrip().split("\n")[-1].startswith("done: stop reason ")


def test_plain_output_keeps_the_stream_order(capsys: pytest.CaptureFixture[str]) -> None:
    # The demo streams reasoning, then text, then the tool calls; plain output says so.
    code, out, _ = run(capsys, "--plain")
    assert code == 0
    lines = out.splitlines()
    first = {
        prefix: next(i for i, line in enumerate(lines) if line.startswith(prefix))
        for prefix in ("reasoning: ", "text: ", "tool call started: ", "READY ")
    }
    assert first["reasoning: "] < first["text: "] < first["tool call started: "] < first["READY "]
